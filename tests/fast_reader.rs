//! The fast YAML reader (`src/yaml/fast.rs`) against the reference reader (serde_yaml with
//! ply's go-yaml rules): wherever the fast reader reads a text, it must read the same
//! documents (same nodes, kept source texts and offsets), and it must give up wherever the
//! reference reader fails. Every file under `testdata/`, generated documents (proptest), and —
//! run explicitly by `.ci/run`, as it needs `../shared` — every file of the corpora under
//! `../shared` and of generated benchmark trees; the documents of each multi-document file are
//! also read one by one and must read as in the whole file. `folded_plain` checks both readers
//! against an independent oracle: generated CRD-shaped files whose intended values it knows.

use std::path::Path;

use ply::testing::{NESTING_MESSAGE, READER_DEPTH};
use ply::testing::{
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
    /// Texts of several documents, and the documents they hold, each also read alone.
    multi_document_texts: usize,
    documents_alone: usize,
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

/// The documents of a stream: pieces of `text` that each start at a `---` line (the first
/// at the text's start). A line starting with `---` and then a blank or its end is a document
/// marker wherever it stands (a block scalar's content cannot start at column 0 there).
fn split_documents(text: &str) -> Vec<&str> {
    let mut starts = vec![0];
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let rest = line.strip_prefix("---");
        if at > 0 && rest.is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t', '\r', '\n'])) {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(text.len());
    starts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// Each document of a multi-document text read alone must read as it does in the whole text
/// (by the reference reader; nothing of one document may depend on another, as the anchor
/// renaming of issue #25 did), and the two readers must agree on it alone too.
fn compare_documents_one_by_one(text: &str, tally: &mut Tally) -> Result<(), String> {
    let pieces = split_documents(text);
    if pieces.len() < 2 {
        return Ok(());
    }
    tally.multi_document_texts += 1;
    let Ok(whole) = parse_documents_reference_reader(text, false) else {
        // The whole text is refused: `compare` checks that both readers refuse it.
        return Ok(());
    };
    let mut alone = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        // Comments before the first marker open no document in the whole text; alone, they
        // read as one empty document.
        let no_content = piece.lines().all(|l| {
            let l = l.trim_start();
            l.is_empty() || l.starts_with(['#', '%'])
        });
        if i == 0 && no_content {
            continue;
        }
        compare(piece, &mut Tally::default())
            .map_err(|e| format!("document {piece:?} alone: {e}"))?;
        let docs = parse_documents_reference_reader(piece, false)
            .map_err(|e| format!("document {piece:?} alone is refused ({e})"))?;
        alone.extend(docs.into_iter().map(|d| d.node));
    }
    tally.documents_alone += alone.len();
    let whole: Vec<_> = whole.into_iter().map(|d| d.node).collect();
    if format!("{whole:?}") != format!("{alone:?}") {
        return Err(format!(
            "its documents read alone differ from the whole text\nwhole: {whole:?}\nalone: {alone:?}"
        ));
    }
    Ok(())
}

fn is_yaml(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// Compares the readers on every UTF-8 file under `root`; returns the tally. Runs on a deep
/// stack, as ply does (`testdata/` holds documents nested 10,000 levels).
fn compare_tree(root: &Path) -> Tally {
    ply::with_deep_stack(|| compare_tree_here(root))
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
        if let Err(e) = compare_documents_one_by_one(&text, &mut tally) {
            failures.push(format!("{}: {e}", entry.path().display()));
        }
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
    // Multi-document files are there, and their documents were read one by one.
    assert!(tally.multi_document_texts > 100, "{tally:?}");
    assert!(
        tally.documents_alone > 2 * tally.multi_document_texts,
        "{tally:?}"
    );
}

#[test]
fn hand_picked_texts_read_alike() {
    let texts = [
        "",
        "# only a comment\n",
        "---\n",
        "a: 1\n---\nb: 2\n",
        // Trailing commas before a closing bracket, nested, over lines.
        "a: [1, [x, {b: c, }, ], ]\nd: {e: [f, ],\n  }\n",
        "{\"k\": [1, 2, ], \"m\": {\"n\": 1, }, }\n",
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
        /// A trailing comma after the last entry of every non-empty flow collection.
        trailing: bool,
    }

    fn style() -> impl Strategy<Value = Style> {
        (
            any::<bool>(),
            prop::sample::select(vec![1usize, 2, 4]),
            prop::sample::select(vec!["", "", "\n", "# between\n", "     # deeper\n", " \n"]),
            prop::sample::select(vec![0u8, 0, 1, 2]),
            any::<bool>(),
        )
            .prop_map(|(indentless, step, gap, flow, trailing)| Style {
                indentless,
                step,
                gap,
                flow,
                trailing,
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
                if st.trailing && !entries.is_empty() {
                    out.push_str(&sep);
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
                if st.trailing && !items.is_empty() {
                    out.push_str(&sep);
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
    ply::with_deep_stack(|| {
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
            total.multi_document_texts += t.multi_document_texts;
            total.documents_alone += t.documents_alone;
        }
    }
    assert!(total.texts > 1000, "too few corpus files: {total:?}");
    assert!(
        total.multi_document_texts > 100,
        "too few multi-document files: {total:?}"
    );
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

mod folded_plain {
    //! CRD-shaped multi-document files whose CEL rules, descriptions and patterns are written
    //! as multi-line PLAIN scalars folded right before every indicator character, at every
    //! indentation deeper than the parent, in every position (after `key:` on its line or on
    //! the next one, after `- ` or a lone `-`, in a compact map of a sequence item, in an
    //! indentless sequence), beside real anchors and aliases (some redefined, some named `Z`
    //! and `Y`, the names the go-yaml dialect pre-pass renames to). An independent oracle: the
    //! generator knows each value (a folded plain scalar is its lines' trimmed texts joined by
    //! single spaces, a blank line a `\n`, a continuation line starting with `#` a comment that
    //! ends it), and every reader must read exactly those documents. Comparing the two readers
    //! alone could not catch a fault of the pre-pass they share (issue #25: `&&` read as an
    //! anchor and renamed `&Z`).

    use ply::yaml::{Map, Node};
    use std::collections::{BTreeSet, HashMap};

    /// The indicator characters of YAML, each starting a continuation line.
    const INDICATORS: [char; 20] = [
        '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '\\', '#', '-', '?', ':', ',', '[', ']',
        '{', '}',
    ];
    /// How the indicator goes on: doubled (`&& x`), then a space (`& x`), or glued (`&x`).
    const VARIANTS: usize = 3;
    /// Continuation columns past the parent collection's column.
    const OFFSETS: usize = 6;

    /// Where a scalar stands.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    enum Ctx {
        /// `key: first⏎  more`
        KeyLine,
        /// `key:⏎  first⏎  more`
        NextLine,
        /// `- first⏎  more`
        Item,
        /// `-⏎  first⏎  more`
        ItemNextLine,
        /// `- key: first⏎    more` (a map opened on the item's line)
        CompactMap,
        /// `key:⏎- first⏎ more` (a sequence at its key's column)
        Indentless,
    }
    const CONTEXTS: [Ctx; 6] = [
        Ctx::KeyLine,
        Ctx::NextLine,
        Ctx::Item,
        Ctx::ItemNextLine,
        Ctx::CompactMap,
        Ctx::Indentless,
    ];

    /// Texts of a line's middle and end: no `: `, no ` #`, no final `:` (each would end a
    /// plain scalar), nothing that reads as other than a string.
    const SEGMENTS: [&str; 22] = [
        "self.spec.replicas",
        "<= self.maxReplicas",
        "has(self.x)",
        "size(self.name) < 64",
        "the value must be set",
        "a-b_c",
        "^[a-z]([-a-z0-9]*[a-z0-9])?$",
        "x#y",
        "a:b",
        "'q'",
        "\"dq\"",
        "{k:v}",
        "[0]",
        "50%",
        "&& self.y",
        "|| !self.z",
        "*x",
        "&a",
        "\\d+\\.\\d+",
        "@type",
        "`code`",
        "- not an item",
    ];
    const FIRST: [&str; 6] = ["self", "The", "Rule", "spec.x", "value", "^[a-z]"];

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // splitmix64
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }
        fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
            &xs[self.below(xs.len())]
        }
    }

    /// Writes documents and the values they must read as.
    struct Gen {
        rng: Rng,
        /// The next continuation line of each context (indicator, variant, offset).
        counters: HashMap<Ctx, usize>,
        /// (context, indicator, variant, offset) written.
        covered: BTreeSet<(Ctx, usize, usize, usize)>,
        /// The current document's anchors: their latest definitions.
        anchors: HashMap<String, Node>,
        out: String,
    }

    fn pad(n: usize) -> String {
        " ".repeat(n)
    }

    impl Gen {
        fn new(seed: u64) -> Self {
            Gen {
                rng: Rng(seed),
                counters: HashMap::new(),
                covered: BTreeSet::new(),
                anchors: HashMap::new(),
                out: String::new(),
            }
        }

        fn segment(&mut self) -> String {
            let n = 1 + self.rng.below(3);
            (0..n)
                .map(|_| *self.rng.pick(&SEGMENTS))
                .collect::<Vec<_>>()
                .join(" ")
        }

        /// A continuation line's text (without its indentation) in `ctx`, and whether it is a
        /// comment; records what it covers.
        fn continuation(&mut self, ctx: Ctx) -> (String, usize, bool) {
            let k = self.counters.entry(ctx).or_default();
            let n = *k;
            *k += 1;
            let ind = n % INDICATORS.len();
            let offset = 1 + (n / INDICATORS.len()) % OFFSETS;
            let mut variant = (n / (INDICATORS.len() * OFFSETS)) % VARIANTS;
            let c = INDICATORS[ind];
            // `: ` and a lone `:` end the scalar and open a value where none may be (an
            // error: `invalid_texts_fail`); here `:` is glued to its text.
            if c == ':' {
                variant = 2;
            }
            self.covered.insert((ctx, ind, variant, offset));
            let rest = self.segment();
            let text = match variant {
                0 => format!("{c}{c} {rest}"),
                1 => format!("{c} {rest}"),
                _ => format!("{c}{rest}"),
            };
            (text, offset, c == '#')
        }

        /// A multi-line plain scalar whose parent collection is at column `parent`; its first
        /// line goes on the current line (after `lead`, e.g. `" "`) or on the next one. Gives
        /// the value it reads as.
        fn plain(&mut self, ctx: Ctx, parent: usize, same_line: bool, anchor: bool) -> Node {
            let first = format!("{} {}", self.rng.pick(&FIRST), self.segment());
            let mut value = first.clone();
            let anchor_name =
                anchor.then(|| self.rng.pick(&["Z", "Y", "rule", "a", "&"]).to_string());
            let anchor_name = anchor_name.filter(|n| n != "&");
            if same_line {
                self.out.push(' ');
                if let Some(name) = &anchor_name {
                    self.out.push_str(&format!("&{name} "));
                }
                self.out.push_str(&first);
            } else {
                if let Some(name) = &anchor_name {
                    self.out.push_str(&format!(" &{name}"));
                }
                self.out.push('\n');
                self.out
                    .push_str(&pad(parent + 1 + self.rng.below(OFFSETS)));
                self.out.push_str(&first);
            }
            let lines = 1 + self.rng.below(4);
            let mut blanks = 0;
            for _ in 0..lines {
                // Blank lines between: each a line break in the value.
                if self.rng.chance(15) {
                    let b = 1 + self.rng.below(2);
                    for _ in 0..b {
                        self.out.push('\n');
                        self.out.push_str(&pad(self.rng.below(3)));
                    }
                    blanks = b;
                }
                let (text, offset, comment) = self.continuation(ctx);
                self.out.push('\n');
                self.out.push_str(&pad(parent + offset));
                self.out.push_str(&text);
                if comment {
                    // A comment ends the scalar: its text and the blank lines before it are
                    // not part of the value.
                    break;
                }
                if blanks > 0 {
                    value.push_str(&"\n".repeat(blanks));
                } else {
                    value.push(' ');
                }
                value.push_str(text.trim());
                blanks = 0;
                if self.rng.chance(20) {
                    self.out.push_str("  "); // trailing blanks are not part of it
                }
            }
            self.out.push('\n');
            let node = Node::Str(value);
            if let Some(name) = anchor_name {
                self.anchors.insert(name, node.clone());
            }
            node
        }

        /// An alias to a scalar anchored earlier in this document, if any: ` *name`.
        fn alias(&mut self) -> Option<Node> {
            let mut names: Vec<_> = self.anchors.keys().cloned().collect();
            names.sort();
            if names.is_empty() || !self.rng.chance(30) {
                return None;
            }
            let name = self.rng.pick(&names).clone();
            self.out.push_str(&format!(" *{name}\n"));
            Some(self.anchors[&name].clone())
        }

        /// `key:` and a long text at `col` (a map's column); `ctx` says how it is written.
        fn text_entry(&mut self, m: &mut Map, col: usize, key: &str, next_line: bool) {
            self.out.push_str(&format!("{}{key}:", pad(col)));
            let v = match self.alias() {
                Some(v) => v,
                None => {
                    let ctx = if next_line {
                        Ctx::NextLine
                    } else {
                        Ctx::KeyLine
                    };
                    let anchor = self.rng.chance(15);
                    self.plain(ctx, col, !next_line, anchor)
                }
            };
            m.insert(key.to_string(), v);
        }

        fn word_entry(&mut self, m: &mut Map, col: usize, key: &str, word: &str) {
            self.out.push_str(&format!("{}{key}: {word}\n", pad(col)));
            m.insert(key.to_string(), Node::Str(word.to_string()));
        }

        /// A list of CEL validations under `key` at `col`.
        fn validations(&mut self, m: &mut Map, col: usize) {
            self.out
                .push_str(&format!("{}x-kubernetes-validations:\n", pad(col)));
            let dash = if self.rng.chance(40) { col } else { col + 2 };
            let mut items = Vec::new();
            for _ in 0..1 + self.rng.below(3) {
                let mut item = Map::new();
                // `- rule: ...` with its next keys at the column after `- `.
                self.out.push_str(&format!("{}- rule:", pad(dash)));
                let anchor = self.rng.chance(10);
                let rule = self.plain(Ctx::CompactMap, dash + 2, true, anchor);
                item.insert("rule".into(), rule);
                if self.rng.chance(70) {
                    let next = self.rng.chance(30);
                    self.text_entry(&mut item, dash + 2, "message", next);
                }
                items.push(Node::Map(item));
            }
            m.insert("x-kubernetes-validations".into(), Node::Seq(items));
        }

        /// A list of texts (enum values, required fields written long) under `key` at `col`.
        fn text_list(&mut self, m: &mut Map, col: usize, key: &str) {
            self.out.push_str(&format!("{}{key}:\n", pad(col)));
            let indentless = self.rng.chance(40);
            let dash = if indentless {
                col
            } else {
                col + 1 + self.rng.below(3)
            };
            let mut items = Vec::new();
            for _ in 0..1 + self.rng.below(3) {
                self.out.push_str(&format!("{}-", pad(dash)));
                let ctx = if indentless {
                    Ctx::Indentless
                } else if self.rng.chance(50) {
                    Ctx::Item
                } else {
                    Ctx::ItemNextLine
                };
                let same_line = ctx != Ctx::ItemNextLine;
                let v = match self.alias() {
                    Some(v) => v,
                    None => {
                        let anchor = self.rng.chance(10);
                        self.plain(ctx, dash, same_line, anchor)
                    }
                };
                items.push(v);
            }
            m.insert(key.to_string(), Node::Seq(items));
        }

        /// An openAPIV3Schema node at `col`, `depth` levels of properties left.
        fn schema(&mut self, col: usize, depth: usize) -> Node {
            let mut m = Map::new();
            let kind = if depth == 0 { "string" } else { "object" };
            self.word_entry(&mut m, col, "type", kind);
            let next = self.rng.chance(40);
            self.text_entry(&mut m, col, "description", next);
            if depth == 0 {
                if self.rng.chance(60) {
                    let next = self.rng.chance(40);
                    self.text_entry(&mut m, col, "pattern", next);
                }
                if self.rng.chance(40) {
                    self.text_list(&mut m, col, "enum");
                }
                return Node::Map(m);
            }
            if self.rng.chance(70) {
                self.validations(&mut m, col);
            }
            let step = 1 + self.rng.below(4);
            self.out.push_str(&format!("{}properties:\n", pad(col)));
            let mut props = Map::new();
            for i in 0..1 + self.rng.below(3) {
                let name = format!("field{depth}x{i}");
                self.out.push_str(&format!("{}{name}:\n", pad(col + step)));
                let inner = col + step + 1 + self.rng.below(4);
                let child = if self.rng.chance(25) {
                    // An array: its items one more level down.
                    let mut arr = Map::new();
                    self.word_entry(&mut arr, inner, "type", "array");
                    self.out.push_str(&format!("{}items:\n", pad(inner)));
                    let items = self.schema(inner + 2, depth - 1);
                    arr.insert("items".into(), items);
                    Node::Map(arr)
                } else {
                    self.schema(inner, depth - 1)
                };
                props.insert(name, child);
            }
            m.insert("properties".into(), Node::Map(props));
            if self.rng.chance(30) {
                self.text_list(&mut m, col, "required");
            }
            Node::Map(m)
        }

        /// A CustomResourceDefinition with a deep schema.
        fn crd(&mut self, n: usize) -> Node {
            let mut doc = Map::new();
            self.word_entry(&mut doc, 0, "apiVersion", "apiextensions.k8s.io/v1");
            self.word_entry(&mut doc, 0, "kind", "CustomResourceDefinition");
            self.out.push_str("metadata:\n");
            let mut meta = Map::new();
            self.word_entry(&mut meta, 2, "name", &format!("widgets{n}.example.com"));
            doc.insert("metadata".into(), Node::Map(meta));
            self.out.push_str("spec:\n");
            let mut spec = Map::new();
            self.word_entry(&mut spec, 2, "group", "example.com");
            self.out.push_str("  versions:\n");
            let dash = if self.rng.chance(50) { 2 } else { 4 };
            self.out.push_str(&format!("{}- name: v1\n", pad(dash)));
            let mut version = Map::new();
            version.insert("name".into(), Node::Str("v1".into()));
            self.out.push_str(&format!("{}schema:\n", pad(dash + 2)));
            let step = 1 + self.rng.below(4);
            self.out
                .push_str(&format!("{}openAPIV3Schema:\n", pad(dash + 2 + step)));
            let depth = 1 + self.rng.below(4);
            let schema = self.schema(dash + 2 + step + 2, depth);
            let mut s = Map::new();
            s.insert("openAPIV3Schema".into(), schema);
            version.insert("schema".into(), Node::Map(s));
            spec.insert("versions".into(), Node::Seq(vec![Node::Map(version)]));
            doc.insert("spec".into(), Node::Map(spec));
            Node::Map(doc)
        }

        /// A ConfigMap (a kyverno-like policy's message and condition kept as data).
        fn config_map(&mut self, n: usize) -> Node {
            let mut doc = Map::new();
            self.word_entry(&mut doc, 0, "apiVersion", "v1");
            self.word_entry(&mut doc, 0, "kind", "ConfigMap");
            self.out.push_str("metadata:\n");
            let mut meta = Map::new();
            self.word_entry(&mut meta, 2, "name", &format!("cm{n}"));
            self.out.push_str("  annotations:\n");
            let mut ann = Map::new();
            let next = self.rng.chance(40);
            self.text_entry(&mut ann, 4, "policies.kyverno.io/description", next);
            meta.insert("annotations".into(), Node::Map(ann));
            doc.insert("metadata".into(), Node::Map(meta));
            self.out.push_str("data:\n");
            let mut data = Map::new();
            for i in 0..1 + self.rng.below(4) {
                let next = self.rng.chance(40);
                self.text_entry(&mut data, 2, &format!("k{i}"), next);
            }
            doc.insert("data".into(), Node::Map(data));
            Node::Map(doc)
        }

        /// A file of several documents; gives the text and each document's value.
        fn file(&mut self) -> (String, Vec<Node>) {
            self.out.clear();
            let mut docs = Vec::new();
            if self.rng.chance(30) {
                self.out.push_str("---\n");
            }
            for n in 0..2 + self.rng.below(4) {
                if n > 0 {
                    let marker = *self.rng.pick(&["---\n", "--- # next\n", "---\n# c\n"]);
                    self.out.push_str(marker);
                }
                // Anchors belong to their document.
                self.anchors.clear();
                let doc = if self.rng.chance(70) {
                    self.crd(n)
                } else {
                    self.config_map(n)
                };
                docs.push(doc);
            }
            (std::mem::take(&mut self.out), docs)
        }

        /// Whether every context has had every indicator, variant and offset.
        fn complete(&self) -> bool {
            CONTEXTS.iter().all(|&ctx| {
                (0..INDICATORS.len()).all(|i| {
                    (0..OFFSETS).all(|o| {
                        let variants: &[usize] = if INDICATORS[i] == ':' {
                            &[2]
                        } else {
                            &[0, 1, 2]
                        };
                        variants
                            .iter()
                            .all(|&v| self.covered.contains(&(ctx, i, v, o + 1)))
                    })
                })
            })
        }
    }

    /// Both readers, both resolutions: the documents must be `want`, exactly.
    fn check(text: &str, want: &[Node]) {
        for yaml11 in [false, true] {
            let reference = super::parse_documents_reference_reader(text, yaml11)
                .unwrap_or_else(|e| panic!("reference reader fails ({e}) on:\n{text}"));
            let nodes: Vec<Node> = reference.into_iter().map(|d| d.node).collect();
            assert!(
                nodes == want,
                "the reference reader reads other values (yaml11={yaml11}):\n{text}\n\
                 read:     {nodes:?}\nintended: {want:?}"
            );
            if let Some(fast) = super::parse_documents_fast_reader(text, yaml11) {
                let fast: Vec<Node> = fast
                    .unwrap_or_else(|e| panic!("fast reader fails ({e}) on:\n{text}"))
                    .into_iter()
                    .map(|d| d.node)
                    .collect();
                assert!(
                    fast == want,
                    "the fast reader reads other values:\n{text}\nread: {fast:?}"
                );
            }
        }
        let reference = ply::yaml::parse_documents(text).expect("parse_documents reads it");
        let nodes: Vec<Node> = reference.into_iter().map(|d| d.node).collect();
        assert!(nodes == want, "parse_documents reads other values:\n{text}");
    }

    #[test]
    fn folded_plain_scalars_read_as_intended() {
        let mut g = Gen::new(25);
        let mut files = 0;
        let mut docs = 0;
        let mut tally = super::Tally::default();
        while !g.complete() || files < 60 {
            assert!(files < 2000, "the generator does not cover every case");
            let (text, want) = g.file();
            check(&text, &want);
            super::compare(&text, &mut tally).unwrap_or_else(|e| panic!("{text}\n{e}"));
            files += 1;
            docs += want.len();
        }
        let lines: usize = g.counters.values().sum();
        eprintln!(
            "folded plain scalars: {files} files, {docs} documents, {lines} continuation lines, {} cases covered",
            g.covered.len()
        );
    }

    /// What the generator leaves out because it is not text: a continuation line starting
    /// with `: ` or a lone `:` ends the scalar, and a value indicator then stands where no
    /// key is (libyaml: "mapping values are not allowed in this context"); a comment line
    /// followed by more text leaves that text without a key. Both readers must refuse them.
    #[test]
    fn invalid_continuations_fail() {
        let texts = [
            "a: first\n  : x\n",
            "a: first\n  :\n",
            "- first\n  : x\n",
            "a:\n  first\n   : x\n",
            "a: first\n  # c\n  more\n",
            "a:\n- b\n  # c\n  more\n",
        ];
        for text in texts {
            assert!(
                super::parse_documents_reference_reader(text, false).is_err(),
                "{text:?} is read"
            );
            if let Some(r) = super::parse_documents_fast_reader(text, false) {
                assert!(r.is_err(), "{text:?} is read by the fast reader");
            }
        }
    }
}
