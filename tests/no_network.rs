//! ply is offline: `ply render`, `ply diff` and `ply patch` open no socket. Each runs under
//! `strace -f -e trace=network`, which logs every network system call of the process and its
//! threads; the log must hold none. strace must be installed (`.ci/run` installs it): without
//! it this test fails rather than skip.

use std::path::Path;
use std::process::Command;

fn traced(name: &str, args: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let log = std::env::temp_dir().join(format!("ply-strace-{}-{name}.log", std::process::id()));
    let status = Command::new("strace")
        .args(["-f", "-e", "trace=network", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_ply"))
        .args(args)
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("strace is needed for this test (apt-get install strace): {e}"));
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let _ = std::fs::remove_file(&log);
    assert!(
        status.status.code().is_some_and(|c| c <= 1),
        "{name}: ply failed under strace: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let calls: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("+++ exited") && !l.contains("--- SIG"))
        .collect();
    assert!(
        calls.is_empty(),
        "{name}: network system calls:\n{}",
        calls.join("\n")
    );
}

#[test]
fn render_diff_and_patch_open_no_socket() {
    traced("render", &["render", "examples/multi-env/overlays/prod"]);
    let case = "testdata/diff/container-list-merge";
    traced(
        "diff",
        &[
            "diff",
            &format!("{case}/desired.yaml"),
            "--live",
            &format!("{case}/live.yaml"),
        ],
    );
    traced(
        "patch",
        &[
            "patch",
            &format!("{case}/live.yaml"),
            "--type",
            "merge",
            "-p",
            "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}",
        ],
    );
}
