//! JSON patch (RFC 6902: add, remove, replace, move, copy, test) applied to a [`Node`] in
//! place, as kustomize and kubectl apply it with evanphx/json-patch v4 (v4.12.0 in kustomize
//! v5.5.0 and kubectl 1.32, v4.13.0 in v5.8.1 and kubectl 1.37): its paths (the first part of
//! a path is dropped unread, `~1` = `/`, `~0` = `~`), its list indices (Go's `strconv.Atoi`:
//! leading zeros, a sign, negative indices from the end; `-` appends for `add` only) and its
//! messages. Key order and scalar forms are kept, no JSON round trip.

use crate::kustomization::KustomizeVersion;
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

/// Applies a JSON patch (a list of operations) to a document, as kustomize v5.8.1 and
/// kubectl 1.37 do (evanphx/json-patch v4.13.0).
pub fn apply(doc: &Node, patch: &Node) -> Result<Node, MergeError> {
    apply_with(doc, patch, MAX_COPY_GROWTH, KustomizeVersion::V5_8_1)
}

/// [`apply`] with `max_growth` in place of [`MAX_COPY_GROWTH`], as the json-patch release of
/// `version` applies it (see [`apply_op_with`]).
pub fn apply_with(
    doc: &Node,
    patch: &Node,
    max_growth: usize,
    version: KustomizeVersion,
) -> Result<Node, MergeError> {
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
        apply_op_with(&mut out, op, max_growth, version).map_err(|mut e| {
            e.message = format!("operation {i}: {}", e.message);
            e
        })?;
    }
    Ok(out)
}

/// Applies one operation (`{op: add, path: /a/b, value: …}`), as [`apply`] does.
pub fn apply_op(doc: &mut Node, op: &Node) -> Result<(), MergeError> {
    apply_op_with(doc, op, MAX_COPY_GROWTH, KustomizeVersion::V5_8_1)
}

/// [`apply_op`] with `max_growth` in place of [`MAX_COPY_GROWTH`], following the
/// evanphx/json-patch release that `version` vendors: v4.12.0 for kustomize v5.5.0 to v5.7.1
/// (kubectl 1.32 to 1.35), v4.13.0 from v5.8.0 (kubectl 1.36 and 1.37). Mirrors `Patch.ApplyIndent` and the operations
/// of `patch.go` (`add`, `remove`, `replace`, `move`, `test`, `copy`), their paths read by
/// `findObject` and their list indices by `partialArray`'s methods; the messages are the
/// library's.
pub fn apply_op_with(
    doc: &mut Node,
    op: &Node,
    max_growth: usize,
    version: KustomizeVersion,
) -> Result<(), MergeError> {
    // `Operation.Kind`: a missing or non-string `op` is "unknown".
    let name = op.str_at(&["op"]).unwrap_or("unknown");
    // `Operation.Path` and `Operation.From`: a missing or null field is an error.
    let path = op.str_at(&["path"]);
    let value = op.get("value");
    // `Operation.value`: a missing `value` is a nil node (written as null by `add` and
    // `replace`); an explicit null is a node holding nothing. Both read as null here.
    let value_or_null = || value.cloned().unwrap_or(Node::Null);
    let v4_13 = version.at_least(KustomizeVersion::V5_8_1);
    match name {
        "add" => {
            let path =
                path.ok_or_else(|| err("", "add operation failed to decode path: missing value"))?;
            let (con, key) = find_object(doc, path).ok_or_else(|| {
                err(path, format!("add operation does not apply: doc is missing path: \"{path}\": missing value"))
            })?;
            container_add(con, &key, value_or_null())
                .map_err(|e| err(path, format!("error in add for path: '{path}': {e}")))
        }
        "remove" => {
            let path = path
                .ok_or_else(|| err("", "remove operation failed to decode path: missing value"))?;
            let (con, key) = find_object(doc, path).ok_or_else(|| {
                err(path, format!("remove operation does not apply: doc is missing path: \"{path}\": missing value"))
            })?;
            container_remove(con, &key)
                .map(drop)
                .map_err(|e| err(path, format!("error in remove for path: '{path}': {e}")))
        }
        "replace" => replace_op(doc, path, value, v4_13),
        "move" => move_op(doc, op, path),
        "copy" => copy_op(doc, op, path, max_growth),
        "test" => test_op(doc, path, value, v4_13),
        other => Err(err(path.unwrap_or(""), format!("Unexpected kind: {other}"))),
    }
}

/// An operation's `path`, which `replace` and `test` require (`Operation.Path`).
fn required_path<'a>(path: Option<&'a str>, op: &str) -> Result<&'a str, MergeError> {
    path.ok_or_else(|| {
        err(
            "",
            format!(
                "{op} operation failed to decode path: operation missing path field: missing value"
            ),
        )
    })
}

/// The `replace` operation (`patch.go` `replace`).
fn replace_op(
    doc: &mut Node,
    path: Option<&str>,
    value: Option<&Node>,
    v4_13: bool,
) -> Result<(), MergeError> {
    let path = required_path(path, "replace")?;
    if path.is_empty() {
        return replace_root(doc, value, v4_13);
    }
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        err(
            path,
            format!("replace operation does not apply: doc is missing path: {path}: missing value"),
        )
    })?;
    match con {
        // `partialDoc.get` finds nothing without an error: a missing key is set.
        Node::Map(m) => {
            m.insert(key, value.cloned().unwrap_or(Node::Null));
            Ok(())
        }
        Node::Seq(items) => {
            let i = seq_get(items, &key).map_err(|_| {
                err(path, format!("replace operation does not apply: doc is missing key: {path}: missing value"))
            })?;
            items[i] = value.cloned().unwrap_or(Node::Null);
            Ok(())
        }
        _ => unreachable_container(path),
    }
}

/// The `move` operation (`patch.go` `move`): the value is removed from `from`, then added at
/// `path`.
fn move_op(doc: &mut Node, op: &Node, path: Option<&str>) -> Result<(), MergeError> {
    let from = op.str_at(&["from"]).ok_or_else(|| {
        err(
            "",
            "move operation failed to decode from: operation, missing from field: missing value",
        )
    })?;
    let (con, key) = find_object(doc, from).ok_or_else(|| {
        err(
            from,
            format!(
                "move operation does not apply: doc is missing from path: {from}: missing value"
            ),
        )
    })?;
    // `con.get` then `con.remove`: both name the key, not the path.
    if let Node::Seq(items) = &*con {
        seq_get(items, &key)
            .map_err(|e| err(from, format!("error in move for path: '{key}': {e}")))?;
    }
    let v = container_remove(con, &key)
        .map_err(|e| err(from, format!("error in move for path: '{key}': {e}")))?;
    // The destination is found after the removal: a move into the moved value's own
    // children finds no destination.
    let path = path.ok_or_else(|| {
        err(
            from,
            "move operation failed to decode path: operation missing path field: missing value",
        )
    })?;
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        err(path, format!("move operation does not apply: doc is missing destination path: {path}: missing value"))
    })?;
    container_add(con, &key, v)
        .map_err(|e| err(path, format!("error in move for path: '{path}': {e}")))
}

/// The `copy` operation (`patch.go` `copy`), refused past `max_growth`.
fn copy_op(
    doc: &mut Node,
    op: &Node,
    path: Option<&str>,
    max_growth: usize,
) -> Result<(), MergeError> {
    let from = op.str_at(&["from"]).ok_or_else(|| {
        err(
            "",
            "copy operation failed to decode from: operation, missing from field: missing value",
        )
    })?;
    let (con, key) = find_object(doc, from).ok_or_else(|| {
        err(
            from,
            format!(
                "copy operation does not apply: doc is missing from path: {from}: missing value"
            ),
        )
    })?;
    // A key missing from an object copies null (`partialDoc.get` finds nothing
    // without an error); a list index must be in range.
    let v = match &*con {
        Node::Map(m) => m.get(&key).cloned().unwrap_or(Node::Null),
        Node::Seq(items) => {
            let i = seq_get(items, &key)
                .map_err(|e| err(from, format!("error in copy for from: '{from}': {e}")))?;
            items[i].clone()
        }
        _ => return unreachable_container(from),
    };
    let path =
        path.ok_or_else(|| err(from, "copy operation failed to decode path: missing value"))?;
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
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        err(path, format!("copy operation does not apply: doc is missing destination path: {path}: missing value"))
    })?;
    container_add(con, &key, v)
        .map_err(|e| err(path, format!("error while adding value during copy: {e}")))
}

/// The `test` operation (`patch.go` `test`), as the json-patch release (`v4_13`) answers it.
fn test_op(
    doc: &mut Node,
    path: Option<&str>,
    value: Option<&Node>,
    v4_13: bool,
) -> Result<(), MergeError> {
    let path = required_path(path, "test")?;
    let failed = || err(path, format!("testing value {path} failed: test failed"));
    if path.is_empty() {
        // The whole document against the value; without a value the library
        // dereferences a nil node (a crash in both releases).
        let Some(v) = value else {
            return Err(crash(path, "test", "the whole document and no `value`"));
        };
        return if same(doc, v) { Ok(()) } else { Err(failed()) };
    }
    let (con, key) = find_object(doc, path).ok_or_else(|| {
        err(
            path,
            format!("test operation does not apply: is missing path: {path}: missing value"),
        )
    })?;
    let actual = match &*con {
        Node::Map(m) => m.get(&key).filter(|v| !v.is_null()),
        Node::Seq(items) => {
            let i = seq_get(items, &key)
                .map_err(|e| err(path, format!("error in test for path: '{path}': {e}")))?;
            Some(&items[i]).filter(|v| !v.is_null())
        }
        _ => return unreachable_container(path),
    };
    match (actual, value) {
        // Nothing there (a missing key or a null): a null value passes; no value at
        // all passes in v4.13.0 and crashes v4.12.0 (`op.value().raw` on a nil node).
        (None, None) if v4_13 => Ok(()),
        (None, None) => Err(crash(path, "test", "a missing field and no `value`")),
        (None, Some(v)) if v.is_null() => Ok(()),
        (Some(a), Some(v)) if same(a, v) => Ok(()),
        _ => Err(failed()),
    }
}

/// `replace` of the whole document (path `""`). The value must decode as an object or a
/// list (`lazyNode.tryDoc`, `tryAry`); a list leaves no object, which kustomize then fails
/// to read (`json: cannot unmarshal array into Go value of type map[string]interface {}`).
/// Any other value is refused by v4.13.0 with an error wrapping nil; v4.12.0 builds the
/// same error with `errors.Wrapf(nil, …)`, which is nil, and skips the operation without a
/// word. A skipped operation is a silent wrong answer, so ply refuses it for v5.5.0 too
/// (docs/compatibility.md). No value at all crashes both releases (a nil node).
fn replace_root(doc: &mut Node, value: Option<&Node>, v4_13: bool) -> Result<(), MergeError> {
    match value {
        Some(v @ Node::Map(_)) => {
            *doc = v.clone();
            Ok(())
        }
        None => Err(crash("", "replace", "the whole document and no `value`")),
        Some(Node::Seq(_)) => Err(err(
            "",
            "replace operation at the whole document (path \"\") leaves a list, not an object \
             (kustomize: json: cannot unmarshal array into Go value of type map[string]interface {})",
        )),
        Some(v) if v4_13 => Err(err(
            "",
            format!(
                "replace operation value must be object or array: %!w(<nil>) (kustomize's \
                 words: the whole document (path \"\") is replaced by an object only, and \
                 this value is a {})",
                v.kind_name()
            ),
        )),
        Some(v) => Err(err(
            "",
            format!(
                "replace operation at the whole document (path \"\") needs an object value, \
                 found a {} (kustomize v5.5.0 skips such an operation without a word; v5.8.1 \
                 refuses it)",
                v.kind_name()
            ),
        )),
    }
}

/// An operation the json-patch library crashes on (a nil pointer dereference): kustomize
/// and kubectl panic, ply refuses it.
fn crash(pointer: &str, op: &str, what: &str) -> MergeError {
    err(
        pointer,
        format!(
            "{op} operation on {what}: kustomize's json-patch library crashes on it (a nil \
             value); give the operation a `value`"
        ),
    )
}

/// `find_object` only returns maps and lists.
fn unreachable_container<T>(pointer: &str) -> Result<T, MergeError> {
    Err(err(pointer, "doc is missing path: missing value"))
}

/// RFC 6901's unescaping in one pass, as `decodePatchKey` does it (`~1` is `/`, `~0` is `~`).
fn decode_key(token: &str) -> String {
    if !token.contains('~') {
        return token.to_string();
    }
    let mut out = String::with_capacity(token.len());
    let mut rest = token;
    while let Some(i) = rest.find('~') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('1') {
            out.push('/');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('0') {
            out.push('~');
            rest = tail;
        } else {
            out.push('~');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `findObject`: the container holding the node a path names, and the last token. The path
/// is split at every `/` and its first part is dropped whatever it holds, so a path without
/// a leading slash (`spec/replicas`) names `/replicas`, and one without any slash names
/// nothing. Every part but the last must name an object or a list (list indices as
/// [`seq_get`] reads them); a null is nothing (v4.12.0 crashes on a null an earlier
/// operation wrote there, v4.13.0 finds nothing: both fail).
fn find_object<'a>(doc: &'a mut Node, path: &str) -> Option<(&'a mut Node, String)> {
    let mut parts: Vec<&str> = path.split('/').collect();
    if parts.len() < 2 {
        return None;
    }
    let key = decode_key(parts.pop()?);
    let mut cur = doc;
    for part in &parts[1..] {
        let t = decode_key(part);
        let next = match cur {
            Node::Map(m) => m.get_mut(&t)?,
            Node::Seq(items) => {
                let i = seq_get(items, &t).ok()?;
                &mut items[i]
            }
            _ => return None,
        };
        if !matches!(next, Node::Map(_) | Node::Seq(_)) {
            return None;
        }
        cur = next;
    }
    matches!(cur, Node::Map(_) | Node::Seq(_)).then_some((cur, key))
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits that fit an int64, with its
/// error text.
fn atoi(s: &str) -> Result<i64, String> {
    let syntax = || format!("strconv.Atoi: parsing {s:?}: invalid syntax");
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return Err(syntax());
    }
    let mut n: i128 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return Err(syntax());
        }
        n = n * 10 + i128::from(b - b'0');
        if n > i128::from(i64::MAX) + 1 {
            return Err(format!("strconv.Atoi: parsing {s:?}: value out of range"));
        }
    }
    let n = if neg { -n } else { n };
    i64::try_from(n).map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}

fn invalid_index(i: i64) -> String {
    format!("Unable to access invalid index: {i}: invalid index referenced")
}

/// `partialArray.get`: a decimal index (a sign and leading zeros allowed; `-` is not an
/// index here), a negative one counting from the end (`SupportNegativeIndices` is on).
fn seq_get(items: &[Node], key: &str) -> Result<usize, String> {
    let idx = atoi(key)?;
    let len = items.len() as i64;
    let mut i = idx;
    if i < 0 {
        if i < -len {
            return Err(invalid_index(idx));
        }
        i += len;
    }
    if i >= len {
        return Err(invalid_index(i));
    }
    Ok(i as usize)
}

/// `partialDoc.add` and `partialArray.add`: a key is set; `-` appends; an index may be the
/// length (the end), and a negative one counts from the end of the list one longer (`-1`
/// appends).
fn container_add(con: &mut Node, key: &str, value: Node) -> Result<(), String> {
    match con {
        Node::Map(m) => {
            m.insert(key.to_string(), value);
            Ok(())
        }
        Node::Seq(items) => {
            if key == "-" {
                items.push(value);
                return Ok(());
            }
            let idx = atoi(key)
                .map_err(|e| format!("value was not a proper array index: '{key}': {e}"))?;
            let size = items.len() as i64 + 1;
            let mut i = idx;
            if i >= size {
                return Err(invalid_index(idx));
            }
            if i < 0 {
                if i < -size {
                    return Err(invalid_index(idx));
                }
                i += size;
            }
            items.insert(i as usize, value);
            Ok(())
        }
        _ => Err("doc is missing path: missing value".into()),
    }
}

/// `partialDoc.remove` and `partialArray.remove`.
fn container_remove(con: &mut Node, key: &str) -> Result<Node, String> {
    match con {
        Node::Map(m) => m
            .shift_remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: missing value")),
        Node::Seq(items) => {
            let idx = atoi(key)?;
            let len = items.len() as i64;
            let mut i = idx;
            if i >= len {
                return Err(invalid_index(idx));
            }
            if i < 0 {
                if i < -len {
                    return Err(invalid_index(idx));
                }
                i += len;
            }
            Ok(items.remove(i as usize))
        }
        _ => Err("doc is missing path: missing value".into()),
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
        assert!(
            e.message.contains("testing value /a failed"),
            "{}",
            e.message
        );
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

    fn as_version(doc: &str, ops: &str, v: KustomizeVersion) -> Result<Node, String> {
        apply_with(&y(doc), &y(ops), MAX_COPY_GROWTH, v).map_err(|e| e.message)
    }

    // Each expectation below is kubectl kustomize's (v1.32, kustomize v5.5.0; v1.37, v5.8.1)
    // on the same document and operation; both agree unless a version is named.
    #[test]
    #[allow(
        clippy::too_many_lines,
        reason = "a table of path forms, each with kustomize's answer"
    )]
    fn path_forms_as_json_patch_v4_reads_them() {
        let doc = "{data: {a: 1}, list: [x, y, z]}";
        for v in KustomizeVersion::ALL.iter().copied() {
            let ok = |ops: &str, want: &str| {
                assert_eq!(as_version(doc, ops, v), Ok(y(want)), "{ops} as {v:?}");
            };
            // The first part of a path is dropped unread: `data/b` is `/b`.
            ok(
                "[{op: add, path: data/b, value: 2}]",
                "{data: {a: 1}, list: [x, y, z], b: 2}",
            );
            // Leading zeros, a sign, and negative indices counting from the end.
            ok(
                "[{op: add, path: /list/01, value: n}]",
                "{data: {a: 1}, list: [x, n, y, z]}",
            );
            ok(
                "[{op: add, path: /list/+1, value: n}]",
                "{data: {a: 1}, list: [x, n, y, z]}",
            );
            ok(
                "[{op: add, path: /list/-1, value: n}]",
                "{data: {a: 1}, list: [x, y, z, n]}",
            );
            ok(
                "[{op: add, path: /list/-4, value: n}]",
                "{data: {a: 1}, list: [n, x, y, z]}",
            );
            ok(
                "[{op: remove, path: /list/-3}]",
                "{data: {a: 1}, list: [y, z]}",
            );
            ok(
                "[{op: replace, path: /list/-1, value: n}]",
                "{data: {a: 1}, list: [x, y, n]}",
            );
            ok("[{op: test, path: /list/-0, value: x}]", doc);
            ok(
                "[{op: move, from: /list/-1, path: /list/0}]",
                "{data: {a: 1}, list: [z, x, y]}",
            );
            ok(
                "[{op: copy, from: /list/002, path: /list/-}]",
                "{data: {a: 1}, list: [x, y, z, z]}",
            );
            // `/` names the key "" of the document.
            ok(
                "[{op: replace, path: /, value: {k: v}}]",
                "{data: {a: 1}, list: [x, y, z], '': {k: v}}",
            );
            ok("[{op: replace, path: '', value: {k: v}}]", "{k: v}");
            let fails = |ops: &str, want: &str| {
                let e = as_version(doc, ops, v).expect_err(ops);
                assert!(e.contains(want), "{ops} as {v:?}: {e}");
            };
            fails(
                "[{op: add, path: data, value: 1}]",
                "doc is missing path: \"data\"",
            );
            fails("[{op: add, path: /list/-5, value: n}]", "invalid index: -5");
            fails(
                "[{op: add, path: '/list/ 1', value: n}]",
                "parsing \" 1\": invalid syntax",
            );
            fails(
                "[{op: remove, path: /list/-}]",
                "parsing \"-\": invalid syntax",
            );
            fails(
                "[{op: replace, path: /list/-, value: n}]",
                "doc is missing key: /list/-",
            );
            fails(
                "[{op: test, path: /list/-, value: z}]",
                "error in test for path",
            );
            fails(
                "[{op: copy, from: /list/-, path: /c}]",
                "error in copy for from",
            );
            fails(
                "[{op: move, from: /list/-, path: /c}]",
                "error in move for path: '-'",
            );
            fails(
                "[{op: add, path: /list/-/x, value: 1}]",
                "doc is missing path",
            );
            fails(
                "[{op: remove, path: /}]",
                "Unable to remove nonexistent key: : missing value",
            );
            fails(
                "[{op: move, from: /data, path: /data/x}]",
                "missing destination path",
            );
            fails(
                "[{op: add, path: /list/99999999999999999999, value: n}]",
                "value out of range",
            );
            fails("[{op: replace, path: '', value: [1]}]", "leaves a list");
            fails("[{op: replace, path: ''}]", "crashes");
            fails("[{op: frob, path: /a}]", "Unexpected kind: frob");
            fails("[{path: /a}]", "Unexpected kind: unknown");
            fails(
                "[{op: add, value: 1}]",
                "add operation failed to decode path",
            );
        }
    }

    #[test]
    fn the_two_library_releases_differ_where_kustomize_does() {
        use KustomizeVersion::{V5_5_0, V5_8_1};
        let doc = "{a: 1}";
        // v4.13.0 refuses a non-object replacing the document; v4.12.0 skips it silently,
        // which ply refuses too (docs/compatibility.md).
        let e = as_version(doc, "[{op: replace, path: '', value: 5}]", V5_8_1).unwrap_err();
        assert!(
            e.contains("replace operation value must be object or array"),
            "{e}"
        );
        let e = as_version(doc, "[{op: replace, path: '', value: 5}]", V5_5_0).unwrap_err();
        assert!(e.contains("v5.5.0 skips"), "{e}");
        // `test` of a missing field without a value: v4.13.0 passes, v4.12.0 crashes.
        assert_eq!(
            as_version(doc, "[{op: test, path: /b}]", V5_8_1),
            Ok(y(doc))
        );
        let e = as_version(doc, "[{op: test, path: /b}]", V5_5_0).unwrap_err();
        assert!(e.contains("crashes"), "{e}");
    }

    #[test]
    fn keys_unescape_in_one_pass() {
        assert_eq!(decode_key("a~1b~0c"), "a/b~c");
        assert_eq!(decode_key("~01"), "~1");
        assert_eq!(decode_key("~2~"), "~2~");
        assert_eq!(atoi("-0"), Ok(0));
        assert_eq!(atoi("+7"), Ok(7));
        assert!(atoi("").is_err() && atoi("-").is_err() && atoi("1_0").is_err());
        assert_eq!(atoi("-9223372036854775808"), Ok(i64::MIN));
        assert!(
            atoi("9223372036854775808")
                .unwrap_err()
                .contains("out of range")
        );
    }
}
