//! The flags `ply render` shares with `kustomize build` v5.5 and `kubectl kustomize`
//! (`kustomize/commands/build/`: `flagenablehelm.go`, `flagenableplugins.go`,
//! `flagsforfunctions.go`, `flagaddmanagedby.go`), same names and meanings, and what they turn
//! into: the helm options, the plugin options and the deprecation notes kustomize prints. A
//! flag whose feature a kustomization does not use changes nothing.

use crate::diag::Warnings;
use crate::render::{HelmOptions, PluginOptions};

#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "kustomize build flags")]
pub(crate) struct BuildFlags {
    /// Enable use of the Helm chart inflator generator (`helmCharts:`): runs `helm template` on
    /// charts already on disk under chartHome (ply never pulls charts).
    #[arg(long)]
    pub enable_helm: bool,
    /// helm command (path to executable).
    #[arg(long, value_name = "COMMAND", default_value = "helm")]
    pub helm_command: String,
    /// Kubernetes api versions used by Helm for Capabilities.APIVersions (repeatable).
    #[arg(long, value_name = "VERSION", action = clap::ArgAction::Append)]
    pub helm_api_versions: Vec<String>,
    /// Kubernetes version used by Helm for Capabilities.KubeVersion.
    #[arg(long, value_name = "VERSION")]
    pub helm_kube_version: Option<String>,
    /// Enable debug output from the Helm chart inflator generator (`helm template --debug`).
    #[arg(long)]
    pub helm_debug: bool,
    /// Deprecated: add the `app.kubernetes.io/managed-by` label to every resource (use
    /// `buildMetadata: [managedByLabel]`). Also set by `KUSTOMIZE_ENABLE_MANAGEDBY_LABEL=on`.
    #[arg(long)]
    pub enable_managedby_label: bool,
    /// Enable kustomize plugins: legacy exec plugins run (from the plugin home), exec KRM
    /// functions too with --enable-exec; also enables Helm charts, as in kustomize.
    #[arg(long)]
    pub enable_alpha_plugins: bool,
    /// With --enable-alpha-plugins: run exec KRM functions (`config.kubernetes.io/function:
    /// {exec: …}`, raw executables). Do not use for untrusted configs.
    #[arg(long)]
    pub enable_exec: bool,
    /// Enable network access for (container) functions that declare it.
    #[arg(long)]
    pub network: bool,
    /// The docker network to run container functions in.
    #[arg(long, value_name = "NAME", default_value = "bridge")]
    pub network_name: String,
    /// A storage option for container functions, read from the filesystem (repeatable).
    #[arg(long, value_name = "OPTION", action = clap::ArgAction::Append)]
    pub mount: Vec<String>,
    /// An environment variable for functions, `KEY=VALUE` or `KEY` (repeatable).
    #[arg(short = 'e', long = "env", value_name = "ENV", action = clap::ArgAction::Append)]
    pub env: Vec<String>,
    /// Run container functions with the uid and gid of the user running ply.
    #[arg(long)]
    pub as_current_user: bool,
}

impl BuildFlags {
    /// `HonorKustomizeFlags`: `--enable-alpha-plugins` turns Helm on as well
    /// (`types.EnabledPluginConfig`); the helm command and versions apply either way.
    pub(crate) fn helm(&self) -> HelmOptions {
        HelmOptions {
            enabled: self.enable_helm || self.enable_alpha_plugins,
            command: self.helm_command.clone(),
            api_versions: self.helm_api_versions.clone(),
            kube_version: self.helm_kube_version.clone().filter(|v| !v.is_empty()),
            debug: self.helm_debug,
        }
    }

    pub(crate) fn plugins(&self) -> PluginOptions {
        PluginOptions {
            enabled: self.enable_alpha_plugins,
            exec: self.enable_exec,
            env: self.env.clone(),
        }
    }

    /// `isManagedByLabelEnabled`: the flag, or the environment variable set to exactly `on`.
    pub(crate) fn managed_by_label(&self) -> bool {
        self.enable_managedby_label
            || std::env::var("KUSTOMIZE_ENABLE_MANAGEDBY_LABEL").is_ok_and(|v| v == "on")
    }

    /// The deprecation notes kustomize prints for the flags it marks deprecated (`build.go`,
    /// `NewCmdBuild`).
    pub(crate) fn deprecations(&self, reorder_given: bool, warnings: &mut Warnings) {
        if reorder_given {
            warnings.warn(
                "flag --reorder is deprecated: use the `sortOptions` field in kustomization.yaml instead",
            );
        }
        if self.enable_managedby_label {
            warnings.warn(
                "flag --enable-managedby-label is deprecated: use `managedByLabel` in the `buildMetadata` field instead",
            );
        }
    }
}
