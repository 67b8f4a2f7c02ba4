//! The build's side of patches, plugin configurations and schemas: reads a kustomization's
//! `patchesStrategicMerge` / `patches` / `patchesJson6902` and runs them where kustomize runs
//! them; loads `generators:`, `transformers:` and `validators:` entries (inline YAML, files,
//! or kustomization directories built as kustomize builds them) and runs the builtin plugin
//! configurations (`apiVersion: builtin`) through the modules that own each kind; hands exec
//! plugins to `exec` when the user opted in and refuses them (and container and Go plugins)
//! otherwise; and keeps
//! the schema `openapi:` selects. Field semantics stay in `transform`, `generate` and `merge`.

use std::sync::Arc;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::Loaded;
use crate::resource::{Gvk, Resource};
use crate::schema::Schema;
use crate::source::{Location, SourceFile};
use crate::yaml::path::PathSeg;
use crate::yaml::{Node, parse::parse_one};

use super::patches::{self, Flavor, Patch};
use super::tracker::Tracker;
use super::{Builder, KustomizeVersion, steps};

/// Render-wide state of this stage.
#[derive(Default)]
pub(super) struct State {
    /// The schema patches merge with: the first `openapi:` met (root first, then bases and
    /// components in build order) wins, as kustomize's global schema does
    /// (`kyaml/openapi.SetSchema` with `reset` false below the root); built-in otherwise.
    custom_schema: Option<Arc<Schema>>,
    /// Why the chosen `openapi:` file cannot be a schema, when it cannot: kustomize keeps its
    /// bytes (`kyaml/openapi.SetSchema`) and parses them only when the schema is first needed
    /// (`initSchema`, which then panics: `invalid schema file: …`), so the render fails only
    /// then ([`Builder::usable_schema`]); `custom_schema` holds the built-in one meanwhile.
    unusable_schema: Option<Error>,
    builtin_schema: Option<Arc<Schema>>,
    /// The kinds of the built-in schema ([`Schema::builtin_kinds`]).
    builtin_kinds: Option<Arc<crate::fasthash::FastSet<crate::resource::Gvk>>>,
    /// How far the build has needed the built-in schema before a custom one was chosen.
    builtin_use: BuiltinUse,
    /// The root's `buildMetadata` and where the build is.
    pub meta: super::metadata::Meta,
    /// `--helm-api-versions` as configuring charts has changed it (`helm::configure_api_versions`).
    pub helm_api_versions: Vec<String>,
}

/// What kustomize's global schema holds of the built-in definitions when a custom `openapi:`
/// document is met below the root (`kyaml/openapi.SetSchema`, `initSchema` and
/// `IsNamespaceScoped`): it is one set of definitions that a custom document is parsed into,
/// never cleared during a build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum BuiltinUse {
    /// Not needed yet: the custom document replaces the built-in schema.
    #[default]
    Unused,
    /// Only a kind's scope was asked for a kind outside kustomize's precomputed scope table
    /// (every resource read asks): kustomize marks the built-in schema for parsing and parses
    /// it right after the custom document, so built-in definitions win on equal names.
    Delayed,
    /// Parsed (a strategic merge patch walked it): the custom document is parsed on top and
    /// wins.
    Parsed,
}

/// A kustomization's patches, split by where kustomize runs them.
pub(super) struct LoadedPatches {
    /// `patchesStrategicMerge`, then `patches` (before the field transformers).
    pub early: Vec<Patch>,
    /// `patchesJson6902` (after annotations, before replicas).
    pub json6902: Vec<Patch>,
}

/// Where each entry of a kustomization's patch lists is written, each list located in one
/// pass when its first entry is asked for (`locate_entries`; one search from the top per
/// entry made N patches cost O(N²) lines).
struct EntryLocations<'l> {
    loaded: &'l Loaded,
    lists: std::cell::RefCell<Vec<(String, crate::kustomization::load::Entries)>>,
}

impl<'l> EntryLocations<'l> {
    fn new(loaded: &'l Loaded) -> Self {
        EntryLocations {
            loaded,
            lists: Default::default(),
        }
    }

    /// Where entry `i` of the list `field` is written.
    fn get(&self, field: &str, i: usize) -> Location {
        let mut lists = self.lists.borrow_mut();
        if let Some((_, e)) = lists.iter().find(|(f, _)| f == field) {
            return e.get(i);
        }
        let e = crate::kustomization::load::locate_entries(
            &self.loaded.file,
            &[PathSeg::Key(field.to_string())],
        );
        let at = e.get(i);
        lists.push((field.to_string(), e));
        at
    }
}

impl Builder<'_> {
    /// Notes the kustomization's `openapi:` (when no schema was chosen yet).
    #[allow(
        clippy::too_many_lines,
        reason = "the openapi: field read as kustomize reads it, each of its errors in order; split, the rules would lose their order"
    )]
    pub(super) fn note_openapi(&mut self, loaded: &Loaded) -> Result<()> {
        let Some(fields) = loaded
            .kustomization
            .openapi
            .as_ref()
            .filter(|m| !m.is_empty())
        else {
            return Ok(());
        };
        if self.state.plugins.custom_schema.is_some() {
            return Ok(());
        }
        let at = || loaded.key_location(&[PathSeg::Key("openapi".into())]);
        if fields.contains_key("path") && fields.contains_key("version") {
            return Err(Error::new(
                ErrorKind::Schema,
                "builtin version and custom schema provided, cannot use both",
            )
            .at(at()));
        }
        if let Some(path) = fields.get("path") {
            let bytes = steps::read_named_file(self.load.fs, None, self.state.ctx, loaded, path)
                .map_err(|e| e.at(at()))?;
            let file = SourceFile::new(
                steps::named_file_shown(loaded, path),
                super::parse::text_of(bytes),
            );
            let unusable = |why: String| {
                Error::new(
                    ErrorKind::Schema,
                    format!("the openapi file '{path}' is not a valid schema: {why}"),
                )
                .at(at())
                .label("the schema named here")
                .help(
                    "kustomize reads this file only when the schema is first needed (a \
                     strategic merge patch, or the scope of a kind Kubernetes does not define), \
                     and then stops (`panic: invalid schema file`); fix the file, or remove \
                     `openapi:`",
                )
            };
            let doc = match parse_one(&file.text) {
                // kyaml's `openapi.parse` decodes the text as a `spec.Swagger`: any map is one
                // (without `definitions` it defines nothing); anything else is not.
                Ok(Node::Map(m))
                    if !["definitions", "$defs", "components"]
                        .iter()
                        .any(|k| m.contains_key(k)) =>
                {
                    Ok(Node::Map(crate::yaml::Map::from_iter([(
                        "definitions".to_string(),
                        Node::Map(crate::yaml::Map::default()),
                    )])))
                }
                Ok(doc @ Node::Map(_)) => {
                    // Each definition decodes as a `spec.Schema`, which only a map is.
                    let bad = doc
                        .get("definitions")
                        .and_then(Node::as_map)
                        .and_then(|m| m.iter().find(|(_, v)| !matches!(v, Node::Map(_))));
                    match bad {
                        Some((name, v)) => Err(unusable(format!(
                            "definition '{name}' is a {}, not a schema (a map)",
                            v.kind_name()
                        ))),
                        None => Ok(doc),
                    }
                }
                Ok(other) => Err(unusable(format!(
                    "it holds a {}, not a map of definitions",
                    other.kind_name()
                ))),
                Err(e) => {
                    let line = e.offset.map_or(1, |o| file.line_col(o).0);
                    Err(unusable(format!("{}:{line}: {}", file.display, e.message)))
                }
            };
            let added = doc.and_then(|doc| {
                match self.state.plugins.builtin_use {
                    BuiltinUse::Unused => Schema::from_openapi(&doc),
                    BuiltinUse::Delayed => {
                        let mut s = Schema::clone(&self.builtin_schema());
                        s.add_openapi_beneath(&doc).map(|()| s)
                    }
                    BuiltinUse::Parsed => {
                        let mut s = Schema::clone(&self.builtin_schema());
                        s.add_openapi(&doc).map(|()| s)
                    }
                }
                .map_err(|e| unusable(e.to_string()))
            });
            match added {
                Ok(schema) => self.state.plugins.custom_schema = Some(Arc::new(schema)),
                Err(e) => {
                    self.state.plugins.custom_schema = Some(self.builtin_schema());
                    self.state.plugins.unusable_schema = Some(e);
                }
            }
        } else if let Some(v) = fields.get("version") {
            // kustomize v5.5 embeds one version; any other is an error there.
            if v != "v1.21.2" {
                return Err(Error::new(
                    ErrorKind::Schema,
                    format!("the specified OpenAPI version is not built in: {v}"),
                )
                .at(at())
                .help("kustomize v5.5 knows only `version: v1.21.2`; give the schema as `path:` instead"));
            }
            // kustomize embeds a few Kubernetes versions; ply embeds one (1.37). A version
            // picks the built-in schema.
            self.warnings.warn(format!(
                "openapi version {v}: ply uses its built-in Kubernetes 1.37 schema"
            ));
            let builtin = self.builtin_schema();
            self.state.plugins.custom_schema = Some(builtin);
        }
        Ok(())
    }

    /// The kinds the built-in schema knows: only whether it knows each kind read is asked
    /// here, so a render that never merges with the schema never parses it.
    fn builtin_kinds(&mut self) -> Arc<crate::fasthash::FastSet<crate::resource::Gvk>> {
        Arc::clone(self.state.plugins.builtin_kinds.get_or_insert_with(|| {
            match self.state.ctx.opts.shared.as_deref() {
                Some(shared) => shared.builtin_kinds(),
                None => Arc::new(Schema::builtin_kinds()),
            }
        }))
    }

    fn builtin_schema(&mut self) -> Arc<Schema> {
        Arc::clone(self.state.plugins.builtin_schema.get_or_insert_with(|| {
            match self.state.ctx.opts.shared.as_deref() {
                Some(shared) => shared.builtin_schema(),
                None => Arc::new(Schema::builtin()),
            }
        }))
    }

    fn schema(&mut self) -> Arc<Schema> {
        match &self.state.plugins.custom_schema {
            Some(s) => Arc::clone(s),
            None => self.builtin_schema(),
        }
    }

    /// Notes resources read before any custom schema was chosen: kustomize asks the scope of
    /// each one's kind (`resid.NewGvk`), and a kind outside its precomputed table marks the
    /// built-in schema for parsing. ply approximates that table (Kubernetes 1.21's kinds) by
    /// the kinds its built-in schema knows.
    pub(super) fn note_kinds_read(&mut self, resources: &[Resource]) -> Result<()> {
        if let Some(e) = self.state.plugins.unusable_schema.clone() {
            // kyaml's `IsNamespaceScoped` parses a custom schema for a kind outside its
            // precomputed table.
            let known = self.builtin_kinds();
            if let Some(r) = resources.iter().find(|r| !known.contains(&r.gvk())) {
                let mut e = e;
                e.message = format!(
                    "{} (the scope of kind {} needs it)",
                    e.message,
                    r.gvk().kind
                );
                return Err(e);
            }
            return Ok(());
        }
        if self.state.plugins.custom_schema.is_some()
            || self.state.plugins.builtin_use != BuiltinUse::Unused
        {
            return Ok(());
        }
        let known = self.builtin_kinds();
        if resources.iter().any(|r| !known.contains(&r.gvk())) {
            self.state.plugins.builtin_use = BuiltinUse::Delayed;
        }
        Ok(())
    }

    /// Reads a file a patch names, relative to the kustomization (or takes it from the reader
    /// thread, parsed).
    fn patch_reader<'l>(
        &'l self,
        loaded: &'l Loaded,
    ) -> impl FnMut(&str) -> Result<patches::PatchFile> + 'l {
        move |rel: &str| {
            if let Some(remote) = steps::remote_named_file(self.load.fs, loaded, rel) {
                let shown = crate::remote::url::redact(rel);
                return Ok(patches::PatchFile {
                    file: SourceFile::new(shown, super::ahead::text_of(remote?)),
                    parsed: None,
                });
            }
            let (target, canonical) =
                steps::resolve_named_file(self.load.fs, self.state.ctx, loaded, rel)?;
            if let Some(ahead) = self.load.ahead.and_then(|a| a.take_patch(&canonical)) {
                return Ok(ahead);
            }
            let bytes = self
                .load
                .fs
                .read(&canonical)
                .map_err(|e| Error::io(&target, &e))?;
            if let Some(shared) = self.state.ctx.opts.shared.as_deref() {
                let source = patches::source_name(Some(rel), None);
                return Ok(shared.patch(&target, &canonical, &source, bytes));
            }
            Ok(patches::PatchFile {
                file: SourceFile::new(target, super::ahead::text_of(bytes)),
                parsed: None,
            })
        }
    }

    pub(super) fn load_patches(&mut self, loaded: &Loaded) -> Result<LoadedPatches> {
        let k = &loaded.kustomization;
        check_patch_options(loaded, self.state.ctx.kustomize())?;
        let entries = EntryLocations::new(loaded);
        let locate = |field: &str, i: usize| entries.get(field, i);
        let mut read = self.patch_reader(loaded);
        let mut early =
            patches::load_strategic_merge(&k.patches_strategic_merge, &mut read, &locate)?;
        early.extend(patches::load_patches(
            &k.patches,
            "patches",
            &mut read,
            &locate,
            self.state.ctx.kustomize(),
        )?);
        let json6902 = patches::load_json6902(&k.patches_json6902, &mut read, &locate)?;
        Ok(LoadedPatches { early, json6902 })
    }

    /// The patches a kustomization's fields name, one transformer at a time as kustomize
    /// runs them (all `patchesStrategicMerge` entries are one transformer, every other entry
    /// its own), each followed by kustomize's origin bookkeeping when origins are tracked.
    pub(super) fn apply_field_patches(
        &mut self,
        loaded: &Loaded,
        list: &[Patch],
        acc: &mut Vec<Resource>,
        mut tracker: Option<&mut Tracker<'_>>,
    ) -> Result<()> {
        if !self.state.plugins.meta.tracks_origin() {
            return self.apply_patches(list, acc, tracker);
        }
        let here = self.state.plugins.meta.kustomization_file(loaded);
        let mut rest = list;
        while let Some(first) = rest.first() {
            let n = if first.flavor == patches::Flavor::StrategicMerge {
                rest.iter()
                    .take_while(|p| p.flavor == patches::Flavor::StrategicMerge)
                    .count()
            } else {
                1
            };
            let (group, tail) = rest.split_at(n);
            self.apply_patches(group, acc, tracker.as_deref_mut())?;
            let kind = match first.flavor {
                patches::Flavor::StrategicMerge => "PatchStrategicMergeTransformer",
                patches::Flavor::Patch => "PatchTransformer",
                patches::Flavor::Json6902 => "PatchJson6902Transformer",
            };
            super::metadata::adopt_orphans(acc, &here, kind, None);
            rest = tail;
        }
        Ok(())
    }

    /// Applies `list` in order. With a tracker, each patch is applied and reported on its
    /// own, since the tracker compares the objects after each patch with what they were
    /// before it (and picks the objects a patch applies to before it runs). kustomize applies
    /// them one after another too (`configureBuiltinTransformers` in
    /// `api/internal/target/kusttarget_configplugin.go` makes one `PatchTransformerPlugin` per
    /// `patches` entry; `PatchStrategicMergeTransformerPlugin.Transform` applies its files in
    /// order), so the output is the same as applying the list in one pass, which keeps one
    /// list of objects and one index of their ids for all of them. Whether a patch renamed an object since the list was last rebuilt carries
    /// from one to the next, as inside one pass.
    pub(super) fn apply_patches(
        &mut self,
        list: &[Patch],
        acc: &mut Vec<Resource>,
        tracker: Option<&mut Tracker<'_>>,
    ) -> Result<()> {
        if list.is_empty() {
            return Ok(());
        }
        let Some(t) = tracker else {
            return self.apply_patches_now(list, acc, &mut false);
        };
        let mut renamed = false;
        for p in list {
            let tables = self.state.ctx.tables;
            let scope = |g: &Gvk| tables.is_cluster_scoped(g);
            let chosen = patches::chosen(acc, p, &scope);
            let count = acc.len();
            self.apply_patches_now(std::slice::from_ref(p), acc, &mut renamed)?;
            let chosen = (acc.len() == count).then_some(chosen.as_slice());
            let sources = chosen
                .map(|c| super::writes::copy_sources(acc, p, c))
                .unwrap_or_default();
            // A patch that removed objects is followed over those that hold its documents now.
            let tracked = match chosen {
                Some(c) => c.to_vec(),
                None => patches::chosen(acc, p, &scope),
            };
            let schema = self.schema();
            let to = super::writes::Tracked {
                chosen,
                tracked: &tracked,
                schema: &schema,
            };
            t.patch(acc, p, &to, &sources);
        }
        Ok(())
    }

    fn apply_patches_now(
        &mut self,
        list: &[Patch],
        acc: &mut Vec<Resource>,
        renamed: &mut bool,
    ) -> Result<()> {
        // A strategic merge patch walks the schema, which makes kustomize parse its built-in
        // one (`kyaml/openapi.SchemaForResourceType`); JSON patches never look at it.
        if self.state.plugins.custom_schema.is_none()
            && list.iter().any(|p| matches!(p.body, patches::Body::Smp(_)))
        {
            self.state.plugins.builtin_use = BuiltinUse::Parsed;
        }
        if list.iter().any(|p| matches!(p.body, patches::Body::Smp(_)))
            && let Some(e) = &self.state.plugins.unusable_schema
        {
            // A strategic merge patch walks the schema (`kyaml/openapi.SchemaForResourceType`).
            let mut e = e.clone();
            e.message = format!("{} (a strategic merge patch needs it)", e.message);
            return Err(e);
        }
        let schema = self.schema();
        patches::apply_all(acc, list, self.state.ctx, &schema, self.warnings, renamed)
    }

    pub(super) fn run_generator_plugins(
        &mut self,
        loaded: &Loaded,
        configs: &[(Resource, Location)],
        acc: &mut Vec<Resource>,
    ) -> Result<()> {
        for (config, loc) in configs {
            let plugin = if config.node.str_at(&["apiVersion"]) == Some("builtin") {
                None
            } else {
                super::exec::generate(
                    &self.state.ctx.opts.plugins,
                    self.state.ctx.kustomize(),
                    loaded,
                    config,
                    loc,
                )?
            };
            if plugin.is_none() {
                check_builtin(config, loc, "generators")?;
            }
            let kind = config.kind().to_string();
            let before = self
                .state
                .plugins
                .meta
                .origin
                .then(|| super::metadata::origins(acc));
            if let Some(generated) = plugin {
                super::helm::absorb(acc, generated, loc)?;
            } else if kind == "HelmChartInflationGenerator" {
                let chart =
                    super::helm::config_chart(&config.node, loc, self.state.ctx.kustomize())?;
                super::helm::check_enabled(&self.state.ctx.opts.helm, &chart)?;
                let versions = &mut self.state.plugins.helm_api_versions;
                super::helm::configure_api_versions(versions, &chart.chart);
                let inflated = super::helm::inflate(
                    self.load.fs,
                    self.state.ctx,
                    loaded,
                    &chart,
                    versions,
                    None,
                )?;
                super::helm::absorb(acc, inflated, loc)?;
            } else {
                steps::run_generator_configs(
                    self.load.fs,
                    self.state.ctx,
                    loaded,
                    &[(config.clone(), loc.clone())],
                    acc,
                )?;
            }
            if let Some(before) = &before {
                let here = self.state.plugins.meta.kustomization_file(loaded);
                let configured_in = super::metadata::configured_in(&config.node, &here);
                let generated = if kind == "SecretGenerator" {
                    "Secret"
                } else {
                    "ConfigMap"
                };
                let replaced: Vec<(&str, String)> = match (
                    config.node.str_at(&["behavior"]),
                    config
                        .node
                        .str_at(&["name"])
                        .or_else(|| config.node.str_at(&["metadata", "name"])),
                ) {
                    (Some("replace"), Some(n)) => vec![(generated, n.to_string())],
                    _ => Vec::new(),
                };
                super::metadata::annotate_generated(
                    acc,
                    before,
                    &configured_in,
                    Some(&kind),
                    Some(&config.node),
                    &replaced,
                    self.state.plugins.meta.source(),
                );
            }
        }
        Ok(())
    }

    pub(super) fn run_transformer_plugins(
        &mut self,
        loaded: &Loaded,
        configs: &[(Resource, Location)],
        acc: &mut Vec<Resource>,
        mut tracker: Option<&mut Tracker<'_>>,
    ) -> Result<()> {
        for (config, loc) in configs {
            let ran = config.node.str_at(&["apiVersion"]) != Some("builtin")
                && super::exec::transform(
                    &self.state.ctx.opts.plugins,
                    self.state.ctx.kustomize(),
                    loaded,
                    config,
                    loc,
                    acc,
                )?;
            if !ran {
                check_builtin(config, loc, "transformers")?;
                self.run_transformer(loaded, config, loc, acc, tracker.as_deref_mut())
                    .map_err(|e| {
                        if e.location.is_none() {
                            e.at(loc.clone())
                        } else {
                            e
                        }
                    })?;
            }
            if self.state.plugins.meta.tracks_origin() {
                let here = self.state.plugins.meta.kustomization_file(loaded);
                let configured_in = super::metadata::configured_in(&config.node, &here);
                super::metadata::adopt_orphans(
                    acc,
                    &configured_in,
                    config.kind(),
                    Some(&config.node),
                );
            }
            if self.state.plugins.meta.transformers {
                let here = self.state.plugins.meta.kustomization_file(loaded);
                let configured_in = super::metadata::configured_in(&config.node, &here);
                super::metadata::annotate_transformer(
                    acc,
                    &configured_in,
                    config.kind(),
                    Some(&config.node),
                    self.state.plugins.meta.source(),
                );
            }
        }
        Ok(())
    }

    fn run_transformer(
        &mut self,
        loaded: &Loaded,
        config: &Resource,
        loc: &Location,
        acc: &mut Vec<Resource>,
        tracker: Option<&mut Tracker<'_>>,
    ) -> Result<()> {
        let node = &config.node;
        let kind = config.kind();
        let declared = config.origin.clone().or_else(|| Some(loc.clone()));
        match kind {
            "PatchTransformer" | "PatchJson6902Transformer" => {
                self.patch_config(loaded, config, declared, acc, tracker)
            }
            "PatchStrategicMergeTransformer" => {
                self.smp_config(loaded, config, declared, acc, tracker)
            }
            "ReplacementTransformer" => {
                let (fs, ctx) = (self.load.fs, self.state.ctx);
                let mut load = |rel: &str| -> Result<Node> {
                    let bytes = steps::read_named_file(fs, None, ctx, loaded, rel)?;
                    // sigs.k8s.io/yaml reads it: YAML 1.1 booleans.
                    crate::yaml::parse::parse_config_one(&String::from_utf8_lossy(&bytes)).map_err(
                        |e| Error::new(ErrorKind::Yaml, format!("replacements file '{rel}': {e}")),
                    )
                };
                let mut ignored = Vec::new();
                let tables = self.state.ctx.tables;
                crate::transform::replacements::apply_plugin_config(
                    node,
                    acc,
                    &|g: &Gvk| tables.is_cluster_scoped(g),
                    &mut load,
                    &mut ignored,
                    self.state.ctx.kustomize(),
                )?;
                for field in ignored {
                    self.warnings.warn(format!(
                        "replacements file {field}: unknown field ignored (as kustomize does)"
                    ));
                }
                Ok(())
            }
            // kustomize's HashTransformer appends the hash but leaves the object marked, so
            // the root appends a second one (observed with kustomize v5.5.0).
            "HashTransformer" => {
                for r in acc.iter_mut().filter(|r| r.needs_hash_suffix) {
                    let name = format!("{}-{}", r.name(), crate::generate::hash_of(&r.node));
                    r.store_previous_id();
                    r.set_name(&name);
                }
                Ok(())
            }
            // Deprecated in kustomize but still loaded: a prefix and a suffix with one set of
            // field specs.
            "PrefixSuffixTransformer" => {
                let specs = crate::transform::specs_from_node(
                    "fieldSpecs",
                    &lenient_specs(node.get("fieldSpecs").unwrap_or(&Node::Null)),
                )?;
                let text = |k: &str| node.get(k).and_then(Node::scalar_text).unwrap_or_default();
                let (prefix, suffix) = (text("prefix"), text("suffix"));
                if !prefix.is_empty() {
                    crate::transform::prefix_suffix::add_prefix(acc, &prefix, &specs)?;
                }
                if !suffix.is_empty() {
                    crate::transform::prefix_suffix::add_suffix(acc, &suffix, &specs)?;
                }
                Ok(())
            }
            "ValueAddTransformer" => self.value_add(loaded, config, acc),
            _ => {
                let fields = self.state.config.fields.clone();
                steps::run_transformer_configs(
                    &[(config.clone(), loc.clone())],
                    acc,
                    &fields,
                    self.warnings,
                )
            }
        }
    }
}

impl Builder<'_> {
    /// A builtin PatchTransformer or PatchJson6902Transformer configuration: its one patch.
    fn patch_config(
        &mut self,
        loaded: &Loaded,
        config: &Resource,
        declared: Option<Location>,
        acc: &mut Vec<Resource>,
        tracker: Option<&mut Tracker<'_>>,
    ) -> Result<()> {
        let (node, kind) = (&config.node, config.kind());
        let flavor = if kind == "PatchTransformer" {
            Flavor::Patch
        } else {
            Flavor::Json6902
        };
        let mut entry = crate::kustomization::Patch {
            path: node.str_at(&["path"]).map(str::to_string),
            patch: node
                .str_at(&[if kind == "PatchTransformer" {
                    "patch"
                } else {
                    "jsonOp"
                }])
                .map(str::to_string),
            ..Default::default()
        };
        // Plugin configurations decode leniently (sigs.k8s.io/yaml `yaml.Unmarshal`).
        if let Some(t) = node.get("target").filter(|t| !t.is_null()) {
            entry.target = Some(crate::yaml::de::from_node(t).map_err(|e| {
                Error::new(ErrorKind::Patch, format!("builtin {kind} target: {e}"))
            })?);
        }
        if let Some(o) = node.get("options").filter(|t| !t.is_null()) {
            entry.options = Some(crate::yaml::de::from_node(o).map_err(|e| {
                Error::new(ErrorKind::Patch, format!("builtin {kind} options: {e}"))
            })?);
        }
        let kustomize = self.state.ctx.kustomize();
        let p = {
            let mut read = self.patch_reader(loaded);
            patches::load_patch(&entry, flavor, &mut read, declared, kustomize)?
        };
        self.apply_patches(&[p], acc, tracker)
    }

    /// A builtin PatchStrategicMergeTransformer configuration: its `paths` and `patches`.
    fn smp_config(
        &mut self,
        loaded: &Loaded,
        config: &Resource,
        declared: Option<Location>,
        acc: &mut Vec<Resource>,
        tracker: Option<&mut Tracker<'_>>,
    ) -> Result<()> {
        let node = &config.node;
        let mut entries: Vec<String> = match node.get("paths") {
            Some(Node::Seq(items)) => items.iter().filter_map(Node::scalar_text).collect(),
            _ => Vec::new(),
        };
        if let Some(p) = node.str_at(&["patches"]).filter(|p| !p.trim().is_empty()) {
            entries.push(p.to_string());
        }
        if entries.is_empty() {
            return Err(Error::new(
                ErrorKind::Patch,
                "builtin PatchStrategicMergeTransformer: empty file path and empty patch content",
            ));
        }
        let d = declared;
        let locate = move |_: &str, _: usize| d.clone().unwrap_or_else(|| loaded.key_location(&[]));
        let list = {
            let mut read = self.patch_reader(loaded);
            patches::load_strategic_merge(&entries, &mut read, &locate)?
        };
        self.apply_patches(&list, acc, tracker)
    }

    /// kustomize's ValueAddTransformer (field logic in `transform::value_add`): the default
    /// value is the kustomization directory's base name, `targetFilePath` is read like other
    /// files the kustomization names, and selectors pick resources as patch targets do.
    fn value_add(
        &mut self,
        loaded: &Loaded,
        config: &Resource,
        acc: &mut [Resource],
    ) -> Result<()> {
        use crate::transform::value_add;
        let (fs, ctx) = (self.load.fs, self.state.ctx);
        let mut load = |rel: &str| -> Result<Node> {
            let bytes = steps::read_named_file(fs, None, ctx, loaded, rel)?;
            parse_one(&String::from_utf8_lossy(&bytes)).map_err(|e| {
                Error::new(
                    ErrorKind::Yaml,
                    format!("builtin ValueAddTransformer: targetFilePath '{rel}': {e}"),
                )
            })
        };
        // Go's `filepath.Base` of the root: its last name, or `/`.
        let base = loaded
            .dir
            .file_name()
            .map_or_else(|| "/".to_string(), |n| n.to_string_lossy().into_owned());
        // Errors point into the configuration's own text, found from where its document
        // starts.
        let locate = |path: &[PathSeg]| -> Option<Location> {
            let origin = config.origin.as_ref()?;
            let text = origin.file.text.get(origin.offset..)?;
            let own = SourceFile::new(origin.file.path.clone(), text.to_string());
            let at = crate::kustomization::load::locate(&own, path);
            Some(Location::new(
                Arc::clone(&origin.file),
                origin.offset + at.offset,
                at.len,
            ))
        };
        let cfg = value_add::Config::from_node(&config.node, &base, &mut load, &locate)?;
        let tables = self.state.ctx.tables;
        let scope = |g: &Gvk| tables.is_cluster_scoped(g);
        let select = |sel: &crate::kustomization::Selector, all: &[Resource]| {
            let slots: Vec<Option<Resource>> = all.iter().cloned().map(Some).collect();
            patches::select_indices(&slots, sel, &scope)
        };
        value_add::apply(&cfg, acc, tables, &select, &locate)
    }
}

/// Validators: builtin ones do not exist in kustomize; anything else would run a program.
pub(super) fn run_validator_plugins(configs: &[(Resource, Location)]) -> Result<()> {
    match configs.first() {
        None => Ok(()),
        Some((config, loc)) => {
            check_builtin(config, loc, "validators")?;
            Err(not_a(config.kind(), "validator").at(loc.clone()))
        }
    }
}

/// Refuses a configuration that is not `apiVersion: builtin`: kustomize would run an exec,
/// container (KRM function) or Go plugin; ply runs exec ones only when the user opts in.
fn check_builtin(config: &Resource, loc: &Location, field: &str) -> Result<()> {
    let api = config.node.str_at(&["apiVersion"]).unwrap_or("");
    if api == "builtin" {
        return Ok(());
    }
    let kind = config.kind();
    let function =
        config
            .node
            .str_at(&["metadata", "annotations", "config.kubernetes.io/function"]);
    let what = match function {
        Some(f) if f.contains("exec") => "an exec KRM function",
        Some(f) if f.contains("container") => {
            "a container KRM function (it needs a container runtime, which ply does not drive)"
        }
        Some(_) => "a KRM function",
        None => "an external (exec or Go) plugin",
    };
    Err(Error::new(
        ErrorKind::Plugin,
        format!(
            "{api}/{kind} named under `{field}` is {what}: ply runs no plugins without --enable-alpha-plugins"
        ),
    )
    .at(config.origin.clone().unwrap_or_else(|| loc.clone()))
    .label("not a builtin plugin")
    .help("ply runs exec plugins and exec KRM functions only when asked: --enable-alpha-plugins (and --enable-exec for exec functions); otherwise use a builtin configuration (`apiVersion: builtin`) or run the plugin yourself and list its output under `resources`"))
}

fn not_a(kind: &str, role: &str) -> Error {
    Error::new(
        ErrorKind::Plugin,
        format!("builtin {kind} is not a known {role}"),
    )
    .help("the builtin generators are ConfigMapGenerator, SecretGenerator and IAMPolicyGenerator; the transformers are AnnotationsTransformer, HashTransformer, ImageTagTransformer, LabelTransformer, NamespaceTransformer, PatchJson6902Transformer, PatchStrategicMergeTransformer, PatchTransformer, PrefixTransformer, ReplacementTransformer, ReplicaCountTransformer, SortOrderTransformer, SuffixTransformer and ValueAddTransformer")
}

/// Field specs of a plugin configuration without the keys a field spec does not have:
/// kustomize decodes plugin configurations leniently (`yaml.Unmarshal`), ignoring them.
fn lenient_specs(node: &Node) -> Node {
    let Node::Seq(items) = node else {
        return node.clone();
    };
    Node::Seq(
        items
            .iter()
            .map(|item| match item {
                Node::Map(m) => Node::Map(
                    m.iter()
                        .filter(|(k, _)| {
                            matches!(k.as_str(), "group" | "version" | "kind" | "path" | "create")
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ),
                other => other.clone(),
            })
            .collect(),
    )
}

/// `patches[].options` is a map of booleans for kustomize v5.5.0, which ignores keys it does
/// not know (v5.7.1 too: kustomize/api v0.20's `types.Patch.Options` is `map[string]bool`);
/// from v5.8.0 it is `types.PatchArgs` (PR #5930, `api/types/patch.go` of kustomize/api
/// v0.21), and the kustomization's strict decoding refuses any key but `allowNameChange` and
/// `allowKindChange`.
fn check_patch_options(loaded: &Loaded, kustomize: KustomizeVersion) -> Result<()> {
    if !kustomize.at_least(KustomizeVersion::V5_8_1) {
        return Ok(());
    }
    for (i, entry) in loaded.kustomization.patches.iter().enumerate() {
        let Some(options) = &entry.options else {
            continue;
        };
        if let Some(key) = options
            .keys()
            .find(|k| !matches!(k.as_str(), "allowNameChange" | "allowKindChange"))
        {
            let path = [
                PathSeg::Key("patches".into()),
                PathSeg::Index(i),
                PathSeg::Key("options".into()),
                PathSeg::Key(key.clone()),
            ];
            return Err(Error::new(
                ErrorKind::Kustomization,
                format!("invalid Kustomization: json: unknown field \"{key}\""),
            )
            .at(loaded.key_location(&path))
            .label("unknown option")
            .help(
                "kustomize 5.8 knows two patch options, allowNameChange and allowKindChange \
                 (kustomize 5.5.0 ignored other keys: --kustomize-version 5.5.0)",
            ));
        }
    }
    Ok(())
}
