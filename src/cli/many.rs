//! `ply render DIR DIR… --output-dir OUT` and `ply render --all [DIR] --output-dir OUT`: many
//! kustomizations rendered in one process, on every core, each file parsed once for all of
//! them (`render::Shared`), each written to OUT/<DIR>.yaml as `ply render DIR -o FILE` writes
//! it (or, with `--per-resource`, into OUT/<DIR>/ as `ply render DIR --output-dir` does).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::diag::{Error, ErrorKind, Warnings};
use crate::output::{Target, write_rendered};
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
    let found = found(dirs, all)?;
    plan(&cwd, found, out, layout)
}

/// The kustomizations named, or with `all` every root under them (canonical paths).
fn found(dirs: &[PathBuf], all: bool) -> Result<Vec<PathBuf>, Error> {
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
    Ok(found)
}

/// `ply render --all --list`: the roots under `dirs`, one per line, relative to the current
/// directory (`.` for itself).
pub(crate) fn list(dirs: &[PathBuf]) -> Result<String, Error> {
    let cwd = std::env::current_dir().map_err(|e| Error::io(Path::new("."), &e))?;
    let mut out = String::new();
    for dir in found(dirs, true)? {
        let rel = relative_name(&cwd, &dir);
        if rel.as_os_str().is_empty() {
            out.push_str(".\n");
        } else {
            out.push_str(&format!("{}\n", rel.display()));
        }
    }
    Ok(out)
}

/// Where each kustomization's output goes, refusing two that would meet.
fn plan(
    cwd: &Path,
    found: Vec<PathBuf>,
    out: &Path,
    layout: Layout,
) -> Result<Vec<(PathBuf, Target)>, Error> {
    let mut planned: Vec<(PathBuf, Target)> = Vec::new();
    let mut taken: HashMap<PathBuf, usize> = HashMap::new();
    for dir in found {
        let rel = relative_name(cwd, &dir);
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
/// core (docs/performance.md, "Renders at once"). Every failure is kept, with its
/// kustomization ([`Tally`]). The last command of a process: it leaves the last renders and the
/// shared parses for the process's end to reclaim.
pub(super) fn render_all(
    planned: &[(PathBuf, Target)],
    opts: &RenderOptions,
    warnings: &mut Warnings,
) -> Tally {
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
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut tally = Tally::default();
    for ((dir, _), slot) in planned.iter().zip(results) {
        let rel = relative_name(&cwd, dir);
        let name = if rel.as_os_str().is_empty() {
            ".".to_string()
        } else {
            rel.display().to_string()
        };
        let Some((done, own)) = slot else {
            let stopped = Error::new(ErrorKind::Io, "rendering stopped before it");
            tally.failed.push((name, stopped));
            continue;
        };
        for w in own.messages() {
            warnings.warn(w.clone());
        }
        match done {
            Ok(()) => tally.rendered += 1,
            Err(e) => tally.failed.push((name, e)),
        }
    }
    tally
}

/// What `render_all` did: how many rendered, and each failure with its kustomization's name
/// (relative to the current directory), in the given order.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) rendered: usize,
    pub(crate) failed: Vec<(String, Error)>,
}

impl Tally {
    /// The account for stderr: one line per failure, its kustomization and first diagnostic
    /// (`error: apps/x: ply::not-found (apps/x/kustomization.yaml:3): 'a.yaml' does not exist`;
    /// with `--error-format github|json`, each failure in that format), then the last line
    /// `48 rendered, 17 failed (16 need \`ply fetch\`, 1 missing file)`.
    pub(crate) fn account(&self, format: super::ErrorFormat) -> String {
        let mut out = String::new();
        for (name, e) in &self.failed {
            if format == super::ErrorFormat::Human {
                let place = match &e.location {
                    Some(l) => format!(" ({}:{})", l.file.display, l.file.line_col(l.offset).0),
                    None => String::new(),
                };
                out.push_str(&format!(
                    "error: {name}: {}{place}: {}",
                    e.kind.code(),
                    e.message.lines().next().unwrap_or("")
                ));
                out.push('\n');
            } else {
                out.push_str(&super::error_format::error(e, format));
            }
        }
        let codes: Vec<&str> = self.failed.iter().map(|(_, e)| e.kind.code()).collect();
        out.push_str(&crate::report::text::rendered_line(self.rendered, &codes));
        out.push('\n');
        out
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
    write_rendered(&rendered.resources, &rendered.tables, target, max_size)?;
    Ok(())
}
