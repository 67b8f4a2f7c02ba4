//! `commonLabels` and `labels` (`includeSelectors`, `includeTemplates`, `fields`): which field
//! specs each entry uses, and writing the pairs there (kustomize's LabelTransformer and
//! `api/filters/labels`). Touches only label maps.

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{FieldSpec, Label, StringMap};
use crate::resource::shared::node_at_mut;
use crate::resource::{Resource, SharedEntry};
use crate::yaml::Node;
use crate::yaml::path::PathSeg;

use super::fieldspec::{self, Create, GvkRef, PathStep};
use super::{FieldSpecTables, Unchanged, is_new};

/// Applies the kustomization's `labels` entries, then its `commonLabels`, in kustomize's
/// order (`api/internal/target/kusttarget_configplugin.go`, LabelTransformer configurator).
pub(crate) fn apply(
    resources: &mut [Resource],
    common_labels: Option<&StringMap>,
    labels: &[Label],
    tables: &FieldSpecTables,
    mut unchanged: Unchanged<'_>,
) -> Result<()> {
    let metadata_labels = FieldSpec {
        path: "metadata/labels".into(),
        create: true,
        ..FieldSpec::default()
    };
    // A key two entries write may be changed by one and set back by the other: then its
    // writes are told whatever they found (the caller keeps those whose value stayed).
    let repeated: Vec<&str> = match unchanged {
        Some(_) => repeated_keys(labels.iter().map(|l| &l.pairs).chain(common_labels)),
        None => Vec::new(),
    };
    for label in labels {
        let specs = label_specs(label, tables, &metadata_labels)?;
        set_pairs_at(
            resources,
            &label.pairs,
            &specs,
            unchanged.as_mut().map(|f| &mut **f as _),
            &repeated,
        )?;
    }
    if let Some(common) = common_labels {
        let specs: Vec<&FieldSpec> = tables.common_labels.iter().collect();
        set_pairs_at(resources, common, &specs, unchanged, &repeated)?;
    }
    Ok(())
}

/// The keys that more than one of `sets` holds.
fn repeated_keys<'a>(sets: impl Iterator<Item = &'a StringMap>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out: Vec<&str> = Vec::new();
    for set in sets {
        for k in set.keys() {
            if seen.contains(&k.as_str()) {
                if !out.contains(&k.as_str()) {
                    out.push(k);
                }
            } else {
                seen.push(k);
            }
        }
    }
    out
}

/// The field specs of one `labels:` entry: its own `fields`, then the `labels` table of
/// `configurations:`, then either every selector and template place (`includeSelectors`) or
/// templates (`includeTemplates`) and `metadata/labels` (`metadata_labels`, a
/// `metadata/labels` spec with `create`).
fn label_specs<'a>(
    label: &'a Label,
    tables: &'a FieldSpecTables,
    metadata_labels: &'a FieldSpec,
) -> Result<Vec<&'a FieldSpec>> {
    let mut specs: Vec<&FieldSpec> = Vec::new();
    let mut merge = |s: &'a FieldSpec| -> Result<()> {
        if is_new(specs.iter().copied(), s)? {
            specs.push(s);
        }
        Ok(())
    };
    for s in label.fields.iter().chain(&tables.labels) {
        merge(s)?;
    }
    if label.include_selectors {
        for s in &tables.common_labels {
            merge(s)?;
        }
    } else {
        if label.include_templates {
            for s in &tables.template_labels {
                merge(s)?;
            }
        }
        merge(metadata_labels)?;
    }
    Ok(specs)
}

/// Writes each pair into the map at every place `specs` names (creating maps where a spec
/// says `create`). An empty `pairs` changes nothing.
///
/// kustomize shares one value node between the maps in which one transformer creates a key
/// (see [`SharedEntry`]); a later setting of that key in any of those maps shows in all of
/// them. This function records such groups on the resource and replays them.
pub(crate) fn set_pairs(
    resources: &mut [Resource],
    pairs: &StringMap,
    specs: &[FieldSpec],
) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    let specs: Vec<&FieldSpec> = specs.iter().collect();
    set_pairs_at(resources, pairs, &specs, None, &[])
}

/// [`set_pairs`], telling `unchanged` of each pair written into a map that held it already
/// (commonAnnotations, for field provenance).
pub(crate) fn set_pairs_telling(
    resources: &mut [Resource],
    pairs: &StringMap,
    specs: &[FieldSpec],
    unchanged: Unchanged<'_>,
) -> Result<()> {
    let specs: Vec<&FieldSpec> = specs.iter().collect();
    set_pairs_at(resources, pairs, &specs, unchanged, &[])
}

/// [`set_pairs`] with the specs given by reference, telling `unchanged` of each pair written
/// into a map that held it (and of every write of a key in `repeated`).
fn set_pairs_at(
    resources: &mut [Resource],
    pairs: &StringMap,
    specs: &[&FieldSpec],
    mut unchanged: Unchanged<'_>,
    repeated: &[&str],
) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    let all: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // kustomize sets one key at a time at every place (`api/filters/labels`, `Filter`). Writing
    // all keys in one walk per place gives the same maps, as the keys differ — unless a key is
    // `name` or `namespace` and a place is `metadata` itself: then an error on a later place
    // would name the object by an id that depends on the order, so keep kustomize's.
    let one_by_one = all.iter().any(|(k, _)| *k == "name" || *k == "namespace");
    // Buffers reused for every object.
    let mut selected: Vec<&FieldSpec> = Vec::new();
    let mut scratch = Scratch::default();
    for (i, r) in resources.iter_mut().enumerate() {
        let gvk = GvkRef::of(&r.node);
        selected.clear();
        selected.extend(specs.iter().copied().filter(|s| gvk.selected_by(s)));
        if selected.is_empty() {
            continue;
        }
        if one_by_one {
            for pair in &all {
                let tell = unchanged.as_mut().map(|f| (i, &mut **f as _, repeated));
                set_in(r, std::slice::from_ref(pair), &selected, &mut scratch, tell)?;
            }
        } else {
            let tell = unchanged.as_mut().map(|f| (i, &mut **f as _, repeated));
            set_in(r, &all, &selected, &mut scratch, tell)?;
        }
    }
    Ok(())
}

/// The working space of [`set_in`], kept across objects so that it allocates once.
#[derive(Default)]
struct Scratch<'p> {
    /// The path of the node a walk is at.
    walk: Vec<PathStep<'p>>,
    /// The paths of the maps in which a key was created, one after the other.
    paths: Vec<PathStep<'p>>,
    /// Each key created: (pair, start, end of its map's path in `paths`).
    created: Vec<(usize, usize, usize)>,
    /// The shared entries with a map in which their key was set again.
    replay: Vec<usize>,
}

/// Who is told of a write: the object's index, the listener ([`Unchanged`]), and the keys
/// whose every write is told.
type Tell<'t> = (
    usize,
    &'t mut dyn FnMut(usize, &[PathStep<'_>]),
    &'t [&'t str],
);

/// Writes `pairs` at the places of `selected` (specs that select the object), then replays
/// the shared entries whose key was set again and records the new ones, pair by pair. `tell`
/// hears of each pair written where the map held it already.
fn set_in<'p>(
    r: &mut Resource,
    pairs: &[(&str, &str)],
    selected: &[&'p FieldSpec],
    scratch: &mut Scratch<'p>,
    mut tell: Option<Tell<'_>>,
) -> Result<()> {
    let Resource {
        node,
        shared_entries,
        ..
    } = r;
    let Scratch {
        walk,
        paths,
        created,
        replay,
    } = scratch;
    paths.clear();
    created.clear();
    replay.clear();
    for spec in selected {
        fieldspec::apply_selected_with_path(node, spec, Create::Map, walk, &mut |n, at| {
            // A null map that the spec may not create stays null (kyaml's FieldSetter does
            // nothing on a null node).
            if n.is_null() {
                return Ok(());
            }
            let Some(map) = n.as_map_mut() else {
                return Err(not_a_map(n));
            };
            // This map's path, stored once when a key is created in it.
            let mut stored: Option<(usize, usize)> = None;
            for (p, (k, v)) in pairs.iter().enumerate() {
                if let Some(old) = map.get_mut(k) {
                    if let Some((i, f, repeated)) = tell.as_mut()
                        && (old.as_str() == Some(*v) || repeated.contains(k))
                    {
                        let mut field = at.to_vec();
                        field.push(PathStep::Key(std::borrow::Cow::Borrowed(*k)));
                        f(*i, &field);
                    }
                    *old = Node::str(*v);
                    for (g, group) in shared_entries.iter().enumerate() {
                        if group.key == *k
                            && !replay.contains(&g)
                            && group.maps.iter().any(|m| at == m.as_slice())
                        {
                            replay.push(g);
                        }
                    }
                } else {
                    // A key kustomize creates is written plain and read back by its JSON step
                    // (`string_maps::written_key_fails`).
                    if let Some(why) = crate::resource::string_maps::written_key_fails(k) {
                        return Err(Error::new(
                            ErrorKind::Transformer,
                            format!("cannot add the label {k:?}: the key {why}"),
                        )
                        .help(
                            "kustomize fails on this label even when the key is quoted: give it a \
                             key that reads as a string unquoted (`code-404`, not `404`)",
                        ));
                    }
                    map.insert((*k).to_string(), Node::str(*v));
                    let (start, end) = *stored.get_or_insert_with(|| {
                        let start = paths.len();
                        paths.extend_from_slice(at);
                        (start, paths.len())
                    });
                    created.push((p, start, end));
                }
            }
            Ok(())
        })?;
    }
    replay.sort_unstable();
    for (p, (k, v)) in pairs.iter().enumerate() {
        for &g in replay.iter() {
            let Some(group) = shared_entries.get(g).filter(|g| g.key == *k) else {
                continue;
            };
            for path in &group.maps {
                if let Some(value) = node_at_mut(node, path)
                    .and_then(Node::as_map_mut)
                    .and_then(|m| m.get_mut(k))
                {
                    *value = Node::str(*v);
                }
            }
        }
        if created.iter().filter(|(q, ..)| *q == p).nth(1).is_some() {
            shared_entries.push(SharedEntry {
                key: (*k).to_string(),
                maps: created
                    .iter()
                    .filter(|(q, ..)| *q == p)
                    .map(|&(_, start, end)| {
                        paths
                            .get(start..end)
                            .unwrap_or_default()
                            .iter()
                            .map(PathSeg::owned)
                            .collect()
                    })
                    .collect(),
            });
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{EmitOptions, emit_documents, parse::parse_one};

    fn map(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    /// A key that `commonLabels` created in three maps at once is shared: an overlay's
    /// `labels` entry that sets it in `metadata/labels` only changes all three. Expected text
    /// from `kubectl kustomize` (base: commonLabels a=x on a Deployment without labels;
    /// overlay: labels a=w, b=z).
    #[test]
    fn shared_entries_follow_a_later_setting() {
        let tables = FieldSpecTables::builtin().unwrap();
        let mut rs = vec![Resource::new(
            parse_one("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: nginx\n").unwrap(),
            None,
        )];
        apply(&mut rs, Some(&map(&[("a", "x")])), &[], &tables, None).unwrap();
        assert_eq!(rs[0].shared_entries.len(), 1);
        assert_eq!(rs[0].shared_entries[0].maps.len(), 3);
        let label = Label {
            pairs: map(&[("a", "w"), ("b", "z")]),
            ..Label::default()
        };
        apply(&mut rs, None, &[label], &tables, None).unwrap();
        assert_eq!(
            emit_documents(rs.iter().map(|r| &r.node), EmitOptions::default()),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels:\n    a: w\n    b: z\n  name: d\nspec:\n  selector:\n    matchLabels:\n      a: w\n  template:\n    metadata:\n      labels:\n        a: w\n    spec:\n      containers:\n      - image: nginx\n        name: c\n"
        );
    }

    /// For field provenance, `apply` tells exactly the pairs it wrote into maps that held
    /// them: `app: web` where the object has it, not `tier` nor the selector's `app`
    /// (changed); a key two entries write (`zone`) at each write into a map holding it,
    /// changed or not (the second entry's), not where the first created it (a new field).
    #[test]
    fn tells_the_pairs_a_map_held() {
        let tables = FieldSpecTables::builtin().unwrap();
        let mut rs = vec![Resource::new(
            parse_one("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  labels: {app: web, tier: a}\nspec:\n  selector: {app: other}\n").unwrap(),
            None,
        )];
        let labels = [
            Label {
                pairs: map(&[("app", "web"), ("tier", "b"), ("zone", "x")]),
                include_selectors: true,
                ..Label::default()
            },
            Label {
                pairs: map(&[("zone", "y")]),
                ..Label::default()
            },
        ];
        let mut told: Vec<(usize, String)> = Vec::new();
        let mut tell =
            |i: usize, at: &[PathStep<'_>]| told.push((i, crate::transform::fieldspec::dotted(at)));
        apply(&mut rs, None, &labels, &tables, Some(&mut tell)).unwrap();
        told.sort();
        assert_eq!(
            told,
            [
                (0, "metadata.labels.app".to_string()),
                (0, "metadata.labels.zone".to_string()),
            ]
        );
    }
}
