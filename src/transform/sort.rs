//! Output order: `sortOptions` of the root kustomization and the `--reorder` flag, resolved
//! into a [`SortChoice`] ([`choose`]), and [`order`], kustomize's legacy kind order
//! (`api/internal/builtins/SortOrderTransformer.go`) or FIFO. Only reorders; never edits.

use std::cmp::Ordering;

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fasthash::FastMap;
use crate::kustomization::SortOptions;
use crate::resource::{Gvk, Resource};

use super::fieldspec::GvkRef;

/// The `--reorder` flag as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reorder {
    #[default]
    Unspecified,
    Legacy,
    None,
}

impl Reorder {
    /// Parses the flag's value (`legacy` or `none`).
    pub fn parse(s: &str) -> Result<Reorder> {
        match s {
            "legacy" => Ok(Reorder::Legacy),
            "none" => Ok(Reorder::None),
            other => Err(Error::new(
                ErrorKind::Usage,
                format!("illegal flag value --reorder {other}; legal values: [legacy none]"),
            )),
        }
    }
}

/// How to order the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SortChoice {
    /// The order resources were read and generated in.
    Fifo,
    /// By kind (`order_first` kinds first, in order; then other kinds; `order_last` kinds last),
    /// then by group/version/kind text, then namespace and name.
    Legacy {
        order_first: Vec<String>,
        order_last: Vec<String>,
    },
}

/// kustomize's default legacy order, first part (`defaultOrderFirst`); kyaml's
/// `Gvk.IsLessThan` ranks kinds by the same list.
pub(crate) const LEGACY_ORDER_FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

/// kustomize's default legacy order, last part (`defaultOrderLast`).
pub(crate) const LEGACY_ORDER_LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// kustomize's default legacy order (`defaultOrderFirst`, `defaultOrderLast`).
pub(crate) fn default_legacy() -> SortChoice {
    SortChoice::Legacy {
        order_first: LEGACY_ORDER_FIRST
            .iter()
            .map(|s| (*s).to_string())
            .collect(),
        order_last: LEGACY_ORDER_LAST.iter().map(|s| (*s).to_string()).collect(),
    }
}

/// Resolves the root kustomization's `sortOptions` and the `--reorder` flag as kustomize does
/// (`api/krusty/kustomizer.go`, `applySortOrder`): `sortOptions` wins (with a warning when the
/// flag is also given); otherwise `--reorder none` keeps FIFO and anything else is legacy.
pub(crate) fn choose(
    sort_options: Option<&SortOptions>,
    reorder: Reorder,
    warnings: &mut Warnings,
) -> Result<SortChoice> {
    let Some(opts) = sort_options else {
        return Ok(match reorder {
            Reorder::None => SortChoice::Fifo,
            Reorder::Legacy | Reorder::Unspecified => default_legacy(),
        });
    };
    if reorder != Reorder::Unspecified {
        warnings.warn(
            "Sorting order is set both in 'kustomization.yaml' ('sortOptions') and in a CLI flag ('--reorder'). Using the kustomization file over the CLI flag.",
        );
    }
    match opts.order.as_deref().unwrap_or("") {
        "fifo" => {
            if opts.legacy_sort_options.is_some() {
                return Err(Error::new(
                    ErrorKind::Kustomization,
                    "the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'",
                ));
            }
            Ok(SortChoice::Fifo)
        }
        "legacy" => Ok(match &opts.legacy_sort_options {
            Some(l) => SortChoice::Legacy {
                order_first: l.order_first.clone(),
                order_last: l.order_last.clone(),
            },
            None => default_legacy(),
        }),
        _ => Err(Error::new(
            ErrorKind::Kustomization,
            "the field 'sortOptions.order' must be one of [fifo, legacy]",
        )),
    }
}

/// Puts resources in the chosen order.
pub(crate) fn order(resources: &mut Vec<Resource>, choice: &SortChoice) {
    let SortChoice::Legacy {
        order_first,
        order_last,
    } = choice
    else {
        return;
    };
    let mut rank: FastMap<&str, i64> = FastMap::default();
    let n_first = i64::try_from(order_first.len()).unwrap_or(i64::MAX);
    for (i, k) in order_first.iter().enumerate() {
        rank.insert(k, i64::try_from(i).unwrap_or(0) - n_first);
    }
    for (i, k) in order_last.iter().enumerate() {
        rank.insert(k, i64::try_from(i).unwrap_or(0) + 1);
    }
    // Each object's sort key is made once, and positions are sorted, not objects.
    let keys: Vec<Key> = resources
        .iter()
        .map(|r| {
            let gvk = GvkRef::of(&r.node);
            Key {
                rank: rank.get(gvk.kind).copied().unwrap_or(0),
                gvk,
                gvk_text: joined(
                    &[
                        or(gvk.group, "~G"),
                        or(gvk.version, "~V"),
                        or(gvk.kind, "~K"),
                    ],
                    '_',
                ),
                ns_name: joined(&[or(r.namespace(), "~X"), or(r.name(), "~N")], '|'),
            }
        })
        .collect();
    let mut positions: Vec<usize> = (0..keys.len()).collect();
    positions.sort_by(|&a, &b| match (keys.get(a), keys.get(b)) {
        (Some(a), Some(b)) => key_cmp(a, b),
        _ => Ordering::Equal,
    });
    drop(keys);
    let mut slots: Vec<Option<Resource>> = resources.drain(..).map(Some).collect();
    resources.extend(
        positions
            .iter()
            .filter_map(|&i| slots.get_mut(i).and_then(Option::take)),
    );
}

/// kustomize's `Gvk.IsLessThan` with the default kind order: the order kustomize keeps its
/// field-spec tables in (which shows in some of its messages).
pub(crate) fn default_gvk_cmp(a: &Gvk, b: &Gvk) -> Ordering {
    let SortChoice::Legacy { order_first, .. } = default_legacy() else {
        return Ordering::Equal;
    };
    let n = i64::try_from(order_first.len()).unwrap_or(0);
    let rank = |k: &str| {
        order_first
            .iter()
            .position(|f| f == k)
            .map_or(0, |i| i64::try_from(i).unwrap_or(0) - n)
    };
    rank(&a.kind)
        .cmp(&rank(&b.kind))
        .then_with(|| a.to_string().cmp(&b.to_string()))
}

/// What the legacy order compares of one object.
struct Key<'a> {
    /// Place of the kind in the order lists (negative for `order_first`, 0 for other kinds).
    rank: i64,
    gvk: GvkRef<'a>,
    /// The group, version and kind as kustomize prints them (`Gvk.String()`:
    /// `group_version_kind`, `~G`, `~V`, `~K` for empty parts).
    gvk_text: String,
    /// The rest of the id as kustomize prints it (`ResId.String()`: `gvk|namespace|name`, `~X`
    /// for no namespace, `~N` for no name).
    ns_name: String,
}

/// Objects of different kinds by [`gvk_cmp`], others by their printed ids (which, the kinds
/// being equal, compare as their `namespace|name` ends).
fn key_cmp(a: &Key, b: &Key) -> Ordering {
    let (ga, gb) = (&a.gvk, &b.gvk);
    if (ga.group, ga.version, ga.kind) != (gb.group, gb.version, gb.kind) {
        return gvk_cmp(a, b);
    }
    a.ns_name.cmp(&b.ns_name)
}

/// `v`, or `empty` when `v` is empty.
fn or<'a>(v: &'a str, empty: &'a str) -> &'a str {
    if v.is_empty() { empty } else { v }
}

/// The parts joined with `sep`.
fn joined(parts: &[&str], sep: char) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        out.push_str(p);
    }
    out
}

/// kustomize's `gvkLessThan`: by rank of the kind, then by `group_version_kind` text — except
/// that two Namespace kinds of which one has no group compare the other way round.
fn gvk_cmp(a: &Key, b: &Key) -> Ordering {
    if a.rank != b.rank {
        return a.rank.cmp(&b.rank);
    }
    let (ga, gb) = (&a.gvk, &b.gvk);
    if ga.kind == "Namespace"
        && gb.kind == "Namespace"
        && (ga.group.is_empty() || gb.group.is_empty())
    {
        b.gvk_text.cmp(&a.gvk_text)
    } else {
        a.gvk_text.cmp(&b.gvk_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kustomization::LegacySortOptions;
    use crate::yaml::parse_documents;

    fn names(choice: &SortChoice) -> Vec<String> {
        let mut rs: Vec<Resource> = parse_documents(include_str!("testdata/sort.in.yaml"))
            .unwrap()
            .into_iter()
            .map(|d| Resource::new(d.node, None))
            .collect();
        order(&mut rs, choice);
        rs.iter()
            .map(|r| format!("{}/{}", r.kind(), r.name()))
            .collect()
    }

    // Orders checked against `kubectl kustomize` on the same objects.
    #[test]
    fn legacy_default_order() {
        assert_eq!(
            names(&default_legacy()),
            [
                "Namespace/z",
                "Namespace/y",
                "Role/r",
                "ConfigMap/a",
                "ConfigMap/c",
                "Secret/s",
                "Service/b",
                "Deployment/a",
                "PodDisruptionBudget/p",
                "Alpha/q",
                "Zeta/q",
                "ValidatingWebhookConfiguration/v"
            ]
        );
    }

    /// Objects of one kind compare by their printed ids (`~X` for no namespace), not by
    /// namespace then name: `ab|x` sorts before `a|y` ('b' < '|'). Checked with `kubectl
    /// kustomize`.
    #[test]
    fn same_kind_by_printed_id() {
        let mut rs: Vec<Resource> = parse_documents(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  namespace: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: z\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: ab\n",
        )
        .unwrap()
        .into_iter()
        .map(|d| Resource::new(d.node, None))
        .collect();
        order(&mut rs, &default_legacy());
        let names: Vec<&str> = rs.iter().map(Resource::name).collect();
        assert_eq!(names, ["x", "y", "z"]);
    }

    #[test]
    fn legacy_custom_order() {
        let opts = SortOptions {
            order: Some("legacy".into()),
            legacy_sort_options: Some(LegacySortOptions {
                order_first: vec!["Secret".into(), "Zeta".into()],
                order_last: vec!["Service".into()],
            }),
        };
        let choice = choose(Some(&opts), Reorder::Unspecified, &mut Warnings::default()).unwrap();
        assert_eq!(
            names(&choice),
            [
                "Secret/s",
                "Zeta/q",
                "ValidatingWebhookConfiguration/v",
                "Deployment/a",
                "Alpha/q",
                "Namespace/z",
                "Namespace/y",
                "PodDisruptionBudget/p",
                "Role/r",
                "ConfigMap/a",
                "ConfigMap/c",
                "Service/b"
            ]
        );
    }

    #[test]
    fn fifo_and_flag_rules() {
        let mut w = Warnings::default();
        assert_eq!(
            choose(None, Reorder::None, &mut w).unwrap(),
            SortChoice::Fifo
        );
        assert_eq!(
            choose(None, Reorder::Unspecified, &mut w).unwrap(),
            default_legacy()
        );
        let fifo = SortOptions {
            order: Some("fifo".into()),
            legacy_sort_options: None,
        };
        assert_eq!(
            choose(Some(&fifo), Reorder::Legacy, &mut w).unwrap(),
            SortChoice::Fifo
        );
        assert_eq!(w.messages().len(), 1);
        let bad = SortOptions {
            order: Some("fifo".into()),
            legacy_sort_options: Some(LegacySortOptions::default()),
        };
        assert!(choose(Some(&bad), Reorder::Unspecified, &mut w).is_err());
        assert!(choose(Some(&SortOptions::default()), Reorder::Unspecified, &mut w).is_err());
        let first = names(&SortChoice::Fifo);
        assert_eq!(first[0], "Service/b");
        assert!(Reorder::parse("bogus").is_err());
    }
}
