//! The `${var}` dialect of Flux's post-build substitution, as github.com/fluxcd/pkg/envsubst
//! (v1.8.0, a drone/envsubst fork) reads and evaluates it: only `${…}` is a substitution (a
//! bare `$var` is text), `$$` escapes a `$` outside one, and the forms `${#v}`, `${v^}`,
//! `${v^^}`, `${v,}`, `${v,,}`, `${v:n}`, `${v:n:len}`, `${v#p}`, `${v##p}`, `${v%p}`,
//! `${v%%p}`, `${v/a/b}`, `${v//a/b}`, `${v/#a/b}`, `${v/%a/b}`, and the default forms
//! `${v=d}`, `${v:=d}`, `${v:-d}`, `${v:+d}`, `${v:?d}` (all of them "the default when empty",
//! `toDefault` in funcs.go). The scanner's quirks are kept: it works on the text as it goes,
//! deleting the first character of an escape (`scanner.skip` in parse/scan.go), and an
//! identifier's run stops before a `${`.

use std::fmt;

/// Why a text does not parse or evaluate; the texts are envsubst's error strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SubstError {
    /// `bad substitution` and the other parse errors of parse/parse.go.
    Parse(&'static str),
    /// Strict mode: a variable read without a default is not set.
    NotSet(String),
}

impl fmt::Display for SubstError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubstError::Parse(m) => f.write_str(m),
            SubstError::NotSet(v) => write!(f, "variable not set (strict mode): {v:?}"),
        }
    }
}

const BAD_SUBSTITUTION: SubstError = SubstError::Parse("bad substitution");
const MISSING_BRACE: SubstError = SubstError::Parse("missing closing brace");
const BAD_NAME: SubstError = SubstError::Parse("unable to parse variable name");
const BAD_FUNC_PARAM: SubstError =
    SubstError::Parse("unable to parse substitution within function");
const BAD_DEFAULT: SubstError = SubstError::Parse("unable to parse default function");

/// A parsed text: literal runs and substitutions.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Text(String),
    Func(Func),
}

/// One `${…}`: the operator (`""` for a plain `${v}`), the variable and the arguments, each
/// itself a text.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Func {
    op: String,
    var: String,
    args: Vec<Vec<Part>>,
}

/// Evaluates `text`, looking variables up with `lookup` (`None`: not set). In strict mode an
/// unset variable read without a default operator is an error; otherwise it reads as "".
pub(crate) fn eval(
    text: &str,
    strict: bool,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, SubstError> {
    let parts = Parser::new(text).parse_any()?;
    let mut out = String::with_capacity(text.len());
    write_parts(&mut out, &parts, strict, lookup)?;
    Ok(out)
}

fn write_parts(
    out: &mut String,
    parts: &[Part],
    strict: bool,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(), SubstError> {
    for p in parts {
        match p {
            Part::Text(t) => out.push_str(t),
            Part::Func(f) => {
                let mut args = Vec::with_capacity(f.args.len());
                for a in &f.args {
                    let mut s = String::new();
                    write_parts(&mut s, a, strict, lookup)?;
                    args.push(s);
                }
                let value = match lookup(&f.var) {
                    Some(v) => v,
                    None if strict && !is_default_op(&f.op) => {
                        return Err(SubstError::NotSet(f.var.clone()));
                    }
                    None => String::new(),
                };
                out.push_str(&apply(&f.op, &value, &args));
            }
        }
    }
    Ok(())
}

/// The operators that supply a value when the variable is unset (template.go `isDefaultOp`).
fn is_default_op(op: &str) -> bool {
    matches!(op, "-" | "+" | "=" | "?" | ":-" | ":+" | ":=" | ":?")
}

/// The function an operator names (template.go `lookupFunc`); unknown ones are the default.
fn apply(op: &str, s: &str, args: &[String]) -> String {
    match op {
        "," => map_first(s, char::to_lowercase),
        ",," => s.to_lowercase(),
        "^" => map_first(s, char::to_uppercase),
        "^^" => s.to_uppercase(),
        "#" if args.is_empty() => s.len().to_string(),
        "#" => trim_shortest(s, &args[0]),
        "##" => trim_longest(s, &args[0]),
        "%" => rev(&trim_shortest(&rev(s), &rev(&args[0]))),
        "%%" => rev(&trim_longest(&rev(s), &rev(&args[0]))),
        ":" => substr(s, args),
        "/#" => match args {
            [from, to] if s.starts_with(from.as_str()) => s.replacen(from.as_str(), to, 1),
            _ => s.to_string(),
        },
        "/%" => match args {
            [from, to] if s.ends_with(from.as_str()) => {
                format!("{}{to}", &s[..s.len() - from.len()])
            }
            _ => s.to_string(),
        },
        "/" => replace(s, args, Some(1)),
        "//" => replace(s, args, None),
        _ => {
            if s.is_empty() && !args.is_empty() {
                args.concat()
            } else {
                s.to_string()
            }
        }
    }
}

/// Go's `unicode.ToLower`/`ToUpper` of the first rune (one rune in, one rune out).
fn map_first<I: Iterator<Item = char>>(s: &str, f: fn(char) -> I) -> String {
    let mut chars = s.chars();
    match chars.next() {
        None => String::new(),
        Some(c) => {
            let mut mapped = f(c);
            let first = match (mapped.next(), mapped.next()) {
                (Some(m), None) => m,
                _ => c,
            };
            let mut out = String::with_capacity(s.len());
            out.push(first);
            out.push_str(chars.as_str());
            out
        }
    }
}

fn replace(s: &str, args: &[String], n: Option<usize>) -> String {
    let (from, to) = match args {
        [] => return s.to_string(),
        [from] => (from.as_str(), ""),
        [from, to, ..] => (from.as_str(), to.as_str()),
    };
    match n {
        Some(n) => go_replace(s, from, to, n),
        None => go_replace(s, from, to, usize::MAX),
    }
}

/// Go's `strings.Replace`: an empty `from` matches before every rune and at the end.
fn go_replace(s: &str, from: &str, to: &str, n: usize) -> String {
    if from.is_empty() {
        let mut out = String::new();
        let mut done = 0;
        for c in s.chars() {
            if done < n {
                out.push_str(to);
                done += 1;
            }
            out.push(c);
        }
        if done < n {
            out.push_str(to);
        }
        return out;
    }
    s.replacen(from, to, n)
}

/// `${v:pos}` and `${v:pos:len}` on bytes, as funcs.go `toSubstr` slices Go strings; a
/// number that does not parse leaves the value.
fn substr(s: &str, args: &[String]) -> String {
    let Some(pos) = args.first().and_then(|a| go_atoi(a)) else {
        return s.to_string();
    };
    let len = s.len() as i64;
    let mut pos = pos;
    if pos < 0 {
        pos = (len + pos).max(0);
    }
    let slice = |a: i64, b: i64| -> String {
        let (a, b) = (a as usize, b as usize);
        String::from_utf8_lossy(&s.as_bytes()[a..b]).into_owned()
    };
    let Some(n_arg) = args.get(1) else {
        return if pos < len {
            slice(pos, len)
        } else {
            String::new()
        };
    };
    let Some(n) = go_atoi(n_arg) else {
        return s.to_string();
    };
    if n < 0 {
        let end = len + n;
        return if end < pos {
            String::new()
        } else {
            slice(pos, end)
        };
    }
    if pos + n >= len {
        return if pos < len {
            slice(pos, len)
        } else {
            String::new()
        };
    }
    slice(pos, pos + n)
}

/// Go's `strconv.Atoi` (an optional sign, decimal digits, within 64 bits).
fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn rev(s: &str) -> String {
    s.chars().rev().collect()
}

/// funcs.go `trimShortest`: the shortest prefix the pattern matches is removed, trying
/// prefixes by byte length from the longest (all of them: the last match wins).
fn trim_shortest(s: &str, pattern: &str) -> String {
    let mut shortest: Option<usize> = None;
    for end in (1..=s.len()).rev() {
        match glob_match(pattern, &s.as_bytes()[..end]) {
            Err(()) => return s.to_string(),
            Ok(true) => shortest = Some(end),
            Ok(false) => {}
        }
    }
    match shortest {
        Some(end) => String::from_utf8_lossy(&s.as_bytes()[end..]).into_owned(),
        None => s.to_string(),
    }
}

/// funcs.go `trimLongest`: the longest prefix the pattern matches is removed.
fn trim_longest(s: &str, pattern: &str) -> String {
    for end in (1..=s.len()).rev() {
        match glob_match(pattern, &s.as_bytes()[..end]) {
            Err(()) => return s.to_string(),
            Ok(true) => return String::from_utf8_lossy(&s.as_bytes()[end..]).into_owned(),
            Ok(false) => {}
        }
    }
    s.to_string()
}

/// envsubst's `path.Match`: Go's old `path.Match` where `*` and `?` also match `/`. `Err` for
/// a malformed pattern (found only as far as matching reads it).
fn glob_match(pattern: &str, name: &[u8]) -> Result<bool, ()> {
    let mut pattern = pattern.as_bytes();
    let mut name = name;
    'outer: while !pattern.is_empty() {
        let (star, chunk, rest) = scan_chunk(pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            return Ok(true);
        }
        let (t, ok, err) = match_chunk(chunk, name);
        if ok && (t.is_empty() || !pattern.is_empty()) {
            name = t;
            continue;
        }
        if err {
            return Err(());
        }
        if star {
            for i in 0..name.len() {
                let (t, ok, err) = match_chunk(chunk, &name[i + 1..]);
                if ok {
                    if pattern.is_empty() && !t.is_empty() {
                        continue;
                    }
                    name = t;
                    continue 'outer;
                }
                if err {
                    return Err(());
                }
            }
        }
        return Ok(false);
    }
    Ok(name.is_empty())
}

fn scan_chunk(pattern: &[u8]) -> (bool, &[u8], &[u8]) {
    let mut p = pattern;
    let mut star = false;
    while p.first() == Some(&b'*') {
        p = &p[1..];
        star = true;
    }
    let mut in_range = false;
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'\\' if i + 1 < p.len() => i += 1,
            b'[' => in_range = true,
            b']' => in_range = false,
            b'*' if !in_range => break,
            _ => {}
        }
        i += 1;
    }
    (star, &p[..i], &p[i..])
}

/// One chunk against the start of `s`: what is left, whether it matched, whether the
/// pattern was malformed.
fn match_chunk<'a>(chunk: &[u8], s: &'a [u8]) -> (&'a [u8], bool, bool) {
    let mut chunk = chunk;
    let mut s = s;
    while !chunk.is_empty() {
        if s.is_empty() {
            return (s, false, false);
        }
        match chunk[0] {
            b'[' => {
                let (r, n) = decode(s);
                s = &s[n..];
                chunk = &chunk[1..];
                let negated = chunk.first() == Some(&b'^');
                if negated {
                    chunk = &chunk[1..];
                }
                let mut matched = false;
                let mut ranges = 0;
                loop {
                    if chunk.first() == Some(&b']') && ranges > 0 {
                        chunk = &chunk[1..];
                        break;
                    }
                    let Some((lo, rest)) = get_esc(chunk) else {
                        return (s, false, true);
                    };
                    chunk = rest;
                    let mut hi = lo;
                    if chunk[0] == b'-' {
                        let Some((h, rest)) = get_esc(&chunk[1..]) else {
                            return (s, false, true);
                        };
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        matched = true;
                    }
                    ranges += 1;
                }
                if matched == negated {
                    return (s, false, false);
                }
            }
            b'?' => {
                let (_, n) = decode(s);
                s = &s[n..];
                chunk = &chunk[1..];
            }
            c => {
                let mut c = c;
                if c == b'\\' {
                    chunk = &chunk[1..];
                    match chunk.first() {
                        None => return (s, false, true),
                        Some(&e) => c = e,
                    }
                }
                if c != s[0] {
                    return (s, false, false);
                }
                s = &s[1..];
                chunk = &chunk[1..];
            }
        }
    }
    (s, true, false)
}

/// A range bound of a `[...]` class and what follows it; `None` when malformed (including a
/// bound that ends the pattern).
fn get_esc(chunk: &[u8]) -> Option<(u32, &[u8])> {
    let mut chunk = chunk;
    match chunk.first() {
        None | Some(b'-' | b']') => return None,
        Some(b'\\') => {
            chunk = &chunk[1..];
            if chunk.is_empty() {
                return None;
            }
        }
        _ => {}
    }
    let (r, n) = decode(chunk);
    if r == u32::from(char::REPLACEMENT_CHARACTER) && n == 1 {
        return None;
    }
    let rest = &chunk[n..];
    if rest.is_empty() {
        return None;
    }
    Some((r, rest))
}

/// The rune at the start of `s` and its width, as Go's `utf8.DecodeRuneInString` (an invalid
/// byte is U+FFFD of width 1).
fn decode(s: &[u8]) -> (u32, usize) {
    let n = match s.first() {
        None => return (u32::from(char::REPLACEMENT_CHARACTER), 0),
        Some(b) if *b < 0x80 => 1,
        Some(b) if *b >= 0xF0 => 4,
        Some(b) if *b >= 0xE0 => 3,
        Some(b) if *b >= 0xC0 => 2,
        Some(_) => 1,
    };
    match s.get(..n).and_then(|b| std::str::from_utf8(b).ok()) {
        Some(t) => (t.chars().next().map_or(0xFFFD, u32::from), n),
        None => (u32::from(char::REPLACEMENT_CHARACTER), 1),
    }
}

// ---- the parser (parse/parse.go and parse/scan.go) ----

/// What the scanner may read as an identifier run, by rune and its byte offset from the
/// token's start (after the rune).
type Accept = fn(char, usize) -> bool;

/// Scan modes.
const IDENT: u8 = 1;
const LBRACK: u8 = 2;
const RBRACK: u8 = 4;
const ESCAPE: u8 = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Token {
    Illegal,
    Eof,
    Ident,
    Lbrack,
    Rbrack,
}

struct Parser {
    buf: String,
    pos: usize,
    start: usize,
    width: usize,
    mode: u8,
    /// Escape `$$` (and, inside a function, `\/` and `\\`).
    escape_backslash: bool,
    accept: Accept,
}

impl Parser {
    fn new(text: &str) -> Parser {
        Parser {
            buf: text.to_string(),
            pos: 0,
            start: 0,
            width: 0,
            mode: 0,
            escape_backslash: false,
            accept: |_, _| true,
        }
    }

    /// The next rune (`'\0'` at the end, as envsubst's `eof`).
    fn read(&mut self) -> char {
        match self.buf[self.pos..].chars().next() {
            None => {
                self.width = 0;
                '\0'
            }
            Some(c) => {
                self.width = c.len_utf8();
                self.pos += self.width;
                c
            }
        }
    }

    fn unread(&mut self) {
        self.pos -= self.width;
    }

    fn peek(&mut self) -> char {
        let c = self.read();
        self.unread();
        c
    }

    /// Deletes the byte before the position (the first character of an escape).
    fn skip(&mut self) {
        self.buf.remove(self.pos - 1);
    }

    fn text(&self) -> String {
        self.buf[self.start..self.pos].to_string()
    }

    fn scan(&mut self) -> Token {
        self.start = self.pos;
        let c = self.read();
        if c == '\0' {
            return Token::Eof;
        }
        if self.scan_lbrack(c) {
            return Token::Lbrack;
        }
        if self.mode & RBRACK != 0 && c == '}' {
            return Token::Rbrack;
        }
        if self.scan_ident(c) {
            return Token::Ident;
        }
        Token::Illegal
    }

    fn scan_ident(&mut self, c: char) -> bool {
        if self.mode & IDENT == 0 {
            return false;
        }
        if self.escaped(c) {
            self.skip();
        } else if !(self.accept)(c, self.pos - self.start) {
            return false;
        }
        loop {
            let c = self.read();
            if c == '\0' {
                self.unread();
                break;
            }
            if self.scan_lbrack(c) {
                // Back before the `$` of the `${`.
                self.unread();
                self.width = 1;
                self.unread();
                break;
            }
            if self.escaped(c) {
                self.skip();
                continue;
            }
            if !(self.accept)(c, self.pos - self.start) {
                self.unread();
                break;
            }
        }
        true
    }

    fn scan_lbrack(&mut self, c: char) -> bool {
        if self.mode & LBRACK == 0 || c != '$' {
            return false;
        }
        if self.read() == '{' {
            return true;
        }
        self.unread();
        false
    }

    fn escaped(&mut self, c: char) -> bool {
        if self.mode & ESCAPE == 0 {
            return false;
        }
        match c {
            '$' => self.peek() == '$',
            '\\' if self.escape_backslash => matches!(self.peek(), '/' | '\\'),
            _ => false,
        }
    }

    fn parse_any(&mut self) -> Result<Vec<Part>, SubstError> {
        let mut parts = Vec::new();
        loop {
            self.accept = |_, _| true;
            self.mode = IDENT | LBRACK | ESCAPE;
            self.escape_backslash = false;
            match self.scan() {
                Token::Ident => parts.push(Part::Text(self.text())),
                Token::Eof => return Ok(parts),
                Token::Lbrack => parts.push(Part::Func(self.parse_func()?)),
                _ => return Err(BAD_SUBSTITUTION),
            }
        }
    }

    fn parse_func(&mut self) -> Result<Func, SubstError> {
        self.escape_backslash = true;
        if self.peek() == '#' {
            return self.parse_len();
        }
        self.accept = accept_ident;
        self.mode = IDENT;
        let var = match self.scan() {
            Token::Ident => self.text(),
            _ => return Err(BAD_NAME),
        };
        match self.peek() {
            ':' => return self.parse_default_or_substr(var),
            '=' => return self.parse_default(var),
            ',' | '^' => return self.parse_casing(var),
            '/' => return self.parse_replace(var),
            '#' => return self.parse_remove(var, |c, i| c == '#' && i < 3),
            '%' => return self.parse_remove(var, |c, i| c == '%' && i < 3),
            _ => {}
        }
        self.accept = accept_ident;
        self.mode = RBRACK;
        match self.scan() {
            Token::Rbrack => Ok(Func {
                op: String::new(),
                var,
                args: Vec::new(),
            }),
            _ => Err(MISSING_BRACE),
        }
    }

    fn parse_param(&mut self, accept: Accept, mode: u8) -> Result<Vec<Part>, SubstError> {
        self.accept = accept;
        self.mode = mode | LBRACK;
        match self.scan() {
            Token::Lbrack => Ok(vec![Part::Func(self.parse_func()?)]),
            Token::Ident | Token::Rbrack => Ok(vec![Part::Text(self.text())]),
            _ => Err(BAD_FUNC_PARAM),
        }
    }

    fn parse_default_or_substr(&mut self, var: String) -> Result<Func, SubstError> {
        self.read();
        let c = self.peek();
        self.unread();
        match c {
            '=' | '-' | '?' | '+' => self.parse_default(var),
            _ => self.parse_substr(var),
        }
    }

    fn op(&mut self, accept: Accept, err: SubstError) -> Result<String, SubstError> {
        self.accept = accept;
        self.mode = IDENT;
        match self.scan() {
            Token::Ident => Ok(self.text()),
            _ => Err(err),
        }
    }

    fn parse_substr(&mut self, var: String) -> Result<Func, SubstError> {
        let op = self.op(|c, i| i == 1 && c == ':', BAD_SUBSTITUTION)?;
        let mut args = vec![self.parse_param(|c, _| c != ':' && c != '}', IDENT)?];
        self.accept = |c, _| c == ':';
        self.mode = IDENT | RBRACK;
        match self.scan() {
            Token::Rbrack => return Ok(Func { op, var, args }),
            Token::Ident => {}
            _ => return Err(BAD_SUBSTITUTION),
        }
        args.push(self.parse_param(|c, _| c != '}', IDENT)?);
        self.consume_rbrack()?;
        Ok(Func { op, var, args })
    }

    fn parse_remove(&mut self, var: String, accept: Accept) -> Result<Func, SubstError> {
        let op = self.op(accept, BAD_SUBSTITUTION)?;
        let args = vec![self.parse_param(|c, _| c != '}', IDENT)?];
        self.consume_rbrack()?;
        Ok(Func { op, var, args })
    }

    fn parse_replace(&mut self, var: String) -> Result<Func, SubstError> {
        let op = self.op(
            |c, i| (i == 1 && c == '/') || (i == 2 && matches!(c, '/' | '#' | '%')),
            BAD_SUBSTITUTION,
        )?;
        let mut args = vec![self.parse_param(|c, _| c != '/', IDENT | ESCAPE)?];
        self.op(|c, _| c == '/', BAD_SUBSTITUTION)?;
        if self.peek() != '}' {
            args.push(self.parse_param(|c, _| c != '}', IDENT | ESCAPE)?);
        }
        self.consume_rbrack()?;
        Ok(Func { op, var, args })
    }

    fn parse_default(&mut self, var: String) -> Result<Func, SubstError> {
        let accept: Accept = if self.peek() == '=' {
            |c, i| i == 1 && c == '='
        } else {
            |c, i| (i == 1 && c == ':') || (i == 2 && matches!(c, '=' | '-' | '?' | '+'))
        };
        let op = self.op(accept, BAD_DEFAULT)?;
        let mut args = Vec::new();
        loop {
            if self.peek() == '}' {
                self.consume_rbrack()?;
                return Ok(Func { op, var, args });
            }
            args.push(self.parse_param(|c, _| c != '}', IDENT)?);
        }
    }

    fn parse_casing(&mut self, var: String) -> Result<Func, SubstError> {
        let op = self.op(|c, i| matches!(c, ',' | '^') && i < 3, BAD_SUBSTITUTION)?;
        self.consume_rbrack()?;
        Ok(Func {
            op,
            var,
            args: Vec::new(),
        })
    }

    fn parse_len(&mut self) -> Result<Func, SubstError> {
        let op = self.op(|c, i| c == '#' && i == 1, BAD_SUBSTITUTION)?;
        let var = self.op(accept_ident, BAD_SUBSTITUTION)?;
        self.consume_rbrack()?;
        Ok(Func {
            op,
            var,
            args: Vec::new(),
        })
    }

    fn consume_rbrack(&mut self) -> Result<(), SubstError> {
        self.mode = RBRACK;
        if self.scan() == Token::Rbrack {
            Ok(())
        } else {
            Err(BAD_SUBSTITUTION)
        }
    }
}

/// Go's `unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'`, with Rust's alphabetic
/// property for letters and ASCII digits (names of other scripts' digits differ; the
/// controller refuses every name outside `[_[:alpha:]][_[:alpha:][:digit:]]*` anyway).
fn accept_ident(c: char, _: usize) -> bool {
    c.is_alphabetic() || c.is_ascii_digit() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, strict: bool) -> Result<String, SubstError> {
        let vars = |k: &str| -> Option<String> {
            match k {
                "A" => Some("hello".into()),
                "E" => Some(String::new()),
                "P" => Some("a/b/c.tar.gz".into()),
                _ => None,
            }
        };
        eval(text, strict, &vars)
    }

    #[test]
    fn only_braced_forms_substitute_and_double_dollars_escape() {
        assert_eq!(run("x ${A} $A $$A", false).unwrap(), "x hello $A $A");
        assert_eq!(run("$${A}", false).unwrap(), "${A}");
        assert_eq!(run("${B}", false).unwrap(), "");
        assert_eq!(run("${B}", true), Err(SubstError::NotSet("B".into())));
    }

    #[test]
    fn defaults_apply_when_empty_or_unset() {
        assert_eq!(run("${B:=d}", true).unwrap(), "d");
        assert_eq!(run("${E:-d}", true).unwrap(), "d");
        assert_eq!(run("${A:=d}", true).unwrap(), "hello");
        assert_eq!(run("${B=d}", true).unwrap(), "d");
        assert_eq!(run("${B:+d}", true).unwrap(), "d");
        assert_eq!(run("${B:=${A}}", true).unwrap(), "hello");
        assert_eq!(run("${B-d}", false), Err(MISSING_BRACE));
    }

    #[test]
    fn string_functions() {
        assert_eq!(run("${#A}", true).unwrap(), "5");
        assert_eq!(run("${A^}", true).unwrap(), "Hello");
        assert_eq!(run("${A^^}", true).unwrap(), "HELLO");
        assert_eq!(run("${A:1:3}", true).unwrap(), "ell");
        assert_eq!(run("${A:-2}", true).unwrap(), "hello");
        assert_eq!(run("${A: -2}", true).unwrap(), "hello");
        assert_eq!(run("${A:1:-1}", true).unwrap(), "ell");
        assert_eq!(run("${P#*/}", true).unwrap(), "b/c.tar.gz");
        assert_eq!(run("${P##*/}", true).unwrap(), "c.tar.gz");
        assert_eq!(run("${P%.*}", true).unwrap(), "a/b/c.tar");
        assert_eq!(run("${P%%.*}", true).unwrap(), "a/b/c");
        assert_eq!(run("${A/l/L}", true).unwrap(), "heLlo");
        assert_eq!(run("${A//l/L}", true).unwrap(), "heLLo");
        assert_eq!(run("${A/#he/HE}", true).unwrap(), "HEllo");
        assert_eq!(run("${A/%lo/LO}", true).unwrap(), "helLO");
    }

    #[test]
    fn malformed_substitutions_fail() {
        assert_eq!(run("${", false), Err(BAD_NAME));
        assert_eq!(run("${A", false), Err(MISSING_BRACE));
        assert_eq!(run("${-}", false), Err(BAD_NAME));
    }
}
