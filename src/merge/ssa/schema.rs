//! The typed schema server-side apply walks (`smd:schema/elements.go`): named types whose atoms
//! are a scalar, a list (atomic, or associative with or without keys) and/or a map (struct
//! fields, element type, atomic or granular). Read from smd's schema YAML (the conformance
//! form), built in code, or built from ply's schema module by `from_schema` (the rules:
//! `x-kubernetes-list-type` map/set/atomic → [`Relationship`] and `keys`,
//! `x-kubernetes-list-map-keys` → `keys`, legacy `patch-strategy: merge` + merge key → an
//! associative list keyed by that key, `x-kubernetes-map-type` → map relationship, a `$ref`
//! with a map type → a [`TypeRef`] carrying `relationship`, property `default` → field default).

use std::collections::HashMap;

use crate::yaml::Node;

/// The name of smd's "anything, granular maps, atomic lists" type (`DeducedParseableType`).
pub(crate) const UNTYPED_DEDUCED: &str = "__untyped_deduced_";
/// The name of smd's "anything, all atomic" type (RawExtension).
pub(crate) const UNTYPED_ATOMIC: &str = "__untyped_atomic_";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Numeric,
    String,
    Boolean,
    Untyped,
    /// A scalar kind smd does not know: values of it fail validation, other operations treat
    /// them as any scalar.
    Unknown,
}

/// `elementRelationship`. For maps, `Separable` and `Associative` both mean granular; for lists,
/// `Separable` (or nothing) is not usable for granular access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Relationship {
    #[default]
    Unspecified,
    Atomic,
    Associative,
    Separable,
}

impl Relationship {
    fn parse(s: &str) -> Result<Relationship, String> {
        match s {
            "" => Ok(Relationship::Unspecified),
            "atomic" => Ok(Relationship::Atomic),
            "associative" => Ok(Relationship::Associative),
            "separable" => Ok(Relationship::Separable),
            other => Err(format!("unknown elementRelationship {other:?}")),
        }
    }
}

/// A reference to a type: by name, or inline; a reference may override the relationship of
/// the map (or list) it names (`x-kubernetes-map-type` next to a `$ref`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeRef {
    pub named: Option<String>,
    pub inline: Box<Atom>,
    pub relationship: Option<Relationship>,
}

impl TypeRef {
    pub fn named(name: impl Into<String>) -> TypeRef {
        TypeRef {
            named: Some(name.into()),
            ..TypeRef::default()
        }
    }

    pub fn inline(atom: Atom) -> TypeRef {
        TypeRef {
            inline: Box::new(atom),
            ..TypeRef::default()
        }
    }

    pub fn scalar(s: Scalar) -> TypeRef {
        TypeRef::inline(Atom {
            scalar: Some(s),
            ..Atom::default()
        })
    }

    /// No type at all (`TypeRef{}`): e.g. a struct without an element type.
    pub fn is_empty(&self) -> bool {
        self.named.is_none() && self.inline.is_empty() && self.relationship.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Atom {
    pub scalar: Option<Scalar>,
    pub list: Option<ListType>,
    pub map: Option<MapType>,
}

impl Atom {
    pub fn is_empty(&self) -> bool {
        self.scalar.is_none() && self.list.is_none() && self.map.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListType {
    pub element_type: TypeRef,
    pub relationship: Relationship,
    /// Key fields of an associative list (empty: a set of scalars).
    pub keys: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StructField {
    pub name: String,
    pub type_ref: TypeRef,
    /// Only used to complete list-map keys (`getAssociativeKeyDefault`).
    pub default: Option<Node>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapType {
    fields: Vec<StructField>,
    index: HashMap<String, usize>,
    pub element_type: TypeRef,
    pub relationship: Relationship,
}

impl MapType {
    pub fn new(
        fields: Vec<StructField>,
        element_type: TypeRef,
        relationship: Relationship,
    ) -> MapType {
        let index = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), i))
            .collect();
        MapType {
            fields,
            index,
            element_type,
            relationship,
        }
    }

    pub fn fields(&self) -> &[StructField] {
        &self.fields
    }

    pub fn find_field(&self, name: &str) -> Option<&StructField> {
        self.index.get(name).and_then(|i| self.fields.get(*i))
    }

    /// The type of the value under `key`: its struct field's, else the element type.
    pub fn field_type(&self, key: &str) -> &TypeRef {
        self.find_field(key)
            .map_or(&self.element_type, |f| &f.type_ref)
    }
}

/// A resolved atom with the reference's relationship override applied.
#[derive(Clone, Copy, Debug)]
pub struct AtomView<'a> {
    pub scalar: Option<Scalar>,
    pub list: Option<ListView<'a>>,
    pub map: Option<MapView<'a>>,
}

#[derive(Clone, Copy, Debug)]
pub struct ListView<'a> {
    pub element_type: &'a TypeRef,
    pub relationship: Relationship,
    pub keys: &'a [String],
}

impl ListView<'_> {
    pub fn is_atomic(&self) -> bool {
        self.relationship == Relationship::Atomic
    }
}

#[derive(Clone, Copy, Debug)]
pub struct MapView<'a> {
    pub def: &'a MapType,
    pub relationship: Relationship,
}

impl<'a> MapView<'a> {
    pub fn is_atomic(&self) -> bool {
        self.relationship == Relationship::Atomic
    }
    pub fn find_field(&self, name: &str) -> Option<&'a StructField> {
        self.def.find_field(name)
    }
    pub fn field_type(&self, key: &str) -> &'a TypeRef {
        self.def.field_type(key)
    }
}

/// Which kind of an atom applies to a value (`deduceAtom` then `handleAtom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Scalar,
    List,
    Map,
    Invalid,
}

impl<'a> AtomView<'a> {
    /// The kind `handleAtom` picks for the whole atom: map, then scalar, then list.
    fn default_kind(&self) -> Kind {
        if self.map.is_some() {
            Kind::Map
        } else if self.scalar.is_some() {
            Kind::Scalar
        } else if self.list.is_some() {
            Kind::List
        } else {
            Kind::Invalid
        }
    }

    /// `deduceAtom` + `handleAtom`: the kind matching the value when the atom has it, else the
    /// atom's default kind. Absent and null values take the default kind.
    pub fn kind_for(&self, v: Option<&Node>) -> Kind {
        match v {
            Some(Node::Bool(_) | Node::Int(_) | Node::Float(_) | Node::Str(_))
                if self.scalar.is_some() =>
            {
                Kind::Scalar
            }
            Some(Node::Seq(_)) if self.list.is_some() => Kind::List,
            Some(Node::Map(_)) if self.map.is_some() => Kind::Map,
            _ => self.default_kind(),
        }
    }
}

/// A set of named types.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    types: Vec<(String, Atom)>,
    index: HashMap<String, usize>,
}

impl Schema {
    pub fn new() -> Schema {
        Schema::default()
    }

    /// Adds (or replaces) a named type.
    pub fn add_type(&mut self, name: impl Into<String>, atom: Atom) {
        let name = name.into();
        if let Some(i) = self.index.get(&name) {
            if let Some(slot) = self.types.get_mut(*i) {
                slot.1 = atom;
            }
        } else {
            self.index.insert(name.clone(), self.types.len());
            self.types.push((name, atom));
        }
    }

    pub fn find_type(&self, name: &str) -> Option<&Atom> {
        self.index
            .get(name)
            .and_then(|i| self.types.get(*i))
            .map(|(_, a)| a)
    }

    /// Adds smd's two untyped types (`__untyped_atomic_`, `__untyped_deduced_`).
    pub fn add_untyped_types(&mut self) {
        let atomic = TypeRef::named(UNTYPED_ATOMIC);
        self.add_type(
            UNTYPED_ATOMIC,
            Atom {
                scalar: Some(Scalar::Untyped),
                list: Some(ListType {
                    element_type: atomic.clone(),
                    relationship: Relationship::Atomic,
                    keys: Vec::new(),
                }),
                map: Some(MapType::new(
                    Vec::new(),
                    atomic.clone(),
                    Relationship::Atomic,
                )),
            },
        );
        self.add_type(
            UNTYPED_DEDUCED,
            Atom {
                scalar: Some(Scalar::Untyped),
                list: Some(ListType {
                    element_type: atomic,
                    relationship: Relationship::Atomic,
                    keys: Vec::new(),
                }),
                map: Some(MapType::new(
                    Vec::new(),
                    TypeRef::named(UNTYPED_DEDUCED),
                    Relationship::Separable,
                )),
            },
        );
    }

    /// The schema used when nothing is known about a kind: root [`UNTYPED_DEDUCED`].
    pub fn deduced() -> Schema {
        let mut s = Schema::new();
        s.add_untyped_types();
        s
    }

    /// `Schema.Resolve`: the atom a reference names, with its relationship override applied.
    pub fn resolve<'a>(&'a self, tr: &'a TypeRef) -> Option<AtomView<'a>> {
        let atom = match &tr.named {
            Some(n) => self.find_type(n)?,
            None => &tr.inline,
        };
        let mut view = AtomView {
            scalar: atom.scalar,
            list: atom.list.as_ref().map(|l| ListView {
                element_type: &l.element_type,
                relationship: l.relationship,
                keys: &l.keys,
            }),
            map: atom.map.as_ref().map(|m| MapView {
                def: m,
                relationship: m.relationship,
            }),
        };
        if let Some(rel) = tr.relationship {
            if let Some(m) = view.map.as_mut() {
                m.relationship = rel;
            } else if let Some(l) = view.list.as_mut() {
                l.relationship = rel;
            } else {
                return None;
            }
        }
        Some(view)
    }

    /// Reads smd's schema language (`types: [{name, scalar|list|map}]`), the form of the
    /// conformance data.
    pub fn from_node(node: &Node) -> Result<Schema, String> {
        let types = node
            .get("types")
            .and_then(Node::as_seq)
            .ok_or("schema: `types` must be a list")?;
        let mut s = Schema::new();
        for t in types {
            let name = t
                .str_at(&["name"])
                .ok_or("schema: every type needs a `name`")?;
            s.add_type(name, atom_from_node(t)?);
        }
        Ok(s)
    }
}

fn atom_from_node(n: &Node) -> Result<Atom, String> {
    let scalar = match n.get("scalar") {
        None | Some(Node::Null) => None,
        Some(Node::Str(s)) => Some(match s.as_str() {
            "numeric" => Scalar::Numeric,
            "string" => Scalar::String,
            "boolean" => Scalar::Boolean,
            "untyped" => Scalar::Untyped,
            _ => Scalar::Unknown,
        }),
        Some(other) => {
            return Err(format!(
                "schema: scalar must be a string, not {}",
                other.kind_name()
            ));
        }
    };
    let list = match n.get("list") {
        None | Some(Node::Null) => None,
        Some(l) => Some(ListType {
            element_type: type_ref_opt(l.get("elementType"))?,
            relationship: relationship_of(l)?,
            keys: match l.get("keys") {
                None | Some(Node::Null) => Vec::new(),
                Some(Node::Seq(items)) => items
                    .iter()
                    .map(|k| {
                        k.as_str()
                            .map(str::to_string)
                            .ok_or("schema: list keys must be strings")
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("schema: list keys must be a list".into()),
            },
        }),
    };
    let map = match n.get("map") {
        None | Some(Node::Null) => None,
        Some(m) => {
            let mut fields = Vec::new();
            if let Some(fs) = m.get("fields").and_then(Node::as_seq) {
                for f in fs {
                    let name = f
                        .str_at(&["name"])
                        .ok_or("schema: every field needs a `name`")?;
                    fields.push(StructField {
                        name: name.to_string(),
                        type_ref: type_ref_opt(f.get("type"))?,
                        default: f.get("default").cloned(),
                    });
                }
            }
            Some(MapType::new(
                fields,
                type_ref_opt(m.get("elementType"))?,
                relationship_of(m)?,
            ))
        }
    };
    Ok(Atom { scalar, list, map })
}

fn relationship_of(n: &Node) -> Result<Relationship, String> {
    match n.get("elementRelationship") {
        None | Some(Node::Null) => Ok(Relationship::Unspecified),
        Some(Node::Str(s)) => Relationship::parse(s),
        Some(_) => Err("schema: elementRelationship must be a string".into()),
    }
}

fn type_ref_opt(n: Option<&Node>) -> Result<TypeRef, String> {
    match n {
        None | Some(Node::Null) => Ok(TypeRef::default()),
        Some(n) => Ok(TypeRef {
            named: n.str_at(&["namedType"]).map(str::to_string),
            inline: Box::new(atom_from_node(n)?),
            relationship: match n.get("elementRelationship") {
                None | Some(Node::Null) => None,
                Some(_) => Some(relationship_of(n)?),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    #[test]
    fn reads_smd_schema_yaml() {
        let node = parse_one(
            "types:\n- name: t\n  map:\n    fields:\n    - name: list\n      type:\n        list:\n          elementType:\n            scalar: string\n          elementRelationship: associative\n    - name: m\n      type:\n        namedType: m\n        elementRelationship: atomic\n- name: m\n  map:\n    elementType:\n      scalar: string\n",
        )
        .unwrap();
        let s = Schema::from_node(&node).unwrap();
        let root = TypeRef::named("t");
        let atom = s.resolve(&root).unwrap();
        let map = atom.map.unwrap();
        let list_tr = map.field_type("list");
        let list = s.resolve(list_tr).unwrap().list.unwrap();
        assert_eq!(list.relationship, Relationship::Associative);
        let m = s.resolve(map.field_type("m")).unwrap().map.unwrap();
        assert!(
            m.is_atomic(),
            "the reference's relationship overrides the named map's"
        );
        assert!(
            !s.resolve(&TypeRef::named("m"))
                .unwrap()
                .map
                .unwrap()
                .is_atomic()
        );
    }

    #[test]
    fn deduced_kinds() {
        let s = Schema::deduced();
        let tr = TypeRef::named(UNTYPED_DEDUCED);
        let a = s.resolve(&tr).unwrap();
        assert_eq!(a.kind_for(Some(&Node::Int(1))), Kind::Scalar);
        assert_eq!(a.kind_for(Some(&Node::Seq(vec![]))), Kind::List);
        assert_eq!(a.kind_for(None), Kind::Map);
        assert!(a.list.unwrap().is_atomic());
        assert!(!a.map.unwrap().is_atomic());
    }
}
