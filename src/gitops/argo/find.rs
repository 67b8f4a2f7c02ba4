//! Finding Applications in a repository: every `argoproj.io/v1alpha1` Application document in
//! its YAML files, with the file it is in.

use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Result};
use crate::fs::Fs;

use super::app::Application;

/// Every file under `root` on the disk, relative to it, in `filepath.Walk` order (entries by
/// name, a directory's files where the directory falls), `.git` left out.
pub(crate) fn disk_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    walk(root, Path::new(""), &mut out)?;
    Ok(out)
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let dir = root.join(rel);
    let mut entries: Vec<(String, bool)> = std::fs::read_dir(&dir)
        .map_err(|e| Error::io(&dir, &e))?
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            // `filepath.Walk` does not follow symlinks: a linked directory is one entry.
            let is_dir = e.file_type().ok()?.is_dir();
            Some((name, is_dir))
        })
        .collect();
    entries.sort();
    for (name, is_dir) in entries {
        let child = rel.join(&name);
        if is_dir {
            if name != ".git" {
                walk(root, &child, out)?;
            }
        } else {
            out.push(child);
        }
    }
    Ok(())
}

/// The Applications written in the YAML files among `files`, in file order.
pub(crate) fn applications(
    fs: &dyn Fs,
    root: &Path,
    files: &[PathBuf],
) -> Result<Vec<Application>> {
    let mut out = Vec::new();
    for rel in files {
        let name = rel.to_string_lossy();
        if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            continue;
        }
        let path = root.join(rel);
        let Ok(text) = fs.read_to_string(&path) else {
            continue;
        };
        if !(text.contains("argoproj.io/v1alpha1") && text.contains("Application")) {
            continue;
        }
        // A file that does not parse is not an Application's file (a template, say).
        if let Ok(apps) = Application::read_all(&path, &text) {
            out.extend(apps);
        }
    }
    Ok(out)
}

/// The Application `name` among `apps`; none or several are an error naming the candidates.
pub(crate) fn by_name(apps: Vec<Application>, name: &str) -> Result<Application> {
    let names: Vec<String> = apps.iter().map(|a| a.name.clone()).collect();
    let mut hits: Vec<Application> = apps.into_iter().filter(|a| a.name == name).collect();
    match hits.len() {
        1 => Ok(hits.remove(0)),
        0 => {
            let mut e = Error::new(
                ErrorKind::NotFound,
                format!("no Argo CD Application named '{name}' in the repository"),
            );
            if let Some(best) =
                crate::diag::suggest::nearest(name, names.iter().map(String::as_str))
            {
                e = e.help(format!("did you mean '{best}'?"));
            }
            Err(e)
        }
        _ => Err(Error::new(
            ErrorKind::Usage,
            format!(
                "{} Applications are named '{name}' ({}): give the file instead",
                hits.len(),
                hits.iter()
                    .map(|a| a.file.display.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}
