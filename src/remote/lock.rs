//! `ply.lock`: the remote references of a kustomization tree, each pinned to the commit
//! `ply fetch` resolved and the hash of the tree it read. A plain YAML file, one entry per URL,
//! sorted by URL, so that a bump is one readable hunk in review. Text in, text out: reading
//! the file is `fs`'s, writing it `output`'s.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::diag::{Error, ErrorKind, Result};
use crate::yaml::Node;

/// The lock file's name, next to the root kustomization.
pub const LOCK_FILE: &str = "ply.lock";

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
    pub pins: BTreeMap<String, Pin>,
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
    commit: String,
    tree: String,
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
        if file.version != 1 {
            return Err(bad(format!(
                "version {} is not one this ply reads (1)",
                file.version
            )));
        }
        let mut pins = BTreeMap::new();
        for e in file.remotes {
            if !is_hex(&e.commit) || !e.tree.strip_prefix("sha256:").is_some_and(is_hex) {
                return Err(bad(format!("the entry of '{}' is malformed", e.url)));
            }
            let pin = Pin {
                commit: e.commit,
                tree: e.tree,
            };
            if pins.insert(e.url.clone(), pin).is_some() {
                return Err(bad(format!("'{}' is listed twice", e.url)));
            }
        }
        Ok(Lock { pins })
    }

    /// The file's text: a comment, `version: 1`, the entries sorted by URL.
    pub fn to_text(&self) -> String {
        let entries = self
            .pins
            .iter()
            .map(|(url, pin)| {
                let mut m = crate::yaml::Map::default();
                m.insert("url".into(), Node::str(url));
                m.insert("commit".into(), Node::str(&pin.commit));
                m.insert("tree".into(), Node::str(&pin.tree));
                Node::Map(m)
            })
            .collect();
        let mut top = crate::yaml::Map::default();
        top.insert("version".into(), Node::Int(1));
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
        let empty = Lock::default().to_text();
        assert_eq!(Lock::parse(&empty, "ply.lock").unwrap(), Lock::default());
    }

    #[test]
    fn bad_files_are_errors() {
        for (text, says) in [
            ("version: 2\n", "version 2"),
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
