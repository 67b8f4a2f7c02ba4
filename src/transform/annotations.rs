//! `commonAnnotations`: writing the pairs at every place the annotations table names
//! (kustomize's AnnotationsTransformer). Touches only annotation maps.

use crate::diag::Result;
use crate::kustomization::StringMap;
use crate::resource::Resource;

use super::FieldSpecTables;
use super::labels::set_pairs;

pub(crate) fn apply(
    resources: &mut [Resource],
    annotations: &StringMap,
    tables: &FieldSpecTables,
) -> Result<()> {
    set_pairs(resources, annotations, &tables.common_annotations)
}
