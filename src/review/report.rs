//! A [`Review`] as text for reviewers: `unified` (one diff per changed object, grouped by
//! overlay), `summary` (a table of counts per overlay, then each change with its old and new
//! value), `json` (schema below, `schemaVersion` 1) and `markdown` (for a pull-request
//! comment: a hidden marker, a summary table, each overlay under its own heading, and diffs in
//! collapsible sections within one size budget). Returns strings; the caller writes them.

use std::fmt::Write as _;

use crate::diff::Action;
use crate::diff::format::{code, colorize, fence_for, html_escape, unified_text};
use crate::diff::paths::Change;
use crate::yaml::json::{JsonStyle, to_json};
use crate::yaml::{Map, Node};

use super::{Object, OverlayReview, Review, Status};

/// The default size budget of a Markdown report, in characters (GitHub refuses comments over
/// 65,536).
pub const DEFAULT_BUDGET: usize = 65_000;

/// Values in tables are cut to this many characters.
const VALUE_WIDTH: usize = 60;

/// Actions counted per overlay, in table order.
const COUNTED: [Action; 5] = [
    Action::Create,
    Action::Update,
    Action::Rename,
    Action::Delete,
    Action::Unchanged,
];

/// The hidden marker a CI job finds its own comment by.
pub fn marker(title: &str) -> String {
    format!("<!-- ply-diff: {} -->", title.replace("--", "- -"))
}

/// A value as one short line: scalars as text, the rest as compact JSON, cut to `VALUE_WIDTH`.
fn short(v: Option<&Node>) -> String {
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

fn change_line(c: &Change) -> String {
    format!(
        "{}: {} → {}",
        c.path,
        short(c.before.as_ref()),
        short(c.after.as_ref())
    )
}

fn status_note(o: &OverlayReview) -> Option<String> {
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
    }
}

fn object_title(o: &Object) -> String {
    let mut s = o.id.display();
    if let Some(from) = &o.renamed_from {
        let _ = write!(s, " (from {})", from.name);
    }
    s
}

/// The unified diff of one object, named `base/<overlay>/<file>` and `head/<overlay>/<file>`.
fn object_diff(overlay: &str, o: &Object) -> String {
    if o.before == o.after {
        return String::new();
    }
    let old = o.renamed_from.as_ref().unwrap_or(&o.id).file_name();
    unified_text(
        &format!("base/{overlay}/{old}"),
        &format!("head/{overlay}/{}", o.id.file_name()),
        &o.before,
        &o.after,
    )
}

fn totals_line(r: &Review) -> String {
    let changed = r.overlays.iter().filter(|o| o.changed()).count();
    let n = r.overlays.len();
    let parts: Vec<String> = COUNTED
        .iter()
        .map(|a| format!("{} {}", r.count(*a), a.as_str()))
        .collect();
    format!(
        "{n} overlay{}, {changed} changed: {}",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

/// `--format unified`.
pub fn unified(r: &Review, color: bool) -> String {
    let mut out = String::new();
    for o in &r.overlays {
        if !o.changed() {
            continue;
        }
        let _ = writeln!(out, "# overlay {}", o.name);
        if let Some(note) = status_note(o) {
            let _ = writeln!(out, "# {note}");
        }
        if let Status::HeadFailed(e) = &o.status {
            for line in e.lines() {
                let _ = writeln!(out, "# {line}");
            }
        }
        for obj in &o.objects {
            let d = object_diff(&o.name, obj);
            out.push_str(&if color { colorize(&d) } else { d });
        }
    }
    out
}

/// `--format summary`.
pub fn summary(r: &Review) -> String {
    let mut out = format!("ply diff: base {} → head {}\n\n", r.base, r.head);
    let width = r
        .overlays
        .iter()
        .map(|o| o.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let _ = writeln!(
        out,
        "{:<width$}  create  update  rename  delete  unchanged",
        "overlay"
    );
    for o in &r.overlays {
        let _ = write!(out, "{:<width$}", o.name);
        if no_changes(o) {
            out.push_str("  no changes\n");
            continue;
        }
        for (a, w) in COUNTED.iter().zip([8, 8, 8, 8, 11]) {
            let _ = write!(out, "{:>w$}", o.count(*a));
        }
        match &o.status {
            Status::HeadFailed(_) => out.push_str("  ERROR at head"),
            Status::Added => out.push_str("  added"),
            Status::Removed => out.push_str("  removed"),
            Status::BaseFailed(_) => out.push_str("  failed at base"),
            Status::Compared => {}
        }
        out.push('\n');
    }
    for o in r.overlays.iter().filter(|o| o.changed()) {
        let _ = writeln!(out, "\n== {} ==", o.name);
        if let Some(note) = status_note(o) {
            let _ = writeln!(out, "note: {note}");
        }
        if let Status::HeadFailed(e) | Status::BaseFailed(e) = &o.status {
            out.push_str(e);
            if !e.ends_with('\n') {
                out.push('\n');
            }
        }
        for obj in o.objects.iter().filter(|x| x.action != Action::Unchanged) {
            let _ = writeln!(out, "{:<10} {}", obj.action.as_str(), object_title(obj));
            for c in &obj.changes {
                let _ = writeln!(out, "    {}", change_line(c));
            }
        }
    }
    let _ = write!(out, "\n{}\n", totals_line(r));
    out
}

/// An overlay compared without a change: reported by name only. Its objects are not counted:
/// with `--changed-only` it may not have been rendered at all.
fn no_changes(o: &OverlayReview) -> bool {
    o.status == Status::Compared && !o.changed()
}

fn counts_node(counts: impl Fn(Action) -> usize) -> Node {
    let mut m = Map::default();
    for a in COUNTED {
        m.insert(a.as_str().into(), Node::Int(counts(a) as i128));
    }
    Node::Map(m)
}

/// `--format json` (docs/review.md): `schemaVersion` 1.
pub fn json(r: &Review, title: &str) -> String {
    let mut root = Map::default();
    root.insert("schemaVersion".into(), Node::Int(2));
    root.insert("title".into(), Node::str(title));
    root.insert("base".into(), Node::str(r.base.clone()));
    root.insert("head".into(), Node::str(r.head.clone()));
    root.insert("exitCode".into(), Node::Int(i128::from(r.exit_code())));
    root.insert("totals".into(), counts_node(|a| r.count(a)));
    let overlays = r
        .overlays
        .iter()
        .map(|o| {
            let mut m = Map::default();
            m.insert("path".into(), Node::str(o.name.clone()));
            let status = match &o.status {
                Status::Compared if no_changes(o) => "unchanged",
                Status::Compared => "compared",
                Status::Added => "added",
                Status::Removed => "removed",
                Status::BaseFailed(_) => "base-failed",
                Status::HeadFailed(_) => "head-failed",
            };
            m.insert("status".into(), Node::str(status));
            m.insert(
                "error".into(),
                match &o.status {
                    Status::HeadFailed(e) | Status::BaseFailed(e) => Node::str(e.clone()),
                    _ => Node::Null,
                },
            );
            m.insert(
                "totals".into(),
                if no_changes(o) {
                    Node::Null
                } else {
                    counts_node(|a| o.count(a))
                },
            );
            let objects = o
                .objects
                .iter()
                .filter(|x| x.action != Action::Unchanged)
                .map(|x| {
                    let mut om = Map::default();
                    om.insert("action".into(), Node::str(x.action.as_str()));
                    om.insert("apiVersion".into(), Node::str(x.id.api_version.clone()));
                    om.insert("kind".into(), Node::str(x.id.kind.clone()));
                    om.insert("namespace".into(), Node::str(x.id.namespace.clone()));
                    om.insert("name".into(), Node::str(x.id.name.clone()));
                    om.insert(
                        "renamedFrom".into(),
                        x.renamed_from
                            .as_ref()
                            .map_or(Node::Null, |f| Node::str(f.name.clone())),
                    );
                    let changes = x
                        .changes
                        .iter()
                        .map(|c| {
                            let mut cm = Map::default();
                            cm.insert("path".into(), Node::str(c.path.clone()));
                            cm.insert("before".into(), c.before.clone().unwrap_or(Node::Null));
                            cm.insert("after".into(), c.after.clone().unwrap_or(Node::Null));
                            Node::Map(cm)
                        })
                        .collect();
                    om.insert("changes".into(), Node::Seq(changes));
                    om.insert("diff".into(), Node::str(object_diff(&o.name, x)));
                    Node::Map(om)
                })
                .collect();
            m.insert("objects".into(), Node::Seq(objects));
            m.insert(
                "warnings".into(),
                Node::Seq(o.warnings.iter().map(|w| Node::str(w.clone())).collect()),
            );
            Node::Map(m)
        })
        .collect();
    root.insert("overlays".into(), Node::Seq(overlays));
    let mut text = to_json(&Node::Map(root), JsonStyle::PRETTY);
    text.push('\n');
    text
}

/// A table row of one changed object: action, object, changes with old → new values.
fn md_row(o: &Object) -> String {
    let mut cell: Vec<String> = o
        .changes
        .iter()
        .take(5)
        .map(|c| {
            format!(
                "{}: {} → {}",
                code(&c.path),
                code(&short(c.before.as_ref())),
                code(&short(c.after.as_ref()))
            )
        })
        .collect();
    if o.changes.len() > 5 {
        cell.push(format!("and {} more", o.changes.len() - 5));
    }
    if cell.is_empty() {
        cell.push(match o.action {
            Action::Create => "*new object*".into(),
            Action::Delete => "*deleted*".into(),
            _ => String::new(),
        });
    }
    let mut object = code(&o.id.display());
    if let Some(from) = &o.renamed_from {
        let _ = write!(object, " (from {})", code(&from.name));
    }
    format!(
        "| {} | {} | {} |\n",
        o.action.as_str(),
        object,
        cell.join("<br>")
    )
}

fn md_details(overlay: &str, o: &Object) -> String {
    let body = object_diff(overlay, o);
    let fence = fence_for(&body);
    format!(
        "<details><summary><b>{}</b> <code>{}</code></summary>\n\n{fence}diff\n{body}{fence}\n\n</details>\n\n",
        o.action.as_str(),
        html_escape(&object_title(o))
    )
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// `--format markdown`: the whole report within `budget` characters. The summary table and
/// each overlay's heading always come; rows and then diffs are given room in turns across
/// overlays — first creations, deletions and updates, then renames whose content alone
/// changed — and a note says what was left out.
pub fn markdown(r: &Review, title: &str, budget: usize) -> String {
    let mut head = format!("{}\n### {}\n\n", marker(title), title);
    let _ = write!(
        head,
        "Base **{}** → head **{}**. {}.\n\n",
        html_escape(&r.base),
        html_escape(&r.head),
        totals_line(r)
    );
    let changed: Vec<&OverlayReview> = r.overlays.iter().filter(|o| o.changed()).collect();
    if changed.is_empty() {
        head.push_str("No changes in the rendered output.\n");
        return head;
    }
    head.push_str("| Overlay | Create | Update | Rename | Delete | Unchanged | Note |\n|---|---:|---:|---:|---:|---:|---|\n");
    for o in &changed {
        let note = match &o.status {
            Status::HeadFailed(_) => "**error at head**",
            Status::Added => "added",
            Status::Removed => "removed",
            Status::BaseFailed(_) => "failed at base",
            Status::Compared => "",
        };
        let _ = write!(head, "| {} ", code(&o.name));
        for a in COUNTED {
            let _ = write!(head, "| {} ", o.count(a));
        }
        let _ = writeln!(head, "| {note} |");
    }
    let unchanged = r.overlays.len() - changed.len();
    if unchanged > 0 {
        let _ = writeln!(
            head,
            "\n{unchanged} overlay{} without changes not listed.",
            if unchanged == 1 { "" } else { "s" }
        );
    }
    head.push('\n');

    // The fixed part of each overlay: heading, note, error, table head.
    let sections: Vec<String> = changed
        .iter()
        .map(|o| {
            let mut s = format!("#### {}\n\n", code(&o.name));
            if let Some(note) = status_note(o) {
                let _ = write!(s, "*{note}.*\n\n");
            }
            if let Status::HeadFailed(e) | Status::BaseFailed(e) = &o.status {
                let f = fence_for(e);
                let _ = write!(
                    s,
                    "{f}text\n{e}{}{f}\n\n",
                    if e.ends_with('\n') { "" } else { "\n" }
                );
            }
            if o.objects.iter().any(|x| x.action != Action::Unchanged) {
                s.push_str("| Action | Object | Changes |\n|---|---|---|\n");
            }
            s
        })
        .collect();
    let reserve = 600;
    let mut used = chars(&head) + sections.iter().map(|s| chars(s) + 1).sum::<usize>() + reserve;
    // Objects per overlay, changed ones only; (overlay, object index) in turns.
    let lists: Vec<Vec<&Object>> = changed
        .iter()
        .map(|o| {
            o.objects
                .iter()
                .filter(|x| x.action != Action::Unchanged)
                .collect()
        })
        .collect();
    let turns = |keep: &dyn Fn(&Object) -> bool| -> Vec<(usize, usize)> {
        let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = Vec::new();
        for j in 0..longest {
            for (i, list) in lists.iter().enumerate() {
                if let Some(x) = list.get(j) {
                    if keep(x) {
                        out.push((i, j));
                    }
                }
            }
        }
        out
    };
    let content_rename = |x: &Object| x.action == Action::Rename;
    let mut order = turns(&|x| !content_rename(x));
    order.extend(turns(&content_rename));
    let mut rows = vec![Vec::new(); lists.len()];
    let mut rows_left = 0;
    for &(i, j) in &order {
        let Some(x) = lists.get(i).and_then(|l| l.get(j)) else {
            continue;
        };
        let row = md_row(x);
        if used + chars(&row) <= budget {
            used += chars(&row);
            if let Some(r) = rows.get_mut(i) {
                r.push(j);
            }
        } else {
            rows_left += 1;
        }
    }
    let mut details = vec![Vec::new(); lists.len()];
    let (mut details_left, mut renames_left) = (0, 0);
    for &(i, j) in &order {
        let Some(x) = lists.get(i).and_then(|l| l.get(j)) else {
            continue;
        };
        let d = md_details(changed.get(i).map_or("", |o| o.name.as_str()), x);
        if used + chars(&d) <= budget {
            used += chars(&d);
            if let Some(v) = details.get_mut(i) {
                v.push(j);
            }
        } else {
            details_left += 1;
            if content_rename(x) {
                renames_left += 1;
            }
        }
    }
    let mut out = head;
    for (i, section) in sections.iter().enumerate() {
        out.push_str(section);
        let (Some(list), Some(o)) = (lists.get(i), changed.get(i)) else {
            continue;
        };
        let mut shown_rows = rows.get(i).cloned().unwrap_or_default();
        shown_rows.sort_unstable();
        for j in &shown_rows {
            if let Some(x) = list.get(*j) {
                out.push_str(&md_row(x));
            }
        }
        if !list.is_empty() {
            if shown_rows.len() < list.len() {
                let _ = writeln!(
                    out,
                    "| … | {} more objects not listed | |",
                    list.len() - shown_rows.len()
                );
            }
            out.push('\n');
        }
        let mut shown = details.get(i).cloned().unwrap_or_default();
        shown.sort_unstable();
        for j in shown {
            if let Some(x) = list.get(j) {
                out.push_str(&md_details(&o.name, x));
            }
        }
    }
    if rows_left + details_left > 0 {
        let _ = writeln!(
            out,
            "**Left out to stay within {budget} characters:** {rows_left} table row{} and the diffs of {details_left} object{} ({renames_left} of them renames whose content alone changed). Run `ply diff` locally (`--format unified`) for everything.",
            if rows_left == 1 { "" } else { "s" },
            if details_left == 1 { "" } else { "s" },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::ObjectId;

    fn object(action: Action, name: &str, lines: usize) -> Object {
        let body: String = (0..lines).map(|i| format!("k{i}: v{i}\n")).collect();
        let after: String = (0..lines).map(|i| format!("k{i}: w{i}\n")).collect();
        Object {
            action,
            id: ObjectId {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "ns".into(),
                name: name.into(),
            },
            renamed_from: (action == Action::Rename).then(|| ObjectId {
                name: format!("{name}-old"),
                ..ObjectId::default()
            }),
            before: body,
            after,
            changes: vec![Change {
                path: ".data.k0".into(),
                before: Some(Node::str("v0")),
                after: Some(Node::str("w0")),
            }],
        }
    }

    fn overlay(name: &str) -> OverlayReview {
        let mut objects: Vec<Object> = (0..5)
            .map(|i| object(Action::Rename, &format!("r{i}"), 40))
            .collect();
        objects.extend((0..8).map(|i| object(Action::Update, &format!("u{i}"), 40)));
        OverlayReview {
            name: name.into(),
            status: Status::Compared,
            objects,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn markdown_budget_goes_to_updates_first_across_overlays() {
        let r = Review {
            base: "main".into(),
            head: "working tree".into(),
            overlays: vec![overlay("a"), overlay("b")],
        };
        let md = markdown(&r, "T", 12_000);
        assert!(chars(&md) <= 12_000, "{}", chars(&md));
        assert!(md.starts_with("<!-- ply-diff: T -->\n### T\n"));
        let details = |o: &str, what: &str| {
            let section = md
                .split("#### ")
                .find(|s| s.starts_with(&format!("`{o}`")))
                .unwrap_or("");
            section.matches(&format!("<b>{what}</b>")).count()
        };
        // Both overlays get diffs, updates before renames.
        assert!(
            details("a", "update") > 0 && details("b", "update") > 0,
            "{md}"
        );
        assert!(details("a", "update").abs_diff(details("b", "update")) <= 1);
        assert_eq!(details("a", "rename") + details("b", "rename"), 0, "{md}");
        assert!(
            md.contains("**Left out to stay within 12000 characters:**"),
            "{md}"
        );
        assert!(
            md.contains("(10 of them renames whose content alone changed)"),
            "{md}"
        );
        // Generous budget: everything, no note.
        let full = markdown(&r, "T", 1_000_000);
        assert_eq!(full.matches("<details>").count(), 26);
        assert!(!full.contains("Left out"));
    }

    #[test]
    fn values_are_cut_and_marker_is_a_comment() {
        let long = Node::str("x".repeat(100));
        assert_eq!(short(Some(&long)).chars().count(), VALUE_WIDTH);
        assert_eq!(short(None), "(none)");
        assert_eq!(marker("a -- b"), "<!-- ply-diff: a - - b -->");
    }
}
