//! Field provenance (issue 29): for each field of one object, the places that set its current
//! value, newest first. Kept beside the object ([`super::Resource::provenance`]), filled by the
//! render when `RenderOptions::provenance` is on (`render/provenance.rs`), never a second model.

use std::sync::Arc;

use crate::fasthash::FastMap;
use crate::source::SourceFile;
use crate::yaml::Node;
use crate::yaml::path::{PathSeg, push_index, push_key, skip_segs};

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
/// field path, [`crate::yaml::path::push_key`]) inside it. Resolved to a line and column only when shown
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
    /// Its field path (as [`crate::yaml::path::path_text`] writes it).
    pub(crate) path: Option<String>,
    /// Where that value was set, or the entry naming the file read.
    pub(crate) place: Option<Place>,
}

/// The origins of one object's fields, shaped like the object (a map of the object's maps, a
/// list of its lists), and the object as last recorded (frozen: its unchanged maps are shared
/// with the object, so the next record compares only what changed). A field no step has
/// changed since the object's first record is not written down: it sits under a
/// [`Tree::Read`], and its one origin is the document the object was read from, at the field's
/// own path ([`Chain::origins`] writes it out when asked). So the first record costs nothing
/// per field, and each later one touches only the fields that changed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Provenance {
    /// The document the object was read from at its first record (`None`: no document, as
    /// for a generated object; then every field was written down at that record).
    pub(crate) read: Option<Read>,
    pub(crate) tree: Tree,
    pub(crate) last: Node,
    /// How many records compared this object: a field's `stamp` is the one that set its
    /// newest origin.
    pub(crate) records: u32,
}

/// A document an object was read from: its file, and the byte where it starts.
#[derive(Clone, Debug)]
pub(crate) struct Read {
    pub(crate) file: Arc<SourceFile>,
    pub(crate) start: usize,
}

/// The origins recorded at one node of an object (see [`Provenance`]).
#[derive(Clone, Debug, Default)]
pub(crate) enum Tree {
    /// No field at or under here has origins (a field that left; nothing recorded yet).
    #[default]
    Empty,
    /// Every field at or under here has only its first origin: [`Provenance::read`].
    Read,
    /// As [`Tree::Read`], for a list item a step moved (`render::provenance`,
    /// `align_moved_items`): the document's origin is at the path [`Moved`] gives.
    ReadAt(Moved),
    /// One field: the origins recorded, newest first, then (`read`) the document's, at the
    /// field's own path or (`at`) where a move left it.
    Field {
        origins: Vec<Origin>,
        read: bool,
        at: Option<Moved>,
        /// The record ([`Provenance::records`]) whose comparison gave the newest origin, 0
        /// when none did (`render::provenance::record_written` skips the fields the record of
        /// its own step just gave that step's origin).
        stamp: u32,
    },
    /// A map: its keys recorded; any other key is `rest` (`Empty` or `Read`).
    Map { keys: Keys, rest: Box<Tree> },
    /// A list: its first items recorded; any later one is `rest` (`Empty` or `Read`).
    Seq { items: Vec<Tree>, rest: Box<Tree> },
}

/// Where the fields under a moved list item were read: the item's path in the document (as
/// [`crate::yaml::path::path_text`] writes it), standing for the first `depth` segments of a field's path now
/// (a move changes an index, never a path's length). Kept instead of writing each field's
/// document origin out when the item moves (docs/performance.md).
#[derive(Clone, Debug)]
pub(crate) struct Moved {
    pub(crate) path: Arc<str>,
    pub(crate) depth: usize,
}

impl Moved {
    /// The document path of the field now at `current`.
    pub(crate) fn doc_path(&self, current: &str) -> String {
        let rest = skip_segs(current, self.depth);
        let mut out = String::with_capacity(self.path.len() + rest.len());
        out.push_str(&self.path);
        out.push_str(rest);
        out
    }
}

/// One field's origins, newest first, as [`Provenance::for_each_field`] gives them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chain<'a> {
    /// The origins steps recorded, newest first.
    pub(crate) recorded: &'a [Origin],
    /// The document the object was read from, the oldest origin when the field has it.
    pub(crate) read: Option<&'a Read>,
    /// Where the field sat when read, when a move put it elsewhere (`None`: its own path).
    pub(crate) at: Option<&'a Moved>,
}

impl Chain<'_> {
    /// The step of the newest origin.
    pub(crate) fn newest_step(&self) -> Option<Step> {
        match self.recorded.first() {
            Some(o) => Some(o.step),
            None => self.read.map(|_| Step::Resource),
        }
    }

    /// The newest origin of the field at `path`.
    pub(crate) fn newest(&self, path: &str) -> Option<Origin> {
        match self.recorded.first() {
            Some(o) => Some(o.clone()),
            None => self.read.map(|d| self.read_origin(d, path)),
        }
    }

    /// The document's origin of the field at `path`.
    fn read_origin(&self, d: &Read, path: &str) -> Origin {
        match self.at {
            Some(m) => d.origin(&m.doc_path(path)),
            None => d.origin(path),
        }
    }

    /// Every origin of the field at `path`, newest first.
    pub(crate) fn origins(&self, path: &str) -> Vec<Origin> {
        let mut out = Vec::with_capacity(self.recorded.len() + 1);
        out.extend_from_slice(self.recorded);
        out.extend(self.read.map(|d| self.read_origin(d, path)));
        out
    }
}

impl Read {
    /// The origin of the field at `path` as read.
    pub(crate) fn origin(&self, path: &str) -> Origin {
        Origin {
            step: Step::Resource,
            place: Some(Place {
                file: Arc::clone(&self.file),
                start: self.start,
                path: path.to_string(),
            }),
            source: None,
        }
    }
}

/// The keys of a [`Tree::Map`] and their nodes, in the order first recorded: scanned while
/// few (a branch of the tree holds only the keys a step changed under it, most often one or
/// two), looked up through a hash index once more than [`KEYS_SCANNED`]. Each field a step
/// changes is found from the object's root, so this lookup is the most frequent step of
/// recording (docs/performance.md, "Provenance at 1.5×").
#[derive(Clone, Debug, Default)]
pub(crate) struct Keys {
    entries: Vec<(String, Tree)>,
    /// Positions by key, kept from the first time the entries outgrow [`KEYS_SCANNED`].
    index: Option<FastMap<String, usize>>,
}

/// How many keys a [`Keys`] scans before it keeps an index.
const KEYS_SCANNED: usize = 16;

impl Keys {
    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| k == key),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Tree> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The node of `key`, made as `make` gives it when the key is not there yet.
    fn get_or_insert_with(&mut self, key: &str, make: impl FnOnce() -> Tree) -> &mut Tree {
        let i = match self.position(key) {
            Some(i) => i,
            None => {
                let i = self.entries.len();
                self.entries.push((key.to_string(), make()));
                if let Some(index) = &mut self.index {
                    index.insert(key.to_string(), i);
                } else if self.entries.len() > KEYS_SCANNED {
                    self.index = Some(
                        self.entries
                            .iter()
                            .enumerate()
                            .map(|(i, (k, _))| (k.clone(), i))
                            .collect(),
                    );
                }
                i
            }
        };
        &mut self.entries[i].1
    }

    /// The node of `key`, taken out (an empty node stays in its place).
    pub(crate) fn take(&mut self, key: &str) -> Option<Tree> {
        let i = self.position(key)?;
        Some(std::mem::replace(&mut self.entries[i].1, Tree::Empty))
    }

    /// Sets the node of `key`.
    pub(crate) fn set(&mut self, key: &str, t: Tree) {
        *self.get_or_insert_with(key, || Tree::Empty) = t;
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut Tree> {
        self.entries.iter_mut().map(|(_, t)| t)
    }
}

impl Tree {
    /// The state an unlisted child of a branch made from this node has: a map or list made
    /// from a read node reads its children, any other starts empty.
    fn child_rest(&self) -> Tree {
        match self {
            Tree::Read => Tree::Read,
            Tree::ReadAt(m) => Tree::ReadAt(m.clone()),
            _ => Tree::Empty,
        }
    }

    /// The node at `path` under this one, made (as a map or list branch) where it is not yet.
    pub(crate) fn slot(&mut self, path: &[PathSeg]) -> &mut Tree {
        let mut t = self;
        for seg in path {
            let fits = matches!(
                (&*t, seg),
                (Tree::Map { .. }, PathSeg::Key(_)) | (Tree::Seq { .. }, PathSeg::Index(_))
            );
            if !fits {
                let rest = Box::new(t.child_rest());
                *t = match seg {
                    PathSeg::Key(_) => Tree::Map {
                        keys: Keys::default(),
                        rest,
                    },
                    PathSeg::Index(_) => Tree::Seq {
                        items: Vec::new(),
                        rest,
                    },
                };
            }
            t = match (t, seg) {
                (Tree::Map { keys, rest }, PathSeg::Key(k)) => {
                    keys.get_or_insert_with(k, || rest.child_rest())
                }
                (Tree::Seq { items, rest }, PathSeg::Index(i)) => {
                    while items.len() <= *i {
                        items.push(rest.child_rest());
                    }
                    &mut items[*i]
                }
                _ => unreachable!("made to fit above"),
            };
        }
        t
    }

    /// The node at `path`, if anything is recorded there.
    pub(crate) fn get(&self, path: &[PathSeg]) -> &Tree {
        let mut t = self;
        for seg in path {
            t = match (t, seg) {
                (Tree::Read, _) => return &Tree::Read,
                (Tree::ReadAt(_), _) => return t,
                (Tree::Map { keys, rest }, PathSeg::Key(k)) => keys.get(k.as_str()).unwrap_or(rest),
                (Tree::Seq { items, rest }, PathSeg::Index(i)) => items.get(*i).unwrap_or(rest),
                _ => return &Tree::Empty,
            };
        }
        t
    }

    /// The chain of the field this node records, if any.
    fn chain<'a>(&'a self, read: Option<&'a Read>) -> Option<Chain<'a>> {
        match self {
            Tree::Read => read.map(|d| Chain {
                recorded: &[],
                read: Some(d),
                at: None,
            }),
            Tree::ReadAt(m) => read.map(|d| Chain {
                recorded: &[],
                read: Some(d),
                at: Some(m),
            }),
            Tree::Field {
                origins,
                read: r,
                at,
                ..
            } => Some(Chain {
                recorded: origins,
                read: read.filter(|_| *r),
                at: at.as_ref(),
            }),
            _ => None,
        }
    }

    /// A field given `origin` on top of its chain (a new value of a field that was there).
    pub(crate) fn push(&mut self, origin: Origin) {
        match self {
            Tree::Field { origins, stamp, .. } => {
                origins.insert(0, origin);
                *stamp = 0;
            }
            Tree::Read => {
                *self = Tree::Field {
                    origins: vec![origin],
                    read: true,
                    at: None,
                    stamp: 0,
                }
            }
            Tree::ReadAt(m) => {
                let at = Some(m.clone());
                *self = Tree::Field {
                    origins: vec![origin],
                    read: true,
                    at,
                    stamp: 0,
                }
            }
            _ => self.start(origin),
        }
    }

    /// Marks a field's newest origin as given by record `n` ([`Provenance::records`]).
    pub(crate) fn stamp(&mut self, n: u32) {
        if let Tree::Field { stamp, .. } = self {
            *stamp = n;
        }
    }

    /// Every origin recorded at or under this node.
    pub(crate) fn for_each_origin_mut(&mut self, f: &mut dyn FnMut(&mut Origin)) {
        match self {
            Tree::Empty | Tree::Read | Tree::ReadAt(_) => {}
            Tree::Field { origins, .. } => origins.iter_mut().for_each(&mut *f),
            Tree::Map { keys, rest } => {
                keys.values_mut().for_each(|t| t.for_each_origin_mut(f));
                rest.for_each_origin_mut(f);
            }
            Tree::Seq { items, rest } => {
                items.iter_mut().for_each(|t| t.for_each_origin_mut(f));
                rest.for_each_origin_mut(f);
            }
        }
    }

    /// A field whose chain starts with `origin` (a new field).
    pub(crate) fn start(&mut self, origin: Origin) {
        *self = Tree::Field {
            origins: vec![origin],
            read: false,
            at: None,
            stamp: 0,
        };
    }
}

impl Provenance {
    /// The chain of the field at `path` (a scalar, or an empty map or list); `None` when
    /// nothing is recorded there (or it is a map or list holding fields).
    pub(crate) fn field(&self, path: &[PathSeg]) -> Option<Chain<'_>> {
        self.tree.get(path).chain(self.read.as_ref())
    }

    /// Calls `f` with the path, value and chain of every field of `node` (the object this
    /// records) that has one, in document order.
    pub(crate) fn for_each_field(&self, node: &Node, f: &mut dyn FnMut(&str, &Node, Chain<'_>)) {
        fn go(
            node: &Node,
            t: &Tree,
            read: Option<&Read>,
            path: &mut String,
            f: &mut dyn FnMut(&str, &Node, Chain<'_>),
        ) {
            if matches!(t, Tree::Empty)
                || (matches!(t, Tree::Read | Tree::ReadAt(_)) && read.is_none())
            {
                return;
            }
            match node {
                Node::Map(m) if !m.is_empty() => {
                    for (k, v) in m.iter() {
                        let child = match t {
                            Tree::Map { keys, rest } => keys.get(k.as_str()).unwrap_or(rest),
                            Tree::Read => &Tree::Read,
                            Tree::ReadAt(_) => t,
                            _ => continue,
                        };
                        let len = path.len();
                        push_key(path, k);
                        go(v, child, read, path, f);
                        path.truncate(len);
                    }
                }
                Node::Seq(items) if !items.is_empty() => {
                    for (i, v) in items.iter().enumerate() {
                        let child = match t {
                            Tree::Seq { items, rest } => items.get(i).unwrap_or(rest),
                            Tree::Read => &Tree::Read,
                            Tree::ReadAt(_) => t,
                            _ => continue,
                        };
                        let len = path.len();
                        push_index(path, i);
                        go(v, child, read, path, f);
                        path.truncate(len);
                    }
                }
                _ => {
                    if let Some(c) = t.chain(read) {
                        f(path, node, c);
                    }
                }
            }
        }
        go(node, &self.tree, self.read.as_ref(), &mut String::new(), f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys are found alike while scanned and once indexed, and never kept twice.
    #[test]
    fn keys_found_past_the_scan() {
        let mut keys = Keys::default();
        for round in 0..2 {
            for i in 0..40 {
                let k = format!("k{i}");
                let t = keys
                    .get_or_insert_with(&k, || if i % 2 == 0 { Tree::Read } else { Tree::Empty });
                assert_eq!(matches!(t, Tree::Read), i % 2 == 0, "{k}, round {round}");
                let found = keys.get(&k).expect("just inserted");
                assert_eq!(matches!(found, Tree::Read), i % 2 == 0, "{k}");
            }
        }
        assert_eq!(keys.entries.len(), 40);
        assert!(keys.index.is_some(), "indexed past {KEYS_SCANNED} keys");
        assert!(keys.get("k40").is_none());
        assert_eq!(keys.values_mut().count(), 40);
    }

    /// A moved field's path in its document keeps the steps past the move.
    #[test]
    fn moved_paths() {
        let m = Moved {
            path: Arc::from("spec.c[0]"),
            depth: 3,
        };
        assert_eq!(
            m.doc_path("spec.c[2].env[1].value"),
            "spec.c[0].env[1].value"
        );
        assert_eq!(m.doc_path("spec.c[2]"), "spec.c[0]");
    }
}
