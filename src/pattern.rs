//! Fast matching for the anchored regular expressions kustomize builds from user text (patch
//! target selectors, image names). Most such patterns are plain names, where compiling a
//! `regex::Regex` per patch or per image entry dominated the render time; a pattern made only
//! of name characters and `.` (any character, as in a regular expression) is matched by hand,
//! every other pattern goes to the `regex` crate. Owns no kustomize semantics of its own.

use regex::Regex;

/// Whether `c` is matched literally by a regular expression outside a character class and
/// with no flags (the characters names, groups, versions and image references are made of).
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | ':' | '@' | '=' | ',')
}

/// Whether `pattern` needs no regular-expression engine: plain characters and `.`.
pub(crate) fn is_simple(pattern: &str) -> bool {
    pattern.chars().all(|c| c == '.' || is_plain(c))
}

/// The length in bytes of the prefix of `s` that a simple `pattern` matches (every character
/// of the pattern matches exactly one character; `.` any character but a line feed, as the
/// `regex` crate's `.` does), or `None`.
pub(crate) fn simple_prefix(pattern: &str, s: &str) -> Option<usize> {
    let mut rest = s.char_indices();
    for p in pattern.chars() {
        let (_, c) = rest.next()?;
        let ok = if p == '.' { c != '\n' } else { c == p };
        if !ok {
            return None;
        }
    }
    Some(rest.next().map_or(s.len(), |(i, _)| i))
}

/// An anchored pattern `^(?:p)$`.
#[derive(Debug, Clone)]
pub(crate) enum Anchored {
    Simple(String),
    Regex(Regex),
}

impl Anchored {
    /// Compiles `^(?:pattern)$`; the error is the `regex` crate's.
    pub(crate) fn new(pattern: &str) -> Result<Anchored, regex::Error> {
        if is_simple(pattern) {
            Ok(Anchored::Simple(pattern.to_string()))
        } else {
            Regex::new(&format!("^(?:{pattern})$")).map(Anchored::Regex)
        }
    }

    pub(crate) fn is_match(&self, s: &str) -> bool {
        match self {
            Anchored::Simple(p) => simple_prefix(p, s) == Some(s.len()),
            Anchored::Regex(re) => re.is_match(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand matcher agrees with the regex crate on simple patterns.
    #[test]
    fn simple_patterns_match_like_regex() {
        let patterns = [
            "app",
            "networking.k8s.io",
            "v1",
            "my-app_2",
            "a.c",
            "",
            "registry.example.com/team/app",
        ];
        let inputs = [
            "app",
            "apps",
            "ap",
            "networking.k8s.io",
            "networkingXk8sXio",
            "networking.k8s.io2",
            "v1",
            "V1",
            "my-app_2",
            "abc",
            "a\nc",
            "aéc",
            "",
            "registry.example.com/team/app",
            "registryXexampleXcom/team/app",
        ];
        for p in patterns {
            assert!(is_simple(p));
            let re = Regex::new(&format!("^(?:{p})$")).unwrap();
            let a = Anchored::new(p).unwrap();
            assert!(matches!(a, Anchored::Simple(_)));
            for s in inputs {
                assert_eq!(a.is_match(s), re.is_match(s), "{p:?} on {s:?}");
            }
        }
    }

    #[test]
    fn other_patterns_use_regex() {
        for p in ["app.*", "a|b", "[ab]", "x+", "a b", "(a)", "^a$", "a\\.b"] {
            assert!(!is_simple(p), "{p}");
        }
        let a = Anchored::new("app-.*").unwrap();
        assert!(a.is_match("app-x") && !a.is_match("xapp-x"));
        assert!(Anchored::new("(").is_err());
    }

    #[test]
    fn prefix_length_in_bytes() {
        assert_eq!(simple_prefix("a.", "aé:tag"), Some(3));
        assert_eq!(simple_prefix("ab", "a"), None);
        assert_eq!(simple_prefix("", "xyz"), Some(0));
    }
}
