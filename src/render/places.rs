//! Where the steps that read other objects or other files set a field (issue 29): a
//! generator's env-file line and `files:` file, a replacement's entry and source field, a
//! var's entry and source field, a name reference's referenced name, a hash suffix's generator
//! entry, a helm chart's template file, and a remote base's locked URL. Used only with
//! `RenderOptions::provenance` on; `render/provenance.rs` records what these places say.

use std::path::Path;
use std::sync::Arc;

use super::provenance::{in_kustomization, record_sourced};
use crate::fasthash::FastMap;
use crate::fs::Fs;
use crate::kustomization::Loaded;
use crate::kustomization::load::locate_value;
use crate::resource::Resource;
use crate::resource::provenance::{Place, Source, Step};
use crate::source::SourceFile;
use crate::yaml::Node;
use crate::yaml::path::{PathSeg, path_text};

/// A place and what the step read besides it.
pub(crate) type Found = (Option<Place>, Option<Box<Source>>);

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// `apiVersion`, `kind`, `namespace`, `name` of an object.
pub(crate) fn identity(r: &Resource) -> [String; 4] {
    [
        r.node.str_at(&["apiVersion"]).unwrap_or("").to_string(),
        r.kind().to_string(),
        r.namespace().to_string(),
        r.name().to_string(),
    ]
}

/// The newest recorded place of the field at `path` of `r` (the first origin that has one).
pub(crate) fn field_place(r: &Resource, path: &str) -> Option<Place> {
    let p = r.provenance.as_ref()?;
    let chain = p.field(&crate::yaml::path::parse_path(path)?)?;
    chain.origins(path).into_iter().find_map(|o| o.place)
}

/// The place of the newest origin of the field at `path` of `r` by `step`.
fn place_by(r: &Resource, path: &str, step: Step) -> Option<Place> {
    let p = r.provenance.as_ref()?;
    let chain = p.field(&crate::yaml::path::parse_path(path)?)?;
    chain
        .origins(path)
        .into_iter()
        .find(|o| o.step == step)?
        .place
}

/// The path of the node `target` (by address) inside `root`.
pub(crate) fn path_of(root: &Node, target: &Node) -> Option<Vec<PathSeg>> {
    fn go(n: &Node, target: &Node, path: &mut Vec<PathSeg>) -> bool {
        if std::ptr::eq(n, target) {
            return true;
        }
        match n {
            Node::Map(m) => {
                for (k, v) in m.iter() {
                    path.push(PathSeg::Key(k.to_string()));
                    if go(v, target, path) {
                        return true;
                    }
                    path.pop();
                }
                false
            }
            Node::Seq(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.push(PathSeg::Index(i));
                    if go(v, target, path) {
                        return true;
                    }
                    path.pop();
                }
                false
            }
            Node::Spelled(s) => go(&s.value, target, path),
            _ => false,
        }
    }
    let mut path = Vec::new();
    go(root, target, &mut path).then_some(path)
}

/// The source of a value read from the field at `path` of `r`: the object, the field, and
/// where that field's value was set.
pub(crate) fn object_source(r: &Resource, path: &[PathSeg]) -> Box<Source> {
    let path = path_text(path);
    Box::new(Source {
        object: Some(identity(r)),
        place: field_place(r, &path),
        path: Some(path),
    })
}

// ---------------------------------------------------------------------------------------
// Generators: env files and `files:`.

/// The data keys a kustomization's generators read from env files and `files:`, by
/// generator (`configMapGenerator`/`secretGenerator` and the generator's name): the place of
/// each value (the env file's `KEY=value` line, at the value; a file's first line) and the
/// kustomization entry naming the file.
#[derive(Default)]
pub(crate) struct GeneratorFiles {
    by_generator: FastMap<(&'static str, String), KeyPlaces>,
}

/// A generator's data keys read from files: the value's place and the entry naming the file.
type KeyPlaces = FastMap<String, (Place, Place)>;

impl GeneratorFiles {
    /// Reads the env files and `files:` of `loaded`'s generators. A file that cannot be read
    /// as text gives no place (the generator already read it, or failed on it).
    pub(crate) fn read(fs: &dyn Fs, loaded: &Loaded) -> GeneratorFiles {
        let mut out = GeneratorFiles::default();
        let k = &loaded.kustomization;
        for (field, list) in [
            ("configMapGenerator", &k.config_map_generator),
            ("secretGenerator", &k.secret_generator),
        ] {
            for (i, g) in list.iter().enumerate() {
                let Some(name) = g.name.clone() else { continue };
                let mut keys = KeyPlaces::default();
                let entry = |sub: &str, j: Option<usize>| {
                    let mut p = vec![key(field), PathSeg::Index(i), key(sub)];
                    p.extend(j.map(PathSeg::Index));
                    in_kustomization(loaded, p)
                };
                let envs = g
                    .envs
                    .iter()
                    .enumerate()
                    .map(|(j, e)| (e, entry("envs", Some(j))))
                    .chain(g.env.iter().map(|e| (e, entry("env", None))));
                for (path, named) in envs {
                    let Some(file) = read_text(fs, loaded, path) else {
                        continue;
                    };
                    for (k, offset) in env_values(&file.text) {
                        let place = Place {
                            file: Arc::clone(&file),
                            start: offset,
                            path: String::new(),
                        };
                        keys.insert(k, (place, named.clone()));
                    }
                }
                for (j, f) in g.files.iter().enumerate() {
                    // kustomize's `ParseFileSource` (api/kv/kv.go): `key=path`, or the path's
                    // base name as the key.
                    let (k, path) = match f.split_once('=') {
                        Some((k, p)) => (k.to_string(), p),
                        None => (
                            Path::new(f)
                                .file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or_default(),
                            f.as_str(),
                        ),
                    };
                    let named = entry("files", Some(j));
                    let place = match read_text(fs, loaded, path) {
                        Some(file) => Place {
                            file,
                            start: 0,
                            path: String::new(),
                        },
                        None => named.clone(),
                    };
                    keys.insert(k, (place, named));
                }
                if !keys.is_empty() {
                    out.by_generator.insert((field, name), keys);
                }
            }
        }
        out
    }

    /// The place of a generated object's `data` (or `binaryData`) key read from a file, and
    /// the entry naming the file; `None` for any other field.
    pub(crate) fn find(&self, r: &Resource, path: &[PathSeg]) -> Option<Found> {
        if self.by_generator.is_empty() {
            return None;
        }
        let [PathSeg::Key(top), PathSeg::Key(data_key)] = path else {
            return None;
        };
        if top != "data" && top != "binaryData" {
            return None;
        }
        let field = if r.kind() == "Secret" {
            "secretGenerator"
        } else {
            "configMapGenerator"
        };
        // Generators run before any prefix or hash suffix: the name is the generator's.
        let keys = self.by_generator.get(&(field, r.name().to_string()))?;
        let (place, named) = keys.get(data_key)?;
        Some((
            Some(place.clone()),
            Some(Box::new(Source {
                object: None,
                path: None,
                place: Some(named.clone()),
            })),
        ))
    }
}

fn read_text(fs: &dyn Fs, loaded: &Loaded, path: &str) -> Option<Arc<SourceFile>> {
    let file = crate::fs::join(&loaded.dir, path);
    let text = fs.read_to_string(&file).ok()?;
    Some(SourceFile::new(&file, text))
}

/// The keys of an env file and the byte offset of each value, as kustomize reads the file
/// (`keyValuesFromLine`, api/kv/kv.go): leading white space trimmed, blank lines and `#`
/// comments skipped, `KEY=value` split at the first `=`; a later line of a key wins.
pub(crate) fn env_values(text: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut pos = 0;
    for (n, raw) in text.split_inclusive('\n').enumerate() {
        let line_start = pos;
        pos += raw.len();
        let mut line = raw.trim_end_matches('\n').trim_end_matches('\r');
        let mut at = line_start;
        if n == 0
            && let Some(rest) = line.strip_prefix('\u{feff}')
        {
            line = rest;
            at += '\u{feff}'.len_utf8();
        }
        let trimmed = line.trim_start();
        at += line.len() - trimmed.len();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((k, _)) = trimmed.split_once('=') else {
            continue;
        };
        let offset = at + k.len() + 1;
        out.retain(|(x, _)| x != k);
        out.push((k.to_string(), offset));
    }
    out
}

// ---------------------------------------------------------------------------------------
// Replacements.

/// Where one replacement is written: its entry in the kustomization
/// (`replacements[i]`), or, for an entry `path: FILE`, the replacement in that file (`doc`:
/// its index when the file holds a list).
pub(crate) fn replacement_place(
    loaded: &Loaded,
    i: usize,
    file: Option<(&Arc<SourceFile>, Option<usize>)>,
    literal: bool,
) -> Place {
    match file {
        Some((file, doc)) => Place {
            file: Arc::clone(file),
            start: 0,
            path: doc
                .map(|d| path_text(&[PathSeg::<String>::Index(d)]))
                .unwrap_or_default(),
        },
        None => {
            let mut p = vec![key("replacements"), PathSeg::Index(i)];
            if literal {
                p.push(key("sourceValue"));
            }
            in_kustomization(loaded, p)
        }
    }
}

/// Records one replacement whose entry is at `place`, which read the field `source` (the
/// object's index in `acc` and the field's path) when it read an object.
pub(crate) fn record_replacement(acc: &mut [Resource], place: &Place, source: Option<Box<Source>>) {
    record_sourced(acc, Step::Replacement, &|_, _, _| {
        (Some(place.clone()), source.clone())
    });
}

// ---------------------------------------------------------------------------------------
// The root's steps: hash suffixes, name references, vars.

/// The generator entry of each generated object, by kind, namespace and name before its hash
/// suffix: the entry whose contents made the hash (`configMapGenerator[i]`).
pub(crate) fn hash_places(acc: &[Resource]) -> FastMap<(String, String, String), Place> {
    let mut out = FastMap::default();
    for r in acc.iter().filter(|r| r.needs_hash_suffix) {
        if let Some(mut p) = place_by(r, "metadata.name", Step::Generator) {
            if let Some(entry) = p.path.strip_suffix(".name") {
                p.path = entry.to_string();
            }
            out.insert(
                (
                    r.kind().to_string(),
                    r.namespace().to_string(),
                    r.name().to_string(),
                ),
                p,
            );
        }
    }
    out
}

/// The place of a hash suffix on `r`'s name, which was `before`.
pub(crate) fn hash_place(
    places: &FastMap<(String, String, String), Place>,
    r: &Resource,
    before: Option<&Node>,
) -> Option<Place> {
    let old = before.and_then(Node::as_str)?;
    places
        .get(&(
            r.kind().to_string(),
            r.namespace().to_string(),
            old.to_string(),
        ))
        .cloned()
}

/// Every object's name → its identity and where its name was last set, to place a name
/// reference at the referenced object's name.
pub(crate) type Names = FastMap<String, Vec<([String; 4], Option<Place>)>>;

pub(crate) fn names(acc: &[Resource]) -> Names {
    let mut out: Names = FastMap::default();
    for r in acc {
        out.entry(r.name().to_string())
            .or_default()
            .push((identity(r), field_place(r, "metadata.name")));
    }
    out
}

/// The referenced object of a name reference that wrote the field at `path` of `r`: the
/// object now named by the field's value (one in `r`'s namespace first), its `metadata.name`,
/// and where that name was set.
pub(crate) fn name_reference(names: &Names, r: &Resource, path: &[PathSeg]) -> Found {
    let Some(value) = value_at(&r.node, path).and_then(Node::as_str) else {
        return (None, None);
    };
    let Some(list) = names.get(value) else {
        return (None, None);
    };
    let ns = r.namespace();
    let Some((object, place)) = list
        .iter()
        .find(|(id, _)| id[2] == ns && id[1] != r.kind())
        .or_else(|| list.iter().find(|(id, _)| id[1] != r.kind()))
        .or_else(|| list.first())
    else {
        return (None, None);
    };
    (
        place.clone(),
        Some(Box::new(Source {
            object: Some(object.clone()),
            path: Some("metadata.name".into()),
            place: place.clone(),
        })),
    )
}

fn value_at<'a>(n: &'a Node, path: &[PathSeg]) -> Option<&'a Node> {
    let mut n = n.unspelled();
    for s in path {
        n = match (s, n) {
            (PathSeg::Key(k), Node::Map(m)) => m.get(k)?.unspelled(),
            (PathSeg::Index(i), Node::Seq(v)) => v.get(*i)?.unspelled(),
            _ => return None,
        };
    }
    Some(n)
}

/// Each var's `vars:` entry (the `name` of `vars[i]` in the kustomization declaring it) and
/// the field it reads: the object bound to it, the field, and where its value was set.
pub(crate) type VarPlaces = FastMap<String, (Place, Option<Box<Source>>)>;

/// Notes where `loaded` declares its vars.
pub(crate) fn declare_vars(places: &mut FastMap<String, Place>, loaded: &Loaded) {
    for (i, v) in loaded.kustomization.vars.iter().enumerate() {
        places.insert(
            v.name.clone(),
            in_kustomization(loaded, vec![key("vars"), PathSeg::Index(i), key("name")]),
        );
    }
}

/// The vars' entries and sources, before they are put into their `$(VAR)` uses.
pub(crate) fn var_places(
    declared: &FastMap<String, Place>,
    acc: &[Resource],
    field_of: &dyn Fn(&str) -> Option<String>,
) -> VarPlaces {
    let mut out = VarPlaces::default();
    for (name, place) in declared {
        let source = acc
            .iter()
            .find(|r| r.ref_var_names.iter().any(|n| n == name))
            .and_then(|r| {
                let fp = field_of(name)?;
                let parts = crate::transform::refpath::smarter_split_path(&fp, '.');
                let node = crate::transform::refpath::lookup(&r.node, &parts).ok()??;
                let path = path_of(&r.node, node)?;
                Some(object_source(r, &path))
            });
        out.insert(name.clone(), (place.clone(), source));
    }
    out
}

/// The var put into the field that held `before`: the first `$(NAME)` in it that is a var.
pub(crate) fn var_origin(vars: &VarPlaces, before: Option<&Node>) -> Found {
    let Some(text) = before.and_then(Node::scalar_text) else {
        return (None, None);
    };
    let mut rest = text.as_str();
    while let Some(at) = rest.find("$(") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        if let Some((place, source)) = vars.get(&after[..end]) {
            return (Some(place.clone()), source.clone());
        }
        rest = &after[end..];
    }
    (None, None)
}

// ---------------------------------------------------------------------------------------
// Remote bases.

/// Names the files of the remote base `url` (cloned at `tree`) in the origins of `acc` by the
/// URL instead of the cache path: `HOST/REPO//PATH?ref=COMMIT`, the path inside the
/// repository and the commit the lock pins (the ref as written when nothing is locked), the
/// form kustomize reads as a remote file at that commit. Lines and columns are unchanged:
/// the text is the locked tree's.
pub(crate) fn name_remote_files(
    acc: &mut [Resource],
    url: &str,
    tree: &crate::fs::remote::RemoteTree,
) -> crate::diag::Result<()> {
    let spec = crate::fs::remote::repo_spec(url)?;
    let at = tree.commit.as_deref().unwrap_or(&spec.git_ref);
    let mut renamed: FastMap<usize, Arc<SourceFile>> = FastMap::default();
    let mut rename = |place: &mut Place| {
        let Ok(rel) = place.file.path.strip_prefix(&tree.clone) else {
            return;
        };
        let key = Arc::as_ptr(&place.file) as usize;
        let file = renamed.entry(key).or_insert_with(|| {
            let rel = rel.to_string_lossy().replace('\\', "/");
            let repo = crate::remote::url::redact(&spec.clone_spec());
            let mut display = format!("{repo}//{rel}");
            if !at.is_empty() {
                display.push_str(&format!("?ref={at}"));
            }
            Arc::new(SourceFile {
                path: place.file.path.clone(),
                display,
                text: place.file.text.clone(),
                quote: place.file.quote,
                remote: Some(repo),
            })
        });
        place.file = Arc::clone(file);
    };
    for r in acc.iter_mut() {
        let Some(p) = r.provenance.as_mut() else {
            continue;
        };
        if let Some(read) = p.read.as_mut() {
            let mut place = Place {
                file: Arc::clone(&read.file),
                start: read.start,
                path: String::new(),
            };
            rename(&mut place);
            read.file = place.file;
        }
        p.tree.for_each_origin_mut(&mut |o| {
            if let Some(place) = o.place.as_mut() {
                rename(place);
            }
            if let Some(place) = o.source.as_mut().and_then(|s| s.place.as_mut()) {
                rename(place);
            }
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Helm.

/// The template a helm chart rendered a document from: helm writes `# Source:
/// CHART/templates/FILE` above each document (`helm template`'s manifest header, pkg/
/// releaseutil); the file is `FILE` under the chart's directory `chart_dir`. `None` when the
/// comment is missing or the file is not there.
pub(crate) fn helm_template(
    fs: &dyn Fs,
    output: &SourceFile,
    doc_start: usize,
    chart_dir: &Path,
) -> Option<Arc<SourceFile>> {
    let doc_start = doc_start.min(output.text.len());
    // The header: the comment lines at the document's start (after its `---`), else those
    // between the previous `---` and the start.
    let ahead = output.text[doc_start..]
        .lines()
        .skip_while(|l| l.starts_with("---"))
        .take_while(|l| l.trim_start().starts_with('#'));
    let text = &output.text[..doc_start];
    let from = text.rfind("\n---").map_or(0, |i| i + 1);
    let source = ahead
        .chain(text[from..].lines())
        .find_map(|l| l.trim().strip_prefix("# Source:"))?
        .trim();
    let within = source.split_once('/')?.1;
    if within.split('/').any(|p| p == ".." || p.is_empty()) {
        return None;
    }
    let path = chart_dir.join(within);
    let text = fs.read_to_string(&path).ok()?;
    Some(SourceFile::new(&path, text))
}

/// The place of the field at `path` in a template: the field itself when the template, read
/// as YAML, writes the same plain value there (no template action on that line), else the
/// template's first line.
pub(crate) fn template_place(template: &Arc<SourceFile>, r: &Resource, path: &[PathSeg]) -> Place {
    let whole = Place {
        file: Arc::clone(template),
        start: 0,
        path: String::new(),
    };
    let Some(want) = value_at(&r.node, path).and_then(Node::scalar_text) else {
        return whole;
    };
    let (offset, exact) = locate_value(template, 0, path);
    let text = &template.text;
    let line_end = text[offset..].find('\n').map_or(text.len(), |e| offset + e);
    let written = text[offset..line_end]
        .split(" #")
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches(['"', '\'']);
    if exact && !path.is_empty() && written == want && !text[offset..line_end].contains("{{") {
        Place {
            file: Arc::clone(template),
            start: 0,
            path: path_text(path),
        }
    } else {
        whole
    }
}

// ---------------------------------------------------------------------------------------
// Transformer and generator configurations (`transformers:`, `generators:`).

/// Where a configuration of `configs` (run in order, so the last one that says it wins) sets
/// the value `value` that the field at `path` now holds: the entry of the configuration whose
/// key is the field's own key and whose value is that value (a `LabelTransformer`'s
/// `labels.KEY`), else the first scalar of the configuration holding that value, else the
/// configuration document's first line. An inline configuration (no document of its own) is
/// placed at its kustomization entry.
pub(crate) fn config_place(
    configs: &[(Resource, crate::source::Location)],
    path: &[PathSeg],
    value: Option<&Node>,
) -> Option<Place> {
    let own_key = match path.last() {
        Some(PathSeg::Key(k)) => Some(k.as_str()),
        _ => None,
    };
    let mut fallback = None;
    for (config, entry) in configs.iter().rev() {
        let Some(doc) = &config.origin else {
            fallback.get_or_insert_with(|| Place {
                file: Arc::clone(&entry.file),
                start: entry.offset,
                path: String::new(),
            });
            continue;
        };
        let place = |p: Vec<PathSeg>| Place {
            file: Arc::clone(&doc.file),
            start: doc.offset,
            path: path_text(&p),
        };
        if let Some(v) = value.filter(|v| !matches!(v, Node::Map(_) | Node::Seq(_))) {
            if let Some(p) = find_scalar(&config.node, own_key, v) {
                let found = place(p);
                if doc.file.path == Path::new(super::accumulate::INLINE_CONFIG) {
                    return Some(in_entry(&found, entry));
                }
                return Some(found);
            }
            if let Some(p) = find_scalar(&config.node, None, v) {
                fallback.get_or_insert_with(|| place(p));
                continue;
            }
        }
        fallback.get_or_insert_with(|| place(Vec::new()));
    }
    fallback
}

/// A place in an inline configuration's text, as a place in the kustomization that holds it:
/// the first line after the entry's start that reads as the place's line (the text is the
/// entry's block scalar, indented there); the entry itself when none does.
fn in_entry(place: &Place, entry: &crate::source::Location) -> Place {
    let quote = super::provenance::resolve(place).quote;
    let want = quote.trim();
    let text = &entry.file.text;
    let mut offset = entry.offset;
    let mut found = None;
    for line in text.get(entry.offset..).unwrap_or("").split_inclusive('\n') {
        if !want.is_empty() && line.trim() == want {
            found = Some(offset + (line.len() - line.trim_start().len()));
            break;
        }
        offset += line.len();
    }
    Place {
        file: Arc::clone(&entry.file),
        start: found.unwrap_or(entry.offset),
        path: String::new(),
    }
}

/// The path of the first scalar under `n` equal to `v` (under the key `key` when given).
fn find_scalar(n: &Node, key: Option<&str>, v: &Node) -> Option<Vec<PathSeg>> {
    fn go(n: &Node, key: Option<&str>, v: &Node, at: &mut Vec<PathSeg>) -> bool {
        use crate::merge::ssa::value::human;
        // A child at `seg` (its key, for a map's entry) holds the value, or a child of it.
        let mut visit = |seg: PathSeg, own: Option<&str>, x: &Node| {
            at.push(seg);
            let scalar = !matches!(x.unspelled(), Node::Map(_) | Node::Seq(_));
            let named = key.is_none_or(|want| own == Some(want));
            let hit = (named && scalar && human(x) == human(v)) || go(x, key, v, at);
            if !hit {
                at.pop();
            }
            hit
        };
        match n.unspelled() {
            Node::Map(m) => m
                .iter()
                .any(|(k, x)| visit(PathSeg::Key(k.to_string()), Some(k.as_str()), x)),
            Node::Seq(items) => items
                .iter()
                .enumerate()
                .any(|(i, x)| visit(PathSeg::Index(i), None, x)),
            _ => false,
        }
    }
    let mut at = Vec::new();
    go(n, key, v, &mut at).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values_point_at_the_value() {
        let text = "\u{feff}A=1\n# B=2\n\n  C=x=y\nNOVALUE\nA=3\n";
        let got = env_values(text);
        let shown: Vec<(String, &str)> = got
            .iter()
            .map(|(k, o)| (k.clone(), text[*o..].lines().next().unwrap()))
            .collect();
        assert_eq!(
            shown,
            vec![("C".to_string(), "x=y"), ("A".to_string(), "3")]
        );
    }

    #[test]
    fn var_origin_takes_the_first_declared_var() {
        let mut vars = VarPlaces::default();
        let file = SourceFile::new("k.yaml", "vars:\n- name: B\n");
        vars.insert(
            "B".into(),
            (
                Place {
                    file,
                    start: 0,
                    path: "vars[0].name".into(),
                },
                None,
            ),
        );
        let before = Node::Str("x $(A) $(B)".into());
        let (place, _) = var_origin(&vars, Some(&before));
        assert_eq!(place.map(|p| p.path), Some("vars[0].name".to_string()));
        assert!(
            var_origin(&vars, Some(&Node::Str("$(A)".into())))
                .0
                .is_none()
        );
    }
}
