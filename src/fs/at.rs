//! Learning what a path is by opening it, for [`super::CachingDiskFs`]: one `open` of the path
//! (not following a final symlink, never waiting) and an `fstat` of what it opened, where an
//! `lstat` and, for a file, a later `open` walked the whole path twice. The file stays open for
//! the read that follows. The only module that names rustix; unix only.
//!
//! On this project's machines an `lstat` of a monorepo's path cost 1.3 µs, an `open` and
//! `close` 2.4 µs, an `fstat` 0.4 µs (docs/performance.md, seventh session).

use std::fs::File;
use std::io;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use super::Stat;

/// What opening a path found.
pub(super) enum Probe {
    /// A file, directory or special file; a regular file stays open.
    Found(Stat, Option<File>),
    /// The path's last component is a symlink.
    Symlink,
    /// Nothing is there (`ENOENT`, `ENOTDIR`): what `lstat` would say too.
    Missing(io::Error),
    /// The open failed where `lstat` may not (no read permission, a socket, no descriptor
    /// left): ask `lstat`.
    Unknown,
}

/// Opens `path` for reading without following a symlink at its end and without waiting (a
/// FIFO opens at once and is never read; `O_NOCTTY`: a terminal does not become the
/// process's), then asks the opened file what it is. Only a regular file stays open; a
/// directory, FIFO or device is closed at once, unread.
pub(super) fn probe(path: &Path) -> Probe {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        // Linux's answer to `O_NOFOLLOW` on a symlink (other systems' answers fall to `lstat`).
        Err(Errno::LOOP) => return Probe::Symlink,
        Err(e @ (Errno::NOENT | Errno::NOTDIR)) => return Probe::Missing(e.into()),
        Err(_) => return Probe::Unknown,
    };
    let Ok(st) = rustix::fs::fstat(&fd) else {
        return Probe::Unknown;
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Directory => Probe::Found(Stat::Dir, None),
        FileType::RegularFile => Probe::Found(
            Stat::File(u64::try_from(st.st_size).unwrap_or(0)),
            Some(File::from(fd)),
        ),
        _ => Probe::Found(Stat::Special, None),
    }
}
