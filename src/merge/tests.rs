//! Unit tests of the merge core: one per directive and per error, the list orders of kubectl
//! and kustomize, patch creation, and property tests (proptest).

use proptest::prelude::*;

use super::walk::same;
use super::{Dialect, MergeErrorKind, SmpOptions, smp, threeway};
use crate::resource::Gvk;
use crate::schema::Schema;
use crate::yaml::parse::parse_one;
use crate::yaml::{Map, Node};

fn y(s: &str) -> Node {
    parse_one(s).expect("test yaml")
}

fn deploy() -> Gvk {
    Gvk::from_api_version("apps/v1", "Deployment")
}

fn pod() -> Gvk {
    Gvk::from_api_version("v1", "Pod")
}

fn patch_with(
    obj: &str,
    patch: &str,
    gvk: &Gvk,
    opts: SmpOptions,
) -> Result<Node, super::MergeError> {
    smp::apply(&y(obj), &y(patch), &Schema::builtin(), gvk, &opts)
}

fn patch(obj: &str, p: &str) -> Node {
    patch_with(obj, p, &pod(), SmpOptions::kubectl()).expect("patch applies")
}

fn patch_err(obj: &str, p: &str) -> super::MergeError {
    patch_with(obj, p, &pod(), SmpOptions::kubectl()).expect_err("patch must fail")
}

fn assert_same(got: &Node, want: &str) {
    let want = y(want);
    // `same` compares maps as sets of keys and lists in order.
    assert!(same(got, &want), "got {got:?}\nwant {want:?}");
}

const POD: &str = "spec:\n  containers:\n  - {name: a, image: a, ports: [{containerPort: 80}]}\n  - {name: b, image: b}\n";

#[test]
fn maps_merge_and_null_deletes() {
    let got = patch(
        "metadata: {labels: {a: '1', b: '2'}}",
        "metadata: {labels: {b: null, c: '3'}}",
    );
    assert_same(&got, "metadata: {labels: {a: '1', c: '3'}}");
}

#[test]
fn merging_list_merges_by_key() {
    let got = patch(POD, "spec: {containers: [{name: b, image: b2}]}");
    assert_same(
        &got,
        "spec: {containers: [{name: a, image: a, ports: [{containerPort: 80}]}, {name: b, image: b2}]}",
    );
}

#[test]
fn atomic_list_is_replaced() {
    let got = patch(
        "spec: {containers: [{name: a, args: [x, y]}]}",
        "spec: {containers: [{name: a, args: [z]}]}",
    );
    assert_same(&got, "spec: {containers: [{name: a, args: [z]}]}");
}

#[test]
fn patch_replace_on_a_map() {
    let got = patch(
        "metadata: {labels: {a: '1', b: '2'}}",
        "metadata: {labels: {$patch: replace, c: '3'}}",
    );
    assert_same(&got, "metadata: {labels: {c: '3'}}");
}

#[test]
fn patch_delete_on_a_map() {
    let got = patch(
        "metadata: {labels: {a: '1'}}",
        "metadata: {labels: {$patch: delete}}",
    );
    assert_same(&got, "metadata: {labels: {}}");
}

#[test]
fn patch_delete_on_a_list_element() {
    let got = patch(POD, "spec: {containers: [{name: a, $patch: delete}]}");
    assert_same(&got, "spec: {containers: [{name: b, image: b}]}");
}

#[test]
fn patch_replace_on_a_list() {
    let got = patch(
        POD,
        "spec: {containers: [{name: c, image: c}, {$patch: replace}]}",
    );
    assert_same(&got, "spec: {containers: [{name: c, image: c}]}");
}

#[test]
fn patch_merge_on_a_map_is_an_error() {
    // kubectl: "unknown patch type: merge in map"
    let e = patch_err(
        "metadata: {labels: {a: '1'}}",
        "metadata: {labels: {$patch: merge}}",
    );
    assert_eq!(e.kind, MergeErrorKind::BadDirective);
    assert_eq!(e.path, "metadata.labels");
    assert!(
        e.message.contains("unknown patch type: merge"),
        "{}",
        e.message
    );
}

#[test]
fn patch_merge_in_a_list_is_an_error() {
    let e = patch_err(POD, "spec: {containers: [{name: a, $patch: merge}]}");
    assert_eq!(e.kind, MergeErrorKind::BadDirective);
    assert_eq!(e.path, "spec.containers");
    assert!(e.message.contains("merging lists cannot yet be specified"));
}

#[test]
fn unknown_patch_value_is_an_error() {
    let e = patch_err(POD, "spec: {containers: [{name: a, $patch: bogus}]}");
    assert_eq!(e.kind, MergeErrorKind::BadDirective);
}

#[test]
fn missing_merge_key_is_an_error_naming_the_path() {
    let e = patch_err(
        POD,
        "spec: {containers: [{name: a, ports: [{name: http}]}]}",
    );
    assert_eq!(e.kind, MergeErrorKind::MissingMergeKey);
    assert_eq!(e.path, "spec.containers[name=a].ports");
    assert!(
        e.message
            .contains("does not contain declared merge key: containerPort")
    );
}

#[test]
fn set_element_order_reorders() {
    let got = patch(
        POD,
        "spec: {$setElementOrder/containers: [{name: b}, {name: a}]}",
    );
    assert_same(
        &got,
        "spec: {containers: [{name: b, image: b}, {name: a, image: a, ports: [{containerPort: 80}]}]}",
    );
}

#[test]
fn set_element_order_sees_the_live_list_as_apimachinery_does() {
    // apimachinery orders by the live list after `mergeSlice` has deleted and appended in
    // place in its backing array: live [a, d] minus a plus b reads as [d, b], so d stays
    // first (apimachinery's "add map and delete map from merging list" case).
    let got = patch(
        "spec: {containers: [{name: a, image: x}, {name: d, image: y}]}",
        "spec: {$setElementOrder/containers: [{name: b}, {name: c}], containers: [{name: b}, {name: c}, {name: a, $patch: delete}]}",
    );
    assert_same(
        &got,
        "spec: {containers: [{name: d, image: y}, {name: b}, {name: c}]}",
    );
}

#[test]
fn set_element_order_mismatch_is_an_error() {
    let e = patch_err(
        POD,
        "spec: {$setElementOrder/containers: [{name: a}, {name: b}], containers: [{name: b, image: x}, {name: a, image: y}]}",
    );
    assert_eq!(e.kind, MergeErrorKind::OrderMismatch);
    assert!(e.message.contains("doesn't match $setElementOrder"));
}

#[test]
fn set_element_order_must_be_a_list() {
    let e = patch_err(POD, "spec: {$setElementOrder/containers: {name: a}}");
    assert_eq!(e.kind, MergeErrorKind::TypeMismatch);
}

#[test]
fn retain_keys_clears_other_fields() {
    let got = patch_with(
        "spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}",
        "spec: {strategy: {$retainKeys: [type], type: Recreate}}",
        &deploy(),
        SmpOptions::kubectl(),
    )
    .expect("applies");
    assert_same(&got, "spec: {strategy: {type: Recreate}}");
}

#[test]
fn retain_keys_must_list_patched_fields() {
    let e = patch_with(
        "spec: {strategy: {type: RollingUpdate}}",
        "spec: {strategy: {$retainKeys: [rollingUpdate], type: Recreate}}",
        &deploy(),
        SmpOptions::kubectl(),
    )
    .expect_err("invalid");
    assert_eq!(e.kind, MergeErrorKind::RetainKeys);
    assert_eq!(e.path, "spec.strategy");
}

#[test]
fn delete_from_primitive_list() {
    let got = patch(
        "metadata: {finalizers: [a, b, c]}",
        "metadata: {$deleteFromPrimitiveList/finalizers: [b]}",
    );
    assert_same(&got, "metadata: {finalizers: [a, c]}");
}

#[test]
fn primitive_merge_list_is_an_ordered_set() {
    let got = patch(
        "metadata: {finalizers: [a, b]}",
        "metadata: {finalizers: [b, c]}",
    );
    // kubectl: new elements go before the live elements they precede
    assert_same(&got, "metadata: {finalizers: [a, b, c]}");
    let got = patch(
        "metadata: {finalizers: [a, b]}",
        "metadata: {finalizers: [c]}",
    );
    assert_same(&got, "metadata: {finalizers: [c, a, b]}");
}

#[test]
fn mixed_element_types_are_an_error() {
    let e = patch_err("metadata: {finalizers: [a]}", "metadata: {finalizers: [1]}");
    assert_eq!(e.kind, MergeErrorKind::TypeMismatch);
    assert_eq!(e.path, "metadata.finalizers");
}

#[test]
fn new_fields_lose_nulls_and_patch_directives() {
    let got = patch(
        "spec: {}",
        "spec: {nodeSelector: {a: '1', b: null}, affinity: {$patch: replace, x: 1}}",
    );
    assert_same(&got, "spec: {nodeSelector: {a: '1'}}");
}

#[test]
fn kustomize_order_puts_patch_elements_first() {
    let obj = "spec: {containers: [{name: a}, {name: b}, {name: c}]}";
    let p = "spec: {containers: [{name: d}, {name: b, image: x}]}";
    let kubectl = patch_with(obj, p, &pod(), SmpOptions::kubectl()).expect("applies");
    assert_same(
        &kubectl,
        "spec: {containers: [{name: d}, {name: a}, {name: b, image: x}, {name: c}]}",
    );
    let kustomize = patch_with(obj, p, &pod(), SmpOptions::kustomize()).expect("applies");
    assert_same(
        &kustomize,
        "spec: {containers: [{name: d}, {name: b, image: x}, {name: a}, {name: c}]}",
    );
    assert_eq!(SmpOptions::kustomize().dialect, Dialect::Kustomize);
}

fn kz(obj: &str, p: &str) -> Result<Node, super::MergeError> {
    patch_with(obj, p, &deploy(), SmpOptions::kustomize())
}

#[test]
fn kustomize_keeps_kubectl_only_directives_as_plain_keys() {
    let got = kz(
        "metadata: {finalizers: [a, b]}",
        "metadata: {$deleteFromPrimitiveList/finalizers: [b], $setElementOrder/finalizers: [b, a]}",
    )
    .expect("applies");
    assert_same(
        &got,
        "metadata: {finalizers: [a, b], $deleteFromPrimitiveList/finalizers: [b], $setElementOrder/finalizers: [b, a]}",
    );
    let got = kz(
        "spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}",
        "spec: {strategy: {$retainKeys: [type], type: Recreate}}",
    )
    .expect("applies");
    assert_same(
        &got,
        "spec: {strategy: {$retainKeys: [type], type: Recreate, rollingUpdate: {maxSurge: 1}}}",
    );
}

#[test]
fn kustomize_map_directives() {
    // `$patch: delete` removes the field; `$patch: merge` merges; replace on a new field keeps it.
    let got = kz(
        "metadata: {labels: {a: '1'}}",
        "metadata: {labels: {$patch: delete}}",
    )
    .expect("applies");
    assert_same(&got, "metadata: {}");
    let got = kz(
        "metadata: {labels: {a: '1'}}",
        "metadata: {labels: {$patch: merge, b: '2'}}",
    )
    .expect("applies");
    assert_same(&got, "metadata: {labels: {a: '1', b: '2'}}");
    let got = kz(
        "spec: {}",
        "spec: {strategy: {$patch: replace, type: Recreate}}",
    )
    .expect("applies");
    assert_same(&got, "spec: {strategy: {type: Recreate}}");
    let e = kz(
        "metadata: {labels: {a: '1'}}",
        "metadata: {labels: {$patch: bogus}}",
    )
    .expect_err("bad");
    assert_eq!(e.kind, MergeErrorKind::BadDirective);
}

#[test]
fn kustomize_matches_service_ports_on_port_and_protocol() {
    let svc = Gvk::from_api_version("v1", "Service");
    let kz = |o: &str, p: &str| patch_with(o, p, &svc, SmpOptions::kustomize()).expect("applies");
    // Same port, another protocol: a new element, first.
    let got = kz(
        "spec: {ports: [{port: 53, protocol: TCP}]}",
        "spec: {ports: [{port: 53, protocol: UDP, name: u}]}",
    );
    assert_same(
        &got,
        "spec: {ports: [{port: 53, protocol: UDP, name: u}, {port: 53, protocol: TCP}]}",
    );
    // Keys that agree only where both are set: kustomize keeps the object's element.
    let got = kz(
        "spec: {ports: [{port: 80, protocol: TCP, targetPort: 1}]}",
        "spec: {ports: [{port: 80, targetPort: 2}]}",
    );
    assert_same(
        &got,
        "spec: {ports: [{port: 80, protocol: TCP, targetPort: 1}]}",
    );
    // Both keys: merged in place.
    let got = kz(
        "spec: {ports: [{port: 80, protocol: TCP, name: a}, {port: 81, protocol: TCP, name: b}]}",
        "spec: {ports: [{port: 81, protocol: TCP, name: bb}, {port: 82, protocol: TCP, name: c}]}",
    );
    assert_same(
        &got,
        "spec: {ports: [{port: 82, protocol: TCP, name: c}, {port: 80, protocol: TCP, name: a}, {port: 81, protocol: TCP, name: bb}]}",
    );
    // kubectl merges on the merge key (port) alone.
    let got = patch_with(
        "spec: {ports: [{port: 53, protocol: TCP}]}",
        "spec: {ports: [{port: 53, protocol: UDP}]}",
        &svc,
        SmpOptions::kubectl(),
    )
    .expect("applies");
    assert_same(&got, "spec: {ports: [{port: 53, protocol: UDP}]}");
}

#[test]
fn kustomize_refuses_a_change_of_node_kind() {
    let e = kz("metadata: {labels: {a: '1'}}", "metadata: {labels: [a]}").expect_err("kind change");
    assert_eq!(e.kind, MergeErrorKind::TypeMismatch);
    assert_eq!(e.path, "metadata.labels");
    // kubectl replaces instead
    let got = patch_with(
        "metadata: {labels: {a: '1'}}",
        "metadata: {labels: [a]}",
        &deploy(),
        SmpOptions::kubectl(),
    )
    .expect("applies");
    assert_same(&got, "metadata: {labels: [a]}");
}

#[test]
fn unknown_kinds_merge_maps_and_replace_lists() {
    let gvk = Gvk::from_api_version("example.com/v1", "Thing");
    let got = patch_with(
        "spec: {a: {x: 1}, items: [{name: a}]}",
        "spec: {a: {y: 2}, items: [{name: b}]}",
        &gvk,
        SmpOptions::kubectl(),
    )
    .expect("applies");
    assert_same(&got, "spec: {a: {x: 1, y: 2}, items: [{name: b}]}");
}

#[test]
fn root_delete_is_visible_to_callers() {
    assert!(smp::deletes_object(&y(
        "{$patch: delete, metadata: {name: x}}"
    )));
    assert!(!smp::deletes_object(&y("{metadata: {name: x}}")));
    let got = kz("metadata: {name: x}", "{$patch: delete}").expect("applies");
    assert_same(&got, "{}");
}

#[test]
fn object_and_patch_must_be_maps() {
    let e = smp::apply(
        &y("[1]"),
        &y("{}"),
        &Schema::builtin(),
        &pod(),
        &SmpOptions::kubectl(),
    )
    .expect_err("not a map");
    assert_eq!(e.kind, MergeErrorKind::Invalid);
    let e = smp::apply(
        &y("{}"),
        &y("[1]"),
        &Schema::builtin(),
        &pod(),
        &SmpOptions::kubectl(),
    )
    .expect_err("not a map");
    assert_eq!(e.kind, MergeErrorKind::Invalid);
}

#[test]
fn two_way_patch_uses_directives() {
    let s = Schema::builtin();
    let from = y("metadata: {finalizers: [a, b]}\nspec: {containers: [{name: a}, {name: b}]}");
    let to = y("metadata: {finalizers: [b]}\nspec: {containers: [{name: b}, {name: c}]}");
    let p = threeway::create_two_way(&from, &to, &s, &pod()).expect("creates");
    assert_same(
        &p,
        "metadata: {$deleteFromPrimitiveList/finalizers: [a], $setElementOrder/finalizers: [b]}\nspec: {$setElementOrder/containers: [{name: b}, {name: c}], containers: [{name: c}, {$patch: delete, name: a}]}",
    );
    let applied = smp::apply(&from, &p, &s, &pod(), &SmpOptions::kubectl()).expect("applies");
    assert!(same(&applied, &to));
}

#[test]
fn three_way_keeps_live_only_fields_and_deletes_dropped_ones() {
    let s = Schema::builtin();
    let last = y("metadata: {labels: {a: '1', b: '2'}}");
    let desired = y("metadata: {labels: {a: '1', c: '3'}}");
    let live = y("metadata: {labels: {a: '9', b: '2', z: live}}");
    let r = threeway::apply_preview(&last, &desired, &live, &s, &pod()).expect("merges");
    assert_same(&r.patch, "metadata: {labels: {a: '1', b: null, c: '3'}}");
    assert_same(&r.result, "metadata: {labels: {a: '1', c: '3', z: live}}");
}

#[test]
fn three_way_conflicts_without_overwrite() {
    let s = Schema::builtin();
    let last = y("metadata: {labels: {a: '1'}}");
    let desired = y("metadata: {labels: {a: '2'}}");
    let live = y("metadata: {labels: {a: '3'}}");
    let e = threeway::create(&last, &desired, &live, &s, &pod(), false).expect_err("conflict");
    assert_eq!(e.kind, MergeErrorKind::Conflict);
    assert_eq!(e.path, "metadata.labels.a");
    assert!(threeway::create(&last, &desired, &live, &s, &pod(), true).is_ok());
}

#[test]
fn creation_refuses_unknown_fields_of_typed_objects() {
    let s = Schema::builtin();
    let e = threeway::create_two_way(
        &y("spec: {bogus: {a: 1}}"),
        &y("spec: {bogus: {a: 2}}"),
        &s,
        &pod(),
    )
    .expect_err("unknown field");
    assert_eq!(e.kind, MergeErrorKind::UnknownField);
    assert_eq!(e.path, "spec");
}

// ---- property tests ------------------------------------------------------------------------

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "d", "e"]).prop_map(str::to_string)
}

fn scalar() -> impl Strategy<Value = Node> {
    prop_oneof![
        name().prop_map(Node::Str),
        (0i128..5).prop_map(Node::Int),
        any::<bool>().prop_map(Node::Bool),
    ]
}

fn unique<T: Clone, K: PartialEq>(v: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in v {
        if !out.iter().any(|o| key(o) == key(&x)) {
            out.push(x);
        }
    }
    out
}

/// Pod-shaped objects: a merging list of maps (containers, by name, with merging ports), a
/// primitive merging list (finalizers), an atomic list (args), and plain maps (labels).
fn pod_like(nulls: bool) -> impl Strategy<Value = Node> {
    let value = move || {
        if nulls {
            prop_oneof![4 => scalar(), 1 => Just(Node::Null)].boxed()
        } else {
            scalar().boxed()
        }
    };
    let labels = prop::collection::vec((name(), value()), 0..4)
        .prop_map(|kv| Node::Map(kv.into_iter().collect::<Map>()));
    let finalizers = prop::collection::vec(name(), 0..4)
        .prop_map(|v| Node::Seq(unique(v, Clone::clone).into_iter().map(Node::Str).collect()));
    let port = (0i128..4, value()).prop_map(|(p, v)| {
        let mut m = Map::default();
        m.insert("containerPort".into(), Node::Int(p));
        m.insert("protocol".into(), v);
        Node::Map(m)
    });
    let container = (
        name(),
        value(),
        prop::collection::vec(port, 0..3),
        prop::collection::vec(name(), 0..3),
    )
        .prop_map(|(n, image, ports, args)| {
            let mut m = Map::default();
            m.insert("name".into(), Node::Str(n));
            m.insert("image".into(), image);
            let ports = unique(ports, |p| format!("{:?}", p.get("containerPort")));
            if !ports.is_empty() {
                m.insert("ports".into(), Node::Seq(ports));
            }
            if !args.is_empty() {
                m.insert(
                    "args".into(),
                    Node::Seq(args.into_iter().map(Node::Str).collect()),
                );
            }
            Node::Map(m)
        });
    let containers = prop::collection::vec(container, 0..4)
        .prop_map(|v| Node::Seq(unique(v, |c| format!("{:?}", c.get("name")))));
    (
        prop::option::of(labels),
        prop::option::of(finalizers),
        prop::option::of(containers),
    )
        .prop_map(|(labels, finalizers, containers)| {
            let mut meta = Map::default();
            if let Some(l) = labels {
                meta.insert("labels".into(), l);
            }
            if let Some(f) = finalizers {
                meta.insert("finalizers".into(), f);
            }
            let mut root = Map::default();
            root.insert("metadata".into(), Node::Map(meta));
            if let Some(c) = containers {
                let mut spec = Map::default();
                spec.insert("containers".into(), c);
                root.insert("spec".into(), Node::Map(spec));
            }
            Node::Map(root)
        })
}

/// Same as `same`, with list order significant (it already is) — a named alias for clarity.
fn equal(a: &Node, b: &Node) -> bool {
    same(a, b)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn empty_patch_changes_nothing(x in pod_like(true)) {
        let s = Schema::builtin();
        for opts in [SmpOptions::kubectl(), SmpOptions::kustomize()] {
            let out = smp::apply(&x, &Node::empty_map(), &s, &pod(), &opts).expect("applies");
            prop_assert!(equal(&out, &x));
        }
    }

    // Directive-free: no `$` keys and no nulls (a null in an element a patch appends is kept by
    // kubectl and deletes the field on the second application).
    #[test]
    fn directive_free_patch_is_idempotent(x in pod_like(true), p in pod_like(false)) {
        let s = Schema::builtin();
        for opts in [SmpOptions::kubectl(), SmpOptions::kustomize()] {
            if let Ok(once) = smp::apply(&x, &p, &s, &pod(), &opts) {
                let twice = smp::apply(&once, &p, &s, &pod(), &opts).expect("applies again");
                prop_assert!(equal(&once, &twice), "once {:?}\ntwice {:?}", once, twice);
            }
        }
    }

    #[test]
    fn two_way_patch_turns_x_into_y(x in pod_like(false), y in pod_like(false)) {
        let s = Schema::builtin();
        let p = threeway::create_two_way(&x, &y, &s, &pod()).expect("creates");
        let out = smp::apply(&x, &p, &s, &pod(), &SmpOptions::kubectl()).expect("applies");
        prop_assert!(equal(&out, &y), "patch {:?}\ngot {:?}\nwant {:?}", p, out, y);
    }

    #[test]
    fn three_way_patch_of_x_x_x_is_empty(x in pod_like(true)) {
        let s = Schema::builtin();
        let p = threeway::create(&x, &x, &x, &s, &pod(), false).expect("creates");
        prop_assert_eq!(p, Node::empty_map());
    }
}

/// kyaml's `FieldSetter` gives a patch's scalar the style of the value it replaces: over a
/// quoted or block string a number or boolean becomes its text as a string; over a plain or
/// tagged value, and in a list, the patch's type stays; kubectl's dialect keeps every type.
#[test]
fn kustomize_scalar_takes_the_replaced_style() {
    let obj = "spec:\n  d: \"8080\"\n  s: '7'\n  l: |\n    x\n  e: \"\"\n  p: plain\n  t: !!str \"q\"\n  n: 5\n  list: [\"1\"]\n";
    let p = "spec: {d: 9090, s: 0x10, l: true, e: 1e3, p: 6, t: 7, n: 8, list: [2], new: 3}";
    let got = kz(obj, p).expect("applies");
    let want = y(
        "spec: {d: \"9090\", s: \"0x10\", l: \"true\", e: \"1e3\", p: 6, t: 7, n: 8, list: [2], new: 3}",
    );
    assert_eq!(got, want);
    // The style stays with the field: a quoted string over a plain value leaves it plain, a
    // plain string over a quoted one leaves it quoted; a field added quoted is quoted.
    let once = kz("spec: {a: x, b: \"y\"}", "spec: {a: \"s\", b: t, c: \"u\"}").expect("applies");
    let spec = once.get("spec").and_then(Node::as_map).expect("a map");
    assert!(!spec.styled("a") && spec.styled("b") && spec.styled("c"));
    let twice = smp::apply(
        &once,
        &y("spec: {a: 1, b: 2, c: 3}"),
        &Schema::builtin(),
        &deploy(),
        &SmpOptions::kustomize(),
    )
    .expect("applies");
    assert_eq!(twice, y("spec: {a: 1, b: \"2\", c: \"3\"}"));
    let kubectl = patch_with(obj, p, &deploy(), SmpOptions::kubectl()).expect("applies");
    assert_eq!(kubectl.get_path(&["spec", "d"]), Some(&Node::Int(9090)));
}

/// A walk quotes a plain YAML 1.1 boolean word (`FieldSetter` asks `IsYaml1_1NonString`):
/// fields the patch does not name, nested ones, and fields it adds; not one it replaces.
#[test]
fn kustomize_walk_quotes_yaml11_boolean_words() {
    let once = kz(
        "spec: {a: yes, m: {b: on}, c: word, r: no}",
        "spec: {x: 1, n: off, r: n}",
    )
    .expect("applies");
    let spec = once.get("spec").and_then(Node::as_map).expect("a map");
    let m = spec.get("m").and_then(Node::as_map).expect("a map");
    assert!(spec.styled("a") && m.styled("b") && spec.styled("n"));
    assert!(!spec.styled("c") && !spec.styled("r") && !spec.styled("x"));
}
