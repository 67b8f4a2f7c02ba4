//! The command line: clap's derive types, turned into validated options for the engines, and
//! the dispatch that runs one command and reports its outcome. Owns no rendering or merging.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::diag::{Error, ErrorKind, Warnings, exit};

mod about;
mod argo;
mod build_flags;
mod diff;
mod error_format;
mod gitops;
mod many;
mod render_options;
mod review;
pub(crate) use about::Shell;
pub(crate) use build_flags::BuildFlags;
pub(crate) use error_format::ErrorFormat;
use render_options::{RenderUse, render_options};

#[derive(Parser, Debug)]
#[command(
    name = "ply",
    version,
    about = "Render kustomizations exactly as kustomize does, offline and fast; patch objects; predict what kubectl apply would change.",
    after_help = "Exit status: 0 success; 1 failure or a wrong command line (for `ply diff`: 1 changes, 2 errors). `ply COMMAND --help` says more.",
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// How errors and warnings are printed on stderr: human (a report with the source),
    /// github (GitHub Actions `::error file=…,line=…::` annotations), json (one object per line).
    #[arg(long, value_enum, global = true, default_value = "human")]
    pub error_format: ErrorFormat,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Build a kustomization directory into multi-document YAML (like `kustomize build`).
    #[command(
        visible_alias = "build",
        after_help = "Examples:\n  ply render overlays/prod > out.yaml\n  ply render overlays/prod | kubectl apply -f -\n  ply render overlays/prod -o out.yaml\n  ply render overlays/prod --output-dir out/\n  ply render . --load-restrictor LoadRestrictionsNone\n  ply render . --enable-helm\n\nExit status: 0 rendered; 1 the render failed (a diagnostic on stderr) or the command line is wrong."
    )]
    Render(RenderArgs),
    /// Apply a patch to objects locally (like `kubectl patch --local -o yaml`), compute
    /// two-way patches, or preview kubectl apply's three-way merge.
    #[command(
        after_help = "Examples:\n  ply patch deploy.yaml -p '{\"spec\":{\"replicas\":3}}'\n  ply patch --local -f deploy.yaml --type merge --patch-file patch.yaml -o json\n  ply patch live.yaml --last-applied old.yaml --desired new.yaml\n  ply patch --from old.yaml --to new.yaml\n\nExit status: 0 patched; 1 the patch failed or the command line is wrong."
    )]
    Patch(PatchArgs),
    /// Show what a change does to the rendered output (two revisions, two directories or
    /// files), or predict what `kubectl apply` would change against a live snapshot.
    #[command(
        after_help = "Examples:\n  ply diff --base main --all                      # every overlay, merge base of main vs the working tree\n  ply diff --base origin/main --all --changed-only --format markdown\n  ply diff --base HEAD~1 overlays/prod\n  ply diff old/overlays/prod new/overlays/prod   # two directories (or rendered YAML files)\n  kubectl get deploy,svc,cm -n prod -o yaml > live.yaml\n  ply diff overlays/prod --live live.yaml\n  ply diff overlays/prod --live live.yaml --server-side --format markdown\n\nExit status: 0 no changes; 1 changes; 2 an error (an overlay that fails to render at the head, a bad revision), server-side apply conflicts, or a wrong command line (kubectl diff's rule)."
    )]
    Diff(DiffArgs),
    /// Fetch the remote bases (git URLs) and remote files (HTTP(S) URLs) of a kustomization
    /// into the cache and pin them in `ply.lock` next to it. The only command that uses the
    /// network.
    #[command(
        after_help = "Examples:\n  ply fetch overlays/prod            # then commit overlays/prod/ply.lock\n  ply fetch overlays/prod --update   # move every ref to what it names today\n  ply fetch . --cache-dir .ply-cache # a cache directory CI can restore\n  ply fetch --all                    # CI: what every ply.lock under . pins\n  ply fetch --revision origin/main --all  # the locks at a revision, for a review's base\n\nExit status: 0 every remote base fetched and the lock written (with --all or --revision: every pinned one in the cache); 1 an error (an unreachable repository, a missing ref or directory, a file the server refuses or that is too large, a timeout, a changed cache, a wrong command line)."
    )]
    Fetch(FetchArgs),
    /// Say where each value of a render was set: for a field, its value and the chain of
    /// places (resource file, patches, transformers, generators) that set it, newest first;
    /// for an object, every field an overlay changed (docs/explain.md).
    #[command(
        after_help = "Examples:\n  ply explain overlays/prod Deployment/web spec.template.spec.containers[0].image\n  ply explain overlays/prod Deployment/prod/web\n  ply explain overlays/prod --format json\n\nExit status: 0 explained; 1 the render failed, no such object or field, or a wrong command line."
    )]
    Explain(ExplainArgs),
    /// GitOps: list the repository's Flux Kustomizations and how each source resolves
    /// (docs/gitops.md).
    #[command(
        after_help = "Examples:\n  ply gitops list\n  ply gitops list --source GitRepository/flux-system/podinfo=../podinfo\n\nExit status: 0 listed; 1 an error."
    )]
    Gitops {
        #[command(subcommand)]
        command: gitops::GitopsCommand,
    },
    /// Print ply's version and commit, and the kustomize version it renders like.
    #[command(after_help = "Exit status: 0.")]
    Version,
    /// Print a shell completion script: `source <(ply completion bash)`.
    #[command(
        after_help = "Examples:\n  source <(ply completion bash)\n  ply completion zsh > \"${fpath[1]}/_ply\"\n  ply completion fish > ~/.config/fish/completions/ply.fish\n  ply completion powershell | Out-String | Invoke-Expression\n\nExit status: 0; 1 for an unknown shell."
    )]
    Completion {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: Shell,
    },
}

#[derive(clap::Args, Debug)]
pub(crate) struct ExplainArgs {
    /// The kustomization directory.
    pub dir: PathBuf,
    /// The object: KIND/NAME or KIND/NAMESPACE/NAME (every object when left out).
    pub object: Option<String>,
    /// The field path (`spec.replicas`, `spec.template.spec.containers[0].image`); a map or
    /// list path explains every field under it. Left out: the fields an overlay changed.
    pub field: Option<String>,
    /// text, or json (schema in docs/explain.md).
    #[arg(long, value_enum, default_value = "text")]
    pub format: ExplainFormat,
    /// Every field, also those the resource files set and nothing changed.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub render: RenderFlags,
}

/// `ply explain --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExplainFormat {
    Text,
    Json,
}

#[derive(clap::Args, Debug)]
pub(crate) struct FetchArgs {
    /// The kustomization directory (its `ply.lock` is written there; default: the current
    /// directory).
    pub dir: Option<PathBuf>,
    /// Fetch what every `ply.lock` under the current directory pins, at the locked commits
    /// (no render, no lock written): the remote bases of every root, as CI needs them.
    #[arg(long, conflicts_with = "dir")]
    pub all: bool,
    /// Fetch what the lock files at the git revision REF pin (DIR's, or every one with
    /// --all), read from the repository without a checkout; no lock is written. A review
    /// (`ply diff --base REF`) reads each side's locks from that side.
    #[arg(long, value_name = "REF")]
    pub revision: Option<String>,
    /// Resolve every ref again and move the lock, instead of keeping the locked commits.
    #[arg(long, conflicts_with_all = ["all", "revision"])]
    pub update: bool,
    /// Write DIR/ply.lock, pinning every remote base and file to what was fetched (without
    /// it, `ply fetch` writes no lock: a root without one reads what the fetch recorded).
    #[arg(long, conflicts_with_all = ["all", "revision"])]
    pub write_lock: bool,
    /// The cache of fetched trees (default: $PLY_CACHE_DIR, else $XDG_CACHE_HOME/ply/remote,
    /// else ~/.cache/ply/remote).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Whether files outside the kustomization root may be read (as for render).
    #[arg(long, value_enum, default_value = "LoadRestrictionsRootOnly")]
    pub load_restrictor: LoadRestrictor,
    /// How long the download of one HTTP(S) file may take in all, in seconds (git clones take
    /// theirs from the URL's `?timeout=`).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub http_timeout: u64,
    #[command(flatten)]
    pub version: VersionFlag,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LoadRestrictor {
    #[value(name = "LoadRestrictionsRootOnly")]
    RootOnly,
    #[value(name = "LoadRestrictionsNone")]
    None,
}

impl From<LoadRestrictor> for crate::fs::Restrictor {
    fn from(r: LoadRestrictor) -> Self {
        match r {
            LoadRestrictor::RootOnly => crate::fs::Restrictor::RootOnly,
            LoadRestrictor::None => crate::fs::Restrictor::None,
        }
    }
}

/// `--kustomize-version` (or `PLY_KUSTOMIZE_VERSION`): the kustomize release to render as,
/// a flag of `ply render`, `ply diff` and `ply fetch`.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct VersionFlag {
    /// The kustomize release whose output to match: 5.8.1 (kubectl 1.36 and 1.37, Argo CD,
    /// Flux), 5.7.1 (kubectl 1.34 and 1.35), 5.6.0 (kubectl 1.33) or 5.5.0 (kubectl 1.32); or
    /// the kubectl release whose kustomize to match, as kubectl-1.34.
    #[arg(
        long = "kustomize-version",
        env = "PLY_KUSTOMIZE_VERSION",
        value_name = "VERSION",
        value_parser = crate::render::KustomizeVersion::parse
    )]
    pub kustomize_version: Option<crate::render::KustomizeVersion>,
}

impl VersionFlag {
    /// The version asked for, or the default.
    pub(crate) fn version(&self) -> crate::render::KustomizeVersion {
        self.kustomize_version.unwrap_or_default()
    }
}

/// The flags of a render that `ply render`, `ply diff` and `ply explain` take alike (declared
/// once here, flattened into each): the load restrictor, the kustomize version, `kustomize
/// build`'s flags and the limits.
#[derive(clap::Args, Debug)]
pub(crate) struct RenderFlags {
    /// Whether files outside the kustomization root may be read.
    #[arg(long, value_enum, default_value = "LoadRestrictionsRootOnly")]
    pub load_restrictor: LoadRestrictor,
    #[command(flatten)]
    pub version: VersionFlag,
    #[command(flatten)]
    pub build: BuildFlags,
    #[command(flatten)]
    pub limits: crate::limits::LimitFlags,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Reorder {
    /// kustomize's legacy kind order (Namespaces first, webhooks last).
    Legacy,
    /// Keep the order in which resources were read.
    None,
}

#[derive(clap::Args, Debug)]
pub(crate) struct RenderArgs {
    /// The kustomization directory. Several (or --all) render in one run, on every core, each
    /// shared file parsed once; they need --output-dir OUT, and each goes to the one file
    /// OUT/<DIR>.yaml (OUT/root.yaml for `.`), byte for byte what `ply render DIR` prints.
    #[arg(value_name = "DIR", default_value = ".")]
    pub dirs: Vec<PathBuf>,
    /// Render every kustomization root under DIR (default: .): each kustomization that no
    /// other one includes, components left out. Needs --output-dir (or --list). Ends with
    /// an account on stderr: each failure (its kustomization and first diagnostic), then
    /// "48 rendered, 17 failed (16 need `ply fetch`, 1 missing file)".
    #[arg(long)]
    pub all: bool,
    /// With --all: print the roots, one per line, and do nothing else.
    #[arg(long)]
    pub list: bool,
    /// Write the output to FILE (atomically: a failed render leaves no file behind).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "output_dir"
    )]
    pub output: Option<PathBuf>,
    /// Write one file per resource into DIR, named as `kustomize build -o DIR` names them.
    /// With several DIRs (or --all): one file per kustomization, OUT/<DIR>.yaml.
    #[arg(long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// With several DIRs (or --all): write each kustomization as one file per resource into
    /// OUT/<DIR>/ (OUT itself for `.`), as `ply render DIR --output-dir OUT/<DIR>` writes it,
    /// instead of one file OUT/<DIR>.yaml.
    #[arg(long, requires = "output_dir")]
    pub per_resource: bool,
    /// Order of the output documents (overridden by a kustomization's `sortOptions`).
    #[arg(long, value_enum)]
    pub reorder: Option<Reorder>,
    /// Turn warnings about patches that match nothing into errors, and refuse values ply
    /// prints where kustomize fails or prints otherwise (docs/compatibility.md).
    /// Also set by `PLY_STRICT=1` (`0`, `false`, `no`, `off` or empty leave it off).
    #[arg(long, env = "PLY_STRICT", action = clap::ArgAction::SetTrue, value_parser = clap::builder::FalseyValueParser::new())]
    pub strict: bool,
    /// Read and parse every file on the building thread, without reading ahead on a second
    /// thread (the output is the same; for measuring and for machines with one core).
    /// Also set by `PLY_SINGLE_THREAD=1`.
    #[arg(long, env = "PLY_SINGLE_THREAD", action = clap::ArgAction::SetTrue, value_parser = clap::builder::FalseyValueParser::new())]
    pub single_thread: bool,
    /// Let the second thread read everything before the build goes on (for tests: the build
    /// then takes every file from it).
    #[arg(long, hide = true, conflicts_with = "single_thread")]
    pub read_ahead_first: bool,
    /// Where `ply fetch` cached the remote bases that `ply.lock` pins (default: as for fetch).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// The value `buildMetadata: [managedByLabel]` gives the label
    /// app.kubernetes.io/managed-by (default: what that kubectl writes: `kustomize-v5.8.1`
    /// for kustomize 5.8.1, `kustomize-(devel)` for 5.5.0; so that switching tools does not
    /// relabel live objects).
    #[arg(long, value_name = "VALUE")]
    pub managed_by_value: Option<String>,
    #[command(flatten)]
    pub render: RenderFlags,
    #[command(flatten)]
    pub output_limit: crate::limits::OutputFlag,
    /// Write where each value was set as a trailing YAML comment (`comments`; docs/explain.md).
    /// Never the default: the output then differs from kustomize's.
    #[arg(long, value_enum, value_name = "HOW", conflicts_with = "output_dir")]
    pub provenance: Option<ProvenanceOutput>,
    #[command(flatten)]
    pub argo: argo::ArgoFlags,
    /// Render a Flux Kustomization (NAMESPACE/NAME in the repository holding DIR, or a file
    /// holding one) as kustomize-controller applies it (docs/gitops.md).
    #[arg(long, value_name = "NS/NAME|FILE", conflicts_with_all = ["all", "output_dir", "provenance"])]
    pub flux_kustomization: Option<String>,
    /// With --flux-kustomization: print each object as one line of compact JSON (keys
    /// sorted), the form the controller sends to the API server.
    #[arg(long, requires = "flux_kustomization")]
    pub json_lines: bool,
    #[command(flatten)]
    pub gitops: gitops::GitopsFlags,
}

/// `ply render --provenance=…`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProvenanceOutput {
    /// Each value's origin (file:line:column and step) as a trailing comment.
    Comments,
}

#[derive(clap::Args, Debug)]
pub(crate) struct PatchArgs {
    /// The object(s) to patch (YAML or JSON; `-` reads stdin). With --last-applied and
    /// --desired: the live object.
    #[arg(conflicts_with = "filename")]
    pub file: Option<PathBuf>,
    /// The object(s) to patch, as kubectl names them (same as FILE).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filename: Option<PathBuf>,
    /// The patch itself (JSON or YAML), as kubectl's `-p/--patch`. Deprecated fallback: a
    /// value that is a plain word naming an existing file is read as that file, with a warning
    /// (use --patch-file).
    #[arg(
        short = 'p',
        long = "patch",
        value_name = "PATCH",
        conflicts_with = "patch_file"
    )]
    pub patch: Option<String>,
    /// A file holding the patch (YAML or JSON; `-` reads stdin).
    #[arg(long = "patch-file", value_name = "FILE")]
    pub patch_file: Option<PathBuf>,
    /// Accepted for kubectl's command lines: ply always patches locally.
    #[arg(long)]
    pub local: bool,
    /// Output format of the patched objects.
    #[arg(short = 'o', long = "output", value_enum, default_value = "yaml")]
    pub output: PatchOutput,
    /// The kind of patch.
    #[arg(long = "type", value_enum, default_value = "strategic")]
    pub patch_type: PatchType,
    /// An OpenAPI v2 document (JSON or YAML) with merge keys for the objects' kinds.
    #[arg(long, value_name = "SCHEMA")]
    pub openapi: Option<PathBuf>,
    /// Three-way mode: the last-applied configuration.
    #[arg(long, value_name = "ORIGINAL", requires = "desired")]
    pub last_applied: Option<PathBuf>,
    /// Three-way mode: the desired configuration.
    #[arg(long, value_name = "MODIFIED", requires = "last_applied")]
    pub desired: Option<PathBuf>,
    /// Three-way mode: print the patch instead of the patched object.
    #[arg(long)]
    pub print_patch: bool,
    /// Three-way mode: with `--overwrite=false`, fail when the patch changes a field the live
    /// object changed since the last apply (kubectl apply's `--overwrite`).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub overwrite: bool,
    /// Whose strategic-merge rules to follow: kubectl's (default) or kustomize's (patch
    /// elements first, no `$setElementOrder`/`$retainKeys`/`$deleteFromPrimitiveList`), to
    /// preview how a kustomization patch lands.
    #[arg(long, value_enum, default_value = "kubectl")]
    pub dialect: DialectArg,
    /// Two-way mode: the original object.
    #[arg(long, value_name = "ORIGINAL", requires = "to")]
    pub from: Option<PathBuf>,
    /// Two-way mode: the modified object.
    #[arg(long, value_name = "MODIFIED", requires = "from")]
    pub to: Option<PathBuf>,
    #[command(flatten)]
    pub growth: crate::limits::GrowthFlag,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum PatchType {
    Strategic,
    Merge,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum PatchOutput {
    Yaml,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum DialectArg {
    Kubectl,
    Kustomize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum DiffFormat {
    Unified,
    Summary,
    Json,
    Markdown,
    /// One self-contained HTML page (every section collapsible, no size budget).
    Html,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(clap::Args, Debug)]
pub(crate) struct DiffArgs {
    /// With --live: DESIRED, a kustomization directory (rendered as `ply render` renders it),
    /// a YAML or JSON file, or `-` for stdin. With --base: the kustomization directories to
    /// compare (globs allowed). Otherwise: OLD NEW, two kustomization directories or rendered
    /// YAML files.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// What `kubectl get -o yaml|json` printed: one object, a List, or a multi-document stream.
    #[arg(long, value_name = "SNAPSHOT")]
    pub live: Option<PathBuf>,
    #[command(flatten)]
    pub review: review::ReviewArgs,
    /// How `--gitops` finds the targets' sources and variables.
    #[command(flatten)]
    pub gitops: gitops::GitopsFlags,
    /// Output form.
    #[arg(long, value_enum, default_value = "unified")]
    pub format: DiffFormat,
    /// Colours in the unified diff (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Namespace for namespaced desired objects without one.
    #[arg(short = 'n', long, default_value = "default")]
    pub namespace: String,
    /// Predict server-side apply instead of client-side apply.
    #[arg(long)]
    pub server_side: bool,
    /// Field manager (default: kubectl-client-side-apply, or kubectl with --server-side).
    #[arg(long, value_name = "NAME")]
    pub field_manager: Option<String>,
    /// With --server-side: take ownership of conflicting fields instead of failing.
    #[arg(long, requires = "server_side")]
    pub force_conflicts: bool,
    /// The snapshot holds every object of the cluster: an object absent from it is created,
    /// whatever its namespace (by default an object of a namespace the snapshot holds nothing
    /// of is not compared, unless the snapshot holds no namespaced object or lists Namespace
    /// objects).
    #[arg(long)]
    pub assume_complete: bool,
    /// Show live objects absent from DESIRED as deletions (needs -l or --prune-all).
    #[arg(long)]
    pub prune: bool,
    /// Label selector: only desired objects matching it are applied, and with --prune only
    /// live objects matching it are pruned (as kubectl apply -l).
    #[arg(
        short = 'l',
        long,
        value_name = "SELECTOR",
        conflicts_with = "prune_all"
    )]
    pub selector: Option<String>,
    /// With --prune: prune every live object absent from DESIRED (kubectl's --all).
    #[arg(long, requires = "prune")]
    pub prune_all: bool,
    /// Show a change of the last-applied-configuration annotation in full (by default one
    /// line says it was updated).
    #[arg(long)]
    pub show_last_applied: bool,
    /// Show metadata.managedFields in the diff.
    #[arg(long)]
    pub show_managed_fields: bool,
    /// Show Secret values instead of masking them.
    #[arg(long)]
    pub show_secrets: bool,
    /// Also write the predicted objects (full, with managedFields) as multi-document YAML.
    #[arg(long, value_name = "FILE")]
    pub output_merged: Option<PathBuf>,
    #[command(flatten)]
    pub render: RenderFlags,
}

/// Parses the command line, runs the command, prints warnings and errors on stderr, and returns
/// the process exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let mut warnings = Warnings::default();
    let format = cli.error_format;
    // Snippets of `ply diff` inputs mask Secret values, as its output does.
    let show = crate::snippet::ShowOptions {
        mask_secrets: matches!(&cli.command, Command::Diff(args) if !args.show_secrets),
    };
    let (result, error_code) = match cli.command {
        Command::Render(args) => match run_render(&args, format, &mut warnings) {
            // Several kustomizations: their account is written, each failure in it.
            Ok(Some(code)) => return code,
            Ok(None) => (Ok(()), exit::FAILURE),
            Err(e) => (Err(e), exit::FAILURE),
        },
        Command::Patch(args) => (run_patch(&args, &mut warnings), exit::FAILURE),
        Command::Fetch(args) => (run_fetch(&args, &mut warnings), exit::FAILURE),
        Command::Explain(args) => (run_explain(&args, &mut warnings), exit::FAILURE),
        Command::Gitops {
            command: gitops::GitopsCommand::List(args),
        } => (
            gitops::list(&args, &mut warnings).and_then(|t| print_stdout(t.as_bytes())),
            exit::FAILURE,
        ),
        Command::Gitops {
            command: gitops::GitopsCommand::Render(args),
        } => (
            gitops::render_all(&args, &mut warnings).and_then(|t| print_stdout(t.as_bytes())),
            exit::FAILURE,
        ),
        Command::Version => (
            print_stdout(about::version_text().as_bytes()),
            exit::FAILURE,
        ),
        Command::Completion { shell } => (print_stdout(&about::completion(shell)), exit::FAILURE),
        Command::Diff(args) => match diff::run(&args, format, &mut warnings) {
            Ok(code) => {
                print_warnings(&warnings, format);
                return code;
            }
            Err(e) => (Err(e), exit::DIFF_ERROR),
        },
    };
    print_warnings(&warnings, format);
    match result {
        Ok(()) => exit::OK,
        Err(e) if format == ErrorFormat::Human => {
            report(e, show);
            error_code
        }
        Err(e) => {
            let _ = write!(
                std::io::stderr().lock(),
                "{}",
                error_format::error(&e, format)
            );
            error_code
        }
    }
}

/// Prints clap's message (help and version on stdout) and returns the exit code: 0 for help
/// and version; for usage errors 1, as `kustomize build`, `kubectl kustomize` and `kubectl
/// patch` exit, except `ply diff`, whose 1 means "changes" (kubectl diff's rule), so 2.
fn usage_error(e: &clap::Error) -> i32 {
    use clap::error::ErrorKind as K;
    let _ = e.print();
    match e.kind() {
        K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand
            if e.exit_code() == 0 =>
        {
            exit::OK
        }
        _ if std::env::args().nth(1).as_deref() == Some("diff") => exit::DIFF_ERROR,
        _ => exit::FAILURE,
    }
}

fn print_warnings(warnings: &Warnings, format: ErrorFormat) {
    let mut err = std::io::stderr().lock();
    for w in warnings.messages() {
        let _ = match format {
            ErrorFormat::Human => writeln!(err, "Warning: {w}"),
            _ => write!(err, "{}", error_format::warning(w, format)),
        };
    }
}

/// Renders an error once, with miette, on stderr: colours and Unicode on a terminal (unless
/// `NO_COLOR` is set), otherwise plain ASCII at a fixed width, so that logs and the golden
/// tests see the same text on every machine.
pub(crate) fn report(e: Error, show: crate::snippet::ShowOptions) {
    use std::io::IsTerminal;
    let fancy = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = write!(
        std::io::stderr().lock(),
        "{}",
        render_error_with(&e, fancy, show)
    );
}

/// The text of a diagnostic as `report` prints it.
pub fn render_error(e: &Error, fancy: bool) -> String {
    render_error_with(e, fancy, crate::snippet::ShowOptions::default())
}

/// [`render_error`] with snippets shown as `show` says (see [`crate::snippet`]): clipped
/// around the span on long lines, never quoting a file marked so, masking Secret values.
pub fn render_error_with(e: &Error, fancy: bool, show: crate::snippet::ShowOptions) -> String {
    use miette::{GraphicalReportHandler, GraphicalTheme};
    let handler = if fancy {
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode())
    } else {
        GraphicalReportHandler::new_themed(GraphicalTheme::none()).with_width(100)
    };
    let mut out = String::new();
    if handler
        .render_report(&mut out, &crate::snippet::Shown::new(e, show))
        .is_err()
    {
        out = e.plain();
        out.push('\n');
    }
    out
}

/// `ply render`; with several kustomizations (or `--all`), `Some` exit code once their
/// warnings and account are written on stderr (the account last).
fn run_render(
    args: &RenderArgs,
    format: ErrorFormat,
    warnings: &mut Warnings,
) -> Result<Option<i32>, Error> {
    if args.list {
        if !args.all {
            return Err(Error::new(
                ErrorKind::Usage,
                "--list lists the roots --all would render: give --all with it",
            ));
        }
        print_stdout(many::list(&args.dirs)?.as_bytes())?;
        return Ok(Some(exit::OK));
    }
    use crate::output::{Target, write_rendered};
    let opts = render_options(RenderUse::Render(args));
    args.render
        .build
        .deprecations(args.reorder.is_some(), warnings);
    let target = match (&args.output, &args.output_dir) {
        (_, Some(dir)) => Target::Dir(dir.clone()),
        // kustomize writes one file per resource when `-o` names an existing directory.
        (Some(path), None) if path.is_dir() => Target::Dir(path.clone()),
        (Some(path), None) => Target::File(path.clone()),
        (None, None) => Target::Stdout,
    };
    if let Some(spec) = &args.argo.argo_application {
        let [dir] = args.dirs.as_slice() else {
            return Err(Error::new(
                ErrorKind::Usage,
                "--argo-application renders from one repository: give one DIR (its root)",
            ));
        };
        let rendered = argo::render_application(
            spec,
            dir,
            &args.argo,
            &args.gitops.repo_urls,
            opts.clone(),
            warnings,
        )?;
        write_rendered(
            &rendered.resources,
            &rendered.tables,
            &target,
            opts.limits.output_size,
        )?;
        return Ok(None);
    }
    if let Some(which) = &args.flux_kustomization {
        let dir = args
            .dirs
            .first()
            .map_or(std::path::Path::new("."), |d| d.as_path());
        let objects = gitops::render_flux(which, dir, &args.gitops, opts, warnings)?;
        return write_objects(&objects, args.json_lines, &target).map(|()| None);
    }
    let dir = match args.dirs.as_slice() {
        [dir] if !args.all => dir,
        _ => {
            let Some(out) = &args.output_dir else {
                return Err(Error::new(
                    ErrorKind::Usage,
                    "several kustomizations (or --all) are written with --output-dir OUT, each to OUT/<DIR>.yaml",
                ));
            };
            let layout = if args.per_resource {
                many::Layout::PerResource
            } else {
                many::Layout::OneFile
            };
            let planned = many::kustomizations(&args.dirs, args.all, out, layout)?;
            let tally = many::render_all(&planned, &opts, warnings);
            print_warnings(&std::mem::take(warnings), format);
            let _ = write!(std::io::stderr().lock(), "{}", tally.account(format));
            return Ok(Some(if tally.failed.is_empty() {
                exit::OK
            } else {
                exit::FAILURE
            }));
        }
    };
    let rendered =
        crate::render::render_with(&crate::fs::CachingDiskFs::default(), dir, &opts, warnings)?;
    if args.provenance == Some(ProvenanceOutput::Comments) {
        let text = crate::explain::with_comments(&rendered.resources);
        match &target {
            Target::File(path) => crate::output::write_atomic(path, text.as_bytes())?,
            _ => print_stdout(text.as_bytes())?,
        }
        return Ok(None);
    }
    // A closed pipe (`Written::PipeClosed`) is a quiet success, like a complete write.
    write_rendered(
        &rendered.resources,
        &rendered.tables,
        &target,
        opts.limits.output_size,
    )?;
    // The process ends after this: freeing every parsed node one by one would only cost time
    // (docs/performance.md), the operating system reclaims the memory at once.
    std::mem::forget(rendered);
    Ok(None)
}

fn run_explain(args: &ExplainArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let opts = render_options(RenderUse::Explain(&args.render));
    let disk = crate::fs::CachingDiskFs::default();
    let rec = crate::fs::record::Recording::new(&disk);
    let rendered = crate::render::render_with(&rec, &args.dir, &opts, warnings)?;
    let query = crate::explain::Query {
        object: args.object.clone(),
        field: args.field.clone(),
        all: args.all,
    };
    // The files the render read, for an object not in it (what deleted it).
    let mut read = || crate::explain::texts(&disk, rec.paths());
    let fields = crate::explain::explain(&rendered.resources, &query, &mut read)?;
    let written =
        print_stdout(crate::explain::write(&fields, args.format == ExplainFormat::Json).as_bytes());
    // The process ends after this, as after `ply render` (`run_render`): the rendered objects
    // and their provenance are left to the operating system instead of freed one by one.
    drop(fields);
    std::mem::forget(rendered);
    written
}

fn run_fetch(args: &FetchArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use crate::fetch::{FetchOptions, describe, fetch};
    let cache = args
        .cache_dir
        .clone()
        .or_else(crate::fs::remote::default_cache_dir)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Usage,
                "no cache directory: set HOME or XDG_CACHE_HOME, or pass --cache-dir DIR",
            )
        })?;
    let opts = FetchOptions {
        cache,
        update: args.update,
        write_lock: args.write_lock,
        http: crate::fetch::http::Limits {
            timeout: std::time::Duration::from_secs(args.http_timeout),
            ..crate::fetch::http::Limits::default()
        },
        render: render_options(RenderUse::Fetch(args)),
    };
    if args.all || args.revision.is_some() {
        return run_fetch_pinned(args, &opts, warnings);
    }
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let report = fetch(&dir, &opts, warnings)?;
    let _ = write!(std::io::stderr().lock(), "{}", describe(&report));
    Ok(())
}

/// `ply fetch --all` and `ply fetch --revision REF [DIR | --all]`: what the locks pin.
fn run_fetch_pinned(
    args: &FetchArgs,
    opts: &crate::fetch::FetchOptions,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    use crate::fs::Fs;
    use crate::remote::lock::LOCK_FILE;
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Error::io(std::path::Path::new("."), &e))?;
    let git;
    let (fs, files, label): (&dyn Fs, Vec<PathBuf>, Option<String>) = match &args.revision {
        Some(rev) => {
            let repo = crate::fs::git::Repo::discover(&cwd)?;
            let revision = repo.resolve(rev)?;
            git = repo.files_at(&revision)?;
            let label = git.label().to_string();
            (&git, git.files(), Some(label))
        }
        None => {
            let files = crate::fs::files_under(&cwd).map_err(|e| Error::io(&cwd, &e))?;
            (&crate::fs::DiskFs, files, None)
        }
    };
    let lock_paths: Vec<PathBuf> = if args.all {
        files
            .iter()
            .filter(|f| f.starts_with(&cwd) && f.file_name() == Some(LOCK_FILE.as_ref()))
            .cloned()
            .collect()
    } else {
        let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        vec![crate::fs::normalize(&cwd.join(dir)).join(LOCK_FILE)]
    };
    let mut locks = Vec::new();
    let mut unlocked = Vec::new();
    for path in lock_paths {
        match crate::fs::remote::read_lock(fs, &path)? {
            Some(lock) => locks.push((path, lock)),
            None if !args.all => unlocked.extend(path.parent().map(PathBuf::from)),
            None => {}
        }
    }
    if args.all {
        // Every root without a lock: its remote bases at the refs their URLs name.
        let under: Vec<PathBuf> = files.into_iter().filter(|f| f.starts_with(&cwd)).collect();
        let dirs = crate::render::roots::kustomization_dirs(&under);
        let roots = crate::render::roots::roots(fs, &dirs, None);
        unlocked.extend(
            roots
                .into_iter()
                .filter(|r| fs.kind(&r.join(LOCK_FILE)).is_none()),
        );
    }
    let reports = crate::fetch::fetch_pinned(&locks, opts)?;
    let fresh = crate::fetch::fetch_unlocked(fs, &unlocked, opts, warnings)?;
    let mut said = crate::fetch::describe_pinned(&reports, label.as_deref());
    said.push_str(&crate::fetch::describe_unlocked(&fresh, label.as_deref()));
    if reports.is_empty() && fresh.is_empty() {
        said.push_str("no remote bases or files found: nothing to fetch\n");
    }
    let _ = write!(std::io::stderr().lock(), "{said}");
    Ok(())
}

fn run_patch(args: &PatchArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use crate::patch_cmd::{PatchKind, PatchOptions, PatchRequest, PatchSource};
    let usage = |m: &str| Error::new(ErrorKind::Usage, m.to_string());
    let file = args.file.clone().or_else(|| args.filename.clone());
    let has_patch = args.patch_file.is_some() || args.patch.is_some();
    let request = if let (Some(from), Some(to)) = (&args.from, &args.to) {
        if file.is_some() || has_patch {
            return Err(usage("--from/--to takes no FILE and no patch"));
        }
        PatchRequest::TwoWay {
            from: from.clone(),
            to: to.clone(),
        }
    } else if let (Some(last), Some(desired)) = (&args.last_applied, &args.desired) {
        let live = file.ok_or_else(|| usage("three-way mode needs FILE, the live object"))?;
        if has_patch {
            return Err(usage("--last-applied/--desired takes no patch"));
        }
        PatchRequest::ThreeWay {
            live,
            last_applied: last.clone(),
            desired: desired.clone(),
            print_patch: args.print_patch,
            overwrite: args.overwrite,
        }
    } else {
        let file = file.ok_or_else(|| {
            usage("give the object (FILE or -f FILE) and a patch (-p PATCH or --patch-file FILE)")
        })?;
        let patch = match (&args.patch_file, &args.patch) {
            (Some(p), None) => PatchSource::File(p.clone()),
            (None, Some(t)) => crate::patch_cmd::patch_argument(t, warnings),
            _ => return Err(usage("give a patch: -p PATCH or --patch-file FILE")),
        };
        // Standard input can be read once: the second reader would see nothing.
        if file.as_os_str() == "-" && matches!(&patch, PatchSource::File(p) if p.as_os_str() == "-")
        {
            return Err(usage("FILE and --patch cannot both read stdin"));
        }
        if args.print_patch {
            return Err(usage("--print-patch needs --last-applied and --desired"));
        }
        PatchRequest::Apply {
            file,
            patch,
            kind: match args.patch_type {
                PatchType::Strategic => PatchKind::Strategic,
                PatchType::Merge => PatchKind::Merge,
                PatchType::Json => PatchKind::Json,
            },
        }
    };
    let text = crate::patch_cmd::run(&PatchOptions {
        request,
        openapi: args.openapi.clone(),
        dialect: match args.dialect {
            DialectArg::Kubectl => crate::merge::Dialect::Kubectl,
            DialectArg::Kustomize => crate::merge::Dialect::Kustomize,
        },
        json: args.output == PatchOutput::Json,
        json_patch_growth: args.growth.max_json_patch_growth,
    })?;
    print_stdout(text.as_bytes())
}

/// Writes a GitOps render: YAML documents, or one JSON object per line.
fn write_objects(
    objects: &[crate::resource::Resource],
    json_lines: bool,
    target: &crate::output::Target,
) -> Result<(), Error> {
    use crate::yaml::json::{JsonStyle, write_json};
    if !json_lines {
        crate::output::write(objects, target, &|_| false, usize::MAX)?;
        return Ok(());
    }
    let mut text = String::new();
    for o in objects {
        write_json(&mut text, &o.node, JsonStyle::COMPACT);
        text.push('\n');
    }
    match target {
        crate::output::Target::File(path) => crate::output::write_atomic(path, text.as_bytes()),
        _ => print_stdout(text.as_bytes()),
    }
}

/// Writes to stdout; a closed pipe is a quiet success.
fn print_stdout(bytes: &[u8]) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::new(ErrorKind::Io, format!("stdout: {e}"))),
    }
}

/// Whether `ply diff` writes GitHub annotations for the overlays a change breaks: with
/// `--error-format github`, or when running in GitHub Actions (`GITHUB_ACTIONS=true`, which
/// every Actions step has).
fn annotate(format: ErrorFormat) -> bool {
    format == ErrorFormat::Github || std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}
