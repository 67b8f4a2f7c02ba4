//! Resources and their identity: [`ResId`] (group, version, kind, namespace, name),
//! [`Resource`] (an object with its current and original id and where it came from), and
//! [`ResourceSet`] (insertion-ordered, indexed by id). Knows no kustomization fields.

mod build_annotations;
pub(crate) use build_annotations::behavior_name;
pub(crate) mod provenance;
pub(crate) mod scope;
pub(crate) mod selector;
pub(crate) mod shared;
pub(crate) mod string_maps;

pub(crate) use scope::{ClusterScoped, NOT_NAMESPACED, effective_namespace};
pub(crate) use shared::SharedEntry;

use std::fmt;

use crate::source::Location;
use crate::yaml::{Map, Node};

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
        let (group, version) = split_api_version(api_version);
        Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        }
    }

    /// The object's `apiVersion` and `kind`.
    pub fn of(node: &Node) -> Gvk {
        let (group, version, kind) = gvk_parts(node);
        Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        }
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

/// An `apiVersion` split into group and version (`apps/v1` -> `apps`, `v1`; `v1` -> ``, `v1`).
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// The object's group, version and kind, borrowed (empty when missing or not strings).
pub(crate) fn gvk_parts(node: &Node) -> (&str, &str, &str) {
    let [api_version, kind] = node
        .as_map()
        .map_or([None, None], |m| small_get(m, ["apiVersion", "kind"]));
    let (group, version) = split_api_version(text(api_version));
    (group, version, text(kind))
}

/// Gives a `metadata.name` or `metadata.namespace` written as a plain number or boolean
/// (`name: 80`, `namespace: 0x10`) its text, as a [`Node::Spelled`], so that ids read it as
/// kustomize does: kyaml's `RNode.GetName` and `GetNamespace` return the scalar's text
/// whatever its tag, while the value prints as it would (`namespace: 0x10` prints `16`, as
/// kustomize's output does). A value the reader already spelled keeps its source text
/// (`yaml::parse::Ctx`); a null, however written, is a plain null again (it has no text as
/// an id, and the stages that look for nulls look for [`Node::Null`]).
pub(crate) fn keep_id_text(node: &mut Node) {
    for key in ["name", "namespace"] {
        // Looked at first: taking a map to change it copies one the parse store shares
        // (`yaml::Map`), and most names are strings.
        let respell = |v: &Node| {
            matches!(v, Node::Bool(_) | Node::Int(_) | Node::Float(_))
                || matches!(v, Node::Spelled(s) if s.value.is_null())
        };
        if !node.get_path(&["metadata", key]).is_some_and(respell) {
            continue;
        }
        let Some(v) = node.get_mut("metadata").and_then(|m| m.get_mut(key)) else {
            continue;
        };
        match v {
            Node::Bool(_) | Node::Int(_) | Node::Float(_) => {
                let text = v.scalar_text().unwrap_or_default();
                let value = std::mem::take(v);
                *v = Node::Spelled(Box::new(crate::yaml::Spelled { value, text }));
            }
            Node::Spelled(s) if s.value.is_null() => *v = Node::Null,
            _ => {}
        }
    }
}

/// The text of an object's `metadata.name` or `metadata.namespace` (`key`) whatever scalar it
/// is: a string, the text kept for a number or boolean ([`keep_id_text`]), or a plain
/// number's or boolean's own (`name: 8080` read from a file). `None` when missing, null or
/// not a scalar.
pub(crate) fn id_field_text(node: &Node, key: &str) -> Option<String> {
    match node.get_path(&["metadata", key])? {
        n @ (Node::Bool(_) | Node::Int(_) | Node::Float(_)) => n.scalar_text(),
        n => n.id_text().map(str::to_owned),
    }
}

/// A string field's text ([`Node::id_text`]); empty when missing or not a string.
fn text(n: Option<&Node>) -> &str {
    n.and_then(Node::id_text).unwrap_or("")
}

/// The values of `keys` in `m`. An object's top level and its `metadata` hold a handful of
/// keys: one pass comparing them costs less than a hash lookup per key.
fn small_get<'a, const N: usize>(m: &'a Map, keys: [&str; N]) -> [Option<&'a Node>; N] {
    if m.len() > 8 {
        return keys.map(|k| m.get(k));
    }
    let mut out = [None; N];
    for (k, v) in m {
        if let Some(i) = keys.iter().position(|want| *want == k.as_str()) {
            out[i] = Some(v);
        }
    }
    out
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
        IdRef::of(node).to_id()
    }

    /// This id, borrowed.
    pub fn borrowed(&self) -> IdRef<'_> {
        IdRef {
            group: &self.gvk.group,
            version: &self.gvk.version,
            kind: &self.gvk.kind,
            namespace: &self.namespace,
            name: &self.name,
        }
    }
}

/// A [`ResId`] borrowed from an object or an id: for comparing ids without building owned
/// strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct IdRef<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

impl<'a> IdRef<'a> {
    /// The object's id (its `apiVersion`, `kind`, `metadata.namespace` and `metadata.name`;
    /// each empty when missing or not a string), as [`ResId::of`] reads it.
    pub fn of(node: &'a Node) -> IdRef<'a> {
        let Some(m) = node.as_map() else {
            return IdRef::default();
        };
        let [api_version, kind, meta] = small_get(m, ["apiVersion", "kind", "metadata"]);
        let [namespace, name] = meta
            .and_then(Node::as_map)
            .map_or([None, None], |m| small_get(m, ["namespace", "name"]));
        let (group, version) = split_api_version(text(api_version));
        IdRef {
            group,
            version,
            kind: text(kind),
            namespace: text(namespace),
            name: text(name),
        }
    }

    /// Whether the group, version and kind are `gvk`'s.
    pub fn gvk_is(self, gvk: &Gvk) -> bool {
        self.group == gvk.group && self.version == gvk.version && self.kind == gvk.kind
    }

    pub fn gvk(self) -> Gvk {
        Gvk {
            group: self.group.to_string(),
            version: self.version.to_string(),
            kind: self.kind.to_string(),
        }
    }

    pub fn to_id(self) -> ResId {
        ResId {
            gvk: self.gvk(),
            namespace: self.namespace.to_string(),
            name: self.name.to_string(),
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
    /// Set on generated resources: kustomize's name of the generator's `behavior`
    /// (the base object's once merged into or replacing one), which it keeps in its
    /// `generatorBehavior` build annotation ([`build_annotations`]).
    pub generator_behavior: Option<&'static str>,
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
    /// Set once a JSON 6902 patch ran over the resource: kustomize's JSON round trip then
    /// wrote every null as `null`, so none is the empty kind a strategic merge patch drops
    /// (`render::patches`).
    pub json_round_trip: bool,
    /// Where each field's value was set (issue 29), recorded only when the render's
    /// `provenance` option is on; `None` otherwise.
    pub(crate) provenance: Option<Box<provenance::Provenance>>,
}

impl Resource {
    pub fn new(node: Node, origin: Option<Location>) -> Resource {
        Resource {
            node,
            origin,
            prev_ids: Vec::new(),
            needs_hash_suffix: false,
            generator_behavior: None,
            name_prefixes: Vec::new(),
            name_suffixes: Vec::new(),
            ref_var_names: Vec::new(),
            shared_entries: Vec::new(),
            json_round_trip: false,
            provenance: None,
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

    /// Sets `metadata.name` or `metadata.namespace` (`key`) back to `text` after a strategic
    /// merge patch, as kustomize's `Resource.ApplySmPatch` does with `SetName` and
    /// `SetNamespace`: an untagged scalar ([`crate::yaml::resolve::untagged_over`]), so a value that
    /// was a number (`namespace: 0x10`) prints as one (`16`) and keeps `text` for the id.
    pub fn reset_id_field(&mut self, key: &str, text: &str) {
        let slot = self.node.ensure_path(&["metadata", key]);
        *slot = match crate::yaml::resolve::untagged_over(slot, text.to_string()) {
            s @ Node::Str(_) => s,
            value => Node::Spelled(Box::new(crate::yaml::Spelled {
                value,
                text: text.to_string(),
            })),
        };
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

    /// The current id, borrowed from the object.
    pub fn id_ref(&self) -> IdRef<'_> {
        IdRef::of(&self.node)
    }

    /// The id the resource had when it was first read or generated, borrowed.
    pub fn original_id_ref(&self) -> IdRef<'_> {
        match self.prev_ids.first() {
            Some(id) => id.borrowed(),
            None => self.id_ref(),
        }
    }

    pub fn gvk(&self) -> Gvk {
        Gvk::of(&self.node)
    }

    pub fn name(&self) -> &str {
        Resource::name_of(&self.node)
    }

    /// An object's `metadata.name` as its id reads it; empty when missing or not a string.
    pub fn name_of(node: &Node) -> &str {
        text(node.get_path(&["metadata", "name"]))
    }

    pub fn namespace(&self) -> &str {
        text(self.node.get_path(&["metadata", "namespace"]))
    }

    pub fn kind(&self) -> &str {
        self.node.str_at(&["kind"]).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    #[test]
    fn id_ref_reads_strings_only() {
        let small = parse_one(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: 7}\n",
        )
        .unwrap();
        let id = IdRef::of(&small);
        assert_eq!(
            (id.group, id.version, id.kind, id.namespace, id.name),
            ("apps", "v1", "Deployment", "", "web")
        );
        // More keys than the scan takes: looked up by hash.
        let mut text = String::from("kind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\n");
        for i in 0..10 {
            text.push_str(&format!("k{i}: x\n"));
        }
        let big = parse_one(&text).unwrap();
        assert_eq!(ResId::of(&big).to_string(), "~G_v1_ConfigMap|~X|c");
        assert_eq!(IdRef::of(&Node::Null), IdRef::default());
    }
}
