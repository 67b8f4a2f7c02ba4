//! Downloading one HTTP(S) file for `ply fetch` (kustomize's `FileLoader.httpClientGetContent`,
//! `api/internal/loader/fileloader.go`: a GET whose 2xx body is the file). The one module that
//! names the HTTP client (`ureq`, https through rustls and the webpki roots). Bounded: a
//! deadline over the whole exchange, a cap on the body, a limit on redirects. Its failures
//! carry no URL: the caller names the URL (without its credentials, `url::redact`).

use std::time::Duration;

/// How long one download may take in all (connect, headers, body), unless `ply fetch
/// --http-timeout` says otherwise. kustomize sets none.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest body accepted (64 MiB; the largest manifests in the wild, CRD bundles, are a
/// few MiB). kustomize reads any size.
pub(crate) const MAX_BYTES: u64 = 64 << 20;

/// Redirects followed before giving up (Go's `http.Client` follows 10, as kustomize's does).
pub(crate) const MAX_REDIRECTS: u32 = 10;

/// The bounds of one download.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub timeout: Duration,
    pub max_bytes: u64,
    pub max_redirects: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: DEFAULT_TIMEOUT,
            max_bytes: MAX_BYTES,
            max_redirects: MAX_REDIRECTS,
        }
    }
}

/// Why a download gave no file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The server answered with a status outside 2xx (the code and its reason).
    Status(u16, String),
    /// No connection: refused, no such host, TLS failure, a broken exchange.
    Unreachable(String),
    /// The deadline passed.
    Timeout(Duration),
    /// The body is larger than the cap.
    TooLarge(u64),
    /// More redirects than allowed.
    TooManyRedirects(u32),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Status(code, reason) => write!(f, "the server answered {code} {reason}"),
            Failure::Unreachable(why) => write!(f, "could not connect: {why}"),
            Failure::Timeout(d) => write!(f, "timed out after {d:?}"),
            Failure::TooLarge(cap) => write!(f, "the file is larger than {} MiB", cap >> 20),
            Failure::TooManyRedirects(n) => write!(f, "more than {n} redirects"),
        }
    }
}

/// The body of a GET of `url` (a 2xx answer), within `limits`.
pub(crate) fn get(url: &str, limits: &Limits) -> Result<Vec<u8>, Failure> {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(limits.timeout))
        .max_redirects(limits.max_redirects)
        // Statuses are read below, so that a 404 is named as one.
        .http_status_as_error(false)
        .user_agent(concat!("ply/", env!("CARGO_PKG_VERSION")))
        .build();
    let agent = ureq::Agent::new_with_config(config);
    let mut response = agent.get(url).call().map_err(|e| failure(e, limits))?;
    let status = response.status();
    if !status.is_success() {
        let reason = status.canonical_reason().unwrap_or("").to_string();
        return Err(Failure::Status(status.as_u16(), reason));
    }
    response
        .body_mut()
        .with_config()
        .limit(limits.max_bytes)
        .read_to_vec()
        .map_err(|e| failure(e, limits))
}

/// ureq's error as a [`Failure`]; its words are kept only where they cannot hold the URL.
fn failure(e: ureq::Error, limits: &Limits) -> Failure {
    match e {
        ureq::Error::Timeout(_) => Failure::Timeout(limits.timeout),
        ureq::Error::BodyExceedsLimit(_) => Failure::TooLarge(limits.max_bytes),
        ureq::Error::TooManyRedirects => Failure::TooManyRedirects(limits.max_redirects),
        ureq::Error::StatusCode(code) => Failure::Status(code, String::new()),
        ureq::Error::HostNotFound => Failure::Unreachable("no such host".into()),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            Failure::Timeout(limits.timeout)
        }
        ureq::Error::Io(io) => Failure::Unreachable(io.kind().to_string()),
        ureq::Error::ConnectionFailed => Failure::Unreachable("connection failed".into()),
        ureq::Error::Tls(why) => Failure::Unreachable(format!("TLS: {why}")),
        ureq::Error::Rustls(e) => Failure::Unreachable(format!("TLS: {e}")),
        ureq::Error::BadUri(_) => Failure::Unreachable("not a valid URL".into()),
        ureq::Error::RedirectFailed => {
            Failure::Unreachable("a redirect could not be followed".into())
        }
        // Protocol errors and the like: ureq's words (the caller scrubs any credentials).
        other => Failure::Unreachable(other.to_string()),
    }
}
