//! Unit tests of pairing, namespaces, prune selection, renames, noise and masking in reports,
//! with small fake engines.

use super::engine::{
    ClientSideApply, Engines, KindInfo, Manager, OwnershipConflict, PathElement, ServerSideApply,
    SsaOutcome,
};
use super::*;
use crate::resource::Gvk;
use crate::source::SourceFile;
use crate::yaml::Node;

struct Fake;

impl KindInfo for Fake {
    fn namespaced(&self, group: &str, kind: &str) -> Option<bool> {
        match (group, kind) {
            ("", "Namespace") | ("rbac.authorization.k8s.io", "ClusterRole") => Some(false),
            ("", _) | ("apps", _) => Some(true),
            _ => None,
        }
    }
    fn strategic(&self, _: &Gvk) -> bool {
        false
    }
    fn list_keys(&self, _: &Gvk, _: &[&str]) -> Option<Vec<String>> {
        None
    }
}

impl ClientSideApply for Fake {
    fn three_way_strategic(&self, _: &Gvk, _: &Node, _: &Node, _: &Node) -> Result<Node, Error> {
        Err(Error::new(ErrorKind::Patch, "not used"))
    }
}

impl ServerSideApply for Fake {
    fn apply(
        &self,
        _: &Gvk,
        live: Option<&Node>,
        config: &Node,
        _: &str,
        force: bool,
    ) -> Result<SsaOutcome, Error> {
        if !force
            && live.and_then(|l| l.get_path(&["spec", "replicas"]))
                != config.get_path(&["spec", "replicas"])
        {
            return Ok(SsaOutcome::Conflicts(vec![OwnershipConflict {
                manager: Manager {
                    name: "hpa".into(),
                    operation: "Update".into(),
                    subresource: "scale".into(),
                    api_version: "apps/v1".into(),
                    time: String::new(),
                },
                path: vec![
                    PathElement::Field("spec".into()),
                    PathElement::Field("replicas".into()),
                ],
            }]));
        }
        let mut out = live.cloned().unwrap_or_else(Node::empty_map);
        mergepatch3::apply_merge_patch(&mut out, config);
        Ok(SsaOutcome::Applied(out))
    }

    fn record_update(&self, _: &Gvk, _: Option<&Node>, new: &Node, _: &str) -> Result<Node, Error> {
        Ok(new.clone())
    }
}

fn engines() -> Engines<'static> {
    Engines {
        kinds: &Fake,
        csa: &Fake,
        ssa: &Fake,
    }
}

fn objects(text: &str) -> Vec<Resource> {
    crate::live::read_objects(&SourceFile::new("/t.yaml", text)).unwrap()
}

fn opts() -> DiffOptions {
    DiffOptions {
        mode: Mode::ClientSide,
        field_manager: "kubectl-client-side-apply".into(),
        namespace: "default".into(),
        prune: Prune::Off,
        show_managed_fields: false,
        show_last_applied: false,
        show_secrets: false,
        assume_complete: false,
    }
}

fn run(desired: &str, live: &str, opts: &DiffOptions) -> (Report, Warnings) {
    let mut w = Warnings::default();
    let r = diff(objects(desired), objects(live), opts, engines(), &mut w).unwrap();
    (r, w)
}

fn applied(obj: &str) -> String {
    // A live object as kubectl apply left it: with its own last-applied annotation.
    let node = crate::yaml::parse::parse_one(obj).unwrap();
    let with = with_last_applied(&node);
    yaml_text(&with)
}

#[test]
fn pairs_by_group_kind_namespace_name_not_version() {
    let desired = "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: w, namespace: ns}\nspec: {a: 1}\n";
    let live = applied(
        "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}, spec: {a: 1}}",
    );
    let (r, w) = run(desired, &live, &opts());
    assert_eq!(r.objects.len(), 1);
    // Paired (not a create), compared as if converted to the manifest's version.
    assert_eq!(r.objects[0].action, Action::Update);
    assert!(
        w.messages()[0].contains("as example.com/v1"),
        "{:?}",
        w.messages()
    );
    assert_eq!(
        r.objects[0].paths(),
        [".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"]
    );
}

#[test]
fn names_written_as_numbers_or_booleans_are_their_text() {
    // `ply render` renders `name: 8080` as the name "8080" (as kustomize does), so a review
    // of two renders keys such objects by that text, whether the name is a plain number or
    // kept as written (`Node::Spelled`, as a render leaves it).
    let read = |text: &str| crate::yaml::parse::parse_one(text).unwrap();
    let a = read("kind: ConfigMap\napiVersion: v1\nmetadata: {name: 8080, namespace: true}\n");
    let b = read("kind: ConfigMap\napiVersion: v1\nmetadata: {name: 9090}\n");
    let keys = [Key::of(&a), Key::of(&b)];
    assert_eq!(
        (keys[0].name.as_str(), keys[0].namespace.as_str()),
        ("8080", "true")
    );
    assert_eq!(keys[1].name, "9090");
    let mut rendered = b.clone();
    crate::resource::keep_id_text(&mut rendered);
    assert!(matches!(
        rendered.get_path(&["metadata", "name"]),
        Some(Node::Spelled(_))
    ));
    assert_eq!(Key::of(&rendered), keys[1]);
    assert_eq!(ObjectId::of(&rendered).name, "9090");
}

#[test]
fn default_namespace_and_cluster_scope() {
    let desired = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: prod, namespace: stray}\n";
    let live = format!(
        "{}---\n{}",
        applied(
            "{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: team}, data: {a: b}}"
        ),
        applied("{apiVersion: v1, kind: Namespace, metadata: {name: prod}}")
    );
    let mut o = opts();
    o.namespace = "team".into();
    let (r, w) = run(desired, &live, &o);
    assert!(w.is_empty(), "{:?}", w.messages());
    let actions: Vec<Action> = r.objects.iter().map(|o| o.action).collect();
    assert_eq!(actions, [Action::Unchanged, Action::Unchanged]);
    assert_eq!(r.exit_code(), 0);
    // With the default namespace the ConfigMap is a new object.
    let (r, _) = run(desired, &live, &opts());
    assert_eq!(r.objects[0].action, Action::Create);
    assert_eq!(r.objects[0].id.namespace, "default");
    assert_eq!(r.exit_code(), 1);
}

#[test]
fn a_namespace_the_snapshot_does_not_cover_is_not_compared_unless_it_is_complete() {
    let desired = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n";
    let live =
        applied("{apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: default}}");
    let actions = |r: &Report| r.objects.iter().map(|o| o.action).collect::<Vec<_>>();
    // The snapshot holds objects of `default` only: `shop` is not known either way.
    let (r, _) = run(desired, &live, &opts());
    assert_eq!(actions(&r), [Action::Unknown, Action::Unchanged]);
    // Said to be complete, it holds no `shop/c`: a creation.
    let complete = DiffOptions {
        assume_complete: true,
        ..opts()
    };
    let (r, _) = run(desired, &live, &complete);
    assert_eq!(actions(&r), [Action::Create, Action::Unchanged]);
    // A snapshot without namespaced objects (empty, or cluster-scoped ones only) is a cluster
    // without the objects: every one is created.
    for empty in [
        "",
        "apiVersion: v1\nkind: List\nitems: []\nmetadata: {resourceVersion: \"\"}\n",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n",
    ] {
        let (r, _) = run(desired, empty, &opts());
        assert_eq!(actions(&r), [Action::Create, Action::Create]);
    }
}

#[test]
fn unknown_kinds_take_their_scope_from_the_snapshot() {
    let desired = "apiVersion: example.com/v1\nkind: Cluster\nmetadata: {name: x}\nspec: {a: 2}\n";
    let live =
        applied("{apiVersion: example.com/v1, kind: Cluster, metadata: {name: x}, spec: {a: 1}}");
    let (r, w) = run(desired, &live, &opts());
    assert!(w.is_empty());
    assert_eq!(r.objects[0].action, Action::Update);
    assert_eq!(r.objects[0].paths(), [".spec.a"]);
}

#[test]
fn duplicate_desired_objects_are_an_error() {
    let desired = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n";
    let mut w = Warnings::default();
    let e = diff(objects(desired), vec![], &opts(), engines(), &mut w).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DuplicateId);
}

#[test]
fn noise_is_hidden_and_unchanged_objects_exit_zero() {
    let desired = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n";
    let base = applied(
        "{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}, data: {a: b}}",
    );
    let live = base.replacen(
        "metadata:\n",
        "metadata:\n  uid: 123\n  resourceVersion: \"9\"\n  creationTimestamp: \"2024-01-01T00:00:00Z\"\n  managedFields:\n  - manager: kubectl-client-side-apply\n    operation: Update\n",
        1,
    );
    let (r, _) = run(desired, &live, &opts());
    assert_eq!(r.objects[0].action, Action::Unchanged);
    assert!(!r.objects[0].before.contains("uid"));
    let mut o = opts();
    o.show_managed_fields = true;
    let (r, _) = run(desired, &live, &o);
    assert!(r.objects[0].before.contains("managedFields"));
}

#[test]
fn prune_selects_like_kubectl() {
    let desired = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep, labels: {app: a}}\n";
    let live = [
        applied("{apiVersion: v1, kind: ConfigMap, metadata: {name: keep, namespace: default, labels: {app: a}}}"),
        applied("{apiVersion: v1, kind: ConfigMap, metadata: {name: old, namespace: default, labels: {app: a}}}"),
        applied("{apiVersion: v1, kind: ConfigMap, metadata: {name: other-app, namespace: default, labels: {app: b}}}"),
        applied("{apiVersion: v1, kind: ConfigMap, metadata: {name: other-ns, namespace: elsewhere, labels: {app: a}}}"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: not-applied, namespace: default, labels: {app: a}}\n".to_string(),
        applied("{apiVersion: example.com/v1, kind: Widget, metadata: {name: crd, namespace: default, labels: {app: a}}}"),
    ]
    .join("---\n");
    let (r, _) = run(desired, &live, &opts());
    assert_eq!(r.objects.len(), 1);
    let mut o = opts();
    o.prune = Prune::Selector(Selector::parse("app=a").unwrap());
    let (r, _) = run(desired, &live, &o);
    let deleted: Vec<&str> = r
        .objects
        .iter()
        .filter(|o| o.action == Action::Delete)
        .map(|o| o.id.name.as_str())
        .collect();
    assert_eq!(deleted, ["old"]);
    o.prune = Prune::All;
    let (r, _) = run(desired, &live, &o);
    assert_eq!(r.count(Action::Delete), 2);
}

#[test]
fn hash_suffix_rename_is_one_object() {
    let desired =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg-7k2b5t4mf8}\ndata: {a: new}\n";
    let live = applied(
        "{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg-g9h8d6k2b4, namespace: default}, data: {a: old}}",
    );
    let mut o = opts();
    o.prune = Prune::All;
    let (r, _) = run(desired, &live, &o);
    assert_eq!(r.objects.len(), 1);
    let obj = &r.objects[0];
    assert_eq!(obj.action, Action::Rename);
    assert_eq!(
        obj.renamed_from.as_ref().map(|f| f.name.as_str()),
        Some("cfg-g9h8d6k2b4")
    );
    assert!(obj.paths().contains(&".data.a"));
    assert!(obj.paths().contains(&".metadata.name"));
    assert_eq!(hash_base("web-1234567890"), None);
    assert_eq!(hash_base("web-bcdfghkmt2"), Some("web"));
}

#[test]
fn secrets_are_masked_in_reports() {
    let desired = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2}\ndata: {user: YWRtaW4=}\n";
    let live = applied(
        "{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: default}, data: {user: YWRtaW4=, password: b2xk}}",
    );
    let (r, _) = run(desired, &live, &opts());
    let o = &r.objects[0];
    assert_eq!(o.action, Action::Update);
    assert!(
        !o.after.contains("hunter2") && !o.after.contains("aHVudGVyMg=="),
        "{}",
        o.after
    );
    assert!(o.after.contains("password: '*** (after)'"), "{}", o.after);
    assert!(
        o.before.contains("password: '*** (before)'"),
        "{}",
        o.before
    );
    assert!(o.after.contains("user: '***'"));
    assert!(!o.after.contains("stringData:\n"));
    // The changes hold masked values too (the paths are those of the unmasked objects).
    assert!(o.paths().contains(&".data.password"), "{:?}", o.paths());
    let values = format!("{:?}", o.changes);
    assert!(
        !values.contains("aHVudGVyMg==") && !values.contains("b2xk"),
        "{values}"
    );
    // The prediction itself keeps the values (folded into data).
    let p = o.predicted.as_ref().unwrap();
    assert_eq!(p.str_at(&["data", "password"]), Some("aHVudGVyMg=="));
    let mut shown = opts();
    shown.show_secrets = true;
    let (r, _) = run(desired, &live, &shown);
    assert!(r.objects[0].after.contains("aHVudGVyMg=="));
}

#[test]
fn server_side_conflicts_fail_the_object() {
    let desired =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n";
    let live = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {replicas: 5}\n";
    let mut o = opts();
    o.mode = Mode::ServerSide {
        force_conflicts: false,
    };
    let (r, _) = run(desired, live, &o);
    let obj = &r.objects[0];
    assert_eq!(obj.action, Action::Conflict);
    assert_eq!(obj.conflicts[0].path, ".spec.replicas");
    assert_eq!(obj.conflicts[0].live, Some(Node::Int(5)));
    assert_eq!(obj.conflicts[0].desired, Some(Node::Int(3)));
    assert_eq!(r.exit_code(), 2);
    assert_eq!(
        r.conflict_messages(),
        [
            "apps/v1 Deployment default/web: Apply failed with 1 conflict: conflict with \"hpa\" with subresource \"scale\" using apps/v1: .spec.replicas"
        ]
    );
    o.mode = Mode::ServerSide {
        force_conflicts: true,
    };
    let (r, _) = run(desired, live, &o);
    assert_eq!(r.objects[0].action, Action::Update);
    assert_eq!(r.objects[0].paths(), [".spec.replicas"]);
}

#[test]
fn last_applied_annotation_is_kubectls() {
    let n = crate::yaml::parse::parse_one("{kind: ConfigMap, apiVersion: v1, metadata: {name: a, annotations: {kubectl.kubernetes.io/last-applied-configuration: old}}, data: {x: '<'}}").unwrap();
    let out = with_last_applied(&n);
    assert_eq!(
        out.str_at(&["metadata", "annotations", LAST_APPLIED]),
        Some(
            "{\"apiVersion\":\"v1\",\"data\":{\"x\":\"\\u003c\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"name\":\"a\"}}\n"
        )
    );
}

#[test]
fn missing_last_applied_warns_and_deletes_nothing() {
    let desired =
        "apiVersion: example.com/v1\nkind: W\nmetadata: {name: w, namespace: d}\nspec: {a: 1}\n";
    let live = "apiVersion: example.com/v1\nkind: W\nmetadata: {name: w, namespace: d}\nspec: {a: 1, b: 2}\n";
    let (r, w) = run(desired, live, &opts());
    assert!(
        w.messages()[0].contains("missing the kubectl.kubernetes.io/last-applied-configuration")
    );
    let p = r.objects[0].predicted.as_ref().unwrap();
    assert_eq!(p.get_path(&["spec", "b"]), Some(&Node::Int(2)));
}
