//! The file system as ply sees it: the [`Fs`] trait with an on-disk ([`DiskFs`]) and an
//! in-memory ([`MemFs`], for tests) implementation, canonical paths, and the load restrictor
//! ([`Restrictor`]): by default a kustomization may read files only inside its own directory
//! tree. The only module that reads the disk. Knows no YAML and no kustomization fields.

#[cfg(unix)]
mod at;
pub(crate) mod git;
mod links;
pub(crate) mod record;
pub(crate) mod remote;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Result};
use crate::fasthash::FastMap;
use crate::source::display_path;

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

    /// The names in a directory, for hints in diagnostics only ("did you mean …?"); empty
    /// when unknown. Never used to decide what a render reads.
    fn names_in(&self, _dir: &Path) -> Vec<String> {
        Vec::new()
    }

    /// The bytes of an HTTP(S) file URL a kustomization names (kustomize downloads it,
    /// `FileLoader.Load` in api/internal/loader/fileloader.go). Only the render's remote layer
    /// ([`remote::WithCache`]) knows them, as `ply fetch` pinned them; other file systems refuse.
    fn remote_file(&self, url: &str) -> crate::diag::Result<Vec<u8>> {
        Err(remote::remote_file_refused(url))
    }

    /// Whether the file at `path` holds exactly `bytes`, where this file system can tell
    /// without reading the file (a git revision compares blob ids); `None` when it cannot, and
    /// the caller reads and compares.
    fn holds(&self, _path: &Path, _bytes: &[u8]) -> Option<bool> {
        None
    }

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
        check_regular(path)?;
        std::fs::read(path)
    }

    fn names_in(&self, dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default()
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

/// Only regular files are read: a FIFO, socket or device (directly or through a symlink) is an
/// error found by `stat`, before any `open` that could block (opening a FIFO waits for a
/// writer) or read without end (`/dev/zero`).
pub fn check_regular(path: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    // A directory fails in `read` itself, as it always did (`IsADirectory`).
    if meta.is_file() || meta.is_dir() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{}, not a regular file: ply reads only regular files",
            special_kind(meta.file_type())
        ),
    ))
}

#[cfg(not(unix))]
fn special_kind(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(unix)]
fn special_kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// The real file system, remembering what it learnt: the canonical form of every directory it
/// resolved, and what it found at every path it looked at. A render asks, for every file it
/// reads, what the path is (`kind`), where it really is (`canonicalize`) and what it holds
/// (`read`); done separately that was `stat`, `realpath` (one system call per path component),
/// then `open`, `fstat`, two `read`s and `close`. Here a path in a known directory is looked
/// at once, which answers the first two questions at once when the path is not a symlink: a
/// name with an extension is opened (without following a symlink, without waiting) and
/// `fstat`ed, and the file stays open for its read; another name costs one `lstat`. Reading
/// then trusts the size found: one `read`, `close`. Shared by the threads of a render: what
/// the reader thread looked up, the build does not look up again.
/// Meant for one command: a symlink or file changed while it runs is not seen.
#[derive(Debug, Default)]
pub struct CachingDiskFs {
    /// Canonical directories by the path they were asked under (bytes of the path).
    dirs: std::sync::Mutex<FastMap<Vec<u8>, PathBuf>>,
    /// What looking at a path found, by the plain path it was asked under and by the
    /// canonical path (bytes of the path).
    found: std::sync::Mutex<FastMap<Vec<u8>, Found>>,
    /// Files opened to learn what they are, kept for the read that follows.
    opened: std::sync::Mutex<Opened>,
}

/// Files left open by a lookup, by canonical path (bytes), oldest first for closing: a read
/// takes its file; one nobody reads is closed once [`KEEP_OPEN`] newer ones are kept.
#[derive(Debug, Default)]
struct Opened {
    by_path: FastMap<Vec<u8>, std::fs::File>,
    order: std::collections::VecDeque<Vec<u8>>,
}

/// How many looked-at files stay open for their reads. A render reads a file right after it
/// looks at it (the reader thread and the build each a few ahead at most), so a few dozen
/// serve nearly every read, far below any descriptor limit.
#[cfg(unix)]
const KEEP_OPEN: usize = 32;

/// What `lstat` (or `open` and `fstat`) found at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stat {
    Dir,
    /// A regular file and its size.
    File(u64),
    Symlink,
    /// A FIFO, socket or device: never read here.
    Special,
}

/// What looking at a plain path in a canonical directory found ([`CachingDiskFs::stat`]).
#[derive(Clone, Debug)]
enum Found {
    /// A file or directory (not a symlink).
    Known(Known),
    /// Nothing, with the error number the lookup gave (ENOENT, ENOTDIR, …).
    Missing(i32),
}

/// A path found in a canonical directory, and not a symlink.
#[derive(Clone, Debug)]
struct Known {
    canonical: PathBuf,
    kind: FileKind,
    len: u64,
}

impl CachingDiskFs {
    /// The path of `name` in the canonical form of the directory `dir`.
    fn in_dir(&self, dir: &Path, name: &OsStr) -> io::Result<PathBuf> {
        let key = dir.as_os_str().as_encoded_bytes();
        let found = self
            .dirs
            .lock()
            .ok()
            .and_then(|m| m.get(key).map(|c| child(c, name)));
        if let Some(path) = found {
            return Ok(path);
        }
        // Through the cache again: a new directory in a known one costs one `lstat`.
        let c = self.canonicalize(dir)?;
        self.remember_dir(dir, &c);
        Ok(child(&c, name))
    }

    /// Records that `dir` is the directory `canonical` (itself canonical).
    fn remember_dir(&self, dir: &Path, canonical: &Path) {
        if let Ok(mut m) = self.dirs.lock() {
            let key = dir.as_os_str().as_encoded_bytes();
            if !m.contains_key(key) {
                m.insert(key.to_vec(), canonical.to_path_buf());
            }
            let key = canonical.as_os_str().as_encoded_bytes();
            if !m.contains_key(key) {
                m.insert(key.to_vec(), canonical.to_path_buf());
            }
        }
    }

    /// A look ([`CachingDiskFs::stat`]) at a plain absolute path (`/dir/.../name`, no `..`,
    /// no trailing `/` or `/.`, which need a directory) in a directory whose canonical form is
    /// known or found, then `answer` asked about what it found: `Some(Ok)` when it names a file
    /// or directory, `Some(Err)` when nothing is there (nor for `stat`: the directory holds no
    /// symlink on the way), `None` when only `realpath` can tell (a symlink, an unusual path, a
    /// directory that fails). Remembers what it found: a render asks about
    /// most paths more than once, and from two threads.
    fn look<R>(&self, path: &Path, answer: impl Fn(&Known) -> R) -> Option<io::Result<R>> {
        let text = path.as_os_str().as_encoded_bytes();
        let answered = |found: &Found| match found {
            Found::Known(k) => Ok(answer(k)),
            Found::Missing(errno) => Err(io::Error::from_raw_os_error(*errno)),
        };
        if let Some(found) = self.found.lock().ok()?.get(text) {
            return Some(answered(found));
        }
        let sep = |b: &u8| std::path::is_separator(char::from(*b));
        let plain = path.is_absolute()
            && !text.last().is_some_and(sep)
            && !text.ends_with(b"/.")
            && !text.split(sep).any(|part| part == b"..");
        if !plain {
            return None;
        }
        let (parent, name) = (path.parent()?, path.file_name()?);
        if parent.as_os_str().is_empty() {
            return None;
        }
        let canonical = self.in_dir(parent, name).ok()?;
        let found = match self.stat(&canonical) {
            Ok(stat) => {
                let (kind, len) = match stat {
                    Stat::Symlink => return None,
                    Stat::Dir => (FileKind::Dir, 0),
                    Stat::File(len) => (FileKind::File, len),
                    // A FIFO, socket or device is read (and refused) by `DiskFs::read`.
                    Stat::Special => (FileKind::File, 0),
                };
                if kind == FileKind::Dir {
                    self.remember_dir(path, &canonical);
                }
                Found::Known(Known {
                    canonical,
                    kind,
                    len,
                })
            }
            Err(e) => match e.raw_os_error() {
                Some(errno) => Found::Missing(errno),
                None => return Some(Err(e)),
            },
        };
        let result = answered(&found);
        if let Ok(mut map) = self.found.lock() {
            if let Found::Known(k) = &found {
                let canonical = k.canonical.as_os_str().as_encoded_bytes();
                if canonical != text {
                    map.insert(canonical.to_vec(), found.clone());
                }
            }
            map.insert(text.to_vec(), found);
        }
        Some(result)
    }

    /// What is at the canonical path `path` (its directory holds no symlink). A name with an
    /// extension (`deployment.yaml`, `kustomization.yml`), most often a file read next, is
    /// opened and asked, and a regular file is kept open for its read: one path walk instead
    /// of two. Any other name, most often a directory (`base`, `../../apps/x/overlays/dev`),
    /// and whatever opening cannot tell: `lstat`, which costs half an `open` and `close`.
    /// Both give the same answer; only the cost differs.
    fn stat(&self, path: &Path) -> io::Result<Stat> {
        #[cfg(unix)]
        if path.extension().is_some() {
            match at::probe(path) {
                at::Probe::Found(stat, file) => {
                    if let Some(file) = file {
                        self.keep_open(path, file);
                    }
                    return Ok(stat);
                }
                at::Probe::Symlink => return Ok(Stat::Symlink),
                at::Probe::Missing(e) => return Err(e),
                at::Probe::Unknown => {}
            }
        }
        let meta = std::fs::symlink_metadata(path)?;
        let t = meta.file_type();
        Ok(if t.is_symlink() {
            Stat::Symlink
        } else if t.is_dir() {
            Stat::Dir
        } else if t.is_file() {
            Stat::File(meta.len())
        } else {
            Stat::Special
        })
    }

    /// Keeps `file`, opened at the canonical path `path`, for its read.
    #[cfg(unix)]
    fn keep_open(&self, path: &Path, file: std::fs::File) {
        let Ok(mut opened) = self.opened.lock() else {
            return;
        };
        if opened.order.len() >= KEEP_OPEN
            && let Some(oldest) = opened.order.pop_front()
        {
            opened.by_path.remove(&oldest);
        }
        let key = path.as_os_str().as_encoded_bytes().to_vec();
        opened.order.push_back(key.clone());
        opened.by_path.insert(key, file);
    }

    /// The file at the canonical path `path` for reading: the one a lookup left open, or
    /// opened now.
    fn open(&self, path: &Path) -> io::Result<std::fs::File> {
        let kept = (self.opened.lock().ok())
            .and_then(|mut o| o.by_path.remove(path.as_os_str().as_encoded_bytes()));
        match kept {
            Some(file) => Ok(file),
            None => std::fs::File::open(path),
        }
    }

    /// The size found for the file at the canonical path `path`, if it was looked at.
    fn known_len(&self, path: &Path) -> Option<u64> {
        let map = self.found.lock().ok()?;
        match map.get(path.as_os_str().as_encoded_bytes())? {
            Found::Known(k) if k.kind == FileKind::File => Some(k.len),
            _ => None,
        }
    }
}

impl Fs for CachingDiskFs {
    fn names_in(&self, dir: &Path) -> Vec<String> {
        DiskFs.names_in(dir)
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        use std::io::Read;
        // Zero is what special files (`/proc`, some FUSE files) report: read those to the end.
        let Some(len) = self.known_len(path).filter(|&n| n > 0) else {
            return DiskFs.read(path);
        };
        let Ok(len) = usize::try_from(len) else {
            return DiskFs.read(path);
        };
        let mut file = self.open(path)?;
        // Reading exactly the size spares std's `fstat` and the `read` that finds the end (a
        // file that shrank meanwhile ends early; one that grew is read to its old size).
        let mut bytes = vec![0; len];
        let mut filled = 0;
        while let Some(rest) = bytes.get_mut(filled..).filter(|r| !r.is_empty()) {
            match file.read(rest) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        bytes.truncate(filled);
        Ok(bytes)
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        match self.look(path, |k| k.kind) {
            Some(Ok(kind)) => Some(kind),
            Some(Err(_)) => None,
            None => DiskFs.kind(path),
        }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        match self.look(path, |k| k.canonical.clone()) {
            Some(Ok(canonical)) => Ok(canonical),
            Some(Err(e)) => Err(e),
            None => std::fs::canonicalize(path),
        }
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
        let rules = links::Rules {
            normalize: false,
            dotdot_after_file: false,
        };
        links::follow(&MemTree(self), path, rules).map(|(p, _)| p)
    }
}

/// [`MemFs`] as the symlink walk sees it.
struct MemTree<'a>(&'a MemFs);

impl<'a> links::LinkTree for MemTree<'a> {
    type Entry = &'a Entry;
    fn at(&self, path: &Path) -> io::Result<links::At<'_, &'a Entry>> {
        Ok(match self.0.entries.get(path) {
            None => links::At::Nothing,
            Some(Entry::Symlink(target)) => links::At::Link(target),
            Some(e) => links::At::Here(Some(e)),
        })
    }
    fn entry(&self, path: &Path) -> Option<&'a Entry> {
        self.0.entries.get(path)
    }
    fn is_file(entry: &'a Entry) -> bool {
        matches!(entry, Entry::File(_))
    }
    fn not_found(&self) -> io::Error {
        io::Error::new(io::ErrorKind::NotFound, "no such file or directory")
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
        // Checked as a file's bytes are (`SourceFile::from_bytes`), so a NUL or a byte that
        // is not UTF-8 is reported at its line and column of `<stdin>`.
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, &e))?;
        return Ok(crate::source::SourceFile::from_bytes("<stdin>", bytes)?);
    }
    let bytes = DiskFs.read(path).map_err(|e| Error::io(path, &e))?;
    Ok(crate::source::SourceFile::from_bytes(path, bytes)?)
}

/// Every file under the directory `dir` on the disk, sorted, without following symlinks
/// to directories and without looking into `.git`.
pub fn files_under(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !(e.file_type().is_dir() && e.file_name() == ".git"));
    for entry in walk {
        let entry = entry.map_err(io::Error::other)?;
        if !entry.file_type().is_dir() {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

/// Removes `.` and resolves `..` lexically (no symlinks): for display and for in-memory paths.
/// A `..` removes the component before it, whatever it is, and stays when there is none
/// (`/..` stays `/..`, `a/../..` is `..`), as `PathBuf::pop` does.
pub fn normalize(path: &Path) -> PathBuf {
    #[cfg(unix)]
    {
        normalize_parts(path, None)
    }
    #[cfg(not(unix))]
    {
        normalize_components(path)
    }
}

/// [`normalize`] by components, for systems whose paths are not plain `/`-separated bytes.
#[cfg(any(test, not(unix)))]
fn normalize_components(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// [`normalize`] of `path` followed by `rel` (relative), on the bytes of Unix paths: a render
/// joins every path a kustomization names to its directory, and walking `Component`s and
/// pushing them one by one onto a `PathBuf` cost about 2% of it.
#[cfg(unix)]
fn normalize_parts(path: &Path, rel: Option<&str>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let head = path.as_os_str().as_encoded_bytes();
    let tail = rel.unwrap_or("").as_bytes();
    let mut parts: Vec<&[u8]> = Vec::with_capacity(16);
    for part in head.split(|&b| b == b'/').chain(tail.split(|&b| b == b'/')) {
        match part {
            b"" | b"." => {}
            b".." => {
                if parts.pop().is_none() {
                    parts.push(b"..");
                }
            }
            _ => parts.push(part),
        }
    }
    let mut out = Vec::with_capacity(head.len() + tail.len() + 1);
    if head.first() == Some(&b'/') {
        out.push(b'/');
    }
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(part);
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
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

/// `dir.join(name)` for a canonical directory and one plain name, without `PathBuf::push`'s
/// checks.
fn child(dir: &Path, name: &OsStr) -> PathBuf {
    let dir = dir.as_os_str();
    let mut path = OsString::with_capacity(dir.len() + 1 + name.len());
    path.push(dir);
    let ends_in_separator = dir
        .as_encoded_bytes()
        .last()
        .is_some_and(|&b| std::path::is_separator(char::from(b)));
    if !ends_in_separator {
        path.push(std::path::MAIN_SEPARATOR_STR);
    }
    path.push(name);
    PathBuf::from(path)
}

/// Resolves `rel` against `dir` into an absolute path (no symlinks followed).
pub fn join(dir: &Path, rel: &str) -> PathBuf {
    let p = Path::new(rel);
    if p.is_absolute() {
        return normalize(p);
    }
    #[cfg(unix)]
    {
        normalize_parts(dir, Some(rel))
    }
    #[cfg(not(unix))]
    {
        normalize(&dir.join(p))
    }
}

/// [`check_restriction`], printing both paths with [`display_path`] when it fails (worked out
/// only then: most checks pass).
pub fn check_restriction_shown(
    restrictor: Restrictor,
    root: &Path,
    canonical: &Path,
    shown: &str,
) -> Result<()> {
    if allowed(restrictor, root, canonical) {
        return Ok(());
    }
    check_restriction(
        restrictor,
        root,
        canonical,
        shown,
        &display_path(canonical),
        &display_path(root),
    )
}

/// Whether the restrictor lets the kustomization rooted at `root` read `canonical`.
fn allowed(restrictor: Restrictor, root: &Path, canonical: &Path) -> bool {
    restrictor == Restrictor::None || below(root, canonical) || canonical.starts_with(root)
}

/// `canonical` is `root` or below it, by bytes: the common case, cheaper than comparing
/// components (a `false` may still be a match by components, say with `//` or `/./` inside).
pub(crate) fn below(root: &Path, canonical: &Path) -> bool {
    let (root, path) = (
        root.as_os_str().as_encoded_bytes(),
        canonical.as_os_str().as_encoded_bytes(),
    );
    let sep = |b: Option<&u8>| b.is_some_and(|&b| std::path::is_separator(char::from(b)));
    path.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || sep(rest.first()) || sep(root.last()))
}

/// Checks the load restriction for a file named by the kustomization rooted at `root`
/// (canonical). `canonical` is the file's canonical path; `shown` how the kustomization wrote
/// it; `file_shown` and `root_shown` how messages print the two paths. kustomize:
/// `api/internal/loader/loadrestrictions.go`, `RestrictionRootOnly` (message kept).
fn check_restriction(
    restrictor: Restrictor,
    root: &Path,
    canonical: &Path,
    shown: &str,
    file_shown: &str,
    root_shown: &str,
) -> Result<()> {
    if allowed(restrictor, root, canonical) {
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
    /// and fails where it fails; its `kind` and `read` agree with `stat` and `std::fs::read`,
    /// asked in the order a render asks (`kind`, `canonicalize`, `read` of the canonical path)
    /// and alone.
    #[cfg(unix)]
    #[test]
    fn caching_disk_fs_agrees_with_realpath() {
        let root = std::env::temp_dir().join(format!("ply-fs-canon-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::fs::write(root.join("real/sub/f.yaml"), "a: 1\n").unwrap();
        std::fs::write(root.join("real/empty.yaml"), "").unwrap();
        std::fs::write(root.join("real/big.yaml"), "x".repeat(70_000)).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        std::os::unix::fs::symlink("sub/f.yaml", root.join("real/flink")).unwrap();
        std::os::unix::fs::symlink("nowhere.yaml", root.join("real/dangling")).unwrap();
        // Names with an extension are opened to be looked at; these are not files.
        std::fs::create_dir_all(root.join("real/dir.yaml")).unwrap();
        std::os::unix::fs::symlink("sub/f.yaml", root.join("real/flink.yaml")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("real/dangling.yaml")).unwrap();
        std::fs::write(root.join("real/Kustomization"), "b: 2\n").unwrap();
        let rels = [
            "real/dir.yaml",
            "real/flink.yaml",
            "real/dangling.yaml",
            "real/Kustomization",
            "real/dir.yaml/missing.yaml",
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
            "real/dangling",
            "real/empty.yaml",
            "real/big.yaml",
            "link/big.yaml",
            "link/sub/f.yaml",
        ];
        let kind_of = |p: &Path| {
            std::fs::metadata(p).ok().map(|m| {
                if m.is_dir() {
                    FileKind::Dir
                } else {
                    FileKind::File
                }
            })
        };
        let outcome = |r: io::Result<Vec<u8>>| r.map_err(|e| e.kind());
        for fresh in [false, true] {
            let fs = CachingDiskFs::default();
            for rel in rels {
                let fs = if fresh {
                    &CachingDiskFs::default()
                } else {
                    &fs
                };
                let p = root.join(rel);
                let want = std::fs::canonicalize(&p).ok();
                assert_eq!(fs.kind(&p), kind_of(&p), "kind {rel}");
                let got = fs.canonicalize(&p).ok();
                assert_eq!(got, want, "{rel}");
                if let Some(c) = got {
                    assert_eq!(
                        outcome(fs.read(&c)),
                        outcome(std::fs::read(&c)),
                        "read {rel}"
                    );
                }
                assert_eq!(
                    outcome(fs.read(&p)),
                    outcome(std::fs::read(&p)),
                    "read {rel}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Files a lookup leaves open are read from, and a file read twice, or looked at among
    /// more files than are kept open, is opened again: every read gives the file's bytes.
    #[cfg(unix)]
    #[test]
    fn caching_disk_fs_reads_whatever_stays_open() {
        let root = std::env::temp_dir().join(format!("ply-fs-open-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let n = KEEP_OPEN * 2 + 3;
        let paths: Vec<PathBuf> = (0..n).map(|i| root.join(format!("f{i}.yaml"))).collect();
        for (i, p) in paths.iter().enumerate() {
            std::fs::write(p, format!("i: {i}\n")).unwrap();
        }
        let fs = CachingDiskFs::default();
        for p in &paths {
            assert_eq!(fs.kind(p), Some(FileKind::File));
        }
        for (i, p) in paths.iter().enumerate().rev() {
            let want = format!("i: {i}\n").into_bytes();
            assert_eq!(fs.read(p).unwrap(), want);
            assert_eq!(fs.read(p).unwrap(), want);
        }
        let kept = fs.opened.lock().unwrap();
        assert!(kept.by_path.is_empty() && kept.order.len() <= KEEP_OPEN);
        drop(kept);
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A FIFO named like a file is looked at without waiting for a writer, and its read is
    /// refused, as `DiskFs` refuses it.
    #[cfg(target_os = "linux")]
    #[test]
    fn caching_disk_fs_looks_at_a_fifo_without_waiting() {
        let root = std::env::temp_dir().join(format!("ply-fs-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let fifo = root.join("pipe.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let fs = CachingDiskFs::default();
        assert_eq!(fs.kind(&fifo), Some(FileKind::File));
        let err = fs.read(&fifo).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The byte-wise `normalize` and `join` give what the component-wise ones give.
    #[cfg(unix)]
    #[test]
    fn normalize_by_bytes_agrees_with_components() {
        let paths = [
            "",
            "/",
            ".",
            "..",
            "/..",
            "/../..",
            "/../a",
            "a/..",
            "a/../..",
            "../..",
            "../../a",
            "/a/b/c",
            "/a//b/",
            "/a/./b/.",
            "./a",
            "a/b/../../..",
            "/a/b/../../../c/./d//e/",
            "//a",
            "/a/b/..",
            "x/../y/../../z",
        ];
        for p in paths {
            assert_eq!(
                normalize(Path::new(p)),
                normalize_components(Path::new(p)),
                "{p:?}"
            );
            for dir in ["/a/b", "/", "", "/x/../y", "rel/dir/"] {
                let want = if Path::new(p).is_absolute() {
                    normalize_components(Path::new(p))
                } else {
                    normalize_components(&Path::new(dir).join(p))
                };
                assert_eq!(join(Path::new(dir), p), want, "{dir:?} + {p:?}");
            }
        }
    }

    #[test]
    fn below_agrees_with_path_starts_with() {
        for (p, d, want) in [
            ("/a/b/c.yaml", "/a/b", true),
            ("/a/b", "/a/b", true),
            ("/a/b/c", "/a/b/", true),
            ("/x", "/", true),
            ("/a/bc/d", "/a/b", false),
            ("/a/c", "/a/b", false),
            ("a/b", "/a", false),
        ] {
            let (p, d) = (Path::new(p), Path::new(d));
            assert_eq!(below(d, p), want, "{p:?} under {d:?}");
            if want {
                assert!(p.starts_with(d));
            }
        }
    }

    #[test]
    fn restriction_by_bytes_and_components() {
        let root = Path::new("/app/base");
        for (path, ok) in [
            ("/app/base", true),
            ("/app/base/a.yaml", true),
            ("/app/base/sub/a.yaml", true),
            ("/app/basement/a.yaml", false),
            ("/app/a.yaml", false),
            ("/app//base/a.yaml", true),
        ] {
            assert_eq!(
                allowed(Restrictor::RootOnly, root, Path::new(path)),
                ok,
                "{path}"
            );
        }
        assert!(allowed(
            Restrictor::RootOnly,
            Path::new("/"),
            Path::new("/x")
        ));
    }
}
