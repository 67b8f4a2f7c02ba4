//! The `kustomize edit` commands the repo server runs for an Application's kustomize overrides
//! (`util/kustomize/kustomize.go`, `(*kustomize).Build`), as edits of the kustomization
//! document in memory, in Argo's order. Each mirrors the kustomize v5.8.1 command it stands for
//! (`kustomize/commands/edit/...`); the file itself is never written.

use std::collections::BTreeMap;

use crate::yaml::{Map, Node};

use super::app::Kustomize;
use super::vars::Env;

/// An override that failed: the `kustomize` field it came from and kustomize's (or Argo's)
/// message.
#[derive(Debug)]
pub(crate) struct EditError {
    pub field: &'static str,
    pub message: String,
}

fn fail(field: &'static str, message: impl Into<String>) -> EditError {
    EditError {
        field,
        message: message.into(),
    }
}

/// What the edits need to know of the disk: whether a component path exists.
pub(crate) trait Paths {
    /// Whether `rel` (relative to the application's directory) names something inside the
    /// repository (`os.Root.Stat`, for `ignoreMissingComponents`).
    fn in_repo(&self, rel: &str) -> bool;
    /// Whether `rel` exists relative to the application's directory (the `Glob` of `edit add
    /// component`).
    fn exists(&self, rel: &str) -> bool;
}

/// Whether the overrides run any `kustomize edit` (or the patches step), so that they need a
/// kustomization file; the first field that does, for the error when there is none.
pub(crate) fn first_edit(k: &Kustomize, paths: &dyn Paths) -> Option<&'static str> {
    let kept = components(k, paths);
    [
        (!k.name_prefix.is_empty(), "namePrefix"),
        (!k.name_suffix.is_empty(), "nameSuffix"),
        (!k.images.is_empty(), "images"),
        (!k.replicas.is_empty(), "replicas"),
        (!k.common_labels.is_empty(), "commonLabels"),
        (!k.common_annotations.is_empty(), "commonAnnotations"),
        (!k.namespace.is_empty(), "namespace"),
        (!k.patches.is_empty(), "patches"),
        (!kept.is_empty(), "components"),
    ]
    .into_iter()
    .find_map(|(on, f)| on.then_some(f))
}

/// The message for an edit without a kustomization file: `kustfile.validate`'s for the
/// commands, Argo's own for the patches step.
pub(crate) fn missing_file_message(field: &str) -> &'static str {
    if field == "patches" {
        "kustomization file not found in the path"
    } else {
        "Missing kustomization file 'kustomization.yaml'."
    }
}

/// Runs every override on the kustomization `doc`, in Argo's order.
pub(crate) fn apply(
    doc: &mut Map,
    k: &Kustomize,
    env: &Env,
    paths: &dyn Paths,
    file_name: &str,
) -> Result<(), EditError> {
    let mut fixed = false;
    let mut read = |doc: &mut Map| {
        // `kustfile.Read` → `FixKustomization`: the deprecated lists move into their successors.
        if !fixed {
            fix(doc);
            fixed = true;
        }
    };
    if !k.name_prefix.is_empty() {
        read(doc);
        doc.insert("namePrefix".into(), Node::str(k.name_prefix.clone()));
    }
    if !k.name_suffix.is_empty() {
        read(doc);
        doc.insert("nameSuffix".into(), Node::str(k.name_suffix.clone()));
    }
    if !k.images.is_empty() {
        let args: Vec<String> = k.images.iter().map(|i| env.envsubst(i)).collect();
        read(doc);
        set_images(doc, &args).map_err(|m| fail("images", m))?;
    }
    if !k.replicas.is_empty() {
        let mut args = Vec::new();
        for r in &k.replicas {
            args.push((
                r.name.clone(),
                replica_count(&r.count).map_err(|m| fail("replicas", m))?,
            ));
        }
        read(doc);
        set_replicas(doc, args);
    }
    if !k.common_labels.is_empty() {
        let pairs: BTreeMap<String, String> = k
            .common_labels
            .iter()
            .map(|(n, v)| (n.clone(), env.envsubst(v)))
            .collect();
        read(doc);
        let how = LabelHow {
            force: k.force_common_labels,
            without_selector: k.label_without_selector,
            include_templates: k.label_include_templates,
        };
        add_labels(doc, &edit_args(&pairs), how).map_err(|m| fail("commonLabels", m))?;
    }
    if !k.common_annotations.is_empty() {
        let pairs: BTreeMap<String, String> = if k.common_annotations_envsubst {
            k.common_annotations
                .iter()
                .map(|(n, v)| (n.clone(), env.envsubst(v)))
                .collect()
        } else {
            k.common_annotations.clone()
        };
        read(doc);
        add_to_map(
            doc,
            "commonAnnotations",
            &edit_args(&pairs),
            k.force_common_annotations,
            "annotation",
        )
        .map_err(|m| fail("commonAnnotations", m))?;
    }
    if !k.namespace.is_empty() {
        read(doc);
        doc.insert("namespace".into(), Node::str(k.namespace.clone()));
    }
    if !k.patches.is_empty() {
        append_patches(doc, &k.patches).map_err(|m| fail("patches", m))?;
    }
    let kept = components(k, paths);
    if !kept.is_empty() {
        for c in &kept {
            if !paths.exists(c) {
                return Err(fail(
                    "components",
                    format!(
                        "{c} has no match: must build at directory: not a valid directory: '{c}' does not exist"
                    ),
                ));
            }
        }
        read(doc);
        add_components(doc, &kept, file_name);
    }
    Ok(())
}

/// The components Argo passes to `edit add component`: all, or with `ignoreMissingComponents`
/// those that exist under the repository root.
fn components(k: &Kustomize, paths: &dyn Paths) -> Vec<String> {
    k.components
        .iter()
        .filter(|c| !k.ignore_missing_components || paths.in_repo(c))
        .cloned()
        .collect()
}

/// `FixKustomization` (api/types/kustomization.go) as far as an edit's rewrite shows it:
/// `bases` appended to `resources`, `imageTags` to `images`, the defaults of `apiVersion` and
/// `kind`.
fn fix(doc: &mut Map) {
    if let Some(Node::Seq(bases)) = doc.shift_remove("bases") {
        seq(doc, "resources").extend(bases);
    }
    if let Some(Node::Seq(tags)) = doc.shift_remove("imageTags") {
        seq(doc, "images").extend(tags);
    }
    let kind = doc
        .get("kind")
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_string();
    if kind.is_empty() {
        doc.insert("kind".into(), Node::str("Kustomization"));
    }
    if doc
        .get("apiVersion")
        .and_then(Node::as_str)
        .unwrap_or("")
        .is_empty()
    {
        let v = if kind == "Component" {
            "kustomize.config.k8s.io/v1alpha1"
        } else {
            "kustomize.config.k8s.io/v1beta1"
        };
        doc.insert("apiVersion".into(), Node::str(v));
    }
}

/// The list at `key`, made when missing or null.
fn seq<'a>(doc: &'a mut Map, key: &str) -> &'a mut Vec<Node> {
    let slot = doc.entry(key.to_string()).or_insert(Node::Seq(Vec::new()));
    if !matches!(slot, Node::Seq(_)) {
        *slot = Node::Seq(Vec::new());
    }
    match slot {
        Node::Seq(v) => v,
        _ => unreachable!("set to a list above"),
    }
}

/// The `k:v` arguments Argo passes (`mapToEditAddArgs`) as `ConvertSliceToMap` reads them back:
/// split at the first colon, a value in double quotes unquoted.
fn edit_args(pairs: &BTreeMap<String, String>) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| {
            let arg = format!("{k}:{v}");
            let c = arg.find(':').unwrap_or(arg.len());
            let (key, value) = (&arg[..c], arg.get(c + 1..).unwrap_or(""));
            let value = match value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
                true => &value[1..value.len() - 1],
                false => value,
            };
            (key.to_string(), value.to_string())
        })
        .collect()
}

/// An image entry as `types.Image` keeps it.
#[derive(Clone, Debug, Default)]
struct Image {
    name: String,
    new_name: String,
    tag_suffix: String,
    new_tag: String,
    digest: String,
}

const KEEP: &str = "*";

impl Image {
    fn of(n: &Node) -> Image {
        let f = |k: &str| n.get(k).and_then(Node::scalar_text).unwrap_or_default();
        Image {
            name: f("name"),
            new_name: f("newName"),
            tag_suffix: f("tagSuffix"),
            new_tag: f("newTag"),
            digest: f("digest"),
        }
    }

    fn node(&self) -> Node {
        let mut m = Map::new();
        for (k, v) in [
            ("name", &self.name),
            ("newName", &self.new_name),
            ("tagSuffix", &self.tag_suffix),
            ("newTag", &self.new_tag),
            ("digest", &self.digest),
        ] {
            if !v.is_empty() {
                m.insert(k.into(), Node::str(v.clone()));
            }
        }
        Node::Map(m)
    }

    /// `replaceNewName` and its siblings rebuild the entry without `tagSuffix`.
    fn keep_from(mut self, old: &str, field: fn(&mut Image) -> &mut String) -> Image {
        *field(&mut self) = old.to_string();
        self.tag_suffix.clear();
        self
    }
}

/// `edit set image` (`setimage.go`, `parse` and `RunSetImage`).
fn set_images(doc: &mut Map, args: &[String]) -> Result<(), String> {
    let mut wanted: BTreeMap<String, Image> = BTreeMap::new();
    for arg in args {
        let img = parse_image(arg)?;
        wanted.insert(img.name.clone(), img);
    }
    let existing: Vec<Image> = match doc.get("images") {
        Some(Node::Seq(list)) => list.iter().map(Image::of).collect(),
        _ => Vec::new(),
    };
    for old in existing {
        if let Some(arg) = wanted.get(&old.name).cloned() {
            let mut arg = arg;
            if arg.new_name == KEEP {
                arg = arg.keep_from(&old.new_name, |i| &mut i.new_name);
            }
            if arg.new_tag == KEEP {
                arg = arg.keep_from(&old.new_tag, |i| &mut i.new_tag);
            }
            if arg.digest == KEEP {
                arg = arg.keep_from(&old.digest, |i| &mut i.digest);
            }
            wanted.insert(old.name.clone(), arg);
            continue;
        }
        wanted.insert(old.name.clone(), old);
    }
    // Sorted by name: a BTreeMap's order (names are unique in it).
    let images = wanted
        .into_values()
        .map(|mut v| {
            for field in [
                (|i: &mut Image| &mut i.new_name) as fn(&mut Image) -> &mut String,
                |i| &mut i.new_tag,
                |i| &mut i.digest,
            ] {
                if field(&mut v) == KEEP {
                    v = v.keep_from("", field);
                }
            }
            v.node()
        })
        .collect();
    doc.insert("images".into(), Node::Seq(images));
    Ok(())
}

const IMAGE_FORMATS: &str = "invalid format of image, use one of the following options:
- <image>=<newimage>:<newtag>
- <image>=<newimage>@<digest>
- <image>=<newimage>:<newtag>@<digest>
- <image>=<newimage>
- <image>:<newtag>
- <image>:<newtag>@<digest>
- <image>@<digest>";

fn parse_image(arg: &str) -> Result<Image, String> {
    let (key, value) = match arg.split_once('=') {
        Some((k, v)) => (k, v),
        None => ("", arg),
    };
    let (name, tag, digest) = crate::transform::images::split(value);
    if name == arg {
        return Err(IMAGE_FORMATS.into());
    }
    let mut img = Image {
        new_tag: tag.into(),
        digest: digest.into(),
        ..Image::default()
    };
    if key.is_empty() {
        img.name = name.into();
    } else {
        img.name = key.into();
        img.new_name = name.into();
    }
    Ok(img)
}

/// `KustomizeReplica.GetIntCount`, then `edit set replicas`' `strconv.ParseInt` of the text.
fn replica_count(count: &Node) -> Result<i64, String> {
    match count.unspelled() {
        Node::Int(i) => i64::try_from(*i).map_err(|_| format!("replica count {i} is out of range")),
        Node::Str(s) => s
            .parse::<i64>()
            .map_err(|_| format!("expected integer value for count. Received: {s}")),
        other => Err(format!(
            "expected integer value for count. Received: {}",
            other
                .scalar_text()
                .unwrap_or_else(|| other.kind_name().into())
        )),
    }
}

/// `edit set replicas`: merged by name (the argument wins), sorted by name.
fn set_replicas(doc: &mut Map, args: Vec<(String, i64)>) {
    let mut by_name: BTreeMap<String, Node> = BTreeMap::new();
    for (name, count) in args {
        let mut m = Map::new();
        m.insert("name".into(), Node::str(name.clone()));
        m.insert("count".into(), Node::Int(count.into()));
        by_name.insert(name, Node::Map(m));
    }
    if let Some(Node::Seq(list)) = doc.get("replicas") {
        for r in list {
            let name = r
                .get("name")
                .and_then(Node::scalar_text)
                .unwrap_or_default();
            by_name.entry(name.clone()).or_insert_with(|| {
                let mut m = Map::new();
                m.insert("name".into(), Node::str(name));
                let count = r.get("count").cloned().unwrap_or(Node::Int(0));
                m.insert("count".into(), count);
                Node::Map(m)
            });
        }
    }
    doc.insert(
        "replicas".into(),
        Node::Seq(by_name.into_values().collect()),
    );
}

/// The flags of `edit add label`.
#[derive(Clone, Copy)]
struct LabelHow {
    force: bool,
    without_selector: bool,
    include_templates: bool,
}

/// `edit add label` (`addmetadata.go`, `addLabels`).
fn add_labels(doc: &mut Map, pairs: &[(String, String)], how: LabelHow) -> Result<(), String> {
    if !how.without_selector && how.include_templates {
        return Err(
            "--without-selector flag must be specified for --include-templates to work".into(),
        );
    }
    if !how.without_selector {
        return add_to_map(doc, "commonLabels", pairs, how.force, "label");
    }
    // `writeToLabels`: into the first `labels` entry without selectors and with the same
    // `includeTemplates`, or a new one appended.
    let labels = seq(doc, "labels");
    let matches = |l: &Node| {
        let flag = |k: &str| {
            l.get(k).and_then(|n| match n.unspelled() {
                Node::Bool(b) => Some(*b),
                _ => None,
            })
        };
        !flag("includeSelectors").unwrap_or(false)
            && flag("includeTemplates").unwrap_or(false) == how.include_templates
    };
    let index = match labels.iter().position(matches) {
        Some(i) => i,
        None => {
            let mut m = Map::new();
            m.insert("pairs".into(), Node::Map(Map::new()));
            if how.include_templates {
                m.insert("includeTemplates".into(), Node::Bool(true));
            }
            labels.push(Node::Map(m));
            labels.len() - 1
        }
    };
    let entry = labels[index]
        .as_map_mut()
        .ok_or("a labels entry is not a map")?;
    write_pairs(entry, "pairs", pairs, how.force, "label")
}

/// `writeToMap` into `commonLabels` or `commonAnnotations`.
fn add_to_map(
    doc: &mut Map,
    key: &str,
    pairs: &[(String, String)],
    force: bool,
    kind: &str,
) -> Result<(), String> {
    write_pairs(doc, key, pairs, force, kind)
}

/// `writeToMapEntry` for each pair: an existing key without `--force` is an error.
fn write_pairs(
    parent: &mut Map,
    key: &str,
    pairs: &[(String, String)],
    force: bool,
    kind: &str,
) -> Result<(), String> {
    let slot = parent
        .entry(key.to_string())
        .or_insert(Node::Map(Map::new()));
    if !matches!(slot, Node::Map(_)) {
        *slot = Node::Map(Map::new());
    }
    let map = slot.as_map_mut().ok_or("not a map")?;
    for (k, v) in pairs {
        if map.contains_key(k) && !force {
            return Err(format!(
                "{kind} {k} already in kustomization file. Use --force to override."
            ));
        }
        map.insert(k.clone(), Node::str(v.clone()));
    }
    Ok(())
}

/// The patches step: the Application's patches appended to `patches:` (Argo's own code, not an
/// `edit` command), each as Argo marshals a `KustomizePatch` (empty fields left out).
fn append_patches(doc: &mut Map, patches: &[Node]) -> Result<(), String> {
    if let Some(p) = doc.get("patches")
        && !matches!(p, Node::Seq(_))
    {
        return Err(format!(
            "expected 'patches' field in kustomization.yaml to be []any, but got {}",
            p.kind_name()
        ));
    }
    let list = seq(doc, "patches");
    list.extend(patches.iter().map(marshalled_patch));
    Ok(())
}

/// A `KustomizePatch` as `json.Marshal` writes it: `path`, `patch`, `target` (its six
/// selector fields), `options` (booleans), each only when not empty.
fn marshalled_patch(p: &Node) -> Node {
    let mut m = Map::new();
    for k in ["path", "patch"] {
        if let Some(s) = p
            .get(k)
            .and_then(Node::scalar_text)
            .filter(|s| !s.is_empty())
        {
            m.insert(k.into(), Node::str(s));
        }
    }
    if let Some(t) = p.get("target").filter(|t| !t.is_null()) {
        let mut sel = Map::new();
        for k in super::super::PATCH_SELECTOR_FIELDS {
            if let Some(s) = t
                .get(k)
                .and_then(Node::scalar_text)
                .filter(|s| !s.is_empty())
            {
                sel.insert(k.into(), Node::str(s));
            }
        }
        m.insert("target".into(), Node::Map(sel));
    }
    if let Some(Node::Map(opts)) = p.get("options")
        && !opts.is_empty()
    {
        let mut o = Map::new();
        for (k, v) in opts.iter() {
            o.insert(
                k.clone(),
                Node::Bool(matches!(v.unspelled(), Node::Bool(true))),
            );
        }
        m.insert("options".into(), Node::Map(o));
    }
    Node::Map(m)
}

/// `edit add component`: each path appended unless already listed or the kustomization file
/// itself.
fn add_components(doc: &mut Map, kept: &[String], file_name: &str) {
    let list = seq(doc, "components");
    for c in kept {
        if c == file_name || list.iter().any(|n| n.as_str() == Some(c.as_str())) {
            continue;
        }
        list.push(Node::str(c.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Map {
        let d = crate::yaml::parse_documents(text).unwrap();
        d[0].node.as_map().cloned().unwrap()
    }

    #[test]
    fn images_merge_by_name_sorted_keeping_stars() {
        let mut d = doc("images:\n- name: b\n  newTag: old\n  newName: nb\n- name: z\n");
        set_images(&mut d, &["b:*".into(), "a=reg/a:1@sha256:x".into()]).unwrap();
        let names: Vec<_> = d["images"]
            .as_seq()
            .unwrap()
            .iter()
            .map(|i| i.str_at(&["name"]).unwrap())
            .collect();
        assert_eq!(names, ["a", "b", "z"]);
        let b = &d["images"].as_seq().unwrap()[1];
        assert_eq!(b.str_at(&["newTag"]), Some("old"));
        assert_eq!(b.str_at(&["newName"]), None, "b:* names no new name");
        assert!(parse_image("plain").is_err());
    }

    #[test]
    fn labels_refuse_an_existing_key_without_force() {
        let mut d = doc("commonLabels:\n  a: x\n");
        let how = LabelHow {
            force: false,
            without_selector: false,
            include_templates: false,
        };
        let err = add_labels(&mut d, &[("a".into(), "y".into())], how).unwrap_err();
        assert_eq!(
            err,
            "label a already in kustomization file. Use --force to override."
        );
        let how = LabelHow { force: true, ..how };
        add_labels(&mut d, &[("a".into(), "y".into())], how).unwrap();
        assert_eq!(d["commonLabels"].str_at(&["a"]), Some("y"));
    }

    #[test]
    fn edit_args_split_at_first_colon_and_unquote() {
        let mut m = BTreeMap::new();
        m.insert("k".to_string(), "\"a:b\"".to_string());
        assert_eq!(edit_args(&m), [("k".to_string(), "a:b".to_string())]);
    }
}
