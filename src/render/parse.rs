//! The parse step every render shares, whichever thread runs it and whether or not its parses
//! are shared with other renders: a resource file's bytes → its text and resources
//! ([`parse_file`]), and any file's bytes → text ([`text_of`]). Imported by the reader thread
//! (`ahead.rs`), the shared store (`shared.rs`) and the build; imports neither of the first two,
//! so their imports point one way.

use std::path::Path;
use std::sync::Arc;

use super::accumulate::parse_resources;
use crate::diag::Result;
use crate::resource::Resource;
use crate::source::SourceFile;
use crate::yaml::limits::ReaderLimits;

/// A resource file read and parsed, or the error reading or parsing it gave.
pub(super) type ParsedFile = Result<(Arc<SourceFile>, Vec<Resource>)>;

/// A file's bytes as text: valid UTF-8 (the usual case) without a copy; UTF-16 with a byte
/// order mark decoded, its first document only ([`utf16_first_document`]); anything else with
/// U+FFFD for what is not.
pub(super) fn text_of(bytes: Vec<u8>) -> String {
    if let Some(Ok(text)) = crate::source::decode_utf16(&bytes) {
        return utf16_first_document(text);
    }
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The first document of a file decoded from UTF-16: kyaml's `kio.ByteReader`
/// (`kyaml/kio/byteio_reader.go`, `Read`) splits a stream at `\n---` lines of its bytes, which
/// UTF-16 text never holds (a zero byte sits beside each `-`), and decodes one document from
/// each piece; sigs.k8s.io/yaml reads one document too. So of a UTF-16 file kustomize reads
/// the first document only, as `yaml::parse::first_document` cuts it.
fn utf16_first_document(mut text: String) -> String {
    let first = crate::yaml::parse::first_document(&text).len();
    text.truncate(first);
    text
}

/// A resource file's text and resources from its bytes (`quoted`: whether diagnostics may
/// print its lines), as every render makes them, shared or not.
pub(super) fn parse_file(
    path: &Path,
    quoted: bool,
    bytes: Vec<u8>,
    limits: ReaderLimits,
) -> ParsedFile {
    let utf16 = bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]);
    let mut file = SourceFile::from_bytes(path, bytes)?;
    if utf16 {
        let text = utf16_first_document(file.text.clone());
        file = SourceFile::new(path, text);
    }
    if !quoted {
        file = SourceFile::unquoted(path, file.text.clone());
    }
    // Parsed documents hold no spare room (`yaml::parse`), so a render keeping them until it
    // prints keeps no more than it needs.
    let docs = parse_resources(&file, limits)?;
    Ok((file, docs))
}
