//! Plugins that run programs, when the user opts in (`--enable-alpha-plugins --enable-exec`),
//! as kustomize v5.5 runs them (`api/internal/plugins/loader/loader.go`,
//! `kyaml/fn/runtime/exec`): exec KRM functions (`config.kubernetes.io/function: exec:`)
//! and legacy exec plugins. The one module, beside `helm`, that starts programs.

/// The plugin flags of `kustomize build`.
#[derive(Clone, Debug, Default)]
pub struct PluginOptions {
    /// `--enable-alpha-plugins`.
    pub enabled: bool,
    /// `--enable-exec`.
    pub exec: bool,
    /// `-e/--env`: `KEY=VALUE` (or `KEY`, taken from ply's own environment) for functions.
    pub env: Vec<String>,
}
