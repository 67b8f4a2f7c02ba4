//! Resource identity as the accumulation checks it: two resources conflict when their current
//! group, version, kind and name are equal and their effective namespaces are equal (no
//! namespace and `default` are the same; cluster-scoped kinds have none) — kustomize's
//! `ResId.Equals` (`kyaml/resid/resid.go`) used by `resWrangler.Append`.

use std::hash::BuildHasher as _;

use crate::fasthash::{FastBuild, FastMap};

use crate::diag::{Error, ErrorKind, Result};
use crate::resource::{ClusterScoped, Gvk, IdRef, ResId, Resource, effective_namespace};

/// Decides which kinds are cluster-scoped (`resource::ClusterScoped`).
pub(super) type ScopeFn<'a> = ClusterScoped<'a>;

/// Whether two ids name the same object.
pub fn same_id(a: &ResId, b: &ResId, cluster_scoped: ScopeFn<'_>) -> bool {
    a.gvk == b.gvk
        && a.name == b.name
        && effective_namespace(&a.namespace, cluster_scoped(&a.gvk))
            == effective_namespace(&b.namespace, cluster_scoped(&b.gvk))
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

/// The ids of an accumulated set, kept while resources are appended (nothing renames them
/// in between): each append is a hash lookup, not a scan. The index holds hashes of ids, not
/// ids: a hit is confirmed against the resource it names, so no id is copied.
#[derive(Debug, Default)]
pub(super) struct IdIndex {
    /// Hash of an id (group, version, kind, effective namespace, name) → the resource with it.
    first: FastMap<u64, usize>,
    /// Resources whose id hashes like an earlier, different one's (a hash collision).
    more: Vec<(u64, usize)>,
    /// Reused to ask `cluster_scoped` about a kind without building a `Gvk` per resource.
    gvk: Gvk,
}

impl IdIndex {
    /// Indexes what `acc` holds.
    pub(super) fn new(acc: &[Resource], cluster_scoped: ScopeFn<'_>) -> IdIndex {
        let mut index = IdIndex::default();
        index.first.reserve(acc.len());
        for (i, r) in acc.iter().enumerate() {
            let id = r.id_ref();
            let (h, scoped) = index.hash(id, cluster_scoped);
            // A later resource with an id already indexed takes its place.
            match index.find(acc, h, id, scoped) {
                Some(Slot::First) => {
                    index.first.insert(h, i);
                }
                Some(Slot::More(k)) => {
                    if let Some(e) = index.more.get_mut(k) {
                        e.1 = i;
                    }
                }
                None => index.add(h, i),
            }
        }
        index
    }

    /// Appends `new` to `acc` (which this index describes); a resource whose id is already
    /// there is an error naming both places.
    pub(super) fn append_all(
        &mut self,
        acc: &mut Vec<Resource>,
        new: impl IntoIterator<Item = Resource>,
        cluster_scoped: ScopeFn<'_>,
    ) -> Result<()> {
        let new = new.into_iter();
        self.first.reserve(new.size_hint().0);
        acc.reserve(new.size_hint().0);
        for r in new {
            let id = r.id_ref();
            let (h, scoped) = self.hash(id, cluster_scoped);
            if let Some(slot) = self.find(acc, h, id, scoped) {
                let i = match slot {
                    Slot::First => self.first.get(&h).copied(),
                    Slot::More(k) => self.more.get(k).map(|e| e.1),
                };
                return Err(duplicate(i.and_then(|i| acc.get(i)), &r, &r.id()));
            }
            self.add(h, acc.len());
            acc.push(r);
        }
        Ok(())
    }

    /// The hash of `id` as the index keys it, and whether its kind is cluster-scoped.
    fn hash(&mut self, id: IdRef<'_>, cluster_scoped: ScopeFn<'_>) -> (u64, bool) {
        for (field, part) in [
            (&mut self.gvk.group, id.group),
            (&mut self.gvk.version, id.version),
            (&mut self.gvk.kind, id.kind),
        ] {
            field.clear();
            field.push_str(part);
        }
        let scoped = cluster_scoped(&self.gvk);
        let ns = effective_namespace(id.namespace, scoped);
        let h = FastBuild::default().hash_one((id.group, id.version, id.kind, ns, id.name));
        (h, scoped)
    }

    /// Where the resource of `acc` with the id `id` (of hash `h`, cluster-scoped or not) is
    /// recorded, if one is.
    fn find(&self, acc: &[Resource], h: u64, id: IdRef<'_>, scoped: bool) -> Option<Slot> {
        // A resource with the same group, version and kind has the same scope.
        let ns = effective_namespace(id.namespace, scoped);
        let same = |i: usize| {
            acc.get(i).is_some_and(|r| {
                let other = r.id_ref();
                other.group == id.group
                    && other.version == id.version
                    && other.kind == id.kind
                    && other.name == id.name
                    && effective_namespace(other.namespace, scoped) == ns
            })
        };
        let first = *self.first.get(&h)?;
        if same(first) {
            return Some(Slot::First);
        }
        self.more
            .iter()
            .position(|&(mh, i)| mh == h && same(i))
            .map(Slot::More)
    }

    fn add(&mut self, h: u64, i: usize) {
        match self.first.entry(h) {
            std::collections::hash_map::Entry::Occupied(_) => self.more.push((h, i)),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(i);
            }
        }
    }
}

/// Fails when two resources of `acc` have one id. kustomize finishes the root by rebuilding
/// its resource map (`KustTarget.IgnoreLocal` → `resmap.Factory.FromResourceSlice`), which
/// panics on such a pair ("may not add resource with an already registered id"); they arise
/// when patches or replacements rename two objects to one name.
pub(super) fn check_unique(acc: &[Resource], cluster_scoped: ScopeFn<'_>) -> Result<()> {
    let mut index = IdIndex::default();
    for (i, r) in acc.iter().enumerate() {
        let id = r.id_ref();
        let (h, scoped) = index.hash(id, cluster_scoped);
        if let Some(slot) = index.find(acc, h, id, scoped) {
            let first = match slot {
                Slot::First => index.first.get(&h).copied(),
                Slot::More(k) => index.more.get(k).map(|e| e.1),
            };
            let mut e = duplicate(first.and_then(|f| acc.get(f)), r, &r.id());
            e.help = Some(
                "the transformations (a patch or replacement that renames) left two resources with one kind, name and namespace; kustomize crashes here: rename one of them differently"
                    .into(),
            );
            return Err(e);
        }
        index.add(h, i);
    }
    Ok(())
}

/// Fails when two resources of the patch step's list have one current id, as kustomize's
/// `resWrangler.ApplySmPatch` does after every strategic merge patch that goes through it (a
/// targeted `patches:` entry, each `patchesStrategicMerge` document): it rebuilds the list
/// with `appendAll`, whose `Append` refuses a second resource with one current id
/// (api/resmap/reswrangler.go). A generated object's current id has its name without the hash
/// suffix, which comes at the end of the build; a rename that a later patch undoes fails all
/// the same when such a patch comes between.
pub(super) fn check_unique_slots(
    slots: &[Option<Resource>],
    cluster_scoped: ScopeFn<'_>,
) -> Result<()> {
    let mut seen: FastMap<String, &Resource> = FastMap::default();
    for r in slots.iter().flatten() {
        let id = r.id();
        let key = format!(
            "{}|{}",
            id_string(&ResId {
                namespace: String::new(),
                ..id.clone()
            }),
            effective_namespace(&id.namespace, cluster_scoped(&id.gvk)),
        );
        if let Some(first) = seen.insert(key, r) {
            let mut e = duplicate(Some(first), r, &id);
            e.help = Some(
                "patches renamed two resources to one kind, name and namespace; kustomize fails \
                 when a strategic merge patch rebuilds its list of resources (a generated \
                 object's name counts without its hash suffix): rename one of them differently"
                    .into(),
            );
            return Err(e);
        }
    }
    Ok(())
}

/// Where [`IdIndex::find`] found an id.
enum Slot {
    First,
    More(usize),
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

    #[test]
    fn colliding_hashes_are_told_apart_by_the_ids() {
        let a = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n");
        let b = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n");
        let acc = vec![a, b];
        // Both recorded under one hash, as two different ids that collide would be.
        let mut index = IdIndex::default();
        index.add(7, 0);
        index.add(7, 1);
        assert!(matches!(
            index.find(&acc, 7, acc[0].id_ref(), false),
            Some(Slot::First)
        ));
        assert!(matches!(
            index.find(&acc, 7, acc[1].id_ref(), false),
            Some(Slot::More(0))
        ));
        let c = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
        assert!(index.find(&acc, 7, c.id_ref(), false).is_none());
        assert!(index.find(&acc, 8, acc[0].id_ref(), false).is_none());
    }
}
