//! `ply diff`'s mode, decided once from its arguments, which are validated on the way (which
//! flags go with which mode, and what each mode needs), and the one dispatch on it; the
//! `--live` report written. Owns no prediction, revisions or rendering.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Warnings};
use crate::diff::sides::LiveRequest;
use crate::diff::{DiffOptions, Mode, Prune, Selector};
use crate::review::Revisions;

use super::render_options::{RenderUse, render_options};
use super::{DiffArgs, DiffFormat, ErrorFormat, review};

/// What `ply diff` was asked to do.
#[derive(Debug)]
pub(super) enum DiffMode {
    /// `DESIRED --live SNAPSHOT`: predict what `kubectl apply` would change.
    Live(LiveRequest),
    /// `--base REF [--head REF] [DIR… | --all]`: render against render between two git
    /// revisions (or a revision and the working tree), overlay by overlay.
    Revisions(Revisions),
    /// `--base-kustomize-version VERSION [DIR… | --all]` without `--base`: the working tree
    /// rendered as two kustomize versions.
    Upgrade { all: bool, paths: Vec<PathBuf> },
    /// `OLD NEW`: two kustomization directories or rendered files.
    TwoPaths { old: PathBuf, new: PathBuf },
    /// `--merge-reports PART.json…`: the one report of a sharded run.
    MergeReports(Vec<PathBuf>),
}

impl DiffMode {
    /// The mode the arguments ask for, or the usage error that says what is wrong.
    pub(super) fn of(args: &DiffArgs) -> Result<DiffMode, Error> {
        match &args.live {
            Some(snapshot) => live(args, snapshot).map(DiffMode::Live),
            None => review_mode(args),
        }
    }
}

/// Runs `ply diff`, and returns its exit status.
pub(super) fn run(
    args: &DiffArgs,
    errors: ErrorFormat,
    warnings: &mut Warnings,
) -> Result<i32, Error> {
    use crate::review::{RevisionPlan, WorkingTreePlan, two_paths};
    match DiffMode::of(args)? {
        DiffMode::Live(req) => run_live(args, &req, warnings),
        DiffMode::Revisions(mut req) => review::run(args, errors, warnings, |opts| {
            if args.review.gitops {
                req.gitops = Some(args.gitops.options(opts.render.clone())?);
            }
            Ok(RevisionPlan::open(&req, opts)?.run(opts))
        }),
        DiffMode::Upgrade { all, paths } => review::run(args, errors, warnings, |opts| {
            Ok(WorkingTreePlan::open(all, &paths, opts)?.run(opts))
        }),
        DiffMode::TwoPaths { old, new } => {
            review::run(args, errors, warnings, |opts| two_paths(&old, &new, opts))
        }
        DiffMode::MergeReports(parts) => review::merge_reports(args, &parts),
    }
}

fn usage(m: &str) -> Error {
    Error::new(ErrorKind::Usage, m.to_string())
}

/// The modes that compare two renders, from the flags that choose them: `--merge-reports`,
/// `--base`, a base kustomize version other than the head's (without two paths, or with
/// `--all`), else two paths.
fn review_mode(args: &DiffArgs) -> Result<DiffMode, Error> {
    if args.server_side
        || args.prune
        || args.selector.is_some()
        || args.output_merged.is_some()
        || args.field_manager.is_some()
        || args.assume_complete
    {
        return Err(usage(
            "--server-side, --prune, -l, --field-manager, --output-merged and --assume-complete predict an apply: they need --live SNAPSHOT",
        ));
    }
    let r = &args.review;
    if !r.merge_reports.is_empty() {
        if !args.paths.is_empty() {
            return Err(usage(
                "--merge-reports takes the shards' JSON reports and no DIR: the overlays are theirs",
            ));
        }
        return Ok(DiffMode::MergeReports(r.merge_reports.clone()));
    }
    let upgrade = review::base_version(args) != args.render.version.version();
    if let Some(base) = &r.base {
        if r.gitops && !args.paths.is_empty() {
            return Err(usage(
                "--gitops reviews every GitOps target of the repository: give no DIR with it",
            ));
        }
        return Ok(DiffMode::Revisions(Revisions {
            base: base.clone(),
            head: r.head.clone(),
            base_exact: r.base_exact,
            all: r.all,
            paths: args.paths.clone(),
            gitops: None,
        }));
    }
    // A kustomize upgrade of the working tree: the same files on both sides, unless two paths
    // OLD NEW are given (without --all).
    if upgrade && (r.all || args.paths.len() != 2) {
        return Ok(DiffMode::Upgrade {
            all: r.all,
            paths: args.paths.clone(),
        });
    }
    if r.all || r.changed_only || r.shard.is_some() {
        return Err(usage(
            "--all, --changed-only and --shard need --base REF (or a --base-kustomize-version other than --kustomize-version, to review a kustomize upgrade of the working tree)",
        ));
    }
    let [old, new] = args.paths.as_slice() else {
        return Err(usage(
            "give --live SNAPSHOT (predict an apply), --base REF (compare with a git revision), --base-kustomize-version VERSION (review a kustomize upgrade), or two paths OLD NEW (directories or rendered YAML files)",
        ));
    };
    Ok(DiffMode::TwoPaths {
        old: old.clone(),
        new: new.clone(),
    })
}

/// `DESIRED --live SNAPSHOT`, validated: no flag of a review, one DESIRED, stdin read once,
/// `--prune` with a selector (or `--prune-all`), the selector parsed, kubectl's field manager.
fn live(args: &DiffArgs, snapshot: &Path) -> Result<LiveRequest, Error> {
    refuse_review_flags(args)?;
    let desired = match args.paths.as_slice() {
        [one] => one,
        _ => {
            return Err(usage(
                "with --live, give exactly one DESIRED (a kustomization directory, a file, or -)",
            ));
        }
    };
    if desired.as_os_str() == "-" && snapshot.as_os_str() == "-" {
        return Err(usage("DESIRED and --live cannot both read stdin"));
    }
    if args.prune && args.selector.is_none() && !args.prune_all {
        // kubectl's rule: pruning everything must be asked for explicitly.
        return Err(usage("--prune needs a label selector (-l) or --prune-all"));
    }
    let selector = args.selector.as_deref().map(Selector::parse).transpose()?;
    let options = DiffOptions {
        mode: if args.server_side {
            Mode::ServerSide {
                force_conflicts: args.force_conflicts,
            }
        } else {
            Mode::ClientSide
        },
        field_manager: args.field_manager.clone().unwrap_or_else(|| {
            if args.server_side {
                "kubectl".into()
            } else {
                "kubectl-client-side-apply".into()
            }
        }),
        namespace: args.namespace.clone(),
        prune: match (&selector, args.prune, args.prune_all) {
            (_, false, _) => Prune::Off,
            (_, true, true) => Prune::All,
            (Some(s), true, false) => Prune::Selector(s.clone()),
            (None, true, false) => Prune::Off,
        },
        show_managed_fields: args.show_managed_fields,
        show_last_applied: args.show_last_applied,
        show_secrets: args.show_secrets,
        assume_complete: args.assume_complete,
    };
    Ok(LiveRequest {
        desired: desired.clone(),
        snapshot: snapshot.to_path_buf(),
        selector,
        options,
    })
}

/// Refuses render-to-render flags in the live mode.
fn refuse_review_flags(args: &DiffArgs) -> Result<(), Error> {
    let r = &args.review;
    if r.base.is_some()
        || r.all
        || r.changed_only
        || r.why
        || r.no_why
        || r.shard.is_some()
        || r.base_kustomize_version.is_some()
        || !r.merge_reports.is_empty()
    {
        return Err(usage(
            "--base, --all, --changed-only, --why, --no-why, --shard, --base-kustomize-version and --merge-reports compare two renders; they do not go with --live",
        ));
    }
    Ok(())
}

/// `ply diff DESIRED --live SNAPSHOT`: the prediction, the merged objects (`--output-merged`),
/// the report, and on stderr the conflicts and the offline note.
fn run_live(args: &DiffArgs, req: &LiveRequest, warnings: &mut Warnings) -> Result<i32, Error> {
    if req.renders() {
        args.render.build.deprecations(false, warnings);
    }
    let render = render_options(RenderUse::Live(&args.render));
    let report = crate::diff::sides::predict(req, &render, warnings)?;
    if let Some(path) = &args.output_merged {
        let text = crate::yaml::emit_documents(
            report.merged_objects(),
            crate::yaml::EmitOptions::default(),
        );
        crate::output::write_atomic(path, text.as_bytes())?;
    }
    let text =
        crate::report::write_live(&report, review::format(args.format), &review::style(args));
    review::emit(&text, args.review.output.as_deref())?;
    let mut err = std::io::stderr().lock();
    for m in report.conflict_messages() {
        let _ = writeln!(err, "error: {m}");
    }
    if matches!(args.format, DiffFormat::Unified | DiffFormat::Summary) {
        let _ = writeln!(err, "note: {}", crate::diff::OFFLINE_NOTE);
    }
    Ok(report.exit_code())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn mode(line: &str) -> Result<DiffMode, Error> {
        let words = std::iter::once("ply").chain(line.split_whitespace());
        let cli = Cli::try_parse_from(words).unwrap_or_else(|e| panic!("{line}: {e}"));
        let Command::Diff(args) = cli.command else {
            panic!("{line}: not ply diff");
        };
        DiffMode::of(&args)
    }

    fn refused(line: &str) -> String {
        match mode(line) {
            Ok(m) => panic!("{line}: {m:?}"),
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::Usage, "{line}");
                e.message
            }
        }
    }

    #[test]
    fn each_mode_from_the_flags_that_choose_it() {
        let Ok(DiffMode::Live(req)) = mode("diff d --live s.yaml -l app=web --prune") else {
            panic!("live");
        };
        assert_eq!(
            (req.desired.as_os_str(), req.snapshot.as_os_str()),
            ("d".as_ref(), "s.yaml".as_ref())
        );
        assert!(req.selector.is_some());
        assert!(matches!(req.options.prune, Prune::Selector(_)));
        assert_eq!(req.options.field_manager, "kubectl-client-side-apply");
        let Ok(DiffMode::Live(req)) = mode("diff - --live s.yaml --server-side --assume-complete")
        else {
            panic!("live, server-side");
        };
        assert_eq!(
            req.options.mode,
            Mode::ServerSide {
                force_conflicts: false
            }
        );
        assert_eq!(req.options.field_manager, "kubectl");
        assert!(req.options.assume_complete);
        let Ok(DiffMode::Revisions(r)) = mode("diff --base main --all a b") else {
            panic!("revisions");
        };
        assert_eq!((r.base.as_str(), r.all, r.paths.len()), ("main", true, 2));
        // `--base` wins over an upgrade: both sides at their revisions, as two versions.
        let m = mode("diff --base main --base-kustomize-version 5.5.0 --kustomize-version 5.8.1");
        assert!(matches!(m, Ok(DiffMode::Revisions(_))));
        let m = mode("diff --base-kustomize-version 5.5.0 --kustomize-version 5.8.1 --all");
        assert!(matches!(m, Ok(DiffMode::Upgrade { all: true, .. })));
        let m = mode("diff --base-kustomize-version 5.5.0 --kustomize-version 5.8.1 overlays/prod");
        assert!(matches!(m, Ok(DiffMode::Upgrade { all: false, paths }) if paths.len() == 1));
        // Two paths with two versions: the old one rendered as the base version.
        let m = mode("diff --base-kustomize-version 5.5.0 --kustomize-version 5.8.1 old new");
        assert!(matches!(m, Ok(DiffMode::TwoPaths { .. })));
        // The same version twice is no upgrade.
        let m = mode("diff --base-kustomize-version 5.8.1 --kustomize-version 5.8.1 old new");
        assert!(matches!(m, Ok(DiffMode::TwoPaths { .. })));
        let Ok(DiffMode::TwoPaths { old, new }) = mode("diff old new") else {
            panic!("two paths");
        };
        assert_eq!(
            (old.as_os_str(), new.as_os_str()),
            ("old".as_ref(), "new".as_ref())
        );
        let m = mode("diff --merge-reports a.json b.json --format markdown");
        assert!(matches!(m, Ok(DiffMode::MergeReports(p)) if p.len() == 2));
    }

    #[test]
    fn flags_of_another_mode_are_refused() {
        for line in [
            "diff d --live s.yaml --base main",
            "diff d --live s.yaml --why",
            "diff d --live s.yaml --base-kustomize-version 5.5.0",
        ] {
            assert!(refused(line).contains("do not go with --live"), "{line}");
        }
        for line in [
            "diff old new --server-side",
            "diff old new --assume-complete",
            "diff --base main -l app=web",
            "diff --merge-reports a.json --output-merged m.yaml",
        ] {
            assert!(refused(line).contains("need --live SNAPSHOT"), "{line}");
        }
        assert!(refused("diff a b --live s.yaml").contains("exactly one DESIRED"));
        assert!(refused("diff - --live -").contains("cannot both read stdin"));
        assert!(refused("diff d --live s.yaml --prune").contains("--prune needs"));
        assert!(refused("diff dir --merge-reports a.json").contains("no DIR"));
        assert!(refused("diff old new --changed-only").contains("need --base REF"));
        assert!(refused("diff --all").contains("need --base REF"));
        assert!(refused("diff one").contains("two paths OLD NEW"));
        assert!(refused("diff").contains("two paths OLD NEW"));
    }
}
