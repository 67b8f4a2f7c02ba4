//! The API server's steps around the structured merge, as `kubectl apply --server-side` meets
//! them (`am:pkg/util/managedfields/internal/`): decoding and encoding `metadata.managedFields`
//! (`managedfields.go`), manager identities (`BuildManagerIdentifier`), the wrapper chain of
//! `fieldmanager.go` — the last-applied annotation rewrite for manager `kubectl`
//! (`lastappliedupdater.go`), its conflict waiver (`lastappliedmanager.go`), the
//! `before-first-apply` manager for objects without managedFields (`skipnonapplied.go`),
//! stripped metadata (`stripmeta.go`), entry times (`managedfieldsupdater.go`) — and reset
//! fields (`status` is never owned and keeps its live value). Pure: the caller passes the clock.

use std::collections::BTreeMap;

use super::path::{Path, PathElement, path_string};
use super::schema::{Schema, TypeRef};
use super::set::Set;
use super::typed::Typed;
use super::updater::{ManagedFields, Updater, UpdaterError, VersionedSet};
use super::value;
use crate::diag::{Error, ErrorKind};
use crate::yaml::json::{JsonStyle, write_json, write_json_string};
use crate::yaml::{Map, Node};

/// The annotation client-side apply keeps (`kubectl.kubernetes.io/last-applied-configuration`).
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The manager the server invents for fields that existed before the first apply.
pub(crate) const BEFORE_FIRST_APPLY: &str = "before-first-apply";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who owns a set of fields: the identity part of a managedFields entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Manager {
    pub name: String,
    pub operation: Operation,
    /// Part of the identity for Update entries only.
    pub api_version: String,
    pub subresource: String,
    /// RFC 3339 time of the last change, as the entry carries it.
    pub time: Option<String>,
}

impl Manager {
    /// `BuildManagerIdentifier`: the JSON of the entry without fields and time, and without
    /// apiVersion for Apply entries.
    pub fn identity(&self) -> String {
        // Field order of `metav1.ManagedFieldsEntry`, as Go's json.Marshal writes it.
        let mut out = String::from("{\"manager\":");
        write_json_string(&mut out, &self.name, JsonStyle::COMPACT);
        out.push_str(",\"operation\":");
        write_json_string(&mut out, self.operation.as_str(), JsonStyle::COMPACT);
        if self.operation == Operation::Update && !self.api_version.is_empty() {
            out.push_str(",\"apiVersion\":");
            write_json_string(&mut out, &self.api_version, JsonStyle::COMPACT);
        }
        if !self.subresource.is_empty() {
            out.push_str(",\"subresource\":");
            write_json_string(&mut out, &self.subresource, JsonStyle::COMPACT);
        }
        out.push('}');
        out
    }

    /// `printManager`: `"hpa" with subresource "scale" using autoscaling/v2`. The server prints
    /// the manager from its identity, which carries no time, so no ` at <time>` ever appears.
    pub fn describe(&self) -> String {
        let mut s = value::go_quote(&self.name);
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                value::go_quote(&self.subresource)
            ));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// One `metadata.managedFields[]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct ManagedEntry {
    pub manager: Manager,
    pub set: Set,
}

fn live_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Live, msg)
}

/// Reads `metadata.managedFields` (`DecodeManagedFields`): operation Apply or Update, a
/// non-empty apiVersion, fieldsType `FieldsV1`. Absent or `null` is no entries.
pub fn decode_managed_fields(object: &Node) -> Result<Vec<ManagedEntry>, Error> {
    let entries = match object.get_path(&["metadata", "managedFields"]) {
        None | Some(Node::Null) => return Ok(Vec::new()),
        Some(Node::Seq(items)) => items,
        Some(other) => {
            return Err(live_error(format!(
                "metadata.managedFields must be a list, not a {}",
                other.kind_name()
            )));
        }
    };
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let operation = match e.str_at(&["operation"]) {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            _ => {
                return Err(live_error(format!(
                    "managedFields[{i}]: operation must be `Apply` or `Update`"
                )));
            }
        };
        let api_version = e.str_at(&["apiVersion"]).unwrap_or_default();
        if api_version.is_empty() {
            return Err(live_error(format!(
                "managedFields[{i}]: apiVersion must not be empty"
            )));
        }
        match e.str_at(&["fieldsType"]) {
            Some("FieldsV1") => {}
            None | Some("") => {
                return Err(live_error(format!(
                    "missing fieldsType in managed fields entry {i}"
                )));
            }
            Some(t) => {
                return Err(live_error(format!(
                    "invalid fieldsType {t:?} in managed fields entry {i}"
                )));
            }
        }
        let set = match e.get("fieldsV1") {
            None => Set::new(),
            Some(f) => Set::from_fields_node(f).map_err(|err| {
                live_error(format!("managedFields[{i}]: error decoding set: {err}"))
            })?,
        };
        let time = match e.get("time") {
            Some(Node::Str(t)) => Some(t.clone()),
            _ => None,
        };
        out.push(ManagedEntry {
            manager: Manager {
                name: e.str_at(&["manager"]).unwrap_or_default().to_string(),
                operation,
                api_version: api_version.to_string(),
                subresource: e.str_at(&["subresource"]).unwrap_or_default().to_string(),
                time,
            },
            set,
        });
    }
    Ok(out)
}

/// Writes entries as `metadata.managedFields` holds them, in the server's order
/// (`sortEncodedManagedFields`: operation, time, manager, apiVersion, subresource); entries with
/// an empty set are dropped.
pub(crate) fn encode_managed_fields(entries: &[ManagedEntry]) -> Node {
    let mut sorted: Vec<&ManagedEntry> = entries.iter().filter(|e| !e.set.is_empty()).collect();
    sorted.sort_by(|a, b| {
        let (p, q) = (&a.manager, &b.manager);
        p.operation
            .cmp(&q.operation)
            .then_with(|| time_key(p.time.as_deref()).cmp(&time_key(q.time.as_deref())))
            .then_with(|| p.name.cmp(&q.name))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    Node::Seq(
        sorted
            .into_iter()
            .map(|e| {
                let mut m = Map::default();
                m.insert("apiVersion".into(), Node::str(&e.manager.api_version));
                m.insert("fieldsType".into(), Node::str("FieldsV1"));
                m.insert("fieldsV1".into(), e.set.to_fields_node());
                m.insert("manager".into(), Node::str(&e.manager.name));
                m.insert("operation".into(), Node::str(e.manager.operation.as_str()));
                if !e.manager.subresource.is_empty() {
                    m.insert("subresource".into(), Node::str(&e.manager.subresource));
                }
                if let Some(t) = &e.manager.time {
                    m.insert("time".into(), Node::str(t));
                }
                Node::Map(m)
            })
            .collect(),
    )
}

/// Seconds-resolution sort key of an RFC 3339 time (`2024-01-02T03:04:05Z`): the text up to the
/// seconds compares in time order for UTC times, which is what the server writes.
fn time_key(t: Option<&str>) -> String {
    t.map(|t| t.chars().take(19).collect()).unwrap_or_default()
}

/// What the applier asks for.
#[derive(Clone, Debug)]
pub struct ApplyRequest<'a> {
    pub schema: &'a Schema,
    /// The type of the object's kind (`TypeRef::named(UNTYPED_DEDUCED)` when unknown).
    pub root: &'a TypeRef,
    /// `--field-manager` (kubectl's default for server-side apply is `kubectl`).
    pub manager: &'a str,
    /// `--force-conflicts`.
    pub force: bool,
    /// Reset fields of the kind (`{f:status}` for kinds with a status subresource): never
    /// owned, changes there never conflict, and the result keeps their live values.
    pub reset_fields: Option<&'a Set>,
    /// The time to stamp on entries this apply changes (the caller's clock), RFC 3339.
    pub now: Option<&'a str>,
}

/// A field another manager owns that the apply would change.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldConflict {
    pub manager: Manager,
    pub path: Path,
}

impl FieldConflict {
    /// kubectl's form of the path: `.spec.containers[name="web"].image`.
    pub fn path_string(&self) -> String {
        path_string(&self.path)
    }
}

#[cfg(test)]
/// The whole message kubectl prints for a failed apply (`getConflictMessage`).
pub(crate) fn conflict_message(conflicts: &[FieldConflict]) -> String {
    if let [c] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            c.manager.describe(),
            c.path_string()
        );
    }
    let mut by: BTreeMap<String, (&Manager, Vec<String>)> = BTreeMap::new();
    for c in conflicts {
        by.entry(c.manager.identity())
            .or_insert_with(|| (&c.manager, Vec::new()))
            .1
            .push(c.path_string());
    }
    let mut lines = Vec::new();
    for (_, (m, paths)) in by {
        lines.push(format!("conflicts with {}:", m.describe()));
        lines.extend(paths.into_iter().map(|p| format!("- {p}")));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// The predicted result of one server-side apply.
#[derive(Clone, Debug)]
pub enum ApplyOutcome {
    /// The apply succeeds: the object as the server would store it (with managedFields), and
    /// whether anything but managedFields changed.
    Applied { object: Node, changed: bool },
    /// The apply fails with these conflicts; nothing changes.
    Conflicts(Vec<FieldConflict>),
}

/// The paths the server strips from the applier's set (`stripmeta.go`); exact paths, so labels
/// and annotations stay owned.
pub(crate) fn strip_meta_set() -> Set {
    let mut s = Set::new();
    let f = PathElement::field;
    for p in [vec![f("apiVersion")], vec![f("kind")], vec![f("metadata")]] {
        s.insert(&p);
    }
    for name in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[f("metadata"), f(name)]);
    }
    s
}

/// One attempt of the inner chain: the new object (`None`: unchanged) and managers, or conflicts.
type Attempt = Result<(Option<Node>, ManagedFields), Vec<FieldConflict>>;

struct Inner<'a> {
    req: &'a ApplyRequest<'a>,
    version: String,
    ignored: BTreeMap<String, Set>,
    managers: BTreeMap<String, Manager>,
}

impl<'a> Inner<'a> {
    fn updater(&'a self) -> Updater<'a> {
        let mut u = Updater::new(self.req.schema, self.req.root);
        if !self.ignored.is_empty() {
            u.ignored = Some(&self.ignored);
        }
        u
    }

    fn strip(&self, fields: &mut ManagedFields, id: &str) {
        if let Some(vs) = fields.get_mut(id) {
            vs.set = vs.set.difference(&strip_meta_set());
            if vs.set.is_empty() {
                fields.remove(id);
            }
        }
    }

    /// skipNonApplied → managedFieldsUpdater → stripMeta → structured merge, for one attempt.
    fn apply(
        &mut self,
        live: &Node,
        config: &Node,
        mut fields: ManagedFields,
        force: bool,
    ) -> Result<Attempt, Error> {
        if fields.is_empty() {
            // skipNonApplied: everything already there belongs to `before-first-apply`.
            let before = Manager {
                name: BEFORE_FIRST_APPLY.into(),
                operation: Operation::Update,
                api_version: self.version.clone(),
                subresource: String::new(),
                time: self.req.now.map(str::to_string),
            };
            let id = before.identity();
            let empty = Node::empty_map();
            fields = self
                .updater()
                .update(&empty, live, &self.version, &fields, &id)
                .map_err(|e| {
                    live_error(format!("failed to create manager for existing fields: {e}"))
                })?;
            self.strip(&mut fields, &id);
            if fields.contains_key(&id) {
                self.managers.insert(id, before);
            }
        }
        let applier = Manager {
            name: if self.req.manager.is_empty() {
                "unknown".into()
            } else {
                self.req.manager.to_string()
            },
            operation: Operation::Apply,
            api_version: self.version.clone(),
            subresource: String::new(),
            time: None,
        };
        let id = applier.identity();
        let result = self
            .updater()
            .apply(live, config, &self.version, &fields, &id, force);
        match result {
            Ok(r) => {
                let mut fields = r.managers;
                self.strip(&mut fields, &id);
                let mut applier = applier;
                // managedFieldsUpdater: the entry's time moves only when the object changed.
                applier.time = match self.managers.get(&id) {
                    _ if r.object.is_some() => self.req.now.map(str::to_string),
                    Some(prev) => prev.time.clone(),
                    None => None,
                };
                self.managers.insert(id, applier);
                Ok(Ok((r.object, fields)))
            }
            Err(UpdaterError::Conflicts(cs)) => Ok(Err(cs
                .into_iter()
                .map(|c| FieldConflict {
                    manager: self.managers.get(&c.manager).cloned().unwrap_or(Manager {
                        name: c.manager.clone(),
                        operation: Operation::Update,
                        api_version: String::new(),
                        subresource: String::new(),
                        time: None,
                    }),
                    path: c.path,
                })
                .collect())),
            Err(UpdaterError::Invalid(e)) => Err(Error::new(ErrorKind::InvalidResource, e)),
        }
    }
}

/// Predicts `kubectl apply --server-side` of `config` onto `live` (`None`: the object does not
/// exist yet) as the API server computes it, with every wrapper of its field manager.
/// Server-side defaulting, admission webhooks and generation bumps are not modelled.
pub fn server_side_apply(
    live: Option<&Node>,
    config: &Node,
    req: &ApplyRequest<'_>,
) -> Result<ApplyOutcome, Error> {
    check_config(config)?;
    let version = config
        .str_at(&["apiVersion"])
        .unwrap_or_default()
        .to_string();
    let typed = Typed::new(req.schema, req.root);
    typed.validate(config, false).map_err(|e| {
        Error::new(
            ErrorKind::InvalidResource,
            format!("invalid applied configuration: {e}"),
        )
    })?;
    let entries = match live {
        Some(l) => decode_managed_fields(l)?,
        None => Vec::new(),
    };
    let mut live_obj = live.cloned().unwrap_or_else(Node::empty_map);
    if let Some(meta) = live_obj.get_mut("metadata").and_then(Node::as_map_mut) {
        meta.shift_remove("managedFields");
    }
    let mut inner = Inner {
        req,
        version: version.clone(),
        ignored: BTreeMap::new(),
        managers: BTreeMap::new(),
    };
    if let Some(reset) = req.reset_fields.filter(|s| !s.is_empty()) {
        // Reset fields are the same at every version the resource is served at (ply converts
        // versions as the identity), so they apply to every manager's version.
        inner.ignored.insert(version.clone(), reset.clone());
        for e in &entries {
            inner
                .ignored
                .insert(e.manager.api_version.clone(), reset.clone());
        }
    }
    let mut fields = ManagedFields::new();
    for e in &entries {
        let id = e.manager.identity();
        fields.insert(
            id.clone(),
            VersionedSet {
                set: e.set.clone(),
                api_version: e.manager.api_version.clone(),
                applied: e.manager.operation == Operation::Apply,
            },
        );
        inner.managers.insert(id, e.manager.clone());
    }
    let first = inner.apply(&live_obj, config, fields.clone(), req.force)?;
    let (object, fields) = match first {
        Ok(ok) => ok,
        Err(conflicts) if req.manager == "kubectl" => {
            // lastAppliedManager: conflicts on fields the annotation still describes are what
            // client-side apply wrote; kubectl may take them over.
            let allowed = allowed_from_last_applied(&typed, &live_obj, &version);
            match allowed {
                Some(allowed) if conflicts.iter().all(|c| allowed.has(&c.path)) => {
                    match inner.apply(&live_obj, config, fields, true)? {
                        Ok(ok) => ok,
                        Err(cs) => return Ok(ApplyOutcome::Conflicts(cs)),
                    }
                }
                Some(allowed) => {
                    return Ok(ApplyOutcome::Conflicts(
                        conflicts
                            .into_iter()
                            .filter(|c| !allowed.has(&c.path))
                            .collect(),
                    ));
                }
                None => return Ok(ApplyOutcome::Conflicts(conflicts)),
            }
        }
        Err(conflicts) => return Ok(ApplyOutcome::Conflicts(conflicts)),
    };
    let mut result = object.unwrap_or_else(|| live_obj.clone());
    if let Some(reset) = req.reset_fields {
        restore_reset_fields(&mut result, &live_obj, reset);
    }
    if req.manager == "kubectl" {
        update_last_applied(&mut result, config);
    }
    // What a reviewer sees: the object apart from managedFields.
    let changed = !value::equals(&result, &live_obj);
    set_managed_fields(&mut result, &fields, &inner.managers);
    Ok(ApplyOutcome::Applied {
        object: result,
        changed,
    })
}

/// Refuses what the API server refuses as an applied configuration: not a map, or with
/// managed fields.
fn check_config(config: &Node) -> Result<(), Error> {
    if !matches!(config, Node::Map(_)) {
        return Err(Error::new(
            ErrorKind::InvalidResource,
            "an applied configuration must be a map",
        ));
    }
    if config
        .get_path(&["metadata", "managedFields"])
        .is_some_and(|m| !m.is_null())
    {
        return Err(Error::new(
            ErrorKind::InvalidResource,
            "metadata.managedFields must be nil in an applied configuration",
        ));
    }
    Ok(())
}

/// lastAppliedUpdater: kubectl keeps an existing last-applied annotation in step with what it
/// applies.
fn update_last_applied(result: &mut Node, config: &Node) {
    if has_last_applied(result) {
        let text = build_last_applied(config);
        if let Some(ann) = result
            .get_path_mut(&["metadata", "annotations"])
            .and_then(Node::as_map_mut)
        {
            ann.insert(LAST_APPLIED.into(), Node::Str(text));
        }
    }
}

/// Writes the managers' field sets into the object's `metadata.managedFields` (removed when
/// there are none).
fn set_managed_fields(
    result: &mut Node,
    fields: &ManagedFields,
    managers: &BTreeMap<String, Manager>,
) {
    let managed: Vec<ManagedEntry> = fields
        .iter()
        .filter_map(|(id, vs)| {
            let mut m = managers.get(id)?.clone();
            m.api_version = vs.api_version.clone();
            Some(ManagedEntry {
                manager: m,
                set: vs.set.clone(),
            })
        })
        .collect();
    let encoded = encode_managed_fields(&managed);
    if let Node::Map(root) = result {
        let meta = root
            .entry("metadata".to_string())
            .or_insert_with(Node::empty_map);
        if let Node::Map(meta) = meta {
            if encoded.as_seq().is_some_and(|s| !s.is_empty()) {
                meta.insert("managedFields".into(), encoded);
            } else {
                meta.shift_remove("managedFields");
            }
        }
    }
}

#[cfg(test)]
/// The manager kubectl uses to take ownership of the last-applied annotation.
pub(crate) const LAST_APPLIED_MANAGER: &str = "kubectl-last-applied";

#[cfg(test)]
/// Predicts the whole of `kubectl apply --server-side` (spec §6), not just the dry run that
/// `kubectl diff --server-side` shows: the apply, then kubectl's migration from client-side
/// apply (`kubectl:pkg/cmd/apply/apply.go` `saveLastApplyAnnotationIfNecessary` and
/// `migrateToSSAIfNecessary`, `client-go:util/csaupgrade/upgrade.go`): the annotation is
/// applied as `kubectl-last-applied`, the client-side-apply managers are folded into the
/// applier's entry, and the configuration is applied again — which now removes fields only the
/// old client-side manager owned. Returns the outcome and the warnings kubectl would print.
pub(crate) fn server_side_apply_full(
    live: Option<&Node>,
    config: &Node,
    req: &ApplyRequest<'_>,
) -> Result<(ApplyOutcome, Vec<String>), Error> {
    let mut warnings = Vec::new();
    let first = server_side_apply(live, config, req)?;
    let ApplyOutcome::Applied { object, .. } = &first else {
        return Ok((first, warnings));
    };
    let mut obj = object.clone();
    if req.manager == "kubectl" {
        match save_last_applied(&obj, req)? {
            Ok(Some(saved)) => obj = saved,
            Ok(None) => {}
            Err(msg) => {
                warnings.push(format!(
                    "failed to migrate {LAST_APPLIED} for Server-Side Apply: {msg}"
                ));
                return Ok((finish(first, live), warnings));
            }
        }
    }
    let entries = decode_managed_fields(&obj)?;
    let mut annotation_path = Set::new();
    annotation_path.insert(&[
        PathElement::field("metadata"),
        PathElement::field("annotations"),
        PathElement::field(LAST_APPLIED),
    ]);
    let csa: Vec<String> = entries
        .iter()
        .filter(|e| {
            e.manager.operation == Operation::Update
                && annotation_path.difference(&e.set).is_empty()
        })
        .map(|e| e.manager.name.clone())
        .collect();
    let mut upgraded = entries.clone();
    for name in &csa {
        upgraded = upgrade_managed_fields(upgraded, name, req.manager);
    }
    if upgraded == entries {
        return Ok((
            finish(
                ApplyOutcome::Applied {
                    object: obj,
                    changed: false,
                },
                live,
            ),
            warnings,
        ));
    }
    if let Some(meta) = obj.get_mut("metadata").and_then(Node::as_map_mut) {
        meta.insert("managedFields".into(), encode_managed_fields(&upgraded));
    }
    // Re-send the same apply: fields only the client-side manager held now go.
    match server_side_apply(Some(&obj), config, req)? {
        ApplyOutcome::Applied { object, .. } => Ok((
            finish(
                ApplyOutcome::Applied {
                    object,
                    changed: false,
                },
                live,
            ),
            warnings,
        )),
        ApplyOutcome::Conflicts(cs) => {
            warnings.push(format!(
                "failed to re-apply configuration after performing Server-Side Apply migration: {}",
                conflict_message(&cs)
            ));
            Ok((
                finish(
                    ApplyOutcome::Applied {
                        object: obj,
                        changed: false,
                    },
                    live,
                ),
                warnings,
            ))
        }
    }
}

#[cfg(test)]
/// Recomputes `changed` of a final outcome against the original live object.
fn finish(outcome: ApplyOutcome, live: Option<&Node>) -> ApplyOutcome {
    match outcome {
        ApplyOutcome::Applied { object, .. } => {
            let strip = |n: &Node| {
                let mut n = n.clone();
                if let Some(meta) = n.get_mut("metadata").and_then(Node::as_map_mut) {
                    meta.shift_remove("managedFields");
                }
                n
            };
            let changed = match live {
                Some(l) => !value::equals(&strip(&object), &strip(l)),
                None => true,
            };
            ApplyOutcome::Applied { object, changed }
        }
        c => c,
    }
}

#[cfg(test)]
/// `saveLastApplyAnnotationIfNecessary`: when the object has the annotation and no Apply
/// manager owns it, apply just the annotation as `kubectl-last-applied`. `Ok(Err(_))` is a
/// failed (conflicting) save, which kubectl only warns about.
fn save_last_applied(
    obj: &Node,
    req: &ApplyRequest<'_>,
) -> Result<Result<Option<Node>, String>, Error> {
    let Some(annotation) = obj.get_path(&["metadata", "annotations", LAST_APPLIED]) else {
        return Ok(Ok(None));
    };
    let path = [
        PathElement::field("metadata"),
        PathElement::field("annotations"),
        PathElement::field(LAST_APPLIED),
    ];
    let entries = decode_managed_fields(obj)?;
    if entries
        .iter()
        .any(|e| e.manager.operation == Operation::Apply && e.set.has(&path))
    {
        return Ok(Ok(None));
    }
    let mut meta = Map::default();
    if let Some(name) = obj.get_path(&["metadata", "name"]) {
        meta.insert("name".into(), name.clone());
    }
    if let Some(ns) = obj
        .get_path(&["metadata", "namespace"])
        .filter(|n| n.as_str().is_some_and(|s| !s.is_empty()))
    {
        meta.insert("namespace".into(), ns.clone());
    }
    let mut ann = Map::default();
    ann.insert(LAST_APPLIED.into(), annotation.clone());
    meta.insert("annotations".into(), Node::Map(ann));
    let mut just = Map::default();
    for k in ["apiVersion", "kind"] {
        if let Some(v) = obj.get(k) {
            just.insert(k.into(), v.clone());
        }
    }
    just.insert("metadata".into(), Node::Map(meta));
    let sub = ApplyRequest {
        manager: LAST_APPLIED_MANAGER,
        force: false,
        ..req.clone()
    };
    match server_side_apply(Some(obj), &Node::Map(just), &sub)? {
        ApplyOutcome::Applied { object, .. } => Ok(Ok(Some(object))),
        ApplyOutcome::Conflicts(cs) => Ok(Err(conflict_message(&cs))),
    }
}

#[cfg(test)]
/// `csaupgrade.upgradedManagedFields`: fold the client-side-apply manager `csa` (Update, main
/// resource) into the Apply entry of `ssa` — converting the first `csa` entry when `ssa` has
/// none — and drop every `csa` Update entry of the main resource.
pub(crate) fn upgrade_managed_fields(
    mut entries: Vec<ManagedEntry>,
    csa: &str,
    ssa: &str,
) -> Vec<ManagedEntry> {
    let is_csa = |e: &ManagedEntry| {
        e.manager.name == csa
            && e.manager.operation == Operation::Update
            && e.manager.subresource.is_empty()
    };
    let target = match entries.iter().position(|e| {
        e.manager.name == ssa
            && e.manager.operation == Operation::Apply
            && e.manager.subresource.is_empty()
    }) {
        Some(i) => i,
        None => match entries.iter().position(is_csa) {
            Some(i) => {
                entries[i].manager.operation = Operation::Apply;
                entries[i].manager.name = ssa.to_string();
                i
            }
            None => return entries,
        },
    };
    let version = entries[target].manager.api_version.clone();
    if let Some(csa_set) = entries
        .iter()
        .find(|e| is_csa(e) && e.manager.api_version == version)
        .map(|e| e.set.clone())
    {
        entries[target].set = entries[target].set.union(&csa_set);
    }
    entries.retain(|e| !is_csa(e));
    entries
}

/// `allowedConflictsFromLastApplied`: the fields of the last-applied annotation whose live value
/// is still the annotated one. `None` when there is no usable annotation.
pub(crate) fn allowed_from_last_applied(
    typed: &Typed<'_>,
    live: &Node,
    version: &str,
) -> Option<Set> {
    let text = live
        .get_path(&["metadata", "annotations", LAST_APPLIED])?
        .as_str()?;
    if text.is_empty() {
        return None;
    }
    let last = crate::yaml::parse::parse_one(text).ok()?;
    if !matches!(last, Node::Map(_)) || last.str_at(&["apiVersion"]) != Some(version) {
        return None;
    }
    let set = typed.to_field_set(&last).ok()?;
    let cmp = typed.compare(&last, live).ok()?;
    Some(
        set.difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

fn has_last_applied(obj: &Node) -> bool {
    obj.get_path(&["metadata", "annotations", LAST_APPLIED])
        .and_then(Node::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// `buildLastApplied`: the applied configuration without the annotation (an emptied
/// annotations map goes too), as compact JSON with sorted keys and a trailing newline.
pub(crate) fn build_last_applied(config: &Node) -> String {
    let mut c = config.clone();
    if let Some(meta) = c.get_mut("metadata").and_then(Node::as_map_mut) {
        let now_empty = match meta.get_mut("annotations").and_then(Node::as_map_mut) {
            Some(ann) => {
                ann.shift_remove(LAST_APPLIED);
                ann.is_empty()
            }
            None => false,
        };
        if now_empty {
            meta.shift_remove("annotations");
        }
    }
    let mut out = String::new();
    write_json(&mut out, &c, JsonStyle::COMPACT);
    out.push('\n');
    out
}

/// The registry resets top-level reset fields (`status`) to their live values after an apply.
fn restore_reset_fields(result: &mut Node, live: &Node, reset: &Set) {
    let Node::Map(out) = result else { return };
    for pe in reset.members() {
        let PathElement::Field(name) = pe else {
            continue;
        };
        match live.get(name) {
            Some(v) => {
                out.insert(name.clone(), v.clone());
            }
            None => {
                out.shift_remove(name);
            }
        }
    }
}

/// The reset fields of the main resource of a kind with a status subresource: `status`.
pub(crate) fn status_reset_fields() -> Set {
    let mut s = Set::new();
    s.insert(&[PathElement::field("status")]);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::ssa::schema::UNTYPED_DEDUCED;
    use crate::yaml::parse::parse_one;

    fn y(s: &str) -> Node {
        parse_one(s).unwrap()
    }

    fn req<'a>(
        schema: &'a Schema,
        root: &'a TypeRef,
        manager: &'a str,
        force: bool,
    ) -> ApplyRequest<'a> {
        ApplyRequest {
            schema,
            root,
            manager,
            force,
            reset_fields: None,
            now: Some("2026-01-01T00:00:00Z"),
        }
    }

    fn applied(o: ApplyOutcome) -> (Node, bool) {
        match o {
            ApplyOutcome::Applied { object, changed } => (object, changed),
            ApplyOutcome::Conflicts(c) => panic!("unexpected conflicts: {}", conflict_message(&c)),
        }
    }

    fn conflicts(o: ApplyOutcome) -> Vec<FieldConflict> {
        match o {
            ApplyOutcome::Conflicts(c) => c,
            ApplyOutcome::Applied { object, .. } => panic!("applied: {object:?}"),
        }
    }

    fn managers(obj: &Node) -> Vec<(String, String, String)> {
        decode_managed_fields(obj)
            .unwrap()
            .into_iter()
            .map(|e| {
                (
                    e.manager.name,
                    e.manager.operation.as_str().to_string(),
                    e.set.to_fields_v1(),
                )
            })
            .collect()
    }

    const HPA_LIVE: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  managedFields:
  - manager: kubectl
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec":{"f:replicas":{},"f:paused":{}}}
  - manager: hpa
    operation: Update
    apiVersion: autoscaling/v2
    subresource: scale
    time: "2025-01-01T00:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:spec":{"f:replicas":{}}}
spec:
  replicas: 4
  paused: false
"#;

    #[test]
    fn same_value_is_shared_ownership_not_a_conflict() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let live = y(HPA_LIVE);
        let config = y(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n  paused: false\n",
        );
        let (obj, changed) = applied(
            server_side_apply(Some(&live), &config, &req(&schema, &root, "kubectl", false))
                .unwrap(),
        );
        assert!(!changed);
        let ms = managers(&obj);
        assert!(
            ms.iter()
                .any(|m| m.0 == "hpa" && m.2.contains("f:replicas")),
            "{ms:?}"
        );
        assert!(
            ms.iter()
                .any(|m| m.0 == "kubectl" && m.2.contains("f:replicas")),
            "{ms:?}"
        );
    }

    #[test]
    fn a_different_value_conflicts_with_the_update_manager() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let live = y(HPA_LIVE);
        let config = y(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  paused: false\n",
        );
        // As `ci`, both the HPA and kubectl's apply own the replicas.
        let cs = conflicts(
            server_side_apply(Some(&live), &config, &req(&schema, &root, "ci", false)).unwrap(),
        );
        assert_eq!(cs.len(), 2);
        assert!(cs.iter().all(|c| c.path_string() == ".spec.replicas"));
        assert_eq!(
            conflict_message(&cs),
            "Apply failed with 2 conflicts: conflicts with \"hpa\" with subresource \"scale\" using autoscaling/v2:\n- .spec.replicas\nconflicts with \"kubectl\":\n- .spec.replicas"
        );
        // As `kubectl`, only the HPA's claim conflicts.
        let cs = conflicts(
            server_side_apply(Some(&live), &config, &req(&schema, &root, "kubectl", false))
                .unwrap(),
        );
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].manager.subresource, "scale");
        assert_eq!(
            conflict_message(&cs),
            "Apply failed with 1 conflict: conflict with \"hpa\" with subresource \"scale\" using autoscaling/v2: .spec.replicas"
        );
    }

    #[test]
    fn force_takes_the_field_and_an_emptied_entry_disappears() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let live = y(HPA_LIVE);
        let config = y(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  paused: false\n",
        );
        let (obj, changed) = applied(
            server_side_apply(Some(&live), &config, &req(&schema, &root, "kubectl", true)).unwrap(),
        );
        assert!(changed);
        assert_eq!(obj.get_path(&["spec", "replicas"]), Some(&Node::Int(2)));
        let ms = managers(&obj);
        assert!(ms.iter().all(|m| m.0 != "hpa"), "{ms:?}");
    }

    #[test]
    fn fields_no_longer_applied_are_removed_only_when_nobody_else_owns_them() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let live = y(HPA_LIVE);
        // `paused` is owned by kubectl alone: dropping it from the config deletes it.
        // `replicas` is co-owned by the HPA: dropping it keeps it.
        let config = y("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n");
        let (obj, changed) = applied(
            server_side_apply(Some(&live), &config, &req(&schema, &root, "kubectl", false))
                .unwrap(),
        );
        assert!(changed);
        assert_eq!(obj.get("spec"), Some(&y("replicas: 4")));
    }

    #[test]
    fn first_apply_without_managed_fields_conflicts_with_before_first_apply() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let live =
            y("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n  b: '2'\n");
        let same = y("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n");
        let (obj, _) = applied(
            server_side_apply(Some(&live), &same, &req(&schema, &root, "ci", false)).unwrap(),
        );
        let ms = managers(&obj);
        assert_eq!(ms.len(), 2, "{ms:?}");
        assert_eq!(ms[1].0, BEFORE_FIRST_APPLY);
        assert_eq!(ms[1].2, r#"{"f:data":{".":{},"f:a":{},"f:b":{}}}"#);
        let other = y("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '9'\n");
        let cs = conflicts(
            server_side_apply(Some(&live), &other, &req(&schema, &root, "ci", false)).unwrap(),
        );
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].manager.name, BEFORE_FIRST_APPLY);
        assert_eq!(cs[0].path_string(), ".data.a");
    }

    const CSA_LIVE: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"c"}}
  managedFields:
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}
data:
  a: "1"
  b: "3"
"#;

    #[test]
    fn kubectl_may_take_over_what_client_side_apply_last_wrote() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let live = y(CSA_LIVE);
        let config = y("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '5'\n");
        // `a` still has the annotated value: the conflict is waived for manager `kubectl`.
        let (obj, changed) = applied(
            server_side_apply(Some(&live), &config, &req(&schema, &root, "kubectl", false))
                .unwrap(),
        );
        assert!(changed);
        assert_eq!(obj.get_path(&["data", "a"]), Some(&Node::str("5")));
        let ann = obj
            .str_at(&["metadata", "annotations", LAST_APPLIED])
            .unwrap();
        assert_eq!(
            ann,
            "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"5\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}\n"
        );
        // Any other manager name conflicts.
        let cs = conflicts(
            server_side_apply(Some(&live), &config, &req(&schema, &root, "ci", false)).unwrap(),
        );
        assert_eq!(cs[0].manager.name, "kubectl-client-side-apply");
        // `b` was changed since the annotation was written: no waiver.
        let config_b =
            y("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  b: '4'\n");
        let cs = conflicts(
            server_side_apply(
                Some(&live),
                &config_b,
                &req(&schema, &root, "kubectl", false),
            )
            .unwrap(),
        );
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].path_string(), ".data.b");
    }

    #[test]
    fn the_full_apply_migrates_client_side_ownership_and_prunes() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let live = y(CSA_LIVE);
        let config = y("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n");
        // The dry run (kubectl diff) keeps `b`: the client-side manager still owns it.
        let (dry, _) = applied(
            server_side_apply(Some(&live), &config, &req(&schema, &root, "kubectl", false))
                .unwrap(),
        );
        assert_eq!(dry.get("data"), Some(&y("a: '1'\nb: '3'")));
        // The real apply migrates and re-applies: `b` goes.
        let (full, warnings) =
            server_side_apply_full(Some(&live), &config, &req(&schema, &root, "kubectl", false))
                .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let (obj, changed) = applied(full);
        assert!(changed);
        assert_eq!(obj.get("data"), Some(&y("a: '1'")));
        let names: Vec<String> = managers(&obj).into_iter().map(|m| m.0).collect();
        // The annotation apply changed nothing, so its entry has no time and sorts first.
        assert_eq!(names, [LAST_APPLIED_MANAGER, "kubectl"]);
    }

    #[test]
    fn status_and_server_metadata_are_never_owned() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let live = y(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  managedFields:\n  - {manager: x, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {\"f:spec\":{\"f:x\":{}}}}\nspec:\n  x: 1\nstatus:\n  ready: 1\n",
        );
        let config = y(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\nstatus:\n  ready: 7\n",
        );
        let reset = status_reset_fields();
        let mut r = req(&schema, &root, "kubectl", false);
        r.reset_fields = Some(&reset);
        let (obj, _) = applied(server_side_apply(Some(&live), &config, &r).unwrap());
        assert_eq!(obj.get_path(&["status", "ready"]), Some(&Node::Int(1)));
        let status_only = y(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nstatus:\n  ready: 7\n",
        );
        let (_, changed) = applied(server_side_apply(Some(&live), &status_only, &r).unwrap());
        assert!(!changed, "a status block in a manifest has no effect");
        let ms = managers(&obj);
        let kubectl = ms.iter().find(|m| m.0 == "kubectl").unwrap();
        assert_eq!(
            kubectl.2,
            r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}"#
        );
        assert_eq!(kubectl.1, "Apply");
    }

    #[test]
    fn create_owns_what_the_config_sets() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let config = y("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n");
        let (obj, changed) = applied(
            server_side_apply(None, &config, &req(&schema, &root, "kubectl", false)).unwrap(),
        );
        assert!(changed);
        let ms = managers(&obj);
        assert_eq!(
            ms,
            vec![(
                "kubectl".into(),
                "Apply".into(),
                r#"{"f:data":{".":{},"f:a":{}}}"#.into()
            )]
        );
        assert_eq!(obj.str_at(&["data", "a"]), Some("1"));
    }

    #[test]
    fn managed_fields_round_trip_and_order() {
        let live = y(HPA_LIVE);
        let entries = decode_managed_fields(&live).unwrap();
        assert_eq!(
            entries[1].manager.identity(),
            r#"{"manager":"hpa","operation":"Update","apiVersion":"autoscaling/v2","subresource":"scale"}"#
        );
        assert_eq!(
            entries[0].manager.identity(),
            r#"{"manager":"kubectl","operation":"Apply"}"#
        );
        let enc = encode_managed_fields(&entries);
        let names: Vec<&str> = enc
            .as_seq()
            .unwrap()
            .iter()
            .filter_map(|e| e.str_at(&["manager"]))
            .collect();
        assert_eq!(names, ["kubectl", "hpa"]);
        let bad = y(
            "metadata:\n  managedFields:\n  - {manager: a, operation: Patch, apiVersion: v1, fieldsType: FieldsV1}\n",
        );
        assert!(decode_managed_fields(&bad).is_err());
        let bad =
            y("metadata:\n  managedFields:\n  - {manager: a, operation: Apply, apiVersion: v1}\n");
        assert!(decode_managed_fields(&bad).is_err());
    }
}
