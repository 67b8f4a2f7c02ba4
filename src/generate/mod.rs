//! configMapGenerator and secretGenerator (kustomize v5.5 semantics), the `behavior`
//! (create/merge/replace) rules for adding generated objects to the accumulated set, and the
//! content-hash name suffix. Pure: file contents come through a [`Loader`] the caller passes;
//! this module never touches the disk and knows nothing of the kustomization graph.

pub(crate) mod hash;
pub(crate) mod kv;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{GeneratorArgs, GeneratorOptions};
use crate::resource::{IdRef, ResId, Resource, string_maps};
use crate::yaml::{Map, Node, ScalarStyle};

pub(crate) use hash::{apply_hash_suffixes, hash_of};

/// Reads a file named by a generator (`files:`, `envs:`), relative to the kustomization
/// directory. The caller (`build`, through `fs`) applies the load restrictor and turns
/// failures into located errors.
pub(crate) trait Loader {
    fn load(&self, path: &str) -> Result<Vec<u8>>;
}

impl<F: Fn(&str) -> Result<Vec<u8>>> Loader for F {
    fn load(&self, path: &str) -> Result<Vec<u8>> {
        self(path)
    }
}

/// A generator's `behavior:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Behavior {
    #[default]
    Create,
    Merge,
    Replace,
}

impl Behavior {
    /// Parses `behavior:`. Absent, empty and `create` are `create`; like kustomize
    /// (`types.NewGenerationBehavior`), any other unknown value also acts as `create`.
    pub(crate) fn parse(s: Option<&str>) -> Behavior {
        match s.unwrap_or("") {
            "merge" => Behavior::Merge,
            "replace" => Behavior::Replace,
            _ => Behavior::Create,
        }
    }
}

/// A generator's options combined with the kustomization's `generatorOptions` as kustomize
/// does (`types.MergeGlobalOptionsIntoLocal`): labels and annotations of the entry win over
/// global ones with the same key; `disableNameSuffixHash` and `immutable` are on when either
/// turns them on.
pub(crate) fn merge_options(
    local: Option<&GeneratorOptions>,
    global: Option<&GeneratorOptions>,
) -> GeneratorOptions {
    let mut out = local.cloned().unwrap_or_default();
    let Some(g) = global else {
        return out;
    };
    for (mine, theirs) in [
        (&mut out.labels, &g.labels),
        (&mut out.annotations, &g.annotations),
    ] {
        if let Some(theirs) = theirs {
            let m = mine.get_or_insert_with(Default::default);
            for (k, v) in theirs {
                if !m.contains_key(k) {
                    m.insert(k.clone(), v.clone());
                }
            }
        }
    }
    if g.disable_name_suffix_hash == Some(true) {
        out.disable_name_suffix_hash = Some(true);
    }
    if g.immutable == Some(true) {
        out.immutable = Some(true);
    }
    out
}

/// Makes the ConfigMap of one `configMapGenerator` entry. `global` is the kustomization's
/// `generatorOptions`. Values that are not UTF-8 go to `binaryData`, base64-encoded.
pub(crate) fn config_map(
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
    loader: &dyn Loader,
) -> Result<Resource> {
    make("ConfigMap", args, global, loader)
}

/// Makes the Secret of one `secretGenerator` entry (`type` defaults to `Opaque`; every value
/// base64-encoded under `data`, wrapped like `binaryData`).
pub(crate) fn secret(
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
    loader: &dyn Loader,
) -> Result<Resource> {
    make("Secret", args, global, loader)
}

fn field_name(kind: &str) -> &'static str {
    if kind == "Secret" {
        "secretGenerator"
    } else {
        "configMapGenerator"
    }
}

fn make(
    kind: &str,
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
    loader: &dyn Loader,
) -> Result<Resource> {
    let what = field_name(kind);
    let name = args.name.as_deref().unwrap_or("");
    if name.is_empty() {
        return Err(Error::new(
            ErrorKind::Generator,
            format!("a {what} entry must have a name"),
        )
        .help("add `name:` to the entry"));
    }
    let in_entry = |e: Error| {
        let msg = format!("{what} {name:?}: {}", e.message);
        Error { message: msg, ..e }
    };
    let pairs = load_pairs(args, loader).map_err(in_entry)?;
    let options = merge_options(args.options.as_ref(), global);

    let mut obj = Map::default();
    obj.insert("apiVersion".into(), Node::str("v1"));
    obj.insert("kind".into(), Node::str(kind));
    let mut meta = Map::default();
    meta.insert("name".into(), Node::str(name));
    if let Some(ns) = args.namespace.as_deref().filter(|n| !n.is_empty()) {
        meta.insert("namespace".into(), Node::str(ns));
    }
    for (field, map) in [
        ("labels", &options.labels),
        ("annotations", &options.annotations),
    ] {
        if let Some(map) = map.as_ref().filter(|m| !m.is_empty()) {
            // Annotations are checked when kustomize rewrites them at the end of the build.
            if field == "labels" {
                for k in map.keys() {
                    written_key(what, name, "label", k)?;
                }
            }
            let mut m = Map::default();
            for (k, v) in map {
                m.insert(k.clone(), Node::str(v.as_str()));
            }
            meta.insert(field.into(), Node::Map(m));
        }
    }
    obj.insert("metadata".into(), Node::Map(meta));

    if kind == "Secret" {
        let t = args
            .secret_type
            .as_deref()
            .filter(|t| !t.is_empty())
            .unwrap_or("Opaque");
        obj.insert("type".into(), Node::str(t));
        let mut data = Map::default();
        for (k, v) in pairs {
            written_key(what, name, "key", &k)?;
            // Styled as kyaml sets it (`makeSecretValueRNode`, `FieldSetter`), for a later
            // strategic merge patch (`Map::styled`).
            let v = wrapped_base64(&v);
            data.insert_styled(k, Node::Str(v), ScalarStyle::Set);
        }
        obj.insert("data".into(), Node::Map(data));
    } else {
        let mut data = Map::default();
        let mut binary = Map::default();
        for (k, v) in pairs {
            written_key(what, name, "key", &k)?;
            match String::from_utf8(v) {
                // kustomize builds the ConfigMap as YAML text with go-yaml v3 and reads it
                // back; a value whose first line starts with a tab and that holds a line break
                // is written as a literal block go-yaml cannot read.
                Ok(s) if string_maps::literal_fails_to_reread(&s) => {
                    return Err(Error::new(
                        ErrorKind::Generator,
                        format!(
                            "{what} {name:?}: the value of {k:?} starts with a tab and holds a \
                             line break; kustomize fails on it (yaml: found a tab character \
                             where an indentation space is expected)"
                        ),
                    )
                    .help("start the value with something other than a tab, or put it in a secretGenerator"));
                }
                // Each value styled as kyaml sets it (`makeConfigMapValueRNode`,
                // `FieldSetter`), for a later strategic merge patch (`Map::styled`).
                Ok(s) => {
                    data.insert_styled(k, Node::Str(s), ScalarStyle::Set);
                }
                Err(e) => {
                    let v = wrapped_base64(e.as_bytes());
                    binary.insert_styled(k, Node::Str(v), ScalarStyle::Set);
                }
            }
        }
        if !data.is_empty() {
            obj.insert("data".into(), Node::Map(data));
        }
        if !binary.is_empty() {
            obj.insert("binaryData".into(), Node::Map(binary));
        }
    }
    if options.immutable == Some(true) {
        obj.insert("immutable".into(), Node::Bool(true));
    }
    let mut r = Resource::new(Node::Map(obj), None);
    r.needs_hash_suffix = options.disable_name_suffix_hash != Some(true);
    r.generator_behavior = Some(crate::resource::behavior_name(args.behavior.as_deref()));
    Ok(r)
}

/// A key the generator writes, as kustomize writes it: plain, then read back by the JSON step
/// (`string_maps::written_key_fails`; `MakeConfigMap`/`MakeSecret` in api/kv build the object
/// with kyaml's `SetDataMap` and `SetLabels`).
fn written_key(what: &str, name: &str, role: &str, k: &str) -> Result<()> {
    match string_maps::written_key_fails(k) {
        None => Ok(()),
        Some(why) => Err(Error::new(
            ErrorKind::Generator,
            format!("{what} {name:?}: the {role} {k:?} {why}"),
        )
        .help(format!(
            "kustomize fails on this {role} even when it is quoted: rename it to one that reads \
             as a string unquoted (`code-404`, not `404`)"
        ))),
    }
}

/// Base64 wrapped at 70 characters, each line ending in a newline when there is more than one
/// line's worth (`encodeBase64` in kyaml's `datamap.go`).
fn wrapped_base64(bytes: &[u8]) -> String {
    const LINE: usize = 70;
    let enc = BASE64.encode(bytes);
    if enc.len() / LINE == 0 {
        return enc;
    }
    let mut out = String::with_capacity(enc.len() + enc.len() / LINE + 1);
    for chunk in enc.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or(""));
        out.push('\n');
    }
    out
}

/// The entry's key/value pairs in kustomize's order — env files, then literals, then files —
/// with repeated keys refused (`kv.loader.Load`, `makeValidatedDataMap`). The returned list is
/// sorted by key, as kustomize writes the data map.
fn load_pairs(args: &GeneratorArgs, loader: &dyn Loader) -> Result<Vec<(String, Vec<u8>)>> {
    let mut pairs: Vec<(String, Vec<u8>)> = Vec::new();
    let envs = args.envs.iter().chain(args.env.iter());
    for path in envs.filter(|p| !p.is_empty()) {
        let content = loader.load(path)?;
        for (k, v) in kv::parse_env_file(path, &content)? {
            pairs.push((k, v.into_bytes()));
        }
    }
    for lit in &args.literals {
        let (k, v) = kv::parse_literal(lit)?;
        pairs.push((k, v.into_bytes()));
    }
    for src in &args.files {
        let (k, path) = kv::parse_file_source(src)?;
        pairs.push((k, loader.load(&path)?));
    }
    let mut seen = std::collections::HashSet::new();
    for (k, _) in &pairs {
        if !seen.insert(k.as_str()) {
            return Err(Error::new(
                ErrorKind::Generator,
                format!("illegally repeats the key `{k}`"),
            )
            .help("each key may appear once across the entry's envs, literals and files"));
        }
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(pairs)
}

/// Adds a generated resource to the accumulated set according to its behavior
/// (kustomize's `resWrangler.appendReplaceOrMerge`): the generated object is matched against
/// the current and previous ids of the resources already there. `create` appends (a match is an
/// error); `merge` and `replace` need exactly one match, keep its name and namespace (and
/// rename history), take labels and annotations from both (the new ones win), and for `merge`
/// also the `data`/`binaryData` entries of both (the new ones win). The result needs a hash
/// suffix only when both the old and the new object did.
pub(crate) fn absorb(
    resources: &mut Vec<Resource>,
    generated: Resource,
    behavior: Behavior,
) -> Result<()> {
    let id = generated.id();
    let matches: Vec<usize> = resources
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            std::iter::once(r.id_ref())
                .chain(r.prev_ids.iter().map(ResId::borrowed))
                .any(|other| same_id(other, id.borrowed()))
        })
        .map(|(i, _)| i)
        .collect();
    let what = field_name(&id.gvk.kind);
    match (matches.as_slice(), behavior) {
        ([], Behavior::Create) => {
            resources.push(generated);
            Ok(())
        }
        ([], _) => Err(Error::new(
            ErrorKind::Generator,
            format!(
                "{what} {:?} has behavior {}, but no {} named {:?} comes from the resources or bases",
                id.name,
                if behavior == Behavior::Merge { "merge" } else { "replace" },
                id.gvk.kind,
                id.name
            ),
        )
        .help("use `behavior: create` (the default) to make a new object")),
        ([_], Behavior::Create) => Err(Error::new(
            ErrorKind::Generator,
            format!("{what} {:?}: an object with id {} already exists", id.name, id),
        )
        .help("to change an object from a base, set `behavior: merge` or `behavior: replace`")),
        ([i], _) => {
            let Some(old) = resources.get_mut(*i) else {
                return Ok(());
            };
            let mut new = generated;
            merge_into(&mut new, old, behavior == Behavior::Merge)?;
            // Field provenance continues over the merge: the next record compares the merged
            // object with the one recorded before (`render/provenance.rs`).
            new.provenance = old.provenance.take();
            *old = new;
            Ok(())
        }
        (many, _) => {
            let ids: Vec<String> = many
                .iter()
                .filter_map(|i| resources.get(*i))
                .map(|r| r.id().to_string())
                .collect();
            Err(Error::new(
                ErrorKind::Generator,
                format!(
                    "found multiple objects [{}] that could accept merge of {}",
                    ids.join(", "),
                    id
                ),
            ))
        }
    }
}

/// kustomize's id equality: same group, version, kind and name; namespaces equal when both are
/// empty-or-`default`.
fn same_id(a: IdRef<'_>, b: IdRef<'_>) -> bool {
    use crate::resource::effective_namespace as ns_of;
    let ns = |n| ns_of(n, false);
    a.group == b.group
        && a.version == b.version
        && a.kind == b.kind
        && a.name == b.name
        && ns(a.namespace) == ns(b.namespace)
}

/// Combines an existing object into a generated one (`CopyMergeMetaDataFieldsFrom`,
/// `MergeDataMapFrom`, `MergeBinaryDataMapFrom`).
///
/// Merges a generated object into the base object it names (`behavior: merge`, and the
/// metadata half of `behavior: replace`). kustomize merges the string maps key by key
/// (`api/resource/resource.go`, `MergeDataMapFrom` and `CopyMergeMetaDataFieldsFrom`); ply
/// routes the same fields through the shared strategic-merge engine, which merges string maps
/// exactly so: the base's keys, overridden and extended by the generator's.
fn merge_into(new: &mut Resource, old: &Resource, merge_data: bool) -> Result<()> {
    let mut fields: Vec<&[&str]> = vec![&["metadata", "labels"], &["metadata", "annotations"]];
    if merge_data {
        fields.push(&["data"]);
        fields.push(&["binaryData"]);
    }
    let mut base = Node::empty_map();
    let mut patch = Node::empty_map();
    for path in &fields {
        // kustomize reads the base object's maps as strings of their source text
        // (`GetLabels`, `GetAnnotations`, `GetDataMap`): `true` → "true", `0o17` → "0o17", and a
        // null data value → "".
        if let Some(v @ Node::Map(_)) = old.node.get_path(path) {
            let text = if path[0] == "metadata" {
                string_maps::meta_value_text
            } else {
                string_maps::data_value_text
            };
            *base.ensure_path(path) = Node::Map(string_maps::read(v, text));
        }
        if let Some(v @ Node::Map(_)) = new.node.get_path(path) {
            *patch.ensure_path(path) = v.clone();
        }
    }
    let mut merged = crate::merge::smp::apply_owned(
        base,
        patch,
        &crate::schema::Schema::empty(),
        &new.gvk(),
        &crate::merge::SmpOptions::kustomize(),
    )
    .map_err(|e| {
        Error::new(
            ErrorKind::Generator,
            format!("cannot merge {} into its base object: {e}", new.name()),
        )
    })?;
    for path in fields {
        match merged.get_path_mut(path) {
            Some(m @ Node::Map(_)) if m.as_map().is_some_and(|e| !e.is_empty()) => {
                *new.node.ensure_path(path) = std::mem::take(m);
            }
            _ => {
                if let Some((last, parent)) = path.split_last()
                    && let Some(m) = new.node.get_path_mut(parent).and_then(Node::as_map_mut)
                {
                    m.shift_remove(last);
                }
            }
        }
    }
    new.set_name(old.name());
    let ns = old.namespace().to_string();
    if ns.is_empty() {
        if let Some(m) = new.node.get_mut("metadata").and_then(Node::as_map_mut) {
            m.shift_remove("namespace");
        }
    } else {
        new.set_namespace(&ns);
    }
    new.prev_ids = old.prev_ids.clone();
    // kustomize takes every build annotation (prefixes, suffixes) and the bound vars from the
    // old object (`CopyMergeMetaDataFieldsFrom`).
    new.name_prefixes = old.name_prefixes.clone();
    new.name_suffixes = old.name_suffixes.clone();
    new.ref_var_names = old.ref_var_names.clone();
    new.needs_hash_suffix = new.needs_hash_suffix && old.needs_hash_suffix;
    // The build annotations are the old object's (`CopyMergeMetaDataFieldsFrom`): its
    // generator's behavior, or none for an object read from a file.
    new.generator_behavior = old.generator_behavior;
    if merge_data {
        new.origin = old.origin.clone();
    }
    Ok(())
}

/// A builtin generator plugin configuration (an entry of `generators:`, `apiVersion: builtin`,
/// `kind: ConfigMapGenerator` or `SecretGenerator`; `IAMPolicyGenerator` is handled too): the generator's fields at the top level,
/// with `metadata.name`/`metadata.namespace` used when `name`/`namespace` are absent
/// (kustomize's `ConfigMapGeneratorPlugin.Config`). The kustomization's `generatorOptions` do
/// not apply to these. Returns `None` for any other kind. Unknown fields are ignored, as
/// kustomize's plugin configuration decoding ignores them.
pub(crate) fn from_builtin_config(
    config: &Node,
    loader: &dyn Loader,
) -> Result<Option<(Resource, Behavior)>> {
    let kind = config.str_at(&["kind"]).unwrap_or("");
    if config.str_at(&["apiVersion"]) != Some("builtin") {
        return Ok(None);
    }
    if kind == "IAMPolicyGenerator" {
        return iam_policy(config).map(|r| Some((r, Behavior::Create)));
    }
    if !matches!(kind, "ConfigMapGenerator" | "SecretGenerator") {
        return Ok(None);
    }
    let mut fields = Map::default();
    if let Some(m) = config.as_map() {
        for (k, v) in m {
            if matches!(
                k.as_str(),
                "name"
                    | "namespace"
                    | "behavior"
                    | "literals"
                    | "files"
                    | "envs"
                    | "env"
                    | "options"
                    | "type"
            ) {
                fields.insert(k.clone(), v.clone());
            }
        }
    }
    for key in ["name", "namespace"] {
        let missing = fields
            .get(key)
            .and_then(Node::as_str)
            .is_none_or(str::is_empty);
        if missing && let Some(v) = config.str_at(&["metadata", key]) {
            fields.insert(key.into(), Node::str(v));
        }
    }
    // A plugin configuration: read as a resource (YAML 1.2) and decoded leniently, as
    // sigs.k8s.io/yaml's `yaml.Unmarshal` does (`literals: [1]` reads as "1").
    let mut args: GeneratorArgs = crate::yaml::de::from_node(&Node::Map(fields)).map_err(|e| {
        Error::new(
            ErrorKind::Generator,
            format!("builtin {kind} configuration: {e}"),
        )
    })?;
    if let Some(env) = args.env.take().filter(|e| !e.is_empty()) {
        args.envs.push(env);
    }
    let behavior = Behavior::parse(args.behavior.as_deref());
    let r = if kind == "SecretGenerator" {
        secret(&args, None, loader)?
    } else {
        config_map(&args, None, loader)?
    };
    Ok(Some((r, behavior)))
}

/// The builtin IAMPolicyGenerator (`api/filters/iampolicygenerator`): for `cloud: gke`, a
/// ServiceAccount named `kubernetesService.name` (in `kubernetesService.namespace` when given)
/// annotated with the Google service account `serviceAccount.name@serviceAccount.projectId`.
/// kustomize writes the values into a YAML template and parses it, so they read as YAML
/// scalars; ply does the same.
fn iam_policy(config: &Node) -> Result<Resource> {
    let text = |path: &[&str]| {
        config
            .get_path(path)
            .filter(|n| !n.is_null())
            .and_then(Node::scalar_text)
            .unwrap_or_default()
    };
    let cloud = text(&["cloud"]);
    if cloud != "gke" {
        return Err(Error::new(
            ErrorKind::Generator,
            format!("IAMPolicyGenerator: cloud provider {cloud} not supported yet"),
        )
        .help("`cloud: gke` is the only provider kustomize supports"));
    }
    let mut doc = format!(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  annotations:\n    iam.gke.io/gcp-service-account: {}@{}.iam.gserviceaccount.com\n  name: {}\n",
        text(&["serviceAccount", "name"]),
        text(&["serviceAccount", "projectId"]),
        text(&["kubernetesService", "name"]),
    );
    let ns = text(&["kubernetesService", "namespace"]);
    if !ns.is_empty() {
        doc.push_str(&format!("  namespace: {ns}\n"));
    }
    let node = crate::yaml::parse::parse_one(&doc).map_err(|e| {
        Error::new(
            ErrorKind::Generator,
            format!("IAMPolicyGenerator: the generated ServiceAccount is not valid YAML: {e}"),
        )
    })?;
    Ok(Resource::new(node, None))
}

/// Runs every `configMapGenerator` then every `secretGenerator` entry of one kustomization
/// (kustomize's order) and absorbs each result into `resources` (the set accumulated from
/// `resources:`/bases of the same kustomization).
pub(crate) fn run(
    config_maps: &[GeneratorArgs],
    secrets: &[GeneratorArgs],
    global: Option<&GeneratorOptions>,
    loader: &dyn Loader,
    resources: &mut Vec<Resource>,
) -> Result<()> {
    for args in config_maps {
        let r = config_map(args, global, loader)?;
        absorb(resources, r, Behavior::parse(args.behavior.as_deref()))?;
    }
    for args in secrets {
        let r = secret(args, global, loader)?;
        absorb(resources, r, Behavior::parse(args.behavior.as_deref()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{EmitOptions, emit_documents, parse::parse_one};

    fn files(name: &str) -> Result<Vec<u8>> {
        match name {
            "e.env" => Ok(b"A=1\n# c\n\n  B = 2\nC\nD=\"q\"\r\nE=x=y\n".to_vec()),
            "f.txt" => Ok(b"hello\n".to_vec()),
            "b.bin" => Ok(b"\xff\xfe\x00bin".to_vec()),
            other => Err(Error::new(
                ErrorKind::NotFound,
                format!("{other}: no such file"),
            )),
        }
    }

    fn args(yaml: &str) -> GeneratorArgs {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn opts(yaml: &str) -> GeneratorOptions {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn render(resources: &mut [Resource]) -> String {
        apply_hash_suffixes(resources).unwrap();
        emit_documents(resources.iter().map(|r| &r.node), EmitOptions::default())
    }

    // Expected output from `kubectl kustomize` (v5.5.0) on the same kustomization.
    #[test]
    fn config_map_and_secret_sources() {
        let loader = &files;
        let cm = config_map(
            &args(
                "name: cm\nliterals: ['a b=c', 'q=\"quoted\"', \"s='single'\", \"m=\\\"mixed'\", 'empty=']\nenvs: [e.env]\nfiles: [f.txt, k2=f.txt, b.bin]\n",
            ),
            None,
            loader,
        )
        .unwrap();
        let sec = secret(
            &args("name: sec\nliterals: [x=1]\nfiles: [b.bin]\n"),
            None,
            loader,
        )
        .unwrap();
        let out = render(&mut [cm, sec]);
        assert_eq!(
            out,
            r#"apiVersion: v1
binaryData:
  b.bin: //4AYmlu
data:
  A: "1"
  'B ': ' 2'
  C: ""
  D: '"q"'
  E: x=y
  a b: c
  empty: ""
  f.txt: |
    hello
  k2: |
    hello
  m: '"mixed'''
  q: quoted
  s: single
kind: ConfigMap
metadata:
  name: cm-5ktt4694hk
---
apiVersion: v1
data:
  b.bin: //4AYmlu
  x: MQ==
kind: Secret
metadata:
  name: sec-4b877cdf2f
type: Opaque
"#
        );
    }

    #[test]
    fn options_combine_with_generator_options() {
        let global =
            opts("labels: {g: '1', both: global}\nannotations: {ga: 'yes'}\nimmutable: true\n");
        let loader = &files;
        let a = config_map(
            &args("name: opts\nnamespace: ns1\nliterals: [a=true, b=0x1, \"c=multi\\nline\"]\noptions:\n  labels: {both: local, l: x}\n  disableNameSuffixHash: true\n"),
            Some(&global),
            loader,
        )
        .unwrap();
        let b = config_map(&args("name: empty\n"), Some(&global), loader).unwrap();
        let c = secret(
            &args("name: s\ntype: kubernetes.io/tls\nliterals: [tls.crt=abc, tls.key=def]\noptions:\n  annotations: {x: z}\n"),
            Some(&global),
            loader,
        )
        .unwrap();
        let out = render(&mut [a, b, c]);
        assert_eq!(
            out,
            r#"apiVersion: v1
data:
  a: "true"
  b: "0x1"
  c: |-
    multi
    line
immutable: true
kind: ConfigMap
metadata:
  annotations:
    ga: "yes"
  labels:
    both: local
    g: "1"
    l: x
  name: opts
  namespace: ns1
---
apiVersion: v1
immutable: true
kind: ConfigMap
metadata:
  annotations:
    ga: "yes"
  labels:
    both: global
    g: "1"
  name: empty-6ct58987ht
---
apiVersion: v1
data:
  tls.crt: YWJj
  tls.key: ZGVm
immutable: true
kind: Secret
metadata:
  annotations:
    ga: "yes"
    x: z
  labels:
    both: global
    g: "1"
  name: s-td2b65gdb7
type: kubernetes.io/tls
"#
        );
    }

    // `generators:` with an inline builtin ConfigMapGenerator; kubectl kustomize gives
    // `mymap-kfd8tf729k`.
    #[test]
    fn builtin_generator_config() {
        let cfg = parse_one(
            "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: mymap\nliterals:\n- FRUIT=apple\n- VEGETABLE=carrot\n",
        )
        .unwrap();
        let (r, b) = from_builtin_config(&cfg, &files).unwrap().unwrap();
        assert_eq!(b, Behavior::Create);
        assert_eq!(
            render(&mut [r]),
            "apiVersion: v1\ndata:\n  FRUIT: apple\n  VEGETABLE: carrot\nkind: ConfigMap\nmetadata:\n  name: mymap-kfd8tf729k\n"
        );
        // IAMPolicyGenerator: kubectl kustomize gives this ServiceAccount.
        let iam = parse_one(
            "apiVersion: builtin\nkind: IAMPolicyGenerator\nmetadata:\n  name: g\ncloud: gke\nkubernetesService:\n  namespace: ns1\n  name: ksa\nserviceAccount:\n  name: gsa\n  projectId: proj\n",
        )
        .unwrap();
        let (r, _) = from_builtin_config(&iam, &files).unwrap().unwrap();
        assert_eq!(
            render(&mut [r]),
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  annotations:\n    iam.gke.io/gcp-service-account: gsa@proj.iam.gserviceaccount.com\n  name: ksa\n  namespace: ns1\n"
        );
        let aws = parse_one("apiVersion: builtin\nkind: IAMPolicyGenerator\ncloud: aws\n").unwrap();
        assert!(from_builtin_config(&aws, &files).is_err());
        let other = parse_one("apiVersion: builtin\nkind: PatchTransformer\n").unwrap();
        assert!(from_builtin_config(&other, &files).unwrap().is_none());
    }

    #[test]
    fn empty_secret_has_empty_data() {
        let s = secret(&args("name: s\n"), None, &files).unwrap();
        assert_eq!(
            render(&mut [s]),
            "apiVersion: v1\ndata: {}\nkind: Secret\nmetadata:\n  name: s-46f8b28mk5\ntype: Opaque\n"
        );
    }

    #[test]
    fn long_binary_is_wrapped() {
        let bytes: Vec<u8> = (0..100u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        let w = wrapped_base64(&bytes);
        let lines: Vec<&str> = w.split_terminator('\n').collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), 70);
        assert!(w.ends_with('\n'));
        assert_eq!(wrapped_base64(b"\xff"), "/w==");
    }

    #[test]
    fn errors() {
        let e = config_map(&args("name: cm\nliterals: [novalue]\n"), None, &files).unwrap_err();
        assert_eq!(
            e.message,
            "configMapGenerator \"cm\": invalid literal source \"novalue\", expected key=value"
        );
        let e = config_map(&args("name: cm\nliterals: [a=1, a=2]\n"), None, &files).unwrap_err();
        assert_eq!(
            e.message,
            "configMapGenerator \"cm\": illegally repeats the key `a`"
        );
        let e = secret(&args("literals: [a=1]\n"), None, &files).unwrap_err();
        assert_eq!(e.message, "a secretGenerator entry must have a name");
        let e = config_map(&args("name: cm\nfiles: [missing]\n"), None, &files).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        let mut set = Vec::new();
        let r = config_map(&args("name: cm\nliterals: [a=1]\n"), None, &files).unwrap();
        let e = absorb(&mut set, r.clone(), Behavior::Merge).unwrap_err();
        assert!(
            e.message
                .contains("has behavior merge, but no ConfigMap named \"cm\""),
            "{}",
            e.message
        );
        absorb(&mut set, r.clone(), Behavior::Create).unwrap();
        let e = absorb(&mut set, r, Behavior::Create).unwrap_err();
        assert!(e.message.contains("already exists"), "{}", e.message);
    }

    /// The base of the merge test after its own transformations (namePrefix p-, namespace bns),
    /// as the build hands it to the overlay: renamed, with its rename history.
    fn base_object(yaml: &str, needs_hash: bool) -> Resource {
        let mut r = Resource::new(parse_one(yaml).unwrap(), None);
        r.needs_hash_suffix = needs_hash;
        let name = r.name().to_string();
        r.store_previous_id();
        r.set_namespace("bns");
        r.store_previous_id();
        r.set_name(&format!("p-{name}"));
        r
    }

    // Overlay generators with merge/replace over a base with namePrefix and namespace; expected
    // output from `kubectl kustomize`.
    #[test]
    fn behaviors_merge_and_replace() {
        let mut set = vec![
            base_object(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels: {base: '1'}\n  annotations: {ba: x}\ndata: {a: '1', b: '2'}\n",
                true,
            ),
            base_object(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\ndata: {a: '1'}\n",
                true,
            ),
            base_object(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm3\ndata: {a: '1'}\n",
                false,
            ),
            base_object(
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: sec\ntype: Opaque\ndata: {a: MQ==}\n",
                true,
            ),
        ];
        let cms = [
            args(
                "name: cm\nbehavior: merge\nliterals: [b=3, c=4]\noptions:\n  labels: {ov: '1'}\n",
            ),
            args("name: cm2\nbehavior: replace\nliterals: [z=9]\n"),
            args("name: cm3\nbehavior: merge\nliterals: [q=1]\n"),
        ];
        let secrets = [args(
            "name: sec\nnamespace: bns\nbehavior: merge\nliterals: [b=2]\noptions:\n  disableNameSuffixHash: true\n",
        )];
        run(&cms, &secrets, None, &files, &mut set).unwrap();
        assert_eq!(
            render(&mut set),
            r#"apiVersion: v1
data:
  a: "1"
  b: "3"
  c: "4"
kind: ConfigMap
metadata:
  annotations:
    ba: x
  labels:
    base: "1"
    ov: "1"
  name: p-cm-fbcmkbc66h
  namespace: bns
---
apiVersion: v1
data:
  z: "9"
kind: ConfigMap
metadata:
  name: p-cm2-k765b4dhgf
  namespace: bns
---
apiVersion: v1
data:
  a: "1"
  q: "1"
kind: ConfigMap
metadata:
  name: p-cm3
  namespace: bns
---
apiVersion: v1
data:
  a: MQ==
  b: Mg==
kind: Secret
metadata:
  name: p-sec
  namespace: bns
type: Opaque
"#
        );
    }
}
