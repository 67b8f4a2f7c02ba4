//! Argo CD: the Applications of a repository, rendered as Argo CD's repo server renders them
//! (parameter files, source type, the kustomize overrides as `kustomize edit` commands, the
//! build options, the Argo variables, the tracking marks).

pub(crate) mod app;
mod appset;
pub(crate) mod controller;
mod directory;
mod edit;
pub(crate) mod find;
mod glob;
mod gotmpl;
mod helm;
mod params;
pub(crate) mod render;
mod repo;
pub(crate) mod settings;
pub(crate) mod tracking;
mod vars;

/// Whether `url` names this repository: any of `ours` (its remote, `--repo-url`), or every URL
/// when none is known.
pub(crate) fn is_this_repo(url: &str, ours: &[String]) -> bool {
    ours.is_empty() || ours.iter().any(|o| crate::gitops::same_repo_url(url, o))
}
