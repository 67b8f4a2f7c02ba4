//! `ply fetch`: walks the kustomization graph as a render does, and clones every remote base
//! it meets with the system `git` (kustomize's `ClonerUsingGitExec`,
//! `api/internal/git/cloner.go`: init, fetch `--depth=1` of the ref, checkout) into the
//! content-addressed cache, then writes `ply.lock`. The one module that uses the network and
//! runs a program; it writes only the cache (the lock goes through `output`).
//! git runs with hooks off, only the https, ssh and file protocols, no prompt, and a timeout on
//! every command; submodules are cloned only when the URL says `submodules=true`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fs::Fs;
use crate::fs::remote::{
    RemoteTree, RemoteTrees, read_lock, repo_spec, root_in, tree_dir, tree_hash, verify,
};
use crate::remote::RepoSpec;
use crate::remote::lock::{LOCK_FILE, Lock, Pin};
use crate::source::display_path;

/// What `ply fetch` is asked to do.
#[derive(Clone, Debug)]
pub struct FetchOptions {
    /// The cache directory.
    pub cache: PathBuf,
    /// Resolve every ref again (`--update`) instead of keeping the locked commits.
    pub update: bool,
    /// How the walk renders (load restrictor, and the rest of a render's options).
    pub render: crate::build::RenderOptions,
}

/// What happened to one URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Cloned at its ref (new, or `--update`).
    Resolved,
    /// Its locked commit was cloned again (the cache did not have it).
    Refetched,
    /// Its locked tree was in the cache.
    Cached,
}

/// What `ply fetch` did.
#[derive(Clone, Debug)]
pub struct FetchReport {
    pub lock_path: PathBuf,
    /// Every URL of the closure, with its pin and what was done.
    pub urls: Vec<(String, Pin, Outcome)>,
    /// Whether the lock file's text changed.
    pub lock_changed: bool,
}

/// Fetches every remote base of the kustomization in `dir` and writes `dir/ply.lock`.
pub fn fetch(dir: &Path, opts: &FetchOptions, warnings: &mut Warnings) -> Result<FetchReport> {
    let root = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, &e))?;
    let lock_path = root.join(LOCK_FILE);
    let old = read_lock(&crate::fs::DiskFs, &lock_path)?;
    std::fs::create_dir_all(&opts.cache).map_err(|e| Error::io(&opts.cache, &e))?;
    let cache = std::fs::canonicalize(&opts.cache).map_err(|e| Error::io(&opts.cache, &e))?;
    let fetcher = Fetcher {
        cache,
        old: old.clone().unwrap_or_default(),
        update: opts.update,
        done: Mutex::new(BTreeMap::new()),
        serial: AtomicUsize::new(0),
    };
    let render = crate::build::RenderOptions {
        reading: crate::build::Reading::OneThread,
        ..opts.render.clone()
    };
    crate::build::render_with_remotes(
        &crate::fs::DiskFs,
        &root,
        &render,
        Some(&fetcher),
        warnings,
    )?;
    let done = fetcher
        .done
        .into_inner()
        .map_err(|_| Error::new(ErrorKind::Remote, "fetching failed"))?;
    let lock = Lock {
        pins: done
            .iter()
            .map(|(url, (pin, _))| (url.clone(), pin.clone()))
            .collect(),
    };
    let text = lock.to_text();
    let before = std::fs::read_to_string(&lock_path).ok();
    // No remote bases and no lock: nothing to pin, no file to write.
    let lock_changed =
        before.as_deref() != Some(text.as_str()) && !(old.is_none() && lock.pins.is_empty());
    if lock_changed {
        crate::output::write_atomic(&lock_path, text.as_bytes())?;
    }
    Ok(FetchReport {
        lock_path,
        urls: done
            .into_iter()
            .map(|(url, (pin, outcome))| (url, pin, outcome))
            .collect(),
        lock_changed,
    })
}

/// The [`RemoteTrees`] of `ply fetch`: locked trees from the cache when they are there, else
/// cloned.
#[derive(Debug)]
struct Fetcher {
    cache: PathBuf,
    old: Lock,
    update: bool,
    /// The URLs met so far.
    done: Mutex<BTreeMap<String, (Pin, Outcome)>>,
    /// Numbers the temporary clone directories.
    serial: AtomicUsize,
}

impl RemoteTrees for Fetcher {
    fn cache_dir(&self) -> Option<&Path> {
        Some(&self.cache)
    }

    fn tree(&self, _fs: &dyn Fs, url: &str) -> Result<RemoteTree> {
        let spec = repo_spec(url)?;
        let mut done = self
            .done
            .lock()
            .map_err(|_| Error::new(ErrorKind::Remote, "fetching failed"))?;
        if let Some((pin, _)) = done.get(url) {
            return root_in(&tree_dir(&self.cache, &pin.tree), &spec, url);
        }
        let locked = self.old.pins.get(url).filter(|_| !self.update);
        let (pin, outcome) = match locked {
            Some(pin) => {
                let dir = tree_dir(&self.cache, &pin.tree);
                if dir.is_dir() {
                    verify(&dir, &pin.tree, url)?;
                    (pin.clone(), Outcome::Cached)
                } else {
                    let got = self.clone_at(&spec, url, &pin.commit)?;
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
                (self.clone_at(&spec, url, rev)?, Outcome::Resolved)
            }
        };
        let tree = root_in(&tree_dir(&self.cache, &pin.tree), &spec, url)?;
        done.insert(url.to_string(), (pin, outcome));
        Ok(tree)
    }
}

impl Fetcher {
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
        "\n(ply fetches git repositories; a URL of a single file is not supported)"
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

/// One line per URL, for `ply fetch`'s report on stderr.
pub fn describe(report: &FetchReport) -> String {
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
    let lock = display_path(&report.lock_path);
    if report.urls.is_empty() && !report.lock_path.exists() {
        out.push_str("no remote bases: no lock written\n");
    } else if report.lock_changed {
        out.push_str(&format!(
            "wrote {lock} ({} remote bases)\n",
            report.urls.len()
        ));
    } else {
        out.push_str(&format!(
            "{lock} is up to date ({} remote bases)\n",
            report.urls.len()
        ));
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
