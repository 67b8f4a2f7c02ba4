//! Loading patches: the text of a `patchesStrategicMerge`, `patches` or `patchesJson6902`
//! entry (or a patch plugin configuration) read as strategic merge documents or a JSON 6902
//! list, as kustomize detects them, with kustomize's naming of a patch in messages.

use crate::diag::{Error, ErrorKind, Result};
use crate::resource::Resource;
use crate::source::Location;

use super::KustomizeVersion;
use crate::yaml::Node;

use super::*;

/// Reads patch text the way kustomize v5.5's PatchTransformer does (`Config` in
/// `api/internal/builtins/PatchTransformer.go`): the text is read both as strategic merge
/// patches ([`strategic_documents`]) and as a JSON 6902 operation list ([`json_operations`]);
/// exactly one of the two readings must succeed. Both succeeding (an empty text, `[]`, only
/// `---` or comments) is kustomize's "illegally qualifies as both an SM and JSON patch"; both
/// failing is "unable to parse SM or JSON patch", here with the reason of the reading the
/// text looks meant for.
///
/// The text is used as written: only an inline `patches[].patch` is trimmed, by the caller
/// (`strings.TrimSpace` in kustomize's `PatchTransformerPlugin.Config`), so that a block
/// scalar at the end of a patch file keeps its final newline.
pub(in crate::render) fn parse_patch_text(
    text: &str,
    file: Option<&std::sync::Arc<crate::source::SourceFile>>,
    source: &str,
) -> Result<Body> {
    // A text that reads as a non-empty operation list is no strategic merge patch (that
    // reading refuses a first document that is a non-empty list): one parse decides it.
    if opens_with_list(text)
        && let Ok(ops) = json_operations(text)
        && matches!(&ops, Node::Seq(list) if !list.is_empty())
    {
        return Ok(Body::Json(ops));
    }
    let (sm, first_empty) = strategic_reading(text, file);
    let json = match (&sm, first_empty) {
        // Every document read as an empty one or a map, so the JSON reading (of the first
        // document, when the text does not open with `[`) succeeds only when that one is null
        // or an empty list: known without parsing the text again.
        (Ok(_), Some(first_empty)) if !text.is_empty() && !text.starts_with('[') => {
            if first_empty {
                Ok(Node::Seq(Vec::new()))
            } else {
                Err((
                    "a JSON 6902 patch is a list of operations, not a map".into(),
                    None,
                ))
            }
        }
        _ => json_operations(text),
    };
    match (sm, json) {
        (Ok(_), Ok(_)) => Ok(Body::Nothing),
        (Ok(docs), Err(_)) => Ok(Body::Smp(docs)),
        (Err(_), Ok(ops)) => Ok(Body::Json(ops)),
        (Err(sm), Err(json)) => {
            let (reason, help, at) = if opens_with_list(text) {
                (json.0, None, json.1)
            } else {
                (sm.message, sm.help, sm.offset)
            };
            let mut e = Error::new(
                ErrorKind::Patch,
                format!("unable to parse SM or JSON patch from {source}: {reason}"),
            );
            if let (Some(f), Some(at)) = (file, at) {
                e = e.at(Location::line_at(std::sync::Arc::clone(f), at));
            }
            Err(match help {
                Some(h) => e.help(h),
                None => e,
            })
        }
    }
}

/// Whether the first content line of `text` (after blank and comment lines, directives and
/// `---` markers) opens a block or flow sequence: a JSON 6902 operation list in YAML or JSON.
pub(super) fn opens_with_list(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .find(|l| !(l.is_empty() || l.starts_with('#') || l.starts_with('%') || *l == "---"))
        .map(|l| l.strip_prefix("--- ").map_or(l, str::trim_start))
        .is_some_and(|l| l.starts_with('[') || l == "-" || l.starts_with("- "))
}

/// Strategic merge patch documents, each with where it starts in its file.
type SmDocs = Vec<(Node, Option<Location>)>;

/// Why a text is not a strategic merge patch, and where (a byte offset in the text).
pub(in crate::render) struct NotStrategic {
    pub message: String,
    pub help: Option<String>,
    pub offset: Option<usize>,
}

/// The text as strategic merge patches, as kustomize reads it (`resource.Factory.SliceFromBytes`:
/// `kio.FromBytes`, `dropBadNodes`, `inlineAnyEmbeddedLists`): empty documents (null, `{}`,
/// `[]`) are skipped; every other document must be a map with a `kind` and, unless the kind
/// ends in `List`, a `metadata.name` (kyaml's `RNode.GetValidatedMetadata`); a `*List` with
/// `items` stands for its items, each checked the same way. No documents at all is a success
/// (an empty list).
pub(in crate::render) fn strategic_documents(
    text: &str,
    file: Option<&std::sync::Arc<crate::source::SourceFile>>,
) -> std::result::Result<SmDocs, NotStrategic> {
    strategic_reading(text, file).0
}

/// [`strategic_documents`], and whether the text's first document is null or an empty list
/// (`None` when the text is not YAML).
fn strategic_reading(
    text: &str,
    file: Option<&std::sync::Arc<crate::source::SourceFile>>,
) -> (std::result::Result<SmDocs, NotStrategic>, Option<bool>) {
    let docs = match crate::yaml::parse::parse_patch_documents(text) {
        Ok(docs) => docs,
        Err(e) => {
            let e = NotStrategic {
                message: e.message,
                help: None,
                offset: e.offset,
            };
            return (Err(e), None);
        }
    };
    let first_empty = docs.first().is_none_or(|d| {
        d.node.is_null() || matches!(&d.node, Node::Seq(items) if items.is_empty())
    });
    (strategic_from(text, docs, file), Some(first_empty))
}

fn strategic_from(
    text: &str,
    docs: Vec<crate::yaml::parse::ParsedDoc>,
    file: Option<&std::sync::Arc<crate::source::SourceFile>>,
) -> std::result::Result<SmDocs, NotStrategic> {
    let line = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let fail = |message: String, help: Option<&str>, offset: Option<usize>| NotStrategic {
        message,
        help: help.map(str::to_string),
        offset,
    };
    let mut queue: std::collections::VecDeque<_> =
        docs.into_iter().map(|d| (d.node, d.offset)).collect();
    let mut out = Vec::new();
    while let Some((mut node, offset)) = queue.pop_front() {
        // A plain `name: 80` names the object "80" (`resource::keep_id_text`).
        crate::resource::keep_id_text(&mut node);
        let at = format!(" (line {})", line(offset));
        let Node::Map(m) = &node else {
            if node.is_null() || matches!(&node, Node::Seq(s) if s.is_empty()) {
                continue;
            }
            return Err(fail(
                format!(
                    "a document{at} is a {}, not a map (a strategic merge patch) or a list of \
                     operations (a JSON 6902 patch)",
                    node.kind_name()
                ),
                None,
                Some(offset),
            ));
        };
        if m.is_empty() {
            continue;
        }
        let kind = node.str_at(&["kind"]).unwrap_or("");
        if kind.is_empty() {
            let looks_like_op = m.contains_key("op") && m.contains_key("path");
            return Err(fail(
                format!("missing kind in the patch document{at}"),
                Some(if looks_like_op {
                    "this looks like one JSON 6902 operation: a JSON patch is a list of \
                     operations, so start each with `- op:`"
                } else {
                    "a strategic merge patch names the object it patches: give it `kind` and \
                     `metadata.name`"
                }),
                Some(offset),
            ));
        }
        if kind.ends_with("List") {
            match node.get("items") {
                None => out.push((node, offset)),
                Some(Node::Null) => {}
                Some(Node::Seq(items)) => {
                    for item in items.iter().rev() {
                        queue.push_front((item.clone(), offset));
                    }
                }
                Some(other) => {
                    return Err(fail(
                        format!(
                            "expected array in {kind}/items, but found a {}{at}",
                            other.kind_name(),
                        ),
                        None,
                        Some(offset),
                    ));
                }
            }
            continue;
        }
        if Resource::name_of(&node).is_empty() {
            return Err(fail(
                format!("missing metadata.name in the {kind} patch document{at}"),
                Some(
                    "a strategic merge patch names the object it patches: give it \
                     `metadata.name` (or use a JSON 6902 patch with a target)",
                ),
                Some(offset),
            ));
        }
        out.push((node, offset));
    }
    Ok(out
        .into_iter()
        .map(|(node, offset)| {
            let loc = file.map(|f| Location::line_at(std::sync::Arc::clone(f), offset));
            (node, loc)
        })
        .collect())
}

/// The text as a JSON 6902 operation list, as kustomize reads it (`jsonPatchFromBytes`): an
/// empty text is an error; a text whose first byte is `[` is strict JSON (Go's
/// `encoding/json`: no trailing commas, no YAML); any other text is its first YAML document
/// (sigs.k8s.io/yaml's `YAMLToJSON`, go-yaml v2, so `value: y` is `true`). The value must be
/// null (no operations) or a list of objects (or nulls) (`jsonpatch.DecodePatch`).
fn json_operations(text: &str) -> std::result::Result<Node, (String, Option<usize>)> {
    if text.is_empty() {
        return Err(("the patch is empty".into(), None));
    }
    if text.starts_with('[')
        && let Some((at, what)) = crate::render::json_text::syntax_error(text)
    {
        let line = text[..at].matches('\n').count() + 1;
        return Err((
            format!("the patch opens with `[` and so must be strict JSON (line {line}: {what})"),
            Some(at),
        ));
    }
    let docs =
        crate::yaml::parse::parse_operation_documents(text).map_err(|e| (e.message, e.offset))?;
    let first = docs.into_iter().next().map_or(Node::Null, |d| d.node);
    match first {
        Node::Null => Ok(Node::Seq(Vec::new())),
        Node::Seq(ops) => match ops.iter().find(|o| !matches!(o, Node::Map(_) | Node::Null)) {
            Some(bad) => Err((
                format!("a JSON 6902 operation is a map, not a {}", bad.kind_name()),
                None,
            )),
            None => Ok(Node::Seq(ops)),
        },
        other => Err((
            format!(
                "a JSON 6902 patch is a list of operations, not a {}",
                other.kind_name()
            ),
            None,
        )),
    }
}

/// kustomize's `[path: "…"]` / `[patch: "…"]` naming of a patch (Go's `%q`).
pub(in crate::render) fn source_name(path: Option<&str>, inline: Option<&str>) -> String {
    match (path, inline) {
        (Some(p), _) => format!("[path: {}]", go_quote(p)),
        (None, Some(t)) => format!("[patch: {}]", go_quote(t.trim())),
        (None, None) => "[patch]".into(),
    }
}

fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Reads a file named by a kustomization (relative path) for a patch.
pub(in crate::render) type ReadFn<'a> = &'a mut dyn FnMut(&str) -> Result<PatchFile>;

/// A patch file as read, and maybe already parsed (by the reader thread of `render::ahead`).
pub(in crate::render) struct PatchFile {
    pub file: std::sync::Arc<crate::source::SourceFile>,
    /// [`parse_patch_text`] of the file's text under the name (`source`) it was given then.
    pub parsed: Option<(String, Result<Body>)>,
}

impl PatchFile {
    /// The patch in the file, named `source` in messages.
    fn body(self, source: &str) -> Result<Body> {
        match self.parsed {
            Some((named, body)) if named == source => body,
            _ => parse_patch_text(&self.file.text, Some(&self.file), source),
        }
    }
}

/// Where the kustomization declares each patch entry.
pub(in crate::render) type LocateFn<'a> = &'a dyn Fn(&str, usize) -> Location;

fn options(o: Option<&indexmap::IndexMap<String, bool>>, key: &str) -> bool {
    o.and_then(|m| m.get(key)).copied().unwrap_or(false)
}

/// `patchesStrategicMerge` entries: each is tried as an inline patch first and read as a file
/// otherwise (kustomize's PatchStrategicMergeTransformer `Config`).
pub(in crate::render) fn load_strategic_merge(
    entries: &[String],
    read: ReadFn<'_>,
    locate: LocateFn<'_>,
) -> Result<Vec<Patch>> {
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let declared = Some(locate("patchesStrategicMerge", i));
        // "For legacy reasons, attempt to treat the path string as actual patch content"
        // (`loadFromPaths`, PatchStrategicMergeTransformer): an entry that reads as strategic
        // merge patches is one; anything else names a file.
        let (body, source) = if let Ok(docs) = strategic_documents(entry, None) {
            (Body::Smp(docs), source_name(None, Some(entry)))
        } else {
            let file = read(entry).map_err(|e| e.at_opt(declared.clone()))?;
            let source = source_name(Some(entry), None);
            let docs = match strategic_documents(&file.file.text, Some(&file.file)) {
                Ok(docs) => docs,
                Err(_)
                    if json_operations(&file.file.text)
                        .is_ok_and(|ops| matches!(&ops, Node::Seq(l) if !l.is_empty())) =>
                {
                    return Err(Error::new(
                        ErrorKind::Patch,
                        format!(
                            "{source}: a JSON patch cannot be listed under patchesStrategicMerge"
                        ),
                    )
                    .at_opt(declared)
                    .help("list it under `patches:` with a `target`"));
                }
                Err(e) => {
                    let mut err = Error::new(ErrorKind::Patch, format!("{source}: {}", e.message));
                    if let Some(at) = e.offset {
                        err = err.at(Location::line_at(std::sync::Arc::clone(&file.file), at));
                    }
                    if let Some(h) = e.help {
                        err = err.help(h);
                    }
                    return Err(err.at_opt(declared));
                }
            };
            (Body::Smp(docs), source)
        };
        out.push(Patch {
            body,
            target: None,
            allow_name_change: false,
            allow_kind_change: false,
            flavor: Flavor::StrategicMerge,
            source,
            declared,
            file: None,
        });
    }
    let empty = out
        .iter()
        .all(|p| matches!(&p.body, Body::Smp(docs) if docs.is_empty()));
    if !out.is_empty() && empty {
        return Err(Error::new(
            ErrorKind::Patch,
            format!("patch appears to be empty; files=[{}]", entries.join(" ")),
        )
        .at(locate("patchesStrategicMerge", 0))
        .label("no patch in these entries"));
    }
    Ok(out)
}

/// `patches` entries (kustomize's PatchTransformer `Config`).
pub(in crate::render) fn load_patches(
    entries: &[crate::kustomization::Patch],
    field: &str,
    read: ReadFn<'_>,
    locate: LocateFn<'_>,
    kustomize: KustomizeVersion,
) -> Result<Vec<Patch>> {
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let declared = locate(field, i);
        out.push(load_patch(
            entry,
            Flavor::Patch,
            read,
            Some(declared),
            kustomize,
        )?);
    }
    Ok(out)
}

/// `patchesJson6902` entries (kustomize's PatchJson6902Transformer `Config`).
pub(in crate::render) fn load_json6902(
    entries: &[crate::kustomization::Patch],
    read: ReadFn<'_>,
    locate: LocateFn<'_>,
) -> Result<Vec<Patch>> {
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let declared = locate("patchesJson6902", i);
        out.push(load_patch(
            entry,
            Flavor::Json6902,
            read,
            Some(declared),
            KustomizeVersion::default(),
        )?);
    }
    Ok(out)
}

/// A `patchesJson6902` entry's (or PatchJson6902Transformer's) operations: read only as JSON
/// 6902 (`PatchJson6902TransformerPlugin.Config`), and at least one.
fn json6902_body(
    text: &str,
    file: Option<&std::sync::Arc<crate::source::SourceFile>>,
    source: &str,
) -> Result<Body> {
    let ops = json_operations(text).map_err(|(m, at)| {
        let e = Error::new(
            ErrorKind::Patch,
            format!(
                "{source}: a patchesJson6902 entry must be a list of JSON 6902 operations: {m}"
            ),
        );
        match (file, at) {
            (Some(f), Some(at)) => e.at(Location::line_at(std::sync::Arc::clone(f), at)),
            _ => e,
        }
    })?;
    if matches!(&ops, Node::Seq(list) if list.is_empty()) {
        return Err(Error::new(
            ErrorKind::Patch,
            format!("patch appears to be empty; {source}"),
        )
        .help("list at least one JSON 6902 operation"));
    }
    Ok(Body::Json(ops))
}

/// One `patches` / `patchesJson6902` entry or patch plugin configuration.
pub(in crate::render) fn load_patch(
    entry: &crate::kustomization::Patch,
    flavor: Flavor,
    read: ReadFn<'_>,
    declared: Option<Location>,
    kustomize: KustomizeVersion,
) -> Result<Patch> {
    let err = |m: String| Error::new(ErrorKind::Patch, m).at_opt(declared.clone());
    // Only PatchTransformer trims its inline patch (`strings.TrimSpace(p.Patch)` in
    // `PatchTransformerPlugin.Config`); PatchJson6902Transformer uses its `jsonOp` as written.
    let inline = entry
        .patch
        .as_deref()
        .map(|p| {
            if flavor == Flavor::Json6902 {
                p
            } else {
                p.trim()
            }
        })
        .filter(|p| !p.trim().is_empty());
    let path = entry.path.as_deref().filter(|p| !p.is_empty());
    if flavor == Flavor::Json6902
        && entry
            .target
            .as_ref()
            .is_none_or(|t| t.name.as_deref().is_none_or(str::is_empty))
    {
        return Err(err("must specify the target name".into()));
    }
    // An empty patch file (zero bytes; an inline patch is never empty here).
    let mut empty_file = false;
    let (body, source, file) = match (inline, path) {
        (None, None) => {
            return Err(err(match flavor {
                Flavor::Json6902 => "empty file path and empty jsonOp".into(),
                _ => "must specify one of patch and path".into(),
            }));
        }
        (Some(_), Some(_)) => {
            return Err(err(match flavor {
                Flavor::Json6902 => "must specify a file path or jsonOp, not both".into(),
                _ => "patch and path can't be set at the same time".into(),
            }));
        }
        (Some(t), None) => {
            let source = source_name(None, Some(t));
            let body = match flavor {
                Flavor::Json6902 => json6902_body(t, None, &source),
                _ => parse_patch_text(t, None, &source),
            };
            (body, source, None)
        }
        (None, Some(p)) => {
            let f = read(p).map_err(|e| e.at_opt(declared.clone()))?;
            empty_file = f.file.text.is_empty();
            let source = source_name(Some(p), None);
            let file = std::sync::Arc::clone(&f.file);
            let body = match flavor {
                Flavor::Json6902 => json6902_body(&f.file.text, Some(&f.file), &source),
                _ => f.body(&source),
            };
            (body, source, Some(file))
        }
    };
    let mut body = body.map_err(|e| e.at_opt(declared.clone()))?;
    // A patch that holds nothing: kustomize v5.8 ignores it, whether it reads as both kinds
    // or only as strategic merge patches without a document (PR #5771 and PR #5990:
    // `PatchTransformerPlugin.Transform` runs the JSON patches only when there are some).
    let empty = match &body {
        Body::Nothing => true,
        Body::Smp(docs) => docs.is_empty(),
        Body::Json(_) => false,
    };
    if empty && kustomize.at_least(KustomizeVersion::V5_8_1) && flavor == Flavor::Patch {
        body = Body::Nothing;
    } else if empty_file && entry.target.is_some() && flavor == Flavor::Patch {
        // v5.5.0 applies a zero-byte file with a target as a JSON patch
        // (`PatchTransformerPlugin.transformJson6902`), whose filter reads no text as no
        // operations: the selected objects stay as they are (`{}` instead fails there).
        body = Body::Nothing;
    } else if matches!(body, Body::Nothing) {
        return Err(err(format!(
            "illegally qualifies as both an SM and JSON patch: {source}"
        ))
        .help(
            "the patch holds nothing to apply: write a strategic merge patch (a map with kind \
             and metadata.name) or a list of JSON 6902 operations (kustomize 5.8 ignores such \
             a patch: --kustomize-version 5.8.1)",
        ));
    }
    // A patch with no document (only empty maps) is no strategic merge patch, and kustomize
    // then applies it as a JSON patch (`PatchTransformerPlugin.Transform`): without a target
    // that fails at once ("must specify a target for JSON patch"); with one it fails on the
    // first object the target selects, so a target that selects nothing renders
    // ([`apply_one`]).
    if let Body::Smp(docs) = &body
        && docs.is_empty()
        && entry.target.is_none()
    {
        return Err(err(format!(
            "unable to parse SM or JSON patch from {source}: the patch is empty"
        ))
        .help(
            "a patch needs a map with kind and metadata.name, or a list of JSON 6902 operations",
        ));
    }
    Ok(Patch {
        body,
        target: entry.target.clone(),
        allow_name_change: options(entry.options.as_ref(), "allowNameChange"),
        allow_kind_change: options(entry.options.as_ref(), "allowKindChange"),
        flavor,
        source,
        declared,
        file,
    })
}
