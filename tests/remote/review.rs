//! A review (`ply diff --base`) across a remote base bumped from tag `v1` to `v2`: a `file://`
//! repository and an application repository built here, each side's `ply.lock` pinning its
//! tag. Before any `ply fetch` the overlay is "not reviewed" (exit 1) with the commands that
//! fetch both sides; with the head fetched, "not fetched" with the command that fixes the base
//! (exit 2), never showing creations; after `ply fetch --all`
//! and `ply fetch --revision BASE --all` it reports the objects `kubectl kustomize` renders
//! differently at the two commits as updates, and nothing else, each change's cause the remote
//! base's file, which the pull request moved. Each side's render is checked
//! against `testdata/remote/review-bump/expected-{base,head}.yaml` (recorded from `kubectl
//! kustomize`, and compared with it again here whenever kubectl is on PATH, which clones the
//! `file://` URL itself); the Markdown report against `expected.md` (commit ids replaced by
//! `<base>`, `<head>` and `<v2>`, the remote repository's path by `<remote>`: they depend on
//! the temporary path the lock names).

use std::path::Path;
use std::process::{Command, Output};

use super::repos::{clone_bare, commit_tagged, git, hermetic, write};
use super::{PLY, kubectl_available, temp, text};

fn golden() -> std::path::PathBuf {
    super::testdata().join("review-bump")
}

/// The remote repository: tag `v1`, then tag `v2` (a new image, a new value, one object the
/// same).
fn remote_repo(t: &Path) -> String {
    let work = t.join("src/remote");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    write(
        &work.join("base/kustomization.yaml"),
        "resources:\n- deploy.yaml\n- cm.yaml\n- svc.yaml\n",
    );
    write(
        &work.join("base/svc.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
    );
    for (tag, image, release) in [("v1", "nginx:1.25", "one"), ("v2", "nginx:1.26", "two")] {
        write(
            &work.join("base/deploy.yaml"),
            &format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: {image}\n"
            ),
        );
        write(
            &work.join("base/cm.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  release: {release}\n"
            ),
        );
        commit_tagged(&work, tag);
    }
    clone_bare(&work, &t.join("repos/remote.git"))
}

fn ply_env(dir: &Path, cache: &Path, args: &[&str]) -> Output {
    hermetic(Command::new(PLY).args(args).current_dir(dir))
        .env("PLY_CACHE_DIR", cache)
        .output()
        .unwrap()
}

/// The rendered YAML documents by `kind/name`.
fn objects(yaml: &str) -> std::collections::BTreeMap<String, String> {
    yaml.split("\n---\n")
        .map(|doc| {
            let kind = doc.lines().find_map(|l| l.strip_prefix("kind: ")).unwrap();
            let name = doc
                .lines()
                .find_map(|l| l.strip_prefix("  name: "))
                .unwrap();
            (format!("{kind}/{name}"), doc.trim_end().to_string())
        })
        .collect()
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one scenario told in order: the cache, both sides, the review"
)]
fn review_of_a_remote_base_bumped_between_the_sides() {
    let t = temp("review-bump");
    let bare = remote_repo(&t);
    let app = t.join("app");
    std::fs::create_dir_all(&app).unwrap();
    git(&app, &["init", "-q", "-b", "main"]);
    let prod = app.join("overlays/prod");
    let kustomization = |tag: &str| {
        write(
            &prod.join("kustomization.yaml"),
            &format!("namespace: prod\nresources:\n- file://{bare}//base?ref={tag}\n"),
        );
    };
    // An overlay without remote bases, the same at both sides.
    write(
        &app.join("overlays/dev/kustomization.yaml"),
        "namespace: dev\nresources:\n- cm.yaml\n",
    );
    write(
        &app.join("overlays/dev/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dev\n",
    );
    // The author's cache: each side's lock written by `ply fetch DIR`, and committed.
    let author_cache = t.join("author-cache");
    for tag in ["v1", "v2"] {
        kustomization(tag);
        let out = ply_env(
            &app,
            &author_cache,
            &["fetch", "overlays/prod", "--write-lock"],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        git(&app, &["add", "-A"]);
        git(&app, &["commit", "-q", "-m", tag]);
    }
    let short = |rev: &str| {
        git(&app, &["rev-parse", "--short=12", rev])
            .trim()
            .to_string()
    };
    let (base, head) = (short("HEAD~1"), short("HEAD"));

    // CI: an empty cache.
    let cache = t.join("ci-cache");
    let review = |format: &str| {
        let out = ply_env(
            &app,
            &cache,
            &["diff", "--base", "HEAD~1", "--all", "--format", format],
        );
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };

    // Nothing fetched: it reads a changed file (the lock) and fails at both sides, so it is
    // not reviewed (exit 1, never 0), with the commands that fetch each side; never creations.
    let (code, summary, err) = review("summary");
    assert_eq!(code, Some(1), "{summary}{err}");
    assert!(summary.contains("NOT REVIEWED"), "{summary}");
    assert!(
        summary.contains("not fetched at working tree: run `ply fetch --all`"),
        "{summary}"
    );
    assert!(summary.contains("run `ply fetch --revision "), "{summary}");
    assert!(!summary.contains("create     "), "{summary}");

    // The head fetched: now the base is not, and the report names the command that fixes it.
    let out = ply_env(&app, &cache, &["fetch", "--all"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("fetched again (locked): "), "{said}");
    assert!(
        said.contains("overlays/prod/ply.lock: 1 remote base, 0 remote files in the cache"),
        "{said}"
    );
    let (code, json, err) = review("json");
    assert_eq!(code, Some(2), "{json}{err}");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let prod_report = &report["overlays"][1];
    assert_eq!(prod_report["path"], "overlays/prod");
    assert_eq!(prod_report["status"], "not-fetched", "{json}");
    assert_eq!(prod_report["objects"].as_array().map(Vec::len), Some(0));
    let error = prod_report["error"].as_str().unwrap();
    let fix = format!("ply fetch --revision {base} --all");
    assert!(
        error.contains(&format!(
            "not fetched at merge base of HEAD~1 ({base}): run `{fix}`"
        )),
        "{error}"
    );
    assert!(error.contains("its tree is not in the cache"), "{error}");

    // The command the report names, read from the lock at the base without a checkout.
    let args: Vec<&str> = fix.split(' ').skip(1).collect();
    let out = ply_env(&app, &cache, &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!(
            "overlays/prod/ply.lock at {base} ({base}): 1 remote base"
        )),
        "{said}"
    );
    assert_eq!(
        git(&app, &["status", "--porcelain"]),
        "",
        "nothing written to the working tree"
    );

    // Each side renders as kubectl does at its commit.
    let mut rendered = Vec::new();
    for (rev, file) in [
        ("HEAD~1", "expected-base.yaml"),
        ("HEAD", "expected-head.yaml"),
    ] {
        let checkout = t.join(format!("checkout-{file}"));
        git(
            &app,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                &checkout.display().to_string(),
                rev,
            ],
        );
        let dir = checkout.join("overlays/prod");
        let out = ply_env(&dir, &cache, &["render", "."]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let got = text(&out.stdout);
        let expected = golden().join(file);
        if std::env::var_os("PLY_BLESS").is_some() {
            std::fs::write(&expected, &got).unwrap();
        }
        assert_eq!(got, std::fs::read_to_string(&expected).unwrap(), "{rev}");
        if kubectl_available() {
            let out = hermetic(Command::new("kubectl").arg("kustomize").arg(&dir))
                .output()
                .unwrap();
            assert_eq!(
                text(&out.stdout),
                got,
                "kubectl at {rev}: {}",
                text(&out.stderr)
            );
        } else {
            eprintln!("kubectl not on PATH: comparing with the bytes recorded from kubectl only");
        }
        rendered.push(objects(&got));
    }

    // Both fetched: the bump is reported as updates of what differs, and nothing else.
    let (code, json, err) = review("json");
    assert_eq!(code, Some(1), "{json}{err}");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let prod_report = &report["overlays"][1];
    assert_eq!(prod_report["status"], "compared", "{json}");
    let updated: Vec<String> = prod_report["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            assert_eq!(o["action"], "update", "{o}");
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["name"].as_str().unwrap()
            )
        })
        .collect();
    let differing: Vec<String> = rendered[0]
        .iter()
        .filter(|(id, doc)| rendered[1].get(*id) != Some(*doc))
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(rendered[0].len(), rendered[1].len());
    let mut sorted = updated.clone();
    sorted.sort();
    assert_eq!(sorted, differing);
    assert_eq!(differing.len(), 2, "the Deployment and the ConfigMap");
    assert_eq!(report["totals"]["unchanged"], 1, "{json}");

    let (code, markdown, _) = review("markdown");
    assert_eq!(code, Some(1));
    // The cause of each change is the remote base's file at the commit the head's lock pins,
    // and the pull request moved the base: both said.
    let v2 = git(&t.join("src/remote"), &["rev-parse", "v2"])
        .trim()
        .to_string();
    assert!(
        markdown.contains(&format!(
            "(set by resource at `file://{bare}//base/deploy.yaml?ref={v2}:10`, from the remote base `file://{bare}`, which this pull request moved)"
        )),
        "{markdown}"
    );
    let markdown = markdown
        .replace(&base, "<base>")
        .replace(&head, "<head>")
        .replace(&v2, "<v2>")
        .replace(&bare, "<remote>");
    let expected = golden().join("expected.md");
    if std::env::var_os("PLY_BLESS").is_some() {
        std::fs::write(&expected, &markdown).unwrap();
    }
    assert_eq!(markdown, std::fs::read_to_string(&expected).unwrap());
    let _ = std::fs::remove_dir_all(&t);
}

/// A repository without lock files: a remote base whose `?ref=` moves from `v1` to `v2`.
/// Before any fetch the overlay is not reviewed (exit 1, never "broken by this change");
/// `ply fetch --all` fetches the head's remote bases at the refs their URLs name and `ply
/// fetch --revision BASE --all` the base's, writing no lock; then the review compares the two
/// renders, each equal to `kubectl kustomize`'s at its commit when kubectl is on PATH.
#[test]
fn review_of_an_unlocked_remote_base_moved_between_refs() {
    let t = temp("review-unlocked");
    let bare = remote_repo(&t);
    let app = t.join("app");
    std::fs::create_dir_all(&app).unwrap();
    git(&app, &["init", "-q", "-b", "main"]);
    let prod = app.join("overlays/prod");
    for tag in ["v1", "v2"] {
        write(
            &prod.join("kustomization.yaml"),
            &format!("namespace: prod\nresources:\n- file://{bare}//base?ref={tag}\n"),
        );
        git(&app, &["add", "-A"]);
        git(&app, &["commit", "-q", "-m", tag]);
    }
    let base = git(&app, &["rev-parse", "--short=12", "HEAD~1"])
        .trim()
        .to_string();
    let cache = t.join("cache");
    let review = || {
        let out = ply_env(
            &app,
            &cache,
            &["diff", "--base", "HEAD~1", "--all", "--format", "summary"],
        );
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, summary, err) = review();
    assert_eq!(code, Some(1), "{summary}{err}");
    assert!(summary.contains("NOT REVIEWED"), "{summary}");
    assert!(!summary.contains("broken by this change"), "{summary}");
    assert!(summary.contains("run `ply fetch --all`"), "{summary}");
    assert!(
        summary.contains(&format!("run `ply fetch --revision {base} --all`")),
        "{summary}"
    );

    // The head, then the base, at the refs their URLs name; no lock is written.
    let out = ply_env(&app, &cache, &["fetch", "--all"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("overlays/prod (no ply.lock: at the refs its URLs name): 1 remote base"),
        "{}",
        text(&out.stderr)
    );
    let out = ply_env(&app, &cache, &["fetch", "--revision", &base, "--all"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!prod.join("ply.lock").exists());
    assert_eq!(git(&app, &["status", "--porcelain"]), "");

    let (code, summary, err) = review();
    assert_eq!(code, Some(1), "{summary}{err}");
    assert!(
        summary.contains(
            ".spec.template.spec.containers[name=\"web\"].image: nginx:1.25 → nginx:1.26"
        ),
        "{summary}"
    );
    assert!(summary.contains(".data.release: one → two"), "{summary}");
    assert!(!summary.contains("NOT"), "{summary}");

    // Each side's render is kubectl's at its commit (kubectl clones the file:// URL itself).
    if kubectl_available() {
        for (rev, tag) in [("HEAD~1", "v1"), ("HEAD", "v2")] {
            git(&app, &["checkout", "-q", rev]);
            let ours = ply_env(&app, &cache, &["render", "overlays/prod"]);
            assert!(ours.status.success(), "{tag}: {}", text(&ours.stderr));
            let theirs = Command::new("kubectl")
                .args(["kustomize", "overlays/prod"])
                .current_dir(&app)
                .output()
                .unwrap();
            assert!(theirs.status.success(), "{}", text(&theirs.stderr));
            assert_eq!(
                objects(&text(&ours.stdout)),
                objects(&text(&theirs.stdout)),
                "{tag}"
            );
        }
        git(&app, &["checkout", "-q", "main"]);
    }

    // Asked for, the lock is written.
    let out = ply_env(&app, &cache, &["fetch", "overlays/prod", "--write-lock"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(prod.join("ply.lock").exists());
}
