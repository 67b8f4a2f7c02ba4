//! The fast YAML reader (`src/yaml/fast.rs`) against the reference reader (serde_yaml with
//! ply's go-yaml rules): wherever the fast reader reads a text, it must read the same
//! documents (same nodes, kept source texts and offsets), and it must give up wherever the
//! reference reader fails. Every file under `testdata/`, generated documents (proptest), and —
//! run explicitly by `.ci/run`, as it needs `../shared` — every file of the corpora under
//! `../shared` and of generated benchmark trees.

use std::path::Path;

use ply::yaml::limits::{NESTING_MESSAGE, READER_DEPTH};
use ply::yaml::parse::{
    ParsedDoc, parse_documents_fast_reader, parse_documents_marking_empty_nulls_fast_reader,
    parse_documents_marking_empty_nulls_reference_reader, parse_documents_reference_reader,
};

/// Whether a document nests about as deep as the reference reader stops (its recursion limit
/// counts a little differently from JSON's levels).
fn too_deep_for_reference(docs: &[ParsedDoc]) -> bool {
    docs.iter()
        .any(|d| d.node.nests_deeper_than(READER_DEPTH - 4))
}

/// How a text compared: read by the fast reader, or left to the reference reader.
#[derive(Default, Debug)]
struct Tally {
    texts: usize,
    fast: usize,
    bytes: usize,
    fast_bytes: usize,
    /// Readings of `.yaml` and `.yml` files, and how many of them the fast reader made.
    yaml: usize,
    yaml_fast: usize,
    /// `.yaml` files left to the reference reader (the first few).
    fallbacks: Vec<String>,
}

/// Compares the two readers on `text` (both readings); an error names what differs.
fn compare(text: &str, tally: &mut Tally) -> Result<(), String> {
    for yaml11 in [false, true] {
        if !yaml11 {
            compare_marking_empty_nulls(text)?;
        }
        let reference = parse_documents_reference_reader(text, yaml11);
        let fast = parse_documents_fast_reader(text, yaml11);
        tally.texts += 1;
        tally.bytes += text.len();
        let Some(fast) = fast else { continue };
        tally.fast += 1;
        tally.fast_bytes += text.len();
        let fast = match fast {
            Ok(fast) => fast,
            // Past kustomize's nesting limit: the reference reader, which stops far earlier,
            // must refuse the text too.
            Err(e) if reference.is_err() => {
                assert!(e.message.contains("nesting too deep"), "{e}");
                continue;
            }
            Err(e) => return Err(format!("yaml11={yaml11}: only the fast reader fails ({e})")),
        };
        let reference = match reference {
            Ok(reference) => reference,
            // Deeper than the reference reader reads (serde_yaml's recursion limit): the fast
            // reader's reading is checked against built trees (`deep_documents_*`).
            Err(e) if e.message == NESTING_MESSAGE && too_deep_for_reference(&fast) => continue,
            Err(e) => {
                return Err(format!(
                    "yaml11={yaml11}: the reference reader fails ({e}) where the fast one reads"
                ));
            }
        };
        // Debug text compares everything: kinds, float bits (NaN too), spelled texts, order.
        let want = format!("{reference:?}");
        let got = format!("{fast:?}");
        if want != got {
            return Err(format!(
                "yaml11={yaml11}: the readers differ\nreference: {want}\nfast:      {got}"
            ));
        }
    }
    Ok(())
}

/// The two readers marking values written as nothing (`render::patches` rereads objects so)
/// must agree wherever the fast reader reads (deep texts are compared with `compare`).
fn compare_marking_empty_nulls(text: &str) -> Result<(), String> {
    let Some(Ok(fast)) = parse_documents_marking_empty_nulls_fast_reader(text) else {
        return Ok(());
    };
    match parse_documents_marking_empty_nulls_reference_reader(text) {
        Ok(reference) if format!("{reference:?}") == format!("{fast:?}") => Ok(()),
        Err(e) if e.message == NESTING_MESSAGE && too_deep_for_reference(&fast) => Ok(()),
        other => Err(format!(
            "marking empty nulls, the readers differ\nreference: {other:?}\nfast:      {fast:?}"
        )),
    }
}

fn is_yaml(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// Compares the readers on every UTF-8 file under `root`; returns the tally. Runs on a deep
/// stack, as ply does (`testdata/` holds documents nested 10,000 levels).
fn compare_tree(root: &Path) -> Tally {
    ply::limits::with_deep_stack(|| compare_tree_here(root))
}

fn compare_tree_here(root: &Path) -> Tally {
    assert!(root.is_dir(), "{} is not a directory", root.display());
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue; // not text
        };
        let before = tally.fast;
        if let Err(e) = compare(&text, &mut tally) {
            failures.push(format!("{}: {e}", entry.path().display()));
        } else if is_yaml(entry.path()) {
            tally.yaml += 2;
            tally.yaml_fast += tally.fast - before;
            if tally.fast < before + 2 && tally.fallbacks.len() < 20 {
                tally.fallbacks.push(entry.path().display().to_string());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} files read differently:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    eprintln!("{}: {tally:?}", root.display());
    tally
}

#[test]
fn testdata_files_read_alike() {
    let tally = compare_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"));
    // The fast reader must read most of them, or it is not doing its job.
    assert!(tally.fast * 2 > tally.texts, "{tally:?}");
}

#[test]
fn hand_picked_texts_read_alike() {
    let texts = [
        "",
        "# only a comment\n",
        "---\n",
        "a: 1\n---\nb: 2\n",
        "a: 1\n---\n# only\n",
        "a:\n- 1\n- x\nb: c\n",
        "- a: 1\n  b: [  ]\n- - x\n  - y\n-\n- {}\n",
        // Found by the fastread fuzz target: a number under a key, on the next line, at the
        // end of the text with a trailing blank.
        "data:\n  a:\n   1.5 ",
        "data:\n  a:\n   444444444440.05\n",
        "metadata:\ndata:\n  labels:\n   444444444440.05 ",
        "metadata:\n  labels:\n    a: True\n    b: 0x1F\n    c: ~\n    d: null\n    e: 0777\n    f: \"1\"\n    g:\n    h: 1.50\n  annotations:\n    x: 08\ndata:\n  k: +1\n",
        "a: |\n  x\n\n   y\n  z\n\nb: >\n  one\n    more\n  two\n\n  three\nc: |-\n  s\nd: |+\n  k\n\n",
        "a: >-\n  folded\n  text\n",
        "a: |\n    x\n   \n    y\n",
        "a: |\n\n  x\n",
        "a: |\nb: 1\n",
        "a: \"q\\\"x\\n\\t\\u00e9\\x41\\U0001F600\"\nb: 'it''s'\n\"c\": 'd'\n",
        "a: \"\\x31\"\nb: \"\\/\"\n",
        "a: b # c\nd: e#f\n",
        "a: 2024-01-01\nb: 1_000\nc: .5\nd: -.inf\ne: .NaN\nf: 1e3\ng: 0o17\nh: -0x1F\n",
        "on: yes\nx: [a, b]\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: 1\na: 2\n",
        "a:\n  b\n",
        "a: b\n  c\n",
        "a:\tb\n",
        "? a\n: b\n",
        "\u{feff}a: 1\n",
        "a: 1\r\nb: 2\r\n",
        "a: 123456789012345678901234567890\nb: 1234567890123456789012345678901234567890123\n",
        "- |\n  x\n- >\n  y\n   z\n",
        "a:\n  - b\n  -   c: d\n      e: f\n",
        "k: v\n  # indented comment\nl: w\n",
        "k: \"v\"x\n",
        "--- |\n  x\n",
        "--- # c\na: 1\n...\n",
        "a: |2\n   x\n",
        "a: - b\n",
        "a: b: c\n",
        "key with spaces : value\n",
        "\"1\": one\n'true': t\n",
        "1: one\n",
        "<<: {a: 1}\n",
        "{\"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\",\n  \"data\": {\"a\": \"1\", \"b\":2},\n  \"x\": [1, 2.5, true, null, \"s\", []]\n}\n",
        "[a: b]\n",
        "{a, b}\n",
        "[a,]\n",
        "{a: }\n",
        "{a: 1\n}\n",
        "[a\nb]\n",
        "[a\n, b]\n",
        "x: [a, {b: c}, 'd', \"e\"] # c\ny: {k: [1, 2]}\n",
        "- {name: a, value: b}\n- [x, y]\n",
        "data: {a: 1, b: \"2\", c: true}\nmetadata: {labels: {x: 0x1F}}\n",
        "x: [http://a, b]\n",
        "x: {a: b}\n  y: c\n",
        "x: [a]: b\n",
        "[a]: b\n",
        "{a: 1}\n---\n[1, 2]\n",
        "[\n---\n]\n",
        "x: [1, 2\n  ]\ny: 1\n",
        "{\"a\":{\"a\":{\"a\":[[],{}]}}}\n",
        "a: [1,\n2]\nb: 3\n",
        "- [-]\n- [a #b]\n",
        "[\"a\"b]\n",
        "[\"a\": 1]\n",
        "{a: b c, 'd': \"e f\", g: -1, h: ~, i: 0x1F, j: .5}\n",
        "x: { }\ny: [ ]\nz: [ a , b ]\n",
        "{y: n, on: off}\n",
        "  {a: 1}\n",
        "a:\n  [1, 2]\n",
        "a:\n  {b: 1}\n",
        "a:\nb: ~\nc: null\nd: # c\ne:\n  f:\n  g: [null]\n'h':\n\"i\" :\n",
    ];
    let mut tally = Tally::default();
    for text in texts {
        compare(text, &mut tally).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
    assert!(tally.fast > 0, "{tally:?}");
}

mod generated {
    //! Documents built from the pieces manifests are made of, with scalars of every kind the
    //! resolution rules tell apart, in the positions where they are read differently.

    use proptest::prelude::*;

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            prop::sample::select(vec![
                "~",
                "null",
                "Null",
                "NULL",
                "true",
                "True",
                "FALSE",
                "yes",
                "on",
                "Off",
                "y",
                "n",
                "0",
                "1",
                "-1",
                "+1",
                "0777",
                "08",
                "1_000",
                "0x1F",
                "0X1F",
                "-0x1F",
                "0o17",
                "0b101",
                ".5",
                "1.50",
                "1e3",
                "1E+3",
                ".inf",
                "-.Inf",
                ".nan",
                ".NaN",
                "inf",
                "nan",
                "2024-01-01",
                "2024-13-01",
                "1.2.3",
                "-",
                "--",
                "a-b",
                "name",
                "nginx:1.25",
                "http://x/y?z=1&w=2",
                "a b  c",
                "a#b",
                "a,b",
                "[x]",
                "x]",
                "-x",
                "?x",
                ":x",
                "@x",
                "`x",
                "%x",
                "'q'",
                "\"q\"",
                "\"\\x31\"",
                "\"\\u0030x1F\"",
                "\"a\\tb\"",
                "'it''s'",
                "\"\\/\"",
                "\"\\q\"",
                "&a x",
                "*a",
                "!!str 1",
                "!Foo 1",
                "{}",
                "[]",
                "{a: 1}",
                "[1, 2]",
                "é",
                "日本",
                "a\tb",
                "123456789012345678901234567890",
                "99999999999999999999999999999999999999999",
                "-9223372036854775809",
                "18446744073709551615",
                "1.7976931348623157e309",
                "0.0",
                "-0",
                "+.5",
                "._5",
                "<<",
                "# c",
                "x # c",
            ])
            .prop_map(str::to_string),
            "[a-z0-9 .:_/-]{1,12}",
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "metadata",
                "labels",
                "annotations",
                "data",
                "binaryData",
                "name",
                "spec",
                "a",
                "b",
                "\"q\"",
                "'s'",
                "\"1\"",
                "1",
                "true",
                "null",
                "on",
                "x y",
                "k8s.io/name",
                "<<",
                "-k",
                "a:b",
            ])
            .prop_map(str::to_string),
            "[a-z]{1,6}",
        ]
    }

    fn block_scalar() -> impl Strategy<Value = String> {
        (
            prop::sample::select(vec!["|", "|-", "|+", ">", ">-", ">+", "|2", "| # c"]),
            prop::collection::vec(
                prop::sample::select(vec![
                    "",
                    "x",
                    "y z",
                    " more",
                    "  deeper",
                    "\tt",
                    "# not a comment",
                    "---",
                    "a: b",
                ]),
                0..5,
            ),
            0usize..3,
        )
            .prop_map(|(head, lines, extra)| {
                let mut s = head.to_string();
                s.push('\n');
                for l in lines {
                    if !l.is_empty() {
                        s.push_str(&" ".repeat(extra));
                        s.push_str("@@");
                        s.push_str(l);
                    }
                    s.push('\n');
                }
                s
            })
    }

    #[derive(Clone, Debug)]
    enum Tree {
        Scalar(String),
        Block(String),
        Map(Vec<(String, Tree)>),
        Seq(Vec<Tree>),
    }

    fn tree() -> impl Strategy<Value = Tree> {
        let leaf = prop_oneof![
            4 => scalar().prop_map(Tree::Scalar),
            1 => block_scalar().prop_map(Tree::Block),
        ];
        leaf.prop_recursive(4, 24, 5, |inner| {
            prop_oneof![
                prop::collection::vec((key(), inner.clone()), 0..5).prop_map(Tree::Map),
                prop::collection::vec(inner, 0..4).prop_map(Tree::Seq),
            ]
        })
    }

    /// How a tree is laid out: sequences under a key at the key's column or indented, the
    /// indentation step, and what stands between entries (nothing, an empty line, comments).
    #[derive(Clone, Copy, Debug)]
    struct Style {
        indentless: bool,
        step: usize,
        gap: &'static str,
        /// Collections below the top written in flow style: not (0), on one line (1), or with
        /// a line break after every comma (2).
        flow: u8,
    }

    fn style() -> impl Strategy<Value = Style> {
        (
            any::<bool>(),
            prop::sample::select(vec![1usize, 2, 4]),
            prop::sample::select(vec!["", "", "\n", "# between\n", "     # deeper\n", " \n"]),
            prop::sample::select(vec![0u8, 0, 1, 2]),
        )
            .prop_map(|(indentless, step, gap, flow)| Style {
                indentless,
                step,
                gap,
                flow,
            })
    }

    /// Writes `t` in flow style (a block scalar as a quoted one).
    fn write_flow(t: &Tree, indent: usize, out: &mut String, st: Style) {
        let sep = if st.flow == 2 {
            format!(",\n{}", " ".repeat(indent + st.step))
        } else {
            ", ".to_string()
        };
        match t {
            Tree::Scalar(s) => out.push_str(s),
            Tree::Block(_) => out.push_str("\"block\""),
            Tree::Map(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&sep);
                    }
                    out.push_str(k);
                    out.push_str(": ");
                    write_flow(v, indent + st.step, out, st);
                }
                out.push('}');
            }
            Tree::Seq(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&sep);
                    }
                    write_flow(v, indent + st.step, out, st);
                }
                out.push(']');
            }
        }
    }

    /// Writes `t` as block YAML at `indent`, after a `key:` or `-` already written (or in flow
    /// style, as `st` says).
    fn write(t: &Tree, indent: usize, out: &mut String, st: Style) {
        let pad = " ".repeat(indent);
        if st.flow > 0 && matches!(t, Tree::Map(_) | Tree::Seq(_)) {
            out.push(' ');
            write_flow(t, indent, out, st);
            out.push('\n');
            return;
        }
        match t {
            Tree::Scalar(s) => {
                out.push(' ');
                out.push_str(s);
                out.push('\n');
            }
            Tree::Block(b) => {
                out.push(' ');
                out.push_str(&b.replace("@@", &" ".repeat(indent + st.step)));
            }
            Tree::Map(entries) if entries.is_empty() => out.push_str(" {}\n"),
            Tree::Seq(items) if items.is_empty() => out.push_str(" []\n"),
            Tree::Map(entries) => {
                out.push('\n');
                for (k, v) in entries {
                    out.push_str(&pad);
                    out.push_str(k);
                    out.push(':');
                    let child = match v {
                        Tree::Seq(items) if st.indentless && !items.is_empty() => indent,
                        _ => indent + st.step,
                    };
                    write(v, child, out, st);
                    out.push_str(st.gap);
                }
            }
            Tree::Seq(items) => {
                out.push('\n');
                for v in items {
                    out.push_str(&pad);
                    out.push('-');
                    write(v, indent + st.step.max(2), out, st);
                    out.push_str(st.gap);
                }
            }
        }
    }

    fn document() -> impl Strategy<Value = String> {
        (
            prop::collection::vec((tree(), style()), 1..3),
            any::<bool>(),
        )
            .prop_map(|(docs, leading_marker)| {
                let mut out = String::new();
                for (i, (t, st)) in docs.iter().enumerate() {
                    if i > 0 || leading_marker {
                        out.push_str("---\n");
                    }
                    let mut body = String::new();
                    write(t, 0, &mut body, *st);
                    // The top node starts on its own line.
                    out.push_str(body.strip_prefix('\n').unwrap_or(body.trim_start()));
                }
                out
            })
    }

    /// A Kubernetes object whose labels, annotations and data hold generated scalars.
    fn object() -> impl Strategy<Value = String> {
        prop::collection::vec((key(), scalar()), 0..6).prop_map(|pairs| {
            let mut out = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
            for (section, indent) in [("  labels:", 4), ("  annotations:", 4), ("data:", 2)] {
                out.push_str(section);
                out.push('\n');
                for (k, v) in &pairs {
                    out.push_str(&" ".repeat(indent));
                    out.push_str(k);
                    out.push_str(": ");
                    out.push_str(v);
                    out.push('\n');
                }
            }
            out
        })
    }

    /// The generators must give the fast reader work: a fixed sample of their documents is
    /// compared, and a good share of it must be read by the fast reader (not all: the
    /// generators also write what it leaves to the reference reader).
    #[test]
    fn generated_documents_exercise_the_fast_reader() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let mut tally = super::Tally::default();
        for _ in 0..500 {
            let doc = document().new_tree(&mut runner).unwrap().current();
            super::compare(&doc, &mut tally).unwrap();
            let obj = object().new_tree(&mut runner).unwrap().current();
            super::compare(&obj, &mut tally).unwrap();
        }
        eprintln!(
            "generated: {} of {} readings by the fast reader",
            tally.fast, tally.texts
        );
        assert!(tally.fast * 4 > tally.texts, "{tally:?}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn generated_documents_read_alike(text in document()) {
            let mut tally = super::Tally::default();
            super::compare(&text, &mut tally).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        }

        #[test]
        fn generated_objects_read_alike(text in object()) {
            let mut tally = super::Tally::default();
            super::compare(&text, &mut tally).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        }
    }
}

/// Deep documents, up to kustomize's nesting limits and one level past them: the fast reader
/// reads them (the reference reader stops at 128 levels) into the trees they spell, and
/// refuses the first block level past go-yaml's `max_indents`. Runs on a deep stack, as ply
/// does (`limits::STACK_SIZE`).
#[test]
fn deep_documents_read_as_built() {
    use ply::yaml::Node;
    fn nest(depth: usize, leaf: Node, wrap: impl Fn(Node) -> Node) -> Node {
        (0..depth).fold(leaf, |n, _| wrap(n))
    }
    let seq = |n| Node::Seq(vec![n]);
    let map = |n| {
        let mut m = ply::yaml::Map::default();
        m.insert("a".to_string(), n);
        Node::Map(m)
    };
    let read = |text: &str| match parse_documents_fast_reader(text, false) {
        Some(Ok(docs)) => Ok(docs.into_iter().map(|d| d.node).collect::<Vec<_>>()),
        Some(Err(e)) => Err(e.message),
        None => panic!(
            "the fast reader gives up on {}",
            &text[..text.len().min(80)]
        ),
    };
    ply::limits::with_deep_stack(|| {
        let x = || Node::Str("x".into());
        for depth in [1, 127, 128, 129, 2000, 10_000] {
            // `- - - x`: every sequence one level further right.
            let text = format!("{}x\n", "- ".repeat(depth));
            assert!(
                read(&text).unwrap() == vec![nest(depth, x(), seq)],
                "block {depth}"
            );
            // `[[[x]]]` and `{a: {a: x}}` in flow style.
            let text = format!("{}x{}\n", "[".repeat(depth), "]".repeat(depth));
            assert!(
                read(&text).unwrap() == vec![nest(depth, x(), seq)],
                "flow {depth}"
            );
            let text = format!("{}x{}\n", "{a: ".repeat(depth), "}".repeat(depth));
            assert!(
                read(&text).unwrap() == vec![nest(depth, x(), map)],
                "flow map {depth}"
            );
        }
        // Go-yaml's `max_indents`: 10,000 block levels, the next one refused.
        let e = read(&format!("{}x\n", "- ".repeat(10_001))).unwrap_err();
        assert!(e.contains("more than 10000 block collections"), "{e}");
        // A map under a map, then a sequence at its key's column: only the maps open levels.
        for depth in [130, 300] {
            let mut text = String::from("a:\n");
            for i in 1..depth {
                text.push_str(&format!("{}- a:\n", " ".repeat(2 * (i - 1))));
            }
            text.push_str(&format!("{}- x\n", " ".repeat(2 * (depth - 1))));
            let want = (0..depth).fold(x(), |n, _| map(seq(n)));
            assert!(read(&text).unwrap() == vec![want], "indentless {depth}");
        }
        // Flow inside deep block nesting: both limits at once.
        let text = format!(
            "{}{}x{}\n",
            "- ".repeat(10_000),
            "[".repeat(9_999),
            "]".repeat(9_999)
        );
        let want = nest(10_000, nest(9_999, x(), seq), seq);
        assert!(read(&text).unwrap() == vec![want]);
    });
}

/// Every file of the corpora under `../shared` and of generated benchmark trees (run by
/// `.ci/run`: `cargo test --test fast_reader -- --ignored`).
#[test]
#[ignore = "needs ../shared and python3 (run with --ignored)"]
fn shared_corpora_read_alike() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let mut total = Tally::default();
    for corpus in ["conformance", "schema", "spec", "bench"] {
        let dir = shared.join(corpus);
        if dir.is_dir() {
            let t = compare_tree(&dir);
            total.texts += t.texts;
            total.fast += t.fast;
        }
    }
    assert!(total.texts > 1000, "too few corpus files: {total:?}");
    // Benchmark trees: the plain one and the one with large documents.
    let tmp = std::env::temp_dir().join(format!("ply-fast-reader-{}", std::process::id()));
    for (name, extra) in [("plain", None), ("big", Some("--big-values"))] {
        let out = tmp.join(name);
        let mut cmd = std::process::Command::new("python3");
        cmd.arg(shared.join("bench/gen_tree.py"))
            .args(["--apps", "20", "--force"])
            .arg(&out);
        if let Some(flag) = extra {
            cmd.arg(flag);
        }
        let status = cmd.status().expect("python3 runs");
        assert!(status.success(), "gen_tree.py failed");
        let t = compare_tree(&out);
        // The benchmark trees are what the fast reader is for: it reads all of them.
        assert_eq!(t.yaml_fast, t.yaml, "{name} tree: {t:?}");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}
