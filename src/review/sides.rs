//! The two sides of a review and the overlays on them: a git revision against the working
//! tree or another revision (`--base REF [--head REF]`, the merge base unless `--base-exact`,
//! read from the object database without a checkout), the working tree against itself (a
//! kustomize upgrade's review: `--base-kustomize-version` other than `--kustomize-version`,
//! no `--base`), or two paths (`OLD NEW`: kustomization directories or rendered YAML files);
//! then the engine's run over them. Opens the repository
//! and names the sides; renders and compares through [`super::engine`].

use std::path::{Path, PathBuf};

use crate::diag::{Error, Warnings};
use crate::fs::git::{GitFs, Repo};
use crate::fs::{CachingDiskFs, Fs};
use crate::report::Review;
use crate::resource::Resource;

use super::engine::{ReviewOptions, Side, review, review_objects};
use super::overlays::{self, Overlay, usage};

/// What `--base REF` compares: the revisions and the overlays asked for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Revisions {
    /// The base revision, as given.
    pub base: String,
    /// The head revision; `None`: the working tree.
    pub head: Option<String>,
    /// Compare with `base` itself, not with its merge base with the head.
    pub base_exact: bool,
    /// Every kustomization root of either side.
    pub all: bool,
    /// The overlays named (directories or globs); none: the current directory.
    pub paths: Vec<PathBuf>,
    /// `--gitops`: the repository's GitOps targets are the overlays, found with these options.
    pub gitops: Option<crate::gitops::Options>,
}

/// A review against a git revision, its sides open and its overlays found: run it (as the
/// shard `opts.shard` names, if one).
pub(crate) struct RevisionPlan {
    old_fs: GitFs,
    head_git: Option<GitFs>,
    /// The short commit ids of the sides (`None`: the working tree), for `ply fetch --revision`.
    old_commit: String,
    head_commit: Option<String>,
    disk: CachingDiskFs,
    /// The overlays to compare, in name order per side.
    pub overlays: Vec<Overlay>,
    /// Where `--why` causes link to (the head commit, on GitHub or GitLab).
    link: Option<super::why::LinkBase>,
}

impl RevisionPlan {
    /// Opens the repository of the current directory, resolves both sides and finds the
    /// overlays.
    pub(crate) fn open(req: &Revisions, opts: &ReviewOptions) -> Result<RevisionPlan, Error> {
        let base = req.base.as_str();
        let cwd = std::env::current_dir()
            .and_then(std::fs::canonicalize)
            .map_err(|e| Error::io(Path::new("."), &e))?;
        let repo = Repo::discover(&cwd)?;
        let head_rev = req.head.as_deref().map(|h| repo.resolve(h)).transpose()?;
        let given = repo.resolve(base)?;
        let base_rev = if req.base_exact {
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
        let new_fs: &dyn Fs = match &head_git {
            Some(g) => g,
            None => &disk,
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
        let overlays = if let Some(g) = &req.gitops {
            let urls: Vec<String> = repo
                .origin_url()
                .into_iter()
                .chain(g.repo_urls.clone())
                .collect();
            let head_id = match &head_rev {
                Some(h) => h.id.clone(),
                None => repo.resolve("HEAD")?.id,
            };
            let side = |files: Vec<PathBuf>, revision: String| super::gitops::SideFiles {
                root: root.to_path_buf(),
                files,
                urls: urls.clone(),
                revision: Some(revision),
            };
            let quiet = &mut Warnings::default();
            let old = super::gitops::Revision::open(
                &old_fs,
                side(old_fs.files(), base_rev.id.clone()),
                g,
                quiet,
            );
            let new =
                super::gitops::Revision::open(new_fs, side(new_files.clone(), head_id), g, quiet);
            gitops_targets(old, new)?
        } else if req.all {
            if !req.paths.is_empty() {
                return Err(usage("--all finds every overlay: give no DIR with it"));
            }
            let (old_dirs, new_dirs) = all_dirs();
            let shared = opts.render.shared.as_deref();
            overlays::overlays_in(
                root,
                &crate::render::roots::roots(&old_fs, &old_dirs, shared),
                &crate::render::roots::roots(new_fs, &new_dirs, shared),
            )
        } else {
            overlays::named(&req.paths, &cwd, root, &old_fs, new_fs, all_dirs)?
        };
        // The head commit (the working tree's HEAD when it is the head side).
        let link = match (opts.why, repo.origin_url()) {
            (true, Some(remote)) => {
                let commit = match &head_rev {
                    Some(h) => Some(h.id.clone()),
                    None => repo.resolve("HEAD").ok().map(|h| h.id),
                };
                commit.map(|commit| super::why::LinkBase {
                    remote,
                    commit,
                    root: root.to_path_buf(),
                })
            }
            _ => None,
        };
        Ok(RevisionPlan {
            old_fs,
            head_git,
            old_commit: base_rev.short().to_string(),
            head_commit: head_rev.as_ref().map(|h| h.short().to_string()),
            disk,
            overlays,
            link,
        })
    }

    /// Renders and compares every overlay at both sides.
    pub(crate) fn run(&self, opts: &ReviewOptions) -> Review {
        let (new_fs, new_label): (&dyn Fs, String) = match &self.head_git {
            Some(g) => (g, g.label().to_string()),
            None => (&self.disk, "working tree".to_string()),
        };
        let old_side = Side {
            fs: &self.old_fs,
            label: self.old_fs.label().to_string(),
            fetch: fetch_command(Some(&self.old_commit)),
        };
        let new_side = Side {
            fs: new_fs,
            label: new_label,
            fetch: fetch_command(self.head_commit.as_deref()),
        };
        let opts = &ReviewOptions {
            link: self.link.clone(),
            ..opts.clone()
        };
        review(&sharded(&self.overlays, opts), &old_side, &new_side, opts)
    }
}

/// The overlays of `opts.shard` (`--shard I/N`), or all of them.
fn sharded(all: &[Overlay], opts: &ReviewOptions) -> Vec<Overlay> {
    match opts.shard {
        Some((index, count)) => overlays::shard(all.to_vec(), index, count),
        None => all.to_vec(),
    }
}

/// A kustomize upgrade's review of the working tree: the same files on both sides (the
/// overlays named, or with `all` every kustomization root under the current directory), the
/// sides rendered as two kustomize versions.
pub(crate) struct WorkingTreePlan {
    disk: CachingDiskFs,
    /// The overlays to compare, in name order.
    pub overlays: Vec<Overlay>,
}

impl WorkingTreePlan {
    /// Finds the overlays under the current directory (their names are relative to it).
    pub(crate) fn open(
        all: bool,
        paths: &[PathBuf],
        opts: &ReviewOptions,
    ) -> Result<WorkingTreePlan, Error> {
        let cwd = std::env::current_dir()
            .and_then(std::fs::canonicalize)
            .map_err(|e| Error::io(Path::new("."), &e))?;
        let disk = CachingDiskFs::default();
        let all_dirs = || {
            let files = crate::fs::files_under(&cwd).unwrap_or_default();
            let dirs = crate::render::roots::kustomization_dirs(&files);
            (dirs.clone(), dirs)
        };
        let overlays = if all {
            if !paths.is_empty() {
                return Err(usage("--all finds every overlay: give no DIR with it"));
            }
            let files = crate::fs::files_under(&cwd).map_err(|e| Error::io(&cwd, &e))?;
            let dirs = crate::render::roots::kustomization_dirs(&files);
            let roots = crate::render::roots::roots(&disk, &dirs, opts.render.shared.as_deref());
            overlays::overlays_in(&cwd, &roots, &roots)
        } else {
            overlays::named(paths, &cwd, &cwd, &disk, &disk, all_dirs)?
        };
        Ok(WorkingTreePlan { disk, overlays })
    }

    /// Renders every overlay as both versions and compares.
    pub(crate) fn run(&self, opts: &ReviewOptions) -> Review {
        let side = || Side {
            fs: &self.disk,
            label: "working tree".to_string(),
            fetch: fetch_command(None),
        };
        review(&sharded(&self.overlays, opts), &side(), &side(), opts)
    }
}

/// The command that fetches what the locks of a side pin: at the commit `revision`, or in
/// the working tree.
fn fetch_command(revision: Option<&str>) -> String {
    match revision {
        Some(commit) => format!("ply fetch --revision {commit} --all"),
        None => "ply fetch --all".to_string(),
    }
}

/// `ply diff OLD NEW`: two kustomization directories (one overlay, rendered at both), or
/// rendered YAML files (either side may be one, a directory being rendered).
pub(crate) fn two_paths(old: &Path, new: &Path, opts: &ReviewOptions) -> Result<Review, Error> {
    let disk = CachingDiskFs::default();
    let shown = |p: &Path| crate::source::display_path(p);
    if old.is_dir() && new.is_dir() {
        let overlay = Overlay {
            name: shown(new),
            old: Some(old.to_path_buf()),
            new: Some(new.to_path_buf()),
            kind: overlays::Kind::Kustomize,
        };
        let (a, b) = (
            Side {
                fs: &disk,
                label: shown(old),
                fetch: format!("ply fetch {}", shown(old)),
            },
            Side {
                fs: &disk,
                label: shown(new),
                fetch: format!("ply fetch {}", shown(new)),
            },
        );
        return Ok(review(&[overlay], &a, &b, opts));
    }
    let objects = |p: &Path, kustomize| -> Result<Vec<Resource>, Error> {
        if p.is_dir() {
            let mut w = Warnings::default();
            let render = crate::render::RenderOptions {
                kustomize,
                ..opts.render.clone()
            };
            Ok(crate::render::render_with(&disk, p, &render, &mut w)?.resources)
        } else {
            crate::live::read_objects(&crate::fs::read_input(p)?)
        }
    };
    let (a, b) = (
        objects(old, opts.base_kustomize)?,
        objects(new, opts.render.kustomize)?,
    );
    Ok(review_objects(
        shown(new),
        (shown(old), a),
        (shown(new), b),
        opts.show_secrets,
    ))
}

/// The GitOps targets of a `--gitops` review, or the error that there are none: nothing to
/// review is never "no changes".
fn gitops_targets(
    old: super::gitops::Revision,
    new: super::gitops::Revision,
) -> Result<Vec<overlays::Overlay>, Error> {
    let targets = overlays::gitops(std::sync::Arc::new(old), std::sync::Arc::new(new));
    if targets.is_empty() {
        return Err(usage(
            "--gitops found no Flux Kustomization and no Argo CD Application at either revision: \
             review the kustomization roots without --gitops (`ply gitops list` shows what \
             discovery finds)",
        ));
    }
    Ok(targets)
}
