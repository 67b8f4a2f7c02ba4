//! An Argo CD `Application` as the repo server is asked to render it: its name, namespaces,
//! project, sources (each a YAML node until its parameter files are merged into it), sync
//! policy, and where in its file each field is written.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::load::locate_from;
use crate::source::{Location, SourceFile};
use crate::yaml::de::from_node_strict;
use crate::yaml::path::PathSeg;
use crate::yaml::{Node, parse_documents};

/// The API group and kind of an Application.
pub(crate) const API_VERSION: &str = "argoproj.io/v1alpha1";

/// One Application document.
#[derive(Clone, Debug)]
pub(crate) struct Application {
    pub name: String,
    /// `metadata.namespace` (empty when not written).
    pub namespace: String,
    /// `spec.project`, `default` when empty (`ApplicationSpec.GetProject`).
    pub project: String,
    /// `spec.destination.namespace`: `ARGOCD_APP_NAMESPACE` and the tracking id's default.
    pub dest_namespace: String,
    /// `spec.source`, or each of `spec.sources`.
    pub sources: Vec<Node>,
    /// Whether the sources came from `spec.sources`.
    pub multi_source: bool,
    pub sync: SyncPolicy,
    pub file: Arc<SourceFile>,
    /// Where the document starts in `file`.
    pub offset: usize,
    /// Where the Application's own fields sit in that document: nothing for an Application,
    /// `spec.template` for one an ApplicationSet generates.
    pub path_prefix: Vec<PathSeg>,
}

/// `spec.syncPolicy.automated`: whether Argo CD syncs by itself, and then whether it prunes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncPolicy {
    Manual,
    Automated { prune: bool },
}

/// One source after its parameter files were merged (`v1alpha1.ApplicationSource`, the fields
/// the repo server reads for a git source).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Source {
    #[serde(rename = "repoURL")]
    pub repo_url: String,
    pub path: String,
    pub target_revision: String,
    pub chart: String,
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub kustomize: Option<Kustomize>,
    pub helm: Option<Node>,
    pub directory: Option<Directory>,
    pub plugin: Option<Node>,
}

/// `spec.source.kustomize` (`ApplicationSourceKustomize`: every field it has).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Kustomize {
    pub name_prefix: String,
    pub name_suffix: String,
    pub images: Vec<String>,
    pub common_labels: BTreeMap<String, String>,
    pub version: String,
    pub common_annotations: BTreeMap<String, String>,
    pub force_common_labels: bool,
    pub force_common_annotations: bool,
    pub namespace: String,
    pub common_annotations_envsubst: bool,
    pub replicas: Vec<Replica>,
    pub patches: Vec<Node>,
    pub components: Vec<String>,
    pub ignore_missing_components: bool,
    pub label_without_selector: bool,
    pub kube_version: String,
    pub api_versions: Vec<String>,
    pub label_include_templates: bool,
}

/// `KustomizeReplica`: a name and an int-or-string count.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Replica {
    pub name: String,
    pub count: Node,
}

/// `spec.source.directory`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Directory {
    pub recurse: bool,
    pub include: String,
    pub exclude: String,
    pub disable_extension_filter: bool,
    pub jsonnet: Option<Node>,
}

/// The source types the repo server knows (`ApplicationSourceType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SourceType {
    Kustomize,
    Helm,
    Directory,
    Plugin,
}

impl SourceType {
    pub(crate) fn name(self) -> &'static str {
        match self {
            SourceType::Kustomize => "Kustomize",
            SourceType::Helm => "Helm",
            SourceType::Directory => "Directory",
            SourceType::Plugin => "Plugin",
        }
    }
}

impl Source {
    /// The type the source names itself (`ApplicationSource.ExplicitType`): any of the four
    /// blocks, even empty; two of them are an error.
    pub(crate) fn explicit_type(&self) -> std::result::Result<Option<SourceType>, String> {
        let mut types = Vec::new();
        if self.kustomize.is_some() {
            types.push(SourceType::Kustomize);
        }
        if self.helm.is_some() {
            types.push(SourceType::Helm);
        }
        if self.directory.is_some() {
            types.push(SourceType::Directory);
        }
        if self.plugin.is_some() {
            types.push(SourceType::Plugin);
        }
        match types.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => Err(format!(
                "multiple application sources defined: {}",
                many.iter().map(|t| t.name()).collect::<Vec<_>>().join(",")
            )),
        }
    }
}

impl Application {
    /// Every Application in a YAML file (other documents are skipped).
    pub(crate) fn read_all(path: &Path, text: &str) -> Result<Vec<Application>> {
        let file = SourceFile::new(path, text);
        let docs = parse_documents(text).map_err(|e| {
            Error::new(ErrorKind::Yaml, e.message.clone())
                .at_opt(e.offset.map(|o| Location::line_at(file.clone(), o)))
        })?;
        let mut out = Vec::new();
        for doc in docs {
            if is_application(&doc.node) {
                out.push(Application::from_node(&doc.node, file.clone(), doc.offset)?);
            }
        }
        Ok(out)
    }

    /// The Application of one document.
    pub(crate) fn from_node(
        node: &Node,
        file: Arc<SourceFile>,
        offset: usize,
    ) -> Result<Application> {
        let text = |path: &[&str]| node.str_at(path).unwrap_or("").to_string();
        let name = text(&["metadata", "name"]);
        let at = |path: &[&str]| {
            let segs: Vec<PathSeg> = path.iter().map(|k| PathSeg::Key(k.to_string())).collect();
            locate_from(&file, offset, &segs)
        };
        if name.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidResource,
                "an Application without metadata.name",
            )
            .at(at(&["metadata"])));
        }
        let (sources, multi_source) = match (
            node.get_path(&["spec", "sources"]),
            node.get_path(&["spec", "source"]),
        ) {
            (Some(Node::Seq(list)), _) if !list.is_empty() => (list.clone(), true),
            (_, Some(single @ Node::Map(_))) => (vec![single.clone()], false),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidResource,
                    format!("Application '{name}' has neither spec.source nor spec.sources"),
                )
                .at(at(&["spec"])));
            }
        };
        let project = Some(text(&["spec", "project"])).filter(|p| !p.is_empty());
        let sync = match node.get_path(&["spec", "syncPolicy", "automated"]) {
            Some(Node::Map(m)) if m.get("enabled").and_then(bool_of) != Some(false) => {
                SyncPolicy::Automated {
                    prune: m.get("prune").and_then(bool_of).unwrap_or(false),
                }
            }
            _ => SyncPolicy::Manual,
        };
        Ok(Application {
            namespace: text(&["metadata", "namespace"]),
            project: project.unwrap_or_else(|| "default".into()),
            dest_namespace: text(&["spec", "destination", "namespace"]),
            name,
            sources,
            multi_source,
            sync,
            file,
            offset,
            path_prefix: Vec::new(),
        })
    }

    /// `Application.InstanceName`: the name, or `<namespace>_<name>` outside the control-plane
    /// namespace (`pkg/apis/application/v1alpha1/types.go`).
    pub(crate) fn instance_name(&self, control_plane: &str) -> String {
        if self.namespace.is_empty() || self.namespace == control_plane {
            self.name.clone()
        } else {
            format!("{}_{}", self.namespace, self.name)
        }
    }

    /// The path of source `i` from the document root.
    pub(crate) fn source_path(&self, i: usize) -> Vec<PathSeg> {
        let mut p = self.path_prefix.clone();
        p.push(PathSeg::Key("spec".into()));
        if self.multi_source {
            p.push(PathSeg::Key("sources".into()));
            p.push(PathSeg::Index(i));
        } else {
            p.push(PathSeg::Key("source".into()));
        }
        p
    }

    /// Where a field of source `i` is written (`kustomize`, `commonLabels`, …), or the nearest
    /// part of it that is.
    pub(crate) fn locate(&self, i: usize, fields: &[&str]) -> Location {
        let mut p = self.source_path(i);
        p.extend(fields.iter().map(|f| PathSeg::Key(f.to_string())));
        locate_from(&self.file, self.offset, &p)
    }

    /// Decodes source `i` after its parameter files were merged into `node`.
    pub(crate) fn decode_source(&self, i: usize, node: &Node) -> Result<Source> {
        from_node_strict::<Source>(node).map_err(|e| {
            let mut p = self.source_path(i);
            p.extend(e.path.iter().cloned());
            Error::new(
                ErrorKind::InvalidResource,
                format!("Application '{}': {}", self.name, e.message),
            )
            .at(locate_from(&self.file, self.offset, &p))
        })
    }
}

fn bool_of(n: &Node) -> Option<bool> {
    match n.unspelled() {
        Node::Bool(b) => Some(*b),
        _ => None,
    }
}

/// Whether a document is an `argoproj.io/v1alpha1` Application.
pub(crate) fn is_application(node: &Node) -> bool {
    node.str_at(&["apiVersion"]) == Some(API_VERSION)
        && node.str_at(&["kind"]) == Some("Application")
}
