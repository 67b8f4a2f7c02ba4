//! `ply diff` between two renders (docs/review.md): the sides (two git revisions, a revision
//! and the working tree, the working tree as two kustomize versions, or two paths; [`sides`]), the overlays on them ([`overlays`]), every
//! overlay rendered at both and compared ([`engine`]), object by object ([`compare`]), into
//! the report layer's [`Review`], which `crate::report` writes in every format. Reads files
//! only through the [`crate::fs::Fs`] of each side; prints nothing. Takes its options from
//! `cli`, never its arguments.

pub mod compare;
pub mod engine;
pub mod overlays;
pub mod sides;
mod why;

pub use crate::report::{OverlayReview, Review, Status};
pub use engine::{ReviewOptions, Side, review, review_objects};
pub use overlays::{Overlay, has_kustomization, overlay_name, overlays_in, shard, usage};
pub use sides::{RevisionPlan, Revisions, WorkingTreePlan, two_paths};
pub use why::LinkBase;
