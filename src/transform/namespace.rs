//! `namespace` (kustomize's NamespaceTransformer, `api/filters/namespace`): set
//! `metadata.namespace` of every object not known to be cluster-scoped, the namespace of
//! (Cluster)RoleBinding subjects named `default`, and the other places of the namespace table
//! (a `v1` Namespace object's own name, APIService and CRD webhook service namespaces).
//! Records each object's previous id. Two objects ending with one id is an error.

use std::collections::HashMap;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::FieldSpec;
use crate::resource::{Gvk, Resource};
use crate::yaml::Node;

use super::FieldSpecTables;
use super::fieldspec::{self, Create};

pub fn apply(resources: &mut [Resource], namespace: &str, tables: &FieldSpecTables) -> Result<()> {
    if namespace.is_empty() {
        return Ok(());
    }
    for r in resources.iter_mut() {
        if r.node.as_map().is_none_or(|m| m.is_empty()) {
            continue;
        }
        r.store_previous_id();
        apply_one(&mut r.node, namespace, tables)?;
    }
    check_unique(resources)
}

fn apply_one(node: &mut Node, namespace: &str, tables: &FieldSpecTables) -> Result<()> {
    let gvk = Gvk::of(node);
    let api_version = node.str_at(&["apiVersion"]).unwrap_or("").to_string();
    let set = &mut |n: &mut Node| {
        *n = Node::str(namespace);
        Ok(())
    };
    // metadata.namespace is handled here, not through the table: only for objects that are
    // not known to be cluster-scoped (`metaNamespaceHack`). `metadata/name` entries apply to
    // apiVersion `v1` only (`removeUnneededMetaFieldSpecs`).
    let mut specs: Vec<&FieldSpec> = tables
        .namespace
        .iter()
        .filter(|s| s.path != "metadata/namespace")
        .filter(|s| api_version == "v1" || s.path != "metadata/name")
        .collect();
    if !tables.is_cluster_scoped(&gvk) {
        let meta = FieldSpec {
            path: "metadata/namespace".into(),
            create: true,
            ..FieldSpec::default()
        };
        fieldspec::apply(node, &meta, Create::Scalar, set)?;
    }
    if gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding" {
        let is_rb =
            |k: &Option<String>| matches!(k.as_deref(), Some("RoleBinding" | "ClusterRoleBinding"));
        specs.retain(|s| !(is_rb(&s.kind) && s.path == "subjects/namespace"));
        set_default_subjects(node, namespace)?;
    }
    for spec in specs {
        fieldspec::apply(node, spec, Create::Scalar, set).map_err(|mut e| {
            e.message = format!("namespace transformation failed: {}", e.message);
            e
        })?;
    }
    Ok(())
}

/// kustomize's default `setRoleBindingSubjects: defaultOnly`: subjects whose `name` is
/// `default` get the namespace (`roleBindingHack`, `setSubjectsNamedDefault`).
fn set_default_subjects(node: &mut Node, namespace: &str) -> Result<()> {
    let Some(subjects) = node.get_mut("subjects") else {
        return Ok(());
    };
    let Some(items) = subjects.as_seq_mut() else {
        if subjects.is_null() {
            return Ok(());
        }
        return Err(Error::new(
            ErrorKind::Transformer,
            "setting namespace on (cluster)role binding subjects: `subjects` is not a list",
        ));
    };
    for s in items {
        if let Some(m) = s.as_map_mut()
            && m.get("name").and_then(Node::as_str) == Some("default")
        {
            m.insert("namespace".into(), Node::str(namespace));
        }
    }
    Ok(())
}

/// After the namespace changes no two objects may share an id (kustomize compares namespaces
/// with `""` and `default` as equal).
fn check_unique(resources: &[Resource]) -> Result<()> {
    let mut seen: HashMap<(Gvk, String, String), usize> = HashMap::new();
    for (i, r) in resources.iter().enumerate() {
        let id = r.id();
        let ns = if id.namespace.is_empty() {
            "default".to_string()
        } else {
            id.namespace.clone()
        };
        if let Some(j) = seen.insert((id.gvk.clone(), ns, id.name.clone()), i) {
            let other = resources
                .get(j)
                .map(|o| o.original_id().to_string())
                .unwrap_or_default();
            return Err(Error::new(
                ErrorKind::Transformer,
                format!(
                    "namespace transformation produces ID conflict: {} and {} both become {}",
                    other,
                    r.original_id(),
                    id
                ),
            )
            .at_opt(r.origin.clone()));
        }
    }
    Ok(())
}
