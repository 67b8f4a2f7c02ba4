//! The render context: what every stage of one render reads and no stage changes — the
//! options of the kustomization being built, the kustomize version being matched, kustomize's
//! built-in field-spec tables (with the schema questions they answer) and the limits on
//! hostile input. One value, passed down, instead of each stage taking its own subset of the
//! options; a setting every stage needs (the version, field provenance) is added here once.

use crate::limits::Limits;
use crate::resource::Gvk;
use crate::transform::FieldSpecTables;

use super::options::{KustomizeVersion, RenderOptions};

/// What the stages of one render share. Cheap to copy: references only.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The options of the kustomization being built: the render's, or inside a remote base
    /// the same with the load restrictor at root-only (kustomize's `newLoaderAtGitClone`).
    pub opts: &'a RenderOptions,
    /// kustomize's built-in field-spec tables, built once per render.
    pub tables: &'a FieldSpecTables,
}

impl<'a> Context<'a> {
    pub fn new(opts: &'a RenderOptions, tables: &'a FieldSpecTables) -> Self {
        Context { opts, tables }
    }

    /// The kustomize release whose output this render matches.
    pub fn kustomize(&self) -> KustomizeVersion {
        self.opts.kustomize
    }

    /// The limits on hostile input.
    pub fn limits(&self) -> &'a Limits {
        &self.opts.limits
    }

    /// `--strict`.
    pub fn strict(&self) -> bool {
        self.opts.strict
    }

    /// Whether field provenance is recorded (`RenderOptions::provenance`).
    pub fn provenance(&self) -> bool {
        self.opts.provenance
    }

    /// Whether objects of this kind have no namespace (kustomize's built-in table).
    pub fn is_cluster_scoped(&self, gvk: &Gvk) -> bool {
        self.tables.is_cluster_scoped(gvk)
    }
}
