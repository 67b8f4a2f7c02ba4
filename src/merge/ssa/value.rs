//! Value semantics server-side apply needs on [`Node`]: smd's total order and equality (ints and
//! floats compare numerically), the human form used in conflict messages, and the exact JSON
//! reading of path-element bodies (written by `crate::yaml::json`). Owns no I/O.

use std::cmp::Ordering;

use crate::yaml::{Map, Node};

/// smd `value.Compare` (`smd:value/value.go` `CompareUsing`): numbers < strings < booleans <
/// lists < maps < null; ints and floats compared as floats.
pub fn compare(a: &Node, b: &Node) -> Ordering {
    use Node::*;
    match (a.unspelled(), b.unspelled()) {
        (Spelled(_), _) | (_, Spelled(_)) => {
            unreachable!("`unspelled` never returns a spelled node")
        }
        (Float(x), Float(y)) => float_cmp(*x, *y),
        (Float(x), Int(y)) => float_cmp(*x, *y as f64),
        (Int(x), Float(y)) => float_cmp(*x as f64, *y),
        (Float(_), _) => Ordering::Less,
        (_, Float(_)) => Ordering::Greater,
        (Int(x), Int(y)) => x.cmp(y),
        (Int(_), _) => Ordering::Less,
        (_, Int(_)) => Ordering::Greater,
        (Str(x), Str(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Str(_), _) => Ordering::Less,
        (_, Str(_)) => Ordering::Greater,
        (Bool(x), Bool(y)) => x.cmp(y),
        (Bool(_), _) => Ordering::Less,
        (_, Bool(_)) => Ordering::Greater,
        (Seq(x), Seq(y)) => {
            for (l, r) in x.iter().zip(y.iter()) {
                let c = compare(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Seq(_), _) => Ordering::Less,
        (_, Seq(_)) => Ordering::Greater,
        (Map(x), Map(y)) => map_compare(x, y),
        (Map(_), _) => Ordering::Less,
        (_, Map(_)) => Ordering::Greater,
        (Null, Null) => Ordering::Equal,
    }
}

fn float_cmp(x: f64, y: f64) -> Ordering {
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

/// smd `MapCompareUsing`: walk the union of keys in lexical order; the first difference decides.
fn map_compare(l: &Map, r: &Map) -> Ordering {
    if l.is_empty() && r.is_empty() {
        return Ordering::Equal;
    }
    let mut keys: Vec<&String> = l.keys().chain(r.keys()).collect();
    keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    keys.dedup();
    for (i, k) in keys.iter().enumerate() {
        let c = if i == l.len() {
            Ordering::Less
        } else if i == r.len() {
            Ordering::Greater
        } else {
            match (l.get(k), r.get(k)) {
                (None, _) => Ordering::Greater,
                (_, None) => Ordering::Less,
                (Some(a), Some(b)) => compare(a, b),
            }
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

/// smd `value.Equals`: deep equality, ints and floats equal when numerically equal, map key
/// order irrelevant, list order relevant.
pub fn equals(a: &Node, b: &Node) -> bool {
    use Node::*;
    match (a, b) {
        (Float(x), Float(y)) => x == y,
        (Float(x), Int(y)) | (Int(y), Float(x)) => *x == *y as f64,
        (Int(x), Int(y)) => x == y,
        (Str(x), Str(y)) => x == y,
        (Bool(x), Bool(y)) => x == y,
        (Seq(x), Seq(y)) => x.len() == y.len() && x.iter().zip(y).all(|(l, r)| equals(l, r)),
        (Map(x), Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equals(v, w)))
        }
        (Null, Null) => true,
        _ => false,
    }
}

/// smd `value.ToString`: the form values take inside conflict paths (`[name="web"]`).
pub fn human(v: &Node) -> String {
    match v.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Null => "null".into(),
        Node::Float(f) => go_float_v(*f),
        Node::Int(i) => i.to_string(),
        Node::Str(s) => go_quote(s),
        Node::Bool(b) => b.to_string(),
        Node::Seq(items) => {
            let parts: Vec<String> = items.iter().map(human).collect();
            format!("[{}]", parts.join(","))
        }
        Node::Map(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            keys.iter()
                .map(|k| format!("{}={}", k, m.get(k).map(human).unwrap_or_default()))
                .collect()
        }
    }
}

/// Go `fmt.Sprintf("%v", f64)` (`strconv.FormatFloat(f, 'g', -1, 64)`): shortest digits,
/// exponent form when the decimal exponent is below -4 or at least 6 (`1e+06`).
pub fn go_float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// Go `strconv.Quote`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A parsed JSON value whose objects keep every entry in order (duplicates included), as a
/// streaming reader sees them.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// Numbers read as Go's jsoniter reads them into `interface{}`: always a float.
    Number(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value as a [`Node`] (objects: later duplicates win).
    pub fn into_node(self) -> Node {
        match self {
            Json::Null => Node::Null,
            Json::Bool(b) => Node::Bool(b),
            Json::Number(f) => Node::Float(f),
            Json::Str(s) => Node::Str(s),
            Json::Array(items) => Node::Seq(items.into_iter().map(Json::into_node).collect()),
            Json::Object(entries) => {
                let mut m = Map::with_capacity(entries.len());
                for (k, v) in entries {
                    m.insert(k, v.into_node());
                }
                Node::Map(m)
            }
        }
    }
}

/// Parses exactly one JSON value with optional surrounding whitespace; anything else (empty
/// input, trailing data, invalid escapes) is an error.
pub fn parse_json(text: &str) -> Result<Json, String> {
    let mut p = JsonParser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected trailing data at offset {}", p.i));
    }
    Ok(v)
}

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 10_000;

impl JsonParser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at offset {}", b as char, self.i))
        }
    }

    fn literal(&mut self, word: &str, v: Json) -> Result<Json, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(format!("invalid literal at offset {}", self.i))
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        match self.peek() {
            None => Err("unexpected end of JSON input".into()),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b'[') => {
                self.enter()?;
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        items.push(self.value()?);
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(format!("expected ',' or ']' at offset {}", self.i)),
                        }
                    }
                }
                self.depth -= 1;
                Ok(Json::Array(items))
            }
            Some(b'{') => {
                self.enter()?;
                self.i += 1;
                let mut entries = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        if self.peek() != Some(b'"') {
                            return Err(format!("expected a string key at offset {}", self.i));
                        }
                        let k = self.string()?;
                        self.ws();
                        self.expect(b':')?;
                        self.ws();
                        let v = self.value()?;
                        entries.push((k, v));
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(format!("expected ',' or '}}' at offset {}", self.i)),
                        }
                    }
                }
                self.depth -= 1;
                Ok(Json::Object(entries))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(format!("unexpected character at offset {}", self.i)),
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("JSON nested too deeply".into());
        }
        Ok(())
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(format!("invalid number at offset {start}")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(format!("invalid number at offset {start}"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(format!("invalid number at offset {start}"));
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
        text.parse::<f64>()
            .map(Json::Number)
            .map_err(|e| format!("invalid number {text}: {e}"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self
            .s
            .get(self.i..self.i + 4)
            .ok_or_else(|| "truncated \\u escape".to_string())?;
        let h = std::str::from_utf8(h).map_err(|e| e.to_string())?;
        let v = u32::from_str_radix(h, 16).map_err(|_| format!("invalid \\u escape {h}"))?;
        self.i += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return Err("unterminated string".into());
            };
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err("unterminated escape".into());
                    };
                    self.i += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi)
                                && self.s[self.i..].starts_with(b"\\u")
                            {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                        .unwrap_or('\u{FFFD}')
                                } else {
                                    self.i = save;
                                    '\u{FFFD}'
                                }
                            } else {
                                char::from_u32(hi).unwrap_or('\u{FFFD}')
                            }
                        }
                        _ => return Err(format!("invalid escape '\\{}'", e as char)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                b if b < 0x20 => return Err("control character in string".into()),
                b => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_numbers_strings_bools_lists_maps_null() {
        let seq = [
            Node::Int(1),
            Node::Float(1.5),
            Node::str("a"),
            Node::Bool(false),
            Node::Bool(true),
            Node::Seq(vec![]),
            Node::empty_map(),
            Node::Null,
        ];
        for w in seq.windows(2) {
            assert_eq!(
                compare(&w[0], &w[1]),
                Ordering::Less,
                "{:?} < {:?}",
                w[0],
                w[1]
            );
        }
        assert_eq!(compare(&Node::Int(2), &Node::Float(2.0)), Ordering::Equal);
        assert!(equals(&Node::Int(2), &Node::Float(2.0)));
        assert!(!equals(&Node::Null, &Node::empty_map()));
    }

    #[test]
    fn json_writing_is_go_compatible() {
        use crate::yaml::json::{JsonStyle, go_float, to_json};
        let s = to_json(&Node::str("<a&b>"), JsonStyle::COMPACT);
        assert_eq!(s, r#""\u003ca\u0026b\u003e""#);
        assert_eq!(go_float(1.0), "1");
        assert_eq!(go_float(1000.0), "1000");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1.5e-7), "1.5e-7");
        assert_eq!(go_float_v(1234.0), "1234");
        assert_eq!(go_float_v(2.5), "2.5");
    }

    #[test]
    fn json_parsing_is_strict() {
        assert!(parse_json("").is_err());
        assert!(parse_json("{} x").is_err());
        assert!(parse_json(r#""\x41""#).is_err());
        assert_eq!(parse_json(" 1e3 ").unwrap(), Json::Number(1000.0));
        assert_eq!(
            parse_json(r#""\ud83d\ude80""#).unwrap(),
            Json::Str("🚀".into())
        );
    }

    #[test]
    fn human_forms() {
        assert_eq!(human(&Node::str("web")), "\"web\"");
        assert_eq!(human(&Node::str("a\nb")), "\"a\\nb\"");
        assert_eq!(human(&Node::Int(80)), "80");
    }
}
