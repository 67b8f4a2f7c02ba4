//! A check of `images:` entries: a reference that cannot be valid once the images transformer
//! has written it (two tags, a digest that is not `algorithm:hex`, a tag with characters a tag
//! cannot hold, whitespace) is a warning at the entry's line, an error with `--strict`.
//! kustomize writes such references without a word (`nginx:1.25:1.27`); the container runtime
//! refuses them at deploy time. Reads only the kustomization; the output is unchanged.

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::kustomization::Loaded;
use crate::kustomization::types::Image;
use crate::yaml::path::PathSeg;

/// What is wrong with one entry, if anything.
fn set(o: &Option<String>) -> Option<&str> {
    o.as_deref().filter(|s| !s.is_empty())
}

fn problem(image: &Image) -> Option<String> {
    let fields = [
        ("newName", set(&image.new_name)),
        ("newTag", set(&image.new_tag)),
        ("digest", set(&image.digest)),
        ("tagSuffix", set(&image.tag_suffix)),
    ];
    for (field, v) in fields {
        if v.is_some_and(|v| v.chars().any(char::is_whitespace)) {
            return Some(format!("`{field}` contains whitespace"));
        }
    }
    if let Some(name) = set(&image.new_name) {
        let last = name.rsplit('/').next().unwrap_or(name);
        let has_tag = last.contains(':');
        let has_digest = name.contains('@');
        let adds = set(&image.new_tag).is_some()
            || set(&image.digest).is_some()
            || set(&image.tag_suffix).is_some();
        if (has_tag || has_digest) && adds {
            let what = if has_digest { "a digest" } else { "a tag" };
            return Some(format!(
                "`newName: {name}` already carries {what}, and the entry adds another (the result has two)"
            ));
        }
    }
    if let Some(tag) = set(&image.new_tag) {
        // The reference grammar's tag: `[\w][\w.-]{0,127}`.
        let ok = tag.len() <= 128
            && tag
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !ok {
            return Some(format!(
                "`newTag: {tag}` is not a valid tag (letters, digits, `_`, `.`, `-`; at most 128; a `:` or `@` would make two tags or a digest)"
            ));
        }
    }
    if let Some(digest) = set(&image.digest) {
        let ok = digest.split_once(':').is_some_and(|(algo, hex)| {
            !algo.is_empty()
                && algo.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && algo
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '_' | '-'))
                && !hex.is_empty()
                && hex.chars().all(|c| c.is_ascii_hexdigit())
        });
        if !ok {
            return Some(format!(
                "`digest: {digest}` is not `algorithm:hex` (such as `sha256:` and 64 hexadecimal digits)"
            ));
        }
    }
    None
}

/// Warns (or fails, with `strict`) for every `images:` entry that makes an invalid reference.
pub(super) fn check(loaded: &Loaded, strict: bool, warnings: &mut Warnings) -> Result<()> {
    for (i, image) in loaded.kustomization.images.iter().enumerate() {
        let Some(problem) = problem(image) else {
            continue;
        };
        let at = loaded.key_location(&[PathSeg::Key("images".into()), PathSeg::Index(i)]);
        let message = format!(
            "images entry for `{}` makes an invalid image reference: {problem}",
            image.name
        );
        if strict {
            return Err(Error::new(ErrorKind::Strict, message)
                .at(at)
                .label("this entry")
                .help("fix the entry; without --strict (PLY_STRICT) this is a warning"));
        }
        warnings.warn(format!("{}: {message}", at.describe()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(name: Option<&str>, tag: Option<&str>, digest: Option<&str>) -> Image {
        Image {
            name: "nginx".into(),
            new_name: name.map(str::to_string),
            new_tag: tag.map(str::to_string),
            digest: digest.map(str::to_string),
            tag_suffix: None,
        }
    }

    #[test]
    fn valid_entries_pass() {
        assert_eq!(
            problem(&image(Some("registry:5000/nginx"), Some("1.27"), None)),
            None
        );
        let d = format!("sha256:{}", "a".repeat(64));
        assert_eq!(problem(&image(None, Some("v1.2_rc-1"), Some(&d))), None);
        assert_eq!(problem(&image(Some("nginx:1.25"), None, None)), None);
        assert_eq!(problem(&image(None, None, Some("sha256:24a0c4b4"))), None);
    }

    #[test]
    fn invalid_entries_are_named() {
        assert!(
            problem(&image(Some("nginx:1.25"), Some("1.27"), None))
                .unwrap()
                .contains("two")
        );
        assert!(
            problem(&image(None, Some("1.25:1.27"), None))
                .unwrap()
                .contains("not a valid tag")
        );
        assert!(
            problem(&image(None, None, Some("sha256:xyz")))
                .unwrap()
                .contains("algorithm:hex")
        );
        assert!(
            problem(&image(Some("my nginx"), None, None))
                .unwrap()
                .contains("whitespace")
        );
    }
}
