//! The file system as ply sees it: the [`Fs`] trait with an on-disk ([`DiskFs`]) and an
//! in-memory ([`MemFs`], for tests) implementation, canonical paths, and the load restrictor
//! ([`Restrictor`]): by default a kustomization may read files only inside its own directory
//! tree. The only module that reads the disk. Knows no YAML and no kustomization fields.

use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::diag::{Error, ErrorKind, Result};

/// What a path names, after following symlinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    File,
    Dir,
}

/// Read access to a file system. Paths given to it are absolute.
pub trait Fs: Send + Sync {
    /// The file's bytes.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// File, directory, or `None` when nothing is there (symlinks followed).
    fn kind(&self, path: &Path) -> Option<FileKind>;
    /// The absolute path with every symlink, `.` and `..` resolved; an error when it does not
    /// exist.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;

    /// The file's text; invalid UTF-8 is an error.
    fn read_to_string(&self, path: &Path) -> io::Result<String> {
        String::from_utf8(self.read(path)?)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "file is not UTF-8 text"))
    }
}

/// The real file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiskFs;

impl Fs for DiskFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        let meta = std::fs::metadata(path).ok()?;
        Some(if meta.is_dir() {
            FileKind::Dir
        } else {
            FileKind::File
        })
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
}

/// The real file system, remembering the canonical form of every directory it resolved: a
/// render canonicalizes every file it reads, and `realpath` costs one system call per path
/// component (5% of a large render). A file in a known directory then costs one `lstat`.
/// Meant for one command: a symlink changed while it runs is not seen.
#[derive(Debug, Default)]
pub struct CachingDiskFs {
    dirs: std::sync::Mutex<std::collections::HashMap<PathBuf, PathBuf>>,
}

impl CachingDiskFs {
    fn cached_dir(&self, dir: &Path) -> io::Result<PathBuf> {
        if let Some(c) = self.dirs.lock().ok().and_then(|m| m.get(dir).cloned()) {
            return Ok(c);
        }
        let c = self.canonicalize(dir)?;
        if let Ok(mut m) = self.dirs.lock() {
            m.insert(dir.to_path_buf(), c.clone());
        }
        Ok(c)
    }
}

impl Fs for CachingDiskFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        DiskFs.read(path)
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        DiskFs.kind(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        use std::path::Component;
        let text = path.as_os_str().as_encoded_bytes();
        // Only `/dir/.../name` with plain components takes the short way; `..`, a trailing
        // `/` or `/.` (which require a directory) go to `realpath`.
        let plain = path.is_absolute()
            && !text.ends_with(b"/")
            && !text.ends_with(b"/.")
            && path.components().all(|c| {
                matches!(
                    c,
                    Component::RootDir | Component::Normal(_) | Component::CurDir
                )
            });
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return std::fs::canonicalize(path);
        };
        if !plain || parent.as_os_str().is_empty() {
            return std::fs::canonicalize(path);
        }
        let joined = self.cached_dir(parent)?.join(name);
        if std::fs::symlink_metadata(&joined)?.file_type().is_symlink() {
            return std::fs::canonicalize(&joined);
        }
        Ok(joined)
    }
}

#[derive(Clone, Debug)]
enum Entry {
    File(Vec<u8>),
    Dir,
    Symlink(PathBuf),
}

/// An in-memory file system for tests: absolute paths, files, directories, symlinks.
#[derive(Clone, Debug, Default)]
pub struct MemFs {
    entries: BTreeMap<PathBuf, Entry>,
}

impl MemFs {
    pub fn new() -> MemFs {
        let mut fs = MemFs::default();
        fs.entries.insert(PathBuf::from("/"), Entry::Dir);
        fs
    }

    fn add_parents(&mut self, path: &Path) {
        let mut p = path.parent();
        while let Some(dir) = p {
            self.entries.entry(dir.to_path_buf()).or_insert(Entry::Dir);
            p = dir.parent();
        }
    }

    /// Adds a file (and its parent directories).
    pub fn file(&mut self, path: impl AsRef<Path>, text: impl Into<Vec<u8>>) -> &mut MemFs {
        let path = normalize(path.as_ref());
        self.add_parents(&path);
        self.entries.insert(path, Entry::File(text.into()));
        self
    }

    /// Adds an empty directory.
    pub fn dir(&mut self, path: impl AsRef<Path>) -> &mut MemFs {
        let path = normalize(path.as_ref());
        self.add_parents(&path);
        self.entries.insert(path, Entry::Dir);
        self
    }

    /// Adds a symlink at `path` pointing to `target` (relative to the link's directory, or
    /// absolute).
    pub fn symlink(&mut self, path: impl AsRef<Path>, target: impl AsRef<Path>) -> &mut MemFs {
        let path = normalize(path.as_ref());
        self.add_parents(&path);
        self.entries
            .insert(path, Entry::Symlink(target.as_ref().to_path_buf()));
        self
    }

    fn resolve(&self, path: &Path) -> io::Result<PathBuf> {
        let not_found = || io::Error::new(io::ErrorKind::NotFound, "no such file or directory");
        let mut hops = 0;
        let mut cur = PathBuf::from("/");
        let mut rest: Vec<PathBuf> = path
            .components()
            .map(|c| PathBuf::from(c.as_os_str()))
            .collect();
        rest.reverse();
        while let Some(part) = rest.pop() {
            let s = part.as_os_str();
            if s == "/" || s == "." {
                continue;
            }
            if s == ".." {
                cur.pop();
                continue;
            }
            let next = cur.join(&part);
            match self.entries.get(&next) {
                None => return Err(not_found()),
                Some(Entry::Symlink(target)) => {
                    hops += 1;
                    if hops > 40 {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    let target = if target.is_absolute() {
                        target.clone()
                    } else {
                        cur.join(target)
                    };
                    cur = PathBuf::from("/");
                    let mut parts: Vec<PathBuf> = target
                        .components()
                        .map(|c| PathBuf::from(c.as_os_str()))
                        .collect();
                    parts.reverse();
                    rest.extend(parts);
                }
                Some(Entry::File(_)) if !rest.is_empty() => return Err(not_found()),
                Some(_) => cur = next,
            }
        }
        Ok(cur)
    }
}

impl Fs for MemFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let p = self.resolve(path)?;
        match self.entries.get(&p) {
            Some(Entry::File(b)) => Ok(b.clone()),
            Some(_) => Err(io::Error::other("is a directory")),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no such file or directory",
            )),
        }
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        let p = self.resolve(path).ok()?;
        match self.entries.get(&p)? {
            Entry::File(_) => Some(FileKind::File),
            Entry::Dir => Some(FileKind::Dir),
            Entry::Symlink(_) => None,
        }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.resolve(path)
    }
}

/// Reads a command-line input file, or standard input for `-` (shown as `<stdin>` in
/// diagnostics). For `ply patch` and `ply diff`, whose inputs are not kustomization files and
/// are not subject to the load restrictor.
pub fn read_input(path: &Path) -> Result<std::sync::Arc<crate::source::SourceFile>> {
    use std::io::Read;
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Error::io(path, &e))?;
        return Ok(crate::source::SourceFile::new("<stdin>", text));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
    Ok(crate::source::SourceFile::new(path, text))
}

/// Removes `.` and resolves `..` lexically (no symlinks): for display and for in-memory paths.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// kustomize's `--load-restrictor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Restrictor {
    /// Files must lie in or below the directory of the kustomization that names them.
    #[default]
    RootOnly,
    /// Any readable file may be loaded.
    None,
}

/// Resolves `rel` against `dir` into an absolute path (no symlinks followed).
pub fn join(dir: &Path, rel: &str) -> PathBuf {
    let p = Path::new(rel);
    if p.is_absolute() {
        normalize(p)
    } else {
        normalize(&dir.join(p))
    }
}

/// Checks the load restriction for a file named by the kustomization rooted at `root`
/// (canonical). `canonical` is the file's canonical path; `shown` how the kustomization wrote
/// it; `file_shown` and `root_shown` how messages print the two paths. kustomize:
/// `api/internal/loader/loadrestrictions.go`, `RestrictionRootOnly` (message kept).
pub fn check_restriction(
    restrictor: Restrictor,
    root: &Path,
    canonical: &Path,
    shown: &str,
    file_shown: &str,
    root_shown: &str,
) -> Result<()> {
    if restrictor == Restrictor::None || canonical.starts_with(root) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::LoadRestriction,
        format!("security; file '{file_shown}' is not in or below '{root_shown}'"),
    )
    .label(format!("'{shown}' is outside the kustomization root"))
    .help(
        "a kustomization may only read files in or below its own directory; move the file, \
         make it part of a base (a directory with its own kustomization), or pass \
         --load-restrictor LoadRestrictionsNone",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem() -> MemFs {
        let mut fs = MemFs::new();
        fs.file("/app/base/a.yaml", "a")
            .file("/app/other/b.yaml", "b")
            .symlink("/app/base/link.yaml", "../other/b.yaml")
            .symlink("/app/base/dirlink", "/app/other");
        fs
    }

    #[test]
    fn memfs_reads_and_resolves() {
        let fs = mem();
        assert_eq!(fs.read(Path::new("/app/base/a.yaml")).unwrap(), b"a");
        assert_eq!(fs.read(Path::new("/app/base/link.yaml")).unwrap(), b"b");
        assert_eq!(
            fs.canonicalize(Path::new("/app/base/dirlink/b.yaml"))
                .unwrap(),
            PathBuf::from("/app/other/b.yaml")
        );
        assert_eq!(
            fs.canonicalize(Path::new("/app/base/../other/./b.yaml"))
                .unwrap(),
            PathBuf::from("/app/other/b.yaml")
        );
        assert_eq!(fs.kind(Path::new("/app/base")), Some(FileKind::Dir));
        assert_eq!(fs.kind(Path::new("/app/base/dirlink")), Some(FileKind::Dir));
        assert_eq!(fs.kind(Path::new("/app/none")), None);
        assert!(fs.read(Path::new("/app/base/a.yaml/x")).is_err());
    }

    #[test]
    fn symlink_loop_is_an_error() {
        let mut fs = MemFs::new();
        fs.symlink("/a", "/b").symlink("/b", "/a");
        assert!(fs.canonicalize(Path::new("/a")).is_err());
    }

    #[test]
    fn restriction() {
        let fs = mem();
        let root = Path::new("/app/base");
        let inside = fs.canonicalize(&join(root, "a.yaml")).unwrap();
        assert!(check_restriction(Restrictor::RootOnly, root, &inside, "a.yaml", "", "").is_ok());
        for shown in ["../other/b.yaml", "link.yaml", "/app/other/b.yaml"] {
            let c = fs.canonicalize(&join(root, shown)).unwrap();
            let e = check_restriction(
                Restrictor::RootOnly,
                root,
                &c,
                shown,
                "/app/other/b.yaml",
                "/app/base",
            )
            .unwrap_err();
            assert_eq!(e.kind, ErrorKind::LoadRestriction);
            assert_eq!(
                e.message,
                "security; file '/app/other/b.yaml' is not in or below '/app/base'"
            );
            assert!(check_restriction(Restrictor::None, root, &c, shown, "", "").is_ok());
        }
    }

    #[test]
    fn normalize_paths() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(join(Path::new("/a/b"), "../c"), PathBuf::from("/a/c"));
        assert_eq!(join(Path::new("/a/b"), "/x/y"), PathBuf::from("/x/y"));
    }

    /// The caching canonicalization agrees with `realpath` through symlinks, `..` and `.`,
    /// and fails where it fails.
    #[cfg(unix)]
    #[test]
    fn caching_disk_fs_agrees_with_realpath() {
        let root = std::env::temp_dir().join(format!("ply-fs-canon-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::fs::write(root.join("real/sub/f.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        std::os::unix::fs::symlink("sub/f.yaml", root.join("real/flink")).unwrap();
        let fs = CachingDiskFs::default();
        for rel in [
            "real/sub/f.yaml",
            "link/sub/f.yaml",
            "link/flink",
            "real/sub/../sub/f.yaml",
            "real/./sub/f.yaml",
            "link/sub",
            "link/sub/.",
            "link/sub/",
            "real/sub/f.yaml/x",
            "real/sub/f.yaml/.",
            "real/missing.yaml",
            "link/sub/f.yaml",
        ] {
            let p = root.join(rel);
            let want = std::fs::canonicalize(&p).ok();
            assert_eq!(fs.canonicalize(&p).ok(), want, "{rel}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
