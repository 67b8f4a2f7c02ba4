//! Identical changes across a review's overlays: an object that changes the same way in
//! several overlays (same action, kind, name, renamed-from name and field changes; its
//! namespace aside, as overlays often set their own) is shown once, "same change in dev,
//! staging, prod", and so is a risk. Pure: reads the model, returns groups.

use std::collections::HashMap;

use crate::yaml::Node;
use crate::yaml::json::{JsonStyle, to_json};

use super::model::{ObjectChange, Risk};

/// Where one object of one overlay stands among identical changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Same {
    /// Changed this way in no other overlay.
    Alone,
    /// The first of a group: the overlays (indices, in order, itself first) changed alike.
    First(Vec<usize>),
    /// Changed as in the overlay of this index (the group's first), shown there.
    As(usize),
}

/// What makes two object changes the same, their namespace aside.
fn object_key(o: &ObjectChange) -> String {
    let mut k = format!(
        "{}\0{}\0{}\0{}\0{}",
        o.action.as_str(),
        o.id.api_version,
        o.id.kind,
        o.id.name,
        o.renamed_from.as_ref().map_or("", |f| f.name.as_str())
    );
    for c in &o.changes {
        let value = |v: &Option<crate::yaml::Node>| {
            v.as_ref()
                .map_or_else(|| "-".to_string(), |n| to_json(n, JsonStyle::COMPACT))
        };
        k.push_str(&format!(
            "\0{}\0{}\0{}",
            c.path,
            value(&c.before),
            value(&c.after)
        ));
    }
    // A creation or deletion has no field changes: its content is the change, compared as
    // data with the overlay's namespace taken out.
    if o.changes.is_empty() {
        for text in [&o.before, &o.after] {
            k.push('\0');
            k.push_str(&content_key(text, &o.id.namespace));
        }
    }
    k
}

/// An object's text as data, its namespace taken out structurally: `metadata.namespace`
/// removed, and every string that is the namespace as a whole (a subject's or a reference's
/// `namespace`) replaced by one mark. A value that merely contains the namespace's text
/// (`2>/dev/null` in overlay `dev`) is data, and stays. Text that does not parse is compared
/// as it is.
fn content_key(text: &str, namespace: &str) -> String {
    let Ok(docs) = crate::yaml::parse::parse_documents(text) else {
        return text.to_string();
    };
    let mut out = String::new();
    for doc in docs {
        let mut node = doc.node;
        if let Some(meta) = node.get_mut("metadata").and_then(Node::as_map_mut) {
            meta.shift_remove("namespace");
        }
        if !namespace.is_empty() {
            mark_namespace(&mut node, namespace);
        }
        out.push_str(&to_json(&node, JsonStyle::COMPACT));
        out.push('\n');
    }
    out
}

/// Replaces every string equal to `namespace` under `node` by a mark no value holds.
fn mark_namespace(node: &mut Node, namespace: &str) {
    match node {
        Node::Map(m) => m.values_mut().for_each(|v| mark_namespace(v, namespace)),
        Node::Seq(s) => s.iter_mut().for_each(|v| mark_namespace(v, namespace)),
        other => {
            if other.as_str() == Some(namespace) {
                *other = Node::str("\u{1}namespace");
            }
        }
    }
}

/// For each overlay's list of changed objects, how each stands among identical changes.
pub(crate) fn objects(lists: &[Vec<&ObjectChange>]) -> Vec<Vec<Same>> {
    let mut first: HashMap<String, (usize, usize)> = HashMap::new();
    let mut out: Vec<Vec<Same>> = lists.iter().map(|l| vec![Same::Alone; l.len()]).collect();
    for (i, list) in lists.iter().enumerate() {
        for (j, o) in list.iter().enumerate() {
            let key = object_key(o);
            match first.get(&key) {
                Some(&(fi, fj)) if fi != i => {
                    if let Some(slot) = out.get_mut(i).and_then(|l| l.get_mut(j)) {
                        *slot = Same::As(fi);
                    }
                    if let Some(slot) = out.get_mut(fi).and_then(|l| l.get_mut(fj)) {
                        match slot {
                            Same::First(v) => v.push(i),
                            _ => *slot = Same::First(vec![fi, i]),
                        }
                    }
                }
                Some(_) => {}
                None => {
                    first.insert(key, (i, j));
                }
            }
        }
    }
    out
}

/// Risks grouped across overlays: each distinct risk (its object's namespace aside) with the
/// overlays it is found in, in order of first appearance.
pub(crate) fn risks<'a>(all: &[(&'a str, &'a Risk)]) -> Vec<(&'a Risk, Vec<&'a str>)> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<(&Risk, Vec<&str>)> = Vec::new();
    // A second object of the same name in one overlay (another namespace) is its own risk.
    for (overlay, risk) in all {
        let key = format!(
            "{}\0{}\0{}\0{}\0{:?}\0{}",
            risk.kind.as_str(),
            risk.object.api_version,
            risk.object.kind,
            risk.object.name,
            risk.path,
            risk.what
        );
        let at = index.get(&key).copied();
        match at.and_then(|at| out.get_mut(at)) {
            Some((_, overlays)) if !overlays.contains(overlay) => overlays.push(overlay),
            _ => {
                index.insert(key, out.len());
                out.push((risk, vec![overlay]));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Action, Change, ObjectId, RiskKind};
    use crate::yaml::Node;

    fn object(namespace: &str, name: &str, after: &str) -> ObjectChange {
        ObjectChange {
            action: Action::Update,
            id: ObjectId {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: namespace.into(),
                name: name.into(),
            },
            renamed_from: None,
            moved_from: None,
            before: String::new(),
            after: String::new(),
            changes: vec![Change {
                path: ".spec.replicas".into(),
                before: Some(Node::Int(1)),
                after: Some(Node::str(after)),
                cause: None,
            }],
            conflicts: Vec::new(),
            predicted: None,
            stored_diff: None,
        }
    }

    #[test]
    fn same_changes_across_overlays_namespace_aside() {
        let (dev, staging, prod) = (
            object("dev", "web", "2"),
            object("staging", "web", "2"),
            object("prod", "web", "3"),
        );
        let other = object("dev", "api", "2");
        let got = objects(&[vec![&dev, &other], vec![&staging], vec![&prod]]);
        assert_eq!(
            got,
            [
                vec![Same::First(vec![0, 1]), Same::Alone],
                vec![Same::As(0)],
                vec![Same::Alone]
            ]
        );
    }

    #[test]
    fn creations_compare_as_data_with_the_namespace_taken_out() {
        let created = |ns: &str, data: &str| {
            let mut o = object(ns, "probe", "1");
            o.action = Action::Create;
            o.changes.clear();
            o.id.api_version = "v1".into();
            o.id.kind = "ConfigMap".into();
            o.after = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\n  namespace: {ns}\ndata:\n  run: {data}\n  home: {ns}\n"
            );
            o
        };
        // Data holding the text of an overlay's namespace groups all the same.
        let (dev, prod) = (
            created("dev", "\"x 2>/dev/null\""),
            created("prod", "\"x 2>/dev/null\""),
        );
        assert_eq!(
            objects(&[vec![&dev], vec![&prod]]),
            [vec![Same::First(vec![0, 1])], vec![Same::As(0)]]
        );
        // The namespace's text inside a longer value is data: it differs, no group.
        let (dev, prod) = (created("dev", "/dev/x"), created("prod", "/prod/x"));
        assert_eq!(
            objects(&[vec![&dev], vec![&prod]]),
            [vec![Same::Alone], vec![Same::Alone]]
        );
    }

    #[test]
    fn risks_grouped_by_overlay() {
        let risk = |ns: &str| Risk {
            kind: RiskKind::Rollout,
            object: object(ns, "web", "2").id,
            path: Some(".spec.template".into()),
            what: "rolls".into(),
            rule: "r".into(),
        };
        let (a, b, c) = (risk("dev"), risk("prod"), risk("other"));
        let got = risks(&[("dev", &a), ("prod", &b), ("prod", &c)]);
        let overlays: Vec<Vec<&str>> = got.iter().map(|(_, o)| o.clone()).collect();
        // A second object of that name in one overlay stays its own risk.
        assert_eq!(overlays, [vec!["dev", "prod"], vec!["prod"]]);
    }
}
