//! Byte scans shared by the reader and the emitter, eight bytes at a time: where the next
//! byte of a small set is, and whether a run of text is printable ASCII. Plain integer
//! arithmetic on `u64` words ("SWAR"), no `unsafe` and no target features; each function
//! gives what its byte-at-a-time definition in the tests gives.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The word of the eight bytes at `at` (little-endian: byte `at` is the lowest).
#[inline]
fn word(b: &[u8], at: usize) -> Option<u64> {
    let chunk: [u8; 8] = b.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// The high bit of each byte of `w` that is zero. Exact in its lowest set bit (a borrow only
/// runs upwards, past a zero byte), which is all [`first`] reads.
#[inline]
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w & HIGHS
}

/// The high bit of each byte of `w` equal to `c` (lowest set bit exact).
#[inline]
fn bytes_equal(w: u64, c: u8) -> u64 {
    zero_bytes(w ^ (ONES * u64::from(c)))
}

/// The index in its word of the lowest byte flagged in `mask` (not zero).
#[inline]
fn first(mask: u64) -> usize {
    (mask.trailing_zeros() / 8) as usize
}

/// The index of the first byte at or after `from` that `hits` flags in its word, or
/// `b.len()`. The last bytes are read as one word too (most scalars are shorter than eight
/// bytes), padded with zeros: whether or not `hits` flags the padding, its lowest flag is a
/// byte of `b` or the first byte of padding, which is at `b.len()`.
#[inline]
fn scan(b: &[u8], from: usize, hits: impl Fn(u64) -> u64) -> usize {
    let mut i = from;
    while let Some(w) = word(b, i) {
        let h = hits(w);
        if h != 0 {
            return i + first(h);
        }
        i += 8;
    }
    let rest = b.get(i..).unwrap_or_default();
    if rest.is_empty() {
        return b.len();
    }
    let mut last = [0; 8];
    last[..rest.len()].copy_from_slice(rest);
    let h = hits(u64::from_le_bytes(last));
    if h == 0 { b.len() } else { i + first(h) }
}

/// The index of the first byte at or after `from` that is a line feed, tab, `:` or `#`, or
/// `b.len()` when there is none: where a one-line plain scalar of the block reader may stop.
#[inline]
pub(super) fn plain_stop(b: &[u8], from: usize) -> usize {
    scan(b, from, |w| {
        bytes_equal(w, b'\n') | bytes_equal(w, b'\t') | bytes_equal(w, b':') | bytes_equal(w, b'#')
    })
}

/// The index of the first byte at or after `from` that is not printable ASCII (space to
/// `~`) or is a `:` or `#`, or `b.len()` when there is none: what the emitter's analysis of
/// a scalar must look at one by one.
#[inline]
pub(super) fn ascii_stop(b: &[u8], from: usize) -> usize {
    scan(b, from, |w| {
        // Bytes of 0x80 and above, below 0x20 (for a byte below 0x80, subtracting 0x20 sets
        // its high bit exactly when it is below), and 0x7f; then `:` and `#`.
        (w & HIGHS)
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS)
            | bytes_equal(w, 0x7f)
            | bytes_equal(w, b':')
            | bytes_equal(w, b'#')
    })
}

/// The index of the first byte at or after `from` that is not a space, or `b.len()`: a
/// line's indentation.
#[inline]
pub(super) fn past_spaces(b: &[u8], from: usize) -> usize {
    scan(b, from, |w| {
        !zero_bytes_exact(w ^ (ONES * u64::from(b' '))) & HIGHS
    })
}

/// Whether every byte is printable ASCII (space to `~`) or a line feed.
pub(super) fn printable_ascii_or_lf(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(8);
    for chunk in &mut chunks {
        let Ok(bytes) = chunk.try_into() else {
            return false;
        };
        let w = u64::from_le_bytes(bytes);
        // Bytes from 0x20 to 0x7f (the high bit set before subtracting keeps each byte's
        // borrow in it), less 0x7f, or a line feed.
        let printable = ((w | HIGHS).wrapping_sub(ONES * 0x20)) & HIGHS & !w;
        let fine = (printable & !zero_bytes_exact(w ^ (ONES * 0x7f)))
            | zero_bytes_exact(w ^ (ONES * u64::from(b'\n')));
        if fine != HIGHS {
            return false;
        }
    }
    (chunks.remainder().iter()).all(|&c| c == b'\n' || (b' '..=b'~').contains(&c))
}

/// The high bit of each byte of `w` that is zero, exactly (no borrow crosses a byte: each
/// byte's low seven bits are summed apart from its high bit).
#[inline]
fn zero_bytes_exact(w: u64) -> u64 {
    !(((w & !HIGHS).wrapping_add(!HIGHS)) | w | !HIGHS)
}

/// `None` when the text holds a control character other than tab and line feed (a byte
/// below 0x20, or 0x7f); else whether it is all ASCII. What the fast reader checks of a whole
/// file before reading it.
pub(super) fn no_control_but_tab_and_lf(b: &[u8]) -> Option<bool> {
    let mut high = 0;
    let mut chunks = b.chunks_exact(8);
    for chunk in &mut chunks {
        let w = u64::from_le_bytes(chunk.try_into().ok()?);
        // Bytes of 0x20 and above (and of 0x80 and above): the high bit set before
        // subtracting keeps each byte's borrow in it.
        let printable = ((w | HIGHS).wrapping_sub(ONES * 0x20)) & HIGHS;
        let control = !printable & HIGHS & !w;
        let allowed = zero_bytes_exact(w ^ (ONES * u64::from(b'\n')))
            | zero_bytes_exact(w ^ (ONES * u64::from(b'\t')));
        if control & !allowed != 0 || zero_bytes_exact(w ^ (ONES * 0x7f)) != 0 {
            return None;
        }
        high |= w & HIGHS;
    }
    let mut ascii = high == 0;
    for &c in chunks.remainder() {
        if (c < 0x20 && c != b'\n' && c != b'\t') || c == 0x7f {
            return None;
        }
        ascii &= c < 0x80;
    }
    Some(ascii)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plain_stop_model(b: &[u8], from: usize) -> usize {
        (from..b.len())
            .find(|&i| matches!(b[i], b'\n' | b'\t' | b':' | b'#'))
            .unwrap_or(b.len())
    }

    fn ascii_stop_model(b: &[u8], from: usize) -> usize {
        (from..b.len())
            .find(|&i| !(b' '..=b'~').contains(&b[i]) || b[i] == b':' || b[i] == b'#')
            .unwrap_or(b.len())
    }

    fn past_spaces_model(b: &[u8], from: usize) -> usize {
        (from..b.len()).find(|&i| b[i] != b' ').unwrap_or(b.len())
    }

    fn printable_or_lf_model(b: &[u8]) -> bool {
        b.iter().all(|&c| c == b'\n' || (b' '..=b'~').contains(&c))
    }

    fn no_control_model(b: &[u8]) -> Option<bool> {
        if b.iter()
            .any(|&c| (c < 0x20 && c != b'\n' && c != b'\t') || c == 0x7f)
        {
            return None;
        }
        Some(b.is_ascii())
    }

    /// Bytes drawn mostly from the ones the scans look for and their neighbours, where a
    /// word trick would go wrong (borrows next to a match, 0x1f/0x20, 0x7e/0x7f/0x80, 0xff).
    fn tricky() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            Just(b'\n'),
            Just(b'\t'),
            Just(b':'),
            Just(b'#'),
            Just(0u8),
            Just(1u8),
            Just(0x1f),
            Just(0x20),
            Just(0x7e),
            Just(0x7f),
            Just(0x80),
            Just(0xff),
            Just(b'9'),
            Just(b';'),
            Just(b'"'),
            Just(b'$'),
            Just(b' '),
            Just(b' '),
            any::<u8>(),
            b'a'..=b'z',
        ];
        prop::collection::vec(byte, 0..40)
    }

    proptest! {
        #[test]
        fn scans_agree_with_byte_at_a_time(b in tricky(), from in 0usize..40) {
            let from = from.min(b.len());
            prop_assert_eq!(plain_stop(&b, from), plain_stop_model(&b, from));
            prop_assert_eq!(ascii_stop(&b, from), ascii_stop_model(&b, from));
            prop_assert_eq!(no_control_but_tab_and_lf(&b), no_control_model(&b));
            prop_assert_eq!(past_spaces(&b, from), past_spaces_model(&b, from));
            prop_assert_eq!(printable_ascii_or_lf(&b), printable_or_lf_model(&b));
        }
    }

    /// Every single byte value, at every position of a word and after every other value:
    /// the cases where a borrow from a neighbour could make a false match.
    #[test]
    fn every_byte_pair_at_every_position() {
        for a in 0..=255u8 {
            for c in 0..=255u8 {
                for at in 0..9 {
                    let mut b = vec![b'x'; 17];
                    b[at] = a;
                    b[at + 1] = c;
                    assert_eq!(plain_stop(&b, 0), plain_stop_model(&b, 0), "{a} {c} {at}");
                    assert_eq!(ascii_stop(&b, 0), ascii_stop_model(&b, 0), "{a} {c} {at}");
                    assert_eq!(
                        no_control_but_tab_and_lf(&b),
                        no_control_model(&b),
                        "{a} {c} {at}"
                    );
                    assert_eq!(
                        printable_ascii_or_lf(&b),
                        printable_or_lf_model(&b),
                        "{a} {c} {at}"
                    );
                    assert_eq!(past_spaces(&b, 0), past_spaces_model(&b, 0), "{a} {c} {at}");
                    // Indentation: the pair in a run of spaces.
                    let mut spaces = vec![b' '; 17];
                    spaces[at] = a;
                    spaces[at + 1] = c;
                    let (got, want) = (past_spaces(&spaces, 0), past_spaces_model(&spaces, 0));
                    assert_eq!(got, want, "{a} {c} {at}");
                }
            }
        }
    }
}
