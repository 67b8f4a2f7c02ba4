//! The command line: clap's derive types, turned into validated options for the engines, and
//! the dispatch that runs one command and reports its outcome. Owns no rendering or merging.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::diag::{Error, ErrorKind, Warnings, exit};

#[derive(Parser, Debug)]
#[command(
    name = "ply",
    version,
    about = "Render kustomizations exactly as kustomize does, offline and fast; patch objects; predict what kubectl apply would change.",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build a kustomization directory into multi-document YAML (like `kustomize build`).
    #[command(
        alias = "build",
        after_help = "Examples:\n  ply render overlays/prod > out.yaml\n  ply render overlays/prod | kubectl apply -f -\n  ply render overlays/prod -o out.yaml\n  ply render overlays/prod --output-dir out/\n  ply render . --load-restrictor LoadRestrictionsNone"
    )]
    Render(RenderArgs),
    /// Apply a patch to objects locally (like `kubectl patch --local -o yaml`), compute
    /// two-way patches, or preview kubectl apply's three-way merge.
    #[command(
        after_help = "Examples:\n  ply patch deploy.yaml -p '{\"spec\":{\"replicas\":3}}'\n  ply patch deploy.yaml --patch patch.yaml --type merge\n  ply patch live.yaml --last-applied old.yaml --desired new.yaml\n  ply patch --from old.yaml --to new.yaml"
    )]
    Patch(PatchArgs),
    /// Predict what `kubectl apply` would change against a live snapshot, and show it.
    #[command(
        after_help = "Examples:\n  kubectl get deploy,svc,cm -n prod -o yaml > live.yaml\n  ply diff overlays/prod --live live.yaml\n  ply diff overlays/prod --live live.yaml --server-side --format markdown"
    )]
    Diff(DiffArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LoadRestrictor {
    #[value(name = "LoadRestrictionsRootOnly")]
    RootOnly,
    #[value(name = "LoadRestrictionsNone")]
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Reorder {
    /// kustomize's legacy kind order (Namespaces first, webhooks last).
    Legacy,
    /// Keep the order in which resources were read.
    None,
}

#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// The kustomization directory.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Write the output to FILE (atomically: a failed render leaves no file behind).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "output_dir"
    )]
    pub output: Option<PathBuf>,
    /// Write one file per resource into DIR, named as `kustomize build -o DIR` names them.
    #[arg(long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Whether files outside the kustomization root may be read.
    #[arg(long, value_enum, default_value = "LoadRestrictionsRootOnly")]
    pub load_restrictor: LoadRestrictor,
    /// Order of the output documents (overridden by a kustomization's `sortOptions`).
    #[arg(long, value_enum)]
    pub reorder: Option<Reorder>,
    /// Turn warnings about patches that match nothing into errors.
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
}

#[derive(clap::Args, Debug)]
pub struct PatchArgs {
    /// The object(s) to patch (YAML or JSON; `-` reads stdin). With --last-applied and
    /// --desired: the live object.
    pub file: Option<PathBuf>,
    /// A file holding the patch (YAML or JSON; `-` reads stdin).
    #[arg(long = "patch", value_name = "PATCHFILE", conflicts_with = "inline")]
    pub patch_file: Option<PathBuf>,
    /// The patch itself, inline (JSON or YAML).
    #[arg(short = 'p', value_name = "PATCH")]
    pub inline: Option<String>,
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PatchType {
    Strategic,
    Merge,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    Kubectl,
    Kustomize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Unified,
    Summary,
    Json,
    Markdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// A kustomization directory (rendered as `ply render` renders it), a YAML or JSON file,
    /// or `-` for stdin.
    pub desired: PathBuf,
    /// What `kubectl get -o yaml|json` printed: one object, a List, or a multi-document stream.
    #[arg(long, value_name = "SNAPSHOT")]
    pub live: PathBuf,
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
    /// Show metadata.managedFields in the diff.
    #[arg(long)]
    pub show_managed_fields: bool,
    /// Show Secret values instead of masking them.
    #[arg(long)]
    pub show_secrets: bool,
    /// Also write the predicted objects (full, with managedFields) as multi-document YAML.
    #[arg(long, value_name = "FILE")]
    pub output_merged: Option<PathBuf>,
    /// Whether files outside the kustomization root may be read (DESIRED a directory).
    #[arg(long, value_enum, default_value = "LoadRestrictionsRootOnly")]
    pub load_restrictor: LoadRestrictor,
}

/// Parses the command line, runs the command, prints warnings and errors on stderr, and returns
/// the process exit code.
pub fn run() -> i32 {
    let cli = Cli::parse();
    let mut warnings = Warnings::default();
    // Snippets of `ply diff` inputs mask Secret values, as its output does.
    let show = crate::snippet::ShowOptions {
        mask_secrets: matches!(&cli.command, Command::Diff(args) if !args.show_secrets),
    };
    let (result, error_code) = match cli.command {
        Command::Render(args) => (run_render(&args, &mut warnings), exit::FAILURE),
        Command::Patch(args) => (run_patch(&args, &mut warnings), exit::FAILURE),
        Command::Diff(args) => match run_diff(&args, &mut warnings) {
            Ok(code) => {
                print_warnings(&warnings);
                return code;
            }
            Err(e) => (Err(e), exit::DIFF_ERROR),
        },
    };
    print_warnings(&warnings);
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            report(e, show);
            error_code
        }
    }
}

fn print_warnings(warnings: &Warnings) {
    let mut err = std::io::stderr().lock();
    for w in warnings.messages() {
        let _ = writeln!(err, "Warning: {w}");
    }
}

/// Renders an error once, with miette, on stderr: colours and Unicode on a terminal (unless
/// `NO_COLOR` is set), otherwise plain ASCII at a fixed width, so that logs and the golden
/// tests see the same text on every machine.
pub fn report(e: Error, show: crate::snippet::ShowOptions) {
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

fn run_render(args: &RenderArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use crate::build::{OutputOrder, Reading, RenderOptions};
    use crate::fs::Restrictor;
    use crate::output::{Target, write};
    let opts = RenderOptions {
        load_restrictor: match args.load_restrictor {
            LoadRestrictor::RootOnly => Restrictor::RootOnly,
            LoadRestrictor::None => Restrictor::None,
        },
        reorder: match args.reorder {
            None => OutputOrder::Unspecified,
            Some(Reorder::Legacy) => OutputOrder::Legacy,
            Some(Reorder::None) => OutputOrder::None,
        },
        strict: args.strict,
        reading: match (args.single_thread, args.read_ahead_first) {
            (true, _) => Reading::OneThread,
            (false, true) => Reading::AheadFirst,
            (false, false) => Reading::Ahead,
        },
    };
    let target = match (&args.output, &args.output_dir) {
        (_, Some(dir)) => Target::Dir(dir.clone()),
        // kustomize writes one file per resource when `-o` names an existing directory.
        (Some(path), None) if path.is_dir() => Target::Dir(path.clone()),
        (Some(path), None) => Target::File(path.clone()),
        (None, None) => Target::Stdout,
    };
    let rendered = crate::build::render_with(
        &crate::fs::CachingDiskFs::default(),
        &args.dir,
        &opts,
        warnings,
    )?;
    let tables = &rendered.tables;
    // A closed pipe (`Written::PipeClosed`) is a quiet success, like a complete write.
    write(&rendered.resources, &target, &|g| {
        tables.is_cluster_scoped(g)
    })?;
    // The process ends after this: freeing every parsed node one by one would only cost time
    // (docs/performance.md), the operating system reclaims the memory at once.
    std::mem::forget(rendered);
    Ok(())
}

fn run_patch(args: &PatchArgs, _warnings: &mut Warnings) -> Result<(), Error> {
    use crate::patch_cmd::{PatchKind, PatchOptions, PatchRequest, PatchSource};
    let usage = |m: &str| Error::new(ErrorKind::Usage, m.to_string());
    let request = if let (Some(from), Some(to)) = (&args.from, &args.to) {
        if args.file.is_some() || args.patch_file.is_some() || args.inline.is_some() {
            return Err(usage("--from/--to takes no FILE and no patch"));
        }
        PatchRequest::TwoWay {
            from: from.clone(),
            to: to.clone(),
        }
    } else if let (Some(last), Some(desired)) = (&args.last_applied, &args.desired) {
        let live = args
            .file
            .clone()
            .ok_or_else(|| usage("three-way mode needs FILE, the live object"))?;
        if args.patch_file.is_some() || args.inline.is_some() {
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
        let file = args
            .file
            .clone()
            .ok_or_else(|| usage("give FILE and a patch (--patch PATCHFILE or -p PATCH)"))?;
        let patch = match (&args.patch_file, &args.inline) {
            (Some(p), None) => PatchSource::File(p.clone()),
            (None, Some(t)) => PatchSource::Inline(t.clone()),
            _ => return Err(usage("give a patch: --patch PATCHFILE or -p PATCH")),
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
    })?;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::new(ErrorKind::Io, format!("stdout: {e}"))),
    }
}

fn run_diff(args: &DiffArgs, warnings: &mut Warnings) -> Result<i32, Error> {
    use std::io::IsTerminal;

    use crate::diff::{self, DiffOptions, Mode, Prune, Selector, adapters, engine::Engines};

    let read_text = crate::fs::read_input;

    if args.desired.as_os_str() == "-" && args.live.as_os_str() == "-" {
        return Err(Error::new(
            ErrorKind::Usage,
            "DESIRED and --live cannot both read stdin",
        ));
    }
    if args.prune && args.selector.is_none() && !args.prune_all {
        // kubectl's rule: pruning everything must be asked for explicitly.
        return Err(Error::new(
            ErrorKind::Usage,
            "--prune needs a label selector (-l) or --prune-all",
        ));
    }
    let selector = args.selector.as_deref().map(Selector::parse).transpose()?;
    let mode = if args.server_side {
        Mode::ServerSide {
            force_conflicts: args.force_conflicts,
        }
    } else {
        Mode::ClientSide
    };
    let field_manager = args.field_manager.clone().unwrap_or_else(|| {
        if args.server_side {
            "kubectl".into()
        } else {
            "kubectl-client-side-apply".into()
        }
    });
    let opts = DiffOptions {
        mode,
        field_manager,
        namespace: args.namespace.clone(),
        prune: match (&selector, args.prune, args.prune_all) {
            (_, false, _) => Prune::Off,
            (_, true, true) => Prune::All,
            (Some(s), true, false) => Prune::Selector(s.clone()),
            (None, true, false) => Prune::Off,
        },
        show_managed_fields: args.show_managed_fields,
        show_secrets: args.show_secrets,
    };

    // The kustomization's `crds:` files describe custom kinds for the schema.
    let (mut desired, crd_definitions) = if args.desired.is_dir() {
        let render_opts = crate::build::RenderOptions {
            load_restrictor: match args.load_restrictor {
                LoadRestrictor::RootOnly => crate::fs::Restrictor::RootOnly,
                LoadRestrictor::None => crate::fs::Restrictor::None,
            },
            reorder: crate::build::OutputOrder::Unspecified,
            strict: false,
            reading: crate::build::Reading::Ahead,
        };
        let rendered =
            crate::build::render_with(&crate::fs::DiskFs, &args.desired, &render_opts, warnings)?;
        (rendered.resources, rendered.crds)
    } else {
        (
            crate::live::read_objects(&read_text(&args.desired)?)?,
            Vec::new(),
        )
    };
    let live = crate::live::read_objects(&read_text(&args.live)?)?;
    crate::live::check_snapshot(&live)?;

    // Custom kinds: `crds:` definitions, then the CustomResourceDefinitions installed (live)
    // and those being applied (desired, before the selector filters them), later ones winning.
    let mut builtin = adapters::Builtin::new();
    let crd_objects = live
        .iter()
        .chain(desired.iter())
        .map(|r| &r.node)
        .filter(|n| adapters::is_crd(n));
    for doc in crd_definitions.iter().chain(crd_objects) {
        builtin.add_custom_schema(doc)?;
    }
    if let Some(s) = &selector {
        desired.retain(|r| s.matches(&r.node));
    }
    let engines = Engines {
        kinds: &builtin,
        csa: &builtin,
        ssa: &builtin,
    };
    let report = diff::diff(desired, live, &opts, engines, warnings)?;

    if let Some(path) = &args.output_merged {
        let text = crate::yaml::emit_documents(
            report.merged_objects(),
            crate::yaml::EmitOptions::default(),
        );
        crate::output::write_atomic(path, text.as_bytes())?;
    }

    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let text = match args.format {
        DiffFormat::Unified => diff::format::unified(&report, color),
        DiffFormat::Summary => diff::format::summary(&report),
        DiffFormat::Json => diff::format::json_report(&report),
        DiffFormat::Markdown => diff::format::markdown(&report),
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Ok(exit::OK);
        }
        return Err(Error::io(std::path::Path::new("<stdout>"), &e));
    }
    drop(out);
    let mut err = std::io::stderr().lock();
    for m in report.conflict_messages() {
        let _ = writeln!(err, "error: {m}");
    }
    if matches!(args.format, DiffFormat::Unified | DiffFormat::Summary) {
        let _ = writeln!(err, "note: {}", diff::OFFLINE_NOTE);
    }
    Ok(report.exit_code())
}
