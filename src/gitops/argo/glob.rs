//! The glob patterns of a directory source's `include` and `exclude` (Argo's `util/glob`, which
//! compiles them with github.com/gobwas/glob and no separators): `*` and `**` match any text,
//! `/` included; `?` one character; `[abc]`, `[a-z]`, `[!a]` classes; `{a,b}` alternatives;
//! `\` escapes. A pattern that does not compile matches nothing, as there.

/// Whether `text` matches `pattern`.
pub(crate) fn matches(pattern: &str, text: &str) -> bool {
    let Some(alternatives) = expand(pattern) else {
        return false;
    };
    let text: Vec<char> = text.chars().collect();
    alternatives.iter().any(|p| {
        let p: Vec<char> = p.chars().collect();
        match_at(&p, &text)
    })
}

/// The pattern with every `{a,b}` expanded (escapes kept); `None` when braces do not balance.
fn expand(pattern: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut depth = 0usize;
    let mut open = None;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '{' => {
                if depth == 0 {
                    open = Some(i);
                }
                depth += 1;
            }
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    let start = open?;
                    let head: String = chars[..start].iter().collect();
                    let tail: String = chars[i + 1..].iter().collect();
                    let mut out = Vec::new();
                    for alt in split_top(&chars[start + 1..i]) {
                        for rest in expand(&format!("{head}{alt}{tail}"))? {
                            out.push(rest);
                        }
                    }
                    return Some(out);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then(|| vec![pattern.to_string()])
}

/// The alternatives of a brace body, split at top-level commas.
fn split_top(body: &[char]) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut chars = body.iter();
    while let Some(&c) = chars.next() {
        match c {
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            '\\' => {
                cur.push(c);
                if let Some(&n) = chars.next() {
                    cur.push(n);
                }
                continue;
            }
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

fn match_at(p: &[char], t: &[char]) -> bool {
    let Some(&c) = p.first() else {
        return t.is_empty();
    };
    match c {
        '*' => {
            let rest = &p[p.iter().take_while(|c| **c == '*').count()..];
            (0..=t.len()).any(|k| match_at(rest, &t[k..]))
        }
        '?' => !t.is_empty() && match_at(&p[1..], &t[1..]),
        '[' => match class(p) {
            Some((matcher, len)) => {
                t.first().is_some_and(|ch| matcher(*ch)) && match_at(&p[len..], &t[1..])
            }
            None => false,
        },
        '\\' => match p.get(1) {
            Some(e) => t.first() == Some(e) && match_at(&p[2..], &t[1..]),
            None => false,
        },
        _ => t.first() == Some(&c) && match_at(&p[1..], &t[1..]),
    }
}

type ClassMatcher = Box<dyn Fn(char) -> bool>;

/// A `[...]` class at the start of `p`: its matcher and its length in the pattern.
fn class(p: &[char]) -> Option<(ClassMatcher, usize)> {
    let mut i = 1;
    let negated = p.get(1) == Some(&'!');
    if negated {
        i += 1;
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    while let Some(&c) = p.get(i) {
        if c == ']' {
            let m: ClassMatcher =
                Box::new(move |ch| ranges.iter().any(|(a, b)| *a <= ch && ch <= *b) != negated);
            return Some((m, i + 1));
        }
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            ranges.push((c, p[i + 2]));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn gobwas_without_separators() {
        assert!(matches("*.yaml", "sub/dir/a.yaml"), "* crosses /");
        assert!(matches("{config.json,*.yaml}", "config.json"));
        assert!(matches("{config.json,*.yaml}", "x.yaml"));
        assert!(!matches("{config.json,*.yaml}", "x.yml"));
        assert!(matches("sub/[a-c]?.y*ml", "sub/bx.yml"));
        assert!(matches("[!a]*", "b"));
        assert!(!matches("[!a]*", "a"));
        assert!(matches("**/deploy.yaml", "x/deploy.yaml"));
        assert!(!matches("{a", "a"), "unbalanced braces match nothing");
        assert!(matches("\\*", "*"));
    }
}
