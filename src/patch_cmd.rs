//! `ply patch`: reads the object(s), patch and schema the command line names, runs the merge
//! core, and returns the text to print. The command-line face of `merge`; owns no merge rules.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Error, ErrorKind};
use crate::merge::{self, Dialect, SmpOptions};
use crate::resource::Gvk;
use crate::schema::Schema;
use crate::source::{Location, SourceFile};
use crate::yaml::{EmitOptions, Node, emit_documents, parse_documents};

/// The kind of patch `ply patch` applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Strategic,
    Merge,
    Json,
}

/// Where the patch comes from.
#[derive(Clone, Debug)]
pub(crate) enum PatchSource {
    File(PathBuf),
    Inline(String),
}

/// What `ply patch` was asked to do, validated.
#[derive(Clone, Debug)]
pub(crate) enum PatchRequest {
    /// Apply a patch to every object of a file.
    Apply {
        file: PathBuf,
        patch: PatchSource,
        kind: PatchKind,
    },
    /// kubectl apply's three-way merge against a live object.
    ThreeWay {
        live: PathBuf,
        last_applied: PathBuf,
        desired: PathBuf,
        print_patch: bool,
        /// kubectl apply's `--overwrite`: false makes conflicts errors.
        overwrite: bool,
    },
    /// The two-way strategic patch from one object to another.
    TwoWay { from: PathBuf, to: PathBuf },
}

/// Options of `ply patch`.
#[derive(Clone, Debug)]
pub(crate) struct PatchOptions {
    pub request: PatchRequest,
    pub openapi: Option<PathBuf>,
    /// List order of strategic merges (apply mode).
    pub dialect: Dialect,
    /// Print JSON as `kubectl patch -o json` does instead of YAML.
    pub json: bool,
    /// `--max-json-patch-growth`.
    pub json_patch_growth: usize,
}

/// What `-p/--patch VALUE` means: the patch text, as in kubectl. For command lines written
/// when `--patch` named a file: a value that reads as a plain scalar (a patch never does: it is
/// a map, or a list for JSON patches) and names an existing file (or is `-`, stdin) is read as
/// that file, with a deprecation warning.
pub(crate) fn patch_argument(value: &str, warnings: &mut crate::diag::Warnings) -> PatchSource {
    let scalar = value == "-"
        || matches!(
            crate::yaml::parse::parse_one(value),
            Ok(Node::Str(_) | Node::Int(_) | Node::Float(_) | Node::Bool(_))
        );
    if scalar && (value == "-" || Path::new(value).is_file()) {
        warnings.warn(format!(
            "--patch {value}: reading the patch from the file '{value}' is deprecated; -p/--patch takes the patch text, as in kubectl: use --patch-file {value}"
        ));
        return PatchSource::File(PathBuf::from(value));
    }
    PatchSource::Inline(value.to_string())
}

/// Runs the command and returns the YAML to print.
pub(crate) fn run(opts: &PatchOptions) -> Result<String, Error> {
    let mut schema = Schema::builtin();
    if let Some(path) = &opts.openapi {
        let file = read(path)?;
        let doc = parse_single(&file, true)?;
        schema.add_openapi(&doc).map_err(|e| {
            Error::new(ErrorKind::Schema, format!("{}: {e}", file.display))
                .at(Location::line_at(file.clone(), 0))
        })?;
    }
    let out: Vec<Node> = match &opts.request {
        PatchRequest::Apply { file, patch, kind } => apply(opts, &schema, file, patch, *kind)?,
        PatchRequest::ThreeWay {
            live,
            last_applied,
            desired,
            print_patch,
            overwrite,
        } => {
            let r = three_way(&schema, live, last_applied, desired, *overwrite)?;
            vec![if *print_patch { r.patch } else { r.result }]
        }
        PatchRequest::TwoWay { from, to } => vec![two_way(&schema, from, to)?],
    };
    if opts.json {
        return Ok(kubectl_json(&out));
    }
    Ok(emit_documents(out.iter(), EmitOptions::default()))
}

/// Applies a patch to every object of `file`.
fn apply(
    opts: &PatchOptions,
    schema: &Schema,
    file: &Path,
    patch: &PatchSource,
    kind: PatchKind,
) -> Result<Vec<Node>, Error> {
    let objects = read(file)?;
    let (patch_file, patch_name) = match patch {
        PatchSource::File(p) => {
            let f = read(p)?;
            let name = f.display.clone();
            (f, name)
        }
        PatchSource::Inline(text) => (SourceFile::new("<-p>", text.clone()), "-p".to_string()),
    };
    // kubectl reads `-f` files and patches with sigs.k8s.io/yaml (go-yaml v2, YAML 1.1
    // booleans: `y`, `yes`, `on` are true); kustomize reads objects and strategic merge
    // patches with kyaml (YAML 1.2) and JSON 6902 operations with sigs.k8s.io/yaml.
    check_patch_text(&patch_file, &patch_name, kind)?;
    let kubectl = opts.dialect == Dialect::Kubectl;
    let mut patch = parse_single(&patch_file, kubectl || matches!(kind, PatchKind::Json))?;
    // A JSON patch that holds nothing (empty, only comments, `null`) has no operations:
    // `jsonpatch.DecodePatch` reads `null` as an empty list.
    if kind == PatchKind::Json && patch.is_null() {
        patch = Node::Seq(Vec::new());
    }
    let docs = parse_all(&objects, kubectl)?;
    if docs.is_empty() {
        return Err(no_objects(&objects));
    }
    let mut out = Vec::with_capacity(docs.len());
    for (offset, obj) in docs {
        let at = || Location::line_at(objects.clone(), offset);
        let result = match kind {
            PatchKind::Strategic => merge::smp::apply(
                &obj,
                &patch,
                schema,
                &Gvk::of(&obj),
                &SmpOptions {
                    dialect: opts.dialect,
                },
            ),
            PatchKind::Merge => Ok(merge::mergepatch::apply(&obj, &patch)),
            PatchKind::Json => merge::json6902::apply_with(
                &obj,
                &patch,
                opts.json_patch_growth,
                crate::kustomization::KustomizeVersion::V5_8_1,
            ),
        };
        let patched = result.map_err(|e| {
            let err = Error::new(
                ErrorKind::Patch,
                format!(
                    "cannot apply patch {patch_name} to {}: at {}: {}",
                    describe(&obj),
                    e.path,
                    e.message
                ),
            )
            .at(at())
            .label("this object");
            if kind == PatchKind::Json && !e.message.contains("--max-json-patch-growth") {
                err.help(format!(
                    "the words are kubectl's (evanphx/json-patch); check that operation \
                     in {patch_name}: each needs `op` (add, remove, replace, move, copy \
                     or test) and `path` (a pointer such as /spec/replicas), move and \
                     copy a `from`, and a path must exist in the object"
                ))
            } else {
                err
            }
        })?;
        check_result(&patched, &obj, &patch_name).map_err(|e| e.at(at()).label("this object"))?;
        out.push(patched);
    }
    Ok(out)
}

/// Refuses a patched object kubectl cannot decode: not a map, or without a kind.
fn check_result(patched: &Node, obj: &Node, patch_name: &str) -> Result<(), Error> {
    // A patch can replace the whole object with a scalar or a list (a merge patch
    // `42`, a JSON patch `replace ""`); kubectl then fails to decode the result.
    if !matches!(patched, Node::Map(_)) {
        return Err(Error::new(
            ErrorKind::Patch,
            format!(
                "cannot apply patch {patch_name} to {}: the result is a {}, not an object",
                describe(obj),
                patched.kind_name()
            ),
        )
        .help("a patch must leave an object (a map): check that it is not a bare value"));
    }
    // kubectl decodes the result and refuses one without a kind
    // (`Object 'Kind' is missing in '…'`); a JSON patch `remove /kind` makes one.
    if patched.str_at(&["kind"]).is_none_or(str::is_empty) {
        return Err(Error::new(
            ErrorKind::Patch,
            format!(
                "cannot apply patch {patch_name} to {}: the result has no kind \
                 (kubectl: Object 'Kind' is missing)",
                describe(obj)
            ),
        )
        .help("a patch must not remove or empty the object's kind"));
    }
    Ok(())
}

/// kubectl apply's three-way merge of `desired` against `live`.
fn three_way(
    schema: &Schema,
    live: &Path,
    last_applied: &Path,
    desired: &Path,
    overwrite: bool,
) -> Result<merge::threeway::Preview, Error> {
    let live = parse_single(&read(live)?, true)?;
    let original = parse_single(&read(last_applied)?, true)?;
    let desired_file = read(desired)?;
    let modified = parse_single(&desired_file, true)?;
    let gvk = Gvk::of(if modified.is_null() { &live } else { &modified });
    let r = if overwrite {
        merge::threeway::apply_preview(&original, &modified, &live, schema, &gvk)
    } else {
        merge::threeway::apply_preview_checked(&original, &modified, &live, schema, &gvk)
    };
    r.map_err(|e| {
        let kind = if e.kind == merge::MergeErrorKind::Conflict {
            ErrorKind::Conflict
        } else {
            ErrorKind::Patch
        };
        Error::new(
            kind,
            format!(
                "three-way merge of {}: at {}: {}",
                describe(&modified),
                e.path,
                e.message
            ),
        )
        .at(Location::line_at(desired_file.clone(), 0))
        .label("the desired configuration")
    })
}

/// The two-way strategic patch from `from` to `to`.
fn two_way(schema: &Schema, from: &Path, to: &Path) -> Result<Node, Error> {
    let original = parse_single(&read(from)?, true)?;
    let to_file = read(to)?;
    let modified = parse_single(&to_file, true)?;
    let gvk = Gvk::of(if modified.is_null() {
        &original
    } else {
        &modified
    });
    merge::threeway::create_two_way(&original, &modified, schema, &gvk).map_err(|e| {
        Error::new(
            ErrorKind::Patch,
            format!(
                "two-way patch to {}: at {}: {}",
                describe(&modified),
                e.path,
                e.message
            ),
        )
        .at(Location::line_at(to_file.clone(), 0))
        .label("the modified object")
    })
}

/// Refuses the patch texts `kubectl patch --local` refuses before it patches
/// (`k8s.io/kubectl/pkg/cmd/patch/patch.go`): an empty `-p` (`PatchOptions.Validate`: "must
/// specify --patch or --patch-file containing the contents of the patch"), and a text that
/// opens with `{` (after spaces, tabs and line breaks) that is not strict JSON: kubectl's
/// `yaml.ToJSON` (`k8s.io/apimachinery/pkg/util/yaml`) passes such a text on as JSON without
/// reading it as YAML (`hasJSONPrefix`), and the JSON decoder of each patch type then fails:
/// "invalid JSON document" (strategic), "Invalid JSON Patch" (merge), Go's syntax error
/// (json). So `{"a": 1,}` and `{a: 1}` fail, while a YAML patch or one opening with `[` is
/// read as YAML.
fn check_patch_text(file: &Arc<SourceFile>, name: &str, kind: PatchKind) -> Result<(), Error> {
    let text = file.text.as_str();
    if name == "-p" && text.is_empty() {
        return Err(Error::new(
            ErrorKind::Usage,
            "-p/--patch is empty (kubectl: must specify --patch or --patch-file containing the \
             contents of the patch)",
        )
        .help("give the patch text, e.g. -p '{\"spec\":{\"replicas\":2}}', or --patch-file FILE"));
    }
    let body = text.trim_start_matches([' ', '\t', '\r', '\n']);
    if !body.starts_with('{') {
        return Ok(());
    }
    let Some((at, what)) = crate::render::json_text::syntax_error(body) else {
        return Ok(());
    };
    let at = at + (text.len() - body.len());
    let line = text[..at].matches('\n').count() + 1;
    let words = match kind {
        PatchKind::Strategic => "invalid JSON document",
        PatchKind::Merge => "Invalid JSON Patch",
        PatchKind::Json => "a JSON syntax error",
    };
    Err(Error::new(
        ErrorKind::Patch,
        format!(
            "{}: the patch opens with `{{` and so must be strict JSON (line {line}: {what}) \
             (kubectl: {words})",
            file.display
        ),
    )
    .at(Location::new(file.clone(), at, 0))
    .label("not JSON")
    .help(
        "kubectl reads a patch that opens with `{` as JSON, not YAML: remove trailing commas, \
         quote every key, or write the patch as YAML (`spec: {replicas: 2}`)",
    ))
}

/// An object file that holds no object (empty, only comments or `---`, `null` documents):
/// `kubectl patch --local` fails with "no objects passed to patch" and exit status 1
/// (`k8s.io/kubectl/pkg/cmd/patch/patch.go`, `RunPatch`: no info was visited), where printing
/// nothing would read as success.
fn no_objects(file: &Arc<SourceFile>) -> Error {
    Error::new(
        ErrorKind::InvalidResource,
        format!(
            "no objects passed to patch: '{}' holds no object",
            file.display
        ),
    )
    .help("give a file with at least one object (apiVersion, kind and metadata.name)")
}

/// `kubectl patch -o json`: each object as Go's `json.MarshalIndent(obj, "", "    ")` writes it
/// (keys sorted, HTML-safe escapes, four spaces), one after another
/// (`k8s.io/cli-runtime/pkg/printers/json.go`).
fn kubectl_json(objects: &[Node]) -> String {
    use crate::yaml::json::{JsonStyle, to_json};
    let style = JsonStyle {
        sort_keys: true,
        ..JsonStyle::PRETTY
    };
    let mut out = String::new();
    for obj in objects {
        // The writer indents by two spaces; JSON text has no raw line breaks inside strings,
        // so doubling each line's leading spaces gives Go's four.
        for line in to_json(obj, style).lines() {
            let body = line.trim_start_matches(' ');
            let indent = line.len() - body.len();
            out.push_str(&" ".repeat(indent * 2));
            out.push_str(body);
            out.push('\n');
        }
    }
    out
}

fn describe(obj: &Node) -> String {
    let kind = obj.str_at(&["kind"]).unwrap_or("object");
    match obj.str_at(&["metadata", "name"]) {
        Some(name) => format!("{kind} {name}"),
        None => kind.to_string(),
    }
}

fn read(path: &Path) -> Result<Arc<SourceFile>, Error> {
    crate::fs::read_input(path)
}

/// `yaml11`: plain `y`/`yes`/`on`/`n`/`no`/`off` are booleans, as kubectl reads its files.
fn parse_all(file: &Arc<SourceFile>, yaml11: bool) -> Result<Vec<(usize, Node)>, Error> {
    let parsed = if yaml11 {
        crate::yaml::parse::parse_config_documents(&file.text)
    } else {
        parse_documents(&file.text)
    };
    let docs =
        parsed.map_err(|e| {
            Error::new(ErrorKind::Yaml, format!("{}: {}", file.display, e.message))
                .at(Location::new(file.clone(), e.offset.unwrap_or(0), 0))
        })?;
    Ok(docs
        .into_iter()
        .filter(|d| !d.node.is_null())
        .map(|d| (d.offset, d.node))
        .collect())
}

/// One document (a patch, a schema, one side of a two- or three-way merge); none reads as null.
fn parse_single(file: &Arc<SourceFile>, yaml11: bool) -> Result<Node, Error> {
    let mut docs = parse_all(file, yaml11)?;
    match docs.len() {
        0 => Ok(Node::Null),
        1 => Ok(docs.remove(0).1),
        n => Err(Error::new(
            ErrorKind::Usage,
            format!("{}: expected one document, found {n}", file.display),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Warnings;

    #[test]
    fn patch_argument_is_text_unless_a_plain_word_names_a_file() {
        let dir = std::env::temp_dir().join(format!("ply-patch-arg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("patch.yaml");
        std::fs::write(&file, "spec: {replicas: 2}\n").unwrap();
        let path = file.to_string_lossy().into_owned();

        let mut w = Warnings::default();
        assert!(matches!(patch_argument(&path, &mut w), PatchSource::File(p) if p == file));
        assert_eq!(w.messages().len(), 1);
        assert!(w.messages()[0].contains("use --patch-file"));

        let mut w = Warnings::default();
        for text in [
            r#"{"spec":{"replicas":3}}"#,
            "spec: {replicas: 3}",
            r#"[{"op":"remove","path":"/spec"}]"#,
            "no-such-file.yaml",
        ] {
            assert!(
                matches!(patch_argument(text, &mut w), PatchSource::Inline(t) if t == text),
                "{text}"
            );
        }
        assert!(w.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
