//! Field provenance (issue 29): for each field of one object, the places that set its current
//! value, newest first. Kept beside the object ([`super::Resource::provenance`]), filled by the
//! render when `RenderOptions::provenance` is on (`render/provenance.rs`), never a second model.

use std::sync::Arc;

use crate::fasthash::FastMap;
use crate::source::SourceFile;
use crate::yaml::Node;
use crate::yaml::de::PathSeg;

/// The kind of step that set a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Read from a resource file.
    Resource,
    /// Made by a ConfigMap or Secret generator.
    Generator,
    /// Rendered by a helm chart.
    Helm,
    /// A strategic merge patch.
    Patch,
    /// A JSON 6902 patch operation.
    Json6902,
    Namespace,
    NamePrefix,
    NameSuffix,
    /// `labels` or `commonLabels`.
    Labels,
    CommonAnnotations,
    Replicas,
    Images,
    Replacement,
    /// A generator or transformer plugin (or a configuration of a built-in one).
    Plugin,
    /// The root's hash suffix on a generated name.
    HashSuffix,
    /// A name reference following a renamed object (kustomize's nameReference).
    NameReference,
    /// A `vars:` value put into a `$(VAR)`.
    Var,
    /// `buildMetadata` and the managed-by label.
    BuildMetadata,
}

impl Step {
    /// The name written in `ply explain` and the review (`step` in JSON).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Step::Resource => "resource",
            Step::Generator => "generator",
            Step::Helm => "helm",
            Step::Patch => "patch",
            Step::Json6902 => "json6902",
            Step::Namespace => "namespace",
            Step::NamePrefix => "namePrefix",
            Step::NameSuffix => "nameSuffix",
            Step::Labels => "labels",
            Step::CommonAnnotations => "commonAnnotations",
            Step::Replicas => "replicas",
            Step::Images => "images",
            Step::Replacement => "replacement",
            Step::Plugin => "plugin",
            Step::HashSuffix => "hashSuffix",
            Step::NameReference => "nameReference",
            Step::Var => "var",
            Step::BuildMetadata => "buildMetadata",
        }
    }
}

/// A node of a YAML text: the document starting at byte `start` of `file`, then `path` (a
/// field path, [`push_key`]) inside it. Resolved to a line and column only when shown
/// (`render::provenance::resolve`), so that recording costs no scan of the text.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) file: Arc<SourceFile>,
    pub(crate) start: usize,
    pub(crate) path: String,
}

/// One step that set a value, and where it is written (`None` when no text says it, as for a
/// plugin's output), and what else the step read (`source`).
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    pub(crate) step: Step,
    pub(crate) place: Option<Place>,
    pub(crate) source: Option<Box<Source>>,
}

/// What a step read besides its own place: the object and field a replacement, a var or a
/// name reference took the value from, and where that value was set; for a generator's data
/// read from a file or an env file, the kustomization entry naming that file; for a remote
/// base's file, the locked URL (docs/explain.md, `source`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Source {
    /// The object read: `apiVersion`, `kind`, `namespace`, `name`.
    pub(crate) object: Option<[String; 4]>,
    /// Its field path (as [`path_text`] writes it).
    pub(crate) path: Option<String>,
    /// Where that value was set, or the entry naming the file read.
    pub(crate) place: Option<Place>,
}

/// One field (a scalar, or an empty map or list): its origins, newest first.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub(crate) origins: Vec<Origin>,
}

/// The fields of one object by path (`spec.template.spec.containers[0].image`, see
/// [`push_key`]), and the object as last recorded (frozen: its unchanged maps are shared
/// with the object, so the next record compares only what changed).
#[derive(Clone, Debug, Default)]
pub(crate) struct Provenance {
    pub(crate) fields: FastMap<String, Field>,
    pub(crate) last: Node,
}

/// A path of segments as a field path.
pub(crate) fn path_text(path: &[PathSeg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            PathSeg::Key(k) => push_key(&mut s, k),
            PathSeg::Index(i) => push_index(&mut s, *i),
        }
    }
    s
}

/// Appends a map key to a field path: `a.b`, or `a["b.c"]` when the key holds a character
/// that a plain path reads otherwise (`.`, `[`, `]`, `"`, `\`) or is empty.
pub(crate) fn push_key(path: &mut String, key: &str) {
    let plain =
        !key.is_empty() && !key.contains(['.', '[', ']', '"', '\\']) && !key.starts_with(' ');
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push_str("[\"");
        for c in key.chars() {
            if c == '"' || c == '\\' {
                path.push('\\');
            }
            path.push(c);
        }
        path.push_str("\"]");
    }
}

/// Appends a list index to a field path: `a[3]`.
pub(crate) fn push_index(path: &mut String, i: usize) {
    use std::fmt::Write as _;
    let _ = write!(path, "[{i}]");
}

/// Reads a field path back into its segments; `None` when it is not one.
pub(crate) fn parse_path(text: &str) -> Option<Vec<PathSeg>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("[\"") {
            let mut key = String::new();
            let mut chars = r.char_indices();
            let end = loop {
                match chars.next()? {
                    (_, '\\') => key.push(chars.next()?.1),
                    (j, '"') => break j,
                    (_, c) => key.push(c),
                }
            };
            rest = r[end + 1..].strip_prefix(']')?;
            out.push(PathSeg::Key(key));
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(PathSeg::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        } else {
            if !out.is_empty() {
                rest = rest.strip_prefix('.')?;
            }
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            if end == 0 {
                return None;
            }
            out.push(PathSeg::Key(rest[..end].to_string()));
            rest = &rest[end..];
        }
    }
    Some(out)
}

/// Calls `f` with the path and value of every field of `node`: each scalar, and each empty map
/// or list, in document order.
pub(crate) fn for_each_field(node: &Node, f: &mut dyn FnMut(&str, &Node)) {
    fn go(node: &Node, path: &mut String, f: &mut dyn FnMut(&str, &Node)) {
        match node {
            Node::Map(m) if !m.is_empty() => {
                for (k, v) in m.iter() {
                    let len = path.len();
                    push_key(path, k);
                    go(v, path, f);
                    path.truncate(len);
                }
            }
            Node::Seq(items) if !items.is_empty() => {
                for (i, v) in items.iter().enumerate() {
                    let len = path.len();
                    push_index(path, i);
                    go(v, path, f);
                    path.truncate(len);
                }
            }
            _ => f(path, node),
        }
    }
    go(node, &mut String::new(), f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_back() {
        for (segs, text) in [
            (
                vec![
                    PathSeg::Key("spec".into()),
                    PathSeg::Key("containers".into()),
                    PathSeg::Index(0),
                    PathSeg::Key("image".into()),
                ],
                "spec.containers[0].image",
            ),
            (
                vec![
                    PathSeg::Key("metadata".into()),
                    PathSeg::Key("labels".into()),
                    PathSeg::Key("app.kubernetes.io/name".into()),
                ],
                "metadata.labels[\"app.kubernetes.io/name\"]",
            ),
            (vec![PathSeg::Key("a\"b".into())], "[\"a\\\"b\"]"),
            (vec![PathSeg::Index(2), PathSeg::Key("x".into())], "[2].x"),
        ] {
            let mut p = String::new();
            for s in &segs {
                match s {
                    PathSeg::Key(k) => push_key(&mut p, k),
                    PathSeg::Index(i) => push_index(&mut p, *i),
                }
            }
            assert_eq!(p, text);
            assert_eq!(parse_path(&p), Some(segs));
        }
        assert_eq!(parse_path("a..b"), None);
        assert_eq!(parse_path("a[x]"), None);
    }
}
