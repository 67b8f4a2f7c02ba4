//! Secret handling for display: `stringData` folded into `data` as the API server does, and
//! values masked as `kubectl diff` masks them (`Masker` in kubectl `pkg/cmd/diff/diff.go`):
//! equal on both sides `***`, different `*** (before)` / `*** (after)`, one side only `***`.
//! Beyond kubectl, the same masking inside the last-applied annotation of Secrets (which
//! carries the values in clear text) and on pruned Secrets. Display only: never on objects
//! that are written or merged.

use base64::Engine as _;

use crate::live::LAST_APPLIED;
use crate::yaml::{Node, parse};

use crate::yaml::json::{JsonStyle, to_json};

const MASK: &str = "***";
const MASK_BEFORE: &str = "*** (before)";
const MASK_AFTER: &str = "*** (after)";

/// True for a core `v1` Secret (kubectl masks by the merged object's kind).
pub(crate) fn is_secret(node: &Node) -> bool {
    node.str_at(&["kind"]) == Some("Secret")
        && node
            .str_at(&["apiVersion"])
            .is_some_and(|v| !v.contains('/'))
}

/// Folds `stringData` into `data` (base64, overriding) and drops `stringData`, as the API
/// server does when it stores a Secret.
pub(crate) fn fold_string_data(secret: &mut Node) {
    let Some(m) = secret.as_map_mut() else {
        return;
    };
    let Some(Node::Map(string_data)) = m.shift_remove("stringData") else {
        return;
    };
    if string_data.is_empty() {
        return;
    }
    if !matches!(m.get("data"), Some(Node::Map(_))) {
        m.insert("data".into(), Node::empty_map());
    }
    if let Some(Node::Map(data)) = m.get_mut("data") {
        for (k, v) in string_data {
            let text = v.scalar_text().unwrap_or_default();
            let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            data.insert(k, Node::Str(encoded));
        }
    }
}

/// Masks a pair for display; either side may be absent (create, delete).
pub(crate) fn mask_pair(before: Option<&mut Node>, after: Option<&mut Node>) {
    let (mut before, mut after) = (before, after);
    mask_maps(
        before.as_deref_mut().and_then(|n| n.get_mut("data")),
        after.as_deref_mut().and_then(|n| n.get_mut("data")),
    );
    mask_annotation(before, after);
}

/// Masks the values of a Secret's changes found on unmasked objects: every value under
/// `data`, `stringData` or the last-applied annotation (or holding one of them) becomes `***`.
pub(crate) fn mask_changes(changes: &mut [crate::report::Change]) {
    let annotation = format!(".metadata.annotations.{LAST_APPLIED}");
    let sensitive = [".data", ".stringData", annotation.as_str()];
    for c in changes {
        let hit = sensitive
            .iter()
            .any(|s| c.path.starts_with(s) || s.starts_with(c.path.as_str()));
        if hit {
            for v in [&mut c.before, &mut c.after].into_iter().flatten() {
                *v = Node::str(MASK);
            }
        }
    }
}

/// Masks two rendered Secrets for display, `data` and `stringData` each by the Masker rule
/// (a render-to-render diff has no last-applied annotation and nothing folded by a server).
pub(crate) fn mask_rendered_pair(before: Option<&mut Node>, after: Option<&mut Node>) {
    let (mut before, mut after) = (before, after);
    for field in ["data", "stringData"] {
        mask_maps(
            before.as_deref_mut().and_then(|n| n.get_mut(field)),
            after.as_deref_mut().and_then(|n| n.get_mut(field)),
        );
    }
}

/// Replaces each value [`mask_rendered_pair`] would mask in a rendered Secret (every value of
/// its `data` and `stringData` maps) by its SHA-256 (`sha256:HEX` of the value's compact
/// JSON), so that the object can be written where its values must not be — a shard's part of
/// a sharded review (`ply diff --shard I/N --format json`) — and still be masked, paired with
/// another shard's object, exactly as the values themselves: equal values have equal digests.
pub(crate) fn digest_values(secret: &mut Node) {
    use sha2::{Digest, Sha256};
    for field in ["data", "stringData"] {
        let Some(map) = secret.get_mut(field).and_then(Node::as_map_mut) else {
            continue;
        };
        for v in map.values_mut() {
            let json = to_json(v, JsonStyle::COMPACT);
            let digest = Sha256::digest(json.as_bytes());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            *v = Node::Str(format!("sha256:{hex}"));
        }
    }
}

/// The Masker rule on two `data` maps.
fn mask_maps(before: Option<&mut Node>, after: Option<&mut Node>) {
    let before = before.and_then(Node::as_map_mut);
    let after = after.and_then(Node::as_map_mut);
    match (before, after) {
        (Some(b), Some(a)) => {
            for (k, bv) in b.iter_mut() {
                match a.get_mut(k) {
                    Some(av) if av != bv => {
                        *bv = Node::str(MASK_BEFORE);
                        *av = Node::str(MASK_AFTER);
                    }
                    Some(av) => {
                        *bv = Node::str(MASK);
                        *av = Node::str(MASK);
                    }
                    None => *bv = Node::str(MASK),
                }
            }
            for (k, av) in a.iter_mut() {
                if !b.contains_key(k) {
                    *av = Node::str(MASK);
                }
            }
        }
        (Some(only), None) | (None, Some(only)) => {
            for v in only.values_mut() {
                *v = Node::str(MASK);
            }
        }
        (None, None) => {}
    }
}

/// Masks `data` and `stringData` inside the last-applied annotation of both sides, comparing
/// the annotations' values with each other.
fn mask_annotation(before: Option<&mut Node>, after: Option<&mut Node>) {
    fn parsed(n: &Option<&mut Node>) -> Option<Node> {
        let text = n
            .as_ref()?
            .str_at(&["metadata", "annotations", LAST_APPLIED])?;
        match parse::parse_one(text) {
            Ok(v @ Node::Map(_)) => Some(v),
            _ => None,
        }
    }
    let mut b = parsed(&before);
    let mut a = parsed(&after);
    if b.is_none() && a.is_none() {
        return;
    }
    for field in ["data", "stringData"] {
        let bf = b.as_mut().and_then(|n| n.get_mut(field));
        let af = a.as_mut().and_then(|n| n.get_mut(field));
        mask_maps(bf, af);
    }
    for (side, value) in [(before, b), (after, a)] {
        if let (Some(node), Some(value)) = (side, value) {
            if let Some(slot) = node.get_path_mut(&["metadata", "annotations", LAST_APPLIED]) {
                let mut text = to_json(&value, JsonStyle::COMPACT);
                text.push('\n');
                *slot = Node::Str(text);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn p(s: &str) -> Node {
        parse_one(s).unwrap()
    }

    #[test]
    fn digested_values_mask_as_the_values_and_are_not_written() {
        let secret = |data: &str| {
            p(&format!(
                "{{apiVersion: v1, kind: Secret, data: {data}, stringData: {{p: s3cr3t}}, type: Opaque}}"
            ))
        };
        let (before, after) = (
            secret("{same: YQ==, changed: Yg==, gone: Yw==}"),
            secret("{same: YQ==, changed: Zg==, new: ZA==}"),
        );
        let masked = |mut b: Node, mut a: Node| {
            mask_rendered_pair(Some(&mut b), Some(&mut a));
            (b, a)
        };
        let (mut db, mut da) = (before.clone(), after.clone());
        digest_values(&mut db);
        digest_values(&mut da);
        let text = to_json(&db, JsonStyle::COMPACT) + &to_json(&da, JsonStyle::COMPACT);
        for value in ["YQ==", "Yg==", "Yw==", "Zg==", "ZA==", "s3cr3t"] {
            assert!(!text.contains(value), "{value}: {text}");
        }
        assert_eq!(db.get("type"), Some(&Node::str("Opaque")));
        assert_eq!(masked(db, da), masked(before, after));
    }

    #[test]
    fn masker_rule() {
        let mut before =
            p("{apiVersion: v1, kind: Secret, data: {same: YQ==, changed: Yg==, gone: Yw==}}");
        let mut after =
            p("{apiVersion: v1, kind: Secret, data: {same: YQ==, changed: ZA==, new: ZQ==}}");
        mask_pair(Some(&mut before), Some(&mut after));
        assert_eq!(
            before.get("data").unwrap(),
            &p("{same: '***', changed: '*** (before)', gone: '***'}")
        );
        assert_eq!(
            after.get("data").unwrap(),
            &p("{same: '***', changed: '*** (after)', new: '***'}")
        );
    }

    #[test]
    fn one_side_only() {
        let mut after = p("{apiVersion: v1, kind: Secret, data: {a: YQ==}}");
        mask_pair(None, Some(&mut after));
        assert_eq!(after.str_at(&["data", "a"]), Some("***"));
    }

    #[test]
    fn string_data_is_folded() {
        let mut s = p(
            "{apiVersion: v1, kind: Secret, data: {a: YQ==, b: Yg==}, stringData: {b: hello, c: 1}}",
        );
        fold_string_data(&mut s);
        assert_eq!(
            s,
            p("{apiVersion: v1, kind: Secret, data: {a: YQ==, b: aGVsbG8=, c: MQ==}}")
        );
        assert!(is_secret(&s));
        assert!(!is_secret(&p("{apiVersion: example.com/v1, kind: Secret}")));
    }

    #[test]
    fn last_applied_annotation_is_masked() {
        let ann = |v: &str| {
            p(&format!(
                "{{apiVersion: v1, kind: Secret, metadata: {{annotations: {{kubectl.kubernetes.io/last-applied-configuration: '{{\"apiVersion\":\"v1\",\"data\":{{\"k\":\"{v}\"}},\"kind\":\"Secret\",\"stringData\":{{\"s\":\"x\"}}}}'}}}}, data: {{k: {v}}}}}"
            ))
        };
        let mut before = ann("YQ==");
        let mut after = ann("Yg==");
        mask_pair(Some(&mut before), Some(&mut after));
        assert_eq!(
            before.str_at(&["metadata", "annotations", LAST_APPLIED]),
            Some(
                "{\"apiVersion\":\"v1\",\"data\":{\"k\":\"*** (before)\"},\"kind\":\"Secret\",\"stringData\":{\"s\":\"***\"}}\n"
            )
        );
        assert_eq!(
            after.str_at(&["metadata", "annotations", LAST_APPLIED]),
            Some(
                "{\"apiVersion\":\"v1\",\"data\":{\"k\":\"*** (after)\"},\"kind\":\"Secret\",\"stringData\":{\"s\":\"***\"}}\n"
            )
        );
        assert_eq!(after.str_at(&["data", "k"]), Some("*** (after)"));
    }
}
