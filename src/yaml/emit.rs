//! [`Node`] → YAML text, byte-compatible with what `kustomize build` prints. The only writer of
//! YAML in ply; it owns no parsing and no knowledge of Kubernetes.
//!
//! kustomize prints each resource with `sigs.k8s.io/yaml.JSONToYAML`: the resource becomes JSON,
//! go-yaml **v2** reads that JSON back into Go maps and `yaml.Marshal` prints them. So the
//! output follows go-yaml v2's encoder (`encode.go`, `stringv`: strings that v2's `resolve`
//! would read as another type, or that look like YAML 1.1 base-60 floats, are double-quoted;
//! strings with `\n` ask for a literal block), its key order (`sorter.go`, `keyList.Less`: a
//! "natural" order, not bytewise), and its emitter (`emitterc.go`: `yaml_emitter_analyze_scalar`,
//! `yaml_emitter_select_scalar_style`, the `yaml_emitter_write_*_scalar` functions, folding at
//! `best_width` 80, two-space indentation, sequences not indented under their key, `? ` complex
//! keys for keys longer than 128 bytes or spanning lines). Floats print in Go's shortest `%g`
//! form after the JSON step (`1.0` → `1`, `1e-7` → `1e-07`).
//!
//! The emitter mirrors go-yaml's state (current column, "only whitespace so far", "only
//! indentation so far") as it writes, so that line folding and indentation decisions are the
//! same as go-yaml's without re-scanning the output.

use std::fmt::Write as _;

use super::Node;
use super::resolve::resolves_to_non_string;

/// go-yaml's `best_width`: plain and quoted scalars fold at a space past this column.
const BEST_WIDTH: usize = 80;
/// go-yaml's `best_indent`.
const INDENT: i32 = 2;
/// go-yaml's limit on the length (in bytes) of a simple key; longer keys use `? `.
const MAX_SIMPLE_KEY: usize = 128;

/// How to print.
#[derive(Clone, Copy, Debug)]
pub struct EmitOptions {
    /// Sort map keys in go-yaml v2's order, as kustomize prints them. When false, keys keep
    /// their document order.
    pub sort_keys: bool,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions { sort_keys: true }
    }
}

/// Writes one document (no `---` marker) into `out`, ending with a line break.
pub fn emit_document(out: &mut String, node: &Node, opts: EmitOptions) {
    emit_one(out, node, opts, None);
}

/// [`emit_document`], also telling where each value is written: for every scalar (and empty
/// map or list) written as a map value after a simple key or as a list item, the node's
/// address and the byte offset in `out` where its text starts (`ply render
/// --provenance=comments` places its comments by them instead of searching the text).
pub(crate) fn emit_document_spots(
    out: &mut String,
    node: &Node,
    opts: EmitOptions,
    spots: &mut Vec<(*const Node, usize)>,
) {
    emit_one(out, node, opts, Some(spots));
}

fn emit_one(
    out: &mut String,
    node: &Node,
    opts: EmitOptions,
    spots: Option<&mut Vec<(*const Node, usize)>>,
) {
    let mut e = Emitter {
        out,
        opts,
        column: 0,
        whitespace: true,
        indention: true,
        spots,
    };
    e.node(node, -1, false, false);
    // go-yaml's document end: a line break unless the last line is already empty.
    e.write_indent(0);
}

/// Writes documents separated by `---` lines, as `kustomize build` does.
pub fn emit_documents<'a>(nodes: impl IntoIterator<Item = &'a Node>, opts: EmitOptions) -> String {
    let mut out = String::new();
    for (i, n) in nodes.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        emit_document(&mut out, n, opts);
    }
    out
}

struct Emitter<'a> {
    out: &'a mut String,
    opts: EmitOptions,
    /// Characters (not bytes) written on the current line, as go-yaml counts them.
    column: usize,
    /// The last thing written was whitespace (or the start of a line).
    whitespace: bool,
    /// The current line holds only indentation and indicators so far.
    indention: bool,
    /// Where values are written, when asked ([`emit_document_spots`]).
    spots: Option<&'a mut Vec<(*const Node, usize)>>,
}

/// go-yaml's `yaml_emitter_increase_indent`.
fn increase_indent(indent: i32, flow: bool, indentless: bool) -> i32 {
    if indent < 0 {
        if flow { INDENT } else { 0 }
    } else if indentless {
        indent
    } else {
        indent + INDENT
    }
}

impl Emitter<'_> {
    /// Writes one non-break character.
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    /// Writes ASCII text without breaks.
    fn put_ascii(&mut self, s: &str) {
        self.out.push_str(s);
        self.column += s.len();
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// go-yaml `write_break`: `\n` is written as a line break; other break characters (NEL,
    /// LS, PS) are written as they are and end the line.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    /// go-yaml `yaml_emitter_write_indent`.
    fn write_indent(&mut self, indent: i32) {
        let indent = usize::try_from(indent).unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        // All the spaces at once (a deep document's lines are mostly indentation).
        const SPACES: &str = "                                                                ";
        while self.column < indent {
            let n = (indent - self.column).min(SPACES.len());
            self.put_ascii(&SPACES[..n]);
        }
        self.whitespace = true;
        self.indention = true;
    }

    /// go-yaml `yaml_emitter_write_indicator`.
    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        self.put_ascii(ind);
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    /// Any node; `indent` is go-yaml's current indent (-1 at the root), `mapping` tells a
    /// value of a mapping, `simple_key` a key written inline.
    fn node(&mut self, n: &Node, indent: i32, mapping: bool, simple_key: bool) {
        match n.unspelled() {
            Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
            Node::Map(m) if !m.is_empty() => self.block_mapping(m, indent),
            Node::Seq(s) if !s.is_empty() => self.block_sequence(s, indent, mapping),
            Node::Seq(_) => {
                self.write_indicator("[", true, true, false);
                self.write_indicator("]", false, false, false);
            }
            Node::Map(_) => {
                self.write_indicator("{", true, true, false);
                self.write_indicator("}", false, false, false);
            }
            Node::Null => self.plain_word("null"),
            Node::Bool(b) => self.plain_word(if *b { "true" } else { "false" }),
            Node::Int(i) => {
                if !self.whitespace {
                    self.put(' ');
                }
                let start = self.out.len();
                let _ = write!(self.out, "{i}");
                self.column += self.out.len() - start;
                self.whitespace = false;
                self.indention = false;
            }
            Node::Float(f) => {
                if !self.whitespace {
                    self.put(' ');
                }
                let start = self.out.len();
                write_float(self.out, *f);
                self.column += self.out.len() - start;
                self.whitespace = false;
                self.indention = false;
            }
            Node::Str(s) => self.string(s, indent, simple_key),
        }
    }

    /// Notes where the field `n` (about to be written after an indicator) starts: past the
    /// one space the writers put before a value.
    #[inline]
    fn spot(&mut self, n: &Node) {
        if let Some(spots) = self.spots.as_deref_mut() {
            let field = match n.unspelled() {
                Node::Map(m) => m.is_empty(),
                Node::Seq(s) => s.is_empty(),
                _ => true,
            };
            if field {
                let at = self.out.len() + usize::from(!self.whitespace);
                spots.push((n as *const Node, at));
            }
        }
    }

    fn plain_word(&mut self, w: &str) {
        if !self.whitespace {
            self.put(' ');
        }
        self.put_ascii(w);
        self.whitespace = false;
        self.indention = false;
    }

    /// go-yaml `yaml_emitter_emit_block_sequence_item`.
    fn block_sequence(&mut self, items: &[Node], parent: i32, mapping: bool) {
        let indent = increase_indent(parent, false, mapping && !self.indention);
        for item in items {
            self.write_indent(indent);
            self.write_indicator("-", true, false, true);
            self.spot(item);
            self.node(item, indent, false, false);
        }
    }

    /// go-yaml `yaml_emitter_emit_block_mapping_key` / `_value`.
    fn block_mapping(&mut self, m: &super::Map, parent: i32) {
        let indent = increase_indent(parent, false, false);
        // Most maps are written in order already: sort (and collect) only the others.
        let sorted;
        let entries: &mut dyn Iterator<Item = (&String, &Node)> =
            if self.opts.sort_keys && !m.keys().is_sorted_by(|a, b| !key_less(b, a)) {
                let mut all: Vec<(&String, &Node)> = m.iter().collect();
                merge_sort(&mut all, |a, b| key_less(a.0, b.0));
                sorted = all;
                &mut sorted.iter().copied()
            } else {
                &mut m.iter()
            };
        for (k, v) in entries {
            self.write_indent(indent);
            let analysis = analyze(k);
            if !analysis.multiline && k.len() <= MAX_SIMPLE_KEY {
                self.string_with(k, &analysis, indent, true);
                self.write_indicator(":", false, false, false);
                self.spot(v);
            } else {
                self.write_indicator("?", true, false, true);
                self.string_with(k, &analysis, indent, false);
                self.write_indent(indent);
                self.write_indicator(":", true, false, true);
            }
            self.node(v, indent, true, false);
        }
    }

    fn string(&mut self, s: &str, parent: i32, simple_key: bool) {
        let analysis = analyze(s);
        self.string_with(s, &analysis, parent, simple_key);
    }

    /// go-yaml v2 `encoder.stringv` + `yaml_emitter_select_scalar_style` + the writers.
    fn string_with(&mut self, s: &str, a: &Analysis, parent: i32, simple_key: bool) {
        let indent = increase_indent(parent, true, false);
        let allow_breaks = !simple_key;
        match select_style(s, a, simple_key) {
            Style::Plain => self.plain(s, indent, allow_breaks),
            Style::Single => self.single(s, indent, allow_breaks),
            Style::Double => self.double(s, indent, allow_breaks),
            Style::Literal => self.literal(s, indent),
        }
    }

    /// go-yaml `yaml_emitter_write_plain_scalar`.
    fn plain(&mut self, s: &str, indent: i32, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        // Fast path: a plain scalar has no line breaks, and it can only fold at a space past
        // column 80; when even its last byte stays within that, it is written as it is.
        if !allow_breaks || self.column + s.len() <= BEST_WIDTH || !s.contains(' ') {
            self.out.push_str(s);
            self.column += if s.is_ascii() {
                s.len()
            } else {
                s.chars().count()
            };
            self.whitespace = false;
            self.indention = false;
            return;
        }
        let mut spaces = false;
        let mut breaks = false;
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && chars.peek() != Some(&' ')
                {
                    self.write_indent(indent);
                } else {
                    self.put(' ');
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    /// go-yaml `yaml_emitter_write_single_quoted_scalar`.
    fn single(&mut self, s: &str, indent: i32, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let mut spaces = false;
        let mut breaks = false;
        let mut chars = s.chars().peekable();
        let mut first = true;
        while let Some(c) = chars.next() {
            if c == ' ' {
                let next = chars.peek().copied();
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && !first
                    && next.is_some()
                    && next != Some(' ')
                {
                    self.write_indent(indent);
                } else {
                    self.put(' ');
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
            first = false;
        }
        self.write_indicator("'", false, false, false);
    }

    /// go-yaml `yaml_emitter_write_double_quoted_scalar`.
    fn double(&mut self, s: &str, indent: i32, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let mut spaces = false;
        // go-yaml's `is_bom(value, i)` looks at the start of the value, not at `i`: a value
        // that starts with a BOM has every character escaped.
        let bom = s.starts_with('\u{FEFF}');
        let mut chars = s.chars().peekable();
        let mut first = true;
        while let Some(c) = chars.next() {
            if bom || !is_printable(c) || is_break(c) || c == '"' || c == '\\' {
                self.escape(c);
                spaces = false;
            } else if c == ' ' {
                let next = chars.peek().copied();
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !first && next.is_some() {
                    self.write_indent(indent);
                    if next == Some(' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(' ');
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
            first = false;
        }
        self.write_indicator("\"", false, false, false);
    }

    fn escape(&mut self, c: char) {
        let short = match c {
            '\0' => "\\0",
            '\u{7}' => "\\a",
            '\u{8}' => "\\b",
            '\t' => "\\t",
            '\n' => "\\n",
            '\u{B}' => "\\v",
            '\u{C}' => "\\f",
            '\r' => "\\r",
            '\u{1B}' => "\\e",
            '"' => "\\\"",
            '\\' => "\\\\",
            '\u{85}' => "\\N",
            '\u{A0}' => "\\_",
            '\u{2028}' => "\\L",
            '\u{2029}' => "\\P",
            _ => "",
        };
        if !short.is_empty() {
            self.put_ascii(short);
            return;
        }
        let v = c as u32;
        let start = self.out.len();
        let _ = if v <= 0xFF {
            write!(self.out, "\\x{v:02X}")
        } else if v <= 0xFFFF {
            write!(self.out, "\\u{v:04X}")
        } else {
            write!(self.out, "\\U{v:08X}")
        };
        self.column += self.out.len() - start;
    }

    /// go-yaml `yaml_emitter_write_literal_scalar` with its block scalar hints.
    fn literal(&mut self, s: &str, indent: i32) {
        self.write_indicator("|", true, false, false);
        if s.starts_with(' ') || s.starts_with(is_break) {
            let hint = if INDENT == 2 { "2" } else { "4" };
            self.write_indicator(hint, false, false, false);
        }
        let mut rev = s.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(prev)) if is_break(prev) => Some("+"),
            _ => None,
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        // A line at a time: each run of characters between breaks is written whole, after
        // the indentation that the first character of a line gets (go-yaml writes it
        // character by character, to the same text).
        let mut rest = s;
        while !rest.is_empty() {
            let (run, tail) = rest.split_at(rest.find(is_break).unwrap_or(rest.len()));
            if !run.is_empty() {
                if breaks {
                    self.write_indent(indent);
                }
                self.out.push_str(run);
                self.column += if run.is_ascii() {
                    run.len()
                } else {
                    run.chars().count()
                };
                self.indention = false;
                breaks = false;
            }
            let mut tail = tail.chars();
            if let Some(c) = tail.next() {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            }
            rest = tail.as_str();
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// go-yaml v2 `encoder.stringv` (literal for text with `\n`, double quotes when the plain form
/// would read back as another type) refined by `yaml_emitter_select_scalar_style`.
fn select_style(s: &str, a: &Analysis, simple_key: bool) -> Style {
    // Text without line breaks (`multiline` false) holds no line feed: no search then.
    let mut style = if a.multiline && s.contains('\n') {
        Style::Literal
    } else if !resolves_to_non_string(s) {
        Style::Plain
    } else {
        Style::Double
    };
    if style == Style::Plain && (!a.block_plain_allowed || (s.is_empty() && simple_key)) {
        style = Style::Single;
    }
    if style == Style::Single && !a.single_quoted_allowed {
        style = Style::Double;
    }
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::Double;
    }
    style
}

/// Sets the style of every map value in `node` ([`super::Map::styled`]) to the one go-yaml
/// writes a Go value with: a string that it does not print plain (quoted, or a literal block)
/// is styled, every other value plain. What kyaml's nodes hold after a round trip through Go
/// values: a JSON 6902 patch prints the object as JSON and reads it back from the YAML that
/// go-yaml v3 prints for the decoded map (`RNode.UnmarshalJSON` → `FromMap`,
/// kyaml/yaml/rnode.go; `encoder.stringv` and `yaml_emitter_select_scalar_style`, which v2,
/// whose rules this file follows, shares for block mapping values).
///
/// Each value is marked [`super::ScalarStyle::Printed`], a rule applied when a patch asks
/// ([`prints_quoted`]): analysing every string of the object here cost 1.3% of a render.
pub(crate) fn restyle_as_printed(node: &mut Node) {
    match node {
        Node::Map(m) => {
            for i in 0..m.len() {
                m.set_style_index(i, super::ScalarStyle::Printed);
                if let Some((_, v @ (Node::Map(_) | Node::Seq(_)))) = m.get_index_mut(i) {
                    restyle_as_printed(v);
                }
            }
        }
        Node::Seq(items) => items.iter_mut().for_each(restyle_as_printed),
        _ => {}
    }
}

/// Whether go-yaml writes the string `s`, a block mapping's value, in a style other than plain
/// (quoted, or a literal block): [`restyle_as_printed`]'s rule.
pub(crate) fn prints_quoted(s: &str) -> bool {
    select_style(s, &analyze(s), false) != Style::Plain
}

#[derive(Debug, PartialEq, Eq)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// go-yaml `yaml_emitter_analyze_scalar`, block context, unicode output enabled.
fn analyze(s: &str) -> Analysis {
    let b = s.as_bytes();
    analyze_printable_ascii(b)
        .or_else(|| analyze_ascii_lines(b))
        .unwrap_or_else(|| analyze_chars(s))
}

/// [`analyze`] for multi-line text of printable ASCII and line feeds (the files a ConfigMap
/// holds): never plain; single quotes and a literal block are ruled out by a space next to a
/// line break, a literal block also by a trailing space. The same answer as
/// [`analyze_chars`] (unit-tested); None for any other text.
fn analyze_ascii_lines(b: &[u8]) -> Option<Analysis> {
    if !b.contains(&b'\n') || !super::scan::printable_ascii_or_lf(b) {
        return None;
    }
    let space_break = b.windows(2).any(|w| w == b" \n");
    let break_space = b.windows(2).any(|w| w == b"\n ");
    Some(Analysis {
        multiline: true,
        block_plain_allowed: false,
        single_quoted_allowed: !(break_space || space_break),
        block_allowed: !(space_break || b.last() == Some(&b' ')),
    })
}

/// [`analyze`] for the scalars nearly every manifest is made of: non-empty, printable ASCII
/// (space to `~`) only, so no line break, tab or special character; what is left to find is
/// a leading or trailing space and the indicators (`: `, ` #`, a leading indicator
/// character). The same answer as [`analyze_chars`] (unit-tested); None for any other text.
fn analyze_printable_ascii(b: &[u8]) -> Option<Analysis> {
    let (&first, &last) = (b.first()?, b.last()?);
    let mut block_indicators = b.starts_with(b"---") || b.starts_with(b"...");
    let ws_at = |i: usize| b.get(i).is_none_or(|&c| c == b' ');
    match first {
        b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
        | b'"' | b'%' | b'@' | b'`' => block_indicators = true,
        b'?' | b':' | b'-' if ws_at(1) => block_indicators = true,
        _ => {}
    }
    let mut i = 0;
    loop {
        i = super::scan::ascii_stop(b, i);
        let Some(&c) = b.get(i) else { break };
        match c {
            // The first character's indicators are the ones above.
            b':' if i > 0 && ws_at(i + 1) => block_indicators = true,
            b'#' if i > 0 && b[i - 1] == b' ' => block_indicators = true,
            b':' | b'#' => {}
            _ => return None,
        }
        i += 1;
    }
    let leading_space = first == b' ';
    let trailing_space = last == b' ';
    Some(Analysis {
        multiline: false,
        block_plain_allowed: !(leading_space || trailing_space || block_indicators),
        single_quoted_allowed: true,
        block_allowed: !trailing_space,
    })
}

/// [`analyze`] character by character, for any text.
#[allow(
    clippy::too_many_lines,
    reason = "mirrors go-yaml's yaml_emitter_analyze_scalar flag by flag, in its order"
)]
fn analyze_chars(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut line_breaks = false;
    let mut special = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut previous_space = false;
    let mut previous_break = false;
    let mut preceded_by_ws = true;

    let mut chars = s.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let last = next.is_none();
        let followed_by_ws = next.is_none_or(|c| c == ' ' || c == '\t');
        if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_ws => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => block_indicators = true,
                '#' if preceded_by_ws => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            if first {
                leading_space = true;
            }
            if last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            if first {
                leading_break = true;
            }
            if last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_ws = is_blankz(c);
        first = false;
    }

    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// go-yaml `is_blankz`: space, tab, a line break or NUL.
fn is_blankz(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\0') || is_break(c)
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// go-yaml `is_printable`, which works on UTF-8 bytes: `\n`, printable ASCII, U+00A0–U+D7FF
/// and U+E000–U+FFFD except the BOM. NEL, tabs, other controls and every character beyond
/// U+FFFF are "special" and force double quotes with an escape.
fn is_printable(c: char) -> bool {
    matches!(c,
        '\n' | '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        && c != '\u{FEFF}'
}

#[cfg(test)]
/// go-yaml v2's key order (`sorter.go`, `keyList.Less`) for string keys: at the first
/// differing character two letters compare by code point; a letter sorts after a non-letter;
/// otherwise the digit runs
/// starting there compare as numbers, then by length, then by code point.
pub(crate) fn key_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    if a == b {
        return std::cmp::Ordering::Equal;
    }
    if key_less(a, b) {
        std::cmp::Ordering::Less
    } else {
        std::cmp::Ordering::Greater
    }
}

pub(super) fn key_less(a: &str, b: &str) -> bool {
    // Fast path for ASCII keys whose first difference is not a digit: letters compare by code
    // point and after every non-letter, two non-letters by code point.
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    if let Some(i) = ab.iter().zip(bb).position(|(x, y)| x != y) {
        let (x, y) = (ab[i], bb[i]);
        if x.is_ascii() && y.is_ascii() && !x.is_ascii_digit() && !y.is_ascii_digit() {
            let rank = |c: u8| u16::from(c) + if c.is_ascii_alphabetic() { 0x100 } else { 0 };
            return rank(x) < rank(y);
        }
    } else {
        return ab.len() < bb.len();
    }
    key_less_slow(a, b)
}

fn key_less_slow(a: &str, b: &str) -> bool {
    let is_digit = |c: char| c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric());
    let mut ai = a.chars();
    let mut bi = b.chars();
    // Whether the run of digits just before the current position holds a non-zero digit.
    let mut run_nonzero = false;
    loop {
        let (ra, rb) = (ai.clone(), bi.clone());
        let (Some(ca), Some(cb)) = (ai.next(), bi.next()) else {
            return a.chars().count() < b.chars().count();
        };
        if ca == cb {
            run_nonzero = is_digit(ca) && (run_nonzero || ca != '0');
            continue;
        }
        let (al, bl) = (ca.is_alphabetic(), cb.is_alphabetic());
        if al && bl {
            return ca < cb;
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if (ca == '0' || cb == '0') && run_nonzero {
            an = 1;
            bn = 1;
        }
        let mut alen = 0usize;
        for c in ra.take_while(|&c| is_digit(c)) {
            an = an.wrapping_mul(10).wrapping_add(c as i64 - '0' as i64);
            alen += 1;
        }
        let mut blen = 0usize;
        for c in rb.take_while(|&c| is_digit(c)) {
            bn = bn.wrapping_mul(10).wrapping_add(c as i64 - '0' as i64);
            blen += 1;
        }
        if an != bn {
            return an < bn;
        }
        if alen != blen {
            return alen < blen;
        }
        return ca < cb;
    }
}

/// A stable merge sort by a "less" function that need not be a total order (go-yaml's key
/// order is not one for every input): unlike `slice::sort_by` it can never panic.
pub(super) fn merge_sort<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool + Copy) {
    let n = v.len();
    if n <= 12 {
        for i in 1..n {
            let mut j = i;
            while j > 0 && less(&v[j], &v[j - 1]) {
                v.swap(j, j - 1);
                j -= 1;
            }
        }
        return;
    }
    let mid = n / 2;
    merge_sort(&mut v[..mid], less);
    merge_sort(&mut v[mid..], less);
    let left: Vec<T> = v[..mid].to_vec();
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < left.len() && j < n {
        if less(&v[j], &left[i]) {
            v[k] = v[j];
            j += 1;
        } else {
            v[k] = left[i];
            i += 1;
        }
        k += 1;
    }
    while i < left.len() {
        v[k] = left[i];
        i += 1;
        k += 1;
    }
}

/// Writes a float as kustomize prints it (see [`format_float`]).
fn write_float(out: &mut String, f: f64) {
    out.push_str(&format_float(f));
}

/// Formats a float as kustomize prints it. kustomize's round trip turns a float into JSON
/// text (integral values below 1e21 without a fraction: `1234567.0` → `1234567`), go-yaml v2
/// reads that back as an integer when it fits an int64 or uint64, and otherwise prints Go's
/// `strconv.FormatFloat(f, 'g', -1, 64)` (shortest digits; exponent form when the exponent is
/// below -4 or at least 6). Non-finite
/// values, which make kustomize fail, print as YAML's `.nan`, `.inf`, `-.inf`.
pub(crate) fn format_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    if f == 0.0 {
        return "0".into();
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        let text = shortest_fixed(f);
        if text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok() {
            return text;
        }
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    // Go's shortest `%g` uses the exponent form below 1e-4 and from an exponent of 6 on (`strconv.FormatFloat` sets `eprec = 6` for shortest output).
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.unsigned_abs())
    } else {
        format!("{f}")
    }
}

/// Go's `strconv.FormatFloat(f, 'f', -1, 64)` for an integral value: the shortest digits that
/// read back as `f`, padded with zeros (`-9223372036854775808.0` → `-9223372036854776000`).
fn shortest_fixed(f: f64) -> String {
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: usize = exp.parse().unwrap_or(0);
    let (sign, mant) = match mant.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mant),
    };
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::from(sign);
    out.push_str(&digits);
    for _ in digits.len()..=exp {
        out.push('0');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// go-yaml's literal block body, character by character (`yaml_emitter_write_literal_scalar`
    /// after its header), as `Emitter::literal` wrote it before it wrote a line at a time.
    fn literal_body_by_characters(e: &mut Emitter, s: &str, indent: i32) {
        let mut breaks = true;
        for c in s.chars() {
            if is_break(c) {
                e.write_break(c);
                e.indention = true;
                breaks = true;
            } else {
                if breaks {
                    e.write_indent(indent);
                }
                e.put(c);
                e.indention = false;
                breaks = false;
            }
        }
    }

    /// Every string of up to `max_len` characters over `alphabet`, the shorter first.
    fn words(alphabet: &[char], max_len: u32) -> impl Iterator<Item = String> + '_ {
        (0..=max_len).flat_map(move |len| {
            (0..alphabet.len().pow(len)).map(move |mut n| {
                (0..len)
                    .map(|_| {
                        let c = alphabet[n % alphabet.len()];
                        n /= alphabet.len();
                        c
                    })
                    .collect()
            })
        })
    }

    /// Checks a fast path of `analyze` on `strings`: it answers exactly for the strings
    /// `admitted` (with the character walk's answer) and falls back for the others. Returns how
    /// many it answered.
    fn fast_path_agrees(
        strings: impl Iterator<Item = String>,
        fast: fn(&[u8]) -> Option<Analysis>,
        admitted: impl Fn(&str) -> bool,
    ) -> usize {
        let mut checked = 0;
        for s in strings {
            match fast(s.as_bytes()) {
                Some(answer) => {
                    assert!(admitted(&s), "{s:?}");
                    assert_eq!(answer, analyze_chars(&s), "{s:?}");
                    checked += 1;
                }
                None => assert!(!admitted(&s), "{s:?}"),
            }
        }
        checked
    }

    fn new(out: &mut String) -> Emitter<'_> {
        Emitter {
            out,
            opts: EmitOptions::default(),
            column: 0,
            whitespace: true,
            indention: true,
            spots: None,
        }
    }

    /// A literal block written a line at a time is the text, column and state the character
    /// walk leaves, for every string of up to six characters over breaks, spaces, ASCII and
    /// wider characters, at two indentations.
    #[test]
    fn literal_lines_equal_the_character_walk() {
        let alphabet = ['a', ' ', '\n', 'é', '\u{2028}', '\r'];
        for s in words(&alphabet, 6) {
            for indent in [0, 4] {
                let mut by_lines = String::new();
                let state = {
                    let mut a = new(&mut by_lines);
                    a.literal(&s, indent);
                    (a.column, a.whitespace, a.indention)
                };
                // The header, up to its line break, is the same code on both sides; the
                // body starts at column 0 of a fresh line.
                let body = by_lines.find('\n').map_or(by_lines.len(), |i| i + 1);
                let mut by_chars = by_lines[..body].to_string();
                let want = {
                    let mut b = new(&mut by_chars);
                    literal_body_by_characters(&mut b, &s, indent);
                    (b.column, b.whitespace, b.indention)
                };
                assert_eq!(by_lines, by_chars, "{s:?} at {indent}");
                assert_eq!(state, want, "{s:?} at {indent}");
            }
        }
    }

    /// The fast path of `analyze` for lines of printable ASCII gives the character walk's
    /// answer for every string of up to six characters over an alphabet of the classes the
    /// analysis tells apart (and falls back for the others).
    #[test]
    fn ascii_lines_analysis_equals_the_character_walk() {
        let alphabet = [' ', '\n', 'a', ':', '-', '\t', 'é'];
        let lines = |s: &str| {
            s.contains('\n') && s.bytes().all(|b| b == b'\n' || (b' '..=b'~').contains(&b))
        };
        let checked = fast_path_agrees(words(&alphabet, 6), analyze_ascii_lines, lines);
        assert!(checked > 5_000);
    }

    /// The ASCII fast path of `analyze` gives the character walk's answer for every string of
    /// up to five characters over an alphabet of every character class the analysis tells
    /// apart (and falls back for the others).
    #[test]
    fn printable_ascii_analysis_equals_the_character_walk() {
        let alphabet = [
            ' ', ':', '#', '-', '?', '.', 'a', '[', '\t', '\n', 'é', '\u{85}',
        ];
        let printable = |s: &str| !s.is_empty() && s.bytes().all(|b| (b' '..=b'~').contains(&b));
        let checked = fast_path_agrees(words(&alphabet, 5), analyze_printable_ascii, printable);
        assert!(checked > 10_000);
        for s in [
            "--- a", "...", "a: b", "a #b", "a#b", "- x", "-x", "? x", "x:", " x", "x ",
        ] {
            assert_eq!(
                analyze_printable_ascii(s.as_bytes()),
                Some(analyze_chars(s)),
                "{s:?}"
            );
        }
    }
    use crate::yaml::parse::parse_one;

    fn roundtrip(text: &str) -> String {
        let n = parse_one(text).unwrap();
        let mut out = String::new();
        emit_document(&mut out, &n, EmitOptions::default());
        out
    }

    fn scalar(s: &str) -> String {
        let mut out = String::new();
        emit_document(&mut out, &Node::str(s), EmitOptions::default());
        out
    }

    #[test]
    fn sorts_keys_and_compacts_sequences() {
        assert_eq!(
            roundtrip("b: 1\na:\n  - x: 1\n    y: [1, 2]\n  - - q\n"),
            "a:\n- x: 1\n  \"y\":\n  - 1\n  - 2\n- - q\nb: 1\n"
        );
    }

    #[test]
    fn natural_key_order() {
        let mut keys = vec![
            "b", "a10", "a9", "A", "_b", "0", "00", "9", "010", "é", "z01", "z1",
        ];
        merge_sort(&mut keys, |a, b| key_cmp(a, b) == std::cmp::Ordering::Less);
        assert_eq!(
            keys,
            [
                "_b", "0", "00", "9", "010", "A", "a9", "a10", "b", "z1", "z01", "é"
            ]
        );
    }

    #[test]
    fn quoting() {
        let cases = [
            ("yes", "\"yes\""),
            ("on", "\"on\""),
            ("123", "\"123\""),
            ("0777", "\"0777\""),
            ("1:20", "\"1:20\""),
            ("1e3", "\"1e3\""),
            ("1e400", "1e400"),
            ("2024-01-01", "\"2024-01-01\""),
            ("2001-12-14T21:59:43", "2001-12-14T21:59:43"),
            ("a: b", "'a: b'"),
            ("-a", "-a"),
            ("- a", "'- a'"),
            ("it's", "it's"),
            ("'q", "'''q'"),
            ("a\tb", "\"a\\tb\""),
            ("", "\"\""),
            ("<<", "<<"),
            ("\u{1F600}", "\"\\U0001F600\""),
            ("\u{FEFF}ab", "\"\\uFEFF\\x61\\x62\""),
        ];
        for (input, want) in cases {
            assert_eq!(scalar(input), format!("{want}\n"), "input {input:?}");
        }
    }

    #[test]
    fn literal_blocks() {
        let doc = |s: &str| {
            let mut m = crate::yaml::Map::default();
            m.insert("k".into(), Node::str(s));
            let mut out = String::new();
            emit_document(&mut out, &Node::Map(m), EmitOptions::default());
            out
        };
        assert_eq!(doc("a\nb\n"), "k: |\n  a\n  b\n");
        assert_eq!(doc("a\nb"), "k: |-\n  a\n  b\n");
        assert_eq!(doc("a\nb\n\n"), "k: |+\n  a\n  b\n\n");
        assert_eq!(doc("  x\ny\n"), "k: |2\n    x\n  y\n");
        assert_eq!(doc("a \nb\n"), "k: \"a \\nb\\n\"\n");
    }

    #[test]
    fn complex_keys() {
        let long = "k".repeat(129);
        let mut m = crate::yaml::Map::default();
        m.insert(long.clone(), Node::Seq(vec![Node::str("x")]));
        m.insert("a\nb".into(), Node::Int(1));
        let mut out = String::new();
        emit_document(&mut out, &Node::Map(m), EmitOptions::default());
        assert_eq!(out, format!("? |-\n  a\n  b\n: 1\n? {long}\n: - x\n"));
    }

    #[test]
    fn floats_like_go() {
        assert_eq!(format_float(1.0), "1");
        assert_eq!(format_float(1.5), "1.5");
        assert_eq!(format_float(1e30), "1e+30");
        assert_eq!(format_float(1e-7), "1e-07");
        assert_eq!(format_float(123456.0), "123456");
        assert_eq!(format_float(1234567.0), "1234567");
        assert_eq!(format_float(1234567.5), "1.2345675e+06");
        assert_eq!(format_float(123456.5), "123456.5");
        assert_eq!(format_float(1e19), "10000000000000000000");
        assert_eq!(format_float(1e20), "1e+20");
        assert_eq!(
            format_float(-9223372036854775809.0),
            "-9.223372036854776e+18"
        );
        assert_eq!(format_float(1e-5), "1e-05");
        assert_eq!(format_float(-0.0), "0");
        assert_eq!(format_float(0.0001), "0.0001");
        assert_eq!(format_float(f64::NAN), ".nan");
        assert_eq!(format_float(f64::NEG_INFINITY), "-.inf");
    }

    #[test]
    fn folds_long_lines() {
        let long = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr";
        let mut m = crate::yaml::Map::default();
        m.insert("long".into(), Node::str(long));
        let mut out = String::new();
        emit_document(&mut out, &Node::Map(m), EmitOptions::default());
        assert_eq!(
            out,
            "long: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp\n  qqqq rrrr\n"
        );
    }

    #[test]
    fn documents_that_are_not_maps() {
        let docs = [
            Node::Seq(vec![Node::Int(1), Node::Seq(vec![])]),
            Node::str("a\nb"),
            Node::Null,
        ];
        assert_eq!(
            emit_documents(docs.iter(), EmitOptions::default()),
            "- 1\n- []\n---\n|-\n  a\n  b\n---\nnull\n"
        );
    }

    proptest::proptest! {
        /// The ASCII fast path of the key order agrees with the general comparison.
        #[test]
        fn key_order_fast_path(a in "[a-cA-C0-2_.é-]{0,6}", b in "[a-cA-C0-2_.é-]{0,6}") {
            proptest::prop_assert_eq!(key_less(&a, &b), key_less_slow(&a, &b));
        }

        /// Whatever a string holds, the emitted text reads back as the same string (as key and
        /// as value, nested in a list): the style chosen never changes the value.
        #[test]
        fn strings_round_trip(s in "[a-z0-9 .:#'\"\\\t\n\r\u{85}\u{a0}\u{2028}\u{feff}\u{1F600}_+-]{0,160}") {
            let mut inner = crate::yaml::Map::default();
            inner.insert(s.clone(), Node::Seq(vec![Node::str(s.clone())]));
            let mut m = crate::yaml::Map::default();
            m.insert("k".into(), Node::Map(inner));
            let doc = Node::Map(m);
            let mut out = String::new();
            emit_document(&mut out, &doc, EmitOptions::default());
            let back = parse_one(&out).map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}: {out}")))?;
            proptest::prop_assert_eq!(back, doc, "{}", out);
        }
    }
}
