//! The GitOps flags and commands: `ply gitops list`, `ply render --flux-kustomization`, and
//! the options `ply diff --gitops` takes. Turns arguments into [`crate::gitops::Options`].

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::diag::{Error, ErrorKind, Warnings};
use crate::gitops::{self, Manifest, Opened, Resolution};

/// `ply gitops …`.
#[derive(Subcommand, Debug)]
pub(crate) enum GitopsCommand {
    /// Print every GitOps target of the repository (Flux Kustomizations) and how its source
    /// resolved: `flux:NS/NAME  FILE:LINE  SOURCE`.
    List(ListArgs),
    /// Render every Flux Kustomization whose source is local, in one run: for each target,
    /// `OUT/<id>.jsonl` (its objects, one compact JSON object a line) or `OUT/<id>.err` (why
    /// it does not render), and one line on stdout per target.
    Render(RenderAllArgs),
}

#[derive(Args, Debug)]
pub(crate) struct RenderAllArgs {
    /// A directory inside the repository (default: the current one).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Where the renders are written (created when missing).
    #[arg(long = "out", value_name = "OUT")]
    pub out: PathBuf,
    #[command(flatten)]
    pub gitops: GitopsFlags,
}

#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// A directory inside the repository (default: the current one).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub gitops: GitopsFlags,
    /// Render Argo CD Helm sources with `helm template` (an app-of-apps chart's Applications
    /// are then found too).
    #[arg(long)]
    pub enable_helm: bool,
    /// The helm program (`helm`, default, found on PATH).
    #[arg(long, value_name = "PATH", default_value = "helm")]
    pub helm_command: String,
}

/// How a repository's GitOps sources are found (`ply gitops list`, `ply render
/// --flux-kustomization`, `ply diff --gitops`).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct GitopsFlags {
    /// Another URL that names this repository (a source with this URL is local). The
    /// repository's `origin` remote always does.
    #[arg(long = "repo-url", value_name = "URL")]
    pub repo_urls: Vec<String>,
    /// Map a source that is not this repository to a local directory:
    /// `GitRepository/flux-system/podinfo=../podinfo`.
    #[arg(long = "source", value_name = "KIND/NS/NAME=DIR")]
    pub sources: Vec<String>,
    /// A file of ConfigMaps and Secrets that `postBuild.substituteFrom` may read (searched
    /// before the repository's own).
    #[arg(long = "vars", value_name = "FILE")]
    pub vars: Vec<PathBuf>,
    /// Fail on a `${VAR}` without a default that no source sets, as kustomize-controller does
    /// from v1.9 on; `--strict-substitute=false` leaves it empty, as older ones do.
    #[arg(long = "strict-substitute", value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub strict_substitute: bool,
    /// Leave out the owner labels kustomize-controller adds
    /// (`kustomize.toolkit.fluxcd.io/name`, `/namespace`).
    #[arg(long = "no-owner-labels")]
    pub no_owner_labels: bool,
    /// Take DIR as the repository's root (default: the top of the git repository holding the
    /// directory, or the directory itself outside git).
    #[arg(long = "repo-root", value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
}

impl GitopsFlags {
    /// The options, with `render` for the kustomize builds.
    pub(crate) fn options(
        &self,
        render: crate::render::RenderOptions,
    ) -> Result<gitops::Options, Error> {
        let cwd = std::env::current_dir().map_err(|e| Error::io(Path::new("."), &e))?;
        let sources = self
            .sources
            .iter()
            .map(|s| gitops::SourceMap::parse(s, &cwd))
            .collect::<Result<Vec<_>, _>>()?;
        let mut vars = Vec::new();
        for f in &self.vars {
            vars.extend(manifests_of(f)?);
        }
        Ok(gitops::Options {
            repo_urls: self.repo_urls.clone(),
            sources,
            render,
            flux: gitops::flux::FluxOptions {
                strict_substitute: self.strict_substitute,
                owner_labels: !self.no_owner_labels,
                vars,
            },
        })
    }
}

/// Every document with a kind in a YAML file.
fn manifests_of(path: &Path) -> Result<Vec<Manifest>, Error> {
    let file = crate::fs::read_input(path)?;
    let docs = crate::yaml::parse_documents(&file.text)
        .map_err(|e| Error::new(ErrorKind::Yaml, format!("{}: {e}", path.display())))?;
    Ok(docs
        .into_iter()
        .filter(|d| d.node.str_at(&["kind"]).is_some())
        .map(|d| Manifest {
            at: crate::source::Location::line_at(file.clone(), d.offset),
            node: d.node,
        })
        .collect())
}

/// `ply gitops list`: one line per target.
pub(crate) fn list(args: &ListArgs, warnings: &mut Warnings) -> Result<String, Error> {
    let mut render = crate::render::RenderOptions::default();
    render.helm.enabled = args.enable_helm;
    render.helm.command = args.helm_command.clone();
    let opts = args.gitops.options(render)?;
    let opened =
        Opened::working_tree(&args.dir, &opts.repo_urls, args.gitops.repo_root.as_deref())?;
    let repo = opened.repo();
    let targets = gitops::discover(&repo, &opts, warnings);
    let mut out = String::new();
    for t in &targets {
        let at = format!("{}:{}", repo.relative(&t.at.file.path), t.at.line());
        let how = match &t.source {
            Resolution::Local { how, .. } => format!("rendered: {how}"),
            Resolution::NotRendered(why) => format!("not rendered: {why}"),
        };
        out.push_str(&format!("{}  {at}  {how}\n", t.id));
    }
    if targets.is_empty() {
        out.push_str(
            "no GitOps targets found (no Flux Kustomization in any *.yaml or *.yml file)\n",
        );
    }
    Ok(out)
}

/// `ply gitops render --out OUT`: every rendered target's objects (or error) to a file of OUT,
/// each target rendered once (a Kustomization's cluster renders are shared); a summary line
/// per target on stdout. Fails when one target does not render.
pub(crate) fn render_all(args: &RenderAllArgs, warnings: &mut Warnings) -> Result<String, Error> {
    let opts = args
        .gitops
        .options(crate::render::RenderOptions::default())?;
    let opened =
        Opened::working_tree(&args.dir, &opts.repo_urls, args.gitops.repo_root.as_deref())?;
    let repo = opened.repo();
    let manifests = gitops::scan(&repo);
    let ctx = gitops::Context {
        opts: &opts,
        manifests: &manifests,
    };
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, &e))?;
    let mut summary = String::new();
    let mut failed = 0;
    for t in gitops::flux::targets(&repo, &ctx) {
        if matches!(t.source, Resolution::NotRendered(_)) {
            continue;
        }
        let name =
            t.id.trim_start_matches("flux:")
                .replace(['/', '@', '#'], "_");
        let (file, text, status) = match t.render.render(&repo, &ctx, warnings) {
            Ok(objects) => {
                let mut text = String::new();
                for o in &objects {
                    crate::yaml::json::write_json(
                        &mut text,
                        &o.node,
                        crate::yaml::json::JsonStyle::COMPACT,
                    );
                    text.push('\n');
                }
                (
                    format!("{name}.jsonl"),
                    text,
                    format!("{} objects", objects.len()),
                )
            }
            Err(e) => {
                failed += 1;
                (
                    format!("{name}.err"),
                    super::render_error(&e, false),
                    "failed".to_string(),
                )
            }
        };
        let path = args.out.join(&file);
        crate::output::write_atomic(&path, text.as_bytes())?;
        summary.push_str(&format!("{}  {status}  {}\n", t.id, path.display()));
    }
    if failed > 0 {
        super::print_stdout(summary.as_bytes())?;
        return Err(Error::new(
            ErrorKind::Transformer,
            format!(
                "{failed} Kustomizations do not render; each one's error is in its .err file in {}",
                args.out.display()
            ),
        ));
    }
    Ok(summary)
}

/// `ply render --flux-kustomization NS/NAME|FILE [DIR]`: the objects the controller applies.
pub(crate) fn render_flux(
    which: &str,
    dir: &Path,
    flags: &GitopsFlags,
    render: crate::render::RenderOptions,
    warnings: &mut Warnings,
) -> Result<Vec<crate::resource::Resource>, Error> {
    let opts = flags.options(render)?;
    let opened = Opened::working_tree(dir, &opts.repo_urls, flags.repo_root.as_deref())?;
    let repo = opened.repo();
    let manifests = gitops::scan(&repo);
    let ctx = gitops::Context {
        opts: &opts,
        manifests: &manifests,
    };
    let targets = gitops::flux::targets(&repo, &ctx);
    if let Some(t) = targets.iter().find(|t| t.id == format!("flux:{which}")) {
        return t.render.render(&repo, &ctx, warnings);
    }
    let from_file;
    let m = if Path::new(which).is_file() {
        from_file = manifests_of(Path::new(which))?;
        let found: Vec<&Manifest> = from_file
            .iter()
            .filter(|m| gitops::flux::is_kustomization(m))
            .collect();
        match found.as_slice() {
            [one] => *one,
            [] => {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!("{which} holds no Flux Kustomization (kustomize.toolkit.fluxcd.io/v1)"),
                ));
            }
            _ => {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!(
                        "{which} holds {} Flux Kustomizations; name one as NAMESPACE/NAME",
                        found.len()
                    ),
                ));
            }
        }
    } else {
        find(&manifests, which)?
    };
    let t = match chosen(&targets, m, which)? {
        Some(t) => t.clone(),
        // A file outside the repository: rendered on its own.
        None => gitops::flux::target(&repo, &ctx, m),
    };
    t.render.render(&repo, &ctx, warnings)
}

/// The target that is the Kustomization `m` (declared at its file and line), or `which` when
/// it names one (`NS/NAME@DIR`); several (one file in several clusters) are an error.
fn chosen<'a>(
    targets: &'a [gitops::Target],
    m: &Manifest,
    which: &str,
) -> Result<Option<&'a gitops::Target>, Error> {
    if let Some(t) = targets.iter().find(|t| t.id == format!("flux:{which}")) {
        return Ok(Some(t));
    }
    let path = std::fs::canonicalize(&m.at.file.path).unwrap_or_else(|_| m.at.file.path.clone());
    let found: Vec<&gitops::Target> = targets
        .iter()
        .filter(|t| {
            t.id.starts_with("flux:") && t.at.file.path == path && t.at.offset == m.at.offset
        })
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => Err(Error::new(
            ErrorKind::Usage,
            format!(
                "{which} is applied in {} clusters; name one: {}",
                many.len(),
                many.iter()
                    .map(|t| t.id.trim_start_matches("flux:"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The Kustomization `NS/NAME` (or a `NAME` only one namespace has) among the repository's.
fn find<'a>(manifests: &'a [Manifest], which: &str) -> Result<&'a Manifest, Error> {
    let (ns, name) = match which.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, which),
    };
    let found: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| gitops::flux::is_kustomization(m) && m.name() == name)
        .filter(|m| ns.is_none_or(|ns| gitops::flux::namespace_of(m) == ns))
        .collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(Error::new(
            ErrorKind::NotFound,
            format!("no Flux Kustomization {which} in this repository"),
        )
        .help("`ply gitops list` prints every one found, as flux:NAMESPACE/NAME")),
        _ => Err(Error::new(
            ErrorKind::Usage,
            format!(
                "{} Flux Kustomizations are named {which}; give NAMESPACE/NAME@DIR as `ply gitops list` shows it, or the file",
                found.len()
            ),
        )),
    }
}
