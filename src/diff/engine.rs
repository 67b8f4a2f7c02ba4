//! The seams between `ply diff` and the engines it drives: what it asks the schema (scope of a
//! kind, whether kubectl knows its patch metadata, list keys), the client-side three-way apply
//! and the server-side apply. The diff logic sees only these traits; the adapters to
//! `crate::schema`, `crate::merge` and `crate::merge::ssa` implement them. Owns no merge logic.

use crate::diag::Error;
use crate::merge::ssa::value::human;
use crate::resource::Gvk;
use crate::yaml::Node;

/// What `ply diff` needs to know about kinds.
pub trait KindInfo {
    /// `Some(true)` for namespaced kinds, `Some(false)` for cluster-scoped ones, `None` when
    /// the kind is unknown (a custom resource without a schema).
    fn namespaced(&self, group: &str, kind: &str) -> Option<bool>;
    /// Whether kubectl would patch this kind with a strategic merge patch (it knows the kind's
    /// patch metadata); otherwise kubectl falls back to a JSON merge patch.
    fn strategic(&self, gvk: &Gvk) -> bool;
    /// The key fields of the list at `path` (field names from the object's root) when it is an
    /// associative list, for naming list items in change paths (`[name="web"]`).
    fn list_keys(&self, gvk: &Gvk, path: &[&str]) -> Option<Vec<String>>;
}

/// kubectl apply's client-side three-way merge.
pub trait ClientSideApply {
    /// Applies the three-way strategic merge patch (original = last-applied, modified =
    /// desired, current = live) to `current`, as `kubectl apply` patches a built-in kind.
    fn three_way_strategic(
        &self,
        gvk: &Gvk,
        original: &Node,
        modified: &Node,
        current: &Node,
    ) -> Result<Node, Error>;
}

/// One field manager of `metadata.managedFields` (the report layer's, since reports print it).
pub use crate::report::Manager;

/// One element of a field path, as structured-merge-diff names them.
#[derive(Clone, Debug, PartialEq)]
pub enum PathStep {
    /// A field of a map.
    Field(String),
    /// An item of an associative list, by its key fields (sorted by name).
    Key(Vec<(String, Node)>),
    /// An item of a set, by value.
    Value(Node),
    /// A list index.
    Index(usize),
}

/// A field another manager owns and the apply would change.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnershipConflict {
    pub manager: Manager,
    pub path: Vec<PathStep>,
}

/// The outcome of a server-side apply.
#[derive(Clone, Debug, PartialEq)]
pub enum SsaOutcome {
    /// The object the server would store, with its new `metadata.managedFields`.
    Applied(Node),
    /// The apply fails; nothing changes.
    Conflicts(Vec<OwnershipConflict>),
}

/// `kubectl apply --server-side` as the API server runs it (the structured merge and the
/// apiserver's field-manager wrappers).
pub trait ServerSideApply {
    /// Applies `config` as `manager` to `live` (absent: a create).
    fn apply(
        &self,
        gvk: &Gvk,
        live: Option<&Node>,
        config: &Node,
        manager: &str,
        force: bool,
    ) -> Result<SsaOutcome, Error>;

    /// Records a write that is not an apply (client-side apply's PATCH is an Update by its
    /// field manager): returns `new` with the `metadata.managedFields` the server would keep,
    /// the updater taking over every field it changed.
    fn record_update(
        &self,
        gvk: &Gvk,
        live: Option<&Node>,
        new: &Node,
        manager: &str,
    ) -> Result<Node, Error>;
}

/// The engines one diff run uses.
#[derive(Clone, Copy)]
pub struct Engines<'a> {
    pub kinds: &'a dyn KindInfo,
    pub csa: &'a dyn ClientSideApply,
    pub ssa: &'a dyn ServerSideApply,
}

impl std::fmt::Debug for Engines<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Engines")
    }
}

/// A path in kubectl's form: `.spec.ports[port=80,protocol="TCP"].targetPort`
/// (structured-merge-diff `fieldpath.Path.String`; values in smd's human form, as the SSA
/// engine prints them in its conflict messages).
pub fn kubectl_path(steps: &[PathStep]) -> String {
    let mut s = String::new();
    for step in steps {
        match step {
            PathStep::Field(f) => {
                s.push('.');
                s.push_str(f);
            }
            PathStep::Key(fields) => {
                s.push('[');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    s.push_str(k);
                    s.push('=');
                    s.push_str(&human(v));
                }
                s.push(']');
            }
            PathStep::Value(v) => {
                s.push_str("[=");
                s.push_str(&human(v));
                s.push(']');
            }
            PathStep::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// The value at a path in an object, if present.
pub fn value_at<'a>(node: &'a Node, steps: &[PathStep]) -> Option<&'a Node> {
    let mut cur = node;
    for step in steps {
        cur = match step {
            PathStep::Field(f) => cur.get(f)?,
            PathStep::Index(i) => cur.as_seq()?.get(*i)?,
            PathStep::Value(v) => cur.as_seq()?.iter().find(|x| values_equal(x, v))?,
            PathStep::Key(fields) => cur.as_seq()?.iter().find(|item| {
                fields
                    .iter()
                    .all(|(k, v)| item.get(k).is_some_and(|x| values_equal(x, v)))
            })?,
        };
    }
    Some(cur)
}

/// Equality with numbers compared by value (an int and a float with the same value are equal).
pub fn values_equal(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Int(x), Node::Float(y)) | (Node::Float(y), Node::Int(x)) => (*x as f64) == *y,
        (Node::Seq(x), Node::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_equal(a, b))
        }
        (Node::Map(x), Node::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_in_kubectl_form() {
        let p = vec![
            PathStep::Field("spec".into()),
            PathStep::Field("ports".into()),
            PathStep::Key(vec![
                ("port".into(), Node::Int(80)),
                ("protocol".into(), Node::str("TCP")),
            ]),
            PathStep::Field("targetPort".into()),
        ];
        assert_eq!(
            kubectl_path(&p),
            r#".spec.ports[port=80,protocol="TCP"].targetPort"#
        );
        let p = vec![
            PathStep::Field("metadata".into()),
            PathStep::Field("finalizers".into()),
            PathStep::Value(Node::str("a")),
        ];
        assert_eq!(kubectl_path(&p), r#".metadata.finalizers[="a"]"#);
        // As kubectl prints them (Go's %q and %v), not as JSON.
        let p = vec![
            PathStep::Field("items".into()),
            PathStep::Key(vec![
                ("name".into(), Node::str("a<b>")),
                ("weight".into(), Node::Float(1e6)),
            ]),
        ];
        assert_eq!(kubectl_path(&p), r#".items[name="a<b>",weight=1e+06]"#);
    }

    #[test]
    fn value_lookup() {
        let n = crate::yaml::parse::parse_one(
            "spec: {ports: [{port: 80, protocol: TCP, targetPort: 8080}, {port: 80, protocol: UDP, targetPort: 53}]}",
        )
        .unwrap();
        let p = vec![
            PathStep::Field("spec".into()),
            PathStep::Field("ports".into()),
            PathStep::Key(vec![
                ("port".into(), Node::Float(80.0)),
                ("protocol".into(), Node::str("UDP")),
            ]),
            PathStep::Field("targetPort".into()),
        ];
        assert_eq!(value_at(&n, &p), Some(&Node::Int(53)));
    }
}
