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
/// the value without a tag), except that timestamps stay strings (as in ply's readers,
/// `parse.rs` and `fast.rs`: a deliberate difference, `docs/compatibility.md`). Used by
/// configurations' value writers (`transform/value_add.rs`) and [`untagged_over`].
pub(crate) fn resolve_plain_v3(text: &str) -> Node {
    match resolve_plain_lenient(text) {
        n @ (Node::Null | Node::Bool(_)) => return n,
        Node::Float(f) if !f.is_finite() => return Node::Float(f),
        _ => {}
    }
    if text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
        && !is_timestamp(text)
        && let Some(n) = resolve_number(text)
    {
        return n;
    }
    Node::Str(text.to_string())
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
pub(super) fn yaml11_bool(v: &str) -> Option<bool> {
    match v {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
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
