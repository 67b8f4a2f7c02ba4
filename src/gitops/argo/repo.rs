//! The repository an Argo CD Application's sources are read from: what discovery, the
//! renderers and the Helm source share.

use std::path::PathBuf;

use crate::fs::Fs;

/// The repository an Application's sources are read from.
pub(crate) struct Repo<'a> {
    pub fs: &'a dyn Fs,
    /// Absolute, canonical.
    pub root: PathBuf,
    /// Every file, relative to `root`, in walk order (`filepath.Walk`: by name, directory by
    /// directory).
    pub files: Vec<PathBuf>,
    /// The URLs that name this repository (none: every source is this repository).
    pub urls: Vec<String>,
}
