//! The YAML reader: any bytes → documents (`Node`) or a located error; what it reads must
//! also emit (both readings: kustomize's objects and its own configuration files), and every
//! error must render as a diagnostic without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::SourceFile;
use ply::testing as parse;

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let file = match SourceFile::from_bytes("/f/in.yaml", data.to_vec()) {
        Ok(f) => f,
        Err(e) => {
            ply::testing::render_error(&ply::Error::from(e), false);
            return;
        }
    };
    for yaml11 in [false, true] {
        let parsed = if yaml11 {
            parse::parse_config_documents(&file.text)
        } else {
            parse::parse_documents(&file.text)
        };
        match parsed {
            Ok(docs) => {
                let nodes: Vec<_> = docs.into_iter().map(|d| d.node).collect();
                let _ = ply::yaml::emit_documents(nodes.iter(), ply::yaml::EmitOptions::default());
            }
            Err(e) => {
                let err = ply::Error::new(ply::ErrorKind::Yaml, e.message).at_opt(
                    e.offset.map(|o| {
                        ply::Location::new(file.clone(), o.min(file.text.len()), 1)
                    }),
                );
                ply::testing::render_error(&err, false);
            }
        }
    }
}));
