//! The one place the command line turns its flags into render options: what every command
//! that renders shares (the load restrictor, the kustomize version, `kustomize build`'s flags,
//! the limits), then what the command itself adds.

use std::sync::Arc;

use crate::render::{OutputOrder, Reading, RenderOptions, Shared};

use super::{FetchArgs, RenderArgs, RenderFlags, Reorder};

/// A command that renders, with its flags.
#[derive(Clone, Copy)]
pub(crate) enum RenderUse<'a> {
    /// `ply render`: its output order, strictness, reading, cache, managed-by value, output
    /// limit and provenance comments.
    Render(&'a RenderArgs),
    /// The desired side of `ply diff --live`: the kustomization's own order, warnings (not
    /// `--strict`).
    Live(&'a RenderFlags),
    /// Both sides of a review (`ply diff --base`, `OLD NEW`, a kustomize upgrade): as
    /// [`RenderUse::Live`], and the files both revisions and all overlays hold alike are
    /// parsed once.
    Review(&'a RenderFlags),
    /// `ply explain`: as [`RenderUse::Live`], with field provenance.
    Explain(&'a RenderFlags),
    /// `ply fetch`, which renders to find the remote bases: its version and load restrictor.
    Fetch(&'a FetchArgs),
}

/// The render options of `command`.
pub(crate) fn render_options(command: RenderUse<'_>) -> RenderOptions {
    let mut opts = RenderOptions::default();
    match command {
        RenderUse::Render(args) => {
            shared_flags(&args.render, &mut opts);
            opts.reorder = match args.reorder {
                None => OutputOrder::Unspecified,
                Some(Reorder::Legacy) => OutputOrder::Legacy,
                Some(Reorder::None) => OutputOrder::None,
            };
            opts.strict = args.strict;
            opts.reading = match (args.single_thread, args.read_ahead_first) {
                (true, _) => Reading::OneThread,
                (false, true) => Reading::AheadFirst,
                (false, false) => Reading::Ahead,
            };
            opts.cache_dir = args.cache_dir.clone();
            opts.managed_by_value = args.managed_by_value.clone();
            opts.limits.output_size = args.output_limit.max_output_size;
            opts.provenance = args.provenance.is_some();
        }
        RenderUse::Live(flags) => shared_flags(flags, &mut opts),
        RenderUse::Review(flags) => {
            shared_flags(flags, &mut opts);
            opts.shared = Some(Arc::new(Shared::default()));
        }
        RenderUse::Explain(flags) => {
            shared_flags(flags, &mut opts);
            opts.provenance = true;
        }
        RenderUse::Fetch(args) => {
            opts.kustomize = args.version.version();
            opts.load_restrictor = args.load_restrictor.into();
        }
    }
    opts
}

/// The flags `ply render`, `ply diff` and `ply explain` take alike.
fn shared_flags(flags: &RenderFlags, opts: &mut RenderOptions) {
    let RenderFlags {
        load_restrictor,
        version,
        build,
        limits,
    } = flags;
    opts.kustomize = version.version();
    opts.load_restrictor = (*load_restrictor).into();
    opts.helm = build.helm();
    opts.managed_by_label = build.managed_by_label();
    opts.plugins = build.plugins();
    opts.limits = limits.limits();
}
