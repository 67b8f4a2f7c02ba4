//! The report layer under `diff/` (`ply diff --live`) and `review/` (`ply diff --base`): the
//! one object-change model both fill ([`model`]) and one file per output format (`unified`,
//! `summary`, `json`, `markdown`, `html`), each writing both documents, as jaq keeps one file per
//! format. Pure: turns a [`Report`] or a [`Review`] into text; computes no diff, reads and
//! writes nothing, and imports neither `diff`, `review`, `render` nor `cli`.
//!
//! A new output format is one new file here, one [`Format`] variant and its two arms below
//! (and the CLI's `--format` value that names it).

mod cause;
pub(crate) use cause::source_link;
pub(crate) mod group;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod merge;
pub(crate) mod model;
pub(crate) mod summary;
pub(crate) mod text;
pub(crate) mod unified;

pub use model::{Action, Conflict, Manager, OFFLINE_NOTE, ObjectChange, ObjectId, Report};
pub(crate) use model::{Cause, Change, FailOn, Failure, OverlayReview, Review, Status};

/// An output format (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Unified,
    Summary,
    Json,
    Markdown,
    /// One self-contained HTML page, every section collapsible, no budget.
    Html,
}

/// How a report is written, beyond its format.
#[derive(Clone, Debug)]
pub(crate) struct Style {
    /// ANSI colours in unified diffs.
    pub color: bool,
    /// A review's title (Markdown heading and hidden marker, JSON `title`).
    pub title: String,
    /// A review's Markdown size budget, in characters.
    pub budget: usize,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: false,
            title: "ply diff".into(),
            budget: markdown::DEFAULT_BUDGET,
        }
    }
}

/// A live report as text.
pub(crate) fn write_live(report: &Report, format: Format, style: &Style) -> String {
    match format {
        Format::Unified => unified::live(report, style.color),
        Format::Summary => summary::live(report),
        Format::Json => json::live(report),
        Format::Markdown => markdown::live(report, &style.title, style.budget),
        Format::Html => html::live(report),
    }
}

/// A review as text.
pub(crate) fn write_review(review: &Review, format: Format, style: &Style) -> String {
    match format {
        Format::Unified => unified::review(review, style.color),
        Format::Summary => summary::review(review),
        Format::Json => json::review(review, &style.title),
        Format::Markdown => markdown::review(review, &style.title, style.budget),
        Format::Html => html::review(review, &style.title),
    }
}
