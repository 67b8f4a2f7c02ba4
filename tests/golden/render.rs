//! Golden cases of `ply render`: every directory under `testdata/render/` holds a kustomization
//! tree in `input/`, an optional `args` file (extra flags and the directory to build, relative to
//! `input/`; default `.`), and either `expected.yaml` (stdout of a successful render, equal to
//! `kubectl kustomize` for the same input) or `expected_error.txt` (the full diagnostic on
//! stderr, rendered without colour). A successful render's stderr (warnings) is compared with
//! `expected_stderr.txt` when either is non-empty. The examples under `examples/` are golden
//! cases too: every non-component kustomization there renders to
//! `testdata/examples/<its path>/expected.yaml`.
//!
//! `testdata/bin` comes first on `PATH`: it holds the stand-in `helm` of the `helm-*` cases.
//! `KUSTOMIZE_PLUGIN_HOME` is `testdata/plugins`, the legacy exec plugins of `plugin-exec-*`.
//!
//! Every case renders as each kustomize version ply matches (`--kustomize-version 5.8.1`,
//! `5.7.1`, `5.6.0` and `5.5.0`): the expectation files of the case directory hold for all,
//! unless a subdirectory named for a version (`v5.5.0/`, `v5.7.1/`, `v5.8.1/`) holds that
//! version's own; v5.6.0, which renders as v5.5.0, takes `v5.6.0/`, else `v5.5.0/`. A case
//! whose `args` name a version renders as that one only. Each expectation was checked
//! against its version's oracle (`tools/check_render_goldens.py`, run by CI).
//!
//! Every case renders three ways as the default version, which must all give the expected
//! bytes: as usual (a second thread reads files ahead of the build), with `--single-thread`,
//! and with the hidden `--read-ahead-first` (the build takes every file from the reader
//! thread); the other version renders the usual way.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Failures, blessing, case_args, cases, testdata};

struct Outcome {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn ply(cwd: &Path, args: &[String]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_ply"))
        .current_dir(cwd)
        .arg("render")
        .args(args)
        .env("NO_COLOR", "1")
        .env("PATH", stand_in_path())
        .env("KUSTOMIZE_PLUGIN_HOME", testdata("plugins"))
        .env_remove("KUSTOMIZE_ENABLE_MANAGEDBY_LABEL")
        .env_remove("PLY_STRICT")
        .env_remove("PLY_SINGLE_THREAD")
        .output()
        .unwrap_or_else(|e| panic!("running ply: {e}"));
    Outcome {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `PATH` with `testdata/bin` first: its `helm` is the stand-in the helm cases run (it records
/// its arguments and values; `kubectl kustomize --enable-helm` ran the same script for the
/// expected outputs).
fn stand_in_path() -> std::ffi::OsString {
    let bin = testdata("bin");
    let mut paths = vec![bin];
    if let Some(p) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(paths).unwrap_or_else(|e| panic!("PATH: {e}"))
}

/// Compares one render with the expectations in `expect_dir`.
fn check(failures: &mut Failures, case: &Path, cwd: &Path, args: &[String], expect_dir: &Path) {
    let out = ply(cwd, args);
    let expected_yaml = expect_dir.join("expected.yaml");
    let expected_error = expect_dir.join("expected_error.txt");
    let expected_stderr = expect_dir.join("expected_stderr.txt");
    if out.ok {
        if expected_error.exists() && !blessing() {
            failures.fail(format!(
                "{}: expected an error, but the render succeeded:\n{}",
                case.display(),
                out.stdout
            ));
            return;
        }
        failures.check(case, &expected_yaml, &out.stdout);
        if !out.stderr.is_empty() || expected_stderr.exists() {
            failures.check(case, &expected_stderr, &out.stderr);
        }
    } else {
        if expected_yaml.exists() && !blessing() {
            failures.fail(format!(
                "{}: expected success, but the render failed:\n{}",
                case.display(),
                out.stderr
            ));
            return;
        }
        failures.check(case, &expected_error, &out.stderr);
    }
}

/// The flags of the three ways of reading files.
const READINGS: [&[&str]; 3] = [&[], &["--single-thread"], &["--read-ahead-first"]];

/// The kustomize versions every case renders as; the first is ply's default.
const VERSIONS: [&str; 4] = ["5.8.1", "5.7.1", "5.6.0", "5.5.0"];

/// Where the expectations of `case` rendered as `version` are: `case/v<version>/` when the
/// case has one (for 5.6.0, else `case/v5.5.0/`), else the case directory.
fn expectations(case: &Path, version: &str) -> PathBuf {
    let mut own = vec![format!("v{version}")];
    if version == "5.6.0" {
        own.push("v5.5.0".into());
    }
    own.iter()
        .map(|v| case.join(v))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| case.to_path_buf())
}

#[test]
fn render_cases() {
    let all = cases("render");
    let mut failures = Failures::default();
    for case in &all {
        let args = case_args(case);
        let named = args.iter().any(|a| a == "--kustomize-version");
        for (n, version) in VERSIONS.iter().enumerate() {
            if named && n > 0 {
                break;
            }
            let readings: &[&[&str]] = if n == 0 { &READINGS } else { &READINGS[..1] };
            for reading in readings {
                let mut flags: Vec<String> = reading.iter().map(|a| a.to_string()).collect();
                if !named {
                    flags.extend(["--kustomize-version".to_string(), version.to_string()]);
                }
                let label = PathBuf::from(format!("{} {}", case.display(), flags.join(" ")));
                flags.extend(args.iter().cloned());
                let expect = expectations(case, version);
                check(&mut failures, &label, &case.join("input"), &flags, &expect);
            }
        }
    }
    failures.finish("render", all.len());
}

/// Every kustomization directory under `examples/` that is not a component.
fn example_targets() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.unwrap_or_else(|e| panic!("walking examples/: {e}")))
        .filter(|e| e.file_type().is_file() && e.file_name() == "kustomization.yaml")
        .filter(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            !text.contains("kind: Component")
        })
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .collect();
    out.sort();
    out
}

#[test]
fn examples_render() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let targets = example_targets();
    assert!(targets.len() >= 5, "examples are missing: {targets:?}");
    let mut failures = Failures::default();
    for dir in &targets {
        let rel = dir.strip_prefix(root).unwrap_or(dir);
        let expect_dir = testdata("examples").join(rel.strip_prefix("examples").unwrap_or(rel));
        if blessing() {
            std::fs::create_dir_all(&expect_dir).unwrap_or_else(|e| panic!("{e}"));
        }
        let args = vec![rel.display().to_string()];
        check(&mut failures, rel, root, &args, &expect_dir);
    }
    failures.finish("example", targets.len());
}

/// `-o FILE` writes what stdout would show; a failed render leaves no file; `--output-dir`
/// writes one file per resource, named as kustomize names them.
#[test]
fn output_targets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hello = root.join("examples/hello-world");
    let tmp = std::env::temp_dir().join(format!("ply-render-output-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let stdout = ply(&hello, &[]).stdout;

    let file = tmp.join("out.yaml");
    let r = ply(&hello, &["-o".into(), file.display().to_string()]);
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout);

    let missing = tmp.join("missing-dir-render");
    let failed = tmp.join("failed.yaml");
    let r = ply(
        &hello,
        &[
            missing.display().to_string(),
            "-o".into(),
            failed.display().to_string(),
        ],
    );
    assert!(!r.ok);
    assert!(!failed.exists());

    let dir = tmp.join("split");
    let r = ply(&hello, &["--output-dir".into(), dir.display().to_string()]);
    assert!(r.ok, "{}", r.stderr);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "apps_v1_deployment_hello.yaml",
            "v1_configmap_hello-config-869k7867ft.yaml",
            "v1_service_hello.yaml"
        ]
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
