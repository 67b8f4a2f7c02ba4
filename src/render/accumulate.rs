//! Reading resource files into [`Resource`]s (multi-document, empty documents skipped, lists
//! flattened as kustomize does), telling remote URLs from local paths, and pointing
//! diagnostics at the kustomization line that named a path.

use crate::yaml::limits::ReaderLimits;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::Loaded;
use crate::resource::Resource;
use crate::source::{Location, SourceFile};
use crate::yaml::Node;
use crate::yaml::path::PathSeg;

/// A YAML reader's error in `file` as a diagnostic: `{what}: {message}` at the line of the
/// offset (the file's first line when the reader gave none).
pub(super) fn yaml_error(file: &Arc<SourceFile>, what: &str, e: &crate::yaml::ParseError) -> Error {
    let start = e.offset.map_or(0, |o| {
        // A key that is not a string is shown at its column.
        if e.message.starts_with(crate::yaml::parse::NON_STRING_KEY) {
            return o;
        }
        file.text
            .get(..o)
            .and_then(|t| t.rfind('\n'))
            .map_or(0, |i| i + 1)
    });
    Error::new(ErrorKind::Yaml, format!("{what}: {}", e.message))
        .at(Location::line_at(Arc::clone(file), start))
}

/// Parses a resource file: every non-empty document is one resource; a document whose kind ends
/// in `List` and which has `items` is replaced by its items. As in kustomize
/// (`api/resource/factory.go`, `inlineAnyEmbeddedLists`), list items join the end of the queue,
/// so they come after the file's later documents.
pub fn parse_resources(file: &Arc<SourceFile>, limits: ReaderLimits) -> Result<Vec<Resource>> {
    let docs = crate::yaml::parse::parse_documents_limited(&file.text, limits)
        .map_err(|e| yaml_error(file, "invalid YAML", &e))?;
    let mut queue: VecDeque<(Node, usize)> = docs.into_iter().map(|d| (d.node, d.offset)).collect();
    let mut out = Vec::new();
    while let Some((node, offset)) = queue.pop_front() {
        let loc = || Location::line_at(Arc::clone(file), offset);
        match &node {
            Node::Null => continue,
            Node::Map(m) if m.is_empty() => continue,
            Node::Map(_) => {}
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidResource,
                    format!(
                        "a resource must be a map (an object with apiVersion, kind and metadata), found a {}",
                        other.kind_name()
                    ),
                )
                .at(loc()));
            }
        }
        let kind = node.str_at(&["kind"]).unwrap_or("").to_string();
        if kind.is_empty() {
            return Err(
                Error::new(ErrorKind::InvalidResource, "missing kind in object")
                    .at(loc())
                    .label("this object has no kind")
                    .help("every resource needs `apiVersion`, `kind` and `metadata.name`"),
            );
        }
        let mut node = node;
        if kind.ends_with("List") {
            match node.get("items") {
                // Not a collection: kept as an object; kustomize gives it the empty
                // `metadata: {}` it lacks (observed with kustomize v5.5.0).
                None => {
                    if let Node::Map(m) = &mut node {
                        m.entry("metadata".to_string())
                            .or_insert_with(Node::empty_map);
                    }
                }
                Some(Node::Null) => continue,
                Some(Node::Seq(items)) => {
                    for item in items {
                        queue.push_back((item.clone(), offset));
                    }
                    continue;
                }
                Some(other) => {
                    return Err(Error::new(
                        ErrorKind::InvalidResource,
                        format!(
                            "expected array in {kind}/items, but found a {}",
                            other.kind_name()
                        ),
                    )
                    .at(loc()));
                }
            }
        } else {
            // A plain `name: 80` is the name "80" (kyaml reads the scalar's text).
            crate::resource::keep_id_text(&mut node);
        }
        if !kind.ends_with("List") && Resource::name_of(&node).is_empty() {
            let msg = if node.get("metadata").is_some_and(Node::is_scalar) {
                "missing Resource metadata"
            } else {
                "missing metadata.name in object"
            };
            return Err(Error::new(ErrorKind::InvalidResource, msg)
                .at(loc())
                .label("this object has no name")
                .help("every resource needs `apiVersion`, `kind` and `metadata.name`"));
        }
        out.push(Resource::new(node, Some(loc())));
    }
    Ok(out)
}

/// The name of an inline configuration's text.
pub(super) const INLINE_CONFIG: &str = "kustomization.yaml (inline configuration)";

/// An entry of `generators:`/`transformers:` that is itself YAML (a multi-line string holding
/// configurations) rather than a path: kustomize tries to read every entry as resources first.
pub(super) fn inline_configs(entry: &str) -> Option<Vec<Resource>> {
    if !entry.contains('\n') && !entry.trim_start().starts_with('{') {
        return None;
    }
    let file = SourceFile::new(INLINE_CONFIG, entry);
    parse_resources(&file, ReaderLimits::DEFAULT)
        .ok()
        .filter(|r| !r.is_empty())
}

/// Reads a `crds:` file: one YAML or JSON map from OpenAPI type names to `{Schema,
/// Dependencies}` definitions (not CustomResourceDefinition objects: kustomize's `crds` field
/// predates them). Anything else is kustomize's "unable to parse open API definition" error.
pub(super) fn parse_crd_definitions(file: &Arc<SourceFile>, shown: &str) -> Result<Node> {
    let bad = |why: String| {
        Error::new(
            ErrorKind::Schema,
            format!("unable to parse open API definition from '{shown}': {why}"),
        )
        .help("`crds:` lists OpenAPI definition files (a map of type name to {Schema, Dependencies}); list CustomResourceDefinition objects under `resources:`")
    };
    let node = crate::yaml::parse::parse_one(&file.text).map_err(|e| bad(e.message))?;
    match &node {
        Node::Null => Ok(Node::empty_map()),
        Node::Map(m) => {
            if let Some((name, v)) = m.iter().find(|(_, v)| !matches!(v, Node::Map(_))) {
                return Err(bad(format!(
                    "the definition of '{name}' is a {}, not a map",
                    v.kind_name()
                )));
            }
            Ok(node)
        }
        other => Err(bad(format!(
            "expected a map of definitions, found a {}",
            other.kind_name()
        ))),
    }
}

/// Whether a file path (a patch, generator or `openapi:` file) is one kustomize's file loader
/// would download: an `http://` or `https://` URL (`api/internal/loader/fileloader.go`, `Load`).
pub(super) fn is_remote_file(path: &str) -> bool {
    crate::remote::url::is_http_url(path)
}

/// Whether a path kustomize would fetch over the network: a URL, a git address, or a
/// `host/org/repo` form (`api/internal/git/repospec.go`, `NewRepoSpecFromURL`). Asked only for
/// paths that name nothing on disk.
pub(super) fn is_remote(path: &str) -> bool {
    crate::remote::is_remote(path)
}

/// Where `field:` of the kustomization lists `value` (falling back to the field, then to the
/// file). `bases` were merged into `resources` on load, so both are searched.
pub(super) fn item_location(loaded: &Loaded, field: &str, value: &str) -> Location {
    let fields: &[&str] = if field == "resources" {
        &["resources", "bases"]
    } else {
        std::slice::from_ref(&field)
    };
    for f in fields {
        if let Some(loc) = find_item(&loaded.file, f, value) {
            return loc;
        }
    }
    // Flow style (`resources: [a.yaml]`): the first occurrence after the field's key.
    let text = &loaded.file.text;
    for f in fields {
        if let Some(key) = text.find(&format!("{f}:")) {
            if let Some(at) = text.get(key..).and_then(|t| t.find(value)) {
                return Location::new(Arc::clone(&loaded.file), key + at, value.len());
            }
        }
    }
    loaded.key_location(&[PathSeg::Key(field.to_string())])
}

fn find_item(file: &Arc<SourceFile>, field: &str, value: &str) -> Option<Location> {
    let mut pos = 0;
    let mut in_field = false;
    for line in file.text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let trimmed = bare.trim_start();
        let indent = bare.len() - trimmed.len();
        if indent == 0
            && !trimmed.starts_with('-')
            && !trimmed.starts_with('#')
            && !trimmed.is_empty()
        {
            in_field = trimmed.starts_with(&format!("{field}:"));
        }
        if in_field {
            if let Some(item) = trimmed.strip_prefix("- ") {
                let item = item.trim();
                let unquoted = item
                    .strip_prefix('"')
                    .and_then(|s| s.strip_suffix('"'))
                    .or_else(|| item.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                    .unwrap_or(item);
                if unquoted == value {
                    let after_dash = trimmed.get(2..).unwrap_or("");
                    let col = indent + 2 + (after_dash.len() - after_dash.trim_start().len());
                    return Some(Location::new(Arc::clone(file), pos + col, item.len()));
                }
            }
        }
        pos += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Resource>> {
        parse_resources(&SourceFile::new("/x/a.yaml", text), ReaderLimits::DEFAULT)
    }

    fn names(rs: &[Resource]) -> Vec<String> {
        rs.iter().map(|r| r.name().to_string()).collect()
    }

    #[test]
    fn documents_and_lists() {
        let rs = parse(
            "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n---\n---\n{}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\napiVersion: v1\nkind: List\nitems:\n",
        )
        .unwrap();
        assert_eq!(names(&rs), ["b", "a"]);
        assert_eq!(rs[0].origin.as_ref().unwrap().line(), 12);
    }

    #[test]
    fn plain_numbers_and_booleans_as_names_are_their_text() {
        // kyaml's `GetName`/`GetNamespace` read the scalar's text; the value still prints as
        // a number or boolean.
        let rs = parse(
            "kind: A\nmetadata:\n  name: 80\n  namespace: 0x10\n---\nkind: A\nmetadata:\n  name: true\n",
        )
        .unwrap();
        assert_eq!((rs[0].name(), rs[0].namespace()), ("80", "0x10"));
        assert_eq!(rs[1].name(), "true");
        assert_eq!(
            rs[0].node.get_path(&["metadata", "name"]),
            Some(&Node::Int(80))
        );
        assert_eq!(
            rs[0].node.get_path(&["metadata", "namespace"]),
            Some(&Node::Int(16))
        );
        assert_eq!(
            rs[1].node.get_path(&["metadata", "name"]),
            Some(&Node::Bool(true))
        );
        // An empty or null name is still no name.
        for text in [
            "kind: A\nmetadata:\n  name:\n",
            "kind: A\nmetadata:\n  name: ~\n",
        ] {
            assert_eq!(
                parse(text).unwrap_err().message,
                "missing metadata.name in object"
            );
        }
    }

    #[test]
    fn invalid_resources() {
        assert_eq!(
            parse("apiVersion: v1\nmetadata:\n  name: x\n")
                .unwrap_err()
                .message,
            "missing kind in object"
        );
        assert_eq!(
            parse("kind: A\nmetadata:\n  labels: {}\n")
                .unwrap_err()
                .message,
            "missing metadata.name in object"
        );
        assert_eq!(parse("- a\n").unwrap_err().kind, ErrorKind::InvalidResource);
        let e = parse("kind: A\nmetadata:\n  name: \"x\n").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Yaml);
    }

    #[test]
    fn remote_urls() {
        for r in [
            "https://github.com/org/repo//dir?ref=v1",
            "github.com/org/repo/dir",
            "git@github.com:org/repo.git",
            "https://raw.githubusercontent.com/a/b/main/x.yaml",
        ] {
            assert!(is_remote(r), "{r}");
        }
        for l in ["base", "../base", "a.yaml", "github/x"] {
            assert!(!is_remote(l), "{l}");
        }
    }
}
