//! `--format summary`: one line per object with what changed, and totals. A live report lists
//! every object (unchanged ones too) with its changed paths, or the fields its conflicts are
//! about; a review opens with the two sides and a table of counts per overlay, then lists each
//! changed overlay's objects with every change as `path: old → new`. Returns strings.

use std::fmt::Write as _;

use super::model::{Action, Report, Review, Status};
use super::text::{
    broken_before_heading, change_line, failure_line, live_totals, owned_path, review_totals,
    status_note,
};

/// A live report.
pub(crate) fn live(report: &Report) -> String {
    let mut out = String::new();
    for o in &report.objects {
        let _ = write!(out, "{:<10} {}", o.action.as_str(), o.title());
        if o.action == Action::Conflict {
            let parts: Vec<String> = o.conflicts.iter().map(owned_path).collect();
            let _ = write!(out, ": {}", parts.join(", "));
        } else if o.action == Action::Unknown {
            let _ = write!(out, ": {}", super::text::unknown_note(o));
        } else if !o.changes.is_empty() {
            let _ = write!(out, ": {}", o.paths().join(", "));
        }
        out.push('\n');
    }
    if !report.objects.is_empty() {
        out.push('\n');
    }
    out.push_str(&live_totals(report));
    out.push('\n');
    out
}

/// The review's risks, identical ones grouped, each with the rule it cites (empty without
/// risks).
fn risks_section(r: &Review) -> String {
    let mut out = String::new();
    let risks = r.risks();
    if !risks.is_empty() {
        out.push_str("risks (what the apply does beyond the diff):\n");
        for g in super::group::risks(&risks) {
            let line = match (g.at.as_slice(), g.risk.path.as_deref()) {
                ([(overlay, _)], _) => format!("{overlay}: {}", g.risk.line()),
                (_, path) => format!(
                    "{}: {}{}: {}",
                    g.overlays().join(", "),
                    g.subject(),
                    path.map(|p| format!(" {p}")).unwrap_or_default(),
                    super::group::risk_what(&g)
                ),
            };
            let _ = writeln!(out, "  {:<12} {line}", g.risk.kind.as_str());
            let _ = writeln!(out, "  {:<12} rule: {}", "", &g.risk.rule);
        }
        out.push('\n');
    }
    out
}

/// A review.
pub(crate) fn review(r: &Review) -> String {
    let mut out = format!("ply diff: base {} → head {}\n\n", r.base, r.head);
    let summary = super::group::summary(r, super::group::SUMMARY_SHOWN);
    if !summary.is_empty() {
        out.push_str("summary (the same change in several objects):\n");
        for l in &summary {
            let _ = writeln!(out, "  {l}");
        }
        out.push('\n');
    }
    out.push_str(&risks_section(r));
    let width = r
        .overlays
        .iter()
        .map(|o| o.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let actions = r.actions();
    let widths: Vec<usize> = actions
        .iter()
        .map(|a| a.as_str().len().max(6) + 2)
        .collect();
    let _ = write!(out, "{:<width$}", "overlay");
    for (a, w) in actions.iter().zip(&widths) {
        let _ = write!(out, "{:>w$}", a.as_str());
    }
    out.push('\n');
    for o in &r.overlays {
        let _ = write!(out, "{:<width$}", o.name);
        if o.no_changes() {
            out.push_str("  no changes\n");
            continue;
        }
        if o.broken_before().is_some() {
            out.push_str("  broken before this change\n");
            continue;
        }
        for (a, w) in actions.iter().zip(widths.iter().copied()) {
            let _ = write!(out, "{:>w$}", o.count(*a));
        }
        match &o.status {
            Status::HeadFailed(_) => out.push_str("  ERROR: broken by this change"),
            Status::NotFetched(_) => out.push_str("  NOT FETCHED"),
            Status::NotReviewed(_) => out.push_str("  NOT REVIEWED"),
            Status::NotRendered(_) => out.push_str("  not rendered"),
            Status::Added => out.push_str("  added"),
            Status::Removed => out.push_str("  removed"),
            Status::BaseFailed(_) => out.push_str("  fixed by this change"),
            Status::Compared | Status::BrokenBefore(_) => {}
        }
        out.push('\n');
    }
    for o in r.overlays.iter().filter(|o| o.changed()) {
        let _ = writeln!(out, "\n== {} ==", o.name);
        if let Some(note) = status_note(o) {
            let _ = writeln!(out, "note: {note}");
        }
        if let Status::HeadFailed(f)
        | Status::BaseFailed(f)
        | Status::NotFetched(f)
        | Status::NotReviewed(f)
        | Status::NotRendered(f) = &o.status
        {
            out.push_str(&f.text);
            if !f.text.ends_with('\n') {
                out.push('\n');
            }
        }
        for obj in o.objects.iter().filter(|x| x.action != Action::Unchanged) {
            let _ = writeln!(out, "{:<10} {}", obj.action.as_str(), obj.title());
            for c in &obj.changes {
                let _ = writeln!(out, "    {}", change_line(c));
            }
        }
    }
    let broken = r.broken_before();
    if !broken.is_empty() {
        let _ = writeln!(out, "\n{}:", broken_before_heading(r));
        for (name, f) in broken {
            let _ = writeln!(out, "  {name}: {}", failure_line(f));
        }
    }
    let _ = write!(out, "\n{}\n", review_totals(r));
    out
}
