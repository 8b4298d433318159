//! The prefix-free block encoding of byte strings.
//!
//! * null: one null-sentinel byte (0x00 nulls first, 0xFF nulls last);
//! * empty: `0x01`;
//! * otherwise `0x02`, then the bytes in blocks: up to 32 bytes go in
//!   8-byte mini-blocks, the rest in 32-byte blocks. Every block is
//!   followed by `0xFF` when more blocks follow, else by the number of
//!   bytes the last block holds; the last block is zero-padded.
//!
//! Descending order inverts every byte except the null sentinel. The code
//! writes every byte it owns, padding included, so output buffers need no
//! zeroing.

use crate::Error;

/// Bytes in a full block.
pub(crate) const BLOCK_SIZE: usize = 32;
/// Bytes in a mini-block (the first 32 bytes are split into these).
pub(crate) const MINI_BLOCK_SIZE: usize = 8;
/// Mini-blocks before full blocks begin.
pub(crate) const MINI_BLOCK_COUNT: usize = BLOCK_SIZE / MINI_BLOCK_SIZE;
/// Follows every block but the last.
pub(crate) const BLOCK_CONTINUATION: u8 = 0xFF;
/// The whole encoding of an empty string.
pub(crate) const EMPTY_SENTINEL: u8 = 0x01;
/// Opens a non-empty string.
pub(crate) const NON_EMPTY_SENTINEL: u8 = 0x02;
/// Second byte of a value of the `Null` data type.
pub(crate) const NULL_VALUE_SENTINEL: u8 = 0x03;

/// Encoded length of a non-null value of `len` bytes.
#[inline]
pub(crate) fn encoded_len(len: usize) -> usize {
    // Both arms are cheap; a branch would mispredict on mixed lengths.
    std::hint::select_unpredictable(
        len <= BLOCK_SIZE,
        1 + len.div_ceil(MINI_BLOCK_SIZE) * (MINI_BLOCK_SIZE + 1),
        MINI_BLOCK_COUNT + len.div_ceil(BLOCK_SIZE) * (BLOCK_SIZE + 1),
    )
}

/// The last `r` (1..=8) bytes of `val`, zero-padded to 8.
#[inline(always)]
fn tail8(val: &[u8], r: usize) -> [u8; 8] {
    debug_assert!((1..=8).contains(&r) && r <= val.len());
    if val.len() >= 8 {
        // One load of the last 8 bytes, shifted so the wanted ones come
        // first and zeros follow.
        let last: [u8; 8] = val[val.len() - 8..].try_into().expect("8 bytes");
        (u64::from_le_bytes(last) >> (8 * (8 - r))).to_le_bytes()
    } else {
        // Shifts rather than a copy, which would become a memcpy call.
        let w = val[val.len() - r..]
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, &b)| w | (u64::from(b) << (8 * i)));
        w.to_le_bytes()
    }
}

/// Writes `bytes` in blocks of `SIZE`, each followed by a continuation
/// marker, the last by the number of bytes it holds. Returns the bytes
/// written.
#[inline(always)]
fn put_blocks<const SIZE: usize>(out: &mut [u8], bytes: &[u8], whole: &[u8]) -> usize {
    let (full, rest) = bytes.as_chunks::<SIZE>();
    let mut p = 0;
    for b in full {
        out[p..p + SIZE].copy_from_slice(b);
        out[p + SIZE] = BLOCK_CONTINUATION;
        p += SIZE + 1;
    }
    if rest.is_empty() {
        out[p - 1] = SIZE as u8;
        return p;
    }
    // The partial block: whole 8-byte pieces, then the last piece from the
    // end of the value, zero-padded; the output is zeroed beforehand, so the
    // block's remaining bytes are zero already.
    let block = &mut out[p..p + SIZE + 1];
    let (pieces, last) = rest.as_chunks::<8>();
    let mut q = 0;
    for piece in pieces {
        block[q..q + 8].copy_from_slice(piece);
        q += 8;
    }
    if !last.is_empty() {
        block[q..q + 8].copy_from_slice(&tail8(whole, last.len()));
        q += 8;
    }
    debug_assert!(block[q..SIZE].iter().all(|&b| b == 0));
    block[SIZE] = rest.len() as u8;
    p + SIZE + 1
}

/// Writes a non-null value and returns its length. `invert` is 0x00
/// (ascending) or 0xFF (descending). `out` must be zeroed: the padding of a
/// partial 32-byte block is not written.
#[inline]
pub(crate) fn put_value(out: &mut [u8], val: &[u8], invert: u8) -> usize {
    if val.is_empty() {
        out[0] = EMPTY_SENTINEL ^ invert;
        return 1;
    }
    let len = encoded_len(val.len());
    let out = &mut out[..len];
    out[0] = NON_EMPTY_SENTINEL;
    let head = &val[..val.len().min(BLOCK_SIZE)];
    let mut p = 1 + put_blocks::<MINI_BLOCK_SIZE>(&mut out[1..], head, val);
    if val.len() > BLOCK_SIZE {
        out[p - 1] = BLOCK_CONTINUATION;
        p += put_blocks::<BLOCK_SIZE>(&mut out[p..], &val[BLOCK_SIZE..], val);
    }
    debug_assert_eq!(p, len);
    if invert != 0 {
        out.iter_mut().for_each(|b| *b = !*b);
    }
    len
}

/// The longest value [`put_short`] encodes.
pub(crate) const SHORT_MAX: usize = BLOCK_SIZE;
/// The longest value [`put_medium`] encodes.
pub(crate) const MEDIUM_MAX: usize = 2 * BLOCK_SIZE;

/// 64 bytes of 0xFF then 64 zero bytes: the 8 bytes at `64 - len + at`
/// mask the word at byte `at` of a value of `len` bytes (at most 64), with
/// one load and no arithmetic on the length.
pub(crate) static KEEP_BYTES: [u8; 2 * MEDIUM_MAX] = {
    let mut k = [0u8; 2 * MEDIUM_MAX];
    let mut i = 0;
    while i < MEDIUM_MAX {
        k[i] = 0xFF;
        i += 1;
    }
    k
};

/// `MARKERS[len]`: the markers after the four mini-blocks of a value of
/// `len` bytes (little-endian, mini-block 0 lowest): a continuation when
/// more bytes follow, else how many bytes the mini-block holds.
static MARKERS: [u32; MEDIUM_MAX + 1] = {
    let mut m = [0u32; MEDIUM_MAX + 1];
    let mut len = 0;
    while len <= MEDIUM_MAX {
        let mut i = 0;
        while i < MINI_BLOCK_COUNT {
            let marker = if len > 8 * (i + 1) {
                BLOCK_CONTINUATION as u32
            } else if len > 8 * i {
                (len - 8 * i) as u32
            } else {
                0
            };
            m[len] |= marker << (8 * i);
            i += 1;
        }
        len += 1;
    }
    m
};

/// Encoded length of a value of 33 to 64 bytes: the header, four full
/// mini-blocks and one 32-byte block, each with its marker.
pub(crate) const LONG_TOTAL: usize = 1 + MINI_BLOCK_COUNT * (MINI_BLOCK_SIZE + 1) + BLOCK_SIZE + 1;

/// Writes a non-null value of `len` (1 to 64; 1 to 32 unless `BLOCK`)
/// bytes without data-dependent branches and returns its length
/// (`encoded_len(len)`). Random string lengths would otherwise cost a
/// branch misprediction per value.
///
/// Each 8-byte word of the value is loaded whole and the bytes past its
/// end masked off (one load from [`KEEP_BYTES`]). With `BLOCK`, the
/// 32-byte block that a value of 33 to 64 bytes has is computed for every
/// value and, for shorter ones, written over the slot of the last
/// mini-block. The mini-blocks follow in descending order, those the
/// value does not have also over that slot, which is written last: so
/// nothing lands outside the value's `encoded_len(len)` bytes.
///
/// # Safety
///
/// `1 <= len <= 64` (`<= 32` unless `BLOCK`); `src` must be valid for
/// reads of 64 bytes and `dst` for writes of `encoded_len(len)` bytes.
#[inline(always)]
pub(crate) unsafe fn put_medium_raw<const BLOCK: bool>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    invert: u8,
) -> usize {
    debug_assert!((1..=if BLOCK { MEDIUM_MAX } else { SHORT_MAX }).contains(&len));
    // `select_unpredictable` rather than `min`, which may become a branch.
    let long = BLOCK && len > SHORT_MAX;
    let short_len = std::hint::select_unpredictable(long, SHORT_MAX, len);
    let short_total = 1 + short_len.div_ceil(MINI_BLOCK_SIZE) * (MINI_BLOCK_SIZE + 1);
    let total = std::hint::select_unpredictable(long, LONG_TOTAL, short_total);
    let spare = total - (MINI_BLOCK_SIZE + 1);
    let inv64 = u64::from_ne_bytes([invert; 8]);
    // SAFETY: `MEDIUM_MAX - len < MEDIUM_MAX` is inside the table; the
    // words read from it below start at most `MEDIUM_MAX - 8` further on,
    // so they end by `2 * MEDIUM_MAX - len`, inside too.
    let keep = unsafe { KEEP_BYTES.as_ptr().add(MEDIUM_MAX - len) };
    let word = |at: usize| -> u64 {
        debug_assert!(at + 8 <= MEDIUM_MAX);
        // SAFETY: `at + 8 <= MEDIUM_MAX`: within the 64 readable bytes of
        // `src`, and within `KEEP_BYTES` (see `keep`).
        let (w, k) = unsafe {
            (
                src.add(at).cast::<u64>().read_unaligned(),
                keep.add(at).cast::<u64>().read_unaligned(),
            )
        };
        (u64::from_le(w) & u64::from_le(k)) ^ inv64
    };
    if BLOCK {
        const BLOCK_AT: usize = 1 + MINI_BLOCK_COUNT * (MINI_BLOCK_SIZE + 1);
        // A value of at most 32 bytes has no block: its block is written to
        // a scratch buffer instead, chosen without a branch.
        let mut scratch = std::mem::MaybeUninit::<[u8; BLOCK_SIZE + 1]>::uninit();
        // A long value's encoding is `LONG_TOTAL` bytes, of which the block
        // and its marker are the last `BLOCK_SIZE + 1`: `to` has that many
        // writable bytes either way. (`wrapping_add`: for a short value the
        // address may lie past `dst`'s bytes, and is not used. `black_box`
        // keeps the compiler from seeing that the scratch writes are dead,
        // which it would turn into a branch.)
        let to = std::hint::black_box(std::hint::select_unpredictable(
            long,
            dst.wrapping_add(BLOCK_AT),
            scratch.as_mut_ptr().cast::<u8>(),
        ));
        for j in 0..BLOCK_SIZE / 8 {
            // SAFETY: `to` has `BLOCK_SIZE + 1` writable bytes (above).
            unsafe {
                to.add(8 * j)
                    .cast::<u64>()
                    .write_unaligned(word(SHORT_MAX + 8 * j).to_le())
            };
        }
        // SAFETY: as above.
        unsafe {
            to.add(BLOCK_SIZE)
                .write(len.saturating_sub(SHORT_MAX) as u8 ^ invert)
        };
    }
    let markers = (MARKERS[len] ^ u32::from_ne_bytes([invert; 4])).to_le_bytes();
    // SAFETY: `total >= 10`, so byte 0 is the value's.
    unsafe { dst.write(NON_EMPTY_SENTINEL ^ invert) };
    for i in (0..MINI_BLOCK_COUNT).rev() {
        let slot = 1 + (MINI_BLOCK_SIZE + 1) * i;
        let at = std::hint::select_unpredictable(slot <= spare, slot, spare);
        // SAFETY: `at + 9 <= total`: `at <= spare = total - 9`.
        unsafe {
            dst.add(at)
                .cast::<u64>()
                .write_unaligned(word(MINI_BLOCK_SIZE * i).to_le());
            dst.add(at + MINI_BLOCK_SIZE).write(markers[i]);
        }
    }
    total
}

/// [`put_medium_raw`] with its bounds checked: `src` holds the value and at
/// least 64 bytes from its start (bytes past the value are read and
/// masked off); `out` holds `encoded_len(len)` bytes.
///
/// # Panics
///
/// When `len` is not 1 to 64 or a slice is too short.
#[cfg(test)]
pub(crate) fn put_medium(out: &mut [u8], src: &[u8], len: usize, invert: u8) -> usize {
    assert!((1..=MEDIUM_MAX).contains(&len));
    assert!(src.len() >= MEDIUM_MAX && out.len() >= encoded_len(len));
    // SAFETY: checked just above.
    unsafe { put_medium_raw::<true>(out.as_mut_ptr(), src.as_ptr(), len, invert) }
}

/// [`put_medium`] for values of at most 32 bytes (no 32-byte block).
///
/// # Panics
///
/// When `len` is not 1 to 32 or a slice is too short.
#[cfg(test)]
pub(crate) fn put_short(out: &mut [u8], src: &[u8], len: usize, invert: u8) -> usize {
    assert!((1..=SHORT_MAX).contains(&len));
    assert!(src.len() >= MEDIUM_MAX && out.len() >= encoded_len(len));
    // SAFETY: checked just above.
    unsafe { put_medium_raw::<false>(out.as_mut_ptr(), src.as_ptr(), len, invert) }
}

/// A non-empty value of at most 64 bytes read from the front of `win`
/// (the value and what follows it) without branches on its length: the
/// value's bytes lead the returned buffer (un-inverted; what follows them
/// is garbage), with the value's length and its encoded length. `None`
/// for anything else (a null, an empty value, a longer one, or bad
/// markers), which [`take_value`] reads or reports.
#[inline(always)]
pub(crate) fn take_medium(
    win: &[u8; LONG_TOTAL],
    invert: u8,
) -> Option<(usize, usize, [u8; MEDIUM_MAX])> {
    if win[0] ^ invert != NON_EMPTY_SENTINEL {
        return None;
    }
    let inv64 = u64::from_ne_bytes([invert; 8]);
    let word = |at: usize| -> u64 {
        u64::from_le_bytes(win[at..at + 8].try_into().expect("8 bytes")) ^ inv64
    };
    let mut buf = [0u8; MEDIUM_MAX];
    for (i, b) in buf.as_chunks_mut::<8>().0.iter_mut().enumerate() {
        // Mini-blocks at 1, 10, 19 and 28; the block's words at 37..69.
        let at = if i < MINI_BLOCK_COUNT {
            1 + (MINI_BLOCK_SIZE + 1) * i
        } else {
            1 + MINI_BLOCK_COUNT * (MINI_BLOCK_SIZE + 1) + 8 * (i - MINI_BLOCK_COUNT)
        };
        *b = word(at).to_le_bytes();
    }
    // The mini-blocks' markers: 0xFF (more follow) up to the last one,
    // which counts its bytes (1 to 8). Inverted, a continuation is 0 and a
    // count is not, so the first nonzero byte is the last mini-block's.
    let markers =
        u32::from_le_bytes([win[9], win[18], win[27], win[36]]) ^ u32::from_ne_bytes([invert; 4]);
    let ends = !markers;
    let long = ends == 0;
    let k = (ends.trailing_zeros() / 8).min(3) as usize;
    let count = ((markers >> (8 * k)) & 0xFF) as usize;
    let block = (win[LONG_TOTAL - 1] ^ invert) as usize;
    let len = std::hint::select_unpredictable(long, SHORT_MAX + block, MINI_BLOCK_SIZE * k + count);
    let used =
        std::hint::select_unpredictable(long, LONG_TOTAL, 1 + (MINI_BLOCK_SIZE + 1) * (k + 1));
    let ok = std::hint::select_unpredictable(
        long,
        (1..=BLOCK_SIZE).contains(&block),
        (1..=MINI_BLOCK_SIZE).contains(&count),
    );
    ok.then_some((len, used, buf))
}

/// Reads one encoded value from the front of `row`, appending its bytes
/// (un-inverted) to `dst`. Returns `None` for a null and the bytes consumed.
pub(crate) fn take_value(
    row: &[u8],
    invert: u8,
    null_sentinel: u8,
    dst: &mut Vec<u8>,
) -> Result<(bool, usize), Error> {
    let first = *row.first().ok_or_else(truncated)?;
    if first == null_sentinel {
        return Ok((false, 1));
    }
    match first ^ invert {
        EMPTY_SENTINEL => return Ok((true, 1)),
        NON_EMPTY_SENTINEL => {}
        b => {
            return Err(Error::InvalidRow(format!(
                "bad string header byte {b:#04x}"
            )));
        }
    }
    let start = dst.len();
    let mut pos = 1;
    let mut done = None;
    // Mini-blocks, then full blocks; each is copied whole (a fixed-size
    // copy) and the padding cut off afterwards.
    for _ in 0..MINI_BLOCK_COUNT {
        let (block, marker) = next_block::<MINI_BLOCK_SIZE>(row, &mut pos, invert)?;
        dst.extend_from_slice(block);
        if marker != BLOCK_CONTINUATION {
            done = Some(marker);
            break;
        }
    }
    let marker = match done {
        Some(m) => m,
        None => loop {
            let (block, marker) = next_block::<BLOCK_SIZE>(row, &mut pos, invert)?;
            dst.extend_from_slice(block);
            if marker != BLOCK_CONTINUATION {
                break marker;
            }
        },
    };
    let last = if done.is_some() {
        MINI_BLOCK_SIZE
    } else {
        BLOCK_SIZE
    };
    let used = marker as usize;
    if used == 0 || used > last {
        dst.truncate(start);
        return Err(Error::InvalidRow(format!("bad block length {used}")));
    }
    dst.truncate(dst.len() - (last - used));
    if invert != 0 {
        dst[start..].iter_mut().for_each(|b| *b = !*b);
    }
    Ok((true, pos))
}

/// The next block of `SIZE` bytes at `pos` and its marker (un-inverted).
#[inline(always)]
fn next_block<'a, const SIZE: usize>(
    row: &'a [u8],
    pos: &mut usize,
    invert: u8,
) -> Result<(&'a [u8; SIZE], u8), Error> {
    let chunk = row.get(*pos..*pos + SIZE + 1).ok_or_else(truncated)?;
    *pos += SIZE + 1;
    let (block, marker) = chunk.split_at(SIZE);
    Ok((block.try_into().expect("SIZE bytes"), marker[0] ^ invert))
}

pub(crate) fn truncated() -> Error {
    Error::InvalidRow("row ends inside a value".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_round_trip() {
        for len in [0usize, 1, 7, 8, 9, 31, 32, 33, 64, 65, 100] {
            let val: Vec<u8> = (0..len as u8).map(|b| b.wrapping_mul(37)).collect();
            for invert in [0, 0xFF] {
                let mut out = vec![0; 200];
                let n = put_value(&mut out, &val, invert);
                assert_eq!(n, if len == 0 { 1 } else { encoded_len(len) });
                let mut back = Vec::new();
                let (valid, used) = take_value(&out[..n], invert, 0, &mut back).unwrap();
                assert!(valid);
                assert_eq!(used, n);
                assert_eq!(back, val);
            }
        }
    }

    /// The branch-free encoders write exactly what `put_value` writes, for
    /// every length they take, both orders, with other bytes after the
    /// value in the source.
    #[test]
    fn branch_free_encoders_match_put_value() {
        let src: Vec<u8> = (0..200u32).map(|b| (b * 151 + 7) as u8).collect();
        for len in 1..=MEDIUM_MAX {
            for invert in [0, 0xFF] {
                let mut want = vec![0; 100];
                let n = put_value(&mut want, &src[..len], invert);
                let mut got = vec![0xAA; 100];
                assert_eq!(put_medium(&mut got, &src, len, invert), n, "len {len}");
                assert_eq!(got[..n], want[..n], "medium, len {len}, invert {invert}");
                assert!(got[n..].iter().all(|&b| b == 0xAA), "wrote past the value");
                if len <= SHORT_MAX {
                    let mut got = vec![0xAA; 100];
                    assert_eq!(put_short(&mut got, &src, len, invert), n, "len {len}");
                    assert_eq!(got[..n], want[..n], "short, len {len}, invert {invert}");
                }
            }
        }
    }

    /// The branch-free reader gives what `take_value` gives for every
    /// length it takes, both orders, with other bytes after the value; it
    /// declines nulls, empty and longer values, and bad markers.
    #[test]
    fn branch_free_reader_matches_take_value() {
        for len in 0..=MEDIUM_MAX + 1 {
            let val: Vec<u8> = (0..len as u32).map(|b| (b * 151 + 7) as u8).collect();
            for invert in [0, 0xFF] {
                let mut row = vec![0; 200];
                let n = put_value(&mut row, &val, invert);
                row[n..].fill(0x5A);
                let win: &[u8; LONG_TOTAL] = row[..LONG_TOTAL].try_into().unwrap();
                let got = take_medium(win, invert);
                if len == 0 || len > MEDIUM_MAX {
                    assert!(got.is_none(), "len {len}");
                    continue;
                }
                let (l, used, buf) = got.unwrap_or_else(|| panic!("len {len}"));
                assert_eq!((l, used), (len, n), "len {len}, invert {invert}");
                assert_eq!(&buf[..l], &val[..], "len {len}, invert {invert}");
                // A count of 0 or past the block's size is refused.
                let last = n - 1;
                for bad in [0u8, if len <= SHORT_MAX { 9 } else { 33 }] {
                    let mut broken = row.clone();
                    broken[last] = bad ^ invert;
                    let win: &[u8; LONG_TOTAL] = broken[..LONG_TOTAL].try_into().unwrap();
                    assert!(
                        take_medium(win, invert).is_none(),
                        "len {len}, marker {bad}"
                    );
                }
            }
        }
        let mut null = [0x5Au8; LONG_TOTAL];
        null[0] = 0;
        assert!(take_medium(&null, 0).is_none());
    }

    #[test]
    fn truncated_input_is_an_error() {
        let mut out = vec![0; 100];
        let n = put_value(&mut out, b"hello world, a long string!", 0);
        for cut in 0..n {
            let mut back = Vec::new();
            assert!(
                take_value(&out[..cut], 0, 0xFF, &mut back).is_err(),
                "cut {cut}"
            );
        }
    }
}
