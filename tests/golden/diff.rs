//! Golden cases of `ply diff` under `testdata/diff/<case>/`: `desired.yaml` (or a `desired/`
//! kustomization directory), `live.yaml`, an optional `args` file (extra arguments, one line,
//! split at whitespace), and the expectations: `expected.unified`, `expected.summary`,
//! `expected.json`, `expected.md` (stdout of each `--format`), `expected.stderr` (stderr of the
//! unified run), `expected.merged.yaml` (`--output-merged`) and `expected.exit` (the exit code,
//! the same for every format). Runs the `ply` binary itself, and checks that a second apply onto
//! the predicted objects is a no-op.

use std::path::Path;
use std::process::Command;

use crate::support::{Failures, blessing, case_args, cases};

const FORMATS: [(&str, &str); 4] = [
    ("unified", "expected.unified"),
    ("summary", "expected.summary"),
    ("json", "expected.json"),
    ("markdown", "expected.md"),
];

fn run(
    case: &Path,
    format: &str,
    extra: &[String],
    merged: Option<&Path>,
) -> (i32, String, String) {
    run_against(case, "live.yaml", format, extra, merged)
}

fn run_against(
    case: &Path,
    live: &str,
    format: &str,
    extra: &[String],
    merged: Option<&Path>,
) -> (i32, String, String) {
    let desired = if case.join("desired").is_dir() {
        case.join("desired")
    } else {
        case.join("desired.yaml")
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ply"));
    cmd.current_dir(case)
        .arg("diff")
        .arg(desired.file_name().unwrap_or_default())
        .args(["--live", live, "--color", "never", "--format", format])
        .args(extra)
        .env_remove("NO_COLOR");
    if let Some(m) = merged {
        cmd.arg("--output-merged").arg(m);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{}: cannot run ply: {e}", case.display()));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn diff_golden_cases() {
    let all = cases("diff");
    let mut failures = Failures::default();
    for case in &all {
        let extra = case_args(case);
        let merged_path = std::env::temp_dir().join(format!(
            "ply-golden-merged-{}-{}.yaml",
            std::process::id(),
            case.file_name().unwrap_or_default().to_string_lossy()
        ));
        let mut codes = Vec::new();
        for (format, expected) in FORMATS {
            let merged = (format == "unified").then_some(merged_path.as_path());
            let (code, stdout, stderr) = run(case, format, &extra, merged);
            codes.push((format, code));
            failures.check(case, &case.join(expected), &stdout);
            if format == "unified" {
                failures.check(case, &case.join("expected.stderr"), &stderr);
                let written = std::fs::read_to_string(&merged_path).unwrap_or_default();
                let _ = std::fs::remove_file(&merged_path);
                failures.check(case, &case.join("expected.merged.yaml"), &written);
            }
        }
        let first = codes.first().map_or(-1, |c| c.1);
        if codes.iter().any(|c| c.1 != first) {
            failures.fail(format!(
                "{}: exit codes differ by format: {codes:?}",
                case.display()
            ));
        }
        failures.check(case, &case.join("expected.exit"), &format!("{first}\n"));
        // Applying again to the predicted objects changes nothing (a failing apply aside).
        if first != 2 && !blessing() {
            let again: Vec<String> = extra
                .iter()
                .filter(|a| *a != "--force-conflicts")
                .cloned()
                .collect();
            let (code, stdout, _) =
                run_against(case, "expected.merged.yaml", "summary", &again, None);
            // Objects whose namespace the snapshot does not cover are not predicted: they stay
            // `unknown`, every other object must be unchanged.
            let only_unknown_left = code == 1
                && stdout
                    .lines()
                    .take_while(|l| !l.is_empty())
                    .all(|l| l.starts_with("unchanged ") || l.starts_with("unknown "))
                && stdout.contains("unknown (namespace not in the snapshot)");
            if code != 0 && !only_unknown_left {
                failures.fail(format!(
                    "{}: a second apply onto expected.merged.yaml is not a no-op (exit {code}):\n{stdout}",
                    case.display()
                ));
            }
        }
    }
    failures.finish("diff", all.len());
}

/// A live snapshot read from stdin (`--live -`) is checked as a file is: a NUL or a byte
/// that is not UTF-8 is reported at its line and column of `<stdin>`, with exit status 2.
#[test]
fn live_snapshot_from_stdin_names_the_place_of_a_bad_byte() {
    use std::io::Write;
    use std::process::Stdio;
    let dir = std::env::temp_dir().join(format!("ply-stdin-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("kustomization.yaml"), "resources: [cm.yaml]\n").expect("write");
    std::fs::write(
        dir.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    )
    .expect("write");
    let head = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"x";
    for (byte, want) in [
        (0u8, "<stdin>:6:8: a NUL byte"),
        (0xFF, "<stdin>:6:8: a byte that never occurs in UTF-8"),
    ] {
        let mut input = head.to_vec();
        input.push(byte);
        input.extend_from_slice(b"y\"\n");
        let mut child = Command::new(env!("CARGO_BIN_EXE_ply"))
            .args(["diff", "."])
            .args(["--live", "-"])
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running ply");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&input)
            .expect("writing stdin");
        let out = child.wait_with_output().expect("ply ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(want), "byte {byte:#04x}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
