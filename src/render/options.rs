//! The options of one render, validated: what the command line (or a library caller) asks
//! for, before any file is read. The render turns them into a [`super::Context`], which
//! every stage takes.

use std::path::PathBuf;
use std::sync::Arc;

use crate::fs::Restrictor;
pub use crate::kustomization::KustomizeVersion;

use super::exec::PluginOptions;
use super::helm::HelmOptions;
use super::shared::Shared;
use super::steps::OutputOrder;

/// Validated options of one render.
#[derive(Clone, Debug, Default)]
pub struct RenderOptions {
    /// The kustomize release to match (`--kustomize-version`).
    pub kustomize: KustomizeVersion,
    pub load_restrictor: Restrictor,
    /// `--reorder`; the root kustomization's `sortOptions` win over it (as in kustomize).
    pub reorder: OutputOrder,
    /// `--strict` (or `PLY_STRICT=1`): a patch that matches nothing is an error, and so is a
    /// value ply prints where kustomize fails or prints otherwise (`yaml::deliberate`).
    pub strict: bool,
    /// Which thread reads and parses the files.
    pub reading: Reading,
    /// Where fetched remote trees are cached (`--cache-dir`); `None` for the default
    /// (`fs::remote::default_cache_dir`).
    pub cache_dir: Option<PathBuf>,
    /// `--managed-by-value`: the value of `app.kubernetes.io/managed-by` that
    /// `buildMetadata: [managedByLabel]` writes; `None` writes what `kubectl kustomize` writes
    /// ([`super::metadata::default_managed_by`]: `kustomize-(devel)` for v5.5.0,
    /// `kustomize-v5.8.1` for v5.8.1).
    pub managed_by_value: Option<String>,
    /// The helm flags (`--enable-helm`, `--helm-command`, …).
    pub helm: HelmOptions,
    /// `--enable-managedby-label` (or `KUSTOMIZE_ENABLE_MANAGEDBY_LABEL=on`): the managed-by
    /// label on every resource, as the root's `buildMetadata: [managedByLabel]` asks
    /// (`api/krusty/kustomizer.go`, `Run`).
    pub managed_by_label: bool,
    /// The plugin flags (`--enable-alpha-plugins`, `--enable-exec`, `-e`).
    pub plugins: PluginOptions,
    /// The limits on hostile input (`--max-alias-expansion`, `--max-document-size`,
    /// `--max-json-patch-growth`, `--max-output-size`).
    pub limits: crate::limits::Limits,
    /// Resource files parsed once for every render given the same store (a review's two
    /// revisions, the overlays of one run); `None` parses per render.
    pub shared: Option<Arc<Shared>>,
    /// Record where each output field's value was set (issue 29, `render::provenance`):
    /// `ply explain`, `ply render --provenance=comments`, the review's causes. Off, the
    /// render records nothing and costs what it did before.
    pub provenance: bool,
}

impl RenderOptions {
    /// The options inside a remote base: kustomize never lets a cloned kustomization leave
    /// its root (`newLoaderAtGitClone`, `api/internal/loader/fileloader.go`).
    pub(super) fn in_remote_base(&self) -> RenderOptions {
        RenderOptions {
            load_restrictor: Restrictor::RootOnly,
            ..self.clone()
        }
    }

    /// The same options, with every file read by the building thread (`ply fetch`, whose
    /// fetcher is asked in the build's order).
    pub fn on_one_thread(&self) -> RenderOptions {
        RenderOptions {
            reading: Reading::OneThread,
            ..self.clone()
        }
    }
}

/// Which thread of a render reads and parses its files. The output, errors and warnings are
/// the same every way (the golden tests render every case all three ways).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reading {
    /// A second thread reads and parses files ahead of the build ([`ahead`]); the build does
    /// those it gets to first.
    #[default]
    Ahead,
    /// The building thread reads everything (`--single-thread`).
    OneThread,
    /// The second thread reads everything it can before the build goes on past the root
    /// kustomization, so that the build takes every file from it (for tests).
    AheadFirst,
}
