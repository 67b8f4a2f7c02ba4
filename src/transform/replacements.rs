//! `replacements:` (kustomize's ReplacementTransformer): copy a value from one field of one
//! object (the source, with optional `delimiter`/`index` to take a part) into fields of the
//! selected objects (targets: `select`, `reject`, `fieldPaths` with `[name=value]` list
//! selectors — values are unanchored regular expressions, as in kustomize — numeric indexes and
//! `*` wildcards; `options.delimiter`/`index` to replace a part, `options.create` to create
//! missing fields). Entries given by `path:` are read by the caller and passed in as nodes.
//! Changes only the target fields.
//!
//! kustomize: `api/filters/replacement/replacement.go`, `api/internal/builtins/
//! ReplacementTransformer.go` (`Config`: files holding one replacement or a list) and kyaml's
//! `PathMatcher` (`kyaml/yaml/match.go`) for how target paths match and create.

use regex::Regex;

use crate::diag::{Error, ErrorKind};
use crate::kustomization::{
    FieldOptions, ReplacementField, ReplacementSource, ReplacementTarget, Selector,
};
use crate::resource::shared::Snapshot;
use crate::resource::{ResId, Resource, Step};
use crate::yaml::Node;
use crate::yaml::emit::format_float;
use crate::yaml::resolve::resolve_plain_lenient as resolve_plain;

use super::refpath::{
    ClusterScoped, all_ids, id_selected_by, list_selector, lookup, smarter_split_path,
};

const DEFAULT_FIELD_PATH: &str = "metadata.name";

fn err(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Transformer, message)
}

/// Expands `replacements:` entries: inline ones are kept; a `path:` entry is replaced by the
/// replacement (a map) or replacements (a list) in the file `load` returns for it. kustomize
/// reads those files leniently (`yaml.Unmarshal`): fields it does not know are dropped, and
/// their paths are pushed to `ignored` (`file: path.to.field`) for the caller to warn about.
pub fn collect(
    fields: &[ReplacementField],
    load: &mut dyn FnMut(&str) -> Result<Node, Error>,
    ignored: &mut Vec<String>,
) -> Result<Vec<ReplacementField>, Error> {
    let mut out = Vec::new();
    for f in fields {
        let Some(path) = f.path.as_deref().filter(|p| !p.is_empty()) else {
            out.push(f.clone());
            continue;
        };
        if f.source.is_some() || !f.targets.is_empty() {
            return Err(err("cannot specify both path and inline replacement").help(
                "a replacements entry is either `path: FILE` or an inline `source` with `targets`",
            ));
        }
        let mut node = load(path)?;
        let mut dropped = Vec::new();
        match &mut node {
            Node::Seq(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    prune(item, Shape::Replacement, &format!("[{i}]"), &mut dropped);
                }
            }
            other => prune(other, Shape::Replacement, "", &mut dropped),
        }
        ignored.extend(dropped.into_iter().map(|d| format!("{path}: {d}")));
        let decode = |n: &Node| -> Result<ReplacementField, Error> {
            crate::yaml::de::from_node::<ReplacementField>(n).map_err(|e| {
                err(format!(
                    "replacement file {path}: {}{}",
                    e.path_string(),
                    if e.path.is_empty() {
                        e.message.clone()
                    } else {
                        format!(": {}", e.message)
                    }
                ))
            })
        };
        match &node {
            Node::Seq(items) => {
                for item in items {
                    out.push(decode(item)?);
                }
            }
            Node::Map(_) => out.push(decode(&node)?),
            other => {
                return Err(err(format!(
                    "unsupported replacement type encountered within replacement path: {}",
                    go_reflect_kind(other)
                )));
            }
        }
    }
    Ok(out)
}

/// Runs a `ReplacementTransformer` plugin configuration (`apiVersion: builtin`, listed under
/// `transformers:`): its `replacements:` list holds inline replacements and `path:` entries,
/// read through `load` (kustomize's `ReplacementTransformerPlugin.Config`). Unknown fields of
/// replacement files go to `ignored`, as in [`collect`].
pub fn apply_plugin_config(
    config: &Node,
    resources: &mut [Resource],
    cluster_scoped: ClusterScoped,
    load: &mut dyn FnMut(&str) -> Result<Node, Error>,
    ignored: &mut Vec<String>,
) -> Result<(), Error> {
    let list = config.get("replacements").cloned().unwrap_or(Node::Null);
    let fields: Vec<ReplacementField> = crate::yaml::de::from_node(&list).map_err(|e| {
        err(format!(
            "ReplacementTransformer: replacements{}: {}",
            e.path_string(),
            e.message
        ))
    })?;
    let list = collect(&fields, load, ignored)?;
    apply(resources, &list, cluster_scoped)
}

/// The shapes of a replacement file's maps, for dropping unknown fields.
#[derive(Clone, Copy)]
enum Shape {
    Replacement,
    Source,
    Target,
    Selector,
    Options,
}

impl Shape {
    /// The known keys, each with the shape of its value (`None` for a leaf, `Some((shape,
    /// true))` for a list of that shape).
    fn keys(self) -> &'static [(&'static str, Option<(Shape, bool)>)] {
        const ID: [(&str, Option<(Shape, bool)>); 5] = [
            ("group", None),
            ("version", None),
            ("kind", None),
            ("name", None),
            ("namespace", None),
        ];
        match self {
            Shape::Replacement => &[
                ("path", None),
                ("source", Some((Shape::Source, false))),
                ("targets", Some((Shape::Target, true))),
            ],
            Shape::Source => &[
                ID[0],
                ID[1],
                ID[2],
                ID[3],
                ID[4],
                ("fieldPath", None),
                ("options", Some((Shape::Options, false))),
            ],
            Shape::Target => &[
                ("select", Some((Shape::Selector, false))),
                ("reject", Some((Shape::Selector, true))),
                ("fieldPaths", None),
                ("options", Some((Shape::Options, false))),
            ],
            Shape::Selector => &[
                ID[0],
                ID[1],
                ID[2],
                ID[3],
                ID[4],
                ("labelSelector", None),
                ("annotationSelector", None),
            ],
            Shape::Options => &[
                ("delimiter", None),
                ("index", None),
                ("encoding", None),
                ("create", None),
            ],
        }
    }
}

/// Drops the keys `shape` does not know (matched ignoring ASCII case, as Go's JSON decoding
/// does), recording their paths.
fn prune(node: &mut Node, shape: Shape, at: &str, dropped: &mut Vec<String>) {
    let Node::Map(m) = node else {
        return;
    };
    let keys = shape.keys();
    m.retain(|k, _| {
        let known = keys.iter().any(|(name, _)| name.eq_ignore_ascii_case(k));
        if !known {
            dropped.push(if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            });
        }
        known
    });
    for (k, v) in m.iter_mut() {
        let Some((_, Some((sub, is_list)))) = keys.iter().find(|(n, _)| n.eq_ignore_ascii_case(k))
        else {
            continue;
        };
        let here = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        match (v, is_list) {
            (Node::Seq(items), true) => {
                for (i, item) in items.iter_mut().enumerate() {
                    prune(item, *sub, &format!("{here}[{i}]"), dropped);
                }
            }
            (v, _) => prune(v, *sub, &here, dropped),
        }
    }
}

fn go_reflect_kind(n: &Node) -> &'static str {
    match n.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Null => "invalid",
        Node::Bool(_) => "bool",
        Node::Int(_) => "int64",
        Node::Float(_) => "float64",
        Node::Str(_) => "string",
        Node::Seq(_) => "slice",
        Node::Map(_) => "map",
    }
}

/// Applies the replacements, in order, to `resources`.
pub fn apply(
    resources: &mut [Resource],
    replacements: &[ReplacementField],
    cluster_scoped: ClusterScoped,
) -> Result<(), Error> {
    for r in replacements {
        let (Some(source), false) = (r.source.as_ref(), r.targets.is_empty()) else {
            return Err(err(
                "replacements must specify a source and at least one target",
            ));
        };
        let value = source_value(resources, source, cluster_scoped)?;
        for target in &r.targets {
            apply_target(resources, &value, target, cluster_scoped)?;
        }
    }
    Ok(())
}

/// kustomize's `SourceSelector.String`: `group_version_kind|namespace|name:fieldPath:options`.
fn source_string(s: &ReplacementSource) -> String {
    let id = ResId {
        gvk: crate::resource::Gvk {
            group: s.group.clone().unwrap_or_default(),
            version: s.version.clone().unwrap_or_default(),
            kind: s.kind.clone().unwrap_or_default(),
        },
        namespace: s.namespace.clone().unwrap_or_default(),
        name: s.name.clone().unwrap_or_default(),
    };
    let mut out = id.to_string();
    if let Some(fp) = s.field_path.as_deref().filter(|p| !p.is_empty()) {
        out.push(':');
        out.push_str(fp);
    }
    if let Some(o) = &s.options {
        let d = o.delimiter.as_deref().unwrap_or("");
        if !d.is_empty() || o.create {
            out.push_str(&format!(":{d}({}), create={}", o.index, o.create));
        }
    }
    out
}

fn source_value(
    resources: &[Resource],
    source: &ReplacementSource,
    cluster_scoped: ClusterScoped,
) -> Result<Node, Error> {
    let mut found: Option<&Resource> = None;
    for r in resources {
        let hit = all_ids(r).iter().any(|id| {
            id_selected_by(
                id,
                cluster_scoped,
                source.group.as_deref(),
                source.version.as_deref(),
                source.kind.as_deref(),
                source.name.as_deref(),
                source.namespace.as_deref(),
            )
        });
        if hit {
            if found.is_some() {
                return Err(err(format!(
                    "multiple matches for selector {}",
                    source_string(source)
                ))
                .help("narrow the source with name, namespace, kind, group or version so that it selects one object"));
            }
            found = Some(r);
        }
    }
    let Some(r) = found else {
        return Err(err(format!(
            "nothing selected by {}",
            source_string(source)
        )));
    };
    let path = source
        .field_path
        .as_deref()
        .filter(|p| !p.is_empty())
        .unwrap_or(DEFAULT_FIELD_PATH);
    let node = lookup(&r.node, &smarter_split_path(path, '.'))
        .map_err(|e| err(format!("error looking up replacement source: {e}")))?;
    let node = match node {
        Some(n) if !is_nil_or_empty(n) => n,
        _ => {
            return Err(err(format!(
                "fieldPath `{path}` is missing for replacement source {}",
                resid_string(source)
            )));
        }
    };
    // A folded string read back as another value: kustomize copies the text as written
    // (kyaml's `Node.Value`), which the target prints without the folded style.
    let written;
    let node = match node {
        Node::Spelled(s) if matches!(s.value, Node::Str(_)) => {
            written = Node::Str(s.text.clone());
            &written
        }
        n => n,
    };
    refine(source.options.as_ref(), node)
}

fn resid_string(s: &ReplacementSource) -> String {
    let mut c = s.clone();
    c.field_path = None;
    c.options = None;
    source_string(&c)
}

fn is_nil_or_empty(n: &Node) -> bool {
    match n {
        Node::Null => true,
        Node::Map(m) => m.is_empty(),
        Node::Seq(s) => s.is_empty(),
        _ => false,
    }
}

/// The text of a scalar as kustomize holds it.
fn text_of(n: &Node) -> String {
    match n {
        Node::Float(f) => format_float(*f),
        other => other.scalar_text().unwrap_or_default(),
    }
}

/// kustomize's `getRefinedValue`: with a delimiter, the `index`-th part of the source text.
fn refine(options: Option<&FieldOptions>, node: &Node) -> Result<Node, Error> {
    let Some(delim) = options
        .and_then(|o| o.delimiter.as_deref())
        .filter(|d| !d.is_empty())
    else {
        return Ok(node.clone());
    };
    if !node.is_scalar() {
        return Err(err("delimiter option can only be used with scalar nodes"));
    }
    let index = options.map_or(0, |o| o.index);
    let text = text_of(node);
    let parts: Vec<&str> = text.split(delim).collect();
    let part = usize::try_from(index)
        .ok()
        .and_then(|i| parts.get(i))
        .ok_or_else(|| {
            err(format!(
                "options.index {index} is out of bounds for value {text}"
            ))
        })?;
    retext(node, part, true)
}

/// A scalar that keeps `like`'s type with new text. kustomize changes only the text of a
/// scalar and keeps its YAML tag, so text that does not read as that type fails when the
/// object is printed ("cannot decode !!str `abc` as a !!int"); ply reports it here.
fn retext(like: &Node, text: &str, from_source: bool) -> Result<Node, Error> {
    let mismatch = |tag: &str| {
        let resolved = match resolve_plain(text) {
            Node::Null => "!!null",
            Node::Bool(_) => "!!bool",
            Node::Int(_) => "!!int",
            Node::Float(_) => "!!float",
            _ => "!!str",
        };
        err(format!(
            "yaml: cannot decode {resolved} `{text}` as a {tag}{}",
            if from_source {
                " (replacement source)"
            } else {
                ""
            }
        ))
        .help("the replaced field keeps its type: the new value must read as that type")
    };
    Ok(match like.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Str(_) => Node::Str(text.to_string()),
        Node::Int(_) => match resolve_plain(text) {
            n @ Node::Int(_) => n,
            _ => return Err(mismatch("!!int")),
        },
        Node::Float(_) => match resolve_plain(text) {
            Node::Int(i) => Node::Float(i as f64),
            n @ Node::Float(_) => n,
            _ => return Err(mismatch("!!float")),
        },
        Node::Bool(_) => match resolve_plain(text) {
            n @ Node::Bool(_) => n,
            _ => return Err(mismatch("!!bool")),
        },
        Node::Null => match resolve_plain(text) {
            Node::Null => Node::Null,
            _ => return Err(mismatch("!!null")),
        },
        Node::Seq(_) | Node::Map(_) => like.clone(),
    })
}

fn selector_parts(s: &Selector) -> [Option<&str>; 5] {
    [
        s.group.as_deref(),
        s.version.as_deref(),
        s.kind.as_deref(),
        s.name.as_deref(),
        s.namespace.as_deref(),
    ]
}

fn selects_id(s: &Selector, id: &ResId, cluster_scoped: ClusterScoped) -> bool {
    let [g, v, k, n, ns] = selector_parts(s);
    id_selected_by(id, cluster_scoped, g, v, k, n, ns)
}

fn id_part_empty(s: &Selector) -> bool {
    selector_parts(s)
        .iter()
        .all(|p| p.is_none_or(str::is_empty))
}

fn apply_target(
    resources: &mut [Resource],
    value: &Node,
    t: &ReplacementTarget,
    cluster_scoped: ClusterScoped,
) -> Result<(), Error> {
    let Some(select) = &t.select else {
        return Err(err("target must specify resources to select"));
    };
    let paths: Vec<&str> = if t.field_paths.is_empty() {
        vec![DEFAULT_FIELD_PATH]
    } else {
        t.field_paths.iter().map(String::as_str).collect()
    };
    let select_labels = LabelMatch::new(select)?;
    let reject_labels: Vec<LabelMatch> = t
        .reject
        .iter()
        .filter(|r| {
            r.annotation_selector
                .as_deref()
                .is_some_and(|s| !s.is_empty())
                || r.label_selector.as_deref().is_some_and(|s| !s.is_empty())
        })
        .map(LabelMatch::new)
        .collect::<Result<_, _>>()?;
    for r in resources.iter_mut() {
        if !select_labels.matches(&r.node) || reject_labels.iter().any(|m| m.matches(&r.node)) {
            continue;
        }
        let ids = all_ids(r);
        let rejected = t
            .reject
            .iter()
            .filter(|rj| !id_part_empty(rj))
            .any(|rj| ids.iter().any(|id| selects_id(rj, id, cluster_scoped)));
        if rejected || !ids.iter().any(|id| selects_id(select, id, cluster_scoped)) {
            continue;
        }
        let options = t.options.as_ref();
        let create = options.is_some_and(|o| o.create);
        for fp in &paths {
            let parts = smarter_split_path(fp, '.');
            let what = if create {
                format!("unable to find or create field \"{fp}\" in replacement target")
            } else {
                format!("unable to find field \"{fp}\" in replacement target")
            };
            let mut count = 0usize;
            let created_kind = if create { Some(kind_of(value)) } else { None };
            let mut setter = |n: &mut Node, fresh: bool| -> Result<(), Error> {
                count += 1;
                set_field(options, n, value, fresh)
            };
            // An existing field is written in place (`setFieldValue`: `SetYNode`), so a value
            // shared between maps changes in all of them (`resource::shared`).
            let shared = Snapshot::take(r);
            match_path(&mut r.node, &parts, created_kind, &mut setter, false).map_err(
                |e| match e {
                    MatchError::Path(m) => err(format!("{what}: {m}")),
                    MatchError::Set(e) => e,
                },
            )?;
            let target: Option<Vec<Step>> = parts
                .iter()
                .map(|p| {
                    (!p.is_empty() && !p.contains(['[', '*']) && p.parse::<usize>().is_err())
                        .then(|| Step::Key(p.clone()))
                })
                .collect();
            shared.replay_writes(r, target.as_deref(), value);
            if count == 0 {
                return Err(err(what).help(
                    "the field must exist in every selected object; set `options: {create: true}` to create it",
                ));
            }
        }
        // kustomize rejects an object left without a name (kyaml's `GetValidatedMetadata`,
        // which reads a number or boolean written there as its text).
        crate::resource::keep_id_text(&mut r.node);
        let kind = r.kind().to_string();
        if !kind.ends_with("List") && r.name().is_empty() {
            return Err(err(format!(
                "missing metadata.name in object {kind} (after a replacement wrote its name)"
            ))
            .help("the value copied into metadata.name must be a non-empty string"));
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Scalar,
    Seq,
    Map,
}

fn kind_of(n: &Node) -> Kind {
    match n {
        Node::Seq(_) => Kind::Seq,
        Node::Map(_) => Kind::Map,
        _ => Kind::Scalar,
    }
}

enum MatchError {
    Path(String),
    Set(Error),
}

/// A new, empty node of the kind kyaml creates for the path part after `next` (a list when
/// the next part indexes or selects, the value's kind at the end, a map otherwise).
fn new_node(next: Option<&String>, leaf: Kind) -> (Node, bool) {
    let kind = match next {
        None => leaf,
        Some(p) if p.starts_with('[') && p.ends_with(']') => Kind::Seq,
        Some(p) if p.parse::<usize>().is_ok() => Kind::Seq,
        Some(p) if p.is_empty() => leaf,
        Some(_) => Kind::Map,
    };
    match kind {
        Kind::Seq => (Node::Seq(Vec::new()), false),
        Kind::Map => (Node::empty_map(), false),
        // A created scalar has no tag yet: it takes the type its text reads as.
        Kind::Scalar => (Node::Null, true),
    }
}

fn wrong_kind(want: &str, n: &Node) -> MatchError {
    MatchError::Path(format!(
        "wrong node kind: expected {want} but got {}",
        super::refpath::go_kind(n)
    ))
}

/// kyaml's `PathMatcher`: calls `f` on every node `parts` matches, creating missing parts when
/// `create` gives the kind of the value to be written. `fresh` tells `f` the node was just
/// created.
fn match_path(
    node: &mut Node,
    parts: &[String],
    create: Option<Kind>,
    f: &mut dyn FnMut(&mut Node, bool) -> Result<(), Error>,
    fresh: bool,
) -> Result<(), MatchError> {
    let Some((part, rest)) = parts.split_first() else {
        return f(node, fresh).map_err(MatchError::Set);
    };
    let next = rest.first();
    if let Ok(idx) = part.parse::<usize>() {
        let Node::Seq(items) = node else {
            return Err(wrong_kind("SequenceNode", node));
        };
        let mut fresh_elem = false;
        if let Some(leaf) = create {
            if items.len() == idx {
                let (n, is_fresh) = new_node(next, leaf);
                items.push(n);
                fresh_elem = is_fresh;
            }
        }
        let len = items.len();
        let Some(elem) = items.get_mut(idx) else {
            return Err(MatchError::Path(format!(
                "index {idx} specified but only {len} elements found"
            )));
        };
        return match_path(elem, rest, create, f, fresh_elem);
    }
    if let Some((field, pattern)) = list_selector(part).map_err(MatchError::Path)? {
        let Node::Seq(items) = node else {
            return Err(wrong_kind("SequenceNode", node));
        };
        let re = Regex::new(pattern).map_err(|e| MatchError::Path(e.to_string()))?;
        let mut matched = false;
        for _round in 0..2 {
            for item in items.iter_mut() {
                let text = if field.is_empty() {
                    item.is_scalar().then(|| text_of(item))
                } else {
                    item.get(field).filter(|v| v.is_scalar()).map(text_of)
                };
                if text.is_some_and(|t| re.is_match(t.trim())) {
                    matched = true;
                    if field.is_empty() {
                        // A matched list item is the end of the path (kyaml ignores the rest).
                        f(item, false).map_err(MatchError::Set)?;
                    } else {
                        match_path(item, rest, create, f, false)?;
                    }
                }
            }
            if matched || create.is_none() {
                break;
            }
            let value = Node::Str(pattern.to_string());
            let elem = if field.is_empty() {
                value
            } else {
                let mut m = crate::yaml::Map::default();
                m.insert(field.to_string(), value);
                Node::Map(m)
            };
            items.push(elem);
        }
        return Ok(());
    }
    if part == "*" {
        let Node::Seq(items) = node else {
            return Err(wrong_kind("SequenceNode", node));
        };
        for item in items.iter_mut() {
            match_path(item, rest, create, f, false)?;
        }
        return Ok(());
    }
    match node {
        Node::Null if create.is_none() => Ok(()),
        Node::Null | Node::Map(_) => {
            if node.is_null() {
                *node = Node::empty_map();
            }
            let Node::Map(m) = node else {
                return Ok(());
            };
            let mut fresh_child = false;
            if !m.contains_key(part.as_str()) {
                let Some(leaf) = create else {
                    return Ok(());
                };
                let (n, is_fresh) = new_node(next, leaf);
                fresh_child = is_fresh;
                m.insert(part.clone(), n);
            }
            match m.get_mut(part.as_str()) {
                Some(child) => match_path(child, rest, create, f, fresh_child),
                None => Ok(()),
            }
        }
        other => Err(wrong_kind("MappingNode", other)),
    }
}

/// kustomize's `setFieldValue`: with a delimiter, the value replaces one part of the target's
/// text (index below 0 prepends, past the end appends); a scalar target keeps its type and
/// takes the new text; any other target is replaced by the value.
fn set_field(
    options: Option<&FieldOptions>,
    target: &mut Node,
    value: &Node,
    fresh: bool,
) -> Result<(), Error> {
    // kustomize copies only the text into a scalar target (a list or map value has none, so
    // the target is left with empty text); any other target takes the whole value.
    let mut text = if value.is_scalar() {
        text_of(value)
    } else {
        String::new()
    };
    if let Some(delim) = options
        .and_then(|o| o.delimiter.as_deref())
        .filter(|d| !d.is_empty())
    {
        if !target.is_scalar() {
            return Err(err("delimiter option can only be used with scalar nodes"));
        }
        let current = if fresh {
            String::new()
        } else {
            text_of(target)
        };
        let mut parts: Vec<String> = current.split(delim).map(str::to_string).collect();
        let index = options.map_or(0, |o| o.index);
        match usize::try_from(index) {
            Err(_) => parts.insert(0, text),
            Ok(i) if i >= parts.len() => parts.push(text),
            Ok(i) => {
                if let Some(p) = parts.get_mut(i) {
                    *p = text;
                }
            }
        }
        text = parts.join(delim);
    }
    if target.is_scalar() {
        *target = if fresh {
            resolve_plain(&text)
        } else {
            retext(target, &text, false)?
        };
    } else {
        *target = value.clone();
    }
    Ok(())
}

/// A target's `labelSelector` and `annotationSelector` (Kubernetes label-selector syntax).
struct LabelMatch {
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

impl LabelMatch {
    fn new(s: &Selector) -> Result<LabelMatch, Error> {
        Ok(LabelMatch {
            labels: parse_selector(s.label_selector.as_deref().unwrap_or(""))?,
            annotations: parse_selector(s.annotation_selector.as_deref().unwrap_or(""))?,
        })
    }

    fn matches(&self, node: &Node) -> bool {
        let meta = |k: &str| node.get_path(&["metadata", k]).and_then(Node::as_map);
        let check = |reqs: &[Requirement], m: Option<&crate::yaml::Map>| {
            reqs.iter().all(|r| {
                let v = m.and_then(|m| m.get(&r.key)).and_then(Node::scalar_text);
                r.matches(v.as_deref())
            })
        };
        check(&self.labels, meta("labels")) && check(&self.annotations, meta("annotations"))
    }
}

#[derive(Debug, PartialEq)]
enum Op {
    Exists,
    NotExists,
    In(Vec<String>),
    NotIn(Vec<String>),
    Gt(i64),
    Lt(i64),
}

#[derive(Debug, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
}

impl Requirement {
    fn matches(&self, v: Option<&str>) -> bool {
        match (&self.op, v) {
            (Op::Exists, v) => v.is_some(),
            (Op::NotExists, v) => v.is_none(),
            (Op::In(vals), Some(v)) => vals.iter().any(|x| x == v),
            (Op::In(_), None) => false,
            (Op::NotIn(vals), Some(v)) => !vals.iter().any(|x| x == v),
            (Op::NotIn(_), None) => true,
            (Op::Gt(n), Some(v)) => v.parse::<i64>().is_ok_and(|x| x > *n),
            (Op::Lt(n), Some(v)) => v.parse::<i64>().is_ok_and(|x| x < *n),
            (Op::Gt(_) | Op::Lt(_), None) => false,
        }
    }
}

/// Parses a Kubernetes label selector: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
/// `a`, `!a`, `a>1`, `a<1`, joined by commas.
fn parse_selector(s: &str) -> Result<Vec<Requirement>, Error> {
    let bad = |m: &str| err(format!("invalid selector {s:?}: {m}"));
    let mut out = Vec::new();
    let mut parts: Vec<String> = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() || !parts.is_empty() {
        parts.push(cur);
    }
    for p in parts {
        let p = p.trim();
        if p.is_empty() {
            return Err(bad("empty requirement"));
        }
        let words: Vec<&str> = p.split_whitespace().collect();
        let list = |rest: &str| -> Result<Vec<String>, Error> {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| bad("expected a (list)"))?;
            Ok(inner.split(',').map(|x| x.trim().to_string()).collect())
        };
        let req = if let Some(k) = p.strip_prefix('!') {
            Requirement {
                key: k.trim().to_string(),
                op: Op::NotExists,
            }
        } else if words.len() >= 2 && (words[1] == "in" || words[1].starts_with("in(")) {
            let rest = p[words[0].len()..].trim_start().trim_start_matches("in");
            Requirement {
                key: words[0].to_string(),
                op: Op::In(list(rest)?),
            }
        } else if words.len() >= 2 && (words[1] == "notin" || words[1].starts_with("notin(")) {
            let rest = p[words[0].len()..].trim_start().trim_start_matches("notin");
            Requirement {
                key: words[0].to_string(),
                op: Op::NotIn(list(rest)?),
            }
        } else if let Some((k, v)) = p.split_once("!=") {
            Requirement {
                key: k.trim().to_string(),
                op: Op::NotIn(vec![v.trim().to_string()]),
            }
        } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
            Requirement {
                key: k.trim().to_string(),
                op: Op::In(vec![v.trim().to_string()]),
            }
        } else if let Some((k, v)) = p.split_once('>') {
            Requirement {
                key: k.trim().to_string(),
                op: Op::Gt(v.trim().parse().map_err(|_| bad("expected an integer"))?),
            }
        } else if let Some((k, v)) = p.split_once('<') {
            Requirement {
                key: k.trim().to_string(),
                op: Op::Lt(v.trim().parse().map_err(|_| bad("expected an integer"))?),
            }
        } else {
            Requirement {
                key: p.to_string(),
                op: Op::Exists,
            }
        };
        out.push(req);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    fn res(text: &str) -> Resource {
        Resource::new(parse_one(text).unwrap(), None)
    }

    fn repls(text: &str) -> Vec<ReplacementField> {
        crate::yaml::de::from_node(&parse_one(text).unwrap()).unwrap()
    }

    fn apply_t(rs: &mut [Resource], r: &[ReplacementField]) -> Result<(), Error> {
        apply(rs, r, &|_| false)
    }

    fn resources() -> Vec<Resource> {
        vec![
            res(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  image: nginx:1.2\n  port: \"8080\"\n  host: a.b.c\n",
            ),
            res(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n    app: web\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: main\n        image: x\n      - name: sidecar\n        image: y\n",
            ),
        ]
    }

    fn image(rs: &[Resource], i: usize) -> Option<String> {
        rs[1]
            .node
            .get_path(&["spec", "template", "spec", "containers"])
            .and_then(Node::as_seq)
            .and_then(|s| s.get(i))
            .and_then(|c| c.str_at(&["image"]))
            .map(str::to_string)
    }

    #[test]
    fn copies_into_selected_list_items_and_wildcards() {
        let mut rs = resources();
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.image}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths:\n    - spec.template.spec.containers.[name=main].image\n",
        );
        apply_t(&mut rs, &r).unwrap();
        assert_eq!(image(&rs, 0).as_deref(), Some("nginx:1.2"));
        assert_eq!(image(&rs, 1).as_deref(), Some("y"));
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.image, options: {delimiter: ':', index: 1}}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.spec.containers.*.image]\n    options: {delimiter: ':', index: 1}\n",
        );
        apply_t(&mut rs, &r).unwrap();
        assert_eq!(image(&rs, 0).as_deref(), Some("nginx:1.2"));
        assert_eq!(image(&rs, 1).as_deref(), Some("y:1.2"));
    }

    #[test]
    fn keeps_the_target_type_and_creates_plain_scalars() {
        let mut rs = resources();
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.port}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.replicas, metadata.labels.app, spec.new.field]\n    options: {create: true}\n",
        );
        apply_t(&mut rs, &r).unwrap();
        let d = &rs[1].node;
        assert_eq!(d.get_path(&["spec", "replicas"]), Some(&Node::Int(8080)));
        assert_eq!(
            d.get_path(&["metadata", "labels", "app"]),
            Some(&Node::str("8080"))
        );
        assert_eq!(
            d.get_path(&["spec", "new", "field"]),
            Some(&Node::Int(8080))
        );
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.host}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.replicas]\n",
        );
        assert!(
            apply_t(&mut rs, &r)
                .unwrap_err()
                .message
                .contains("cannot decode")
        );
    }

    #[test]
    fn reports_kustomizes_errors() {
        let mut rs = resources();
        let missing = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.image}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.nothing]\n",
        );
        let e = apply_t(&mut rs, &missing).unwrap_err();
        assert!(
            e.message.contains("unable to find field \"spec.nothing\""),
            "{}",
            e.message
        );
        let none = repls("- source: {kind: Secret}\n  targets:\n  - select: {kind: Deployment}\n");
        assert!(
            apply_t(&mut rs, &none)
                .unwrap_err()
                .message
                .contains("nothing selected by")
        );
        let many = repls("- source: {name: src}\n  targets:\n  - select: {kind: Deployment}\n");
        apply_t(&mut rs, &many).unwrap();
        assert_eq!(rs[1].name(), "src");
        let two = repls("- source: {version: v1}\n  targets:\n  - select: {kind: Deployment}\n");
        assert!(
            apply_t(&mut rs, &two)
                .unwrap_err()
                .message
                .contains("multiple matches")
        );
        let no_path = repls(
            "- source: {kind: ConfigMap, fieldPath: data.none}\n  targets:\n  - select: {kind: Deployment}\n",
        );
        assert!(
            apply_t(&mut rs, &no_path)
                .unwrap_err()
                .message
                .contains("is missing for replacement source")
        );
    }

    #[test]
    fn rejects_by_id_and_label() {
        let mut rs = resources();
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.host}\n  targets:\n  - select: {name: src}\n    reject: [{kind: ConfigMap}]\n    fieldPaths: [data.host]\n  - select: {labelSelector: app=web}\n    fieldPaths: [metadata.labels.app]\n",
        );
        apply_t(&mut rs, &r).unwrap();
        assert_eq!(
            rs[1].node.str_at(&["metadata", "labels", "app"]),
            Some("a.b.c")
        );
    }

    #[test]
    fn files_drop_unknown_fields_and_report_them() {
        let file = parse_one("source: {kind: ConfigMap, name: src, fieldPath: data.image, comment: x}\ntargets:\n- select: {kind: Deployment, note: y}\n  fieldPaths: [metadata.name]\nextra: 1\n").unwrap();
        let fields = repls("- path: r.yaml\n");
        let mut ignored = Vec::new();
        let got = collect(&fields, &mut |_| Ok(file.clone()), &mut ignored).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(
            ignored,
            vec![
                "r.yaml: extra".to_string(),
                "r.yaml: source.comment".to_string(),
                "r.yaml: targets[0].select.note".to_string()
            ]
        );
    }

    #[test]
    fn scalar_targets_take_text_only_and_names_must_stay() {
        let mut rs = resources();
        let r = repls(
            "- source: {kind: Deployment, name: d, fieldPath: spec.template.spec.containers}\n  targets:\n  - select: {kind: ConfigMap}\n    fieldPaths: [data.host]\n",
        );
        apply_t(&mut rs, &r).unwrap();
        assert_eq!(rs[0].node.str_at(&["data", "host"]), Some(""));
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.name]\n",
        );
        let e = apply_t(&mut rs, &r).unwrap_err();
        assert!(e.message.contains("missing metadata.name"), "{}", e.message);
    }

    #[test]
    fn delimiters_build_text_for_created_fields() {
        let mut rs = resources();
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.port}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.labels.x]\n    options: {create: true, delimiter: '=', index: 1}\n",
        );
        apply_t(&mut rs, &r).unwrap();
        assert_eq!(
            rs[1].node.str_at(&["metadata", "labels", "x"]),
            Some("=8080")
        );
    }

    #[test]
    fn plugin_configs_run_their_replacements() {
        let mut rs = resources();
        let config = parse_one("apiVersion: builtin\nkind: ReplacementTransformer\nmetadata:\n  name: r\nreplacements:\n- source: {kind: ConfigMap, name: src, fieldPath: data.host}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.labels.app]\n").unwrap();
        let mut ignored = Vec::new();
        apply_plugin_config(
            &config,
            &mut rs,
            &|_| false,
            &mut |_| Ok(Node::Null),
            &mut ignored,
        )
        .unwrap();
        assert_eq!(
            rs[1].node.str_at(&["metadata", "labels", "app"]),
            Some("a.b.c")
        );
    }

    #[test]
    fn label_selectors_parse() {
        let reqs = parse_selector("a=b, c!=d, e in (x, y), !f, g").unwrap();
        assert_eq!(reqs.len(), 5);
        assert!(reqs[1].matches(None));
        assert!(reqs[2].matches(Some("y")));
        assert!(!reqs[3].matches(Some("")));
        assert!(parse_selector("").unwrap().is_empty());
    }
}
