//! The build annotations kustomize keeps in an object's `metadata.annotations` while it builds
//! (its `internal.config.kubernetes.io/` keys), computed from what ply tracks beside the object:
//! the one place that knows their names and values. Only a JSON 6902 patch can see them.

use super::Resource;
use super::scope::{ClusterScoped, effective_namespace};

/// The prefix of kustomize's internal annotations (`kioutil.internalPrefix`, kyaml).
const INTERNAL: &str = "internal.config.kubernetes.io/";

/// kustomize's name for a generator behavior (`types.GenerationBehavior.String`,
/// `api/types/genargs.go`): `create`, `merge` and `replace` as written, anything else
/// (absent included) `unspecified` (`types.NewGenerationBehavior`).
pub(crate) fn behavior_name(written: Option<&str>) -> &'static str {
    match written.unwrap_or("") {
        "create" => "create",
        "merge" => "merge",
        "replace" => "replace",
        _ => "unspecified",
    }
}

impl Resource {
    /// The internal annotations kustomize's copy of this object holds now, sorted by key:
    /// - `previousNames`, `previousNamespaces`, `previousKinds`: the rename history, one
    ///   comma-separated entry per `StorePreviousId` (namespaces as `EffectiveNamespace` gives
    ///   them), `api/resource/resource.go`;
    /// - `prefixes`, `suffixes`: `AddNamePrefix` / `AddNameSuffix`;
    /// - `needsHashSuffix: enabled`: `EnableHashSuffix`, until the root appends the hash;
    /// - `generatorBehavior`: `SetBehavior`, on every generated object.
    ///
    /// kustomize removes them all before it prints (`resmap.RemoveBuildAnnotations`).
    pub(crate) fn build_annotations(
        &self,
        cluster_scoped: ClusterScoped<'_>,
    ) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut put = |key: &str, value: String| out.push((format!("{INTERNAL}{key}"), value));
        if let Some(behavior) = self.generator_behavior {
            put("generatorBehavior", behavior.to_string());
        }
        if self.needs_hash_suffix {
            put("needsHashSuffix", "enabled".to_string());
        }
        if !self.name_prefixes.is_empty() {
            put("prefixes", self.name_prefixes.join(","));
        }
        if !self.prev_ids.is_empty() {
            let join = |f: &dyn Fn(&super::ResId) -> String| {
                self.prev_ids.iter().map(f).collect::<Vec<_>>().join(",")
            };
            put("previousKinds", join(&|id| id.gvk.kind.clone()));
            put("previousNames", join(&|id| id.name.clone()));
            put(
                "previousNamespaces",
                join(&|id| effective_namespace(&id.namespace, cluster_scoped(&id.gvk)).to_string()),
            );
        }
        if !self.name_suffixes.is_empty() {
            put("suffixes", self.name_suffixes.join(","));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Gvk;
    use crate::yaml::parse::parse_one;

    fn res(text: &str) -> Resource {
        Resource::new(parse_one(text).unwrap(), None)
    }

    #[test]
    fn an_object_read_as_is_has_none() {
        let r = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n");
        assert!(r.build_annotations(&|_: &Gvk| false).is_empty());
    }

    // The values `kubectl kustomize` (v5.5.0 and v5.8.1) shows when a JSON patch copies
    // `/metadata/annotations` of a generated ConfigMap under `nameSuffix: -s`, then patched
    // (`patches:` stores the id once more).
    #[test]
    fn a_renamed_generated_object_has_its_history() {
        let mut r = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gen}\n");
        r.needs_hash_suffix = true;
        r.generator_behavior = Some(behavior_name(None));
        r.store_previous_id();
        r.set_name("gen-s");
        r.name_suffixes.push("-s".into());
        r.store_previous_id();
        let got = r.build_annotations(&|_: &Gvk| false);
        let want = [
            ("generatorBehavior", "unspecified"),
            ("needsHashSuffix", "enabled"),
            ("previousKinds", "ConfigMap,ConfigMap"),
            ("previousNames", "gen,gen-s"),
            ("previousNamespaces", "default,default"),
            ("suffixes", "-s"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(k, v)| (format!("{INTERNAL}{k}"), v.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_cluster_scoped_object_has_no_namespace() {
        let mut r = res("apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n");
        r.store_previous_id();
        let got = r.build_annotations(&|g: &Gvk| g.kind == "Namespace");
        assert!(got.contains(&(
            format!("{INTERNAL}previousNamespaces"),
            "_non_namespaceable_".to_string()
        )));
    }

    #[test]
    fn behaviors_are_named_as_kustomize_names_them() {
        assert_eq!(behavior_name(Some("create")), "create");
        assert_eq!(behavior_name(Some("Merge")), "unspecified");
        assert_eq!(behavior_name(Some("")), "unspecified");
        assert_eq!(behavior_name(Some("replace")), "replace");
    }
}
