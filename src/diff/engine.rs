//! The seams between `ply diff` and the engines it drives: what it asks the schema (scope of a
//! kind, whether kubectl knows its patch metadata, list keys), the client-side three-way apply
//! and the server-side apply. The diff logic sees only these traits; the adapters to
//! `crate::schema`, `crate::merge` and `crate::merge::ssa` implement them. Owns no merge logic.

use crate::diag::Error;
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

/// One element of a change's or a conflict's path: structured-merge-diff's, whose list items
/// are named by their key fields or value (the field path of one document is
/// `crate::yaml::path::PathSeg`, whose items are positions).
pub use crate::merge::ssa::PathElement;

/// A field another manager owns and the apply would change.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnershipConflict {
    pub manager: Manager,
    pub path: Vec<PathElement>,
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

/// The value at a path in an object, if present.
pub fn value_at<'a>(node: &'a Node, steps: &[PathElement]) -> Option<&'a Node> {
    let mut cur = node;
    for step in steps {
        cur = match step {
            PathElement::Field(f) => cur.get(f)?,
            PathElement::Index(i) => cur.as_seq()?.get(usize::try_from(*i).ok()?)?,
            PathElement::Value(v) => cur.as_seq()?.iter().find(|x| values_equal(x, v))?,
            PathElement::Key(fields) => cur.as_seq()?.iter().find(|item| {
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
    use crate::merge::ssa::path_string;

    #[test]
    fn paths_in_kubectl_form() {
        let p = vec![
            PathElement::Field("spec".into()),
            PathElement::Field("ports".into()),
            PathElement::Key(vec![
                ("port".into(), Node::Int(80)),
                ("protocol".into(), Node::str("TCP")),
            ]),
            PathElement::Field("targetPort".into()),
        ];
        assert_eq!(
            path_string(&p),
            r#".spec.ports[port=80,protocol="TCP"].targetPort"#
        );
        let p = vec![
            PathElement::Field("metadata".into()),
            PathElement::Field("finalizers".into()),
            PathElement::Value(Node::str("a")),
        ];
        assert_eq!(path_string(&p), r#".metadata.finalizers[="a"]"#);
        // As kubectl prints them (Go's %q and %v), not as JSON.
        let p = vec![
            PathElement::Field("items".into()),
            PathElement::Key(vec![
                ("name".into(), Node::str("a<b>")),
                ("weight".into(), Node::Float(1e6)),
            ]),
        ];
        assert_eq!(path_string(&p), r#".items[name="a<b>",weight=1e+06]"#);
    }

    #[test]
    fn value_lookup() {
        let n = crate::yaml::parse::parse_one(
            "spec: {ports: [{port: 80, protocol: TCP, targetPort: 8080}, {port: 80, protocol: UDP, targetPort: 53}]}",
        )
        .unwrap();
        let p = vec![
            PathElement::Field("spec".into()),
            PathElement::Field("ports".into()),
            PathElement::Key(vec![
                ("port".into(), Node::Float(80.0)),
                ("protocol".into(), Node::str("UDP")),
            ]),
            PathElement::Field("targetPort".into()),
        ];
        assert_eq!(value_at(&n, &p), Some(&Node::Int(53)));
    }
}
