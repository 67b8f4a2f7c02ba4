//! The kustomization file: its typed form ([`types`]), loading, and the one list of the files,
//! directories and remotes it references ([`refs`]). Decoding only; what the fields do lives in
//! `render`, `generate` and `transform`; the kustomize releases ply renders as ([`KustomizeVersion`]).

pub mod load;
pub mod refs;
pub mod types;
mod version;

pub use load::{Loaded, load};
pub use refs::{Ref, RefKind};
pub use types::*;
pub use version::KustomizeVersion;
