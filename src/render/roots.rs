//! Finding kustomization roots: the directories of a file list that hold a kustomization,
//! and among them those no other kustomization includes (`ply render --all`, `ply diff
//! --all`). kustomize has no counterpart: it builds the one directory it is given.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::shared::{Shared, load_kustomization};
use crate::diag::Warnings;
use crate::fs::{FileKind, Fs};
use crate::kustomization::load::{COMPONENT_KIND, FILE_NAMES};

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

/// Whether the kustomization file of `dir` says `kind: Component`, read without loading it
/// (for one that does not load): as a YAML document when it parses, else by a top-level
/// `kind: Component` line.
fn declares_component(fs: &dyn Fs, dir: &Path) -> bool {
    let Some(bytes) = FILE_NAMES.iter().find_map(|n| fs.read(&dir.join(n)).ok()) else {
        return false;
    };
    let text = String::from_utf8_lossy(&bytes);
    if let Ok(doc) = crate::yaml::parse::parse_one(crate::yaml::parse::first_document(&text)) {
        return doc.str_at(&["kind"]) == Some(COMPONENT_KIND);
    }
    text.lines().any(|l| {
        l.strip_prefix("kind:")
            .is_some_and(|v| v.trim().trim_matches(['"', '\'']) == COMPONENT_KIND)
    })
}

/// The kustomization roots among `dirs`: those no other kustomization names under
/// `resources`, `components`, `generators`, `transformers` or `validators`, and never a
/// component (`kind: Component`), whether or not anything uses it: a component is made to be
/// listed under `components` (kustomize refuses one named as a resource,
/// `api/internal/target/kusttarget.go`, `accumulateDirectory`), so rendered alone it is not
/// what anything deploys. One that cannot be loaded is a root (rendering it reports
/// why), unless its file still says `kind: Component` ([`declares_component`]).
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
            if declares_component(fs, dir) {
                components.insert(dir.clone());
            }
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
