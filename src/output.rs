//! Writing rendered resources: to stdout in one write (a closed pipe is not an error), to a
//! file atomically (a temporary file in the same directory, then a rename: a failed render or
//! write never leaves a partial file), or one file per resource into a directory, named as
//! `kustomize build -o DIR` names them. The whole output is emitted, and checked against the
//! render's output limit (`--max-output-size`), before anything is written. The only module, besides `main`,
//! that writes to the disk or to stdout. Renders nothing itself: text comes from `yaml::emit`.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Result};
use crate::resource::{Gvk, Resource};
use crate::transform::FieldSpecTables;
use crate::yaml::{EmitOptions, emit_document};

/// Where the output goes.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    Stdout,
    File(PathBuf),
    Dir(PathBuf),
}

/// What happened to the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Written {
    All,
    /// The reader closed the pipe (`ply render | head`): stop quietly, exit 0.
    PipeClosed,
}

/// Writes a render's resources to the target, as [`write`] does (the per-resource file names
/// know the cluster-scoped kinds from the field-spec tables the render used).
pub(crate) fn write_rendered(
    resources: &[Resource],
    tables: &FieldSpecTables,
    target: &Target,
    max_size: usize,
) -> Result<Written> {
    write(
        resources,
        target,
        &|g| tables.is_cluster_scoped(g),
        max_size,
    )
}

/// Writes the resources to the target. `cluster_scoped` tells which kinds have no namespace (for
/// the per-resource file names).
/// At most `max_size` bytes are written in all; a larger output is an error before anything
/// is written.
pub(crate) fn write(
    resources: &[Resource],
    target: &Target,
    cluster_scoped: &dyn Fn(&Gvk) -> bool,
    max_size: usize,
) -> Result<Written> {
    match target {
        Target::Stdout => write_stdout(&emit_bounded(resources, max_size)?),
        Target::File(path) => {
            // Streamed document by document: the whole text (91 MB for the 5000-app benchmark
            // tree, and twice that while its buffer grows) is never held at once. Past the
            // limit the temporary file is removed: nothing is written.
            let mut over = None;
            write_atomic_with(path, |out| {
                over = write_documents(out, resources, max_size)?;
                match over {
                    Some(_) => Err(io::Error::other("the output limit was passed")),
                    None => Ok(()),
                }
            })
            .map_err(|e| match over.and_then(|i| resources.get(i)) {
                Some(at) => too_big(max_size, at),
                None => e,
            })?;
            Ok(Written::All)
        }
        Target::Dir(dir) => {
            write_dir(dir, resources, cluster_scoped, max_size)?;
            Ok(Written::All)
        }
    }
}

/// The multi-document text, emitted only while it stays within `max_size` bytes.
fn emit_bounded(resources: &[Resource], max_size: usize) -> Result<String> {
    let mut text = String::new();
    for (i, r) in resources.iter().enumerate() {
        if i > 0 {
            text.push_str("---\n");
        }
        emit_document(&mut text, &r.node, EmitOptions::default());
        check_size(text.len(), max_size, r)?;
    }
    Ok(text)
}

fn check_size(size: usize, max_size: usize, at: &Resource) -> Result<()> {
    if size <= max_size {
        return Ok(());
    }
    Err(too_big(max_size, at))
}

/// The output passes `max_size` at the object `at`.
fn too_big(max_size: usize, at: &Resource) -> Error {
    Error::new(
        ErrorKind::Limit,
        format!(
            "the render's output would be larger than {} (ply's limit on one render's output); \
             nothing was written",
            crate::yaml::limits::human_size(max_size)
        ),
    )
    .at_opt(at.origin.clone())
    .label("the output passes the limit at this object")
    .help("raise the limit with --max-output-size (e.g. --max-output-size 4G)")
}

/// Writes the text of [`to_text`] to `out`, one document at a time, stopping before the
/// document that would take it past `max_size` bytes: its index, or `None` when all fit.
fn write_documents(
    out: &mut dyn Write,
    resources: &[Resource],
    max_size: usize,
) -> io::Result<Option<usize>> {
    let mut doc = String::new();
    let mut size = 0usize;
    for (i, r) in resources.iter().enumerate() {
        doc.clear();
        if i > 0 {
            doc.push_str("---\n");
        }
        emit_document(&mut doc, &r.node, EmitOptions::default());
        size = size.saturating_add(doc.len());
        if size > max_size {
            return Ok(Some(i));
        }
        out.write_all(doc.as_bytes())?;
    }
    Ok(None)
}

fn write_stdout(text: &str) -> Result<Written> {
    let mut out = io::stdout().lock();
    let result = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    match result {
        Ok(()) => Ok(Written::All),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(Written::PipeClosed),
        Err(e) => Err(Error::new(
            ErrorKind::Io,
            format!("writing to standard output: {e}"),
        )),
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Writes what `fill` writes (through a buffer) to `path`, through a temporary file in the
/// same directory and a rename: a failed `fill` or write leaves no file behind. A path that
/// is a device or a FIFO (`-o /dev/null`, `-o /dev/stdout`) is written directly, as kustomize
/// writes it (a rename would replace the device with a file); a symlink keeps pointing where
/// it did, and its target is replaced.
fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() && !m.is_dir() => {
            let result = (|| -> io::Result<()> {
                let mut out =
                    io::BufWriter::new(std::fs::OpenOptions::new().write(true).open(path)?);
                fill(&mut out)?;
                out.flush()
            })();
            return result.map_err(|e| Error::io(path, &e));
        }
        Ok(m) if m.is_file() && path.is_symlink() => {
            if let Ok(target) = std::fs::canonicalize(path) {
                return write_atomic_with(&target, fill);
            }
        }
        _ => {}
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Usage,
                format!("'{}' is not a file name", path.display()),
            )
        })?;
    if path.is_dir() {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "'{}' is a directory; use --output-dir to write one file per resource",
                path.display()
            ),
        ));
    }
    let tmp = dir.join(format!(".{name}.ply-{}.tmp", std::process::id()));
    let result = (|| -> io::Result<()> {
        let mut out = io::BufWriter::new(std::fs::File::create(&tmp)?);
        fill(&mut out)?;
        let f = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, &e));
    }
    Ok(())
}

/// One file per resource, named `[namespace_]group_version_kind_name.yaml` in lower case, the
/// namespace prefix only when the namespaced resources span more than one namespace (no
/// namespace counts as `default`); kustomize's `WriteIndividualFiles` and `fileName`
/// (`kustomize/commands/build/writer.go`).
fn write_dir(
    dir: &Path,
    resources: &[Resource],
    cluster_scoped: &dyn Fn(&Gvk) -> bool,
    max_size: usize,
) -> Result<()> {
    let mut files = Vec::new();
    let mut total = 0usize;
    for (name, r) in file_names(resources, cluster_scoped) {
        let mut text = String::new();
        emit_document(&mut text, &r.node, EmitOptions::default());
        total = total.saturating_add(text.len());
        check_size(total, max_size, r)?;
        files.push((name, text));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, &e))?;
    for (name, text) in files {
        write_atomic(&dir.join(name), text.as_bytes())?;
    }
    Ok(())
}

/// The file name of each resource for `--output-dir`, in output order.
pub(crate) fn file_names<'a>(
    resources: &'a [Resource],
    cluster_scoped: &dyn Fn(&Gvk) -> bool,
) -> Vec<(String, &'a Resource)> {
    let namespace_of = |r: &Resource| -> Option<String> {
        if cluster_scoped(&r.gvk()) {
            None
        } else if r.namespace().is_empty() {
            Some("default".to_string())
        } else {
            Some(r.namespace().to_string())
        }
    };
    let namespaces: BTreeMap<String, ()> = resources
        .iter()
        .filter_map(|r| namespace_of(r).map(|n| (n, ())))
        .collect();
    resources
        .iter()
        .map(|r| {
            let gvk = r.gvk();
            let parts: Vec<&str> = [gvk.group.as_str(), gvk.version.as_str(), gvk.kind.as_str()]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect();
            let mut name = format!("{}_{}.yaml", parts.join("_"), r.name()).to_lowercase();
            if let Some(ns) = namespace_of(r) {
                if namespaces.len() > 1 {
                    name = format!("{}_{name}", ns.to_lowercase());
                }
            }
            (name, r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_one;

    #[test]
    fn output_dir_names() {
        let rs: Vec<Resource> = [
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ns}\n",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n",
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: Cr}\n",
        ]
        .iter()
        .map(|t| Resource::new(parse_one(t).unwrap(), None))
        .collect();
        let scope = |g: &Gvk| g.kind == "Namespace" || g.kind == "ClusterRole";
        let names: Vec<String> = file_names(&rs, &scope)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            names,
            [
                "ns_v1_configmap_x.yaml",
                "default_apps_v1_deployment_d.yaml",
                "v1_namespace_ns.yaml",
                "rbac.authorization.k8s.io_v1_clusterrole_cr.yaml"
            ]
        );
        let names: Vec<String> = file_names(&rs[1..], &scope)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names[0], "apps_v1_deployment_d.yaml");
    }

    #[test]
    fn a_device_is_written_not_replaced_and_a_symlink_kept() {
        write_atomic(Path::new("/dev/null"), b"x\n").unwrap();
        let meta = std::fs::metadata("/dev/null").unwrap();
        assert!(!meta.is_file(), "/dev/null is still a device");
        let dir = std::env::temp_dir().join(format!("ply-out-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (target, link) = (dir.join("target.yaml"), dir.join("link.yaml"));
        std::fs::write(&target, "old\n").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new\n").unwrap();
        assert!(link.is_symlink(), "the symlink stays");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("ply-output-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("out.yaml");
        write_atomic(&f, b"a: 1\n").unwrap();
        write_atomic(&f, b"b: 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "b: 2\n");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1);
        assert!(write_atomic(&dir, b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
