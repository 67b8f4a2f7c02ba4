//! Sets of field paths (`smd:fieldpath/set.go`) stored as smd stores them — a trie of sorted
//! members and sorted children — and their `fieldsV1` encoding (`smd:fieldpath/serialize.go`).
//! Invariant: members and children are sorted and unique, and no child set is empty.

use std::cmp::Ordering;

use super::path::{self, Path, PathElement, PathElementError};
use super::schema::{Schema, TypeRef};
use super::value::{self, Json};
use crate::yaml::json::{JsonStyle, write_json_string};
use crate::yaml::{Map, Node};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    members: Vec<PathElement>,
    children: Vec<(PathElement, Set)>,
}

impl Set {
    pub fn new() -> Set {
        Set::default()
    }

    /// A set holding the given paths.
    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Set {
        let mut s = Set::new();
        for p in paths {
            s.insert(p);
        }
        s
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Number of member paths.
    pub fn size(&self) -> usize {
        self.members.len() + self.children.iter().map(|(_, c)| c.size()).sum::<usize>()
    }

    pub fn members(&self) -> &[PathElement] {
        &self.members
    }

    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &Set)> {
        self.children.iter().map(|(pe, s)| (pe, s))
    }

    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.binary_search(pe).is_ok()
    }

    pub fn insert(&mut self, p: &[PathElement]) {
        match p {
            [] => {}
            [pe] => {
                if let Err(i) = self.members.binary_search(pe) {
                    self.members.insert(i, pe.clone());
                }
            }
            [pe, rest @ ..] => self.descend(pe).insert(rest),
        }
    }

    fn descend(&mut self, pe: &PathElement) -> &mut Set {
        let i = match self.children.binary_search_by(|(c, _)| c.cmp(pe)) {
            Ok(i) => i,
            Err(i) => {
                self.children.insert(i, (pe.clone(), Set::new()));
                i
            }
        };
        &mut self.children[i].1
    }

    pub fn has(&self, p: &[PathElement]) -> bool {
        match p {
            [] => false,
            [pe] => self.has_member(pe),
            [pe, rest @ ..] => self.child(pe).is_some_and(|c| c.has(rest)),
        }
    }

    /// The subset under one element (`WithPrefix`/`Children.Get`).
    pub fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children
            .binary_search_by(|(c, _)| c.cmp(pe))
            .ok()
            .map(|i| &self.children[i].1)
    }

    /// The subset under one element, empty when there is none.
    pub fn with_prefix(&self, pe: &PathElement) -> Set {
        self.child(pe).cloned().unwrap_or_default()
    }

    pub fn union(&self, other: &Set) -> Set {
        let members = merge_sorted(
            &self.members,
            &other.members,
            |a, b| a.cmp(b),
            true,
            true,
            true,
        );
        let mut children = Vec::with_capacity(self.children.len().max(other.children.len()));
        let (mut i, mut j) = (0, 0);
        while i < self.children.len() && j < other.children.len() {
            let (a, sa) = &self.children[i];
            let (b, sb) = &other.children[j];
            match a.cmp(b) {
                Ordering::Less => {
                    children.push((a.clone(), sa.clone()));
                    i += 1;
                }
                Ordering::Greater => {
                    children.push((b.clone(), sb.clone()));
                    j += 1;
                }
                Ordering::Equal => {
                    children.push((a.clone(), sa.union(sb)));
                    i += 1;
                    j += 1;
                }
            }
        }
        children.extend(self.children[i..].iter().cloned());
        children.extend(other.children[j..].iter().cloned());
        Set { members, children }
    }

    pub fn intersection(&self, other: &Set) -> Set {
        let members = merge_sorted(
            &self.members,
            &other.members,
            |a, b| a.cmp(b),
            false,
            false,
            true,
        );
        let mut children = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.children.len() && j < other.children.len() {
            let (a, sa) = &self.children[i];
            let (b, sb) = &other.children[j];
            match a.cmp(b) {
                Ordering::Less => i += 1,
                Ordering::Greater => j += 1,
                Ordering::Equal => {
                    let r = sa.intersection(sb);
                    if !r.is_empty() {
                        children.push((a.clone(), r));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        Set { members, children }
    }

    /// Member-wise difference: a path leaves only if it is in `other` itself.
    pub fn difference(&self, other: &Set) -> Set {
        self.difference_with(other, false)
    }

    /// Removes every path of `other` and everything under it.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        self.difference_with(other, true)
    }

    /// The two differences: with `recursive`, a member of `other` also removes the subtree
    /// below it.
    fn difference_with(&self, other: &Set, recursive: bool) -> Set {
        let members = merge_sorted(
            &self.members,
            &other.members,
            |a, b| a.cmp(b),
            true,
            false,
            false,
        );
        let mut children = Vec::new();
        for (pe, s) in &self.children {
            if recursive && other.has_member(pe) {
                continue;
            }
            match other.child(pe) {
                None => children.push((pe.clone(), s.clone())),
                Some(o) => {
                    let d = s.difference_with(o, recursive);
                    if !d.is_empty() {
                        children.push((pe.clone(), d));
                    }
                }
            }
        }
        Set { members, children }
    }

    /// Only the members that are not also prefixes of other members.
    pub fn leaves(&self) -> Set {
        let members = self
            .members
            .iter()
            .filter(|m| self.child(m).is_none())
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .map(|(pe, s)| (pe.clone(), s.leaves()))
            .filter(|(_, s)| !s.is_empty())
            .collect();
        Set { members, children }
    }

    /// Every member path, in pre-order (this node's members, then each child's subtree).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.collect_paths(&mut prefix, &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, s) in &self.children {
            prefix.push(pe.clone());
            s.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// `EnsureNamedFieldsAreMembers`: a declared struct field that is the parent of members
    /// becomes a member itself (map keys and list items are not promoted).
    pub fn ensure_named_fields_are_members(&self, schema: &Schema, tr: Option<&TypeRef>) -> Set {
        let atom = tr.and_then(|t| schema.resolve(t));
        let map = atom.as_ref().and_then(|a| a.map);
        let list = atom.as_ref().and_then(|a| a.list);
        let mut out = Set {
            members: self.members.clone(),
            children: Vec::with_capacity(self.children.len()),
        };
        for (pe, child) in &self.children {
            let child_tr: Option<&TypeRef> = match pe {
                PathElement::Field(name) => map.map(|m| m.field_type(name)),
                PathElement::Key(_) => list.map(|l| l.element_type),
                _ => None,
            };
            if let (PathElement::Field(name), Some(m)) = (pe, map)
                && m.find_field(name).is_some()
            {
                out.insert(std::slice::from_ref(pe));
            }
            out.children.push((
                pe.clone(),
                child.ensure_named_fields_are_members(schema, child_tr),
            ));
        }
        out
    }

    /// Parses `fieldsV1` JSON text (`Set.FromJSON`): whitespace around the object is allowed,
    /// a bare `null` is the empty set, unknown element kinds are skipped with their subtree.
    pub fn from_fields_v1(text: &str) -> Result<Set, String> {
        match value::parse_json(text)? {
            Json::Null => Ok(Set::new()),
            Json::Object(entries) => Ok(set_from_entries(&entries)?.0),
            _ => Err("fieldsV1 must be a JSON object".into()),
        }
    }

    /// Reads a `fieldsV1` value that was parsed as part of an object (`managedFields[].fieldsV1`).
    pub fn from_fields_node(node: &Node) -> Result<Set, String> {
        match node {
            Node::Null => Ok(Set::new()),
            Node::Map(m) => Ok(set_from_node_map(m)?.0),
            other => Err(format!(
                "fieldsV1 must be a map, not a {}",
                other.kind_name()
            )),
        }
    }

    /// The canonical compact JSON text (`Set.ToJSON`).
    pub fn to_fields_v1(&self) -> String {
        let mut out = String::from("{");
        self.write_contents(false, &mut out);
        out.push('}');
        out
    }

    fn write_contents(&self, include_self: bool, out: &mut String) {
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
        };
        if include_self && !self.is_empty() {
            sep(out);
            out.push_str("\".\":{}");
        }
        let (mut mi, mut ci) = (0, 0);
        while mi < self.members.len() || ci < self.children.len() {
            let order = match (self.members.get(mi), self.children.get(ci)) {
                (Some(m), Some((c, _))) => m.cmp(c),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            sep(out);
            match order {
                Ordering::Less => {
                    write_key(&self.members[mi], out);
                    out.push_str("{}");
                    mi += 1;
                }
                Ordering::Greater | Ordering::Equal => {
                    let (pe, child) = &self.children[ci];
                    write_key(pe, out);
                    out.push('{');
                    child.write_contents(order == Ordering::Equal, out);
                    out.push('}');
                    ci += 1;
                    if order == Ordering::Equal {
                        mi += 1;
                    }
                }
            }
        }
    }

    /// The canonical `fieldsV1` value as a [`Node`] map (keys in canonical order), for writing
    /// `managedFields` back into an object.
    pub fn to_fields_node(&self) -> Node {
        Node::Map(self.node_contents(false))
    }

    fn node_contents(&self, include_self: bool) -> Map {
        let mut m = Map::default();
        if include_self && !self.is_empty() {
            m.insert(".".into(), Node::empty_map());
        }
        let (mut mi, mut ci) = (0, 0);
        while mi < self.members.len() || ci < self.children.len() {
            let order = match (self.members.get(mi), self.children.get(ci)) {
                (Some(a), Some((c, _))) => a.cmp(c),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match order {
                Ordering::Less => {
                    m.insert(
                        path::serialize_path_element(&self.members[mi]),
                        Node::empty_map(),
                    );
                    mi += 1;
                }
                _ => {
                    let (pe, child) = &self.children[ci];
                    let both = order == Ordering::Equal;
                    m.insert(
                        path::serialize_path_element(pe),
                        Node::Map(child.node_contents(both)),
                    );
                    ci += 1;
                    if both {
                        mi += 1;
                    }
                }
            }
        }
        m
    }
}

fn write_key(pe: &PathElement, out: &mut String) {
    let mut s = String::new();
    path::write_path_element(pe, &mut s);
    write_json_string(out, &s, JsonStyle::COMPACT);
    out.push(':');
}

/// Adds one parsed entry (`readIterV1`): members union, a repeated child replaces the earlier.
fn add_entry(set: &mut Set, pe: PathElement, grandchildren: Option<Set>, is_member: bool) {
    if is_member {
        set.insert(std::slice::from_ref(&pe));
    }
    if let Some(g) = grandchildren {
        *set.descend(&pe) = g;
    }
}

/// The value of one entry of a fieldsV1 object, as either reader sees it.
enum Child<'a, O: ?Sized> {
    /// A nested object: the entry's own children.
    Object(&'a O),
    /// `null`: the entry's path is a member without children.
    Leaf,
    /// Anything else, with the error to report.
    Invalid(String),
}

/// Returns the set of a fieldsV1 object's entries and whether the object marks its own path
/// as a member (it holds `"."` or nothing at all). `recurse` reads a nested object; both
/// readers (JSON text with every entry kept, and a decoded map) share these rules.
fn set_from_object<'a, O: ?Sized + 'a>(
    entries: impl Iterator<Item = (&'a str, Child<'a, O>)>,
    recurse: fn(&'a O) -> Result<(Set, bool), String>,
) -> Result<(Set, bool), String> {
    let mut set = Set::new();
    let mut is_member = false;
    let mut any = false;
    for (key, value) in entries {
        if key == "." {
            is_member = true;
            continue;
        }
        let pe = match path::parse_path_element(key) {
            Ok(pe) => pe,
            Err(PathElementError::UnknownType) => continue,
            Err(PathElementError::Invalid(e)) => {
                return Err(format!("parsing key as path element: {e}"));
            }
        };
        let (child, child_member) = match value {
            Child::Object(inner) => recurse(inner)?,
            Child::Leaf => (Set::new(), true),
            Child::Invalid(e) => return Err(e),
        };
        any = true;
        let grandchildren = (!child.is_empty()).then_some(child);
        add_entry(&mut set, pe, grandchildren, child_member);
    }
    if !any {
        is_member = true;
    }
    Ok((set, is_member))
}

fn set_from_entries(entries: &[(String, Json)]) -> Result<(Set, bool), String> {
    let children = entries.iter().map(|(key, value)| {
        let child = match value {
            Json::Object(inner) => Child::Object(inner.as_slice()),
            Json::Null => Child::Leaf,
            _ => Child::Invalid(format!("value of {key:?} must be an object")),
        };
        (key.as_str(), child)
    });
    set_from_object(children, set_from_entries)
}

fn set_from_node_map(m: &Map) -> Result<(Set, bool), String> {
    let children = m.iter().map(|(key, value)| {
        let child = match value {
            Node::Map(inner) => Child::Object(inner),
            Node::Null => Child::Leaf,
            other => Child::Invalid(format!(
                "value of {key:?} must be a map, not a {}",
                other.kind_name()
            )),
        };
        (key.as_str(), child)
    });
    set_from_object(children, set_from_node_map)
}

/// Merges two sorted, unique slices keeping elements only in `a`, only in `b`, and/or in both.
fn merge_sorted<T: Clone>(
    a: &[T],
    b: &[T],
    cmp: impl Fn(&T, &T) -> Ordering,
    only_a: bool,
    only_b: bool,
    both: bool,
) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match cmp(&a[i], &b[j]) {
            Ordering::Less => {
                if only_a {
                    out.push(a[i].clone());
                }
                i += 1;
            }
            Ordering::Greater => {
                if only_b {
                    out.push(b[j].clone());
                }
                j += 1;
            }
            Ordering::Equal => {
                if both {
                    out.push(a[i].clone());
                }
                i += 1;
                j += 1;
            }
        }
    }
    if only_a {
        out.extend_from_slice(&a[i..]);
    }
    if only_b {
        out.extend_from_slice(&b[j..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(n: &str) -> PathElement {
        PathElement::field(n)
    }

    #[test]
    fn parse_and_serialize_canonically() {
        let s = Set::from_fields_v1(r#" {"f:b":{},"f:a":{".":{},"f:x":{}},"r:q":{}} "#).unwrap();
        assert_eq!(s.to_fields_v1(), r#"{"f:a":{".":{},"f:x":{}},"f:b":{}}"#);
        assert!(s.has(&[f("a")]));
        assert!(s.has(&[f("a"), f("x")]));
        assert!(!s.has(&[f("x")]));
        assert_eq!(Set::from_fields_v1("null").unwrap(), Set::new());
        assert!(Set::from_fields_v1("{} {}").is_err());
        assert!(Set::from_fields_v1(r#"{"f:a":1}"#).is_err());
        assert!(Set::from_fields_v1(r#"{"x":{}}"#).is_err());
    }

    #[test]
    fn set_algebra() {
        let a = Set::from_paths(&[vec![f("a")], vec![f("b"), f("c")], vec![f("b"), f("d")]]);
        let b = Set::from_paths(&[vec![f("b")], vec![f("b"), f("c")]]);
        assert_eq!(a.union(&b).size(), 4);
        assert_eq!(a.intersection(&b).paths(), vec![vec![f("b"), f("c")]]);
        assert_eq!(
            a.difference(&b).paths(),
            vec![vec![f("a")], vec![f("b"), f("d")]]
        );
        assert_eq!(a.recursive_difference(&b).paths(), vec![vec![f("a")]]);
        let with_parent = a.union(&b);
        assert_eq!(with_parent.leaves().size(), 3);
    }
}
