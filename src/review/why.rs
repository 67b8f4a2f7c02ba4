//! The review says why: each changed field of an object rendered with field provenance is
//! given its cause (the newest place that set its new value, or for a removed field the place
//! at the base that held it), whether the pull request changed that line (the two sides' texts
//! lined up by a diff), and a link to it at the head commit.

use std::path::{Path, PathBuf};

use crate::fs::Fs;
use crate::merge::ssa::path::field_path;
use crate::merge::ssa::value::human;
use crate::render::provenance::resolve;
use crate::report::model::FieldCauses;
use crate::report::model::ObjectId;
use crate::report::{Cause, ObjectChange};
use crate::resource::Resource;
use crate::resource::provenance::{Origin, Place, Step};
use crate::yaml::Node;
use crate::yaml::path::{parse_path, path_text};

/// What a link to the head commit needs.
#[derive(Clone, Debug)]
pub(crate) struct LinkBase {
    /// The `origin` remote's URL.
    pub(crate) remote: String,
    /// The head commit's id.
    pub(crate) commit: String,
    /// The working tree's root (paths are linked relative to it).
    pub(crate) root: PathBuf,
}

/// Gives each change of `objects[i]` (paired with `head[i]`, as `compare` orders them) its
/// cause: an added or changed field the place that set its new value at the head, a removed
/// field the place that held it at the base (`base` renders the base side with provenance;
/// asked only when a field was removed).
pub(crate) fn annotate(
    objects: &mut [ObjectChange],
    head: &[Resource],
    base: &mut dyn FnMut() -> Option<Vec<Resource>>,
    old: &dyn Fs,
    new: &dyn Fs,
    link: Option<&LinkBase>,
) {
    let mut sides = Sides {
        old,
        new,
        link,
        files: Default::default(),
    };
    for (o, r) in objects.iter_mut().zip(head) {
        if r.provenance.is_none() {
            continue;
        }
        for c in &mut o.changes {
            if let Some(after) = &c.after {
                c.cause = cause_in(r, &c.path, after, head, Side::Head, &mut sides);
            }
        }
    }
    let removed = |o: &ObjectChange| o.changes.iter().any(|c| c.after.is_none());
    if !objects.iter().any(removed) {
        return;
    }
    let Some(based) = base() else { return };
    for o in objects.iter_mut().filter(|o| removed(o)) {
        let id = o.renamed_from.as_ref().unwrap_or(&o.id);
        let Some(r) = based.iter().find(|r| ObjectId::of(&r.node) == *id) else {
            continue;
        };
        for c in &mut o.changes {
            if let (None, Some(before)) = (&c.after, &c.before) {
                c.cause = cause_in(r, &c.path, before, &based, Side::Base, &mut sides);
            }
        }
    }
}

/// The cause of every field of `r` (rendered with provenance; `all` is its render, at the
/// base when `at_base`) that has a place, as [`cause_in`] finds a field's: what the changes
/// of a moved object are given once it is paired with its other side ([`annotate_moved`]).
pub(crate) fn field_causes(
    r: &Resource,
    all: &[Resource],
    at_base: bool,
    (old, new): (&dyn Fs, &dyn Fs),
    link: Option<&LinkBase>,
) -> FieldCauses {
    let Some(prov) = r.provenance.as_ref() else {
        return Vec::new();
    };
    let mut sides = Sides {
        old,
        new,
        link,
        files: Default::default(),
    };
    let side = if at_base { Side::Base } else { Side::Head };
    let mut out = Vec::new();
    prov.for_each_field(&r.node, &mut |p, v, chain| {
        if let Some(cause) = field_cause(&chain.origins(p), v, r, all, side, &mut sides) {
            out.push((p.to_string(), cause));
        }
    });
    out
}

/// Gives each change of a moved object without a cause one from its sides' field causes
/// ([`field_causes`]): an added or changed field from `head` (the node the overlay renders
/// now, and its causes), a removed one from `base` (the node the overlay it moved from
/// rendered). As [`cause_in`] chooses: of the field and the fields under it, the first whose
/// place changed in the pull request, else the first.
pub(crate) fn annotate_moved(
    o: &mut ObjectChange,
    head: (&Node, &FieldCauses),
    base: (&Node, &FieldCauses),
) {
    for c in &mut o.changes {
        if c.cause.is_some() {
            continue;
        }
        let (node, table) = if c.after.is_some() { head } else { base };
        let Some(path) = field_path(node, &c.path).map(|segs| path_text(&segs)) else {
            continue;
        };
        let under = |p: &&(String, Cause)| {
            p.0.strip_prefix(path.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        };
        let mut found = table.iter().filter(under);
        let first = found.clone().next();
        let changed = found.find(|(_, cause)| cause.changed == Some(true));
        c.cause = changed.or(first).map(|(_, cause)| cause.clone());
    }
}

/// The link to `line` of the file at `path` at the head commit.
pub(crate) fn link_to(l: &LinkBase, path: &Path, line: usize) -> Option<String> {
    let rel = path.strip_prefix(&l.root).ok()?;
    let rel = rel.to_str()?.replace('\\', "/");
    crate::report::source_link(&l.remote, &l.commit, &rel, line)
}

/// Which render a cause is read from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Head,
    Base,
}

/// The cause of the field at `kubectl` (its value `value`) of `r`, an object of `all` (the
/// render of `side`): the field itself and the fields under it (a map or list that changed as
/// a whole) are asked in order, and the first whose place changed in the pull request is the
/// cause (the list item that changed, not the list's key), else the first with a place. A
/// place that did not change but reads another (a name following a generated object's hash, a
/// replacement's or var's source) gives way to the input that changed.
fn cause_in(
    r: &Resource,
    kubectl: &str,
    value: &Node,
    all: &[Resource],
    side: Side,
    sides: &mut Sides<'_>,
) -> Option<Cause> {
    let prov = r.provenance.as_ref()?;
    let segs = field_path(&r.node, kubectl)?;
    let path = path_text(&segs);
    let mut fields = Vec::new();
    if let Some(f) = prov.field(&segs).map(|c| c.origins(&path)) {
        fields.push((f, value.clone()));
    }
    prov.for_each_field(&r.node, &mut |p, v, chain| {
        if p.starts_with(path.as_str()) && p[path.len()..].starts_with(['.', '[']) {
            fields.push((chain.origins(p), v.clone()));
        }
    });
    let mut chosen: Option<Cause> = None;
    for (origins, v) in fields {
        let Some(cause) = field_cause(&origins, &v, r, all, side, sides) else {
            continue;
        };
        if cause.changed == Some(true) {
            return Some(cause);
        }
        if chosen.is_none() {
            chosen = Some(cause);
        }
    }
    chosen
}

/// The cause of one field whose origins are `origins` (newest first), its value `value`: the
/// newest step's place; where the pull request did not change that, the input the step read
/// that did change ([`read_input`]), else the place of an older step of the field that the
/// pull request changed (a field the change added, which a name reference or a prefix
/// renamed since).
fn field_cause(
    origins: &[Origin],
    value: &Node,
    r: &Resource,
    all: &[Resource],
    side: Side,
    sides: &mut Sides<'_>,
) -> Option<Cause> {
    let newest = origins.first()?;
    let place = newest.place.as_ref()?;
    let cause = sides.cause(place, newest.step, value, side);
    if cause.changed == Some(true) {
        return Some(cause);
    }
    if let Some(better) = read_input(r, newest, all, side, sides) {
        return Some(better);
    }
    // The older step wrote another value (the name before the reference renamed it): its
    // place is asked as a line, not for that value.
    let any = Node::str(String::new());
    let older = origins.iter().skip(1).find_map(|o| {
        let c = sides.cause(o.place.as_ref()?, o.step, &any, side);
        (c.changed == Some(true)).then_some(c)
    });
    Some(older.unwrap_or(cause))
}

/// For a place that did not change but whose step reads something else: the input that did.
/// A name that follows a generated object (`nameReference`, `hashSuffix`): the first of that
/// object's data whose place changed ("hash of ConfigMap NAME"); a replacement or var: the
/// source field's place.
fn read_input(
    r: &Resource,
    origin: &Origin,
    all: &[Resource],
    side: Side,
    sides: &mut Sides<'_>,
) -> Option<Cause> {
    let step = origin.step.name().to_string();
    match origin.step {
        Step::NameReference | Step::HashSuffix => {
            let generated = match (&origin.step, &origin.source) {
                (Step::NameReference, Some(src)) => {
                    let [_, kind, ns, name] = src.object.as_ref()?;
                    let found = |ns_too: bool| {
                        all.iter().find(|x| {
                            x.kind() == kind && x.name() == name && (!ns_too || x.namespace() == ns)
                        })
                    };
                    found(true).or_else(|| found(false))?
                }
                (Step::HashSuffix, _) => r,
                _ => return None,
            };
            // Only a name that carries a hash follows the object's data.
            if !hashed(generated) {
                return None;
            }
            let prov = generated.provenance.as_ref()?;
            let mut found = None;
            prov.for_each_field(&generated.node, &mut |p, v, chain| {
                if found.is_some() || !(p.starts_with("data") || p.starts_with("binaryData")) {
                    return;
                }
                let Some(o) = chain.newest(p) else { return };
                let Some(place) = &o.place else { return };
                let c = sides.cause(place, o.step, v, side);
                if c.changed == Some(true) {
                    found = Some(c);
                }
            });
            let mut c = found?;
            c.via = Some(format!(
                "hash of {} {}",
                generated.kind(),
                without_hash(generated.name())
            ));
            c.step = step;
            Some(c)
        }
        Step::Replacement | Step::Var | Step::Json6902 => {
            let src = origin.source.as_ref()?;
            let place = src.place.as_ref()?;
            let value = Node::str(String::new());
            let mut c = sides.cause(place, Step::Resource, &value, side);
            if c.changed != Some(true) {
                return None;
            }
            c.via = Some(match (&src.object, &src.path) {
                (Some([_, kind, _, name]), Some(path)) => format!("from {kind}/{name} {path}"),
                _ => "from its source".to_string(),
            });
            c.step = step;
            Some(c)
        }
        _ => None,
    }
}

/// Whether the object's name carries a content hash (its `metadata.name` was set by the
/// hash suffix step).
fn hashed(r: &Resource) -> bool {
    const NAME: &str = "metadata.name";
    r.provenance
        .as_ref()
        .and_then(|p| p.field(&parse_path(NAME)?).map(|c| c.origins(NAME)))
        .is_some_and(|o| o.iter().any(|o| o.step == Step::HashSuffix))
}

/// A generated name without its hash suffix (`redis-config-bd2fcfgt6k` → `redis-config`).
fn without_hash(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((stem, hash))
            if hash.len() == 10 && hash.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            stem
        }
        _ => name,
    }
}

/// A file's lines at both sides, lined up by a diff of the two texts.
struct Lines {
    /// Whether each line of the head (0-based) is not a line the base holds at the
    /// corresponding place (inserted or replaced by the change).
    head_new: Vec<bool>,
    /// Whether each line of the base was removed or replaced by the change.
    base_gone: Vec<bool>,
    /// The first head line the change touched (an inserted or replaced line, or the line
    /// where lines were removed), `None` when the texts are the same.
    first_head: Option<usize>,
    first_base: Option<usize>,
}

impl Lines {
    fn of(base: Option<&str>, head: Option<&str>) -> Lines {
        use similar::DiffOp;
        let (b, h) = (base.unwrap_or(""), head.unwrap_or(""));
        let mut out = Lines {
            head_new: vec![head.is_some() && base.is_none(); h.lines().count()],
            base_gone: vec![base.is_some() && head.is_none(); b.lines().count()],
            first_head: None,
            first_base: None,
        };
        if base.is_none() || head.is_none() {
            out.first_head = head.map(|_| 0);
            out.first_base = base.map(|_| 0);
            return out;
        }
        if b == h {
            return out;
        }
        let diff = similar::TextDiff::configure()
            .timeout(std::time::Duration::from_secs(2))
            .diff_lines(b, h);
        for op in diff.ops() {
            let (old_range, new_range) = match *op {
                DiffOp::Equal { .. } => continue,
                DiffOp::Delete {
                    old_index,
                    old_len,
                    new_index,
                } => (old_index..old_index + old_len, new_index..new_index),
                DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                } => (old_index..old_index, new_index..new_index + new_len),
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => (
                    old_index..old_index + old_len,
                    new_index..new_index + new_len,
                ),
            };
            out.first_head.get_or_insert(new_range.start);
            out.first_base.get_or_insert(old_range.start);
            for i in new_range {
                if let Some(x) = out.head_new.get_mut(i) {
                    *x = true;
                }
            }
            for i in old_range {
                if let Some(x) = out.base_gone.get_mut(i) {
                    *x = true;
                }
            }
        }
        out
    }
}

/// A file's texts at both sides (`None`: absent or unreadable there) and their lines lined up.
struct Texts {
    head: Option<String>,
    base: Option<String>,
    lines: Lines,
}

/// Each file's text at both sides, read and diffed once per review of an overlay: a list
/// that changed as a whole asks about every item's line.
struct Sides<'a> {
    old: &'a dyn Fs,
    new: &'a dyn Fs,
    link: Option<&'a LinkBase>,
    files: std::collections::HashMap<PathBuf, Texts>,
}

impl Sides<'_> {
    fn texts(&mut self, path: &Path) -> &Texts {
        let (old, new) = (self.old, self.new);
        self.files.entry(path.to_path_buf()).or_insert_with(|| {
            let read = |fs: &dyn Fs| {
                fs.read(path)
                    .ok()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
            };
            let (head, base) = (read(new), read(old));
            let lines = Lines::of(base.as_deref(), head.as_deref());
            Texts { head, base, lines }
        })
    }

    /// The cause at `place` (set by `step`, holding `value`) at `side`: its line (for a
    /// generator's whole file, the first line the change touched), and whether the pull
    /// request changed that line, or any line of a value that spans several.
    fn cause(&mut self, place: &Place, step: Step, value: &Node, side: Side) -> Cause {
        let at = resolve(place);
        let whole_file = step == Step::Generator && place.start == 0 && place.path.is_empty();
        let texts = self.texts(&place.file.path);
        let (text, own, other, changed_lines, first) = match side {
            Side::Head => (
                &texts.head,
                &texts.head,
                &texts.base,
                &texts.lines.head_new,
                texts.lines.first_head,
            ),
            Side::Base => (
                &texts.base,
                &texts.base,
                &texts.head,
                &texts.lines.base_gone,
                texts.lines.first_base,
            ),
        };
        let (mut line, mut column) = (at.line, at.column);
        let changed = match (own, other) {
            // Unreadable at its own side: nothing to compare.
            (None, _) => None,
            // Absent at the other side: every line is new (`Lines::of`).
            (Some(_), _) if whole_file => {
                if let Some(first) = first {
                    line = (first + 1).min(changed_lines.len().max(1));
                    column = 1;
                }
                Some(first.is_some())
            }
            // An entry of a kustomization standing for what it holds (an inline patch, a
            // chart whose template helm does not name): the line in it that holds the value,
            // else its first changed line.
            (Some(_), _) if names_entry(step, &at.quote, value) => {
                let text = text.as_deref().unwrap_or("");
                let span = entry_lines(text, at.line);
                let holds = scalar_text(value).and_then(|v| {
                    span.clone()
                        .find(|&l| text.lines().nth(l - 1).is_some_and(|t| t.contains(&v)))
                });
                let changed_at = |l: usize| changed_lines.get(l - 1) == Some(&true);
                let first = span.into_iter().find(|&l| changed_at(l));
                match holds.or(first) {
                    Some(l) => {
                        (line, column) = (l, value_column(text, l));
                        Some(changed_at(l))
                    }
                    None => Some(false),
                }
            }
            (Some(_), _) => {
                let text = text.as_deref().unwrap_or("");
                let span = value_lines(text, at.line, value);
                Some(
                    span.into_iter()
                        .any(|l| changed_lines.get(l - 1) == Some(&true)),
                )
            }
        };
        let link = match side {
            Side::Head => self.link.and_then(|l| link_to(l, &place.file.path, line)),
            Side::Base => None,
        };
        Cause {
            file: at.file,
            line,
            column,
            step: step.name().to_string(),
            changed,
            link,
            remote: place.file.remote.clone(),
            via: None,
            at_base: side == Side::Base,
        }
    }
}

/// Whether a place stands for a whole list entry holding the value elsewhere: a step that
/// is not a file's own value, at a `- ` line that does not hold the value.
fn names_entry(step: Step, quote: &str, value: &Node) -> bool {
    !matches!(step, Step::Resource | Step::Generator)
        && quote.trim_start().starts_with("- ")
        && scalar_text(value).is_none_or(|v| !quote.contains(&v))
}

/// A scalar's text as YAML would write it plainly (`None` for a map or list, or an empty
/// string: no line can be told to hold it).
fn scalar_text(value: &Node) -> Option<String> {
    let t = match value.unspelled() {
        Node::Str(s) => s.lines().next()?.to_string(),
        Node::Map(_) | Node::Seq(_) => return None,
        other => human(other),
    };
    (!t.is_empty()).then_some(t)
}

/// The lines (1-based) of the list entry whose `- ` is on `line`: that line and the lines
/// after it indented deeper than its dash.
fn entry_lines(text: &str, line: usize) -> std::ops::RangeInclusive<usize> {
    let mut lines = text.lines().skip(line.saturating_sub(1));
    let Some(first) = lines.next() else {
        return line..=line;
    };
    let dash = first.len() - first.trim_start().len();
    let mut end = line;
    for (i, l) in lines.enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        if l.len() - l.trim_start_matches(' ').len() <= dash {
            break;
        }
        end = line + 1 + i;
    }
    line..=end
}

/// The 1-based column of the value on `line` of `text`: after `key: ` or `- `, else the
/// first character that is not a space.
fn value_column(text: &str, line: usize) -> usize {
    let l = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let body = l.trim_start_matches(' ').trim_start_matches("- ");
    let at = match body.find(": ") {
        Some(i) => l.len() - body.len() + i + 2,
        None => l.len() - body.len(),
    };
    l[..at].chars().count() + 1
}

/// The lines (1-based) a value starting at `line` of `text` is written on: that line, and
/// when the value is a string the line does not hold whole (a block scalar, a plain or quoted
/// scalar folded over lines), the lines after it indented deeper than the line's key.
fn value_lines(text: &str, line: usize, value: &Node) -> std::ops::RangeInclusive<usize> {
    let mut lines = text.lines().skip(line.saturating_sub(1));
    let Some(first) = lines.next() else {
        return line..=line;
    };
    let whole = match value.unspelled() {
        Node::Str(s) => !s.contains('\n') && first.contains(s.as_str()),
        _ => true,
    };
    if whole {
        return line..=line;
    }
    // The key's column: indentation, each `- ` of a list item counting as indentation.
    let mut indent = first.len() - first.trim_start_matches([' ', '-']).len();
    if first.trim_start().starts_with('-') && !first.trim_start().starts_with("- ") {
        indent = first.len() - first.trim_start().len();
    }
    let mut end = line;
    for (i, l) in lines.enumerate() {
        let depth = l.len() - l.trim_start_matches(' ').len();
        if l.trim().is_empty() {
            continue;
        }
        if depth <= indent {
            break;
        }
        end = line + 1 + i;
    }
    line..=end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_lined_up_by_a_diff() {
        // Two lines inserted above an unchanged one, one replaced, one removed at the end.
        let base = "a: 1\nb: 2\nc: 3\nd: 4\n";
        let head = "# one\n# two\na: 1\nb: 9\nc: 3\n";
        let l = Lines::of(Some(base), Some(head));
        assert_eq!(l.head_new, [true, true, false, true, false]);
        assert_eq!(l.base_gone, [false, true, false, true]);
        assert_eq!(l.first_head, Some(0));
        // The same text: nothing changed; a file new at the head: every line.
        let same = Lines::of(Some(base), Some(base));
        assert!(same.head_new.iter().all(|c| !c) && same.first_head.is_none());
        let new = Lines::of(None, Some(head));
        assert!(new.head_new.iter().all(|c| *c) && new.first_head == Some(0));
    }

    #[test]
    fn values_over_several_lines_and_entries() {
        let text = "data:\n  conf: |\n    a\n    b\n  other: x\nlist:\n- name: web\n  patch: |-\n    value: 3\nend: 1\n";
        assert_eq!(value_lines(text, 2, &Node::str("a\nb\n")), 2..=4);
        assert_eq!(value_lines(text, 5, &Node::str("x")), 5..=5);
        assert_eq!(entry_lines(text, 7), 7..=9);
        assert_eq!(value_column(text, 9), 12);
        assert!(names_entry(Step::Json6902, "- name: web", &Node::Int(3)));
        assert!(!names_entry(Step::Resource, "- name: web", &Node::Int(3)));
        assert_eq!(without_hash("redis-config-bd2fcfgt6k"), "redis-config");
        assert_eq!(without_hash("web-server"), "web-server");
    }
}
