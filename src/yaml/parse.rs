//! YAML/JSON text → [`Node`] documents. The only file in ply that names the YAML crate
//! (`serde_yaml`), so that it can be swapped here alone. Records the byte offset at which each
//! document starts so that diagnostics can point into the file.
//!
//! Two readings of plain scalars: [`parse_documents`] / [`parse_one`] resolve them as kustomize
//! reads Kubernetes objects (kyaml, go-yaml v3: `y`, `yes`, `on` are strings);
//! [`parse_config_one`] / [`parse_config_documents`] as kustomize reads its own configuration
//! (the kustomization, `configurations:` and replacement files, JSON 6902 patches), which go
//! through sigs.k8s.io/yaml and go-yaml v2 with YAML 1.1 booleans.

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
        if message.starts_with("recursion limit exceeded") {
            message = super::limits::NESTING_MESSAGE.to_string();
        }
        ParseError { message, offset }
    }
}

/// Parses every document of a YAML (or JSON) stream. Empty documents (nothing, or only
/// comments, between markers) come back as `Node::Null`; callers that want them skipped skip
/// them.
pub fn parse_documents(text: &str) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_with(text, false)
}

/// [`parse_documents`] for kustomize's own configuration files: a plain, untagged `y`, `Y`,
/// `yes`, `Yes`, `YES`, `on`, `On`, `ON` is `true` and `n`, `N`, `no`, `No`, `NO`, `off`, `Off`,
/// `OFF` is `false`, as go-yaml v2 resolves them (its `resolve.go` table, YAML 1.1), which
/// sigs.k8s.io/yaml (`yaml.Unmarshal`, `yaml.YAMLToJSON`) uses. Such a key becomes `"true"` or
/// `"false"`, as sigs.k8s.io/yaml turns keys into strings.
pub fn parse_config_documents(text: &str) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_with(text, true)
}

/// [`parse_one`] with YAML 1.1 booleans (see [`parse_config_documents`]).
pub fn parse_config_one(text: &str) -> Result<Node, ParseError> {
    one_of(parse_config_documents(text)?)
}

fn parse_documents_with(text: &str, yaml11: bool) -> Result<Vec<ParsedDoc>, ParseError> {
    // A byte order mark opening the file or a document is not content (serde_yaml trips over
    // it; go-yaml and kustomize's reader skip it): `bom.rs`. Offsets stay offsets into the file.
    let stripped = super::bom::strip(text);
    let (text, removed) = match &stripped {
        Some((t, removed)) => (t.as_str(), removed.as_slice()),
        None => (text, &[][..]),
    };
    let shift = |o: usize| super::bom::original(removed, o);
    // Limits on hostile text (`limits.rs`): nesting checked before the parser sees it, alias
    // expansion charged as scalars are built.
    super::limits::check_nesting(text).map_err(|mut e| {
        e.offset = e.offset.map(shift);
        e
    })?;
    let expansion = super::limits::Expansion::for_text(text);
    let starts = document_starts(text);
    let mut docs = Vec::new();
    let seed = NodeSeed {
        text: Some(Text {
            text,
            yaml11,
            expansion: &expansion,
        }),
        tagged: false,
    };
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let node = de::DeserializeSeed::deserialize(seed, de).map_err(|e| {
            let mut e = ParseError::from(e);
            e.offset = e.offset.map(shift);
            e
        })?;
        let offset = shift(starts.get(i).copied().unwrap_or(0));
        docs.push(ParsedDoc { offset, node });
    }
    Ok(docs)
}

/// Parses text that must hold exactly one document (a patch, a kustomization); an empty text is
/// `Node::Null`.
pub fn parse_one(text: &str) -> Result<Node, ParseError> {
    one_of(parse_documents(text)?)
}

fn one_of(mut docs: Vec<ParsedDoc>) -> Result<Node, ParseError> {
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
/// line opens a new one (its content starts on the marker line when something other than a
/// comment follows the marker, else on the next line). `%` directive lines and `...` end
/// markers are not content. A `---` at column 0 cannot be content of a block scalar nested in a
/// mapping, so this line scan agrees with the parser for Kubernetes manifests.
fn document_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut pos = 0;
    let mut seen_content = false;
    let mut pending_first = true;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let rest = bare
            .strip_prefix("---")
            .filter(|r| r.is_empty() || r.starts_with([' ', '\t']));
        if let Some(rest) = rest {
            if pending_first && seen_content {
                starts.push(0);
            }
            pending_first = false;
            let rest = rest.trim_start();
            // `--- value` puts content on the marker line itself.
            starts.push(if rest.is_empty() || rest.starts_with('#') {
                pos + line.len()
            } else {
                pos
            });
        } else {
            let blank_or_comment = bare.trim().is_empty() || bare.trim_start().starts_with('#');
            let directive = bare.starts_with('%');
            let end_marker = bare.starts_with("...") && bare[3..].trim_start().is_empty();
            if !(blank_or_comment || directive || end_marker) {
                seen_content = true;
            }
        }
        pos += line.len();
    }
    if pending_first && seen_content {
        starts.push(0);
    }
    starts
}

impl<'de> Deserialize<'de> for Node {
    /// Deserializes without access to the source text: scalars are resolved as serde_yaml
    /// resolves them (YAML 1.2 core schema). [`parse_documents`] resolves plain scalars as
    /// kustomize does instead.
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor {
            text: None,
            tagged: false,
        })
    }
}

/// Where the text being parsed lives in memory, to tell plain scalars (which serde_yaml hands
/// out as slices of the input) from quoted ones.
#[derive(Clone, Copy)]
struct Text<'t> {
    text: &'t str,
    /// Plain `y`/`yes`/`on`/`n`/`no`/`off` (in their case forms) are booleans.
    yaml11: bool,
    /// Scalar bytes this parse may still build (aliases repeat them).
    expansion: &'t super::limits::Expansion,
}

/// Charges a scalar of `len` bytes to the parse's expansion budget.
fn charge<E: de::Error>(text: Option<Text<'_>>, len: usize) -> Result<(), E> {
    match text {
        Some(t) => t.expansion.charge(len).map_err(E::custom),
        None => Ok(()),
    }
}

impl Text<'_> {
    /// The byte offset of `s` in the text when `s` is a slice of it.
    fn offset_of(&self, s: &str) -> Option<usize> {
        let base = self.text.as_ptr() as usize;
        let p = s.as_ptr() as usize;
        (p >= base && p + s.len() <= base + self.text.len()).then(|| p - base)
    }

    /// Whether the scalar `s` (a slice of the text) was written plain and untagged. A quoted
    /// scalar's content is preceded by its quote; a tagged one by `!tag` and blanks.
    fn is_plain_untagged(&self, s: &str) -> bool {
        let Some(off) = self.offset_of(s) else {
            return false;
        };
        let before = &self.text.as_bytes()[..off];
        match before.last() {
            Some(b'"' | b'\'') => false,
            _ => {
                let trimmed = before
                    .iter()
                    .rposition(|c| !matches!(c, b' ' | b'\t'))
                    .map_or(&before[..0], |i| &before[..=i]);
                let token_start = trimmed
                    .iter()
                    .rposition(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b','))
                    .map_or(0, |i| i + 1);
                trimmed.get(token_start) != Some(&b'!') || trimmed.len() == before.len()
            }
        }
    }
}

/// Deserializes one node with access to the source text.
#[derive(Clone, Copy)]
struct NodeSeed<'t> {
    text: Option<Text<'t>>,
    tagged: bool,
}

impl<'de> de::DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Node;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor {
            text: self.text,
            tagged: self.tagged,
        })
    }
}

/// A mapping key: `<<` written plain is YAML's merge key.
enum Key {
    Merge,
    Node(Node),
}

#[derive(Clone, Copy)]
struct KeySeed<'t> {
    text: Option<Text<'t>>,
}

impl<'de> de::DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        let text = self.text;
        struct KeyVisitor<'t>(Option<Text<'t>>);
        impl<'de> Visitor<'de> for KeyVisitor<'_> {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key, E> {
                if v == "<<" && self.0.is_some_and(|t| t.is_plain_untagged(v)) {
                    return Ok(Key::Merge);
                }
                NodeVisitor {
                    text: self.0,
                    tagged: false,
                }
                .visit_borrowed_str(v)
                .map(Key::Node)
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(Key::Node(Node::Str(v.to_string())))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Key, E> {
                Ok(Key::Node(Node::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Key, E> {
                Ok(Key::Node(Node::Int(v.into())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Key, E> {
                Ok(Key::Node(Node::Int(v.into())))
            }
            fn visit_i128<E>(self, v: i128) -> Result<Key, E> {
                Ok(Key::Node(Node::Int(v)))
            }
            fn visit_u128<E>(self, v: u128) -> Result<Key, E> {
                Ok(Key::Node(u128_node(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Key, E> {
                Ok(Key::Node(Node::Float(v)))
            }
            fn visit_unit<E>(self) -> Result<Key, E> {
                Ok(Key::Node(Node::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Key, A::Error> {
                Err(de::Error::custom("a mapping key must be a scalar"))
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Key, A::Error> {
                Err(de::Error::custom("a mapping key must be a scalar"))
            }
            fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Key, A::Error> {
                NodeVisitor {
                    text: self.0,
                    tagged: false,
                }
                .visit_enum(data)
                .map(Key::Node)
            }
        }
        d.deserialize_any(KeyVisitor(text))
    }
}

/// The booleans of YAML 1.1 that YAML 1.2 (serde_yaml, go-yaml v3) reads as strings.
fn yaml11_bool(v: &str) -> Option<bool> {
    match v {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn u128_node(v: u128) -> Node {
    // Beyond i128 (39 digits) ply can no longer keep the integer; it becomes a float, as in
    // kustomize for anything beyond uint64.
    i128::try_from(v).map_or(Node::Float(v as f64), Node::Int)
}

struct NodeVisitor<'t> {
    text: Option<Text<'t>>,
    /// Inside a value with a custom tag (`!Foo 0777`): go-yaml v3 resolves no scalar under an
    /// unknown tag, so it stays the text as written.
    tagged: bool,
}

impl NodeVisitor<'_> {
    fn seed(&self) -> NodeSeed<'_> {
        NodeSeed {
            text: self.text,
            tagged: false,
        }
    }
}

impl<'de> Visitor<'de> for NodeVisitor<'_> {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            Node::Bool(v)
        })
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            Node::Int(v.into())
        })
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            Node::Int(v.into())
        })
    }
    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            Node::Int(v)
        })
    }
    fn visit_u128<E>(self, v: u128) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            u128_node(v)
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(super::emit::format_float(v))
        } else {
            Node::Float(v)
        })
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Node, E> {
        charge(self.text, v.len())?;
        if !self.tagged
            && let Some(text) = self.text
            && text.yaml11
            && let Some(b) = yaml11_bool(v)
            && text.is_plain_untagged(v)
        {
            return Ok(Node::Bool(b));
        }
        // A plain scalar serde_yaml left as a string may still be a number to go-yaml v3,
        // which kustomize reads with: `0777` (octal), `1_000`, `0X1F`, `08` (a float). Dates
        // stay strings (kustomize would turn them into timestamps: a deliberate difference).
        if !self.tagged
            && v.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
            && self.text.is_some_and(|t| t.is_plain_untagged(v))
            && !super::emit::is_timestamp(v)
            && let Some(n) = super::emit::resolve_number(v)
        {
            return Ok(n);
        }
        Ok(Node::Str(v.to_string()))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        charge(self.text, v.len())?;
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        charge(self.text, v.len())?;
        Ok(Node::Str(v))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(String::new())
        } else {
            Node::Null
        })
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        de::DeserializeSeed::deserialize(self.seed(), d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(self.seed())? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Node, A::Error> {
        let mut map = Map::with_capacity_and_hasher(
            access.size_hint().unwrap_or(0).min(1024),
            Default::default(),
        );
        let mut merges: Vec<Node> = Vec::new();
        while let Some(key) = access.next_key_seed(KeySeed { text: self.text })? {
            let key = match key {
                Key::Merge => {
                    merges.push(access.next_value_seed(self.seed())?);
                    continue;
                }
                Key::Node(Node::Str(s)) => s,
                // kustomize fails on non-string keys (its JSON step cannot encode them); ply
                // keeps them as their text.
                Key::Node(other) => other.scalar_text().unwrap_or_default(),
            };
            let value = access.next_value_seed(self.seed())?;
            if map.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "mapping key \"{key}\" already defined"
                )));
            }
            map.insert(key, value);
        }
        for merge in merges {
            apply_merge(&mut map, merge).map_err(de::Error::custom)?;
        }
        Ok(Node::Map(map))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
        // serde_yaml reports a value with a custom tag (`!Foo value`) as an enum. kustomize
        // (go-yaml v3) keeps the value, resolving no scalar under an unknown tag, and drops the
        // tag on its JSON round trip; so does ply.
        use de::VariantAccess;
        let (_tag, variant): (String, _) = data.variant()?;
        variant.newtype_variant_seed(NodeSeed {
            text: self.text,
            tagged: true,
        })
    }
}

/// YAML's merge key (`<<: *base` or `<<: [*a, *b]`), as go-yaml v3 applies it when kustomize
/// decodes a resource (`decode.go`, `decoder.merge`): keys written in the mapping itself win,
/// and among several merged maps the earlier one wins.
fn apply_merge(map: &mut Map, merge: Node) -> Result<(), String> {
    let sources = match merge {
        Node::Map(m) => vec![m],
        Node::Seq(items) => items
            .into_iter()
            .map(|i| match i {
                Node::Map(m) => Ok(m),
                _ => Err("map merge requires map or sequence of maps as the value".to_string()),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err("map merge requires map or sequence of maps as the value".into()),
    };
    for source in sources {
        for (k, v) in source {
            map.entry(k).or_insert(v);
        }
    }
    Ok(())
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
    fn document_offsets_match_the_parser() {
        let cases: &[(&str, &[usize])] = &[
            ("", &[0]),
            ("# c\n", &[0]),
            ("---\n", &[4]),
            ("a: 1\n---\n", &[0, 9]),
            ("a: 1\n...\n", &[0]),
            ("%YAML 1.2\n---\na: 1\n", &[14]),
            ("--- a\n", &[0]),
            ("--- # c\na: 1\n", &[8]),
            ("# lead\n---\na: 1\n", &[11]),
            ("a: 1\n---\n# only\n", &[0, 9]),
            ("a: 1\n...\n---\nb: 1\n...\n", &[0, 13]),
            ("--- |\n  x\n---\n", &[0, 14]),
            ("a: |\n  ---\n", &[0]),
        ];
        for (text, want) in cases {
            let got: Vec<usize> = parse_documents(text)
                .unwrap()
                .iter()
                .map(|d| d.offset)
                .collect();
            assert_eq!(&got, want, "{text:?}");
        }
    }

    #[test]
    fn syntax_errors_have_offsets() {
        let err = parse_documents("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(err.offset.is_some(), "{err:?}");
        let err = parse_documents("a: 1\n...\nb: 2\n").unwrap_err();
        assert_eq!(err.offset, Some(9));
    }

    #[test]
    fn plain_scalars_resolve_like_go_yaml_v3() {
        let docs = nodes(
            "a: 0777\nb: \"0777\"\nc: 1_000\nd: 0X1F\ne: 08\nf: '08'\ng: !!str 0777\nh: !Foo 12\n\
             i: 2024-01-01\nj: ._5\nk: yes\nl: [0777, '0777']\n",
        );
        let m = docs[0].1.as_map().unwrap();
        assert_eq!(m["a"], Node::Int(511));
        assert_eq!(m["b"], Node::str("0777"));
        assert_eq!(m["c"], Node::Int(1000));
        assert_eq!(m["d"], Node::Int(31));
        assert_eq!(m["e"], Node::Float(8.0));
        assert_eq!(m["f"], Node::str("08"));
        assert_eq!(m["g"], Node::str("0777"));
        assert_eq!(m["h"], Node::str("12"));
        assert_eq!(m["i"], Node::str("2024-01-01"));
        assert_eq!(m["j"], Node::str("._5"));
        assert_eq!(m["k"], Node::str("yes"));
        assert_eq!(m["l"], Node::Seq(vec![Node::Int(511), Node::str("0777")]));
    }

    #[test]
    fn config_files_read_yaml11_booleans() {
        let text = "a: y\nb: Yes\nc: OFF\nd: 'y'\ne: \"no\"\nf: !!str on\ng: [n, On]\nyes: 1\nh: yesno\ni: true\n";
        let m = parse_config_one(text).unwrap();
        assert_eq!(m.get("a"), Some(&Node::Bool(true)));
        assert_eq!(m.get("b"), Some(&Node::Bool(true)));
        assert_eq!(m.get("c"), Some(&Node::Bool(false)));
        assert_eq!(m.get("d"), Some(&Node::str("y")));
        assert_eq!(m.get("e"), Some(&Node::str("no")));
        assert_eq!(m.get("f"), Some(&Node::str("on")));
        assert_eq!(
            m.get("g"),
            Some(&Node::Seq(vec![Node::Bool(false), Node::Bool(true)]))
        );
        assert_eq!(m.get("true"), Some(&Node::Int(1)));
        assert_eq!(m.get("h"), Some(&Node::str("yesno")));
        assert_eq!(m.get("i"), Some(&Node::Bool(true)));
        // Resources keep YAML 1.2: the same text reads `y` as a string.
        let r = parse_one(text).unwrap();
        assert_eq!(r.get("a"), Some(&Node::str("y")));
        assert_eq!(r.get("yes"), Some(&Node::Int(1)));
    }

    #[test]
    fn merge_keys() {
        let docs = nodes(
            "b: &b {a: 1, b: 2}\nc: &c {b: 3, c: 4}\nm:\n  <<: *b\n  a: 9\nn:\n  a: 9\n  <<: [*c, *b]\nq:\n  \"<<\": 1\n",
        );
        let m = &docs[0].1;
        assert_eq!(m.get_path(&["m", "a"]), Some(&Node::Int(9)));
        assert_eq!(m.get_path(&["m", "b"]), Some(&Node::Int(2)));
        assert_eq!(m.get_path(&["n", "b"]), Some(&Node::Int(3)));
        assert_eq!(m.get_path(&["n", "c"]), Some(&Node::Int(4)));
        assert_eq!(m.get_path(&["q", "<<"]), Some(&Node::Int(1)));
        assert!(parse_documents("m:\n  <<: 1\n").is_err());
    }

    #[test]
    fn byte_order_mark_and_crlf() {
        let docs = nodes("\u{FEFF}a: 1\r\nb: |\r\n  x\r\n---\r\nc: 2\r\n");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].0, 3);
        assert_eq!(docs[0].1.get("b"), Some(&Node::str("x\n")));
        assert_eq!(docs[1].1.get("c"), Some(&Node::Int(2)));
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
