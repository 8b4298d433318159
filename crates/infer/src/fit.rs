//! Distribution fits and Kolmogorov-Smirnov distances.
//!
//! A numeric column's sample is fitted by uniform, normal, lognormal and
//! (integers) Zipf distributions; each fit's KS distance to the sample
//! decides which one, if any, the spec uses (see `model`).

/// A fitted parametric distribution.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Dist {
    Uniform {
        min: f64,
        max: f64,
    },
    Normal {
        mean: f64,
        std: f64,
        min: f64,
        max: f64,
    },
    LogNormal {
        mu: f64,
        sigma: f64,
        min: f64,
        max: f64,
    },
    Zipf {
        s: f64,
        n: u64,
        start: i128,
    },
}

impl Dist {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Dist::Uniform { .. } => "uniform",
            Dist::Normal { .. } => "normal",
            Dist::LogNormal { .. } => "lognormal",
            Dist::Zipf { .. } => "zipf",
        }
    }
}

/// The standard normal CDF (Abramowitz and Stegun 7.1.26 for erf: error
/// below 1.5e-7).
pub(crate) fn phi(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    let erf = if x >= 0.0 { y } else { -y };
    0.5 * (1.0 + erf)
}

/// KS distance between a sorted sample and a CDF. With `discrete`, the
/// values are integers and the model is rounded to them: its mass at `v`
/// is `cdf(v + 0.5) - cdf(v - 0.5)`.
pub(crate) fn ks_one(sorted: &[f64], cdf: impl Fn(f64) -> f64, discrete: bool) -> f64 {
    let n = sorted.len() as f64;
    if sorted.is_empty() {
        return 0.0;
    }
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let v = sorted[i];
        let mut j = i;
        while j < sorted.len() && sorted[j] == v {
            j += 1;
        }
        let (below, at) = if discrete {
            (cdf(v - 0.5), cdf(v + 0.5))
        } else {
            let c = cdf(v);
            (c, c)
        };
        d = d
            .max((i as f64 / n - below).abs())
            .max((j as f64 / n - at).abs());
        i = j;
    }
    d
}

/// Two-sample KS distance between sorted samples.
pub(crate) fn ks_two(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return if a.len() == b.len() { 0.0 } else { 1.0 };
    }
    let (n, m) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
    while i < a.len() && j < b.len() {
        let v = a[i].min(b[j]);
        while i < a.len() && a[i] <= v {
            i += 1;
        }
        while j < b.len() && b[j] <= v {
            j += 1;
        }
        d = d.max((i as f64 / n - j as f64 / m).abs());
    }
    d
}

/// The 95% critical value of the two-sample KS test at sizes `n`, `m`:
/// distances below it are what two samples of one distribution show.
pub(crate) fn ks_critical(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    let (n, m) = (n as f64, m as f64);
    1.358 * ((n + m) / (n * m)).sqrt()
}

/// A clamped CDF: 0 below `min`, 1 from `max` on.
fn clamp(cdf: impl Fn(f64) -> f64, min: f64, max: f64) -> impl Fn(f64) -> f64 {
    move |x| {
        if x < min {
            0.0
        } else if x >= max {
            1.0
        } else {
            cdf(x)
        }
    }
}

/// The CDF of a fitted distribution (clamped where it is).
pub(crate) fn cdf(d: &Dist, discrete: bool) -> Box<dyn Fn(f64) -> f64 + '_> {
    match *d {
        Dist::Uniform { min, max } => {
            if discrete {
                let width = max - min + 1.0;
                Box::new(move |x: f64| ((x.floor() - min + 1.0) / width).clamp(0.0, 1.0))
            } else {
                let width = (max - min).max(f64::MIN_POSITIVE);
                Box::new(move |x: f64| ((x - min) / width).clamp(0.0, 1.0))
            }
        }
        Dist::Normal {
            mean,
            std,
            min,
            max,
        } => {
            let (lo, hi) = if discrete {
                (min - 0.5, max + 0.5)
            } else {
                (min, max)
            };
            Box::new(clamp(move |x| phi((x - mean) / std), lo, hi))
        }
        Dist::LogNormal {
            mu,
            sigma,
            min,
            max,
        } => {
            let (lo, hi) = if discrete {
                (min - 0.5, max + 0.5)
            } else {
                (min, max)
            };
            Box::new(clamp(
                move |x| {
                    if x <= 0.0 {
                        0.0
                    } else {
                        phi((x.ln() - mu) / sigma)
                    }
                },
                lo,
                hi,
            ))
        }
        Dist::Zipf { s, n, start } => {
            let h = Harmonic::new(s);
            let total = h.at(n as f64);
            Box::new(move |x: f64| {
                let k = (x.floor() - start as f64 + 1.0).min(n as f64);
                if k < 1.0 { 0.0 } else { h.at(k) / total }
            })
        }
    }
}

/// Generalised harmonic numbers `H(k, s) = sum_{i <= k} i^-s`: exact up to
/// [`Harmonic::EXACT`], then the integral's Euler-Maclaurin estimate.
struct Harmonic {
    s: f64,
    partial: Vec<f64>,
}

impl Harmonic {
    const EXACT: usize = 10_000;

    fn new(s: f64) -> Self {
        let mut partial = Vec::with_capacity(Self::EXACT + 1);
        partial.push(0.0);
        let mut acc = 0.0;
        for i in 1..=Self::EXACT {
            acc += (i as f64).powf(-s);
            partial.push(acc);
        }
        Harmonic { s, partial }
    }

    fn at(&self, k: f64) -> f64 {
        let k = k.floor();
        if k <= Self::EXACT as f64 {
            return self.partial[k.max(0.0) as usize];
        }
        let a = Self::EXACT as f64 + 0.5;
        let b = k + 0.5;
        let tail = if (self.s - 1.0).abs() < 1e-9 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - self.s) - a.powf(1.0 - self.s)) / (1.0 - self.s)
        };
        self.partial[Self::EXACT] + tail
    }
}

/// The fits of a sorted sample: each candidate with its KS distance, best
/// first. `moments` are the exact mean and standard deviation of all
/// values, `ln_moments` those of `ln(v)` when every value is positive.
pub(crate) fn candidates(
    sorted: &[f64],
    bounds: (f64, f64),
    moments: (f64, f64),
    ln_moments: Option<(f64, f64)>,
    discrete: bool,
) -> Vec<(Dist, f64)> {
    let (min, max) = bounds;
    let mut out = Vec::new();
    if sorted.is_empty() || max <= min {
        return out;
    }
    let mut try_fit = |d: Dist| {
        let ks = ks_one(sorted, cdf(&d, discrete), discrete);
        out.push((d, ks));
    };
    try_fit(Dist::Uniform { min, max });
    if moments.1 > 0.0 {
        try_fit(Dist::Normal {
            mean: moments.0,
            std: moments.1,
            min,
            max,
        });
    }
    if let Some((mu, sigma)) = ln_moments
        && sigma > 0.0
    {
        try_fit(Dist::LogNormal {
            mu,
            sigma,
            min,
            max,
        });
    }
    if discrete && max - min < 1e9 {
        // Zipf from the least value: only when it is the most frequent.
        let at_min = sorted.iter().take_while(|&&v| v == min).count();
        let next = sorted[at_min..]
            .iter()
            .take_while(|&&v| v == min + 1.0)
            .count();
        if at_min > next && at_min * 20 > sorted.len() / 100 {
            let n = (max - min) as u64 + 1;
            let start = min as i128;
            let mut best: Option<(f64, f64)> = None;
            let mut s = 0.1;
            while s <= 4.0 + 1e-9 {
                let d = Dist::Zipf { s, n, start };
                let ks = ks_one(sorted, cdf(&d, true), true);
                if best.is_none_or(|(_, b)| ks < b) {
                    best = Some((s, ks));
                }
                s += 0.05;
            }
            if let Some((s, ks)) = best {
                out.push((
                    Dist::Zipf {
                        s: (s * 100.0).round() / 100.0,
                        n,
                        start,
                    },
                    ks,
                ));
            }
        }
    }
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::Mix;

    #[test]
    fn phi_matches_known_values() {
        assert!((phi(0.0) - 0.5).abs() < 1e-7);
        assert!((phi(1.96) - 0.975).abs() < 1e-4);
        assert!((phi(-1.0) - 0.158_655).abs() < 1e-5);
    }

    #[test]
    fn fits_pick_the_distribution_that_made_the_data() {
        let mut r = Mix::new(3);
        let n = 20_000;
        let mut uni: Vec<f64> = (0..n).map(|_| 10.0 + 90.0 * r.unit()).collect();
        let mut norm: Vec<f64> = (0..n)
            .map(|_| {
                // Box-Muller.
                let (a, b) = (r.unit(), r.unit());
                50.0 + 5.0 * (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
            })
            .collect();
        let mut logn: Vec<f64> = norm
            .iter()
            .map(|v| ((v - 50.0) / 5.0 * 0.8 + 1.0).exp())
            .collect();
        for (s, want) in [
            (&mut uni, "uniform"),
            (&mut norm, "normal"),
            (&mut logn, "lognormal"),
        ] {
            s.sort_by(f64::total_cmp);
            let m = s.iter().sum::<f64>() / n as f64;
            let sd = (s.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64).sqrt();
            let ln = s.iter().all(|&v| v > 0.0).then(|| {
                let l: Vec<f64> = s.iter().map(|v| v.ln()).collect();
                let lm = l.iter().sum::<f64>() / n as f64;
                (
                    lm,
                    (l.iter().map(|v| (v - lm) * (v - lm)).sum::<f64>() / n as f64).sqrt(),
                )
            });
            let c = candidates(s, (s[0], s[n - 1]), (m, sd), ln, false);
            assert_eq!(c[0].0.name(), want, "{c:?}");
            assert!(c[0].1 < 0.015, "{c:?}");
        }
    }

    #[test]
    fn two_sample_ks_is_zero_for_equal_samples_and_one_for_disjoint() {
        let a: Vec<f64> = (0..100).map(f64::from).collect();
        let b: Vec<f64> = (100..200).map(f64::from).collect();
        assert_eq!(ks_two(&a, &a), 0.0);
        assert_eq!(ks_two(&a, &b), 1.0);
        let half: Vec<f64> = (50..150).map(f64::from).collect();
        assert!((ks_two(&a, &half) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn zipf_is_fitted_with_its_exponent() {
        // Inverse-CDF draws from Zipf(1.2, 1000).
        let (s, n) = (1.2, 1000u64);
        let d = Dist::Zipf { s, n, start: 1 };
        let c = cdf(&d, true);
        let mut r = Mix::new(9);
        let mut v: Vec<f64> = (0..20_000)
            .map(|_| {
                let u = r.unit();
                let (mut lo, mut hi) = (1u64, n);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if c(mid as f64) >= u {
                        hi = mid
                    } else {
                        lo = mid + 1
                    }
                }
                lo as f64
            })
            .collect();
        v.sort_by(f64::total_cmp);
        let fits = candidates(&v, (1.0, v[v.len() - 1]), (0.0, 1.0), None, true);
        let z = fits
            .iter()
            .find(|f| f.0.name() == "zipf")
            .expect("zipf tried");
        match z.0 {
            Dist::Zipf { s: got, .. } => assert!((got - s).abs() <= 0.1, "{got}"),
            _ => unreachable!(),
        }
        assert!(z.1 < 0.02, "{z:?}");
    }
}
