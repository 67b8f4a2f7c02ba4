//! The kustomization file kustomize-controller builds from, as fluxcd/pkg/kustomize's
//! `Generator.GenerateManifest` (kustomize_generator.go, v1.41.0) writes it: the directory's
//! own file, or one generated listing every `*.yaml`/`*.yml` below it; then the
//! Kustomization's fields laid over it. Served to the render by [`SourceFs`], which also keeps
//! every read inside the source's root, as the controller's secure file system does
//! (fluxcd/pkg/kustomize/filesys `MakeFsOnDiskSecure`).

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Result};
use crate::fs::{FileKind, Fs};
use crate::yaml::{EmitOptions, Map, Node, emit_document};

use super::{Manifest, field};

/// The names kustomize recognises, in its order (`konfig.RecognizedKustomizationFileNames`).
use crate::kustomization::load::FILE_NAMES;

/// The kustomization file to build from: where it is and its text, when it differs from
/// what is on the disk (`None`: the directory's own file, untouched).
#[derive(Clone, Debug)]
pub(super) struct Written {
    pub(crate) path: PathBuf,
    pub(crate) text: Option<String>,
}

/// The file the controller writes into `dir` for the Kustomization `m`. `files` lists every
/// file under the source's `root`.
pub(super) fn kustomization_file(
    fs: &dyn Fs,
    root: &Path,
    dir: &Path,
    m: &Manifest,
    files: &[PathBuf],
) -> Result<Written> {
    let spec = m.node.get("spec").cloned().unwrap_or_else(Node::empty_map);
    let existing = FILE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| fs.kind(p) == Some(FileKind::File));
    let (mut kus, path, created) = match existing {
        Some(path) => {
            let bytes = fs.read(&path).map_err(|e| Error::io(&path, &e))?;
            let text = String::from_utf8_lossy(&bytes);
            let node = crate::yaml::parse::parse_config_one(&text)
                .map_err(|e| Error::new(ErrorKind::Yaml, format!("{}: {e}", path.display())))?;
            (node, path, false)
        }
        None => (
            generated(fs, root, dir, files)?,
            dir.join(FILE_NAMES[0]),
            true,
        ),
    };
    let before = kus.clone();
    let Some(map) = kus.as_map_mut() else {
        return Err(Error::new(
            ErrorKind::Kustomization,
            format!("{}: a kustomization must be a map", path.display()),
        ));
    };
    // An existing file without resources is built with origin annotations, "to avoid
    // 'kustomization.yaml is empty'" (GenerateManifest).
    if !created
        && map
            .get("resources")
            .and_then(Node::as_seq)
            .is_none_or(Vec::is_empty)
    {
        map.insert("buildMetadata".into(), strings(&["originAnnotations"]));
    }
    overlay(map, &spec, fs, dir, m)?;
    let text = (created || kus != before).then(|| {
        let mut out = String::new();
        emit_document(&mut out, &kus, EmitOptions::default());
        out
    });
    Ok(Written { path, text })
}

/// The Kustomization's fields over the file, in GenerateManifest's order: `targetNamespace`,
/// `namePrefix` and `nameSuffix` replace (an empty one removes, as the typed field is
/// `omitempty`); `patches`, `components`, `patchesStrategicMerge` and `patchesJson6902` are
/// appended; `images` merge into a same-name entry field by field; `buildMetadata` replaces.
fn overlay(map: &mut Map, spec: &Node, fs: &dyn Fs, dir: &Path, m: &Manifest) -> Result<()> {
    for (from, to) in [
        ("targetNamespace", "namespace"),
        ("namePrefix", "namePrefix"),
        ("nameSuffix", "nameSuffix"),
    ] {
        if let Some(v) = spec.get(from).and_then(Node::as_str) {
            set_or_remove(map, to, v);
        }
    }
    for p in seq(spec, "patches") {
        let mut entry = Map::new();
        if let Some(patch) = p
            .get("patch")
            .and_then(Node::as_str)
            .filter(|s| !s.is_empty())
        {
            entry.insert("patch".into(), Node::str(patch));
        }
        if let Some(t) = p.get("target").filter(|t| t.as_map().is_some()) {
            entry.insert("target".into(), selector(t));
        }
        push(map, "patches", Node::Map(entry));
    }
    let ignore_missing = spec.get("ignoreMissingComponents") == Some(&Node::Bool(true));
    for (i, c) in seq(spec, "components").iter().enumerate() {
        let Some(c) = c.as_str() else { continue };
        if !is_local_relative(c) {
            return Err(Error::new(
                ErrorKind::Kustomization,
                format!("component path '{c}' must be local and relative"),
            )
            .at(field(m, &["spec", "components", &i.to_string()])));
        }
        if ignore_missing && fs.kind(&crate::fs::join(dir, c)).is_none() {
            continue;
        }
        push(map, "components", Node::str(c));
    }
    for p in seq(spec, "patchesStrategicMerge") {
        let json = crate::yaml::json::to_json(&p, crate::yaml::json::JsonStyle::COMPACT);
        push(map, "patchesStrategicMerge", Node::str(json));
    }
    for p in seq(spec, "patchesJson6902") {
        let ops = p.get("patch").cloned().unwrap_or(Node::Null);
        let mut entry = Map::new();
        let json = crate::yaml::json::to_json(&ops, crate::yaml::json::JsonStyle::COMPACT);
        entry.insert("patch".into(), Node::str(json));
        if let Some(t) = p.get("target") {
            entry.insert("target".into(), selector(t));
        }
        push(map, "patchesJson6902", Node::Map(entry));
    }
    for image in seq(spec, "images") {
        merge_image(map, &image);
    }
    let build_metadata = seq(spec, "buildMetadata");
    if !build_metadata.is_empty() {
        map.insert("buildMetadata".into(), Node::Seq(build_metadata));
    }
    Ok(())
}

/// A Flux image entry into the file's `images`: into the entry of the same name field by
/// field (`newTag` and `digest` as one unit: setting either sets both), or appended
/// (fluxcd/pkg `aee2dab2`, v1.39.0).
fn merge_image(map: &mut Map, image: &Node) {
    let get = |k: &str| {
        image
            .get(k)
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (name, new_name, new_tag, digest) =
        (get("name"), get("newName"), get("newTag"), get("digest"));
    let images = map
        .entry("images".to_string())
        .or_insert_with(|| Node::Seq(Vec::new()));
    if !matches!(images, Node::Seq(_)) {
        *images = Node::Seq(Vec::new());
    }
    let Some(list) = images.as_seq_mut() else {
        return;
    };
    let at = list
        .iter()
        .position(|e| e.get("name").and_then(Node::as_str).unwrap_or("") == name);
    let Some(at) = at else {
        let mut entry = Map::new();
        for (k, v) in [
            ("name", &name),
            ("newName", &new_name),
            ("newTag", &new_tag),
            ("digest", &digest),
        ] {
            if !v.is_empty() {
                entry.insert(k.into(), Node::str(v.as_str()));
            }
        }
        list.push(Node::Map(entry));
        return;
    };
    let Some(entry) = list[at].as_map_mut() else {
        return;
    };
    if !new_name.is_empty() {
        entry.insert("newName".into(), Node::str(new_name));
    }
    if !new_tag.is_empty() || !digest.is_empty() {
        set_or_remove(entry, "newTag", &new_tag);
        set_or_remove(entry, "digest", &digest);
    }
}

/// A Flux patch selector as kustomize's (`adaptSelector`): only the fields both have, the
/// empty ones left out.
fn selector(t: &Node) -> Node {
    let mut out = Map::new();
    for k in super::super::PATCH_SELECTOR_FIELDS {
        if let Some(v) = t.get(k).and_then(Node::as_str).filter(|v| !v.is_empty()) {
            out.insert(k.into(), Node::str(v));
        }
    }
    Node::Map(out)
}

/// fluxcd/pkg/kustomize `IsLocalRelativePath`: not a remote URL form, not absolute.
fn is_local_relative(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let remote = [
        "git::",
        "gh:",
        "ssh://",
        "https://",
        "http://",
        "git@",
        "github.com:",
        "github.com/",
    ]
    .iter()
    .any(|p| p.len() < path.len() && lower.starts_with(p));
    !remote && !path.starts_with('/') && !lower.trim_start_matches("file://").starts_with('/')
}

fn set_or_remove(map: &mut Map, key: &str, value: &str) {
    if value.is_empty() {
        map.shift_remove(key);
    } else {
        map.insert(key.into(), Node::str(value));
    }
}

fn push(map: &mut Map, key: &str, item: Node) {
    let list = map
        .entry(key.to_string())
        .or_insert_with(|| Node::Seq(Vec::new()));
    if !matches!(list, Node::Seq(_)) {
        *list = Node::Seq(Vec::new());
    }
    if let Some(l) = list.as_seq_mut() {
        l.push(item);
    }
}

fn seq(spec: &Node, key: &str) -> Vec<Node> {
    spec.get(key)
        .and_then(Node::as_seq)
        .cloned()
        .unwrap_or_default()
}

fn strings(items: &[&str]) -> Node {
    Node::Seq(items.iter().map(|s| Node::str(*s)).collect())
}

/// The kustomization generated for a directory without one (`findOrGenerateKustomization`,
/// `scanManifests`): walking it in lexical order, each `*.yaml`/`*.yml` file (which must read
/// as Kubernetes YAML) as `./path`, and each subdirectory holding a kustomization file as one
/// entry, not descended into; no entries: `namespace: _placeholder`.
fn generated(fs: &dyn Fs, root: &Path, dir: &Path, files: &[PathBuf]) -> Result<Node> {
    let mut tree = Tree::default();
    for f in files {
        if let Ok(rel) = f.strip_prefix(dir) {
            tree.add(rel);
        }
    }
    let _ = root;
    let mut resources = Vec::new();
    walk(fs, dir, &tree, Path::new("."), &mut resources)?;
    let mut map = Map::new();
    map.insert(
        "apiVersion".into(),
        Node::str("kustomize.config.k8s.io/v1beta1"),
    );
    map.insert("kind".into(), Node::str("Kustomization"));
    if resources.is_empty() {
        map.insert("namespace".into(), Node::str("_placeholder"));
    } else {
        map.insert(
            "resources".into(),
            Node::Seq(resources.into_iter().map(Node::str).collect()),
        );
    }
    Ok(Node::Map(map))
}

/// Files and directories below a directory, each level sorted by name (as Go's
/// `filepath.Walk` visits them).
#[derive(Debug, Default)]
struct Tree {
    entries: BTreeMap<String, Option<Tree>>,
}

impl Tree {
    fn add(&mut self, rel: &Path) {
        let mut node = self;
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        for (i, p) in parts.iter().enumerate() {
            if i + 1 == parts.len() {
                node.entries.entry(p.clone()).or_insert(None);
                return;
            }
            let next = node
                .entries
                .entry(p.clone())
                .or_insert_with(|| Some(Tree::default()));
            if next.is_none() {
                *next = Some(Tree::default());
            }
            let Some(t) = next.as_mut() else { return };
            node = t;
        }
    }
}

fn walk(fs: &dyn Fs, dir: &Path, tree: &Tree, rel: &Path, out: &mut Vec<String>) -> Result<()> {
    for (name, sub) in &tree.entries {
        let path = dir.join(name);
        let rel = rel.join(name);
        match sub {
            Some(sub) => {
                if FILE_NAMES
                    .iter()
                    .any(|n| fs.kind(&path.join(n)) == Some(FileKind::File))
                {
                    out.push(slashed(&rel));
                } else {
                    walk(fs, &path, sub, &rel, out)?;
                }
            }
            None => {
                let ext = Path::new(name).extension().and_then(|e| e.to_str());
                if !matches!(ext, Some("yaml" | "yml")) {
                    continue;
                }
                let bytes = fs.read(&path).map_err(|e| Error::io(&path, &e))?;
                let text = String::from_utf8_lossy(&bytes);
                if let Err(e) = crate::yaml::parse_documents(&text) {
                    return Err(Error::new(
                        ErrorKind::Yaml,
                        format!(
                            "failed to decode Kubernetes YAML from {}: {e}",
                            crate::source::display_path(&path)
                        ),
                    )
                    .help("the controller lists every *.yaml and *.yml file of a directory without a kustomization; each must be Kubernetes YAML"));
                }
                out.push(slashed(&rel));
            }
        }
    }
    Ok(())
}

fn slashed(p: &Path) -> String {
    p.iter()
        .map(|c| c.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The source as the controller's build reads it: `inner`'s files but those source-controller
/// leaves out of the artifact (`excluded`), the written kustomization file in place of the
/// directory's, and nothing outside `root` (a path that leaves it, also through a symlink,
/// cannot be read).
pub(super) struct SourceFs<'a> {
    inner: &'a dyn Fs,
    root: PathBuf,
    written: Option<(PathBuf, Vec<u8>)>,
    excluded: &'a HashSet<PathBuf>,
}

impl<'a> SourceFs<'a> {
    pub(super) fn new(
        inner: &'a dyn Fs,
        root: &Path,
        written: Written,
        excluded: &'a HashSet<PathBuf>,
    ) -> SourceFs<'a> {
        let root = inner
            .canonicalize(root)
            .unwrap_or_else(|_| root.to_path_buf());
        let written = written.text.map(|t| {
            let dir = written.path.parent().unwrap_or(Path::new("/"));
            let dir = inner
                .canonicalize(dir)
                .unwrap_or_else(|_| dir.to_path_buf());
            let name = written.path.file_name().unwrap_or_default();
            (dir.join(name), t.into_bytes())
        });
        SourceFs {
            inner,
            root,
            written,
            excluded,
        }
    }

    /// Whether the artifact leaves `path` out.
    fn left_out(&self, path: &Path) -> bool {
        !self.excluded.is_empty() && self.excluded.contains(path)
    }

    fn written(&self, path: &Path) -> Option<&[u8]> {
        let (p, text) = self.written.as_ref()?;
        (p == path || self.inner.canonicalize(path).is_ok_and(|c| &c == p)).then_some(text)
    }

    /// `path` canonical and inside the root, or the error the controller's file system gives.
    fn inside(&self, path: &Path) -> io::Result<PathBuf> {
        let canonical = match self.inner.canonicalize(path) {
            Ok(c) => c,
            Err(e) => {
                // A path that is not there is judged by its lexical form.
                let lexical = crate::fs::normalize(path);
                if lexical.starts_with(&self.root) {
                    return Err(e);
                }
                lexical
            }
        };
        if canonical.starts_with(&self.root) {
            Ok(canonical)
        } else {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "path '{}' is not in or below the source root '{}': the controller's file system refuses it",
                    super::shown(path),
                    super::shown(&self.root)
                ),
            ))
        }
    }
}

impl std::fmt::Debug for SourceFs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceFs")
            .field("root", &self.root)
            .finish()
    }
}

impl Fs for SourceFs<'_> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if let Some(text) = self.written(path) {
            return Ok(text.to_vec());
        }
        let inside = self.inside(path)?;
        if self.left_out(path) || self.left_out(&inside) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{}: not in the source's artifact (left out by .sourceignore or the default ignore rules)",
                    super::shown(path)
                ),
            ));
        }
        self.inner.read(&inside)
    }

    fn kind(&self, path: &Path) -> Option<FileKind> {
        if self.written(path).is_some() {
            return Some(FileKind::File);
        }
        if self.left_out(path) {
            return None;
        }
        // What is outside the root is there, but reading it fails (with the reason).
        self.inner.kind(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        if let Some((p, _)) = &self.written {
            if p.as_path() == path {
                return Ok(p.clone());
            }
            if let Some(parent) = path.parent() {
                if let Ok(c) = self.inner.canonicalize(parent) {
                    let c = c.join(path.file_name().unwrap_or_default());
                    if &c == p {
                        return Ok(c);
                    }
                }
            }
        }
        self.inner.canonicalize(path)
    }

    fn names_in(&self, dir: &Path) -> Vec<String> {
        let mut names = self.inner.names_in(dir);
        names.retain(|n| !self.left_out(&dir.join(n)));
        names
    }

    fn holds(&self, path: &Path, bytes: &[u8]) -> Option<bool> {
        if self.written(path).is_some() {
            return None;
        }
        self.inner.holds(path, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_relative_paths() {
        assert!(is_local_relative("../components/a"));
        assert!(is_local_relative("c"));
        assert!(!is_local_relative("/abs"));
        assert!(!is_local_relative("https://github.com/x/y"));
        assert!(!is_local_relative("github.com/x/y"));
        assert!(!is_local_relative("file:///x"));
    }
}
