//! The command line of `ply diff` between two renders (`--base REF`, or OLD NEW): its flags,
//! turned into a [`crate::review`] run over the right file systems, and the report written to
//! stdout or `-o FILE`. Owns no rendering or comparing.

use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Warnings};
use crate::fs::git::Repo;
use crate::fs::{CachingDiskFs, Fs};
use crate::review::{self, Overlay, Review, ReviewOptions, Side, report};

use super::{ColorChoice, DiffArgs, DiffFormat};

/// Flags of `ply diff` for comparing two renders.
#[derive(clap::Args, Debug)]
pub struct ReviewArgs {
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
    /// Every kustomization root of the repository: each kustomization no other one includes
    /// (as a resource, component, generator, transformer or validator), components excepted.
    #[arg(long, requires = "base")]
    pub all: bool,
    /// Render only the overlays that read a file that differs between the two sides (the
    /// same report, less work; docs/review.md).
    #[arg(long, requires = "base")]
    pub changed_only: bool,
    /// Only the I-th of N shards of the overlays (in name order, every N-th), for CI matrices.
    #[arg(long, value_name = "I/N", requires = "base")]
    pub shard: Option<String>,
    /// The report's title (Markdown heading and hidden marker).
    #[arg(long, value_name = "TEXT", default_value = "ply diff")]
    pub title: String,
    /// The size budget of the Markdown report, in characters (GitHub's comment limit is
    /// 65,536; GitLab's is 1,000,000).
    #[arg(long, value_name = "CHARS", default_value_t = report::DEFAULT_BUDGET)]
    pub budget: usize,
    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Refuses render-to-render flags in the live mode.
pub fn refuse_review_flags(args: &DiffArgs) -> Result<(), Error> {
    let r = &args.review;
    if r.base.is_some() || r.all || r.changed_only || r.shard.is_some() {
        return Err(usage(
            "--base, --all, --changed-only and --shard compare two renders; they do not go with --live",
        ));
    }
    Ok(())
}

fn usage(m: &str) -> Error {
    Error::new(ErrorKind::Usage, m.to_string())
}

/// Whether the unified diff is coloured.
pub fn color(choice: ColorChoice, to_file: bool) -> bool {
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

/// Writes the report to `output` (atomically) or stdout. A closed stdout (`| head`) is not an
/// error: the exit status stays the diff's.
pub fn emit(text: &str, output: Option<&Path>) -> Result<(), Error> {
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

/// `ply diff --base REF [DIR...]` and `ply diff OLD NEW`.
pub fn run(args: &DiffArgs, warnings: &mut Warnings) -> Result<i32, Error> {
    if args.server_side
        || args.prune
        || args.selector.is_some()
        || args.output_merged.is_some()
        || args.field_manager.is_some()
    {
        return Err(usage(
            "--server-side, --prune, -l, --field-manager and --output-merged predict an apply: they need --live SNAPSHOT",
        ));
    }
    let opts = ReviewOptions {
        render: crate::render::RenderOptions {
            // Files both revisions and all overlays hold alike are parsed once.
            shared: Some(std::sync::Arc::new(crate::render::Shared::default())),
            ..super::diff_render_options(args.load_restrictor, &args.limits, &args.version)
        },
        show_secrets: args.show_secrets,
        changed_only: args.review.changed_only,
        jobs: std::thread::available_parallelism().map_or(1, usize::from),
        describe,
    };
    let review = match &args.review.base {
        Some(base) => against_revision(args, base, &opts)?,
        None => two_sides(args, &opts)?,
    };
    for o in &review.overlays {
        for w in &o.warnings {
            warnings.warn(format!("{}: {w}", o.name));
        }
    }
    let r = &args.review;
    let text = match args.format {
        DiffFormat::Unified => report::unified(&review, color(args.color, r.output.is_some())),
        DiffFormat::Summary => report::summary(&review),
        DiffFormat::Json => report::json(&review, &r.title),
        DiffFormat::Markdown => report::markdown(&review, &r.title, r.budget),
    };
    emit(&text, r.output.as_deref())?;
    Ok(review.exit_code())
}

/// `ply diff OLD NEW`.
fn two_sides(args: &DiffArgs, opts: &ReviewOptions) -> Result<Review, Error> {
    let [old, new] = args.paths.as_slice() else {
        return Err(usage(
            "give --live SNAPSHOT (predict an apply), --base REF (compare with a git revision), or two paths OLD NEW (directories or rendered YAML files)",
        ));
    };
    let disk = CachingDiskFs::default();
    let shown = |p: &Path| crate::source::display_path(p);
    if old.is_dir() && new.is_dir() {
        let overlay = Overlay {
            name: shown(new),
            old: Some(old.clone()),
            new: Some(new.clone()),
        };
        let (a, b) = (
            Side {
                fs: &disk,
                label: shown(old),
            },
            Side {
                fs: &disk,
                label: shown(new),
            },
        );
        return Ok(review::review(&[overlay], &a, &b, opts));
    }
    let objects = |p: &Path| -> Result<Vec<crate::resource::Resource>, Error> {
        if p.is_dir() {
            let mut w = Warnings::default();
            Ok(crate::render::render_with(&disk, p, &opts.render, &mut w)?.resources)
        } else {
            crate::live::read_objects(&crate::fs::read_input(p)?)
        }
    };
    let (a, b) = (objects(old)?, objects(new)?);
    Ok(review::review_objects(
        shown(new),
        (shown(old), a),
        (shown(new), b),
        opts.show_secrets,
    ))
}

/// `ply diff --base REF [--head REF] [DIR...|--all]`.
fn against_revision(args: &DiffArgs, base: &str, opts: &ReviewOptions) -> Result<Review, Error> {
    let r = &args.review;
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Error::io(Path::new("."), &e))?;
    let repo = Repo::discover(&cwd)?;
    let head_rev = r.head.as_deref().map(|h| repo.resolve(h)).transpose()?;
    let given = repo.resolve(base)?;
    let base_rev = if r.base_exact {
        given
    } else {
        let head_commit = match &head_rev {
            Some(h) => h.clone(),
            None => repo.resolve("HEAD")?,
        };
        let mut mb = repo.merge_base(&given, &head_commit)?;
        mb.spec = format!("merge base of {base}");
        mb
    };
    let old_fs = repo.files_at(&base_rev)?;
    let head_git = head_rev.as_ref().map(|h| repo.files_at(h)).transpose()?;
    let disk = CachingDiskFs::default();
    let (new_fs, new_label): (&dyn Fs, String) = match &head_git {
        Some(g) => (g, g.label().to_string()),
        None => (&disk, "working tree".to_string()),
    };
    let root = repo.workdir();
    let new_files = match &head_git {
        Some(g) => g.files(),
        None => repo.tracked_files()?,
    };
    let all_dirs = || {
        (
            crate::render::roots::kustomization_dirs(&old_fs.files()),
            crate::render::roots::kustomization_dirs(&new_files),
        )
    };
    let mut overlays = if r.all {
        if !args.paths.is_empty() {
            return Err(usage("--all finds every overlay: give no DIR with it"));
        }
        let (old_dirs, new_dirs) = all_dirs();
        review::overlays_in(
            root,
            &crate::render::roots::roots(&old_fs, &old_dirs, opts.render.shared.as_deref()),
            &crate::render::roots::roots(new_fs, &new_dirs, opts.render.shared.as_deref()),
        )
    } else {
        named_overlays(args, &cwd, root, &old_fs, new_fs, all_dirs)?
    };
    if let Some(spec) = &r.shard {
        let (i, n) = parse_shard(spec)?;
        overlays = review::shard(overlays, i, n);
    }
    let old_side = Side {
        fs: &old_fs,
        label: old_fs.label().to_string(),
    };
    let new_side = Side {
        fs: new_fs,
        label: new_label,
    };
    Ok(review::review(&overlays, &old_side, &new_side, opts))
}

/// The overlays named on the command line (globs matched against the kustomization
/// directories of both sides), or the current directory.
fn named_overlays(
    args: &DiffArgs,
    cwd: &Path,
    root: &Path,
    old_fs: &dyn Fs,
    new_fs: &dyn Fs,
    all_dirs: impl Fn() -> (
        std::collections::BTreeSet<PathBuf>,
        std::collections::BTreeSet<PathBuf>,
    ),
) -> Result<Vec<Overlay>, Error> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    // Directories taken, by their bytes (comparing `Path`s walks their components: hundreds
    // of overlays matched by a glob made this quadratic scan a fifth of a review's work).
    let mut taken: crate::fasthash::FastSet<Vec<u8>> = Default::default();
    let mut take = |dirs: &mut Vec<PathBuf>, d: &PathBuf| {
        if taken.insert(d.as_os_str().as_encoded_bytes().to_vec()) {
            dirs.push(d.clone());
        }
    };
    let given: Vec<PathBuf> = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let mut known = None;
    for p in &given {
        let text = p.to_string_lossy();
        if text.contains(['*', '?', '[', '{']) {
            let pattern = crate::fs::normalize(&cwd.join(p));
            let glob = globset::Glob::new(&pattern.to_string_lossy())
                .map_err(|e| usage(&format!("'{text}' is not a valid glob: {e}")))?
                .compile_matcher();
            let (old, new) = known.get_or_insert_with(&all_dirs);
            let before = dirs.len();
            for d in old.iter().chain(new.iter()) {
                if glob.is_match(d) {
                    take(&mut dirs, d);
                }
            }
            if dirs.len() == before {
                return Err(usage(&format!(
                    "'{text}' matches no kustomization directory at either side"
                )));
            }
        } else {
            take(&mut dirs, &crate::fs::normalize(&cwd.join(p)));
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        let old = review::has_kustomization(old_fs, &d).then(|| d.clone());
        let new = review::has_kustomization(new_fs, &d).then(|| d.clone());
        if old.is_none() && new.is_none() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "no kustomization in '{}' at either side",
                    crate::source::display_path(&d)
                ),
            ));
        }
        out.push(Overlay {
            name: review::overlay_name(root, &d),
            old,
            new,
        });
    }
    Ok(out)
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
