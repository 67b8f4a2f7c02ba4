//! Pairs two rendered object sets by (API group, kind, namespace, name) and says what changed:
//! creations, deletions, updates, unchanged objects, and hash-suffix renames (a generated name
//! that differs only by kustomize's suffix is one object). Secret values are masked unless
//! asked for. Pure: no apply is modelled, so there is no last-applied annotation to show.
//! Each pair becomes the report layer's [`ObjectChange`].

use std::collections::HashMap;

use crate::diff::engine::KindInfo;
use crate::diff::paths::changes;
use crate::diff::{Key, hash_base, mask, yaml_text};
use crate::report::{Action, ObjectChange, ObjectId};
use crate::resource::{Gvk, Resource};
use crate::yaml::Node;

/// Compares the objects of the base render (`old`) with those of the head render (`new`):
/// head order first (creations, updates, renames, unchanged), then deletions in base order.
pub(crate) fn compare(
    old: &[Resource],
    new: &[Resource],
    kinds: &dyn KindInfo,
    show_secrets: bool,
) -> Vec<ObjectChange> {
    let mut old_index: HashMap<Key, usize> = HashMap::new();
    for (i, r) in old.iter().enumerate() {
        old_index.entry(Key::of(&r.node)).or_insert(i);
    }
    let mut used = vec![false; old.len()];
    let mut out = Vec::with_capacity(new.len());
    let mut created = Vec::new();
    for r in new {
        let key = Key::of(&r.node);
        match old_index.get(&key).copied() {
            Some(i) if !used.get(i).copied().unwrap_or(true) => {
                if let Some(u) = used.get_mut(i) {
                    *u = true;
                }
                let before = old.get(i).map(|o| &o.node);
                out.push(pair(before, Some(&r.node), kinds, show_secrets));
            }
            _ => {
                created.push(out.len());
                out.push(pair(None, Some(&r.node), kinds, show_secrets));
            }
        }
    }
    // Renames: a created object whose name differs from an unpaired base object of the same
    // group, kind and namespace only by the hash suffix.
    for at in created {
        let Some(obj) = out.get(at) else { continue };
        let Some(base) = hash_base(&obj.id.name).map(str::to_string) else {
            continue;
        };
        let group = Gvk::from_api_version(&obj.id.api_version, &obj.id.kind).group;
        let (kind, namespace) = (obj.id.kind.clone(), obj.id.namespace.clone());
        let found = old.iter().enumerate().find(|(i, r)| {
            !used.get(*i).copied().unwrap_or(true) && {
                let k = Key::of(&r.node);
                k.group == group
                    && k.kind == kind
                    && k.namespace == namespace
                    && hash_base(&k.name) == Some(base.as_str())
            }
        });
        let Some((i, old_obj)) = found else { continue };
        if let Some(u) = used.get_mut(i) {
            *u = true;
        }
        let Some(new_node) = new.get(at).map(|r| &r.node) else {
            continue;
        };
        let mut renamed = pair(Some(&old_obj.node), Some(new_node), kinds, show_secrets);
        renamed.changes.retain(|c| c.path != ".metadata.name");
        renamed.renamed_from = Some(ObjectId::of(&old_obj.node));
        renamed.action = Action::Rename;
        if let Some(slot) = out.get_mut(at) {
            *slot = renamed;
        }
    }
    for (i, r) in old.iter().enumerate() {
        if !used.get(i).copied().unwrap_or(true) {
            out.push(pair(Some(&r.node), None, kinds, show_secrets));
        }
    }
    out
}

/// The nodes of the created and deleted objects of `changes` (by their index there), which
/// [`super::engine`] pairs across overlays into moves.
pub(crate) fn unpaired_nodes(
    changes: &[ObjectChange],
    old: &[Resource],
    new: &[Resource],
) -> Vec<(usize, Node)> {
    if !changes
        .iter()
        .any(|c| matches!(c.action, Action::Create | Action::Delete))
    {
        return Vec::new();
    }
    let index = |side: &[Resource]| -> HashMap<(String, String, String, String), usize> {
        let mut m = HashMap::new();
        for (i, r) in side.iter().enumerate() {
            let id = ObjectId::of(&r.node);
            m.entry((id.api_version, id.kind, id.namespace, id.name))
                .or_insert(i);
        }
        m
    };
    let (old_ix, new_ix) = (index(old), index(new));
    let mut out = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        let (side, ix) = match c.action {
            Action::Create => (new, &new_ix),
            Action::Delete => (old, &old_ix),
            _ => continue,
        };
        let id = &c.id;
        let key = (
            id.api_version.clone(),
            id.kind.clone(),
            id.namespace.clone(),
            id.name.clone(),
        );
        if let Some(r) = ix.get(&key).and_then(|&at| side.get(at)) {
            out.push((i, r.node.clone()));
        }
    }
    out
}

/// One pair as shown: masked, printed, its changes listed.
pub(crate) fn pair(
    before: Option<&Node>,
    after: Option<&Node>,
    kinds: &dyn KindInfo,
    show_secrets: bool,
) -> ObjectChange {
    if let (Some(b), Some(a)) = (before, after) {
        if b == a {
            // The same object: nothing to print or walk (most objects of a review).
            return ObjectChange {
                action: Action::Unchanged,
                id: ObjectId::of(a),
                renamed_from: None,
                moved_from: None,
                before: String::new(),
                after: String::new(),
                changes: Vec::new(),
                conflicts: Vec::new(),
                predicted: None,
            };
        }
    }
    let mut b = before.cloned();
    let mut a = after.cloned();
    let secret = b.iter().chain(a.iter()).any(mask::is_secret);
    if secret && !show_secrets {
        mask::mask_rendered_pair(b.as_mut(), a.as_mut());
    }
    let id = ObjectId::of(a.as_ref().or(b.as_ref()).unwrap_or(&Node::Null));
    let before_text = b.as_ref().map(yaml_text).unwrap_or_default();
    let after_text = a.as_ref().map(yaml_text).unwrap_or_default();
    let (action, list) = match (&b, &a) {
        (Some(b), Some(a)) => {
            let list = changes(kinds, &Gvk::of(a), b, a);
            if list.is_empty() && before_text == after_text {
                (Action::Unchanged, list)
            } else {
                (Action::Update, list)
            }
        }
        (None, _) => (Action::Create, Vec::new()),
        (_, None) => (Action::Delete, Vec::new()),
    };
    ObjectChange {
        action,
        id,
        renamed_from: None,
        moved_from: None,
        before: before_text,
        after: after_text,
        changes: list,
        conflicts: Vec::new(),
        predicted: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::adapters::Builtin;
    use crate::yaml::parse::parse_one;

    fn res(text: &str) -> Resource {
        Resource::new(parse_one(text).unwrap(), None)
    }

    #[test]
    fn creations_deletions_updates_and_renames() {
        let old = vec![
            res(
                "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 1}}",
            ),
            res(
                "{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg-2g8fk8h9k5}, data: {a: '1'}}",
            ),
            res("{apiVersion: v1, kind: Service, metadata: {name: gone}}"),
        ];
        let new = vec![
            res(
                "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 2}}",
            ),
            res(
                "{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg-7c9t9mh2tb}, data: {a: '2'}}",
            ),
            res("{apiVersion: v1, kind: Service, metadata: {name: new}}"),
        ];
        let got = compare(&old, &new, &Builtin::new(), false);
        let actions: Vec<(&str, &str)> = got
            .iter()
            .map(|o| (o.action.as_str(), o.id.name.as_str()))
            .collect();
        assert_eq!(
            actions,
            [
                ("update", "web"),
                ("rename", "cfg-7c9t9mh2tb"),
                ("create", "new"),
                ("delete", "gone"),
            ]
        );
        let paths: Vec<&str> = got[1].changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, [".data.a"]);
        assert_eq!(got[0].changes[0].after, Some(Node::Int(2)));
    }

    #[test]
    fn secrets_are_masked_in_texts_and_changes() {
        let old = vec![res(
            "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {k: YQ==}, stringData: {p: one}}",
        )];
        let new = vec![res(
            "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {k: Yg==}, stringData: {p: two}}",
        )];
        let got = compare(&old, &new, &Builtin::new(), false);
        let all = format!("{}{}{:?}", got[0].before, got[0].after, got[0].changes);
        assert!(!all.contains("YQ==") && !all.contains("two"), "{all}");
        assert_eq!(got[0].changes.len(), 2);
        let shown = compare(&old, &new, &Builtin::new(), true);
        assert!(shown[0].after.contains("Yg=="));
    }
}
