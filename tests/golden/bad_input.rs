//! The bad-input corpus: every directory under `testdata/bad-input/` is one kind of hostile or
//! broken input. `input/` is copied to a fresh directory, `setup` (optional) adds what git
//! cannot hold or what is too big to commit (one command a line: `fifo PATH`,
//! `symlink PATH TARGET`, `generate PATH KIND N`), then ply runs there with the words of
//! `args` (`NO_COLOR=1`, no stdin, at most [`LIMIT`]). Expected: the exit code in
//! `expected_exit`, the diagnostic in `expected_error.txt` exactly, nothing on stdout, and no
//! file written or changed in the directory (the cases that could write pass `-o`). A case
//! that hits a limit may hold `args_raised`, the same command with the limit's flag raised:
//! run in a fresh copy, it must succeed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Failures, blessing, cases};

/// Longer than this is a hang (every case answers in well under a second in a debug build).
const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn bad_input_cases() {
    let all = cases("bad-input");
    let mut failures = Failures::default();
    for case in &all {
        run_case(&mut failures, case);
    }
    failures.finish("bad-input", all.len());
}

/// A fresh working copy of the case's input, with its setup applied.
fn prepare(case: &Path, name: &str) -> PathBuf {
    let work = std::env::temp_dir().join(format!("ply-bad-input-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    copy_dir(&case.join("input"), &work);
    if let Ok(setup) = std::fs::read_to_string(case.join("setup")) {
        for line in setup.lines().filter(|l| !l.trim().is_empty()) {
            apply_setup(&work, line);
        }
    }
    work
}

fn run_case(failures: &mut Failures, case: &Path) {
    let name = case.file_name().unwrap().to_string_lossy().into_owned();
    if let Ok(raised) = std::fs::read_to_string(case.join("args_raised")) {
        let work = prepare(case, &name);
        let out = Command::new(env!("CARGO_BIN_EXE_ply"))
            .current_dir(&work)
            .args(raised.split_whitespace())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running ply: {e}"));
        let _ = std::fs::remove_dir_all(&work);
        if !out.status.success() {
            failures.fail(format!(
                "{name}: with the limit raised (args_raised) ply failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let work = prepare(case, &name);
    let before = listing(&work);
    let args = std::fs::read_to_string(case.join("args"))
        .unwrap_or_else(|e| panic!("{}: args: {e}", case.display()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_ply"))
        .current_dir(&work)
        .args(args.split_whitespace())
        .env("NO_COLOR", "1")
        .env_remove("PLY_STRICT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running ply: {e}"));
    // Read both pipes on threads so that a large diagnostic cannot block the child.
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out_pipe.read_to_end(&mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = String::from_utf8_lossy(&out_thread.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_thread.join().unwrap()).into_owned();
    let after = listing(&work);
    let _ = std::fs::remove_dir_all(&work);
    let Some(status) = status else {
        failures.fail(format!("{name}: no answer within {LIMIT:?} (a hang)"));
        return;
    };
    let code = status
        .code()
        .map_or("signal".to_string(), |c| c.to_string());
    if blessing() {
        std::fs::write(case.join("expected_exit"), format!("{code}\n")).unwrap();
    } else {
        let want = std::fs::read_to_string(case.join("expected_exit")).unwrap_or_default();
        if want.trim() != code {
            failures.fail(format!(
                "{name}: exit {code}, expected {}\n{stderr}",
                want.trim()
            ));
        }
    }
    if code == "101" || stderr.contains("panicked") {
        failures.fail(format!("{name}: ply panicked:\n{stderr}"));
    }
    if !stdout.is_empty() {
        failures.fail(format!("{name}: printed on stdout:\n{stdout}"));
    }
    if before != after {
        failures.fail(format!(
            "{name}: the directory changed (an output file was written?):\n{before:?}\n{after:?}"
        ));
    }
    failures.check(case, &case.join("expected_error.txt"), &stderr);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let dest = to.join(e.file_name());
        let t = e.file_type().unwrap();
        if t.is_dir() {
            copy_dir(&e.path(), &dest);
        } else if t.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), dest).unwrap();
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Every path under `dir` with its size and modification time.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, Option<std::time::SystemTime>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(Result::ok) {
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            }
            out.push((e.path(), meta.len(), meta.modified().ok()));
        }
    }
    out.sort();
    out
}

fn apply_setup(work: &Path, line: &str) {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["fifo", path] => {
            let status = Command::new("mkfifo")
                .arg(work.join(path))
                .status()
                .expect("mkfifo");
            assert!(status.success(), "mkfifo {path}");
        }
        ["symlink", path, target] => {
            std::os::unix::fs::symlink(target, work.join(path)).unwrap();
        }
        ["generate", path, kind, n] => {
            let n: usize = n.parse().unwrap();
            std::fs::write(work.join(path), generate(kind, n)).unwrap();
        }
        _ => panic!("unknown setup line: {line}"),
    }
}

/// Inputs too big to commit.
fn generate(kind: &str, n: usize) -> String {
    match kind {
        // A ConfigMap whose one value is nested `n` levels of `[`.
        "deep-flow" => format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: {}{}\n",
            "[".repeat(n),
            "]".repeat(n)
        ),
        // A ConfigMap whose one value is `n` block sequences, each one further right (`- - - v`):
        // with the document's map and `data`, `n + 2` levels of go-yaml's indentation.
        "deep-block" => format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x:\n    {}v\n",
            "- ".repeat(n)
        ),
        // `deep-flow` with an anchor, which only the reference reader reads.
        "deep-flow-anchored" => format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &name deep\ndata:\n  x: {}{}\n",
            "[".repeat(n),
            "]".repeat(n)
        ),
        // `n` levels of `{"a":` in one JSON line.
        "deep-map-json" => format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"deep\"}},\"data\":{}1{}}}\n",
            "{\"a\":".repeat(n),
            "}".repeat(n)
        ),
        // Minified JSON: one line of `n` keys, then a syntax error at its end.
        "long-json-error" => {
            let mut s = String::from(
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"long\"},\"data\":{",
            );
            for i in 0..n {
                s.push_str(&format!("\"key{i}\":\"value{i}\","));
            }
            s.push_str("\"last\":[}}\n");
            s
        }
        // A kustomization on one long line whose last field is unknown.
        "long-kustomization" => format!(
            "{{namePrefix: \"{}\", commonLabels: {{a: b}}, notAField: 1}}\n",
            "p".repeat(n)
        ),
        // A kustomization whose inline patch is one long JSON line with a syntax error at
        // its end.
        "long-inline-patch" => format!(
            "resources: [r.yaml]\npatches:\n- target: {{kind: ConfigMap}}\n  patch: '{{\"data\": {{\"k\": \"{}\", \"bad\": [}}}}'\n",
            "v".repeat(n)
        ),
        // A live snapshot (JSON, one line of `n` bytes and more) whose managedFields hold a
        // fieldsV1 key that is not a field path.
        "long-fieldsv1-key" => format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{{\"pad\":\"{}\"}},\"metadata\":{{\"name\":\"c\",\"managedFields\":[{{\"manager\":\"m\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{{\"k:{{bad\":{{}}}}}}]}}}}\n",
            "q".repeat(n)
        ),
        // 100 kB in one anchored scalar, referenced `n` times.
        "alias-100k" => {
            let mut s = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aliases\ndata:\n  a: &a {}\n",
                "x".repeat(100_000)
            );
            for i in 0..n {
                s.push_str(&format!("  k{i}: *a\n"));
            }
            s
        }
        // A few MB in one anchored scalar, referenced `n` times.
        "alias-bomb" => {
            let mut s = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  a: &a {}\n",
                "x".repeat(2_000_000)
            );
            for i in 0..n {
                s.push_str(&format!("  k{i}: *a\n"));
            }
            s
        }
        _ => panic!("unknown generator {kind}"),
    }
}
