//! `ply render DIR DIR… --output-dir OUT` and `ply render --all [DIR] --output-dir OUT`: many
//! kustomizations rendered in one process, on every core, each file parsed once for all of
//! them (`build::Shared`), each written as `ply render DIR --output-dir OUT/<DIR>` writes it.

use std::path::{Path, PathBuf};

use crate::build::{Reading, RenderOptions, Rendered};
use crate::diag::{Error, ErrorKind, Warnings};
use crate::output::{Target, write};

/// The kustomizations to render: those named, or with `all` every root under them; each
/// with the directory under `out` its output goes to.
pub fn kustomizations(
    dirs: &[PathBuf],
    all: bool,
    out: &Path,
) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
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
        let candidates = crate::build::roots::kustomization_dirs(&files);
        let roots = crate::build::roots::roots(&crate::fs::DiskFs, &candidates, None);
        if roots.is_empty() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("no kustomization under '{}'", dir.display()),
            )
            .help("--all renders every kustomization root under DIR (default: .)"));
        }
        found.extend(roots);
    }
    let mut planned: Vec<(PathBuf, PathBuf)> = Vec::new();
    for dir in found {
        let into = out.join(relative_name(&cwd, &dir));
        if let Some((other, _)) = planned.iter().find(|(_, o)| *o == into) {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "'{}' and '{}' would both be written to '{}'",
                    other.display(),
                    dir.display(),
                    into.display()
                ),
            ));
        }
        planned.push((dir, into));
    }
    Ok(planned)
}

/// Where under OUT a kustomization's output goes: its directory relative to the current one
/// (`.` is OUT itself); a directory outside it by its absolute path, without the leading `/`.
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

/// Renders every planned kustomization, as many at once as there are cores, and writes each
/// that renders. The first failure (in the given order) is the error; the others are named
/// in warnings.
pub fn render_all(
    planned: &[(PathBuf, PathBuf)],
    opts: &RenderOptions,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    let jobs = crate::par::cores().clamp(1, planned.len().max(1));
    let mut opts = opts.clone();
    opts.shared
        .get_or_insert_with(|| std::sync::Arc::new(crate::build::Shared::default()));
    if jobs > 1 {
        // The cores go to whole renders.
        opts.reading = Reading::OneThread;
    }
    let fs = crate::fs::CachingDiskFs::default();
    let results = crate::par::map(planned.len(), jobs, |i| {
        let (dir, into) = &planned[i];
        let mut own = Warnings::default();
        let done = crate::build::render_with(&fs, dir, &opts, &mut own)
            .and_then(|rendered| write_one(&rendered, into));
        (done, own)
    });
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

/// One kustomization's output, written as `ply render DIR --output-dir INTO` writes it.
fn write_one(rendered: &Rendered, into: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(into).map_err(|e| Error::io(into, &e))?;
    let tables = &rendered.tables;
    write(
        &rendered.resources,
        &Target::Dir(into.to_path_buf()),
        &|g| tables.is_cluster_scoped(g),
    )?;
    Ok(())
}
