//! `ply version` and `ply completion SHELL`: what a kustomize user looks for besides rendering.
//! The shell completions are clap_complete's, generated from the same clap types as the
//! parser; the commit comes from `build.rs` (`PLY_COMMIT`, `unknown` outside a git checkout).

use clap::CommandFactory;

use crate::render::KustomizeVersion;

/// The shells `ply completion` writes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

/// `ply version`: ply's version and commit, and the kustomize versions it renders as (the
/// default first), each with the kubectl releases that embed it.
pub(super) fn version_text() -> String {
    let default = KustomizeVersion::default();
    let mut out = format!(
        "ply {} (commit {})\nrenders like kustomize {default} ({}) by default\n",
        env!("CARGO_PKG_VERSION"),
        option_env!("PLY_COMMIT").unwrap_or("unknown"),
        default.kubectl_releases(),
    );
    for v in KustomizeVersion::ALL
        .iter()
        .rev()
        .filter(|v| **v != default)
    {
        out.push_str(&format!(
            "renders like kustomize {v} ({}) with --kustomize-version {}\n",
            v.kubectl_releases(),
            &v.tag()[1..]
        ));
    }
    out.push_str("--kustomize-version also takes the kubectl release to match, as kubectl-1.34\n");
    out
}

/// `ply completion SHELL`: the completion script, to be sourced by the shell.
pub(super) fn completion(shell: Shell) -> Vec<u8> {
    use clap_complete::{Shell as S, generate};
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    let shell = match shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Powershell => S::PowerShell,
    };
    generate(shell, &mut cmd, "ply", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_kustomize() {
        let v = version_text();
        for tag in ["v5.5.0", "v5.6.0", "v5.7.1", "v5.8.1"] {
            assert!(v.contains(&format!("kustomize {tag}")), "{v}");
        }
        assert!(v.starts_with(&format!("ply {} (commit ", env!("CARGO_PKG_VERSION"))));
        assert!(v.contains("by default"));
        assert!(v.contains("kubectl 1.34 and 1.35"), "{v}");
    }

    #[test]
    fn completions_name_the_commands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Powershell] {
            let text = String::from_utf8(completion(shell)).unwrap();
            for word in ["render", "patch", "diff", "enable-helm"] {
                assert!(text.contains(word), "{shell:?} completion lacks {word}");
            }
        }
    }
}
