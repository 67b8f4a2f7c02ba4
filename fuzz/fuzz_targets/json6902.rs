//! JSON 6902 operations on a document: the document, NUL, the operations. A result or an
//! error, never a panic, and never unbounded growth (the operations' limit).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::merge::json6902;

#[path = "common.rs"]
mod common;

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let Some(d) = common::docs(data, 2) else {
        return;
    };
    if let Ok(n) = json6902::apply(&d[0], &d[1]) {
        let _ = ply::yaml::emit_documents([&n], ply::yaml::EmitOptions::default());
    }
}));
