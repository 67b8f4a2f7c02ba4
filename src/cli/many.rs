//! `ply render DIR DIR… --output-dir OUT` and `ply render --all [DIR] --output-dir OUT`: many
//! kustomizations rendered in one process, on every core, each file parsed once for all of
//! them (`render::Shared`), each written to OUT/<DIR>.yaml as `ply render DIR -o FILE` writes
//! it (or, with `--per-resource`, into OUT/<DIR>/ as `ply render DIR --output-dir` does).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::diag::{Error, ErrorKind, Warnings};
use crate::output::{Target, write};
use crate::render::{Reading, RenderOptions, Rendered};

/// How each kustomization's output is laid out under OUT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// One file, OUT/<DIR>.yaml (OUT/root.yaml for the current directory).
    OneFile,
    /// One file per resource in OUT/<DIR>/ (OUT itself for the current directory).
    PerResource,
}

/// The file name, under OUT, of the current directory's output in the one-file layout.
const ROOT_NAME: &str = "root.yaml";

/// The kustomizations to render: those named, or with `all` every root under them; each
/// with where under `out` its output goes. Two kustomizations whose outputs would be the same
/// path, or one a file where the other needs a directory, are a usage error before anything
/// renders.
pub(super) fn kustomizations(
    dirs: &[PathBuf],
    all: bool,
    out: &Path,
    layout: Layout,
) -> Result<Vec<(PathBuf, Target)>, Error> {
    let cwd = std::env::current_dir().map_err(|e| Error::io(Path::new("."), &e))?;
    let mut found = Vec::new();
    for dir in dirs {
        if !all {
            found.push(dir.clone());
            continue;
        }
        if !dir.is_dir() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("no such directory: '{}'", dir.display()),
            ));
        }
        // Canonical, as the includes that `roots` compares them with.
        let dir = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, &e))?;
        let files = crate::fs::files_under(&dir).map_err(|e| Error::io(&dir, &e))?;
        let candidates = crate::render::roots::kustomization_dirs(&files);
        let roots = crate::render::roots::roots(&crate::fs::DiskFs, &candidates, None);
        if roots.is_empty() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("no kustomization under '{}'", dir.display()),
            )
            .help("--all renders every kustomization root under DIR (default: .)"));
        }
        found.extend(roots);
    }
    let mut planned: Vec<(PathBuf, Target)> = Vec::new();
    let mut taken: HashMap<PathBuf, usize> = HashMap::new();
    for dir in found {
        let rel = relative_name(&cwd, &dir);
        let into = match layout {
            Layout::PerResource => out.join(&rel),
            Layout::OneFile if rel.as_os_str().is_empty() => out.join(ROOT_NAME),
            Layout::OneFile => {
                let mut name = rel.into_os_string();
                name.push(".yaml");
                out.join(name)
            }
        };
        if let Some(&other) = taken.get(&into) {
            return Err(clash(&planned[other].0, &dir, &into));
        }
        taken.insert(into.clone(), planned.len());
        let target = match layout {
            Layout::OneFile => Target::File(into),
            Layout::PerResource => Target::Dir(into),
        };
        planned.push((dir, target));
    }
    if layout == Layout::OneFile {
        // A file OUT/a.yaml and a kustomization in a directory named `a.yaml` (OUT/a.yaml/b.yaml)
        // cannot both be written; each output's directories are looked up, not every pair.
        let files: HashSet<&Path> = taken.keys().map(PathBuf::as_path).collect();
        for (dir, target) in &planned {
            let Target::File(path) = target else { continue };
            if let Some(file) = path.ancestors().skip(1).find(|a| files.contains(a)) {
                let other = &planned[taken[file]].0;
                return Err(clash(other, dir, file).help(
                    "one is written to a file where the other needs a directory; \
                     render them in two runs, or use --per-resource",
                ));
            }
        }
    }
    Ok(planned)
}

/// Two kustomizations' outputs would meet at `at`.
fn clash(one: &Path, other: &Path, at: &Path) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!(
            "'{}' and '{}' would both be written to '{}'",
            one.display(),
            other.display(),
            at.display()
        ),
    )
}

/// Where under OUT a kustomization's output goes: its directory relative to the current one
/// (`.` is empty); a directory outside it by its absolute path, without the leading `/`.
fn relative_name(cwd: &Path, dir: &Path) -> PathBuf {
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| cwd.join(dir));
    let rel = match std::fs::canonicalize(cwd) {
        Ok(c) => abs.strip_prefix(&c).map(Path::to_path_buf).ok(),
        Err(_) => None,
    };
    let rel = rel.unwrap_or(abs);
    rel.components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .collect()
}

/// Renders every planned kustomization and writes each that renders: all at once when there
/// are at most twice as many as cores, else twice as many as cores at a time. More renders
/// than cores share them through the scheduler, which keeps every core busy to the end: with
/// one render per core, three overlays on two cores ran two, then the third alone on one
/// core (docs/performance.md, "Renders at once"). The first failure (in the given order) is
/// the error; the others are named in warnings. The last command of a process: it leaves the
/// last renders and the shared parses for the process's end to reclaim.
pub(super) fn render_all(
    planned: &[(PathBuf, Target)],
    opts: &RenderOptions,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    let jobs = (2 * crate::par::cores()).clamp(1, planned.len().max(1));
    let mut opts = opts.clone();
    opts.shared
        .get_or_insert_with(|| std::sync::Arc::new(crate::render::Shared::default()));
    if jobs > 1 {
        // The cores go to whole renders.
        opts.reading = Reading::OneThread;
    }
    let fs = crate::fs::CachingDiskFs::default();
    let started = AtomicUsize::new(0);
    let results = crate::par::map(planned.len(), jobs, |i| {
        started.fetch_add(1, Ordering::Relaxed);
        let (dir, target) = &planned[i];
        let mut own = Warnings::default();
        let done = crate::render::render_with(&fs, dir, &opts, &mut own).and_then(|rendered| {
            let written = write_one(&rendered, target, opts.limits.output_size);
            // Once every render has started, none comes to reuse this one's memory, and the
            // process ends after them: freeing every node one by one would only cost time
            // (as for one kustomization in `run_render`; docs/performance.md).
            if started.load(Ordering::Relaxed) == planned.len() {
                std::mem::forget(rendered);
            }
            written
        });
        (done, own)
    });
    // The parses every render shared, likewise.
    std::mem::forget(opts);
    std::mem::forget(fs);
    let mut first = None;
    let mut failed = Vec::new();
    for ((dir, _), slot) in planned.iter().zip(results) {
        let Some((done, own)) = slot else {
            failed.push(dir.display().to_string());
            continue;
        };
        for w in own.messages() {
            warnings.warn(w.clone());
        }
        if let Err(e) = done {
            if first.is_none() {
                first = Some(e);
            } else {
                failed.push(dir.display().to_string());
            }
        }
    }
    for dir in &failed {
        warnings.warn(format!(
            "{dir}: failed to render as well (render it alone for its diagnostic)"
        ));
    }
    match first {
        Some(e) => Err(e),
        None if failed.is_empty() => Ok(()),
        None => Err(Error::new(
            ErrorKind::Io,
            format!("rendering stopped before: {}", failed.join(", ")),
        )),
    }
}

/// One kustomization's output, written as `ply render DIR -o FILE` (atomically: a failed write
/// leaves no file) or `ply render DIR --output-dir DIR` writes it; the output limit applies to
/// each kustomization, as when it is rendered alone.
fn write_one(rendered: &Rendered, target: &Target, max_size: usize) -> Result<(), Error> {
    if let Target::File(path) = target {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, &e))?;
        }
    }
    let tables = &rendered.tables;
    write(
        &rendered.resources,
        target,
        &|g| tables.is_cluster_scoped(g),
        max_size,
    )?;
    Ok(())
}
