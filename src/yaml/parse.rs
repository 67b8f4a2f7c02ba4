//! YAML/JSON text → [`Node`] documents. The only file in ply that names the YAML crate
//! (`serde_yaml`), so that it can be swapped here alone. Records the byte offset at which each
//! document starts so that diagnostics can point into the file.
//!
//! Two readings of plain scalars: [`parse_documents`] / [`parse_one`] resolve them as kustomize
//! reads Kubernetes objects (kyaml, go-yaml v3: `y`, `yes`, `on` are strings);
//! [`parse_config_one`] / [`parse_config_documents`] as kustomize reads its own configuration
//! (the kustomization, `configurations:` and replacement files, JSON 6902 patches), which go
//! through sigs.k8s.io/yaml and go-yaml v2 with YAML 1.1 booleans.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};

use super::limits::ReaderLimits;
pub(crate) use super::reading::EMPTY_NULL;
pub use super::reading::ParseError;
use super::reading::{Ctx, keeps_own_text, nothing_after_key, spell, tag_before};
use super::resolve::{as_go_yaml_reads, plain_reads_as_string, u128_node, yaml11_bool};
use super::{Map, Node, ScalarStyle};

/// One document of a multi-document stream.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedDoc {
    /// Byte offset of the document's first line in the text (after any `---` marker line).
    pub offset: usize,
    pub node: Node,
}

impl From<serde_yaml::Error> for ParseError {
    fn from(e: serde_yaml::Error) -> Self {
        let offset = e.location().map(|l| l.index());
        // serde_yaml appends " at line L column C" to its messages; the diagnostic shows the
        // position itself, so keep the message short.
        let mut message = e.to_string();
        if let Some(i) = message.find(" at line ") {
            message.truncate(i);
        }
        if message.starts_with("recursion limit exceeded") {
            message = super::limits::NESTING_MESSAGE.to_string();
        }
        ParseError { message, offset }
    }
}

/// Parses every document of a YAML (or JSON) stream. Empty documents (nothing, or only
/// comments, between markers) come back as `Node::Null`; callers that want them skipped skip
/// them.
pub fn parse_documents(text: &str) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_with(text, false)
}

/// [`parse_documents`] (or, with `yaml11`, [`parse_config_documents`]) by the reference reader
/// alone (serde_yaml with ply's go-yaml rules), for comparing the two readers.
pub fn parse_documents_reference_reader(
    text: &str,
    yaml11: bool,
) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_reference(
        text,
        yaml11,
        None,
        false,
        false,
        ReaderLimits::DEFAULT,
        if yaml11 { As::Other } else { As::Resource },
    )
}

/// [`parse_documents`] (or, with `yaml11`, [`parse_config_documents`]) by the fast reader
/// alone (`fast.rs`); `None` where it gives up and the reference reader reads the text, an
/// error where the text nests deeper than kustomize's reader allows (`limits::MAX_INDENTS`).
pub fn parse_documents_fast_reader(
    text: &str,
    yaml11: bool,
) -> Option<Result<Vec<ParsedDoc>, ParseError>> {
    fast_reader(text, yaml11, false)
}

/// [`parse_documents_marking_empty_nulls`] by the fast reader alone (see
/// [`parse_documents_fast_reader`]).
pub fn parse_documents_marking_empty_nulls_fast_reader(
    text: &str,
) -> Option<Result<Vec<ParsedDoc>, ParseError>> {
    fast_reader(text, false, true)
}

/// [`parse_documents_marking_empty_nulls`] by the reference reader alone.
pub fn parse_documents_marking_empty_nulls_reference_reader(
    text: &str,
) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_reference(
        text,
        false,
        None,
        false,
        true,
        ReaderLimits::DEFAULT,
        As::Resource,
    )
}

fn fast_reader(
    text: &str,
    yaml11: bool,
    mark_empty_nulls: bool,
) -> Option<Result<Vec<ParsedDoc>, ParseError>> {
    let docs = super::fast::read(text, yaml11, mark_empty_nulls, parse_one)?;
    Some(docs.map(|docs| {
        docs.into_iter()
            .map(|(offset, node)| ParsedDoc { offset, node })
            .collect()
    }))
}

/// [`parse_documents`] for kustomize's own configuration files: a plain, untagged `y`, `Y`,
/// `yes`, `Yes`, `YES`, `on`, `On`, `ON` is `true` and `n`, `N`, `no`, `No`, `NO`, `off`, `Off`,
/// `OFF` is `false`, as go-yaml v2 resolves them (its `resolve.go` table, YAML 1.1), which
/// sigs.k8s.io/yaml (`yaml.Unmarshal`, `yaml.YAMLToJSON`) uses. Such a key becomes `"true"` or
/// `"false"`, as sigs.k8s.io/yaml turns keys into strings.
pub fn parse_config_documents(text: &str) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_with(text, true)
}

/// [`parse_one`] with YAML 1.1 booleans (see [`parse_config_documents`]).
pub(crate) fn parse_config_one(text: &str) -> Result<Node, ParseError> {
    one_of(parse_config_documents(text)?)
}

/// Whether a string value that kustomize sets with kyaml's `FieldSetter` (a generated
/// ConfigMap's or Secret's value) is written in a style other than plain: a literal block
/// when it has a line break (`makeConfigMapValueRNode`, kyaml/yaml/datamap.go), double
/// quotes when [`yaml11_non_string`] (`FieldSetter.Filter`, kyaml/yaml/fns.go). See
/// [`Map::styled`].
pub(crate) fn set_value_styled(s: &str) -> bool {
    s.contains('\n') || yaml11_non_string(s)
}

/// kyaml's `IsValueNonString` (kyaml/yaml/compatibility.go), which `FieldSetter` asks of every
/// plain string it sets: whether go-yaml v2 (YAML 1.1) decodes the text as something other
/// than a string (`8080`, `yes`, `0x10`, `a: b`, `null`, `# x`), not when it fails to read it;
/// never for "" or a text with a line break. Text that reads as one plain word is decided by
/// the resolver alone; only text that may be a collection, a comment, a tag or a document
/// marker is parsed.
pub(crate) fn yaml11_non_string(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    let mut parse = matches!(
        first,
        b'[' | b'{'
            | b'!'
            | b'&'
            | b'*'
            | b'#'
            | b'?'
            | b'|'
            | b'>'
            | b'%'
            | b'@'
            | b'`'
            | b'"'
            | b'\''
            | b','
            | b':'
            | b' '
            | b'\t'
            | b'\r'
    ) || (first == b'-' && matches!(b.get(1), None | Some(b' ' | b'\t' | b'-')))
        || (first == b'.' && s.starts_with("..."))
        || matches!(last, b' ' | b':');
    if first == b'\n' {
        return false;
    }
    // One pass: a line break (never non-string), a flow indicator, a tab or carriage return,
    // `: ` (a mapping) or ` #` (a comment) anywhere.
    let mut prev = first;
    for &c in &b[1..] {
        match c {
            b'\n' => return false,
            b'[' | b']' | b'{' | b'}' | b'\t' | b'\r' => parse = true,
            b' ' if prev == b':' => parse = true,
            b'#' if prev == b' ' => parse = true,
            _ => {}
        }
        prev = c;
    }
    if parse {
        return parse_config_one(s).is_ok_and(|n| !matches!(n.unspelled(), Node::Str(_)));
    }
    super::resolve::yaml11_decodes_as_non_string(s)
}

/// The style a map entry's `style` stands for with its value `v`: a rule
/// ([`ScalarStyle::Set`], [`ScalarStyle::Printed`]) applied to a string, plain for any other
/// value; any other style itself.
pub(crate) fn resolved_style(style: ScalarStyle, v: &Node) -> ScalarStyle {
    match (style, v) {
        (ScalarStyle::Set, Node::Str(s)) => ScalarStyle::quoted_if(set_value_styled(s)),
        (ScalarStyle::Printed, Node::Str(s)) => {
            ScalarStyle::quoted_if(super::emit::prints_quoted(s))
        }
        (ScalarStyle::Set | ScalarStyle::Printed, _) => ScalarStyle::Plain,
        (other, _) => other,
    }
}

/// A key written twice in one mapping; the later value is kept.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Repeated {
    pub key: String,
    /// Byte offsets of the two keys (where each key's text ends), when known.
    pub first: Option<usize>,
    pub second: Option<usize>,
}

/// [`parse_config_one`] for a kustomization: a key repeated in a mapping does not fail; the
/// last one wins, as when kustomize reads the file (sigs.k8s.io/yaml: go-yaml v2 decodes into
/// a Go map, which keeps the last value). The repeated keys are returned.
pub(crate) fn parse_config_one_keeping_last(
    text: &str,
) -> Result<(Node, Vec<Repeated>), ParseError> {
    let repeats = std::cell::RefCell::new(Vec::new());
    let node = one_of(parse_documents_in(
        text,
        true,
        Some(&repeats),
        false,
        false,
        ReaderLimits::DEFAULT,
        As::Other,
    )?)?;
    Ok((node, repeats.into_inner()))
}

/// [`parse_config_documents`] for JSON 6902 operations: two YAML 1.1 words that read as the
/// same boolean (`yes` and `on`) as keys of one map are one key `"true"` holding the last
/// value, as go-yaml v2 decodes them in sigs.k8s.io/yaml's `YAMLToJSON` (kustomize's
/// `patchjson6902.Filter.decodePatch`). Elsewhere kustomize fails on boolean keys, and ply
/// keeps refusing the repeat.
pub(crate) fn parse_operation_documents(text: &str) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_in(
        text,
        true,
        None,
        true,
        false,
        ReaderLimits::DEFAULT,
        As::Other,
    )
}

/// [`parse_documents`] where a map value written as nothing (`replicas:`) reads as the string
/// [`EMPTY_NULL`] instead of null, and one written `null` or `~` stays null: kustomize keeps
/// the second and drops the first when a strategic merge patch walks the object
/// (`merge2.VisitMap`). Used only to find those fields again (`render::patches`).
pub(crate) fn parse_documents_marking_empty_nulls(
    text: &str,
) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_in(
        text,
        false,
        None,
        false,
        true,
        ReaderLimits::DEFAULT,
        As::Resource,
    )
}

/// [`parse_documents`] for strategic merge patches: a map value written as nothing inside a
/// flow mapping (`{x: }`) somewhere inside a list reads as a null that keeps its empty text
/// ([`Node::Spelled`], text `""`). kyaml holds it as a null, but where kustomize copies a
/// patch's list as it is (a list it does not merge: merge2's `VisitList` returns the patch's
/// node), the list keeps its flow style, and kustomize's output step prints it and reads it
/// back, which makes such a value `""` (as in a resource, [`As::ResourceFile`]); one written
/// `~` or `null` stays `null` (checked with kubectl 1.32 and 1.37: `args: [{x: }]` in a patch
/// gives `- x: ""`). Everywhere else it is a null (`merge::smp`, `kz_as_written`).
pub(crate) fn parse_patch_documents(text: &str) -> Result<Vec<ParsedDoc>, ParseError> {
    let mut docs = parse_documents(text)?;
    fn null_in_list(n: &Node, in_list: bool) -> bool {
        match n {
            Node::Map(m) => m.values().any(|v| null_in_list(v, in_list)),
            Node::Seq(items) => items.iter().any(|v| null_in_list(v, true)),
            other => in_list && other.is_null(),
        }
    }
    if !text.contains('{') || !docs.iter().any(|d| null_in_list(&d.node, false)) {
        return Ok(docs);
    }
    // Read as a resource file is read: a flow mapping's value written as nothing is "".
    let Ok(flow_read) = parse_plain(text, As::ResourceFile) else {
        return Ok(docs);
    };
    fn keep_empty(n: &mut Node, flow_read: &Node, in_list: bool) {
        match (n, flow_read) {
            (Node::Map(m), Node::Map(w)) => {
                for (k, v) in m.iter_mut() {
                    match w.get(k) {
                        Some(Node::Str(s)) if in_list && s.is_empty() && v.is_null() => {
                            *v = Node::Spelled(Box::new(super::Spelled {
                                value: Node::Null,
                                text: String::new(),
                            }));
                        }
                        Some(w) => keep_empty(v, w, in_list),
                        None => {}
                    }
                }
            }
            (Node::Seq(items), Node::Seq(w)) if items.len() == w.len() => {
                for (v, w) in items.iter_mut().zip(w) {
                    keep_empty(v, w, true);
                }
            }
            _ => {}
        }
    }
    if flow_read.len() == docs.len() {
        for (d, f) in docs.iter_mut().zip(&flow_read) {
            keep_empty(&mut d.node, &f.node, false);
        }
    }
    Ok(docs)
}

/// Where `text` spells the integer `i` in hexadecimal, octal or binary as serde_yaml reads it
/// (`0x`, `0o`, `0b`, lower-case, any case of hex digits, leading zeros, a sign before):
/// the spelling, sign included.
fn non_decimal_spelling(text: &str, i: i128) -> Option<&str> {
    let mag = i.unsigned_abs();
    let forms = [
        ("0x", format!("{mag:x}")),
        ("0o", format!("{mag:o}")),
        ("0b", format!("{mag:b}")),
    ];
    for (prefix, digits) in forms {
        for (at, _) in text.match_indices(prefix) {
            let rest = &text[at + 2..];
            let body = rest.trim_start_matches('0');
            let Some(head) = body.get(..digits.len()) else {
                continue;
            };
            let ends = !body[digits.len()..].starts_with(|c: char| c.is_ascii_alphanumeric());
            if ends && head.eq_ignore_ascii_case(&digits) {
                let signed = at > 0 && text.as_bytes()[at - 1] == if i < 0 { b'-' } else { b'+' };
                let start = if signed { at - 1 } else { at };
                let end = at + 2 + (rest.len() - body.len()) + digits.len();
                if i < 0 && !signed {
                    continue;
                }
                return Some(&text[start..end]);
            }
        }
    }
    None
}

/// Whether `s` starts with a block sequence's `-` indicator.
fn is_item(s: &str) -> bool {
    s.strip_prefix('-')
        .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t', '\n', '\r']))
}

/// The column of the mapping key whose text ends at `end`: where its line's content starts,
/// after the `- ` of the block sequence items it opens (`- - key:`).
fn key_column(text: &str, end: usize) -> usize {
    let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1);
    let mut line = &text[line_start..end];
    loop {
        let trimmed = line.trim_start_matches(' ');
        match trimmed.strip_prefix('-') {
            Some(r) if r.starts_with([' ', '\t']) => line = r,
            _ => return end - line_start - trimmed.len(),
        }
    }
}

/// Where a node starts in `rest`, the text after its key's colon, its `-` or a property: on
/// the same line after blanks, or else on the next line that is not empty or a comment, when
/// that line is more indented than `column` (or, `seq_at_column`, a block sequence at it).
/// `column` is asked for only then (finding a key's column scans its line, which may be a
/// whole JSON file).
fn node_start(rest: &str, column: impl Fn() -> usize, seq_at_column: bool) -> Option<&str> {
    let same_line = rest.trim_start_matches([' ', '\t']);
    if !(same_line.is_empty() || same_line.starts_with(['\n', '\r', '#'])) {
        return Some(same_line);
    }
    let column = column();
    let mut pos = same_line.find('\n')? + 1;
    while pos < same_line.len() {
        let line = &same_line[pos..];
        let line = &line[..line.find('\n').map_or(line.len(), |i| i + 1)];
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = line[indent..].trim_end_matches(['\n', '\r']);
        if body.trim_start_matches([' ', '\t']).is_empty() || body.starts_with('#') {
            pos += line.len();
            continue;
        }
        let belongs = indent > column || (seq_at_column && indent == column && is_item(body));
        return belongs.then(|| &same_line[pos + indent..]);
    }
    None
}

fn parse_documents_with(text: &str, yaml11: bool) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_in(
        text,
        yaml11,
        None,
        false,
        false,
        ReaderLimits::DEFAULT,
        if yaml11 { As::Other } else { As::Resource },
    )
}

/// [`parse_documents`] under a render's own reader limits (`--max-alias-expansion`,
/// `--max-document-size`); the other readers keep the defaults.
pub(crate) fn parse_documents_limited(
    text: &str,
    limits: ReaderLimits,
) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_in(text, false, None, false, false, limits, As::ResourceFile)
}

/// [`parse_documents_in`] with the defaults: YAML 1.2, no repeated keys recorded, boolean keys
/// as any other, empty nulls not marked, the default limits.
fn parse_plain(text: &str, read_as: As) -> Result<Vec<ParsedDoc>, ParseError> {
    parse_documents_in(
        text,
        false,
        None,
        false,
        false,
        ReaderLimits::DEFAULT,
        read_as,
    )
}

fn parse_documents_in<'t>(
    text: &'t str,
    yaml11: bool,
    repeats: Option<&'t std::cell::RefCell<Vec<Repeated>>>,
    last_bool_key_wins: bool,
    mark_empty_nulls: bool,
    limits: ReaderLimits,
    resource: As,
) -> Result<Vec<ParsedDoc>, ParseError> {
    // The fast reader (`fast.rs`) reads most manifests; it gives up on anything it does not
    // read exactly as the reader below does, which then reads the text (and reports errors).
    // A repeated key, or one that is not a string, makes the fast reader give up: with
    // `repeats` it has none to record, and `last_bool_key_wins` is about boolean keys.
    // The fast reader gives up on aliases, and a text without them that fits the limits
    // cannot pass them (`limits.rs`); a bigger one is read below, which counts.
    if limits.admit_without_aliases(text.len())
        && let Some(docs) = fast_reader(text, yaml11, mark_empty_nulls)
    {
        return docs;
    }
    parse_documents_reference(
        text,
        yaml11,
        repeats,
        last_bool_key_wins,
        mark_empty_nulls,
        limits,
        resource,
    )
}

/// [`parse_documents_in`] without the fast reader: serde_yaml and ply's go-yaml rules.
fn parse_documents_reference<'t>(
    text: &'t str,
    yaml11: bool,
    repeats: Option<&'t std::cell::RefCell<Vec<Repeated>>>,
    last_bool_key_wins: bool,
    mark_empty_nulls: bool,
    limits: ReaderLimits,
    resource: As,
) -> Result<Vec<ParsedDoc>, ParseError> {
    // A byte order mark opening the file or a document is not content (serde_yaml trips over
    // it; go-yaml and kustomize's reader skip it): `bom.rs`. Offsets stay offsets into the file.
    let stripped = super::bom::strip(text);
    let (text, removed) = match &stripped {
        Some((t, removed)) => (t.as_str(), removed.as_slice()),
        None => (text, &[][..]),
    };
    let shift = |o: usize| super::bom::original(removed, o);
    // Limits on hostile text (`limits.rs`): nesting checked before the parser sees it, alias
    // expansion charged as scalars are built.
    super::limits::check_nesting(text).map_err(|mut e| {
        e.offset = e.offset.map(shift);
        e
    })?;
    let renamed = super::dialect::check(text).map_err(|mut e| {
        e.offset = e.offset.map(shift);
        e
    })?;
    // The text as written, for messages: the renaming keeps every offset (`dialect.rs`).
    let written_text = text;
    let text = renamed.as_deref().unwrap_or(text);
    let expansion = super::limits::Expansion::for_text(text, limits);
    let key_error = std::cell::Cell::new(None);
    let starts = document_starts(text);
    let mut docs = Vec::new();
    let seed = NodeSeed {
        text: Some(Text {
            text,
            yaml11,
            repeats,
            last_bool_key_wins,
            mark_empty_nulls,
            resource: resource != As::Other,
            flow_empty_string: resource == As::ResourceFile,
            key_error: &key_error,
            expansion: &expansion,
        }),
        tagged: false,
        ctx: Ctx::Root,
        at: None,
        flow: false,
    };
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        expansion.new_document();
        let mut node = de::DeserializeSeed::deserialize(seed, de).map_err(|e| {
            let mut e = ParseError::from(e);
            // A key refused by `resource` is located at the key itself, and named as
            // written.
            if let Some(at) = key_error.take() {
                e.offset = Some(at);
            }
            if let Some(i) = e.message.find(KEY_MARK) {
                let kind = &e.message[i + KEY_MARK.len()..];
                let written = e.offset.map_or("", |o| written_key(written_text, o));
                e.message = non_string_key(written, kind);
            }
            e.offset = e.offset.map(shift);
            e
        })?;
        // Maps and lists built by growing give back their spare room, as the fast reader's,
        // built to size, have none (a render keeps every object it read until it prints).
        node.shrink_to_fit();
        let offset = shift(starts.get(i).copied().unwrap_or(0));
        docs.push(ParsedDoc { offset, node });
    }
    Ok(docs)
}

/// Parses text that must hold exactly one document (a patch, a kustomization); an empty text is
/// `Node::Null`.
///
/// Unlike [`parse_documents`], a key that is not a string is kept as its text and a quoted
/// `"<<"` is an ordinary key: the texts read here (Helm values, plugin configurations, a
/// replacement's structured data, ply's own tables) never pass kustomize's JSON step.
pub fn parse_one(text: &str) -> Result<Node, ParseError> {
    one_of(parse_plain(text, As::Other)?)
}

/// Records where a mapping's key ends (`key_ends`, by index, when repeated keys are
/// recorded); a key already in `map` is recorded as repeated, or refused when `repeats` is
/// not kept.
fn record_key(
    map: &Map,
    key: &str,
    after_key: Option<usize>,
    repeats: Option<&std::cell::RefCell<Vec<Repeated>>>,
    key_ends: &mut Vec<Option<usize>>,
) -> Result<(), String> {
    if let Some(i) = map.get_index_of(key) {
        let Some(repeats) = repeats else {
            return Err(format!("mapping key \"{key}\" already defined"));
        };
        repeats.borrow_mut().push(Repeated {
            key: key.to_string(),
            first: key_ends.get(i).copied().flatten(),
            second: after_key,
        });
        key_ends[i] = after_key;
    } else if repeats.is_some() {
        key_ends.push(after_key);
    }
    Ok(())
}

fn one_of(mut docs: Vec<ParsedDoc>) -> Result<Node, ParseError> {
    match docs.len() {
        0 => Ok(Node::Null),
        1 => Ok(docs.remove(0).node),
        n => Err(ParseError {
            message: format!("expected one YAML document, found {n}"),
            offset: docs.get(1).map(|d| d.offset),
        }),
    }
}

/// The text of the first document of a stream: up to the `---` line that opens a second one,
/// or past the `...` line that ends the first; the whole text when it holds one. A `---` line
/// before any content opens the first document; comments, blank lines and `%` directives
/// before it are not content. This is all that a reader of one document sees: go-yaml (v2 in
/// sigs.k8s.io/yaml's `Unmarshal`, which reads a kustomization, `api/types/kustomization.go`
/// `Kustomization.Unmarshal`; v3's `Decoder.Decode`, which kyaml's `kio.ByteReader` calls once
/// per chunk of text between `---` lines) parses the first document and stops at the marker
/// that ends it, so nothing after it is read, not even a syntax error.
pub(crate) fn first_document(text: &str) -> &str {
    let mut pos = 0;
    let mut opened = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let marker = |m: &str| {
            bare.strip_prefix(m)
                .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
        };
        if marker("---") {
            if opened {
                return &text[..pos];
            }
            opened = true;
        } else if marker("...") {
            if opened {
                return &text[..pos + line.len()];
            }
        } else {
            let trimmed = bare.trim_start();
            let nothing = trimmed.is_empty() || trimmed.starts_with('#');
            let directive = bare.starts_with('%') && !opened;
            if !(nothing || directive) {
                opened = true;
            }
        }
        pos += line.len();
    }
    text
}

/// Byte offsets where each document's content begins, in the order the YAML parser yields
/// documents: a stream not opening with `---` has its first document at 0; every `---` marker
/// line opens a new one (its content starts on the marker line when something other than a
/// comment follows the marker, else on the next line). `%` directive lines and `...` end
/// markers are not content. A `---` at column 0 cannot be content of a block scalar nested in a
/// mapping, so this line scan agrees with the parser for Kubernetes manifests.
fn document_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut pos = 0;
    let mut seen_content = false;
    let mut pending_first = true;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let rest = bare
            .strip_prefix("---")
            .filter(|r| r.is_empty() || r.starts_with([' ', '\t']));
        if let Some(rest) = rest {
            if pending_first && seen_content {
                starts.push(0);
            }
            pending_first = false;
            let rest = rest.trim_start();
            // `--- value` puts content on the marker line itself.
            starts.push(if rest.is_empty() || rest.starts_with('#') {
                pos + line.len()
            } else {
                pos
            });
        } else {
            let blank_or_comment = bare.trim().is_empty() || bare.trim_start().starts_with('#');
            let directive = bare.starts_with('%');
            let end_marker = bare.starts_with("...") && bare[3..].trim_start().is_empty();
            if !(blank_or_comment || directive || end_marker) {
                seen_content = true;
            }
        }
        pos += line.len();
    }
    if pending_first && seen_content {
        starts.push(0);
    }
    starts
}

impl<'de> Deserialize<'de> for Node {
    /// Deserializes without access to the source text: scalars are resolved as serde_yaml
    /// resolves them (YAML 1.2 core schema). [`parse_documents`] resolves plain scalars as
    /// kustomize does instead.
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor::plain(None))
    }
}

/// What a text is read as, where kustomize reads it by kyaml's rules (go-yaml v3, then its
/// JSON step).
#[derive(Clone, Copy, PartialEq, Eq)]
enum As {
    /// A resource file (`resources:`): [`Text::resource`] and
    /// [`Text::flow_empty_string`].
    ResourceFile,
    /// A resource or patch read as kustomize reads a resource ([`Text::resource`]).
    Resource,
    /// Any other text (kustomize's own files, Helm values, plugin configurations).
    Other,
}

/// Where the text being parsed lives in memory, to tell plain scalars (which serde_yaml hands
/// out as slices of the input) from quoted ones.
#[derive(Clone, Copy)]
struct Text<'t> {
    text: &'t str,
    /// Where repeated keys are recorded when the last one is kept (kustomize's own files,
    /// read by go-yaml v2 into Go maps); `None`: a repeated key is an error.
    repeats: Option<&'t std::cell::RefCell<Vec<Repeated>>>,
    /// Plain `y`/`yes`/`on`/`n`/`no`/`off` (in their case forms) are booleans.
    yaml11: bool,
    /// See [`parse_operation_documents`].
    last_bool_key_wins: bool,
    /// See [`parse_documents_marking_empty_nulls`].
    mark_empty_nulls: bool,
    /// Read as kustomize reads a resource ([`parse_documents`]): a quoted `"<<"` is dropped,
    /// a key that is not a string is an error, and so is a block scalar that kustomize prints
    /// and cannot read back (see `NodeVisitor::block_reread`).
    resource: bool,
    /// A value written as nothing in a flow mapping (`{k: }`, `{? k}`) is the empty string:
    /// kustomize prints a resource's `{k: }` as `k: ""` (checked with both kubectls; a block
    /// mapping's `k:` and a patch's `{k: }` stay null). A strategic merge patch that walks the
    /// object drops it as it drops a block `k:` (`render::patches`, `drop_empty_nulls`).
    flow_empty_string: bool,
    /// Where the key refused by `resource` starts (the error is located there).
    key_error: &'t std::cell::Cell<Option<usize>>,
    /// Scalar bytes this parse may still build (aliases repeat them).
    expansion: &'t super::limits::Expansion,
}

/// Charges a scalar of `len` bytes to the parse's expansion budget.
fn charge<E: de::Error>(text: Option<Text<'_>>, len: usize) -> Result<(), E> {
    match text {
        Some(t) => t.expansion.charge(len).map_err(E::custom),
        None => Ok(()),
    }
}

impl<'t> Text<'t> {
    /// The byte offset of `s` in the text when `s` is a slice of it.
    fn offset_of(&self, s: &str) -> Option<usize> {
        let base = self.text.as_ptr() as usize;
        let p = s.as_ptr() as usize;
        (p >= base && p + s.len() <= base + self.text.len()).then(|| p - base)
    }

    /// Whether the scalar `s` (a slice of the text) was written plain and untagged. A quoted
    /// scalar's content is preceded by its quote; a tagged one by `!tag` and blanks.
    fn is_plain_untagged(&self, s: &str) -> bool {
        self.offset_of(s).is_some() && !self.is_quoted(s) && self.tag_of(s).is_none()
    }

    /// Whether `s`, a slice of the text, is a quoted scalar's value. serde_yaml lends out a
    /// quoted scalar's value when it equals the text just before the closing quote (`"\x31"`
    /// lends the `1` of `\x31`); a plain scalar is never followed by a quote (the quote would
    /// belong to it).
    fn is_quoted(&self, s: &str) -> bool {
        self.offset_of(s).is_some_and(|off| {
            matches!(self.text.as_bytes().get(off + s.len()), Some(b'"' | b'\''))
        })
    }

    /// The tag written before the scalar `s` (a slice of the text): `!!str`, `!Foo`,
    /// `!<tag:yaml.org,2002:str>`.
    fn tag_of(&self, s: &str) -> Option<&'t str> {
        let off = self.offset_of(s)?;
        let mut before = &self.text[..off];
        if self.is_quoted(s) {
            before = before.strip_suffix(['"', '\''])?;
        }
        tag_before(before)
    }
}

/// The value `v`, written as a folded scalar by go-yaml v3 (`folded.rs`) and read back.
pub(super) fn reread_folded(v: &str) -> String {
    let text = super::folded::emit(v);
    // Read as kustomize's configuration is read, which leaves folded scalars alone (the text
    // holds nothing else).
    match parse_config_one(&text) {
        Ok(Node::Map(m)) => match m.get("k") {
            Some(Node::Str(s)) => s.clone(),
            // An empty folded scalar reads as "".
            _ => v.to_string(),
        },
        _ => v.to_string(),
    }
}

/// Deserializes one node with access to the source text.
#[derive(Clone, Copy)]
struct NodeSeed<'t> {
    text: Option<Text<'t>>,
    tagged: bool,
    ctx: Ctx,
    /// Where the node is written, when known.
    at: Option<At>,
    /// Inside a flow collection (`[…]`, `{…}`), where that is known.
    flow: bool,
}

/// Where a node is written in the text: what comes before it.
#[derive(Clone, Copy)]
enum At {
    /// The value of a mapping key whose text (closing quote included) ends at this offset.
    Key(usize),
    /// An item of a block sequence: the offset just after its `-`, and the `-`'s column.
    Item(usize, usize),
}

impl<'de> de::DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Node;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor {
            text: self.text,
            tagged: self.tagged,
            ctx: self.ctx,
            at: self.at,
            flow: self.flow,
        })
    }
}

/// A mapping key: `<<` written plain is YAML's merge key. A key lent out of the text knows
/// where it ends (after its closing quote), so that its value can be found in the text, where
/// it starts (its opening quote), and whether it was written plain and untagged.
enum Key {
    Merge,
    Node(Node, Option<KeyAt>),
}

/// Where a key lent out of the text is written.
#[derive(Clone, Copy)]
struct KeyAt {
    start: usize,
    end: usize,
    plain: bool,
}

#[derive(Clone, Copy)]
struct KeySeed<'t> {
    text: Option<Text<'t>>,
}

impl<'de> de::DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        let text = self.text;
        d.deserialize_any(KeyVisitor(text))
    }
}

/// Reads a mapping key (see [`KeyVisitor::typed`]).
struct KeyVisitor<'t>(Option<Text<'t>>);

impl<'de> Visitor<'de> for KeyVisitor<'_> {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key, E> {
        if v == "<<" && self.0.is_some_and(|t| t.is_plain_untagged(v)) {
            return Ok(Key::Merge);
        }
        let at = self.0.and_then(|t| {
            let start = t.offset_of(v)?;
            let end = start + v.len();
            let plain = t.is_plain_untagged(v);
            let quoted = matches!(t.text.as_bytes().get(end), Some(b'"' | b'\'')) && !plain;
            Some(KeyAt {
                start: start - usize::from(quoted && start > 0),
                end: end + usize::from(quoted),
                plain,
            })
        });
        // A core tag that serde_yaml hands over as text (`!!binary`, `!!timestamp`): a key
        // under any tag but `!!str` makes go-yaml v3's map one with interface keys (see
        // `visit_enum` below).
        if let Some(tag) = self
            .0
            .filter(|t| t.resource)
            .and_then(|t| t.tag_of(v))
            .filter(|tag| core_tag(tag) != Some("str"))
        {
            if let (Some(t), Some(at)) = (self.0, at) {
                t.key_error.set(Some(at.start));
            }
            return Err(E::custom(format!("{KEY_MARK}{TAGGED} `{tag}`")));
        }
        let node = match NodeVisitor::plain(self.0).visit_borrowed_str(v)? {
            // A key keeps the text of a timestamp: kustomize fails on a timestamp key
            // (`typed`), except a time in a flow mapping, which stays the string as written
            // (re-encoded quoted: `resolve::resolve_plain_number_or_time`).
            Node::Str(s) if s != v && super::resolve::timestamp_rfc3339(v).is_some() => {
                Node::Str(v.to_string())
            }
            node => node,
        };
        self.typed(node, at)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(Key::Node(Node::Str(v.to_string()), None))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Key, E> {
        self.typed(Node::Bool(v), None)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
        self.typed(Node::Int(v.into()), None)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
        self.typed(Node::Int(v.into()), None)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Key, E> {
        self.typed(Node::Int(v), None)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Key, E> {
        self.typed(u128_node(v), None)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Key, E> {
        self.typed(Node::Float(v), None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
        self.typed(Node::Null, None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Key, A::Error> {
        Err(de::Error::custom("a mapping key must be a scalar"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Key, A::Error> {
        Err(de::Error::custom("a mapping key must be a scalar"))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Key, A::Error> {
        let (tag, variant): (String, _) = data.variant()?;
        let node = NodeVisitor::plain(self.0).tagged_value(&tag, variant)?;
        // go-yaml v3 makes a mapping a `map[interface{}]interface{}` when one of its keys is
        // not tagged `!!str` (`decode.go`, `decoder.mapping`, `isStringKey`): a key under any
        // other tag fails kustomize's JSON step even when its value is text (`!Foo 7`,
        // `!!binary aGk=`; checked with kubectl).
        let core = super::dialect::marked_tag(&tag).or_else(|| core_tag(&tag));
        match node {
            Node::Str(_) if core != Some("str") && self.0.is_some_and(|t| t.resource) => {
                let shown = match super::dialect::marked_tag(&tag) {
                    Some(core) => format!("!!{core}"),
                    None if tag.starts_with('!') => tag,
                    None => format!("!{tag}"),
                };
                Err(de::Error::custom(format!("{KEY_MARK}{TAGGED} `{shown}`")))
            }
            Node::Str(_) => Ok(Key::Node(node, None)),
            other => self.typed(other, None),
        }
    }
}

impl KeyVisitor<'_> {
    /// A key read as `node`. Read as kustomize reads a resource ([`Text::resource`]),
    /// a key that is not a string fails, as kustomize's JSON step fails on it (`json:
    /// unsupported type: map[interface {}]interface {}`: kyaml's `RNode.MarshalJSON` decodes
    /// the object into Go maps with go-yaml v3, which keeps such a key typed), and so does an
    /// untagged plain key that go-yaml v3 reads as a timestamp (ply's reader keeps dates as
    /// strings). serde_yaml locates the error at the key; a key lent out of the text is
    /// located exactly (`key_error`).
    fn typed<E: de::Error>(self, node: Node, at: Option<KeyAt>) -> Result<Key, E> {
        let Some(t) = self.0.filter(|t| t.resource) else {
            return Ok(Key::Node(node, at));
        };
        let kind = match &node {
            // A timestamp with a time (`2001-12-14t21:59:43Z`) as the key of a flow mapping
            // stays a string in kustomize (checked with kubectl; a date alone does not).
            Node::Str(s)
                if at.is_some_and(|at| {
                    at.plain
                        && !plain_reads_as_string(s)
                        && !(s.contains(':') && in_flow(t.text, at.start))
                }) =>
            {
                "a timestamp"
            }
            Node::Str(_) => return Ok(Key::Node(node, at)),
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Int(_) => "an integer",
            _ => "a number",
        };
        if let Some(at) = at {
            t.key_error.set(Some(at.start));
        }
        Err(E::custom(format!("{KEY_MARK}{kind}")))
    }
}

/// The booleans of YAML 1.1 that YAML 1.2 (serde_yaml, go-yaml v3) reads as strings.
struct NodeVisitor<'t> {
    text: Option<Text<'t>>,
    /// Inside a value with a custom tag (`!Foo 0777`): go-yaml v3 resolves no scalar under an
    /// unknown tag, so it stays the text as written.
    tagged: bool,
    ctx: Ctx,
    at: Option<At>,
    /// Inside a flow collection (`[…]`, `{…}`), where that is known.
    flow: bool,
}

impl<'t> NodeVisitor<'t> {
    fn plain(text: Option<Text<'t>>) -> Self {
        NodeVisitor {
            text,
            tagged: false,
            ctx: Ctx::Other,
            at: None,
            flow: false,
        }
    }

    fn seed(&self, ctx: Ctx, at: Option<At>) -> NodeSeed<'t> {
        NodeSeed {
            text: self.text,
            tagged: false,
            ctx,
            at,
            flow: self.flow,
        }
    }

    /// This node, a collection, with `flow` set when it is written in flow style (`[`, `{`)
    /// or sits in one: its items and values inherit it.
    fn collection(self) -> Self {
        let flow = self.flow
            || self
                .after_props()
                .is_some_and(|(_, rest)| rest.starts_with(['[', '{']));
        // An annotation whose value is a collection is printed as `""`: kyaml reads an
        // annotation as its scalar text (`RNode.GetAnnotations`) and writes it back as a
        // string before kustomize's JSON step, so nothing inside it is ever decoded there
        // (checked with kubectl: `a: {.5: 1}` as an annotation renders `a: ""`). Inside it,
        // keys are not checked as resource keys.
        let text = match self.ctx {
            Ctx::AnnotationValue => self.text.map(|t| Text {
                resource: false,
                ..t
            }),
            _ => self.text,
        };
        NodeVisitor { flow, text, ..self }
    }

    /// A resolved scalar: the value itself, or, where kustomize reads values back as their
    /// source text ([`Ctx::SpellValue`]), a [`Node::Spelled`] when that text is not what ply prints.
    /// Elsewhere a number or boolean keeps its text when it is not what ply prints
    /// ([`keeps_own_text`]).
    fn scalar(&self, value: Node, written: Option<&str>) -> Node {
        if !self.ctx.keeps_text() && !matches!(value, Node::Bool(_) | Node::Int(_) | Node::Float(_))
        {
            return value;
        }
        let Some(text) = written.or_else(|| self.value_text()) else {
            return value;
        };
        if !self.ctx.keeps_text() && !keeps_own_text(&value, text) {
            return value;
        }
        spell(value, text, written.is_some(), parse_one)
    }

    /// An integer serde_yaml read beyond 64 bits, as go-yaml v3 reads its text
    /// ([`as_go_yaml_reads`]: decimal text is a float, `0x…` text a string). Where the node's
    /// place is not known (an item of a flow collection), its text is looked for in the
    /// document: a decimal spelling of the value makes it decimal, else a `0x`, `0o` or `0b`
    /// spelling of it is the text.
    fn beyond_64_bits(&self, n: Node) -> Node {
        if let Some(text) = self.value_text() {
            return self.scalar(as_go_yaml_reads(n, text), Some(text));
        }
        let Node::Int(i) = n else {
            return self.scalar(n, None);
        };
        let found = self
            .text
            .filter(|t| !t.text.contains(&i.to_string()))
            .and_then(|t| non_decimal_spelling(t.text, i));
        match found {
            Some(text) => Node::Str(text.to_string()),
            None => self.scalar(Node::Float(i as f64), None),
        }
    }

    /// The text of this node when it is a plain scalar on the line of its mapping key (what
    /// follows `key:` up to a comment, a flow indicator or the line's end), found from where
    /// the key ends.
    fn value_text(&self) -> Option<&'t str> {
        let (tag, rest) = self.after_props()?;
        if tag.is_some() {
            return None;
        }
        let end = rest
            .find(['\n', '\r', ',', ']', '}', '#'])
            .unwrap_or(rest.len());
        let token = rest[..end].trim_end_matches([' ', '\t']);
        (!token.is_empty() && !token.starts_with(['*', '"', '\'', '|', '>', '[', '{']))
            .then_some(token)
    }

    /// The tag and the text of this node after its properties (`key: &a !tag rest`,
    /// `- &a rest`), when where it is written is known. A node may start on a later line than
    /// its key or `-` (`key:⏎  >`), more indented than they are (a block sequence may sit at
    /// its key's column).
    fn after_props(&self) -> Option<(Option<&'t str>, &'t str)> {
        let text = self.text?;
        let (rest, seq_at_column) = match self.at? {
            At::Key(end) => {
                let rest = text.text.get(end..)?;
                (
                    rest.trim_start_matches([' ', '\t']).strip_prefix(':')?,
                    true,
                )
            }
            At::Item(after_dash, _) => (text.text.get(after_dash..)?, false),
        };
        let column = || match self.at {
            Some(At::Key(end)) => key_column(text.text, end),
            Some(At::Item(_, column)) => column,
            None => 0,
        };
        let mut rest = node_start(rest, column, seq_at_column)?;
        let mut tag = None;
        while rest.starts_with(['&', '!']) {
            let end = rest.find([' ', '\t', '\n', '\r'])?;
            if rest.starts_with('!') {
                tag = Some(&rest[..end]);
            }
            rest = node_start(&rest[end..], column, seq_at_column)?;
        }
        Some((tag, rest))
    }

    /// What a null value of a key written with nothing after it becomes, as the reader was
    /// asked to keep it: marked empty ([`EMPTY_NULL`]) or, in a flow mapping of a resource
    /// file, `""`; `None` keeps the value read.
    fn null_written_as_nothing(&self, after_key: Option<usize>) -> Option<Node> {
        if let Some(t) = self.text.filter(|t| t.mark_empty_nulls)
            && after_key.is_some_and(|end| {
                nothing_after_key(t.text, end) || (self.flow && nothing_after_flow_key(t.text, end))
            })
        {
            return Some(Node::Str(EMPTY_NULL.into()));
        }
        if self.flow
            && let Some(t) = self.text.filter(|t| t.flow_empty_string)
            && after_key.is_some_and(|end| nothing_after_flow_key(t.text, end))
        {
            return Some(Node::Str(String::new()));
        }
        None
    }

    /// How the scalar `value` written at `at` (a value of this mapping) was written, as
    /// kyaml's node `Style` says ([`Map::style`]): tagged (`!!str "x"`: go-yaml's
    /// `TaggedStyle`), an untagged quoted or block string, or plain.
    fn written_style(&self, at: At, value: &Node) -> ScalarStyle {
        let visitor = NodeVisitor {
            text: self.text,
            tagged: false,
            ctx: Ctx::Other,
            at: Some(at),
            flow: self.flow,
        };
        match visitor.after_props() {
            Some((Some(_), _)) => ScalarStyle::Tagged,
            Some((None, rest))
                if matches!(value.unspelled(), Node::Str(_))
                    && rest.starts_with(['"', '\'', '|', '>']) =>
            {
                ScalarStyle::Quoted
            }
            _ => ScalarStyle::Plain,
        }
    }

    /// Where each item of this node, a block sequence, is written (see [`At::Item`]); empty
    /// when the node's place is not known or it is not a block sequence.
    fn item_places(&self) -> Vec<At> {
        let Some(text) = self.text else {
            return Vec::new();
        };
        let Some(first) = self
            .after_props()
            .map(|(_, rest)| rest)
            .filter(|rest| is_item(rest))
            .and_then(|rest| text.offset_of(rest))
        else {
            return Vec::new();
        };
        let line_start = text.text[..first].rfind('\n').map_or(0, |i| i + 1);
        let column = first - line_start;
        let mut places = vec![At::Item(first + 1, column)];
        // Later items: lines whose `-` is at the same column; more indented lines, empty
        // lines and comments belong to an item; anything else ends the sequence.
        let mut pos = text.text[first..]
            .find('\n')
            .map_or(text.text.len(), |i| first + i + 1);
        while pos < text.text.len() {
            let line = &text.text[pos..];
            let line = &line[..line.find('\n').map_or(line.len(), |i| i + 1)];
            let indent = line.len() - line.trim_start_matches(' ').len();
            let body = line[indent..].trim_end_matches(['\n', '\r']);
            if !(body.trim_start_matches([' ', '\t']).is_empty()
                || body.starts_with('#')
                || indent > column)
            {
                if indent == column && is_item(body) {
                    places.push(At::Item(pos + indent + 1, column));
                } else {
                    break;
                }
            }
            pos += line.len();
        }
        places
    }

    /// Whether this node is written as a folded block scalar (`key: >`, `key: >-`,
    /// `key: &a >2`, `- >`, or `>` on the line after its key).
    fn is_folded(&self) -> bool {
        // kustomize's own configuration goes through sigs.k8s.io/yaml and go-yaml v2, which
        // does not print folded scalars.
        let Some(text) = self.text.filter(|t| !t.yaml11) else {
            return false;
        };
        let Some((_, rest)) = self.after_props() else {
            return false;
        };
        if let Some(alias) = rest.strip_prefix('*') {
            // An alias reads as a copy of the anchored node, folded style included (kyaml's
            // `deAnchor` copies it, `CopyYNode`): look at the latest definition of the anchor
            // before it.
            let name = &alias[..alias.find([' ', '\t', '\n', '\r']).unwrap_or(alias.len())];
            let here = match self.at {
                Some(At::Key(end) | At::Item(end, _)) => end,
                None => 0,
            }
            .min(text.text.len());
            let anchor = format!("&{name}");
            let mut before = &text.text[..here];
            while let Some(i) = before.rfind(&anchor) {
                let after = &text.text[i + anchor.len()..];
                if after.starts_with([' ', '\t', '\n', '\r']) {
                    // The anchored node may start on the next line; its key's column is not
                    // known here, and any line more indented than column 0 that follows an
                    // anchor is the anchored node.
                    let mut after = node_start(after, || 0, false);
                    while let Some(tag) = after.and_then(|a| a.strip_prefix('!')) {
                        let end = tag.find([' ', '\t', '\n', '\r']).unwrap_or(tag.len());
                        after = node_start(&tag[end..], || 0, false);
                    }
                    return after.is_some_and(|a| a.starts_with('>'));
                }
                before = &before[..i];
            }
            return false;
        }
        rest.starts_with('>')
    }

    /// A literal or folded block scalar (`|`, `>`, with any header) whose value starts with a
    /// tab fails in kustomize: kyaml keeps the block style, and its JSON step prints the
    /// object with go-yaml v3 and reads it back (`RNode.MarshalJSON`); the emitter writes no
    /// indentation indicator for a leading tab (`yaml_emitter_write_block_scalar_hints`,
    /// emitterc.go, looks for a space or a break), so the block's first line starts with a tab
    /// where the reader expects its indentation (`yaml_parser_scan_block_scalar_breaks`: found
    /// a tab character where an indentation space is expected). Annotations are rewritten
    /// without their style before any print (`folded.rs`), and are printed as quoted strings.
    fn block_reread(&self, v: &str) -> Result<(), String> {
        if !self.text.is_some_and(|t| t.resource)
            || self.ctx == Ctx::AnnotationValue
            || !super::folded::block_starts_with_tab(v)
        {
            return Ok(());
        }
        match self.after_props() {
            Some((_, rest)) if rest.starts_with(['|', '>']) => Err(format!(
                "a literal or folded block (`{}`) whose value starts with a tab: kustomize \
                 prints it as a block without an indentation indicator and cannot read it back \
                 (found a tab character where an indentation space is expected); write the \
                 value double-quoted (\"\\t…\") instead",
                &rest[..rest
                    .find([' ', '\t', '\n', '\r', '#'])
                    .unwrap_or(rest.len())]
            )),
            _ => Ok(()),
        }
    }

    /// A string the parser built (not a slice of the text).
    fn owned_str(&self, v: String) -> Result<Node, String> {
        self.block_reread(&v)?;
        if let Some((Some(tag), _)) = self.after_props()
            && core_tag(tag) == Some("binary")
            && self.ctx != Ctx::AnnotationValue
        {
            return binary(&v);
        }
        if self.is_folded() {
            let reread = reread_folded(&v);
            // Where kustomize may read the value back as its text (kyaml's `Node.Value`, the
            // value as written) before printing it, keep that text (see [`Node::Spelled`]).
            if self.ctx.keeps_text() && reread != v {
                return Ok(Node::Spelled(Box::new(super::Spelled {
                    value: Node::Str(reread),
                    text: v,
                })));
            }
            return Ok(Node::Str(reread));
        }
        Ok(Node::Str(v))
    }
}

impl<'de> Visitor<'de> for NodeVisitor<'_> {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            self.scalar(Node::Bool(v), None)
        })
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            self.scalar(Node::Int(v.into()), None)
        })
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            self.scalar(Node::Int(v.into()), None)
        })
    }
    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            self.beyond_64_bits(Node::Int(v))
        })
    }
    fn visit_u128<E>(self, v: u128) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(v.to_string())
        } else {
            self.beyond_64_bits(u128_node(v))
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(super::emit::format_float(v))
        } else {
            self.scalar(Node::Float(v), None)
        })
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Node, E> {
        charge(self.text, v.len())?;
        if let Some(tag) = self.text.and_then(|t| t.tag_of(v))
            && core_tag(tag) == Some("binary")
            && self.ctx != Ctx::AnnotationValue
        {
            return binary(v).map_err(E::custom);
        }
        if !self.tagged
            && let Some(text) = self.text
            && text.yaml11
            && let Some(b) = yaml11_bool(v)
            && text.is_plain_untagged(v)
        {
            return Ok(Node::Bool(b));
        }
        // A plain scalar serde_yaml left as a string may still be a number to go-yaml v3,
        // which kustomize reads with: `0777` (octal), `1_000`, `0X1F`, `08` (a float); or a
        // timestamp (`2024-01-01`), which kustomize prints in RFC 3339 form.
        if !self.tagged
            && v.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
            && self.text.is_some_and(|t| t.is_plain_untagged(v))
            && let Some(n) = super::resolve::resolve_plain_number_or_time(
                v,
                self.flow,
                self.text.is_some_and(|t| t.yaml11),
            )
        {
            return Ok(self.scalar(n, Some(v)));
        }
        self.block_reread(v).map_err(E::custom)?;
        Ok(Node::Str(v.to_string()))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        charge(self.text, v.len())?;
        self.owned_str(v.to_string()).map_err(E::custom)
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        charge(self.text, v.len())?;
        self.owned_str(v).map_err(E::custom)
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(if self.tagged {
            Node::Str(String::new())
        } else {
            self.scalar(Node::Null, None)
        })
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        de::DeserializeSeed::deserialize(self.seed(self.ctx, self.at), d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let this = self.collection();
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        let mut places = this.item_places().into_iter();
        // The items of a merged sequence (`<<: [*a, {…}]`) are merged mappings too.
        let item_ctx = match this.ctx {
            Ctx::MergeSource => this.ctx,
            _ => Ctx::Other,
        };
        while let Some(item) = seq.next_element_seed(this.seed(item_ctx, places.next()))? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Node, A::Error> {
        let this = self.collection();
        let mut map = Map::with_capacity(access.size_hint().unwrap_or(0).min(1024));
        let mut merges: Vec<Node> = Vec::new();
        let repeats = this.text.and_then(|t| t.repeats);
        let mut key_ends: Vec<Option<usize>> = Vec::new();
        // Where the last key read from the text ended (or where this mapping starts): a
        // null key, which serde_yaml hands over without its text, is looked for after it.
        let mut read_to = this
            .after_props()
            .and_then(|(_, rest)| this.text.and_then(|t| t.offset_of(rest)));
        let resource = this.text.filter(|t| t.resource);
        // kyaml drops the first key written `<<` of every mapping, whatever its style
        // (`deAnchor` → `removeMergeTags` → `Clear("<<")`, kyaml/yaml/rnode.go); a plain one
        // is the merge key, applied first.
        let mut merge_key_cleared = false;
        while let Some(key) = access.next_key_seed(KeySeed { text: this.text })? {
            let mut yaml11_word = false;
            let (key, after_key) = match key {
                Key::Merge => {
                    let ctx = if merge_key_cleared || resource.is_none() {
                        Ctx::Other
                    } else {
                        Ctx::MergeSource
                    };
                    merge_key_cleared = true;
                    merges.push(access.next_value_seed(this.seed(ctx, None))?);
                    continue;
                }
                Key::Node(Node::Str(s), _)
                    if s == "<<"
                        && resource.is_some()
                        && !merge_key_cleared
                        && this.ctx != Ctx::MergeSource =>
                {
                    merge_key_cleared = true;
                    // kyaml never decodes the dropped value: neither its keys nor repeated
                    // keys in it are checked.
                    access.next_value::<de::IgnoredAny>()?;
                    continue;
                }
                Key::Node(Node::Str(s), at) => {
                    // A quoted key whose escapes or line breaks spell another text
                    // (`"a\nb":`) comes without its place: look for it after the last key.
                    let end = at.map(|at| at.end).or_else(|| {
                        let t = this.text?;
                        quoted_key_end_after(t.text, read_to?, &s)
                    });
                    read_to = end.or(read_to);
                    (s, end)
                }
                // Keys that are not strings are refused as resource keys (`KeySeed`); in
                // kustomize's own files (read by sigs.k8s.io/yaml, which makes every key a
                // string) and the other texts of `parse_one`, ply keeps them as their text.
                Key::Node(Node::Null, _) if this.text.is_some_and(|t| t.yaml11) => {
                    // sigs.k8s.io/yaml turns each key go-yaml v2 decoded into a string
                    // (`convertToJSONableObject`, yaml.go) and has none for a null key
                    // (checked with kubectl: `labels: {null: v}` under `generatorOptions`).
                    if let Some(t) = this.text
                        && let Some(at) = read_to.and_then(|from| null_key_after(t.text, from))
                    {
                        t.key_error.set(Some(at));
                    }
                    return Err(de::Error::custom(
                        "a mapping key that is null (`null`, `~` or nothing): kustomize fails \
                         on it (unsupported map key of type: %!s(<nil>)); quote the key \
                         (`\"null\":`) to keep it as written",
                    ));
                }
                Key::Node(other, at) => {
                    let text = other.scalar_text().unwrap_or_default();
                    yaml11_word = matches!(other, Node::Bool(_))
                        && this.text.is_some_and(|t| t.yaml11 && t.last_bool_key_wins);
                    (text, at.map(|at| at.end))
                }
            };
            let ctx = if this.text.is_some_and(|t| !t.yaml11) {
                this.ctx.child(&key)
            } else {
                Ctx::Other
            };
            let mut value: Node = access.next_value_seed(this.seed(ctx, after_key.map(At::Key)))?;
            let style = match after_key {
                Some(end) if value.is_scalar() => this.written_style(At::Key(end), &value),
                _ => ScalarStyle::Plain,
            };
            if value.is_null()
                && let Some(nothing) = this.null_written_as_nothing(after_key)
            {
                value = nothing;
            }
            // See `parse_operation_documents`.
            if yaml11_word && let Some(slot) = map.get_mut(&key) {
                *slot = value;
                continue;
            }
            record_key(&map, &key, after_key, repeats, &mut key_ends).map_err(de::Error::custom)?;
            map.insert_styled(key, value, style);
        }
        for merge in merges {
            apply_merge(&mut map, merge).map_err(de::Error::custom)?;
        }
        Ok(Node::Map(map))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
        // serde_yaml reports a value with a tag it does not know (`!Foo value`,
        // `!<tag:yaml.org,2002:str> 1`, `!!binary aGk=`) as an enum. go-yaml v3 (kustomize)
        // reads a verbatim core tag as its short form and decodes `!!binary` from base64
        // (`decode.go`, `decoder.scalar`); under any other tag it resolves no scalar, and the
        // tag is dropped on kustomize's JSON round trip.
        let (tag, variant): (String, _) = data.variant()?;
        self.tagged_value(&tag, variant)
    }
}

impl NodeVisitor<'_> {
    /// The value of a node written with `tag` that serde_yaml reports as an enum (see
    /// `visit_enum`).
    fn tagged_value<'de, V: de::VariantAccess<'de>>(
        self,
        tag: &str,
        variant: V,
    ) -> Result<Node, V::Error> {
        let seed = NodeSeed {
            text: self.text,
            tagged: true,
            ctx: Ctx::Other,
            at: None,
            flow: self.flow,
        };
        let value = variant.newtype_variant_seed(seed)?;
        // A scalar under a core tag that serde_yaml would resolve by its own rules, handed
        // over as its text (`dialect.rs`, `mark_tag`): resolved as go-yaml v3 resolves it
        // (`resolve.go`, `resolve`; `decode.go`, `decoder.scalar`), and, where kustomize
        // reads the value back as its text (an annotation), kept with that text.
        if let Some(core) = super::dialect::marked_tag(tag) {
            let text = match value {
                Node::Str(s) => s,
                other => other.scalar_text().unwrap_or_default(),
            };
            let resolved = if core == "binary" {
                binary(&text)
            } else {
                super::resolve::resolve_tagged(core, &text)
            };
            let resolved = match resolved {
                Ok(v) => v,
                // An annotation is read as its text, never decoded.
                Err(_) if self.ctx == Ctx::AnnotationValue => Node::Str(text.clone()),
                Err(e) => return Err(de::Error::custom(e)),
            };
            return Ok(self.scalar(resolved, Some(&text)));
        }
        // A plain scalar under a custom tag is the text as written (`!Foo 1e3` is "1e3";
        // go-yaml v3 resolves nothing under a tag it does not know): serde_yaml resolved it
        // and handed over its value.
        if core_tag(tag).is_none()
            && let Node::Str(s) = &value
            && !s.contains(char::is_whitespace)
            && let Some((_, rest)) = self.after_props()
        {
            let token = rest[..rest.find(['\n', '\r', ' ', '\t']).unwrap_or(rest.len())].trim_end();
            if token != s
                && !matches!(
                    super::resolve::resolve_plain_v3(token).unspelled(),
                    Node::Str(_)
                )
            {
                return Ok(Node::Str(token.to_string()));
            }
        }
        Ok(match (core_tag(tag), value) {
            // An annotation is its scalar's text (kyaml's `RNode.GetAnnotations` reads
            // `Node.Value`), never decoded: `!!binary |⏎  3q2+7w==` prints the base64 text.
            (Some("binary"), Node::Str(b64)) if self.ctx != Ctx::AnnotationValue => {
                binary(&b64).map_err(de::Error::custom)?
            }
            (_, v) => v,
        })
    }
}

/// The name of a core tag (`!!str`, `!<tag:yaml.org,2002:str>`, `tag:yaml.org,2002:str` as
/// serde_yaml reports it): `str`.
fn core_tag(tag: &str) -> Option<&str> {
    tag.strip_prefix("!!")
        .or_else(|| tag.strip_prefix("tag:yaml.org,2002:"))
        .or_else(|| {
            tag.strip_prefix("!<tag:yaml.org,2002:")
                .and_then(|t| t.strip_suffix('>'))
        })
}

/// A `!!binary` value as go-yaml v3 reads it (`decode.go`, `decoder.scalar`): base64 (line
/// breaks ignored, as Go's decoder does) decoded, the bytes taken as text (invalid UTF-8 turns
/// into U+FFFD on kustomize's JSON step).
fn binary(b64: &str) -> Result<Node, String> {
    use base64::Engine as _;
    let compact: String = b64.chars().filter(|c| !matches!(c, '\n' | '\r')).collect();
    match base64::engine::general_purpose::STANDARD.decode(compact) {
        Ok(bytes) => Ok(Node::Str(String::from_utf8_lossy(&bytes).into_owned())),
        Err(_) => Err("!!binary value contains invalid base64 data".into()),
    }
}

/// The error of a resource key that is not a string (see [`KeyVisitor::typed`]).
/// Whether the key starting at `at` is one of a flow mapping (after `{` or `,`).
fn in_flow(text: &str, at: usize) -> bool {
    text.get(..at)
        .and_then(|t| t.trim_end().chars().next_back())
        .is_some_and(|c| matches!(c, '{' | ','))
}

/// The key written at `at`: a quoted key with its quotes, or a plain one up to its `:`.
fn written_key(text: &str, at: usize) -> &str {
    let rest = text.get(at..).unwrap_or_default();
    let end = match rest.as_bytes().first() {
        Some(&q @ (b'"' | b'\'')) => rest[1..].find(q as char).map_or(rest.len(), |i| i + 2),
        _ => rest
            .find([':', ',', '}', ']', '\n', '\r', '#'])
            .unwrap_or(rest.len()),
    };
    rest[..end].trim_end()
}

/// How the reader marks a key refused as a resource key; the message is written at the edge
/// of the reader ([`non_string_key`]), where the key's text is at hand.
const KEY_MARK: &str = "\u{1}ply: not a string key: ";

fn non_string_key(written: &str, kind: &str) -> String {
    // A tagged key (`!Foo x`, `!!binary aGk=`): the tag goes, the text is quoted.
    let (untagged, what) = match written.strip_prefix('!') {
        Some(rest) => (
            rest.split_once([' ', '\t'])
                .map_or("", |(_, v)| v.trim_start()),
            "drop the tag and quote the key",
        ),
        None if kind.starts_with(TAGGED) => (written, "drop the tag and quote the key"),
        None => (written, "quote the key"),
    };
    let bare = untagged.trim_matches(['"', '\'']);
    format!(
        "{NON_STRING_KEY} `{written}` reads as {kind}, not a string: kustomize fails on it \
         (json: unsupported type: map[interface {{}}]interface {{}}); {what} \
         (`\"{bare}\":`) to keep it as written"
    )
}

/// How [`non_string_key`]'s kind of a key under a tag other than `!!str` starts.
const TAGGED: &str = "a value tagged";

/// Whether nothing is written for the value of the flow-mapping key that ends at `end`: `:`
/// (or no `:`, a `? key`) and then the entry's end (`,`, `}`, a line break or a comment).
fn nothing_after_flow_key(text: &str, end: usize) -> bool {
    let rest = text.get(end..).unwrap_or_default();
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    let rest = rest.trim_start_matches([' ', '\t']);
    rest.is_empty() || rest.starts_with([',', '}', '\n', '\r', '#'])
}

/// Where the first null key (`null:`, `Null:`, `NULL:`, `~:`) after `from` starts: a word
/// after a blank or a line break (indentation, a sequence's `- `) or after `{` or `,`, followed
/// by `:`.
fn null_key_after(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = from;
    while i < b.len() {
        let opens = i == 0 || matches!(b[i - 1], b'\n' | b' ' | b'\t' | b'{' | b',');
        if opens {
            for word in ["null", "Null", "NULL", "~"] {
                if text[i..].starts_with(word)
                    && text[i + word.len()..]
                        .trim_start_matches([' ', '\t'])
                        .starts_with(':')
                {
                    return Some(i);
                }
            }
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Where the quoted key `key`, written with escapes or over lines (`"a\nb":`), ends (after
/// its closing quote): the first double- or single-quoted scalar after `from` that reads as
/// `key` and is followed by `:`. serde_yaml hands such a key over as an owned string, without
/// its place; its value's place ([`At::Key`]) is what lets an annotation keep its text (`2e30`
/// after such a key prints `"2e30"`, as kustomize prints it).
fn quoted_key_end_after(text: &str, from: usize, key: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = from;
    // Such keys are rare; a bounded look keeps a pathological text linear.
    for _ in 0..64 {
        i += text.get(i..)?.find(['"', '\''])?;
        let q = b[i];
        let opens = i == 0 || matches!(b[i - 1], b'\n' | b' ' | b'\t' | b'{' | b',' | b'?');
        let mut j = i + 1;
        loop {
            match b.get(j) {
                None => return None,
                Some(b'\\') if q == b'"' => j += 2,
                // `''` inside single quotes is one quote.
                Some(&c) if c == q && q == b'\'' && b.get(j + 1) == Some(&q) => j += 2,
                Some(&c) if c == q => break,
                Some(_) => j += 1,
            }
        }
        let end = j + 1;
        if opens
            && text[end..].trim_start_matches([' ', '\t']).starts_with(':')
            && serde_yaml::from_str::<String>(&text[i..end]).is_ok_and(|read| read == key)
        {
            return Some(end);
        }
        i = end;
    }
    None
}

/// How the error of [`non_string_key`] starts (callers locate it at the key's column).
pub(crate) const NON_STRING_KEY: &str = "the mapping key";

/// YAML's merge key (`<<: *base` or `<<: [*a, *b]`), as go-yaml v3 applies it when kustomize
/// decodes a resource (`decode.go`, `decoder.merge`): keys written in the mapping itself win,
/// and among several merged maps the earlier one wins.
fn apply_merge(map: &mut Map, merge: Node) -> Result<(), String> {
    let sources = match merge {
        Node::Map(m) => vec![m],
        Node::Seq(items) => items
            .into_iter()
            .map(|i| match i {
                Node::Map(m) => Ok(m),
                _ => Err("map merge requires map or sequence of maps as the value".to_string()),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err("map merge requires map or sequence of maps as the value".into()),
    };
    for source in sources {
        for (k, v) in source {
            map.entry(k).or_insert(v);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_keep_empty_values_inside_lists() {
        let text = "spec:\n  list:\n  - key: k\n    value:\n    effect: ~\n  flow: [{x: , y: ~}]\n  map: {m: }\n";
        let docs = parse_patch_documents(text).unwrap();
        let spec = docs[0].node.get("spec").unwrap();
        let empty_text = |n: Option<&Node>| matches!(n, Some(Node::Spelled(s)) if s.text.is_empty() && s.value.is_null());
        // A flow mapping's value written as nothing, inside a list, keeps its empty text;
        // block values, `~` and values outside lists are plain nulls.
        let flow = &spec.get("flow").unwrap().as_seq().unwrap()[0];
        assert!(empty_text(flow.get("x")), "{flow:?}");
        assert!(matches!(flow.get("y"), Some(Node::Null)));
        let item = &spec.get("list").unwrap().as_seq().unwrap()[0];
        assert!(matches!(item.get("value"), Some(Node::Null)), "{item:?}");
        assert!(matches!(
            spec.get("map").unwrap().get("m"),
            Some(Node::Null)
        ));
    }

    /// Both readers mark a map value written quoted or as a block ([`Map::styled`]), not a
    /// plain, tagged or flow-collection one, in block and flow mappings.
    #[test]
    fn readers_mark_quoted_and_block_values() {
        let text = "a: \"x\"\nb: 'y'\nc: |\n  z\nd: >-\n  w\ne: plain\nf: 5\ng: !!str \"t\"\nh: {i: \"1\", j: 2}\nk: [\"3\"]\nl:\n  \"m\"\n";
        let styled = |docs: &[ParsedDoc]| -> Vec<String> {
            let mut out = Vec::new();
            fn walk(n: &Node, at: &str, out: &mut Vec<String>) {
                if let Node::Map(m) = n {
                    for (i, (k, v)) in m.iter().enumerate() {
                        if m.style_index(i) == ScalarStyle::Quoted {
                            out.push(format!("{at}{k}"));
                        }
                        walk(v, &format!("{at}{k}."), out);
                    }
                }
            }
            walk(&docs[0].node, "", &mut out);
            out
        };
        let want = ["a", "b", "c", "d", "h.i", "l"];
        let reference = parse_documents_reference_reader(text, false).expect("reads");
        assert_eq!(styled(&reference), want);
        let top = reference[0].node.as_map().expect("a map");
        assert_eq!(top.style("g"), ScalarStyle::Tagged);
        assert_eq!(top.style("f"), ScalarStyle::Plain);
        let json = r#"{"a": "x", "b": 1, "c": {"d": "e", "f": true}}"#;
        let reference = parse_documents_reference_reader(json, false).expect("reads");
        assert_eq!(styled(&reference), ["a", "c.d"]);
        let fast = parse_documents_fast_reader(json, false)
            .expect("the fast reader reads JSON")
            .expect("reads");
        assert_eq!(styled(&fast), ["a", "c.d"]);
        let simple = "a: \"x\"\nb: 'y'\nc: |\n  z\ne: plain\nh: {i: \"1\", j: 2}\n";
        let fast = parse_documents_fast_reader(simple, false)
            .expect("the fast reader reads it")
            .expect("reads");
        assert_eq!(styled(&fast), ["a", "b", "c", "h.i"]);
    }

    /// kyaml's `IsYaml1_1NonString` for generated values.
    #[test]
    fn set_values_styled_as_kyaml_styles_them() {
        for v in [
            "8080", "yes", "on", "true", "1.5", "a: b", "[a]", "null", "~", "x\ny",
        ] {
            assert!(set_value_styled(v), "{v}");
        }
        for v in [
            "",
            "-x",
            "hello",
            "a b",
            "1:20",
            "v1.2",
            "2001-12-14",
            "x:y",
            "nginx:1.2",
        ] {
            assert!(!set_value_styled(v), "{v}");
        }
    }

    /// The first document as go-yaml's one-document readers see it: up to the marker that
    /// opens a second one (or past `...`), a `---` before any content opening the first.
    #[test]
    fn first_document_cuts_at_the_next_marker() {
        let cases = [
            ("a: 1\n", "a: 1\n"),
            ("a: 1\n---\nb: 2\n", "a: 1\n"),
            ("---\na: 1\n---\nb: [\n", "---\na: 1\n"),
            ("# c\n---\na: 1\n--- # x\nb\n", "# c\n---\na: 1\n"),
            ("---\n---\na: 1\n", "---\n"),
            ("a: 1\n...\n---\nb: 2\n", "a: 1\n...\n"),
            ("%YAML 1.1\n---\na: 1\n---\n", "%YAML 1.1\n---\na: 1\n"),
            ("a: |\n  ---x\n----\n---\nb\n", "a: |\n  ---x\n----\n"),
            ("a: 1\n--- b\n", "a: 1\n"),
            ("", ""),
        ];
        for (text, first) in cases {
            assert_eq!(first_document(text), first, "{text:?}");
        }
    }

    #[test]
    fn empty_nulls_are_marked_and_spelled_ones_are_not() {
        let docs = parse_documents_marking_empty_nulls(
            "a:\nb: null\nc: ~\nd:   # note\n\"e\":\nf: {g: , h: null}\n",
        )
        .unwrap();
        let m = docs[0].node.as_map().unwrap();
        let mark = Node::str(EMPTY_NULL);
        assert_eq!(m["a"], mark);
        assert_eq!(m["b"], Node::Null);
        assert_eq!(m["c"], Node::Null);
        assert_eq!(m["d"], mark);
        assert_eq!(m["e"], mark);
        assert_eq!(m["f"].get("g"), Some(&mark));
        assert_eq!(m["f"].get("h"), Some(&Node::Null));
        // The usual reading never marks.
        assert_eq!(nodes("a:\n")[0].1.get("a"), Some(&Node::Null));
    }

    fn nodes(text: &str) -> Vec<(usize, Node)> {
        parse_documents(text)
            .unwrap()
            .into_iter()
            .map(|d| (d.offset, d.node))
            .collect()
    }

    #[test]
    fn scalars_keep_their_kind() {
        let docs = nodes("a: 1\nb: \"1\"\nc: true\nd: 'yes'\ne: ~\nf: 1.5\ng: 0x10\n");
        let m = docs[0].1.as_map().unwrap();
        assert_eq!(m["a"], Node::Int(1));
        assert_eq!(m["b"], Node::str("1"));
        assert_eq!(m["c"], Node::Bool(true));
        assert_eq!(m["d"], Node::str("yes"));
        assert_eq!(m["e"], Node::Null);
        assert_eq!(m["f"], Node::Float(1.5));
        assert_eq!(m["g"], Node::Int(16));
        let keys: Vec<_> = m.keys().cloned().collect();
        assert_eq!(keys, ["a", "b", "c", "d", "e", "f", "g"]);
    }

    #[test]
    fn multi_document_offsets() {
        let text = "a: 1\n---\nb: 2\n---\n# only a comment\n---\nc: 3\n";
        let docs = nodes(text);
        assert_eq!(docs.len(), 4);
        assert_eq!(docs[0].0, 0);
        assert_eq!(&text[docs[1].0..docs[1].0 + 4], "b: 2");
        assert!(docs[2].1.is_null());
        assert_eq!(&text[docs[3].0..docs[3].0 + 4], "c: 3");
    }

    #[test]
    fn leading_marker() {
        let text = "---\na: 1\n---\nb: 2\n";
        let docs = nodes(text);
        assert_eq!(docs.len(), 2);
        assert_eq!(&text[docs[0].0..docs[0].0 + 4], "a: 1");
        assert_eq!(&text[docs[1].0..docs[1].0 + 4], "b: 2");
    }

    #[test]
    fn document_offsets_match_the_parser() {
        let cases: &[(&str, &[usize])] = &[
            ("", &[0]),
            ("# c\n", &[0]),
            ("---\n", &[4]),
            ("a: 1\n---\n", &[0, 9]),
            ("a: 1\n...\n", &[0]),
            ("%YAML 1.2\n---\na: 1\n", &[14]),
            ("--- a\n", &[0]),
            ("--- # c\na: 1\n", &[8]),
            ("# lead\n---\na: 1\n", &[11]),
            ("a: 1\n---\n# only\n", &[0, 9]),
            ("a: 1\n...\n---\nb: 1\n...\n", &[0, 13]),
            ("--- |\n  x\n---\n", &[0, 14]),
            ("a: |\n  ---\n", &[0]),
        ];
        for (text, want) in cases {
            let got: Vec<usize> = parse_documents(text)
                .unwrap()
                .iter()
                .map(|d| d.offset)
                .collect();
            assert_eq!(&got, want, "{text:?}");
        }
    }

    #[test]
    fn syntax_errors_have_offsets() {
        let err = parse_documents("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(err.offset.is_some(), "{err:?}");
        let err = parse_documents("a: 1\n...\nb: 2\n").unwrap_err();
        assert_eq!(err.offset, Some(9));
    }

    #[test]
    fn plain_scalars_resolve_like_go_yaml_v3() {
        let docs = nodes(
            "a: 0777\nb: \"0777\"\nc: 1_000\nd: 0X1F\ne: 08\nf: '08'\ng: !!str 0777\nh: !Foo 12\n\
             i: 2024-01-01\nj: ._5\nk: yes\nl: [0777, '0777']\n",
        );
        let m = docs[0].1.as_map().unwrap();
        assert_eq!(m["a"], Node::Int(511));
        assert_eq!(m["b"], Node::str("0777"));
        assert_eq!(m["c"], Node::Int(1000));
        assert_eq!(m["d"], Node::Int(31));
        assert_eq!(m["e"], Node::Float(8.0));
        assert_eq!(m["f"], Node::str("08"));
        assert_eq!(m["g"], Node::str("0777"));
        assert_eq!(m["h"], Node::str("12"));
        // A date is a timestamp, kept in the RFC 3339 form kustomize prints.
        assert_eq!(m["i"], Node::str("2024-01-01T00:00:00Z"));
        assert_eq!(m["j"], Node::str("._5"));
        assert_eq!(m["k"], Node::str("yes"));
        assert_eq!(m["l"], Node::Seq(vec![Node::Int(511), Node::str("0777")]));
    }

    #[test]
    fn config_files_read_yaml11_booleans() {
        let text = "a: y\nb: Yes\nc: OFF\nd: 'y'\ne: \"no\"\nf: !!str on\ng: [n, On]\nyes: 1\nh: yesno\ni: true\n";
        let m = parse_config_one(text).unwrap();
        assert_eq!(m.get("a"), Some(&Node::Bool(true)));
        assert_eq!(m.get("b"), Some(&Node::Bool(true)));
        assert_eq!(m.get("c"), Some(&Node::Bool(false)));
        assert_eq!(m.get("d"), Some(&Node::str("y")));
        assert_eq!(m.get("e"), Some(&Node::str("no")));
        assert_eq!(m.get("f"), Some(&Node::str("on")));
        assert_eq!(
            m.get("g"),
            Some(&Node::Seq(vec![Node::Bool(false), Node::Bool(true)]))
        );
        assert_eq!(m.get("true"), Some(&Node::Int(1)));
        assert_eq!(m.get("h"), Some(&Node::str("yesno")));
        assert_eq!(m.get("i"), Some(&Node::Bool(true)));
        // Resources keep YAML 1.2: the same text reads `y` as a string.
        let r = parse_one(text).unwrap();
        assert_eq!(r.get("a"), Some(&Node::str("y")));
        assert_eq!(r.get("yes"), Some(&Node::Int(1)));
    }

    #[test]
    fn merge_keys() {
        let docs = nodes(
            "b: &b {a: 1, b: 2}\nc: &c {b: 3, c: 4}\nm:\n  <<: *b\n  a: 9\nn:\n  a: 9\n  <<: [*c, *b]\nq:\n  \"<<\": 1\n",
        );
        let m = &docs[0].1;
        assert_eq!(m.get_path(&["m", "a"]), Some(&Node::Int(9)));
        assert_eq!(m.get_path(&["m", "b"]), Some(&Node::Int(2)));
        assert_eq!(m.get_path(&["n", "b"]), Some(&Node::Int(3)));
        assert_eq!(m.get_path(&["n", "c"]), Some(&Node::Int(4)));
        // kyaml drops a quoted `"<<"` from a resource (`Clear("<<")`); `parse_one`'s texts
        // never go through kyaml and keep it.
        assert_eq!(m.get("q"), Some(&Node::empty_map()));
        let one = parse_one("q:\n  \"<<\": 1\n").unwrap();
        assert_eq!(one.get_path(&["q", "<<"]), Some(&Node::Int(1)));
        // Only the first key written `<<` is cleared: after a plain merge key, a quoted one
        // stays.
        let both = &nodes("m:\n  <<: {a: 1}\n  '<<': 2\n")[0].1;
        assert_eq!(both.get_path(&["m", "<<"]), Some(&Node::Int(2)));
        assert_eq!(both.get_path(&["m", "a"]), Some(&Node::Int(1)));
        assert!(parse_documents("m:\n  <<: 1\n").is_err());
    }

    #[test]
    fn resource_keys_that_are_not_strings_fail_at_the_key() {
        for (text, key, kind) in [
            ("a:\n  b: 1\n  404: x\n", "404", "an integer"),
            ("a: {b: 1, 0x10: x}\n", "0x10", "an integer"),
            ("- true: x\n", "true", "a boolean"),
            ("a:\n  ~: x\n", "~", "null"),
            ("a:\n  1.5: x\n", "1.5", "a number"),
            ("a:\n  .inf: x\n", ".inf", "a number"),
            ("a:\n  2024-01-01: x\n", "2024-01-01", "a timestamp"),
        ] {
            let e = parse_documents(text).unwrap_err();
            assert_eq!(e.offset, text.find(key), "{text}");
            assert!(e.message.starts_with(NON_STRING_KEY), "{}", e.message);
            assert!(
                e.message.contains(&format!("reads as {kind},")),
                "{}",
                e.message
            );
            // kustomize's own files and `parse_one`'s texts keep such keys as their text,
            // but for a null key, which sigs.k8s.io/yaml cannot make a string.
            assert!(parse_one(text).is_ok(), "{text}");
            assert_eq!(
                parse_config_documents(text).is_ok(),
                kind != "null",
                "{text}"
            );
        }
        // A null key in a kustomization fails at its line.
        let text = "a:\n  b: 1\n  null: x\n";
        let e = parse_config_documents(text).unwrap_err();
        assert_eq!(e.offset, text.find("null"));
        assert!(e.message.contains("unsupported map key"), "{}", e.message);
        // A key under any tag but `!!str` is not a string, even when its text is.
        for (text, tag) in [
            ("a:\n  !Foo x: 1\n", "!Foo"),
            ("a:\n  !!binary aGk=: 1\n", "!!binary"),
            ("a:\n  !!int \"7\": 1\n", "an integer"),
        ] {
            let e = parse_documents(text).unwrap_err();
            assert!(e.message.contains(tag), "{}", e.message);
            assert!(e.message.contains("drop the tag"), "{}", e.message);
        }
        // Keys inside an annotation whose value is a collection are never decoded.
        assert!(
            parse_documents("metadata:\n  annotations:\n    a: {.5: 1, x: [{404: y}]}\n").is_ok()
        );
        assert!(parse_documents("metadata:\n  labels:\n    a: {.5: 1}\n").is_err());
        // Quoted, `!!str` and YAML 1.1 words are strings.
        let m = &nodes("\"404\": a\n!!str 1: b\nyes: c\n'2024-01-01': d\n")[0].1;
        assert_eq!(
            m.as_map()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["404", "1", "yes", "2024-01-01"]
        );
    }

    #[test]
    fn a_quoted_merge_key_in_a_merged_mapping_is_kept() {
        let doc = |text: &str| nodes(text).remove(0).1;
        // The mapping's own first `<<` (the merge key) is cleared; merged entries are copied
        // as they are, quoted `"<<"` included; the earlier merged mapping wins.
        let m = doc("b: &b {\"<<\": 1, c: 2}\ns:\n  <<: [*b, {\"<<\": 5, e: 1}]\n");
        let s = m.get("s").unwrap();
        assert_eq!(s.get("<<"), Some(&Node::Int(1)));
        assert_eq!(s.get("e"), Some(&Node::Int(1)));
        // A quoted `"<<"` first is the one cleared; the merged value's own is cleared too.
        let m = doc("s:\n  \"<<\": 7\n  <<: {\"<<\": 5, e: 1}\n");
        let s = m.get("s").unwrap();
        assert_eq!(s.get("<<"), None);
        assert_eq!(s.get("e"), Some(&Node::Int(1)));
        // Nested mappings of a merged value are cleared as any mapping.
        let m = doc("s:\n  <<: {e: {\"<<\": 1, f: 2}}\n");
        assert_eq!(m.get("s").unwrap().get("e").unwrap().get("<<"), None);
    }

    #[test]
    fn byte_order_mark_and_crlf() {
        let docs = nodes("\u{FEFF}a: 1\r\nb: |\r\n  x\r\n---\r\nc: 2\r\n");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].0, 3);
        assert_eq!(docs[0].1.get("b"), Some(&Node::str("x\n")));
        assert_eq!(docs[1].1.get("c"), Some(&Node::Int(2)));
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let err = parse_documents("a: 1\na: 2\n").unwrap_err();
        assert!(err.message.contains("already defined"), "{}", err.message);
    }

    #[test]
    fn integers_beyond_64_bits_read_as_go_yaml_reads_them() {
        let docs = nodes(
            "a: 123456789012345678901234567890\nb: 0x123456789012345678901234567\n\
             c: [18446744073709551616, 0x123456789012345678901234567]\n",
        );
        let m = docs[0].1.as_map().unwrap();
        assert_eq!(m["a"], Node::Float(123456789012345678901234567890.0));
        assert_eq!(m["b"], Node::str("0x123456789012345678901234567"));
        assert_eq!(
            m["c"],
            Node::Seq(vec![
                Node::Float(18446744073709551616.0),
                Node::str("0x123456789012345678901234567")
            ])
        );
    }

    #[test]
    fn json_input() {
        let docs = nodes("{\"a\": [1, \"x\", null]}");
        assert_eq!(
            docs[0].1.get("a"),
            Some(&Node::Seq(vec![Node::Int(1), Node::str("x"), Node::Null]))
        );
    }

    /// Folded scalars are found wherever they are written (checked against kubectl kustomize
    /// in the golden case `yaml-folded-scalars-in-lists-and-next-lines`): as sequence items,
    /// nested or after a comment, and on the line after their key; a literal block's text
    /// that looks like `- >` is not one.
    #[test]
    fn folded_scalars_in_items_and_on_later_lines() {
        let reread = "a\n\n  b\n";
        let doc = parse_one(concat!(
            "k:\n  >\n  a\n    b\n",
            "items:\n- >\n  a\n    b\n- - >\n    a\n      b\n",
            "- # c\n  >\n  a\n    b\n",
            "- |\n  - >\n    a\n- plain\n",
            "- >\n  a\n    b\n",
        ))
        .unwrap();
        assert_eq!(doc.get("k"), Some(&Node::str(reread)));
        let items = doc.get("items").and_then(Node::as_seq).unwrap();
        assert_eq!(items[0], Node::str(reread));
        assert_eq!(items[1], Node::Seq(vec![Node::str(reread)]));
        assert_eq!(items[2], Node::str(reread));
        assert_eq!(items[3], Node::str("- >\n  a\n"));
        assert_eq!(items[4], Node::str("plain"));
        assert_eq!(items[5], Node::str(reread));
    }

    /// A key with nothing after it does not take the next key's value as its own.
    #[test]
    fn a_null_value_stays_null_before_a_folded_sibling() {
        let doc = parse_one("m:\n  a:\n  b: >\n    x\n      y\n").unwrap();
        let m = doc.get("m").unwrap();
        assert_eq!(m.get("a"), Some(&Node::Null));
        assert_eq!(m.get("b"), Some(&Node::str("x\n\n  y\n")));
    }

    /// A folded label or annotation value keeps the text it was written as, which kustomize
    /// reads when it rewrites the map before printing (annotations at the end of every build);
    /// its value is the reread one.
    #[test]
    fn folded_annotations_keep_their_text() {
        let doc = parse_one(
            "metadata:\n  annotations:\n    a: >\n      x\n        y\n  labels:\n    l: >\n      x\n        y\n    p: >\n      plain\n",
        )
        .unwrap();
        for path in [
            ["metadata", "annotations", "a"],
            ["metadata", "labels", "l"],
        ] {
            let v = doc.get_path(&path).unwrap();
            assert_eq!(v, &Node::str("x\n\n  y\n"));
            assert_eq!(v.as_str(), Some("x\n\n  y\n"));
            assert_eq!(v.source_text().as_deref(), Some("x\n  y\n"));
        }
        // Nothing to keep when the reread value is the value.
        assert!(matches!(
            doc.get_path(&["metadata", "labels", "p"]),
            Some(Node::Str(_))
        ));
    }
}
