//! `commonLabels` and `labels` (`includeSelectors`, `includeTemplates`, `fields`): which field
//! specs each entry uses, and writing the pairs there (kustomize's LabelTransformer and
//! `api/filters/labels`). Touches only label maps.

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{FieldSpec, Label, StringMap};
use crate::resource::{Resource, SharedEntry, Step};
use crate::yaml::Node;

use super::fieldspec::{self, Create};
use super::{FieldSpecTables, spec_selects, try_merge_one};

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
        try_merge_one(&mut specs, s.clone())?;
    }
    if label.include_selectors {
        for s in &tables.common_labels {
            try_merge_one(&mut specs, s.clone())?;
        }
    } else {
        if label.include_templates {
            for s in &tables.template_labels {
                try_merge_one(&mut specs, s.clone())?;
            }
        }
        try_merge_one(
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
///
/// kustomize shares one value node between the maps in which one transformer creates a key
/// (see [`SharedEntry`]); a later setting of that key in any of those maps shows in all of
/// them. This function records such groups on the resource and replays them.
pub fn set_pairs(resources: &mut [Resource], pairs: &StringMap, specs: &[FieldSpec]) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        let selected: Vec<&FieldSpec> = specs.iter().filter(|s| spec_selects(s, &gvk)).collect();
        if selected.is_empty() {
            continue;
        }
        let Resource {
            node,
            shared_entries,
            ..
        } = r;
        for (k, v) in pairs {
            let mut created: Vec<Vec<Step>> = Vec::new();
            let mut updated: Vec<Vec<Step>> = Vec::new();
            for spec in &selected {
                fieldspec::apply_with_path(node, spec, Create::Map, &mut |n, at| {
                    // A null map that the spec may not create stays null (kyaml's FieldSetter
                    // does nothing on a null node).
                    if n.is_null() {
                        return Ok(());
                    }
                    let Some(map) = n.as_map_mut() else {
                        return Err(not_a_map(n));
                    };
                    if map.contains_key(k) {
                        updated.push(at.to_vec());
                    } else {
                        created.push(at.to_vec());
                    }
                    map.insert(k.clone(), Node::str(v.as_str()));
                    Ok(())
                })?;
            }
            for group in shared_entries
                .iter()
                .filter(|g| g.key == *k && g.maps.iter().any(|m| updated.contains(m)))
            {
                for path in &group.maps {
                    if let Some(map) = node_at(node, path).and_then(Node::as_map_mut)
                        && map.contains_key(k)
                    {
                        map.insert(k.clone(), Node::str(v.as_str()));
                    }
                }
            }
            if created.len() > 1 {
                shared_entries.push(SharedEntry {
                    key: k.clone(),
                    maps: created,
                });
            }
        }
    }
    Ok(())
}

fn node_at<'a>(node: &'a mut Node, path: &[Step]) -> Option<&'a mut Node> {
    let mut cur = node;
    for step in path {
        cur = match step {
            Step::Key(k) => cur.get_mut(k)?,
            Step::Index(i) => cur.as_seq_mut()?.get_mut(*i)?,
        };
    }
    Some(cur)
}

fn not_a_map(node: &Node) -> Error {
    Error::new(
        ErrorKind::Transformer,
        format!(
            "expected a map to hold labels or annotations, found a {}",
            node.kind_name()
        ),
    )
}
