//! What ply's two readers of YAML text share — the reference reader (`parse.rs`, over
//! serde_yaml) and the fast reader (`fast.rs`): the error they return, where a node sits in
//! its document ([`Ctx`]), what the text around a scalar says (its tag, a key written without
//! a value) and how a scalar keeps its source text ([`spell`]). Owns no reading: both readers
//! import it, neither imports the other's internals (`parse.rs` only calls `fast::read`).

use std::fmt;

use super::Node;

/// A reader of one document, handed to [`spell`] (`parse::parse_one`).
pub(super) type Reread = fn(&str) -> Result<Node, ParseError>;

/// A syntax error, with its byte offset in the text when the parser knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub offset: Option<usize>,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// Stands in, in `parse::parse_documents_marking_empty_nulls`, for a null written as nothing.
pub(crate) const EMPTY_NULL: &str = "\u{0}ply:empty-null";

/// Whether a map key whose text (closing quote included) ends at `end` in `text` has no value
/// written after its colon.
pub(super) fn nothing_after_key(text: &str, end: usize) -> bool {
    let rest = text.as_bytes().get(end..).unwrap_or_default();
    let skip = |r: &[u8]| -> usize { r.iter().take_while(|c| matches!(c, b' ' | b'\t')).count() };
    let rest = &rest[skip(rest)..];
    let Some(rest) = rest.strip_prefix(b":") else {
        return false;
    };
    let rest = &rest[skip(rest)..];
    matches!(
        rest.first(),
        None | Some(b'\n' | b'\r' | b'#' | b',' | b'}')
    )
}

/// The tag token that ends `before` (the text before a scalar, its opening quote left out),
/// separated from the scalar by blanks: `!!str`, `!Foo`, or one after a flow indicator.
pub(super) fn tag_before(before: &str) -> Option<&str> {
    let trimmed = before.trim_end_matches([' ', '\t']);
    if trimmed.len() == before.len() {
        return None;
    }
    let token_start = trimmed.rfind([' ', '\t', '\n', '\r']).map_or(0, |i| i + 1);
    let token = &trimmed[token_start..];
    if token.starts_with('!') {
        return Some(token);
    }
    // In a flow collection the tag may follow an indicator: `[1,!!str 2]`.
    let i = token.rfind([',', '[', '{'])?;
    token[i + 1..].starts_with('!').then(|| &token[i + 1..])
}

/// A resolved scalar of a [`Ctx::SpellValue`] position written as `text`: the value itself
/// when `text` is what ply prints, else a [`Node::Spelled`] keeping the text. `written`: the
/// text is the scalar's own (else it was found after the key, and must read back as the value:
/// `reread` is the reader's `parse_one`, handed down so that this file needs no reader).
pub(super) fn spell(value: Node, text: &str, written: bool, reread: Reread) -> Node {
    // The text ply prints for the value; a null prints as `null` but an empty value reads
    // as "" in kustomize, so every spelling of null is kept.
    let printed = match value {
        Node::Null => None,
        _ => value.scalar_text(),
    };
    if printed.as_deref() == Some(text) {
        return value;
    }
    // The text found must read as the same value, else it is not this value's text.
    let reads_back =
        written || reread(text).is_ok_and(|n| n == value && !matches!(n, Node::Str(_)));
    if !reads_back {
        return value;
    }
    Node::Spelled(Box::new(super::Spelled {
        value,
        text: text.to_string(),
    }))
}

/// Whether a scalar outside the maps whose every value keeps its text ([`Ctx::keeps_text`])
/// keeps its source text all the same: a number or boolean written otherwise than ply prints
/// it (`2.0`, `.5`, `017`, `0x10`, `1E-7`, `True`). kyaml keeps every scalar's text
/// (`Node.Value`), and replacements copy it into their targets (`setFieldValue`,
/// api/filters/replacement/replacement.go): `2.0` copied into a string prints `"2.0"`, and
/// into an integer fails as go-yaml decodes it. Nulls are left plain (the stages that look
/// for nulls look for [`Node::Null`]; kustomize takes no text from a null source).
pub(super) fn keeps_own_text(value: &Node, text: &str) -> bool {
    match value {
        Node::Bool(b) => text != if *b { "true" } else { "false" },
        Node::Int(_) => {
            let digits = text.strip_prefix('-').unwrap_or(text);
            digits.is_empty()
                || !digits.bytes().all(|b| b.is_ascii_digit())
                || (digits.len() > 1 && digits.starts_with('0'))
                || text == "-0"
        }
        Node::Float(_) => value.scalar_text().as_deref() != Some(text),
        _ => false,
    }
}

/// Where a node sits in its document, for the values whose source text kustomize reads back
/// (see [`Node::Spelled`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctx {
    /// The document's top-level node.
    Root,
    /// The top-level `metadata`.
    Metadata,
    /// Top-level `data` and `binaryData`, `metadata.labels`.
    Spell,
    /// A value of a [`Ctx::Spell`] map: a scalar keeps its source text when it is not printed
    /// as written.
    SpellValue,
    /// `metadata.annotations`.
    Annotations,
    /// A value of `metadata.annotations`: a [`Ctx::SpellValue`] that kustomize only ever reads
    /// as its text (`RNode.GetAnnotations` reads `Node.Value`, `SetAnnotations` writes it back
    /// as a string), so a tagged scalar there is never decoded and cannot fail
    /// (`parse.rs`, `NodeVisitor::visit_enum`).
    AnnotationValue,
    /// The value of a plain `<<` that is the first key written `<<` of its mapping (or an
    /// item of a sequence there). kyaml clears the first `<<` key of a mapping, plain or
    /// quoted, before it merges (`removeMergeTags`, kyaml/yaml/rnode.go), and copies the
    /// merged mappings' entries as they are (`mergeAll`: each source is the node as read,
    /// an alias's anchor too, since `CopyYNode` keeps `Alias` pointing at the unprocessed
    /// original). So a quoted `"<<"` key of a merged mapping is kept (checked with kubectl:
    /// `<<: [*b, {"<<": 5}]` with `&b {"<<": 1}` prints `<<: 1`). When a quoted `"<<"` comes
    /// first, it is the one cleared, and the merge is left to go-yaml's decoding of the
    /// value, whose own first `"<<"` was cleared as any mapping's.
    MergeSource,
    Other,
}

impl Ctx {
    /// Whether a scalar here keeps its source text ([`Ctx::SpellValue`],
    /// [`Ctx::AnnotationValue`]).
    pub(super) fn keeps_text(self) -> bool {
        matches!(self, Ctx::SpellValue | Ctx::AnnotationValue)
    }

    pub(super) fn child(self, key: &str) -> Ctx {
        match (self, key) {
            (Ctx::Root, "metadata") => Ctx::Metadata,
            (Ctx::Root, "data" | "binaryData") | (Ctx::Metadata, "labels") => Ctx::Spell,
            (Ctx::Metadata, "annotations") => Ctx::Annotations,
            (Ctx::Annotations, _) => Ctx::AnnotationValue,
            // kyaml reads a name or namespace as its text (`RNode.GetName`): `name: 0x10`
            // is the name "0x10" (`resource::keep_id_text`).
            (Ctx::Spell, _) | (Ctx::Metadata, "name" | "namespace") => Ctx::SpellValue,
            _ => Ctx::Other,
        }
    }
}
