//! Byte order marks in a YAML stream: go-yaml skips one opening the stream, and kustomize's
//! kio reader (`kyaml/kio/byteio_reader.go`, which splits the stream at `---` lines and decodes
//! each document on its own) skips one opening any document. The YAML parser ply uses accepts
//! neither, so they are taken out before it reads the text, and offsets into the text it read
//! are mapped back to offsets into the file.

const BOM: char = '\u{FEFF}';

/// The text without the byte order marks that open the stream or a line after a `---` marker
/// line, and where they were (offsets into the returned text); `None` when there are none.
pub(super) fn strip(text: &str) -> Option<(String, Vec<usize>)> {
    if !text.contains(BOM) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut removed = Vec::new();
    let mut document_start = true;
    for line in text.split_inclusive('\n') {
        let line = match line.strip_prefix(BOM) {
            Some(rest) if document_start => {
                removed.push(out.len());
                rest
            }
            _ => line,
        };
        document_start = line
            .strip_prefix("---")
            .is_some_and(|rest| rest.trim().is_empty());
        out.push_str(line);
    }
    (!removed.is_empty()).then_some((out, removed))
}

/// The offset in the file of `offset` in the stripped text.
pub(super) fn original(removed: &[usize], offset: usize) -> usize {
    offset + BOM.len_utf8() * removed.iter().take_while(|&&r| r <= offset).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_at_document_starts_only() {
        let text = "\u{FEFF}a: 1\n---\n\u{FEFF}b: \u{FEFF}2\n";
        let (out, removed) = strip(text).unwrap();
        assert_eq!(out, "a: 1\n---\nb: \u{FEFF}2\n");
        assert_eq!(removed, vec![0, 9]);
        assert_eq!(&text[original(&removed, 9)..], "b: \u{FEFF}2\n");
        assert_eq!(original(&removed, 0), 3);
        assert!(strip("a: 1\n").is_none());
    }
}
