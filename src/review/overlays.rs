//! Which overlays a review compares: those named (directories, or globs matched against the
//! kustomization directories of both sides) or, with `--all`, every kustomization root of
//! either side (render/roots.rs), paired by directory into an [`Overlay`] that says where it
//! is on each side; and the shards of `--shard I/N`. Reads only through the sides' [`Fs`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind};
use crate::fs::{FileKind, Fs};
use crate::kustomization::load::FILE_NAMES;
use crate::report::model::Affixes;

/// An overlay to compare: its name in the report, where it is on each side (`None`: absent
/// there) and how a side renders ([`Kind`]).
#[derive(Clone, Debug)]
pub(crate) struct Overlay {
    pub name: String,
    /// A kustomization root's directory; a GitOps target's declaring file.
    pub old: Option<PathBuf>,
    pub new: Option<PathBuf>,
    pub kind: Kind,
}

/// What an overlay is, which says how one side of it renders.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// A kustomization root: `kustomize build` of its directory.
    Kustomize,
    /// A GitOps controller's target (a Flux Kustomization, an Argo CD Application), rendered
    /// at each side as the controller renders it ([`super::gitops`]).
    Gitops(std::sync::Arc<super::gitops::Pair>),
}

/// Shard `index` of `count` (1-based): overlays in name order, every `count`-th.
pub(crate) fn shard(overlays: Vec<Overlay>, index: usize, count: usize) -> Vec<Overlay> {
    let mut sorted = overlays;
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    sorted
        .into_iter()
        .enumerate()
        .filter(|(i, _)| count == 0 || i % count + 1 == index)
        .map(|(_, o)| o)
        .collect()
}

/// Whether a directory holds a kustomization on a side.
pub(crate) fn has_kustomization(fs: &dyn Fs, dir: &Path) -> bool {
    FILE_NAMES
        .iter()
        .any(|n| fs.kind(&dir.join(n)) == Some(FileKind::File))
}

/// Overlays named by the user or found (`--all`), as the union over both sides, keyed by
/// their directory relative to `root` (the repository's working tree).
pub(crate) fn overlays_in(
    root: &Path,
    old: &BTreeSet<PathBuf>,
    new: &BTreeSet<PathBuf>,
) -> Vec<Overlay> {
    let mut by_path: BTreeMap<PathBuf, Overlay> = BTreeMap::new();
    for (dirs, is_old) in [(old, true), (new, false)] {
        for d in dirs {
            let o = by_path.entry(d.clone()).or_insert_with(|| Overlay {
                name: overlay_name(root, d),
                old: None,
                new: None,
                kind: Kind::Kustomize,
            });
            if is_old {
                o.old = Some(d.clone());
            } else {
                o.new = Some(d.clone());
            }
        }
    }
    by_path.into_values().collect()
}

/// An overlay's name in the report: its directory relative to `root` (`.` for the root).
pub(crate) fn overlay_name(root: &Path, dir: &Path) -> String {
    match dir.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => dir.display().to_string(),
    }
}

/// The overlays named on the command line (globs matched against the kustomization
/// directories of both sides, `all_dirs`), or the current directory when none is.
pub(crate) fn named(
    paths: &[PathBuf],
    cwd: &Path,
    root: &Path,
    old_fs: &dyn Fs,
    new_fs: &dyn Fs,
    all_dirs: impl Fn() -> (BTreeSet<PathBuf>, BTreeSet<PathBuf>),
) -> Result<Vec<Overlay>, Error> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    // Directories taken, by their bytes (comparing `Path`s walks their components: hundreds
    // of overlays matched by a glob made this quadratic scan a fifth of a review's work).
    let mut taken: crate::fasthash::FastSet<Vec<u8>> = Default::default();
    let mut take = |dirs: &mut Vec<PathBuf>, d: &PathBuf| {
        if taken.insert(d.as_os_str().as_encoded_bytes().to_vec()) {
            dirs.push(d.clone());
        }
    };
    let given: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut known = None;
    for p in &given {
        let text = p.to_string_lossy();
        if text.contains(['*', '?', '[', '{']) {
            let pattern = crate::fs::normalize(&cwd.join(p));
            let glob = globset::Glob::new(&pattern.to_string_lossy())
                .map_err(|e| usage(format!("'{text}' is not a valid glob: {e}")))?
                .compile_matcher();
            let (old, new) = known.get_or_insert_with(&all_dirs);
            let before = dirs.len();
            for d in old.iter().chain(new.iter()) {
                if glob.is_match(d) {
                    take(&mut dirs, d);
                }
            }
            if dirs.len() == before {
                return Err(usage(format!(
                    "'{text}' matches no kustomization directory at either side"
                )));
            }
        } else {
            take(&mut dirs, &crate::fs::normalize(&cwd.join(p)));
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        let old = has_kustomization(old_fs, &d).then(|| d.clone());
        let new = has_kustomization(new_fs, &d).then(|| d.clone());
        if old.is_none() && new.is_none() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "no kustomization in '{}' at either side",
                    crate::source::display_path(&d)
                ),
            ));
        }
        out.push(Overlay {
            name: overlay_name(root, &d),
            old,
            new,
            kind: Kind::Kustomize,
        });
    }
    Ok(out)
}

/// A usage error.
pub(crate) fn usage(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Usage, message.into())
}

/// The overlay's own `namePrefix` and `nameSuffix`: its kustomization's at the head, or at
/// the base for an overlay the head no longer has (empty where unset, or where the file does
/// not load: the render says why).
pub(crate) fn affixes(overlay: &Overlay, old: &dyn Fs, new: &dyn Fs) -> Affixes {
    if matches!(overlay.kind, Kind::Gitops(_)) {
        // A GitOps target's paths are the files that declare it, not kustomization roots.
        return Affixes::default();
    }
    let (fs, dir) = match (&overlay.new, &overlay.old) {
        (Some(dir), _) => (new, dir),
        (None, Some(dir)) => (old, dir),
        (None, None) => return Affixes::default(),
    };
    let Some(bytes) = FILE_NAMES.iter().find_map(|n| fs.read(&dir.join(n)).ok()) else {
        return Affixes::default();
    };
    let text = String::from_utf8_lossy(&bytes);
    let Some(doc) = crate::yaml::parse::parse_documents(&text)
        .ok()
        .and_then(|d| d.into_iter().next())
    else {
        return Affixes::default();
    };
    let field = |k: &str| doc.node.str_at(&[k]).unwrap_or("").to_string();
    Affixes {
        prefix: field("namePrefix"),
        suffix: field("nameSuffix"),
    }
}

/// The GitOps targets of two revisions as overlays (`ply diff --gitops`), in name order.
pub(crate) fn gitops(
    old: std::sync::Arc<super::gitops::Revision>,
    new: std::sync::Arc<super::gitops::Revision>,
) -> Vec<Overlay> {
    super::gitops::pairs(old, new)
        .into_iter()
        .map(|(name, old, new, pair)| Overlay {
            name,
            old,
            new,
            kind: Kind::Gitops(std::sync::Arc::new(pair)),
        })
        .collect()
}
