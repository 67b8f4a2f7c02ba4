//! Server-side apply's field sets: fieldsV1 JSON text, and a live object's managedFields.
//! A set or an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::testing::ssa::Set;
use ply::testing::ssa::decode_managed_fields;

#[path = "common.rs"]
mod common;

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let text = String::from_utf8_lossy(data);
    if let Ok(set) = Set::from_fields_v1(&text) {
        let _ = set.paths();
    }
    if let Ok(node) = ply::testing::parse_one(&text) {
        let _ = Set::from_fields_node(&node);
        let _ = decode_managed_fields(&node);
    }
}));
