//! Typed decoding of a [`Node`]: a serde `Deserializer` over `&Node`, so that
//! [`from_node`] / [`from_node_strict`] turn a parsed document into a typed struct (the
//! kustomization, generator options, …). Errors carry the field path
//! (`patches[2].target.kind`). Knows nothing of kustomize's fields; must not parse text (that is
//! `parse.rs`).
//!
//! kustomize decodes its typed configs in two ways, and so does ply:
//! - [`from_node_strict`], for the kustomization (`Kustomization.Unmarshal` in
//!   `api/types/kustomization.go`: `yaml.YAMLToJSON`, then `encoding/json`): a boolean or a
//!   number where a string is wanted is an error (`json: cannot unmarshal bool into Go struct
//!   field … of type string`);
//! - [`from_node`], for plugin configurations and the files they name (sigs.k8s.io/yaml
//!   `yaml.Unmarshal`, whose `yamlToJSONTarget` knows the Go type): an integer or boolean read
//!   where a string is wanted yields its text (`version: 1` → `"1"`).
//!
//! In both, a float where a string is wanted is an error asking for quotes (its text is not what
//! was written: `1.20` reads as 1.2), and `null` where a list, map or struct is wanted is empty
//! (`resources: ~` is no resources).

use std::fmt;

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};

use super::path::PathSeg;
use super::{Map, Node};

/// A decoding failure: where (the path from the document root) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeError {
    /// Outermost first. For an unknown field, the path ends with that field's name.
    pub path: Vec<PathSeg>,
    pub message: String,
}

impl DeError {
    /// The path as written in messages: `patches[2].target.kind`; empty at the root.
    pub fn path_string(&self) -> String {
        let mut s = String::new();
        for seg in &self.path {
            match seg {
                PathSeg::Key(k) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(k);
                }
                PathSeg::Index(i) => {
                    s.push_str(&format!("[{i}]"));
                }
            }
        }
        s
    }

    fn prefixed(mut self, seg: PathSeg) -> DeError {
        self.path.insert(0, seg);
        self
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path_string();
        if p.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{p}: {}", self.message)
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            path: Vec::new(),
            message: msg.to_string(),
        }
    }
}

/// Decodes a typed value from a node as sigs.k8s.io/yaml's `yaml.Unmarshal` does: a boolean or
/// an integer where a string is wanted reads as its text. For plugin configurations.
pub fn from_node<T: DeserializeOwned>(node: &Node) -> Result<T, DeError> {
    T::deserialize(NodeDeserializer::new(node))
}

/// Decodes a typed value from a node as kustomize decodes the kustomization (JSON rules): a
/// boolean or a number where a string is wanted is an error.
pub(crate) fn from_node_strict<T: DeserializeOwned>(node: &Node) -> Result<T, DeError> {
    T::deserialize(NodeDeserializer::strict(node))
}

/// A serde `Deserializer` reading one `&Node`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeDeserializer<'a> {
    pub node: &'a Node,
    /// A boolean or a number where a string is wanted is an error (else it reads as its text).
    pub strict_strings: bool,
}

impl<'a> NodeDeserializer<'a> {
    /// The lenient reading ([`from_node`]).
    pub(crate) fn new(node: &'a Node) -> Self {
        NodeDeserializer {
            node,
            strict_strings: false,
        }
    }

    /// The strict reading ([`from_node_strict`]).
    pub(crate) fn strict(node: &'a Node) -> Self {
        NodeDeserializer {
            node,
            strict_strings: true,
        }
    }

    /// The same rules for a child node.
    fn child(&self, node: &'a Node) -> Self {
        NodeDeserializer {
            node,
            strict_strings: self.strict_strings,
        }
    }

    fn unexpected(&self) -> Unexpected<'a> {
        match self.node.unspelled() {
            Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
            Node::Null => Unexpected::Unit,
            Node::Bool(b) => Unexpected::Bool(*b),
            Node::Int(i) => match i64::try_from(*i) {
                Ok(v) => Unexpected::Signed(v),
                Err(_) => Unexpected::Other("a large integer"),
            },
            Node::Float(f) => Unexpected::Float(*f),
            Node::Str(s) => Unexpected::Str(s),
            Node::Seq(_) => Unexpected::Seq,
            Node::Map(_) => Unexpected::Map,
        }
    }

    fn invalid<V: Visitor<'a>>(&self, v: &V) -> DeError {
        de::Error::invalid_type(self.unexpected(), v)
    }

    fn visit_int<V: Visitor<'a>>(i: i128, visitor: V) -> Result<V::Value, DeError> {
        if let Ok(v) = i64::try_from(i) {
            visitor.visit_i64(v)
        } else if let Ok(v) = u64::try_from(i) {
            visitor.visit_u64(v)
        } else {
            visitor.visit_i128(i)
        }
    }
}

impl<'a> de::Deserializer<'a> for NodeDeserializer<'a> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node.unspelled() {
            Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
            Node::Null => visitor.visit_unit(),
            Node::Bool(b) => visitor.visit_bool(*b),
            Node::Int(i) => Self::visit_int(*i, visitor),
            Node::Float(f) => visitor.visit_f64(*f),
            Node::Str(s) => visitor.visit_borrowed_str(s),
            Node::Seq(items) => visitor.visit_seq(Items::new(items, self)),
            Node::Map(m) => visitor.visit_map(Entries::new(m, self)),
        }
    }

    fn deserialize_bool<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Bool(b) => visitor.visit_bool(*b),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_i8<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i16<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Int(i) => Self::visit_int(*i, visitor),
            _ => Err(self.invalid(&visitor)),
        }
    }
    fn deserialize_i128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Int(i) => visitor.visit_i128(*i),
            _ => Err(self.invalid(&visitor)),
        }
    }
    fn deserialize_u8<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u16<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_i64(visitor)
    }

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(visitor)
    }
    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Float(f) => visitor.visit_f64(*f),
            Node::Int(i) => Self::visit_int(*i, visitor),
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node.unspelled() {
            Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
            Node::Str(s) => visitor.visit_borrowed_str(s),
            // kustomize decodes the kustomization as JSON, which refuses them.
            Node::Bool(b) if self.strict_strings => Err(de::Error::custom(format!(
                "expected a string, found the boolean {b}; unquoted true/false, yes/no, y/n and \
                 on/off (in any case) are booleans in a kustomization; quote it to keep it as \
                 written"
            ))),
            Node::Int(i) if self.strict_strings => Err(de::Error::custom(format!(
                "expected a string, found the number {i}; quote it to keep it as written"
            ))),
            // A scalar where a string is wanted reads as its text.
            Node::Bool(_) | Node::Int(_) => match self.node.scalar_text() {
                Some(t) => visitor.visit_string(t),
                None => Err(self.invalid(&visitor)),
            },
            // Except a float: its text is not what was written (`1.20` reads as 1.2), so say
            // how to keep it.
            Node::Float(f) => Err(de::Error::custom(format!(
                "expected a string, found the number {}; quote it to keep it as written",
                crate::yaml::emit::format_float(*f)
            ))),
            // Go leaves a string field empty when the value is null.
            Node::Null => visitor.visit_borrowed_str(""),
            Node::Seq(_) | Node::Map(_) => Err(self.invalid(&visitor)),
        }
    }
    fn deserialize_string<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Str(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
            _ => Err(self.invalid(&visitor)),
        }
    }
    fn deserialize_byte_buf<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Null => visitor.visit_unit(),
            _ => Err(self.invalid(&visitor)),
        }
    }
    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }
    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Seq(items) => visitor.visit_seq(Items::new(items, self)),
            Node::Null => visitor.visit_seq(Items::new(&[], self)),
            _ => Err(self.invalid(&visitor)),
        }
    }
    fn deserialize_tuple<V: Visitor<'a>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Map(m) => visitor.visit_map(Entries::new(m, self)),
            Node::Null => visitor.visit_map(Entries::empty(self)),
            _ => Err(self.invalid(&visitor)),
        }
    }
    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.node {
            Node::Map(m) => visitor.visit_map(Entries::new(m, self).with_fields(fields)),
            _ => self.deserialize_map(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.node {
            Node::Str(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Node::Map(m) if m.len() == 1 => match m.iter().next() {
                Some((k, v)) => visitor
                    .visit_enum(Variant {
                        key: k,
                        value: self.child(v),
                    })
                    .map_err(|e| e.prefixed(PathSeg::Key(k.clone()))),
                None => Err(self.invalid(&visitor)),
            },
            _ => Err(self.invalid(&visitor)),
        }
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

/// Sequence access that records the index of a failing item.
struct Items<'a> {
    items: &'a [Node],
    next: usize,
    parent: NodeDeserializer<'a>,
}

impl<'a> Items<'a> {
    fn new(items: &'a [Node], parent: NodeDeserializer<'a>) -> Self {
        Items {
            items,
            next: 0,
            parent,
        }
    }
}

impl<'a> SeqAccess<'a> for Items<'a> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(item) = self.items.get(self.next) else {
            return Ok(None);
        };
        let i = self.next;
        self.next += 1;
        seed.deserialize(self.parent.child(item))
            .map(Some)
            .map_err(|e| e.prefixed(PathSeg::Index(i)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len().saturating_sub(self.next))
    }
}

/// Map access that records the key of a failing entry (and of an unknown field).
struct Entries<'a> {
    iter: Option<super::map::Iter<'a>>,
    value: Option<(&'a String, &'a Node)>,
    /// A struct's field names: a key matching one only when case is ignored reads as that
    /// field, as Go's `encoding/json` (which kustomize decodes with) matches names.
    fields: &'static [&'static str],
    parent: NodeDeserializer<'a>,
}

impl<'a> Entries<'a> {
    fn new(m: &'a Map, parent: NodeDeserializer<'a>) -> Self {
        Entries {
            iter: Some(m.iter()),
            value: None,
            fields: &[],
            parent,
        }
    }

    fn empty(parent: NodeDeserializer<'a>) -> Self {
        Entries {
            iter: None,
            value: None,
            fields: &[],
            parent,
        }
    }

    fn with_fields(mut self, fields: &'static [&'static str]) -> Self {
        self.fields = fields;
        self
    }

    /// The field a key names: itself, or the one field equal to it ignoring ASCII case.
    fn field_name<'k>(&self, key: &'k str) -> &'k str {
        if self.fields.is_empty() || self.fields.contains(&key) {
            return key;
        }
        self.fields
            .iter()
            .find(|f| f.eq_ignore_ascii_case(key))
            .copied()
            .unwrap_or(key)
    }
}

impl<'a> MapAccess<'a> for Entries<'a> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some((k, v)) = self.iter.as_mut().and_then(Iterator::next) else {
            return Ok(None);
        };
        self.value = Some((k, v));
        let key: StrDeserializer<'_, DeError> = self.field_name(k).into_deserializer();
        seed.deserialize(key)
            .map(Some)
            .map_err(|e| e.prefixed(PathSeg::Key(k.clone())))
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        match self.value.take() {
            Some((k, v)) => seed
                .deserialize(self.parent.child(v))
                .map_err(|e| e.prefixed(PathSeg::Key(k.clone()))),
            None => Err(de::Error::custom("value requested before key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.iter.as_ref().map(ExactSizeIterator::len)
    }
}

/// `{variant: value}` read as an enum.
struct Variant<'a> {
    key: &'a str,
    value: NodeDeserializer<'a>,
}

impl<'a> EnumAccess<'a> for Variant<'a> {
    type Error = DeError;
    type Variant = NodeDeserializer<'a>;

    fn variant_seed<S: DeserializeSeed<'a>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), DeError> {
        let key: StrDeserializer<'_, DeError> = self.key.into_deserializer();
        let v = seed.deserialize(key)?;
        Ok((v, self.value))
    }
}

impl<'a> VariantAccess<'a> for NodeDeserializer<'a> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        match self.node {
            Node::Null => Ok(()),
            _ => Err(de::Error::custom("expected no value for this variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'a>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_map(self, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;
    use indexmap::IndexMap;
    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    struct Target {
        kind: Option<String>,
        name: String,
    }

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    struct Patch {
        path: Option<String>,
        target: Option<Target>,
    }

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    struct Doc {
        resources: Vec<String>,
        labels: IndexMap<String, String>,
        patches: Vec<Patch>,
        count: i64,
        ratio: f64,
        flag: bool,
        node: Option<Node>,
        mode: Option<Mode>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Legacy,
        Fifo,
    }

    fn decode(text: &str) -> Result<Doc, DeError> {
        from_node(&parse_one(text).unwrap())
    }

    #[test]
    fn decodes_fields() {
        let d = decode(
            "resources: [a.yaml, b]\nlabels: {app: x}\ncount: 3\nratio: 2\nflag: true\nmode: fifo\nnode: {a: [1]}\n",
        )
        .unwrap();
        assert_eq!(d.resources, ["a.yaml", "b"]);
        assert_eq!(d.labels["app"], "x");
        assert_eq!(d.count, 3);
        assert!((d.ratio - 2.0).abs() < f64::EPSILON);
        assert!(d.flag);
        assert_eq!(d.mode, Some(Mode::Fifo));
        assert_eq!(
            d.node,
            Some(parse_one("a: [1]").unwrap()),
            "a Node field keeps the subtree"
        );
    }

    #[test]
    fn scalars_read_as_strings() {
        let d = decode("labels: {version: 1, on: true}\nresources: [7]\n").unwrap();
        assert_eq!(d.labels["version"], "1");
        assert_eq!(d.labels["on"], "true");
        assert_eq!(d.resources, ["7"]);
        let e = decode("labels: {v: 1.20}\n").unwrap_err();
        assert_eq!(e.path_string(), "labels.v");
        assert_eq!(
            e.message,
            "expected a string, found the number 1.2; quote it to keep it as written"
        );
    }

    #[test]
    fn strict_refuses_scalars_for_strings() {
        let strict =
            |t: &str| from_node_strict::<Doc>(&crate::yaml::parse::parse_config_one(t).unwrap());
        let e = strict("labels: {a: y}\n").unwrap_err();
        assert_eq!(e.path_string(), "labels.a");
        assert!(
            e.message
                .starts_with("expected a string, found the boolean true;"),
            "{e}"
        );
        let e = strict("patches:\n- target: {kind: 12}\n").unwrap_err();
        assert_eq!(e.path_string(), "patches[0].target.kind");
        assert_eq!(
            e.message,
            "expected a string, found the number 12; quote it to keep it as written"
        );
        let e = strict("resources: [off]\n").unwrap_err();
        assert_eq!(e.path_string(), "resources[0]");
        let d = strict("labels: {a: \"y\", b: '1'}\nflag: yes\nmode: legacy\n").unwrap();
        assert_eq!(d.labels["a"], "y");
        assert_eq!(d.labels["b"], "1");
        assert!(d.flag);
        // The lenient reading of the same YAML 1.1 boolean is its Go text.
        let d: Doc =
            from_node(&crate::yaml::parse::parse_config_one("labels: {a: y}\n").unwrap()).unwrap();
        assert_eq!(d.labels["a"], "true");
    }

    #[test]
    fn null_is_empty() {
        let d = decode("resources: ~\nlabels:\npatches: null\n").unwrap();
        assert!(d.resources.is_empty());
        assert!(d.labels.is_empty());
        assert!(d.patches.is_empty());
        assert_eq!(from_node::<Doc>(&Node::Null).unwrap(), Doc::default());
    }

    #[test]
    fn unknown_field_has_path() {
        let e = decode("patches:\n- path: a\n- path: b\n- target:\n    kinds: X\n").unwrap_err();
        assert_eq!(e.path_string(), "patches[2].target.kinds");
        assert!(
            e.message
                .starts_with("unknown field `kinds`, expected `kind` or `name`"),
            "{}",
            e.message
        );
        assert_eq!(
            e.to_string(),
            format!("patches[2].target.kinds: {}", e.message)
        );
    }

    #[test]
    fn wrong_type_has_path() {
        let e = decode("patches:\n- target:\n    kind: [a]\n").unwrap_err();
        assert_eq!(e.path_string(), "patches[0].target.kind");
        assert_eq!(e.message, "invalid type: sequence, expected a string");
        let e = decode("count: abc\n").unwrap_err();
        assert_eq!(e.path_string(), "count");
        assert_eq!(e.message, "invalid type: string \"abc\", expected i64");
        let e = decode("resources: {a: 1}\n").unwrap_err();
        assert_eq!(e.message, "invalid type: map, expected a sequence");
        let e = decode("flag: yes please\n").unwrap_err();
        assert_eq!(e.path_string(), "flag");
        let e = decode("mode: random\n").unwrap_err();
        assert!(e.message.starts_with("unknown variant `random`"), "{e}");
    }

    #[test]
    fn field_names_ignore_case_as_in_go() {
        let d = decode("Resources: [a]\nPATCHES:\n- target:\n    KIND: X\n").unwrap();
        assert_eq!(d.resources, ["a"]);
        assert_eq!(
            d.patches[0].target.as_ref().and_then(|t| t.kind.as_deref()),
            Some("X")
        );
        let e = decode("resourcez: [a]\n").unwrap_err();
        assert!(e.message.starts_with("unknown field `resourcez`"));
    }

    #[test]
    fn top_level_not_a_map() {
        let e = decode("- a\n").unwrap_err();
        assert!(e.path.is_empty());
        assert!(e.message.contains("expected struct Doc"), "{}", e.message);
    }
}
