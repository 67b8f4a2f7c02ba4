//! `testdata/yaml/<case>/`: `input.yaml` parsed and emitted again must equal `expected.yaml`
//! byte for byte. `expected.yaml` is what `kubectl kustomize` prints for a kustomization that
//! lists `input.yaml` (regenerate and verify with `tools/yaml-oracle.sh [--check]`), except in
//! cases with a `NOTE.md`, which explains how and why ply deliberately differs (kustomize's own
//! output is then kept in `kustomize.out`).

use ply::yaml::{EmitOptions, emit_documents, parse_documents};

use crate::support::{Failures, cases};

#[test]
fn yaml_golden_cases() {
    let cases = cases("yaml");
    let mut failures = Failures::default();
    for case in &cases {
        let input_path = case.join("input.yaml");
        let input = match std::fs::read_to_string(&input_path) {
            Ok(text) => text,
            Err(e) => {
                failures.fail(format!("{}: {e}", input_path.display()));
                continue;
            }
        };
        let actual = match parse_documents(&input) {
            Ok(docs) => emit_documents(
                docs.iter().filter(|d| !d.node.is_null()).map(|d| &d.node),
                EmitOptions::default(),
            ),
            Err(e) => match e.offset {
                Some(offset) => format!("error at byte {offset}: {}\n", e.message),
                None => format!("error: {}\n", e.message),
            },
        };
        failures.check(case, &case.join("expected.yaml"), &actual);
    }
    failures.finish("yaml", cases.len());
}
