//! Field provenance while rendering (issue 29): after each step that can change objects, the
//! fields whose value changed are given that step's origin (the place in a file that set
//! them), on top of the chain recorded so far; and a recorded place is resolved to a file,
//! line and column when shown. Runs only with `RenderOptions::provenance` on.

use std::sync::Arc;

use super::patches::{Body, Patch};
use crate::kustomization::Loaded;
use crate::kustomization::load::locate_value;
use crate::resource::Resource;
use crate::resource::provenance::{
    Field, Origin, Place, Provenance, Source, Step, for_each_field, parse_path, path_text,
    push_index, push_key,
};
use crate::source::{Location, SourceFile};
use crate::yaml::Node;
use crate::yaml::de::PathSeg;

/// Where a step says it set the field at `path` of `r`, given the value it had before
/// (`None` for a new field).
pub(crate) type LocateFn<'a> = &'a dyn Fn(&Resource, &[PathSeg], Option<&Node>) -> Option<Place>;

/// Records `step` over `acc`: every field of an object whose value is new or differs from the
/// one recorded gets the origin `locate` gives, before the older ones. An object seen for the
/// first time has each field attributed to the document it was read from when it has one,
/// else to `step`. Only what changed since the last record is compared: the recorded copy
/// shares the unchanged (frozen) maps with the object.
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
        match r.provenance.take() {
            None => {
                let mut fields = crate::fasthash::FastMap::default();
                let doc = r.origin.clone();
                for_each_field(&r.node, &mut |path, _| {
                    let origin = match &doc {
                        Some(loc) => Origin {
                            step: Step::Resource,
                            place: Some(Place {
                                file: Arc::clone(&loc.file),
                                start: loc.offset,
                                path: path.to_string(),
                            }),
                            source: None,
                        },
                        None => {
                            let (place, source) =
                                locate(r, &parse_path(path).unwrap_or_default(), None);
                            Origin {
                                step,
                                place,
                                source,
                            }
                        }
                    };
                    fields.insert(
                        path.to_string(),
                        Field {
                            origins: vec![origin],
                        },
                    );
                });
                r.provenance = Some(Box::new(Provenance {
                    fields,
                    last: r.node.clone(),
                }));
            }
            Some(mut p) => {
                let last = std::mem::take(&mut p.last);
                let mut path = String::new();
                diff(&last, &r.node, &mut path, &mut |event, path| match event {
                    Event::Set(before) => {
                        let (place, source) =
                            locate(r, &parse_path(path).unwrap_or_default(), before);
                        let origin = Origin {
                            step,
                            place,
                            source,
                        };
                        match p.fields.get_mut(path) {
                            Some(f) if before.is_some() => f.origins.insert(0, origin),
                            _ => {
                                p.fields.insert(
                                    path.to_string(),
                                    Field {
                                        origins: vec![origin],
                                    },
                                );
                            }
                        }
                    }
                    Event::Gone => {
                        p.fields.remove(path);
                    }
                });
                p.last = r.node.clone();
                r.provenance = Some(p);
            }
        }
    }
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
fn diff<'a>(a: &'a Node, b: &Node, path: &mut String, ev: &mut dyn FnMut(Event<'a>, &str)) {
    match (a, b) {
        (Node::Map(x), Node::Map(y)) if !x.is_empty() && !y.is_empty() => {
            if x.shares_with(y) {
                return;
            }
            for (k, vb) in y.iter() {
                let len = path.len();
                push_key(path, k);
                match x.get(k) {
                    Some(va) => diff(va, vb, path, ev),
                    None => each(vb, path, &mut |p| ev(Event::Set(None), p)),
                }
                path.truncate(len);
            }
            for (k, va) in x.iter() {
                if y.get(k).is_none() {
                    let len = path.len();
                    push_key(path, k);
                    each(va, path, &mut |p| ev(Event::Gone, p));
                    path.truncate(len);
                }
            }
        }
        (Node::Seq(x), Node::Seq(y)) if !x.is_empty() && !y.is_empty() => {
            for i in 0..x.len().max(y.len()) {
                let len = path.len();
                push_index(path, i);
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => diff(va, vb, path, ev),
                    (None, Some(vb)) => each(vb, path, &mut |p| ev(Event::Set(None), p)),
                    (Some(va), None) => each(va, path, &mut |p| ev(Event::Gone, p)),
                    (None, None) => {}
                }
                path.truncate(len);
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

/// Calls `f` with the path of every field of `n`, which sits at `path`.
fn each(n: &Node, path: &mut String, f: &mut dyn FnMut(&str)) {
    match n {
        Node::Map(m) if !m.is_empty() => {
            for (k, v) in m.iter() {
                let len = path.len();
                push_key(path, k);
                each(v, path, f);
                path.truncate(len);
            }
        }
        Node::Seq(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                each(v, path, f);
                path.truncate(len);
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

/// Records one patch over `acc`: a changed field is placed at the patch's value for it (the
/// document of a strategic merge patch that holds its path, the operation of a JSON 6902
/// list), else at the patch's first document or its kustomization entry.
pub(super) fn record_patch(acc: &mut [Resource], p: &Patch) {
    let declared = p.declared.as_ref().map(at);
    match &p.body {
        Body::Smp(docs) => record(acc, Step::Patch, &|r, path, _| {
            let found = docs.iter().find_map(|(doc, loc)| {
                let loc = loc.as_ref()?;
                smp_path(doc, &r.node, path).map(|p| Place {
                    file: Arc::clone(&loc.file),
                    start: loc.offset,
                    path: path_text(&p),
                })
            });
            found
                .or_else(|| docs.iter().find_map(|(_, loc)| loc.as_ref().map(at)))
                .or_else(|| declared.clone())
        }),
        Body::Json(ops) => record(acc, Step::Json6902, &|_, path, _| match (
            &p.file,
            json6902_path(ops, path),
        ) {
            (Some(file), Some(op)) => Some(Place {
                file: Arc::clone(file),
                start: 0,
                path: path_text(&op),
            }),
            _ => declared.clone(),
        }),
        Body::Nothing => {}
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
    let p = match step {
        Step::Namespace => vec![key("namespace")],
        Step::NamePrefix => vec![key("namePrefix")],
        Step::NameSuffix => vec![key("nameSuffix")],
        Step::Labels => {
            match k
                .labels
                .iter()
                .rposition(|l| l.pairs.contains_key(last_key))
            {
                Some(i) => vec![
                    key("labels"),
                    PathSeg::Index(i),
                    key("pairs"),
                    key(last_key),
                ],
                None if k
                    .common_labels
                    .as_ref()
                    .is_some_and(|m| m.contains_key(last_key)) =>
                {
                    vec![key("commonLabels"), key(last_key)]
                }
                None => vec![key("labels")],
            }
        }
        Step::CommonAnnotations => vec![key("commonAnnotations"), key(last_key)],
        Step::Replicas => {
            let name = r.name();
            match k
                .replicas
                .iter()
                .position(|e| e.name == name || r.prev_ids.iter().any(|id| id.name == e.name))
            {
                Some(i) => vec![key("replicas"), PathSeg::Index(i), key("count")],
                None => vec![key("replicas")],
            }
        }
        Step::Images => {
            // The entry whose name is the image the field held before (kustomize's
            // `image.IsImageMatched`: the name without tag or digest).
            let old_text = before.map(scalar_text).unwrap_or_default();
            let old = old_text.as_str();
            let old_name = image_name(old);
            match k.images.iter().position(|e| e.name == old_name) {
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
                    vec![key("images"), PathSeg::Index(i), key(field)]
                }
                None => vec![key("images")],
            }
        }
        _ => Vec::new(),
    };
    in_kustomization(loaded, p)
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

/// An image reference without its tag or digest (`nginx:1.2` → `nginx`,
/// `host:5000/app@sha256:…` → `host:5000/app`).
fn image_name(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(c) if !image[c..].contains('/') => &image[..c],
        _ => image,
    }
}

/// The place in a strategic merge patch document that set the field at `out` of the patched
/// object `obj`: the same path through the patch, a list entry matched by its `name` (or the
/// other merge keys of the built-in schema most lists use) or by its value; `None` when the
/// patch does not hold the path (a directive, a list replaced whole).
pub(crate) fn smp_path(patch: &Node, obj: &Node, out: &[PathSeg]) -> Option<Vec<PathSeg>> {
    const MERGE_KEYS: [&str; 6] = ["name", "containerPort", "mountPath", "ip", "port", "key"];
    let mut p = patch;
    let mut o = obj;
    let mut path = Vec::with_capacity(out.len());
    for s in out {
        match (s, p, o) {
            (PathSeg::Key(k), Node::Map(pm), Node::Map(om)) => {
                p = pm.get(k)?;
                o = om.get(k)?;
                path.push(s.clone());
            }
            (PathSeg::Index(i), Node::Seq(pv), Node::Seq(ov)) => {
                let item = ov.get(*i)?;
                let j = match item {
                    Node::Map(im) => MERGE_KEYS.iter().find_map(|mk| {
                        let want = im.get(mk)?;
                        // The last entry with the key: a later one wins the merge.
                        pv.iter()
                            .rposition(|e| matches!(e, Node::Map(em) if em.get(mk) == Some(want)))
                    }),
                    scalar => pv.iter().rposition(|e| e == scalar),
                }
                .or_else(|| (pv.len() == ov.len()).then_some(*i))?;
                p = &pv[j];
                o = item;
                path.push(PathSeg::Index(j));
            }
            _ => return None,
        }
    }
    Some(path)
}

/// The operation of a JSON 6902 list that set the field at `out`: the last one whose path is
/// `out` or holds it and that carries a value; its place is that value (`[i].value…`).
pub(crate) fn json6902_path(ops: &Node, out: &[PathSeg]) -> Option<Vec<PathSeg>> {
    let Node::Seq(list) = ops else { return None };
    list.iter().enumerate().rev().find_map(|(i, op)| {
        let Node::Map(m) = op else { return None };
        m.get("value")?;
        let pointer = m.get("path")?.as_str()?;
        let parts: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(|p| p.replace("~1", "/").replace("~0", "~"))
            .collect();
        if parts.len() > out.len() {
            return None;
        }
        let same = parts.iter().zip(out).all(|(p, s)| match s {
            PathSeg::Key(k) => k == p,
            PathSeg::Index(n) => p == "-" || p.parse::<usize>().ok() == Some(*n),
        });
        same.then(|| {
            let mut path = vec![PathSeg::Index(i), key("value")];
            path.extend(out[parts.len()..].iter().cloned());
            path
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
    resolve_in(&place.file, place.start, &path)
}

fn resolve_in(file: &SourceFile, start: usize, path: &[PathSeg]) -> Resolved {
    let (offset, exact) = locate_value(file, start, path);
    let (line, column) = file.line_col(offset);
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
