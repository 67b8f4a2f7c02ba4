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
    /// Whether diagnostics may print lines of this file (see [`Quote`]).
    pub quote: Quote,
    /// The remote base this file was read from: its URL as written, credentials redacted,
    /// without the path inside the repository or the ref (`None`: a local file).
    pub remote: Option<String>,
}

/// Bytes that are not a text file ([`SourceFile::from_bytes`]): the message names the file, the
/// line and the byte column, and says what was found. `diag` makes it an encoding error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotText {
    pub message: String,
}

/// Whether a diagnostic may print a file's lines in its snippet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Quote {
    /// The usual case: the lines around the error are shown.
    #[default]
    Yes,
    /// A file outside the kustomization root, or reached through a symlink that leads out of
    /// it: it is named (path, line, column) but none of its text is printed, so that a
    /// kustomization cannot make ply print `/etc/passwd` in an error.
    Never,
}

impl SourceFile {
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> Arc<SourceFile> {
        let path = path.into();
        let display = display_path(&path);
        Arc::new(SourceFile {
            path,
            display,
            text: text.into(),
            quote: Quote::Yes,
            remote: None,
        })
    }

    /// A file whose text diagnostics must never print ([`Quote::Never`]).
    pub fn unquoted(path: impl Into<PathBuf>, text: impl Into<String>) -> Arc<SourceFile> {
        let mut file = SourceFile::new(path, text);
        if let Some(f) = Arc::get_mut(&mut file) {
            f.quote = Quote::Never;
        }
        file
    }

    /// A file's bytes as text, or an error that names the file, the line and the byte column
    /// of the first thing that is not text, and says what it is: invalid or overlong UTF-8, an
    /// encoded surrogate, a UTF-16 or UTF-32 file without a byte order mark (by its zero
    /// bytes), a NUL or another control character. A UTF-8 byte order mark is kept (the YAML
    /// reader skips it, as go-yaml does). A file opening with a UTF-16 byte order mark (little
    /// or big endian) is decoded to UTF-8 without the mark, as go-yaml's reader decodes it
    /// ([`decode_utf16`]). Tabs, line feeds and carriage returns are text; so is DEL
    /// and the C1 range, which YAML allows in quoted scalars and go-yaml reads.
    /// The error is a [`NotText`], which `diag` turns into an encoding error (this leaf knows
    /// no diagnostics).
    pub fn from_bytes(
        path: impl Into<PathBuf>,
        bytes: Vec<u8>,
    ) -> Result<Arc<SourceFile>, NotText> {
        let path = path.into();
        if let Some(decoded) = decode_utf16(&bytes) {
            let not_text = |line: usize, col: usize, what: &str| NotText {
                message: format!("{}:{line}:{col}: {what}", display_path(&path)),
            };
            let text = decoded.map_err(|(line, col, what)| not_text(line, col, what))?;
            return match check_text(text.as_bytes()) {
                Ok(()) => Ok(SourceFile::new(path, text)),
                Err((offset, what)) => {
                    let (line, col) = byte_line_col(text.as_bytes(), offset);
                    Err(not_text(line, col, &what))
                }
            };
        }
        // One UTF-8 validation and one scan for control bytes in the usual (valid) case.
        let (problem, bytes) = match String::from_utf8(bytes) {
            Ok(text) => match check_text(text.as_bytes()) {
                Ok(()) => return Ok(SourceFile::new(path, text)),
                Err(p) => (p, text.into_bytes()),
            },
            Err(e) => {
                let bytes = e.into_bytes();
                match check_text(&bytes) {
                    Err(p) => (p, bytes),
                    Ok(()) => ((0, "invalid UTF-8".to_string()), bytes),
                }
            }
        };
        let (offset, what) = problem;
        let (line, col) = byte_line_col(&bytes, offset);
        Err(NotText {
            message: format!("{}:{line}:{col}: {what}", display_path(&path)),
        })
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        // An offset inside a character counts as that character's start.
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }
}

/// The text of a file that opens with a UTF-16 byte order mark (`FF FE` little endian, `FE FF`
/// big endian), decoded to UTF-8 without the mark; `None` for any other file. As go-yaml's
/// reader decodes it (`yaml_parser_determine_encoding` and `yaml_parser_update_buffer` in
/// go-yaml v2 and v3 `readerc.go`, which kustomize's readers use: kyaml's `kio.ByteReader`
/// for resources and patches, sigs.k8s.io/yaml for the kustomization and its configuration
/// files): an odd byte at the end, a low surrogate first, or a high surrogate not followed by
/// a low one is an error, given as its line, its column (in characters) and what is wrong.
pub(crate) fn decode_utf16(bytes: &[u8]) -> Option<Result<String, (usize, usize, &'static str)>> {
    let little = match bytes {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return None,
    };
    let unit = |i: usize| {
        let pair = [bytes[i], bytes[i + 1]];
        if little {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    };
    let mut out = String::with_capacity(bytes.len() / 2);
    let at = |out: &str, what| {
        let line_start = out.rfind('\n').map_or(0, |i| i + 1);
        let line = out.matches('\n').count() + 1;
        Some(Err((line, out[line_start..].chars().count() + 1, what)))
    };
    let mut i = 2;
    while i < bytes.len() {
        if i + 1 >= bytes.len() {
            return at(
                &out,
                "an incomplete UTF-16 character at the end of the file",
            );
        }
        let first = unit(i);
        let c = match first {
            0xDC00..=0xDFFF => {
                return at(&out, "a UTF-16 low surrogate without a high one before it");
            }
            0xD800..=0xDBFF => {
                if i + 3 >= bytes.len() {
                    return at(
                        &out,
                        "an incomplete UTF-16 surrogate pair at the end of the file",
                    );
                }
                let second = unit(i + 2);
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return at(&out, "a UTF-16 high surrogate not followed by a low one");
                }
                i += 4;
                0x10000 + ((u32::from(first) & 0x3FF) << 10) + (u32::from(second) & 0x3FF)
            }
            _ => {
                i += 2;
                u32::from(first)
            }
        };
        // Every value left is a scalar value (surrogates were handled above).
        out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    Some(Ok(out))
}

/// The first byte that makes `bytes` not YAML text, and what it is.
fn check_text(bytes: &[u8]) -> Result<(), (usize, String)> {
    if let Err(e) = std::str::from_utf8(bytes) {
        let at = e.valid_up_to();
        let rest = &bytes[at..];
        let what = match rest {
            [0xC0 | 0xC1, ..] | [0xE0, 0x80..=0x9F, ..] | [0xF0, 0x80..=0x8F, ..] => {
                "an overlong UTF-8 sequence"
            }
            [0xED, 0xA0..=0xBF, ..] => "an encoded UTF-16 surrogate (not valid UTF-8)",
            [0xF5..=0xFF, ..] | [0xF4, 0x90..=0xBF, ..] => "a byte that never occurs in UTF-8",
            _ if e.error_len().is_none() => "a UTF-8 sequence cut off at the end of the file",
            _ => "invalid UTF-8",
        };
        let shown: Vec<String> = rest.iter().take(4).map(|b| format!("0x{b:02X}")).collect();
        return Err((at, format!("{what} (bytes {})", shown.join(" "))));
    }
    // A NUL among the first bytes with text around it: a UTF-16 (or UTF-32) file without a
    // byte order mark.
    let Some(first) = first_control(bytes) else {
        return Ok(());
    };
    for (i, &b) in bytes.iter().enumerate().skip(first) {
        let what = match b {
            0 if bytes.len() >= 2 && (bytes[..2].contains(&0)) => {
                "a NUL byte: the file looks like UTF-16 or UTF-32; ply reads UTF-8".to_string()
            }
            0 => "a NUL byte".to_string(),
            b'\t' | b'\n' | b'\r' => continue,
            0x01..=0x1F => format!("the control character U+{b:04X}"),
            _ => continue,
        };
        return Err((i, what));
    }
    Ok(())
}

/// The position of the first control character other than a tab or a line break. Looked for
/// 64 bytes at a time without a branch per byte (the compiler makes that a few vector
/// compares), since every file a render reads passes here.
fn first_control(bytes: &[u8]) -> Option<usize> {
    let control = |b: u8| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r');
    let mut chunks = bytes.chunks_exact(64);
    let mut start = 0;
    for chunk in &mut chunks {
        if chunk.iter().fold(false, |any, &b| any | control(b)) {
            break;
        }
        start += 64;
    }
    bytes[start..]
        .iter()
        .position(|&b| control(b))
        .map(|i| start + i)
}

/// 1-based line and byte column of a byte offset in bytes that may not be text.
fn byte_line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, offset - start + 1)
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
        let mut offset = offset.min(file.text.len());
        while !file.text.is_char_boundary(offset) {
            offset -= 1;
        }
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
pub(crate) fn display_path(path: &Path) -> String {
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

    /// UTF-16 with a byte order mark is decoded (both byte orders, surrogate pairs); broken
    /// UTF-16 is refused at its line and column, as go-yaml's reader refuses it.
    #[test]
    fn utf16_with_a_byte_order_mark_is_decoded() {
        let text = "a: h\u{e9}llo \u{1F600}\nb: 2\n";
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        for bytes in [le.clone(), be] {
            assert_eq!(SourceFile::from_bytes("/x.yaml", bytes).unwrap().text, text);
        }
        let mut odd = le.clone();
        odd.push(b'x');
        let e = SourceFile::from_bytes("/x.yaml", odd).unwrap_err();
        assert!(
            e.message.contains(":3:1: an incomplete UTF-16 character"),
            "{}",
            e.message
        );
        let mut lone = le[..8].to_vec(); // BOM, `a: `
        lone.extend([0x00, 0xDC]);
        let e = SourceFile::from_bytes("/x.yaml", lone).unwrap_err();
        assert!(
            e.message.contains(":1:4: a UTF-16 low surrogate"),
            "{}",
            e.message
        );
        let mut nul = le[..4].to_vec(); // BOM, `a`
        nul.extend([0x00, 0x00]);
        let e = SourceFile::from_bytes("/x.yaml", nul).unwrap_err();
        assert!(e.message.contains(":1:2: a NUL byte"), "{}", e.message);
        assert!(decode_utf16(b"a: 1\n").is_none());
    }

    #[test]
    fn line_col() {
        let f = SourceFile::new("/x/a.yaml", "a: 1\nbb: 2\n");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(5), (2, 1));
        assert_eq!(f.line_col(7), (2, 3));
    }

    /// The chunked search finds what a byte-by-byte one finds: every control byte, tab and
    /// line break, at every position around the chunk boundaries, in texts of every length.
    #[test]
    fn first_control_agrees_with_a_plain_scan() {
        let naive = |b: &[u8]| {
            b.iter()
                .position(|&c| c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r'))
        };
        for len in [0, 1, 63, 64, 65, 127, 128, 200] {
            let text: Vec<u8> = (0..len).map(|i| b"ab: c\n\t\r\xC3\xA9"[i % 10]).collect();
            assert_eq!(first_control(&text), naive(&text));
            for at in 0..len {
                for byte in [0u8, 0x01, 0x1B, 0x1F, b'\t', b'\n', b'\r', b' ', 0x7F, 0x80] {
                    let mut t = text.clone();
                    t[at] = byte;
                    assert_eq!(first_control(&t), naive(&t), "{byte:#x} at {at} of {len}");
                }
            }
        }
    }
}
