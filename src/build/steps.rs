//! The stages `build` runs per kustomization, as calls into `generate` and `transform` in
//! kustomize's order (`api/internal/target/kusttarget.go`: `runGenerators`,
//! `configureBuiltinTransformers`), and the fields ply does not support yet, refused with a
//! clear error. The adapter between the graph walk and the field semantics.

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fs::Fs;
use crate::kustomization::{Kustomization, Loaded};
use crate::resource::{Gvk, Resource};
use crate::yaml::de::PathSeg;

use super::RenderOptions;

/// Output order requested on the command line (`--reorder`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputOrder {
    /// Not given: the kustomization's `sortOptions`, else kustomize's legacy order.
    #[default]
    Unspecified,
    Legacy,
    /// The order resources were read and generated in.
    None,
}

/// Fields whose meaning later work brings (patches, replacements, plugins, schemas); a
/// kustomization that uses one fails clearly instead of rendering something else.
pub fn check_supported(loaded: &Loaded) -> Result<()> {
    let k = &loaded.kustomization;
    let used: [(&str, bool); 14] = [
        ("patches", !k.patches.is_empty()),
        (
            "patchesStrategicMerge",
            !k.patches_strategic_merge.is_empty(),
        ),
        ("patchesJson6902", !k.patches_json6902.is_empty()),
        ("replacements", !k.replacements.is_empty()),
        ("vars", !k.vars.is_empty()),
        ("configurations", !k.configurations.is_empty()),
        ("generators", !k.generators.is_empty()),
        ("transformers", !k.transformers.is_empty()),
        ("validators", !k.validators.is_empty()),
        ("openapi", k.openapi.as_ref().is_some_and(|m| !m.is_empty())),
        ("buildMetadata", !k.build_metadata.is_empty()),
        (
            "helmCharts",
            k.helm_charts.as_ref().is_some_and(|n| !n.is_null()),
        ),
        (
            "helmGlobals",
            k.helm_globals.as_ref().is_some_and(|n| !n.is_null()),
        ),
        (
            "helmChartInflationGenerator",
            k.helm_chart_inflation_generator
                .as_ref()
                .is_some_and(|n| !n.is_null()),
        ),
    ];
    for (field, set) in used {
        if set {
            let helm = field.starts_with("helm");
            let mut e = Error::new(
                if helm {
                    ErrorKind::Plugin
                } else {
                    ErrorKind::Kustomization
                },
                format!("`{field}` is not yet supported by ply"),
            )
            .at(loaded.key_location(&[PathSeg::Key(field.to_string())]))
            .label("not supported yet");
            e = if helm {
                e.help("ply never runs programs; render the chart with `helm template` and list the output under `resources`")
            } else {
                e.help("render this kustomization with `kubectl kustomize` until ply supports the field")
            };
            return Err(e);
        }
    }
    Ok(())
}

/// Whether kustomize treats the kind as cluster-scoped.
pub fn cluster_scoped(gvk: &Gvk) -> bool {
    const KINDS: [&str; 16] = [
        "Namespace",
        "Node",
        "PersistentVolume",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "StorageClass",
        "PriorityClass",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "APIService",
        "CSIDriver",
        "CSINode",
        "RuntimeClass",
        "IngressClass",
        "VolumeAttachment",
    ];
    KINDS.contains(&gvk.kind.as_str())
}

/// Runs the kustomization's generators into `acc`.
pub fn generate(
    _fs: &dyn Fs,
    _opts: &RenderOptions,
    loaded: &Loaded,
    _acc: &mut Vec<Resource>,
    _warnings: &mut Warnings,
) -> Result<()> {
    let k = &loaded.kustomization;
    for (field, set) in [
        ("configMapGenerator", !k.config_map_generator.is_empty()),
        ("secretGenerator", !k.secret_generator.is_empty()),
    ] {
        if set {
            return Err(not_yet(loaded, field));
        }
    }
    Ok(())
}

/// Runs the kustomization's built-in transformers over `acc`.
pub fn transform(loaded: &Loaded, _acc: &mut [Resource], _warnings: &mut Warnings) -> Result<()> {
    let k: &Kustomization = &loaded.kustomization;
    for (field, set) in [
        (
            "namespace",
            k.namespace.as_deref().is_some_and(|s| !s.is_empty()),
        ),
        (
            "namePrefix",
            k.name_prefix.as_deref().is_some_and(|s| !s.is_empty()),
        ),
        (
            "nameSuffix",
            k.name_suffix.as_deref().is_some_and(|s| !s.is_empty()),
        ),
        (
            "commonLabels",
            k.common_labels.as_ref().is_some_and(|m| !m.is_empty()),
        ),
        ("labels", !k.labels.is_empty()),
        (
            "commonAnnotations",
            k.common_annotations.as_ref().is_some_and(|m| !m.is_empty()),
        ),
        ("images", !k.images.is_empty()),
        ("replicas", !k.replicas.is_empty()),
    ] {
        if set {
            return Err(not_yet(loaded, field));
        }
    }
    Ok(())
}

fn not_yet(loaded: &Loaded, field: &str) -> Error {
    Error::new(
        ErrorKind::Kustomization,
        format!("`{field}` is not yet supported by ply"),
    )
    .at(loaded.key_location(&[PathSeg::Key(field.to_string())]))
}

/// The steps kustomize runs once, at the root, after the whole tree is accumulated
/// (`makeCustomizedResMap`): hash suffixes, then dropping `config.kubernetes.io/local-config`
/// objects (`IgnoreLocal`); then the output order.
pub fn finish_root(
    root: &Loaded,
    resources: &mut Vec<Resource>,
    opts: &RenderOptions,
    _warnings: &mut Warnings,
) -> Result<()> {
    resources.retain(|r| {
        r.node.str_at(&[
            "metadata",
            "annotations",
            "config.kubernetes.io/local-config",
        ]) != Some("true")
    });
    let _ = (root, opts);
    Ok(())
}
