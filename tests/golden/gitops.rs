//! Golden cases of Flux rendering: every directory under `testdata/gitops/flux/` is a
//! repository (not a git one: its root is the case directory) holding `ks.yaml`, one Flux
//! Kustomization whose source is the bootstrap source, the tree it builds, an optional
//! `vars.yaml` (given with `--vars`) and `args` (more flags). `ply render
//! --flux-kustomization ks.yaml --json-lines .` must print `expected.jsonl`, or fail with the
//! diagnostic in `expected.err`; the YAML form must print `expected.yaml`. A case with a
//! `target` file instead is a repository of clusters: the Kustomization it names
//! (`NS/NAME[@DIR]`) is rendered so, and `ply gitops list` must print `expected.list`. A case
//! with neither is a `ply gitops list` case only. Every expectation is checked
//! against kustomize-controller's own library functions by `tools/check_flux_goldens.py`
//! (`tools/flux-oracle`), in `.ci/run`.

use std::path::Path;
use std::process::Command;

use crate::support::{Failures, case_args, cases};

fn ply(cwd: &Path, args: &[String]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ply"))
        .current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("PLY_STRICT")
        .output()
        .unwrap_or_else(|e| panic!("running ply: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn flux_goldens() {
    let all = cases("gitops/flux");
    let mut failures = Failures::default();
    for case in &all {
        let extra = case_args(case);
        let target = std::fs::read_to_string(case.join("target"))
            .ok()
            .map(|t| t.trim().to_string());
        if !case.join("ks.yaml").is_file() {
            let mut args: Vec<String> = ["gitops", "list", ".", "--repo-root", "."]
                .iter()
                .map(|s| s.to_string())
                .collect();
            args.extend(extra.clone());
            let (ok, out, err) = ply(case, &args);
            if !ok {
                failures.fail(format!("{}: gitops list failed: {err}", case.display()));
            }
            failures.check(case, &case.join("expected.list"), &out);
            if target.is_none() {
                continue;
            }
        }
        let which = target.as_deref().unwrap_or("ks.yaml");
        let mut args: Vec<String> = [
            "render",
            "--flux-kustomization",
            which,
            ".",
            "--repo-root",
            ".",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if case.join("vars.yaml").is_file() {
            args.extend(["--vars".to_string(), "vars.yaml".to_string()]);
        }
        args.extend(extra);
        let (ok, yaml, err) = ply(case, &args);
        args.push("--json-lines".into());
        let (ok_json, json, err_json) = ply(case, &args);
        if ok != ok_json || err != err_json {
            failures.fail(format!(
                "{}: the YAML and JSON renders disagree on failing: {err} / {err_json}",
                case.display()
            ));
        }
        let expect_error = case.join("expected.err").is_file()
            || case
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("error-"));
        if expect_error {
            if ok {
                failures.fail(format!(
                    "{}: expected an error, rendered:\n{json}",
                    case.display()
                ));
            }
            failures.check(case, &case.join("expected.err"), &err);
        } else {
            if !ok {
                failures.fail(format!("{}: failed: {err}", case.display()));
            }
            failures.check(case, &case.join("expected.jsonl"), &json);
            failures.check(case, &case.join("expected.yaml"), &yaml);
        }
    }
    failures.finish("gitops/flux", all.len());
}
