//! JSON merge patch (RFC 7386) on [`Node`]: applying one, creating one, and the three-way JSON
//! merge patch kubectl apply sends for kinds without a schema (apimachinery's
//! `pkg/util/jsonmergepatch.CreateThreeWayJSONMergePatch`). Keys keep their order; no JSON
//! round trip.

use crate::yaml::{Map, Node};

use super::walk::{Path, class, same};
use super::{MergeError, MergeErrorKind};

/// Applies a merge patch: maps merge recursively, `null` deletes, anything else replaces.
pub fn apply(target: &Node, patch: &Node) -> Node {
    let mut out = target.clone();
    apply_in_place(&mut out, patch);
    out
}

fn apply_in_place(target: &mut Node, patch: &Node) {
    let Node::Map(pm) = patch else {
        *target = patch.clone();
        return;
    };
    if !matches!(target, Node::Map(_)) {
        *target = Node::empty_map();
    }
    let Node::Map(tm) = target else { return };
    for (k, v) in pm {
        if v.is_null() {
            tm.shift_remove(k);
        } else {
            let slot = tm.entry(k.clone()).or_insert(Node::Null);
            apply_in_place(slot, v);
        }
    }
}

/// The merge patch that turns `from` into `to` (evanphx/json-patch's `CreateMergePatch`):
/// changed and added keys with their new values, removed keys as `null`, unchanged maps left
/// out. Lists are compared whole.
pub fn create(from: &Map, to: &Map) -> Map {
    let mut out = Map::default();
    for (k, b) in to {
        match from.get(k) {
            None => {
                out.insert(k.clone(), b.clone());
            }
            Some(a) if class(a) != class(b) => {
                out.insert(k.clone(), b.clone());
            }
            Some(Node::Map(am)) => {
                if let Node::Map(bm) = b {
                    let d = create(am, bm);
                    if !d.is_empty() {
                        out.insert(k.clone(), Node::Map(d));
                    }
                }
            }
            Some(a) => {
                if !same(a, b) {
                    out.insert(k.clone(), b.clone());
                }
            }
        }
    }
    for k in from.keys() {
        if !to.contains_key(k) {
            out.insert(k.clone(), Node::Null);
        }
    }
    out
}

/// Keeps only the nulls (deletions) of a patch, or only its non-null values
/// (apimachinery's `keepOrDeleteNullInObj`). Explicitly empty maps are values.
pub(crate) fn keep_or_delete_null(m: &Map, keep_null: bool) -> Map {
    let mut out = Map::default();
    for (k, v) in m {
        match v {
            Node::Null => {
                if keep_null {
                    out.insert(k.clone(), Node::Null);
                }
            }
            Node::Map(sub) if sub.is_empty() => {
                if !keep_null {
                    out.insert(k.clone(), v.clone());
                }
            }
            Node::Map(sub) => {
                let f = keep_or_delete_null(sub, keep_null);
                if !f.is_empty() {
                    out.insert(k.clone(), Node::Map(f));
                }
            }
            _ => {
                if !keep_null {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}

/// apimachinery's `mergepatch.HasConflicts`: whether two patches set one field differently.
pub(crate) fn has_conflicts(left: &Node, right: &Node) -> bool {
    match (left, right) {
        (Node::Map(l), Node::Map(r)) => l
            .iter()
            .any(|(k, lv)| r.get(k).is_some_and(|rv| has_conflicts(lv, rv))),
        (Node::Map(_), _) => true,
        (Node::Seq(l), Node::Seq(r)) => {
            l.len() != r.len() || l.iter().zip(r).any(|(a, b)| has_conflicts(a, b))
        }
        (Node::Seq(_), _) => true,
        (l, r) => !(class(l) == class(r) && same(l, r)),
    }
}

/// The three-way JSON merge patch kubectl apply sends for kinds it has no schema for:
/// additions and changes from `current` to `modified`, deletions from `original` to `modified`.
pub fn create_three_way(
    original: &Node,
    modified: &Node,
    current: &Node,
) -> Result<Node, MergeError> {
    let empty = Map::default();
    let as_map = |n: &Node, what: &str| -> Result<Map, MergeError> {
        match n {
            Node::Null => Ok(empty.clone()),
            Node::Map(m) => Ok(m.clone()),
            other => Err(MergeError::new(
                MergeErrorKind::Invalid,
                &Path::ROOT,
                format!("the {what} object is a {}, not a map", other.kind_name()),
            )),
        }
    };
    let (o, m, c) = (
        as_map(original, "original")?,
        as_map(modified, "modified")?,
        as_map(current, "current")?,
    );
    let add_change = keep_or_delete_null(&create(&c, &m), false);
    let deletions = keep_or_delete_null(&create(&o, &m), true);
    let (a, d) = (Node::Map(add_change), Node::Map(deletions));
    if has_conflicts(&a, &d) {
        return Err(MergeError::new(
            MergeErrorKind::Conflict,
            &Path::ROOT,
            "the additions and the deletions of the three-way patch conflict",
        ));
    }
    Ok(apply(&d, &a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn y(s: &str) -> Node {
        parse_one(s).expect("yaml")
    }

    #[test]
    fn rfc7386_examples() {
        let target = y("{a: b, c: {d: e, f: g}}");
        let patch = y("{a: z, c: {f: null}}");
        assert_eq!(apply(&target, &patch), y("{a: z, c: {d: e}}"));
        assert_eq!(apply(&y("{a: [1]}"), &y("{a: {b: c}}")), y("{a: {b: c}}"));
        assert_eq!(apply(&y("[1, 2]"), &y("{a: b}")), y("{a: b}"));
        assert_eq!(apply(&y("{a: b}"), &y("[c]")), y("[c]"));
        assert_eq!(apply(&y("{e: null}"), &y("{a: 1}")), y("{e: null, a: 1}"));
        assert_eq!(
            apply(&y("{}"), &y("{a: {bb: {ccc: null}}}")),
            y("{a: {bb: {}}}")
        );
    }

    #[test]
    fn create_then_apply() {
        let a = y("{a: 1, b: {c: 2, d: 3}, e: [1]}");
        let b = y("{a: 1, b: {c: 4}, f: x}");
        let (Node::Map(am), Node::Map(bm)) = (&a, &b) else {
            panic!("maps")
        };
        let p = Node::Map(create(am, bm));
        assert_eq!(p, y("{b: {c: 4, d: null}, f: x, e: null}"));
        assert!(same(&apply(&a, &p), &b));
    }

    #[test]
    fn three_way() {
        let p = create_three_way(
            &y("{a: 1, b: 2}"),
            &y("{a: 1, c: 3}"),
            &y("{a: 5, b: 2, z: 9}"),
        )
        .expect("no conflict");
        // z is live-only: a JSON merge patch leaves it alone.
        assert!(same(&p, &y("{a: 1, b: null, c: 3}")), "{p:?}");
    }
}
