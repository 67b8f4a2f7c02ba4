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

/// `--kustomize-version` takes a kubectl release and renders as the kustomize it embeds: the
/// managed-by label of kubectl 1.34's kustomize v5.7.1 (checked against the kustomize v5.7.1
/// tool: the golden `build-metadata-managed-by/v5.7.1`); an unknown release is a usage error.
#[test]
fn kustomize_version_takes_a_kubectl_release() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/render/build-metadata-managed-by/input"
    );
    let out = ply(&["render", "--kustomize-version", "kubectl-1.34", dir]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("managed-by: kustomize-v5.7.1"), "{text}");
    let out = ply(&["render", "--kustomize-version", "kubectl-1.31", dir]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("kubectl 1.32, 1.33, 1.34, 1.35, 1.36, 1.37"),
        "{err}"
    );
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

/// Every file under `dir`, relative, with its bytes.
fn tree(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn ply_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ply"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("running ply: {e}"))
}

/// Writes `text` to `rel` under `dir`, making its directories.
fn write_under(dir: &std::path::Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ply-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn many_kustomizations_in_one_run_are_each_written_as_alone() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/multi-env");
    let out = scratch("many");
    let overlays = ["overlays/dev", "overlays/staging", "overlays/prod"];
    let run_ok = |args: &[&str]| {
        let run = ply_in(&example, args);
        assert!(
            run.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        run
    };
    // One file per kustomization, OUT/<DIR>.yaml: byte for byte what `ply render DIR` prints.
    let many = out.join("many");
    let mut args = vec!["render"];
    args.extend(overlays);
    args.extend(["--output-dir", many.to_str().unwrap()]);
    run_ok(&args);
    let mut expected = Vec::new();
    for o in overlays {
        let alone = run_ok(&["render", o]).stdout;
        assert!(!alone.is_empty());
        expected.push((std::path::PathBuf::from(format!("{o}.yaml")), alone));
    }
    expected.sort();
    assert_eq!(
        tree(&many),
        expected,
        "each overlay rendered with the others is its render alone, and nothing else is written"
    );
    // --all: the three overlays are the roots (the base is included, the component is one).
    let all = out.join("all");
    run_ok(&["render", "--all", "--output-dir", all.to_str().unwrap()]);
    assert_eq!(tree(&all), tree(&many));
    // --per-resource: each into OUT/<DIR>/ as `ply render DIR --output-dir` writes it.
    let split = out.join("split");
    let mut args = vec!["render", "--per-resource"];
    args.extend(overlays);
    args.extend(["--output-dir", split.to_str().unwrap()]);
    run_ok(&args);
    for o in overlays {
        let alone = out.join("alone").join(o);
        run_ok(&["render", o, "--output-dir", alone.to_str().unwrap()]);
        let (a, m) = (tree(&alone), tree(&split.join(o)));
        assert!(a.len() > 1);
        assert_eq!(a, m, "{o} rendered with the others differs from {o} alone");
    }
    // The current directory itself is OUT/root.yaml.
    let base = out.join("base");
    let run = ply_in(
        &example.join("base"),
        &[
            "render",
            ".",
            "../overlays/dev",
            "--output-dir",
            base.to_str().unwrap(),
        ],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let alone = ply_in(&example.join("base"), &["render"]).stdout;
    assert_eq!(std::fs::read(base.join("root.yaml")).unwrap(), alone);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn many_kustomizations_whose_outputs_would_meet_are_refused() {
    let dir = scratch("many-clash");
    let write = |p: &str, t: &str| write_under(&dir, p, t);
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    for k in ["a", "a.yaml/b", "root", "."] {
        write(
            &format!("{k}/kustomization.yaml"),
            "resources:\n- cm.yaml\n",
        );
        write(&format!("{k}/cm.yaml"), cm);
    }
    for (pair, at) in [
        (["a", "a.yaml/b"], "out/a.yaml"),
        ([".", "root"], "out/root.yaml"),
    ] {
        let run = ply_in(&dir, &["render", pair[0], pair[1], "--output-dir", "out"]);
        assert_eq!(run.status.code(), Some(1), "{pair:?}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            stderr.contains(&format!("would both be written to '{at}'")),
            "{stderr}"
        );
        assert!(!dir.join("out").exists(), "nothing is rendered or written");
        // One file per resource, each in its own directory, they do not meet.
        let run = ply_in(
            &dir,
            &[
                "render",
                "--per-resource",
                pair[0],
                pair[1],
                "--output-dir",
                "out",
            ],
        );
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        std::fs::remove_dir_all(dir.join("out")).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn many_kustomizations_need_an_output_dir_and_report_a_failure() {
    let dir = scratch("many-fail");
    let write = |p: &str, t: &str| write_under(&dir, p, t);
    write("good/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(
        "good/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    write("bad/kustomization.yaml", "resources:\n- missing.yaml\n");
    let run = ply_in(&dir, &["render", "good", "bad"]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("--output-dir"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let run = ply_in(&dir, &["render", "bad", "good", "--output-dir", "out"]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("missing.yaml"), "{stderr}");
    assert_eq!(
        std::fs::read(dir.join("out/good.yaml")).unwrap(),
        ply_in(&dir, &["render", "good"]).stdout
    );
    assert!(
        !dir.join("out/bad.yaml").exists(),
        "nothing is written for a failed render"
    );
    let left: Vec<_> = std::fs::read_dir(dir.join("out")).unwrap().collect();
    assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `render --all` says what it did: one line per failure with its kustomization and first
/// diagnostic, then "N rendered, K failed (…)" last; `--list` prints the roots (a component,
/// used or not, loading or not, is none) and writes nothing.
#[test]
fn render_all_accounts_for_every_root_and_lists_them() {
    let dir = scratch("render-all-account");
    let write = |p: &str, t: &str| write_under(&dir, p, t);
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    write("good/kustomization.yaml", "resources:\n- cm.yaml\n");
    write("good/cm.yaml", cm);
    write(
        "missing/kustomization.yaml",
        "resources:\n- cm.yaml\n- gone.yaml\n",
    );
    write("missing/cm.yaml", cm);
    write(
        "remote/kustomization.yaml",
        "resources:\n- https://github.com/example/repo//base?ref=v1\n",
    );
    write(
        "components/broken/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nbogusField: 1\n",
    );
    let run = ply_in(&dir, &["render", "--all", "--list"]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "good\nmissing\nremote\n"
    );
    assert!(
        run.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!dir.join("out").exists());
    let run = ply_in(&dir, &["render", "--list"]);
    assert_eq!(
        run.status.code(),
        Some(1),
        "--list without --all is refused"
    );

    let run = ply_in(&dir, &["render", "--all", "--output-dir", "out"]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.last().copied(),
        Some("1 rendered, 2 failed (1 missing file, 1 need `ply fetch`)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: missing: ply::not-found (missing/kustomization.yaml:3): 'gone.yaml' named under `resources` does not exist: no file or directory at 'missing/gone.yaml'\n"),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l
                .starts_with("error: remote: ply::not-fetched (remote/kustomization.yaml:2): ")),
        "{stderr}"
    );
    assert!(!stderr.contains("as well"), "{stderr}");
    assert!(dir.join("out/good.yaml").is_file());
    // All render: the last line says so.
    let run = ply_in(&dir, &["render", "good", "--output-dir", "out2", "--all"]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&run.stderr), "1 rendered\n");
    let _ = std::fs::remove_dir_all(&dir);
}
