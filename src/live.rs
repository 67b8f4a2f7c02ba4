//! Reads object streams for `ply diff`: a live snapshot as `kubectl get -o yaml|json` printed
//! it (one object, a `kind: List` or any `*List` with `items`, or a multi-document stream) and
//! desired files, flattened into objects; and extracts the `last-applied-configuration`
//! annotation. Knows nothing of merging, diffing or printing.

use std::sync::Arc;

use crate::diag::{Error, ErrorKind};
use crate::resource::Resource;
use crate::source::{Location, SourceFile};
use crate::yaml::{Node, parse};

/// The annotation in which client-side `kubectl apply` keeps the configuration it applied.
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Reads every object of a YAML or JSON stream. Empty and `null` documents are skipped; list
/// objects (`kind: List`, or any kind ending in `List` that has an `items` list, as
/// `kubectl get` prints several objects) are replaced by their items, recursively. Every object
/// must be a map with `apiVersion`, `kind` and `metadata.name`.
///
/// kubectl reads `-f` files with sigs.k8s.io/yaml (go-yaml v2), where a plain `y`, `yes` or `on`
/// is `true`; so does ply (`kubectl get -o yaml` quotes such strings, so snapshots agree).
pub fn read_objects(file: &Arc<SourceFile>) -> Result<Vec<Resource>, Error> {
    let docs = parse::parse_config_documents(&file.text).map_err(|e| {
        let err = Error::new(ErrorKind::Yaml, format!("{}: {}", file.display, e.message));
        match e.offset {
            Some(o) => err.at(Location::line_at(file.clone(), o)),
            None => err,
        }
    })?;
    let mut out = Vec::new();
    for doc in docs {
        let at = Location::line_at(file.clone(), doc.offset);
        flatten(doc.node, &at, &mut out)?;
    }
    Ok(out)
}

/// True for a list object whose items should be read as objects.
fn is_list(node: &Node) -> bool {
    node.str_at(&["kind"]).is_some_and(|k| k.ends_with("List"))
        && matches!(node.get("items"), Some(Node::Seq(_)))
}

fn flatten(node: Node, at: &Location, out: &mut Vec<Resource>) -> Result<(), Error> {
    match node {
        Node::Null => Ok(()),
        Node::Map(m) if m.is_empty() => Ok(()),
        Node::Map(_) if is_list(&node) => {
            let Node::Map(mut m) = node else {
                return Ok(());
            };
            if let Some(Node::Seq(items)) = m.shift_remove("items") {
                for item in items {
                    flatten(item, at, out)?;
                }
            }
            Ok(())
        }
        Node::Map(_) => {
            check_object(&node, at)?;
            out.push(Resource::new(node, Some(at.clone())));
            Ok(())
        }
        other => Err(Error::new(
            ErrorKind::InvalidResource,
            format!("expected an object (a map), found a {}", other.kind_name()),
        )
        .at(at.clone())),
    }
}

fn check_object(node: &Node, at: &Location) -> Result<(), Error> {
    // `name: 8080`: kustomize renders it, the API server refuses it.
    names_are_strings(node, Some(at))?;
    let missing = if node.str_at(&["apiVersion"]).is_none_or(str::is_empty) {
        Some("apiVersion")
    } else if node.str_at(&["kind"]).is_none_or(str::is_empty) {
        Some("kind")
    } else if node.str_at(&["metadata", "name"]).is_none_or(str::is_empty) {
        Some("metadata.name")
    } else {
        None
    };
    match missing {
        Some(field) => Err(Error::new(
            ErrorKind::InvalidResource,
            format!("object without {field}"),
        )
        .at(at.clone())
        .label(format!("this object has no {field}"))),
        None => Ok(()),
    }
}

/// The object's `last-applied-configuration` annotation, parsed. `Ok(None)` when the object
/// has none or it is empty; an error when it is not one JSON (or YAML) object.
pub(crate) fn last_applied(node: &Node) -> Result<Option<Node>, Error> {
    let Some(text) = node.str_at(&["metadata", "annotations", LAST_APPLIED]) else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    match parse::parse_one(text) {
        Ok(Node::Null) => Ok(None),
        Ok(n @ Node::Map(_)) => Ok(Some(n)),
        Ok(other) => Err(Error::new(
            ErrorKind::Live,
            format!(
                "the {LAST_APPLIED} annotation of {} holds a {}, not an object",
                describe(node),
                other.kind_name()
            ),
        )),
        Err(e) => Err(Error::new(
            ErrorKind::Live,
            format!(
                "the {LAST_APPLIED} annotation of {} is not valid JSON: {}",
                describe(node),
                e.message
            ),
        )),
    }
}

/// Refuses a rendered object whose `metadata.name` or `metadata.namespace` is a number or a
/// boolean (`name: 8080`, which kustomize and `ply render` render as written): the API server
/// decodes both as strings, so `kubectl apply` fails on it, and no apply can be predicted.
pub(crate) fn check_names_are_strings(objects: &[Resource]) -> Result<(), Error> {
    objects
        .iter()
        .try_for_each(|r| names_are_strings(&r.node, r.origin.as_ref()))
}

/// [`check_names_are_strings`] of one object, read from `at`.
fn names_are_strings(node: &Node, at: Option<&Location>) -> Result<(), Error> {
    for key in ["name", "namespace"] {
        let Some(v) = node.get_path(&["metadata", key]) else {
            continue;
        };
        if v.is_null() || !v.is_scalar() || v.as_str().is_some() {
            continue;
        }
        let text = crate::resource::id_field_text(node, key).unwrap_or_default();
        return Err(Error::new(
            ErrorKind::InvalidResource,
            format!(
                "{}: metadata.{key} is the {} {text}, not a string",
                describe(node),
                v.kind_name(),
            ),
        )
        .at_opt(at.cloned())
        .label(format!("its metadata.{key} is not a string"))
        .help(format!(
            "the API server reads metadata.{key} as a string only, so `kubectl apply` \
             refuses this object; quote it in the source (`{key}: \"{text}\"`)"
        )));
    }
    Ok(())
}

/// Checks what `ply diff` reads from a live object beyond its identity, before any prediction:
/// the last-applied annotation must be one JSON object, and `metadata.managedFields` must
/// decode as the API server decodes it (entries, operations, fieldsType, fieldsV1 sets). A
/// snapshot that fails names the live file, the object and the field (a server never returns
/// such an object, so the snapshot is broken or was edited).
pub(crate) fn check_snapshot(objects: &[Resource]) -> Result<(), Error> {
    for r in objects {
        let fail = |e: Error, field: &str| {
            Error::new(
                ErrorKind::Live,
                format!("live object {}: {field}: {}", describe(&r.node), e.message),
            )
            .at_opt(r.origin.clone())
            .label(format!("this object's {field} is malformed"))
            .help("take the snapshot again with `kubectl get -o yaml`, or remove the field")
        };
        if let Err(e) = last_applied(&r.node) {
            return Err(fail(e, &format!("metadata.annotations[{LAST_APPLIED}]")));
        }
        if let Err(e) = crate::merge::ssa::server::decode_managed_fields(&r.node) {
            return Err(fail(e, "metadata.managedFields"));
        }
    }
    Ok(())
}

/// `Kind namespace/name` for messages.
fn describe(node: &Node) -> String {
    let kind = node.str_at(&["kind"]).unwrap_or("");
    let id = |key| crate::resource::id_field_text(node, key);
    let name = id("name").unwrap_or_default();
    match id("namespace") {
        Some(ns) if !ns.is_empty() => format!("{kind} {ns}/{name}"),
        _ => format!("{kind} {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Resource>, Error> {
        read_objects(&SourceFile::new("/snap.yaml", text))
    }

    fn names(rs: &[Resource]) -> Vec<String> {
        rs.iter().map(|r| r.name().to_string()).collect()
    }

    #[test]
    fn rendered_names_that_are_not_strings_are_refused_for_apply() {
        let object = |meta: &str| {
            let mut node = crate::yaml::parse::parse_one(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {meta}\n"
            ))
            .unwrap();
            // As a render leaves it (`render::accumulate`).
            crate::resource::keep_id_text(&mut node);
            Resource::new(node, None)
        };
        let ok = [object("{name: a, namespace: b}"), object("{name: \"80\"}")];
        assert!(check_names_are_strings(&ok).is_ok());
        let e = check_names_are_strings(&[object("{name: 8080}")]).unwrap_err();
        assert_eq!(
            e.message,
            "ConfigMap 8080: metadata.name is the integer 8080, not a string"
        );
        let e = check_names_are_strings(&[object("{name: a, namespace: 0x10}")]).unwrap_err();
        assert_eq!(
            e.message,
            "ConfigMap 0x10/a: metadata.namespace is the integer 0x10, not a string"
        );
        // Read from a file (a snapshot, or a rendered file given to `ply diff`).
        let e = read("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: true}\n").unwrap_err();
        assert_eq!(
            e.message,
            "ConfigMap true: metadata.name is the boolean true, not a string"
        );
        let e = read("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: 7}\n");
        assert_eq!(
            e.unwrap_err().message,
            "ConfigMap 7/a: metadata.namespace is the integer 7, not a string"
        );
    }

    #[test]
    fn single_object() {
        let rs = read("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n").unwrap();
        assert_eq!(names(&rs), ["a"]);
    }

    #[test]
    fn kind_list_and_typed_lists_are_flattened() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\nmetadata:\n  resourceVersion: \"\"\n---\napiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n";
        assert_eq!(names(&read(text).unwrap()), ["a", "b", "c"]);
    }

    #[test]
    fn empty_list_and_empty_documents() {
        let text = "---\n---\napiVersion: v1\nkind: List\nitems: []\n---\nnull\n";
        assert!(read(text).unwrap().is_empty());
    }

    #[test]
    fn multi_document_and_json() {
        let text = "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"metadata\": {\"name\": \"d\"}}]}\n";
        let rs = read(text).unwrap();
        assert_eq!(names(&rs), ["d"]);
        assert_eq!(rs[0].kind(), "Deployment");
    }

    #[test]
    fn a_kind_named_list_without_items_is_an_object() {
        let text =
            "apiVersion: example.com/v1\nkind: ShoppingList\nmetadata:\n  name: s\nspec: {}\n";
        assert_eq!(names(&read(text).unwrap()), ["s"]);
    }

    #[test]
    fn errors_name_the_line() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\n";
        let e = read(text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidResource);
        assert_eq!(
            e.plain(),
            "object without metadata.name\n  at /snap.yaml:6:1"
        );
        let e = read("- a\n").unwrap_err();
        assert!(e.message.contains("found a list"), "{}", e.message);
    }

    #[test]
    fn last_applied_is_parsed() {
        let rs = read("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"v1\",\"data\":{\"k\":\"v\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n").unwrap();
        let la = last_applied(&rs[0].node).unwrap().unwrap();
        assert_eq!(la.str_at(&["data", "k"]), Some("v"));
        let none = read("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n").unwrap();
        assert!(last_applied(&none[0].node).unwrap().is_none());
        let bad = read("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '[1]'\n").unwrap();
        assert!(last_applied(&bad[0].node).is_err());
    }
}
