//! Reading ahead: a second thread that walks the kustomization graph a render builds (its
//! `resources:` and `components:`, depth first) and reads and parses kustomizations, resource
//! files and patch files, and reads the files generators name, before the build asks for
//! them. The build itself stays on one thread
//! and in its order: for each item it either takes what the reader made (the same value, error
//! or warnings it would have made itself) or, when the reader has not got there, claims the
//! item and does it itself, and the reader skips it. So the output, the errors and their order
//! never depend on which thread did the work.
//!
//! The reader walks from the last entry backwards while the build goes forwards, so they meet
//! once and rarely wait for each other; it ends there. (Walking forwards just ahead of the build
//! was slower: the build kept waiting for the item the reader was at, and both threads
//! allocated and freed in the same malloc arena at the same time.)
//!
//! The reader only reads what the build may read: kustomization directories, and resource,
//! patch and generator files the load restrictor allows. It stops when the build ends (`stop`), after its
//! current item. kustomize has no counterpart: it reads as it builds (`api/internal/target`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::accumulate::is_remote;
// `plugins.rs` names `text_of` through here.
pub(super) use super::parse::text_of;
use super::parse::{ParsedFile, parse_file};
use super::patches::{PatchFile, parse_patch_text, source_name};
use super::shared::{Shared, load_kustomization};
use super::{PathKey, RenderOptions, key};
use crate::diag::{Error, Result, Warnings};
use crate::fasthash::{FastMap, FastSet};
use crate::fs::{FileKind, Fs, Restrictor, check_restriction_shown, join};
use crate::kustomization::{Loaded, RefKind};
use crate::source::SourceFile;
use crate::yaml::limits::ReaderLimits;

/// A kustomization as [`load`] gave it, with the warnings it raised.
pub(super) type LoadedAhead = (Result<Arc<Loaded>>, Vec<String>);

/// What the reader and the build share.
#[derive(Default)]
pub(super) struct Ahead {
    state: Mutex<State>,
    /// Signalled when the reader finishes an item the build waits for.
    done: Condvar,
    stop: AtomicBool,
}

#[derive(Default)]
struct State {
    items: FastMap<Item, Slot>,
    /// The build waits for the reader (on `done`).
    waiting: bool,
    /// The reader has ended; an item it left busy (it panicked) is the build's.
    gone: bool,
}

/// A kustomization directory, a resource file, a patch file or a generator's file, by
/// canonical path.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Item {
    Kustomization(PathKey),
    File(PathKey),
    Patch(PathKey),
    Bytes(PathKey),
}

enum Slot {
    /// The build does (or did) this one itself.
    Claimed,
    /// The reader is at it.
    Busy,
    Kustomization(LoadedAhead),
    File(ParsedFile),
    /// `None` when the reader could not read it: the build reads it and reports why not.
    Patch(Option<PatchFile>),
    /// `None` as for `Patch`.
    Bytes(Option<Vec<u8>>),
}

impl Ahead {
    /// Tells the reader to stop after its current item.
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// The kustomization of the canonical directory `dir`, if the reader loaded it; `None`
    /// when the build must load it itself (and from now on the reader leaves it alone).
    pub(super) fn take_kustomization(&self, dir: &Path) -> Option<LoadedAhead> {
        match self.take(Item::Kustomization(key(dir).to_vec()))? {
            Slot::Kustomization(loaded) => Some(loaded),
            _ => None,
        }
    }

    /// The resource file at the canonical path `path`, if the reader parsed it; `None` when
    /// the build must read it itself.
    pub(super) fn take_file(&self, path: &Path) -> Option<ParsedFile> {
        match self.take(Item::File(key(path).to_vec()))? {
            Slot::File(parsed) => Some(parsed),
            _ => None,
        }
    }

    /// The patch file at the canonical path `path`, if the reader read and parsed it; `None`
    /// when the build must read it itself.
    pub(super) fn take_patch(&self, path: &Path) -> Option<PatchFile> {
        match self.take(Item::Patch(key(path).to_vec()))? {
            Slot::Patch(patch) => patch,
            _ => None,
        }
    }

    /// The bytes of the generator file at the canonical path `path`, if the reader read them;
    /// `None` when the build must read it itself.
    pub(super) fn take_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        match self.take(Item::Bytes(key(path).to_vec()))? {
            Slot::Bytes(bytes) => bytes,
            _ => None,
        }
    }

    /// The reader's result for `item`, waiting while it is at it; claims the item for the
    /// build when the reader has not started it.
    fn take(&self, item: Item) -> Option<Slot> {
        let mut state = self.lock();
        loop {
            match state.items.get(&item) {
                None => {
                    state.items.insert(item, Slot::Claimed);
                    return None;
                }
                Some(Slot::Claimed) => return None,
                Some(Slot::Busy) if state.gone => {
                    state.items.insert(item, Slot::Claimed);
                    return None;
                }
                Some(Slot::Busy) => {
                    state.waiting = true;
                    state = match self.done.wait(state) {
                        Ok(guard) => guard,
                        // The reader panicked holding the lock: build it here.
                        Err(_) => return None,
                    };
                    state.waiting = false;
                }
                Some(_) => return state.items.insert(item, Slot::Claimed),
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Claims `item` for the reader; false when the build (or the reader, earlier) has it.
    fn claim(&self, item: &Item) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return false;
        }
        let mut state = self.lock();
        if state.items.contains_key(item) {
            return false;
        }
        state.items.insert(item.clone(), Slot::Busy);
        true
    }

    /// Hands the reader's result for `item` to the build.
    fn finish(&self, item: Item, slot: Slot) {
        let mut state = self.lock();
        state.items.insert(item, slot);
        if state.waiting {
            self.done.notify_all();
        }
    }

    /// The reader: walks the graph below the root kustomization `loaded` (in `root`,
    /// canonical), which the build has loaded, from its last entry backwards until it meets
    /// what the build has done.
    pub(super) fn read(&self, fs: &dyn Fs, root: &Path, loaded: &Loaded, opts: &RenderOptions) {
        let _gone = Gone(self);
        let mut reader = Reader {
            ahead: self,
            fs,
            restrictor: opts.load_restrictor,
            limits: opts.limits.reader,
            shared: opts.shared.as_deref(),
            seen: FastSet::default(),
        };
        reader.seen.insert(Item::Kustomization(key(root).to_vec()));
        reader.entries(root, loaded);
    }
}

/// Tells the build that the reader has ended, however it ended.
struct Gone<'a>(&'a Ahead);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.0.lock().gone = true;
        self.0.done.notify_all();
    }
}

struct Reader<'a> {
    ahead: &'a Ahead,
    fs: &'a dyn Fs,
    restrictor: Restrictor,
    /// The render's reader limits, for resource files.
    limits: ReaderLimits,
    /// Parses shared with other renders.
    shared: Option<&'a Shared>,
    /// Directories walked, so that a cycle (an error the build reports) ends here too, and
    /// files read: a file listed twice is no sign that the build is there.
    seen: FastSet<Item>,
}

impl Reader<'_> {
    /// Loads the kustomization in `dir` and walks what it lists. False when the build (or the
    /// reader, earlier) has it: the walk ends there.
    fn kustomization(&mut self, dir: &Path) -> bool {
        let item = Item::Kustomization(key(dir).to_vec());
        if !self.seen.insert(item.clone()) {
            return true;
        }
        if !self.ahead.claim(&item) {
            return false;
        }
        let mut warnings = Warnings::default();
        let loaded = load_kustomization(self.fs, dir, self.restrictor, self.shared, &mut warnings);
        let warnings = warnings.messages().to_vec();
        let walk = loaded.as_ref().ok().map(Arc::clone);
        self.ahead
            .finish(item, Slot::Kustomization((loaded, warnings)));
        match walk {
            Some(loaded) => self.entries(dir, &loaded),
            None => true,
        }
    }

    /// The entries of the kustomization `loaded` (in `dir`), last first: the build takes them
    /// first to last, so the two meet once, somewhere in the middle. False when they met.
    fn entries(&mut self, dir: &Path, loaded: &Loaded) -> bool {
        // The kustomization's references (`kustomization::refs`) are in the order the build
        // reads them: resources, the generators' files, components, then the patches
        // (strategic merge files, `patches`, JSON 6902). Walked backwards, of those kinds.
        for r in loaded.kustomization.refs().rev() {
            let parsed;
            let (entry, item) = match r.kind {
                RefKind::PatchFile { inline } if inline || r.text.is_empty() => continue,
                RefKind::PatchFile { .. } | RefKind::StrategicMergePatch => (r.text, Walked::Patch),
                RefKind::Component => (r.text, Walked::Entry { files: false }),
                RefKind::GeneratorFile => match crate::generate::kv::parse_file_source(r.text) {
                    Ok((_, path)) if !path.is_empty() => {
                        parsed = path;
                        (parsed.as_str(), Walked::Bytes)
                    }
                    _ => continue,
                },
                RefKind::EnvFile if r.text.is_empty() => continue,
                RefKind::EnvFile => (r.text, Walked::Bytes),
                RefKind::Resource => (r.text, Walked::Entry { files: true }),
                // Read by the build alone (plugins and helm are not read ahead).
                RefKind::Crds
                | RefKind::Configurations
                | RefKind::OpenApi
                | RefKind::Replacements
                | RefKind::Generator
                | RefKind::Transformer
                | RefKind::Validator
                | RefKind::Helm => continue,
            };
            if self.ahead.stop.load(Ordering::Relaxed) {
                return false;
            }
            let go_on = match item {
                Walked::Patch => self.patch(dir, entry),
                Walked::Entry { files } => self.entry(dir, entry, files),
                Walked::Bytes => self.bytes(dir, entry),
            };
            if !go_on {
                return false;
            }
        }
        true
    }

    /// One entry of the kustomization in `dir`: a file (under `resources:` only) or a
    /// directory. Anything the build would refuse is left for it to refuse. False when the
    /// build has it already.
    fn entry(&mut self, dir: &Path, entry: &str, files: bool) -> bool {
        if entry.trim().is_empty() || is_remote(entry) {
            return true;
        }
        let target = join(dir, entry);
        let kind = self.fs.kind(&target);
        let Ok(canonical) = self.fs.canonicalize(&target) else {
            return true;
        };
        match kind {
            Some(FileKind::File) if files => self.file(dir, entry, canonical),
            Some(FileKind::Dir) if !Path::new(entry).is_absolute() => {
                self.kustomization(&canonical)
            }
            _ => true,
        }
    }

    /// Reads and parses a resource file; false when the build has it already.
    fn file(&mut self, dir: &Path, entry: &str, canonical: PathBuf) -> bool {
        let item = Item::File(key(&canonical).to_vec());
        match self.next(dir, entry, &canonical, &item) {
            Next::Read => {
                let parsed = read_resources(self.fs, canonical, dir, self.shared, self.limits);
                self.ahead.finish(item, Slot::File(parsed));
                true
            }
            Next::Skip => true,
            Next::Met => false,
        }
    }

    /// Reads and parses a patch file; false when the build has it already. The file is named
    /// by the path as joined, as the build names it (`Builder::patch_reader`).
    fn patch(&mut self, dir: &Path, entry: &str) -> bool {
        let shared = self.shared;
        self.named_file(dir, entry, Item::Patch, |fs, target, canonical| {
            let patch = fs.read(canonical).ok().map(|bytes| {
                if let Some(shared) = shared {
                    let source = source_name(Some(entry), None);
                    return shared.patch(&target, canonical, &source, bytes);
                }
                let file = SourceFile::new(target, text_of(bytes));
                let source = source_name(Some(entry), None);
                let body = parse_patch_text(&file.text, Some(&file), &source);
                PatchFile {
                    file,
                    parsed: Some((source, body)),
                }
            });
            Slot::Patch(patch)
        })
    }

    /// Reads a file a generator names (`files:`, `envs:`); false when the build has it
    /// already.
    fn bytes(&mut self, dir: &Path, entry: &str) -> bool {
        self.named_file(dir, entry, Item::Bytes, |fs, _, canonical| {
            Slot::Bytes(fs.read(canonical).ok())
        })
    }

    /// A file named by the kustomization in `dir` (not a resource): when it is a file the
    /// reader may read and nobody has claimed, `read` (given the joined and the canonical
    /// path) makes its slot, kept as `item`. False when the build has it already.
    fn named_file(
        &mut self,
        dir: &Path,
        entry: &str,
        item: fn(PathKey) -> Item,
        read: impl FnOnce(&dyn Fs, PathBuf, &Path) -> Slot,
    ) -> bool {
        let target = join(dir, entry);
        if self.fs.kind(&target) != Some(FileKind::File) {
            return true;
        }
        let Ok(canonical) = self.fs.canonicalize(&target) else {
            return true;
        };
        let item = item(key(&canonical).to_vec());
        match self.next(dir, entry, &canonical, &item) {
            Next::Read => {
                let slot = read(self.fs, target, &canonical);
                self.ahead.finish(item, slot);
                true
            }
            Next::Skip => true,
            Next::Met => false,
        }
    }

    /// Whether to read the file `entry` of the kustomization in `dir`, at `canonical`, as
    /// `item`; claims it when so.
    fn next(&mut self, dir: &Path, entry: &str, canonical: &Path, item: &Item) -> Next {
        if check_restriction_shown(self.restrictor, dir, canonical, entry).is_err()
            || !self.seen.insert(item.clone())
        {
            // Refused (the build says why), or listed twice.
            return Next::Skip;
        }
        if self.ahead.claim(item) {
            Next::Read
        } else {
            Next::Met
        }
    }
}

/// What the reader does with a file.
enum Next {
    Read,
    Skip,
    /// The build has it: the two have met.
    Met,
}

/// What the reader does with a reference it reads ahead.
enum Walked {
    /// A patch file, read and parsed.
    Patch,
    /// A `resources:` (`files`) or `components:` entry: a file or a kustomization directory.
    Entry { files: bool },
    /// A generator's file, read.
    Bytes,
}

/// Reads and parses the resource file at the canonical path `path`, listed by the
/// kustomization rooted at `root` (canonical). A file outside it (read under
/// `LoadRestrictionsNone`) is named in errors but never quoted. (A file listed by two
/// kustomizations, inside one and outside the other, is quoted as the first reading decides.)
pub(super) fn read_resources(
    fs: &dyn Fs,
    path: PathBuf,
    root: &Path,
    shared: Option<&Shared>,
    limits: ReaderLimits,
) -> ParsedFile {
    let bytes = fs.read(&path).map_err(|e| Error::io(&path, &e))?;
    if let Some(shared) = shared {
        return shared.resources(&path, path.starts_with(root), bytes, limits);
    }
    parse_file(&path, path.starts_with(root), bytes, limits)
}
