//! kubectl apply's three-way strategic patch: last-applied, desired and live documents, NUL
//! between them; the two-way patch too. A result or an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::merge::threeway;
use ply::Schema;

#[path = "common.rs"]
mod common;

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let Some(d) = common::docs(data, 3) else {
        return;
    };
    let schema = Schema::builtin();
    let gvk = common::gvk(&d[1]);
    let _ = threeway::create(&d[0], &d[1], &d[2], &schema, &gvk, true);
    let _ = threeway::create(&d[0], &d[1], &d[2], &schema, &gvk, false);
    let _ = threeway::create_two_way(&d[0], &d[1], &schema, &gvk);
}));
