//! Patch targets: a selector compiled as kustomize's `SelectorRegex` (anchored regular
//! expressions, label and annotation selectors) and the objects it picks; a selector's text
//! for messages.

use std::fmt::Write as _;

use crate::pattern::Anchored;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::Selector;
use crate::resource::{IdRef, ResId, Resource, effective_namespace, gvk_parts};

use crate::yaml::Node;

use super::index::{Index, exact_name, has_any_id};
use super::*;

/// A selector's text for messages: `{kind: Deployment, name: web}`.
pub(in crate::render) fn selector_text(s: &Selector) -> String {
    let mut out = String::new();
    for (k, v) in [
        ("group", &s.group),
        ("version", &s.version),
        ("kind", &s.kind),
        ("name", &s.name),
        ("namespace", &s.namespace),
        ("labelSelector", &s.label_selector),
        ("annotationSelector", &s.annotation_selector),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            if !out.is_empty() {
                out.push_str(", ");
            }
            let _ = write!(out, "{k}: {v}");
        }
    }
    format!("{{{out}}}")
}

pub(super) fn selector_is_empty(s: &Selector) -> bool {
    [
        &s.group,
        &s.version,
        &s.kind,
        &s.name,
        &s.namespace,
        &s.label_selector,
        &s.annotation_selector,
    ]
    .iter()
    .all(|v| v.as_deref().is_none_or(str::is_empty))
}

/// A selector compiled as kustomize's `SelectorRegex`: each part an anchored regular
/// expression.
struct Compiled {
    group: Option<Anchored>,
    version: Option<Anchored>,
    kind: Option<Anchored>,
    name: Option<Anchored>,
    namespace: Option<Anchored>,
    labels: Option<crate::resource::selector::Selector>,
    annotations: Option<crate::resource::selector::Selector>,
}

fn compile(s: &Selector) -> Result<Compiled> {
    let re = |part: &Option<String>| -> Result<Option<Anchored>> {
        match part.as_deref().filter(|p| !p.is_empty()) {
            None => Ok(None),
            Some(p) => Anchored::new(p).map(Some).map_err(|e| {
                Error::new(
                    ErrorKind::Patch,
                    format!("invalid regular expression {p:?} in a patch target: {e}"),
                )
            }),
        }
    };
    let sel = |part: &Option<String>| -> Result<Option<crate::resource::selector::Selector>> {
        match part.as_deref().filter(|p| !p.trim().is_empty()) {
            None => Ok(None),
            Some(p) => crate::resource::selector::Selector::parse(p)
                .map(Some)
                .map_err(|e| Error::new(ErrorKind::Patch, e.message)),
        }
    };
    Ok(Compiled {
        group: re(&s.group)?,
        version: re(&s.version)?,
        kind: re(&s.kind)?,
        name: re(&s.name)?,
        namespace: re(&s.namespace)?,
        labels: sel(&s.label_selector)?,
        annotations: sel(&s.annotation_selector)?,
    })
}

/// The resources a selector picks (kustomize's `resWrangler.Select`), in slot order: the
/// namespace and name may match the original id or the current one, the group/version/kind
/// the current one. With an `index` and a name without regex metacharacters (which the
/// anchored pattern matches only literally), only the resources with that original or current
/// name are tested; otherwise every resource is.
pub(super) fn select(
    slots: &[Option<Resource>],
    index: Option<&mut Index>,
    s: &Selector,
    cluster_scoped: ScopeFn<'_>,
) -> Result<Vec<usize>> {
    let c = compile(s)?;
    let exact = match (&c.name, index) {
        (Some(Anchored::Simple(name)), Some(index)) if exact_name(name) => {
            index.by_name(slots, name)
        }
        _ => None,
    };
    let picks = |&i: &usize| {
        slots
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|r| selected(&c, r, cluster_scoped))
    };
    Ok(match exact {
        Some(candidates) => candidates.into_iter().filter(picks).collect(),
        None => (0..slots.len()).filter(picks).collect(),
    })
}

/// For field provenance, before the patch runs: the objects of `resources` each document of
/// `p` applies to, as [`apply_one`] picks them (a `patches:` target's selection for its one
/// document, else the object each strategic merge document's id names; a JSON 6902 list's
/// target). Indices into `resources`; an error of the patch's own is reported when it runs.
pub(in crate::render) fn chosen(
    resources: &[Resource],
    p: &Patch,
    cluster_scoped: ScopeFn<'_>,
) -> Vec<Vec<usize>> {
    let by_target = |s: &Selector| match compile(s) {
        Ok(c) => (0..resources.len())
            .filter(|&i| selected(&c, &resources[i], cluster_scoped))
            .collect(),
        Err(_) => Vec::new(),
    };
    match (&p.body, &p.target) {
        (Body::Nothing, _) => Vec::new(),
        (Body::Smp(_), Some(target)) if p.flavor == Flavor::Patch => vec![by_target(target)],
        (Body::Smp(docs), _) => docs
            .iter()
            .map(|(doc, _)| {
                let id = ResId::of(doc);
                let cluster = cluster_scoped(&id.gvk);
                (0..resources.len())
                    .filter(|&i| has_any_id(&resources[i], id.borrowed(), cluster))
                    .collect()
            })
            .collect(),
        (Body::Json(_), Some(target)) => vec![by_target(target)],
        (Body::Json(_), None) => Vec::new(),
    }
}

/// Whether the compiled selector `c` picks `r`.
fn selected(c: &Compiled, r: &Resource, cluster_scoped: ScopeFn<'_>) -> bool {
    let is = |re: &Option<Anchored>, a: &str| re.as_ref().is_none_or(|re| re.is_match(a));
    // The group, version and kind first: they need no `metadata` lookups.
    let (group, version, kind) = gvk_parts(&r.node);
    if !is(&c.group, group) || !is(&c.version, version) || !is(&c.kind, kind) {
        return false;
    }
    let cur = r.id_ref();
    let org = r.original_id_ref();
    let ns_matches = |id: IdRef<'_>| {
        is(
            &c.namespace,
            effective_namespace(id.namespace, cluster_scoped(&id.gvk())),
        )
    };
    if c.namespace.is_some() && !ns_matches(org) && !ns_matches(cur) {
        return false;
    }
    if !is(&c.name, org.name) && !is(&c.name, cur.name) {
        return false;
    }
    if let Some(l) = &c.labels
        && !l.matches(&r.node)
    {
        return false;
    }
    if let Some(a) = &c.annotations {
        let mut fake = Node::Map(Default::default());
        if let Some(ann) = r.node.get_path(&["metadata", "annotations"]) {
            *fake.ensure_path(&["metadata", "labels"]) = ann.clone();
        }
        if !a.matches(&fake) {
            return false;
        }
    }
    true
}

/// The positions of the resources a selector picks (for other selector-driven transformers).
pub(in crate::render) fn select_indices(
    slots: &[Option<Resource>],
    s: &Selector,
    cluster_scoped: ScopeFn<'_>,
) -> Result<Vec<usize>> {
    select(slots, None, s, cluster_scoped)
}
