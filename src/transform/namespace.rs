//! `namespace` (kustomize's NamespaceTransformer, `api/filters/namespace`): set
//! `metadata.namespace` of every object not known to be cluster-scoped, the namespace of
//! (Cluster)RoleBinding subjects named `default`, and the other places of the namespace table
//! (a `v1` Namespace object's own name, APIService and CRD webhook service namespaces).
//! Records each object's previous id. Two objects ending with one id is an error. From
//! kustomize v5.8 it leaves objects that helm generated as they are ([`HELM_GENERATED`]).

use crate::diag::{Error, ErrorKind, Result};
use crate::fasthash::FastMap;
use crate::kustomization::{FieldSpec, KustomizeVersion};
use crate::resource::Resource;
use crate::yaml::Node;
use crate::yaml::path::PathSeg;

use super::fieldspec::{self, Create, GvkRef};
use super::{FieldSpecTables, KeptIn};

/// The annotation kustomize v5.8 puts on every object that `helm template` printed
/// (`HelmChartInflationGeneratorPlugin.markHelmGeneratedResources`, PR #5940 and #6044;
/// `konfig.HelmGeneratedAnnotation`): the namespace transformer leaves such objects as they
/// are ("Helm should take care of it"), and it is a build annotation, removed from the
/// output. An input that writes it itself is treated the same (as kustomize does).
pub(crate) const HELM_GENERATED: &str = "internal.config.kubernetes.io/helm-generated";

/// Whether the namespace transformer of `kustomize` leaves `node` alone as helm's output.
fn helm_generated(node: &Node, kustomize: KustomizeVersion) -> bool {
    kustomize.at_least(KustomizeVersion::V5_8_1)
        && node.str_at(&["metadata", "annotations", HELM_GENERATED]) == Some("true")
}

/// Which RoleBinding/ClusterRoleBinding subjects get the namespace (the NamespaceTransformer
/// plugin's `setRoleBindingSubjects`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum SubjectMode {
    /// Subjects named `default` (kustomize's default, `defaultOnly`).
    #[default]
    DefaultOnly,
    /// Every subject of kind ServiceAccount (`allServiceAccounts`).
    AllServiceAccounts,
    /// None (`none`).
    None,
}

/// Options of the NamespaceTransformer plugin; the `namespace:` field uses the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Options {
    /// Only set namespaces that are missing or empty (`unsetOnly`).
    pub unset_only: bool,
    pub subjects: SubjectMode,
}

/// The kustomization's `namespace:` field; `kept` hears of each object in which a field
/// already held the namespace.
pub(crate) fn apply(
    resources: &mut [Resource],
    namespace: &str,
    tables: &FieldSpecTables,
    kept: KeptIn<'_>,
) -> Result<()> {
    apply_telling(
        resources,
        namespace,
        &tables.namespace,
        tables,
        Options::default(),
        kept,
    )
}

/// The namespace transformer with explicit field specs (besides `metadata.namespace`, which is
/// always handled) and options; `tables` supplies the cluster-scoped kinds.
pub(crate) fn apply_with(
    resources: &mut [Resource],
    namespace: &str,
    specs: &[FieldSpec],
    tables: &FieldSpecTables,
    opts: Options,
) -> Result<()> {
    apply_telling(resources, namespace, specs, tables, opts, None)
}

fn apply_telling(
    resources: &mut [Resource],
    namespace: &str,
    specs: &[FieldSpec],
    tables: &FieldSpecTables,
    opts: Options,
    mut kept: KeptIn<'_>,
) -> Result<()> {
    if namespace.is_empty() {
        return Ok(());
    }
    let meta = FieldSpec {
        path: "metadata/namespace".into(),
        create: true,
        ..FieldSpec::default()
    };
    for (i, r) in resources.iter_mut().enumerate() {
        if r.node.as_map().is_none_or(|m| m.is_empty()) || helm_generated(&r.node, tables.kustomize)
        {
            continue;
        }
        r.store_previous_id();
        let mut same = false;
        apply_one(
            &mut r.node,
            namespace,
            specs,
            &meta,
            tables,
            opts,
            &mut same,
        )?;
        if same && let Some(kept) = kept.as_mut() {
            kept(i);
        }
    }
    check_unique(resources)
}

/// For field provenance: calls `f` with the path of each field the `namespace:` field's
/// transformer ([`apply`]) writes in `node` (the object after it ran), whether or not the
/// value changed: it runs the transformer on a copy with a namespace no field holds and
/// reports the fields that hold it then (`metadata.namespace`, binding subjects, a `v1`
/// Namespace's own name, the other places of the table; `api/filters/namespace`, `Filter`).
pub(crate) fn written(node: &Node, tables: &FieldSpecTables, f: &mut dyn FnMut(&[PathSeg])) {
    const MARK: &str = "\u{0}ply-namespace-mark";
    if node.as_map().is_none_or(|m| m.is_empty()) || helm_generated(node, tables.kustomize) {
        return;
    }
    let meta = FieldSpec {
        path: "metadata/namespace".into(),
        create: true,
        ..FieldSpec::default()
    };
    let mut copy = node.clone();
    if apply_one(
        &mut copy,
        MARK,
        &tables.namespace,
        &meta,
        tables,
        Options::default(),
        &mut false,
    )
    .is_err()
    {
        return;
    }
    // Only the maps the copy no longer shares with `node` (when it is frozen) were written.
    fn go(n: &Node, was: Option<&Node>, path: &mut Vec<PathSeg>, f: &mut dyn FnMut(&[PathSeg])) {
        match n.unspelled() {
            Node::Map(m) => {
                let old = was.and_then(Node::as_map);
                if old.is_some_and(|o| o.shares_with(m)) {
                    return;
                }
                for (k, v) in m.iter() {
                    path.push(PathSeg::Key(k.to_string()));
                    go(v, old.and_then(|o| o.get(k)), path, f);
                    path.pop();
                }
            }
            Node::Seq(items) => {
                let old = match was.map(Node::unspelled) {
                    Some(Node::Seq(o)) => Some(o),
                    _ => None,
                };
                for (i, v) in items.iter().enumerate() {
                    path.push(PathSeg::Index(i));
                    go(v, old.and_then(|o| o.get(i)), path, f);
                    path.pop();
                }
            }
            other => {
                if other.as_str() == Some(MARK) {
                    f(path);
                }
            }
        }
    }
    go(&copy, Some(node), &mut Vec::new(), f);
}

/// Sets the namespace in one object; `same` is set when a field written held it already.
fn apply_one(
    node: &mut Node,
    namespace: &str,
    all_specs: &[FieldSpec],
    meta: &FieldSpec,
    tables: &FieldSpecTables,
    opts: Options,
    same: &mut bool,
) -> Result<()> {
    // What the object is, read before anything is set.
    let (is_v1, cluster_scoped, is_binding) = {
        let gvk = GvkRef::of(node);
        (
            node.str_at(&["apiVersion"]).unwrap_or("") == "v1",
            tables.is_cluster_scoped_parts(gvk.group, gvk.version, gvk.kind),
            gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding",
        )
    };
    let set = &mut |n: &mut Node| {
        // `unsetOnly` keeps a non-empty value (kyaml's `SetEntryIfEmpty`).
        if opts.unset_only
            && n.scalar_text()
                .is_some_and(|t| !t.is_empty() && !n.is_null())
        {
            return Ok(());
        }
        *same |= n.as_str() == Some(namespace);
        *n = Node::str(namespace);
        Ok(())
    };
    // metadata.namespace is handled here, not through the table: only for objects that are
    // not known to be cluster-scoped (`metaNamespaceHack`). `metadata/name` entries apply to
    // apiVersion `v1` only (`removeUnneededMetaFieldSpecs`).
    let mut specs: Vec<&FieldSpec> = all_specs
        .iter()
        .filter(|s| s.path != "metadata/namespace")
        .filter(|s| is_v1 || s.path != "metadata/name")
        .collect();
    if !cluster_scoped {
        fieldspec::apply(node, meta, Create::Scalar, set)?;
    }
    if is_binding {
        let is_rb =
            |k: &Option<String>| matches!(k.as_deref(), Some("RoleBinding" | "ClusterRoleBinding"));
        specs.retain(|s| !(is_rb(&s.kind) && s.path == "subjects/namespace"));
        set_subjects(node, opts.subjects, set)?;
    }
    for spec in specs {
        fieldspec::apply(node, spec, Create::Scalar, set).map_err(|mut e| {
            e.message = format!("namespace transformation failed: {}", e.message);
            e
        })?;
    }
    Ok(())
}

/// Sets the namespace of the binding's subjects that `mode` selects (`roleBindingHack`):
/// `defaultOnly` picks subjects named `default` (of any kind), `allServiceAccounts` subjects of
/// kind ServiceAccount.
fn set_subjects(
    node: &mut Node,
    mode: SubjectMode,
    set: &mut dyn FnMut(&mut Node) -> Result<()>,
) -> Result<()> {
    let (field, value) = match mode {
        SubjectMode::None => return Ok(()),
        SubjectMode::DefaultOnly => ("name", "default"),
        SubjectMode::AllServiceAccounts => ("kind", "ServiceAccount"),
    };
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
            && m.get(field).and_then(Node::as_str) == Some(value)
        {
            set(m.entry("namespace".to_string()).or_insert(Node::Null))?;
        }
    }
    Ok(())
}

/// After the namespace changes no two objects may share an id (kustomize compares namespaces
/// with `""` and `default` as equal).
fn check_unique(resources: &[Resource]) -> Result<()> {
    let mut seen: FastMap<(&str, &str, &str, &str, &str), usize> = FastMap::default();
    seen.reserve(resources.len());
    for (i, r) in resources.iter().enumerate() {
        let gvk = GvkRef::of(&r.node);
        let ns = match r.namespace() {
            "" => "default",
            ns => ns,
        };
        if let Some(j) = seen.insert((gvk.group, gvk.version, gvk.kind, ns, r.name()), i) {
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
                    r.id()
                ),
            )
            .at_opt(r.origin.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    /// For field provenance, `apply` tells the objects in which a field it wrote held the
    /// namespace already: a ConfigMap in it, and a RoleBinding whose subject is (its own
    /// namespace changes); not an object it moves.
    #[test]
    fn tells_the_objects_that_held_the_namespace() {
        let tables = FieldSpecTables::builtin().unwrap();
        let doc = |text: &str| Resource::new(parse_one(text).unwrap(), None);
        let mut rs = vec![
            doc("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: prod\n"),
            doc("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: dev\n"),
            doc(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: r\nsubjects:\n- kind: ServiceAccount\n  name: default\n  namespace: prod\n",
            ),
        ];
        let mut kept = Vec::new();
        let mut tell = |i: usize| kept.push(i);
        apply(&mut rs, "prod", &tables, Some(&mut tell)).unwrap();
        assert_eq!(kept, [0, 2]);
        assert_eq!(rs[1].namespace(), "prod");
    }
}
