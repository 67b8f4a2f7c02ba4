//! `--format json`: a stable document (docs/diff.md, docs/review.md), written through the one
//! JSON writer of `yaml::json`. Both documents share the object row's head (`action`,
//! `apiVersion`, `kind`, `namespace`, `name`, `renamedFrom`); a live row goes on with
//! `changedPaths`, `conflicts` and `message` (`schemaVersion` 1), a review row with `changes`
//! and `diff` (`schemaVersion` 2). Fields are only ever added.

use crate::yaml::json::{JsonStyle, to_json};
use crate::yaml::{Map, Node};

use super::model::{
    Action, Affixes, FailOn, Failure, OFFLINE_NOTE, ObjectChange, OverlayReview, Report, Review,
    Status, conflict_message,
};
use super::unified::review_object;

/// The head of an object's row, the same in both documents.
fn object_row(o: &ObjectChange) -> Map {
    let mut m = Map::default();
    m.insert("action".into(), Node::str(o.action.as_str()));
    m.insert("apiVersion".into(), Node::str(o.id.api_version.clone()));
    m.insert("kind".into(), Node::str(o.id.kind.clone()));
    m.insert("namespace".into(), Node::str(o.id.namespace.clone()));
    m.insert("name".into(), Node::str(o.id.name.clone()));
    m.insert(
        "renamedFrom".into(),
        o.renamed_from
            .as_ref()
            .map_or(Node::Null, |f| Node::str(f.name.clone())),
    );
    m
}

/// Objects per action, as a map in the order given.
fn counts(actions: &[Action], count: impl Fn(Action) -> usize) -> Node {
    let mut m = Map::default();
    for a in actions {
        m.insert(a.as_str().into(), Node::Int(count(*a) as i128));
    }
    Node::Map(m)
}

fn document(root: Map) -> String {
    let mut text = to_json(&Node::Map(root), JsonStyle::PRETTY);
    text.push('\n');
    text
}

/// A live report (`schemaVersion` 1).
pub fn live(report: &Report) -> String {
    let mut root = Map::default();
    root.insert("schemaVersion".into(), Node::Int(1));
    root.insert(
        "mode".into(),
        Node::str(if report.server_side {
            "server-side"
        } else {
            "client-side"
        }),
    );
    root.insert(
        "fieldManager".into(),
        Node::str(report.field_manager.clone()),
    );
    root.insert("exitCode".into(), Node::Int(i128::from(report.exit_code())));
    let mut totals = counts(&Action::ALL, |a| report.count(a));
    let unknown = report.count(Action::Unknown);
    if let (Node::Map(m), true) = (&mut totals, unknown > 0) {
        m.insert("unknown".into(), Node::Int(unknown as i128));
    }
    root.insert("totals".into(), totals);
    let objects = report
        .objects
        .iter()
        .map(|o| {
            let mut m = object_row(o);
            m.insert(
                "changedPaths".into(),
                Node::Seq(
                    o.changes
                        .iter()
                        .map(|c| Node::str(c.path.clone()))
                        .collect(),
                ),
            );
            let conflicts = o
                .conflicts
                .iter()
                .map(|c| {
                    let mut cm = Map::default();
                    cm.insert("path".into(), Node::str(c.path.clone()));
                    cm.insert("manager".into(), Node::str(c.manager.name.clone()));
                    cm.insert("operation".into(), Node::str(c.manager.operation.clone()));
                    cm.insert(
                        "subresource".into(),
                        Node::str(c.manager.subresource.clone()),
                    );
                    cm.insert(
                        "apiVersion".into(),
                        Node::str(c.manager.api_version.clone()),
                    );
                    cm.insert("live".into(), c.live.clone().unwrap_or(Node::Null));
                    cm.insert("desired".into(), c.desired.clone().unwrap_or(Node::Null));
                    Node::Map(cm)
                })
                .collect();
            m.insert("conflicts".into(), Node::Seq(conflicts));
            m.insert(
                "message".into(),
                if o.action == Action::Unknown {
                    Node::str(super::text::unknown_note(o))
                } else if o.conflicts.is_empty() {
                    Node::Null
                } else {
                    Node::str(conflict_message(&o.conflicts))
                },
            );
            Node::Map(m)
        })
        .collect();
    root.insert("objects".into(), Node::Seq(objects));
    root.insert("notes".into(), Node::Seq(vec![Node::str(OFFLINE_NOTE)]));
    document(root)
}

/// Every overlay's risks, most severe first: `overlay`, `kind`, `object` (`apiVersion`,
/// `kind`, `namespace`, `name`), `path` (or `null`), `message`, `rule`.
fn risks(r: &Review) -> Node {
    let list = r
        .risks()
        .into_iter()
        .map(|(overlay, risk)| {
            let mut m = Map::default();
            m.insert("overlay".into(), Node::str(overlay));
            m.insert("kind".into(), Node::str(risk.kind.as_str()));
            let mut object = Map::default();
            object.insert(
                "apiVersion".into(),
                Node::str(risk.object.api_version.clone()),
            );
            object.insert("kind".into(), Node::str(risk.object.kind.clone()));
            object.insert("namespace".into(), Node::str(risk.object.namespace.clone()));
            object.insert("name".into(), Node::str(risk.object.name.clone()));
            m.insert("object".into(), Node::Map(object));
            m.insert(
                "path".into(),
                risk.path.clone().map_or(Node::Null, Node::Str),
            );
            m.insert("message".into(), Node::str(risk.what.clone()));
            m.insert("rule".into(), Node::str(risk.rule.to_string()));
            Node::Map(m)
        })
        .collect();
    Node::Seq(list)
}

/// A review (`schemaVersion` 2: an overlay without changes is `unchanged` with
/// `totals: null`). A shard's review adds `shard` (`index`, `count`, `showSecrets`) and, on
/// each created or deleted object, `object`: the object as rendered (secret values digested
/// unless `showSecrets`), for `ply diff --merge-reports`.
pub(crate) fn review(r: &Review, title: &str) -> String {
    let mut root = Map::default();
    root.insert("schemaVersion".into(), Node::Int(2));
    root.insert("title".into(), Node::str(title));
    root.insert("base".into(), Node::str(r.base.clone()));
    root.insert("head".into(), Node::str(r.head.clone()));
    root.insert("exitCode".into(), Node::Int(i128::from(r.exit_code())));
    // A shard's part (`--shard I/N`): which one, for `--merge-reports`.
    if let Some(shard) = &r.shard {
        let mut m = Map::default();
        m.insert("index".into(), Node::Int(shard.index as i128));
        m.insert("count".into(), Node::Int(shard.count as i128));
        m.insert("showSecrets".into(), Node::Bool(shard.show_secrets));
        root.insert("shard".into(), Node::Map(m));
    }
    root.insert("totals".into(), counts(&Action::REVIEWED, |a| r.count(a)));
    root.insert("risks".into(), risks(r));
    root.insert(
        "failOn".into(),
        Node::str(match r.fail_on {
            FailOn::NewErrors => "new-errors",
            FailOn::AnyError => "any-error",
            FailOn::NotReviewed => "not-reviewed",
        }),
    );
    let overlays = r.overlays.iter().map(|o| overlay(r, o)).collect();
    root.insert("overlays".into(), Node::Seq(overlays));
    document(root)
}

/// One overlay of a review: its status, failure, totals, changed objects and warnings.
fn overlay(r: &Review, o: &OverlayReview) -> Node {
    let mut m = Map::default();
    m.insert("path".into(), Node::str(o.name.clone()));
    let status = match &o.status {
        Status::Compared if o.no_changes() => "unchanged",
        Status::Compared => "compared",
        Status::Added => "added",
        Status::Removed => "removed",
        Status::BaseFailed(_) => "base-failed",
        Status::HeadFailed(_) => "head-failed",
        Status::NotFetched(_) => "not-fetched",
        Status::BrokenBefore(_) => "broken-before",
        Status::NotReviewed(_) => "not-reviewed",
        Status::NotRendered(_) => "not-rendered",
    };
    m.insert("status".into(), Node::str(status));
    // A shard's overlay's own name prefix and suffix, which the merge groups by.
    if r.shard.is_some() {
        let Affixes { prefix, suffix } = &o.affixes;
        for (k, v) in [("namePrefix", prefix), ("nameSuffix", suffix)] {
            if !v.is_empty() {
                m.insert(k.into(), Node::str(v.clone()));
            }
        }
    }
    m.insert(
        "error".into(),
        o.failure()
            .map_or(Node::Null, |f| Node::str(f.text.clone())),
    );
    m.insert("failure".into(), o.failure().map_or(Node::Null, failure));
    m.insert(
        "totals".into(),
        if o.no_changes() || o.broken_before().is_some() {
            Node::Null
        } else {
            counts(&Action::REVIEWED, |a| o.count(a))
        },
    );
    let objects = o
        .objects
        .iter()
        .enumerate()
        .filter(|(_, x)| x.action != Action::Unchanged)
        .map(|(j, x)| object(r, o, j, x))
        .collect();
    m.insert("objects".into(), Node::Seq(objects));
    m.insert(
        "warnings".into(),
        Node::Seq(o.warnings.iter().map(|w| Node::str(w.clone())).collect()),
    );
    Node::Map(m)
}

/// An overlay's failure: code, message, and the file and line when known.
fn failure(f: &Failure) -> Node {
    let mut fm = Map::default();
    fm.insert("code".into(), Node::str(f.code.clone()));
    fm.insert("message".into(), Node::str(f.message.clone()));
    fm.insert("file".into(), f.file.clone().map_or(Node::Null, Node::str));
    fm.insert(
        "line".into(),
        f.line.map_or(Node::Null, |l| Node::Int(l as i128)),
    );
    Node::Map(fm)
}

/// A changed object of an overlay (its `j`th object): the row, the changes and the diff; on a
/// shard, a created or deleted object as rendered.
fn object(r: &Review, o: &OverlayReview, j: usize, x: &ObjectChange) -> Node {
    let mut om = object_row(x);
    om.insert(
        "movedFrom".into(),
        x.moved_from.clone().map_or(Node::Null, Node::str),
    );
    let changes = x
        .changes
        .iter()
        .map(|c| {
            let mut cm = Map::default();
            cm.insert("path".into(), Node::str(c.path.clone()));
            cm.insert("before".into(), c.before.clone().unwrap_or(Node::Null));
            cm.insert("after".into(), c.after.clone().unwrap_or(Node::Null));
            if let Some(cause) = &c.cause {
                cm.insert("cause".into(), super::cause::json(cause));
            }
            Node::Map(cm)
        })
        .collect();
    om.insert("changes".into(), Node::Seq(changes));
    om.insert("diff".into(), Node::str(review_object(&o.name, x)));
    // A shard's created or deleted object as rendered, which the merge of
    // the shards pairs into a move with another shard's.
    if r.shard.is_some() {
        if let Some((_, node, causes)) = o.unpaired.iter().find(|(at, _, _)| *at == j) {
            om.insert("object".into(), node.clone());
            if !causes.is_empty() {
                om.insert("fieldCauses".into(), super::cause::table_json(causes));
            }
        }
    }
    Node::Map(om)
}
