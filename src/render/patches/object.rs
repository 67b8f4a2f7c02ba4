//! What one patch does to one object: the strategic merge as kustomize's
//! `Resource.ApplySmPatch` runs it (apiVersion, name, namespace and kind kept, nulls written
//! as nothing dropped) and a JSON 6902 list applied in place, with what kustomize's JSON round
//! trip leaves of the object.

use crate::merge::{json6902, smp};
use crate::resource::shared::Snapshot;
use crate::resource::{Resource, string_maps};

use super::KustomizeVersion;
use crate::yaml::Node;

use super::index::Index;
use super::*;

/// Puts kustomize's build annotations ([`Resource::build_annotations`]) into the object's
/// `metadata.annotations`, as kustomize's copy holds them when a JSON patch runs: a patch may
/// add to that map even when the input had none, and one that copies, moves or tests the map
/// sees them (`PatchTransformerPlugin.transformJson6902`, api/internal/builtins). Returns their
/// keys, for [`without_build_annotations`].
pub(super) fn with_build_annotations(
    r: &mut Resource,
    cluster_scoped: crate::resource::ClusterScoped<'_>,
) -> Vec<String> {
    let build = r.build_annotations(cluster_scoped);
    let own = matches!(
        r.node.get_path(&["metadata", "annotations"]),
        Some(Node::Map(_))
    );
    if build.is_empty() && !own {
        return Vec::new();
    }
    let a = r.node.ensure_path(&["metadata", "annotations"]);
    if !matches!(a, Node::Map(_)) {
        *a = Node::empty_map();
    }
    let Node::Map(map) = a else {
        return Vec::new();
    };
    build
        .into_iter()
        .map(|(k, v)| {
            map.insert(k.clone(), Node::str(&v));
            k
        })
        .collect()
}

/// Takes the build annotations out again after the patch: kustomize writes them back over
/// whatever the patch left (`SetAnnotations` with the saved internal annotations) and removes
/// them before it prints, so none of the patch's edits to those keys survive.
pub(super) fn without_build_annotations(node: &mut Node, keys: &[String]) {
    if let Some(Node::Map(map)) = node.get_path_mut(&["metadata", "annotations"]) {
        for k in keys {
            map.shift_remove(k.as_str());
        }
    }
}

/// What kustomize's JSON round trip leaves of a patched object (`patchjson6902.Filter.run`:
/// `RNode.MarshalJSON`, the patch, `RNode.UnmarshalJSON`, which reads every number as a Go
/// float64): an integer a float64 cannot hold exactly becomes the nearest float64, printed
/// as Go prints it (`9223372036854775807` → `9223372036854776000`). Then kustomize writes the
/// annotations back (`Resource.SetAnnotations`, which drops an empty map; see
/// `metadata::drop_empty_annotations`). Values of string maps lose their source spelling
/// ([`string_maps::after_json_round_trip`]), and a name or namespace written as a number or
/// boolean reads as JSON printed it (`True` is the name "true", `0x10` the namespace "16").
pub(super) fn after_json_round_trip(node: &mut Node) {
    string_maps::after_json_round_trip(node);
    for key in ["name", "namespace"] {
        if let Some(v @ Node::Spelled(_)) = node.get_path_mut(&["metadata", key]) {
            *v = std::mem::take(v).into_unspelled();
        }
    }
    // Every other number or boolean loses its source spelling too (`2.0` reads `2`, which a
    // later replacement copies; `reading::keeps_own_text`); string maps' nulls keep "null".
    fn floats(n: &mut Node) {
        if matches!(n, Node::Spelled(s) if !s.value.is_null()) {
            *n = std::mem::take(n).into_unspelled();
        }
        match n {
            // A Go float64 that go-yaml v3 then writes as `strconv.FormatFloat(f, 'g', -1,
            // 64)` (`encoder.floatv`): below 1e6 integer digits, which read back as an int;
            // from 1e6 on an exponent form (`1.234567e+06`), which reads back as a float
            // (`RNode.UnmarshalJSON` → `FromMap`, kyaml/yaml/rnode.go). Printed as
            // [`crate::yaml::emit::format_float`] prints it (`2^64` → `1.8446744073709552e+19`).
            Node::Int(i) if i.unsigned_abs() >= 1_000_000 => *n = Node::Float(*i as f64),
            Node::Int(_) => {}
            Node::Map(m) => m.values_mut().for_each(floats),
            Node::Seq(items) => items.iter_mut().for_each(floats),
            _ => {}
        }
    }
    floats(node);
    // Strings take the style go-yaml gives them as it prints the decoded object: `"a"` is
    // plain after the trip, `"8080"` stays quoted (what a later strategic merge patch sees,
    // `Map::styled`).
    crate::yaml::emit::restyle_as_printed(node);
    // The values of string maps are then read as their text (`RNode.GetAnnotations`,
    // `GetDataMap`): the text go-yaml v3 wrote for the float64 (`9223372036854775808` →
    // `"9.223372036854776e+18"`).
    for path in [
        &["metadata", "labels"][..],
        &["metadata", "annotations"],
        &["data"],
        &["binaryData"],
    ] {
        let Some(map) = node.get_path_mut(path).and_then(Node::as_map_mut) else {
            continue;
        };
        for v in map.values_mut() {
            if let Node::Float(f) = v
                && f.is_finite()
            {
                let text = crate::merge::ssa::value::go_float_v(*f);
                if v.scalar_text().as_deref() != Some(text.as_str()) {
                    let value = std::mem::take(v);
                    *v = Node::Spelled(Box::new(crate::yaml::Spelled { value, text }));
                }
            }
        }
    }
    crate::resource::keep_id_text(node);
    crate::render::metadata::drop_empty_annotations(node);
}

/// [`json6902::apply`] editing the object in place instead of a copy (same errors): on an
/// error the render stops, so the half-patched object is never read.
pub(super) fn json_patch_in_place(
    doc: &mut Node,
    ops: &Node,
    max_growth: usize,
    version: KustomizeVersion,
) -> std::result::Result<(), crate::merge::MergeError> {
    let Node::Seq(list) = ops else {
        // Not a list of operations: `apply` refuses it before touching the object.
        return json6902::apply(&Node::Null, ops).map(drop);
    };
    for (i, op) in list.iter().enumerate() {
        json6902::apply_op_with(doc, op, max_growth, version).map_err(|mut e| {
            e.message = format!("operation {i}: {}", e.message);
            e
        })?;
    }
    Ok(())
}

/// Strategic-merges `patch` into the resource at `i` as kustomize's `Resource.ApplySmPatch`
/// does: the patch takes the resource's apiVersion, and the name, namespace and kind come back
/// unless the patch's options allow changing them; a patch that empties the object deletes it.
pub(super) fn smp_into(
    slots: &mut [Option<Resource>],
    index: &mut Index,
    i: usize,
    patch: &Node,
    p: &Patch,
    schema: &crate::schema::Schema,
) -> std::result::Result<(), crate::merge::MergeError> {
    let Some(slot) = slots.get_mut(i) else {
        return Ok(());
    };
    let Some(r) = slot.as_mut() else {
        return Ok(());
    };
    let (name, namespace, kind) = (
        r.name().to_string(),
        r.namespace().to_string(),
        r.kind().to_string(),
    );
    if p.allow_name_change || p.allow_kind_change {
        r.store_previous_id();
    }
    let gvk = r.gvk();
    // The patch's apiVersion, when it has one, is replaced by the resource's.
    let patch_api_version = patch.as_map().is_some_and(|m| m.contains_key("apiVersion"));
    let resource_api_version = r.node.get("apiVersion");
    let adjusted;
    let (patch, keep): (&Node, &[&str]) = match resource_api_version {
        Some(av) if patch_api_version => match av {
            // A scalar merged over itself leaves the object's value as it is.
            Node::Str(_) | Node::Int(_) | Node::Float(_) | Node::Bool(_) => {
                (patch, &["apiVersion"])
            }
            _ => {
                let mut copy = patch.clone();
                if let Node::Map(m) = &mut copy {
                    m.insert("apiVersion".into(), av.clone());
                }
                adjusted = copy;
                (&adjusted, &[])
            }
        },
        _ => (patch, &[]),
    };
    // The resource's tree moves into the merge (no copy) and the patch is read in place (only
    // what the object takes from it is copied); on an error the render stops, so the emptied
    // slot is never read.
    // A targeted patch takes the object's group, version and kind (`patchCopy.SetGvk` in
    // `PatchTransformerPlugin.transformStrategicMerge`): an object without an apiVersion gets
    // an empty one from it, which kustomize prints as null.
    let empty_api_version = p.flavor == Flavor::Patch
        && p.target.is_some()
        && r.node.get("apiVersion").is_none_or(Node::is_null);
    if !r.json_round_trip {
        drop_empty_nulls(r, schema.kustomize_root(&gvk));
    }
    // Values shared between maps change together (`resource::shared`).
    let shared = Snapshot::take(r);
    let original = std::mem::take(&mut r.node);
    let merged = smp::apply_kustomize(original, patch, schema, &gvk, keep)?;
    if merged.as_map().is_none_or(|m| m.is_empty()) {
        *slot = None;
        return Ok(());
    }
    r.node = merged;
    shared.replay_patch(r, patch);
    if empty_api_version && let Some(m) = r.node.as_map_mut() {
        m.insert("apiVersion".into(), Node::Null);
    }
    if !p.allow_kind_change {
        *r.node.ensure_path(&["kind"]) = Node::str(kind);
    }
    if !p.allow_name_change {
        r.reset_id_field("name", &name);
    }
    if namespace.is_empty() {
        if let Some(Node::Map(m)) = r.node.get_mut("metadata") {
            m.shift_remove("namespace");
        }
    } else {
        r.reset_id_field("namespace", &namespace);
    }
    if p.allow_name_change || p.allow_kind_change {
        let r = &*r;
        index.add(i, r);
    }
    Ok(())
}

/// Removes the fields of `r` whose null was written as nothing (`replicas:`) in its file,
/// wherever kyaml's walker visits them: maps reached through maps and the elements of merged
/// lists. kustomize's strategic merge re-sets every field it walks through `FieldSetter`,
/// which clears a null field, except one whose null was spelled out (`null`, `~`), which
/// `merge2.VisitMap` keeps ("preserve explicitly set null in Dest"). The document model keeps
/// no spelling, so the resource's document is read again marking the empty ones; nothing is
/// read when the object holds no null where the walker goes.
fn drop_empty_nulls(r: &mut Resource, cur: crate::schema::Cursor<'_>) {
    // A resource's empty flow value (`{k: }`) reads as "" (`yaml::parse`, `flow_empty_string`)
    // and is dropped as an empty block value is.
    fn any_null(m: &crate::yaml::Map) -> bool {
        m.values().any(|v| match v {
            Node::Null => true,
            Node::Str(s) if s.is_empty() => true,
            Node::Map(inner) => any_null(inner),
            Node::Seq(items) => items.iter().filter_map(Node::as_map).any(any_null),
            _ => false,
        })
    }
    let Some(Node::Map(m)) = Some(&r.node) else {
        return;
    };
    if !any_null(m) {
        return;
    }
    let Some(origin) = &r.origin else {
        return;
    };
    let Some(text) = origin.file.text.get(origin.offset..) else {
        return;
    };
    let Ok(docs) = crate::yaml::parse::parse_documents_marking_empty_nulls(text) else {
        return;
    };
    let Some(Node::Map(written)) = docs.into_iter().map(|d| d.node).find(|n| !n.is_null()) else {
        return;
    };
    // A `*List` document holds its items: not this object's own text.
    if written
        .get("kind")
        .and_then(Node::as_str)
        .is_some_and(|k| k.ends_with("List") && written.contains_key("items"))
    {
        return;
    }
    if let Node::Map(m) = &mut r.node {
        drop_marked(m, &written, cur);
    }
}

fn drop_marked(
    m: &mut crate::yaml::Map,
    written: &crate::yaml::Map,
    cur: crate::schema::Cursor<'_>,
) {
    let is_mark =
        |v: Option<&Node>| v.and_then(Node::as_str) == Some(crate::yaml::parse::EMPTY_NULL);
    let empty = |v: &Node| v.is_null() || v.as_str() == Some("");
    m.retain(|k, v| !(empty(v) && is_mark(written.get(k))));
    for (k, v) in m.iter_mut() {
        let (sub, meta) = cur.kustomize_field(k);
        match (v, written.get(k)) {
            (Node::Map(inner), Some(Node::Map(w))) => drop_marked(inner, w, sub),
            (Node::Seq(items), Some(Node::Seq(w))) if meta.strategy.merge => {
                let Some(key) = meta.merge_key.as_deref() else {
                    continue;
                };
                let text = |n: &Node| n.get(key).and_then(Node::scalar_text);
                for item in items.iter_mut() {
                    let Some(t) = text(item) else { continue };
                    let twin = w
                        .iter()
                        .rev()
                        .find(|x| text(x).as_deref() == Some(t.as_str()));
                    if let (Node::Map(im), Some(Node::Map(wm))) = (item, twin) {
                        drop_marked(im, wm, sub.items());
                    }
                }
            }
            _ => {}
        }
    }
}
