//! Builtin transformer plugin configurations (entries of `transformers:` with
//! `apiVersion: builtin`) for the transformers this module owns: NamespaceTransformer,
//! PrefixTransformer, SuffixTransformer, PrefixSuffixTransformer (both), LabelTransformer, AnnotationsTransformer,
//! ImageTagTransformer and ReplicaCountTransformer (kustomize v5.5 has no builtin
//! SortOrderTransformer; the build refuses it). Unlike the kustomization fields, a plugin
//! configuration brings its own `fieldSpecs` (the default tables do not apply). Decoding follows the plugins' configuration types in
//! `api/internal/builtins/*.go`; unknown fields are ignored as kustomize ignores them.

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::kustomization::{FieldSpec, Image, Replica, StringMap};
use crate::resource::Resource;
use crate::yaml::Node;

use super::{FieldSpecTables, specs_from_node};

/// Applies one builtin transformer configuration. Returns `Ok(false)` when `config` is not one
/// of the kinds listed above (patches and replacements live elsewhere).
#[allow(clippy::ptr_arg)] // reason: the build passes its accumulated Vec; the signature stays stable for it
pub(crate) fn apply_config(
    config: &Node,
    resources: &mut Vec<Resource>,
    tables: &FieldSpecTables,
    _warnings: &mut Warnings,
) -> Result<bool> {
    if config.str_at(&["apiVersion"]) != Some("builtin") {
        return Ok(false);
    }
    let kind = config.str_at(&["kind"]).unwrap_or("");
    let err = |msg: String| Error::new(ErrorKind::Transformer, format!("builtin {kind}: {msg}"));
    let specs = || -> Result<Vec<FieldSpec>> {
        specs_from_node(
            "fieldSpecs",
            config.get("fieldSpecs").unwrap_or(&Node::Null),
        )
    };
    match kind {
        "NamespaceTransformer" => {
            let ns = config.str_at(&["metadata", "namespace"]).unwrap_or("");
            let subjects = match config.str_at(&["setRoleBindingSubjects"]).unwrap_or("") {
                "" | "defaultOnly" => super::namespace::SubjectMode::DefaultOnly,
                "allServiceAccounts" => super::namespace::SubjectMode::AllServiceAccounts,
                "none" => super::namespace::SubjectMode::None,
                other => {
                    return Err(err(format!(
                        "invalid value {other:?} for setRoleBindingSubjects: must be one of \"defaultOnly\", \"none\" or \"allServiceAccounts\""
                    )));
                }
            };
            let opts = super::namespace::Options {
                unset_only: matches!(config.get("unsetOnly"), Some(Node::Bool(true))),
                subjects,
            };
            super::namespace::apply_with(resources, ns, &specs()?, tables, opts)?;
        }
        // PrefixSuffixTransformer is kustomize's MultiTransformer: the Prefix then the Suffix
        // transformer, both configured from the same document
        // (`api/internal/plugins/builtinhelpers/builtins.go`).
        "PrefixTransformer" | "SuffixTransformer" | "PrefixSuffixTransformer" => {
            if config.get("fieldSpecs").is_none_or(Node::is_null) {
                return Err(err("fieldSpecs is not expected to be nil".into()));
            }
            let specs = specs()?;
            let affix = |key: &str| {
                config
                    .get(key)
                    .and_then(Node::scalar_text)
                    .unwrap_or_default()
            };
            if kind != "SuffixTransformer" {
                let prefix = affix("prefix");
                if !prefix.is_empty() {
                    super::prefix_suffix::add_prefix(resources, &prefix, &specs)?;
                }
            }
            if kind != "PrefixTransformer" {
                let suffix = affix("suffix");
                if !suffix.is_empty() {
                    super::prefix_suffix::add_suffix(resources, &suffix, &specs)?;
                }
            }
        }
        "LabelTransformer" | "AnnotationsTransformer" => {
            let key = if kind == "LabelTransformer" {
                "labels"
            } else {
                "annotations"
            };
            let pairs = string_map(config.get(key)).map_err(|m| err(format!("{key}: {m}")))?;
            super::labels::set_pairs(resources, &pairs, &specs()?)?;
        }
        "ImageTagTransformer" => {
            let image: Image =
                decode(config.get("imageTag")).map_err(|m| err(format!("imageTag: {m}")))?;
            super::images::apply_one(resources, &image, &specs()?)?;
        }
        "ReplicaCountTransformer" => {
            let replica: Replica =
                decode(config.get("replica")).map_err(|m| err(format!("replica: {m}")))?;
            super::replicas::apply_one(resources, &replica, &specs()?)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn string_map(node: Option<&Node>) -> std::result::Result<StringMap, String> {
    let mut out = StringMap::new();
    match node {
        None | Some(Node::Null) => Ok(out),
        Some(Node::Map(m)) => {
            for (k, v) in m {
                let text = if v.is_null() {
                    String::new()
                } else {
                    v.scalar_text().ok_or("values must be strings")?
                };
                out.insert(k.clone(), text);
            }
            Ok(out)
        }
        Some(other) => Err(format!("expected a map, found a {}", other.kind_name())),
    }
}

/// Decodes part of a builtin plugin configuration leniently, as sigs.k8s.io/yaml's
/// `yaml.Unmarshal` (the plugins' `Config`) does: an integer or boolean for a string is its text.
fn decode<T: serde::de::DeserializeOwned + Default>(
    node: Option<&Node>,
) -> std::result::Result<T, String> {
    match node {
        None | Some(Node::Null) => Ok(T::default()),
        Some(n) => crate::yaml::de::from_node(n).map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{EmitOptions, emit_documents, parse_documents};

    /// `transformers:` with one configuration of each kind; expected output from
    /// `kubectl kustomize` (which then sorts in its legacy order).
    #[test]
    fn builtin_configs_like_kubectl() {
        let tables = FieldSpecTables::builtin().unwrap();
        let mut rs: Vec<Resource> = parse_documents(include_str!("testdata/builtin.in.yaml"))
            .unwrap()
            .into_iter()
            .map(|d| Resource::new(d.node, None))
            .collect();
        let mut w = Warnings::default();
        for doc in parse_documents(include_str!("testdata/builtin.config.yaml")).unwrap() {
            assert!(apply_config(&doc.node, &mut rs, &tables, &mut w).unwrap());
        }
        super::super::sort::order(&mut rs, &super::super::sort::default_legacy());
        let out = emit_documents(rs.iter().map(|r| &r.node), EmitOptions::default());
        assert_eq!(out, include_str!("testdata/builtin.out.yaml"));
    }

    #[test]
    fn other_kinds_and_errors() {
        let tables = FieldSpecTables::builtin().unwrap();
        let mut w = Warnings::default();
        let mut rs = Vec::new();
        let patch =
            crate::yaml::parse::parse_one("apiVersion: builtin\nkind: PatchTransformer\n").unwrap();
        assert!(!apply_config(&patch, &mut rs, &tables, &mut w).unwrap());
        let bad = crate::yaml::parse::parse_one(
            "apiVersion: builtin\nkind: PrefixTransformer\nprefix: x-\n",
        )
        .unwrap();
        let e = apply_config(&bad, &mut rs, &tables, &mut w).unwrap_err();
        assert_eq!(
            e.message,
            "builtin PrefixTransformer: fieldSpecs is not expected to be nil"
        );
        let bad = crate::yaml::parse::parse_one(
            "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata: {namespace: n}\nsetRoleBindingSubjects: some\n",
        )
        .unwrap();
        assert!(apply_config(&bad, &mut rs, &tables, &mut w).is_err());
    }
}

#[cfg(test)]
mod prefix_suffix_tests {
    use super::*;
    use crate::yaml::{EmitOptions, emit_documents, parse::parse_one, parse_documents};

    // `kubectl kustomize` with this PrefixSuffixTransformer renames only the ConfigMap, to
    // `p-a-s` (the `name:` key in the field spec is ignored).
    #[test]
    fn prefix_suffix_transformer() {
        let tables = FieldSpecTables::builtin().unwrap();
        let mut rs: Vec<Resource> = parse_documents(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n",
        )
        .unwrap()
        .into_iter()
        .map(|d| Resource::new(d.node, None))
        .collect();
        let cfg = parse_one(
            "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: x\nprefix: p-\nsuffix: -s\nfieldSpecs:\n- path: metadata/name\n  kind: ConfigMap\n  name: ignored\n",
        )
        .unwrap();
        assert!(apply_config(&cfg, &mut rs, &tables, &mut Warnings::default()).unwrap());
        assert_eq!(
            emit_documents(rs.iter().map(|r| &r.node), EmitOptions::default()),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p-a-s\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n"
        );
        assert_eq!(rs[0].name_prefixes, ["p-"]);
        assert_eq!(rs[0].name_suffixes, ["-s"]);
    }
}
