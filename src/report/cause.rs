//! How a changed field's cause (the place that set its new value, issue 29) is written in the
//! Markdown and JSON reports, and the link to that line at the head commit on GitHub or GitLab.

use crate::yaml::{Map, Node};

use super::model::{Cause, FieldCauses};

/// ` (set by `step` at [file:line](link), changed in this pull request)` (empty without a
/// cause), appended to a change where the Markdown report lists it; a removed field's
/// `(held by step at file:line at the base, …)`; a place read through another (a generated
/// object's hash): `(set by step, hash of ConfigMap NAME: file:line, …)`.
pub(crate) fn markdown(cause: Option<&Cause>) -> String {
    let Some(c) = cause else {
        return String::new();
    };
    let place = format!("{}:{}", c.file, c.line);
    let at = match &c.link {
        Some(link) => format!("[`{place}`]({link})"),
        None => format!("`{place}`"),
    };
    let changed = match (&c.remote, c.changed) {
        (None, Some(true)) => ", changed in this pull request".to_string(),
        (None, Some(false)) => ", not changed in this pull request".to_string(),
        (Some(url), Some(true)) => {
            format!(", from the remote base `{url}`, which this pull request moved")
        }
        (Some(url), Some(false)) => {
            format!(", from the remote base `{url}`, not moved by this pull request")
        }
        (Some(url), None) => format!(", from the remote base `{url}`"),
        (None, None) => String::new(),
    };
    match (&c.via, c.at_base) {
        (_, true) => format!(" (held by {} at {at} at the base{changed})", c.step),
        (Some(via), false) => format!(" (set by {}, {via}: {at}{changed})", c.step),
        (None, false) => format!(" (set by {} at {at}{changed})", c.step),
    }
}

/// The cause as HTML (the HTML report's "cause" column): `set by step at <a>file:line</a>,
/// changed in this pull request`, its text escaped; empty without a cause.
pub(crate) fn html(cause: Option<&Cause>) -> String {
    let Some(c) = cause else {
        return String::new();
    };
    let esc = super::text::escape_html;
    let place = format!("<code>{}:{}</code>", esc(&c.file), c.line);
    let at = match &c.link {
        Some(link) => format!("<a href=\"{}\">{place}</a>", esc(link)),
        None => place,
    };
    let changed = match (&c.remote, c.changed) {
        (None, Some(true)) => ", changed in this pull request".to_string(),
        (None, Some(false)) => ", not changed in this pull request".to_string(),
        (Some(url), Some(true)) => format!(
            ", from the remote base <code>{}</code>, which this pull request moved",
            esc(url)
        ),
        (Some(url), Some(false)) => format!(
            ", from the remote base <code>{}</code>, not moved by this pull request",
            esc(url)
        ),
        (Some(url), None) => format!(", from the remote base <code>{}</code>", esc(url)),
        (None, None) => String::new(),
    };
    let step = esc(&c.step);
    match (&c.via, c.at_base) {
        (_, true) => format!("held by {step} at {at} at the base{changed}"),
        (Some(via), false) => format!("set by {step}, {}: {at}{changed}", esc(via)),
        (None, false) => format!("set by {step} at {at}{changed}"),
    }
}

/// `{file, line, column, step, changedInPullRequest, link}` of the JSON review, with
/// `remoteBase`, `via` and `side: base` when they apply.
pub(crate) fn json(c: &Cause) -> Node {
    let mut m = Map::default();
    m.insert("file".into(), Node::str(c.file.clone()));
    m.insert("line".into(), Node::Int(c.line as i128));
    m.insert("column".into(), Node::Int(c.column as i128));
    m.insert("step".into(), Node::str(c.step.clone()));
    m.insert(
        "changedInPullRequest".into(),
        c.changed.map_or(Node::Null, Node::Bool),
    );
    m.insert("link".into(), c.link.clone().map_or(Node::Null, Node::str));
    if let Some(url) = &c.remote {
        m.insert("remoteBase".into(), Node::str(url.clone()));
    }
    if let Some(via) = &c.via {
        m.insert("via".into(), Node::str(via.clone()));
    }
    if c.at_base {
        m.insert("side".into(), Node::str("base"));
    }
    Node::Map(m)
}

/// [`json`] read back (`ply diff --merge-reports`); `None` when `n` is not such a map.
pub(crate) fn from_json(n: &Node) -> Option<Cause> {
    let int = |f: &str| match n.get(f) {
        Some(Node::Int(i)) => usize::try_from(*i).ok(),
        _ => None,
    };
    let text = |f: &str| n.get(f).and_then(Node::as_str).map(str::to_string);
    Some(Cause {
        file: text("file")?,
        line: int("line")?,
        column: int("column")?,
        step: text("step")?,
        changed: match n.get("changedInPullRequest") {
            Some(Node::Bool(b)) => Some(*b),
            _ => None,
        },
        link: text("link"),
        remote: text("remoteBase"),
        via: text("via"),
        at_base: text("side").as_deref() == Some("base"),
    })
}

/// An object's fields' causes ([`FieldCauses`]) as a JSON list of `{path, cause}`.
pub(crate) fn table_json(t: &FieldCauses) -> Node {
    let row = |(path, c): &(String, Cause)| {
        let mut m = Map::default();
        m.insert("path".into(), Node::str(path.clone()));
        m.insert("cause".into(), json(c));
        Node::Map(m)
    };
    Node::Seq(t.iter().map(row).collect())
}

/// [`table_json`] read back; the rows that are not such maps are left out.
pub(crate) fn table_from_json(n: &Node) -> FieldCauses {
    let Node::Seq(rows) = n else {
        return Vec::new();
    };
    let row = |r: &Node| {
        Some((
            r.get("path")?.as_str()?.to_string(),
            from_json(r.get("cause")?)?,
        ))
    };
    rows.iter().filter_map(row).collect()
}

/// The web address of `path` (relative to the repository root, `/`-separated) at `line` of
/// `commit`, for a repository whose remote is `remote` on GitHub or GitLab (HTTPS or SSH
/// form, with or without `.git`); `None` for any other host.
pub(crate) fn source_link(remote: &str, commit: &str, path: &str, line: usize) -> Option<String> {
    let r = remote.trim().trim_end_matches('/');
    let r = r.strip_suffix(".git").unwrap_or(r);
    let (host, repo) = if let Some(rest) = r.strip_prefix("git@") {
        rest.split_once(':')?
    } else {
        let rest = r
            .strip_prefix("https://")
            .or_else(|| r.strip_prefix("http://"))
            .or_else(|| r.strip_prefix("ssh://git@"))?;
        let rest = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
        rest.split_once('/')?
    };
    if repo.is_empty() || commit.is_empty() || path.starts_with('/') {
        return None;
    }
    let path = path.trim_start_matches("./");
    match host {
        "github.com" => Some(format!(
            "https://github.com/{repo}/blob/{commit}/{path}#L{line}"
        )),
        "gitlab.com" => Some(format!(
            "https://gitlab.com/{repo}/-/blob/{commit}/{path}#L{line}"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_on_github_and_gitlab_only() {
        let c = "0123abc";
        for remote in [
            "https://github.com/ply-dev/ply.git",
            "https://github.com/ply-dev/ply",
            "git@github.com:ply-dev/ply.git",
            "ssh://git@github.com/ply-dev/ply.git",
            "https://token@github.com/ply-dev/ply/",
        ] {
            assert_eq!(
                source_link(remote, c, "overlays/prod/kustomization.yaml", 12).as_deref(),
                Some(
                    "https://github.com/ply-dev/ply/blob/0123abc/overlays/prod/kustomization.yaml#L12"
                ),
                "{remote}"
            );
        }
        assert_eq!(
            source_link("git@gitlab.com:group/sub/app.git", c, "a.yaml", 3).as_deref(),
            Some("https://gitlab.com/group/sub/app/-/blob/0123abc/a.yaml#L3")
        );
        assert_eq!(
            source_link("https://example.com/x/y.git", c, "a.yaml", 1),
            None
        );
        assert_eq!(source_link("/srv/repo.git", c, "a.yaml", 1), None);
        assert_eq!(
            source_link("https://github.com/x/y", c, "/abs.yaml", 1),
            None
        );
    }

    #[test]
    fn markdown_names_the_place_and_whether_it_changed() {
        let c = Cause {
            file: "overlays/prod/kustomization.yaml".into(),
            line: 12,
            column: 11,
            step: "images".into(),
            changed: Some(true),
            link: None,
            remote: None,
            via: None,
            at_base: false,
        };
        assert_eq!(
            markdown(Some(&c)),
            " (set by images at `overlays/prod/kustomization.yaml:12`, changed in this pull request)"
        );
        assert_eq!(markdown(None), "");
        // A file of a remote base: whether the pull request moved the base.
        let remote = Cause {
            file: "https://github.com/o/r//base/deploy.yaml?ref=abc".into(),
            line: 10,
            remote: Some("https://github.com/o/r".into()),
            changed: Some(true),
            ..c
        };
        assert_eq!(
            markdown(Some(&remote)),
            " (set by images at `https://github.com/o/r//base/deploy.yaml?ref=abc:10`, from the remote base `https://github.com/o/r`, which this pull request moved)"
        );
        let same = Cause {
            changed: Some(false),
            ..remote.clone()
        };
        assert!(markdown(Some(&same)).ends_with(", not moved by this pull request)"));
        assert_eq!(from_json(&json(&remote)), Some(remote));
    }
}
