//! JSON merge patch (RFC 7386): a target, NUL, a patch; and the patch that turns one into the
//! other. Never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::merge::mergepatch;

#[path = "common.rs"]
mod common;

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let Some(d) = common::docs(data, 2) else {
        return;
    };
    let merged = mergepatch::apply(&d[0], &d[1]);
    let _ = ply::yaml::emit_documents([&merged], ply::yaml::EmitOptions::default());
    if let (Some(a), Some(b)) = (d[0].as_map(), d[1].as_map()) {
        let _ = mergepatch::create(a, b);
    }
}));
