//! Phrases several output formats share: the totals lines, an overlay's status note, a value
//! cut to one short line, a change as `path: old → new`, and a conflict explained with its
//! ways out. Plain text, no markup; the format files add theirs.

use std::fmt::Write as _;

use crate::yaml::Node;
use crate::yaml::json::{JsonStyle, to_json};

use super::model::{
    Action, Change, Conflict, FailOn, Failure, ObjectChange, OverlayReview, Report, Review, Status,
};

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
    let parts: Vec<String> = r
        .actions()
        .iter()
        .map(|a| format!("{} {}", r.count(*a), a.as_str()))
        .collect();
    let mut s = format!(
        "{n} overlay{}, {changed} changed: {}",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    );
    let broken = r.broken_before().len();
    if broken > 0 {
        let _ = write!(s, "; {broken} broken before this change");
    }
    let unreviewed = r.not_reviewed().len();
    if unreviewed > 0 {
        let _ = write!(s, "; {}", not_reviewed_line(unreviewed));
    }
    s
}

/// `2 overlays not reviewed: they read changed files and fail at both sides`.
pub(crate) fn not_reviewed_line(n: usize) -> String {
    if n == 1 {
        "1 overlay not reviewed: it reads changed files and fails at both sides".into()
    } else {
        format!("{n} overlays not reviewed: they read changed files and fail at both sides")
    }
}

/// The heading of the section of overlays broken before the change.
pub(crate) fn broken_before_heading(r: &Review) -> String {
    let n = r.broken_before().len();
    let error = match r.fail_on {
        FailOn::NewErrors => "not an error of this change",
        FailOn::AnyError => "an error with --fail-on=any-error",
        FailOn::NotReviewed => "not an error of this change",
    };
    format!(
        "{n} overlay{} broken before this change (the same failure at both sides; {error})",
        if n == 1 { "" } else { "s" }
    )
}

/// A failure on one line, cut to [`FAILURE_WIDTH`] characters.
pub(crate) fn failure_line(f: &Failure) -> String {
    let line = f.one_line().replace('\n', " ");
    if line.chars().count() > FAILURE_WIDTH {
        let cut: String = line.chars().take(FAILURE_WIDTH - 1).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// What a set of failures were, by the diagnostic's kind, most first: `16 need \`ply
/// fetch\`, 1 missing file` (`ply::remote`: a remote base or file not in the cache;
/// `ply::not-found`: a missing file; any other kind by its code).
pub(crate) fn failure_kinds<'a>(codes: impl Iterator<Item = &'a str>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for c in codes {
        let what = match c {
            "ply::remote" | "ply::not-fetched" => "need `ply fetch`",
            "ply::not-found" => "missing file",
            other => other,
        };
        match counts.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => counts.push((what, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let parts: Vec<String> = counts
        .iter()
        .map(|(what, n)| {
            if *what == "missing file" && *n > 1 {
                format!("{n} missing files")
            } else {
                format!("{n} {what}")
            }
        })
        .collect();
    parts.join(", ")
}

/// `48 rendered, 17 failed (16 need \`ply fetch\`, 1 missing file)`, or `48 rendered`.
pub(crate) fn rendered_line(rendered: usize, failed: &[&str]) -> String {
    if failed.is_empty() {
        return format!("{rendered} rendered");
    }
    format!(
        "{rendered} rendered, {} failed ({})",
        failed.len(),
        failure_kinds(failed.iter().copied())
    )
}

/// A review's account of its overlays, for stderr: `65 overlays: 3 changed, 45 without
/// changes, 17 broken before this change, 0 broken by it, 0 fixed by it (16 need \`ply
/// fetch\`, 1 missing file)`; the kinds are those of the failures at the head.
pub(crate) fn review_account(r: &Review) -> String {
    let n = r.overlays.len();
    let by = |f: fn(&Status) -> bool| r.overlays.iter().filter(|o| f(&o.status)).count();
    let before = by(|s| matches!(s, Status::BrokenBefore(_)));
    let broken = by(|s| matches!(s, Status::HeadFailed(_)));
    let fixed = by(|s| matches!(s, Status::BaseFailed(_)));
    let unreviewed = by(|s| matches!(s, Status::NotReviewed(_)));
    let changed = r
        .overlays
        .iter()
        .filter(|o| {
            o.changed() && !matches!(o.status, Status::HeadFailed(_) | Status::NotReviewed(_))
        })
        .count();
    let unchanged = r.overlays.iter().filter(|o| o.no_changes()).count();
    let mut s = format!(
        "{n} overlay{}: {changed} changed, {unchanged} without changes, {before} broken before this change, {broken} broken by it, {fixed} fixed by it",
        if n == 1 { "" } else { "s" }
    );
    if unreviewed > 0 {
        let _ = write!(s, ", {unreviewed} not reviewed");
    }
    let failed: Vec<&str> = r
        .overlays
        .iter()
        .filter_map(|o| match &o.status {
            Status::BrokenBefore(f) | Status::HeadFailed(f) | Status::NotReviewed(f) => {
                Some(f.code.as_str())
            }
            _ => None,
        })
        .collect();
    if !failed.is_empty() {
        let _ = write!(s, " ({})", failure_kinds(failed.into_iter()));
    }
    s
}

/// Lines of the broken-before section are cut to this many characters.
pub(crate) const FAILURE_WIDTH: usize = 240;

/// What an overlay's status means, in words (`None` for a plain comparison).
pub(crate) fn status_note(o: &OverlayReview) -> Option<String> {
    // A GitOps target (`flux:…`, `argo:…`) is declared, not a kustomization directory.
    let gitops = o.name.starts_with("flux:") || o.name.starts_with("argo:");
    let (new, removed) = match gitops {
        true => (
            "new target (not declared at the base)",
            "target removed (not declared at the head)",
        ),
        false => (
            "new overlay (no kustomization at the base)",
            "overlay removed (no kustomization at the head)",
        ),
    };
    match &o.status {
        Status::Compared => None,
        Status::Added if o.count(Action::Move) > 0 => Some(format!(
            "{new}: every object is a creation, or a move from the overlay that rendered it at the base"
        )),
        Status::Added => Some(format!("{new}: every object is a creation")),
        Status::Removed if o.moved_out > 0 => Some(format!(
            "{removed}: {} of its objects moved to another overlay (shown there as moves); the others are deletions",
            o.moved_out
        )),
        Status::Removed => Some(format!("{removed}: every object is a deletion")),
        Status::BaseFailed(_) => Some(
            "fixed by this change: it failed to render at the base and renders now; every object is shown as a creation"
                .into(),
        ),
        Status::HeadFailed(_) => {
            Some("broken by this change: fails to render at the head".into())
        }
        Status::BrokenBefore(_) => Some(
            "broken before this change: fails with the same diagnostic at both sides".into(),
        ),
        Status::NotReviewed(_) => Some(
            "not reviewed: it reads a file this change modifies and fails to render at both sides, so what the change does to it cannot be shown"
                .into(),
        ),
        Status::NotRendered(_) => Some(
            "not rendered: what its controller applies cannot be shown here, so this review cannot say whether it changes"
                .into(),
        ),
        Status::NotFetched(_) => Some(
            "remote bases not fetched: not compared (run the `ply fetch` below, then review again)"
                .into(),
        ),
    }
}

/// A value as one line of text (`(none)` when absent).
fn one_line(v: Option<&Node>) -> String {
    let text = match v {
        None => return "(none)".into(),
        Some(n) => match n.scalar_text() {
            Some(t) if !matches!(n, Node::Null) => t.to_string(),
            _ => to_json(n, JsonStyle::COMPACT),
        },
    };
    text.replace('\n', "\\n")
}

/// A value cut to one short line.
#[cfg(test)]
fn short(v: Option<&Node>) -> String {
    window(&one_line(v), 0)
}

/// Characters kept before the first difference when a long value is cut.
const CONTEXT: usize = 20;

/// The two sides of a change as short lines that show where they differ: a long value is cut
/// around the first character that differs (with `…` where text is left out), never at it
/// (`"--level=info …"` → `"--level=debug …"`, not `"--level=i…"` → `"--level=d…"`).
pub(crate) fn short_pair(before: Option<&Node>, after: Option<&Node>) -> (String, String) {
    let (b, a) = (one_line(before), one_line(after));
    let first = if before.is_some() && after.is_some() {
        b.chars().zip(a.chars()).take_while(|(x, y)| x == y).count()
    } else {
        0
    };
    (window(&b, first), window(&a, first))
}

/// At most [`VALUE_WIDTH`] characters of `s`, showing the one at `first` with [`CONTEXT`]
/// characters before it where the value is longer.
fn window(s: &str, first: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    if n <= VALUE_WIDTH {
        return s.to_string();
    }
    // The window starts CONTEXT characters before the difference, and never so late that it
    // ends short of the value's end.
    let start = first.saturating_sub(CONTEXT).min(n - (VALUE_WIDTH - 1));
    let mut out = String::new();
    let mut room = VALUE_WIDTH;
    if start > 0 {
        out.push('…');
        room -= 1;
    }
    let end = start + room;
    if end >= n {
        out.extend(&chars[start..]);
    } else {
        out.extend(&chars[start..end - 1]);
        out.push('…');
    }
    out
}

/// Whether a change's path is an image reference (a container's `image`, an image volume's
/// `reference`): shown whole, never cut.
pub(crate) fn is_image_path(path: &str) -> bool {
    path.ends_with(".image") || path.ends_with(".image.reference")
}

/// The two sides of a change as table text: an image reference whole (cutting one hides the
/// tag or the registry that changed), any other value as [`short_pair`] gives it.
pub(crate) fn short_change(c: &Change) -> (String, String) {
    let image = |n: Option<&Node>| n.is_none_or(|n| n.as_str().is_some());
    if is_image_path(&c.path) && image(c.before.as_ref()) && image(c.after.as_ref()) {
        return (one_line(c.before.as_ref()), one_line(c.after.as_ref()));
    }
    short_pair(c.before.as_ref(), c.after.as_ref())
}

/// Text escaped for HTML content and attribute values (the HTML report, and the causes it
/// links).
pub(crate) fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `.data.LOG_LEVEL: info → debug`.
pub(crate) fn change_line(c: &Change) -> String {
    let (before, after) = short_change(c);
    format!("{}: {before} → {after}", c.path)
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

    #[test]
    fn long_values_are_cut_around_the_first_difference() {
        let arg = |level: &str| {
            Node::str(format!(
                "--log-format=json --port=9898 --level={level} --random-delay=false --random-error=false"
            ))
        };
        let (b, a) = short_pair(Some(&arg("info")), Some(&arg("debug")));
        assert!(
            b.contains("--level=info") && a.contains("--level=debug"),
            "{b} / {a}"
        );
        assert!(b.starts_with('…') && b.ends_with('…'), "{b}");
        assert!(b.chars().count() <= VALUE_WIDTH && a.chars().count() <= VALUE_WIDTH);
        // A difference near the end: the window ends at the value's end.
        let tail = |c: char| Node::str(format!("{}{c}", "x".repeat(100)));
        let (b, a) = short_pair(Some(&tail('1')), Some(&tail('2')));
        assert!(b.ends_with('1') && a.ends_with('2'), "{b} / {a}");
        assert_eq!(b.chars().count(), VALUE_WIDTH);
        // Short values are whole; an absent side is `(none)`.
        assert_eq!(
            short_pair(None, Some(&Node::str("v"))),
            ("(none)".to_string(), "v".to_string())
        );
    }

    #[test]
    fn rendered_lines_count_failures_by_kind() {
        let mut codes = vec!["ply::remote"; 16];
        codes.push("ply::not-found");
        assert_eq!(
            rendered_line(48, &codes),
            "48 rendered, 17 failed (16 need `ply fetch`, 1 missing file)"
        );
        assert_eq!(rendered_line(3, &[]), "3 rendered");
        assert_eq!(
            rendered_line(0, &["ply::patch", "ply::not-found", "ply::not-found"]),
            "0 rendered, 3 failed (2 missing files, 1 ply::patch)"
        );
    }
}
