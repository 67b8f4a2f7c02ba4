//! The changed field paths of a pair, in kubectl's form (`.spec.replicas`,
//! `.spec.template.spec.containers[name="web"].image`), for the summary, JSON and Markdown
//! outputs. List items are named by their schema keys when the list is associative, else by
//! index. Pure: compares two nodes.

use crate::resource::Gvk;
use crate::yaml::Node;

use super::engine::{KindInfo, PathElement, values_equal};
use crate::merge::ssa::path_string;

#[cfg(test)]
/// Paths where `before` and `after` differ (leaves, or the highest node added or removed).
pub(crate) fn changed_paths(
    kinds: &dyn KindInfo,
    gvk: &Gvk,
    before: &Node,
    after: &Node,
) -> Vec<String> {
    changes(kinds, gvk, before, after)
        .into_iter()
        .map(|c| c.path)
        .collect()
}

/// One changed path with its value on each side (`None` where absent): the report layer's.
pub(crate) use crate::report::Change;

/// The changes between `before` and `after`: the paths of [`changed_paths`] with their values.
pub(crate) fn changes(kinds: &dyn KindInfo, gvk: &Gvk, before: &Node, after: &Node) -> Vec<Change> {
    let mut out = Vec::new();
    let mut steps = Vec::new();
    let mut names = Vec::new();
    walk(kinds, gvk, before, after, &mut steps, &mut names, &mut out);
    out
}

fn change(steps: &[PathElement], a: Option<&Node>, b: Option<&Node>) -> Change {
    Change {
        path: path_string(steps),
        before: a.cloned(),
        after: b.cloned(),
        cause: None,
    }
}

fn walk(
    kinds: &dyn KindInfo,
    gvk: &Gvk,
    a: &Node,
    b: &Node,
    steps: &mut Vec<PathElement>,
    names: &mut Vec<String>,
    out: &mut Vec<Change>,
) {
    // Equal nodes add nothing. Maps and lists walked item by item find that on their own;
    // only where a change is recorded whole are the two sides compared (comparing at every
    // level would re-walk the tree below it: quadratic in a deep object).
    let record = |steps: &[PathElement], out: &mut Vec<Change>| {
        if !values_equal(a, b) {
            out.push(change(steps, Some(a), Some(b)));
        }
    };
    match (a, b) {
        (Node::Map(am), Node::Map(bm)) => {
            let mut keys: Vec<&String> = am
                .keys()
                .chain(bm.keys().filter(|k| !am.contains_key(k)))
                .collect();
            keys.sort();
            for k in keys {
                steps.push(PathElement::Field(k.clone()));
                names.push(k.clone());
                match (am.get(k), bm.get(k)) {
                    (Some(x), Some(y)) => walk(kinds, gvk, x, y, steps, names, out),
                    (x, y) => out.push(change(steps, x, y)),
                }
                names.pop();
                steps.pop();
            }
        }
        (Node::Seq(al), Node::Seq(bl)) => {
            let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let keys = kinds.list_keys(gvk, &name_refs);
            match keys.filter(|k| !k.is_empty()) {
                Some(keys) if all_keyed(al, &keys) && all_keyed(bl, &keys) => {
                    let id = |item: &Node| -> Vec<(String, Node)> {
                        keys.iter()
                            .map(|k| (k.clone(), item.get(k).cloned().unwrap_or(Node::Null)))
                            .collect()
                    };
                    fn find<'n>(list: &'n [Node], key: &[(String, Node)]) -> Option<&'n Node> {
                        list.iter().find(|x| {
                            key.iter()
                                .all(|(k, v)| x.get(k).is_some_and(|w| values_equal(v, w)))
                        })
                    }
                    let start = out.len();
                    let mut seen: Vec<Vec<(String, Node)>> = Vec::new();
                    for item in al.iter().chain(bl.iter()) {
                        let key = sorted(id(item));
                        if seen.iter().any(|s| s == &key) {
                            continue;
                        }
                        seen.push(key.clone());
                        steps.push(PathElement::Key(key.clone()));
                        match (find(al, &key), find(bl, &key)) {
                            (Some(x), Some(y)) => walk(kinds, gvk, x, y, steps, names, out),
                            (x, y) => out.push(change(steps, x, y)),
                        }
                        steps.pop();
                    }
                    if out.len() == start {
                        // Same items, another order (or the same lists).
                        record(steps, out);
                    }
                }
                _ if al.len() == bl.len() && al.iter().all(|x| !x.is_scalar()) => {
                    for (i, (x, y)) in al.iter().zip(bl).enumerate() {
                        steps.push(PathElement::Index(i64::try_from(i).unwrap_or(i64::MAX)));
                        walk(kinds, gvk, x, y, steps, names, out);
                        steps.pop();
                    }
                }
                _ => record(steps, out),
            }
        }
        _ => record(steps, out),
    }
}

fn all_keyed(list: &[Node], keys: &[String]) -> bool {
    list.iter()
        .all(|item| keys.iter().any(|k| item.get(k).is_some()))
}

fn sorted(mut key: Vec<(String, Node)>) -> Vec<(String, Node)> {
    key.retain(|(_, v)| !v.is_null());
    key.sort_by(|a, b| a.0.cmp(&b.0));
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    struct Keys;
    impl KindInfo for Keys {
        fn namespaced(&self, _: &str, _: &str) -> Option<bool> {
            Some(true)
        }
        fn strategic(&self, _: &Gvk) -> bool {
            true
        }
        fn list_keys(&self, _: &Gvk, path: &[&str]) -> Option<Vec<String>> {
            match path.last() {
                Some(&"containers") => Some(vec!["name".into()]),
                Some(&"ports") => Some(vec!["port".into(), "protocol".into()]),
                _ => None,
            }
        }
    }

    fn p(s: &str) -> Node {
        parse_one(s).unwrap()
    }

    #[test]
    fn names_keyed_items() {
        let a = p(
            "{spec: {replicas: 1, containers: [{name: a, image: x}, {name: b, image: y}], ports: [{port: 80, protocol: TCP, targetPort: 1}]}}",
        );
        let b = p(
            "{spec: {containers: [{name: a, image: z}, {name: c, image: y}], ports: [{port: 80, protocol: TCP, targetPort: 2}], paused: true}}",
        );
        let got = changed_paths(&Keys, &Gvk::default(), &a, &b);
        assert_eq!(
            got,
            [
                r#".spec.containers[name="a"].image"#,
                r#".spec.containers[name="b"]"#,
                r#".spec.containers[name="c"]"#,
                ".spec.paused",
                r#".spec.ports[port=80,protocol="TCP"].targetPort"#,
                ".spec.replicas",
            ]
        );
    }

    #[test]
    fn unkeyed_lists() {
        let a = p("{args: [a, b], items: [{x: 1}]}");
        let b = p("{args: [a], items: [{x: 2}]}");
        assert_eq!(
            changed_paths(&Keys, &Gvk::default(), &a, &b),
            [".args", ".items[0].x"]
        );
    }
}
