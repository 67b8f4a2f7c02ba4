//! The reference tables of the field-spec configuration ([`ReferenceTables`]: nameReference
//! and varReference), built in from ply's data files (`namereference.table`,
//! `varreference.table`, in a compact format read here) and extended by `configurations:`
//! files, whose keys this module also checks (the other tables are `FieldSpecTables`' in
//! `transform/mod.rs`). Does not apply any field spec itself.
//!
//! kustomize: `api/internal/plugins/builtinconfig` (`TransformerConfig`, `MergeAll`,
//! `MergeOne`, `sortFields`) and `api/types/fieldspec.go`.

use std::cmp::Ordering;

use std::sync::Arc;

use crate::diag::{Error, ErrorKind};
use crate::kustomization::FieldSpec;
use crate::resource::Gvk;
use crate::source::SourceFile;
use crate::yaml::path::PathSeg;
use crate::yaml::{Map, Node};

/// One entry of the name-reference table: objects of `gvk` (each part optional) are referred
/// to by name from the fields `referrers` lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NameBackRef {
    pub gvk: Gvk,
    pub referrers: Vec<FieldSpec>,
}

/// The two field-spec tables of references: where objects are named (`nameReference`) and
/// where `$(VAR)` is replaced (`varReference`). The other tables of a `configurations:` file
/// belong to [`super::FieldSpecTables`]; a build keeps both and feeds every file to both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReferenceTables {
    pub name_reference: Vec<NameBackRef>,
    pub var_reference: Vec<FieldSpec>,
}

const NAME_REFERENCE_TABLE: &str = include_str!("namereference.table");
const VAR_REFERENCE_TABLE: &str = include_str!("varreference.table");

/// The keys of a `configurations:` file (kustomize's `TransformerConfig`).
const CONFIG_KEYS: [&str; 11] = [
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "templateLabels",
    "commonAnnotations",
    "nameReference",
    "varReference",
    "images",
    "replicas",
];

impl ReferenceTables {
    /// The built-in tables (kustomize's `builtinpluginconsts/namereference.go` and
    /// `varreference.go`), sorted as kustomize sorts them.
    pub(crate) fn builtin() -> ReferenceTables {
        // Parsed once per process: every base of a render starts from these tables, and
        // parsing them per kustomization showed up in profiles (docs/performance.md).
        static BUILTIN: std::sync::OnceLock<ReferenceTables> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(ReferenceTables::parse_builtin).clone()
    }

    fn parse_builtin() -> ReferenceTables {
        let mut t = ReferenceTables {
            name_reference: parse_table(NAME_REFERENCE_TABLE)
                .into_iter()
                .map(|(gvk, referrers)| NameBackRef { gvk, referrers })
                .collect(),
            var_reference: parse_table(VAR_REFERENCE_TABLE)
                .into_iter()
                .flat_map(|(_, specs)| specs)
                .collect(),
        };
        t.sort();
        t
    }

    /// Reads the `nameReference` and `varReference` lists of a `configurations:` file's
    /// document. A key no table knows is an error (kustomize reads the file with
    /// `yaml.UnmarshalStrict`), named by its path in the file.
    pub(crate) fn from_node(node: &Node) -> Result<ReferenceTables, Misshapen> {
        let mut t = ReferenceTables::default();
        let map = match node {
            Node::Null => return Ok(t),
            Node::Map(m) => m,
            other => {
                return Err(Misshapen::at(
                    Vec::new(),
                    format!(
                        "expected a map of field-spec lists, found a {}",
                        other.kind_name()
                    ),
                ));
            }
        };
        for (key, value) in map {
            let at = |i: Option<usize>| {
                let mut p = vec![PathSeg::Key(key.to_string())];
                p.extend(i.map(PathSeg::Index));
                p
            };
            match key.as_str() {
                "nameReference" => {
                    let items = seq_items(value).map_err(|m| Misshapen::at(at(None), m))?;
                    for (i, item) in items.iter().enumerate() {
                        t.name_reference
                            .push(name_back_ref(item).map_err(|e| e.under(at(Some(i))))?);
                    }
                }
                "varReference" => {
                    let items = seq_items(value).map_err(|m| Misshapen::at(at(None), m))?;
                    for (i, item) in items.iter().enumerate() {
                        t.var_reference
                            .push(field_spec(item).map_err(|e| e.under(at(Some(i))))?);
                    }
                }
                k if CONFIG_KEYS.contains(&k) => {}
                _ => return Err(Misshapen::unknown(at(None))),
            }
        }
        t.sort();
        Ok(t)
    }

    /// Merges `other` into `self`: field specs already present (same path, selecting the same
    /// kind) are kept once, a conflicting `create` is an error, then the tables are sorted
    /// (kustomize's `TransformerConfig.Merge`).
    pub(crate) fn merge(&mut self, other: &ReferenceTables) -> Result<(), Error> {
        merge_specs(&mut self.var_reference, &other.var_reference).map_err(|e| {
            Error::new(
                ErrorKind::Kustomization,
                format!("failed to merge VarReference fieldSpec: {e}"),
            )
        })?;
        for nbr in &other.name_reference {
            match self.name_reference.iter_mut().find(|m| m.gvk == nbr.gvk) {
                Some(m) => merge_specs(&mut m.referrers, &nbr.referrers).map_err(|e| {
                    Error::new(
                        ErrorKind::Kustomization,
                        format!("failed to merge NameReference fieldSpec: {e}"),
                    )
                })?,
                None => self.name_reference.push(nbr.clone()),
            }
        }
        self.sort();
        Ok(())
    }

    fn sort(&mut self) {
        self.var_reference
            .sort_by(|a, b| gvk_order(&spec_gvk(a), &spec_gvk(b)));
        self.name_reference
            .sort_by(|a, b| gvk_order(&a.gvk, &b.gvk));
    }
}

/// The field-spec configuration a kustomization's transformers use: the built-in tables, plus
/// the `configurations:` files of this kustomization and of every kustomization below it
/// (kustomize merges a base's configuration into its parent's, `ResAccumulator.MergeConfig`).
#[derive(Clone, Debug)]
pub(crate) struct BuildConfig {
    pub fields: super::FieldSpecTables,
    pub refs: ReferenceTables,
    /// Whether a `configurations:` file was added (otherwise this is the built-in config and
    /// merging it into a parent changes nothing).
    custom: bool,
}

impl BuildConfig {
    /// The built-in configuration (`fields` are the built-in `FieldSpecTables`).
    pub(crate) fn builtin(fields: &super::FieldSpecTables) -> BuildConfig {
        BuildConfig {
            fields: fields.clone(),
            refs: ReferenceTables::builtin(),
            custom: false,
        }
    }

    /// Whether anything was added to the built-in configuration.
    pub(crate) fn is_custom(&self) -> bool {
        self.custom
    }

    /// Adds a `configurations:` file's document (`file`, named `what` in messages). A part of
    /// it that kustomize's `TransformerConfig` cannot read is an error at that part.
    pub(crate) fn add_file(
        &mut self,
        node: &Node,
        file: &Arc<SourceFile>,
        what: &str,
    ) -> Result<(), Error> {
        let located = |e: Misshapen| {
            let path = e.shown_path();
            let message = if path.is_empty() {
                format!("{what}: {}", e.message)
            } else {
                format!("{what}: {path}: {}", e.message)
            };
            Error::new(ErrorKind::Kustomization, message)
                .at(crate::kustomization::load::locate(file, &e.path))
                .label("this field")
                .help(format!(
                    "a configurations file holds field-spec lists: {}",
                    CONFIG_KEYS.join(", ")
                ))
        };
        let refs = ReferenceTables::from_node(node).map_err(located)?;
        self.refs.merge(&refs)?;
        self.fields.merge_config(node).map_err(located)?;
        self.custom = true;
        Ok(())
    }

    /// Adds the field specs a `crds:` file of OpenAPI definitions implies (kustomize's
    /// `LoadConfigFromCRDs`): for each type that looks like an object (has `kind`,
    /// `apiVersion` and `metadata` properties), properties marked `x-kubernetes-annotation`,
    /// `x-kubernetes-label-selector` and `x-kubernetes-identity` become commonAnnotations,
    /// commonLabels and namePrefix fields, and `x-kubernetes-object-ref-kind` (with
    /// `-api-version`, `-name-key`) a name reference; `$ref`s are followed.
    pub(crate) fn add_crd_definitions(&mut self, defs: &Node) -> Result<(), Error> {
        let Some(map) = defs.as_map() else {
            return Ok(());
        };
        let mut found = CrdSpecs::default();
        for (name, def) in map {
            let props = def
                .get_path(&["Schema", "properties"])
                .and_then(Node::as_map);
            let is_object = props.is_some_and(|p| {
                p.contains_key("kind") && p.contains_key("apiVersion") && p.contains_key("metadata")
            });
            if !is_object {
                continue;
            }
            let kind = name.rsplit('.').next().unwrap_or(name).to_string();
            crd_properties(map, name, &kind, &mut Vec::new(), &mut found, 0);
        }
        if found.is_empty() {
            return Ok(());
        }
        for spec in found.annotations {
            super::try_merge_one(&mut self.fields.common_annotations, spec)?;
        }
        for spec in found.labels {
            super::try_merge_one(&mut self.fields.common_labels, spec)?;
        }
        for spec in found.prefix {
            super::try_merge_one(&mut self.fields.name_prefix, spec)?;
        }
        let refs = ReferenceTables {
            name_reference: found.name_refs,
            var_reference: Vec::new(),
        };
        self.refs.merge(&refs)?;
        self.custom = true;
        Ok(())
    }

    /// Adds what a base's (or component's) build added to its configuration.
    pub(crate) fn absorb(&mut self, child: &BuildConfig) -> Result<(), Error> {
        if !child.custom {
            return Ok(());
        }
        self.refs.merge(&child.refs)?;
        let f = &mut self.fields;
        let c = &child.fields;
        for (mine, theirs) in [
            (&mut f.common_labels, &c.common_labels),
            (&mut f.template_labels, &c.template_labels),
            (&mut f.labels, &c.labels),
            (&mut f.common_annotations, &c.common_annotations),
            (&mut f.namespace, &c.namespace),
            (&mut f.name_prefix, &c.name_prefix),
            (&mut f.name_suffix, &c.name_suffix),
            (&mut f.images, &c.images),
            (&mut f.replicas, &c.replicas),
        ] {
            for spec in theirs {
                super::try_merge_one(mine, spec.clone())?;
            }
        }
        self.custom = true;
        Ok(())
    }
}

/// Field specs found in OpenAPI definitions.
#[derive(Default)]
struct CrdSpecs {
    annotations: Vec<FieldSpec>,
    labels: Vec<FieldSpec>,
    prefix: Vec<FieldSpec>,
    name_refs: Vec<NameBackRef>,
}

impl CrdSpecs {
    fn is_empty(&self) -> bool {
        self.annotations.is_empty()
            && self.labels.is_empty()
            && self.prefix.is_empty()
            && self.name_refs.is_empty()
    }
}

/// `$ref`s are followed this deep at most (kustomize follows them without a limit and loops
/// forever on a cycle).
const MAX_CRD_DEPTH: usize = 32;

/// kustomize's `loadCrdIntoConfig`: walks the properties of definition `type_name`.
fn crd_properties(
    defs: &Map,
    type_name: &str,
    kind: &str,
    path: &mut Vec<String>,
    out: &mut CrdSpecs,
    depth: usize,
) {
    if depth > MAX_CRD_DEPTH {
        return;
    }
    let Some(props) = defs
        .get(type_name)
        .and_then(|d| d.get_path(&["Schema", "properties"]))
        .and_then(Node::as_map)
    else {
        return;
    };
    let spec = |path: &[String]| FieldSpec {
        kind: Some(kind.to_string()),
        path: path.join("/"),
        ..FieldSpec::default()
    };
    for (prop, p) in props {
        let ext = |k: &str| p.get(k).and_then(Node::as_str);
        path.push(prop.clone());
        if ext("x-kubernetes-annotation").is_some() {
            out.annotations.push(spec(path));
        }
        if ext("x-kubernetes-label-selector").is_some() {
            out.labels.push(spec(path));
        }
        if ext("x-kubernetes-identity").is_some() {
            out.prefix.push(spec(path));
        }
        if let (Some(version), Some(ref_kind)) = (
            ext("x-kubernetes-object-ref-api-version"),
            ext("x-kubernetes-object-ref-kind"),
        ) {
            let key = ext("x-kubernetes-object-ref-name-key").unwrap_or("name");
            let mut p = path.clone();
            p.push(key.to_string());
            out.name_refs.push(NameBackRef {
                gvk: Gvk {
                    group: String::new(),
                    version: version.to_string(),
                    kind: ref_kind.to_string(),
                },
                referrers: vec![spec(&p)],
            });
        }
        if let Some(r) = ext("$ref").filter(|r| !r.is_empty()) {
            crd_properties(defs, r, kind, path, out, depth + 1);
        }
        path.pop();
    }
}

/// A field spec's group, version and kind (missing parts empty).
pub(crate) fn spec_gvk(fs: &FieldSpec) -> Gvk {
    Gvk {
        group: fs.group.clone().unwrap_or_default(),
        version: fs.version.clone().unwrap_or_default(),
        kind: fs.kind.clone().unwrap_or_default(),
    }
}

/// kyaml's `Gvk.IsLessThan`: kinds kustomize orders first (Namespace, …) come first, the
/// webhook configurations last, the rest by `group_version_kind` text.
pub(crate) fn gvk_order(a: &Gvk, b: &Gvk) -> Ordering {
    use super::sort::{LEGACY_ORDER_FIRST as FIRST, LEGACY_ORDER_LAST as LAST};
    let rank = |k: &str| -> i64 {
        if let Some(i) = FIRST.iter().position(|x| *x == k) {
            i as i64 - FIRST.len() as i64
        } else if let Some(i) = LAST.iter().position(|x| *x == k) {
            1 + i as i64
        } else {
            0
        }
    };
    rank(&a.kind)
        .cmp(&rank(&b.kind))
        .then_with(|| a.to_string().cmp(&b.to_string()))
}

/// kustomize's `FsSlice.MergeOne` for each incoming spec: a spec whose path is equal and whose
/// group/version/kind select the incoming one is the same spec.
fn merge_specs(mine: &mut Vec<FieldSpec>, theirs: &[FieldSpec]) -> Result<(), String> {
    for x in theirs {
        let xg = spec_gvk(x);
        let found = mine.iter().find(|m| {
            m.path == x.path
                && super::refpath::gvk_selected(
                    &spec_gvk(m),
                    Some(&xg.group),
                    Some(&xg.version),
                    Some(&xg.kind),
                )
        });
        match found {
            Some(m) if m.create != x.create => return Err("conflicting fieldspecs".into()),
            Some(_) => {}
            None => mine.push(x.clone()),
        }
    }
    Ok(())
}

/// A part of a `configurations:` file that is not what kustomize reads there: its path from
/// the file's root, and what is wrong.
#[derive(Debug)]
pub(crate) struct Misshapen {
    pub(crate) path: Vec<PathSeg>,
    pub(crate) message: String,
    /// The message names the path's last key (an unknown field), so messages show the path
    /// without it.
    names_key: bool,
}

impl Misshapen {
    pub(crate) fn at(path: Vec<PathSeg>, message: impl Into<String>) -> Misshapen {
        Misshapen {
            path,
            message: message.into(),
            names_key: false,
        }
    }

    /// The key at the end of `path` is one kustomize does not know there.
    pub(crate) fn unknown(path: Vec<PathSeg>) -> Misshapen {
        let message = match path.last() {
            Some(PathSeg::Key(k)) => format!("unknown field \"{k}\""),
            _ => "unknown field".to_string(),
        };
        Misshapen {
            path,
            message,
            names_key: true,
        }
    }

    /// The path as messages show it.
    pub(crate) fn shown_path(&self) -> String {
        let shown = if self.names_key {
            &self.path[..self.path.len().saturating_sub(1)]
        } else {
            &self.path[..]
        };
        crate::yaml::path::path_text(shown)
    }

    /// The same error, its path under `prefix`.
    pub(crate) fn under(mut self, mut prefix: Vec<PathSeg>) -> Misshapen {
        prefix.append(&mut self.path);
        self.path = prefix;
        self
    }
}

fn seq_items(n: &Node) -> Result<&[Node], String> {
    match n {
        Node::Null => Ok(&[]),
        Node::Seq(s) => Ok(s),
        other => Err(format!("expected a list, found a {}", other.kind_name())),
    }
}

fn text(n: &Node) -> Result<String, String> {
    match n {
        Node::Map(_) | Node::Seq(_) => Err(format!("expected a string, found a {}", n.kind_name())),
        Node::Null => Ok(String::new()),
        other => Ok(other.scalar_text().unwrap_or_default()),
    }
}

fn as_map(n: &Node) -> Result<&Map, String> {
    n.as_map()
        .ok_or_else(|| format!("expected a map, found a {}", n.kind_name()))
}

fn opt(s: String) -> Option<String> {
    if s.is_empty() { None } else { Some(s) }
}

fn field_spec(n: &Node) -> Result<FieldSpec, Misshapen> {
    let mut fs = FieldSpec::default();
    let key_err = |k: &str, m: String| Misshapen::at(vec![PathSeg::Key(k.to_string())], m);
    for (k, v) in as_map(n).map_err(|m| Misshapen::at(Vec::new(), m))? {
        match k.as_str() {
            "group" => fs.group = opt(text(v).map_err(|m| key_err(k, m))?),
            "version" => fs.version = opt(text(v).map_err(|m| key_err(k, m))?),
            "kind" => fs.kind = opt(text(v).map_err(|m| key_err(k, m))?),
            "path" => fs.path = text(v).map_err(|m| key_err(k, m))?,
            "create" => {
                fs.create = match v {
                    Node::Bool(b) => *b,
                    Node::Null => false,
                    _ => return Err(key_err(k, "expected true or false".into())),
                }
            }
            _ => return Err(Misshapen::unknown(vec![PathSeg::Key(k.to_string())])),
        }
    }
    Ok(fs)
}

fn name_back_ref(n: &Node) -> Result<NameBackRef, Misshapen> {
    let mut nbr = NameBackRef::default();
    let key_err = |k: &str, m: String| Misshapen::at(vec![PathSeg::Key(k.to_string())], m);
    for (k, v) in as_map(n).map_err(|m| Misshapen::at(Vec::new(), m))? {
        match k.as_str() {
            "group" => nbr.gvk.group = text(v).map_err(|m| key_err(k, m))?,
            "version" => nbr.gvk.version = text(v).map_err(|m| key_err(k, m))?,
            "kind" => nbr.gvk.kind = text(v).map_err(|m| key_err(k, m))?,
            "fieldSpecs" => {
                for (i, item) in seq_items(v).map_err(|m| key_err(k, m))?.iter().enumerate() {
                    nbr.referrers.push(field_spec(item).map_err(|e| {
                        e.under(vec![PathSeg::Key(k.to_string()), PathSeg::Index(i)])
                    })?);
                }
            }
            _ => return Err(Misshapen::unknown(vec![PathSeg::Key(k.to_string())])),
        }
    }
    Ok(nbr)
}

/// Reads ply's compact table format (see the head of `namereference.table`): blocks headed by
/// a referenced kind, lines `Kind[ group=G][ version=V], …: path` naming referrers, indented
/// paths continuing the last referrer line, `{pod}` standing for the referrer's pod spec
/// (declared by `@pod Kind=prefix …` lines). Lines it cannot read are skipped; the unit tests
/// pin the tables' sizes.
fn parse_table(text: &str) -> Vec<(Gvk, Vec<FieldSpec>)> {
    let mut pods: Vec<(String, String)> = Vec::new();
    let mut blocks: Vec<(Gvk, Vec<FieldSpec>)> = Vec::new();
    let mut referrers: Vec<Gvk> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("@pod ") {
            for pair in rest.split_whitespace() {
                if let Some((k, p)) = pair.split_once('=') {
                    pods.push((k.to_string(), p.to_string()));
                }
            }
            continue;
        }
        let indent = line.len() - trimmed.len();
        if indent == 0 {
            blocks.push((parse_gvk(trimmed), Vec::new()));
            referrers.clear();
            continue;
        }
        let path = if indent == 2 {
            let (kinds, path) = trimmed.split_once(':').unwrap_or((trimmed, ""));
            referrers = kinds.split(',').map(|k| parse_gvk(k.trim())).collect();
            path.trim()
        } else {
            trimmed
        };
        if path.is_empty() {
            continue;
        }
        let Some((_, specs)) = blocks.last_mut() else {
            continue;
        };
        for r in &referrers {
            let path = if path.contains("{pod}") {
                let prefix = pods
                    .iter()
                    .find(|(k, _)| *k == r.kind)
                    .or_else(|| pods.iter().find(|(k, _)| k == "*"))
                    .map_or("", |(_, p)| p.as_str());
                path.replace("{pod}", prefix)
            } else {
                path.to_string()
            };
            specs.push(FieldSpec {
                group: opt(r.group.clone()),
                version: opt(r.version.clone()),
                kind: opt(r.kind.clone()),
                path,
                create: false,
            });
        }
    }
    blocks
}

/// `Kind group=G version=V` (`*` for no kind).
fn parse_gvk(s: &str) -> Gvk {
    let mut gvk = Gvk::default();
    for (i, word) in s.split_whitespace().enumerate() {
        if let Some(g) = word.strip_prefix("group=") {
            gvk.group = g.to_string();
        } else if let Some(v) = word.strip_prefix("version=") {
            gvk.version = v.to_string();
        } else if i == 0 && word != "*" {
            gvk.kind = word.to_string();
        }
    }
    gvk
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn count(t: &ReferenceTables, kind: &str) -> usize {
        t.name_reference
            .iter()
            .find(|n| n.gvk.kind == kind)
            .map_or(0, |n| n.referrers.len())
    }

    #[test]
    fn builtin_tables_have_kustomizes_entries() {
        let t = ReferenceTables::builtin();
        assert_eq!(t.name_reference.len(), 16);
        assert_eq!(count(&t, "ConfigMap"), 52);
        assert_eq!(count(&t, "Secret"), 69);
        assert_eq!(count(&t, "Service"), 8);
        assert_eq!(count(&t, "ServiceAccount"), 9);
        assert_eq!(t.var_reference.len(), 72);
        // Sorted as kustomize sorts: StorageClass before ServiceAccount, ConfigMap before
        // Secret, then the rest by text.
        let kinds: Vec<&str> = t
            .name_reference
            .iter()
            .map(|n| n.gvk.kind.as_str())
            .collect();
        assert_eq!(&kinds[..3], ["StorageClass", "ServiceAccount", "Role"]);
        let cm = t
            .name_reference
            .iter()
            .find(|n| n.gvk.kind == "ConfigMap")
            .unwrap();
        assert!(
            cm.referrers
                .iter()
                .any(|f| f.kind.as_deref() == Some("CronJob")
                    && f.path == "spec/jobTemplate/spec/template/spec/volumes/configMap/name")
        );
        assert!(cm.referrers.iter().any(|f| f.kind.as_deref() == Some("Pod")
            && f.version.as_deref() == Some("v1")
            && f.path == "spec/volumes/configMap/name"));
    }

    #[test]
    fn reads_and_merges_a_configurations_file() {
        let n = parse_one(
            "nameReference:\n- kind: Bee\n  fieldSpecs:\n  - path: spec/beeRef/name\n    kind: AnimalPark\nvarReference:\n- path: spec/food\n  kind: AnimalPark\n",
        )
        .unwrap();
        let extra = ReferenceTables::from_node(&n).unwrap();
        let mut t = ReferenceTables::builtin();
        let before = t.var_reference.len();
        t.merge(&extra).unwrap();
        t.merge(&extra).unwrap();
        assert_eq!(t.var_reference.len(), before + 1);
        assert_eq!(count(&t, "Bee"), 1);
    }

    #[test]
    fn build_config_absorbs_only_custom_children() {
        let fields = crate::transform::FieldSpecTables::builtin().unwrap();
        let mut parent = BuildConfig::builtin(&fields);
        let plain = BuildConfig::builtin(&fields);
        parent.absorb(&plain).unwrap();
        assert!(!parent.custom);
        let mut child = BuildConfig::builtin(&fields);
        let text = "images:\n- path: spec/img\n  kind: Zoo\nnameReference:\n- kind: Bird\n  fieldSpecs:\n  - path: spec/birds\n    kind: Zoo\n";
        let n = parse_one(text).unwrap();
        child
            .add_file(&n, &SourceFile::new("c.yaml", text), "c.yaml")
            .unwrap();
        parent.absorb(&child).unwrap();
        assert!(parent.fields.images.iter().any(|f| f.path == "spec/img"));
        assert_eq!(count(&parent.refs, "Bird"), 1);
    }

    #[test]
    fn crd_definitions_add_name_references() {
        let defs = parse_one(
            r#"{"ex.v1.MyKind": {"Schema": {"properties": {"kind": {}, "apiVersion": {}, "metadata": {}, "spec": {"$ref": "ex.v1.MyKindSpec"}}}},
"ex.v1.MyKindSpec": {"Schema": {"properties": {
  "secretRef": {"x-kubernetes-object-ref-api-version": "v1", "x-kubernetes-object-ref-kind": "Secret"},
  "owner": {"x-kubernetes-annotation": "", "$ref": "ex.v1.Owner"}}}}}"#,
        )
        .unwrap();
        let fields = crate::transform::FieldSpecTables::builtin().unwrap();
        let mut c = BuildConfig::builtin(&fields);
        let before = count(&c.refs, "Secret");
        c.add_crd_definitions(&defs).unwrap();
        assert_eq!(count(&c.refs, "Secret"), before + 1);
        let secret = c
            .refs
            .name_reference
            .iter()
            .find(|n| n.gvk.kind == "Secret")
            .unwrap();
        assert!(
            secret
                .referrers
                .iter()
                .any(|f| f.kind.as_deref() == Some("MyKind") && f.path == "spec/secretRef/name")
        );
        assert!(
            c.fields
                .common_annotations
                .iter()
                .any(|f| f.path == "spec/owner")
        );
    }

    /// A wrongly shaped part is named by its path and placed at its line in the file.
    #[test]
    fn misshapen_parts_are_placed_in_the_file() {
        let fields = crate::transform::FieldSpecTables::builtin().unwrap();
        let cases = [
            (
                "# c\nnameReference:\n- kind: A\n  fieldSpecs: []\n- kind: B\n  fieldSpecs: oops\n",
                "c.yaml: nameReference[1].fieldSpecs: expected a list, found a string",
                6,
            ),
            (
                "varReference:\n- path: a\n  create: maybe\n",
                "c.yaml: varReference[0].create: expected true or false",
                3,
            ),
            (
                "commonLabels:\n- path: a\n- path: b\n  create: \"yes\"\n",
                "c.yaml: commonLabels[1].create: expected true or false, found the string \"yes\"",
                4,
            ),
            (
                "nameReference:\n- kind: A\n  fieldSpec: []\n",
                "c.yaml: nameReference[0]: unknown field \"fieldSpec\"",
                3,
            ),
            (
                "namePrefix:\n- 7\n",
                "c.yaml: namePrefix[0]: a field spec must be a map, found a integer",
                2,
            ),
        ];
        for (text, message, line) in cases {
            let mut c = BuildConfig::builtin(&fields);
            let e = c
                .add_file(
                    &parse_one(text).unwrap(),
                    &SourceFile::new("c.yaml", text),
                    "c.yaml",
                )
                .unwrap_err();
            assert_eq!(e.message, message, "{text}");
            let at = e.location.expect("placed");
            assert_eq!(at.line(), line, "{text}");
        }
    }

    #[test]
    fn rejects_unknown_fields_and_conflicts() {
        let n = parse_one("nameRefs: []\n").unwrap();
        assert!(ReferenceTables::from_node(&n).is_err());
        let a = parse_one("varReference:\n- path: a\n  kind: X\n").unwrap();
        let b = parse_one("varReference:\n- path: a\n  kind: X\n  create: true\n").unwrap();
        let mut t = ReferenceTables::from_node(&a).unwrap();
        let e = t
            .merge(&ReferenceTables::from_node(&b).unwrap())
            .unwrap_err();
        assert!(e.message.contains("conflicting fieldspecs"));
    }
}
