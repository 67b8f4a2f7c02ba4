//! The engines `ply diff` runs with: adapters from the traits of `engine` to the schema, the
//! merge core and the server-side apply engine.

use std::collections::BTreeMap;

use crate::diag::{Error, ErrorKind};
use crate::resource::Gvk;
use crate::schema::{ListType, Schema};
use crate::yaml::Node;

use super::engine::{
    ClientSideApply, KindInfo, Manager, OwnershipConflict, ServerSideApply, SsaOutcome,
};
use crate::merge::ssa::{self, server};

/// The built-in schema (plus the custom kinds the user supplies), merge core and SSA engine.
#[derive(Debug)]
pub struct Builtin {
    /// Every kind ply knows: built-in ones and those of [`Builtin::add_custom_schema`]. Server-side
    /// apply types custom resources with it; kind scopes and list keys come from it.
    pub schema: Schema,
    /// The built-in kinds alone: the kinds kubectl has compiled-in patch metadata for.
    compiled_in: Schema,
}

impl Builtin {
    /// The built-in Kubernetes kinds.
    pub fn new() -> Builtin {
        let schema = Schema::builtin();
        Builtin {
            compiled_in: schema.clone(),
            schema,
        }
    }

    /// Adds custom kinds: a kustomization's `crds:` file (a map of OpenAPI definitions), an
    /// OpenAPI document, or a CustomResourceDefinition object. Server-side apply then merges
    /// their lists by the declared list types and keys; client-side apply still sends a JSON
    /// merge patch for them, as kubectl does for kinds it has no compiled-in types for.
    pub fn add_custom_schema(&mut self, doc: &Node) -> Result<(), Error> {
        self.schema.add_openapi(doc).map_err(|e| {
            Error::new(
                ErrorKind::Schema,
                format!("cannot read a custom schema: {}", e.message),
            )
        })
    }
}

/// Whether `node` is a CustomResourceDefinition (whose schema describes a custom kind).
pub fn is_crd(node: &Node) -> bool {
    node.str_at(&["kind"]) == Some("CustomResourceDefinition")
        && node
            .str_at(&["apiVersion"])
            .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
}

impl Default for Builtin {
    fn default() -> Self {
        Builtin::new()
    }
}

impl KindInfo for Builtin {
    fn namespaced(&self, group: &str, kind: &str) -> Option<bool> {
        self.schema.is_namespaced(&Gvk {
            group: group.into(),
            version: String::new(),
            kind: kind.into(),
        })
    }

    /// kubectl patches with a strategic merge patch only the kinds compiled into it
    /// (`pkg/cmd/apply/patcher.go`: `scheme.Scheme.New` fails → JSON merge patch): the
    /// built-in kinds, at a version the built-in schema knows.
    fn strategic(&self, gvk: &Gvk) -> bool {
        self.compiled_in.kind(gvk).is_some()
    }

    /// `x-kubernetes-list-map-keys` of a `map` list, else the patch merge key.
    fn list_keys(&self, gvk: &Gvk, path: &[&str]) -> Option<Vec<String>> {
        let meta = self.schema.meta_at(gvk, path)?;
        if meta.list_type == Some(ListType::Map) && !meta.list_map_keys.is_empty() {
            return Some(meta.list_map_keys);
        }
        meta.merge_key.map(|k| vec![k])
    }
}

impl ClientSideApply for Builtin {
    fn three_way_strategic(
        &self,
        gvk: &Gvk,
        original: &Node,
        modified: &Node,
        current: &Node,
    ) -> Result<Node, Error> {
        crate::merge::threeway::apply_preview(original, modified, current, &self.schema, gvk)
            .map(|p| p.result)
            .map_err(|e| {
                Error::new(
                    ErrorKind::Patch,
                    format!("the three-way merge failed at {}: {}", e.path, e.message),
                )
            })
    }
}

impl ServerSideApply for Builtin {
    fn apply(
        &self,
        gvk: &Gvk,
        live: Option<&Node>,
        config: &Node,
        manager: &str,
        force: bool,
    ) -> Result<SsaOutcome, Error> {
        let (schema, root, has_status) = typed_schema(&self.schema, gvk, live, config);
        let reset = server::status_reset_fields();
        let req = server::ApplyRequest {
            schema: &schema,
            root: &root,
            manager,
            force,
            reset_fields: has_status.then_some(&reset),
            now: None,
        };
        Ok(match server::server_side_apply(live, config, &req)? {
            server::ApplyOutcome::Applied { object, .. } => SsaOutcome::Applied(object),
            server::ApplyOutcome::Conflicts(list) => SsaOutcome::Conflicts(
                list.into_iter()
                    .map(|c| OwnershipConflict {
                        manager: Manager {
                            name: c.manager.name.clone(),
                            operation: c.manager.operation.as_str().to_string(),
                            subresource: c.manager.subresource.clone(),
                            api_version: c.manager.api_version.clone(),
                            time: c.manager.time.clone().unwrap_or_default(),
                        },
                        path: c.path,
                    })
                    .collect(),
            ),
        })
    }

    fn record_update(
        &self,
        gvk: &Gvk,
        live: Option<&Node>,
        new: &Node,
        manager: &str,
    ) -> Result<Node, Error> {
        let (schema, root, has_status) = typed_schema(&self.schema, gvk, live, new);
        let version = new.str_at(&["apiVersion"]).unwrap_or_default().to_string();
        let entries = match live {
            Some(l) => server::decode_managed_fields(l)?,
            None => Vec::new(),
        };
        let mut managers: BTreeMap<String, server::Manager> = BTreeMap::new();
        let mut fields = ssa::ManagedFields::new();
        for e in entries {
            let id = e.manager.identity();
            fields.insert(
                id.clone(),
                ssa::VersionedSet {
                    set: e.set,
                    api_version: e.manager.api_version.clone(),
                    applied: e.manager.operation == server::Operation::Apply,
                },
            );
            managers.insert(id, e.manager);
        }
        let updater_manager = server::Manager {
            name: manager.to_string(),
            operation: server::Operation::Update,
            api_version: version.clone(),
            subresource: String::new(),
            time: None,
        };
        let id = updater_manager.identity();
        let mut ignored = BTreeMap::new();
        if has_status {
            ignored.insert(version.clone(), server::status_reset_fields());
        }
        let mut updater = ssa::Updater::new(&schema, &root);
        if has_status {
            updater.ignored = Some(&ignored);
        }
        let strip = |n: &Node| {
            let mut n = n.clone();
            if let Some(m) = n.get_mut("metadata").and_then(Node::as_map_mut) {
                m.shift_remove("managedFields");
            }
            n
        };
        let before = live.map_or_else(Node::empty_map, strip);
        let mut after = strip(new);
        let mut fields = updater
            .update(&before, &after, &version, &fields, &id)
            .map_err(|e| Error::new(ErrorKind::Live, format!("managed fields: {e}")))?;
        // stripMeta: the updater never owns apiVersion, kind, name, namespace, … .
        if let Some(vs) = fields.get_mut(&id) {
            vs.set = vs.set.difference(&server::strip_meta_set());
            if vs.set.is_empty() {
                fields.remove(&id);
            }
        }
        let previous_time = managers.get(&id).and_then(|m| m.time.clone());
        managers.insert(
            id.clone(),
            server::Manager {
                time: previous_time,
                ..updater_manager
            },
        );
        let entries: Vec<server::ManagedEntry> = fields
            .iter()
            .filter_map(|(id, vs)| {
                let mut m = managers.get(id)?.clone();
                m.api_version = vs.api_version.clone();
                Some(server::ManagedEntry {
                    manager: m,
                    set: vs.set.clone(),
                })
            })
            .collect();
        let encoded = server::encode_managed_fields(&entries);
        if let Some(meta) = after.get_mut("metadata").and_then(Node::as_map_mut) {
            if encoded.as_seq().is_some_and(|s| !s.is_empty()) {
                meta.insert("managedFields".into(), encoded);
            }
        }
        Ok(after)
    }
}

/// The typed schema of a kind, the reference to its root, and whether it has a status
/// subresource (whose `status` the applier never owns).
fn typed_schema(
    schema: &Schema,
    gvk: &Gvk,
    live: Option<&Node>,
    config: &Node,
) -> (ssa::Schema, ssa::TypeRef, bool) {
    match ssa::from_schema::for_kind(schema, gvk) {
        Some(k) => (k.schema, k.root, k.has_status),
        None => (
            ssa::Schema::deduced(),
            ssa::TypeRef::named(ssa::schema::UNTYPED_DEDUCED),
            // Custom resources: a status subresource is the common case.
            config.get("status").is_some() || live.is_some_and(|l| l.get("status").is_some()),
        ),
    }
}
