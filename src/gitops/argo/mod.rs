//! Argo CD: the Applications of a repository, rendered as Argo CD's repo server renders them
//! (parameter files, source type, the kustomize overrides as `kustomize edit` commands, the
//! build options, the Argo variables, the tracking marks).

pub(crate) mod app;
mod appset;
mod directory;
mod edit;
pub(crate) mod find;
mod glob;
mod gotmpl;
mod params;
pub(crate) mod render;
pub(crate) mod settings;
pub(crate) mod tracking;
mod vars;

/// Whether two repository URLs name one repository: compared without a trailing `.git` or
/// `/`, case-insensitively, and with `git@host:path` read as `ssh://git@host/path`
/// (Argo CD's `git.SameURL` normalises the same way).
pub(crate) fn same_repo(a: &str, b: &str) -> bool {
    normalize_url(a) == normalize_url(b)
}

fn normalize_url(u: &str) -> String {
    let mut s = u.trim().to_ascii_lowercase();
    for prefix in ["https://", "http://", "ssh://", "git://"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.to_string();
            break;
        }
    }
    if let Some(rest) = s.strip_prefix("git@") {
        s = rest.replacen(':', "/", 1);
    }
    if let Some(at) = s.find('@').filter(|&i| s[..i].find('/').is_none()) {
        s = s[at + 1..].to_string();
    }
    while s.ends_with('/') {
        s.pop();
    }
    s.strip_suffix(".git").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_repo_ignores_scheme_suffix_and_user() {
        assert!(super::same_repo(
            "https://github.com/argoproj/argocd-example-apps.git",
            "git@github.com:argoproj/argocd-example-apps"
        ));
        assert!(super::same_repo(
            "https://GitHub.com/a/b/",
            "https://github.com/a/b"
        ));
        assert!(!super::same_repo(
            "https://github.com/a/b",
            "https://github.com/a/c"
        ));
    }
}
