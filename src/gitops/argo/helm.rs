//! A Helm source of this repository rendered as the repo server renders it (`helmTemplate`,
//! reposerver/repository/repository.go; `Cmd.template`, util/helm/cmd.go): `helm template` of
//! the source's chart directory with the release name, namespace, value files, inline values,
//! parameters and flags the Application gives, only when helm is given (`--enable-helm`,
//! `--helm-command`). The chart and the files it is given are read through the repository's
//! file system and written to helm's temporary directory, so a revision that is not checked out
//! renders too.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::diag::{Error, ErrorKind, Result};
use crate::resource::Resource;
use crate::source::{Location, SourceFile};
use crate::yaml::de::from_node_strict;
use crate::yaml::{EmitOptions, Node, emit_document, parse_documents};

use super::app::Application;
use super::repo::Repo;
use super::vars::Env;

/// `spec.source.helm` (`ApplicationSourceHelm`: every field it has).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Helm {
    pub value_files: Vec<String>,
    pub parameters: Vec<Parameter>,
    pub release_name: String,
    pub values: String,
    pub file_parameters: Vec<FileParameter>,
    pub version: String,
    pub pass_credentials: bool,
    pub ignore_missing_value_files: bool,
    pub skip_crds: bool,
    pub values_object: Option<Node>,
    pub namespace: String,
    pub kube_version: String,
    pub api_versions: Vec<String>,
    pub skip_tests: bool,
    pub skip_schema_validation: bool,
}

/// `HelmParameter`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Parameter {
    pub name: String,
    pub value: String,
    pub force_string: bool,
}

/// `HelmFileParameter`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FileParameter {
    pub name: String,
    pub path: String,
}

/// What the render needs besides the repository: the Application, which of its sources, the
/// source's directory (relative to the root), its `helm:` block, the variables, the helm command.
pub(crate) struct HelmSource<'a> {
    pub app: &'a Application,
    pub index: usize,
    pub rel: &'a Path,
    pub helm: Option<&'a Node>,
    pub env: &'a Env,
    pub command: &'a str,
}

/// The objects `helm template` prints for the source, each document an object (a List's items
/// split, as `GenerateManifests` splits them).
pub(crate) fn render(repo: &Repo<'_>, h: &HelmSource<'_>) -> Result<Vec<Resource>> {
    let app = h.app;
    let at = |field: &str| app.locate(h.index, &["helm", field]);
    let helm: Helm = match h.helm {
        None => Helm::default(),
        Some(node) => from_node_strict(node).map_err(|e| {
            Error::new(
                ErrorKind::InvalidResource,
                format!("Application '{}': helm: {}", app.name, e.message),
            )
            .at(app.locate(h.index, &["helm"]))
        })?,
    };
    let mut files: Vec<PathBuf> = chart_files(repo, h.rel);
    let mut values = Vec::new();
    for raw in &helm.value_files {
        match value_file(repo, h, raw)? {
            Some(rel) if repo.files.contains(&rel) => {
                files.push(rel.clone());
                values.push(rel);
            }
            Some(_) if helm.ignore_missing_value_files => {}
            Some(rel) => values.push(rel),
            None => {}
        }
    }
    let mut set_files = Vec::new();
    for p in &helm.file_parameters {
        let rel = inside_root(h.rel, &h.env.envsubst(&p.path))
            .ok_or_else(|| outside(app, &p.path).at(at("fileParameters")))?;
        files.push(rel.clone());
        set_files.push((p.name.clone(), rel));
    }
    let extra = extra_values(&helm);
    let out = crate::render::run_helm_template(h.command, |tmp| {
        let chart = tmp.join("repo");
        for rel in &files {
            let bytes = repo
                .fs
                .read(&repo.root.join(rel))
                .map_err(|e| format!("cannot read {}: {e}", rel.display()))?;
            let dest = chart.join(rel);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            std::fs::write(&dest, bytes).map_err(|e| e.to_string())?;
        }
        let extra_path = tmp.join("values.yaml");
        if let Some(text) = &extra {
            std::fs::write(&extra_path, text).map_err(|e| e.to_string())?;
        }
        let t = Template {
            helm: &helm,
            name: release_name(app, &helm),
            namespace: if helm.namespace.is_empty() {
                app.dest_namespace.clone()
            } else {
                helm.namespace.clone()
            },
            env: h.env,
        };
        Ok(t.args(
            &chart.join(h.rel),
            &values.iter().map(|v| chart.join(v)).collect::<Vec<_>>(),
            &set_files
                .iter()
                .map(|(n, p)| (n.clone(), chart.join(p)))
                .collect::<Vec<_>>(),
            extra.as_ref().map(|_| extra_path.as_path()),
        ))
    })
    .map_err(|m| {
        Error::new(
            ErrorKind::Plugin,
            format!("Application '{}': helm template failed: {m}", app.name),
        )
        .at(app.locate(h.index, &["path"]))
    })?;
    objects(app, &String::from_utf8_lossy(&out))
}

/// The release name: `helm.releaseName`, else the Application's name without its namespace
/// (`argo.ParseInstanceName`).
fn release_name(app: &Application, helm: &Helm) -> String {
    if helm.release_name.is_empty() {
        app.name.clone()
    } else {
        helm.release_name.clone()
    }
}

/// `ValuesYAML`: `valuesObject` as YAML when set, else `values` as written; `None` when empty.
fn extra_values(helm: &Helm) -> Option<String> {
    let text = match &helm.values_object {
        Some(obj) if !obj.is_null() => {
            let mut out = String::new();
            emit_document(&mut out, obj, EmitOptions { sort_keys: true });
            out
        }
        _ => helm.values.clone(),
    };
    Some(text).filter(|t| !t.is_empty())
}

/// The arguments `Cmd.template` builds.
struct Template<'a> {
    helm: &'a Helm,
    name: String,
    namespace: String,
    env: &'a Env,
}

impl Template<'_> {
    fn args(
        &self,
        chart: &Path,
        values: &[PathBuf],
        set_files: &[(String, PathBuf)],
        extra: Option<&Path>,
    ) -> Vec<String> {
        let h = self.helm;
        let mut a: Vec<String> = vec![
            "template".into(),
            chart.to_string_lossy().into_owned(),
            "--name-template".into(),
            self.name.clone(),
        ];
        let mut pair = |flag: &str, v: String| {
            a.push(flag.into());
            a.push(v);
        };
        if !self.namespace.is_empty() {
            pair("--namespace", self.namespace.clone());
        }
        if !h.kube_version.is_empty() {
            pair("--kube-version", h.kube_version.clone());
        }
        // Argo CD keeps the parameters in a Go map, so it passes them in no set order; ply
        // passes them in the order written, the later of two of the same name winning.
        for p in &h.parameters {
            let flag = if p.force_string {
                "--set-string"
            } else {
                "--set"
            };
            let value = clean_set_parameter(&self.env.envsubst(&p.value));
            pair(flag, format!("{}={value}", p.name));
        }
        for (name, path) in set_files {
            pair(
                "--set-file",
                format!("{name}={}", clean_set_parameter(&path.to_string_lossy())),
            );
        }
        for v in values {
            pair("--values", v.to_string_lossy().into_owned());
        }
        if let Some(extra) = extra {
            pair("--values", extra.to_string_lossy().into_owned());
        }
        for v in &h.api_versions {
            pair("--api-versions", v.clone());
        }
        if !h.skip_crds {
            a.push("--include-crds".into());
        }
        if h.skip_schema_validation {
            a.push("--skip-schema-validation".into());
        }
        if h.skip_tests {
            a.push("--skip-tests".into());
        }
        a
    }
}

/// `cleanSetParameters`: a comma not after a backslash is escaped, unless the value is a list
/// (`{…}`).
fn clean_set_parameter(v: &str) -> String {
    if v.starts_with('{') && v.ends_with('}') {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len());
    let mut prev = None;
    for c in v.chars() {
        if c == ',' && prev != Some('\\') {
            out.push_str("\\,");
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    out
}

/// Every file of the chart directory, relative to the root.
fn chart_files(repo: &Repo<'_>, rel: &Path) -> Vec<PathBuf> {
    repo.files
        .iter()
        .filter(|f| f.starts_with(rel))
        .cloned()
        .collect()
}

/// A value file (`getResolvedValueFiles`): the variables substituted, then relative to the
/// chart directory (or, absolute, to the root), never outside the root; `$ref/…` names a file
/// of the source with that `ref`, which must be this repository. `None` for a URL, which
/// ply never fetches: an error says so.
fn value_file(repo: &Repo<'_>, h: &HelmSource<'_>, raw: &str) -> Result<Option<PathBuf>> {
    let app = h.app;
    let at = || app.locate(h.index, &["helm", "valueFiles"]);
    if let Some(rest) = raw.strip_prefix('$') {
        let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
        let source = app
            .sources
            .iter()
            .find(|s| s.str_at(&["ref"]) == Some(name));
        if let Some(s) = source {
            let url = s.str_at(&["repoURL"]).unwrap_or("");
            if !super::is_this_repo(url, &repo.urls) {
                return Err(
                    refused(app, raw, &format!("is in {url}, another repository")).at(at()),
                );
            }
            let sub = format!("/{}", h.env.envsubst(path));
            return inside_root(Path::new(""), &sub)
                .map(Some)
                .ok_or_else(|| outside(app, raw).at(at()));
        }
    }
    let expanded = h.env.envsubst(raw);
    if expanded.contains("://") {
        return Err(refused(app, raw, "is a URL, and ply never fetches").at(at()));
    }
    inside_root(h.rel, &expanded)
        .map(Some)
        .ok_or_else(|| outside(app, raw).at(at()))
}

/// A value file ply does not read: the Application is not rendered.
fn refused(app: &Application, raw: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!(
            "Application '{}' not rendered: value file {raw} {why}",
            app.name
        ),
    )
}

fn outside(app: &Application, raw: &str) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!(
            "Application '{}': value file '{raw}' resolved to outside repository root",
            app.name
        ),
    )
}

/// `ResolveValueFilePathOrUrl`'s path part: `path` relative to `dir` (an absolute path is
/// relative to the root), cleaned; `None` outside the root.
fn inside_root(dir: &Path, path: &str) -> Option<PathBuf> {
    let joined = if Path::new(path).is_absolute() {
        PathBuf::from(path.trim_start_matches('/'))
    } else {
        dir.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir if !out.pop() => return None,
            _ => {}
        }
    }
    Some(out)
}

/// `kube.SplitYAML`: each non-empty document an object.
fn objects(app: &Application, text: &str) -> Result<Vec<Resource>> {
    let file = SourceFile::new(
        format!("<helm template of Application '{}'>", app.name),
        text.to_string(),
    );
    let docs = parse_documents(&file.text).map_err(|e| {
        Error::new(
            ErrorKind::Yaml,
            format!("the output of helm template: {}", e.message),
        )
        .at_opt(e.offset.map(|o| Location::line_at(file.clone(), o)))
    })?;
    let mut out = Vec::new();
    for d in docs.into_iter().filter(|d| !d.node.is_null()) {
        let at = Location::line_at(file.clone(), d.offset);
        super::directory::push_object(d.node, at, &mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_parameters_escape_commas_but_not_lists() {
        assert_eq!(clean_set_parameter("a,b"), "a\\,b");
        assert_eq!(clean_set_parameter("a\\,b"), "a\\,b");
        assert_eq!(clean_set_parameter("{a,b}"), "{a,b}");
    }

    #[test]
    fn value_files_stay_inside_the_root() {
        let dir = Path::new("charts/web");
        assert_eq!(
            inside_root(dir, "../values/prod.yaml"),
            Some(PathBuf::from("charts/values/prod.yaml"))
        );
        assert_eq!(
            inside_root(dir, "/env/prod.yaml"),
            Some(PathBuf::from("env/prod.yaml"))
        );
        assert_eq!(inside_root(dir, "../../../x.yaml"), None);
    }
}
