//! `commonAnnotations`: writing the pairs at every place the annotations table names
//! (kustomize's AnnotationsTransformer). Touches only annotation maps.

use crate::diag::Result;
use crate::kustomization::StringMap;
use crate::resource::Resource;

use super::labels::set_pairs_telling;
use super::{FieldSpecTables, Unchanged};

/// Writes `annotations` into every object; `unchanged` hears of each pair a map held already.
pub(crate) fn apply(
    resources: &mut [Resource],
    annotations: &StringMap,
    tables: &FieldSpecTables,
    unchanged: Unchanged<'_>,
) -> Result<()> {
    set_pairs_telling(
        resources,
        annotations,
        &tables.common_annotations,
        unchanged,
    )
}
