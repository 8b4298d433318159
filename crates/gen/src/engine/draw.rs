//! Stream ids and the integer draws every sampler shares: a value below
//! a bound from random bits, a row's value of a cycle, null thresholds.

/// A multiplier coprime with `n` near `n` times the golden ratio's
/// fraction, so that consecutive ranks land far apart.
pub(super) fn coprime_step(n: u64) -> u64 {
    coprime_from(n, (n as f64 * 0.618_033_988_749_895) as u64)
}

/// The first multiplier coprime with `n` from `start` (taken modulo `n`)
/// up, wrapping: `k * m mod n` then visits every residue of `n` once as
/// `k` runs over `0..n`.
pub(super) fn coprime_from(n: u64, start: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    fn gcd(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let mut m = start % n;
    while gcd(m.max(1), n) != 1 {
        m = (m + 1) % n;
    }
    m.max(1)
}

/// The seed of table `name` of a multi-table dataset: tables draw from
/// streams of their own, so that fields of one name in two tables differ.
pub(super) fn table_seed(seed: u64, name: &str) -> u64 {
    crate::rng::mix64(seed ^ stream_id(name, "table"))
}

/// The index into a list of `len` values of row `id`.
#[inline(always)]
pub(super) fn by_row(id: u64, len: usize, cycle: bool) -> usize {
    if cycle {
        (id % len as u64) as usize
    } else {
        id.min(len as u64 - 1) as usize
    }
}

/// FNV-1a: the stream id of a field path, so that a field's data does not
/// change when other fields are added, removed or reordered.
pub(super) fn stream_id(path: &str, role: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.bytes().chain([0u8]).chain(role.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub(super) fn threshold(rate: f64) -> u128 {
    (rate.clamp(0.0, 1.0) * 18_446_744_073_709_551_616.0) as u128
}

/// Draws `0..span` (`span` up to 2^64) from 64 random bits.
#[inline(always)]
pub(super) fn below(bits: u64, span: u128) -> u64 {
    if span > u64::MAX as u128 {
        bits
    } else {
        ((bits as u128 * span) >> 64) as u64
    }
}

/// `0..n` from 32 random bits (multiply-shift).
#[inline(always)]
pub(super) fn below32(bits: u32, n: u32) -> u32 {
    ((u64::from(bits) * u64::from(n)) >> 32) as u32
}
