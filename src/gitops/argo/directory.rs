//! A plain-directory source (`findManifests` in reposerver/repository/repository.go): every
//! `*.yaml`, `*.yml` and `*.json` file of the application's directory (recursively with
//! `recurse`), in walk order, filtered by `include` and `exclude`, each document an object.

use std::path::Path;

use crate::diag::{Error, ErrorKind, Result};
use crate::fs::Fs;
use crate::resource::Resource;
use crate::source::{Location, SourceFile};
use crate::yaml::{Node, parse_documents};

use super::app::Directory;
use super::glob;

/// Files that hold this text are skipped (`skipFileRenderingMarker`).
const SKIP_MARKER: &str = "+argocd:skip-file-rendering";

/// The objects of the directory `app_rel` (relative to the repository root) among `files` (every
/// file of the repository, relative, in walk order).
pub(crate) fn render(
    fs: &dyn Fs,
    root: &Path,
    files: &[std::path::PathBuf],
    app_rel: &Path,
    dir: &Directory,
) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    for rel in files {
        let Ok(inside) = rel.strip_prefix(app_rel) else {
            continue;
        };
        if !dir.recurse && inside.components().count() > 1 {
            continue;
        }
        let name = inside.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let wanted = ["yaml", "yml", "json", "jsonnet"]
            .iter()
            .any(|e| name.len() > e.len() + 1 && name.ends_with(&format!(".{e}")));
        if !dir.disable_extension_filter && !wanted {
            continue;
        }
        let inside_text = inside.to_string_lossy();
        if !dir.exclude.is_empty() && glob::matches(&dir.exclude, &inside_text) {
            continue;
        }
        if !dir.include.is_empty() && !glob::matches(&dir.include, &inside_text) {
            continue;
        }
        let path = root.join(rel);
        let text = fs.read_to_string(&path).map_err(|e| Error::io(&path, &e))?;
        if text.contains(SKIP_MARKER) {
            continue;
        }
        if name.ends_with(".jsonnet") {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "not rendered: '{}' is a jsonnet file, and ply does not evaluate jsonnet",
                    rel.display()
                ),
            )
            .help("exclude it (`directory.exclude`) to render the rest of the directory"));
        }
        read_objects(&path, text, name.ends_with(".json"), &mut out)?;
    }
    Ok(out)
}

/// The objects of one file (`getObjsFromYAMLOrJSON`): a JSON file holds one object; a YAML file
/// any number. A file that does not parse is skipped unless it looks like a manifest
/// (`apiVersion:`, `kind:` and `metadata:` in its text).
fn read_objects(path: &Path, text: String, json: bool, out: &mut Vec<Resource>) -> Result<()> {
    let looks_like_manifest =
        text.contains("apiVersion:") && text.contains("kind:") && text.contains("metadata:");
    let file = SourceFile::new(path, text);
    let docs = match parse_documents(&file.text) {
        Ok(d) => d,
        Err(_) if json => return Err(unmarshal_error(&file, 0, "not one JSON object")),
        Err(_) if !looks_like_manifest => return Ok(()),
        Err(e) => return Err(unmarshal_error(&file, e.offset.unwrap_or(0), &e.message)),
    };
    let docs: Vec<_> = docs.into_iter().filter(|d| !d.node.is_null()).collect();
    if json && docs.len() > 1 {
        return Err(unmarshal_error(
            &file,
            0,
            "Found multiple objects. Only single objects are allowed in JSON files.",
        ));
    }
    for d in docs {
        match &d.node {
            Node::Map(m)
                if m.get("kind")
                    .and_then(Node::as_str)
                    .is_some_and(|k| !k.is_empty()) =>
            {
                let at = Location::line_at(file.clone(), d.offset);
                push_object(d.node, at, out);
            }
            _ => return Err(unmarshal_error(&file, d.offset, "Object 'Kind' is missing")),
        }
    }
    Ok(())
}

/// An object, or each item of a `*List` (the repo server splits lists before tracking them).
pub(super) fn push_object(node: Node, at: Location, out: &mut Vec<Resource>) {
    // `Unstructured.IsList`: any object whose `items` is a list; `isNullList`: null items,
    // no spec and no status, nothing.
    let is_list = matches!(node.get("items"), Some(Node::Seq(_)));
    let null_list = matches!(node.get("items"), Some(Node::Null))
        && node.get("spec").is_none()
        && node.get("status").is_none();
    if null_list {
        return;
    }
    if is_list {
        if let Some(Node::Seq(items)) = node.get("items") {
            for item in items {
                out.push(Resource::new(item.clone(), Some(at.clone())));
            }
        }
        return;
    }
    out.push(Resource::new(node, Some(at)));
}

fn unmarshal_error(file: &std::sync::Arc<SourceFile>, offset: usize, what: &str) -> Error {
    Error::new(
        ErrorKind::Yaml,
        format!("Failed to unmarshal '{}': {what}", file.path.display()),
    )
    .at(Location::line_at(file.clone(), offset))
}
