//! The shared merge core: pure functions over [`crate::yaml::Node`] and a
//! [`crate::schema::Schema`], with no I/O and no global state. Strategic merge patch
//! (`smp`), JSON patch (`json6902`), JSON merge patch (`mergepatch`), two- and three-way patch
//! creation (`threeway`), and the helpers they share (`walk`). Server-side apply lives in
//! `ssa/` (owned by its own module). Callers: kustomize patches and generator merges in the
//! render pipeline, `ply patch`, and `ply diff`'s apply prediction.

pub mod json6902;
pub mod mergepatch;
pub mod smp;
pub(crate) mod ssa;
pub mod threeway;
pub(crate) mod walk;

#[cfg(test)]
mod tests;

use std::fmt;

/// What kind of failure a [`MergeError`] is, for callers that branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeErrorKind {
    /// An unknown or misplaced directive (`$patch: bogus`, `$patch: merge` in a list).
    BadDirective,
    /// An element of a merging list lacks the list's merge key.
    MissingMergeKey,
    /// Values of incompatible kinds meet where they must agree (list element types, a
    /// directive that must be a list).
    TypeMismatch,
    /// A patch list's order disagrees with its `$setElementOrder` list.
    OrderMismatch,
    /// `$retainKeys` does not list a field the patch sets.
    RetainKeys,
    /// Patch creation met a field the schema does not declare (apimachinery refuses).
    UnknownField,
    /// A three-way patch changes a field someone else changed (only without overwrite).
    Conflict,
    /// A JSON patch operation failed (missing path, failed `test`, bad pointer).
    JsonPatch,
    /// The patch or object is not the shape the operation needs (not a map, …).
    Invalid,
}

/// A merge failure, naming where in the object it happened
/// (`spec.template.spec.containers[name=web].ports`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeError {
    pub kind: MergeErrorKind,
    /// The path in the object (`.` for the root).
    pub path: String,
    pub message: String,
}

impl MergeError {
    pub fn new(kind: MergeErrorKind, path: &walk::Path<'_>, message: impl Into<String>) -> Self {
        MergeError {
            kind,
            path: path.render(),
            message: message.into(),
        }
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for MergeError {}

impl From<MergeError> for crate::diag::Error {
    fn from(e: MergeError) -> Self {
        let kind = match e.kind {
            MergeErrorKind::Conflict => crate::diag::ErrorKind::Conflict,
            _ => crate::diag::ErrorKind::Patch,
        };
        crate::diag::Error::new(kind, format!("at {}: {}", e.path, e.message))
    }
}

/// Whose strategic merge to reproduce. kubectl (apimachinery's `strategicpatch`) and
/// kustomize (kyaml's `merge2` walker) agree on most patches; where they do not, `docs/merge.md`
/// lists the differences.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// kubectl / apimachinery: patched elements keep the patch's relative order and are
    /// interleaved with the object's other elements by their positions in the object
    /// (`mergeSortedSlice`); every directive is honoured. `ply patch` and the apply prediction.
    #[default]
    Kubectl,
    /// kustomize: the patch's elements first, in patch order, then the object's other
    /// elements; `$setElementOrder`, `$retainKeys` and `$deleteFromPrimitiveList` are plain
    /// keys; `$patch: delete` on a map removes the field and `$patch: merge` is allowed; a
    /// change of node kind (map ↔ list ↔ scalar) is an error; new elements lose their nulls.
    /// The render pipeline.
    Kustomize,
}

/// Options of a strategic merge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmpOptions {
    /// Whose rules (and list order) to follow.
    pub dialect: Dialect,
}

impl SmpOptions {
    pub fn kubectl() -> SmpOptions {
        SmpOptions {
            dialect: Dialect::Kubectl,
        }
    }

    pub fn kustomize() -> SmpOptions {
        SmpOptions {
            dialect: Dialect::Kustomize,
        }
    }
}
