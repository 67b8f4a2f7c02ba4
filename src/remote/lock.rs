//! `ply.lock`: the remote references of a kustomization tree, each pinned to the commit
//! `ply fetch` resolved and the hash of the tree it read, or (an HTTP(S) file) to the hash of
//! the bytes it downloaded. A plain YAML file, one entry per URL, sorted by URL, so that a bump
//! is one readable hunk in review. Text in, text out: reading the file is `fs`'s, writing it
//! `output`'s. `version: 1` locks pin only repositories; a lock with file pins says
//! `version: 2`, so that a ply that cannot read them says so instead of misreading them.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::diag::{Error, ErrorKind, Result};
use crate::yaml::Node;

/// The lock file's name, next to the root kustomization.
pub(crate) const LOCK_FILE: &str = "ply.lock";

/// What one URL is pinned to.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The commit the URL's ref resolved to (40 or 64 hex digits).
    pub commit: String,
    /// The hash of the cloned tree ([`crate::fs::remote::tree_hash`]), `sha256:<hex>`.
    pub tree: String,
}

/// Every pinned URL, sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lock {
    /// Repositories.
    pub pins: BTreeMap<String, Pin>,
    /// HTTP(S) files (the URL without credentials, `url::redact`) and the hash of their bytes,
    /// `sha256:<hex>`.
    pub files: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LockFile {
    version: u32,
    #[serde(default)]
    remotes: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    url: String,
    commit: Option<String>,
    tree: Option<String>,
    file: Option<String>,
}

const HEADER: &str =
    "# Remote bases pinned by `ply fetch`; `ply fetch --update` moves them. Commit this file.\n";

impl Lock {
    /// Reads a lock file's text; `shown` names the file in errors.
    pub fn parse(text: &str, shown: &str) -> Result<Lock> {
        let bad = |m: String| {
            Error::new(ErrorKind::Remote, format!("{shown}: {m}"))
                .help("the lock is written by `ply fetch`; run it again to rewrite the file")
        };
        let node = crate::yaml::parse::parse_one(text).map_err(|e| bad(e.to_string()))?;
        let file: LockFile = crate::yaml::from_node(&node).map_err(|e| bad(e.to_string()))?;
        if !matches!(file.version, 1 | 2) {
            return Err(bad(format!(
                "version {} is not one this ply reads (1 or 2)",
                file.version
            )));
        }
        let mut lock = Lock::default();
        let is_hash = |h: &str| h.strip_prefix("sha256:").is_some_and(is_hex);
        for e in file.remotes {
            let fresh = match (e.commit, e.tree, e.file) {
                (Some(commit), Some(tree), None) if is_hex(&commit) && is_hash(&tree) => {
                    !lock.files.contains_key(&e.url)
                        && lock
                            .pins
                            .insert(e.url.clone(), Pin { commit, tree })
                            .is_none()
                }
                (None, None, Some(hash)) if file.version >= 2 && is_hash(&hash) => {
                    !lock.pins.contains_key(&e.url)
                        && lock.files.insert(e.url.clone(), hash).is_none()
                }
                _ => return Err(bad(format!("the entry of '{}' is malformed", e.url))),
            };
            if !fresh {
                return Err(bad(format!("'{}' is listed twice", e.url)));
            }
        }
        Ok(lock)
    }

    /// The file's text: a comment, the version (2 when files are pinned, else 1), the entries
    /// sorted by URL.
    pub fn to_text(&self) -> String {
        let entry = |url: &str, fields: [(&str, &str); 2]| {
            let mut m = crate::yaml::Map::default();
            m.insert("url".into(), Node::str(url));
            for (k, v) in fields.into_iter().filter(|(k, _)| !k.is_empty()) {
                m.insert(k.into(), Node::str(v));
            }
            (url.to_string(), Node::Map(m))
        };
        let mut entries: Vec<(String, Node)> = self
            .pins
            .iter()
            .map(|(url, pin)| entry(url, [("commit", &pin.commit), ("tree", &pin.tree)]))
            .chain(
                self.files
                    .iter()
                    .map(|(url, hash)| entry(url, [("file", hash), ("", "")])),
            )
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let entries = entries.into_iter().map(|(_, e)| e).collect();
        let version = if self.files.is_empty() { 1 } else { 2 };
        let mut top = crate::yaml::Map::default();
        top.insert("version".into(), Node::Int(version));
        top.insert("remotes".into(), Node::Seq(entries));
        let mut out = String::from(HEADER);
        crate::yaml::emit_document(
            &mut out,
            &Node::Map(top),
            crate::yaml::EmitOptions { sort_keys: false },
        );
        out
    }
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(c: char) -> Pin {
        Pin {
            commit: c.to_string().repeat(40),
            tree: format!("sha256:{}", c.to_string().repeat(64)),
        }
    }

    #[test]
    fn written_sorted_and_read_back() {
        let mut lock = Lock::default();
        lock.pins
            .insert("https://github.com/o/r//b?ref=v2".into(), pin('b'));
        lock.pins
            .insert("file:///srv/r.git//a?ref=v1&timeout=9".into(), pin('a'));
        let text = lock.to_text();
        assert_eq!(
            text,
            format!(
                "{HEADER}version: 1\nremotes:\n- url: file:///srv/r.git//a?ref=v1&timeout=9\n  commit: {}\n  tree: sha256:{}\n- url: https://github.com/o/r//b?ref=v2\n  commit: {}\n  tree: sha256:{}\n",
                "a".repeat(40),
                "a".repeat(64),
                "b".repeat(40),
                "b".repeat(64)
            )
        );
        assert_eq!(Lock::parse(&text, "ply.lock").unwrap(), lock);
        // A file pin makes it version 2, sorted among the repositories.
        let mut with_file = lock.clone();
        with_file.files.insert(
            "https://example.com/x.yaml".into(),
            format!("sha256:{}", "c".repeat(64)),
        );
        let text = with_file.to_text();
        assert!(text.starts_with(&format!("{HEADER}version: 2\n")), "{text}");
        let urls: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("- url: "))
            .collect();
        assert_eq!(
            urls,
            [
                "file:///srv/r.git//a?ref=v1&timeout=9",
                "https://example.com/x.yaml",
                "https://github.com/o/r//b?ref=v2"
            ]
        );
        assert!(text.contains(&format!(
            "- url: https://example.com/x.yaml\n  file: sha256:{}\n",
            "c".repeat(64)
        )));
        assert_eq!(Lock::parse(&text, "ply.lock").unwrap(), with_file);
        let empty = Lock::default().to_text();
        assert_eq!(Lock::parse(&empty, "ply.lock").unwrap(), Lock::default());
    }

    #[test]
    fn bad_files_are_errors() {
        for (text, says) in [
            ("version: 3\n", "version 3"),
            (
                "version: 1\nremotes:\n- url: x\n  file: sha256:00\n",
                "malformed",
            ),
            (
                "version: 2\nremotes:\n- url: x\n  file: sha256:00\n  commit: aa\n",
                "malformed",
            ),
            (
                "version: 2\nremotes:\n- url: x\n  file: sha256:00\n- url: x\n  commit: aa\n  tree: sha256:00\n",
                "twice",
            ),
            (
                "version: 1\nremotes:\n- url: x\n  commit: zz\n  tree: sha256:00\n",
                "malformed",
            ),
            (
                "version: 1\nremotes:\n- url: x\n  commit: aa\n  tree: sha256:00\n- url: x\n  commit: aa\n  tree: sha256:00\n",
                "twice",
            ),
            ("version: 1\nextra: 1\n", "extra"),
            ("version: [\n", "ply.lock"),
        ] {
            let e = Lock::parse(text, "ply.lock").unwrap_err();
            assert_eq!(e.kind, ErrorKind::Remote);
            assert!(e.message.contains(says), "{text}: {}", e.message);
        }
    }
}
