//! The engines `ply diff` runs with: adapters from the traits of `engine` to the schema, the
//! merge core and the server-side apply engine. Until those modules are on this branch, the
//! adapters say plainly what they cannot do instead of guessing.

use crate::diag::{Error, ErrorKind};
use crate::resource::Gvk;
use crate::schema::{ListType, Schema};
use crate::yaml::Node;

use super::engine::{ClientSideApply, KindInfo, ServerSideApply, SsaOutcome};

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
        _gvk: &Gvk,
        _original: &Node,
        _modified: &Node,
        _current: &Node,
    ) -> Result<Node, Error> {
        Err(Error::new(
            ErrorKind::Usage,
            "client-side prediction of built-in kinds needs the strategic merge engine, which is not in this build yet",
        ))
    }
}

impl ServerSideApply for Builtin {
    fn apply(
        &self,
        _gvk: &Gvk,
        _live: Option<&Node>,
        _config: &Node,
        _manager: &str,
        _force: bool,
    ) -> Result<SsaOutcome, Error> {
        Err(Error::new(
            ErrorKind::Usage,
            "server-side prediction needs the server-side apply engine, which is not in this build yet",
        ))
    }
}
