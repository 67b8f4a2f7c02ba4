//! [`Node`] → YAML text, byte-compatible with what `kustomize build` prints: keys sorted, two
//! spaces of indentation, sequences not indented under their key, go-yaml's choice of plain,
//! single-quoted, double-quoted and literal styles, and its folding of long lines at 80 columns.
//! The only writer of YAML in ply.
//!
//! kustomize prints through go-yaml v3 (`yaml_emitter_analyze_scalar`,
//! `yaml_emitter_select_scalar_style` and the `write_*_scalar` functions of `emitterc.go`), after
//! a round trip through `sigs.k8s.io/yaml` (go-yaml v2), which is why strings that YAML 1.1
//! would read as another type (`"yes"`, `"on"`, `"0777"`, `"1:20"`) are double-quoted and floats
//! print in Go's shortest `%g` form (`1.0` → `1`, `1e-7` → `1e-07`).

use std::fmt::Write as _;

use super::Node;

/// go-yaml's `best_width`: plain and quoted scalars fold at a space past this column.
const BEST_WIDTH: usize = 80;
/// go-yaml's `best_indent`.
const INDENT: usize = 2;

/// How to print.
#[derive(Clone, Copy, Debug)]
pub struct EmitOptions {
    /// Sort map keys bytewise, as kustomize and `kubectl -o yaml` print them. When false, keys
    /// keep their document order.
    pub sort_keys: bool,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions { sort_keys: true }
    }
}

/// Writes one document (no `---` marker) into `out`.
pub fn emit_document(out: &mut String, node: &Node, opts: EmitOptions) {
    let mut e = Emitter { out, opts };
    match node {
        Node::Map(m) if !m.is_empty() => e.map(node, 0, false),
        Node::Seq(s) if !s.is_empty() => e.seq(node, 0, false),
        scalar => {
            e.scalar_value(scalar, 0, 0);
            e.out.push('\n');
        }
    }
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
}

impl Emitter<'_> {
    fn pad(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    fn column(&self) -> usize {
        let line_start = self.out.rfind('\n').map_or(0, |i| i + 1);
        self.out[line_start..].chars().count()
    }

    /// A non-empty map whose keys start at column `indent`; when `inline`, the first key
    /// continues the current line (after `- `).
    fn map(&mut self, node: &Node, indent: usize, inline: bool) {
        let Node::Map(m) = node else { return };
        let mut entries: Vec<(&String, &Node)> = m.iter().collect();
        if self.opts.sort_keys {
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        }
        for (i, (k, v)) in entries.into_iter().enumerate() {
            if i > 0 || !inline {
                self.pad(indent);
            }
            self.key(k);
            self.out.push(':');
            match v {
                Node::Map(m) if !m.is_empty() => {
                    self.out.push('\n');
                    self.map(v, indent + INDENT, false);
                }
                Node::Seq(s) if !s.is_empty() => {
                    self.out.push('\n');
                    self.seq(v, indent, false);
                }
                _ => {
                    self.out.push(' ');
                    self.scalar_value(v, indent + INDENT, indent + INDENT);
                    self.out.push('\n');
                }
            }
        }
    }

    /// A non-empty sequence whose dashes stand at column `indent`.
    fn seq(&mut self, node: &Node, indent: usize, inline: bool) {
        let Node::Seq(items) = node else { return };
        for (i, item) in items.iter().enumerate() {
            if i > 0 || !inline {
                self.pad(indent);
            }
            self.out.push_str("- ");
            match item {
                Node::Map(m) if !m.is_empty() => self.map(item, indent + INDENT, true),
                Node::Seq(s) if !s.is_empty() => self.seq(item, indent + INDENT, true),
                _ => {
                    self.scalar_value(item, indent + INDENT, indent + INDENT);
                    self.out.push('\n');
                }
            }
        }
    }

    fn key(&mut self, k: &str) {
        let style = choose_style(k, true);
        self.write_scalar(k, style, 0, false);
    }

    /// A scalar (or empty collection) in value position. `fold_indent` is where folded
    /// continuation lines start; `block_indent` where literal block lines start.
    fn scalar_value(&mut self, v: &Node, fold_indent: usize, block_indent: usize) {
        match v {
            Node::Null => self.out.push_str("null"),
            Node::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Node::Int(i) => {
                let _ = write!(self.out, "{i}");
            }
            Node::Float(f) => self.out.push_str(&format_float(*f)),
            Node::Str(s) => {
                let style = choose_style(s, false);
                if style == Style::Literal {
                    self.literal(s, block_indent);
                } else {
                    self.write_scalar(s, style, fold_indent, true);
                }
            }
            Node::Seq(_) => self.out.push_str("[]"),
            Node::Map(_) => self.out.push_str("{}"),
        }
    }

    fn write_scalar(&mut self, s: &str, style: Style, indent: usize, allow_breaks: bool) {
        match style {
            Style::Plain => self.plain(s, indent, allow_breaks),
            Style::Single => self.single(s, indent, allow_breaks),
            Style::Double | Style::Literal => self.double(s, indent, allow_breaks),
        }
    }

    fn write_indent(&mut self, indent: usize) {
        self.out.push('\n');
        self.pad(indent);
    }

    /// go-yaml `yaml_emitter_write_plain_scalar`.
    fn plain(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        let mut column = self.column();
        let mut spaces = false;
        let chars: Vec<char> = s.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks && !spaces && column > BEST_WIDTH && !next_space {
                    self.write_indent(indent);
                    column = indent;
                } else {
                    self.out.push(' ');
                    column += 1;
                }
                spaces = true;
            } else {
                self.out.push(c);
                column += 1;
                spaces = false;
            }
        }
    }

    /// go-yaml `yaml_emitter_write_single_quoted_scalar` (never given line breaks: strings
    /// with them are literal or double-quoted).
    fn single(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.out.push('\'');
        let mut column = self.column();
        let mut spaces = false;
        let chars: Vec<char> = s.chars().collect();
        let n = chars.len();
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && column > BEST_WIDTH
                    && i != 0
                    && i != n - 1
                    && !next_space
                {
                    self.write_indent(indent);
                    column = indent;
                } else {
                    self.out.push(' ');
                    column += 1;
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.out.push('\'');
                    column += 1;
                }
                self.out.push(c);
                column += 1;
                spaces = false;
            }
        }
        self.out.push('\'');
    }

    /// go-yaml `yaml_emitter_write_double_quoted_scalar`.
    fn double(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.out.push('"');
        let mut column = self.column();
        let mut spaces = false;
        let chars: Vec<char> = s.chars().collect();
        let n = chars.len();
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                let esc = escape(c);
                column += esc.chars().count();
                self.out.push_str(&esc);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && column > BEST_WIDTH && i != 0 && i != n - 1 {
                    self.write_indent(indent);
                    column = indent;
                    if chars.get(i + 1) == Some(&' ') {
                        self.out.push('\\');
                        column += 1;
                    }
                } else {
                    self.out.push(' ');
                    column += 1;
                }
                spaces = true;
            } else {
                self.out.push(c);
                column += 1;
                spaces = false;
            }
        }
        self.out.push('"');
    }

    /// go-yaml `yaml_emitter_write_literal_scalar` with its block scalar hints.
    fn literal(&mut self, s: &str, indent: usize) {
        self.out.push('|');
        let first = s.chars().next();
        if matches!(first, Some(' ')) || first.is_some_and(is_break) {
            let _ = write!(self.out, "{INDENT}");
        }
        let mut rev = s.chars().rev();
        match (rev.next(), rev.next()) {
            (Some(last), _) if !is_break(last) => self.out.push('-'),
            (Some(_), None) => self.out.push('+'),
            (Some(_), Some(prev)) if is_break(prev) => self.out.push('+'),
            (None, _) => self.out.push('-'),
            _ => {}
        }
        self.out.push('\n');
        let mut at_line_start = true;
        for c in s.chars() {
            if is_break(c) {
                self.out.push('\n');
                at_line_start = true;
            } else {
                if at_line_start {
                    self.pad(indent);
                    at_line_start = false;
                }
                self.out.push(c);
            }
        }
        // The caller writes the line break that ends the value; a string ending in a break
        // has already written it.
        if s.ends_with(is_break) {
            self.out.pop();
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

/// Picks the style go-yaml would print a string in: double quotes when the plain form would
/// read back as another type, a literal block for multi-line text, and otherwise whatever
/// `yaml_emitter_analyze_scalar` allows.
fn choose_style(s: &str, simple_key: bool) -> Style {
    if s.is_empty() || resolves_to_non_string(s) {
        return Style::Double;
    }
    let a = analyze(s);
    let mut style = if s.contains('\n') {
        Style::Literal
    } else {
        Style::Plain
    };
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::Double;
    }
    if style == Style::Plain && !a.block_plain_allowed {
        style = Style::Single;
    }
    if style == Style::Single && !a.single_quoted_allowed {
        style = Style::Double;
    }
    style
}

struct Analysis {
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// go-yaml `yaml_emitter_analyze_scalar`, block context, unicode output enabled.
fn analyze(s: &str) -> Analysis {
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = false;
    let mut flow_indicators = false;
    let mut line_breaks = false;
    let mut special = false;
    let mut tabs = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut previous_space = false;
    let mut previous_break = false;

    if s.starts_with("---") || s.starts_with("...") {
        block_indicators = true;
        flow_indicators = true;
    }
    let mut preceded_by_ws = true;
    let n = chars.len();
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_ws = i + 1 >= n || is_blank(chars[i + 1]);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                '?' | ':' => {
                    flow_indicators = true;
                    if followed_by_ws {
                        block_indicators = true;
                    }
                }
                '-' if followed_by_ws => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_indicators = true,
                ':' => {
                    flow_indicators = true;
                    if followed_by_ws {
                        block_indicators = true;
                    }
                }
                '#' if preceded_by_ws => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        }
        if c == '\t' {
            tabs = true;
        } else if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i + 1 == n {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + 1 == n {
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
        preceded_by_ws = is_blank(c) || is_break(c);
    }
    let _ = flow_indicators;

    let mut a = Analysis {
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
    if space_break || tabs || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_allowed = false;
    }
    if line_breaks {
        a.block_plain_allowed = false;
    }
    if block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_printable(c: char) -> bool {
    matches!(c,
        '\n' | '\u{85}' | '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
        && c != '\u{FEFF}'
}

fn escape(c: char) -> String {
    match c {
        '\0' => "\\0".into(),
        '\u{7}' => "\\a".into(),
        '\u{8}' => "\\b".into(),
        '\t' => "\\t".into(),
        '\n' => "\\n".into(),
        '\u{B}' => "\\v".into(),
        '\u{C}' => "\\f".into(),
        '\r' => "\\r".into(),
        '\u{1B}' => "\\e".into(),
        '"' => "\\\"".into(),
        '\\' => "\\\\".into(),
        '\u{85}' => "\\N".into(),
        '\u{A0}' => "\\_".into(),
        '\u{2028}' => "\\L".into(),
        '\u{2029}' => "\\P".into(),
        c if (c as u32) <= 0xFF => format!("\\x{:02X}", c as u32),
        c if (c as u32) <= 0xFFFF => format!("\\u{:04X}", c as u32),
        c => format!("\\U{:08X}", c as u32),
    }
}

/// Whether a plain scalar with this text would read back as something other than a string
/// under YAML 1.1 (go-yaml v2, which kustomize's JSON round trip goes through) or YAML 1.2
/// (go-yaml v3, which prints): such strings must be quoted.
fn resolves_to_non_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
        ".NaN", ".NAN", "<<",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return false;
    }
    is_yaml_int(s) || is_yaml_float(s) || is_base60(s) || is_timestamp(s)
}

fn strip_sign(s: &str) -> &str {
    s.strip_prefix(['+', '-']).unwrap_or(s)
}

fn is_yaml_int(s: &str) -> bool {
    let body = strip_sign(s);
    let all = |t: &str, f: fn(char) -> bool| !t.is_empty() && t.chars().all(|c| f(c) || c == '_');
    if let Some(b) = body.strip_prefix("0b") {
        return all(b, |c| c == '0' || c == '1');
    }
    if let Some(h) = body.strip_prefix("0x") {
        return all(h, |c| c.is_ascii_hexdigit());
    }
    if let Some(o) = body.strip_prefix("0o") {
        return all(o, |c| ('0'..='7').contains(&c));
    }
    !body.is_empty()
        && body.starts_with(|c: char| c.is_ascii_digit())
        && all(body, |c| c.is_ascii_digit())
}

fn is_yaml_float(s: &str) -> bool {
    // YAML 1.1: [-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)? ; YAML 1.2 adds exponents
    // without a dot (1e3).
    let body = strip_sign(s);
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    if let Some(e) = exp {
        let e = strip_sign(e);
        if e.is_empty() || !e.chars().all(|c| c.is_ascii_digit()) {
            return false;
        }
    }
    if mant.is_empty() {
        return false;
    }
    let has_dot = mant.contains('.');
    if !has_dot && exp.is_none() {
        return false;
    }
    let mut digits = 0;
    for c in mant.chars() {
        match c {
            '0'..='9' => digits += 1,
            '_' | '.' => {}
            _ => return false,
        }
    }
    digits > 0 || (has_dot && exp.is_none() && mant == ".")
}

fn is_base60(s: &str) -> bool {
    // [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?
    let body = strip_sign(s);
    let (int_part, _frac) = match body.find('.') {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mut parts = int_part.split(':');
    let Some(head) = parts.next() else {
        return false;
    };
    if head.is_empty()
        || !head.starts_with(|c: char| ('1'..='9').contains(&c))
        || !head.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return false;
    }
    let mut n = 0;
    for p in parts {
        n += 1;
        let ok = match p.as_bytes() {
            [d] => d.is_ascii_digit(),
            [a, b] => (b'0'..=b'5').contains(a) && b.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    n > 0
}

fn is_timestamp(s: &str) -> bool {
    // YYYY-MM-DD, optionally followed by a time: the forms go-yaml reads as timestamps.
    let b = s.as_bytes();
    if b.len() < 8 {
        return false;
    }
    let date_end = s.find(['T', 't', ' ']).unwrap_or(s.len());
    let date: Vec<&str> = s[..date_end].split('-').collect();
    date.len() == 3
        && date[0].len() == 4
        && (1..=2).contains(&date[1].len())
        && (1..=2).contains(&date[2].len())
        && date.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
}

/// Formats a float as kustomize prints it. kustomize's round trips turn a float into JSON text
/// (integral values below 1e21 without a fraction: `1234567.0` → `1234567`), read that back as
/// an int64 when it fits, and otherwise print Go's `strconv.FormatFloat(f, 'g', -1, 64)`
/// (shortest digits; exponent form when the exponent is below -4 or at least 6).
pub fn format_float(f: f64) -> String {
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
        if text.parse::<i64>().is_ok() {
            return text;
        }
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
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
    use crate::yaml::parse::parse_one;

    fn roundtrip(text: &str) -> String {
        let n = parse_one(text).unwrap();
        let mut out = String::new();
        emit_document(&mut out, &n, EmitOptions::default());
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
    fn quoting() {
        let cases = [
            ("yes", "\"yes\""),
            ("on", "\"on\""),
            ("123", "\"123\""),
            ("0777", "\"0777\""),
            ("1:20", "\"1:20\""),
            ("1e3", "\"1e3\""),
            ("2024-01-01", "\"2024-01-01\""),
            ("a: b", "'a: b'"),
            ("-a", "-a"),
            ("- a", "'- a'"),
            ("it's", "it's"),
            ("'q", "'''q'"),
            ("a\tb", "\"a\\tb\""),
            ("", "\"\""),
            ("?a", "?a"),
            ("a,b", "a,b"),
        ];
        for (input, want) in cases {
            let mut out = String::new();
            emit_document(&mut out, &Node::str(input), EmitOptions::default());
            assert_eq!(out, format!("{want}\n"), "input {input:?}");
        }
    }

    #[test]
    fn literal_blocks() {
        let doc = |s: &str| {
            let mut m = crate::yaml::Map::new();
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
    fn floats_like_go() {
        assert_eq!(format_float(1.0), "1");
        assert_eq!(format_float(1.5), "1.5");
        assert_eq!(format_float(1e30), "1e+30");
        assert_eq!(format_float(1e-7), "1e-07");
        assert_eq!(format_float(123456.0), "123456");
        assert_eq!(format_float(1234567.0), "1234567");
        assert_eq!(format_float(100000000.5), "1.000000005e+08");
        assert_eq!(format_float(123456.5), "123456.5");
        assert_eq!(format_float(1e20), "1e+20");
        assert_eq!(
            format_float(-9223372036854775809.0),
            "-9.223372036854776e+18"
        );
        assert_eq!(format_float(1e-5), "1e-05");
        assert_eq!(format_float(-0.0), "0");
        assert_eq!(format_float(0.0001), "0.0001");
    }

    #[test]
    fn folds_long_lines() {
        let long = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr";
        let mut m = crate::yaml::Map::new();
        m.insert("long".into(), Node::str(long));
        let mut out = String::new();
        emit_document(&mut out, &Node::Map(m), EmitOptions::default());
        assert_eq!(
            out,
            "long: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp\n  qqqq rrrr\n"
        );
    }
}
