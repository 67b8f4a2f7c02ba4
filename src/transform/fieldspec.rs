//! Walking a field spec's path through an object and calling a setter at its end, with
//! kustomize's rules (`api/filters/fieldspec/fieldspec.go`): `a/b/c` follows map keys, `x[]`
//! walks every element of list `x`, a list met on the way is walked element by element,
//! missing fields are created only when the spec says `create`, and a null or missing field
//! ends the walk quietly. A scalar in the middle of the path is an error.

use std::borrow::Cow;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::FieldSpec;
use crate::resource::ResId;
use crate::yaml::path::PathSeg;
use crate::yaml::{Map, Node};

/// What kind of node to create at the end of the path when it is missing (kustomize's
/// `CreateKind`); `None` never creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Create {
    None,
    Map,
    /// An empty string (the setter writes a tagged string over it).
    Scalar,
    /// A scalar kustomize creates plain and untagged: left null here, so that the setter can
    /// tell a created field from an existing string (`super::untagged_over`).
    UntaggedScalar,
}

/// The first segment of a field path and the rest, as [`super::refpath::split_path`] splits it (`\/` keeps a
/// slash in the segment), borrowing from `path` unless the segment has an escape: the
/// transformers walk every selected spec's path once per object, so it is not split ahead.
fn next_segment(path: &str) -> (Cow<'_, str>, Option<&str>) {
    let Some((first, mut rest)) = split_at_slash(path) else {
        return (Cow::Borrowed(path), None);
    };
    if !first.ends_with('\\') {
        return (Cow::Borrowed(first), Some(rest));
    }
    let mut seg = first.to_string();
    loop {
        seg.pop();
        seg.push('/');
        match split_at_slash(rest) {
            Some((part, more)) => {
                seg.push_str(part);
                rest = more;
                if !part.ends_with('\\') {
                    return (Cow::Owned(seg), Some(rest));
                }
            }
            None => {
                seg.push_str(rest);
                return (Cow::Owned(seg), None);
            }
        }
    }
}

/// `s.split_once('/')` by a plain byte loop: segments are a few bytes long, too short for
/// the generic searcher to pay (and whether that one is inlined varies from build to build).
fn split_at_slash(s: &str) -> Option<(&str, &str)> {
    let i = s.bytes().position(|b| b == b'/')?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

/// A spec's path as [`walk`] takes it: a leading `/` is ignored.
fn walk_path(path: &str) -> Option<&str> {
    Some(path.strip_prefix('/').unwrap_or(path))
}

/// One step of the path from the object to the node a setter is called on: the one field
/// path step ([`PathSeg`]) with its key borrowed from the spec's path (owned only when the key
/// had an escape), so that the walk allocates nothing per step.
pub(crate) type PathStep<'p> = PathSeg<Cow<'p, str>>;

/// A path written with dots (`spec.containers.0.image`), for tests.
#[cfg(test)]
pub(crate) fn dotted(path: &[PathStep<'_>]) -> String {
    let parts: Vec<String> = path
        .iter()
        .map(|s| match s {
            PathSeg::Key(k) => k.to_string(),
            PathSeg::Index(i) => i.to_string(),
        })
        .collect();
    parts.join(".")
}

/// An object's group, version and kind borrowed from its `apiVersion` and `kind` (what
/// `Gvk::of` reads, without copying), to select field specs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GvkRef<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
}

impl<'a> GvkRef<'a> {
    pub(crate) fn of(object: &'a Node) -> GvkRef<'a> {
        let api_version = object.str_at(&["apiVersion"]).unwrap_or("");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        GvkRef {
            group,
            version,
            kind: object.str_at(&["kind"]).unwrap_or(""),
        }
    }

    /// [`super::spec_selects`] on these parts.
    pub(crate) fn selected_by(&self, spec: &FieldSpec) -> bool {
        let ok = |want: &Option<String>, have: &str| {
            want.as_deref().is_none_or(|w| w.is_empty() || w == have)
        };
        ok(&spec.group, self.group) && ok(&spec.version, self.version) && ok(&spec.kind, self.kind)
    }
}

/// Applies `set` at every place `spec` names in `object`, when the spec selects the object's
/// group/version/kind.
pub(crate) fn apply(
    object: &mut Node,
    spec: &FieldSpec,
    create: Create,
    set: &mut dyn FnMut(&mut Node) -> Result<()>,
) -> Result<()> {
    if !GvkRef::of(object).selected_by(spec) {
        return Ok(());
    }
    apply_selected(object, spec, create, set)
}

/// Applies `set` for every spec of a table, in order. Which specs select the object is decided
/// before any is applied.
pub(crate) fn apply_all(
    object: &mut Node,
    specs: &[FieldSpec],
    create: Create,
    set: &mut dyn FnMut(&mut Node) -> Result<()>,
) -> Result<()> {
    let gvk = GvkRef::of(object);
    let selected: Vec<&FieldSpec> = specs.iter().filter(|s| gvk.selected_by(s)).collect();
    for spec in selected {
        apply_selected(object, spec, create, set)?;
    }
    Ok(())
}

fn apply_selected(
    object: &mut Node,
    spec: &FieldSpec,
    create: Create,
    set: &mut dyn FnMut(&mut Node) -> Result<()>,
) -> Result<()> {
    let path = walk_path(&spec.path);
    walk(object, path, None, spec.create, create, &mut |n, _| set(n))
        .map_err(|e| in_field(e, spec, object))
}

/// [`apply`] whose setter also gets the path of the node it is called on (for a spec that
/// the caller has already found to select the object).
/// `at` is scratch space for the path (its contents are replaced).
pub(crate) fn apply_selected_with_path<'p>(
    object: &mut Node,
    spec: &'p FieldSpec,
    create: Create,
    at: &mut Vec<PathStep<'p>>,
    set: &mut dyn FnMut(&mut Node, &[PathStep<'p>]) -> Result<()>,
) -> Result<()> {
    let path = walk_path(&spec.path);
    at.clear();
    walk(object, path, Some(at), spec.create, create, set).map_err(|e| in_field(e, spec, object))
}

/// A path segment's field name, and whether it is written `name[]` (a list to walk); an
/// empty name is an error (kyaml's `PathGetter` cannot create it).
fn segment_name(segment: &str) -> Result<(&str, bool)> {
    let (name, is_seq) = match segment.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (segment, false),
    };
    if name.is_empty() {
        return Err(empty_name());
    }
    Ok((name, is_seq))
}

fn empty_name() -> Error {
    Error::new(
        ErrorKind::Transformer,
        "cannot set or create an empty field name",
    )
}

/// Calls `set` on the node at `at` (a path [`apply_selected_with_path`] gave for `spec`), when
/// it is there, with the same error context as a walk.
pub(crate) fn apply_at(
    object: &mut Node,
    spec: &FieldSpec,
    at: &[PathStep],
    set: &mut dyn FnMut(&mut Node) -> Result<()>,
) -> Result<()> {
    let mut cur = &mut *object;
    for step in at {
        let next = match (cur, step) {
            (Node::Map(m), PathStep::Key(k)) => m.get_mut(k),
            (Node::Seq(items), PathStep::Index(i)) => items.get_mut(*i),
            _ => None,
        };
        let Some(next) = next else {
            return Ok(());
        };
        cur = next;
    }
    match set(cur) {
        Ok(()) => Ok(()),
        Err(e) => Err(in_field(e, spec, object)),
    }
}

fn in_field(mut e: Error, spec: &FieldSpec, object: &Node) -> Error {
    e.message = format!(
        "considering field '{}' of object {}: {}",
        spec.path,
        ResId::of(object),
        e.message
    );
    e
}

/// Follows `path` from `node`, pushing each step on `at` when the caller tracks the path.
fn walk<'p>(
    node: &mut Node,
    path: Option<&'p str>,
    mut at: Option<&mut Vec<PathStep<'p>>>,
    create_missing: bool,
    create: Create,
    set: &mut dyn FnMut(&mut Node, &[PathStep<'p>]) -> Result<()>,
) -> Result<()> {
    let Some(path) = path else {
        return set(node, at.map_or(&[], |a| a.as_slice()));
    };
    match node {
        Node::Null => Ok(()),
        Node::Seq(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(a) = at.as_deref_mut() {
                    a.push(PathStep::Index(i));
                }
                let r = walk(
                    item,
                    Some(path),
                    at.as_deref_mut(),
                    create_missing,
                    create,
                    set,
                );
                if let Some(a) = at.as_deref_mut() {
                    a.pop();
                }
                r?;
            }
            Ok(())
        }
        Node::Map(map) => {
            let (first, rest) = next_segment(path);
            let (name, is_seq) = segment_name(&first)?;
            // What to create when the field is missing (or null): nothing for a lookup, the
            // requested kind at the end of the path, a map in the middle.
            let make: Option<fn() -> Node> = if !create_missing || create == Create::None || is_seq
            {
                None
            } else if rest.is_none() {
                Some(match create {
                    Create::Map => || Node::Map(Map::default()),
                    Create::UntaggedScalar => || Node::Null,
                    _ => || Node::Str(String::new()),
                })
            } else {
                Some(|| Node::Map(Map::default()))
            };
            let field = match (map.get_index_of(name), make) {
                (Some(i), _) => map.get_index_mut(i).map(|(_, v)| v),
                (None, Some(f)) => Some(map.entry(name.to_string()).or_insert_with(f)),
                (None, None) => None,
            };
            let Some(field) = field else { return Ok(()) };
            if field.is_null() {
                if is_seq {
                    *field = Node::Seq(Vec::new());
                } else if let Some(f) = make {
                    *field = f();
                }
            }
            let Some(a) = at else {
                return walk(field, rest, None, create_missing, create, set);
            };
            a.push(PathStep::Key(match &first {
                Cow::Borrowed(s) => Cow::Borrowed(s.strip_suffix("[]").unwrap_or(s)),
                Cow::Owned(_) => Cow::Owned(name.to_string()),
            }));
            let r = walk(field, rest, Some(&mut *a), create_missing, create, set);
            a.pop();
            r
        }
        _ => Err(Error::new(
            ErrorKind::Transformer,
            "expected sequence or mapping node",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn spec(path: &str, create: bool) -> FieldSpec {
        FieldSpec {
            path: path.into(),
            create,
            ..FieldSpec::default()
        }
    }

    #[test]
    fn split_handles_escapes_and_leading_slash() {
        let split_path = |p: &str| super::super::refpath::split_path(p, '/');
        assert_eq!(split_path("a/b"), vec!["a", "b"]);
        for p in [
            "", "/", "a", "/a/b", "a//b", "a/", r"x\/y/z", r"/x\/y", r"a\/b\/c", r"a\\/b", r"a\/",
        ] {
            let mut segs = Vec::new();
            let mut at = walk_path(p);
            while let Some(path) = at {
                let (seg, rest) = next_segment(path);
                segs.push(seg.into_owned());
                at = rest;
            }
            assert_eq!(segs, split_path(p), "{p}");
        }
        assert_eq!(split_path("/a/b"), vec!["a", "b"]);
        assert_eq!(
            split_path(r"metadata/annotations/x\/y"),
            vec!["metadata", "annotations", "x/y"]
        );
    }

    #[test]
    fn walks_lists_and_creates_maps() {
        let mut n = parse_one("kind: X\nspec:\n  containers:\n  - name: a\n  - name: b\n").unwrap();
        let mut count = 0;
        apply(
            &mut n,
            &spec("spec/containers[]/name", false),
            Create::Scalar,
            &mut |v| {
                count += 1;
                *v = Node::str("z");
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(count, 2);
        apply(
            &mut n,
            &spec("metadata/labels", true),
            Create::Map,
            &mut |v| {
                assert!(v.as_map().is_some());
                Ok(())
            },
        )
        .unwrap();
        assert!(n.get_path(&["metadata", "labels"]).is_some());
        // Not created without `create`.
        apply(
            &mut n,
            &spec("spec/selector/matchLabels", false),
            Create::Map,
            &mut |_| panic!("must not be called"),
        )
        .unwrap();
        assert!(n.get_path(&["spec", "selector"]).is_none());
    }

    #[test]
    fn scalar_in_path_is_an_error() {
        let mut n = parse_one("kind: X\nmetadata:\n  name: a\nspec: 3\n").unwrap();
        let e = apply(
            &mut n,
            &spec("spec/template/x", true),
            Create::Map,
            &mut |_| Ok(()),
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "considering field 'spec/template/x' of object ~G_~V_X|~X|a: expected sequence or mapping node"
        );
    }
}
