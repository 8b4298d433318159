//! Summaries of repeated measurements and the verdict against a baseline.
//!
//! A change is reported only when it is both larger than a threshold (5%
//! by default, the size below which these machines' noise hides a change)
//! and significant: a two-sided Mann-Whitney U test over the repeats,
//! exact for small samples without ties, else the normal approximation
//! with the tie correction. The test makes no assumption about the shape
//! of the timing distribution, which on a shared machine is skewed.

use serde::{Deserialize, Serialize};

/// Median, extremes, mean and median absolute deviation of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The median (the mean of the two middle samples for an even count).
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
    /// The arithmetic mean.
    pub mean: f64,
    /// The median absolute deviation from the median.
    pub mad: f64,
}

impl Summary {
    /// The summary of `samples`; `None` when there are none or one is not
    /// finite.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let median = median_sorted(&s);
        let mut dev: Vec<f64> = s.iter().map(|x| (x - median).abs()).collect();
        dev.sort_by(f64::total_cmp);
        Some(Summary {
            median,
            min: s[0],
            max: s[s.len() - 1],
            mean: s.iter().sum::<f64>() / s.len() as f64,
            mad: median_sorted(&dev),
        })
    }
}

fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The two-sided p-value of the Mann-Whitney U test that samples `a` and
/// `b` come from the same distribution.
///
/// Exact (by counting the arrangements of ranks) when there are no ties
/// and `a.len() * b.len() <= 400`; otherwise the normal approximation
/// with tie and continuity corrections. 1.0 when either sample is empty.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 {
        return 1.0;
    }
    // Ranks of the pooled samples, ties sharing their mean rank.
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let total = m + n;
    let mut rank_a = 0.0;
    let mut tie_term = 0.0;
    let mut ties = false;
    let mut i = 0;
    while i < total {
        let mut j = i + 1;
        while j < total && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        if j - i > 1 {
            ties = true;
            tie_term += t * t * t - t;
        }
        // Ranks i+1 ..= j share their mean.
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        rank_a += mean_rank * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        i = j;
    }
    let u = rank_a - (m * (m + 1)) as f64 / 2.0;
    let (mf, nf) = (m as f64, n as f64);
    let mu = mf * nf / 2.0;
    if !ties && m * n <= 400 {
        // P(U <= u') for the smaller tail, doubled.
        let counts = u_distribution(m, n);
        let all: f64 = counts.iter().sum();
        let u_int = u.round() as usize;
        let lower = u_int.min(m * n - u_int);
        let tail: f64 = counts[..=lower].iter().sum();
        return (2.0 * tail / all).min(1.0);
    }
    let var = mf * nf / 12.0 * ((mf + nf + 1.0) - tie_term / ((mf + nf) * (mf + nf - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mu).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * normal_upper_tail(z)).min(1.0)
}

/// How many arrangements of `m` and `n` distinct values give each U, from
/// 0 to `m * n` (the recurrence on whether the largest value is from the
/// first sample).
fn u_distribution(m: usize, n: usize) -> Vec<f64> {
    // table[j][u]: arrangements of i first-sample and j second-sample
    // values with statistic u, built row by row over i.
    let size = m * n + 1;
    let mut prev: Vec<Vec<f64>> = (0..=n)
        .map(|_| {
            let mut v = vec![0.0; size];
            v[0] = 1.0;
            v
        })
        .collect();
    for _ in 1..=m {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; size]; n + 1];
        cur[0][0] = 1.0;
        for j in 1..=n {
            for u in 0..size {
                // Largest value from the first sample: it beats all j.
                let from_first = if u >= j { prev[j][u - j] } else { 0.0 };
                cur[j][u] = from_first + cur[j - 1][u];
            }
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// P(Z > z) for a standard normal Z.
fn normal_upper_tail(z: f64) -> f64 {
    0.5 * strata_gen::dist::erfc(z / std::f64::consts::SQRT_2)
}

/// What a comparison with a baseline concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Faster beyond the threshold, and significant.
    Improved,
    /// Slower beyond the threshold, and significant.
    Regressed,
    /// The medians differ by less than the threshold.
    WithinNoise,
    /// Beyond the threshold, but the repeats do not show it is real.
    NotSignificant,
}

impl Verdict {
    /// The word a report prints.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "REGRESSED",
            Verdict::WithinNoise => "within noise",
            Verdict::NotSignificant => "not significant",
        }
    }
}

/// The thresholds of [`compare`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Smallest relative change of the median that can count (0.05 = 5%).
    pub change: f64,
    /// Largest p-value that counts as significant.
    pub alpha: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            change: 0.05,
            alpha: 0.05,
        }
    }
}

/// A comparison of times (lower is better) with a baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// (current median - baseline median) / baseline median: +0.10 is 10%
    /// slower.
    pub change: f64,
    /// The Mann-Whitney p-value over the repeats.
    pub p_value: f64,
    /// The conclusion.
    pub verdict: Verdict,
}

/// Compares `current` times with `baseline` times (both in seconds, lower
/// is better). `None` when either has no finite samples.
pub fn compare(baseline: &[f64], current: &[f64], t: Thresholds) -> Option<Comparison> {
    let b = Summary::of(baseline)?;
    let c = Summary::of(current)?;
    if b.median <= 0.0 {
        return None;
    }
    let change = (c.median - b.median) / b.median;
    let p_value = mann_whitney_p(baseline, current);
    let verdict = if change.abs() < t.change {
        Verdict::WithinNoise
    } else if p_value > t.alpha {
        Verdict::NotSignificant
    } else if change > 0.0 {
        Verdict::Regressed
    } else {
        Verdict::Improved
    };
    Some(Comparison {
        change,
        p_value,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_of_known_samples() {
        let s = Summary::of(&[3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert_eq!((s.min, s.max), (1.0, 10.0));
        assert_eq!(s.mean, 4.0);
        // |x - 2.5| = 0.5, 0.5, 1.5, 7.5 -> median 1.0
        assert_eq!(s.mad, 1.0);
        let s = Summary::of(&[5.0]).unwrap();
        assert_eq!((s.median, s.mad), (5.0, 0.0));
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn exact_u_distribution_matches_enumeration() {
        // m = 2, n = 2: the six arrangements give U = 0,1,2,2,3,4.
        assert_eq!(u_distribution(2, 2), vec![1.0, 1.0, 2.0, 1.0, 1.0]);
        // Symmetric and summing to C(m + n, m).
        let d = u_distribution(5, 7);
        assert_eq!(d.iter().sum::<f64>(), 792.0);
        for u in 0..d.len() {
            assert_eq!(d[u], d[d.len() - 1 - u]);
        }
    }

    #[test]
    fn mann_whitney_known_p_values() {
        // Complete separation of 5 and 5: p = 2 / C(10, 5) = 2 / 252.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        assert!((mann_whitney_p(&a, &b) - 2.0 / 252.0).abs() < 1e-12);
        assert!((mann_whitney_p(&b, &a) - 2.0 / 252.0).abs() < 1e-12);
        // Three against three can never be significant at 5%: 2 / 20.
        assert!((mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]) - 0.1).abs() < 1e-12);
        // Interleaved samples: U = 10 of 25, P(U <= 10) = 87 / 252.
        let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0, 9.0], &[2.0, 4.0, 6.0, 8.0, 10.0]);
        assert!((p - 174.0 / 252.0).abs() < 1e-12, "{p}");
        // Ties use the normal approximation: identical samples, p = 1.
        assert_eq!(mann_whitney_p(&[1.0; 6], &[1.0; 6]), 1.0);
        // Large separated samples: tiny p from the approximation.
        let a: Vec<f64> = (0..30).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| 100.0 + i as f64).collect();
        assert!(mann_whitney_p(&a, &b) < 1e-8);
    }

    #[test]
    fn normal_tail_known_values() {
        assert!((normal_upper_tail(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_upper_tail(-1.0) - 0.841_344_7).abs() < 1e-6);
    }

    #[test]
    fn verdicts_for_known_inputs() {
        let t = Thresholds::default();
        let base = [1.00, 1.01, 0.99, 1.02, 0.98];
        // 20% slower, cleanly separated: regressed.
        let slow = [1.20, 1.21, 1.19, 1.22, 1.18];
        let c = compare(&base, &slow, t).unwrap();
        assert_eq!(c.verdict, Verdict::Regressed);
        assert!((c.change - 0.2).abs() < 1e-9);
        // 20% faster: improved.
        let fast = [0.80, 0.81, 0.79, 0.82, 0.78];
        assert_eq!(compare(&base, &fast, t).unwrap().verdict, Verdict::Improved);
        // 2% slower and separated: below the threshold.
        let near = [1.02, 1.03, 1.01, 1.04, 1.00];
        assert_eq!(
            compare(&base, &near, t).unwrap().verdict,
            Verdict::WithinNoise
        );
        // Median 10% slower but the samples overlap: not significant.
        let noisy = [0.90, 1.10, 1.30, 0.95, 1.25];
        let c = compare(&base, &noisy, t).unwrap();
        assert!(c.change >= 0.05, "{c:?}");
        assert_eq!(c.verdict, Verdict::NotSignificant);
        // Three repeats each are never enough.
        let c = compare(&[1.0, 1.0, 1.0], &[2.0, 2.1, 2.2], t).unwrap();
        assert_eq!(c.verdict, Verdict::NotSignificant);
        // Nothing to compare.
        assert!(compare(&[], &slow, t).is_none());
    }
}
