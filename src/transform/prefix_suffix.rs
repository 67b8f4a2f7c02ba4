//! `namePrefix` and `nameSuffix` (kustomize's PrefixTransformer and SuffixTransformer): prepend
//! or append to every field the tables name, skipping the kinds kustomize never renames, and
//! record the previous id of each renamed object so name references can follow.

use crate::diag::Result;
use crate::kustomization::FieldSpec;
use crate::resource::{Gvk, Resource};
use crate::yaml::Node;

use super::fieldspec::{self, Create};
use super::{FieldSpecTables, spec_selects};

/// Applies `namePrefix` (when not empty) then `nameSuffix` (when not empty).
pub fn apply(
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
pub fn add_prefix(resources: &mut [Resource], prefix: &str, specs: &[FieldSpec]) -> Result<()> {
    add(resources, prefix, specs, true)
}

/// Adds a suffix at the places `specs` name (the SuffixTransformer plugin).
pub fn add_suffix(resources: &mut [Resource], suffix: &str, specs: &[FieldSpec]) -> Result<()> {
    add(resources, suffix, specs, false)
}

/// Kinds whose names kustomize never prefixes or suffixes (`api/internal/builtins/
/// PrefixTransformer.go`, `prefixFieldSpecsToSkip`): CustomResourceDefinition (any group),
/// APIService in `apiregistration.k8s.io`, and Namespace (any group).
pub fn is_skipped(gvk: &Gvk) -> bool {
    gvk.kind == "CustomResourceDefinition"
        || (gvk.kind == "APIService" && gvk.group == "apiregistration.k8s.io")
        || gvk.kind == "Namespace"
}

fn add(
    resources: &mut [Resource],
    affix: &str,
    specs: &[FieldSpec],
    is_prefix: bool,
) -> Result<()> {
    for r in resources.iter_mut() {
        // kustomize selects by the original id's kind (`OrgId`), then walks the current object.
        let original = r.original_id().gvk;
        if is_skipped(&original) {
            continue;
        }
        for spec in specs {
            if !spec_selects(spec, &original) {
                continue;
            }
            if spec.path == "metadata/name" {
                r.store_previous_id();
                // Recorded for name references (`transform::namereference`).
                if is_prefix {
                    r.name_prefixes.push(affix.to_string());
                } else {
                    r.name_suffixes.push(affix.to_string());
                }
            }
            fieldspec::apply(&mut r.node, spec, Create::Scalar, &mut |n| {
                let current = n.scalar_text().filter(|_| !n.is_null()).unwrap_or_default();
                *n = Node::Str(if is_prefix {
                    format!("{affix}{current}")
                } else {
                    format!("{current}{affix}")
                });
                Ok(())
            })?;
        }
    }
    Ok(())
}
