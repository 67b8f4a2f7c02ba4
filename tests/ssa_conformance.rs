//! Runs the server-side-apply conformance corpus of `../shared/conformance/ssa/` (from
//! structured-merge-diff's own table tests) through `ply::merge::ssa`: `fieldsv1.json`,
//! `typed-ops.json` and `cases.json`. Ignored by default (the corpus lives outside the
//! repository); CI runs `cargo test --test ssa_conformance -- --ignored`, and then a missing
//! corpus is a failure, never a skip. Each file prints `N passed, M failed` and fails when fewer
//! cases pass than its floor in `tests/ssa-floor.txt`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use ply::testing::ssa::{ManagedFields, Updater, UpdaterError};
use ply::testing::ssa::{PathElementError, parse_path_element, serialize_path_element};
use ply::testing::ssa::{Schema, Set, TypeRef, Typed, path_string, value};
use ply::yaml::Node;

fn data_dir() -> PathBuf {
    match std::env::var_os("PLY_SSA_CONFORMANCE") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/ssa"),
    }
}

fn load(name: &str) -> Value {
    let path = data_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("conformance data {} is missing: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn floor(file: &str) -> usize {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ssa-floor.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once(char::is_whitespace))
        .find(|(k, _)| *k == file)
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(usize::MAX)
}

fn node(v: &Value) -> Node {
    Node::deserialize(v).expect("JSON value converts to a Node")
}

fn fields(v: &Value) -> Set {
    Set::from_fields_node(&node(v)).expect("expected field set parses")
}

struct Tally {
    file: &'static str,
    total: usize,
    failures: Vec<String>,
}

impl Tally {
    fn new(file: &'static str) -> Tally {
        Tally {
            file,
            total: 0,
            failures: Vec::new(),
        }
    }

    fn record(&mut self, name: String, result: Result<(), String>) {
        self.total += 1;
        if let Err(e) = result {
            self.failures.push(format!("{name}: {e}"));
        }
    }

    fn finish(self) {
        let failed = self.failures.len();
        let passed = self.total - failed;
        for f in self.failures.iter().take(60) {
            println!("FAIL {f}");
        }
        println!("{}: {passed} passed, {failed} failed", self.file);
        assert!(self.total > 0, "{}: no cases found", self.file);
        let floor = floor(self.file).min(self.total);
        assert!(
            passed >= floor,
            "{}: {passed} passed, below the floor of {floor}",
            self.file
        );
    }
}

#[test]
#[ignore = "needs ../shared/conformance/ssa; run with --ignored"]
fn fieldsv1() {
    let data = load("fieldsv1.json");
    let mut t = Tally::new("fieldsv1");
    for (i, c) in data["cases"].as_array().expect("cases").iter().enumerate() {
        let input = c["input"].as_str().unwrap_or_default();
        let name = format!(
            "{}#{i} {}",
            c["group"].as_str().unwrap_or(""),
            c["name"].as_str().unwrap_or(input)
        );
        let expect = &c["expect"];
        let result = if c["kind"] == "fieldSet" {
            check_set(input, expect)
        } else {
            check_pe(input, expect)
        };
        t.record(name, result);
    }
    t.finish();
}

fn check_set(input: &str, expect: &Value) -> Result<(), String> {
    let parsed = Set::from_fields_v1(input);
    if expect["error"] == true {
        return match parsed {
            Err(_) => Ok(()),
            Ok(s) => Err(format!("parsed as {}, expected an error", s.to_fields_v1())),
        };
    }
    let s = parsed.map_err(|e| format!("unexpected error: {e}"))?;
    let canonical = s.to_fields_v1();
    if canonical != expect["canonical"].as_str().unwrap_or_default() {
        return Err(format!("canonical {canonical}"));
    }
    let want: Vec<&str> = expect["memberPaths"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let got: Vec<String> = s.paths().iter().map(|p| path_string(p)).collect();
    if got != want {
        return Err(format!("member paths {got:?}"));
    }
    Ok(())
}

fn check_pe(input: &str, expect: &Value) -> Result<(), String> {
    let parsed = parse_path_element(input);
    if expect["error"] == true {
        return match parsed {
            Err(PathElementError::Invalid(_)) => Ok(()),
            other => Err(format!("got {other:?}, expected an error")),
        };
    }
    if expect["unknownType"] == true {
        return match parsed {
            Err(PathElementError::UnknownType) => Ok(()),
            other => Err(format!("got {other:?}, expected an unknown type")),
        };
    }
    let pe = parsed.map_err(|e| format!("unexpected error: {e:?}"))?;
    let canonical = serialize_path_element(&pe);
    if canonical != expect["canonical"].as_str().unwrap_or_default() {
        return Err(format!("canonical {canonical}"));
    }
    let s = pe.to_string();
    if s != expect["pathString"].as_str().unwrap_or_default() {
        return Err(format!("path string {s}"));
    }
    Ok(())
}

fn schema_of(yaml: &str) -> Schema {
    let n = ply::testing::parse_one(yaml).expect("schema YAML parses");
    Schema::from_node(&n).expect("schema reads")
}

#[test]
#[ignore = "needs ../shared/conformance/ssa; run with --ignored"]
fn typed_ops() {
    let data = load("typed-ops.json");
    let mut t = Tally::new("typed-ops");
    for (group, entries) in data["groups"].as_object().expect("groups") {
        for e in entries.as_array().expect("group entries") {
            let schema = schema_of(e["schemaYaml"].as_str().unwrap_or_default());
            let root = TypeRef::named(e["rootType"].as_str().unwrap_or_default());
            let typed = Typed::new(&schema, &root);
            for (i, c) in e["cases"].as_array().expect("cases").iter().enumerate() {
                let name = format!("{group}/{}#{i}", e["name"].as_str().unwrap_or(""));
                let r = match group.as_str() {
                    "toFieldSet" => check_to_field_set(&typed, c),
                    "merge" => check_merge(&typed, c),
                    "compare" => check_compare(&typed, c),
                    "removeExtract" => check_remove_extract(&typed, c),
                    other => Err(format!("unknown group {other}")),
                };
                t.record(name, r);
            }
        }
    }
    t.finish();
}

fn check_to_field_set(t: &Typed<'_>, c: &Value) -> Result<(), String> {
    let got = t.to_field_set(&node(&c["object"]))?;
    let want = fields(&c["fieldSet"]);
    if got != want {
        return Err(format!(
            "got {}, want {}",
            got.to_fields_v1(),
            want.to_fields_v1()
        ));
    }
    Ok(())
}

fn check_merge(t: &Typed<'_>, c: &Value) -> Result<(), String> {
    let got = t.merge(&node(&c["lhs"]), &node(&c["rhs"]))?;
    let want = node(&c["out"]);
    if !deep_equal(&got, &want) {
        return Err(format!("got {got:?}, want {want:?}"));
    }
    Ok(())
}

fn check_compare(t: &Typed<'_>, c: &Value) -> Result<(), String> {
    let (l, r) = (node(&c["lhs"]), node(&c["rhs"]));
    let (added, removed, modified) = (
        fields(&c["added"]),
        fields(&c["removed"]),
        fields(&c["modified"]),
    );
    let got = t.compare(&l, &r)?;
    let show = |s: &Set| s.to_fields_v1();
    if got.added != added || got.removed != removed || got.modified != modified {
        return Err(format!(
            "added {} removed {} modified {}",
            show(&got.added),
            show(&got.removed),
            show(&got.modified)
        ));
    }
    let back = t.compare(&r, &l)?;
    if back.added != removed || back.removed != added || back.modified != modified {
        return Err(format!(
            "reverse: added {} removed {} modified {}",
            show(&back.added),
            show(&back.removed),
            show(&back.modified)
        ));
    }
    Ok(())
}

fn check_remove_extract(t: &Typed<'_>, c: &Value) -> Result<(), String> {
    let (obj, set) = (node(&c["object"]), fields(&c["set"]));
    if let Some(want) = c.get("removeOutput") {
        let got = t.remove_items(&obj, &set);
        if !deep_equal(&got, &node(want)) {
            return Err(format!("remove: got {got:?}"));
        }
    }
    if let Some(want) = c.get("extractOutput") {
        let got = t.extract_items(&obj, &set);
        if !deep_equal(&got, &node(want)) {
            return Err(format!("extract: got {got:?}"));
        }
    }
    Ok(())
}

/// Numbers compare numerically; everything else exactly (null vs absent, `[]` vs `{}`).
fn deep_equal(a: &Node, b: &Node) -> bool {
    value::equals(a, b)
}

struct State {
    live: Option<Node>,
    managers: ManagedFields,
}

#[test]
#[ignore = "needs ../shared/conformance/ssa; run with --ignored"]
fn cases() {
    let data = load("cases.json");
    let schemas: BTreeMap<String, Schema> = data["schemas"]
        .as_object()
        .expect("schemas")
        .iter()
        .map(|(k, v)| (k.clone(), schema_of(v["yaml"].as_str().unwrap_or_default())))
        .collect();
    let mut t = Tally::new("cases");
    for c in data["cases"].as_array().expect("cases") {
        let name = c["id"].as_str().unwrap_or("?").to_string();
        t.record(name, run_case(c, &schemas));
    }
    t.finish();
}

fn managers_equal(got: &ManagedFields, want: &Value) -> Result<(), String> {
    let want = want.as_object().ok_or("managedFields is not an object")?;
    let show = |m: &ManagedFields| {
        m.iter()
            .map(|(k, v)| {
                format!(
                    "{k}({}, {}): {}",
                    if v.applied { "Apply" } else { "Update" },
                    v.api_version,
                    v.set.to_fields_v1()
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut ok = got.len() == want.len();
    for (m, w) in want {
        let Some(g) = got.get(m) else {
            ok = false;
            continue;
        };
        let applied = w["operation"] == "Apply";
        if g.applied != applied
            || g.api_version != w["apiVersion"].as_str().unwrap_or_default()
            || g.set != fields(&w["fields"])
        {
            ok = false;
        }
    }
    if ok {
        Ok(())
    } else {
        let w: Vec<String> = want
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}({}, {}): {}",
                    v["operation"].as_str().unwrap_or(""),
                    v["apiVersion"].as_str().unwrap_or(""),
                    fields(&v["fields"]).to_fields_v1()
                )
            })
            .collect();
        Err(format!(
            "managers: got [{}], want [{}]",
            show(got),
            w.join("; ")
        ))
    }
}

fn run_case(c: &Value, schemas: &BTreeMap<String, Schema>) -> Result<(), String> {
    let mut schema = schemas
        .get(c["schema"].as_str().unwrap_or_default())
        .ok_or("unknown schema")?;
    let types: BTreeMap<String, TypeRef> = c["typeByVersion"]
        .as_object()
        .ok_or("typeByVersion")?
        .iter()
        .map(|(k, v)| (k.clone(), TypeRef::named(v.as_str().unwrap_or_default())))
        .collect();
    let ignored: Option<BTreeMap<String, Set>> = c["options"]["ignoredFields"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), fields(v))).collect());
    let mut st = State {
        live: None,
        managers: ManagedFields::new(),
    };
    let mut live_type: Option<TypeRef> = None;
    for (i, step) in c["steps"].as_array().ok_or("steps")?.iter().enumerate() {
        let op = step["op"].as_str().unwrap_or_default();
        if op == "changeSchema" {
            schema = schemas
                .get(step["schema"].as_str().unwrap_or_default())
                .ok_or("unknown schema")?;
            continue;
        }
        let version = step["apiVersion"].as_str().unwrap_or_default();
        let manager = step["manager"].as_str().unwrap_or_default();
        let tr = types.get(version).ok_or("unknown version")?.clone();
        // The live object keeps the type it was created with (smd's test converter is the
        // identity); every version maps to one type in this corpus anyway.
        let root = live_type.get_or_insert(tr).clone();
        let mut up = Updater::new(schema, &root);
        up.ignored = ignored.as_ref();
        let typed = Typed::new(schema, &root);
        let object = node(&step["object"]);
        let outcome = run_step(op, &typed, &up, &mut st, &object, version, manager);
        let step_name = format!("step {i} ({op} by {manager})");
        match (
            outcome,
            step.get("expectConflicts"),
            step.get("expectError"),
        ) {
            (Err(StepError::Failed(got)), _, Some(want)) => {
                let want = want.as_str().unwrap_or_default();
                return if got == want {
                    Ok(())
                } else {
                    Err(format!("{step_name}: error {got:?}, want {want:?}"))
                };
            }
            (Err(StepError::Failed(e)), _, None) => return Err(format!("{step_name}: {e}")),
            (Ok(()), _, Some(e)) => {
                return Err(format!("{step_name}: succeeded, expected error {e}"));
            }
            (Err(StepError::Conflicts(got)), _, Some(e)) => {
                return Err(format!(
                    "{step_name}: conflicts {got:?}, expected error {e}"
                ));
            }
            (Err(StepError::Conflicts(got)), Some(want), None) => {
                compare_conflicts(&got, want).map_err(|e| format!("{step_name}: {e}"))?
            }
            (Err(StepError::Conflicts(got)), None, None) => {
                return Err(format!("{step_name}: unexpected conflicts {got:?}"));
            }
            (Ok(()), Some(want), None) => {
                compare_conflicts(&[], want).map_err(|e| format!("{step_name}: {e}"))?
            }
            (Ok(()), None, None) => {}
        }
        if let Some(after) = step.get("after") {
            check_state(&st, after).map_err(|e| format!("after {step_name}: {e}"))?;
        }
    }
    let expect = &c["expect"];
    if expect["error"] == true {
        return Err("every step succeeded, expected an error".into());
    }
    check_state(&st, expect)
}

fn check_state(st: &State, expect: &Value) -> Result<(), String> {
    if let Some(want) = expect.get("live") {
        let got = st.live.clone().unwrap_or(Node::Null);
        if !deep_equal(&got, &node(want)) {
            return Err(format!("live: got {got:?}, want {want}"));
        }
    }
    if let Some(want) = expect.get("managedFields") {
        managers_equal(&st.managers, want)?;
    }
    Ok(())
}

fn compare_conflicts(got: &[(String, String)], want: &Value) -> Result<(), String> {
    let mut want: Vec<(String, String)> = want
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c["manager"].as_str().unwrap_or("").to_string(),
                        c["pathString"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut got = got.to_vec();
    want.sort();
    want.dedup();
    got.sort();
    got.dedup();
    if got != want {
        return Err(format!("conflicts: got {got:?}, want {want:?}"));
    }
    Ok(())
}

enum StepError {
    Conflicts(Vec<(String, String)>),
    Failed(String),
}

fn run_step(
    op: &str,
    typed: &Typed<'_>,
    up: &Updater<'_>,
    st: &mut State,
    object: &Node,
    version: &str,
    manager: &str,
) -> Result<(), StepError> {
    let apply = |st: &mut State, config: &Node, force: bool| -> Result<(), StepError> {
        let live = st.live.clone().unwrap_or(Node::Null);
        match up.apply(&live, config, version, &st.managers, manager, force) {
            Ok(r) => {
                st.managers = r.managers;
                if let Some(o) = r.object {
                    st.live = Some(o);
                } else if st.live.is_none() {
                    st.live = Some(live);
                }
                Ok(())
            }
            Err(UpdaterError::Conflicts(cs)) => Err(StepError::Conflicts(
                cs.iter()
                    .map(|c| (c.manager.clone(), c.path_string()))
                    .collect(),
            )),
            Err(UpdaterError::Invalid(e)) => Err(StepError::Failed(e)),
        }
    };
    match op {
        "apply" | "forceApply" => {
            typed.validate(object, false).map_err(StepError::Failed)?;
            apply(st, object, op == "forceApply")
        }
        "update" => {
            typed.validate(object, true).map_err(StepError::Failed)?;
            let live = st.live.clone().unwrap_or(Node::Null);
            st.managers = up
                .update(&live, object, version, &st.managers, manager)
                .map_err(|e| StepError::Failed(e.to_string()))?;
            st.live = Some(object.clone());
            Ok(())
        }
        "extractApply" => {
            typed.validate(object, false).map_err(StepError::Failed)?;
            let Some(live) = st.live.clone() else {
                return apply(st, object, true);
            };
            let set = match st.managers.get(manager) {
                Some(vs) if vs.api_version != version => {
                    return Err(StepError::Failed(
                        "managed set at another apiVersion".into(),
                    ));
                }
                Some(vs) => vs.set.leaves(),
                None => Set::new(),
            };
            let extracted = typed.extract_items(&live, &set);
            let config = typed.merge(&extracted, object).map_err(StepError::Failed)?;
            apply(st, &config, true)
        }
        other => Err(StepError::Failed(format!("unknown op {other}"))),
    }
}

/// The typed schema built from ply's schema table (generated from the Kubernetes 1.37
/// definitions) gives the real kinds the ownership facts of spec §2.1 — through the one
/// conversion `ply diff` uses.
#[test]
#[allow(
    clippy::too_many_lines,
    reason = "a list of kinds, each with the ownership facts of the spec"
)]
fn kubernetes_schema() {
    use ply::testing::ssa::{KindSchema, for_kind};
    let table = ply::Schema::builtin();
    let kind = |group: &str, version: &str, kind: &str| -> KindSchema {
        let gvk = ply::Gvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        };
        for_kind(&table, &gvk).unwrap_or_else(|| panic!("{kind} is in the table"))
    };
    let y = |s: &str| ply::testing::parse_one(s).expect("yaml");

    let KindSchema { schema, root, .. } = kind("apps", "v1", "Deployment");
    let t = Typed::new(&schema, &root);
    let d = y(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        args: [a, b]\n        ports:\n        - containerPort: 80\n",
    );
    let set = t.to_field_set(&d).expect("field set");
    let paths: Vec<String> = set.paths().iter().map(|p| path_string(p)).collect();
    for want in [
        ".spec.selector",
        ".spec.replicas",
        ".metadata.labels.app",
        r#".spec.template.spec.containers[name="web"].image"#,
        r#".spec.template.spec.containers[name="web"].args"#,
        r#".spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].containerPort"#,
    ] {
        assert!(
            paths.iter().any(|p| p == want),
            "{want} missing from {paths:#?}"
        );
    }
    assert!(
        !paths.iter().any(|p| p.starts_with(".spec.selector.")),
        "LabelSelector is atomic"
    );

    // A container list merges by name; another manager's sidecar stays; the image change
    // conflicts with the field's other owner until forced.
    use ply::testing::ssa::{ApplyOutcome, ApplyRequest, server_side_apply};
    let live = y(r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  managedFields:
  - {manager: kubectl, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}}
  - {manager: injector, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"proxy\"}":{".":{},"f:image":{},"f:name":{}},"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}}
spec:
  template:
    spec:
      containers:
      - {name: web, image: nginx:1}
      - {name: proxy, image: envoy}
"#);
    let config = y(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - {name: web, image: nginx:2}\n",
    );
    let mut req = ApplyRequest {
        schema: &schema,
        root: &root,
        manager: "kubectl",
        force: false,
        reset_fields: None,
        now: None,
    };
    match server_side_apply(Some(&live), &config, &req).expect("apply") {
        ApplyOutcome::Conflicts(cs) => {
            assert_eq!(cs.len(), 1);
            assert_eq!(
                cs[0].path_string(),
                r#".spec.template.spec.containers[name="web"].image"#
            );
            assert_eq!(cs[0].manager.name, "injector");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    req.force = true;
    match server_side_apply(Some(&live), &config, &req).expect("apply") {
        ApplyOutcome::Applied { object, changed } => {
            assert!(changed);
            let containers = object
                .get_path(&["spec", "template", "spec", "containers"])
                .expect("containers");
            assert_eq!(
                containers,
                &y("- {name: web, image: nginx:2}\n- {name: proxy, image: envoy}\n")
            );
        }
        other => panic!("expected success, got {other:?}"),
    }

    let KindSchema { schema, root, .. } = kind("", "v1", "Service");
    let t = Typed::new(&schema, &root);
    let s = y(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n    targetPort: 8080\n",
    );
    let paths: Vec<String> = t
        .to_field_set(&s)
        .expect("set")
        .paths()
        .iter()
        .map(|p| path_string(p))
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| p == r#".spec.ports[port=80,protocol="TCP"].targetPort"#),
        "{paths:#?}"
    );
    assert!(
        paths.iter().any(|p| p == ".spec.selector"),
        "Service selector is atomic: {paths:#?}"
    );
}
