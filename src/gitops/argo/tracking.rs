//! Resource tracking: the annotation or label Argo CD writes on every object it renders
//! (`SetAppInstance`, util/argo/resource_tracking.go). Off unless asked for: it is noise in a
//! review, and the same on both sides.

use crate::resource::{Gvk, Resource};
use crate::yaml::{Map, Node};

/// `--argo-tracking`: which of Argo CD's tracking methods to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Tracking {
    #[default]
    Off,
    Annotation,
    Label,
    AnnotationAndLabel,
}

const TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
const INSTALLATION_ID: &str = "argocd.argoproj.io/installation-id";
const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// `LabelMaxLength`.
const LABEL_MAX: usize = 63;

/// Writes the tracking marks on every object but CustomResourceDefinitions (`kube.IsCRD`).
/// `app` is the instance name; `dest_ns` the destination namespace (the id's namespace for an
/// object without one).
pub(crate) fn apply(resources: &mut [Resource], how: Tracking, app: &str, dest_ns: &str) {
    if how == Tracking::Off {
        return;
    }
    for r in resources.iter_mut() {
        let gvk = Gvk::of(&r.node);
        if gvk.group == "apiextensions.k8s.io" && gvk.kind == "CustomResourceDefinition" {
            continue;
        }
        if matches!(how, Tracking::Annotation | Tracking::AnnotationAndLabel) {
            let ns = match r.node.str_at(&["metadata", "namespace"]).unwrap_or("") {
                "" => dest_ns.to_string(),
                ns => ns.to_string(),
            };
            let name = r
                .node
                .str_at(&["metadata", "name"])
                .unwrap_or("")
                .to_string();
            let id = format!("{app}:{}/{}:{ns}/{name}", gvk.group, gvk.kind);
            let annotations = metadata_map(&mut r.node, "annotations");
            annotations.shift_remove(INSTALLATION_ID);
            annotations.insert(TRACKING_ID.into(), Node::str(id));
        }
        let label = match how {
            Tracking::Label => Some(app.to_string()),
            Tracking::AnnotationAndLabel => Some(truncate_label(app)),
            _ => None,
        };
        if let Some(value) = label {
            metadata_map(&mut r.node, "labels").insert(INSTANCE_LABEL.into(), Node::str(value));
        }
    }
}

/// `TruncateLabel`: at most 63 bytes, then trailing characters that are not alphanumeric cut.
fn truncate_label(v: &str) -> String {
    if v.len() <= LABEL_MAX {
        return v.to_string();
    }
    let mut cut = LABEL_MAX;
    while !v.is_char_boundary(cut) {
        cut -= 1;
    }
    v[..cut]
        .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

/// `metadata.<key>`, made a map when missing or null.
fn metadata_map<'a>(node: &'a mut Node, key: &str) -> &'a mut Map {
    let meta = node.ensure_path(&["metadata"]);
    if !matches!(meta, Node::Map(_)) {
        *meta = Node::empty_map();
    }
    let slot = meta.ensure_path(&[key]);
    if !matches!(slot, Node::Map(_)) {
        *slot = Node::empty_map();
    }
    match slot {
        Node::Map(m) => m,
        _ => unreachable!("set to a map above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_names_group_kind_namespace_and_name() {
        let node = crate::yaml::parse_documents(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
        )
        .unwrap()
        .remove(0)
        .node;
        let mut rs = vec![Resource::new(node, None)];
        apply(&mut rs, Tracking::AnnotationAndLabel, "guestbook", "prod");
        let n = &rs[0].node;
        assert_eq!(
            n.str_at(&["metadata", "annotations", TRACKING_ID]),
            Some("guestbook:apps/Deployment:prod/web")
        );
        assert_eq!(
            n.str_at(&["metadata", "labels", INSTANCE_LABEL]),
            Some("guestbook")
        );
        assert_eq!(
            truncate_label(&format!("{}-x", "a".repeat(62))),
            "a".repeat(62)
        );
    }
}
