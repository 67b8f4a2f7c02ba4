//! Argo CD Applications rendered as the repo server renders them: every directory under
//! `testdata/gitops/argo/` holds a repository (`repo/`) and `args` (the words after
//! `ply render repo`, double quotes group words). ply runs in the case directory (`NO_COLOR=1`);
//! a success prints `expected.yaml` exactly, a failure prints `expected.err` exactly on stderr
//! and nothing on stdout. Each case is also checked against the real kustomize by
//! `tools/argo_oracle.py check testdata/gitops/argo` (in `.ci/run`).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{Failures, cases};

#[test]
fn argo_application_cases() {
    let all = cases("gitops/argo");
    let mut failures = Failures::default();
    for case in &all {
        run_case(&mut failures, case);
    }
    failures.finish("gitops/argo", all.len());
}

/// Helm sources and an app-of-apps Helm chart (`testdata/gitops/argo-helm/`), rendered with
/// the real helm their `args` name (`--helm-command helm-3.19.0`). Not in the default run: a
/// bare machine has no helm; `.ci/run` builds helm v3.19.0 from the Go module proxy, then runs
/// this test (`cargo test --test golden argo_helm -- --ignored`) and checks every case against
/// the oracle (`tools/argo_oracle.py check testdata/gitops/argo-helm`).
#[test]
#[ignore = "needs helm 3.19.0 as helm-3.19.0 on PATH; .ci/run installs it and runs this"]
fn argo_helm_cases() {
    let all = cases("gitops/argo-helm");
    let mut failures = Failures::default();
    for case in &all {
        run_case(&mut failures, case);
    }
    failures.finish("gitops/argo-helm", all.len());
}

/// The words of `args`, split at white space outside double quotes.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

fn run_case(failures: &mut Failures, case: &Path) {
    let args = words(&std::fs::read_to_string(case.join("args")).unwrap_or_default());
    let out = Command::new(env!("CARGO_BIN_EXE_ply"))
        .current_dir(case)
        .args(["render", "repo"])
        .args(&args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running ply: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if case.join("expected.err").exists() {
        if out.status.success() || !stdout.is_empty() {
            failures.fail(format!(
                "{}: expected a failure, got success:\n{stdout}",
                case.display()
            ));
        }
        failures.check(case, &case.join("expected.err"), &stderr);
    } else if !out.status.success() {
        failures.fail(format!("{}: ply failed:\n{stderr}", case.display()));
    } else {
        failures.check(case, &case.join("expected.yaml"), &stdout);
    }
}
