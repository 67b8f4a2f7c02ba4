//! Source text and positions: [`SourceFile`] (a path and its text, shared) and [`Location`]
//! (a byte range in one), with line/column lookup. A leaf: knows nothing of YAML or kustomize.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file's text as it was read, shared by every diagnostic that points into it.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    /// The path as diagnostics print it (relative to where the user ran ply when possible).
    pub display: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> Arc<SourceFile> {
        let path = path.into();
        let display = display_path(&path);
        Arc::new(SourceFile {
            path,
            display,
            text: text.into(),
        })
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }
}

/// A byte range in a source file.
#[derive(Clone, Debug)]
pub struct Location {
    pub file: Arc<SourceFile>,
    pub offset: usize,
    pub len: usize,
}

impl Location {
    pub fn new(file: Arc<SourceFile>, offset: usize, len: usize) -> Location {
        Location { file, offset, len }
    }

    /// The whole first line at `offset` (a document start, say).
    pub fn line_at(file: Arc<SourceFile>, offset: usize) -> Location {
        let offset = offset.min(file.text.len());
        let len = file.text[offset..]
            .find('\n')
            .unwrap_or(file.text.len() - offset);
        Location { file, offset, len }
    }

    pub fn line(&self) -> usize {
        self.file.line_col(self.offset).0
    }

    /// `path:line:column`.
    pub fn describe(&self) -> String {
        let (l, c) = self.file.line_col(self.offset);
        format!("{}:{l}:{c}", self.file.display)
    }
}

/// Shows a path relative to the current directory when it is below it. The directory is asked
/// once per process (ply never changes it): a render names thousands of files, and each
/// `getcwd` is a system call.
pub fn display_path(path: &Path) -> String {
    static CWD: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    if let Some(cwd) = CWD.get_or_init(|| std::env::current_dir().ok()) {
        if let Ok(rel) = path.strip_prefix(cwd) {
            let s = rel.display().to_string();
            return if s.is_empty() { ".".to_string() } else { s };
        }
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col() {
        let f = SourceFile::new("/x/a.yaml", "a: 1\nbb: 2\n");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(5), (2, 1));
        assert_eq!(f.line_col(7), (2, 3));
    }
}
