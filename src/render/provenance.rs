//! Field provenance while rendering (issue 29): after each step that can change objects, the
//! fields whose value changed are given that step's origin (the place in a file that set
//! them), on top of the chain recorded so far; and a recorded place is resolved to a file,
//! line and column when shown. Runs only with `RenderOptions::provenance` on.

use std::sync::Arc;

use super::patches::{Body, Patch};
use crate::kustomization::Loaded;
use crate::kustomization::load::{Cursor, locate_value, value_at};
use crate::merge::smp::track;
use crate::resource::Resource;
use crate::resource::provenance::{Moved, Origin, Place, Provenance, Read, Source, Step, Tree};
use crate::schema::{Cursor as SchemaCursor, PatchMeta, Schema};
use crate::source::{Location, SourceFile};
use crate::yaml::path::{PathSeg, parse_path, path_text, push_index, push_key};
use crate::yaml::{Map, Node};

/// Where a step says it set the field at `path` of `r`, given the value it had before
/// (`None` for a new field).
pub(crate) type LocateFn<'a> = &'a dyn Fn(&Resource, &[PathSeg], Option<&Node>) -> Option<Place>;

/// Records `step` over `acc`: every field of an object whose value is new or differs from the
/// one recorded gets the origin `locate` gives, before the older ones. An object seen for the
/// first time has each field attributed to the document it was read from when it has one
/// (written down once for the whole object: [`Tree::Read`]), else to `step`. Only what
/// changed since the last record is compared: the recorded copy shares the unchanged (frozen)
/// maps with the object, and only the changed fields are written into the tree.
pub(crate) fn record(acc: &mut [Resource], step: Step, locate: LocateFn<'_>) {
    record_sourced(acc, step, &|r, path, before| {
        (locate(r, path, before), None)
    });
}

/// Where a step says it set the field at `path` of `r` (as [`LocateFn`]), and what else it
/// read ([`Source`]: a replacement's source object and field, a generator's file entry).
pub(crate) type SourcedLocateFn<'a> =
    &'a dyn Fn(&Resource, &[PathSeg], Option<&Node>) -> (Option<Place>, Option<Box<Source>>);

/// [`record`], for a step whose origins also name what the step read.
pub(crate) fn record_sourced(acc: &mut [Resource], step: Step, locate: SourcedLocateFn<'_>) {
    for r in acc.iter_mut() {
        r.node.freeze_unshared();
        let p = match r.provenance.take() {
            None => match &r.origin {
                Some(loc) => Provenance {
                    read: Some(Read {
                        file: Arc::clone(&loc.file),
                        start: loc.offset,
                    }),
                    tree: Tree::Read,
                    last: r.node.clone(),
                    records: 1,
                },
                None => {
                    let r: &Resource = r;
                    let mut tree = Tree::Empty;
                    let mut buf = Vec::new();
                    each(&r.node, &mut Vec::new(), &mut |segs| {
                        let path = owned(&mut buf, segs);
                        let (place, source) = locate(r, path, None);
                        let origin = Origin {
                            step,
                            place,
                            source,
                        };
                        let slot = tree.slot(path);
                        slot.start(origin);
                        slot.stamp(1);
                    });
                    Provenance {
                        read: None,
                        tree,
                        last: r.node.clone(),
                        records: 1,
                    }
                }
            },
            Some(mut p) => {
                let last = std::mem::take(&mut p.last);
                let r: &Resource = r;
                p.records += 1;
                let seq = p.records;
                let tree = &mut p.tree;
                let mut buf = Vec::new();
                diff(&last, &r.node, &mut Vec::new(), &mut |event, segs| {
                    let path = owned(&mut buf, segs);
                    match event {
                        Event::Set(before) => {
                            let (place, source) = locate(r, path, before);
                            let origin = Origin {
                                step,
                                place,
                                source,
                            };
                            let slot = tree.slot(path);
                            match before {
                                Some(_) => slot.push(origin),
                                None => slot.start(origin),
                            }
                            slot.stamp(seq);
                        }
                        Event::Gone => *tree.slot(path) = Tree::Empty,
                    }
                });
                p.last = r.node.clone();
                *p
            }
        };
        r.provenance = Some(Box::new(p));
    }
}

/// What a step says it wrote into one object: calls the callback with the path of each node
/// it wrote (a field, or a map or list every field of which it wrote), whether or not the
/// value changed. Given the object's index in the list and the object after the step.
pub(crate) type WrittenFn<'a> = &'a dyn Fn(usize, &Resource, &mut dyn FnMut(&[PathSeg]));

/// Records the fields `step` wrote (`written`), whatever value they had before: a write of the
/// value a field already had is not seen by [`record`]'s comparison, yet it is the place that
/// sets the field now (docs/explain.md). Each field at or under a path `written` gives that
/// the object holds gets `locate`'s origin on top of its chain, unless its newest origin is
/// already this step's at that place (a change `record` saw), which then only takes the
/// source `locate` names when it had none. Run after [`record`]/[`record_sourced`] for the
/// same step, and only with provenance on: it adds nothing to a render without it.
pub(crate) fn record_written(
    acc: &mut [Resource],
    step: Step,
    written: WrittenFn<'_>,
    locate: SourcedLocateFn<'_>,
) {
    for (i, r) in acc.iter_mut().enumerate() {
        // Taken out while the object is read, so that each field found is recorded at once
        // (no list of paths in between); neither `written` nor `locate` reads it.
        let Some(mut p) = r.provenance.take() else {
            continue;
        };
        // A field the record of this step just gave this step's origin is skipped: the step
        // set the value it holds, and that origin says where. (For `images`, a write located
        // from the value after the step could name another field of the same entry, `newName`
        // for `newTag`, and add a second origin for one write.) Not for a JSON 6902 list: its
        // writes name sources.
        let just = (!matches!(step, Step::Json6902)).then_some(p.records);
        {
            let r: &Resource = r;
            let tree = &mut p.tree;
            let mut buf = Vec::new();
            let mut at_leaf = |leaf: &[PathSeg]| {
                if let (Some(seq), Tree::Field { stamp, .. }) = (just, tree.get(leaf))
                    && *stamp == seq
                {
                    return;
                }
                let before = node_at(&r.node, leaf);
                let (place, source) = locate(r, leaf, before);
                let origin = Origin {
                    step,
                    place,
                    source,
                };
                let slot = tree.slot(leaf);
                match slot {
                    Tree::Field { origins, .. }
                        if origins.first().is_some_and(|o| {
                            o.step == step && same_place(&o.place, &origin.place)
                        }) =>
                    {
                        if origin.source.is_some() && origins[0].source.is_none() {
                            origins[0].source = origin.source;
                        }
                    }
                    Tree::Empty => slot.start(origin),
                    _ => slot.push(origin),
                }
            };
            written(i, r, &mut |path| {
                let Some(node) = node_at(&r.node, path) else {
                    return;
                };
                // A field written (a label pair, an image, a count: most writes) is its own
                // only leaf: its path is used as given, not copied to segments and back.
                if is_field(node) {
                    at_leaf(path);
                    return;
                }
                let mut segs: Vec<PathSeg<&str>> = path.iter().map(PathSeg::borrowed).collect();
                each(node, &mut segs, &mut |leaf| at_leaf(owned(&mut buf, leaf)));
            });
        }
        r.provenance = Some(p);
    }
}

/// The node at `path` under `n`.
pub(crate) fn node_at<'a>(n: &'a Node, path: &[PathSeg]) -> Option<&'a Node> {
    let mut n = n;
    for s in path {
        n = match (s, n.unspelled()) {
            (PathSeg::Key(k), Node::Map(m)) => m.get(k)?,
            (PathSeg::Index(i), Node::Seq(v)) => v.get(*i)?,
            _ => return None,
        };
    }
    Some(n)
}

/// Whether two origins name the same place (the same document of the same file, the same
/// path), or both none.
pub(crate) fn same_place(a: &Option<Place>, b: &Option<Place>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            Arc::ptr_eq(&a.file, &b.file) && a.start == b.start && a.path == b.path
        }
        (None, None) => true,
        _ => false,
    }
}

/// Lines up the lists whose items a step moved, before [`record`] compares by position: in a
/// list the schema merges by keys (`schema`: the render's, for each object's kind; the keys
/// the strategic merge matches items by), an item now at another position than the item with
/// its key values had (a strategic merge patch adding a sidecar container before others, or
/// a JSON 6902 `add` in the middle) takes that item's recorded value and origins, written out
/// at the path it had (a field read from a document keeps that document's path); an item
/// with new values has none. A list the step replaced whole (`replaced(i)`: the lists of the
/// `i`th object a strategic merge patch gave as written) keeps none of its items' origins. So
/// a moved item's fields keep their own chains rather than being compared with the item that
/// was at their position. Only with provenance on; a list whose items kept their positions is
/// left as it is.
pub(crate) fn align_moved_items<'w>(
    acc: &mut [Resource],
    schema: &Schema,
    replaced: &dyn Fn(usize) -> &'w [Vec<PathSeg>],
) {
    for (i, r) in acc.iter_mut().enumerate() {
        if r.provenance.is_none() {
            continue;
        }
        let root = schema.kustomize_root(&r.gvk());
        let Some(p) = r.provenance.as_mut() else {
            continue;
        };
        r.node.freeze_unshared();
        let mut last = std::mem::take(&mut p.last);
        let mut a = Align {
            p,
            replaced: replaced(i),
            path: Vec::new(),
        };
        a.node(&mut last, &r.node, root, None);
        p.last = last;
    }
}

/// One object's [`align_moved_items`].
struct Align<'a> {
    p: &'a mut Provenance,
    replaced: &'a [Vec<PathSeg>],
    path: Vec<PathSeg>,
}

impl Align<'_> {
    /// `last` (as recorded) against `now`; `cur` is the schema there, `meta` what it says of
    /// the field holding them.
    fn node(
        &mut self,
        last: &mut Node,
        now: &Node,
        cur: SchemaCursor<'_>,
        meta: Option<&PatchMeta>,
    ) {
        match (last, now) {
            (Node::Map(x), Node::Map(y)) => {
                if x.shares_with(y) {
                    return;
                }
                for (k, vb) in y.iter() {
                    let descend = match (x.get(k), vb) {
                        (Some(Node::Map(a)), Node::Map(b)) => !a.shares_with(b),
                        (Some(Node::Seq(_)), Node::Seq(_)) => true,
                        _ => false,
                    };
                    if !descend {
                        continue;
                    }
                    let Some(va) = x.get_mut(k) else { continue };
                    let (sub, meta) = cur.kustomize_field(k);
                    self.path.push(PathSeg::Key(k.to_string()));
                    self.node(va, vb, sub, Some(meta));
                    self.path.pop();
                }
            }
            (Node::Seq(x), Node::Seq(y)) => {
                let moves = if self.replaced.contains(&self.path) {
                    Some(vec![None; y.len()])
                } else {
                    meta.and_then(|m| track::moves(x, y, &track::list_merge(m, y)))
                };
                if let Some(moves) = moves {
                    self.realign(x, &moves);
                }
                let items = cur.items();
                for (i, (va, vb)) in x.iter_mut().zip(y).enumerate() {
                    self.path.push(PathSeg::Index(i));
                    self.node(va, vb, items, None);
                    self.path.pop();
                }
            }
            _ => {}
        }
    }

    /// Puts the recorded items of the list `x` (at `self.path`) where `moves` says they are
    /// now, with their origins.
    fn realign(&mut self, x: &mut Vec<Node>, moves: &[Option<usize>]) {
        let p = &mut *self.p;
        let path = &self.path;
        let mut old_items: Vec<Option<Tree>> = (0..x.len())
            .map(|j| {
                moves.contains(&Some(j)).then(|| {
                    let mut old = path.clone();
                    old.push(PathSeg::Index(j));
                    moved_tree(p, &x[j], &old)
                })
            })
            .collect();
        let items = moves
            .iter()
            .map(|m| m.and_then(|j| old_items[j].take()).unwrap_or_default())
            .collect();
        *p.tree.slot(path) = Tree::Seq {
            items,
            rest: Box::new(Tree::Empty),
        };
        *x = moves
            .iter()
            .map(|m| m.map_or(Node::Null, |j| x[j].clone()))
            .collect();
    }
}

/// The origins of the item `node` recorded at `old` (its path before it moved), taken out of
/// the tree with the document origins they imply kept at the paths they name (a field read
/// from a document: that document at `old`), as a tree rooted at the item.
fn moved_tree(p: &mut Provenance, node: &Node, old: &[PathSeg]) -> Tree {
    let taken = std::mem::take(p.tree.slot(old));
    let read = p.read.as_ref();
    let mut text = path_text(old);
    written_out(taken, node, &mut text, old.len(), old.len(), read)
}

/// `t` (the origins at `node`, whose path was `path`, of `depth` segments) made to keep
/// meaning the same origins once the node sits at another position of its list: a
/// [`Tree::Read`] node becomes a [`Tree::ReadAt`] naming `path` (its fields' document
/// origins, written out only when shown), a field's own document origin is written down at
/// `path`. What an earlier move left ([`Tree::ReadAt`], a field read at a [`Moved`] path)
/// stays when that move's item holds the one moving now (`root`: the moving item's depth),
/// since it replaces the whole path down to its item; inside it, it is made again at `path`.
fn written_out(
    t: Tree,
    node: &Node,
    path: &mut String,
    depth: usize,
    root: usize,
    read: Option<&Read>,
) -> Tree {
    match (t, node) {
        (Tree::Empty, _) => Tree::Empty,
        (Tree::ReadAt(m), _) => match read {
            Some(_) if m.depth >= root => Tree::ReadAt(m),
            Some(_) => Tree::ReadAt(Moved {
                path: Arc::from(m.doc_path(path)),
                depth,
            }),
            None => Tree::Empty,
        },
        (
            Tree::Field {
                mut origins,
                read: r,
                at,
                stamp: _,
            },
            _,
        ) => {
            if let Some(m) = &at
                && m.depth >= root
            {
                return Tree::Field {
                    origins,
                    read: r,
                    at,
                    stamp: 0,
                };
            }
            if r && let Some(d) = read {
                match &at {
                    Some(m) => origins.push(d.origin(&m.doc_path(path))),
                    None => origins.push(d.origin(path)),
                }
            }
            Tree::Field {
                origins,
                read: false,
                at: None,
                stamp: 0,
            }
        }
        (Tree::Read, _) => match read {
            Some(_) => Tree::ReadAt(Moved {
                path: Arc::from(path.as_str()),
                depth,
            }),
            None => Tree::Empty,
        },
        (Tree::Map { mut keys, rest }, Node::Map(m)) if !m.is_empty() => {
            let rest = *rest;
            let mut out = crate::resource::provenance::Keys::default();
            for (k, v) in m.iter() {
                let child = keys.take(k.as_str()).unwrap_or_else(|| rest.clone());
                let len = path.len();
                push_key(path, k);
                let w = written_out(child, v, path, depth + 1, root, read);
                path.truncate(len);
                out.set(k, w);
            }
            Tree::Map {
                keys: out,
                rest: Box::new(Tree::Empty),
            }
        }
        (Tree::Seq { items, rest }, Node::Seq(list)) if !list.is_empty() => {
            let rest = *rest;
            let mut items = items;
            items.resize_with(list.len(), || rest.clone());
            let mut out = Vec::with_capacity(list.len());
            for (i, (child, v)) in items.into_iter().zip(list).enumerate() {
                let len = path.len();
                push_index(path, i);
                out.push(written_out(child, v, path, depth + 1, root, read));
                path.truncate(len);
            }
            Tree::Seq {
                items: out,
                rest: Box::new(Tree::Empty),
            }
        }
        _ => Tree::Empty,
    }
}

/// `segs` as the owned path `locate` and the tree take, made in `buf` from the last path
/// made there: the fields of one object come in document order, so most of a path is the
/// last one's and only the rest is copied.
fn owned<'b>(buf: &'b mut Vec<PathSeg>, segs: &[PathSeg<&str>]) -> &'b [PathSeg] {
    let same = buf.iter().zip(segs).take_while(|(a, b)| a == b).count();
    // The rest written over the last path's segments, a key into the last one's string (no
    // allocation for a field beside the last one).
    for (i, s) in segs.iter().enumerate().skip(same) {
        match (buf.get_mut(i), s) {
            (Some(PathSeg::Key(k)), PathSeg::Key(n)) => {
                k.clear();
                k.push_str(n);
            }
            (Some(slot), s) => *slot = s.owned(),
            (None, s) => buf.push(s.owned()),
        }
    }
    buf.truncate(segs.len());
    buf
}

/// What [`diff`] found at a field path.
enum Event<'a> {
    /// A new field (`None`) or a new value (the one before).
    Set(Option<&'a Node>),
    /// The field is no longer there.
    Gone,
}

fn is_field(n: &Node) -> bool {
    match n {
        Node::Map(m) => m.is_empty(),
        Node::Seq(s) => s.is_empty(),
        _ => true,
    }
}

/// Compares the recorded `a` with the current `b`, skipping maps they share.
fn diff<'n>(
    a: &'n Node,
    b: &'n Node,
    path: &mut Vec<PathSeg<&'n str>>,
    ev: &mut dyn FnMut(Event<'n>, &[PathSeg<&'n str>]),
) {
    match (a, b) {
        (Node::Map(x), Node::Map(y)) if !x.is_empty() && !y.is_empty() => {
            if x.shares_with(y) {
                return;
            }
            // A key is most often at the same position on both sides: looked at there first.
            let at = |m: &'n Map, i: usize, k: &str| match m.get_index(i) {
                Some((key, v)) if key == k => Some(v),
                _ => m.get(k),
            };
            for (i, (k, vb)) in y.iter().enumerate() {
                path.push(PathSeg::Key(k));
                match at(x, i, k) {
                    Some(va) => diff(va, vb, path, ev),
                    None => each(vb, path, &mut |p| ev(Event::Set(None), p)),
                }
                path.pop();
            }
            for (i, (k, va)) in x.iter().enumerate() {
                if at(y, i, k).is_none() {
                    path.push(PathSeg::Key(k));
                    each(va, path, &mut |p| ev(Event::Gone, p));
                    path.pop();
                }
            }
        }
        (Node::Seq(x), Node::Seq(y)) if !x.is_empty() && !y.is_empty() => {
            for i in 0..x.len().max(y.len()) {
                path.push(PathSeg::Index(i));
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => diff(va, vb, path, ev),
                    (None, Some(vb)) => each(vb, path, &mut |p| ev(Event::Set(None), p)),
                    (Some(va), None) => each(va, path, &mut |p| ev(Event::Gone, p)),
                    (None, None) => {}
                }
                path.pop();
            }
        }
        _ if is_field(a) && is_field(b) => {
            if a != b {
                ev(Event::Set(Some(a)), path);
            }
        }
        _ => {
            each(a, path, &mut |p| ev(Event::Gone, p));
            each(b, path, &mut |p| ev(Event::Set(None), p));
        }
    }
}

/// [`each`] with owned paths: calls `f` with the path of every field at or under `n`, which
/// sits at `at`.
pub(super) fn each_owned<'a>(n: &'a Node, at: &'a [PathSeg], f: &mut dyn FnMut(&[PathSeg])) {
    let mut segs: Vec<PathSeg<&'a str>> = at.iter().map(PathSeg::borrowed).collect();
    let mut buf = Vec::new();
    each(n, &mut segs, &mut |p| f(owned(&mut buf, p)));
}

/// Calls `f` with the path of every field of `n`, which sits at `path`.
fn each<'n>(n: &'n Node, path: &mut Vec<PathSeg<&'n str>>, f: &mut dyn FnMut(&[PathSeg<&'n str>])) {
    match n {
        Node::Map(m) if !m.is_empty() => {
            for (k, v) in m.iter() {
                path.push(PathSeg::Key(k));
                each(v, path, f);
                path.pop();
            }
        }
        Node::Seq(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                path.push(PathSeg::Index(i));
                each(v, path, f);
                path.pop();
            }
        }
        _ => f(path),
    }
}

/// Takes the current values as recorded without a new origin: a change of how a value is
/// written, not of what it is (annotations made strings at the root).
pub(crate) fn refresh(acc: &mut [Resource]) {
    for r in acc.iter_mut() {
        r.node.freeze_unshared();
        if let Some(p) = r.provenance.as_mut() {
            p.last = r.node.clone();
        }
    }
}

/// The origin of a generated object's field: the generator entry that names the object, and
/// for a `data` key from a literal, that literal (`configMapGenerator[0].literals[1]`).
pub(crate) fn generator_place(loaded: &Loaded, r: &Resource, path: &[PathSeg]) -> Place {
    let k = &loaded.kustomization;
    let (field, list) = if r.kind() == "Secret" {
        ("secretGenerator", &k.secret_generator)
    } else {
        ("configMapGenerator", &k.config_map_generator)
    };
    let name = r.name();
    let Some(i) = list
        .iter()
        .position(|g| g.name.as_deref().is_some_and(|n| n == name))
    else {
        return in_kustomization(loaded, vec![key(field)]);
    };
    let mut p = vec![key(field), PathSeg::Index(i)];
    if let [PathSeg::Key(top), PathSeg::Key(data_key)] = path
        && (top == "data" || top == "stringData" || top == "binaryData")
    {
        let prefix = format!("{data_key}=");
        if let Some(j) = list[i].literals.iter().position(|l| l.starts_with(&prefix)) {
            p.extend([key("literals"), PathSeg::Index(j)]);
        }
    } else if let [PathSeg::Key(top), PathSeg::Key(second)] = path
        && top == "metadata"
        && second == "name"
    {
        p.push(key("name"));
    }
    in_kustomization(loaded, p)
}

/// Where the JSON 6902 patch `p` set the field at `path`: the operation of its list that
/// wrote it ([`json6902_path`]), else its kustomization entry.
pub(super) fn json_place(p: &Patch, path: &[PathSeg]) -> Option<Place> {
    let declared = || p.declared.as_ref().map(at);
    match &p.body {
        Body::Json(ops) => match (&p.file, json6902_path(ops, path)) {
            (Some(file), Some(op)) => Some(Place {
                file: Arc::clone(file),
                start: 0,
                path: path_text(&op),
            }),
            _ => declared(),
        },
        Body::Smp(_) | Body::Nothing => declared(),
    }
}

/// A place at a location (its line).
pub(crate) fn at(loc: &Location) -> Place {
    Place {
        file: Arc::clone(&loc.file),
        start: loc.offset,
        path: String::new(),
    }
}

/// A place in a kustomization file.
pub(crate) fn in_kustomization(loaded: &Loaded, path: Vec<PathSeg>) -> Place {
    Place {
        file: Arc::clone(&loaded.file),
        start: 0,
        path: path_text(&path),
    }
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// The origin of a built-in transformer's change to the field at `path`: the kustomization
/// line that configures it.
pub(crate) fn transformer_place(
    loaded: &Loaded,
    step: Step,
    r: &Resource,
    path: &[PathSeg],
    before: Option<&Node>,
) -> Place {
    let k = &loaded.kustomization;
    let last_key = match path.last() {
        Some(PathSeg::Key(s)) => s.as_str(),
        _ => "",
    };
    // The path is written as text directly (no list of segments): this runs for every field
    // a transformer changes.
    let mut p = String::with_capacity(32);
    let mut push = |seg: PathSeg<&str>| match seg {
        PathSeg::Key(k) => push_key(&mut p, k),
        PathSeg::Index(i) => push_index(&mut p, i),
    };
    match step {
        Step::Namespace => push(PathSeg::Key("namespace")),
        Step::NamePrefix => push(PathSeg::Key("namePrefix")),
        Step::NameSuffix => push(PathSeg::Key("nameSuffix")),
        Step::Labels => {
            match k
                .labels
                .iter()
                .rposition(|l| l.pairs.contains_key(last_key))
            {
                Some(i) => {
                    push(PathSeg::Key("labels"));
                    push(PathSeg::Index(i));
                    push(PathSeg::Key("pairs"));
                    push(PathSeg::Key(last_key));
                }
                None if k
                    .common_labels
                    .as_ref()
                    .is_some_and(|m| m.contains_key(last_key)) =>
                {
                    push(PathSeg::Key("commonLabels"));
                    push(PathSeg::Key(last_key));
                }
                None => push(PathSeg::Key("labels")),
            }
        }
        Step::CommonAnnotations => {
            push(PathSeg::Key("commonAnnotations"));
            push(PathSeg::Key(last_key));
        }
        Step::Replicas => {
            let name = r.name();
            match k
                .replicas
                .iter()
                .position(|e| e.name == name || r.prev_ids.iter().any(|id| id.name == e.name))
            {
                Some(i) => {
                    push(PathSeg::Key("replicas"));
                    push(PathSeg::Index(i));
                    push(PathSeg::Key("count"));
                }
                None => push(PathSeg::Key("replicas")),
            }
        }
        Step::Images => {
            // The last entry whose name matches the image the field held before (kustomize's
            // `image.IsImageMatched`: a regular expression, then a tag and digest): entries
            // run in order, each rewriting what it matches, so the last one wrote the value.
            let old_text = before.map(scalar_text).unwrap_or_default();
            let old = old_text.as_str();
            match k
                .images
                .iter()
                .rposition(|e| crate::transform::images::matches(&e.name, old))
            {
                Some(i) => {
                    let e = &k.images[i];
                    let new = r_value(r, path).unwrap_or_default();
                    let field = if e.digest.as_ref().is_some_and(|d| new.ends_with(d.as_str())) {
                        "digest"
                    } else if e.new_tag.as_ref().is_some_and(|t| {
                        new.ends_with(&format!(":{t}")) && !old.ends_with(&format!(":{t}"))
                    }) {
                        "newTag"
                    } else if e.new_name.is_some() {
                        "newName"
                    } else if e.new_tag.is_some() {
                        "newTag"
                    } else {
                        "name"
                    };
                    push(PathSeg::Key("images"));
                    push(PathSeg::Index(i));
                    push(PathSeg::Key(field));
                }
                None => push(PathSeg::Key("images")),
            }
        }
        _ => {}
    }
    Place {
        file: Arc::clone(&loaded.file),
        start: 0,
        path: p,
    }
}

/// [`transformer_place`] for every field one record of `step` finds changed, each place made
/// once: for the steps whose place depends only on the field's key (`namespace`, `namePrefix`,
/// `nameSuffix`, `labels`, `commonAnnotations`), later fields with the same key take a copy.
/// A step changes thousands of fields with a handful of keys (docs/performance.md).
pub(crate) struct TransformerPlaces<'a> {
    loaded: &'a Loaded,
    step: Step,
    made: std::cell::RefCell<Vec<(String, Place)>>,
}

impl<'a> TransformerPlaces<'a> {
    pub(crate) fn new(loaded: &'a Loaded, step: Step) -> Self {
        TransformerPlaces {
            loaded,
            step,
            made: Default::default(),
        }
    }

    pub(crate) fn place(&self, r: &Resource, path: &[PathSeg], before: Option<&Node>) -> Place {
        let by_key = matches!(
            self.step,
            Step::Namespace
                | Step::NamePrefix
                | Step::NameSuffix
                | Step::Labels
                | Step::CommonAnnotations
        );
        if !by_key {
            return transformer_place(self.loaded, self.step, r, path, before);
        }
        let key = match path.last() {
            Some(PathSeg::Key(s)) => s.as_str(),
            _ => "",
        };
        let mut made = self.made.borrow_mut();
        if let Some((_, p)) = made.iter().find(|(k, _)| k == key) {
            return p.clone();
        }
        let p = transformer_place(self.loaded, self.step, r, path, before);
        made.push((key.to_string(), p.clone()));
        p
    }
}

/// A scalar as text (`5` for the integer 5), empty for a collection or null.
fn scalar_text(n: &Node) -> String {
    match n.unspelled() {
        Node::Str(s) => s.clone(),
        Node::Int(i) => i.to_string(),
        Node::Float(f) => f.to_string(),
        Node::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

fn r_value(r: &Resource, path: &[PathSeg]) -> Option<String> {
    let mut n = &r.node;
    for s in path {
        n = match (s, n) {
            (PathSeg::Key(k), Node::Map(m)) => m.get(k)?,
            (PathSeg::Index(i), Node::Seq(v)) => v.get(*i)?,
            _ => return None,
        };
    }
    Some(scalar_text(n))
}

/// The operation of a JSON 6902 list that set the field at `out`: the last `add`, `replace`,
/// `copy` or `move` whose path is `out` or holds it; its place is its value (`[i].value…`),
/// or for a `copy` or `move` the operation itself (`[i]`).
pub(crate) fn json6902_path(ops: &Node, out: &[PathSeg]) -> Option<Vec<PathSeg>> {
    json6902_op(ops, out).map(|w| w.place)
}

/// What [`json6902_op`] found: the place of the operation that wrote a field, and for a
/// `copy` or `move` the field it read (its `from`, then the rest of the field's path).
pub(crate) struct OpWrite {
    pub(crate) place: Vec<PathSeg>,
    pub(crate) from: Option<Vec<PathSeg>>,
}

/// A JSON pointer's parts, unescaped (RFC 6901: `~1` is `/`, `~0` is `~`).
pub(crate) fn pointer_parts(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// The operation that set the field at `out` ([`json6902_path`]), with what it read.
pub(crate) fn json6902_op(ops: &Node, out: &[PathSeg]) -> Option<OpWrite> {
    let Node::Seq(list) = ops else { return None };
    list.iter().enumerate().rev().find_map(|(i, op)| {
        let Node::Map(m) = op else { return None };
        let kind = m.get("op")?.as_str()?;
        let moved = matches!(kind, "copy" | "move");
        if !(moved || (matches!(kind, "add" | "replace") && m.get("value").is_some())) {
            return None;
        }
        let parts = pointer_parts(m.get("path")?.as_str()?);
        if parts.len() > out.len() {
            return None;
        }
        let same = parts.iter().zip(out).all(|(p, s)| match s {
            PathSeg::Key(k) => k == p,
            PathSeg::Index(n) => p == "-" || p.parse::<usize>().ok() == Some(*n),
        });
        if !same {
            return None;
        }
        let rest = &out[parts.len()..];
        Some(if moved {
            let from = m.get("from")?.as_str()?;
            let mut read: Vec<PathSeg> = pointer_parts(from)
                .into_iter()
                .map(|p| match p.parse::<usize>() {
                    Ok(n) if !p.starts_with('+') => PathSeg::Index(n),
                    _ => PathSeg::Key(p),
                })
                .collect();
            read.extend(rest.iter().cloned());
            OpWrite {
                place: vec![PathSeg::Index(i)],
                from: Some(read),
            }
        } else {
            let mut place = vec![PathSeg::Index(i), key("value")];
            place.extend(rest.iter().cloned());
            OpWrite { place, from: None }
        })
    })
}

/// A place resolved for showing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The file as ply's diagnostics write it (relative to the working directory).
    pub(crate) file: String,
    /// 1-based.
    pub(crate) line: usize,
    /// 1-based, in characters.
    pub(crate) column: usize,
    /// Whether the text holds the place's whole path (false: the line of the deepest node
    /// found, as for flow-style or JSON text).
    pub(crate) exact: bool,
    /// The text of that line.
    pub(crate) quote: String,
    /// The byte offset of the value in the file.
    pub(crate) offset: usize,
}

/// Resolves a place to the line and column of the value it names.
pub(crate) fn resolve(place: &Place) -> Resolved {
    let path = parse_path(&place.path).unwrap_or_default();
    let (offset, exact) = locate_value(&place.file, place.start, &path);
    resolved(&place.file, offset, exact, place.file.line_col(offset))
}

/// Resolves many places, as [`resolve`] does, following each path through its document from
/// where the previous place's path in that document left it when they share a prefix, and
/// counting lines from the last offset found there: the places of one object's fields,
/// asked in document order, read each document's text about once instead of from its top
/// for every field.
#[derive(Default)]
pub(crate) struct Resolver {
    /// The documents asked about lately, the latest last (a few: an object's fields come
    /// from its document, its kustomizations and its patches).
    docs: Vec<DocWalk>,
}

/// Where [`Resolver`] left one document.
struct DocWalk {
    file: Arc<SourceFile>,
    start: usize,
    /// The last path followed, and the walk after each of its prefixes (`walks[i]` after
    /// `segs[..i]`).
    segs: Vec<PathSeg>,
    walks: Vec<Cursor>,
    /// The last offset resolved and its line: a later one counts the lines from there.
    line_at: Option<(usize, usize)>,
}

/// How many documents a [`Resolver`] keeps its place in.
const DOCS_KEPT: usize = 8;

impl Resolver {
    pub(crate) fn resolve(&mut self, place: &Place) -> Resolved {
        let path = parse_path(&place.path).unwrap_or_default();
        let file = &*place.file;
        let text = file.text.as_str();
        let found = self
            .docs
            .iter()
            .position(|d| Arc::ptr_eq(&d.file, &place.file) && d.start == place.start);
        let d = match found {
            Some(i) => &mut self.docs[i],
            None => {
                if self.docs.len() == DOCS_KEPT {
                    self.docs.remove(0);
                }
                self.docs.push(DocWalk {
                    file: Arc::clone(&place.file),
                    start: place.start,
                    segs: Vec::new(),
                    walks: vec![Cursor::start(text, place.start)],
                    line_at: None,
                });
                let last = self.docs.len() - 1;
                &mut self.docs[last]
            }
        };
        let same = d.segs.iter().zip(&path).take_while(|(a, b)| a == b).count();
        d.segs.truncate(same);
        d.walks.truncate(same + 1);
        for seg in &path[same..] {
            let next = d.walks[d.walks.len() - 1].step(text, seg);
            d.walks.push(next);
            d.segs.push(seg.clone());
        }
        let key = matches!(path.last(), Some(PathSeg::Key(_)));
        let (offset, exact) = value_at(file, place.start, &d.walks[path.len()], key);
        let line_col = match d.line_at {
            // As `SourceFile::line_col` counts, from the last offset on.
            Some((from, line)) if from <= offset && text.is_char_boundary(offset) => {
                let before = &text[..offset];
                let line = line + before[from..].matches('\n').count();
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                (line, before[line_start..].chars().count() + 1)
            }
            _ => file.line_col(offset),
        };
        if text.is_char_boundary(offset) {
            d.line_at = Some((offset, line_col.0));
        }
        resolved(file, offset, exact, line_col)
    }
}

fn resolved(file: &SourceFile, offset: usize, exact: bool, line_col: (usize, usize)) -> Resolved {
    let (line, column) = line_col;
    let text = file.text.as_str();
    let ls = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let le = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    Resolved {
        file: file.display.clone(),
        line,
        column,
        exact,
        quote: text[ls..le].trim_end_matches('\r').to_string(),
        offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fasthash::FastMap;
    use crate::source::Location;

    /// The table the tree stands for, kept the plain way: every field's path as text, each
    /// record comparing every field of the object with the last one.
    #[derive(Default)]
    struct Model {
        fields: FastMap<String, Vec<(Step, String)>>,
        last: Option<FastMap<String, Node>>,
    }

    fn flat(node: &Node) -> Vec<(String, Node)> {
        fn go(n: &Node, path: &mut String, out: &mut Vec<(String, Node)>) {
            match n {
                Node::Map(m) if !m.is_empty() => {
                    for (k, v) in m.iter() {
                        let len = path.len();
                        push_key(path, k);
                        go(v, path, out);
                        path.truncate(len);
                    }
                }
                Node::Seq(s) if !s.is_empty() => {
                    for (i, v) in s.iter().enumerate() {
                        let len = path.len();
                        push_index(path, i);
                        go(v, path, out);
                        path.truncate(len);
                    }
                }
                _ => out.push((path.clone(), n.clone())),
            }
        }
        let mut out = Vec::new();
        go(node, &mut String::new(), &mut out);
        out
    }

    /// What the test's steps say they set: the path, and whether a value was there before.
    fn said(path: &str, before: bool) -> String {
        format!("{path}{}", if before { "!" } else { "" })
    }

    impl Model {
        fn record(&mut self, node: &Node, step: Step, read: bool) {
            let now: FastMap<String, Node> = flat(node).into_iter().collect();
            match &self.last {
                None => {
                    for (p, _) in flat(node) {
                        let o = if read {
                            (Step::Resource, p.clone())
                        } else {
                            (step, said(&p, false))
                        };
                        self.fields.insert(p, vec![o]);
                    }
                }
                Some(last) => {
                    for (p, v) in flat(node) {
                        match last.get(&p) {
                            Some(old) if *old == v => {}
                            Some(_) => {
                                let o = (step, said(&p, true));
                                self.fields.entry(p).or_default().insert(0, o);
                            }
                            None => {
                                self.fields.insert(p.clone(), vec![(step, said(&p, false))]);
                            }
                        }
                    }
                    for p in last.keys() {
                        if !now.contains_key(p) {
                            self.fields.remove(p);
                        }
                    }
                }
            }
            self.last = Some(now);
        }

        fn shown(&self, node: &Node) -> Vec<(String, Vec<(Step, String)>)> {
            flat(node)
                .into_iter()
                .filter_map(|(p, _)| Some((p.clone(), self.fields.get(&p)?.clone())))
                .collect()
        }
    }

    fn shown(r: &Resource) -> Vec<(String, Vec<(Step, String)>)> {
        let mut out = Vec::new();
        if let Some(p) = &r.provenance {
            p.for_each_field(&r.node, &mut |path, _, chain| {
                let origins = chain
                    .origins(path)
                    .into_iter()
                    .map(|o| (o.step, o.place.map(|p| p.path).unwrap_or_default()))
                    .collect();
                out.push((path.to_string(), origins));
            });
        }
        out
    }

    /// A small deterministic random source (xorshift).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    const KEYS: [&str; 4] = ["a", "b", "c.d", "e"];

    fn value(rng: &mut Rng, depth: usize) -> Node {
        match rng.below(if depth > 2 { 3 } else { 6 }) {
            0 | 1 => Node::Int(rng.below(3) as i128),
            2 => Node::Str(KEYS[rng.below(4)].to_string()),
            3 => {
                let mut m = Map::new();
                for _ in 0..rng.below(4) {
                    m.insert(KEYS[rng.below(4)].to_string(), value(rng, depth + 1));
                }
                Node::Map(m)
            }
            _ => Node::Seq((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
        }
    }

    /// Changes one place of `n`: a new value, a key added or removed, an item put first or
    /// dropped, or (going deeper) something under it.
    fn mutate(n: &mut Node, rng: &mut Rng, depth: usize) {
        match n {
            Node::Map(m) if !m.is_empty() && rng.below(3) > 0 => {
                let i = rng.below(m.len());
                match rng.below(4) {
                    0 => {
                        m.shift_remove_index(i);
                    }
                    1 => {
                        m.insert(KEYS[rng.below(4)].to_string(), value(rng, depth + 1));
                    }
                    _ => {
                        if let Some((_, v)) = m.get_index_mut(i) {
                            mutate(v, rng, depth + 1);
                        }
                    }
                }
            }
            Node::Seq(s) if !s.is_empty() && rng.below(3) > 0 => match rng.below(4) {
                0 => {
                    s.remove(rng.below(s.len()));
                }
                1 => s.insert(0, value(rng, depth + 1)),
                _ => {
                    let i = rng.below(s.len());
                    mutate(&mut s[i], rng, depth + 1);
                }
            },
            _ => *n = value(rng, depth),
        }
    }

    /// The tree gives every field the chain the plain path table gives it, over random
    /// changes recorded step after step, for objects read from a document and made ones.
    #[test]
    fn tree_equals_the_path_table() {
        let file = SourceFile::new("/t/r.yaml", "a: 1\n");
        let steps = [Step::Patch, Step::Labels, Step::Images, Step::Namespace];
        let locate: LocateFn<'_> = &|_, path, before| {
            Some(Place {
                file: Arc::clone(&file),
                start: 0,
                path: said(&path_text(path), before.is_some()),
            })
        };
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut compared = 0;
        for case in 0..400 {
            let read = case % 3 != 0;
            let mut start = Map::new();
            for _ in 0..1 + rng.below(4) {
                start.insert(KEYS[rng.below(4)].to_string(), value(&mut rng, 1));
            }
            let mut node = Node::Map(start);
            if case % 2 == 0 {
                node.freeze();
            }
            let origin = read.then(|| Location::new(Arc::clone(&file), 0, 1));
            let mut r = vec![Resource::new(node, origin)];
            let mut model = Model::default();
            for round in 0..6 {
                let step = steps[round % steps.len()];
                if round > 0 {
                    for _ in 0..1 + rng.below(3) {
                        mutate(&mut r[0].node, &mut rng, 0);
                    }
                }
                record(&mut r, step, locate);
                model.record(&r[0].node, step, read);
                let want = model.shown(&r[0].node);
                assert_eq!(shown(&r[0]), want, "case {case}, round {round}");
                compared += want.len();
            }
        }
        assert!(compared > 1000, "only {compared} fields compared");
    }

    /// The one object of `text` (a file at `path`), its reading recorded.
    fn read_recorded(path: &str, text: &str) -> (Arc<SourceFile>, Vec<Resource>) {
        let file = SourceFile::new(path, text);
        let node = crate::yaml::parse_documents(text).unwrap().remove(0).node;
        let origin = Some(Location::new(Arc::clone(&file), 0, 1));
        let mut r = vec![Resource::new(node, origin)];
        record(&mut r, Step::Resource, &|_, _, _| None);
        (file, r)
    }

    /// Lines up a Pod's moved list items by the schema's merge keys (no list replaced).
    fn align_pod(r: &mut [Resource]) {
        let schema = crate::schema::Schema::builtin();
        align_moved_items(r, &schema, &|_| &[]);
    }

    /// An item a step puts at another position keeps its origins (read at the path it had);
    /// the new item gets the step's.
    #[test]
    fn moved_list_items_keep_their_origins() {
        let text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    image: i\n  - name: b\n    image: j\n";
        let (file, mut r) = read_recorded("/t/m.yaml", text);
        let item = |name: &str, image: &str| {
            let mut m = Map::new();
            m.insert("name".into(), Node::Str(name.into()));
            m.insert("image".into(), Node::Str(image.into()));
            Node::Map(m)
        };
        let list = r[0].node.ensure_path(&["spec", "containers"]);
        *list = Node::Seq(vec![item("new", "k"), item("a", "i"), item("b", "j")]);
        align_pod(&mut r);
        let patch = Place {
            file: Arc::clone(&file),
            start: 0,
            path: "patch".into(),
        };
        record(&mut r, Step::Patch, &|_, _, _| Some(patch.clone()));
        let mut got: Vec<(String, Vec<(Step, String)>)> = shown(&r[0]);
        got.retain(|(p, _)| p.starts_with("spec."));
        let want = |step: Step, path: &str| vec![(step, path.to_string())];
        let c = |i: usize, f: &str| format!("spec.containers[{i}].{f}");
        assert_eq!(
            got,
            [
                (c(0, "name"), want(Step::Patch, "patch")),
                (c(0, "image"), want(Step::Patch, "patch")),
                (c(1, "name"), want(Step::Resource, &c(0, "name"))),
                (c(1, "image"), want(Step::Resource, &c(0, "image"))),
                (c(2, "name"), want(Step::Resource, &c(1, "name"))),
                (c(2, "image"), want(Step::Resource, &c(1, "image"))),
            ]
        );
    }

    /// A list the step replaced whole keeps none of its items' origins, even where an item
    /// holds the value it held.
    #[test]
    fn replaced_list_items_lose_their_origins() {
        let text =
            "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    args: [x, y]\n";
        let (file, mut r) = read_recorded("/t/r.yaml", text);
        let args = r[0].node.ensure_path(&["spec", "containers"]);
        let Node::Seq(items) = args else { panic!() };
        let Some(args) = items[0].get_mut("args") else {
            panic!()
        };
        *args = Node::Seq(vec![Node::Str("x".into())]);
        let k = |s: &str| PathSeg::Key(s.to_string());
        let replaced = vec![vec![
            k("spec"),
            k("containers"),
            PathSeg::Index(0),
            k("args"),
        ]];
        let schema = crate::schema::Schema::builtin();
        align_moved_items(&mut r, &schema, &|_| &replaced);
        let patch = Place {
            file: Arc::clone(&file),
            start: 0,
            path: "patch".into(),
        };
        record(&mut r, Step::Patch, &|_, _, _| Some(patch.clone()));
        let got: FastMap<String, Vec<(Step, String)>> = shown(&r[0]).into_iter().collect();
        assert_eq!(
            got["spec.containers[0].args[0]"],
            [(Step::Patch, "patch".to_string())]
        );
        assert_eq!(got["spec.containers[0].name"][0].0, Step::Resource);
    }

    /// Items moved inside an item that moved before (and around one that moved inside it)
    /// keep the document paths they were read at.
    #[test]
    fn nested_moves_keep_their_origins() {
        use crate::yaml::parse::parse_one;
        let head = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n";
        let text = format!(
            "{head}  - name: a\n    env:\n    - name: x\n      value: '1'\n    - name: y\n      value: '2'\n"
        );
        let (file, mut r) = read_recorded("/t/n.yaml", &text);
        let patch = Place {
            file: Arc::clone(&file),
            start: 0,
            path: "patch".into(),
        };
        let steps = [
            // The container moves, then an env entry is put first inside it.
            "  - name: n\n  - name: a\n    env:\n    - name: z\n      value: '0'\n    - name: x\n      value: '1'\n    - name: y\n      value: '2'\n",
            // Again, both: the env entries moved before move inside the moved container.
            "  - name: m\n  - name: n\n  - name: a\n    env:\n    - name: w\n      value: '0'\n    - name: z\n      value: '0'\n    - name: y\n      value: '2'\n    - name: x\n      value: '1'\n",
        ];
        for step in steps {
            r[0].node = parse_one(&format!("{head}{step}")).unwrap();
            align_pod(&mut r);
            record(&mut r, Step::Patch, &|_, _, _| Some(patch.clone()));
        }
        let got: FastMap<String, Vec<(Step, String)>> = shown(&r[0]).into_iter().collect();
        let read = |p: &str| vec![(Step::Resource, p.to_string())];
        let c = |p: &str| format!("spec.containers{p}");
        assert_eq!(got[&c("[2].name")], read(&c("[0].name")));
        assert_eq!(got[&c("[2].env[2].name")], read(&c("[0].env[1].name")));
        assert_eq!(got[&c("[2].env[2].value")], read(&c("[0].env[1].value")));
        assert_eq!(got[&c("[2].env[3].name")], read(&c("[0].env[0].name")));
        assert_eq!(got[&c("[2].env[3].value")], read(&c("[0].env[0].value")));
        assert_eq!(got[&c("[2].env[1].value")][0].0, Step::Patch);
        assert_eq!(got[&c("[1].name")][0].0, Step::Patch);
    }

    /// Places are resolved alike one at a time and in a row from a shared prefix.
    #[test]
    fn resolver_equals_resolve() {
        let file = SourceFile::new(
            "/t/d.yaml",
            "kind: A\nmetadata:\n  name: x\n  labels:\n    a: \"1\"\n    b: 2\nspec:\n  list:\n  - name: c\n    image: i\n  - d\n  empty: {}\n---\nkind: B\nspec:\n  x: 1\n",
        );
        let second = file.text.find("---").unwrap() + 4;
        let paths = [
            (0, "kind"),
            (0, "metadata.name"),
            (0, "metadata.labels.a"),
            (0, "metadata.labels.b"),
            (0, "metadata.labels.zz"),
            (0, "spec.list[0].name"),
            (0, "spec.list[0].image"),
            (0, "spec.list[1]"),
            (0, "spec.list[5].x"),
            (0, "spec.empty"),
            (second, "spec.x"),
            (second, "kind"),
            (0, "metadata.labels.b"),
        ];
        let mut resolver = Resolver::default();
        for (start, path) in paths {
            let place = Place {
                file: Arc::clone(&file),
                start,
                path: path.to_string(),
            };
            assert_eq!(resolver.resolve(&place), resolve(&place), "{path}");
        }
    }
}
