//! The review's engine: every overlay rendered at a base and at a head (two [`Side`]s, each
//! read through its own [`Fs`]), `opts.jobs` at a time, and paired object by object
//! ([`super::compare`]) into a [`Review`]. With `--changed-only` an overlay whose reads do not
//! differ between the sides is not rendered, and where the walk of its kustomization graph
//! cannot tell, the base is rendered only if the head render asked about a file that differs
//! — the exact set of paths, recorded through [`crate::fs::record`]. The base side renders as
//! `opts.base_kustomize`, the head side as `opts.render.kustomize` (a kustomize upgrade's
//! review: then every overlay is rendered at both sides, `changed_only` or not, since what
//! differs is the renderer, not the files). Prints nothing.

use std::path::Path;
use std::sync::Mutex;

use crate::diag::{Error, Warnings};
use crate::diff::adapters::Builtin;
use crate::fasthash::FastMap;
use crate::fs::record::Recording;
use crate::fs::{FileKind, Fs};
use crate::render::RenderOptions;
use crate::report::{Action, ObjectChange, OverlayReview, Review, Status};
use crate::resource::Resource;

use super::compare;
use super::overlays::Overlay;

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
    /// Compare at the base only overlays whose head render read something that changed
    /// (ignored when the two sides render as different kustomize versions).
    pub changed_only: bool,
    /// The kustomize version the base side renders as (`--base-kustomize-version`; the head
    /// side renders as `render.kustomize`).
    pub base_kustomize: crate::render::KustomizeVersion,
    /// Overlays rendered at once (each render then reads on its own thread only).
    pub jobs: usize,
    /// How an error is written into the report (the CLI's diagnostic text).
    pub describe: fn(&Error) -> String,
    /// `--why`: the head renders with field provenance, and each changed field names the
    /// place that set its new value ([`super::why`]).
    pub why: bool,
    /// Where causes link to (the head commit on GitHub or GitLab); set by the plan.
    pub link: Option<super::why::LinkBase>,
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
    // The parse store holds nothing version-dependent (resource files, kustomization loads
    // and patch bodies are read alike by every version; each rule that differs asks the
    // render's own options), so both sides share it.
    render.provenance = opts.why;
    let base_render = RenderOptions {
        kustomize: opts.base_kustomize,
        provenance: false,
        ..render.clone()
    };
    let upgrade = opts.base_kustomize != render.kustomize;
    let opts = &ReviewOptions {
        // Every file is the same to a kustomize upgrade: each overlay is rendered at both.
        changed_only: opts.changed_only && !upgrade,
        ..opts.clone()
    };
    let renders = Renders {
        head: &render,
        base: &base_render,
    };
    let done = crate::par::map(overlays.len(), jobs, |i| {
        one(&overlays[i], old, new, &renders, opts, &same, &kinds)
    });
    // The sides' versions are named only when they differ (a kustomize upgrade's review).
    let label = |side: &Side<'_>, version: crate::render::KustomizeVersion| {
        if upgrade {
            format!("{} as kustomize {version}", side.label)
        } else {
            side.label.clone()
        }
    };
    Review {
        base: label(old, opts.base_kustomize),
        head: label(new, render.kustomize),
        overlays: done.into_iter().flatten().collect(),
    }
}

/// How each side renders: the same options but for the kustomize version.
struct Renders<'a> {
    head: &'a RenderOptions,
    base: &'a RenderOptions,
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

/// With `--why`, names each changed field's cause.
fn explain(
    objects: &mut [ObjectChange],
    head: &[Resource],
    old: &Side<'_>,
    new: &Side<'_>,
    opts: &ReviewOptions,
) {
    if opts.why {
        super::why::annotate(objects, head, old.fs, new.fs, opts.link.as_ref());
    }
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
    renders: &Renders<'_>,
    warnings: &mut Warnings,
    base: &mut Option<Result<Vec<Resource>, Error>>,
) -> Result<Vec<Resource>, Error> {
    let render = renders.head;
    let base_render = renders.base;
    // Warnings of the base render are not the change's: not reported.
    let mut base_warnings = Warnings::default();
    std::thread::scope(|scope| {
        let spawned = overlay.old.as_ref().and_then(|old_dir| {
            let bw = &mut base_warnings;
            crate::limits::thread("ply-review-base")
                .spawn_scoped(scope, move || render_on(old.fs, old_dir, base_render, bw))
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
    renders: &Renders<'_>,
    opts: &ReviewOptions,
    same: &SameCache,
    kinds: &Builtin,
) -> OverlayReview {
    let render = renders.head;
    let mut warnings = Warnings::default();
    let result = |status: Status, objects: Vec<ObjectChange>, warnings: &Warnings| OverlayReview {
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
            let head = both(overlay, dir, old, new, renders, &mut warnings, &mut base);
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
            .map(|dir| render_on(old.fs, dir, renders.base, &mut base_warnings)),
    };
    match (base, head) {
        (Some(Ok(b)), Some(h)) => {
            let mut objects = compare::compare(&b, &h, kinds, opts.show_secrets);
            explain(&mut objects, &h, old, new, opts);
            if objects.iter().all(|o| o.action == Action::Unchanged) {
                // Reported as an overlay that was not rendered is: no objects, no warnings,
                // so that `--changed-only` gives the same report.
                return result(Status::Compared, Vec::new(), &Warnings::default());
            }
            result(Status::Compared, objects, &warnings)
        }
        (Some(Err(e)), Some(h)) => {
            let mut objects = compare::compare(&[], &h, kinds, opts.show_secrets);
            explain(&mut objects, &h, old, new, opts);
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
