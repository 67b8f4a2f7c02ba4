//! Builds the typed schema server-side apply walks (`crate::merge::ssa::Schema`) for one kind
//! from ply's OpenAPI-derived schema (`crate::schema`), following kube-openapi's conversion
//! (`pkg/schemaconv/smd.go`): `x-kubernetes-list-type` map/set/atomic, legacy
//! `patch-strategy: merge` lists keyed by their merge key (or sets without one), other lists
//! atomic; `x-kubernetes-map-type`; unknown shapes untyped. Only the types reachable from the
//! kind's root are converted. Owns no apply logic.

use std::collections::HashSet;

use crate::merge::ssa::schema::{
    Atom, ListType, MapType, Relationship, Scalar, StructField, UNTYPED_DEDUCED,
};
use crate::merge::ssa::{Schema as SsaSchema, TypeRef};
use crate::resource::Gvk;
use crate::schema::{
    ListType as OaListType, MapType as OaMapType, PatchMeta, Schema, Shape, TypeId,
};
use crate::yaml::Node;

/// Defaults of list-map key fields, which the API server uses to complete the keys of applied
/// items (`getAssociativeKeyDefault` in structured-merge-diff): `protocol` of container and
/// Service ports (`+default="TCP"` in `k8s.io/api/core/v1/types.go`). The OpenAPI table ply
/// embeds carries no defaults, so they are listed here.
const KEY_DEFAULTS: [(&str, &str, &str); 2] = [
    ("core.v1.ContainerPort", "protocol", "TCP"),
    ("core.v1.ServicePort", "protocol", "TCP"),
];

/// A typed schema for one kind and the reference to its root type; `None` when the schema does
/// not know the kind (the caller then uses smd's deduced schema, as the API server does for
/// kinds without a structural schema).
pub fn for_kind(schema: &Schema, gvk: &Gvk) -> Option<(SsaSchema, TypeRef, bool)> {
    let kind = schema.kind(gvk)?;
    let mut out = SsaSchema::deduced();
    let mut done = HashSet::new();
    let mut todo = vec![kind.root];
    while let Some(id) = todo.pop() {
        if !done.insert(id) {
            continue;
        }
        let Some(def) = schema.type_def(id) else {
            continue;
        };
        let mut names: Vec<&String> = def.fields.keys().collect();
        names.sort();
        let mut fields: Vec<StructField> = names
            .into_iter()
            .filter_map(|name| {
                let f = def.fields.get(name)?;
                Some(StructField {
                    name: name.clone(),
                    type_ref: shape_ref(&f.shape, &f.meta, &mut todo),
                    default: None,
                })
            })
            .collect();
        for (type_suffix, field, value) in KEY_DEFAULTS {
            if def.name.ends_with(type_suffix) && !fields.iter().any(|f| f.name == field) {
                fields.push(StructField {
                    name: field.to_string(),
                    type_ref: TypeRef::scalar(Scalar::String),
                    default: Some(Node::str(value)),
                });
            }
        }
        let relationship = match def.map_type {
            Some(OaMapType::Atomic) => Relationship::Atomic,
            _ => Relationship::Separable,
        };
        out.add_type(
            type_name(id),
            Atom {
                scalar: None,
                list: None,
                map: Some(MapType::new(
                    fields,
                    TypeRef::named(UNTYPED_DEDUCED),
                    relationship,
                )),
            },
        );
    }
    let has_status = schema
        .type_def(kind.root)
        .is_some_and(|d| d.fields.contains_key("status"));
    Some((out, TypeRef::named(type_name(kind.root)), has_status))
}

fn type_name(id: TypeId) -> String {
    format!("ply.{id:?}")
}

fn shape_ref(shape: &Shape, meta: &PatchMeta, todo: &mut Vec<TypeId>) -> TypeRef {
    match shape {
        Shape::Any => TypeRef::named(UNTYPED_DEDUCED),
        Shape::Scalar => TypeRef::scalar(Scalar::Untyped),
        Shape::Object(id) => {
            todo.push(*id);
            let mut r = TypeRef::named(type_name(*id));
            if meta.map_type == Some(OaMapType::Atomic) {
                r.relationship = Some(Relationship::Atomic);
            }
            r
        }
        Shape::List(inner) => {
            let element = shape_ref(inner, &PatchMeta::default(), todo);
            let (relationship, keys) = match meta.list_type {
                Some(OaListType::Atomic) => (Relationship::Atomic, Vec::new()),
                Some(OaListType::Set) => (Relationship::Associative, Vec::new()),
                Some(OaListType::Map) => (Relationship::Associative, meta.list_map_keys.clone()),
                None if meta.strategy.merge => match &meta.merge_key {
                    Some(k) => (Relationship::Associative, vec![k.clone()]),
                    None => (Relationship::Associative, Vec::new()),
                },
                None => (Relationship::Atomic, Vec::new()),
            };
            TypeRef::inline(Atom {
                scalar: None,
                list: Some(ListType {
                    element_type: element,
                    relationship,
                    keys,
                }),
                map: None,
            })
        }
        Shape::Map(inner) => {
            let element = shape_ref(inner, &PatchMeta::default(), todo);
            let relationship = match meta.map_type {
                Some(OaMapType::Atomic) => Relationship::Atomic,
                _ => Relationship::Separable,
            };
            TypeRef::inline(Atom {
                scalar: None,
                list: None,
                map: Some(MapType::new(Vec::new(), element, relationship)),
            })
        }
    }
}
