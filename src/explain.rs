//! `ply explain` and `ply render --provenance=comments` (issue 29): the fields of a render
//! made with provenance on, each with the chain of places that set its value (newest first),
//! as text, as JSON (schema in docs/explain.md), or as trailing comments on the YAML output.

use crate::diag::{Error, ErrorKind, Result};
use crate::render::provenance::{Resolved, Resolver};
use crate::resource::Resource;
use crate::resource::provenance::{Origin, Step, parse_path};
use crate::yaml::emit::emit_document_spots;
use crate::yaml::json::{JsonStyle, write_json};
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
pub(crate) fn explain(resources: &[Resource], q: &Query) -> Result<Vec<Explained>> {
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
        return Err(
            Error::new(ErrorKind::Usage, format!("no object {o} in the render")).help(
                "name an object as KIND/NAME or KIND/NAMESPACE/NAME, as `ply render` prints it",
            ),
        );
    }
    if let (Some(f), true) = (&q.field, out.is_empty()) {
        return Err(Error::new(
            ErrorKind::Usage,
            format!("no field {f} in the objects asked for"),
        ));
    }
    Ok(out)
}

fn object_matches(r: &Resource, o: &str) -> bool {
    let parts: Vec<&str> = o.split('/').collect();
    let (kind, ns, name) = match parts.as_slice() {
        [k, n] => (*k, None, *n),
        [k, ns, n] => (*k, Some(*ns), *n),
        _ => return false,
    };
    r.kind().eq_ignore_ascii_case(kind)
        && r.name() == name
        && ns.is_none_or(|ns| r.namespace() == ns)
}

fn value_text(v: &Node) -> String {
    let mut s = String::new();
    write_json(&mut s, v, JsonStyle::COMPACT);
    s
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
        let mut notes: Vec<(usize, String)> = Vec::new();
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
                    notes.push((offset, text));
                });
            }
            None => emit_document(&mut doc, &r.node, EmitOptions::default()),
        }
        out.push_str(&annotate(&doc, &notes));
    }
    out
}

/// Appends each note to the line where its value starts, when that value ends on the line.
fn annotate(doc: &str, notes: &[(usize, String)]) -> String {
    let mut by_line: std::collections::BTreeMap<usize, &str> = std::collections::BTreeMap::new();
    for (offset, text) in notes {
        let ls = doc[..*offset].rfind('\n').map_or(0, |i| i + 1);
        let le = doc[*offset..].find('\n').map_or(doc.len(), |i| offset + i);
        if ends_on_line(doc, *offset, le, ls) {
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

/// Whether the scalar written from `at` ends on its line (`le` its end, `ls` its start): a
/// quoted scalar closes there, a block scalar header is not a value, a plain scalar has no
/// deeper continuation line.
fn ends_on_line(doc: &str, at: usize, le: usize, ls: usize) -> bool {
    let v = &doc[at..le];
    if v.starts_with('|') || v.starts_with('>') || v.ends_with(':') {
        return false;
    }
    if let Some(q) = v.chars().next().filter(|c| *c == '"' || *c == '\'') {
        if v.len() < 2 || !v.ends_with(q) || v.ends_with("\\\"") {
            return false;
        }
    }
    if v.contains(" #") {
        return false;
    }
    let indent = doc[ls..].len() - doc[ls..].trim_start_matches([' ', '-']).len();
    match doc[le..]
        .strip_prefix('\n')
        .and_then(|n| n.split('\n').next())
    {
        Some(next) if !next.trim().is_empty() => {
            let ni = next.len() - next.trim_start_matches(' ').len();
            ni <= indent || next.trim_start().starts_with("- ") && ni <= indent + 2
        }
        _ => true,
    }
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
