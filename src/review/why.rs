//! The review says why (issue 29): each changed field of a head object rendered with field
//! provenance is given its cause, the newest place that set its new value, whether that place
//! changed between the sides, and a link to it at the head commit.

use std::path::{Path, PathBuf};

use crate::fs::Fs;
use crate::merge::ssa::value::human;
use crate::render::provenance::resolve;
use crate::report::{Cause, ObjectChange};
use crate::resource::Resource;
use crate::resource::provenance::{parse_path, push_index, push_key};
use crate::yaml::Node;

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

/// Gives each change of `objects[i]` (paired with `head[i]`, as `compare` orders them) the
/// cause of its new value.
pub(crate) fn annotate(
    objects: &mut [ObjectChange],
    head: &[Resource],
    old: &dyn Fs,
    new: &dyn Fs,
    link: Option<&LinkBase>,
) {
    let mut sides = Sides::default();
    for (o, r) in objects.iter_mut().zip(head) {
        let Some(prov) = &r.provenance else { continue };
        for c in &mut o.changes {
            if c.after.is_none() {
                continue;
            }
            let Some(path) = index_path(&r.node, &c.path) else {
                continue;
            };
            // The field itself and the fields under it (a map or list that changed as a
            // whole): the cause is the first of them whose place changed in the pull request
            // (the list item that changed, not the list's key), else the first with a place.
            let mut fields = Vec::new();
            if let Some(f) = parse_path(&path)
                .and_then(|segs| prov.field(&segs))
                .and_then(|c| c.newest(&path))
            {
                fields.push(f);
            }
            prov.for_each_field(&r.node, &mut |p, _, chain| {
                if p.starts_with(path.as_str()) && p[path.len()..].starts_with(['.', '[']) {
                    fields.extend(chain.newest(p));
                }
            });
            let mut chosen = None;
            for origin in fields {
                let Some(place) = &origin.place else { continue };
                let at = resolve(place);
                let changed = sides.changed_line(old, new, &place.file.path, &at.quote);
                let better = chosen.is_none() || changed == Some(true);
                if changed == Some(true) {
                    chosen = Some((origin, at, changed));
                    break;
                }
                if better {
                    chosen = Some((origin, at, changed));
                }
            }
            let Some((origin, at, changed)) = chosen else {
                continue;
            };
            let Some(place) = &origin.place else { continue };
            let file_path = &place.file.path;
            c.cause = Some(Cause {
                file: at.file.clone(),
                line: at.line,
                column: at.column,
                step: origin.step.name().to_string(),
                changed,
                link: link.and_then(|l| {
                    let rel = file_path.strip_prefix(&l.root).ok()?;
                    let rel = rel.to_str()?.replace('\\', "/");
                    crate::report::source_link(&l.remote, &l.commit, &rel, at.line)
                }),
                remote: place.file.remote.clone(),
            });
        }
    }
}

/// A file's head text, and its base text (`None` when absent at the base).
type Texts = (Vec<u8>, Option<Vec<u8>>);

/// Each file's text at both sides, read once per review of an overlay: a list that changed as
/// a whole asks about every item's line.
#[derive(Default)]
struct Sides {
    /// By path: the head's text (`None` when unreadable) and the base's (`None` when absent).
    files: std::collections::HashMap<PathBuf, Option<Texts>>,
}

impl Sides {
    /// Whether the line `quote` of `path` is new in the head: the file differs between the
    /// sides and its base holds no such line. `None` when the head file cannot be read.
    fn changed_line(
        &mut self,
        old: &dyn Fs,
        new: &dyn Fs,
        path: &Path,
        quote: &str,
    ) -> Option<bool> {
        let texts = self.files.entry(path.to_path_buf()).or_insert_with(|| {
            let head = new.read(path).ok()?;
            Some((head, old.read(path).ok()))
        });
        let (head, base) = texts.as_ref()?;
        let Some(base) = base else {
            return Some(true);
        };
        if base == head {
            return Some(false);
        }
        let base = String::from_utf8_lossy(base);
        Some(!base.lines().any(|l| l.trim_end_matches('\r') == quote))
    }
}

/// A change's path in kubectl's form (`.spec.template.spec.containers[name="web"].image`)
/// as a field path of provenance (`spec.template.spec.containers[0].image`), resolved in
/// `node`: a map key is the longest key of the map the path continues with (keys may hold
/// dots), a list item the one whose key fields or value print as written.
pub(crate) fn index_path(node: &Node, kubectl: &str) -> Option<String> {
    let mut out = String::new();
    let mut cur = node;
    let mut rest = kubectl;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let Node::Map(m) = cur else { return None };
            let (k, v) = m
                .iter()
                .filter(|(k, _)| {
                    r.strip_prefix(k.as_str())
                        .is_some_and(|after| after.is_empty() || after.starts_with(['.', '[']))
                })
                .max_by_key(|(k, _)| k.len())?;
            push_key(&mut out, k);
            cur = v;
            rest = &r[k.len()..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let Node::Seq(items) = cur else { return None };
            let end = closing(r)?;
            let inner = &r[..end];
            let i = if let Ok(i) = inner.parse::<usize>() {
                i
            } else if let Some(v) = inner.strip_prefix('=') {
                items.iter().position(|x| human(x) == v)?
            } else {
                items.iter().position(|x| {
                    let Node::Map(m) = x else { return false };
                    let mut keys: Vec<(&str, &Node)> = Vec::new();
                    for part in split_keys(inner) {
                        let Some((k, _)) = part.split_once('=') else {
                            return false;
                        };
                        let Some(v) = m.get(k) else { return false };
                        keys.push((k, v));
                    }
                    let mut written = String::new();
                    for (n, (k, v)) in keys.iter().enumerate() {
                        if n > 0 {
                            written.push(',');
                        }
                        written.push_str(k);
                        written.push('=');
                        written.push_str(&human(v));
                    }
                    written == inner
                })?
            };
            push_index(&mut out, i);
            cur = items.get(i)?;
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(out)
}

/// The `]` closing a list step, past quoted strings.
fn closing(r: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in r.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// The `k=v` parts of a key step, split at commas outside quotes.
fn split_keys(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut quoted, mut escaped, mut start) = (false, false, 0);
    for (i, c) in inner.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_paths_become_index_paths() {
        let node = crate::yaml::parse::parse_one(
            "metadata:\n  labels:\n    app.kubernetes.io/name: web\n    app: x\nspec:\n  containers:\n  - name: side\n  - name: web\n    image: a:1\n    args: [x, y]\n",
        )
        .unwrap();
        assert_eq!(
            index_path(&node, ".spec.containers[name=\"web\"].image").as_deref(),
            Some("spec.containers[1].image")
        );
        assert_eq!(
            index_path(&node, ".metadata.labels.app.kubernetes.io/name").as_deref(),
            Some("metadata.labels[\"app.kubernetes.io/name\"]")
        );
        assert_eq!(
            index_path(&node, ".spec.containers[1].args[=\"y\"]").as_deref(),
            Some("spec.containers[1].args[1]")
        );
        assert_eq!(index_path(&node, ".spec.nothing"), None);
    }
}
