//! What a render of a kustomization may read, known without rendering it: a walk of the
//! kustomization graph (each kustomization file loaded, nothing built) that lists every path a
//! render would look at — kustomization files and the names probed for them, and every
//! reference of each kustomization (`kustomization::refs`, the one list the render and the
//! reader thread take too): resource files and directories, components, patch, generator,
//! replacement, `openapi`, `crds` and `configurations` files. The list is a superset of what the render asks of its [`Fs`]
//! (`tests/read_set.rs` checks that against recorded renders). Where the graph holds what the
//! walk does not model — plugins, helm charts, remote bases and files, a path that names
//! nothing, a file the restrictor refuses, a kustomization that fails to load — the answer is
//! `None`: only a render can tell.
//!
//! `ply diff --changed-only` compares these paths between two revisions: an overlay none of
//! whose paths differ renders the same at both, so neither side is rendered.

use std::path::{Path, PathBuf};

use super::RenderOptions;
use super::shared::load_kustomization;
use crate::diag::Warnings;
use crate::fasthash::FastSet;
use crate::fs::{FileKind, Fs, check_restriction_shown, join};
use crate::kustomization::load::FILE_NAMES;
use crate::kustomization::{Loaded, RefKind};

/// Every path a render of the kustomization in `dir` may ask `fs` about, or `None` when the
/// walk cannot know them all (see the module's note). Kustomization files are loaded through
/// `opts.shared` when there is one, so a render that follows parses none of them again.
pub fn reads(fs: &dyn Fs, dir: &Path, opts: &RenderOptions) -> Option<Vec<PathBuf>> {
    let mut paths = Vec::new();
    let walked = walk(fs, dir, opts, &mut |p| {
        paths.push(p.to_path_buf());
        true
    });
    (walked == Some(true)).then_some(paths)
}

/// The walk of [`reads`], handing each path to `visit` as it is found: `Some(true)` when
/// every path was visited, `Some(false)` once `visit` says stop (the walk ends with the
/// kustomization it is in), `None` when the walk cannot know every path.
pub(crate) fn walk(
    fs: &dyn Fs,
    dir: &Path,
    opts: &RenderOptions,
    visit: &mut dyn FnMut(&Path) -> bool,
) -> Option<bool> {
    let root = fs.canonicalize(dir).ok()?;
    let mut walk = Walk {
        fs,
        opts,
        visit,
        stopped: false,
        seen: FastSet::default(),
    };
    walk.note(dir);
    walk.note(&root);
    walk.seen.insert(root.clone());
    let mut todo = vec![root];
    while let Some(dir) = todo.pop() {
        let walked = walk.kustomization(&dir, &mut todo);
        if walk.stopped {
            return Some(false);
        }
        walked?;
    }
    Some(true)
}

struct Walk<'a> {
    fs: &'a dyn Fs,
    opts: &'a RenderOptions,
    visit: &'a mut dyn FnMut(&Path) -> bool,
    /// `visit` said stop: nothing more is visited.
    stopped: bool,
    /// Kustomization directories already walked (canonical).
    seen: FastSet<PathBuf>,
}

impl Walk<'_> {
    fn note(&mut self, path: &Path) {
        if !self.stopped && !(self.visit)(path) {
            self.stopped = true;
        }
    }

    /// The paths of the kustomization in `dir` (canonical); the directories it builds go to
    /// `todo`.
    fn kustomization(&mut self, dir: &Path, todo: &mut Vec<PathBuf>) -> Option<()> {
        for name in FILE_NAMES {
            self.note(&dir.join(name));
        }
        let mut warnings = Warnings::default();
        let loaded = load_kustomization(
            self.fs,
            dir,
            self.opts.load_restrictor,
            self.opts.shared.as_deref(),
            &mut warnings,
        )
        .ok()?;
        // The kustomization's references (`kustomization::refs`, the one list of them).
        let refs = loaded.kustomization.refs();
        // Plugins run programs or read their own configuration's files; helm reads a chart.
        if refs.clone().any(|r| r.kind.runs_plugins_or_helm()) {
            return None;
        }
        for r in refs {
            match r.kind {
                // `bases` were merged into `resources` on load.
                RefKind::Resource => match self.entry(dir, r.text)? {
                    FileKind::File => self.file_at(&loaded, r.text)?,
                    FileKind::Dir => self.directory(dir, r.text, todo)?,
                },
                RefKind::Component => {
                    if self.entry(dir, r.text)? != FileKind::Dir {
                        return None;
                    }
                    self.directory(dir, r.text, todo)?;
                }
                // An entry that reads as strategic merge patches is one; anything else names a
                // file (`load_strategic_merge`).
                RefKind::StrategicMergePatch => {
                    if super::patches::strategic_documents(r.text, None).is_err() {
                        self.file_at(&loaded, r.text)?;
                    } else {
                        // The render still asks whether a file of that name is there.
                        self.note(&join(dir, r.text));
                    }
                }
                RefKind::GeneratorFile => {
                    let (_, path) = crate::generate::kv::parse_file_source(r.text).ok()?;
                    self.file_at(&loaded, &path)?;
                }
                // A patch file with an inline patch beside it is listed all the same.
                RefKind::Crds
                | RefKind::Configurations
                | RefKind::OpenApi
                | RefKind::PatchFile { .. }
                | RefKind::Replacements
                | RefKind::EnvFile => self.file_at(&loaded, r.text)?,
                // Refused above.
                RefKind::Generator | RefKind::Transformer | RefKind::Validator | RefKind::Helm => {
                    return None;
                }
            }
        }
        Some(())
    }

    /// What a `resources:` or `components:` entry names, noting the path; `None` when it
    /// names nothing here (missing, or remote).
    fn entry(&mut self, dir: &Path, entry: &str) -> Option<FileKind> {
        if entry.trim().is_empty() {
            return None;
        }
        let target = join(dir, entry);
        let kind = self.fs.kind(&target);
        self.note(&target);
        kind
    }

    /// A kustomization directory named relative to `dir`: noted, and walked once.
    fn directory(&mut self, dir: &Path, entry: &str, todo: &mut Vec<PathBuf>) -> Option<()> {
        if Path::new(entry).is_absolute() {
            return None;
        }
        let canonical = self.fs.canonicalize(&join(dir, entry)).ok()?;
        if self.seen.insert(canonical.clone()) {
            self.note(&canonical);
            todo.push(canonical);
        }
        Some(())
    }

    /// A file named by `loaded`: noted; `None` unless it is a regular file the restrictor
    /// lets the kustomization read (an HTTP(S) URL is remote).
    fn file_at(&mut self, loaded: &Loaded, entry: &str) -> Option<()> {
        if entry.trim().is_empty() || super::accumulate::is_remote_file(entry) {
            return None;
        }
        let target = join(&loaded.dir, entry);
        let kind = self.fs.kind(&target);
        self.note(&target);
        if kind != Some(FileKind::File) {
            return None;
        }
        let canonical = self.fs.canonicalize(&target).ok()?;
        check_restriction_shown(self.opts.load_restrictor, &loaded.dir, &canonical, entry).ok()?;
        self.note(&canonical);
        Some(())
    }
}
