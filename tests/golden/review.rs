//! Golden cases of `ply diff --base` (a render against a render) under
//! `testdata/review/<case>/`: `base/` is the repository's tree at the first commit, `head/` at
//! the second. The test builds the git repository itself (fixed names and dates, so commit ids
//! are the same on every machine), then runs `ply diff --base HEAD~1 --all` in it (the head is
//! the working tree, a checkout of the second commit) in each format and compares with
//! `expected.unified`, `expected.summary`, `expected.json`, `expected.md` and `expected.exit`.
//! `args` (optional) adds flags. Every case also runs with `--changed-only`, and with
//! `--head HEAD` (both sides read from git), which must give the same reports.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Failures, cases};

const FORMATS: [(&str, &str); 4] = [
    ("unified", "expected.unified"),
    ("summary", "expected.summary"),
    ("json", "expected.json"),
    ("markdown", "expected.md"),
];

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from).min_depth(1) {
        let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
        } else {
            std::fs::copy(entry.path(), &dest)
                .unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
        }
    }
}

/// Runs git in `repo` with a fixed identity and clock and no user configuration.
pub fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(repo)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "ply")
        .env("GIT_AUTHOR_EMAIL", "ply@example.com")
        .env("GIT_COMMITTER_NAME", "ply")
        .env("GIT_COMMITTER_EMAIL", "ply@example.com")
        .env("GIT_AUTHOR_DATE", "2025-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2025-01-01T00:00:00Z")
        .output()
        .unwrap_or_else(|e| panic!("cannot run git: {e}"));
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        repo.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh repository holding `base` at the first commit and `head` at the second (checked
/// out).
pub fn build_repo(case: &Path, tag: &str) -> PathBuf {
    let repo = std::env::temp_dir().join(format!(
        "ply-review-{}-{tag}-{}",
        std::process::id(),
        case.file_name().unwrap_or_default().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(&repo).unwrap_or_else(|e| panic!("{}: {e}", repo.display()));
    git(&repo, &["init", "-q", "-b", "main"]);
    copy_tree(&case.join("base"), &repo);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    git(&repo, &["rm", "-q", "-r", "."]);
    copy_tree(&case.join("head"), &repo);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "head"]);
    repo
}

/// The full id of a revision.
pub fn rev_parse(repo: &Path, rev: &str) -> String {
    let out = Command::new("git")
        .current_dir(repo)
        .args(["rev-parse", rev])
        .output()
        .unwrap_or_else(|e| panic!("cannot run git: {e}"));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn ply(dir: &Path, args: &[String]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ply"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run ply: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn args(base: &[&str], extra: &[String], format: &str) -> Vec<String> {
    let mut v: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    v.extend(extra.iter().cloned());
    v.extend(["--format".to_string(), format.to_string()]);
    v
}

#[test]
fn review_golden_cases() {
    let all = cases("review");
    let mut failures = Failures::default();
    for case in &all {
        let extra: Vec<String> = std::fs::read_to_string(case.join("args"))
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let repo = build_repo(case, "r");
        let head_label = format!("HEAD ({})", &rev_parse(&repo, "HEAD")[..12]);
        let mut codes = Vec::new();
        for (format, expected) in FORMATS {
            let base = ["diff", "--base", "HEAD~1", "--all"];
            let (code, stdout, stderr) = ply(&repo, &args(&base, &extra, format));
            codes.push(code);
            failures.check(case, &case.join(expected), &stdout);
            if code == 2 && stdout.is_empty() {
                failures.fail(format!("{}: {format}: no report: {stderr}", case.display()));
            }
            let changed_only = ["diff", "--base", "HEAD~1", "--all", "--changed-only"];
            let (c2, out2, _) = ply(&repo, &args(&changed_only, &extra, format));
            if (c2, &out2) != (code, &stdout) {
                failures.fail(format!(
                    "{}: {format}: --changed-only gives another report (exit {c2}, not {code}):\n{}",
                    case.display(),
                    crate::support::unified(&stdout, &out2)
                ));
            }
            let git_head = ["diff", "--base", "HEAD~1", "--head", "HEAD", "--all"];
            let (c3, out3, _) = ply(&repo, &args(&git_head, &extra, format));
            let out3 = out3.replace(&head_label, "working tree");
            if (c3, &out3) != (code, &stdout) {
                failures.fail(format!(
                    "{}: {format}: --head HEAD gives another report (exit {c3}, not {code}):\n{}",
                    case.display(),
                    crate::support::unified(&stdout, &out3)
                ));
            }
        }
        if codes.iter().any(|c| Some(c) != codes.first()) {
            failures.fail(format!(
                "{}: exit codes differ by format: {codes:?}",
                case.display()
            ));
        }
        let first = codes.first().copied().unwrap_or(-1);
        failures.check(case, &case.join("expected.exit"), &format!("{first}\n"));
        let _ = std::fs::remove_dir_all(&repo);
    }
    failures.finish("review", all.len());
}
