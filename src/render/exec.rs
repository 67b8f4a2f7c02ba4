//! Plugins that run programs, when the user opts in, as kustomize v5.5 runs them
//! (`api/internal/plugins/loader/loader.go`): exec KRM functions
//! (`config.kubernetes.io/function: {exec: {path: …}}`, with `--enable-alpha-plugins
//! --enable-exec`; `api/internal/plugins/fnplugin/fnplugin.go`) and legacy exec plugins
//! (an executable at `{plugin home}/{group}/{version}/{kind lowercased}/{Kind}`, with
//! `--enable-alpha-plugins`; `api/internal/plugins/execplugin/execplugin.go`). Container
//! functions need a container runtime and are refused with a diagnostic that says so. The
//! one module, beside `helm`, that starts programs named by a kustomization.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::Loaded;
use crate::resource::Resource;
use crate::source::{Location, SourceFile, display_path};
use crate::yaml::{EmitOptions, Map, Node, emit_documents};

use super::KustomizeVersion;

/// The plugin flags of `kustomize build`.
#[derive(Clone, Debug, Default)]
pub struct PluginOptions {
    /// `--enable-alpha-plugins`.
    pub enabled: bool,
    /// `--enable-exec`.
    pub exec: bool,
    /// `-e/--env`: `KEY=VALUE` (or `KEY`, taken from ply's own environment) for functions.
    pub env: Vec<String>,
}

/// The annotation kustomize puts on every object it hands a transformer plugin, and strips
/// from what comes back (`api/internal/plugins/utils/utils.go`, `idAnnotation`).
const ID_ANNOTATION: &str = "config.k8s.io/id";
const NEEDS_HASH: &str = "kustomize.config.k8s.io/needs-hash";
const BEHAVIOR: &str = "kustomize.config.k8s.io/behavior";
const FUNCTION: &str = "config.kubernetes.io/function";

/// What runs a non-builtin plugin configuration.
enum Runner {
    /// An exec KRM function: a ResourceList on stdin and stdout.
    Function(PathBuf, String),
    /// A legacy exec plugin: the configuration's file as first argument, YAML on stdin and
    /// stdout. `shown` names it below the plugin home (stable across machines).
    Legacy {
        path: PathBuf,
        shown: String,
        args: Vec<String>,
    },
}

/// Whether a configuration is a plugin ply may run under these options: `Ok(None)` when
/// plugins are off (the caller refuses it as before).
fn runner(
    opts: &PluginOptions,
    kustomize: KustomizeVersion,
    loaded: &Loaded,
    config: &Resource,
    at: &Location,
) -> Result<Option<Runner>> {
    if !opts.enabled {
        return Ok(None);
    }
    let kind = config.kind();
    let api = config.node.str_at(&["apiVersion"]).unwrap_or("");
    let what = format!(
        "{api}/{kind} {}",
        config.node.str_at(&["metadata", "name"]).unwrap_or("")
    );
    let fail = |m: String| Error::new(ErrorKind::Plugin, m).at(at.clone());
    if let Some(spec) = config.node.str_at(&["metadata", "annotations", FUNCTION]) {
        let spec = crate::yaml::parse::parse_one(spec).map_err(|e| {
            fail(format!(
                "{what}: the {FUNCTION} annotation is not YAML: {}",
                e.message
            ))
        })?;
        if spec.get("container").is_some() {
            let image = spec.str_at(&["container", "image"]).unwrap_or("?");
            return Err(fail(format!(
                "{what} is a container KRM function (image {image}): ply cannot run it, because it needs a container runtime (docker or podman), which ply does not drive"
            ))
            .label("a container function")
            .help("run the function with `kustomize build --enable-alpha-plugins` (or `kpt fn`), or rewrite it as an exec function (`exec: {path: …}`) and pass --enable-alpha-plugins --enable-exec"));
        }
        let Some(path) = spec.str_at(&["exec", "path"]) else {
            return Err(fail(format!(
                "{what}: the {FUNCTION} annotation names neither `exec` nor `container`"
            ))
            .help(
                "an exec function is written `config.kubernetes.io/function: {exec: {path: ./fn}}`",
            ));
        };
        if !opts.exec {
            return Err(fail(format!(
                "{what} is an exec KRM function ({path}): running it needs --enable-exec as well"
            ))
            .label("an exec function")
            .help(
                "add --enable-exec to --enable-alpha-plugins, only for configurations you trust",
            ));
        }
        // kustomize runs the function in the kustomization's directory; a relative path is
        // taken from there (Go's `exec.Cmd` with `Dir`).
        let p = Path::new(path);
        let full = if p.is_absolute() || !path.contains('/') {
            p.to_path_buf()
        } else {
            loaded.dir.join(p)
        };
        return Ok(Some(Runner::Function(full, path.to_string())));
    }
    // `loadExecOrGoPlugin`: `{home}/{group}/{version}/{kind lowercased}/{Kind}`.
    let (group, version) = crate::resource::split_api_version(api);
    let home = plugin_home().ok_or_else(|| {
        fail(format!("{what} is an exec plugin, but no plugin home exists"))
            .help("put exec plugins under $KUSTOMIZE_PLUGIN_HOME, $XDG_CONFIG_HOME/kustomize/plugin or ~/.config/kustomize/plugin")
    })?;
    let mut path = home;
    let mut shown = String::from("<plugin home>");
    for part in [group, version, &kind.to_lowercase(), kind] {
        if !part.is_empty() {
            path.push(part);
            shown.push('/');
            shown.push_str(part);
        }
    }
    if !path.is_file() {
        return Err(fail(format!(
            "{what}: no exec plugin at {shown} (ply runs exec plugins, not Go plugins)"
        ))
        .label("a plugin configuration")
        .help(format!("the plugin home is {}", display_path(&path))));
    }
    let mut args = Vec::new();
    if let Some(line) = config.node.str_at(&["argsOneLiner"]) {
        // v5.7.0 splits with its own `ShlexSplit` (PR #5943), v5.6.0 still with google/shlex.
        if kustomize.at_least(KustomizeVersion::V5_7_1) {
            args.extend(shlex_split_v58(line).map_err(|m| {
                fail(format!("{what}: failed to parse argsOneLiner: {m}"))
                    .label("a plugin configuration")
                    .help("close the quote (kustomize 5.5.0 ignored it: --kustomize-version 5.5.0)")
            })?);
        } else {
            args.extend(shlex_split_v55(line));
        }
    }
    if let Some(file) = config.node.str_at(&["argsFromFile"]) {
        let text = std::fs::read_to_string(loaded.dir.join(file))
            .map_err(|e| fail(format!("{what}: argsFromFile {file}: {e}")))?;
        args.extend(
            text.split('\n')
                .map(|l| l.trim_start_matches(' '))
                .filter(|l| !l.is_empty())
                .map(str::to_string),
        );
    }
    Ok(Some(Runner::Legacy { path, shown, args }))
}

/// A legacy exec plugin's `argsOneLiner` as kustomize v5.5.0 splits it: google/shlex's
/// `Split` (`execplugin.ExecPlugin.Config`), whose error kustomize ignores, keeping the words
/// read before it. Words split at spaces, tabs and line breaks; `'…'` is literal; `"…"` takes
/// `\` escapes; `\` outside quotes escapes the next character; `#` at the start of a word
/// comments out the rest of its line. An empty quoted word is a word.
fn shlex_split_v55(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        // Between words.
        let Some(c) = chars.next() else {
            return words;
        };
        match c {
            ' ' | '\t' | '\r' | '\n' => continue,
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                continue;
            }
            _ => {}
        }
        let mut word = String::new();
        let mut next = Some(c);
        loop {
            let Some(c) = next else {
                words.push(word);
                return words;
            };
            match c {
                ' ' | '\t' | '\r' | '\n' => break,
                '\\' => match chars.next() {
                    Some(e) => word.push(e),
                    None => return words, // EOF after an escape: an error, ignored
                },
                '\'' => loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => word.push(q),
                        None => return words, // unclosed quote: an error, ignored
                    }
                },
                '"' => loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e) => word.push(e),
                            None => return words,
                        },
                        Some(q) => word.push(q),
                        None => return words,
                    }
                },
                other => word.push(other),
            }
            next = chars.next();
        }
        words.push(word);
    }
}

/// A legacy exec plugin's `argsOneLiner` as kustomize v5.7 and later split it
/// (`execplugin.ShlexSplit`, PR #5943, which replaced google/shlex): `\` escapes the next
/// character except inside `'…'`; quotes group; `#` outside quotes ends the line anywhere;
/// Unicode white space splits; an empty word is dropped; an unclosed quote is an error.
fn shlex_split_v58(line: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in line.chars() {
        if escaped {
            word.push(c);
            escaped = false;
        } else if c == '\\' && quote != Some('\'') {
            escaped = true;
        } else if (c == '\'' || c == '"') && quote.is_none() {
            quote = Some(c);
        } else if Some(c) == quote {
            quote = None;
        } else if c == '#' && quote.is_none() {
            if !word.is_empty() {
                words.push(word);
            }
            return Ok(words);
        } else if c.is_whitespace() && quote.is_none() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        } else {
            word.push(c);
        }
    }
    if quote.is_some() {
        return Err("unclosed quote in string".into());
    }
    if !word.is_empty() {
        words.push(word);
    }
    Ok(words)
}

/// kustomize's plugin home (`konfig.DefaultAbsPluginHome`): the first that exists of
/// `$KUSTOMIZE_PLUGIN_HOME`, `$XDG_CONFIG_HOME/kustomize/plugin`,
/// `~/.config/kustomize/plugin`, `~/kustomize/plugin`.
fn plugin_home() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = env("HOME");
    [
        env("KUSTOMIZE_PLUGIN_HOME"),
        env("XDG_CONFIG_HOME").map(|x| x.join("kustomize/plugin")),
        home.as_ref().map(|h| h.join(".config/kustomize/plugin")),
        home.as_ref().map(|h| h.join("kustomize/plugin")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_dir())
}

/// Runs a generator plugin when the options allow it: `Ok(None)` when plugins are off.
pub(super) fn generate(
    opts: &PluginOptions,
    kustomize: KustomizeVersion,
    loaded: &Loaded,
    config: &Resource,
    at: &Location,
) -> Result<Option<Vec<Resource>>> {
    let Some(runner) = runner(opts, kustomize, loaded, config, at)? else {
        return Ok(None);
    };
    let out = match &runner {
        // `FnPlugin.invokePlugin`: a generator gets its own configuration (marked local) as
        // the only item, for kio's sake; it comes back marked and is dropped at the root.
        Runner::Function(path, shown) => {
            let fc = function_config(&config.node);
            let items = vec![fc.clone()];
            run_function(path, shown, opts, kustomize, loaded, &items, &fc, at)?
        }
        Runner::Legacy { path, shown, args } => {
            run_legacy(path, shown, args, opts, loaded, config, None, at)?
        }
    };
    let mut generated = Vec::with_capacity(out.len());
    for mut node in out {
        // `UpdateResourceOptions`: hashing only when the plugin asks for it.
        let needs_hash = take_annotation(&mut node, NEEDS_HASH);
        let behavior = take_annotation(&mut node, BEHAVIOR);
        let mut r = Resource::new(node, Some(at.clone()));
        r.generator_behavior = Some(crate::resource::behavior_name(behavior.as_deref()));
        r.needs_hash_suffix = match needs_hash.as_deref() {
            None => false,
            Some(v) => parse_go_bool(v).ok_or_else(|| {
                Error::new(
                    ErrorKind::Plugin,
                    format!("the annotation \"{NEEDS_HASH}\" contains an invalid value (\"{v}\")"),
                )
                .at(at.clone())
            })?,
        };
        generated.push(r);
    }
    Ok(Some(generated))
}

/// Runs a transformer plugin over `acc` when the options allow it (returns false when plugins
/// are off). The result replaces `acc` as kustomize's `UpdateResMapValues` does: objects come
/// back matched by their current id (keeping what the build knows about them), new ones are
/// appended, missing ones removed.
pub(super) fn transform(
    opts: &PluginOptions,
    kustomize: KustomizeVersion,
    loaded: &Loaded,
    config: &Resource,
    at: &Location,
    acc: &mut Vec<Resource>,
) -> Result<bool> {
    let Some(runner) = runner(opts, kustomize, loaded, config, at)? else {
        return Ok(false);
    };
    let input: Vec<Node> = acc
        .iter()
        .map(|r| {
            let mut n = r.node.clone();
            set_annotation(&mut n, ID_ANNOTATION, id_text(r));
            n
        })
        .collect();
    let out = match &runner {
        Runner::Function(path, shown) => {
            let fc = function_config(&config.node);
            run_function(path, shown, opts, kustomize, loaded, &input, &fc, at)?
        }
        Runner::Legacy { path, shown, args } => {
            run_legacy(path, shown, args, opts, loaded, config, Some(&input), at)?
        }
    };
    // `UpdateResMapValues`: an object whose current id was there before replaces its
    // content in place; others are appended; objects not given back are removed.
    let mut updated: Vec<Option<Node>> = vec![None; acc.len()];
    let mut added: Vec<Resource> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for mut node in out {
        let _ = take_annotation(&mut node, ID_ANNOTATION);
        let id = crate::resource::ResId::of(&node);
        if !seen.insert(id.clone()) {
            return Err(Error::new(
                ErrorKind::Plugin,
                format!(
                    "plugin {} generated duplicate resource: {}",
                    describe(config),
                    crate::render::id_string(&id)
                ),
            )
            .at(at.clone()));
        }
        match acc.iter().position(|r| r.id() == id) {
            Some(i) => updated[i] = Some(node),
            None => added.push(Resource::new(node, Some(at.clone()))),
        }
    }
    let mut result: Vec<Resource> = Vec::with_capacity(acc.len() + added.len());
    for (mut r, node) in acc.drain(..).zip(updated) {
        if let Some(node) = node {
            // kustomize reads the plugin's output anew (`ResetRNode` in
            // api/internal/plugins/utils/utils.go): no value is shared any more.
            r.node = node;
            r.unshare_all();
            result.push(r);
        }
    }
    result.extend(added);
    *acc = result;
    Ok(true)
}

fn describe(config: &Resource) -> String {
    format!(
        "api: {}, kind: {}, name: {}",
        config.node.str_at(&["apiVersion"]).unwrap_or(""),
        config.kind(),
        config.node.str_at(&["metadata", "name"]).unwrap_or("")
    )
}

/// The id annotation's text (kustomize writes `yaml.Marshal(r.CurId())`).
fn id_text(r: &Resource) -> String {
    let id = r.id();
    let mut m = Map::default();
    for (k, v) in [
        ("group", id.gvk.group.as_str()),
        ("version", id.gvk.version.as_str()),
        ("kind", id.gvk.kind.as_str()),
        ("name", id.name.as_str()),
        ("namespace", id.namespace.as_str()),
    ] {
        if !v.is_empty() {
            m.insert(k.to_string(), Node::str(v));
        }
    }
    let mut out = String::new();
    crate::yaml::emit_document(&mut out, &Node::Map(m), EmitOptions { sort_keys: true });
    out
}

/// The function configuration as a function sees it: marked local, so that it never reaches
/// the output (`injectAnnotation(functionConfig, "config.kubernetes.io/local-config", "true")`).
fn function_config(config: &Node) -> Node {
    let mut fc = config.clone();
    set_annotation(&mut fc, "config.kubernetes.io/local-config", "true".into());
    fc
}

fn set_annotation(node: &mut Node, key: &str, value: String) {
    if let Node::Map(m) = node.ensure_path(&["metadata", "annotations"]) {
        m.insert(key.to_string(), Node::Str(value));
    } else {
        *node.ensure_path(&["metadata", "annotations"]) =
            Node::Map(std::iter::once((key.to_string(), Node::Str(value))).collect());
    }
}

/// Removes an annotation and returns its value; an annotations map left empty goes too.
fn take_annotation(node: &mut Node, key: &str) -> Option<String> {
    let annotations = node
        .get_path_mut(&["metadata", "annotations"])?
        .as_map_mut()?;
    let v = annotations.shift_remove(key)?;
    if annotations.is_empty()
        && let Some(meta) = node.get_mut("metadata").and_then(Node::as_map_mut)
    {
        meta.shift_remove("annotations");
    }
    v.scalar_text()
}

/// Go's `strconv.ParseBool`.
fn parse_go_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// An exec KRM function: `{apiVersion: config.kubernetes.io/v1, kind: ResourceList, items,
/// functionConfig}` on stdin, a ResourceList expected on stdout, run in the kustomization's
/// directory with the `-e` environment. The kyaml index annotations it may carry are removed.
#[allow(clippy::too_many_arguments)] // reason: the plugin, its options and version, and its input
fn run_function(
    path: &Path,
    shown: &str,
    opts: &PluginOptions,
    kustomize: KustomizeVersion,
    loaded: &Loaded,
    items: &[Node],
    function_config: &Node,
    at: &Location,
) -> Result<Vec<Node>> {
    let mut list = Map::default();
    list.insert("apiVersion".into(), Node::str("config.kubernetes.io/v1"));
    list.insert("kind".into(), Node::str("ResourceList"));
    list.insert("items".into(), Node::Seq(items.to_vec()));
    list.insert("functionConfig".into(), function_config.clone());
    let input = emit_documents([&Node::Map(list)], EmitOptions { sort_keys: false });
    let mut cmd = Command::new(path);
    cmd.current_dir(&loaded.dir);
    // `-e` reaches an exec function from v5.7.0 (kyaml v0.20: `exec.Filter.Env`, filled by
    // `RunFns.mergeExecEnv`); v5.6.0 runs it with kustomize's own environment only.
    if kustomize.at_least(KustomizeVersion::V5_7_1) {
        add_env(&mut cmd, &opts.env);
    }
    let stdout = run(cmd, input.as_bytes(), shown, at)?;
    let text = String::from_utf8_lossy(&stdout).into_owned();
    let doc = crate::yaml::parse::parse_one(&text).map_err(|e| {
        Error::new(
            ErrorKind::Plugin,
            format!(
                "exec function {shown}: its output is not YAML: {}",
                e.message
            ),
        )
        .at(at.clone())
    })?;
    if doc.str_at(&["kind"]) != Some("ResourceList") {
        return Err(Error::new(
            ErrorKind::Plugin,
            format!("exec function {shown}: its output is not a ResourceList"),
        )
        .at(at.clone())
        .help("a KRM function prints `kind: ResourceList` with the objects under `items`"));
    }
    let mut out = Vec::new();
    for mut item in doc
        .get("items")
        .and_then(Node::as_seq)
        .cloned()
        .unwrap_or_default()
    {
        for key in [
            "config.kubernetes.io/index",
            "internal.config.kubernetes.io/index",
            "config.kubernetes.io/path",
            "internal.config.kubernetes.io/path",
            "internal.config.kubernetes.io/id",
        ] {
            let _ = take_annotation(&mut item, key);
        }
        out.push(item);
    }
    Ok(out)
}

/// A legacy exec plugin (`ExecPlugin.invokePlugin`): the configuration written to a temporary
/// file that is the first argument, the resources as YAML on stdin, run in the
/// kustomization's directory with `KUSTOMIZE_PLUGIN_CONFIG_STRING` and
/// `KUSTOMIZE_PLUGIN_CONFIG_ROOT`; stdout is YAML.
#[allow(clippy::too_many_arguments)] // reason: one call per plugin kind, each argument distinct
fn run_legacy(
    path: &Path,
    shown: &str,
    args: &[String],
    opts: &PluginOptions,
    loaded: &Loaded,
    config: &Resource,
    input: Option<&[Node]>,
    at: &Location,
) -> Result<Vec<Node>> {
    let cfg = emit_documents([&config.node], EmitOptions::default());
    let tmp = std::env::temp_dir().join(format!(
        "ply-plugin-config-{}-{:x}.yaml",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::write(&tmp, &cfg).map_err(|e| Error::io(&tmp, &e).at(at.clone()))?;
    let mut cmd = Command::new(path);
    cmd.arg(&tmp)
        .args(args)
        .current_dir(&loaded.dir)
        .env("KUSTOMIZE_PLUGIN_CONFIG_STRING", &cfg)
        .env("KUSTOMIZE_PLUGIN_CONFIG_ROOT", &loaded.dir);
    add_env(&mut cmd, &opts.env);
    let stdin = input.map_or_else(String::new, |nodes| {
        emit_documents(nodes, EmitOptions::default())
    });
    let result = run(cmd, stdin.as_bytes(), shown, at);
    let _ = std::fs::remove_file(&tmp);
    let stdout = result?;
    let file = Arc::new(SourceFile::new(
        format!("<output of {shown}>"),
        String::from_utf8_lossy(&stdout).into_owned(),
    ));
    Ok(
        super::accumulate::parse_resources(&file, crate::yaml::limits::ReaderLimits::DEFAULT)
            .map_err(|e| e.at(at.clone()))?
            .into_iter()
            .map(|r| r.node)
            .collect(),
    )
}

/// `-e KEY=VALUE` sets a variable; `-e KEY` passes ply's own value on.
fn add_env(cmd: &mut Command, env: &[String]) {
    for e in env {
        match e.split_once('=') {
            Some((k, v)) => {
                cmd.env(k, v);
            }
            None => {
                if let Some(v) = std::env::var_os(e) {
                    cmd.env(e, v);
                }
            }
        }
    }
}

/// Runs a plugin; a failure to start or a non-zero exit is an error that shows its stderr.
fn run(mut cmd: Command, input: &[u8], shown: &str, at: &Location) -> Result<Vec<u8>> {
    use std::io::Write;
    let fail = |m: String| {
        Error::new(ErrorKind::Plugin, m)
            .at(at.clone())
            .label("this plugin")
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run plugin {shown}: {e}")))?;
    // Feed stdin from another thread, so that a plugin writing before it reads cannot block.
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
    });
    let output = child
        .wait_with_output()
        .map_err(|e| fail(format!("plugin {shown}: {e}")))?;
    let _ = writer.join();
    if !output.status.success() {
        return Err(fail(failed(&format!("plugin {shown}"), &output)));
    }
    Ok(output.stdout)
}

/// "WHAT failed (exit status: N)", then the program's stderr when it wrote any: how a program
/// that ply ran (a plugin, helm) is reported when it fails.
pub(super) fn failed(what: &str, output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut m = format!("{what} failed ({})", output.status);
    if !stderr.trim().is_empty() {
        m.push_str(":\n");
        m.push_str(stderr.trim_end());
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The splitting of `argsOneLiner` of each version, as kubectl 1.32 and kubectl 1.37 pass
    /// the words to a plugin (checked by hand on each of these).
    #[test]
    fn args_one_liner_splits_as_each_version() {
        let v55 = |s: &str| shlex_split_v55(s);
        let v58 = |s: &str| shlex_split_v58(s).unwrap();
        for (line, want) in [
            ("one 'two three' four", vec!["one", "two three", "four"]),
            ("a \"b c\" d", vec!["a", "b c", "d"]),
            ("x # comment", vec!["x"]),
            ("a''b", vec!["ab"]),
            ("  lead  trail  ", vec!["lead", "trail"]),
            ("\"#notcomment\" z", vec!["#notcomment", "z"]),
            ("esc\\ aped", vec!["esc aped"]),
        ] {
            assert_eq!(v55(line), want, "{line}");
            assert_eq!(v58(line), want, "{line}");
        }
        assert_eq!(v55("x#y"), ["x#y"]);
        assert_eq!(v58("x#y"), ["x"]);
        assert_eq!(v55("a '' b"), ["a", "", "b"]);
        assert_eq!(v58("a '' b"), ["a", "b"]);
        assert!(v55("un'closed").is_empty());
        assert!(shlex_split_v58("un'closed").is_err());
        assert_eq!(v55("ok 'unclosed"), ["ok"]);
    }
}
