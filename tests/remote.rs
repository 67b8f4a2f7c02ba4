//! Remote bases end to end: bare git repositories built in a temporary directory from
//! `testdata/remote/repos/`, kustomizations from `testdata/remote/cases/` naming them by
//! `file://` URLs, `ply fetch` then `ply render` compared with `expected.yaml` (recorded from
//! `kubectl kustomize`, and compared with it again here whenever kubectl is on PATH), before
//! and after the repositories are deleted, and inside a network namespace with no interfaces
//! (`unshare -rn`). Also the refusals: unreachable repositories, missing refs and directories,
//! escaping symlinks, a changed cache, URLs not in the lock, timeouts; and pinning: a moved
//! branch changes nothing until `ply fetch --update`.
//! Nothing here contacts the network: every URL is `file://`, and the one `ssh://` URL runs a
//! stand-in for ssh. HTTP(S) file URLs are tested in `remote/http.rs`, against a loopback
//! server the test starts.

#[path = "remote/http.rs"]
mod http;
#[path = "remote/repos.rs"]
mod repos;
#[path = "remote/review.rs"]
mod review;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use repos::{clone_bare, git, hermetic};

const PLY: &str = env!("CARGO_BIN_EXE_ply");

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/remote")
}

/// A fresh temporary directory for one test.
fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ply-remote-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Copies `from` into `to`, replacing `{REPOS}` in every file.
fn copy_tree(from: &Path, to: &Path, repos: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest, repos);
        } else {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            std::fs::write(dest, text.replace("{REPOS}", &repos.display().to_string())).unwrap();
        }
    }
}

/// Commits everything in the repository `work` and clones it bare to `bare`; the bare path.
fn commit_and_publish(work: &Path, bare: &Path) -> String {
    git(work, &["add", "-A"]);
    git(work, &["commit", "-q", "-m", "publish"]);
    clone_bare(work, bare)
}

/// Replaces the work tree of the repository `work` with `snapshot` and commits it.
fn commit_snapshot(work: &Path, snapshot: &Path, repos: &Path, message: &str) {
    for entry in std::fs::read_dir(work).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != ".git" {
            let p = entry.path();
            if p.is_dir() {
                std::fs::remove_dir_all(p).unwrap();
            } else {
                std::fs::remove_file(p).unwrap();
            }
        }
    }
    copy_tree(snapshot, work, repos);
    git(work, &["add", "-A"]);
    git(work, &["commit", "-q", "-m", message]);
}

/// The repositories of `testdata/remote/repos/`, bare, under `<t>/repos/<name>.git`; their
/// work trees under `<t>/src/<name>`. Returns the commit tagged `v1` in `base`.
fn build_repos(t: &Path) -> String {
    let repos = t.join("repos");
    std::fs::create_dir_all(&repos).unwrap();
    for name in ["base", "nested"] {
        let data = testdata().join("repos").join(name);
        let work = t.join("src").join(name);
        std::fs::create_dir_all(&work).unwrap();
        git(&work, &["init", "-q", "-b", "main"]);
        commit_snapshot(&work, &data.join("v1"), &repos, "v1");
        git(&work, &["tag", "v1"]);
        if data.join("feature").is_dir() {
            git(&work, &["checkout", "-q", "-b", "feature"]);
            commit_snapshot(&work, &data.join("feature"), &repos, "feature");
            git(&work, &["checkout", "-q", "main"]);
        }
        if data.join("main").is_dir() {
            commit_snapshot(&work, &data.join("main"), &repos, "main");
        }
        clone_bare(&work, &repos.join(format!("{name}.git")));
    }
    git(&t.join("src/base"), &["rev-parse", "v1"])
        .trim()
        .to_string()
}

fn ply(dir: &Path, args: &[&str]) -> Output {
    hermetic(Command::new(PLY).args(args).current_dir(dir))
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The cases' kustomizations written under `<t>/work/<case>`.
fn write_cases(t: &Path, v1: &str) -> Vec<(String, PathBuf)> {
    let repos = t.join("repos");
    let mut cases = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(testdata().join("cases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 9, "{names:?}");
    for name in names {
        let from = testdata()
            .join("cases")
            .join(&name)
            .join("kustomization.yaml");
        let dir = t.join("work").join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let k = std::fs::read_to_string(from)
            .unwrap()
            .replace("{REPOS}", &repos.display().to_string())
            .replace("{BASE_V1_COMMIT}", v1);
        std::fs::write(dir.join("kustomization.yaml"), k).unwrap();
        cases.push((name, dir));
    }
    cases
}

fn expected(case: &str) -> PathBuf {
    testdata().join("cases").join(case).join("expected.yaml")
}

/// How a set of golden cases is checked: where each case's `expected.yaml` lies, and the
/// text of the output that stands for a placeholder (`{REPOS}`, `{SERVER}`) there.
struct Golden<'a> {
    expected: &'a dyn Fn(&str) -> PathBuf,
    placeholder: &'a str,
    value: &'a str,
}

impl Golden<'_> {
    /// Renders every case with `render` and compares with its `expected.yaml` (written
    /// instead under `PLY_BLESS=1`, by the pass named "ply render"); returns what differed.
    fn check(
        &self,
        cases: &[(String, PathBuf)],
        how: &str,
        render: &dyn Fn(&Path) -> Output,
    ) -> Vec<String> {
        let bless = std::env::var_os("PLY_BLESS").is_some_and(|v| v != "0");
        let mut failures = Vec::new();
        for (name, dir) in cases {
            let out = render(dir);
            if !out.status.success() {
                failures.push(format!("{name} ({how}): failed: {}", text(&out.stderr)));
                continue;
            }
            let got = text(&out.stdout).replace(self.value, self.placeholder);
            let expected = (self.expected)(name);
            if bless && how == "ply render" {
                std::fs::write(expected, &got).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(expected).unwrap_or_default();
            if got != want {
                failures.push(format!("{name} ({how}):\n--- want\n{want}\n--- got\n{got}"));
            }
        }
        failures
    }

    /// [`Self::check`] with `kubectl kustomize` as the renderer, when kubectl is on PATH (the
    /// recorded bytes came from it and are compared with ply's either way).
    fn check_kubectl(&self, cases: &[(String, PathBuf)]) -> Vec<String> {
        if !kubectl_available() {
            eprintln!("kubectl not on PATH: comparing with the bytes recorded from kubectl only");
            return Vec::new();
        }
        self.check(cases, "kubectl kustomize", &|dir| {
            hermetic(Command::new("kubectl").arg("kustomize").arg(dir))
                .output()
                .unwrap()
        })
    }

    /// [`Self::check`] of `ply render` in a network namespace with no interfaces, where the
    /// machine allows one ([`unshare_available`]).
    fn check_unshared(&self, cases: &[(String, PathBuf)], cache: &str) -> Vec<String> {
        if !unshare_available() {
            return Vec::new();
        }
        self.check(cases, "ply render under unshare -rn", &|dir| {
            hermetic(
                Command::new("unshare")
                    .args(["-rn", PLY, "render", ".", "--cache-dir", cache])
                    .current_dir(dir),
            )
            .output()
            .unwrap()
        })
    }
}

#[test]
fn fetch_then_render_equals_kubectl_and_stays_offline() {
    let t = temp("golden");
    let v1 = build_repos(&t);
    let cases = write_cases(&t, &v1);
    let repos = t.join("repos").display().to_string();
    let cache = t.join("cache").display().to_string();
    let golden = Golden {
        expected: &expected,
        placeholder: "{REPOS}",
        value: &repos,
    };
    let mut failures = golden.check_kubectl(&cases);
    for (name, dir) in &cases {
        let out = ply(dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let lock = std::fs::read_to_string(dir.join("ply.lock")).unwrap();
        assert!(
            lock.contains("version: 1\nremotes:\n- url: file://"),
            "{lock}"
        );
    }
    let render = |dir: &Path| ply(dir, &["render", ".", "--cache-dir", &cache]);
    failures.extend(golden.check(&cases, "ply render", &render));

    // The nested case pins the whole closure, sorted.
    let nested = std::fs::read_to_string(t.join("work/nested/ply.lock")).unwrap();
    let urls: Vec<&str> = nested
        .lines()
        .filter_map(|l| l.strip_prefix("- url: "))
        .collect();
    assert_eq!(
        urls,
        [
            format!("file://{repos}/base.git//deploy/base?ref=v1"),
            format!("file://{repos}/nested.git//app?ref=v1"),
        ]
    );

    // The sources are gone: the cache is enough, for render and for fetch.
    std::fs::remove_dir_all(t.join("repos")).unwrap();
    std::fs::remove_dir_all(t.join("src")).unwrap();
    failures.extend(golden.check(&cases, "ply render, sources deleted", &render));
    for (name, dir) in &cases {
        let before = std::fs::read_to_string(dir.join("ply.lock")).unwrap();
        let out = ply(dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("is up to date"), "{name}");
        assert_eq!(
            std::fs::read_to_string(dir.join("ply.lock")).unwrap(),
            before
        );
    }

    // No network at all: a namespace with no interfaces.
    failures.extend(golden.check_unshared(&cases, &cache));
    let _ = std::fs::remove_dir_all(&t);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Whether `unshare -rn` (a network namespace with no interfaces) works here. When it does
/// not, the test fails unless `PLY_ALLOW_NO_UNSHARE=1` accepts that (and the skip is printed).
fn unshare_available() -> bool {
    let probe = Command::new("unshare").args(["-rn", "true"]).output();
    let why = match probe {
        Ok(o) if o.status.success() => return true,
        Ok(o) => text(&o.stderr),
        Err(e) => e.to_string(),
    };
    let allowed = std::env::var_os("PLY_ALLOW_NO_UNSHARE").is_some_and(|v| v == "1");
    assert!(
        allowed,
        "`unshare -rn` is not permitted on this machine ({why}); the offline render \
         test cannot run. Set PLY_ALLOW_NO_UNSHARE=1 to accept that and report it."
    );
    eprintln!("NOT RUN: the render under `unshare -rn` ({why})");
    false
}

/// A branch that moves changes no render until `ply fetch --update` moves the lock.
#[test]
fn moving_ref_is_pinned_until_update() {
    let t = temp("pinned");
    build_repos(&t);
    let repos = t.join("repos");
    let dir = t.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!(
            "resources:\n- file://{}/base.git//deploy/base?ref=main\n",
            repos.display()
        ),
    )
    .unwrap();
    let cache = t.join("cache").display().to_string();
    let fetch = |extra: &[&str]| {
        let mut args = vec!["fetch", ".", "--write-lock", "--cache-dir", &cache];
        args.extend_from_slice(extra);
        let out = ply(&dir, &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        std::fs::read_to_string(dir.join("ply.lock")).unwrap()
    };
    let render = || {
        let out = ply(&dir, &["render", ".", "--cache-dir", &cache]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let lock = fetch(&[]);
    assert!(render().contains("release: main"));

    // Someone pushes to main.
    let work = t.join("src/base");
    let cm = work.join("deploy/base/cm.yaml");
    let moved = std::fs::read_to_string(&cm)
        .unwrap()
        .replace("release: main", "release: moved");
    std::fs::write(&cm, moved).unwrap();
    git(&work, &["commit", "-q", "-am", "moved"]);
    git(
        &work,
        &[
            "push",
            "-q",
            &repos.join("base.git").display().to_string(),
            "main",
        ],
    );

    assert!(
        render().contains("release: main"),
        "the lock pins the old commit"
    );
    // With the cache gone, fetch takes the locked commit again, not the branch's new one.
    std::fs::remove_dir_all(t.join("cache")).unwrap();
    let out = ply(&dir, &["render", ".", "--cache-dir", &cache]);
    assert!(text(&out.stderr).contains("its tree is not in the cache"));
    let out = ply(&dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
    assert!(
        text(&out.stderr).contains("fetched again (locked)"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fetch(&[]), lock, "fetch without --update keeps the lock");
    assert!(render().contains("release: main"));
    // What the cluster has: the render at the old pin.
    std::fs::write(t.join("live.yaml"), render()).unwrap();
    let updated = fetch(&["--update"]);
    assert_ne!(updated, lock);
    let old_commit = lock.lines().find(|l| l.contains("commit:")).unwrap();
    let new_commit = updated.lines().find(|l| l.contains("commit:")).unwrap();
    assert_ne!(old_commit, new_commit);
    assert!(render().contains("release: moved"));
    // `ply diff` renders offline through the moved lock and reports the change.
    // (It takes the cache from PLY_CACHE_DIR.)
    let diff = |extra: &[&str]| {
        hermetic(Command::new(PLY).current_dir(&dir))
            .args(["diff", ".", "--live", "../live.yaml"])
            .args(extra)
            .env("PLY_CACHE_DIR", &cache)
            .output()
            .unwrap()
    };
    let out = diff(&["--format", "summary"]);
    let summary = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{summary}{}", text(&out.stderr));
    assert!(summary.contains("ConfigMap"), "{summary}");
    let out = diff(&[]);
    assert!(
        text(&out.stdout).contains("+  release: moved"),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&t);
}

/// Runs `ply fetch` on a one-line kustomization naming `url`; its stderr, which must report a
/// failure located at that line.
fn fetch_fails(t: &Path, case: &str, url: &str, env: &[(&str, &str)]) -> String {
    let dir = t.join("bad").join(case);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("resources:\n- {url}\n"),
    )
    .unwrap();
    let cache = t.join("cache").display().to_string();
    let mut cmd = Command::new(PLY);
    hermetic(&mut cmd)
        .args(["fetch", ".", "--write-lock", "--cache-dir", &cache])
        .current_dir(&dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{case}: {err}");
    assert!(err.contains("[kustomization.yaml:2:3]"), "{case}: {err}");
    assert!(
        !dir.join("ply.lock").exists(),
        "{case}: no lock after a failure"
    );
    err
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "a list of bad remotes, each with the error it must give"
)]
fn bad_remotes_are_clear_errors() {
    let t = temp("bad");
    build_repos(&t);
    let repos = t.join("repos").display().to_string();
    let base = format!("file://{repos}/base.git");

    let err = fetch_fails(
        &t,
        "unreachable",
        &format!("file://{repos}/nowhere.git//x"),
        &[],
    );
    assert!(err.contains("could not fetch 'HEAD' from"), "{err}");
    assert!(err.contains("nowhere.git"), "{err}");

    let err = fetch_fails(&t, "no-ref", &format!("{base}//deploy/base?ref=v9"), &[]);
    assert!(err.contains("has no ref 'v9'"), "{err}");

    let err = fetch_fails(&t, "no-dir", &format!("{base}//deploy/nothing?ref=v1"), &[]);
    assert!(err.contains("has no directory"), "{err}");
    assert!(err.contains("nothing'"), "{err}");

    // A repository whose symlink leads out of it.
    let evil = t.join("src/evil");
    std::fs::create_dir_all(evil.join("base")).unwrap();
    git(&evil, &["init", "-q", "-b", "main"]);
    std::fs::write(
        evil.join("base/kustomization.yaml"),
        "resources: [leak.yaml]\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("../../../../etc/hostname", evil.join("base/leak.yaml")).unwrap();
    git(&evil, &["add", "-A"]);
    git(&evil, &["commit", "-q", "-m", "evil"]);
    let err = fetch_fails(
        &t,
        "symlink",
        &format!("file://{}//base", evil.display()),
        &[],
    );
    assert!(err.contains("points outside it"), "{err}");
    assert!(err.contains("symlink 'base/"), "{err}");

    // Every git command has a deadline: an ssh that never answers (a stand-in that sleeps;
    // no connection is made) is cut off after `?timeout=1`.
    let started = std::time::Instant::now();
    let err = fetch_fails(
        &t,
        "timeout",
        "ssh://git@example.invalid/org/repo//base?timeout=1",
        &[("GIT_SSH_COMMAND", "sleep 20; true")],
    );
    assert!(err.contains("timed out after 1s"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(15));

    // After a good fetch: a URL added to the kustomization is not in the lock, and a changed
    // cache is refused by render and by fetch alike.
    let dir = t.join("bad/later");
    std::fs::create_dir_all(&dir).unwrap();
    let first = format!("{base}//deploy/base?ref=v1");
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("resources:\n- {first}\n"),
    )
    .unwrap();
    let cache = t.join("cache").display().to_string();
    let out = ply(&dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("resources:\n- {first}\n- {base}//deploy/other?ref=v1\n"),
    )
    .unwrap();
    let out = ply(&dir, &["render", ".", "--cache-dir", &cache]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err.contains("deploy/other?ref=v1' is not pinned in"),
        "{err}"
    );
    assert!(err.contains("[kustomization.yaml:3:3]"), "{err}");
    assert!(err.contains("run `ply fetch .`"), "{err}");
    let out = ply(
        &dir,
        &[
            "render",
            ".",
            "--cache-dir",
            &t.join("empty").display().to_string(),
        ],
    );
    assert!(text(&out.stderr).contains("its tree is not in the cache"));

    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("resources:\n- {first}\n"),
    )
    .unwrap();
    let trees = t.join("cache/trees");
    let tree = std::fs::read_dir(&trees)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let cm = tree.join("deploy/base/cm.yaml");
    let changed = std::fs::read_to_string(&cm).unwrap().replace("v1", "evil");
    std::fs::write(&cm, changed).unwrap();
    for cmd in ["render", "fetch"] {
        let out = ply(&dir, &[cmd, ".", "--cache-dir", &cache]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(err.contains("does not match the lock"), "{cmd}: {err}");
    }
    let _ = std::fs::remove_dir_all(&t);
}

/// Submodules are cloned when the URL says `submodules=true` (and the render equals
/// kubectl's), and not otherwise: kustomize's default is to clone them, ply's is not
/// (docs/compatibility.md).
#[test]
fn submodules_only_when_asked() {
    let t = temp("submodules");
    let repos = t.join("repos");
    std::fs::create_dir_all(&repos).unwrap();
    let sub = t.join("src/sub");
    std::fs::create_dir_all(sub.join("base")).unwrap();
    git(&sub, &["init", "-q", "-b", "main"]);
    std::fs::write(
        sub.join("base/kustomization.yaml"),
        "resources: [cm.yaml]\n",
    )
    .unwrap();
    std::fs::write(
        sub.join("base/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-submodule\n",
    )
    .unwrap();
    let sub_bare = commit_and_publish(&sub, &repos.join("sub.git"));
    let top = t.join("src/top");
    std::fs::create_dir_all(top.join("app")).unwrap();
    git(&top, &["init", "-q", "-b", "main"]);
    git(
        &top,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &format!("file://{sub_bare}"),
            "vendor/sub",
        ],
    );
    std::fs::write(
        top.join("app/kustomization.yaml"),
        "resources: [../vendor/sub/base]\nnamePrefix: top-\n",
    )
    .unwrap();
    let top_bare = commit_and_publish(&top, &repos.join("top.git"));

    let cache = t.join("cache").display().to_string();
    let case = |name: &str, query: &str| {
        let dir = t.join("work").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("kustomization.yaml"),
            format!("resources:\n- file://{top_bare}//app{query}\n"),
        )
        .unwrap();
        dir
    };
    let want = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top-from-submodule\n";

    let asked = case("asked", "?submodules=true");
    let out = ply(
        &asked,
        &["fetch", ".", "--write-lock", "--cache-dir", &cache],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = ply(&asked, &["render", ".", "--cache-dir", &cache]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want);
    if kubectl_available() {
        // git refuses file:// submodules unless told (since 2.38.1); kubectl's git too.
        let out = hermetic(Command::new("kubectl").arg("kustomize").arg(&asked))
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "protocol.file.allow")
            .env("GIT_CONFIG_VALUE_0", "always")
            .output()
            .unwrap();
        assert_eq!(text(&out.stdout), want, "{}", text(&out.stderr));
    }

    let default = case("default", "");
    let out = ply(
        &default,
        &["fetch", ".", "--write-lock", "--cache-dir", &cache],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("../vendor/sub/base"), "{err}");
    let _ = std::fs::remove_dir_all(&t);
}

/// A kustomization without remote bases gets no lock file.
#[test]
fn no_remote_bases_no_lock() {
    let t = temp("none");
    std::fs::write(t.join("kustomization.yaml"), "resources: [cm.yaml]\n").unwrap();
    std::fs::write(
        t.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    )
    .unwrap();
    let cache = t.join("cache").display().to_string();
    let out = ply(&t, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "no remote bases: no lock written\n");
    assert!(!t.join("ply.lock").exists());
    let _ = std::fs::remove_dir_all(&t);
}

/// Provenance through a fetched remote base (issue 29): `ply explain` names each file of the
/// base by its URL, the path in the repository and the commit the lock pins
/// (`HOST/REPO//PATH?ref=COMMIT`), with the line and column in that locked tree, never the
/// cache path. `testdata/remote/explain/`: the overlay, `expected.yaml` (recorded from
/// `kubectl-1.37 kustomize`, and compared with it again when it is on PATH) and `explain.txt`
/// (`{REPOS}`, `{BASE_V1_COMMIT}` for the temporary repositories and the pinned commit).
#[test]
fn explain_names_the_locked_url_and_path() {
    let t = temp("explain");
    let v1 = build_repos(&t);
    let repos = t.join("repos").display().to_string();
    let cache = t.join("cache").display().to_string();
    let data = testdata().join("explain");
    let dir = t.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let k = std::fs::read_to_string(data.join("kustomization.yaml"))
        .unwrap()
        .replace("{REPOS}", &repos);
    std::fs::write(dir.join("kustomization.yaml"), k).unwrap();
    let out = ply(&dir, &["fetch", ".", "--write-lock", "--cache-dir", &cache]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let placeholders = |s: String| {
        s.replace(&repos, "{REPOS}")
            .replace(&v1, "{BASE_V1_COMMIT}")
    };
    let expected_yaml = std::fs::read_to_string(data.join("expected.yaml")).unwrap();
    let render = ply(&dir, &["render", ".", "--cache-dir", &cache]);
    assert!(render.status.success(), "{}", text(&render.stderr));
    assert_eq!(text(&render.stdout), expected_yaml);
    let oracle = hermetic(
        Command::new("kubectl-1.37")
            .args(["kustomize", "."])
            .current_dir(&dir),
    )
    .output();
    match oracle {
        Ok(o) => {
            assert!(o.status.success(), "kubectl-1.37: {}", text(&o.stderr));
            assert_eq!(text(&o.stdout), expected_yaml, "kubectl-1.37 differs");
        }
        Err(_) => eprintln!("kubectl-1.37 not on PATH: compared with the recorded bytes only"),
    }
    // `ply explain` has no --cache-dir: the cache is named by PLY_CACHE_DIR.
    let explain = hermetic(
        Command::new(PLY)
            .args(["explain", ".", "Deployment/web", "--all"])
            .current_dir(&dir),
    )
    .env("PLY_CACHE_DIR", &cache)
    .output()
    .unwrap();
    assert!(explain.status.success(), "{}", text(&explain.stderr));
    let got = placeholders(text(&explain.stdout));
    let golden = data.join("explain.txt");
    if std::env::var_os("PLY_BLESS").is_some_and(|v| v != "0") {
        std::fs::write(&golden, &got).unwrap();
    }
    assert_eq!(got, std::fs::read_to_string(&golden).unwrap_or_default());
    let _ = std::fs::remove_dir_all(&t);
}
