//! The managed-fields updater (`smd:merge/update.go`): apply (merge, new ownership, pruning of
//! fields the applier gave up, conflicts with other managers, force) and update (the updater
//! takes over whatever it changed). Managers are keyed by an opaque identity string; versions
//! convert as the identity (ply compares field paths across versions as they are).

use std::collections::BTreeMap;
use std::fmt;

use super::path::{Path, path_string};
use super::schema::{Schema, TypeRef};
use super::set::Set;
use super::typed::{Comparison, Typed};
use crate::yaml::Node;

/// One manager's fields: the set, the apiVersion it was written at, and whether it was an
/// apply (`true`) or an update.
#[derive(Clone, Debug, PartialEq)]
pub struct VersionedSet {
    pub set: Set,
    pub api_version: String,
    pub applied: bool,
}

/// Managers by identity, in a stable (sorted) order.
pub type ManagedFields = BTreeMap<String, VersionedSet>;

/// One field another manager owns that the apply would change.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    pub manager: String,
    pub path: Path,
}

impl Conflict {
    /// The path as kubectl prints it: `.spec.replicas`.
    pub fn path_string(&self) -> String {
        path_string(&self.path)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum UpdaterError {
    /// The apply would change fields other managers own; nothing was changed.
    Conflicts(Vec<Conflict>),
    /// Invalid input (a value that does not fit the schema, duplicate keys in a config, …).
    Invalid(String),
}

impl fmt::Display for UpdaterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpdaterError::Invalid(e) => f.write_str(e),
            UpdaterError::Conflicts(cs) => f.write_str(&conflicts_message(cs)),
        }
    }
}

/// smd's `Conflicts.Error()`: one conflict on one line, else grouped by manager (sorted).
pub(crate) fn conflicts_message(cs: &[Conflict]) -> String {
    if let [c] = cs {
        return format!("conflict with {:?}: {}", c.manager, c.path_string());
    }
    let mut by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for c in cs {
        by.entry(&c.manager).or_default().push(c.path_string());
    }
    let mut lines = Vec::new();
    for (m, paths) in by {
        lines.push(format!("conflicts with {m:?}:"));
        lines.extend(paths.into_iter().map(|p| format!("- {p}")));
    }
    lines.join("\n")
}

/// The updater: a schema, the root type of the objects, and the fields to ignore per apiVersion
/// (Kubernetes reset fields such as `status`: nobody owns them, changes there never conflict).
#[derive(Clone, Copy, Debug)]
pub struct Updater<'a> {
    pub schema: &'a Schema,
    pub root: &'a TypeRef,
    pub ignored: Option<&'a BTreeMap<String, Set>>,
}

/// The result of an apply: the new object (`None` when it equals live: a no-op) and managers.
#[derive(Clone, Debug)]
pub struct ApplyResult {
    pub object: Option<Node>,
    pub managers: ManagedFields,
}

impl<'a> Updater<'a> {
    pub fn new(schema: &'a Schema, root: &'a TypeRef) -> Updater<'a> {
        Updater {
            schema,
            root,
            ignored: None,
        }
    }

    fn typed(&self) -> Typed<'a> {
        Typed::new(self.schema, self.root)
    }

    fn ignored_at(&self, version: &str) -> Option<&'a Set> {
        self.ignored
            .and_then(|m| m.get(version))
            .filter(|s| !s.is_empty())
    }

    fn filter(&self, set: Set, version: &str) -> Set {
        match self.ignored_at(version) {
            Some(ig) => set.recursive_difference(ig),
            None => set,
        }
    }

    /// `reconcileManagedFieldsWithSchemaChanges`.
    fn reconcile(&self, managers: &ManagedFields) -> Result<ManagedFields, UpdaterError> {
        let t = self.typed();
        let mut out = ManagedFields::new();
        for (m, vs) in managers {
            let set = t
                .reconcile_field_set(&vs.set)
                .map_err(UpdaterError::Invalid)?;
            let mut vs = vs.clone();
            if let Some(s) = set {
                vs.set = s;
            }
            out.insert(m.clone(), vs);
        }
        Ok(out)
    }

    /// The shared part of apply and update (`update`): compare old and new, find conflicts
    /// with every other manager, then (when allowed) take the changed fields away from them.
    fn update_managers(
        &self,
        old: &Node,
        new: &Node,
        version: &str,
        managers: &mut ManagedFields,
        workflow: &str,
        force: bool,
    ) -> Result<Comparison, UpdaterError> {
        let full = self
            .typed()
            .compare(old, new)
            .map_err(|e| UpdaterError::Invalid(format!("failed to compare objects: {e}")))?;
        let mut by_version: BTreeMap<String, Comparison> = BTreeMap::new();
        let mut cmp_for = |v: &str| -> Comparison {
            by_version
                .entry(v.to_string())
                .or_insert_with(|| match self.ignored_at(v) {
                    Some(ig) => full.exclude_fields(ig),
                    None => full.clone(),
                })
                .clone()
        };
        let own = cmp_for(version);
        let mut conflicts: Vec<(String, Set)> = Vec::new();
        let mut removed: Vec<(String, Set)> = Vec::new();
        for (m, vs) in managers.iter() {
            if m == workflow {
                continue;
            }
            let cmp = cmp_for(&vs.api_version);
            let c = vs.set.intersection(&cmp.modified.union(&cmp.added));
            if !c.is_empty() {
                conflicts.push((m.clone(), c));
            }
            if !cmp.removed.is_empty() {
                removed.push((m.clone(), cmp.removed.clone()));
            }
        }
        if !force && !conflicts.is_empty() {
            let list = conflicts
                .iter()
                .flat_map(|(m, s)| {
                    s.paths().into_iter().map(|p| Conflict {
                        manager: m.clone(),
                        path: p,
                    })
                })
                .collect();
            return Err(UpdaterError::Conflicts(list));
        }
        for (m, s) in conflicts.iter().chain(removed.iter()) {
            if let Some(vs) = managers.get_mut(m) {
                vs.set = vs.set.difference(s);
            }
        }
        managers.retain(|_, vs| !vs.set.is_empty());
        Ok(own)
    }

    /// `Updater.Update`: `new` replaces `live`; the manager takes over every changed field.
    pub fn update(
        &self,
        live: &Node,
        new: &Node,
        version: &str,
        managers: &ManagedFields,
        manager: &str,
    ) -> Result<ManagedFields, UpdaterError> {
        let mut managers = self.reconcile(managers)?;
        let cmp = self.update_managers(live, new, version, &mut managers, manager, true)?;
        let prev = managers
            .get(manager)
            .map(|vs| vs.set.clone())
            .unwrap_or_default();
        let set = prev
            .difference(&cmp.removed)
            .union(&cmp.modified)
            .union(&cmp.added);
        let set = self.filter(set, version);
        if set.is_empty() {
            managers.remove(manager);
        } else {
            managers.insert(
                manager.to_string(),
                VersionedSet {
                    set,
                    api_version: version.to_string(),
                    applied: false,
                },
            );
        }
        Ok(managers)
    }

    /// `Updater.Apply`: merge `config` into `live`, make the manager own exactly what the
    /// config sets, prune what it gave up and nobody else owns, and check conflicts.
    pub fn apply(
        &self,
        live: &Node,
        config: &Node,
        version: &str,
        managers: &ManagedFields,
        manager: &str,
        force: bool,
    ) -> Result<ApplyResult, UpdaterError> {
        let t = self.typed();
        let mut managers = self.reconcile(managers)?;
        let merged = t
            .merge(live, config)
            .map_err(|e| UpdaterError::Invalid(format!("failed to merge config: {e}")))?;
        let last = managers.get(manager).cloned();
        let set = t
            .to_field_set(config)
            .map_err(|e| UpdaterError::Invalid(format!("failed to get field set: {e}")))?;
        let set = self.filter(set, version);
        managers.insert(
            manager.to_string(),
            VersionedSet {
                set,
                api_version: version.to_string(),
                applied: true,
            },
        );
        let new = self
            .prune(merged, &managers, last.as_ref())
            .map_err(|e| UpdaterError::Invalid(format!("failed to prune fields: {e}")))?;
        self.update_managers(live, &new, version, &mut managers, manager, force)?;
        let object = (!super::value::equals(live, &new)).then_some(new);
        Ok(ApplyResult { object, managers })
    }

    /// `prune`: remove what the applier owned before and no longer applies, unless some manager
    /// still owns it; unowned fields under a removed parent go with it.
    fn prune(
        &self,
        merged: Node,
        managers: &ManagedFields,
        last: Option<&VersionedSet>,
    ) -> Result<Node, String> {
        let Some(last) = last.filter(|l| !l.set.is_empty()) else {
            return Ok(merged);
        };
        let t = self.typed();
        let enf = |s: &Set| s.ensure_named_fields_are_members(self.schema, Some(self.root));
        let mut pruned = t.remove_items(&merged, &enf(&last.set));
        // addBackOwnedItems: per apiVersion (the last applied version first), put back what
        // some manager still owns.
        let mut by_version: BTreeMap<&str, Set> = BTreeMap::new();
        for vs in managers.values() {
            let e = by_version.entry(vs.api_version.as_str()).or_default();
            *e = e.union(&vs.set);
        }
        let mut order: Vec<&str> = Vec::new();
        if by_version.contains_key(last.api_version.as_str()) {
            order.push(last.api_version.as_str());
        }
        order.extend(
            by_version
                .keys()
                .copied()
                .filter(|v| *v != last.api_version),
        );
        let merged_set = enf(&t.to_field_set(&merged)?);
        for v in order {
            let Some(managed) = by_version.get(v) else {
                continue;
            };
            let pruned_set = enf(&t.to_field_set(&pruned)?);
            let keep = pruned_set.union(&enf(managed));
            pruned = t.remove_items(&merged, &merged_set.difference(&keep));
        }
        // addBackDanglingItems: only what was in the last applied set stays removed.
        let pruned_set = enf(&t.to_field_set(&pruned)?);
        let drop = merged_set
            .difference(&pruned_set)
            .intersection(&enf(&last.set));
        Ok(t.remove_items(&merged, &drop))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::ssa::schema::UNTYPED_DEDUCED;
    use crate::yaml::parse::parse_one;

    fn y(s: &str) -> Node {
        parse_one(s).unwrap()
    }

    #[test]
    fn apply_update_apply_with_conflict_then_force() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let up = Updater::new(&schema, &root);
        let r = up
            .apply(
                &Node::Null,
                &y("a: 1\nb: 2\n"),
                "v1",
                &ManagedFields::new(),
                "applier",
                false,
            )
            .unwrap();
        let live = r.object.unwrap();
        let managers = up
            .update(&live, &y("a: 1\nb: 3\n"), "v1", &r.managers, "controller")
            .unwrap();
        assert_eq!(managers["applier"].set.to_fields_v1(), r#"{"f:a":{}}"#);
        assert_eq!(managers["controller"].set.to_fields_v1(), r#"{"f:b":{}}"#);
        let live = y("a: 1\nb: 3\n");
        // Same value: shared, no conflict.
        let ok = up
            .apply(&live, &y("a: 1\nb: 3\n"), "v1", &managers, "applier", false)
            .unwrap();
        assert!(ok.object.is_none(), "a no-op");
        assert_eq!(
            ok.managers["controller"].set.to_fields_v1(),
            r#"{"f:b":{}}"#
        );
        // Another value: conflict on .b with the controller.
        match up.apply(&live, &y("a: 1\nb: 4\n"), "v1", &managers, "applier", false) {
            Err(UpdaterError::Conflicts(cs)) => {
                assert_eq!(conflicts_message(&cs), r#"conflict with "controller": .b"#);
            }
            other => panic!("{other:?}"),
        }
        let forced = up
            .apply(&live, &y("a: 1\nb: 4\n"), "v1", &managers, "applier", true)
            .unwrap();
        assert_eq!(forced.object, Some(y("a: 1\nb: 4\n")));
        assert!(!forced.managers.contains_key("controller"));
    }

    #[test]
    fn removal_needs_sole_ownership() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let up = Updater::new(&schema, &root);
        let first = up
            .apply(
                &Node::Null,
                &y("a: 1\nb: 2\n"),
                "v1",
                &ManagedFields::new(),
                "one",
                false,
            )
            .unwrap();
        let live = first.object.unwrap();
        let second = up
            .apply(&live, &y("b: 2\n"), "v1", &first.managers, "two", false)
            .unwrap();
        assert!(second.object.is_none());
        let third = up
            .apply(&live, &y("c: 3\n"), "v1", &second.managers, "one", false)
            .unwrap();
        assert_eq!(
            third.object,
            Some(y("b: 2\nc: 3\n")),
            "a goes (sole owner), b stays (shared)"
        );
    }

    #[test]
    fn ignored_fields_are_never_owned() {
        let schema = Schema::deduced();
        let root = TypeRef::named(UNTYPED_DEDUCED);
        let mut ignored = BTreeMap::new();
        ignored.insert(
            "v1".to_string(),
            Set::from_fields_v1(r#"{"f:status":{}}"#).unwrap(),
        );
        let mut up = Updater::new(&schema, &root);
        up.ignored = Some(&ignored);
        let r = up
            .apply(
                &Node::Null,
                &y("spec: 1\nstatus: {x: 1}\n"),
                "v1",
                &ManagedFields::new(),
                "m",
                false,
            )
            .unwrap();
        assert_eq!(r.managers["m"].set.to_fields_v1(), r#"{"f:spec":{}}"#);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::merge::ssa::schema::UNTYPED_DEDUCED;
    use crate::yaml::Map;
    use proptest::prelude::*;

    fn scalar() -> impl Strategy<Value = Node> {
        prop_oneof![
            any::<bool>().prop_map(Node::Bool),
            (-5i128..5).prop_map(Node::Int),
            "[a-c]{0,2}".prop_map(Node::Str),
        ]
    }

    fn object() -> impl Strategy<Value = Node> {
        let leaf = prop_oneof![
            scalar(),
            prop::collection::vec(scalar(), 0..3).prop_map(Node::Seq)
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| Node::Map(m.into_iter().collect::<Map>()))
        })
        .prop_map(|n| match n {
            Node::Map(_) => n,
            other => {
                let mut m = Map::default();
                m.insert("v".into(), other);
                Node::Map(m)
            }
        })
    }

    proptest! {
        #[test]
        fn applying_twice_equals_once(config in object()) {
            let schema = Schema::deduced();
            let root = TypeRef::named(UNTYPED_DEDUCED);
            let up = Updater::new(&schema, &root);
            let once = up.apply(&Node::Null, &config, "v1", &ManagedFields::new(), "m", false).unwrap();
            let live = once.object.clone().unwrap_or(Node::Null);
            let twice = up.apply(&live, &config, "v1", &once.managers, "m", false).unwrap();
            prop_assert!(twice.object.is_none(), "second apply changed {:?}", twice.object);
            prop_assert_eq!(twice.managers, once.managers);
        }

        #[test]
        fn merge_with_itself_and_compare_with_itself(x in object()) {
            let schema = Schema::deduced();
            let root = TypeRef::named(UNTYPED_DEDUCED);
            let t = Typed::new(&schema, &root);
            prop_assert!(crate::merge::ssa::value::equals(&t.merge(&x, &x).unwrap(), &x));
            prop_assert!(t.compare(&x, &x).unwrap().is_same());
        }

        #[test]
        fn field_sets_survive_fields_v1(x in object()) {
            let schema = Schema::deduced();
            let root = TypeRef::named(UNTYPED_DEDUCED);
            let set = Typed::new(&schema, &root).to_field_set(&x).unwrap();
            let text = set.to_fields_v1();
            prop_assert_eq!(Set::from_fields_v1(&text).unwrap(), set.clone());
            prop_assert_eq!(Set::from_fields_node(&set.to_fields_node()).unwrap(), set);
        }
    }
}
