//! Server-side apply (structured-merge-diff semantics) over [`crate::yaml::Node`]: field paths
//! and sets with their `fieldsV1` encoding, a typed schema, the typed operations (ToFieldSet,
//! Merge, Compare, Remove/Extract), the managed-fields updater (apply with conflicts, update,
//! pruning of fields the applier gave up) and the API server's extra steps. Pure: no I/O, no
//! globals; it must not read files or print. The diff command calls [`server`].

pub(crate) mod from_schema;
pub(crate) mod path;
pub(crate) mod schema;
pub(crate) mod server;
pub(crate) mod set;
pub(crate) mod typed;
pub(crate) mod updater;
pub mod value;

pub use path::{PathElement, path_string};
pub use schema::{Schema, TypeRef};
pub use set::Set;
pub use typed::Typed;
pub(crate) use updater::{ManagedFields, Updater, VersionedSet};
