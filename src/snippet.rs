//! What a diagnostic may show of a file, decided once at the edge where errors are printed:
//! the lines around the error, clipped to a window around the span when a line is long (miette
//! cannot lay out columns past about 65,000 and would panic; a minified JSON file is one such
//! line), nothing at all for a file marked [`Quote::Never`] (named only), and, for `ply diff`,
//! the values of `data` and `stringData` masked as the diff output masks Secret values.
//! [`Shown`] wraps a [`diag::Error`](crate::diag::Error) for miette; it owns no error text.

use std::fmt;

use miette::{Diagnostic, LabeledSpan, SourceCode, SourceSpan, SpanContents};

use crate::diag::Error;
use crate::source::{Location, Quote};

/// A line longer than this many bytes is clipped around the span.
const LONG_LINE: usize = 200;
/// Bytes of a clipped line kept before the span's start.
const BEFORE: usize = 40;
/// Bytes of a clipped line kept from the span's start on.
const AFTER: usize = 80;
/// A span over more lines than this is shown from its first line only.
const MAX_SPAN_LINES: usize = 40;
const ELLIPSIS: &str = "...";

/// How snippets are shown in one report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShowOptions {
    /// Mask the values under `data:` and `stringData:` (the inputs of `ply diff`, unless
    /// `--show-secrets`).
    pub mask_secrets: bool,
}

/// An error as it is printed: its own text, and a snippet ([`Window`]) built by the rules above.
pub(crate) struct Shown<'e> {
    error: &'e Error,
    window: Option<Window>,
    related: Vec<Shown<'e>>,
}

impl fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.error, f)
    }
}

impl<'e> Shown<'e> {
    pub(crate) fn new(error: &'e Error, opts: ShowOptions) -> Shown<'e> {
        Shown {
            error,
            window: error
                .location
                .as_ref()
                .filter(|l| l.file.quote == Quote::Yes)
                .map(|l| Window::new(l, error.label.as_deref(), opts)),
            related: error.related.iter().map(|e| Shown::new(e, opts)).collect(),
        }
    }
}

/// A message longer than this many bytes is cut (a message may quote its input: a patch
/// given inline, a minified document).
const LONG_MESSAGE: usize = 2_000;

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.error.message;
        if m.len() <= LONG_MESSAGE {
            return f.write_str(m);
        }
        let cut = floor_boundary(m, LONG_MESSAGE / 2);
        write!(
            f,
            "{}{ELLIPSIS} ({} more bytes of message not shown)",
            &m[..cut],
            m.len() - cut
        )
    }
}

impl std::error::Error for Shown<'_> {}

impl Diagnostic for Shown<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.error.code()
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let mut help = self.error.help().map(|h| h.to_string());
        // A file that is never quoted is still named, with its line and column.
        if let Some(l) = &self.error.location
            && l.file.quote == Quote::Never
        {
            let at = format!(
                "at {} (its text is not shown: the file is outside the kustomization root)",
                l.describe()
            );
            help = Some(match help {
                Some(h) => format!("{at}\n{h}"),
                None => at,
            });
        }
        help.map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.window.as_ref().map(|w| w as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let w = self.window.as_ref()?;
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some(w.label_text.clone()),
            w.label.0,
            w.label.1,
        ))))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        if self.related.is_empty() {
            None
        } else {
            Some(Box::new(self.related.iter().map(|e| e as &dyn Diagnostic)))
        }
    }
}

/// The lines of a file around a span, as the snippet shows them, with the span moved into
/// them. Line numbers and the header's column stay those of the file.
#[derive(Debug)]
pub(crate) struct Window {
    name: String,
    text: String,
    /// 0-based number, in the file, of the window's first line.
    first_line: usize,
    /// The span in `text`: offset and length.
    label: (usize, usize),
    label_text: String,
    /// 0-based line of the span's start in `text`, and how many bytes of that line were cut
    /// before what `text` keeps of it (less the ellipsis).
    label_line: usize,
    column_shift: isize,
}

impl Window {
    pub(crate) fn new(l: &Location, label_text: Option<&str>, opts: ShowOptions) -> Window {
        let file = &l.file;
        let masked;
        let full: &str = if opts.mask_secrets {
            masked = mask_secrets(&file.text);
            &masked
        } else {
            &file.text
        };
        let without_credentials = mask_url_credentials(full);
        let full: &str = &without_credentials;
        let (start, end, win_start, win_end) = bounds(full, l.offset, l.len);

        let mut text = String::with_capacity((win_end - win_start).min(4096));
        let (mut label_start, mut label_end) = (0, 0);
        let mut label_line = 0;
        let mut column_shift = 0isize;
        let mut at = win_start;
        let mut line_no = 0;
        loop {
            let le = line_end(full, at);
            let line = &full[at..le];
            let holds_start = at <= start && start <= le;
            let holds_end = at <= end && end <= le;
            if holds_start {
                label_line = line_no;
            }
            if line.len() <= LONG_LINE {
                if holds_start {
                    label_start = text.len() + (start - at);
                }
                if holds_end {
                    label_end = text.len() + (end - at);
                }
                text.push_str(line);
            } else {
                // Keep a window of the line: around the span's start on its line, the line's
                // beginning elsewhere.
                let (from, to) = if holds_start {
                    (
                        floor_boundary(line, (start - at).saturating_sub(BEFORE)),
                        floor_boundary(line, (start - at + AFTER).min(line.len())),
                    )
                } else {
                    (0, floor_boundary(line, LONG_LINE))
                };
                if from > 0 {
                    text.push_str(ELLIPSIS);
                    column_shift = from as isize - ELLIPSIS.len() as isize;
                }
                let kept = text.len();
                if holds_start {
                    label_start = kept + (start - at - from);
                }
                if holds_end {
                    // The span ends where the kept part ends, at most.
                    label_end = kept + (end.min(at + to) - at).saturating_sub(from);
                }
                text.push_str(&line[from..to]);
                if to < line.len() {
                    text.push_str(ELLIPSIS);
                }
            }
            if le >= win_end {
                break;
            }
            text.push('\n');
            at = le + 1;
            line_no += 1;
        }
        let label = (label_start, label_end.max(label_start) - label_start);
        let (line, col) = file.line_col(l.offset);
        Window {
            name: file.display.clone(),
            text,
            first_line: full[..win_start].matches('\n').count(),
            label,
            label_text: label_text
                .map(str::to_string)
                .unwrap_or_else(|| format!("{}:{line}:{col}", file.display)),
            label_line,
            column_shift,
        }
    }

    #[cfg(test)]
    /// The text the snippet shows (for tests).
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

/// The start of the line holding `at`.
fn line_start(full: &str, at: usize) -> usize {
    full[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the line holding `at` (its line break, or the end of the text).
fn line_end(full: &str, at: usize) -> usize {
    full[at..].find('\n').map_or(full.len(), |i| at + i)
}

/// The span at `offset` (`len` bytes) in `full`, and the window shown around it: `(start,
/// end, window start, window end)`. A long span, or one on a long line, is shown on its first
/// line only; the window has one line of context on each side, as miette shows by default.
fn bounds(full: &str, offset: usize, len: usize) -> (usize, usize, usize, usize) {
    let start = floor_boundary(full, offset.min(full.len()));
    let mut end = floor_boundary(full, offset.saturating_add(len).min(full.len())).max(start);
    let span_line_start = line_start(full, start);
    let first_line_end = line_end(full, start);
    let span_lines = full[start..end].matches('\n').count() + 1;
    if span_lines > MAX_SPAN_LINES
        || (end > first_line_end
            && full[span_line_start..line_end(full, end)]
                .split('\n')
                .any(|x| x.len() > LONG_LINE))
    {
        end = first_line_end.max(start);
    }
    let win_start = if span_line_start == 0 {
        0
    } else {
        line_start(full, span_line_start - 1)
    };
    let last_end = line_end(full, end);
    let win_end = if last_end >= full.len() {
        full.len()
    } else {
        line_end(full, last_end + 1)
    };
    (start, end, win_start, win_end)
}

impl SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, miette::MietteError> {
        let inner = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        let column = if inner.line() == self.label_line {
            (inner.column() as isize + self.column_shift).max(0) as usize
        } else {
            inner.column()
        };
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.first_line,
            column,
            inner.line_count(),
        )))
    }
}

fn floor_boundary(s: &str, mut at: usize) -> usize {
    while at > 0 && !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `text` with the user part of every `http://` or `https://` URL (`user:token@`) replaced by
/// `*`, byte for byte (offsets stay right): a snippet never shows a credential written in a
/// URL, as ply's messages name such URLs without it (`remote::url::redact`).
pub(crate) fn mask_url_credentials(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("://") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.as_bytes().to_vec();
    let mut from = 0;
    while let Some(i) = text[from..].find("://").map(|i| from + i) {
        from = i + 3;
        let before = &text.as_bytes()[..i];
        let ends_with = |word: &[u8]| {
            before.len() >= word.len()
                && before[before.len() - word.len()..].eq_ignore_ascii_case(word)
        };
        if !(ends_with(b"http") || ends_with(b"https")) {
            continue;
        }
        let rest = &text[from..];
        let end = rest
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | ']' | '}' | ',') || c.is_whitespace()
            })
            .unwrap_or(rest.len());
        if let Some(at) = rest[..end].rfind('@') {
            out[from..from + at].fill(b'*');
        }
    }
    // Only whole characters were replaced, by ASCII: still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

/// `text` with every value under a `data:` or `stringData:` key replaced by `*`, byte for
/// byte (so that offsets into the text stay right): the values of block mappings below the key,
/// and whatever follows the key on its own line (a flow mapping, a JSON object). Text only, as
/// a file with a syntax error cannot be read as YAML; any document's `data` is masked, not only
/// a Secret's, as the kind may be what is broken. `ply diff` masks Secret values the same way
/// in its output (`diff/mask.rs`).
pub(crate) fn mask_secrets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // The indentation of the `data:` key whose block the lines are in.
    let mut inside: Option<usize> = None;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let body = line.trim_start_matches([' ', '\t']);
        if let Some(key_indent) = inside {
            if body.is_empty() || body.starts_with('#') || indent > key_indent {
                // A `key: value` line masks its value; any other line (a continuation) whole.
                match value_start(body) {
                    Some(v) => {
                        out.push_str(&line[..indent + v]);
                        push_masked(&mut out, &line[indent + v..]);
                    }
                    None => {
                        out.push_str(&line[..indent]);
                        push_masked(&mut out, body);
                    }
                }
                continue;
            }
            inside = None;
        }
        if body.starts_with("---") {
            out.push_str(line);
            continue;
        }
        // `data:` / `"stringData":` anywhere on the line (a flow or JSON object may hold it
        // after other keys): mask what follows it on the line.
        match secret_key_end(line) {
            Some(after) => {
                out.push_str(&line[..after]);
                let rest = &line[after..];
                let shown = rest.trim();
                if shown.is_empty() || shown.starts_with('#') || shown == "|" || shown == ">" {
                    out.push_str(rest);
                } else {
                    push_masked(&mut out, rest);
                }
                inside = Some(indent);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Where the value of a `key: value` line starts (after `: `), if the line is one.
fn value_start(body: &str) -> Option<usize> {
    let i = body
        .find(": ")
        .or_else(|| body.ends_with(':').then(|| body.len() - 1))?;
    Some(i + 1)
}

/// The byte just after the colon of a `data` or `stringData` key on the line, quoted or not.
fn secret_key_end(line: &str) -> Option<usize> {
    for key in ["stringData", "data"] {
        let mut from = 0;
        while let Some(i) = line[from..].find(key).map(|i| i + from) {
            from = i + key.len();
            let before = line[..i].chars().next_back();
            let quoted = matches!(before, Some('"' | '\''));
            let start_ok = match before {
                None => true,
                Some(c) => c == ' ' || c == '\t' || c == '{' || c == ',' || quoted,
            };
            let mut after = i + key.len();
            if quoted && line[after..].starts_with(['"', '\'']) {
                after += 1;
            }
            let rest = &line[after..];
            let colon = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            if start_ok && rest[colon..].starts_with(':') {
                let end = after + colon + 1;
                if line[end..].is_empty() || line[end..].starts_with([' ', '\t', '{']) {
                    return Some(end);
                }
            }
        }
    }
    None
}

/// Pushes `s` with every character but blanks and YAML punctuation replaced by as many `*` as
/// it has bytes.
fn push_masked(out: &mut String, s: &str) {
    for c in s.chars() {
        if matches!(
            c,
            ' ' | '\t' | '\r' | '{' | '}' | '[' | ']' | ',' | ':' | '"' | '\''
        ) {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('*', c.len_utf8()));
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn url_credentials_are_masked_byte_for_byte() {
        let text = "resources:\n- https://user:s3cret@host/x.yaml\n- HTTP://tok@h/a@b\n- ssh://git@h/r\n- http://h/a@b\n";
        let masked = super::mask_url_credentials(text);
        assert_eq!(
            masked,
            "resources:\n- https://***********@host/x.yaml\n- HTTP://***@h/a@b\n- ssh://git@h/r\n- http://h/a@b\n"
        );
        assert_eq!(masked.len(), text.len());
        assert!(matches!(
            super::mask_url_credentials("a: b\n"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    use super::*;
    use crate::source::SourceFile;

    #[test]
    fn masks_block_and_flow_values_keeping_offsets() {
        let text = "kind: Secret\ndata:\n  a: c2VjcmV0\n  b: |\n    multi\nstringData: {x: \"top\"}\nmetadata:\n  name: s\n";
        let m = mask_secrets(text);
        assert_eq!(m.len(), text.len());
        assert!(
            !m.contains("c2VjcmV0") && !m.contains("multi") && !m.contains("top"),
            "{m}"
        );
        assert!(m.contains("  a: ********") && m.contains("name: s"), "{m}");
        let json = r#"{"kind":"Secret","data":{"k":"dmFs"},"metadata":{"name":"s"}}"#;
        let m = mask_secrets(json);
        assert!(
            !m.contains("dmFs") && m.starts_with(r#"{"kind":"Secret","data":"#),
            "{m}"
        );
    }

    #[test]
    fn long_lines_are_clipped_around_the_span() {
        let mut text = String::from("a: 1\n");
        text.push_str(&"x".repeat(100_000));
        text.push_str("BAD");
        text.push_str(&"y".repeat(1000));
        text.push_str("\nb: 2\n");
        let offset = 5 + 100_000;
        let file = SourceFile::new("/x/long.json", text);
        let w = Window::new(
            &Location::new(file, offset, 3),
            None,
            ShowOptions::default(),
        );
        assert!(w.text().len() < 400, "{}", w.text());
        assert_eq!(&w.text()[w.label.0..w.label.0 + w.label.1], "BAD");
        assert!(w.text().contains("...xxx") && w.text().contains("yyy..."));
    }

    /// Every kind of diagnostic, at every kind of place in a 100 KB single-line input (and in
    /// one with lines around it), renders without a panic, in bounded size, both themes, with
    /// and without masking.
    #[test]
    fn every_diagnostic_on_a_100_kb_line() {
        use crate::diag::{Error, ErrorKind};
        let kinds = [
            ErrorKind::Usage,
            ErrorKind::Io,
            ErrorKind::Yaml,
            ErrorKind::InvalidResource,
            ErrorKind::Kustomization,
            ErrorKind::NotFound,
            ErrorKind::LoadRestriction,
            ErrorKind::Remote,
            ErrorKind::NotFetched,
            ErrorKind::Cycle,
            ErrorKind::DuplicateId,
            ErrorKind::Generator,
            ErrorKind::Transformer,
            ErrorKind::Patch,
            ErrorKind::Plugin,
            ErrorKind::Schema,
            ErrorKind::Live,
            ErrorKind::Conflict,
            ErrorKind::Strict,
            ErrorKind::Encoding,
            ErrorKind::Limit,
        ];
        let line: String = (0..100_000)
            .map(|i| match i % 7 {
                0 => '{',
                1 => '"',
                2 => 'd',
                3 => '\t',
                4 => 'é',
                5 => ':',
                _ => ' ',
            })
            .collect();
        let texts = [
            line.clone(),
            format!("a: 1\n{line}\nb: 2\n"),
            format!("data:\n  k: {line}\n  j: x\n"),
        ];
        for text in &texts {
            let file = SourceFile::new("/x/long.json", text.clone());
            let n = text.len();
            let spans = [
                (0, 0),
                (0, 1),
                (n / 2, 10),
                (n / 2, n),
                (n - 1, 1),
                (n, 0),
                (n + 10, 5),
                (3, n * 2),
                (usize::MAX - 1, 2),
            ];
            // Every kind once, then every place with kinds in turn: the text of a diagnostic
            // depends on its kind only through its code.
            let cases = kinds.iter().map(|&k| (k, (n / 2, 10))).chain(
                spans
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| (kinds[i % kinds.len()], s)),
            );
            {
                for (kind, (offset, len)) in cases {
                    let other = Error::new(kind, "the other place").at(Location::new(
                        file.clone(),
                        offset / 3,
                        len,
                    ));
                    let e = Error::new(kind, format!("something is wrong: {text}"))
                        .at(Location::new(file.clone(), offset, len))
                        .label("here")
                        .help("do this")
                        .in_kustomization("k/kustomization.yaml")
                        .with_related(other);
                    for fancy in [false, true] {
                        for mask_secrets in [false, true] {
                            let out = crate::cli::render_error_with(
                                &e,
                                fancy,
                                ShowOptions { mask_secrets },
                            );
                            assert!(out.contains("long.json"), "{out}");
                            assert!(
                                out.len() < 8_000,
                                "{kind:?} {offset} {len}: {} bytes",
                                out.len()
                            );
                        }
                    }
                }
            }
        }
    }
}
