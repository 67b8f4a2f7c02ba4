//! The value a folded block scalar (`key: >`) has after kustomize prints it: kustomize writes
//! every resource with go-yaml v3, which keeps the folded style of a scalar it read, and reads
//! the text back (`kyaml` `RNode.MarshalJSON`: `rn.String()`, then `yaml.Unmarshal`). go-yaml
//! v3's `yaml_emitter_write_folded_scalar` (emitterc.go) decides whether a line break needs an
//! extra empty line from the first character of the *whole value* (`k := 0`, where libyaml
//! starts at the current position: go-yaml/yaml#827). So a value that starts with a non-blank
//! character gains an empty line before each run of more-indented lines, and a value that
//! starts with a blank loses the empty line that keeps two normal lines apart. Reading the
//! printed text back turns that into a changed value; ply computes it once, when it reads the
//! scalar, which is where the value is first printed in kustomize too (each later print starts
//! from JSON, without the folded style). This file prints the scalar; the reader reads it back
//! (`parse.rs`, `reread_folded`). Also which block scalars go-yaml v3 prints but cannot
//! read back (a first line that starts with a tab).

use super::{Node, ScalarStyle};

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t')
}

/// `k: >` and the value, as go-yaml v3's emitter writes it (line folding at the best width
/// left out: a folded line reads back as the space it replaced). `parse.rs` reads it back
/// (`reread_folded`): this file only prints, so that it needs no reader.
pub(super) fn emit(v: &str) -> String {
    let chars: Vec<char> = v.chars().collect();
    let mut out = String::from("k: >");
    // yaml_emitter_write_block_scalar_hints
    if chars.first().is_some_and(|&c| c == ' ' || is_break(c)) {
        out.push('2');
    }
    match chars.as_slice() {
        [] => out.push('-'),
        [.., last] if !is_break(*last) => out.push('-'),
        [_] => out.push('+'),
        [.., before, _] if is_break(*before) => out.push('+'),
        _ => {}
    }
    // go-yaml's bug: the character looked at is the first non-break of the whole value.
    let first_content = chars.iter().copied().find(|&c| !is_break(c));
    let first_is_blankz = first_content.is_none_or(is_blank);
    let mut breaks = true;
    let mut leading_spaces = true;
    let mut at_header = true;
    for &c in &chars {
        if is_break(c) {
            if !breaks && !leading_spaces && c == '\n' && !first_is_blankz {
                out.push('\n');
            }
            if at_header {
                // The header line ends before the value's first break.
                out.push('\n');
                at_header = false;
            }
            out.push(c);
            breaks = true;
        } else {
            if breaks {
                if at_header {
                    out.push('\n');
                    at_header = false;
                }
                out.push_str("  ");
                leading_spaces = is_blank(c);
            }
            out.push(c);
            breaks = false;
        }
    }
    if at_header || !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Whether go-yaml v3 prints `s`, a scalar in a block style (literal or folded, kept from the
/// input or chosen for a multi-line string), as a block whose first line starts with a tab,
/// which its reader then refuses (`found a tab character where an indentation space is
/// expected`): `s` starts with a tab (no indentation indicator is written for one,
/// `yaml_emitter_write_block_scalar_hints`) and a block is allowed
/// (`yaml_emitter_analyze_scalar`: no trailing space, no space before a line break, only
/// printable characters; else the emitter falls back to double quotes).
pub(crate) fn block_starts_with_tab(s: &str) -> bool {
    s.starts_with('\t')
        && !s.ends_with(' ')
        && ![" \n", " \r", " \u{85}", " \u{2028}", " \u{2029}"]
            .iter()
            .any(|space_break| s.contains(space_break))
        && s.chars().all(|c| c == '\t' || go_yaml_printable(c))
}

/// Where a value of `node` (an object at the end of a build) is one kustomize cannot print:
/// a multi-line string whose first line starts with a tab ([`block_starts_with_tab`]) held
/// without a kept quoted style, which go-yaml v3 writes as a literal block and cannot read
/// back. kyaml keeps a node's style through most writes: a replacement changes only a scalar
/// target's text, a strategic merge patch gives its value the style of the one it replaces
/// (`FieldSetter`), so such a value over a plain one, a created field, a generator's values
/// (`Set`), an object printed by a JSON 6902 patch (`Printed`), or a name written by
/// `namePrefix` fails there (checked with both kubectls). The path of the first such value,
/// dotted; list items are not looked at (they carry no style here).
pub(crate) fn unprintable_block(node: &Node) -> Option<String> {
    let Node::Map(m) = node else {
        return None;
    };
    for (i, (k, v)) in m.iter().enumerate() {
        let found = match v {
            // The first byte first: nearly every value of every object is looked at here.
            Node::Str(s)
                if s.as_bytes().first() == Some(&b'\t')
                    && matches!(
                        m.style_index(i),
                        ScalarStyle::Plain
                            | ScalarStyle::PlainWritten
                            | ScalarStyle::Set
                            | ScalarStyle::Printed
                    )
                    && s.contains('\n')
                    && block_starts_with_tab(s) =>
            {
                Some(String::new())
            }
            Node::Map(_) => unprintable_block(v),
            Node::Seq(items) => items.iter().enumerate().find_map(|(j, item)| {
                unprintable_block(item).map(|p| format!("{j}{}", dotted(&p)))
            }),
            _ => None,
        };
        if let Some(rest) = found {
            return Some(format!("{k}{}", dotted(&rest)));
        }
    }
    None
}

fn dotted(rest: &str) -> String {
    if rest.is_empty() {
        String::new()
    } else {
        format!(".{rest}")
    }
}

/// go-yaml's `is_printable` (yamlprivateh.go), which `yaml_emitter_analyze_scalar` asks of
/// every character but a tab: a line feed, ASCII from space to `~`, U+00A0 to U+D7FF, U+E000
/// to U+FFFD but the byte order mark. Not a carriage return, NEL (U+0085), C1 controls, nor
/// any character beyond U+FFFF (its four UTF-8 bytes match none of the cases): a value holding
/// one is written double-quoted, never as a block.
fn go_yaml_printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{a0}'..='\u{d7ff}')
        || (('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::block_starts_with_tab;

    #[test]
    fn blocks_that_start_with_a_tab() {
        for s in [
            "\tx",
            "\tx\n",
            "\tx\ny\n",
            "\t\ty",
            "\t",
            "\tx\n\u{a0}y\n",
            "\tx\u{2028}y",
        ] {
            assert!(block_starts_with_tab(s), "{s:?}");
        }
        // Not tab-led, or written double-quoted (trailing space, space before a break, a
        // character the emitter does not print in a block).
        for s in [
            "x\n\ty",
            " \tx",
            "\tx ",
            "\tx \ny",
            "\t\u{80}",
            "\n\tx",
            // Checked with kubectl: these render (double-quoted).
            "\tx\n\u{1F600}\n",
            "\tx\n\u{85}y\n",
            "\tx \u{2028}y\n",
        ] {
            assert!(!block_starts_with_tab(s), "{s:?}");
        }
    }

    fn reread(v: &str) -> String {
        super::super::parse::reread_folded(v)
    }

    #[test]
    fn more_indented_lines_gain_an_empty_line() {
        assert_eq!(
            reread("one\n  more indented\ntwo\n"),
            "one\n\n  more indented\ntwo\n"
        );
        assert_eq!(reread("a\n b"), "a\n\n b");
        assert_eq!(
            reread("one\n\n  after an empty line\ntwo\n"),
            "one\n\n\n  after an empty line\ntwo\n"
        );
    }

    #[test]
    fn plain_folded_values_are_unchanged() {
        for v in ["a b c\n", "a\nb\n", "a\n\nb", "", "x"] {
            assert_eq!(reread(v), v, "{v:?}");
        }
    }

    #[test]
    fn kept_trailing_breaks_gain_one() {
        // Checked with kubectl kustomize: `>+` holding "a b\n\n" prints as `|+` with three.
        assert_eq!(reread("a b\n\n"), "a b\n\n\n");
        assert_eq!(reread("\nx\n y\n"), "\nx\n\n y\n");
    }

    #[test]
    fn a_value_that_starts_with_a_space_loses_line_breaks() {
        assert_eq!(reread(" lead\nb\nc\n  d\n"), " lead\nb c\n  d\n");
    }
}
