//! The kustomize releases ply renders as: which one a render matches is a setting of the
//! render context; the rules that differ between releases ask it where they live.

/// The kustomize release whose output a render matches, byte for byte and error for error.
/// Each rule that differs between releases asks the render context which one it is
/// (`render::Context::kustomize`) where the rule lives, citing the kustomize change it
/// mirrors. Only releases that can be checked against a kubectl build are offered (no build
/// of v5.7.1 is to be had, so it is no target).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KustomizeVersion {
    /// kustomize v5.5.0, as embedded in kubectl 1.32 (v5.6.0, in kubectl 1.33, renders valid
    /// input the same).
    V5_5_0,
    /// kustomize v5.8.1, as embedded in kubectl 1.36 and 1.37, Argo CD 3.3 and later, and
    /// Flux's kustomize API v0.21; the standalone release. The default: what teams run today.
    #[default]
    V5_8_1,
}

impl KustomizeVersion {
    /// Every version ply can render as, oldest first.
    pub const ALL: &[KustomizeVersion] = &[KustomizeVersion::V5_5_0, KustomizeVersion::V5_8_1];

    /// The version as kustomize prints it (`v5.5.0`).
    pub fn tag(self) -> &'static str {
        match self {
            KustomizeVersion::V5_5_0 => "v5.5.0",
            KustomizeVersion::V5_8_1 => "v5.8.1",
        }
    }

    /// The kubectl releases that embed this version (and render as it).
    pub fn kubectl_releases(self) -> &'static str {
        match self {
            KustomizeVersion::V5_5_0 => "kubectl 1.32; 1.33 renders valid input alike",
            KustomizeVersion::V5_8_1 => "kubectl 1.36 and 1.37; Argo CD 3.3+; Flux",
        }
    }

    /// Whether this version is `other` or later.
    pub fn at_least(self, other: KustomizeVersion) -> bool {
        self >= other
    }

    /// Reads `5.8.1`, `v5.8.1`, `5.8` or `v5.8` (and the same for 5.5.0).
    pub fn parse(text: &str) -> Result<KustomizeVersion, String> {
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        match t {
            "5.5.0" | "5.5" => Ok(KustomizeVersion::V5_5_0),
            "5.8.1" | "5.8" => Ok(KustomizeVersion::V5_8_1),
            _ => Err(format!(
                "ply renders as kustomize 5.8.1 or 5.5.0, not '{text}' (ply offers only the \
                 releases its tests check against kubectl)"
            )),
        }
    }
}

impl std::fmt::Display for KustomizeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tag())
    }
}
