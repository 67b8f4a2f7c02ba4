//! The overlays of `ply diff --base REF --gitops` (docs/gitops.md, "Review a pull request"):
//! every GitOps target (a Flux Kustomization `flux:NS/NAME`, an Argo CD Application
//! `argo:NAME`) found at either revision ([`Revision`], discovered once per side), paired by
//! its id into a [`Pair`] that renders one side as the controller does, says when a side is
//! not rendered, which inputs beyond the files its render reads it has (its definition, its
//! `substituteFrom` objects), and what a removal leaves in the cluster when the target does
//! not prune. Reads only through the sides' [`Fs`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Error, Warnings};
use crate::fasthash::FastMap;
use crate::fs::Fs;
use crate::fs::record::Recording;
use crate::gitops::argo::app::Application;
use crate::gitops::argo::render::{Repo as ArgoRepo, Settings};
use crate::gitops::{self, Context, Manifest, Repo, Resolution, Target};
use crate::render::RenderOptions;
use crate::report::model::{Risk, RiskKind};
use crate::report::{Action, Failure, ObjectChange};
use crate::resource::Resource;

/// Which side of a review a target renders at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum At {
    Base,
    Head,
}

/// One revision of the repository as the controllers see it: its files, its manifests and
/// the targets found in them.
pub(crate) struct Revision {
    root: PathBuf,
    files: Vec<PathBuf>,
    urls: Vec<String>,
    revision: Option<String>,
    opts: gitops::Options,
    manifests: Vec<Manifest>,
    targets: Vec<Target>,
    /// Argo CD's settings at this revision and its Applications by name.
    argo: Option<ArgoRevision>,
}

/// What Argo CD renders from a revision: the repository as its renderer sees it (files
/// relative to the root), the settings (`argocd-cm`'s build options) and the Applications.
struct ArgoRevision {
    files: Vec<PathBuf>,
    settings: Settings,
    apps: FastMap<String, Application>,
}

impl std::fmt::Debug for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Revision")
            .field("root", &self.root)
            .field("targets", &self.targets.len())
            .finish()
    }
}

/// The files, URLs and revision of one side, to open a [`Revision`] with.
pub(crate) struct SideFiles {
    pub(crate) root: PathBuf,
    pub(crate) files: Vec<PathBuf>,
    pub(crate) urls: Vec<String>,
    pub(crate) revision: Option<String>,
}

impl Revision {
    /// Finds every target of the revision `fs` serves.
    pub(crate) fn open(
        fs: &dyn Fs,
        side: SideFiles,
        opts: &gitops::Options,
        warnings: &mut Warnings,
    ) -> Revision {
        let SideFiles {
            root,
            files,
            urls,
            revision,
        } = side;
        let repo = Repo {
            fs,
            root: root.clone(),
            files: &files,
            urls: &urls,
            revision: revision.clone(),
        };
        let (manifests, targets) = gitops::found(&repo, opts, warnings);
        let ctx = Context {
            opts,
            manifests: &manifests,
        };
        let argo = targets
            .iter()
            .any(|t| t.id.starts_with("argo:"))
            .then(|| argo_revision(&repo, &ctx));
        Revision {
            root,
            files,
            urls,
            revision,
            opts: opts.clone(),
            manifests,
            targets,
            argo,
        }
    }

    /// A revision's view for rendering, reading through `fs`.
    fn repo<'a>(&'a self, fs: &'a dyn Fs) -> Repo<'a> {
        Repo {
            fs,
            root: self.root.clone(),
            files: &self.files,
            urls: &self.urls,
            revision: self.revision.clone(),
        }
    }
}

/// Argo CD's Applications at a revision, found once (their renders then read only what each
/// reads).
fn argo_revision(repo: &Repo<'_>, ctx: &Context<'_>) -> ArgoRevision {
    use crate::gitops::argo::{controller, find};
    let view = controller::view(repo);
    let settings = controller::settings(&view, ctx, repo.revision.clone()).unwrap_or_default();
    let (found, _) = find::discover(&view, &settings, &mut Warnings::default());
    let mut apps = FastMap::default();
    for f in found {
        apps.entry(f.app.name.clone()).or_insert(f.app);
    }
    ArgoRevision {
        files: view.files,
        settings,
        apps,
    }
}

/// One target at both sides (`None`: absent there), by its index in its side's targets.
#[derive(Debug)]
pub(crate) struct Pair {
    old: Option<(Arc<Revision>, usize)>,
    new: Option<(Arc<Revision>, usize)>,
}

/// The targets of both revisions, paired by id (an id declared more than once at a side,
/// as one Kustomization name in two clusters' directories, is told apart by its file), in
/// name order: each name with its declaring file at each side.
pub(crate) fn pairs(
    old: Arc<Revision>,
    new: Arc<Revision>,
) -> Vec<(String, Option<PathBuf>, Option<PathBuf>, Pair)> {
    let mut by_name: BTreeMap<String, (Option<usize>, Option<usize>)> = BTreeMap::new();
    for (side, is_old) in [(&old, true), (&new, false)] {
        for (i, name) in names(side).into_iter().enumerate() {
            let e = by_name.entry(name).or_default();
            if is_old {
                e.0 = Some(i);
            } else {
                e.1 = Some(i);
            }
        }
    }
    by_name
        .into_iter()
        .map(|(name, (o, n))| {
            let path = |side: &Arc<Revision>, i: usize| side.targets[i].at.file.path.clone();
            let pair = Pair {
                old: o.map(|i| (old.clone(), i)),
                new: n.map(|i| (new.clone(), i)),
            };
            (
                name,
                o.map(|i| path(&old, i)),
                n.map(|i| path(&new, i)),
                pair,
            )
        })
        .collect()
}

/// Each target's name in the report: its id, and its file when the id is not unique.
fn names(side: &Revision) -> Vec<String> {
    let mut count: FastMap<&str, usize> = FastMap::default();
    for t in &side.targets {
        *count.entry(t.id.as_str()).or_default() += 1;
    }
    side.targets
        .iter()
        .map(|t| match count.get(t.id.as_str()) {
            Some(1) => t.id.clone(),
            _ => {
                let file = t.at.file.path.strip_prefix(&side.root);
                let file = file.unwrap_or(&t.at.file.path).display();
                format!("{} ({file})", t.id)
            }
        })
        .collect()
}

impl Pair {
    fn side(&self, at: At) -> Option<(&Revision, &Target)> {
        let (rev, i) = match at {
            At::Base => self.old.as_ref()?,
            At::Head => self.new.as_ref()?,
        };
        Some((rev, rev.targets.get(*i)?))
    }

    /// The objects the target's controller applies at one side, reading through `fs`.
    pub(crate) fn render(
        &self,
        at: At,
        fs: &dyn Fs,
        render: &RenderOptions,
        warnings: &mut Warnings,
    ) -> Result<Vec<Resource>, Error> {
        let Some((rev, t)) = self.side(at) else {
            return Ok(Vec::new());
        };
        let opts = gitops::Options {
            render: render.clone(),
            ..rev.opts.clone()
        };
        let repo = rev.repo(fs);
        let ctx = Context {
            opts: &opts,
            manifests: &rev.manifests,
        };
        let app = t.id.strip_prefix("argo:");
        match (app, &rev.argo) {
            (Some(name), Some(argo)) => {
                let Some(app) = argo.apps.get(name) else {
                    return t.render.render(&repo, &ctx, warnings);
                };
                let view = ArgoRepo {
                    fs,
                    root: rev.root.clone(),
                    files: argo.files.clone(),
                    urls: rev.urls.clone(),
                };
                let s = Settings {
                    base: render.clone(),
                    ..argo.settings.clone()
                };
                let rendered = crate::gitops::argo::render::render(&view, app, &s, warnings)?;
                Ok(rendered.resources)
            }
            _ => t.render.render(&repo, &ctx, warnings),
        }
    }

    /// Why a side does not render the target (its source is not local, a Helm chart…), as
    /// the failure the report shows; the head's reason first.
    pub(crate) fn not_rendered(&self) -> Option<Failure> {
        [At::Head, At::Base].into_iter().find_map(|at| {
            let (rev, t) = self.side(at)?;
            let Resolution::NotRendered(why) = &t.source else {
                return None;
            };
            let file = rev.relative(&t.at.file.path);
            let line = t.at.line();
            let side = match (at, self.side(At::Head).is_some()) {
                (At::Base, true) => " at the base",
                _ => "",
            };
            let message = format!("not rendered{side}: {why}");
            Some(Failure {
                code: "ply::not-rendered".into(),
                text: format!("{} {message}\n  declared at {file}:{line}\n", t.id),
                message,
                file: Some(file),
                line: Some(line),
            })
        })
    }

    /// A head render that failed because it needs what only a decryption key gives (the
    /// variables of a SOPS-encrypted Secret): not rendered, as a source elsewhere is; ply never
    /// decrypts. `text` is the error as the report describes it.
    pub(crate) fn not_rendered_by(&self, e: &Error, text: String) -> Option<Failure> {
        if e.kind != crate::diag::ErrorKind::Encrypted {
            return None;
        }
        let (rev, t) = self.side(At::Head)?;
        let (file, line) = match &e.location {
            Some(l) => (l.file.display.clone(), l.line()),
            None => (rev.relative(&t.at.file.path), t.at.line()),
        };
        let message = format!("not rendered: {}", e.message.lines().next().unwrap_or(""));
        Some(Failure {
            code: e.kind.code().into(),
            text: format!("{} {message}\n{text}", t.id),
            message,
            file: Some(file),
            line: Some(line),
        })
    }

    /// Whether the target's definition differs between the sides: its document (a Flux
    /// Kustomization), or the Application as found (written, generated, rendered by its
    /// parent) with Argo CD's build options.
    pub(crate) fn redefined(&self) -> bool {
        let (Some((a, ta)), Some((b, tb))) = (self.side(At::Base), self.side(At::Head)) else {
            return true;
        };
        if let Some(name) = ta.id.strip_prefix("argo:") {
            fn app<'a>(r: &'a Revision, name: &str) -> Option<&'a Application> {
                r.argo.as_ref().and_then(|x| x.apps.get(name))
            }
            let opts = |r: &Revision| {
                r.argo
                    .as_ref()
                    .map(|x| x.settings.build_options.text.clone())
            };
            return match (app(a, name), app(b, name)) {
                (Some(x), Some(y)) => !same_app(x, y) || opts(a) != opts(b),
                _ => true,
            };
        }
        manifest_of(a, ta).map(|m| &m.node) != manifest_of(b, tb).map(|m| &m.node)
    }

    /// The files a render reads that the file system does not see it read: the files under
    /// its source path at both sides (the controllers list them to generate a kustomization
    /// or read a plain directory: a file gone is a change), and the ConfigMaps and Secrets a
    /// Flux Kustomization's `postBuild.substituteFrom` names, as the target's cluster has them
    /// (read through each side's file system, `old` and `new`).
    pub(crate) fn inputs(&self, (old, new): (&dyn Fs, &dyn Fs)) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (at, fs) in [(At::Base, old), (At::Head, new)] {
            let Some((rev, t)) = self.side(at) else {
                continue;
            };
            for dir in source_dirs(rev, t) {
                out.extend(rev.files.iter().filter(|f| f.starts_with(&dir)).cloned());
            }
            let Some(m) = manifest_of(rev, t) else {
                continue;
            };
            let ctx = Context {
                opts: &rev.opts,
                manifests: &rev.manifests,
            };
            let repo = rev.repo(fs);
            let refs = m.node.get_path(&["spec", "postBuild", "substituteFrom"]);
            for r in refs.and_then(|n| n.as_seq()).into_iter().flatten() {
                let (kind, name) = (r.str_at(&["kind"]), r.str_at(&["name"]));
                let object = (
                    kind.unwrap_or(""),
                    gitops::flux::namespace_of(m),
                    name.unwrap_or(""),
                );
                let found = t.render.substitute_source(&repo, &ctx, object);
                out.extend(found.map(|x| x.at.file.path.clone()));
            }
        }
        out
    }

    /// Whether a target that fails at both sides reads something that differs between
    /// them: its definition, or a file either render reads (recorded by rendering each again
    /// through `old` and `new`, as `base` and `head` options), or one of its [`Pair::inputs`].
    pub(crate) fn reads_differ(
        &self,
        (old, new): (&dyn Fs, &dyn Fs),
        (base, head): (&RenderOptions, &RenderOptions),
        same: &dyn Fn(&Path) -> bool,
    ) -> bool {
        let reads = |at: At, fs: &dyn Fs, render: &RenderOptions| {
            let rec = Recording::new(fs);
            let _ = self.render(at, &rec, render, &mut Warnings::default());
            rec.into_paths()
        };
        self.redefined()
            || reads(At::Head, new, head)
                .iter()
                .chain(&reads(At::Base, old, base))
                .chain(&self.inputs((old, new)))
                .any(|p| !same(p))
    }

    /// What the controller does with the objects this review deletes when the target does
    /// not prune them: each stays in the cluster, no longer managed (one risk per object,
    /// worded alike so that they group). Nothing when it prunes.
    /// The deletion risks (a namespace's objects, a claim's volume…) then go: nothing is
    /// deleted.
    pub(crate) fn removal_risks(&self, objects: &[ObjectChange], risks: &mut Vec<Risk>) {
        let Some(keeps) = self.keeps() else {
            return;
        };
        risks.retain(|r| r.kind != RiskKind::Deletion);
        let kept = objects
            .iter()
            .filter(|o| o.action == Action::Delete)
            .map(|o| Risk {
                kind: RiskKind::Unmanaged,
                object: o.id.clone(),
                path: None,
                what: format!("stays in the cluster, no longer managed: {}", keeps.0),
                rule: std::borrow::Cow::Borrowed(keeps.1),
            });
        risks.extend(kept);
    }

    /// Why the objects this review deletes stay in the cluster (and the rule), or `None` when
    /// the controller deletes them: from the head's definition, or when the target is
    /// removed, from what the controller does when its object is deleted.
    fn keeps(&self) -> Option<(&'static str, &'static str)> {
        let removed = self.side(At::Head).is_none();
        let (rev, t) = self.side(At::Head).or_else(|| self.side(At::Base))?;
        if t.id.starts_with("flux:") {
            // kustomize-controller `reconcile` prunes what the source no longer has only
            // with `spec.prune: true`; `finalize` deletes the inventory of a deleted
            // Kustomization only with it too.
            return (!t.prunes).then_some((FLUX_KEEPS, FLUX_RULE));
        }
        if removed {
            // A deleted Application takes its objects with it only with Argo CD's resources
            // finalizer (a cascading delete); without it they stay.
            let name = t.id.strip_prefix("argo:")?;
            let app = rev.argo.as_ref()?.apps.get(name)?;
            return (!has_resources_finalizer(app)).then_some((ARGO_DELETED, ARGO_DELETE_RULE));
        }
        (!t.prunes).then_some((ARGO_KEEPS, ARGO_RULE))
    }
}

/// The risk's words and rules.
const FLUX_KEEPS: &str = "the Kustomization does not prune (spec.prune: false)";
const FLUX_RULE: &str = "kustomize-controller, internal/controller/kustomization_controller.go `reconcile` and `finalize`: objects removed from the source are deleted only with spec.prune: true";
const ARGO_KEEPS: &str =
    "the Application's sync does not prune (no syncPolicy.automated with prune: true)";
const ARGO_RULE: &str = "Argo CD documentation, user-guide/auto_sync.md \"Automatic Pruning\": automated sync deletes resources no longer in git only with prune: true; a manual sync only when asked to prune";
const ARGO_DELETED: &str =
    "the Application is removed without the resources-finalizer.argocd.argoproj.io finalizer";
const ARGO_DELETE_RULE: &str = "Argo CD documentation, user-guide/app_deletion.md \"About The Deletion Finalizer\": deleting an Application deletes its resources only with the resources finalizer (a cascading delete)";

/// The directories a target's sources are read from at a revision: a Flux Kustomization's
/// `spec.path`, each path of an Argo CD Application's sources.
fn source_dirs(rev: &Revision, t: &Target) -> Vec<PathBuf> {
    if let Some(name) = t.id.strip_prefix("argo:") {
        let app = rev.argo.as_ref().and_then(|a| a.apps.get(name));
        let paths = app.into_iter().flat_map(|a| a.sources.iter());
        return paths
            .filter_map(|s| s.str_at(&["path"]))
            .map(|p| crate::gitops::flux::secure_join(&rev.root, p))
            .collect();
    }
    let Resolution::Local { root, .. } = &t.source else {
        return Vec::new();
    };
    let path = manifest_of(rev, t).and_then(|m| m.node.str_at(&["spec", "path"]));
    vec![crate::gitops::flux::secure_join(root, path.unwrap_or(""))]
}

/// The Flux Kustomization a target was found from.
fn manifest_of<'a>(rev: &'a Revision, t: &Target) -> Option<&'a Manifest> {
    rev.manifests
        .iter()
        .find(|m| m.at.file.path == t.at.file.path && m.at.offset == t.at.offset)
}

/// Two Applications that render alike from the same files.
fn same_app(a: &Application, b: &Application) -> bool {
    a.name == b.name
        && a.namespace == b.namespace
        && a.project == b.project
        && a.dest_namespace == b.dest_namespace
        && a.sources == b.sources
        && a.multi_source == b.multi_source
}

/// Whether an Application carries Argo CD's resources finalizer: written in its document, or
/// for one an ApplicationSet generates, set by the ApplicationSet controller unless the set
/// has `syncPolicy.preserveResourcesOnDeletion: true` (applicationset_controller.go,
/// `generateApplications`).
fn has_resources_finalizer(app: &Application) -> bool {
    let text = app.file.text.get(app.offset..).unwrap_or("");
    let doc = text.split("\n---").next().unwrap_or(text);
    if !app.path_prefix.is_empty() {
        return !doc.contains("preserveResourcesOnDeletion: true");
    }
    doc.contains("resources-finalizer.argocd.argoproj.io")
}

impl Revision {
    /// `path` relative to the repository's root, for display.
    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// A Flux variable: where it is set, its value (compared, never shown), the step, and the
/// object it is read from (` from ConfigMap vars`, empty when inline).
type Variable = (crate::source::Location, String, &'static str, String);

/// A place a value was set: where (as diagnostics name files), and whether the pull request
/// changed it.
struct Setting {
    at: crate::source::Location,
    changed: bool,
}

impl Pair {
    /// The causes only the controller knows, over those the kustomize build gave
    /// ([`super::why`]): a value substituted from a Flux variable that changed names the
    /// `postBuild.substitute` entry or the ConfigMap or Secret key it came from (never a
    /// Secret's value); a value an Argo CD override set names the Application's field.
    pub(crate) fn causes(
        &self,
        objects: &mut [ObjectChange],
        head: &[Resource],
        link: Option<&super::why::LinkBase>,
        fss: (&dyn Fs, &dyn Fs),
    ) {
        let Some((_, t)) = self.side(At::Head) else {
            return;
        };
        let flux = t.id.starts_with("flux:");
        for (o, r) in objects.iter_mut().zip(head) {
            for c in &mut o.changes {
                let Some(cause) = &c.cause else { continue };
                let setting = match flux {
                    true => self
                        .variable_of(cause, r, fss)
                        .or_else(|| self.flux_override_of(cause)),
                    false => self.override_of(cause),
                };
                let Some((s, step, via)) = setting else {
                    continue;
                };
                let file = s.at.file.display.clone();
                let (line, column) = s.at.file.line_col(s.at.offset);
                let url = link.and_then(|l| super::why::link_to(l, &s.at.file.path, line));
                c.cause = Some(crate::report::Cause {
                    file,
                    line,
                    column,
                    step: step.into(),
                    changed: Some(s.changed),
                    link: url,
                    remote: None,
                    via,
                    at_base: false,
                });
            }
        }
    }

    /// The variable a Flux resource's line (`cause`, where the build read the value) names,
    /// when one of them changed value: where it is set at the head.
    fn variable_of(
        &self,
        cause: &crate::report::Cause,
        r: &Resource,
        (old, new): (&dyn Fs, &dyn Fs),
    ) -> Option<(Setting, &'static str, Option<String>)> {
        let read = r.provenance.as_ref()?.read.as_ref()?;
        if read.file.display != cause.file || cause.at_base {
            return None;
        }
        let text = read.file.text.lines().nth(cause.line.checked_sub(1)?)?;
        let names = variables_in(text);
        let (head, base) = (
            self.variables(At::Head, new)?,
            self.variables(At::Base, old),
        );
        let changed = |n: &String| {
            let now = head.get(n).map(|v| &v.1);
            base.as_ref().and_then(|b| b.get(n)).map(|v| &v.1) != now
        };
        let name = names.iter().find(|n| head.contains_key(*n) && changed(n))?;
        let (at, _, step, from) = head.get(name)?.clone();
        let via = format!("${{{name}}}{from} into {}:{}", cause.file, cause.line);
        Some((Setting { at, changed: true }, step, Some(via)))
    }

    /// Each variable of the Flux Kustomization at a side: where it is set, its value (to
    /// compare; never shown) and the step (`substitute` inline, `substituteFrom` a ConfigMap
    /// or Secret key). Inline entries win over references, a later reference over an
    /// earlier one (kustomize_varsub.go `SubstituteVariables`). The objects are the ones the
    /// target's cluster has, as its render reads them (through `fs`).
    fn variables(&self, at: At, fs: &dyn Fs) -> Option<FastMap<String, Variable>> {
        use crate::gitops::flux::{field, namespace_of};
        let (rev, t) = self.side(at)?;
        let m = manifest_of(rev, t)?;
        let ctx = Context {
            opts: &rev.opts,
            manifests: &rev.manifests,
        };
        let repo = rev.repo(fs);
        let mut out = FastMap::default();
        let refs = m.node.get_path(&["spec", "postBuild", "substituteFrom"]);
        for r in refs.and_then(|n| n.as_seq()).into_iter().flatten() {
            let (kind, name) = (r.str_at(&["kind"]), r.str_at(&["name"]));
            let object = (kind.unwrap_or(""), namespace_of(m), name.unwrap_or(""));
            let Some(obj) = t.render.substitute_source(&repo, &ctx, object) else {
                continue;
            };
            let obj = &obj;
            for key in ["data", "stringData"] {
                let Some(data) = obj.node.get(key).and_then(|n| n.as_map()) else {
                    continue;
                };
                for (k, v) in data.iter() {
                    let value = v.scalar_text().unwrap_or_default();
                    let loc = value_of(field(obj, &[key, k.as_str()]), Some(&k.to_string()));
                    let from = format!(" from {} {}", obj.kind(), obj.name());
                    out.insert(k.to_string(), (loc, value, "substituteFrom", from));
                }
            }
        }
        let inline = m.node.get_path(&["spec", "postBuild", "substitute"]);
        for (k, v) in inline
            .and_then(|n| n.as_map())
            .into_iter()
            .flat_map(|m| m.iter())
        {
            let at = field(m, &["spec", "postBuild", "substitute", k.as_str()]);
            let loc = value_of(at, Some(&k.to_string()));
            let value = v.scalar_text().unwrap_or_default();
            out.insert(k.to_string(), (loc, value, "substitute", String::new()));
        }
        Some(out)
    }

    /// The Flux Kustomization's field that set a value, when the build's cause is the
    /// kustomization the controller wrote or laid its fields over (`spec.images`,
    /// `namePrefix`, `nameSuffix`, `targetNamespace`, `patches`): changed when it differs from
    /// the base's.
    fn flux_override_of(
        &self,
        cause: &crate::report::Cause,
    ) -> Option<(Setting, &'static str, Option<String>)> {
        let field = match cause.step.as_str() {
            "images" => "images",
            "namePrefix" => "namePrefix",
            "nameSuffix" => "nameSuffix",
            "namespace" => "targetNamespace",
            "patch" | "json6902" => "patches",
            _ => return None,
        };
        let (rev, t) = self.side(At::Head)?;
        let m = manifest_of(rev, t)?;
        let set = m.node.get_path(&["spec", field])?;
        let dir = source_dirs(rev, t).into_iter().next()?;
        let edited = crate::kustomization::load::FILE_NAMES
            .iter()
            .any(|k| crate::source::display_path(&dir.join(k)) == cause.file);
        if !edited {
            return None;
        }
        let before = self
            .side(At::Base)
            .and_then(|(b, bt)| manifest_of(b, bt))
            .and_then(|b| b.node.get_path(&["spec", field]));
        let mut path = vec!["spec".to_string(), field.to_string()];
        leaf(set, before, &mut path);
        let segs: Vec<&str> = path.iter().map(String::as_str).collect();
        let at = value_of(crate::gitops::flux::field(m, &segs), path.last());
        let setting = Setting {
            at,
            changed: before != Some(set),
        };
        Some((setting, "override", None))
    }

    /// The Argo CD override that set a value, when the build's cause is the kustomization
    /// the repo server edited (its lines are the edited file's, not the repository's): the
    /// Application's field, changed when it differs from the base's.
    fn override_of(
        &self,
        cause: &crate::report::Cause,
    ) -> Option<(Setting, &'static str, Option<String>)> {
        let field = match cause.step.as_str() {
            "images" => "images",
            "namePrefix" => "namePrefix",
            "nameSuffix" => "nameSuffix",
            "namespace" => "namespace",
            "replicas" => "replicas",
            "labels" => "commonLabels",
            "commonAnnotations" => "commonAnnotations",
            "patch" | "json6902" => "patches",
            _ => return None,
        };
        let (rev, t) = self.side(At::Head)?;
        let name = t.id.strip_prefix("argo:")?;
        let app = rev.argo.as_ref()?.apps.get(name)?;
        let base_app = self
            .side(At::Base)
            .and_then(|(b, _)| b.argo.as_ref()?.apps.get(name));
        for (i, src) in app.sources.iter().enumerate() {
            let dir = rev.root.join(src.str_at(&["path"]).unwrap_or(""));
            let edited = crate::kustomization::load::FILE_NAMES
                .iter()
                .any(|k| crate::source::display_path(&dir.join(k)) == cause.file);
            let set = src.get_path(&["kustomize", field]);
            if !edited || set.is_none() {
                continue;
            }
            let before = base_app
                .and_then(|b| b.sources.get(i))
                .and_then(|s| s.get_path(&["kustomize", field]));
            let mut path = vec!["kustomize".to_string(), field.to_string()];
            leaf(set?, before, &mut path);
            let mut segs = app.source_path(i);
            segs.extend(path.iter().map(|p| match p.parse::<usize>() {
                Ok(n) => crate::yaml::path::PathSeg::Index(n),
                Err(_) => crate::yaml::path::PathSeg::Key(p.clone()),
            }));
            let key = crate::kustomization::load::locate_from(&app.file, app.offset, &segs);
            let at = value_of(key, path.last());
            let setting = Setting {
                at,
                changed: before != set,
            };
            return Some((setting, "override", None));
        }
        None
    }
}

/// The path (appended to `path`) of the first scalar under `node` that differs from `before`
/// (or the first scalar): the entry a reader looks at.
fn leaf(node: &crate::yaml::Node, before: Option<&crate::yaml::Node>, path: &mut Vec<String>) {
    if let Some(m) = node.as_map() {
        let pick = m
            .iter()
            .find(|(k, v)| before.and_then(|b| b.get(k.as_str())) != Some(*v))
            .or_else(|| m.iter().next());
        if let Some((k, v)) = pick {
            path.push(k.to_string());
            leaf(v, before.and_then(|b| b.get(k.as_str())), path);
        }
    } else if let Some(items) = node.as_seq() {
        let at = |i: usize| before.and_then(|b| b.as_seq()).and_then(|b| b.get(i));
        let pick = (0..items.len())
            .find(|i| at(*i) != items.get(*i))
            .unwrap_or(0);
        if let Some(v) = items.get(pick) {
            path.push(pick.to_string());
            leaf(v, at(pick), path);
        }
    }
}

/// Where the value of the entry `key` located at `loc` is written, when on the same line
/// (`key: value`); else `loc` itself.
fn value_of(loc: crate::source::Location, key: Option<&String>) -> crate::source::Location {
    let text = loc.file.text.get(loc.offset..).unwrap_or("");
    let line = text.split('\n').next().unwrap_or("");
    let Some(rest) = key.and_then(|k| line.strip_prefix(k.as_str())) else {
        return loc;
    };
    let Some(value) = rest.strip_prefix(':') else {
        return loc;
    };
    let trimmed = value.trim_start();
    if trimmed.is_empty() {
        return loc;
    }
    let offset = loc.offset + (line.len() - trimmed.len());
    crate::source::Location::new(loc.file.clone(), offset, trimmed.len())
}

/// The variable names a line's `${…}` expressions read (a `$${…}` is text).
fn variables_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(at) = line[i..].find("${") {
        let start = i + at;
        i = start + 2;
        if start > 0 && b[start - 1] == b'$' {
            continue;
        }
        let name: String = line[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}
