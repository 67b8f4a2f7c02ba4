//! Argo CD's settings as a render needs them: the kustomize build options (`argocd-cm`'s
//! `kustomize.buildOptions`, found in the repository or given on the command line) turned into
//! render options.

use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Result};
use crate::fs::{Fs, Restrictor};
use crate::render::{OutputOrder, RenderOptions};
use crate::yaml::parse_documents;

/// Where the build options came from, for messages.
#[derive(Clone, Debug, Default)]
pub(crate) struct BuildOptions {
    /// The option string (whitespace-separated, as `strings.Fields` splits it).
    pub text: String,
    /// The `argocd-cm` file it was read from; `None` when given on the command line or absent.
    pub from: Option<PathBuf>,
}

/// `kustomize.buildOptions` of the `argocd-cm` ConfigMaps among `files` (relative to `root`);
/// empty when there is none. Two ConfigMaps that disagree are an error.
pub(crate) fn find_build_options(
    fs: &dyn Fs,
    root: &Path,
    files: &[PathBuf],
) -> Result<BuildOptions> {
    let mut found: Option<BuildOptions> = None;
    for rel in files {
        let name = rel.to_string_lossy();
        if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            continue;
        }
        let path = root.join(rel);
        let Ok(text) = fs.read_to_string(&path) else {
            continue;
        };
        if !text.contains("argocd-cm") {
            continue;
        }
        let Ok(docs) = parse_documents(&text) else {
            continue;
        };
        for d in docs {
            let n = &d.node;
            if n.str_at(&["kind"]) != Some("ConfigMap")
                || n.str_at(&["metadata", "name"]) != Some("argocd-cm")
            {
                continue;
            }
            let text = n
                .get_path(&["data", "kustomize.buildOptions"])
                .and_then(|v| v.scalar_text())
                .unwrap_or_default();
            let this = BuildOptions {
                text,
                from: Some(rel.clone()),
            };
            match &found {
                Some(prev) if prev.text != this.text => {
                    return Err(Error::new(
                        ErrorKind::Usage,
                        format!(
                            "two argocd-cm ConfigMaps disagree on kustomize.buildOptions: '{}' ({}) and '{}' ({})",
                            prev.text,
                            prev.from.as_deref().unwrap_or(Path::new("?")).display(),
                            this.text,
                            rel.display()
                        ),
                    )
                    .help("say which applies with --build-options '…'"));
                }
                Some(_) => {}
                None => found = Some(this),
            }
        }
    }
    Ok(found.unwrap_or_default())
}

/// The render options `kustomize build <path> <options…>` asks for, over `base`; kustomize's
/// own defaults where the options say nothing. `kube_version` and `api_versions` (the
/// Application's) are passed only with `--enable-helm`, as `parseKustomizeBuildOptions` does.
pub(crate) fn apply_build_options(
    base: &RenderOptions,
    opts: &BuildOptions,
    kube_version: &str,
    api_versions: &[String],
) -> Result<RenderOptions> {
    let mut out = base.clone();
    // ply's own `--enable-helm` renders Helm sources; kustomize's helm is the build options'.
    out.helm.enabled = false;
    let words: Vec<&str> = opts.text.split_whitespace().collect();
    let mut i = 0;
    let bad = |msg: String| {
        let whence = match &opts.from {
            Some(p) => format!("kustomize.buildOptions in {}", p.display()),
            None => "--build-options".to_string(),
        };
        Error::new(ErrorKind::Usage, format!("{whence}: {msg}"))
    };
    while i < words.len() {
        let (flag, inline) = match words[i].split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (words[i], None),
        };
        let mut value = || -> Result<String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            words
                .get(i)
                .map(|s| s.to_string())
                .ok_or_else(|| bad(format!("{flag} needs a value")))
        };
        match flag {
            "--load-restrictor" => {
                out.load_restrictor = match value()?.as_str() {
                    "LoadRestrictionsNone" => Restrictor::None,
                    "LoadRestrictionsRootOnly" => Restrictor::RootOnly,
                    v => return Err(bad(format!("unknown --load-restrictor '{v}'"))),
                }
            }
            "--enable-helm" => out.helm.enabled = true,
            "--helm-command" => out.helm.command = value()?,
            "--helm-kube-version" => out.helm.kube_version = Some(value()?),
            "--helm-api-versions" => out.helm.api_versions.push(value()?),
            "--helm-debug" => out.helm.debug = true,
            "--enable-alpha-plugins" => {
                out.plugins.enabled = true;
                out.helm.enabled = true;
            }
            "--enable-exec" => out.plugins.exec = true,
            "--enable-managedby-label" => out.managed_by_label = true,
            "--reorder" => {
                out.reorder = match value()?.as_str() {
                    "legacy" => OutputOrder::Legacy,
                    "none" => OutputOrder::None,
                    v => return Err(bad(format!("unknown --reorder '{v}'"))),
                }
            }
            other => {
                return Err(bad(format!(
                    "'{other}' is not a kustomize build option ply renders with"
                ))
                .help("ply knows --load-restrictor, --enable-helm, --helm-command, --helm-kube-version, --helm-api-versions, --helm-debug, --enable-alpha-plugins, --enable-exec, --enable-managedby-label and --reorder"));
            }
        }
        i += 1;
    }
    if out.helm.enabled {
        if !kube_version.is_empty() {
            out.helm.kube_version = Some(kube_version.to_string());
        }
        out.helm.api_versions.extend(api_versions.iter().cloned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_map_to_render_options() {
        let o = BuildOptions {
            text: "--load-restrictor=LoadRestrictionsNone  --enable-helm".into(),
            from: None,
        };
        let r = apply_build_options(&RenderOptions::default(), &o, "1.30", &[]).unwrap();
        assert_eq!(r.load_restrictor, Restrictor::None);
        assert!(r.helm.enabled);
        assert_eq!(r.helm.kube_version.as_deref(), Some("1.30"));
        let o = BuildOptions {
            text: "--output x".into(),
            from: None,
        };
        assert!(apply_build_options(&RenderOptions::default(), &o, "", &[]).is_err());
    }
}
