//! The engines `ply diff` runs with: adapters from the traits of `engine` to the schema, the
//! merge core and the server-side apply engine. Until those modules are on this branch, the
//! adapters say plainly what they cannot do instead of guessing.

use crate::diag::{Error, ErrorKind};
use crate::resource::Gvk;
use crate::yaml::Node;

use super::engine::{ClientSideApply, KindInfo, ServerSideApply, SsaOutcome};

/// The built-in schema, merge core and SSA engine.
#[derive(Debug, Default)]
pub struct Builtin;

impl KindInfo for Builtin {
    fn namespaced(&self, _group: &str, _kind: &str) -> Option<bool> {
        None
    }

    fn strategic(&self, _gvk: &Gvk) -> bool {
        false
    }

    fn list_keys(&self, _gvk: &Gvk, _path: &[&str]) -> Option<Vec<String>> {
        None
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
