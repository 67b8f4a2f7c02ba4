//! Server-side apply (structured-merge-diff semantics) over [`crate::yaml::Node`]: field paths
//! and sets with their `fieldsV1` encoding, a typed schema, the typed operations (ToFieldSet,
//! Merge, Compare, Remove/Extract), the managed-fields updater (apply with conflicts, update,
//! pruning of fields the applier gave up) and the API server's extra steps. Pure: no I/O, no
//! globals; it must not read files or print. The diff command calls [`server`].

pub mod from_schema;
pub mod path;
pub mod schema;
pub mod server;
pub mod set;
pub mod typed;
pub mod updater;
pub mod value;

pub use path::{Path, PathElement, path_string};
pub use schema::{Schema, TypeRef};
pub use server::{
    ApplyOutcome, ApplyRequest, FieldConflict, conflict_message, server_side_apply,
    server_side_apply_full,
};
pub use set::Set;
pub use typed::{Comparison, Typed};
pub use updater::{Conflict, ManagedFields, Updater, UpdaterError, VersionedSet};
