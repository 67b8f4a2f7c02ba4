//! `images` (kustomize's ImageTagTransformer, `api/filters/imagetag`): rewrite matching image
//! references — in every `containers`/`initContainers` list found anywhere in an object, then
//! at the places the images table names. CustomResourceDefinitions are never touched.

use regex::Regex;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{FieldSpec, Image};
use crate::resource::Resource;
use crate::yaml::Node;

use super::FieldSpecTables;
use super::fieldspec::{self, Create};

pub fn apply(resources: &mut [Resource], images: &[Image], tables: &FieldSpecTables) -> Result<()> {
    for image in images {
        apply_one(resources, image, &tables.images)?;
    }
    Ok(())
}

/// One image entry with explicit field specs (the ImageTagTransformer plugin).
pub fn apply_one(resources: &mut [Resource], image: &Image, specs: &[FieldSpec]) -> Result<()> {
    {
        let matcher = Matcher::new(&image.name);
        // kustomize runs its "legacy" walk over every object first, then the field-spec walk
        // (`api/internal/builtins/ImageTagTransformer.go`).
        for r in resources.iter_mut() {
            if r.kind() == "CustomResourceDefinition" {
                continue;
            }
            find_containers(&mut r.node, &mut |c| update_container(c, image, &matcher))?;
        }
        for r in resources.iter_mut() {
            if r.kind() == "CustomResourceDefinition" {
                continue;
            }
            fieldspec::apply_all(&mut r.node, specs, Create::None, &mut |n| {
                update(n, image, &matcher)
            })?;
        }
    }
    Ok(())
}

/// Whether an image reference names the image `name` (kustomize's `image.IsImageMatched`: the
/// name followed by an optional `:tag` and an optional `@sha256:digest`). kustomize puts the
/// name into a regular expression unescaped (so `.` matches any character there too) and
/// crashes on the first image it compares when the pattern is invalid; ply reports an error at
/// that point (and, like kustomize, none when there is no image to compare).
struct Matcher {
    name: String,
    /// `None` when `name` is a simple pattern (see `crate::pattern`), matched by hand;
    /// `Some(None)` when it is not a valid regular expression.
    re: Option<Option<Regex>>,
}

/// The characters of kustomize's tag and digest classes `[a-zA-Z0-9_.{}-]`.
fn is_tag_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '{' | '}' | '-')
}

impl Matcher {
    fn new(name: &str) -> Matcher {
        let re = (!crate::pattern::is_simple(name)).then(|| {
            Regex::new(&format!(
                "^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$"
            ))
            .ok()
        });
        Matcher {
            name: name.to_string(),
            re,
        }
    }

    fn is_match(&self, s: &str) -> Result<bool> {
        match &self.re {
            None => Ok(Self::simple_match(&self.name, s)),
            Some(Some(re)) => Ok(re.is_match(s)),
            Some(None) => Err(Error::new(
                ErrorKind::Transformer,
                format!("images: invalid image name {:?}", self.name),
            )
            .help("kustomize reads `name` as a regular expression; escape special characters such as `[`")),
        }
    }

    /// The same match as the regular expression above for a simple name: the name takes
    /// exactly its own number of characters, then an optional `:tag` and an optional
    /// `@sha256:digest`, each of tag characters (neither `:` nor `@` is one, so no
    /// backtracking is needed).
    fn simple_match(name: &str, s: &str) -> bool {
        let Some(end) = crate::pattern::simple_prefix(name, s) else {
            return false;
        };
        let mut rest = &s[end..];
        if let Some(r) = rest.strip_prefix(':') {
            rest = r.trim_start_matches(is_tag_char);
        }
        if let Some(r) = rest.strip_prefix("@sha256:") {
            rest = r.trim_start_matches(is_tag_char);
        }
        rest.is_empty()
    }
}

/// Calls `f` on every value of a `containers` or `initContainers` key at any depth, after
/// walking into it (`findFieldsFilter` in `api/filters/imagetag/legacy.go`).
fn find_containers(node: &mut Node, f: &mut dyn FnMut(&mut Node) -> Result<()>) -> Result<()> {
    match node {
        Node::Map(m) => {
            for (k, v) in m.iter_mut() {
                find_containers(v, f)?;
                if k == "containers" || k == "initContainers" {
                    f(v)?;
                }
            }
            Ok(())
        }
        Node::Seq(items) => {
            for item in items {
                find_containers(item, f)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn update_container(list: &mut Node, image: &Image, matcher: &Matcher) -> Result<()> {
    let Some(items) = list.as_seq_mut() else {
        return Ok(());
    };
    for item in items {
        if let Some(img) = item.get_mut("image") {
            update(img, image, matcher)?;
        }
    }
    Ok(())
}

/// Rewrites one image reference (kustomize's `imageTagUpdater.SetImageValue`).
fn update(node: &mut Node, image: &Image, matcher: &Matcher) -> Result<()> {
    if !node.is_scalar() {
        return Err(Error::new(
            ErrorKind::Transformer,
            format!("an image must be a string, found a {}", node.kind_name()),
        ));
    }
    let Some(value) = node.scalar_text().filter(|_| !node.is_null()) else {
        return Ok(());
    };
    if !matcher.is_match(&value)? {
        return Ok(());
    }
    let (mut name, mut tag, mut digest) = split(&value);
    let set = |o: &Option<String>| o.as_deref().filter(|s| !s.is_empty()).map(str::to_string);
    if let Some(n) = set(&image.new_name) {
        name = n;
    }
    match (
        set(&image.new_tag),
        set(&image.digest),
        set(&image.tag_suffix),
    ) {
        (Some(t), Some(d), _) => {
            tag = t;
            digest = d;
        }
        (Some(t), None, _) => {
            tag = t;
            digest = String::new();
        }
        (None, Some(d), _) => {
            tag = String::new();
            digest = d;
        }
        (None, None, Some(s)) => {
            tag.push_str(&s);
            digest = String::new();
        }
        (None, None, None) => {}
    }
    if !tag.is_empty() {
        name = format!("{name}:{tag}");
    }
    if !digest.is_empty() {
        name = format!("{name}@{digest}");
    }
    *node = Node::Str(name);
    Ok(())
}

/// Splits an image reference into name, tag and digest (kustomize's `image.Split`): the tag
/// and digest separators are looked for after the first `/`, so a registry port
/// (`host:5000/app`) stays in the name.
pub fn split(image: &str) -> (String, String, String) {
    let slash = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = image.get(slash..).unwrap_or("");
    let at = search.find('@').map(|i| i + slash);
    let colon = search.find(':').map(|i| i + slash);
    let part = |a: usize, b: usize| image.get(a..b).unwrap_or("").to_string();
    match (colon, at) {
        (None, None) => (image.to_string(), String::new(), String::new()),
        (None, Some(d)) => (part(0, d), String::new(), part(d + 1, image.len())),
        (Some(c), Some(d)) if d < c => (part(0, d), String::new(), part(d + 1, image.len())),
        (Some(c), Some(d)) => (part(0, c), part(c + 1, d), part(d + 1, image.len())),
        (Some(c), None) => (part(0, c), part(c + 1, image.len()), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_like_kustomize() {
        let s = |i: &str| {
            let (a, b, c) = split(i);
            (a, b, c)
        };
        assert_eq!(s("nginx"), ("nginx".into(), "".into(), "".into()));
        assert_eq!(s("nginx:1.2"), ("nginx".into(), "1.2".into(), "".into()));
        assert_eq!(
            s("nginx@sha256:abc"),
            ("nginx".into(), "".into(), "sha256:abc".into())
        );
        assert_eq!(
            s("nginx:1.2@sha256:abc"),
            ("nginx".into(), "1.2".into(), "sha256:abc".into())
        );
        assert_eq!(
            s("host:5000/app"),
            ("host:5000/app".into(), "".into(), "".into())
        );
        assert_eq!(
            s("host:5000/app:v1"),
            ("host:5000/app".into(), "v1".into(), "".into())
        );
    }

    #[test]
    fn matcher() {
        let m = Matcher::new("nginx");
        let m = |s: &str| m.is_match(s).unwrap();
        assert!(m("nginx"));
        assert!(m("nginx:1.2"));
        assert!(m("nginx@sha256:abc"));
        assert!(!m("my/nginx"));
        assert!(!m("nginx-x"));
        assert!(Matcher::new("[").is_match("x").is_err());
        assert!(Matcher::new("[").is_match("x").is_err());
    }
}

#[cfg(test)]
mod matcher_tests {
    use super::*;

    /// The hand matcher for simple names agrees with kustomize's regular expression.
    #[test]
    fn simple_names_match_like_the_regex() {
        let names = ["nginx", "registry.example.com/team/app", "a.b", "nginx:1.0"];
        let refs = [
            "nginx",
            "nginx:1.2",
            "nginx:1.2@sha256:abc",
            "nginx@sha256:abc",
            "nginx@sha256",
            "nginx:",
            "nginx:1.2:3",
            "nginx:{x}_-",
            "nginxx",
            "ngin",
            "nginx@sha256:ab:c",
            "registry.example.com/team/app:v1",
            "registryXexample.com/team/app",
            "registry.example.com/team/app/x",
            "aXb",
            "a\nb",
            "nginx:1.0",
            "nginx:1.0:2",
            "nginx:1.0@sha256:x",
        ];
        for name in names {
            let m = Matcher::new(name);
            assert!(m.re.is_none(), "{name} is simple");
            let re = Regex::new(&format!(
                "^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$"
            ))
            .unwrap();
            for s in refs {
                assert_eq!(m.is_match(s).unwrap(), re.is_match(s), "{name} on {s}");
            }
        }
    }

    #[test]
    fn other_names_use_the_regex() {
        let m = Matcher::new("ngin.*");
        assert!(m.is_match("nginx:1").unwrap());
        assert!(Matcher::new("a[").is_match("a").is_err());
    }
}
