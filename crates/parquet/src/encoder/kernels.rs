//! The byte-level encodings of page bodies, as plain functions over
//! buffers: the RLE/bit-packed hybrid (levels and dictionary keys, with
//! its bit packing), `BYTE_STREAM_SPLIT`, `DELTA_BINARY_PACKED` and
//! `DELTA_LENGTH_BYTE_ARRAY`, and the ULEB128 varints of run headers and
//! page headers.

/// Values per bit-packed run: 63 groups of 8, so the run header is one byte.
const RUN: usize = 504;

/// Appends a ULEB128 varint (Thrift compact protocol, RLE run headers).
pub(super) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `PLAIN` byte strings (a 4-byte length before each) rewritten as
/// `DELTA_LENGTH_BYTE_ARRAY`: the lengths `DELTA_BINARY_PACKED`, then the
/// bytes back to back.
pub(super) fn plain_to_split(out: &mut Vec<u8>, plain: &[u8]) {
    let mut lengths = Vec::new();
    let mut bytes = Vec::with_capacity(plain.len());
    for v in plain_values(plain) {
        lengths.extend_from_slice(&(v.len() as u32).to_le_bytes());
        bytes.extend_from_slice(v);
    }
    delta_binary_packed(out, &lengths, 4);
    out.extend_from_slice(&bytes);
}

/// `PLAIN` byte strings rewritten as `DELTA_BYTE_ARRAY`: each value's
/// prefix shared with the value before it (its length), and the rest (its
/// suffix): the prefix lengths `DELTA_BINARY_PACKED`, then the suffixes as
/// `DELTA_LENGTH_BYTE_ARRAY` writes them.
pub(super) fn plain_to_prefixed(out: &mut Vec<u8>, plain: &[u8]) {
    let mut prefixes = Vec::new();
    let mut lengths = Vec::new();
    let mut bytes = Vec::with_capacity(plain.len());
    let mut last: &[u8] = &[];
    for v in plain_values(plain) {
        let shared = last.iter().zip(v).take_while(|(a, b)| a == b).count();
        prefixes.extend_from_slice(&(shared as u32).to_le_bytes());
        lengths.extend_from_slice(&((v.len() - shared) as u32).to_le_bytes());
        bytes.extend_from_slice(&v[shared..]);
        last = v;
    }
    delta_binary_packed(out, &prefixes, 4);
    delta_binary_packed(out, &lengths, 4);
    out.extend_from_slice(&bytes);
}

/// The byte strings of a `PLAIN` buffer (a 4-byte length before each).
pub(super) fn plain_values(plain: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut o = 0;
    std::iter::from_fn(move || {
        let len = plain.get(o..o + 4)?;
        let l = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let v = plain.get(o + 4..o + 4 + l)?;
        o += 4 + l;
        Some(v)
    })
}

/// The RLE/bit-packed hybrid for keys of up to 32 bits: keys of 8 bits or
/// fewer as [`encode_hybrid`] writes them; wider ones as one RLE run when
/// every key is equal, otherwise bit-packed runs of up to [`RUN`] keys.
pub(super) fn encode_hybrid_wide(out: &mut Vec<u8>, keys: &[u32], width: u8) {
    if keys.is_empty() || width == 0 {
        return;
    }
    if width <= 8 {
        // Keys of a dictionary up to 256 entries: the byte-wide encoder,
        // with its RLE runs and word-wise packing.
        let narrow: Vec<u8> = keys.iter().map(|&k| k as u8).collect();
        encode_hybrid(out, &narrow, width);
        return;
    }
    if keys.iter().all(|&k| k == keys[0]) {
        varint(out, (keys.len() as u64) << 1);
        out.extend_from_slice(&keys[0].to_le_bytes()[..usize::from(width).div_ceil(8)]);
        return;
    }
    let mut wide = Vec::with_capacity(RUN);
    for run in keys.chunks(RUN) {
        let groups = run.len().div_ceil(8);
        out.push(((groups as u8) << 1) | 1);
        wide.clear();
        wide.extend(run.iter().map(|&k| u64::from(k)));
        pack_bits(out, &wide, groups * 8, usize::from(width));
    }
}

/// `BYTE_STREAM_SPLIT`: byte `j` of every value, for `j` from 0 to
/// `width - 1`, one stream after the other. Values of 4 and 8 bytes go
/// eight at a time through a transpose of an 8x8 byte matrix in eight
/// words: 8.6 GB/s against 1.6 GB/s for a store per byte (1 MiB pages of
/// `f64`), which had cost 9% of a run of twelve float columns with zstd.
pub(super) fn byte_stream_split(out: &mut Vec<u8>, values: &[u8], width: usize) {
    fn bytes(to: &mut [u8], values: &[u8], width: usize, from: usize) {
        let n = values.len() / width;
        for i in from..n {
            for j in 0..width {
                to[j * n + i] = values[i * width + j];
            }
        }
    }
    fn words<const W: usize>(to: &mut [u8], values: &[u8]) {
        let n = values.len() / W;
        let full = n / 8 * 8;
        for (b, group) in values[..full * W].chunks_exact(8 * W).enumerate() {
            let mut x = [0u64; 8];
            for (w, v) in x.iter_mut().zip(group.chunks_exact(W)) {
                let mut le = [0u8; 8];
                le[..W].copy_from_slice(v);
                *w = u64::from_le_bytes(le);
            }
            transpose8(&mut x);
            for (j, w) in x[..W].iter().enumerate() {
                to[j * n + b * 8..j * n + b * 8 + 8].copy_from_slice(&w.to_le_bytes());
            }
        }
        bytes(to, values, W, full);
    }
    let at = out.len();
    out.resize(at + values.len(), 0);
    let to = &mut out[at..];
    match width {
        4 => words::<4>(to, values),
        8 => words::<8>(to, values),
        w => bytes(to, values, w.max(1), 0),
    }
}

/// Transposes the 8x8 byte matrix whose row `k` is word `k` (byte `j` the
/// `j`-th least significant): word `j` then holds byte `j` of every row.
/// Three rounds swap 4-, 2- and 1-byte blocks across the diagonal.
#[inline(always)]
fn transpose8(x: &mut [u64; 8]) {
    for i in 0..4 {
        let t = ((x[i] >> 32) ^ x[i + 4]) & 0x0000_0000_ffff_ffff;
        x[i] ^= t << 32;
        x[i + 4] ^= t;
    }
    for i in [0, 1, 4, 5] {
        let t = ((x[i] >> 16) ^ x[i + 2]) & 0x0000_ffff_0000_ffff;
        x[i] ^= t << 16;
        x[i + 2] ^= t;
    }
    for i in [0, 2, 4, 6] {
        let t = ((x[i] >> 8) ^ x[i + 1]) & 0x00ff_00ff_00ff_00ff;
        x[i] ^= t << 8;
        x[i + 1] ^= t;
    }
}

/// Values per `DELTA_BINARY_PACKED` block, and miniblocks per block.
const DELTA_BLOCK: usize = 128;
const DELTA_MINIBLOCKS: usize = 4;

/// Encodes `values` (little-endian integers of `width` bytes, 4 or 8) as
/// `DELTA_BINARY_PACKED`: a header (block size, miniblocks per block,
/// value count, first value), then per block of 128 deltas the smallest
/// delta and four miniblocks of 32 bit-packed `delta - smallest`, each
/// with its own bit width. Deltas wrap at the value's width (32 or 64
/// bits), as the format specifies, so any values round-trip.
pub(super) fn delta_binary_packed(out: &mut Vec<u8>, values: &[u8], width: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { delta_packed_avx2(out, values, width) };
        return;
    }
    delta_packed(out, values, width);
}

#[inline(always)]
fn delta_packed(out: &mut Vec<u8>, values: &[u8], width: usize) {
    if width == 4 {
        delta_packed_of::<i32>(out, values);
    } else {
        delta_packed_of::<i64>(out, values);
    }
}

/// [`delta_packed`] compiled for AVX2: a block's smallest delta is a
/// signed minimum of 32- or 64-bit lanes, which the baseline (SSE2) has
/// no instruction for. On `events` (300k rows, cachegrind)
/// `DELTA_BINARY_PACKED` went from 12.4M to 7.3M instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn delta_packed_avx2(out: &mut Vec<u8>, values: &[u8], width: usize) {
    delta_packed(out, values, width);
}

/// A signed integer of the width `DELTA_BINARY_PACKED` works in: its
/// deltas wrap around at that width.
trait DeltaInt: Copy + Ord {
    const BYTES: usize;
    const MAX: Self;
    fn load(b: &[u8]) -> Self;
    fn wrapping_sub(self, o: Self) -> Self;
    /// Its bits, unsigned (zero-extended to 64).
    fn bits(self) -> u64;
    fn zigzag(self) -> u64;
}

impl DeltaInt for i32 {
    const BYTES: usize = 4;
    const MAX: Self = i32::MAX;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    #[inline(always)]
    fn wrapping_sub(self, o: Self) -> Self {
        i32::wrapping_sub(self, o)
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
    #[inline(always)]
    fn zigzag(self) -> u64 {
        u64::from(((self << 1) ^ (self >> 31)) as u32)
    }
}

impl DeltaInt for i64 {
    const BYTES: usize = 8;
    const MAX: Self = i64::MAX;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
    #[inline(always)]
    fn wrapping_sub(self, o: Self) -> Self {
        i64::wrapping_sub(self, o)
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn zigzag(self) -> u64 {
        ((self << 1) ^ (self >> 63)) as u64
    }
}

/// [`delta_binary_packed`] for values of type `T`: a block's deltas and
/// their smallest in `T` itself (at 32 bits, four to a vector register,
/// where a 64-bit signed minimum takes a dozen instructions per pair
/// without SSE4.2), each in its own plain loop.
#[inline(always)]
fn delta_packed_of<T: DeltaInt>(out: &mut Vec<u8>, values: &[u8]) {
    let w = T::BYTES;
    let n = values.len() / w;
    let first = if n > 0 { T::load(values) } else { T::MAX };
    varint(out, DELTA_BLOCK as u64);
    varint(out, DELTA_MINIBLOCKS as u64);
    varint(out, n as u64);
    varint(out, if n > 0 { first.zigzag() } else { 0 });
    let per_mini = DELTA_BLOCK / DELTA_MINIBLOCKS;
    let mut deltas = [T::MAX; DELTA_BLOCK];
    let mut packed = [0u64; DELTA_BLOCK];
    // Value `at` is the first of the next block's deltas' minuends.
    let mut at = 1;
    while at < n {
        let len = DELTA_BLOCK.min(n - at);
        // Each value less the one before, from two views of the block
        // (no value carried from one step to the next).
        let block = &values[(at - 1) * w..(at + len) * w];
        let pairs = block.chunks_exact(w).zip(block[w..].chunks_exact(w));
        for (d, (p, v)) in deltas[..len].iter_mut().zip(pairs) {
            *d = T::load(v).wrapping_sub(T::load(p));
        }
        at += len;
        let min = deltas[..len].iter().fold(T::MAX, |m, &d| m.min(d));
        varint(out, min.zigzag());
        let minis = len.div_ceil(per_mini);
        let widths_at = out.len();
        out.extend_from_slice(&[0u8; DELTA_MINIBLOCKS]);
        for m in 0..minis {
            let range = m * per_mini..((m + 1) * per_mini).min(len);
            let mut max = 0u64;
            for (x, &d) in packed[range.clone()].iter_mut().zip(&deltas[range.clone()]) {
                *x = d.wrapping_sub(min).bits();
                max |= *x;
            }
            let bits = (64 - max.leading_zeros()) as usize;
            out[widths_at + m] = bits as u8;
            pack_bits(out, &packed[range], per_mini, bits);
        }
    }
}

/// Appends `values` bit-packed, `w` bits each, least significant bit
/// first, padded with zero values to `count` values: eight bytes are
/// stored at a time, into room made once.
fn pack_bits(out: &mut Vec<u8>, values: &[u64], count: usize, w: usize) {
    if w == 0 {
        return;
    }
    let at = out.len();
    let bytes = (count * w).div_ceil(8);
    out.resize(at + bytes, 0);
    let dst = &mut out[at..];
    let mut acc: u128 = 0;
    let mut bits = 0usize;
    let mut p = 0;
    for k in 0..count {
        let v = values.get(k).copied().unwrap_or(0);
        acc |= u128::from(v) << bits;
        bits += w;
        if bits >= 64 {
            dst[p..p + 8].copy_from_slice(&(acc as u64).to_le_bytes());
            p += 8;
            acc >>= 64;
            bits -= 64;
        }
    }
    let rest = bytes - p;
    dst[p..].copy_from_slice(&(acc as u64).to_le_bytes()[..rest]);
}

/// Bits needed for values up to `max`.
pub(super) fn bit_width(max: u8) -> u8 {
    (8 - max.leading_zeros()) as u8
}

/// Levels as a 4-byte length followed by the RLE/bit-packed hybrid.
pub(super) fn encode_levels(out: &mut Vec<u8>, levels: &[u8], width: u8) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    encode_hybrid(out, levels, width);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// The RLE/bit-packed hybrid: runs of at least [`MIN_RLE`] equal values
/// (found eight at a time, by comparing words) as RLE runs, the values
/// between them bit-packed in runs of up to [`RUN`] values (the last group
/// of the page padded with zeros, which its value count makes unread).
/// Levels are mostly long runs (a column without nulls is one run).
pub(super) fn encode_hybrid(out: &mut Vec<u8>, values: &[u8], width: u8) {
    if values.is_empty() || width == 0 {
        return;
    }
    let n = values.len();
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&values[i..i + 8]);
        u64::from_le_bytes(w)
    };
    // `packed..i` waits to be bit-packed, a whole number of groups.
    let mut packed = 0;
    let mut i = 0;
    while i + 8 <= n {
        let v = values[i];
        if word(i) != u64::from(v) * 0x0101_0101_0101_0101 {
            i += 8;
            continue;
        }
        let mut end = i + 8;
        while end + 8 <= n && word(end) == word(i) {
            end += 8;
        }
        while end < n && values[end] == v {
            end += 1;
        }
        if end - i < MIN_RLE {
            i += 8;
            continue;
        }
        bit_pack(out, &values[packed..i], width);
        varint(out, ((end - i) as u64) << 1);
        out.push(v);
        i = end;
        packed = end;
    }
    bit_pack(out, &values[packed..], width);
}

/// Shortest run written as an RLE run: two groups of eight (a header byte
/// and the value, instead of two to sixteen bytes of bit-packed values).
const MIN_RLE: usize = 16;

/// Bit-packed runs of `values` (any length; a last partial group is
/// padded with zeros).
fn bit_pack(out: &mut Vec<u8>, values: &[u8], width: u8) {
    // The widths of levels and of one-byte dictionary keys as constants:
    // the shifts of `pack8` fold.
    match width {
        1 => bit_pack_of::<1>(out, values),
        2 => bit_pack_of::<2>(out, values),
        3 => bit_pack_of::<3>(out, values),
        4 => bit_pack_of::<4>(out, values),
        5 => bit_pack_of::<5>(out, values),
        6 => bit_pack_of::<6>(out, values),
        7 => bit_pack_of::<7>(out, values),
        // One-byte values take at most 8 bits; the caller writes no
        // bit-packed run at width 0.
        _ => {
            debug_assert!(width == 8, "bit width {width}");
            bit_pack_of::<8>(out, values)
        }
    }
}

/// [`bit_pack`] at width `W`: each group's `W` bytes are stored as a
/// whole word by index into room made for the run, then cut back.
#[inline(always)]
fn bit_pack_of<const W: usize>(out: &mut Vec<u8>, values: &[u8]) {
    for run in values.chunks(RUN) {
        let groups = run.len().div_ceil(8);
        let at = out.len();
        out.resize(at + 1 + groups * W + 8, 0);
        let buf = &mut out[at..];
        buf[0] = ((groups as u8) << 1) | 1;
        let mut p = 1;
        let mut full = run.chunks_exact(8);
        for group in &mut full {
            let x = u64::from_le_bytes(group.try_into().unwrap_or([0; 8]));
            buf[p..p + 8].copy_from_slice(&pack8(x, W).to_le_bytes());
            p += W;
        }
        let rest = full.remainder();
        if !rest.is_empty() {
            let mut x = [0u8; 8];
            x[..rest.len()].copy_from_slice(rest);
            buf[p..p + 8].copy_from_slice(&pack8(u64::from_le_bytes(x), W).to_le_bytes());
            p += W;
        }
        out.truncate(at + p);
    }
}

/// Calls `f` with each `k` whose `seen[k]` is 1 (the others are 0), in
/// increasing order, and clears them: eight marks at a time.
pub(super) fn take_seen(seen: &mut [u8], mut f: impl FnMut(usize)) {
    for (w, chunk) in seen.chunks_mut(8).enumerate() {
        let mut x = [0u8; 8];
        x[..chunk.len()].copy_from_slice(chunk);
        let word = u64::from_le_bytes(x);
        if word == 0 {
            continue;
        }
        chunk.fill(0);
        let mut b = pack8(word, 1);
        while b != 0 {
            f(w * 8 + b.trailing_zeros() as usize);
            b &= b - 1;
        }
    }
}

/// Eight values below `2^w` (`w <= 8`), one per byte of `x`, packed into
/// the low `8w` bits, the first value lowest: neighbouring lanes are
/// merged in three steps (bytes into 16-bit lanes, those into 32-bit
/// lanes, those into one), instead of a shift and an or per value.
#[inline(always)]
pub(super) fn pack8(x: u64, w: usize) -> u64 {
    if w == 1 {
        // Bytes of 0 or 1: the multiply moves byte i's bit to bit 56 + i
        // (every partial product lands on its own bit, so nothing carries).
        return x.wrapping_mul(0x0102_0408_1020_4080) >> 56;
    }
    const B: u64 = 0x00ff_00ff_00ff_00ff;
    const H: u64 = 0x0000_ffff_0000_ffff;
    let x = (x & B) | ((x >> 8) & B) << w;
    let x = (x & H) | ((x >> 16) & H) << (2 * w);
    (x & 0xffff_ffff) | (x >> 32) << (4 * w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_stream_split_puts_each_byte_significance_together() {
        for width in [1usize, 2, 4, 8, 16] {
            for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000] {
                let values: Vec<u8> = (0..n * width).map(|i| (i * 31 + i / 7) as u8).collect();
                let mut out = vec![0xAB];
                byte_stream_split(&mut out, &values, width);
                assert_eq!(out.len(), 1 + values.len());
                for i in 0..n {
                    for j in 0..width {
                        assert_eq!(
                            out[1 + j * n + i],
                            values[i * width + j],
                            "w{width} n{n} {i} {j}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn hybrid_bit_packing_is_lsb_first() {
        let mut out = Vec::new();
        encode_hybrid(&mut out, &[1, 0, 1, 1, 0, 0, 0, 1, 1], 1);
        // Two groups: header (2 << 1) | 1, then 0b1000_1101, 0b0000_0001.
        assert_eq!(out, vec![5, 0b1000_1101, 1]);
        let mut out = Vec::new();
        encode_hybrid(&mut out, &[4, 3, 2, 1, 0, 1, 2, 3], 3);
        let bits: u32 = [4u32, 3, 2, 1, 0, 1, 2, 3]
            .iter()
            .enumerate()
            .map(|(i, v)| v << (3 * i))
            .sum();
        assert_eq!(out, [&[3u8][..], &bits.to_le_bytes()[..3]].concat());
    }

    /// Decodes the hybrid encoding (the reading side of the format).
    fn decode_hybrid(mut b: &[u8], width: usize, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        while out.len() < n {
            let (mut header, mut shift) = (0usize, 0);
            loop {
                let byte = b[0];
                b = &b[1..];
                header |= usize::from(byte & 0x7f) << shift;
                shift += 7;
                if byte < 0x80 {
                    break;
                }
            }
            if header & 1 == 0 {
                out.extend(std::iter::repeat_n(b[0], header >> 1));
                b = &b[1..];
            } else {
                for _ in 0..header >> 1 {
                    let mut bits = 0u64;
                    for (i, &x) in b[..width].iter().enumerate() {
                        bits |= u64::from(x) << (8 * i);
                    }
                    b = &b[width..];
                    out.extend((0..8).map(|i| ((bits >> (i * width)) & ((1 << width) - 1)) as u8));
                }
            }
        }
        assert!(b.is_empty(), "{} bytes left", b.len());
        out.truncate(n);
        out
    }

    #[test]
    fn pack8_matches_a_shift_per_value() {
        let mut state = 3u64;
        for w in 1..=8usize {
            for _ in 0..500 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let x = state & (0x0101_0101_0101_0101 * ((1u64 << w) - 1));
                let want = (0..8).fold(0u64, |acc, i| acc | ((x >> (8 * i)) & 0xff) << (i * w));
                assert_eq!(pack8(x, w), want, "w {w} x {x:#x}");
            }
        }
    }

    #[test]
    fn hybrid_runs_round_trip() {
        // Runs of every length around the group size and the RLE
        // threshold, at odd offsets, between random values.
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize
        };
        for width in [1u8, 2, 3, 5, 8] {
            let top = (1usize << width) - 1;
            for _ in 0..200 {
                let mut values = Vec::new();
                while values.len() < 700 {
                    let v = (next() % (top + 1)) as u8;
                    let len = [1, 7, 8, 9, 15, 16, 17, 40, 600][next() % 9];
                    values.extend(std::iter::repeat_n(v, len));
                }
                values.truncate(next() % 700 + 1);
                let mut out = Vec::new();
                encode_hybrid(&mut out, &values, width);
                assert_eq!(
                    decode_hybrid(&out, usize::from(width), values.len()),
                    values
                );
            }
        }
        // Long runs cost a few bytes, whatever surrounds them.
        let mut levels = vec![0u8; 3];
        levels.extend([1u8; 10_000]);
        levels.push(0);
        let mut out = Vec::new();
        encode_hybrid(&mut out, &levels, 1);
        assert!(out.len() < 10, "{out:?}");
    }

    #[test]
    fn constant_runs_use_one_rle_run() {
        let mut out = Vec::new();
        encode_hybrid(&mut out, &[1; 300], 1);
        // 300 << 1 = 600 as a varint, then the value.
        assert_eq!(out, vec![0xd8, 0x04, 1]);
    }

    /// The baseline build of `DELTA_BINARY_PACKED` and the one the CPU
    /// picks (AVX2 where it has it) write the same bytes, for both widths
    /// and lengths around the block and miniblock sizes: fixed seed.
    #[test]
    fn delta_packed_builds_agree() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for width in [4, 8] {
            for len in [0usize, 1, 2, 31, 32, 33, 128, 129, 130, 1000] {
                for spread in [3u64, 1 << 20, u64::MAX] {
                    let values: Vec<u8> = (0..len * width)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            (x % spread.clamp(1, 256)) as u8
                        })
                        .collect();
                    let (mut base, mut picked) = (Vec::new(), Vec::new());
                    delta_packed(&mut base, &values, width);
                    delta_binary_packed(&mut picked, &values, width);
                    assert_eq!(base, picked, "width {width}, {len} values, spread {spread}");
                }
            }
        }
    }

    #[test]
    fn bit_widths() {
        assert_eq!(bit_width(0), 0);
        assert_eq!(bit_width(1), 1);
        assert_eq!(bit_width(2), 2);
        assert_eq!(bit_width(4), 3);
        assert_eq!(bit_width(255), 8);
    }
}
