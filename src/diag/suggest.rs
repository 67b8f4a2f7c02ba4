//! "Did you mean …?": the nearest of a set of valid names to a misspelt one, by edit distance.
//! Used for unknown kustomization fields and for missing files with a near name beside them.

/// The candidate nearest to `wrong`, when it is near enough to be a likely typo: at most one
/// edit per five characters of the longer name (at least one, at most three), ties going to
/// the first candidate. A case-only difference always counts as near.
pub(crate) fn nearest<'a>(
    wrong: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == wrong {
            continue;
        }
        let d = if c.eq_ignore_ascii_case(wrong) {
            0
        } else {
            distance(wrong, c)
        };
        let limit = (wrong.chars().count().max(c.chars().count()) / 5).clamp(1, 3);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The suggestion for serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a`
/// or `b`", "expected `a`"): the nearest expected name.
pub(crate) fn unknown_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (wrong, expected) = rest.split_once('`')?;
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    nearest(wrong, names.iter().copied()).map(str::to_string)
}

/// Plain Levenshtein distance over characters (a transposition is two edits): how far a patch
/// target's name is from an existing id's, to list the closest ids (`render/patches/apply.rs`). Kept
/// apart from [`distance`], which counts a transposition as one: the ids listed, and their
/// order, are pinned by the goldens.
pub(crate) fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            let del = prev[j + 1] + 1;
            let ins = cur[j] + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// Levenshtein distance over characters, with a transposition counting as one edit (optimal
/// string alignment), so `resoruces` is one edit from `resources`.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested() {
        let fields = [
            "resources",
            "components",
            "namePrefix",
            "nameSuffix",
            "images",
        ];
        assert_eq!(nearest("resource", fields), Some("resources"));
        assert_eq!(nearest("resoruces", fields), Some("resources"));
        assert_eq!(nearest("NamePrefix", fields), Some("namePrefix"));
        assert_eq!(nearest("image", fields), Some("images"));
        assert_eq!(nearest("helmCharts", fields), None);
        assert_eq!(nearest("x", fields), None);
        assert_eq!(nearest("absent.yaml", ["present.yaml"]), None);
        assert_eq!(
            nearest("deploymnet.yaml", ["deployment.yaml"]),
            Some("deployment.yaml")
        );
    }

    #[test]
    fn serde_messages_are_read() {
        assert_eq!(
            unknown_field(
                "unknown field `resource`, expected one of `apiVersion`, `resources`, `kind`"
            )
            .as_deref(),
            Some("resources")
        );
        assert_eq!(
            unknown_field("unknown field `kinds`, expected `kind` or `name`").as_deref(),
            Some("kind")
        );
        assert_eq!(
            unknown_field("unknown field `zzzzzz`, expected `kind`"),
            None
        );
        assert_eq!(unknown_field("invalid type"), None);
    }
}
