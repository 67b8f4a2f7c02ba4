//! Server-managed noise hidden from the displayed diff: `metadata.managedFields` (unless asked
//! for), `resourceVersion`, `generation`, `uid`, `creationTimestamp`, and `status` when the
//! apply leaves it as it is. Display only: the predicted objects keep all of it.

use crate::yaml::Node;

use super::engine::values_equal;

/// Metadata fields the server writes and an apply never sets.
const SERVER_METADATA: [&str; 4] = ["resourceVersion", "generation", "uid", "creationTimestamp"];

/// Strips noise from one object shown alone (a create or a delete).
pub(crate) fn strip_one(node: &mut Node, show_managed_fields: bool) {
    strip_metadata(node, show_managed_fields);
}

/// Strips noise from both sides of a pair; `status` goes only when it is equal on both.
pub(crate) fn strip_pair(live: &mut Node, merged: &mut Node, show_managed_fields: bool) {
    strip_metadata(live, show_managed_fields);
    strip_metadata(merged, show_managed_fields);
    let same_status = match (live.get("status"), merged.get("status")) {
        (Some(a), Some(b)) => values_equal(a, b),
        _ => false,
    };
    if same_status {
        for n in [live, merged] {
            if let Some(m) = n.as_map_mut() {
                m.shift_remove("status");
            }
        }
    }
}

fn strip_metadata(node: &mut Node, show_managed_fields: bool) {
    let Some(meta) = node.get_mut("metadata").and_then(Node::as_map_mut) else {
        return;
    };
    for f in SERVER_METADATA {
        meta.shift_remove(f);
    }
    if !show_managed_fields {
        meta.shift_remove("managedFields");
    }
}

/// What the last-applied annotation shows on both sides of a pair, unless
/// `--show-last-applied`: its one-line JSON repeats every change of the object, and would
/// dominate a review comment.
pub(crate) const LAST_APPLIED_HIDDEN: &str = "(hidden)";

/// The one line that says the annotation changed (a YAML comment at the end of the merged
/// side).
pub(crate) const LAST_APPLIED_UPDATED: &str = "# last-applied configuration updated\n";

/// Hides the last-applied annotation of both sides of a pair; true when it differed.
pub(crate) fn quiet_last_applied(live: &mut Node, merged: &mut Node) -> bool {
    let path = ["metadata", "annotations", crate::live::LAST_APPLIED];
    let differs = match (live.get_path(&path), merged.get_path(&path)) {
        (Some(a), Some(b)) => !values_equal(a, b),
        (None, None) => false,
        _ => true,
    };
    for side in [live, merged] {
        if let Some(slot) = side.get_path_mut(&path) {
            *slot = Node::str(LAST_APPLIED_HIDDEN);
        }
    }
    differs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn p(s: &str) -> Node {
        parse_one(s).unwrap()
    }

    #[test]
    fn hides_server_fields_and_equal_status() {
        let mut live = p(
            "{metadata: {name: a, uid: u, resourceVersion: '1', generation: 2, creationTimestamp: t, managedFields: [{manager: m}]}, spec: {x: 1}, status: {ready: 1}}",
        );
        let mut merged = live.clone();
        strip_pair(&mut live, &mut merged, false);
        assert_eq!(live, p("{metadata: {name: a}, spec: {x: 1}}"));
        assert_eq!(merged, live);
    }

    #[test]
    fn keeps_changed_status_and_managed_fields_on_request() {
        let mut live =
            p("{metadata: {name: a, managedFields: [{manager: m}]}, status: {ready: 1}}");
        let mut merged =
            p("{metadata: {name: a, managedFields: [{manager: m}]}, status: {ready: 2}}");
        strip_pair(&mut live, &mut merged, true);
        assert_eq!(
            live,
            p("{metadata: {name: a, managedFields: [{manager: m}]}, status: {ready: 1}}")
        );
        assert!(merged.get("status").is_some());
    }
}
