//! Files of a git revision, read straight from the repository's object database: [`Repo`]
//! finds a repository and resolves revisions (and merge bases), [`GitFs`] is the [`Fs`] of one
//! commit's tree, laid over the repository's working-tree path so that a render at a revision
//! sees the same absolute paths (and prints the same diagnostics) as one on disk. No checkout:
//! the working tree and the index are never touched. The only module that names `gix`.
//!
//! As on disk: symlinks are followed (a link leaving the repository cannot be, at a revision:
//! nothing is there); files are the blobs' bytes as committed, with no `.gitattributes`
//! conversion (kustomize reads the working tree, where a checkout may have converted line
//! endings; ply's YAML reading treats `\r\n` and `\n` alike). A submodule cannot be read at a
//! revision: it, and every path under it, reads as an error naming it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::diag::{Error, ErrorKind, Result};
use crate::fasthash::FastMap;
use crate::fs::{FileKind, Fs, normalize};
use crate::source::display_path;

/// A git repository found from a directory inside its working tree.
pub(crate) struct Repo {
    repo: gix::ThreadSafeRepository,
    /// The working tree's canonical path: where a revision's files are laid.
    workdir: PathBuf,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("workdir", &self.workdir)
            .finish()
    }
}

/// A commit, as resolved from what the user wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Revision {
    /// What the user wrote (`main`, `HEAD~1`, a sha), or how it was found (`merge base of …`).
    pub spec: String,
    /// The commit's full hexadecimal id.
    pub id: String,
    oid: gix::ObjectId,
}

impl Revision {
    /// The first 12 hexadecimal digits of the commit id.
    pub(crate) fn short(&self) -> &str {
        self.id.get(..12).unwrap_or(&self.id)
    }
}

fn git_error(message: String) -> Error {
    Error::new(ErrorKind::Io, message)
}

impl Repo {
    /// The repository whose working tree holds `dir` (searching upwards, as git does).
    pub(crate) fn discover(dir: &Path) -> Result<Repo> {
        let repo = gix::discover(dir).map_err(|e| {
            git_error(format!(
                "'{}' is not inside a git repository: {e}",
                display_path(dir)
            ))
            .help("--base reads the revision from the repository of the working directory; run ply inside it, or compare two directories with `ply diff OLD NEW`")
        })?;
        let workdir = repo
            .workdir()
            .ok_or_else(|| {
                git_error(format!(
                    "the repository at '{}' has no working tree (a bare repository)",
                    display_path(repo.git_dir())
                ))
            })?
            .to_path_buf();
        let workdir = std::fs::canonicalize(&workdir).map_err(|e| Error::io(&workdir, &e))?;
        Ok(Repo {
            repo: repo.into_sync(),
            workdir,
        })
    }

    /// The working tree's canonical path.
    pub(crate) fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The URL of the `origin` remote, if the repository's configuration names one (links
    /// of the review's field causes).
    pub(crate) fn origin_url(&self) -> Option<String> {
        let repo = self.repo.to_thread_local();
        let config = repo.config_snapshot();
        config.string("remote.origin.url").map(|s| s.to_string())
    }

    /// The commit `spec` names (`git rev-parse SPEC^{commit}`).
    pub(crate) fn resolve(&self, spec: &str) -> Result<Revision> {
        let repo = self.repo.to_thread_local();
        let not_found = |e: &dyn std::fmt::Display| {
            git_error(format!("cannot resolve the git revision '{spec}': {e}")).help(
                "name a branch, tag or commit of this repository (in CI, fetch the base branch first: `git fetch origin main`, or check out with `fetch-depth: 0`)",
            )
        };
        let id = repo
            .rev_parse_single(spec)
            .map_err(|e| not_found(&e))?
            .object()
            .map_err(|e| not_found(&e))?
            .peel_to_commit()
            .map_err(|e| not_found(&e))?
            .id;
        Ok(Revision {
            spec: spec.to_string(),
            id: id.to_string(),
            oid: id,
        })
    }

    /// The best common ancestor of two commits (`git merge-base A B`), as `git diff A...B`
    /// compares with.
    pub(crate) fn merge_base(&self, a: &Revision, b: &Revision) -> Result<Revision> {
        let repo = self.repo.to_thread_local();
        let id = repo.merge_base(a.oid, b.oid).map_err(|e| {
            git_error(format!(
                "no merge base of '{}' and '{}': {e}",
                a.spec, b.spec
            ))
            .help("pass --base-exact to compare with the revision itself, or fetch more history (a shallow clone may lack the common ancestor)")
        })?;
        let id = id.detach();
        Ok(Revision {
            spec: format!("merge-base({}, {})", a.spec, b.spec),
            id: id.to_string(),
            oid: id,
        })
    }

    /// The files git tracks in the working tree (the index, as `git ls-files`), by absolute
    /// path, sorted; those deleted from the disk and submodules left out.
    pub(crate) fn tracked_files(&self) -> Result<Vec<PathBuf>> {
        let repo = self.repo.to_thread_local();
        let index = repo.index_or_empty().map_err(|e| {
            git_error(format!(
                "cannot read the git index of '{}': {e}",
                display_path(&self.workdir)
            ))
        })?;
        let mut out: Vec<PathBuf> = index
            .entries()
            .iter()
            .filter(|e| e.mode != gix::index::entry::Mode::COMMIT)
            .map(|e| {
                let rel = String::from_utf8_lossy(e.path(&index)).into_owned();
                crate::fs::join(&self.workdir, &rel)
            })
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The files of `rev`, laid over the working tree's path.
    pub(crate) fn files_at(&self, rev: &Revision) -> Result<GitFs> {
        let repo = self.repo.to_thread_local();
        let failed = |e: &dyn std::fmt::Display| {
            git_error(format!(
                "cannot read the tree of {} ({}): {e}",
                rev.spec,
                rev.short()
            ))
        };
        let records = {
            let commit = repo
                .find_object(rev.oid)
                .map_err(|e| failed(&e))?
                .peel_to_commit()
                .map_err(|e| failed(&e))?;
            let tree = commit.tree().map_err(|e| failed(&e))?;
            tree.traverse()
                .breadthfirst
                .files()
                .map_err(|e| failed(&e))?
        };
        let mut entries: FastMap<Vec<u8>, Entry> = FastMap::default();
        for r in records {
            let rel = String::from_utf8_lossy(&r.filepath).into_owned();
            let path = crate::fs::join(&self.workdir, &rel);
            let entry = if r.mode.is_tree() {
                Entry::Dir
            } else if r.mode.is_commit() {
                Entry::Submodule
            } else if r.mode.is_link() {
                let target = repo.find_object(r.oid).map_err(|e| failed(&e))?.detach();
                Entry::Symlink(PathBuf::from(
                    String::from_utf8_lossy(&target.data).into_owned(),
                ))
            } else {
                Entry::File(r.oid)
            };
            entries.insert(path.into_os_string().into_encoded_bytes(), entry);
        }
        let submodules = entries.values().any(|e| matches!(e, Entry::Submodule));
        Ok(GitFs {
            submodules,
            root: self.workdir.clone(),
            label: format!("{} ({})", rev.spec, rev.short()),
            entries,
            repo: Mutex::new(repo),
            blobs: Mutex::default(),
            resolved: Mutex::default(),
        })
    }
}

#[derive(Clone, Debug)]
enum Entry {
    File(gix::ObjectId),
    Dir,
    Symlink(PathBuf),
    Submodule,
}

/// The files of one commit, at the working tree's path.
pub(crate) struct GitFs {
    /// Whether the tree holds a submodule at all (most do not: no path then needs checking).
    submodules: bool,
    root: PathBuf,
    label: String,
    /// What is at each path of the tree, by the absolute path's bytes.
    entries: FastMap<Vec<u8>, Entry>,
    repo: Mutex<gix::Repository>,
    /// Blobs read so far (a base file shared by many overlays is inflated once).
    blobs: Mutex<FastMap<gix::ObjectId, Arc<Vec<u8>>>>,
    /// Paths resolved so far, by the path's bytes as asked: where they lead (renders of many
    /// overlays ask about the same base paths again and again).
    resolved: Mutex<FastMap<Vec<u8>, PathBuf>>,
}

impl std::fmt::Debug for GitFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitFs")
            .field("root", &self.root)
            .field("label", &self.label)
            .field("entries", &self.entries.len())
            .finish()
    }
}

/// What is at a resolved path.
enum At<'a> {
    Entry(&'a Entry),
    /// The repository's directory or one above it.
    Ancestor,
    Nothing,
}

impl GitFs {
    /// `main (0123456789ab)`: which revision this is, for messages.
    pub(crate) fn label(&self) -> &str {
        &self.label
    }

    /// The regular files and symlinks of the revision, by absolute path, sorted.
    pub(crate) fn files(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .entries
            .iter()
            .filter(|(_, e)| matches!(e, Entry::File(_) | Entry::Symlink(_)))
            .map(|(p, _)| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect();
        out.sort();
        out
    }

    fn at(&self, path: &Path) -> At<'_> {
        if let Some(e) = self.entries.get(path.as_os_str().as_encoded_bytes()) {
            return At::Entry(e);
        }
        if self.root.starts_with(path) {
            At::Ancestor
        } else {
            At::Nothing
        }
    }

    fn submodule_error(&self, submodule: &Path) -> io::Error {
        io::Error::other(format!(
            "'{}' is a git submodule; ply cannot read submodules at a revision ({})",
            display_path(submodule),
            self.label
        ))
    }

    /// The path with every symlink followed, and what is there ([`GitFs::walk`], remembered).
    fn resolve(&self, path: &Path) -> io::Result<(PathBuf, Option<&Entry>)> {
        let key = path.as_os_str().as_encoded_bytes();
        if let Some(canonical) = self.resolved.lock().ok().and_then(|m| m.get(key).cloned()) {
            // The walk ends with the entry at the path it reached.
            let entry = self.entries.get(canonical.as_os_str().as_encoded_bytes());
            return Ok((canonical, entry));
        }
        let (canonical, entry) = match self.step(path) {
            Some(found) => found?,
            None => self.walk(path)?,
        };
        if let Ok(mut m) = self.resolved.lock() {
            m.insert(key.to_vec(), canonical.clone());
        }
        Ok((canonical, entry))
    }

    /// [`GitFs::walk`] in one step from the resolved parent, for a normalized path whose last
    /// name is no symlink or submodule (`None`: walk it whole). Renders ask about many names
    /// in the same directories, so the walks from `/` are mostly saved.
    fn step(&self, path: &Path) -> Option<io::Result<(PathBuf, Option<&Entry>)>> {
        let bytes = path.as_os_str().as_encoded_bytes();
        let dotted = bytes.windows(2).any(|w| w == b"/.") || bytes.ends_with(b"/");
        if dotted || !path.is_absolute() {
            return None;
        }
        let (parent, name) = (path.parent()?, path.file_name()?);
        let not_found = || {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no such file or directory at {}", self.label),
            )
        };
        let (dir, here) = match self.resolve(parent) {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        if matches!(here, Some(Entry::File(_))) {
            return Some(Err(not_found()));
        }
        let next = dir.join(name);
        match self.at(&next) {
            At::Nothing => Some(Err(not_found())),
            At::Ancestor => Some(Ok((next, None))),
            At::Entry(Entry::Symlink(_) | Entry::Submodule) => None,
            At::Entry(e) => Some(Ok((next, Some(e)))),
        }
    }

    /// The path with every symlink followed, and what is there. Walks from `/` as the system
    /// does; a path through a submodule stops there.
    fn walk(&self, path: &Path) -> io::Result<(PathBuf, Option<&Entry>)> {
        let rules = super::links::Rules {
            normalize: true,
            dotdot_after_file: true,
        };
        super::links::follow(&GitTree(self), path, rules)
    }

    /// The submodule at or above `path`, if any (the path is then unreadable).
    fn submodule_of(&self, path: &Path) -> Option<PathBuf> {
        if !self.submodules {
            return None;
        }
        let mut p = normalize(path);
        loop {
            if matches!(
                self.entries.get(p.as_os_str().as_encoded_bytes()),
                Some(Entry::Submodule)
            ) {
                return Some(p);
            }
            if !p.pop() {
                return None;
            }
        }
    }
}

/// [`GitFs`] as the symlink walk sees it: a submodule on the way is an error naming it.
struct GitTree<'a>(&'a GitFs);

impl<'a> super::links::LinkTree for GitTree<'a> {
    type Entry = &'a Entry;
    fn at(&self, path: &Path) -> io::Result<super::links::At<'_, &'a Entry>> {
        use super::links::At as Walk;
        Ok(match self.0.at(path) {
            At::Nothing => Walk::Nothing,
            At::Ancestor => Walk::Here(None),
            At::Entry(Entry::Submodule) => return Err(self.0.submodule_error(path)),
            At::Entry(Entry::Symlink(target)) => Walk::Link(target),
            At::Entry(e) => Walk::Here(Some(e)),
        })
    }
    fn entry(&self, path: &Path) -> Option<&'a Entry> {
        match self.0.at(path) {
            At::Entry(e) => Some(e),
            _ => None,
        }
    }
    fn is_file(entry: &'a Entry) -> bool {
        matches!(entry, Entry::File(_))
    }
    fn not_found(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("no such file or directory at {}", self.0.label),
        )
    }
}

impl Fs for GitFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if let Some(sub) = self.submodule_of(path) {
            return Err(self.submodule_error(&sub));
        }
        let (_, entry) = self.resolve(path)?;
        let oid = match entry {
            Some(Entry::File(oid)) => *oid,
            _ => return Err(io::Error::other("is a directory")),
        };
        if let Some(b) = self.blobs.lock().ok().and_then(|m| m.get(&oid).cloned()) {
            return Ok(b.to_vec());
        }
        let data = {
            let repo = self
                .repo
                .lock()
                .map_err(|_| io::Error::other("the git reader failed earlier"))?;
            let object = repo.find_object(oid).map_err(|e| {
                io::Error::other(format!("cannot read blob {oid} at {}: {e}", self.label))
            })?;
            object.data.clone()
        };
        let data = Arc::new(data);
        if let Ok(mut m) = self.blobs.lock() {
            m.insert(oid, Arc::clone(&data));
        }
        Ok(data.to_vec())
    }

    /// Compares the blob id recorded in the tree with the id of `bytes`: no blob is
    /// inflated (`ply diff --changed-only` asks this of every file an overlay reads).
    fn holds(&self, path: &Path, bytes: &[u8]) -> Option<bool> {
        if self.submodule_of(path).is_some() {
            return None;
        }
        let Ok((_, Some(Entry::File(oid)))) = self.resolve(path) else {
            return None;
        };
        if oid.kind() != gix::hash::Kind::Sha1 {
            let id = gix::objs::compute_hash(oid.kind(), gix::objs::Kind::Blob, bytes).ok()?;
            return Some(id == *oid);
        }
        // A blob's id is the SHA-1 of `blob <size>\0` and the bytes.
        use sha1::Digest;
        let mut hasher = sha1::Sha1::new();
        hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
        hasher.update(bytes);
        Some(hasher.finalize().as_slice() == oid.as_bytes())
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        // A submodule and what is under it read as unreadable files, so that a render that
        // names them fails on reading, with the error naming the submodule.
        if self.submodule_of(path).is_some() {
            return Some(FileKind::File);
        }
        match self.resolve(path).ok()? {
            (_, Some(Entry::File(_))) => Some(FileKind::File),
            (_, Some(Entry::Dir) | None) => Some(FileKind::Dir),
            (_, Some(_)) => None,
        }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        if let Some(sub) = self.submodule_of(path) {
            if sub != normalize(path) {
                return Err(self.submodule_error(&sub));
            }
            return Ok(sub);
        }
        self.resolve(path).map(|(p, _)| p)
    }
}
