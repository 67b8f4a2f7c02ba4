//! Identical changes across a review's overlays: an object that changes the same way in
//! several overlays (same action, kind, name, renamed-from name and field changes; its
//! namespace aside, as overlays often set their own) is shown once, "same change in dev,
//! staging, prod", and so is a risk. Pure: reads the model, returns groups.

use std::collections::HashMap;

use crate::yaml::Node;
use crate::yaml::json::{JsonStyle, to_json};

use super::model::{Affixes, ObjectChange, ObjectId, OverlayReview, Risk};

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

/// What makes two object changes the same, their namespace and the overlay's own name
/// prefix and suffix (`a`) aside.
fn object_key(o: &ObjectChange, a: &Affixes) -> String {
    let name = |n: &str| named(n, a).unwrap_or_else(|| n.to_string());
    let mut k = format!(
        "{}\0{}\0{}\0{}\0{}",
        o.action.as_str(),
        o.id.api_version,
        o.id.kind,
        name(&o.id.name),
        o.renamed_from
            .as_ref()
            .map_or(String::new(), |f| name(&f.name))
    );
    for c in &o.changes {
        let names_a_name = c
            .path
            .rsplit('.')
            .next()
            .is_some_and(|last| !last.contains('[') && is_name_key(last));
        let value = |v: &Option<crate::yaml::Node>| {
            let Some(n) = v else {
                return "-".to_string();
            };
            let mut n = n.clone();
            match n
                .as_str()
                .filter(|_| names_a_name)
                .and_then(|s| named(s, a))
            {
                Some(marked) => n = Node::str(marked),
                None => mark_names(&mut n, a),
            }
            to_json(&n, JsonStyle::COMPACT)
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
            k.push_str(&content_key(text, &o.id.namespace, a));
        }
    }
    k
}

/// An object's text as data, its namespace and its overlay's name prefix and suffix taken
/// out structurally: `metadata.namespace` removed, every string that is the namespace as a
/// whole (a subject's or a reference's `namespace`) replaced by one mark, and the name and
/// every name it refers to ([`mark_names`]) marked around what the prefix and suffix leave.
/// A value that merely contains the namespace's or the prefix's text (`2>/dev/null` in
/// overlay `dev`) is data, and stays. Text that does not parse is compared as it is.
fn content_key(text: &str, namespace: &str, a: &Affixes) -> String {
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
        if let Some(m) = node.as_map_mut() {
            for (k, v) in m.iter_mut() {
                // A ConfigMap's or Secret's data is data, whatever its keys.
                if !matches!(k.as_str(), "data" | "stringData" | "binaryData") {
                    mark_names(v, a);
                }
            }
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

/// Whether a field holds a name, as kustomize's name references and `metadata.name` do
/// (`name`, `claimName`, `secretName` …).
fn is_name_key(k: &str) -> bool {
    k == "name" || k.ends_with("Name")
}

/// A name of an overlay whose own name prefix and suffix are `a`, as a mark around what
/// they leave (`dev-web` in an overlay of prefix `dev-` and in one of `prod-` marks the
/// same); `None` when the overlay sets neither or the name does not carry them.
fn named(name: &str, a: &Affixes) -> Option<String> {
    if a.prefix.is_empty() && a.suffix.is_empty() {
        return None;
    }
    let core = name
        .strip_prefix(a.prefix.as_str())?
        .strip_suffix(a.suffix.as_str())?;
    (!core.is_empty()).then(|| format!("\u{1}{core}\u{1}"))
}

/// Marks every name under `node` (the value of a [`is_name_key`] field) with [`named`]: the
/// references to the overlay's renamed objects compare alike across overlays.
fn mark_names(node: &mut Node, a: &Affixes) {
    match node {
        Node::Map(m) => {
            for (k, v) in m.iter_mut() {
                let marked = v
                    .as_str()
                    .filter(|_| is_name_key(k.as_str()))
                    .and_then(|s| named(s, a));
                match marked {
                    Some(n) => *v = Node::str(n),
                    None => mark_names(v, a),
                }
            }
        }
        Node::Seq(s) => s.iter_mut().for_each(|v| mark_names(v, a)),
        _ => {}
    }
}

/// Each overlay's list of changed objects (`lists`, in the order of `overlays`) with the
/// overlay's own name prefix and suffix, as [`objects`] takes them.
pub(crate) fn with_affixes<'a>(
    overlays: &[&'a OverlayReview],
    lists: &[Vec<&'a ObjectChange>],
) -> Vec<(&'a Affixes, Vec<&'a ObjectChange>)> {
    overlays
        .iter()
        .zip(lists)
        .map(|(o, l)| (&o.affixes, l.clone()))
        .collect()
}

/// For each overlay's list of changed objects (with the overlay's own name prefix and
/// suffix), how each stands among identical changes.
pub(crate) fn objects(lists: &[(&Affixes, Vec<&ObjectChange>)]) -> Vec<Vec<Same>> {
    let mut first: HashMap<String, (usize, usize)> = HashMap::new();
    let mut out: Vec<Vec<Same>> = lists
        .iter()
        .map(|(_, l)| vec![Same::Alone; l.len()])
        .collect();
    for (i, (affixes, list)) in lists.iter().enumerate() {
        for (j, o) in list.iter().enumerate() {
            let key = object_key(o, affixes);
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

/// Identical risks: one risk (the first found), every (overlay, object) it is found at, in
/// order of first appearance.
pub(crate) struct RiskGroup<'a> {
    pub(crate) risk: &'a Risk,
    pub(crate) at: Vec<(&'a str, &'a ObjectId)>,
}

impl RiskGroup<'_> {
    /// The overlays, each once, in order.
    pub(crate) fn overlays(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (o, _) in &self.at {
            if !out.contains(o) {
                out.push(o);
            }
        }
        out
    }

    /// The objects by kind and name, each once, in order (an overlay's namespace aside).
    pub(crate) fn objects(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = Vec::new();
        for (_, id) in &self.at {
            let k = (id.kind.as_str(), id.name.as_str());
            if !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }

    /// What the objects are: `apps/v1 Deployment prod/web` for one object in one overlay,
    /// `Deployment web` for one object in several, `3 Deployments (web, api, worker)`.
    pub(crate) fn subject(&self) -> String {
        let objects = self.objects();
        match (objects.as_slice(), self.at.first()) {
            ([_], Some((_, id))) if self.at.len() == 1 => id.display(),
            ([(kind, name)], Some((_, id))) => format!("{} {kind} {name}", id.api_version),
            _ => {
                let names: Vec<&str> = objects.iter().map(|(_, n)| *n).collect();
                format!("{} ({})", kinds_phrase(&objects), names.join(", "))
            }
        }
    }
}

/// What a group of risks says: the risk's own words for one object, the words its objects
/// share (their changed fields aside) for several.
pub(crate) fn risk_what(g: &RiskGroup<'_>) -> String {
    if g.objects().len() > 1 {
        g.risk.gist()
    } else {
        g.risk.what.clone()
    }
}

/// `3 Deployments`, `2 Deployments and 1 StatefulSet`, `4 objects`.
fn kinds_phrase(objects: &[(&str, &str)]) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for (k, _) in objects {
        match kinds.iter_mut().find(|(x, _)| x == k) {
            Some((_, n)) => *n += 1,
            None => kinds.push((k, 1)),
        }
    }
    if kinds.len() > 2 {
        return format!("{} objects", objects.len());
    }
    let parts: Vec<String> = kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}{}", if *n == 1 { "" } else { "s" }))
        .collect();
    parts.join(" and ")
}

/// Risks grouped: each distinct risk — its kind, field, rule and what it says with the
/// object's own changed fields (the parenthesised part) aside — with every overlay and
/// object it is found at, in order of first appearance.
pub(crate) fn risks<'a>(all: &[(&'a str, &'a Risk)]) -> Vec<RiskGroup<'a>> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<RiskGroup<'a>> = Vec::new();
    for (overlay, risk) in all {
        let key = format!(
            "{}\0{:?}\0{}\0{}",
            risk.kind.as_str(),
            risk.path,
            risk.gist(),
            risk.rule
        );
        match index.get(&key).and_then(|at| out.get_mut(*at)) {
            Some(g) => g.at.push((overlay, &risk.object)),
            None => {
                index.insert(key, out.len());
                out.push(RiskGroup {
                    risk,
                    at: vec![(overlay, &risk.object)],
                });
            }
        }
    }
    out
}

/// The parts of an image reference: `registry/path/name:tag@digest`.
struct ImageParts<'a> {
    /// Everything before the name (registry and path), empty for a bare name.
    path: &'a str,
    name: &'a str,
    tag: &'a str,
    digest: &'a str,
}

fn image_parts(image: &str) -> ImageParts<'_> {
    let (rest, digest) = image.split_once('@').unwrap_or((image, ""));
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (repo, tag) = match rest[slash..].rfind(':') {
        Some(i) => (&rest[..slash + i], &rest[slash + i + 1..]),
        None => (rest, ""),
    };
    let (path, name) = match repo.rfind('/') {
        Some(i) => (&repo[..i], &repo[i + 1..]),
        None => ("", repo),
    };
    ImageParts {
        path,
        name,
        tag,
        digest,
    }
}

/// The parts of an image reference that differ between two references, each as `image tag
/// v1 → v2` (registry path, name, tag, digest).
pub(crate) fn image_changes(before: &str, after: &str) -> Vec<String> {
    let (b, a) = (image_parts(before), image_parts(after));
    let shown = |s: &str| {
        if s.is_empty() {
            "(none)".to_string()
        } else {
            s.to_string()
        }
    };
    let mut out = Vec::new();
    for (what, x, y) in [
        ("registry path", b.path, a.path),
        ("name", b.name, a.name),
        ("tag", b.tag, a.tag),
        ("digest", b.digest, a.digest),
    ] {
        if x != y {
            out.push(format!("image {what} {} → {}", shown(x), shown(y)));
        }
    }
    out
}

/// The label key a change's path sets (`.metadata.labels.app`, `.spec.selector.matchLabels.app`,
/// a template's labels), if it is one.
fn label_key(path: &str) -> Option<&str> {
    for marker in [".labels.", ".matchLabels.", ".spec.selector."] {
        if let Some(i) = path.rfind(marker) {
            let key = &path[i + marker.len()..];
            if !key.is_empty() && !key.contains(".matchExpressions") {
                return Some(key.trim_matches('"'));
            }
        }
    }
    None
}

/// What a change does, as a summary line's subject: the image parts that differ, a label's
/// new value, or the field's path with its two values (scalars only).
fn gists(c: &super::model::Change) -> Vec<String> {
    let scalar = |n: &Option<Node>| match n {
        None => Some("(none)".to_string()),
        Some(n) if n.is_scalar() => n.scalar_text().map(|t| t.replace('\n', "\\n")),
        Some(_) => None,
    };
    let (Some(b), Some(a)) = (scalar(&c.before), scalar(&c.after)) else {
        return Vec::new();
    };
    if super::text::is_image_path(&c.path) && c.before.is_some() && c.after.is_some() {
        return image_changes(&b, &a);
    }
    if b.chars().count() > 80 || a.chars().count() > 80 {
        return Vec::new();
    }
    match label_key(&c.path) {
        Some(key) => vec![format!("label {key}: {b} → {a}")],
        None => vec![format!("{}: {b} → {a}", c.path)],
    }
}

/// At most this many lines of identical changes open a review.
pub(crate) const SUMMARY_SHOWN: usize = 10;

/// Where a change is found: the overlay's index, the object's kind and name.
type Place<'a> = (usize, &'a str, &'a str);

/// The top of a review: identical changes grouped across objects and overlays, each changed
/// in at least two objects, most objects first: `image tag v0.10.5 → v0.10.6 in 11
/// Deployments × 4 overlays`, `label app: webapp → webapp2 in 25 objects`. At most `max`
/// lines.
pub(crate) fn summary(r: &super::model::Review, max: usize) -> Vec<String> {
    // Each gist with the (overlay, kind, name) it is found at, in order of first appearance.
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut found: Vec<(String, Vec<Place<'_>>)> = Vec::new();
    for (i, o) in r.overlays.iter().enumerate() {
        for x in &o.objects {
            if !matches!(
                x.action,
                super::model::Action::Update
                    | super::model::Action::Rename
                    | super::model::Action::Move
            ) {
                continue;
            }
            for c in &x.changes {
                for g in gists(c) {
                    let at = *index.entry(g.clone()).or_insert_with(|| {
                        found.push((g, Vec::new()));
                        found.len() - 1
                    });
                    if let Some((_, list)) = found.get_mut(at) {
                        let k = (i, x.id.kind.as_str(), x.id.name.as_str());
                        if !list.contains(&k) {
                            list.push(k);
                        }
                    }
                }
            }
        }
    }
    found.retain(|(_, at)| at.len() >= 2);
    found.sort_by_key(|(_, at)| std::cmp::Reverse(at.len()));
    found
        .iter()
        .take(max)
        .map(|(g, at)| format!("{g} in {}", spread(at)))
        .collect()
}

/// `11 Deployments × 4 overlays` when every overlay holds the same objects, else `25 objects
/// in 3 overlays` (or `25 objects` in one).
fn spread(at: &[Place<'_>]) -> String {
    let mut overlays: Vec<usize> = at.iter().map(|(i, _, _)| *i).collect();
    overlays.dedup();
    let objects_of = |i: usize| -> Vec<(&str, &str)> {
        at.iter()
            .filter(|(o, _, _)| *o == i)
            .map(|(_, k, n)| (*k, *n))
            .collect()
    };
    let first = objects_of(overlays.first().copied().unwrap_or(0));
    let alike = overlays.iter().all(|i| objects_of(*i) == first);
    if overlays.len() > 1 && alike {
        return format!("{} × {} overlays", kinds_phrase(&first), overlays.len());
    }
    let all: Vec<(&str, &str)> = at.iter().map(|(_, k, n)| (*k, *n)).collect();
    let what = if overlays.len() > 1 {
        format!("{} objects", all.len())
    } else {
        kinds_phrase(&all)
    };
    if overlays.len() > 1 {
        format!("{what} in {} overlays", overlays.len())
    } else {
        what
    }
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

    const NONE: &Affixes = &Affixes {
        prefix: String::new(),
        suffix: String::new(),
    };

    /// Lists of overlays without a name prefix or suffix.
    fn plain(lists: Vec<Vec<&ObjectChange>>) -> Vec<(&Affixes, Vec<&ObjectChange>)> {
        lists.into_iter().map(|l| (NONE, l)).collect()
    }

    #[test]
    fn same_changes_across_overlays_namespace_aside() {
        let (dev, staging, prod) = (
            object("dev", "web", "2"),
            object("staging", "web", "2"),
            object("prod", "web", "3"),
        );
        let other = object("dev", "api", "2");
        let got = objects(&plain(vec![
            vec![&dev, &other],
            vec![&staging],
            vec![&prod],
        ]));
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
            objects(&plain(vec![vec![&dev], vec![&prod]])),
            [vec![Same::First(vec![0, 1])], vec![Same::As(0)]]
        );
        // The namespace's text inside a longer value is data: it differs, no group.
        let (dev, prod) = (created("dev", "/dev/x"), created("prod", "/prod/x"));
        assert_eq!(
            objects(&plain(vec![vec![&dev], vec![&prod]])),
            [vec![Same::Alone], vec![Same::Alone]]
        );
    }

    #[test]
    fn the_overlays_name_prefix_and_suffix_are_taken_out_of_names_and_references() {
        let affixes = |prefix: &str, suffix: &str| Affixes {
            prefix: prefix.into(),
            suffix: suffix.into(),
        };
        let (dev, prod) = (affixes("dev-", ""), affixes("prod-", "-v2"));
        // A new Deployment that reads the overlay's renamed ConfigMap, and holds the
        // prefix's text in its data-like values.
        let created = |p: &str, s: &str, arg: &str| {
            let mut o = object("", &format!("{p}web{s}"), "1");
            o.action = Action::Create;
            o.changes.clear();
            o.after = format!(
                "kind: Deployment\nmetadata:\n  name: {p}web{s}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        args: [{arg}]\n      volumes:\n      - name: config\n        configMap:\n          name: {p}config{s}\n"
            );
            o
        };
        let (a, b) = (created("dev-", "", "x"), created("prod-", "-v2", "x"));
        assert_eq!(
            objects(&[(&dev, vec![&a]), (&prod, vec![&b])]),
            [vec![Same::First(vec![0, 1])], vec![Same::As(0)]]
        );
        // Without the overlays' affixes the names differ: no group.
        assert_eq!(
            objects(&plain(vec![vec![&a], vec![&b]])),
            [vec![Same::Alone], vec![Same::Alone]]
        );
        // The prefix's text in a value that is not a name is data: it differs, no group.
        let (a, b) = (
            created("dev-", "", "dev-x"),
            created("prod-", "-v2", "prod-x"),
        );
        assert_eq!(
            objects(&[(&dev, vec![&a]), (&prod, vec![&b])]),
            [vec![Same::Alone], vec![Same::Alone]]
        );
        // An update of a reference: its old and new names compare without the affixes.
        let update = |p: &str, s: &str| {
            let mut o = object("", &format!("{p}web{s}"), "1");
            o.changes = vec![Change {
                path: ".spec.template.spec.volumes[name=\"config\"].configMap.name".into(),
                before: Some(Node::str(format!("{p}config{s}"))),
                after: Some(Node::str(format!("{p}settings{s}"))),
                cause: None,
            }];
            o
        };
        let (a, b) = (update("dev-", ""), update("prod-", "-v2"));
        assert_eq!(
            objects(&[(&dev, vec![&a]), (&prod, vec![&b])]),
            [vec![Same::First(vec![0, 1])], vec![Same::As(0)]]
        );
    }

    #[test]
    fn risks_grouped_across_objects_and_overlays() {
        let risk = |ns: &str, name: &str, container: &str| Risk {
            kind: RiskKind::Rollout,
            object: object(ns, name, "2").id,
            path: Some(".spec.template".into()),
            what: format!(
                "the pod template changes (.spec.template.spec.containers[name=\"{container}\"].image): every pod is replaced"
            ),
            rule: "r".into(),
        };
        let (a, b, c) = (
            risk("dev", "web", "web"),
            risk("prod", "web", "web"),
            risk("prod", "api", "api"),
        );
        let other = Risk {
            what: "the pod template changes: its pods of ordinal 2 and above are replaced".into(),
            ..risk("prod", "db", "db")
        };
        let got = risks(&[("dev", &a), ("prod", &b), ("prod", &c), ("prod", &other)]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].overlays(), ["dev", "prod"]);
        assert_eq!(
            got[0].objects(),
            [("Deployment", "web"), ("Deployment", "api")]
        );
        assert_eq!(got[0].subject(), "2 Deployments (web, api)");
        assert_eq!(got[1].subject(), "apps/v1 Deployment prod/db");
    }

    #[test]
    fn image_references_split_into_the_parts_that_differ() {
        assert_eq!(
            image_changes(
                "us-central1-docker.pkg.dev/google-samples/microservices-demo/adservice:v0.10.5",
                "us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo/adservice:v0.10.6"
            ),
            [
                "image registry path us-central1-docker.pkg.dev/google-samples/microservices-demo → us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo",
                "image tag v0.10.5 → v0.10.6"
            ]
        );
        assert_eq!(
            image_changes(
                "localhost:5000/web@sha256:aa",
                "localhost:5000/web:1@sha256:bb"
            ),
            ["image tag (none) → 1", "image digest sha256:aa → sha256:bb"]
        );
        assert_eq!(
            image_changes("nginx", "redis"),
            ["image name nginx → redis"]
        );
    }
}
