//! `ply diff` on a desired and a live document (NUL between them), client-side and
//! server-side: a report or an error (rendered as a diagnostic, Secret values masked), never a
//! panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::diff::{self, DiffOptions, Mode, Prune, adapters, engine::Engines};
use ply::SourceFile;

#[path = "common.rs"]
mod common;

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let parts = common::parts(data);
    let text = |i: usize| parts.get(i).cloned().unwrap_or_default();
    let show = ply::testing::ShowOptions { mask_secrets: true };
    let report = |e: ply::Error| {
        let _ = ply::testing::render_error_with(&e, false, show);
    };
    let desired = match ply::testing::read_objects(&SourceFile::new("/d.yaml", text(0))) {
        Ok(d) => d,
        Err(e) => return report(e),
    };
    let live = match ply::testing::read_objects(&SourceFile::new("/l.yaml", text(1))) {
        Ok(l) => l,
        Err(e) => return report(e),
    };
    for server_side in [false, true] {
        let mut builtin = adapters::Builtin::new();
        let mut ok = true;
        for r in live.iter().chain(desired.iter()) {
            if adapters::is_crd(&r.node) && builtin.add_custom_schema(&r.node).is_err() {
                ok = false;
            }
        }
        if !ok {
            continue;
        }
        let engines = Engines {
            kinds: &builtin,
            csa: &builtin,
            ssa: &builtin,
        };
        let opts = DiffOptions {
            mode: if server_side {
                Mode::ServerSide {
                    force_conflicts: false,
                }
            } else {
                Mode::ClientSide
            },
            field_manager: "kubectl".into(),
            namespace: "default".into(),
            prune: Prune::Off,
            show_managed_fields: false,
            show_secrets: false,
            show_last_applied: false,
            assume_complete: false,
        };
        let mut warnings = ply::Warnings::default();
        match diff::diff(desired.clone(), live.clone(), &opts, engines, &mut warnings) {
            Ok(r) => {
                let _ = ply::testing::unified_live(&r, false);
                let _ = ply::testing::json_live(&r);
            }
            Err(e) => report(e),
        }
    }
}));
