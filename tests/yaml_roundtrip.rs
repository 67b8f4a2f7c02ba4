//! Every `expected.yaml` of the kustomize conformance corpus (`../shared/conformance/kustomize/
//! cases/*/expected.yaml`, beside the repository) is kustomize output, so parsing it and
//! emitting it again must reproduce it byte for byte. Ignored by default because the corpus
//! lives outside the repository; CI runs it with
//! `cargo test --test yaml_roundtrip -- --ignored` when `../shared` exists. Run explicitly
//! without the corpus, it fails rather than passing on nothing.

use std::path::Path;

use ply::yaml::{EmitOptions, emit_documents, parse_documents};

#[test]
#[ignore = "needs ../shared/conformance (run with --ignored)"]
fn conformance_outputs_round_trip() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/kustomize/cases");
    let mut dirs: Vec<_> = std::fs::read_dir(&cases)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the conformance corpus is required)",
                cases.display()
            )
        })
        .filter_map(Result::ok)
        .map(|e| e.path().join("expected.yaml"))
        .filter(|p| p.is_file())
        .collect();
    dirs.sort();
    assert!(
        !dirs.is_empty(),
        "no expected.yaml under {}",
        cases.display()
    );
    let mut failures = Vec::new();
    for path in &dirs {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let actual = match parse_documents(&text) {
            Ok(docs) => emit_documents(
                docs.iter().filter(|d| !d.node.is_null()).map(|d| &d.node),
                EmitOptions::default(),
            ),
            Err(e) => format!("parse error: {e}"),
        };
        if actual != text {
            let first = text
                .lines()
                .zip(actual.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| text.lines().count().min(actual.lines().count()));
            failures.push(format!(
                "{}: differs at line {}\n  kustomize: {:?}\n  ply:       {:?}",
                path.display(),
                first + 1,
                text.lines().nth(first).unwrap_or("<end>"),
                actual.lines().nth(first).unwrap_or("<end>"),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} conformance outputs do not round-trip:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}
