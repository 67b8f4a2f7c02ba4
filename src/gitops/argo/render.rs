//! One Application rendered as the repo server renders it (`GenerateManifests`,
//! reposerver/repository/repository.go): per source, the parameter files merged, the type
//! decided, the kustomize overrides run as edits of the kustomization (served to the render
//! through [`Overlay`]), the build with the build options, then the tracking marks.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fs::{FileKind, Fs};
use crate::render::{KustomizeVersion, RenderOptions};
use crate::resource::Resource;
use crate::source::SourceFile;
use crate::transform::FieldSpecTables;
use crate::yaml::{EmitOptions, Map, Node, emit_document, parse_documents};

use super::app::{Application, Source, SourceType};
use super::edit::{self, Paths};
use super::settings::{BuildOptions, apply_build_options};
use super::tracking::{self, Tracking};
use super::vars::{Env, EnvInput};
use super::{directory, params};

/// The kustomization file names, in the order kustomize looks for them.
use crate::kustomization::load::FILE_NAMES as KUSTOMIZATION_FILES;

/// Why a Helm source is not rendered without helm.
pub(crate) const HELM_NEEDED: &str =
    "a Helm source: give --enable-helm (and --helm-command) to render it with helm template";

pub(crate) use super::repo::Repo;

/// How to render: the settings the repo server takes from Argo CD's configuration and the
/// request.
#[derive(Clone, Debug, Default)]
pub(crate) struct Settings {
    /// The render's own options (limits, cache, helm command, …); the build options go over them.
    pub base: RenderOptions,
    pub build_options: BuildOptions,
    pub tracking: Tracking,
    /// The commit under review (`ARGOCD_APP_REVISION`).
    pub revision: String,
    /// Argo CD's own namespace (Applications elsewhere are named `<ns>_<name>`).
    pub control_plane: String,
}

/// What an Application rendered to.
pub(crate) struct Rendered {
    pub resources: Vec<Resource>,
    pub tables: FieldSpecTables,
}

/// Renders every source of `app` from this repository and concatenates them.
pub(crate) fn render(
    repo: &Repo<'_>,
    app: &Application,
    s: &Settings,
    warnings: &mut Warnings,
) -> Result<Rendered> {
    let mut resources = Vec::new();
    for (i, node) in app.sources.iter().enumerate() {
        resources.extend(render_source(repo, app, i, node, s, warnings)?);
    }
    let instance = app.instance_name(&s.control_plane);
    tracking::apply(&mut resources, s.tracking, &instance, &app.dest_namespace);
    Ok(Rendered {
        resources,
        tables: FieldSpecTables::builtin_for(KustomizeVersion::V5_8_1)?,
    })
}

fn not_rendered(app: &Application, i: usize, field: &str, why: String) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!("Application '{}' not rendered: {why}", app.name),
    )
    .at(app.locate(i, &[field]))
}

fn render_source(
    repo: &Repo<'_>,
    app: &Application,
    i: usize,
    node: &Node,
    s: &Settings,
    warnings: &mut Warnings,
) -> Result<Vec<Resource>> {
    let raw = app.decode_source(i, node)?;
    // "Skipping manifest generation for ref only source".
    if !raw.ref_name.is_empty() && raw.path.is_empty() && raw.chart.is_empty() {
        return Ok(Vec::new());
    }
    if !super::is_this_repo(&raw.repo_url, &repo.urls) {
        return Err(not_rendered(
            app,
            i,
            "repoURL",
            format!(
                "its source is {}, not this repository ({})",
                raw.repo_url,
                repo.urls.join(", ")
            ),
        ));
    }
    if !raw.chart.is_empty() {
        return Err(not_rendered(
            app,
            i,
            "chart",
            format!("a Helm chart source ({})", raw.chart),
        ));
    }
    let rel = app_path(app, i, &raw.path)?;
    let abs = repo.root.join(&rel);
    if repo.fs.kind(&abs) != Some(FileKind::Dir) {
        return Err(Error::new(
            ErrorKind::NotFound,
            format!(
                "Application '{}': app path does not exist: '{}'",
                app.name, raw.path
            ),
        )
        .at(app.locate(i, &["path"])));
    }
    let instance = app.instance_name(&s.control_plane);
    let merged = params::merge(repo.fs, &abs, &instance, node)?;
    let source = app.decode_source(i, &merged)?;
    let kind = source_type(repo, app, i, &source, &rel)?;
    let env = Env::new(&EnvInput {
        app_name: &instance,
        namespace: &app.dest_namespace,
        project: &app.project,
        revision: &s.revision,
        repo_url: &source.repo_url,
        path: &source.path,
        target_revision: &source.target_revision,
    });
    match kind {
        SourceType::Kustomize => render_kustomize(repo, app, i, &source, &abs, &env, s, warnings),
        SourceType::Directory => {
            let dir = source.directory.clone().unwrap_or_default();
            directory::render(repo.fs, &repo.root, &repo.files, &rel, &dir)
        }
        SourceType::Helm if s.base.helm.enabled => super::helm::render(
            repo,
            &super::helm::HelmSource {
                app,
                index: i,
                rel: &rel,
                helm: source.helm.as_ref(),
                env: &env,
                command: &s.base.helm.command,
            },
        ),
        SourceType::Helm => Err(not_rendered(app, i, "path", HELM_NEEDED.into())),
        SourceType::Plugin => Err(not_rendered(
            app,
            i,
            "plugin",
            "a Config Management Plugin source".into(),
        )),
    }
}

/// `argopath.Path`: the source path inside the repository, relative to its root.
fn app_path(app: &Application, i: usize, path: &str) -> Result<PathBuf> {
    let bad = |why: &str| {
        Error::new(
            ErrorKind::Usage,
            format!("Application '{}': {path}: app path {why}", app.name),
        )
        .at(app.locate(i, &["path"]))
    };
    if Path::new(path).is_absolute() {
        return Err(bad("is absolute"));
    }
    let mut out = PathBuf::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir if !out.pop() => return Err(bad("is outside root")),
            _ => {}
        }
    }
    Ok(out)
}

/// The type: the one the source names, else Kustomize when a kustomization file is in the
/// directory itself, Helm when a `*Chart.yaml` is (the later name wins, as `Discover` walks),
/// else Directory.
fn source_type(
    repo: &Repo<'_>,
    app: &Application,
    i: usize,
    source: &Source,
    rel: &Path,
) -> Result<SourceType> {
    if let Some(t) = source
        .explicit_type()
        .map_err(|m| not_rendered(app, i, "path", m))?
    {
        return Ok(t);
    }
    let mut found = SourceType::Directory;
    for f in &repo.files {
        if f.parent() != Some(rel) {
            continue;
        }
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with("Chart.yaml") {
            found = SourceType::Helm;
        }
        if KUSTOMIZATION_FILES.contains(&name) {
            found = SourceType::Kustomize;
        }
    }
    Ok(found)
}

/// The directory's kustomization file names.
fn kustomization_files(fs: &dyn Fs, dir: &Path) -> Vec<&'static str> {
    KUSTOMIZATION_FILES
        .into_iter()
        .filter(|f| fs.kind(&dir.join(f)) == Some(FileKind::File))
        .collect()
}

struct RepoPaths<'a> {
    fs: &'a dyn Fs,
    root: &'a Path,
    dir: &'a Path,
}

impl Paths for RepoPaths<'_> {
    fn in_repo(&self, rel: &str) -> bool {
        let joined = normalize(&self.dir.join(rel));
        joined.starts_with(self.root) && self.fs.kind(&joined).is_some()
    }

    fn exists(&self, rel: &str) -> bool {
        self.fs.kind(&normalize(&self.dir.join(rel))).is_some()
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn render_kustomize(
    repo: &Repo<'_>,
    app: &Application,
    i: usize,
    source: &Source,
    dir: &Path,
    env: &Env,
    s: &Settings,
    warnings: &mut Warnings,
) -> Result<Vec<Resource>> {
    let k = source.kustomize.clone().unwrap_or_default();
    let mut opts =
        apply_build_options(&s.base, &s.build_options, &k.kube_version, &k.api_versions)?;
    opts.kustomize = KustomizeVersion::V5_8_1;
    if !k.version.is_empty() {
        opts.kustomize = KustomizeVersion::parse(&k.version).map_err(|m| {
            not_rendered(
                app,
                i,
                "kustomize",
                format!("kustomize.version '{}': {m}", k.version),
            )
        })?;
    }
    opts.shared = None;
    let paths = RepoPaths {
        fs: repo.fs,
        root: &repo.root,
        dir,
    };
    let overlay = match edit::first_edit(&k, &paths) {
        None => None,
        Some(field) => {
            let files = kustomization_files(repo.fs, dir);
            let name = match files.as_slice() {
                [one] => *one,
                [] => {
                    return Err(Error::new(ErrorKind::NotFound, edit::missing_file_message(field))
                        .at(app.locate(i, &["kustomize", field]))
                        .help("the kustomize overrides edit the kustomization file in the source path; add one there, or remove the overrides"));
                }
                many => {
                    return Err(Error::new(
                        ErrorKind::Kustomization,
                        format!("Found multiple kustomization file: [{}]", many.join(" ")),
                    )
                    .at(app.locate(i, &["kustomize", field])));
                }
            };
            Some(edited(repo.fs, dir, name, &k, env, &paths, app, i)?)
        }
    };
    let fs: &dyn Fs = match &overlay {
        Some(o) => o,
        None => repo.fs,
    };
    let rendered = crate::render::render_with(fs, dir, &opts, warnings)?;
    Ok(rendered.resources)
}

/// The kustomization after every edit, as the overlay that serves it.
#[allow(clippy::too_many_arguments)]
fn edited<'a>(
    fs: &'a dyn Fs,
    dir: &Path,
    name: &str,
    k: &super::app::Kustomize,
    env: &Env,
    paths: &RepoPaths<'_>,
    app: &Application,
    i: usize,
) -> Result<Overlay<'a>> {
    let path = dir.join(name);
    let text = fs.read_to_string(&path).map_err(|e| Error::io(&path, &e))?;
    let file = SourceFile::new(&path, text.clone());
    let docs = parse_documents(&text).map_err(|e| {
        Error::new(
            ErrorKind::Yaml,
            format!("invalid Kustomization: {}", e.message),
        )
        .at_opt(
            e.offset
                .map(|o| crate::source::Location::line_at(file.clone(), o)),
        )
    })?;
    let mut doc = match docs.into_iter().next().map(|d| d.node) {
        Some(Node::Map(m)) => m,
        Some(Node::Null) | None => Map::new(),
        Some(other) => {
            return Err(Error::new(
                ErrorKind::Kustomization,
                format!(
                    "invalid Kustomization: a {} is not a map",
                    other.kind_name()
                ),
            ));
        }
    };
    edit::apply(&mut doc, k, env, paths, name).map_err(|e| {
        Error::new(ErrorKind::Kustomization, e.message)
            .at(app.locate(i, &["kustomize", e.field]))
            .label(format!(
                "kustomize.{} of Application '{}'",
                e.field, app.name
            ))
    })?;
    let mut out = String::new();
    emit_document(&mut out, &Node::Map(doc), EmitOptions { sort_keys: false });
    let canonical = fs.canonicalize(&path).unwrap_or(path.clone());
    Ok(Overlay {
        inner: fs,
        path,
        canonical,
        bytes: out.into_bytes(),
    })
}

/// A file system that serves one file (the edited kustomization) from memory and everything
/// else from `inner`.
pub(crate) struct Overlay<'a> {
    inner: &'a dyn Fs,
    path: PathBuf,
    canonical: PathBuf,
    bytes: Vec<u8>,
}

impl Overlay<'_> {
    fn is_it(&self, p: &Path) -> bool {
        p == self.path || p == self.canonical
    }
}

impl Fs for Overlay<'_> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if self.is_it(path) {
            return Ok(self.bytes.clone());
        }
        self.inner.read(path)
    }
    fn kind(&self, path: &Path) -> Option<FileKind> {
        self.inner.kind(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }
    fn names_in(&self, dir: &Path) -> Vec<String> {
        self.inner.names_in(dir)
    }
    fn remote_file(&self, url: &str) -> Result<Vec<u8>> {
        self.inner.remote_file(url)
    }
    fn holds(&self, path: &Path, bytes: &[u8]) -> Option<bool> {
        if self.is_it(path) {
            return Some(self.bytes == bytes);
        }
        self.inner.holds(path, bytes)
    }
}
