//! The values ply prints where kustomize fails or prints otherwise, by a deliberate difference
//! of `docs/compatibility.md` ("YAML output"): found for `--strict`, which reports them.

use super::Node;
use super::path::PathSeg;

/// A value of an object that kustomize would not print as ply does.
pub(crate) struct Difference {
    /// Where it sits in the object.
    pub(crate) path: Vec<PathSeg>,
    /// What kustomize does with it.
    pub(crate) what: &'static str,
}

const NON_FINITE: &str = "an infinity or NaN: kustomize fails on it (its JSON step: `json: \
                          unsupported value: +Inf`); ply prints `.inf`, `-.inf` or `.nan`";
const NEL: &str = "a NEL (U+0085): kustomize folds it into a space (go-yaml v2 reads it as a \
                   line break); ply keeps it, written `\\N`";
const CONTROL: &str = "a C1 control character, DEL or U+FFFE: kustomize fails on it (`yaml: \
                       control characters are not allowed`); ply keeps it, escaped";
const KEY_ORDER: &str = "keys that go-yaml v2's key order cannot put in one order (digit runs \
                         with leading zeros beside letters, `sorter.go`): kustomize prints them \
                         in an order that changes from run to run; ply in one fixed order";

/// The first value of `node` (depth first, in key order) that kustomize would not print as
/// ply does: a non-finite float, a string or key holding NEL, a C1 control, DEL or U+FFFE,
/// or map keys that go-yaml's order cannot sort.
pub(crate) fn first_difference(node: &Node) -> Option<Difference> {
    let mut open: Vec<(&Node, Vec<PathSeg>)> = vec![(node, Vec::new())];
    while let Some((node, path)) = open.pop() {
        let found = match node {
            Node::Float(f) if !f.is_finite() => Some(NON_FINITE),
            Node::Spelled(s) => {
                matches!(s.value, Node::Float(f) if !f.is_finite()).then_some(NON_FINITE)
            }
            Node::Str(s) => odd_characters(s),
            Node::Seq(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    open.push((item, child(&path, PathSeg::Index(i))));
                }
                None
            }
            Node::Map(map) => {
                if let Some((key, what)) =
                    map.keys().find_map(|k| odd_characters(k).map(|w| (k, w)))
                {
                    return Some(Difference {
                        path: child(&path, PathSeg::Key(key.to_string())),
                        what,
                    });
                }
                if !keys_in_one_order(map.keys().map(|k| k.as_ref())) {
                    Some(KEY_ORDER)
                } else {
                    let entries: Vec<_> = map.iter().collect();
                    for (k, v) in entries.into_iter().rev() {
                        open.push((v, child(&path, PathSeg::Key(k.to_string()))));
                    }
                    None
                }
            }
            _ => None,
        };
        if let Some(what) = found {
            return Some(Difference { path, what });
        }
    }
    None
}

fn child(path: &[PathSeg], seg: PathSeg) -> Vec<PathSeg> {
    let mut p = path.to_vec();
    p.push(seg);
    p
}

fn odd_characters(s: &str) -> Option<&'static str> {
    if s.is_ascii() {
        return s.contains('\x7f').then_some(CONTROL);
    }
    for c in s.chars() {
        match c {
            '\u{85}' => return Some(NEL),
            '\u{7f}'..='\u{9f}' | '\u{fffe}' => return Some(CONTROL),
            _ => {}
        }
    }
    None
}

/// Whether go-yaml v2's key comparison orders these keys one way only: always, unless a key
/// holds a digit run with a leading zero (`a01b`), where the comparison may not be
/// transitive; then every pair of the keys, in ply's order, must compare that way.
fn keys_in_one_order<'a>(keys: impl Iterator<Item = &'a str>) -> bool {
    let keys: Vec<&str> = keys.collect();
    let leading_zero = |k: &str| {
        let b = k.as_bytes();
        (0..b.len().saturating_sub(1)).any(|i| {
            b[i] == b'0' && b[i + 1].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit())
        })
    };
    if keys.len() < 3 || !keys.iter().any(|k| leading_zero(k)) {
        return true;
    }
    let mut sorted = keys;
    super::emit::merge_sort(&mut sorted, |a, b| super::emit::key_less(a, b));
    sorted
        .iter()
        .enumerate()
        .all(|(i, a)| sorted[i + 1..].iter().all(|b| super::emit::key_less(a, b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn found(text: &str) -> Option<(String, &'static str)> {
        let node = parse_one(text).unwrap();
        first_difference(&node).map(|d| {
            let path: Vec<String> = d
                .path
                .iter()
                .map(|s| match s {
                    PathSeg::Key(k) => k.clone(),
                    PathSeg::Index(i) => i.to_string(),
                })
                .collect();
            (path.join("."), d.what)
        })
    }

    #[test]
    fn finds_each_kind_with_its_path() {
        assert_eq!(
            found("a: {b: [1, .inf]}"),
            Some(("a.b.1".into(), NON_FINITE))
        );
        assert_eq!(found("a: x\nb: \"a\\Nb\""), Some(("b".into(), NEL)));
        assert_eq!(found("a: \"\\x80\""), Some(("a".into(), CONTROL)));
        assert_eq!(found("\"k\\x7f\": 1"), Some(("k\u{7f}".into(), CONTROL)));
        assert_eq!(
            found("m: {a1b: 1, a01b: 2, a10: 3}"),
            Some(("m".into(), KEY_ORDER))
        );
    }

    #[test]
    fn ordinary_values_have_none() {
        assert_eq!(
            found("a: {b: [1, 2.5, x]}\nc: \"é\"\nm: {a1: 1, a01: 2, b: 3}"),
            None
        );
        assert_eq!(found("m: {a01: 1, a02: 2, a03: 3}"), None);
    }
}
