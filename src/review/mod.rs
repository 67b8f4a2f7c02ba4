//! `ply diff` between two renders: every overlay rendered at a base and at a head (two git
//! revisions, a revision and the working tree, or two directories), paired object by object
//! ([`compare`]), and reported for reviewers ([`report`]). Finds the overlays (`--all`: every
//! kustomization no other one includes), splits them into shards, and with `--changed-only`
//! compares at the base only the overlays whose head render asked about a file that differs
//! between the two sides — the exact set of paths, recorded through [`crate::fs::record`].
//! Reads files only through the [`Fs`] of each side; prints nothing.

pub mod compare;
pub mod report;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::diag::{Error, ErrorKind, Warnings};
use crate::diff::Action;
use crate::diff::adapters::Builtin;
use crate::fasthash::FastMap;
use crate::fs::record::Recording;
use crate::fs::{FileKind, Fs};
use crate::kustomization::load::FILE_NAMES;
use crate::render::RenderOptions;
use crate::resource::Resource;

pub use compare::Object;

/// One side of the comparison: where its files come from, and what to call it.
pub struct Side<'a> {
    pub fs: &'a dyn Fs,
    /// `main (0123456789ab)`, `working tree`, a directory.
    pub label: String,
}

/// Validated options of a review.
#[derive(Clone, Debug)]
pub struct ReviewOptions {
    pub render: RenderOptions,
    pub show_secrets: bool,
    /// Compare at the base only overlays whose head render read something that changed.
    pub changed_only: bool,
    /// Overlays rendered at once (each render then reads on its own thread only).
    pub jobs: usize,
    /// How an error is written into the report (the CLI's diagnostic text).
    pub describe: fn(&Error) -> String,
}

/// An overlay to compare: its name in the report and its directory on each side (`None`:
/// absent there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlay {
    pub name: String,
    pub old: Option<PathBuf>,
    pub new: Option<PathBuf>,
}

/// How an overlay came out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Rendered on both sides.
    Compared,
    /// No kustomization at the base: every object is a creation.
    Added,
    /// No kustomization at the head: every object is a deletion.
    Removed,
    /// It fails to render at the base and renders at the head: every object is a creation.
    BaseFailed(String),
    /// It fails to render at the head: an error (exit 2).
    HeadFailed(String),
}

/// The comparison of one overlay.
#[derive(Clone, Debug)]
pub struct OverlayReview {
    pub name: String,
    pub status: Status,
    pub objects: Vec<Object>,
    pub warnings: Vec<String>,
}

impl OverlayReview {
    pub fn count(&self, action: Action) -> usize {
        self.objects.iter().filter(|o| o.action == action).count()
    }

    pub fn changed(&self) -> bool {
        self.objects.iter().any(|o| o.action != Action::Unchanged)
            || matches!(self.status, Status::HeadFailed(_))
    }
}

/// The whole review.
#[derive(Clone, Debug)]
pub struct Review {
    pub base: String,
    pub head: String,
    pub overlays: Vec<OverlayReview>,
}

impl Review {
    /// 0 no change, 1 changes, 2 an overlay fails to render at the head.
    pub fn exit_code(&self) -> i32 {
        if self
            .overlays
            .iter()
            .any(|o| matches!(o.status, Status::HeadFailed(_)))
        {
            crate::diag::exit::DIFF_ERROR
        } else if self.overlays.iter().any(OverlayReview::changed) {
            1
        } else {
            crate::diag::exit::OK
        }
    }

    pub fn count(&self, action: Action) -> usize {
        self.overlays.iter().map(|o| o.count(action)).sum()
    }
}

/// Shard `index` of `count` (1-based): overlays in name order, every `count`-th.
pub fn shard(overlays: Vec<Overlay>, index: usize, count: usize) -> Vec<Overlay> {
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
pub fn has_kustomization(fs: &dyn Fs, dir: &Path) -> bool {
    FILE_NAMES
        .iter()
        .any(|n| fs.kind(&dir.join(n)) == Some(FileKind::File))
}

/// Renders and compares every overlay, `opts.jobs` at a time; the result keeps the overlays'
/// order.
pub fn review(
    overlays: &[Overlay],
    old: &Side<'_>,
    new: &Side<'_>,
    opts: &ReviewOptions,
) -> Review {
    let same = SameCache::default();
    // The schema (list keys for change paths), built once for every overlay.
    let kinds = Builtin::new();
    let jobs = opts.jobs.clamp(1, overlays.len().max(1));
    let mut render = opts.render.clone();
    // Every file both revisions and all overlays hold alike is parsed once.
    render
        .shared
        .get_or_insert_with(|| std::sync::Arc::new(crate::render::Shared::default()));
    if jobs > 1 {
        render.reading = crate::render::Reading::OneThread;
    }
    let done = crate::par::map(overlays.len(), jobs, |i| {
        one(&overlays[i], old, new, &render, opts, &same, &kinds)
    });
    Review {
        base: old.label.clone(),
        head: new.label.clone(),
        overlays: done.into_iter().flatten().collect(),
    }
}

/// What each path holds on both sides is the same: answers remembered for all overlays, by
/// the path's bytes (hashing a `Path` walks its components).
#[derive(Default)]
struct SameCache(Mutex<FastMap<Vec<u8>, bool>>);

impl SameCache {
    fn same(&self, path: &Path, old: &dyn Fs, new: &dyn Fs) -> bool {
        let key = path.as_os_str().as_encoded_bytes();
        if let Some(s) = self.0.lock().ok().and_then(|m| m.get(key).copied()) {
            return s;
        }
        let s = same_at(path, old, new);
        if let Ok(mut m) = self.0.lock() {
            m.insert(key.to_vec(), s);
        }
        s
    }
}

/// Same kind, same target, same bytes at both sides. The head's bytes are read once; the
/// base (a git revision, with `--base`) compares them with its blob id where it can, else its
/// own bytes are read.
fn same_at(path: &Path, old: &dyn Fs, new: &dyn Fs) -> bool {
    let kind = old.kind(path);
    if kind != new.kind(path) || old.canonicalize(path).ok() != new.canonicalize(path).ok() {
        return false;
    }
    if kind != Some(FileKind::File) {
        return true;
    }
    let Ok(bytes) = new.read(path) else {
        return false;
    };
    old.holds(path, &bytes)
        .unwrap_or_else(|| old.read(path).is_ok_and(|b| b == bytes))
}

fn render_on(
    fs: &dyn Fs,
    dir: &Path,
    opts: &RenderOptions,
    warnings: &mut Warnings,
) -> Result<Vec<Resource>, Error> {
    let rendered = crate::render::render_with(fs, dir, opts, warnings)?;
    Ok(rendered.resources)
}

/// Whether nothing the overlay may read differs between the two sides (`None`: the walk of
/// its kustomization graph cannot tell; [`crate::render::reads`]).
fn untouched(
    overlay: &Overlay,
    dir: &Path,
    old: &Side<'_>,
    new: &Side<'_>,
    render: &RenderOptions,
    same: &SameCache,
) -> Option<bool> {
    if overlay.old.as_deref() != Some(dir) {
        return Some(false);
    }
    // The walk stops at the first path that differs.
    crate::render::reads::walk(new.fs, dir, render, &mut |p| same.same(p, old.fs, new.fs))
}

/// The head render of an overlay, with its base rendered at the same time on a second thread
/// (into `base`).
fn both(
    overlay: &Overlay,
    dir: &Path,
    old: &Side<'_>,
    new: &Side<'_>,
    render: &RenderOptions,
    warnings: &mut Warnings,
    base: &mut Option<Result<Vec<Resource>, Error>>,
) -> Result<Vec<Resource>, Error> {
    // Warnings of the base render are not the change's: not reported.
    let mut base_warnings = Warnings::default();
    std::thread::scope(|scope| {
        let spawned = overlay.old.as_ref().and_then(|old_dir| {
            let bw = &mut base_warnings;
            crate::limits::thread("ply-review-base")
                .spawn_scoped(scope, move || render_on(old.fs, old_dir, render, bw))
                .ok()
        });
        let head = render_on(new.fs, dir, render, warnings);
        *base = spawned.and_then(|h| h.join().ok());
        head
    })
}

/// One overlay. Without `changed_only`, rendered at both sides. With it: not rendered when
/// nothing it may read differs ([`untouched`]); rendered at both when something does; and
/// when the walk cannot tell, rendered at the head recording what it asks, then at the base
/// unless nothing it asked about differs. An overlay without changes is reported without its
/// objects either way, so the reports are the same.
fn one(
    overlay: &Overlay,
    old: &Side<'_>,
    new: &Side<'_>,
    render: &RenderOptions,
    opts: &ReviewOptions,
    same: &SameCache,
    kinds: &Builtin,
) -> OverlayReview {
    let mut warnings = Warnings::default();
    let result = |status: Status, objects: Vec<Object>, warnings: &Warnings| OverlayReview {
        name: overlay.name.clone(),
        status,
        objects,
        warnings: warnings.messages().to_vec(),
    };
    // Warnings of the base render are not the change's: not reported.
    let mut base_warnings = Warnings::default();
    let mut base = None;
    // With `changed_only`: `Some(true)` nothing the overlay may read differs, `Some(false)`
    // something does, `None` the walk cannot tell.
    let walked = match &overlay.new {
        Some(dir) if opts.changed_only => untouched(overlay, dir, old, new, render, same),
        _ => Some(false),
    };
    let (head, asked) = match (&overlay.new, walked) {
        (None, _) => (None, None),
        // Nothing it may read differs: it renders the same at both sides, and neither is
        // rendered.
        (Some(_), Some(true)) => {
            return result(Status::Compared, Vec::new(), &Warnings::default());
        }
        (Some(dir), Some(false)) => {
            let head = both(overlay, dir, old, new, render, &mut warnings, &mut base);
            (Some(head), None)
        }
        // The walk cannot tell (plugins, helm, remote bases…): the head render records what
        // it asks, and the base is rendered only if one of those paths differs.
        (Some(dir), None) => {
            let rec = Recording::new(new.fs);
            let r = render_on(&rec, dir, render, &mut warnings);
            (Some(r), Some(rec.into_paths()))
        }
    };
    if let Some(Err(e)) = &head {
        return result(
            Status::HeadFailed((opts.describe)(e)),
            Vec::new(),
            &warnings,
        );
    }
    let head = head.and_then(Result::ok);
    // Nothing the head render asked about differs: the base render is the same.
    if let (Some(_), Some(asked), Some(_)) = (&head, &asked, &overlay.old) {
        if asked.iter().all(|p| same.same(p, old.fs, new.fs)) {
            return result(Status::Compared, Vec::new(), &Warnings::default());
        }
    }
    let base = match base {
        Some(b) => Some(b),
        None => overlay
            .old
            .as_ref()
            .map(|dir| render_on(old.fs, dir, render, &mut base_warnings)),
    };
    match (base, head) {
        (Some(Ok(b)), Some(h)) => {
            let objects = compare::compare(&b, &h, kinds, opts.show_secrets);
            if objects.iter().all(|o| o.action == Action::Unchanged) {
                // Reported as an overlay that was not rendered is: no objects, no warnings,
                // so that `--changed-only` gives the same report.
                return result(Status::Compared, Vec::new(), &Warnings::default());
            }
            result(Status::Compared, objects, &warnings)
        }
        (Some(Err(e)), Some(h)) => {
            let objects = compare::compare(&[], &h, kinds, opts.show_secrets);
            result(Status::BaseFailed((opts.describe)(&e)), objects, &warnings)
        }
        (None, Some(h)) => {
            let objects = compare::compare(&[], &h, kinds, opts.show_secrets);
            result(Status::Added, objects, &warnings)
        }
        (Some(Ok(b)), None) => {
            let objects = compare::compare(&b, &[], kinds, opts.show_secrets);
            result(Status::Removed, objects, &warnings)
        }
        (Some(Err(_)), None) | (None, None) => result(Status::Removed, Vec::new(), &warnings),
    }
}

/// A review of two object sets given directly (rendered YAML files).
pub fn review_objects(
    name: String,
    base: (String, Vec<Resource>),
    head: (String, Vec<Resource>),
    show_secrets: bool,
) -> Review {
    let objects = compare::compare(&base.1, &head.1, &Builtin::new(), show_secrets);
    Review {
        base: base.0,
        head: head.0,
        overlays: vec![OverlayReview {
            name,
            status: Status::Compared,
            objects,
            warnings: Vec::new(),
        }],
    }
}

/// Overlays named by the user or found (`--all`), as the union over both sides, keyed by
/// their directory relative to `root` (the repository's working tree).
pub fn overlays_in(root: &Path, old: &BTreeSet<PathBuf>, new: &BTreeSet<PathBuf>) -> Vec<Overlay> {
    let mut by_path: BTreeMap<PathBuf, Overlay> = BTreeMap::new();
    for (dirs, is_old) in [(old, true), (new, false)] {
        for d in dirs {
            let o = by_path.entry(d.clone()).or_insert_with(|| Overlay {
                name: overlay_name(root, d),
                old: None,
                new: None,
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
pub fn overlay_name(root: &Path, dir: &Path) -> String {
    match dir.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => dir.display().to_string(),
    }
}

/// A usage error.
pub fn usage(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Usage, message.into())
}
