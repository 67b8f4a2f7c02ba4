//! Records the git commit ply is built from (`PLY_COMMIT`, shown by `ply version`); outside a
//! git checkout (a crates.io package) nothing is set and `ply version` says `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PLY_COMMIT");
    if std::env::var_os("PLY_COMMIT").is_some() {
        return;
    }
    let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) else {
        return;
    };
    println!("cargo:rustc-env=PLY_COMMIT={commit}");
    // Rebuild when HEAD moves (a worktree keeps its HEAD apart from the shared refs).
    for path in ["HEAD", "refs/heads", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
