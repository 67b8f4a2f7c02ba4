//! The Applications an ApplicationSet generates offline (applicationset/generators/): the
//! `list` generator, `git` directories and files on this repository, `matrix` and `merge` of
//! those, and the template in both syntaxes (fasttemplate `{{path.basename}}`, or Go templates
//! with `goTemplate: true`). Other generators are "not rendered", with the reason.

use std::path::PathBuf;
use std::sync::Arc;

use crate::source::SourceFile;
use crate::yaml::path::PathSeg;
use crate::yaml::{Map, Node, parse_documents};

use super::app::Application;
use super::{glob, gotmpl};

/// What the generators read of the repository.
pub(crate) struct RepoView<'a> {
    /// Every file, relative to the root.
    pub files: &'a [PathBuf],
    /// A file's text (relative path), `None` when unreadable.
    pub read: &'a dyn Fn(&str) -> Option<String>,
    /// The repository's URL (`None`: every `repoURL` is this repository).
    pub urls: &'a [String],
}

/// An ApplicationSet's options that change how parameters are made and templates rendered.
struct Options {
    go_template: bool,
    missing_error: bool,
}

type Params = Map;

/// The Applications `node` (an ApplicationSet in `file` at `offset`) generates, or why they are
/// not rendered.
pub(crate) fn generate(
    node: &Node,
    file: &Arc<SourceFile>,
    offset: usize,
    repo: &RepoView<'_>,
) -> Result<Vec<Application>, String> {
    let spec = node.get("spec").ok_or("no spec")?;
    if spec.get("templatePatch").is_some_and(|t| !t.is_null()) {
        return Err("templatePatch is not supported".into());
    }
    let opts = Options {
        go_template: matches!(
            spec.get("goTemplate").map(Node::unspelled),
            Some(Node::Bool(true))
        ),
        missing_error: spec
            .get("goTemplateOptions")
            .and_then(Node::as_seq)
            .is_some_and(|o| o.iter().any(|x| x.as_str() == Some("missingkey=error"))),
    };
    let template = spec.get("template").ok_or("no spec.template")?;
    let gens = spec
        .get("generators")
        .and_then(Node::as_seq)
        .ok_or("no spec.generators")?;
    let ns = node
        .str_at(&["metadata", "namespace"])
        .unwrap_or("")
        .to_string();
    let mut apps = Vec::new();
    for g in gens {
        for params in params_of(g, repo, &opts)? {
            let rendered = template_node(template, &params, &opts)?;
            let mut app = Map::new();
            app.insert("apiVersion".into(), Node::str(super::app::API_VERSION));
            app.insert("kind".into(), Node::str("Application"));
            let mut meta = rendered
                .get("metadata")
                .cloned()
                .unwrap_or_else(Node::empty_map);
            if let Node::Map(m) = &mut meta
                && !ns.is_empty()
            {
                m.insert("namespace".into(), Node::str(ns.clone()));
            }
            app.insert("metadata".into(), meta);
            app.insert(
                "spec".into(),
                rendered
                    .get("spec")
                    .cloned()
                    .unwrap_or_else(Node::empty_map),
            );
            let mut a = Application::from_node(&Node::Map(app), file.clone(), offset)
                .map_err(|e| e.plain())?;
            a.path_prefix = vec![PathSeg::Key("spec".into()), PathSeg::Key("template".into())];
            apps.push(a);
        }
    }
    Ok(apps)
}

/// The parameter sets of one generator.
fn params_of(g: &Node, repo: &RepoView<'_>, o: &Options) -> Result<Vec<Params>, String> {
    if g.get("selector").is_some_and(|s| !s.is_null()) {
        return Err("a generator selector is not supported".into());
    }
    if g.get("template").is_some_and(|s| !s.is_null()) {
        return Err("a generator's own template is not supported".into());
    }
    if let Some(l) = g.get("list") {
        return list(l, o);
    }
    if let Some(git) = g.get("git") {
        return git_params(git, repo, o);
    }
    if let Some(m) = g.get("matrix") {
        return matrix(m, repo, o);
    }
    if let Some(m) = g.get("merge") {
        return merge(m, repo, o);
    }
    let kind = g
        .as_map()
        .and_then(|m| m.keys().next().cloned())
        .unwrap_or_default();
    Err(format!(
        "the {kind} generator needs a cluster or an external service"
    ))
}

fn list(l: &Node, o: &Options) -> Result<Vec<Params>, String> {
    let mut out = Vec::new();
    for e in l
        .get("elements")
        .and_then(Node::as_seq)
        .map(Vec::as_slice)
        .unwrap_or(&[])
    {
        let Node::Map(m) = e.unspelled() else {
            return Err("a list element is not a map".into());
        };
        if o.go_template {
            out.push(m.clone());
            continue;
        }
        let mut p = Map::new();
        for (k, v) in m.iter() {
            if k == "values" {
                let Node::Map(vals) = v.unspelled() else {
                    return Err("error parsing values map".into());
                };
                for (vk, vv) in vals.iter() {
                    p.insert(format!("values.{vk}"), Node::str(string_of(vv)?));
                }
            } else {
                p.insert(k.clone(), Node::str(string_of(v)?));
            }
        }
        out.push(p);
    }
    if let Some(y) = l.get("elementsYaml").and_then(Node::as_str) {
        let docs = parse_documents(y).map_err(|e| e.message)?;
        for d in docs {
            for e in d.node.as_seq().cloned().unwrap_or_default() {
                out.push(
                    e.as_map()
                        .cloned()
                        .ok_or("an elementsYaml item is not a map")?,
                );
            }
        }
    }
    Ok(out)
}

fn string_of(v: &Node) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| "error parsing value as string".to_string())
}

fn git_params(git: &Node, repo: &RepoView<'_>, o: &Options) -> Result<Vec<Params>, String> {
    let url = git.str_at(&["repoURL"]).unwrap_or("");
    if !super::is_this_repo(url, repo.urls) {
        return Err(format!(
            "its git generator reads {url}, not this repository"
        ));
    }
    let prefix = git.str_at(&["pathParamPrefix"]).unwrap_or("").to_string();
    let values = git
        .get("values")
        .and_then(Node::as_map)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    if let Some(dirs) = git.get("directories").and_then(Node::as_seq) {
        for d in directories(repo.files) {
            let (mut inc, mut exc) = (false, false);
            for r in dirs {
                if path_match(r.str_at(&["path"]).unwrap_or(""), &d) {
                    let exclude = matches!(
                        r.get("exclude").map(Node::unspelled),
                        Some(Node::Bool(true))
                    );
                    if exclude {
                        exc = true;
                    } else {
                        inc = true;
                    }
                }
            }
            if inc && !exc {
                let mut p = path_params(&d, None, &prefix, o);
                add_values(&mut p, &values, o)?;
                out.push(p);
            }
        }
    }
    if let Some(files) = git.get("files").and_then(Node::as_seq) {
        let mut chosen: Vec<String> = Vec::new();
        for f in repo.files {
            let f = f.to_string_lossy().to_string();
            let mut keep = false;
            for r in files {
                let exclude = matches!(
                    r.get("exclude").map(Node::unspelled),
                    Some(Node::Bool(true))
                );
                if !exclude && glob::matches(r.str_at(&["path"]).unwrap_or(""), &f) {
                    keep = true;
                }
            }
            for r in files {
                let exclude = matches!(
                    r.get("exclude").map(Node::unspelled),
                    Some(Node::Bool(true))
                );
                if exclude && glob::matches(r.str_at(&["path"]).unwrap_or(""), &f) {
                    keep = false;
                }
            }
            if keep {
                chosen.push(f);
            }
        }
        chosen.sort();
        for f in chosen {
            let text = (repo.read)(&f).ok_or(format!("cannot read {f}"))?;
            for obj in
                file_objects(&text).map_err(|e| format!("unable to process file '{f}': {e}"))?
            {
                let dir = parent(&f);
                let mut p = path_params(&dir, Some(&f), &prefix, o);
                if o.go_template {
                    // `maps.Copy(params, objectFound)`, then the path parameters over it.
                    let mut with_obj = obj.clone();
                    for (k, v) in p.iter() {
                        with_obj.insert(k.clone(), v.clone());
                    }
                    p = with_obj;
                } else {
                    let mut flat = Map::new();
                    flatten("", &Node::Map(obj), &mut flat);
                    for (k, v) in p.iter() {
                        flat.insert(k.clone(), v.clone());
                    }
                    p = flat;
                }
                add_values(&mut p, &values, o)?;
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// A git files generator file: one object, or a list of them.
fn file_objects(text: &str) -> Result<Vec<Map>, String> {
    let docs = parse_documents(text).map_err(|e| e.message)?;
    match docs.into_iter().next().map(|d| d.node) {
        None | Some(Node::Null) => Ok(vec![Map::new()]),
        Some(Node::Map(m)) => Ok(vec![m]),
        Some(Node::Seq(s)) => s
            .into_iter()
            .map(|n| {
                n.as_map()
                    .cloned()
                    .ok_or_else(|| "an item is not an object".to_string())
            })
            .collect(),
        Some(_) => Err("unable to parse file".into()),
    }
}

/// `flatten.Flatten(obj, "", DotStyle)`, every value as `%v`.
fn flatten(prefix: &str, n: &Node, out: &mut Map) {
    match n.unspelled() {
        Node::Map(m) if !m.is_empty() => {
            for (k, v) in m.iter() {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        Node::Seq(s) if !s.is_empty() => {
            for (i, v) in s.iter().enumerate() {
                let key = if prefix.is_empty() {
                    i.to_string()
                } else {
                    format!("{prefix}.{i}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            let text = match other {
                Node::Null => "<nil>".to_string(),
                Node::Map(_) => "map[]".to_string(),
                Node::Seq(_) => "[]".to_string(),
                Node::Float(f) => crate::yaml::json::go_float(*f),
                o => o.scalar_text().unwrap_or_default(),
            };
            out.insert(prefix.to_string(), Node::str(text));
        }
    }
}

fn parent(p: &str) -> String {
    match p.rfind('/') {
        Some(i) => p[..i].to_string(),
        None => ".".into(),
    }
}

fn base(p: &str) -> String {
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// The path parameters of a directory (and file).
fn path_params(dir: &str, file: Option<&str>, prefix: &str, o: &Options) -> Params {
    let mut p = Map::new();
    if o.go_template {
        let mut m = Map::new();
        m.insert("path".into(), Node::str(dir));
        m.insert("basename".into(), Node::str(base(dir)));
        if let Some(f) = file {
            m.insert("filename".into(), Node::str(base(f)));
            m.insert(
                "filenameNormalized".into(),
                Node::str(gotmpl::sanitize_name(&base(f))),
            );
        }
        m.insert(
            "basenameNormalized".into(),
            Node::str(gotmpl::sanitize_name(&base(dir))),
        );
        m.insert(
            "segments".into(),
            Node::Seq(dir.split('/').map(Node::str).collect()),
        );
        if prefix.is_empty() {
            p.insert("path".into(), Node::Map(m));
        } else {
            let mut outer = Map::new();
            outer.insert("path".into(), Node::Map(m));
            p.insert(prefix.into(), Node::Map(outer));
        }
        return p;
    }
    let name = if prefix.is_empty() {
        "path".to_string()
    } else {
        format!("{prefix}.path")
    };
    p.insert(name.clone(), Node::str(dir));
    p.insert(format!("{name}.basename"), Node::str(base(dir)));
    if let Some(f) = file {
        p.insert(format!("{name}.filename"), Node::str(base(f)));
        p.insert(
            format!("{name}.filenameNormalized"),
            Node::str(gotmpl::sanitize_name(&base(f))),
        );
    }
    p.insert(
        format!("{name}.basenameNormalized"),
        Node::str(gotmpl::sanitize_name(&base(dir))),
    );
    for (i, seg) in dir.split('/').enumerate() {
        if !seg.is_empty() {
            p.insert(format!("{name}[{i}]"), Node::str(seg));
        }
    }
    p
}

/// `appendTemplatedValues`: each value rendered with the parameters, as `values.<k>` (or
/// under `values` with Go templates).
fn add_values(p: &mut Params, values: &Map, o: &Options) -> Result<(), String> {
    let mut rendered = Map::new();
    for (k, v) in values.iter() {
        let text = v.scalar_text().unwrap_or_default();
        rendered.insert(k.clone(), Node::str(replace(&text, p, o)?));
    }
    if rendered.is_empty() {
        return Ok(());
    }
    if o.go_template {
        p.insert("values".into(), Node::Map(rendered));
    } else {
        for (k, v) in rendered.iter() {
            p.insert(format!("values.{k}"), v.clone());
        }
    }
    Ok(())
}

/// Every directory of the repository but hidden ones, in `WalkDir` order.
fn directories(files: &[PathBuf]) -> Vec<String> {
    let mut dirs: Vec<Vec<String>> = Vec::new();
    for f in files {
        let parts: Vec<String> = f.iter().map(|c| c.to_string_lossy().to_string()).collect();
        for n in 1..parts.len() {
            let d = parts[..n].to_vec();
            if d.iter().any(|c| c.starts_with('.')) {
                break;
            }
            dirs.push(d);
        }
    }
    dirs.sort();
    dirs.dedup();
    dirs.into_iter().map(|d| d.join("/")).collect()
}

/// Go's `path.Match`: `*` and `?` never match `/`.
fn path_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some('*') => (0..=t.len())
                .take_while(|&k| k == 0 || t[k - 1] != '/')
                .any(|k| go(&p[1..], &t[k..])),
            Some('?') => t.first().is_some_and(|c| *c != '/') && go(&p[1..], &t[1..]),
            Some('\\') => p.get(1).is_some_and(|e| t.first() == Some(e)) && go(&p[2..], &t[1..]),
            Some('[') => {
                let Some(close) = p.iter().position(|c| *c == ']') else {
                    return false;
                };
                let Some(&ch) = t.first() else {
                    return false;
                };
                let body = &p[1..close];
                let (neg, body) = match body.first() {
                    Some('^') => (true, &body[1..]),
                    _ => (false, body),
                };
                let mut hit = false;
                let mut i = 0;
                while i < body.len() {
                    if body.get(i + 1) == Some(&'-') && i + 2 < body.len() {
                        hit |= body[i] <= ch && ch <= body[i + 2];
                        i += 3;
                    } else {
                        hit |= body[i] == ch;
                        i += 1;
                    }
                }
                hit != neg && ch != '/' && go(&p[close + 1..], &t[1..])
            }
            Some(c) => t.first() == Some(c) && go(&p[1..], &t[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = name.chars().collect();
    go(&p, &t)
}

fn matrix(m: &Node, repo: &RepoView<'_>, o: &Options) -> Result<Vec<Params>, String> {
    let gens = m
        .get("generators")
        .and_then(Node::as_seq)
        .ok_or("a matrix without generators")?;
    let [first, second] = gens.as_slice() else {
        return Err("a matrix generator takes exactly two generators".into());
    };
    let mut out = Vec::new();
    for a in params_of(first, repo, o)? {
        let second = template_node(second, &a, o)?;
        for b in params_of(&second, repo, o)? {
            let mut combined = Map::new();
            if o.go_template {
                deep_merge(&mut combined, &b);
                deep_merge(&mut combined, &a);
            } else {
                for (k, v) in a.iter() {
                    combined.insert(k.clone(), v.clone());
                }
                for (k, v) in b.iter() {
                    if let Some(cur) = combined.get(k)
                        && cur.scalar_text() != v.scalar_text()
                    {
                        return Err(format!("found duplicate key {k} with different value"));
                    }
                    combined.insert(k.clone(), v.clone());
                }
            }
            out.push(combined);
        }
    }
    Ok(out)
}

/// `mergo.Merge(dst, src, WithOverride)`: maps merged key by key, anything else replaced.
fn deep_merge(dst: &mut Map, src: &Map) {
    for (k, v) in src.iter() {
        match (dst.get_mut(k), v.unspelled()) {
            (Some(Node::Map(d)), Node::Map(s)) => deep_merge(d, s),
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

fn merge(m: &Node, repo: &RepoView<'_>, o: &Options) -> Result<Vec<Params>, String> {
    let keys: Vec<String> = m
        .get("mergeKeys")
        .and_then(Node::as_seq)
        .map(|s| {
            s.iter()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if keys.is_empty() {
        return Err("a merge generator needs mergeKeys".into());
    }
    let gens = m
        .get("generators")
        .and_then(Node::as_seq)
        .ok_or("a merge without generators")?;
    if gens.len() < 2 {
        return Err("a merge generator takes at least two generators".into());
    }
    let key_of = |p: &Params| -> String {
        keys.iter()
            .map(|k| p.get(k).and_then(Node::scalar_text).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\u{0}")
    };
    let mut base = params_of(&gens[0], repo, o)?;
    let mut seen = std::collections::HashSet::new();
    for p in &base {
        if !seen.insert(key_of(p)) {
            return Err("the parameters of a merge generator's first generator are not unique by its mergeKeys".into());
        }
    }
    for g in &gens[1..] {
        let over = params_of(g, repo, o)?;
        for b in base.iter_mut() {
            if let Some(ov) = over.iter().find(|p| key_of(p) == key_of(b)) {
                if o.go_template {
                    deep_merge(b, ov);
                } else {
                    for (k, v) in ov.iter() {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    Ok(base)
}

/// Every string of `n` (map keys too) rendered with `params` (`deeplyReplace`).
fn template_node(n: &Node, params: &Params, o: &Options) -> Result<Node, String> {
    Ok(match n.unspelled() {
        Node::Str(s) => Node::str(replace(s, params, o)?),
        Node::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m.iter() {
                out.insert(replace(k, params, o)?, template_node(v, params, o)?);
            }
            Node::Map(out)
        }
        Node::Seq(s) => Node::Seq(
            s.iter()
                .map(|x| template_node(x, params, o))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// `Render.Replace`: a Go template, or fasttemplate's `{{name}}` with string parameters
/// (unknown tags kept).
fn replace(s: &str, params: &Params, o: &Options) -> Result<String, String> {
    if o.go_template {
        return gotmpl::render(s, &Node::Map(params.clone()), o.missing_error)
            .map_err(|e| format!("failed to execute go template {s}: {e}"));
    }
    if !s.contains("{{") {
        return Ok(s.to_string());
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(j) = after.find("}}") else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        let tag = &after[..j];
        match params.get(tag.trim()).and_then(Node::as_str) {
            Some(v) if !tag.trim().is_empty() => out.push_str(v),
            _ => {
                out.push_str("{{");
                out.push_str(tag);
                out.push_str("}}");
            }
        }
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_path_match_stops_at_slashes() {
        assert!(path_match("apps/*", "apps/web"));
        assert!(!path_match("apps/*", "apps/web/x"));
        assert!(path_match("apps/[a-w]*", "apps/web"));
        assert!(!path_match("apps/[^w]*", "apps/web"));
    }

    #[test]
    fn fasttemplate_keeps_unknown_tags() {
        let mut p = Map::new();
        p.insert("path.basename".into(), Node::str("web"));
        let o = Options {
            go_template: false,
            missing_error: false,
        };
        assert_eq!(
            replace("{{path.basename}}-{{ nope }}", &p, &o).unwrap(),
            "web-{{ nope }}"
        );
    }

    #[test]
    fn directories_skip_hidden_and_sort_by_component() {
        let files: Vec<PathBuf> = ["a-b/x", "a/b/y", ".hidden/z", "top"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(directories(&files), ["a", "a/b", "a-b"]);
    }
}
