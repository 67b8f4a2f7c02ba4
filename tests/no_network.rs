//! ply is offline: `ply render`, `ply diff` and `ply patch` open no socket, also when the
//! kustomization names an HTTP(S) file pinned in `ply.lock` (read from the cache). Each runs under
//! `strace -f -e trace=network`, which logs every network system call of the process and its
//! threads; the log must hold none. strace must be installed (`.ci/run` installs it): without
//! it this test fails rather than skip.

use std::path::Path;
use std::process::Command;

fn traced(name: &str, args: &[&str]) {
    traced_in(Path::new(env!("CARGO_MANIFEST_DIR")), name, args, None);
}

/// [`traced`] in the directory `root`, with `PLY_CACHE_DIR` set to `cache` when given.
fn traced_in(root: &Path, name: &str, args: &[&str], cache: Option<&Path>) {
    let log = std::env::temp_dir().join(format!("ply-strace-{}-{name}.log", std::process::id()));
    let status = Command::new("strace")
        .args(["-f", "-e", "trace=network", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_ply"))
        .args(args)
        .envs(cache.map(|c| ("PLY_CACHE_DIR", c)))
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

/// A kustomization naming HTTP(S) file URLs (a resource, a generator file), pinned in its lock
/// and present in the cache as `ply fetch` leaves them: render and diff read the cache only.
#[test]
fn pinned_remote_files_are_read_without_a_socket() {
    let t = std::env::temp_dir().join(format!("ply-strace-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&t);
    let cache = t.join("cache");
    std::fs::create_dir_all(cache.join("files")).unwrap();
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
    let txt = "from the cache\n";
    let mut lock = ply::testing::Lock::default();
    for (url, bytes) in [
        ("https://example.invalid/cm.yaml", cm),
        ("https://example.invalid/a.txt", txt),
    ] {
        let hash = ply::testing::bytes_hash(bytes.as_bytes());
        std::fs::write(ply::testing::file_path(&cache, &hash), bytes).unwrap();
        lock.files.insert(url.to_string(), hash);
    }
    let dir = t.join("k");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ply.lock"), lock.to_text()).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        "resources:\n- https://example.invalid/cm.yaml\nconfigMapGenerator:\n- name: g\n  files: [https://example.invalid/a.txt]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ply"))
        .args(["render", "k", "--cache-dir", "cache"])
        .current_dir(&t)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rendered = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        rendered.contains("name: c\n") && rendered.contains("from the cache"),
        "{rendered}"
    );
    std::fs::write(t.join("live.yaml"), &rendered).unwrap();
    traced_in(
        &t,
        "render-remote-files",
        &["render", "k", "--cache-dir", "cache"],
        None,
    );
    // `ply diff` takes the cache from PLY_CACHE_DIR.
    traced_in(
        &t,
        "diff-remote-files",
        &["diff", "k", "--live", "live.yaml"],
        Some(&cache),
    );
    let _ = std::fs::remove_dir_all(&t);
}
