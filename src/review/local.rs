//! An overlay's local references, walked without rendering: every kustomization of its graph
//! loaded (nothing built), each local path it names noted, and each one that names nothing
//! made into the diagnostic a render gives for it. Remote bases and files are stepped over,
//! so the walk still sees the local references of an overlay whose remote bases are not in
//! the cache — what the review checks at both sides when neither renders (a local directory
//! the change removed breaks the overlay however its remote bases fare: kubectl, which
//! fetches them, fails at the head on the missing directory).

use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Warnings};
use crate::fasthash::FastSet;
use crate::fs::{FileKind, Fs, Restrictor, join};
use crate::kustomization::Loaded;
use crate::kustomization::load::FILE_NAMES;
use crate::kustomization::{Ref, RefKind};
use crate::source::display_path;
use crate::yaml::path::PathSeg;

/// What the walk found.
pub(crate) struct Local {
    /// Every local path the graph names: kustomization files (and the names probed for them),
    /// the root's `ply.lock`, and what each kustomization references.
    pub paths: Vec<PathBuf>,
    /// Local references that name nothing, each as the error a render gives.
    pub missing: Vec<Error>,
    /// Whether every reference was seen: no kustomization failed to load, and no plugin or
    /// helm chart reads files the walk cannot know.
    pub complete: bool,
}

/// Walks the kustomization graph from `dir`, through `fs`.
pub(crate) fn walk(fs: &dyn Fs, dir: &Path, restrictor: Restrictor) -> Local {
    let mut local = Local {
        paths: vec![dir.to_path_buf(), dir.join(crate::remote::lock::LOCK_FILE)],
        missing: Vec::new(),
        complete: true,
    };
    let mut seen: FastSet<PathBuf> = FastSet::default();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        local.paths.extend(FILE_NAMES.iter().map(|n| dir.join(n)));
        let loaded = match crate::kustomization::load::load(
            fs,
            &dir,
            restrictor,
            &mut Warnings::default(),
        ) {
            Ok(l) => l,
            Err(_) => {
                local.complete = false;
                continue;
            }
        };
        for r in loaded.kustomization.refs() {
            local.reference(fs, &loaded, &r, &mut todo);
        }
    }
    local
}

impl Local {
    /// One reference of `loaded`: noted, its directory walked, or its absence recorded.
    fn reference(&mut self, fs: &dyn Fs, loaded: &Loaded, r: &Ref<'_>, todo: &mut Vec<PathBuf>) {
        let text = r.text.trim();
        let remote = crate::remote::is_remote(text)
            || text.starts_with("http://")
            || text.starts_with("https://");
        if text.is_empty() || remote {
            return;
        }
        let path = match r.kind {
            RefKind::GeneratorFile => match crate::generate::kv::parse_file_source(text) {
                Ok((_, path)) => path,
                Err(_) => return,
            },
            // An inline patch.
            RefKind::StrategicMergePatch if text.contains('\n') || text.contains(": ") => {
                return;
            }
            // Plugin configurations may be inline YAML; a helm chart reads what only helm
            // knows.
            RefKind::Generator | RefKind::Transformer | RefKind::Validator | RefKind::Helm => {
                self.complete = false;
                let target = join(&loaded.dir, text);
                match fs.kind(&target) {
                    Some(FileKind::Dir) => todo.push(target),
                    Some(FileKind::File) => self.paths.push(target),
                    None => {}
                }
                return;
            }
            _ => text.to_string(),
        };
        let target = join(&loaded.dir, &path);
        self.paths.push(target.clone());
        match (fs.kind(&target), r.kind) {
            (Some(FileKind::Dir), RefKind::Resource | RefKind::Component) => {
                if let Ok(canonical) = fs.canonicalize(&target) {
                    todo.push(canonical);
                }
            }
            (Some(_), _) => {}
            (None, _) => self.missing.push(missing(loaded, r, &path, &target)),
        }
    }
}

/// The error for a local reference that names nothing, at its entry in the kustomization.
fn missing(loaded: &Loaded, r: &Ref<'_>, path: &str, target: &Path) -> Error {
    let at = loaded.key_location(&[PathSeg::Key(r.key.to_string()), PathSeg::Index(r.index)]);
    Error::new(
        ErrorKind::NotFound,
        format!(
            "'{path}' named under `{}` does not exist: no file or directory at '{}'",
            r.key,
            display_path(target)
        ),
    )
    .at(at)
    .label("not found")
}
