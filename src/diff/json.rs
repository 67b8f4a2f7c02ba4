//! JSON text from [`Node`]: the compact, key-sorted form Go's `encoding/json` gives a
//! `map[string]interface{}` (what kubectl writes into the last-applied annotation), and an
//! indented form for `ply diff --format json`. Writes only; ply reads JSON with its YAML parser.

use std::fmt::Write as _;

use crate::yaml::Node;

/// Compact JSON with map keys sorted bytewise and Go's escaping (`<`, `>`, `&`, U+2028 and
/// U+2029 as `\u` escapes), as `json.Marshal` of an unstructured object prints it.
pub fn compact_sorted(node: &Node) -> String {
    let mut out = String::new();
    write_compact(&mut out, node);
    out
}

fn write_compact(out: &mut String, node: &Node) {
    match node {
        Node::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(out, item);
            }
            out.push(']');
        }
        Node::Map(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                if let Some(v) = m.get(*k) {
                    write_compact(out, v);
                }
            }
            out.push('}');
        }
        scalar => write_scalar(out, scalar),
    }
}

/// Indented JSON (two spaces), keys in the order the map holds them, ending with a newline.
pub fn pretty(node: &Node) -> String {
    let mut out = String::new();
    write_pretty(&mut out, node, 0);
    out.push('\n');
    out
}

fn write_pretty(out: &mut String, node: &Node, indent: usize) {
    match node {
        Node::Seq(items) if items.is_empty() => out.push_str("[]"),
        Node::Map(m) if m.is_empty() => out.push_str("{}"),
        Node::Seq(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                push_indent(out, indent + 1);
                write_pretty(out, item, indent + 1);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            push_indent(out, indent);
            out.push(']');
        }
        Node::Map(m) => {
            out.push_str("{\n");
            for (i, (k, v)) in m.iter().enumerate() {
                push_indent(out, indent + 1);
                write_string(out, k);
                out.push_str(": ");
                write_pretty(out, v, indent + 1);
                if i + 1 < m.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            push_indent(out, indent);
            out.push('}');
        }
        scalar => write_scalar(out, scalar),
    }
}

fn push_indent(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push_str("  ");
    }
}

fn write_scalar(out: &mut String, node: &Node) {
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Node::Float(f) => out.push_str(&go_float(*f)),
        Node::Str(s) => write_string(out, s),
        Node::Seq(_) | Node::Map(_) => {}
    }
}

/// A float as Go's `encoding/json` prints a float64: integral values without a fraction,
/// exponent form below 1e-6 and from 1e21 (`strconv.FormatFloat(f, 'e', -1, 64)`, with a
/// two-digit exponent). Non-finite values, which JSON cannot hold, print as `null`.
fn go_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        let digits = if digits.len() < 2 {
            format!("0{digits}")
        } else {
            digits.to_string()
        };
        format!("{mantissa}e{sign}{digits}")
    } else {
        format!("{f}")
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    #[test]
    fn compact_sorted_like_go() {
        let n = parse_one("{b: 1, a: [x, 2.5, true, null], c: {z: '<&>', y: 1.0}}").unwrap();
        assert_eq!(
            compact_sorted(&n),
            r#"{"a":["x",2.5,true,null],"b":1,"c":{"y":1,"z":"\u003c\u0026\u003e"}}"#
        );
    }

    #[test]
    fn go_floats() {
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1e-7), "1e-07");
        assert_eq!(go_float(0.000001), "0.000001");
        assert_eq!(go_float(-2.0), "-2");
    }

    #[test]
    fn pretty_keeps_order() {
        let n = parse_one("{b: [], a: {x: \"q\\n\"}}").unwrap();
        assert_eq!(
            pretty(&n),
            "{\n  \"b\": [],\n  \"a\": {\n    \"x\": \"q\\n\"\n  }\n}\n"
        );
    }
}
