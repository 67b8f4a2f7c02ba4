//! Renders a diff [`Report`] as text: `unified` (one unified diff per object, via the `similar`
//! crate, with kubectl diff's file names and optional ANSI colours), `summary` (one line per
//! object and totals), `json` (the stable schema of docs/diff.md) and `markdown` (a summary
//! table and one collapsible section per changed object, kept under GitHub's comment limit).
//! Returns strings; the caller writes them.

use std::fmt::Write as _;

use similar::TextDiff;

use crate::yaml::{Map, Node};

use super::{Action, Conflict, OFFLINE_NOTE, ObjectDiff, Report, conflict_message};
use crate::yaml::json::{JsonStyle, to_json};

/// Markdown output stays below this many characters (GitHub's comment limit is 65,536).
pub const MARKDOWN_LIMIT: usize = 65_000;

/// The unified diff of one object (empty when unchanged): a `diff -u -N` line naming both
/// sides, `---`/`+++` headers, hunks with three lines of context.
pub fn object_unified(o: &ObjectDiff) -> String {
    if o.before == o.after {
        return String::new();
    }
    let old_name = format!(
        "live/{}",
        o.renamed_from.as_ref().unwrap_or(&o.id).file_name()
    );
    let new_name = format!("merged/{}", o.id.file_name());
    unified_text(&old_name, &new_name, &o.before, &o.after)
}

/// A `diff -u -N` of two texts under two names, three lines of context.
pub fn unified_text(old_name: &str, new_name: &str, before: &str, after: &str) -> String {
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
pub fn colorize(text: &str) -> String {
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

/// `--format unified`: every changed object's diff, and each conflict explained.
pub fn unified(report: &Report, color: bool) -> String {
    let mut out = String::new();
    for o in &report.objects {
        if o.action == Action::Conflict {
            out.push_str(&conflict_text(o));
            continue;
        }
        let d = object_unified(o);
        if color {
            out.push_str(&colorize(&d));
        } else {
            out.push_str(&d);
        }
    }
    out
}

/// A conflict block in plain text: the message, each field with its owner and both values,
/// and the ways out.
fn conflict_text(o: &ObjectDiff) -> String {
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

fn value_text(v: Option<&Node>) -> String {
    match v {
        None => "(absent)".into(),
        Some(n) => to_json(n, JsonStyle::COMPACT),
    }
}

/// `--format summary`.
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    for o in &report.objects {
        let _ = write!(out, "{:<10} {}", o.action.as_str(), o.id.display());
        if let Some(from) = &o.renamed_from {
            let _ = write!(out, " (from {})", from.name);
        }
        if o.action == Action::Conflict {
            let parts: Vec<String> = o
                .conflicts
                .iter()
                .map(|c| format!("{} (owned by {:?})", c.path, c.manager.name))
                .collect();
            let _ = write!(out, ": {}", parts.join(", "));
        } else if !o.changed_paths.is_empty() {
            let _ = write!(out, ": {}", o.changed_paths.join(", "));
        }
        out.push('\n');
    }
    if !report.objects.is_empty() {
        out.push('\n');
    }
    out.push_str(&totals_line(report));
    out.push('\n');
    out
}

fn totals_line(report: &Report) -> String {
    let n = report.objects.len();
    let parts: Vec<String> = Action::ALL
        .iter()
        .map(|a| format!("{} {}", report.count(*a), a.as_str()))
        .collect();
    format!(
        "{n} object{}: {}",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

/// `--format json`: the schema documented in docs/diff.md (`schemaVersion` 1).
pub fn json_report(report: &Report) -> String {
    let mut root = Map::default();
    root.insert("schemaVersion".into(), Node::Int(1));
    root.insert(
        "mode".into(),
        Node::str(if report.server_side {
            "server-side"
        } else {
            "client-side"
        }),
    );
    root.insert(
        "fieldManager".into(),
        Node::str(report.field_manager.clone()),
    );
    root.insert("exitCode".into(), Node::Int(i128::from(report.exit_code())));
    let mut totals = Map::default();
    for a in Action::ALL {
        totals.insert(a.as_str().into(), Node::Int(report.count(a) as i128));
    }
    root.insert("totals".into(), Node::Map(totals));
    let objects = report
        .objects
        .iter()
        .map(|o| {
            let mut m = Map::default();
            m.insert("action".into(), Node::str(o.action.as_str()));
            m.insert("apiVersion".into(), Node::str(o.id.api_version.clone()));
            m.insert("kind".into(), Node::str(o.id.kind.clone()));
            m.insert("namespace".into(), Node::str(o.id.namespace.clone()));
            m.insert("name".into(), Node::str(o.id.name.clone()));
            m.insert(
                "renamedFrom".into(),
                o.renamed_from
                    .as_ref()
                    .map_or(Node::Null, |f| Node::str(f.name.clone())),
            );
            m.insert(
                "changedPaths".into(),
                Node::Seq(
                    o.changed_paths
                        .iter()
                        .map(|p| Node::str(p.clone()))
                        .collect(),
                ),
            );
            let conflicts = o
                .conflicts
                .iter()
                .map(|c| {
                    let mut cm = Map::default();
                    cm.insert("path".into(), Node::str(c.path.clone()));
                    cm.insert("manager".into(), Node::str(c.manager.name.clone()));
                    cm.insert("operation".into(), Node::str(c.manager.operation.clone()));
                    cm.insert(
                        "subresource".into(),
                        Node::str(c.manager.subresource.clone()),
                    );
                    cm.insert(
                        "apiVersion".into(),
                        Node::str(c.manager.api_version.clone()),
                    );
                    cm.insert("live".into(), c.live.clone().unwrap_or(Node::Null));
                    cm.insert("desired".into(), c.desired.clone().unwrap_or(Node::Null));
                    Node::Map(cm)
                })
                .collect();
            m.insert("conflicts".into(), Node::Seq(conflicts));
            m.insert(
                "message".into(),
                if o.conflicts.is_empty() {
                    Node::Null
                } else {
                    Node::str(conflict_message(&o.conflicts))
                },
            );
            Node::Map(m)
        })
        .collect();
    root.insert("objects".into(), Node::Seq(objects));
    root.insert("notes".into(), Node::Seq(vec![Node::str(OFFLINE_NOTE)]));
    let mut text = to_json(&Node::Map(root), JsonStyle::PRETTY);
    text.push('\n');
    text
}

/// `--format markdown`: for a pull-request comment.
pub fn markdown(report: &Report) -> String {
    let mode = if report.server_side {
        "server-side apply"
    } else {
        "client-side apply"
    };
    let changed: Vec<&ObjectDiff> = report
        .objects
        .iter()
        .filter(|o| o.action != Action::Unchanged)
        .collect();
    let mut head = format!("### ply diff ({mode})\n\n{}\n\n", totals_line(report));
    if changed.is_empty() {
        head.push_str("No changes.\n\n");
    } else {
        head.push_str("| Action | Object | Changed fields |\n|---|---|---|\n");
    }
    let footer = format!("> {OFFLINE_NOTE}\n");
    // Room kept for the truncation note and the footer.
    let reserve = footer.chars().count() + 400;
    let mut out = String::new();
    let mut used = 0usize;
    let mut truncated = false;
    let push = |out: &mut String, used: &mut usize, piece: &str| -> bool {
        let n = piece.chars().count();
        if *used + n + reserve > MARKDOWN_LIMIT {
            return false;
        }
        out.push_str(piece);
        *used += n;
        true
    };
    push(&mut out, &mut used, &head);
    let mut rows_shown = 0;
    for o in &changed {
        let row = table_row(o);
        if !push(&mut out, &mut used, &row) {
            truncated = true;
            break;
        }
        rows_shown += 1;
    }
    if !changed.is_empty() {
        push(&mut out, &mut used, "\n");
    }
    let mut details_shown = 0;
    if !truncated {
        for o in &changed {
            let section = details(o, None);
            if push(&mut out, &mut used, &section) {
                details_shown += 1;
                continue;
            }
            // Cut this one object's diff to the room left, then stop.
            let room = MARKDOWN_LIMIT.saturating_sub(used + reserve + 300);
            if room > 500 {
                let section = details(o, Some(room));
                if push(&mut out, &mut used, &section) {
                    details_shown += 1;
                }
            }
            truncated = true;
            break;
        }
    }
    if truncated {
        let _ = write!(
            out,
            "**Output truncated** to stay under GitHub's 65,536-character comment limit: {} of {} changed objects are listed and {} shown in detail. Run `ply diff` locally (or with `--format unified`) for the full diff.\n\n",
            rows_shown,
            changed.len(),
            details_shown
        );
    }
    out.push_str(&footer);
    out
}

fn table_row(o: &ObjectDiff) -> String {
    let fields: Vec<String> = if o.action == Action::Conflict {
        o.conflicts
            .iter()
            .map(|c| format!("{} (owned by {:?})", c.path, c.manager.name))
            .collect()
    } else {
        o.changed_paths.clone()
    };
    let shown: Vec<String> = fields.iter().take(5).map(|f| code(f)).collect();
    let mut cell = shown.join(", ");
    if cell.is_empty() {
        cell = match o.action {
            Action::Create => "*new object*".into(),
            Action::Delete => "*pruned*".into(),
            _ => String::new(),
        };
    }
    if fields.len() > 5 {
        let _ = write!(cell, " and {} more", fields.len() - 5);
    }
    let mut object = code(&o.id.display());
    if let Some(from) = &o.renamed_from {
        let _ = write!(object, " (from {})", code(&from.name));
    }
    format!("| {} | {} | {} |\n", o.action.as_str(), object, cell)
}

/// Inline code for a table cell: backticks that hold, pipes escaped.
pub fn code(s: &str) -> String {
    let s = s.replace('|', "\\|");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// One collapsible section; `room` cuts the diff body to that many characters.
fn details(o: &ObjectDiff, room: Option<usize>) -> String {
    let mut body = if o.action == Action::Conflict {
        conflict_text(o)
    } else {
        object_unified(o)
    };
    let mut cut = false;
    if let Some(room) = room {
        if body.chars().count() > room {
            let mut n = 0;
            let mut end = 0;
            for line in body.split_inclusive('\n') {
                n += line.chars().count();
                if n > room {
                    break;
                }
                end += line.len();
            }
            body.truncate(end);
            cut = true;
        }
    }
    let fence = fence_for(&body);
    let lang = if o.action == Action::Conflict {
        "text"
    } else {
        "diff"
    };
    let mut s = format!(
        "<details><summary><b>{}</b> <code>{}</code></summary>\n\n{fence}{lang}\n{body}{fence}\n",
        o.action.as_str(),
        html_escape(&o.id.display())
    );
    if cut {
        s.push_str("\n*(this diff is cut short)*\n");
    }
    s.push_str("\n</details>\n\n");
    s
}

/// A backtick fence longer than any run of backticks in the body (a diff line can open with a
/// space or a sign before a fence of its own).
pub fn fence_for(body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat(longest.max(2) + 1)
}

pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::ObjectId;

    fn object(name: &str, before: &str, after: &str) -> ObjectDiff {
        ObjectDiff {
            action: Action::Update,
            id: ObjectId {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "default".into(),
                name: name.into(),
            },
            renamed_from: None,
            before: before.into(),
            after: after.into(),
            changed_paths: vec![".data.a|b".into()],
            conflicts: Vec::new(),
            predicted: None,
        }
    }

    fn report(objects: Vec<ObjectDiff>) -> Report {
        Report {
            server_side: false,
            field_manager: "kubectl-client-side-apply".into(),
            objects,
        }
    }

    #[test]
    fn unified_names_objects_like_kubectl_diff() {
        let r = report(vec![object("c", "a: 1\n", "a: 2\n")]);
        assert_eq!(
            unified(&r, false),
            "diff -u -N live/v1.ConfigMap.default.c merged/v1.ConfigMap.default.c\n--- live/v1.ConfigMap.default.c\n+++ merged/v1.ConfigMap.default.c\n@@ -1 +1 @@\n-a: 1\n+a: 2\n"
        );
        assert!(unified(&r, true).contains("\x1b[31m-a: 1\x1b[0m\n"));
    }

    #[test]
    fn markdown_escapes_and_fences() {
        let r = report(vec![object("c", "a: |\n  ```\n", "a: 2\n")]);
        let md = markdown(&r);
        assert!(md.contains("`.data.a\\|b`"), "{md}");
        assert!(md.contains("````diff\n"), "{md}");
        assert!(md.ends_with(&format!("> {OFFLINE_NOTE}\n")));
    }

    #[test]
    fn markdown_stays_under_the_comment_limit() {
        let big: String = (0..4000).map(|i| format!("k{i}: value-{i}\n")).collect();
        let objects = (0..20)
            .map(|i| object(&format!("c{i}"), "", &big))
            .collect();
        let md = markdown(&report(objects));
        assert!(
            md.chars().count() < MARKDOWN_LIMIT,
            "{}",
            md.chars().count()
        );
        assert!(md.contains("**Output truncated**"));
        assert!(
            md.contains("20 of 20 changed objects are listed and 1 shown in detail"),
            "{}",
            &md[md.len() - 600..]
        );
        // Every opened section is closed.
        assert_eq!(
            md.matches("<details>").count(),
            md.matches("</details>").count()
        );
    }
}
