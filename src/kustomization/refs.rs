//! The one list of what a kustomization references: every field that names a file, a
//! directory, a remote or a chart, as [`Ref`]s (field, text as written, kind, position), in the
//! order a render reads them. The render, the read-ahead thread (`render/ahead.rs`) and the
//! read-set walk of `ply diff --changed-only` (`render/reads.rs`) all take the fields from
//! here: a new kustomization field that names files is added in this file and nowhere else
//! (adding a field to [`Kustomization`] without deciding here fails to compile). Borrows from
//! the kustomization; allocates nothing. Says what each reference is, not what is done with it.

use super::{GeneratorArgs, Kustomization, Patch, ReplacementField};

/// What a reference names, as the field it is written under decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefKind {
    /// `resources` (and the deprecated `bases`): a file of resources, a kustomization
    /// directory, a remote base (a git URL) or an HTTP(S) file of resources.
    Resource,
    /// `components`: a directory holding a kustomization of kind `Component`, local or remote.
    Component,
    /// `crds`: a file of CRD definitions (or an HTTP(S) URL).
    Crds,
    /// `configurations`: a file of field specs.
    Configurations,
    /// `openapi.path`: a schema file.
    OpenApi,
    /// A `patchesStrategicMerge` entry: a patch written inline when it reads as one, else the
    /// path of a patch file.
    StrategicMergePatch,
    /// `patches[].path`, `patchesJson6902[].path`: a patch file. `inline`: the entry also has
    /// a non-blank `patch:`, which is used instead (the file is not read).
    PatchFile { inline: bool },
    /// `replacements[].path`: a file of replacements.
    Replacements,
    /// A `files` entry of `configMapGenerator` / `secretGenerator`: `[key=]path` as written
    /// (`generate::kv::parse_file_source` splits it).
    GeneratorFile,
    /// An `envs` (or deprecated `env`) entry of a generator: an env file.
    EnvFile,
    /// A `generators` entry: plugin configurations inline, in a file, or built from a
    /// kustomization directory.
    Generator,
    /// A `transformers` entry, as for [`RefKind::Generator`].
    Transformer,
    /// A `validators` entry, as for [`RefKind::Generator`].
    Validator,
    /// `helmGlobals`, `helmCharts`, `helmChartInflationGenerator`: charts under a chart home
    /// and values files, which helm reads; one reference per field written (`null` reads as
    /// not written).
    /// `text` is `helmGlobals.chartHome` when it is written, else empty.
    Helm,
}

/// One reference of a kustomization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ref<'a> {
    /// The field as written: `resources`, `patches[].path`, `configMapGenerator[].files`.
    pub field: &'static str,
    /// The top-level key it is written under (`resources`, `patches`, `configMapGenerator`):
    /// where a diagnostic about it points.
    pub key: &'static str,
    /// The entry's position in the list under `key` (0 for a single value).
    pub index: usize,
    /// The text as written: a path, a URL, `[key=]path`, or inline YAML where an entry may
    /// hold it (see [`RefKind`]).
    pub text: &'a str,
    pub kind: RefKind,
}

impl RefKind {
    /// Plugin configurations and helm charts: what they read (or run) only a render knows.
    pub fn runs_plugins_or_helm(self) -> bool {
        match self {
            RefKind::Generator | RefKind::Transformer | RefKind::Validator | RefKind::Helm => true,
            RefKind::Resource
            | RefKind::Component
            | RefKind::Crds
            | RefKind::Configurations
            | RefKind::OpenApi
            | RefKind::StrategicMergePatch
            | RefKind::PatchFile { .. }
            | RefKind::Replacements
            | RefKind::GeneratorFile
            | RefKind::EnvFile => false,
        }
    }
}

impl Kustomization {
    /// Every reference of the kustomization, in the order a render reads them: `openapi`,
    /// `resources` (`bases`), `crds`, `configurations`, the generators' env files then files,
    /// helm, `generators`, `components`, `patchesStrategicMerge`, `patches`,
    /// `patchesJson6902`, `replacements`, `transformers`, `validators`. Walk it backwards with
    /// `.rev()`; it is cheap to clone and to walk again.
    pub fn refs(&self) -> impl DoubleEndedIterator<Item = Ref<'_>> + Clone + '_ {
        // Every field, so that a new one cannot be forgotten: `_` names no file.
        let Kustomization {
            api_version: _,
            kind: _,
            metadata: _,
            openapi,
            resources,
            components,
            crds,
            bases,
            namespace: _,
            name_prefix: _,
            name_suffix: _,
            common_labels: _,
            labels: _,
            common_annotations: _,
            patches_strategic_merge,
            patches_json6902,
            patches,
            images: _,
            image_tags: _,
            replicas: _,
            replacements,
            vars: _,
            sort_options: _,
            config_map_generator,
            secret_generator,
            generator_options: _,
            configurations,
            generators,
            transformers,
            validators,
            build_metadata: _,
            helm_globals,
            helm_charts,
            helm_chart_inflation_generator,
        } = self;
        let openapi = (openapi.as_ref().and_then(|o| o.get("path"))).map(|text| Ref {
            field: "openapi.path",
            key: "openapi",
            index: 0,
            text,
            kind: RefKind::OpenApi,
        });
        let helm_globals = helm_globals.as_ref().map(|n| Ref {
            field: "helmGlobals",
            key: "helmGlobals",
            index: 0,
            text: n.str_at(&["chartHome"]).unwrap_or(""),
            kind: RefKind::Helm,
        });
        let helm = |field: &'static str, node: &Option<crate::yaml::Node>| {
            node.as_ref().map(|_| Ref {
                field,
                key: field,
                index: 0,
                text: "",
                kind: RefKind::Helm,
            })
        };
        openapi
            .into_iter()
            .chain(list("resources", RefKind::Resource, resources))
            .chain(list("bases", RefKind::Resource, bases))
            .chain(list("crds", RefKind::Crds, crds))
            .chain(list(
                "configurations",
                RefKind::Configurations,
                configurations,
            ))
            .chain(generator_inputs(CONFIG_MAP_GENERATOR, config_map_generator))
            .chain(generator_inputs(SECRET_GENERATOR, secret_generator))
            .chain(helm_globals)
            .chain(helm("helmCharts", helm_charts))
            .chain(helm(
                "helmChartInflationGenerator",
                helm_chart_inflation_generator,
            ))
            .chain(list("generators", RefKind::Generator, generators))
            .chain(list("components", RefKind::Component, components))
            .chain(list(
                "patchesStrategicMerge",
                RefKind::StrategicMergePatch,
                patches_strategic_merge,
            ))
            .chain(patch_paths("patches[].path", "patches", patches))
            .chain(patch_paths(
                "patchesJson6902[].path",
                "patchesJson6902",
                patches_json6902,
            ))
            .chain(replacement_paths(replacements))
            .chain(list("transformers", RefKind::Transformer, transformers))
            .chain(list("validators", RefKind::Validator, validators))
    }
}

/// The entries of a list of paths.
fn list<'a>(
    field: &'static str,
    kind: RefKind,
    entries: &'a [String],
) -> impl DoubleEndedIterator<Item = Ref<'a>> + Clone + 'a {
    entries.iter().enumerate().map(move |(index, text)| Ref {
        field,
        key: field,
        index,
        text,
        kind,
    })
}

/// The field names of a generator's inputs: its key, then `envs`, `env`, `files`.
type GeneratorFields = [&'static str; 4];

const CONFIG_MAP_GENERATOR: GeneratorFields = [
    "configMapGenerator",
    "configMapGenerator[].envs",
    "configMapGenerator[].env",
    "configMapGenerator[].files",
];
const SECRET_GENERATOR: GeneratorFields = [
    "secretGenerator",
    "secretGenerator[].envs",
    "secretGenerator[].env",
    "secretGenerator[].files",
];

/// The files the generators read, entry by entry: env files, then `files` (kustomize's
/// order, `generate::load_pairs`).
fn generator_inputs(
    [key, envs_field, env_field, files_field]: GeneratorFields,
    entries: &[GeneratorArgs],
) -> impl DoubleEndedIterator<Item = Ref<'_>> + Clone + '_ {
    entries.iter().enumerate().flat_map(move |(index, args)| {
        let GeneratorArgs {
            namespace: _,
            name: _,
            behavior: _,
            literals: _,
            files,
            envs,
            env,
            options: _,
            secret_type: _,
        } = args;
        (envs
            .iter()
            .map(entry(envs_field, key, index, RefKind::EnvFile)))
        .chain(
            env.iter()
                .map(entry(env_field, key, index, RefKind::EnvFile)),
        )
        .chain(
            files
                .iter()
                .map(entry(files_field, key, index, RefKind::GeneratorFile)),
        )
    })
}

/// The reference of one text of the entry at `index` under `key`.
fn entry<'a>(
    field: &'static str,
    key: &'static str,
    index: usize,
    kind: RefKind,
) -> impl Fn(&'a String) -> Ref<'a> + Clone {
    move |text| Ref {
        field,
        key,
        index,
        text,
        kind,
    }
}

/// The `path:` of `patches` / `patchesJson6902` entries that have one.
fn patch_paths<'a>(
    field: &'static str,
    key: &'static str,
    entries: &'a [Patch],
) -> impl DoubleEndedIterator<Item = Ref<'a>> + Clone + 'a {
    entries
        .iter()
        .enumerate()
        .filter_map(move |(index, entry)| {
            let Patch {
                path,
                patch,
                target: _,
                options: _,
            } = entry;
            let inline = patch.as_deref().is_some_and(|p| !p.trim().is_empty());
            path.as_deref().map(|text| Ref {
                field,
                key,
                index,
                text,
                kind: RefKind::PatchFile { inline },
            })
        })
}

/// The `path:` of `replacements` entries that have one.
fn replacement_paths(
    entries: &[ReplacementField],
) -> impl DoubleEndedIterator<Item = Ref<'_>> + Clone + '_ {
    entries.iter().enumerate().filter_map(|(index, entry)| {
        let ReplacementField {
            path,
            source: _,
            source_value: _,
            targets: _,
        } = entry;
        path.as_deref().map(|text| Ref {
            field: "replacements[].path",
            key: "replacements",
            index,
            text,
            kind: RefKind::Replacements,
        })
    })
}

#[cfg(test)]
/// The fields that name files, as [`Ref::field`] writes them (the unit tests check the list
/// against the typed kustomization).
pub(crate) const FIELDS: [&str; 22] = [
    "openapi.path",
    "resources",
    "bases",
    "crds",
    "configurations",
    "configMapGenerator[].envs",
    "configMapGenerator[].env",
    "configMapGenerator[].files",
    "secretGenerator[].envs",
    "secretGenerator[].env",
    "secretGenerator[].files",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generators",
    "components",
    "patchesStrategicMerge",
    "patches[].path",
    "patchesJson6902[].path",
    "replacements[].path",
    "transformers",
    "validators",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::de::from_node_strict;

    fn decode<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
        let node = crate::yaml::parse::parse_config_one(text).map_err(|e| e.to_string())?;
        from_node_strict(&node).map_err(|e| e.to_string())
    }

    /// The fields serde knows for `T`, from the error an unknown field gives
    /// ("unknown field `…`, expected one of `a`, `b`, …").
    fn fields_of<T: serde::de::DeserializeOwned + std::fmt::Debug>() -> Vec<String> {
        let e = decode::<T>("zzzNoSuchField: 1\n").unwrap_err();
        let (_, expected) = e.split_once("expected").expect(&e);
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    /// Every field of the typed kustomization (and of the entries that hold paths) either
    /// names files, and is in [`FIELDS`], or is listed here as naming none. A field added to
    /// the types fails this test until it is placed (and [`Kustomization::refs`] fails to
    /// compile until it is destructured).
    #[test]
    fn every_field_is_either_a_reference_or_names_no_file() {
        const NO_FILE: &[&str] = &[
            "apiVersion",
            "kind",
            "metadata",
            "openapi.version",
            "namespace",
            "namePrefix",
            "nameSuffix",
            "commonLabels",
            "labels",
            "commonAnnotations",
            "images",
            "imageTags",
            "replicas",
            "vars",
            "sortOptions",
            "generatorOptions",
            "buildMetadata",
            "configMapGenerator[].namespace",
            "configMapGenerator[].name",
            "configMapGenerator[].behavior",
            "configMapGenerator[].literals",
            "configMapGenerator[].options",
            "configMapGenerator[].type",
            "secretGenerator[].namespace",
            "secretGenerator[].name",
            "secretGenerator[].behavior",
            "secretGenerator[].literals",
            "secretGenerator[].options",
            "secretGenerator[].type",
            "patches[].patch",
            "patches[].target",
            "patches[].options",
            "patchesJson6902[].patch",
            "patchesJson6902[].target",
            "patchesJson6902[].options",
            "replacements[].source",
            "replacements[].sourceValue",
            "replacements[].targets",
        ];
        // Fields whose entries hold both kinds: looked at through their entries' fields.
        const NESTED: &[&str] = &[
            "openapi",
            "configMapGenerator",
            "secretGenerator",
            "patches",
            "patchesJson6902",
            "replacements",
        ];
        let mut all: Vec<String> = fields_of::<Kustomization>();
        assert!(
            all.len() > 30 && all.contains(&"helmCharts".into()),
            "{all:?}"
        );
        all.push("openapi.path".into());
        all.push("openapi.version".into());
        for key in ["configMapGenerator", "secretGenerator"] {
            all.extend(
                fields_of::<GeneratorArgs>()
                    .iter()
                    .map(|f| format!("{key}[].{f}")),
            );
        }
        for key in ["patches", "patchesJson6902"] {
            all.extend(fields_of::<Patch>().iter().map(|f| format!("{key}[].{f}")));
        }
        all.extend(
            fields_of::<ReplacementField>()
                .iter()
                .map(|f| format!("replacements[].{f}")),
        );
        for field in &all {
            let placed = FIELDS.contains(&field.as_str())
                || NO_FILE.contains(&field.as_str())
                || NESTED.contains(&field.as_str());
            assert!(
                placed,
                "`{field}` is a new kustomization field: if it names files, add it to \
                 `Kustomization::refs` and `FIELDS` (src/kustomization/refs.rs), else to NO_FILE"
            );
        }
        for field in FIELDS {
            assert!(all.iter().any(|f| f == field), "{field} is no field");
        }
    }

    /// A kustomization with every field that names files set: each gives its references,
    /// with the text as written, in the render's order.
    #[test]
    fn every_field_that_names_files_gives_references() {
        let k: Kustomization = decode(
            "
openapi: {path: schema.json}
resources: [r.yaml, ../base]
bases: [old-base]
crds: [crd.yaml]
configurations: [conf.yaml]
configMapGenerator:
- name: a
  envs: [a.env]
  env: a-old.env
  files: [k=a.txt]
secretGenerator:
- name: s
  envs: [s.env]
  env: s-old.env
  files: [s.txt]
helmGlobals: {chartHome: charts2}
helmCharts: [{name: c}]
helmChartInflationGenerator: [{chartName: c}]
generators: [gen.yaml]
components: [../comp]
patchesStrategicMerge: [smp.yaml]
patches:
- path: p.yaml
- patch: '[]'
  path: p-and-inline.yaml
- patch: inline only
patchesJson6902:
- path: j.yaml
  target: {name: x}
replacements:
- path: repl.yaml
- source: {kind: X}
transformers: [tr.yaml]
validators: [val.yaml]
",
        )
        .unwrap();
        let refs: Vec<Ref<'_>> = k.refs().collect();
        let fields: Vec<&str> = refs.iter().map(|r| r.field).collect();
        let mut once = fields.clone();
        once.dedup();
        assert_eq!(once, FIELDS, "every field, in the render's order");
        let texts: Vec<&str> = refs.iter().map(|r| r.text).collect();
        assert_eq!(
            texts,
            [
                "schema.json",
                "r.yaml",
                "../base",
                "old-base",
                "crd.yaml",
                "conf.yaml",
                "a.env",
                "a-old.env",
                "k=a.txt",
                "s.env",
                "s-old.env",
                "s.txt",
                "charts2",
                "",
                "",
                "gen.yaml",
                "../comp",
                "smp.yaml",
                "p.yaml",
                "p-and-inline.yaml",
                "j.yaml",
                "repl.yaml",
                "tr.yaml",
                "val.yaml"
            ]
        );
        let of = |text: &str| refs.iter().find(|r| r.text == text).unwrap();
        assert_eq!(of("p.yaml").kind, RefKind::PatchFile { inline: false });
        assert_eq!(
            of("p-and-inline.yaml").kind,
            RefKind::PatchFile { inline: true }
        );
        assert_eq!(
            (of("p-and-inline.yaml").key, of("p-and-inline.yaml").index),
            ("patches", 1)
        );
        assert_eq!(of("k=a.txt").kind, RefKind::GeneratorFile);
        assert_eq!(of("s-old.env").kind, RefKind::EnvFile);
        assert_eq!(of("s-old.env").key, "secretGenerator");
        assert_eq!(of("../base").index, 1);
        // Backwards, as the reader thread walks it.
        let back: Vec<&str> = k.refs().rev().map(|r| r.text).collect();
        assert_eq!(back.first(), Some(&"val.yaml"));
        assert_eq!(back.last(), Some(&"schema.json"));
        assert_eq!(back.len(), texts.len());
    }

    #[test]
    fn an_empty_kustomization_references_nothing() {
        assert_eq!(Kustomization::default().refs().count(), 0);
        let k: Kustomization = decode("helmCharts: null\nopenapi: {version: v1.21.2}\n").unwrap();
        assert_eq!(k.refs().count(), 0);
        let k: Kustomization = decode("helmCharts: []\n").unwrap();
        let kinds: Vec<RefKind> = k.refs().map(|r| r.kind).collect();
        assert_eq!(kinds, [RefKind::Helm], "a helm field written, even empty");
    }
}
