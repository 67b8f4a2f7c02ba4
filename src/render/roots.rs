//! Finding kustomization roots: the directories of a file list that hold a kustomization,
//! and among them those no other kustomization includes (`ply render --all`, `ply diff
//! --all`). kustomize has no counterpart: it builds the one directory it is given.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::shared::{Shared, load_kustomization};
use crate::diag::Warnings;
use crate::fs::{FileKind, Fs};
use crate::kustomization::load::FILE_NAMES;

/// The directories of `files` that hold a kustomization file.
pub(crate) fn kustomization_dirs(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    files
        .iter()
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| FILE_NAMES.iter().any(|k| n == *k))
        })
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .collect()
}

/// The kustomization roots among `dirs`: those no other kustomization names under
/// `resources`, `components`, `generators`, `transformers` or `validators`, and not
/// components. One that cannot be loaded is a root (rendering it reports why).
/// Kustomizations are loaded through `shared`, when given, for the renders to reuse.
pub(crate) fn roots(
    fs: &dyn Fs,
    dirs: &BTreeSet<PathBuf>,
    shared: Option<&Shared>,
) -> BTreeSet<PathBuf> {
    let mut included: BTreeSet<PathBuf> = BTreeSet::new();
    let mut components: BTreeSet<PathBuf> = BTreeSet::new();
    let mut warnings = Warnings::default();
    for dir in dirs {
        let restrictor = crate::fs::Restrictor::RootOnly;
        let Ok(loaded) = load_kustomization(fs, dir, restrictor, shared, &mut warnings) else {
            continue;
        };
        if loaded.is_component() {
            components.insert(dir.clone());
        }
        let k = &loaded.kustomization;
        let named = k
            .resources
            .iter()
            .chain(&k.components)
            .chain(&k.generators)
            .chain(&k.transformers)
            .chain(&k.validators);
        for entry in named {
            let target = crate::fs::join(dir, entry);
            if fs.kind(&target) == Some(FileKind::Dir) {
                if let Ok(c) = fs.canonicalize(&target) {
                    included.insert(c);
                }
            }
        }
    }
    dirs.iter()
        .filter(|d| !included.contains(*d) && !components.contains(*d))
        .cloned()
        .collect()
}
