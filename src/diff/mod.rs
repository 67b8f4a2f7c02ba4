//! `ply diff`: pairs desired objects with a live snapshot by (API group, kind, namespace,
//! name), predicts what `kubectl apply` (client-side three-way merge, or server-side apply)
//! would store, hides server-managed noise, masks Secret data, and returns a [`Report`] of
//! the report layer's object changes, which `crate::report` writes in every format. Reads
//! no files but in [`sides`] (the desired objects and the snapshot of `ply diff --live`), and
//! prints nothing; the merge engines come in through the traits of `engine`. Must not
//! implement strategic merge or field ownership itself.

pub mod adapters;
pub mod engine;
pub(crate) mod mask;
pub(crate) mod mergepatch3;
pub(crate) mod noise;
pub(crate) mod paths;
pub(crate) mod sides;

use std::collections::HashMap;

use crate::diag::{Error, ErrorKind, Warnings};
use crate::live::{self, LAST_APPLIED};
use crate::report::Change;
use crate::resource::{Gvk, Resource, id_field_text};
use crate::source::Location;
use crate::yaml::json::{JsonStyle, to_json};
use crate::yaml::{EmitOptions, Node, emit_document};

use crate::merge::ssa::path_string;
pub use crate::resource::selector::Selector;
use engine::{Engines, SsaOutcome, value_at};

pub use crate::report::{Action, Conflict, OFFLINE_NOTE, ObjectChange, ObjectId, Report};

/// Which apply to predict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `kubectl apply` (three-way merge with the last-applied annotation).
    ClientSide,
    /// `kubectl apply --server-side`.
    ServerSide { force_conflicts: bool },
}

/// Which live objects absent from the desired set are shown as deletions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prune {
    Off,
    /// `--prune -l SELECTOR`.
    Selector(Selector),
    /// `--prune --prune-all` (kubectl's `--all`).
    All,
}

/// Validated options of one diff run.
#[derive(Clone, Debug)]
pub struct DiffOptions {
    pub mode: Mode,
    /// The field manager (`kubectl-client-side-apply` or `kubectl` by default, as in kubectl).
    pub field_manager: String,
    /// Namespace of namespaced desired objects that have none.
    pub namespace: String,
    pub prune: Prune,
    pub show_managed_fields: bool,
    pub show_secrets: bool,
    /// Show a changed last-applied annotation in full, not as one line.
    pub show_last_applied: bool,
    /// The snapshot holds every object of the cluster (`--assume-complete`): an object absent
    /// from it is a creation, whatever its namespace.
    pub assume_complete: bool,
}

impl DiffOptions {
    pub fn server_side(&self) -> bool {
        matches!(self.mode, Mode::ServerSide { .. })
    }
}

/// A core `Namespace` object.
fn is_namespace(node: &Node) -> bool {
    node.str_at(&["apiVersion"]) == Some("v1") && node.str_at(&["kind"]) == Some("Namespace")
}

/// Which namespaces the snapshot says something about. A snapshot taken with `kubectl get …
/// -n prod` says nothing about `staging`: a desired object of a namespace it holds nothing of,
/// while it holds objects of other namespaces, is not known either way, and is not compared.
/// The snapshot covers every namespace when it is complete: when the user says so
/// (`--assume-complete`), when it lists `Namespace` objects (`kubectl get namespaces,… -A`: it
/// says which namespaces exist, an object of another is a creation), or when it holds no
/// namespaced object (empty, or only cluster-scoped objects): then it reads as a cluster
/// without the objects, of which `kubectl diff` predicts the creation.
struct Coverage<'a> {
    complete: bool,
    /// The namespaces its objects are in, and those it lists.
    namespaces: std::collections::HashSet<&'a str>,
}

impl<'a> Coverage<'a> {
    fn of(live: &'a [Resource], opts: &'a DiffOptions, eng: Engines<'_>) -> Coverage<'a> {
        let mut namespaces = std::collections::HashSet::new();
        for r in live {
            match r.node.str_at(&["metadata", "namespace"]) {
                Some(ns) if !ns.is_empty() => {
                    namespaces.insert(ns);
                }
                // A namespaced (or unknown) kind without a namespace, as a hand-made snapshot
                // may hold: read as the default namespace's, as desired objects are.
                _ => {
                    let gvk = Gvk::of(&r.node);
                    if eng.kinds.namespaced(&gvk.group, &gvk.kind) != Some(false) {
                        namespaces.insert(opts.namespace.as_str());
                    }
                }
            }
        }
        let complete = opts.assume_complete
            || namespaces.is_empty()
            || live.iter().any(|r| is_namespace(&r.node));
        Coverage {
            complete,
            namespaces,
        }
    }

    /// Whether an object of `namespace` (empty: cluster-scoped) absent from the snapshot is
    /// known to be absent from the cluster.
    fn covers(&self, namespace: &str) -> bool {
        self.complete || namespace.is_empty() || self.namespaces.contains(namespace)
    }
}

/// Pairing identity: (API group, kind, namespace, name) — not the version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub group: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl Key {
    pub fn of(node: &Node) -> Key {
        let gvk = Gvk::of(node);
        Key {
            group: gvk.group,
            kind: gvk.kind,
            // `name: 8080` renders as the name "8080", and pairs by that text.
            namespace: id_field_text(node, "namespace").unwrap_or_default(),
            name: id_field_text(node, "name").unwrap_or_default(),
        }
    }
}

/// kubectl's default prune allowlist (`pkg/util/prune/prune.go`,
/// `defaultNamespacedPruneResources` and `defaultNonNamespacedPruneResources`): (group, kind).
const PRUNE_KINDS: [(&str, &str); 16] = [
    ("", "ConfigMap"),
    ("", "Endpoints"),
    ("", "Namespace"),
    ("", "PersistentVolumeClaim"),
    ("", "PersistentVolume"),
    ("", "Pod"),
    ("", "ReplicationController"),
    ("", "Secret"),
    ("", "Service"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("networking.k8s.io", "Ingress"),
    ("apps", "DaemonSet"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
];

/// Runs the prediction over every object.
pub fn diff(
    desired: Vec<Resource>,
    live: Vec<Resource>,
    opts: &DiffOptions,
    eng: Engines<'_>,
    warnings: &mut Warnings,
) -> Result<Report, Error> {
    let desired_nodes = with_namespaces(desired, &live, opts, eng, warnings);
    let live_index = index_live(&live, warnings);

    let coverage = Coverage::of(&live, opts, eng);
    let mut seen: HashMap<Key, ()> = HashMap::new();
    let mut used_live = vec![false; live.len()];
    let mut objects = Vec::new();
    for (node, origin) in &desired_nodes {
        let key = Key::of(node);
        if seen.insert(key.clone(), ()).is_some() {
            return Err(Error::new(
                ErrorKind::DuplicateId,
                format!(
                    "{} appears twice in the desired objects",
                    ObjectId::of(node).display()
                ),
            )
            .at_opt(origin.clone()));
        }
        if !live_index.contains_key(&key) && !coverage.covers(&key.namespace) {
            objects.push(ObjectChange::bare(Action::Unknown, ObjectId::of(node)));
            continue;
        }
        let live_obj = live_index.get(&key).and_then(|&i| {
            if let Some(u) = used_live.get_mut(i) {
                *u = true;
            }
            live.get(i).map(|r| &r.node)
        });
        let at_version = live_obj.and_then(|l| converted(node, l, warnings));
        let live_obj = at_version.as_ref().or(live_obj);
        let obj =
            predict(node, live_obj, opts, eng, warnings).map_err(|e| e.at_opt(origin.clone()))?;
        objects.push(obj);
    }
    find_renames(&mut objects, &live, &mut used_live, opts, eng);
    if opts.prune != Prune::Off {
        objects.extend(pruned(&desired_nodes, &live, &used_live, opts));
    }

    Ok(Report {
        server_side: opts.server_side(),
        field_manager: opts.field_manager.clone(),
        objects,
    })
}

/// The desired objects with the namespace the API server would give them: the default
/// namespace on a namespaced object without one, none on a cluster-scoped object. Scope: the
/// schema knows built-in kinds; for others, the snapshot tells (a live object of the kind with
/// a namespace means the kind is namespaced).
fn with_namespaces(
    desired: Vec<Resource>,
    live: &[Resource],
    opts: &DiffOptions,
    eng: Engines<'_>,
    warnings: &mut Warnings,
) -> Vec<(Node, Option<Location>)> {
    let live_scope = |group: &str, kind: &str| -> Option<bool> {
        live.iter()
            .map(|r| &r.node)
            .filter(|n| {
                let g = Gvk::of(n);
                g.group == group && g.kind == kind
            })
            .map(|n| {
                n.str_at(&["metadata", "namespace"])
                    .is_some_and(|s| !s.is_empty())
            })
            .next()
    };

    let mut desired_nodes = Vec::with_capacity(desired.len());
    for r in desired {
        let mut node = r.node;
        let gvk = Gvk::of(&node);
        let namespaced = match eng.kinds.namespaced(&gvk.group, &gvk.kind) {
            Some(n) => n,
            None => match live_scope(&gvk.group, &gvk.kind) {
                Some(n) => n,
                None => {
                    let has_ns = node
                        .str_at(&["metadata", "namespace"])
                        .is_some_and(|s| !s.is_empty());
                    if !has_ns {
                        warnings.warn(format!(
                            "{}: unknown kind {} with no live object of its kind; assuming it is namespaced",
                            ObjectId::of(&node).display(),
                            gvk.kind
                        ));
                    }
                    true
                }
            },
        };
        if let Some(meta) = node.get_mut("metadata").and_then(Node::as_map_mut) {
            let ns_empty = meta
                .get("namespace")
                .and_then(Node::as_str)
                .is_none_or(str::is_empty);
            if namespaced && ns_empty {
                // kubectl: NamespaceParam(..).DefaultNamespace() sets it on the object.
                meta.insert("namespace".into(), Node::str(opts.namespace.clone()));
            } else if !namespaced {
                // The API server clears the namespace of cluster-scoped objects.
                meta.shift_remove("namespace");
            }
        }
        desired_nodes.push((node, r.origin));
    }
    desired_nodes
}

/// The live objects by key (the first of a key held twice, with a warning), warning of the
/// objects being deleted.
fn index_live(live: &[Resource], warnings: &mut Warnings) -> HashMap<Key, usize> {
    let mut live_index: HashMap<Key, usize> = HashMap::new();
    for (i, r) in live.iter().enumerate() {
        let key = Key::of(&r.node);
        if live_index.contains_key(&key) {
            warnings.warn(format!(
                "the snapshot holds {} twice (at several versions?); using the first",
                ObjectId::of(&r.node).display()
            ));
            continue;
        }
        live_index.insert(key, i);
        if r.node
            .get_path(&["metadata", "deletionTimestamp"])
            .is_some_and(|n| !n.is_null())
        {
            warnings.warn(format!(
                "{} is being deleted (it has a deletionTimestamp)",
                ObjectId::of(&r.node).display()
            ));
        }
    }
    live_index
}

/// kubectl reads the live object at the manifest's version (the server converts); the
/// snapshot may hold another version: the live object as if converted (with a warning), or
/// `None` when it is at the manifest's version.
fn converted(node: &Node, live: &Node, warnings: &mut Warnings) -> Option<Node> {
    if live.str_at(&["apiVersion"]) == node.str_at(&["apiVersion"]) {
        return None;
    }
    let mut c = live.clone();
    if let (Some(m), Some(v)) = (c.as_map_mut(), node.get("apiVersion")) {
        m.insert("apiVersion".into(), v.clone());
    }
    warnings.warn(format!(
        "{}: the snapshot holds it as {}; compared as if the server had converted it (version conversion is not modelled)",
        ObjectId::of(node).display(),
        live.str_at(&["apiVersion"]).unwrap_or("")
    ));
    Some(c)
}

/// Hash-suffix renames: a created object whose name differs from an unpaired live object of
/// the same group, kind and namespace only by kustomize's hash suffix becomes a rename of it.
fn find_renames(
    objects: &mut [ObjectChange],
    live: &[Resource],
    used_live: &mut [bool],
    opts: &DiffOptions,
    eng: Engines<'_>,
) {
    for obj in objects.iter_mut().filter(|o| o.action == Action::Create) {
        let Some(base) = hash_base(&obj.id.name) else {
            continue;
        };
        let group = Gvk::from_api_version(&obj.id.api_version, &obj.id.kind).group;
        let found = live.iter().enumerate().find(|(i, r)| {
            !used_live.get(*i).copied().unwrap_or(true) && {
                let k = Key::of(&r.node);
                k.group == group
                    && k.kind == obj.id.kind
                    && k.namespace == obj.id.namespace
                    && hash_base(&k.name) == Some(base)
            }
        });
        let Some((i, old)) = found else {
            continue;
        };
        if let Some(u) = used_live.get_mut(i) {
            *u = true;
        }
        let mut before = old.node.clone();
        let mut after = obj.predicted.clone().unwrap_or(Node::Null);
        noise::strip_pair(&mut before, &mut after, opts.show_managed_fields);
        let masked = !opts.show_secrets && (mask::is_secret(&after) || mask::is_secret(&before));
        obj.changes = shown_changes(eng, &Gvk::of(&after), &before, &after, masked);
        if masked {
            mask::mask_pair(Some(&mut before), Some(&mut after));
        }
        let updated = !opts.show_last_applied && noise::quiet_last_applied(&mut before, &mut after);
        obj.before = yaml_text(&before);
        obj.after = yaml_text(&after);
        if updated {
            obj.after.push_str(noise::LAST_APPLIED_UPDATED);
        }
        obj.renamed_from = Some(ObjectId::of(&old.node));
        obj.action = Action::Rename;
    }
}

/// Prune: live objects absent from the desired set, as `kubectl apply --prune` selects them
/// (`pkg/cmd/apply/prune.go`, `pkg/cmd/diff/prune.go`): of an allowlisted kind, in a
/// namespace the desired objects visit (or cluster-scoped), carrying the last-applied
/// annotation ("don't prune resources not created with apply"), matching the selector.
fn pruned(
    desired_nodes: &[(Node, Option<Location>)],
    live: &[Resource],
    used_live: &[bool],
    opts: &DiffOptions,
) -> Vec<ObjectChange> {
    let visited: Vec<&str> = desired_nodes
        .iter()
        .filter_map(|(n, _)| n.str_at(&["metadata", "namespace"]))
        .collect();
    let mut objects = Vec::new();
    for (i, r) in live.iter().enumerate() {
        if used_live.get(i).copied().unwrap_or(true) {
            continue;
        }
        let key = Key::of(&r.node);
        let allowlisted = PRUNE_KINDS
            .iter()
            .any(|(g, k)| *g == key.group && *k == key.kind);
        let in_scope = key.namespace.is_empty() || visited.contains(&key.namespace.as_str());
        let applied = r
            .node
            .get_path(&["metadata", "annotations", LAST_APPLIED])
            .is_some();
        let selected = match &opts.prune {
            Prune::Off => false,
            Prune::All => true,
            Prune::Selector(s) => s.matches(&r.node),
        };
        if !(allowlisted && in_scope && applied && selected) {
            continue;
        }
        let mut before = r.node.clone();
        noise::strip_one(&mut before, opts.show_managed_fields);
        if !opts.show_secrets && mask::is_secret(&before) {
            mask::mask_pair(Some(&mut before), None);
        }
        objects.push(ObjectChange {
            action: Action::Delete,
            id: ObjectId::of(&r.node),
            renamed_from: None,
            moved_from: None,
            before: yaml_text(&before),
            after: String::new(),
            changes: Vec::new(),
            conflicts: Vec::new(),
            predicted: None,
            stored_diff: None,
        });
    }
    objects
}

/// The name without kustomize's hash suffix (`-` and ten characters of its alphabet), when
/// it has one (`api/hasher/hasher.go` `encode`: hex digits mapped to consonants and digits).
pub fn hash_base(name: &str) -> Option<&str> {
    let (base, suffix) = name.rsplit_once('-')?;
    let ok = suffix.len() == 10
        && !base.is_empty()
        && suffix.bytes().all(|b| b"bcdfghkmt2456789".contains(&b));
    ok.then_some(base)
}

/// The changes of a pair as reported, found before masking (so that they are the fields that
/// differ) and then masked as the texts will be. The last-applied annotation changes with
/// every other change: listed only when it is the only change.
fn shown_changes(
    eng: Engines<'_>,
    gvk: &Gvk,
    before: &Node,
    after: &Node,
    masked: bool,
) -> Vec<Change> {
    let mut changes = paths::changes(eng.kinds, gvk, before, after);
    let annotation = format!(".metadata.annotations.{LAST_APPLIED}");
    if changes.len() > 1 {
        changes.retain(|c| c.path != annotation);
    }
    if masked {
        mask::mask_changes(&mut changes);
    }
    changes
}

pub fn yaml_text(node: &Node) -> String {
    let mut s = String::new();
    emit_document(&mut s, node, EmitOptions::default());
    s
}

/// Predicts one desired object against its live counterpart.
fn predict(
    desired: &Node,
    live: Option<&Node>,
    opts: &DiffOptions,
    eng: Engines<'_>,
    warnings: &mut Warnings,
) -> Result<ObjectChange, Error> {
    let gvk = Gvk::of(desired);
    let id = ObjectId::of(desired);
    let predicted = match opts.mode {
        Mode::ClientSide => client_side(&gvk, desired, live, &opts.field_manager, eng, warnings)?,
        Mode::ServerSide { force_conflicts } => {
            match eng
                .ssa
                .apply(&gvk, live, desired, &opts.field_manager, force_conflicts)?
            {
                SsaOutcome::Applied(mut n) => {
                    if mask::is_secret(&n) {
                        mask::fold_string_data(&mut n);
                    }
                    n
                }
                SsaOutcome::Conflicts(list) => {
                    let secret = mask::is_secret(desired) && !opts.show_secrets;
                    let conflicts = list
                        .into_iter()
                        .map(|c| {
                            let sensitive = secret
                                && matches!(c.path.first(), Some(engine::PathElement::Field(f)) if f == "data" || f == "stringData");
                            let hide = |v: Option<&Node>| {
                                v.map(|v| if sensitive { Node::str("***") } else { v.clone() })
                            };
                            Conflict {
                                path: path_string(&c.path),
                                live: hide(live.and_then(|l| value_at(l, &c.path))),
                                desired: hide(value_at(desired, &c.path)),
                                manager: c.manager,
                            }
                        })
                        .collect();
                    return Ok(ObjectChange {
                        conflicts,
                        predicted: live.cloned(),
                        ..ObjectChange::bare(Action::Conflict, id)
                    });
                }
            }
        }
    };

    let (action, before, after, changes) = match live {
        None => {
            let mut after = predicted.clone();
            noise::strip_one(&mut after, opts.show_managed_fields);
            let changed = vec![];
            if !opts.show_secrets && mask::is_secret(&after) {
                mask::mask_pair(None, Some(&mut after));
            }
            (Action::Create, String::new(), yaml_text(&after), changed)
        }
        Some(l) => {
            let mut before = l.clone();
            let mut after = predicted.clone();
            noise::strip_pair(&mut before, &mut after, opts.show_managed_fields);
            let masked =
                !opts.show_secrets && (mask::is_secret(&after) || mask::is_secret(&before));
            let changed = shown_changes(eng, &gvk, &before, &after, masked);
            if masked {
                mask::mask_pair(Some(&mut before), Some(&mut after));
            }
            let updated =
                !opts.show_last_applied && noise::quiet_last_applied(&mut before, &mut after);
            let (b, mut a) = (yaml_text(&before), yaml_text(&after));
            if updated {
                a.push_str(noise::LAST_APPLIED_UPDATED);
            }
            let action = if changed.is_empty() && b == a {
                Action::Unchanged
            } else {
                Action::Update
            };
            (action, b, a, changed)
        }
    };
    Ok(ObjectChange {
        action,
        id,
        renamed_from: None,
        moved_from: None,
        before,
        after,
        changes,
        conflicts: Vec::new(),
        predicted: Some(predicted),
        stored_diff: None,
    })
}

/// Client-side `kubectl apply` (`pkg/cmd/apply/patcher.go`, `pkg/util/apply.go`): the
/// manifest gets the new last-applied annotation (`GetModifiedConfiguration(obj, true, ..)`),
/// then a create, or the three-way patch against live — strategic for kinds kubectl knows,
/// JSON merge patch otherwise. The server folds a Secret's `stringData` into `data`.
fn client_side(
    gvk: &Gvk,
    desired: &Node,
    live: Option<&Node>,
    field_manager: &str,
    eng: Engines<'_>,
    warnings: &mut Warnings,
) -> Result<Node, Error> {
    let modified = with_last_applied(desired);
    let mut predicted = match live {
        None => modified,
        Some(current) => {
            let original = match live::last_applied(current)? {
                Some(o) => o,
                None => {
                    // kubectl's warning (`pkg/cmd/apply/apply.go`, warningNoLastAppliedConfigAnnotation).
                    warnings.warn(format!(
                        "{} is missing the {LAST_APPLIED} annotation which is required by kubectl apply; kubectl apply patches it automatically, and deletes nothing it did not apply",
                        ObjectId::of(current).display()
                    ));
                    Node::empty_map()
                }
            };
            if eng.kinds.strategic(gvk) {
                eng.csa
                    .three_way_strategic(gvk, &original, &modified, current)?
            } else {
                mergepatch3::apply_three_way(&original, &modified, current)?
            }
        }
    };
    // The PATCH (or create) is an Update by the client-side field manager: it takes over
    // what it changed (structured-merge-diff `Updater.Update`).
    match eng.ssa.record_update(gvk, live, &predicted, field_manager) {
        Ok(n) => predicted = n,
        Err(e) => warnings.warn(format!(
            "{}: managed fields not predicted: {}",
            ObjectId::of(desired).display(),
            e.message
        )),
    }
    if mask::is_secret(&predicted) {
        mask::fold_string_data(&mut predicted);
    }
    Ok(predicted)
}

/// The manifest with kubectl's last-applied annotation (`GetModifiedConfiguration(obj, true,
/// ..)` in kubectl `pkg/util/apply.go`): the manifest with its annotations minus this one —
/// an empty `annotations: {}` included, as kubectl sets the emptied map back — as compact JSON
/// with sorted keys and a trailing newline.
pub fn with_last_applied(desired: &Node) -> Node {
    let mut bare = desired.clone();
    let annotations = bare.ensure_path(&["metadata", "annotations"]);
    if !matches!(annotations, Node::Map(_)) {
        *annotations = Node::empty_map();
    }
    if let Node::Map(a) = annotations {
        a.shift_remove(LAST_APPLIED);
    }
    let mut text = to_json(&bare, JsonStyle::COMPACT);
    text.push('\n');
    let mut out = bare;
    if let Some(Node::Map(a)) = out.get_path_mut(&["metadata", "annotations"]) {
        a.insert(LAST_APPLIED.into(), Node::Str(text));
    }
    out
}

#[cfg(test)]
mod tests;
