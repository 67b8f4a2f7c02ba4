//! What `kubectl apply` of an overlay's head would do beyond its diff, known offline with
//! certainty from the two renders (the base render taken as what the cluster holds): updates
//! the apiserver refuses (immutable fields), deletions that take more than the object,
//! workloads whose pods are replaced, and `replicas` an autoscaler owns. Each risk cites the
//! Kubernetes rule it follows; where the rule depends on what only the cluster knows (a value
//! the server allocated or defaulted, a paused rollout), nothing is said. Pure: reads the
//! paired objects of [`super::compare::compare_sides`], returns the report layer's [`Risk`]s.

use crate::report::model::{Risk, RiskKind};
use crate::report::{Action, Change, ObjectChange, ObjectId};
use crate::resource::{Gvk, Resource};
use crate::yaml::Node;

use super::compare::{Compared, under};

const DEPLOYMENT_SELECTOR_RULE: &str = "pkg/registry/apps/deployment/strategy.go, deploymentStrategy.ValidateUpdate: spec.selector is immutable";
const REPLICASET_SELECTOR_RULE: &str = "pkg/registry/apps/replicaset/strategy.go, rsStrategy.ValidateUpdate: spec.selector is immutable";
const DAEMONSET_SELECTOR_RULE: &str = "pkg/registry/apps/daemonset/strategy.go, daemonSetStrategy.ValidateUpdate: spec.selector is immutable";
const STATEFULSET_RULE: &str = "pkg/apis/apps/validation/validation.go, ValidateStatefulSetUpdate: spec fields other than replicas, ordinals, template, updateStrategy, revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds are forbidden";
const JOB_RULE: &str = "pkg/apis/batch/validation/validation.go, ValidateJobSpecUpdate: spec.selector and spec.template are immutable (but a suspended Job's scheduling fields)";
const SERVICE_RULE: &str = "pkg/apis/core/validation/validation.go, ValidateServiceUpdate: spec.clusterIP(s) is immutable unless the type is ExternalName";
const PVC_RULE: &str = "pkg/apis/core/validation/validation.go, ValidatePersistentVolumeClaimUpdate: spec is immutable but resources.requests, which may not decrease";
const ROLEBINDING_RULE: &str =
    "pkg/apis/rbac/validation/validation.go, ValidateRoleBindingUpdate: cannot change roleRef";
const CLUSTERROLEBINDING_RULE: &str = "pkg/apis/rbac/validation/validation.go, ValidateClusterRoleBindingUpdate: cannot change roleRef";
const CONFIGMAP_RULE: &str = "pkg/apis/core/validation/validation.go, ValidateConfigMapUpdate: with immutable: true, data and immutable cannot change";
const SECRET_RULE: &str = "pkg/apis/core/validation/validation.go, ValidateSecretUpdate: with immutable: true, data and immutable cannot change";
const SECRET_TYPE_RULE: &str =
    "pkg/apis/core/validation/validation.go, ValidateSecretUpdate: type is immutable";
const NAMESPACE_DELETION_RULE: &str = "pkg/controller/namespace/deletion/namespaced_resources_deleter.go: a deleted namespace's objects are deleted";
const PVC_DELETION_RULE: &str = "pkg/controller/volume/persistentvolume/pv_controller.go, reclaimVolume: a released volume follows its reclaim policy";
const PV_DELETION_RULE: &str = "pkg/controller/volume/pvprotection/pv_protection_controller.go: removed once no claim is bound to it";
const CRD_DELETION_RULE: &str = "apiextensions-apiserver pkg/controller/finalizer/crd_finalizer.go: every custom resource of the definition is deleted";
const DEPLOYMENT_ROLLOUT_RULE: &str =
    "pkg/controller/deployment/sync.go, getNewReplicaSet: a new pod template is a new ReplicaSet";
const DAEMONSET_ROLLOUT_RULE: &str =
    "pkg/controller/daemon/update.go, rollingUpdate: pods of an old template are replaced";
const STATEFULSET_ROLLOUT_RULE: &str = "pkg/controller/statefulset/stateful_set_control.go, updateStatefulSet: pods of an old revision are replaced";
const ENV_CONFIG_RULE: &str = "Kubernetes documentation, concepts/configuration/configmap.md, \"ConfigMaps consumed as environment variables are not updated automatically and require a pod restart\"";
const ENV_SECRET_RULE: &str = "Kubernetes documentation, concepts/configuration/secret.md, \"Using Secrets as environment variables\": a container that consumes a Secret in an environment variable does not see its update unless it is restarted";
const VOLUME_SECRET_RULE: &str = "Kubernetes documentation, concepts/configuration/secret.md, \"Mounted Secrets are updated automatically\": the kubelet updates the files after its sync delay, never under a subPath mount";
const VOLUME_CONFIG_RULE: &str = "Kubernetes documentation, concepts/configuration/configmap.md, \"Mounted ConfigMaps are updated automatically\": the kubelet updates the files after its sync delay, never under a subPath mount";
const HPA_RULE: &str = "Kubernetes documentation, horizontal-pod-autoscale.md, \"Migrating Deployments and StatefulSets to horizontal autoscaling\"";

/// One compared object with its two unmasked sides.
struct Pair<'a> {
    change: &'a ObjectChange,
    before: Option<&'a Node>,
    after: Option<&'a Node>,
    gvk: Gvk,
}

/// The risks of one overlay, most severe kind first, in the objects' order within a kind.
pub(crate) fn risks(old: &[Resource], new: &[Resource], compared: &[Compared]) -> Vec<Risk> {
    let pairs: Vec<Pair<'_>> = compared
        .iter()
        .map(|c| {
            let before = c.old.and_then(|i| old.get(i)).map(|r| &r.node);
            let after = c.new.and_then(|i| new.get(i)).map(|r| &r.node);
            let gvk = Gvk::of(after.or(before).unwrap_or(&Node::Null));
            Pair {
                change: &c.change,
                before,
                after,
                gvk,
            }
        })
        .collect();
    let mut out = Vec::new();
    for p in &pairs {
        match (p.change.action, p.before, p.after) {
            (Action::Update, Some(b), Some(a)) => {
                let before = out.len();
                immutable(p, b, a, &mut out);
                // A refused update changes nothing: its pods do not roll.
                if out.len() == before {
                    rollout(p, a, &pairs, &mut out);
                }
            }
            (Action::Delete, Some(b), None) => deletion(p, b, &mut out),
            _ => {}
        }
    }
    autoscaled(&pairs, &mut out);
    stale_config(&pairs, &mut out);
    out.sort_by_key(|r| r.kind);
    out
}

fn risk(
    kind: RiskKind,
    o: &ObjectChange,
    path: Option<&str>,
    what: String,
    rule: &'static str,
) -> Risk {
    Risk {
        kind,
        object: o.id.clone(),
        path: path.map(str::to_string),
        what,
        rule: std::borrow::Cow::Borrowed(rule),
    }
}

/// The changes at or under `prefix`.
fn changes_under<'a>(o: &'a ObjectChange, prefix: &str) -> Vec<&'a Change> {
    o.changes
        .iter()
        .filter(|c| under(&c.path, prefix))
        .collect()
}

/// ` (.spec.selector.matchLabels.app and 2 more)`: the first changed path and a count; a
/// single change of a scalar at `path` itself as ` (old → new)`.
fn which(changes: &[&Change], path: &str) -> String {
    let scalar = |n: &Option<Node>| match n {
        None => Some("(none)".to_string()),
        Some(n) if n.is_scalar() => n.scalar_text(),
        Some(_) => None,
    };
    match changes {
        [] => String::new(),
        [one] if one.path == path => match (scalar(&one.before), scalar(&one.after)) {
            (Some(x), Some(y)) => format!(" ({x} → {y})"),
            _ => String::new(),
        },
        [one] => format!(" ({})", one.path),
        [first, rest @ ..] => format!(" ({} and {} more)", first.path, rest.len()),
    }
}

const REFUSED: &str = "`kubectl apply` is refused (field is immutable)";

fn immutable(p: &Pair<'_>, b: &Node, a: &Node, out: &mut Vec<Risk>) {
    let o = p.change;
    let group = p.gvk.group.as_str();
    let kind = p.gvk.kind.as_str();
    match (group, kind) {
        // apps/v1beta1 kept a mutable selector; that version is served no more.
        ("apps", "Deployment") if p.gvk.version != "v1beta1" => {
            immutable_field(o, ".spec.selector", DEPLOYMENT_SELECTOR_RULE, out);
        }
        ("apps", "ReplicaSet") => {
            immutable_field(o, ".spec.selector", REPLICASET_SELECTOR_RULE, out)
        }
        ("apps", "DaemonSet") => immutable_field(o, ".spec.selector", DAEMONSET_SELECTOR_RULE, out),
        ("apps", "StatefulSet") => stateful_set(o, out),
        ("batch", "Job") => job(o, out),
        ("", "Service") => service(o, b, a, out),
        ("", "PersistentVolumeClaim") => claim(o, b, a, out),
        ("rbac.authorization.k8s.io", "RoleBinding") => {
            immutable_field(o, ".roleRef", ROLEBINDING_RULE, out)
        }
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            immutable_field(o, ".roleRef", CLUSTERROLEBINDING_RULE, out);
        }
        ("", "ConfigMap" | "Secret") => config_data(o, kind, b, a, out),
        _ => {}
    }
}

/// A field that must not change: its changes, if any, are a risk.
fn immutable_field(o: &ObjectChange, path: &str, rule: &'static str, out: &mut Vec<Risk>) {
    let c = changes_under(o, path);
    if !c.is_empty() {
        out.push(risk(
            RiskKind::Immutable,
            o,
            Some(path),
            format!("changes{}: {REFUSED}", which(&c, path)),
            rule,
        ));
    }
}

/// A StatefulSet's selector, service name, pod management policy and claim templates.
fn stateful_set(o: &ObjectChange, out: &mut Vec<Risk>) {
    for path in [
        ".spec.selector",
        ".spec.serviceName",
        ".spec.podManagementPolicy",
    ] {
        immutable_field(o, path, STATEFULSET_RULE, out);
    }
    // The server defaults a claim template's volumeMode to Filesystem: writing that
    // default out changes nothing it holds.
    let c: Vec<&Change> = changes_under(o, ".spec.volumeClaimTemplates")
        .into_iter()
        .filter(|c| {
            !(c.before.is_none()
                && c.path.ends_with(".spec.volumeMode")
                && c.after.as_ref().and_then(Node::as_str) == Some("Filesystem"))
        })
        .collect();
    if !c.is_empty() {
        out.push(risk(
            RiskKind::Immutable,
            o,
            Some(".spec.volumeClaimTemplates"),
            format!("changes{}: {REFUSED}", which(&c, "")),
            STATEFULSET_RULE,
        ));
    }
}

/// A Job's selector and pod template (apart from the fields the API lets change).
fn job(o: &ObjectChange, out: &mut Vec<Risk>) {
    immutable_field(o, ".spec.selector", JOB_RULE, out);
    const MUTABLE: [&str; 6] = [
        ".spec.template.spec.nodeSelector",
        ".spec.template.spec.affinity",
        ".spec.template.spec.tolerations",
        ".spec.template.spec.schedulingGates",
        ".spec.template.metadata.labels",
        ".spec.template.metadata.annotations",
    ];
    let c: Vec<&Change> = changes_under(o, ".spec.template")
        .into_iter()
        .filter(|c| !MUTABLE.iter().any(|m| under(&c.path, m)))
        .collect();
    if !c.is_empty() {
        out.push(risk(
            RiskKind::Immutable,
            o,
            Some(".spec.template"),
            format!("changes{}: {REFUSED}", which(&c, "")),
            JOB_RULE,
        ));
    }
}

/// A Secret's type; a ConfigMap or Secret marked `immutable: true`: unset, or its data
/// changed.
fn config_data(o: &ObjectChange, kind: &str, b: &Node, a: &Node, out: &mut Vec<Risk>) {
    if kind == "Secret" {
        immutable_field(o, ".type", SECRET_TYPE_RULE, out);
    }
    if b.get("immutable") != Some(&Node::Bool(true)) {
        return;
    }
    let rule = if kind == "Secret" {
        SECRET_RULE
    } else {
        CONFIGMAP_RULE
    };
    if a.get("immutable") != Some(&Node::Bool(true)) {
        out.push(risk(
            RiskKind::Immutable,
            o,
            Some(".immutable"),
            format!("is unset: {REFUSED}"),
            rule,
        ));
    }
    let c: Vec<&Change> = [".data", ".binaryData", ".stringData"]
        .iter()
        .flat_map(|p| changes_under(o, p))
        .collect();
    if !c.is_empty() {
        out.push(risk(
            RiskKind::Immutable,
            o,
            Some(".data"),
            format!(
                "changes{} in an object marked immutable: true: {REFUSED}",
                which(&c, "")
            ),
            rule,
        ));
    }
}

/// A Service's cluster IP, changed between two explicit values (an absent one is allocated
/// by the server, and an apply that omits it keeps the allocated one).
fn service(o: &ObjectChange, b: &Node, a: &Node, out: &mut Vec<Risk>) {
    let external = |n: &Node| n.str_at(&["spec", "type"]) == Some("ExternalName");
    if external(b) || external(a) {
        return;
    }
    let ip = |n: &Node| {
        n.str_at(&["spec", "clusterIP"])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let primary = |n: &Node| {
        n.get_path(&["spec", "clusterIPs"])
            .and_then(Node::as_seq)
            .and_then(|s| s.first())
            .and_then(Node::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    for (path, get) in [
        (".spec.clusterIP", &ip as &dyn Fn(&Node) -> Option<String>),
        (".spec.clusterIPs[0]", &primary),
    ] {
        if let (Some(x), Some(y)) = (get(b), get(a)) {
            if x != y {
                out.push(risk(
                    RiskKind::Immutable,
                    o,
                    Some(path),
                    format!("changes ({x} → {y}): {REFUSED}"),
                    SERVICE_RULE,
                ));
            }
        }
    }
}

/// A claim's storage class (both explicit: an absent one may be set once), access modes,
/// and a decrease of its requested storage.
fn claim(o: &ObjectChange, b: &Node, a: &Node, out: &mut Vec<Risk>) {
    let class = |n: &Node| n.str_at(&["spec", "storageClassName"]).map(str::to_string);
    if let (Some(x), Some(y)) = (class(b), class(a)) {
        if x != y {
            out.push(risk(
                RiskKind::Immutable,
                o,
                Some(".spec.storageClassName"),
                format!("changes ({x} → {y}): {REFUSED}"),
                PVC_RULE,
            ));
        }
    }
    let modes = |n: &Node| n.get_path(&["spec", "accessModes"]).cloned();
    if let (Some(x), Some(y)) = (modes(b), modes(a)) {
        if x != y {
            out.push(risk(
                RiskKind::Immutable,
                o,
                Some(".spec.accessModes"),
                format!("change: {REFUSED}"),
                PVC_RULE,
            ));
        }
    }
    let storage = |n: &Node| {
        n.get_path(&["spec", "resources", "requests", "storage"])
            .cloned()
    };
    if let (Some(x), Some(y)) = (storage(b), storage(a)) {
        if let (Some(qx), Some(qy)) = (quantity(&x), quantity(&y)) {
            if less(qy, qx) == Some(true) {
                let text = |n: &Node| n.scalar_text().unwrap_or_default();
                out.push(risk(
                    RiskKind::Immutable,
                    o,
                    Some(".spec.resources.requests.storage"),
                    format!(
                        "decreases ({} → {}): refused, but to recover a failed expansion (never below the volume's capacity)",
                        text(&x),
                        text(&y)
                    ),
                    PVC_RULE,
                ));
            }
        }
    }
}

fn deletion(p: &Pair<'_>, b: &Node, out: &mut Vec<Risk>) {
    const PRUNED: &str = "leaves the render: an apply that prunes deletes it";
    let (what, rule) = match (p.gvk.group.as_str(), p.gvk.kind.as_str()) {
        ("", "Namespace") => (
            format!("{PRUNED}, and with it every object in the namespace"),
            NAMESPACE_DELETION_RULE,
        ),
        ("", "PersistentVolumeClaim") => (
            format!(
                "{PRUNED}; its volume is released, and deleted with its data if its reclaim policy is Delete"
            ),
            PVC_DELETION_RULE,
        ),
        ("", "PersistentVolume") => {
            let policy = b
                .str_at(&["spec", "persistentVolumeReclaimPolicy"])
                .map(|s| format!(" (persistentVolumeReclaimPolicy: {s})"))
                .unwrap_or_default();
            (format!("{PRUNED}{policy}"), PV_DELETION_RULE)
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => (
            format!("{PRUNED}, and with it every custom resource of the definition"),
            CRD_DELETION_RULE,
        ),
        _ => return,
    };
    out.push(risk(RiskKind::Deletion, p.change, None, what, rule));
}

/// A workload whose pod template changes: its pods are replaced. Not said of a paused
/// Deployment or an `OnDelete` update strategy (the pods stay until resumed or deleted), nor
/// of a change the server reads as the same value (a quantity written another way).
fn rollout(p: &Pair<'_>, a: &Node, pairs: &[Pair<'_>], out: &mut Vec<Risk>) {
    let o = p.change;
    let rule = match (p.gvk.group.as_str(), p.gvk.kind.as_str()) {
        ("apps", "Deployment") => {
            if a.get_path(&["spec", "paused"]) == Some(&Node::Bool(true)) {
                return;
            }
            DEPLOYMENT_ROLLOUT_RULE
        }
        ("apps", "DaemonSet" | "StatefulSet") => {
            if a.str_at(&["spec", "updateStrategy", "type"]) == Some("OnDelete") {
                return;
            }
            if p.gvk.kind == "DaemonSet" {
                DAEMONSET_ROLLOUT_RULE
            } else {
                STATEFULSET_ROLLOUT_RULE
            }
        }
        _ => return,
    };
    let changed: Vec<&Change> = changes_under(o, ".spec.template")
        .into_iter()
        .filter(|c| !same_quantity(c))
        .collect();
    if changed.is_empty() {
        return;
    }
    // A reference to a generated ConfigMap or Secret whose hash suffix changed.
    let renamed: Vec<String> = changed
        .iter()
        .filter_map(|c| {
            let (from, to) = (c.before.as_ref()?.as_str()?, c.after.as_ref()?.as_str()?);
            pairs.iter().find_map(|q| {
                let r = q.change;
                let old = r.renamed_from.as_ref()?;
                (r.action == Action::Rename
                    && matches!(r.id.kind.as_str(), "ConfigMap" | "Secret")
                    && old.name == from
                    && r.id.name == to)
                    .then(|| format!("{} {from} → {to}", r.id.kind))
            })
        })
        .collect();
    let mut what = format!("the pod template changes{}", which(&changed, ""));
    if !renamed.is_empty() {
        what.push_str(&format!(", through the renamed {}", renamed.join(", ")));
    }
    let partition = a
        .get_path(&["spec", "updateStrategy", "rollingUpdate", "partition"])
        .and_then(|n| match n.unspelled() {
            Node::Int(i) if *i > 0 => Some(*i),
            _ => None,
        });
    match partition {
        Some(n) if p.gvk.kind == "StatefulSet" => {
            what.push_str(&format!(": its pods of ordinal {n} and above are replaced"));
        }
        _ => what.push_str(": every pod is replaced"),
    }
    out.push(risk(
        RiskKind::Rollout,
        o,
        Some(".spec.template"),
        what,
        rule,
    ));
}

/// `replicas` set on a workload that a HorizontalPodAutoscaler of the same render targets,
/// where the workload or the autoscaler changes in this review.
fn autoscaled(pairs: &[Pair<'_>], out: &mut Vec<Risk>) {
    for hpa in pairs {
        let Some(h) = hpa.after else { continue };
        if (hpa.gvk.group.as_str(), hpa.gvk.kind.as_str())
            != ("autoscaling", "HorizontalPodAutoscaler")
        {
            continue;
        }
        let Some(target) = h.get_path(&["spec", "scaleTargetRef"]) else {
            continue;
        };
        let (Some(api), Some(kind), Some(name)) = (
            target.str_at(&["apiVersion"]),
            target.str_at(&["kind"]),
            target.str_at(&["name"]),
        ) else {
            continue;
        };
        let group = Gvk::from_api_version(api, kind).group;
        for w in pairs {
            let Some(node) = w.after else { continue };
            let id: &ObjectId = &w.change.id;
            if w.gvk.group != group
                || w.gvk.kind != kind
                || id.name != name
                || id.namespace != hpa.change.id.namespace
            {
                continue;
            }
            let Some(replicas) = node.get_path(&["spec", "replicas"]) else {
                continue;
            };
            if w.change.action == Action::Unchanged && hpa.change.action == Action::Unchanged {
                continue;
            }
            out.push(risk(
                RiskKind::HpaReplicas,
                w.change,
                Some(".spec.replicas"),
                format!(
                    "is written ({}) and HorizontalPodAutoscaler {} scales this workload: the apply sets it back to {}, over the autoscaler's count",
                    replicas.scalar_text().unwrap_or_default(),
                    hpa.change.id.name,
                    replicas.scalar_text().unwrap_or_default()
                ),
                HPA_RULE,
            ));
        }
    }
}

/// How a pod spec reads a ConfigMap or Secret.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reads {
    /// Through `env[].valueFrom` or `envFrom`: read once, when the container starts.
    Env,
    /// Through a volume mounted under a `subPath`: never updated.
    SubPath,
    /// Through a volume: the kubelet updates the files after a delay.
    Volume,
}

/// The pod spec of a workload (`None` for another kind), and its path in kubectl's form.
fn pod_spec<'a>(gvk: &Gvk, node: &'a Node) -> Option<(&'a Node, &'static str)> {
    match (gvk.group.as_str(), gvk.kind.as_str()) {
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet") | ("batch", "Job") => {
            Some((
                node.get_path(&["spec", "template", "spec"])?,
                ".spec.template.spec",
            ))
        }
        ("batch", "CronJob") => Some((
            node.get_path(&["spec", "jobTemplate", "spec", "template", "spec"])?,
            ".spec.jobTemplate.spec.template.spec",
        )),
        ("", "Pod") => Some((node.get("spec")?, ".spec")),
        _ => None,
    }
}

/// How the pod spec `spec` reads the object of kind `kind` (`ConfigMap` or `Secret`) named
/// `name`, the most lasting way first (env, then a subPath mount, then a volume).
fn reads_of(spec: &Node, kind: &str, name: &str) -> Option<Reads> {
    let is = |n: Option<&Node>| n.and_then(Node::as_str) == Some(name);
    let (env_key, env_from_key, volume_key, volume_name) = if kind == "ConfigMap" {
        ("configMapKeyRef", "configMapRef", "configMap", "name")
    } else {
        ("secretKeyRef", "secretRef", "secret", "secretName")
    };
    let list = |n: &Node, key: &str| -> Vec<Node> {
        n.get(key)
            .and_then(Node::as_seq)
            .cloned()
            .unwrap_or_default()
    };
    let containers: Vec<Node> = ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .flat_map(|k| list(spec, k))
        .collect();
    let mut found: Option<Reads> = None;
    let mut note = |r: Reads| found = Some(found.map_or(r, |f| f.min(r)));
    // Volumes that hold the object: by volume name.
    let mut volumes: Vec<String> = Vec::new();
    for v in list(spec, "volumes") {
        let direct = is(v.get(volume_key).and_then(|c| c.get(volume_name)));
        let projected = v
            .get_path(&["projected", "sources"])
            .and_then(Node::as_seq)
            .is_some_and(|s| {
                s.iter()
                    .any(|src| is(src.get(volume_key).and_then(|c| c.get("name"))))
            });
        if direct || projected {
            if let Some(n) = v.get("name").and_then(Node::as_str) {
                volumes.push(n.to_string());
            }
        }
    }
    for c in &containers {
        let env = list(c, "env")
            .iter()
            .any(|e| is(e.get_path(&["valueFrom", env_key, "name"])));
        let env_from = list(c, "envFrom")
            .iter()
            .any(|e| is(e.get(env_from_key).and_then(|r| r.get("name"))));
        if env || env_from {
            note(Reads::Env);
        }
        for m in list(c, "volumeMounts") {
            let Some(v) = m.get("name").and_then(Node::as_str) else {
                continue;
            };
            if volumes.iter().any(|x| x == v) {
                let sub = m.get("subPath").or_else(|| m.get("subPathExpr")).is_some();
                note(if sub { Reads::SubPath } else { Reads::Volume });
            }
        }
    }
    found
}

/// A ConfigMap or Secret whose data changes in place (an update: the same name, no hash
/// suffix that changed) and that a workload of the head reads, where the workload's pod
/// template does not change (else its pods are replaced anyway): its running pods keep the
/// values they read (env, subPath mounts) until they restart, or see mounted files change
/// after the kubelet's delay.
fn stale_config(pairs: &[Pair<'_>], out: &mut Vec<Risk>) {
    for cfg in pairs {
        let kind = cfg.gvk.kind.as_str();
        if cfg.change.action != Action::Update
            || !cfg.gvk.group.is_empty()
            || !matches!(kind, "ConfigMap" | "Secret")
        {
            continue;
        }
        let data: Vec<&Change> = [".data", ".binaryData", ".stringData"]
            .iter()
            .flat_map(|p| changes_under(cfg.change, p))
            .collect();
        if data.is_empty() {
            continue;
        }
        let name = cfg.change.id.name.as_str();
        for w in pairs {
            let Some(node) = w.after else { continue };
            if w.change.id.namespace != cfg.change.id.namespace
                || !changes_under(w.change, ".spec.template").is_empty()
            {
                continue;
            }
            let Some((spec, _)) = pod_spec(&w.gvk, node) else {
                continue;
            };
            let Some(reads) = reads_of(spec, kind, name) else {
                continue;
            };
            let secret = kind == "Secret";
            let (how, rule) = match reads {
                Reads::Env => (
                    "through env or envFrom: its pods keep the old values until they restart",
                    if secret {
                        ENV_SECRET_RULE
                    } else {
                        ENV_CONFIG_RULE
                    },
                ),
                Reads::SubPath => (
                    "through a subPath mount, which is never updated: its pods keep the old values until they restart",
                    if secret {
                        VOLUME_SECRET_RULE
                    } else {
                        VOLUME_CONFIG_RULE
                    },
                ),
                Reads::Volume => (
                    "through a volume: the kubelet updates its pods' files after a delay, and a process that read them at start keeps the old values until it restarts",
                    if secret {
                        VOLUME_SECRET_RULE
                    } else {
                        VOLUME_CONFIG_RULE
                    },
                ),
            };
            out.push(risk(
                RiskKind::StaleConfig,
                w.change,
                None,
                format!(
                    "reads {kind} {name}, changed in place{} {how}",
                    which(&data, "")
                ),
                rule,
            ));
        }
    }
}

/// A change between two spellings of the same quantity (`1000m` → `1`), which the server
/// stores alike.
fn same_quantity(c: &Change) -> bool {
    match (
        c.before.as_ref().and_then(quantity),
        c.after.as_ref().and_then(quantity),
    ) {
        (Some(x), Some(y)) => less(x, y) == Some(false) && less(y, x) == Some(false),
        _ => false,
    }
}

/// A Kubernetes quantity (`apimachinery/pkg/api/resource/quantity.go`, `ParseQuantity`) as an
/// exact fraction `(numerator, denominator)`; `None` for anything else or out of range.
fn quantity(n: &Node) -> Option<(i128, i128)> {
    let text = match n.unspelled() {
        Node::Int(i) => return Some((*i, 1)),
        Node::Str(s) => s.as_str(),
        _ => return None,
    };
    let (sign, rest) = match text.strip_prefix('-') {
        Some(r) => (-1, r),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let digits_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(digits_end);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    // `1.2.3` (a version, not a quantity) holds a second dot.
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return None;
    }
    let mut num: i128 = 0;
    for d in int.bytes().chain(frac.bytes()) {
        num = num.checked_mul(10)?.checked_add(i128::from(d - b'0'))?;
    }
    let mut den: i128 = 10i128.checked_pow(u32::try_from(frac.len()).ok()?)?;
    let pow10 = |e: i32, num: &mut i128, den: &mut i128| -> Option<()> {
        let p = 10i128.checked_pow(e.unsigned_abs())?;
        if e >= 0 {
            *num = num.checked_mul(p)?;
        } else {
            *den = den.checked_mul(p)?;
        }
        Some(())
    };
    match suffix {
        "" => {}
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            let k = "KMGTPE".find(&suffix[..1])? as u32 + 1;
            num = num.checked_mul(1i128.checked_shl(10 * k)?)?;
        }
        "n" => pow10(-9, &mut num, &mut den)?,
        "u" => pow10(-6, &mut num, &mut den)?,
        "m" => pow10(-3, &mut num, &mut den)?,
        "k" => pow10(3, &mut num, &mut den)?,
        "M" => pow10(6, &mut num, &mut den)?,
        "G" => pow10(9, &mut num, &mut den)?,
        "T" => pow10(12, &mut num, &mut den)?,
        "P" => pow10(15, &mut num, &mut den)?,
        "E" => pow10(18, &mut num, &mut den)?,
        s => {
            let e = s.strip_prefix(['e', 'E'])?;
            let e: i32 = e.parse().ok().filter(|e: &i32| e.abs() <= 30)?;
            pow10(e, &mut num, &mut den)?;
        }
    }
    Some((sign * num, den))
}

/// `x < y` for two fractions of [`quantity`]; `None` when it cannot be computed exactly.
fn less(x: (i128, i128), y: (i128, i128)) -> Option<bool> {
    Some(x.0.checked_mul(y.1)? < y.0.checked_mul(x.1)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::adapters::Builtin;
    use crate::review::compare::compare_sides;
    use crate::yaml::parse::parse_one;

    fn res(text: &str) -> Resource {
        Resource::new(parse_one(text).unwrap(), None)
    }

    fn of(old: &[&str], new: &[&str]) -> Vec<Risk> {
        let old: Vec<Resource> = old.iter().map(|t| res(t)).collect();
        let new: Vec<Resource> = new.iter().map(|t| res(t)).collect();
        let compared = compare_sides(&old, &new, &Builtin::new(), false);
        risks(&old, &new, &compared)
    }

    fn kinds(r: &[Risk]) -> Vec<(&str, Option<&str>)> {
        r.iter()
            .map(|r| (r.kind.as_str(), r.path.as_deref()))
            .collect()
    }

    #[test]
    fn quantities() {
        let q = |s: &str| quantity(&Node::str(s));
        assert_eq!(q("1Gi"), Some((1 << 30, 1)));
        assert_eq!(q("1.5k"), Some((15_000, 10)));
        assert_eq!(q("500m"), Some((500, 1000)));
        assert_eq!(q("1e3"), Some((1000, 1)));
        assert_eq!(q("ten"), None);
        assert_eq!(q("1.2.3"), None);
        assert_eq!(q("v0.10.6"), None);
        assert_eq!(q("5Gb"), None);
        assert_eq!(less(q("5Gi").unwrap(), q("10Gi").unwrap()), Some(true));
        assert_eq!(less(q("1G").unwrap(), q("1Gi").unwrap()), Some(true));
        assert!(same_quantity(&Change {
            path: "x".into(),
            before: Some(Node::str("1000m")),
            after: Some(Node::Int(1)),
            cause: None,
        }));
    }

    #[test]
    fn selector_change_is_immutable_and_rolls() {
        let d = |app: &str, image: &str| {
            format!(
                "{{apiVersion: apps/v1, kind: Deployment, metadata: {{name: web}}, spec: {{selector: {{matchLabels: {{app: {app}}}}}, template: {{metadata: {{labels: {{app: {app}}}}}, spec: {{containers: [{{name: web, image: {image}}}]}}}}}}}}"
            )
        };
        let got = of(&[&d("a", "x:1")], &[&d("b", "x:2")]);
        // Refused, so it does not roll.
        assert_eq!(kinds(&got), [("immutable", Some(".spec.selector"))]);
        assert!(
            got[0].what.contains("(.spec.selector.matchLabels.app)"),
            "{}",
            got[0].what
        );
        // Only the image: a roll, nothing refused; paused: nothing said.
        assert_eq!(
            kinds(&of(&[&d("a", "x:1")], &[&d("a", "x:2")])),
            [("rollout", Some(".spec.template"))]
        );
        let paused = d("a", "x:2").replace("spec: {selector", "spec: {paused: true, selector");
        assert!(of(&[&d("a", "x:1")], &[&paused]).is_empty());
    }

    #[test]
    fn service_cluster_ip_only_between_explicit_values() {
        let s = |ip: &str| {
            format!(
                "{{apiVersion: v1, kind: Service, metadata: {{name: s}}, spec: {{{ip}ports: [{{port: 80}}]}}}}"
            )
        };
        let got = of(
            &[&s("clusterIP: 10.0.0.1, ")],
            &[&s("clusterIP: 10.0.0.2, ")],
        );
        assert_eq!(kinds(&got), [("immutable", Some(".spec.clusterIP"))]);
        assert!(of(&[&s("")], &[&s("clusterIP: 10.0.0.2, ")]).is_empty());
        assert!(of(&[&s("clusterIP: 10.0.0.1, ")], &[&s("")]).is_empty());
        let ext = s("type: ExternalName, externalName: a.example.com, clusterIP: 10.0.0.2, ");
        assert!(of(&[&s("clusterIP: 10.0.0.1, ")], &[&ext]).is_empty());
    }

    #[test]
    fn claim_decrease_class_and_modes() {
        let c = |class: &str, mode: &str, size: &str| {
            format!(
                "{{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {{name: data}}, spec: {{storageClassName: {class}, accessModes: [{mode}], resources: {{requests: {{storage: {size}}}}}}}}}"
            )
        };
        let base = c("fast", "ReadWriteOnce", "10Gi");
        assert!(of(&[&base], &[&c("fast", "ReadWriteOnce", "20Gi")]).is_empty());
        assert_eq!(
            kinds(&of(&[&base], &[&c("slow", "ReadWriteMany", "9Gi")])),
            [
                ("immutable", Some(".spec.storageClassName")),
                ("immutable", Some(".spec.accessModes")),
                ("immutable", Some(".spec.resources.requests.storage")),
            ]
        );
    }

    #[test]
    fn immutable_configmap_and_renamed_ones() {
        let c = |imm: &str, v: &str| {
            format!(
                "{{apiVersion: v1, kind: ConfigMap, metadata: {{name: c}}, {imm}data: {{k: {v}}}}}"
            )
        };
        assert_eq!(
            kinds(&of(
                &[&c("immutable: true, ", "1")],
                &[&c("immutable: true, ", "2")]
            )),
            [("immutable", Some(".data"))]
        );
        assert_eq!(
            kinds(&of(&[&c("immutable: true, ", "1")], &[&c("", "1")])),
            [("immutable", Some(".immutable"))]
        );
        assert!(of(&[&c("", "1")], &[&c("", "2")]).is_empty());
        // A generated name with a new hash is a new object: nothing is refused.
        let g = |name: &str, v: &str| {
            format!(
                "{{apiVersion: v1, kind: ConfigMap, metadata: {{name: {name}}}, immutable: true, data: {{k: {v}}}}}"
            )
        };
        assert!(of(&[&g("c-2g8fk8h9k5", "1")], &[&g("c-7c9t9mh2tb", "2")]).is_empty());
    }

    #[test]
    fn deletions_of_data_holding_kinds_only() {
        let got = of(
            &[
                "{apiVersion: v1, kind: Namespace, metadata: {name: prod}}",
                "{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}",
                "{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: a.example.com}}",
            ],
            &[],
        );
        assert_eq!(kinds(&got), [("deletion", None), ("deletion", None)]);
    }

    #[test]
    fn replicas_under_an_autoscaler() {
        let d = |n: i32| {
            format!(
                "{{apiVersion: apps/v1, kind: Deployment, metadata: {{name: web, namespace: a}}, spec: {{replicas: {n}}}}}"
            )
        };
        let hpa = "{apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: web, namespace: a}, spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}}}";
        assert_eq!(
            kinds(&of(&[&d(2), hpa], &[&d(3), hpa])),
            [("hpa-replicas", Some(".spec.replicas"))]
        );
        // Neither changes: not this change's risk.
        assert!(of(&[&d(2), hpa], &[&d(2), hpa]).is_empty());
        // Another namespace: not its target.
        let other = hpa.replace("namespace: a", "namespace: b");
        assert!(of(&[&d(2)], &[&d(3), &other]).is_empty());
    }
}
