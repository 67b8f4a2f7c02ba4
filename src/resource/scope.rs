//! Scopes and namespaces of ids as kustomize compares them: the one [`effective_namespace`]
//! (kustomize's `ResId.EffectiveNamespace`, `api/resid/resid.go`) and the one type that tells
//! which kinds are cluster-scoped ([`ClusterScoped`]; the table itself is the render's
//! `FieldSpecTables::is_cluster_scoped`). Every comparison, index and selection of ids by
//! namespace goes through here.

use super::Gvk;

/// kustomize's name for the namespace of a cluster-scoped object (`resid.TotallyNotANamespace`).
pub(crate) const NOT_NAMESPACED: &str = "_non_namespaceable_";

/// Tells which kinds are cluster-scoped (`FieldSpecTables::is_cluster_scoped`).
pub(crate) type ClusterScoped<'a> = &'a dyn Fn(&Gvk) -> bool;

/// kustomize's `ResId.EffectiveNamespace`: [`NOT_NAMESPACED`] for a cluster-scoped kind,
/// `default` for an empty namespace, else the namespace. With `cluster_scoped` false it is
/// the namespace ids compare by when the scope is handled apart (`ResId.Equals`).
#[inline]
pub(crate) fn effective_namespace(namespace: &str, cluster_scoped: bool) -> &str {
    if cluster_scoped {
        NOT_NAMESPACED
    } else if namespace.is_empty() {
        "default"
    } else {
        namespace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_default_and_cluster_scoped_has_none() {
        assert_eq!(effective_namespace("", false), "default");
        assert_eq!(effective_namespace("a", false), "a");
        assert_eq!(effective_namespace("a", true), NOT_NAMESPACED);
        assert_eq!(effective_namespace("", true), NOT_NAMESPACED);
    }
}
