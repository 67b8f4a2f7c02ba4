//! The fast YAML reader against the reference reader on arbitrary text: where the fast reader
//! reads a text, it reads the same documents (nodes, kept source texts, offsets) as the
//! reference reader, which must not fail there (`tests/fast_reader.rs` does the same on the
//! corpora and on generated documents).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ply::testing::{NESTING_MESSAGE, READER_DEPTH};
use ply::testing::{parse_documents_fast_reader, parse_documents_reference_reader};

// On a deep stack, as ply runs (`limits::with_deep_stack`): deep inputs recurse.
fuzz_target!(|data: &[u8]| ply::with_deep_stack(|| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for yaml11 in [false, true] {
        let Some(fast) = parse_documents_fast_reader(text, yaml11) else {
            continue;
        };
        let reference = parse_documents_reference_reader(text, yaml11);
        let fast = match fast {
            Ok(fast) => fast,
            // Past kustomize's nesting limit: the reference reader refuses it too.
            Err(e) => {
                assert!(
                    reference.is_err(),
                    "only the fast reader fails ({e}) on {text:?}"
                );
                continue;
            }
        };
        match reference {
            // Deeper than the reference reader reads (serde_yaml's recursion limit).
            Err(e)
                if e.message == NESTING_MESSAGE
                    && fast
                        .iter()
                        .any(|d| d.node.nests_deeper_than(READER_DEPTH - 4)) => {}
            Ok(reference) => assert_eq!(
                format!("{reference:?}"),
                format!("{fast:?}"),
                "yaml11={yaml11}: the readers differ on {text:?}"
            ),
            Err(e) => panic!("yaml11={yaml11}: only the reference reader fails ({e}) on {text:?}"),
        }
    }
}));
