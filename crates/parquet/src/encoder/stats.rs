//! Page and chunk statistics: min, max, null and NaN counts ([`Stats`]),
//! the scans that find a page's min and max (byte strings by 16-byte
//! prefixes, integers and floats in loops the compiler vectorises), and
//! the raise of a cut byte-string max that keeps it an upper bound.

use super::shape::Values;

/// Min, max, null and NaN count of one page or chunk.
#[derive(Debug, Default, Clone)]
pub(super) struct Stats {
    pub(super) min: Option<Vec<u8>>,
    pub(super) max: Option<Vec<u8>>,
    pub(super) nulls: u64,
    pub(super) nans: u64,
}

impl Stats {
    pub(super) fn update(&mut self, v: &[u8], kind: Values) {
        // As parquet's writer: a NaN never replaces a number, a number
        // always replaces a NaN.
        let nan = kind.is_nan(v);
        match &mut self.min {
            Some(m) if (kind.is_nan(m) && !nan) || (nan == kind.is_nan(m) && kind.less(v, m)) => {
                m.clear();
                m.extend_from_slice(v);
            }
            None => self.min = Some(v.to_vec()),
            _ => {}
        }
        match &mut self.max {
            Some(m) if (kind.is_nan(m) && !nan) || (nan == kind.is_nan(m) && kind.less(m, v)) => {
                m.clear();
                m.extend_from_slice(v);
            }
            None => self.max = Some(v.to_vec()),
            _ => {}
        }
    }

    pub(super) fn merge(&mut self, other: &Stats, kind: Values) {
        if let Some(v) = &other.min {
            self.update(v, kind);
        }
        if let Some(v) = &other.max {
            self.update(v, kind);
        }
        self.nulls += other.nulls;
        self.nans += other.nans;
    }
}

/// The shortest raise of a UTF-8 string's last character that keeps it
/// valid and the same byte length (dropping characters that cannot be
/// raised); `None` when none can.
pub(super) fn raise_utf8(s: &str) -> Option<Vec<u8>> {
    for (at, c) in s.char_indices().rev() {
        if let Some(next) = char::from_u32(c as u32 + 1)
            && next.len_utf8() == c.len_utf8()
        {
            let mut out = s.as_bytes()[..at + c.len_utf8()].to_vec();
            next.encode_utf8(&mut out[at..]);
            return Some(out);
        }
    }
    None
}

/// Bytes raised by one as a big-endian number; `None` when all are 0xFF.
pub(super) fn raise_bytes(mut v: Vec<u8>) -> Option<Vec<u8>> {
    for b in v.iter_mut().rev() {
        let (raised, overflow) = b.overflowing_add(1);
        *b = raised;
        if !overflow {
            return Some(v);
        }
    }
    None
}

/// `PREFIX_MASKS[l]` keeps the first `l` bytes of a big-endian 16-byte
/// word (a table lookup instead of a variable 128-bit shift per value).
const PREFIX_MASKS: [u128; 17] = {
    let mut m = [u128::MAX; 17];
    let mut l = 0;
    while l < 16 {
        m[l] = !(u128::MAX >> (l * 8));
        l += 1;
    }
    m
};

/// The smallest and largest value of a page of `PLAIN` strings (each a
/// 4-byte length and the bytes). `values` is padded by 16 bytes for the
/// scan (see [`MinMax16`]) and restored.
pub(super) fn plain_min_max(values: &mut Vec<u8>) -> Option<(&[u8], &[u8])> {
    let end = values.len();
    if end == 0 {
        return None;
    }
    values.extend_from_slice(&[0u8; 16]);
    let buf = values.as_slice();
    let len = |o: usize| u32::from_le_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]) as usize;
    let mut m = MinMax16::new(buf, 4, len(0));
    let mut o = 4 + len(0);
    while o < end {
        let l = len(o);
        m.add(buf, o + 4, l);
        o += 4 + l;
    }
    values.truncate(end);
    Some(m.get(values))
}

/// The smallest and largest of a page's byte strings kept apart from
/// their `lengths` (4 bytes each, little-endian) in `values`, padded and
/// restored as by [`plain_min_max`].
pub(super) fn split_min_max<'a>(
    lengths: &[u8],
    values: &'a mut Vec<u8>,
) -> Option<(&'a [u8], &'a [u8])> {
    let len = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize;
    let mut lens = lengths.chunks_exact(4);
    let first = len(lens.next()?);
    let end = values.len();
    values.extend_from_slice(&[0u8; 16]);
    let buf = values.as_slice();
    let mut m = MinMax16::new(buf, 0, first);
    let mut o = first;
    for c in lens {
        let l = len(c);
        m.add(buf, o, l);
        o += l;
    }
    values.truncate(end);
    Some(m.get(values))
}

/// The smallest and largest byte strings of a buffer seen so far: each
/// its start, length and 16-byte big-endian prefix key, zero-padded and
/// masked to its length. A smaller key means a smaller string, and only
/// equal keys (rare) need a full comparison, so most values cost one
/// prefix comparison per side. The buffer holds 16 bytes past the last
/// value.
struct MinMax16 {
    lo: (usize, usize, u128),
    hi: (usize, usize, u128),
}

impl MinMax16 {
    #[inline(always)]
    fn key(buf: &[u8], v: usize, l: usize) -> u128 {
        let mut raw = [0u8; 16];
        raw.copy_from_slice(&buf[v..v + 16]);
        u128::from_be_bytes(raw) & PREFIX_MASKS[l.min(16)]
    }

    #[inline(always)]
    fn new(buf: &[u8], v: usize, l: usize) -> Self {
        let first = (v, l, Self::key(buf, v, l));
        MinMax16 {
            lo: first,
            hi: first,
        }
    }

    /// Counts the `l` bytes at `v`.
    #[inline(always)]
    fn add(&mut self, buf: &[u8], v: usize, l: usize) {
        let k = Self::key(buf, v, l);
        let (lo, hi) = (&mut self.lo, &mut self.hi);
        if k >= hi.2 && (k > hi.2 || buf[v..v + l] > buf[hi.0..hi.0 + hi.1]) {
            *hi = (v, l, k);
        }
        if k <= lo.2 && (k < lo.2 || buf[v..v + l] < buf[lo.0..lo.0 + lo.1]) {
            *lo = (v, l, k);
        }
    }

    /// The smallest and the largest, in `buf`.
    fn get<'a>(&self, buf: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        let (lo, hi) = (self.lo, self.hi);
        (&buf[lo.0..lo.0 + lo.1], &buf[hi.0..hi.0 + hi.1])
    }
}

/// A page's smallest and largest value, as their `PLAIN` bytes.
type MinMax = (Vec<u8>, Vec<u8>);

/// The smallest and largest of a page of `PLAIN` integers of `width`
/// bytes, as their little-endian bytes.
pub(super) fn int_min_max(values: &[u8], width: usize) -> Option<MinMax> {
    match width {
        4 => fixed_min_max(values, i32::from_le_bytes),
        _ => fixed_min_max(values, i64::from_le_bytes),
    }
}

/// As [`int_min_max`], ordering the values as unsigned numbers.
pub(super) fn uint_min_max(values: &[u8], width: usize) -> Option<MinMax> {
    match width {
        4 => fixed_min_max(values, u32::from_le_bytes),
        _ => fixed_min_max(values, u64::from_le_bytes),
    }
}

/// Little-endian numbers that give back their bytes.
trait LeBytes: Ord + Copy {
    fn bytes(self) -> Vec<u8>;
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            fn bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
        }
    )*};
}
le_bytes!(i32, i64, u32, u64);

/// Min and max of `values` read `W` bytes at a time with `read` (a loop
/// the compiler vectorises). The build's baseline (x86-64, SSE2) has no
/// 64-bit vector comparison, so on CPUs with AVX2 the same loop runs
/// compiled for it: on `wide-u64` (50 `UInt64` columns) the baseline loop
/// was 12.7% of a run's samples (`perf record`, 2M rows).
fn fixed_min_max<const W: usize, T: LeBytes>(
    values: &[u8],
    read: impl Fn([u8; W]) -> T,
) -> Option<MinMax> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F, checked just above.
        return unsafe { fixed_min_max_avx512(values, read) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { fixed_min_max_avx2(values, read) };
    }
    fixed_min_max_loop(values, read)
}

/// [`fixed_min_max_loop`] compiled for AVX-512, which compares unsigned
/// 64-bit lanes in one instruction (AVX2 compares signed ones only, so an
/// unsigned min takes a flip of the sign bits, a compare and a blend).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fixed_min_max_avx512<const W: usize, T: LeBytes>(
    values: &[u8],
    read: impl Fn([u8; W]) -> T,
) -> Option<MinMax> {
    fixed_min_max_loop(values, read)
}

/// [`fixed_min_max_loop`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fixed_min_max_avx2<const W: usize, T: LeBytes>(
    values: &[u8],
    read: impl Fn([u8; W]) -> T,
) -> Option<MinMax> {
    fixed_min_max_loop(values, read)
}

#[inline(always)]
fn fixed_min_max_loop<const W: usize, T: LeBytes>(
    values: &[u8],
    read: impl Fn([u8; W]) -> T,
) -> Option<MinMax> {
    let mut it = values
        .chunks_exact(W)
        .map(|c| read(c.try_into().unwrap_or([0; W])));
    let first = it.next()?;
    let (lo, hi) = it.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v)));
    Some((lo.bytes(), hi.bytes()))
}

/// Min and max of a page of `PLAIN` floats of `width` bytes by IEEE 754
/// total order, NaN left out unless every value is NaN (as parquet's
/// writer orders them), and the number of NaNs.
pub(super) fn float_min_max(values: &[u8], width: usize) -> (Option<MinMax>, u64) {
    // Total order as a signed integer: flip the magnitude bits of
    // negative numbers.
    fn key(bits: u64) -> i64 {
        (bits ^ ((((bits as i64) >> 63) as u64) >> 1)) as i64
    }
    let wide = |c: &[u8]| -> (u64, bool) {
        if width == 4 {
            let f = f32::from_le_bytes(c.try_into().unwrap_or([0; 4]));
            (f64::from(f).to_bits(), f.is_nan())
        } else {
            let f = f64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
            (f.to_bits(), f.is_nan())
        }
    };
    let mut nans = 0u64;
    let mut lo: Option<(i64, usize)> = None;
    let mut hi: Option<(i64, usize)> = None;
    let mut nan_lo: Option<(i64, usize)> = None;
    let mut nan_hi: Option<(i64, usize)> = None;
    for (i, c) in values.chunks_exact(width).enumerate() {
        let (bits, nan) = wide(c);
        let k = key(bits);
        let (l, h) = if nan {
            nans += 1;
            (&mut nan_lo, &mut nan_hi)
        } else {
            (&mut lo, &mut hi)
        };
        if l.is_none_or(|(m, _)| k < m) {
            *l = Some((k, i));
        }
        if h.is_none_or(|(m, _)| k > m) {
            *h = Some((k, i));
        }
    }
    let at = |i: usize| values[i * width..(i + 1) * width].to_vec();
    let pair = match (lo.or(nan_lo), hi.or(nan_hi)) {
        (Some((_, l)), Some((_, h))) => Some((at(l), at(h))),
        _ => None,
    };
    (pair, nans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_by_prefix_matches_a_plain_comparison() {
        let words: Vec<&[u8]> = vec![
            b"ab",
            b"ab\0",
            b"a",
            b"",
            b"abcdefghijklmnopq",
            b"abcdefghijklmnopr",
            b"abcdefghijklmnop",
            b"zz",
            b"z",
            b"\xff",
            b"\xff\x00",
        ];
        for start in 0..words.len() {
            let mut page = Vec::new();
            for w in words.iter().cycle().skip(start).take(words.len()) {
                page.extend_from_slice(&(w.len() as u32).to_le_bytes());
                page.extend_from_slice(w);
            }
            let before = page.clone();
            let (lo, hi) = plain_min_max(&mut page).unwrap();
            assert_eq!(lo, *words.iter().min().unwrap());
            assert_eq!(hi, *words.iter().max().unwrap());
            assert_eq!(page, before);
        }
    }
}
