//! The one object-change model that `ply diff --live` and the review both fill and every
//! output format reads: an object's identity, what happens to it (create, update, rename,
//! delete, conflict, unchanged), its two sides as masked text, its field changes and
//! ownership conflicts; and the two documents made of such objects — a live [`Report`] (one
//! object set against a snapshot) and a [`Review`] (overlays, each compared between two
//! renders, with the [`Risk`]s of applying its head). Data only: computes no diff, masks
//! nothing itself (the producers hand it masked text and values), prints nothing.

use crate::diag::exit;
use crate::resource::id_field_text;
use crate::yaml::Node;

/// What offline prediction cannot see; said once per live run.
pub const OFFLINE_NOTE: &str = "ply predicts offline from the snapshot: it cannot see server-side defaulting, mutating admission webhooks or API version conversion, so fields those set may differ from this prediction.";

/// What happens to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    /// A generated name whose hash suffix changed: shown as one object.
    Rename,
    Delete,
    /// An object that one overlay rendered at the base and another renders at the head (a
    /// directory that became part of a new root): one object, shown with its changes (review
    /// only).
    Move,
    /// The server-side apply would fail on ownership conflicts; nothing changes (live only).
    Conflict,
    Unchanged,
    /// A desired object in a namespace the live snapshot does not cover (it holds no object
    /// there and lists no namespaces): whether it exists is not known, so it is not compared
    /// (never shown as a creation). Live reports only; not in [`Action::ALL`], counted only
    /// when there is one.
    Unknown,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Rename => "rename",
            Action::Delete => "delete",
            Action::Move => "move",
            Action::Conflict => "conflict",
            Action::Unchanged => "unchanged",
            Action::Unknown => "unknown",
        }
    }

    /// Every action, in the order of the live report's totals.
    pub const ALL: [Action; 6] = [
        Action::Create,
        Action::Update,
        Action::Rename,
        Action::Delete,
        Action::Conflict,
        Action::Unchanged,
    ];

    /// The actions a review counts per overlay, in table order (a review has no conflicts;
    /// `move` is a column only when something moved: [`Review::actions`]).
    pub const REVIEWED: [Action; 6] = [
        Action::Create,
        Action::Update,
        Action::Rename,
        Action::Delete,
        Action::Move,
        Action::Unchanged,
    ];
}

/// An object's identity as printed.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ObjectId {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl ObjectId {
    pub fn of(node: &Node) -> ObjectId {
        ObjectId {
            api_version: node.str_at(&["apiVersion"]).unwrap_or("").to_string(),
            kind: node.str_at(&["kind"]).unwrap_or("").to_string(),
            namespace: id_field_text(node, "namespace").unwrap_or_default(),
            name: id_field_text(node, "name").unwrap_or_default(),
        }
    }

    /// kubectl diff's file name: `<group>.<version>.<Kind>.<namespace>.<name>`, the group
    /// and its dot omitted for the core group (`pkg/cmd/diff/diff.go`, `InfoObject.Name`).
    pub fn file_name(&self) -> String {
        format!(
            "{}.{}.{}.{}",
            self.api_version.replace('/', "."),
            self.kind,
            self.namespace,
            self.name
        )
    }

    /// `apps/v1 Deployment default/web` (cluster-scoped: `v1 Namespace prod`).
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {} {}", self.api_version, self.kind, self.name)
        } else {
            format!(
                "{} {} {}/{}",
                self.api_version, self.kind, self.namespace, self.name
            )
        }
    }
}

/// One changed field: its path in kubectl's form with its value on each side (`None` where
/// absent), masked as the object's texts are.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub path: String,
    pub before: Option<Node>,
    pub after: Option<Node>,
    /// Where the new value was set (`ply diff --base … --why`; field provenance).
    pub cause: Option<Cause>,
}

/// The place that set a changed field's new value (docs/explain.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// As ply's diagnostics write paths.
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The step (`patch`, `images`, `resource` …).
    pub step: String,
    /// Whether that line changed in the pull request: `Some(false)` when the cause is
    /// outside it (the file is the same at the base).
    pub changed: Option<bool>,
    /// The file and line at the head commit on GitHub or GitLab.
    pub link: Option<String>,
    /// The remote base the file belongs to (its URL; `None`: a file of the repository). Then
    /// `changed` says whether the pull request moved the base (its lock pins another commit
    /// whose file differs there).
    pub remote: Option<String>,
    /// What the step read that changed, when the place is that input rather than the step's
    /// own (`hash of ConfigMap redis-config`, `from Service/db spec.ports[0].port`).
    pub via: Option<String>,
    /// The place is at the base: the field was removed, and this held it.
    pub at_base: bool,
}

/// One field manager of `metadata.managedFields`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Manager {
    pub name: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// Empty for the main resource.
    pub subresource: String,
    pub api_version: String,
    pub time: String,
}

/// A field another manager owns that the server-side apply would change.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    pub manager: Manager,
    /// kubectl's form: `.spec.replicas`.
    pub path: String,
    /// The live value (absent: `None`); masked for Secret data unless `--show-secrets`.
    pub live: Option<Node>,
    /// The value the applied configuration sets.
    pub desired: Option<Node>,
}

/// One object of a report: what happens to it and how it reads on both sides.
#[derive(Clone, Debug)]
pub struct ObjectChange {
    pub action: Action,
    /// The object after the change (before it, for a deletion).
    pub id: ObjectId,
    /// For a rename: the object it replaces.
    pub renamed_from: Option<ObjectId>,
    /// For a move: the overlay that rendered it at the base.
    pub moved_from: Option<String>,
    /// The old side as shown (YAML, masked; empty when absent).
    pub before: String,
    /// The new side as shown (YAML, masked; empty when absent).
    pub after: String,
    /// The changed fields; none for a creation or deletion.
    pub changes: Vec<Change>,
    /// Ownership conflicts (a server-side apply that fails); none otherwise.
    pub conflicts: Vec<Conflict>,
    /// The full predicted object (with managedFields, unmasked), for `--output-merged`;
    /// `None` for deletions and in a review.
    pub predicted: Option<Node>,
    /// A review's diff as a JSON report wrote it (`ply diff --merge-reports` reads it back,
    /// without `before` and `after`); `None`: computed from `before` and `after`.
    pub(crate) stored_diff: Option<String>,
}

impl ObjectChange {
    /// An object with `action` and nothing to show: no text, no changes (an unchanged
    /// object, or one the live diff could not compare).
    pub(crate) fn bare(action: Action, id: ObjectId) -> ObjectChange {
        ObjectChange {
            action,
            id,
            renamed_from: None,
            moved_from: None,
            before: String::new(),
            after: String::new(),
            changes: Vec::new(),
            conflicts: Vec::new(),
            predicted: None,
            stored_diff: None,
        }
    }

    /// The changed paths, in order.
    pub fn paths(&self) -> Vec<&str> {
        self.changes.iter().map(|c| c.path.as_str()).collect()
    }

    /// `v1 ConfigMap prod/web-config-47668c6k28 (from web-config-hf678c7m2b)`.
    pub fn title(&self) -> String {
        let mut s = self.id.display();
        if let Some(from) = &self.renamed_from {
            s.push_str(&format!(" (from {})", from.name));
        }
        if let Some(from) = &self.moved_from {
            s.push_str(&format!(" (moved from {from})"));
        }
        s
    }
}

/// The outcome of `ply diff --live`: one object set against a live snapshot.
#[derive(Clone, Debug)]
pub struct Report {
    pub server_side: bool,
    pub field_manager: String,
    pub objects: Vec<ObjectChange>,
}

impl Report {
    /// kubectl diff's rule: 0 no differences, 1 differences, 2 an error (conflicts included).
    pub fn exit_code(&self) -> i32 {
        if self.objects.iter().any(|o| o.action == Action::Conflict) {
            exit::DIFF_ERROR
        } else if self.objects.iter().any(|o| o.action != Action::Unchanged) {
            1
        } else {
            exit::OK
        }
    }

    pub fn count(&self, action: Action) -> usize {
        self.objects.iter().filter(|o| o.action == action).count()
    }

    /// The predicted objects, as the cluster would hold them after the apply: created and
    /// updated objects as predicted, objects whose apply fails unchanged, deletions left out.
    pub fn merged_objects(&self) -> Vec<&Node> {
        self.objects
            .iter()
            .filter_map(|o| o.predicted.as_ref())
            .collect()
    }

    /// kubectl's conflict error for each failing object (`Apply failed with …`), for stderr.
    pub fn conflict_messages(&self) -> Vec<String> {
        self.objects
            .iter()
            .filter(|o| o.action == Action::Conflict)
            .map(|o| format!("{}: {}", o.id.display(), conflict_message(&o.conflicts)))
            .collect()
    }
}

/// apimachinery's conflict message (`internal/conflict.go`, `NewConflictError`).
pub(crate) fn conflict_message(conflicts: &[Conflict]) -> String {
    let n = conflicts.len();
    let mut managers: Vec<String> = Vec::new();
    for c in conflicts {
        let m = print_manager(&c.manager);
        if !managers.contains(&m) {
            managers.push(m);
        }
    }
    managers.sort();
    if n == 1 {
        if let Some(c) = conflicts.first() {
            return format!(
                "Apply failed with 1 conflict: conflict with {}: {}",
                print_manager(&c.manager),
                c.path
            );
        }
    }
    let mut s = format!("Apply failed with {n} conflicts: ");
    let mut first = true;
    for m in &managers {
        if !first {
            s.push('\n');
        }
        first = false;
        s.push_str(&format!("conflicts with {m}:"));
        for c in conflicts.iter().filter(|c| &print_manager(&c.manager) == m) {
            s.push_str(&format!("\n- {}", c.path));
        }
    }
    s
}

/// `printManager` of apimachinery's `internal/conflict.go`.
pub(crate) fn print_manager(m: &Manager) -> String {
    let mut s = format!("{:?}", m.name);
    if !m.subresource.is_empty() {
        s.push_str(&format!(" with subresource {:?}", m.subresource));
    }
    // The server prints the manager from its identity, which has no time: "using <version>"
    // and never " at <time>".
    if m.operation == "Update" {
        s.push_str(&format!(" using {}", m.api_version));
    }
    s
}

// ---- Risks: what an apply of a review's head does beyond its diff (`review::risks` finds
// them, each format lays them out).

/// The kind of a risk, in the order the reports list them (most severe first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum RiskKind {
    /// The apiserver refuses the update: an immutable field changes.
    Immutable,
    /// A deletion that takes more than the object with it (a namespace's objects, a claim's
    /// volume, a definition's custom resources).
    Deletion,
    /// A GitOps target that does not prune no longer renders an object: it stays in the
    /// cluster, no longer managed.
    Unmanaged,
    /// An `replicas` value an autoscaler owns: each apply resets it.
    HpaReplicas,
    /// The pod template changes: the workload's pods are replaced.
    Rollout,
    /// A ConfigMap or Secret changed in place (same name) that a workload reads: its pods
    /// keep the old values until they restart.
    StaleConfig,
}

impl RiskKind {
    /// The name the reports and `--format json` use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RiskKind::Immutable => "immutable",
            RiskKind::Deletion => "deletion",
            RiskKind::HpaReplicas => "hpa-replicas",
            RiskKind::Rollout => "rollout",
            RiskKind::StaleConfig => "stale-config",
            RiskKind::Unmanaged => "unmanaged",
        }
    }
}

/// One risk of one object of one overlay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Risk {
    pub(crate) kind: RiskKind,
    /// The object at the head (at the base, for a deletion).
    pub(crate) object: ObjectId,
    /// The field in kubectl's form (`.spec.selector`), or `None` for the whole object.
    pub(crate) path: Option<String>,
    /// What happens, in one sentence without a final period (`kubectl apply` is refused: …).
    pub(crate) what: String,
    /// The Kubernetes rule: the upstream file and function (or documentation page) it follows
    /// (borrowed from `review::risks`'s table; owned when read back from a JSON report).
    pub(crate) rule: std::borrow::Cow<'static, str>,
}

impl Risk {
    /// What it says with the object's own changed fields (the first parenthesised part)
    /// aside: identical risks of several objects share it.
    pub(crate) fn gist(&self) -> String {
        match (self.what.find(" ("), self.what.find("): ")) {
            (Some(open), Some(close)) if open < close => {
                format!("{}{}", &self.what[..open], &self.what[close + 1..])
            }
            _ => self.what.clone(),
        }
    }

    /// `apps/v1 Deployment prod/web .spec.selector: …` as one plain line (no rule).
    pub(crate) fn line(&self) -> String {
        match &self.path {
            Some(p) => format!("{} {}: {}", self.object.display(), p, self.what),
            None => format!("{}: {}", self.object.display(), self.what),
        }
    }
}

/// A render that failed, as a review reports it: the diagnostic's kind and headline (what
/// decides whether two failures are the same), where it points, and its full text.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Failure {
    /// The diagnostic's code (`ply::not-found`).
    pub code: String,
    /// Its message, one line. Paths in it are named as in the working tree on both sides
    /// (relative to the current directory), so the same failure reads the same at both.
    pub message: String,
    /// The file it points at (as in the working tree) and the line there, 1-based.
    pub file: Option<String>,
    pub line: Option<usize>,
    /// The whole diagnostic as the CLI prints it.
    pub text: String,
}

impl Failure {
    /// The same diagnostic: the same kind and message. Where it points (the line moves when
    /// lines above it change) and the source excerpt are not compared.
    pub(crate) fn same(&self, other: &Failure) -> bool {
        self.code == other.code && self.message == other.message
    }

    /// `ply::not-found (a/kustomization.yaml:8): 'x.yaml' does not exist`: the place before
    /// the message, so that a long message cut short keeps it.
    pub(crate) fn one_line(&self) -> String {
        let place = match (&self.file, self.line) {
            (Some(f), Some(l)) => format!(" ({f}:{l})"),
            (Some(f), None) => format!(" ({f})"),
            _ => String::new(),
        };
        format!("{}{place}: {}", self.code, self.message)
    }
}

/// How an overlay of a review came out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Rendered on both sides.
    Compared,
    /// No kustomization at the base: every object is a creation.
    Added,
    /// No kustomization at the head: every object is a deletion.
    Removed,
    /// Fixed by this change: it fails to render at the base and renders at the head; every
    /// object is a creation.
    BaseFailed(Failure),
    /// Broken by this change: it fails to render at the head, and rendered at the base, or
    /// failed there with another diagnostic, or was not there. An error (exit 2).
    HeadFailed(Failure),
    /// Broken before this change: it fails with the same diagnostic at both sides. Not the
    /// change's: an error only with `--fail-on=any-error`.
    BrokenBefore(Failure),
    /// A side reads a remote base or file that is not in the cache: the diagnostic, its text
    /// ending with the `ply fetch` command that fixes it. Nothing is compared (never shown as
    /// creations); an error (exit 2), since the review cannot say what the change does.
    NotFetched(Failure),
    /// Not reviewed: it reads a file that differs between the sides, and fails to render at
    /// both (a remote base never fetched, or a failure older than the change): what the
    /// change does to it cannot be shown. Its failure is the head's, its text naming the
    /// base's when that is another, and the `ply fetch` commands of the sides not fetched.
    /// Counted as a change (exit 1, never 0); an error with `--fail-on not-reviewed` or
    /// `any-error`.
    NotReviewed(Failure),
    /// A GitOps target that a side does not render (its source is another repository, a Helm
    /// chart, a plugin…): the reason, as the failure's message. What it applies cannot be
    /// shown, so it is never "no changes"; not an error, and not counted as a change.
    NotRendered(Failure),
}

/// Which failures make a review an error (`--fail-on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum FailOn {
    /// Only overlays broken by the change.
    #[default]
    NewErrors,
    /// Also overlays broken before it, and those not reviewed.
    AnyError,
    /// Also overlays not reviewed (they read a changed file and fail at both sides).
    NotReviewed,
}

/// The comparison of one overlay.
#[derive(Clone, Debug)]
pub(crate) struct OverlayReview {
    pub name: String,
    pub status: Status,
    pub objects: Vec<ObjectChange>,
    pub warnings: Vec<String>,
    /// What the apply would do beyond the diff (`review::risks`), most severe first.
    pub(crate) risks: Vec<Risk>,
    /// Objects it rendered at the base that another overlay renders at the head (shown
    /// there as moves, not here as deletions).
    pub moved_out: usize,
    /// Its created and deleted objects as rendered (each with its index in `objects`), which
    /// the review pairs across overlays into moves. Kept in a shard's review (written into
    /// its JSON, secret values digested: [`Shard`]) for `--merge-reports` to pair over all
    /// the shards, each with its fields' causes (with `--why`: what the moved object's
    /// changes are given once paired); empty once paired.
    pub(crate) unpaired: Vec<(usize, Node, FieldCauses)>,
    /// Its own `namePrefix` and `nameSuffix`, which grouping takes out of the names of its
    /// objects and of the references to them ([`super::group`]).
    pub(crate) affixes: Affixes,
}

/// An overlay's own `namePrefix` and `nameSuffix` (its kustomization's; empty when unset).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Affixes {
    pub(crate) prefix: String,
    pub(crate) suffix: String,
}

/// An object's fields, each with the cause of its value (the field's index path,
/// `spec.containers[0].image`, in the object's order).
pub(crate) type FieldCauses = Vec<(String, Cause)>;

impl OverlayReview {
    /// Its objects that changed (any action but unchanged), in order.
    pub(crate) fn changed_objects(&self) -> Vec<&ObjectChange> {
        self.objects
            .iter()
            .filter(|x| x.action != Action::Unchanged)
            .collect()
    }

    pub(crate) fn count(&self, action: Action) -> usize {
        self.objects.iter().filter(|o| o.action == action).count()
    }

    pub(crate) fn changed(&self) -> bool {
        self.objects.iter().any(|o| o.action != Action::Unchanged)
            || matches!(
                self.status,
                Status::HeadFailed(_)
                    | Status::NotFetched(_)
                    | Status::NotReviewed(_)
                    | Status::NotRendered(_)
                    | Status::Added
                    | Status::Removed
            )
    }

    /// Fails with the same diagnostic at both sides.
    pub(crate) fn broken_before(&self) -> Option<&Failure> {
        match &self.status {
            Status::BrokenBefore(f) => Some(f),
            _ => None,
        }
    }

    /// Compared without a change: reported by name only. Its objects are not counted: with
    /// `--changed-only` it may not have been rendered at all.
    pub(crate) fn no_changes(&self) -> bool {
        self.status == Status::Compared && !self.changed()
    }

    /// Its failure, at the head (broken before or by the change) or at the base (fixed).
    pub(crate) fn failure(&self) -> Option<&Failure> {
        match &self.status {
            Status::BaseFailed(f)
            | Status::HeadFailed(f)
            | Status::BrokenBefore(f)
            | Status::NotFetched(f)
            | Status::NotReviewed(f)
            | Status::NotRendered(f) => Some(f),
            _ => None,
        }
    }
}

/// The outcome of a review: every overlay compared between a base and a head.
#[derive(Clone, Debug)]
pub(crate) struct Review {
    pub base: String,
    pub head: String,
    pub overlays: Vec<OverlayReview>,
    /// Which failures are errors.
    pub fail_on: FailOn,
    /// Set when this review is one shard of a sharded run (`--shard I/N`): its moves are not
    /// paired yet (see [`OverlayReview::unpaired`]).
    pub(crate) shard: Option<Shard>,
}

/// Which shard a review is (`--shard INDEX/COUNT`), and how it shows secrets, which the merge
/// of the shards needs to pair their moves as one run would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shard {
    pub(crate) index: usize,
    pub(crate) count: usize,
    /// `--show-secrets`: the unpaired objects are written as rendered; otherwise each value a
    /// Secret's display masks is written as its digest (`crate::diff::mask::digest_values`).
    pub(crate) show_secrets: bool,
}

impl Review {
    /// 0 no change, 1 changes (an overlay fixed by the change, or not reviewed, included; a
    /// GitOps target not rendered is listed but not counted: its source is elsewhere), 2
    /// an overlay broken by the change or not fetched (with [`FailOn::NotReviewed`], also one
    /// not reviewed; with [`FailOn::AnyError`], also one broken before it or not reviewed).
    pub(crate) fn exit_code(&self) -> i32 {
        let strict = self.fail_on == FailOn::AnyError;
        if self.overlays.iter().any(|o| match o.status {
            Status::HeadFailed(_) | Status::NotFetched(_) => true,
            Status::BrokenBefore(_) => strict,
            Status::NotReviewed(_) => self.fail_on != FailOn::NewErrors,
            _ => false,
        }) {
            exit::DIFF_ERROR
        } else if self
            .overlays
            .iter()
            .any(|o| o.changed() && !matches!(o.status, Status::NotRendered(_)))
        {
            1
        } else {
            exit::OK
        }
    }

    pub(crate) fn count(&self, action: Action) -> usize {
        self.overlays.iter().map(|o| o.count(action)).sum()
    }

    /// Every overlay's risks with the overlay's name, most severe kind first (then in
    /// overlay order).
    pub(crate) fn risks(&self) -> Vec<(&str, &Risk)> {
        let mut all: Vec<(&str, &Risk)> = self
            .overlays
            .iter()
            .flat_map(|o| o.risks.iter().map(|r| (o.name.as_str(), r)))
            .collect();
        all.sort_by_key(|(_, r)| r.kind);
        all
    }

    /// The actions the tables and totals of the text formats count: [`Action::REVIEWED`],
    /// `move` only when an object moved.
    pub(crate) fn actions(&self) -> Vec<Action> {
        let moved = self.count(Action::Move) > 0;
        Action::REVIEWED
            .into_iter()
            .filter(|a| *a != Action::Move || moved)
            .collect()
    }

    /// The overlays not reviewed: they read a changed file and fail at both sides.
    pub(crate) fn not_reviewed(&self) -> Vec<(&str, &Failure)> {
        self.overlays
            .iter()
            .filter_map(|o| match &o.status {
                Status::NotReviewed(f) => Some((o.name.as_str(), f)),
                _ => None,
            })
            .collect()
    }

    /// The overlays broken before this change.
    pub(crate) fn broken_before(&self) -> Vec<(&str, &Failure)> {
        self.overlays
            .iter()
            .filter_map(|o| o.broken_before().map(|f| (o.name.as_str(), f)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: &str, message: &str, line: usize) -> Failure {
        Failure {
            code: code.into(),
            message: message.into(),
            file: Some("a/kustomization.yaml".into()),
            line: Some(line),
            text: format!("{code}\n  x {message}\n  at line {line}\n"),
        }
    }

    fn overlay(status: Status) -> OverlayReview {
        OverlayReview {
            name: "a".into(),
            status,
            objects: Vec::new(),
            warnings: Vec::new(),
            moved_out: 0,
            risks: Vec::new(),
            unpaired: Vec::new(),
            affixes: Default::default(),
        }
    }

    #[test]
    fn the_same_failure_is_the_same_kind_and_message_wherever_it_points() {
        let base = failure("ply::not-found", "'x.yaml' does not exist", 8);
        assert!(base.same(&failure("ply::not-found", "'x.yaml' does not exist", 12)));
        assert!(!base.same(&failure("ply::not-found", "'y.yaml' does not exist", 8)));
        assert!(!base.same(&failure("ply::remote", "'x.yaml' does not exist", 8)));
        assert_eq!(
            base.one_line(),
            "ply::not-found (a/kustomization.yaml:8): 'x.yaml' does not exist"
        );
    }

    #[test]
    fn only_failures_the_change_brings_are_errors_unless_any_error() {
        let f = failure("ply::not-found", "gone", 1);
        let review = |status: Status, fail_on: FailOn| Review {
            base: "b".into(),
            head: "h".into(),
            overlays: vec![overlay(status)],
            fail_on,
            shard: None,
        };
        let cases = [
            (Status::BrokenBefore(f.clone()), FailOn::NewErrors, 0),
            (Status::BrokenBefore(f.clone()), FailOn::AnyError, 2),
            (Status::HeadFailed(f.clone()), FailOn::NewErrors, 2),
            (Status::HeadFailed(f.clone()), FailOn::AnyError, 2),
            (Status::Compared, FailOn::AnyError, 0),
            (Status::NotReviewed(f.clone()), FailOn::NewErrors, 1),
            (Status::NotReviewed(f.clone()), FailOn::NotReviewed, 2),
            (Status::NotReviewed(f.clone()), FailOn::AnyError, 2),
            (Status::BrokenBefore(f.clone()), FailOn::NotReviewed, 0),
        ];
        for (status, fail_on, code) in cases {
            assert_eq!(
                review(status.clone(), fail_on).exit_code(),
                code,
                "{status:?} {fail_on:?}"
            );
        }
        // Fixed by the change: its objects are creations, a change.
        let mut fixed = overlay(Status::BaseFailed(f));
        fixed.objects.push(ObjectChange {
            action: Action::Create,
            id: ObjectId::default(),
            renamed_from: None,
            moved_from: None,
            before: String::new(),
            after: "a: 1\n".into(),
            changes: Vec::new(),
            conflicts: Vec::new(),
            predicted: None,
            stored_diff: None,
        });
        let r = Review {
            base: "b".into(),
            head: "h".into(),
            overlays: vec![fixed],
            fail_on: FailOn::AnyError,
            shard: None,
        };
        assert_eq!(r.exit_code(), 1);
    }
}
