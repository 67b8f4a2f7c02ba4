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

use std::borrow::Cow;

use regex::Regex;

use crate::diag::{Error, ErrorKind};
use crate::kustomization::{
    FieldOptions, KustomizeVersion, ReplacementField, ReplacementSource, ReplacementTarget,
    Selector,
};
use crate::pattern::Anchored;
use crate::resource::shared::Snapshot;
use crate::resource::{ResId, Resource};
use crate::yaml::Node;
use crate::yaml::emit::format_float;
use crate::yaml::path::PathSeg;
use crate::yaml::resolve::resolve_plain_lenient as resolve_plain;
use crate::yaml::resolve::resolve_tagged;

use super::Unchanged;
use super::fieldspec::PathStep;
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
pub(crate) fn collect(
    fields: &[ReplacementField],
    load: &mut dyn FnMut(&str) -> Result<Node, Error>,
    ignored: &mut Vec<String>,
    version: KustomizeVersion,
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
        // kustomize v5.5.0 and v5.6.0 read a file's `sourceValue` as an unknown field and
        // drop it; v5.7.0 knows it (PR #5630, `types.Replacement.SourceValue`).
        let shape = if version.at_least(KustomizeVersion::V5_7_1) {
            Shape::Replacement
        } else {
            Shape::ReplacementV550
        };
        match &mut node {
            Node::Seq(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    prune(item, shape, &format!("[{i}]"), &mut dropped);
                }
            }
            other => prune(other, shape, "", &mut dropped),
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
pub(crate) fn apply_plugin_config(
    config: &Node,
    resources: &mut [Resource],
    cluster_scoped: ClusterScoped,
    load: &mut dyn FnMut(&str) -> Result<Node, Error>,
    ignored: &mut Vec<String>,
    version: KustomizeVersion,
) -> Result<(), Error> {
    let read = |key: &str| -> Result<Vec<ReplacementField>, Error> {
        let list = config.get(key).cloned().unwrap_or(Node::Null);
        crate::yaml::de::from_node(&list).map_err(|e| {
            err(format!(
                "ReplacementTransformer: {key}{}: {}",
                e.path_string(),
                e.message
            ))
        })
    };
    let mut list = Vec::new();
    if !version.at_least(KustomizeVersion::V5_7_1) {
        // kustomize v5.5.0's `ReplacementTransformerPlugin` has a field `Replacements` tagged
        // `json:"omitempty"`: a top-level `omitempty:` list (its name matched ignoring case,
        // as Go's JSON decoding does) is read as replacements and runs before the
        // `replacements:` ones. PR #5877 (v5.7.0: kustomize/api v0.20's
        // `internal/builtins/ReplacementTransformer.go`) made the field private: the key is
        // ignored.
        if let Node::Map(m) = config {
            if let Some((key, _)) = m
                .iter()
                .rev()
                .find(|(k, _)| k.eq_ignore_ascii_case("omitempty"))
            {
                list.extend(read(key)?);
            }
        }
    }
    let fields = read("replacements")?;
    list.extend(collect(&fields, load, ignored, version)?);
    apply(resources, &list, cluster_scoped, version)
}

/// The shapes of a replacement file's maps, for dropping unknown fields.
#[derive(Clone, Copy)]
enum Shape {
    Replacement,
    /// A replacement as kustomize v5.5.0 knows it: no `sourceValue`.
    ReplacementV550,
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
                ("sourceValue", None),
            ],
            Shape::ReplacementV550 => &[
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
pub(crate) fn apply(
    resources: &mut [Resource],
    replacements: &[ReplacementField],
    cluster_scoped: ClusterScoped,
    version: KustomizeVersion,
) -> Result<(), Error> {
    apply_telling(resources, replacements, cluster_scoped, version, None)
}

/// [`apply`], telling `unchanged` of each target field a replacement wrote with the value it
/// held (for field provenance): a whole field, or the part a `delimiter` and `index` pick.
/// Fields written inside structured data held in a string are not told.
pub(crate) fn apply_telling(
    resources: &mut [Resource],
    replacements: &[ReplacementField],
    cluster_scoped: ClusterScoped,
    version: KustomizeVersion,
    mut unchanged: Unchanged<'_>,
) -> Result<(), Error> {
    let v57 = version.at_least(KustomizeVersion::V5_7_1);
    for r in replacements {
        if r.source_value.is_some() && !v57 {
            return Err(err(format!(
                "`sourceValue` needs kustomize v5.7 or later; ply renders as {version} because of \
                 --kustomize-version (kustomize {version} refuses it: unknown field \"sourceValue\")"
            ))
            .help("render with `--kustomize-version 5.8.1`, or take the value from a `source` object"));
        }
        // kustomize PR #5630 (v5.7): `sourceValue`, a literal, instead of a source object.
        let literal = r.source_value.as_deref().filter(|_| v57);
        if (r.source.is_none() && literal.is_none()) || r.targets.is_empty() {
            return Err(err(
                "replacements must specify a source and at least one target",
            ));
        }
        let mut value = match (literal, r.source.as_ref()) {
            (Some(_), Some(_)) => {
                return Err(err("value and resource selectors are mutually exclusive")
                    .help("a replacement takes either `sourceValue` or `source`, not both"));
            }
            (Some(text), None) => Value::fixed(literal_value(text)),
            (None, Some(source)) => source_value(resources, source, cluster_scoped)?,
            (None, None) => unreachable!("checked above"),
        };
        for target in &r.targets {
            let tell = unchanged.as_mut().map(|f| &mut **f as _);
            apply_target(resources, &mut value, target, cluster_scoped, version, tell)?;
        }
    }
    Ok(())
}

/// kustomize's `yaml.NewScalarRNode(sourceValue)`: an untagged scalar, which reads as the type
/// its text resolves to where it replaces a whole node, and gives its text to a scalar target.
/// A text that does not print back as itself (`1.50`, `0x10`) keeps that text
/// ([`Node::Spelled`]) for scalar targets, and prints as its value.
fn literal_value(text: &str) -> Node {
    match resolve_plain(text) {
        n @ Node::Str(_) => n,
        n if text_of(&n) == text => n,
        value => Node::Spelled(Box::new(crate::yaml::Spelled {
            value,
            text: text.to_string(),
        })),
    }
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

/// Whether a replacement's `source` selects `r` by one of its ids (sources match exactly).
fn source_selects(source: &ReplacementSource, r: &Resource, cluster_scoped: ClusterScoped) -> bool {
    all_ids(r).iter().any(|id| {
        id_selected_by(
            id,
            cluster_scoped,
            source.group.as_deref(),
            source.version.as_deref(),
            source.kind.as_deref(),
            source.name.as_deref(),
            source.namespace.as_deref(),
        )
    })
}

/// A replacement's value, and where it lives while the targets are written. kustomize's
/// value is the source object's field itself (`getReplacement` returns the node that
/// `Lookup` found, and `setFieldValue` copies it at each write), unless a source `delimiter`
/// made a copy of one part (`getRefinedValue`): when the source object is also a target, the
/// targets written after its field changed receive the new value (`team-a` written into
/// itself at index 1 of `-` becomes `team-team-a`, and the next ConfigMap gets that).
struct Value {
    node: Node,
    /// The source object's index and the field's path, when the value is that field.
    live: Option<(usize, Vec<String>)>,
}

impl Value {
    fn fixed(node: Node) -> Value {
        Value { node, live: None }
    }

    /// Reads the value again from `r`, the object at `index`, after a replacement wrote
    /// into it. Only a field whose value changed is read again: a write of the value the
    /// field already held keeps the value as the source wrote it (kustomize's node keeps its
    /// text, `2.0` stays a float that an int field refuses).
    fn refresh(&mut self, index: usize, r: &Resource) {
        if let Some((at, path)) = &self.live
            && *at == index
            && let Ok(Some(n)) = lookup(&r.node, path)
            && !is_nil_or_empty(n)
            && *n != self.node
        {
            self.node = as_copied(n).into_owned();
        }
    }
}

/// A folded string read back as another value: kustomize copies the text as written
/// (kyaml's `Node.Value`), which the target prints without the folded style.
fn as_copied(node: &Node) -> Cow<'_, Node> {
    match node {
        Node::Spelled(s) if matches!(s.value, Node::Str(_)) => {
            Cow::Owned(Node::Str(s.text.clone()))
        }
        n => Cow::Borrowed(n),
    }
}

fn source_value(
    resources: &[Resource],
    source: &ReplacementSource,
    cluster_scoped: ClusterScoped,
) -> Result<Value, Error> {
    let mut found: Option<(usize, &Resource)> = None;
    for (i, r) in resources.iter().enumerate() {
        let hit = source_selects(source, r, cluster_scoped);
        if hit {
            if found.is_some() {
                return Err(err(format!(
                    "multiple matches for selector {}",
                    source_string(source)
                ))
                .help("narrow the source with name, namespace, kind, group or version so that it selects one object"));
            }
            found = Some((i, r));
        }
    }
    let Some((index, r)) = found else {
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
    let parts = smarter_split_path(path, '.');
    let node = lookup(&r.node, &parts)
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
    let delimited = source
        .options
        .as_ref()
        .and_then(|o| o.delimiter.as_deref())
        .is_some_and(|d| !d.is_empty());
    Ok(Value {
        node: refine(source.options.as_ref(), &as_copied(node))?,
        live: (!delimited).then_some((index, parts)),
    })
}

/// The object and field a replacement's `source` reads, for provenance (issue 29): the
/// object's index in `resources` and the field's node, found as [`source_value`] finds them;
/// `None` when there is not exactly one such object or no such field.
pub(crate) fn source_field<'a>(
    resources: &'a [Resource],
    source: &ReplacementSource,
    cluster_scoped: ClusterScoped,
) -> Option<(usize, &'a Node)> {
    let mut hits = resources
        .iter()
        .enumerate()
        .filter(|(_, r)| source_selects(source, r, cluster_scoped));
    let (i, r) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let path = source
        .field_path
        .as_deref()
        .filter(|p| !p.is_empty())
        .unwrap_or(DEFAULT_FIELD_PATH);
    let node = lookup(&r.node, &smarter_split_path(path, '.')).ok()??;
    Some((i, node))
}

fn resid_string(s: &ReplacementSource) -> String {
    let mut c = s.clone();
    c.field_path = None;
    c.options = None;
    source_string(&c)
}

fn is_nil_or_empty(n: &Node) -> bool {
    match n.unspelled() {
        Node::Null => true,
        Node::Map(m) => m.is_empty(),
        Node::Seq(s) => s.is_empty(),
        _ => false,
    }
}

/// The text of a scalar as kustomize holds it: kyaml's `Node.Value`, the text as written
/// where the reader kept it ([`Node::Spelled`]: `.5`, `017`, `True`), which
/// `setFieldValue` copies (api/filters/replacement/replacement.go).
fn text_of(n: &Node) -> String {
    match n {
        Node::Float(f) => format_float(*f),
        Node::Spelled(s) => s.text.clone(),
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
    // kustomize copies the source node and sets its text to the part (`getRefinedValue`):
    // the part keeps the source's type and its own text (`1e3` of a float stays `1e3` where a
    // string target takes the text).
    let value = retext(node, part, true)?;
    Ok(match value {
        Node::Str(_) => value,
        value if text_of(&value) == *part => value,
        value => Node::Spelled(Box::new(crate::yaml::Spelled {
            value,
            text: (*part).to_string(),
        })),
    })
}

/// A scalar that keeps `like`'s type with new text. kustomize changes only the text of a
/// scalar target and keeps its YAML tag (`setFieldValue`, api/filters/replacement/replacement.go),
/// and the object is decoded by go-yaml v3 when printed (`Resource.AsYAML` → `RNode.Map`):
/// the text is read under the kept tag ([`resolve_tagged`]: `017` under `!!int` is 15, `5`
/// under `!!float` is 5.0), and text that does not read as that type fails there
/// ("cannot decode !!str `abc` as a !!int"); ply reports it here.
fn retext(like: &Node, text: &str, from_source: bool) -> Result<Node, Error> {
    let tag = match like.unspelled() {
        Node::Str(_) => return Ok(Node::Str(text.to_string())),
        Node::Seq(_) | Node::Map(_) => return Ok(like.clone()),
        Node::Int(_) => "int",
        Node::Float(_) => "float",
        Node::Bool(_) => "bool",
        _ => "null",
    };
    resolve_tagged(tag, text).map_err(|e| {
        // go-yaml's words, up to its own explanation of explicit tags (not one here).
        let words = e.split(": go-yaml").next().unwrap_or(&e);
        err(format!(
            "yaml: {words}{}",
            if from_source {
                " (replacement source)"
            } else {
                ""
            }
        ))
        .help("the replaced field keeps its type: the new value must read as that type")
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

/// A target's `select` or `reject` as kustomize v5.8.1 matches it (`types.SelectorRegex`,
/// kustomize PR #5863): group, version, kind, name and namespace are anchored regular
/// expressions (`^(?:p)$`); the namespace is matched as written, not as an effective
/// namespace (an object without one is not in `default`).
struct IdRegex {
    parts: [Option<Anchored>; 5],
}

impl IdRegex {
    fn new(s: &Selector) -> Result<IdRegex, Error> {
        let re = |p: Option<&str>| -> Result<Option<Anchored>, Error> {
            match p.filter(|p| !p.is_empty()) {
                None => Ok(None),
                Some(p) => Anchored::new(p).map(Some).map_err(|e| {
                    err(format!(
                        "error creating target selector: invalid regular expression {p:?}: {e}"
                    ))
                    .help(
                        "since kustomize v5.8, `select` and `reject` parts are regular expressions",
                    )
                }),
            }
        };
        let [g, v, k, n, ns] = selector_parts(s);
        Ok(IdRegex {
            parts: [re(g)?, re(v)?, re(k)?, re(n)?, re(ns)?],
        })
    }

    fn is_empty(&self) -> bool {
        self.parts.iter().all(Option::is_none)
    }

    fn selects(&self, id: &ResId) -> bool {
        let is = |re: &Option<Anchored>, a: &str| re.as_ref().is_none_or(|re| re.is_match(a));
        let [g, v, k, n, ns] = &self.parts;
        is(g, &id.gvk.group)
            && is(v, &id.gvk.version)
            && is(k, &id.gvk.kind)
            && is(n, &id.name)
            && is(ns, &id.namespace)
    }
}

/// How a target's `select` and `reject` pick objects by id: exact parts (kustomize v5.5.0,
/// `ResId.IsSelectedBy`) or anchored regular expressions (v5.8.1, PR #5863).
enum IdMatch<'a> {
    Exact {
        select: &'a Selector,
        reject: Vec<&'a Selector>,
    },
    Regex {
        select: IdRegex,
        reject: Vec<IdRegex>,
    },
}

impl<'a> IdMatch<'a> {
    fn new(
        t: &'a ReplacementTarget,
        select: &'a Selector,
        version: KustomizeVersion,
    ) -> Result<Self, Error> {
        if version.at_least(KustomizeVersion::V5_8_1) {
            // kustomize's `types.NewTargetSelectorRegex`, from v5.8.0 (kustomize/api v0.21's
            // `types/replacement.go`; v5.7.1 still compares ids as written).
            let reject = t
                .reject
                .iter()
                .map(IdRegex::new)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(IdMatch::Regex {
                select: IdRegex::new(select)?,
                reject: reject.into_iter().filter(|r| !r.is_empty()).collect(),
            })
        } else {
            Ok(IdMatch::Exact {
                select,
                reject: t.reject.iter().filter(|rj| !id_part_empty(rj)).collect(),
            })
        }
    }

    /// Whether an object with these ids is a target: no id rejected, one id selected.
    fn picks(&self, ids: &[ResId], cluster_scoped: ClusterScoped) -> bool {
        match self {
            IdMatch::Exact { select, reject } => {
                let rejected = reject
                    .iter()
                    .any(|rj| ids.iter().any(|id| selects_id(rj, id, cluster_scoped)));
                !rejected && ids.iter().any(|id| selects_id(select, id, cluster_scoped))
            }
            IdMatch::Regex { select, reject } => {
                let rejected = reject.iter().any(|rj| ids.iter().any(|id| rj.selects(id)));
                !rejected && ids.iter().any(|id| select.selects(id))
            }
        }
    }
}

fn apply_target(
    resources: &mut [Resource],
    live: &mut Value,
    t: &ReplacementTarget,
    cluster_scoped: ClusterScoped,
    version: KustomizeVersion,
    mut tell: Unchanged<'_>,
) -> Result<(), Error> {
    let v581 = version.at_least(KustomizeVersion::V5_8_1);
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
    let ids_match = IdMatch::new(t, select, version)?;
    for (i, r) in resources.iter_mut().enumerate() {
        if !select_labels.matches(&r.node) || reject_labels.iter().any(|m| m.matches(&r.node)) {
            continue;
        }
        if !ids_match.picks(&all_ids(r), cluster_scoped) {
            continue;
        }
        let options = t.options.as_ref();
        let create = options.is_some_and(|o| o.create);
        for fp in &paths {
            // The value as it is now: an earlier write into the source object may have
            // changed it (see [`Value`]).
            live.refresh(i, r);
            let value = &live.node;
            let parts = smarter_split_path(fp, '.');
            let what = if create {
                format!("unable to find or create field \"{fp}\" in replacement target")
            } else {
                format!("unable to find field \"{fp}\" in replacement target")
            };
            let mut count = 0usize;
            let created_kind = if create { Some(kind_of(value)) } else { None };
            // kustomize v5.8.0 first tries the path as one into JSON or YAML held in a scalar
            // (PR #5679, `setValueInStructuredData`; not in v5.7.1), and falls back to the
            // plain path.
            if v581 && structured::write(&mut r.node, &parts, value, created_kind)? {
                continue;
            }
            let mut setter = |n: &mut Node, fresh: bool, at: Option<&[PathStep<'_>]>| {
                count += 1;
                match (tell.as_mut(), at) {
                    (Some(f), Some(at)) if !fresh => {
                        let before = n.clone();
                        set_field(options, n, value, fresh)?;
                        if *n == before {
                            f(i, at);
                        }
                        Ok(())
                    }
                    _ => set_field(options, n, value, fresh),
                }
            };
            // An existing field is written in place (`setFieldValue`: `SetYNode`), so a value
            // shared between maps changes in all of them (`resource::shared`).
            let shared = Snapshot::take(r);
            let mut at = Vec::new();
            match_path(
                &mut r.node,
                &parts,
                created_kind,
                &mut setter,
                false,
                v581,
                &mut at,
            )
            .map_err(|e| match e {
                MatchError::Path(m) => err(format!("{what}: {m}")),
                MatchError::Set(e) => e,
            })?;
            let target: Option<Vec<PathSeg>> = parts
                .iter()
                .map(|p| {
                    (!p.is_empty() && !p.contains(['[', '*']) && p.parse::<usize>().is_err())
                        .then(|| PathSeg::Key(p.clone()))
                })
                .collect();
            shared.replay_writes(r, target.as_deref(), value);
            if count == 0 {
                return Err(err(what).help(
                    "the field must exist in every selected object; set `options: {create: true}` to create it",
                ));
            }
        }
        live.refresh(i, r);
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

/// The callback of [`match_path`]: the node matched, whether it was just created, and its path
/// in the object (`at`, `None` inside a copy of structured data held in a string).
type Matched<'f, 'p> =
    dyn FnMut(&mut Node, bool, Option<&[PathStep<'p>]>) -> Result<(), Error> + 'f;

/// kyaml's `PathMatcher`: calls `f` on every node `parts` matches, creating missing parts when
/// `create` gives the kind of the value to be written. `fresh` tells `f` the node was just
/// created; `at` is the path of `node`.
fn match_path<'p>(
    node: &mut Node,
    parts: &'p [String],
    create: Option<Kind>,
    f: &mut Matched<'_, 'p>,
    fresh: bool,
    into_scalars: bool,
    at: &mut Vec<PathStep<'p>>,
) -> Result<(), MatchError> {
    let Some((part, rest)) = parts.split_first() else {
        return f(node, fresh, Some(at)).map_err(MatchError::Set);
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
        at.push(PathStep::Index(idx));
        let r = match_path(elem, rest, create, f, fresh_elem, into_scalars, at);
        at.pop();
        return r;
    }
    if let Some((field, pattern)) = list_selector(part).map_err(MatchError::Path)? {
        return match_selected(node, (field, pattern), rest, create, f, into_scalars, at);
    }
    if part == "*" {
        let Node::Seq(items) = node else {
            return Err(wrong_kind("SequenceNode", node));
        };
        for (i, item) in items.iter_mut().enumerate() {
            at.push(PathStep::Index(i));
            let r = match_path(item, rest, create, f, false, into_scalars, at);
            at.pop();
            r?;
        }
        return Ok(());
    }
    match node {
        Node::Null if create.is_none() => Ok(()),
        Node::Null | Node::Map(_) => match_key(node, part, rest, create, f, into_scalars, at),
        other => Err(wrong_kind("MappingNode", other)),
    }
}

/// [`match_path`] at a list selector (`[field=pattern]`, `[=pattern]`): every item whose field
/// (or scalar) matches; with `create`, an item is appended when none matches.
fn match_selected<'p>(
    node: &mut Node,
    (field, pattern): (&str, &str),
    rest: &'p [String],
    create: Option<Kind>,
    f: &mut Matched<'_, 'p>,
    into_scalars: bool,
    at: &mut Vec<PathStep<'p>>,
) -> Result<(), MatchError> {
    let Node::Seq(items) = node else {
        return Err(wrong_kind("SequenceNode", node));
    };
    let re = Regex::new(pattern).map_err(|e| MatchError::Path(e.to_string()))?;
    let mut matched = false;
    for _round in 0..2 {
        for (i, item) in items.iter_mut().enumerate() {
            let text = if field.is_empty() {
                item.is_scalar().then(|| text_of(item))
            } else {
                item.get(field).filter(|v| v.is_scalar()).map(text_of)
            };
            if text.is_some_and(|t| re.is_match(t.trim())) {
                matched = true;
                at.push(PathStep::Index(i));
                let r = if field.is_empty() {
                    // A matched list item is the end of the path (kyaml ignores the rest).
                    f(item, false, Some(at)).map_err(MatchError::Set)
                } else {
                    match_path(item, rest, create, f, false, into_scalars, at)
                };
                at.pop();
                r?;
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
    Ok(())
}

/// [`match_path`] at a map key (a null becomes a map when `create` is given): the field,
/// created when missing and `create` is given.
fn match_key<'p>(
    node: &mut Node,
    part: &'p str,
    rest: &'p [String],
    create: Option<Kind>,
    f: &mut Matched<'_, 'p>,
    into_scalars: bool,
    at: &mut Vec<PathStep<'p>>,
) -> Result<(), MatchError> {
    let next = rest.first();
    if node.is_null() {
        *node = Node::empty_map();
    }
    let Node::Map(m) = node else {
        return Ok(());
    };
    let mut fresh_child = false;
    if !m.contains_key(part) {
        let Some(leaf) = create else {
            return Ok(());
        };
        let (n, is_fresh) = new_node(next, leaf);
        fresh_child = is_fresh;
        m.insert(part.to_string(), n);
    }
    at.push(PathStep::Key(Cow::Borrowed(part)));
    let r = match m.get_mut(part) {
        // kyaml v5.8.1 `PathMatcher.handleStructuredDataInScalar` (PR #5679): a scalar
        // field with more path after it is read as YAML and the rest of the path is
        // matched in that copy; what is set there is lost (the text is unchanged).
        Some(child) if into_scalars && child.is_scalar() && !rest.is_empty() => {
            let mut copy =
                structured::parse(child).map_err(|e| MatchError::Path(format!("yaml: {e}")))?;
            // The matches still count (`f` counts before it writes); a value that
            // would not fit is never printed, so it is no error.
            let mut counted = |n: &mut Node, fresh: bool, _: Option<&[PathStep<'p>]>| {
                let _ = f(n, fresh, None);
                Ok(())
            };
            match_path(
                &mut copy,
                rest,
                create,
                &mut counted,
                false,
                true,
                &mut Vec::new(),
            )
        }
        Some(child) => match_path(child, rest, create, f, fresh_child, into_scalars, at),
        None => Ok(()),
    };
    at.pop();
    r
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

/// kustomize v5.8.1's replacements into JSON or YAML held in a string field (PR #5679,
/// `api/filters/replacement` `setValueInStructuredData` and `serializeStructuredData`).
mod structured {
    use super::{Kind, PathStep, match_path, text_of};
    use crate::diag::Error;
    use crate::transform::refpath::lookup;
    use crate::yaml::Node;
    use crate::yaml::emit::{EmitOptions, emit_document};
    use crate::yaml::resolve::resolve_plain_lenient as resolve_plain;

    /// The text of a scalar as kyaml holds it (`Node.Value`), read as YAML (go-yaml v3's
    /// `yaml.Unmarshal`; JSON is YAML).
    pub(super) fn parse(scalar: &Node) -> Result<Node, String> {
        let text = match scalar {
            Node::Spelled(s) => s.text.clone(),
            other => text_of(other),
        };
        crate::yaml::parse::parse_one(&text).map_err(|e| e.to_string())
    }

    /// `setValueInStructuredData`: the first prefix of the path (shorter than the path) that
    /// is a scalar reading as YAML holds the rest of the path; the value is written there (a
    /// scalar keeps its type and takes the text; anything else is replaced; `options`
    /// delimiters do not apply) and the scalar is rewritten as JSON (when its text starts
    /// with `{` or `[`) or as YAML. `Ok(false)` when kustomize falls back to the plain path:
    /// no such scalar, the rest of the path not found, or JSON that cannot be written.
    pub(super) fn write(
        node: &mut Node,
        parts: &[String],
        value: &Node,
        create: Option<Kind>,
    ) -> Result<bool, Error> {
        let Some((at, original, mut data)) = (1..parts.len()).find_map(|i| {
            let field = lookup(node, &parts[..i]).ok()??;
            if !field.is_scalar() || field.unspelled().is_null() {
                return None;
            }
            let data = parse(field).ok()?;
            let text = match field {
                Node::Spelled(s) => s.text.clone(),
                other => text_of(other),
            };
            Some((i, text, data))
        }) else {
            return Ok(false);
        };
        if original.trim().is_empty() {
            return Ok(false);
        }
        let text = if value.is_scalar() {
            text_of(value)
        } else {
            String::new()
        };
        let (mut count, mut mismatch) = (0usize, false);
        let mut setter =
            |n: &mut Node, fresh: bool, _: Option<&[PathStep<'_>]>| -> Result<(), Error> {
                count += 1;
                if !set_text(n, fresh, &text, value) {
                    mismatch = true;
                }
                Ok(())
            };
        if match_path(
            &mut data,
            &parts[at..],
            create,
            &mut setter,
            false,
            true,
            &mut Vec::new(),
        )
        .is_err()
            || count == 0
        {
            return Ok(false);
        }
        let Some(serialized) = serialize(&original, &data, &text, mismatch)? else {
            return Ok(false);
        };
        let mut done = false;
        let mut write_back =
            |n: &mut Node, _: bool, _: Option<&[PathStep<'_>]>| -> Result<(), Error> {
                if !done {
                    *n = Node::Str(serialized.clone());
                    done = true;
                }
                Ok(())
            };
        let _ = match_path(
            node,
            &parts[..at],
            None,
            &mut write_back,
            false,
            false,
            &mut Vec::new(),
        );
        Ok(done)
    }

    /// Sets one node matched in the copy: a created one to the text read plainly, a scalar to
    /// the text read as its own type (false when it does not read so), anything else to the
    /// value.
    fn set_text(n: &mut Node, fresh: bool, text: &str, value: &Node) -> bool {
        if fresh {
            // A created scalar has no tag: it reads as its text.
            *n = resolve_plain(text);
        } else if n.is_scalar() {
            // Only the text changes; the tag stays, and text that does not read as it
            // fails when kustomize reads the document back.
            let new = match (n.unspelled(), resolve_plain(text)) {
                (Node::Str(_), _) => Some(Node::Str(text.to_string())),
                (Node::Int(_), v @ Node::Int(_)) => Some(v),
                (Node::Float(_), Node::Int(i)) => Some(Node::Float(i as f64)),
                (Node::Float(_), v @ Node::Float(_)) => Some(v),
                (Node::Bool(_), v @ Node::Bool(_)) => Some(v),
                (Node::Null, Node::Null) => Some(Node::Null),
                _ => None,
            };
            match new {
                Some(v) => *n = v,
                None => return false,
            }
        } else {
            *n = value.clone();
        }
        true
    }

    /// The copy written back as the string's text: as JSON (`serializeAsJSON`) when it was
    /// JSON, else as YAML (`serializeAsYAML`); `None` when kustomize leaves the field as it was.
    fn serialize(
        original: &str,
        data: &Node,
        text: &str,
        mismatch: bool,
    ) -> Result<Option<String>, Error> {
        let trimmed = original.trim();
        let serialized = if trimmed.starts_with(['{', '[']) {
            // `serializeAsJSON`: `encoding/json`, indented by two spaces when the text had a
            // line break and two spaces in a row.
            if mismatch {
                return Ok(None);
            }
            let pretty = original.contains('\n') && original.contains("  ");
            let mut out = String::new();
            if go_json(data, pretty, 0, &mut out).is_none() {
                return Ok(None);
            }
            out
        } else {
            // `serializeAsYAML`: go-yaml v3 writes the document back keeping key order,
            // quoting, flow style and comments. ply keeps none of the last three, so it writes
            // only documents it prints back exactly as they were.
            let unsupported = |why: &str| {
                super::err(format!(
                    "ply cannot yet rewrite this YAML held in a string as kustomize v5.8.1 does \
                     ({why})"
                ))
                .help("hold the data as JSON, or in block YAML without comments, quotes or flow style")
            };
            if mismatch {
                return Err(unsupported(
                    "the new value does not read as the type of the field it replaces, which kustomize writes with a tag",
                ));
            }
            if quoted_by_v2_only(text) {
                return Err(unsupported(
                    "go-yaml v3 writes the new value unquoted, where ply's writer quotes it",
                ));
            }
            let same = parse(&Node::Str(original.to_string()))
                .map(|n| yaml_text(&n) == trimmed)
                .unwrap_or(false);
            if !same {
                return Err(unsupported(
                    "its comments, quoting, flow style or layout are not what ply would print",
                ));
            }
            yaml_text(data)
        };
        Ok(Some(serialized))
    }

    /// Strings go-yaml v2 (ply's writer) quotes and v3 does not: YAML 1.1 booleans and
    /// base-60 numbers.
    fn quoted_by_v2_only(text: &str) -> bool {
        const WORDS: &[&str] = &[
            "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off",
            "Off", "OFF",
        ];
        let t = text.trim_start_matches(['-', '+']);
        let sexagesimal = t.contains(':')
            && t.starts_with(|c: char| c.is_ascii_digit())
            && t.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, ':' | '_' | '.'));
        WORDS.contains(&text) || sexagesimal
    }

    fn yaml_text(n: &Node) -> String {
        let mut out = String::new();
        emit_document(&mut out, n, EmitOptions { sort_keys: false });
        out.trim().to_string()
    }

    /// Go's `encoding/json` `Marshal` (`MarshalIndent(v, "", "  ")` when `pretty`) of what
    /// go-yaml v3 reads into an `interface{}`: keys sorted bytewise, HTML characters escaped.
    /// `None` where Go fails (non-finite floats).
    fn go_json(n: &Node, pretty: bool, depth: usize, out: &mut String) -> Option<()> {
        let newline = |out: &mut String, depth: usize| {
            if pretty {
                out.push('\n');
                out.push_str(&"  ".repeat(depth));
            }
        };
        match n.unspelled() {
            Node::Null => out.push_str("null"),
            Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            // go-yaml reads an integer beyond int64 and uint64 as a float64.
            Node::Int(i) if *i > i128::from(u64::MAX) || *i < i128::from(i64::MIN) => {
                out.push_str(&go_float(*i as f64)?);
            }
            Node::Int(i) => out.push_str(&i.to_string()),
            Node::Float(f) => out.push_str(&go_float(*f)?),
            Node::Str(s) => go_string(s, out),
            Node::Seq(items) if items.is_empty() => out.push_str("[]"),
            Node::Seq(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, depth + 1);
                    go_json(item, pretty, depth + 1, out)?;
                }
                newline(out, depth);
                out.push(']');
            }
            Node::Map(m) if m.is_empty() => out.push_str("{}"),
            Node::Map(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, depth + 1);
                    go_string(k, out);
                    out.push(':');
                    if pretty {
                        out.push(' ');
                    }
                    go_json(m.get(k.as_str())?, pretty, depth + 1, out)?;
                }
                newline(out, depth);
                out.push('}');
            }
            Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        }
        Some(())
    }

    /// `encoding/json`'s float: shortest digits, fixed notation unless below 1e-6 or from
    /// 1e21 (then `1e-7`, `1.5e+21`).
    pub(super) fn go_float(f: f64) -> Option<String> {
        if !f.is_finite() {
            return None;
        }
        let abs = f.abs();
        if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
            let e = format!("{f:e}");
            let (mantissa, exp) = e.split_once('e')?;
            let exp: i32 = exp.parse().ok()?;
            return Some(if exp < 0 {
                format!("{mantissa}e-{}", -exp)
            } else {
                format!("{mantissa}e+{exp:02}")
            });
        }
        Some(format!("{f}"))
    }

    /// `encoding/json`'s string, with HTML escaping (`<`, `>`, `&` as `\u003c`...) and U+2028,
    /// U+2029 escaped.
    pub(super) fn go_string(s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
    }
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
        apply(rs, r, &|_| false, KustomizeVersion::V5_5_0)
    }

    fn apply_v581(rs: &mut [Resource], r: &[ReplacementField]) -> Result<(), Error> {
        apply(rs, r, &|_| false, KustomizeVersion::V5_8_1)
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

    /// For field provenance, `apply_telling` tells the targets a replacement wrote with the
    /// value they held, with their paths: a `*` item that an earlier path of the same target
    /// just set, and a part a delimiter picks that holds the value; not a target it changed
    /// nor one it created.
    #[test]
    fn tells_the_targets_that_kept_their_value() {
        let mut rs = resources();
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.port}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths:\n    - spec.template.spec.containers.[name=main].image\n    - spec.template.spec.containers.*.image\n    - metadata.labels.made\n    options: {create: true}\n- sourceValue: b\n  targets:\n  - select: {kind: ConfigMap}\n    fieldPaths: [data.host]\n    options: {delimiter: '.', index: 1}\n",
        );
        let mut told: Vec<(usize, String)> = Vec::new();
        let mut tell =
            |i: usize, at: &[PathStep<'_>]| told.push((i, crate::transform::fieldspec::dotted(at)));
        apply_telling(
            &mut rs,
            &r,
            &|_| false,
            KustomizeVersion::V5_8_1,
            Some(&mut tell),
        )
        .unwrap();
        assert_eq!(image(&rs, 0).as_deref(), Some("8080"));
        assert_eq!(image(&rs, 1).as_deref(), Some("8080"));
        assert_eq!(
            told,
            [
                (1, "spec.template.spec.containers.0.image".to_string()),
                (0, "data.host".to_string()),
            ]
        );
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
        let got = collect(
            &fields,
            &mut |_| Ok(file.clone()),
            &mut ignored,
            KustomizeVersion::V5_5_0,
        )
        .unwrap();
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
            KustomizeVersion::V5_5_0,
        )
        .unwrap();
        assert_eq!(
            rs[1].node.str_at(&["metadata", "labels", "app"]),
            Some("a.b.c")
        );
    }

    #[test]
    fn v581_selects_by_anchored_regex_and_written_namespace() {
        let r = repls(
            "- source: {kind: ConfigMap, name: src, fieldPath: data.port}\n  targets:\n  - select: {kind: Deploy|ConfigMap, name: s.*}\n    fieldPaths: [metadata.labels.p]\n    options: {create: true}\n  - select: {kind: Deployment, namespace: default}\n    fieldPaths: [metadata.labels.q]\n    options: {create: true}\n",
        );
        let mut rs = resources();
        apply_v581(&mut rs, &r).unwrap();
        assert_eq!(
            rs[0].node.get_path(&["metadata", "labels", "p"]),
            Some(&Node::Int(8080))
        );
        assert!(rs[1].node.get_path(&["metadata", "labels", "q"]).is_none());
        let mut rs = resources();
        apply_t(&mut rs, &r).unwrap();
        assert!(rs[0].node.get_path(&["metadata", "labels", "p"]).is_none());
        assert_eq!(
            rs[1].node.get_path(&["metadata", "labels", "q"]),
            Some(&Node::Int(8080))
        );
        let bad =
            repls("- source: {kind: ConfigMap, name: src}\n  targets:\n  - select: {name: '('}\n");
        let e = apply_v581(&mut resources(), &bad).unwrap_err();
        assert!(
            e.message.contains("error creating target selector"),
            "{}",
            e.message
        );
    }

    #[test]
    fn source_value_needs_v581() {
        let r = repls(
            "- sourceValue: '7'\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.replicas]\n",
        );
        let mut rs = resources();
        apply_v581(&mut rs, &r).unwrap();
        assert_eq!(
            rs[1].node.get_path(&["spec", "replicas"]),
            Some(&Node::Int(7))
        );
        let e = apply_t(&mut resources(), &r).unwrap_err();
        assert!(e.message.contains("needs kustomize v5.7"), "{}", e.message);
        let both = repls(
            "- sourceValue: x\n  source: {kind: ConfigMap}\n  targets:\n  - select: {kind: Deployment}\n",
        );
        let e = apply_v581(&mut resources(), &both).unwrap_err();
        assert!(e.message.contains("mutually exclusive"), "{}", e.message);
    }

    #[test]
    fn v581_writes_into_json_and_yaml_strings() {
        let doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t\ndata:\n  j: '{\"z\": 1, \"a\": {\"b\": \"x\"}, \"n\": 2}'\n  y: \"a:\\n  b: x\\n\"\n";
        let r = repls(
            "- sourceValue: '<&>'\n  targets:\n  - select: {name: t}\n    fieldPaths: ['data.j.a.b', 'data.y.a.b', 'data.j.a.c']\n    options: {create: true}\n",
        );
        let mut rs = vec![res(doc)];
        apply_v581(&mut rs, &r).unwrap();
        assert_eq!(
            rs[0].node.str_at(&["data", "j"]),
            Some(r#"{"a":{"b":"\u003c\u0026\u003e","c":"\u003c\u0026\u003e"},"n":2,"z":1}"#)
        );
        assert_eq!(rs[0].node.str_at(&["data", "y"]), Some("a:\n  b: <&>"));
        // A number keeps its type: text that is no number leaves the JSON as it was.
        let r = repls(
            "- sourceValue: abc\n  targets:\n  - select: {name: t}\n    fieldPaths: ['data.j.n']\n",
        );
        apply_v581(&mut rs, &r).unwrap();
        assert!(
            rs[0]
                .node
                .str_at(&["data", "j"])
                .unwrap()
                .contains("\"n\":2")
        );
        // v5.5.0 cannot go past a scalar.
        let mut rs = vec![res(doc)];
        let r = repls(
            "- source: {name: t}\n  targets:\n  - select: {name: t}\n    fieldPaths: ['data.j.a.b']\n",
        );
        assert!(
            apply_t(&mut rs, &r)
                .unwrap_err()
                .message
                .contains("wrong node kind")
        );
    }

    #[test]
    fn go_json_numbers_and_strings() {
        let f = |x: f64| structured::go_float(x).unwrap();
        assert_eq!(f(1e-7), "1e-7");
        assert_eq!(f(1e-10), "1e-10");
        assert_eq!(f(1.5e21), "1.5e+21");
        assert_eq!(f(1000.0), "1000");
        assert_eq!(f(0.25), "0.25");
        assert!(structured::go_float(f64::NAN).is_none());
        let mut out = String::new();
        structured::go_string("a\"\\\n\u{1}<\u{2028}é", &mut out);
        assert_eq!(out, r#""a\"\\\n\u0001\u003c\u2028é""#);
    }

    #[test]
    fn v550_plugins_read_omitempty_as_replacements() {
        let config = parse_one("apiVersion: builtin\nkind: ReplacementTransformer\nmetadata:\n  name: r\nomitempty:\n- source: {kind: ConfigMap, name: src, fieldPath: data.host}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.labels.app]\n").unwrap();
        for (version, want) in [
            (KustomizeVersion::V5_5_0, "a.b.c"),
            (KustomizeVersion::V5_8_1, "web"),
        ] {
            let mut rs = resources();
            apply_plugin_config(
                &config,
                &mut rs,
                &|_| false,
                &mut |_| Ok(Node::Null),
                &mut Vec::new(),
                version,
            )
            .unwrap();
            assert_eq!(
                rs[1].node.str_at(&["metadata", "labels", "app"]),
                Some(want)
            );
        }
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
