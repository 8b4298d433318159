//! Strata of a stratified table (`stratified = true`): the uniform number
//! of row `i` of `N` taken from stratum `s(i) = (i * m + o) mod N` of `N`
//! equal ones, `m` coprime with `N` and `o` drawn per field and seed, so
//! that any `N` consecutive rows take every stratum once.
//!
//! A uniform number is a 64-bit word here, as the samplers read it:
//! stratum `s` is the words from `ceil(s * 2^64 / N)` up to `ceil((s + 1)
//! * 2^64 / N)`, exactly the words `w` with `floor(w * N / 2^64) = s`, and
//! the row's own word picks one of them in proportion. So `(s + v) / N`,
//! `v` the row's uniform number, is computed without rounding: `uniform`
//! over `N` integers gives each value once, and a category of probability
//! `k / N` gets exactly `k` rows.

use super::draw::{below, coprime_from};
use crate::rng::StreamKey;

/// The strata of one field of a table of `rows` rows.
#[derive(Debug, Clone)]
pub(super) struct Strata {
    rows: u64,
    step: u64,
    offset: u64,
    /// `2^64 / rows` and its remainder: the words of a stratum, within
    /// one.
    quot: u128,
    rem: u64,
}

impl Strata {
    /// The strata of a field of a table of `rows` rows, its multiplier
    /// and offset drawn from `key` (the field's and the seed's); none for
    /// a table without rows.
    pub(super) fn new(rows: u64, key: StreamKey) -> Option<Strata> {
        if rows == 0 {
            return None;
        }
        let n = u128::from(rows);
        Some(Strata {
            rows,
            step: coprime_from(rows, below(key.first(1), n)),
            offset: below(key.first(0), n),
            quot: (1u128 << 64) / n,
            rem: ((1u128 << 64) % n) as u64,
        })
    }

    /// The stratum of row `id`: `((id mod rows) * step + offset) mod
    /// rows` (rows past the table's count start the strata again).
    #[inline]
    fn stratum(&self, id: u64) -> u64 {
        let n = self.rows;
        if n <= 1 << 31 {
            ((id % n) * self.step + self.offset) % n
        } else {
            ((u128::from(id % n) * u128::from(self.step) + u128::from(self.offset)) % u128::from(n))
                as u64
        }
    }

    /// The first word of stratum `s` (`s <= rows`): `ceil(s * 2^64 /
    /// rows)`, which is `2^64` for `s = rows`.
    #[inline]
    fn start(&self, s: u64) -> u128 {
        let (n, r) = (self.rows, self.rem);
        // `s * r` is below `rows^2`: 64 bits up to 2^32 rows.
        let part = if n <= 1 << 32 {
            u128::from((s * r).div_ceil(n))
        } else {
            (u128::from(s) * u128::from(r)).div_ceil(u128::from(n))
        };
        u128::from(s) * self.quot + part
    }

    /// Row `id`'s uniform word, within its stratum: the row's own word
    /// `bits` scaled into it.
    #[inline]
    pub(super) fn word(&self, id: u64, bits: u64) -> u64 {
        let s = self.stratum(id);
        let (lo, hi) = (self.start(s), self.start(s + 1));
        (lo + ((u128::from(bits) * (hi - lo)) >> 64)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stratum_once_and_its_words_exact() {
        for rows in [1u64, 2, 3, 7, 400, 1000, 4097] {
            let strata = Strata::new(rows, StreamKey::new(rows, 5)).unwrap();
            let mut seen = vec![false; rows as usize];
            for id in 0..rows {
                for bits in [
                    0,
                    1,
                    u64::MAX / 3,
                    u64::MAX - 1,
                    u64::MAX,
                    id.wrapping_mul(0x9e37_79b9),
                ] {
                    let w = strata.word(id, bits);
                    // The word's stratum is the row's.
                    let s = ((u128::from(w) * u128::from(rows)) >> 64) as u64;
                    assert_eq!(s, strata.stratum(id), "rows {rows}, id {id}, bits {bits}");
                }
                let s = strata.stratum(id) as usize;
                assert!(!seen[s], "rows {rows}: stratum {s} twice");
                seen[s] = true;
            }
            // The next block repeats the first.
            assert_eq!(strata.word(rows + 3, 99), strata.word(3 % rows, 99));
        }
    }

    #[test]
    fn large_tables_keep_the_words_in_their_strata() {
        for rows in [(1u64 << 32) + 1, 1 << 40, (1 << 63) + 5, u64::MAX] {
            let strata = Strata::new(rows, StreamKey::new(1, 2)).unwrap();
            for id in [0, 1, rows / 2, rows - 1, u64::MAX] {
                let s = strata.stratum(id);
                assert!(s < rows);
                for bits in [0, 12_345, u64::MAX] {
                    let w = strata.word(id, bits);
                    let got = ((u128::from(w) * u128::from(rows)) >> 64) as u64;
                    assert_eq!(got, s, "rows {rows}, id {id}, bits {bits}");
                }
            }
            assert_eq!(strata.start(rows), 1 << 64);
        }
    }
}
