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

/// A file's bytes as text: valid UTF-8 (the usual case) without a copy, anything else with
/// U+FFFD for what is not.
pub(super) fn text_of(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A resource file's text and resources from its bytes (`quoted`: whether diagnostics may
/// print its lines), as every render makes them, shared or not.
pub(super) fn parse_file(
    path: &Path,
    quoted: bool,
    bytes: Vec<u8>,
    limits: ReaderLimits,
) -> ParsedFile {
    let mut file = SourceFile::from_bytes(path, bytes)?;
    if !quoted {
        file = SourceFile::unquoted(path, file.text.clone());
    }
    // Parsed documents hold no spare room (`yaml::parse`), so a render keeping them until it
    // prints keeps no more than it needs.
    let docs = parse_resources(&file, limits)?;
    Ok((file, docs))
}
