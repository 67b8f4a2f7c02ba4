//! Label selectors as `kubectl -l` takes them (`a=b,c!=d,e in (x,y),f notin (z),g,!h`), for
//! choosing the live objects `--prune` may delete (`diff`) and the objects a patch target's
//! `labelSelector`/`annotationSelector` names (`render/patches/select.rs`). Parses and matches;
//! nothing else.

use crate::diag::{Error, ErrorKind};
use crate::yaml::Node;

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector: every requirement must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

impl Selector {
    /// Parses kubectl's selector syntax (`k8s.io/apimachinery/pkg/labels` `Parse`).
    pub fn parse(text: &str) -> Result<Selector, Error> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::Usage,
                format!("invalid label selector {text:?}: {why}"),
            )
        };
        let mut requirements = Vec::new();
        for term in split_terms(text) {
            let term = term.trim();
            if term.is_empty() {
                if text.trim().is_empty() {
                    continue;
                }
                return Err(bad("empty requirement"));
            }
            let req = if let Some(k) = term.strip_prefix('!') {
                Requirement::NotExists(check_key(k.trim()).ok_or_else(|| bad("bad key"))?)
            } else if let Some((k, v)) = term.split_once("!=") {
                Requirement::NotEquals(
                    check_key(k.trim()).ok_or_else(|| bad("bad key"))?,
                    v.trim().into(),
                )
            } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                Requirement::Equals(
                    check_key(k.trim()).ok_or_else(|| bad("bad key"))?,
                    v.trim().into(),
                )
            } else if let Some((k, rest)) = split_set_op(term, " notin ") {
                Requirement::NotIn(
                    check_key(k).ok_or_else(|| bad("bad key"))?,
                    set_values(rest).ok_or_else(|| bad("expected (values)"))?,
                )
            } else if let Some((k, rest)) = split_set_op(term, " in ") {
                Requirement::In(
                    check_key(k).ok_or_else(|| bad("bad key"))?,
                    set_values(rest).ok_or_else(|| bad("expected (values)"))?,
                )
            } else {
                Requirement::Exists(check_key(term).ok_or_else(|| bad("bad key"))?)
            };
            requirements.push(req);
        }
        Ok(Selector { requirements })
    }

    /// Whether the object's `metadata.labels` satisfy every requirement.
    pub fn matches(&self, object: &Node) -> bool {
        let labels = object.get_path(&["metadata", "labels"]);
        let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Node::as_str);
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => !label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::NotExists(k) => label(k).is_none(),
        })
    }
}

/// Splits at commas outside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

fn split_set_op<'a>(term: &'a str, op: &str) -> Option<(&'a str, &'a str)> {
    term.split_once(op).map(|(k, r)| (k.trim(), r.trim()))
}

fn set_values(rest: &str) -> Option<Vec<String>> {
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

fn check_key(k: &str) -> Option<String> {
    let ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    ok.then(|| k.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn obj(labels: &str) -> Node {
        parse_one(&format!("metadata: {{labels: {labels}}}")).unwrap()
    }

    #[test]
    fn forms() {
        let o = obj("{app: web, tier: front}");
        for (sel, want) in [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (api, web)", true),
            ("app notin (api,web)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("app=web,tier=back", false),
            ("", true),
        ] {
            assert_eq!(Selector::parse(sel).unwrap().matches(&o), want, "{sel}");
        }
    }

    #[test]
    fn errors() {
        assert!(Selector::parse("a=b,,c").is_err());
        assert!(Selector::parse("a in x").is_err());
        assert!(Selector::parse("=b").is_err());
    }
}
