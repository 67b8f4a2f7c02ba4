//! `commonLabels` and `labels` (`includeSelectors`, `includeTemplates`, `fields`): which field
//! specs each entry uses, and writing the pairs there (kustomize's LabelTransformer and
//! `api/filters/labels`). Touches only label maps.

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{FieldSpec, Label, StringMap};
use crate::resource::Resource;
use crate::yaml::Node;

use super::fieldspec::{self, Create};
use super::{FieldSpecTables, merge_one};

/// Applies the kustomization's `labels` entries, then its `commonLabels`, in kustomize's
/// order (`api/internal/target/kusttarget_configplugin.go`, LabelTransformer configurator).
pub fn apply(
    resources: &mut [Resource],
    common_labels: Option<&StringMap>,
    labels: &[Label],
    tables: &FieldSpecTables,
) -> Result<()> {
    for label in labels {
        let specs = label_specs(label, tables)?;
        set_pairs(resources, &label.pairs, &specs)?;
    }
    if let Some(common) = common_labels {
        set_pairs(resources, common, &tables.common_labels)?;
    }
    Ok(())
}

/// The field specs of one `labels:` entry: its own `fields`, then the `labels` table of
/// `configurations:`, then either every selector and template place (`includeSelectors`) or
/// templates (`includeTemplates`) and `metadata/labels`.
pub fn label_specs(label: &Label, tables: &FieldSpecTables) -> Result<Vec<FieldSpec>> {
    let mut specs = Vec::new();
    for s in label.fields.iter().chain(&tables.labels) {
        merge_one(&mut specs, s.clone())?;
    }
    if label.include_selectors {
        for s in &tables.common_labels {
            merge_one(&mut specs, s.clone())?;
        }
    } else {
        if label.include_templates {
            for s in &tables.template_labels {
                merge_one(&mut specs, s.clone())?;
            }
        }
        merge_one(
            &mut specs,
            FieldSpec {
                path: "metadata/labels".into(),
                create: true,
                ..FieldSpec::default()
            },
        )?;
    }
    Ok(specs)
}

/// Writes each pair into the map at every place `specs` names (creating maps where a spec
/// says `create`). An empty `pairs` changes nothing.
pub fn set_pairs(resources: &mut [Resource], pairs: &StringMap, specs: &[FieldSpec]) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    for r in resources.iter_mut() {
        fieldspec::apply_all(&mut r.node, specs, Create::Map, &mut |n| {
            set_entries(n, pairs)
        })?;
    }
    Ok(())
}

/// Sets every pair in a map node (kustomize's `SetEntry` with a string tag).
pub(crate) fn set_entries(node: &mut Node, pairs: &StringMap) -> Result<()> {
    // A null map that the spec may not create stays null (kyaml's FieldSetter does nothing on
    // a null node).
    if node.is_null() {
        return Ok(());
    }
    let Some(map) = node.as_map_mut() else {
        return Err(Error::new(
            ErrorKind::Transformer,
            format!(
                "expected a map to hold labels or annotations, found a {}",
                node.kind_name()
            ),
        ));
    };
    for (k, v) in pairs {
        map.insert(k.clone(), Node::str(v.as_str()));
    }
    Ok(())
}
