//! The typed kustomization: every field kustomize v5.5 knows (`api/types/kustomization.go`
//! and the types it names), decoded with serde from a [`Node`]. Unknown fields are errors, as
//! in kustomize. Holds data only; meaning lives in `render`, `generate` and `transform`; the
//! fields that name files are listed once, in `refs.rs`.

use indexmap::IndexMap;
use serde::Deserialize;

use crate::yaml::Node;

/// String-to-string maps keep their document order.
pub(crate) type StringMap = IndexMap<String, String>;

/// A `kustomization.yaml` (kind `Kustomization`) or a component (kind `Component`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Kustomization {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub metadata: Option<ObjectMeta>,
    /// `openapi: {path: FILE}` or `openapi: {version: …}`.
    pub openapi: Option<StringMap>,

    pub resources: Vec<String>,
    pub components: Vec<String>,
    pub crds: Vec<String>,
    /// Deprecated: `resources`.
    pub bases: Vec<String>,

    pub namespace: Option<String>,
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    /// Deprecated: `labels`.
    pub common_labels: Option<StringMap>,
    pub labels: Vec<Label>,
    pub common_annotations: Option<StringMap>,

    /// Deprecated: `patches`. Each entry is a file path or an inline patch.
    pub patches_strategic_merge: Vec<String>,
    /// Deprecated: `patches`.
    pub patches_json6902: Vec<Patch>,
    pub patches: Vec<Patch>,

    pub images: Vec<Image>,
    /// Deprecated: `images`.
    pub image_tags: Vec<Image>,
    pub replicas: Vec<Replica>,
    pub replacements: Vec<ReplacementField>,
    /// Deprecated: `replacements`.
    pub vars: Vec<Var>,
    pub sort_options: Option<SortOptions>,

    pub config_map_generator: Vec<GeneratorArgs>,
    pub secret_generator: Vec<GeneratorArgs>,
    pub generator_options: Option<GeneratorOptions>,

    pub configurations: Vec<String>,
    pub generators: Vec<String>,
    pub transformers: Vec<String>,
    pub validators: Vec<String>,
    pub build_metadata: Vec<String>,

    /// Helm is not supported by ply; kept to give a clear error.
    pub helm_globals: Option<Node>,
    pub helm_charts: Option<Node>,
    pub helm_chart_inflation_generator: Option<Node>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectMeta {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub labels: Option<StringMap>,
    pub annotations: Option<StringMap>,
}

/// An entry of `labels:`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Label {
    pub pairs: StringMap,
    pub include_selectors: bool,
    pub include_templates: bool,
    pub fields: Vec<FieldSpec>,
}

/// Where a transformer applies: a path in objects of a kind (`configurations:` and the
/// built-in tables use the same shape).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldSpec {
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
    pub path: String,
    pub create: bool,
}

/// An entry of `patches:` / `patchesJson6902:`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Patch {
    pub path: Option<String>,
    pub patch: Option<String>,
    pub target: Option<Selector>,
    pub options: Option<IndexMap<String, bool>>,
}

/// A resource selector (`target:` of a patch, `select:` of a replacement).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Selector {
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub label_selector: Option<String>,
    pub annotation_selector: Option<String>,
}

/// An entry of `images:`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Image {
    pub name: String,
    pub new_name: Option<String>,
    /// An integer in YAML (`newTag: 7`) reads as its text; a float (`newTag: 1.20`) is an error
    /// asking for quotes, since YAML reads it as 1.2 (kustomize refuses both).
    pub new_tag: Option<String>,
    pub tag_suffix: Option<String>,
    pub digest: Option<String>,
}

/// An entry of `replicas:`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Replica {
    pub name: String,
    pub count: i64,
}

/// An entry of `configMapGenerator:` or `secretGenerator:`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct GeneratorArgs {
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// `create` (default), `merge` or `replace`.
    pub behavior: Option<String>,
    pub literals: Vec<String>,
    pub files: Vec<String>,
    pub envs: Vec<String>,
    /// Deprecated: `envs`.
    pub env: Option<String>,
    pub options: Option<GeneratorOptions>,
    /// Secrets only: the Secret `type` (default `Opaque`).
    #[serde(rename = "type")]
    pub secret_type: Option<String>,
}

/// `generatorOptions:` and a generator's `options:`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct GeneratorOptions {
    pub labels: Option<StringMap>,
    pub annotations: Option<StringMap>,
    pub disable_name_suffix_hash: Option<bool>,
    pub immutable: Option<bool>,
}

/// `sortOptions:`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SortOptions {
    /// `legacy` or `fifo`.
    pub order: Option<String>,
    pub legacy_sort_options: Option<LegacySortOptions>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct LegacySortOptions {
    pub order_first: Vec<String>,
    pub order_last: Vec<String>,
}

/// An entry of `vars:` (deprecated).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Var {
    pub name: String,
    pub objref: VarTarget,
    pub fieldref: Option<FieldRef>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct VarTarget {
    pub api_version: Option<String>,
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldRef {
    pub field_path: String,
}

/// An entry of `replacements:`: inline, or `path:` to a file of replacements.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplacementField {
    pub path: Option<String>,
    pub source: Option<ReplacementSource>,
    pub targets: Vec<ReplacementTarget>,
    /// A literal value instead of a source object (kustomize v5.7 and later, PR #5630;
    /// refused by `transform::replacements` when rendering as v5.5.0).
    pub source_value: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplacementSource {
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub field_path: Option<String>,
    pub options: Option<FieldOptions>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplacementTarget {
    pub select: Option<Selector>,
    pub reject: Vec<Selector>,
    pub field_paths: Vec<String>,
    pub options: Option<FieldOptions>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldOptions {
    pub delimiter: Option<String>,
    pub index: i64,
    pub encoding: Option<String>,
    pub create: bool,
}
