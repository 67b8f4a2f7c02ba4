//! `replicas` (kustomize's ReplicaCountTransformer): set the count of the objects named by each
//! entry, at the places the replicas table names. A name matches an object's current or any
//! previous name (so a base name still works after a prefix).

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{FieldSpec, Replica};
use crate::resource::{Gvk, Resource};
use crate::yaml::Node;

use super::fieldspec::{self, Create};
use super::{FieldSpecTables, spec_selects};

pub(crate) fn apply(
    resources: &mut [Resource],
    replicas: &[Replica],
    tables: &FieldSpecTables,
) -> Result<()> {
    for replica in replicas {
        apply_one(resources, replica, &tables.replicas)?;
    }
    Ok(())
}

/// One replicas entry with explicit field specs (the ReplicaCountTransformer plugin).
pub(crate) fn apply_one(
    resources: &mut [Resource],
    replica: &Replica,
    specs: &[FieldSpec],
) -> Result<()> {
    let mut found = false;
    for spec in specs {
        for r in resources.iter_mut() {
            let matches = (r.name() == replica.name && spec_selects(spec, &r.gvk()))
                || r.prev_ids
                    .iter()
                    .any(|id| id.name == replica.name && spec_selects(spec, &id.gvk));
            if !matches {
                continue;
            }
            found = true;
            fieldspec::apply(&mut r.node, spec, Create::Scalar, &mut |n| {
                *n = Node::Int(i128::from(replica.count));
                Ok(())
            })?;
        }
    }
    if !found {
        // kustomize lists the table's kinds sorted by its legacy kind order
        // (`TransformerConfig.sortFields`) in kyaml's `Kind.version.group` form.
        let mut gvks: Vec<Gvk> = specs
            .iter()
            .map(|s| Gvk {
                group: s.group.clone().unwrap_or_default(),
                version: s.version.clone().unwrap_or_default(),
                kind: s.kind.clone().unwrap_or_default(),
            })
            .collect();
        gvks.sort_by(super::sort::default_gvk_cmp);
        let gvks: Vec<String> = gvks
            .iter()
            .map(|g| {
                let or = |s: &str, none: &str| {
                    if s.is_empty() {
                        none.to_string()
                    } else {
                        s.to_string()
                    }
                };
                format!(
                    "{}.{}.{}",
                    or(&g.kind, "[noKind]"),
                    or(&g.version, "[noVer]"),
                    or(&g.group, "[noGrp]")
                )
            })
            .collect();
        return Err(Error::new(
            ErrorKind::Transformer,
            format!(
                "resource with name {} does not match a config with the following GVK [{}]",
                replica.name,
                gvks.join(" ")
            ),
        )
        .help("`replicas` applies to Deployments, ReplicationControllers, ReplicaSets and StatefulSets (plus `replicas:` entries of `configurations:`)"));
    }
    Ok(())
}
