//! Golden cases of `ply diff --base` (a render against a render) under
//! `testdata/review/<case>/`: `base/` is the repository's tree at the first commit, `head/` at
//! the second. The test builds the git repository itself (fixed names and dates, so commit ids
//! are the same on every machine), then runs `ply diff --base HEAD~1 --all` in it (the head is
//! the working tree, a checkout of the second commit) in each format and compares with
//! `expected.unified`, `expected.summary`, `expected.json`, `expected.md` and `expected.exit`.
//! `args` (optional) adds flags. Every case also runs with `--changed-only`, and with
//! `--head HEAD` (both sides read from git), which must give the same reports. A kustomize
//! upgrade's case (`args` with `--base-kustomize-version`, the same tree at both commits) also
//! runs without `--base` (the working tree as both versions), which must give the same
//! reports but for the base's name. `testdata/bin` (the stand-in helm) is first on PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Failures, case_args, cases};

const FORMATS: [(&str, &str); 4] = [
    ("unified", "expected.unified"),
    ("summary", "expected.summary"),
    ("json", "expected.json"),
    ("markdown", "expected.md"),
];

pub fn copy_tree(from: &Path, to: &Path) {
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

/// PATH with `testdata/bin` (the stand-in helm) first.
pub fn path_with_stand_ins() -> std::ffi::OsString {
    let bin = crate::support::testdata("bin");
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap_or_default()
}

pub fn ply(dir: &Path, args: &[String]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ply"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("PATH", path_with_stand_ins())
        // Annotations only where a test asks for them (`--error-format github`).
        .env_remove("GITHUB_ACTIONS")
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
        let extra = case_args(case);
        let repo = build_repo(case, "r");
        let head_label = format!("HEAD ({})", &rev_parse(&repo, "HEAD")[..12]);
        let base_label = format!(
            "merge base of HEAD~1 ({})",
            &rev_parse(&repo, "HEAD~1")[..12]
        );
        // A kustomize upgrade of an unchanged tree: also reviewed without --base.
        let upgrade_only = extra.iter().any(|a| a == "--base-kustomize-version")
            && same_tree(&case.join("base"), &case.join("head"));
        let mut codes = Vec::new();
        // The HTML report, where a case keeps one (a page is long: a few cases).
        let html = [("html", "expected.html")];
        let html = html.iter().filter(|(_, f)| case.join(f).exists());
        for &(format, expected) in FORMATS.iter().chain(html) {
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
            // The head's fetch command names the revision read from git.
            let head_fetch = format!("ply fetch --revision {} --all", &head_label[6..18]);
            let out3 = out3
                .replace(&head_label, "working tree")
                .replace(&head_fetch, "ply fetch --all");
            if (c3, &out3) != (code, &stdout) {
                failures.fail(format!(
                    "{}: {format}: --head HEAD gives another report (exit {c3}, not {code}):\n{}",
                    case.display(),
                    crate::support::unified(&stdout, &out3)
                ));
            }
            if upgrade_only {
                let (c4, out4, _) = ply(&repo, &args(&["diff", "--all"], &extra, format));
                let expected = stdout.replace(&base_label, "working tree");
                if (c4, &out4) != (code, &expected) {
                    failures.fail(format!(
                        "{}: {format}: without --base, another report (exit {c4}, not {code}):\n{}",
                        case.display(),
                        crate::support::unified(&expected, &out4)
                    ));
                }
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

/// An overlay the change breaks is a GitHub `::error` annotation at its diagnostic's file and
/// line (with `--error-format github`, or in GitHub Actions); one broken before the change is
/// not, unless `--fail-on any-error`.
#[test]
fn review_annotations_name_the_overlays_the_change_breaks() {
    let broken_line = "::error file=apps/web/overlays/prod/kustomization.yaml,line=8,title=ply diff%3A apps/web/overlays/prod broken by this change::ply::not-found: 'replicas.yaml' does not exist: no file at 'apps/web/overlays/prod/replicas.yaml'\n";
    let before_line = "::error file=apps/web/overlays/prod/kustomization.yaml,line=8,title=ply diff%3A apps/web/overlays/prod broken before this change::ply::not-found: 'replicas.yaml' does not exist: no file at 'apps/web/overlays/prod/replicas.yaml'\n";
    let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let review = ["diff", "--base", "HEAD~1", "--all", "--format", "summary"];
    for (case, extra, env_actions, code, annotation) in [
        (
            "overlay-fails-at-head",
            &["--error-format", "github"][..],
            false,
            2,
            Some(broken_line),
        ),
        ("overlay-fails-at-head", &[][..], true, 2, Some(broken_line)),
        ("overlay-fails-at-head", &[][..], false, 2, None),
        (
            "broken-before-readme",
            &["--error-format", "github"][..],
            false,
            0,
            None,
        ),
        (
            "broken-before-readme",
            &["--error-format", "github", "--fail-on", "any-error"][..],
            false,
            2,
            Some(before_line),
        ),
    ] {
        let repo = build_repo(&crate::support::testdata("review").join(case), "annot");
        let mut args = a(&review);
        args.extend(a(extra));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ply"));
        cmd.current_dir(&repo).args(&args).env("NO_COLOR", "1");
        if env_actions {
            cmd.env("GITHUB_ACTIONS", "true");
        } else {
            cmd.env_remove("GITHUB_ACTIONS");
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{case} {extra:?}: {stderr}");
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("::error"))
            .collect();
        match annotation {
            Some(line) => assert_eq!(errors, [line.trim_end()], "{case} {extra:?}"),
            None => assert!(errors.is_empty(), "{case} {extra:?}: {stderr}"),
        }
        // `--all` ends with what the review did.
        let account = if case == "broken-before-readme" {
            "ply diff: 2 overlays: 0 changed, 1 without changes, 1 broken before this change, 0 broken by it, 0 fixed by it (1 missing file)"
        } else {
            "ply diff: 1 overlay: 0 changed, 0 without changes, 0 broken before this change, 1 broken by it, 0 fixed by it (1 missing file)"
        };
        assert_eq!(stderr.lines().last(), Some(account), "{case} {extra:?}");
        let _ = std::fs::remove_dir_all(&repo);
    }
}

/// Whether two directories hold the same files with the same bytes.
fn same_tree(a: &Path, b: &Path) -> bool {
    let files = |root: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e
                    .path()
                    .strip_prefix(root)
                    .unwrap_or(e.path())
                    .to_path_buf();
                (rel, std::fs::read(e.path()).unwrap_or_default())
            })
            .collect()
    };
    files(a) == files(b)
}

/// Reading a revision follows symlinks as the disk does, names a submodule it cannot read,
/// and leaves the working tree and the index as they were.
#[test]
fn revision_reading_symlinks_submodules_and_no_checkout() {
    let repo = std::env::temp_dir().join(format!("ply-review-{}-links", std::process::id()));
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(repo.join("app/files")).unwrap();
    std::fs::write(
        repo.join("app/files/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: one\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("files/cm.yaml", repo.join("app/link.yaml")).unwrap();
    std::fs::write(
        repo.join("app/kustomization.yaml"),
        "resources:\n- link.yaml\n",
    )
    .unwrap();
    std::fs::create_dir_all(repo.join("withsub")).unwrap();
    std::fs::write(
        repo.join("withsub/kustomization.yaml"),
        "resources:\n- vendor\n",
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    // A submodule entry (a commit in the tree), as `git submodule add` leaves it.
    git(
        &repo,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            "160000,1111111111111111111111111111111111111111,withsub/vendor",
        ],
    );
    git(&repo, &["commit", "-q", "-m", "one"]);
    // The working tree changes the file behind the link.
    std::fs::write(
        repo.join("app/files/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: two\n",
    )
    .unwrap();
    std::fs::create_dir_all(repo.join("withsub/vendor")).unwrap();
    let status_before = git_out(&repo, &["status", "--porcelain"]);
    let index_before = std::fs::read(repo.join(".git/index")).unwrap();
    let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (code, out, err) = ply(
        &repo,
        &a(&["diff", "--base", "HEAD", "app", "--format", "summary"]),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(".data.k: one → two"), "{out}");
    // The submodule: an error naming it, in the report; the same revision at both sides, so
    // it is broken before (nothing it reads differs), an error with `--fail-on any-error`.
    let (code, out, _) = ply(
        &repo,
        &a(&[
            "diff",
            "--base",
            "HEAD",
            "--head",
            "HEAD",
            "withsub",
            "--format",
            "summary",
            "--fail-on",
            "any-error",
        ]),
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("'withsub/vendor' is a git submodule"), "{out}");
    assert_eq!(git_out(&repo, &["status", "--porcelain"]), status_before);
    assert_eq!(
        std::fs::read(repo.join(".git/index")).unwrap(),
        index_before
    );
    let _ = std::fs::remove_dir_all(&repo);
}

fn git_out(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(repo)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run git: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `ply diff OLD NEW` with directories and rendered files, `-o FILE`, `--shard`, and a closed
/// stdout keeping the exit status.
#[test]
fn two_sides_output_file_shards_and_closed_stdout() {
    let case = crate::support::testdata("review").join("image-bump");
    let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (old, new) = ("base/apps/web/overlays/prod", "head/apps/web/overlays/prod");
    let (code, out, err) = ply(&case, &a(&["diff", old, new, "--format", "summary"]));
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("image: nginx:1.25 → nginx:1.26"), "{out}");
    // The same from rendered files, one of them on stdin-less disk.
    let tmp = std::env::temp_dir().join(format!("ply-review-{}-files", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for (side, dir) in [("old.yaml", old), ("new.yaml", new)] {
        let (c, text, e) = ply(&case, &a(&["render", dir]));
        assert_eq!(c, 0, "{e}");
        std::fs::write(tmp.join(side), text).unwrap();
    }
    let (c2, out2, _) = ply(
        &tmp,
        &a(&["diff", "old.yaml", "new.yaml", "--format", "summary"]),
    );
    assert_eq!(c2, 1);
    assert!(out2.contains("image: nginx:1.25 → nginx:1.26"), "{out2}");
    let (c3, out3, _) = ply(
        &tmp,
        &a(&[
            "diff",
            "old.yaml",
            "old.yaml",
            "-o",
            "report.md",
            "--format",
            "markdown",
        ]),
    );
    assert_eq!((c3, out3.as_str()), (0, ""));
    let written = std::fs::read_to_string(tmp.join("report.md")).unwrap();
    assert!(
        written.contains("No changes in the rendered output."),
        "{written}"
    );
    let _ = std::fs::remove_dir_all(&tmp);

    // Shards split the overlays, each once.
    let shared = crate::support::testdata("review").join("shared-base-three-overlays");
    let repo = build_repo(&shared, "shards");
    let mut seen = Vec::new();
    for s in ["1/2", "2/2"] {
        let (c, out, err) = ply(
            &repo,
            &a(&[
                "diff", "--base", "HEAD~1", "--all", "--shard", s, "--format", "json",
            ]),
        );
        assert_eq!(c, 1, "{err}");
        seen.extend(
            out.lines()
                .filter_map(|l| l.trim().strip_prefix("\"path\": \"apps"))
                .map(str::to_string),
        );
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "/web/overlays/dev\",",
            "/web/overlays/prod\",",
            "/web/overlays/staging\","
        ]
    );
    // A closed stdout keeps the status (1: changes).
    let status = Command::new("bash")
        .current_dir(&repo)
        .arg("-c")
        .arg(format!(
            "'{}' diff --base HEAD~1 --all | true; exit ${{PIPESTATUS[0]}}",
            env!("CARGO_BIN_EXE_ply")
        ))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&repo);
}

/// The action's script (tools/ci/pr-review.sh) against a stand-in for the GitHub API on
/// 127.0.0.1: one comment created, then updated in place; another title keeps its own; a
/// fork's pull request and a refused comment (403) write the job summary and keep ply's
/// result; the `--live` Markdown posted by the same comment script; an overlay failing at the
/// head fails the job after updating the comment; a sharded run merged into one comment.
#[test]
fn action_script_keeps_one_comment() {
    python_test("tools/ci/test_pr_review.py");
}

/// Runs a Python test of the Action's scripts (they share `tools/ci/stand_in.py`) against
/// this build's `ply`; fails with its output unless it passes.
fn python_test(script: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let out = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_ply"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Action's install steps (tools/ci/install-ply.sh, action.yml) against a local file
/// server standing in for the release downloads: a release archive installed after its
/// checksum is checked, a mismatching one refused, an Action pinned by commit served by the
/// release built from that commit only, and every ref without a release (tags included)
/// served by the cached build, which action.yml saves at once.
#[test]
fn action_installs_the_release_binary() {
    python_test("tools/ci/test_install_ply.py");
}

/// The GitLab example (examples/ci/gitlab/.gitlab-ci.yml) run as GitLab runs its job, against
/// a stand-in for GitLab's notes API and the release downloads: the release archive installed
/// after its checksum is checked, the job's earlier note found on the third page of 250 notes
/// and updated, one note created when there is none, nothing posted without a token.
#[test]
fn gitlab_example_finds_its_note_on_every_page() {
    python_test("tools/ci/test_gitlab_note.py");
}

/// The hooks of .pre-commit-hooks.yaml run as pre-commit runs them: a repository whose
/// kustomizations render passes with nothing written, a missing file fails with ply's
/// diagnostic, a directory argument limits the hook to the kustomizations under it.
#[test]
fn pre_commit_hook_renders_every_kustomization() {
    python_test("tools/ci/test_pre_commit_hook.py");
}

/// `--changed-only` renders neither side of an overlay none of whose files changed: one that
/// fails to render at both revisions (a resource file that is not YAML, which only a render
/// reads) is reported as broken before the change without it (not an error) and as unchanged
/// with it, while an overlay whose file changed is compared the same way in both runs.
#[test]
fn changed_only_renders_no_overlay_whose_files_did_not_change() {
    let case = std::env::temp_dir().join(format!("ply-review-{}-untouched", std::process::id()));
    let _ = std::fs::remove_dir_all(&case);
    let cm = |name: &str, v: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  v: \"{v}\"\n")
    };
    for (side, v) in [("base", "1"), ("head", "2")] {
        let root = case.join(side);
        for (dir, files) in [
            (
                "good",
                vec![
                    ("kustomization.yaml", "resources:\n- cm.yaml\n".to_string()),
                    ("cm.yaml", cm("good", v)),
                ],
            ),
            (
                "broken",
                vec![
                    ("kustomization.yaml", "resources:\n- bad.yaml\n".to_string()),
                    ("bad.yaml", "a: [\n".to_string()),
                ],
            ),
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            for (name, text) in files {
                std::fs::write(root.join(dir).join(name), text).unwrap();
            }
        }
    }
    let repo = build_repo(&case, "u");
    let run = |extra: &[&str]| {
        let mut a: Vec<String> = ["diff", "--base", "HEAD~1", "--all", "--format", "summary"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        ply(&repo, &a)
    };
    let (code, all, _) = run(&[]);
    assert_eq!(
        code, 1,
        "the broken overlay fails at both sides alike:\n{all}"
    );
    assert!(
        all.contains("broken   broken before this change\n")
            && all.contains("  broken: ply::yaml (broken/bad.yaml:2): "),
        "{all}"
    );
    let (code, only, _) = run(&["--changed-only"]);
    assert_eq!(code, 1, "only the changed overlay is rendered:\n{only}");
    assert!(
        only.contains("broken") && only.contains("no changes"),
        "{only}"
    );
    assert!(!only.contains("ERROR"), "{only}");
    // The changed overlay is reported the same way in both.
    let change = "== good ==\nupdate     v1 ConfigMap good\n    .data.v: 1 → 2\n";
    assert!(
        all.contains(change) && only.contains(change),
        "{all}\n{only}"
    );
    let _ = std::fs::remove_dir_all(&repo);
    let _ = std::fs::remove_dir_all(&case);
}

/// `--merge-reports`: every review case without `args` (overlays added, removed, failing at
/// either side or both, unchanged and changed, objects moved into a new root), reviewed
/// unsharded in every format, then as 2, 3 and 5 shards written as JSON and merged in every
/// format: byte for byte the unsharded report, with its exit status. Parts from two different
/// runs, one part given twice, a missing shard and a report not written as a shard are
/// refused.
#[test]
fn merged_shards_equal_the_unsharded_report() {
    let mut tested = 0;
    for case in cases("review") {
        if !case_args(&case).is_empty() {
            continue;
        }
        merged_shards_of(&case);
        tested += 1;
    }
    assert!(tested >= 10, "{tested} cases");
}

/// Moves between overlays of different shards, in a case written here: `apps/a` is gone at
/// the head; `apps/b` renders its ConfigMap, Secret (one value changed, one not) and claim,
/// and `apps/c` the same ConfigMap. The unsharded run moves all three to `apps/b` (a deletion
/// pairs with the first creation in overlay order), creates the ConfigMap in `apps/c`, masks
/// the Secret's values as `*** (before)`/`*** (after)` and `***`, and drops the claim's
/// deletion risk. As 2 shards `apps/a` and `apps/c` are one shard (which alone would pair
/// them), as 3 and 5 each overlay is its own: every merged report equals the unsharded one
/// ([`merged_shards_of`]), and no part holds a Secret's value.
#[test]
fn merged_shards_pair_moves_across_shards() {
    let case = std::env::temp_dir().join(format!(
        "ply-review-{}-case-moves-across-shards",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&case);
    let files: [(&str, &str); 10] = [
        (
            "base/apps/a/kustomization.yaml",
            "namespace: shop\nresources:\n- settings.yaml\n- creds.yaml\n- data.yaml\n",
        ),
        ("base/apps/a/settings.yaml", SETTINGS),
        (
            "base/apps/a/creds.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  password: b2xkLXBhc3N3b3Jk\n  user: YWRtaW4=\n",
        ),
        ("base/apps/a/data.yaml", CLAIM),
        (
            "head/apps/b/kustomization.yaml",
            "namespace: shop\nlabels:\n- pairs:\n    team: b\nresources:\n- settings.yaml\n- creds.yaml\n- data.yaml\n",
        ),
        ("head/apps/b/settings.yaml", SETTINGS),
        (
            "head/apps/b/creds.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  password: bmV3LXBhc3N3b3Jk\n  user: YWRtaW4=\n",
        ),
        ("head/apps/b/data.yaml", CLAIM),
        (
            "head/apps/c/kustomization.yaml",
            "namespace: shop\nresources:\n- settings.yaml\n",
        ),
        ("head/apps/c/settings.yaml", SETTINGS),
    ];
    for (path, text) in files {
        let path = case.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let repo = build_repo(&case, "probe");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let (code, whole, err) = ply(
        &repo,
        &s(&["diff", "--base", "HEAD~1", "--all", "--format", "summary"]),
    );
    assert_eq!(code, 1, "{err}");
    for shown in [
        "move       v1 ConfigMap shop/settings (moved from apps/a)",
        "move       v1 Secret shop/creds (moved from apps/a)\n    .data.password: *** (before) → *** (after)\n",
        "move       v1 PersistentVolumeClaim shop/data (moved from apps/a)",
        "== apps/c ==\nnote: new overlay (no kustomization at the base): every object is a creation\ncreate     v1 ConfigMap shop/settings\n",
        "3 overlays, 3 changed: 1 create, 0 update, 0 rename, 0 delete, 3 move, 0 unchanged",
    ] {
        assert!(whole.contains(shown), "{shown}\n{whole}");
    }
    let (_, json, _) = ply(
        &repo,
        &s(&["diff", "--base", "HEAD~1", "--all", "--format", "json"]),
    );
    assert!(json.contains("\"risks\": []"), "{json}");
    // Shard 1 of 2 (`apps/a`, `apps/c`) pairs nothing and writes no Secret's value.
    let (_, part, err) = ply(
        &repo,
        &s(&[
            "diff", "--base", "HEAD~1", "--all", "--shard", "1/2", "--format", "json",
        ]),
    );
    assert!(!part.contains("\"action\": \"move\""), "{err}\n{part}");
    assert!(part.contains("\"object\": {"), "{part}");
    for value in ["b2xkLXBhc3N3b3Jk", "YWRtaW4="] {
        assert!(!part.contains(value), "{value} in\n{part}");
    }
    let _ = std::fs::remove_dir_all(&repo);
    merged_shards_of(&case);
    let _ = std::fs::remove_dir_all(&case);
}

const SETTINGS: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n";
const CLAIM: &str = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes:\n  - ReadWriteOnce\n  resources:\n    requests:\n      storage: 1Gi\n";

#[allow(
    clippy::too_many_lines,
    reason = "one scenario: shards in every format, merged, against the unsharded report"
)]
fn merged_shards_of(case: &Path) {
    let repo = build_repo(case, "merge");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut shards_seen = 0;
    for n in [2, 3, 5] {
        let mut parts = Vec::new();
        for i in 1..=n {
            let shard = format!("{i}/{n}");
            let file = format!("part-{i}-of-{n}.json");
            let (code, _, err) = ply(
                &repo,
                &s(&[
                    "diff", "--base", "HEAD~1", "--all", "--shard", &shard, "--format", "json",
                    "-o", &file,
                ]),
            );
            assert!(code == 0 || code == 1 || code == 2, "{shard}: {err}");
            let text = std::fs::read_to_string(repo.join(&file)).unwrap();
            if text.contains("\"path\"") {
                shards_seen += 1;
            }
            parts.push(file);
        }
        // Markdown also under a small budget (the same rows and diffs are left out), HTML,
        // and the unified diff in colour.
        let runs = FORMATS.iter().map(|(f, _)| vec![*f]).chain([
            vec!["markdown", "--budget", "3000"],
            vec!["html"],
            vec!["unified", "--color", "always"],
        ]);
        for run in runs {
            let format = run.join(" ");
            let mut unsharded = s(&["diff", "--base", "HEAD~1", "--all", "--format"]);
            unsharded.extend(s(&run));
            let (code, whole, err) = ply(&repo, &unsharded);
            // (Empty only for a review without changes in the unified format.)
            assert!(!whole.is_empty() || format.starts_with("unified"), "{err}");
            let mut merge = s(&["diff", "--format"]);
            merge.extend(s(&run));
            merge.push("--merge-reports".to_string());
            merge.extend(parts.iter().cloned());
            let (c2, merged, err2) = ply(&repo, &merge);
            assert_eq!(
                (c2, &merged),
                (code, &whole),
                "{n} shards, {format}: {err2}\n{}",
                crate::support::unified(&whole, &merged)
            );
        }
    }
    assert!(
        shards_seen >= 3,
        "{}: shards with overlays: {shards_seen}",
        case.display()
    );
    // One part twice; parts of two runs (another base).
    let (c, _, err) = ply(
        &repo,
        &s(&[
            "diff",
            "--merge-reports",
            "part-1-of-2.json",
            "part-1-of-2.json",
        ]),
    );
    assert_ne!(c, 0);
    // The diagnostic is wrapped ("\n  | ") at the terminal width.
    let unwrapped = |e: &str| e.replace("\n  | ", " ");
    assert!(
        unwrapped(&err).contains("is in an earlier part too"),
        "{err}"
    );
    let (_, other, _) = ply(
        &repo,
        &s(&[
            "diff",
            "--base",
            "HEAD",
            "--base-exact",
            "--all",
            "--shard",
            "2/2",
            "--format",
            "json",
        ]),
    );
    std::fs::write(repo.join("other.json"), other).unwrap();
    let (c, _, err) = ply(
        &repo,
        &s(&["diff", "--merge-reports", "part-1-of-2.json", "other.json"]),
    );
    assert_ne!(c, 0);
    assert!(unwrapped(&err).contains("its base is 'HEAD ("), "{err}");
    // A shard left out; a report not written as a shard.
    let (c, _, err) = ply(
        &repo,
        &s(&[
            "diff",
            "--merge-reports",
            "part-1-of-3.json",
            "part-3-of-3.json",
        ]),
    );
    assert_ne!(c, 0);
    assert!(unwrapped(&err).contains("no part is shard 2/3"), "{err}");
    let (_, whole, _) = ply(
        &repo,
        &s(&["diff", "--base", "HEAD~1", "--all", "--format", "json"]),
    );
    std::fs::write(repo.join("whole.json"), whole).unwrap();
    let (c, _, err) = ply(&repo, &s(&["diff", "--merge-reports", "whole.json"]));
    assert_ne!(c, 0);
    assert!(
        unwrapped(&err).contains("it was not written with --shard I/N"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&repo);
}

/// `--gitops` in a repository with no Flux Kustomization and no Argo CD Application at either
/// revision is a usage error that says so, never an empty review that exits 0.
#[test]
fn gitops_review_without_targets_says_so() {
    let case = crate::support::testdata("gitops").join("review-no-targets");
    let repo = build_repo(&case, "no-targets");
    let args: Vec<String> = ["diff", "--base", "HEAD~1", "--gitops"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (code, out, err) = ply(&repo, &args);
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("--gitops found no Flux Kustomization and no Argo CD Application"),
        "{err}"
    );
    // The same repository reviewed as kustomization roots has its change.
    let plain: Vec<String> = ["diff", "--base", "HEAD~1", "--all", "--format", "summary"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (code, out, _) = ply(&repo, &plain);
    // Exit 1: changes found, as `diff` exits.
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("1 changed: 0 create, 1 update"), "{out}");
    let _ = std::fs::remove_dir_all(&repo);
}

/// In a clone whose `origin` remote is another URL, `--repo-url` names this repository for an
/// Argo CD Application as it does for `ply diff --gitops`; without it the Application is not
/// rendered and the error names both URLs.
#[test]
fn argo_render_repo_url_adds_to_origin() {
    let case = crate::support::testdata("review").join("gitops-argo-overrides");
    let repo = build_repo(&case, "origin-elsewhere");
    git(
        &repo,
        &["remote", "add", "origin", "https://example.test/mirror.git"],
    );
    let render = |extra: &[&str]| {
        let mut a: Vec<String> = ["render", "--argo-application", "web"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a.push(".".to_string());
        ply(&repo, &a)
    };
    let (code, out, err) = render(&[]);
    assert_eq!(code, 1, "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains("its source is https://github.com/example/deploy.git, not this"),
        "{err}"
    );
    assert!(err.contains("https://example.test/mirror.git"), "{err}");
    let (code, out, err) = render(&["--repo-url", "https://github.com/example/deploy.git"]);
    assert_eq!(code, 0, "stderr: {err}");
    assert!(out.contains("kind: Deployment"), "{out}");
    let _ = std::fs::remove_dir_all(&repo);
}
