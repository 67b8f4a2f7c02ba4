//! kustomize's builtin ValueAddTransformer (a `transformers:` configuration of
//! `kind: ValueAddTransformer`): reads the configuration (`value`, `targets`,
//! `targetFilePath`) and writes the value at each target's field path, optionally inserted into
//! a slash path already there (`filePathPosition`). Reading files and selecting resources are
//! the caller's (passed in as closures); this module touches only the objects it is given.
//!
//! Behaviour follows kustomize v5.5 (`plugin/builtin/valueaddtransformer`,
//! `api/filters/valueadd`, kyaml's `PathGetter` and `filesys.InsertPathPart`), checked against
//! `kubectl kustomize`.

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::Selector;
use crate::resource::Resource;
use crate::source::Location;
use crate::yaml::Node;
use crate::yaml::path::PathSeg;
use crate::yaml::resolve::resolve_plain_v3;

use super::FieldSpecTables;
use super::namespace;

/// One place to write the value.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Target {
    /// Which resources; `None` selects every resource.
    pub selector: Option<Selector>,
    /// Slash-separated path (`\/` is a slash inside a field name); never empty.
    pub field_path: String,
    /// 0: replace the field; i > 0: insert the value as element i-1 of the slash path the
    /// field holds.
    pub file_path_position: usize,
    /// Where the target is written in the configuration (`targets[i]`, or `targetFilePath`
    /// for targets read from that file), for diagnostics.
    pub at: Vec<PathSeg>,
}

/// The indices of the resources a selector picks.
pub(crate) type Select<'a> = &'a dyn Fn(&Selector, &[Resource]) -> Result<Vec<usize>>;

/// Finds a path of the configuration in its source (None when unknown).
pub(crate) type Locate<'a> = &'a dyn Fn(&[PathSeg]) -> Option<Location>;

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// A parsed ValueAddTransformer configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Config {
    /// Trimmed; never empty (defaults to the kustomization directory's base name).
    pub value: String,
    /// `targets`, then those of `targetFilePath`.
    pub targets: Vec<Target>,
}

fn err(message: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::Transformer,
        format!("builtin ValueAddTransformer: {message}"),
    )
}

/// A string field of a configuration: kustomize takes any scalar's text (`value: 123` is
/// "123"), null as empty, and refuses lists and maps.
fn string_field(map: &Node, field: &str, whose: &str) -> Result<String> {
    match map.get(field) {
        None | Some(Node::Null) => Ok(String::new()),
        Some(n @ (Node::Seq(_) | Node::Map(_))) => Err(err(format!(
            "{whose}`{field}` must be a string, not {}",
            n.kind_name()
        ))),
        Some(n) => Ok(n.scalar_text().unwrap_or_default()),
    }
}

/// Reads a `targets:` list; `from_file` is true for those of `targetFilePath` (located at that
/// key of the configuration).
fn parse_targets(
    list: Option<&Node>,
    whose: &str,
    from_file: bool,
    locate: Locate<'_>,
    out: &mut Vec<Target>,
) -> Result<()> {
    let place = |i: usize, field: Option<&str>| -> Vec<PathSeg> {
        if from_file {
            return vec![key("targetFilePath")];
        }
        let mut p = vec![key("targets"), PathSeg::Index(i)];
        p.extend(field.map(key));
        p
    };
    let items = match list {
        None | Some(Node::Null) => return Ok(()),
        Some(Node::Seq(items)) => items,
        Some(other) => {
            return Err(err(format!(
                "{whose}`targets` must be a list, not {}",
                other.kind_name()
            ))
            .at_opt(locate(&place(0, None)[..1])));
        }
    };
    for (i, item) in items.iter().enumerate() {
        let at = format!("{whose}targets[{i}].");
        if !matches!(item, Node::Map(_) | Node::Null) {
            return Err(err(format!(
                "{whose}targets[{i}] must be a mapping, not {}",
                item.kind_name()
            ))
            .at_opt(locate(&place(i, None))));
        }
        let selector = match item.get("selector") {
            None | Some(Node::Null) => None,
            Some(s) => Some(crate::yaml::de::from_node::<Selector>(s).map_err(|e| {
                err(format!("{at}selector: {e}")).at_opt(locate(&place(i, Some("selector"))))
            })?),
        };
        let field_path = string_field(item, "fieldPath", &at)
            .map_err(|e| e.at_opt(locate(&place(i, Some("fieldPath")))))?;
        if field_path.is_empty() {
            // `validateJsonFieldPath` in ValueAddTransformer.go.
            return Err(err("fieldPath cannot be empty")
                .at_opt(locate(&place(i, None)))
                .label(format!("{whose}targets[{i}] has no fieldPath"))
                .help("name the field to write, e.g. `fieldPath: metadata/namespace`"));
        }
        let file_path_position = match item.get("filePathPosition") {
            None | Some(Node::Null) => 0,
            Some(Node::Int(n)) if *n < 0 => {
                return Err(err(format!(
                    "value of FilePathPosition ({n}) cannot be negative"
                ))
                .at_opt(locate(&place(i, Some("filePathPosition"))))
                .label(format!("{at}filePathPosition"))
                .help("use 0 to replace the field, 1 to prefix the path it holds, a large number to append"));
            }
            Some(Node::Int(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
            Some(other) => {
                return Err(err(format!(
                    "{at}filePathPosition must be an integer, not {}",
                    other.kind_name()
                ))
                .at_opt(locate(&place(i, Some("filePathPosition")))));
            }
        };
        out.push(Target {
            selector,
            field_path,
            file_path_position,
            at: place(i, None),
        });
    }
    Ok(())
}

impl Config {
    /// Reads a configuration. `root_base` is the base name of the kustomization directory
    /// (the default value); `load` reads and parses a file named relative to it (for
    /// `targetFilePath`, whose `targets:` are appended; its other fields are ignored);
    /// `locate` places errors in the configuration's source.
    pub(crate) fn from_node(
        node: &Node,
        root_base: &str,
        load: &mut dyn FnMut(&str) -> Result<Node>,
        locate: Locate<'_>,
    ) -> Result<Config> {
        let at = |k: &str| locate(&[key(k)]);
        let mut value = string_field(node, "value", "")
            .map_err(|e| e.at_opt(at("value")))?
            .trim()
            .to_string();
        if value.is_empty() {
            value = root_base.to_string();
        }
        let mut targets = Vec::new();
        parse_targets(node.get("targets"), "", false, locate, &mut targets)?;
        let file =
            string_field(node, "targetFilePath", "").map_err(|e| e.at_opt(at("targetFilePath")))?;
        if !file.is_empty() {
            let doc = load(&file).map_err(|e| {
                if e.location.is_none() {
                    e.at_opt(at("targetFilePath"))
                } else {
                    e
                }
            })?;
            if !matches!(doc, Node::Map(_) | Node::Null) {
                return Err(err(format!(
                    "targetFilePath '{file}' must hold a mapping with `targets:`, not {}",
                    doc.kind_name()
                ))
                .at_opt(at("targetFilePath")));
            }
            let whose = format!("'{file}': ");
            parse_targets(doc.get("targets"), &whose, true, locate, &mut targets)?;
        }
        if targets.is_empty() {
            return Err(err("must specify at least one target")
                .at_opt(locate(&[]))
                .label("this configuration has no targets")
                .help("add `targets:` entries with a `fieldPath` (and optionally a `selector`)"));
        }
        Ok(Config { value, targets })
    }
}

/// Runs the transformer. `select` returns the indices of the resources a selector picks.
/// `metadata/namespace` goes through the namespace transformer (objects not known to be
/// cluster-scoped, and RoleBinding subjects named `default`) without recording a rename, as
/// kustomize's plugin applies `namespace.Filter` directly; any other path is written as a
/// plain scalar by [`set_value`].
pub(crate) fn apply(
    config: &Config,
    resources: &mut [Resource],
    tables: &FieldSpecTables,
    select: Select<'_>,
    locate: Locate<'_>,
) -> Result<()> {
    for target in &config.targets {
        let picked: Vec<usize> = match &target.selector {
            None => (0..resources.len()).collect(),
            Some(s) => select(s, resources)?,
        };
        let parts = split_field_path(&target.field_path);
        for i in picked {
            let Some(r) = resources.get_mut(i) else {
                continue;
            };
            if target.field_path == "metadata/namespace" {
                // The namespace transformer records a previous id and checks ids; kustomize's
                // ValueAddTransformer does neither, so it runs on a copy.
                let mut one = [r.clone()];
                namespace::apply_with(
                    &mut one,
                    &config.value,
                    &[],
                    tables,
                    namespace::Options::default(),
                )?;
                let [done] = one;
                r.node = done.node;
                continue;
            }
            set_value(
                &mut r.node,
                &parts,
                &config.value,
                target.file_path_position,
            )
            .map_err(|m| {
                let mut field = target.at.clone();
                if field.len() > 1 {
                    field.push(key("fieldPath"));
                }
                err(format!(
                    "cannot write fieldPath `{}` of {} {}: {m}",
                    target.field_path,
                    r.kind(),
                    r.name()
                ))
                .at_opt(locate(&field))
                .label("this field path")
            })?;
        }
    }
    Ok(())
}

/// Splits a field path on `/`; a field ending in `\` joins the next with a `/`
/// (`api/filters/valueadd`). Parts are trimmed and empty ones dropped (kyaml's `cleanPath`).
pub(crate) fn split_field_path(path: &str) -> Vec<String> {
    super::refpath::split_path(path, '/')
        .into_iter()
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty())
        .collect()
}

/// One part of a field path, as kyaml's `PathGetter` reads it: a step of a query (`-` is the
/// last item, `[name=value]` may append one), not of a place (`crate::yaml::path::PathSeg`).
#[derive(Debug, PartialEq)]
enum Step<'p> {
    /// A non-negative number: a list index (out of range: nothing is written).
    Index(usize),
    /// `-`: the last list element.
    Last,
    /// `[name=value]` (`name` empty: a scalar element equal to `value`), appended when absent.
    Match(&'p str, &'p str),
    /// A map key, created when absent.
    Field(&'p str),
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits.
fn atoi(s: &str) -> Option<i128> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 19 {
        return None;
    }
    let n: i128 = digits.parse().ok()?;
    let n = if s.starts_with('-') { -n } else { n };
    (i128::from(i64::MIN)..=i128::from(i64::MAX))
        .contains(&n)
        .then_some(n)
}

fn step(part: &str) -> std::result::Result<Step<'_>, String> {
    if let Some(n) = atoi(part) {
        return usize::try_from(n)
            .map(Step::Index)
            .map_err(|_| format!("array index {n} cannot be negative"));
    }
    if part == "-" {
        return Ok(Step::Last);
    }
    if let Some(inner) = part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
        return match inner.split_once('=') {
            Some((name, value)) => Ok(Step::Match(name, value)),
            None => Err(
                "list path element must contain fieldName=fieldValue for element to match".into(),
            ),
        };
    }
    Ok(Step::Field(part))
}

fn go_kind(n: &Node) -> &'static str {
    super::refpath::go_kind(n)
}

fn wrong_kind(want: &str, got: &Node) -> String {
    format!("wrong node kind: expected {want} but got {}", go_kind(got))
}

/// Writes `value` at `parts` (from [`split_field_path`]) in `node`, creating missing map
/// fields (kyaml's `LookupCreate`): a part before `[k=v]` or a number becomes a list, the
/// last part a scalar, others maps. A list index out of range, or a path through a null,
/// writes nothing. The field must end up a scalar. With `position` > 0 the value is inserted
/// into the slash path the field holds ([`insert_path_part`] at `position - 1`).
///
/// kustomize keeps the style of an existing scalar and writes the text untagged, so the
/// result reads as a plain scalar unless the old one was quoted. ply does not keep quoting:
/// an old string is taken as quoted only when its text would not read as a string plain.
/// Errors are messages the caller wraps.
pub(crate) fn set_value(
    node: &mut Node,
    parts: &[String],
    value: &str,
    position: usize,
) -> std::result::Result<(), String> {
    let steps: Vec<Step<'_>> = parts
        .iter()
        .map(|p| step(p))
        .collect::<std::result::Result<_, _>>()?;
    let mut cur = node;
    for (i, s) in steps.iter().enumerate() {
        if cur.is_null() && i > 0 {
            // kyaml appends below a null scalar, which stays null in the output.
            return Ok(());
        }
        let next = steps.get(i + 1);
        cur = match s {
            Step::Field(name) => {
                let Node::Map(m) = cur else {
                    return Err(wrong_kind("MappingNode", cur));
                };
                m.entry((*name).to_string()).or_insert_with(|| match next {
                    None => Node::Null,
                    Some(Step::Index(_) | Step::Match(..)) => Node::Seq(Vec::new()),
                    Some(_) => Node::empty_map(),
                })
            }
            Step::Index(_) | Step::Last | Step::Match(..) => {
                let Node::Seq(items) = cur else {
                    return Err(wrong_kind("SequenceNode", cur));
                };
                let at = match s {
                    Step::Index(n) => Some(*n).filter(|n| *n < items.len()),
                    Step::Last => items.len().checked_sub(1),
                    Step::Match(name, want) => {
                        let found = items.iter().position(|e| {
                            let v = if name.is_empty() {
                                Some(e)
                            } else {
                                e.get(name)
                            };
                            v.and_then(Node::scalar_text).as_deref() == Some(*want)
                                && (name.is_empty() == e.is_scalar())
                        });
                        Some(found.unwrap_or_else(|| {
                            items.push(if name.is_empty() {
                                resolve_plain_v3(want)
                            } else {
                                let mut m = crate::yaml::Map::default();
                                m.insert((*name).to_string(), resolve_plain_v3(want));
                                Node::Map(m)
                            });
                            items.len() - 1
                        }))
                    }
                    Step::Field(_) => None,
                };
                match at.and_then(|k| items.get_mut(k)) {
                    Some(n) => n,
                    None => return Ok(()),
                }
            }
        };
    }
    if matches!(cur, Node::Map(_) | Node::Seq(_)) {
        return Err(wrong_kind("ScalarNode", cur));
    }
    let old = match &*cur {
        Node::Null => String::new(),
        other => other.scalar_text().unwrap_or_default(),
    };
    let quoted = matches!(&*cur, Node::Str(s) if !matches!(resolve_plain_v3(s), Node::Str(_)));
    let text = if position > 0 {
        insert_path_part(&old, position - 1, value)
    } else {
        value.to_string()
    };
    *cur = if quoted {
        Node::Str(text)
    } else {
        resolve_plain_v3(&text)
    };
    Ok(())
}

/// kyaml's `filesys.PathSplit`: the parts of a slash path, a leading empty part marking an
/// absolute one (`/` alone is one empty part).
fn path_split(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let (dir, file) = match rest.rfind('/') {
            Some(i) => (&rest[..=i], &rest[i + 1..]),
            None => ("", rest),
        };
        if dir == "/" {
            if !file.is_empty() {
                out.push(file);
            }
            out.push("");
            break;
        }
        out.push(file);
        rest = dir.strip_suffix('/').unwrap_or(dir);
    }
    out.reverse();
    out
}

/// Go's `path.Clean` of a non-empty path.
fn go_clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else if !rooted {
                    out.push("..");
                }
            }
            p => out.push(p),
        }
    }
    let joined = out.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// Go's `filepath.Join`: the non-empty parts joined and cleaned, or empty.
fn go_join(parts: &[&str]) -> String {
    let kept: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    if kept.is_empty() {
        String::new()
    } else {
        go_clean(&kept.join("/"))
    }
}

/// kyaml's `filesys.InsertPathPart`: `part` inserted into the slash path `path` at `pos`
/// (0 prefixes, past the end postfixes); an absolute path stays absolute and counts from its
/// first name. The result is joined the Go way (cleaned: `.`, `..` and doubled slashes go).
pub(crate) fn insert_path_part(path: &str, pos: usize, part: &str) -> String {
    if part.is_empty() {
        return path.to_string();
    }
    let mut parts = path_split(path);
    let mut pos = pos.min(parts.len());
    if parts.first() == Some(&"") && pos < parts.len() {
        pos += 1;
    }
    parts.insert(pos, part);
    match parts.split_first() {
        Some((&"", rest)) => format!("/{}", go_join(rest)),
        _ => go_join(&parts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    #[test]
    fn insert_path_part_table() {
        // The table of `api/filters/valueadd`'s Filter comment (positions there are 1-based).
        let cases = [
            ("", 1, "PEACH"),
            ("", 9, "PEACH"),
            ("/", 1, "/PEACH"),
            ("/", 9, "/PEACH"),
            ("pie", 1, "PEACH/pie"),
            ("/pie", 1, "/PEACH/pie"),
            ("raw", 2, "raw/PEACH"),
            ("raw", 9999, "raw/PEACH"),
            ("/raw", 2, "/raw/PEACH"),
            ("/raw", 9999, "/raw/PEACH"),
            ("a/nice/warm/pie", 4, "a/nice/warm/PEACH/pie"),
            ("/a/nice/warm/pie", 4, "/a/nice/warm/PEACH/pie"),
        ];
        for (old, pos, want) in cases {
            assert_eq!(
                insert_path_part(old, pos - 1, "PEACH"),
                want,
                "{old} at {pos}"
            );
        }
    }

    #[test]
    fn insert_path_part_cleans_like_go() {
        assert_eq!(insert_path_part("./x/../y//z/", 1, "P"), "P/y/z");
        assert_eq!(insert_path_part("a/b/", 9, "P"), "a/b/P");
        assert_eq!(insert_path_part("//a", 0, "P"), "/P/a");
        assert_eq!(insert_path_part("/../a", 0, "P"), "/a");
        assert_eq!(insert_path_part("a", 0, ""), "a");
    }

    #[test]
    fn path_split_matches_kyaml() {
        assert_eq!(path_split(""), Vec::<&str>::new());
        assert_eq!(path_split("/"), vec![""]);
        assert_eq!(path_split("/a"), vec!["", "a"]);
        assert_eq!(path_split("a//b"), vec!["a", "", "b"]);
        assert_eq!(path_split("//a"), vec!["", "a"]);
        assert_eq!(path_split("a/"), vec!["a", ""]);
    }

    #[test]
    fn field_paths_split_with_escapes() {
        assert_eq!(split_field_path("data/a\\/b/c"), vec!["data", "a/b", "c"]);
        assert_eq!(
            split_field_path("data/a\\\\/b\\\\/c"),
            vec!["data", "a\\/b\\/c"]
        );
        assert_eq!(split_field_path(" /data// x /"), vec!["data", "x"]);
    }

    fn set(doc: &str, path: &str, value: &str, pos: usize) -> std::result::Result<Node, String> {
        let mut n = parse_one(doc).map_err(|e| e.to_string())?;
        set_value(&mut n, &split_field_path(path), value, pos)?;
        Ok(n)
    }

    fn yaml(doc: &str) -> Node {
        parse_one(doc).unwrap_or_default()
    }

    #[test]
    fn creates_maps_and_list_entries() {
        let got = set("a: {}", "a/b/c", "v", 0);
        assert_eq!(got, Ok(yaml("a: {b: {c: v}}")));
        let got = set("l: [{name: x, i: 1}]", "l/[name=y]/i", "v", 0);
        assert_eq!(got, Ok(yaml("l: [{name: x, i: 1}, {name: y, i: v}]")));
        let got = set("l: [{name: x, i: 1}]", "l/[name=x]/i", "v", 0);
        assert_eq!(got, Ok(yaml("l: [{name: x, i: v}]")));
        let got = set("l: [a, b]", "l/1", "v", 0);
        assert_eq!(got, Ok(yaml("l: [a, v]")));
        let got = set("l: [a, b]", "l/-", "v", 0);
        assert_eq!(got, Ok(yaml("l: [a, v]")));
        let got = set("l: [a]", "l/[=b]", "v", 0);
        assert_eq!(got, Ok(yaml("l: [a, v]")));
    }

    #[test]
    fn index_out_of_range_or_null_parent_writes_nothing_but_created_parents() {
        assert_eq!(set("a: {}", "a/l/5/x", "v", 0), Ok(yaml("a: {l: []}")));
        assert_eq!(set("a: null", "a/x", "v", 0), Ok(yaml("a: null")));
    }

    #[test]
    fn values_read_as_plain_scalars() {
        assert_eq!(set("a: x", "a", "123", 0), Ok(yaml("a: 123")));
        assert_eq!(set("{}", "a", "true", 0), Ok(yaml("a: true")));
        assert_eq!(set("{}", "a", "007", 0), Ok(yaml("a: 7")));
        // An old string that could only have been written quoted stays a string.
        assert_eq!(set("a: '5'", "a", "123", 0), Ok(yaml("a: '123'")));
        assert_eq!(set("a: true", "a", "123", 2), Ok(yaml("a: true/123")));
        assert_eq!(set("a:", "a", "123", 2), Ok(yaml("a: 123")));
    }

    #[test]
    fn errors_name_the_node_kinds() {
        assert_eq!(
            set("a: [x]", "a", "v", 0),
            Err("wrong node kind: expected ScalarNode but got SequenceNode".into())
        );
        assert_eq!(
            set("a: x", "a/b", "v", 0),
            Err("wrong node kind: expected MappingNode but got ScalarNode".into())
        );
        assert_eq!(
            set("a: {}", "a/-/b", "v", 0),
            Err("wrong node kind: expected SequenceNode but got MappingNode".into())
        );
        assert_eq!(
            set("a: []", "a/-1", "v", 0),
            Err("array index -1 cannot be negative".into())
        );
        assert!(set("a: []", "a/[x]", "v", 0).is_err());
    }

    fn config(doc: &str) -> Result<Config> {
        let n = parse_one(doc).map_err(|e| err(e.to_string()))?;
        Config::from_node(
            &n,
            "root",
            &mut |f| match f {
                "t.yaml" => Ok(yaml("targets: [{fieldPath: b}]\nother: 1")),
                _ => Err(err("missing")),
            },
            &|_| None,
        )
    }

    #[test]
    fn reads_configurations() {
        let c = config(
            "value: '  v '\ntargets: [{fieldPath: a, filePathPosition: 2}]\ntargetFilePath: t.yaml",
        );
        let c = c.map_err(|e| e.message);
        assert_eq!(
            c.as_ref().map(|c| (c.value.as_str(), c.targets.len())),
            Ok(("v", 2))
        );
        let c = config("targets: [{fieldPath: a}]").map_err(|e| e.message);
        assert_eq!(c.map(|c| c.value), Ok("root".to_string()));
        let c = config("value: 12\ntargets: [{fieldPath: a}]").map_err(|e| e.message);
        assert_eq!(c.map(|c| c.value), Ok("12".to_string()));
        assert!(config("value: [a]\ntargets: [{fieldPath: a}]").is_err());
        let msg = |d: &str| config(d).err().map(|e| e.message);
        assert_eq!(
            msg("value: x"),
            Some("builtin ValueAddTransformer: must specify at least one target".into())
        );
        assert_eq!(
            msg("targets: [{selector: {kind: A}}]"),
            Some("builtin ValueAddTransformer: fieldPath cannot be empty".into())
        );
        assert_eq!(
            msg("targets: [{fieldPath: a, filePathPosition: -1}]"),
            Some(
                "builtin ValueAddTransformer: value of FilePathPosition (-1) cannot be negative"
                    .into()
            )
        );
    }
}
