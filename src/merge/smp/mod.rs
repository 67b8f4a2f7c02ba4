//! Strategic merge patch on [`Node`], with every directive kubectl supports: `$patch: replace |
//! delete` on maps and `replace | delete` on list elements, `$setElementOrder/<field>`,
//! `$retainKeys`, `$deleteFromPrimitiveList/<field>`, null deletes; merging lists of maps by
//! merge key and primitive merging lists as ordered sets; other lists replaced. The algorithm
//! and its errors follow apimachinery's `pkg/util/strategicpatch/patch.go` (`mergeMap`,
//! `mergeSlice`, `mergePatchIntoOriginal`, `normalizeElementOrder`), written anew over `Node`.

use std::borrow::Cow;

use crate::resource::Gvk;
use crate::schema::{Cursor, PatchMeta, Schema};
use crate::yaml::{Map, Node, ScalarStyle};

use super::walk::{Class, Path, class, discard_nulls, go_fmt, same};
use super::{Dialect, MergeError, MergeErrorKind as K, SmpOptions};

pub const DIRECTIVE: &str = "$patch";
pub const RETAIN_KEYS: &str = "$retainKeys";
pub const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
pub const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Applies a strategic merge patch to an object of kind `gvk`: what `kubectl patch --local
/// --type strategic` does (with [`SmpOptions::kubectl`]) or kustomize's patches do (with
/// [`SmpOptions::kustomize`]). A null object counts as `{}`; object and patch must be maps.
pub fn apply(
    original: &Node,
    patch: &Node,
    schema: &Schema,
    gvk: &Gvk,
    opts: &SmpOptions,
) -> Result<Node, MergeError> {
    apply_at(original, patch, schema.root(gvk), opts)
}

/// Whether a patch deletes the whole object (`$patch: delete` at its root): kustomize then
/// removes the resource; [`apply`] would return an empty map.
pub fn deletes_object(patch: &Node) -> bool {
    patch.get(DIRECTIVE).and_then(Node::as_str) == Some("delete")
}

/// [`apply`] taking the object and the patch by value, so that neither is copied: kustomize's
/// patches merge into the resource they replace. Same result and errors as [`apply`].
pub fn apply_owned(
    original: Node,
    patch: Node,
    schema: &Schema,
    gvk: &Gvk,
    opts: &SmpOptions,
) -> Result<Node, MergeError> {
    apply_owned_at(original, patch, schema.root(gvk), opts)
}

/// kustomize's patch merge ([`apply_owned`] with [`SmpOptions::kustomize`]) with the patch
/// borrowed: only the parts of it that end up in the object are copied. The object keeps its
/// own value of each top-level field named in `keep` (as if the patch held that value).
pub fn apply_kustomize(
    original: Node,
    patch: &Node,
    schema: &Schema,
    gvk: &Gvk,
    keep: &[&str],
) -> Result<Node, MergeError> {
    let root = Path::ROOT;
    let original = match original {
        Node::Null => Map::default(),
        Node::Map(m) => m,
        other => return Err(not_a_map("object", &other)),
    };
    let empty = Map::default();
    let patch = match patch {
        Node::Null => &empty,
        Node::Map(m) => m,
        other => return Err(not_a_map("patch", other)),
    };
    kz_no_empty_key(patch, &root)?;
    Merger::apply(Dialect::Kustomize)
        .kz_merge_map(original, patch, schema.kustomize_root(gvk), &root, keep)
        .map(Node::Map)
}

fn not_a_map(what: &str, n: &Node) -> MergeError {
    MergeError::new(
        K::Invalid,
        &Path::ROOT,
        format!("the {what} is a {}, not a map", n.kind_name()),
    )
}

/// [`apply`] from a schema position (for callers patching a part of an object).
pub fn apply_at(
    original: &Node,
    patch: &Node,
    cursor: Cursor<'_>,
    opts: &SmpOptions,
) -> Result<Node, MergeError> {
    apply_owned_at(original.clone(), patch.clone(), cursor, opts)
}

/// The one entry into the merge: object and patch must be maps (null counts as `{}`).
fn apply_owned_at(
    original: Node,
    patch: Node,
    cursor: Cursor<'_>,
    opts: &SmpOptions,
) -> Result<Node, MergeError> {
    let root = Path::ROOT;
    let as_map = |n: Node, what: &str| match n {
        Node::Null => Ok(Map::default()),
        Node::Map(m) => Ok(m),
        other => Err(MergeError::new(
            K::Invalid,
            &root,
            format!("the {what} is a {}, not a map", other.kind_name()),
        )),
    };
    let original = as_map(original, "object")?;
    let patch = as_map(patch, "patch")?;
    let m = Merger::apply(opts.dialect);
    m.merge_map(original, patch, cursor, &root).map(Node::Map)
}

/// apimachinery's `MergeOptions`, plus ply's list order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Merger {
    /// Process `$setElementOrder` and `$deleteFromPrimitiveList` (applying a patch) rather
    /// than carry them over (merging two patches).
    pub parallel: bool,
    /// Nulls in the patch without a counterpart in the object are dropped.
    pub ignore_unmatched_nulls: bool,
    pub dialect: Dialect,
}

type R<T> = Result<T, MergeError>;
type Entries = Vec<(String, Node)>;

/// `(original's list, patch's list, merge key)` style scalar kinds of list elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ElemKind {
    Map,
    Scalar,
}

/// Go's `==` on decoded JSON scalars: numbers by value, other kinds must match.
pub(crate) fn go_eq(a: &Node, b: &Node) -> bool {
    class(a) == class(b) && same(a, b)
}

/// apimachinery's `sliceElementType`: every element of every list has one type, and lists
/// of lists are refused.
fn slice_element_kind(lists: &[&[Node]], path: &Path<'_>) -> R<ElemKind> {
    let mut prev: Option<Class> = None;
    for l in lists {
        for v in l.iter() {
            let c = class(v);
            match prev {
                None => {
                    if c == Class::List {
                        return Err(MergeError::new(
                            K::TypeMismatch,
                            path,
                            "lists of lists are not supported",
                        ));
                    }
                    prev = Some(c);
                }
                Some(p) if p != c => {
                    let all: Vec<String> = lists
                        .iter()
                        .map(|l| go_fmt(&Node::Seq(l.to_vec())))
                        .collect();
                    return Err(MergeError::new(
                        K::TypeMismatch,
                        path,
                        format!("list element types are not identical: [{}]", all.join(" ")),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    match prev {
        Some(Class::Map) => Ok(ElemKind::Map),
        Some(_) => Ok(ElemKind::Scalar),
        None => Err(MergeError::new(
            K::TypeMismatch,
            path,
            "no elements in any of the given slices",
        )),
    }
}

mod apimachinery;
mod kyaml;
pub(crate) mod track;

use kyaml::kz_no_empty_key;

#[cfg(test)]
mod tests {
    use super::kyaml::{KzList, KzSources, kz_settle_in_place};
    use super::*;
    use crate::yaml::parse::parse_one;

    fn seq(text: &str) -> Vec<Node> {
        match parse_one(text).expect("test YAML parses") {
            Node::Seq(items) => items,
            other => panic!("not a list: {other:?}"),
        }
    }

    /// `KzList::merge` itself, without the shortcuts `kz_merge_list` and `kz_settle_list` take.
    fn general(original: Vec<Node>, patch: &[Node], keys: &[&str], items: Cursor<'_>) -> Vec<Node> {
        let mut patch = patch.to_vec();
        let mode = if patch.is_empty() {
            KzSources::Alone
        } else {
            KzSources::Patch(&mut patch)
        };
        let merger = Merger::apply(Dialect::Kustomize);
        KzList::walk(original, &merger, mode, keys, items, &Path::ROOT).expect("merges")
    }

    /// The shortcuts give what the step-by-step walk gives, on lists of their shape (and hand
    /// back the others): containers merged on `name`, with env lists inside walked alone or
    /// merged.
    #[test]
    fn shortcuts_agree_with_the_walk() {
        let schema = Schema::builtin();
        let pod = schema
            .root(&Gvk::from_api_version("v1", "Pod"))
            .kustomize_field("spec")
            .0;
        let items = pod.kustomize_field("containers").0.items();
        let objects = [
            "[{name: a, image: x, env: [{name: A, value: '1'}, {name: B, value: null}]}, {name: b, env: [{name: A}, {name: A, value: '2'}]}]",
            "[{name: a}, {name: b, ports: [{containerPort: 80, protocol: TCP}, {containerPort: 80}]}, {name: c, x: null}]",
            "[]",
        ];
        let patches = [
            "[{name: b, image: y}, {name: d, env: [{name: Z, value: null}]}]",
            "[{name: a, env: [{name: C, value: '3'}, {name: A, value: '4'}]}, {name: c}]",
            "[{name: c, ports: [{containerPort: 81}]}, {name: a, x: 1}, {name: b}]",
            "[{name: a, $patch: delete}]",
            "[{name: a}, {name: a, image: z}]",
        ];
        let mut shortcuts = 0;
        for o in objects {
            let original = seq(o);
            // Walked alone.
            let mut settled = original.clone();
            if kz_settle_in_place(&mut settled, &["name"], items, &Path::ROOT).expect("walks") {
                shortcuts += 1;
                assert_eq!(
                    settled,
                    general(original.clone(), &[], &["name"], items),
                    "{o}"
                );
            }
            for p in patches {
                let patch = seq(p);
                let merger = Merger::apply(Dialect::Kustomize);
                match merger
                    .kz_merge_keyed(original.clone(), &patch, &["name"], items, &Path::ROOT)
                    .expect("merges")
                {
                    Ok(merged) => {
                        shortcuts += 1;
                        let want = general(original.clone(), &patch, &["name"], items);
                        assert_eq!(merged, want, "{o} with {p}");
                    }
                    Err(back) => assert_eq!(back, original, "handed back untouched"),
                }
            }
        }
        assert!(shortcuts >= 8, "the shortcuts were taken: {shortcuts}");
    }
}
