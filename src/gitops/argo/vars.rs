//! The Argo variables of one render (`ARGOCD_APP_NAME`, the revision and its short forms, the
//! source fields) and their substitution into override values, as the repo server does it.

/// The environment the repo server builds for a source (`newEnv`,
/// reposerver/repository/repository.go), in its order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env(pub Vec<(String, String)>);

/// What the variables are made of.
pub(crate) struct EnvInput<'a> {
    /// The Application's instance name (`<ns>_<name>` outside the control-plane namespace).
    pub app_name: &'a str,
    /// The destination namespace.
    pub namespace: &'a str,
    pub project: &'a str,
    /// The commit under review.
    pub revision: &'a str,
    pub repo_url: &'a str,
    pub path: &'a str,
    pub target_revision: &'a str,
}

impl Env {
    pub(crate) fn new(i: &EnvInput<'_>) -> Env {
        let short = |n: usize| i.revision.get(..n).unwrap_or(i.revision).to_string();
        Env(vec![
            ("ARGOCD_APP_NAME".into(), i.app_name.into()),
            ("ARGOCD_APP_NAMESPACE".into(), i.namespace.into()),
            ("ARGOCD_APP_PROJECT_NAME".into(), i.project.into()),
            ("ARGOCD_APP_REVISION".into(), i.revision.into()),
            ("ARGOCD_APP_REVISION_SHORT".into(), short(7)),
            ("ARGOCD_APP_REVISION_SHORT_8".into(), short(8)),
            ("ARGOCD_APP_SOURCE_REPO_URL".into(), i.repo_url.into()),
            ("ARGOCD_APP_SOURCE_PATH".into(), i.path.into()),
            (
                "ARGOCD_APP_SOURCE_TARGET_REVISION".into(),
                i.target_revision.into(),
            ),
        ])
    }

    fn get(&self, name: &str) -> &str {
        // `Env.Envsubst` builds a map: a later entry of one name wins.
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// `Env.Envsubst` (pkg/apis/application/v1alpha1/types.go): Go's `os.Expand` with `$$` for a
    /// dollar; `$VAR` and `${VAR}`, an unknown name is empty, no defaults.
    pub(crate) fn envsubst(&self, s: &str) -> String {
        let b = s.as_bytes();
        let mut out = String::with_capacity(s.len());
        let mut i = 0;
        let mut j = 0;
        while j < b.len() {
            if b[j] == b'$' && j + 1 < b.len() {
                out.push_str(&s[i..j]);
                let (name, width) = shell_name(&s[j + 1..]);
                match name {
                    // Invalid syntax: the characters are eaten.
                    "" if width > 0 => {}
                    // `$` not followed by a name stays.
                    "" => out.push('$'),
                    "$" => out.push('$'),
                    name => out.push_str(self.get(name)),
                }
                j += width;
                i = j + 1;
            }
            j += 1;
        }
        out.push_str(&s[i.min(s.len())..]);
        out
    }
}

fn is_special(c: u8) -> bool {
    matches!(
        c,
        b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-' | b'0'..=b'9'
    )
}

/// Go's `getShellName`: the name after a `$` and how many bytes it took.
fn shell_name(s: &str) -> (&str, usize) {
    let b = s.as_bytes();
    if b[0] == b'{' {
        if b.len() > 2 && is_special(b[1]) && b[2] == b'}' {
            return (&s[1..2], 3);
        }
        return match s[1..].find('}') {
            Some(0) => ("", 2),
            Some(k) => (&s[1..k + 1], k + 2),
            None => ("", 1),
        };
    }
    if is_special(b[0]) {
        return (&s[0..1], 1);
    }
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    (&s[..n], n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env(vec![("A".into(), "x".into()), ("B_1".into(), "y".into())])
    }

    #[test]
    fn expands_like_os_expand() {
        let e = env();
        for (input, want) in [
            ("$A-${B_1}", "x-y"),
            ("$$A", "$A"),
            ("${$}", "$"),
            ("a$", "a$"),
            ("$UNKNOWN.", "."),
            ("${}z", "z"),
            ("${A", "A"),
            ("$1b", "b"),
            ("$.", "$."),
            ("${A}${A}", "xx"),
        ] {
            assert_eq!(e.envsubst(input), want, "{input}");
        }
    }

    #[test]
    fn short_revisions() {
        let e = Env::new(&EnvInput {
            app_name: "a",
            namespace: "n",
            project: "p",
            revision: "0123456789abcdef",
            repo_url: "u",
            path: "p",
            target_revision: "HEAD",
        });
        assert_eq!(
            e.envsubst("$ARGOCD_APP_REVISION_SHORT/$ARGOCD_APP_REVISION_SHORT_8"),
            "0123456/01234567"
        );
    }
}
