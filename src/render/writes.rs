//! What each step writes, changed or not (issue 29): the fields a strategic merge patch sets,
//! the targets of a JSON 6902 list's operations (and the field a `copy` or `move` read), the
//! label and annotation maps `labels`/`commonLabels`/`commonAnnotations` write their pairs
//! into, the image fields an `images` entry matches, the namespace and the replica counts.
//! [`super::provenance::record_written`] records them; used only with provenance on.

use crate::fasthash::FastMap;
use crate::kustomization::{Kustomization, Loaded, StringMap};
use crate::resource::Resource;
use crate::resource::provenance::{Place, Source, Step};
use crate::transform::FieldSpecTables;
use crate::transform::fieldspec::PathStep;
use crate::yaml::Node;
use crate::yaml::path::{PathSeg, path_text};

use super::patches::{Body, Patch};
use super::places::object_source;
use super::provenance::{
    SourcedLocateFn, align_moved_items, at, each_owned, json_place, json6902_op, node_at,
    pointer_parts, record, record_written, transformer_place,
};
use crate::merge::smp::track;
use crate::schema::Schema;

/// What one strategic merge patch wrote into one object, as the merge reports it
/// ([`track::track`], with the schema's merge keys).
#[derive(Default)]
struct ObjectWrites {
    /// Each field the patch set (by its [`path_text`]): where in the patch.
    places: FastMap<String, Place>,
    /// The fields it set that are neither a merge key of their list item nor part of the
    /// object's identity (`apiVersion`, `kind`, `metadata.name`, `metadata.namespace`): those
    /// pick the object or item the patch sets, they are not written.
    written: Vec<Vec<PathSeg>>,
    /// The lists it gave as written (atomic lists, `$patch: replace`).
    replaced: Vec<Vec<PathSeg>>,
}

/// [`track::Tracker`] for one document (at `loc`) over one object.
struct Collect<'a> {
    writes: &'a mut ObjectWrites,
    loc: Option<&'a crate::source::Location>,
}

impl track::Tracker for Collect<'_> {
    fn wrote(&mut self, out: &[PathSeg], patch: &[PathSeg], key: bool, same: bool) {
        if let Some(loc) = self.loc {
            // The first document that sets a field names its place.
            self.writes
                .places
                .entry(path_text(out))
                .or_insert_with(|| Place {
                    file: std::sync::Arc::clone(&loc.file),
                    start: loc.offset,
                    path: path_text(patch),
                });
        }
        if same && !key && !identity(out) {
            self.writes.written.push(out.to_vec());
        }
    }

    fn replaced(&mut self, out: &[PathSeg]) {
        self.writes.replaced.push(out.to_vec());
    }
}

/// What the strategic merge patch `p` wrote into each object of `acc` it chose (`chosen`:
/// [`super::patches::chosen`] before it ran), by index; `schema` is the one it merged with.
fn smp_writes(
    acc: &[Resource],
    p: &Patch,
    chosen: &[Vec<usize>],
    schema: &Schema,
) -> Vec<ObjectWrites> {
    let mut out: Vec<ObjectWrites> = Vec::new();
    let Body::Smp(docs) = &p.body else {
        return out;
    };
    out.resize_with(acc.len(), ObjectWrites::default);
    for (d, (doc, loc)) in docs.iter().enumerate() {
        for &i in chosen.get(d).into_iter().flatten() {
            let (Some(r), Some(writes)) = (acc.get(i), out.get_mut(i)) else {
                continue;
            };
            let cur = schema.kustomize_root(&r.gvk());
            let mut c = Collect {
                writes,
                loc: loc.as_ref(),
            };
            track::track(doc, &r.node, cur, &mut c);
        }
    }
    out
}

/// What a patch ran over, for [`record_patch`].
pub(crate) struct Tracked<'a> {
    /// The objects it applied to, picked before it ran (`None` when it removed objects, so
    /// that they no longer hold).
    pub chosen: Option<&'a [Vec<usize>]>,
    /// The objects its documents apply to now: `chosen`, or picked again after it removed some.
    pub tracked: &'a [Vec<usize>],
    /// The schema it merged with.
    pub schema: &'a Schema,
}

/// Records one patch `p` over `acc`, after it ran: its changes (a changed field is placed at
/// the patch's value for it: for a strategic merge patch where the merge says it set it, for a
/// JSON 6902 list at its operation), the lists it moved or replaced lined up first
/// ([`align_moved_items`]), then what it wrote with the value a field held (only when it
/// removed no object). `sources`: what a JSON 6902 `copy` or `move` read.
pub(crate) fn record_patch(
    acc: &mut [Resource],
    p: &Patch,
    to: &Tracked<'_>,
    sources: &CopySources,
) {
    let (chosen, schema) = (to.chosen, to.schema);
    match &p.body {
        Body::Smp(docs) => {
            let writes = smp_writes(acc, p, to.tracked, schema);
            let none = ObjectWrites::default();
            let of = |i: usize| writes.get(i).unwrap_or(&none);
            align_moved_items(acc, schema, &|i| &of(i).replaced);
            // `record` names objects, not their positions: found again by address.
            let base = acc.as_ptr() as usize;
            let size = std::mem::size_of::<Resource>().max(1);
            let index = |r: &Resource| (std::ptr::from_ref(r) as usize - base) / size;
            let fallback = || {
                docs.iter()
                    .find_map(|(_, loc)| loc.as_ref().map(at))
                    .or_else(|| p.declared.as_ref().map(at))
            };
            let place = |r: &Resource, path: &[PathSeg]| {
                of(index(r))
                    .places
                    .get(&path_text(path))
                    .cloned()
                    .or_else(fallback)
            };
            record(acc, Step::Patch, &|r, path, _| place(r, path));
            if chosen.is_none() {
                return;
            }
            record_written(
                acc,
                Step::Patch,
                &|i, _, f| of(i).written.iter().for_each(|w| f(w)),
                &|r, path, _| (place(r, path), None),
            );
        }
        Body::Json(ops) => {
            align_moved_items(acc, schema, &|_| &[]);
            record(acc, Step::Json6902, &|_, path, _| json_place(p, path));
            let Some(chosen) = chosen else { return };
            let no_sources = FastMap::default();
            for &i in chosen.iter().flatten() {
                if i >= acc.len() {
                    continue;
                }
                let mine = sources.get(&i).unwrap_or(&no_sources);
                record_written(
                    &mut acc[i..=i],
                    Step::Json6902,
                    &|_, r, f| json_written(ops, &r.node, f),
                    &|_, path, _| (json_place(p, path), mine.get(&path_text(path)).cloned()),
                );
            }
        }
        Body::Nothing => {}
    }
}

/// Whether `path` names part of an object's identity.
fn identity(path: &[PathSeg]) -> bool {
    match path {
        [PathSeg::Key(k)] => k == "apiVersion" || k == "kind",
        [PathSeg::Key(m), PathSeg::Key(k)] => m == "metadata" && (k == "name" || k == "namespace"),
        _ => false,
    }
}

/// The path in `node` of a JSON pointer an operation wrote (`-`: the list's last item).
fn pointer_path(node: &Node, pointer: &str) -> Option<Vec<PathSeg>> {
    let mut n = node;
    let mut out = Vec::new();
    for part in pointer_parts(pointer) {
        let seg = match n.unspelled() {
            Node::Map(m) => {
                n = m.get(&part)?;
                PathSeg::Key(part)
            }
            Node::Seq(items) => {
                let i = if part == "-" {
                    items.len().checked_sub(1)?
                } else {
                    part.parse().ok()?
                };
                n = items.get(i)?;
                PathSeg::Index(i)
            }
            _ => return None,
        };
        out.push(seg);
    }
    Some(out)
}

/// The targets of a JSON 6902 list's `add`, `replace`, `copy` and `move` operations in `node`.
fn json_written(ops: &Node, node: &Node, f: &mut dyn FnMut(&[PathSeg])) {
    let Node::Seq(list) = ops else { return };
    for op in list {
        let Node::Map(m) = op else { continue };
        if !matches!(
            m.get("op").and_then(Node::as_str),
            Some("add" | "replace" | "copy" | "move")
        ) {
            continue;
        }
        if let Some(path) = m
            .get("path")
            .and_then(Node::as_str)
            .and_then(|p| pointer_path(node, p))
        {
            f(&path);
        }
    }
}

/// The sources of a JSON 6902 `copy` or `move`, taken after the patch ran and before it is
/// recorded (a moved field's origins are still there): for each chosen object (by index),
/// each field under a copy's or move's target, the field it read and where that was set.
pub(crate) type CopySources = FastMap<usize, FastMap<String, Box<Source>>>;

/// [`CopySources`] of `p` over `acc` (`chosen`: [`super::patches::chosen`]).
pub(crate) fn copy_sources(acc: &[Resource], p: &Patch, chosen: &[Vec<usize>]) -> CopySources {
    let mut out = CopySources::default();
    let Body::Json(ops) = &p.body else {
        return out;
    };
    let Node::Seq(list) = ops else { return out };
    let copies = list
        .iter()
        .any(|op| matches!(op.str_at(&["op"]), Some("copy" | "move")));
    if !copies {
        return out;
    }
    for &i in chosen.iter().flatten() {
        let Some(r) = acc.get(i) else { continue };
        let mut sources = FastMap::default();
        json_written(ops, &r.node, &mut |target| {
            let Some(n) = node_at(&r.node, target) else {
                return;
            };
            each_owned(n, target, &mut |leaf| {
                if let Some(from) = json6902_op(ops, leaf).and_then(|w| w.from) {
                    sources.insert(path_text(leaf), object_source(r, &from));
                }
            });
        });
        out.insert(i, sources);
    }
    out
}

/// A transformer's path as owned segments.
pub(crate) fn steps_to_path(at: &[PathStep<'_>]) -> Vec<PathSeg> {
    at.iter().map(PathSeg::owned).collect()
}

/// The fields a transformer told it wrote with the value they held ([`crate::transform::Unchanged`]):
/// each object's index in the list and the field's path, in the order told.
pub(crate) type Told = Vec<(usize, Vec<PathSeg>)>;

/// Records the label or annotation pairs `labels`/`commonLabels` or `commonAnnotations` of
/// `loaded` wrote into maps that held them already, as their transformer told them (`told`;
/// after `record` recorded what the step changed). kustomize's label filter writes every pair
/// at every place a selected spec names that exists or that the spec creates, whatever the
/// key held (`api/filters/labels/labels.go`, `Filter`; `api/filters/fieldspec/fieldspec.go`,
/// `Filter`); a pair a later entry of the same step set to another value is not the one the
/// field holds, so a field is kept only when it holds the value one of the step's entries
/// gives its key.
pub(crate) fn record_told_pairs(loaded: &Loaded, acc: &mut [Resource], step: Step, told: Told) {
    let k: &Kustomization = &loaded.kustomization;
    let sets: Vec<&StringMap> = match step {
        Step::Labels => k
            .labels
            .iter()
            .map(|l| &l.pairs)
            .chain(&k.common_labels)
            .collect(),
        Step::CommonAnnotations => k.common_annotations.iter().collect(),
        _ => return,
    };
    record_told(loaded, acc, step, told, &|path, now| {
        let Some(PathSeg::Key(key)) = path.last() else {
            return false;
        };
        let now = now.as_str();
        now.is_some() && sets.iter().any(|s| s.get(key).map(String::as_str) == now)
    });
}

/// Records the images the `images` entries of `loaded` wrote with the value they held, as
/// their transformer told them (`told`, after `record` recorded what the step changed): each
/// one an entry that keeps the name matches now (an image written twice in the step, which a
/// later entry may have set back, is told whatever it held).
pub(crate) fn record_told_images(loaded: &Loaded, acc: &mut [Resource], told: Told) {
    let k: &Kustomization = &loaded.kustomization;
    record_told(loaded, acc, Step::Images, told, &|_, now| {
        now.as_str().is_some_and(|v| image_written(k, v))
    });
}

/// Records the fields of `told` (by object) that `keep` keeps, given each one's path and value
/// now, with the transformer's place ([`record_written`]).
fn record_told(
    loaded: &Loaded,
    acc: &mut [Resource],
    step: Step,
    told: Told,
    keep: &dyn Fn(&[PathSeg], &Node) -> bool,
) {
    record_told_at(acc, step, told, keep, &|r, path, before| {
        (Some(transformer_place(loaded, step, r, path, before)), None)
    });
}

/// Records the target fields one replacement wrote with the value they held, as
/// `replacements::apply_telling` told them (after `record_replacement` recorded what it
/// changed), with the same origin: the replacement's `place` and the field it read (`source`).
pub(crate) fn record_told_replacement(
    acc: &mut [Resource],
    told: Told,
    place: &Place,
    source: Option<Box<Source>>,
) {
    record_told_sourced(acc, Step::Replacement, told, &|_, _, _| {
        (Some(place.clone()), source.clone())
    });
}

/// Records the fields a step told it wrote with the value they held (`told`; after the step's
/// record), with the origin `locate` gives (a name reference: where the referred object's name
/// was set, and that object).
pub(crate) fn record_told_sourced(
    acc: &mut [Resource],
    step: Step,
    told: Told,
    locate: SourcedLocateFn<'_>,
) {
    record_told_at(acc, step, told, &|_, _| true, locate);
}

/// [`record_told`] with the origin `locate` gives.
fn record_told_at(
    acc: &mut [Resource],
    step: Step,
    mut told: Told,
    keep: &dyn Fn(&[PathSeg], &Node) -> bool,
    locate: SourcedLocateFn<'_>,
) {
    if told.is_empty() {
        return;
    }
    told.sort_by_key(|(i, _)| *i);
    let told = &told;
    record_written(
        acc,
        step,
        &|i, r, f| {
            let start = told.partition_point(|(j, _)| *j < i);
            for (_, path) in told[start..].iter().take_while(|(j, _)| *j == i) {
                if node_at(&r.node, path).is_some_and(|now| keep(path, now)) {
                    f(path);
                }
            }
        },
        locate,
    );
}

/// Records what the `namespace:` field's transformer wrote with the value a field held, in
/// the objects it told of (`kept`, ascending indices into `acc`; after `record` recorded what it
/// changed): every field its transformer sets (`metadata.namespace`, binding subjects, a
/// Namespace's name, [`crate::transform::namespace::written`]) that holds the namespace.
pub(crate) fn record_namespace_writes(
    loaded: &Loaded,
    acc: &mut [Resource],
    tables: &FieldSpecTables,
    kept: &[usize],
) {
    let Some(ns) = loaded.kustomization.namespace.as_deref() else {
        return;
    };
    if kept.is_empty() {
        return;
    }
    record_written(
        acc,
        Step::Namespace,
        &|i, r, f| {
            // `kept` is in ascending order: the transformer tells objects as it goes.
            if kept.binary_search(&i).is_err() {
                return;
            }
            crate::transform::namespace::written(&r.node, tables, &mut |path| {
                if node_at(&r.node, path).and_then(Node::as_str) == Some(ns) {
                    f(path);
                }
            });
        },
        &|r, path, before| {
            (
                Some(transformer_place(loaded, Step::Namespace, r, path, before)),
                None,
            )
        },
    );
}

/// Records the counts `replicas` entries of `loaded` set (after `record` recorded what they
/// changed): `spec.replicas` of each object an entry names (now or before a rename).
pub(crate) fn record_replicas_writes(loaded: &Loaded, acc: &mut [Resource]) {
    let k: &Kustomization = &loaded.kustomization;
    let key = |k: &str| PathSeg::Key(k.to_string());
    record_written(
        acc,
        Step::Replicas,
        &|_, r, f| {
            let named = k
                .replicas
                .iter()
                .any(|e| e.name == r.name() || r.prev_ids.iter().any(|id| id.name == e.name));
            if named {
                f(&[key("spec"), key("replicas")]);
            }
        },
        &|r, path, before| {
            (
                Some(transformer_place(loaded, Step::Replicas, r, path, before)),
                None,
            )
        },
    );
}

/// Whether an `images` entry of `k` wrote `value`, the `image` of an item of a `containers`
/// or `initContainers` list anywhere in the object (kustomize's ImageTagTransformer walks them
/// all: `api/filters/imagetag/legacy.go`): an entry's `name` matches its image name
/// (`image.IsImageMatched` in `api/image/image.go`) and the entry does not rename it (a
/// renamed one changed).
fn image_written(k: &Kustomization, value: &str) -> bool {
    k.images.iter().any(|e| {
        crate::transform::images::matches(&e.name, value)
            && e.new_name.as_deref().is_none_or(|n| n == e.name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Node {
        crate::yaml::parse_documents(text).unwrap().remove(0).node
    }

    fn paths(f: impl Fn(&mut dyn FnMut(&[PathSeg]))) -> Vec<String> {
        let mut out = Vec::new();
        f(&mut |p| out.push(path_text(p)));
        out
    }

    /// A JSON 6902 operation writes its target (`-`: the last item); a `copy` or `move` is
    /// placed at the operation, with the field it read.
    #[test]
    fn json_operations_write_their_targets() {
        let obj = yaml("a:\n  b: 1\n  c: [x, y]\nd: {e: 2}\n");
        let ops = yaml(
            "- {op: test, path: /a/b, value: 1}\n- {op: replace, path: /a/b, value: 1}\n- {op: add, path: /a/c/-, value: y}\n- {op: copy, from: /a, path: /d/e}\n- {op: remove, path: /z}\n",
        );
        assert_eq!(
            paths(|f| json_written(&ops, &obj, f)),
            ["a.b", "a.c[1]", "d.e"]
        );
        let at = |p: &[PathSeg]| {
            json6902_op(&ops, p).map(|w| (path_text(&w.place), w.from.map(|f| path_text(&f))))
        };
        let seg = |s: &str| crate::yaml::path::parse_path(s).unwrap();
        assert_eq!(at(&seg("a.b")), Some(("[1].value".into(), None)));
        assert_eq!(at(&seg("d.e.b")), Some(("[3]".into(), Some("a.b".into()))));
        assert_eq!(at(&seg("d.f")), None);
    }
}
