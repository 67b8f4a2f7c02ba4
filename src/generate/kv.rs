//! Key/value sources of generators: `literals`, `files` and env files, with kustomize's
//! parsing rules (`api/kv/kv.go`, `api/internal/generators/utils.go`). Pure text handling.
//!
//! kustomize v5.5 validates neither keys nor env-file names (its field validator is a no-op),
//! so neither does ply: `a b=c` makes a key `a b`, as in kustomize.

use crate::diag::{Error, ErrorKind, Result};

fn err(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Generator, msg)
}

/// `key=value`; the value may be wrapped in one pair of matching `"` or `'`, which are
/// removed (`parseLiteralSource`, `removeQuotes`).
pub(crate) fn parse_literal(source: &str) -> Result<(String, String)> {
    match source.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), remove_quotes(v).to_string())),
        _ => Err(err(format!(
            "invalid literal source {source:?}, expected key=value"
        ))
        .help("write each literal as KEY=VALUE, e.g. `- LOG_LEVEL=debug`")),
    }
}

fn remove_quotes(s: &str) -> &str {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) if b.len() >= 2 && f == l && (f == b'"' || f == b'\'') => {
            s.get(1..s.len() - 1).unwrap_or(s)
        }
        _ => s,
    }
}

/// A `files:` entry: `path` (key = the path's last element) or `key=path`.
pub(crate) fn parse_file_source(source: &str) -> Result<(String, String)> {
    let n = source.matches('=').count();
    if n == 0 {
        let base = source
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(source);
        let base = if base.is_empty() { source } else { base };
        return Ok((base.to_string(), source.to_string()));
    }
    if n > 1 {
        return Err(err(format!(
            "source {source:?} key name or file path contains '='"
        )));
    }
    match source.split_once('=') {
        Some(("", path)) => Err(err(format!(
            "missing key name for file path {path:?} in source {source:?}"
        ))),
        Some((key, "")) => Err(err(format!(
            "missing file path for key name {key:?} in source {source:?}"
        ))),
        Some((key, path)) => Ok((key.to_string(), path.to_string())),
        None => Err(err(format!("invalid file source {source:?}"))),
    }
}

/// Parses an env file (`envs:`): one `KEY=VALUE` per line; leading whitespace is dropped;
/// blank lines and lines starting with `#` are skipped; a line without `=` is a key with an
/// empty value; nothing else is trimmed and quotes are kept; a UTF-8 BOM on the first line is
/// ignored; `\r\n` line ends are accepted (`keyValuesFromLines`).
pub(crate) fn parse_env_file(path: &str, content: &[u8]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = content.split(|&b| b == b'\n').collect();
    if content.ends_with(b"\n") {
        lines.pop();
    }
    for (i, raw) in lines.into_iter().enumerate() {
        let mut line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if i == 0 {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        let Ok(text) = std::str::from_utf8(line) else {
            return Err(err(format!(
                "env file {path}: line {} has invalid UTF-8",
                i + 1
            )));
        };
        let text = text.trim_start();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let (k, v) = text.split_once('=').unwrap_or((text, ""));
        if k.is_empty() {
            continue;
        }
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(parse_literal("a=1").unwrap(), ("a".into(), "1".into()));
        assert_eq!(parse_literal("a=x=y").unwrap(), ("a".into(), "x=y".into()));
        assert_eq!(parse_literal("q=\"quoted\"").unwrap().1, "quoted");
        assert_eq!(parse_literal("s='single'").unwrap().1, "single");
        assert_eq!(parse_literal("m=\"mixed'").unwrap().1, "\"mixed'");
        assert_eq!(parse_literal("e=").unwrap().1, "");
        assert_eq!(parse_literal("a b=c").unwrap().0, "a b");
        assert!(parse_literal("novalue").is_err());
        assert!(parse_literal("=v").is_err());
    }

    #[test]
    fn file_sources() {
        assert_eq!(
            parse_file_source("dir/f.txt").unwrap(),
            ("f.txt".into(), "dir/f.txt".into())
        );
        assert_eq!(
            parse_file_source("k=dir/f.txt").unwrap(),
            ("k".into(), "dir/f.txt".into())
        );
        assert!(parse_file_source("=f").is_err());
        assert!(parse_file_source("k=").is_err());
        assert!(parse_file_source("a=b=c").is_err());
    }

    // Checked against kubectl kustomize: `A=1`, `# c`, blank, `  B = 2`, `C`, `D="q"\r`, `E=x=y`
    // give A: "1", "B ": " 2", C: "", D: '"q"', E: x=y.
    #[test]
    fn env_file() {
        let got = parse_env_file("e.env", b"A=1\n# c\n\n  B = 2\nC\nD=\"q\"\r\nE=x=y\n").unwrap();
        let want: Vec<(String, String)> = [
            ("A", "1"),
            ("B ", " 2"),
            ("C", ""),
            ("D", "\"q\""),
            ("E", "x=y"),
        ]
        .iter()
        .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
        .collect();
        assert_eq!(got, want);
        assert_eq!(
            parse_env_file("x", b"\xEF\xBB\xBFK=v").unwrap(),
            vec![("K".into(), "v".into())]
        );
    }
}
