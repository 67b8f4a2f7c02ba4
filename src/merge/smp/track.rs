//! What a strategic merge patch (kustomize's dialect) wrote, for whoever records where a
//! field's value came from: each field of the merged object the patch sets, with its path in
//! the patch document, and the lists the patch replaced whole. Lists are matched as the merge
//! matches them, by the keys the schema gives ([`list_merge`]: `x-kubernetes-list-map-keys`,
//! else `x-kubernetes-patch-merge-key`), so an explanation and the merge never disagree on
//! which item a patch entry set. Pure: reads the patch, the merged object and the schema.

use crate::schema::{Cursor, PatchMeta};
use crate::yaml::Node;
use crate::yaml::path::PathSeg;

use super::DIRECTIVE;
use super::kyaml::kz_keys;

/// What a merge reports as it is tracked.
pub(crate) trait Tracker {
    /// The patch set the field at `out` of the merged object (a scalar, or an empty map or
    /// list) from its value at `patch` in the patch document. `key` when the field is a merge
    /// key of its list item: it picks the item rather than setting it. `same` when the field
    /// holds the patch's value as the patch wrote it (not a scalar that took the style of the
    /// value it replaced).
    fn wrote(&mut self, out: &[PathSeg], patch: &[PathSeg], key: bool, same: bool);
    /// The list at `out` is the patch's, as written: its items are not the ones that were
    /// there before (an atomic list, a list without a merge key, `$patch: replace`).
    fn replaced(&mut self, out: &[PathSeg]);
}

/// How the merge treats a list the schema describes with `meta` (the answer the merge itself
/// acts on, `kz_merge_list`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListMerge<'s> {
    /// Replaced by the patch's list (atomic, or merged without a key).
    Replaced,
    /// A set of scalars: the patch's values first, then the others.
    Primitive,
    /// Items matched by the values of these keys.
    Keyed(Vec<&'s str>),
}

/// How a list of `items` described by `meta` is merged.
pub(crate) fn list_merge<'s>(meta: &'s PatchMeta, items: &[Node]) -> ListMerge<'s> {
    if !meta.strategy.merge {
        return ListMerge::Replaced;
    }
    if items
        .first()
        .is_some_and(|n| !matches!(n, Node::Map(_) | Node::Seq(_)))
    {
        return ListMerge::Primitive;
    }
    match kz_keys(meta) {
        Some(keys) => ListMerge::Keyed(keys),
        None => ListMerge::Replaced,
    }
}

/// Reports to `t` what the patch document `patch` wrote into `merged` (the object after the
/// merge), walking both with the schema at `cur` (`Schema::kustomize_root` of the object's
/// kind). Directives (`$patch`, `$setElementOrder/…`, `$retainKeys`,
/// `$deleteFromPrimitiveList/…`) and deletions (a null whose field is gone) write nothing.
pub(crate) fn track(patch: &Node, merged: &Node, cur: Cursor<'_>, t: &mut dyn Tracker) {
    let mut w = Walk {
        out: Vec::new(),
        at: Vec::new(),
        t,
        literal: false,
    };
    w.value(patch, merged, cur, None, false);
}

struct Walk<'t> {
    out: Vec<PathSeg>,
    at: Vec<PathSeg>,
    t: &'t mut dyn Tracker,
    /// Inside a list replaced whole: the patch's items are set as written, nulls and
    /// directives included (merge2's `VisitList` returns the patch's node).
    literal: bool,
}

impl Walk<'_> {
    /// `p` (the patch's value) over `o` (the merged value); `meta` describes them when they
    /// are a field of a map; `key` when they are a merge key of a list item.
    fn value(&mut self, p: &Node, o: &Node, cur: Cursor<'_>, meta: Option<&PatchMeta>, key: bool) {
        match (p.unspelled(), o.unspelled()) {
            (Node::Map(pm), Node::Map(om)) if !pm.is_empty() => {
                let replace = pm.get(DIRECTIVE).and_then(Node::as_str) == Some("replace");
                if replace {
                    self.t.replaced(&self.out);
                }
                for (k, pv) in pm.iter() {
                    if !self.literal && k.starts_with('$') {
                        continue;
                    }
                    let Some(ov) = om.get(k) else { continue };
                    let (sub, meta) = cur.kustomize_field(k);
                    self.out.push(PathSeg::Key(k.to_string()));
                    self.at.push(PathSeg::Key(k.to_string()));
                    self.value(pv, ov, sub, Some(meta), false);
                    self.out.pop();
                    self.at.pop();
                }
            }
            (Node::Seq(pl), Node::Seq(ol)) if !pl.is_empty() => {
                let how = meta.map_or(ListMerge::Replaced, |m| list_merge(m, pl));
                self.list(pl, ol, cur.items(), &how);
            }
            (Node::Map(pm), _) if !pm.is_empty() => {}
            (Node::Seq(pl), _) if !pl.is_empty() => {}
            _ => self.t.wrote(&self.out, &self.at, key, p == o),
        }
    }

    fn list(&mut self, pl: &[Node], ol: &[Node], items: Cursor<'_>, how: &ListMerge<'_>) {
        let replaced = match how {
            ListMerge::Keyed(_) => {
                // `$patch: replace` as an item of a merged list replaces it whole.
                pl.iter().any(|e| {
                    e.get(DIRECTIVE).and_then(Node::as_str) == Some("replace")
                        && e.as_map().is_some_and(|m| m.len() == 1)
                })
            }
            ListMerge::Replaced => true,
            ListMerge::Primitive => false,
        };
        if replaced {
            self.t.replaced(&self.out);
        }
        // Later items first: where two set one field, the later one's value is the one kept.
        for (j, item) in pl.iter().enumerate().rev() {
            let found = match how {
                // Matched by its keys even inside a list given whole: the merge walks it with
                // itself and collapses items with the same keys.
                ListMerge::Keyed(keys) => ol.iter().position(|e| picks(item, e, keys)),
                ListMerge::Replaced => (j < ol.len()).then_some(j),
                ListMerge::Primitive => ol.iter().position(|e| e == item),
            };
            let Some(i) = found else { continue };
            self.out.push(PathSeg::Index(i));
            self.at.push(PathSeg::Index(j));
            match (how, item.unspelled(), ol[i].unspelled()) {
                (ListMerge::Keyed(keys), Node::Map(pm), Node::Map(om)) if !replaced => {
                    for (k, pv) in pm.iter() {
                        if k.starts_with('$') {
                            continue;
                        }
                        let Some(ov) = om.get(k) else { continue };
                        let (sub, meta) = items.kustomize_field(k);
                        self.out.push(PathSeg::Key(k.to_string()));
                        self.at.push(PathSeg::Key(k.to_string()));
                        self.value(pv, ov, sub, Some(meta), keys.contains(&k.as_str()));
                        self.out.pop();
                        self.at.pop();
                    }
                }
                _ => {
                    let outer = self.literal;
                    self.literal = outer || replaced;
                    self.value(item, &ol[i], items, None, false);
                    self.literal = outer;
                }
            }
            self.out.pop();
            self.at.pop();
        }
    }
}

/// Whether the patch's list item `p` picks the item `o`: `p` has a value for the first key,
/// and `o` has `p`'s value for each key `p` has (kustomize matches by the keys an item gives,
/// `kz_validate_keys`).
fn picks(p: &Node, o: &Node, keys: &[&str]) -> bool {
    p.get(keys[0]).is_some()
        && keys.iter().all(|k| match p.get(k) {
            Some(v) => o.get(k) == Some(v),
            None => true,
        })
}

/// Whether two list items are maps with a value for the first key and the same values (or
/// none) for each key.
fn same_values(a: &Node, b: &Node, keys: &[&str]) -> bool {
    let (Some(a), Some(b)) = (a.as_map(), b.as_map()) else {
        return false;
    };
    a.get(keys[0]).is_some() && keys.iter().all(|k| a.get(k) == b.get(k))
}

/// The values of `keys` in a list item: `None` for a key it lacks, or when it is no map or
/// lacks the first key.
fn key_values(e: &Node, keys: &[&str]) -> Option<Vec<Option<Node>>> {
    e.as_map()?.get(keys[0])?;
    Some(keys.iter().map(|k| e.get(k).cloned()).collect())
}

/// For each item of the merged list `now`, the position of the item of `last` (the list
/// before the step) it is, matched by the keys of `how`; `None` for every item when the list
/// was replaced whole; `None` overall when the items did not move or cannot be told apart
/// (an item without the keys, two items with the same values).
pub(crate) fn moves(
    last: &[Node],
    now: &[Node],
    how: &ListMerge<'_>,
) -> Option<Vec<Option<usize>>> {
    let ListMerge::Keyed(keys) = how else {
        return None;
    };
    if last.is_empty() || now.is_empty() || !matches!(now[0], Node::Map(_)) {
        return None;
    }
    // Most lists kept their items in place: nothing collected then.
    let in_place =
        now.len() == last.len() && now.iter().zip(last).all(|(a, b)| same_values(a, b, keys));
    if in_place {
        return None;
    }
    let kx: Vec<Vec<Option<Node>>> = last
        .iter()
        .map(|e| key_values(e, keys))
        .collect::<Option<_>>()?;
    let ky: Vec<Vec<Option<Node>>> = now
        .iter()
        .map(|e| key_values(e, keys))
        .collect::<Option<_>>()?;
    let distinct = ky
        .iter()
        .enumerate()
        .all(|(i, a)| ky[..i].iter().all(|b| b != a));
    if !distinct {
        return None;
    }
    // Items with the same values collapse into one, at the first's position with the last's
    // content (kyaml's `ElementSetter`): the item now is the last of them.
    let moves: Vec<Option<usize>> = ky.iter().map(|v| kx.iter().rposition(|w| w == v)).collect();
    let same = moves
        .iter()
        .enumerate()
        .all(|(i, m)| *m == (i < kx.len()).then_some(i));
    (!same).then_some(moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Gvk;
    use crate::schema::Schema;
    use crate::yaml::parse::parse_one;

    #[derive(Default)]
    struct Seen {
        wrote: Vec<(String, String, bool)>,
        replaced: Vec<String>,
    }

    impl Tracker for Seen {
        fn wrote(&mut self, out: &[PathSeg], patch: &[PathSeg], key: bool, _same: bool) {
            self.wrote.push((text(out), text(patch), key));
        }
        fn replaced(&mut self, out: &[PathSeg]) {
            self.replaced.push(text(out));
        }
    }

    fn text(p: &[PathSeg]) -> String {
        p.iter()
            .map(|s| match s {
                PathSeg::Key(k) => format!(".{k}"),
                PathSeg::Index(i) => format!("[{i}]"),
            })
            .collect()
    }

    fn tracked(schema: &Schema, gvk: &Gvk, patch: &str, object: &str) -> Seen {
        let (patch, object) = (parse_one(patch).unwrap(), parse_one(object).unwrap());
        let merged =
            super::super::apply_kustomize(object, &patch, schema, gvk, &[]).expect("merges");
        let mut seen = Seen::default();
        track(&patch, &merged, schema.kustomize_root(gvk), &mut seen);
        seen
    }

    fn pod() -> Gvk {
        Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into(),
        }
    }

    /// A list merged by a key the schema gives (containers by `name`, ports by
    /// `containerPort`) is matched by it wherever the merge put the item; the key picks the
    /// item, it is not written.
    #[test]
    fn keyed_items_are_found_by_the_schemas_keys() {
        let seen = tracked(
            &Schema::builtin(),
            &pod(),
            "spec:\n  containers:\n  - name: b\n    ports:\n    - containerPort: 90\n      name: metrics\n",
            "spec:\n  containers:\n  - name: a\n  - name: b\n    ports:\n    - containerPort: 80\n    - containerPort: 90\n",
        );
        let patch_at = |out: &str| {
            seen.wrote
                .iter()
                .find(|w| w.0 == out)
                .map(|w| (w.1.as_str(), w.2))
        };
        // kustomize puts the patch's items first: the container, and in it the port.
        assert_eq!(
            patch_at(".spec.containers[0].ports[0].name"),
            Some((".spec.containers[0].ports[0].name", false))
        );
        assert_eq!(
            patch_at(".spec.containers[0].ports[0].containerPort"),
            Some((".spec.containers[0].ports[0].containerPort", true))
        );
        assert_eq!(
            patch_at(".spec.containers[0].name"),
            Some((".spec.containers[0].name", true))
        );
        assert!(seen.replaced.is_empty(), "{:?}", seen.replaced);
    }

    /// An atomic list (a container's `args`) is replaced: reported, and each item written
    /// at its position.
    #[test]
    fn atomic_lists_are_replaced() {
        let seen = tracked(
            &Schema::builtin(),
            &pod(),
            "spec:\n  containers:\n  - name: a\n    args: [x, z]\n",
            "spec:\n  containers:\n  - name: a\n    args: [x, y, w]\n",
        );
        assert_eq!(seen.replaced, [".spec.containers[0].args"]);
        let mut args: Vec<&str> = seen
            .wrote
            .iter()
            .filter(|w| w.0.contains("args"))
            .map(|w| w.0.as_str())
            .collect();
        args.sort_unstable();
        assert_eq!(
            args,
            [".spec.containers[0].args[0]", ".spec.containers[0].args[1]"]
        );
    }

    /// A custom resource's list merged by `id` through an `openapi:` schema.
    #[test]
    fn a_custom_key_from_openapi() {
        let doc = parse_one(
            "definitions:\n  x.P:\n    type: object\n    properties:\n      spec:\n        type: object\n        properties:\n          steps:\n            type: array\n            items: {type: object, properties: {id: {type: string}, image: {type: string}}}\n            x-kubernetes-patch-merge-key: id\n            x-kubernetes-patch-strategy: merge\n    x-kubernetes-group-version-kind:\n    - {group: example.com, kind: P, version: v1}\n",
        )
        .unwrap();
        let schema = Schema::from_openapi(&doc).unwrap();
        let gvk = Gvk {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "P".into(),
        };
        let seen = tracked(
            &schema,
            &gvk,
            "spec:\n  steps:\n  - id: b\n    image: two\n",
            "spec:\n  steps:\n  - id: a\n    image: one\n  - id: b\n    image: one\n",
        );
        let at = |out: &str| seen.wrote.iter().find(|w| w.0 == out).map(|w| w.1.clone());
        let image = at(".spec.steps[0].image").or_else(|| at(".spec.steps[1].image"));
        assert_eq!(image.as_deref(), Some(".spec.steps[0].image"));
        assert_eq!(
            seen.wrote.iter().filter(|w| w.0.ends_with("image")).count(),
            1
        );
    }
}
