//! Path elements and field paths of server-side apply (`smd:fieldpath/element.go`,
//! `smd:fieldpath/serialize-pe.go`): `f:name`, `k:{...}`, `v:value`, `i:N`; their total order,
//! their canonical text and their human form (`.spec.containers[name="web"].image`).

use std::cmp::Ordering;
use std::fmt;

use super::value::{self, Json};
use crate::yaml::Node;
use crate::yaml::json::{JsonStyle, write_json, write_json_string};
use crate::yaml::path::{FieldPath, PathSeg};

/// One step of a field path.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A struct field or a granular map key.
    Field(String),
    /// An item of an associative list with keys: key fields sorted by name.
    Key(Vec<(String, Node)>),
    /// An item of a set (associative list without keys), identified by its value.
    Value(Node),
    /// A list index (only in legacy or extracted data).
    Index(i64),
}

/// A field path: the elements from the object root.
pub(crate) type Path = Vec<PathElement>;

impl PathElement {
    pub fn field(name: impl Into<String>) -> PathElement {
        PathElement::Field(name.into())
    }

    /// A key element from unsorted fields (sorted here, stably, by name).
    pub fn key(mut fields: Vec<(String, Node)>) -> PathElement {
        fields.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        PathElement::Key(fields)
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The field name, when this is a field element.
    pub fn as_field(&self) -> Option<&str> {
        match self {
            PathElement::Field(f) => Some(f),
            _ => None,
        }
    }
}

fn key_compare(a: &[(String, Node)], b: &[(String, Node)]) -> Ordering {
    for ((an, av), (bn, bv)) in a.iter().zip(b) {
        let c = an.as_bytes().cmp(bn.as_bytes());
        if c != Ordering::Equal {
            return c;
        }
        let c = value::compare(av, bv);
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

impl Ord for PathElement {
    /// `PathElement.Compare`: fields < keys < values < indexes.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.as_bytes().cmp(b.as_bytes()),
            (PathElement::Key(a), PathElement::Key(b)) => key_compare(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => value::compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    /// The human form (`PathElement.String`): `.name`, `[k="v",n=1]`, `[="v"]`, `[3]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                f.write_str("[")?;
                for (i, (n, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{n}={}", value::human(v))?;
                }
                f.write_str("]")
            }
            PathElement::Value(v) => write!(f, "[={}]", value::human(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// The human form of a whole path, as kubectl prints conflicts: `.spec.replicas`,
/// `.spec.containers[name="web"].image`.
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(|pe| pe.to_string()).collect()
}

/// Reads a path in the human form ([`path_string`]:
/// `.spec.template.spec.containers[name="web"].image`) back as the field path of the node it
/// names in `node` (`spec.template.spec.containers[0].image`): the one reader of that form.
/// It is read against the object because it cannot be read alone: a field name may hold dots
/// (`.metadata.labels.app.kubernetes.io/name`: the longest key of the map that the path
/// continues with is taken), and an item is named by the printed text of its key fields or its
/// value (the item that prints as written is taken).
pub(crate) fn field_path(node: &Node, kubectl: &str) -> Option<FieldPath> {
    let mut out = Vec::new();
    let mut cur = node;
    let mut rest = kubectl;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let Node::Map(m) = cur else { return None };
            let (k, v) = m
                .iter()
                .filter(|(k, _)| {
                    r.strip_prefix(k.as_str())
                        .is_some_and(|after| after.is_empty() || after.starts_with(['.', '[']))
                })
                .max_by_key(|(k, _)| k.len())?;
            out.push(PathSeg::Key(k.clone()));
            cur = v;
            rest = &r[k.len()..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let Node::Seq(items) = cur else { return None };
            let end = closing(r)?;
            let inner = &r[..end];
            let i = if let Ok(i) = inner.parse::<usize>() {
                i
            } else if let Some(v) = inner.strip_prefix('=') {
                items.iter().position(|x| value::human(x) == v)?
            } else {
                items.iter().position(|x| {
                    let Node::Map(m) = x else { return false };
                    let mut keys: Vec<(&str, &Node)> = Vec::new();
                    for part in split_keys(inner) {
                        let Some((k, _)) = part.split_once('=') else {
                            return false;
                        };
                        let Some(v) = m.get(k) else { return false };
                        keys.push((k, v));
                    }
                    let mut written = String::new();
                    for (n, (k, v)) in keys.iter().enumerate() {
                        if n > 0 {
                            written.push(',');
                        }
                        written.push_str(k);
                        written.push('=');
                        written.push_str(&value::human(v));
                    }
                    written == inner
                })?
            };
            out.push(PathSeg::Index(i));
            cur = items.get(i)?;
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(out)
}

/// The `]` closing a list step, past quoted strings.
fn closing(r: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in r.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// The `k=v` parts of a key step, split at commas outside quotes.
fn split_keys(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut quoted, mut escaped, mut start) = (false, false, 0);
    for (i, c) in inner.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[start..]);
    out
}

/// Why a serialized path element could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum PathElementError {
    /// A one-letter prefix ply (and smd) does not know: the element is skipped, not an error.
    UnknownType,
    Invalid(String),
}

/// Reads one serialized path element (`DeserializePathElement`).
pub fn parse_path_element(s: &str) -> Result<PathElement, PathElementError> {
    let b = s.as_bytes();
    if b.len() < 2 {
        return Err(PathElementError::Invalid(format!(
            "path element must be at least 2 characters long: {s:?}"
        )));
    }
    if b[1] != b':' {
        return Err(PathElementError::Invalid(format!("missing colon: {s:?}")));
    }
    let body = &s[2..];
    match b[0] {
        b'f' => Ok(PathElement::Field(body.to_string())),
        b'v' => {
            let v = value::parse_json(body).map_err(PathElementError::Invalid)?;
            Ok(PathElement::Value(v.into_node()))
        }
        b'k' => match value::parse_json(body).map_err(PathElementError::Invalid)? {
            Json::Object(entries) => Ok(PathElement::key(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, v.into_node()))
                    .collect(),
            )),
            // jsoniter's ReadObjectCB accepts a bare `null` as an object without fields.
            Json::Null => Ok(PathElement::Key(Vec::new())),
            _ => Err(PathElementError::Invalid(format!(
                "key element is not an object: {s:?}"
            ))),
        },
        b'i' => parse_go_atoi(body)
            .map(PathElement::Index)
            .ok_or_else(|| PathElementError::Invalid(format!("invalid index: {s:?}"))),
        _ => Err(PathElementError::UnknownType),
    }
}

/// Go `strconv.Atoi`: optional sign, then decimal digits only.
fn parse_go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The canonical serialized form (`SerializePathElement`).
pub fn serialize_path_element(pe: &PathElement) -> String {
    let mut out = String::new();
    write_path_element(pe, &mut out);
    out
}

pub(crate) fn write_path_element(pe: &PathElement, out: &mut String) {
    match pe {
        PathElement::Field(name) => {
            out.push_str("f:");
            out.push_str(name);
        }
        PathElement::Key(fields) => {
            out.push_str("k:{");
            for (i, (n, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(out, n, JsonStyle::COMPACT);
                out.push(':');
                write_json(out, v, JsonStyle::COMPACT);
            }
            out.push('}');
        }
        PathElement::Value(v) => {
            out.push_str("v:");
            write_json(out, v, JsonStyle::COMPACT);
        }
        PathElement::Index(i) => {
            out.push_str("i:");
            out.push_str(&i.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::path::path_text;

    #[test]
    fn human_paths_read_back_in_their_object() {
        let node = crate::yaml::parse::parse_one(
            "metadata:\n  labels:\n    app.kubernetes.io/name: web\n    app: x\nspec:\n  containers:\n  - name: side\n  - name: web\n    image: a:1\n    args: [x, y]\n",
        )
        .unwrap();
        assert_eq!(
            field_path(&node, ".spec.containers[name=\"web\"].image")
                .map(|p| path_text(&p))
                .as_deref(),
            Some("spec.containers[1].image")
        );
        assert_eq!(
            field_path(&node, ".metadata.labels.app.kubernetes.io/name")
                .map(|p| path_text(&p))
                .as_deref(),
            Some("metadata.labels[\"app.kubernetes.io/name\"]")
        );
        assert_eq!(
            field_path(&node, ".spec.containers[1].args[=\"y\"]")
                .map(|p| path_text(&p))
                .as_deref(),
            Some("spec.containers[1].args[1]")
        );
        assert_eq!(field_path(&node, ".spec.nothing"), None);
    }

    #[test]
    fn order_of_kinds() {
        let f = PathElement::field("z");
        let k = PathElement::key(vec![("name".into(), Node::str("a"))]);
        let v = PathElement::Value(Node::Int(1));
        let i = PathElement::Index(0);
        assert!(f < k && k < v && v < i);
        assert!(PathElement::field("a") < PathElement::field("b"));
    }

    #[test]
    fn round_trip_and_human_form() {
        let pe = parse_path_element(r#"k:{"protocol":"TCP","port":443}"#).unwrap();
        assert_eq!(
            serialize_path_element(&pe),
            r#"k:{"port":443,"protocol":"TCP"}"#
        );
        assert_eq!(pe.to_string(), r#"[port=443,protocol="TCP"]"#);
        let pe = parse_path_element("v:1.0").unwrap();
        assert_eq!(serialize_path_element(&pe), "v:1");
        assert_eq!(
            parse_path_element("r:x"),
            Err(PathElementError::UnknownType)
        );
        assert!(parse_path_element("i: 0").is_err());
        assert!(parse_path_element("x").is_err());
        let path = vec![
            PathElement::field("spec"),
            PathElement::field("containers"),
            PathElement::key(vec![("name".into(), Node::str("web"))]),
            PathElement::field("image"),
        ];
        assert_eq!(path_string(&path), r#".spec.containers[name="web"].image"#);
    }
}
