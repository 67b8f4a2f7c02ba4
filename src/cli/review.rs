//! The command line of `ply diff` between two renders (the mode `cli/diff.rs` decides: two
//! revisions, the working tree as two kustomize versions, OLD NEW, merged shard reports): its
//! flags turned into [`crate::review`] options, the report's format and style, and the text
//! written to stdout or `-o FILE` (also for `ply diff --live`). Owns no revisions, overlays,
//! rendering or comparing.

use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Warnings};
use crate::report::{self, Format, Style};
use crate::review::{self, ReviewOptions};

use super::render_options::{RenderUse, render_options};
use super::{ColorChoice, DiffArgs, DiffFormat};

/// Flags of `ply diff` for comparing two renders.
#[derive(clap::Args, Debug)]
pub(crate) struct ReviewArgs {
    /// Compare with the git revision REF: with the merge base of REF and the head (as
    /// `git diff REF...HEAD`), or REF itself with --base-exact. Read from the repository,
    /// without a checkout.
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// The head side: the git revision REF instead of the working tree.
    #[arg(long, value_name = "REF", requires = "base")]
    pub head: Option<String>,
    /// Compare with --base itself, not with its merge base with the head.
    #[arg(long, requires = "base")]
    pub base_exact: bool,
    /// Every kustomization root of the repository (without --base: under the current
    /// directory): each kustomization no other one includes (as a resource, component,
    /// generator, transformer or validator), components excepted.
    #[arg(long)]
    pub all: bool,
    /// Render only the overlays that read a file that differs between the two sides (the
    /// same report, less work; docs/review.md). Ignored when the sides render as different
    /// kustomize versions: every overlay is rendered then.
    #[arg(long)]
    pub changed_only: bool,
    /// Review the repository's GitOps targets instead of its kustomization roots: every Flux
    /// Kustomization (`flux:NS/NAME`) and Argo CD Application (`argo:NAME`) at either
    /// revision, each rendered as its controller renders it (docs/gitops.md). Takes no DIR.
    #[arg(long, requires = "base")]
    pub gitops: bool,
    /// Name, for each changed field, the place that set its new value and whether it changed
    /// in this pull request, linked at the head commit on GitHub or GitLab (the head renders
    /// with field provenance; docs/explain.md). The default with --format markdown, json and
    /// html; the unified and summary formats show no causes.
    #[arg(long)]
    pub why: bool,
    /// No causes: the head renders without field provenance (faster; docs/performance.md).
    #[arg(long, conflicts_with = "why")]
    pub no_why: bool,
    /// Only the I-th of N shards of the overlays (in name order, every N-th), for CI matrices.
    /// A shard pairs no moves between overlays: --merge-reports pairs them over all shards.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// The kustomize release the base side renders as (default: --kustomize-version): with
    /// another version than --kustomize-version, the review shows what a kustomize upgrade
    /// changes. Without --base (and without OLD NEW), both sides are the working tree.
    #[arg(
        long,
        env = "PLY_BASE_KUSTOMIZE_VERSION",
        value_name = "VERSION",
        value_parser = crate::render::KustomizeVersion::parse
    )]
    pub base_kustomize_version: Option<crate::render::KustomizeVersion>,
    /// Which failures are errors (exit 2): `new-errors`, overlays broken by the change (they
    /// render at the base, or fail there otherwise); `not-reviewed`, also those not reviewed
    /// (they read a changed file and fail at both sides); `any-error`, also those broken
    /// before it (the same diagnostic at both sides).
    #[arg(long, value_enum, value_name = "WHICH", default_value = "new-errors")]
    pub fail_on: FailOnArg,
    /// The report's title (Markdown heading and hidden marker).
    #[arg(long, value_name = "TEXT", default_value = "ply diff")]
    pub title: String,
    /// The size budget of the Markdown report, in characters (GitHub's comment limit is
    /// 65,536; GitLab's is 1,000,000).
    #[arg(long, value_name = "CHARS", default_value_t = report::markdown::DEFAULT_BUDGET)]
    pub budget: usize,
    /// Merge the JSON reports of a sharded run (`--shard I/N --format json`, every shard's)
    /// into the one report of the unsharded run, in --format; --title comes from the parts.
    #[arg(long, value_name = "JSON", num_args = 1.., conflicts_with_all = ["base", "all", "changed_only", "shard", "base_kustomize_version"])]
    pub merge_reports: Vec<PathBuf>,
    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--fail-on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FailOnArg {
    /// Only overlays broken by the change.
    NewErrors,
    /// Also overlays broken before the change, and those not reviewed.
    AnyError,
    /// Also overlays not reviewed: they read a changed file and fail at both sides.
    NotReviewed,
}

fn usage(m: &str) -> Error {
    Error::new(ErrorKind::Usage, m.to_string())
}

/// Whether the unified diff is coloured.
pub(super) fn color(choice: ColorChoice, to_file: bool) -> bool {
    use std::io::IsTerminal;
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !to_file
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// The report's format.
pub(super) fn format(f: DiffFormat) -> Format {
    match f {
        DiffFormat::Unified => Format::Unified,
        DiffFormat::Summary => Format::Summary,
        DiffFormat::Json => Format::Json,
        DiffFormat::Markdown => Format::Markdown,
        DiffFormat::Html => Format::Html,
    }
}

/// How the report is written: colours (unified, on a terminal), a review's title and budget.
pub(super) fn style(args: &DiffArgs) -> Style {
    let r = &args.review;
    Style {
        color: color(args.color, r.output.is_some()),
        title: r.title.clone(),
        budget: r.budget,
    }
}

/// Writes the report to `output` (atomically) or stdout. A closed stdout (`| head`) is not an
/// error: the exit status stays the diff's.
pub(super) fn emit(text: &str, output: Option<&Path>) -> Result<(), Error> {
    use std::io::Write;
    if let Some(path) = output {
        return crate::output::write_atomic(path, text.as_bytes());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io(Path::new("<stdout>"), &e)),
    }
}

fn describe(e: &Error) -> String {
    super::render_error(e, false)
}

/// `ply diff` between two renders: the options of the review, the two sides compared by
/// `compare` (as the mode says: two revisions, a kustomize upgrade, two paths), the report.
/// With `annotate`, each overlay broken by the change (and with `--fail-on=any-error`, each
/// broken before it) is also a GitHub `::error` annotation on stderr, at its diagnostic's file
/// and line.
pub(super) fn run(
    args: &DiffArgs,
    errors: super::ErrorFormat,
    warnings: &mut Warnings,
    compare: impl FnOnce(&ReviewOptions) -> Result<report::Review, Error>,
) -> Result<i32, Error> {
    let annotate = super::annotate(errors);
    args.render.build.deprecations(false, warnings);
    let opts = ReviewOptions {
        render: render_options(RenderUse::Review(&args.render)),
        show_secrets: args.show_secrets,
        changed_only: args.review.changed_only,
        base_kustomize: base_version(args),
        jobs: std::thread::available_parallelism().map_or(1, usize::from),
        describe,
        // Only the formats that show causes pay for them.
        why: !args.review.no_why
            && matches!(
                args.format,
                super::DiffFormat::Markdown | super::DiffFormat::Json | super::DiffFormat::Html
            ),
        link: None,
        fail_on: match args.review.fail_on {
            FailOnArg::NewErrors => report::FailOn::NewErrors,
            FailOnArg::AnyError => report::FailOn::AnyError,
            FailOnArg::NotReviewed => report::FailOn::NotReviewed,
        },
        shard: args.review.shard.as_deref().map(parse_shard).transpose()?,
    };
    let review = compare(&opts)?;
    for o in &review.overlays {
        for w in &o.warnings {
            warnings.warn(format!("{}: {w}", o.name));
        }
    }
    let text = report::write_review(&review, format(args.format), &style(args));
    emit(&text, args.review.output.as_deref())?;
    let mut err = std::io::stderr().lock();
    if annotate {
        let _ = std::io::Write::write_all(&mut err, annotations(&review).as_bytes());
    }
    if args.review.all {
        // What the review did, as the last line: the warnings before it.
        super::print_warnings(&std::mem::take(warnings), errors);
        let account = report::text::review_account(&review);
        let _ = std::io::Write::write_all(&mut err, format!("ply diff: {account}\n").as_bytes());
    }
    Ok(review.exit_code())
}

/// `ply diff --merge-reports PART.json...`: the one report of a sharded run.
pub(super) fn merge_reports(args: &DiffArgs, files: &[PathBuf]) -> Result<i32, Error> {
    let mut texts = Vec::new();
    for p in files {
        let file = crate::fs::read_input(p)?;
        texts.push((crate::source::display_path(p), file.text.to_string()));
    }
    let parts: Vec<report::merge::Part<'_>> = texts
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let (review, title) = review::engine::merged(&parts)?;
    let style = Style {
        title,
        ..style(args)
    };
    let text = report::write_review(&review, format(args.format), &style);
    emit(&text, args.review.output.as_deref())?;
    Ok(review.exit_code())
}

/// The annotations of the overlays that are errors.
fn annotations(review: &report::Review) -> String {
    let strict = review.fail_on == report::FailOn::AnyError;
    let mut out = String::new();
    for o in &review.overlays {
        let (f, what) = match &o.status {
            report::Status::HeadFailed(f) => (f, "broken by this change"),
            report::Status::BrokenBefore(f) if strict => (f, "broken before this change"),
            report::Status::NotReviewed(f) if review.fail_on != report::FailOn::NewErrors => {
                (f, "not reviewed")
            }
            _ => continue,
        };
        out.push_str(&super::error_format::annotation(
            f.file.as_deref(),
            f.line,
            &format!("ply diff: {} {what}", o.name),
            &format!("{}: {}", f.code, f.message),
        ));
    }
    out
}

/// The kustomize release the base side of a review renders as (`--base-kustomize-version`,
/// else `--kustomize-version`).
pub(super) fn base_version(args: &DiffArgs) -> crate::render::KustomizeVersion {
    let head = args.render.version.version();
    args.review.base_kustomize_version.unwrap_or(head)
}

/// `I/N`, 1 ≤ I ≤ N.
fn parse_shard(spec: &str) -> Result<(usize, usize), Error> {
    let bad = || {
        usage(&format!(
            "--shard takes I/N with 1 ≤ I ≤ N (like 2/4), not '{spec}'"
        ))
    };
    let (i, n) = spec.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}
