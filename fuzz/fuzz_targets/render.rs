//! A render from an in-memory file system built from the input: NUL-separated parts, the
//! first is `/k/kustomization.yaml`, the others `/k/r0.yaml`, `/k/r1.yaml`, … (resources,
//! patches, generator files, as the kustomization names them), plus a base `/k/base/` holding
//! the same files. Output or an error (rendered as a diagnostic), never a panic or a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::render::{OutputOrder, Reading, RenderOptions, render_with};
use ply::fs::{MemFs, Restrictor};

#[path = "common.rs"]
mod common;

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let parts = common::parts(data);
    let mut fs = MemFs::new();
    for dir in ["/k", "/k/base"] {
        fs.dir(dir);
        for (i, p) in parts.iter().enumerate() {
            let name = if i == 0 {
                format!("{dir}/kustomization.yaml")
            } else {
                format!("{dir}/r{}.yaml", i - 1)
            };
            fs.file(name, p.as_bytes().to_vec());
        }
    }
    let opts = RenderOptions {
        load_restrictor: Restrictor::RootOnly,
        reorder: OutputOrder::Unspecified,
        strict: false,
        reading: Reading::OneThread,
        ..RenderOptions::default()
    };
    let mut warnings = ply::Warnings::default();
    match render_with(&fs, std::path::Path::new("/k"), &opts, &mut warnings) {
        Ok(r) => {
            let _ = ply::yaml::emit_documents(
                r.resources.iter().map(|r| &r.node),
                ply::yaml::EmitOptions::default(),
            );
        }
        Err(e) => {
            let _ = ply::testing::render_error(&e, false);
        }
    }
}));
