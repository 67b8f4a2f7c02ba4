//! `--error-format github|json`: diagnostics and warnings for machines. `github` writes GitHub
//! Actions workflow commands (`::error file=…,line=…,col=…,title=…::message`), which CI logs
//! turn into annotations on the file; `json` writes one JSON object per line and diagnostic.
//! `human` (the default) is miette's report, written by `cli::report`.

use crate::diag::Error;
use crate::yaml::Node;
use crate::yaml::json::{JsonStyle, to_json};

/// How diagnostics are printed on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ErrorFormat {
    /// miette's report with the source snippet.
    #[default]
    Human,
    /// GitHub Actions annotations (`::error file=…,line=…::…`).
    Github,
    /// One JSON object per diagnostic, one per line.
    Json,
}

/// Where a diagnostic points, as file, line and column (1-based).
struct Place {
    file: String,
    line: usize,
    col: usize,
}

fn place(e: &Error) -> Option<Place> {
    let l = e.location.as_ref()?;
    let (line, col) = l.file.line_col(l.offset);
    Some(Place {
        file: l.file.display.clone(),
        line,
        col,
    })
}

/// A warning's leading `file:line:col: ` (as ply writes located warnings), and the rest.
fn split_warning(w: &str) -> (Option<Place>, &str) {
    let Some((head, rest)) = w.split_once(": ") else {
        return (None, w);
    };
    let mut parts = head.rsplitn(3, ':');
    let (Some(col), Some(line), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
        return (None, w);
    };
    match (line.parse(), col.parse()) {
        (Ok(line), Ok(col)) if !file.is_empty() && !file.contains(' ') => (
            Some(Place {
                file: file.to_string(),
                line,
                col,
            }),
            rest,
        ),
        _ => (None, w),
    }
}

/// The text of an error with its help and chain, as one message.
fn full_message(e: &Error) -> String {
    let mut m = e.message.clone();
    if !e.chain.is_empty() {
        m.push_str(&format!("\nwhile building {}", e.chain.join(" → ")));
    }
    if let Some(h) = &e.help {
        m.push_str(&format!("\nhelp: {h}"));
    }
    m
}

/// GitHub's escaping of a workflow command's message (`%`, CR, LF) and properties (also `:`
/// and `,`).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn github_line(level: &str, place: Option<&Place>, title: Option<&str>, message: &str) -> String {
    let mut props = Vec::new();
    if let Some(p) = place {
        props.push(format!("file={}", escape_property(&p.file)));
        props.push(format!("line={}", p.line));
        props.push(format!("col={}", p.col));
    }
    if let Some(t) = title {
        props.push(format!("title={}", escape_property(t)));
    }
    let props = if props.is_empty() {
        String::new()
    } else {
        format!(" {}", props.join(","))
    };
    format!("::{level}{props}::{}\n", escape_data(message))
}

fn json_line(
    severity: &str,
    place: Option<&Place>,
    code: Option<&str>,
    e: Option<&Error>,
    message: &str,
) -> String {
    let mut m = crate::yaml::Map::default();
    m.insert("severity".into(), Node::str(severity));
    if let Some(c) = code {
        m.insert("code".into(), Node::str(c));
    }
    m.insert("message".into(), Node::str(message));
    if let Some(p) = place {
        m.insert("file".into(), Node::str(p.file.clone()));
        m.insert("line".into(), Node::Int(p.line as i128));
        m.insert("column".into(), Node::Int(p.col as i128));
    }
    if let Some(e) = e {
        if let Some(l) = &e.label {
            m.insert("label".into(), Node::str(l.clone()));
        }
        if let Some(h) = &e.help {
            m.insert("help".into(), Node::str(h.clone()));
        }
        if !e.chain.is_empty() {
            m.insert(
                "chain".into(),
                Node::Seq(e.chain.iter().map(|s| Node::str(s.clone())).collect()),
            );
        }
    }
    let mut out = to_json(&Node::Map(m), JsonStyle::COMPACT);
    out.push('\n');
    out
}

/// An error, and each related diagnostic after it, in `format` (not `Human`).
pub(super) fn error(e: &Error, format: ErrorFormat) -> String {
    let mut out = String::new();
    for (i, d) in std::iter::once(e).chain(e.related.iter()).enumerate() {
        let p = place(d);
        let text = if i == 0 {
            full_message(d)
        } else {
            d.message.clone()
        };
        out.push_str(&match format {
            ErrorFormat::Github => github_line("error", p.as_ref(), Some(d.kind.code()), &text),
            ErrorFormat::Json | ErrorFormat::Human => json_line(
                if i == 0 { "error" } else { "related" },
                p.as_ref(),
                Some(d.kind.code()),
                Some(d),
                &d.message,
            ),
        });
    }
    out
}

/// A GitHub Actions `::error` annotation at `file` and `line` (when known) with a title.
pub(crate) fn annotation(
    file: Option<&str>,
    line: Option<usize>,
    title: &str,
    message: &str,
) -> String {
    let props = match (file, line) {
        (Some(file), Some(line)) => format!(
            " file={},line={line},title={}",
            escape_property(file),
            escape_property(title)
        ),
        (Some(file), None) => format!(
            " file={},title={}",
            escape_property(file),
            escape_property(title)
        ),
        _ => format!(" title={}", escape_property(title)),
    };
    format!("::error{props}::{}\n", escape_data(message))
}

/// A warning in `format` (not `Human`).
pub(super) fn warning(w: &str, format: ErrorFormat) -> String {
    let (p, rest) = split_warning(w);
    match format {
        ErrorFormat::Github => github_line("warning", p.as_ref(), None, rest),
        ErrorFormat::Json | ErrorFormat::Human => {
            json_line("warning", p.as_ref(), None, None, rest)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::ErrorKind;
    use crate::source::{Location, SourceFile};

    fn located() -> Error {
        let file = SourceFile::new("k/kustomization.yaml", "resources:\n- missing.yaml\n");
        Error::new(ErrorKind::NotFound, "'missing.yaml' does not exist, 100%")
            .at(Location::new(file, 13, 12))
            .help("did you mean `present.yaml`?")
            .in_kustomization("k/kustomization.yaml")
    }

    #[test]
    fn github_annotations() {
        assert_eq!(
            error(&located(), ErrorFormat::Github),
            "::error file=k/kustomization.yaml,line=2,col=3,title=ply%3A%3Anot-found::'missing.yaml' does not exist, 100%25%0Awhile building k/kustomization.yaml%0Ahelp: did you mean `present.yaml`?\n"
        );
        assert_eq!(
            warning("a/k.yaml:3:1: 'vars' is deprecated", ErrorFormat::Github),
            "::warning file=a/k.yaml,line=3,col=1::'vars' is deprecated\n"
        );
        assert_eq!(
            warning("patch matched nothing: x", ErrorFormat::Github),
            "::warning::patch matched nothing: x\n"
        );
    }

    #[test]
    fn review_annotations() {
        assert_eq!(
            annotation(
                Some("a/k.yaml"),
                Some(8),
                "ply diff: a, b",
                "'x' does not exist"
            ),
            "::error file=a/k.yaml,line=8,title=ply diff%3A a%2C b::'x' does not exist\n"
        );
        assert_eq!(
            annotation(None, None, "t", "m\nn"),
            "::error title=t::m%0An\n"
        );
    }

    #[test]
    fn json_objects() {
        assert_eq!(
            error(&located(), ErrorFormat::Json),
            r#"{"chain":["k/kustomization.yaml"],"code":"ply::not-found","column":3,"file":"k/kustomization.yaml","help":"did you mean `present.yaml`?","line":2,"message":"'missing.yaml' does not exist, 100%","severity":"error"}"#
                .to_string()
                + "\n"
        );
        assert_eq!(
            warning("a/k.yaml:3:1: 'vars' is deprecated", ErrorFormat::Json),
            "{\"column\":1,\"file\":\"a/k.yaml\",\"line\":3,\"message\":\"'vars' is deprecated\",\"severity\":\"warning\"}\n"
        );
    }
}
