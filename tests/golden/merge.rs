//! Golden cases of `ply patch` under `testdata/merge/<case>/`: the input files, an optional
//! `args` file (the arguments after `ply patch`, one per line; default `object.yaml
//! --patch-file patch.yaml`), and either `expected.yaml` (stdout, exit 0) or
//! `expected-error.txt` (stderr, exit 1); `expected-stderr.txt`, when present, is the stderr of
//! a success (warnings). The binary runs in the case directory. Expectations were checked
//! against `kubectl patch --local -f object.yaml --type … --patch-file patch.yaml -o yaml` when
//! written (`tools/check_merge_golden.py` does it again); the `kubectl-*` cases use kubectl's
//! own flags and are kubectl's output for the same arguments, byte for byte.

use std::process::Command;

use crate::support::{Failures, cases};

#[test]
fn merge_golden_cases() {
    let all = cases("merge");
    let mut failures = Failures::default();
    for case in &all {
        let args: Vec<String> = match std::fs::read_to_string(case.join("args")) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(_) => vec![
                "object.yaml".into(),
                "--patch-file".into(),
                "patch.yaml".into(),
            ],
        };
        let out = Command::new(env!("CARGO_BIN_EXE_ply"))
            .arg("patch")
            .args(&args)
            .current_dir(case)
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .output()
            .unwrap_or_else(|e| panic!("running ply: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let error_file = case.join("expected-error.txt");
        let wants_error = error_file.exists();
        match (wants_error, out.status.code()) {
            (true, Some(1)) => failures.check(case, &error_file, &stderr),
            (false, Some(0)) => {
                failures.check(case, &case.join("expected.yaml"), &stdout);
                let stderr_file = case.join("expected-stderr.txt");
                if stderr_file.exists() || !stderr.is_empty() {
                    failures.check(case, &stderr_file, &stderr);
                }
            }
            (_, code) => failures.fail(format!(
                "{}: exit status {code:?} (expected {})\nstdout:\n{stdout}\nstderr:\n{stderr}",
                case.display(),
                if wants_error { 1 } else { 0 }
            )),
        }
    }
    failures.finish("merge", all.len());
}
