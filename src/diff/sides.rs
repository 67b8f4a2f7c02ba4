//! The two sides of `ply diff --live`, read from disk: the desired objects (a kustomization
//! rendered as `ply render` renders it, a YAML or JSON file, or stdin) and the live snapshot,
//! both checked; the schemas of the custom kinds they and the kustomization's `crds:` describe;
//! then the prediction of [`super::diff`]. The one file of `diff` that reads files; prints
//! nothing. Takes its request from `cli`, never its arguments.

use std::path::PathBuf;

use crate::diag::{Error, Warnings};
use crate::render::RenderOptions;
use crate::resource::Resource;

use super::adapters::{self, Builtin};
use super::engine::Engines;
use super::{DiffOptions, Report, Selector};

/// What `ply diff DESIRED --live SNAPSHOT` predicts, validated.
#[derive(Clone, Debug)]
pub(crate) struct LiveRequest {
    /// A kustomization directory, a file, or `-` (stdin).
    pub desired: PathBuf,
    /// What `kubectl get -o yaml|json` printed (or `-`, when DESIRED is not).
    pub snapshot: PathBuf,
    /// `-l`: only the desired objects it matches are applied (and, with `--prune`, only the
    /// live objects it matches are pruned: that selector is in the options).
    pub selector: Option<Selector>,
    pub options: DiffOptions,
}

impl LiveRequest {
    /// Whether DESIRED is a kustomization directory, rendered before the prediction.
    pub(crate) fn renders(&self) -> bool {
        self.desired.is_dir()
    }
}

/// Reads both sides and predicts what `kubectl apply` of the desired objects would change.
pub(crate) fn predict(
    req: &LiveRequest,
    render: &RenderOptions,
    warnings: &mut Warnings,
) -> Result<Report, Error> {
    let (mut desired, crd_definitions) = desired(req, render, warnings)?;
    let live = crate::live::read_objects(&crate::fs::read_input(&req.snapshot)?)?;
    crate::live::check_snapshot(&live)?;
    let builtin = schemas(&crd_definitions, &live, &desired)?;
    if let Some(s) = &req.selector {
        desired.retain(|r| s.matches(&r.node));
    }
    let engines = Engines {
        kinds: &builtin,
        csa: &builtin,
        ssa: &builtin,
    };
    super::diff(desired, live, &req.options, engines, warnings)
}

/// The desired objects, and the kustomization's `crds:` files (which describe custom kinds
/// for the schema); a file or stdin has none.
fn desired(
    req: &LiveRequest,
    render: &RenderOptions,
    warnings: &mut Warnings,
) -> Result<(Vec<Resource>, Vec<crate::yaml::Node>), Error> {
    if !req.renders() {
        let file = crate::fs::read_input(&req.desired)?;
        return Ok((crate::live::read_objects(&file)?, Vec::new()));
    }
    let rendered = crate::render::render_with(&crate::fs::DiskFs, &req.desired, render, warnings)?;
    crate::live::check_names_are_strings(&rendered.resources)?;
    Ok((rendered.resources, rendered.crds))
}

/// The built-in schema with the custom kinds: the `crds:` definitions, then the
/// CustomResourceDefinitions installed (live) and those being applied (desired, before the
/// selector filters them), later ones winning.
fn schemas(
    crd_definitions: &[crate::yaml::Node],
    live: &[Resource],
    desired: &[Resource],
) -> Result<Builtin, Error> {
    let mut builtin = Builtin::new();
    let crd_objects = live
        .iter()
        .chain(desired)
        .map(|r| &r.node)
        .filter(|n| adapters::is_crd(n));
    for doc in crd_definitions.iter().chain(crd_objects) {
        builtin.add_custom_schema(doc)?;
    }
    Ok(builtin)
}
