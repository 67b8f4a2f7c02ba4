//! Custom kinds for the [`Schema`]: OpenAPI v2 documents (`definitions` with `$ref`s and
//! `x-kubernetes-group-version-kind`, as kustomize's `openapi:` field and `kubectl`'s
//! discovery document hold them; JSON Schema `$defs` and OpenAPI v3 `components.schemas` are
//! read the same way), kustomize `crds:` files (a bare map of such definitions), and
//! CustomResourceDefinition objects. Reads `Node`s only; the caller reads the files.

use crate::fasthash::FastMap;
use std::fmt;

use super::{
    Field, KindInfo, ListType, MapType, PatchMeta, Schema, Shape, Strategy, TypeDef, TypeId,
};
use crate::resource::Gvk;
use crate::yaml::{Map, Node};

/// A schema document that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SchemaError {}

fn err(message: impl Into<String>) -> SchemaError {
    SchemaError {
        message: message.into(),
    }
}

/// `$ref` chains deeper than this (or cycles among non-object definitions) read as `Any`.
const MAX_DEPTH: usize = 64;

struct Builder<'d> {
    defs: &'d Map,
    ids: FastMap<&'d str, TypeId>,
    /// Named types the schema held before the document (kustomize keeps one global set of
    /// definitions: a `$ref` the document does not define resolves to them).
    existing: FastMap<String, TypeId>,
    /// Whether those win over the document's definitions of the same name.
    existing_wins: bool,
}

/// Which definitions win when a document redefines a name the schema already holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Precedence {
    /// The document's definition replaces the existing one (also where other types refer to
    /// it), and its kinds replace existing kinds.
    Document,
    /// The existing definition and kinds stay; the document adds only what is new.
    Existing,
}

pub(super) fn add_document(schema: &mut Schema, doc: &Node) -> Result<(), SchemaError> {
    add_document_with(schema, doc, Precedence::Document)
}

pub(super) fn add_document_with(
    schema: &mut Schema,
    doc: &Node,
    precedence: Precedence,
) -> Result<(), SchemaError> {
    let defs = doc
        .get("definitions")
        .or_else(|| doc.get("$defs"))
        .or_else(|| doc.get_path(&["components", "schemas"]));
    let defs = match defs {
        Some(Node::Map(m)) => m,
        Some(other) => {
            return Err(err(format!(
                "the OpenAPI document's definitions are a {}, not a map",
                other.kind_name()
            )));
        }
        None => {
            if doc.get("kind").and_then(Node::as_str) == Some("CustomResourceDefinition") {
                return add_crd(schema, doc);
            }
            match doc {
                // kustomize's `crds:` files: a bare map of definitions, each either a schema or
                // an `{Schema: …, Dependencies: …}` pair (k8s.io/kube-openapi's
                // `OpenAPIDefinition`, as kustomize's examples write them).
                Node::Map(m) if m.values().any(|v| v.get("Schema").is_some()) => {
                    return add_document_with(schema, &unwrapped(m), precedence);
                }
                Node::Map(m) if m.values().any(|v| v.get("properties").is_some()) => m,
                _ => {
                    return Err(err(
                        "not an OpenAPI document: no `definitions` (OpenAPI v2), `$defs` or `components.schemas`",
                    ));
                }
            }
        }
    };
    let scopes = scopes_from_paths(doc);
    let existing: FastMap<String, TypeId> = schema
        .types
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.name.is_empty())
        .filter_map(|(i, t)| Some((t.name.clone(), TypeId(u32::try_from(i).ok()?))))
        .collect();
    let existing_wins = precedence == Precedence::Existing;
    let mut b = Builder {
        defs,
        ids: FastMap::default(),
        existing,
        existing_wins,
    };
    // Definitions the document fills: new names, and (when the document wins) names it
    // redefines, whose existing type is refilled in place so that every type referring to it
    // sees the document's definition, as kustomize's by-name `$ref` resolution does.
    let mut to_fill: Vec<(&Node, TypeId)> = Vec::new();
    for (name, def) in defs {
        if !has_properties(def) {
            continue;
        }
        let id = match b.existing.get(name) {
            Some(&id) => {
                if !existing_wins {
                    to_fill.push((def, id));
                }
                id
            }
            None => {
                let id = schema.push_type(TypeDef {
                    name: name.clone(),
                    ..TypeDef::default()
                });
                to_fill.push((def, id));
                id
            }
        };
        b.ids.insert(name.as_str(), id);
    }
    for (def, id) in to_fill {
        b.fill(schema, id, def);
    }
    add_kinds(schema, defs, &b.ids, &scopes, existing_wins);
    Ok(())
}

/// kustomize's `crds:` definitions with each `{Schema: …, Dependencies: …}` pair replaced by
/// its schema, as an OpenAPI v2 document.
fn unwrapped(m: &Map) -> Node {
    let unwrapped: Map = m
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.get("Schema").cloned().unwrap_or_else(|| v.clone()),
            )
        })
        .collect();
    Node::Map(Map::from_iter([(
        "definitions".to_string(),
        Node::Map(unwrapped),
    )]))
}

/// The kinds the definitions name (`x-kubernetes-group-version-kind`), each rooted at its
/// definition's type, with the scope the document's paths give.
fn add_kinds(
    schema: &mut Schema,
    defs: &Map,
    ids: &FastMap<&str, TypeId>,
    scopes: &FastMap<Gvk, bool>,
    existing_wins: bool,
) {
    for (name, def) in defs {
        let Some(&id) = ids.get(name.as_str()) else {
            continue;
        };
        for gvk in gvks(def) {
            let scope = scopes.get(&gvk).copied();
            match schema.kinds.get(&gvk).copied() {
                Some(_) if existing_wins => {}
                // A scope the document's paths do not state keeps the one already known
                // (kustomize's `findNamespaceability` only adds missing entries, except that a
                // namespaced path always marks the kind namespaced).
                Some(old) => {
                    let namespaced = match scope {
                        Some(true) => Some(true),
                        _ => old.namespaced.or(scope),
                    };
                    schema.kinds.insert(
                        gvk,
                        KindInfo {
                            root: id,
                            namespaced,
                            kustomize_unknown: false,
                        },
                    );
                }
                None => {
                    schema.kinds.insert(
                        gvk,
                        KindInfo {
                            root: id,
                            namespaced: scope,
                            kustomize_unknown: false,
                        },
                    );
                }
            }
        }
    }
}

pub(super) fn add_crd(schema: &mut Schema, crd: &Node) -> Result<(), SchemaError> {
    let spec = crd
        .get("spec")
        .ok_or_else(|| err("the CustomResourceDefinition has no spec"))?;
    let group = spec.str_at(&["group"]).unwrap_or_default();
    let kind = spec
        .str_at(&["names", "kind"])
        .ok_or_else(|| err("the CustomResourceDefinition has no spec.names.kind"))?;
    let namespaced = spec.str_at(&["scope"]).map(|s| s != "Cluster");
    let empty = Map::default();
    let mut b = Builder {
        defs: &empty,
        ids: FastMap::default(),
        existing: FastMap::default(),
        existing_wins: false,
    };
    let mut versions: Vec<(String, Option<&Node>)> = Vec::new();
    if let Some(Node::Seq(vs)) = spec.get("versions") {
        for v in vs {
            if let Some(name) = v.str_at(&["name"]) {
                let s = v
                    .get_path(&["schema", "openAPIV3Schema"])
                    .or_else(|| spec.get_path(&["validation", "openAPIV3Schema"]));
                versions.push((name.to_string(), s));
            }
        }
    } else if let Some(v) = spec.str_at(&["version"]) {
        versions.push((
            v.to_string(),
            spec.get_path(&["validation", "openAPIV3Schema"]),
        ));
    }
    for (version, s) in versions {
        let id = schema.push_type(TypeDef {
            name: format!("{group}/{version}.{kind}"),
            ..TypeDef::default()
        });
        if let Some(s) = s {
            b.fill(schema, id, s);
        }
        schema.kinds.insert(
            Gvk {
                group: group.to_string(),
                version,
                kind: kind.to_string(),
            },
            KindInfo {
                root: id,
                namespaced,
                kustomize_unknown: false,
            },
        );
    }
    Ok(())
}

fn has_properties(def: &Node) -> bool {
    matches!(def.get("properties"), Some(Node::Map(m)) if !m.is_empty())
}

fn gvks(def: &Node) -> Vec<Gvk> {
    let mut out = Vec::new();
    if let Some(Node::Seq(items)) = def.get("x-kubernetes-group-version-kind") {
        for g in items {
            let (Some(version), Some(kind)) = (g.str_at(&["version"]), g.str_at(&["kind"])) else {
                continue;
            };
            out.push(Gvk {
                group: g.str_at(&["group"]).unwrap_or_default().to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
            });
        }
    }
    out
}

/// Namespaced when some path of the kind has a `{namespace}` parameter: kustomize derives a
/// kind's scope from the document's paths the same way (`kyaml/openapi/openapi.go`).
fn scopes_from_paths(doc: &Node) -> FastMap<Gvk, bool> {
    let mut out: FastMap<Gvk, bool> = FastMap::default();
    let Some(Node::Map(paths)) = doc.get("paths") else {
        return out;
    };
    for (path, ops) in paths {
        let Node::Map(ops) = ops else { continue };
        let namespaced = path.contains("{namespace}");
        for op in ops.values() {
            let Some(g) = op.get("x-kubernetes-group-version-kind") else {
                continue;
            };
            let (Some(version), Some(kind)) = (g.str_at(&["version"]), g.str_at(&["kind"])) else {
                continue;
            };
            let gvk = Gvk {
                group: g.str_at(&["group"]).unwrap_or_default().to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
            };
            let e = out.entry(gvk).or_insert(false);
            *e |= namespaced;
        }
    }
    out
}

fn meta_of(s: &Node) -> PatchMeta {
    let text = |k: &str| s.get(k).and_then(Node::as_str);
    PatchMeta {
        strategy: text("x-kubernetes-patch-strategy")
            .map(Strategy::parse)
            .unwrap_or_default(),
        merge_key: text("x-kubernetes-patch-merge-key").map(str::to_string),
        list_type: text("x-kubernetes-list-type").and_then(ListType::parse),
        list_map_keys: match s.get("x-kubernetes-list-map-keys") {
            Some(Node::Seq(v)) => v
                .iter()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        },
        map_type: text("x-kubernetes-map-type").and_then(MapType::parse),
    }
}

fn types_of(s: &Node) -> Vec<&str> {
    match s.get("type") {
        Some(Node::Str(t)) => vec![t.as_str()],
        Some(Node::Seq(ts)) => ts.iter().filter_map(Node::as_str).collect(),
        _ => Vec::new(),
    }
}

impl<'d> Builder<'d> {
    /// Fills the fields of type `id` from the object schema `s`.
    fn fill(&mut self, schema: &mut Schema, id: TypeId, s: &Node) {
        let map_type = s
            .get("x-kubernetes-map-type")
            .and_then(Node::as_str)
            .and_then(MapType::parse);
        let mut fields = FastMap::default();
        if let Some(Node::Map(props)) = s.get("properties") {
            for (name, p) in props {
                let shape = self.shape(schema, p, 0);
                fields.insert(
                    name.clone(),
                    Field {
                        shape,
                        meta: meta_of(p),
                        kustomize_replaces: false,
                    },
                );
            }
        }
        if let Some(t) = schema.types.get_mut(id.0 as usize) {
            t.set_fields(fields);
            t.map_type = map_type;
        }
    }

    fn shape(&mut self, schema: &mut Schema, s: &Node, depth: usize) -> Shape {
        if depth > MAX_DEPTH {
            return Shape::Any;
        }
        if let Some(r) = s.get("$ref").and_then(Node::as_str) {
            // `#/definitions/NAME` (or `$defs`, `components/schemas`) names NAME; kustomize's
            // `crds:` files refer by the full definition name, which holds slashes itself
            // (`github.com/example/pkg/apis/v1.BeeSpec`): that name when it is defined.
            let last = r.rsplit('/').next().unwrap_or(r);
            let name = if !r.starts_with('#') && self.defs.contains_key(r) {
                r
            } else {
                last
            };
            if let Some(&id) = self.ids.get(name) {
                return Shape::Object(id);
            }
            if self.existing_wins {
                if let Some(&id) = self.existing.get(name) {
                    return Shape::Object(id);
                }
            }
            if let Some(def) = self.defs.get(name) {
                return self.shape(schema, def, depth + 1);
            }
            // A name the document does not define resolves among the definitions the schema
            // already holds (kustomize adds documents into one global schema and resolves
            // `$ref`s in it: `kyaml/openapi.AddDefinitions` and `Resolve`).
            return match self.existing.get(name) {
                Some(&id) => Shape::Object(id),
                None => Shape::Any,
            };
        }
        let flag = |k: &str| matches!(s.get(k), Some(Node::Bool(true)));
        if flag("x-kubernetes-preserve-unknown-fields") || flag("x-kubernetes-int-or-string") {
            return Shape::Any;
        }
        if let Some(Node::Seq(all)) = s.get("allOf") {
            if let [only] = all.as_slice() {
                return self.shape(schema, only, depth + 1);
            }
        }
        if s.get("allOf").is_some() || s.get("oneOf").is_some() || s.get("anyOf").is_some() {
            return Shape::Any;
        }
        let types = types_of(s);
        if types.contains(&"array") {
            return match s.get("items") {
                Some(items @ Node::Map(_)) => {
                    Shape::List(Box::new(self.shape(schema, items, depth + 1)))
                }
                _ => Shape::List(Box::new(Shape::Any)),
            };
        }
        if types.is_empty() || types.contains(&"object") {
            if has_properties(s) {
                let id = schema.push_type(TypeDef::default());
                self.fill(schema, id, s);
                return Shape::Object(id);
            }
            if let Some(ap @ Node::Map(_)) = s.get("additionalProperties") {
                return Shape::Map(Box::new(self.shape(schema, ap, depth + 1)));
            }
            return Shape::Any;
        }
        Shape::Scalar
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    #[test]
    fn openapi_v2_with_refs() {
        let doc = parse_one(
            r##"{"definitions": {
  "item": {"properties": {
     "list": {"type": "array", "items": {"$ref": "#/definitions/item"},
              "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"},
     "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"}},
   "x-kubernetes-group-version-kind": [{"group": "x.dev", "version": "v1", "kind": "Item"}]}},
 "paths": {"/apis/x.dev/v1/namespaces/{namespace}/items": {"get": {"x-kubernetes-group-version-kind": {"group": "x.dev", "version": "v1", "kind": "Item"}}}}}"##,
        )
        .expect("parses");
        let mut s = Schema::empty();
        s.add_openapi(&doc).expect("ok");
        let g = Gvk::from_api_version("x.dev/v1", "Item");
        let m = s.meta_at(&g, &["list", "list", "tags"]).expect("known");
        assert!(m.strategy.merge);
        assert_eq!(
            s.meta_at(&g, &["list"]).and_then(|m| m.merge_key),
            Some("name".into())
        );
        assert_eq!(s.is_namespaced(&g), Some(true));
    }

    #[test]
    fn kustomize_crds_file() {
        let doc = parse_one(
            r#"{"example.com/v1.Bee": {"Schema": {"properties": {"spec": {"properties": {"hives": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}, "x-kubernetes-patch-merge-key": "id", "x-kubernetes-patch-strategy": "merge"}}}}, "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Bee"}]}, "Dependencies": []}}"#,
        )
        .expect("parses");
        let mut s = Schema::empty();
        s.add_openapi(&doc).expect("ok");
        let g = Gvk::from_api_version("example.com/v1", "Bee");
        assert_eq!(
            s.meta_at(&g, &["spec", "hives"]).and_then(|m| m.merge_key),
            Some("id".into())
        );
    }

    #[test]
    fn kustomize_crds_file_with_full_name_refs() {
        let doc = parse_one(
            r#"{"github.com/example/pkg/apis/v1.Bee": {"Schema": {"properties": {"spec": {"$ref": "github.com/example/pkg/apis/v1.BeeSpec"}}, "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Bee"}]}, "Dependencies": ["github.com/example/pkg/apis/v1.BeeSpec"]},
 "github.com/example/pkg/apis/v1.BeeSpec": {"Schema": {"properties": {"hives": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"]}}}, "Dependencies": []}}"#,
        )
        .expect("parses");
        let mut s = Schema::empty();
        s.add_openapi(&doc).expect("ok");
        let g = Gvk::from_api_version("example.com/v1", "Bee");
        let m = s.meta_at(&g, &["spec", "hives"]).expect("known");
        assert_eq!(m.list_type, Some(ListType::Map));
        assert_eq!(m.list_map_keys, ["id"]);
    }

    #[test]
    fn crd() {
        let doc = parse_one(
            "kind: CustomResourceDefinition\nspec:\n  group: x.dev\n  scope: Cluster\n  names: {kind: Thing}\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              ports:\n                type: array\n                x-kubernetes-list-type: map\n                x-kubernetes-list-map-keys: [port]\n                items: {type: object, properties: {port: {type: integer}}}\n",
        )
        .expect("parses");
        let mut s = Schema::empty();
        s.add_crd(&doc).expect("ok");
        let g = Gvk::from_api_version("x.dev/v1", "Thing");
        assert_eq!(s.is_namespaced(&g), Some(false));
        let m = s.meta_at(&g, &["spec", "ports"]).expect("known");
        assert_eq!(m.list_type, Some(ListType::Map));
        assert_eq!(m.list_map_keys, ["port"]);
    }

    const RUNNER: &str = r##"{"definitions": {
  "dev.x.v1.Runner": {"properties": {"spec": {"$ref": "#/definitions/dev.x.v1.RunnerSpec"}},
    "x-kubernetes-group-version-kind": [{"group": "x.dev", "version": "v1", "kind": "Runner"}]},
  "dev.x.v1.RunnerSpec": {"properties": {"template": {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"}}}}}"##;

    /// Redefines the built-in PodSpec: `containers` without a merge key.
    const POD_SPEC: &str = r##"{"definitions": {"io.k8s.api.core.v1.PodSpec": {"properties": {
  "containers": {"type": "array", "items": {"type": "object"}}}}}}"##;

    const CONTAINERS: [&str; 4] = ["spec", "template", "spec", "containers"];

    fn merge_key(s: &Schema, api_version: &str, kind: &str) -> Option<String> {
        s.meta_at(&Gvk::from_api_version(api_version, kind), &CONTAINERS)
            .and_then(|m| m.merge_key)
    }

    #[test]
    fn refs_the_document_lacks_resolve_to_existing_types() {
        let doc = parse_one(RUNNER).expect("parses");
        let mut s = Schema::builtin();
        s.add_openapi(&doc).expect("ok");
        assert_eq!(merge_key(&s, "x.dev/v1", "Runner"), Some("name".into()));
        // Alone, the document cannot resolve the reference: the field is untyped.
        let alone = Schema::from_openapi(&doc).expect("ok");
        assert!(
            alone
                .kind(&Gvk::from_api_version("x.dev/v1", "Runner"))
                .is_some()
        );
        assert_eq!(merge_key(&alone, "x.dev/v1", "Runner"), None);
    }

    #[test]
    fn a_redefinition_replaces_the_existing_type_where_it_is_used() {
        let doc = parse_one(POD_SPEC).expect("parses");
        let mut s = Schema::builtin();
        assert_eq!(merge_key(&s, "apps/v1", "Deployment"), Some("name".into()));
        s.add_openapi(&doc).expect("ok");
        assert_eq!(merge_key(&s, "apps/v1", "Deployment"), None);
        assert!(
            s.meta_at(&Gvk::from_api_version("apps/v1", "Deployment"), &CONTAINERS)
                .is_some()
        );
    }

    #[test]
    fn beneath_existing_definitions_win() {
        let mut s = Schema::builtin();
        s.add_openapi_beneath(&parse_one(POD_SPEC).expect("parses"))
            .expect("ok");
        assert_eq!(merge_key(&s, "apps/v1", "Deployment"), Some("name".into()));
        // New names are still added, and resolve to the existing types.
        s.add_openapi_beneath(&parse_one(RUNNER).expect("parses"))
            .expect("ok");
        assert_eq!(merge_key(&s, "x.dev/v1", "Runner"), Some("name".into()));
    }

    #[test]
    fn beneath_existing_kinds_win() {
        let doc = parse_one(
            r##"{"definitions": {"my.Deployment": {"properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}},
  "x-kubernetes-group-version-kind": [{"group": "apps", "version": "v1", "kind": "Deployment"}]}}}"##,
        )
        .expect("parses");
        let mut beneath = Schema::builtin();
        beneath.add_openapi_beneath(&doc).expect("ok");
        assert_eq!(
            merge_key(&beneath, "apps/v1", "Deployment"),
            Some("name".into())
        );
        let mut over = Schema::builtin();
        over.add_openapi(&doc).expect("ok");
        assert_eq!(merge_key(&over, "apps/v1", "Deployment"), None);
        // The document states no scope: the built-in one stays.
        assert_eq!(
            over.is_namespaced(&Gvk::from_api_version("apps/v1", "Deployment")),
            Some(true)
        );
    }
}
