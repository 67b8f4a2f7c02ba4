//! JSON patch (RFC 6902: add, remove, replace, move, copy, test) with RFC 6901 pointers
//! (`~0` = `~`, `~1` = `/`, `-` appends to a list), applied to a [`Node`] in place: key order
//! and scalar forms are kept, no JSON round trip. Errors follow evanphx/json-patch's wording,
//! which kubectl and kustomize print.

use crate::yaml::Node;

use super::walk::{Path, same};
use super::{MergeError, MergeErrorKind};

fn err(pointer: &str, message: impl Into<String>) -> MergeError {
    MergeError {
        kind: MergeErrorKind::JsonPatch,
        path: if pointer.is_empty() {
            "/".into()
        } else {
            pointer.to_string()
        },
        message: message.into(),
    }
}

/// The size past which a `copy` operation is refused by default: the document it copies into
/// would take more memory than this (`--max-json-patch-growth` sets another, through
/// [`apply_with`] and [`apply_op_with`]).
pub const MAX_COPY_GROWTH: usize = 64 << 20;

/// About how many bytes of memory `n` takes (strings and keys by their length, and 32 for each
/// node), counted up to `stop` and no further.
fn weight(n: &Node, stop: usize) -> usize {
    let mut total = 0usize;
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        total += match n {
            Node::Str(s) => s.len() + 32,
            Node::Seq(items) => {
                stack.extend(items.iter());
                32
            }
            Node::Map(m) => {
                for (k, v) in m {
                    total += k.len() + 32;
                    stack.push(v);
                }
                32
            }
            _ => 32,
        };
        if total > stop {
            return total;
        }
    }
    total
}

/// Applies a JSON patch (a list of operations) to a document.
pub fn apply(doc: &Node, patch: &Node) -> Result<Node, MergeError> {
    apply_with(doc, patch, MAX_COPY_GROWTH)
}

/// [`apply`] with `max_growth` in place of [`MAX_COPY_GROWTH`].
pub fn apply_with(doc: &Node, patch: &Node, max_growth: usize) -> Result<Node, MergeError> {
    let Node::Seq(ops) = patch else {
        return Err(MergeError::new(
            MergeErrorKind::Invalid,
            &Path::ROOT,
            format!(
                "a JSON patch is a list of operations, not a {}",
                patch.kind_name()
            ),
        ));
    };
    let mut out = doc.clone();
    for (i, op) in ops.iter().enumerate() {
        apply_op_with(&mut out, op, max_growth).map_err(|mut e| {
            e.message = format!("operation {i}: {}", e.message);
            e
        })?;
    }
    Ok(out)
}

/// Applies one operation (`{op: add, path: /a/b, value: …}`).
pub fn apply_op(doc: &mut Node, op: &Node) -> Result<(), MergeError> {
    apply_op_with(doc, op, MAX_COPY_GROWTH)
}

/// [`apply_op`] with `max_growth` in place of [`MAX_COPY_GROWTH`].
pub fn apply_op_with(doc: &mut Node, op: &Node, max_growth: usize) -> Result<(), MergeError> {
    let name = op
        .str_at(&["op"])
        .ok_or_else(|| err("", "an operation needs an `op` string"))?;
    let path = op
        .str_at(&["path"])
        .ok_or_else(|| err("", format!("{name} operation needs a `path` string")))?;
    // evanphx/json-patch v4 (kubectl's and kustomize's) reads a missing `value` as null for
    // `add` and `replace` (`Operation.value` returns nil, which is written as null).
    let value_or_null = || op.get("value").cloned().unwrap_or(Node::Null);
    let value = || {
        op.get("value")
            .cloned()
            .ok_or_else(|| err(path, format!("{name} operation needs a `value`")))
    };
    let from = || {
        op.str_at(&["from"])
            .ok_or_else(|| err(path, format!("{name} operation needs a `from` string")))
    };
    // evanphx/json-patch v4 finds no parent for the empty pointer (the whole document):
    // `add`, `move` and `copy` there fail (`findObject`), and `replace` there only takes an
    // object or a list, silently skipping the operation otherwise (the error it builds is
    // `errors.Wrapf(nil, …)`, which is nil). A skipped operation is a silent wrong answer,
    // so ply refuses it; a list there leaves no object, which kubectl and kustomize refuse.
    if path.is_empty() {
        match name {
            "add" => {
                return Err(err(
                    path,
                    "add operation does not apply: doc is missing path: \"\": missing value",
                ));
            }
            "move" | "copy" => {
                return Err(err(
                    path,
                    format!(
                        "{name} operation does not apply: doc is missing destination path: : \
                         missing value"
                    ),
                ));
            }
            "replace" if !matches!(op.get("value"), Some(Node::Map(_))) => {
                let found = op
                    .get("value")
                    .map_or("no value".to_string(), |v| format!("a {}", v.kind_name()));
                return Err(err(
                    path,
                    format!(
                        "replace operation at the whole document (path \"\") needs an object \
                         value, found {found} (kubectl and kustomize skip such an operation \
                         without a word)"
                    ),
                ));
            }
            _ => {}
        }
    }
    match name {
        "add" => add(doc, path, value_or_null()),
        "remove" => remove(doc, path).map(|_| ()),
        "replace" => replace(doc, path, value_or_null()),
        "move" => {
            let from = from()?;
            if path != from && path.starts_with(&format!("{from}/")) {
                return Err(err(
                    path,
                    format!("cannot move {from} into one of its children"),
                ));
            }
            let v = remove(doc, from)?;
            add(doc, path, v)
        }
        "copy" => {
            let from = from()?;
            // A key missing from an existing object copies null (json-patch v4's
            // `partialDoc.get` finds nothing without an error); a missing parent or list
            // index is an error.
            let v = match get(doc, from) {
                Some(v) => v.clone(),
                None if names_missing_key(doc, from) => Node::Null,
                None => {
                    return Err(err(
                        from,
                        "copy operation does not apply: doc is missing from path",
                    ));
                }
            };
            // Copies that double a value again and again would exhaust memory (kustomize's
            // evanphx/json-patch has an off-by-default AccumulatedCopySizeLimit for this).
            if weight(&v, max_growth)
                .checked_add(weight(doc, max_growth))
                .is_none_or(|w| w > max_growth)
            {
                return Err(err(
                    path,
                    format!(
                        "copy operation refused: the document would grow past {} (ply's limit \
                         on JSON patch growth; raise it with --max-json-patch-growth)",
                        crate::yaml::limits::human_size(max_growth)
                    ),
                ));
            }
            add(doc, path, v)
        }
        "test" => {
            let v = value()?;
            match get(doc, path) {
                Some(actual) if same(actual, &v) => Ok(()),
                None if v.is_null() => Ok(()),
                _ => Err(err(path, "testing value failed")),
            }
        }
        other => Err(err(
            path,
            format!("unexpected kind of operation: {other:?}"),
        )),
    }
}

/// Splits an RFC 6901 pointer into unescaped tokens.
pub fn parse_pointer(pointer: &str) -> Result<Vec<String>, MergeError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(err(pointer, "a JSON pointer must start with `/`"));
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn list_index(token: &str, len: usize, allow_end: bool) -> Option<usize> {
    if token == "-" {
        return allow_end.then_some(len);
    }
    if token.is_empty()
        || (token.len() > 1 && token.starts_with('0'))
        || !token.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let i: usize = token.parse().ok()?;
    let ok = if allow_end { i <= len } else { i < len };
    ok.then_some(i)
}

/// The node a pointer names.
pub fn get<'a>(doc: &'a Node, pointer: &str) -> Option<&'a Node> {
    let mut cur = doc;
    for t in parse_pointer(pointer).ok()? {
        cur = match cur {
            Node::Map(m) => m.get(&t)?,
            Node::Seq(items) => items.get(list_index(&t, items.len(), false)?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn get_mut<'a>(doc: &'a mut Node, pointer: &str) -> Result<&'a mut Node, MergeError> {
    let mut cur = doc;
    for t in parse_pointer(pointer)? {
        cur = match cur {
            Node::Map(m) => m.get_mut(&t),
            Node::Seq(items) => {
                let n = items.len();
                list_index(&t, n, false).and_then(|i| items.get_mut(i))
            }
            _ => None,
        }
        .ok_or_else(|| err(pointer, "doc is missing path"))?;
    }
    Ok(cur)
}

/// The parent of the node a pointer names, and the last token.
fn parent_mut<'a>(
    doc: &'a mut Node,
    pointer: &str,
    op: &str,
) -> Result<(&'a mut Node, String), MergeError> {
    let mut tokens = parse_pointer(pointer)?;
    let last = tokens.pop().ok_or_else(|| {
        err(
            pointer,
            format!("{op} operation does not apply to the whole document"),
        )
    })?;
    let mut parent_ptr = String::new();
    for t in &tokens {
        parent_ptr.push('/');
        parent_ptr.push_str(&t.replace('~', "~0").replace('/', "~1"));
    }
    let parent = get_mut(doc, &parent_ptr).map_err(|_| {
        err(
            pointer,
            format!(
                "{op} operation does not apply: doc is missing path: {pointer:?}: missing value"
            ),
        )
    })?;
    Ok((parent, last))
}

fn add(doc: &mut Node, pointer: &str, value: Node) -> Result<(), MergeError> {
    if pointer.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = parent_mut(doc, pointer, "add")?;
    match parent {
        Node::Map(m) => {
            m.insert(last, value);
            Ok(())
        }
        Node::Seq(items) => {
            let i = list_index(&last, items.len(), true)
                .ok_or_else(|| err(pointer, "add operation does not apply: index out of bounds"))?;
            items.insert(i, value);
            Ok(())
        }
        other => Err(err(
            pointer,
            format!(
                "add operation does not apply: the parent is a {}",
                other.kind_name()
            ),
        )),
    }
}

/// `replace` as json-patch v4 does it: the parent must exist; a key missing from an object is
/// set (`partialDoc.get` returns nothing without an error, and `set` adds the key); a list
/// index must be in range.
fn replace(doc: &mut Node, pointer: &str, value: Node) -> Result<(), MergeError> {
    if pointer.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = parent_mut(doc, pointer, "replace")?;
    match parent {
        Node::Map(m) => {
            match m.get_mut(&last) {
                Some(slot) => *slot = value,
                None => {
                    m.insert(last, value);
                }
            }
            Ok(())
        }
        Node::Seq(items) => {
            let i = list_index(&last, items.len(), false).ok_or_else(|| {
                err(
                    pointer,
                    "replace operation does not apply: doc is missing key",
                )
            })?;
            items[i] = value;
            Ok(())
        }
        _ => Err(err(
            pointer,
            "replace operation does not apply: doc is missing key",
        )),
    }
}

/// Whether `pointer` names a key that is missing from an object that exists.
fn names_missing_key(doc: &Node, pointer: &str) -> bool {
    let Ok(mut tokens) = parse_pointer(pointer) else {
        return false;
    };
    let Some(last) = tokens.pop() else {
        return false;
    };
    let mut cur = doc;
    for t in &tokens {
        cur = match cur {
            Node::Map(m) => match m.get(t) {
                Some(v) => v,
                None => return false,
            },
            Node::Seq(items) => {
                match list_index(t, items.len(), false).and_then(|i| items.get(i)) {
                    Some(v) => v,
                    None => return false,
                }
            }
            _ => return false,
        };
    }
    matches!(cur, Node::Map(m) if !m.contains_key(&last))
}

fn remove(doc: &mut Node, pointer: &str) -> Result<Node, MergeError> {
    let (parent, last) = parent_mut(doc, pointer, "remove")?;
    let missing = || {
        err(
            pointer,
            format!("remove operation does not apply: doc is missing path: {pointer:?}"),
        )
    };
    match parent {
        Node::Map(m) => m.shift_remove(&last).ok_or_else(missing),
        Node::Seq(items) => {
            let i = list_index(&last, items.len(), false).ok_or_else(missing)?;
            Ok(items.remove(i))
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn y(s: &str) -> Node {
        parse_one(s).expect("yaml")
    }

    #[test]
    fn every_operation() {
        let doc = y("{a: {b: [1, 2]}, 'x/y': 1, 't~': 2}");
        let out = apply(
            &doc,
            &y(r#"[
              {op: add, path: /a/b/1, value: 9},
              {op: add, path: /a/b/-, value: 3},
              {op: remove, path: /x~1y},
              {op: replace, path: /t~0, value: 5},
              {op: copy, from: /a/b, path: /c},
              {op: move, from: /a, path: /d},
              {op: test, path: /d/b/0, value: 1}
            ]"#),
        )
        .expect("applies");
        assert_eq!(out, y("{'t~': 5, c: [1, 9, 2, 3], d: {b: [1, 9, 2, 3]}}"));
    }

    #[test]
    fn errors_name_the_pointer() {
        let doc = y("{a: 1}");
        let e = apply(&doc, &y("[{op: add, path: /b/c, value: 1}]")).expect_err("missing parent");
        assert_eq!(e.path, "/b/c");
        assert!(e.message.contains("missing"), "{}", e.message);
        let e = apply(&doc, &y("[{op: test, path: /a, value: 2}]")).expect_err("test fails");
        assert!(e.message.contains("testing value failed"));
        assert!(apply(&doc, &y("[{op: remove, path: /zz}]")).is_err());
        assert!(apply(&doc, &y("[{op: replace, path: /zz/y, value: 1}]")).is_err());
        assert!(apply(&y("{l: [1]}"), &y("[{op: replace, path: /l/1, value: 2}]")).is_err());
        assert!(apply(&doc, &y("[{op: copy, from: /zz/y, path: /b}]")).is_err());
        assert!(apply(&doc, &y("[{op: frob, path: /a}]")).is_err());
        assert!(apply(&y("{l: [1]}"), &y("[{op: add, path: /l/5, value: 1}]")).is_err());
    }

    #[test]
    fn missing_keys_and_values_as_json_patch_v4_reads_them() {
        // kubectl patch --local --type json agrees (checked with kubectl v1.32).
        let doc = y("{a: {b: 1}}");
        let out = apply(
            &doc,
            &y(r#"[
              {op: replace, path: /a/c, value: 2},
              {op: copy, from: /a/zz, path: /a/d},
              {op: add, path: /e}
            ]"#),
        )
        .expect("applies");
        assert_eq!(out, y("{a: {b: 1, c: 2, d: null}, e: null}"));
    }
}
