//! The read-set walk (`ply::render::reads`, used by `ply diff --changed-only`) against recorded
//! renders: for every kustomization where the walk gives a list, every path the render asks
//! its file system about (read, looked up, resolved, listed; through `fs::record::Recording`)
//! must be in that list — compared by canonical path, or by normalized path where nothing is
//! there. A path missing from the list would let `--changed-only` call an overlay unchanged
//! while a file it reads changed. Every case of `testdata/render/`, and — run explicitly by
//! `.ci/run`, as it needs `../shared` — every case of the kustomize and regression corpora.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ply::Warnings;
use ply::fs::{DiskFs, Fs, normalize};
use ply::render::{RenderOptions, render_with};
use ply::testing::Recording;
use ply::testing::reads;

#[derive(Default, Debug)]
struct Tally {
    /// Kustomizations tried, walked (the walk gave a list), and walked and rendered.
    tried: usize,
    walked: usize,
    checked: usize,
    failures: Vec<String>,
}

fn key(path: &Path) -> PathBuf {
    DiskFs
        .canonicalize(path)
        .unwrap_or_else(|_| normalize(path))
}

/// Walks and renders the kustomization in `dir`, then checks the recorded paths. On a thread
/// with the stack every ply command has (`limits::with_deep_stack`): some cases nest 10,000
/// levels deep.
fn check(dir: &Path, tally: &mut Tally) {
    ply::with_deep_stack(|| check_here(dir, tally));
}

fn check_here(dir: &Path, tally: &mut Tally) {
    tally.tried += 1;
    let opts = RenderOptions::default();
    let Some(listed) = reads(&DiskFs, dir, &opts) else {
        return;
    };
    tally.walked += 1;
    let listed: BTreeSet<PathBuf> = listed.iter().map(|p| key(p)).collect();
    let rec = Recording::new(&DiskFs);
    if render_with(&rec, dir, &opts, &mut Warnings::default()).is_err() {
        return;
    }
    tally.checked += 1;
    let missing: Vec<PathBuf> = rec
        .into_paths()
        .iter()
        .map(|p| key(p))
        .filter(|p| !listed.contains(p))
        .collect();
    if !missing.is_empty() {
        tally.failures.push(format!(
            "{}: the render asked about paths the walk does not list: {missing:?}",
            dir.display()
        ));
    }
}

fn report(what: &str, tally: &Tally, at_least: usize) {
    eprintln!("{what}: {tally:?}");
    assert!(
        tally.failures.is_empty(),
        "{what}: {} kustomizations:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
    // Not vacuous: the walk must give a list for most cases, and the renders must succeed.
    assert!(
        tally.checked >= at_least,
        "{what}: only {} of {} kustomizations were walked and rendered (expected at least {at_least})",
        tally.checked,
        tally.tried
    );
}

fn dirs_in(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn the_walk_lists_every_path_a_render_asks_about_in_testdata() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/render");
    let mut tally = Tally::default();
    for case in dirs_in(&root) {
        check(&case.join("input"), &mut tally);
    }
    report("testdata/render", &tally, 80);
}

#[test]
fn the_walk_gives_no_list_where_it_cannot_know() {
    // A generator plugin reads its own configuration's files: only a render can tell.
    let dir = std::env::temp_dir().join(format!("ply-read-set-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kustomization.yaml"), "generators:\n- gen.yaml\n").unwrap();
    assert_eq!(reads(&DiskFs, &dir, &RenderOptions::default()), None);
    // A resource that names nothing: the render reports it.
    std::fs::write(
        dir.join("kustomization.yaml"),
        "resources:\n- missing.yaml\n",
    )
    .unwrap();
    assert_eq!(reads(&DiskFs, &dir, &RenderOptions::default()), None);
    // A plain one: its kustomization names, its resource, and the directory.
    std::fs::write(dir.join("kustomization.yaml"), "resources:\n- cm.yaml\n").unwrap();
    std::fs::write(
        dir.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    )
    .unwrap();
    let listed = reads(&DiskFs, &dir, &RenderOptions::default()).unwrap();
    let canonical = DiskFs.canonicalize(&dir).unwrap();
    for want in [
        "kustomization.yaml",
        "kustomization.yml",
        "Kustomization",
        "cm.yaml",
    ] {
        assert!(
            listed.contains(&canonical.join(want)),
            "{want} not in {listed:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The kustomize corpus and the regression cases under `../shared` (run by `.ci/run`).
#[test]
#[ignore = "needs ../shared (run with --ignored)"]
fn the_walk_lists_every_path_a_render_asks_about_in_the_shared_corpora() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance");
    let mut tally = Tally::default();
    for case in dirs_in(&shared.join("kustomize/cases")) {
        let spec = std::fs::read_to_string(case.join("case.json")).unwrap_or_default();
        let dir = spec
            .split("\"dir\": \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or(".");
        check(&case.join("input").join(dir), &mut tally);
    }
    for case in dirs_in(&shared.join("regressions")) {
        if case.join("kustomization.yaml").is_file() {
            check(&case, &mut tally);
        }
    }
    report("../shared corpora", &tally, 100);
}
