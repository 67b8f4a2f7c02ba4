//! The remote cache as a render reads it: `ply.lock` maps each remote URL to a tree hash,
//! the cache holds each fetched tree once under that hash (`<cache>/trees/<hex>/`), and a
//! render finds a URL's tree there, checks the hash, and reads it like any local directory
//! (through the render's [`Fs`](super::Fs), under the load restrictor rooted at the tree).
//! Never touches the network: a URL missing from the lock or the cache is an error asking for
//! `ply fetch`. [`RemoteTrees`] is the seam: `ply fetch` plugs in a fetching implementation.
//! HTTP(S) files (kustomize downloads them at every build) are pinned the same way: the lock
//! maps the URL to the SHA-256 of its bytes, which lie once in `<cache>/files/<hex>`; a render
//! takes them from there through [`Fs::remote_file`] and checks the hash on every read.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::Fs;
use crate::diag::{Error, ErrorKind, Result};
use crate::remote::lock::{LOCK_FILE, Lock};
use crate::remote::{Remote, RepoSpec, classify};
use crate::source::display_path;

/// A remote kustomization on the disk: its clone (the tree its files may not leave) and its
/// kustomization root inside it, both canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteTree {
    pub clone: PathBuf,
    pub root: PathBuf,
    /// The commit the lock pins the URL to, when a lock was read (provenance names it).
    pub commit: Option<String>,
}

/// Where the render finds the tree of a remote URL.
pub trait RemoteTrees: Send + Sync + fmt::Debug {
    /// The tree of `url` (as the kustomization wrote it); `fs` is the render's file system
    /// (the lock file is read through it). Errors carry no location: the build adds the
    /// kustomization line.
    fn tree(&self, fs: &dyn Fs, url: &str) -> Result<RemoteTree>;
    /// The bytes of the HTTP(S) file `url` (as written). `maybe_repo`: `url` is a `resources:`
    /// entry that also reads as a git URL, which kustomize clones when it is not a file it can
    /// download (`accumulateResources`, api/internal/target/kusttarget.go); `Ok(None)` then
    /// says "a repository: ask [`Self::tree`]". Errors carry no location.
    ///
    /// By default no files: a repository when it may be one, else refused.
    fn file(&self, fs: &dyn Fs, url: &str, maybe_repo: bool) -> Result<Option<Vec<u8>>> {
        let _ = fs;
        if maybe_repo {
            Ok(None)
        } else {
            Err(remote_file_refused(url))
        }
    }
    /// The cache directory the trees lie in (canonical); `None` when there is none.
    fn cache_dir(&self) -> Option<&Path>;
}

/// The render's file system with the remote cache mapped in: paths in the cache directory are
/// read from the disk, every other path from `inner` (which may be a git revision or memory).
pub(crate) struct WithCache<'a> {
    pub inner: &'a dyn Fs,
    pub cache: Option<&'a Path>,
    /// Where HTTP(S) files come from ([`Fs::remote_file`]).
    pub remotes: &'a dyn RemoteTrees,
}

impl WithCache<'_> {
    fn pick(&self, path: &Path) -> &dyn Fs {
        // By bytes: asked for every path of every render.
        match self.cache {
            Some(c) if super::below(c, path) => &super::DiskFs,
            _ => self.inner,
        }
    }
}

impl Fs for WithCache<'_> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.pick(path).read(path)
    }
    fn kind(&self, path: &Path) -> Option<super::FileKind> {
        self.pick(path).kind(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.pick(path).canonicalize(path)
    }
    fn names_in(&self, dir: &Path) -> Vec<String> {
        self.pick(dir).names_in(dir)
    }
    fn remote_file(&self, url: &str) -> Result<Vec<u8>> {
        self.remotes
            .file(self, url, false)?
            .ok_or_else(|| remote_file_refused(url))
    }
}

/// The refusal of an HTTP(S) file URL where no remote files can be read.
pub(crate) fn remote_file_refused(url: &str) -> Error {
    Error::new(
        ErrorKind::Remote,
        format!(
            "remote files are not supported here: '{}'",
            crate::remote::url::redact(url)
        ),
    )
    .help("download the file and name its local path instead")
}

/// Where the file with hash `hash` (`sha256:<hex>`) lies in the cache.
pub fn file_path(cache: &Path, hash: &str) -> PathBuf {
    let hex = hash.strip_prefix("sha256:").unwrap_or(hash);
    cache.join("files").join(hex)
}

/// The hash of a file's bytes, `sha256:<hex>`.
pub fn bytes_hash(bytes: &[u8]) -> String {
    hex_hash(Sha256::digest(bytes).as_slice())
}

fn hex_hash(digest: &[u8]) -> String {
    let mut out = String::from("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The cached bytes of the file `url` pinned to `hash`, checked: a changed cache is refused,
/// never fetched again behind the user's back. `Ok(None)` when the cache does not hold it.
pub(crate) fn cached_file(cache: &Path, hash: &str, url: &str) -> Result<Option<Vec<u8>>> {
    let path = file_path(cache, hash);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, &e)),
    };
    let found = bytes_hash(&bytes);
    if found != hash {
        return Err(Error::new(
            ErrorKind::Remote,
            format!(
                "the cached file of '{}' does not match the lock: '{}' hashes to {found}, the lock says {hash}",
                crate::remote::url::redact(url),
                display_path(&path)
            ),
        )
        .help("something changed the cache; delete that file and run `ply fetch` to download it again"));
    }
    Ok(Some(bytes))
}

/// The cache directory: `$PLY_CACHE_DIR`, else `$XDG_CACHE_HOME/ply/remote`, else
/// `$HOME/.cache/ply/remote`.
pub(crate) fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PLY_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".cache"))
    })?;
    Some(base.join("ply").join("remote"))
}

/// Where the tree with hash `tree` (`sha256:<hex>`) lies in the cache.
pub(crate) fn tree_dir(cache: &Path, tree: &str) -> PathBuf {
    let hex = tree.strip_prefix("sha256:").unwrap_or(tree);
    cache.join("trees").join(hex)
}

/// The hash of a directory tree: SHA-256 over every entry in byte order of its path, each
/// given by its kind, its path, and its content (a file's bytes and whether it is executable,
/// a symlink's target as written; symlinks are not followed). `sha256:<hex>`. Anything but
/// files, directories and symlinks is an error.
pub(crate) fn tree_hash(dir: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    hash_dir(dir, b"", &mut hasher)?;
    Ok(hex_hash(hasher.finalize().as_slice()))
}

fn hash_dir(dir: &Path, rel: &[u8], hasher: &mut Sha256) -> io::Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()?;
    names.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    for name in names {
        let path = dir.join(&name);
        let mut child = rel.to_vec();
        if !child.is_empty() {
            child.push(b'/');
        }
        child.extend_from_slice(name.as_encoded_bytes());
        let meta = std::fs::symlink_metadata(&path)?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(&path)?;
            hasher.update(b"l");
            hasher.update(&child);
            hasher.update([0]);
            hasher.update(target.as_os_str().as_encoded_bytes());
            hasher.update([0]);
        } else if kind.is_dir() {
            hasher.update(b"d");
            hasher.update(&child);
            hasher.update([0]);
            hash_dir(&path, &child, hasher)?;
        } else if kind.is_file() {
            let bytes = std::fs::read(&path)?;
            hasher.update(if is_executable(&meta) { b"x" } else { b"f" });
            hasher.update(&child);
            hasher.update([0]);
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        } else {
            return Err(io::Error::other(format!(
                "'{}' is neither a file, a directory nor a symlink",
                path.display()
            )));
        }
    }
    Ok(())
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}

/// The kustomization root a URL names inside the tree `tree` (a directory of the cache or a
/// fresh clone): it must exist, be a directory and stay inside the tree once symlinks are
/// followed (kustomize: `newLoaderAtGitClone` in `api/internal/loader/fileloader.go`).
pub(crate) fn root_in(tree: &Path, spec: &RepoSpec, url: &str) -> Result<RemoteTree> {
    let clone = std::fs::canonicalize(tree).map_err(|e| Error::io(tree, &e))?;
    let wanted = super::join(&clone, &spec.root_path);
    let at = || {
        if spec.git_ref.is_empty() {
            format!("'{}'", spec.clone_spec())
        } else {
            format!("'{}' at '{}'", spec.clone_spec(), spec.git_ref)
        }
    };
    let root = std::fs::canonicalize(&wanted).map_err(|_| {
        Error::new(
            ErrorKind::Remote,
            format!(
                "'{url}': the repository {} has no directory '{}'",
                at(),
                spec.root_path
            ),
        )
        .help("check the path after `//` (or after the repository) and the ref")
    })?;
    if !root.starts_with(&clone) {
        return Err(Error::new(
            ErrorKind::Remote,
            format!(
                "'{url}': '{}' leaves the repository through a symlink (to '{}')",
                spec.root_path,
                root.display()
            ),
        )
        .help("a remote kustomization must lie inside its repository"));
    }
    if !root.is_dir() {
        return Err(Error::new(
            ErrorKind::Remote,
            format!(
                "'{url}' refers to the file '{}' of {}; expecting a directory",
                spec.root_path,
                at()
            ),
        )
        .help("a remote URL names a kustomization directory; list a local copy of a single file instead"));
    }
    Ok(RemoteTree {
        clone,
        root,
        commit: None,
    })
}

/// The git repository URL a remote reference names; HTTP(S) file URLs are refused.
pub(crate) fn repo_spec(url: &str) -> Result<RepoSpec> {
    match classify(url) {
        Some(Remote::Git(spec)) => Ok(spec),
        _ => Err(Error::new(
            ErrorKind::Remote,
            format!("remote files are not supported: '{url}'"),
        )
        .help(
            "ply fetches git repositories only; download the file and name its local path instead",
        )),
    }
}

/// Where the cache records what `url` resolved to when `ply fetch` fetched it at the ref it
/// names (a root without a lock reads its remote bases through these records).
pub(crate) fn ref_record_path(cache: &Path, url: &str) -> PathBuf {
    let hex = bytes_hash(url.as_bytes());
    cache
        .join("refs")
        .join(hex.strip_prefix("sha256:").unwrap_or(&hex))
}

/// The record of `url` in the cache (a lock of that one URL), if `ply fetch` made one.
fn ref_record(cache: &Path, url: &str) -> Option<Lock> {
    let path = ref_record_path(cache, url);
    let text = std::fs::read_to_string(&path).ok()?;
    Lock::parse(&text, &display_path(&path)).ok()
}

/// The lock file at `path`, read through `fs`; `None` when there is none.
pub(crate) fn read_lock(fs: &dyn Fs, path: &Path) -> Result<Option<Lock>> {
    match fs.read_to_string(path) {
        Ok(text) => Ok(Some(Lock::parse(&text, &display_path(path))?)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, &e)),
    }
}

/// Trees as `ply.lock` pins them, read from the cache: the offline side of remote bases.
#[derive(Debug)]
pub(crate) struct LockedTrees {
    /// The lock file, where it is or would be.
    lock_path: PathBuf,
    /// The lock, read on first use; `None` when there is no lock file.
    lock: Mutex<Option<Option<Lock>>>,
    cache: Option<PathBuf>,
    /// Whether the cache directory exists (then `cache` is canonical).
    cache_exists: bool,
    /// Trees whose hash was checked during this render.
    verified: Mutex<Vec<PathBuf>>,
}

impl LockedTrees {
    /// The trees pinned by `<root>/ply.lock` (`root` the root kustomization's directory), in
    /// the cache `cache` (else [`default_cache_dir`]).
    pub(crate) fn new(root: &Path, cache: Option<PathBuf>) -> LockedTrees {
        let cache = cache.or_else(default_cache_dir);
        // Canonical, so that the trees `root_in` gives lie under it by bytes.
        let canonical = cache.as_ref().and_then(|c| std::fs::canonicalize(c).ok());
        LockedTrees {
            lock_path: root.join(LOCK_FILE),
            lock: Mutex::new(None),
            cache_exists: canonical.is_some(),
            cache: canonical.or(cache),
            verified: Mutex::new(Vec::new()),
        }
    }

    fn fetch_help(&self) -> String {
        let dir = self
            .lock_path
            .parent()
            .map_or_else(|| ".".to_string(), display_path);
        format!("run `ply fetch {dir}` (the one command that uses the network), then render again")
    }

    /// What `pick` finds for `url` in the lock, reading the lock file on first use; `what`
    /// names the kind of reference in the error when there is no lock.
    fn pinned<T>(
        &self,
        fs: &dyn Fs,
        url: &str,
        what: &str,
        pick: impl FnOnce(&Lock) -> Option<T>,
    ) -> Result<Option<T>> {
        let mut slot = self
            .lock
            .lock()
            .map_err(|_| Error::new(ErrorKind::Remote, "the lock file could not be read"))?;
        if slot.is_none() {
            *slot = Some(read_lock(fs, &self.lock_path)?);
        }
        let Some(Some(lock)) = slot.as_ref() else {
            // No lock: what `ply fetch --all` fetched at the ref the URL names, if it did.
            let record = self.cache.as_deref().and_then(|c| ref_record(c, url));
            if let Some(found) = record.as_ref().and_then(pick) {
                return Ok(Some(found));
            }
            return Err(Error::new(
                ErrorKind::NotFetched,
                format!(
                    "'{url}' is a {what}, there is no lock file ('{}') and `ply fetch` has not fetched it",
                    display_path(&self.lock_path)
                ),
            )
            .help(format!(
                "run `ply fetch --all` (it fetches every root's remote bases at the refs their URLs name; `ply fetch {} --write-lock` pins them in a lock), then render again",
                self.lock_path
                    .parent()
                    .map_or_else(|| ".".to_string(), display_path)
            )));
        };
        Ok(pick(lock))
    }

    fn not_pinned(&self, url: &str) -> Error {
        Error::new(
            ErrorKind::Remote,
            format!(
                "'{url}' is not pinned in '{}'",
                display_path(&self.lock_path)
            ),
        )
        .help(self.fetch_help())
    }

    /// The pin of `url`.
    fn pin(&self, fs: &dyn Fs, url: &str) -> Result<crate::remote::lock::Pin> {
        self.pinned(fs, url, "remote base", |l| l.pins.get(url).cloned())?
            .ok_or_else(|| self.not_pinned(url))
    }

    /// The cache directory, or the error saying there is none.
    fn cache(&self, url: &str) -> Result<&Path> {
        self.cache.as_deref().ok_or_else(|| {
            Error::new(
                ErrorKind::Remote,
                format!("'{url}': no cache directory (neither XDG_CACHE_HOME nor HOME is set)"),
            )
            .help("pass --cache-dir DIR")
        })
    }
}

impl RemoteTrees for LockedTrees {
    fn cache_dir(&self) -> Option<&Path> {
        self.cache
            .as_deref()
            .filter(|c| c.is_absolute() && self.cache_exists)
    }

    fn tree(&self, fs: &dyn Fs, url: &str) -> Result<RemoteTree> {
        let spec = repo_spec(url)?;
        let pin = self.pin(fs, url)?;
        let dir = tree_dir(self.cache(url)?, &pin.tree);
        if !dir.is_dir() {
            return Err(Error::new(
                ErrorKind::NotFetched,
                format!(
                    "'{url}' is pinned to commit {} but its tree is not in the cache ('{}')",
                    pin.commit,
                    display_path(&dir)
                ),
            )
            .help(format!(
                "{} (it fetches the pinned commit), or restore the cache directory",
                self.fetch_help()
            )));
        }
        let checked = self.verified.lock().is_ok_and(|v| v.contains(&dir));
        if !checked {
            verify(&dir, &pin.tree, url)?;
            if let Ok(mut v) = self.verified.lock() {
                v.push(dir.clone());
            }
        }
        let mut tree = root_in(&dir, &spec, url)?;
        tree.commit = Some(pin.commit.clone());
        Ok(tree)
    }

    fn file(&self, fs: &dyn Fs, url: &str, maybe_repo: bool) -> Result<Option<Vec<u8>>> {
        let shown = crate::remote::url::redact(url);
        let hash = self.pinned(fs, &shown, "remote file", |l| l.files.get(&shown).cloned());
        let hash = match hash {
            Ok(Some(hash)) => hash,
            // A repository URL that is not a pinned file: the tree tells what is missing.
            Ok(None) | Err(_) if maybe_repo => return Ok(None),
            Ok(None) => return Err(self.not_pinned(&shown)),
            Err(e) => return Err(e),
        };
        let cache = self.cache(&shown)?;
        cached_file(cache, &hash, url)?.map(Some).ok_or_else(|| {
            Error::new(
                ErrorKind::NotFetched,
                format!("'{shown}' is pinned but its file is not in the cache"),
            )
            .help(format!(
                "{} (it downloads the file again and checks it against the lock), or restore the cache directory; the file would be '{}'",
                self.fetch_help(),
                display_path(&file_path(cache, &hash))
            ))
        })
    }
}

/// Checks that the cached tree `dir` still hashes to `tree`: a changed cache is refused, never
/// fetched again behind the user's back.
pub(crate) fn verify(dir: &Path, tree: &str, url: &str) -> Result<()> {
    let found = tree_hash(dir).map_err(|e| Error::io(dir, &e))?;
    if found == tree {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Remote,
        format!(
            "the cached tree of '{url}' does not match the lock: '{}' hashes to {found}, the lock says {tree}",
            display_path(dir)
        ),
    )
    .help("something changed the cache; delete that directory and run `ply fetch` to fetch the pinned commit again"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ply-remote-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn tree_hash_sees_content_names_links_and_modes() {
        let d = temp("hash");
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::fs::write(d.join("a/b/f.yaml"), "x: 1\n").unwrap();
        std::fs::write(d.join("top"), "t").unwrap();
        let h0 = tree_hash(&d).unwrap();
        assert!(h0.starts_with("sha256:") && h0.len() == 7 + 64);
        assert_eq!(tree_hash(&d).unwrap(), h0);
        std::fs::write(d.join("a/b/f.yaml"), "x: 2\n").unwrap();
        let h1 = tree_hash(&d).unwrap();
        assert_ne!(h1, h0);
        std::fs::rename(d.join("top"), d.join("top2")).unwrap();
        let h2 = tree_hash(&d).unwrap();
        assert_ne!(h2, h1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(d.join("top2"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
            let h3 = tree_hash(&d).unwrap();
            assert_ne!(h3, h2);
            std::os::unix::fs::symlink("a/b/f.yaml", d.join("l")).unwrap();
            let h4 = tree_hash(&d).unwrap();
            assert_ne!(h4, h3);
            std::fs::remove_file(d.join("l")).unwrap();
            std::os::unix::fs::symlink("a/b", d.join("l")).unwrap();
            assert_ne!(tree_hash(&d).unwrap(), h4);
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn roots_must_exist_be_directories_and_stay_inside() {
        let d = temp("root");
        std::fs::create_dir_all(d.join("base")).unwrap();
        std::fs::write(d.join("file.yaml"), "").unwrap();
        std::os::unix::fs::symlink("/", d.join("out")).unwrap();
        let spec = |root: &str| {
            crate::remote::url::parse_repo_spec(&format!("file:///r//{root}?ref=v1")).unwrap()
        };
        let t = root_in(&d, &spec("base"), "u").unwrap();
        assert_eq!(t.root, std::fs::canonicalize(d.join("base")).unwrap());
        for (root, says) in [
            ("missing", "has no directory 'missing'"),
            ("file.yaml", "expecting a directory"),
            ("out/tmp", "leaves the repository through a symlink"),
        ] {
            let e = root_in(&d, &spec(root), "u").unwrap_err();
            assert!(e.message.contains(says), "{root}: {}", e.message);
            assert_eq!(e.kind, ErrorKind::Remote);
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn locked_trees_without_lock_or_pin_or_cache_ask_for_fetch() {
        let d = temp("locked");
        let url = "file:///srv/r.git//base?ref=v1";
        let cache = d.join("cache");
        let trees = LockedTrees::new(&d, Some(cache.clone()));
        let e = trees.tree(&super::super::DiskFs, url).unwrap_err();
        assert!(e.message.contains("no lock file"), "{}", e.message);
        assert!(e.help.unwrap().contains("ply fetch"));
        let mut lock = Lock::default();
        let pin = crate::remote::lock::Pin {
            commit: "a".repeat(40),
            tree: format!("sha256:{}", "b".repeat(64)),
        };
        lock.pins.insert(url.into(), pin.clone());
        std::fs::write(d.join(LOCK_FILE), lock.to_text()).unwrap();
        let trees = LockedTrees::new(&d, Some(cache.clone()));
        let e = trees
            .tree(&super::super::DiskFs, "file:///srv/other.git//x")
            .unwrap_err();
        assert!(e.message.contains("is not pinned"), "{}", e.message);
        let e = trees.tree(&super::super::DiskFs, url).unwrap_err();
        assert!(e.message.contains("not in the cache"), "{}", e.message);
        // A tree whose content changed is refused.
        let dir = tree_dir(&cache, &pin.tree);
        std::fs::create_dir_all(dir.join("base")).unwrap();
        let e = trees.tree(&super::super::DiskFs, url).unwrap_err();
        assert!(
            e.message.contains("does not match the lock"),
            "{}",
            e.message
        );
        // The right hash is accepted.
        let mut lock2 = Lock::default();
        let real = tree_hash(&dir).unwrap();
        let good = tree_dir(&cache, &real);
        std::fs::rename(&dir, &good).unwrap();
        lock2.pins.insert(
            url.into(),
            crate::remote::lock::Pin {
                commit: pin.commit,
                tree: real,
            },
        );
        std::fs::write(d.join(LOCK_FILE), lock2.to_text()).unwrap();
        let trees = LockedTrees::new(&d, Some(cache));
        let t = trees.tree(&super::super::DiskFs, url).unwrap();
        assert!(t.root.ends_with("base"));
        assert!(
            trees
                .tree(&super::super::DiskFs, "https://example.com/x.yaml")
                .is_err()
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
