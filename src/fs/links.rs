//! Following symlinks through a tree kept in memory, as the system does (from `/`, one name at
//! a time, at most 40 links): the one walk of the in-memory file system ([`super::MemFs`]) and
//! of a git revision's tree (`git.rs`). Each tree says what is at a path ([`LinkTree`]); the
//! walk knows no tree.

use std::io;
use std::path::{Path, PathBuf};

/// What a [`LinkTree`] holds at an absolute path.
pub(crate) enum At<'a, E> {
    /// Nothing.
    Nothing,
    /// A symlink to this target (relative to the link's directory, or absolute).
    Link(&'a Path),
    /// Something to walk into or end at: an entry, or `None` for a directory the tree knows
    /// only as an ancestor of its own.
    Here(Option<E>),
}

/// A tree whose symlinks [`follow`] follows.
pub(crate) trait LinkTree {
    type Entry: Copy;
    /// What is at `path` (absolute, normalised), or an error that refuses the path.
    fn at(&self, path: &Path) -> io::Result<At<'_, Self::Entry>>;
    /// What is at `path` after a `..`, without refusing it.
    fn entry(&self, path: &Path) -> Option<Self::Entry>;
    fn is_file(entry: Self::Entry) -> bool;
    fn not_found(&self) -> io::Error;
}

/// How a tree's walk differs: the git tree normalises the path and each link's target first,
/// and lets a `..` climb out of a file (`file/..`); the in-memory tree takes the components as
/// they are and refuses any name after a file.
#[derive(Clone, Copy)]
pub(crate) struct Rules {
    pub normalize: bool,
    pub dotdot_after_file: bool,
}

/// The path with every symlink followed, and what is there (`None`: the root, or an ancestor
/// the tree does not hold).
pub(crate) fn follow<T: LinkTree>(
    tree: &T,
    path: &Path,
    rules: Rules,
) -> io::Result<(PathBuf, Option<T::Entry>)> {
    let parts = |p: &Path| -> Vec<PathBuf> {
        let p = if rules.normalize {
            super::normalize(p)
        } else {
            p.to_path_buf()
        };
        let mut parts: Vec<PathBuf> = p
            .components()
            .map(|c| PathBuf::from(c.as_os_str()))
            .collect();
        parts.reverse();
        parts
    };
    let mut hops = 0;
    let mut cur = PathBuf::from("/");
    let mut rest = parts(path);
    let mut here: Option<T::Entry> = None;
    while let Some(part) = rest.pop() {
        let s = part.as_os_str();
        if s == "/" || s == "." {
            continue;
        }
        if s == ".." {
            cur.pop();
            if rules.dotdot_after_file {
                here = tree.entry(&cur);
            }
            continue;
        }
        if rules.dotdot_after_file && here.is_some_and(T::is_file) {
            return Err(tree.not_found());
        }
        let next = cur.join(&part);
        match tree.at(&next)? {
            At::Nothing => return Err(tree.not_found()),
            At::Link(target) => {
                hops += 1;
                if hops > 40 {
                    return Err(io::Error::other("too many levels of symbolic links"));
                }
                let target = if target.is_absolute() {
                    target.to_path_buf()
                } else {
                    cur.join(target)
                };
                cur = PathBuf::from("/");
                here = None;
                rest.extend(parts(&target));
            }
            At::Here(e) => {
                if !rules.dotdot_after_file && e.is_some_and(T::is_file) && !rest.is_empty() {
                    return Err(tree.not_found());
                }
                cur = next;
                here = e;
            }
        }
    }
    Ok((cur, here))
}
