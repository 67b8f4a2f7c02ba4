//! kubectl apply's fallback for kinds it has no patch metadata for (custom resources,
//! aggregated APIs): a three-way JSON merge patch (RFC 7386), built and applied on [`Node`].
//! Mirrors `CreateThreeWayJSONMergePatch` in apimachinery `pkg/util/jsonmergepatch/patch.go`:
//! additions and changes come from current → modified (nulls dropped), deletions from
//! original → modified (nulls only); maps merge, lists are replaced whole.

use crate::diag::{Error, ErrorKind};
use crate::yaml::{Map, Node};

use super::engine::values_equal;

/// The patch kubectl would send.
pub(crate) fn three_way_patch(original: &Node, modified: &Node, current: &Node) -> Node {
    let mut changes = two_way(current, modified);
    drop_nulls(&mut changes);
    let mut deletions = two_way(original, modified);
    keep_only_nulls(&mut deletions);
    merge_patches(deletions, changes)
}

/// Applies kubectl's three-way JSON merge patch to `current`. Like kubectl, refuses a patch
/// that would change `apiVersion`, `kind` or `metadata.name` (its preconditions).
pub(crate) fn apply_three_way(
    original: &Node,
    modified: &Node,
    current: &Node,
) -> Result<Node, Error> {
    let patch = three_way_patch(original, modified, current);
    for path in [&["apiVersion"][..], &["kind"], &["metadata", "name"]] {
        if patch.get_path(path).is_some() {
            return Err(Error::new(
                ErrorKind::Patch,
                format!(
                    "the apply would change {}, which kubectl refuses (precondition failed)",
                    path.join(".")
                ),
            ));
        }
    }
    let mut out = current.clone();
    apply_merge_patch(&mut out, &patch);
    Ok(out)
}

/// RFC 7386 `CreateMergePatch(a, b)` for maps: what turns `a` into `b`.
fn two_way(a: &Node, b: &Node) -> Node {
    let (Node::Map(am), Node::Map(bm)) = (a, b) else {
        return b.clone();
    };
    let mut out = Map::default();
    for (k, bv) in bm {
        match am.get(k) {
            None => {
                out.insert(k.clone(), bv.clone());
            }
            Some(av) if values_equal(av, bv) => {}
            Some(av @ Node::Map(_)) if matches!(bv, Node::Map(_)) => {
                let sub = two_way(av, bv);
                if !matches!(&sub, Node::Map(m) if m.is_empty()) {
                    out.insert(k.clone(), sub);
                }
            }
            Some(_) => {
                out.insert(k.clone(), bv.clone());
            }
        }
    }
    for k in am.keys() {
        if !bm.contains_key(k) {
            out.insert(k.clone(), Node::Null);
        }
    }
    Node::Map(out)
}

/// Removes `null` entries of maps, recursively (`keepOrDeleteNullInJsonPatch(.., false)`).
fn drop_nulls(node: &mut Node) {
    if let Node::Map(m) = node {
        m.retain(|_, v| !v.is_null());
        for v in m.values_mut() {
            drop_nulls(v);
        }
    }
}

/// Keeps only `null` entries and the maps that lead to them (`keepOrDeleteNullInJsonPatch(.., true)`).
fn keep_only_nulls(node: &mut Node) {
    if let Node::Map(m) = node {
        for v in m.values_mut() {
            if matches!(v, Node::Map(_)) {
                keep_only_nulls(v);
            }
        }
        m.retain(|_, v| match v {
            Node::Null => true,
            Node::Map(sub) => !sub.is_empty(),
            _ => false,
        });
    }
}

/// `jsonpatch.MergePatch(deletions, changes)`: the changes applied onto the deletions.
fn merge_patches(mut deletions: Node, changes: Node) -> Node {
    apply_merge_patch(&mut deletions, &changes);
    deletions
}

/// RFC 7386 merge patch application.
pub(crate) fn apply_merge_patch(target: &mut Node, patch: &Node) {
    let Node::Map(pm) = patch else {
        *target = patch.clone();
        return;
    };
    if !matches!(target, Node::Map(_)) {
        *target = Node::empty_map();
    }
    let Node::Map(tm) = target else {
        return;
    };
    for (k, pv) in pm {
        if pv.is_null() {
            tm.shift_remove(k);
        } else if matches!(pv, Node::Map(_)) {
            let slot = tm.entry(k.clone()).or_insert(Node::Null);
            apply_merge_patch(slot, pv);
        } else {
            tm.insert(k.clone(), pv.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn p(s: &str) -> Node {
        parse_one(s).unwrap()
    }

    #[test]
    fn deletes_what_left_the_config_keeps_what_others_added() {
        let original = p("{kind: X, spec: {a: 1, b: 2, list: [1, 2]}}");
        let modified = p("{kind: X, spec: {a: 1, list: [3]}}");
        let current = p("{kind: X, spec: {a: 5, b: 2, c: 9, list: [1, 2]}, status: {s: 1}}");
        let out = apply_three_way(&original, &modified, &current).unwrap();
        assert_eq!(
            out,
            p("{kind: X, spec: {a: 1, c: 9, list: [3]}, status: {s: 1}}")
        );
    }

    #[test]
    fn three_way_of_identical_is_empty() {
        let x = p("{a: {b: [1]}, c: d}");
        assert_eq!(three_way_patch(&x, &x, &x), Node::empty_map());
    }

    #[test]
    fn name_change_is_refused() {
        let e = apply_three_way(
            &Node::empty_map(),
            &p("{metadata: {name: b}}"),
            &p("{metadata: {name: a}}"),
        )
        .unwrap_err();
        assert!(e.message.contains("metadata.name"));
    }
}
