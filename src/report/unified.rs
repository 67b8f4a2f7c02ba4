//! `--format unified`: one `diff -u -N` per changed object (the `similar` crate, three lines
//! of context, kubectl diff's file names, optional ANSI colours). A live report names its
//! sides `live/` and `merged/` and explains each conflict; a review names them
//! `base/<overlay>/` and `head/<overlay>/` and opens each changed overlay with a
//! `# overlay PATH` line. Returns strings; the caller writes them.

use std::fmt::Write as _;

use similar::TextDiff;

use super::model::{Action, ObjectChange, Report, Review, Status};
use super::text::{broken_before_heading, conflict_text, failure_line, status_note};

/// The unified diff of one object (empty when both sides read the same), its old side named
/// `<old_dir>/<file>` (the replaced object's file for a rename) and its new side
/// `<new_dir>/<file>`.
pub(crate) fn object_diff(o: &ObjectChange, old_dir: &str, new_dir: &str) -> String {
    if o.before == o.after {
        return String::new();
    }
    let old = o.renamed_from.as_ref().unwrap_or(&o.id).file_name();
    unified_text(
        &format!("{old_dir}/{old}"),
        &format!("{new_dir}/{}", o.id.file_name()),
        &o.before,
        &o.after,
    )
}

/// A live object's diff: `live/<file>` → `merged/<file>`.
pub(crate) fn live_object(o: &ObjectChange) -> String {
    object_diff(o, "live", "merged")
}

/// A reviewed object's diff: `base/<overlay>/<file>` → `head/<overlay>/<file>`.
/// A moved object's base side is named by the overlay it moved from.
pub(crate) fn review_object(overlay: &str, o: &ObjectChange) -> String {
    if let Some(diff) = &o.stored_diff {
        return diff.clone();
    }
    let from = o.moved_from.as_deref().unwrap_or(overlay);
    object_diff(o, &format!("base/{from}"), &format!("head/{overlay}"))
}

/// A `diff -u -N` of two texts under two names, three lines of context.
pub(crate) fn unified_text(old_name: &str, new_name: &str, before: &str, after: &str) -> String {
    let diff = TextDiff::from_lines(before, after);
    let mut out = format!("diff -u -N {old_name} {new_name}\n");
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string();
    out.push_str(&body);
    out
}

/// ANSI colours for a unified diff: bold headers, cyan hunk lines, red removals, green
/// additions.
pub(crate) fn colorize(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut header_lines = 0;
    for line in text.split_inclusive('\n') {
        let (content, nl) = match line.strip_suffix('\n') {
            Some(c) => (c, "\n"),
            None => (line, ""),
        };
        let code = if content.starts_with("diff -u -N ") {
            header_lines = 2;
            "1"
        } else if header_lines > 0 {
            header_lines -= 1;
            "1"
        } else if content.starts_with("@@") {
            "36"
        } else if content.starts_with('-') {
            "31"
        } else if content.starts_with('+') {
            "32"
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(line);
        } else {
            let _ = write!(out, "\x1b[{code}m{content}\x1b[0m{nl}");
        }
    }
    out
}

fn painted(d: String, color: bool) -> String {
    if color { colorize(&d) } else { d }
}

/// A live report: every changed object's diff, and each conflict explained (never coloured).
pub fn live(report: &Report, color: bool) -> String {
    let mut out = String::new();
    for o in &report.objects {
        if o.action == Action::Conflict {
            out.push_str(&conflict_text(o));
            continue;
        }
        if o.action == Action::Unknown {
            let _ = writeln!(
                out,
                "# {}: {}",
                o.id.display(),
                super::text::unknown_note(o)
            );
            continue;
        }
        out.push_str(&painted(live_object(o), color));
    }
    out
}

/// A review: each changed overlay's heading (its status note and error as `#` lines), then
/// its objects' diffs.
pub(crate) fn review(r: &Review, color: bool) -> String {
    let mut out = String::new();
    for o in &r.overlays {
        if !o.changed() {
            continue;
        }
        let _ = writeln!(out, "# overlay {}", o.name);
        if let Some(note) = status_note(o) {
            let _ = writeln!(out, "# {note}");
        }
        if let Status::HeadFailed(f)
        | Status::NotFetched(f)
        | Status::NotReviewed(f)
        | Status::NotRendered(f) = &o.status
        {
            for line in f.text.lines() {
                let _ = writeln!(out, "# {line}");
            }
        }
        for obj in &o.objects {
            out.push_str(&painted(review_object(&o.name, obj), color));
        }
    }
    let broken = r.broken_before();
    if !broken.is_empty() {
        let _ = writeln!(out, "# {}:", broken_before_heading(r));
        for (name, f) in broken {
            let _ = writeln!(out, "#   {name}: {}", failure_line(f));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::ObjectId;

    fn object(before: &str, after: &str) -> ObjectChange {
        ObjectChange {
            action: Action::Update,
            id: ObjectId {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "default".into(),
                name: "c".into(),
            },
            renamed_from: None,
            moved_from: None,
            before: before.into(),
            after: after.into(),
            changes: Vec::new(),
            conflicts: Vec::new(),
            predicted: None,
            stored_diff: None,
        }
    }

    #[test]
    fn names_objects_like_kubectl_diff() {
        let r = Report {
            server_side: false,
            field_manager: "kubectl-client-side-apply".into(),
            objects: vec![object("a: 1\n", "a: 2\n")],
        };
        assert_eq!(
            live(&r, false),
            "diff -u -N live/v1.ConfigMap.default.c merged/v1.ConfigMap.default.c\n--- live/v1.ConfigMap.default.c\n+++ merged/v1.ConfigMap.default.c\n@@ -1 +1 @@\n-a: 1\n+a: 2\n"
        );
        assert!(live(&r, true).contains("\x1b[31m-a: 1\x1b[0m\n"));
        assert!(review_object("o/p", &r.objects[0]).starts_with(
            "diff -u -N base/o/p/v1.ConfigMap.default.c head/o/p/v1.ConfigMap.default.c\n"
        ));
    }
}
