//! The kustomization file: its typed form ([`types`]) and loading. Decoding only; what the
//! fields do lives in `build`, `generate` and `transform`.

pub mod load;
pub mod types;

pub use load::{Loaded, load};
pub use types::*;
