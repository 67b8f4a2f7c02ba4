//! The id index of one `apply_all`: where a patch's targets are looked up (by any id an
//! object had, or by an exact name) without scanning every object, built only when many
//! patches need it.

use crate::fasthash::FastMap;

use crate::resource::{IdRef, ResId, Resource, effective_namespace};

use super::*;

/// How many untargeted strategic-merge documents (or exact-name targets) one `apply_all` may
/// have before their targets are found through the id maps (the name map) of [`Index`] rather
/// than by comparing every id of every resource (testing every resource). Hashing every id costs far more than comparing it (several thousand
/// instructions against a few dozen), and an overlay deep in a stack of renaming overlays has
/// a previous id per level on every object: with a few such patches per level the scan is the
/// cheaper one, and building the maps only pays off for many.
pub(super) const SCAN_LIMIT: usize = 32;

/// Where a patch's targets are looked up. Untargeted patches find resources by any id they had
/// (current and previous, kustomize's `resWrangler.GetMatchingResourcesByAnyId`); a target
/// with an exact name (no regex metacharacters, so the anchored pattern matches only that
/// string) reads the resources that have that name as their original or current name. Both
/// maps are built only when first needed, hold a superset of the true matches (an entry is
/// never removed when a resource is renamed or deleted), and every candidate is checked again
/// with the same test a scan applies, in slot order: the answer is always the scan's.
pub(super) struct Index {
    /// Resources by every id they had, when the patches have more than [`SCAN_LIMIT`]
    /// untargeted documents. Ids match as kustomize's `ResId.Equals` compares them: group,
    /// version, kind and name, and the effective namespace (none for a cluster-scoped kind,
    /// `default` for an empty one). Whether a kind is cluster-scoped is asked only at lookup:
    /// `namespaced` is keyed with the namespace, `cluster` without it.
    ids: Option<IdMaps>,
    /// Resources by their original and current names, from the first exact-name target on.
    names: Option<FastMap<String, Vec<usize>>>,
    /// Whether `names` may be built: for a few targets a scan costs less.
    use_names: bool,
    /// Key buffer reused between calls.
    scratch: Vec<u8>,
}

struct IdMaps {
    namespaced: FastMap<Vec<u8>, Vec<usize>>,
    cluster: FastMap<Vec<u8>, Vec<usize>>,
}

/// Appends `part` to an index key, after its length (so that no two ids share a key).
fn push_part(key: &mut Vec<u8>, part: &str) {
    key.extend_from_slice(&part.len().to_le_bytes());
    key.extend_from_slice(part.as_bytes());
}

/// The key of `id` without its namespace in `key`.
fn cluster_key(key: &mut Vec<u8>, id: IdRef<'_>) {
    key.clear();
    for part in [id.group, id.version, id.kind, id.name] {
        push_part(key, part);
    }
}

/// The key of `id` with its namespace (`default` for none) in `key`.
fn namespaced_key(key: &mut Vec<u8>, id: IdRef<'_>) {
    cluster_key(key, id);
    push_part(key, effective_namespace(id.namespace, false));
}

/// Records slot `i` under `key` (once).
fn record(map: &mut FastMap<Vec<u8>, Vec<usize>>, key: &[u8], i: usize) {
    match map.get_mut(key) {
        Some(slots) => {
            if !slots.contains(&i) {
                slots.push(i);
            }
        }
        None => {
            map.insert(key.to_vec(), vec![i]);
        }
    }
}

/// Whether `a` and `b` are the same id as kustomize's `ResId.Equals` decides, `cluster`
/// telling whether their kind is cluster-scoped (then namespaces are not compared).
fn same_id(a: IdRef<'_>, b: IdRef<'_>, cluster: bool) -> bool {
    a.name == b.name
        && a.kind == b.kind
        && a.group == b.group
        && a.version == b.version
        && (cluster
            || effective_namespace(a.namespace, false) == effective_namespace(b.namespace, false))
}

/// Whether `r` has (or had) the id `id`.
pub(super) fn has_any_id(r: &Resource, id: IdRef<'_>, cluster: bool) -> bool {
    r.prev_ids
        .iter()
        .map(ResId::borrowed)
        .chain([r.id_ref()])
        .any(|own| same_id(own, id, cluster))
}

/// Whether a target's name is matched only by itself: no regex metacharacters.
pub(super) fn exact_name(name: &str) -> bool {
    crate::pattern::is_simple(name) && !name.contains('.')
}

/// How many of `patches` have a target with an exact name.
pub(super) fn exact_targets(patches: &[Patch]) -> usize {
    patches
        .iter()
        .filter(|p| {
            p.target
                .as_ref()
                .and_then(|t| t.name.as_deref())
                .is_some_and(|n| !n.is_empty() && exact_name(n))
        })
        .count()
}

/// How many strategic-merge documents of `patches` find their target by id.
pub(super) fn untargeted_documents(patches: &[Patch]) -> usize {
    patches
        .iter()
        .map(|p| match (&p.body, &p.target) {
            (Body::Smp(_), Some(_)) if p.flavor == Flavor::Patch => 0,
            (Body::Smp(docs), _) => docs.len(),
            (Body::Json(_) | Body::Nothing, _) => 0,
        })
        .sum()
}

impl Index {
    /// An index over `resources`, with id maps when `id_maps` (else untargeted patches scan)
    /// and a name map, at the first exact-name target, when `name_map` (else targets scan).
    pub(super) fn new(resources: &[Option<Resource>], id_maps: bool, name_map: bool) -> Index {
        let mut idx = Index {
            ids: None,
            names: None,
            use_names: name_map,
            scratch: Vec::new(),
        };
        if id_maps {
            idx.ids = Some(IdMaps {
                namespaced: FastMap::default(),
                cluster: FastMap::default(),
            });
            for (i, r) in resources.iter().enumerate() {
                if let Some(r) = r {
                    idx.add(i, r);
                }
            }
        }
        idx
    }

    /// Records the ids and names `r` (at slot `i`) has now, after a change.
    pub(super) fn add(&mut self, i: usize, r: &Resource) {
        if let Some(maps) = &mut self.ids {
            for id in r.prev_ids.iter().map(ResId::borrowed).chain([r.id_ref()]) {
                namespaced_key(&mut self.scratch, id);
                record(&mut maps.namespaced, &self.scratch, i);
                cluster_key(&mut self.scratch, id);
                record(&mut maps.cluster, &self.scratch, i);
            }
        }
        if let Some(names) = &mut self.names {
            names.entry(r.name().to_string()).or_default().push(i);
        }
    }

    /// The slots of the resources that have or had the id `id`, in slot order.
    pub(super) fn by_any_id(
        &mut self,
        slots: &[Option<Resource>],
        id: &ResId,
        cluster_scoped: ScopeFn<'_>,
    ) -> Vec<usize> {
        let cluster = cluster_scoped(&id.gvk);
        let has = |i: usize| {
            slots
                .get(i)
                .and_then(Option::as_ref)
                .is_some_and(|r| has_any_id(r, id.borrowed(), cluster))
        };
        let Some(maps) = &self.ids else {
            return (0..slots.len()).filter(|&i| has(i)).collect();
        };
        let map = if cluster {
            cluster_key(&mut self.scratch, id.borrowed());
            &maps.cluster
        } else {
            namespaced_key(&mut self.scratch, id.borrowed());
            &maps.namespaced
        };
        let mut found: Vec<usize> = map
            .get(self.scratch.as_slice())
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
            .filter(|&i| has(i))
            .collect();
        found.sort_unstable();
        found
    }

    /// The slots that may hold a resource whose original or current name is `name`, in slot
    /// order (a superset: the caller tests each), or None when this index keeps no name map.
    pub(super) fn by_name(&mut self, slots: &[Option<Resource>], name: &str) -> Option<Vec<usize>> {
        if !self.use_names {
            return None;
        }
        let names = self.names.get_or_insert_with(|| {
            let mut names: FastMap<String, Vec<usize>> = FastMap::default();
            for (i, r) in slots.iter().enumerate() {
                let Some(r) = r else { continue };
                let (cur, org) = (r.name(), r.original_id_ref().name);
                names.entry(cur.to_string()).or_default().push(i);
                if org != cur {
                    names.entry(org.to_string()).or_default().push(i);
                }
            }
            names
        });
        let mut found = names.get(name).cloned().unwrap_or_default();
        found.sort_unstable();
        found.dedup();
        Some(found)
    }
}
