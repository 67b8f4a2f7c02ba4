//! Helpers shared by the merge engines: the path of a node while walking (rendered only when
//! an error needs it), value classes and equality as Go's `interface{}` comparisons see them
//! (apimachinery decodes every JSON number to `float64`), Go's `%v` rendering of values for
//! messages that quote kubectl, and null stripping.

use std::fmt;

use crate::yaml::{Map, Node};

/// One step of a path.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seg<'a> {
    Root,
    Key(&'a str),
    /// A list element found by its merge key: `containers[name=web]`.
    Elem(&'a str, &'a Node),
    Index(usize),
}

/// A path as a linked list on the stack: pushing is free, rendering happens on error. Not a
/// field path (`crate::yaml::path::PathSeg`): it names a list item by its merge key, as
/// kustomize's merge errors print it (`containers[name=web]`), and is printed only in them.
#[derive(Clone, Copy, Debug)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    seg: Seg<'a>,
}

impl<'a> Path<'a> {
    pub const ROOT: Path<'static> = Path {
        parent: None,
        seg: Seg::Root,
    };

    pub fn key(&'a self, k: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            seg: Seg::Key(k),
        }
    }

    pub fn elem(&'a self, key: &'a str, value: &'a Node) -> Path<'a> {
        Path {
            parent: Some(self),
            seg: Seg::Elem(key, value),
        }
    }

    pub fn index(&'a self, i: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            seg: Seg::Index(i),
        }
    }

    /// `spec.template.spec.containers[name=web].ports`; the root is `.`.
    pub fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut cur = Some(self);
        while let Some(p) = cur {
            segs.push(p.seg);
            cur = p.parent;
        }
        let mut out = String::new();
        for seg in segs.iter().rev() {
            match seg {
                Seg::Root => {}
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Elem(k, v) => {
                    out.push('[');
                    out.push_str(k);
                    out.push('=');
                    out.push_str(&v.scalar_text().unwrap_or_else(|| go_fmt(v)));
                    out.push(']');
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        if out.is_empty() { ".".into() } else { out }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// The class of a value as Go's `reflect.TypeOf` sees a decoded JSON value: every number is a
/// `float64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Null,
    Bool,
    Number,
    Str,
    List,
    Map,
}

pub(crate) fn class(n: &Node) -> Class {
    match n.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Null => Class::Null,
        Node::Bool(_) => Class::Bool,
        Node::Int(_) | Node::Float(_) => Class::Number,
        Node::Str(_) => Class::Str,
        Node::Seq(_) => Class::List,
        Node::Map(_) => Class::Map,
    }
}

/// Equality of two values as data: numbers by value (`1 == 1.0`), maps regardless of key order.
pub(crate) fn same(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Int(x), Node::Int(y)) => x == y,
        (Node::Int(x), Node::Float(y)) | (Node::Float(y), Node::Int(x)) => (*x as f64) == *y,
        (Node::Float(x), Node::Float(y)) => x == y,
        (Node::Seq(x), Node::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Node::Map(x), Node::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A value as Go's `fmt.Sprintf("%v", v)` prints a decoded JSON value (`map[a:1 b:[x y]]`), for
/// messages that quote kubectl's.
pub(crate) fn go_fmt(n: &Node) -> String {
    let mut s = String::new();
    go_fmt_into(&mut s, n);
    s
}

fn go_fmt_into(out: &mut String, n: &Node) {
    match n.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Null => out.push_str("<nil>"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(i) => out.push_str(&i.to_string()),
        Node::Float(f) => out.push_str(&crate::yaml::emit::format_float(*f)),
        Node::Str(s) => out.push_str(s),
        Node::Seq(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                go_fmt_into(out, v);
            }
            out.push(']');
        }
        Node::Map(m) => {
            out.push_str("map[");
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                if let Some(v) = m.get(k.as_str()) {
                    go_fmt_into(out, v);
                }
            }
            out.push(']');
        }
    }
}

/// Removes null-valued keys from maps, recursively (through lists too): apimachinery's
/// `discardNullValuesFromPatch`. Nulls that are list elements stay.
pub(crate) fn discard_nulls(n: &mut Node) {
    match n {
        Node::Map(m) => discard_nulls_map(m),
        Node::Seq(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

pub(crate) fn discard_nulls_map(m: &mut Map) {
    m.retain(|_, v| !v.is_null());
    m.values_mut().for_each(discard_nulls);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_rendering() {
        let root = Path::ROOT;
        let a = root.key("spec");
        let name = Node::str("web");
        let b = a.key("containers");
        let c = b.elem("name", &name);
        let d = c.key("ports");
        assert_eq!(d.render(), "spec.containers[name=web].ports");
        assert_eq!(root.render(), ".");
        let e = b.index(2);
        assert_eq!(e.render(), "spec.containers[2]");
    }

    #[test]
    fn go_formatting() {
        let n = crate::yaml::parse::parse_one("{b: [1, x], a: null, c: {d: true}}").expect("yaml");
        assert_eq!(go_fmt(&n), "map[a:<nil> b:[1 x] c:map[d:true]]");
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(same(&Node::Int(1), &Node::Float(1.0)));
        assert!(!same(&Node::Int(1), &Node::str("1")));
    }
}
