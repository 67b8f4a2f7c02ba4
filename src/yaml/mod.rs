//! The one document model: [`Node`] — ordered maps and scalars that keep their kind — used from
//! parse to emit by every stage of ply. Parsing lives in `parse.rs` (the only file that names
//! the YAML crate; `fast.rs` reads the common case without it) and writing in `emit.rs` (the
//! only writer).

mod bom;
pub(crate) mod de;
pub(crate) mod deliberate;
mod dialect;
pub(crate) mod emit;
mod fast;
pub(crate) mod folded;
pub(crate) mod json;
pub(crate) mod limits;
mod map;
pub(crate) mod parse;
pub(crate) mod path;
mod reading;
pub(crate) mod resolve;
mod scan;

pub use de::{DeError, from_node};
pub use emit::{EmitOptions, emit_document, emit_documents};
pub use parse::{ParseError, ParsedDoc, parse_documents};

/// An ordered mapping. Keys are strings: Kubernetes objects are JSON, and kustomize turns every
/// YAML key into a string on its JSON round trip.
pub use map::Map;
pub(crate) use map::ScalarStyle;

/// One YAML/JSON value.
#[derive(Clone, Debug, Default)]
pub enum Node {
    #[default]
    Null,
    Bool(bool),
    /// An integer as parsed (`0x10` reads as 16, as in kustomize).
    Int(i128),
    /// A floating-point number. Non-finite values are kept (kustomize fails on them).
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Map),
    /// A plain number, boolean or null whose source text is not the text ply would print
    /// (`True`, `0x1F`, `~`, `1.50`), or a folded string that go-yaml prints and rereads as
    /// another value (`yaml::folded`), kept with that text where kustomize later reads a value as
    /// its source text: the values of `metadata.labels`, `metadata.annotations`, `data` and
    /// `binaryData` of a document (kyaml keeps every scalar's text; `RNode.GetAnnotations`,
    /// `GetLabels` and `GetDataMap` return it), and a number or boolean anywhere written
    /// otherwise than ply prints it (`2.0`, `017`: replacements copy that text;
    /// `reading::keeps_own_text`). Everywhere else it is its value: it prints, compares and
    /// reads as [`Spelled::value`].
    Spelled(Box<Spelled>),
}

/// A resolved scalar and the text it was written as.
#[derive(Clone, Debug, PartialEq)]
pub struct Spelled {
    pub value: Node,
    pub text: String,
}

impl PartialEq for Node {
    /// A [`Node::Spelled`] equals its value.
    fn eq(&self, other: &Node) -> bool {
        match (self.unspelled(), other.unspelled()) {
            (Node::Null, Node::Null) => true,
            (Node::Bool(a), Node::Bool(b)) => a == b,
            (Node::Int(a), Node::Int(b)) => a == b,
            (Node::Float(a), Node::Float(b)) => a == b,
            (Node::Str(a), Node::Str(b)) => a == b,
            (Node::Seq(a), Node::Seq(b)) => a == b,
            (Node::Map(a), Node::Map(b)) => a == b,
            _ => false,
        }
    }
}

impl Node {
    /// Freezes every map in the tree ([`Map::freeze`]): copies of it share their maps until
    /// they change them.
    pub fn freeze(&mut self) {
        match self {
            Node::Map(m) => m.freeze(),
            Node::Seq(items) => items.iter_mut().for_each(Node::freeze),
            _ => {}
        }
    }

    /// [`Map::freeze_unshared`] over the tree: what changed since the last freeze is frozen,
    /// what was not changed stays shared with its copies.
    pub(crate) fn freeze_unshared(&mut self) {
        match self {
            Node::Map(m) => m.freeze_unshared(),
            Node::Seq(items) => items.iter_mut().for_each(Node::freeze_unshared),
            _ => {}
        }
    }

    /// Gives back the spare capacity of every map, list and string in the tree (a parsed
    /// document's maps and lists grow by doubling; a render keeps every object it read
    /// until the output is written).
    pub fn shrink_to_fit(&mut self) {
        match self {
            Node::Str(s) => s.shrink_to_fit(),
            Node::Seq(items) => {
                items.shrink_to_fit();
                items.iter_mut().for_each(Node::shrink_to_fit);
            }
            Node::Map(m) => {
                m.shrink_to_fit();
                m.values_mut().for_each(Node::shrink_to_fit);
            }
            Node::Spelled(s) => s.value.shrink_to_fit(),
            Node::Null | Node::Bool(_) | Node::Int(_) | Node::Float(_) => {}
        }
    }

    /// The value of a [`Node::Spelled`]; any other node itself.
    pub fn unspelled(&self) -> &Node {
        match self {
            Node::Spelled(s) => &s.value,
            other => other,
        }
    }

    /// Drops a [`Node::Spelled`]'s text, keeping its value.
    pub fn into_unspelled(self) -> Node {
        match self {
            Node::Spelled(s) => s.value,
            other => other,
        }
    }

    /// The text kustomize reads for a scalar (kyaml's `yaml.Node.Value`): a spelled scalar's
    /// source text, else [`Node::scalar_text`].
    pub fn source_text(&self) -> Option<String> {
        match self {
            Node::Spelled(s) => Some(s.text.clone()),
            other => other.scalar_text(),
        }
    }

    /// Whether collections nest deeper than `limit` in this node, counted as JSON nests them
    /// (a scalar 0 levels, `[]` and `{}` 1, `{"a": [1]}` 2), stopping at the first level past
    /// `limit`. The first 64 levels (every object seen in practice) are walked
    /// by recursion, which costs no allocation; below them, an explicit stack walks on, so a
    /// deep tree cannot overflow the thread's stack.
    pub fn nests_deeper_than(&self, limit: usize) -> bool {
        /// Levels walked by recursion before the explicit stack takes over.
        const RECURSE_LEVELS: usize = 64;
        fn is_collection(node: &Node) -> bool {
            matches!(node, Node::Seq(_) | Node::Map(_))
        }
        /// `node`, a collection at `depth`; its scalars are passed over without a call.
        fn walk(node: &Node, depth: usize, limit: usize) -> bool {
            if depth > limit {
                return true;
            }
            if depth >= RECURSE_LEVELS {
                return walk_on_heap(node, depth, limit);
            }
            let deeper = |child: &Node| is_collection(child) && walk(child, depth + 1, limit);
            match node {
                Node::Seq(items) => items.iter().any(deeper),
                Node::Map(map) => map.values().any(deeper),
                _ => false,
            }
        }
        fn walk_on_heap(node: &Node, depth: usize, limit: usize) -> bool {
            let mut open: Vec<(&Node, usize)> = vec![(node, depth)];
            while let Some((node, depth)) = open.pop() {
                let children: &mut dyn Iterator<Item = &Node> = match node {
                    Node::Seq(items) => &mut items.iter(),
                    Node::Map(map) => &mut map.values(),
                    _ => continue,
                };
                if depth > limit {
                    return true;
                }
                for child in children.filter(|c| is_collection(c)) {
                    open.push((child, depth + 1));
                }
            }
            false
        }
        is_collection(self) && walk(self, 1, limit)
    }

    pub fn str(s: impl Into<String>) -> Node {
        Node::Str(s.into())
    }

    pub fn empty_map() -> Node {
        Node::Map(Map::default())
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            Node::Spelled(s) => s.value.as_str(),
            _ => None,
        }
    }

    /// The text kyaml reads a resource's name or namespace as (`RNode.GetName`, the scalar's
    /// `Value`): a string's text, or the source text of a number or boolean written there
    /// (`metadata.name: 80`) as the reader kept it ([`Node::Spelled`]). A null, however
    /// written, has none (`GetName` gives "" for it).
    pub fn id_text(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            Node::Spelled(s) if !s.value.is_null() => Some(&s.text),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Node::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_map_mut(&mut self) -> Option<&mut Map> {
        match self {
            Node::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&Vec<Node>> {
        match self {
            Node::Seq(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_seq_mut(&mut self) -> Option<&mut Vec<Node>> {
        match self {
            Node::Seq(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.unspelled(), Node::Null)
    }

    pub fn is_scalar(&self) -> bool {
        !matches!(self, Node::Seq(_) | Node::Map(_))
    }

    /// The value under `key` when this is a map.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?.get(key)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.as_map_mut()?.get_mut(key)
    }

    /// Follows a path of map keys.
    pub fn get_path(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }

    pub fn get_path_mut(&mut self, path: &[&str]) -> Option<&mut Node> {
        let mut cur = self;
        for k in path {
            cur = cur.get_mut(k)?;
        }
        Some(cur)
    }

    /// The string under a path of map keys.
    pub fn str_at(&self, path: &[&str]) -> Option<&str> {
        self.get_path(path).and_then(Node::as_str)
    }

    /// Walks a path of map keys, creating empty maps (and replacing non-maps) on the way, and
    /// returns the node at its end.
    pub fn ensure_path(&mut self, path: &[&str]) -> &mut Node {
        let mut cur = self;
        for k in path {
            if !matches!(cur, Node::Map(_)) {
                *cur = Node::empty_map();
            }
            let Node::Map(m) = cur else { unreachable!() };
            cur = m.entry((*k).to_string()).or_insert(Node::Null);
        }
        cur
    }

    /// A short name of the node's kind, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "boolean",
            Node::Int(_) => "integer",
            Node::Float(_) => "number",
            Node::Str(_) => "string",
            Node::Seq(_) => "list",
            Node::Map(_) => "map",
            Node::Spelled(s) => s.value.kind_name(),
        }
    }

    /// The scalar as text, the way it reads in a JSON/YAML document (for labels, hashes,
    /// field values compared as strings). `None` for maps and lists.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            Node::Null => Some("null".into()),
            Node::Bool(b) => Some(b.to_string()),
            Node::Int(i) => Some(i.to_string()),
            Node::Float(f) => Some(emit::format_float(*f)),
            Node::Str(s) => Some(s.clone()),
            Node::Seq(_) | Node::Map(_) => None,
            Node::Spelled(s) => s.value.scalar_text(),
        }
    }
}

impl From<&str> for Node {
    fn from(s: &str) -> Self {
        Node::Str(s.to_string())
    }
}

impl From<String> for Node {
    fn from(s: String) -> Self {
        Node::Str(s)
    }
}

impl From<Map> for Node {
    fn from(m: Map) -> Self {
        Node::Map(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrink_to_fit_keeps_the_tree_and_drops_spare_capacity() {
        let mut items = Vec::with_capacity(16);
        items.push(Node::Str(String::with_capacity(64) + "x"));
        let mut map = Map::default();
        map.reserve(32);
        map.insert("list".into(), Node::Seq(items));
        let mut node = Node::Map(map);
        let before = node.clone();
        node.shrink_to_fit();
        assert_eq!(node, before);
        let Node::Map(m) = &node else { panic!() };
        assert!(m.capacity() < 32);
        let Some(Node::Seq(items)) = m.get("list") else {
            panic!()
        };
        assert_eq!(items.capacity(), 1);
        let Node::Str(s) = &items[0] else { panic!() };
        assert_eq!(s.capacity(), 1);
    }

    /// Levels as JSON nests them, by plain recursion: the model `nests_deeper_than` is
    /// checked against.
    fn levels(n: &Node) -> usize {
        match n {
            Node::Seq(items) => 1 + items.iter().map(levels).max().unwrap_or(0),
            Node::Map(m) => 1 + m.values().map(levels).max().unwrap_or(0),
            _ => 0,
        }
    }

    #[test]
    fn nesting_is_counted_as_json_counts_it_above_and_below_the_recursion() {
        let leaf = |i: usize| match i % 3 {
            0 => Node::Int(1),
            1 => Node::Seq(Vec::new()),
            _ => Node::Map(Map::new()),
        };
        let mut trees = vec![Node::Str("x".into()), leaf(1), leaf(2)];
        // Chains that cross the levels walked by recursion (64), with siblings of every kind
        // at each level, and the deepest branch first, last or alone.
        for depth in [1, 2, 63, 64, 65, 66, 150] {
            for end in 0..3 {
                let mut n = leaf(end);
                for d in 0..depth {
                    n = if d % 2 == 0 {
                        Node::Seq(vec![leaf(d), n, leaf(d + 1)])
                    } else {
                        let mut m = Map::new();
                        m.insert("a".into(), leaf(d));
                        m.insert("deep".into(), n);
                        Node::Map(m)
                    };
                }
                trees.push(n);
            }
        }
        for t in &trees {
            let want = levels(t);
            for limit in [0, 1, want.saturating_sub(1), want, want + 1, 200] {
                assert_eq!(
                    t.nests_deeper_than(limit),
                    want > limit,
                    "{want} levels, limit {limit}"
                );
            }
        }
    }
}
