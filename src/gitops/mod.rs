//! A repository's GitOps targets: what a GitOps controller (Flux's kustomize-controller,
//! Argo CD's repo server) would render from it, found by reading the repository's manifests
//! once ([`scan`]), each with an id (`flux:NS/NAME`, `argo:NAME`), the file and line that
//! declare it, and its source resolved to a directory of this repository or left "not
//! rendered" with the reason. Each controller plugs in as a [`Controller`] (discovery) whose
//! targets carry a [`TargetRender`] (rendering as that controller does). Reads only through
//! [`Fs`]; prints nothing.

pub(crate) mod argo;
pub(crate) mod flux;

/// The fields of a patch's `target` selector that both controllers pass on to kustomize
/// (kustomize's `Selector`: group, version, kind, name, namespace and the two selectors).
pub(crate) const PATCH_SELECTOR_FIELDS: [&str; 7] = [
    "group",
    "version",
    "kind",
    "name",
    "namespace",
    "labelSelector",
    "annotationSelector",
];

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fs::Fs;
use crate::render::RenderOptions;
use crate::resource::Resource;
use crate::source::{Location, SourceFile};
use crate::yaml::Node;

/// One revision of a repository, as the controllers would see it: its files through `fs`
/// (the working tree or a git revision), the absolute root they lie under, and the URLs by
/// which the repository is known (its remote, `--repo-url`).
pub(crate) struct Repo<'a> {
    pub(crate) fs: &'a dyn Fs,
    /// The repository's root as `fs` serves it (absolute).
    pub(crate) root: PathBuf,
    /// Every file of the revision (absolute paths under `root`), sorted.
    pub(crate) files: &'a [PathBuf],
    /// The URLs that name this repository (normalised by [`same_repo_url`] when compared).
    pub(crate) urls: &'a [String],
    /// The revision being rendered (a commit id), when known; Argo CD passes it to templates.
    pub(crate) revision: Option<String>,
}

impl std::fmt::Debug for Repo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("root", &self.root)
            .field("files", &self.files.len())
            .field("urls", &self.urls)
            .finish()
    }
}

impl Repo<'_> {
    /// `path` relative to the repository's root, for display (`clusters/prod/apps.yaml`).
    pub(crate) fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// One YAML document of the repository that has a `kind`: where it is, and its content.
#[derive(Clone, Debug)]
pub(crate) struct Manifest {
    /// The document's first line, for messages (`file:line`).
    pub(crate) at: Location,
    pub(crate) node: Node,
}

impl Manifest {
    pub(crate) fn kind(&self) -> &str {
        self.node.str_at(&["kind"]).unwrap_or("")
    }

    pub(crate) fn api_version(&self) -> &str {
        self.node.str_at(&["apiVersion"]).unwrap_or("")
    }

    /// The API group (`kustomize.toolkit.fluxcd.io` of `kustomize.toolkit.fluxcd.io/v1`).
    pub(crate) fn group(&self) -> &str {
        self.api_version().split_once('/').map_or("", |(g, _)| g)
    }

    pub(crate) fn name(&self) -> &str {
        self.node.str_at(&["metadata", "name"]).unwrap_or("")
    }

    /// `metadata.namespace`, `""` when not set.
    pub(crate) fn namespace(&self) -> &str {
        self.node.str_at(&["metadata", "namespace"]).unwrap_or("")
    }
}

/// Every document with a `kind` in the repository's `*.yaml` and `*.yml` files, in file
/// order. A file that does not parse holds no manifests: controllers read their objects from
/// files the cluster applies, which parse.
pub(crate) fn scan(repo: &Repo<'_>) -> Vec<Manifest> {
    let mut out = Vec::new();
    for path in repo.files {
        let yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if !yaml {
            continue;
        }
        let Ok(bytes) = repo.fs.read(path) else {
            continue;
        };
        let Ok(file) = SourceFile::from_bytes(path.clone(), bytes) else {
            continue;
        };
        // The cheap test first: most files of a repository are no controller's objects, but
        // all of them are read, so only files naming a kind are parsed.
        if !file.text.contains("kind:") {
            continue;
        }
        // Not YAML (a helm template, a broken file): no controller objects in it; a target
        // that builds it says so when it renders.
        let Ok(docs) = crate::yaml::parse_documents(&file.text) else {
            continue;
        };
        for d in docs {
            if d.node.str_at(&["kind"]).is_some() {
                out.push(Manifest {
                    at: Location::line_at(file.clone(), d.offset),
                    node: d.node,
                });
            }
        }
    }
    out
}

/// How a target's source resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// A directory of this revision (absolute, under [`Repo::root`] or a directory mapped by
    /// `--source`): the source's root, which the target's path is taken in.
    Local { root: PathBuf, how: String },
    /// Not rendered, and why (`source GitRepository/flux-system/podinfo is not local`).
    NotRendered(String),
}

/// One thing a controller renders: a Flux Kustomization, an Argo CD Application.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// `flux:NS/NAME`, `argo:NAME`: the overlay's name in a review.
    pub(crate) id: String,
    /// Where the object is declared.
    pub(crate) at: Location,
    pub(crate) source: Resolution,
    /// Whether objects it no longer renders are deleted from the cluster (Flux `spec.prune`,
    /// Argo CD's automated sync with `prune`). When not, a removal is a risk.
    pub(crate) prunes: bool,
    /// How the controller renders it.
    pub(crate) render: Arc<dyn TargetRender>,
}

/// What a target renders to, as its controller renders it.
pub(crate) trait TargetRender: Send + Sync + std::fmt::Debug {
    /// The objects the controller would apply, in its order. `vars` are the ConfigMaps and
    /// Secrets it may read values from (the repository's and `--vars` files).
    fn render(
        &self,
        repo: &Repo<'_>,
        ctx: &Context<'_>,
        warnings: &mut Warnings,
    ) -> Result<Vec<Resource>>;

    /// The ConfigMap or Secret (`KIND`, `NS`, `NAME`) a Flux `postBuild.substituteFrom`
    /// reference of this target reads, as the target's cluster has it; `None` when it is not
    /// found or the target is not a Flux Kustomization.
    fn substitute_source(
        &self,
        _repo: &Repo<'_>,
        _ctx: &Context<'_>,
        _object: (&str, &str, &str),
    ) -> Option<Manifest> {
        None
    }
}

/// A GitOps controller: finds its targets among a repository's manifests.
pub(crate) trait Controller: Sync {
    /// `flux`, `argo`.
    #[expect(
        dead_code,
        reason = "names a controller in messages once there are two"
    )]
    fn name(&self) -> &'static str;
    /// Every target declared in `manifests`, with its source resolved.
    fn discover(&self, repo: &Repo<'_>, ctx: &Context<'_>, warnings: &mut Warnings) -> Vec<Target>;
}

/// What every discovery and render is given: the options and the repository's manifests.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    pub(crate) opts: &'a Options,
    pub(crate) manifests: &'a [Manifest],
}

/// The options of every controller, validated.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    /// `--repo-url`: more URLs that name this repository.
    pub(crate) repo_urls: Vec<String>,
    /// `--source KIND/NS/NAME=DIR`: sources mapped to directories (absolute).
    pub(crate) sources: Vec<SourceMap>,
    /// The render options kustomize builds take (the controllers' own options override the
    /// load restrictor and order).
    pub(crate) render: RenderOptions,
    pub(crate) flux: flux::FluxOptions,
}

/// `--source KIND/NS/NAME=DIR` (Flux; `KIND/NAME` where a controller has no namespaces).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SourceMap {
    pub(crate) key: String,
    pub(crate) dir: PathBuf,
}

impl SourceMap {
    /// Parses `KIND/NS/NAME=DIR`; `DIR` is taken relative to `cwd`.
    pub(crate) fn parse(s: &str, cwd: &Path) -> Result<SourceMap> {
        let Some((key, dir)) = s.split_once('=') else {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("--source {s}: expected KIND/NAMESPACE/NAME=DIR"),
            ));
        };
        if key.split('/').count() < 2 || dir.is_empty() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("--source {s}: expected KIND/NAMESPACE/NAME=DIR"),
            ));
        }
        Ok(SourceMap {
            key: key.to_string(),
            dir: crate::fs::normalize(&cwd.join(dir)),
        })
    }
}

/// The controllers ply knows, in the order their targets are listed.
pub(crate) fn controllers() -> Vec<&'static dyn Controller> {
    vec![&flux::Flux, &argo::controller::Argo]
}

/// Every target of every controller in the repository.
pub(crate) fn discover(repo: &Repo<'_>, opts: &Options, warnings: &mut Warnings) -> Vec<Target> {
    found(repo, opts, warnings).1
}

/// The repository's manifests and every target of every controller found in them: the one
/// discovery that listing, rendering and the `--gitops` review share.
pub(crate) fn found(
    repo: &Repo<'_>,
    opts: &Options,
    warnings: &mut Warnings,
) -> (Vec<Manifest>, Vec<Target>) {
    let manifests = scan(repo);
    let ctx = Context {
        opts,
        manifests: &manifests,
    };
    let targets = controllers()
        .into_iter()
        .flat_map(|c| c.discover(repo, &ctx, warnings))
        .collect();
    (manifests, targets)
}

/// A repository revision this process reads: its file system and file list, owned.
pub(crate) struct Opened {
    pub(crate) fs: Box<dyn Fs>,
    pub(crate) root: PathBuf,
    pub(crate) files: Vec<PathBuf>,
    pub(crate) urls: Vec<String>,
    pub(crate) revision: Option<String>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened").field("root", &self.root).finish()
    }
}

impl Opened {
    /// The working tree holding `dir`: the git repository's (its `origin` URL names it), or
    /// `dir` itself outside git. `urls` are `--repo-url`s.
    pub(crate) fn working_tree(dir: &Path, urls: &[String], root: Option<&Path>) -> Result<Opened> {
        let discovered = match root {
            Some(_) => None,
            None => crate::fs::git::Repo::discover(dir).ok(),
        };
        let dir = root.unwrap_or(dir);
        let (root, origin) = match discovered {
            Some(repo) => (repo.workdir().to_path_buf(), repo.origin_url()),
            None => (
                std::fs::canonicalize(dir).map_err(|e| Error::io(dir, &e))?,
                None,
            ),
        };
        let files = crate::fs::files_under(&root).map_err(|e| Error::io(&root, &e))?;
        Ok(Opened {
            fs: Box::new(crate::fs::CachingDiskFs::default()),
            root,
            files,
            urls: origin.into_iter().chain(urls.iter().cloned()).collect(),
            revision: None,
        })
    }

    /// A revision of `repo` (for a review's base).
    #[expect(dead_code, reason = "the --gitops review's base side")]
    pub(crate) fn revision(
        repo: &crate::fs::git::Repo,
        rev: &crate::fs::git::Revision,
        urls: &[String],
    ) -> Result<Opened> {
        let fs = repo.files_at(rev)?;
        let files = fs.files();
        Ok(Opened {
            fs: Box::new(fs),
            root: repo.workdir().to_path_buf(),
            files,
            urls: repo
                .origin_url()
                .into_iter()
                .chain(urls.iter().cloned())
                .collect(),
            revision: Some(rev.id.clone()),
        })
    }

    pub(crate) fn repo(&self) -> Repo<'_> {
        Repo {
            fs: self.fs.as_ref(),
            root: self.root.clone(),
            files: &self.files,
            urls: &self.urls,
            revision: self.revision.clone(),
        }
    }
}

/// Whether two repository URLs name the same repository: scheme, user, a `.git` suffix, a
/// trailing slash and case do not matter, and `git@host:path` is `ssh://git@host/path`.
pub(crate) fn same_repo_url(a: &str, b: &str) -> bool {
    !a.trim().is_empty() && repo_key(a) == repo_key(b)
}

/// `host/path` of a repository URL, lowercased, without scheme, user, port, `.git` and
/// trailing slashes.
fn repo_key(url: &str) -> String {
    let mut s = url.trim();
    for scheme in ["https://", "http://", "ssh://", "git://", "git+ssh://"] {
        if let Some(rest) = s.strip_prefix(scheme) {
            s = rest;
        }
    }
    if let Some((_, rest)) = s.split_once('@') {
        s = rest;
    }
    let s = s.trim_end_matches('/');
    let s = s.strip_suffix(".git").unwrap_or(s);
    // `host:path` (scp-like) and `host:port/path` both become `host/path`.
    let (host, path) = s.split_once(['/', ':']).unwrap_or((s, ""));
    let host = host.split(':').next().unwrap_or(host);
    let path = path
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(['/', ':']);
    format!("{host}/{path}").to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_urls_match_across_forms() {
        let https = "https://github.com/fluxcd/flux2-multi-tenancy";
        assert!(same_repo_url(
            https,
            "ssh://git@github.com/fluxcd/flux2-multi-tenancy.git"
        ));
        assert!(same_repo_url(
            https,
            "git@github.com:fluxcd/flux2-multi-tenancy.git"
        ));
        assert!(same_repo_url(
            https,
            "https://GitHub.com/fluxcd/flux2-multi-tenancy/"
        ));
        assert!(same_repo_url(
            https,
            "ssh://git@github.com:22/fluxcd/flux2-multi-tenancy"
        ));
        assert!(!same_repo_url(
            https,
            "https://github.com/fluxcd/flux2-multi-tenancy-x"
        ));
        assert!(!same_repo_url(
            https,
            "https://gitlab.com/fluxcd/flux2-multi-tenancy"
        ));
        assert!(!same_repo_url("", ""));
    }

    #[test]
    fn a_source_map_needs_a_kind_a_name_and_a_directory() {
        let cwd = Path::new("/work");
        let m = SourceMap::parse("GitRepository/flux-system/podinfo=../podinfo", cwd).unwrap();
        assert_eq!(m.key, "GitRepository/flux-system/podinfo");
        assert_eq!(m.dir, PathBuf::from("/podinfo"));
        assert!(SourceMap::parse("GitRepository=dir", cwd).is_err());
        assert!(SourceMap::parse("GitRepository/a/b", cwd).is_err());
        assert!(SourceMap::parse("GitRepository/a/b=", cwd).is_err());
    }
}
