//! Where go-yaml (v3 for resources, v2 for kustomize's own files: both from the same old
//! libyaml scanner) reads a text differently from the parser ply uses (serde_yaml, libyaml
//! 0.2.5). A light scan of the text, run only when the text holds one of the characters
//! involved, finds:
//!
//! - `\/` in a double-quoted scalar: go-yaml knows no such escape (`scannerc.go`,
//!   `yaml_parser_scan_flow_scalar`: "found unknown escape character");
//! - `?` inside a plain scalar in a flow collection (`{a: b?}`): go-yaml ends the scalar there
//!   (`yaml_parser_scan_plain_scalar`) and then fails ("did not find expected ',' or '}'");
//! - an anchor defined twice: an alias refers to the latest definition before it, as in
//!   go-yaml (`parserc.go` keeps one anchor table, overwritten); serde_yaml resolves such
//!   aliases wrongly, so the later definitions are renamed (same length, so every offset stays)
//!   before parsing.
//!
//! To tell an anchor from text, the scan follows what libyaml's scanner follows: the block
//! indentation (`yaml_parser_roll_indent` / `yaml_parser_unroll_indent`) and plain scalars
//! that go on over several lines (`yaml_parser_scan_plain_scalar`). A `&` or `*` that starts a
//! continuation line of a plain scalar (a CRD's CEL rule folded before `&&`) is text, never a
//! property: reading it as an anchor once renamed the second `&&` of a file to `&Z`.

use super::ParseError;

/// The text to parse in place of `text` (anchors renamed), or `None` when it can be parsed as
/// it is; an error where go-yaml fails.
pub(super) fn check(text: &str) -> Result<Option<String>, ParseError> {
    let interesting = text.contains("\\/")
        || (text.contains('?') && text.contains(['{', '[']))
        || text.contains('&')
        || text.contains("!!")
        || text.contains("!<");
    if !interesting {
        return Ok(None);
    }
    let scan = scan(text)?;
    let renamed = rename_anchors(text, &scan.props);
    if scan.tags.is_empty() {
        return Ok(renamed);
    }
    let mut out = renamed.unwrap_or_else(|| text.to_string());
    for t in &scan.tags {
        out.replace_range(t.start..t.start + t.with.len(), &t.with);
    }
    Ok(Some(out))
}

/// The core tags of scalars, and the letter each is marked with: go-yaml v3 reads them by
/// `resolve.rs`'s `resolve_tagged` (and `!!binary` by base64), which needs the scalar's text;
/// serde_yaml would resolve (or refuse) them by its own rules, and ply's reader could not
/// always tell where the tag was written (on the line before, or in a flow collection after
/// a verbatim tag's `,`).
const MARKED_TAGS: [(&str, char); 7] = [
    ("str", 's'),
    ("null", 'n'),
    ("bool", 'b'),
    ("int", 'i'),
    ("float", 'f'),
    ("timestamp", 't'),
    ("binary", 'y'),
];

/// The core tag (`int`) that a marked tag stands for, as serde_yaml reports it (`~i`, the
/// `!` left out).
pub(super) fn marked_tag(tag: &str) -> Option<&'static str> {
    let mut chars = tag.strip_prefix('~')?.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    MARKED_TAGS.iter().find(|(_, m)| *m == c).map(|(n, _)| *n)
}

/// The name of a core tag token as written (`!!int`, `!<tag:yaml.org,2002:int>`).
fn core_tag_name(token: &[u8]) -> Option<&[u8]> {
    token.strip_prefix(b"!!").or_else(|| {
        token
            .strip_prefix(b"!<tag:yaml.org,2002:")
            .and_then(|t| t.strip_suffix(b">"))
    })
}

/// A core tag from [`MARKED_TAGS`] written at `start` (ending at `end`), and the scalar after
/// it, rewritten to the same length so that serde_yaml hands the scalar's text to ply's reader
/// unresolved: the tag becomes the local tag `!~` and its letter, and a plain scalar on the
/// tag's line becomes a quoted one (a quoted scalar's content is its text, as in go-yaml's
/// `Node.Value`), and so is a block scalar's. `None` where the node after the tag is not such
/// a scalar (a collection, an anchor, a plain scalar going on over several lines): serde_yaml
/// reads it as before.
fn mark_tag(
    b: &[u8],
    start: usize,
    end: usize,
    flow: usize,
    indent: Option<usize>,
) -> Option<Edit> {
    let name = core_tag_name(&b[start..end])?;
    let letter = MARKED_TAGS.iter().find(|(n, _)| n.as_bytes() == name)?.1;
    let mut j = end;
    while matches!(b.get(j), Some(b' ' | b'\t')) {
        j += 1;
    }
    let tag = format!("!~{letter}");
    let pad = |n: usize| " ".repeat(n);
    let rename = || Edit {
        start,
        with: format!("{tag}{}", pad(end - start - tag.len())),
    };
    if matches!(b.get(j), Some(b'\n' | b'\r' | b'#')) {
        // The node may start on a later line, more indented than the block it sits in (in a
        // flow collection, anywhere): skip blank and comment lines.
        let mut k = j;
        let next = loop {
            k = skip_line(b, k);
            let line = k;
            while matches!(b.get(k), Some(b' ' | b'\t')) {
                k += 1;
            }
            match b.get(k) {
                None => break None,
                Some(b'\n' | b'\r' | b'#') => continue,
                Some(_) => break Some((k, k - line)),
            }
        };
        if let Some((k, column)) = next
            && (flow > 0 || indent.is_none_or(|n| column > n))
        {
            j = k;
        }
    }
    let c = b.get(j).copied();
    let ends_node = |c: Option<u8>| {
        c.is_none_or(|c| {
            matches!(c, b'\n' | b'\r' | b'#') || (flow > 0 && matches!(c, b',' | b']' | b'}'))
        })
    };
    // A quoted or block scalar's content is its text (go-yaml's `Node.Value`), which go-yaml
    // v3 resolves under the tag as it resolves a plain scalar's (`decoder.scalar`: `!!int |-`
    // over `017` is 15, `!!binary |` is decoded, `!!null >-` over `x` fails; checked with
    // kubectl), and which an annotation keeps as it is.
    // A folded `!!str >` stays serde_yaml's: the reader rereads it as kustomize prints it
    // (`folded.rs`).
    if ends_node(c) || matches!(c, Some(b'"' | b'\'' | b'|')) || (c == Some(b'>') && name != b"str")
    {
        return Some(rename());
    }
    let indicator = match c {
        Some(b'[' | b'{' | b'|' | b'>' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`') => true,
        Some(b'-' | b'?' | b':') => b.get(j + 1).is_none_or(|n| is_ws(*n)),
        _ => false,
    };
    if indicator {
        return None;
    }
    let scalar_end = if flow > 0 {
        let e = flow_plain(b, j, flow).ok()?;
        if b[j..e].contains(&b'\n') {
            return None;
        }
        e
    } else {
        let (e, key) = block_token(b, j);
        if key || plain_continuation(b, e, indent) != e {
            return None;
        }
        e
    };
    let mut scalar_end = scalar_end;
    while scalar_end > j && matches!(b[scalar_end - 1], b' ' | b'\t' | b'\r') {
        scalar_end -= 1;
    }
    let scalar = std::str::from_utf8(&b[j..scalar_end]).ok()?;
    let quote = if !scalar.contains('\'') {
        '\''
    } else if !scalar.contains(['"', '\\']) {
        '"'
    } else {
        return Some(rename());
    };
    // `!!int 0x1F` (the tag five bytes at least) → `!~i '0x1F'`; what lies between the tag
    // and the scalar (blanks, a comment, line breaks) is kept, two bytes to the left.
    let gap = std::str::from_utf8(&b[end..j]).ok()?;
    Some(Edit {
        start,
        with: format!(
            "{tag}{}{gap}{quote}{scalar}{quote}",
            pad(end - start - tag.len() - 2)
        ),
    })
}

/// A same-length rewrite of the text from `start`.
struct Edit {
    start: usize,
    with: String,
}

#[derive(Debug, PartialEq)]
struct Prop {
    anchor: bool,
    /// Byte range of the name (after `&` or `*`).
    start: usize,
    end: usize,
}

struct Scan {
    props: Vec<Prop>,
    /// Core tags and their scalars to rewrite ([`mark_tag`]).
    tags: Vec<Edit>,
}

fn err(message: String, offset: usize) -> ParseError {
    ParseError {
        message,
        offset: Some(offset),
    }
}

fn is_flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// The column a block scalar's content must pass: that of the key (or of the line's first
/// node, after any `- ` entries) on the header's line.
fn node_column(line: &[u8]) -> usize {
    let mut i = 0;
    loop {
        while line.get(i) == Some(&b' ') {
            i += 1;
        }
        if line.get(i) == Some(&b'-') && line.get(i + 1).is_none_or(|c| is_ws(*c)) {
            i += 1;
            continue;
        }
        return i;
    }
}

/// libyaml's stack of block indentation columns (`parser->indents` and `parser->indent`):
/// a block mapping or sequence pushes the column of its first key or `-`, and a token in
/// block context at a smaller column pops back to it.
#[derive(Default)]
struct Indents(Vec<usize>);

impl Indents {
    /// The column a plain scalar's continuation lines must pass (`parser->indent`); `None` at
    /// the top level (-1 in libyaml), where any column does.
    fn current(&self) -> Option<usize> {
        self.0.last().copied()
    }

    /// `yaml_parser_roll_indent`: a collection starting at `column` deeper than the current one.
    fn roll(&mut self, column: usize) {
        if self.current().is_none_or(|c| c < column) {
            self.0.push(column);
        }
    }

    /// `yaml_parser_unroll_indent`: a token at `column` closes the collections deeper than it.
    fn unroll(&mut self, column: usize) {
        while self.current().is_some_and(|c| c > column) {
            self.0.pop();
        }
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "one scanner loop: every arm reads the byte at hand against the state all arms share (flow depth, block scalar, indentation)"
)]
fn scan(text: &str) -> Result<Scan, ParseError> {
    let b = text.as_bytes();
    let mut props = Vec::new();
    let mut tags = Vec::new();
    let mut i = 0;
    let mut flow = 0usize;
    let mut line_start = 0;
    // Inside a block scalar: its content lines are blank or indented past this column.
    let mut block: Option<usize> = None;
    let mut at_line_start = true;
    let mut indents = Indents::default();
    // The first token of a line in block context has not been met yet.
    let mut first_token = true;
    while i < b.len() {
        if at_line_start {
            at_line_start = false;
            first_token = true;
            line_start = i;
            if let Some(col) = block {
                let indent = b[i..].iter().take_while(|&&c| c == b' ').count();
                let rest = &b[i + indent..];
                let blank = rest.first().is_none_or(|c| matches!(c, b'\n' | b'\r'));
                if blank || indent > col {
                    i = skip_line(b, i);
                    at_line_start = true;
                    continue;
                }
                block = None;
            }
        }
        let c = b[i];
        let token_start = i == line_start
            || is_ws(b[i - 1])
            || (flow > 0 && (is_flow_indicator(b[i - 1]) || b[i - 1] == b':'));
        if first_token && flow == 0 && !is_ws(c) && c != b'#' {
            first_token = false;
            let marker = i == line_start
                && (b[i..].starts_with(b"---") || b[i..].starts_with(b"..."))
                && b.get(i + 3).is_none_or(|c| is_ws(*c));
            if marker {
                // A document marker: the next document starts at the top level
                // (`yaml_parser_fetch_document_indicator` unrolls the indentation to -1).
                indents = Indents::default();
            } else {
                indents.unroll(i - line_start);
            }
        }
        match c {
            b'\n' => {
                i += 1;
                at_line_start = true;
            }
            b'#' if token_start => {
                i = skip_line(b, i);
                at_line_start = true;
            }
            b'"' | b'\'' if token_start => {
                let end = if c == b'"' {
                    double_quoted(b, i)?
                } else {
                    single_quoted(b, i)
                };
                // A quoted simple key starts a block mapping at its column, as a plain one
                // does (`"k": value`).
                if flow == 0
                    && b.get(end) == Some(&b':')
                    && b.get(end + 1).is_none_or(|n| is_ws(*n))
                {
                    indents.roll(i - line_start);
                }
                i = end;
            }
            b'[' | b'{' if token_start || flow > 0 => {
                flow += 1;
                i += 1;
            }
            b']' | b'}' if flow > 0 => {
                flow -= 1;
                i += 1;
            }
            b',' if flow > 0 => i += 1,
            b'&' | b'*' if token_start => {
                let start = i + 1;
                let mut end = start;
                while end < b.len() && !is_ws(b[end]) && !is_flow_indicator(b[end]) {
                    end += 1;
                }
                props.push(Prop {
                    anchor: c == b'&',
                    start,
                    end,
                });
                i = end;
            }
            b'!' if token_start => {
                let mut end = i + 1;
                while end < b.len() && !is_ws(b[end]) {
                    end += 1;
                }
                if let Some(edit) = mark_tag(b, i, end, flow, indents.current()) {
                    tags.push(edit);
                }
                i = end;
            }
            b'|' | b'>' if token_start && flow == 0 => {
                block = Some(node_column(&b[line_start..]));
                i = skip_line(b, i);
                at_line_start = true;
            }
            _ if is_ws(c) => i += 1,
            // A document marker, or the indicator of a sequence entry, a complex key or a
            // value: what follows starts a node.
            b'-' if i == line_start
                && b[i..].starts_with(b"---")
                && b.get(i + 3).is_none_or(|c| is_ws(*c)) =>
            {
                i += 3;
            }
            b'-' | b'?' | b':' if token_start && b.get(i + 1).is_none_or(|c| is_ws(*c)) => {
                if flow == 0 && c != b':' {
                    // A block sequence entry or a complex key.
                    indents.roll(i - line_start);
                }
                i += 1;
            }
            // Each step moves on by one byte at least: a `:` that ends a flow scalar where it
            // starts (`{:{`) is read as an indicator, not again and again.
            _ if token_start && flow > 0 => i = flow_plain(b, i, flow)?.max(i + 1),
            _ if token_start => {
                // A block plain scalar or a key: up to `: `, ` #` or the line's end.
                let (end, key) = block_token(b, i);
                if key {
                    // A simple key starts a block mapping at its column.
                    indents.roll(i - line_start);
                    i = end.max(i + 1);
                } else {
                    i = plain_continuation(b, end, indents.current()).max(i + 1);
                }
            }
            _ => i += 1,
        }
    }
    Ok(Scan { props, tags })
}

fn skip_line(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    (i + 1).min(b.len())
}

fn double_quoted(b: &[u8], start: usize) -> Result<usize, ParseError> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                if b.get(i + 1) == Some(&b'/') {
                    return Err(err(
                        "found unknown escape character `\\/` in a double-quoted scalar: go-yaml, \
                         which kustomize reads YAML with, has no such escape (write `/`)"
                            .into(),
                        i,
                    ));
                }
                i += 2;
            }
            b'"' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Ok(i)
}

fn single_quoted(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'\'' {
            if b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    i
}

/// A plain scalar inside a flow collection, up to what ends it for go-yaml. It goes on over
/// line breaks (`yaml_parser_scan_plain_scalar` in flow context has no indentation to keep),
/// and a comment ends it.
fn flow_plain(b: &[u8], start: usize, _flow: usize) -> Result<usize, ParseError> {
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        if is_flow_indicator(c) {
            return Ok(i);
        }
        if c == b'\n' || c == b'\r' {
            // The scalar goes on at the next line's first character unless that line is a
            // comment or a document marker.
            let mut j = i;
            while j < b.len() && is_ws(b[j]) {
                j += 1;
            }
            let line_start = b[..j]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |p| p + 1);
            let marker = j == line_start
                && (b[j..].starts_with(b"---") || b[j..].starts_with(b"..."))
                && b.get(j + 3).is_none_or(|c| is_ws(*c));
            if j >= b.len() || b[j] == b'#' || marker {
                return Ok(i);
            }
            i = j;
            continue;
        }
        if c == b':'
            && b.get(i + 1)
                .is_none_or(|n| is_ws(*n) || is_flow_indicator(*n))
        {
            return Ok(i);
        }
        if c == b'#' && is_ws(b[i - 1]) {
            return Ok(i);
        }
        if c == b'?' && i > start {
            return Err(err(
                "did not find expected ',' or the collection's end: go-yaml, which kustomize \
                 reads YAML with, ends a plain scalar at `?` inside `{}` or `[]` (quote the value)"
                    .into(),
                i,
            ));
        }
        i += 1;
    }
    Ok(i)
}

/// A block plain scalar or a simple key on one line, from `start`: where it ends (after the
/// `:` of a key, at ` #`, or at the line's end) and whether it is a key.
fn block_token(b: &[u8], start: usize) -> (usize, bool) {
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            return (i, false);
        }
        if c == b':' && b.get(i + 1).is_none_or(|n| is_ws(*n)) {
            return (i + 1, true);
        }
        if c == b'#' && i > start && is_ws(b[i - 1]) {
            return (i, false);
        }
        i += 1;
    }
    (i, false)
}

/// Where a block plain scalar whose first line ends at `end` really ends: libyaml's
/// `yaml_parser_scan_plain_scalar` goes on over line breaks while the next non-blank line is
/// indented past the block indentation `indent` (`None`: the top level, any column), is not a
/// comment and is not a document marker at column 0. Blank lines belong to the scalar. The
/// result is the line break after its last line (or where `: ` or ` #` ends it), so that no
/// character of a continuation line is read as the start of a token.
fn plain_continuation(b: &[u8], mut end: usize, indent: Option<usize>) -> usize {
    loop {
        if end >= b.len() || b[end] != b'\n' {
            return end;
        }
        // Skip blank lines; find the next line with content.
        let mut line = end + 1;
        let (col, first) = loop {
            let mut j = line;
            while j < b.len() && matches!(b[j], b' ' | b'\t') {
                j += 1;
            }
            match b.get(j) {
                Some(b'\n') => line = j + 1,
                Some(b'\r') if b.get(j + 1) == Some(&b'\n') => line = j + 2,
                _ => break (j - line, j),
            }
        };
        if first >= b.len() {
            return end;
        }
        let marker = col == 0
            && (b[first..].starts_with(b"---") || b[first..].starts_with(b"..."))
            && b.get(first + 3).is_none_or(|c| is_ws(*c));
        if b[first] == b'#' || marker || indent.is_some_and(|n| col <= n) {
            return end;
        }
        let (next, key) = block_token(b, first);
        if key {
            // `: ` on a continuation line: go-yaml fails there ("could not find expected ':'"
            // or "mapping values are not allowed"), and so does the parser after this scan;
            // the scan stops before the `:`.
            return next - 1;
        }
        end = next;
    }
}

/// Renames every anchor defined more than once, and the aliases that refer to it, so that each
/// name is defined once and each alias names the latest definition before it. New names have
/// the old name's length, so offsets into the text stay valid.
fn rename_anchors(text: &str, props: &[Prop]) -> Option<String> {
    use std::collections::{HashMap, HashSet};
    let name = |p: &Prop| &text[p.start..p.end];
    let mut defined: HashMap<&str, usize> = HashMap::new();
    for p in props.iter().filter(|p| p.anchor) {
        *defined.entry(name(p)).or_default() += 1;
    }
    if defined.values().all(|&n| n < 2) {
        return None;
    }
    let mut taken: HashSet<String> = props.iter().map(|p| name(p).to_string()).collect();
    let mut out = text.to_string();
    // The current spelling of each name: the latest definition's new name.
    let mut current: HashMap<&str, String> = HashMap::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for p in props {
        let n = name(p);
        if p.anchor {
            let k = seen.entry(n).or_default();
            *k += 1;
            let spelled = if *k == 1 {
                n.to_string()
            } else {
                let fresh = fresh_name(n.len(), &taken)?;
                taken.insert(fresh.clone());
                fresh
            };
            out.replace_range(p.start..p.end, &spelled);
            current.insert(n, spelled);
        } else if let Some(spelled) = current.get(n) {
            out.replace_range(p.start..p.end, spelled);
        }
    }
    Some(out)
}

/// A name of `len` ASCII letters and digits not in `taken`.
fn fresh_name(len: usize, taken: &std::collections::HashSet<String>) -> Option<String> {
    const ALPHABET: &[u8] = b"ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba9876543210";
    if len == 0 {
        return None;
    }
    let mut digits = vec![0usize; len];
    loop {
        let candidate: String = digits.iter().map(|&d| ALPHABET[d] as char).collect();
        if !taken.contains(&candidate) {
            return Some(candidate);
        }
        let mut k = len - 1;
        loop {
            digits[k] += 1;
            if digits[k] < ALPHABET.len() {
                break;
            }
            digits[k] = 0;
            if k == 0 {
                return None;
            }
            k -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `:` that ends a flow scalar where it starts used to stop the scan from moving on (a
    /// hang the fieldsv1 fuzz target found). Each text here must come back at all; what it
    /// says is the parser's business.
    #[test]
    fn the_scan_always_moves_on() {
        for text in [
            "{:{a: b}}",
            "[:[a]]",
            "{a: {:}}",
            "&:{\"k\": 1}",
            "{\"f:met\"^adata\":&:{\"k:{\\\"nam...:\\<\"\"f:aa]e\":{}:aa\\e\":{:{\\\"name\\\"}\"}",
        ] {
            let _ = check(text);
        }
        assert!(scan("{:{a: b?}}").is_err());
    }

    #[test]
    fn slash_escape_in_double_quotes_only() {
        assert!(check("a: \"http:\\/\\/x\"\n").is_err());
        assert!(check("a: 'x\\/y'\nb: x\\/y\nc: |\n  \"\\/\"\n# \"\\/\"\n").is_ok());
    }

    #[test]
    fn question_mark_in_flow_plain_scalars() {
        assert!(check("data: {a: b?}\n").is_err());
        assert!(check("data: [x?y]\n").is_err());
        assert!(check("data: {a: \"b?\"}\nb: c?\nc: [\"?\"]\n").is_ok());
    }

    /// The text each key of `text` reads as, after the scan (and any renaming) and the parse.
    fn read(text: &str) -> Vec<(String, String)> {
        let scanned = check(text).unwrap();
        let docs =
            super::super::parse::parse_documents(scanned.as_deref().unwrap_or(text)).unwrap();
        let mut out = Vec::new();
        for doc in docs {
            collect(&doc.node, String::new(), &mut out);
        }
        out
    }

    fn collect(node: &super::super::Node, path: String, out: &mut Vec<(String, String)>) {
        use super::super::Node;
        match node {
            Node::Map(m) => {
                for (k, v) in m.iter() {
                    collect(v, format!("{path}/{k}"), out);
                }
            }
            Node::Seq(items) => {
                for (n, v) in items.iter().enumerate() {
                    collect(v, format!("{path}/{n}"), out);
                }
            }
            other => out.push((path, other.as_str().unwrap_or("").to_string())),
        }
    }

    /// A plain scalar's continuation line that starts with `&` or `*` is text (issue #25: the
    /// second `&&` of a file became `&Z`, the third `&Y`). Every shape of block nesting that
    /// lets a plain scalar go on over lines, and several documents.
    #[test]
    fn continuation_lines_starting_with_anchor_characters_are_text() {
        let text = "\
a: has(self.a)
  && has(self.b)
b: has(self.c)
  && has(self.d)
c:
  x: one
    && two
  y:
    three
    && four
  z:
  - five
    && six
  - k: seven
      && eight
      *  nine
---
d: ten
   && eleven

   && twelve
e: [thirteen
  && fourteen]
f: fifteen
  & sixteen
";
        assert_eq!(check(text).unwrap(), None, "nothing here is an anchor");
        let got = read(text);
        let want = [
            ("/a", "has(self.a) && has(self.b)"),
            ("/b", "has(self.c) && has(self.d)"),
            ("/c/x", "one && two"),
            ("/c/y", "three && four"),
            ("/c/z/0", "five && six"),
            ("/c/z/1/k", "seven && eight *  nine"),
            ("/d", "ten && eleven\n&& twelve"),
            ("/e/0", "thirteen && fourteen"),
            ("/f", "fifteen & sixteen"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    /// Real anchors still count after multi-line scalars: a line that is not a continuation
    /// (at the key's column, or after a comment) starts a token again.
    #[test]
    fn anchors_after_multi_line_scalars_still_count() {
        let text = "\
a: one
  && two
b: &x first
c: three
  && four
# a comment
d: &x second
e: *x
";
        let out = check(text).unwrap().expect("the second &x is renamed");
        assert_eq!(out.len(), text.len());
        assert!(out.contains("one\n  && two") && out.contains("three\n  && four"));
        let got = read(text);
        assert!(
            got.contains(&("/e".to_string(), "second".to_string())),
            "{got:?}"
        );
    }

    /// A quoted key opens a mapping as a plain key does: a line at its column is not more of
    /// the value before it, so an anchor there counts (here on a complex key, whose line has
    /// no `: ` to end the value by itself).
    #[test]
    fn quoted_keys_keep_the_indentation() {
        let text = "\
\"a\": one
? &x k
: v
b: &x second
c: *x
";
        let out = check(text).unwrap().expect("the second &x is renamed");
        assert_eq!(out.len(), text.len());
        assert!(out.starts_with("\"a\": one\n? &x k\n"), "{out}");
        assert!(!out.contains("b: &x second"), "{out}");
        // A quoted key's value still goes on over deeper lines.
        let got = read("o:\n  \"k\": one\n    && two\n");
        assert_eq!(got, [("/o/k".to_string(), "one && two".to_string())]);
    }

    /// Core tags are marked and their plain scalars quoted, every offset kept.
    #[test]
    fn core_tags_are_marked_at_the_same_length() {
        let cases = [
            ("a: !!int 0x1F\n", "a: !~i '0x1F'\n"),
            ("a: !!float 1e3  # c\n", "a: !~f   '1e3'  # c\n"),
            ("a: !!null\nb: 1\n", "a: !~n   \nb: 1\n"),
            ("a: !!int \"017\"\n", "a: !~i   \"017\"\n"),
            ("a: !!float\n  1e3\n", "a: !~f  \n  '1e3'\n"),
            ("a: [!!int 0o17, !!null ]\n", "a: [!~i '0o17', !~n    ]\n"),
            (
                "- !<tag:yaml.org,2002:bool> x'y\n",
                "- !~b                     \"x'y\"\n",
            ),
            ("a: !!str 0x1F\n", "a: !~s '0x1F'\n"),
            // Left to serde_yaml: collections, plain scalars over several lines.
            ("a: !!int [1]\n", "a: !!int [1]\n"),
            ("a: !!int 1\n  2\n", "a: !!int 1\n  2\n"),
        ];
        for (text, want) in cases {
            let got = check(text).unwrap().unwrap_or_else(|| text.to_string());
            assert_eq!(got, want, "{text:?}");
            assert_eq!(got.len(), text.len());
        }
        assert_eq!(marked_tag("~t"), Some("timestamp"));
        assert_eq!(marked_tag("~x"), None);
    }

    #[test]
    fn redefined_anchors_are_renamed() {
        let text = "a: &a first\nb: &a second\nc: *a\nd: &b x\n";
        let out = check(text).unwrap().unwrap();
        assert_eq!(out.len(), text.len());
        let m = super::super::parse::parse_one(&out).unwrap();
        assert_eq!(m.get("c"), Some(&super::super::Node::str("second")));
        assert_eq!(
            check("a: &a 1\nb: *a\nu: http://x?a=1&b=2\n").unwrap(),
            None
        );
    }
}
