//! The kustomization file: its typed form ([`types`]) and loading. Decoding only; what the
//! fields do lives in `render`, `generate` and `transform`.

pub mod load;
pub mod types;
mod version;

pub use load::{Loaded, load};
pub use types::*;
pub use version::KustomizeVersion;
