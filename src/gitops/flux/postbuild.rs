//! What kustomize-controller does with the built resources before it applies them, in its
//! order (kustomization_controller.go `build` and `apply`): an encrypted Secret without
//! `spec.decryption` fails; post-build substitution per resource (fluxcd/pkg/kustomize
//! `SubstituteVariables`, kustomize_varsub.go) on its YAML text, which is then read again;
//! the objects read back as ssa's `ReadObjects` reads them (Lists expanded, kustomize's own
//! `Kustomization` documents dropped); the owner labels (ssa `SetOwnerLabels`); and
//! `spec.commonMetadata` (ssa/utils `SetCommonMetadata`). SOPS ciphertext is kept as it is,
//! never decrypted.

use base64::Engine as _;

use crate::diag::{Error, ErrorKind, Result};
use crate::fasthash::FastMap;
use crate::resource::Resource;
use crate::yaml::{EmitOptions, Node, emit_document};

use super::{Context, GROUP, Manifest, envsubst, field};

/// The label or annotation that turns substitution off for one resource.
const SUBSTITUTE_KEY: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// Finds the ConfigMap or Secret `KIND NS/NAME` a `substituteFrom` reference names, where the
/// controller would: in the Kustomization's cluster ([`super::cluster`]) or a `--vars` file.
pub(super) type Lookup<'a> = dyn Fn(&str, &str, &str) -> Result<Option<Node>> + 'a;

/// The post-build steps over a build's resources.
pub(super) fn run(
    resources: Vec<Resource>,
    m: &Manifest,
    ctx: &Context<'_>,
    lookup: &Lookup<'_>,
) -> Result<Vec<Resource>> {
    let post_build = m.node.get_path(&["spec", "postBuild"]).is_some();
    let decryption = m.node.get_path(&["spec", "decryption"]).is_some();
    let mut vars: Option<FastMap<String, String>> = None;
    let mut out = Vec::with_capacity(resources.len());
    for mut r in resources {
        check_object(&r)?;
        if !decryption && is_encrypted_secret(&r.node) {
            return Err(Error::new(
                ErrorKind::InvalidResource,
                format!(
                    "Secret/{}/{} is SOPS encrypted, configuring decryption is required for this secret to be reconciled",
                    r.namespace(),
                    r.name()
                ),
            )
            .at_opt(r.origin.clone())
            .with_related(
                Error::new(ErrorKind::InvalidResource, "this Kustomization has no spec.decryption")
                    .at(m.at.clone()),
            )
            .help("set spec.decryption (provider: sops) on the Kustomization, or annotate the Secret kustomize.toolkit.fluxcd.io/decrypt: disabled"));
        }
        if post_build && !disabled(&r.node) {
            let vars = match &vars {
                Some(v) => v,
                None => vars.insert(load_vars(m, lookup)?),
            };
            substitute(&mut r, vars, m, ctx)?;
        }
        out.push(r);
    }
    let mut objects = read_objects(out);
    if ctx.opts.flux.owner_labels {
        let ns = super::namespace_of(m);
        for r in &mut objects {
            set_entry(&mut r.node, "labels", &format!("{GROUP}/name"), m.name());
            set_entry(&mut r.node, "labels", &format!("{GROUP}/namespace"), ns);
        }
    }
    for (kind, key) in [("labels", "labels"), ("annotations", "annotations")] {
        let Some(common) = m
            .node
            .get_path(&["spec", "commonMetadata", kind])
            .and_then(Node::as_map)
        else {
            continue;
        };
        for r in &mut objects {
            for (k, v) in common.iter() {
                set_entry(&mut r.node, key, k, &v.scalar_text().unwrap_or_default());
            }
        }
    }
    Ok(objects)
}

/// kustomization_controller.go `build`: every resource has an apiVersion, a kind and a name.
fn check_object(r: &Resource) -> Result<()> {
    let has = |p: &[&str]| r.node.str_at(p).is_some_and(|s| !s.is_empty());
    if has(&["apiVersion"]) && has(&["kind"]) && has(&["metadata", "name"]) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::InvalidResource,
        "failed to decode Kubernetes apiVersion, kind and name from a resource",
    )
    .at_opt(r.origin.clone()))
}

/// A `v1` Secret SOPS encrypted (its `sops` metadata or an `ENC[…]` value), not annotated
/// `kustomize.toolkit.fluxcd.io/decrypt: disabled`.
pub(crate) fn is_encrypted_secret(node: &Node) -> bool {
    if node.str_at(&["kind"]) != Some("Secret") || node.str_at(&["apiVersion"]) != Some("v1") {
        return false;
    }
    if node.str_at(&[
        "metadata",
        "annotations",
        "kustomize.toolkit.fluxcd.io/decrypt",
    ]) == Some("disabled")
    {
        return false;
    }
    if node.get("sops").is_some() {
        return true;
    }
    ["data", "stringData"].iter().any(|f| {
        node.get(f).and_then(Node::as_map).is_some_and(|m| {
            m.iter()
                .any(|(_, v)| v.as_str().is_some_and(|s| s.starts_with("ENC[")))
        })
    })
}

fn disabled(node: &Node) -> bool {
    ["labels", "annotations"]
        .iter()
        .any(|k| node.str_at(&["metadata", k, SUBSTITUTE_KEY]) == Some("disabled"))
}

/// The variables: each `substituteFrom` reference in order (a later one overrides), then the
/// inline `substitute` over them; every value without its line breaks (`LoadVariables`).
fn load_vars(m: &Manifest, lookup: &Lookup<'_>) -> Result<FastMap<String, String>> {
    let mut vars = FastMap::default();
    let ns = super::namespace_of(m);
    let refs = m
        .node
        .get_path(&["spec", "postBuild", "substituteFrom"])
        .and_then(Node::as_seq)
        .cloned()
        .unwrap_or_default();
    for (i, r) in refs.iter().enumerate() {
        let kind = r.str_at(&["kind"]).unwrap_or("");
        let name = r.str_at(&["name"]).unwrap_or("");
        let optional = r.get("optional") == Some(&Node::Bool(true));
        if kind != "ConfigMap" && kind != "Secret" {
            continue;
        }
        let at = || field(m, &["spec", "postBuild", "substituteFrom", &i.to_string()]);
        match lookup(kind, ns, name).map_err(|e| e.at(at()))? {
            Some(obj) if is_encrypted_secret(&obj) => {
                return Err(Error::new(
                    ErrorKind::Encrypted,
                    format!("substitute from 'Secret/{name}': Secret {ns}/{name} is SOPS encrypted; its variables cannot be read without decrypting it, which ply never does"),
                )
                .at(at())
                .help("give the Secret's variables in plain text with --vars FILE (a Secret or ConfigMap of the same namespace and name)"));
            }
            Some(obj) => {
                for (k, v) in object_data(&obj, kind) {
                    vars.insert(k, v.replace('\n', ""));
                }
            }
            None if optional => {}
            None => {
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!("substitute from '{kind}/{name}' error: {kind} {ns}/{name} not found"),
                )
                .at(at())
                .help(format!(
                    "the {kind} is neither in this Kustomization's cluster (namespace {ns}) nor in a --vars file; give it with --vars FILE, or mark the reference optional: true"
                )));
            }
        }
    }
    if let Some(inline) = m
        .node
        .get_path(&["spec", "postBuild", "substitute"])
        .and_then(Node::as_map)
    {
        for (k, v) in inline.iter() {
            vars.insert(
                k.clone(),
                v.scalar_text().unwrap_or_default().replace('\n', ""),
            );
        }
    }
    Ok(vars)
}

/// The ConfigMap or Secret `ns/name` among `manifests`; one without a namespace is taken when
/// none has it.
pub(super) fn find_object<'a>(
    manifests: impl Iterator<Item = &'a Manifest> + Clone,
    kind: &str,
    ns: &str,
    name: &str,
) -> Option<&'a Manifest> {
    let matches = |m: &Manifest| m.kind() == kind && m.api_version() == "v1" && m.name() == name;
    manifests
        .clone()
        .find(|m| matches(m) && m.namespace() == ns)
        .or_else(|| {
            manifests
                .clone()
                .find(|m| matches(m) && m.namespace().is_empty())
        })
}

/// A ConfigMap's `data`, or a Secret's `data` decoded from base64 with `stringData` over it
/// (as the API server stores it).
fn object_data(obj: &Node, kind: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| match out.iter_mut().find(|(key, _)| key == k) {
        Some(e) => e.1 = v,
        None => out.push((k.to_string(), v)),
    };
    let entries = |f: &str| {
        obj.get(f)
            .and_then(Node::as_map)
            .cloned()
            .unwrap_or_default()
    };
    if kind == "ConfigMap" {
        for (k, v) in entries("data").iter() {
            put(k, v.scalar_text().unwrap_or_default());
        }
        return out;
    }
    for (k, v) in entries("data").iter() {
        let text = v.scalar_text().unwrap_or_default();
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(compact) {
            put(k, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    for (k, v) in entries("stringData").iter() {
        put(k, v.scalar_text().unwrap_or_default());
    }
    out
}

/// `SubstituteVariables` on one resource: run only with variables (or `substituteStrategy:
/// Always`); names checked; the resource's YAML text (kustomize's `AsYAML`) substituted and
/// read again as sigs.k8s.io/yaml reads it (YAML 1.1 booleans), so `replicas: ${R}` becomes
/// a number.
fn substitute(
    r: &mut Resource,
    vars: &FastMap<String, String>,
    m: &Manifest,
    ctx: &Context<'_>,
) -> Result<()> {
    let always = m.node.str_at(&["spec", "postBuild", "substituteStrategy"]) == Some("Always");
    if vars.is_empty() && !always {
        return Ok(());
    }
    let fail = |what: String| {
        Error::new(
            ErrorKind::Transformer,
            format!("post build failed for '{}': {what}", r.name()),
        )
    };
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    if let Some(bad) = names.iter().find(|n| !valid_name(n)) {
        return Err(fail(format!(
            "envsubst error: '{bad}' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'"
        ))
        .at(var_location(m, bad))
        .help("a variable name is letters, digits and underscores, not starting with a digit"));
    }
    let mut text = String::new();
    emit_document(&mut text, &r.node, EmitOptions::default());
    let strict = ctx.opts.flux.strict_substitute;
    let out = envsubst::eval(&text, strict, &|k| vars.get(k).cloned()).map_err(|e| {
        let help = match e {
            envsubst::SubstError::NotSet(_) => "set the variable in postBuild.substitute or a substituteFrom source, give it a default (${VAR:=default}), or render with --strict-substitute=false as controllers before v1.9 do",
            envsubst::SubstError::Parse(_) => "only ${VAR} and the forms of docs/gitops.md substitute; escape a literal ${ as $${",
        };
        let at = match &e {
            envsubst::SubstError::NotSet(v) => variable_use(r, v),
            envsubst::SubstError::Parse(_) => None,
        };
        fail(format!("envsubst error: variable substitution failed: {e}"))
            .at_opt(at.or_else(|| r.origin.clone()))
            .help(help)
    })?;
    let docs = crate::yaml::parse::parse_config_documents(&out)
        .map_err(|e| fail(format!("YAMLToJSON: {e}")).at_opt(r.origin.clone()))?;
    r.node = match docs.into_iter().next() {
        Some(d) => d.node,
        None => Node::Null,
    };
    Ok(())
}

/// Where the resource's file first uses `${var`, after the document's start.
fn variable_use(r: &Resource, var: &str) -> Option<crate::source::Location> {
    let origin = r.origin.as_ref()?;
    let text = origin.file.text.get(origin.offset..)?;
    let needle = format!("{{{var}");
    let at = text
        .match_indices(&needle)
        .map(|(i, _)| i)
        .find(|&i| i > 0 && text.as_bytes()[i - 1] == b'$')?;
    Some(crate::source::Location::new(
        origin.file.clone(),
        origin.offset + at - 1,
        needle.len() + 1,
    ))
}

/// Where a variable is set, for an error about its name: the inline entry when it is one.
fn var_location(m: &Manifest, name: &str) -> crate::source::Location {
    if m.node
        .get_path(&["spec", "postBuild", "substitute", name])
        .is_some()
    {
        return field(m, &["spec", "postBuild", "substitute", name]);
    }
    field(m, &["spec", "postBuild", "substituteFrom"])
}

/// `^[_[:alpha:]][_[:alpha:][:digit:]]*$` (ASCII classes, as Go's regexp reads them).
pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// ssa/utils `ReadObjects`: a `List` gives its items; a document without name, kind or
/// apiVersion, and kustomize's own `Kustomization`, are dropped.
fn read_objects(resources: Vec<Resource>) -> Vec<Resource> {
    let mut out = Vec::with_capacity(resources.len());
    for r in resources {
        let kind = r.node.str_at(&["kind"]).unwrap_or("");
        if kind.ends_with("List") {
            if let Some(items) = r.node.get("items").and_then(Node::as_seq) {
                for item in items {
                    out.push(Resource::new(item.clone(), r.origin.clone()));
                }
                continue;
            }
        }
        let api = r.node.str_at(&["apiVersion"]).unwrap_or("");
        let named = r
            .node
            .str_at(&["metadata", "name"])
            .is_some_and(|n| !n.is_empty());
        if !named || kind.is_empty() || api.is_empty() {
            continue;
        }
        if kind.eq_ignore_ascii_case("kustomization") && api.starts_with("kustomize.config.k8s.io/")
        {
            continue;
        }
        out.push(r);
    }
    out
}

/// `metadata.<map>.<key> = value`, the maps made when missing.
fn set_entry(node: &mut Node, map: &str, key: &str, value: &str) {
    if node.as_map().is_none() {
        return;
    }
    *node.ensure_path(&["metadata", map, key]) = Node::str(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_names_as_the_controller_checks_them() {
        assert!(valid_name("CLUSTER_NAME"));
        assert!(valid_name("_x1"));
        assert!(!valid_name("1x"));
        assert!(!valid_name("a-b"));
        assert!(!valid_name(""));
    }
}
