//! Golden cases of field provenance (issue 29): every directory under `testdata/explain/`
//! holds a kustomization tree in `input/` and a `queries` file, one line per expectation:
//! `EXPECTED-FILE SUBCOMMAND ARGS…`, run in the case directory (`explain …` or
//! `render … --provenance=comments`); stdout must equal the file. A `--provenance=comments`
//! output must also parse back as the same objects as the plain render.
//!
//! The mutation test makes every origin checkable: for each output field whose newest origin
//! is a literal in a file (a scalar written at that line and column), it appends `9` to that
//! literal in a copy of the tree, renders again, and requires that this field changed, and that
//! every field that changed has the same newest origin, or is derived from one that changed (a
//! hash suffix, a name reference, a replacement, a var). Identity fields and list merge keys
//! (`apiVersion`, `kind`, `metadata.name`, `metadata.namespace`, a list entry's `name`) are
//! not mutated: changing them changes which patches and transformers select the object.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Failures, cases};

/// `PATH` with `testdata/bin` first: its `helm` is the stand-in the helm case runs (as in
/// `tests/golden/render.rs`).
fn path_with_stand_ins() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bin");
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).expect("PATH")
}

fn run(cwd: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ply"))
        .current_dir(cwd)
        .args(args)
        .env("PATH", path_with_stand_ins())
        .env("NO_COLOR", "1")
        .env_remove("PLY_STRICT")
        .env_remove("KUSTOMIZE_ENABLE_MANAGEDBY_LABEL")
        .output()
        .unwrap_or_else(|e| panic!("running ply: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The documents of a YAML stream, or the parse error.
fn docs(text: &str) -> Result<Vec<serde_yaml::Value>, String> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_yaml::Value::deserialize(d).map_err(|e| e.to_string()))
        .collect()
}

/// The rendered values of a case are kustomize's: a `render` query without
/// `--provenance=comments` (its expected file recorded from `kubectl-1.37 kustomize`, v5.8.1,
/// ply's default) is also asked of `kubectl-1.37` when it is on PATH. `None`: not on PATH.
fn oracle(cwd: &Path, args: &[&str]) -> Option<(bool, String, String)> {
    let mut cmd = Command::new("kubectl-1.37");
    cmd.current_dir(cwd)
        .arg("kustomize")
        .args(&args[1..])
        .env("PATH", path_with_stand_ins());
    let out = cmd.output().ok()?;
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn explain_goldens() {
    let all = cases("explain");
    let mut failures = Failures::default();
    let mut renders = 0;
    let mut oracle_missing = false;
    for case in &all {
        let queries = std::fs::read_to_string(case.join("queries")).expect("queries file");
        for line in queries.lines().filter(|l| !l.trim().is_empty()) {
            let mut words = line.split_whitespace();
            let expected = words.next().expect("expected file");
            let args: Vec<&str> = words.collect();
            let (ok, stdout, stderr) = run(case, &args);
            if !ok {
                failures.fail(format!("{}: `{line}` failed: {stderr}", case.display()));
                continue;
            }
            failures.check(case, &case.join(expected), &stdout);
            if args.first() == Some(&"render") && !args.contains(&"--provenance=comments") {
                renders += 1;
                match oracle(case, &args) {
                    Some((true, out, _)) if out == stdout => {}
                    Some((_, out, err)) => failures.fail(format!(
                        "{}: `{line}`: kubectl-1.37 kustomize prints otherwise:\n{out}{err}",
                        case.display()
                    )),
                    None => oracle_missing = true,
                }
            }
            if args.contains(&"--provenance=comments") {
                let plain: Vec<&str> = args
                    .iter()
                    .copied()
                    .filter(|a| *a != "--provenance=comments")
                    .collect();
                let (_, plain_out, _) = run(case, &plain);
                assert!(stdout.contains(" # "), "{line}: no comment written");
                assert!(docs(&plain_out).is_ok());
                assert_eq!(
                    docs(&stdout),
                    docs(&plain_out),
                    "{}: `{line}` does not read as the plain render",
                    case.display()
                );
            }
        }
    }
    // Every case renders through the oracle's expectations.
    assert_eq!(renders, all.len(), "a case without a `render` query");
    if oracle_missing {
        eprintln!(
            "kubectl-1.37 not on PATH: renders compared with the bytes recorded from it only"
        );
    }
    failures.finish("explain", all.len());
}

/// A place in a file: its path, 1-based line and column.
type At = (String, u64, u64);

/// One field of `ply explain --all --format json`: (object, path) → its value and origins.
#[derive(Clone, Debug)]
struct Field {
    value: serde_json::Value,
    /// The newest origin's place (`None` when no text says it) and step.
    newest: Option<(Option<At>, String)>,
    /// Where the newest origin's `source` says the value it read was set.
    source: Option<At>,
    /// The places of the older origins, newest first.
    older: Vec<At>,
}
type Fields = BTreeMap<(String, String), Field>;

fn at_of(x: &serde_json::Value) -> Option<At> {
    Some((
        x["file"].as_str()?.to_string(),
        x["line"].as_u64()?,
        x["column"].as_u64()?,
    ))
}

fn fields(dir: &Path, target: &str) -> Option<Fields> {
    let (ok, stdout, _) = run(dir, &["explain", target, "--all", "--format", "json"]);
    if !ok {
        return None;
    }
    let list: serde_json::Value = serde_json::from_str(&stdout).expect("explain json");
    let mut out = Fields::new();
    for f in list.as_array().expect("a list") {
        let o = &f["object"];
        // Objects are known by their kind and the place of their `kind` field's first
        // origin, which a mutation of a value never moves; the name may change.
        let key = o["kind"].as_str().unwrap_or("").to_string();
        let origins = f["origins"].as_array().cloned().unwrap_or_default();
        let newest = origins
            .first()
            .map(|x| (at_of(x), x["step"].as_str().unwrap_or("").to_string()));
        let source = origins.first().and_then(|x| at_of(&x["source"]));
        let older = origins.iter().skip(1).filter_map(at_of).collect();
        out.insert(
            (
                format!("{key}#{}", object_index(&list, o)),
                f["path"].as_str().unwrap_or("").to_string(),
            ),
            Field {
                value: f["value"].clone(),
                newest,
                source,
                older,
            },
        );
    }
    Some(out)
}

/// The position of an object among the distinct objects of the list, per kind: stable when
/// no name or order changes.
fn object_index(list: &serde_json::Value, o: &serde_json::Value) -> usize {
    let mut seen: Vec<&serde_json::Value> = Vec::new();
    for f in list.as_array().unwrap() {
        let x = &f["object"];
        if x["kind"] == o["kind"] && !seen.contains(&x) {
            seen.push(x);
        }
    }
    seen.iter().position(|x| *x == o).unwrap_or(0)
}

const IDENTITY: [&str; 4] = ["apiVersion", "kind", "metadata.name", "metadata.namespace"];
/// The merge keys of the lists the trees use: of the built-in schema, and `id` of the
/// custom resource of `testdata/explain/merge-key-custom` (its `openapi:` schema).
const MERGE_KEYS: [&str; 9] = [
    "name",
    "containerPort",
    "mountPath",
    "ip",
    "port",
    "key",
    "topologyKey",
    "whenUnsatisfiable",
    "id",
];
const DERIVED: [&str; 4] = ["hashSuffix", "nameReference", "replacement", "var"];

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// Appends `9` to the scalar at 1-based `line`:`column` of `text` (inside its quotes when
/// quoted), when it is a literal of `value`: its text is part of the value's (`"1.27"` of
/// `nginx:1.27`), or with `whole` the value's whole text; `None` otherwise.
fn mutate(
    text: &str,
    line: u64,
    column: u64,
    value: &serde_json::Value,
    whole: bool,
) -> Option<String> {
    let start = text
        .split_inclusive('\n')
        .take(line as usize - 1)
        .map(str::len)
        .sum::<usize>();
    let l = text[start..].split('\n').next()?;
    let at = start + l.char_indices().nth(column as usize - 1)?.0;
    let rest = &text[at..start + l.len()];
    let end = match rest.chars().next()? {
        '"' | '\'' => {
            let q = rest.chars().next()?;
            1 + rest[1..].find(q)?
        }
        '[' | '{' | '|' | '>' | '&' | '*' | '!' | '#' => return None,
        _ => rest.find(" #").unwrap_or(rest.trim_end().len()),
    };
    if end == 0 {
        return None;
    }
    let token = rest[..end].trim_matches(['"', '\'']);
    let value = match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => value.to_string(),
        _ => return None,
    };
    if token.is_empty() || !value.contains(token) || (whole && token != value) {
        return None;
    }
    Some(format!("{}9{}", &text[..at + end], &text[at + end..]))
}

/// What a mutation of one place must do: the field whose newest origin it is must change
/// (`newest`), and the fields for which it is an older origin holding the whole value (a
/// later step wrote the same value over it) must not (`older`).
#[derive(Default)]
struct Plan {
    newest: Option<((String, String), serde_json::Value)>,
    older: Vec<((String, String), serde_json::Value)>,
}

/// Whether the place `at` under `root` is a literal of `value` (see [`mutate`]).
fn is_literal(root: &Path, at: &At, value: &serde_json::Value) -> bool {
    std::fs::read_to_string(root.join(&at.0))
        .ok()
        .and_then(|text| mutate(&text, at.1, at.2, value, false))
        .is_some()
}

/// Whether a field's path is one the test does not mutate: an identity field or a list
/// entry's merge key (changing them changes which patches and transformers select it).
fn picks(path: &str) -> bool {
    let last = path.rsplit(['.', ']']).next().unwrap_or("");
    IDENTITY.contains(&path) || (path.contains('[') && MERGE_KEYS.contains(&last))
}

/// Mutates every literal origin of `target` (a directory under `root`), at most `limit`
/// newest origins, then at most `limit` places that are only older origins (of fields a later
/// step wrote with the same value).
#[allow(
    clippy::too_many_lines,
    reason = "a linear plan: pick the places, mutate each, check the fields it must change"
)]
fn mutation_case(root: &Path, target: &str, limit: usize, failures: &mut Failures) -> usize {
    let Some(before) = fields(root, target) else {
        return 0;
    };
    let mut plans: BTreeMap<At, Plan> = BTreeMap::new();
    // The places in the order of the fields that name them.
    let mut order: Vec<At> = Vec::new();
    for (key, f) in &before {
        let Some((at, step)) = &f.newest else {
            continue;
        };
        if picks(&key.1) || DERIVED.contains(&step.as_str()) {
            continue;
        }
        // The newest origin's place, and the place of what it read (a JSON 6902 `move`'s
        // source field is gone from the output): a change there must change the field.
        for at in [at, &f.source].into_iter().flatten() {
            if !plans.contains_key(at) {
                order.push(at.clone());
            }
            let plan = plans.entry(at.clone()).or_default();
            if plan.newest.is_none() {
                plan.newest = Some((key.clone(), f.value.clone()));
            }
        }
        // Only after a later step that wrote the value from a literal of its own.
        if !at.as_ref().is_some_and(|a| is_literal(root, a, &f.value)) {
            continue;
        }
        for old in &f.older {
            if Some(old) != at.as_ref() && f.source.as_ref() != Some(old) {
                if !plans.contains_key(old) {
                    order.push(old.clone());
                }
                plans
                    .entry(old.clone())
                    .or_default()
                    .older
                    .push((key.clone(), f.value.clone()));
            }
        }
    }
    let (mut newest_done, mut older_done) = (0, 0);
    // The places that are newest origins first, then those that are only older ones.
    order.sort_by_key(|at| plans[at].newest.is_none());
    for at in &order {
        let plan = &plans[at];
        let (file, line, column) = at;
        let (first, whole) = match (&plan.newest, plan.older.first()) {
            (Some(n), _) if newest_done < limit => (n, false),
            (None, Some(o)) if older_done < limit => (o, true),
            _ => continue,
        };
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let Some(mutated) = mutate(&text, *line, *column, &first.1, whole) else {
            continue;
        };
        if whole {
            older_done += 1;
        } else {
            newest_done += 1;
        }
        let done = newest_done + older_done;
        let tmp = tempdir(&format!("mut-{done}"));
        copy_tree(root, &tmp);
        std::fs::write(tmp.join(file), mutated).unwrap();
        let Some(after) = fields(&tmp, target) else {
            // The mutated literal no longer renders (a number made invalid where one is
            // needed): the origin still pointed at a literal that matters.
            let _ = std::fs::remove_dir_all(&tmp);
            continue;
        };
        let _ = std::fs::remove_dir_all(&tmp);
        let mine = Some((file.clone(), *line, *column));
        let shown = format!("{file}:{line}:{column}");
        if let Some(((obj, path), value)) = &plan.newest
            && !whole
        {
            match after.get(&(obj.clone(), path.clone())) {
                Some(f) if f.value != *value => {}
                _ => failures.fail(format!(
                    "{}: {obj} {path} (origin {shown}) did not change when its literal did",
                    root.display()
                )),
            }
        }
        // A later step wrote the same value over this literal: it is not the field's origin
        // any more, so the field keeps its value (`whole`: the literal was the whole value).
        for ((obj, path), value) in &plan.older {
            if whole
                && after
                    .get(&(obj.clone(), path.clone()))
                    .is_some_and(|f| f.value != *value)
            {
                failures.fail(format!(
                    "{}: {obj} {path} changed when {shown} did, an older origin a later step wrote over",
                    root.display()
                ));
            }
        }
        let (obj, path) = &first.0;
        // A label or annotation is what selectors read: changing it may change which objects
        // a step selects, so fields may appear or disappear (not change value) then.
        let selector_input =
            path.starts_with("metadata.labels") || path.starts_with("metadata.annotations");
        let is_derived = |f: &Field| {
            f.newest
                .as_ref()
                .is_some_and(|o| DERIVED.contains(&o.1.as_str()))
        };
        for (k, f) in &before {
            let changed = after.get(k).is_none_or(|w| w.value != f.value);
            // Its newest origin is this place, or read the value set here (a JSON 6902 copy
            // or move of this field).
            let same = f.newest.as_ref().and_then(|o| o.0.clone()) == mine || f.source == mine;
            let derived = is_derived(f) || after.get(k).is_some_and(is_derived);
            let selected = selector_input && !after.contains_key(k);
            if changed && !same && !derived && !selected {
                failures.fail(format!(
                    "{}: mutating {shown} (origin of {obj} {path}) changed {} {} whose origin is {:?}",
                    root.display(),
                    k.0,
                    k.1,
                    f.newest
                ));
            }
        }
        for (k, f) in &after {
            if !before.contains_key(k) && !selector_input && !is_derived(f) {
                failures.fail(format!(
                    "{}: mutating {shown} (origin of {obj} {path}) made {} {} appear",
                    root.display(),
                    k.0,
                    k.1
                ));
            }
        }
    }
    newest_done + older_done
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ply-mutation-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn mutating_an_origin_changes_exactly_its_fields() {
    let mut failures = Failures::default();
    let mut mutations = 0;
    let mut count = 0;
    // The explain cases: every literal origin, of the overlay (`input/prod`) or of `input`.
    // Not the helm case: its stand-in helm prints fixed manifests whatever the templates say,
    // so a template's literal cannot change the output (kubectl runs the same stand-in).
    for case in cases("explain") {
        if case.file_name().is_some_and(|n| n == "helm") {
            continue;
        }
        let dir = if case.join("input/prod").is_dir() {
            "input/prod"
        } else {
            "input"
        };
        count += 1;
        mutations += mutation_case(&case, dir, usize::MAX, &mut failures);
    }
    // The render goldens without flags or stand-in programs: a few literals each, bounded.
    for case in cases("render") {
        let plain = !case.join("args").exists()
            && case.join("expected.yaml").exists()
            && !case.join("v5.5.0").exists()
            && !case.join("v5.8.1").exists();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if !plain
            || name.starts_with("helm")
            || name.starts_with("plugin")
            || name.contains("remote")
        {
            continue;
        }
        count += 1;
        // With provenance on, the render is the same objects, and with comments valid YAML.
        let (ok, commented, stderr) = run(&case, &["render", "input", "--provenance=comments"]);
        let expected = std::fs::read_to_string(case.join("expected.yaml")).unwrap();
        let read = docs(&commented);
        // serde_yaml stops at 128 levels: the deep cases' expected output is not readable to
        // it either, so only whether the render succeeded is checked for them.
        let readable = docs(&expected).is_ok();
        if !ok || (readable && (read.is_err() || read != docs(&expected))) {
            failures.fail(format!(
                "{}: --provenance=comments does not read as expected.yaml: {stderr} {:?}",
                case.display(),
                read.err()
            ));
        }
        mutations += mutation_case(&case, "input", 3, &mut failures);
    }
    assert!(mutations > 100, "only {mutations} mutations ran");
    eprintln!("{mutations} mutations over {count} trees");
    failures.finish("mutation", count);
}

/// The mutation test on a generated tree: `../shared/bench/gen_tree.py` (2 apps, 1
/// environment) written into a temporary directory at test time, then 12 literal origins of
/// each of its two app overlays mutated (an overlay has a strategic merge patch, JSON 6902
/// patches from a file and inline, namespace, a prefix or suffix, labels, annotations, images,
/// replicas, generators with literals and files, merged by the overlay; the literals are taken
/// in the order of their fields). Bounded: 24 renders of one overlay and their copies. Needs `../shared` and python3 (`.ci/run` runs it when `../shared` is there).
#[test]
#[ignore = "needs ../shared/bench/gen_tree.py and python3 (run with --ignored)"]
fn mutation_on_a_generated_tree() {
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/gen_tree.py");
    let tree = tempdir("generated");
    let status = Command::new("python3")
        .arg(&generator)
        .arg(&tree)
        .args(["--apps", "2", "--envs", "1", "--force"])
        .status()
        .expect("python3 runs");
    assert!(status.success(), "gen_tree.py failed");
    let mut overlays: Vec<PathBuf> = walkdir::WalkDir::new(tree.join("apps"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "kustomization.yaml")
        .map(|e| e.path().parent().unwrap().to_path_buf())
        .filter(|d| d.parent().is_some_and(|p| p.ends_with("overlays")))
        .collect();
    overlays.sort();
    assert_eq!(overlays.len(), 2, "{overlays:?}");
    let mut failures = Failures::default();
    let mut mutations = 0;
    for dir in &overlays {
        let rel = dir
            .strip_prefix(&tree)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        mutations += mutation_case(&tree, &rel, 12, &mut failures);
    }
    let _ = std::fs::remove_dir_all(&tree);
    assert!(mutations >= 20, "only {mutations} mutations ran");
    eprintln!("{mutations} mutations over {} overlays", overlays.len());
    failures.finish("mutation (generated tree)", overlays.len());
}

/// `ply render --provenance=comments` reads back as the plain render, for every root of every
/// golden tree (each directory under `testdata/` holding a kustomization, rendered with helm
/// and plugins allowed, the stand-in helm first on PATH): never a comment inside a value
/// written over several lines. A root the plain render refuses must be refused with comments
/// too. Documents serde_yaml cannot read (deeper than 128 levels) are compared as text
/// without the comments.
#[test]
fn provenance_comments_read_as_the_plain_render_for_every_golden_root() {
    let testdata = crate::support::testdata("");
    let mut roots: Vec<PathBuf> = walkdir::WalkDir::new(&testdata)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name().to_string_lossy();
            n == "kustomization.yaml" || n == "kustomization.yml" || n == "Kustomization"
        })
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .collect();
    roots.sort();
    roots.dedup();
    let mut failures = Failures::default();
    let (mut compared, mut refused) = (0, 0);
    for root in &roots {
        let dir = root.to_string_lossy().into_owned();
        let flags = ["--enable-helm", "--enable-alpha-plugins", "--enable-exec"];
        let mut plain_args = vec!["render", dir.as_str()];
        plain_args.extend(flags);
        let (ok, plain, _) = run(&testdata, &plain_args);
        let mut commented_args = plain_args.clone();
        commented_args.push("--provenance=comments");
        let (ok2, commented, err2) = run(&testdata, &commented_args);
        if !ok {
            refused += 1;
            if ok2 {
                failures.fail(format!("{dir}: only the render with comments succeeds"));
            }
            continue;
        }
        compared += 1;
        if !ok2 {
            failures.fail(format!("{dir}: the render with comments fails: {err2}"));
            continue;
        }
        let same = match (docs(&plain), docs(&commented)) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), _) => strip_comments(&commented) == plain,
            (Ok(_), Err(e)) => {
                failures.fail(format!(
                    "{dir}: the render with comments does not parse: {e}"
                ));
                continue;
            }
        };
        if !same {
            failures.fail(format!(
                "{dir}: the render with comments reads as other objects"
            ));
        }
    }
    assert!(compared > 300, "only {compared} roots rendered");
    eprintln!("{compared} roots compared, {refused} refused by both renders");
    failures.finish("provenance comments", roots.len());
}

/// The text without the ` # …` comments `--provenance=comments` appends.
fn strip_comments(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| match l.find(" # ") {
            Some(i) if l[i..].contains(':') => {
                let nl = if l.ends_with('\n') { "\n" } else { "" };
                format!("{}{nl}", &l[..i])
            }
            _ => l.to_string(),
        })
        .collect()
}
