//! The engines `ply diff` runs with: adapters from the traits of `engine` to the schema, the
//! merge core and the server-side apply engine.

use crate::diag::{Error, ErrorKind};
use crate::resource::Gvk;
use crate::schema::{ListType, Schema};
use crate::yaml::Node;

use super::engine::{
    ClientSideApply, KindInfo, Manager, OwnershipConflict, PathStep, ServerSideApply, SsaOutcome,
};
use super::ssa_schema;
use crate::merge::ssa::{self, server};

/// The built-in schema, merge core and SSA engine.
#[derive(Debug)]
pub struct Builtin {
    pub schema: Schema,
}

impl Builtin {
    /// The built-in Kubernetes kinds.
    pub fn new() -> Builtin {
        Builtin {
            schema: Schema::builtin(),
        }
    }
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
        self.schema.kind(gvk).is_some()
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
        // Seam: `crate::merge::threeway::apply_preview(original, modified, current, schema,
        // gvk)` once the merge core is on this branch.
        let _ = (gvk, original, modified, current);
        Err(Error::new(
            ErrorKind::Usage,
            "client-side prediction of built-in kinds needs the strategic merge engine, which is not in this build yet",
        ))
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
        let (schema, root, has_status) =
            ssa_schema::for_kind(&self.schema, gvk).unwrap_or_else(|| {
                (
                    ssa::Schema::deduced(),
                    ssa::TypeRef::named(ssa::schema::UNTYPED_DEDUCED),
                    // Custom resources: the status subresource is the common case.
                    config.get("status").is_some()
                        || live.is_some_and(|l| l.get("status").is_some()),
                )
            });
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
                        path: c.path.iter().map(step).collect(),
                    })
                    .collect(),
            ),
        })
    }
}

fn step(pe: &ssa::PathElement) -> PathStep {
    match pe {
        ssa::PathElement::Field(f) => PathStep::Field(f.clone()),
        ssa::PathElement::Key(k) => PathStep::Key(k.clone()),
        ssa::PathElement::Value(v) => PathStep::Value(v.clone()),
        ssa::PathElement::Index(i) => PathStep::Index(usize::try_from(*i).unwrap_or(0)),
    }
}
