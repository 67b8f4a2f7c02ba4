//! Legacy `vars:`: each kustomization binds its vars to the one object they name
//! ([`bind_vars`], after its transformers), the sets of vars travel up from bases and
//! components ([`VarSet::merge_set`]), and at the root, after name references,
//! [`resolve_vars`] reads each var's field and replaces `$(NAME)` in the var-reference fields
//! (`varreference.table` plus `configurations:`). Changes only those fields.
//!
//! kustomize: `api/internal/accumulator/resaccumulator.go` (`MergeVars`, `MergeAccumulator`,
//! `makeVarReplacementMap`, `ResolveVars`), `api/types/var.go` (`VarSet`, defaulting),
//! `api/filters/refvar` (`DoReplacements`, the scalar/map/list rules) and kyaml's
//! `RNode.GetFieldValue` (how a field's value is typed).

use std::collections::{BTreeMap, HashMap};

use crate::diag::{Error, ErrorKind, Warnings};
use crate::kustomization::{FieldSpec, Var};
use crate::resource::{Gvk, ResId, Resource, effective_namespace};
use crate::yaml::Node;
use crate::yaml::emit::format_float;

use super::refpath::{
    ClusterScoped, lookup, smarter_split_path, spec_selects, split_path, walk_existing,
};

/// kustomize's default `fieldref.fieldPath`.
const DEFAULT_FIELD_PATH: &str = "metadata.name";

/// The vars declared so far (by this kustomization, its bases and its components), by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct VarSet {
    vars: BTreeMap<String, Var>,
}

impl VarSet {
    pub(crate) fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// The field path the var `name` reads (`fieldref.fieldPath`, `metadata.name` by
    /// default), when it is declared.
    pub(crate) fn field_path_of(&self, name: &str) -> Option<String> {
        self.vars.get(name).map(|v| field_path(v).to_string())
    }

    #[cfg(test)]
    /// Adds the vars of a base or component; a name declared twice is an error
    /// (kustomize's `VarSet.MergeSet`).
    pub(crate) fn merge_set(&mut self, other: &VarSet) -> Result<(), Error> {
        for v in other.vars.values() {
            self.add(v.clone())?;
        }
        Ok(())
    }

    fn add(&mut self, v: Var) -> Result<(), Error> {
        if self.vars.contains_key(&v.name) {
            return Err(Error::new(
                ErrorKind::Kustomization,
                format!("var '{}' already encountered", v.name),
            )
            .help("every var name must be declared once across a kustomization, its bases and its components"));
        }
        self.vars.insert(v.name.clone(), v);
        Ok(())
    }
}

/// The group, version and kind a var's `objref` names (`apiVersion` wins over `group` and
/// `version`, as in kustomize's `Target.GVK`).
fn objref_gvk(v: &Var) -> Gvk {
    let o = &v.objref;
    let mut gvk = Gvk {
        group: o.group.clone().unwrap_or_default(),
        version: o.version.clone().unwrap_or_default(),
        kind: o.kind.clone().unwrap_or_default(),
    };
    if let Some(av) = o.api_version.as_deref().filter(|a| !a.is_empty()) {
        let parts: Vec<&str> = av.split('/').collect();
        match parts.as_slice() {
            [g, ver] => {
                gvk.group = (*g).to_string();
                gvk.version = (*ver).to_string();
            }
            [ver] => gvk.version = (*ver).to_string(),
            _ => {}
        }
    }
    gvk
}

fn field_path(v: &Var) -> &str {
    v.fieldref
        .as_ref()
        .map(|f| f.field_path.as_str())
        .filter(|p| !p.is_empty())
        .unwrap_or(DEFAULT_FIELD_PATH)
}

/// A var for messages: `NAME (objref apiVersion v1, kind Service, name db; fieldPath …)`.
fn describe(v: &Var) -> String {
    let gvk = objref_gvk(v);
    let o = &v.objref;
    let mut parts = Vec::new();
    let av = gvk.api_version();
    if !av.is_empty() {
        parts.push(format!("apiVersion {av}"));
    }
    if !gvk.kind.is_empty() {
        parts.push(format!("kind {}", gvk.kind));
    }
    parts.push(format!("name {}", o.name.as_deref().unwrap_or("")));
    if let Some(ns) = o.namespace.as_deref().filter(|n| !n.is_empty()) {
        parts.push(format!("namespace {ns}"));
    }
    format!(
        "{} (objref {}; fieldPath {})",
        v.name,
        parts.join(", "),
        field_path(v)
    )
}

/// Binds this kustomization's `vars` to the objects they name and adds them to `set`
/// (kustomize's `ResAccumulator.MergeVars`): an object matches when its current or any
/// previous id has the var's group, version, kind and name (and namespace, when the var gives
/// one). More than one match is an error; none is left for [`resolve_vars`] to report.
pub(crate) fn bind_vars(
    resources: &mut [Resource],
    vars: &[Var],
    set: &mut VarSet,
    cluster_scoped: ClusterScoped,
) -> Result<(), Error> {
    if vars.is_empty() {
        return Ok(());
    }
    // Every name each object has had → the objects, in order.
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, r) in resources.iter().enumerate() {
        let mut names = vec![r.name().to_string()];
        names.extend(r.prev_ids.iter().map(|p| p.name.clone()));
        names.dedup();
        for n in names {
            let list = by_name.entry(n).or_default();
            if list.last() != Some(&i) {
                list.push(i);
            }
        }
    }
    for v in vars {
        let gvk = objref_gvk(v);
        let name = v.objref.name.clone().unwrap_or_default();
        let namespace = v.objref.namespace.clone().unwrap_or_default();
        let target = ResId {
            gvk: gvk.clone(),
            namespace: namespace.clone(),
            name: name.clone(),
        };
        let matches = |id: &ResId| {
            id.name == name
                && id.gvk == gvk
                && (namespace.is_empty()
                    || effective_namespace(&target.namespace, cluster_scoped(&target.gvk))
                        == effective_namespace(&id.namespace, cluster_scoped(&id.gvk)))
        };
        let matched: Vec<usize> = by_name
            .get(&name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&i| {
                let r = &resources[i];
                matches(&r.id()) || super::refpath::prev_ids(r).iter().any(matches)
            })
            .collect();
        match matched.as_slice() {
            [] => {}
            [one] => resources[*one].ref_var_names.push(v.name.clone()),
            many => {
                return Err(Error::new(
                    ErrorKind::Kustomization,
                    format!(
                        "found {} resId matches for var {} (unable to disambiguate)",
                        many.len(),
                        describe(v)
                    ),
                )
                .help("give the var's objref a namespace (or apiVersion) that names one object"));
            }
        }
    }
    for v in vars {
        set.add(v.clone())?;
    }
    Ok(())
}

/// A var's value as kustomize types it (`RNode.GetFieldValue`): strings, integers, floats and
/// booleans replace; lists and maps leave `$(NAME)` in place.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
    Complex,
}

impl Value {
    fn of(n: &Node) -> Value {
        // A folded string read back as another value: `GetFieldValue` decodes the node's
        // text as written (kyaml's `Node.Value`), not what go-yaml would print.
        if let Node::Spelled(s) = n
            && matches!(s.value, Node::Str(_))
        {
            return Value::Str(s.text.clone());
        }
        match n.unspelled() {
            Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
            Node::Str(s) => Value::Str(s.clone()),
            Node::Int(i) => Value::Int(*i),
            Node::Float(f) => Value::Float(*f),
            Node::Bool(b) => Value::Bool(*b),
            Node::Null => Value::Str("null".into()),
            Node::Seq(_) | Node::Map(_) => Value::Complex,
        }
    }

    /// The value inside a longer string (Go's `%v`).
    fn text(&self) -> Option<String> {
        match self {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(format_float(*f)),
            Value::Bool(b) => Some(b.to_string()),
            Value::Complex => None,
        }
    }

    /// The value replacing a whole `$(NAME)` field, keeping its type.
    fn node(&self) -> Option<Node> {
        match self {
            Value::Str(s) => Some(Node::Str(s.clone())),
            Value::Int(i) => Some(Node::Int(*i)),
            Value::Float(f) => Some(Node::Float(*f)),
            Value::Bool(b) => Some(Node::Bool(*b)),
            Value::Complex => None,
        }
    }
}

/// Replaces `$(NAME)` in the var-reference fields of every object with the values of the vars
/// in `set` (kustomize's `ResolveVars`). A var bound to no object, or whose field is missing,
/// is an error; a `$(NAME)` naming no var stays as it is. Vars never used are reported in
/// `warnings`, as kustomize logs them.
pub(crate) fn resolve_vars(
    resources: &mut [Resource],
    set: &VarSet,
    var_reference: &[FieldSpec],
    warnings: &mut Warnings,
) -> Result<(), Error> {
    if set.is_empty() {
        return Ok(());
    }
    let mut first_bound: HashMap<&str, usize> = HashMap::new();
    for (i, r) in resources.iter().enumerate() {
        for n in &r.ref_var_names {
            first_bound.entry(n.as_str()).or_insert(i);
        }
    }
    let mut values: HashMap<String, Value> = HashMap::new();
    for (name, v) in &set.vars {
        let Some(&i) = first_bound.get(name.as_str()) else {
            return Err(Error::new(
                ErrorKind::Kustomization,
                format!(
                    "var '{}' cannot be mapped to a field in the set of known resources",
                    describe(v)
                ),
            )
            .help("an objref matches an object by exact group, version, kind and name (current or earlier): give `apiVersion` as the object has it"));
        };
        let path = field_path(v);
        let parts = convert_slice_index(smarter_split_path(path, '.'));
        let found = lookup(&resources[i].node, &parts).ok().flatten();
        let Some(node) = found else {
            return Err(Error::new(
                ErrorKind::Kustomization,
                format!(
                    "field specified in var '{}' not found in corresponding resource",
                    describe(v)
                ),
            ));
        };
        values.insert(name.clone(), Value::of(node));
    }
    let mut used: HashMap<String, usize> = HashMap::new();
    let specs: Vec<(&FieldSpec, Vec<String>)> = var_reference
        .iter()
        .map(|s| (s, split_path(&s.path, '/')))
        .collect();
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        let id = r.id();
        for (spec, segs) in &specs {
            if !spec_selects(spec, &gvk) {
                continue;
            }
            walk_existing(&mut r.node, segs, &mut |n| {
                substitute(n, &values, &mut used)
            })
            .map_err(|m| {
                Error::new(
                    ErrorKind::Transformer,
                    format!("considering field '{}' of object {id}: {m}", spec.path),
                )
            })?;
        }
    }
    let mut unused: Vec<&str> = set
        .vars
        .keys()
        .filter(|k| !used.contains_key(*k))
        .map(String::as_str)
        .collect();
    unused.sort_unstable();
    if !unused.is_empty() {
        warnings.warn(format!(
            "well-defined vars that were never replaced: {}",
            unused.join(",")
        ));
    }
    Ok(())
}

/// kyaml's `convertSliceIndex`: `ports[0]` → `ports`, `0`.
fn convert_slice_index(parts: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        if let Some(open) = p
            .strip_suffix(']')
            .and_then(|s| s.rfind('[').map(|i| (s, i)))
        {
            let (s, i) = open;
            let (head, idx) = (&s[..i], &s[i + 1..]);
            if !idx.is_empty() && idx.bytes().all(|c| c.is_ascii_digit()) {
                if !head.is_empty() {
                    out.push(head.to_string());
                }
                out.push(idx.to_string());
                continue;
            }
        }
        out.push(p);
    }
    out
}

/// kustomize's `refvar.Filter.set`: a string scalar is expanded; in a map, each string value
/// (other values are skipped); in a list, every item must be a string.
fn substitute(
    node: &mut Node,
    values: &HashMap<String, Value>,
    used: &mut HashMap<String, usize>,
) -> Result<(), String> {
    match node {
        Node::Null => Ok(()),
        Node::Str(_) => {
            expand_in_place(node, values, used);
            Ok(())
        }
        Node::Map(m) => {
            for v in m.values_mut() {
                if matches!(v, Node::Str(_)) {
                    expand_in_place(v, values, used);
                }
            }
            Ok(())
        }
        Node::Seq(items) => {
            for item in items {
                if !matches!(item, Node::Str(_)) {
                    return Err("invalid value type expect a string".into());
                }
                expand_in_place(item, values, used);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn expand_in_place(
    node: &mut Node,
    values: &HashMap<String, Value>,
    used: &mut HashMap<String, usize>,
) {
    if let Node::Str(s) = node {
        if !s.contains('$') {
            return;
        }
        *node = expand(s, values, used);
    }
}

/// kustomize's `refvar.DoReplacements`: `$(NAME)` is replaced by the var's value, `$$` is an
/// escaped `$`; a string that is exactly one `$(NAME)` takes the value's type.
fn expand(input: &str, values: &HashMap<String, Value>, used: &mut HashMap<String, usize>) -> Node {
    let mut lookup_var = |name: &str| -> Option<&Value> {
        let v = values.get(name).filter(|v| **v != Value::Complex)?;
        *used.entry(name.to_string()).or_default() += 1;
        Some(v)
    };
    if let Some(name) = input.strip_prefix("$(").and_then(|s| s.strip_suffix(')')) {
        if !name.contains(')') {
            return match lookup_var(name).and_then(Value::node) {
                Some(n) => n,
                None => Node::Str(input.to_string()),
            };
        }
    }
    let bytes = input.as_bytes();
    let mut out = String::with_capacity(input.len());
    let mut checkpoint = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && i + 1 < bytes.len() {
            out.push_str(&input[checkpoint..i]);
            let rest = &input[i + 1..];
            let advance = match rest.as_bytes()[0] {
                b'$' => {
                    out.push('$');
                    1
                }
                b'(' => match rest[1..].find(')') {
                    Some(close) => {
                        let name = &rest[1..=close];
                        match lookup_var(name).and_then(Value::text) {
                            Some(t) => out.push_str(&t),
                            None => {
                                out.push_str("$(");
                                out.push_str(name);
                                out.push(')');
                            }
                        }
                        close + 2
                    }
                    None => {
                        out.push_str("$(");
                        1
                    }
                },
                _ => {
                    // `$` followed by any other character is kept, character and all.
                    let ch_len = rest.chars().next().map_or(1, char::len_utf8);
                    out.push('$');
                    out.push_str(&rest[..ch_len]);
                    ch_len
                }
            };
            i += advance + 1;
            checkpoint = i;
        } else {
            i += 1;
        }
    }
    if checkpoint < input.len() {
        out.push_str(&input[checkpoint..]);
    }
    Node::Str(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kustomization::{FieldRef, VarTarget};
    use crate::transform::configurations::ReferenceTables;
    use crate::yaml::parse::parse_one;

    fn values() -> HashMap<String, Value> {
        let mut m = HashMap::new();
        m.insert("A".to_string(), Value::Str("alpha".into()));
        m.insert("PORT".to_string(), Value::Int(8080));
        m.insert("L".to_string(), Value::Complex);
        m
    }

    fn ex(s: &str) -> Node {
        expand(s, &values(), &mut HashMap::new())
    }

    #[test]
    fn expands_like_kustomize() {
        assert_eq!(ex("$(A)"), Node::str("alpha"));
        assert_eq!(ex("$(PORT)"), Node::Int(8080));
        assert_eq!(ex("x-$(PORT)-$(A)"), Node::str("x-8080-alpha"));
        assert_eq!(ex("$(NOPE) $(A)"), Node::str("$(NOPE) alpha"));
        assert_eq!(ex("$$(A)"), Node::str("$(A)"));
        assert_eq!(ex("$(L)"), Node::str("$(L)"));
        assert_eq!(ex("a$"), Node::str("a$"));
        assert_eq!(ex("$(A"), Node::str("$(A"));
        assert_eq!(ex("$x$(A)"), Node::str("$xalpha"));
        assert_eq!(ex("é$é"), Node::str("é$é"));
    }

    fn var(name: &str, kind: &str, obj: &str, path: Option<&str>) -> Var {
        Var {
            name: name.into(),
            objref: VarTarget {
                api_version: Some("v1".into()),
                kind: Some(kind.into()),
                name: Some(obj.into()),
                ..VarTarget::default()
            },
            fieldref: path.map(|p| FieldRef {
                field_path: p.into(),
            }),
        }
    }

    #[test]
    fn binds_and_resolves_across_renames() {
        let mut svc = Resource::new(
            parse_one("apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports:\n  - port: 5432\n").unwrap(),
            None,
        );
        svc.prev_ids.push(svc.id());
        *svc.node.ensure_path(&["metadata", "name"]) = Node::str("p-db");
        let pod = Resource::new(
            parse_one("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    command: [run, --db=$(DB), $(DB_PORT)]\n    env:\n    - name: X\n      value: $(DB_PORT)\n").unwrap(),
            None,
        );
        let mut rs = vec![svc, pod];
        let mut set = VarSet::default();
        bind_vars(
            &mut rs,
            &[
                var("DB", "Service", "db", None),
                var("DB_PORT", "Service", "db", Some("spec.ports[0].port")),
            ],
            &mut set,
            &|_| false,
        )
        .unwrap();
        let t = ReferenceTables::builtin();
        let mut w = Warnings::default();
        resolve_vars(&mut rs, &set, &t.var_reference, &mut w).unwrap();
        let c = &rs[1]
            .node
            .get_path(&["spec", "containers"])
            .unwrap()
            .as_seq()
            .unwrap()[0];
        assert_eq!(
            c.get("command").unwrap(),
            &Node::Seq(vec![
                Node::str("run"),
                Node::str("--db=p-db"),
                Node::Int(5432)
            ])
        );
        let env = &c.get("env").unwrap().as_seq().unwrap()[0];
        assert_eq!(env.get("value"), Some(&Node::Int(5432)));
        assert!(w.is_empty());
    }

    #[test]
    fn duplicate_and_unbound_vars_are_errors() {
        let mut rs = vec![Resource::new(
            parse_one("apiVersion: v1\nkind: Service\nmetadata:\n  name: db\n").unwrap(),
            None,
        )];
        let mut set = VarSet::default();
        bind_vars(
            &mut rs,
            &[var("A", "Service", "db", None)],
            &mut set,
            &|_| false,
        )
        .unwrap();
        let again = set.clone();
        assert!(set.merge_set(&again).is_err());
        let mut set2 = VarSet::default();
        bind_vars(
            &mut rs,
            &[var("B", "Service", "nope", None)],
            &mut set2,
            &|_| false,
        )
        .unwrap();
        let mut w = Warnings::default();
        let e = resolve_vars(&mut rs, &set2, &[], &mut w).unwrap_err();
        assert!(e.message.contains("cannot be mapped"), "{}", e.message);
    }

    #[test]
    fn lists_of_non_strings_are_errors_and_maps_skip_them() {
        let vals = values();
        let mut used = HashMap::new();
        let mut list = parse_one("[a, 1]").unwrap();
        assert!(substitute(&mut list, &vals, &mut used).is_err());
        let mut map = parse_one("{a: $(A), n: 1}").unwrap();
        substitute(&mut map, &vals, &mut used).unwrap();
        assert_eq!(map.get("a"), Some(&Node::str("alpha")));
        assert_eq!(map.get("n"), Some(&Node::Int(1)));
        assert_eq!(used.get("A"), Some(&1));
    }

    #[test]
    fn slice_indexes_split() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            convert_slice_index(s(&["spec", "ports[0]", "port"])),
            s(&["spec", "ports", "0", "port"])
        );
        assert_eq!(convert_slice_index(s(&["[1]"])), s(&["1"]));
        assert_eq!(convert_slice_index(s(&["a[x]"])), s(&["a[x]"]));
    }
}
