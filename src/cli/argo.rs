//! `ply render --argo-application NAME|FILE`: its flags → the Argo CD render's settings, the
//! repository read from the disk, the output written as `ply render` writes it.

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::diag::{Error, ErrorKind, Warnings};
use crate::gitops::argo::app::Application;
use crate::gitops::argo::find;
use crate::gitops::argo::render::{Repo, Settings, render};
use crate::gitops::argo::settings::{BuildOptions, find_build_options};
use crate::gitops::argo::tracking::Tracking;
use crate::render::RenderOptions;

/// The Argo CD flags of `ply render`.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct ArgoFlags {
    /// Render an Argo CD Application as Argo CD's repo server renders it (its parameter files,
    /// kustomize overrides, build options and variables): by name (searched in DIR's YAML
    /// files) or the file that holds it. DIR is the repository's root.
    #[arg(long, value_name = "NAME|FILE")]
    pub argo_application: Option<String>,
    /// Show Argo CD's resource tracking marks (off by default: they are the same on every
    /// object): the `argocd.argoproj.io/tracking-id` annotation, the `app.kubernetes.io/instance`
    /// label, or both.
    #[arg(long, value_enum, value_name = "METHOD", requires = "argo_application")]
    pub argo_tracking: Option<TrackingArg>,
    /// Argo CD's kustomize build options (argocd-cm `kustomize.buildOptions`, e.g.
    /// `--load-restrictor LoadRestrictionsNone --enable-helm`); default: those of an argocd-cm
    /// ConfigMap found in the repository, else none.
    #[arg(
        long,
        value_name = "OPTIONS",
        requires = "argo_application",
        allow_hyphen_values = true
    )]
    pub build_options: Option<String>,
    /// The commit the Argo variables name (`ARGOCD_APP_REVISION`); default: DIR's git HEAD.
    #[arg(long, value_name = "SHA", requires = "argo_application")]
    pub argo_revision: Option<String>,
    /// This repository's URL, which an Application's source must name to be rendered; default:
    /// the git remote `origin` of DIR (no check when there is none).
    #[arg(long, value_name = "URL", requires = "argo_application")]
    pub argo_repo_url: Option<String>,
    /// Argo CD's own namespace: an Application in another one is named `<namespace>_<name>`
    /// in its variables and tracking marks.
    #[arg(
        long,
        value_name = "NS",
        default_value = "argocd",
        requires = "argo_application"
    )]
    pub argo_namespace: String,
}

/// `--argo-tracking`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TrackingArg {
    Annotation,
    Label,
    #[value(name = "annotation+label")]
    AnnotationAndLabel,
}

/// The Application `spec` names, rendered from the repository at `dir`.
pub(crate) fn render_application(
    spec: &str,
    dir: &Path,
    flags: &ArgoFlags,
    other_urls: &[String],
    base: RenderOptions,
    warnings: &mut Warnings,
) -> Result<crate::gitops::argo::render::Rendered, Error> {
    let fs = crate::fs::CachingDiskFs::default();
    let root = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, &e))?;
    let files = find::disk_files(&root)?;
    let git = crate::fs::git::Repo::discover(&root).ok();
    let revision = match (&flags.argo_revision, &git) {
        (Some(r), _) => r.clone(),
        (None, Some(g)) => g.resolve("HEAD").map(|r| r.id).unwrap_or_default(),
        (None, None) => String::new(),
    };
    // `--argo-repo-url` names the repository alone; else `--repo-url` (as for `ply gitops
    // list` and `ply diff --gitops`) adds to the `origin` remote.
    let urls: Vec<String> = match &flags.argo_repo_url {
        Some(u) => vec![u.clone()],
        None => other_urls
            .iter()
            .cloned()
            .chain(git.as_ref().and_then(|g| g.origin_url()))
            .collect(),
    };
    let build_options = match &flags.build_options {
        Some(text) => BuildOptions {
            text: text.clone(),
            from: None,
        },
        None => find_build_options(&fs, &root, &files)?,
    };
    let settings = Settings {
        base,
        build_options,
        tracking: match flags.argo_tracking {
            None => Tracking::Off,
            Some(TrackingArg::Annotation) => Tracking::Annotation,
            Some(TrackingArg::Label) => Tracking::Label,
            Some(TrackingArg::AnnotationAndLabel) => Tracking::AnnotationAndLabel,
        },
        revision,
        control_plane: flags.argo_namespace.clone(),
    };
    let repo = Repo {
        fs: &fs,
        root,
        files,
        urls,
    };
    let app = application(spec, &repo, &settings)?;
    render(&repo, &app, &settings, warnings)
}

/// The Application in the file `spec` (relative to the working directory or the repository),
/// or the one named `spec` among those the repository declares, generates (ApplicationSets)
/// or renders (app of apps).
fn application(spec: &str, repo: &Repo<'_>, settings: &Settings) -> Result<Application, Error> {
    let as_file = [PathBuf::from(spec), repo.root.join(spec)]
        .into_iter()
        .find(|p| p.is_file());
    if let Some(path) = as_file {
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, &e))?;
        let mut apps = Application::read_all(&path, &text)?;
        return match apps.len() {
            1 => Ok(apps.remove(0)),
            0 => Err(Error::new(
                ErrorKind::NotFound,
                format!("'{spec}' holds no Argo CD Application"),
            )),
            n => Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "'{spec}' holds {n} Applications ({}): name one with --argo-application NAME",
                    apps.iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        };
    }
    let (found, skipped) = find::discover(repo, settings, &mut Warnings::default());
    if let Some(s) = skipped
        .iter()
        .find(|s| s.what == format!("Application {spec}"))
    {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "Application '{spec}' ({}) is not rendered: {}",
                s.at, s.reason
            ),
        ));
    }
    find::by_name(found.into_iter().map(|f| f.app).collect(), spec).map_err(|e| {
        let sets: Vec<String> = skipped
            .iter()
            .filter(|s| s.what.starts_with("ApplicationSet"))
            .map(|s| format!("{} ({}): {}", s.what, s.at, s.reason))
            .collect();
        match sets.is_empty() {
            true => e,
            false => e.help(format!("not rendered: {}", sets.join("; "))),
        }
    })
}
