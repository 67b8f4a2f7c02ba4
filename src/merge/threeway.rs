//! Strategic patch creation: the two-way patch (original → modified) and kubectl apply's
//! three-way patch (last-applied, desired, live) with apimachinery's conflict detection, plus
//! the apply preview `ply patch --last-applied` and `ply diff` use. Follows apimachinery's
//! `pkg/util/strategicpatch/patch.go` (`diffMaps`, `diffLists`, `CreateThreeWayMergePatch`,
//! `MergingMapsHaveConflicts`), written anew over `Node`. Kinds the schema does not know get
//! kubectl's JSON merge patch instead (`mergepatch::create_three_way`).

use crate::resource::Gvk;
use crate::schema::{Cursor, Schema, UnknownField};
use crate::yaml::{Map, Node};

use super::smp::{
    self, DELETE_FROM_PRIMITIVE_LIST, DIRECTIVE, Merger, RETAIN_KEYS, SET_ELEMENT_ORDER,
};
use super::walk::{Class, Path, class, go_fmt, same};
use super::{MergeError, MergeErrorKind as K, SmpOptions, mergepatch};

type R<T> = Result<T, MergeError>;

/// apimachinery's `DiffOptions`.
#[derive(Clone, Copy, Debug, Default)]
struct DiffOptions {
    ignore_deletions: bool,
    ignore_changes_and_additions: bool,
    set_element_order: bool,
    build_retain_keys: bool,
}

/// The two-way strategic patch that turns `original` into `modified` (what
/// `CreateTwoWayMergePatch` returns): changes and additions, `null` for removed fields,
/// `$patch: delete` for removed list elements, `$deleteFromPrimitiveList`,
/// `$setElementOrder` and `$retainKeys` where apimachinery emits them.
pub fn create_two_way(original: &Node, modified: &Node, schema: &Schema, gvk: &Gvk) -> R<Node> {
    let (o, m) = (as_map(original, "original")?, as_map(modified, "modified")?);
    let opts = DiffOptions {
        set_element_order: true,
        ..DiffOptions::default()
    };
    diff_maps(&o, &m, schema.root(gvk), opts, &Path::ROOT).map(Node::Map)
}

/// kubectl apply's three-way strategic patch: deletions of what left the desired config since
/// `original` (the last-applied configuration), and the additions and changes that take
/// `current` (the live object) to `modified` (the desired config). With `overwrite = false`, a
/// patch that changes a field the live object changed since `original` is a
/// [`MergeErrorKind::Conflict`](super::MergeErrorKind::Conflict) error, as in apimachinery;
/// kubectl apply passes `true`.
pub fn create(
    original: &Node,
    modified: &Node,
    current: &Node,
    schema: &Schema,
    gvk: &Gvk,
    overwrite: bool,
) -> R<Node> {
    create_at(original, modified, current, schema.root(gvk), overwrite)
}

fn create_at(
    original: &Node,
    modified: &Node,
    current: &Node,
    cur: Cursor<'_>,
    overwrite: bool,
) -> R<Node> {
    let o = as_map(original, "original")?;
    let m = as_map(modified, "modified")?;
    let c = as_map(current, "current")?;
    let root = Path::ROOT;
    let delta = diff_maps(
        &c,
        &m,
        cur,
        DiffOptions {
            ignore_deletions: true,
            set_element_order: true,
            ..DiffOptions::default()
        },
        &root,
    )?;
    let deletions = diff_maps(
        &o,
        &m,
        cur,
        DiffOptions {
            set_element_order: true,
            ignore_changes_and_additions: true,
            ..DiffOptions::default()
        },
        &root,
    )?;
    let patch = Merger::patches().merge_map(deletions, delta, cur, &root)?;
    if !overwrite {
        let changed = diff_maps(&o, &c, cur, DiffOptions::default(), &root)?;
        if let Some(path) = conflict(
            &Node::Map(patch.clone()),
            &Node::Map(changed),
            cur,
            "",
            None,
            &root,
        ) {
            return Err(MergeError {
                kind: K::Conflict,
                path,
                message:
                    "the patch changes a field whose live value was changed since the last apply"
                        .into(),
            });
        }
    }
    Ok(Node::Map(patch))
}

/// What kubectl apply would send and what the live object would become.
#[derive(Clone, Debug, PartialEq)]
pub struct Preview {
    pub patch: Node,
    pub result: Node,
    /// Whether the patch is a JSON merge patch (the kind has no schema) rather than a
    /// strategic one.
    pub json_merge: bool,
}

/// kubectl apply's client-side three-way merge, with overwrite: the patch from
/// (last-applied, desired, live) and the live object with it applied. Kinds the schema does
/// not know get a JSON merge patch, as kubectl sends for them.
pub fn apply_preview(
    original: &Node,
    modified: &Node,
    current: &Node,
    schema: &Schema,
    gvk: &Gvk,
) -> R<Preview> {
    if schema.kind(gvk).is_none() {
        let patch = mergepatch::create_three_way(original, modified, current)?;
        let result = mergepatch::apply(current, &patch);
        return Ok(Preview {
            patch,
            result,
            json_merge: true,
        });
    }
    let patch = create(original, modified, current, schema, gvk, true)?;
    let result = smp::apply(current, &patch, schema, gvk, &SmpOptions::kubectl())?;
    Ok(Preview {
        patch,
        result,
        json_merge: false,
    })
}

/// [`apply_preview`] without overwrite (`kubectl apply --overwrite=false`): a patch that
/// changes a field the live object changed since the last apply is a
/// [`MergeErrorKind::Conflict`](super::MergeErrorKind::Conflict) error.
pub fn apply_preview_checked(
    original: &Node,
    modified: &Node,
    current: &Node,
    schema: &Schema,
    gvk: &Gvk,
) -> R<Preview> {
    if schema.kind(gvk).is_some() {
        create(original, modified, current, schema, gvk, false)?;
    }
    apply_preview(original, modified, current, schema, gvk)
}

/// apimachinery's `MergingMapsHaveConflicts`: whether two patches of one object change a field
/// differently. Returns the path of the first conflict.
pub fn find_conflict(left: &Node, right: &Node, schema: &Schema, gvk: &Gvk) -> Option<String> {
    conflict(left, right, schema.root(gvk), "", None, &Path::ROOT)
}

fn as_map(n: &Node, what: &str) -> R<Map> {
    match n {
        Node::Null => Ok(Map::default()),
        Node::Map(m) => Ok(m.clone()),
        other => Err(MergeError::new(
            K::Invalid,
            &Path::ROOT,
            format!("the {what} object is a {}, not a map", other.kind_name()),
        )),
    }
}

fn unknown_field(path: &Path<'_>, key: &str) -> MergeError {
    MergeError::new(
        K::UnknownField,
        path,
        format!("unable to find api field {key:?} in the schema"),
    )
}

fn diff_maps(
    original: &Map,
    modified: &Map,
    cur: Cursor<'_>,
    opts: DiffOptions,
    path: &Path<'_>,
) -> R<Map> {
    let mut patch = Map::default();
    let mut retain: Vec<Node> = Vec::new();
    for (key, mv) in modified {
        if opts.build_retain_keys && !mv.is_null() {
            retain.push(Node::str(key.clone()));
        }
        let Some(ov) = original.get(key) else {
            if !opts.ignore_changes_and_additions {
                patch.insert(key.clone(), mv.clone());
            }
            continue;
        };
        let kpath = path.key(key);
        if key == DIRECTIVE {
            match (ov.as_str(), mv.as_str()) {
                (Some(a), Some(b)) => {
                    if a != b {
                        patch.insert(key.clone(), mv.clone());
                    }
                }
                _ => {
                    return Err(MergeError::new(
                        K::BadDirective,
                        &kpath,
                        "invalid value for special key: $patch",
                    ));
                }
            }
            continue;
        }
        if class(ov) != class(mv) {
            if !opts.ignore_changes_and_additions {
                patch.insert(key.clone(), mv.clone());
            }
            continue;
        }
        if !matches!(ov, Node::Map(_) | Node::Seq(_)) {
            if !opts.ignore_changes_and_additions && !same_strict(ov, mv) {
                patch.insert(key.clone(), mv.clone());
            }
            continue;
        }
        // A map or list under a field the schema does not know: equal values are no change,
        // different ones an error (apimachinery's diffMaps asks the schema for both kinds).
        let (sub, meta) = match cur.lookup(key) {
            Ok(x) => x,
            Err(UnknownField) if same(ov, mv) => continue,
            Err(UnknownField) => return Err(unknown_field(path, key)),
        };
        match (ov, mv) {
            (Node::Map(om), Node::Map(mm)) => {
                let mut sub_opts = opts;
                sub_opts.build_retain_keys = meta.strategy.retain_keys;
                if meta.strategy.replace {
                    if !opts.ignore_changes_and_additions {
                        patch.insert(key.clone(), mv.clone());
                    }
                } else {
                    let d = diff_maps(om, mm, sub, sub_opts, &kpath)?;
                    if !d.is_empty() {
                        patch.insert(key.clone(), Node::Map(d));
                    }
                }
            }
            (Node::Seq(ol), Node::Seq(ml)) => {
                if meta.strategy.merge {
                    let mut sub_opts = opts;
                    sub_opts.build_retain_keys = meta.strategy.retain_keys;
                    let merge_key = meta.merge_key.as_deref().unwrap_or("");
                    let (add, del, order) =
                        diff_lists(ol, ml, sub.items(), merge_key, sub_opts, &kpath)?;
                    if !add.is_empty() {
                        patch.insert(key.clone(), Node::Seq(add));
                    }
                    if !del.is_empty() {
                        patch.insert(format!("{DELETE_FROM_PRIMITIVE_LIST}{key}"), Node::Seq(del));
                    }
                    if !order.is_empty() {
                        patch.insert(format!("{SET_ELEMENT_ORDER}{key}"), Node::Seq(order));
                    }
                } else if !opts.ignore_changes_and_additions && !same_strict(ov, mv) {
                    patch.insert(key.clone(), mv.clone());
                }
            }
            // `class` matched above: both maps or both lists.
            _ => {}
        }
    }
    if !opts.ignore_deletions {
        for key in original.keys() {
            if !modified.contains_key(key) {
                patch.insert(key.clone(), Node::Null);
            }
        }
    }
    let additional_new_field = original
        .iter()
        .any(|(k, v)| !v.is_null() && !modified.contains_key(k));
    if !retain.is_empty() && (!patch.is_empty() || additional_new_field) {
        sort_scalars(&mut retain);
        patch.insert(RETAIN_KEYS.to_string(), Node::Seq(retain));
    }
    Ok(patch)
}

/// Go's `reflect.DeepEqual` on decoded JSON: numbers by value, kinds must match.
fn same_strict(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Seq(x), Node::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_strict(a, b))
        }
        (Node::Map(x), Node::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_strict(v, w)))
        }
        _ => class(a) == class(b) && same(a, b),
    }
}

/// Sorts scalars by their `%v` text, as apimachinery's `sortScalars`.
fn sort_scalars(v: &mut [Node]) {
    v.sort_by_cached_key(go_fmt);
}

type Lists = (Vec<Node>, Vec<Node>, Vec<Node>);

/// apimachinery's `diffLists`: the patch list, the deletion list (primitives) and the
/// `$setElementOrder` list.
fn diff_lists(
    original: &[Node],
    modified: &[Node],
    items: Cursor<'_>,
    merge_key: &str,
    opts: DiffOptions,
    path: &Path<'_>,
) -> R<Lists> {
    if original.is_empty() && modified.is_empty() {
        return Ok((Vec::new(), Vec::new(), Vec::new()));
    }
    let kind = element_class(&[original, modified], path)?;
    if kind == Class::Map {
        if merge_key.is_empty() {
            return Err(MergeError::new(
                K::MissingMergeKey,
                path,
                "cannot merge lists without merge key",
            ));
        }
        let (patch_list, deletions) =
            diff_lists_of_maps(original, modified, items, merge_key, opts, path)?;
        let mut patch_list = order_like(patch_list, modified, merge_key, true);
        let order_same = original.len() == modified.len()
            && original
                .iter()
                .zip(modified)
                .all(|(a, b)| key_eq(a.get(merge_key), b.get(merge_key)));
        patch_list.extend(deletions);
        let mut order = Vec::new();
        if opts.set_element_order
            && ((!opts.ignore_changes_and_additions && (!patch_list.is_empty() || !order_same))
                || (!opts.ignore_deletions && !patch_list.is_empty()))
        {
            for v in modified {
                let mut m = Map::default();
                m.insert(
                    merge_key.to_string(),
                    v.get(merge_key).cloned().unwrap_or(Node::Null),
                );
                order.push(Node::Map(m));
            }
        }
        Ok((patch_list, Vec::new(), order))
    } else {
        let (add, del) = diff_lists_of_scalars(original, modified, opts);
        let add = order_like(add, modified, "", false);
        let mut order = Vec::new();
        if opts.set_element_order
            && ((!opts.ignore_deletions && !del.is_empty())
                || (!opts.ignore_changes_and_additions
                    && !same_strict(&Node::Seq(original.to_vec()), &Node::Seq(modified.to_vec()))))
        {
            order = modified.to_vec();
        }
        Ok((add, del, order))
    }
}

fn key_eq(a: Option<&Node>, b: Option<&Node>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => class(a) == class(b) && same(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// Stable sort of `list` by position in `order` (by merge key for maps).
fn order_like(list: Vec<Node>, order: &[Node], merge_key: &str, maps: bool) -> Vec<Node> {
    let pos = |v: &Node| {
        order.iter().position(|o| {
            if maps {
                key_eq(o.get(merge_key), v.get(merge_key))
            } else {
                class(o) == class(v) && same(o, v)
            }
        })
    };
    let mut keyed: Vec<(usize, Node)> = list
        .into_iter()
        .map(|v| (pos(&v).unwrap_or(usize::MAX), v))
        .collect();
    keyed.sort_by_key(|(p, _)| *p);
    keyed.into_iter().map(|(_, v)| v).collect()
}

fn element_class(lists: &[&[Node]], path: &Path<'_>) -> R<Class> {
    let mut prev = None;
    for l in lists {
        for v in l.iter() {
            let c = class(v);
            match prev {
                None if c == Class::List => {
                    return Err(MergeError::new(
                        K::TypeMismatch,
                        path,
                        "lists of lists are not supported",
                    ));
                }
                None => prev = Some(c),
                Some(p) if p != c => {
                    return Err(MergeError::new(
                        K::TypeMismatch,
                        path,
                        "list element types are not identical",
                    ));
                }
                Some(_) => {}
            }
        }
    }
    prev.ok_or_else(|| {
        MergeError::new(
            K::TypeMismatch,
            path,
            "no elements in any of the given slices",
        )
    })
}

/// apimachinery's `diffListsOfScalars`: additions and deletions by `%v` text, walking both
/// lists sorted.
fn diff_lists_of_scalars(
    original: &[Node],
    modified: &[Node],
    opts: DiffOptions,
) -> (Vec<Node>, Vec<Node>) {
    let mut o: Vec<(String, &Node)> = original.iter().map(|v| (go_fmt(v), v)).collect();
    let mut m: Vec<(String, &Node)> = modified.iter().map(|v| (go_fmt(v), v)).collect();
    o.sort_by(|a, b| a.0.cmp(&b.0));
    m.sort_by(|a, b| a.0.cmp(&b.0));
    let (mut i, mut j) = (0, 0);
    let mut add = Vec::new();
    let mut del: Vec<Node> = Vec::new();
    loop {
        match (o.get(i), m.get(j)) {
            (None, None) => break,
            (Some(a), Some(b)) if a.0 == b.0 => {
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.0 < b.0 => {
                if !opts.ignore_deletions {
                    del.push(a.1.clone());
                }
                i += 1;
            }
            (Some(a), None) => {
                if !opts.ignore_deletions {
                    del.push(a.1.clone());
                }
                i += 1;
            }
            (_, Some(b)) => {
                if !opts.ignore_changes_and_additions {
                    add.push(b.1.clone());
                }
                j += 1;
            }
        }
    }
    let mut dedup: Vec<Node> = Vec::with_capacity(del.len());
    for v in del {
        if !dedup.iter().any(|d| class(d) == class(&v) && same(d, &v)) {
            dedup.push(v);
        }
    }
    (add, dedup)
}

/// apimachinery's `diffListsOfMaps`: both lists sorted by the `%v` text of their merge keys
/// and walked together; changed elements become partial maps with their merge key, added ones
/// are copied, removed ones become `{$patch: delete, <key>: <value>}`.
fn diff_lists_of_maps(
    original: &[Node],
    modified: &[Node],
    items: Cursor<'_>,
    merge_key: &str,
    opts: DiffOptions,
    path: &Path<'_>,
) -> R<(Vec<Node>, Vec<Node>)> {
    let keyed = |list: &[Node]| -> R<Vec<(String, Node, Map)>> {
        let mut out = Vec::with_capacity(list.len());
        for v in list {
            let Node::Map(m) = v else {
                return Err(MergeError::new(
                    K::TypeMismatch,
                    path,
                    "list element types are not identical",
                ));
            };
            let Some(k) = m.get(merge_key) else {
                return Err(MergeError::new(
                    K::MissingMergeKey,
                    path,
                    format!(
                        "map: {} does not contain declared merge key: {merge_key}",
                        go_fmt(v)
                    ),
                ));
            };
            out.push((go_fmt(k), k.clone(), m.clone()));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    };
    let o = keyed(original)?;
    let m = keyed(modified)?;
    let mut patch = Vec::new();
    let mut deletions = Vec::new();
    let (mut i, mut j) = (0, 0);
    loop {
        match (o.get(i), m.get(j)) {
            (None, None) => break,
            (Some(a), Some(b)) if a.0 == b.0 => {
                let epath = path.elem(merge_key, &b.1);
                let mut d = diff_maps(&a.2, &b.2, items, opts, &epath)?;
                if !d.is_empty() {
                    d.insert(merge_key.to_string(), b.1.clone());
                    patch.push(Node::Map(d));
                }
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.0 > b.0 => {
                if !opts.ignore_changes_and_additions {
                    patch.push(Node::Map(b.2.clone()));
                }
                j += 1;
            }
            (None, Some(b)) => {
                if !opts.ignore_changes_and_additions {
                    patch.push(Node::Map(b.2.clone()));
                }
                j += 1;
            }
            (Some(a), _) => {
                if !opts.ignore_deletions {
                    let mut d = Map::default();
                    d.insert(DIRECTIVE.to_string(), Node::str("delete"));
                    d.insert(merge_key.to_string(), a.1.clone());
                    deletions.push(Node::Map(d));
                }
                i += 1;
            }
        }
    }
    Ok((patch, deletions))
}

/// apimachinery's `mergingMapFieldsHaveConflicts`; returns the path of the first conflict.
fn conflict(
    left: &Node,
    right: &Node,
    cur: Cursor<'_>,
    merge_key: &str,
    strategy_replace: Option<bool>,
    path: &Path<'_>,
) -> Option<String> {
    let here = || Some(path.render());
    match left {
        Node::Map(lm) => {
            let Node::Map(rm) = right else { return here() };
            let (ld, rd) = (lm.get(DIRECTIVE), rm.get(DIRECTIVE));
            if ld.is_some() || rd.is_some() {
                match (ld, rd) {
                    (Some(a), Some(b)) if same_strict(a, b) => {}
                    _ => return here(),
                }
            }
            if strategy_replace == Some(true) {
                return None;
            }
            for (key, lv) in lm {
                if key == DIRECTIVE || key == RETAIN_KEYS {
                    continue;
                }
                let Some(rv) = rm.get(key) else { continue };
                let (sub, meta) = cur.field(key);
                let kpath = path.key(key);
                let (sub, mk, replace) = match lv {
                    Node::Seq(_) => (
                        sub.items(),
                        meta.merge_key.as_deref().unwrap_or(""),
                        Some(meta.strategy.replace),
                    ),
                    _ => (sub, "", Some(meta.strategy.replace)),
                };
                let merge = meta.strategy.merge;
                let r = if let (Node::Seq(l), Node::Seq(r)) = (lv, rv) {
                    slices_conflict(l, r, sub, merge, mk, &kpath)
                } else {
                    conflict(lv, rv, sub, mk, replace, &kpath)
                };
                if r.is_some() {
                    return r;
                }
            }
            None
        }
        Node::Seq(l) => {
            let Node::Seq(r) = right else { return here() };
            slices_conflict(l, r, cur, false, merge_key, path)
        }
        _ => {
            if same_strict(left, right) {
                None
            } else {
                here()
            }
        }
    }
}

fn slices_conflict(
    left: &[Node],
    right: &[Node],
    items: Cursor<'_>,
    merge: bool,
    merge_key: &str,
    path: &Path<'_>,
) -> Option<String> {
    let Ok(kind) = element_class(&[left, right], path) else {
        return Some(path.render());
    };
    if merge {
        if kind != Class::Map {
            return None;
        }
        for l in left {
            let lk = l.get(merge_key)?;
            if let Some(r) = right
                .iter()
                .find(|r| r.get(merge_key).is_some_and(|rk| go_fmt(rk) == go_fmt(lk)))
            {
                let epath = path.elem(merge_key, lk);
                if let Some(p) = conflict(l, r, items, "", None, &epath) {
                    return Some(p);
                }
            }
        }
        return None;
    }
    if left.len() != right.len() {
        return Some(path.render());
    }
    let (mut l, mut r) = (left.to_vec(), right.to_vec());
    if kind != Class::Map {
        l = dedup_sorted(l);
        r = dedup_sorted(r);
    }
    for (i, (a, b)) in l.iter().zip(&r).enumerate() {
        let ipath = path.index(i);
        if let Some(p) = conflict(a, b, items, "", None, &ipath) {
            return Some(p);
        }
    }
    None
}

fn dedup_sorted(mut v: Vec<Node>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::with_capacity(v.len());
    for x in v.drain(..) {
        if !out.iter().any(|o| same_strict(o, &x)) {
            out.push(x);
        }
    }
    sort_scalars(&mut out);
    out
}
