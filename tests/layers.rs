//! The layering rule of `docs/layers.txt`, checked on the source (issue #26, step 7): no module
//! imports one of a layer above its own, the top-level modules import each other without a
//! cycle, and the files of one folder do too.
//!
//! An import is any path that names another module: `use crate::x::…`, `use crate::{a, b}`
//! groups, `super::…` paths (resolved against the file's place), and fully qualified
//! `crate::x::y` paths in code. Comments, string literals and `#[cfg(test)]` modules are left
//! out (tests may use anything). Inside a folder, `mod.rs` is the folder's face: its files use
//! the types it defines or re-exports and it declares them, so edges to and from it are not
//! cycles; edges between its other files are.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles between files of one folder that are known and still to be removed (none: the last,
/// the render folder's read-ahead thread and its shared parse store, went in issue #26). Each
/// entry fails the test once the cycle is gone, so that the list only shrinks.
const KNOWN_FILE_CYCLES: &[(&str, &str)] = &[];

/// One file of `src/`: its module path (`yaml/fast`, `render`, `main`) and text.
struct File {
    module: Vec<String>,
    /// Whether it is a folder's `mod.rs` (or `lib.rs`/`main.rs`).
    is_face: bool,
    path: PathBuf,
    text: String,
}

/// An import found in a file: where, and the absolute module path it names.
struct Import {
    line: usize,
    path: Vec<String>,
}

fn src_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            src_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn module_of(src: &Path, path: &Path) -> (Vec<String>, bool) {
    let rel = path.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let face = matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    );
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    (parts, face)
}

/// The text with comments and string/char literals blanked (newlines kept, so that line
/// numbers stay right).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if b[i] == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#')) && !ident_byte(b, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let end = b[j + 1..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| j + 1 + p + close.len());
            for &c in &b[i..end] {
                blank(&mut out, c);
            }
            i = end;
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            out.push(b' ');
            i += 1;
        } else if b[i] == b'\'' && (b.get(i + 2) == Some(&b'\'') || (b.get(i + 1) == Some(&b'\\')))
        {
            // A char literal ('a', '\n', '\u{..}'); lifetimes have no closing quote.
            let end = b[i + 1..]
                .iter()
                .position(|&c| c == b'\'')
                .map_or(b.len(), |p| i + 2 + p);
            for &c in &b[i..end] {
                blank(&mut out, c);
            }
            i = end;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn ident_byte(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// The code with every `#[cfg(test)]` item (a module, a function, an impl) blanked, and the
/// names of test modules declared as files (`#[cfg(test)] mod tests;`).
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut out = code.as_bytes().to_vec();
    let mut test_files = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("#[cfg(test)]") {
        let start = from + p;
        let rest = &code[start..];
        let brace = rest.find('{');
        let semi = rest.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => {
                let decl = rest[..s].trim_end();
                if let Some(name) = decl.rsplit_once("mod ").map(|(_, n)| n.trim()) {
                    test_files.push(name.to_string());
                }
                start + s + 1
            }
            (Some(b), _) => {
                let mut depth = 0;
                let mut e = code.len();
                for (k, c) in rest[b..].bytes().enumerate() {
                    match c {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                e = start + b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                e
            }
            _ => code.len(),
        };
        for c in &mut out[start..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    (String::from_utf8(out).unwrap(), test_files)
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Parses a use tree at `s` (after `prefix::`): `a::b`, `{a, b::{c, d}}`, `*`, `a as b`.
/// Appends every path (as segments after the prefix) to `out`; returns the bytes read.
fn use_tree(s: &[u8], path: &mut Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let skip_ws = |i: &mut usize| {
        while *i < s.len() && s[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let mut i = 0;
    skip_ws(&mut i);
    if s.get(i) == Some(&b'{') {
        i += 1;
        loop {
            skip_ws(&mut i);
            match s.get(i) {
                Some(b'}') | None => return i + 1,
                Some(b',') => i += 1,
                _ => {
                    let before = path.len();
                    let n = use_tree(&s[i..], path, out);
                    path.truncate(before);
                    if n == 0 {
                        return i;
                    }
                    i += n;
                }
            }
        }
    }
    let start = i;
    while i < s.len() && is_ident(s[i]) {
        i += 1;
    }
    if i == start {
        // `*` or something else: the path so far.
        if s.get(i) == Some(&b'*') {
            i += 1;
        }
        out.push(path.clone());
        return i;
    }
    let seg = String::from_utf8_lossy(&s[start..i]).into_owned();
    path.push(seg);
    let mut j = i;
    skip_ws(&mut j);
    if s[j..].starts_with(b"::") {
        j += 2;
        let n = use_tree(&s[j..], path, out);
        return j + n;
    }
    out.push(path.clone());
    i
}

/// Every import of a file, as absolute module paths (the crate's root segment left out).
fn imports(file: &File, code: &str) -> Vec<Import> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    let line_of = |pos: usize| code[..pos].bytes().filter(|&c| c == b'\n').count() + 1;
    // `super` is relative to the file's module; a `mod.rs` is its folder's module.
    let mut i = 0;
    while i < b.len() {
        if ident_byte(b, i) || (i > 0 && b[i - 1] == b':') {
            i += 1;
            continue;
        }
        let rest = &b[i..];
        let (base, len): (Vec<String>, usize) = if rest.starts_with(b"crate::") {
            (Vec::new(), 7)
        } else if rest.starts_with(b"ply::") && file.module == ["main"] {
            (Vec::new(), 5)
        } else if rest.starts_with(b"super::") {
            let mut base = file.module.clone();
            let mut len = 0;
            while b[i + len..].starts_with(b"super::") {
                base.pop();
                len += 7;
            }
            (base, len)
        } else {
            i += 1;
            continue;
        };
        let mut paths = Vec::new();
        let mut path = base.clone();
        let n = use_tree(&b[i + len..], &mut path, &mut paths);
        for p in paths {
            found.push(Import {
                line: line_of(i),
                path: p,
            });
        }
        i += len + n.max(1);
    }
    found
}

struct Layers {
    /// Top-level module → its layer (0 = the bottom).
    level: BTreeMap<String, usize>,
}

fn read_layers(root: &Path) -> Layers {
    let text = std::fs::read_to_string(root.join("docs/layers.txt")).unwrap();
    let mut level = BTreeMap::new();
    for (n, line) in text
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        for m in line.split_whitespace() {
            assert!(
                level.insert(m.to_string(), n).is_none(),
                "docs/layers.txt names {m} twice"
            );
        }
    }
    Layers { level }
}

/// The cycles of a directed graph, as the strongly connected components with more than one
/// node (Tarjan's algorithm; the graphs are small).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let l = s.low[w].min(s.low[v]);
                s.low.insert(v, l);
            } else if s.on.contains(w) {
                let l = s.index[w].min(s.low[v]);
                s.low.insert(v, l);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one linear check: read the modules, then each rule in turn over the same import graph"
)]
fn modules_import_only_their_layer_and_below_without_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut paths = Vec::new();
    src_files(&src, &mut paths);
    let mut files: Vec<File> = paths
        .iter()
        .map(|p| {
            let (module, is_face) = module_of(&src, p);
            File {
                module,
                is_face,
                path: p.strip_prefix(root).unwrap().to_path_buf(),
                text: std::fs::read_to_string(p).unwrap(),
            }
        })
        .collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let layers = read_layers(root);

    // Test-only files (`#[cfg(test)] mod tests;`) are left out, as test modules are.
    let mut test_only = BTreeSet::new();
    let mut codes = Vec::new();
    for f in &files {
        let (code, tests) = without_tests(&code_only(&f.text));
        for t in tests {
            let mut m = f.module.clone();
            // `a/b.rs` declares `a/b/t.rs`, `a/mod.rs` declares `a/t.rs`: both the
            // declaring module's path and the name.
            if f.module.first().is_some_and(|m| m == "lib" || m == "main") {
                m.clear();
            }
            m.push(t);
            test_only.insert(m);
        }
        codes.push(code);
    }

    let mut failures = Vec::new();
    let mut top_graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut folder_graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> =
        BTreeMap::new();
    for (f, code) in files.iter_mut().zip(&codes) {
        if test_only.contains(&f.module) || f.module == ["lib"] {
            continue;
        }
        let top = f.module[0].clone();
        let Some(&own) = layers.level.get(&top) else {
            failures.push(format!(
                "{}: the module {top} has no layer in docs/layers.txt",
                f.path.display()
            ));
            continue;
        };
        top_graph.entry(top.clone()).or_default();
        for imp in imports(f, code) {
            let Some(target_top) = imp.path.first() else {
                continue;
            };
            if target_top == &top {
                // Inside one top-level module: an edge between two files of a folder?
                // The file that the path names: its longest prefix that is a module.
                let target = (1..=imp.path.len())
                    .rev()
                    .map(|n| imp.path[..n].to_vec())
                    .find(|m| modules.contains(m));
                let Some(target) = target else { continue };
                if target == f.module {
                    continue;
                }
                // Siblings in one folder, neither the folder's mod.rs.
                let folder = &f.module[..f.module.len() - 1];
                if !f.is_face
                    && target.len() == f.module.len()
                    && target[..target.len() - 1] == *folder
                {
                    folder_graphs
                        .entry(folder.to_vec())
                        .or_default()
                        .entry(f.module.join("/"))
                        .or_default()
                        .insert(target.join("/"));
                }
                continue;
            }
            let Some(&theirs) = layers.level.get(target_top) else {
                // A path that is not a module of the crate (a local `crate` variable, …).
                if modules.contains(&vec![target_top.clone()]) {
                    failures.push(format!(
                        "{}: the module {target_top} has no layer in docs/layers.txt",
                        f.path.display()
                    ));
                }
                continue;
            };
            top_graph
                .entry(top.clone())
                .or_default()
                .insert(target_top.clone());
            if theirs > own {
                failures.push(format!(
                    "{}:{}: {top} (layer {own}) imports {} from {target_top}, a layer above \
                     (layer {theirs}; docs/layers.txt)",
                    f.path.display(),
                    imp.line,
                    imp.path.join("::"),
                ));
            }
        }
    }

    if std::env::var_os("PLY_LAYERS_PRINT").is_some() {
        for (m, to) in &top_graph {
            eprintln!(
                "{m} -> {}",
                to.iter().cloned().collect::<Vec<_>>().join(" ")
            );
        }
        for (folder, g) in &folder_graphs {
            for (m, to) in g {
                eprintln!(
                    "{}: {m} -> {}",
                    folder.join("/"),
                    to.iter().cloned().collect::<Vec<_>>().join(" ")
                );
            }
        }
    }
    for c in cycles(&top_graph) {
        failures.push(format!(
            "the top-level modules {} import each other (a cycle)",
            c.join(", ")
        ));
    }
    let mut known_seen = BTreeSet::new();
    for g in folder_graphs.values() {
        for c in cycles(g) {
            let known = KNOWN_FILE_CYCLES
                .iter()
                .find(|(a, b)| c == [a.to_string(), b.to_string()]);
            match known {
                Some(k) => {
                    known_seen.insert(*k);
                }
                None => failures.push(format!(
                    "the files {} of one folder import each other (a cycle): {}",
                    c.join(", "),
                    c.iter()
                        .map(|m| format!(
                            "{m} → {}",
                            g[m].iter()
                                .filter(|t| c.contains(t))
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
            }
        }
    }
    for k in KNOWN_FILE_CYCLES {
        if !known_seen.contains(k) {
            failures.push(format!(
                "the known cycle {} ↔ {} is gone: remove it from KNOWN_FILE_CYCLES",
                k.0, k.1
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "layering (docs/layers.txt):\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_import_reader_sees_groups_super_and_qualified_paths() {
    let file = File {
        module: vec!["yaml".into(), "fast".into()],
        is_face: false,
        path: PathBuf::from("src/yaml/fast.rs"),
        text: String::new(),
    };
    let code = code_only(
        "use crate::{diag::{Error, Result}, resource};\n// crate::render\nuse super::parse::X;\n\
         fn f() { crate::transform::x(\"crate::live\"); super::super::fs::y(); }\n",
    );
    let got: Vec<(usize, String)> = imports(&file, &code)
        .into_iter()
        .map(|i| (i.line, i.path.join("::")))
        .collect();
    assert_eq!(
        got,
        [
            (1, "diag::Error".to_string()),
            (1, "diag::Result".to_string()),
            (1, "resource".to_string()),
            (3, "yaml::parse::X".to_string()),
            (4, "transform::x".to_string()),
            (4, "fs::y".to_string()),
        ]
    );
}
