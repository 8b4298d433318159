//! Counter-based random streams.
//!
//! Every random value strata generates is a pure function of
//! `(seed, stream, row, draw)`:
//!
//! * a [`StreamKey`] mixes the user's seed with a stream id (one per field
//!   path), so fields never share or perturb each other's randomness;
//! * [`StreamKey::row`] mixes the key with the global row index and returns a
//!   [`RowRng`], a SplitMix64 generator private to that row;
//! * the row's generator yields its draws in order.
//!
//! No state crosses a row boundary, so a row's content does not depend on
//! which batch, thread, file or part produced it, and any row can be
//! generated without generating the rows before it.

/// The odd Weyl increment of SplitMix64 (2^64 divided by the golden ratio).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 output function: a bijective 64-bit mixer with full
/// avalanche (every input bit flips each output bit with probability ~1/2).
#[inline(always)]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of one random stream: a seed combined with a stream id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamKey(u64);

impl StreamKey {
    /// Derives the key of stream `stream` under `seed`.
    pub const fn new(seed: u64, stream: u64) -> Self {
        StreamKey(mix64(seed ^ mix64(stream.wrapping_add(GOLDEN))))
    }

    /// The generator of global row `row` in this stream.
    ///
    /// `mix64` is a bijection, so distinct rows of one stream start from
    /// distinct states.
    #[inline(always)]
    pub const fn row(self, row: u64) -> RowRng {
        RowRng {
            state: self.first(row),
        }
    }

    /// The first draw of row `row`: the row's SplitMix64 state itself,
    /// which is already a full-avalanche hash of the key and the row.
    /// [`RowRng::next_u64`] continues from it.
    #[inline(always)]
    pub const fn first(self, row: u64) -> u64 {
        mix64(self.0 ^ row)
    }
}

/// SplitMix64 seeded for one row of one stream.
#[derive(Debug, Clone)]
pub struct RowRng {
    state: u64,
}

impl RowRng {
    /// A generator for `seed` alone (stream 0, row 0), for fixed-seed data
    /// outside the generators, such as tests.
    pub const fn seeded(seed: u64) -> Self {
        StreamKey::new(seed, 0).row(0)
    }

    /// The current state: for a fresh generator, the row's first draw
    /// ([`StreamKey::first`]), which [`RowRng::next_u64`] does not repeat.
    #[inline(always)]
    pub const fn state(&self) -> u64 {
        self.state
    }

    /// The next 64 random bits.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }

    /// A draw from `0..n` (`n > 0`) by 64-bit remainder; its bias, below
    /// `n / 2^64`, is far under anything a test can see.
    #[inline(always)]
    pub fn next_below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Maps 32 random bits to `0..n` by multiply-shift (Lemire). The bias is
/// below `n / 2^32`, far under anything a test of shares can see.
#[inline(always)]
pub const fn below(bits: u32, n: u32) -> u32 {
    ((bits as u64 * n as u64) >> 32) as u32
}

/// The high 32 bits of a draw.
#[inline(always)]
pub const fn hi(x: u64) -> u32 {
    (x >> 32) as u32
}

/// Splits 32 uniform bits into an index in `0..n` and 32 further bits
/// that are (close to) uniform and independent of the index: the integer
/// and fractional parts of `bits * n / 2^32`. Chaining it draws several
/// small indices from one word, like reading off digits.
#[inline(always)]
pub const fn split(bits: u32, n: u32) -> (u32, u32) {
    let p = bits as u64 * n as u64;
    ((p >> 32) as u32, p as u32)
}

/// The low 32 bits of a draw.
#[inline(always)]
pub const fn lo(x: u64) -> u32 {
    x as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_streams_are_independent_of_order() {
        let k = StreamKey::new(42, 7);
        let mut a = k.row(1000);
        let first: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        // Generating other rows in between changes nothing.
        let _ = k.row(999).next_u64();
        let mut b = k.row(1000);
        let again: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_eq!(first, again);
        assert_ne!(k.row(1001).next_u64(), first[0]);
        assert_ne!(StreamKey::new(42, 8).row(1000).next_u64(), first[0]);
        assert_ne!(StreamKey::new(43, 7).row(1000).next_u64(), first[0]);
    }

    #[test]
    fn below_is_uniform_enough() {
        let k = StreamKey::new(1, 1);
        let mut counts = [0u32; 7];
        for r in 0..70_000 {
            counts[below(hi(k.row(r).next_u64()), 7) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn split_yields_independent_digits() {
        let k = StreamKey::new(9, 9);
        let mut counts = [[0u32; 5]; 4];
        for r in 0..200_000 {
            let (a, rest) = split(lo(k.first(r)), 4);
            let (b, _) = split(rest, 5);
            counts[a as usize][b as usize] += 1;
        }
        for row in counts {
            for c in row {
                assert!((9_300..10_700).contains(&c), "{counts:?}");
            }
        }
    }

    #[test]
    fn first_draw_is_the_row_state() {
        let k = StreamKey::new(5, 6);
        let mut r = k.row(77);
        let next = r.next_u64();
        assert_ne!(k.first(77), next);
        assert_eq!(k.row(77).next_u64(), next);
    }

    #[test]
    fn mix64_reference_values() {
        // SplitMix64 seeded with 0 yields these two words first.
        let mut r = RowRng { state: 0 };
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }
}
