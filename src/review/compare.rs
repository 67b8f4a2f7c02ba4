//! Pairs two rendered object sets by (API group, kind, namespace, name) and says what changed:
//! creations, deletions, updates, unchanged objects, and hash-suffix renames (a generated name
//! that differs only by kustomize's suffix is one object). Secret values are masked unless
//! asked for. Pure: no apply is modelled, so there is no last-applied annotation to show.
//! Each pair becomes the report layer's [`ObjectChange`].

use std::collections::HashMap;

use crate::diff::engine::KindInfo;
use crate::diff::paths::changes;
use crate::diff::{Key, hash_base, mask, yaml_text};
use crate::report::{Action, Change, ObjectChange, ObjectId};
use crate::resource::{Gvk, Resource};
use crate::yaml::Node;

/// Compares the objects of the base render (`old`) with those of the head render (`new`):
/// head order first (creations, updates, renames, unchanged), then deletions in base order.
#[cfg(test)]
pub(crate) fn compare(
    old: &[Resource],
    new: &[Resource],
    kinds: &dyn KindInfo,
    show_secrets: bool,
) -> Vec<ObjectChange> {
    compare_sides(old, new, kinds, show_secrets)
        .into_iter()
        .map(|c| c.change)
        .collect()
}

/// One object of [`compare_sides`]: its change and where its two sides are in the renders.
pub(crate) struct Compared {
    pub(crate) change: ObjectChange,
    /// Its index in the base render (`None` for a creation).
    pub(crate) old: Option<usize>,
    /// Its index in the head render (`None` for a deletion).
    pub(crate) new: Option<usize>,
}

/// [`compare`], each change with the indices of its two sides (for `review::risks`, which
/// reads the unmasked objects).
pub(crate) fn compare_sides(
    old: &[Resource],
    new: &[Resource],
    kinds: &dyn KindInfo,
    show_secrets: bool,
) -> Vec<Compared> {
    let mut old_index: HashMap<Key, usize> = HashMap::new();
    for (i, r) in old.iter().enumerate() {
        old_index.entry(Key::of(&r.node)).or_insert(i);
    }
    let mut used = vec![false; old.len()];
    let mut out = Vec::with_capacity(new.len());
    let mut created = Vec::new();
    for (n, r) in new.iter().enumerate() {
        let key = Key::of(&r.node);
        match old_index.get(&key).copied() {
            Some(i) if !used.get(i).copied().unwrap_or(true) => {
                if let Some(u) = used.get_mut(i) {
                    *u = true;
                }
                let before = old.get(i).map(|o| &o.node);
                out.push(Compared {
                    change: pair(before, Some(&r.node), kinds, show_secrets),
                    old: Some(i),
                    new: Some(n),
                });
            }
            _ => {
                created.push(out.len());
                out.push(Compared {
                    change: pair(None, Some(&r.node), kinds, show_secrets),
                    old: None,
                    new: Some(n),
                });
            }
        }
    }
    // Renames: a created object whose name differs from an unpaired base object of the same
    // group, kind and namespace only by the hash suffix.
    for at in created {
        let Some(obj) = out.get(at).map(|c| &c.change) else {
            continue;
        };
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
            slot.change = renamed;
            slot.old = Some(i);
        }
    }
    for (i, r) in old.iter().enumerate() {
        if !used.get(i).copied().unwrap_or(true) {
            out.push(Compared {
                change: pair(Some(&r.node), None, kinds, show_secrets),
                old: Some(i),
                new: None,
            });
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
            return ObjectChange::bare(Action::Unchanged, ObjectId::of(a));
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
            let mut list = item_changes(changes(kinds, &Gvk::of(a), b, a));
            list.sort_by_key(|c| rank(&c.path));
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
        stored_diff: None,
    }
}

/// Changes of lists of scalars (a command, arguments) as the items that changed:
/// `args[3]: --level=info → --level=debug`, an inserted item `args[1]: (none) → -v`, a
/// removed one `args[2]: -v → (none)` (items after a common start and before a common end,
/// paired by position; indices are the head's, or the base's for an item only there).
fn item_changes(list: Vec<Change>) -> Vec<Change> {
    let scalars = |n: &Option<Node>| -> Option<Vec<Node>> {
        let seq = n.as_ref()?.as_seq()?;
        seq.iter().all(Node::is_scalar).then(|| seq.clone())
    };
    let mut out = Vec::with_capacity(list.len());
    for c in list {
        let (Some(b), Some(a)) = (scalars(&c.before), scalars(&c.after)) else {
            out.push(c);
            continue;
        };
        let start = b.iter().zip(&a).take_while(|(x, y)| x == y).count();
        let end = b[start..]
            .iter()
            .rev()
            .zip(a[start..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let (old, new) = (&b[start..b.len() - end], &a[start..a.len() - end]);
        for i in 0..old.len().max(new.len()) {
            out.push(Change {
                path: format!("{}[{}]", c.path, start + i),
                before: old.get(i).cloned(),
                after: new.get(i).cloned(),
                cause: c.cause.clone(),
            });
        }
    }
    out
}

/// Where a changed field goes among an object's changes: what a reviewer needs first —
/// images, then commands and arguments, environment, replicas, resources, then the rest
/// (each group in the object's order).
fn rank(path: &str) -> u8 {
    if path == ".spec.replicas" {
        return 3;
    }
    if under(path, ".spec.resources") {
        // A claim's requested storage.
        return 4;
    }
    // The field of a container (containers, initContainers, ephemeralContainers), or of a
    // pod volume (an image volume's `image.reference`).
    let field = |list: &str| {
        let at = path.rfind(list)? + list.len();
        let rest = path.get(at..)?;
        let end = bracket_end(rest)?;
        rest.get(end..)
    };
    if let Some(f) = field("ontainers[") {
        for (prefix, rank) in [
            (".image", 0),
            (".command", 1),
            (".args", 1),
            (".env", 2),
            (".envFrom", 2),
            (".resources", 4),
        ] {
            if under(f, prefix) {
                return rank;
            }
        }
    }
    if field("volumes[").is_some_and(|f| under(f, ".image")) {
        return 0;
    }
    5
}

/// Whether `path` is `prefix` or a field under it (kubectl's form: `.a.b[k="v"]`).
pub(crate) fn under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// The end of a list key (`name="web"]…`: just past its `]`), quotes skipped.
fn bracket_end(s: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i + 1),
            _ => {}
        }
    }
    None
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
    fn list_changes_name_the_items() {
        let list = |items: &[&str]| Some(Node::Seq(items.iter().map(|i| Node::str(*i)).collect()));
        let change = |b: &[&str], a: &[&str]| Change {
            path: ".spec.args".into(),
            before: list(b),
            after: list(a),
            cause: None,
        };
        let shown = |c: Vec<Change>| -> Vec<String> {
            c.iter()
                .map(|c| {
                    let v = |n: &Option<Node>| {
                        n.as_ref().and_then(Node::as_str).unwrap_or("-").to_string()
                    };
                    format!("{}: {} -> {}", c.path, v(&c.before), v(&c.after))
                })
                .collect()
        };
        let got = item_changes(vec![change(
            &["serve", "--port=9797", "--level=info", "--x"],
            &["serve", "--port=9797", "--level=debug", "--x"],
        )]);
        assert_eq!(shown(got), [".spec.args[2]: --level=info -> --level=debug"]);
        let got = item_changes(vec![change(&["a", "b", "c"], &["a", "x", "b", "c"])]);
        assert_eq!(shown(got), [".spec.args[1]: - -> x"]);
        let got = item_changes(vec![change(&["a", "b", "c"], &["a", "c"])]);
        assert_eq!(shown(got), [".spec.args[1]: b -> -"]);
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
    fn changes_what_a_reviewer_needs_first() {
        let d = |label: &str, image: &str, level: &str, replicas: i32, cpu: &str| {
            res(&format!(
                "{{apiVersion: apps/v1, kind: Deployment, metadata: {{name: web, labels: {{app: {label}}}}}, spec: {{replicas: {replicas}, template: {{spec: {{containers: [{{name: \"a.b]\", resources: {{limits: {{cpu: {cpu}}}}}, env: [{{name: L, value: {level}}}], args: [\"--level={level}\"], image: {image}}}]}}}}}}}}"
            ))
        };
        let got = compare(
            &[d("a", "x:1", "info", 1, "1")],
            &[d("b", "x:2", "debug", 2, "2")],
            &Builtin::new(),
            false,
        );
        let paths: Vec<&str> = got[0].changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                ".spec.template.spec.containers[name=\"a.b]\"].image",
                ".spec.template.spec.containers[name=\"a.b]\"].args[0]",
                ".spec.template.spec.containers[name=\"a.b]\"].env[name=\"L\"].value",
                ".spec.replicas",
                ".spec.template.spec.containers[name=\"a.b]\"].resources.limits.cpu",
                ".metadata.labels.app",
            ]
        );
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
