//! The review's engine: every overlay rendered at a base and at a head (two [`Side`]s, each
//! read through its own [`Fs`]), `opts.jobs` at a time, and paired object by object
//! ([`super::compare`]) into a [`Review`]. With `--changed-only` an overlay whose reads do not
//! differ between the sides is not rendered, and where the walk of its kustomization graph
//! cannot tell, the base is rendered only if the head render asked about a file that differs
//! — the exact set of paths, recorded through [`crate::fs::record`]. The base side renders as
//! `opts.base_kustomize`, the head side as `opts.render.kustomize` (a kustomize upgrade's
//! review: then every overlay is rendered at both sides, `changed_only` or not, since what
//! differs is the renderer, not the files). Prints nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::diag::{Error, Warnings};
use crate::diff::Key;
use crate::diff::adapters::Builtin;
use crate::fasthash::FastMap;
use crate::fs::record::Recording;
use crate::fs::{FileKind, Fs};
use crate::render::RenderOptions;
use crate::report::model::{FieldCauses, ObjectId, Risk, RiskKind, Shard};
use crate::report::{Action, FailOn, Failure, ObjectChange, OverlayReview, Review, Status};
use crate::resource::Resource;
use crate::yaml::Node;

use super::compare;
pub(crate) use super::gitops::At;
use super::overlays::{Kind, Overlay};

/// One side of the comparison: where its files come from, and what to call it.
pub(crate) struct Side<'a> {
    pub fs: &'a dyn Fs,
    /// `main (0123456789ab)`, `working tree`, a directory.
    pub label: String,
    /// The command that fetches the remote bases this side's locks pin (`ply fetch
    /// --revision 0123456789ab --all`), named when a render finds them not in the cache.
    pub fetch: String,
}

/// A render error that says a remote base or file of `side` is not in the cache: the
/// diagnostic and the command that fixes it.
fn not_fetched(e: &Error, side: &Side<'_>, opts: &ReviewOptions) -> Option<Status> {
    (e.kind == crate::diag::ErrorKind::NotFetched).then(|| {
        let mut f = failure(e, opts);
        if !f.text.ends_with('\n') {
            f.text.push('\n');
        }
        f.text.push_str(&format!(
            "not fetched at {}: run `{}` at the repository's root, then review again\n",
            side.label, side.fetch
        ));
        Status::NotFetched(f)
    })
}

/// Validated options of a review.
#[derive(Clone, Debug)]
pub(crate) struct ReviewOptions {
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
    pub(crate) why: bool,
    /// Where causes link to (the head commit on GitHub or GitLab); set by the plan.
    pub(crate) link: Option<super::why::LinkBase>,
    /// Which failures make the review an error (`--fail-on`).
    pub fail_on: FailOn,
    /// `--shard I/N`: only every N-th overlay, from the I-th, and no moves paired (the merge
    /// of the shards pairs them: [`merged`]).
    pub(crate) shard: Option<(usize, usize)>,
}

/// Renders and compares every overlay, `opts.jobs` at a time; the result keeps the overlays'
/// order.
pub(crate) fn review(
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
        let mut loose = Loose::default();
        let common = Common {
            same: &same,
            kinds: &kinds,
        };
        let mut o = one(&overlays[i], old, new, &renders, opts, common, &mut loose);
        o.unpaired = loose.objects;
        if !o.objects.is_empty() {
            o.affixes = super::overlays::affixes(&overlays[i], old.fs, new.fs);
        }
        (o, loose.head)
    });
    let (mut done, heads): (Vec<OverlayReview>, Vec<_>) = done.into_iter().flatten().unzip();
    let shard = opts.shard.map(|(index, count)| Shard {
        index,
        count,
        show_secrets: opts.show_secrets,
    });
    if shard.is_some() {
        // A shard sees only its overlays: it pairs no moves (another shard may hold an
        // object's other side, or a creation that comes first in overlay order), and keeps
        // the objects for the merge, each Secret's values as digests unless shown.
        if !opts.show_secrets {
            for o in &mut done {
                for (_, node, _) in &mut o.unpaired {
                    if crate::diff::mask::is_secret(node) {
                        crate::diff::mask::digest_values(node);
                    }
                }
            }
        }
    } else {
        done = pair_moves(done, &kinds, opts.show_secrets);
        if opts.why {
            explain_moves(&mut done, &heads, overlays, (old, new), renders.base, opts);
        }
    }
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
        overlays: done,
        fail_on: opts.fail_on,
        warnings: Vec::new(),
        shard,
    }
}

/// `ply diff --merge-reports`: the review the shards' JSON parts are of, with the moves
/// between overlays paired as the unsharded run pairs them ([`pair_moves`] over every
/// overlay of every part, the Secrets' values compared by their digests).
pub(crate) fn merged(parts: &[crate::report::merge::Part<'_>]) -> Result<(Review, String), Error> {
    let (mut review, title, show_secrets) = crate::report::merge::merge(parts)?;
    review.overlays = pair_moves(review.overlays, &Builtin::new(), show_secrets);
    Ok((review, title))
}

/// Pairs the moves between overlays ([`moves`]; each overlay's [`OverlayReview::unpaired`]
/// objects, which it empties) and drops the risks of the deletions that became moves.
fn pair_moves(
    overlays: Vec<OverlayReview>,
    kinds: &Builtin,
    show_secrets: bool,
) -> Vec<OverlayReview> {
    moved_risks(moves(overlays, kinds, show_secrets))
}

/// A deletion that [`moves`] paired with a creation in another overlay is no deletion: its
/// risk goes.
fn moved_risks(mut overlays: Vec<OverlayReview>) -> Vec<OverlayReview> {
    for o in &mut overlays {
        let objects = &o.objects;
        o.risks.retain(|r| {
            !matches!(r.kind, RiskKind::Deletion | RiskKind::Unmanaged)
                || objects
                    .iter()
                    .any(|x| x.action == Action::Delete && x.id == r.object)
        });
    }
    overlays
}

/// Pairs the objects one overlay no longer renders with the same objects (group, kind,
/// namespace, name) another overlay renders anew: a directory that became part of a new root
/// (a new kustomization above it now includes it) moves its objects from the old root to the
/// new one, which is one move each (with any change), not a deletion and a creation. Only
/// deletions of overlays compared or removed, and creations of overlays compared or added,
/// pair (an overlay that failed at one side has no objects there to move); each deletion
/// pairs once, with the first creation in overlay order. Each overlay's `unpaired` holds the
/// nodes of its created and deleted objects by their index.
fn moves(
    mut overlays: Vec<OverlayReview>,
    kinds: &Builtin,
    show_secrets: bool,
) -> Vec<OverlayReview> {
    let loose: Vec<Vec<(usize, Node, FieldCauses)>> = overlays
        .iter_mut()
        .map(|o| std::mem::take(&mut o.unpaired))
        .collect();
    type Deleted<'a> = (usize, usize, &'a Node, &'a FieldCauses);
    let mut deleted: std::collections::HashMap<Key, Vec<Deleted<'_>>> = Default::default();
    for (oi, (o, list)) in overlays.iter().zip(&loose).enumerate() {
        if !matches!(o.status, Status::Compared | Status::Removed) {
            continue;
        }
        for (j, node, causes) in list {
            if o.objects
                .get(*j)
                .is_some_and(|x| x.action == Action::Delete)
            {
                deleted
                    .entry(Key::of(node))
                    .or_default()
                    .push((oi, *j, node, causes));
            }
        }
    }
    if deleted.is_empty() {
        return overlays;
    }
    let mut gone: Vec<(usize, usize)> = Vec::new();
    for (oi, list) in loose.iter().enumerate() {
        let Some(o) = overlays.get(oi) else { continue };
        if !matches!(o.status, Status::Compared | Status::Added) {
            continue;
        }
        for (j, node, causes) in list {
            let is_created = overlays
                .get(oi)
                .and_then(|o| o.objects.get(*j))
                .is_some_and(|x| x.action == Action::Create);
            if !is_created {
                continue;
            }
            let Some(candidates) = deleted.get_mut(&Key::of(node)) else {
                continue;
            };
            let Some(at) = candidates.iter().position(|(si, _, _, _)| *si != oi) else {
                continue;
            };
            let (si, sj, before, before_causes) = candidates.remove(at);
            let from = overlays.get(si).map(|o| o.name.clone());
            let mut moved = compare::pair(Some(before), Some(node), kinds, show_secrets);
            if moved.before.is_empty() {
                // The same object: its text (masked as any), for the diff's context.
                let (mut b, mut a) = (before.clone(), node.clone());
                if !show_secrets && crate::diff::mask::is_secret(&b) {
                    crate::diff::mask::mask_rendered_pair(Some(&mut b), Some(&mut a));
                }
                moved.before = crate::diff::yaml_text(&b);
                moved.after = crate::diff::yaml_text(&a);
            }
            moved.action = Action::Move;
            moved.moved_from = from;
            // A shard's parts carry each side's field causes (`--merge-reports`); a run
            // that is not sharded gives them after pairing ([`explain_moves`]).
            super::why::annotate_moved(&mut moved, (node, causes), (before, before_causes));
            if let Some(slot) = overlays.get_mut(oi).and_then(|o| o.objects.get_mut(*j)) {
                *slot = moved;
            }
            gone.push((si, sj));
        }
    }
    // The moved deletions leave their overlays, last index first.
    gone.sort_unstable_by(|a, b| b.cmp(a));
    for (si, sj) in gone {
        if let Some(o) = overlays.get_mut(si) {
            if sj < o.objects.len() {
                o.objects.remove(sj);
                o.moved_out += 1;
            }
        }
    }
    overlays
}

/// What every overlay's comparison shares.
#[derive(Clone, Copy)]
struct Common<'a> {
    same: &'a SameCache,
    kinds: &'a Builtin,
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

/// With `--why`, names each changed field's cause; a removed field's is read from the base
/// rendered again with provenance (the overlay at `at_base`, with `base_render`'s options),
/// only when a field was removed.
fn explain(
    objects: &mut [ObjectChange],
    head: &[Resource],
    (old, new): (&Side<'_>, &Side<'_>),
    at_base: Option<(&Overlay, &Path)>,
    base_render: &RenderOptions,
    opts: &ReviewOptions,
) {
    if opts.why {
        let mut base = || {
            let (overlay, path) = at_base?;
            with_provenance(overlay, path, old.fs, base_render)
        };
        let link = opts.link.as_ref();
        super::why::annotate(objects, head, &mut base, old.fs, new.fs, link);
        if let Some((
            Overlay {
                kind: Kind::Gitops(pair),
                ..
            },
            _,
        )) = at_base
        {
            pair.causes(objects, head, link, (old.fs, new.fs));
        }
    }
}

/// The base rendered again, with provenance (what a removed field's cause is read from).
fn with_provenance(
    overlay: &Overlay,
    path: &Path,
    fs: &dyn Fs,
    base_render: &RenderOptions,
) -> Option<Vec<Resource>> {
    let with = RenderOptions {
        provenance: true,
        ..base_render.clone()
    };
    render_at(overlay, At::Base, path, fs, &with, &mut Warnings::default()).ok()
}

/// An overlay's created and deleted objects, which [`moves`] pairs across overlays, and
/// what their changes take causes from once paired (with `--why`): in a shard's review each
/// object's field causes (a deletion's from the base rendered again with provenance), which
/// its JSON part carries to the merge; otherwise the head render, kept when it created an
/// object, for [`explain_moves`] to ask about the objects that did move.
#[derive(Default)]
struct Loose {
    objects: Vec<(usize, Node, FieldCauses)>,
    head: Option<Vec<Resource>>,
}

impl Loose {
    fn of(
        objects: &[ObjectChange],
        (b, h): (&[Resource], Vec<Resource>),
        (old, new): (&Side<'_>, &Side<'_>),
        (base_at, base_render): (Option<(&Overlay, &Path)>, &RenderOptions),
        opts: &ReviewOptions,
    ) -> Loose {
        let mut nodes: Vec<(usize, Node, FieldCauses)> = compare::unpaired_nodes(objects, b, &h)
            .into_iter()
            .map(|(i, n)| (i, n, Vec::new()))
            .collect();
        let action = |i: usize| objects.get(i).map(|o| o.action);
        if !opts.why || nodes.is_empty() {
            return Loose {
                objects: nodes,
                head: None,
            };
        }
        if opts.shard.is_none() {
            let created = nodes
                .iter()
                .any(|(i, _, _)| action(*i) == Some(Action::Create));
            return Loose {
                objects: nodes,
                head: created.then_some(h),
            };
        }
        let mut based: Option<Option<Vec<Resource>>> = None;
        for (i, node, causes) in &mut nodes {
            let at_base = action(*i) == Some(Action::Delete);
            let all: &[Resource] = if at_base {
                let rendered = based.get_or_insert_with(|| {
                    base_at.and_then(|(o, p)| with_provenance(o, p, old.fs, base_render))
                });
                match rendered {
                    Some(r) => r,
                    None => continue,
                }
            } else {
                &h
            };
            let id = ObjectId::of(node);
            if let Some(r) = all.iter().find(|r| ObjectId::of(&r.node) == id) {
                let fss = (old.fs, new.fs);
                *causes = super::why::field_causes(r, all, at_base, fss, opts.link.as_ref());
            }
        }
        Loose {
            objects: nodes,
            head: None,
        }
    }
}

/// With `--why`, in a review that is not sharded: gives the changes of the objects that
/// moved between overlays their causes, an added or changed field's from the head render of
/// the overlay that renders the object now, a removed field's from the base of the overlay
/// it moved from, rendered again with provenance only when a moved object lost a field (once
/// per such overlay).
fn explain_moves(
    done: &mut [OverlayReview],
    heads: &[Option<Vec<Resource>>],
    overlays: &[Overlay],
    (old, new): (&Side<'_>, &Side<'_>),
    base_render: &RenderOptions,
    opts: &ReviewOptions,
) {
    let mut bases: std::collections::HashMap<String, Option<Vec<Resource>>> = Default::default();
    let (fss, link) = ((old.fs, new.fs), opts.link.as_ref());
    for (o, head) in done.iter_mut().zip(heads) {
        let Some(head) = head else { continue };
        for x in &mut o.objects {
            if x.action != Action::Move || x.changes.iter().all(|c| c.cause.is_some()) {
                continue;
            }
            let Some(r) = head.iter().find(|r| ObjectId::of(&r.node) == x.id) else {
                continue;
            };
            let head_causes = super::why::field_causes(r, head, false, fss, link);
            let from = x.moved_from.clone().unwrap_or_default();
            let mut base = (Node::Null, Vec::new());
            if x.changes.iter().any(|c| c.after.is_none()) {
                let all = bases.entry(from).or_insert_with_key(|from| {
                    let overlay = overlays.iter().find(|v| &v.name == from)?;
                    with_provenance(overlay, overlay.old.as_deref()?, old.fs, base_render)
                });
                let found = all.as_deref().and_then(|all| {
                    let br = all.iter().find(|b| ObjectId::of(&b.node) == x.id)?;
                    Some((
                        br.node.clone(),
                        super::why::field_causes(br, all, true, fss, link),
                    ))
                });
                base = found.unwrap_or(base);
            }
            super::why::annotate_moved(x, (&r.node, &head_causes), (&base.0, &base.1));
        }
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
                .spawn_scoped(scope, move || {
                    render_at(overlay, At::Base, old_dir, old.fs, base_render, bw)
                })
                .ok()
        });
        let head = render_at(overlay, At::Head, dir, new.fs, render, warnings);
        *base = spawned.and_then(|h| h.join().ok());
        head
    })
}

/// Renders `overlay` at one side, where it is at `path` (its directory, or for a GitOps
/// target its declaring file), as its [`Kind`] renders.
fn render_at(
    overlay: &Overlay,
    at: At,
    path: &Path,
    fs: &dyn Fs,
    opts: &RenderOptions,
    warnings: &mut Warnings,
) -> Result<Vec<Resource>, Error> {
    match &overlay.kind {
        Kind::Kustomize => render_on(fs, path, opts, warnings),
        Kind::Gitops(pair) => pair.render(at, fs, opts, warnings),
    }
}

/// An overlay's report without risks.
fn reviewed(
    overlay: &Overlay,
    status: Status,
    objects: Vec<ObjectChange>,
    warnings: &Warnings,
) -> OverlayReview {
    OverlayReview {
        name: overlay.name.clone(),
        status,
        objects,
        warnings: warnings.messages().to_vec(),
        moved_out: 0,
        risks: Vec::new(),
        unpaired: Vec::new(),
        affixes: Default::default(),
    }
}

/// One side's render.
type Rendered = Result<Vec<Resource>, Error>;

/// What [`start`] rendered: the head (`None`: absent there), the base when it was rendered
/// along, and the paths the head render asked when only they decide whether the base renders.
struct Started {
    head: Option<Rendered>,
    base: Option<Rendered>,
    asked: Option<BTreeSet<PathBuf>>,
}

/// The first renders of an overlay (`None`: nothing it may read differs, so it renders the
/// same at both sides and neither is rendered). Without `changed_only`, both sides at once.
/// With it, a kustomize root's graph is walked ([`untouched`]); where the walk cannot tell (and
/// for a GitOps target whose definition is the same at both sides) the head renders recording
/// what it asks.
fn start(
    overlay: &Overlay,
    (old, new): (&Side<'_>, &Side<'_>),
    renders: &Renders<'_>,
    opts: &ReviewOptions,
    same: &SameCache,
    warnings: &mut Warnings,
) -> Option<Started> {
    let render = renders.head;
    // `Some(true)` nothing the overlay may read differs, `Some(false)` something does, `None`
    // the walk cannot tell.
    let walked = match (&overlay.new, &overlay.kind) {
        (Some(dir), Kind::Kustomize) if opts.changed_only => {
            untouched(overlay, dir, old, new, render, same)
        }
        (Some(_), Kind::Gitops(pair)) if opts.changed_only => {
            // Defined otherwise (or new): rendered at both; else what its render reads decides.
            let redefined = overlay.old.is_none() || pair.redefined();
            if redefined { Some(false) } else { None }
        }
        _ => Some(false),
    };
    let (head, base, asked) = match (&overlay.new, walked) {
        (None, _) => (None, None, None),
        (Some(_), Some(true)) => return None,
        (Some(dir), Some(false)) => {
            let mut base = None;
            let head = both(overlay, dir, old, new, renders, warnings, &mut base);
            (Some(head), base, None)
        }
        // The walk cannot tell (plugins, helm, remote bases…): the head render records what
        // it asks, and the base is rendered only if one of those paths differs.
        (Some(dir), None) => {
            let rec = Recording::new(new.fs);
            let r = render_at(overlay, At::Head, dir, &rec, render, warnings);
            let mut asked = rec.into_paths();
            if let Kind::Gitops(pair) = &overlay.kind {
                asked.extend(pair.inputs((old.fs, new.fs)));
            }
            (Some(r), None, Some(asked))
        }
    };
    Some(Started { head, base, asked })
}

/// One overlay. Without `changed_only`, rendered at both sides. With it: not rendered when
/// nothing it may read differs ([`start`]); rendered at both when something does; and when
/// the walk cannot tell, rendered at the head recording what it asks, then at the base unless
/// nothing it asked about differs. An overlay without changes is reported without its
/// objects either way, so the reports are the same. A GitOps target that a side cannot
/// render (its source is elsewhere, a Helm chart…) is reported as not rendered.
fn one(
    overlay: &Overlay,
    old: &Side<'_>,
    new: &Side<'_>,
    renders: &Renders<'_>,
    opts: &ReviewOptions,
    common: Common<'_>,
    loose: &mut Loose,
) -> OverlayReview {
    let same = common.same;
    let unchanged = || reviewed(overlay, Status::Compared, Vec::new(), &Warnings::default());
    if let Kind::Gitops(pair) = &overlay.kind {
        if let Some(why) = pair.not_rendered() {
            return reviewed(
                overlay,
                Status::NotRendered(why),
                Vec::new(),
                &Warnings::default(),
            );
        }
    }
    let mut warnings = Warnings::default();
    let Some(Started { head, base, asked }) =
        start(overlay, (old, new), renders, opts, same, &mut warnings)
    else {
        return unchanged();
    };
    if let (Some(Err(e)), Kind::Gitops(pair)) = (&head, &overlay.kind) {
        if let Some(why) = pair.not_rendered_by(e, (opts.describe)(e)) {
            return reviewed(overlay, Status::NotRendered(why), Vec::new(), &warnings);
        }
    }
    if let Some(Err(e)) = &head {
        return failed(overlay, e, base, (old, new), renders, opts, same, warnings);
    }
    let head = head.and_then(Result::ok);
    // Nothing the head render asked about differs: the base render is the same.
    if let (Some(_), Some(asked), Some(_)) = (&head, &asked, &overlay.old) {
        if asked.iter().all(|p| same.same(p, old.fs, new.fs)) {
            return unchanged();
        }
    }
    // Warnings of the base render are not the change's: not reported.
    let base = base.or_else(|| {
        let dir = overlay.old.as_ref()?;
        let w = &mut Warnings::default();
        Some(render_at(overlay, At::Base, dir, old.fs, renders.base, w))
    });
    let (mut o, unpaired) = outcome(
        overlay,
        (base, head),
        (old, new),
        renders,
        opts,
        common.kinds,
        &warnings,
    );
    *loose = unpaired;
    if let Kind::Gitops(pair) = &overlay.kind {
        pair.removal_risks(&o.objects, &mut o.risks);
    }
    o
}

/// The report of an overlay that failed at the head (`e`): broken by this change, broken
/// before it, not reviewed or not fetched ([`head_failed`]; a GitOps target's own rule:
/// [`super::gitops::Pair::head_failed`]). `base` is the base's render when it was made along.
#[allow(clippy::too_many_arguments)]
fn failed(
    overlay: &Overlay,
    e: &Error,
    base: Option<Result<Vec<Resource>, Error>>,
    (old, new): (&Side<'_>, &Side<'_>),
    renders: &Renders<'_>,
    opts: &ReviewOptions,
    same: &SameCache,
    warnings: Warnings,
) -> OverlayReview {
    let Some(old_dir) = &overlay.old else {
        let status =
            not_fetched(e, new, opts).unwrap_or_else(|| Status::HeadFailed(failure(e, opts)));
        return reviewed(overlay, status, Vec::new(), &warnings);
    };
    // Warnings of the base render are not the change's: not reported.
    let base = base.unwrap_or_else(|| {
        let w = &mut Warnings::default();
        render_at(overlay, At::Base, old_dir, old.fs, renders.base, w)
    });
    let at_base = base.err();
    let status = match &overlay.kind {
        Kind::Kustomize => {
            let sides = (old, new);
            head_failed(e, at_base.as_ref(), old_dir, overlay, sides, opts, same)
        }
        Kind::Gitops(pair) => {
            let same = |p: &Path| same.same(p, old.fs, new.fs);
            let fs = (old.fs, new.fs);
            let reads_differ = || pair.reads_differ(fs, (renders.base, renders.head), &same);
            gitops_failed(e, at_base.as_ref(), (old, new), opts, reads_differ)
        }
    };
    // Broken before: not the change's, and neither is any warning.
    let warnings = match status {
        Status::BrokenBefore(_) => Warnings::default(),
        _ => warnings,
    };
    reviewed(overlay, status, Vec::new(), &warnings)
}

/// The report of an overlay rendered at the head (`None`: absent there) and at the base
/// (`None`: absent), with its risks and the nodes of its created and deleted objects (in
/// `unpaired`, for [`moves`]).
fn outcome(
    overlay: &Overlay,
    (base, head): (Option<Rendered>, Option<Vec<Resource>>),
    sides: (&Side<'_>, &Side<'_>),
    renders: &Renders<'_>,
    opts: &ReviewOptions,
    kinds: &Builtin,
    warnings: &Warnings,
) -> (OverlayReview, Loose) {
    let with_risks = |mut o: OverlayReview, risks: Vec<Risk>, loose: Loose| {
        o.risks = risks;
        (o, loose)
    };
    let result = |status, objects| reviewed(overlay, status, objects, warnings);
    let none = |o: OverlayReview| (o, Loose::default());
    let at_base = overlay.old.as_deref().map(|p| (overlay, p));
    match (base, head) {
        (Some(Ok(b)), Some(h)) => {
            let (mut objects, risks) = compared(&b, &h, kinds, opts.show_secrets);
            explain(&mut objects, &h, sides, at_base, renders.base, opts);
            if objects.iter().all(|o| o.action == Action::Unchanged) {
                // Reported as an overlay that was not rendered is: no objects, no warnings,
                // so that `--changed-only` gives the same report.
                return none(reviewed(
                    overlay,
                    Status::Compared,
                    Vec::new(),
                    &Warnings::default(),
                ));
            }
            let loose = Loose::of(&objects, (&b, h), sides, (at_base, renders.base), opts);
            with_risks(result(Status::Compared, objects), risks, loose)
        }
        (Some(Err(e)), Some(h)) => match not_fetched(&e, sides.0, opts) {
            // Not the base's objects: never shown as creations.
            Some(status) => none(result(status, Vec::new())),
            None => {
                let (mut objects, risks) = compared(&[], &h, kinds, opts.show_secrets);
                explain(&mut objects, &h, sides, None, renders.base, opts);
                let r = result(Status::BaseFailed(failure(&e, opts)), objects);
                with_risks(r, risks, Loose::default())
            }
        },
        (None, Some(h)) => {
            let (objects, risks) = compared(&[], &h, kinds, opts.show_secrets);
            let loose = Loose::of(&objects, (&[], h), sides, (None, renders.base), opts);
            with_risks(result(Status::Added, objects), risks, loose)
        }
        (Some(Ok(b)), None) => {
            let (objects, risks) = compared(&b, &[], kinds, opts.show_secrets);
            let base = (at_base, renders.base);
            let loose = Loose::of(&objects, (&b, Vec::new()), sides, base, opts);
            with_risks(result(Status::Removed, objects), risks, loose)
        }
        (Some(Err(_)), None) | (None, None) => none(result(Status::Removed, Vec::new())),
    }
}

/// The status of a GitOps target that fails at the head (`e`) and is at the base, where it
/// rendered (`at_base` `None`) or failed. Failed at both sides: **not reviewed** when it
/// reads something that differs between them (its definition, a file either render reads),
/// else **broken before this change**.
fn gitops_failed(
    e: &Error,
    at_base: Option<&Error>,
    (old, new): (&Side<'_>, &Side<'_>),
    opts: &ReviewOptions,
    reads_differ: impl FnOnce() -> bool,
) -> Status {
    let at_head = failure(e, opts);
    let Some(b) = at_base else {
        return not_fetched(e, new, opts).unwrap_or(Status::HeadFailed(at_head));
    };
    if reads_differ() {
        let at_base = failure(b, opts);
        return Status::NotReviewed(not_reviewed(at_head, &at_base, e, b, old, new));
    }
    Status::BrokenBefore(at_head)
}

/// The status of an overlay that fails at the head (`e`) and is at the base too, where it
/// rendered (`at_base` `None`) or failed. The local references of both sides are walked
/// ([`super::local`]): one the change removed or broke (it names something at the base,
/// nothing at the head) makes the overlay **broken by this change**, whatever else fails
/// (a remote base not in the cache stops the render before it). Then: rendered at the base,
/// the head **not fetched** or **broken by this change**; failed at both sides, **not
/// reviewed** when it reads a file that differs between them (its change cannot be shown),
/// else **broken before this change** when nothing it reads differs or the diagnostics are
/// the same, else broken by this change.
fn head_failed(
    e: &Error,
    at_base: Option<&Error>,
    old_dir: &Path,
    overlay: &Overlay,
    (old, new): (&Side<'_>, &Side<'_>),
    opts: &ReviewOptions,
    same: &SameCache,
) -> Status {
    let at_head = failure(e, opts);
    let restrictor = opts.render.load_restrictor;
    let head_dir = overlay.new.as_deref().unwrap_or(old_dir);
    let (local_head, local_base) = (
        super::local::walk(new.fs, head_dir, restrictor),
        super::local::walk(old.fs, old_dir, restrictor),
    );
    let was_missing: Vec<String> = local_base
        .missing
        .iter()
        .map(|m| m.message.clone())
        .collect();
    if let Some(broke) = local_head
        .missing
        .iter()
        .find(|m| !was_missing.contains(&m.message))
    {
        // The render's own diagnostic when it is a missing path (it points at the value);
        // else the render stopped before the path (a remote base not in the cache).
        let shown = if at_head.code == "ply::not-found" {
            at_head
        } else {
            failure(broke, opts)
        };
        return Status::HeadFailed(shown);
    }
    let Some(b) = at_base else {
        return not_fetched(e, new, opts).unwrap_or(Status::HeadFailed(at_head));
    };
    let at_base = failure(b, opts);
    let differs = local_head
        .paths
        .iter()
        .chain(&local_base.paths)
        .any(|p| !same.same(p, old.fs, new.fs));
    let complete = local_head.complete && local_base.complete;
    if differs {
        return Status::NotReviewed(not_reviewed(at_head, &at_base, e, b, old, new));
    }
    if complete || at_base.same(&at_head) {
        return Status::BrokenBefore(at_head);
    }
    not_fetched(e, new, opts).unwrap_or(Status::HeadFailed(at_head))
}

/// The failure of an overlay not reviewed: the head's diagnostic, the base's when it is
/// another, and for each side whose remote bases are not in the cache the command that
/// fetches them.
fn not_reviewed(
    mut at_head: Failure,
    at_base: &Failure,
    e: &Error,
    b: &Error,
    old: &Side<'_>,
    new: &Side<'_>,
) -> Failure {
    let other = !at_base.same(&at_head);
    let text = &mut at_head.text;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if other {
        text.push_str(&format!("at the base: {}\n", at_base.one_line()));
    }
    for (err, side) in [(e, new), (b, old)] {
        if is_unfetched(err) {
            text.push_str(&format!(
                "not fetched at {}: run `{}` at the repository's root, then review again\n",
                side.label, side.fetch
            ));
        }
    }
    at_head
}

/// A render error saying a remote base or file is not in the cache, or that no lock pins it.
fn is_unfetched(e: &Error) -> bool {
    e.kind == crate::diag::ErrorKind::NotFetched
        || (e.kind == crate::diag::ErrorKind::Remote && e.message.contains("no lock file"))
}

/// Compares two renders object by object ([`compare::compare_sides`]) and finds the risks
/// of applying the head over the base ([`super::risks`]).
fn compared(
    old: &[Resource],
    new: &[Resource],
    kinds: &Builtin,
    show_secrets: bool,
) -> (Vec<ObjectChange>, Vec<Risk>) {
    let sides = compare::compare_sides(old, new, kinds, show_secrets);
    let risks = super::risks::risks(old, new, &sides);
    (sides.into_iter().map(|c| c.change).collect(), risks)
}

/// A failed render as the report shows it. Both sides name their files by their path in the
/// working tree (the base's git file system reads a revision under the same paths), so the
/// same failure at both sides has the same message and compares [`Failure::same`].
fn failure(e: &Error, opts: &ReviewOptions) -> Failure {
    let (file, line) = match &e.location {
        Some(l) => (
            Some(l.file.display.clone()),
            Some(l.file.line_col(l.offset).0),
        ),
        None => (None, None),
    };
    Failure {
        code: e.kind.code().to_string(),
        message: e.message.lines().next().unwrap_or("").to_string(),
        file,
        line,
        text: (opts.describe)(e),
    }
}

/// A review of two object sets given directly (rendered YAML files).
pub(crate) fn review_objects(
    name: String,
    base: (String, Vec<Resource>),
    head: (String, Vec<Resource>),
    show_secrets: bool,
) -> Review {
    let (objects, risks) = compared(&base.1, &head.1, &Builtin::new(), show_secrets);
    Review {
        base: base.0,
        head: head.0,
        overlays: vec![OverlayReview {
            name,
            status: Status::Compared,
            objects,
            warnings: Vec::new(),
            moved_out: 0,
            risks,
            unpaired: Vec::new(),
            affixes: Default::default(),
        }],
        fail_on: FailOn::default(),
        warnings: Vec::new(),
        shard: None,
    }
}
