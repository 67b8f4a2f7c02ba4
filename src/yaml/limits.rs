//! The reader's limits on hostile text, checked where text enters the YAML reader
//! (`parse.rs` calls [`check_nesting`] before the parser sees the text, and charges every
//! scalar it builds to an [`Expansion`] budget). Each refusal is a [`ParseError`] with the byte
//! offset of the place that went past the limit; the message says which limit it is. The limits
//! are listed in `docs/reliability.md`.

use std::cell::Cell;

use super::ParseError;

/// Flow collections (`[`, `{`) nested deeper than this are refused before the YAML parser sees
/// the text. go-yaml v3, which kustomize reads with, refuses the same depth (its
/// `max_flow_level`, `yaml_parser_increase_flow_level` in `scannerc.go`); the parser ply uses
/// for what the fast reader leaves takes time quadratic in the flow depth (libyaml's scanner
/// re-checks every open level at each token), so the text is scanned first, in one linear pass.
pub(crate) const MAX_FLOW_DEPTH: usize = 10_000;

/// Block collections open at increasing columns (`- - - x`, maps indented under maps) past
/// this many are refused, as go-yaml v3 refuses them (its `max_indents`,
/// `yaml_parser_roll_indent` in `scannerc.go`: a sequence written at its key's column opens no
/// level). The fast reader (`fast.rs`) counts them; see [`indents_message`].
pub(crate) const MAX_INDENTS: usize = 10_000;

/// What the fast reader says for block nesting past [`MAX_INDENTS`].
pub(crate) fn indents_message() -> String {
    format!(
        "nesting too deep: more than {MAX_INDENTS} block collections open at increasing \
         indentation; kustomize's YAML reader (go-yaml v3, its max_indents) refuses this depth \
         too"
    )
}

/// The depth at which the reference reader (serde_yaml, for texts the fast reader leaves to
/// it) stops: its fixed recursion limit.
pub const READER_DEPTH: usize = 128;

/// What the reference reader says for nesting deeper than it reads.
pub const NESTING_MESSAGE: &str = "nesting too deep for ply's reference YAML reader (128 \
     levels): ply reads up to 10000 levels, as kustomize does, only in texts without anchors, \
     aliases, tags, complex keys, folded (>) or multi-line scalars and unusual flow syntax; \
     remove those, or nest less deeply";

/// Scalars built from aliases may add up to this many times the input's size (plus
/// [`EXPANSION_FLOOR`]) before the document is refused: the rule of go-yaml v3
/// (`decode.go`, `allowedAliasRatio`), which allows about one alias-expanded byte per input
/// byte in large documents and far more in small ones, taken here over bytes rather than nodes
/// (a few megabytes of one scalar repeated a thousand times is a few nodes but gigabytes).
pub(crate) const EXPANSION_RATIO: usize = 10;
/// Bytes of scalars any document may build, whatever its size (small documents with a few
/// aliases are normal).
pub(crate) const EXPANSION_FLOOR: usize = 1 << 20;

/// The flow nesting depth of `text` must stay within [`MAX_FLOW_DEPTH`]. Brackets inside
/// quoted scalars and comments do not count; stray brackets in plain or block scalars may (the
/// scan is lexical), which only matters for text with thousands of unmatched ones.
pub(crate) fn check_nesting(text: &str) -> Result<(), ParseError> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    let mut prev = b'\n';
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    return Err(ParseError {
                        message: format!(
                            "nesting deeper than {MAX_FLOW_DEPTH} levels of [ or {{ (the limit of \
                             kustomize's YAML reader too)"
                        ),
                        offset: Some(i),
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'#' if matches!(prev, b' ' | b'\t' | b'\n' | b'\r') => {
                i = memchr_newline(bytes, i);
                prev = b'\n';
                continue;
            }
            b'"' | b'\''
                if matches!(
                    prev,
                    b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b',' | b':'
                ) =>
            {
                i = quoted_end(bytes, i);
                prev = b;
                continue;
            }
            _ => {}
        }
        prev = b;
        i += 1;
    }
    Ok(())
}

fn memchr_newline(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p)
}

/// The byte after the quoted scalar opening at `start` (or the end of the text).
fn quoted_end(bytes: &[u8], start: usize) -> usize {
    let q = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if q == b'"' => i += 2,
            b'\'' if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == q => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The default of [`ReaderLimits::document_size`]: 64 MiB of scalars in one document. The
/// API server refuses objects past about 1.5 MiB (etcd's request limit) and the largest
/// CustomResourceDefinitions are a few MiB, so a real manifest stays far below.
pub(crate) const DOCUMENT_SIZE: usize = 64 << 20;

/// The reader's limits that a render may raise (`ply render --max-alias-expansion`,
/// `--max-document-size`): a value passed down with the render's options, never global.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReaderLimits {
    /// Scalars built from aliases may add up to this many times the input's size (plus
    /// [`EXPANSION_FLOOR`]).
    pub alias_ratio: usize,
    /// Bytes of scalars (keys and values, after alias expansion) one document may hold.
    pub document_size: usize,
    /// Whether a command's flags set these limits (resource files of a render): only then do
    /// the messages name the flag that raises them. Other files (kustomizations, patches) are
    /// read under [`ReaderLimits::DEFAULT`], which no flag changes.
    pub flagged: bool,
}

impl ReaderLimits {
    pub const DEFAULT: ReaderLimits = ReaderLimits {
        alias_ratio: EXPANSION_RATIO,
        document_size: DOCUMENT_SIZE,
        flagged: false,
    };

    /// Whether a text of `len` bytes without aliases stays within both limits whatever it
    /// holds (its scalars never add up to more than its bytes): then a reader that refuses
    /// aliases needs no counting.
    pub fn admit_without_aliases(&self, len: usize) -> bool {
        len <= self.document_size
            && len
                <= len
                    .saturating_mul(self.alias_ratio)
                    .saturating_add(EXPANSION_FLOOR)
    }
}

impl Default for ReaderLimits {
    fn default() -> Self {
        ReaderLimits::DEFAULT
    }
}

/// The budget of scalar bytes one parse may build (see [`EXPANSION_RATIO`]), and the bytes
/// the current document has built (see [`ReaderLimits::document_size`]).
#[derive(Debug)]
pub(crate) struct Expansion {
    left: Cell<usize>,
    ratio: usize,
    document: Cell<usize>,
    document_size: usize,
    flagged: bool,
}

impl Expansion {
    pub(crate) fn for_text(text: &str, limits: ReaderLimits) -> Expansion {
        Expansion {
            left: Cell::new(
                text.len()
                    .saturating_mul(limits.alias_ratio)
                    .saturating_add(EXPANSION_FLOOR),
            ),
            ratio: limits.alias_ratio,
            document: Cell::new(0),
            document_size: limits.document_size,
            flagged: limits.flagged,
        }
    }

    /// A new document starts: its size counts from zero.
    pub(crate) fn new_document(&self) {
        self.document.set(0);
    }

    /// Takes `n` bytes from the budget; an error message once it is spent.
    pub(crate) fn charge(&self, n: usize) -> Result<(), String> {
        let raise = |flag: &str| {
            if self.flagged {
                format!("raise the limit with {flag}")
            } else {
                format!("a fixed limit for this kind of file; {flag} raises it for resource files")
            }
        };
        let document = self.document.get().saturating_add(n);
        if document > self.document_size {
            return Err(format!(
                "the document holds more than {} of text once aliases are expanded; ply \
                 refuses it ({})",
                human_size(self.document_size),
                raise("--max-document-size")
            ));
        }
        self.document.set(document);
        match self.left.get().checked_sub(n) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => Err(format!(
                "the document expands to more than {} times its size through aliases (a YAML \
                 bomb?); ply refuses it, as kustomize's reader refuses excessive aliasing \
                 ({})",
                self.ratio,
                raise("--max-alias-expansion")
            )),
        }
    }
}

/// `64 MiB`, `1 GiB`, `512 KiB`, `100 bytes`: a size as the limits' messages print it.
pub(crate) fn human_size(n: usize) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n % (1 << shift) == 0 {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_found_in_one_pass() {
        let deep = format!(
            "a: {}{}",
            "[".repeat(MAX_FLOW_DEPTH + 1),
            "]".repeat(MAX_FLOW_DEPTH + 1)
        );
        let e = check_nesting(&deep).unwrap_err();
        assert_eq!(e.offset, Some(3 + MAX_FLOW_DEPTH));
        let quoted = format!(
            "a: \"{}\"\nb: '{}' # {}\n",
            "[".repeat(20_000),
            "{".repeat(20_000),
            "[".repeat(20_000)
        );
        check_nesting(&quoted).unwrap();
    }

    #[test]
    fn expansion_budget() {
        let e = Expansion::for_text("ab", ReaderLimits::DEFAULT);
        e.charge(EXPANSION_FLOOR).unwrap();
        e.charge(20).unwrap();
        assert!(
            e.charge(1)
                .unwrap_err()
                .contains("raises it for resource files")
        );
        let raised = Expansion::for_text(
            "ab",
            ReaderLimits {
                alias_ratio: 100,
                flagged: true,
                ..ReaderLimits::DEFAULT
            },
        );
        raised.charge(EXPANSION_FLOOR + 200).unwrap();
        assert!(
            raised
                .charge(1)
                .unwrap_err()
                .contains("--max-alias-expansion")
        );
    }

    #[test]
    fn document_size_counts_per_document() {
        let limits = ReaderLimits {
            document_size: 10,
            flagged: true,
            ..ReaderLimits::DEFAULT
        };
        let e = Expansion::for_text("text", limits);
        e.charge(10).unwrap();
        assert!(e.charge(1).unwrap_err().contains("--max-document-size"));
        e.new_document();
        e.charge(10).unwrap();
        assert_eq!(human_size(64 << 20), "64 MiB");
        assert_eq!(human_size(1000), "1000 bytes");
    }
}
