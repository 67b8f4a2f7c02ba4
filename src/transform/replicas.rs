//! `replicas` (kustomize's ReplicaCountTransformer): set the count of the objects named by each
//! entry, at the places the replicas table names. A name matches an object's current or any
//! previous name (so a base name still works after a prefix).

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::Replica;
use crate::resource::{Gvk, Resource};
use crate::yaml::Node;

use super::fieldspec::{self, Create};
use super::{FieldSpecTables, spec_selects};

pub fn apply(
    resources: &mut [Resource],
    replicas: &[Replica],
    tables: &FieldSpecTables,
) -> Result<()> {
    for replica in replicas {
        apply_one(resources, replica, tables)?;
    }
    Ok(())
}

fn apply_one(
    resources: &mut [Resource],
    replica: &Replica,
    tables: &FieldSpecTables,
) -> Result<()> {
    let mut found = false;
    for spec in &tables.replicas {
        for r in resources.iter_mut() {
            let current = r.id();
            let matches = std::iter::once(&current)
                .chain(r.prev_ids.iter())
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
        let gvks: Vec<String> = tables
            .replicas
            .iter()
            .map(|s| {
                Gvk {
                    group: s.group.clone().unwrap_or_default(),
                    version: s.version.clone().unwrap_or_default(),
                    kind: s.kind.clone().unwrap_or_default(),
                }
                .to_string()
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
