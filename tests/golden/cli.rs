//! The command line itself: exit codes of usage errors (1, as kustomize build and kubectl;
//! 2 for `ply diff`), `ply version`, `ply completion` (the bash script loads in bash), and
//! the help that lists `build` and states every command's exit codes.

use std::process::{Command, Output};

fn ply(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ply"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("running ply: {e}"))
}

#[test]
fn usage_errors_exit_like_kustomize_and_kubectl() {
    for (args, code) in [
        (&["render", "--no-such-flag"][..], 1),
        (&["build", "a", "b"][..], 1),
        (&["patch", "--no-such-flag"][..], 1),
        (&["diff", "--no-such-flag"][..], 2),
        (&["diff", "dir"][..], 2), // --live missing
        (&["no-such-command"][..], 1),
        (&["render", "--help"][..], 0),
        (&["--version"][..], 0),
    ] {
        let out = ply(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "ply {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn version_names_ply_commit_and_kustomize() {
    let out = ply(&["version"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("ply {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    assert!(text.contains("kustomize v5.5.0"), "{text}");
}

#[test]
fn bash_completion_loads_in_bash() {
    let script = ply(&["completion", "bash"]);
    assert!(script.status.success());
    let dir = std::env::temp_dir().join(format!("ply-completion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ply.bash");
    std::fs::write(&file, &script.stdout).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p ply", file.display()))
        .output()
        .unwrap_or_else(|e| panic!("running bash: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("-F _ply ply"));
    for shell in ["zsh", "fish", "powershell"] {
        let out = ply(&["completion", shell]);
        assert!(out.status.success() && !out.stdout.is_empty(), "{shell}");
    }
}

#[test]
fn help_lists_build_and_exit_codes() {
    let top = String::from_utf8_lossy(&ply(&["--help"]).stdout).into_owned();
    assert!(top.contains("[alias: build]"), "{top}");
    // Every command the top-level help lists (so a new one cannot be forgotten), and the alias.
    let listed: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    for cmd in ["render", "patch", "diff", "fetch", "version", "completion"] {
        assert!(listed.contains(&cmd), "{cmd} not listed in:\n{top}");
    }
    for cmd in listed.into_iter().chain(["build"]) {
        let help = String::from_utf8_lossy(&ply(&[cmd, "--help"]).stdout).into_owned();
        assert!(help.contains("Exit status:"), "ply {cmd} --help:\n{help}");
    }
}
