//! Name references: after prefixes, suffixes, namespaces and hash suffixes have renamed
//! objects, every field that names one of them (the name-reference table, built in as
//! `namereference.table` plus `configurations:`) is rewritten to the new name — and, for
//! references held as `{name, namespace}` maps (RoleBinding subjects, webhook services), to the
//! new namespace. Run once, at the root, after hash suffixes. Changes only referring fields;
//! never renames an object itself.
//!
//! kustomize: `api/internal/accumulator/namereferencetransformer.go` (which fields of which
//! objects), `api/filters/nameref/nameref.go` (`selectReferral` and its sieves, `setScalar`,
//! `setMapping`) and `api/resmap/reswrangler.go` (`SubsetThatCouldBeReferencedByResource`).
//! Unlike kustomize, candidates are found through an index by previous name, so a build does
//! not scan every object for every reference.

use crate::fasthash::{FastMap, FastSet};

use super::fieldspec::GvkRef;

use crate::diag::{Error, ErrorKind};
use crate::kustomization::FieldSpec;
use crate::resource::{Gvk, ResId, Resource};
use crate::yaml::Node;

use super::Unchanged;
use super::configurations::NameBackRef;
use super::fieldspec::PathStep;
use super::refpath::{NOT_NAMESPACED, WalkedTo, split_path, walk_existing, walk_existing_at};

/// Who hears of a name written with the value it held: the field's path (for field provenance).
type Told<'a, 'b> = Option<&'a mut (dyn FnMut(&[PathStep<'_>]) + 'b)>;

/// Where a referrer's node is, made a path only when a write is told: the node a spec's walk
/// found, or an item of the list found there; nowhere when nothing is told.
enum At<'a, 's> {
    Walked(&'a WalkedTo<'s, 'a>),
    Item(&'a At<'a, 's>, usize),
    Nowhere,
}

const NOWHERE: At<'static, 'static> = At::Nowhere;

impl<'s> At<'_, 's> {
    fn path(&self) -> Vec<PathStep<'s>> {
        match self {
            At::Walked(w) => w.path(),
            At::Item(at, i) => {
                let mut p = at.path();
                p.push(PathStep::Index(*i));
                p
            }
            At::Nowhere => Vec::new(),
        }
    }
}

/// What a reference can be matched against: one object's identity, borrowed from a snapshot
/// of the current ids and from the resource's rename history.
struct Cand<'a> {
    id: &'a ResId,
    cluster_scoped: bool,
    /// Effective namespace of the current id.
    cur_ns: &'a str,
    /// Effective namespace of the original id.
    orig_ns: &'a str,
    /// Previous ids as recorded; kustomize reads them with the current group and version
    /// (see [`Cand::prev_kind_selected`]).
    prev: &'a [ResId],
    prefixes: &'a [String],
    suffixes: &'a [String],
}

impl Cand<'_> {
    /// Whether a previous id, read as kustomize reads it (the current group and version with
    /// the earlier kind: `utils.PrevIds`), is selected by `g`, `v`, `k`.
    fn prev_kind_selected(&self, g: Option<&str>, v: Option<&str>, k: Option<&str>) -> bool {
        let ok = |sel: Option<&str>, have: &str| sel.is_none_or(|s| s.is_empty() || s == have);
        ok(g, &self.id.gvk.group)
            && ok(v, &self.id.gvk.version)
            && self.prev.iter().any(|p| ok(k, &p.gvk.kind))
    }
}

/// The objects of one build, indexed for reference lookups.
struct Index<'a> {
    cands: Vec<Cand<'a>>,
    /// Previous name → objects that once had it, in build order.
    by_prev_name: FastMap<&'a str, Vec<usize>>,
    /// Original effective namespace → objects, in build order.
    by_orig_ns: FastMap<&'a str, Vec<usize>>,
}

use crate::resource::effective_namespace as effective_ns;

impl<'a> Index<'a> {
    /// `ids` are the current ids of `resources`, in order.
    fn new(
        resources: &'a [Resource],
        ids: &'a [ResId],
        cluster_scoped: &dyn Fn(&Gvk) -> bool,
    ) -> Index<'a> {
        let mut cands = Vec::with_capacity(resources.len());
        let mut by_prev_name: FastMap<&str, Vec<usize>> = FastMap::default();
        let mut by_orig_ns: FastMap<&str, Vec<usize>> = FastMap::default();
        for (i, (r, id)) in resources.iter().zip(ids).enumerate() {
            let cs = cluster_scoped(&id.gvk);
            let prev = r.prev_ids.as_slice();
            let orig_ns = match prev.first() {
                // The original id read with the current group and version.
                Some(p) if p.gvk.kind == id.gvk.kind => effective_ns(&p.namespace, cs),
                Some(p) => {
                    let gvk = Gvk {
                        kind: p.gvk.kind.clone(),
                        ..id.gvk.clone()
                    };
                    effective_ns(&p.namespace, cluster_scoped(&gvk))
                }
                None => effective_ns(&id.namespace, cs),
            };
            for (n, p) in prev.iter().enumerate() {
                if !prev[..n].iter().any(|q| q.name == p.name) {
                    by_prev_name.entry(p.name.as_str()).or_default().push(i);
                }
            }
            if orig_ns != NOT_NAMESPACED {
                by_orig_ns.entry(orig_ns).or_default().push(i);
            }
            cands.push(Cand {
                id,
                cluster_scoped: cs,
                cur_ns: effective_ns(&id.namespace, cs),
                orig_ns,
                prev,
                prefixes: &r.name_prefixes,
                suffixes: &r.name_suffixes,
            });
        }
        Index {
            cands,
            by_prev_name,
            by_orig_ns,
        }
    }
}

/// One referrer: the object whose fields are rewritten, and which objects it may refer to.
struct Referrer<'a> {
    idx: &'a Index<'a>,
    me: usize,
    /// Namespaces of the ServiceAccount subjects of a RoleBinding (kustomize lets a RoleBinding
    /// refer to objects there).
    rb_namespaces: FastSet<String>,
}

impl Referrer<'_> {
    fn cand(&self) -> &Cand<'_> {
        &self.idx.cands[self.me]
    }

    /// `SubsetThatCouldBeReferencedByResource`.
    fn could_refer_to(&self, j: usize) -> bool {
        let me = self.cand();
        if me.cluster_scoped {
            return true;
        }
        let c = &self.idx.cands[j];
        c.cluster_scoped || c.cur_ns == me.cur_ns || self.rb_namespaces.contains(&c.id.namespace)
    }
}

/// Rewrites every name reference in `resources` (kustomize's `FixBackReferences`).
/// `cluster_scoped` says which kinds have no namespace.
pub(crate) fn fix_name_references(
    resources: &mut [Resource],
    backrefs: &[NameBackRef],
    cluster_scoped: &dyn Fn(&Gvk) -> bool,
    unchanged: Unchanged<'_>,
) -> Result<(), Error> {
    if resources.is_empty() || backrefs.is_empty() {
        return Ok(());
    }
    // The nodes are taken out while the index borrows the rest of each resource.
    let mut nodes: Vec<Node> = resources
        .iter_mut()
        .map(|r| std::mem::take(&mut r.node))
        .collect();
    let result = fix_nodes(&mut nodes, resources, backrefs, cluster_scoped, unchanged);
    for (r, node) in resources.iter_mut().zip(nodes) {
        r.node = node;
    }
    result
}

/// [`fix_name_references`] on the resources' nodes, taken out of `resources` (in order).
fn fix_nodes(
    nodes: &mut [Node],
    resources: &[Resource],
    backrefs: &[NameBackRef],
    cluster_scoped: &dyn Fn(&Gvk) -> bool,
    mut unchanged: Unchanged<'_>,
) -> Result<(), Error> {
    let ids: Vec<ResId> = nodes.iter().map(ResId::of).collect();
    let idx = Index::new(resources, &ids, cluster_scoped);
    // Referrer specs by the kind they select, so that each object only looks at the specs of
    // its own (original) kind and at the kind-less ones; each path is split once.
    let mut by_kind: FastMap<&str, Vec<RefSpec>> = FastMap::default();
    let mut any_kind: Vec<RefSpec> = Vec::new();
    let mut order = 0;
    for br in backrefs {
        for spec in &br.referrers {
            let r = RefSpec {
                order,
                spec,
                target: &br.gvk,
                segs: split_path(&spec.path, '/'),
            };
            order += 1;
            match spec.kind.as_deref().filter(|k| !k.is_empty()) {
                Some(k) => by_kind.entry(k).or_default().push(r),
                None => any_kind.push(r),
            }
        }
    }
    for (i, node) in nodes.iter_mut().enumerate() {
        let Some(me) = idx.cands.get(i) else {
            continue;
        };
        // The original id read with the current group and version.
        let org_gvk = GvkRef {
            group: &me.id.gvk.group,
            version: &me.id.gvk.version,
            kind: me.prev.first().map_or(&me.id.gvk.kind, |p| &p.gvk.kind),
        };
        let mut specs: Vec<&RefSpec> = by_kind
            .get(org_gvk.kind)
            .into_iter()
            .flatten()
            .chain(any_kind.iter())
            .filter(|s| org_gvk.selected_by(s.spec))
            .collect();
        if specs.is_empty() {
            continue;
        }
        specs.sort_by_key(|s| s.order);
        let referrer = Referrer {
            idx: &idx,
            me: i,
            rb_namespaces: role_binding_namespaces(node, me.id)?,
        };
        for RefSpec {
            spec, target, segs, ..
        } in specs
        {
            let role_ref = if spec.path.ends_with("roleRef/name") {
                role_ref_gvk(node)
            } else {
                None
            };
            let f = Filter {
                referrer: &referrer,
                target,
                role_ref: role_ref.as_ref(),
            };
            let walked = match unchanged.as_mut() {
                None => walk_existing(node, segs, &mut |n| f.set(n, &NOWHERE, None)),
                Some(t) => walk_existing_at(node, segs, &mut |n, walked| {
                    let mut tell = |at: &[PathStep<'_>]| t(i, at);
                    f.set(n, &At::Walked(walked), Some(&mut tell))
                }),
            };
            walked.map_err(|m| {
                Error::new(
                    ErrorKind::Transformer,
                    format!(
                        "updating the name reference in field '{}' of {}: {m}",
                        spec.path,
                        friendly(me.id)
                    ),
                )
                .at_opt(resources.get(i).and_then(|r| r.origin.clone()))
                .help("kustomize rewrites a reference when exactly one renamed object had the name it holds")
            })?;
        }
    }
    Ok(())
}

/// A referrer field spec of the name-reference table, with its place in the table and its
/// path split.
struct RefSpec<'a> {
    order: usize,
    spec: &'a FieldSpec,
    target: &'a Gvk,
    segs: Vec<String>,
}

/// kustomize's `getNamespacesForRoleBinding`.
fn role_binding_namespaces(node: &Node, id: &ResId) -> Result<FastSet<String>, Error> {
    let mut out = FastSet::default();
    if id.gvk.kind != "RoleBinding" {
        return Ok(out);
    }
    let Some(subjects) = node.get("subjects").and_then(Node::as_seq) else {
        return Ok(out);
    };
    for s in subjects {
        let (Some(ns), Some(kind)) = (s.get("namespace"), s.get("kind")) else {
            continue;
        };
        if kind.as_str() == Some("ServiceAccount") {
            match ns.as_str() {
                Some(n) => {
                    out.insert(n.to_string());
                }
                None => {
                    return Err(Error::new(
                        ErrorKind::Transformer,
                        format!("Invalid Input: namespace is blank for resource \"{id}\""),
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// The group and kind named by a binding's `roleRef`, when both are there.
fn role_ref_gvk(node: &Node) -> Option<Gvk> {
    let rr = node.get("roleRef")?;
    let group = rr.get("apiGroup")?.scalar_text()?;
    let kind = rr.get("kind")?.scalar_text()?;
    Some(Gvk {
        group,
        version: String::new(),
        kind,
    })
}

struct Filter<'a> {
    referrer: &'a Referrer<'a>,
    target: &'a Gvk,
    role_ref: Option<&'a Gvk>,
}

fn sel(g: &Gvk) -> (Option<&str>, Option<&str>, Option<&str>) {
    (Some(&g.group), Some(&g.version), Some(&g.kind))
}

impl Filter<'_> {
    /// Called on each node found at the spec's path (`at`); `tell` hears of each field written
    /// with the value it held.
    fn set(&self, node: &mut Node, at: &At<'_, '_>, tell: Told<'_, '_>) -> Result<(), String> {
        match node {
            Node::Null => Ok(()),
            Node::Map(_) => self.set_mapping(node, at, tell),
            Node::Seq(items) => {
                let mut tell = tell;
                for (i, item) in items.iter_mut().enumerate() {
                    match item {
                        Node::Null => {}
                        Node::Map(_) => {
                            let item_at = At::Item(at, i);
                            self.set_mapping(item, &item_at, tell.as_deref_mut())?;
                        }
                        Node::Seq(_) => {
                            return Err(
                                "node is expected to be either a string or a map of string".into(),
                            );
                        }
                        _ => self.set_scalar(item)?,
                    }
                }
                Ok(())
            }
            _ => self.set_scalar(node),
        }
    }

    fn set_scalar(&self, node: &mut Node) -> Result<(), String> {
        let old = node.scalar_text().unwrap_or_default();
        let cands = self.candidates(&old, None);
        let Some(j) = self.select(cands, false)? else {
            return Ok(());
        };
        let c = &self.referrer.idx.cands[j];
        if c.id.name != old {
            *node = super::untagged_over(node, c.id.name.clone());
        }
        Ok(())
    }

    fn set_mapping(
        &self,
        node: &mut Node,
        at: &At<'_, '_>,
        tell: Told<'_, '_>,
    ) -> Result<(), String> {
        let Some(map) = node.as_map_mut() else {
            return Err("expect a mapping node".into());
        };
        let Some(name_node) = map.get("name") else {
            return Err("path config error; no 'name' field in node".into());
        };
        let old = name_node.scalar_text().unwrap_or_default();
        let ns = map
            .get("namespace")
            .map(|n| n.scalar_text().unwrap_or_default());
        let cands = self.candidates(&old, ns.as_deref());
        let Some(j) = self.select(cands, true)? else {
            return Ok(());
        };
        let c = &self.referrer.idx.cands[j];
        if c.id.name == old && c.id.namespace.is_empty() {
            return Ok(());
        }
        // kyaml's `FieldSetter{Name, StringValue}` (nameref `setMapping`): untagged, in the
        // style of the field it replaces (`super::untagged_over`); a namespace field it has to
        // create is double-quoted when go-yaml v2 would read it as something other than a
        // string (`IsYaml1_1NonString`), plain otherwise.
        // The name is written even when it is the one the field holds (with the referral's
        // namespace): kustomize's `setMapping` returns early only for the same name and no
        // namespace (`api/filters/nameref/nameref.go`).
        if c.id.name == old
            && let Some(tell) = tell
        {
            let mut field = at.path();
            field.push(PathStep::Key(std::borrow::Cow::Borrowed("name")));
            tell(&field);
        }
        let name = super::untagged_over(name_node, c.id.name.clone());
        map.insert("name".into(), name);
        if !c.id.namespace.is_empty() {
            // An empty namespace is a wildcard here, never written over "default".
            let ns = c.id.namespace.clone();
            let ns = match map.get("namespace") {
                Some(old) => super::untagged_over(old, ns),
                None if crate::yaml::resolve::resolves_to_non_string(&ns) => Node::Str(ns),
                None => super::untagged_over(&Node::Null, ns),
            };
            map.insert("namespace".into(), ns);
        }
        Ok(())
    }

    /// The objects the referrer may mean by `old`, before the sieves: every object that once
    /// had that name and that the referrer can see; with a `namespace` next to the name, only
    /// those originally in that namespace when there are any such objects, otherwise those in
    /// it now (kustomize's `filterMapCandidatesByNamespace`).
    fn candidates(&self, old: &str, namespace: Option<&str>) -> Vec<usize> {
        let r = self.referrer;
        let named = r.idx.by_prev_name.get(old).map_or(&[][..], Vec::as_slice);
        let visible = named.iter().copied().filter(|&j| r.could_refer_to(j));
        match namespace {
            None => visible.collect(),
            Some(ns) => {
                let has_orig = r
                    .idx
                    .by_orig_ns
                    .get(ns)
                    .is_some_and(|v| v.iter().any(|&j| r.could_refer_to(j)));
                if has_orig {
                    visible.filter(|&j| r.idx.cands[j].orig_ns == ns).collect()
                } else {
                    visible
                        .filter(|&j| {
                            let c = &r.idx.cands[j];
                            !c.cluster_scoped && c.cur_ns == ns
                        })
                        .collect()
                }
            }
        }
    }

    /// kustomize's `selectReferral`: narrows the candidates by kind, roleRef, namespace and
    /// name prefixes/suffixes; more than one different candidate left is an error.
    fn select(&self, cands: Vec<usize>, with_namespace: bool) -> Result<Option<usize>, String> {
        let idx = self.referrer.idx;
        let me = self.referrer.cand();
        let (g, v, k) = sel(self.target);
        let by_target = |c: &Cand| c.prev_kind_selected(g, v, k);
        let by_role_ref = |c: &Cand| match self.role_ref {
            Some(rr) => {
                let (g, v, k) = sel(rr);
                c.prev_kind_selected(g, v, k)
            }
            None => true,
        };
        let same_ns = |c: &Cand| {
            me.cluster_scoped
                || c.cluster_scoped
                || c.id.gvk.kind == "ServiceAccount"
                || me.cur_ns == c.cur_ns
        };
        let mut left: Vec<usize> = cands
            .into_iter()
            .filter(|&j| {
                let c = &idx.cands[j];
                by_target(c) && by_role_ref(c) && same_ns(c)
            })
            .collect();
        if left.len() == 1 {
            return Ok(left.first().copied());
        }
        left.retain(|&j| affixes_equal(me, &idx.cands[j], true));
        if left.len() > 1 {
            left.retain(|&j| affixes_equal(me, &idx.cands[j], false));
        }
        match left.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            [first, rest @ ..] => {
                let a = &idx.cands[*first];
                let identical = rest.iter().all(|&j| {
                    let b = &idx.cands[j];
                    b.id.name == a.id.name && (!with_namespace || b.id.namespace == a.id.namespace)
                });
                if identical {
                    Ok(Some(*first))
                } else {
                    let ids: Vec<String> =
                        left.iter().map(|&j| friendly(idx.cands[j].id)).collect();
                    Err(format!(
                        "found multiple possible referrals: {} all had that name; give them distinct original names, or keep them apart with namespaces or name prefixes",
                        ids.join(", ")
                    ))
                }
            }
        }
    }
}

/// `Kind namespace/name` (or `Kind name` without a namespace), for messages.
fn friendly(id: &ResId) -> String {
    if id.namespace.is_empty() {
        format!("{} '{}'", id.gvk.kind, id.name)
    } else {
        format!("{} '{}/{}'", id.gvk.kind, id.namespace, id.name)
    }
}

/// kustomize's `PrefixesSuffixesEquals`: the shorter prefix (suffix) list is the tail of the
/// longer one; with `allow_empty`, an empty list on either side matches anything.
fn affixes_equal(a: &Cand, b: &Cand, allow_empty: bool) -> bool {
    let ok = |x: &[String], y: &[String]| {
        (allow_empty && (x.is_empty() || y.is_empty())) || same_ending(x, y)
    };
    ok(a.prefixes, b.prefixes) && ok(a.suffixes, b.suffixes)
}

/// kustomize's `utils.SameEndingSubSlice`.
fn same_ending(x: &[String], y: &[String]) -> bool {
    let (short, long) = if x.len() <= y.len() { (x, y) } else { (y, x) };
    if short.is_empty() {
        return long.is_empty();
    }
    long.ends_with(short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::configurations::ReferenceTables;
    use crate::yaml::parse::parse_one;

    fn res(text: &str) -> Resource {
        Resource::new(parse_one(text).unwrap(), None)
    }

    fn rename(r: &mut Resource, name: &str) {
        r.prev_ids.push(r.id());
        *r.node.ensure_path(&["metadata", "name"]) = Node::str(name);
    }

    fn run(rs: &mut [Resource]) -> Result<(), Error> {
        let t = ReferenceTables::builtin();
        let tables = crate::transform::FieldSpecTables::builtin().unwrap();
        fix_name_references(
            rs,
            &t.name_reference,
            &|g| tables.is_cluster_scoped(g),
            None,
        )
    }

    #[test]
    fn follows_a_renamed_config_map_in_a_deployment() {
        let mut cm = res("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n");
        rename(&mut cm, "cfg-5g7h");
        let dep = res(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n        - configMapRef:\n            name: cfg\n      volumes:\n      - name: v\n        configMap:\n          name: cfg\n      - name: w\n        configMap:\n          name: other\n",
        );
        let mut rs = vec![cm, dep];
        run(&mut rs).unwrap();
        let spec = rs[1].node.get_path(&["spec", "template", "spec"]).unwrap();
        let vols = spec.get("volumes").unwrap().as_seq().unwrap();
        assert_eq!(vols[0].str_at(&["configMap", "name"]), Some("cfg-5g7h"));
        assert_eq!(vols[1].str_at(&["configMap", "name"]), Some("other"));
        let c = &spec.get("containers").unwrap().as_seq().unwrap()[0];
        let ef = &c.get("envFrom").unwrap().as_seq().unwrap()[0];
        assert_eq!(ef.str_at(&["configMapRef", "name"]), Some("cfg-5g7h"));
    }

    #[test]
    fn role_binding_subjects_follow_name_and_namespace() {
        let mut sa = res("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n");
        sa.prev_ids.push(sa.id());
        *sa.node.ensure_path(&["metadata", "name"]) = Node::str("p-sa");
        *sa.node.ensure_path(&["metadata", "namespace"]) = Node::str("team");
        let rb = res(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: rb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: view\nsubjects:\n- kind: ServiceAccount\n  name: sa\n  namespace: default\n",
        );
        let mut rs = vec![sa, rb];
        run(&mut rs).unwrap();
        let s = &rs[1].node.get("subjects").unwrap().as_seq().unwrap()[0];
        assert_eq!(s.str_at(&["name"]), Some("p-sa"));
        assert_eq!(s.str_at(&["namespace"]), Some("team"));
    }

    /// For field provenance, a subject's name that already is the referred object's is told
    /// when kustomize writes it anyway (the referral has a namespace: `setMapping`); a scalar
    /// reference to an object whose name did not change is not written, so not told.
    #[test]
    fn tells_a_subject_name_written_with_its_value() {
        // Each object moved into `team` by a namespace transformer (its id before kept).
        let moved = |text: &str| {
            let mut r = res(text);
            r.prev_ids.push(r.id());
            *r.node.ensure_path(&["metadata", "namespace"]) = Node::str("team");
            r
        };
        let mut rs = vec![
            moved("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n"),
            moved("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"),
            moved(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: view\nsubjects:\n- kind: ServiceAccount\n  name: sa\n  namespace: team\n",
            ),
            moved(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  volumes:\n  - name: v\n    configMap:\n      name: cfg\n",
            ),
        ];
        let t = ReferenceTables::builtin();
        let tables = crate::transform::FieldSpecTables::builtin().unwrap();
        let mut told: Vec<(usize, String)> = Vec::new();
        let mut tell =
            |i: usize, at: &[PathStep<'_>]| told.push((i, crate::transform::fieldspec::dotted(at)));
        fix_name_references(
            &mut rs,
            &t.name_reference,
            &|g| tables.is_cluster_scoped(g),
            Some(&mut tell),
        )
        .unwrap();
        assert_eq!(told, [(2, "subjects.0.name".to_string())]);
    }

    #[test]
    fn ambiguous_references_are_errors_unless_identical() {
        let mut a = res("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: x\n");
        let mut b = res("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: y\n");
        rename(&mut a, "s-1");
        rename(&mut b, "s-2");
        let cr = res(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules:\n- resourceNames: [s]\n",
        );
        let mut rs = vec![a, b, cr];
        let e = run(&mut rs).unwrap_err();
        assert!(
            e.message.contains("found multiple possible referrals"),
            "{}",
            e.message
        );
        // The objects are whole again after the error.
        assert_eq!(rs[2].kind(), "ClusterRole");
        assert_eq!(rs[0].name(), "s-1");
    }

    #[test]
    fn affix_lists_compare_by_their_tails() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(same_ending(&s(&["a", "b"]), &s(&["b"])));
        assert!(!same_ending(&s(&["a", "b"]), &s(&["a"])));
        assert!(same_ending(&s(&[]), &s(&[])));
        assert!(!same_ending(&s(&[]), &s(&["a"])));
    }
}
