//! `render()`: builds a kustomization directory into resources, the way `kustomize build`
//! does (`api/internal/target/kusttarget.go`, `accumulateTarget`): per directory, accumulate
//! `resources` (files and kustomization directories, recursively), then run the generators,
//! then the components (which see and transform what is accumulated so far), then the
//! transformers; at the root only, hash suffixes and dropping local-config objects. Resolves
//! the kustomization graph (cycles and root escapes are errors naming the chain; remote bases
//! come from `fs::remote`, pinned by `ply.lock`) and
//! reads every file once per render. Owns no field semantics: generators live in `generate`,
//! transformers in `transform`, merging in `merge`; reads files only through `fs`.

mod accumulate;
mod ahead;
mod context;
mod exec;
mod helm;
mod ids;
mod image_refs;
pub(crate) mod json_text;
mod metadata;
mod options;
mod parse;
mod patches;
mod places;
mod plugins;
pub(crate) mod provenance;
pub(crate) mod reads;
pub(crate) mod roots;
mod shared;
mod steps;
mod writes;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fasthash::FastMap;
use crate::fs::remote::{LockedTrees, RemoteTree, RemoteTrees, WithCache};
use crate::fs::{CachingDiskFs, FileKind, Fs, Restrictor};
use crate::kustomization::{Loaded, Ref, RefKind};
use crate::resource::Gvk;
use crate::resource::Resource;
use crate::resource::provenance::Step;
use crate::source::{Location, SourceFile, display_path};
use crate::transform::FieldSpecTables;
use crate::transform::configurations::BuildConfig;
use crate::transform::vars::VarSet;
use crate::yaml::Node;

pub use accumulate::parse_resources;
pub use context::Context;
pub use exec::PluginOptions;
pub use helm::{HelmOptions, run_controller_template as run_helm_template};
pub use ids::{id_string, same_id};
pub use options::{KustomizeVersion, Reading, RenderOptions};
pub use shared::{Shared, load_kustomization};
pub use steps::OutputOrder;

/// What a render produces: the resources in output order, and the OpenAPI definitions named
/// by `crds:` (kept for the schema-aware stages).
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    pub resources: Vec<Resource>,
    /// One map of type name → `{Schema, Dependencies}` per `crds:` file, as kustomize reads them
    /// (`api/internal/accumulator/loadconfigfromcrds.go`).
    pub crds: Vec<Node>,
    /// The files and kustomizations read during the render. Kept so that a caller about to
    /// exit can skip freeing them (`std::mem::forget` the whole value, as `ply render` does):
    /// dropping them took about 6% of a large render.
    pub cache: RenderCache,
    /// kustomize's built-in field-spec tables, as the render used them (the writer asks them
    /// which kinds are cluster-scoped); built once per render.
    pub tables: FieldSpecTables,
}

/// What one render read, by canonical path (opaque).
#[derive(Clone, Default)]
pub struct RenderCache {
    _files: FastMap<PathKey, CachedFile>,
    _kustomizations: FastMap<PathKey, Arc<Loaded>>,
}

/// A canonical path as a cache key: its bytes, hashed and compared as bytes (hashing a `Path`
/// walks its components). Canonical paths have one spelling each, so bytes tell them apart.
type PathKey = Vec<u8>;

/// The key of a canonical path; look up with [`key`].
fn path_key(path: PathBuf) -> PathKey {
    path.into_os_string().into_encoded_bytes()
}

/// The bytes a [`PathKey`] map is looked up by.
fn key(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

impl std::fmt::Debug for RenderCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderCache")
            .field("files", &self._files.len())
            .field("kustomizations", &self._kustomizations.len())
            .finish()
    }
}

/// Renders the kustomization in `dir` from the disk.
pub fn render(dir: &Path, opts: &RenderOptions, warnings: &mut Warnings) -> Result<Vec<Resource>> {
    render_with(&CachingDiskFs::default(), dir, opts, warnings).map(|r| r.resources)
}

/// Renders the kustomization in `dir` from any file system; remote bases come from the
/// cache as `dir`'s `ply.lock` pins them.
pub fn render_with(
    fs: &dyn Fs,
    dir: &Path,
    opts: &RenderOptions,
    warnings: &mut Warnings,
) -> Result<Rendered> {
    render_with_remotes(fs, dir, opts, None, warnings)
}

/// [`render_with`], finding remote bases through `remotes` (`ply fetch` passes the fetcher);
/// `None` reads them through `dir`'s `ply.lock` and the cache.
pub fn render_with_remotes(
    fs: &dyn Fs,
    dir: &Path,
    opts: &RenderOptions,
    remotes: Option<&dyn RemoteTrees>,
    warnings: &mut Warnings,
) -> Result<Rendered> {
    let root = root_dir(fs, dir)?;
    let tables = FieldSpecTables::builtin_for(opts.kustomize)?;
    let ahead = ahead::Ahead::default();
    let locked;
    let remotes = match remotes {
        Some(r) => r,
        None => {
            locked = LockedTrees::new(&root, opts.cache_dir.clone());
            &locked
        }
    };
    // Remote trees are read from the cache on the disk, whatever `fs` reads the rest from.
    let mapped = WithCache {
        inner: fs,
        cache: remotes.cache_dir(),
        remotes,
    };
    let fs: &dyn Fs = &mapped;
    let (resources, crds, cache) = if opts.reading == Reading::OneThread {
        build_root(
            fs,
            &root,
            opts,
            remotes,
            &tables,
            None,
            &mut |_| {},
            warnings,
        )?
    } else {
        std::thread::scope(|scope| {
            let (ahead, root) = (&ahead, &root);
            let mut reader = None;
            // The reader starts from the root kustomization, once the build has loaded it.
            // A thread the system cannot start leaves the build to read everything itself.
            let mut start = |loaded: Arc<Loaded>| {
                let spawned = crate::limits::thread("ply-reader")
                    .spawn_scoped(scope, move || ahead.read(fs, root, &loaded, opts));
                match spawned {
                    Ok(spawned) if opts.reading == Reading::AheadFirst => {
                        let _ = spawned.join();
                    }
                    Ok(spawned) => reader = Some(spawned),
                    Err(_) => {}
                }
            };
            let built = build_root(
                fs,
                root,
                opts,
                remotes,
                &tables,
                Some(ahead),
                &mut start,
                warnings,
            );
            ahead.stop();
            // A reader that panicked (a bug) left its items to the build, which did them:
            // its panic is not the render's.
            if let Some(reader) = reader {
                let _ = reader.join();
            }
            built
        })?
    };
    Ok(Rendered {
        resources,
        crds,
        cache,
        tables,
    })
}

/// The directory to render, absolute and canonical; a file or a missing path is an error.
fn root_dir(fs: &dyn Fs, dir: &Path) -> Result<PathBuf> {
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| Error::io(dir, &e))?
            .join(dir)
    };
    match (fs.kind(&abs), fs.canonicalize(&abs)) {
        (Some(FileKind::Dir), Ok(c)) => Ok(c),
        (Some(FileKind::File), _) => Err(Error::new(
            ErrorKind::Usage,
            format!(
                "'{}' is a file; ply render takes a directory holding a kustomization",
                dir.display()
            ),
        )),
        _ => Err(Error::new(
            ErrorKind::NotFound,
            format!("no such directory: '{}'", dir.display()),
        )),
    }
}

/// The resources of the root kustomization in `root` (canonical), finished; the crds and what
/// was read come along. `ahead` is the reader thread's share, when one runs; `loaded_root` is
/// called with the root kustomization once it is loaded.
#[allow(clippy::too_many_arguments)] // reason: the render's context, passed once
fn build_root(
    fs: &dyn Fs,
    root: &Path,
    opts: &RenderOptions,
    remotes: &dyn RemoteTrees,
    tables: &FieldSpecTables,
    ahead: Option<&ahead::Ahead>,
    loaded_root: &mut dyn FnMut(Arc<Loaded>),
    warnings: &mut Warnings,
) -> Result<(Vec<Resource>, Vec<Node>, RenderCache)> {
    // kustomize never lets a cloned kustomization leave its root
    // (`newLoaderAtGitClone`, api/internal/loader/fileloader.go).
    let remote_opts = RenderOptions {
        load_restrictor: Restrictor::RootOnly,
        ..opts.clone()
    };
    let mut b = Builder {
        load: Loader {
            fs,
            remotes,
            ahead,
            files: FastMap::default(),
            kustomizations: FastMap::default(),
        },
        state: RenderState {
            ctx: Context::new(opts, tables),
            remote_ctx: Context::new(&remote_opts, tables),
            config: BuildConfig::builtin(tables),
            spare_configs: Vec::new(),
            vars: VarSet::default(),
            var_places: FastMap::default(),
            crds: Vec::new(),
            plugins: plugins::State::default(),
        },
        warnings,
    };
    let loaded = b.kustomization(root)?;
    loaded_root(Arc::clone(&loaded));
    b.state.plugins.meta = metadata::Meta::from_root(&loaded);
    b.state.plugins.meta.managed_by |= opts.managed_by_label;
    b.state
        .plugins
        .helm_api_versions
        .clone_from(&opts.helm.api_versions);
    let mut resources = b.build_dir(root, Vec::new(), None, &Chain::Top)?;
    steps::finish_root(
        &loaded,
        &mut resources,
        b.state.ctx,
        &b.state.config,
        &b.state.vars,
        &b.state.var_places,
        b.warnings,
    )?;
    metadata::finish(
        &mut resources,
        &b.state.plugins.meta,
        opts.managed_by_value
            .as_deref()
            .unwrap_or(metadata::default_managed_by(opts.kustomize)),
        opts.kustomize,
    );
    if opts.provenance {
        provenance::record(&mut resources, Step::BuildMetadata, &|_, _, _| None);
    }
    let cache = RenderCache {
        _files: b.load.files,
        _kustomizations: b.load.kustomizations,
    };
    Ok((resources, b.state.crds, cache))
}

/// A resource file read during a render.
#[derive(Clone)]
enum CachedFile {
    /// Read and parsed once; its resources went to the kustomization that listed it.
    Read(Arc<SourceFile>),
    /// Listed more than once: parsed again and kept for the later listings to copy.
    Parsed(Arc<Vec<Resource>>),
}

/// One render: what it loads and the state it builds up, with the warnings it gives. The
/// chain of kustomizations being built is not kept here: it is on the call stack ([`Chain`]).
struct Builder<'a> {
    load: Loader<'a>,
    state: RenderState<'a>,
    warnings: &'a mut Warnings,
}

/// What a render reads and keeps: the file system, the remote bases, the reader thread's
/// share and the caches of what was read. Knows nothing of what a kustomization means.
struct Loader<'a> {
    fs: &'a dyn Fs,
    /// Where remote bases are found.
    remotes: &'a dyn RemoteTrees,
    /// What the reader thread read ahead, when one runs.
    ahead: Option<&'a ahead::Ahead>,
    /// Resource files read so far, by canonical path.
    files: FastMap<PathKey, CachedFile>,
    /// Loaded kustomizations by canonical directory.
    kustomizations: FastMap<PathKey, Arc<Loaded>>,
}

/// What the build of one render carries from one kustomization to the next: its
/// configuration, the vars and CRDs declared so far, the schema and the origin metadata.
struct RenderState<'a> {
    /// The render context of the kustomization being built: the render's, or `remote_ctx`
    /// inside a remote base.
    ctx: Context<'a>,
    remote_ctx: Context<'a>,
    /// The field-spec configuration of the kustomization being built (built-in tables plus
    /// `configurations:` of it and of the kustomizations below it).
    config: BuildConfig,
    /// Built-in configurations no base changed, reused instead of cloned anew per base.
    spare_configs: Vec<BuildConfig>,
    /// Every var declared so far (`vars:`), bound to its object.
    vars: VarSet,
    /// With provenance on: where each var is declared (`vars[i].name` of its kustomization).
    var_places: FastMap<String, crate::resource::provenance::Place>,
    crds: Vec<Node>,
    /// Patches, plugin configurations, schemas and origin metadata (`plugins`).
    plugins: plugins::State,
}

/// The kustomizations and remote bases being built, innermost first: each frame lives on the
/// call stack of the build that entered it. kustomize's `errIfArgEqualOrHigher` (a directory
/// already being built is a cycle), `errIfRepoCycle` and `errIfGitContainmentViolation` ask it.
#[derive(Clone, Copy)]
enum Chain<'p> {
    /// Above the root kustomization.
    Top,
    /// A kustomization directory (canonical) being built, and the namespace kustomize v5.8
    /// gives its charts when they name none: its own `namespace`, else the one it inherited
    /// from the kustomizations above it (`KustTarget.helmRootNamespace`, PR #6044).
    Dir {
        dir: &'p Path,
        helm_namespace: Option<&'p str>,
        up: &'p Chain<'p>,
    },
    /// A remote base being built: the URL as written and its clone.
    Repo {
        url: &'p str,
        clone: &'p Path,
        up: &'p Chain<'p>,
    },
}

impl<'p> Chain<'p> {
    fn up(&self) -> Option<&'p Chain<'p>> {
        match self {
            Chain::Top => None,
            Chain::Dir { up, .. } | Chain::Repo { up, .. } => Some(up),
        }
    }

    /// This frame and those above it, innermost first.
    fn frames(&self) -> impl Iterator<Item = &Chain<'p>> {
        std::iter::successors(Some(self), |c| c.up())
    }

    /// The kustomization directories being built, outermost first.
    fn dirs(&self) -> Vec<&'p Path> {
        let mut dirs: Vec<&Path> = self
            .frames()
            .filter_map(|c| match c {
                Chain::Dir { dir, .. } => Some(*dir),
                _ => None,
            })
            .collect();
        dirs.reverse();
        dirs
    }

    /// The remote bases being built, innermost first: the URL as written and its clone.
    fn repos(&self) -> impl Iterator<Item = (&'p str, &'p Path)> {
        self.frames().filter_map(|c| match c {
            Chain::Repo { url, clone, .. } => Some((*url, *clone)),
            _ => None,
        })
    }

    /// The namespace the innermost kustomization gives its charts.
    fn helm_namespace(&self) -> Option<&'p str> {
        self.frames().find_map(|c| match c {
            Chain::Dir { helm_namespace, .. } => Some(*helm_namespace),
            _ => None,
        })?
    }
}

/// How a directory is being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Named under `resources` (or `bases`) of `parent`.
    Resource,
    /// Named under `components`.
    Component,
}

impl Builder<'_> {
    fn kustomization(&mut self, dir: &Path) -> Result<Arc<Loaded>> {
        self.load.kustomization(dir, self.state.ctx, self.warnings)
    }

    /// Builds the kustomization in `dir` (canonical) on top of `acc` (empty unless `dir` is a
    /// component) and returns the accumulated resources. `role` is how the parent named it.
    fn build_dir(
        &mut self,
        dir: &Path,
        acc: Vec<Resource>,
        role: Option<Role>,
        chain: &Chain<'_>,
    ) -> Result<Vec<Resource>> {
        let loaded = self.kustomization(dir)?;
        let step = loaded.file.display.clone();
        match role {
            Some(Role::Component) if !loaded.is_component() => {
                return Err(Error::new(
                    ErrorKind::Kustomization,
                    format!(
                        "expected kind 'Component' for path '{}' but got '{}'",
                        display_path(dir),
                        loaded.kustomization.kind.as_deref().unwrap_or("Kustomization")
                    ),
                )
                .at(loaded.key_location(&[]))
                .label("not a component")
                .help("a directory listed under `components:` must hold a kustomization of `kind: Component`"));
            }
            Some(Role::Resource) if loaded.is_component() => {
                return Err(Error::new(
                    ErrorKind::Kustomization,
                    format!(
                        "expected kind != 'Component' for path '{}'",
                        display_path(dir)
                    ),
                )
                .at(loaded.key_location(&[crate::yaml::path::PathSeg::Key("kind".into())]))
                .label("a component")
                .help("list a component under `components:`, not `resources:`"));
            }
            _ => {}
        }
        self.note_openapi(&loaded)?;
        let helm_namespace = loaded
            .kustomization
            .namespace
            .as_deref()
            .filter(|n| !n.is_empty())
            .or_else(|| chain.helm_namespace());
        let here = Chain::Dir {
            dir,
            helm_namespace,
            up: chain,
        };
        let result = self.build_loaded(&loaded, acc, &here);
        result.map_err(|e| e.in_kustomization(step))
    }

    /// Builds one kustomization on top of `acc`, stage by stage in kustomize's order
    /// (`accumulateTarget`, then `runTransformers`): resources, `crds`, `configurations`, the
    /// generators, the components, the transformers, validators and vars. Each stage records
    /// its field provenance and kustomize's origin annotations as it ends.
    fn build_loaded(
        &mut self,
        loaded: &Loaded,
        mut acc: Vec<Resource>,
        chain: &Chain<'_>,
    ) -> Result<Vec<Resource>> {
        // Which fields name resources, CRD files, components and plugin configurations comes
        // from the kustomization's one list of references (`kustomization::refs`); the stages
        // that read other files (generators, configurations, patches, replacements, openapi,
        // helm) take them with the rest of their entries.
        image_refs::check(loaded, self.state.ctx.opts.strict, self.warnings)?;
        self.accumulate_resources(loaded, &mut acc, chain)?;
        self.load_crds(loaded)?;
        steps::configurations(self.load.fs, self.state.ctx, loaded, &mut self.state.config)?;
        self.run_generators(loaded, &mut acc, chain)?;
        acc = self.build_components(loaded, acc, chain)?;
        self.run_transformers(loaded, &mut acc, chain)?;
        let validators = self.plugin_configs(loaded, RefKind::Validator, chain)?;
        plugins::run_validator_plugins(&validators)?;
        steps::bind_vars(
            loaded,
            &mut acc,
            &mut self.state.vars,
            self.state.ctx.tables,
        )?;
        if self.state.ctx.provenance() {
            places::declare_vars(&mut self.state.var_places, loaded);
        }
        Ok(acc)
    }

    /// `resources:` (files and kustomization directories, recursively) onto `acc`.
    fn accumulate_resources(
        &mut self,
        loaded: &Loaded,
        acc: &mut Vec<Resource>,
        chain: &Chain<'_>,
    ) -> Result<()> {
        let mut index =
            ids::IdIndex::new(acc, &|g: &Gvk| self.state.ctx.tables.is_cluster_scoped(g));
        let refs = loaded.kustomization.refs();
        for r in refs.filter(|r| r.kind == RefKind::Resource) {
            self.accumulate(loaded, r.key, r.text, acc, &mut index, chain)?;
        }
        if self.state.ctx.provenance() {
            provenance::record(acc, Step::Resource, &|_, _, _| None);
        }
        Ok(())
    }

    /// `crds:` files: their definitions join the field-spec configuration and the render's
    /// CRDs.
    fn load_crds(&mut self, loaded: &Loaded) -> Result<()> {
        let refs = loaded.kustomization.refs();
        for Ref {
            key, text: path, ..
        } in refs.filter(|r| r.kind == RefKind::Crds)
        {
            // kustomize's loader downloads a URL here too (`LoadConfigFromCRDs`).
            let source = match steps::remote_named_file(self.load.fs, loaded, path) {
                Some(bytes) => {
                    SourceFile::new(crate::remote::url::redact(path), parse::text_of(bytes?))
                }
                None => {
                    let file = self.resolve_file(loaded, key, path)?;
                    let text = self
                        .load
                        .fs
                        .read_to_string(&file)
                        .map_err(|e| Error::io(&file, &e))?;
                    SourceFile::new(&file, text)
                }
            };
            let defs = accumulate::parse_crd_definitions(&source, path)
                .map_err(|e| e.at(accumulate::item_location(loaded, key, path)))?;
            self.state.config.add_crd_definitions(&defs)?;
            self.state.crds.push(defs);
        }
        Ok(())
    }

    /// The generators in kustomize's order (`runGenerators`): `configMapGenerator` and
    /// `secretGenerator`, `helmCharts`, then the configurations of `generators:`.
    fn run_generators(
        &mut self,
        loaded: &Loaded,
        acc: &mut Vec<Resource>,
        chain: &Chain<'_>,
    ) -> Result<()> {
        let prov = self.state.ctx.provenance();
        let before = self
            .state
            .plugins
            .meta
            .origin
            .then(|| metadata::origins(acc));
        let charts = helm::kustomization_charts(loaded, self.state.ctx.kustomize(), self.warnings)?;
        for c in &charts {
            helm::check_enabled(&self.state.ctx.opts.helm, c)?;
            helm::configure_api_versions(&mut self.state.plugins.helm_api_versions, &c.chart);
        }
        steps::generate(self.load.fs, self.load.ahead, self.state.ctx, loaded, acc)?;
        if prov {
            let files = places::GeneratorFiles::read(self.load.fs, loaded);
            provenance::record_sourced(acc, Step::Generator, &|r, path, _| {
                files
                    .find(r, path)
                    .unwrap_or_else(|| (Some(provenance::generator_place(loaded, r, path)), None))
            });
        }
        if let Some(before) = &before {
            let here = self.state.plugins.meta.kustomization_file(loaded);
            let replaced = metadata::replaced_by_fields(loaded);
            let source = self.state.plugins.meta.source();
            metadata::annotate_generated(acc, before, &here, None, None, &replaced, source);
        }
        if !charts.is_empty() {
            self.inflate_charts(loaded, &charts, before.as_ref(), acc, chain)?;
        }
        let generators = self.plugin_configs(loaded, RefKind::Generator, chain)?;
        self.run_generator_plugins(loaded, &generators, acc)?;
        if prov && !generators.is_empty() {
            let at = |r: &Resource, p: &[crate::yaml::path::PathSeg], _: Option<&Node>| {
                places::config_place(&generators, p, provenance::node_at(&r.node, p))
            };
            provenance::record(acc, Step::Plugin, &at);
        }
        Ok(())
    }

    /// The kustomization's `helmCharts`, inflated in order; `before` holds the origins from
    /// before the generators ran, when origins are annotated.
    fn inflate_charts(
        &mut self,
        loaded: &Loaded,
        charts: &[helm::ChartEntry],
        before: Option<&std::collections::HashMap<crate::resource::ResId, String>>,
        acc: &mut Vec<Resource>,
        chain: &Chain<'_>,
    ) -> Result<()> {
        let namespace = chain.helm_namespace().filter(|_| {
            self.state
                .ctx
                .kustomize()
                .at_least(KustomizeVersion::V5_8_1)
        });
        for c in charts {
            let inflated = helm::inflate(
                self.load.fs,
                self.state.ctx,
                loaded,
                c,
                &self.state.plugins.helm_api_versions,
                namespace,
            )?;
            helm::absorb(acc, inflated, &c.at)?;
            if self.state.ctx.provenance() {
                self.record_helm(loaded, c, acc);
            }
        }
        if let Some(before) = before {
            let here = self.state.plugins.meta.kustomization_file(loaded);
            metadata::annotate_generated(
                acc,
                before,
                &here,
                Some("HelmChartInflationGenerator"),
                None,
                &[],
                self.state.plugins.meta.source(),
            );
        }
        Ok(())
    }

    /// `components:` in order, each built on top of what this kustomization accumulated so
    /// far.
    fn build_components(
        &mut self,
        loaded: &Loaded,
        mut acc: Vec<Resource>,
        chain: &Chain<'_>,
    ) -> Result<Vec<Resource>> {
        let refs = loaded.kustomization.refs();
        for Ref {
            key, text: path, ..
        } in refs.filter(|r| r.kind == RefKind::Component)
        {
            if crate::remote::is_remote(path) {
                let tree = self.remote_tree(loaded, key, path, chain)?;
                acc = self.in_remote(path, &tree, chain, |b, chain| {
                    b.build_dir(&tree.root, acc, Some(Role::Component), chain)
                })?;
                if self.state.ctx.provenance() {
                    places::name_remote_files(&mut acc, path, &tree)?;
                }
                continue;
            }
            let dir = self.resolve_dir(loaded, key, path, chain)?;
            // Origins name a component's files through its directory, as they do a base's
            // (`accumulateComponents` appends the path to the origin).
            self.state.plugins.meta.enter(path);
            let built = self.build_dir(&dir, acc, Some(Role::Component), chain);
            self.state.plugins.meta.leave();
            acc = built.map_err(|e| at_entry(e, loaded, key, path))?;
        }
        Ok(acc)
    }

    /// The transformers in kustomize's order (`configureBuiltinTransformers`, then
    /// `transformers:`): patches, the field transformers (with `patchesJson6902` among
    /// them), replacements, then the configurations of `transformers:`.
    fn run_transformers(
        &mut self,
        loaded: &Loaded,
        acc: &mut Vec<Resource>,
        chain: &Chain<'_>,
    ) -> Result<()> {
        let prov = self.state.ctx.provenance();
        let patches = self.load_patches(loaded)?;
        self.apply_field_patches(loaded, &patches.early, acc)?;
        // Lent out for the transformers instead of cloned per kustomization (the JSON patches
        // run in between use `self.state.ctx.tables`, not the configuration).
        let fields = std::mem::take(&mut self.state.config.fields);
        let transformed = steps::transform(loaded, acc, &fields, prov, &mut |acc| {
            self.apply_field_patches(loaded, &patches.json6902, acc)
        });
        self.state.config.fields = fields;
        transformed?;
        steps::replacements(
            self.load.fs,
            self.state.ctx,
            loaded,
            acc,
            self.state.ctx.tables,
            self.warnings,
        )?;
        if self.state.plugins.meta.transformers {
            // The field transformers add and remove no objects, so recording them all here
            // gives what kustomize records after each one.
            let here = self.state.plugins.meta.kustomization_file(loaded);
            for kind in metadata::field_transformers(loaded) {
                let source = self.state.plugins.meta.source();
                metadata::annotate_transformer(acc, &here, kind, None, source);
            }
        }
        let transformers = self.plugin_configs(loaded, RefKind::Transformer, chain)?;
        self.run_transformer_plugins(loaded, &transformers, acc)?;
        if prov && !transformers.is_empty() {
            let at = |r: &Resource, p: &[crate::yaml::path::PathSeg], _: Option<&Node>| {
                places::config_place(&transformers, p, provenance::node_at(&r.node, p))
            };
            provenance::record(acc, Step::Plugin, &at);
        }
        Ok(())
    }

    /// Records a helm chart's objects: each field at its template (helm's `# Source:`
    /// comment names it; the field's line when the template writes the same value there),
    /// with the `helmCharts` entry as what the step read. The objects are new: their
    /// document in helm's output would otherwise be taken as their resource file.
    fn record_helm(&self, loaded: &Loaded, c: &helm::ChartEntry, acc: &mut [Resource]) {
        let chart_dir = helm::chart_dir(loaded, c);
        let entry = provenance::at(&c.at);
        let mut templates: FastMap<(String, String, String), Arc<SourceFile>> = FastMap::default();
        let mut taken = Vec::new();
        for (i, r) in acc.iter_mut().enumerate() {
            if r.provenance.is_some() {
                continue;
            }
            if let Some(loc) = r.origin.take() {
                if let Some(t) =
                    places::helm_template(self.load.fs, &loc.file, loc.offset, &chart_dir)
                {
                    let id = (
                        r.kind().to_string(),
                        r.namespace().to_string(),
                        r.name().to_string(),
                    );
                    templates.insert(id, t);
                }
                taken.push((i, loc));
            }
        }
        provenance::record_sourced(acc, Step::Helm, &|r, path, _| {
            let id = (
                r.kind().to_string(),
                r.namespace().to_string(),
                r.name().to_string(),
            );
            let source = Some(Box::new(crate::resource::provenance::Source {
                object: None,
                path: None,
                place: Some(entry.clone()),
            }));
            match templates.get(&id) {
                Some(t) => (Some(places::template_place(t, r, path)), source),
                None => (Some(entry.clone()), None),
            }
        });
        for (i, loc) in taken {
            acc[i].origin = Some(loc);
        }
    }

    /// Adds what one `resources:` entry names: a file's documents or a kustomization
    /// directory's build.
    /// `field` is where the path is listed (`resources`, `generators`, `transformers`); `index`
    /// describes `acc`.
    fn accumulate(
        &mut self,
        loaded: &Loaded,
        field: &str,
        path: &str,
        acc: &mut Vec<Resource>,
        index: &mut ids::IdIndex,
        chain: &Chain<'_>,
    ) -> Result<()> {
        if path.trim().is_empty() {
            return Err(empty_path_error(loaded, field));
        }
        let target = crate::fs::join(&loaded.dir, path);
        let kind = self.load.fs.kind(&target);
        // kustomize reads an entry as a file first (an HTTP(S) URL is downloaded:
        // `accumulateFile`, `FileLoader.Load`), then as a base, and a base that parses as a git
        // URL is cloned (`accumulateResources`, `FileLoader.New`).
        if kind != Some(FileKind::File)
            && accumulate::is_remote_file(path)
            && let Some(docs) = self.remote_file_resources(loaded, field, path, chain)?
        {
            return index.append_all(acc, docs, &|g: &Gvk| {
                self.state.ctx.tables.is_cluster_scoped(g)
            });
        }
        if kind != Some(FileKind::File) && crate::remote::is_remote(path) {
            let tree = self.remote_tree(loaded, field, path, chain)?;
            let mut built = self.in_remote(path, &tree, chain, |b, chain| {
                b.build_base(None, &tree.root, chain)
            })?;
            if self.state.ctx.provenance() {
                places::name_remote_files(&mut built, path, &tree)?;
            }
            return index.append_all(acc, built, &|g: &Gvk| {
                self.state.ctx.tables.is_cluster_scoped(g)
            });
        }
        match kind {
            Some(FileKind::File) => {
                let file = self.resolve_file_at(loaded, field, path, &target, kind)?;
                let docs = self.load.parse_file(file, &loaded.dir, self.state.ctx)?;
                self.note_kinds_read(&docs)?;
                let origin = self
                    .state
                    .plugins
                    .meta
                    .tracks_origin()
                    .then(|| self.state.plugins.meta.rel(path));
                let source = self.state.plugins.meta.source();
                let docs = docs.into_iter().map(|mut r| {
                    if let Some(o) = &origin {
                        metadata::annotate_file(&mut r, o, source);
                    }
                    r
                });
                index.append_all(acc, docs, &|g: &Gvk| {
                    self.state.ctx.tables.is_cluster_scoped(g)
                })
            }
            Some(FileKind::Dir) => {
                let dir = self.resolve_dir_at(loaded, field, path, &target, kind, chain)?;
                let built = self
                    .build_base(Some(path), &dir, chain)
                    .map_err(|e| at_entry(e, loaded, field, path))?;
                index.append_all(acc, built, &|g: &Gvk| {
                    self.state.ctx.tables.is_cluster_scoped(g)
                })
            }
            None => Err(self.missing(loaded, field, path, &target)),
        }
    }

    /// The resources of the HTTP(S) file `url` listed under `field` of `loaded`, as `ply fetch`
    /// pinned it; `None` when `url` is a repository instead: it also reads as a git URL, and
    /// kustomize clones it when it is not a file of resources (`accumulateResources`; when the
    /// clone fails too, the file's error is the one shown, as kustomize shows a malformed
    /// file's).
    fn remote_file_resources(
        &mut self,
        loaded: &Loaded,
        field: &str,
        url: &str,
        chain: &Chain<'_>,
    ) -> Result<Option<Vec<Resource>>> {
        let spec = match crate::remote::classify(url) {
            Some(crate::remote::Remote::Git(spec)) => Some(spec),
            _ => None,
        };
        let loc = || accumulate::item_location(loaded, field, url);
        let bytes = self
            .load
            .remotes
            .file(self.load.fs, url, spec.is_some())
            .map_err(|e| e.at(loc()).label("a remote file"))?;
        let Some(bytes) = bytes else {
            return Ok(None);
        };
        let shown = crate::remote::url::redact(url);
        let file = SourceFile::new(PathBuf::from(&shown), parse::text_of(bytes));
        let docs = match parse_resources(&file, self.state.ctx.opts.limits.reader) {
            Ok(docs) => docs,
            Err(e) if spec.is_some() => {
                return match self.remote_tree(loaded, field, url, chain) {
                    Ok(_) => Ok(None),
                    Err(_) => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        self.note_kinds_read(&docs)?;
        let meta = &mut self.state.plugins.meta;
        if !meta.tracks_origin() {
            return Ok(Some(docs));
        }
        // kustomize's `Origin.Append`: a URL that reads as a git URL is named by its
        // repository, ref and path; any other by the path joined as a file's.
        let origin = match &spec {
            Some(spec) => {
                meta.enter_remote(&spec.root_path, &spec.clone_spec(), &spec.git_ref);
                let o = (meta.rel("."), meta.source().to_string());
                meta.leave_remote();
                o
            }
            None => (meta.rel(url), meta.source().to_string()),
        };
        Ok(Some(
            docs.into_iter()
                .map(|mut r| {
                    metadata::annotate_file(&mut r, &origin.0, &origin.1);
                    r
                })
                .collect(),
        ))
    }

    /// The resources of the base `dir` (canonical), named `path` by its parent (`None` for a
    /// remote base, whose origin [`Self::in_remote`] set).
    fn build_base(
        &mut self,
        path: Option<&str>,
        dir: &Path,
        chain: &Chain<'_>,
    ) -> Result<Vec<Resource>> {
        // A base starts from the built-in configuration; what it adds comes back up.
        let fresh = self
            .state
            .spare_configs
            .pop()
            .unwrap_or_else(|| BuildConfig::builtin(self.state.ctx.tables));
        let parent = std::mem::replace(&mut self.state.config, fresh);
        if let Some(path) = path {
            self.state.plugins.meta.enter(path);
        }
        let built = self.build_dir(dir, Vec::new(), Some(Role::Resource), chain);
        if path.is_some() {
            self.state.plugins.meta.leave();
        }
        let child = std::mem::replace(&mut self.state.config, parent);
        let built = built?;
        self.state.config.absorb(&child)?;
        if !child.is_custom() {
            // Still the built-in configuration: the next base can start from it.
            self.state.spare_configs.push(child);
        }
        Ok(built)
    }

    /// The tree of the remote base `url`, listed under `field` of `loaded`; errors located at
    /// that line. kustomize's `errIfRepoCycle`: a URL that begins a remote base being built is
    /// a cycle.
    fn remote_tree(
        &self,
        loaded: &Loaded,
        field: &str,
        url: &str,
        chain: &Chain<'_>,
    ) -> Result<RemoteTree> {
        let loc = || accumulate::item_location(loaded, field, url);
        // Outermost first, as kustomize's list of repositories seen.
        let outer = chain.repos().filter(|(raw, _)| raw.starts_with(url)).last();
        if let Some((outer, _)) = outer {
            return Err(Error::new(
                ErrorKind::Cycle,
                format!("cycle detected: URI '{url}' referenced by previous URI '{outer}'"),
            )
            .at(loc())
            .label("leads back to a remote base being built"));
        }
        self.load.remotes.tree(self.load.fs, url).map_err(|e| {
            let e = e.scrubbed(|t| crate::remote::url::scrub(t, url)).at(loc());
            if e.label.is_none() {
                e.label("a remote base")
            } else {
                e
            }
        })
    }

    /// Runs `build` inside the remote base `url` (whose tree is `tree`): the load restrictor
    /// is root-only, and its bases must stay inside its clone.
    fn in_remote<T>(
        &mut self,
        url: &str,
        tree: &RemoteTree,
        chain: &Chain<'_>,
        build: impl FnOnce(&mut Self, &Chain<'_>) -> Result<T>,
    ) -> Result<T> {
        // Origins name the repository, its ref and the path in it (`Origin.Append`).
        let spec = crate::fs::remote::repo_spec(url)?;
        let outer = self.state.ctx;
        self.state.ctx = self.state.remote_ctx;
        let here = Chain::Repo {
            url,
            clone: &tree.clone,
            up: chain,
        };
        let meta = &mut self.state.plugins.meta;
        meta.enter_remote(&spec.root_path, &spec.clone_spec(), &spec.git_ref);
        let result = build(self, &here);
        self.state.plugins.meta.leave_remote();
        self.state.ctx = outer;
        result
    }

    /// The plugin configurations listed under `generators:`, `transformers:` or `validators:`
    /// (the references of `kind`): inline YAML, files, or kustomization directories whose
    /// output is the configurations (kustomize's `configureExternalGenerators` /
    /// `configureExternalTransformers`).
    fn plugin_configs(
        &mut self,
        loaded: &Loaded,
        kind: RefKind,
        chain: &Chain<'_>,
    ) -> Result<Vec<(Resource, Location)>> {
        let mut out = Vec::new();
        let refs = loaded.kustomization.refs().filter(|r| r.kind == kind);
        for Ref {
            key: field,
            text: entry,
            ..
        } in refs
        {
            let loc = accumulate::item_location(loaded, field, entry);
            if let Some(inline) = accumulate::inline_configs(entry) {
                self.note_kinds_read(&inline)?;
                out.extend(inline.into_iter().map(|r| (r, loc.clone())));
                continue;
            }
            let mut acc = Vec::new();
            let mut index = ids::IdIndex::default();
            self.accumulate(loaded, field, entry, &mut acc, &mut index, chain)?;
            out.extend(acc.into_iter().map(|r| (r, loc.clone())));
        }
        Ok(out)
    }

    /// The error for a path that names nothing: remote URLs get their own.
    fn missing(&self, loaded: &Loaded, field: &str, path: &str, target: &Path) -> Error {
        let loc = accumulate::item_location(loaded, field, path);
        if accumulate::is_remote(path) {
            return Error::new(
                ErrorKind::Remote,
                format!("remote {field} are not supported: '{path}'"),
            )
            .at(loc)
            .label("a remote URL")
            .help(format!("`ply fetch` fetches remote bases and files, but not under `{field}`; download the file (curl) and name its local path instead"));
        }
        let err = Error::new(
            ErrorKind::NotFound,
            format!(
                "'{path}' named under `{field}` does not exist: no file or directory at '{}'",
                display_path(target)
            ),
        )
        .at(loc)
        .label("not found");
        // A near name beside it: "did you mean …?" with the path as it would be written.
        let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
            return err;
        };
        let names = self.load.fs.names_in(dir);
        let name = name.to_string_lossy();
        match crate::diag::suggest::nearest(&name, names.iter().map(String::as_str)) {
            Some(near) => {
                let written = match path.rsplit_once('/') {
                    Some((head, _)) => format!("{head}/{near}"),
                    None => near.to_string(),
                };
                err.help(format!("did you mean `{written}`?"))
            }
            None => err,
        }
    }

    /// The canonical path of `target` (`path` joined to the kustomization's directory, of
    /// kind `kind`) when it is a `want`; else the error saying what it is instead, or that it is
    /// missing.
    fn canonical_as(
        &self,
        want: FileKind,
        loaded: &Loaded,
        field: &str,
        path: &str,
        target: &Path,
        kind: Option<FileKind>,
    ) -> Result<PathBuf> {
        match (kind, self.load.fs.canonicalize(target)) {
            (Some(k), Ok(c)) if k == want => Ok(c),
            (Some(k), _) if k != want => {
                let message = match want {
                    FileKind::File => {
                        format!("'{path}' named under `{field}` is a directory, not a file")
                    }
                    FileKind::Dir => format!(
                        "'{path}' named under `{field}` is a file; a component must be a directory holding a kustomization"
                    ),
                };
                Err(Error::new(ErrorKind::Kustomization, message)
                    .at(accumulate::item_location(loaded, field, path)))
            }
            _ => Err(self.missing(loaded, field, path, target)),
        }
    }

    /// A file named by the kustomization: canonical, inside the root unless the restrictor
    /// allows otherwise.
    fn resolve_file(&self, loaded: &Loaded, field: &str, path: &str) -> Result<PathBuf> {
        let target = crate::fs::join(&loaded.dir, path);
        self.resolve_file_at(loaded, field, path, &target, self.load.fs.kind(&target))
    }

    /// [`Self::resolve_file`] when the caller already joined `path` to the kustomization's
    /// directory (`target`) and asked the file system what it is (`kind`).
    fn resolve_file_at(
        &self,
        loaded: &Loaded,
        field: &str,
        path: &str,
        target: &Path,
        kind: Option<FileKind>,
    ) -> Result<PathBuf> {
        let loc = || accumulate::item_location(loaded, field, path);
        let canonical = self.canonical_as(FileKind::File, loaded, field, path, target, kind)?;
        crate::fs::check_restriction_shown(
            self.state.ctx.opts.load_restrictor,
            &loaded.dir,
            &canonical,
            path,
        )
        .map_err(|e| e.at(loc()))?;
        Ok(canonical)
    }

    /// A kustomization directory named by `loaded`: canonical, not absolute (kustomize's rule),
    /// and not one of the directories being built or an ancestor of one (a cycle).
    fn resolve_dir(
        &self,
        loaded: &Loaded,
        field: &str,
        path: &str,
        chain: &Chain<'_>,
    ) -> Result<PathBuf> {
        if path.trim().is_empty() {
            return Err(empty_path_error(loaded, field));
        }
        let target = crate::fs::join(&loaded.dir, path);
        self.resolve_dir_at(
            loaded,
            field,
            path,
            &target,
            self.load.fs.kind(&target),
            chain,
        )
    }

    /// [`Self::resolve_dir`] when the caller already checked `path` is not empty, joined it to
    /// the kustomization's directory (`target`) and asked the file system what it is (`kind`).
    fn resolve_dir_at(
        &self,
        loaded: &Loaded,
        field: &str,
        path: &str,
        target: &Path,
        kind: Option<FileKind>,
        chain: &Chain<'_>,
    ) -> Result<PathBuf> {
        let loc = || accumulate::item_location(loaded, field, path);
        let canonical = self.canonical_as(FileKind::Dir, loaded, field, path, target, kind)?;
        if Path::new(path).is_absolute() {
            return Err(Error::new(
                ErrorKind::Kustomization,
                format!("new root '{path}' cannot be absolute"),
            )
            .at(loc())
            .help("name a kustomization directory by a path relative to this kustomization"));
        }
        // kustomize's `errIfGitContainmentViolation`: the bases of a cloned kustomization stay
        // inside its clone.
        if let Some((url, clone)) = chain.repos().next() {
            if !canonical.starts_with(clone) {
                return Err(Error::new(
                    ErrorKind::LoadRestriction,
                    format!(
                        "security; bases in kustomizations found in cloned git repos must be within the repo, but base '{}' is outside the clone of '{url}'",
                        display_path(&canonical)
                    ),
                )
                .at(loc())
                .label("leaves the repository"));
            }
        }
        // kustomize's `errIfArgEqualOrHigher`: a directory that is, or contains, one already on
        // the chain would recurse forever.
        let dirs = chain.dirs();
        if let Some((pos, visited)) = dirs
            .iter()
            .enumerate()
            .find(|(_, d)| d.starts_with(&canonical))
        {
            let mut cycle: Vec<String> = dirs.iter().skip(pos).map(|d| display_path(d)).collect();
            cycle.push(display_path(&canonical));
            let message = if *visited == canonical {
                format!("cycle of kustomizations: {}", cycle.join(" → "))
            } else {
                format!(
                    "cycle of kustomizations: '{}' contains '{}', which is being built: {}",
                    display_path(&canonical),
                    display_path(visited),
                    cycle.join(" → ")
                )
            };
            return Err(Error::new(ErrorKind::Cycle, message)
                .at(loc())
                .label("leads back to a kustomization being built"));
        }
        Ok(canonical)
    }
}

impl Loader<'_> {
    /// The kustomization in `dir` (canonical), loaded once per render.
    fn kustomization(
        &mut self,
        dir: &Path,
        ctx: Context<'_>,
        warnings: &mut Warnings,
    ) -> Result<Arc<Loaded>> {
        if let Some(k) = self.kustomizations.get(key(dir)) {
            return Ok(Arc::clone(k));
        }
        let loaded = match self.ahead.and_then(|a| a.take_kustomization(dir)) {
            Some((loaded, read)) => {
                for w in read {
                    warnings.warn(w);
                }
                loaded?
            }
            None => load_kustomization(
                self.fs,
                dir,
                ctx.opts.load_restrictor,
                ctx.opts.shared.as_deref(),
                warnings,
            )?,
        };
        let k = loaded;
        if ctx.opts.strict
            && let Some(repeated) = k.repeated_keys.first()
        {
            return Err(repeated.clone());
        }
        self.kustomizations
            .insert(path_key(dir.to_path_buf()), Arc::clone(&k));
        Ok(k)
    }

    /// The resources of the file at `path` (canonical), read once per render. The first
    /// listing gets the parsed resources themselves (most files are listed once, and copying
    /// every object cost 2% of a render); a second listing parses the kept text again and keeps
    /// the result, which later listings copy.
    fn parse_file(
        &mut self,
        path: PathBuf,
        root: &Path,
        ctx: Context<'_>,
    ) -> Result<Vec<Resource>> {
        if let Some(entry) = self.files.get_mut(key(&path)) {
            let docs = match entry {
                CachedFile::Parsed(docs) => Arc::clone(docs),
                CachedFile::Read(file) => {
                    let limits = ctx.opts.limits.reader;
                    let docs = Arc::new(match ctx.opts.shared.as_deref() {
                        // Another listing of a file shared with other renders: a copy.
                        Some(shared) => {
                            let quoted = file.quote == crate::source::Quote::Yes;
                            let bytes = file.text.clone().into_bytes();
                            shared.resources(&path, quoted, bytes, limits)?.1
                        }
                        None => parse_resources(file, limits)?,
                    });
                    *entry = CachedFile::Parsed(Arc::clone(&docs));
                    docs
                }
            };
            return Ok(docs.as_ref().clone());
        }
        let (file, docs) = match self.ahead.and_then(|a| a.take_file(&path)) {
            Some(parsed) => parsed?,
            None => ahead::read_resources(
                self.fs,
                path,
                root,
                ctx.opts.shared.as_deref(),
                ctx.opts.limits.reader,
            )?,
        };
        self.files
            .insert(path_key(file.path.clone()), CachedFile::Read(file));
        Ok(docs)
    }
}

/// An empty entry under a path-list field (`resources: [""]`), located at the field's key.
fn empty_path_error(loaded: &Loaded, field: &str) -> Error {
    Error::new(
        ErrorKind::Kustomization,
        format!("an empty path is listed under `{field}`"),
    )
    .at(loaded.key_location(&[crate::yaml::path::PathSeg::Key(field.to_string())]))
    .label("has an empty entry")
}

/// An error loading the kustomization of a directory named as entry `path` of `field` in
/// `loaded` (none there, or several) is located at that entry: it has no place of its own,
/// since the file it is about does not exist. An error from inside the directory's build
/// (which names its kustomization in its chain) or with a place already is left as it is.
fn at_entry(e: Error, loaded: &Loaded, field: &str, path: &str) -> Error {
    if e.location.is_some() || !e.chain.is_empty() {
        return e;
    }
    let label = if e.kind == ErrorKind::NotFound {
        "a directory without a kustomization file"
    } else {
        "this directory"
    };
    e.at(accumulate::item_location(loaded, field, path))
        .label(label)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::fs::MemFs;

    /// Counts reads per path, to show each file is read once per render.
    struct Counting {
        inner: MemFs,
        reads: std::sync::Mutex<HashMap<PathBuf, usize>>,
    }

    impl Counting {
        fn new(inner: MemFs) -> Counting {
            Counting {
                inner,
                reads: std::sync::Mutex::new(HashMap::new()),
            }
        }
    }

    impl Fs for Counting {
        fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
            if let Ok(mut m) = self.reads.lock() {
                *m.entry(path.to_path_buf()).or_default() += 1;
            }
            self.inner.read(path)
        }
        fn kind(&self, path: &Path) -> Option<FileKind> {
            self.inner.kind(path)
        }
        fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
            self.inner.canonicalize(path)
        }
    }

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n";

    fn names(r: &Rendered) -> Vec<String> {
        r.resources.iter().map(|r| r.name().to_string()).collect()
    }

    fn render_mem(fs: &dyn Fs, dir: &str) -> Result<Rendered> {
        let opts = RenderOptions {
            reorder: OutputOrder::None,
            ..RenderOptions::default()
        };
        render_with(fs, Path::new(dir), &opts, &mut Warnings::default())
    }

    #[test]
    fn shared_base_is_read_once() {
        let mut fs = MemFs::new();
        fs.file("/t/base/kustomization.yaml", "resources: [cm.yaml]\n")
            .file("/t/base/cm.yaml", CM)
            .file(
                "/t/a/kustomization.yaml",
                "resources: [../base]\nnamePrefix: a-\n",
            )
            .file(
                "/t/b/kustomization.yaml",
                "resources: [../base]\nnamePrefix: b-\n",
            )
            .file("/t/all/kustomization.yaml", "resources: [../a, ../b]\n");
        let fs = Counting::new(fs);
        let r = render_mem(&fs, "/t/all").unwrap();
        assert_eq!(names(&r), ["a-cm", "b-cm"]);
        let reads = fs.reads.lock().unwrap();
        assert!(reads.values().all(|&n| n == 1), "{reads:?}");
        assert_eq!(reads.len(), 5);
    }

    /// The first listing of a file takes its parsed objects, the second parses the kept text
    /// again, the third copies that: all three see the same objects, and the file is read once.
    #[test]
    fn file_listed_three_times_is_read_once() {
        let mut fs = MemFs::new();
        fs.file("/t/base/kustomization.yaml", "resources: [cm.yaml]\n")
            .file("/t/base/cm.yaml", CM);
        for p in ["a", "b", "c"] {
            fs.file(
                format!("/t/{p}/kustomization.yaml"),
                format!("resources: [../base]\nnamePrefix: {p}-\n"),
            );
        }
        fs.file(
            "/t/all/kustomization.yaml",
            "resources: [../a, ../b, ../c]\n",
        );
        let fs = Counting::new(fs);
        let r = render_mem(&fs, "/t/all").unwrap();
        assert_eq!(names(&r), ["a-cm", "b-cm", "c-cm"]);
        let reads = fs.reads.lock().unwrap();
        assert!(reads.values().all(|&n| n == 1), "{reads:?}");
    }

    /// Whichever thread reads the files, the render reads each once and gives the same
    /// objects, the same warnings and the same first error.
    #[test]
    fn every_reading_gives_the_same_render() {
        let mut fs = MemFs::new();
        fs.file(
            "/t/base/kustomization.yaml",
            "resources: [cm.yaml]\nconfigMapGenerator:\n- name: g\n  files: [k=g.txt]\n  envs: [g.env]\n",
        )
        .file("/t/base/cm.yaml", CM)
        .file("/t/base/g.txt", "text")
        .file("/t/base/g.env", "A=1\n")
            .file(
                "/t/c/kustomization.yaml",
                "kind: Component\nresources: [sa.yaml]\n",
            )
            .file(
                "/t/c/sa.yaml",
                "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
            )
            .file(
                "/t/p.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
            );
        for (p, extra) in [("a", "bases: [../base]\n"), ("b", "resources: [../base]\n")] {
            fs.file(
                format!("/t/{p}/kustomization.yaml"),
                format!(
                    "{extra}components: [../c]\nnamePrefix: {p}-\npatches:\n- path: ../p.yaml\n"
                ),
            );
        }
        fs.file("/t/all/kustomization.yaml", "resources: [../a, ../b]\n")
            .file(
                "/t/bad/kustomization.yaml",
                "resources: [../a, x.yaml, ../b]\n",
            )
            .file("/t/bad/x.yaml", "kind: [\n");
        let mut seen = Vec::new();
        for reading in [Reading::OneThread, Reading::Ahead, Reading::AheadFirst] {
            let fs = Counting::new(fs.clone());
            // One patch file for both overlays, outside their roots.
            let opts = RenderOptions {
                load_restrictor: Restrictor::None,
                reorder: OutputOrder::None,
                reading,
                ..RenderOptions::default()
            };
            let mut warnings = Warnings::default();
            let r = render_with(&fs, Path::new("/t/all"), &opts, &mut warnings).unwrap();
            let mut reads: Vec<_> = fs.reads.lock().unwrap().clone().into_iter().collect();
            reads.sort();
            let data: Vec<_> = r.resources.iter().map(|r| r.node.clone()).collect();
            let bad =
                render_with(&fs, Path::new("/t/bad"), &opts, &mut Warnings::default()).unwrap_err();
            let warnings = warnings.messages().to_vec();
            let at = bad.location.as_ref().map(|l| l.file.path.clone());
            seen.push((reading, (reads, data, warnings, format!("{bad:?}"), at)));
        }
        let (reads, data, warnings, _, at) = &seen[0].1;
        // Patch and generator files are read per use; every other file once.
        for (path, n) in reads {
            let per_use = ["p.yaml", "g.txt", "g.env"]
                .iter()
                .any(|f| path.ends_with(f));
            let want = if per_use { 2 } else { 1 };
            assert_eq!(*n, want, "{reads:?}");
        }
        assert_eq!(data.len(), 6);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(at.as_deref(), Some(Path::new("/t/bad/x.yaml")));
        for (reading, other) in &seen[1..] {
            assert_eq!(other, &seen[0].1, "{reading:?}");
        }
    }

    #[test]
    fn component_transforms_what_its_parent_accumulated() {
        let mut fs = MemFs::new();
        fs.file(
            "/t/o/kustomization.yaml",
            "resources: [cm.yaml]\ncomponents: [../c]\nnameSuffix: -o\n",
        )
        .file("/t/o/cm.yaml", CM)
        .file(
            "/t/c/kustomization.yaml",
            "kind: Component\nresources: [sa.yaml]\nnamePrefix: c-\n",
        )
        .file(
            "/t/c/sa.yaml",
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
        );
        let r = render_mem(&fs, "/t/o").unwrap();
        assert_eq!(names(&r), ["c-cm-o", "c-sa-o"]);
    }

    #[test]
    fn diamond_of_bases_is_a_duplicate() {
        let mut fs = MemFs::new();
        fs.file("/t/base/kustomization.yaml", "resources: [cm.yaml]\n")
            .file("/t/base/cm.yaml", CM)
            .file("/t/a/kustomization.yaml", "resources: [../base]\n")
            .file("/t/all/kustomization.yaml", "resources: [../a, ../base]\n");
        let e = render_mem(&fs, "/t/all").unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateId);
        assert_eq!(e.related.len(), 1);
        assert_eq!(e.chain, ["/t/all/kustomization.yaml"]);
    }

    #[test]
    fn errors_carry_the_chain() {
        let mut fs = MemFs::new();
        fs.file("/t/base/kustomization.yaml", "resources: [missing.yaml]\n")
            .file("/t/mid/kustomization.yaml", "resources: [../base]\n")
            .file("/t/top/kustomization.yaml", "resources: [../mid]\n");
        let e = render_mem(&fs, "/t/top").unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert_eq!(
            e.chain,
            [
                "/t/top/kustomization.yaml",
                "/t/mid/kustomization.yaml",
                "/t/base/kustomization.yaml"
            ]
        );
        assert_eq!(
            e.location.unwrap().describe(),
            "/t/base/kustomization.yaml:1:13"
        );
    }

    #[test]
    fn parent_directory_is_a_cycle() {
        let mut fs = MemFs::new();
        fs.file("/t/kustomization.yaml", "resources: [sub]\n")
            .file("/t/sub/kustomization.yaml", "resources: [..]\n");
        let e = render_mem(&fs, "/t").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Cycle);
        assert_eq!(e.message, "cycle of kustomizations: /t → /t/sub → /t");
    }

    #[test]
    fn symlinked_file_outside_root_is_refused_unless_allowed() {
        let mut fs = MemFs::new();
        fs.file("/t/app/kustomization.yaml", "resources: [link.yaml]\n")
            .file("/t/other/cm.yaml", CM)
            .symlink("/t/app/link.yaml", "../other/cm.yaml");
        let e = render_mem(&fs, "/t/app").unwrap_err();
        assert_eq!(e.kind, ErrorKind::LoadRestriction);
        let opts = RenderOptions {
            load_restrictor: Restrictor::None,
            ..RenderOptions::default()
        };
        let r = render_with(&fs, Path::new("/t/app"), &opts, &mut Warnings::default()).unwrap();
        assert_eq!(names(&r), ["cm"]);
    }

    /// Remote trees in memory: URL → (clone, kustomization root).
    #[derive(Debug)]
    struct FakeRemotes(Vec<(&'static str, &'static str, &'static str)>);

    impl RemoteTrees for FakeRemotes {
        fn tree(&self, _fs: &dyn Fs, url: &str) -> Result<RemoteTree> {
            let (_, clone, root) = self
                .0
                .iter()
                .find(|(u, _, _)| *u == url)
                .ok_or_else(|| Error::new(ErrorKind::Remote, format!("no tree for {url}")))?;
            Ok(RemoteTree {
                clone: PathBuf::from(clone),
                root: PathBuf::from(root),
                commit: None,
            })
        }
        fn cache_dir(&self) -> Option<&Path> {
            None
        }
    }

    const R: &str = "https://github.com/o/r//base?ref=v1";
    const C: &str = "https://github.com/o/r//comp?ref=v1";

    fn render_remote(fs: &MemFs, restrictor: Restrictor) -> Result<Rendered> {
        let remotes = FakeRemotes(vec![
            (R, "/cache/t1", "/cache/t1/base"),
            (C, "/cache/t1", "/cache/t1/comp"),
        ]);
        let opts = RenderOptions {
            load_restrictor: restrictor,
            reorder: OutputOrder::None,
            ..RenderOptions::default()
        };
        render_with_remotes(
            fs,
            Path::new("/t/app"),
            &opts,
            Some(&remotes),
            &mut Warnings::default(),
        )
    }

    /// A remote base and a remote component build like local ones; inside them the load
    /// restrictor is root-only even when the render allows everything, and their bases stay
    /// inside the clone (kustomize's `newLoaderAtGitClone`, `errIfGitContainmentViolation`).
    #[test]
    fn remote_bases_are_rooted_in_their_clone() {
        let mut fs = MemFs::new();
        fs.file(
            "/t/app/kustomization.yaml",
            format!("resources:\n- {R}\n- ../outside.yaml\ncomponents:\n- {C}\n"),
        )
        .file(
            "/t/outside.yaml",
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
        )
        .file(
            "/cache/t1/base/kustomization.yaml",
            "resources: [cm.yaml]\n",
        )
        .file("/cache/t1/base/cm.yaml", CM)
        .file(
            "/cache/t1/comp/kustomization.yaml",
            "kind: Component\nnamePrefix: c-\n",
        );
        let r = render_remote(&fs, Restrictor::None).unwrap();
        assert_eq!(names(&r), ["c-cm", "c-sa"]);

        fs.file("/t/app/kustomization.yaml", format!("resources:\n- {R}\n"))
            .file(
                "/cache/t1/base/kustomization.yaml",
                "resources: [../up.yaml]\n",
            )
            .file("/cache/t1/up.yaml", CM);
        let e = render_remote(&fs, Restrictor::None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LoadRestriction);

        fs.file(
            "/cache/t1/base/kustomization.yaml",
            "resources: [../../../t/local]\n",
        )
        .file("/t/local/kustomization.yaml", "resources: []\n");
        let e = render_remote(&fs, Restrictor::None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LoadRestriction);
        assert!(
            e.message.contains("must be within the repo"),
            "{}",
            e.message
        );

        // A remote base naming itself again is a cycle of URLs.
        fs.file(
            "/cache/t1/base/kustomization.yaml",
            format!("resources:\n- {R}\n"),
        );
        let e = render_remote(&fs, Restrictor::RootOnly).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Cycle);
        assert!(
            e.message.starts_with("cycle detected: URI"),
            "{}",
            e.message
        );
        assert_eq!(
            e.location.unwrap().describe(),
            "/cache/t1/base/kustomization.yaml:2:3"
        );
    }

    /// Origins inside a remote base name its repository and ref, and paths start again at
    /// its directory in the repository (kustomize's `Origin.Append`).
    #[test]
    fn origins_in_remote_bases_name_the_repository() {
        let mut fs = MemFs::new();
        fs.file(
            "/t/app/kustomization.yaml",
            format!("resources:\n- {R}\n- cm.yaml\nbuildMetadata: [originAnnotations]\n"),
        )
        .file(
            "/t/app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n",
        )
        .file(
            "/cache/t1/base/kustomization.yaml",
            "resources: [cm.yaml]\n",
        )
        .file("/cache/t1/base/cm.yaml", CM);
        let r = render_remote(&fs, Restrictor::RootOnly).unwrap();
        let origins: Vec<_> = r
            .resources
            .iter()
            .map(|r| {
                r.node
                    .str_at(&["metadata", "annotations", metadata::ORIGIN])
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        assert_eq!(
            origins,
            [
                "path: base/cm.yaml\nrepo: https://github.com/o/r\nref: v1\n",
                "path: cm.yaml\n"
            ]
        );
    }

    /// The reader thread reads only what the build may read: not a resource or patch file
    /// outside the root, even when it reads everything first.
    #[test]
    fn reader_thread_keeps_to_the_load_restrictor() {
        let mut fs = MemFs::new();
        fs.file(
            "/t/app/kustomization.yaml",
            "resources: [ok.yaml, ../other/cm.yaml]
patches:
- path: ../other/p.yaml
",
        )
        .file(
            "/t/app/ok.yaml",
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
        )
        .file("/t/other/cm.yaml", CM)
        .file("/t/other/p.yaml", CM);
        let fs = Counting::new(fs);
        let opts = RenderOptions {
            reading: Reading::AheadFirst,
            ..RenderOptions::default()
        };
        let e = render_with(&fs, Path::new("/t/app"), &opts, &mut Warnings::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LoadRestriction);
        let reads = fs.reads.lock().unwrap();
        let mut read: Vec<_> = reads.keys().map(|p| p.display().to_string()).collect();
        read.sort();
        assert_eq!(read, ["/t/app/kustomization.yaml", "/t/app/ok.yaml"]);
    }
}
