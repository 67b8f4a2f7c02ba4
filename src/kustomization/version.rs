//! The kustomize releases ply renders as: which one a render matches is a setting of the
//! render context; the rules that differ between releases ask it where they live.

/// The kustomize release whose output a render matches, byte for byte and error for error.
/// Each rule that differs between releases asks the render context which one it is
/// (`render::Context::kustomize`) where the rule lives, with [`KustomizeVersion::at_least`]
/// and the first offered release that has the rule, citing the kustomize change it mirrors:
/// a change of v5.7.0 asks `at_least(V5_7_1)`, a change of v5.8.0 `at_least(V5_8_1)`. Only
/// the releases a supported kubectl embeds are offered, each checked against its own build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KustomizeVersion {
    /// kustomize v5.5.0, as embedded in kubectl 1.32.
    V5_5_0,
    /// kustomize v5.6.0, as embedded in kubectl 1.33: no rule ply mirrors changed since
    /// v5.5.0 (kustomize/api v0.19.0), so it renders as v5.5.0 does.
    V5_6_0,
    /// kustomize v5.7.1, as embedded in kubectl 1.34 and 1.35 (kustomize/api v0.20.1): the
    /// changes of v5.7.0, not those of v5.8.0.
    V5_7_1,
    /// kustomize v5.8.1, as embedded in kubectl 1.36 and 1.37, Argo CD 3.3 and later, and
    /// Flux's kustomize API v0.21; the standalone release. The default: what teams run today.
    #[default]
    V5_8_1,
}

/// Each kubectl minor release ply knows, with the kustomize it embeds (kubectl's
/// `staging/src/k8s.io/kubectl/go.mod`, `sigs.k8s.io/kustomize/kustomize/v5`).
const KUBECTL: &[(u32, KustomizeVersion)] = &[
    (32, KustomizeVersion::V5_5_0),
    (33, KustomizeVersion::V5_6_0),
    (34, KustomizeVersion::V5_7_1),
    (35, KustomizeVersion::V5_7_1),
    (36, KustomizeVersion::V5_8_1),
    (37, KustomizeVersion::V5_8_1),
];

impl KustomizeVersion {
    /// Every version ply can render as, oldest first.
    pub const ALL: &[KustomizeVersion] = &[
        KustomizeVersion::V5_5_0,
        KustomizeVersion::V5_6_0,
        KustomizeVersion::V5_7_1,
        KustomizeVersion::V5_8_1,
    ];

    /// The version as kustomize prints it (`v5.5.0`).
    pub fn tag(self) -> &'static str {
        match self {
            KustomizeVersion::V5_5_0 => "v5.5.0",
            KustomizeVersion::V5_6_0 => "v5.6.0",
            KustomizeVersion::V5_7_1 => "v5.7.1",
            KustomizeVersion::V5_8_1 => "v5.8.1",
        }
    }

    /// The kubectl releases that embed this version (and the other tools that do).
    pub fn kubectl_releases(self) -> String {
        let minors: Vec<String> = KUBECTL
            .iter()
            .filter(|(_, v)| *v == self)
            .map(|(m, _)| format!("1.{m}"))
            .collect();
        let mut out = format!("kubectl {}", minors.join(" and "));
        if self == KustomizeVersion::V5_8_1 {
            out.push_str("; Argo CD 3.3+; Flux");
        }
        out
    }

    /// Whether this version is `other` or later.
    pub fn at_least(self, other: KustomizeVersion) -> bool {
        self >= other
    }

    /// Reads a kustomize release (`5.7.1`, `v5.7.1`, `5.7` or `v5.7`) or the kubectl release
    /// that embeds one (`kubectl-1.34`, `kubectl-v1.34.2`).
    pub fn parse(text: &str) -> Result<KustomizeVersion, String> {
        let t = text.trim();
        if let Some(k) = t.strip_prefix("kubectl-") {
            return Self::of_kubectl(k).ok_or_else(|| {
                let known: Vec<String> = KUBECTL.iter().map(|(m, _)| format!("1.{m}")).collect();
                format!(
                    "ply knows the kustomize of kubectl {}, not of kubectl '{k}' \
                     (write kubectl-1.34, or a kustomize version: {})",
                    known.join(", "),
                    Self::offered()
                )
            });
        }
        let t = t.strip_prefix('v').unwrap_or(t);
        Self::ALL
            .iter()
            .copied()
            .find(|v| {
                let full = &v.tag()[1..];
                t == full || full.rsplit_once('.').is_some_and(|(minor, _)| t == minor)
            })
            .ok_or_else(|| {
                format!(
                    "ply renders as kustomize {}, not '{text}' (ply offers the releases a \
                     supported kubectl embeds, each checked against that release; \
                     kubectl-1.NN names one by its kubectl)",
                    Self::offered()
                )
            })
    }

    /// The kustomize of a kubectl release: `1.34`, `v1.34` or `1.34.2`.
    fn of_kubectl(text: &str) -> Option<KustomizeVersion> {
        let t = text.strip_prefix('v').unwrap_or(text);
        let mut parts = t.split('.');
        let (major, minor) = (parts.next()?, parts.next()?);
        let patch_ok = match parts.next() {
            None => true,
            Some(p) => !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()),
        };
        if major != "1" || !patch_ok || parts.next().is_some() {
            return None;
        }
        let minor: u32 = minor.parse().ok()?;
        KUBECTL.iter().find(|(m, _)| *m == minor).map(|(_, v)| *v)
    }

    /// The offered versions, newest first, as a user writes them (`5.8.1, 5.7.1, …`).
    fn offered() -> String {
        let names: Vec<&str> = Self::ALL.iter().rev().map(|v| &v.tag()[1..]).collect();
        names.join(", ")
    }
}

impl std::fmt::Display for KustomizeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tag())
    }
}

#[cfg(test)]
mod tests {
    use super::KustomizeVersion::{self, V5_5_0, V5_6_0, V5_7_1, V5_8_1};

    #[test]
    fn reads_kustomize_releases_in_every_form() {
        for (text, want) in [
            ("5.5.0", V5_5_0),
            ("v5.5", V5_5_0),
            ("5.6.0", V5_6_0),
            ("v5.6.0", V5_6_0),
            ("5.6", V5_6_0),
            ("5.7.1", V5_7_1),
            ("v5.7", V5_7_1),
            (" 5.7.1 ", V5_7_1),
            ("5.8.1", V5_8_1),
            ("v5.8", V5_8_1),
        ] {
            assert_eq!(KustomizeVersion::parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn reads_kubectl_releases_as_the_kustomize_they_embed() {
        for (text, want) in [
            ("kubectl-1.32", V5_5_0),
            ("kubectl-1.33", V5_6_0),
            ("kubectl-1.34", V5_7_1),
            ("kubectl-v1.35", V5_7_1),
            ("kubectl-1.35.3", V5_7_1),
            ("kubectl-1.36", V5_8_1),
            ("kubectl-1.37", V5_8_1),
        ] {
            assert_eq!(KustomizeVersion::parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn refuses_releases_not_offered() {
        for text in [
            "5.7.0",
            "5.4.3",
            "6",
            "",
            "5.7.1.0",
            "kubectl-1.31",
            "kubectl-1.38",
        ] {
            let e = KustomizeVersion::parse(text).unwrap_err();
            assert!(e.contains("5.8.1, 5.7.1, 5.6.0, 5.5.0"), "{text}: {e}");
        }
        for text in [
            "kubectl-2.34",
            "kubectl-1.34.x",
            "kubectl-1.34.",
            "kubectl-134",
        ] {
            let e = KustomizeVersion::parse(text).unwrap_err();
            assert!(
                e.contains("kubectl 1.32, 1.33, 1.34, 1.35, 1.36, 1.37"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn releases_are_ordered_and_name_their_kubectl() {
        assert!(KustomizeVersion::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!(V5_7_1.at_least(V5_6_0) && !V5_7_1.at_least(V5_8_1));
        assert_eq!(V5_7_1.kubectl_releases(), "kubectl 1.34 and 1.35");
        assert_eq!(V5_6_0.kubectl_releases(), "kubectl 1.33");
        assert_eq!(
            V5_8_1.kubectl_releases(),
            "kubectl 1.36 and 1.37; Argo CD 3.3+; Flux"
        );
        assert_eq!(KustomizeVersion::default(), V5_8_1);
    }
}
