//! The one path type for a field of a document: the [`PathSeg`]s (a map key or a list index)
//! from the document's root, with its one printed form (`spec.containers[0].image`,
//! `metadata.labels["app.kubernetes.io/name"]`, [`path_text`]) and its one parser
//! ([`parse_path`]). A kept path owns its keys (`PathSeg`, the default); a walk that pushes and
//! pops steps on a hot path borrows them (`PathSeg<&str>`, `PathSeg<Cow<str>>`): the same steps
//! with the key stored another way, compared and printed alike. Knows nothing of kustomize or
//! of where a path comes from; an item named by its key fields rather than its position (a
//! server-side apply or `ply diff` path) is `merge::ssa::PathElement`.

use std::borrow::Cow;

/// One step of a field path: a map key or a list index. `K` is how the key is stored: `String`
/// in a kept path, `&str` or `Cow<str>` while walking.
#[derive(Clone, Copy, Debug, Hash)]
pub enum PathSeg<K = String> {
    Key(K),
    Index(usize),
}

/// A field path from a document's root, owning its keys.
pub(crate) type FieldPath = Vec<PathSeg>;

impl<K: AsRef<str>> PathSeg<K> {
    /// The key, when this step is one.
    pub fn key(&self) -> Option<&str> {
        match self {
            PathSeg::Key(k) => Some(k.as_ref()),
            PathSeg::Index(_) => None,
        }
    }

    /// This step with its key borrowed.
    pub fn borrowed(&self) -> PathSeg<&str> {
        match self {
            PathSeg::Key(k) => PathSeg::Key(k.as_ref()),
            PathSeg::Index(i) => PathSeg::Index(*i),
        }
    }

    /// This step owning its key, to be kept.
    pub fn owned(&self) -> PathSeg {
        match self {
            PathSeg::Key(k) => PathSeg::Key(k.as_ref().to_string()),
            PathSeg::Index(i) => PathSeg::Index(*i),
        }
    }
}

impl<A: AsRef<str>, B: AsRef<str>> PartialEq<PathSeg<B>> for PathSeg<A> {
    /// Steps are equal whatever stores their keys.
    fn eq(&self, other: &PathSeg<B>) -> bool {
        match (self, other) {
            (PathSeg::Key(a), PathSeg::Key(b)) => a.as_ref() == b.as_ref(),
            (PathSeg::Index(a), PathSeg::Index(b)) => a == b,
            _ => false,
        }
    }
}

impl<K: AsRef<str>> Eq for PathSeg<K> {}

/// A path as its one printed form: keys joined by `.`, indexes as `[3]`, a key that a plain
/// path would read otherwise in quotes ([`push_key`]).
pub(crate) fn path_text<K: AsRef<str>>(path: &[PathSeg<K>]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            PathSeg::Key(k) => push_key(&mut s, k.as_ref()),
            PathSeg::Index(i) => push_index(&mut s, *i),
        }
    }
    s
}

/// Appends a map key to a printed path: `a.b`, or `a["b.c"]` when the key holds a character
/// that a plain path reads otherwise (`.`, `[`, `]`, `"`, `\`), starts with a space or is empty.
pub(crate) fn push_key(path: &mut String, key: &str) {
    // Bytes, not a search for a set of chars: this runs for every field a step changes.
    let plain = !key.is_empty()
        && !key.starts_with(' ')
        && !key
            .bytes()
            .any(|b| matches!(b, b'.' | b'[' | b']' | b'"' | b'\\'));
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push_str("[\"");
        for c in key.chars() {
            if c == '"' || c == '\\' {
                path.push('\\');
            }
            path.push(c);
        }
        path.push_str("\"]");
    }
}

/// Appends a list index to a printed path: `a[3]`.
pub(crate) fn push_index(path: &mut String, i: usize) {
    use std::fmt::Write as _;
    let _ = write!(path, "[{i}]");
}

/// Reads a printed path back into its steps; `None` when it is not one.
pub(crate) fn parse_path(text: &str) -> Option<FieldPath> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (seg, r) = next_seg(rest, out.is_empty())?;
        out.push(seg.owned());
        rest = r;
    }
    Some(out)
}

/// A printed path after its first `n` steps, from the next step's `.` or `[` (empty when the
/// path has no more, or stops being one).
pub(crate) fn skip_segs(text: &str, n: usize) -> &str {
    let mut rest = text;
    for i in 0..n {
        match next_seg(rest, i == 0) {
            Some((_, r)) => rest = r,
            None => return "",
        }
    }
    rest
}

/// The first step of a printed path and the text after it; `first` when it starts the path
/// (a key then has no `.` before it). The key is borrowed unless it had an escape.
fn next_seg(text: &str, first: bool) -> Option<(PathSeg<Cow<'_, str>>, &str)> {
    if let Some(r) = text.strip_prefix("[\"") {
        let (mut escaped, mut unescape) = (false, false);
        let end = r.char_indices().find_map(|(j, c)| {
            match c {
                _ if escaped => escaped = false,
                '\\' => (escaped, unescape) = (true, true),
                '"' => return Some(j),
                _ => {}
            }
            None
        })?;
        let body = &r[..end];
        let key = if unescape {
            let mut k = String::with_capacity(body.len());
            let mut chars = body.chars();
            while let Some(c) = chars.next() {
                k.push(if c == '\\' { chars.next()? } else { c });
            }
            Cow::Owned(k)
        } else {
            Cow::Borrowed(body)
        };
        return Some((PathSeg::Key(key), r[end + 1..].strip_prefix(']')?));
    }
    if let Some(r) = text.strip_prefix('[') {
        let end = r.find(']')?;
        return Some((PathSeg::Index(r[..end].parse().ok()?), &r[end + 1..]));
    }
    let rest = if first { text } else { text.strip_prefix('.')? };
    let end = rest.find(['.', '[']).unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    Some((PathSeg::Key(Cow::Borrowed(&rest[..end])), &rest[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> PathSeg {
        PathSeg::Key(k.to_string())
    }

    #[test]
    fn paths_print_and_read_back() {
        for (segs, text) in [
            (
                vec![
                    key("spec"),
                    key("containers"),
                    PathSeg::Index(0),
                    key("image"),
                ],
                "spec.containers[0].image",
            ),
            (
                vec![
                    key("metadata"),
                    key("labels"),
                    key("app.kubernetes.io/name"),
                ],
                "metadata.labels[\"app.kubernetes.io/name\"]",
            ),
            (vec![key("a\"b")], "[\"a\\\"b\"]"),
            (vec![key("x"), key("a\\b"), key("")], "x[\"a\\\\b\"][\"\"]"),
            (vec![key(" lead"), key("é[")], "[\" lead\"][\"é[\"]"),
            (vec![PathSeg::Index(2), key("x")], "[2].x"),
            (vec![], ""),
        ] {
            assert_eq!(path_text(&segs), text);
            assert_eq!(parse_path(text), Some(segs.clone()), "{text}");
            let borrowed: Vec<PathSeg<&str>> = segs.iter().map(PathSeg::borrowed).collect();
            assert_eq!(path_text(&borrowed), text);
            assert!(borrowed.iter().zip(&segs).all(|(a, b)| a == b));
        }
        for bad in ["a..b", "a[x]", ".a", "a.", "[\"a", "[\"a\"", "a[1", "[-1]"] {
            assert_eq!(parse_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn steps_compare_whatever_stores_the_key() {
        let owned = key("a");
        assert_eq!(PathSeg::Key("a"), owned);
        assert_eq!(PathSeg::Key(Cow::Borrowed("a")), owned);
        assert_ne!(PathSeg::<&str>::Index(0), owned);
        assert_eq!(PathSeg::Key(Cow::Borrowed("a")).owned(), owned);
        assert_eq!(owned.key(), Some("a"));
        assert_eq!(PathSeg::<String>::Index(1).key(), None);
    }

    /// A path after its first steps is the text the rest of its steps print.
    #[test]
    fn steps_skipped() {
        for text in [
            "spec.containers[0].image",
            "metadata.labels[\"app.kubernetes.io/name\"]",
            "[\"a\\\"b\"].c[2]",
            "[2].x",
            "a[\"]x[\"].b",
        ] {
            let segs = parse_path(text).expect(text);
            for n in 0..=segs.len() {
                let head = path_text(&segs[..n]);
                let all = path_text(&segs);
                let want = if n == 0 { text } else { &all[head.len()..] };
                assert_eq!(skip_segs(text, n), want, "{text}, {n}");
            }
            assert_eq!(skip_segs(text, segs.len() + 1), "");
        }
    }
}
