//! The shares a spec promises, computed from the engine's own rules: the
//! probability of each category, each list length and each map key, as
//! the engine draws them. A reader checking data against a spec (such as
//! `strata-pipeline`'s distribution check) compares what it counts with
//! these, so a change to the engine's sampling changes them with it.

use std::collections::BTreeMap;

use crate::dist::normal_cdf;
pub use crate::facts::MAP_KEY_DRAWS;
use crate::facts::MAX_LENGTH;
use crate::model::query::{category_values, max_length};
use crate::model::{Generator, Value};

/// Most distinct key categories for the exact key-share computation.
const MAX_EXACT_KEYS: usize = 16;

/// The categories of a categorical generator with their probabilities, by
/// category index (values may repeat): the values the engine draws from
/// (as the parser lists them) with the weight of each.
pub fn category_probabilities(g: &Generator) -> Option<Vec<(Value, f64)>> {
    let values = category_values(g)?;
    let p: Vec<f64> = match g {
        Generator::Weighted { weights, .. } => {
            let sum: f64 = weights.iter().sum();
            if values.len() != weights.len() || !(sum > 0.0 && sum.is_finite()) {
                return None;
            }
            weights.iter().map(|w| w / sum).collect()
        }
        Generator::Zipf { s, n, .. } => {
            if values.len() as u64 != *n {
                return None;
            }
            zipf_probabilities(*s, values.len())?
        }
        Generator::Probability(p) => vec![1.0 - p, *p],
        Generator::Constant(_) => vec![1.0],
        _ => return None,
    };
    Some(values.into_iter().zip(p).collect())
}

/// `P(k) ∝ k^-s` for ranks `1..=n`, the probabilities of
/// [`crate::dist::Zipf`] (exact for its table and its
/// rejection-inversion sampler alike).
pub fn zipf_probabilities(s: f64, n: usize) -> Option<Vec<f64>> {
    if !(s > 0.0 && s.is_finite()) || n == 0 {
        return None;
    }
    let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
    // Smallest first, for an accurate sum.
    let sum: f64 = w.iter().rev().sum();
    Some(w.into_iter().map(|x| x / sum).collect())
}

/// The distribution of a drawn list length: (length, probability) by
/// length, as the generator clamps it.
#[derive(Debug, Clone, PartialEq)]
pub struct LengthPmf {
    /// (length, probability), by length.
    pub points: Vec<(u64, f64)>,
    /// Drawn from a normal (bucketed where the range is wide).
    pub normal: bool,
}

impl LengthPmf {
    /// The probability of `len`.
    pub fn probability(&self, len: u64) -> f64 {
        self.points
            .binary_search_by_key(&len, |p| p.0)
            .map_or(0.0, |i| self.points[i].1)
    }
}

fn int_value(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

/// The most elements the engine lets a list of length generator `g` hold
/// (it clamps drawn lengths to `0..=max`), at least 1.
fn length_limit(g: &Generator) -> i128 {
    i128::from(max_length(g)).max(1)
}

/// The distribution of lengths drawn by `g`; `None` for generators that
/// do not draw integers or have too many points to list.
pub fn length_pmf(g: &Generator) -> Option<LengthPmf> {
    let limit = length_limit(g);
    let clamp = |v: i128| v.clamp(0, limit) as u64;
    let mut points: BTreeMap<u64, f64> = BTreeMap::new();
    let mut add = |v: i128, p: f64| *points.entry(clamp(v)).or_insert(0.0) += p;
    let mut normal = false;
    match g {
        Generator::Constant(v) => add(int_value(v)?, 1.0),
        Generator::Uniform { min, max } => {
            let (a, b) = (int_value(min)?, int_value(max)?);
            if b < a || b - a >= 2 * MAX_LENGTH {
                return None;
            }
            let p = 1.0 / (b - a + 1) as f64;
            for v in a..=b {
                add(v, p);
            }
        }
        Generator::Weighted { .. }
        | Generator::Zipf {
            values: Some(_), ..
        } => {
            for (v, p) in category_probabilities(g)? {
                add(int_value(&v)?, p);
            }
        }
        Generator::Zipf {
            s,
            n,
            values: None,
            start,
        } => {
            if i128::from(*n) > 2 * MAX_LENGTH {
                return None;
            }
            for (k, p) in zipf_probabilities(*s, *n as usize)?.into_iter().enumerate() {
                add(start + k as i128, p);
            }
        }
        Generator::Normal {
            mean,
            std,
            min,
            max,
        } => {
            normal = true;
            for (v, p) in normal_lengths(*mean, *std, *min, *max, limit)? {
                add(i128::from(v), p);
            }
        }
        _ => return None,
    }
    Some(LengthPmf {
        points: points.into_iter().collect(),
        normal,
    })
}

/// Lengths drawn from a normal: `round(mean + std·Z)`, clamped to `[min,
/// max]` (and `[0, MAX_LENGTH]`, the parser's limit), truncated to an integer and clamped to
/// `0..=limit`, as the generator does.
fn normal_lengths(
    mean: f64,
    std: f64,
    min: Option<f64>,
    max: Option<f64>,
    limit: i128,
) -> Option<Vec<(u64, f64)>> {
    if !(std > 0.0 && std.is_finite() && mean.is_finite()) {
        return None;
    }
    let lo = min.map_or(0.0, |m| m.max(0.0));
    let hi = max.map_or(MAX_LENGTH as f64, |m| m.min(MAX_LENGTH as f64));
    let value = |r: f64| -> u64 { (r.max(lo).min(hi) as u64).min(limit as u64) };
    let cdf = |x: f64| normal_cdf((x - mean) / std);
    // Rounded draws beyond 12 standard deviations, or beyond the clamps,
    // are lumped into the end buckets.
    let first = (mean - 12.0 * std).floor().max(lo.floor() - 1.0);
    let last = (mean + 12.0 * std).ceil().min(hi.ceil() + 1.0);
    if first.is_nan() || last.is_nan() || first > last {
        return Some(vec![(value(mean.round()), 1.0)]);
    }
    let span = last - first + 1.0;
    let width = (span / (1u64 << 20) as f64).ceil().max(1.0);
    let mut out = Vec::new();
    let mut r = first;
    let mut below = 0.0;
    while r <= last {
        let top = r + width - 0.5;
        let upper = if top + 0.5 > last { 1.0 } else { cdf(top) };
        let at = if width > 1.0 {
            (r + (width - 1.0) / 2.0).round()
        } else {
            r
        };
        out.push((value(at), (upper - below).max(0.0)));
        below = upper;
        r += width;
    }
    Some(out)
}

/// Key shares of a map whose keys are drawn from `categories` (by index)
/// without repetition within a map, `lengths` keys per map: a key that is
/// already in the map is drawn again, up to [`MAP_KEY_DRAWS`] draws, then
/// the first unused possible category is taken (as the engine does).
pub fn map_key_shares(
    categories: &[(Value, f64)],
    lengths: &LengthPmf,
) -> Option<Vec<(Value, f64)>> {
    let possible: Vec<usize> = (0..categories.len())
        .filter(|&i| categories[i].1 > 0.0)
        .collect();
    let m = possible.len();
    let longest = lengths
        .points
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|p| p.0)
        .max()
        .unwrap_or(0) as usize;
    let mean: f64 = lengths.points.iter().map(|&(l, p)| l as f64 * p).sum();
    if longest == 0 || mean <= 0.0 {
        return Some(categories.to_vec());
    }
    if longest > m {
        return None;
    }
    let mut counts = vec![0.0; categories.len()];
    if m <= MAX_EXACT_KEYS {
        // P(the map holds at least j+1 keys).
        let more_than = |j: usize| -> f64 {
            lengths
                .points
                .iter()
                .filter(|p| p.0 as usize > j)
                .map(|p| p.1)
                .sum()
        };
        let tail: Vec<f64> = (0..longest).map(more_than).collect();
        let p: Vec<f64> = possible.iter().map(|&i| categories[i].1).collect();
        // Probability of each set of keys drawn so far; sets only grow,
        // so increasing order visits a set after all its subsets.
        let mut prob = vec![0.0f64; 1 << m];
        prob[0] = 1.0;
        for set in 0..(1usize << m) {
            let j = set.count_ones() as usize;
            if j >= longest || prob[set] == 0.0 {
                continue;
            }
            let taken: f64 = (0..m).filter(|&i| set & (1 << i) != 0).map(|i| p[i]).sum();
            let repeat = taken.min(1.0);
            let fallback = repeat.powi(MAP_KEY_DRAWS as i32);
            let scale = if repeat < 1.0 {
                (1.0 - fallback) / (1.0 - repeat)
            } else {
                0.0
            };
            let first_unused = (0..m).find(|&i| set & (1 << i) == 0);
            for i in 0..m {
                if set & (1 << i) != 0 {
                    continue;
                }
                let mut next = p[i] * scale;
                if first_unused == Some(i) {
                    next += fallback;
                }
                let q = prob[set] * next;
                counts[possible[i]] += tail[j] * q;
                prob[set | (1 << i)] += q;
            }
        }
    } else {
        // Equal weights: every key is as likely, whatever the lengths; a
        // repeat MAP_KEY_DRAWS times over is then rare enough to ignore.
        let p0 = categories[possible[0]].1;
        let equal = possible
            .iter()
            .all(|&i| (categories[i].1 - p0).abs() <= 1e-12 * p0);
        if !equal || longest * 2 > m {
            return None;
        }
        for &i in &possible {
            counts[i] = mean / m as f64;
        }
    }
    Some(
        categories
            .iter()
            .zip(counts)
            .map(|((v, _), c)| (v.clone(), c / mean))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_lengths_have_the_clamped_mean() {
        // Far from the clamps: the mean of the rounded normal.
        let pmf = normal_lengths(20.0, 3.0, None, None, MAX_LENGTH).unwrap();
        let total: f64 = pmf.iter().map(|p| p.1).sum();
        let mean: f64 = pmf.iter().map(|&(l, p)| l as f64 * p).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        assert!((mean - 20.0).abs() < 1e-6, "{mean}");
        // Mean 0, clamped at 0: half the draws are 0, the rest a
        // half-normal rounded (mean about std·sqrt(2/π)/2 + a rounding
        // term).
        let pmf = normal_lengths(0.0, 4.0, None, None, MAX_LENGTH).unwrap();
        let zero: f64 = pmf.iter().filter(|p| p.0 == 0).map(|p| p.1).sum();
        assert!((zero - normal_cdf(0.5 / 4.0)).abs() < 1e-6, "{zero}");
        // A huge deviation is bucketed but keeps its mean.
        let pmf = normal_lengths(500_000.0, 100_000.0, None, None, MAX_LENGTH).unwrap();
        let mean: f64 = pmf.iter().map(|&(l, p)| l as f64 * p).sum();
        assert!((mean - 500_000.0).abs() < 50.0, "{mean}");
    }

    #[test]
    fn uniform_map_keys_are_equally_likely() {
        let cats: Vec<(Value, f64)> = ["a", "b", "c", "d"]
            .iter()
            .map(|s| (Value::Str(s.to_string()), 0.25))
            .collect();
        let lengths = LengthPmf {
            points: vec![(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)],
            normal: false,
        };
        for (_, p) in map_key_shares(&cats, &lengths).unwrap() {
            assert!((p - 0.25).abs() < 1e-12, "{p}");
        }
    }

    #[test]
    fn skewed_map_keys_flatten_with_length() {
        // Two keys, weights 3:1, maps of exactly 2 keys hold both.
        let cats = vec![
            (Value::Str("a".into()), 0.75),
            (Value::Str("b".into()), 0.25),
        ];
        let two = LengthPmf {
            points: vec![(2, 1.0)],
            normal: false,
        };
        for (_, p) in map_key_shares(&cats, &two).unwrap() {
            assert!((p - 0.5).abs() < 1e-12, "{p}");
        }
        // Maps of one key keep the weights.
        let one = LengthPmf {
            points: vec![(1, 1.0)],
            normal: false,
        };
        let shares = map_key_shares(&cats, &one).unwrap();
        assert!((shares[0].1 - 0.75).abs() < 1e-12);
    }
}
