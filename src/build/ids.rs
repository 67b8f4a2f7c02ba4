//! Resource identity as the accumulation checks it: two resources conflict when their current
//! group, version, kind and name are equal and their effective namespaces are equal (no
//! namespace and `default` are the same; cluster-scoped kinds have none) — kustomize's
//! `ResId.Equals` (`kyaml/resid/resid.go`) used by `resWrangler.Append`.

use std::borrow::Cow;

use crate::fasthash::FastMap;

use crate::diag::{Error, ErrorKind, Result};
use crate::resource::{Gvk, IdRef, ResId, Resource};

/// Decides which kinds are cluster-scoped.
pub type ScopeFn<'a> = &'a dyn Fn(&Gvk) -> bool;

/// The namespace used for equality: `None` for cluster-scoped kinds, `default` for none.
fn effective_namespace<'a>(namespace: &'a str, gvk: &Gvk, cluster_scoped: ScopeFn<'_>) -> &'a str {
    if cluster_scoped(gvk) {
        "\u{0}cluster"
    } else if namespace.is_empty() {
        "default"
    } else {
        namespace
    }
}

/// Whether two ids name the same object.
pub fn same_id(a: &ResId, b: &ResId, cluster_scoped: ScopeFn<'_>) -> bool {
    a.gvk == b.gvk
        && a.name == b.name
        && effective_namespace(&a.namespace, &a.gvk, cluster_scoped)
            == effective_namespace(&b.namespace, &b.gvk, cluster_scoped)
}

/// kustomize's text for an id in its messages (`ResId.String`):
/// `ConfigMap.v1.[noGrp]/name.[noNs]`.
pub fn id_string(id: &ResId) -> String {
    let group = if id.gvk.group.is_empty() {
        "[noGrp]"
    } else {
        &id.gvk.group
    };
    let ns = if id.namespace.is_empty() {
        "[noNs]"
    } else {
        &id.namespace
    };
    let version = if id.gvk.version.is_empty() {
        "[noVer]"
    } else {
        &id.gvk.version
    };
    format!("{}.{version}.{group}/{}.{ns}", id.gvk.kind, id.name)
}

/// Group/version/kind, effective namespace, name. The namespace borrows the fixed texts
/// (`default`, cluster-scoped) and owns only a real namespace.
type Key = (Gvk, Cow<'static, str>, String);

fn key(id: IdRef<'_>, cluster_scoped: ScopeFn<'_>) -> Key {
    let gvk = id.gvk();
    let ns = match effective_namespace(id.namespace, &gvk, cluster_scoped) {
        "\u{0}cluster" => Cow::Borrowed("\u{0}cluster"),
        "default" => Cow::Borrowed("default"),
        ns => Cow::Owned(ns.to_string()),
    };
    (gvk, ns, id.name.to_string())
}

/// The ids of an accumulated set, kept while resources are appended (nothing renames them
/// in between): each append is a hash lookup, not a scan.
#[derive(Debug, Default)]
pub struct IdIndex {
    ids: FastMap<Key, usize>,
}

impl IdIndex {
    /// Indexes what `acc` holds.
    pub fn new(acc: &[Resource], cluster_scoped: ScopeFn<'_>) -> IdIndex {
        IdIndex {
            ids: acc
                .iter()
                .enumerate()
                .map(|(i, r)| (key(r.id_ref(), cluster_scoped), i))
                .collect(),
        }
    }

    /// Appends `new` to `acc` (which this index describes); a resource whose id is already
    /// there is an error naming both places.
    pub fn append_all(
        &mut self,
        acc: &mut Vec<Resource>,
        new: impl IntoIterator<Item = Resource>,
        cluster_scoped: ScopeFn<'_>,
    ) -> Result<()> {
        for r in new {
            let k = key(r.id_ref(), cluster_scoped);
            if let Some(&i) = self.ids.get(&k) {
                return Err(duplicate(acc.get(i), &r, &r.id()));
            }
            self.ids.insert(k, acc.len());
            acc.push(r);
        }
        Ok(())
    }
}

fn duplicate(first: Option<&Resource>, second: &Resource, id: &ResId) -> Error {
    let mut e = Error::new(
        ErrorKind::DuplicateId,
        format!(
            "may not add resource with an already registered id: {}",
            id_string(id)
        ),
    )
    .at_opt(second.origin.clone())
    .label("this resource")
    .help("two resources with one kind, name and namespace: remove one, or rename one (namePrefix/nameSuffix in one of the kustomizations)");
    if let Some(loc) = first.and_then(|f| f.origin.clone()) {
        e = e.with_related(
            Error::new(ErrorKind::DuplicateId, "the id was first registered here")
                .at(loc)
                .label("first resource with this id"),
        );
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn res(text: &str) -> Resource {
        Resource::new(parse_one(text).unwrap(), None)
    }

    fn scope(g: &Gvk) -> bool {
        g.kind == "Namespace"
    }

    #[test]
    fn default_namespace_equals_none() {
        let a = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n");
        let b = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n");
        let c = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: other}\n");
        let mut acc = vec![a];
        let e = IdIndex::new(&acc, &scope)
            .append_all(&mut acc, [b], &scope)
            .unwrap_err();
        assert_eq!(
            e.message,
            "may not add resource with an already registered id: ConfigMap.v1.[noGrp]/x.default"
        );
        IdIndex::new(&acc, &scope)
            .append_all(&mut acc, [c], &scope)
            .unwrap();
        assert_eq!(acc.len(), 2);
    }

    #[test]
    fn cluster_scoped_ignore_namespace() {
        let a = res("apiVersion: v1\nkind: Namespace\nmetadata: {name: x, namespace: a}\n");
        let b = res("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n");
        assert!(same_id(&a.id(), &b.id(), &scope));
        let d = res("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n");
        assert!(!same_id(&a.id(), &d.id(), &scope));
    }
}
