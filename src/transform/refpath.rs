//! Helpers shared by name references, vars and replacements: kustomize's path splitting
//! (`a/b\/c`, `a.[name=x].b`), the no-create field-spec walk, and resource identity as
//! kustomize compares it (previous ids, effective namespaces, selection by id). Reads and
//! writes only the nodes it is handed; knows no kustomization fields.

use crate::kustomization::FieldSpec;
use crate::resource::{Gvk, ResId, Resource, effective_namespace};
use crate::yaml::Node;

use super::fieldspec::PathStep;

pub(crate) use crate::resource::{ClusterScoped, NOT_NAMESPACED};

/// Splits `path` on `delim`, joining pieces whose delimiter is escaped with a backslash
/// (`metadata/annotations/a\/b` → `metadata`, `annotations`, `a/b`). A leading delimiter is
/// ignored. Mirrors kyaml's `utils.PathSplitter`.
pub(crate) fn split_path(path: &str, delim: char) -> Vec<String> {
    let mut parts: Vec<&str> = path.split(delim).collect();
    if parts.len() > 1 && parts.first() == Some(&"") {
        parts.remove(0);
    }
    let mut out: Vec<String> = Vec::with_capacity(parts.len());
    for p in parts {
        match out.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push(delim);
                last.push_str(p);
            }
            _ => out.push(p.to_string()),
        }
    }
    out
}

/// Like [`split_path`], but keeps bracketed elements whole: `a.[name=x.y].b` gives `a`,
/// `[name=x.y]`, `b`; a bracketed element without `=` loses its brackets
/// (`metadata.annotations.[a.b]` → `a.b`). Mirrors kyaml's `utils.SmarterPathSplitter`.
pub(crate) fn smarter_split_path(path: &str, delim: char) -> Vec<String> {
    let split = split_path(path, delim);
    let mut out = Vec::with_capacity(split.len());
    let mut i = 0;
    while i < split.len() {
        let elem = &split[i];
        if elem.starts_with('[') && !elem.ends_with(']') {
            let mut joined = elem.clone();
            while i + 1 < split.len() {
                i += 1;
                joined.push(delim);
                joined.push_str(&split[i]);
                if split[i].ends_with(']') {
                    break;
                }
            }
            if joined.contains('=') {
                out.push(joined);
            } else {
                out.push(joined.trim_matches(|c| c == '[' || c == ']').to_string());
            }
        } else {
            out.push(elem.clone());
        }
        i += 1;
    }
    out
}

/// Whether a field spec's group, version and kind (each optional) select `gvk`.
pub(crate) fn spec_selects(spec: &FieldSpec, gvk: &Gvk) -> bool {
    gvk_selected(
        gvk,
        spec.group.as_deref(),
        spec.version.as_deref(),
        spec.kind.as_deref(),
    )
}

/// kyaml's `Gvk.IsSelected`: each non-empty part of the selector must be equal.
pub(crate) fn gvk_selected(
    gvk: &Gvk,
    group: Option<&str>,
    version: Option<&str>,
    kind: Option<&str>,
) -> bool {
    let ok = |sel: Option<&str>, have: &str| sel.is_none_or(|s| s.is_empty() || s == have);
    ok(group, &gvk.group) && ok(version, &gvk.version) && ok(kind, &gvk.kind)
}

/// Walks `segs` (map keys; a sequence on the way is entered element by element) and calls `f`
/// on every node found at the end, without creating anything: kustomize's `fieldspec.Filter`
/// with no create kind. A missing key or a null on the way ends the walk quietly; a scalar
/// where a map is needed is an error, as in kustomize.
pub(crate) fn walk_existing(
    node: &mut Node,
    segs: &[String],
    f: &mut dyn FnMut(&mut Node) -> Result<(), String>,
) -> Result<(), String> {
    walk_existing_at(node, segs, &mut |n, _| f(n))
}

/// Where [`walk_existing_at`] found a node: the spec's segments and the list positions entered
/// on the way, made a path only when asked ([`WalkedTo::path`]), so that the walk itself costs
/// what [`walk_existing`] costs.
pub(crate) struct WalkedTo<'s, 'w> {
    segs: &'s [String],
    /// Each list entered: how many segments were used before it, and the item's position.
    seqs: &'w [(usize, usize)],
}

impl<'s> WalkedTo<'s, '_> {
    /// The node's path from the object's root.
    pub(crate) fn path(&self) -> Vec<PathStep<'s>> {
        let mut out = Vec::with_capacity(self.segs.len() + self.seqs.len());
        let mut seqs = self.seqs.iter().peekable();
        for (n, seg) in self.segs.iter().enumerate() {
            while let Some(&&(_, i)) = seqs.peek().filter(|(at, _)| *at == n) {
                out.push(PathStep::Index(i));
                seqs.next();
            }
            let name = seg.strip_suffix("[]").unwrap_or(seg);
            out.push(PathStep::Key(std::borrow::Cow::Borrowed(name)));
        }
        out
    }
}

/// [`walk_existing`], telling `f` where each node is too ([`WalkedTo`]); for field provenance.
pub(crate) fn walk_existing_at<'s>(
    node: &mut Node,
    segs: &'s [String],
    f: &mut dyn FnMut(&mut Node, &WalkedTo<'s, '_>) -> Result<(), String>,
) -> Result<(), String> {
    fn go<'s>(
        node: &mut Node,
        all: &'s [String],
        used: usize,
        seqs: &mut Vec<(usize, usize)>,
        f: &mut dyn FnMut(&mut Node, &WalkedTo<'s, '_>) -> Result<(), String>,
    ) -> Result<(), String> {
        let Some(first) = all.get(used) else {
            return f(node, &WalkedTo { segs: all, seqs });
        };
        match node {
            Node::Null => Ok(()),
            Node::Seq(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    seqs.push((used, i));
                    let r = go(item, all, used, seqs, f);
                    seqs.pop();
                    r?;
                }
                Ok(())
            }
            Node::Map(m) => {
                let name = first.strip_suffix("[]").unwrap_or(first);
                if name.is_empty() {
                    return Err("cannot set or create an empty field name".into());
                }
                match m.get_mut(name) {
                    Some(child) => go(child, all, used + 1, seqs, f),
                    None => Ok(()),
                }
            }
            _ => Err("expected sequence or mapping node".into()),
        }
    }
    go(node, segs, 0, &mut Vec::new(), f)
}

/// The previous ids of a resource as kustomize reads them from its build annotations: the
/// current group and version with each earlier kind, name and namespace (`utils.PrevIds`).
pub(crate) fn prev_ids(r: &Resource) -> Vec<ResId> {
    let gvk = r.gvk();
    r.prev_ids
        .iter()
        .map(|p| ResId {
            gvk: Gvk {
                group: gvk.group.clone(),
                version: gvk.version.clone(),
                kind: p.gvk.kind.clone(),
            },
            namespace: p.namespace.clone(),
            name: p.name.clone(),
        })
        .collect()
}

/// The current id followed by the previous ids (kustomize's `utils.MakeResIds`).
pub(crate) fn all_ids(r: &Resource) -> Vec<ResId> {
    let mut ids = vec![r.id()];
    ids.extend(prev_ids(r));
    ids
}

/// kustomize's `ResId.IsSelectedBy` for a selector given by optional parts: name and kind
/// equal, namespace equal as effective namespaces (an empty namespace is `default`).
#[allow(clippy::too_many_arguments)] // reason: the five optional parts of a selector
pub(crate) fn id_selected_by(
    id: &ResId,
    cluster_scoped: ClusterScoped,
    group: Option<&str>,
    version: Option<&str>,
    kind: Option<&str>,
    name: Option<&str>,
    namespace: Option<&str>,
) -> bool {
    if let Some(n) = name.filter(|n| !n.is_empty()) {
        if n != id.name {
            return false;
        }
    }
    if let Some(ns) = namespace.filter(|n| !n.is_empty()) {
        if ns != effective_namespace(&id.namespace, cluster_scoped(&id.gvk)) {
            return false;
        }
    }
    gvk_selected(&id.gvk, group, version, kind)
}

/// kyaml's `PathGetter` without create (`yaml.Lookup`): each part is a map key, a list index
/// (`0`, or `-` for the last element), or a list selector `[field=value]` (`[=value]` for a
/// list of scalars; values compared as text). Returns `None` when a part is missing. A `*`, or
/// a part that does not fit the node (a key on a list), is an error, as in kustomize.
pub(crate) fn lookup<'a>(node: &'a Node, parts: &[String]) -> Result<Option<&'a Node>, String> {
    let mut cur = node;
    for raw in parts {
        let part = raw.trim();
        if part.is_empty() {
            continue;
        }
        if cur.is_null() {
            return Ok(None);
        }
        let next = if let Ok(i) = part.parse::<i64>() {
            if i < 0 {
                return Err(format!("array index {i} cannot be negative"));
            }
            let items = seq_of(cur)?;
            usize::try_from(i).ok().and_then(|i| items.get(i))
        } else if part == "-" {
            seq_of(cur)?.last()
        } else if part == "*" {
            return Err("wildcard is not supported in PathGetter".into());
        } else if let Some((field, value)) = list_selector(part)? {
            let items = seq_of(cur)?;
            if field.is_empty() {
                items
                    .iter()
                    .find(|e| e.is_scalar() && e.scalar_text().as_deref() == Some(value))
            } else {
                items.iter().find(|e| {
                    e.get(field)
                        .is_some_and(|v| v.is_scalar() && v.scalar_text().as_deref() == Some(value))
                })
            }
        } else {
            match cur {
                Node::Map(m) => m.get(part),
                other => {
                    return Err(format!(
                        "wrong node kind: expected MappingNode but got {}",
                        go_kind(other)
                    ));
                }
            }
        };
        match next {
            Some(n) => cur = n,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// `[field=value]` → `Some((field, value))`; other parts → `None`; brackets without `=` are
/// an error (kyaml's `SplitIndexNameValue`).
pub(crate) fn list_selector(part: &str) -> Result<Option<(&str, &str)>, String> {
    let Some(inner) = part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) else {
        return Ok(None);
    };
    match inner.split_once('=') {
        Some((f, v)) => Ok(Some((f, v))),
        None => Err(format!(
            "list path element {part} must contain fieldName=fieldValue for element to match"
        )),
    }
}

fn seq_of(n: &Node) -> Result<&Vec<Node>, String> {
    n.as_seq().ok_or_else(|| {
        format!(
            "wrong node kind: expected SequenceNode but got {}",
            go_kind(n)
        )
    })
}

/// go-yaml's name of a node kind, for messages that mirror kustomize's.
pub(crate) fn go_kind(n: &Node) -> &'static str {
    match n {
        Node::Map(_) => "MappingNode",
        Node::Seq(_) => "SequenceNode",
        _ => "ScalarNode",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// `walk_existing_at` places each node it finds: the spec's keys with the position of each
    /// list entered on the way, in order (two lists here), made a path only when asked.
    #[test]
    fn walked_nodes_know_their_paths() {
        let mut n = parse_one(
            "spec:\n  a:\n  - b: {c: x}\n  - b: {c: y}\n  - b: [{c: z}, {d: 0}, {c: w}]\n",
        )
        .unwrap();
        let segs = strings(&["spec", "a", "b", "c"]);
        let mut found = Vec::new();
        walk_existing_at(&mut n, &segs, &mut |node, at| {
            found.push((
                super::super::fieldspec::dotted(&at.path()),
                node.as_str().unwrap_or("").to_string(),
            ));
            Ok(())
        })
        .unwrap();
        let want = [
            ("spec.a.0.b.c", "x"),
            ("spec.a.1.b.c", "y"),
            ("spec.a.2.b.0.c", "z"),
            ("spec.a.2.b.2.c", "w"),
        ];
        let found: Vec<(&str, &str)> = found
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(found, want);
    }

    #[test]
    fn split_path_honours_escapes_and_leading_slash() {
        assert_eq!(split_path("a/b/c", '/'), strings(&["a", "b", "c"]));
        assert_eq!(split_path("/a/b", '/'), strings(&["a", "b"]));
        assert_eq!(
            split_path(r"metadata/annotations/x.io\/y", '/'),
            strings(&["metadata", "annotations", "x.io/y"])
        );
        assert_eq!(split_path("", '/'), strings(&[""]));
    }

    #[test]
    fn smarter_split_keeps_list_selectors() {
        assert_eq!(
            smarter_split_path("spec.containers.[name=a.b].image", '.'),
            strings(&["spec", "containers", "[name=a.b]", "image"])
        );
        assert_eq!(
            smarter_split_path("metadata.annotations.[a.b/c]", '.'),
            strings(&["metadata", "annotations", "a.b/c"])
        );
    }

    #[test]
    fn walk_visits_every_element_and_ignores_missing() {
        let mut n = parse_one("a:\n- b: 1\n- c: 2\n- b: 3\n").unwrap();
        let mut seen = Vec::new();
        walk_existing(&mut n, &strings(&["a", "b"]), &mut |x| {
            seen.push(x.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![Node::Int(1), Node::Int(3)]);
        let mut scalar = parse_one("a: 1\n").unwrap();
        assert!(walk_existing(&mut scalar, &strings(&["a", "b"]), &mut |_| Ok(())).is_err());
    }

    #[test]
    fn lookup_follows_keys_indexes_and_selectors() {
        let n = parse_one("a:\n- name: x\n  v: 1\n- name: y\n  v: 2\nb: [p, q]\n").unwrap();
        let get = |p: &str| lookup(&n, &smarter_split_path(p, '.')).unwrap().cloned();
        assert_eq!(get("a.1.v"), Some(Node::Int(2)));
        assert_eq!(get("a.[name=x].v"), Some(Node::Int(1)));
        assert_eq!(get("b.-"), Some(Node::str("q")));
        assert_eq!(get("b.[=p]"), Some(Node::str("p")));
        assert_eq!(get("a.[name=z].v"), None);
        assert_eq!(get("c.d"), None);
        assert!(lookup(&n, &smarter_split_path("b.x", '.')).is_err());
        assert!(lookup(&n, &smarter_split_path("a.*", '.')).is_err());
    }

    #[test]
    fn selection_uses_effective_namespaces() {
        let id = ResId {
            gvk: Gvk::from_api_version("v1", "ConfigMap"),
            namespace: String::new(),
            name: "x".into(),
        };
        let cs = |g: &Gvk| g.kind == "Namespace";
        assert!(id_selected_by(
            &id,
            &cs,
            None,
            None,
            Some("ConfigMap"),
            Some("x"),
            Some("default")
        ));
        assert!(!id_selected_by(
            &id,
            &cs,
            None,
            None,
            Some("Secret"),
            None,
            None
        ));
        assert!(!id_selected_by(
            &id,
            &cs,
            None,
            None,
            None,
            None,
            Some("other")
        ));
        let ns = ResId {
            gvk: Gvk::from_api_version("v1", "Namespace"),
            namespace: String::new(),
            name: "x".into(),
        };
        assert_eq!(
            effective_namespace(&ns.namespace, cs(&ns.gvk)),
            NOT_NAMESPACED
        );
    }
}
