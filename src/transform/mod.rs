//! The built-in transformers, one file per kustomization field (namespace, namePrefix and
//! nameSuffix, labels, commonAnnotations, images, replicas) and output ordering (`sort`). The
//! places each transformer writes are data ([`FieldSpecTables`], from `fieldspecs/*.yaml`),
//! passed in by the caller; nothing here reads files or keeps global state. The build decides
//! the order in which transformers run.

pub(crate) mod annotations;
pub(crate) mod configurations;
pub(crate) mod fieldspec;
pub(crate) mod images;
pub(crate) mod labels;
pub(crate) mod namereference;
pub(crate) mod namespace;
pub(crate) mod prefix_suffix;
pub(crate) mod refpath;
pub(crate) mod replacements;
pub(crate) mod replicas;
pub(crate) mod sort;
pub(crate) mod value_add;
pub(crate) mod vars;

// Builtin transformer plugin configurations (`transformers:`).
pub(crate) mod builtin;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{FieldSpec, KustomizeVersion};
use crate::resource::Gvk;
use crate::yaml::Node;

/// For field provenance (issue 29, `render/writes.rs`): told of each field a transformer wrote
/// with the value it already held, by the object's index in the list the transformer was
/// given and the field's path. No comparison of the objects before and after can see such a
/// write, and the transformer's own walk finds it at no extra cost (docs/performance.md, "Writes
/// told by the transformer"). `None` when provenance is off: then nothing is compared.
pub(crate) type Unchanged<'a> = Option<&'a mut dyn FnMut(usize, &[fieldspec::PathStep<'_>])>;

/// For field provenance, where a transformer's setter does not know the field's path: told of
/// each object (by its index in the list given) in which the transformer wrote a field with
/// the value it held. The caller finds those fields in that object only (`render/writes.rs`);
/// an object not told of holds no such field. `None` when provenance is off.
pub(crate) type KeptIn<'a> = Option<&'a mut dyn FnMut(usize)>;

/// Moved to `yaml/resolve.rs` (a rule of go-yaml's scalars); the transformers call it here.
pub(crate) use crate::yaml::resolve::untagged_over;

/// Where each built-in transformer applies: kustomize's `TransformerConfig`. Start from
/// [`FieldSpecTables::builtin`]; a kustomization's `configurations:` files add entries with
/// [`FieldSpecTables::merge_config`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldSpecTables {
    /// `commonLabels`, and `labels` with `includeSelectors: true`.
    pub common_labels: Vec<FieldSpec>,
    /// `labels` with `includeTemplates: true` (without selectors).
    pub template_labels: Vec<FieldSpec>,
    /// Extra places for every `labels` entry (the `labels:` table of `configurations:`;
    /// empty by default).
    pub labels: Vec<FieldSpec>,
    pub common_annotations: Vec<FieldSpec>,
    pub namespace: Vec<FieldSpec>,
    pub name_prefix: Vec<FieldSpec>,
    pub name_suffix: Vec<FieldSpec>,
    pub images: Vec<FieldSpec>,
    pub replicas: Vec<FieldSpec>,
    /// `apiVersion`+`kind` pairs known to be cluster-scoped.
    pub cluster_scoped: Vec<(String, String)>,
    /// The kustomize release these tables are for; the transformers that differ between
    /// releases ask it.
    pub kustomize: KustomizeVersion,
}

impl FieldSpecTables {
    /// The default tables of a kustomize release: v5.5.0's ([`FieldSpecTables::builtin`]),
    /// with what later releases added.
    pub fn builtin_for(version: KustomizeVersion) -> Result<FieldSpecTables> {
        let mut tables = FieldSpecTables::builtin()?;
        tables.kustomize = version;
        if version.at_least(KustomizeVersion::V5_7_1) {
            tables.images.extend(parse_table(
                "images-since-v5.7.yaml",
                include_str!("fieldspecs/images-since-v5.7.yaml"),
            )?);
        }
        Ok(tables)
    }

    /// kustomize v5.5's default tables, parsed from the files in `fieldspecs/`.
    pub fn builtin() -> Result<FieldSpecTables> {
        Ok(FieldSpecTables {
            common_labels: parse_table(
                "commonlabels.yaml",
                include_str!("fieldspecs/commonlabels.yaml"),
            )?,
            template_labels: parse_table(
                "templatelabels.yaml",
                include_str!("fieldspecs/templatelabels.yaml"),
            )?,
            labels: Vec::new(),
            common_annotations: parse_table(
                "commonannotations.yaml",
                include_str!("fieldspecs/commonannotations.yaml"),
            )?,
            namespace: parse_table("namespace.yaml", include_str!("fieldspecs/namespace.yaml"))?,
            name_prefix: parse_table(
                "nameprefix.yaml",
                include_str!("fieldspecs/nameprefix.yaml"),
            )?,
            name_suffix: parse_table(
                "namesuffix.yaml",
                include_str!("fieldspecs/namesuffix.yaml"),
            )?,
            images: parse_table("images.yaml", include_str!("fieldspecs/images.yaml"))?,
            replicas: parse_table("replicas.yaml", include_str!("fieldspecs/replicas.yaml"))?,
            cluster_scoped: parse_cluster_scoped(include_str!("fieldspecs/clusterscoped.yaml"))?,
            kustomize: KustomizeVersion::V5_5_0,
        })
    }

    /// Adds the entries of a `configurations:` file (kustomize's TransformerConfig document:
    /// `commonLabels:`, `commonAnnotations:`, `namespace:`, `namePrefix:`, `nameSuffix:`,
    /// `images:`, `replicas:`, `templateLabels:`, `labels:` lists). Keys this module does not
    /// own (`nameReference:`, `varReference:`) are ignored here. Duplicates are dropped.
    pub(crate) fn merge_config(
        &mut self,
        config: &Node,
    ) -> std::result::Result<(), configurations::Misshapen> {
        use configurations::Misshapen;
        let Some(map) = config.as_map() else {
            if config.is_null() {
                return Ok(());
            }
            return Err(Misshapen::at(
                Vec::new(),
                "a transformer configuration must be a map",
            ));
        };
        for (key, value) in map {
            let here = || vec![crate::yaml::path::PathSeg::Key(key.to_string())];
            let merged = |e: Error| Misshapen::at(here(), e.message);
            let table = match key.as_str() {
                "commonLabels" => &mut self.common_labels,
                "templateLabels" => &mut self.template_labels,
                "labels" => &mut self.labels,
                "commonAnnotations" => &mut self.common_annotations,
                "namespace" => &mut self.namespace,
                "namePrefix" => &mut self.name_prefix,
                "nameSuffix" => &mut self.name_suffix,
                "images" => &mut self.images,
                "replicas" => &mut self.replicas,
                _ => continue,
            };
            for spec in specs_at(value).map_err(|e| e.under(here()))? {
                try_merge_one(table, spec).map_err(merged)?;
            }
            // kustomize sorts the merged table by group/version/kind
            // (`TransformerConfig.sortFields`) and merges it again into the accumulator's
            // empty one (`ResAccumulator.MergeConfig`), where a spec that an earlier one with
            // the same path covers (its group/version/kind selected by the later one's) is
            // dropped (`FsSlice.MergeAll`, `effectivelyEquals`): a file naming
            // `metadata/name` for ConfigMaps under `namePrefix` sorts before the built-in
            // spec for every kind, which is dropped, so other kinds are left unprefixed
            // (checked with kubectl kustomize).
            table.sort_by(|a, b| {
                configurations::gvk_order(
                    &configurations::spec_gvk(a),
                    &configurations::spec_gvk(b),
                )
            });
            for spec in std::mem::take(table) {
                try_merge_one(table, spec).map_err(merged)?;
            }
        }
        Ok(())
    }

    /// Whether kustomize treats objects of this group/version/kind as cluster-scoped.
    pub fn is_cluster_scoped(&self, gvk: &Gvk) -> bool {
        self.is_cluster_scoped_parts(&gvk.group, &gvk.version, &gvk.kind)
    }

    /// [`Self::is_cluster_scoped`] for a group, version and kind given apart.
    pub fn is_cluster_scoped_parts(&self, group: &str, version: &str, kind: &str) -> bool {
        // The table holds `apiVersion`s: `group/version`, or the version alone for the core
        // group (`Gvk::api_version`).
        let api_version_is = |a: &str| {
            if group.is_empty() {
                a == version
            } else {
                a.strip_prefix(group).and_then(|r| r.strip_prefix('/')) == Some(version)
            }
        };
        self.cluster_scoped
            .iter()
            .any(|(a, k)| k == kind && api_version_is(a))
    }
}

#[cfg(test)]
/// [`try_merge_one`] that keeps the first of two conflicting entries instead of failing.
pub(crate) fn merge_one(table: &mut Vec<FieldSpec>, spec: FieldSpec) {
    let _ = try_merge_one(table, spec);
}

/// Adds a spec unless an equivalent one is there (kustomize's `FsSlice.MergeOne`): same path,
/// and the existing entry's group/version/kind selected by the new one's (so a new entry without
/// a kind matches an existing one for any kind). An equivalent entry with a different `create`
/// is an error, as in kustomize.
pub(crate) fn try_merge_one(table: &mut Vec<FieldSpec>, spec: FieldSpec) -> Result<()> {
    if is_new(table.iter(), &spec)? {
        table.push(spec);
    }
    Ok(())
}

/// Whether [`try_merge_one`] adds `spec` to a table holding `table`'s entries.
pub(crate) fn is_new<'a>(
    mut table: impl Iterator<Item = &'a FieldSpec>,
    spec: &FieldSpec,
) -> Result<bool> {
    let selects = |want: &Option<String>, have: &Option<String>| {
        want.as_deref()
            .is_none_or(|w| w.is_empty() || Some(w) == have.as_deref())
    };
    let existing = table.find(|s| {
        s.path == spec.path
            && selects(&spec.group, &s.group)
            && selects(&spec.version, &s.version)
            && selects(&spec.kind, &s.kind)
    });
    match existing {
        Some(s) if s.create != spec.create => Err(Error::new(
            ErrorKind::Kustomization,
            format!(
                "conflicting fieldspecs: path {:?}{} is given both with and without `create`",
                spec.path,
                spec.kind
                    .as_deref()
                    .map(|k| format!(" for kind {k}"))
                    .unwrap_or_default()
            ),
        )),
        Some(_) => Ok(false),
        None => Ok(true),
    }
}

/// Reads a built-in table, written one flow map a line (`- {path: a/b, create: true, kind: K}`,
/// a value in double quotes when it has `[]`): a render reads all of them, and this line
/// reader costs a small part of the YAML parser's instructions. A test checks that it reads
/// each table as the YAML parser does.
fn parse_table(name: &str, text: &str) -> Result<Vec<FieldSpec>> {
    let bad = |line: &str| {
        Error::new(
            ErrorKind::Yaml,
            format!("built-in field spec table {name}: cannot read the line {line:?}"),
        )
    };
    let mut out = Vec::new();
    for line in table_lines(text) {
        let fields = line
            .strip_prefix("- {")
            .and_then(|l| l.strip_suffix('}'))
            .ok_or_else(|| bad(line))?;
        let mut spec = FieldSpec::default();
        for field in fields.split(", ") {
            let (key, value) = field.split_once(": ").ok_or_else(|| bad(line))?;
            let value = match value.strip_prefix('"') {
                Some(v) => v.strip_suffix('"').ok_or_else(|| bad(line))?,
                None => value,
            };
            match key {
                "group" => spec.group = Some(value.to_string()),
                "version" => spec.version = Some(value.to_string()),
                "kind" => spec.kind = Some(value.to_string()),
                "path" => spec.path = value.to_string(),
                "create" => {
                    spec.create = match value {
                        "true" => true,
                        "false" => false,
                        _ => return Err(bad(line)),
                    }
                }
                _ => return Err(bad(line)),
            }
        }
        out.push(spec);
    }
    Ok(out)
}

/// The entries of a built-in table: its lines without comments and blank lines.
fn table_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Reads a list of field specs (`{group, version, kind, path, create}` maps); `what` names it
/// in messages.
pub(crate) fn specs_from_node(what: &str, node: &Node) -> Result<Vec<FieldSpec>> {
    specs_at(node).map_err(|e| {
        let key = match e.path.last() {
            Some(crate::yaml::path::PathSeg::Key(k)) => format!("{k}: "),
            _ => String::new(),
        };
        Error::new(
            ErrorKind::Kustomization,
            format!("{what}: {key}{}", e.message),
        )
    })
}

/// [`specs_from_node`], its error naming the wrong part by its path under `node`.
pub(crate) fn specs_at(
    node: &Node,
) -> std::result::Result<Vec<FieldSpec>, configurations::Misshapen> {
    use crate::yaml::path::PathSeg;
    use configurations::Misshapen;
    let Some(items) = node.as_seq() else {
        if node.is_null() {
            return Ok(Vec::new());
        }
        return Err(Misshapen::at(
            Vec::new(),
            format!(
                "expected a list of field specs, found a {}",
                node.kind_name()
            ),
        ));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(m) = item.as_map() else {
            return Err(Misshapen::at(
                vec![PathSeg::Index(i)],
                format!("a field spec must be a map, found a {}", item.kind_name()),
            ));
        };
        let mut spec = FieldSpec::default();
        for (k, v) in m {
            let text = || v.scalar_text().filter(|_| !v.is_null());
            match k.as_str() {
                "group" => spec.group = text(),
                "version" => spec.version = text(),
                "kind" => spec.kind = text(),
                "path" => spec.path = text().unwrap_or_default(),
                // A Go bool field: anything but a boolean (or null) fails kustomize's decode
                // (`json: cannot unmarshal string into Go struct field FieldSpec.create`).
                "create" => match v {
                    Node::Bool(b) => spec.create = *b,
                    Node::Null => spec.create = false,
                    other => {
                        let found = match other.scalar_text() {
                            Some(t) => format!("the {} \"{t}\"", other.kind_name()),
                            None => format!("a {}", other.kind_name()),
                        };
                        return Err(Misshapen::at(
                            vec![PathSeg::Index(i), PathSeg::Key(k.to_string())],
                            format!("expected true or false, found {found}"),
                        ));
                    }
                },
                // kustomize decodes these documents leniently (sigs.k8s.io/yaml without
                // strictness): other keys, such as a `name:` next to a kind, are ignored.
                _ => {}
            }
        }
        out.push(spec);
    }
    Ok(out)
}

fn parse_cluster_scoped(text: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for line in table_lines(text) {
        let pair = line.strip_prefix("- ").and_then(|l| l.split_once(' '));
        let Some((a, k)) = pair else {
            return Err(Error::new(
                ErrorKind::Yaml,
                format!("built-in table clusterscoped.yaml: cannot read the line {line:?}"),
            ));
        };
        out.push((a.to_string(), k.to_string()));
    }
    Ok(out)
}

/// Whether a field spec's group/version/kind (empty parts match anything) selects `gvk`.
pub(crate) fn spec_selects(spec: &FieldSpec, gvk: &Gvk) -> bool {
    let ok = |want: &Option<String>, have: &str| {
        want.as_deref().is_none_or(|w| w.is_empty() || w == have)
    };
    ok(&spec.group, &gvk.group) && ok(&spec.version, &gvk.version) && ok(&spec.kind, &gvk.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line reader of the built-in tables reads them as the YAML parser does.
    #[test]
    fn builtin_tables_read_as_yaml() {
        let tables = [
            include_str!("fieldspecs/commonlabels.yaml"),
            include_str!("fieldspecs/templatelabels.yaml"),
            include_str!("fieldspecs/commonannotations.yaml"),
            include_str!("fieldspecs/namespace.yaml"),
            include_str!("fieldspecs/nameprefix.yaml"),
            include_str!("fieldspecs/namesuffix.yaml"),
            include_str!("fieldspecs/images.yaml"),
            include_str!("fieldspecs/images-since-v5.7.yaml"),
            include_str!("fieldspecs/replicas.yaml"),
        ];
        for text in tables {
            let node = crate::yaml::parse::parse_one(text).unwrap();
            assert_eq!(
                parse_table("t", text).unwrap(),
                specs_from_node("t", &node).unwrap(),
                "{text}"
            );
        }
        let text = include_str!("fieldspecs/clusterscoped.yaml");
        let node = crate::yaml::parse::parse_one(text).unwrap();
        let yaml: Vec<(String, String)> = node
            .as_seq()
            .unwrap()
            .iter()
            .map(|n| {
                let (a, k) = n.as_str().unwrap().split_once(' ').unwrap();
                (a.to_string(), k.to_string())
            })
            .collect();
        assert_eq!(parse_cluster_scoped(text).unwrap(), yaml);
        assert!(parse_table("t", "- {path: a, create: yes}").is_err());
        assert!(parse_table("t", "- path: a").is_err());
    }

    #[test]
    fn builtin_tables_parse() {
        let t = FieldSpecTables::builtin().unwrap();
        assert_eq!(t.common_labels.len(), 32);
        assert_eq!(t.template_labels.len(), 10);
        assert_eq!(t.common_annotations.len(), 9);
        assert_eq!(t.namespace.len(), 3);
        assert_eq!(t.images.len(), 4);
        assert_eq!(t.replicas.len(), 4);
        assert_eq!(t.cluster_scoped.len(), 36);
        assert!(t.is_cluster_scoped(&Gvk::from_api_version(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole"
        )));
        assert!(!t.is_cluster_scoped(&Gvk::from_api_version("apps/v1", "Deployment")));
        assert!(t.is_cluster_scoped_parts("", "v1", "Namespace"));
        assert!(!t.is_cluster_scoped_parts("x", "v1", "Namespace"));
        assert!(!t.is_cluster_scoped_parts("rbac.authorization.k8s.io", "v2", "ClusterRole"));
        assert!(!t.is_cluster_scoped_parts("rbac.authorization.k8s.io", "", "ClusterRole"));
        assert!(!t.is_cluster_scoped_parts("", "v1", "ClusterRole"));
    }
}

#[cfg(test)]
mod pipeline_tests {
    use super::*;
    use crate::kustomization::{Image, Label, Replica, StringMap};
    use crate::resource::Resource;
    use crate::yaml::{EmitOptions, emit_documents, parse_documents};

    fn map(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    fn image(name: &str, new_name: Option<&str>, tag: Option<&str>, digest: Option<&str>) -> Image {
        Image {
            name: name.into(),
            new_name: new_name.map(Into::into),
            new_tag: tag.map(Into::into),
            digest: digest.map(Into::into),
            ..Image::default()
        }
    }

    /// Every transformer field on one set of objects, in kustomize's order; the expected text
    /// is `kubectl kustomize --reorder none` output for the same kustomization
    /// (testdata/all_fields.*: namespace prod, namePrefix pre-, nameSuffix -suf, commonLabels,
    /// two `labels` entries, commonAnnotations with `<&>`, three images, two replicas).
    #[test]
    fn all_fields_like_kubectl() {
        let tables = FieldSpecTables::builtin().unwrap();
        let mut rs: Vec<Resource> = parse_documents(include_str!("testdata/all_fields.in.yaml"))
            .unwrap()
            .into_iter()
            .map(|d| Resource::new(d.node, None))
            .collect();
        namespace::apply(&mut rs, "prod", &tables, None).unwrap();
        prefix_suffix::apply(&mut rs, "pre-", "-suf", &tables).unwrap();
        let labels = [
            Label {
                pairs: map(&[("tmpl", "yes")]),
                include_templates: true,
                ..Label::default()
            },
            Label {
                pairs: map(&[("plain", "1")]),
                ..Label::default()
            },
        ];
        labels::apply(
            &mut rs,
            Some(&map(&[("team", "a")])),
            &labels,
            &tables,
            None,
        )
        .unwrap();
        annotations::apply(&mut rs, &map(&[("note", "hello <&>")]), &tables, None).unwrap();
        let replicas = [
            Replica {
                name: "web".into(),
                count: 3,
            },
            Replica {
                name: "ss".into(),
                count: 2,
            },
        ];
        replicas::apply(&mut rs, &replicas, &tables).unwrap();
        let images = [
            image("nginx", Some("docker.io/library/nginx"), Some("1.25"), None),
            image("my.registry:5000/team/app", None, None, Some("sha256:ccc")),
            image("busybox", None, Some("2.0"), None),
        ];
        images::apply(&mut rs, &images, &tables, None).unwrap();
        let out = emit_documents(rs.iter().map(|r| &r.node), EmitOptions::default());
        assert_eq!(
            out.trim_end(),
            include_str!("testdata/all_fields.out.yaml").trim_end()
        );
        // Renames are recorded: the Deployment was `web` in no namespace.
        assert_eq!(rs[0].original_id().name, "web");
        assert_eq!(rs[0].original_id().namespace, "");
        assert_eq!(rs[0].name_prefixes, ["pre-"]);
        assert_eq!(rs[0].name_suffixes, ["-suf"]);
        // The Namespace object is never prefixed.
        assert!(rs[3].name_prefixes.is_empty());
    }
}

#[cfg(test)]
mod config_tests {
    use super::*;
    use crate::kustomization::{Image, StringMap};
    use crate::resource::Resource;
    use crate::yaml::{EmitOptions, emit_documents, parse::parse_one};

    // A `configurations:` file adding image and label places for a custom kind; expected
    // output from `kubectl kustomize` (commonLabels team=a, images nginx → tag 2).
    #[test]
    fn configurations_add_places() {
        let mut tables = FieldSpecTables::builtin().unwrap();
        let config = parse_one(
            "images:\n- kind: Pipeline\n  path: spec/steps[]/image\ncommonLabels:\n- kind: Pipeline\n  path: spec/selector/labels\n  create: true\nnameReference:\n- kind: ConfigMap\n  fieldSpecs:\n  - kind: Pipeline\n    path: spec/config\n",
        )
        .unwrap();
        tables.merge_config(&config).unwrap();
        assert_eq!(tables.images.len(), 5);
        let mut rs = vec![Resource::new(
            parse_one("apiVersion: example.com/v1\nkind: Pipeline\nmetadata:\n  name: p\nspec:\n  steps:\n  - image: nginx\n  - image: busybox:1\n").unwrap(),
            None,
        )];
        let team: StringMap = [("team".to_string(), "a".to_string())]
            .into_iter()
            .collect();
        labels::apply(&mut rs, Some(&team), &[], &tables, None).unwrap();
        let img = Image {
            name: "nginx".into(),
            new_tag: Some("2".into()),
            ..Image::default()
        };
        images::apply(&mut rs, &[img], &tables, None).unwrap();
        assert_eq!(
            emit_documents(rs.iter().map(|r| &r.node), EmitOptions::default()),
            "apiVersion: example.com/v1\nkind: Pipeline\nmetadata:\n  labels:\n    team: a\n  name: p\nspec:\n  selector:\n    labels:\n      team: a\n  steps:\n  - image: nginx:2\n  - image: busybox:1\n"
        );
    }

    #[test]
    fn merge_one_rules() {
        let spec = |path: &str, kind: Option<&str>, create: bool| FieldSpec {
            path: path.into(),
            kind: kind.map(Into::into),
            create,
            ..FieldSpec::default()
        };
        let mut t = vec![spec("spec/x", Some("Deployment"), true)];
        // Kind-less entry covers the Deployment one: not added; with another `create`: error.
        try_merge_one(&mut t, spec("spec/x", None, true)).unwrap();
        assert_eq!(t.len(), 1);
        assert!(try_merge_one(&mut t, spec("spec/x", None, false)).is_err());
        merge_one(&mut t, spec("spec/x", None, false));
        assert_eq!(t.len(), 1);
        // A narrower entry is new.
        let mut t = vec![spec("spec/x", None, true)];
        try_merge_one(&mut t, spec("spec/x", Some("Deployment"), false)).unwrap();
        assert_eq!(t.len(), 2);
    }
}
