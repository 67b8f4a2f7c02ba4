//! Files parsed once for many renders: a review's two revisions and all its overlays, or the
//! overlays of one `ply render DIR DIR…` run, share a [`Shared`] store, so a resource file that
//! holds the same bytes at the same path (a base shared by overlays, or a file the change did
//! not touch) is parsed by the first render that reads it and copied by the others (a copy
//! shares every map with the stored parse until the render changes it: `yaml::Map`). A render
//! still reads every file through its own `Fs` and checks the bytes it read against the stored
//! parse, so a store never changes what a render sees. kustomize has no counterpart: it reads
//! and parses per build (`api/internal/target`).

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use super::PathKey;
use super::parse::{ParsedFile, parse_file, text_of};
use super::patches::{Body, PatchFile, parse_patch_text};
use crate::diag::{Error, Result, Warnings};
use crate::fasthash::{FastHasher, FastMap, FastSet};
use crate::fs::{Fs, Restrictor};
use crate::kustomization::{Loaded, load};
use crate::resource::{Gvk, Resource};
use crate::schema::Schema;
use crate::source::SourceFile;
use crate::yaml::limits::ReaderLimits;

/// A file as one render found it: where, how it is read (`tag`: quoted or not, under which
/// name), and a hash and the length of its bytes (the bytes themselves are compared on a hit).
#[derive(Clone, PartialEq, Eq, Hash)]
struct FileKey {
    path: PathKey,
    tag: String,
    hash: u64,
    len: usize,
}

/// One kind of parse, by file: `None` when the first render that made it failed (later renders
/// make it again to get their own error).
struct Store<T> {
    slots: Mutex<FastMap<FileKey, Arc<OnceLock<Option<T>>>>>,
}

impl<T> Default for Store<T> {
    fn default() -> Self {
        Store {
            slots: Mutex::new(FastMap::default()),
        }
    }
}

impl<T> Store<T> {
    fn len(&self) -> usize {
        self.slots.lock().map(|m| m.len()).unwrap_or(0)
    }
}

impl<T: Clone> Store<T> {
    /// What `make` makes of `bytes`, read at `path` and read as `tag`: made here when no
    /// render made it of these bytes before, the earlier value otherwise. `text` gives the
    /// text a value was made of, to tell a hash that merely collides.
    fn get<E>(
        &self,
        path: &Path,
        tag: String,
        bytes: Vec<u8>,
        make: impl Fn(Vec<u8>) -> std::result::Result<T, E>,
        text: impl Fn(&T) -> &str,
    ) -> std::result::Result<T, E> {
        let key = FileKey {
            path: super::key(path).to_vec(),
            tag,
            hash: hash(&bytes),
            len: bytes.len(),
        };
        let slot = match self.slots.lock() {
            Ok(mut slots) => Arc::clone(slots.entry(key).or_default()),
            // A render that panicked holding the lock (a bug): make it alone.
            Err(_) => return make(bytes),
        };
        let mut unread = Some(bytes);
        let mut own = None;
        let stored = slot.get_or_init(|| {
            let made = make(unread.take()?);
            let kept = made.as_ref().ok().cloned();
            own = Some(made);
            kept
        });
        if let Some(made) = own {
            return made;
        }
        // The closure did not run, so the bytes are still here.
        let bytes = unread.unwrap_or_default();
        match stored {
            Some(value) if text(value).as_bytes() == bytes.as_slice() => Ok(value.clone()),
            _ => make(bytes),
        }
    }
}

/// Parsed files shared by the renders of one process (pass it in
/// [`super::RenderOptions::shared`]): resource files, kustomizations and patch files.
/// Thread-safe: two renders that reach the same file at once make it once, the second waiting
/// for the first.
#[derive(Default)]
pub struct Shared {
    resources: Store<(Arc<SourceFile>, Arc<Vec<Resource>>)>,
    kustomizations: Store<(Arc<Loaded>, Vec<String>)>,
    patches: Store<(Arc<SourceFile>, Body)>,
    /// The built-in schema, made once for all the renders (each render made its own: 0.27M
    /// instructions, 600 times in a review of 300 overlays).
    builtin_schema: OnceLock<Arc<Schema>>,
    /// Its kinds alone ([`Schema::builtin_kinds`]), made once too.
    builtin_kinds: OnceLock<Arc<FastSet<Gvk>>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("resources", &self.resources.len())
            .field("kustomizations", &self.kustomizations.len())
            .field("patches", &self.patches.len())
            .finish()
    }
}

impl Shared {
    /// The built-in schema's kinds ([`Schema::builtin_kinds`]), made by the first render that
    /// asks.
    pub(super) fn builtin_kinds(&self) -> Arc<FastSet<Gvk>> {
        Arc::clone(
            self.builtin_kinds
                .get_or_init(|| Arc::new(Schema::builtin_kinds())),
        )
    }

    /// The built-in schema ([`Schema::builtin`]), made by the first render that asks.
    pub(super) fn builtin_schema(&self) -> Arc<Schema> {
        Arc::clone(
            self.builtin_schema
                .get_or_init(|| Arc::new(Schema::builtin())),
        )
    }

    /// The resources of the file at the canonical `path`, whose bytes are `bytes`, as
    /// [`super::parse::parse_file`] makes them (`quoted`: whether
    /// diagnostics may print its lines). One store serves the renders of one command, so of
    /// one set of reader `limits`.
    pub(super) fn resources(
        &self,
        path: &Path,
        quoted: bool,
        bytes: Vec<u8>,
        limits: ReaderLimits,
    ) -> ParsedFile {
        let tag = if quoted { "" } else { "unquoted" };
        let (file, docs) = self.resources.get(
            path,
            tag.to_string(),
            bytes,
            |bytes| {
                let (file, mut docs) = parse_file(path, quoted, bytes, limits)?;
                // Every render copies them: frozen, a copy is one reference count per
                // document, and a render copies only the maps it changes.
                docs.iter_mut().for_each(|r| r.node.freeze());
                Ok::<_, Error>((file, Arc::new(docs)))
            },
            |(file, _)| &file.text,
        )?;
        Ok((file, docs.as_ref().clone()))
    }

    /// The kustomization of `dir` from the bytes of its file at `path`
    /// ([`load::decode_loaded`]); its warnings go to `warnings` at every render.
    pub(super) fn kustomization(
        &self,
        dir: &Path,
        path: &Path,
        outside: bool,
        bytes: Vec<u8>,
        warnings: &mut Warnings,
    ) -> Result<Arc<Loaded>> {
        let tag = if outside { "outside" } else { "" };
        let (loaded, said) = self.kustomizations.get(
            path,
            format!("{tag}\0{}", dir.display()),
            bytes,
            |bytes| {
                let mut own = Warnings::default();
                let loaded = load::decode_loaded(dir, path, bytes, outside, &mut own)?;
                Ok::<_, Error>((Arc::new(loaded), own.messages().to_vec()))
            },
            |(loaded, _)| &loaded.file.text,
        )?;
        for w in said {
            warnings.warn(w);
        }
        Ok(loaded)
    }

    /// A patch file at `target` (as joined), canonical `canonical`, named `source` in
    /// messages: its text and, when it parses, its patch.
    pub(super) fn patch(
        &self,
        target: &Path,
        canonical: &Path,
        source: &str,
        bytes: Vec<u8>,
    ) -> PatchFile {
        let made = self.patches.get(
            canonical,
            format!("{source}\0{}", target.display()),
            bytes,
            |bytes| {
                let file = SourceFile::new(target, text_of(bytes));
                match parse_patch_text(&file.text, Some(&file), source) {
                    Ok(mut body) => {
                        match &mut body {
                            Body::Smp(docs) => docs.iter_mut().for_each(|(n, _)| n.freeze()),
                            Body::Json(ops) => ops.freeze(),
                            Body::Nothing => {}
                        }
                        Ok((file, body))
                    }
                    Err(_) => Err(file),
                }
            },
            |(file, _)| &file.text,
        );
        match made {
            Ok((file, body)) => PatchFile {
                file,
                parsed: Some((source.to_string(), Ok(body))),
            },
            // The error is made again where the patch is used, from the text.
            Err(file) => PatchFile { file, parsed: None },
        }
    }
}

/// The kustomization in `dir` ([`load::load`]), through `shared` when there is one.
pub fn load_kustomization(
    fs: &dyn Fs,
    dir: &Path,
    restrictor: Restrictor,
    shared: Option<&Shared>,
    warnings: &mut Warnings,
) -> Result<Arc<Loaded>> {
    let Some(shared) = shared else {
        return load::load(fs, dir, restrictor, warnings).map(Arc::new);
    };
    let (path, outside) = load::locate_file(fs, dir, restrictor)?;
    let bytes = fs.read(&path).map_err(|e| Error::io(&path, &e))?;
    shared.kustomization(dir, &path, outside, bytes, warnings)
}

fn hash(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = FastHasher::default();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";

    #[test]
    fn the_second_render_gets_the_first_parse_and_other_bytes_parse_anew() {
        let shared = Shared::default();
        let path = Path::new("/r/cm.yaml");
        let (f1, d1) = shared
            .resources(path, true, CM.as_bytes().to_vec(), ReaderLimits::DEFAULT)
            .unwrap();
        let (f2, d2) = shared
            .resources(path, true, CM.as_bytes().to_vec(), ReaderLimits::DEFAULT)
            .unwrap();
        assert!(Arc::ptr_eq(&f1, &f2), "the same bytes share one parse");
        assert_eq!(d1.len(), 1);
        assert_eq!(
            crate::yaml::emit::emit_documents([&d1[0].node], Default::default()),
            crate::yaml::emit::emit_documents([&d2[0].node], Default::default())
        );
        let other = CM.replace("name: a", "name: b");
        let (f3, d3) = shared
            .resources(path, true, other.into_bytes(), ReaderLimits::DEFAULT)
            .unwrap();
        assert!(!Arc::ptr_eq(&f1, &f3));
        assert!(
            crate::yaml::emit::emit_documents([&d3[0].node], Default::default())
                .contains("name: b")
        );
        // Not quoted is another file.
        let (f4, _) = shared
            .resources(path, false, CM.as_bytes().to_vec(), ReaderLimits::DEFAULT)
            .unwrap();
        assert_eq!(f4.quote, crate::source::Quote::Never);
    }

    #[test]
    fn an_error_is_every_render_s_own() {
        let shared = Shared::default();
        let path = Path::new("/r/bad.yaml");
        for _ in 0..2 {
            let e = shared
                .resources(path, true, b"a: [\n".to_vec(), ReaderLimits::DEFAULT)
                .unwrap_err();
            assert!(e.to_string().contains("bad.yaml") || format!("{e:?}").contains("bad.yaml"));
        }
    }

    #[test]
    fn a_shared_kustomization_says_its_warnings_at_every_render() {
        let mut fs = crate::fs::MemFs::new();
        fs.file(
            "/r/kustomization.yaml",
            "commonLabels:\n  a: b\ncommonLabels:\n  a: c\n",
        );
        let shared = Shared::default();
        let dir = Path::new("/r");
        let mut said = Vec::new();
        for _ in 0..2 {
            let mut warnings = Warnings::default();
            let loaded =
                load_kustomization(&fs, dir, Restrictor::RootOnly, Some(&shared), &mut warnings)
                    .unwrap();
            assert_eq!(loaded.dir, dir);
            said.push(warnings.messages().to_vec());
        }
        assert!(!said[0].is_empty(), "a repeated key warns");
        assert_eq!(said[0], said[1]);
        let mut alone = Warnings::default();
        load_kustomization(&fs, dir, Restrictor::RootOnly, None, &mut alone).unwrap();
        assert_eq!(alone.messages(), said[0].as_slice());
    }
}
