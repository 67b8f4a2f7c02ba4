//! `ply explain` and `ply render --provenance=comments` (issue 29): the fields of a render
//! made with provenance on, each with the chain of places that set its value (newest first),
//! as text, as JSON (schema in docs/explain.md), or as trailing comments on the YAML output.

use crate::diag::{Error, ErrorKind, Result};
use crate::render::provenance::{Resolved, Resolver};
use crate::resource::Resource;
use crate::resource::provenance::{Origin, Step};
use crate::yaml::emit::emit_document_spots;
use crate::yaml::json::{JsonStyle, write_json};
use crate::yaml::path::parse_path;
use crate::yaml::{EmitOptions, Map, Node, emit_document};

/// One origin as shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShownOrigin {
    pub(crate) step: Step,
    /// `None` when no text says it (a plugin's output).
    pub(crate) at: Option<Resolved>,
    /// What the step read besides its place (a replacement's source object and field).
    pub(crate) source: Option<ShownSource>,
}

/// The source of an origin as shown ([`crate::resource::provenance::Source`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShownSource {
    /// `apiVersion`, `kind`, `namespace`, `name`.
    pub(crate) object: Option<[String; 4]>,
    pub(crate) path: Option<String>,
    pub(crate) at: Option<Resolved>,
}

/// One field of one object and its origins, newest first.
#[derive(Clone, Debug)]
pub(crate) struct Explained {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) value: Node,
    pub(crate) origins: Vec<ShownOrigin>,
}

/// Which fields to explain.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query {
    /// `KIND/NAME` or `KIND/NAMESPACE/NAME` (the kind matched without case).
    pub(crate) object: Option<String>,
    /// A field path (`spec.template.spec.containers[0].image`), or the path of a map or list
    /// holding several.
    pub(crate) field: Option<String>,
    /// Every field, not only the ones a step after the resource file changed.
    pub(crate) all: bool,
}

/// The origins of one recorded field, resolved (by `resolver`, which follows the fields of
/// one object through their documents from where the last one left).
pub(crate) fn shown(origins: &[Origin], resolver: &mut Resolver) -> Vec<ShownOrigin> {
    origins
        .iter()
        .map(|o| ShownOrigin {
            step: o.step,
            at: o.place.as_ref().map(|p| resolver.resolve(p)),
            source: o.source.as_ref().map(|s| ShownSource {
                object: s.object.clone(),
                path: s.path.clone(),
                at: s.place.as_ref().map(|p| resolver.resolve(p)),
            }),
        })
        .collect()
}

/// The fields `q` asks for, in output order. Without a field path, only the fields a step
/// after the resource file changed (an overlay's doing); with one, every field at or under it.
/// An object not in the render is an error that says what removed it (a `$patch: delete` of
/// one of the files `read` gives: display path and text) or names the closest objects.
pub(crate) fn explain(
    resources: &[Resource],
    q: &Query,
    read: &mut dyn FnMut() -> Vec<(String, String)>,
) -> Result<Vec<Explained>> {
    let wanted = match &q.field {
        Some(f) => Some(parse_path(f).ok_or_else(|| {
            Error::new(ErrorKind::Usage, format!("'{f}' is not a field path"))
                .help("write a path as `spec.template.spec.containers[0].image`; quote keys holding dots: `metadata.labels[\"app.kubernetes.io/name\"]`")
        })?),
        None => None,
    };
    let mut out = Vec::new();
    let mut matched_object = false;
    let mut resolver = Resolver::default();
    for r in resources {
        if let Some(o) = &q.object
            && !object_matches(r, o)
        {
            continue;
        }
        matched_object = true;
        let Some(prov) = &r.provenance else { continue };
        prov.for_each_field(&r.node, &mut |path, value, chain| {
            let keep = match &wanted {
                Some(w) => parse_path(path).is_some_and(|p| p.starts_with(w)),
                None => q.all || chain.newest_step().is_some_and(|s| s != Step::Resource),
            };
            if keep {
                out.push(Explained {
                    api_version: r.node.str_at(&["apiVersion"]).unwrap_or("").to_string(),
                    kind: r.kind().to_string(),
                    namespace: r.namespace().to_string(),
                    name: r.name().to_string(),
                    path: path.to_string(),
                    value: value.clone(),
                    origins: shown(&chain.origins(path), &mut resolver),
                });
            }
        });
    }
    if let Some(o) = &q.object
        && !matched_object
    {
        return Err(missing(o, resources, &read()));
    }
    if let (Some(f), true) = (&q.field, out.is_empty()) {
        return Err(Error::new(
            ErrorKind::Usage,
            format!("no field {f} in the objects asked for"),
        ));
    }
    Ok(out)
}

/// The display path and text of each readable text file of `paths`, as `fs` reads them.
pub(crate) fn texts(
    fs: &dyn crate::fs::Fs,
    paths: Vec<std::path::PathBuf>,
) -> Vec<(String, String)> {
    paths
        .iter()
        .filter_map(|p| {
            let text = String::from_utf8(fs.read(p).ok()?).ok()?;
            Some((crate::source::display_path(p), text))
        })
        .collect()
}

/// `KIND/NAME` or `KIND/NAMESPACE/NAME` as (kind, namespace, name).
fn object_parts(o: &str) -> Option<(&str, Option<&str>, &str)> {
    let parts: Vec<&str> = o.split('/').collect();
    match parts.as_slice() {
        [k, n] => Some((*k, None, *n)),
        [k, ns, n] => Some((*k, Some(*ns), *n)),
        _ => None,
    }
}

fn object_matches(r: &Resource, o: &str) -> bool {
    let Some((kind, ns, name)) = object_parts(o) else {
        return false;
    };
    r.kind().eq_ignore_ascii_case(kind)
        && r.name() == name
        && ns.is_none_or(|ns| r.namespace() == ns)
}

/// The error for an object `o` not in the render: the `$patch: delete` that removed it (in a
/// patch file or an inline patch of a file the render read), else the closest objects the
/// render holds (by edit distance of `KIND/NAMESPACE/NAME`, at most three).
fn missing(o: &str, resources: &[Resource], read: &[(String, String)]) -> Error {
    let err = Error::new(ErrorKind::Usage, format!("no object {o} in the render"));
    let Some((kind, _, name)) = object_parts(o) else {
        return err
            .help("name an object as KIND/NAME or KIND/NAMESPACE/NAME, as `ply render` prints it");
    };
    if let Some(at) = read
        .iter()
        .find_map(|(file, text)| deleted_at(text, kind, name).map(|l| (file, l)))
    {
        return Error::new(
            ErrorKind::Usage,
            format!(
                "no object {o} in the render: it is deleted by `$patch: delete` at {}:{}",
                at.0, at.1
            ),
        );
    }
    let id = |r: &Resource| {
        if r.namespace().is_empty() {
            format!("{}/{}", r.kind(), r.name())
        } else {
            format!("{}/{}/{}", r.kind(), r.namespace(), r.name())
        }
    };
    let want = o.to_ascii_lowercase();
    let mut near: Vec<(usize, String)> = resources
        .iter()
        .map(|r| {
            let i = id(r);
            (
                crate::diag::suggest::levenshtein(&want, &i.to_ascii_lowercase()),
                i,
            )
        })
        .collect();
    near.sort();
    near.dedup();
    let closest: Vec<String> = near.into_iter().take(3).map(|(_, i)| i).collect();
    if closest.is_empty() {
        return err.help("the render holds no objects");
    }
    err.help(format!(
        "the closest objects in the render: {}",
        closest.join(", ")
    ))
}

/// The line (1-based) of a `$patch: delete` in `text` whose document or inline patch names an
/// object of `kind` (any case) and `name`: the nearest `kind:` and `name:` lines above or
/// below it within its document, at any indentation (a patch file, or a kustomization's
/// `patch: |` text).
fn deleted_at(text: &str, kind: &str, name: &str) -> Option<usize> {
    if !text.contains("$patch") {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let value = |l: &str, key: &str| {
        let t = l.trim_start().trim_start_matches("- ");
        let v = t.strip_prefix(key)?.strip_prefix(':')?.trim();
        Some(v.trim_matches(['"', '\'']).to_string())
    };
    for (i, l) in lines.iter().enumerate() {
        let Some(v) = value(l, "$patch") else {
            continue;
        };
        if v != "delete" {
            continue;
        }
        // The document around it: up to the `---` or `- ` entry boundaries, both ways.
        let start = (0..i)
            .rev()
            .find(|&j| lines[j].starts_with("---") || value(lines[j], "patch").is_some())
            .map_or(0, |j| j + 1);
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].starts_with("---") || value(lines[j], "patch").is_some())
            .unwrap_or(lines.len());
        let doc = &lines[start..end];
        let kind_ok = doc
            .iter()
            .any(|l| value(l, "kind").is_some_and(|k| k.eq_ignore_ascii_case(kind)));
        let name_ok = doc
            .iter()
            .any(|l| value(l, "name").as_deref() == Some(name));
        if kind_ok && name_ok {
            return Some(i + 1);
        }
    }
    None
}

/// A value as YAML writes it (`nginx:1.27`, `'>=1.0.0'`, `3`, `{}`); a string YAML would
/// write over several lines, double-quoted with its line breaks escaped (`"a\nb"`).
fn value_text(v: &Node) -> String {
    let mut s = String::new();
    emit_document(&mut s, v, EmitOptions::default());
    let t = s.strip_suffix('\n').unwrap_or(&s);
    if !t.contains('\n') {
        return t.to_string();
    }
    let Node::Str(text) = v.unspelled() else {
        return t.replace('\n', " ");
    };
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The text form: per field, `KIND/[NAMESPACE/]NAME PATH = VALUE`, then one line per origin,
/// newest first: step, `file:line:column`, and the source line quoted.
pub(crate) fn to_text(fields: &[Explained]) -> String {
    let mut out = String::new();
    for f in fields {
        let ns = if f.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", f.namespace)
        };
        out.push_str(&format!(
            "{}/{}{} {} = {}\n",
            f.kind,
            ns,
            f.name,
            f.path,
            value_text(&f.value)
        ));
        for o in &f.origins {
            match &o.at {
                Some(at) => out.push_str(&format!(
                    "  {:<18} {}:{}:{}  {}\n",
                    o.step.name(),
                    at.file,
                    at.line,
                    at.column,
                    at.quote.trim()
                )),
                None => out.push_str(&format!("  {}\n", o.step.name())),
            }
            if let Some(src) = &o.source {
                out.push_str(&source_line(src));
            }
        }
    }
    out
}

/// The text line of an origin's source: `from KIND/[NAMESPACE/]NAME PATH` for an object's
/// field, `via` for a file entry, then `file:line:column` and the line quoted.
fn source_line(src: &ShownSource) -> String {
    let mut line = String::from("    ");
    match &src.object {
        Some([_, kind, ns, name]) => {
            let ns = if ns.is_empty() {
                String::new()
            } else {
                format!("{ns}/")
            };
            line.push_str(&format!("from {kind}/{ns}{name}"));
            if let Some(p) = &src.path {
                line.push_str(&format!(" {p}"));
            }
        }
        None => line.push_str("via"),
    }
    if let Some(at) = &src.at {
        line.push_str(&format!(
            "  {}:{}:{}  {}",
            at.file,
            at.line,
            at.column,
            at.quote.trim()
        ));
    }
    line.push('\n');
    line
}

/// The JSON form (docs/explain.md): a list of fields, each
/// `{object: {apiVersion, kind, namespace, name}, path, value, origins: [{file, line, column, step}]}`.
pub(crate) fn to_json(fields: &[Explained]) -> String {
    let s = |v: &str| Node::Str(v.to_string());
    let list = fields
        .iter()
        .map(|f| {
            let mut object = Map::new();
            object.insert("apiVersion".into(), s(&f.api_version));
            object.insert("kind".into(), s(&f.kind));
            object.insert("namespace".into(), s(&f.namespace));
            object.insert("name".into(), s(&f.name));
            let origins = f
                .origins
                .iter()
                .map(|o| {
                    let mut m = Map::new();
                    insert_at(&mut m, o.at.as_ref());
                    m.insert("step".into(), s(o.step.name()));
                    if let Some(src) = &o.source {
                        m.insert("source".into(), source_json(src));
                    }
                    Node::Map(m)
                })
                .collect();
            let mut m = Map::new();
            m.insert("object".into(), Node::Map(object));
            m.insert("path".into(), s(&f.path));
            m.insert("value".into(), f.value.clone());
            m.insert("origins".into(), Node::Seq(origins));
            Node::Map(m)
        })
        .collect();
    let mut out = String::new();
    write_json(&mut out, &Node::Seq(list), JsonStyle::PRETTY);
    out.push('\n');
    out
}

/// An origin's `source` in JSON: `{object, path, file, line, column}`, `null` where unknown.
fn source_json(src: &ShownSource) -> Node {
    let s = |v: &str| Node::Str(v.to_string());
    let mut m = Map::new();
    m.insert(
        "object".into(),
        match &src.object {
            Some([api_version, kind, namespace, name]) => {
                let mut o = Map::new();
                o.insert("apiVersion".into(), s(api_version));
                o.insert("kind".into(), s(kind));
                o.insert("namespace".into(), s(namespace));
                o.insert("name".into(), s(name));
                Node::Map(o)
            }
            None => Node::Null,
        },
    );
    m.insert("path".into(), src.path.as_deref().map_or(Node::Null, s));
    insert_at(&mut m, src.at.as_ref());
    Node::Map(m)
}

/// The render's YAML with each value's newest origin as a trailing comment
/// (`# file:line:column step`). A value written over several lines (a block scalar's lines, a
/// long quoted or plain scalar) gets none, so the text stays valid YAML and reads as the same
/// objects.
pub(crate) fn with_comments(resources: &[Resource]) -> String {
    let mut out = String::new();
    let mut resolver = Resolver::default();
    let mut spots = Vec::new();
    let mut at: crate::fasthash::FastMap<*const Node, usize> = Default::default();
    for (i, r) in resources.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let mut doc = String::new();
        let mut notes: Vec<(usize, bool, String)> = Vec::new();
        match &r.provenance {
            Some(prov) => {
                // Where each value is written, told by the writer (by the node's address).
                spots.clear();
                emit_document_spots(&mut doc, &r.node, EmitOptions::default(), &mut spots);
                at.clear();
                at.extend(spots.iter().copied());
                prov.for_each_field(&r.node, &mut |path, value, chain| {
                    let Some(&offset) = at.get(&(value as *const Node)) else {
                        return;
                    };
                    let Some(o) = chain.newest(path) else {
                        return;
                    };
                    let text = match o.place.as_ref().map(|p| resolver.resolve(p)) {
                        Some(at) => {
                            format!("{}:{}:{} {}", at.file, at.line, at.column, o.step.name())
                        }
                        None => o.step.name().to_string(),
                    };
                    notes.push((offset, ends_on_line(&doc, offset, value), text));
                });
            }
            None => emit_document(&mut doc, &r.node, EmitOptions::default()),
        }
        out.push_str(&annotate(&doc, &notes));
    }
    out
}

/// Appends each note to the line where its value starts (`notes`: the value's offset, whether
/// it ends on that line, the note).
fn annotate(doc: &str, notes: &[(usize, bool, String)]) -> String {
    let mut by_line: std::collections::BTreeMap<usize, &str> = std::collections::BTreeMap::new();
    for (offset, ends, text) in notes {
        if *ends {
            let ls = doc[..*offset].rfind('\n').map_or(0, |i| i + 1);
            by_line.entry(ls).or_insert(text);
        }
    }
    let mut out = String::with_capacity(doc.len() * 2);
    let mut pos = 0;
    for line in doc.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        out.push_str(body);
        if let Some(note) = by_line.get(&pos) {
            out.push_str(" # ");
            out.push_str(&note.replace(['\n', '\r'], " "));
        }
        if line.ends_with('\n') {
            out.push('\n');
        }
        pos += line.len();
    }
    out
}

/// Whether `value`, written at `at` of `doc`, ends on its line, so that a comment after it is
/// outside it: a plain string whose whole text is on the line (the writer folds a long one
/// over lines), a quoted one whose closing quote ends the line, never a block scalar; any
/// other scalar (a number, a boolean, null, `{}`, `[]`) is one token.
fn ends_on_line(doc: &str, at: usize, value: &Node) -> bool {
    let le = doc[at..].find('\n').map_or(doc.len(), |i| at + i);
    let v = &doc[at..le];
    let Node::Str(s) = value.unspelled() else {
        return true;
    };
    if v.contains(" #") {
        return false;
    }
    match v.chars().next() {
        Some('|' | '>') => false,
        Some('"') => closes_double(v),
        Some('\'') => v.len() >= 2 && v.ends_with('\'') && v.matches('\'').count() % 2 == 0,
        _ => v == s.as_str(),
    }
}

/// Whether a double-quoted scalar's text closes at its last character (escapes skipped).
fn closes_double(v: &str) -> bool {
    let mut escaped = false;
    for (i, c) in v.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return i + 1 == v.len(),
            _ => {}
        }
    }
    false
}

/// Renders the explanation in `format`.
pub(crate) fn write(fields: &[Explained], json: bool) -> String {
    if json {
        to_json(fields)
    } else {
        to_text(fields)
    }
}

/// `file`, `line` and `column` of a resolved place into a JSON origin (nulls without one).
fn insert_at(m: &mut Map, at: Option<&Resolved>) {
    let (file, line, column) = match at {
        Some(at) => (
            Node::Str(at.file.to_string()),
            Node::Int(at.line as i128),
            Node::Int(at.column as i128),
        ),
        None => (Node::Null, Node::Null, Node::Null),
    };
    m.insert("file".into(), file);
    m.insert("line".into(), line);
    m.insert("column".into(), column);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_yaml_writes_them() {
        assert_eq!(value_text(&Node::str(">=1.0.0")), "'>=1.0.0'");
        assert_eq!(value_text(&Node::str("nginx:1.27")), "nginx:1.27");
        assert_eq!(value_text(&Node::Int(3)), "3");
        assert_eq!(value_text(&Node::str("a\nb")), "\"a\\nb\"");
        assert_eq!(value_text(&Node::Map(Map::new())), "{}");
    }

    #[test]
    fn a_deleted_object_is_found_at_its_patch() {
        let text = "patches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: old\n    $patch: delete\n- patch: |-\n    kind: Secret\n    metadata:\n      name: other\n";
        assert_eq!(deleted_at(text, "configmap", "old"), Some(7));
        assert_eq!(deleted_at(text, "Secret", "other"), None);
        assert_eq!(deleted_at(text, "ConfigMap", "new"), None);
        let file = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\nkind: Service\nmetadata:\n  name: b\n$patch: delete\n";
        assert_eq!(deleted_at(file, "Service", "b"), Some(9));
        assert_eq!(deleted_at(file, "Service", "a"), None);
    }

    #[test]
    fn a_comment_goes_only_after_a_value_that_ends_on_its_line() {
        let doc =
            "- mysql -h 127.0.0.1 -p\n  -e 'SELECT 1'\n- \"a \\\"b\\\"\"\n- 'it''s'\n- |\n  x\n";
        let folded = Node::str("mysql -h 127.0.0.1 -p -e 'SELECT 1'");
        assert!(!ends_on_line(doc, 2, &folded));
        assert!(ends_on_line(doc, 42, &Node::str("a \"b\"")));
        assert!(ends_on_line(doc, 54, &Node::str("it's")));
        assert!(!ends_on_line(doc, 64, &Node::str("x\n")));
        assert!(ends_on_line("- 3\n", 2, &Node::Int(3)));
    }
}
