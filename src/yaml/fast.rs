//! The fast YAML reader: block YAML as Kubernetes manifests are written (block mappings and
//! sequences, plain, quoted and block scalars, comments, `---` markers) and JSON-like flow
//! collections (JSON files, `key: [a, {b: c}]`, a trailing comma before a closing bracket)
//! read straight from the text into [`Node`]s,
//! without an event stream or a serde visitor, as deep as kustomize's reader reads (go-yaml
//! v3's indentation and flow limits). It reads exactly what `parse.rs` (serde_yaml with ply's
//! go-yaml rules) reads, and gives up — `None`, the reference reader then runs — on anything
//! else: anchors, aliases, tags, unusual flow syntax (`[a: b]`, `?`, `{a}`, empty entries,
//! comments inside), complex keys, directives, multi-line plain or quoted scalars, tabs
//! outside scalars, carriage returns, byte order marks, repeated keys, a quoted `"<<"` key
//! (kyaml drops it), a literal block whose value starts with a tab, and every error. Errors
//! and their messages therefore come from the reference reader, but for one: block nesting
//! past go-yaml's `max_indents`, which the reference reader (128 levels) cannot see and this
//! reader refuses. `tests/fast_reader.rs` compares the two readers on every corpus file, on
//! generated documents and on deep ones; the `fastread` fuzz target does so on arbitrary
//! bytes.

use super::limits::{MAX_FLOW_DEPTH, MAX_INDENTS};
use super::reading::{
    Ctx, EMPTY_NULL, ParseError, Reread, keeps_own_text, nothing_after_key, spell, tag_before,
};
use super::resolve::{as_go_yaml_reads, serde_resolve, yaml11_bool};
use super::{Map, Node, ScalarStyle};

/// libyaml refuses an implicit key longer than 1024 characters; longer keys fall back.
const MAX_KEY: usize = 1000;

/// Why the reader stopped before the end.
enum Stop {
    /// It gives up: the reference reader reads the text.
    Fallback,
    /// The text goes past a limit of kustomize's reader (go-yaml v3): refused here, as the
    /// reference reader stops far earlier (serde_yaml's 128 levels) with another message.
    Refuse(ParseError),
}

use Stop::Fallback;

type R<T> = Result<T, Stop>;

/// The documents of `text`, each with the offset where its content starts, as
/// [`super::parse::parse_documents`] (or, with `yaml11`, `parse_config_documents`) reads them;
/// `None` when this reader does not handle the text; an error when the text nests deeper than
/// kustomize's reader allows ([`MAX_INDENTS`]).
/// With `mark_empty_nulls`, a block map's value written as nothing reads as
/// [`super::parse::EMPTY_NULL`], as `parse_documents_marking_empty_nulls` reads it.
pub(super) fn read(
    text: &str,
    yaml11: bool,
    mark_empty_nulls: bool,
    reread: Reread,
) -> Option<Result<Vec<(usize, Node)>, ParseError>> {
    if !plain_characters(text) || flow_heavy(text) || dialect_matters(text) {
        return None;
    }
    let mut p = Reader {
        s: text,
        b: text.as_bytes(),
        i: 0,
        cur: Line::Eof,
        yaml11,
        mark_empty_nulls,
        reread,
        indent: -1,
        indents: 0,
        flow: 0,
        entries: Vec::new(),
        styled: false,
        items: Vec::new(),
    };
    match p.stream() {
        Ok(docs) => Some(Ok(docs)),
        Err(Stop::Fallback) => None,
        Err(Stop::Refuse(e)) => Some(Err(e)),
    }
}

/// Every character is one libyaml accepts and reads as itself: no control character but tab
/// and line feed (so no carriage return), no DEL, and none of the characters libyaml treats as
/// line breaks (NEL, U+2028, U+2029) or byte order marks.
fn plain_characters(text: &str) -> bool {
    let Some(ascii) = super::scan::no_control_but_tab_and_lf(text.as_bytes()) else {
        return false;
    };
    ascii
        || text.chars().all(|c| {
            let u = c as u32;
            u < 0x80 || (u >= 0xA0 && !matches!(u, 0x2028 | 0x2029 | 0xFEFF | 0xFFFE | 0xFFFF))
        })
}

/// Whether the reference reader's flow nesting limit (`limits::check_nesting`, a lexical scan
/// run before its parser) refuses the text: it then does, with its message.
fn flow_heavy(text: &str) -> bool {
    text.len() > MAX_FLOW_DEPTH
        && text.bytes().filter(|&c| c == b'[' || c == b'{').count() > MAX_FLOW_DEPTH
        && super::limits::check_nesting(text).is_err()
}

/// Whether the reference reader's go-yaml checks (`dialect.rs`) would refuse or rewrite the
/// text: then it reads it.
fn dialect_matters(text: &str) -> bool {
    let interesting = text.contains("\\/")
        || (text.contains('?') && text.contains(['{', '[']))
        || text.contains('&');
    interesting && !matches!(super::dialect::check(text), Ok(None))
}

/// Where the next line with content starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Line {
    /// Content at this column; the reader's position is its first character.
    At(usize),
    /// A `---` or `...` marker line; the position is its start.
    Marker,
    Eof,
}

struct Reader<'t> {
    s: &'t str,
    b: &'t [u8],
    i: usize,
    cur: Line,
    yaml11: bool,
    mark_empty_nulls: bool,
    /// How the caller reads one document (`parse::parse_one`), for [`spell`].
    reread: Reread,
    /// The column of the innermost open block collection (-1 outside any), and how many are
    /// open at increasing columns: go-yaml v3's `parser.indent` and `len(parser.indents)`
    /// (`yaml_parser_roll_indent`, `scannerc.go`). A sequence at its key's column ("- " under
    /// `key:`) opens no level there.
    indent: isize,
    indents: usize,
    /// Open flow collections (`[`, `{`).
    flow: usize,
    /// The entries of the open mappings and the items of the open sequences, innermost last:
    /// a collection's own are moved into a container of exactly their number when it closes,
    /// so that a document is built without growing (and later shrinking) any container.
    /// Each entry's value's style too ([`Map::styled`]).
    entries: Vec<(String, Node, bool)>,
    items: Vec<Node>,
    /// Whether the last scalar read was quoted or a block (`Map::styled`); read by the
    /// mappings after each value, where only a scalar value's counts.
    styled: bool,
}

/// A mapping's entries are checked for a repeated key by a scan up to this many; a larger
/// mapping is moved into a [`Map`], which hashes.
const SCAN_ENTRIES: usize = 16;

/// The entries of one mapping being read: on [`Reader::entries`] while few, then in a map.
struct Entries {
    start: usize,
    large: Option<Map>,
}

fn is_blankz(c: Option<&u8>) -> bool {
    matches!(c, None | Some(b' ' | b'\n' | b'\t'))
}

impl<'t> Reader<'t> {
    fn peek(&self, k: usize) -> Option<&u8> {
        self.b.get(self.i + k)
    }

    /// The documents and where each one's content starts: 0 for one before any `---`, else
    /// the line after its marker (`parse.rs`, `document_starts`, says the same for every text
    /// this reader accepts: it gives up on content after a marker on the marker's line).
    fn stream(&mut self) -> R<Vec<(usize, Node)>> {
        self.next_line()?;
        let mut docs = Vec::new();
        if self.cur != Line::Marker {
            docs.push((0, self.document()?));
        }
        while self.cur == Line::Marker {
            if self.b[self.i] != b'-' {
                return Err(Fallback); // `...`
            }
            self.i += 3;
            self.end_of_line()?;
            let offset = self.i;
            self.next_line()?;
            docs.push((offset, self.document()?));
        }
        Ok(docs)
    }

    fn document(&mut self) -> R<Node> {
        let node = match self.cur {
            // A JSON document, or YAML written in flow style.
            Line::At(_) if matches!(self.b[self.i], b'[' | b'{') => {
                let node = self.flow_collection(Ctx::Root)?;
                self.rest_of_line()?;
                node
            }
            Line::At(col) => self.block_node(col, Ctx::Root)?,
            _ => Node::Null,
        };
        match self.cur {
            Line::At(_) => Err(Fallback),
            _ => Ok(node),
        }
    }

    /// From the start of a line, finds the next line with content and sets `cur`.
    fn next_line(&mut self) -> R<()> {
        loop {
            let start = self.i;
            self.i = super::scan::past_spaces(self.b, self.i);
            let col = self.i - start;
            match self.b.get(self.i) {
                None => {
                    self.cur = Line::Eof;
                    return Ok(());
                }
                Some(b'\n') => self.i += 1,
                Some(b'#') => self.skip_line(),
                Some(b'\t') => return Err(Fallback),
                Some(_) => {
                    self.cur = if col == 0 && self.at_marker() {
                        Line::Marker
                    } else {
                        Line::At(col)
                    };
                    return Ok(());
                }
            }
        }
    }

    /// After a block scalar: the position is on a line at column `col`, past its spaces.
    fn line_at(&mut self, col: usize) -> R<()> {
        match self.b.get(self.i) {
            None => {
                self.cur = Line::Eof;
                Ok(())
            }
            Some(b'#') => {
                self.skip_line();
                self.next_line()
            }
            Some(b'\t') => Err(Fallback),
            Some(b'\n') => {
                self.i += 1;
                self.next_line()
            }
            Some(_) => {
                self.cur = if col == 0 && self.at_marker() {
                    Line::Marker
                } else {
                    Line::At(col)
                };
                Ok(())
            }
        }
    }

    fn at_marker(&self) -> bool {
        let r = &self.b[self.i..];
        (r.starts_with(b"---") || r.starts_with(b"...")) && is_blankz(r.get(3))
    }

    fn skip_line(&mut self) {
        match self.b[self.i..].iter().position(|&c| c == b'\n') {
            Some(p) => self.i += p + 1,
            None => self.i = self.b.len(),
        }
    }

    /// What may follow a node on its line: spaces, then a comment or the line's end. Moves to
    /// the next line with content.
    fn rest_of_line(&mut self) -> R<()> {
        self.end_of_line()?;
        self.next_line()
    }

    /// Spaces, then a comment or the line's end; moves to the next line.
    fn end_of_line(&mut self) -> R<()> {
        let start = self.i;
        while self.b.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
        match self.b.get(self.i) {
            None => {}
            Some(b'\n') => self.i += 1,
            Some(b'#') if self.i > start => self.skip_line(),
            _ => return Err(Fallback),
        }
        Ok(())
    }

    /// A block collection opens at column `col` (its first indicator or key at the
    /// position): one more level when the column is past the current one, refused past
    /// [`MAX_INDENTS`] as go-yaml v3 refuses it (`yaml_parser_roll_indent`: "exceeded max
    /// depth of 10000"). Returns the indentation to restore when the collection ends.
    fn enter(&mut self, col: usize) -> R<Option<isize>> {
        let col = col as isize;
        if col <= self.indent {
            return Ok(None);
        }
        self.indents += 1;
        if self.indents > MAX_INDENTS {
            // The column in the message too: a resource file's diagnostic shows the line alone.
            let line_start = self.b[..self.i]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |p| p + 1);
            let column = self.s[line_start..self.i].chars().count() + 1;
            return Err(Stop::Refuse(ParseError {
                message: format!(
                    "{} (the level past it opens at column {column})",
                    super::limits::indents_message()
                ),
                offset: Some(self.i),
            }));
        }
        Ok(Some(std::mem::replace(&mut self.indent, col)))
    }

    fn leave(&mut self, saved: Option<isize>) {
        if let Some(indent) = saved {
            self.indent = indent;
            self.indents -= 1;
        }
    }

    /// A node that starts a line, at column `col`: a block sequence or mapping.
    fn block_node(&mut self, col: usize, ctx: Ctx) -> R<Node> {
        if self.b[self.i] == b'-' && is_blankz(self.peek(1)) {
            return self.block_seq(col);
        }
        if self.key_ahead()? {
            return self.block_map(col, ctx);
        }
        Err(Fallback)
    }

    fn block_seq(&mut self, col: usize) -> R<Node> {
        let saved = self.enter(col)?;
        let start = self.items.len();
        loop {
            self.i += 1; // the `-`
            let item = self.value(col, Ctx::Other, None)?;
            self.items.push(item);
            match self.cur {
                Line::At(c) if c == col && self.b[self.i] == b'-' && is_blankz(self.peek(1)) => {}
                Line::At(c) if c > col => return Err(Fallback),
                _ => break,
            }
        }
        self.leave(saved);
        Ok(Node::Seq(self.items.drain(start..).collect()))
    }

    fn block_map(&mut self, col: usize, ctx: Ctx) -> R<Node> {
        let saved = self.enter(col)?;
        let mut map = self.open_entries();
        loop {
            let (key, key_end) = self.key()?;
            let child = if self.yaml11 {
                Ctx::Other
            } else {
                ctx.child(&key)
            };
            self.styled = false;
            let mut value = self.value(col, child, Some(key_end))?;
            if self.mark_empty_nulls && value.is_null() && nothing_after_key(self.s, key_end) {
                value = Node::Str(EMPTY_NULL.into());
            }
            let styled = self.styled && value.is_scalar();
            self.add_entry(&mut map, key, value, styled)?;
            match self.cur {
                Line::At(c) if c == col => {}
                Line::At(c) if c > col => return Err(Fallback),
                _ => break,
            }
        }
        self.leave(saved);
        Ok(Node::Map(self.close_entries(map)))
    }

    fn open_entries(&self) -> Entries {
        Entries {
            start: self.entries.len(),
            large: None,
        }
    }

    /// Adds an entry to a mapping being read; a repeated key gives up (go-yaml refuses it,
    /// the reference reader says so).
    /// `styled`: the value's [`Map::styled`].
    fn add_entry(&mut self, map: &mut Entries, key: String, value: Node, styled: bool) -> R<()> {
        if let Some(large) = &mut map.large {
            if large.contains_key(&key) {
                return Err(Fallback);
            }
            large.insert_styled(key, value, ScalarStyle::quoted_if(styled));
            return Ok(());
        }
        let own = &self.entries[map.start..];
        if own
            .iter()
            .any(|(k, _, _)| k.len() == key.len() && *k == key)
        {
            return Err(Fallback);
        }
        let count = own.len() + 1;
        self.entries.push((key, value, styled));
        if count > SCAN_ENTRIES {
            let mut large = Map::with_capacity(count);
            for (k, v, styled) in self.entries.drain(map.start..) {
                large.insert_styled(k, v, ScalarStyle::quoted_if(styled));
            }
            map.large = Some(large);
        }
        Ok(())
    }

    /// The map of a mapping that has been read.
    fn close_entries(&mut self, map: Entries) -> Map {
        match map.large {
            Some(mut large) => {
                large.shrink_to_fit();
                large
            }
            None => Map::from_unique(self.entries.drain(map.start..)),
        }
    }

    /// Whether a mapping key (a one-line scalar and `:` with a blank after it) starts here.
    fn key_ahead(&self) -> R<bool> {
        let r = &self.b[self.i..];
        let end = match r[0] {
            b'"' | b'\'' => {
                let q = r[0];
                match r[1..].iter().position(|&c| c == q || c == b'\n') {
                    Some(p) if r[1 + p] == q => p + 2,
                    _ => return Ok(false),
                }
            }
            _ => {
                let mut k = 0;
                loop {
                    k = super::scan::plain_stop(r, k);
                    match r.get(k) {
                        None | Some(b'\n') => return Ok(false),
                        Some(b':') if is_blankz(r.get(k + 1)) => return Ok(true),
                        Some(b'#') if k > 0 && r[k - 1] == b' ' => return Ok(false),
                        _ => k += 1,
                    }
                }
            }
        };
        let mut k = end;
        while r.get(k) == Some(&b' ') {
            k += 1;
        }
        Ok(r.get(k) == Some(&b':') && is_blankz(r.get(k + 1)))
    }

    /// Where the quoted key opening at `start` closes; escapes, `''` and line breaks in keys
    /// fall back.
    fn quoted_key_end(&self, start: usize) -> R<usize> {
        let q = self.b[start];
        let len = self.b[start + 1..]
            .iter()
            .position(|&c| c == q || c == b'\n' || c == b'\\')
            .ok_or(Fallback)?;
        let close = start + 1 + len;
        if self.b[close] != q || self.b.get(close + 1) == Some(&q) {
            return Err(Fallback);
        }
        Ok(close)
    }

    /// Reads a mapping key and its `:`; returns the key and where its text ends (after a
    /// closing quote), as the reference reader records it.
    fn key(&mut self) -> R<(String, usize)> {
        let start = self.i;
        let (key, end) = match self.b[start] {
            b'"' | b'\'' => {
                let close = self.quoted_key_end(start)?;
                // A quoted `"<<"`: kyaml drops it (the reference reader, `parse.rs`).
                if &self.s[start + 1..close] == "<<" {
                    return Err(Fallback);
                }
                (self.s[start + 1..close].to_string(), close + 1)
            }
            _ => {
                let (end, colon) = self.plain_run(start)?;
                if !colon {
                    return Err(Fallback);
                }
                let text = &self.s[start..end];
                if text == "<<" || !key_is_string(text, self.yaml11) {
                    return Err(Fallback);
                }
                (text.to_string(), end)
            }
        };
        if end - start > MAX_KEY {
            return Err(Fallback);
        }
        self.i = end;
        while self.b.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
        if self.b.get(self.i) != Some(&b':') || !is_blankz(self.peek(1)) {
            return Err(Fallback);
        }
        self.i += 1;
        Ok((key, end))
    }

    /// The node after a `:` (`key_end` given) or a `-` of a collection at column `col`, on
    /// the indicator's line or on the lines below. Leaves `cur` on the next line with content.
    fn value(&mut self, col: usize, ctx: Ctx, key_end: Option<usize>) -> R<Node> {
        // After a `-` (no `key_end`), the `-` is at column `col`, just before the position:
        // the column of what follows on its line is counted from there (scanning back to the
        // line's start would take time quadratic in `- - - x` nesting).
        let dash = self.i.wrapping_sub(1);
        let column = |at: usize| col + (at - dash);
        while self.b.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
        let here = self.i;
        let Some(&c) = self.b.get(here) else {
            self.cur = Line::Eof;
            return Ok(Node::Null);
        };
        match c {
            b'\n' | b'#' => {
                if c == b'#' {
                    self.skip_line();
                } else {
                    self.i += 1;
                }
                self.next_line()?;
                match self.cur {
                    Line::At(c2) if c2 > col => {
                        let b0 = self.b[self.i];
                        if b0 == b'-' && is_blankz(self.peek(1)) || self.key_ahead()? {
                            self.block_node(c2, ctx)
                        } else {
                            // A scalar on a line of its own.
                            self.scalar(col, ctx, false)
                        }
                    }
                    Line::At(c2)
                        if c2 == col
                            && key_end.is_some()
                            && self.b[self.i] == b'-'
                            && is_blankz(self.peek(1)) =>
                    {
                        self.block_seq(c2)
                    }
                    _ => Ok(Node::Null),
                }
            }
            b'\t' => Err(Fallback),
            // A folded value is reread as kustomize prints and reads it back, and keeps the
            // text it was written as where kustomize reads that (`folded.rs`, and the folded
            // places of `parse.rs`): the reference reader does both.
            b'>' => Err(Fallback),
            // A block whose value starts with a tab may fail (the reference reader decides).
            b'|' => match self.block_scalar(col)? {
                v if v.starts_with('\t') => Err(Fallback),
                v => {
                    self.styled = true;
                    Ok(Node::Str(v))
                }
            },
            b'-' if is_blankz(self.peek(1)) => {
                if key_end.is_some() {
                    return Err(Fallback);
                }
                self.block_seq(column(here))
            }
            _ => {
                if key_end.is_none() && !matches!(c, b'[' | b'{') && self.key_ahead()? {
                    // `- key: value`: a mapping whose keys sit at this column.
                    return self.block_map(column(here), Ctx::Other);
                }
                self.scalar(col, ctx, key_end.is_some())
            }
        }
    }

    /// A flow collection (`[` or `{` at the position) in the JSON-like form manifests use:
    /// quoted and plain scalars and nested collections, separated by commas, `key: value`
    /// pairs in mappings, possibly over several lines, a trailing comma before the closing
    /// bracket. It gives up on everything else: implicit pairs in sequences (`[a: b]`), `?`,
    /// keys without values, empty entries (`[a, , b]`), comments, multi-line scalars, plain scalars with `:`, `#`, `?` or brackets inside, and
    /// non-string scalars in the maps whose source text is kept ([`Ctx::SpellValue`]).
    /// Deeper than [`MAX_FLOW_DEPTH`] cannot happen: such a text is the reference reader's
    /// (`flow_heavy`).
    fn flow_collection(&mut self, ctx: Ctx) -> R<Node> {
        let open = self.b[self.i];
        self.flow += 1;
        if self.flow > MAX_FLOW_DEPTH {
            return Err(Fallback);
        }
        self.i += 1;
        self.flow_space()?;
        let close = if open == b'[' { b']' } else { b'}' };
        let node = if open == b'[' {
            let start = self.items.len();
            if self.b.get(self.i) != Some(&close) {
                loop {
                    let item = self.flow_node(Ctx::Other)?;
                    self.items.push(item);
                    if self.flow_separator(close)? {
                        break;
                    }
                }
            }
            Node::Seq(self.items.drain(start..).collect())
        } else {
            let mut map = self.open_entries();
            if self.b.get(self.i) != Some(&close) {
                loop {
                    let key = self.flow_key()?;
                    self.flow_space()?;
                    if matches!(self.b.get(self.i), Some(b',' | b'}' | b']') | None) {
                        return Err(Fallback);
                    }
                    let child = if self.yaml11 {
                        Ctx::Other
                    } else {
                        ctx.child(&key)
                    };
                    self.styled = false;
                    let value = self.flow_node(child)?;
                    let styled = self.styled && value.is_scalar();
                    self.add_entry(&mut map, key, value, styled)?;
                    if self.flow_separator(close)? {
                        break;
                    }
                }
            }
            Node::Map(self.close_entries(map))
        };
        self.i += 1; // the closing bracket
        self.flow -= 1;
        Ok(node)
    }

    /// After an entry of a flow collection: `,` and the next entry (`false`), or the closing
    /// bracket (`true`, the position on it), also after a trailing comma (`[a, ]`, `{k: v, }`:
    /// YAML's flow collections end with an optional `,`, and go-yaml reads them so,
    /// `yaml_parser_parse_flow_sequence_entry` and `…_flow_mapping_key` in `parserc.go`).
    fn flow_separator(&mut self, close: u8) -> R<bool> {
        self.flow_space()?;
        match self.b.get(self.i) {
            Some(b',') => {
                self.i += 1;
                self.flow_space()?;
                match self.b.get(self.i) {
                    Some(&c) if c == close => Ok(true),
                    // An empty entry, or the other bracket: the reference reader's.
                    Some(b',' | b']' | b'}') | None => Err(Fallback),
                    _ => Ok(false),
                }
            }
            Some(&c) if c == close => Ok(true),
            _ => Err(Fallback),
        }
    }

    /// Spaces and line breaks inside a flow collection; a tab, a comment or a document marker
    /// gives up.
    fn flow_space(&mut self) -> R<()> {
        loop {
            match self.b.get(self.i) {
                Some(b' ') => self.i += 1,
                Some(b'\n') => {
                    self.i += 1;
                    if self.at_marker() {
                        return Err(Fallback);
                    }
                }
                Some(b'\t' | b'#') => return Err(Fallback),
                _ => return Ok(()),
            }
        }
    }

    /// A key of a flow mapping and its `:`: a quoted key without escapes, or a plain one
    /// followed by `: `, on one line.
    fn flow_key(&mut self) -> R<String> {
        let start = self.i;
        let key = match self.b.get(start) {
            Some(b'"' | b'\'') => {
                let close = self.quoted_key_end(start)?;
                if &self.s[start + 1..close] == "<<" {
                    return Err(Fallback);
                }
                self.i = close + 1;
                while self.b.get(self.i) == Some(&b' ') {
                    self.i += 1;
                }
                // A quoted key may touch its value (`{"a":1}`, JSON).
                if self.b.get(self.i) != Some(&b':') {
                    return Err(Fallback);
                }
                self.s[start + 1..close].to_string()
            }
            Some(_) => {
                let (end, colon) = self.flow_plain_run(start)?;
                let text = &self.s[start..end];
                if !colon || text == "<<" || !key_is_string(text, self.yaml11) {
                    return Err(Fallback);
                }
                self.i = end;
                while self.b[self.i] != b':' {
                    self.i += 1;
                }
                text.to_string()
            }
            None => return Err(Fallback),
        };
        if self.i - start > MAX_KEY {
            return Err(Fallback);
        }
        self.i += 1; // the `:`
        Ok(key)
    }

    /// A scalar or collection inside a flow collection.
    fn flow_node(&mut self, ctx: Ctx) -> R<Node> {
        let start = self.i;
        match self.b.get(start) {
            Some(b'[' | b'{') => self.flow_collection(ctx),
            Some(b'"') => {
                self.styled = true;
                Ok(Node::Str(self.double_quoted()?))
            }
            Some(b'\'') => {
                self.styled = true;
                Ok(Node::Str(self.single_quoted()?))
            }
            Some(_) => {
                let (end, colon) = self.flow_plain_run(start)?;
                if colon {
                    return Err(Fallback);
                }
                self.i = end;
                let node = self.plain(start, end, ctx, false)?;
                if (ctx.keeps_text() && !matches!(node, Node::Str(_)))
                    || keeps_own_text(&node, &self.s[start..end])
                {
                    return Err(Fallback);
                }
                Ok(node)
            }
            None => Err(Fallback),
        }
    }

    /// A plain scalar inside a flow collection from `start`: where its text ends (trailing
    /// spaces left out), and whether `: ` follows it (it is a key). It ends at `,`, `]`, `}`,
    /// the line's end or `: `; a `:` before anything else, `#`, `?`, `[`, `{` or a tab inside
    /// gives up (the readers' rules for them differ between libyaml versions).
    fn flow_plain_run(&self, start: usize) -> R<(usize, bool)> {
        if !plain_start(self.b[start], self.b.get(start + 1)) {
            return Err(Fallback);
        }
        let mut k = start;
        let colon = loop {
            match self.b.get(k) {
                None => return Err(Fallback),
                Some(b'\n' | b',' | b']' | b'}') => break false,
                Some(b':') if is_blankz(self.b.get(k + 1)) => break true,
                Some(b':' | b'#' | b'?' | b'[' | b'{' | b'\t') => return Err(Fallback),
                _ => k += 1,
            }
        };
        while self.b[k - 1] == b' ' {
            k -= 1;
        }
        Ok((k, colon))
    }

    /// A one-line plain or quoted scalar, or a flow collection, in a collection at column
    /// `col`.
    /// `on_key_line`: the value of a mapping key written on the key's line.
    fn scalar(&mut self, col: usize, ctx: Ctx, on_key_line: bool) -> R<Node> {
        let start = self.i;
        let node = match self.b[start] {
            b'"' => {
                self.styled = true;
                Node::Str(self.double_quoted()?)
            }
            b'\'' => {
                self.styled = true;
                Node::Str(self.single_quoted()?)
            }
            b'{' | b'[' => self.flow_collection(ctx)?,
            _ => {
                let (end, colon) = self.plain_run(start)?;
                if colon {
                    return Err(Fallback);
                }
                self.i = end;
                self.plain(start, end, ctx, on_key_line)?
            }
        };
        self.rest_of_line()?;
        // A more-indented line continues a plain scalar (or is an error): the reference
        // reader reads it.
        if matches!(self.cur, Line::At(c) if c > col) {
            return Err(Fallback);
        }
        Ok(node)
    }

    /// A one-line plain scalar in block context from `start`: where its text ends (trailing
    /// spaces left out), and whether `: ` follows it (it is a key). It ends at the line's end,
    /// at ` #`, or at a `:` followed by a blank; a tab in it falls back.
    fn plain_run(&self, start: usize) -> R<(usize, bool)> {
        if !plain_start(self.b[start], self.b.get(start + 1)) {
            return Err(Fallback);
        }
        let mut k = start;
        let colon = loop {
            k = super::scan::plain_stop(self.b, k);
            match self.b.get(k) {
                None | Some(b'\n') => break false,
                Some(b'\t') => return Err(Fallback),
                Some(b':') if is_blankz(self.b.get(k + 1)) => break true,
                Some(b'#') if self.b[k - 1] == b' ' => break false,
                _ => k += 1,
            }
        };
        while self.b[k - 1] == b' ' {
            k -= 1;
        }
        Ok((k, colon))
    }

    /// A plain scalar, resolved as the reference reader resolves it: first serde_yaml's own
    /// resolution (`serde_yaml::de::visit_untagged_scalar`), then ply's go-yaml v3 rules for
    /// what it leaves as a string (`parse.rs`, `NodeVisitor::visit_borrowed_str`), and the
    /// source text kept where kustomize reads it back ([`Node::Spelled`]).
    fn plain(&self, start: usize, end: usize, ctx: Ctx, on_key_line: bool) -> R<Node> {
        let v = &self.s[start..end];
        if is_plain_string(v, self.yaml11) {
            return Ok(Node::Str(v.to_string()));
        }
        // A value of a `data`, `labels` or `annotations` map that is not a plain string, on a
        // later line than its key: whether the reference reader keeps its source text
        // depends on how serde_yaml hands the scalar over (a float it prints otherwise, such
        // as `444444444440.05`, was kept by one reader and not the other: found by the
        // `fastread` fuzz target). Rare in manifests; left to the reference reader.
        if ctx.keeps_text() && !on_key_line {
            return Err(Fallback);
        }
        if let Some(n) = serde_resolve(v) {
            let n = as_go_yaml_reads(n, v);
            if !ctx.keeps_text() {
                // A number or boolean written otherwise than ply prints it keeps its text
                // (`reading::keeps_own_text`), as the reference reader keeps it.
                if keeps_own_text(&n, v) {
                    if !on_key_line {
                        return Err(Fallback);
                    }
                    return Ok(spelled(n, Some(v), false, self.reread));
                }
                return Ok(n);
            }
            return Ok(spelled(n, on_key_line.then_some(v), false, self.reread));
        }
        // What serde_yaml lends out as a string: ply's rules apply to plain untagged text.
        if tag_before(&self.s[..start]).is_some() {
            return Err(Fallback);
        }
        if self.yaml11
            && let Some(b) = yaml11_bool(v)
        {
            return Ok(Node::Bool(b));
        }
        if v.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
            && let Some(n) =
                super::resolve::resolve_plain_number_or_time(v, self.flow > 0, self.yaml11)
        {
            if !ctx.keeps_text() && !keeps_own_text(&n, v) {
                return Ok(n);
            }
            return Ok(spelled(n, Some(v), true, self.reread));
        }
        Ok(Node::Str(v.to_string()))
    }

    /// A one-line double-quoted scalar with the common escapes.
    fn double_quoted(&mut self) -> R<String> {
        let mut i = self.i + 1;
        let mut out = String::new();
        let mut run = i;
        loop {
            match self.b.get(i) {
                None | Some(b'\n') => return Err(Fallback),
                Some(b'"') => break,
                Some(b'\\') => {
                    out.push_str(&self.s[run..i]);
                    let e = *self.b.get(i + 1).ok_or(Fallback)?;
                    i += 2;
                    let simple = match e {
                        b'0' => '\0',
                        b'a' => '\x07',
                        b'b' => '\x08',
                        b't' | b'\t' => '\t',
                        b'n' => '\n',
                        b'v' => '\x0b',
                        b'f' => '\x0c',
                        b'r' => '\r',
                        b'e' => '\x1b',
                        b' ' => ' ',
                        b'"' => '"',
                        b'\\' => '\\',
                        b'x' | b'u' | b'U' => {
                            let n = match e {
                                b'x' => 2,
                                b'u' => 4,
                                _ => 8,
                            };
                            let hex = self.s.get(i..i + n).ok_or(Fallback)?;
                            if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                                return Err(Fallback);
                            }
                            let code = u32::from_str_radix(hex, 16).map_err(|_| Fallback)?;
                            i += n;
                            char::from_u32(code).ok_or(Fallback)?
                        }
                        _ => return Err(Fallback),
                    };
                    out.push(simple);
                    run = i;
                }
                Some(_) => i += 1,
            }
        }
        out.push_str(&self.s[run..i]);
        self.i = i + 1;
        out.shrink_to_fit();
        Ok(out)
    }

    fn single_quoted(&mut self) -> R<String> {
        let mut i = self.i + 1;
        let mut out = String::new();
        let mut run = i;
        loop {
            match self.b.get(i) {
                None | Some(b'\n') => return Err(Fallback),
                Some(b'\'') if self.b.get(i + 1) == Some(&b'\'') => {
                    out.push_str(&self.s[run..=i]);
                    i += 2;
                    run = i;
                }
                Some(b'\'') => break,
                Some(_) => i += 1,
            }
        }
        out.push_str(&self.s[run..i]);
        self.i = i + 1;
        out.shrink_to_fit();
        Ok(out)
    }

    /// A literal (`|`) block scalar in a collection at column `col`, read as libyaml reads it
    /// (`yaml_parser_scan_block_scalar` and `_breaks` in `scanner.c`). Folded ones (`>`) are
    /// the reference reader's.
    fn block_scalar(&mut self, col: usize) -> R<String> {
        self.i += 1;
        // 0 clip, 1 keep, -1 strip.
        let chomp: i8 = match self.b.get(self.i) {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => 0,
        };
        if chomp != 0 {
            self.i += 1;
        }
        if self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            return Err(Fallback);
        }
        while self.b.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
        match self.b.get(self.i) {
            Some(b'\n') => self.i += 1,
            Some(b'#') => {
                self.skip_line();
                if self.b.get(self.i - 1) != Some(&b'\n') {
                    return Err(Fallback);
                }
            }
            _ => return Err(Fallback),
        }
        let mut out = String::new();
        let mut indent = 0usize;
        let mut trailing = 0usize;
        let mut column = self.breaks(&mut indent, col, &mut trailing)?;
        let mut leading_break = false;
        while column == indent && self.i < self.b.len() {
            if leading_break {
                out.push('\n');
            }
            for _ in 0..trailing {
                out.push('\n');
            }
            trailing = 0;
            let line_end = self.b[self.i..]
                .iter()
                .position(|&c| c == b'\n')
                .ok_or(Fallback)?;
            out.push_str(&self.s[self.i..self.i + line_end]);
            self.i += line_end + 1;
            leading_break = true;
            column = self.breaks(&mut indent, col, &mut trailing)?;
        }
        if chomp >= 0 && leading_break {
            out.push('\n');
        }
        if chomp == 1 {
            for _ in 0..trailing {
                out.push('\n');
            }
        }
        self.line_at(column)?;
        out.shrink_to_fit();
        Ok(out)
    }

    /// Empty lines and indentation before a block scalar's next line; sets the indentation
    /// when still unknown. Returns the column reached.
    fn breaks(&mut self, indent: &mut usize, col: usize, trailing: &mut usize) -> R<usize> {
        let mut max = 0;
        loop {
            let mut column = 0;
            while (*indent == 0 || column < *indent) && self.b.get(self.i) == Some(&b' ') {
                self.i += 1;
                column += 1;
            }
            max = max.max(column);
            if (*indent == 0 || column < *indent) && self.b.get(self.i) == Some(&b'\t') {
                return Err(Fallback);
            }
            if self.b.get(self.i) != Some(&b'\n') {
                if *indent == 0 {
                    *indent = max.max(col + 1);
                }
                return Ok(column);
            }
            self.i += 1;
            *trailing += 1;
        }
    }
}

/// Whether a plain scalar may start with `c` (followed by `next`) in block context.
fn plain_start(c: u8, next: Option<&u8>) -> bool {
    match c {
        b'-' | b'?' | b':' => !is_blankz(next),
        b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
        | b'"' | b'%' | b'@' | b'`' | b' ' | b'\t' | b'\n' => false,
        _ => true,
    }
}

/// Whether a plain scalar `v` is certainly a string: its first character cannot start a null,
/// boolean or number.
fn is_plain_string(v: &str, yaml11: bool) -> bool {
    match v.as_bytes().first() {
        None => false,
        Some(c) => match c {
            b'0'..=b'9' | b'+' | b'-' | b'.' | b'~' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' => {
                false
            }
            b'y' | b'Y' | b'o' | b'O' => !yaml11,
            _ => true,
        },
    }
}

/// Whether a plain key reads as a string (other keys fall back). A timestamp falls back too:
/// read as a resource it is refused (`parse.rs`, `KeyVisitor::typed`).
fn key_is_string(v: &str, yaml11: bool) -> bool {
    if is_plain_string(v, yaml11) {
        return true;
    }
    if serde_resolve(v).is_some() || (yaml11 && yaml11_bool(v).is_some()) {
        return false;
    }
    if super::resolve::is_timestamp(v) {
        return false;
    }
    !(v.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
        && super::resolve::resolve_number(v).is_some())
}

/// A resolved scalar of a label, annotation or data map, with its source text kept as the
/// reference reader keeps it (`parse.rs`, [`super::reading::spell`]). `text`: the scalar's text
/// when the reference reader finds it (written on the key's line, or resolved by ply's own
/// rules: `written`).
fn spelled(value: Node, text: Option<&str>, written: bool, reread: Reread) -> Node {
    match text {
        Some(text) => spell(value, text, written, reread),
        None => value,
    }
}
