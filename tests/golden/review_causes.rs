//! The causes of the golden reviews, tested by mutation: for every cause a golden review's
//! JSON names (file, line and column, at the head or, for a removed field, at the base), an
//! edit of the value at that place in a copy of that side's tree must change the value the
//! review reported for the field (the object found by kind, namespace and name without its
//! hash suffix, which the edit may change).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_yaml::Value;

use crate::review::{copy_tree, path_with_stand_ins};
use crate::support::{Failures, cases};

/// The rendered objects of `overlay` under `root` (`None` when the render fails), with the
/// stand-in helm first on PATH.
fn render(root: &Path, overlay: &str, extra: &[String]) -> Option<Vec<Value>> {
    use serde::Deserialize;
    // A GitOps target (`ply diff --gitops`) renders as its controller does.
    let target: Vec<String> = match (overlay.strip_prefix("flux:"), overlay.strip_prefix("argo:")) {
        (Some(ks), _) => vec![
            "--flux-kustomization".into(),
            ks.into(),
            "--repo-root".into(),
            ".".into(),
        ],
        (_, Some(app)) => vec!["--argo-application".into(), app.into(), ".".into()],
        _ => vec![overlay.into()],
    };
    let out = Command::new(env!("CARGO_BIN_EXE_ply"))
        .current_dir(root)
        .arg("render")
        .args(target)
        .args(extra)
        .env("NO_COLOR", "1")
        .env("PATH", path_with_stand_ins())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| Value::deserialize(d).ok())
        .collect()
}

/// A generated name without its hash suffix.
fn stem(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((s, h)) if h.len() == 10 && h.bytes().all(|b| b.is_ascii_alphanumeric()) => s,
        _ => name,
    }
}

fn text(v: &Value, path: &[&str]) -> String {
    let mut cur = v;
    for k in path {
        match cur.get(*k) {
            Some(x) => cur = x,
            None => return String::new(),
        }
    }
    cur.as_str().unwrap_or("").to_string()
}

/// The object of `objects` with this kind, namespace and name (hash suffixes aside).
fn object<'a>(objects: &'a [Value], kind: &str, ns: &str, name: &str) -> Option<&'a Value> {
    objects.iter().find(|o| {
        text(o, &["kind"]) == kind
            && text(o, &["metadata", "namespace"]) == ns
            && stem(&text(o, &["metadata", "name"])) == stem(name)
    })
}

/// The value at a change's path in kubectl's form (`.spec.containers[name="web"].image`,
/// `.metadata.labels.app.kubernetes.io/name`, `.args[="y"]`, `.ports[0]`).
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let m = cur.as_mapping()?;
            let (k, x) = m
                .iter()
                .filter_map(|(k, x)| Some((k.as_str()?, x)))
                .filter(|(k, _)| {
                    r.strip_prefix(*k)
                        .is_some_and(|a| a.is_empty() || a.starts_with(['.', '[']))
                })
                .max_by_key(|(k, _)| k.len())?;
            cur = x;
            rest = &r[k.len()..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find("]")?;
            let inner = &r[..end];
            let items = cur.as_sequence()?;
            let shown = |x: &Value| match x {
                Value::String(s) => format!("{s:?}"),
                other => serde_yaml::to_string(other)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            };
            cur = if let Ok(i) = inner.parse::<usize>() {
                items.get(i)?
            } else if let Some(want) = inner.strip_prefix('=') {
                items.iter().find(|x| shown(x) == want)?
            } else {
                items.iter().find(|x| {
                    inner.split(',').all(|kv| {
                        kv.split_once('=')
                            .is_some_and(|(k, want)| x.get(k).is_some_and(|v| shown(v) == want))
                    })
                })?
            };
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(cur)
}

/// `text` with the scalar written at `line`:`column` (1-based) edited: `9` added at its end
/// (before a closing quote; a block scalar's indicator: its first line's end instead).
fn mutate(text: &str, line: usize, column: usize) -> Option<String> {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let l = lines.get(line.checked_sub(1)?)?.clone();
    let start = l
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(l.len(), |(i, _)| i);
    let value = &l[start..];
    let end = if value.starts_with(['|', '>']) {
        let next = lines.get_mut(line)?;
        next.push('9');
        return Some(lines.join("\n"));
    } else if let Some(q @ ('"' | '\'')) = value.chars().next() {
        start + 1 + value[1..].find(q)?
    } else {
        let stop = [", ", "]", "}", " #"]
            .iter()
            .filter_map(|s| value.find(s))
            .min()
            .unwrap_or(value.len());
        start + stop
    };
    let mut edited = l.clone();
    edited.insert(end, '9');
    lines[line - 1] = edited;
    Some(lines.join("\n"))
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ply-cause-mutation-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_golden_cause_changes_its_field_when_mutated() {
    let mut failures = Failures::default();
    let (mut count, mut mutations) = (0, 0);
    for case in cases("review") {
        let Ok(report) = std::fs::read_to_string(case.join("expected.json")) else {
            continue;
        };
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        count += 1;
        let args = std::fs::read_to_string(case.join("args")).unwrap_or_default();
        // The render flags of the case (`--enable-helm`; the repository's URL of `--gitops`).
        let words: Vec<&str> = args.split_whitespace().collect();
        let mut extra: Vec<String> = Vec::new();
        for (i, w) in words.iter().enumerate() {
            match *w {
                "--enable-helm" => extra.push(w.to_string()),
                "--repo-url" => extra.extend([w.to_string(), words[i + 1].to_string()]),
                _ => {}
            }
        }
        for ov in report["overlays"].as_array().into_iter().flatten() {
            let overlay = ov["path"].as_str().unwrap_or("");
            for o in ov["objects"].as_array().into_iter().flatten() {
                for ch in o["changes"].as_array().into_iter().flatten() {
                    let cause = &ch["cause"];
                    if cause.is_null() {
                        continue;
                    }
                    mutations += 1;
                    let side = if cause["side"] == "base" {
                        "base"
                    } else {
                        "head"
                    };
                    let name = if side == "base" && o["renamedFrom"].is_string() {
                        o["renamedFrom"].as_str().unwrap_or("")
                    } else {
                        o["name"].as_str().unwrap_or("")
                    };
                    let (kind, ns) = (
                        o["kind"].as_str().unwrap(),
                        o["namespace"].as_str().unwrap(),
                    );
                    let path = ch["path"].as_str().unwrap();
                    let file = cause["file"].as_str().unwrap();
                    let (line, column) = (
                        cause["line"].as_u64().unwrap() as usize,
                        cause["column"].as_u64().unwrap() as usize,
                    );
                    // A moved object's base is the overlay it moved from.
                    let overlay = match o["movedFrom"].as_str() {
                        Some(from) if side == "base" => from,
                        _ => overlay,
                    };
                    let what = format!(
                        "{}: {overlay} {kind}/{name} {path}: {side} {file}:{line}:{column}",
                        case.display()
                    );
                    let tree = tempdir("t");
                    copy_tree(&case.join(side), &tree);
                    let value = |root: &Path| {
                        let objects = render(root, overlay, &extra)?;
                        Some(
                            object(&objects, kind, ns, name)
                                .and_then(|x| at(x, path))
                                .cloned(),
                        )
                    };
                    let Some(before) = value(&tree) else {
                        failures.fail(format!("{what}: the {side} does not render"));
                        continue;
                    };
                    let original = std::fs::read_to_string(tree.join(file)).unwrap_or_default();
                    let Some(edited) = mutate(&original, line, column) else {
                        failures.fail(format!("{what}: no such line and column"));
                        continue;
                    };
                    std::fs::write(tree.join(file), edited).unwrap();
                    match value(&tree) {
                        Some(after) if after != before => {}
                        Some(_) => failures.fail(format!(
                            "{what}: editing that place leaves the value as it was ({before:?})"
                        )),
                        None => failures.fail(format!("{what}: the edit breaks the render")),
                    }
                    let _ = std::fs::remove_dir_all(&tree);
                }
            }
        }
    }
    assert!(mutations > 20, "only {mutations} causes mutated");
    eprintln!("{mutations} causes mutated over {count} reviews");
    failures.finish("cause mutation", count);
}
