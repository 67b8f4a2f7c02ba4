//! `buildMetadata` of the root kustomization, as kustomize records it
//! (`api/internal/target/kusttarget.go`, `api/resource/origin.go`): `originAnnotations`
//! (`config.kubernetes.io/origin`: the file a resource came from, or the generator that made
//! it, with paths relative to the root), `transformerAnnotations`
//! (`alpha.config.kubernetes.io/transformations`: every transformer that ran over a resource),
//! and `managedByLabel` (`app.kubernetes.io/managed-by`; ply writes what `kubectl kustomize`
//! writes, or the value given with `--managed-by-value`).
//! Inside a remote base, origins name its repository and ref (`repo:`, `ref:`).
//! The annotations live in the objects during the build, as in kustomize, and are removed at
//! the end unless asked for.

use std::collections::HashMap;

use crate::kustomization::Loaded;
use crate::resource::{ResId, Resource};
use crate::yaml::Node;

use super::KustomizeVersion;

pub(super) const ORIGIN: &str = "config.kubernetes.io/origin";
pub(super) const TRANSFORMATIONS: &str = "alpha.config.kubernetes.io/transformations";
pub(super) const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub(super) use crate::transform::namespace::HELM_GENERATED;
/// What `kubectl kustomize` of kustomize v5.5.0 writes under [`MANAGED_BY`]: `kustomize-` and
/// the version of the kustomize module it was built with, which a kubectl build does not stamp
/// (`provenance.GetProvenance().Semver()` in `api/krusty/kustomizer.go` gives `(devel)`).
/// Writing the same keeps live objects from being relabelled when a team switches tools.
pub(super) const KUBECTL_MANAGED_BY: &str = "kustomize-(devel)";

/// What [`MANAGED_BY`] gets when no `--managed-by-value` is given: v5.5.0's and v5.6.0's
/// [`KUBECTL_MANAGED_BY`]; from v5.7.0 the provenance falls back to the version of the
/// kustomize module in the binary's build information (kustomize PR #5846, "Get version
/// from the BuildInfo.Main.Version if not found in deps", `provenance.FindVersion`), so
/// kubectl 1.34 and 1.35 write `kustomize-v5.7.1`, 1.36 and 1.37 `kustomize-v5.8.1`.
pub(super) fn default_managed_by(version: KustomizeVersion) -> &'static str {
    match version {
        KustomizeVersion::V5_5_0 | KustomizeVersion::V5_6_0 => KUBECTL_MANAGED_BY,
        KustomizeVersion::V5_7_1 => "kustomize-v5.7.1",
        KustomizeVersion::V5_8_1 => "kustomize-v5.8.1",
    }
}

/// What the root asked for, and where the build is (relative to the root).
#[derive(Debug, Default)]
pub(super) struct Meta {
    pub origin: bool,
    pub transformers: bool,
    pub managed_by: bool,
    /// Directories entered from the root, as written (`../base`).
    prefix: Vec<String>,
    /// Remote bases entered: where in `prefix` each one's path starts, and its `repo:` and
    /// `ref:` lines (kustomize's `Origin.Append` of a git URL,
    /// `api/resource/origin.go`).
    remotes: Vec<(usize, String)>,
}

impl Meta {
    pub(super) fn from_root(root: &Loaded) -> Meta {
        let has = |v: &str| root.kustomization.build_metadata.iter().any(|b| b == v);
        Meta {
            origin: has("originAnnotations"),
            transformers: has("transformerAnnotations"),
            managed_by: has("managedByLabel"),
            prefix: Vec::new(),
            remotes: Vec::new(),
        }
    }

    /// Whether files record where they came from during the build: kustomize keeps an origin
    /// whenever the root has any `buildMetadata` (transformer annotations name the file of a
    /// transformer configuration through it).
    pub(super) fn tracks_origin(&self) -> bool {
        self.origin || self.transformers || self.managed_by
    }

    pub(super) fn enter(&mut self, dir: &str) {
        self.prefix.push(dir.to_string());
    }

    pub(super) fn leave(&mut self) {
        self.prefix.pop();
    }

    /// Enters a remote base: paths start again at its directory in the repository `repo`
    /// (its clone spec), at `git_ref`. kustomize takes the directory from the clone's path
    /// after its first component, which gives `notCloned` for a URL without one.
    pub(super) fn enter_remote(&mut self, root_path: &str, repo: &str, git_ref: &str) {
        let mut source = format!("repo: {repo}\n");
        if !git_ref.is_empty() {
            source.push_str(&format!("ref: {git_ref}\n"));
        }
        self.remotes.push((self.prefix.len(), source));
        let dir = if root_path.trim_matches('/').is_empty() {
            "notCloned"
        } else {
            root_path
        };
        self.prefix.push(dir.to_string());
    }

    pub(super) fn leave_remote(&mut self) {
        self.prefix.pop();
        self.remotes.pop();
    }

    /// The `repo:` and `ref:` lines of the remote base being built (empty outside one).
    pub(super) fn source(&self) -> &str {
        self.remotes.last().map_or("", |(_, s)| s.as_str())
    }

    /// A path named in the current kustomization, relative to the root (Go's `filepath.Join`).
    pub(super) fn rel(&self, path: &str) -> String {
        let mut parts: Vec<&str> = Vec::new();
        let start = self.remotes.last().map_or(0, |(i, _)| *i);
        let prefix = self.prefix.get(start..).unwrap_or_default();
        for p in prefix.iter().map(String::as_str).chain([path]) {
            for seg in p.split('/') {
                match seg {
                    "" | "." => {}
                    ".." if parts.last().is_some_and(|l| *l != "..") => {
                        parts.pop();
                    }
                    s => parts.push(s),
                }
            }
        }
        if parts.is_empty() {
            ".".into()
        } else {
            parts.join("/")
        }
    }

    /// The current kustomization file, relative to the root.
    pub(super) fn kustomization_file(&self, loaded: &Loaded) -> String {
        let name = loaded.file.path.file_name().map_or_else(
            || "kustomization.yaml".into(),
            |n| n.to_string_lossy().into_owned(),
        );
        self.rel(&name)
    }
}

fn annotations(node: &mut Node) -> &mut Node {
    let a = node.ensure_path(&["metadata", "annotations"]);
    if !matches!(a, Node::Map(_)) {
        *a = Node::Map(Default::default());
    }
    a
}

fn set_annotation(node: &mut Node, key: &str, value: String) {
    if let Node::Map(m) = annotations(node) {
        m.insert(key.to_string(), Node::Str(value));
    }
}

/// `path: …` for resources read from a file (`source`: [`Meta::source`]).
pub(super) fn annotate_file(r: &mut Resource, path: &str, source: &str) {
    set_annotation(&mut r.node, ORIGIN, format!("path: {path}\n{source}"));
}

/// Where a plugin configuration came from: its file, or the kustomization for inline ones.
pub(super) fn configured_in(config: &Node, kustomization_file: &str) -> String {
    config
        .str_at(&["metadata", "annotations", ORIGIN])
        .and_then(|o| o.lines().find_map(|l| l.strip_prefix("path: ")))
        .map_or_else(|| kustomization_file.to_string(), str::to_string)
}

/// `configuredBy:` of an origin or transformation: the configuration's apiVersion (always
/// `builtin` here), kind, and its `metadata` name and namespace when it has them
/// (kustomize's `Origin.ConfiguredBy` is the configuration's `ResId`).
fn configured_by(kind: &str, config: Option<&Node>, indent: &str) -> String {
    let mut s =
        format!("{indent}configuredBy:\n{indent}  apiVersion: builtin\n{indent}  kind: {kind}\n");
    for key in ["name", "namespace"] {
        if let Some(v) = config
            .and_then(|c| c.str_at(&["metadata", key]))
            .filter(|v| !v.is_empty())
        {
            s.push_str(&format!("{indent}  {key}: {v}\n"));
        }
    }
    s
}

/// Generated resources: those without an origin get the generator's (`kind` is the
/// generator's kind, `None` for the kustomization's own generator fields); those that replaced or
/// merged into an existing one keep its origin (kustomize's `appendReplaceOrMerge`); those that
/// replaced one (`replaced`: kind and name) take the generator's.
pub(super) fn annotate_generated(
    acc: &mut [Resource],
    before: &HashMap<ResId, String>,
    configured_in: &str,
    kind: Option<&str>,
    config: Option<&Node>,
    replaced: &[(&str, String)],
    source: &str,
) {
    for r in acc.iter_mut() {
        let id = r.original_id();
        let was_replaced = before.contains_key(&id)
            && replaced
                .iter()
                .any(|(k, n)| *k == id.gvk.kind && *n == id.name);
        if !was_replaced
            && r.node
                .str_at(&["metadata", "annotations", ORIGIN])
                .is_some()
        {
            continue;
        }
        // The kustomization's own generators: the kind follows from the object's.
        let kind = kind.unwrap_or(if r.kind() == "Secret" {
            "SecretGenerator"
        } else {
            "ConfigMapGenerator"
        });
        let value = match before.get(&id).filter(|_| !was_replaced) {
            Some(old) => old.clone(),
            None => format!(
                "{source}configuredIn: {configured_in}\n{}",
                configured_by(kind, config, "")
            ),
        };
        set_annotation(&mut r.node, ORIGIN, value);
    }
}

/// After a transformer ran: a resource without an origin (a patch removed its annotations)
/// takes the transformer's, as kustomize's `resWrangler.AddTransformerAnnotation` does after
/// every transformer when origins are tracked ("we assume that the transformer generated the
/// resource").
pub(super) fn adopt_orphans(
    acc: &mut [Resource],
    configured_in: &str,
    kind: &str,
    config: Option<&Node>,
) {
    for r in acc.iter_mut() {
        if r.node
            .str_at(&["metadata", "annotations", ORIGIN])
            .is_none()
        {
            let value = format!(
                "configuredIn: {configured_in}\n{}",
                configured_by(kind, config, "")
            );
            set_annotation(&mut r.node, ORIGIN, value);
        }
    }
}

/// Origins of the resources by original id (to restore after a generator replaced one).
pub(super) fn origins(acc: &[Resource]) -> HashMap<ResId, String> {
    acc.iter()
        .filter_map(|r| {
            r.node
                .str_at(&["metadata", "annotations", ORIGIN])
                .map(|o| (r.original_id(), o.to_string()))
        })
        .collect()
}

/// Records that a transformer ran over every resource.
pub(super) fn annotate_transformer(
    acc: &mut [Resource],
    configured_in: &str,
    kind: &str,
    config: Option<&Node>,
    source: &str,
) {
    let mut entry = String::new();
    for (i, line) in source.lines().enumerate() {
        entry.push_str(if i == 0 { "- " } else { "  " });
        entry.push_str(line);
        entry.push('\n');
    }
    entry.push_str(if entry.is_empty() { "- " } else { "  " });
    entry.push_str(&format!(
        "configuredIn: {configured_in}\n{}",
        configured_by(kind, config, "  ")
    ));
    for r in acc.iter_mut() {
        let old = r
            .node
            .str_at(&["metadata", "annotations", TRANSFORMATIONS])
            .unwrap_or("")
            .to_string();
        set_annotation(&mut r.node, TRANSFORMATIONS, format!("{old}{entry}"));
    }
}

/// The builtin transformers a kustomization's fields configure, in kustomize's order, with how
/// many times each runs (`configureBuiltinTransformers`).
pub(super) fn field_transformers(loaded: &Loaded) -> Vec<&'static str> {
    let k = &loaded.kustomization;
    let mut out = Vec::new();
    if !k.patches_strategic_merge.is_empty() {
        out.push("PatchStrategicMergeTransformer");
    }
    out.extend(k.patches.iter().map(|_| "PatchTransformer"));
    if k.namespace.as_deref().is_some_and(|n| !n.is_empty()) {
        out.push("NamespaceTransformer");
    }
    if k.name_prefix.as_deref().is_some_and(|n| !n.is_empty()) {
        out.push("PrefixTransformer");
    }
    if k.name_suffix.as_deref().is_some_and(|n| !n.is_empty()) {
        out.push("SuffixTransformer");
    }
    if k.common_labels.as_ref().is_some_and(|m| !m.is_empty()) {
        out.push("LabelTransformer");
    }
    out.extend(k.labels.iter().map(|_| "LabelTransformer"));
    if k.common_annotations.as_ref().is_some_and(|m| !m.is_empty()) {
        out.push("AnnotationsTransformer");
    }
    out.extend(
        k.patches_json6902
            .iter()
            .map(|_| "PatchJson6902Transformer"),
    );
    out.extend(k.replicas.iter().map(|_| "ReplicaCountTransformer"));
    out.extend(k.images.iter().map(|_| "ImageTagTransformer"));
    if !k.replacements.is_empty() {
        out.push("ReplacementTransformer");
    }
    out
}

/// The end of a render: the managed-by label when asked for, and the annotations not asked
/// for removed (kustomize removes them even when an input carried them).
pub(super) fn finish(
    acc: &mut [Resource],
    meta: &Meta,
    managed_by_value: &str,
    kustomize: KustomizeVersion,
) {
    let helm_generated_is_build = kustomize.at_least(KustomizeVersion::V5_8_1);
    for r in acc.iter_mut() {
        // v5.8's build annotations include helm's mark (`resource.BuildAnnotations`).
        if helm_generated_is_build
            && let Some(Node::Map(m)) = r.node.get_path_mut(&["metadata", "annotations"])
            && m.shift_remove(HELM_GENERATED).is_some()
        {
            drop_empty_annotations(&mut r.node);
        }
        if meta.managed_by {
            let labels = r.node.ensure_path(&["metadata", "labels"]);
            if !matches!(labels, Node::Map(_)) {
                *labels = Node::Map(Default::default());
            }
            if let Node::Map(m) = labels {
                m.insert(MANAGED_BY.into(), Node::str(managed_by_value));
            }
        }
        if meta.origin && meta.transformers {
            continue;
        }
        if let Some(Node::Map(m)) = r.node.get_path_mut(&["metadata", "annotations"]) {
            if !meta.origin {
                m.shift_remove(ORIGIN);
            }
            if !meta.transformers {
                m.shift_remove(TRANSFORMATIONS);
            }
        }
        drop_empty_annotations(&mut r.node);
    }
}

/// Removes a top-level `metadata.annotations` that holds nothing: null, `{}`, `[]` or a
/// scalar. kustomize's cleanup of build annotations (`Resource.SetOrigin(nil)`,
/// `ClearTransformations`, run on every resource unless both annotations were asked for)
/// reads the annotations as a map of strings and writes them back through kyaml's
/// `RNode.setMapInMetadata`, which clears the field and writes it only when the map is not
/// empty (`kyaml/yaml/rnode.go`). `labels` and nested annotations are not touched.
pub(super) fn drop_empty_annotations(node: &mut Node) {
    let Some(Node::Map(meta_map)) = node.get_mut("metadata") else {
        return;
    };
    let empty = match meta_map.get("annotations") {
        Some(Node::Map(m)) => m.is_empty(),
        Some(Node::Seq(s)) => s.is_empty(),
        Some(_) => true,
        None => false,
    };
    if empty {
        meta_map.shift_remove("annotations");
    }
}

/// The (kind, name) of the kustomization's generator entries with `behavior: replace`.
pub(super) fn replaced_by_fields(loaded: &Loaded) -> Vec<(&'static str, String)> {
    let k = &loaded.kustomization;
    let pick = |list: &[crate::kustomization::GeneratorArgs], kind: &'static str| {
        list.iter()
            .filter(|g| g.behavior.as_deref() == Some("replace"))
            .filter_map(|g| g.name.clone().map(|n| (kind, n)))
            .collect::<Vec<_>>()
    };
    let mut out = pick(&k.config_map_generator, "ConfigMap");
    out.extend(pick(&k.secret_generator, "Secret"));
    out
}
