//! Whether a text is strict JSON (RFC 8259), as Go's `encoding/json` decodes it: no trailing
//! commas, comments, single quotes or unquoted keys, one value and nothing after it but
//! whitespace. kustomize decodes a patch whose text opens with `[` this way, without YAML
//! (`jsonPatchFromBytes` in `api/internal/builtins/PatchTransformer.go`), so a patch ply reads
//! with its YAML parser is first checked here. One pass over the bytes, no recursion (a deep
//! text cannot overflow the stack).

/// Where strict JSON syntax first fails in `text` (byte offset and what was found), or `None`
/// when the text is one JSON value.
pub(crate) fn syntax_error(text: &str) -> Option<(usize, String)> {
    let b = text.as_bytes();
    // Open containers: `true` for an object, `false` for an array.
    let mut stack: Vec<bool> = Vec::new();
    let mut i = skip_ws(b, 0);
    let found = |i: usize| -> String {
        match text[i..].chars().next() {
            Some(c) => format!("{c:?}"),
            None => "the end of the text".into(),
        }
    };
    let key_error = |at: usize| (at, format!("expected a quoted key, found {}", found(at)));
    loop {
        // A value is expected at `i`.
        match b.get(i) {
            Some(b'{') => {
                i = skip_ws(b, i + 1);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    stack.push(true);
                    i = match key(b, i) {
                        Ok(next) => next,
                        Err(at) => return Some(key_error(at)),
                    };
                    continue;
                }
            }
            Some(b'[') => {
                i = skip_ws(b, i + 1);
                if b.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    stack.push(false);
                    continue;
                }
            }
            Some(b'"') => match string_end(b, i) {
                Some(end) => i = end,
                None => return Some((i, "an unterminated or invalid string".into())),
            },
            Some(b't') if b[i..].starts_with(b"true") => i += 4,
            Some(b'f') if b[i..].starts_with(b"false") => i += 5,
            Some(b'n') if b[i..].starts_with(b"null") => i += 4,
            Some(b'-' | b'0'..=b'9') => match number_end(b, i) {
                Some(end) => i = end,
                None => return Some((i, "an invalid number".into())),
            },
            _ => return Some((i, format!("expected a value, found {}", found(i)))),
        }
        // After a value: a separator, a closer, or the end.
        loop {
            i = skip_ws(b, i);
            let Some(&in_object) = stack.last() else {
                return (i < b.len())
                    .then(|| (i, format!("text after the JSON value: {}", found(i))));
            };
            match (b.get(i), in_object) {
                (Some(b','), true) => {
                    i = match key(b, skip_ws(b, i + 1)) {
                        Ok(next) => next,
                        Err(at) => return Some(key_error(at)),
                    };
                    break;
                }
                (Some(b','), false) => {
                    i = skip_ws(b, i + 1);
                    break;
                }
                (Some(b'}'), true) | (Some(b']'), false) => {
                    stack.pop();
                    i += 1;
                }
                _ => {
                    let want = if in_object {
                        "`,` or `}`"
                    } else {
                        "`,` or `]`"
                    };
                    return Some((i, format!("expected {want}, found {}", found(i))));
                }
            }
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// `"key"` then `:` then whitespace: the offset of the value, or where it failed.
fn key(b: &[u8], i: usize) -> Result<usize, usize> {
    if b.get(i) != Some(&b'"') {
        return Err(i);
    }
    let end = string_end(b, i).ok_or(i)?;
    let colon = skip_ws(b, end);
    if b.get(colon) != Some(&b':') {
        return Err(colon);
    }
    Ok(skip_ws(b, colon + 1))
}

/// The byte after the string opening at `i`; `None` when it is not closed or holds a control
/// character or a bad escape.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match *b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *b.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' if b.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => i += 6,
                _ => return None,
            },
            c if c < 0x20 => return None,
            _ => i += 1,
        }
    }
}

fn number_end(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    i = if b.get(i) == Some(&b'0') {
        i + 1
    } else {
        digits(b, i)?
    };
    if b.get(i) == Some(&b'.') {
        i = digits(b, i + 1)?;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(b, i)?;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::syntax_error;

    #[test]
    fn strict_json_is_accepted() {
        for ok in [
            "[]",
            " [ {\"op\": \"add\", \"path\": \"/a\", \"value\": [1, -2.5e3, true, null, {}]} ] \n",
            "{\"a\": \"\\u00e9\\n\", \"b\": {\"c\": []}}",
            "0",
        ] {
            assert_eq!(syntax_error(ok), None, "{ok}");
        }
    }

    #[test]
    fn what_go_refuses_is_refused_where_it_goes_wrong() {
        for (bad, at) in [
            ("[{\"op\": \"add\"}, ]", 16),
            ("[{\"op\": \"add\", }]", 15),
            ("[{op: add}]", 2),
            ("['x']", 1),
            ("[1] # c", 4),
            ("[1]\n---\n", 4),
            ("[01]", 2),
            ("[\"a\tb\"]", 1),
            ("[[[", 3),
            ("{\"a\" 1}", 5),
        ] {
            assert_eq!(syntax_error(bad).map(|e| e.0), Some(at), "{bad}");
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(syntax_error(&deep), None);
    }
}
