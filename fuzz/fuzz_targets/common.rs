//! Shared by the fuzz targets: the input as NUL-separated text parts, each read as YAML.
#![allow(dead_code)]

use ply::Gvk;
use ply::yaml::Node;

/// The input's text (invalid UTF-8 replaced) cut at NUL bytes.
pub fn parts(data: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(data)
        .split('\0')
        .map(str::to_string)
        .collect()
}

/// The first `n` parts read as one YAML document each (`None` when one does not read: the
/// reader's own errors are the reader target's business).
pub fn docs(data: &[u8], n: usize) -> Option<Vec<Node>> {
    let parts = parts(data);
    let mut out = Vec::new();
    for i in 0..n {
        let text = parts.get(i).map_or("", String::as_str);
        out.push(ply::testing::parse_one(text).ok()?);
    }
    Some(out)
}

pub fn gvk(n: &Node) -> Gvk {
    Gvk::of(n)
}
