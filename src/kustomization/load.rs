//! Reading a kustomization: finding its file in a directory (`kustomization.yaml`,
//! `kustomization.yml` or `Kustomization`, exactly one), decoding it into [`Kustomization`]
//! with errors pointing at the offending line, checking `kind`/`apiVersion`, and normalising the
//! deprecated fields kustomize still accepts (with one warning each). Reads files only through
//! `fs`; knows nothing of what the fields do.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Error, ErrorKind, Result, Warnings};
use crate::fs::{FileKind, Fs};
use crate::source::{Location, SourceFile, display_path};
use crate::yaml::de::from_node_strict;
use crate::yaml::path::PathSeg;
use crate::yaml::{Node, parse::parse_config_one_keeping_last};

use super::Kustomization;

/// The file names kustomize recognises, in its order (`konfig.RecognizedKustomizationFileNames`).
pub(crate) const FILE_NAMES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

pub(crate) const KUSTOMIZATION_KIND: &str = "Kustomization";
pub(crate) const COMPONENT_KIND: &str = "Component";
pub(crate) const KUSTOMIZATION_VERSION: &str = "kustomize.config.k8s.io/v1beta1";
pub(crate) const COMPONENT_VERSION: &str = "kustomize.config.k8s.io/v1alpha1";

/// The deprecated fields, the field replacing each, and kustomize's wording
/// (`api/types/kustomization.go`, `CheckDeprecatedFields`), in the order it prints them.
const DEPRECATED: [(&str, &str); 6] = [
    ("bases", "resources"),
    ("commonLabels", "labels"),
    ("imageTags", "images"),
    ("patchesJson6902", "patches"),
    ("patchesStrategicMerge", "patches"),
    ("vars", "replacements"),
];

/// A decoded kustomization and where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub kustomization: Kustomization,
    /// The kustomization file's text (for diagnostics pointing into it).
    pub file: Arc<SourceFile>,
    /// The directory, canonical.
    pub dir: PathBuf,
    /// Keys written twice (the last one read), as the errors `--strict` makes of them.
    pub repeated_keys: Vec<Error>,
}

impl Loaded {
    pub fn is_component(&self) -> bool {
        self.kustomization.kind.as_deref() == Some(COMPONENT_KIND)
    }

    /// Where the top-level `key:` of the kustomization is written (for diagnostics).
    pub fn key_location(&self, path: &[PathSeg]) -> Location {
        locate(&self.file, path)
    }
}

/// Finds the kustomization file of `dir` (canonical). None or more than one is an error, with
/// kustomize's wording (`api/internal/target/kusttarget.go`, `LoadKustFile`).
pub(crate) fn find_file(fs: &dyn Fs, dir: &Path) -> Result<PathBuf> {
    let found: Vec<PathBuf> = FILE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| fs.kind(p) == Some(FileKind::File))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Error::new(
            ErrorKind::NotFound,
            format!(
                "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                display_path(dir)
            ),
        )
        .help("a directory named as a kustomization (or a resource that is a directory) needs a kustomization.yaml")),
        many => Err(Error::new(
            ErrorKind::Kustomization,
            format!(
                "Found multiple kustomization files under: {}",
                display_path(dir)
            ),
        )
        .help(format!(
            "keep one of {}",
            many.iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Loads the kustomization of a directory (canonical path). A kustomization file that is a
/// symlink leading out of its directory is not read under the root-only restrictor, where
/// kustomize does not find it (its loader refuses the file; `unable to find one of …`); with
/// no restrictor it is read, and named in errors but never quoted.
pub(crate) fn load(
    fs: &dyn Fs,
    dir: &Path,
    restrictor: crate::fs::Restrictor,
    warnings: &mut Warnings,
) -> Result<Loaded> {
    let (path, outside) = locate_file(fs, dir, restrictor)?;
    let bytes = fs.read(&path).map_err(|e| Error::io(&path, &e))?;
    decode_loaded(dir, &path, bytes, outside, warnings)
}

/// The kustomization file of `dir` ([`find_file`]), and whether it is a symlink out of `dir`
/// (refused under `restrictor` root-only, as kustomize does not find it there).
pub(crate) fn locate_file(
    fs: &dyn Fs,
    dir: &Path,
    restrictor: crate::fs::Restrictor,
) -> Result<(PathBuf, bool)> {
    let path = find_file(fs, dir)?;
    let outside = fs.canonicalize(&path).is_ok_and(|c| {
        !c.starts_with(dir) && !fs.canonicalize(dir).is_ok_and(|d| c.starts_with(d))
    });
    if outside && restrictor == crate::fs::Restrictor::RootOnly {
        return Err(Error::new(
            ErrorKind::LoadRestriction,
            format!(
                "{} is a symlink to a file outside '{}'; kustomize does not read it (unable to \
                 find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization')",
                display_path(&path),
                display_path(dir)
            ),
        )
        .help(
            "replace the symlink with the file, or pass --load-restrictor LoadRestrictionsNone",
        ));
    }
    Ok((path, outside))
}

/// The kustomization of `dir` from the bytes of its file at `path` ([`locate_file`]);
/// `outside`: read through a symlink out of `dir`.
pub(crate) fn decode_loaded(
    dir: &Path,
    path: &Path,
    bytes: Vec<u8>,
    outside: bool,
    warnings: &mut Warnings,
) -> Result<Loaded> {
    let mut file = SourceFile::from_bytes(path, bytes)?;
    // Read through a symlink out of its directory: named in errors but never quoted (it may
    // be `/etc/passwd`).
    if outside {
        file = SourceFile::unquoted(path, file.text.clone());
    }
    let (kustomization, repeated_keys) = decode_full(&file, warnings)?;
    Ok(Loaded {
        kustomization,
        file,
        dir: dir.to_path_buf(),
        repeated_keys,
    })
}

#[cfg(test)]
/// Decodes kustomization text: YAML, then the typed fields, then kustomize's checks and fixes
/// (`Kustomization.Unmarshal`, `CheckDeprecatedFields`, `FixKustomization`, `CheckEmpty`,
/// `EnforceFields`).
pub(crate) fn decode(file: &Arc<SourceFile>, warnings: &mut Warnings) -> Result<Kustomization> {
    // sigs.k8s.io/yaml reads the kustomization with go-yaml v2: plain `y`, `yes`, `on` (and
    // their negatives) are booleans, which its typed decode then refuses for string fields.
    decode_full(file, warnings).map(|(k, _)| k)
}

/// [`decode`], also returning the repeated keys as `--strict` refuses them.
pub(crate) fn decode_full(
    file: &Arc<SourceFile>,
    warnings: &mut Warnings,
) -> Result<(Kustomization, Vec<Error>)> {
    // kustomize reads the kustomization with sigs.k8s.io/yaml (go-yaml v2 into Go maps), where
    // a repeated key, at any depth, replaces the earlier one: so does ply, with a warning.
    // go-yaml's `Unmarshal` reads the first document of the file and nothing after it
    // (`yaml::parse::first_document`): a second document is ignored, however it is written.
    let parsed = parse_config_one_keeping_last(crate::yaml::parse::first_document(&file.text));
    let repeated = match &parsed {
        Ok((_, repeats)) => repeated_keys(file, repeats, warnings),
        Err(_) => Vec::new(),
    };
    let node = parsed.map(|(n, _)| n).map_err(|e| yaml_error(file, &e))?;
    if !matches!(node, Node::Map(_) | Node::Null) {
        return Err(Error::new(
            ErrorKind::Kustomization,
            format!(
                "invalid kustomization: expected a map of fields, found a {}",
                node.kind_name()
            ),
        )
        .at(Location::line_at(Arc::clone(file), 0)));
    }

    // `Kustomization.Unmarshal` (api/types/kustomization.go) decodes with encoding/json after
    // `yaml.YAMLToJSON`: no scalar is turned into the string a field wants.
    let mut k: Kustomization = from_node_strict(&node).map_err(|e| {
        let loc = locate(file, &e.path);
        let path = e.path_string();
        let mut err = Error::new(
            ErrorKind::Kustomization,
            format!("invalid kustomization: {}", e.message),
        )
        .at(loc);
        if let Some(near) = crate::diag::suggest::unknown_field(&e.message) {
            err = err.help(format!("did you mean `{near}`?"));
        }
        if path.is_empty() {
            err
        } else {
            err.label(path)
        }
    })?;

    for (old, new) in DEPRECATED {
        if node.get(old).is_some_and(|v| !v.is_null()) {
            let at = locate(file, &[PathSeg::Key((*old).to_string())]).describe();
            warnings.warn(format!(
                "{at}: '{old}' is deprecated. Please use '{new}' instead."
            ));
        }
    }
    fix_kustomization(&mut k);

    if is_empty(&node) {
        return Err(
            Error::new(ErrorKind::Kustomization, "kustomization.yaml is empty")
                .at(Location::line_at(Arc::clone(file), 0))
                .help("list resources, components or generators in it"),
        );
    }
    check_kind(file, &mut k)?;
    Ok((k, repeated))
}

/// The keys written twice in a kustomization: a warning each, and the errors `--strict`
/// gives for them.
fn repeated_keys(
    file: &Arc<SourceFile>,
    repeats: &[crate::yaml::parse::Repeated],
    warnings: &mut Warnings,
) -> Vec<Error> {
    let mut repeated = Vec::new();
    for r in repeats {
        let line = |o: Option<usize>| {
            o.map_or_else(|| "?".to_string(), |o| file.line_col(o).0.to_string())
        };
        let message = format!(
            "{}: key {:?} is written twice (lines {} and {}); the last one wins, as in \
             kustomize, and the first is ignored",
            file.display,
            r.key,
            line(r.first),
            line(r.second)
        );
        warnings.warn(message.clone());
        repeated.push(
            Error::new(ErrorKind::Strict, message)
                .at_opt(
                    r.second
                        .map(|o| Location::line_at(Arc::clone(file), line_start(&file.text, o))),
                )
                .label("written again here")
                .help("remove one of the two; without --strict (PLY_STRICT) this is a warning"),
        );
    }
    repeated
}

/// The error for a kustomization that is not valid YAML. An error the reader gives without a
/// place (serde_yaml's limit on aliases, which kustomize's go-yaml meets as `excessive
/// aliasing`) is shown at the first alias, or else at the file's first line: always in the
/// kustomization file.
fn yaml_error(file: &Arc<SourceFile>, e: &crate::yaml::ParseError) -> Error {
    let at = e
        .offset
        .or_else(|| first_alias(&file.text))
        .map_or(0, |o| line_start(&file.text, o));
    let err = Error::new(ErrorKind::Yaml, format!("invalid YAML: {}", e.message))
        .at(Location::line_at(Arc::clone(file), at));
    if e.message.contains("repetition limit") {
        err.help(
            "the kustomization expands too far through its aliases (`*name`: a YAML bomb?); \
             kustomize refuses it too (`document contains excessive aliasing`): write the \
             values out instead of repeating aliases of aliases",
        )
    } else {
        err
    }
}

/// FixKustomization: `bases` and `imageTags` join their replacements; a generator's `env`
/// joins its `envs`.
fn fix_kustomization(k: &mut Kustomization) {
    let bases = std::mem::take(&mut k.bases);
    k.resources.extend(bases);
    let tags = std::mem::take(&mut k.image_tags);
    k.images.extend(tags);
    for g in k
        .config_map_generator
        .iter_mut()
        .chain(k.secret_generator.iter_mut())
    {
        if let Some(env) = g.env.take().filter(|e| !e.is_empty()) {
            g.envs.push(env);
        }
    }
}

/// `EnforceFields`: the kind is Kustomization or Component (Kustomization when none is
/// given), and the apiVersion, when given, is the kind's.
fn check_kind(file: &Arc<SourceFile>, k: &mut Kustomization) -> Result<()> {
    let kind = k.kind.clone().unwrap_or_default();
    let kind_loc = || locate(file, &[PathSeg::Key("kind".into())]);
    if !kind.is_empty() && kind != KUSTOMIZATION_KIND && kind != COMPONENT_KIND {
        return Err(Error::new(
            ErrorKind::Kustomization,
            format!(
                "Failed to read kustomization file under {}: kind should be Kustomization or Component",
                dir_of(file)
            ),
        )
        .at(kind_loc())
        .label(format!("kind '{kind}'")));
    }
    let (shown_kind, required) = if kind == COMPONENT_KIND {
        (COMPONENT_KIND, COMPONENT_VERSION)
    } else {
        (KUSTOMIZATION_KIND, KUSTOMIZATION_VERSION)
    };
    if let Some(v) = k.api_version.as_deref().filter(|v| !v.is_empty()) {
        if v != required {
            return Err(Error::new(
                ErrorKind::Kustomization,
                format!(
                    "Failed to read kustomization file under {}: apiVersion for {shown_kind} should be {required}",
                    dir_of(file)
                ),
            )
            .at(locate(file, &[PathSeg::Key("apiVersion".into())]))
            .label(format!("apiVersion '{v}'")));
        }
    }
    if kind.is_empty() {
        k.kind = Some(KUSTOMIZATION_KIND.to_string());
    }
    Ok(())
}

/// The offset of the first alias (`*name` after a space, `[`, `{` or `,`) in `text`, if any.
fn first_alias(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    (1..b.len()).find(|&i| {
        b[i] == b'*'
            && matches!(b[i - 1], b' ' | b'[' | b'{' | b',')
            && b.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

fn dir_of(file: &SourceFile) -> String {
    file.path.parent().map(display_path).unwrap_or_default()
}

/// kustomize's `CheckEmpty`: nothing but `apiVersion`/`kind` is set.
fn is_empty(node: &Node) -> bool {
    match node {
        Node::Map(m) => m
            .iter()
            .all(|(k, v)| k == "apiVersion" || k == "kind" || is_empty_value(v)),
        _ => true,
    }
}

fn is_empty_value(v: &Node) -> bool {
    match v.unspelled() {
        Node::Spelled(_) => unreachable!("`unspelled` never returns a spelled node"),
        Node::Null => true,
        Node::Str(s) => s.is_empty(),
        // Go tells an empty list or map (set) from a missing one.
        Node::Seq(_) | Node::Map(_) => false,
        Node::Bool(b) => !b,
        Node::Int(i) => *i == 0,
        Node::Float(f) => *f == 0.0,
    }
}

fn line_start(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.get(..offset)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// Finds where a field path (`patches[2].target.kind`) is written in block-style YAML text, by
/// indentation; falls back to the deepest part found, then to the first line.
pub(crate) fn locate(file: &Arc<SourceFile>, path: &[PathSeg]) -> Location {
    locate_from(file, 0, path)
}

/// [`locate`] in the document of `file` that starts at the byte offset `start`.
pub(crate) fn locate_from(file: &Arc<SourceFile>, start: usize, path: &[PathSeg]) -> Location {
    located(file, start, walk(&file.text, start, path).found)
}

/// Where the value at `path` of the document of `file` starting at `start` is written: the
/// byte offset of the value itself (after `key: ` or `- `), and whether the whole path was
/// found. When it was not (flow-style or JSON text, a path the text does not hold), the
/// offset is that of the deepest node found, or the document's line (field provenance,
/// issue 29: `render::provenance`).
pub(crate) fn locate_value(file: &SourceFile, start: usize, path: &[PathSeg]) -> (usize, bool) {
    let mut c = Cursor::start(file.text.as_str(), start);
    for seg in path {
        c = c.step(file.text.as_str(), seg);
    }
    value_at(
        file,
        start,
        &c,
        matches!(path.last(), Some(PathSeg::Key(_))),
    )
}

/// [`locate_value`] of the path a cursor followed from `start` (`key`: its last segment is a
/// key), so that many paths of one document can be followed from their common prefix.
pub(crate) fn value_at(file: &SourceFile, start: usize, c: &Cursor, key: bool) -> (usize, bool) {
    let text = file.text.as_str();
    let Some((off, len)) = c.found else {
        return (start.min(text.len()), !c.missed);
    };
    if c.missed {
        return (off, false);
    }
    let line_end = text[off..].find('\n').map_or(text.len(), |e| off + e);
    let mut at = off + len;
    if key {
        // Past the key's closing quote, if any, and its colon.
        match text[at..line_end].find(':') {
            Some(c) => at += c + 1,
            None => return (off, true),
        }
    }
    let rest = &text[at..line_end];
    let trimmed = rest.trim_start_matches([' ', '\t']);
    if !trimmed.is_empty() && !trimmed.starts_with('#') {
        let mut v = at + rest.len() - trimmed.len();
        // `- - x` and `- key: x` stand on the dash's line.
        while text[v..line_end].starts_with("- ") {
            v += 2 + text[v + 2..line_end].len() - text[v + 2..line_end].trim_start().len();
        }
        return (v, true);
    }
    // The value starts on a later line (its first content, indented deeper than the key, or
    // a list at the key's column), or is empty (then: right after the colon).
    let key_col = off - text[..off].rfind('\n').map_or(0, |i| i + 1);
    for (loff, _, line) in lines_from(text, (line_end + 1).min(text.len())) {
        let content = line.trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let col = line.len() - content.len();
        let child =
            col > key_col || (col == key_col && (content == "-" || content.starts_with("- ")));
        return (if child { loff + col } else { at }, true);
    }
    (at, true)
}

/// The locations of every entry of the list at `path` (`patches`), in order: entry `i`'s is
/// what [`locate`] gives for `path` followed by `[i]`, found in one pass over the list where
/// one `locate` per entry reads the text from the top each time (O(N²) lines for N entries).
/// Entries past the ones found are placed where `locate` places them, at the list's key.
pub(crate) struct Entries {
    at: Vec<Location>,
    fallback: Location,
}

impl Entries {
    /// Where entry `i` is written.
    pub(crate) fn get(&self, i: usize) -> Location {
        self.at.get(i).unwrap_or(&self.fallback).clone()
    }
}

/// Locates every entry of the list at `path` (see [`Entries`]).
pub(crate) fn locate_entries(file: &Arc<SourceFile>, path: &[PathSeg]) -> Entries {
    let text = file.text.as_str();
    let walk = walk(text, 0, path);
    let fallback = located(file, 0, walk.found);
    let at = if walk.rest.is_empty() {
        dashes(text, walk.from, walk.parent)
            .map(|(line_off, col)| Location::new(Arc::clone(file), line_off + col, 1))
            .collect()
    } else {
        Vec::new()
    };
    Entries { at, fallback }
}

fn located(file: &Arc<SourceFile>, start: usize, found: Option<(usize, usize)>) -> Location {
    match found {
        Some((off, len)) => Location::new(Arc::clone(file), off, len),
        None => Location::line_at(Arc::clone(file), start),
    }
}

/// How far [`walk`] got along a path.
struct Walk<'p> {
    /// The best match so far: (offset, len).
    found: Option<(usize, usize)>,
    /// The path segments not found (empty when the whole path was).
    rest: &'p [PathSeg],
    /// Where to continue: the offset of the first line to look at (after an index, the
    /// entry's own line, where its first key may stand after the `- `).
    from: usize,
    /// The indentation of the node found last.
    parent: Option<usize>,
}

/// Where a walk along a path through block-style YAML text has got to, one segment at a
/// time ([`Cursor::step`]); [`walk`] is its steps over a whole path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor {
    /// The best match so far: (offset, len).
    found: Option<(usize, usize)>,
    /// Where to continue (as `Walk::from`).
    from: usize,
    /// The indentation of the node found last.
    parent: Option<usize>,
    /// A segment was not found: the later ones are not looked for.
    missed: bool,
}

impl Cursor {
    /// A walk from the line holding `start`.
    pub(crate) fn start(text: &str, start: usize) -> Cursor {
        Cursor {
            found: None,
            from: line_start(text, start),
            parent: None,
            missed: false,
        }
    }

    /// The walk one segment further (the same cursor, missed, when the text does not hold
    /// it).
    pub(crate) fn step(self, text: &str, seg: &PathSeg) -> Cursor {
        if self.missed {
            return self;
        }
        let mut w = self;
        match seg {
            PathSeg::Key(key) => {
                let mut hit = None;
                // The column of the node's keys, from its first one: deeper lines belong to
                // the values.
                let mut keys_at = None;
                for (off, next, line) in lines_from(text, w.from) {
                    let rest = line.trim_start_matches(' ');
                    let raw = line.len() - rest.len();
                    if rest.is_empty() || rest.starts_with('#') {
                        continue;
                    }
                    let (eff, body) = strip_dashes(raw, rest);
                    // Past the first line, a line indented no deeper than the enclosing node
                    // ends it.
                    if off > w.from && w.parent.is_some_and(|p| raw <= p) {
                        break;
                    }
                    if w.parent.is_some_and(|p| eff <= p) {
                        continue;
                    }
                    if *keys_at.get_or_insert(eff) != eff {
                        continue;
                    }
                    if key_matches(body, key) {
                        hit = Some((next, off + eff, eff));
                        break;
                    }
                }
                let Some((next, off, eff)) = hit else {
                    w.missed = true;
                    return w;
                };
                w.found = Some((off, key.len()));
                w.from = next;
                w.parent = Some(eff);
            }
            PathSeg::Index(n) => {
                let Some((line_off, col)) = dashes(text, w.from, w.parent).nth(*n) else {
                    w.missed = true;
                    return w;
                };
                w.found = Some((line_off + col, 1));
                // The entry's first key may stand on the dash's line.
                w.from = line_off;
                w.parent = Some(col);
            }
        }
        w
    }
}

/// Follows `path` through block-style YAML text from the line holding `start`, by
/// indentation, as far as it is written.
fn walk<'p>(text: &str, start: usize, path: &'p [PathSeg]) -> Walk<'p> {
    let mut c = Cursor::start(text, start);
    let mut rest = path;
    while let Some((seg, after)) = rest.split_first() {
        c = c.step(text, seg);
        if c.missed {
            break;
        }
        rest = after;
    }
    Walk {
        found: c.found,
        rest,
        from: c.from,
        parent: c.parent,
    }
}

/// The entries of the block sequence that starts at or after the line at `from`, inside a
/// node indented at `parent`: each entry's line offset and the column of its `-`.
fn dashes(
    text: &str,
    from: usize,
    parent: Option<usize>,
) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut dash_col = None;
    lines_from(text, from)
        .map_while(move |(off, _, line)| {
            let rest = line.trim_start_matches(' ');
            let raw = line.len() - rest.len();
            if rest.is_empty() || rest.starts_with('#') {
                return Some(None);
            }
            let is_dash = rest == "-" || rest.starts_with("- ");
            match dash_col {
                None if is_dash && parent.is_none_or(|p| raw >= p) => {
                    dash_col = Some(raw);
                }
                None => return None,
                Some(c) if raw < c || (raw == c && !is_dash) => return None,
                Some(_) => {}
            }
            Some((is_dash && dash_col == Some(raw)).then_some((off, raw)))
        })
        .flatten()
}

/// The lines of `text` from byte offset `from` (a line start): each line's offset, the offset
/// of the line after it, and its text without the line break.
fn lines_from(text: &str, from: usize) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut pos = from;
    text.get(from..)
        .unwrap_or("")
        .split_inclusive('\n')
        .map(move |line| {
            let off = pos;
            pos += line.len();
            (off, pos, line.trim_end_matches(['\n', '\r']))
        })
}

/// Skips `- ` markers at the start of a line's content, returning the column of what follows.
fn strip_dashes(mut col: usize, mut rest: &str) -> (usize, &str) {
    while let Some(r) = rest.strip_prefix("- ") {
        let trimmed = r.trim_start_matches(' ');
        col += 2 + (r.len() - trimmed.len());
        rest = trimmed;
    }
    (col, rest)
}

fn key_matches(body: &str, key: &str) -> bool {
    let quoted = |q: char| {
        body.strip_prefix(q)
            .and_then(|b| b.strip_prefix(key))
            .and_then(|b| b.strip_prefix(q))
    };
    [body.strip_prefix(key), quoted('"'), quoted('\'')]
        .into_iter()
        .flatten()
        .any(|after| {
            let after = after.trim_start_matches(' ');
            after == ":" || after.starts_with(": ") || after.starts_with(":\t")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::MemFs;

    fn file(text: &str) -> Arc<SourceFile> {
        SourceFile::new("/k/kustomization.yaml", text)
    }

    fn err(text: &str) -> Error {
        decode(&file(text), &mut Warnings::default()).unwrap_err()
    }

    #[test]
    fn unknown_field_points_at_its_line() {
        let e = err(
            "resources:\n- a.yaml\npatches:\n- path: p.yaml\n  target:\n    kind: X\n    nam: y\n",
        );
        assert_eq!(e.kind, ErrorKind::Kustomization);
        assert!(
            e.message
                .starts_with("invalid kustomization: unknown field `nam`")
        );
        assert_eq!(e.label.as_deref(), Some("patches[0].target.nam"));
        let l = e.location.unwrap();
        assert_eq!(l.describe(), "/k/kustomization.yaml:7:5");
        assert_eq!(l.len, 3);
    }

    #[test]
    fn locate_indexes() {
        let f = file(
            "images:\n- name: a\n  newTag: x\n- name: b\n  newTag: [1]\nreplicas:\n  - name: r\n    count: 1\n",
        );
        let p = |s: &[PathSeg]| locate(&f, s).describe();
        use PathSeg::{Index, Key};
        assert_eq!(
            p(&[Key("images".into()), Index(1), Key("newTag".into())]),
            "/k/kustomization.yaml:5:3"
        );
        assert_eq!(
            p(&[Key("images".into()), Index(0), Key("name".into())]),
            "/k/kustomization.yaml:2:3"
        );
        assert_eq!(
            p(&[Key("replicas".into()), Index(0), Key("count".into())]),
            "/k/kustomization.yaml:8:5"
        );
        assert_eq!(p(&[Key("nothere".into())]), "/k/kustomization.yaml:1:1");
    }

    /// A key is looked for among the node's own keys, not in their values, and from a given
    /// document on.
    #[test]
    fn entries_in_one_pass_equal_locate_per_entry() {
        use PathSeg::{Index, Key};
        let texts = [
            // Entries at column 0 and indented, comments and blank lines between them, an
            // entry whose first key stands on the dash's line, nested lists.
            "patches:\n- path: a.yaml\n  target:\n    kind: A\n# note\n\n- patch: |-\n    - op: x\n- path: c.yaml\nimages:\n  - name: a\n  -\n    name: b\n",
            // A list that ends where a key at the parent's column follows it.
            "resources:\n- r.yaml\npatches:\n  - path: p.yaml\n  - path: q.yaml\nnamePrefix: x-\n",
            // A key with no list under it, and a missing key.
            "patches: []\nkind: Kustomization\n",
            "",
        ];
        for text in texts {
            let f = file(text);
            for field in ["patches", "images", "resources", "nothere"] {
                let all = locate_entries(&f, &[Key(field.into())]);
                for i in 0..5 {
                    assert_eq!(
                        all.get(i).describe(),
                        locate(&f, &[Key(field.into()), Index(i)]).describe(),
                        "{field}[{i}] in {text:?}"
                    );
                    assert_eq!(
                        (all.get(i).offset, all.get(i).len),
                        {
                            let l = locate(&f, &[Key(field.into()), Index(i)]);
                            (l.offset, l.len)
                        },
                        "{field}[{i}] in {text:?}"
                    );
                }
            }
        }
        // The entries found are the list's own.
        let f = file(texts[0]);
        let all = locate_entries(&f, &[Key("patches".into())]);
        let lines: Vec<_> = (0..4).map(|i| all.get(i).line()).collect();
        assert_eq!(
            lines,
            [2, 7, 9, 1],
            "entry 3 is past the list: its key's line"
        );
    }

    #[test]
    fn locate_keeps_to_the_nodes_own_keys() {
        let f = file(
            "kind: A\nmetadata:\n  name: a\n---\nkind: B\nmetadata:\n  labels:\n    name: x\n  name: b\n",
        );
        let path = [PathSeg::Key("metadata".into()), PathSeg::Key("name".into())];
        assert_eq!(locate(&f, &path).describe(), "/k/kustomization.yaml:3:3");
        let second = f.text.find("kind: B").unwrap_or_default();
        assert_eq!(
            locate_from(&f, second, &path).describe(),
            "/k/kustomization.yaml:9:3"
        );
    }

    #[test]
    fn locate_skips_comments_and_reads_quoted_keys() {
        let f = file(
            "# top\nresources:\n- a\n\"patches\":\n  # first\n  - path: p.yaml\n\n  -   target:\n        kind: X\n      patch: |\n        - op: add\nimages: []\n",
        );
        let p = |s: &[PathSeg]| locate(&f, s).describe();
        use PathSeg::{Index, Key};
        assert_eq!(p(&[Key("patches".into())]), "/k/kustomization.yaml:4:1");
        assert_eq!(
            p(&[Key("patches".into()), Index(0), Key("path".into())]),
            "/k/kustomization.yaml:6:5"
        );
        assert_eq!(
            p(&[Key("patches".into()), Index(1), Key("target".into())]),
            "/k/kustomization.yaml:8:7"
        );
        assert_eq!(
            p(&[
                Key("patches".into()),
                Index(1),
                Key("target".into()),
                Key("kind".into())
            ]),
            "/k/kustomization.yaml:9:9"
        );
        assert_eq!(
            p(&[Key("patches".into()), Index(1), Key("patch".into())]),
            "/k/kustomization.yaml:10:7"
        );
        // A missing index falls back to the deepest part found.
        assert_eq!(
            p(&[Key("patches".into()), Index(2)]),
            "/k/kustomization.yaml:4:1"
        );
        assert_eq!(p(&[Key("images".into())]), "/k/kustomization.yaml:12:1");
    }

    #[test]
    fn deprecated_fields_warn_and_normalise() {
        let mut w = Warnings::default();
        let k = decode(
            &file("resources: [a]\nbases: [b]\nimageTags:\n- name: x\n  newTag: v1\nvars:\n"),
            &mut w,
        )
        .unwrap();
        assert_eq!(k.resources, ["a", "b"]);
        assert_eq!(k.images.len(), 1);
        assert!(k.bases.is_empty() && k.image_tags.is_empty());
        assert_eq!(
            w.messages(),
            [
                "/k/kustomization.yaml:2:1: 'bases' is deprecated. Please use 'resources' instead.",
                "/k/kustomization.yaml:3:1: 'imageTags' is deprecated. Please use 'images' instead."
            ]
        );
        assert_eq!(k.kind.as_deref(), Some("Kustomization"));
    }

    #[test]
    fn kind_and_api_version() {
        let e = err("kind: Foo\nresources: [a]\n");
        assert!(
            e.message
                .ends_with("kind should be Kustomization or Component")
        );
        assert_eq!(e.location.unwrap().line(), 1);
        let e = err("apiVersion: v2\nresources: [a]\n");
        assert!(
            e.message.ends_with(
                "apiVersion for Kustomization should be kustomize.config.k8s.io/v1beta1"
            )
        );
        let e =
            err("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Component\nresources: [a]\n");
        assert!(
            e.message
                .ends_with("apiVersion for Component should be kustomize.config.k8s.io/v1alpha1")
        );
        assert!(
            decode(
                &file("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"),
                &mut Warnings::default()
            )
            .is_err(),
            "an empty component is empty"
        );
    }

    /// go-yaml's `Unmarshal` reads the first document: a second one is never parsed, and an
    /// empty first document is an empty kustomization.
    #[test]
    fn only_the_first_document_is_read() {
        let k = decode(
            &file("resources: [a]\n---\nresources: [b]\nnot: [closed\n"),
            &mut Warnings::default(),
        )
        .unwrap();
        assert_eq!(k.resources, vec!["a".to_string()]);
        assert_eq!(
            err("---\n---\nresources: [a]\n").message,
            "kustomization.yaml is empty"
        );
    }

    /// An alias bomb fails with the kustomization's line of its first alias.
    #[test]
    fn alias_bomb_is_located() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            text.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                vec![format!("*a{}", i - 1); 10].join(", ")
            ));
        }
        let e = err(&text);
        assert_eq!(e.location.as_ref().map(Location::line), Some(2), "{e:?}");
        assert!(e.help.is_some_and(|h| h.contains("excessive aliasing")));
    }

    #[test]
    fn repeated_top_level_keys_last_wins() {
        let k = decode(
            &file("kind: Component\nnamePrefix: a-\n\nkind: Component\nnamePrefix: b-\nresources:\n- x\n"),
            &mut Warnings::default(),
        )
        .unwrap();
        assert_eq!(k.name_prefix.as_deref(), Some("b-"));
        assert_eq!(k.resources, ["x"]);
        // At any depth, as go-yaml v2 decodes into Go maps; each repeat is a warning and,
        // for --strict, an error at the second key.
        let mut warnings = Warnings::default();
        let (k, repeated) = decode_full(
            &file("resources:\n- a\ncommonLabels:\n  x: a\n  x: b\n"),
            &mut warnings,
        )
        .unwrap();
        let labels = k.common_labels.unwrap_or_default();
        assert_eq!(labels.get("x").map(String::as_str), Some("b"));
        assert_eq!(
            warnings.messages()[0],
            "/k/kustomization.yaml: key \"x\" is written twice (lines 4 and 5); the last one wins, as in kustomize, and the first is ignored"
        );
        assert_eq!(repeated.len(), 1);
        assert_eq!(repeated[0].kind, ErrorKind::Strict);
        assert_eq!(repeated[0].location.as_ref().map(|l| l.line()), Some(5));
    }

    #[test]
    fn empty_and_bad_yaml() {
        assert_eq!(err("").message, "kustomization.yaml is empty");
        assert_eq!(
            err("kind: Kustomization\n").message,
            "kustomization.yaml is empty"
        );
        let e = err("resources:\n- a\n  b: [\n");
        assert_eq!(e.kind, ErrorKind::Yaml);
        assert!(e.location.is_some());
    }

    #[test]
    fn finding_the_file() {
        let mut fs = MemFs::new();
        fs.file("/a/kustomization.yaml", "resources: [x]\n")
            .file("/b/kustomization.yml", "resources: [x]\n")
            .file("/b/Kustomization", "resources: [x]\n")
            .dir("/c");
        let w = &mut Warnings::default();
        assert!(load(&fs, Path::new("/a"), crate::fs::Restrictor::RootOnly, w).is_ok());
        assert_eq!(
            load(&fs, Path::new("/b"), crate::fs::Restrictor::RootOnly, w)
                .unwrap_err()
                .message,
            "Found multiple kustomization files under: /b"
        );
        let e = load(&fs, Path::new("/c"), crate::fs::Restrictor::RootOnly, w).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
    }
}
