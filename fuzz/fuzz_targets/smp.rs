//! The strategic merge patch (kubectl's and kustomize's options): an object and a patch, NUL
//! between them. A result or an error, never a panic; the result emits.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::merge::{SmpOptions, smp};
use ply::Schema;

#[path = "common.rs"]
mod common;

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let Some(d) = common::docs(data, 2) else {
        return;
    };
    let schema = Schema::builtin();
    let gvk = common::gvk(&d[0]);
    for opts in [SmpOptions::kubectl(), SmpOptions::kustomize()] {
        if let Ok(n) = smp::apply(&d[0], &d[1], &schema, &gvk, &opts) {
            let _ = ply::yaml::emit_documents([&n], ply::yaml::EmitOptions::default());
        }
    }
}));
