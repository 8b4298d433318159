//! Discrete distributions sampled from precomputed tables.

use crate::{Error, rng::below};

/// A categorical distribution over `0..k` with integer weights, sampled by
/// one table lookup: the table holds each category `weight` times, so a
/// uniform index into it picks category `i` with probability
/// `weight_i / sum`, exactly.
#[derive(Debug, Clone)]
pub struct Categorical {
    table: Box<[u8]>,
}

/// The largest weight sum a [`Categorical`] accepts.
pub const MAX_WEIGHT_SUM: u32 = 1 << 16;

impl Categorical {
    /// Builds the table for `weights`.
    ///
    /// # Errors
    /// [`Error::InvalidDistribution`] when there are no weights, more than
    /// 256 categories, all weights are zero, or they sum past
    /// [`MAX_WEIGHT_SUM`].
    pub fn new(weights: &[u32]) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidDistribution(why.to_string());
        if weights.is_empty() {
            return Err(bad("a categorical distribution needs at least one weight"));
        }
        if weights.len() > 256 {
            return Err(bad("a categorical distribution has at most 256 categories"));
        }
        let sum: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        if sum == 0 {
            return Err(bad("categorical weights sum to zero"));
        }
        if sum > u64::from(MAX_WEIGHT_SUM) {
            return Err(bad("categorical weights sum past 65536"));
        }
        let mut table = Vec::with_capacity(sum as usize);
        for (i, &w) in weights.iter().enumerate() {
            table.extend(std::iter::repeat_n(i as u8, w as usize));
        }
        Ok(Categorical {
            table: table.into_boxed_slice(),
        })
    }

    /// The category that 32 uniform random bits select.
    #[inline(always)]
    pub fn sample(&self, bits: u32) -> u8 {
        let n = self.table.len();
        // `below` returns a value under `n`; the `min` lets the optimiser
        // drop the bounds check.
        let i = (below(bits, n as u32) as usize).min(n - 1);
        self.table[i]
    }

    /// The probability of category `i`.
    pub fn probability(&self, i: u8) -> f64 {
        let n = self.table.iter().filter(|&&c| c == i).count();
        n as f64 / self.table.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_shares_over_all_inputs_of_a_grid() {
        let c = Categorical::new(&[55, 35, 10]).unwrap();
        assert_eq!(c.probability(0), 0.55);
        let mut counts = [0u32; 3];
        // Walk the 32-bit space evenly.
        for i in 0..100_000u64 {
            let bits = ((i << 32) / 100_000) as u32;
            counts[c.sample(bits) as usize] += 1;
        }
        // Grid points on a category boundary may round either way.
        for (got, want) in counts.iter().zip([55_000i64, 35_000, 10_000]) {
            assert!((i64::from(*got) - want).abs() <= 2, "{counts:?}");
        }
    }

    #[test]
    fn rejects_bad_weights() {
        assert!(Categorical::new(&[]).is_err());
        assert!(Categorical::new(&[0, 0]).is_err());
        assert!(Categorical::new(&[70_000]).is_err());
        assert!(Categorical::new(&[1; 257]).is_err());
    }
}
