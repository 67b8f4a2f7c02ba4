//! Builds the SSA schema from OpenAPI / JSON-Schema definitions (the Kubernetes built-in
//! definitions ply's schema module reads, or a CRD's `openAPIV3Schema`), following
//! `openapi:pkg/schemaconv` as summarised in the spec (§2.1): list types and map keys, legacy
//! patch merge keys, map types, defaults, int-or-string and free-form objects.

use super::schema::{
    Atom, ListType, MapType, Relationship, Scalar, Schema, StructField, TypeRef, UNTYPED_ATOMIC,
    UNTYPED_DEDUCED,
};
use crate::yaml::Node;

/// Converts every definition of `defs` (a map: definition name → schema) into a named type
/// of the same name, plus smd's untyped types.
pub fn schema_from_definitions(defs: &Node) -> Result<Schema, String> {
    let m = defs.as_map().ok_or("definitions must be a map")?;
    let mut schema = Schema::new();
    schema.add_untyped_types();
    for (name, def) in m {
        let tr = if name.ends_with("pkg.runtime.RawExtension") {
            // An embedded object of any kind: one atomic value (spec §2.1).
            TypeRef::named(UNTYPED_ATOMIC)
        } else {
            convert(def, false)
        };
        let atom = match tr.named.as_deref() {
            Some(n) => schema.find_type(n).cloned().unwrap_or_default(),
            None => *tr.inline,
        };
        schema.add_type(name.clone(), atom);
    }
    Ok(schema)
}

/// The root type of `apiVersion`/`kind` among `defs`, found by `x-kubernetes-group-version-kind`.
pub fn root_for_kind(defs: &Node, api_version: &str, kind: &str) -> Option<TypeRef> {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    defs.as_map()?.iter().find_map(|(name, def)| {
        let gvks = def.get("x-kubernetes-group-version-kind")?.as_seq()?;
        gvks.iter()
            .any(|g| {
                g.str_at(&["group"]).unwrap_or("") == group
                    && g.str_at(&["version"]) == Some(version)
                    && g.str_at(&["kind"]) == Some(kind)
            })
            .then(|| TypeRef::named(name.clone()))
    })
}

fn ref_name(r: &str) -> &str {
    r.rsplit('/').next().unwrap_or(r)
}

/// The non-null entries of `type` (a string or a list such as `["object", "null"]`).
fn types_of(s: &Node) -> Vec<&str> {
    match s.get("type") {
        Some(Node::Str(t)) => vec![t.as_str()],
        Some(Node::Seq(ts)) => ts
            .iter()
            .filter_map(Node::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    }
}

fn map_relationship(s: &Node) -> Option<Relationship> {
    match s.str_at(&["x-kubernetes-map-type"]) {
        Some("atomic") => Some(Relationship::Atomic),
        Some("granular") => Some(Relationship::Separable),
        _ => None,
    }
}

/// One schema → a type reference (`makeOpenAPIRef`): named for a `$ref` (or OpenAPI v3's
/// `allOf: [{$ref}]`), carrying `x-kubernetes-map-type` as a relationship override; inline
/// otherwise. `preserve` is inherited `x-kubernetes-preserve-unknown-fields`.
fn convert(s: &Node, preserve: bool) -> TypeRef {
    let reference = s
        .str_at(&["$ref"])
        .or_else(|| match s.get("allOf").and_then(Node::as_seq) {
            Some(items) if items.len() == 1 => items.first().and_then(|i| i.str_at(&["$ref"])),
            _ => None,
        });
    if let Some(r) = reference {
        let mut tr = TypeRef::named(ref_name(r));
        tr.relationship = map_relationship(s);
        return tr;
    }
    TypeRef::inline(parse_schema(s, preserve))
}

/// `parseSchema`: the atom of an inline schema by its (first non-null) `type`.
fn parse_schema(s: &Node, preserve: bool) -> Atom {
    let preserve =
        preserve || s.get("x-kubernetes-preserve-unknown-fields") == Some(&Node::Bool(true));
    let types = types_of(s);
    match types.first().copied() {
        // No type (int-or-string, free-form, `oneOf`): whichever kind the value has.
        None => Atom {
            scalar: Some(Scalar::Untyped),
            list: Some(parse_list(s, preserve)),
            map: Some(parse_object(s, preserve)),
        },
        Some("object") => Atom {
            map: Some(parse_object(s, preserve)),
            ..Atom::default()
        },
        Some("array") => Atom {
            list: Some(parse_list(s, preserve)),
            ..Atom::default()
        },
        Some(t) => {
            let scalar = match t {
                "integer" | "number" => Scalar::Numeric,
                "boolean" => Scalar::Boolean,
                "string" => match s.str_at(&["format"]) {
                    None | Some("" | "byte") => Scalar::String,
                    Some(_) => Scalar::Untyped,
                },
                _ => Scalar::Untyped,
            };
            Atom {
                scalar: Some(scalar),
                ..Atom::default()
            }
        }
    }
}

/// `parseObject`: struct fields with their defaults, the element type of other keys
/// (`additionalProperties`, or deduced for free-form and preserve-unknown-fields objects) and
/// `x-kubernetes-map-type`.
fn parse_object(s: &Node, preserve: bool) -> MapType {
    let props = s.get("properties").and_then(Node::as_map);
    let mut fields = Vec::new();
    if let Some(p) = props {
        for (name, ps) in p {
            fields.push(StructField {
                name: name.clone(),
                type_ref: convert(ps, preserve),
                default: ps.get("default").cloned(),
            });
        }
    }
    let element_type = match s.get("additionalProperties") {
        None | Some(Node::Null) => {
            if preserve || props.is_none_or(|p| p.is_empty()) {
                TypeRef::named(UNTYPED_DEDUCED)
            } else {
                TypeRef::default()
            }
        }
        Some(a @ Node::Map(_)) => convert(a, preserve),
        Some(Node::Bool(true)) => TypeRef::named(UNTYPED_DEDUCED),
        Some(_) => TypeRef::default(),
    };
    MapType::new(
        fields,
        element_type,
        map_relationship(s).unwrap_or_default(),
    )
}

/// `parseList` with `getListElementRelationship`: `x-kubernetes-list-type` (map keys, set,
/// atomic), else the legacy patch strategy `merge` with its merge key, else atomic.
fn parse_list(s: &Node, preserve: bool) -> ListType {
    let element_type = match s.get("items") {
        Some(i @ Node::Map(_)) => convert(i, preserve),
        Some(_) => TypeRef::named(UNTYPED_DEDUCED),
        None => TypeRef::named(UNTYPED_ATOMIC),
    };
    let (relationship, keys) = match s.get("x-kubernetes-list-type") {
        Some(Node::Str(t)) if t == "map" => (
            Relationship::Associative,
            s.get("x-kubernetes-list-map-keys")
                .and_then(Node::as_seq)
                .map(|ks| {
                    ks.iter()
                        .filter_map(Node::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        ),
        Some(Node::Str(t)) if t == "set" => (Relationship::Associative, Vec::new()),
        Some(_) => (Relationship::Atomic, Vec::new()),
        None => match s.str_at(&["x-kubernetes-patch-strategy"]) {
            Some("merge" | "merge,retainKeys") => (
                Relationship::Associative,
                s.str_at(&["x-kubernetes-patch-merge-key"])
                    .map(|k| vec![k.to_string()])
                    .unwrap_or_default(),
            ),
            _ => (Relationship::Atomic, Vec::new()),
        },
    };
    ListType {
        element_type,
        relationship,
        keys,
    }
}

/// Kubernetes defaults every `protocol` field of a port to `TCP`; definitions that lost their
/// `default` (as the 1.37 JSON-Schema export did) still need it to complete list-map keys such
/// as `(port, protocol)`. Adds it to every struct that is the element of a list keyed by
/// `protocol` and lacks a default.
pub fn add_protocol_defaults(schema: &mut Schema, defs: &Node) {
    let Some(m) = defs.as_map() else { return };
    let mut targets: Vec<String> = Vec::new();
    let mut visit = |s: &Node| {
        if s.str_at(&["x-kubernetes-list-type"]) == Some("map")
            && s.get("x-kubernetes-list-map-keys")
                .and_then(Node::as_seq)
                .is_some_and(|ks| ks.iter().any(|k| k.as_str() == Some("protocol")))
            && let Some(r) = s.get_path(&["items", "$ref"]).and_then(Node::as_str)
        {
            targets.push(ref_name(r).to_string());
        }
    };
    for def in m.values() {
        if let Some(props) = def.get("properties").and_then(Node::as_map) {
            for p in props.values() {
                visit(p);
            }
        }
    }
    for name in targets {
        let Some(atom) = schema.find_type(&name).cloned() else {
            continue;
        };
        let Some(map) = atom.map.clone() else {
            continue;
        };
        let fields: Vec<StructField> = map
            .fields()
            .iter()
            .map(|f| {
                let mut f = f.clone();
                if f.name == "protocol" && f.default.is_none() {
                    f.default = Some(Node::str("TCP"));
                }
                f
            })
            .collect();
        let new_map = MapType::new(fields, map.element_type.clone(), map.relationship);
        schema.add_type(
            name,
            Atom {
                map: Some(new_map),
                ..atom
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::ssa::Typed;
    use crate::yaml::parse::parse_one;

    const DEFS: &str = r##"
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
      items: {$ref: "#/$defs/port"}
      x-kubernetes-list-type: map
      x-kubernetes-list-map-keys: [port, protocol]
    containers:
      type: array
      items: {type: object, properties: {name: {type: string}, image: {type: string}}}
      x-kubernetes-patch-strategy: merge
      x-kubernetes-patch-merge-key: name
    args: {type: array, items: {type: string}}
    targetPort: {$ref: "#/$defs/intstr"}
port:
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
        let defs = parse_one(DEFS).unwrap();
        let mut schema = schema_from_definitions(&defs).unwrap();
        add_protocol_defaults(&mut schema, &defs);
        let root = root_for_kind(&defs, "v1", "Service").unwrap();
        assert_eq!(root, TypeRef::named("svc"));
        let t = Typed::new(&schema, &root);
        let obj = parse_one(
            "metadata: {name: s, labels: {a: b}, finalizers: [x]}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n  containers: [{name: c, image: i}]\n  args: [a]\n  targetPort: 8080\n",
        )
        .unwrap();
        let set = t.to_field_set(&obj).unwrap();
        assert!(
            crate::merge::ssa::server::reset_fields_for(&schema, &root).is_none(),
            "no status field"
        );
        assert_eq!(
            set.to_fields_v1(),
            r#"{"f:metadata":{"f:finalizers":{"v:\"x\"":{}},"f:labels":{"f:a":{}},"f:name":{}},"f:spec":{"f:args":{},"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}},"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:selector":{},"f:targetPort":{}}}"#
        );
    }
}
