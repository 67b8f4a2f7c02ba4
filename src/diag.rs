//! ply's one error type, [`Error`]: a typed [`ErrorKind`], a message, where it happened (file
//! and byte range), the chain of kustomizations that led there, and how to fix it. Rendered once,
//! by `main`, through miette. Also [`Warnings`], the sink for non-fatal messages, and the exit
//! codes.

use std::fmt;

pub(crate) mod suggest;

use miette::{Diagnostic, LabeledSpan, SourceCode};

use crate::source::Location;

/// What went wrong, as a type that tests and callers can match on. Each kind has a stable code
/// (`ply::yaml`, `ply::kustomization::unknown-field`, …) printed with the diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Invalid command-line arguments (beyond what clap checks).
    Usage,
    /// Reading or writing a file failed.
    Io,
    /// YAML or JSON syntax.
    Yaml,
    /// A document is not the shape it must have (not a map, missing `kind`, …).
    InvalidResource,
    /// A kustomization field is unknown, has the wrong type, or an invalid value.
    Kustomization,
    /// A file or directory named by a kustomization does not exist.
    NotFound,
    /// A path escapes the kustomization root under the root-only load restrictor.
    LoadRestriction,
    /// A remote base that cannot be fetched (`ply fetch`) or is not pinned and cached
    /// (`ply render`), a remote file URL, or a bad `ply.lock`.
    Remote,
    /// A remote base or file that is pinned but not in the cache: `ply fetch` (at the side's
    /// revision, in a review) fixes it.
    NotFetched,
    /// A cycle of kustomizations.
    Cycle,
    /// Two resources with one id.
    DuplicateId,
    /// A generator's input is invalid (bad literal, env file, behavior).
    Generator,
    /// A transformer's input is invalid.
    Transformer,
    /// A patch cannot be applied (no target, bad directive, type mismatch).
    Patch,
    /// A plugin that cannot run: not asked for (`--enable-alpha-plugins`), a container function
    /// or Go plugin, or one that failed.
    Plugin,
    /// A schema (`openapi:`, CRD) cannot be used.
    Schema,
    /// A live snapshot cannot be used, or server-side apply conflicts.
    Live,
    /// An SSA conflict with another field manager.
    Conflict,
    /// `--strict` turned a warning into an error.
    Strict,
    /// A file is not text (invalid UTF-8 or UTF-16, NUL or control characters, UTF-16 without
    /// a byte order mark).
    Encoding,
    /// An input went past one of ply's limits (nesting depth, alias expansion, size); the
    /// message names the flag that raises it. See `docs/reliability.md`.
    Limit,
    /// A value only a decryption key gives (the variables of a SOPS-encrypted Secret): ply
    /// never decrypts.
    Encrypted,
}

impl ErrorKind {
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Usage => "ply::usage",
            ErrorKind::Io => "ply::io",
            ErrorKind::Yaml => "ply::yaml",
            ErrorKind::InvalidResource => "ply::resource",
            ErrorKind::Kustomization => "ply::kustomization",
            ErrorKind::NotFound => "ply::not-found",
            ErrorKind::LoadRestriction => "ply::load-restriction",
            ErrorKind::Remote => "ply::remote",
            ErrorKind::NotFetched => "ply::not-fetched",
            ErrorKind::Cycle => "ply::cycle",
            ErrorKind::DuplicateId => "ply::duplicate-id",
            ErrorKind::Generator => "ply::generator",
            ErrorKind::Transformer => "ply::transformer",
            ErrorKind::Patch => "ply::patch",
            ErrorKind::Plugin => "ply::plugin",
            ErrorKind::Schema => "ply::schema",
            ErrorKind::Live => "ply::live",
            ErrorKind::Conflict => "ply::conflict",
            ErrorKind::Strict => "ply::strict",
            ErrorKind::Encoding => "ply::encoding",
            ErrorKind::Limit => "ply::limit",
            ErrorKind::Encrypted => "ply::encrypted",
        }
    }
}

/// A located, explained failure.
#[derive(Debug, Clone)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub location: Option<Location>,
    /// Text of the label under the location (what is wrong there).
    pub label: Option<String>,
    pub help: Option<String>,
    /// Kustomization chain, outermost first: "overlays/prod/kustomization.yaml", ….
    pub chain: Vec<String>,
    /// Further places that belong to the story (the other file of a duplicate id).
    pub related: Vec<Error>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The error with `scrub` applied to its message and help (to hide a credential).
    pub fn scrubbed(mut self, scrub: impl Fn(&str) -> String) -> Error {
        self.message = scrub(&self.message);
        self.help = self.help.as_deref().map(&scrub);
        self
    }

    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            location: None,
            label: None,
            help: None,
            chain: Vec::new(),
            related: Vec::new(),
        }
    }

    pub fn at(mut self, location: Location) -> Error {
        if self.location.is_none() {
            self.location = Some(location);
        }
        self
    }

    pub fn at_opt(self, location: Option<Location>) -> Error {
        match location {
            Some(l) => self.at(l),
            None => self,
        }
    }

    pub fn label(mut self, label: impl Into<String>) -> Error {
        self.label = Some(label.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Error {
        self.help = Some(help.into());
        self
    }

    /// Adds one outer step to the chain (called as the error travels up the kustomizations).
    pub fn in_kustomization(mut self, step: impl Into<String>) -> Error {
        let step = step.into();
        if self.chain.first() != Some(&step) {
            self.chain.insert(0, step);
        }
        self
    }

    pub fn with_related(mut self, other: Error) -> Error {
        self.related.push(other);
        self
    }

    pub fn io(path: &std::path::Path, e: &std::io::Error) -> Error {
        Error::new(
            ErrorKind::Io,
            format!("{}: {}", crate::source::display_path(path), e),
        )
    }

    /// The message plus `file:line:column` and the chain, on one line each: for logs, tests
    /// and the conformance runner's error comparison.
    pub fn plain(&self) -> String {
        let mut s = self.message.clone();
        if let Some(l) = &self.location {
            s.push_str(&format!("\n  at {}", l.describe()));
        }
        for step in &self.chain {
            s.push_str(&format!("\n  in {step}"));
        }
        if let Some(h) = &self.help {
            s.push_str(&format!("\n  help: {h}"));
        }
        s
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl Diagnostic for Error {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.kind.code()))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let mut parts = Vec::new();
        if !self.chain.is_empty() {
            parts.push(format!("while building {}", self.chain.join(" → ")));
        }
        if let Some(h) = &self.help {
            parts.push(h.clone());
        }
        if parts.is_empty() {
            None
        } else {
            Some(Box::new(parts.join("\n")))
        }
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.location.as_ref().map(|l| &*l.file as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let l = self.location.as_ref()?;
        let (line, col) = l.file.line_col(l.offset);
        let text = self
            .label
            .clone()
            .unwrap_or_else(|| format!("{}:{line}:{col}", l.file.display));
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some(text),
            l.offset,
            l.len,
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

/// A source file names itself in miette's report header (`,-[path:line:col]`).
impl From<crate::source::NotText> for Error {
    fn from(e: crate::source::NotText) -> Error {
        Error::new(ErrorKind::Encoding, e.message).help(
            "kustomize reads YAML as UTF-8 text (or UTF-16 that opens with a byte order mark) \
             without NUL or control characters; save the file as UTF-8 and remove the \
             character (the column counts bytes; in a UTF-16 file, characters)",
        )
    }
}

impl SourceCode for crate::source::SourceFile {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> std::result::Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let inner = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.display.clone(),
            inner.data(),
            *inner.span(),
            inner.line(),
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// Non-fatal messages collected during a run and printed by `main` on stderr. Passed by
/// reference to the stages that warn; no global state.
#[derive(Debug, Default)]
pub struct Warnings {
    messages: Vec<String>,
}

impl Warnings {
    pub fn warn(&mut self, message: impl Into<String>) {
        let m = message.into();
        if !self.messages.contains(&m) {
            self.messages.push(m);
        }
    }

    pub fn messages(&self) -> &[String] {
        &self.messages
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

/// Process exit codes.
pub(crate) mod exit {
    pub(crate) const OK: i32 = 0;
    /// A render or patch failed; for `ply diff`, differences were found (kubectl diff's rule).
    pub(crate) const FAILURE: i32 = 1;
    /// `ply diff` failed (kubectl diff exits >1 on errors).
    pub(crate) const DIFF_ERROR: i32 = 2;
}
