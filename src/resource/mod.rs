//! Resources and their identity: [`ResId`] (group, version, kind, namespace, name),
//! [`Resource`] (an object with its current and original id and where it came from), and
//! [`ResourceSet`] (insertion-ordered, indexed by id). Knows no kustomization fields.

use std::fmt;

use crate::source::Location;
use crate::yaml::Node;

/// Group, version and kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl Gvk {
    /// Splits an `apiVersion` (`apps/v1`, `v1`) and a kind.
    pub fn from_api_version(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.to_string()),
        };
        Gvk {
            group,
            version,
            kind: kind.to_string(),
        }
    }

    /// The object's `apiVersion` and `kind`.
    pub fn of(node: &Node) -> Gvk {
        Gvk::from_api_version(
            node.str_at(&["apiVersion"]).unwrap_or(""),
            node.str_at(&["kind"]).unwrap_or(""),
        )
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

impl fmt::Display for Gvk {
    /// kustomize's form: `apps_v1_Deployment`, `~G_v1_ConfigMap` for the core group.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = if self.group.is_empty() {
            "~G"
        } else {
            &self.group
        };
        let v = if self.version.is_empty() {
            "~V"
        } else {
            &self.version
        };
        let k = if self.kind.is_empty() {
            "~K"
        } else {
            &self.kind
        };
        write!(f, "{g}_{v}_{k}")
    }
}

/// A resource's identity.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ResId {
    pub gvk: Gvk,
    pub namespace: String,
    pub name: String,
}

impl ResId {
    pub fn of(node: &Node) -> ResId {
        ResId {
            gvk: Gvk::of(node),
            namespace: node
                .str_at(&["metadata", "namespace"])
                .unwrap_or("")
                .to_string(),
            name: node.str_at(&["metadata", "name"]).unwrap_or("").to_string(),
        }
    }
}

impl fmt::Display for ResId {
    /// kustomize's `ResId.String()` form: `apps_v1_Deployment|ns|name` (`~X` for empty parts).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = if self.namespace.is_empty() {
            "~X"
        } else {
            &self.namespace
        };
        let name = if self.name.is_empty() {
            "~N"
        } else {
            &self.name
        };
        write!(f, "{}|{}|{}", self.gvk, ns, name)
    }
}

/// One object in the pipeline.
#[derive(Clone, Debug)]
pub struct Resource {
    pub node: Node,
    /// Where the document starts in its file (for diagnostics).
    pub origin: Option<Location>,
    /// The ids this resource had before each rename (prefix/suffix, namespace, hash suffix),
    /// oldest first; empty when it was never renamed. kustomize keeps the same history in its
    /// `config.kubernetes.io/previous{Names,Namespaces,Kinds}` build annotations
    /// (`api/resource/resource.go`, `StorePreviousId`); name references (issue 4) follow it.
    pub prev_ids: Vec<ResId>,
    /// Set on resources made by a generator without `disableNameSuffixHash`: the root appends
    /// the content hash to their names (`generate::apply_hash_suffixes`). kustomize tracks this
    /// with its internal `needs-hash` annotation.
    pub needs_hash_suffix: bool,
    /// The `namePrefix`es (`nameSuffix`es) applied to this resource, innermost kustomization
    /// first: kustomize's `config.kubernetes.io/prefixes` (`suffixes`) build annotations, used by
    /// name references to prefer the referral renamed like its referrer
    /// (`Resource.PrefixesSuffixesEquals`).
    pub name_prefixes: Vec<String>,
    pub name_suffixes: Vec<String>,
    /// Names of the `vars:` bound to this resource (kustomize's `Resource.refVarNames`):
    /// the root reads their values from it (`transform::vars`).
    pub ref_var_names: Vec<String>,
    /// Label/annotation values that kustomize shares between several maps of this object
    /// (see [`SharedEntry`]).
    pub shared_entries: Vec<SharedEntry>,
}

impl Resource {
    pub fn new(node: Node, origin: Option<Location>) -> Resource {
        Resource {
            node,
            origin,
            prev_ids: Vec::new(),
            needs_hash_suffix: false,
            name_prefixes: Vec::new(),
            name_suffixes: Vec::new(),
            ref_var_names: Vec::new(),
            shared_entries: Vec::new(),
        }
    }

    /// The id the resource had when it was first read or generated.
    pub fn original_id(&self) -> ResId {
        self.prev_ids.first().cloned().unwrap_or_else(|| self.id())
    }

    /// Records the current id in the rename history; call before changing the name or
    /// namespace.
    pub fn store_previous_id(&mut self) {
        let id = self.id();
        self.prev_ids.push(id);
    }

    /// Sets `metadata.name` (creating `metadata` when missing).
    pub fn set_name(&mut self, name: &str) {
        *self.node.ensure_path(&["metadata", "name"]) = Node::str(name);
    }

    /// Sets `metadata.namespace` (creating `metadata` when missing).
    pub fn set_namespace(&mut self, namespace: &str) {
        *self.node.ensure_path(&["metadata", "namespace"]) = Node::str(namespace);
    }

    pub fn id(&self) -> ResId {
        ResId::of(&self.node)
    }

    pub fn gvk(&self) -> Gvk {
        Gvk::of(&self.node)
    }

    pub fn name(&self) -> &str {
        self.node.str_at(&["metadata", "name"]).unwrap_or("")
    }

    pub fn namespace(&self) -> &str {
        self.node.str_at(&["metadata", "namespace"]).unwrap_or("")
    }

    pub fn kind(&self) -> &str {
        self.node.str_at(&["kind"]).unwrap_or("")
    }
}

/// One step of a path into an object: a map key or a list index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A label or annotation entry that kustomize created in several maps of one object with a
/// single shared YAML node: its labels/annotations transformers add a missing key to every map
/// of their field specs with the same node (`filtersutil.SetEntry` makes the node once per
/// object and key; kyaml's `FieldSetter` appends it as is), so a later transformer that sets
/// the key in any one of those maps changes all of them. ply keeps the maps here and the
/// `transform::labels` setter replays that.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedEntry {
    pub key: String,
    /// Paths of the maps (e.g. `metadata/labels`, `spec/template/metadata/labels`).
    pub maps: Vec<Vec<Step>>,
}
