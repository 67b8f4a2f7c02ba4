//! The kustomization file: its typed form ([`types`]), loading, and the one list of the files,
//! directories and remotes it references ([`refs`]). Decoding only; what the fields do lives in
//! `render`, `generate` and `transform`; the kustomize releases ply renders as ([`KustomizeVersion`]).

pub(crate) mod load;
pub(crate) mod refs;
pub(crate) mod types;
mod version;

pub(crate) use load::{Loaded, load};
pub(crate) use refs::{Ref, RefKind};
pub(crate) use types::*;
pub use version::KustomizeVersion;
