//! Values kustomize shares between several maps of one object ([`SharedEntry`]): what a
//! writer that changes a value in place does to every map holding it, and what a writer that
//! rebuilds a subtree does to the sharing.
//!
//! In kustomize (kyaml) every value is a `*yaml.Node`. The labels and annotations
//! transformers make one node per object and key (`filtersutil.SetEntry`, api/filters/
//! filtersutil/setters.go) and append that same node to every map of their field specs that
//! lacks the key (kyaml's `FieldSetter.Filter`, kyaml/yaml/fns.go, "create the field"). A
//! later writer that sets an existing field copies its value into the node in place
//! (`RNode.SetYNode`: `*rn.value = *node`), so every map sharing it changes: the labels and
//! annotations transformers again, a strategic merge patch (kyaml/yaml/walk/map.go ends each
//! field with a `FieldSetter`), replacements (api/filters/replacement, `setFieldValue`).
//! Writers that put new nodes in end the sharing of what they replace: a JSON 6902 patch (the
//! whole object goes through JSON, api/filters/patchjson6902), a strategic merge patch under a
//! replaced list or a `$patch: replace` map. Renames do not: kustomize's build annotations are
//! set one field at a time (`Resource.appendCsvAnnotation`, api/resource/resource.go).
//! YAML aliases in the input share nothing: kyaml's `deAnchor` copies each alias
//! (`CopyYNode`, kyaml/yaml/rnode.go), which ply's reader matches by expanding them.

use std::cmp::Ordering;

use super::Resource;
use crate::yaml::Node;
use crate::yaml::path::PathSeg;

/// A label or annotation entry that kustomize created in several maps of one object with a
/// single shared YAML node (see the module documentation); `transform::labels` records them
/// and replays its own settings, and [`Snapshot`] replays the other writers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedEntry {
    pub key: String,
    /// Paths of the maps (e.g. `metadata/labels`, `spec/template/metadata/labels`).
    pub maps: Vec<Vec<PathSeg>>,
}

impl SharedEntry {
    fn value<'a>(&self, node: &'a Node, map: &[PathSeg]) -> Option<&'a Node> {
        node_at(node, map)?.as_map()?.get(self.key.as_str())
    }
}

/// The values of an object's shared entries before a writer runs; [`Snapshot::replay_patch`]
/// and [`Snapshot::replay_writes`] afterwards give every map of an entry the value the writer
/// wrote into one of them.
pub(crate) struct Snapshot {
    /// Per entry, per map: its value before (None when absent).
    before: Vec<Vec<Option<Node>>>,
}

/// What a writer did to one map's entry of a shared node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Touch {
    /// Left the node as it was: it still holds the shared node.
    Kept,
    /// Set the value in place: every map holding the node sees it.
    Written,
    /// Put a new node there (or removed it): it leaves the entry.
    Replaced,
}

impl Snapshot {
    /// Records the shared values of `r` (nothing when it has none).
    pub(crate) fn take(r: &Resource) -> Snapshot {
        Snapshot {
            before: r
                .shared_entries
                .iter()
                .map(|e| {
                    e.maps
                        .iter()
                        .map(|m| e.value(&r.node, m).cloned())
                        .collect()
                })
                .collect(),
        }
    }

    /// After a strategic merge patch `patch`: a value the patch sets in a map it merges into
    /// is written in place (kyaml/yaml/walk/map.go ends each field with a `FieldSetter`);
    /// under a list (merged by key or replaced) or a `$patch: replace` map, the patch's own
    /// nodes take the place of the object's. When the patch writes one shared node in
    /// several maps, the last write in kyaml's walk order stays (fields in sorted order,
    /// `walk.Walker.fieldNames`).
    pub(crate) fn replay_patch(self, r: &mut Resource, patch: &Node) {
        self.replay(r, true, |map, key, _, _| patch_touch(patch, map, key));
    }

    /// After a writer that copies `value` into the fields at `target` (replacements:
    /// `setFieldValue` in api/filters/replacement copies the value, then `SetYNode` writes it
    /// into the existing node). A scalar written there is written in place, into every map
    /// holding the node; a map or list written there brings copies of its own entries, so the
    /// maps under it leave their entries. `target` is the field path when it names one field
    /// by keys alone; else a changed value tells what was written.
    pub(crate) fn replay_writes(self, r: &mut Resource, target: Option<&[PathSeg]>, value: &Node) {
        let scalar = !matches!(value, Node::Map(_) | Node::Seq(_));
        self.replay(r, false, |map, key, old, now| {
            let written = match target {
                Some(t) => {
                    let under = t.len() <= map.len() + 1
                        && t.iter()
                            .zip(map.iter().chain([&PathSeg::Key(key.to_string())]))
                            .all(|(a, b)| a == b);
                    under && (!scalar || t.len() == map.len() + 1)
                }
                None => !same_scalar(old, now),
            };
            match (written, scalar) {
                (false, _) => Touch::Kept,
                (true, true) => Touch::Written,
                (true, false) => Touch::Replaced,
            }
        });
    }

    fn replay(
        self,
        r: &mut Resource,
        walk_order: bool,
        touch: impl Fn(&[PathSeg], &str, &Node, &Node) -> Touch,
    ) {
        let Resource {
            node,
            shared_entries,
            ..
        } = r;
        for (entry, before) in shared_entries.iter_mut().zip(self.before) {
            let key = entry.key.as_str();
            let touches: Vec<Touch> = entry
                .maps
                .iter()
                .zip(&before)
                .map(|(map, old)| match (old, entry.value(node, map)) {
                    (Some(old), Some(now)) => touch(map, key, old, now),
                    _ => Touch::Replaced,
                })
                .collect();
            let mut winner: Option<usize> = None;
            for (i, t) in touches.iter().enumerate() {
                if *t != Touch::Written {
                    continue;
                }
                winner = match winner {
                    Some(w) if !walk_order => Some(w),
                    Some(w) if walk_cmp(&entry.maps[w], &entry.maps[i]) == Ordering::Greater => {
                        Some(w)
                    }
                    _ => Some(i),
                };
            }
            if let Some(w) = winner
                && let (Some(Some(shared)), Some(value)) =
                    (before.get(w), entry.value(node, &entry.maps[w]).cloned())
            {
                for ((map, old), t) in entry.maps.iter().zip(&before).zip(&touches) {
                    // A map whose value differs from the writer's was not holding its node.
                    if *t == Touch::Replaced || old.as_ref().is_none_or(|o| !same_scalar(o, shared))
                    {
                        continue;
                    }
                    if let Some(v) = node_at_mut(node, map)
                        .and_then(Node::as_map_mut)
                        .and_then(|m| m.get_mut(key))
                    {
                        *v = value.clone();
                    }
                }
            }
            let mut touches = touches.into_iter();
            entry
                .maps
                .retain(|_| touches.next().is_some_and(|t| t != Touch::Replaced));
        }
        shared_entries.retain(|e| e.maps.len() > 1);
    }
}

/// What the strategic merge patch `patch` does to `key` of the map at `map`.
fn patch_touch(patch: &Node, map: &[PathSeg], key: &str) -> Touch {
    let replaces = |n: &Node| {
        n.as_map()
            .and_then(|m| m.get("$patch"))
            .is_some_and(|d| *d == Node::str("replace"))
    };
    let mut cur = patch;
    for step in map {
        let PathSeg::Key(k) = step else {
            // The patch reaches into a list: kustomize either replaces it or merges items
            // found by key; either way ply cannot tell that the node stayed.
            return Touch::Replaced;
        };
        if replaces(cur) {
            return Touch::Replaced;
        }
        match cur.as_map().and_then(|m| m.get(k.as_str())) {
            None => return Touch::Kept,
            Some(next @ Node::Map(_)) => cur = next,
            Some(_) => return Touch::Replaced,
        }
    }
    if replaces(cur) {
        return Touch::Replaced;
    }
    match cur.as_map().and_then(|m| m.get(key)) {
        None => Touch::Kept,
        Some(_) => Touch::Written,
    }
}

impl Resource {
    /// The writer rebuilt the whole object (a JSON 6902 patch): nothing is shared any more.
    pub fn unshare_all(&mut self) {
        self.shared_entries.clear();
    }
}

/// Scalars compared with their spelling (a value written as `True` over `true` is a write).
fn same_scalar(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Spelled(x), Node::Spelled(y)) => x == y,
        (Node::Spelled(_), _) | (_, Node::Spelled(_)) => false,
        _ => a == b,
    }
}

/// The order in which kyaml's walker visits two paths: keys sorted, list items in order.
fn walk_cmp(a: &[PathSeg], b: &[PathSeg]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (PathSeg::Key(x), PathSeg::Key(y)) => x.cmp(y),
            (PathSeg::Index(x), PathSeg::Index(y)) => x.cmp(y),
            (PathSeg::Key(_), PathSeg::Index(_)) => Ordering::Less,
            (PathSeg::Index(_), PathSeg::Key(_)) => Ordering::Greater,
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

pub(crate) fn node_at<'a>(node: &'a Node, path: &[PathSeg]) -> Option<&'a Node> {
    let mut cur = node;
    for step in path {
        cur = match step {
            PathSeg::Key(k) => cur.get(k)?,
            PathSeg::Index(i) => cur.as_seq()?.get(*i)?,
        };
    }
    Some(cur)
}

pub(crate) fn node_at_mut<'a>(node: &'a mut Node, path: &[PathSeg]) -> Option<&'a mut Node> {
    let mut cur = node;
    for step in path {
        cur = match step {
            PathSeg::Key(k) => cur.get_mut(k)?,
            PathSeg::Index(i) => cur.as_seq_mut()?.get_mut(*i)?,
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn key(k: &str) -> PathSeg {
        PathSeg::Key(k.to_string())
    }

    /// A Deployment whose `team` label is one node in metadata, selector and template, as
    /// `commonLabels` leaves it.
    fn shared() -> Resource {
        let mut r = Resource::new(
            parse_one(
                "kind: Deployment\nmetadata:\n  name: d\n  labels: {team: base}\nspec:\n  selector:\n    matchLabels: {team: base}\n  template:\n    metadata:\n      labels: {team: base}\n",
            )
            .unwrap(),
            None,
        );
        r.shared_entries.push(SharedEntry {
            key: "team".into(),
            maps: vec![
                vec![key("metadata"), key("labels")],
                vec![key("spec"), key("selector"), key("matchLabels")],
                vec![key("spec"), key("template"), key("metadata"), key("labels")],
            ],
        });
        r
    }

    fn teams(r: &Resource) -> Vec<Option<&str>> {
        r.shared_entries
            .first()
            .map(|e| e.maps.clone())
            .unwrap_or_else(|| shared().shared_entries[0].maps.clone())
            .iter()
            .map(|m| {
                node_at(&r.node, m)
                    .and_then(|n| n.get("team"))
                    .and_then(Node::as_str)
            })
            .collect()
    }

    #[test]
    fn patch_touch_follows_the_patch() {
        let patch = parse_one(
            "metadata:\n  labels: {team: x}\nspec:\n  template:\n    metadata:\n      labels: {$patch: replace, team: y}\n  volumeClaimTemplates: []\n",
        )
        .unwrap();
        let at = |p: &[&str]| p.iter().map(|k| key(k)).collect::<Vec<_>>();
        assert_eq!(
            patch_touch(&patch, &at(&["metadata", "labels"]), "team"),
            Touch::Written
        );
        assert_eq!(
            patch_touch(&patch, &at(&["metadata", "labels"]), "app"),
            Touch::Kept
        );
        assert_eq!(
            patch_touch(&patch, &at(&["spec", "selector", "matchLabels"]), "team"),
            Touch::Kept
        );
        assert_eq!(
            patch_touch(
                &patch,
                &at(&["spec", "template", "metadata", "labels"]),
                "team"
            ),
            Touch::Replaced
        );
        let mut claim = at(&["spec", "volumeClaimTemplates"]);
        claim.extend([PathSeg::Index(0), key("metadata"), key("labels")]);
        assert_eq!(patch_touch(&patch, &claim, "team"), Touch::Replaced);
    }

    /// Sets (or, `None`, removes) `team` in the `i`th map of [`shared`]: what a writer did.
    fn write(r: &mut Resource, i: usize, v: Option<&str>) {
        let path = shared().shared_entries[0].maps[i].clone();
        let map = node_at_mut(&mut r.node, &path)
            .and_then(Node::as_map_mut)
            .unwrap();
        match v {
            Some(v) => *map.get_mut("team").unwrap() = Node::str(v),
            None => drop(map.shift_remove("team")),
        }
    }

    /// A patch that sets the label in one map changes all three.
    #[test]
    fn a_patched_value_shows_in_every_map() {
        let mut r = shared();
        let patch = parse_one("metadata:\n  labels: {team: top}\n").unwrap();
        let snap = Snapshot::take(&r);
        write(&mut r, 0, Some("top"));
        snap.replay_patch(&mut r, &patch);
        assert_eq!(teams(&r), vec![Some("top"); 3]);
    }

    /// Two writes of one node in one patch: the later in kyaml's walk (spec after metadata).
    #[test]
    fn the_last_write_in_walk_order_stays() {
        let mut r = shared();
        let patch = parse_one(
            "metadata:\n  labels: {team: m}\nspec:\n  selector:\n    matchLabels: {team: s}\n",
        )
        .unwrap();
        let snap = Snapshot::take(&r);
        write(&mut r, 0, Some("m"));
        write(&mut r, 1, Some("s"));
        snap.replay_patch(&mut r, &patch);
        assert_eq!(teams(&r), vec![Some("s"); 3]);
    }

    /// A removed key leaves the entry; a map replaced by the patch leaves it too and keeps
    /// its own value.
    #[test]
    fn removed_and_replaced_maps_leave_the_entry() {
        let mut r = shared();
        let patch = parse_one(
            "metadata:\n  labels: {team: null}\nspec:\n  template:\n    metadata:\n      labels: {$patch: replace, team: own}\n",
        )
        .unwrap();
        let snap = Snapshot::take(&r);
        write(&mut r, 0, None);
        write(&mut r, 2, Some("own"));
        snap.replay_patch(&mut r, &patch);
        assert!(r.shared_entries.is_empty(), "one map left: nothing shared");
        assert_eq!(teams(&r), vec![None, Some("base"), Some("own")]);
    }

    /// An in-place writer (a replacement) changes every map still holding the value; a map
    /// holding another value was not sharing the node.
    #[test]
    fn writes_reach_maps_that_hold_the_node() {
        let mut r = shared();
        write(&mut r, 1, Some("other"));
        let snap = Snapshot::take(&r);
        write(&mut r, 0, Some("new"));
        snap.replay_writes(&mut r, None, &Node::str("new"));
        assert_eq!(teams(&r), vec![Some("new"), Some("other"), Some("new")]);
        r.unshare_all();
        assert!(r.shared_entries.is_empty());
    }

    /// A replacement into a named field: a scalar there is written in place; a map written
    /// over a labels map brings copies, so that map leaves the entry and nothing follows.
    #[test]
    fn writes_at_a_named_field() {
        let mut r = shared();
        let snap = Snapshot::take(&r);
        write(&mut r, 2, Some("t"));
        let target = [
            key("spec"),
            key("template"),
            key("metadata"),
            key("labels"),
            key("team"),
        ];
        snap.replay_writes(&mut r, Some(&target), &Node::str("t"));
        assert_eq!(teams(&r), vec![Some("t"); 3]);

        let mut r = shared();
        let snap = Snapshot::take(&r);
        write(&mut r, 0, Some("copied"));
        let target = [key("metadata"), key("labels")];
        let map = parse_one("team: copied\n").unwrap();
        snap.replay_writes(&mut r, Some(&target), &map);
        assert_eq!(
            r.node.get_path(&["metadata", "labels", "team"]),
            Some(&Node::str("copied"))
        );
        // The selector and template still share theirs.
        assert_eq!(r.shared_entries[0].maps.len(), 2);
        assert_eq!(teams(&r), vec![Some("base"), Some("base")]);
    }
}
