//! kustomize's dialect of strategic merge patch: kyaml's `merge2` walker, as kustomize's
//! patches apply it (`kyaml/yaml/merge2/merge2.go`, `kyaml/yaml/walk/*.go`), which differs from
//! apimachinery's in list order, directives and nulls (docs/merge.md).

use super::*;
// ---- kustomize's dialect --------------------------------------------------------------------
//
// kustomize applies strategic merge patches with kyaml's `merge2` walker
// (`kyaml/yaml/merge2/merge2.go`, `kyaml/yaml/walk/walk.go`, `map.go`,
// `associative_sequence.go`), not with apimachinery. The walker visits every node with a list
// of sources, `[object, patch]`, and three shapes of it matter here:
//
// - `[object, patch]`: both have the node ([`Merger::kz_merge_map`], [`Merger::kz_merge_list`]);
// - `[object, nil]`: a part of the object the patch does not name, walked alone
//   ([`kz_settle_map`], [`kz_settle_list`]): its merged lists are rebuilt all the same;
// - `[patch, patch]`: a part only the patch has. `Merger.VisitMap` and `VisitList` return the
//   patch's node for a missing one and `Sources.setDestNode` makes it the destination too, so
//   the patch's node is walked with itself ([`kz_patch_value`]); a `$patch: replace`
//   also returns the patch's node, which is then walked with itself.
//
// The behaviours below were checked against `kubectl kustomize` (kustomize v5.5.0, kyaml
// v0.18.1).

/// The object's fields a patch does not name are walked alone (`[field, nil]`); a field the
/// walk leaves as it is is not touched (a shared map stays shared).
fn kz_settle_unnamed(
    original: &mut Map,
    patch: &Map,
    cur: Cursor<'_>,
    path: &Path<'_>,
    keep: &[&str],
) -> R<()> {
    kz_settle_fields(original, cur, path, |key| {
        patch.contains_key(key) && !keep.contains(&key)
    })
}

impl Merger {
    /// `walkMap` with sources `[object, patch]`: `VisitMap` settles the patch's directive, then
    /// every field of either side is walked.
    pub(super) fn kz_merge_map(
        &self,
        mut original: Map,
        patch: &Map,
        cur: Cursor<'_>,
        path: &Path<'_>,
        keep: &[&str],
    ) -> R<Map> {
        match patch.get(DIRECTIVE).map(Node::as_str) {
            None | Some(Some("merge")) => {}
            // `VisitMap` returns the patch's map, which is then walked with itself.
            Some(Some("replace")) => {
                return Ok(kz_itself_map(patch, cur, path, true)?.unwrap_or_default());
            }
            Some(Some("delete")) => return Ok(Map::default()),
            Some(_) => return Err(kz_bad_strategy(patch.get(DIRECTIVE), path)),
        }
        kz_settle_unnamed(&mut original, patch, cur, path, keep)?;
        for (key, pv) in patch {
            if key == DIRECTIVE || keep.contains(&key.as_str()) {
                continue;
            }
            self.kz_merge_field(&mut original, patch, key, pv, cur, path)?;
        }
        Ok(original)
    }

    /// One field of the patch (not a directive, not kept) walked with the object's field of
    /// its name (`[field, patch field]`), or added when the object has none.
    fn kz_merge_field(
        &self,
        original: &mut Map,
        patch: &Map,
        key: &str,
        pv: &Node,
        cur: Cursor<'_>,
        path: &Path<'_>,
    ) -> R<()> {
        let kpath = path.key(key);
        if pv.is_null() {
            original.shift_remove(key);
            return Ok(());
        }
        if pv.get(DIRECTIVE).and_then(Node::as_str) == Some("delete") {
            original.shift_remove(key);
            return Ok(());
        }
        // The styles of the field there (a tagged value keeps the patch's type) and of the
        // patch's value.
        let dest = original
            .get_index_of(key)
            .map(|i| (i, kz_style(original, i)));
        let patch_style = patch
            .get_index_of(key)
            .map_or(ScalarStyle::Plain, |i| kz_style(patch, i));
        let Some(ov) = original.get_mut(key).filter(|v| !v.is_null()) else {
            let (sub, meta) = cur.kustomize_field(key);
            match kz_patch_value(pv, sub, meta, &kpath, KzPatchOnly::Added)? {
                // A field the patch adds keeps the patch's style; one over a null keeps
                // the null's (plain: `FieldSetter` sets the style of the field there).
                Some(v) if original.contains_key(key) => {
                    let style = kz_style_over(ScalarStyle::Plain, patch_style, &v);
                    original.insert_styled(key.to_string(), v, style);
                }
                Some(v) => {
                    let style = patch.get_index_of(key).map_or(ScalarStyle::Plain, |i| {
                        kz_walked_style(kz_style(patch, i), &v)
                    });
                    original.insert_styled(key.to_string(), v, style);
                }
                None => {
                    original.shift_remove(key);
                }
            }
            return Ok(());
        };
        let (oc, pc) = (class(ov), class(pv));
        if oc != pc
            && (matches!(oc, Class::Map | Class::List) || matches!(pc, Class::Map | Class::List))
        {
            return Err(MergeError::new(
                K::TypeMismatch,
                &kpath,
                format!(
                    "wrong node kind: expected {} but got {}",
                    kz_kind(oc),
                    kz_kind(pc)
                ),
            ));
        }
        match (std::mem::take(ov), pv) {
            (Node::Map(om), Node::Map(pm)) => {
                let (sub, meta) = cur.kustomize_field(key);
                *ov = if meta.strategy.replace {
                    Node::Map(kz_itself_map(pm, sub, &kpath, true)?.unwrap_or_default())
                } else {
                    Node::Map(self.kz_merge_map(om, pm, sub, &kpath, &[])?)
                };
            }
            (Node::Seq(ol), Node::Seq(pl)) => {
                let (sub, meta) = cur.kustomize_field(key);
                match self.kz_merge_list(ol, pl, sub.items(), meta, &kpath)? {
                    Some(l) => *ov = Node::Seq(l),
                    None => {
                        original.shift_remove(key);
                    }
                }
            }
            (o, p) => {
                let (i, style) = dest.unwrap_or((0, ScalarStyle::Plain));
                *ov = kz_scalar_over(&o, p, style == ScalarStyle::Quoted);
                original.set_style_index(i, kz_style_over(style, patch_style, p));
            }
        }
        Ok(())
    }

    /// `walkAssociativeSequence` (or `walkNonAssociativeSequence`) with sources
    /// `[object, patch]`; `None` when the list goes.
    fn kz_merge_list(
        &self,
        original: Vec<Node>,
        patch: &[Node],
        items: Cursor<'_>,
        meta: &PatchMeta,
        path: &Path<'_>,
    ) -> R<Option<Vec<Node>>> {
        // A list that is not merged takes the patch's list as written, nulls and `$patch`
        // keys of its items included (merge2's `VisitList` returns the patch's node for a
        // non-associative list).
        if !meta.strategy.merge {
            return Ok(Some(patch.iter().map(kz_as_written).collect()));
        }
        if original.is_empty() && patch.is_empty() {
            return Ok(Some(original));
        }
        let kind = slice_element_kind(&[&original, patch], path)?;
        if kind == ElemKind::Scalar {
            return Ok(Some(kz_primitives(patch.iter().chain(&original))));
        }
        let Some(keys) = kz_keys(meta) else {
            return Ok(Some(kz_patch_items(
                patch,
                items,
                path,
                KzPatchOnly::Added,
            )?));
        };
        match kz_list_directive(patch, path)? {
            None => Ok(None),
            // `VisitList` returns the patch's list, which is then walked with itself.
            Some((true, elided)) => kz_list_itself(elided, items, &keys, path),
            Some((false, mut elided)) => {
                let original = match self.kz_merge_keyed(original, &elided, &keys, items, path)? {
                    Ok(merged) => return Ok(Some(merged)),
                    Err(original) => original,
                };
                let mode = KzSources::Patch(&mut elided);
                Ok(Some(KzList::walk(
                    original, self, mode, &keys, items, path,
                )?))
            }
        }
    }
}

impl Merger {
    /// [`KzList::merge`] of the common shape of a merged list and its patch, without its
    /// bookkeeping: one key, every element on both sides a map with a value for it, no two
    /// alike on a side, and no patch element with a directive. `merge` then gives the patch's
    /// elements in the patch's order, each merged into the object's element with its value or
    /// added as the patch has it, then the object's other elements in their order, each walked
    /// alone (`elementValues` lists the patch's values first; `ElementSetter` appends each new
    /// value and `appendListNode` sets each object element back where it already is). The
    /// walks happen in that order, as in `merge`. `Err` gives a list of another shape back
    /// untouched.
    pub(super) fn kz_merge_keyed(
        &self,
        original: Vec<Node>,
        patch: &[Node],
        keys: &[&str],
        items: Cursor<'_>,
        path: &Path<'_>,
    ) -> R<Result<Vec<Node>, Vec<Node>>> {
        let [key] = keys else {
            return Ok(Err(original));
        };
        let (Some(pvs), Some(ovs)) = (
            kz_keyed_values(patch, keys),
            kz_keyed_values(&original, keys),
        ) else {
            return Ok(Err(original));
        };
        if patch.iter().any(|p| p.get(DIRECTIVE).is_some()) {
            return Ok(Err(original));
        }
        let mut objects: Vec<Option<Node>> = original.into_iter().map(Some).collect();
        let mut out = Vec::with_capacity(objects.len() + patch.len());
        for (p, pv) in patch.iter().zip(&pvs) {
            let kv = p.get(key).cloned().unwrap_or(Node::Null);
            let epath = path.elem(key, &kv);
            let merged = match ovs.iter().position(|o| o == pv) {
                Some(d) => {
                    let om = match objects[d].take() {
                        Some(Node::Map(m)) => m,
                        _ => Map::default(),
                    };
                    let pm = p.as_map().map(Cow::Borrowed).unwrap_or_default();
                    Some(Node::Map(self.kz_merge_map(om, &pm, items, &epath, &[])?))
                }
                None => kz_patch_item(p, items, &epath, KzPatchOnly::Added)?,
            };
            if let Some(n) = merged.filter(|n| n.as_map().is_none_or(|m| !m.is_empty())) {
                out.push(n);
            }
        }
        for mut o in objects.into_iter().flatten() {
            kz_settle_element(&mut o, key, items, path)?;
            out.push(o);
        }
        Ok(Ok(out))
    }
}

/// The keys a merged list's elements are matched by: `x-kubernetes-list-map-keys` when the
/// schema has them (Service ports: port and protocol), else the merge key
/// (`PatchStrategyAndKeyList`). `None` for a merged list without a key.
pub(super) fn kz_keys(meta: &PatchMeta) -> Option<Vec<&str>> {
    let merge_key = meta.merge_key.as_deref().filter(|k| !k.is_empty())?;
    Some(if meta.list_map_keys.is_empty() {
        vec![merge_key]
    } else {
        meta.list_map_keys.iter().map(String::as_str).collect()
    })
}

/// A merged list of scalars: each value once, in order of first appearance
/// (`elementPrimitiveValues`, the patch's values first).
fn kz_primitives<'a>(values: impl Iterator<Item = &'a Node>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for v in values {
        if !out.iter().any(|o| go_eq(o, v)) {
            out.push(v.clone());
        }
    }
    out
}

/// [`kz_primitives`] of a merged list walked alone, when it holds no map or list.
fn kz_primitives_alone(list: &[Node]) -> Option<Vec<Node>> {
    list.iter()
        .all(|v| !matches!(v, Node::Map(_) | Node::Seq(_)))
        .then(|| kz_primitives(list.iter()))
}

/// The directive of a patch's merged list (merge2's `determineSequenceNodePatchStrategy`,
/// kyaml/yaml/merge2/smpdirective.go): the first map holding `$patch`, when that is its only
/// key. `None` for `delete`; else whether it is `replace`, and the list with the directive
/// elided (`elideSequencePatchDirective`: an `ElementSetter` deletion of the maps saying the
/// same, which also drops nulls and empty maps).
fn kz_list_directive(patch: &[Node], path: &Path<'_>) -> R<Option<(bool, Vec<Node>)>> {
    let directive = patch
        .iter()
        .filter_map(Node::as_map)
        .find(|m| m.contains_key(DIRECTIVE))
        .filter(|m| m.len() == 1)
        .and_then(|m| m.get(DIRECTIVE));
    let word = match directive.map(Node::as_str) {
        None => return Ok(Some((false, patch.to_vec()))),
        Some(Some("delete")) => return Ok(None),
        Some(Some(w @ ("replace" | "merge"))) => w,
        Some(_) => return Err(kz_bad_strategy(directive, path)),
    };
    let elided = patch
        .iter()
        .filter(|v| {
            !v.is_null()
                && v.as_map().is_none_or(|m| {
                    !m.is_empty() && m.get(DIRECTIVE).and_then(Node::as_str) != Some(word)
                })
        })
        .cloned()
        .collect();
    Ok(Some((word == "replace", elided)))
}

/// A merged list of maps walked with itself (`[list, list]`), its directive already settled.
fn kz_list_itself(
    items_list: Vec<Node>,
    items: Cursor<'_>,
    keys: &[&str],
    path: &Path<'_>,
) -> R<Option<Vec<Node>>> {
    let merger = Merger::apply(Dialect::Kustomize);
    let walked = KzList::walk(items_list, &merger, KzSources::Itself, keys, items, path)?;
    Ok(Some(walked))
}

/// How a value only the patch has is walked.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KzPatchOnly {
    /// Added where the object has none: merge2's walk with sources `[nil, patch]`. A map's
    /// directive is settled by `VisitMap` (an unknown one is ignored there,
    /// `ps, _ := determineSmpDirective`, and stays in the map); a merged list is returned by
    /// `VisitList` as it is, directive and all, then walked with itself.
    Added,
    /// Walked with itself (`[value, value]`), as the fields and elements of an added value
    /// are: maps and merged lists settle their directive (`VisitMap`, `VisitList`; an unknown
    /// one fails), then their fields and elements are walked with themselves.
    Itself,
}

/// A value only the patch has, walked as `how` says: nulls go (`FieldSetter` clears a null
/// field), maps and merged lists are walked with themselves, anything else stays. `None` when
/// the value goes.
fn kz_patch_value(
    v: &Node,
    cur: Cursor<'_>,
    meta: &PatchMeta,
    path: &Path<'_>,
    how: KzPatchOnly,
) -> R<Option<Node>> {
    let Node::Seq(list) = v else {
        return kz_patch_item(v, cur, path, how);
    };
    if !meta.strategy.merge {
        return Ok(Some(kz_as_written(v)));
    }
    if let Some(scalars) = kz_primitives_alone(list) {
        return Ok(Some(Node::Seq(scalars)));
    }
    let items = cur.items();
    let Some(keys) = kz_keys(meta) else {
        return Ok(Some(Node::Seq(kz_patch_items(list, items, path, how)?)));
    };
    let list = match how {
        KzPatchOnly::Added => list.clone(),
        KzPatchOnly::Itself => match kz_list_directive(list, path)? {
            None => return Ok(None),
            Some((_, elided)) => elided,
        },
    };
    Ok(kz_list_itself(list, items, &keys, path)?.map(Node::Seq))
}

/// A patch's list item as kustomize copies it into a list it does not merge: a null that a
/// patch wrote as nothing in a flow mapping (`{x: }`; `yaml::parse::parse_patch_documents`
/// keeps its empty text) prints `""` there (the list keeps its flow style and kustomize's
/// output step reads it back), one written `~` or `null` stays null (checked with both
/// kubectls).
fn kz_as_written(n: &Node) -> Node {
    fn settle(n: &mut Node) {
        match n {
            Node::Spelled(s) if s.value.is_null() && s.text.is_empty() => {
                *n = Node::Str(String::new());
            }
            Node::Map(m) => m.values_mut().for_each(settle),
            Node::Seq(items) => items.iter_mut().for_each(settle),
            _ => {}
        }
    }
    let mut n = n.clone();
    settle(&mut n);
    n
}

/// The value a patch's scalar `p` leaves over the object's scalar `_o`, whose map entry is
/// `dest_styled` ([`Map::styled`]). kyaml's `walkMap` sets every merged field with a
/// `FieldSetter`, which gives the patch's node the style of the node it replaces
/// (`FieldSetter.Filter`, kyaml/yaml/fns.go: `s.Value.YNode().Style = field.YNode().Style`;
/// merge2's `VisitScalar` returns the patch's node as it is). The node keeps its tag, but
/// kustomize's output prints it with go-yaml v3, which drops a tag that resolves alike and
/// writes the quoted (or block) style (`encode.go`, `node`), and reads it back: over a quoted
/// or block string a number, boolean (`9090`, `true`, `0x10`, `1e3`) becomes the string of
/// its text as written in the patch. Over a plain value the patch's type stays. The entry
/// keeps its style either way (the caller leaves it), so a quoted patch over a plain value
/// leaves it plain for the next patch.
fn kz_scalar_over(_o: &Node, p: &Node, dest_styled: bool) -> Node {
    if dest_styled
        && matches!(p.unspelled(), Node::Bool(_) | Node::Int(_) | Node::Float(_))
        && let Some(text) = p.source_text()
    {
        return Node::Str(text);
    }
    p.clone()
}

/// [`kz_patch_value`] of a map or a scalar (an element of a merged list, at `cur`).
fn kz_patch_item(v: &Node, cur: Cursor<'_>, path: &Path<'_>, how: KzPatchOnly) -> R<Option<Node>> {
    match v {
        Node::Map(m) => Ok(kz_itself_map(m, cur, path, how == KzPatchOnly::Itself)?.map(Node::Map)),
        _ if v.is_null() => Ok(None),
        other => Ok(Some(other.clone())),
    }
}

/// The elements of a merged list without a key, each walked as [`kz_patch_item`] says; those
/// that go are left out.
fn kz_patch_items(
    list: &[Node],
    items: Cursor<'_>,
    path: &Path<'_>,
    how: KzPatchOnly,
) -> R<Vec<Node>> {
    let mut out = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        if let Some(v) = kz_patch_item(v, items, &path.index(i), how)? {
            out.push(v);
        }
    }
    Ok(out)
}

/// Removes a map's known directive (`replace`, `merge`, `delete`), as merge2's
/// `determineSmpDirective` does to the node it reads it from (`elideMappingPatchDirective`).
fn kz_elide(n: &mut Node) {
    if let Node::Map(m) = n
        && matches!(
            m.get(DIRECTIVE).and_then(Node::as_str),
            Some("replace" | "merge" | "delete")
        )
    {
        m.shift_remove(DIRECTIVE);
    }
}

/// A map walked with itself: its directive settled (`delete`: `None`; `replace` and `merge`
/// elided; an unknown one an error when `strict`, else kept as a field), then each field
/// walked with itself.
fn kz_itself_map(m: &Map, cur: Cursor<'_>, path: &Path<'_>, strict: bool) -> R<Option<Map>> {
    let mut elide = false;
    match m.get(DIRECTIVE).map(Node::as_str) {
        None => {}
        Some(Some("delete")) => return Ok(None),
        Some(Some("replace" | "merge")) => elide = true,
        Some(_) if strict => return Err(kz_bad_strategy(m.get(DIRECTIVE), path)),
        Some(_) => {}
    }
    let mut out = Map::with_capacity(m.len());
    for (i, (k, v)) in m.iter().enumerate() {
        if elide && k == DIRECTIVE {
            continue;
        }
        if k.is_empty() {
            return Err(kz_empty_key(path));
        }
        let (sub, meta) = cur.kustomize_field(k);
        if let Some(v) = kz_patch_value(v, sub, meta, &path.key(k), KzPatchOnly::Itself)? {
            let style = kz_walked_style(kz_style(m, i), &v);
            out.insert_styled(k.clone(), v, style);
        }
    }
    Ok(Some(out))
}

/// A merged list as kyaml's `walkAssociativeSequence` builds it
/// (kyaml/yaml/walk/associative_sequence.go, `setAssociativeSequenceElements` and
/// `appendListNode` with `MergeOptionsListPrepend`, as `api/filters/patchstrategicmerge` asks).
/// kyaml works on shared nodes: an element merged with a patch element is the object's own node,
/// changed in place, wherever it sits. Here every node lives once in `arena`; lists hold
/// indices into it.
pub(super) struct KzList {
    arena: Vec<Node>,
    /// The object's list.
    dest: Vec<usize>,
}

/// What a merged list is walked with (kyaml's `Sources` of `walkAssociativeSequence`).
pub(super) enum KzSources<'a> {
    /// The object's list and the patch's (`[dest, patch]`). The patch's elements lose their
    /// directive as they are walked (merge2's `determineSmpDirective` elides it from the
    /// patch's node), which shows when one is walked twice.
    Patch(&'a mut [Node]),
    /// The object's list alone: the patch does not name it (`[dest, nil]`).
    Alone,
    /// A list walked with itself (`[list, list]`): the two sources are one node, so the
    /// element found for a key is the same on both sides.
    Itself,
}

impl KzList {
    /// `list` built by [`KzList::merge`] with `mode`.
    pub(super) fn walk(
        list: Vec<Node>,
        merger: &Merger,
        mode: KzSources<'_>,
        keys: &[&str],
        items: Cursor<'_>,
        path: &Path<'_>,
    ) -> R<Vec<Node>> {
        let mut list = KzList::new(list);
        list.merge(merger, mode, keys, items, path)?;
        Ok(list.take())
    }

    fn new(list: Vec<Node>) -> KzList {
        let dest = (0..list.len()).collect();
        KzList { arena: list, dest }
    }

    /// The list built: each node moved to its last place in it, copied to any earlier one (an
    /// element set twice, `appendListNode` lacking a key).
    fn take(mut self) -> Vec<Node> {
        let mut last = vec![usize::MAX; self.arena.len()];
        for (at, &i) in self.dest.iter().enumerate() {
            last[i] = at;
        }
        self.dest
            .iter()
            .enumerate()
            .map(|(at, &i)| {
                if last[i] == at {
                    std::mem::take(&mut self.arena[i])
                } else {
                    self.arena[i].clone()
                }
            })
            .collect()
    }

    fn merge(
        &mut self,
        merger: &Merger,
        mode: KzSources<'_>,
        keys: &[&str],
        items: Cursor<'_>,
        path: &Path<'_>,
    ) -> R<()> {
        // `elementValues`: each element's key values, the patch's first (prepend), distinct.
        let mut values_list: Vec<Vec<String>> = Vec::new();
        let dest_values: Vec<Vec<String>> = self
            .dest
            .iter()
            .map(|&i| kz_values(&self.arena[i], keys))
            .collect();
        let itself = matches!(mode, KzSources::Itself);
        let patch: &mut [Node] = match mode {
            KzSources::Patch(p) => p,
            KzSources::Alone | KzSources::Itself => &mut [],
        };
        for v in patch.iter().map(|v| kz_values(v, keys)).chain(dest_values) {
            if !values_list.contains(&v) {
                values_list.push(v);
            }
        }
        if keys.len() > 1 {
            kz_merge_values(&mut values_list);
        }
        let mut to_add: Vec<usize> = Vec::new();
        let mut valid_keys: Vec<&str> = Vec::new();
        for values in &values_list {
            let (vk, vv) = kz_validate_keys(&values_list, values, keys);
            valid_keys.clone_from(&vk);
            // `elementValueList`: the first element of each side matching the keys that
            // have a value.
            let (ek, ev) = kz_validate_keys(std::slice::from_ref(&vv), &vv, &vk);
            let found = |n: &Node| {
                n.as_map().is_some()
                    && ek
                        .iter()
                        .zip(&ev)
                        .all(|(k, v)| n.get(k).is_some_and(|f| kz_text_is(f, v)))
            };
            let d = self.dest.iter().copied().find(|&i| found(&self.arena[i]));
            let p = patch.iter().position(found);
            let kv = p
                .map(|p| &patch[p])
                .or_else(|| d.map(|d| &self.arena[d]))
                .and_then(|n| n.get(keys[0]))
                .cloned()
                .unwrap_or(Node::Null);
            let epath = path.elem(keys[0], &kv);
            let val = match (d, p) {
                (None, None) => None,
                // The same node on both sides, walked with itself and changed in place: it
                // loses its directive even when that deletes it.
                (Some(d), _) if itself => {
                    let walked = kz_patch_item(&self.arena[d], items, &epath, KzPatchOnly::Itself)?;
                    kz_elide(&mut self.arena[d]);
                    walked.map(|n| {
                        self.arena[d] = n;
                        d
                    })
                }
                // The object's element walked alone (`[dest, nil]`), in place.
                (Some(d), None) => {
                    if let Node::Map(m) = &mut self.arena[d] {
                        kz_settle_map(m, items, &epath)?;
                    }
                    Some(d)
                }
                (d, Some(p)) => self.merge_patch_item(merger, patch, p, d, items, &epath)?,
            };
            let Some(val) = val.filter(|&i| {
                !self.arena[i].is_null() && self.arena[i].as_map().is_none_or(|m| !m.is_empty())
            }) else {
                kz_element_setter(&self.arena, &mut self.dest, None, &vk, &vv);
                continue;
            };
            for (k, v) in vk.iter().zip(&vv) {
                if !v.is_empty()
                    && let Node::Map(m) = &mut self.arena[val]
                    && !m.contains_key(k)
                {
                    m.insert(
                        (*k).to_string(),
                        crate::yaml::resolve::resolve_plain_lenient(v),
                    );
                }
            }
            kz_element_setter(&self.arena, &mut to_add, Some(val), &vk, &vv);
        }
        if values_list.is_empty() {
            return Ok(());
        }
        self.append_rest(to_add, &valid_keys);
        Ok(())
    }

    /// An element of the patch (at `p`) set into the list, with the object's element `d` of
    /// its keys, if any: deleted, merged into `d`, or (`$patch: replace`, a new element) the
    /// patch's node walked and set as it is.
    fn merge_patch_item(
        &mut self,
        merger: &Merger,
        patch: &mut [Node],
        p: usize,
        d: Option<usize>,
        items: Cursor<'_>,
        epath: &Path<'_>,
    ) -> R<Option<usize>> {
        let directive = patch[p]
            .get(DIRECTIVE)
            .map(|v| v.as_str().map(str::to_owned));
        match (d, directive.as_ref().map(Option::as_deref)) {
            (_, Some(Some("delete"))) => {
                kz_elide(&mut patch[p]);
                Ok(None)
            }
            (Some(d), None | Some(Some("merge"))) => {
                kz_elide(&mut patch[p]);
                let pm = patch[p].as_map().map(Cow::Borrowed).unwrap_or_default();
                let om = match std::mem::take(&mut self.arena[d]) {
                    Node::Map(m) => m,
                    _ => Map::default(),
                };
                self.arena[d] = Node::Map(merger.kz_merge_map(om, &pm, items, epath, &[])?);
                Ok(Some(d))
            }
            // `$patch: replace`: `VisitMap` returns the patch's node, walked with itself; an
            // unknown directive fails there. A new element is walked `[nil, patch]`. Either way
            // the patch's node is the one set into the list.
            (d, _) => {
                let walked = match d {
                    Some(_) => kz_patch_item(&patch[p], items, epath, KzPatchOnly::Itself)?,
                    None => kz_patch_item(&patch[p], items, epath, KzPatchOnly::Added)?,
                };
                kz_elide(&mut patch[p]);
                if let Some(n) = &walked {
                    patch[p].clone_from(n);
                }
                Ok(self.push(walked))
            }
        }
    }

    /// `appendListNode(itemsToBeAdded, dest, keys)`: the object's remaining elements set into
    /// the new list (`to_add` so far) one by one.
    fn append_rest(&mut self, to_add: Vec<usize>, valid_keys: &[&str]) {
        let mut dst = to_add;
        for e in self.dest.clone() {
            let mut v: Vec<String> = Vec::new();
            for k in valid_keys {
                match self.arena[e].get(k) {
                    // No such key: appended as it is (once per missing key).
                    None => dst.push(e),
                    Some(f) => v.push(kz_text(f).unwrap_or_default()),
                }
            }
            if valid_keys.len() > 1 {
                kz_element_setter(&self.arena, &mut dst, None, valid_keys, &v);
            }
            kz_element_setter(&self.arena, &mut dst, Some(e), valid_keys, &v);
        }
        self.dest = dst;
    }

    /// A new node in the arena, its index.
    fn push(&mut self, n: Option<Node>) -> Option<usize> {
        let n = n?;
        self.arena.push(n);
        Some(self.arena.len() - 1)
    }
}

/// The text kyaml compares a key's value by (`yaml.Node.Value`): a scalar's text, `""` for a
/// map or list.
fn kz_text(n: &Node) -> Option<String> {
    match n {
        Node::Map(_) | Node::Seq(_) => Some(String::new()),
        Node::Null => Some(String::new()),
        other => other.scalar_text(),
    }
}

/// Whether [`kz_text`] of `n` is `v`, without building the text of a string, an integer, a
/// map or a list (elements are matched by it, every value against every element).
fn kz_text_is(n: &Node, v: &str) -> bool {
    match n {
        Node::Map(_) | Node::Seq(_) | Node::Null => v.is_empty(),
        Node::Str(s) => s == v,
        Node::Int(i) => {
            use std::io::Write;
            let mut buf = [0u8; 48];
            let mut rest = &mut buf[..];
            let _ = write!(rest, "{i}");
            let len = 48 - rest.len();
            &buf[..len] == v.as_bytes()
        }
        Node::Spelled(s) => kz_text_is(&s.value, v),
        other => other.scalar_text().as_deref() == Some(v),
    }
}

/// `ElementValuesList`: one element's key values, `""` where it lacks the key or the value is
/// empty.
fn kz_values(n: &Node, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .map(|k| {
            n.get(k)
                .filter(|f| !f.is_null())
                .and_then(kz_text)
                .unwrap_or_default()
        })
        .collect()
}

/// `mergeValues`: key values that agree where both have one are made one.
fn kz_merge_values(list: &mut [Vec<String>]) {
    for i in 0..list.len() {
        let v1 = list[i].clone();
        for j in 0..list.len() {
            let v2 = &list[j];
            if v1.len() != v2.len() {
                continue;
            }
            let mut common = false;
            let mut res = Vec::with_capacity(v1.len());
            let mut ok = true;
            for (a, b) in v1.iter().zip(v2) {
                if a == b {
                    common = true;
                    res.push(a.clone());
                } else if !a.is_empty() && !b.is_empty() {
                    ok = false;
                    break;
                } else if !a.is_empty() {
                    res.push(a.clone());
                } else {
                    res.push(b.clone());
                }
            }
            if ok && common {
                list[i].clone_from(&res);
                list[j] = res;
            }
        }
    }
}

/// `validateKeys`: the keys some element of `all` has a value for (all keys when none has),
/// and `values` for them.
fn kz_validate_keys<'k>(
    all: &[Vec<String>],
    values: &[String],
    keys: &[&'k str],
) -> (Vec<&'k str>, Vec<String>) {
    let has = |i: usize| {
        all.iter()
            .any(|vs| vs.get(i).is_some_and(|v| !v.is_empty()))
    };
    if !(0..keys.len()).any(has) {
        return (keys.to_vec(), values.to_vec());
    }
    let vk = (0..keys.len())
        .filter(|&i| has(i))
        .map(|i| keys[i])
        .collect();
    let vv = values
        .iter()
        .enumerate()
        .filter(|(i, v)| !v.is_empty() || has(*i))
        .map(|(_, v)| v.clone())
        .collect();
    (vk, vv)
}

/// kyaml's `ElementSetter` on a list of arena indices: elements matching `keys`/`values`
/// (`FieldMatcher`: an empty value matches any value of a present key; keys beyond `values`
/// match as the last compared one did) are replaced by `element`, or removed when it is
/// `None`; `element` is appended when nothing matched. Null and empty-map elements are
/// dropped on the way, and with no values every unmatched element is too (kyaml/yaml/fns.go).
fn kz_element_setter(
    arena: &[Node],
    list: &mut Vec<usize>,
    element: Option<usize>,
    keys: &[&str],
    values: &[String],
) {
    let mapping_setter = keys.first().is_some_and(|k| !k.is_empty())
        && values.first().is_some_and(|v| !v.is_empty());
    let mut out = Vec::with_capacity(list.len() + 1);
    let mut matched = false;
    for &i in list.iter() {
        let n = &arena[i];
        if n.is_null() || n.as_map().is_some_and(|m| m.is_empty()) {
            continue;
        }
        let Some(m) = n.as_map() else {
            if mapping_setter {
                out.push(i);
            }
            continue;
        };
        let mut hit = false;
        let mut found = true;
        for (j, k) in keys.iter().enumerate() {
            if let Some(v) = values.get(j) {
                hit = m.get(k).is_some_and(|f| v.is_empty() || kz_text_is(f, v));
            }
            if !hit {
                found = false;
                break;
            }
        }
        if !found {
            if !values.is_empty() {
                out.push(i);
            }
            continue;
        }
        matched = true;
        if let Some(e) = element {
            out.push(e);
        }
    }
    if let Some(e) = element
        && !matched
        && !arena[e].is_null()
    {
        out.push(e);
    }
    *list = out;
}

/// A part of the object the patch does not name, walked alone (`[object, nil]`): each list
/// with the merge strategy in it is rebuilt as `walkAssociativeSequence` rebuilds any merged
/// list ([`KzList`] in `Alone` mode: with one key, one element per key at its first position
/// with its last occurrence's content; with several, an element lacking one set again at the
/// end); a merged list of scalars keeps one of each value (`elementPrimitiveValues`). Lists
/// that are not merged are not entered.
///
/// A field named by the empty string fails, as it does in kyaml, whose `FieldSetter` reads an
/// empty name as "set this scalar" and finds a map (`kyaml/yaml/fns.go`).
///
/// A field the walk would leave as it is ([`kz_settles_unchanged`]) is not reached through
/// `&mut`: the map keeps sharing its entries with its copies (`yaml::Map::freeze`), so the
/// maps a patch does not change stay the object's maps as they were (field provenance then
/// skips them by pointer; docs/performance.md, "Provenance at 1.5×").
fn kz_settle_map(map: &mut Map, cur: Cursor<'_>, path: &Path<'_>) -> R<()> {
    kz_settle_fields(map, cur, path, |_| false)
}

/// [`kz_settle_map`] of the fields `skip` does not name.
fn kz_settle_fields(
    map: &mut Map,
    cur: Cursor<'_>,
    path: &Path<'_>,
    skip: impl Fn(&str) -> bool,
) -> R<()> {
    for i in 0..map.len() {
        let Some((key, v)) = map.get_index(i) else {
            break;
        };
        if skip(key) {
            continue;
        }
        if key.is_empty() {
            return Err(kz_empty_key(path));
        }
        if kz_quoted_when_walked(kz_style(map, i), v) {
            map.set_style_index(i, ScalarStyle::Quoted);
            continue;
        }
        if kz_settles_unchanged(v, cur.kustomize_field(key)) {
            continue;
        }
        if let Some((key, v)) = map.get_index_mut(i) {
            kz_settle_value(v, cur.kustomize_field(key), &path.key(key))?;
        }
    }
    Ok(())
}

/// Whether [`kz_settle_value`] would leave `v` as it is and succeed, told without changing
/// it; `false` when that is not certain (a list the general walk rebuilds, an empty key: the
/// walk itself then runs). Follows [`kz_settle_list`]'s cases: a merged list of scalars with
/// no value twice (`kz_primitives` keeps it as it is), a merged list without a key (not
/// entered), and one of the shape [`kz_settle_in_place`] walks, whose elements settle as maps.
fn kz_settles_unchanged(v: &Node, (sub, meta): (Cursor<'_>, &PatchMeta)) -> bool {
    match v {
        Node::Map(m) => kz_map_settles_unchanged(m, sub),
        Node::Seq(items) if meta.strategy.merge => {
            if items
                .iter()
                .all(|v| !matches!(v, Node::Map(_) | Node::Seq(_)))
            {
                return items
                    .iter()
                    .enumerate()
                    .all(|(j, v)| !items[..j].iter().any(|o| go_eq(o, v)));
            }
            let Some(keys) = kz_keys(meta) else {
                return true;
            };
            let items_cur = sub.items();
            kz_keyed_values(items, &keys).is_some()
                && items.iter().all(|e| match e {
                    Node::Map(m) => kz_map_settles_unchanged(m, items_cur),
                    _ => true,
                })
        }
        _ => true,
    }
}

/// [`kz_settles_unchanged`] of a map walked alone ([`kz_settle_map`]).
fn kz_map_settles_unchanged(m: &Map, cur: Cursor<'_>) -> bool {
    m.iter().enumerate().all(|(i, (k, v))| {
        !k.is_empty()
            && !kz_quoted_when_walked(kz_style(m, i), v)
            && kz_settles_unchanged(v, cur.kustomize_field(k))
    })
}

/// Whether kyaml's walk of a map field gives its value a quoted style: a plain string that
/// YAML 1.1 reads as another type. Every field `walkMap` visits is set again with a
/// `FieldSetter` whose value is the walked node itself (the object's own for a field the patch
/// does not name, the patch's for one it adds), and `FieldSetter.Filter` double-quotes a plain
/// string value that `IsYaml1_1NonString` finds (kyaml/yaml/fns.go,
/// kyaml/yaml/compatibility.go) before it copies the style of the field there, which is that
/// node. Read from a file, such a plain string is a YAML 1.1 boolean word (`yes`, `on`, `n`:
/// strings to go-yaml v3); written by an earlier patch's quoted string over a plain value, any
/// text (`"0x10"`, `"5"`). A later patch's number over it then prints as a string
/// ([`kz_scalar_over`]). A tagged value (`!!str yes`) has go-yaml's `TaggedStyle`, not 0, and
/// stays as it is.
///
/// A plain string read from a file is a string to go-yaml v3, which YAML 1.1 reads otherwise
/// only when it is a boolean word (a first-byte test); only a [`ScalarStyle::PlainWritten`]
/// value can be any text, and only its text is read as YAML 1.1 (the full test on every
/// walked string cost a render 2%).
fn kz_quoted_when_walked(style: ScalarStyle, v: &Node) -> bool {
    match (style, v) {
        (ScalarStyle::Plain, Node::Str(s)) => crate::yaml::resolve::yaml11_bool(s).is_some(),
        (ScalarStyle::PlainWritten, Node::Str(s)) => crate::yaml::parse::yaml11_non_string(s),
        _ => false,
    }
}

/// The style of `m`'s value at `i`, a rule applied (`parse::resolved_style`).
fn kz_style(m: &Map, i: usize) -> ScalarStyle {
    match m.get_index(i) {
        Some((_, v)) => crate::yaml::parse::resolved_style(m.style_index(i), v),
        None => ScalarStyle::Plain,
    }
}

/// The style a field keeps when a patch's scalar `v`, written in `patch_style`, is set over a
/// value of style `dest` (`FieldSetter` gives the patch's node the style there): quoted and
/// tagged stay; a plain field that now holds a string the patch wrote quoted or tagged is
/// [`ScalarStyle::PlainWritten`] (its text may read as another type: `"0x10"`), else plain.
fn kz_style_over(dest: ScalarStyle, patch_style: ScalarStyle, v: &Node) -> ScalarStyle {
    match dest {
        ScalarStyle::Quoted | ScalarStyle::Tagged => dest,
        _ if matches!(v.unspelled(), Node::Str(_)) && patch_style != ScalarStyle::Plain => {
            ScalarStyle::PlainWritten
        }
        _ => ScalarStyle::Plain,
    }
}

/// The style of a value `v` written as `style` after kyaml's walk sets it
/// ([`kz_quoted_when_walked`]).
fn kz_walked_style(style: ScalarStyle, v: &Node) -> ScalarStyle {
    if kz_quoted_when_walked(style, v) {
        ScalarStyle::Quoted
    } else {
        style
    }
}

/// [`kz_settle_map`] of one field's value.
fn kz_settle_value(v: &mut Node, (sub, meta): (Cursor<'_>, &PatchMeta), path: &Path<'_>) -> R<()> {
    match v {
        Node::Map(m) => kz_settle_map(m, sub, path),
        Node::Seq(items) if meta.strategy.merge => kz_settle_list(items, sub.items(), meta, path),
        _ => Ok(()),
    }
}

fn kz_empty_key(path: &Path<'_>) -> MergeError {
    MergeError::new(
        K::TypeMismatch,
        path,
        "wrong node kind: expected ScalarNode but got MappingNode: a field is named by the empty string, which kustomize cannot merge",
    )
}

/// The empty-key check of [`kz_settle_map`] over a patch's maps.
pub(super) fn kz_no_empty_key(m: &Map, path: &Path<'_>) -> R<()> {
    for (k, v) in m {
        if k.is_empty() {
            return Err(kz_empty_key(path));
        }
        match v {
            Node::Map(inner) => kz_no_empty_key(inner, &path.key(k))?,
            Node::Seq(items) => {
                for inner in items.iter().filter_map(Node::as_map) {
                    kz_no_empty_key(inner, &path.key(k))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// [`kz_settle_map`] of a merged list.
fn kz_settle_list(
    items: &mut Vec<Node>,
    cur: Cursor<'_>,
    meta: &PatchMeta,
    path: &Path<'_>,
) -> R<()> {
    if let Some(scalars) = kz_primitives_alone(items) {
        *items = scalars;
        return Ok(());
    }
    let Some(keys) = kz_keys(meta) else {
        return Ok(());
    };
    if kz_settle_in_place(items, &keys, cur, path)? {
        return Ok(());
    }
    let merger = Merger::apply(Dialect::Kustomize);
    *items = KzList::walk(
        std::mem::take(items),
        &merger,
        KzSources::Alone,
        &keys,
        cur,
        path,
    )?;
    Ok(())
}

/// [`KzList::merge`] of a list walked alone, for the lists it leaves as they are (most of
/// them): every element a map with a value for every key, no two elements with the same
/// values. Each element is then found by its own values, walked alone and set back in its
/// place (`ElementSetter` replaces the one match), and `appendListNode` sets each again where it
/// is. The elements are walked in place, in order, as `merge` walks them; `false` (and nothing
/// walked) when the list is not of that shape.
pub(super) fn kz_settle_in_place(
    items: &mut [Node],
    keys: &[&str],
    cur: Cursor<'_>,
    path: &Path<'_>,
) -> R<bool> {
    if kz_keyed_values(items, keys).is_none() {
        return Ok(false);
    }
    for v in items.iter_mut() {
        kz_settle_element(v, keys[0], cur, path)?;
    }
    Ok(true)
}

/// Each element's key values ([`kz_values`]) when the list has the shape the shortcuts take
/// ([`kz_settle_in_place`], [`Merger::kz_merge_keyed`]): every element a map with a value for
/// every key, no two elements with the same values. `None` otherwise.
fn kz_keyed_values(list: &[Node], keys: &[&str]) -> Option<Vec<Vec<String>>> {
    let values = list
        .iter()
        .map(|v| {
            v.as_map()?;
            Some(kz_values(v, keys)).filter(|vs| vs.iter().all(|x| !x.is_empty()))
        })
        .collect::<Option<Vec<_>>>()?;
    let mut sorted: Vec<&Vec<String>> = values.iter().collect();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0] != w[1]).then_some(values)
}

/// An element of a merged list walked alone (`[element, nil]`), in place; its path names it by
/// its value of `key`.
fn kz_settle_element(v: &mut Node, key: &str, cur: Cursor<'_>, path: &Path<'_>) -> R<()> {
    let kv = v.get(key).cloned().unwrap_or(Node::Null);
    match v {
        Node::Map(m) => kz_settle_map(m, cur, &path.elem(key, &kv)),
        _ => Ok(()),
    }
}

fn kz_kind(c: Class) -> &'static str {
    match c {
        Class::Map => "MappingNode",
        Class::List => "SequenceNode",
        _ => "ScalarNode",
    }
}

fn kz_bad_strategy(d: Option<&Node>, path: &Path<'_>) -> MergeError {
    MergeError::new(
        K::BadDirective,
        path,
        format!(
            "unknown patch strategy '{}'",
            d.map(go_fmt).unwrap_or_default()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    /// A map walked alone keeps sharing the maps the walk leaves as they are, and the walk
    /// still changes what it changes (a merged list of scalars with a value twice).
    #[test]
    fn settling_keeps_unchanged_maps_shared() {
        let schema = Schema::builtin();
        let cur = schema.kustomize_root(&Gvk::from_api_version("apps/v1", "Deployment"));
        let mut obj = parse_one(
            "metadata:\n  name: d\n  finalizers: [x, y, x]\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        ports:\n        - containerPort: 80\n          protocol: TCP\n        env:\n        - name: A\n          value: '1'\n      volumes:\n      - name: v\n        configMap: {name: c}\n",
        )
        .expect("test YAML parses");
        obj.freeze();
        let Node::Map(before) = obj else {
            panic!("a map")
        };
        let mut settled = before.clone();
        kz_settle_map(&mut settled, cur, &Path::ROOT).expect("settles");
        let (Some(Node::Map(spec)), Some(Node::Map(spec_before))) =
            (settled.get("spec"), before.get("spec"))
        else {
            panic!("spec is a map")
        };
        assert!(
            spec.shares_with(spec_before),
            "the unchanged spec stays shared"
        );
        assert!(
            !settled.shares_with(&before),
            "the root holds a changed field"
        );
        assert_eq!(
            settled.get("metadata").and_then(|m| m.get("finalizers")),
            Some(&parse_one("[x, y]").expect("parses")),
            "a merged list of scalars keeps each value once"
        );
        let (Some(Node::Map(meta)), Some(meta_before)) =
            (settled.get("metadata"), before.get("metadata"))
        else {
            panic!("metadata is a map")
        };
        assert!(!meta.shares_with(meta_before.as_map().expect("a map")));
        // Nothing left to change: a second walk changes nothing and unshares nothing.
        settled.freeze();
        let mut again = settled.clone();
        kz_settle_map(&mut again, cur, &Path::ROOT).expect("settles");
        assert!(again.shares_with(&settled));
    }
}
