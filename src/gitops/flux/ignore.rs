//! What source-controller leaves out of a Git source's artifact, so what kustomize-controller
//! never sees: the `.sourceignore` files of the repository (each one's patterns scoped to its
//! directory), the source's `spec.ignore`, and the default rules. Mirrors source-controller
//! `internal/controller/gitrepository_controller.go` `reconcileArtifact`
//! (`sourceignore.LoadIgnorePatterns`, then `spec.ignore`), fluxcd/pkg/artifact v0.18.0
//! `storage/archive.go` `SourceIgnoreFilter` and `Archive` (every file is matched on its own
//! path: an excluded directory's files can be included again), and fluxcd/pkg/sourceignore
//! v0.19.0 (`gitignore/pattern.go` `ParsePattern`/`Match`, `gitignore/matcher.go`: the last
//! pattern that matches decides).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::fs::Fs;

/// The ignore file's name (`sourceignore.IgnoreFile`).
const IGNORE_FILE: &str = ".sourceignore";
/// Always excluded (`sourceignore.ExcludeVCS`).
const VCS: &str = ".git/,.gitignore,.gitmodules,.gitattributes";
/// Excluded only when the repository has no ignore patterns of its own
/// (`ExcludeExt`, `ExcludeCI`, `ExcludeExtra`; `SourceIgnoreFilter` drops them otherwise).
const DEFAULTS: &str = "*.jpg,*.jpeg,*.gif,*.png,*.wmv,*.flv,*.tar.gz,*.zip,\
.github/,.circleci/,.travis.yml,.gitlab-ci.yml,appveyor.yml,.drone.yml,cloudbuild.yaml,\
codeship-services.yml,codeship-steps.yml,**/.goreleaser.yml,**/.sops.yaml,**/.flux.yaml";

/// One gitignore pattern of go-git's dialect, as fluxcd/pkg/sourceignore parses it.
#[derive(Clone, Debug)]
struct Pattern {
    /// The directory (relative to the root, as parts) whose ignore file declared it.
    domain: Vec<String>,
    parts: Vec<String>,
    /// Each part compiled (`None`: a malformed pattern, which never matches).
    globs: Vec<Option<globset::GlobMatcher>>,
    inclusion: bool,
    dir_only: bool,
    glob: bool,
}

impl Pattern {
    /// `ParsePattern`.
    fn parse(p: &str, domain: &[String]) -> Pattern {
        let (inclusion, mut p) = match p.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, p),
        };
        if !p.ends_with("\\ ") {
            p = p.trim_end_matches(' ');
        }
        let dir_only = p.ends_with('/');
        if dir_only {
            p = &p[..p.len() - 1];
        }
        let parts: Vec<String> = p.split('/').map(str::to_string).collect();
        Pattern {
            domain: domain.to_vec(),
            globs: parts.iter().map(|p| compile(p)).collect(),
            parts,
            inclusion,
            dir_only,
            glob: p.contains('/'),
        }
    }

    /// `Match`: `Some(true)` excludes, `Some(false)` includes, `None` does not match.
    fn matches(&self, path: &[&str], is_dir: bool) -> Option<bool> {
        if path.len() <= self.domain.len() || self.domain.iter().zip(path).any(|(d, p)| d != p) {
            return None;
        }
        let path = &path[self.domain.len()..];
        let hit = if self.glob {
            self.glob_match(path, is_dir)
        } else {
            self.simple_name_match(path, is_dir)
        };
        hit.then_some(!self.inclusion)
    }

    /// `simpleNameMatch`: the pattern names any part of the path.
    fn simple_name_match(&self, path: &[&str], is_dir: bool) -> bool {
        for (i, name) in path.iter().enumerate() {
            match go_match(&self.globs[0], name) {
                None => return false,
                Some(false) => continue,
                Some(true) => return !(self.dir_only && !is_dir && i == path.len() - 1),
            }
        }
        false
    }

    /// `globMatch`: part by part, `**` crossing any number of directories.
    fn glob_match(&self, mut path: &[&str], is_dir: bool) -> bool {
        let mut matched = false;
        let mut traverse = false;
        for (i, pat) in self.parts.iter().enumerate() {
            if pat.is_empty() {
                traverse = false;
                continue;
            }
            if pat == "**" {
                if i == self.parts.len() - 1 {
                    break;
                }
                traverse = true;
                continue;
            }
            if pat.contains("**") || path.is_empty() {
                return false;
            }
            if traverse {
                traverse = false;
                while let Some((first, rest)) = path.split_first() {
                    path = rest;
                    match go_match(&self.globs[i], first) {
                        None => return false,
                        Some(true) => {
                            matched = true;
                            break;
                        }
                        Some(false) if path.is_empty() => matched = false,
                        Some(false) => {}
                    }
                }
            } else {
                if go_match(&self.globs[i], path[0]) != Some(true) {
                    return false;
                }
                matched = true;
                path = &path[1..];
            }
        }
        matched && !(self.dir_only && !is_dir && path.is_empty())
    }
}

/// A part of a pattern as Go's `filepath.Match` reads it (`*`, `?`, `[...]`, `\` escapes);
/// `None` for a malformed one (`ErrBadPattern`).
fn compile(pattern: &str) -> Option<globset::GlobMatcher> {
    // One part never holds a `/`, so `*` kept inside a part matches as Go's does.
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// `filepath.Match` of a compiled part against one name; `None` when the part is malformed.
fn go_match(glob: &Option<globset::GlobMatcher>, name: &str) -> Option<bool> {
    glob.as_ref().map(|g| g.is_match(name))
}

/// The rules of one source: every pattern, in the order source-controller loads them.
#[derive(Clone, Debug)]
pub(super) struct Rules {
    patterns: Vec<Pattern>,
}

impl Rules {
    /// The rules of the source whose root is `root`: its `.sourceignore` files (the root's
    /// first, then each directory's, depth first in name order, as `LoadIgnorePatterns` walks)
    /// and the source's `spec.ignore`.
    pub(super) fn load(
        fs: &dyn Fs,
        root: &Path,
        files: &[PathBuf],
        spec_ignore: Option<&str>,
    ) -> Rules {
        let mut found: Vec<(Vec<String>, &PathBuf)> = files
            .iter()
            .filter(|f| f.file_name().is_some_and(|n| n == IGNORE_FILE))
            .filter_map(|f| {
                let dir = f.parent()?.strip_prefix(root).ok()?;
                let parts: Vec<String> = dir
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                (!parts.iter().any(|p| p == ".git")).then_some((parts, f))
            })
            .collect();
        // Depth first, a directory's own file before its subdirectories'.
        found.sort();
        let mut patterns = Vec::new();
        for (domain, file) in found {
            if let Ok(bytes) = fs.read(file) {
                patterns.extend(read_patterns(&String::from_utf8_lossy(&bytes), &domain));
            }
        }
        if let Some(text) = spec_ignore {
            patterns.extend(read_patterns(text, &[]));
        }
        let defaults = if patterns.is_empty() {
            DEFAULTS.split(',').collect::<Vec<_>>()
        } else {
            Vec::new()
        };
        let mut all: Vec<Pattern> = VCS
            .split(',')
            .chain(defaults)
            .map(|p| Pattern::parse(p, &[]))
            .collect();
        all.extend(patterns);
        Rules { patterns: all }
    }

    /// Whether the file `rel` (relative to the root) is left out of the artifact.
    pub(super) fn excludes(&self, rel: &Path) -> bool {
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        self.patterns
            .iter()
            .rev()
            .find_map(|p| p.matches(&parts, false))
            .unwrap_or(false)
    }

    /// The files of `files` below `root` that the artifact leaves out.
    pub(super) fn excluded(&self, root: &Path, files: &[PathBuf]) -> HashSet<PathBuf> {
        files
            .iter()
            .filter(|f| f.strip_prefix(root).is_ok_and(|rel| self.excludes(rel)))
            .cloned()
            .collect()
    }
}

/// `ReadPatterns`: one pattern a line, `#` comments and blank lines skipped.
fn read_patterns(text: &str, domain: &[String]) -> Vec<Pattern> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| Pattern::parse(l, domain))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Rules {
        let mut all: Vec<Pattern> = VCS.split(',').map(|p| Pattern::parse(p, &[])).collect();
        all.extend(read_patterns(text, &[]));
        Rules { patterns: all }
    }

    #[test]
    fn the_last_matching_pattern_decides_file_by_file() {
        let r = rules(
            "/*\n!/kubernetes\n/kubernetes/clusters/**/secrets/\n!/kubernetes/clusters/**/secrets/keep.yaml\n",
        );
        assert!(r.excludes(Path::new("README.md")));
        assert!(r.excludes(Path::new("docs/a.yaml")));
        assert!(!r.excludes(Path::new("kubernetes/apps/a.yaml")));
        assert!(r.excludes(Path::new("kubernetes/clusters/prod/secrets/x.yaml")));
        assert!(!r.excludes(Path::new("kubernetes/clusters/prod/secrets/keep.yaml")));
        assert!(r.excludes(Path::new(".git/config")));
    }

    #[test]
    fn a_name_pattern_matches_at_any_depth_and_a_directory_pattern_its_files() {
        let r = rules("ansible/\n*.md\n");
        assert!(r.excludes(Path::new("ansible/site.yaml")));
        assert!(r.excludes(Path::new("x/ansible/site.yaml")));
        assert!(!r.excludes(Path::new("ansible")));
        assert!(r.excludes(Path::new("a/b/README.md")));
        assert!(!r.excludes(Path::new("a/b/app.yaml")));
    }

    #[test]
    fn a_nested_ignore_file_scopes_its_patterns_to_its_directory() {
        let mut r = rules("");
        r.patterns
            .extend(read_patterns("*.yaml\n", &["apps".to_string()]));
        assert!(r.excludes(Path::new("apps/x/a.yaml")));
        assert!(!r.excludes(Path::new("infra/a.yaml")));
    }
}
