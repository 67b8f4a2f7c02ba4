//! `namePrefix` and `nameSuffix` (kustomize's PrefixTransformer and SuffixTransformer): prepend
//! or append to every field the tables name, skipping the kinds kustomize never renames, and
//! record the previous id of each renamed object so name references can follow.

use std::borrow::Cow;

use crate::diag::Result;
use crate::kustomization::FieldSpec;
use crate::resource::Resource;
use crate::yaml::Node;

use super::FieldSpecTables;
use super::fieldspec::{self, Create, GvkRef};

/// Applies `namePrefix` (when not empty) then `nameSuffix` (when not empty).
pub(crate) fn apply(
    resources: &mut [Resource],
    prefix: &str,
    suffix: &str,
    tables: &FieldSpecTables,
) -> Result<()> {
    if !prefix.is_empty() {
        add(resources, prefix, &tables.name_prefix, true)?;
    }
    if !suffix.is_empty() {
        add(resources, suffix, &tables.name_suffix, false)?;
    }
    Ok(())
}

/// Adds a prefix at the places `specs` name (the PrefixTransformer plugin).
pub(crate) fn add_prefix(
    resources: &mut [Resource],
    prefix: &str,
    specs: &[FieldSpec],
) -> Result<()> {
    add(resources, prefix, specs, true)
}

/// Adds a suffix at the places `specs` name (the SuffixTransformer plugin).
pub(crate) fn add_suffix(
    resources: &mut [Resource],
    suffix: &str,
    specs: &[FieldSpec],
) -> Result<()> {
    add(resources, suffix, specs, false)
}

fn is_skipped_parts(group: &str, kind: &str) -> bool {
    kind == "CustomResourceDefinition"
        || (kind == "APIService" && group == "apiregistration.k8s.io")
        || kind == "Namespace"
}

fn add(
    resources: &mut [Resource],
    affix: &str,
    specs: &[FieldSpec],
    is_prefix: bool,
) -> Result<()> {
    for r in resources.iter_mut() {
        // kustomize selects by the original id's kind (`OrgId`), then walks the current object.
        let selected: Vec<&FieldSpec> = {
            let original = match r.prev_ids.first() {
                Some(p) => GvkRef {
                    group: &p.gvk.group,
                    version: &p.gvk.version,
                    kind: &p.gvk.kind,
                },
                None => GvkRef::of(&r.node),
            };
            if is_skipped_parts(original.group, original.kind) {
                continue;
            }
            specs.iter().filter(|s| original.selected_by(s)).collect()
        };
        for spec in selected {
            if spec.path == "metadata/name" {
                r.store_previous_id();
                // Recorded for name references (`transform::namereference`).
                if is_prefix {
                    r.name_prefixes.push(affix.to_string());
                } else {
                    r.name_suffixes.push(affix.to_string());
                }
            }
            // `fieldspec::apply` also checks the spec against the current kind.
            fieldspec::apply(&mut r.node, spec, Create::UntaggedScalar, &mut |n| {
                let current: Cow<str> = match &*n {
                    Node::Null => Cow::Borrowed(""),
                    Node::Str(s) => Cow::Borrowed(s),
                    // The text kept as written (`name: 1.50`): kyaml prefixes the scalar's
                    // `Value`.
                    Node::Spelled(s) => Cow::Borrowed(&s.text),
                    other => Cow::Owned(other.scalar_text().unwrap_or_default()),
                };
                let text = if is_prefix {
                    format!("{affix}{current}")
                } else {
                    format!("{current}{affix}")
                };
                *n = super::untagged_over(n, text);
                Ok(())
            })?;
        }
    }
    Ok(())
}
