//! Flux: every `kustomize.toolkit.fluxcd.io` Kustomization of a repository (v1, and v1beta2
//! as Flux still reads it), its source resolved (this repository by URL or as the bootstrap
//! source `flux-system`, or a directory given with `--source`), and rendered as
//! kustomize-controller renders it (`internal/controller/kustomization_controller.go`,
//! `reconcile` → `generate` → `build` → `apply`): the kustomization the controller writes
//! ([`generate`]), a kustomize build without load restrictions or legacy order, then the
//! post-build steps ([`postbuild`]). `../shared/docs/gitops-semantics.md` §2 has the sources.

mod cluster;
pub(crate) mod envsubst;
mod generate;
mod ignore;
mod postbuild;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::kustomization::load::locate_from;
use crate::resource::Resource;
use crate::source::Location;
use crate::yaml::Node;
use crate::yaml::path::PathSeg;

use super::{Context, Controller, Manifest, Repo, Resolution, Target, TargetRender};

/// The API group of Flux Kustomizations.
pub(crate) const GROUP: &str = "kustomize.toolkit.fluxcd.io";
/// The group of Flux sources.
const SOURCE_GROUP: &str = "source.toolkit.fluxcd.io";
/// The versions of Kustomization the controller still reads.
const VERSIONS: [&str; 2] = ["v1", "v1beta2"];
/// The source kinds a Kustomization may name (`getSource`).
const SOURCE_KINDS: [&str; 4] = [
    "GitRepository",
    "OCIRepository",
    "Bucket",
    "ExternalArtifact",
];

/// Flux's options.
#[derive(Clone, Debug)]
pub(crate) struct FluxOptions {
    /// Strict substitution: a `${var}` without a default that no source sets is an error
    /// (the controller's default since v1.9; `--strict-substitute=false` for older ones).
    pub(crate) strict_substitute: bool,
    /// The owner labels (`kustomize.toolkit.fluxcd.io/name`, `/namespace`); `--no-owner-labels`.
    pub(crate) owner_labels: bool,
    /// ConfigMaps and Secrets given with `--vars FILE`, searched before the repository's.
    pub(crate) vars: Vec<Manifest>,
}

impl Default for FluxOptions {
    fn default() -> FluxOptions {
        FluxOptions {
            strict_substitute: true,
            owner_labels: true,
            vars: Vec::new(),
        }
    }
}

/// The Flux controller.
#[derive(Debug)]
pub(crate) struct Flux;

impl Controller for Flux {
    fn name(&self) -> &'static str {
        "flux"
    }

    fn discover(&self, repo: &Repo<'_>, ctx: &Context<'_>, _: &mut Warnings) -> Vec<Target> {
        targets(repo, ctx)
    }
}

/// Every Flux Kustomization of the repository as targets, one per cluster that applies it.
pub(crate) fn targets(repo: &Repo<'_>, ctx: &Context<'_>) -> Vec<Target> {
    cluster::targets(repo, ctx)
}

/// Whether a manifest is a Flux Kustomization of a version the controller reads.
pub(crate) fn is_kustomization(m: &Manifest) -> bool {
    m.kind() == "Kustomization"
        && m.group() == GROUP
        && VERSIONS
            .iter()
            .any(|v| m.api_version().ends_with(&format!("/{v}")))
}

/// The namespace the controller would see the object in: its own, or `default`.
pub(crate) fn namespace_of(m: &Manifest) -> &str {
    match m.namespace() {
        "" => "default",
        ns => ns,
    }
}

/// One Kustomization as a target on its own, outside the repository's clusters (a file
/// given on the command line): `flux:NS/NAME`, its source resolved, its `substituteFrom`
/// objects looked up in `--vars` files and among all the repository's manifests.
pub(crate) fn target(repo: &Repo<'_>, ctx: &Context<'_>, m: &Manifest) -> Target {
    let ns = namespace_of(m);
    Target {
        id: format!("flux:{ns}/{}", m.name()),
        at: m.at.clone(),
        source: resolve_source(repo, ctx, m),
        prunes: prunes(m),
        render: Arc::new(FluxRender {
            manifest: m.clone(),
        }),
    }
}

/// `spec.prune: true`.
fn prunes(m: &Manifest) -> bool {
    m.node.get_path(&["spec", "prune"]) == Some(&Node::Bool(true))
}

/// Where a Kustomization's source is: `--source` first, then a source object of this
/// repository (its URL) or the bootstrap source; anything else is not rendered.
fn resolve_source(repo: &Repo<'_>, ctx: &Context<'_>, m: &Manifest) -> Resolution {
    let kind = m
        .node
        .str_at(&["spec", "sourceRef", "kind"])
        .unwrap_or("GitRepository");
    let Some(name) = m.node.str_at(&["spec", "sourceRef", "name"]) else {
        return Resolution::NotRendered("spec.sourceRef.name is not set".into());
    };
    let ns = m
        .node
        .str_at(&["spec", "sourceRef", "namespace"])
        .unwrap_or_else(|| namespace_of(m));
    let key = format!("{kind}/{ns}/{name}");
    if let Some(map) = ctx.opts.sources.iter().find(|s| s.key == key) {
        return Resolution::Local {
            root: map.dir.clone(),
            how: format!("{key} mapped to {} (--source)", map.dir.display()),
        };
    }
    if !SOURCE_KINDS.contains(&kind) {
        return Resolution::NotRendered(format!("source kind {kind} is not a Flux source"));
    }
    let declared = ctx.manifests.iter().find(|s| {
        s.group() == SOURCE_GROUP && s.kind() == kind && s.name() == name && namespace_of(s) == ns
    });
    let url = declared.and_then(|s| s.node.str_at(&["spec", "url"]));
    // The bootstrap source is the repository `flux bootstrap` writes to: this one.
    if kind == "GitRepository" && name == "flux-system" {
        return Resolution::Local {
            root: repo.root.clone(),
            how: format!("{key} is the bootstrap source, this repository"),
        };
    }
    if let Some(url) = url.filter(|u| repo.urls.iter().any(|r| super::same_repo_url(r, u))) {
        if let Some(other) = declared.and_then(|s| other_ref(ctx, s)) {
            return Resolution::NotRendered(format!(
                "source {key} is this repository at {other}, not the revision rendered; map it with --source {key}=DIR"
            ));
        }
        return Resolution::Local {
            root: repo.root.clone(),
            how: format!("{key} is this repository ({url})"),
        };
    }
    let why = match (declared, url) {
        (None, _) => format!(
            "source {key} is not declared in this repository; map it with --source {key}=DIR"
        ),
        (Some(_), Some(url)) => {
            format!("source {key} is not local ({url}); map it with --source {key}=DIR")
        }
        (Some(_), None) => format!("source {key} is not local; map it with --source {key}=DIR"),
    };
    Resolution::NotRendered(why)
}

/// The `spec.ref` of a source of this repository when it is not the revision rendered: the
/// bootstrap source's ref when that is declared, else `main` or `master` (`branch dev-team`).
fn other_ref(ctx: &Context<'_>, source: &Manifest) -> Option<String> {
    let refs = |m: &Manifest| m.node.get_path(&["spec", "ref"]).cloned();
    let bootstrap = ctx.manifests.iter().find(|m| {
        m.group() == SOURCE_GROUP && m.kind() == "GitRepository" && m.name() == "flux-system"
    });
    let mine = refs(source)?;
    let same = match bootstrap {
        Some(b) => refs(b).as_ref() == Some(&mine),
        None => {
            matches!(mine.str_at(&["branch"]), Some("main" | "master"))
                && mine.as_map().is_some_and(|m| m.len() == 1)
        }
    };
    if same {
        return None;
    }
    let described = ["branch", "tag", "semver", "commit", "name"]
        .iter()
        .find_map(|k| mine.str_at(&[k]).map(|v| format!("{k} {v}")))
        .unwrap_or_else(|| "another ref".into());
    Some(described)
}

/// How one Flux Kustomization renders.
#[derive(Clone, Debug)]
struct FluxRender {
    manifest: Manifest,
}

impl TargetRender for FluxRender {
    fn render(
        &self,
        repo: &Repo<'_>,
        ctx: &Context<'_>,
        warnings: &mut Warnings,
    ) -> Result<Vec<Resource>> {
        let t = target(repo, ctx, &self.manifest);
        let root = match &t.source {
            Resolution::Local { root, .. } => root.clone(),
            Resolution::NotRendered(why) => {
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!("{}: not rendered: {why}", t.id),
                )
                .at(self.manifest.at.clone()));
            }
        };
        let excluded = excluded(repo, ctx, &self.manifest, &root);
        let built = build(repo, ctx, &self.manifest, &root, &excluded, warnings)?;
        let manifests = || ctx.opts.flux.vars.iter().chain(ctx.manifests.iter());
        let lookup = |kind: &str, ns: &str, name: &str| {
            Ok(postbuild::find_object(manifests(), kind, ns, name).map(|m| m.node.clone()))
        };
        postbuild::run(built, &self.manifest, ctx, &lookup)
    }

    fn substitute_source(
        &self,
        _: &Repo<'_>,
        ctx: &Context<'_>,
        (kind, ns, name): (&str, &str, &str),
    ) -> Option<Manifest> {
        let manifests = ctx.opts.flux.vars.iter().chain(ctx.manifests.iter());
        postbuild::find_object(manifests, kind, ns, name).cloned()
    }
}

/// The files of the source at `root` that source-controller leaves out of its artifact
/// (`.sourceignore`, the source's `spec.ignore`, the default rules).
fn excluded(
    repo: &Repo<'_>,
    ctx: &Context<'_>,
    m: &Manifest,
    root: &Path,
) -> std::collections::HashSet<PathBuf> {
    let listed;
    let files: &[PathBuf] = if root.starts_with(&repo.root) {
        repo.files
    } else {
        listed = crate::fs::files_under(root).unwrap_or_default();
        &listed
    };
    let spec_ignore = declared_source(ctx, m).and_then(|s| s.node.str_at(&["spec", "ignore"]));
    ignore::Rules::load(repo.fs, root, files, spec_ignore).excluded(root, files)
}

/// The GitRepository the Kustomization names, when the repository declares it.
fn declared_source<'a>(ctx: &'a Context<'_>, m: &Manifest) -> Option<&'a Manifest> {
    let kind = m
        .node
        .str_at(&["spec", "sourceRef", "kind"])
        .unwrap_or("GitRepository");
    let name = m.node.str_at(&["spec", "sourceRef", "name"])?;
    let ns = m
        .node
        .str_at(&["spec", "sourceRef", "namespace"])
        .unwrap_or_else(|| namespace_of(m));
    ctx.manifests.iter().find(|s| {
        s.group() == SOURCE_GROUP
            && s.kind() == kind
            && kind == "GitRepository"
            && s.name() == name
            && namespace_of(s) == ns
    })
}

/// Builds the Kustomization `m` from the source at `root` (a directory `repo.fs` serves) as
/// the controller does before its post-build steps: the kustomization it writes, then a
/// kustomize build without load restrictions or legacy order, reading only what the source's
/// artifact holds (`excluded` are the files it leaves out).
fn build(
    repo: &Repo<'_>,
    ctx: &Context<'_>,
    m: &Manifest,
    root: &Path,
    excluded: &std::collections::HashSet<PathBuf>,
    warnings: &mut Warnings,
) -> Result<Vec<Resource>> {
    let spec_path = m.node.str_at(&["spec", "path"]).unwrap_or("");
    let dir = secure_join(root, spec_path);
    if repo.fs.kind(&dir) != Some(crate::fs::FileKind::Dir) {
        return Err(Error::new(
            ErrorKind::NotFound,
            format!(
                "kustomization path not found: {spec_path} (taken inside the source root '{}', as the controller's SecureJoin does)",
                shown(root)
            ),
        )
        .at(field(m, &["spec", "path"]))
        .help("spec.path is relative to the root of the source; `..` cannot leave it"));
    }
    let listed;
    let files: &[PathBuf] = if root.starts_with(&repo.root) {
        repo.files
    } else {
        // A directory mapped with `--source` lies outside the repository, on the disk.
        listed = crate::fs::files_under(root).map_err(|e| Error::io(root, &e))?;
        &listed
    };
    let kept: Vec<PathBuf>;
    let files = if excluded.is_empty() {
        files
    } else {
        kept = files
            .iter()
            .filter(|f| !excluded.contains(*f))
            .cloned()
            .collect();
        &kept
    };
    let written = generate::kustomization_file(repo.fs, root, &dir, m, files)?;
    let fs = generate::SourceFs::new(repo.fs, root, written, excluded);
    let opts = crate::render::RenderOptions {
        load_restrictor: crate::fs::Restrictor::None,
        reorder: crate::render::OutputOrder::None,
        kustomize: crate::render::KustomizeVersion::V5_8_1,
        ..ctx.opts.render.clone()
    };
    Ok(crate::render::render_with(&fs, &dir, &opts, warnings)?.resources)
}

/// A path for messages: relative to the working directory when below it (`.` for itself).
fn shown(path: &Path) -> String {
    match crate::source::display_path(path) {
        s if s.is_empty() => ".".into(),
        s => s,
    }
}

/// `filepath-securejoin`'s `SecureJoin` without symlinks: `path` cleaned lexically with `..`
/// never climbing above `root`.
pub(crate) fn secure_join(root: &Path, path: &str) -> PathBuf {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let mut out = root.to_path_buf();
    out.extend(parts);
    out
}

/// Where a field of the Kustomization is written (its document's line when not found).
pub(crate) fn field(m: &Manifest, path: &[&str]) -> Location {
    let segs: Vec<PathSeg> = path.iter().map(|s| seg(s)).collect();
    locate_from(&m.at.file, m.at.offset, &segs)
}

/// A path segment: a number is a list index.
fn seg(s: &str) -> PathSeg {
    match s.parse::<usize>() {
        Ok(i) => PathSeg::Index(i),
        Err(_) => PathSeg::Key(s.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secure_join_keeps_paths_inside_the_root() {
        let root = Path::new("/src");
        assert_eq!(
            secure_join(root, "./apps/prod"),
            PathBuf::from("/src/apps/prod")
        );
        assert_eq!(secure_join(root, "../../etc"), PathBuf::from("/src/etc"));
        assert_eq!(secure_join(root, "a/../../b"), PathBuf::from("/src/b"));
        assert_eq!(secure_join(root, ""), PathBuf::from("/src"));
    }
}
