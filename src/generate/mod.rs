//! configMapGenerator and secretGenerator (kustomize v5.5 semantics), the `behavior`
//! (create/merge/replace) rules for adding generated objects to the accumulated set, and the
//! content-hash name suffix. Pure: file contents come through a [`Loader`] the caller passes;
//! this module never touches the disk and knows nothing of the kustomization graph.

pub mod hash;
pub mod kv;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{GeneratorArgs, GeneratorOptions};
use crate::resource::Resource;

pub use hash::{apply_hash_suffixes, hash_of};

/// Reads a file named by a generator (`files:`, `envs:`), relative to the kustomization
/// directory. The caller (`build`, through `fs`) applies the load restrictor and turns
/// failures into located errors.
pub trait Loader {
    fn load(&self, path: &str) -> Result<Vec<u8>>;
}

impl<F: Fn(&str) -> Result<Vec<u8>>> Loader for F {
    fn load(&self, path: &str) -> Result<Vec<u8>> {
        self(path)
    }
}

/// A generator's `behavior:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Behavior {
    #[default]
    Create,
    Merge,
    Replace,
}

impl Behavior {
    /// Parses `behavior:`; empty or absent is `create`. An unknown value is an error (kustomize
    /// silently treats it as "unspecified" and then fails on collisions; ply says so up front).
    pub fn parse(s: Option<&str>) -> Result<Behavior> {
        match s.unwrap_or("") {
            "" | "create" => Ok(Behavior::Create),
            "merge" => Ok(Behavior::Merge),
            "replace" => Ok(Behavior::Replace),
            other => Err(Error::new(
                ErrorKind::Generator,
                format!("unknown generator behavior {other:?}"),
            )
            .help("behavior must be one of: create, merge, replace")),
        }
    }
}

/// Makes the ConfigMap of one `configMapGenerator` entry. `global` is the kustomization's
/// `generatorOptions`, combined with the entry's own `options` as kustomize does.
pub fn config_map(
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
    loader: &dyn Loader,
) -> Result<Resource> {
    let _ = (args, global, loader);
    Err(Error::new(
        ErrorKind::Generator,
        "configMapGenerator: not implemented yet",
    ))
}

/// Makes the Secret of one `secretGenerator` entry.
pub fn secret(
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
    loader: &dyn Loader,
) -> Result<Resource> {
    let _ = (args, global, loader);
    Err(Error::new(
        ErrorKind::Generator,
        "secretGenerator: not implemented yet",
    ))
}

/// Adds a generated resource to the accumulated set according to its behavior:
/// `create` appends (an id collision is an error), `merge` and `replace` combine it with the
/// one existing resource it names (matched against current and previous ids).
pub fn absorb(
    resources: &mut Vec<Resource>,
    generated: Resource,
    behavior: Behavior,
) -> Result<()> {
    let _ = (resources, generated, behavior);
    Err(Error::new(
        ErrorKind::Generator,
        "absorb: not implemented yet",
    ))
}

/// Runs every `configMapGenerator` then every `secretGenerator` entry of one kustomization
/// (kustomize's order) and absorbs each result into `resources` (the set accumulated from
/// `resources:`/bases of the same kustomization).
pub fn run(
    config_maps: &[GeneratorArgs],
    secrets: &[GeneratorArgs],
    global: Option<&GeneratorOptions>,
    loader: &dyn Loader,
    resources: &mut Vec<Resource>,
) -> Result<()> {
    for args in config_maps {
        let r = config_map(args, global, loader)?;
        absorb(resources, r, Behavior::parse(args.behavior.as_deref())?)?;
    }
    for args in secrets {
        let r = secret(args, global, loader)?;
        absorb(resources, r, Behavior::parse(args.behavior.as_deref())?)?;
    }
    Ok(())
}
