//! Helm charts, inflated as kustomize v5.5's HelmChartInflationGenerator inflates them
//! (`api/internal/builtins/HelmChartInflationGenerator.go`, `api/types/helmchartargs.go`):
//! `helmCharts:` with `helmGlobals:`, and `apiVersion: builtin` configurations of kind
//! `HelmChartInflationGenerator`, each run through `helm template` on a chart already on disk.
//! Only with `--enable-helm`; ply never pulls a chart. The one module that starts `helm`; the
//! resources it prints go back to the build like any generated ones.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fs::{FileKind, Fs};
use crate::kustomization::Loaded;
use crate::resource::Resource;
use crate::source::{Location, SourceFile};
use crate::yaml::{EmitOptions, Node, emit_document, from_node};

use super::{Context, KustomizeVersion};

/// The helm flags of `kustomize build` (`kustomize/commands/build/flagenablehelm.go`).
#[derive(Clone, Debug)]
pub struct HelmOptions {
    /// `--enable-helm` (also set by `--enable-alpha-plugins`, as `types.EnabledPluginConfig`
    /// does).
    pub enabled: bool,
    /// `--helm-command`, default `helm`.
    pub command: String,
    /// `--helm-api-versions`: replaces every chart's `apiVersions` when given.
    pub api_versions: Vec<String>,
    /// `--helm-kube-version`: replaces every chart's `kubeVersion` when given.
    pub kube_version: Option<String>,
    /// `--helm-debug`: `--debug` for every chart.
    pub debug: bool,
}

impl Default for HelmOptions {
    fn default() -> Self {
        HelmOptions {
            enabled: false,
            command: "helm".into(),
            api_versions: Vec::new(),
            kube_version: None,
            debug: false,
        }
    }
}

/// `types.HelmGlobals`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct HelmGlobals {
    pub chart_home: Option<String>,
    pub config_home: Option<String>,
}

/// `types.HelmChart`, as its plugin decodes it (leniently: unknown fields are ignored, as
/// sigs.k8s.io/yaml's `Unmarshal` ignores them).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct HelmChart {
    pub name: String,
    pub version: String,
    pub repo: String,
    pub release_name: String,
    pub namespace: String,
    pub additional_values_files: Vec<String>,
    pub values_file: String,
    pub values_inline: Option<Node>,
    pub values_merge: String,
    #[serde(rename = "includeCRDs")]
    pub include_crds: bool,
    pub skip_hooks: bool,
    pub api_versions: Vec<String>,
    pub kube_version: String,
    pub name_template: String,
    pub skip_tests: bool,
    pub debug: bool,
    /// `helm template --devel` (kustomize v5.7 and later, PR #5865).
    pub devel: bool,
    // A builtin configuration carries the globals beside the chart fields.
    pub chart_home: Option<String>,
    pub config_home: Option<String>,
}

/// One chart to inflate, with where its configuration is written (for diagnostics).
pub(super) struct ChartEntry {
    pub chart: HelmChart,
    pub globals: HelmGlobals,
    pub at: Location,
}

/// The deprecated `helmChartInflationGenerator:` entry (`types.HelmChartArgs`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HelmChartArgs {
    chart_name: String,
    chart_version: String,
    chart_repo_url: String,
    chart_home: String,
    helm_home: String,
    values: String,
    values_local: Option<Node>,
    values_merge: String,
    release_name: String,
}

/// The charts of a kustomization: `helmCharts:` with `helmGlobals:`, then the deprecated
/// `helmChartInflationGenerator:` entries converted as kustomize's `FixKustomization` does
/// (`types.SplitHelmParameters`: their last non-empty `chartHome`/`helmHome` become the
/// globals when `helmGlobals` is absent; fields without a counterpart are dropped).
#[allow(
    clippy::too_many_lines,
    reason = "one pass over helmCharts and then the deprecated generator entries as kustomize converts them (FixKustomization), field by field in its order"
)]
pub(super) fn kustomization_charts(
    loaded: &Loaded,
    kustomize: KustomizeVersion,
    warnings: &mut Warnings,
) -> Result<Vec<ChartEntry>> {
    use crate::yaml::path::PathSeg;
    let k = &loaded.kustomization;
    let key_at = |field: &str, i: Option<usize>| {
        let mut path = vec![PathSeg::Key(field.into())];
        path.extend(i.map(PathSeg::Index));
        loaded.key_location(&path)
    };
    let items = |field: &str, node: &Option<Node>| -> Result<Vec<Node>> {
        match node {
            None | Some(Node::Null) => Ok(Vec::new()),
            Some(Node::Seq(items)) => Ok(items.clone()),
            Some(_) => Err(Error::new(
                ErrorKind::Kustomization,
                format!("{field} must be a list of charts"),
            )
            .at(key_at(field, None))),
        }
    };
    let charts = items("helmCharts", &k.helm_charts)?;
    let old = items(
        "helmChartInflationGenerator",
        &k.helm_chart_inflation_generator,
    )?;
    if charts.is_empty() && old.is_empty() {
        return Ok(Vec::new());
    }
    let mut globals: Option<HelmGlobals> = match &k.helm_globals {
        Some(n) if !n.is_null() => Some(from_node(n).map_err(|e| {
            Error::new(ErrorKind::Kustomization, format!("helmGlobals: {e}"))
                .at(key_at("helmGlobals", None))
        })?),
        _ => None,
    };
    let mut out = Vec::with_capacity(charts.len() + old.len());
    for (i, item) in charts.iter().enumerate() {
        let at = key_at("helmCharts", Some(i));
        // `devel` joined `types.HelmChart` in v5.7.0 (PR #5865); v5.5.0's strict decoding
        // of the kustomization refuses it.
        if !kustomize.at_least(KustomizeVersion::V5_7_1) && item.get("devel").is_some() {
            use crate::yaml::path::PathSeg;
            let path = [
                PathSeg::Key("helmCharts".into()),
                PathSeg::Index(i),
                PathSeg::Key("devel".into()),
            ];
            return Err(Error::new(
                ErrorKind::Kustomization,
                "invalid Kustomization: json: unknown field \"devel\"",
            )
            .at(loaded.key_location(&path))
            .label("a field of kustomize v5.7 and later")
            .help(format!(
                "`devel` needs kustomize v5.7 or later; ply renders as kustomize {kustomize} \
                 because of --kustomize-version (or PLY_KUSTOMIZE_VERSION)"
            )));
        }
        let chart: HelmChart = from_node(item).map_err(|e| {
            Error::new(ErrorKind::Kustomization, format!("helmCharts[{i}]: {e}")).at(at.clone())
        })?;
        out.push((chart, at));
    }
    if !old.is_empty() {
        let at = key_at("helmChartInflationGenerator", None);
        warnings.warn(format!(
            "{}: 'helmChartInflationGenerator' is deprecated. Please use 'helmCharts' (and 'helmGlobals') instead.",
            at.describe()
        ));
        let mut split = HelmGlobals::default();
        for (i, item) in old.iter().enumerate() {
            let at = key_at("helmChartInflationGenerator", Some(i));
            let a: HelmChartArgs = from_node(item).map_err(|e| {
                Error::new(
                    ErrorKind::Kustomization,
                    format!("helmChartInflationGenerator[{i}]: {e}"),
                )
                .at(at.clone())
            })?;
            if !a.helm_home.is_empty() {
                split.config_home = Some(a.helm_home.clone());
            }
            if !a.chart_home.is_empty() {
                split.chart_home = Some(a.chart_home.clone());
            }
            let chart = HelmChart {
                name: a.chart_name,
                version: a.chart_version,
                repo: a.chart_repo_url,
                values_file: a.values,
                values_inline: a.values_local,
                values_merge: a.values_merge,
                release_name: a.release_name,
                ..HelmChart::default()
            };
            out.push((chart, at));
        }
        if globals.is_none() && (split.chart_home.is_some() || split.config_home.is_some()) {
            globals = Some(split);
        }
    }
    let globals = globals.unwrap_or_default();
    Ok(out
        .into_iter()
        .map(|(chart, at)| ChartEntry {
            chart,
            globals: globals.clone(),
            at,
        })
        .collect())
}

/// Adds inflated resources as kustomize's `AbsorbAll` does: a new id, or an error.
pub(super) fn absorb(
    acc: &mut Vec<Resource>,
    generated: Vec<Resource>,
    at: &Location,
) -> Result<()> {
    for r in generated {
        crate::generate::absorb(acc, r, crate::generate::Behavior::Create)
            .map_err(|e| e.at(at.clone()))?;
    }
    Ok(())
}

/// The directory of a chart, as [`inflate`] finds it (`absChartHome`, then the chart's name):
/// `{chartHome}/{name}`, or `{chartHome}/{name}-{version}/{name}` for a chart with both a
/// version and a repository. Provenance reads templates there (`render/places.rs`).
pub(super) fn chart_dir(loaded: &Loaded, entry: &ChartEntry) -> PathBuf {
    let chart = &entry.chart;
    let rel = entry
        .globals
        .chart_home
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "charts".into());
    let mut home = if Path::new(&rel).is_absolute() {
        PathBuf::from(&rel)
    } else {
        loaded.dir.join(&rel)
    };
    if !chart.version.is_empty() && !chart.repo.is_empty() {
        home = home.join(format!("{}-{}", chart.name, chart.version));
    }
    home.join(&chart.name)
}

/// A builtin `HelmChartInflationGenerator` configuration (globals and chart in one document).
pub(super) fn config_chart(
    config: &Node,
    at: &Location,
    kustomize: KustomizeVersion,
) -> Result<ChartEntry> {
    let mut chart: HelmChart = from_node(config).map_err(|e| {
        Error::new(
            ErrorKind::Kustomization,
            format!("HelmChartInflationGenerator: {e}"),
        )
        .at(at.clone())
    })?;
    // A plugin configuration decodes leniently: v5.5.0 ignores a `devel` it does not know.
    chart.devel &= kustomize.at_least(KustomizeVersion::V5_7_1);
    let globals = HelmGlobals {
        chart_home: chart.chart_home.clone(),
        config_home: chart.config_home.clone(),
    };
    Ok(ChartEntry {
        chart,
        globals,
        at: at.clone(),
    })
}

/// What configuring a chart does to the `--helm-api-versions` list, as kustomize v5.5 does it:
/// `HelmChartInflationGeneratorPlugin.Config` gives the plugin the command line's slice, then
/// decodes the chart into the plugin, and Go's JSON decoder writes a chart's `apiVersions`
/// into that shared slice. So every chart configured afterwards (and every one configured
/// earlier in the same kustomization, which run after all are configured) that sets no
/// `apiVersions` gets the flag's list with its first entries replaced by the chart's.
pub(super) fn configure_api_versions(cli: &mut [String], chart: &HelmChart) {
    for (slot, v) in cli.iter_mut().zip(&chart.api_versions) {
        slot.clone_from(v);
    }
}

/// kustomize's error when a chart is configured without `--enable-helm`
/// (`HelmChartInflationGeneratorPlugin.Config`).
pub(super) fn check_enabled(opts: &HelmOptions, entry: &ChartEntry) -> Result<()> {
    if opts.enabled {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Plugin,
        format!(
            "trouble configuring builtin HelmChartInflationGenerator for chart '{}': must specify --enable-helm",
            entry.chart.name
        ),
    )
    .at(entry.at.clone())
    .label("a Helm chart")
    .help("charts are inflated only on request: add --enable-helm (ply then runs `helm template` on the chart in chartHome, as kustomize does)"))
}

/// The values merge kustomize allows (`legalMergeOptions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValuesMerge {
    Override,
    Merge,
    Replace,
}

/// Inflates one chart: `helm version`, then `helm template` with the arguments kustomize
/// builds (`HelmChart.AsHelmArgs`), and parses what it prints.
/// `cli_api_versions` is `--helm-api-versions` as configuring the charts has left it (see
/// [`configure_api_versions`]).
///
/// `namespace` is what kustomize v5.8 passes as `--namespace` to a chart of `helmCharts:`
/// that names none (PR #5940, #6044: the kustomization's `namespace`, else the nearest one
/// of the kustomizations above it, `helmRootNamespace`); `None` for v5.5.0 and for plugin
/// configurations.
pub(super) fn inflate(
    fs: &dyn Fs,
    ctx: Context<'_>,
    loaded: &Loaded,
    entry: &ChartEntry,
    cli_api_versions: &[String],
    namespace: Option<&str>,
) -> Result<Vec<Resource>> {
    check_enabled(&ctx.opts.helm, entry)?;
    let at = &entry.at;
    let chart = prepared_chart(&ctx.opts.helm, entry, cli_api_versions, namespace)?;
    let (chart_home, home_shown) = chart_home(loaded, entry, &chart);
    let values_merge = match chart.values_merge.as_str() {
        "" | "override" => ValuesMerge::Override,
        "merge" => ValuesMerge::Merge,
        "replace" => ValuesMerge::Replace,
        other => {
            return Err(fail(
                at,
                format!("valuesMerge must be one of [merge override replace], not '{other}'"),
            )
            .label("this chart"));
        }
    };
    // Additional values files: under the load restrictor, relative to the kustomization.
    let mut additional = Vec::with_capacity(chart.additional_values_files.len());
    for f in &chart.additional_values_files {
        let (_, canonical) = super::steps::resolve_named_file(fs, ctx, loaded, f)
            .map_err(|e| e.at(at.clone()).help("could not load additionalValuesFile"))?;
        additional.push(canonical);
    }
    // `chartExistsLocally`: ply never pulls.
    let chart_dir = chart_home.join(&chart.name);
    if fs.kind(&chart_dir) != Some(FileKind::Dir) {
        return Err(not_pulled(&chart, &home_shown, at));
    }
    let template = Template {
        chart: &chart,
        chart_dir: &chart_dir,
        additional: &additional,
        v58: ctx.kustomize().at_least(KustomizeVersion::V5_8_1),
    };
    let values = values_bytes(fs, ctx, loaded, &template, values_merge, &home_shown, at)?;
    let stdout = run_template(&ctx.opts.helm, entry, &template, &values)?;
    template_resources(&chart, &stdout, template.v58, at)
}

/// An error of the chart at `at`.
fn fail(at: &Location, message: String) -> Error {
    Error::new(ErrorKind::Plugin, message).at(at.clone())
}

/// The chart as kustomize's `Config` leaves it: the command line's versions and debug flag
/// set, then the chart decoded over them (a chart's own `kubeVersion` and `apiVersions` win;
/// the flags fill in the rest), the namespace kustomize v5.8 gives it, and a name
/// (`validateArgs`).
fn prepared_chart(
    helm: &HelmOptions,
    entry: &ChartEntry,
    cli_api_versions: &[String],
    namespace: Option<&str>,
) -> Result<HelmChart> {
    let mut chart = entry.chart.clone();
    if let Some(ns) = namespace.filter(|_| chart.namespace.is_empty()) {
        chart.namespace = ns.to_string();
    }
    if let (Some(v), true) = (&helm.kube_version, chart.kube_version.is_empty()) {
        chart.kube_version = v.clone();
    }
    if chart.api_versions.is_empty() {
        chart.api_versions = cli_api_versions.to_vec();
    }
    chart.debug |= helm.debug;
    if chart.name.is_empty() {
        return Err(fail(&entry.at, "chart name cannot be empty".into())
            .label("this chart")
            .help("give the chart's `name`: the directory under chartHome that holds it"));
    }
    Ok(chart)
}

/// `absChartHome`: the directory that holds the chart's directory, and how messages name it
/// (a chart with both version and repo lives in `{chartHome}/{name}-{version}`).
fn chart_home(loaded: &Loaded, entry: &ChartEntry, chart: &HelmChart) -> (PathBuf, String) {
    let chart_home_rel = entry
        .globals
        .chart_home
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "charts".into());
    let mut chart_home = if Path::new(&chart_home_rel).is_absolute() {
        PathBuf::from(&chart_home_rel)
    } else {
        loaded.dir.join(&chart_home_rel)
    };
    let mut home_shown = chart_home_rel.trim_end_matches('/').to_string();
    if !chart.version.is_empty() && !chart.repo.is_empty() {
        chart_home = chart_home.join(format!("{}-{}", chart.name, chart.version));
        home_shown = format!("{home_shown}/{}-{}", chart.name, chart.version);
    }
    (chart_home, home_shown)
}

/// The error for a chart that is not on disk, with the `helm pull` that fetches it.
fn not_pulled(chart: &HelmChart, home_shown: &str, at: &Location) -> Error {
    let mut pull = format!("helm pull --untar --untardir {home_shown}");
    if let Some(oci) = chart.repo.strip_prefix("oci://") {
        pull.push_str(&format!(
            " oci://{}/{}",
            oci.trim_end_matches('/'),
            chart.name
        ));
    } else {
        if !chart.repo.is_empty() {
            pull.push_str(&format!(" --repo {}", chart.repo));
        }
        pull.push_str(&format!(" {}", chart.name));
    }
    if !chart.version.is_empty() {
        pull.push_str(&format!(" --version {}", chart.version));
    }
    fail(
        at,
        format!(
            "chart '{}' is not in {home_shown}/: ply never pulls charts from a repository or registry",
            chart.name
        ),
    )
    .label("this chart")
    .help(format!("fetch the chart first, from the kustomization's directory: {pull}"))
}

/// The values file kustomize hands helm: the chart's own `values.yaml` unless `valuesFile`
/// names another, as it is (`copyValuesFile`), or merged with the inline values as asked and
/// marshalled with sorted keys (`createNewMergedValuesFile`).
fn values_bytes(
    fs: &dyn Fs,
    ctx: Context<'_>,
    loaded: &Loaded,
    t: &Template<'_>,
    values_merge: ValuesMerge,
    home_shown: &str,
    at: &Location,
) -> Result<Vec<u8>> {
    let chart = t.chart;
    let values_path = if chart.values_file.is_empty() {
        t.chart_dir.join("values.yaml")
    } else if Path::new(&chart.values_file).is_absolute() {
        PathBuf::from(&chart.values_file)
    } else {
        crate::fs::join(&loaded.dir, &chart.values_file)
    };
    let values_shown = if chart.values_file.is_empty() {
        format!("{home_shown}/{}/values.yaml", chart.name)
    } else {
        chart.values_file.clone()
    };
    let read_values = || -> Result<Vec<u8>> {
        let rel = values_path.to_string_lossy().into_owned();
        super::steps::read_named_file(fs, None, ctx, loaded, &rel).map_err(|e| {
            Error::new(
                e.kind,
                format!(
                    "values file {values_shown} of chart '{}': {}",
                    chart.name, e.message
                ),
            )
            .at(at.clone())
        })
    };
    let inline = chart
        .values_inline
        .as_ref()
        .filter(|n| n.as_map().is_some_and(|m| !m.is_empty()));
    let Some(inline) = inline else {
        return read_values();
    };
    let merged = match values_merge {
        ValuesMerge::Replace => inline.clone(),
        ValuesMerge::Override | ValuesMerge::Merge => {
            let text = String::from_utf8_lossy(&read_values()?).into_owned();
            let file_values = crate::yaml::parse::parse_one(&text).map_err(|e| {
                fail(
                    at,
                    format!(
                        "could not parse values file {values_shown} of chart '{}': {}",
                        chart.name, e.message
                    ),
                )
            })?;
            // kyaml's `merge2.Merge(src, dest)`: src wins. `override` passes the inline
            // values as src, `merge` the file's.
            if values_merge == ValuesMerge::Override {
                merge_values(file_values, inline)
            } else {
                merge_values(inline.clone(), &file_values)
            }
        }
    };
    let mut out = String::new();
    emit_document(&mut out, &merged, EmitOptions { sort_keys: true });
    Ok(out.into_bytes())
}

/// What `helm template` is run on.
struct Template<'a> {
    chart: &'a HelmChart,
    chart_dir: &'a Path,
    additional: &'a [PathBuf],
    /// Whether kustomize v5.8's rules apply (helm 3 or 4, `helm version` without `-c`).
    v58: bool,
}

/// Writes the values to a temporary file, checks helm's version and runs `helm template`;
/// what it printed.
fn run_template(
    helm: &HelmOptions,
    entry: &ChartEntry,
    t: &Template<'_>,
    values: &[u8],
) -> Result<Vec<u8>> {
    let at = &entry.at;
    let tmp = TempDir::new().map_err(|e| {
        fail(
            at,
            format!("cannot create a temporary directory for helm: {e}"),
        )
    })?;
    let values_tmp = tmp
        .path
        .join(format!("{}-kustomize-values.yaml", t.chart.name));
    std::fs::write(&values_tmp, values)
        .map_err(|e| fail(at, format!("failed to write values file: {e}")))?;
    let config_home = match entry
        .globals
        .config_home
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        Some(h) => PathBuf::from(h),
        None => tmp.path.join("helm"),
    };
    let run = |args: &[String]| {
        run_helm(&helm.command, args, &config_home, &tmp.path)
            .map_err(|m| fail(at, m).label("this chart"))
    };
    // `checkHelmVersion`: kustomize v5.5.0 needs helm 3 and asks `helm version -c --short`;
    // v5.8 takes helm 3 or 4 and asks without `-c`, which helm 4 no longer knows (PR #6016).
    let mut version_args: Vec<String> = vec!["version".into(), "-c".into(), "--short".into()];
    if t.v58 {
        version_args.remove(1);
    }
    let version = run(&version_args)?;
    check_version(&String::from_utf8_lossy(&version), t.v58).map_err(|m| {
        fail(at, format!("'{}': {m}", helm.command))
            .label("this chart")
            .help(if t.v58 {
                "charts are inflated with helm 3 or 4: point --helm-command at one"
            } else {
                "charts are inflated with helm 3: point --helm-command at a helm 3 binary"
            })
    })?;
    let args = template_args(t.chart, t.chart_dir, &values_tmp, t.additional);
    let stdout = run(&args)?;
    drop(tmp);
    Ok(stdout)
}

/// The objects `helm template` printed; with kustomize v5.8 each marked as helm's
/// (`markHelmGeneratedResources`, PR #5940: the namespace transformer leaves these).
fn template_resources(
    chart: &HelmChart,
    stdout: &[u8],
    v58: bool,
    at: &Location,
) -> Result<Vec<Resource>> {
    let text = String::from_utf8_lossy(stdout).into_owned();
    let file = std::sync::Arc::new(SourceFile::new(
        format!("<helm template of chart '{}'>", chart.name),
        text,
    ));
    let mut resources =
        super::accumulate::parse_resources(&file, crate::yaml::limits::ReaderLimits::DEFAULT)
            .map_err(|e| {
                let message = format!(
                    "the output of helm template for chart '{}': {}",
                    chart.name, e.message
                );
                Error::new(e.kind, message).at(at.clone())
            })?;
    if v58 {
        for r in &mut resources {
            let annotations = r.node.ensure_path(&["metadata", "annotations"]);
            if !matches!(annotations, Node::Map(_)) {
                *annotations = Node::Map(Default::default());
            }
            if let Node::Map(m) = annotations {
                m.insert(super::metadata::HELM_GENERATED.into(), Node::str("true"));
            }
        }
    }
    Ok(resources)
}

/// `HelmChart.AsHelmArgs`: the arguments of `helm template`, in kustomize's order.
fn template_args(
    chart: &HelmChart,
    chart_dir: &Path,
    values: &Path,
    additional: &[PathBuf],
) -> Vec<String> {
    let mut args = vec!["template".to_string()];
    if chart.release_name.is_empty() {
        args.push("--generate-name".into());
    } else {
        args.push(chart.release_name.clone());
    }
    args.push(chart_dir.to_string_lossy().into_owned());
    let mut pair = |flag: &str, v: &str| {
        args.push(flag.into());
        args.push(v.into());
    };
    if !chart.namespace.is_empty() {
        pair("--namespace", &chart.namespace);
    }
    if !chart.name_template.is_empty() {
        pair("--name-template", &chart.name_template);
    }
    pair("-f", &values.to_string_lossy());
    for f in additional {
        pair("-f", &f.to_string_lossy());
    }
    for v in &chart.api_versions {
        pair("--api-versions", v);
    }
    if !chart.kube_version.is_empty() {
        pair("--kube-version", &chart.kube_version);
    }
    for (set, flag) in [
        (chart.include_crds, "--include-crds"),
        (chart.skip_tests, "--skip-tests"),
        (chart.skip_hooks, "--no-hooks"),
        (chart.debug, "--debug"),
        (chart.devel, "--devel"),
    ] {
        if set {
            args.push(flag.into());
        }
    }
    args
}

/// Runs a `helm template` that another controller builds (Argo CD's repo server, for a Helm
/// source) with helm's homes in a fresh temporary directory, as [`inflate`] runs it: `prepare`
/// writes what helm reads into that directory and returns the arguments. Returns helm's stdout,
/// or a message with its stderr (paths in the directory shown as `<tmp>/…`).
pub fn run_controller_template(
    command: &str,
    prepare: impl FnOnce(&Path) -> std::result::Result<Vec<String>, String>,
) -> std::result::Result<Vec<u8>, String> {
    let tmp =
        TempDir::new().map_err(|e| format!("cannot create a temporary directory for helm: {e}"))?;
    let args = prepare(&tmp.path)?;
    run_helm(command, &args, &tmp.path.join("helm"), &tmp.path)
}

/// Runs helm with kustomize's environment (`runHelmCommand`: `HELM_CONFIG_HOME`, and the
/// cache and data homes below it) and returns its stdout; a failure carries its stderr.
fn run_helm(
    command: &str,
    args: &[String],
    config_home: &Path,
    tmp: &Path,
) -> std::result::Result<Vec<u8>, String> {
    // Shown: paths below the working directory relative, the temporary directory as `<tmp>`.
    let shown: Vec<String> = args
        .iter()
        .map(|a| match Path::new(a).strip_prefix(tmp) {
            Ok(rest) => format!("<tmp>/{}", rest.display()),
            Err(_) if Path::new(a).is_absolute() => crate::source::display_path(Path::new(a)),
            Err(_) => a.clone(),
        })
        .collect();
    let shown = shown.join(" ");
    let home = config_home.to_string_lossy();
    let output = Command::new(command)
        .args(args)
        .env("HELM_CONFIG_HOME", &*home)
        .env("HELM_CACHE_HOME", format!("{home}/.cache"))
        .env("HELM_DATA_HOME", format!("{home}/.data"))
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("unable to run '{command} {shown}': {e} (is '{command}' installed? set it with --helm-command)"))?;
    if output.status.success() {
        return Ok(output.stdout);
    }
    Err(super::exec::failed(
        &format!("'{command} {shown}'"),
        &output,
    ))
}

/// `checkHelmVersion`: the first `v?N(.N)+` of `helm version --short` must be 3.x (or, with
/// `helm4`, for kustomize v5.8, 3.x or 4.x).
fn check_version(out: &str, helm4: bool) -> std::result::Result<(), String> {
    let re = regex::Regex::new(r"v?\d+(\.\d+)+").expect("valid pattern");
    let Some(m) = re.find(out) else {
        return Err(format!("cannot find version string in {out}"));
    };
    let v = m.as_str().trim_start_matches('v');
    let major = v.split('.').next();
    if helm4 && !matches!(major, Some("3" | "4")) {
        return Err(format!("this plugin requires helm V3 or V4 but got v{v}"));
    }
    if !helm4 && major != Some("3") {
        return Err(format!("this plugin requires helm V3 but got v{v}"));
    }
    Ok(())
}

/// kyaml's `merge2.Merge(src, dest)` on values: maps merge key by key, `src` winning; a null in
/// `src` removes the key; lists and scalars from `src` replace `dest`'s.
fn merge_values(dest: Node, src: &Node) -> Node {
    match (dest, src) {
        (Node::Map(mut d), Node::Map(s)) => {
            for (k, v) in s {
                if v.is_null() {
                    d.shift_remove(k);
                    continue;
                }
                let merged = match d.shift_remove_entry(k) {
                    Some((_, old)) => merge_values(old, v),
                    None => v.clone(),
                };
                d.insert(k.clone(), merged);
            }
            Node::Map(d)
        }
        (_, s) => s.clone(),
    }
}

/// A temporary directory for the values file and helm's homes, removed when dropped (as
/// kustomize's `cleanup`).
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        use std::time::{SystemTime, UNIX_EPOCH};
        let base = std::env::temp_dir();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for attempt in 0..100u32 {
            let path = base.join(format!(
                "ply-helm-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("no free temporary directory name"))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_check_wants_helm_3() {
        assert!(check_version("v3.16.2+g13654a5", false).is_ok());
        assert!(check_version("v4.0.1+g13654a5", true).is_ok());
        assert!(check_version("v4.0.1+g13654a5", false).is_err());
        assert!(check_version("v3.16.2+g13654a5", true).is_ok());
        assert_eq!(
            check_version("v2.17.0+ga690bad", false).unwrap_err(),
            "this plugin requires helm V3 but got v2.17.0"
        );
        assert!(check_version("no version", true).is_err());
    }

    #[test]
    fn merge_src_wins_and_null_removes() {
        let dest = crate::yaml::parse::parse_one("a: 1\nm: {x: 1, y: 2}\nl: [1, 2]\n").unwrap();
        let src = crate::yaml::parse::parse_one("m: {y: 3, x: null}\nl: [9]\nb: 2\n").unwrap();
        let got = merge_values(dest, &src);
        let want = crate::yaml::parse::parse_one("a: 1\nm: {y: 3}\nl: [9]\nb: 2\n").unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn template_args_follow_kustomize_order() {
        let chart = HelmChart {
            name: "c".into(),
            namespace: "ns".into(),
            name_template: "t".into(),
            api_versions: vec!["v1".into()],
            kube_version: "1.30".into(),
            include_crds: true,
            skip_tests: true,
            skip_hooks: true,
            debug: true,
            ..HelmChart::default()
        };
        let args = template_args(
            &chart,
            Path::new("/k/charts/c"),
            Path::new("/t/c-kustomize-values.yaml"),
            &[PathBuf::from("/k/more.yaml")],
        );
        assert_eq!(
            args.join(" "),
            "template --generate-name /k/charts/c --namespace ns --name-template t -f /t/c-kustomize-values.yaml -f /k/more.yaml --api-versions v1 --kube-version 1.30 --include-crds --skip-tests --no-hooks --debug"
        );
    }
}
