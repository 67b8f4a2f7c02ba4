//! The parameter files: `.argocd-source.yaml`, then `.argocd-source-<app>.yaml`, in the
//! application's directory, JSON-merge-patched into its source before anything else
//! (`mergeSourceParameters`, reposerver/repository/repository.go); `repoURL`, `path`,
//! `targetRevision` and `chart` keep the Application's values.

use std::path::Path;

use crate::diag::{Error, ErrorKind, Result};
use crate::fs::{FileKind, Fs};
use crate::source::{Location, SourceFile};
use crate::yaml::{Map, Node, parse_documents};

/// The fields a parameter file cannot change.
const KEPT: [&str; 4] = ["chart", "path", "repoURL", "targetRevision"];

/// `source` with the parameter files of `dir` merged into it; `app` is the instance name.
pub(crate) fn merge(fs: &dyn Fs, dir: &Path, app: &str, source: &Node) -> Result<Node> {
    let mut merged = source.clone();
    for name in [
        ".argocd-source.yaml".to_string(),
        format!(".argocd-source-{app}.yaml"),
    ] {
        let path = dir.join(&name);
        if fs.kind(&path) != Some(FileKind::File) {
            continue;
        }
        let text = fs.read_to_string(&path).map_err(|e| Error::io(&path, &e))?;
        let file = SourceFile::new(&path, text);
        let patch = parse_documents(&file.text)
            .map_err(|e| {
                Error::new(
                    ErrorKind::Yaml,
                    format!("error while parsing source parameters: {}", e.message),
                )
                .at_opt(e.offset.map(|o| Location::line_at(file.clone(), o)))
            })?
            .into_iter()
            .next()
            .map(|d| d.node)
            .unwrap_or(Node::Null);
        merged = merge_patch(merged, &patch);
    }
    if let (Some(out), Some(orig)) = (merged.as_map_mut(), source.as_map()) {
        for k in KEPT {
            match orig.get(k) {
                Some(v) => {
                    out.insert(k.into(), v.clone());
                }
                None => {
                    out.shift_remove(k);
                }
            }
        }
    }
    Ok(merged)
}

/// RFC 7386 JSON merge patch (`jsonpatch.MergePatch`): a map patch merges key by key, a null
/// removes, anything else replaces.
fn merge_patch(target: Node, patch: &Node) -> Node {
    let Node::Map(p) = patch.unspelled() else {
        return patch.clone();
    };
    let mut out = match target {
        Node::Map(m) => m,
        _ => Map::new(),
    };
    for (k, v) in p.iter() {
        if v.is_null() {
            out.shift_remove(k);
            continue;
        }
        let old = out.shift_remove(k).unwrap_or(Node::Null);
        out.insert(k.clone(), merge_patch(old, v));
    }
    Node::Map(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(t: &str) -> Node {
        parse_documents(t).unwrap().remove(0).node
    }

    #[test]
    fn merge_patch_merges_maps_and_removes_nulls() {
        let out = merge_patch(
            node("a: {b: 1, c: 2}\nd: [1]\n"),
            &node("a: {b: null, e: 3}\nd: [2]\n"),
        );
        assert!(out.get_path(&["a", "b"]).is_none());
        assert_eq!(
            out.get_path(&["a", "e"])
                .and_then(|n| n.scalar_text())
                .as_deref(),
            Some("3")
        );
        assert_eq!(
            out.get("d").and_then(|d| d.as_seq()).map(|s| s.len()),
            Some(1)
        );
    }
}
