//! The git repositories the remote tests fetch from, built in a temporary directory: the one
//! hermetic environment every program of the tests runs in, `git` itself, and the steps the
//! tests repeat (a file written with its directories, a commit tagged, a repository cloned
//! bare where a `file://` URL names it). Shared by `remote.rs` and `remote/review.rs`.

use std::path::Path;
use std::process::Command;

/// Environment of every program the tests run: no user or system git configuration, a fixed
/// identity, no colour.
pub(crate) fn hermetic(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "ply test")
        .env("GIT_AUTHOR_EMAIL", "test@ply.invalid")
        .env("GIT_COMMITTER_NAME", "ply test")
        .env("GIT_COMMITTER_EMAIL", "test@ply.invalid")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .env("NO_COLOR", "1")
        .env_remove("PLY_CACHE_DIR")
}

/// Runs git in `dir`; its stdout. Fails the test when git fails.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = hermetic(Command::new("git").args(args).current_dir(dir))
        .output()
        .expect("the tests need the `git` program");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Writes `body` to `path`, creating its directories.
pub(crate) fn write(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

/// Commits everything in the repository `work` with the message `tag`, and tags it `tag`.
pub(crate) fn commit_tagged(work: &Path, tag: &str) {
    git(work, &["add", "-A"]);
    git(work, &["commit", "-q", "-m", tag]);
    git(work, &["tag", tag]);
}

/// Clones the repository `work` bare to `bare` (what the `file://` URLs name); the bare path.
pub(crate) fn clone_bare(work: &Path, bare: &Path) -> String {
    let bare = bare.display().to_string();
    git(
        work,
        &["clone", "-q", "--bare", &work.display().to_string(), &bare],
    );
    bare
}
