//! [`Recording`]: an [`Fs`] that passes every question to another one and remembers each path
//! it was asked about (read, looked at, or resolved). What a render asked is exactly what its
//! output depends on: `ply diff --changed-only` compares those paths between two revisions.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use std::os::unix::ffi::OsStringExt;

use crate::fasthash::FastSet;
use crate::fs::{FileKind, Fs};

/// A file system that records the paths asked of it.
#[derive(Debug)]
pub struct Recording<'a> {
    inner: &'a dyn Fs,
    /// By the path's bytes (hashing and comparing a `Path` walks its components).
    asked: Mutex<FastSet<Vec<u8>>>,
}

impl std::fmt::Debug for dyn Fs + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("dyn Fs")
    }
}

impl<'a> Recording<'a> {
    pub fn new(inner: &'a dyn Fs) -> Recording<'a> {
        Recording {
            inner,
            asked: Mutex::default(),
        }
    }

    fn note(&self, path: &Path) {
        let key = path.as_os_str().as_encoded_bytes();
        if let Ok(mut set) = self.asked.lock() {
            if !set.contains(key) {
                set.insert(key.to_vec());
            }
        }
    }

    /// Every path asked about so far, sorted.
    pub fn paths(&self) -> Vec<PathBuf> {
        let asked = self.asked.lock().map(|s| s.clone()).unwrap_or_default();
        let mut out: Vec<PathBuf> = asked
            .into_iter()
            .map(|bytes| PathBuf::from(std::ffi::OsString::from_vec(bytes)))
            .collect();
        out.sort();
        out
    }

    /// Every path asked about, sorted.
    pub fn into_paths(self) -> BTreeSet<PathBuf> {
        let asked = self.asked.into_inner().unwrap_or_default();
        asked
            .into_iter()
            .map(|bytes| PathBuf::from(std::ffi::OsString::from_vec(bytes)))
            .collect()
    }
}

impl Fs for Recording<'_> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.note(path);
        self.inner.read(path)
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        self.note(path);
        self.inner.kind(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.note(path);
        self.inner.canonicalize(path)
    }

    /// Pinned remote files come from the cache, the same at both revisions: passed on (a
    /// recording over the remote layer would otherwise refuse them).
    fn remote_file(&self, url: &str) -> crate::diag::Result<Vec<u8>> {
        self.inner.remote_file(url)
    }

    /// Only diagnostics ask for a directory's names ("did you mean …?"); the directory is
    /// still an input of the render's report.
    fn names_in(&self, dir: &Path) -> Vec<String> {
        self.note(dir);
        self.inner.names_in(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::MemFs;

    #[test]
    fn records_every_path_asked() {
        let mut mem = MemFs::new();
        mem.file("/r/a.yaml", "a").symlink("/r/l.yaml", "a.yaml");
        let rec = Recording::new(&mem);
        assert_eq!(rec.read(Path::new("/r/l.yaml")).unwrap(), b"a");
        assert_eq!(rec.kind(Path::new("/r/missing")), None);
        assert!(rec.canonicalize(Path::new("/r/a.yaml")).is_ok());
        let paths: Vec<PathBuf> = rec.into_paths().into_iter().collect();
        assert_eq!(
            paths,
            ["/r/a.yaml", "/r/l.yaml", "/r/missing"].map(PathBuf::from)
        );
    }
}
