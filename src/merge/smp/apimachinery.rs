//! apimachinery's dialect of strategic merge patch: what `kubectl patch --local --type
//! strategic` and kubectl's three-way apply do (`pkg/util/strategicpatch/patch.go`: `mergeMap`,
//! `mergeSlice`, `mergePatchIntoOriginal`, `normalizeElementOrder`), and the merging of two
//! patches for three-way patch creation. Also the entry ([`Merger::merge_map`]) that hands a
//! kustomize patch to [`super::kyaml`].

use super::*;
impl Merger {
    pub(crate) fn apply(dialect: Dialect) -> Merger {
        Merger {
            parallel: true,
            ignore_unmatched_nulls: true,
            dialect,
        }
    }

    /// Merges two patches into one (three-way patch creation).
    pub(crate) fn patches() -> Merger {
        Merger {
            parallel: false,
            ignore_unmatched_nulls: false,
            dialect: Dialect::Kubectl,
        }
    }

    pub(crate) fn merge_map(
        &self,
        mut original: Map,
        mut patch: Map,
        cur: Cursor<'_>,
        path: &Path<'_>,
    ) -> R<Map> {
        if self.dialect == Dialect::Kustomize {
            return self.kz_merge_map(original, &patch, cur, path, &[]);
        }
        if let Some(d) = patch.get(DIRECTIVE) {
            return match d.as_str() {
                Some("replace") => {
                    patch.shift_remove(DIRECTIVE);
                    Ok(patch)
                }
                Some("delete") => Ok(Map::default()),
                _ => Err(MergeError::new(
                    K::BadDirective,
                    path,
                    format!(
                        "unknown patch type: {} in map: {}",
                        go_fmt(d),
                        go_fmt(&Node::Map(patch.clone()))
                    ),
                )),
            };
        }
        self.apply_retain_keys(&mut original, &mut patch, path)?;
        self.merge_patch_into_original(&mut original, &mut patch, cur, path)?;

        // `$deleteFromPrimitiveList` first, so that a list the same patch sets is not emptied
        // again (kubectl's observable behaviour for `{args: [..], $deleteFromPrimitiveList/args:
        // [..]}`).
        let (deletions, rest): (Entries, Entries) = patch
            .into_iter()
            .partition(|(k, _)| k.starts_with(DELETE_FROM_PRIMITIVE_LIST));
        for (k, patch_v) in deletions.into_iter().chain(rest) {
            let (key, is_delete_list) = match k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
                Some(stripped) => {
                    if !self.parallel {
                        original.insert(k.clone(), patch_v);
                        continue;
                    }
                    (stripped.to_string(), true)
                }
                None => (k, false),
            };
            let kpath = path.key(&key);
            if patch_v.is_null() {
                original.shift_remove(&key);
                if self.ignore_unmatched_nulls {
                    continue;
                }
            }
            let absent = !original.contains_key(&key);
            if absent || original.get(&key).map(class) != Some(class(&patch_v)) {
                // A new field, or one whose kind changes, takes the patch's value without
                // nulls and without maps that carry a `$patch` directive (apimachinery's
                // `discardNullValuesFromPatch` and `removeDirectives`).
                if !is_delete_list {
                    let mut v = patch_v;
                    if self.ignore_unmatched_nulls {
                        discard_nulls(&mut v);
                    }
                    match remove_directives(v) {
                        Some(v) => {
                            original.insert(key, v);
                        }
                        None => {
                            original.shift_remove(&key);
                        }
                    }
                }
                continue;
            }
            let Some(orig_v) = original.get_mut(&key) else {
                continue;
            };
            match (std::mem::take(orig_v), patch_v) {
                (Node::Map(om), Node::Map(pm)) => {
                    let (sub, meta) = cur.field(&key);
                    *orig_v = if meta.strategy.replace {
                        Node::Map(pm)
                    } else {
                        Node::Map(self.merge_map(om, pm, sub, &kpath)?)
                    };
                }
                (Node::Seq(ol), Node::Seq(pl)) => {
                    let (sub, meta) = cur.field(&key);
                    *orig_v = Node::Seq(self.merge_slice_handler(
                        ol,
                        pl,
                        sub.items(),
                        meta,
                        is_delete_list,
                        &kpath,
                    )?);
                }
                (_, p) => match remove_directives(p) {
                    Some(p) => *orig_v = p,
                    None => {
                        original.shift_remove(&key);
                    }
                },
            }
        }
        Ok(original)
    }

    /// apimachinery's `applyRetainKeysDirective`.
    fn apply_retain_keys(&self, original: &mut Map, patch: &mut Map, path: &Path<'_>) -> R<()> {
        let Some(retain) = patch.shift_remove(RETAIN_KEYS) else {
            return Ok(());
        };
        if !self.parallel {
            match original.get(RETAIN_KEYS) {
                Some(existing) if !same(existing, &retain) => {
                    return Err(MergeError::new(
                        K::RetainKeys,
                        path,
                        format!(
                            "{} and {} are not deep equal: this may happen when calculating the 3-way diff patch",
                            go_fmt(existing),
                            go_fmt(&retain)
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    original.insert(RETAIN_KEYS.to_string(), retain);
                }
            }
            return Ok(());
        }
        let Node::Seq(keys) = &retain else {
            return Err(MergeError::new(
                K::RetainKeys,
                path,
                "invalid patch format of retainKeys: $retainKeys must be a list",
            ));
        };
        let listed = |k: &str| keys.iter().any(|v| v.as_str() == Some(k));
        for (k, v) in patch.iter() {
            if v.is_null()
                || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
                || k.starts_with(SET_ELEMENT_ORDER)
            {
                continue;
            }
            if !listed(k) {
                return Err(MergeError::new(
                    K::RetainKeys,
                    path,
                    format!(
                        "invalid patch format of retainKeys: the patch sets {k:?}, which $retainKeys does not list"
                    ),
                ));
            }
        }
        original.retain(|k, _| listed(k));
        Ok(())
    }

    /// apimachinery's `mergePatchIntoOriginal`: lists with a `$setElementOrder` are merged and
    /// ordered here, and removed from the patch with their directive.
    fn merge_patch_into_original(
        &self,
        original: &mut Map,
        patch: &mut Map,
        cur: Cursor<'_>,
        path: &Path<'_>,
    ) -> R<()> {
        let keys: Vec<String> = patch
            .keys()
            .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
            .cloned()
            .collect();
        for dkey in keys {
            let Some(order) = patch.shift_remove(&dkey) else {
                continue;
            };
            if !self.parallel {
                // Merging two patches: the directive moves to the first one (they must agree).
                match original.get(&dkey) {
                    Some(existing) if !same(existing, &order) => {
                        return Err(MergeError::new(
                            K::OrderMismatch,
                            path,
                            format!(
                                "invalid patch format of setElementOrder list: two patches disagree on {dkey}"
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        original.insert(dkey.clone(), order.clone());
                    }
                }
            }
            let key = dkey
                .strip_prefix(SET_ELEMENT_ORDER)
                .unwrap_or_default()
                .to_string();
            let kpath = path.key(&key);
            let Node::Seq(order) = order else {
                return Err(MergeError::new(
                    K::TypeMismatch,
                    &kpath,
                    format!(
                        "{dkey} must be a list: expected a []interface {{}}, but received {}",
                        go_type(&order)
                    ),
                ));
            };
            let orig_list = optional_list(original.get(&key), &kpath, "expected a list")?;
            let (sub, meta) = cur.field(&key);
            let items = sub.items();
            let merge_key = meta.merge_key.as_deref().unwrap_or("");
            let patch_list = optional_list(
                patch.get(&key),
                &kpath,
                &format!("the patch's list must be a list next to {dkey}"),
            )?;
            if let Some(pl) = &patch_list {
                validate_patch_with_set_order(pl, &order, merge_key, &kpath)?;
            }
            let merged = match (orig_list.clone(), patch_list.clone()) {
                (None, None) => continue,
                (None, Some(p)) => match remove_directives(Node::Seq(p)) {
                    Some(Node::Seq(p)) => p,
                    _ => Vec::new(),
                },
                (Some(o), None) => o,
                (Some(o), Some(p)) => self.merge_slice_handler(o, p, items, meta, false, &kpath)?,
            };
            let (patch_items, server_only) = if merge_key.is_empty() {
                partition_primitives(merged, &order)
            } else {
                partition_maps(merged, &order, merge_key, &kpath)?
            };
            let orig_list = orig_list.unwrap_or_default();
            let kind =
                slice_element_kind(&[&orig_list, patch_list.as_deref().unwrap_or(&[])], &kpath)?;
            let server_order = match &patch_list {
                Some(pl) if self.parallel && meta.strategy.merge && kind == ElemKind::Map => {
                    aliased_server_order(&orig_list, pl, merge_key)
                }
                _ => orig_list,
            };
            let both = normalize_element_order(
                patch_items,
                server_only,
                &order,
                &server_order,
                merge_key,
                kind,
                &kpath,
            )?;
            original.insert(key.clone(), Node::Seq(both));
            patch.shift_remove(&key);
        }
        Ok(())
    }

    fn merge_slice_handler(
        &self,
        original: Vec<Node>,
        patch: Vec<Node>,
        items: Cursor<'_>,
        meta: &PatchMeta,
        is_delete_list: bool,
        path: &Path<'_>,
    ) -> R<Vec<Node>> {
        // kubectl applies `$deleteFromPrimitiveList` to any list, merging or not.
        if meta.strategy.merge || is_delete_list {
            self.merge_slice(
                original,
                patch,
                items,
                meta.merge_key.as_deref().unwrap_or(""),
                is_delete_list,
                path,
            )
        } else {
            Ok(patch)
        }
    }

    /// apimachinery's `mergeSlice`.
    fn merge_slice(
        &self,
        original: Vec<Node>,
        patch: Vec<Node>,
        items: Cursor<'_>,
        merge_key: &str,
        is_delete_list: bool,
        path: &Path<'_>,
    ) -> R<Vec<Node>> {
        if original.is_empty() && patch.is_empty() {
            return Ok(original);
        }
        let kind = slice_element_kind(&[&original, &patch], path)?;
        let (merged, patch, original) = match kind {
            ElemKind::Scalar => {
                if self.parallel && is_delete_list {
                    return Ok(original
                        .into_iter()
                        .filter(|v| !patch.iter().any(|d| go_eq(v, d)))
                        .collect());
                }
                let mut merged: Vec<Node> = Vec::with_capacity(original.len() + patch.len());
                for v in original.iter().chain(&patch) {
                    if !merged.iter().any(|m| go_eq(m, v)) {
                        merged.push(v.clone());
                    }
                }
                (merged, patch, original)
            }
            ElemKind::Map => {
                if merge_key.is_empty() {
                    return Err(MergeError::new(
                        K::MissingMergeKey,
                        path,
                        "cannot merge lists without merge key",
                    ));
                }
                let (original, patch) = self.special_elements(original, patch, merge_key, path)?;
                let merged =
                    self.merge_without_special(original.clone(), &patch, items, merge_key, path)?;
                (merged, patch, original)
            }
        };
        let (patch_items, server_only) = if merge_key.is_empty() {
            partition_primitives(merged, &patch)
        } else {
            partition_maps(merged, &patch, merge_key, path)?
        };
        normalize_element_order(
            patch_items,
            server_only,
            &patch,
            &original,
            merge_key,
            kind,
            path,
        )
    }

    /// apimachinery's `mergeSliceWithSpecialElements`: `$patch: delete` elements delete,
    /// `$patch: replace` makes the patch's other elements the whole list.
    fn special_elements(
        &self,
        mut original: Vec<Node>,
        patch: Vec<Node>,
        merge_key: &str,
        path: &Path<'_>,
    ) -> R<(Vec<Node>, Vec<Node>)> {
        let mut plain = Vec::with_capacity(patch.len());
        let mut replace = false;
        for v in patch {
            let Some(d) = v.get(DIRECTIVE) else {
                plain.push(v);
                continue;
            };
            match d.as_str() {
                Some("delete") => {
                    let Some(kv) = v.get(merge_key) else {
                        return Err(missing_merge_key(&v, merge_key, path));
                    };
                    let mut kept = Vec::with_capacity(original.len());
                    for o in original {
                        match &o {
                            Node::Map(om) => {
                                if !om.get(merge_key).is_some_and(|x| go_eq(x, kv)) {
                                    kept.push(o);
                                }
                            }
                            _ => {
                                return Err(MergeError::new(
                                    K::TypeMismatch,
                                    path,
                                    format!(
                                        "value for key {merge_key} is not a map: {}",
                                        go_fmt(&o)
                                    ),
                                ));
                            }
                        }
                    }
                    original = kept;
                }
                Some("replace") => replace = true,
                Some("merge") => {
                    return Err(MergeError::new(
                        K::BadDirective,
                        path,
                        "merging lists cannot yet be specified in the patch",
                    ));
                }
                _ => {
                    return Err(MergeError::new(
                        K::BadDirective,
                        path,
                        format!("unknown patch type: {} in map: {}", go_fmt(d), go_fmt(&v)),
                    ));
                }
            }
        }
        if replace {
            Ok((plain, Vec::new()))
        } else {
            Ok((original, plain))
        }
    }

    /// apimachinery's `mergeSliceWithoutSpecialElements`: elements with a matching merge key
    /// are merged, others appended.
    fn merge_without_special(
        &self,
        mut original: Vec<Node>,
        patch: &[Node],
        items: Cursor<'_>,
        merge_key: &str,
        path: &Path<'_>,
    ) -> R<Vec<Node>> {
        for v in patch {
            let Node::Map(pm) = v else {
                return Err(type_mismatch_elems(path));
            };
            let Some(kv) = pm.get(merge_key) else {
                return Err(missing_merge_key(v, merge_key, path));
            };
            let epath = path.elem(merge_key, kv);
            let mut found = None;
            for (i, o) in original.iter().enumerate() {
                let Node::Map(om) = o else {
                    return Err(MergeError::new(
                        K::TypeMismatch,
                        path,
                        format!("value for key {merge_key} is not a map: {}", go_fmt(o)),
                    ));
                };
                if om.get(merge_key).is_some_and(|x| go_eq(x, kv)) {
                    found = Some(i);
                    break;
                }
            }
            match found.and_then(|i| original.get_mut(i)) {
                Some(slot) => {
                    let om = match std::mem::take(slot) {
                        Node::Map(m) => m,
                        _ => Map::default(),
                    };
                    *slot = Node::Map(self.merge_map(om, pm.clone(), items, &epath)?);
                }
                None => original.push(v.clone()),
            }
        }
        Ok(original)
    }
}

/// The object's list as apimachinery's `mergePatchIntoOriginal` sees it when it orders a merged
/// list by `$setElementOrder`: `mergeSlice` deletes elements and appends new ones in place in
/// the backing array of the decoded list (Go's `append(s[:k], s[k+1:]...)` and `append(s, v)`
/// while capacity lasts), and the caller's view of that array, of the original length, is
/// what it then uses as the live order. kubectl's results depend on it (apimachinery's
/// "add map and delete map from merging list" cases), so it is reproduced: `encoding/json`
/// grows a decoded list's capacity by doubling.
fn aliased_server_order(orig: &[Node], patch: &[Node], merge_key: &str) -> Vec<Node> {
    let n = orig.len();
    let cap = if n == 0 { 0 } else { n.next_power_of_two() };
    let mut array: Vec<Node> = orig.to_vec();
    array.resize(cap, Node::Null);
    let mut len = n;
    let matches = |v: &Node, key: &Node| v.get(merge_key).is_some_and(|x| go_eq(x, key));
    let mut replace = false;
    for p in patch {
        match p.get(DIRECTIVE).and_then(Node::as_str) {
            Some("delete") => {
                let Some(key) = p.get(merge_key) else {
                    continue;
                };
                while let Some(k) = array
                    .get(..len)
                    .and_then(|live| live.iter().position(|v| matches(v, key)))
                {
                    // `append(s[:k], s[k+1:]...)`: the tail moves left by one; the last slot
                    // keeps its old value.
                    for i in k..len.saturating_sub(1) {
                        if let Some(next) = array.get(i + 1).cloned() {
                            if let Some(slot) = array.get_mut(i) {
                                *slot = next;
                            }
                        }
                    }
                    len -= 1;
                }
            }
            Some(_) => replace = true,
            None => {}
        }
    }
    if !replace {
        let mut reallocated = false;
        let mut logical: Vec<Node> = array.get(..len).map(<[Node]>::to_vec).unwrap_or_default();
        for p in patch.iter().filter(|p| p.get(DIRECTIVE).is_none()) {
            let Some(key) = p.get(merge_key) else { break };
            if logical.iter().any(|v| matches(v, key)) {
                continue;
            }
            logical.push(p.clone());
            if !reallocated {
                if len < cap {
                    if let Some(slot) = array.get_mut(len) {
                        *slot = p.clone();
                    }
                    len += 1;
                } else {
                    reallocated = true;
                }
            }
        }
    }
    array.truncate(n);
    array
}

/// apimachinery's `removeDirectives`: drops every map holding a `$patch` directive (and the
/// list elements that are such maps); `None` when the value itself is one.
fn remove_directives(v: Node) -> Option<Node> {
    match v {
        Node::Map(m) => {
            if m.contains_key(DIRECTIVE) {
                return None;
            }
            Some(Node::Map(
                m.into_iter()
                    .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                    .collect(),
            ))
        }
        Node::Seq(items) => Some(Node::Seq(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

/// A field that must be a list when present (a copy of it), or a type mismatch naming Go's
/// type, as apimachinery words it.
fn optional_list(node: Option<&Node>, path: &Path, what: &str) -> R<Option<Vec<Node>>> {
    match node {
        None => Ok(None),
        Some(Node::Seq(l)) => Ok(Some(l.clone())),
        Some(other) => Err(MergeError::new(
            K::TypeMismatch,
            path,
            format!(
                "{what}: expected a []interface {{}}, but received {}",
                go_type(other)
            ),
        )),
    }
}

fn go_type(n: &Node) -> &'static str {
    match n.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Null => "%!s(<nil>)",
        Node::Bool(_) => "a bool",
        Node::Int(_) | Node::Float(_) => "a float64",
        Node::Str(_) => "a string",
        Node::Seq(_) => "a []interface {}",
        Node::Map(_) => "a map[string]interface {}",
    }
}

fn missing_merge_key(v: &Node, merge_key: &str, path: &Path<'_>) -> MergeError {
    MergeError::new(
        K::MissingMergeKey,
        path,
        format!(
            "map: {} does not contain declared merge key: {merge_key}",
            go_fmt(v)
        ),
    )
}

fn type_mismatch_elems(path: &Path<'_>) -> MergeError {
    MergeError::new(
        K::TypeMismatch,
        path,
        "list element types are not identical",
    )
}

/// apimachinery's `validatePatchWithSetOrderList`: the patch list's elements (deletions
/// aside) appear in the `$setElementOrder` list, in the same relative order.
fn validate_patch_with_set_order(
    patch: &[Node],
    order: &[Node],
    merge_key: &str,
    path: &Path<'_>,
) -> R<()> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<&Node> = if merge_key.is_empty() {
        patch.iter().collect()
    } else {
        patch
            .iter()
            .filter(|v| v.get(DIRECTIVE).and_then(Node::as_str) != Some("delete"))
            .collect()
    };
    let (mut pi, mut oi) = (0, 0);
    while let (Some(p), Some(o)) = (non_delete.get(pi), order.get(oi)) {
        if p.get(DIRECTIVE).is_some() {
            pi += 1;
            continue;
        }
        let equal = if merge_key.is_empty() {
            go_eq(p, o)
        } else {
            match (p.get(merge_key), o.get(merge_key)) {
                (Some(a), Some(b)) => go_eq(a, b),
                (None, _) => return Err(missing_merge_key(p, merge_key, path)),
                (_, None) => return Err(missing_merge_key(o, merge_key, path)),
            }
        };
        if equal {
            pi += 1;
        }
        oi += 1;
    }
    if pi < non_delete.len() && oi >= order.len() {
        return Err(MergeError::new(
            K::OrderMismatch,
            path,
            format!(
                "The order in patch list:\n{}\n doesn't match $setElementOrder list:\n{}",
                go_fmt(&Node::Seq(patch.to_vec())),
                go_fmt(&Node::Seq(order.to_vec()))
            ),
        ));
    }
    Ok(())
}

fn partition_primitives(merged: Vec<Node>, by: &[Node]) -> (Vec<Node>, Vec<Node>) {
    merged
        .into_iter()
        .partition(|v| by.iter().any(|b| go_eq(v, b)))
}

fn partition_maps(
    merged: Vec<Node>,
    by: &[Node],
    merge_key: &str,
    path: &Path<'_>,
) -> R<(Vec<Node>, Vec<Node>)> {
    let mut patch = Vec::new();
    let mut server = Vec::new();
    for v in merged {
        let Some(kv) = v.get(merge_key) else {
            if matches!(v, Node::Map(_)) {
                return Err(missing_merge_key(&v, merge_key, path));
            }
            return Err(type_mismatch_elems(path));
        };
        let mut found = false;
        for b in by {
            let Node::Map(bm) = b else {
                return Err(MergeError::new(
                    K::TypeMismatch,
                    path,
                    format!("value for key {merge_key} is not a map: {}", go_fmt(b)),
                ));
            };
            if bm.get(merge_key).is_some_and(|x| go_eq(x, kv)) {
                found = true;
                break;
            }
        }
        if found {
            patch.push(v);
        } else {
            server.push(v);
        }
    }
    Ok((patch, server))
}

/// apimachinery's `index`: position of `v` in `list`, by merge key for maps.
fn index_of(list: &[Node], v: &Node, merge_key: &str, kind: ElemKind) -> Option<usize> {
    match kind {
        ElemKind::Map => {
            let key = v.get(merge_key).unwrap_or(&Node::Null);
            list.iter().position(|x| {
                let xk = x.get(merge_key).unwrap_or(&Node::Null);
                go_eq(xk, key)
            })
        }
        ElemKind::Scalar => list.iter().position(|x| go_eq(x, v)),
    }
}

/// apimachinery's `normalizeSliceOrder`: a stable sort of `to_sort` by positions in `order`.
/// Its comparator calls an element absent from `order` "less" than anything; the insertion
/// sort Go's `sort.SliceStable` runs on short lists is reproduced so that such lists come out
/// as kubectl's do.
fn normalize_slice_order(
    mut to_sort: Vec<Node>,
    order: &[Node],
    merge_key: &str,
    kind: ElemKind,
    path: &Path<'_>,
) -> R<Vec<Node>> {
    if kind == ElemKind::Map {
        for v in to_sort.iter().chain(order) {
            if v.get(merge_key).is_none() {
                return Err(missing_merge_key(v, merge_key, path));
            }
        }
    }
    let idx: Vec<Option<usize>> = to_sort
        .iter()
        .map(|v| index_of(order, v, merge_key, kind))
        .collect();
    let less = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(x), Some(y)) => x < y,
        _ => true,
    };
    let mut perm: Vec<usize> = (0..to_sort.len()).collect();
    for i in 1..perm.len() {
        let mut j = i;
        while j > 0 {
            let (a, b) = (perm[j], perm[j - 1]);
            if less(idx[a], idx[b]) {
                perm.swap(j, j - 1);
                j -= 1;
            } else {
                break;
            }
        }
    }
    let mut slots: Vec<Option<Node>> = to_sort.drain(..).map(Some).collect();
    Ok(perm
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect())
}

/// apimachinery's `normalizeElementOrder` + `mergeSortedSlice`: patch items sorted by the
/// patch order, server-only items by the object's order, then server-only items inserted
/// among the patch items before the first patch item they precede in the object.
fn normalize_element_order(
    patch: Vec<Node>,
    server_only: Vec<Node>,
    patch_order: &[Node],
    server_order: &[Node],
    merge_key: &str,
    kind: ElemKind,
    path: &Path<'_>,
) -> R<Vec<Node>> {
    let right = normalize_slice_order(patch, patch_order, merge_key, kind, path)?;
    let left = normalize_slice_order(server_only, server_order, merge_key, kind, path)?;
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => out.extend(left.by_ref()),
            (None, Some(_)) => out.extend(right.by_ref()),
            (Some(l), Some(r)) => {
                let li = index_of(server_order, l, merge_key, kind);
                let ri = index_of(server_order, r, merge_key, kind);
                let take_left = matches!((li, ri), (Some(a), Some(b)) if a < b);
                let next = if take_left { left.next() } else { right.next() };
                out.extend(next);
            }
        }
    }
    Ok(out)
}
