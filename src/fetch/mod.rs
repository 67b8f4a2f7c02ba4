//! `ply fetch`: walks the kustomization graph as a render does, and clones every remote base
//! it meets with the system `git` (kustomize's `ClonerUsingGitExec`,
//! `api/internal/git/cloner.go`: init, fetch `--depth=1` of the ref, checkout) and downloads
//! every HTTP(S) file (through `http`) into the content-addressed cache, then writes
//! `ply.lock`. The one module that uses the network and runs a program; it writes only the
//! cache (the lock goes through `output`).
//! git runs with hooks off, only the https, ssh and file protocols, no prompt, and a timeout on
//! every command; submodules are cloned only when the URL says `submodules=true`.
//! A room above the renderer (it renders to find the remote bases); `remote/` below keeps
//! what the file systems need of remotes (URL forms, the lock), and `fs::remote` reads the
//! cache this fills.

pub(crate) mod http;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use self::http::{Failure, Limits};
use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fs::Fs;
use crate::fs::remote::{
    RemoteTree, RemoteTrees, bytes_hash, cached_file, file_path, read_lock, repo_spec, root_in,
    tree_dir, tree_hash, verify,
};
use crate::remote::RepoSpec;
use crate::remote::lock::{LOCK_FILE, Lock, Pin};
use crate::remote::url::redact;
use crate::source::display_path;

/// What `ply fetch` is asked to do.
#[derive(Clone, Debug)]
pub(crate) struct FetchOptions {
    /// The cache directory.
    pub cache: PathBuf,
    /// Resolve every ref again (`--update`) instead of keeping the locked commits.
    pub update: bool,
    /// How the walk renders (load restrictor, and the rest of a render's options).
    pub render: crate::render::RenderOptions,
    /// The bounds of each HTTP(S) file download.
    pub http: Limits,
    /// Write (or rewrite) the root's `ply.lock` (`--write-lock`; `--update` implies it).
    pub write_lock: bool,
}

/// What happened to one URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Cloned at its ref (new, or `--update`).
    Resolved,
    /// Its locked commit was cloned again (the cache did not have it).
    Refetched,
    /// Its locked tree was in the cache.
    Cached,
}

/// What `ply fetch` did.
#[derive(Clone, Debug)]
pub(crate) struct FetchReport {
    pub lock_path: PathBuf,
    /// Every URL of the closure, with its pin and what was done.
    pub urls: Vec<(String, Pin, Outcome)>,
    /// Every HTTP(S) file (its URL without credentials), with its hash and what was done.
    pub files: Vec<(String, String, Outcome)>,
    /// Whether the lock file's text changed.
    pub lock_changed: bool,
}

impl FetchReport {
    /// The report of one lock from what a [`Fetcher`] did.
    fn of(
        lock_path: PathBuf,
        done: BTreeMap<String, (Pin, Outcome)>,
        files: BTreeMap<String, (String, Outcome)>,
        lock_changed: bool,
    ) -> FetchReport {
        FetchReport {
            lock_path,
            urls: done
                .into_iter()
                .map(|(url, (pin, outcome))| (url, pin, outcome))
                .collect(),
            files: files
                .into_iter()
                .map(|(url, (hash, outcome))| (url, hash, outcome))
                .collect(),
            lock_changed,
        }
    }
}

/// Fetches every remote base of the kustomization in `dir` and writes `dir/ply.lock`.
pub(crate) fn fetch(
    dir: &Path,
    opts: &FetchOptions,
    warnings: &mut Warnings,
) -> Result<FetchReport> {
    let root = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, &e))?;
    let lock_path = root.join(LOCK_FILE);
    let old = read_lock(&crate::fs::DiskFs, &lock_path)?;
    std::fs::create_dir_all(&opts.cache).map_err(|e| Error::io(&opts.cache, &e))?;
    let cache = std::fs::canonicalize(&opts.cache).map_err(|e| Error::io(&opts.cache, &e))?;
    let fetcher = Fetcher {
        cache,
        old: old.clone().unwrap_or_default(),
        update: opts.update,
        http: opts.http,
        done: Mutex::new(BTreeMap::new()),
        files: Mutex::new(BTreeMap::new()),
        tried: Mutex::new(BTreeMap::new()),
        serial: AtomicUsize::new(0),
    };
    let render = opts.render.on_one_thread();
    crate::render::render_with_remotes(
        &crate::fs::DiskFs,
        &root,
        &render,
        Some(&fetcher),
        warnings,
    )?;
    let failed = || Error::new(ErrorKind::Remote, "fetching failed");
    let done = fetcher.done.into_inner().map_err(|_| failed())?;
    let files = fetcher.files.into_inner().map_err(|_| failed())?;
    let lock = Lock {
        pins: done
            .iter()
            .map(|(url, (pin, _))| (url.clone(), pin.clone()))
            .collect(),
        files: files
            .iter()
            .map(|(url, (hash, _))| (url.clone(), hash.clone()))
            .collect(),
    };
    let text = lock.to_text();
    let before = std::fs::read_to_string(&lock_path).ok();
    // No remote bases and no lock: nothing to pin, no file to write.
    let lock_changed = (opts.write_lock || opts.update)
        && before.as_deref() != Some(text.as_str())
        && !(old.is_none() && lock.pins.is_empty() && lock.files.is_empty());
    if lock_changed {
        crate::output::write_atomic(&lock_path, text.as_bytes())?;
    }
    Ok(FetchReport::of(lock_path, done, files, lock_changed))
}

/// Fetches into the cache what each of `locks` (a lock file's shown path, and the lock read
/// from it) pins, at the locked commits, checking the locked tree and file hashes: `ply fetch
/// --all` and `ply fetch --revision REF`. Nothing is rendered and no lock is written, so a lock
/// at a revision that is not checked out (read through a git `Fs`) is served as it is there.
/// Every lock pins its whole closure (docs/remote.md), so its pins are all a render of its root
/// reads. Errors name the lock; the first one stops the fetch.
pub(crate) fn fetch_pinned(
    locks: &[(PathBuf, Lock)],
    opts: &FetchOptions,
) -> Result<Vec<FetchReport>> {
    std::fs::create_dir_all(&opts.cache).map_err(|e| Error::io(&opts.cache, &e))?;
    let cache = std::fs::canonicalize(&opts.cache).map_err(|e| Error::io(&opts.cache, &e))?;
    let mut reports = Vec::new();
    for (lock_path, lock) in locks {
        let fetcher = Fetcher::keeping(lock.clone(), cache.clone(), opts.http);
        let in_lock = |e: Error| {
            let message = format!("{}: {}", display_path(lock_path), e.message);
            Error { message, ..e }
        };
        for url in lock.pins.keys() {
            let spec = repo_spec(url).map_err(in_lock)?;
            fetcher.tree_of(&spec, url).map_err(in_lock)?;
        }
        for url in lock.files.keys() {
            fetcher
                .file(&crate::fs::DiskFs, url, false)
                .map_err(in_lock)?;
        }
        let failed = || Error::new(ErrorKind::Remote, "fetching failed");
        let done = fetcher.done.into_inner().map_err(|_| failed())?;
        let files = fetcher.files.into_inner().map_err(|_| failed())?;
        reports.push(FetchReport::of(lock_path.clone(), done, files, false));
    }
    Ok(reports)
}

/// Fetches the remote bases and files of each root of `roots` that has no `ply.lock`, read
/// through `fs` (the working tree, or a revision's git file system), at the refs their URLs
/// name: the walk of `ply fetch DIR`, but no lock is written; each URL resolved is recorded in
/// the cache, where a render of a root without a lock finds it. A root that fails to render
/// for another reason than a remote base is a warning (the remote bases met before its
/// failure are fetched): `ply render` says what is wrong with it.
pub(crate) fn fetch_unlocked(
    fs: &dyn Fs,
    roots: &[PathBuf],
    opts: &FetchOptions,
    warnings: &mut Warnings,
) -> Result<Vec<FetchReport>> {
    std::fs::create_dir_all(&opts.cache).map_err(|e| Error::io(&opts.cache, &e))?;
    let cache = std::fs::canonicalize(&opts.cache).map_err(|e| Error::io(&opts.cache, &e))?;
    let render = opts.render.on_one_thread();
    let mut reports = Vec::new();
    for root in roots {
        let fetcher = Fetcher::keeping(Lock::default(), cache.clone(), opts.http);
        let mut quiet = Warnings::default();
        if let Err(e) =
            crate::render::render_with_remotes(fs, root, &render, Some(&fetcher), &mut quiet)
        {
            if matches!(e.kind, ErrorKind::Remote | ErrorKind::NotFetched) {
                return Err(e);
            }
            warnings.warn(format!(
                "{}: does not render ({}: {}); its remote bases met before that are fetched",
                display_path(root),
                e.kind.code(),
                e.message.lines().next().unwrap_or("")
            ));
        }
        let failed = || Error::new(ErrorKind::Remote, "fetching failed");
        let done = fetcher.done.into_inner().map_err(|_| failed())?;
        let files = fetcher.files.into_inner().map_err(|_| failed())?;
        if !done.is_empty() || !files.is_empty() {
            reports.push(FetchReport::of(root.join(LOCK_FILE), done, files, false));
        }
    }
    Ok(reports)
}

/// What [`fetch_pinned`] did, for stderr: one line per URL, then one per lock.
pub(crate) fn describe_pinned(reports: &[FetchReport], revision: Option<&str>) -> String {
    let mut out = String::new();
    for r in reports {
        out.push_str(&url_lines(r));
        let at = revision.map_or(String::new(), |rev| format!(" at {rev}"));
        out.push_str(&format!(
            "{}{at}: {} remote base{}, {} remote file{} in the cache\n",
            display_path(&r.lock_path),
            r.urls.len(),
            if r.urls.len() == 1 { "" } else { "s" },
            r.files.len(),
            if r.files.len() == 1 { "" } else { "s" },
        ));
    }
    out
}

/// What [`fetch_unlocked`] did, for stderr: one line per URL, then one per root.
pub(crate) fn describe_unlocked(reports: &[FetchReport], revision: Option<&str>) -> String {
    let mut out = String::new();
    for r in reports {
        out.push_str(&url_lines(r));
        let root = r.lock_path.parent().unwrap_or(&r.lock_path);
        let at = revision.map_or(String::new(), |rev| format!(" at {rev}"));
        out.push_str(&format!(
            "{}{at} (no ply.lock: at the refs its URLs name): {} remote base{}, {} remote file{} in the cache\n",
            display_path(root),
            r.urls.len(),
            if r.urls.len() == 1 { "" } else { "s" },
            r.files.len(),
            if r.files.len() == 1 { "" } else { "s" },
        ));
    }
    out
}

/// The [`RemoteTrees`] of `ply fetch`: locked trees from the cache when they are there, else
/// cloned.
#[derive(Debug)]
struct Fetcher {
    cache: PathBuf,
    old: Lock,
    update: bool,
    http: Limits,
    /// The URLs met so far.
    done: Mutex<BTreeMap<String, (Pin, Outcome)>>,
    /// The files met so far, by URL without credentials: their hash.
    files: Mutex<BTreeMap<String, (String, Outcome)>>,
    /// URLs that were downloaded as files first and failed (then cloned): what the server said.
    tried: Mutex<BTreeMap<String, String>>,
    /// Numbers the temporary clone directories.
    serial: AtomicUsize,
}

impl RemoteTrees for Fetcher {
    fn cache_dir(&self) -> Option<&Path> {
        Some(&self.cache)
    }

    fn file(&self, _fs: &dyn Fs, url: &str, maybe_repo: bool) -> Result<Option<Vec<u8>>> {
        let shown = redact(url);
        let mut files = self
            .files
            .lock()
            .map_err(|_| Error::new(ErrorKind::Remote, "fetching failed"))?;
        if let Some((hash, _)) = files.get(&shown)
            && let Some(bytes) = cached_file(&self.cache, hash, url)?
        {
            return Ok(Some(bytes));
        }
        // Already a repository (pinned as one, or cloned during this fetch).
        let repo_already = self.done.lock().is_ok_and(|d| d.contains_key(url))
            || (!self.update && self.old.pins.contains_key(url));
        if maybe_repo && repo_already {
            return Ok(None);
        }
        let locked = self.old.files.get(&shown).filter(|_| !self.update);
        let (hash, bytes, outcome) = match locked {
            Some(hash) => match cached_file(&self.cache, hash, url)? {
                Some(bytes) => (hash.clone(), bytes, Outcome::Cached),
                None => {
                    let bytes = self.download(url, &shown).map_err(|(_, e)| e)?;
                    let got = bytes_hash(&bytes);
                    if got != *hash {
                        return Err(Error::new(
                            ErrorKind::Remote,
                            format!("'{shown}' now serves a file hashing to {got}, the lock says {hash}"),
                        )
                        .help("the file changed on the server; check it, then `ply fetch --update` to pin what it serves now"));
                    }
                    self.store(&bytes, &got, url)?;
                    (got, bytes, Outcome::Refetched)
                }
            },
            None => {
                let bytes = match self.download(url, &shown) {
                    Ok(bytes) => bytes,
                    // kustomize clones a git-like URL it cannot download
                    // (`accumulateResources`).
                    Err((f @ (Failure::Status(..) | Failure::Unreachable(_)), _)) if maybe_repo => {
                        if let Ok(mut tried) = self.tried.lock() {
                            tried.insert(url.to_string(), f.to_string());
                        }
                        return Ok(None);
                    }
                    Err((_, e)) => return Err(e),
                };
                let hash = bytes_hash(&bytes);
                self.store(&bytes, &hash, url)?;
                let mut record = Lock::default();
                record.files.insert(shown.clone(), hash.clone());
                self.record(&shown, &record)?;
                (hash, bytes, Outcome::Resolved)
            }
        };
        files.insert(shown, (hash, outcome));
        Ok(Some(bytes))
    }

    fn tree(&self, _fs: &dyn Fs, url: &str) -> Result<RemoteTree> {
        let spec = repo_spec(url)?;
        // Downloaded as a file but not one of resources: a repository after all.
        if let Ok(mut files) = self.files.lock() {
            files.remove(&redact(url));
        }
        self.tree_of(&spec, url).map_err(|e| {
            // What the download of the URL said, when it was tried as a file first.
            let tried = self.tried.lock().ok().and_then(|t| t.get(url).cloned());
            match tried {
                Some(said) => {
                    let help = e.help.clone().unwrap_or_default();
                    e.help(format!("{help}\ndownloaded as a file first: {said}"))
                }
                None => e,
            }
        })
    }
}

impl Fetcher {
    /// A fetcher into `cache` that keeps what `old` pins (no `--update`).
    fn keeping(old: Lock, cache: PathBuf, http: Limits) -> Fetcher {
        Fetcher {
            cache,
            old,
            update: false,
            http,
            done: Mutex::new(BTreeMap::new()),
            files: Mutex::new(BTreeMap::new()),
            tried: Mutex::new(BTreeMap::new()),
            serial: AtomicUsize::new(0),
        }
    }

    /// [`RemoteTrees::tree`]: the locked tree from the cache, else a clone.
    fn tree_of(&self, spec: &RepoSpec, url: &str) -> Result<RemoteTree> {
        let mut done = self
            .done
            .lock()
            .map_err(|_| Error::new(ErrorKind::Remote, "fetching failed"))?;
        if let Some((pin, _)) = done.get(url) {
            return root_in(&tree_dir(&self.cache, &pin.tree), spec, url);
        }
        let locked = self.old.pins.get(url).filter(|_| !self.update);
        let (pin, outcome) = match locked {
            Some(pin) => {
                let dir = tree_dir(&self.cache, &pin.tree);
                if dir.is_dir() {
                    verify(&dir, &pin.tree, url)?;
                    (pin.clone(), Outcome::Cached)
                } else {
                    let got = self.clone_at(spec, url, &pin.commit)?;
                    if got.tree != pin.tree {
                        return Err(Error::new(
                            ErrorKind::Remote,
                            format!(
                                "'{url}': the locked commit {} now gives the tree {}, the lock says {}",
                                pin.commit, got.tree, pin.tree
                            ),
                        )
                        .help("the repository served different content for the same commit; check it, then `ply fetch --update` to pin what it serves now"));
                    }
                    (got, Outcome::Refetched)
                }
            }
            None => {
                let rev = if spec.git_ref.is_empty() {
                    "HEAD"
                } else {
                    spec.git_ref.as_str()
                };
                let pin = self.clone_at(spec, url, rev)?;
                let mut record = Lock::default();
                record.pins.insert(url.to_string(), pin.clone());
                self.record(url, &record)?;
                (pin, Outcome::Resolved)
            }
        };
        let tree = root_in(&tree_dir(&self.cache, &pin.tree), spec, url)?;
        done.insert(url.to_string(), (pin, outcome));
        Ok(tree)
    }
}

impl Fetcher {
    /// The bytes of the file `url` (shown as `shown`, without credentials) as the server gives
    /// them now: any failure is an error naming the URL.
    fn download(&self, url: &str, shown: &str) -> std::result::Result<Vec<u8>, (Failure, Error)> {
        http::get(url, &self.http).map_err(|f| {
            let said = f.to_string().replace(url, shown);
            // The user part may appear alone in a message (a parsed URL, a proxy's words).
            let said = match url.split_once("://").and_then(|(_, r)| r.split_once('@')) {
                Some((user, _)) if !user.contains('/') => said.replace(user, "***"),
                _ => said,
            };
            let help = match &f {
                Failure::Status(..) => {
                    "check the URL: kustomize and ply take a file from a GET that answers 2xx"
                        .to_string()
                }
                Failure::Unreachable(_) => "is the server up and reachable from here?".to_string(),
                Failure::Timeout(_) => {
                    "a slow server can be given longer with `ply fetch --http-timeout SECONDS`"
                        .to_string()
                }
                Failure::TooLarge(_) => format!(
                    "ply downloads files of up to {} MiB; download it yourself and name its local path instead",
                    self.http.max_bytes >> 20
                ),
                Failure::TooManyRedirects(_) => {
                    "the server redirects in a loop, or too often".to_string()
                }
            };
            let e = Error::new(
                ErrorKind::Remote,
                format!("'{shown}': could not download the file: {said}"),
            )
            .help(help);
            (f, e)
        })
    }

    /// Records in the cache what `url` resolved to at the ref it names (`record`, a lock of
    /// that one URL): a root without a lock reads its remote bases through these records
    /// (`fs::remote`), so `ply fetch --all` serves a repository that pins nothing.
    fn record(&self, url: &str, record: &Lock) -> Result<()> {
        let path = crate::fs::remote::ref_record_path(&self.cache, url);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, &e))?;
        }
        crate::output::write_atomic(&path, record.to_text().as_bytes())
    }

    /// Stores `bytes` (hashing to `hash`) in the cache, once.
    fn store(&self, bytes: &[u8], hash: &str, url: &str) -> Result<()> {
        if cached_file(&self.cache, hash, url)?.is_some() {
            return Ok(());
        }
        let dest = file_path(&self.cache, hash);
        let tmp_root = self.cache.join("tmp");
        let n = self.serial.fetch_add(1, Ordering::Relaxed);
        let tmp = tmp_root.join(format!("{}-{n}.file", std::process::id()));
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&tmp_root)?;
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&tmp, bytes)?;
            std::fs::rename(&tmp, &dest)
        };
        let result = write().map_err(|e| Error::io(&dest, &e));
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_dir(&tmp_root);
        result
    }

    /// Clones `spec` at `rev` into the cache: its commit and tree hash.
    fn clone_at(&self, spec: &RepoSpec, url: &str, rev: &str) -> Result<Pin> {
        let tmp_root = self.cache.join("tmp");
        let n = self.serial.fetch_add(1, Ordering::Relaxed);
        let work = tmp_root.join(format!("{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        let clone = work.join("clone");
        std::fs::create_dir_all(&clone).map_err(|e| Error::io(&clone, &e))?;
        let result = self.clone_into(spec, url, rev, &work, &clone);
        let _ = std::fs::remove_dir_all(&work);
        // Gone when empty: no other fetch is using it.
        let _ = std::fs::remove_dir(&tmp_root);
        result
    }

    fn clone_into(
        &self,
        spec: &RepoSpec,
        url: &str,
        rev: &str,
        work: &Path,
        clone: &Path,
    ) -> Result<Pin> {
        let git = Git {
            dir: clone,
            logs: work,
            timeout: spec.timeout,
            url,
        };
        let repo = spec.clone_spec();
        git.run(&["init", "--quiet", "--template="])?;
        // Relative submodule URLs resolve against `origin` (kustomize issue 5131).
        git.run(&["remote", "add", "origin", &repo])?;
        git.run(&["fetch", "--quiet", "--depth=1", &repo, rev])
            .map_err(|e| fetch_error(e, spec, url, rev))?;
        git.run(&["checkout", "--quiet", "FETCH_HEAD"])?;
        if spec.submodules == Some(true) {
            git.run(&["submodule", "--quiet", "update", "--init", "--recursive"])?;
        }
        let commit = git.run(&["rev-parse", "HEAD"])?.trim().to_string();
        remove_git_dirs(clone).map_err(|e| Error::io(clone, &e))?;
        refuse_escaping_symlinks(clone, clone, url)?;
        let tree = tree_hash(clone).map_err(|e| Error::io(clone, &e))?;
        let dest = tree_dir(&self.cache, &tree);
        if dest.is_dir() {
            // The same content, fetched before (perhaps under another URL).
            verify(&dest, &tree, url)?;
        } else {
            let parent = dest.parent().unwrap_or(&self.cache);
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, &e))?;
            if let Err(e) = std::fs::rename(clone, &dest) {
                // Another `ply fetch` may have stored the same tree meanwhile.
                if !dest.is_dir() {
                    return Err(Error::io(&dest, &e));
                }
                verify(&dest, &tree, url)?;
            }
        }
        Ok(Pin { commit, tree })
    }
}

/// A failed `git fetch`, said in terms of the URL: no such ref, or no such repository.
fn fetch_error(e: Error, spec: &RepoSpec, url: &str, rev: &str) -> Error {
    let said = e.help.clone().unwrap_or_default();
    let message = if said.contains("couldn't find remote ref") || said.contains("not our ref") {
        format!(
            "'{url}': the repository '{}' has no ref '{rev}'",
            spec.clone_spec()
        )
    } else if e.message.contains("timed out") {
        e.message.clone()
    } else {
        format!(
            "'{url}': could not fetch '{rev}' from '{}'",
            spec.clone_spec()
        )
    };
    let hint = if spec.host.starts_with("http") {
        "\n(under `resources:`, an HTTP(S) URL is downloaded as a file first, and cloned as a git repository when that fails, as kustomize does)"
    } else {
        ""
    };
    Error::new(ErrorKind::Remote, message).help(format!("{said}{hint}"))
}

/// One git command line, run in `dir` with the protections `ply fetch` promises.
struct Git<'a> {
    dir: &'a Path,
    /// Where the command's output goes (files, not pipes: a program git started and left
    /// behind cannot keep ply waiting).
    logs: &'a Path,
    timeout: Duration,
    url: &'a str,
}

impl Git<'_> {
    fn run(&self, args: &[&str]) -> Result<String> {
        let out_path = self.logs.join("git.out");
        let err_path = self.logs.join("git.err");
        let create = |p: &Path| std::fs::File::create(p).map_err(|e| Error::io(p, &e));
        let (out, err) = (create(&out_path)?, create(&err_path)?);
        let shown = format!("git {}", args.join(" "));
        let mut child = Command::new("git")
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "protocol.allow=never",
                "-c",
                "protocol.https.allow=always",
                "-c",
                "protocol.ssh.allow=always",
                "-c",
                "protocol.file.allow=always",
                "-c",
                "submodule.recurse=false",
                "-c",
                "advice.detachedHead=false",
                // Files as committed, whatever the user's line-ending settings: the same
                // tree, so the same hash, on every machine.
                "-c",
                "core.autocrlf=false",
            ])
            .args(args)
            .current_dir(self.dir)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ALLOW_PROTOCOL", "https:ssh:file")
            .env("GIT_PROTOCOL_FROM_USER", "0")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| {
                Error::new(
                    ErrorKind::Remote,
                    format!("'{}': could not run git: {e}", self.url),
                )
                .help("ply fetch clones with the system `git`; install it and put it on PATH")
            })?;
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(Error::new(
                        ErrorKind::Remote,
                        format!(
                            "'{}': `{shown}` timed out after {:?}",
                            self.url, self.timeout
                        ),
                    )
                    .help("is the repository reachable? A slow one can be given longer with `?timeout=` in the URL (seconds, or a duration such as 2m)"));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(Error::io(Path::new("git"), &e)),
            }
        };
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        if !status.success() {
            return Err(Error::new(
                ErrorKind::Remote,
                format!("'{}': `{shown}` failed ({status})", self.url),
            )
            .help(format!("git said: {}", stderr.trim())));
        }
        std::fs::read_to_string(&out_path).map_err(|e| Error::io(&out_path, &e))
    }
}

/// Removes every `.git` of a checkout (the repository's and its submodules'): the cache keeps
/// only the tree.
fn remove_git_dirs(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if entry.file_name() == ".git" {
            if kind.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        } else if kind.is_dir() {
            remove_git_dirs(&path)?;
        }
    }
    Ok(())
}

/// Refuses a clone holding a symlink whose target lies outside it (read lexically, so a link
/// that would climb out through another link is refused too): a remote tree must not read the
/// machine it is rendered on.
fn refuse_escaping_symlinks(root: &Path, dir: &Path, url: &str) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, &e))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| Error::io(&path, &e))?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&path).map_err(|e| Error::io(&path, &e))?;
            let resolved = crate::fs::join(dir, &target.to_string_lossy());
            if target.is_absolute() || !resolved.starts_with(root) {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                return Err(Error::new(
                    ErrorKind::LoadRestriction,
                    format!(
                        "'{url}': the repository's symlink '{}' points outside it (to '{}')",
                        rel.display(),
                        target.display()
                    ),
                )
                .help(
                    "ply refuses remote trees that could read files of the machine rendering them",
                ));
            }
        } else if kind.is_dir() {
            refuse_escaping_symlinks(root, &path, url)?;
        }
    }
    Ok(())
}

/// One line per URL, then what became of the lock, for `ply fetch`'s report on stderr.
pub(crate) fn describe(report: &FetchReport) -> String {
    let mut out = url_lines(report);
    let files = match report.files.len() {
        0 => String::new(),
        1 => ", 1 remote file".to_string(),
        n => format!(", {n} remote files"),
    };
    let bases = match report.urls.len() {
        0 if !files.is_empty() => String::new(),
        n => format!("{n} remote bases"),
    };
    let counts = format!("{bases}{files}");
    let counts = counts.trim_start_matches(", ");
    let lock = display_path(&report.lock_path);
    if report.urls.is_empty() && report.files.is_empty() && !report.lock_path.exists() {
        out.push_str("no remote bases: no lock written\n");
    } else if report.lock_changed {
        out.push_str(&format!("wrote {lock} ({counts})\n"));
    } else {
        out.push_str(&format!("{lock} is up to date ({counts})\n"));
    }
    out
}

/// A line per URL of `report`: what was done, at which commit or hash.
fn url_lines(report: &FetchReport) -> String {
    let mut out = String::new();
    for (url, pin, outcome) in &report.urls {
        let what = match outcome {
            Outcome::Resolved => "fetched",
            Outcome::Refetched => "fetched again (locked)",
            Outcome::Cached => "cached",
        };
        let short = pin.commit.get(..12).unwrap_or(&pin.commit);
        out.push_str(&format!("{what}: {url} at {short}\n"));
    }
    for (url, hash, outcome) in &report.files {
        let what = match outcome {
            Outcome::Resolved => "downloaded",
            Outcome::Refetched => "downloaded again (locked)",
            Outcome::Cached => "cached",
        };
        let short = hash.get(..19).unwrap_or(hash);
        out.push_str(&format!("{what}: {url} ({short})\n"));
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn symlinks_inside_the_clone_pass_and_escaping_ones_are_refused() {
        let root = std::env::temp_dir().join(format!("ply-fetch-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/x.yaml"), "").unwrap();
        let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, root.join(at));
        link("../x.yaml", "a/b/in.yaml").unwrap();
        link("b", "a/dir").unwrap();
        link("missing-but-inside", "a/dangling").unwrap();
        assert!(refuse_escaping_symlinks(&root, &root, "u").is_ok());
        for (target, at) in [("../../../etc/passwd", "a/b/up"), ("/etc/passwd", "a/abs")] {
            link(target, at).unwrap();
            let e = refuse_escaping_symlinks(&root, &root, "u").unwrap_err();
            assert_eq!(e.kind, ErrorKind::LoadRestriction);
            assert!(e.message.contains(&format!("'{at}'")), "{}", e.message);
            std::fs::remove_file(root.join(at)).unwrap();
        }
        std::fs::create_dir_all(root.join("sub/.git/objects")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: x").unwrap();
        remove_git_dirs(&root).unwrap();
        assert!(!root.join(".git").exists() && !root.join("sub/.git").exists());
        assert!(root.join("a/x.yaml").exists());
        let _ = std::fs::remove_dir_all(&root);
    }
}
