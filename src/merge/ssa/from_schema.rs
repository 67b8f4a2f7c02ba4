//! The one conversion from ply's schema (`crate::schema`: the generated built-in table plus
//! the CRDs and OpenAPI documents added to it) to the typed schema server-side apply walks
//! ([`super::Schema`]), for one kind, following kube-openapi's conversion
//! (`pkg/schemaconv/smd.go`, spec §2.1): `x-kubernetes-list-type` map/set/atomic, legacy
//! `patch-strategy: merge` lists keyed by their merge key (or sets without one), other lists
//! atomic; `x-kubernetes-map-type`; unknown shapes untyped. Only the types reachable from the
//! kind's root are converted. Struct fields the table leaves out (scalars) take the deduced
//! element type, which treats them as smd treats a declared scalar. Owns no apply logic.

use std::collections::HashSet;

use super::schema::{
    Atom, ListType, MapType, Relationship, Scalar, Schema as SsaSchema, StructField, TypeRef,
    UNTYPED_DEDUCED,
};
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

/// The typed schema of one kind.
#[derive(Clone, Debug)]
pub struct KindSchema {
    pub schema: SsaSchema,
    /// The kind's root type.
    pub root: TypeRef,
    /// Whether the kind declares `status` (whose fields the applier never owns).
    pub has_status: bool,
}

/// A typed schema for one kind and the reference to its root type; `None` when the schema does
/// not know the kind (the caller then uses smd's deduced schema, as the API server does for
/// kinds without a structural schema).
pub fn for_kind(schema: &Schema, gvk: &Gvk) -> Option<KindSchema> {
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
        let mut names: Vec<&String> = def.fields().keys().collect();
        names.sort();
        let mut fields: Vec<StructField> = names
            .into_iter()
            .filter_map(|name| {
                let f = def.fields().get(name)?;
                Some(StructField {
                    name: name.clone(),
                    type_ref: shape_ref(&f.shape, &f.meta, &mut todo),
                    default: None,
                })
            })
            .collect();
        for (type_suffix, field, value) in KEY_DEFAULTS {
            if !def.name.ends_with(type_suffix) {
                continue;
            }
            // The built-in table leaves scalar fields out; an OpenAPI document declares them.
            match fields.iter_mut().find(|f| f.name == field) {
                Some(f) => {
                    f.default.get_or_insert_with(|| Node::str(value));
                }
                None => fields.push(StructField {
                    name: field.to_string(),
                    type_ref: TypeRef::scalar(Scalar::String),
                    default: Some(Node::str(value)),
                }),
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
        .is_some_and(|d| d.fields().contains_key("status"));
    Some(KindSchema {
        schema: out,
        root: TypeRef::named(type_name(kind.root)),
        has_status,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::ssa::Typed;
    use crate::resource::Gvk;
    use crate::yaml::parse::parse_one;

    // The port type carries the name of Kubernetes' ServicePort, whose `protocol` defaults to TCP.
    const DEFS: &str = r##"
$defs:
 svc:
   type: object
   x-kubernetes-group-version-kind: [{group: "", version: v1, kind: Service}]
   properties:
     metadata: {$ref: "#/$defs/meta"}
     spec: {$ref: "#/$defs/spec"}
 meta:
   type: object
   properties:
     name: {type: string}
     labels: {type: object, additionalProperties: {type: string}}
     finalizers: {type: array, items: {type: string}, x-kubernetes-list-type: set}
 spec:
   type: object
   properties:
     selector: {type: [object, "null"], additionalProperties: {type: string}, x-kubernetes-map-type: atomic}
     ports:
       type: array
       items: {$ref: "#/$defs/io.k8s.api.core.v1.ServicePort"}
       x-kubernetes-list-type: map
       x-kubernetes-list-map-keys: [port, protocol]
     containers:
       type: array
       items: {type: object, properties: {name: {type: string}, image: {type: string}}}
       x-kubernetes-patch-strategy: merge
       x-kubernetes-patch-merge-key: name
     args: {type: array, items: {type: string}}
     targetPort: {$ref: "#/$defs/intstr"}
 io.k8s.api.core.v1.ServicePort:
   type: object
   properties:
     port: {type: integer}
     protocol: {type: string}
     name: {type: string}
 intstr:
   oneOf: [{type: string}, {type: integer}]
"##;

    #[test]
    fn builds_list_and_map_types_from_openapi() {
        let doc = parse_one(DEFS).unwrap();
        let ply_schema = crate::schema::Schema::from_openapi(&doc).unwrap();
        let gvk = Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "Service".into(),
        };
        let KindSchema {
            schema,
            root,
            has_status,
        } = for_kind(&ply_schema, &gvk).unwrap();
        let t = Typed::new(&schema, &root);
        let obj = parse_one(
            "metadata: {name: s, labels: {a: b}, finalizers: [x]}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n  containers: [{name: c, image: i}]\n  args: [a]\n  targetPort: 8080\n",
        )
        .unwrap();
        let set = t.to_field_set(&obj).unwrap();
        assert!(!has_status, "no status field");
        assert_eq!(
            set.to_fields_v1(),
            r#"{"f:metadata":{"f:finalizers":{"v:\"x\"":{}},"f:labels":{"f:a":{}},"f:name":{}},"f:spec":{"f:args":{},"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}},"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:selector":{},"f:targetPort":{}}}"#
        );
    }
}
