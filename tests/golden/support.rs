//! Shared helpers for the golden tests: locating `testdata/`, comparing with expectations,
//! blessing, and collecting every mismatch before failing once.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `testdata/<area>` in the repository.
pub fn testdata(area: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(area)
}

/// The case directories directly under `testdata/<area>`, sorted. Fails when there are none,
/// so that a missing directory cannot pass silently.
pub fn cases(area: &str) -> Vec<PathBuf> {
    let dir = testdata(area);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no golden cases under {}", dir.display());
    out
}

/// The extra arguments in a case's optional `args` file, split at white space (none when the
/// file is absent).
pub fn case_args(case: &Path) -> Vec<String> {
    std::fs::read_to_string(case.join("args"))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

pub fn blessing() -> bool {
    std::env::var_os("PLY_BLESS").is_some_and(|v| v != "0")
}

/// Collects mismatches across all cases of an area.
#[derive(Default)]
pub struct Failures(Vec<String>);

impl Failures {
    /// Compares `actual` with the file `expected_path`; under `PLY_BLESS=1` writes it instead.
    pub fn check(&mut self, case: &Path, expected_path: &Path, actual: &str) {
        if blessing() {
            std::fs::write(expected_path, actual)
                .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
            return;
        }
        match std::fs::read_to_string(expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => self.0.push(format!(
                "{}: {} differs\n{}",
                case.display(),
                expected_path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy(),
                unified(&expected, actual)
            )),
            Err(e) => self.0.push(format!(
                "{}: cannot read {}: {e} (run with PLY_BLESS=1 to create it)",
                case.display(),
                expected_path.display()
            )),
        }
    }

    pub fn fail(&mut self, message: String) {
        self.0.push(message);
    }

    /// Panics with every mismatch, if any.
    pub fn finish(self, area: &str, count: usize) {
        assert!(
            self.0.is_empty(),
            "{} of {count} {area} golden cases failed:\n\n{}",
            self.0.len(),
            self.0.join("\n\n")
        );
    }
}

/// A small line diff for failure messages.
pub fn unified(expected: &str, actual: &str) -> String {
    let mut out = String::new();
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let n = e.len().max(a.len());
    for i in 0..n {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("-{:4} {x}\n", i + 1));
                }
                if let Some(y) = y {
                    out.push_str(&format!("+{:4} {y}\n", i + 1));
                }
            }
        }
    }
    out
}
