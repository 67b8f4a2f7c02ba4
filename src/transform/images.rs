//! `images` (kustomize's ImageTagTransformer, `api/filters/imagetag`): rewrite matching image
//! references — in every `containers`/`initContainers` list found anywhere in an object, then
//! at the places the images table names. CustomResourceDefinitions are never touched.

use std::borrow::Cow;

use regex::Regex;

use crate::diag::{Error, ErrorKind, Result};
use crate::kustomization::{FieldSpec, Image};
use crate::resource::Resource;
use crate::yaml::Node;

use super::fieldspec::{self, Create, GvkRef, PathStep};
use super::{FieldSpecTables, Unchanged};

/// The kustomization's `images:` entries, in order. `unchanged` hears of each `image` of a
/// `containers` or `initContainers` item that an entry wrote with the value it held, and of
/// every image written more than once in the step (a later entry may set back what an earlier
/// one changed); the field-spec table's places are not told.
pub(crate) fn apply(
    resources: &mut [Resource],
    images: &[Image],
    tables: &FieldSpecTables,
    mut unchanged: Unchanged<'_>,
) -> Result<()> {
    let mut places = ContainerPlaces::new(resources.len());
    let mut table = TablePlaces::new(resources.len(), &tables.images);
    // Per object, the images written so far in this step (list place, item), when telling.
    let mut written: Vec<Vec<(usize, usize)>> = match unchanged {
        Some(_) => vec![Vec::new(); resources.len()],
        None => Vec::new(),
    };
    for image in images {
        let tell = unchanged
            .as_mut()
            .map(|f| (&mut **f as _, written.as_mut_slice()));
        apply_with_places(
            resources,
            image,
            &tables.images,
            &mut places,
            &mut table,
            tell,
        )?;
    }
    Ok(())
}

/// One image entry with explicit field specs (the ImageTagTransformer plugin).
pub(crate) fn apply_one(
    resources: &mut [Resource],
    image: &Image,
    specs: &[FieldSpec],
) -> Result<()> {
    let mut places = ContainerPlaces::new(resources.len());
    let mut table = TablePlaces::new(resources.len(), specs);
    apply_with_places(resources, image, specs, &mut places, &mut table, None)
}

/// Who hears of the images an entry wrote ([`apply`]): the listener, and per object the images
/// written so far (the place's start in [`ContainerPlaces`], the item).
type Tell<'t> = (
    &'t mut dyn FnMut(usize, &[PathStep<'_>]),
    &'t mut [Vec<(usize, usize)>],
);

fn apply_with_places<'s>(
    resources: &mut [Resource],
    image: &Image,
    specs: &'s [FieldSpec],
    places: &mut ContainerPlaces,
    table: &mut TablePlaces<'s>,
    mut tell: Option<Tell<'_>>,
) -> Result<()> {
    let matcher = Matcher::new(&image.name);
    // kustomize runs its "legacy" walk over every object first, then the field-spec walk
    // (`api/internal/builtins/ImageTagTransformer.go`).
    for (i, r) in resources.iter_mut().enumerate() {
        if r.kind() == "CustomResourceDefinition" {
            continue;
        }
        let flat = places.of(i, &r.node);
        for (start, place) in each_place(flat) {
            let Some(list) = node_at(&mut r.node, place) else {
                continue;
            };
            let Some((f, written)) = tell.as_mut() else {
                update_container(list, image, &matcher)?;
                continue;
            };
            // Told: each item's image compared with what the entry wrote, and the items
            // written before by this step remembered.
            let mut told = Vec::new();
            if let Some(items) = list.as_seq_mut() {
                for (j, item) in items.iter_mut().enumerate() {
                    let Some(img) = item.get_mut("image") else {
                        continue;
                    };
                    let before = img.clone();
                    if !update(img, image, &matcher)? {
                        continue;
                    }
                    let again = written[i].contains(&(start, j));
                    if !again {
                        written[i].push((start, j));
                    }
                    if again || *img == before {
                        told.push(j);
                    }
                }
            }
            if !told.is_empty() {
                let mut path = path_of(&r.node, place);
                for j in told {
                    path.extend([PathStep::Index(j), PathStep::Key(Cow::Borrowed("image"))]);
                    f(i, &path);
                    path.truncate(path.len() - 2);
                }
            }
        }
    }
    let mut scratch = Vec::new();
    for (i, r) in resources.iter_mut().enumerate() {
        if r.kind() == "CustomResourceDefinition" {
            continue;
        }
        let set = &mut |n: &mut Node| update(n, image, &matcher).map(|_| ());
        match table.found.get_mut(i) {
            // Visited for an earlier entry: the same nodes again.
            Some(Some(found)) => {
                for (spec, at) in found.iter() {
                    fieldspec::apply_at(&mut r.node, spec, at, set)?;
                }
            }
            // First visit: walk, and keep where the setter was called when that is safe.
            Some(slot) if table.keep => {
                let gvk = GvkRef::of(&r.node);
                let selected: Vec<&FieldSpec> =
                    specs.iter().filter(|s| gvk.selected_by(s)).collect();
                let mut found = Vec::new();
                for spec in selected {
                    fieldspec::apply_selected_with_path(
                        &mut r.node,
                        spec,
                        Create::None,
                        &mut scratch,
                        &mut |n, at| {
                            found.push((spec, at.to_vec()));
                            set(n)
                        },
                    )?;
                }
                *slot = Some(found);
            }
            _ => fieldspec::apply_all(&mut r.node, specs, Create::None, set)?,
        }
    }
    Ok(())
}

/// The nodes of each object at which the images table's walk calls its setter, kept from the
/// first entry for the others: with `Create::None` a walk creates nothing (at most it turns a
/// null list into an empty one, the first time), and an image update only rewrites a scalar,
/// so later walks would reach the same nodes — unless a spec's path could rewrite the
/// object's `apiVersion` or `kind`, which select the specs (then nothing is kept).
struct TablePlaces<'s> {
    keep: bool,
    /// Per object, once walked: each place with its spec, in the order of the walk.
    found: Vec<Option<Vec<TablePlace<'s>>>>,
}

/// A node at which a spec's walk called its setter, and that spec.
type TablePlace<'s> = (&'s FieldSpec, Vec<PathStep<'s>>);

impl<'s> TablePlaces<'s> {
    fn new(objects: usize, specs: &'s [FieldSpec]) -> TablePlaces<'s> {
        let keep = !specs.iter().any(|s| {
            let path = s.path.strip_prefix('/').unwrap_or(&s.path);
            path.starts_with("apiVersion") || path.starts_with("kind")
        });
        TablePlaces {
            keep,
            found: vec![None; objects],
        }
    }
}

/// Where the `containers`/`initContainers` lists of each object are, found once per object
/// for all image entries: an image update only rewrites scalars (and a field-spec walk without
/// create at most turns a null list into an empty one), so the keys and positions stay.
struct ContainerPlaces {
    /// Per object, when found: each place as its length followed by its map-entry and list
    /// positions from the root, in the order kustomize's walk visits them.
    found: Vec<Option<Vec<usize>>>,
}

impl ContainerPlaces {
    fn new(objects: usize) -> ContainerPlaces {
        ContainerPlaces {
            found: vec![None; objects],
        }
    }

    /// The places in object `i` (looked for on first use).
    fn of(&mut self, i: usize, node: &Node) -> &[usize] {
        let Some(slot) = self.found.get_mut(i) else {
            return &[];
        };
        slot.get_or_insert_with(|| {
            let mut out = Vec::new();
            find_containers(node, &mut Vec::new(), &mut out);
            out
        })
    }
}

/// The places of a list that [`ContainerPlaces`] keeps, each with where it starts in `flat`.
fn each_place(flat: &[usize]) -> impl Iterator<Item = (usize, &[usize])> {
    let mut rest = flat;
    std::iter::from_fn(move || {
        let start = flat.len() - rest.len();
        let (&len, more) = rest.split_first()?;
        let (place, after) = more.split_at_checked(len)?;
        rest = after;
        Some((start, place))
    })
}

/// The path of a place of [`ContainerPlaces`], its keys copied (only for a told image).
fn path_of(node: &Node, place: &[usize]) -> Vec<PathStep<'static>> {
    let mut out = Vec::with_capacity(place.len() + 2);
    let mut cur = node;
    for &i in place {
        cur = match cur {
            Node::Map(m) => match m.get_index(i) {
                Some((k, v)) => {
                    out.push(PathStep::Key(Cow::Owned(k.to_string())));
                    v
                }
                None => break,
            },
            Node::Seq(items) => match items.get(i) {
                Some(v) => {
                    out.push(PathStep::Index(i));
                    v
                }
                None => break,
            },
            _ => break,
        };
    }
    out
}

/// The node at a place of [`ContainerPlaces`].
fn node_at<'a>(node: &'a mut Node, place: &[usize]) -> Option<&'a mut Node> {
    let mut cur = node;
    for &i in place {
        cur = match cur {
            Node::Map(m) => m.get_index_mut(i)?.1,
            Node::Seq(items) => items.get_mut(i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Whether an `images` entry named `name` matches the image reference `image`, as the
/// transformer decides it (kustomize's `image.IsImageMatched`, `api/image/image.go`: `name` is
/// a regular expression, then an optional tag and digest); for field provenance.
pub(crate) fn matches(name: &str, image: &str) -> bool {
    Matcher::new(name).is_match(image).unwrap_or(false)
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

/// Records the place of every value of a `containers` or `initContainers` key at any depth,
/// after the places inside it (`findFieldsFilter` in `api/filters/imagetag/legacy.go` walks
/// into the value, then updates it). `at` is the path to `node`.
fn find_containers(node: &Node, at: &mut Vec<usize>, out: &mut Vec<usize>) {
    match node {
        Node::Map(m) => {
            for (i, (k, v)) in m.iter().enumerate() {
                at.push(i);
                if !v.is_scalar() {
                    find_containers(v, at, out);
                }
                if k == "containers" || k == "initContainers" {
                    out.push(at.len());
                    out.extend_from_slice(at);
                }
                at.pop();
            }
        }
        Node::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                if !item.is_scalar() {
                    at.push(i);
                    find_containers(item, at, out);
                    at.pop();
                }
            }
        }
        _ => {}
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

/// Rewrites one image reference (kustomize's `imageTagUpdater.SetImageValue`); whether the
/// entry matched it (and so wrote it).
fn update(node: &mut Node, image: &Image, matcher: &Matcher) -> Result<bool> {
    let value: Cow<str> = match &*node {
        Node::Null => return Ok(false),
        Node::Str(s) => Cow::Borrowed(s),
        Node::Seq(_) | Node::Map(_) => {
            return Err(Error::new(
                ErrorKind::Transformer,
                format!("an image must be a string, found a {}", node.kind_name()),
            ));
        }
        other => Cow::Owned(other.scalar_text().unwrap_or_default()),
    };
    if !matcher.is_match(&value)? {
        return Ok(false);
    }
    let (mut name, mut tag, mut digest) = split(&value);
    fn set(o: &Option<String>) -> Option<&str> {
        o.as_deref().filter(|s| !s.is_empty())
    }
    let suffixed;
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
            digest = "";
        }
        (None, Some(d), _) => {
            tag = "";
            digest = d;
        }
        (None, None, Some(s)) => {
            suffixed = format!("{tag}{s}");
            tag = &suffixed;
            digest = "";
        }
        (None, None, None) => {}
    }
    let mut out = String::with_capacity(name.len() + tag.len() + digest.len() + 2);
    out.push_str(name);
    if !tag.is_empty() {
        out.push(':');
        out.push_str(tag);
    }
    if !digest.is_empty() {
        out.push('@');
        out.push_str(digest);
    }
    *node = super::untagged_over(node, out);
    Ok(true)
}

/// Splits an image reference into name, tag and digest (kustomize's `image.Split`): the tag
/// and digest separators are looked for after the first `/`, so a registry port
/// (`host:5000/app`) stays in the name.
pub(crate) fn split(image: &str) -> (&str, &str, &str) {
    let slash = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = image.get(slash..).unwrap_or("");
    let at = search.find('@').map(|i| i + slash);
    let colon = search.find(':').map(|i| i + slash);
    let part = |a: usize, b: usize| image.get(a..b).unwrap_or("");
    match (colon, at) {
        (None, None) => (image, "", ""),
        (None, Some(d)) => (part(0, d), "", part(d + 1, image.len())),
        (Some(c), Some(d)) if d < c => (part(0, d), "", part(d + 1, image.len())),
        (Some(c), Some(d)) => (part(0, c), part(c + 1, d), part(d + 1, image.len())),
        (Some(c), None) => (part(0, c), part(c + 1, image.len()), ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_like_kustomize() {
        let s = |i: &str| {
            let (a, b, c) = split(i);
            (a.to_string(), b.to_string(), c.to_string())
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

    /// Entries apply one after the other to the lists found at any depth (each list found
    /// once for all entries); a null `containers` under `spec` becomes an empty list through
    /// the table's `spec/containers[]/image`. Expected text from `kubectl kustomize`.
    #[test]
    fn entries_apply_in_order_at_any_depth() {
        use crate::yaml::{EmitOptions, emit_documents, parse::parse_one};
        let tables = FieldSpecTables::builtin().unwrap();
        let mut rs = vec![Resource::new(
            parse_one("apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  x:\n  - containers:\n    - image: a:1\n    - image: c\n    initContainers:\n    - image: b@sha256:x\n  containers: null\n  y:\n    containers: 3\n").unwrap(),
            None,
        )];
        let image =
            |name: &str, new_name: Option<&str>, tag: Option<&str>, digest: Option<&str>| Image {
                name: name.into(),
                new_name: new_name.map(Into::into),
                new_tag: tag.map(Into::into),
                digest: digest.map(Into::into),
                ..Image::default()
            };
        let images = [
            image("a", Some("b"), None, None),
            image("b", None, Some("2"), None),
            image("c", None, None, Some("sha256:d")),
        ];
        apply(&mut rs, &images, &tables, None).unwrap();
        assert_eq!(
            emit_documents(rs.iter().map(|r| &r.node), EmitOptions::default()),
            "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  containers: []\n  x:\n  - containers:\n    - image: b:2\n    - image: c@sha256:d\n    initContainers:\n    - image: b:2\n  \"y\":\n    containers: 3\n"
        );
    }

    /// Places found by the table's walk for the first entry are used for the next ones, with
    /// the walk's error context.
    #[test]
    fn later_entries_use_the_table_places() {
        use crate::yaml::parse::parse_one;
        let mut tables = FieldSpecTables::builtin().unwrap();
        tables
            .merge_config(&parse_one("images:\n- path: spec/img\n").unwrap())
            .unwrap();
        let mut rs = vec![Resource::new(
            parse_one("apiVersion: v1\nkind: X\nmetadata:\n  name: t\nspec:\n  img: nginx\n")
                .unwrap(),
            None,
        )];
        let image = |name: &str, tag: &str| Image {
            name: name.into(),
            new_tag: Some(tag.into()),
            ..Image::default()
        };
        apply(
            &mut rs,
            &[image("nginx", "1"), image("nginx", "2")],
            &tables,
            None,
        )
        .unwrap();
        assert_eq!(rs[0].node.str_at(&["spec", "img"]), Some("nginx:2"));
        let e = apply(
            &mut rs,
            &[image("nginx", "3"), image("a[", "4")],
            &tables,
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "considering field 'spec/img' of object ~G_v1_X|~X|t: images: invalid image name \"a[\""
        );
        assert_eq!(rs[0].node.str_at(&["spec", "img"]), Some("nginx:3"));
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

    /// For field provenance, `apply` tells the container images an entry wrote with the value
    /// they held (`a:1` by its first entry), and every write of an image two entries match
    /// (`b`: changed, then set back); not an image changed once (`c`), nor one no entry matches.
    #[test]
    fn tells_the_images_that_kept_their_value() {
        use crate::yaml::parse::parse_one;
        let tables = FieldSpecTables::builtin().unwrap();
        let mut rs = vec![Resource::new(
            parse_one("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - image: a:1\n      - image: b:1\n      - image: c:1\n      - image: d:1\n").unwrap(),
            None,
        )];
        let image = |name: &str, tag: &str| Image {
            name: name.into(),
            new_tag: Some(tag.into()),
            ..Image::default()
        };
        let images = [
            image("a", "1"),
            image("b", "2"),
            image("b", "1"),
            image("c", "2"),
        ];
        let mut told: Vec<(usize, String)> = Vec::new();
        let mut tell =
            |i: usize, at: &[PathStep<'_>]| told.push((i, crate::transform::fieldspec::dotted(at)));
        apply(&mut rs, &images, &tables, Some(&mut tell)).unwrap();
        assert_eq!(
            told,
            [
                (0, "spec.template.spec.containers.0.image".to_string()),
                (0, "spec.template.spec.containers.1.image".to_string()),
            ]
        );
    }
}
