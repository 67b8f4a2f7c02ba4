//! `--format markdown`, for a pull-request comment: totals, a table of the changed objects,
//! then one collapsible `<details>` section per object holding its diff, within a size budget
//! (GitHub refuses comments over 65,536 characters). A live report has one table and fills
//! its budget in object order, cutting the last diff that does not fit; a review opens with a
//! hidden marker and a table per overlay, and gives room in turns across overlays — first
//! creations, deletions and updates, then renames whose content alone changed. Returns
//! strings.

use std::fmt::Write as _;

use super::group::{self, Same};
use super::model::{
    Action, Failure, OFFLINE_NOTE, ObjectChange, OverlayReview, Report, Review, Status,
};
use super::text::{
    broken_before_heading, conflict_text, failure_line, live_totals, owned_path, review_totals,
    short_change, status_note,
};
use super::unified::{live_object, review_object};

/// Room kept in a review's budget for the note naming what was left out.
const NOTE_ROOM: usize = 1200;

/// The default size budget of a review's or a live report's Markdown, in characters (GitHub's
/// comment limit is 65,536).
pub(crate) const DEFAULT_BUDGET: usize = 65_000;

/// Inline code for a table cell: backticks that hold, pipes escaped.
pub(crate) fn code(s: &str) -> String {
    let s = s.replace('|', "\\|");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// A backtick fence longer than any run of backticks in the body (a diff line can open with a
/// space or a sign before a fence of its own).
pub(crate) fn fence_for(body: &str) -> String {
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

pub(crate) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The hidden marker a CI job finds its own review comment by.
pub(crate) fn marker(title: &str) -> String {
    format!("<!-- ply-diff: {} -->", title.replace("--", "- -"))
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// A table row: the action, the object (and the name it replaces), and `cell`.
fn row(o: &ObjectChange, cell: &str) -> String {
    let mut object = code(&o.id.display());
    if let Some(from) = &o.renamed_from {
        let _ = write!(object, " (from {})", code(&from.name));
    }
    format!("| {} | {} | {} |\n", o.action.as_str(), object, cell)
}

/// One collapsible section titled `summary`, holding `body` in a `lang` fence; `cut` says the
/// body was cut short.
fn details(action: Action, summary: &str, lang: &str, body: &str, cut: bool) -> String {
    let fence = fence_for(body);
    let mut s = format!(
        "<details><summary><b>{}</b> <code>{}</code></summary>\n\n{fence}{lang}\n{body}{fence}\n",
        action.as_str(),
        html_escape(summary)
    );
    if cut {
        s.push_str("\n*(this diff is cut short)*\n");
    }
    s.push_str("\n</details>\n\n");
    s
}

/// A live row's cell: up to five changed paths (or conflicting fields), then how many more.
fn live_row(o: &ObjectChange) -> String {
    let fields: Vec<String> = if o.action == Action::Conflict {
        o.conflicts.iter().map(owned_path).collect()
    } else {
        o.changes.iter().map(|c| c.path.clone()).collect()
    };
    let shown: Vec<String> = fields.iter().take(5).map(|f| code(f)).collect();
    let mut cell = shown.join(", ");
    if cell.is_empty() {
        cell = match o.action {
            Action::Create => "*new object*".into(),
            Action::Delete => "*pruned*".into(),
            Action::Unknown => format!(
                "*namespace `{}` not in the snapshot: not compared*",
                o.id.namespace
            ),
            _ => String::new(),
        };
    }
    if fields.len() > 5 {
        let _ = write!(cell, " and {} more", fields.len() - 5);
    }
    row(o, &cell)
}

/// A live object's section; `room` cuts the diff body to that many characters.
fn live_details(o: &ObjectChange, room: Option<usize>) -> String {
    // Not compared: its row says why, and there is no diff.
    if o.action == Action::Unknown {
        return String::new();
    }
    let mut body = if o.action == Action::Conflict {
        conflict_text(o)
    } else {
        live_object(o)
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
    let lang = if o.action == Action::Conflict {
        "text"
    } else {
        "diff"
    };
    details(o.action, &o.id.display(), lang, &body, cut)
}

/// A live report, under `budget` characters, opened by the hidden [`marker`] of `title` (so
/// that the review's comment script finds and updates it) and `title` as its heading.
pub(crate) fn live(report: &Report, title: &str, budget: usize) -> String {
    let mode = if report.server_side {
        "server-side apply"
    } else {
        "client-side apply"
    };
    let changed: Vec<&ObjectChange> = report
        .objects
        .iter()
        .filter(|o| o.action != Action::Unchanged)
        .collect();
    let mut head = format!(
        "{}\n### {title} ({mode})\n\n{}\n\n",
        marker(title),
        live_totals(report)
    );
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
        if *used + n + reserve > budget {
            return false;
        }
        out.push_str(piece);
        *used += n;
        true
    };
    push(&mut out, &mut used, &head);
    let mut rows_shown = 0;
    for o in &changed {
        let row = live_row(o);
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
            let section = live_details(o, None);
            if push(&mut out, &mut used, &section) {
                details_shown += 1;
                continue;
            }
            // Cut this one object's diff to the room left, then stop.
            let room = budget.saturating_sub(used + reserve + 300);
            if room > 500 {
                let section = live_details(o, Some(room));
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

/// A review row, its object among identical changes in other overlays (`names`: the
/// overlays' names by index): changed as in another overlay, it says so instead of its
/// changes; the first of such a group lists them all.
fn grouped_row(o: &ObjectChange, same: &Same, names: &[&str]) -> String {
    match same {
        Same::Alone => review_row(o),
        Same::As(first) => row(
            o,
            &format!(
                "*same change as in {}*",
                code(names.get(*first).copied().unwrap_or(""))
            ),
        ),
        Same::First(all) => {
            let list: Vec<String> = all
                .iter()
                .map(|i| code(names.get(*i).copied().unwrap_or("")))
                .collect();
            let mut r = review_row(o);
            // The note goes at the end of the changes cell.
            r.truncate(r.trim_end_matches(" |\n").len());
            let _ = writeln!(r, "<br>*same change in {}* |", list.join(", "));
            r
        }
    }
}

/// A review row's cell: up to five changes as `path`: `old` → `new`, then how many more.
fn review_row(o: &ObjectChange) -> String {
    let mut cell: Vec<String> = o
        .changes
        .iter()
        .take(5)
        .map(|c| {
            let (before, after) = short_change(c);
            format!(
                "{}: {} → {}{}",
                code(&c.path),
                code(&before),
                code(&after),
                super::cause::markdown(c.cause.as_ref())
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
            Action::Move => "*moved, unchanged*".into(),
            _ => String::new(),
        });
    }
    row(o, &cell.join("<br>"))
}

fn review_details(overlay: &str, o: &ObjectChange) -> String {
    details(
        o.action,
        &o.title(),
        "diff",
        &review_object(overlay, o),
        false,
    )
}

/// The "Summary" section that opens a review with identical changes grouped across objects
/// and overlays (empty when no change is made to two objects alike).
fn summary_section(r: &Review) -> String {
    let lines = group::summary(r, group::SUMMARY_SHOWN);
    if lines.is_empty() {
        return String::new();
    }
    let mut s = String::from("#### Summary\n\n");
    for l in lines {
        let _ = writeln!(s, "- {}", html_escape(&l));
    }
    s.push('\n');
    s
}

/// At most this many risks are listed in a comment; the rest are counted.
const RISKS_SHOWN: usize = 30;

/// The "Risks" section that opens a review (empty without risks): one line per risk, most
/// severe first, each with the rule it follows.
fn risks_section(r: &Review) -> String {
    let all = r.risks();
    if all.is_empty() {
        return String::new();
    }
    let risks = group::risks(&all);
    let mut s = String::from(
        "#### Risks\n\nWhat `kubectl apply` of the head would do beyond the diff:\n\n",
    );
    for g in risks.iter().take(RISKS_SHOWN) {
        let risk = g.risk;
        let path = risk
            .path
            .as_deref()
            .map(|p| format!(" {}", code(p)))
            .unwrap_or_default();
        let names: Vec<String> = g.overlays().iter().map(|o| code(o)).collect();
        let _ = writeln!(
            s,
            "- **{}** {} in {}{path}: {}. <sub>Rule: {}.</sub>",
            risk.kind.as_str(),
            code(&g.subject()),
            names.join(", "),
            html_escape(&group::risk_what(g)),
            html_escape(&risk.rule)
        );
    }
    if risks.len() > RISKS_SHOWN {
        let _ = writeln!(
            s,
            "- … and {} more risks, listed by `ply diff --format json` (`risks`).",
            risks.len() - RISKS_SHOWN
        );
    }
    s.push('\n');
    s
}

/// A review within `budget` characters. The summary table and each overlay's heading always
/// come; rows and then diffs are given room in turns across overlays — first creations,
/// deletions and updates, then renames whose content alone changed — and a note says what was
/// left out.
pub(crate) fn review(r: &Review, title: &str, budget: usize) -> String {
    let mut head = format!("{}\n### {}\n\n", marker(title), title);
    let _ = write!(
        head,
        "Base **{}** → head **{}**. {}.\n\n",
        html_escape(&r.base),
        html_escape(&r.head),
        review_totals(r)
    );
    let changed: Vec<&OverlayReview> = r.overlays.iter().filter(|o| o.changed()).collect();
    // Overlays broken before the change: one line each, collapsed, before any diff.
    let broken = r.broken_before();
    let broken_section = broken_before_section(r, &broken);
    if changed.is_empty() {
        head.push_str("No changes in the rendered output.\n");
        if !broken.is_empty() {
            head.push('\n');
            head.push_str(&broken_section);
        }
        return head;
    }
    head.push_str(&summary_section(r));
    head.push_str(&risks_section(r));
    head.push_str(&overlays_table(r, &changed, broken.len()));
    head.push_str(&broken_section);

    // The fixed part of each overlay: heading, note, error, table head.
    let sections: Vec<String> = changed.iter().map(|o| overlay_heading(o)).collect();
    // Room kept for the closing note, which names what was left out.
    let reserve = NOTE_ROOM + 200;
    let mut used = chars(&head) + sections.iter().map(|s| chars(s) + 1).sum::<usize>() + reserve;
    // Objects per overlay, changed ones only.
    let lists: Vec<Vec<&ObjectChange>> = changed.iter().map(|o| o.changed_objects()).collect();
    // An object changed as in an earlier overlay is shown there: one row, no diff.
    let same = group::objects(&group::with_affixes(&changed, &lists));
    let names: Vec<&str> = changed.iter().map(|o| o.name.as_str()).collect();
    let order = review_order(&changed, &lists);
    let rows = fit_rows(&order, &lists, &same, &names, &mut used, budget);
    let diffs = fit_diffs(
        &order, &changed, &lists, &same, &rows.left, &mut used, budget,
    );
    let mut out = head;
    for (i, section) in sections.iter().enumerate() {
        out.push_str(section);
        let (Some(list), Some(o)) = (lists.get(i), changed.get(i)) else {
            continue;
        };
        let mut shown_rows = rows.shown.get(i).cloned().unwrap_or_default();
        shown_rows.sort_unstable();
        for j in &shown_rows {
            if let Some(x) = list.get(*j) {
                out.push_str(&grouped_row(x, same_at(&same, i, *j), &names));
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
        let mut shown = diffs.shown.get(i).cloned().unwrap_or_default();
        shown.sort_unstable();
        for j in shown {
            if let Some(x) = list.get(j) {
                out.push_str(&review_details(&o.name, x));
            }
        }
    }
    if rows.left.len() + diffs.left.len() > 0 {
        out.push_str(&left_out_note(budget, &rows, &diffs, &lists, &names));
    }
    out
}

/// The collapsed list of the overlays broken before the change (empty when there are none).
fn broken_before_section(r: &Review, broken: &[(&str, &Failure)]) -> String {
    let mut s = String::new();
    if broken.is_empty() {
        return s;
    }
    let _ = write!(
        s,
        "<details><summary>{}</summary>\n\n",
        html_escape(&broken_before_heading(r))
    );
    for (name, f) in broken {
        let _ = writeln!(s, "- {}: {}", code(name), html_escape(&failure_line(f)));
    }
    s.push_str("\n</details>\n\n");
    s
}

/// The table of the changed overlays (a column per action, a note), and how many overlays
/// without changes it leaves out.
fn overlays_table(r: &Review, changed: &[&OverlayReview], broken: usize) -> String {
    let mut head = String::new();
    let actions = r.actions();
    head.push_str("| Overlay |");
    for a in &actions {
        let name = a.as_str();
        let _ = write!(head, " {}{} |", name[..1].to_uppercase(), &name[1..]);
    }
    head.push_str(" Note |\n|---|");
    for _ in &actions {
        head.push_str("---:|");
    }
    head.push_str("---|\n");
    for o in changed {
        let note = match &o.status {
            Status::HeadFailed(_) => "**error: broken by this change**",
            Status::NotFetched(_) => "**not fetched**",
            Status::NotReviewed(_) => "**not reviewed**",
            Status::NotRendered(_) => "not rendered",
            Status::Added => "added",
            Status::Removed => "removed",
            Status::BaseFailed(_) => "fixed by this change",
            Status::Compared | Status::BrokenBefore(_) => "",
        };
        let _ = write!(head, "| {} ", code(&o.name));
        for a in actions.iter().copied() {
            let _ = write!(head, "| {} ", o.count(a));
        }
        let _ = writeln!(head, "| {note} |");
    }
    let unchanged = r.overlays.len() - changed.len() - broken;
    if unchanged > 0 {
        let _ = writeln!(
            head,
            "\n{unchanged} overlay{} without changes not listed.",
            if unchanged == 1 { "" } else { "s" }
        );
    }
    head.push('\n');
    head
}

/// The fixed part of a changed overlay's section: heading, note, error, table head.
fn overlay_heading(o: &OverlayReview) -> String {
    let mut s = format!("#### {}\n\n", code(&o.name));
    if let Some(note) = status_note(o) {
        let _ = write!(s, "*{note}.*\n\n");
    }
    if let Status::HeadFailed(failure)
    | Status::BaseFailed(failure)
    | Status::NotFetched(failure)
    | Status::NotReviewed(failure)
    | Status::NotRendered(failure) = &o.status
    {
        let e = &failure.text;
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
}

/// How the object at (overlay `i`, object `j`) is grouped with the same change elsewhere.
fn same_at(same: &[Vec<Same>], i: usize, j: usize) -> &Same {
    same.get(i).and_then(|l| l.get(j)).unwrap_or(&Same::Alone)
}

/// The order in which (overlay, object) pairs get room, in turns across overlays. What
/// matters least goes last, and so is left out first: objects with a risk come first, then
/// creations, deletions and updates, then renames whose content alone changed.
fn review_order(changed: &[&OverlayReview], lists: &[Vec<&ObjectChange>]) -> Vec<(usize, usize)> {
    let turns = |keep: &dyn Fn(usize, &ObjectChange) -> bool| -> Vec<(usize, usize)> {
        let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = Vec::new();
        for j in 0..longest {
            for (i, list) in lists.iter().enumerate() {
                if let Some(x) = list.get(j) {
                    if keep(i, x) {
                        out.push((i, j));
                    }
                }
            }
        }
        out
    };
    let content_rename = |x: &ObjectChange| x.action == Action::Rename;
    let risky = |i: usize, x: &ObjectChange| {
        changed
            .get(i)
            .is_some_and(|o| o.risks.iter().any(|r| r.object == x.id))
    };
    let mut order = turns(&|i, x| risky(i, x));
    order.extend(turns(&|i, x| !risky(i, x) && !content_rename(x)));
    order.extend(turns(&|i, x| !risky(i, x) && content_rename(x)));
    order
}

/// What fit of a review's rows or diffs: the objects shown, by overlay, and the (overlay,
/// object) pairs left out.
struct Fit {
    shown: Vec<Vec<usize>>,
    left: Vec<(usize, usize)>,
}

/// Gives the rows room in `order` while they fit the budget.
fn fit_rows(
    order: &[(usize, usize)],
    lists: &[Vec<&ObjectChange>],
    same: &[Vec<Same>],
    names: &[&str],
    used: &mut usize,
    budget: usize,
) -> Fit {
    let mut shown = vec![Vec::new(); lists.len()];
    let mut left = Vec::new();
    for &(i, j) in order {
        let Some(x) = lists.get(i).and_then(|l| l.get(j)) else {
            continue;
        };
        let row = grouped_row(x, same_at(same, i, j), names);
        if *used + chars(&row) <= budget {
            *used += chars(&row);
            if let Some(r) = shown.get_mut(i) {
                r.push(j);
            }
        } else {
            left.push((i, j));
        }
    }
    Fit { shown, left }
}

/// What of a review's diffs fit: `left` counts every diff left out (renames among them in
/// `renames_left`), `undiffed` the objects listed without their diff.
struct DiffFit {
    shown: Vec<Vec<usize>>,
    left: Vec<(usize, usize)>,
    renames_left: usize,
    undiffed: Vec<(usize, usize)>,
}

/// Gives the diffs room in `order` while they fit the budget (an object shown as in an
/// earlier overlay has none).
fn fit_diffs(
    order: &[(usize, usize)],
    changed: &[&OverlayReview],
    lists: &[Vec<&ObjectChange>],
    same: &[Vec<Same>],
    unlisted: &[(usize, usize)],
    used: &mut usize,
    budget: usize,
) -> DiffFit {
    let mut fit = DiffFit {
        shown: vec![Vec::new(); lists.len()],
        left: Vec::new(),
        renames_left: 0,
        undiffed: Vec::new(),
    };
    for &(i, j) in order {
        let Some(x) = lists.get(i).and_then(|l| l.get(j)) else {
            continue;
        };
        if matches!(same_at(same, i, j), Same::As(_)) {
            continue;
        }
        let d = review_details(changed.get(i).map_or("", |o| o.name.as_str()), x);
        if *used + chars(&d) <= budget {
            *used += chars(&d);
            if let Some(v) = fit.shown.get_mut(i) {
                v.push(j);
            }
        } else {
            fit.left.push((i, j));
            if x.action == Action::Rename {
                fit.renames_left += 1;
            }
            if !unlisted.contains(&(i, j)) {
                fit.undiffed.push((i, j));
            }
        }
    }
    fit
}

/// The closing note of a review cut to its budget: how many rows and diffs were left out, and
/// the objects by name as far as `NOTE_ROOM` allows.
fn left_out_note(
    budget: usize,
    rows: &Fit,
    diffs: &DiffFit,
    lists: &[Vec<&ObjectChange>],
    names: &[&str],
) -> String {
    let (rows_left, details_left) = (rows.left.len(), diffs.left.len());
    let mut out = String::new();
    let _ = write!(
        out,
        "**Left out to stay within {budget} characters**, least important first (renames whose content alone changed, then objects without a risk; risks are never left out): {rows_left} table row{} and the diffs of {details_left} object{} ({} of them renames whose content alone changed).",
        if rows_left == 1 { "" } else { "s" },
        if details_left == 1 { "" } else { "s" },
        diffs.renames_left,
    );
    let object = |&(i, j): &(usize, usize)| -> Option<(usize, String)> {
        let x = lists.get(i)?.get(j)?;
        Some((i, format!("{} {}", x.id.kind, x.id.name)))
    };
    let mut room = NOTE_ROOM;
    for (what, list) in [
        ("Not listed", &rows.left),
        ("Listed without their diff", &diffs.undiffed),
    ] {
        let mut named: Vec<(usize, String)> = list.iter().filter_map(object).collect();
        named.sort_by_key(|(i, _)| *i);
        if named.is_empty() {
            continue;
        }
        let mut text = format!(" {what}:");
        let mut shown = 0;
        let mut last = None;
        for (i, name) in &named {
            let piece = if last == Some(*i) {
                format!(", {}", code(name))
            } else {
                let sep = if last.is_none() { "" } else { ";" };
                format!(
                    "{sep} in {}: {}",
                    code(names.get(*i).copied().unwrap_or("")),
                    code(name)
                )
            };
            if chars(&text) + chars(&piece) > room {
                break;
            }
            text.push_str(&piece);
            last = Some(*i);
            shown += 1;
        }
        if shown < named.len() {
            let _ = write!(text, "; and {} more", named.len() - shown);
        }
        text.push('.');
        room = room.saturating_sub(chars(&text));
        out.push_str(&text);
    }
    out.push_str(" Run `ply diff` locally (`--format unified`) for everything.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Change, ObjectId};
    use crate::yaml::Node;

    fn object(action: Action, name: &str, before: String, after: String) -> ObjectChange {
        ObjectChange {
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
            moved_from: None,
            before,
            after,
            changes: vec![Change {
                cause: None,
                path: ".data.a|b".into(),
                before: Some(Node::str("v0")),
                after: Some(Node::str("w0")),
            }],
            conflicts: Vec::new(),
            predicted: None,
            stored_diff: None,
        }
    }

    fn live_report(objects: Vec<ObjectChange>) -> Report {
        Report {
            server_side: false,
            field_manager: "kubectl-client-side-apply".into(),
            objects,
        }
    }

    #[test]
    fn live_escapes_and_fences() {
        let r = live_report(vec![object(
            Action::Update,
            "c",
            "a: |\n  ```\n".into(),
            "a: 2\n".into(),
        )]);
        let md = live(&r, "ply diff", DEFAULT_BUDGET);
        assert!(md.contains("`.data.a\\|b`"), "{md}");
        assert!(md.contains("````diff\n"), "{md}");
        assert!(md.ends_with(&format!("> {OFFLINE_NOTE}\n")));
    }

    #[test]
    fn live_stays_under_the_comment_limit() {
        let big: String = (0..4000).map(|i| format!("k{i}: value-{i}\n")).collect();
        let objects = (0..20)
            .map(|i| object(Action::Update, &format!("c{i}"), String::new(), big.clone()))
            .collect();
        let md = live(&live_report(objects), "ply diff", DEFAULT_BUDGET);
        assert!(chars(&md) < DEFAULT_BUDGET, "{}", chars(&md));
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

    fn overlay(name: &str) -> OverlayReview {
        let lines = |c: char| -> String { (0..40).map(|i| format!("k{i}: {c}{i}\n")).collect() };
        let mut objects: Vec<ObjectChange> = (0..5)
            .map(|i| object(Action::Rename, &format!("r{i}"), lines('v'), lines('w')))
            .collect();
        objects.extend(
            (0..8).map(|i| object(Action::Update, &format!("u{i}"), lines('v'), lines('w'))),
        );
        for o in &mut objects {
            o.changes[0].path = ".data.k0".into();
            // Each overlay's own value: no change is the same in both (see group.rs).
            o.changes[0].after = Some(Node::str(format!("w0-{name}")));
        }
        OverlayReview {
            name: name.into(),
            status: Status::Compared,
            objects,
            warnings: Vec::new(),
            risks: Vec::new(),
            moved_out: 0,
            unpaired: Vec::new(),
            affixes: Default::default(),
        }
    }

    #[test]
    fn review_budget_goes_to_updates_first_across_overlays() {
        let r = Review {
            base: "main".into(),
            head: "working tree".into(),
            overlays: vec![overlay("a"), overlay("b")],
            fail_on: Default::default(),
            shard: None,
        };
        let md = review(&r, "T", 12_000);
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
            md.contains("**Left out to stay within 12000 characters**"),
            "{md}"
        );
        // It names exactly what it left out.
        assert!(
            md.contains("Listed without their diff: in `a`: `ConfigMap u4`, `ConfigMap u5`"),
            "{md}"
        );
        assert_eq!(md.matches("`ConfigMap r").count(), 10, "{md}");
        assert!(
            md.contains("(10 of them renames whose content alone changed)"),
            "{md}"
        );
        // Generous budget: everything, no note.
        let full = review(&r, "T", 1_000_000);
        assert_eq!(full.matches("<details>").count(), 26);
        assert!(!full.contains("Left out"));
    }

    #[test]
    fn review_budget_keeps_objects_with_risks_first() {
        let mut b = overlay("b");
        // A risk on the last rename of `b`: its diff comes before every other object's.
        let risky = b.objects[4].id.clone();
        b.risks.push(crate::report::model::Risk {
            kind: crate::report::model::RiskKind::Immutable,
            object: risky,
            path: Some(".data".into()),
            what: "changes".into(),
            rule: "rule".into(),
        });
        let r = Review {
            base: "main".into(),
            head: "working tree".into(),
            overlays: vec![overlay("a"), b],
            fail_on: Default::default(),
            shard: None,
        };
        let md = review(&r, "T", 12_000);
        assert!(chars(&md) <= 12_000, "{}", chars(&md));
        assert!(
            md.contains("<b>rename</b> <code>v1 ConfigMap ns/r4"),
            "{md}"
        );
        assert!(md.contains("#### Risks"), "{md}");
    }

    #[test]
    fn marker_is_a_comment() {
        assert_eq!(marker("a -- b"), "<!-- ply-diff: a - - b -->");
    }
}
