//! Remote references as kustomize v5.5 reads them: a git repository URL split into the host,
//! the repository path, the kustomization root inside the clone and the query
//! (`api/internal/git/repospec.go`, `NewRepoSpecFromURL`), and plain HTTP(S) file URLs
//! (`api/internal/loader/fileloader.go`, `IsRemoteFile`). Pure text; knows no git and no disk.

use std::time::Duration;

/// kustomize's `defaultTimeout`: every git command of one clone gets this long unless the URL
/// says `?timeout=`.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(27);

/// A git repository, a ref in it and a kustomization root in its clone (kustomize's
/// `RepoSpec`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RepoSpec {
    /// Scheme, user and host, ending in `/` or `:` (`https://github.com/`, `git@github.com:`,
    /// `file://`).
    pub host: String,
    /// The repository's path on the host (`org/repo`, `/abs/path/repo.git`).
    pub repo_path: String,
    /// The kustomization root inside the clone, relative (`deploy/base`, or empty).
    pub root_path: String,
    /// `?ref=` (or `?version=`; `ref` wins); empty for the remote's HEAD.
    pub git_ref: String,
    /// `?submodules=` when given and readable as a Go boolean. kustomize clones submodules
    /// when it is absent; ply only when it is `true` (docs/compatibility.md).
    pub submodules: Option<bool>,
    /// `?timeout=` (seconds, or a Go duration such as `1m30s`), else [`DEFAULT_TIMEOUT`].
    pub timeout: Duration,
}

impl RepoSpec {
    /// What `git fetch` is given (kustomize's `CloneSpec`).
    pub(crate) fn clone_spec(&self) -> String {
        format!("{}{}", self.host, self.repo_path)
    }

    #[cfg(test)]
    /// Whether kustomize would clone submodules for this URL (its default is yes).
    pub(crate) fn kustomize_submodules(&self) -> bool {
        self.submodules.unwrap_or(true)
    }
}

/// What a path names when it is not a local path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Remote {
    /// A git repository URL (cloned by `ply fetch`).
    Git(RepoSpec),
    /// An `http://` or `https://` URL that is not a git repository URL: one file.
    Http(String),
}

/// The one classifier of remote references: a git repository URL as kustomize parses it, else
/// an HTTP(S) URL of a file, else `None` (a local path).
pub(crate) fn classify(path: &str) -> Option<Remote> {
    if let Ok(spec) = parse_repo_spec(path) {
        return Some(Remote::Git(spec));
    }
    is_http_url(path).then(|| Remote::Http(path.to_string()))
}

/// Whether kustomize would read `path` from the network (see [`classify`]).
pub(crate) fn is_remote(path: &str) -> bool {
    classify(path).is_some()
}

/// `url` with its user part (credentials: `https://user:token@host/x`) replaced by `***`:
/// how ply names an HTTP(S) file URL in `ply.lock`, in the cache and in its messages, so
/// that a token written in a kustomization goes no further than the request.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// `text` (a message about `url`) with the user part of `url` replaced by `***` wherever it
/// appears: git and the HTTP client may quote the URL they were given.
pub(crate) fn scrub(text: &str, url: &str) -> String {
    let user = url
        .split_once("://")
        .map(|(_, rest)| &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())])
        .and_then(|authority| authority.rsplit_once('@'))
        .map(|(user, _)| user);
    match user {
        Some(user) if !user.is_empty() => text.replace(&format!("{user}@"), "***@"),
        _ => text.to_string(),
    }
}

/// Go's `url.Parse(path)` giving an `http` or `https` scheme, in any case (kustomize's
/// `IsRemoteFile`; Go lowercases the scheme).
pub(crate) fn is_http_url(path: &str) -> bool {
    let scheme = path.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    matches!(scheme.as_deref(), Some("http" | "https"))
}

const FILE_SCHEME: &str = "file://";
const SSH_SCHEME: &str = "ssh://";
const HTTPS_SCHEME: &str = "https://";
const HTTP_SCHEME: &str = "http://";
const GIT_ROOT_DELIMITER: &str = "_git/";
const GIT_SUFFIX: &str = ".git";

/// Why a string is not a git repository URL (kustomize's messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UrlError(pub String);

impl std::fmt::Display for UrlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(message: impl Into<String>) -> Result<T, UrlError> {
    Err(UrlError(message.into()))
}

/// Splits a git URL as kustomize's `NewRepoSpecFromURL` does. An error means "not a git URL":
/// kustomize then reads the string as a local path.
pub(crate) fn parse_repo_spec(url: &str) -> Result<RepoSpec, UrlError> {
    if url.starts_with('/') {
        return err(format!("uri looks like abs path: {url}"));
    }
    // The query first: `?` appears nowhere else in a URL (RFC 3986).
    let (rest, query) = url.split_once('?').unwrap_or((url, ""));
    let (git_ref, timeout, submodules) = parse_query(query);
    let (host, rest) = extract_host(rest)?;
    let whole_repo = host.starts_with(FILE_SCHEME);
    let (repo_path, root_path) = split_path(rest, whole_repo)?;
    Ok(RepoSpec {
        host,
        repo_path,
        root_path,
        git_ref,
        submodules,
        timeout,
    })
}

/// `ref` (or `version`), `timeout` and `submodules` of a query, as kustomize's `parseQuery`
/// reads them: a query Go cannot parse gives the defaults, and so do empty or unreadable
/// values.
fn parse_query(query: &str) -> (String, Duration, Option<bool>) {
    let defaults = (String::new(), DEFAULT_TIMEOUT, None);
    let Some(values) = go_parse_query(query) else {
        return defaults;
    };
    let get = |key: &str| {
        values
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    };
    let git_ref = match get("ref") {
        "" => get("version").to_string(),
        r => r.to_string(),
    };
    let timeout = match get("timeout") {
        "" => DEFAULT_TIMEOUT,
        t => match t.parse::<i64>() {
            Ok(secs) if secs > 0 => Duration::from_secs(secs.unsigned_abs()),
            _ => go_duration(t)
                .filter(|d| !d.is_zero())
                .unwrap_or(DEFAULT_TIMEOUT),
        },
    };
    let submodules = go_bool(get("submodules"));
    (git_ref, timeout, submodules)
}

/// Go's `url.ParseQuery`: `&`-separated `key=value` pairs, `+` and `%XX` decoded; `None` where
/// Go returns an error (a `;`, a bad escape).
fn go_parse_query(query: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if pair.contains(';') {
            return None;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.push((unescape(k)?, unescape(v)?));
    }
    Some(out)
}

/// Go's `url.QueryUnescape`.
fn unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Go's `strconv.ParseBool`.
fn go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Go's `time.ParseDuration` for non-negative durations (`1m1s`, `1.5h`, `300ms`); `None`
/// where Go fails or the duration is negative.
fn go_duration(s: &str) -> Option<Duration> {
    let s = s.strip_prefix('+').unwrap_or(s);
    if s == "0" {
        return Some(Duration::ZERO);
    }
    if s.is_empty() || s.starts_with('-') {
        return None;
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(num_len);
        if num.is_empty() || num == "." {
            return None;
        }
        let value: f64 = num.parse().ok()?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let seconds = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += value * seconds;
        rest = tail;
    }
    Duration::try_from_secs_f64(total).ok()
}

/// kustomize's `extractHost`: the scheme, user and host of a git URL, and the rest.
fn extract_host(url: &str) -> Result<(String, &str), UrlError> {
    // go-getter's `git::` is dropped (kustomize warns that it will stop doing so).
    let n = strip_prefix_ignore_case(url, "git::").unwrap_or(url);
    let (scheme, n) = [SSH_SCHEME, HTTPS_SCHEME, HTTP_SCHEME, FILE_SCHEME]
        .into_iter()
        .find_map(|p| strip_prefix_ignore_case(n, p).map(|rest| (p, rest)))
        .unwrap_or(("", n));
    let (username, n) = extract_username(n);
    let lower = n.to_ascii_lowercase();
    let std_github = lower.starts_with("github.com/") || lower.starts_with("github.com:");
    // SCP-like syntax (`user@host:path`) has no scheme; kustomize asks for a user unless the
    // host is github.com.
    let accept_scp = scheme.is_empty() && (!username.is_empty() || std_github);
    if scheme.is_empty() && !accept_scp {
        return err("failed to parse scheme");
    }
    if scheme == FILE_SCHEME {
        // Everything after `file://` is the path, a "user" included.
        return Ok((
            scheme.to_string(),
            &url[url.len() - n.len() - username.len()..],
        ));
    }
    let (mut host, rest) = match find_path_separator(n, accept_scp) {
        Some(i) => (&n[..=i], &n[i + 1..]),
        None => (n, ""),
    };
    let (mut scheme, mut username) = (scheme, username);
    if std_github {
        // github.com is normalised: ssh (a scheme or a user) to `user@github.com:`, the rest
        // to `https://github.com/`.
        if scheme.starts_with(SSH_SCHEME) || !username.is_empty() {
            (scheme, host) = ("", "github.com:");
        } else {
            (scheme, username, host) = (HTTPS_SCHEME, "", "github.com/");
        }
    }
    if host.is_empty() {
        return err("failed to parse host segment");
    }
    Ok((format!("{scheme}{username}{host}"), rest))
}

/// `prefix` (lower case) at the start of `s` in any case: what follows it.
fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// A leading `user@` (a letter, then letters, digits and `-`).
fn extract_username(s: &str) -> (&str, &str) {
    let Some(at) = s.find('@') else {
        return ("", s);
    };
    let name = &s[..at];
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-');
    if valid {
        (&s[..=at], &s[at + 1..])
    } else {
        ("", s)
    }
}

/// Where the host ends: the first `/`, or in SCP-like syntax a `:` before it.
fn find_path_separator(s: &str, accept_scp: bool) -> Option<usize> {
    let slash = s.find('/');
    if accept_scp {
        let colon = s.find(':').filter(|&c| c > 0);
        match (slash, colon) {
            (None, c) => return c.or(s.find(':')),
            (Some(sl), Some(c)) if c < sl => return Some(c),
            _ => {}
        }
    }
    slash
}

/// kustomize's `parsePathParts`: the repository path and the kustomization root, split at
/// `_git/<repo>`, `//` or `.git`, else after two segments (after all of them for `file://`).
fn split_path(n: &str, whole_repo: bool) -> Result<(String, String), UrlError> {
    let split = if let Some(i) = n.find(GIT_ROOT_DELIMITER) {
        let after = &n[i + GIT_ROOT_DELIMITER.len()..];
        let (repo, root) = after.split_once('/').unwrap_or((after, ""));
        Some((
            format!("{}{repo}", &n[..i + GIT_ROOT_DELIMITER.len()]),
            root,
        ))
    } else if let Some(i) = n.find("//") {
        Some((n[..i].to_string(), &n[i + 2..]))
    } else if let Some(i) = n.find(GIT_SUFFIX) {
        let end = i + GIT_SUFFIX.len();
        Some((n[..end].to_string(), &n[end..]))
    } else if whole_repo {
        Some((n.to_string(), ""))
    } else {
        let mut parts = n.splitn(3, '/');
        match (parts.next(), parts.next()) {
            (Some(org), Some(repo)) => Some((format!("{org}/{repo}"), parts.next().unwrap_or(""))),
            _ => None,
        }
    };
    let Some((repo, root)) = split.filter(|(repo, _)| !repo.is_empty()) else {
        return err("failed to parse repo path segment");
    };
    if exits_repo(root) {
        return err(format!("url path exits repo: {n}"));
    }
    let root = root.strip_prefix('/').unwrap_or(root);
    Ok((repo, root.to_string()))
}

/// Whether a kustomization root climbs out of the clone (`a/../../b`), after Go's
/// `filepath.Clean`.
fn exits_repo(root: &str) -> bool {
    let mut parts: Vec<&str> = Vec::new();
    for seg in root.trim_start_matches('/').split('/') {
        match seg {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.first() == Some(&"..")
}

#[cfg(test)]
mod tests;
