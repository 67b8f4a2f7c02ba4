//! The generated-name hash suffix, identical to kustomize's (`api/hasher/hasher.go`): which
//! fields are hashed, Go `encoding/json` text, sha256, and the 10-character encoding.
//!
//! What is hashed: for a ConfigMap, `{"binaryData"?, "data", "kind", "name"}`; for a Secret,
//! `{"data", "kind", "name", "stringData"?, "type"}` — keys sorted, missing fields as `""`,
//! `binaryData`/`stringData` only when they are maps. kustomize looks `name` up as the single
//! top-level key `metadata/name`, which never exists, so `name` is always `""` in practice (the
//! hash does not depend on the name; kustomize's own test vectors and output agree).
//! Other kinds hash their whole object (kustomize hashes an internal node structure there;
//! generators only ever make ConfigMaps and Secrets).

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::diag::Result;
use crate::resource::Resource;
use crate::yaml::Node;
use crate::yaml::json::{JsonStyle, to_json, write_json, write_json_string};

/// The 10-character hash kustomize appends to a generated object's name.
pub(crate) fn hash_of(node: &Node) -> String {
    encode(&hex_sha256(&hashed_text(node)))
}

/// At the root, after every other transformation: appends `-<hash>` to the name of each
/// resource with `needs_hash_suffix`, recording the previous id (kustomize's HashTransformer,
/// run from `KustTarget.addHashesToNames`).
pub(crate) fn apply_hash_suffixes(resources: &mut [Resource]) -> Result<()> {
    for r in resources.iter_mut().filter(|r| r.needs_hash_suffix) {
        let h = hash_of(&r.node);
        let name = format!("{}-{}", r.name(), h);
        r.store_previous_id();
        r.set_name(&name);
        r.needs_hash_suffix = false;
    }
    Ok(())
}

/// A value of the hashed object: a field of the resource, or a text.
enum Value<'a> {
    Node(&'a Node),
    Text(&'a str),
}

/// The JSON text kustomize hashes for this object, written field by field (the object it
/// describes is never built).
pub(crate) fn hashed_text(node: &Node) -> String {
    let kind = node.str_at(&["kind"]).unwrap_or("");
    // Missing and null fields hash as "".
    let field = |k: &str| match node.get(k) {
        None | Some(Node::Null) => Some(Value::Text("")),
        Some(v) => Some(Value::Node(v)),
    };
    let map = |k: &str| {
        node.get(k)
            .filter(|v| matches!(v, Node::Map(_)))
            .map(Value::Node)
    };
    // In Go's sorted key order; `None` entries are left out.
    let entries: [(&str, Option<Value<'_>>); 5] = match kind {
        "ConfigMap" => [
            ("binaryData", map("binaryData")),
            ("data", field("data")),
            ("kind", Some(Value::Text("ConfigMap"))),
            ("name", field("metadata/name")),
            ("", None),
        ],
        "Secret" => [
            ("data", field("data")),
            ("kind", Some(Value::Text("Secret"))),
            ("name", field("metadata/name")),
            ("stringData", map("stringData")),
            ("type", field("type")),
        ],
        _ => return go_json(node),
    };
    let style = JsonStyle::KUSTOMIZE_HASH;
    let mut out = String::with_capacity(256);
    out.push('{');
    for (key, value) in entries {
        let Some(value) = value else { continue };
        if out.len() > 1 {
            out.push(',');
        }
        write_json_string(&mut out, key, style);
        out.push(':');
        match value {
            Value::Node(v) => write_json(&mut out, v, style),
            Value::Text(t) => write_json_string(&mut out, t, style),
        }
    }
    out.push('}');
    out
}

/// Go `encoding/json` text of a value decoded into `interface{}`: map keys sorted, numbers as
/// float64, HTML-safe string escaping.
pub(crate) fn go_json(node: &Node) -> String {
    to_json(node, JsonStyle::KUSTOMIZE_HASH)
}

fn hex_sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The first ten hex digits with `0 1 3 a e` replaced by `g h k m t` (so that the suffix has
/// no vowels and cannot read as a number; kubectl's `hash.encode`).
fn encode(hex: &str) -> String {
    hex.chars()
        .take(10)
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::json::go_float;
    use crate::yaml::parse::parse_one;

    fn h(yaml: &str) -> String {
        hash_of(&parse_one(yaml).unwrap())
    }

    fn enc(yaml: &str) -> String {
        hashed_text(&parse_one(yaml).unwrap())
    }

    #[test]
    fn sha256_of_empty() {
        assert_eq!(
            hex_sha256(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    // Vectors from kustomize's api/hasher/hasher_test.go (TestConfigMapHash, TestEncodeConfigMap).
    #[test]
    fn config_map_vectors() {
        let cm = "apiVersion: v1\nkind: ConfigMap\n";
        assert_eq!(enc(cm), r#"{"data":"","kind":"ConfigMap","name":""}"#);
        assert_eq!(h(cm), "6ct58987ht");
        let one = "apiVersion: v1\nkind: ConfigMap\ndata:\n  one: \"\"\n";
        assert_eq!(
            enc(one),
            r#"{"data":{"one":""},"kind":"ConfigMap","name":""}"#
        );
        assert_eq!(h(one), "9g67k2htb6");
        let three = "apiVersion: v1\nkind: ConfigMap\ndata:\n  two: 2\n  one: \"\"\n  three: 3\n";
        assert_eq!(
            enc(three),
            r#"{"data":{"one":"","three":3,"two":2},"kind":"ConfigMap","name":""}"#
        );
        assert_eq!(h(three), "7757f9kkct");
        assert_eq!(
            h("apiVersion: v1\nkind: ConfigMap\nbinaryData:\n  one: \"\"\n"),
            "6mtk2m274t"
        );
        assert_eq!(
            h("apiVersion: v1\nkind: ConfigMap\nbinaryData:\n  two: 2\n  one: \"\"\n  three: 3\n"),
            "9th7kc28dg"
        );
        assert_eq!(
            h("apiVersion: v1\nkind: ConfigMap\ndata:\n  one: \"\"\nbinaryData:\n  two: \"\"\n"),
            "698h7c7t9m"
        );
    }

    // Vectors from kustomize's api/hasher/hasher_test.go (TestSecretHash, TestEncodeSecret).
    #[test]
    fn secret_vectors() {
        let s = "apiVersion: v1\nkind: Secret\ntype: my-type\n";
        assert_eq!(
            enc(s),
            r#"{"data":"","kind":"Secret","name":"","type":"my-type"}"#
        );
        assert_eq!(h(s), "5gmgkf8578");
        assert_eq!(h(&format!("{s}data:\n  one: \"\"\n")), "74bd68bm66");
        assert_eq!(
            h(&format!("{s}data:\n  two: 2\n  one: \"\"\n  three: 3\n")),
            "4gf75c7476"
        );
        let sd = format!("{s}data:\n  one: \"\"\nstringData:\n  two: 2\n");
        assert_eq!(
            enc(&sd),
            r#"{"data":{"one":""},"kind":"Secret","name":"","stringData":{"two":2},"type":"my-type"}"#
        );
        assert_eq!(h(&sd), "c4h4264gdb");
    }

    // Checked against `kubectl kustomize` (v5.5.0) output.
    #[test]
    fn matches_kubectl_output() {
        // configMapGenerator `{name: empty}` → empty-6ct58987ht (the name is not hashed).
        assert_eq!(
            h("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empty\n"),
            "6ct58987ht"
        );
        // secretGenerator `{name: s}` → data: {}, type: Opaque → s-46f8b28mk5.
        assert_eq!(
            h("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ntype: Opaque\ndata: {}\n"),
            "46f8b28mk5"
        );
    }

    #[test]
    fn go_string_escaping() {
        assert_eq!(
            go_json(&Node::str("a<b>&c\"\\\n\u{1}\u{2028}")),
            r#""a\u003cb\u003e\u0026c\"\\\n\u0001\u2028""#
        );
        assert_eq!(go_float(3.0), "3");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1.5e-7), "1.5e-7");
    }
}
