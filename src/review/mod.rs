//! `ply diff` between two renders (docs/review.md): the sides (two git revisions, a revision
//! and the working tree, the working tree as two kustomize versions, or two paths; [`sides`]), the overlays on them ([`overlays`]), every
//! overlay rendered at both and compared ([`engine`]), object by object ([`compare`]), into
//! the report layer's [`Review`], which `crate::report` writes in every format. Reads files
//! only through the [`crate::fs::Fs`] of each side; prints nothing. Takes its options from
//! `cli`, never its arguments.

pub(crate) mod compare;
pub(crate) mod engine;
pub(crate) mod gitops;
mod local;
pub(crate) mod overlays;
pub(crate) mod risks;
pub(crate) mod sides;
mod why;

pub(crate) use engine::ReviewOptions;
pub(crate) use sides::{RevisionPlan, Revisions, WorkingTreePlan, two_paths};
