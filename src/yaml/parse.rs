//! YAML/JSON text → [`Node`] documents. The only file in ply that names the YAML crate
//! (`serde_yaml`), so that it can be swapped here alone. Records the byte offset at which each
//! document starts so that diagnostics can point into the file.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};

use super::{Map, Node};

/// One document of a multi-document stream.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedDoc {
    /// Byte offset of the document's first line in the text (after any `---` marker line).
    pub offset: usize,
    pub node: Node,
}

/// A syntax error, with its byte offset in the text when the parser knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub offset: Option<usize>,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

impl From<serde_yaml::Error> for ParseError {
    fn from(e: serde_yaml::Error) -> Self {
        let offset = e.location().map(|l| l.index());
        // serde_yaml appends " at line L column C" to its messages; the diagnostic shows the
        // position itself, so keep the message short.
        let mut message = e.to_string();
        if let Some(i) = message.find(" at line ") {
            message.truncate(i);
        }
        ParseError { message, offset }
    }
}

/// Parses every document of a YAML (or JSON) stream. Empty documents (nothing, or only
/// comments, between markers) come back as `Node::Null`; callers that want them skipped skip
/// them.
pub fn parse_documents(text: &str) -> Result<Vec<ParsedDoc>, ParseError> {
    let starts = document_starts(text);
    let mut docs = Vec::new();
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let node = Node::deserialize(de).map_err(ParseError::from)?;
        let offset = starts.get(i).copied().unwrap_or(0);
        docs.push(ParsedDoc { offset, node });
    }
    Ok(docs)
}

/// Parses text that must hold exactly one document (a patch, a kustomization); an empty text is
/// `Node::Null`.
pub fn parse_one(text: &str) -> Result<Node, ParseError> {
    let mut docs = parse_documents(text)?;
    match docs.len() {
        0 => Ok(Node::Null),
        1 => Ok(docs.remove(0).node),
        n => Err(ParseError {
            message: format!("expected one YAML document, found {n}"),
            offset: docs.get(1).map(|d| d.offset),
        }),
    }
}

/// Byte offsets where each document's content begins, in the order the YAML parser yields
/// documents: a stream not opening with `---` has its first document at 0; every `---` marker
/// line opens a new one. A `---` at column 0 cannot be content of a block scalar nested in a
/// mapping, so this line scan agrees with the parser for Kubernetes manifests.
fn document_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut pos = 0;
    let mut seen_content = false;
    let mut pending_first = true;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let is_marker = bare == "---"
            || bare.starts_with("--- ")
            || bare.starts_with("---\t")
            || bare.starts_with("--- #");
        if is_marker {
            if pending_first && seen_content {
                starts.push(0);
            }
            pending_first = false;
            let after = pos + line.len();
            // `--- value` puts content on the marker line itself.
            starts.push(if bare.len() > 3 { pos } else { after });
        } else if !bare.trim().is_empty() && !bare.trim_start().starts_with('#') && bare != "..." {
            seen_content = true;
        }
        pos += line.len();
    }
    if pending_first && seen_content {
        starts.push(0);
    }
    starts
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        i128::try_from(v)
            .map(Node::Int)
            .map_err(|_| E::custom("integer too large"))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Node, A::Error> {
        let mut map = Map::with_capacity(access.size_hint().unwrap_or(0));
        while let Some(key) = access.next_key::<Node>()? {
            let key = match key {
                Node::Str(s) => s,
                Node::Seq(_) | Node::Map(_) => {
                    return Err(de::Error::custom("a mapping key must be a scalar"));
                }
                other => other.scalar_text().unwrap_or_default(),
            };
            let value = access.next_value::<Node>()?;
            if map.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "mapping key \"{key}\" already defined"
                )));
            }
            map.insert(key, value);
        }
        Ok(Node::Map(map))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
        // serde_yaml reports a value with a custom tag (`!Foo value`) as an enum. Kubernetes
        // manifests carry no custom tags; kustomize (go-yaml) keeps the value and drops the
        // tag on its JSON round trip, and so does ply.
        use de::VariantAccess;
        let (_tag, variant): (String, _) = data.variant()?;
        variant.newtype_variant::<Node>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(text: &str) -> Vec<(usize, Node)> {
        parse_documents(text)
            .unwrap()
            .into_iter()
            .map(|d| (d.offset, d.node))
            .collect()
    }

    #[test]
    fn scalars_keep_their_kind() {
        let docs = nodes("a: 1\nb: \"1\"\nc: true\nd: 'yes'\ne: ~\nf: 1.5\ng: 0x10\n");
        let m = docs[0].1.as_map().unwrap();
        assert_eq!(m["a"], Node::Int(1));
        assert_eq!(m["b"], Node::str("1"));
        assert_eq!(m["c"], Node::Bool(true));
        assert_eq!(m["d"], Node::str("yes"));
        assert_eq!(m["e"], Node::Null);
        assert_eq!(m["f"], Node::Float(1.5));
        assert_eq!(m["g"], Node::Int(16));
        let keys: Vec<_> = m.keys().cloned().collect();
        assert_eq!(keys, ["a", "b", "c", "d", "e", "f", "g"]);
    }

    #[test]
    fn multi_document_offsets() {
        let text = "a: 1\n---\nb: 2\n---\n# only a comment\n---\nc: 3\n";
        let docs = nodes(text);
        assert_eq!(docs.len(), 4);
        assert_eq!(docs[0].0, 0);
        assert_eq!(&text[docs[1].0..docs[1].0 + 4], "b: 2");
        assert!(docs[2].1.is_null());
        assert_eq!(&text[docs[3].0..docs[3].0 + 4], "c: 3");
    }

    #[test]
    fn leading_marker() {
        let text = "---\na: 1\n---\nb: 2\n";
        let docs = nodes(text);
        assert_eq!(docs.len(), 2);
        assert_eq!(&text[docs[0].0..docs[0].0 + 4], "a: 1");
        assert_eq!(&text[docs[1].0..docs[1].0 + 4], "b: 2");
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let err = parse_documents("a: 1\na: 2\n").unwrap_err();
        assert!(err.message.contains("already defined"), "{}", err.message);
    }

    #[test]
    fn big_integers_stay_integers() {
        let docs = nodes("a: 123456789012345678901234567890\n");
        assert_eq!(
            docs[0].1.get("a"),
            Some(&Node::Int(123456789012345678901234567890))
        );
    }

    #[test]
    fn json_input() {
        let docs = nodes("{\"a\": [1, \"x\", null]}");
        assert_eq!(
            docs[0].1.get("a"),
            Some(&Node::Seq(vec![Node::Int(1), Node::str("x"), Node::Null]))
        );
    }
}
