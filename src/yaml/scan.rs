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

/// The high bit of each byte of `w` equal to `c`, exact in its lowest set bit only (a borrow
/// runs upwards past a matching byte): enough for a [`scan`], which reads only that bit, of
/// what is only ever added to (`|`), never taken away (`& !`). One operation fewer than
/// [`equal`], in the scans that run over every scalar.
#[inline]
fn first_equal(w: u64, c: u8) -> u64 {
    let x = w ^ (ONES * u64::from(c));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The high bit of each byte of `w` below `n` (at most 0x80), exact in its lowest set bit
/// only, for bytes below 0x80 (see [`first_equal`]).
#[inline]
fn first_below(w: u64, n: u8) -> u64 {
    w.wrapping_sub(ONES * u64::from(n)) & !w & HIGHS
}

/// The high bit of each byte of `w` equal to `c`, exactly: each byte's low seven bits are
/// summed apart from its high bit, so no carry crosses into a neighbour.
#[inline]
fn equal(w: u64, c: u8) -> u64 {
    let x = w ^ (ONES * u64::from(c));
    !(((x & !HIGHS).wrapping_add(!HIGHS)) | x | !HIGHS)
}

/// The high bit of each byte of `w` below `n` (at most 0x80), exactly: the high bit is set
/// before subtracting, so no borrow crosses into a neighbour.
#[inline]
fn below(w: u64, n: u8) -> u64 {
    !((w | HIGHS).wrapping_sub(ONES * u64::from(n))) & HIGHS & !w
}

/// The high bit of each byte of `w` that is not printable ASCII (space to `~`).
#[inline]
fn unprintable(w: u64) -> u64 {
    (w & HIGHS) | below(w, 0x20) | equal(w, 0x7f)
}

/// The high bit of each byte of `w` that is a control character other than tab and line feed.
#[inline]
fn control_but_tab_and_lf(w: u64) -> u64 {
    (below(w, 0x20) & !(equal(w, b'\n') | equal(w, b'\t'))) | equal(w, 0x7f)
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
        first_equal(w, b'\n') | first_equal(w, b'\t') | first_equal(w, b':') | first_equal(w, b'#')
    })
}

/// The index of the first byte at or after `from` that is not printable ASCII (space to
/// `~`) or is a `:` or `#`, or `b.len()` when there is none: what the emitter's analysis of
/// a scalar must look at one by one.
#[inline]
pub(super) fn ascii_stop(b: &[u8], from: usize) -> usize {
    scan(b, from, |w| {
        // `unprintable`, in the operations of a scan.
        (w & HIGHS)
            | first_below(w, 0x20)
            | first_equal(w, 0x7f)
            | first_equal(w, b':')
            | first_equal(w, b'#')
    })
}

/// The index of the first byte at or after `from` that is not a space, or `b.len()`: a
/// line's indentation.
#[inline]
pub(super) fn past_spaces(b: &[u8], from: usize) -> usize {
    scan(b, from, |w| !equal(w, b' ') & HIGHS)
}

/// Whether every byte is printable ASCII (space to `~`) or a line feed.
pub(super) fn printable_ascii_or_lf(b: &[u8]) -> bool {
    scan(b, 0, |w| unprintable(w) & !equal(w, b'\n')) == b.len()
}

/// `None` when the text holds a control character other than tab and line feed (a byte
/// below 0x20, or 0x7f); else whether it is all ASCII. What the fast reader checks of a whole
/// file before reading it.
pub(super) fn no_control_but_tab_and_lf(b: &[u8]) -> Option<bool> {
    let either = scan(b, 0, |w| control_but_tab_and_lf(w) | (w & HIGHS));
    match b.get(either) {
        None => Some(true),
        Some(&c) if c < 0x80 => None,
        // Past the first byte beyond ASCII, only control characters are looked for.
        Some(_) => (scan(b, either, control_but_tab_and_lf) == b.len()).then_some(false),
    }
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
