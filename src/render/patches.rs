//! Patches as kustomize applies them: `patchesStrategicMerge`, `patches` and
//! `patchesJson6902` of a kustomization, and the PatchTransformer,
//! PatchStrategicMergeTransformer and PatchJson6902Transformer plugin configurations. Owns
//! loading a patch (strategic merge or JSON 6902, detected as kustomize detects it), choosing
//! its targets (by id through an index, or by a selector of anchored regular expressions and
//! label/annotation selectors) and what happens around the merge (names, namespaces and kinds
//! restored, whole-resource deletes, patches that match nothing). The merging itself is the
//! shared core's (`merge::smp` in kustomize's dialect, `merge::json6902`); reads no files.

use crate::fasthash::FastMap;
use std::fmt::Write as _;

use crate::pattern::Anchored;

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::kustomization::Selector;
use crate::merge::{json6902, smp};
use crate::resource::shared::Snapshot;
use crate::resource::{IdRef, ResId, Resource, effective_namespace, gvk_parts, string_maps};
use crate::schema::Schema;
use crate::source::Location;

use super::KustomizeVersion;
use crate::yaml::Node;

use super::ids::id_string;

/// Decides which kinds are cluster-scoped.
pub(super) type ScopeFn<'a> = crate::resource::ClusterScoped<'a>;

/// What a patch does.
#[derive(Clone, Debug)]
pub(super) enum Body {
    /// Strategic merge patches (one per document), each with where it starts.
    Smp(Vec<(Node, Option<Location>)>),
    /// A JSON 6902 operation list.
    Json(Node),
    /// Nothing to apply: the text reads both as strategic merge patches and as a JSON 6902
    /// list, each empty (an empty file, only comments, `---`, `[]`, `null`). kustomize v5.5.0
    /// refuses it ("illegally qualifies as both an SM and JSON patch"); from v5.8.0 such a
    /// patch is ignored (PR #5771, `PatchTransformerPlugin.Config`), which [`load_patch`]
    /// decides by the render's version.
    Nothing,
}

/// Which kustomize transformer a patch belongs to: their rules differ in small ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flavor {
    /// `patchesStrategicMerge` / PatchStrategicMergeTransformer.
    StrategicMerge,
    /// `patches` / PatchTransformer.
    Patch,
    /// `patchesJson6902` / PatchJson6902Transformer.
    Json6902,
}

/// One loaded patch.
#[derive(Clone, Debug)]
pub(super) struct Patch {
    pub body: Body,
    pub target: Option<Selector>,
    pub allow_name_change: bool,
    pub allow_kind_change: bool,
    pub flavor: Flavor,
    /// How kustomize names the patch in its messages: `[path: "p.yaml"]`, `[patch: "…"]`.
    pub source: String,
    /// Where the patch is declared (the kustomization entry or the plugin configuration).
    pub declared: Option<Location>,
    /// The file of a JSON 6902 patch read from one (field provenance places its values
    /// there; a strategic merge patch's documents carry their own locations).
    pub file: Option<std::sync::Arc<crate::source::SourceFile>>,
}

/// What a render needs to apply patches.
pub(super) struct Context<'a> {
    pub schema: &'a Schema,
    pub cluster_scoped: ScopeFn<'a>,
    /// `--strict`: a patch that matches nothing is an error, not a warning.
    pub strict: bool,
    /// `--max-json-patch-growth`: the most memory an object may take after a JSON 6902 `copy`.
    pub json_patch_growth: usize,
    /// The kustomize release the render matches.
    pub kustomize: KustomizeVersion,
}

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
pub(super) fn parse_patch_text(
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
fn opens_with_list(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .find(|l| !(l.is_empty() || l.starts_with('#') || l.starts_with('%') || *l == "---"))
        .map(|l| l.strip_prefix("--- ").map_or(l, str::trim_start))
        .is_some_and(|l| l.starts_with('[') || l == "-" || l.starts_with("- "))
}

/// Strategic merge patch documents, each with where it starts in its file.
type SmDocs = Vec<(Node, Option<Location>)>;

/// Why a text is not a strategic merge patch, and where (a byte offset in the text).
pub(super) struct NotStrategic {
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
pub(super) fn strategic_documents(
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
        && let Some((at, what)) = super::json_text::syntax_error(text)
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
pub(super) fn source_name(path: Option<&str>, inline: Option<&str>) -> String {
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

/// A selector's text for messages: `{kind: Deployment, name: web}`.
pub(super) fn selector_text(s: &Selector) -> String {
    let mut out = String::new();
    for (k, v) in [
        ("group", &s.group),
        ("version", &s.version),
        ("kind", &s.kind),
        ("name", &s.name),
        ("namespace", &s.namespace),
        ("labelSelector", &s.label_selector),
        ("annotationSelector", &s.annotation_selector),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            if !out.is_empty() {
                out.push_str(", ");
            }
            let _ = write!(out, "{k}: {v}");
        }
    }
    format!("{{{out}}}")
}

fn selector_is_empty(s: &Selector) -> bool {
    [
        &s.group,
        &s.version,
        &s.kind,
        &s.name,
        &s.namespace,
        &s.label_selector,
        &s.annotation_selector,
    ]
    .iter()
    .all(|v| v.as_deref().is_none_or(str::is_empty))
}

/// How many untargeted strategic-merge documents (or exact-name targets) one `apply_all` may
/// have before their targets are found through the id maps (the name map) of [`Index`] rather
/// than by comparing every id of every resource (testing every resource). Hashing every id costs far more than comparing it (several thousand
/// instructions against a few dozen), and an overlay deep in a stack of renaming overlays has
/// a previous id per level on every object: with a few such patches per level the scan is the
/// cheaper one, and building the maps only pays off for many.
const SCAN_LIMIT: usize = 32;

/// Where a patch's targets are looked up. Untargeted patches find resources by any id they had
/// (current and previous, kustomize's `resWrangler.GetMatchingResourcesByAnyId`); a target
/// with an exact name (no regex metacharacters, so the anchored pattern matches only that
/// string) reads the resources that have that name as their original or current name. Both
/// maps are built only when first needed, hold a superset of the true matches (an entry is
/// never removed when a resource is renamed or deleted), and every candidate is checked again
/// with the same test a scan applies, in slot order: the answer is always the scan's.
struct Index {
    /// Resources by every id they had, when the patches have more than [`SCAN_LIMIT`]
    /// untargeted documents. Ids match as kustomize's `ResId.Equals` compares them: group,
    /// version, kind and name, and the effective namespace (none for a cluster-scoped kind,
    /// `default` for an empty one). Whether a kind is cluster-scoped is asked only at lookup:
    /// `namespaced` is keyed with the namespace, `cluster` without it.
    ids: Option<IdMaps>,
    /// Resources by their original and current names, from the first exact-name target on.
    names: Option<FastMap<String, Vec<usize>>>,
    /// Whether `names` may be built: for a few targets a scan costs less.
    use_names: bool,
    /// Key buffer reused between calls.
    scratch: Vec<u8>,
}

struct IdMaps {
    namespaced: FastMap<Vec<u8>, Vec<usize>>,
    cluster: FastMap<Vec<u8>, Vec<usize>>,
}

/// Appends `part` to an index key, after its length (so that no two ids share a key).
fn push_part(key: &mut Vec<u8>, part: &str) {
    key.extend_from_slice(&part.len().to_le_bytes());
    key.extend_from_slice(part.as_bytes());
}

/// The key of `id` without its namespace in `key`.
fn cluster_key(key: &mut Vec<u8>, id: IdRef<'_>) {
    key.clear();
    for part in [id.group, id.version, id.kind, id.name] {
        push_part(key, part);
    }
}

/// The key of `id` with its namespace (`default` for none) in `key`.
fn namespaced_key(key: &mut Vec<u8>, id: IdRef<'_>) {
    cluster_key(key, id);
    push_part(key, effective_namespace(id.namespace, false));
}

/// Records slot `i` under `key` (once).
fn record(map: &mut FastMap<Vec<u8>, Vec<usize>>, key: &[u8], i: usize) {
    match map.get_mut(key) {
        Some(slots) => {
            if !slots.contains(&i) {
                slots.push(i);
            }
        }
        None => {
            map.insert(key.to_vec(), vec![i]);
        }
    }
}

/// Whether `a` and `b` are the same id as kustomize's `ResId.Equals` decides, `cluster`
/// telling whether their kind is cluster-scoped (then namespaces are not compared).
fn same_id(a: IdRef<'_>, b: IdRef<'_>, cluster: bool) -> bool {
    a.name == b.name
        && a.kind == b.kind
        && a.group == b.group
        && a.version == b.version
        && (cluster
            || effective_namespace(a.namespace, false) == effective_namespace(b.namespace, false))
}

/// Whether `r` has (or had) the id `id`.
fn has_any_id(r: &Resource, id: IdRef<'_>, cluster: bool) -> bool {
    r.prev_ids
        .iter()
        .map(ResId::borrowed)
        .chain([r.id_ref()])
        .any(|own| same_id(own, id, cluster))
}

/// Whether a target's name is matched only by itself: no regex metacharacters.
fn exact_name(name: &str) -> bool {
    crate::pattern::is_simple(name) && !name.contains('.')
}

/// How many of `patches` have a target with an exact name.
fn exact_targets(patches: &[Patch]) -> usize {
    patches
        .iter()
        .filter(|p| {
            p.target
                .as_ref()
                .and_then(|t| t.name.as_deref())
                .is_some_and(|n| !n.is_empty() && exact_name(n))
        })
        .count()
}

/// How many strategic-merge documents of `patches` find their target by id.
fn untargeted_documents(patches: &[Patch]) -> usize {
    patches
        .iter()
        .map(|p| match (&p.body, &p.target) {
            (Body::Smp(_), Some(_)) if p.flavor == Flavor::Patch => 0,
            (Body::Smp(docs), _) => docs.len(),
            (Body::Json(_) | Body::Nothing, _) => 0,
        })
        .sum()
}

impl Index {
    /// An index over `resources`, with id maps when `id_maps` (else untargeted patches scan)
    /// and a name map, at the first exact-name target, when `name_map` (else targets scan).
    fn new(resources: &[Option<Resource>], id_maps: bool, name_map: bool) -> Index {
        let mut idx = Index {
            ids: None,
            names: None,
            use_names: name_map,
            scratch: Vec::new(),
        };
        if id_maps {
            idx.ids = Some(IdMaps {
                namespaced: FastMap::default(),
                cluster: FastMap::default(),
            });
            for (i, r) in resources.iter().enumerate() {
                if let Some(r) = r {
                    idx.add(i, r);
                }
            }
        }
        idx
    }

    /// Records the ids and names `r` (at slot `i`) has now, after a change.
    fn add(&mut self, i: usize, r: &Resource) {
        if let Some(maps) = &mut self.ids {
            for id in r.prev_ids.iter().map(ResId::borrowed).chain([r.id_ref()]) {
                namespaced_key(&mut self.scratch, id);
                record(&mut maps.namespaced, &self.scratch, i);
                cluster_key(&mut self.scratch, id);
                record(&mut maps.cluster, &self.scratch, i);
            }
        }
        if let Some(names) = &mut self.names {
            names.entry(r.name().to_string()).or_default().push(i);
        }
    }

    /// The slots of the resources that have or had the id `id`, in slot order.
    fn by_any_id(
        &mut self,
        slots: &[Option<Resource>],
        id: &ResId,
        cluster_scoped: ScopeFn<'_>,
    ) -> Vec<usize> {
        let cluster = cluster_scoped(&id.gvk);
        let has = |i: usize| {
            slots
                .get(i)
                .and_then(Option::as_ref)
                .is_some_and(|r| has_any_id(r, id.borrowed(), cluster))
        };
        let Some(maps) = &self.ids else {
            return (0..slots.len()).filter(|&i| has(i)).collect();
        };
        let map = if cluster {
            cluster_key(&mut self.scratch, id.borrowed());
            &maps.cluster
        } else {
            namespaced_key(&mut self.scratch, id.borrowed());
            &maps.namespaced
        };
        let mut found: Vec<usize> = map
            .get(self.scratch.as_slice())
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
            .filter(|&i| has(i))
            .collect();
        found.sort_unstable();
        found
    }

    /// The slots that may hold a resource whose original or current name is `name`, in slot
    /// order (a superset: the caller tests each), or None when this index keeps no name map.
    fn by_name(&mut self, slots: &[Option<Resource>], name: &str) -> Option<Vec<usize>> {
        if !self.use_names {
            return None;
        }
        let names = self.names.get_or_insert_with(|| {
            let mut names: FastMap<String, Vec<usize>> = FastMap::default();
            for (i, r) in slots.iter().enumerate() {
                let Some(r) = r else { continue };
                let (cur, org) = (r.name(), r.original_id_ref().name);
                names.entry(cur.to_string()).or_default().push(i);
                if org != cur {
                    names.entry(org.to_string()).or_default().push(i);
                }
            }
            names
        });
        let mut found = names.get(name).cloned().unwrap_or_default();
        found.sort_unstable();
        found.dedup();
        Some(found)
    }
}

/// Applies `patches` in order to `resources`. `renamed`: whether a patch may have renamed an
/// object since the list was last rebuilt ([`super::ids::check_unique_slots`]), coming in
/// from patches applied before (`false` at a kustomization's first patch).
pub(super) fn apply_all(
    resources: &mut Vec<Resource>,
    patches: &[Patch],
    cx: &Context<'_>,
    warnings: &mut Warnings,
    renamed: &mut bool,
) -> Result<()> {
    if patches.is_empty() {
        return Ok(());
    }
    let mut slots: Vec<Option<Resource>> =
        std::mem::take(resources).into_iter().map(Some).collect();
    let mut index = Index::new(
        &slots,
        untargeted_documents(patches) > SCAN_LIMIT,
        exact_targets(patches) > SCAN_LIMIT,
    );
    let result = patches
        .iter()
        .try_for_each(|p| apply_one(&mut slots, &mut index, p, cx, warnings, renamed));
    *resources = slots.into_iter().flatten().collect();
    result
}

#[allow(clippy::too_many_lines, reason = "pending")]
fn apply_one(
    slots: &mut [Option<Resource>],
    index: &mut Index,
    p: &Patch,
    cx: &Context<'_>,
    warnings: &mut Warnings,
    renamed: &mut bool,
) -> Result<()> {
    let located = |e: Error| e.at_opt(p.declared.clone());
    // Two objects may share a current id only after a JSON 6902 patch renamed one (kustomize
    // checks ids when a strategic merge patch rebuilds the list, not after a JSON patch).
    let shared_ids = *renamed;
    // A strategic merge patch renames only with `allowNameChange` or `allowKindChange`.
    if matches!(p.body, Body::Smp(_)) && (p.allow_name_change || p.allow_kind_change) {
        *renamed = true;
    }
    // kustomize's `resWrangler.ApplySmPatch` rebuilds the list after the patch.
    let rebuilt = |slots: &[Option<Resource>], renamed: &mut bool| -> Result<()> {
        if std::mem::take(renamed) {
            super::ids::check_unique_slots(slots, cx.cluster_scoped)
                .map_err(|e| located(e).label("after this patch"))?;
        }
        Ok(())
    };
    match (&p.body, &p.target) {
        // An empty patch that the render's kustomize version ignores ([`load_patch`]).
        (Body::Nothing, _) => Ok(()),
        (Body::Smp(docs), Some(target)) if p.flavor == Flavor::Patch => {
            if docs.len() > 1 {
                return Err(located(Error::new(
                    ErrorKind::Patch,
                    format!(
                        "Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: {}",
                        p.source
                    ),
                )));
            }
            let chosen = select(slots, Some(index), target, cx.cluster_scoped).map_err(located)?;
            let Some((doc, _)) = docs.first() else {
                // No document: kustomize applies the text as a JSON patch, which fails on the
                // first selected object (`PatchTransformerPlugin.transformJson6902`).
                if chosen.is_empty() {
                    return unmatched(p, target, true, false, cx, warnings);
                }
                return Err(located(
                    Error::new(
                        ErrorKind::Patch,
                        format!(
                            "unable to parse SM or JSON patch from {}: the patch is empty",
                            p.source
                        ),
                    )
                    .help(
                        "a patch needs a map with kind and metadata.name, or a list of JSON \
                         6902 operations",
                    ),
                ));
            };
            let deletes = smp::deletes_object(doc);
            unmatched(
                p,
                target,
                chosen.is_empty(),
                deletes && selector_is_empty(target),
                cx,
                warnings,
            )?;
            let doc = &string_maps::copy_merge_metadata(doc);
            let chosen = if shared_ids {
                same_current_ids(slots, chosen)
            } else {
                chosen
            };
            for i in chosen {
                smp_into(slots, index, i, doc, p, cx).map_err(|e| {
                    located(Error::new(
                        ErrorKind::Patch,
                        format!("{}: {}", p.source, e.message),
                    ))
                })?;
            }
            rebuilt(slots, renamed)
        }
        (Body::Smp(docs), _) => {
            // kustomize v5.5.0 leaves a deleted object in its list as a nil node until the
            // `patches:` entry is done, and the id lookup of the entry's next document
            // dereferences it (`resWrangler.GetMatchingResourcesByAnyId`): it panics. v5.7
            // skips such nodes (PR #5859).
            if p.flavor == Flavor::Patch
                && !cx.kustomize.at_least(KustomizeVersion::V5_7_1)
                && let Some((_, loc)) = docs[..docs.len().saturating_sub(1)]
                    .iter()
                    .find(|(doc, _)| smp::deletes_object(doc))
            {
                return Err(Error::new(
                    ErrorKind::Patch,
                    format!(
                        "{}: kustomize v5.5.0 fails on a `$patch: delete` document followed by \
                         another document in one patch (a nil pointer dereference in \
                         GetMatchingResourcesByAnyId)",
                        p.source
                    ),
                )
                .at_opt(loc.clone().or_else(|| p.declared.clone()))
                .label("this document deletes its object")
                .help(
                    "kustomize v5.7 and later render it (PR #5859): --kustomize-version 5.8.1; \
                     or put each `$patch: delete` document last, or in a patch of its own",
                ));
            }
            for (doc, loc) in docs {
                // `patchesStrategicMerge` goes through `resWrangler.ApplySmPatch` too; an
                // untargeted `patches:` entry does not (`Resource.ApplySmPatch` directly).
                let prepared;
                let doc = if p.flavor == Flavor::StrategicMerge {
                    prepared = string_maps::copy_merge_metadata(doc);
                    &prepared
                } else {
                    doc
                };
                let id = ResId::of(doc);
                let found = index.by_any_id(slots, &id, cx.cluster_scoped);
                match found.as_slice() {
                    [i] => {
                        let all = if shared_ids && p.flavor == Flavor::StrategicMerge {
                            same_current_ids(slots, vec![*i])
                        } else {
                            vec![*i]
                        };
                        for i in all {
                            smp_into(slots, index, i, doc, p, cx).map_err(|e| {
                                Error::new(ErrorKind::Patch, format!("{}: {}", p.source, e.message))
                                    .at_opt(loc.clone().or_else(|| p.declared.clone()))
                            })?;
                        }
                    }
                    [] => return Err(no_match(slots, &id, p, loc.clone(), cx)),
                    _ => {
                        return Err(Error::new(
                            ErrorKind::Patch,
                            format!(
                                "multiple matches for Id {}; failed to find unique target for patch {}",
                                id_string(&id),
                                id_string(&id)
                            ),
                        )
                        .at_opt(loc.clone().or_else(|| p.declared.clone()))
                        .label("this patch"));
                    }
                }
                if p.flavor == Flavor::StrategicMerge {
                    rebuilt(slots, renamed)?;
                }
            }
            Ok(())
        }
        (Body::Json(ops), target) => {
            let Some(target) = target else {
                return Err(located(Error::new(
                    ErrorKind::Patch,
                    format!("must specify a target for JSON patch {}", p.source),
                )));
            };
            let chosen = select(slots, Some(index), target, cx.cluster_scoped).map_err(located)?;
            unmatched(p, target, chosen.is_empty(), false, cx, warnings)?;
            for i in chosen {
                let Some(r) = slots.get_mut(i).and_then(Option::as_mut) else {
                    continue;
                };
                if p.flavor == Flavor::Patch {
                    r.store_previous_id();
                }
                let before = r.id();
                let build = with_build_annotations(r, cx.cluster_scoped);
                json_patch_in_place(&mut r.node, ops, cx.json_patch_growth, cx.kustomize).map_err(
                    |e| {
                        located(Error::new(
                            ErrorKind::Patch,
                            format!("{}: {}: {}", p.source, e.path, e.message),
                        ))
                    },
                )?;
                without_build_annotations(&mut r.node, &build);
                after_json_round_trip(&mut r.node);
                r.json_round_trip = true;
                *renamed |= r.id() != before;
                r.unshare_all();
                let r = &slots[i];
                if let Some(r) = r {
                    index.add(i, r);
                }
            }
            Ok(())
        }
    }
}

/// The objects a strategic merge patch chosen as `chosen` applies to: kustomize patches every
/// object whose current id is one of theirs (`resWrangler.ApplySmPatch` in
/// `api/resmap/reswrangler.go` takes `resource.MakeIdSet(selected)` and tests each object's
/// `CurId()`), which are more than the chosen ones when a JSON 6902 patch gave two objects one
/// id. In list order.
fn same_current_ids(slots: &[Option<Resource>], chosen: Vec<usize>) -> Vec<usize> {
    let ids: Vec<ResId> = chosen
        .iter()
        .filter_map(|&i| slots.get(i)?.as_ref().map(Resource::id))
        .collect();
    slots
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            chosen.contains(i)
                || r.as_ref()
                    .is_some_and(|r| ids.iter().any(|id| r.id_ref() == id.borrowed()))
        })
        .map(|(i, _)| i)
        .collect()
}

/// Puts kustomize's build annotations ([`Resource::build_annotations`]) into the object's
/// `metadata.annotations`, as kustomize's copy holds them when a JSON patch runs: a patch may
/// add to that map even when the input had none, and one that copies, moves or tests the map
/// sees them (`PatchTransformerPlugin.transformJson6902`, api/internal/builtins). Returns their
/// keys, for [`without_build_annotations`].
fn with_build_annotations(r: &mut Resource, cluster_scoped: ScopeFn<'_>) -> Vec<String> {
    let build = r.build_annotations(cluster_scoped);
    let own = matches!(
        r.node.get_path(&["metadata", "annotations"]),
        Some(Node::Map(_))
    );
    if build.is_empty() && !own {
        return Vec::new();
    }
    let a = r.node.ensure_path(&["metadata", "annotations"]);
    if !matches!(a, Node::Map(_)) {
        *a = Node::empty_map();
    }
    let Node::Map(map) = a else {
        return Vec::new();
    };
    build
        .into_iter()
        .map(|(k, v)| {
            map.insert(k.clone(), Node::str(&v));
            k
        })
        .collect()
}

/// Takes the build annotations out again after the patch: kustomize writes them back over
/// whatever the patch left (`SetAnnotations` with the saved internal annotations) and removes
/// them before it prints, so none of the patch's edits to those keys survive.
fn without_build_annotations(node: &mut Node, keys: &[String]) {
    if let Some(Node::Map(map)) = node.get_path_mut(&["metadata", "annotations"]) {
        for k in keys {
            map.shift_remove(k.as_str());
        }
    }
}

/// What kustomize's JSON round trip leaves of a patched object (`patchjson6902.Filter.run`:
/// `RNode.MarshalJSON`, the patch, `RNode.UnmarshalJSON`, which reads every number as a Go
/// float64): an integer a float64 cannot hold exactly becomes the nearest float64, printed
/// as Go prints it (`9223372036854775807` → `9223372036854776000`). Then kustomize writes the
/// annotations back (`Resource.SetAnnotations`, which drops an empty map; see
/// `metadata::drop_empty_annotations`). Values of string maps lose their source spelling
/// ([`string_maps::after_json_round_trip`]), and a name or namespace written as a number or
/// boolean reads as JSON printed it (`True` is the name "true", `0x10` the namespace "16").
fn after_json_round_trip(node: &mut Node) {
    string_maps::after_json_round_trip(node);
    for key in ["name", "namespace"] {
        if let Some(v @ Node::Spelled(_)) = node.get_path_mut(&["metadata", key]) {
            *v = std::mem::take(v).into_unspelled();
        }
    }
    // Every other number or boolean loses its source spelling too (`2.0` reads `2`, which a
    // later replacement copies; `reading::keeps_own_text`); string maps' nulls keep "null".
    fn floats(n: &mut Node) {
        if matches!(n, Node::Spelled(s) if !s.value.is_null()) {
            *n = std::mem::take(n).into_unspelled();
        }
        match n {
            // A Go float64 that go-yaml v3 then writes as `strconv.FormatFloat(f, 'g', -1,
            // 64)` (`encoder.floatv`): below 1e6 integer digits, which read back as an int;
            // from 1e6 on an exponent form (`1.234567e+06`), which reads back as a float
            // (`RNode.UnmarshalJSON` → `FromMap`, kyaml/yaml/rnode.go). Printed as
            // [`crate::yaml::emit::format_float`] prints it (`2^64` → `1.8446744073709552e+19`).
            Node::Int(i) if i.unsigned_abs() >= 1_000_000 => *n = Node::Float(*i as f64),
            Node::Int(_) => {}
            Node::Map(m) => m.values_mut().for_each(floats),
            Node::Seq(items) => items.iter_mut().for_each(floats),
            _ => {}
        }
    }
    floats(node);
    // Strings take the style go-yaml gives them as it prints the decoded object: `"a"` is
    // plain after the trip, `"8080"` stays quoted (what a later strategic merge patch sees,
    // `Map::styled`).
    crate::yaml::emit::restyle_as_printed(node);
    // The values of string maps are then read as their text (`RNode.GetAnnotations`,
    // `GetDataMap`): the text go-yaml v3 wrote for the float64 (`9223372036854775808` →
    // `"9.223372036854776e+18"`).
    for path in [
        &["metadata", "labels"][..],
        &["metadata", "annotations"],
        &["data"],
        &["binaryData"],
    ] {
        let Some(map) = node.get_path_mut(path).and_then(Node::as_map_mut) else {
            continue;
        };
        for v in map.values_mut() {
            if let Node::Float(f) = v
                && f.is_finite()
            {
                let text = crate::merge::ssa::value::go_float_v(*f);
                if v.scalar_text().as_deref() != Some(text.as_str()) {
                    let value = std::mem::take(v);
                    *v = Node::Spelled(Box::new(crate::yaml::Spelled { value, text }));
                }
            }
        }
    }
    crate::resource::keep_id_text(node);
    super::metadata::drop_empty_annotations(node);
}

/// [`json6902::apply`] editing the object in place instead of a copy (same errors): on an
/// error the render stops, so the half-patched object is never read.
fn json_patch_in_place(
    doc: &mut Node,
    ops: &Node,
    max_growth: usize,
    version: KustomizeVersion,
) -> std::result::Result<(), crate::merge::MergeError> {
    let Node::Seq(list) = ops else {
        // Not a list of operations: `apply` refuses it before touching the object.
        return json6902::apply(&Node::Null, ops).map(drop);
    };
    for (i, op) in list.iter().enumerate() {
        json6902::apply_op_with(doc, op, max_growth, version).map_err(|mut e| {
            e.message = format!("operation {i}: {}", e.message);
            e
        })?;
    }
    Ok(())
}

/// Warns (or, with `--strict`, fails) about a targeted patch that matches nothing, or one
/// whose empty selector makes it delete every resource.
fn unmatched(
    p: &Patch,
    target: &Selector,
    none: bool,
    deletes_all: bool,
    cx: &Context<'_>,
    warnings: &mut Warnings,
) -> Result<()> {
    let message = if none {
        format!(
            "patch {} matches no resource: target {} selects nothing (kustomize ignores it)",
            p.source,
            selector_text(target)
        )
    } else if deletes_all {
        format!(
            "patch {} deletes every resource: target {} selects all of them and the patch is `$patch: delete`",
            p.source,
            selector_text(target)
        )
    } else {
        return Ok(());
    };
    if cx.strict {
        return Err(Error::new(ErrorKind::Strict, message)
            .at_opt(p.declared.clone())
            .label("this patch")
            .help("fix the target, or remove the patch; without --strict (PLY_STRICT) this is a warning"));
    }
    warnings.warn(match &p.declared {
        Some(l) => format!("{}: {message}", l.describe()),
        None => message,
    });
    Ok(())
}

/// The error for an untargeted strategic merge patch whose object does not exist, naming the
/// closest ids that do.
fn no_match(
    slots: &[Option<Resource>],
    id: &ResId,
    p: &Patch,
    loc: Option<Location>,
    _cx: &Context<'_>,
) -> Error {
    let id_text = id_string(id);
    let message = match p.flavor {
        Flavor::Patch => format!(
            "no resource matches strategic merge patch \"{id_text}\": no matches for Id {id_text}; failed to find unique target for patch {id_text}"
        ),
        _ => {
            format!("no matches for Id {id_text}; failed to find unique target for patch {id_text}")
        }
    };
    let mut scored: Vec<(usize, String)> = slots
        .iter()
        .flatten()
        .map(|r| {
            let rid = r.id();
            let mut score = 0;
            if rid.gvk.kind != id.gvk.kind {
                score += 4;
            }
            if rid.gvk.group != id.gvk.group || rid.gvk.version != id.gvk.version {
                score += 2;
            }
            if rid.namespace != id.namespace {
                score += 1;
            }
            score += crate::diag::suggest::levenshtein(&rid.name, &id.name);
            (score, id_string(&rid))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    let closest: Vec<String> = scored.into_iter().take(3).map(|(_, s)| s).collect();
    let mut e = Error::new(ErrorKind::Patch, message)
        .at_opt(loc.or_else(|| p.declared.clone()))
        .label("no object has this patch's kind, name and namespace");
    e = if closest.is_empty() {
        e.help("there are no resources to patch at this point")
    } else {
        e.help(format!(
            "the closest existing ids are: {}",
            closest.join(", ")
        ))
    };
    e
}

/// Strategic-merges `patch` into the resource at `i` as kustomize's `Resource.ApplySmPatch`
/// does: the patch takes the resource's apiVersion, and the name, namespace and kind come back
/// unless the patch's options allow changing them; a patch that empties the object deletes it.
fn smp_into(
    slots: &mut [Option<Resource>],
    index: &mut Index,
    i: usize,
    patch: &Node,
    p: &Patch,
    cx: &Context<'_>,
) -> std::result::Result<(), crate::merge::MergeError> {
    let Some(slot) = slots.get_mut(i) else {
        return Ok(());
    };
    let Some(r) = slot.as_mut() else {
        return Ok(());
    };
    let (name, namespace, kind) = (
        r.name().to_string(),
        r.namespace().to_string(),
        r.kind().to_string(),
    );
    if p.allow_name_change || p.allow_kind_change {
        r.store_previous_id();
    }
    let gvk = r.gvk();
    // The patch's apiVersion, when it has one, is replaced by the resource's.
    let patch_api_version = patch.as_map().is_some_and(|m| m.contains_key("apiVersion"));
    let resource_api_version = r.node.get("apiVersion");
    let adjusted;
    let (patch, keep): (&Node, &[&str]) = match resource_api_version {
        Some(av) if patch_api_version => match av {
            // A scalar merged over itself leaves the object's value as it is.
            Node::Str(_) | Node::Int(_) | Node::Float(_) | Node::Bool(_) => {
                (patch, &["apiVersion"])
            }
            _ => {
                let mut copy = patch.clone();
                if let Node::Map(m) = &mut copy {
                    m.insert("apiVersion".into(), av.clone());
                }
                adjusted = copy;
                (&adjusted, &[])
            }
        },
        _ => (patch, &[]),
    };
    // The resource's tree moves into the merge (no copy) and the patch is read in place (only
    // what the object takes from it is copied); on an error the render stops, so the emptied
    // slot is never read.
    // A targeted patch takes the object's group, version and kind (`patchCopy.SetGvk` in
    // `PatchTransformerPlugin.transformStrategicMerge`): an object without an apiVersion gets
    // an empty one from it, which kustomize prints as null.
    let empty_api_version = p.flavor == Flavor::Patch
        && p.target.is_some()
        && r.node.get("apiVersion").is_none_or(Node::is_null);
    if !r.json_round_trip {
        drop_empty_nulls(r, cx.schema.kustomize_root(&gvk));
    }
    // Values shared between maps change together (`resource::shared`).
    let shared = Snapshot::take(r);
    let original = std::mem::take(&mut r.node);
    let merged = smp::apply_kustomize(original, patch, cx.schema, &gvk, keep)?;
    if merged.as_map().is_none_or(|m| m.is_empty()) {
        *slot = None;
        return Ok(());
    }
    r.node = merged;
    shared.replay_patch(r, patch);
    if empty_api_version && let Some(m) = r.node.as_map_mut() {
        m.insert("apiVersion".into(), Node::Null);
    }
    if !p.allow_kind_change {
        *r.node.ensure_path(&["kind"]) = Node::str(kind);
    }
    if !p.allow_name_change {
        r.reset_id_field("name", &name);
    }
    if namespace.is_empty() {
        if let Some(Node::Map(m)) = r.node.get_mut("metadata") {
            m.shift_remove("namespace");
        }
    } else {
        r.reset_id_field("namespace", &namespace);
    }
    if p.allow_name_change || p.allow_kind_change {
        let r = &*r;
        index.add(i, r);
    }
    Ok(())
}

/// Removes the fields of `r` whose null was written as nothing (`replicas:`) in its file,
/// wherever kyaml's walker visits them: maps reached through maps and the elements of merged
/// lists. kustomize's strategic merge re-sets every field it walks through `FieldSetter`,
/// which clears a null field, except one whose null was spelled out (`null`, `~`), which
/// `merge2.VisitMap` keeps ("preserve explicitly set null in Dest"). The document model keeps
/// no spelling, so the resource's document is read again marking the empty ones; nothing is
/// read when the object holds no null where the walker goes.
fn drop_empty_nulls(r: &mut Resource, cur: crate::schema::Cursor<'_>) {
    // A resource's empty flow value (`{k: }`) reads as "" (`yaml::parse`, `flow_empty_string`)
    // and is dropped as an empty block value is.
    fn any_null(m: &crate::yaml::Map) -> bool {
        m.values().any(|v| match v {
            Node::Null => true,
            Node::Str(s) if s.is_empty() => true,
            Node::Map(inner) => any_null(inner),
            Node::Seq(items) => items.iter().filter_map(Node::as_map).any(any_null),
            _ => false,
        })
    }
    let Some(Node::Map(m)) = Some(&r.node) else {
        return;
    };
    if !any_null(m) {
        return;
    }
    let Some(origin) = &r.origin else {
        return;
    };
    let Some(text) = origin.file.text.get(origin.offset..) else {
        return;
    };
    let Ok(docs) = crate::yaml::parse::parse_documents_marking_empty_nulls(text) else {
        return;
    };
    let Some(Node::Map(written)) = docs.into_iter().map(|d| d.node).find(|n| !n.is_null()) else {
        return;
    };
    // A `*List` document holds its items: not this object's own text.
    if written
        .get("kind")
        .and_then(Node::as_str)
        .is_some_and(|k| k.ends_with("List") && written.contains_key("items"))
    {
        return;
    }
    if let Node::Map(m) = &mut r.node {
        drop_marked(m, &written, cur);
    }
}

fn drop_marked(
    m: &mut crate::yaml::Map,
    written: &crate::yaml::Map,
    cur: crate::schema::Cursor<'_>,
) {
    let is_mark =
        |v: Option<&Node>| v.and_then(Node::as_str) == Some(crate::yaml::parse::EMPTY_NULL);
    let empty = |v: &Node| v.is_null() || v.as_str() == Some("");
    m.retain(|k, v| !(empty(v) && is_mark(written.get(k))));
    for (k, v) in m.iter_mut() {
        let (sub, meta) = cur.kustomize_field(k);
        match (v, written.get(k)) {
            (Node::Map(inner), Some(Node::Map(w))) => drop_marked(inner, w, sub),
            (Node::Seq(items), Some(Node::Seq(w))) if meta.strategy.merge => {
                let Some(key) = meta.merge_key.as_deref() else {
                    continue;
                };
                let text = |n: &Node| n.get(key).and_then(Node::scalar_text);
                for item in items.iter_mut() {
                    let Some(t) = text(item) else { continue };
                    let twin = w
                        .iter()
                        .rev()
                        .find(|x| text(x).as_deref() == Some(t.as_str()));
                    if let (Node::Map(im), Some(Node::Map(wm))) = (item, twin) {
                        drop_marked(im, wm, sub.items());
                    }
                }
            }
            _ => {}
        }
    }
}

/// A selector compiled as kustomize's `SelectorRegex`: each part an anchored regular
/// expression.
struct Compiled {
    group: Option<Anchored>,
    version: Option<Anchored>,
    kind: Option<Anchored>,
    name: Option<Anchored>,
    namespace: Option<Anchored>,
    labels: Option<crate::resource::selector::Selector>,
    annotations: Option<crate::resource::selector::Selector>,
}

fn compile(s: &Selector) -> Result<Compiled> {
    let re = |part: &Option<String>| -> Result<Option<Anchored>> {
        match part.as_deref().filter(|p| !p.is_empty()) {
            None => Ok(None),
            Some(p) => Anchored::new(p).map(Some).map_err(|e| {
                Error::new(
                    ErrorKind::Patch,
                    format!("invalid regular expression {p:?} in a patch target: {e}"),
                )
            }),
        }
    };
    let sel = |part: &Option<String>| -> Result<Option<crate::resource::selector::Selector>> {
        match part.as_deref().filter(|p| !p.trim().is_empty()) {
            None => Ok(None),
            Some(p) => crate::resource::selector::Selector::parse(p)
                .map(Some)
                .map_err(|e| Error::new(ErrorKind::Patch, e.message)),
        }
    };
    Ok(Compiled {
        group: re(&s.group)?,
        version: re(&s.version)?,
        kind: re(&s.kind)?,
        name: re(&s.name)?,
        namespace: re(&s.namespace)?,
        labels: sel(&s.label_selector)?,
        annotations: sel(&s.annotation_selector)?,
    })
}

/// The resources a selector picks (kustomize's `resWrangler.Select`), in slot order: the
/// namespace and name may match the original id or the current one, the group/version/kind
/// the current one. With an `index` and a name without regex metacharacters (which the
/// anchored pattern matches only literally), only the resources with that original or current
/// name are tested; otherwise every resource is.
fn select(
    slots: &[Option<Resource>],
    index: Option<&mut Index>,
    s: &Selector,
    cluster_scoped: ScopeFn<'_>,
) -> Result<Vec<usize>> {
    let c = compile(s)?;
    let exact = match (&c.name, index) {
        (Some(Anchored::Simple(name)), Some(index)) if exact_name(name) => {
            index.by_name(slots, name)
        }
        _ => None,
    };
    let picks = |&i: &usize| {
        slots
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|r| selected(&c, r, cluster_scoped))
    };
    Ok(match exact {
        Some(candidates) => candidates.into_iter().filter(picks).collect(),
        None => (0..slots.len()).filter(picks).collect(),
    })
}

/// For field provenance, before the patch runs: the objects of `resources` each document of
/// `p` applies to, as [`apply_one`] picks them (a `patches:` target's selection for its one
/// document, else the object each strategic merge document's id names; a JSON 6902 list's
/// target). Indices into `resources`; an error of the patch's own is reported when it runs.
pub(super) fn chosen(
    resources: &[Resource],
    p: &Patch,
    cluster_scoped: ScopeFn<'_>,
) -> Vec<Vec<usize>> {
    let by_target = |s: &Selector| match compile(s) {
        Ok(c) => (0..resources.len())
            .filter(|&i| selected(&c, &resources[i], cluster_scoped))
            .collect(),
        Err(_) => Vec::new(),
    };
    match (&p.body, &p.target) {
        (Body::Nothing, _) => Vec::new(),
        (Body::Smp(_), Some(target)) if p.flavor == Flavor::Patch => vec![by_target(target)],
        (Body::Smp(docs), _) => docs
            .iter()
            .map(|(doc, _)| {
                let id = ResId::of(doc);
                let cluster = cluster_scoped(&id.gvk);
                (0..resources.len())
                    .filter(|&i| has_any_id(&resources[i], id.borrowed(), cluster))
                    .collect()
            })
            .collect(),
        (Body::Json(_), Some(target)) => vec![by_target(target)],
        (Body::Json(_), None) => Vec::new(),
    }
}

/// Whether the compiled selector `c` picks `r`.
fn selected(c: &Compiled, r: &Resource, cluster_scoped: ScopeFn<'_>) -> bool {
    let is = |re: &Option<Anchored>, a: &str| re.as_ref().is_none_or(|re| re.is_match(a));
    // The group, version and kind first: they need no `metadata` lookups.
    let (group, version, kind) = gvk_parts(&r.node);
    if !is(&c.group, group) || !is(&c.version, version) || !is(&c.kind, kind) {
        return false;
    }
    let cur = r.id_ref();
    let org = r.original_id_ref();
    let ns_matches = |id: IdRef<'_>| {
        is(
            &c.namespace,
            effective_namespace(id.namespace, cluster_scoped(&id.gvk())),
        )
    };
    if c.namespace.is_some() && !ns_matches(org) && !ns_matches(cur) {
        return false;
    }
    if !is(&c.name, org.name) && !is(&c.name, cur.name) {
        return false;
    }
    if let Some(l) = &c.labels
        && !l.matches(&r.node)
    {
        return false;
    }
    if let Some(a) = &c.annotations {
        let mut fake = Node::Map(Default::default());
        if let Some(ann) = r.node.get_path(&["metadata", "annotations"]) {
            *fake.ensure_path(&["metadata", "labels"]) = ann.clone();
        }
        if !a.matches(&fake) {
            return false;
        }
    }
    true
}

/// Reads a file named by a kustomization (relative path) for a patch.
pub(super) type ReadFn<'a> = &'a mut dyn FnMut(&str) -> Result<PatchFile>;

/// A patch file as read, and maybe already parsed (by the reader thread of `render::ahead`).
pub(super) struct PatchFile {
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
pub(super) type LocateFn<'a> = &'a dyn Fn(&str, usize) -> Location;

fn options(o: Option<&indexmap::IndexMap<String, bool>>, key: &str) -> bool {
    o.and_then(|m| m.get(key)).copied().unwrap_or(false)
}

/// `patchesStrategicMerge` entries: each is tried as an inline patch first and read as a file
/// otherwise (kustomize's PatchStrategicMergeTransformer `Config`).
pub(super) fn load_strategic_merge(
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
pub(super) fn load_patches(
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
pub(super) fn load_json6902(
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
pub(super) fn load_patch(
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

/// The positions of the resources a selector picks (for other selector-driven transformers).
pub(super) fn select_indices(
    slots: &[Option<Resource>],
    s: &Selector,
    cluster_scoped: ScopeFn<'_>,
) -> Result<Vec<usize>> {
    select(slots, None, s, cluster_scoped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Gvk;

    #[test]
    fn operation_lists_are_told_from_objects_by_their_first_content_line() {
        for text in [
            "- op: add",
            "# c\n\n---\n- op: add",
            "--- [{\"op\": \"add\"}]",
            "[{\"op\": \"add\"}]",
            "%YAML 1.1\n---\n-\n  op: add",
        ] {
            assert!(opens_with_list(text), "{text:?}");
        }
        for text in ["", "kind: X", "-x: 1", "--- {a: 1}", "# - op: add\nkind: X"] {
            assert!(!opens_with_list(text), "{text:?}");
        }
        // One reading either way: YAML 1.1 booleans in operations, YAML 1.2 in objects.
        let Ok(Body::Json(ops)) =
            parse_patch_text("- op: add\n  path: /a\n  value: y\n", None, "t")
        else {
            panic!("not read as operations");
        };
        assert_eq!(
            ops.as_seq()
                .and_then(|s| s.first())
                .and_then(|o| o.get("value")),
            Some(&Node::Bool(true))
        );
    }
    use crate::yaml::parse::parse_one;

    fn res(text: &str) -> Resource {
        Resource::new(parse_one(text).unwrap(), None)
    }

    fn no_scope(_: &Gvk) -> bool {
        false
    }

    #[test]
    fn index_compares_effective_namespaces() {
        let slots = [
            Some(res(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
            )),
            Some(res(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n",
            )),
            Some(res(
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, namespace: x}\n",
            )),
        ];
        let scope = |g: &Gvk| g.kind == "Namespace";
        for id_maps in [true, false] {
            let mut index = Index::new(&slots, id_maps, false);
            let mut find = |text: &str| index.by_any_id(&slots, &res(text).id(), &scope);
            let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a";
            assert_eq!(find(&format!("{cm}, namespace: default}}\n")), [0]);
            assert_eq!(find(&format!("{cm}}}\n")), [0]);
            assert_eq!(find(&format!("{cm}, namespace: other}}\n")), [1]);
            assert!(find(&format!("{cm}, namespace: third}}\n")).is_empty());
            // A cluster-scoped kind ignores the namespace.
            assert_eq!(
                find("apiVersion: v1\nkind: Namespace\nmetadata: {name: a, namespace: y}\n"),
                [2]
            );
        }
    }

    #[test]
    fn index_selection_equals_the_scan() {
        let texts = [
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {t: x}}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, annotations: {k: v}}\n",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: abc}\n",
        ];
        let mut slots: Vec<Option<Resource>> = texts.iter().map(|t| Some(res(t))).collect();
        // Two objects renamed by prefixes (their original names stay matchable), one deleted.
        for (i, names) in [(1, ["p-a", "q-p-a"]), (3, ["b", "p-b"])] {
            let r = slots[i].as_mut().unwrap();
            for n in names {
                r.store_previous_id();
                r.set_name(n);
            }
        }
        slots.push(None);
        let scope = |g: &Gvk| g.kind == "Namespace";
        let sel = |name: &str, ns: &str, kind: &str, labels: &str| Selector {
            name: Some(name.into()).filter(|s: &String| !s.is_empty()),
            namespace: Some(ns.into()).filter(|s: &String| !s.is_empty()),
            kind: Some(kind.into()).filter(|s: &String| !s.is_empty()),
            label_selector: Some(labels.into()).filter(|s: &String| !s.is_empty()),
            ..Selector::default()
        };
        let cases = [
            (sel("a", "", "", ""), vec![0, 1, 2, 4]),
            (sel("a", "other", "", ""), vec![1]),
            (sel("a", "default", "ConfigMap", ""), vec![0]),
            (sel("a", "", "", "t=x"), vec![0]),
            (sel("p-a", "", "", ""), vec![]),
            (sel("q-p-a", "", "", ""), vec![1]),
            (sel("b", "", "", ""), vec![3]),
            (sel("p-b", "", "ConfigMap", ""), vec![3]),
            (sel("a.*", "", "", ""), vec![0, 1, 2, 4, 5]),
            (sel("a.c", "", "", ""), vec![5]),
            (sel("", "other", "", ""), vec![1]),
            (sel("zz", "", "", ""), vec![]),
        ];
        let mut index = Index::new(&slots, false, true);
        for (s, want) in cases {
            let scanned = select(&slots, None, &s, &scope).unwrap();
            let indexed = select(&slots, Some(&mut index), &s, &scope).unwrap();
            assert_eq!(scanned, want, "{s:?}");
            assert_eq!(indexed, scanned, "{s:?}");
        }
        // Untargeted lookups: every previous id counts, through the maps or a scan alike.
        for id_maps in [true, false] {
            let mut index = Index::new(&slots, id_maps, false);
            let mut find = |text: &str| index.by_any_id(&slots, &res(text).id(), &scope);
            let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:";
            assert_eq!(
                find(&format!("{cm} {{name: p-a, namespace: other}}\n")),
                [1]
            );
            assert_eq!(find(&format!("{cm} {{name: a, namespace: other}}\n")), [1]);
            assert_eq!(find(&format!("{cm} {{name: p-b}}\n")), [3]);
            assert!(find(&format!("{cm} {{name: p-a}}\n")).is_empty());
        }
    }

    #[test]
    fn detects_json_and_strategic_merge() {
        let json = parse_patch_text("- op: remove\n  path: /a\n", None, "p").unwrap();
        assert!(matches!(json, Body::Json(_)));
        let json = parse_patch_text("[{\"op\": \"remove\", \"path\": \"/a\"}]", None, "p").unwrap();
        assert!(matches!(json, Body::Json(_)));
        let smp = parse_patch_text(
            "kind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: b}\n",
            None,
            "p",
        )
        .unwrap();
        assert!(matches!(&smp, Body::Smp(d) if d.len() == 2));
        assert!(parse_patch_text("just text", None, "p").is_err());
    }

    /// kustomize's `PatchTransformerPlugin.Config`: exactly one of the two readings succeeds
    /// (v5.5.0), or both do and the patch holds nothing (ignored from v5.8.0).
    #[test]
    fn one_reading_must_succeed_as_in_kustomize() {
        let msg = |t: &str| parse_patch_text(t, None, "p").unwrap_err().message;
        // Both readings succeed: nothing to apply.
        for t in ["\n", "---\n", "---\n---\n", "# c\n", "[]", "null\n"] {
            let body = parse_patch_text(t, None, "p").unwrap();
            assert!(matches!(body, Body::Nothing), "{t:?}");
            let entry = crate::kustomization::Patch {
                patch: Some(format!("# keep\n{t}")),
                ..Default::default()
            };
            let mut read = |_: &str| -> Result<PatchFile> { unreachable!() };
            let mut load = |v| load_patch(&entry, Flavor::Patch, &mut read, None, v);
            let refused = load(KustomizeVersion::V5_5_0).err().unwrap().message;
            assert!(
                refused.starts_with("illegally qualifies as both"),
                "{t:?}: {refused}"
            );
            let ignored = load(KustomizeVersion::V5_8_1).unwrap();
            assert!(matches!(ignored.body, Body::Nothing), "{t:?}");
        }
        // Both fail.
        for (t, why) in [
            ("op: add\npath: /a\nvalue: 1\n", "missing kind"),
            ("metadata: {name: c}\ndata: {x: y}\n", "missing kind"),
            ("kind: ConfigMap\ndata: {x: y}\n", "missing metadata.name"),
            (
                "kind: ConfigMap\nmetadata: {name: \"\"}\n",
                "missing metadata.name",
            ),
            (
                "[{\"op\": \"add\", \"path\": \"/a\", \"value\": 1}, ]",
                "strict JSON",
            ),
            ("[{op: add, path: /a, value: 1}]", "strict JSON"),
            ("[1]", "operation is a map"),
            ("kind: List\nitems: 3\n", "expected array in List/items"),
            (
                "kind: List\nitems: [{metadata: {name: a}}]\n",
                "missing kind",
            ),
        ] {
            let m = msg(t);
            assert!(
                m.starts_with("unable to parse SM or JSON patch from p: "),
                "{t:?}: {m}"
            );
            assert!(m.contains(why), "{t:?}: {m}");
        }
        // One succeeds.
        let only_empty_maps = parse_patch_text("{}\n---\n{}\n", None, "p").unwrap();
        assert!(matches!(&only_empty_maps, Body::Smp(d) if d.is_empty()));
        let first_doc_only =
            parse_patch_text("- op: remove\n  path: /a\n---\nkind: X\n", None, "p");
        assert!(matches!(first_doc_only, Ok(Body::Json(_))));
        let list = parse_patch_text(
            "kind: List\nitems:\n- {kind: A, metadata: {name: a}}\n- {}\n- {kind: BList}\n",
            None,
            "p",
        )
        .unwrap();
        assert!(matches!(&list, Body::Smp(d) if d.len() == 2));
        let trailing_comma_in_yaml_flow =
            parse_patch_text("{kind: A, metadata: {name: a}, }", None, "p").unwrap();
        assert!(matches!(&trailing_comma_in_yaml_flow, Body::Smp(d) if d.len() == 1));
    }

    #[test]
    fn selector_parts_are_anchored_regexes() {
        let slots = vec![
            Some(res(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
            )),
            Some(res(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web-2}\n",
            )),
            Some(res(
                "apiVersion: v1\nkind: Service\nmetadata: {name: web, labels: {a: b}}\n",
            )),
        ];
        let sel = |name: &str| Selector {
            name: Some(name.into()),
            ..Selector::default()
        };
        assert_eq!(
            select(&slots, None, &sel("web"), &no_scope).unwrap(),
            [0, 2]
        );
        assert_eq!(
            select(&slots, None, &sel("web.*"), &no_scope).unwrap(),
            [0, 1, 2]
        );
        let by_label = Selector {
            label_selector: Some("a=b".into()),
            ..Selector::default()
        };
        assert_eq!(select(&slots, None, &by_label, &no_scope).unwrap(), [2]);
        let by_group = Selector {
            group: Some("apps".into()),
            name: Some("web".into()),
            ..Selector::default()
        };
        assert_eq!(select(&slots, None, &by_group, &no_scope).unwrap(), [0]);
    }

    #[test]
    fn untargeted_patch_finds_object_by_previous_id_and_keeps_name() {
        let mut r = res("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: '1'}\n");
        r.store_previous_id();
        r.set_name("pre-cm");
        let mut resources = vec![r];
        let patch = Patch {
            body: parse_patch_text(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: x}\ndata: {b: '2'}\n",
                None,
                "p",
            )
            .unwrap(),
            target: None,
            allow_name_change: false,
            allow_kind_change: false,
            flavor: Flavor::Patch,
            source: "p".into(),
            declared: None,
            file: None,
        };
        let schema = Schema::empty();
        let cx = Context {
            schema: &schema,
            cluster_scoped: &no_scope,
            strict: false,
            json_patch_growth: json6902::MAX_COPY_GROWTH,
            kustomize: KustomizeVersion::default(),
        };
        let mut w = Warnings::default();
        // The patch names namespace x: no object has it.
        assert!(
            apply_all(
                &mut resources,
                std::slice::from_ref(&patch),
                &cx,
                &mut w,
                &mut false
            )
            .is_err()
        );
        let mut patch = patch;
        patch.body = parse_patch_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {b: '2'}\n",
            None,
            "p",
        )
        .unwrap();
        apply_all(&mut resources, &[patch], &cx, &mut w, &mut false).unwrap();
        assert_eq!(resources[0].name(), "pre-cm");
        assert_eq!(resources[0].node.str_at(&["data", "b"]), Some("2"));
    }

    #[test]
    fn targeted_patch_keeps_the_resource_api_version() {
        let schema = Schema::empty();
        let cx = Context {
            schema: &schema,
            cluster_scoped: &no_scope,
            strict: false,
            json_patch_growth: json6902::MAX_COPY_GROWTH,
            kustomize: KustomizeVersion::default(),
        };
        let patch = |text: &str| Patch {
            body: parse_patch_text(text, None, "p").unwrap(),
            target: Some(Selector {
                kind: Some("ConfigMap".into()),
                ..Selector::default()
            }),
            allow_name_change: false,
            allow_kind_change: false,
            flavor: Flavor::Patch,
            source: "p".into(),
            declared: None,
            file: None,
        };
        let mut w = Warnings::default();
        for (object_api_version, want) in [("v1", "apiVersion: v1\n"), ("7", "apiVersion: 7\n")] {
            let mut resources = vec![res(&format!(
                "apiVersion: {object_api_version}\nkind: ConfigMap\nmetadata: {{name: cm}}\ndata: {{a: '1'}}\n"
            ))];
            let p = patch(
                "apiVersion: v2\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {b: '2', a: null}\n",
            );
            apply_all(&mut resources, &[p], &cx, &mut w, &mut false).unwrap();
            let text = crate::yaml::emit_documents(
                [&resources[0].node],
                crate::yaml::emit::EmitOptions::default(),
            );
            assert!(text.starts_with(want), "{text}");
            assert!(text.contains("b: \"2\"") && !text.contains("a: "), "{text}");
        }
        // An object without apiVersion gives the patch its empty one, printed as null
        // (checked with kubectl kustomize).
        let mut resources = vec![res("kind: ConfigMap\nmetadata: {name: cm}\n")];
        let p = patch("apiVersion: v2\nkind: ConfigMap\nmetadata: {name: cm}\n");
        apply_all(&mut resources, &[p], &cx, &mut w, &mut false).unwrap();
        assert_eq!(resources[0].node.get("apiVersion"), Some(&Node::Null));
    }

    #[test]
    fn unmatched_target_warns_and_strict_fails() {
        let patch = Patch {
            body: parse_patch_text("- op: remove\n  path: /data\n", None, "p").unwrap(),
            target: Some(Selector {
                kind: Some("Nope".into()),
                ..Selector::default()
            }),
            allow_name_change: false,
            allow_kind_change: false,
            flavor: Flavor::Patch,
            source: "[path: \"p\"]".into(),
            declared: None,
            file: None,
        };
        let schema = Schema::empty();
        let mut cx = Context {
            schema: &schema,
            cluster_scoped: &no_scope,
            strict: false,
            json_patch_growth: json6902::MAX_COPY_GROWTH,
            kustomize: KustomizeVersion::default(),
        };
        let mut resources = vec![res(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
        )];
        let mut w = Warnings::default();
        apply_all(
            &mut resources,
            std::slice::from_ref(&patch),
            &cx,
            &mut w,
            &mut false,
        )
        .unwrap();
        assert_eq!(
            w.messages(),
            [
                "patch [path: \"p\"] matches no resource: target {kind: Nope} selects nothing (kustomize ignores it)"
            ]
        );
        cx.strict = true;
        let e = apply_all(&mut resources, &[patch], &cx, &mut w, &mut false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Strict);
        assert_eq!(resources.len(), 1);
    }
}
