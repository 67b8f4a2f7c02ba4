//! How a plain (unquoted, untagged) scalar's text resolves to null, a boolean, a number or a
//! string, and so whether a string needs quoting: the one home of go-yaml's `resolve.go`
//! rules (v2 for what kustomize prints, v3 for what kyaml reads and writes), of serde_yaml's
//! (what ply's reference reader is handed) and of ply's named variants of them. Owns no
//! parsing and no printing; each function names the go-yaml (or serde_yaml) function it
//! mirrors, and where two rules differ they are two functions, each saying why.

use super::Node;

// ---- go-yaml v2 (what kustomize prints), and the numbers and timestamps v2 and v3 share ----

/// Whether go-yaml **v2**'s encoder would quote this string (`encode.go`, `stringv`): its
/// `resolve` reads the plain form as something other than a string, or it looks like a YAML
/// 1.1 base-60 float (`isBase60Float`). kustomize's output goes through v2 (`emit.rs`), so
/// this is the emitter's rule; v3's is [`plain_reads_as_string`].
pub(crate) fn resolves_to_non_string(s: &str) -> bool {
    resolve_v2(s) || is_base60(s)
}

/// Whether go-yaml **v2** decodes this plain, untagged text into a Go `interface{}` as
/// something other than a string: [`resolve_v2`], except that a timestamp stays a string
/// there (`decode.go`, `d.scalar`: "for backward compatibility reasons we set it as a
/// string"). Part of kyaml's `IsValueNonString` (`parse::yaml11_non_string`).
pub(crate) fn yaml11_decodes_as_non_string(s: &str) -> bool {
    resolve_v2(s) && !(is_timestamp(s) && resolve_number(s).is_none())
}

/// go-yaml v2 `resolve.go`, `resolve()` for an untagged plain scalar: true when it is not a
/// string. YAML 1.1: `y`, `yes`, `on`, `off` … are booleans (v3 reads them as strings).
fn resolve_v2(s: &str) -> bool {
    let Some(&first) = s.as_bytes().first() else {
        return true; // null
    };
    match first {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => matches!(
            s,
            "y" | "Y"
                | "yes"
                | "Yes"
                | "YES"
                | "n"
                | "N"
                | "no"
                | "No"
                | "NO"
                | "true"
                | "True"
                | "TRUE"
                | "false"
                | "False"
                | "FALSE"
                | "on"
                | "On"
                | "ON"
                | "off"
                | "Off"
                | "OFF"
                | "~"
                | "null"
                | "Null"
                | "NULL"
        ),
        b'.' => {
            matches!(s, ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN")
                || go_float(s).is_some()
        }
        b'+' | b'-' => {
            matches!(s, "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF")
                || resolve_number(s).is_some()
        }
        b'0'..=b'9' => is_timestamp(s) || resolve_number(s).is_some(),
        _ => false,
    }
}

/// A plain scalar read as a number by go-yaml (v2 and v3 alike): underscores removed, then
/// Go's `strconv.ParseInt(s, 0, 64)` / `ParseUint` (base prefixes `0x`, `0o`, `0b` in either
/// case, a leading `0` meaning octal), then the YAML float pattern with `ParseFloat`.
pub(crate) fn resolve_number(s: &str) -> Option<Node> {
    if s.starts_with('.') {
        // go-yaml's `.` case: `strconv.ParseFloat` on the text as it is (no `_` removed).
        return go_float(s).map(Node::Float);
    }
    let plain: std::borrow::Cow<'_, str> = if s.contains('_') {
        s.replace('_', "").into()
    } else {
        s.into()
    };
    if let Some(i) = go_parse_int(&plain) {
        return Some(Node::Int(i));
    }
    if is_yaml_style_float(&plain) {
        return go_float(&plain).map(Node::Float);
    }
    None
}

/// `strconv.ParseInt(s, 0, 64)` or, failing that, `ParseUint(s, 0, 64)`.
fn go_parse_int(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let signed = s.starts_with(['-', '+']);
    let lower = |p: &str| body.get(..2).is_some_and(|h| h.eq_ignore_ascii_case(p));
    let (radix, digits) = if lower("0x") {
        (16, &body[2..])
    } else if lower("0o") {
        (8, &body[2..])
    } else if lower("0b") {
        (2, &body[2..])
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let mag = u128::from_str_radix(digits, radix).ok()?;
    if neg {
        let v = -i128::try_from(mag).ok()?;
        (v >= i128::from(i64::MIN)).then_some(v)
    } else if mag <= i64::MAX as u128 || (!signed && mag <= u128::from(u64::MAX)) {
        i128::try_from(mag).ok()
    } else {
        None
    }
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat` for decimal text: fails on overflow (which Go reports as a range
/// error).
fn go_float(s: &str) -> Option<f64> {
    if !is_yaml_style_float(s) {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// go-yaml v2 `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        match (b.get(i), b.get(i + 1)) {
            (Some(d1 @ b'0'..=b'5'), Some(d2)) if d2.is_ascii_digit() => {
                let _ = d1;
                i += 2;
            }
            (Some(d), _) if d.is_ascii_digit() => i += 1,
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml's `parseTimestamp`: four digits and `-`, then one of the layouts
/// `2006-1-2T15:4:5.999999999Z07:00`, `2006-1-2t15:4:5.999999999Z07:00`,
/// `2006-1-2 15:4:5.999999999` or `2006-1-2`, as Go's `time.Parse` reads them (one- or
/// two-digit fields, a space matching one or more spaces, valid calendar dates and times).
pub(crate) fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut p = TsParser { b, i: 5 };
    let Some(year) = std::str::from_utf8(&b[..4])
        .ok()
        .and_then(|y| y.parse::<u32>().ok())
    else {
        return false;
    };
    let Some(month) = p.num12() else { return false };
    if !p.eat(b'-') {
        return false;
    }
    let Some(day) = p.num12() else { return false };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return false;
    }
    if p.i == b.len() {
        return true;
    }
    let zoned = match b[p.i] {
        b'T' | b't' => {
            p.i += 1;
            true
        }
        b' ' => {
            while p.b.get(p.i) == Some(&b' ') {
                p.i += 1;
            }
            false
        }
        _ => return false,
    };
    let (Some(h), true, Some(m), true, Some(sec)) =
        (p.num12(), p.eat(b':'), p.num12(), p.eat(b':'), p.num12())
    else {
        return false;
    };
    if h > 23 || m > 59 || sec > 59 {
        return false;
    }
    if p.b.get(p.i) == Some(&b'.') {
        p.i += 1;
        let start = p.i;
        while p.b.get(p.i).is_some_and(u8::is_ascii_digit) {
            p.i += 1;
        }
        if p.i == start {
            return false;
        }
    }
    if zoned {
        match p.b.get(p.i) {
            Some(b'Z') => p.i += 1,
            Some(b'+' | b'-') => {
                p.i += 1;
                let two = |p: &mut TsParser| {
                    let ok =
                        p.b.get(p.i..p.i + 2)
                            .is_some_and(|d| d.iter().all(u8::is_ascii_digit));
                    p.i += 2;
                    ok
                };
                if !(two(&mut p) && p.eat(b':') && two(&mut p)) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    p.i == b.len()
}

struct TsParser<'a> {
    b: &'a [u8],
    i: usize,
}

impl TsParser<'_> {
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// One or two digits (Go's `getnum(value, false)`).
    fn num12(&mut self) -> Option<u32> {
        let d1 = *self.b.get(self.i).filter(|c| c.is_ascii_digit())?;
        self.i += 1;
        let mut v = u32::from(d1 - b'0');
        if let Some(d2) = self.b.get(self.i).filter(|c| c.is_ascii_digit()) {
            v = v * 10 + u32::from(d2 - b'0');
            self.i += 1;
        }
        Some(v)
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// ---- go-yaml v3, as kyaml reads and writes scalars ----

/// go-yaml v3's `resolve()` (`resolve.go`) for a plain, untagged scalar (kustomize writes
/// the value without a tag): a timestamp is its RFC 3339 text, as ply's readers keep it
/// (`parse.rs` and `fast.rs`). Used by configurations' value writers
/// (`transform/value_add.rs`) and [`untagged_over`].
pub(crate) fn resolve_plain_v3(text: &str) -> Node {
    match resolve_plain_lenient(text) {
        n @ (Node::Null | Node::Bool(_)) => return n,
        Node::Float(f) if !f.is_finite() => return Node::Float(f),
        _ => {}
    }
    if text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
        && let Some(n) = resolve_plain_number_or_time(text, false, false)
    {
        return n;
    }
    Node::Str(text.to_string())
}

/// go-yaml v3's `resolve(tag, text)` (`resolve.go`) for a scalar written with an explicit
/// resolvable core tag (`!!str`, `!!null`, `!!bool`, `!!int`, `!!float`, `!!timestamp`;
/// `tag` is the name after `!!`), as `decode.go` (`decoder.scalar`) decodes it, quoted or plain: the text
/// is resolved as an untagged plain scalar would be, except that it is read as a timestamp
/// only under `!!timestamp` (`2001-12-14` becomes the time, printed in RFC 3339 form by the
/// JSON step: `"2001-12-14T00:00:00Z"`), and an integer is taken where a float is asked for.
/// Any other kind is go-yaml's failure, in its words: ``cannot decode !!str `yes` as a
/// !!bool``.
pub(crate) fn resolve_tagged(tag: &str, text: &str) -> Result<Node, String> {
    if tag == "str" {
        return Ok(Node::Str(text.to_string()));
    }
    let (kind, value) = if tag == "timestamp"
        && let Some(time) = timestamp_rfc3339(text)
    {
        ("timestamp", Node::Str(time))
    } else {
        let value = resolve_v3_kind(text);
        let kind = match &value {
            _ if text == "<<" => "merge",
            Node::Null => "null",
            Node::Bool(_) => "bool",
            Node::Int(_) => "int",
            Node::Float(_) => "float",
            _ => "str",
        };
        (kind, value)
    };
    match (tag, kind, value) {
        (t, k, v) if t == k => Ok(v),
        // `resolve`'s deferred check: an int is taken as a float under `!!float`, when Go
        // holds it as an `int` or `int64` (not a `uint64`, beyond `i64::MAX`).
        ("float", "int", Node::Int(i)) if i64::try_from(i).is_ok() => Ok(Node::Float(i as f64)),
        (_, k, _) => Err(format!(
            "cannot decode !!{k} `{text}` as a !!{tag}: go-yaml, which kustomize reads YAML \
             with, reads the text under an explicit tag as it reads an untagged plain scalar \
             (remove the tag, or write a value of that kind)"
        )),
    }
}

/// go-yaml v3's `resolve()` for a plain scalar's text, timestamps left strings: its
/// `resolveMap` (null, booleans, infinities and NaN), then the number rules
/// ([`resolve_number`]) for text that starts with a digit, a sign or `.`.
fn resolve_v3_kind(text: &str) -> Node {
    match resolve_plain_lenient(text) {
        n @ (Node::Null | Node::Bool(_)) => return n,
        Node::Float(f) if !f.is_finite() => return Node::Float(f),
        _ => {}
    }
    if text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
        && let Some(n) = resolve_number(text)
    {
        return n;
    }
    Node::Str(text.to_string())
}

/// A timestamp that go-yaml's `parseTimestamp` accepts ([`is_timestamp`]), as Go's
/// `time.Time.MarshalJSON` prints it (RFC 3339 with nanoseconds, trailing zeros of the
/// fraction dropped; `Z` for a zero offset, and for the layouts without a zone, read as UTC).
pub(crate) fn timestamp_rfc3339(s: &str) -> Option<String> {
    if !is_timestamp(s) {
        return None;
    }
    let b = s.as_bytes();
    let mut p = TsParser { b, i: 5 };
    let year = &s[..4];
    let month = p.num12()?;
    p.eat(b'-');
    let day = p.num12()?;
    let mut out = format!("{year}-{month:02}-{day:02}T");
    if p.i == b.len() {
        out.push_str("00:00:00Z");
        return Some(out);
    }
    let zoned = matches!(b[p.i], b'T' | b't');
    while matches!(b.get(p.i), Some(b'T' | b't' | b' ')) {
        p.i += 1;
    }
    let h = p.num12()?;
    p.eat(b':');
    let m = p.num12()?;
    p.eat(b':');
    let sec = p.num12()?;
    out.push_str(&format!("{h:02}:{m:02}:{sec:02}"));
    if p.eat(b'.') {
        let start = p.i;
        while b.get(p.i).is_some_and(u8::is_ascii_digit) {
            p.i += 1;
        }
        // Go keeps nanoseconds: nine digits at most.
        let digits = &s[start..p.i];
        let fraction = digits[..digits.len().min(9)].trim_end_matches('0');
        if !fraction.is_empty() {
            out.push('.');
            out.push_str(fraction);
        }
    }
    let zone = &s[p.i..];
    if !zoned || zone == "Z" || zone[1..] == *"00:00" {
        out.push('Z');
    } else {
        out.push_str(zone);
    }
    Some(out)
}

/// Whether a string, written plain and untagged, reads as a string in go-yaml v3 (`resolve.go`).
pub(crate) fn plain_reads_as_string(s: &str) -> bool {
    if s.is_empty() || s == "<<" {
        return true;
    }
    let special = matches!(
        s,
        "~" | "null"
            | "Null"
            | "NULL"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | ".nan"
            | ".NaN"
            | ".NAN"
    );
    !(special
        || is_timestamp(s)
        || (s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
            && resolve_number(s).is_some()))
}

/// The value kustomize leaves after writing `text` over `old` with kyaml's
/// `FieldSetter{StringValue}` (`filtersutil.SetScalar`; kyaml `fns.go`), as namePrefix,
/// nameSuffix, name references and images do: an untagged scalar that keeps the style of the
/// node it replaces (a created field is plain). go-yaml writes an untagged plain scalar bare
/// and kustomize's output reads it back as YAML 1.2, so `8080` becomes a number and `true` a
/// boolean. ply knows the old node was plain when it was not a string (a number, a boolean,
/// null, or a field just created); a string's quoting in the input is not kept in [`Node`], so
/// the result stays a string (a known gap, `docs/compatibility.md`).
pub(crate) fn untagged_over(old: &Node, text: String) -> Node {
    match old.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Str(_) | Node::Seq(_) | Node::Map(_) => Node::Str(text),
        Node::Null | Node::Bool(_) | Node::Int(_) | Node::Float(_) => resolve_plain_v3(&text),
    }
}

// ---- ply's lenient reading (replacements, kyaml merges) ----

/// A lenient reading of go-yaml v3's `resolve()` (`resolve.go`) for a plain scalar: null,
/// bool, int, float or string. Used where kustomize creates a scalar without a tag and prints
/// it as plain text: replacements (`transform/replacements.rs`) and kyaml's merge of a
/// scalar (`merge/smp/`). Kept apart from [`resolve_plain_v3`], which it differs from (which
/// of the two each caller uses is pinned by the goldens; changing either changes output):
/// only lower-case `0x`/`0o`/`0b` prefixes, no leading-`0` octal (`0777` is 777, v3 says
/// 511), integers to 128 bits (v3 stops at 64), floats by Rust's grammar on the text with
/// underscores left in (`1_0.5` stays a string), and timestamps left strings.
pub(crate) fn resolve_plain_lenient(text: &str) -> Node {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Node::Null,
        "true" | "True" | "TRUE" => return Node::Bool(true),
        "false" | "False" | "FALSE" => return Node::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Node::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Node::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Node::Float(f64::NAN),
        _ => {}
    }
    let first = text.as_bytes().first().copied().unwrap_or(b'x');
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return Node::Str(text.to_string());
    }
    let plain = text.replace('_', "");
    let (neg, digits) = match plain.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, plain.strip_prefix('+').unwrap_or(&plain)),
    };
    let parsed = if let Some(h) = digits.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()
    } else if let Some(o) = digits.strip_prefix("0o") {
        i128::from_str_radix(o, 8).ok()
    } else if let Some(b) = digits.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()
    } else if digits.bytes().all(|c| c.is_ascii_digit()) && !digits.is_empty() {
        digits.parse::<i128>().ok()
    } else {
        None
    };
    if let Some(i) = parsed {
        return Node::Int(if neg { -i } else { i });
    }
    let float_like = text
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        && text.bytes().any(|c| c.is_ascii_digit());
    match text.parse::<f64>() {
        Ok(f) if float_like => Node::Float(f),
        _ => Node::Str(text.to_string()),
    }
}

// ---- YAML 1.1 booleans, and serde_yaml's resolution (ply's readers) ----

/// The booleans YAML 1.1 adds to 1.2's (go-yaml v2's `resolve_table`; v3 and kyaml read
/// them as strings, kustomization files are read with them: `parse_config_documents`).
pub(crate) fn yaml11_bool(v: &str) -> Option<bool> {
    match v {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// A number serde_yaml resolved, as go-yaml v3 (kustomize) reads its text `text`: serde_yaml
/// reads integers to 128 bits, go-yaml to 64 (`strconv.ParseInt`/`ParseUint` in `resolve.go`,
/// `resolve`); beyond, decimal text is a float (`yamlStyleFloat`, losing digits:
/// `123456789012345678901234567890` is `1.2345678901234568e+29`) and `0x…`, `0o…`, `0b…`
/// text a string.
pub(super) fn as_go_yaml_reads(n: Node, text: &str) -> Node {
    match n {
        Node::Int(i) if i < i128::from(i64::MIN) || i > i128::from(u64::MAX) => {
            resolve_number(text).unwrap_or_else(|| Node::Str(text.to_string()))
        }
        n => n,
    }
}

/// A plain, untagged scalar's text that starts with a digit, a sign or `.`, as go-yaml v3
/// resolves it (`resolve.go`, `resolve`): a timestamp first (`2024-01-01`; kustomize's JSON
/// step prints it in RFC 3339 form, `time.Time.MarshalJSON`, so it is kept as that string),
/// then a number ([`resolve_number`]); `None` for a string (an impossible date such as
/// `2001-02-30` is one). `in_flow`: the scalar sits in a flow collection, where a time
/// (`2001-12-14 21:59:43`) stays a string: kyaml's `RNode.MarshalJSON` (`rnode.go`) encodes
/// the node as YAML again before decoding it, and go-yaml's emitter quotes a scalar holding
/// `:` in flow context (`emitterc.go`, `yaml_emitter_analyze_scalar`: a flow indicator), so
/// the JSON step reads back a quoted string.
/// `config`: the text is one of kustomize's own configuration files or JSON 6902 operations,
/// read by sigs.k8s.io/yaml with go-yaml v2 into `interface{}`, which keeps a timestamp as its
/// text (v2's `decode.go`, `d.scalar`).
pub(crate) fn resolve_plain_number_or_time(
    text: &str,
    in_flow: bool,
    config: bool,
) -> Option<Node> {
    if let Some(time) = timestamp_rfc3339(text) {
        if config || (in_flow && text.contains(':')) {
            return None;
        }
        return Some(Node::Str(time));
    }
    resolve_number(text)
}

/// An unsigned integer as ply keeps it (serde_yaml hands over a `u128`).
pub(super) fn u128_node(v: u128) -> Node {
    // Beyond i128 (39 digits) ply can no longer keep the integer; it becomes a float, as in
    // kustomize for anything beyond uint64.
    i128::try_from(v).map_or(Node::Float(v as f64), Node::Int)
}

/// A plain scalar as serde_yaml resolves it (`de.rs`, `visit_untagged_scalar`): null, a
/// boolean, an integer or a float; `None` for a string.
pub(super) fn serde_resolve(v: &str) -> Option<Node> {
    if matches!(v, "" | "~" | "null" | "Null" | "NULL") {
        return Some(Node::Null);
    }
    match v {
        "true" | "True" | "TRUE" => return Some(Node::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Node::Bool(false)),
        _ => {}
    }
    // Integers and finite floats start so (Rust's float syntax also takes `inf` and `nan`,
    // which serde_yaml then refuses as not finite).
    if !v.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) {
        return None;
    }
    if let Some(n) = unsigned(v, u64::from_str_radix) {
        return Some(Node::Int(n.into()));
    }
    if let Some(n) = negative(v, i64::from_str_radix) {
        return Some(Node::Int(n.into()));
    }
    if let Some(n) = unsigned(v, u128::from_str_radix) {
        return Some(u128_node(n));
    }
    if let Some(n) = negative(v, i128::from_str_radix) {
        return Some(Node::Int(n));
    }
    if !digits_but_not_number(v)
        && let Some(f) = serde_f64(v)
    {
        return Some(Node::Float(f));
    }
    None
}

/// serde_yaml's `parse_unsigned_int`.
fn unsigned<T>(v: &str, from: fn(&str, u32) -> Result<T, std::num::ParseIntError>) -> Option<T> {
    let unpositive = v.strip_prefix('+').unwrap_or(v);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(n) = from(rest, radix) {
                return Some(n);
            }
        }
    }
    if unpositive.starts_with(['+', '-']) || digits_but_not_number(v) {
        return None;
    }
    from(unpositive, 10).ok()
}

/// serde_yaml's `parse_negative_int`.
fn negative<T>(v: &str, from: fn(&str, u32) -> Result<T, std::num::ParseIntError>) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = v.strip_prefix(prefix)
            && let Ok(n) = from(&format!("-{rest}"), radix)
        {
            return Some(n);
        }
    }
    if digits_but_not_number(v) {
        return None;
    }
    from(v, 10).ok()
}

/// serde_yaml's `digits_but_not_number`: a leading zero followed by digits is a string.
fn digits_but_not_number(v: &str) -> bool {
    let v = v.strip_prefix(['-', '+']).unwrap_or(v);
    v.len() > 1 && v.starts_with('0') && v[1..].bytes().all(|b| b.is_ascii_digit())
}

/// serde_yaml's `parse_f64`.
fn serde_f64(v: &str) -> Option<f64> {
    let unpositive = match v.strip_prefix('+') {
        Some(u) if u.starts_with(['+', '-']) => return None,
        Some(u) => u,
        None => v,
    };
    if matches!(unpositive, ".inf" | ".Inf" | ".INF") {
        return Some(f64::INFINITY);
    }
    if matches!(v, "-.inf" | "-.Inf" | "-.INF") {
        return Some(f64::NEG_INFINITY);
    }
    if matches!(v, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN.copysign(1.0));
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// go-yaml v3 `resolve(tag, text)`, as checked against kubectl kustomize in the golden
    /// cases `yaml-explicit-core-tags` and `error-yaml-tag-mismatch`.
    #[test]
    fn tagged_scalars_resolve_under_their_tag() {
        let ok = |tag: &str, text: &str| resolve_tagged(tag, text).unwrap();
        assert_eq!(ok("null", "~"), Node::Null);
        assert_eq!(ok("null", ""), Node::Null);
        assert_eq!(ok("float", "1"), Node::Float(1.0));
        assert_eq!(ok("float", "1e3"), Node::Float(1000.0));
        assert_eq!(ok("int", "017"), Node::Int(15));
        assert_eq!(ok("int", "1_000"), Node::Int(1000));
        assert_eq!(ok("int", "0o17"), Node::Int(15));
        assert_eq!(ok("bool", "True"), Node::Bool(true));
        assert_eq!(
            ok("timestamp", "2001-12-14"),
            Node::str("2001-12-14T00:00:00Z")
        );
        let err = resolve_tagged("bool", "yes").unwrap_err();
        assert!(
            err.starts_with("cannot decode !!str `yes` as a !!bool"),
            "{err}"
        );
        let err = resolve_tagged("int", "1.5").unwrap_err();
        assert!(
            err.starts_with("cannot decode !!float `1.5` as a !!int"),
            "{err}"
        );
        // A date is a timestamp only under `!!timestamp`.
        let err = resolve_tagged("int", "2001-12-14").unwrap_err();
        assert!(
            err.starts_with("cannot decode !!str `2001-12-14` as a !!int"),
            "{err}"
        );
        // Go holds an integer beyond int64 as a uint64, which `!!float` does not take.
        let err = resolve_tagged("float", "18446744073709551615").unwrap_err();
        assert!(err.starts_with("cannot decode !!int"), "{err}");
        assert!(resolve_tagged("null", "foo").is_err());
        assert!(resolve_tagged("timestamp", "1").is_err());
    }

    #[test]
    fn timestamps_print_as_go_marshals_them() {
        let cases = [
            ("2001-1-2", "2001-01-02T00:00:00Z"),
            (
                "2001-12-14t21:59:43.10-05:00",
                "2001-12-14T21:59:43.1-05:00",
            ),
            ("2001-12-14 21:59:43.10", "2001-12-14T21:59:43.1Z"),
            ("2001-12-14  1:2:3.000", "2001-12-14T01:02:03Z"),
            (
                "2024-02-29T01:02:03.1234567891+00:00",
                "2024-02-29T01:02:03.123456789Z",
            ),
            ("2001-12-14T21:59:43.5+01:30", "2001-12-14T21:59:43.5+01:30"),
        ];
        for (text, want) in cases {
            assert_eq!(timestamp_rfc3339(text).as_deref(), Some(want), "{text}");
        }
        assert_eq!(timestamp_rfc3339("2001-02-30"), None);
    }

    #[test]
    fn resolution() {
        assert_eq!(resolve_number("0777"), Some(Node::Int(511)));
        assert_eq!(resolve_number("1_000"), Some(Node::Int(1000)));
        assert_eq!(resolve_number("0X1F"), Some(Node::Int(31)));
        assert_eq!(resolve_number("08"), Some(Node::Float(8.0)));
        assert_eq!(resolve_number("._5"), None);
        assert_eq!(resolve_number("1e400"), None);
        assert!(is_timestamp("2024-1-1"));
        assert!(is_timestamp("2001-12-14  21:59:43"));
        assert!(!is_timestamp("2024-02-30"));
        assert!(!is_timestamp("2001-12-14T21:59:43"));
        assert!(is_base60("0:20") && is_base60("+1:20.5") && !is_base60("1:60"));
    }

    #[test]
    fn lenient_plain_scalars() {
        assert_eq!(resolve_plain_lenient("8080"), Node::Int(8080));
        assert_eq!(resolve_plain_lenient("true"), Node::Bool(true));
        assert_eq!(resolve_plain_lenient("1.5"), Node::Float(1.5));
        assert_eq!(resolve_plain_lenient(""), Node::Null);
        assert_eq!(resolve_plain_lenient("1.2.3"), Node::str("1.2.3"));
        assert_eq!(resolve_plain_lenient("abc"), Node::str("abc"));
        assert_eq!(resolve_plain_lenient("yes"), Node::str("yes"));
    }
}
