//! [`Node`] → JSON text, the one JSON writer of ply: compact with map keys sorted, as Go's
//! `encoding/json` (and jsoniter's compatible mode) prints a decoded `map[string]interface{}`,
//! or indented in the map's own order. Each caller picks a [`JsonStyle`] preset: kustomize's
//! name hash, managed fields and last-applied annotations, `ply diff --format json`. Writes
//! only; ply reads JSON with its YAML parser (and `merge::ssa::value` for fieldsV1 keys).

use std::fmt::Write as _;

use super::Node;

/// How JSON text is written. The presets are the forms ply's callers need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JsonStyle {
    /// Map keys sorted bytewise (Go sorts the keys of a map) rather than in the map's order.
    pub sort_keys: bool,
    /// `<`, `>` and `&` as `\u003c`, `\u003e`, `\u0026` (Go's default HTML-safe escaping).
    pub html_safe: bool,
    /// Backspace and form feed as `\b` and `\f` (`encoding/json` since Go 1.22) instead of
    /// `\u0008` and `\u000c` (jsoniter, older Go).
    pub short_bf: bool,
    /// Integers written as float64 values: `encoding/json` decodes every number into
    /// `interface{}` as a float64 before writing it again.
    pub ints_as_f64: bool,
    /// Two-space indentation, one entry per line, `": "` after keys; compact otherwise.
    pub indent: bool,
}

impl JsonStyle {
    /// Compact, keys sorted, HTML-safe, integers exact, other control characters as `\u00XX`:
    /// what kubectl writes into the last-applied annotation and what structured-merge-diff
    /// writes for managed fields (`fieldsV1` keys, list-item keys, values in conflicts).
    pub(crate) const COMPACT: JsonStyle = JsonStyle {
        sort_keys: true,
        html_safe: true,
        short_bf: false,
        ints_as_f64: false,
        indent: false,
    };

    /// The text kustomize hashes for a generated name (`api/hasher/hasher.go` `encodeConfigMap`
    /// / `encodeSecret`: `json.Marshal` of values decoded into `interface{}`).
    pub(crate) const KUSTOMIZE_HASH: JsonStyle = JsonStyle {
        sort_keys: true,
        html_safe: true,
        short_bf: true,
        ints_as_f64: true,
        indent: false,
    };

    /// Indented, keys in the map's order (`ply diff --format json`).
    pub(crate) const PRETTY: JsonStyle = JsonStyle {
        sort_keys: false,
        html_safe: true,
        short_bf: false,
        ints_as_f64: false,
        indent: true,
    };
}

/// `node` as JSON text in `style` (no trailing newline).
pub(crate) fn to_json(node: &Node, style: JsonStyle) -> String {
    let mut out = String::new();
    write_json(&mut out, node, style);
    out
}

/// Appends `node` as JSON text in `style`.
pub(crate) fn write_json(out: &mut String, node: &Node, style: JsonStyle) {
    write_value(out, node, style, 0);
}

fn write_value(out: &mut String, node: &Node, style: JsonStyle, depth: usize) {
    match node.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        #[allow(clippy::cast_precision_loss)] // reason: Go decodes every JSON number as float64
        Node::Int(i) if style.ints_as_f64 => out.push_str(&go_float(*i as f64)),
        Node::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Node::Float(f) => out.push_str(&go_float(*f)),
        Node::Str(s) => write_json_string(out, s, style),
        Node::Seq(items) if items.is_empty() => out.push_str("[]"),
        Node::Map(m) if m.is_empty() => out.push_str("{}"),
        Node::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                separator(out, style, i, depth + 1);
                write_value(out, item, style, depth + 1);
            }
            close(out, style, depth);
            out.push(']');
        }
        Node::Map(m) => {
            let mut entries: Vec<(&String, &Node)> = m.iter().collect();
            if style.sort_keys {
                entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            }
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                separator(out, style, i, depth + 1);
                write_json_string(out, k, style);
                out.push_str(if style.indent { ": " } else { ":" });
                write_value(out, v, style, depth + 1);
            }
            close(out, style, depth);
            out.push('}');
        }
    }
}

/// What comes before the `i`-th entry of a container at `depth`: a comma after the first, and
/// in indented style a new line and the indentation.
fn separator(out: &mut String, style: JsonStyle, i: usize, depth: usize) {
    if i > 0 {
        out.push(',');
    }
    if style.indent {
        out.push('\n');
        push_indent(out, depth);
    }
}

/// Before the closing bracket of a non-empty container at `depth`.
fn close(out: &mut String, style: JsonStyle, depth: usize) {
    if style.indent {
        out.push('\n');
        push_indent(out, depth);
    }
}

fn push_indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// Appends `s` as a JSON string: `"` and `\` escaped, `\n` `\r` `\t` (and `\b` `\f` with
/// [`JsonStyle::short_bf`]) short, other control characters as `\u00XX`, U+2028 and U+2029
/// always escaped (Go does, for JavaScript), `<` `>` `&` with [`JsonStyle::html_safe`].
pub(crate) fn write_json_string(out: &mut String, s: &str, style: JsonStyle) {
    out.reserve(s.len() + 2);
    out.push('"');
    // Characters written as they are are copied a run at a time; `start` is where the current
    // run begins. Every escaped character is ASCII or U+2028/U+2029 (three bytes, lead byte
    // 0xe2), so each cut falls on a character boundary.
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let (escape, width) = match b {
            b'"' => ("\\\"", 1),
            b'\\' => ("\\\\", 1),
            b'\n' => ("\\n", 1),
            b'\r' => ("\\r", 1),
            b'\t' => ("\\t", 1),
            0x08 if style.short_bf => ("\\b", 1),
            0x0c if style.short_bf => ("\\f", 1),
            b'<' if style.html_safe => ("\\u003c", 1),
            b'>' if style.html_safe => ("\\u003e", 1),
            b'&' if style.html_safe => ("\\u0026", 1),
            0xe2 if bytes.get(i + 1..i + 3) == Some(&[0x80, 0xa8]) => ("\\u2028", 3),
            0xe2 if bytes.get(i + 1..i + 3) == Some(&[0x80, 0xa9]) => ("\\u2029", 3),
            // Other control characters: written below as `\u00XX`.
            0x00..=0x1f => ("", 1),
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(s.get(start..i).unwrap_or(""));
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        i += width;
        start = i;
    }
    out.push_str(s.get(start..).unwrap_or(""));
    out.push('"');
}

/// A float64 as `encoding/json` writes it (`floatEncoder` in Go's `encode.go`): shortest
/// round-trip digits, plain notation for 1e-6 <= |f| < 1e21 (and zero), exponent notation
/// outside with an unpadded exponent (`1e+21`, `1.5e-7`). JSON has no non-finite numbers
/// (Go's encoder refuses them); they print as `null` so the output stays stable.
pub(crate) fn go_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return format!("{f}");
    }
    // Rust's `{:e}` prints `1e21` / `1.5e-7`; Go prints `1e+21` / `1.5e-7`.
    let sci = format!("{f:e}");
    match sci.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => sci,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn node(yaml: &str) -> Node {
        parse_one(yaml).unwrap()
    }

    #[test]
    fn compact_sorts_keys_like_go() {
        let n = node("{b: 1, a: [x, 2.5, true, null], c: {z: '<&>', y: 1.0}}");
        assert_eq!(
            to_json(&n, JsonStyle::COMPACT),
            r#"{"a":["x",2.5,true,null],"b":1,"c":{"y":1,"z":"\u003c\u0026\u003e"}}"#
        );
        assert_eq!(
            to_json(&node("{a: [], b: {}}"), JsonStyle::COMPACT),
            r#"{"a":[],"b":{}}"#
        );
    }

    #[test]
    fn keys_sort_bytewise() {
        let n = node("{b: 1, B: 2, é: 3, a: 4}");
        assert_eq!(
            to_json(&n, JsonStyle::COMPACT),
            r#"{"B":2,"a":4,"b":1,"é":3}"#
        );
    }

    #[test]
    fn string_escaping() {
        let s = Node::str("a<b>&c\"\\\n\r\t\u{1}\u{8}\u{c}\u{2028}\u{2029}é");
        assert_eq!(
            to_json(&s, JsonStyle::COMPACT),
            r#""a\u003cb\u003e\u0026c\"\\\n\r\t\u0001\u0008\u000c\u2028\u2029é""#
        );
        assert_eq!(
            to_json(&s, JsonStyle::KUSTOMIZE_HASH),
            r#""a\u003cb\u003e\u0026c\"\\\n\r\t\u0001\b\f\u2028\u2029é""#
        );
        // Other characters encoded with the lead byte of U+2028 stay as they are.
        assert_eq!(
            to_json(
                &Node::str("\u{2026}\u{2027}x\u{2028}\u{202a}"),
                JsonStyle::COMPACT
            ),
            "\"\u{2026}\u{2027}x\\u2028\u{202a}\""
        );
        let plain = JsonStyle {
            html_safe: false,
            ..JsonStyle::COMPACT
        };
        assert_eq!(to_json(&Node::str("<&>"), plain), r#""<&>""#);
    }

    #[test]
    fn numbers() {
        assert_eq!(go_float(3.0), "3");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(-2.0), "-2");
        assert_eq!(go_float(1000.0), "1000");
        assert_eq!(go_float(0.000001), "0.000001");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1.5e-7), "1.5e-7");
        assert_eq!(go_float(1e-7), "1e-7");
        assert_eq!(go_float(f64::NAN), "null");
        let big = Node::Int(12_345_678_901_234_567_891);
        assert_eq!(to_json(&big, JsonStyle::COMPACT), "12345678901234567891");
        assert_eq!(
            to_json(&big, JsonStyle::KUSTOMIZE_HASH),
            "12345678901234567000"
        );
        assert_eq!(to_json(&Node::Int(3), JsonStyle::KUSTOMIZE_HASH), "3");
    }

    #[test]
    fn pretty_keeps_order() {
        let n = node("{b: [], a: {x: \"q\\n\"}, c: [1, {}]}");
        assert_eq!(
            to_json(&n, JsonStyle::PRETTY),
            "{\n  \"b\": [],\n  \"a\": {\n    \"x\": \"q\\n\"\n  },\n  \"c\": [\n    1,\n    {}\n  ]\n}"
        );
    }
}
