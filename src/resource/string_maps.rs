//! The string maps kustomize reads out of an object and writes back: `metadata.labels`,
//! `metadata.annotations` (kyaml `RNode.GetLabels`/`GetAnnotations` → `getMapFromMeta`,
//! `SetLabels`/`SetAnnotations` → `setMapInMetadata`, kyaml/yaml/rnode.go) and `data`
//! (`GetDataMap`, `SetDataMap`). Reading takes each value's source text (a plain `True` reads
//! `"True"`, `~` reads `"~"`, a map or list reads `""`); writing replaces the field with a map of
//! strings, sorted, and drops it when the map is empty. Used at the end of every build
//! (`Resource.RemoveBuildAnnotations` and `SetOrigin(nil)`, which rewrite the annotations of
//! every object), for strategic merge patches kustomize prepares with
//! `CopyMergeMetaDataFieldsFrom`, and for generators with `behavior: merge` or `replace`.

use crate::yaml::resolve::plain_reads_as_string;
use crate::yaml::{Map, Node};

/// The text kustomize reads for one value of a labels or annotations map (`yaml.Node.Value`):
/// a scalar's source text, `""` for an empty value, a map or a list.
pub(crate) fn meta_value_text(v: &Node) -> String {
    match v {
        Node::Seq(_) | Node::Map(_) => String::new(),
        Node::Null => String::new(),
        other => other.source_text().unwrap_or_default(),
    }
}

/// The text kustomize reads for one value of `data` (kyaml `GetValue`): as
/// [`meta_value_text`], except that any null (`~`, `null`) reads as `""`.
pub(crate) fn data_value_text(v: &Node) -> String {
    if v.is_null() {
        String::new()
    } else {
        meta_value_text(v)
    }
}

/// The map `getMapFromMeta` reads from a field's value: a map's entries; a list read as
/// key/value pairs of its items (kyaml visits a node's content two by two, whatever its
/// kind); nothing for a scalar.
pub(crate) fn read(field: &Node, text: fn(&Node) -> String) -> Map {
    let mut out = Map::default();
    match field {
        Node::Map(m) => {
            for (k, v) in m {
                out.insert(k.clone(), Node::Str(text(v)));
            }
        }
        Node::Seq(items) => {
            for pair in items.chunks_exact(2) {
                out.insert(meta_value_text(&pair[0]), Node::Str(text(&pair[1])));
            }
        }
        _ => {}
    }
    out
}

/// `setMapInMetadata`: `metadata.<field>` replaced by `entries` as strings, or removed when
/// there are none.
pub(crate) fn write_meta(node: &mut Node, field: &str, entries: Map) {
    let Some(meta) = node.get_mut("metadata").and_then(Node::as_map_mut) else {
        if entries.is_empty() {
            return;
        }
        node.ensure_path(&["metadata", field])
            .clone_from(&Node::Map(entries));
        return;
    };
    if entries.is_empty() {
        meta.shift_remove(field);
    } else {
        meta.insert(field.to_string(), Node::Map(entries));
    }
}

/// Rewrites `metadata.labels` or `metadata.annotations` as kustomize's `Get…`/`Set…` pair
/// does. A field that is absent stays absent.
pub(crate) fn restring_meta(node: &mut Node, field: &str) {
    let Some(current) = node.get_path(&["metadata", field]) else {
        return;
    };
    let entries = read(current, meta_value_text);
    write_meta(node, field, entries);
}

/// A strategic merge patch as kustomize prepares it before applying it to the objects a
/// `patches:` target or a `patchesStrategicMerge` entry selects (`resWrangler.ApplySmPatch`:
/// `patchCopy.CopyMergeMetaDataFieldsFrom(patch)`): its labels and annotations become strings
/// of their source text (a `null` label value is the string "null", no longer a deletion), and
/// empty ones are dropped.
pub(crate) fn copy_merge_metadata(patch: &Node) -> Node {
    let mut p = patch.clone();
    restring_meta(&mut p, "labels");
    restring_meta(&mut p, "annotations");
    p
}

/// An object after kustomize passed it through JSON (a JSON 6902 patch: `patchjson6902`
/// marshals the object to JSON and builds a new node tree from the result): values keep no
/// source spelling any more (`True` reads `"true"`, `0x1F` reads `"31"`), and every null,
/// empty ones included, reads `"null"`.
pub(crate) fn after_json_round_trip(node: &mut Node) {
    fn respell(map: &mut Node) {
        let Some(m) = map.as_map_mut() else { return };
        for v in m.values_mut() {
            if v.is_null() {
                *v = Node::Spelled(Box::new(crate::yaml::Spelled {
                    value: Node::Null,
                    text: "null".into(),
                }));
            } else if let Node::Spelled(_) = v {
                *v = std::mem::take(v).into_unspelled();
            }
        }
    }
    for path in [
        &["metadata", "labels"][..],
        &["metadata", "annotations"],
        &["data"],
        &["binaryData"],
    ] {
        if let Some(map) = node.get_path_mut(path) {
            respell(map);
        }
    }
}

/// Why kustomize cannot print an annotations map it rewrote, if it cannot: it writes keys
/// untagged and plain (`yaml.NewScalarRNode`), so a key that go-yaml v3 reads as a number, a
/// boolean, null or a timestamp comes back as one, and the JSON step fails (`json: unsupported
/// type: map[interface {}]interface {}`). A value whose first line starts with a tab and that
/// holds a line break is written as a literal block go-yaml cannot read back (`found a tab
/// character where an indentation space is expected`).
pub(crate) fn unprintable(map: &Map) -> Option<String> {
    for (k, v) in map {
        if let Some(why) = written_key_fails(k) {
            return Some(format!("the key {k:?} {why}"));
        }
        if let Node::Str(s) = v
            && literal_fails_to_reread(s)
        {
            return Some(format!(
                "the value of {k:?} starts with a tab and spans lines; kustomize writes it as a \
                 literal block that it cannot read back (found a tab character where an \
                 indentation space is expected)"
            ));
        }
    }
    None
}

/// Why kustomize fails on a map key it writes itself, if it does: a label or annotation key of
/// the kustomization (`commonLabels`, `labels`, `commonAnnotations`, `generatorOptions`) that
/// an object lacks, a generated ConfigMap's or Secret's data key (from a literal, an env file
/// or a file name), every annotation key at the end of the build. kyaml writes such a key as a
/// new untagged plain node (`yaml.NewScalarRNode`, kyaml/yaml/fns.go `FieldSetter`;
/// `SetDataMap`, kyaml/yaml/datamap.go), and the JSON step (`RNode.MarshalJSON`) reads it back
/// with go-yaml v3: a key that then reads as a number, boolean, null or timestamp cannot be
/// encoded (`json: unsupported type: map[interface {}]interface {}`), and `<<` is the merge key,
/// whose string value fails (`map merge requires map or sequence of maps as the value`).
/// Quoting the key in the kustomization does not help: sigs.k8s.io/yaml keeps no quotes.
pub(crate) fn written_key_fails(k: &str) -> Option<String> {
    if k == "<<" {
        return Some(
            "is written unquoted by kustomize and then reads as YAML's merge key, whose value \
             is not a map (map merge requires map or sequence of maps as the value)"
                .into(),
        );
    }
    if plain_reads_as_string(k) {
        return None;
    }
    let kind = if crate::yaml::resolve::is_timestamp(k) {
        "timestamp"
    } else if k.parse::<f64>().is_ok() || crate::yaml::resolve::resolve_number(k).is_some() {
        "number"
    } else {
        "non-string value"
    };
    Some(format!(
        "is written unquoted by kustomize and then reads as a {kind}, which its JSON step cannot \
         encode (json: unsupported type: map[interface {{}}]interface {{}})"
    ))
}

/// Whether go-yaml v3 writes `s` (a string without a kept style) as a literal block whose
/// first line it then cannot read: it holds a line break, starts with a tab (no indentation
/// indicator is written for a tab), and a block is allowed (no space before a line break, no
/// trailing space, only printable characters; `yaml_emitter_analyze_scalar`).
pub(crate) fn literal_fails_to_reread(s: &str) -> bool {
    s.contains('\n') && crate::yaml::folded::block_starts_with_tab(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    #[test]
    fn keys_kustomize_writes_fail_when_they_read_as_another_type() {
        for k in [
            "404",
            "1.5",
            "0x10",
            "1e3",
            "true",
            "False",
            "null",
            "~",
            ".inf",
            "2024-01-01",
        ] {
            let why = written_key_fails(k).unwrap_or_else(|| panic!("{k}"));
            assert!(why.contains("json: unsupported type"), "{why}");
        }
        assert!(written_key_fails("<<").unwrap().contains("merge key"));
        for k in ["code-404", "yes", "on", "a b", "x1", "v1.2.3"] {
            assert_eq!(written_key_fails(k), None, "{k}");
        }
    }

    #[test]
    fn annotations_read_as_source_text() {
        let doc = parse_one(
            "metadata:\n  annotations:\n    b: True\n    i: 0x1F\n    n: ~\n    e:\n    f: 1.50\n    m: {a: 1}\n    l: [1]\n    s: x\n    z: null\n",
        )
        .unwrap();
        let mut doc = doc;
        restring_meta(&mut doc, "annotations");
        let got: Vec<(String, String)> = doc
            .get_path(&["metadata", "annotations"])
            .and_then(Node::as_map)
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        let want = [
            ("b", "True"),
            ("i", "0x1F"),
            ("n", "~"),
            ("e", ""),
            ("f", "1.50"),
            ("m", ""),
            ("l", ""),
            ("s", "x"),
            ("z", "null"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn empty_maps_are_dropped() {
        let mut doc = parse_one("metadata:\n  name: a\n  annotations: {}\n").unwrap();
        restring_meta(&mut doc, "annotations");
        assert_eq!(doc.get_path(&["metadata", "annotations"]), None);
    }

    #[test]
    fn keys_that_read_as_other_types() {
        for k in ["1e3", "true", "~", "0x1F", "2024-01-01", ".inf", "1_000"] {
            assert!(!plain_reads_as_string(k), "{k}");
        }
        for k in ["a", "yes", "1.2.3", "", "<<", "app.kubernetes.io/name"] {
            assert!(plain_reads_as_string(k), "{k}");
        }
    }

    #[test]
    fn tab_led_lines() {
        assert!(literal_fails_to_reread("\tx\ny\n"));
        assert!(!literal_fails_to_reread("\tx"));
        assert!(!literal_fails_to_reread("x\n\ty"));
        assert!(!literal_fails_to_reread("\tx \ny"));
    }
}
