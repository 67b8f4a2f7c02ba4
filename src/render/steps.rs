//! The stages `build` runs per kustomization, as calls into `generate` and `transform` in
//! kustomize's order (`api/internal/target/kusttarget.go`: `runGenerators`,
//! `configureBuiltinTransformers`) and the files a kustomization names. The adapter between the graph walk and
//! the field semantics.

use std::path::PathBuf;
use std::sync::Arc;

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fs::{FileKind, Fs};
use crate::kustomization::{Kustomization, Loaded};
use crate::resource::provenance::Step;
use crate::resource::string_maps;
use crate::resource::{Gvk, Resource};
use crate::source::{Location, SourceFile, display_path};
use crate::transform::configurations::BuildConfig;
use crate::transform::fieldspec::PathStep;
use crate::transform::vars::VarSet;
use crate::transform::{self, FieldSpecTables, KeptIn, Unchanged};
use crate::yaml::Node;
use crate::yaml::path::PathSeg;

use super::Context;
use super::ahead::Ahead;
use super::writes::{Told, steps_to_path};

/// Output order requested on the command line (`--reorder`): the transform module's own.
pub use crate::transform::sort::Reorder as OutputOrder;

/// Runs the kustomization's generators (every `configMapGenerator`, then every
/// `secretGenerator` entry) into `acc`. Files they name are read relative to the kustomization,
/// under the load restrictor.
pub(super) fn generate(
    fs: &dyn Fs,
    ahead: Option<&Ahead>,
    ctx: Context<'_>,
    loaded: &Loaded,
    acc: &mut Vec<Resource>,
) -> Result<()> {
    let k = &loaded.kustomization;
    if k.config_map_generator.is_empty() && k.secret_generator.is_empty() {
        return Ok(());
    }
    let loader = |rel: &str| -> Result<Vec<u8>> { read_named_file(fs, ahead, ctx, loaded, rel) };
    crate::generate::run(
        &k.config_map_generator,
        &k.secret_generator,
        k.generator_options.as_ref(),
        &loader,
        acc,
    )
    .map_err(|e| {
        let field = if k.config_map_generator.is_empty() {
            "secretGenerator"
        } else {
            "configMapGenerator"
        };
        e.at(loaded.key_location(&[PathSeg::Key(field.to_string())]))
    })
}

/// Reads a file named inside a kustomization (a generator's `files:` or `envs:` entry), or
/// takes its bytes from the reader thread (`ahead`: it reads generators' files).
pub(super) fn read_named_file(
    fs: &dyn Fs,
    ahead: Option<&Ahead>,
    ctx: Context<'_>,
    loaded: &Loaded,
    rel: &str,
) -> Result<Vec<u8>> {
    if let Some(remote) = remote_named_file(fs, loaded, rel) {
        return remote;
    }
    let (target, canonical) = resolve_named_file(fs, ctx, loaded, rel)?;
    if let Some(bytes) = ahead.and_then(|a| a.take_bytes(&canonical)) {
        return Ok(bytes);
    }
    fs.read(&canonical).map_err(|e| Error::io(&target, &e))
}

/// A file named inside a kustomization as diagnostics name it: its path joined to the
/// kustomization's directory, or a URL with its credentials hidden.
pub(super) fn named_file_shown(loaded: &Loaded, rel: &str) -> PathBuf {
    if super::accumulate::is_remote_file(rel) {
        PathBuf::from(crate::remote::url::redact(rel))
    } else {
        crate::fs::join(&loaded.dir, rel)
    }
}

/// The bytes of a file a kustomization names by an HTTP(S) URL, as `ply fetch` pinned them
/// (kustomize's `FileLoader.Load` downloads any such URL before it looks at the disk); `None`
/// for a path. Errors are located at the URL in the kustomization.
pub(super) fn remote_named_file(
    fs: &dyn Fs,
    loaded: &Loaded,
    rel: &str,
) -> Option<Result<Vec<u8>>> {
    if !super::accumulate::is_remote_file(rel) {
        return None;
    }
    Some(fs.remote_file(rel).map_err(|e| {
        let at = loaded
            .file
            .text
            .find(rel)
            .map(|o| Location::new(Arc::clone(&loaded.file), o, rel.len()));
        e.at_opt(at).label("a remote file")
    }))
}

/// The path of a file named inside a kustomization, joined to its directory and canonical,
/// when it is a file the load restrictor lets the kustomization read.
pub(super) fn resolve_named_file(
    fs: &dyn Fs,
    ctx: Context<'_>,
    loaded: &Loaded,
    rel: &str,
) -> Result<(PathBuf, PathBuf)> {
    let loc = || {
        loaded
            .file
            .text
            .find(rel)
            .map(|o| Location::new(Arc::clone(&loaded.file), o, rel.len()))
    };
    let target = crate::fs::join(&loaded.dir, rel);
    let canonical = match (fs.kind(&target), fs.canonicalize(&target)) {
        (Some(FileKind::File), Ok(c)) => c,
        (Some(FileKind::Dir), _) => {
            return Err(Error::new(
                ErrorKind::Generator,
                format!("'{rel}' is a directory, not a file"),
            )
            .at_opt(loc()));
        }
        // kustomize's file loader fetches `http(s)://` files (`api/internal/loader`,
        // `fileLoader.Load`); where ply reads them (`remote_named_file`), callers asked before
        // coming here, so a URL here is one ply cannot take there (a Helm values file).
        _ if super::accumulate::is_remote_file(rel) => {
            return Err(Error::new(
                ErrorKind::Remote,
                format!(
                    "remote files are not supported here: '{}'",
                    crate::remote::url::redact(rel)
                ),
            )
            .at_opt(loc())
            .label("a remote URL")
            .help("download the file (curl) and name its local path instead"));
        }
        _ => {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "'{rel}' does not exist: no file at '{}'",
                    display_path(&target)
                ),
            )
            .at_opt(loc())
            .label("not found"));
        }
    };
    crate::fs::check_restriction_shown(ctx.opts.load_restrictor, &loaded.dir, &canonical, rel)
        .map_err(|e| e.at_opt(loc()))?;
    Ok((target, canonical))
}

/// Runs the generator configurations of `generators:` after the built-in generators:
/// `apiVersion: builtin` ConfigMapGenerator and SecretGenerator are supported; other generators
/// are plugins (refused) or not supported yet.
pub(super) fn run_generator_configs(
    fs: &dyn Fs,
    ctx: Context<'_>,
    loaded: &Loaded,
    configs: &[(Resource, Location)],
    acc: &mut Vec<Resource>,
) -> Result<()> {
    let loader = |rel: &str| -> Result<Vec<u8>> { read_named_file(fs, None, ctx, loaded, rel) };
    for (config, loc) in configs {
        match crate::generate::from_builtin_config(&config.node, &loader)
            .map_err(|e| e.at(loc.clone()))?
        {
            Some((generated, behavior)) => {
                crate::generate::absorb(acc, generated, behavior).map_err(|e| e.at(loc.clone()))?
            }
            None => return Err(unsupported_config(config, "generators", loc)),
        }
    }
    Ok(())
}

/// Runs the transformer configurations of `transformers:` after the built-in transformers, in
/// their order. Builtin configurations of the transformers `transform` implements are
/// supported; patches and replacements come later; anything else is a plugin.
pub(super) fn run_transformer_configs(
    configs: &[(Resource, Location)],
    acc: &mut Vec<Resource>,
    tables: &FieldSpecTables,
    warnings: &mut Warnings,
) -> Result<()> {
    for (config, loc) in configs {
        // kustomize v5.5's plugin loader has no builtin SortOrderTransformer (later versions
        // do): `api/internal/plugins/builtinhelpers/builtins.go` of v5.5.0.
        if config.node.str_at(&["apiVersion"]) == Some("builtin")
            && config.kind() == "SortOrderTransformer"
        {
            return Err(Error::new(
                ErrorKind::Kustomization,
                "unable to load builtin SortOrderTransformer.builtin.[noGrp]",
            )
            .at(loc.clone())
            .label("not a builtin of kustomize v5.5")
            .help("set the output order with `sortOptions` in the root kustomization"));
        }
        let done = transform::builtin::apply_config(&config.node, acc, tables, warnings)
            .map_err(|e| e.at(loc.clone()))?;
        if !done {
            return Err(unsupported_config(config, "transformers", loc));
        }
    }
    Ok(())
}

fn unsupported_config(config: &Resource, field: &str, loc: &Location) -> Error {
    let api_version = config.node.str_at(&["apiVersion"]).unwrap_or("");
    let kind = config.kind();
    if api_version == "builtin" {
        Error::new(
            ErrorKind::Kustomization,
            format!("the builtin {kind} under `{field}` is not yet supported by ply"),
        )
        .at(loc.clone())
        .label("not supported yet")
    } else {
        Error::new(
            ErrorKind::Plugin,
            format!("`{field}` names the plugin {api_version}/{kind}: ply does not run plugins"),
        )
        .at(loc.clone())
        .label("a plugin")
        .help("ply never runs programs; only `apiVersion: builtin` configurations are supported")
    }
}

/// Runs the kustomization's built-in transformers over `acc`, in kustomize's order
/// (`configureBuiltinTransformers`): namespace, prefix and suffix, labels, annotations,
/// replicas, images. (Patches and replacements, which sit between them, come with issue 4.)
/// `between` runs after annotations and before replicas, where kustomize runs
/// `patchesJson6902`.
pub(super) fn transform(
    loaded: &Loaded,
    acc: &mut Vec<Resource>,
    tables: &FieldSpecTables,
    prov: bool,
    between: &mut dyn FnMut(&mut Vec<Resource>) -> Result<()>,
) -> Result<()> {
    let k: &Kustomization = &loaded.kustomization;
    // With provenance on, each transformer's changes are recorded as its own.
    let record = |acc: &mut Vec<Resource>, step: Step| {
        if prov {
            let places = super::provenance::TransformerPlaces::new(loaded, step);
            super::provenance::record(acc, step, &|r, path, before| {
                Some(places.place(r, path, before))
            });
        }
    };
    // The field's place in the file is looked up only when there is an error to place.
    let at = |field: &'static str| {
        move |e: Error| e.at(loaded.key_location(&[PathSeg::Key(field.to_string())]))
    };
    // What a transformer wrote with the value a field already had is recorded too
    // (`render/writes.rs`): each transformer tells what it wrote so (`transform::Unchanged`).
    if let Some(ns) = k.namespace.as_deref().filter(|s| !s.is_empty()) {
        let mut kept: Vec<usize> = Vec::new();
        let mut tell = |i: usize| kept.push(i);
        let kept_in: KeptIn<'_> = if prov { Some(&mut tell) } else { None };
        transform::namespace::apply(acc, ns, tables, kept_in).map_err(at("namespace"))?;
        record(acc, Step::Namespace);
        // kustomize's namespace transformer sets every namespaced object's namespace: what it
        // wrote with the value a field held is found in the objects it names.
        if prov {
            super::writes::record_namespace_writes(loaded, acc, tables, &kept);
        }
    }
    let prefix = k.name_prefix.as_deref().unwrap_or("");
    let suffix = k.name_suffix.as_deref().unwrap_or("");
    if !prefix.is_empty() || !suffix.is_empty() {
        transform::prefix_suffix::apply(acc, prefix, suffix, tables).map_err(at(
            if prefix.is_empty() {
                "nameSuffix"
            } else {
                "namePrefix"
            },
        ))?;
        record(
            acc,
            if prefix.is_empty() {
                Step::NameSuffix
            } else {
                Step::NamePrefix
            },
        );
    }
    if k.common_labels.as_ref().is_some_and(|m| !m.is_empty()) || !k.labels.is_empty() {
        let mut told = Told::new();
        let mut tell = |i: usize, at: &[PathStep<'_>]| told.push((i, steps_to_path(at)));
        let unchanged: Unchanged<'_> = if prov { Some(&mut tell) } else { None };
        transform::labels::apply(acc, k.common_labels.as_ref(), &k.labels, tables, unchanged)
            .map_err(at(if k.labels.is_empty() {
                "commonLabels"
            } else {
                "labels"
            }))?;
        record(acc, Step::Labels);
        if prov {
            super::writes::record_told_pairs(loaded, acc, Step::Labels, told);
        }
    }
    if let Some(a) = k.common_annotations.as_ref().filter(|m| !m.is_empty()) {
        let mut told = Told::new();
        let mut tell = |i: usize, at: &[PathStep<'_>]| told.push((i, steps_to_path(at)));
        let unchanged: Unchanged<'_> = if prov { Some(&mut tell) } else { None };
        transform::annotations::apply(acc, a, tables, unchanged)
            .map_err(at("commonAnnotations"))?;
        record(acc, Step::CommonAnnotations);
        if prov {
            super::writes::record_told_pairs(loaded, acc, Step::CommonAnnotations, told);
        }
    }
    between(acc)?;
    if !k.replicas.is_empty() {
        transform::replicas::apply(acc, &k.replicas, tables).map_err(at("replicas"))?;
        record(acc, Step::Replicas);
        // An entry sets the count of the objects it names (now or before a rename).
        if prov {
            super::writes::record_replicas_writes(loaded, acc);
        }
    }
    if !k.images.is_empty() {
        let mut told = Told::new();
        let mut tell = |i: usize, at: &[PathStep<'_>]| told.push((i, steps_to_path(at)));
        let unchanged: Unchanged<'_> = if prov { Some(&mut tell) } else { None };
        transform::images::apply(acc, &k.images, tables, unchanged).map_err(at("images"))?;
        record(acc, Step::Images);
        if prov {
            super::writes::record_told_images(loaded, acc, told);
        }
    }
    Ok(())
}

/// The steps kustomize runs once, at the root, after the whole tree is accumulated
/// (`makeCustomizedResMap`, then `applySortOrder` in `api/krusty/kustomizer.go`): hash
/// suffixes, dropping `config.kubernetes.io/local-config` objects (`IgnoreLocal`), and the
/// output order.
pub(super) fn finish_root(
    root: &Loaded,
    resources: &mut Vec<Resource>,
    ctx: Context<'_>,
    config: &BuildConfig,
    vars: &VarSet,
    var_places: &crate::fasthash::FastMap<String, crate::resource::provenance::Place>,
    warnings: &mut Warnings,
) -> Result<()> {
    use super::places;
    use super::provenance::{record, record_sourced};
    let prov = ctx.provenance();
    // Each step's places (`render/places.rs`) are taken before it runs.
    let hashed = prov.then(|| places::hash_places(resources));
    crate::generate::apply_hash_suffixes(resources)?;
    if let Some(hashed) = &hashed {
        record(resources, Step::HashSuffix, &|r, _, before| {
            places::hash_place(hashed, r, before)
        });
    }
    let names = prov.then(|| places::names(resources));
    let mut told = Told::new();
    let mut tell = |i: usize, at: &[PathStep<'_>]| told.push((i, steps_to_path(at)));
    let unchanged: Unchanged<'_> = if prov { Some(&mut tell) } else { None };
    transform::namereference::fix_name_references(
        resources,
        &config.refs.name_reference,
        &|g: &Gvk| config.fields.is_cluster_scoped(g),
        unchanged,
    )?;
    if let Some(names) = &names {
        let locate = |r: &Resource, path: &[PathSeg], _: Option<&Node>| {
            places::name_reference(names, r, path)
        };
        record_sourced(resources, Step::NameReference, &locate);
        super::writes::record_told_sourced(resources, Step::NameReference, told, &locate);
    }
    let bound = (prov && !vars.is_empty())
        .then(|| places::var_places(var_places, resources, &|n| vars.field_path_of(n)));
    transform::vars::resolve_vars(resources, vars, &config.refs.var_reference, warnings)?;
    if let Some(bound) = &bound {
        record_sourced(resources, Step::Var, &|_, _, before| {
            places::var_origin(bound, before)
        });
    }
    stringify_annotations(resources)?;
    if prov {
        super::provenance::refresh(resources);
    }
    check_metadata(resources)?;
    resources.retain(|r| {
        r.node.str_at(&[
            "metadata",
            "annotations",
            "config.kubernetes.io/local-config",
        ]) != Some("true")
    });
    super::ids::check_unique(resources, &|g: &Gvk| config.fields.is_cluster_scoped(g))?;
    let choice = transform::sort::choose(
        root.kustomization.sort_options.as_ref(),
        ctx.opts.reorder,
        warnings,
    )
    .map_err(|e| e.at(root.key_location(&[PathSeg::Key("sortOptions".into())])))?;
    transform::sort::order(resources, &choice);
    check_depth(resources)?;
    if ctx.strict() {
        check_deliberate_differences(resources)?;
    }
    Ok(())
}

/// With `--strict`, a value that ply prints where kustomize fails or prints otherwise, by a
/// deliberate difference of `docs/compatibility.md` (an infinity or NaN, NEL and C1 control
/// characters, keys go-yaml cannot order), is an error at its line.
fn check_deliberate_differences(resources: &[Resource]) -> Result<()> {
    for r in resources {
        let Some(d) = crate::yaml::deliberate::first_difference(&r.node) else {
            continue;
        };
        let at = r.origin.as_ref().map(|loc| {
            let (offset, _) =
                crate::kustomization::load::locate_value(&loc.file, loc.offset, &d.path);
            Location::new(std::sync::Arc::clone(&loc.file), offset, 0)
        });
        let path = crate::yaml::path::path_text(&d.path);
        return Err(Error::new(
            ErrorKind::Strict,
            format!(
                "`{path}` of {} is {}",
                super::ids::id_string(&r.id()),
                d.what
            ),
        )
        .at_opt(at)
        .label("kustomize prints this otherwise")
        .help(
            "this is a deliberate difference of ply (docs/compatibility.md, YAML output);              without --strict ply prints it as shown there",
        ));
    }
    Ok(())
}

/// kustomize prints no object whose fields nest deeper than 10,000 levels: it prints each
/// object by writing it as JSON and reading that back as YAML (`Resource.AsYAML`,
/// `api/resource/resource.go`: `MarshalJSON`, then sigs.k8s.io/yaml's `JSONToYAML`), and the
/// JSON's brackets nest as deep as the object, past go-yaml's flow limit
/// (`max_flow_level`, 10,000). Every `{` and `[` counts, the object's own included: an
/// object whose fields nest 10,000 levels below it is printed, one level more is refused
/// ("exceeded max depth of 10000"). Checked once the build is done, as kustomize fails when
/// it prints.
fn check_depth(resources: &[Resource]) -> Result<()> {
    let limit = crate::yaml::limits::MAX_FLOW_DEPTH;
    for r in resources {
        if r.node.nests_deeper_than(limit) {
            return Err(Error::new(
                ErrorKind::InvalidResource,
                format!(
                    "object {} nests deeper than {limit} levels of maps and lists, counting the \
                     object itself; kustomize refuses to print it (its output passes through \
                     JSON read back by go-yaml: exceeded max depth of {limit})",
                    super::ids::id_string(&r.id())
                ),
            )
            .at_opt(r.origin.clone())
            .label("this object")
            .help(format!(
                "nest the object's fields at most {} levels deep",
                limit - 1
            )));
        }
    }
    Ok(())
}

/// Every object must still have a kind, and a `metadata.name` unless its kind ends in `List`,
/// when the build ends: kustomize checks each once more there, before dropping local-config
/// objects (`Factory.DropLocalNodes` calls kyaml's `RNode.GetValidatedMetadata`,
/// `kyaml/yaml/rnode.go`). A JSON 6902 patch (`remove /kind`, `replace /metadata/name ''`,
/// `replace ""` with a new object) or a replacement can take either away.
fn check_metadata(resources: &[Resource]) -> Result<()> {
    let text = |n: Option<&Node>| {
        n.filter(|n| !n.is_null())
            .and_then(Node::scalar_text)
            .filter(|s| !s.is_empty())
    };
    for r in resources {
        let kind = text(r.node.get("kind"));
        let missing = match &kind {
            None => "kind",
            Some(k) if k.ends_with("List") => continue,
            Some(_) if text(r.node.get_path(&["metadata", "name"])).is_none() => "metadata.name",
            Some(_) => continue,
        };
        let was = r.original_id();
        return Err(Error::new(
            ErrorKind::Patch,
            format!(
                "missing {missing} in object {} after the transformations (kustomize: missing \
                 {missing} in object)",
                super::ids::id_string(&was)
            ),
        )
        .at_opt(r.origin.clone())
        .label("this object")
        .help(format!(
            "a patch or replacement removed or emptied {missing}: every object needs a kind and \
             a metadata.name"
        )));
    }
    Ok(())
}

/// Reads the kustomization's `configurations:` files into `config` (kustomize's
/// `MakeTransformerConfig`, merged after the resources are accumulated).
pub(super) fn configurations(
    fs: &dyn Fs,
    ctx: Context<'_>,
    loaded: &Loaded,
    config: &mut BuildConfig,
) -> Result<()> {
    for rel in &loaded.kustomization.configurations {
        let bytes = read_named_file(fs, None, ctx, loaded, rel)?;
        let file = SourceFile::new(named_file_shown(loaded, rel), super::parse::text_of(bytes));
        // Read with sigs.k8s.io/yaml (`makeTransformerConfigFromBytes`): YAML 1.1 booleans.
        let node = crate::yaml::parse::parse_config_one(&file.text).map_err(|e| {
            super::accumulate::yaml_error(&file, "invalid YAML in a configurations file", &e).help(
                format!(
                    "fix the YAML of '{rel}' (listed under `configurations:` of {}): a \
                     configurations file is one map of field-spec lists (nameReference, \
                     commonLabels, namePrefix, …)",
                    loaded.file.display
                ),
            )
        })?;
        config.add_file(&node, &file, rel).map_err(|e| {
            let listed = loaded.key_location(&[PathSeg::Key("configurations".into())]);
            if e.location.is_some() {
                e.with_related(
                    Error::new(ErrorKind::Kustomization, format!("'{rel}' is listed here"))
                        .at(listed)
                        .label("listed here"),
                )
            } else {
                e.at(listed).label("in a file listed here")
            }
        })?;
    }
    Ok(())
}

/// Runs `replacements:` (the last of kustomize's built-in transformers); entries with `path:`
/// name files read relative to the kustomization.
pub(super) fn replacements(
    fs: &dyn Fs,
    ctx: Context<'_>,
    loaded: &Loaded,
    acc: &mut [Resource],
    tables: &FieldSpecTables,
    warnings: &mut Warnings,
) -> Result<()> {
    let k = &loaded.kustomization;
    if k.replacements.is_empty() {
        return Ok(());
    }
    let at = loaded.key_location(&[PathSeg::Key("replacements".into())]);
    let mut load = |rel: &str| -> Result<crate::yaml::Node> {
        let bytes = read_named_file(fs, None, ctx, loaded, rel)?;
        // Read with sigs.k8s.io/yaml (`ReplacementTransformerPlugin.Config`): YAML 1.1 booleans.
        crate::yaml::parse::parse_config_one(&super::parse::text_of(bytes))
            .map_err(|e| Error::new(ErrorKind::Yaml, format!("replacements file '{rel}': {e}")))
    };
    if ctx.provenance() {
        return replacements_recorded(fs, ctx, loaded, acc, tables, warnings);
    }
    let mut ignored = Vec::new();
    let list =
        transform::replacements::collect(&k.replacements, &mut load, &mut ignored, ctx.kustomize())
            .map_err(|e| e.at(at.clone()).label("reading these replacements"))?;
    for field in ignored {
        warnings.warn(format!(
            "replacements file {field}: unknown field ignored (as kustomize does)"
        ));
    }
    transform::replacements::apply(
        acc,
        &list,
        &|g: &Gvk| tables.is_cluster_scoped(g),
        ctx.kustomize(),
    )
    .map_err(|e| e.at(at).label("applying these replacements"))
}

/// [`replacements`] with provenance on: one replacement at a time (kustomize applies them in
/// order, so the output is the same), each recorded with its entry and the field it read
/// (`render/places.rs`).
fn replacements_recorded(
    fs: &dyn Fs,
    ctx: Context<'_>,
    loaded: &Loaded,
    acc: &mut [Resource],
    tables: &FieldSpecTables,
    warnings: &mut Warnings,
) -> Result<()> {
    let at = loaded.key_location(&[PathSeg::Key("replacements".into())]);
    let cluster_scoped = |g: &Gvk| tables.is_cluster_scoped(g);
    for (i, entry) in loaded.kustomization.replacements.iter().enumerate() {
        // The file a `path:` entry names, and whether it holds a list.
        let mut file: Option<(Arc<crate::source::SourceFile>, bool)> = None;
        let mut load = |rel: &str| -> Result<crate::yaml::Node> {
            let bytes = read_named_file(fs, None, ctx, loaded, rel)?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let node = crate::yaml::parse::parse_config_one(&text).map_err(|e| {
                Error::new(ErrorKind::Yaml, format!("replacements file '{rel}': {e}"))
            })?;
            let source = crate::source::SourceFile::new(crate::fs::join(&loaded.dir, rel), text);
            file = Some((source, matches!(node, Node::Seq(_))));
            Ok(node)
        };
        let mut ignored = Vec::new();
        let list = transform::replacements::collect(
            std::slice::from_ref(entry),
            &mut load,
            &mut ignored,
            ctx.kustomize(),
        )
        .map_err(|e| e.at(at.clone()).label("reading these replacements"))?;
        for field in ignored {
            warnings.warn(format!(
                "replacements file {field}: unknown field ignored (as kustomize does)"
            ));
        }
        for (d, r) in list.iter().enumerate() {
            let place = super::places::replacement_place(
                loaded,
                i,
                file.as_ref().map(|(f, seq)| (f, seq.then_some(d))),
                r.source_value.is_some() && r.source.is_none(),
            );
            let source = r
                .source
                .as_ref()
                .and_then(|s| transform::replacements::source_field(acc, s, &cluster_scoped))
                .and_then(|(j, node)| {
                    let path = super::places::path_of(&acc[j].node, node)?;
                    Some(super::places::object_source(&acc[j], &path))
                });
            // A target that held the value written is told, and recorded as written too.
            let mut told = Told::new();
            let mut tell = |i: usize, at: &[PathStep<'_>]| told.push((i, steps_to_path(at)));
            transform::replacements::apply_telling(
                acc,
                std::slice::from_ref(r),
                &cluster_scoped,
                ctx.kustomize(),
                Some(&mut tell),
            )
            .map_err(|e| e.at(at.clone()).label("applying these replacements"))?;
            super::places::record_replacement(acc, &place, source.clone());
            super::writes::record_told_replacement(acc, told, &place, source);
        }
    }
    Ok(())
}

/// Binds the kustomization's `vars:` to the objects accumulated so far.
pub(super) fn bind_vars(
    loaded: &Loaded,
    acc: &mut [Resource],
    vars: &mut VarSet,
    tables: &FieldSpecTables,
) -> Result<()> {
    let k = &loaded.kustomization;
    transform::vars::bind_vars(acc, &k.vars, vars, &|g: &Gvk| tables.is_cluster_scoped(g)).map_err(
        |e| {
            e.at(loaded.key_location(&[PathSeg::Key("vars".into())]))
                .label("binding these vars")
        },
    )
}

/// kustomize reads every object's annotations as strings and writes them back when it strips
/// its build annotations (`Resource.RemoveBuildAnnotations`, `SetOrigin(nil)`, run on the whole
/// output by `api/krusty/kustomizer.go`): each value becomes its source text (`port: 8080` →
/// `"8080"`, `True` → `"True"`, a map → `""`), an empty map is dropped, and a map kustomize
/// then cannot print fails the build ([`string_maps::unprintable`]).
fn stringify_annotations(resources: &mut [Resource]) -> Result<()> {
    for r in resources {
        string_maps::restring_meta(&mut r.node, "annotations");
        if let Some(m) = r
            .node
            .get_path(&["metadata", "annotations"])
            .and_then(Node::as_map)
            && let Some(why) = string_maps::unprintable(m)
        {
            return Err(Error::new(
                ErrorKind::InvalidResource,
                format!(
                    "kustomize cannot print the annotations of {} {:?}: {why}",
                    r.kind(),
                    r.name()
                ),
            )
            .at_opt(r.origin.clone())
            .label("this object")
            .help(
                "kustomize fails on this object: give the annotation a key that reads as a \
                 string unquoted, or a value whose first line does not start with a tab",
            ));
        }
        if let Some(path) = crate::yaml::folded::unprintable_block(&r.node) {
            return Err(Error::new(
                ErrorKind::InvalidResource,
                format!(
                    "kustomize cannot print {} {:?}: the value of `{path}` starts with a tab and \
                     spans lines, and is written without quotes, so kustomize writes it as a \
                     literal block that it cannot read back (found a tab character where an \
                     indentation space is expected)",
                    r.kind(),
                    r.name()
                ),
            )
            .at_opt(r.origin.clone())
            .label("this object")
            .help(
                "kustomize fails on this object: write the value double-quoted where it is \
                 set (\"\\t…\"), or start it with something other than a tab",
            ));
        }
    }
    Ok(())
}
