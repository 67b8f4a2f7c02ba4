//! Phrases several output formats share: the totals lines, an overlay's status note, a value
//! cut to one short line, a change as `path: old → new`, and a conflict explained with its
//! ways out. Plain text, no markup; the format files add theirs.

use std::fmt::Write as _;

use crate::yaml::Node;
use crate::yaml::json::{JsonStyle, to_json};

use super::model::{Action, Change, Conflict, ObjectChange, OverlayReview, Report, Review, Status};

/// Values in review tables and summaries are cut to this many characters.
pub(crate) const VALUE_WIDTH: usize = 60;

/// `3 objects: 1 create, 1 update, …` (a live report: every action, conflicts included).
pub(crate) fn live_totals(report: &Report) -> String {
    let n = report.objects.len();
    let mut parts: Vec<String> = Action::ALL
        .iter()
        .map(|a| format!("{} {}", report.count(*a), a.as_str()))
        .collect();
    let unknown = report.count(Action::Unknown);
    if unknown > 0 {
        parts.push(format!("{unknown} unknown (namespace not in the snapshot)"));
    }
    format!(
        "{n} object{}: {}",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

/// Why an [`Action::Unknown`] object is not compared.
pub(crate) fn unknown_note(o: &ObjectChange) -> String {
    format!(
        "namespace '{}' not in the snapshot: not compared (snapshot it too, e.g. `kubectl get … -n {} -o yaml`, or list namespaces with `kubectl get namespaces -o yaml`)",
        o.id.namespace, o.id.namespace
    )
}

/// `1 overlay, 1 changed: 0 create, …` (a review: overlays, then objects per action).
pub(crate) fn review_totals(r: &Review) -> String {
    let changed = r.overlays.iter().filter(|o| o.changed()).count();
    let n = r.overlays.len();
    let parts: Vec<String> = Action::REVIEWED
        .iter()
        .map(|a| format!("{} {}", r.count(*a), a.as_str()))
        .collect();
    format!(
        "{n} overlay{}, {changed} changed: {}",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

/// What an overlay's status means, in words (`None` for a plain comparison).
pub(crate) fn status_note(o: &OverlayReview) -> Option<String> {
    match &o.status {
        Status::Compared => None,
        Status::Added => {
            Some("new overlay (no kustomization at the base): every object is a creation".into())
        }
        Status::Removed => Some(
            "overlay removed (no kustomization at the head): every object is a deletion".into(),
        ),
        Status::BaseFailed(_) => Some(
            "failed to render at the base and renders now: every object is shown as a creation"
                .into(),
        ),
        Status::HeadFailed(_) => Some("fails to render at the head".into()),
        Status::NotFetched(_) => Some(
            "remote bases not fetched: not compared (run the `ply fetch` below, then review again)"
                .into(),
        ),
    }
}

/// A value as one short line: scalars as text, the rest as compact JSON, cut to
/// [`VALUE_WIDTH`].
pub(crate) fn short(v: Option<&Node>) -> String {
    let text = match v {
        None => return "(none)".into(),
        Some(n) => match n.scalar_text() {
            Some(t) if !matches!(n, Node::Null) => t.to_string(),
            _ => to_json(n, JsonStyle::COMPACT),
        },
    };
    let one_line = text.replace('\n', "\\n");
    if one_line.chars().count() > VALUE_WIDTH {
        let cut: String = one_line.chars().take(VALUE_WIDTH - 1).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// `.data.LOG_LEVEL: info → debug`.
pub(crate) fn change_line(c: &Change) -> String {
    format!(
        "{}: {} → {}",
        c.path,
        short(c.before.as_ref()),
        short(c.after.as_ref())
    )
}

/// `.spec.replicas (owned by "kube-controller-manager")`.
pub(crate) fn owned_path(c: &Conflict) -> String {
    format!("{} (owned by {:?})", c.path, c.manager.name)
}

/// A conflict block in plain text: the message, each field with its owner and both values,
/// and the ways out.
pub(crate) fn conflict_text(o: &ObjectChange) -> String {
    let mut s = format!(
        "conflict: {} — the server-side apply would fail and change nothing\n",
        o.id.display()
    );
    for c in &o.conflicts {
        let _ = writeln!(
            s,
            "  {} is owned by {} ({}{})",
            c.path,
            format_args!("{:?}", c.manager.name),
            c.manager.operation,
            if c.manager.subresource.is_empty() {
                String::new()
            } else {
                format!(", subresource {}", c.manager.subresource)
            }
        );
        let _ = writeln!(s, "    live:    {}", value_text(c.live.as_ref()));
        let _ = writeln!(s, "    desired: {}", value_text(c.desired.as_ref()));
    }
    s.push_str("  to resolve: ");
    s.push_str(&resolutions(&o.conflicts).join("; or "));
    s.push('\n');
    s
}

/// The three ways out of a conflict, in words.
fn resolutions(conflicts: &[Conflict]) -> Vec<String> {
    let paths: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
    let list = paths.join(", ");
    let mut out = vec![
        "re-run with --force-conflicts to take ownership".to_string(),
        format!("remove {list} from the configuration to leave it to its current manager"),
    ];
    let values: Vec<String> = conflicts
        .iter()
        .filter_map(|c| {
            c.live
                .as_ref()
                .map(|v| format!("{} to {}", c.path, value_text(Some(v))))
        })
        .collect();
    if !values.is_empty() {
        out.push(format!(
            "set {} (the live value) to share ownership",
            values.join(", ")
        ));
    }
    out
}

/// A conflict's value as compact JSON, `(absent)` when there is none.
fn value_text(v: Option<&Node>) -> String {
    match v {
        None => "(absent)".into(),
        Some(n) => to_json(n, JsonStyle::COMPACT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_cut_to_one_short_line() {
        let long = Node::str("x".repeat(100));
        assert_eq!(short(Some(&long)).chars().count(), VALUE_WIDTH);
        assert_eq!(short(None), "(none)");
        assert_eq!(short(Some(&Node::str("a\nb"))), "a\\nb");
    }
}
