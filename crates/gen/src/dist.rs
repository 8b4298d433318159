//! Distributions sampled from counter-based random bits.
//!
//! * [`Alias`]: any finite categorical distribution (weights as given in
//!   a spec), one table lookup and one comparison per draw (Walker's alias
//!   method, built with Vose's stable construction).
//! * [`Zipf`]: ranks `1..=n` with `P(k) ∝ k^-s`, exact by alias table up to
//!   [`ZIPF_TABLE_MAX`] ranks; beyond, the table holds the first ranks and
//!   one slot for all the others, which are drawn by rejection-inversion
//!   (Hörmann and Derflinger, 1996) in expected constant time for any `n`.
//! * [`normal`]: a standard normal deviate by the ziggurat method (Marsaglia
//!   and Tsang, 2000): one word and a comparison for 99% of draws.
//! * [`normal_quantile`] and [`Cumulative`]: the normal distribution and
//!   categorical ones by their inverse distribution functions, one
//!   uniform number per draw (stratified tables, where that number is
//!   drawn within a stratum).
//!
//! Every sampler maps random words to values and keeps no state, so a
//! value depends only on the words it is given (see [`crate::rng`]).

use crate::{Error, rng::RowRng};

/// A categorical distribution over `0..n` sampled by Walker's alias method.
///
/// Each slot `i` keeps a threshold and an alias: a draw picks a slot
/// uniformly and returns `i` when 32 further random bits fall below the
/// threshold, else the alias. Probabilities are exact to 2^-32.
#[derive(Debug, Clone)]
pub struct Alias {
    /// `(threshold, alias)` per slot; the threshold is a probability
    /// scaled to `2^32`. A slot that always keeps `i` has itself as alias,
    /// so 32 bits are enough (and a slot takes 8 bytes: half the cache
    /// lines of a large Zipf table).
    slots: Box<[(u32, u32)]>,
    probabilities: Box<[f64]>,
}

impl Alias {
    /// Builds the table for `weights` (any non-negative finite numbers
    /// with a positive sum).
    ///
    /// # Errors
    /// [`Error::InvalidDistribution`] for no weights, more than 2^32 of
    /// them, a negative or non-finite weight, or a zero sum.
    pub fn new(weights: &[f64]) -> Result<Self, Error> {
        let sum = Self::check(weights)?;
        let n = weights.len();
        let probabilities: Box<[f64]> = weights.iter().map(|w| w / sum).collect();
        // Vose: scaled probabilities p_i * n, split into those below 1 and
        // the rest; each small slot is topped up by one large category.
        let mut scaled: Vec<f64> = probabilities.iter().map(|p| p * n as f64).collect();
        let mut slots = vec![(u32::MAX, 0u32); n];
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            slots[s] = slot(s, scaled[s], l);
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // What is left is 1 up to rounding: such slots always keep `i`.
        for i in small.into_iter().chain(large) {
            slots[i] = (u32::MAX, i as u32);
        }
        Ok(Alias {
            slots: slots.into_boxed_slice(),
            probabilities,
        })
    }

    /// Checks `weights` as [`Alias::new`] does, without building the
    /// table (a spec is checked when it is read and built once when it
    /// runs), and returns their sum.
    ///
    /// # Errors
    /// As [`Alias::new`].
    pub fn check(weights: &[f64]) -> Result<f64, Error> {
        let bad = |why: String| Error::InvalidDistribution(why);
        if weights.is_empty() {
            return Err(bad("needs at least one weight".into()));
        }
        if weights.len() > u32::MAX as usize {
            return Err(bad("has more than 2^32 categories".into()));
        }
        if let Some((i, w)) = weights
            .iter()
            .enumerate()
            .find(|(_, w)| !w.is_finite() || **w < 0.0)
        {
            return Err(bad(format!(
                "weight {i} is {w}; weights must be finite and non-negative"
            )));
        }
        let sum: f64 = weights.iter().sum();
        if !sum.is_finite() {
            return Err(bad(
                "weights sum past the largest float; scale them down".into()
            ));
        }
        if sum <= 0.0 {
            return Err(bad("weights sum to zero".into()));
        }
        Ok(sum)
    }

    /// Number of categories.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no categories (never: [`Alias::new`] refuses).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The category that 64 uniform random bits select.
    #[inline(always)]
    pub fn sample(&self, bits: u64) -> u32 {
        let n = self.slots.len();
        let i = (((bits >> 32) * n as u64) >> 32) as usize;
        // `i < n` always; `min` lets the optimiser drop the bounds check.
        let (t, alias) = self.slots[i.min(n - 1)];
        // Which of the two is kept is as random as the bits: a branch on
        // it mispredicted often enough to be most of a Zipf draw's cost
        // (`events`' `device.os`, `gen_loop`).
        std::hint::select_unpredictable((bits as u32) < t, i as u32, alias)
    }

    /// The probability of category `i` (its weight over the sum).
    pub fn probability(&self, i: usize) -> f64 {
        self.probabilities[i]
    }
}

/// Slot `i` keeping `i` with probability `p` (to 2^-32), else `alias`.
fn slot(i: usize, p: f64, alias: usize) -> (u32, u32) {
    let t = ((p * 4_294_967_296.0).round() as u64).min(1 << 32);
    match u32::try_from(t) {
        Ok(t) => (t, alias as u32),
        Err(_) => (u32::MAX, i as u32),
    }
}

/// Zipf tables up to this many ranks; larger `n` keep this many in a table
/// (minus one slot for the rest) and draw the rest by rejection-inversion.
pub const ZIPF_TABLE_MAX: u64 = 1 << 16;

/// Ranks `1..=n` with `P(k)` proportional to `k^-s`.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    s: f64,
    /// Ranks `1..=n` (when `n <= ZIPF_TABLE_MAX`), or ranks `1..head` and
    /// a last slot standing for all ranks from `head` on.
    table: Alias,
    tail: Option<Tail>,
}

/// Rejection-inversion over ranks `first..=n` (Hörmann and Derflinger's
/// algorithm, started at `first` instead of 1).
#[derive(Debug, Clone)]
struct Tail {
    first: u64,
    h_x1: f64,
    h_n: f64,
}

impl Zipf {
    /// Checks `s` and `n` as [`Zipf::new`] does, without building its
    /// table.
    ///
    /// # Errors
    /// As [`Zipf::new`].
    pub fn check(s: f64, n: u64) -> Result<(), Error> {
        if !(s > 0.0 && s.is_finite()) {
            return Err(Error::InvalidDistribution(format!(
                "zipf exponent s must be a positive number, not {s}"
            )));
        }
        if n == 0 {
            return Err(Error::InvalidDistribution(
                "zipf needs at least one rank (n >= 1)".into(),
            ));
        }
        Ok(())
    }

    /// The distribution for exponent `s > 0` over `n >= 1` ranks.
    ///
    /// # Errors
    /// [`Error::InvalidDistribution`] when `s` is not a positive finite
    /// number or `n` is zero.
    pub fn new(s: f64, n: u64) -> Result<Self, Error> {
        Self::check(s, n)?;
        if n <= ZIPF_TABLE_MAX {
            let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
            return Ok(Zipf {
                n,
                s,
                table: Alias::new(&weights)?,
                tail: None,
            });
        }
        // Most draws land in the head: one table lookup instead of four
        // logarithms and exponentials (at s = 1.1, n = 10^6, 90% of them).
        let first = ZIPF_TABLE_MAX;
        let mut weights: Vec<f64> = (1..first).map(|k| (k as f64).powf(-s)).collect();
        // The tail's mass by the midpoint rule: the sum of k^-s over
        // `first..=n` is the integral over [first - 1/2, n + 1/2] to a
        // relative error below s(s+1)/(24 first^2), under 1e-9 here.
        weights.push(big_h(n as f64 + 0.5, s) - big_h(first as f64 - 0.5, s));
        Ok(Zipf {
            n,
            s,
            table: Alias::new(&weights)?,
            tail: Some(Tail {
                first,
                h_x1: big_h(first as f64 + 0.5, s) - h(first as f64, s),
                h_n: big_h(n as f64 + 0.5, s),
            }),
        })
    }

    /// Number of ranks.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// A rank in `1..=n`, drawing words from `rng`: one, and for the few
    /// draws past the table's head, one or more further ones.
    #[inline]
    pub fn sample(&self, rng: &mut RowRng) -> u64 {
        let c = u64::from(self.table.sample(rng.next_u64())) + 1;
        match &self.tail {
            Some(t) if c == t.first => self.sample_tail(t, rng),
            _ => c,
        }
    }

    #[inline(never)]
    fn sample_tail(&self, t: &Tail, rng: &mut RowRng) -> u64 {
        let (lo, hi) = (t.first as f64, self.n as f64);
        loop {
            let u = t.h_n + unit(rng.next_u64()) * (t.h_x1 - t.h_n);
            let x = big_h_inv(u, self.s);
            let k = (x + 0.5).floor().clamp(lo, hi);
            if u >= big_h(k + 0.5, self.s) - h(k, self.s) {
                return k as u64;
            }
        }
    }

    /// The exact probability of rank `k`, by direct summation (for tests
    /// and reports; `O(n)`).
    pub fn probability(&self, k: u64) -> f64 {
        if k == 0 || k > self.n {
            return 0.0;
        }
        if self.tail.is_none() {
            return self.table.probability((k - 1) as usize);
        }
        let norm: f64 = (1..=self.n).map(|j| (j as f64).powf(-self.s)).sum();
        (k as f64).powf(-self.s) / norm
    }
}

/// `x^-s`.
fn h(x: f64, s: f64) -> f64 {
    (-s * x.ln()).exp()
}

/// An antiderivative of `h`: `(x^(1-s) - 1) / (1-s)`, or `ln x` at `s = 1`,
/// computed without cancellation near `s = 1`.
fn big_h(x: f64, s: f64) -> f64 {
    let l = x.ln();
    expm1_over_x((1.0 - s) * l) * l
}

/// The inverse of [`big_h`].
fn big_h_inv(y: f64, s: f64) -> f64 {
    let t = (y * (1.0 - s)).max(-1.0);
    (log1p_over_x(t) * y).exp()
}

fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// A uniform number in `[0, 1)` from the top 53 bits of a word.
#[inline(always)]
pub fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Layers of the normal ziggurat, the right edge of its base layer and the
/// area of every layer (Marsaglia and Tsang's 256-layer constants).
const ZIG_LAYERS: usize = 256;
const ZIG_R: f64 = 3.654_152_885_361_009;
const ZIG_V: f64 = 0.004_928_673_233_99;

/// The ziggurat's layer edges `x[0] > x[1] = R > ... > x[256] = 0` and,
/// per layer, the share of its width that lies wholly under the curve.
struct Ziggurat {
    x: [f64; ZIG_LAYERS + 1],
    inner: [f64; ZIG_LAYERS],
}

fn ziggurat() -> &'static Ziggurat {
    static TABLE: std::sync::OnceLock<Ziggurat> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let f = |x: f64| (-0.5 * x * x).exp();
        let mut x = [0.0; ZIG_LAYERS + 1];
        x[0] = ZIG_V / f(ZIG_R);
        x[1] = ZIG_R;
        for i in 2..ZIG_LAYERS {
            x[i] = (-2.0 * (ZIG_V / x[i - 1] + f(x[i - 1])).ln()).sqrt();
        }
        let mut inner = [0.0; ZIG_LAYERS];
        for i in 0..ZIG_LAYERS {
            inner[i] = x[i + 1] / x[i];
        }
        Ziggurat { x, inner }
    })
}

/// A standard normal deviate by the ziggurat method: a word picks one of
/// 256 equal-area layers (its low 8 bits) and a signed position across it
/// (its top 53 bits); a position under the layer above is returned at
/// once (99% of draws), others take one more word for the curve test, and
/// the base layer's overhang draws from the tail beyond `R`.
#[inline]
pub fn normal(r: &mut RowRng) -> f64 {
    let z = ziggurat();
    loop {
        let bits = r.next_u64();
        let i = (bits & 0xff) as usize;
        let u = 2.0 * unit(bits) - 1.0;
        let x = u * z.x[i];
        if u.abs() < z.inner[i] {
            return x;
        }
        if let Some(x) = normal_edge(z, i, x, u, r) {
            return x;
        }
    }
}

/// The ziggurat's slow path: the tail (layer 0) or the curve test.
#[inline(never)]
fn normal_edge(z: &Ziggurat, i: usize, x: f64, u: f64, r: &mut RowRng) -> Option<f64> {
    if i == 0 {
        // Marsaglia's tail method: exponential proposals past R.
        loop {
            let a = -(1.0 - unit(r.next_u64())).ln() / ZIG_R;
            let b = -(1.0 - unit(r.next_u64())).ln();
            if b + b >= a * a {
                return Some(if u < 0.0 { -(ZIG_R + a) } else { ZIG_R + a });
            }
        }
    }
    let (outer, inner) = (z.x[i], z.x[i + 1]);
    // Heights relative to the curve at x: the layer spans f(outer)..f(inner).
    let f0 = (-0.5 * (outer * outer - x * x)).exp();
    let f1 = (-0.5 * (inner * inner - x * x)).exp();
    (f0 + unit(r.next_u64()) * (f1 - f0) < 1.0).then_some(x)
}

/// A categorical distribution over `0..n` sampled by its inverse
/// distribution function: the categories split the 64-bit words in order,
/// category `i` taking a run of them in proportion to its probability, so
/// that words drawn from equal runs give each category its share within
/// one run (an [`Alias`] draw scatters them).
#[derive(Debug, Clone)]
pub struct Cumulative {
    /// Where each category but the last ends, as a word count: category
    /// `i` holds the words from `ends[i - 1]` (0 for the first) up to
    /// `ends[i]`; `2^64` past the last category of positive probability.
    ends: Box<[u128]>,
}

impl Cumulative {
    /// The distribution of `alias`'s categories.
    pub fn of(alias: &Alias) -> Self {
        let n = alias.len();
        let full = 1u128 << 64;
        // Categories after the last of positive probability take no word,
        // whatever the rounding of the sums before them.
        let last = (0..n)
            .rev()
            .find(|&i| alias.probability(i) > 0.0)
            .unwrap_or(0);
        let mut sum = 0.0;
        let ends = (0..n.saturating_sub(1))
            .map(|i| {
                sum += alias.probability(i);
                if i >= last {
                    full
                } else {
                    // Exact for sums of at most 53 significant bits (1/4,
                    // 1/2, ...); a float to integer conversion saturates.
                    ((sum * 18_446_744_073_709_551_616.0).round() as u128).min(full)
                }
            })
            .collect();
        Cumulative { ends }
    }

    /// The category of the word `bits`.
    #[inline]
    pub fn sample(&self, bits: u64) -> u32 {
        self.ends.partition_point(|&e| e <= u128::from(bits)) as u32
    }
}

/// The standard normal quantile function, the inverse of [`normal_cdf`]:
/// the `z` with `P(Z <= z) = p`, for `p` in (0, 1), by Wichura's algorithm
/// AS 241 (PPND16, Applied Statistics 37, 1988): rational functions of
/// degree 7 on three ranges of `p`, with a relative error of about 1e-16.
/// For `p` near 1 prefer `-normal_quantile(1 - p)` computed without the
/// subtraction (see [`normal_of_word`]).
// The coefficients as the paper prints them, 20 digits each, so that they
// read against it (its hash sums of their mantissas agree).
#[allow(clippy::excessive_precision)]
pub fn normal_quantile(p: f64) -> f64 {
    /// `c[0] + c[1] x + ... + c[7] x^7`.
    fn poly(c: &[f64; 8], x: f64) -> f64 {
        c.iter().rev().fold(0.0, |acc, &k| acc * x + k)
    }
    // Near the median: |p - 1/2| <= 0.425.
    const A: [f64; 8] = [
        3.387_132_872_796_366_608,
        1.331_416_678_917_843_774_5e2,
        1.971_590_950_306_551_442_7e3,
        1.373_169_376_550_946_112_5e4,
        4.592_195_393_154_987_145_7e4,
        6.726_577_092_700_870_085_3e4,
        3.343_057_558_358_812_810_5e4,
        2.509_080_928_730_122_672_7e3,
    ];
    const B: [f64; 8] = [
        1.0,
        4.231_333_070_160_091_125_2e1,
        6.871_870_074_920_579_083e2,
        5.394_196_021_424_751_107_7e3,
        2.121_379_430_158_659_586_7e4,
        3.930_789_580_009_271_061e4,
        2.872_908_573_572_194_267_4e4,
        5.226_495_278_852_854_561e3,
    ];
    // The tails, in r = sqrt(-ln(min(p, 1 - p))): up to r = 5 ...
    const C: [f64; 8] = [
        1.423_437_110_749_683_577_34,
        4.630_337_846_156_545_295_9,
        5.769_497_221_460_691_405_5,
        3.647_848_324_763_204_605_04,
        1.270_458_252_452_368_382_58,
        2.417_807_251_774_506_117_7e-1,
        2.272_384_498_926_918_458_33e-2,
        7.745_450_142_783_414_076_4e-4,
    ];
    const D: [f64; 8] = [
        1.0,
        2.053_191_626_637_758_821_87,
        1.676_384_830_183_803_849_4,
        6.897_673_349_851_000_045_5e-1,
        1.481_039_764_274_800_745_9e-1,
        1.519_866_656_361_645_719_66e-2,
        5.475_938_084_995_344_946e-4,
        1.050_750_071_644_416_843_24e-9,
    ];
    // ... and past it (p below about 1.4e-11).
    const E: [f64; 8] = [
        6.657_904_643_501_103_777_2,
        5.463_784_911_164_114_369_9,
        1.784_826_539_917_291_335_8,
        2.965_605_718_285_048_912_3e-1,
        2.653_218_952_657_612_309_3e-2,
        1.242_660_947_388_078_438_6e-3,
        2.711_555_568_743_487_578_15e-5,
        2.010_334_399_292_288_132_65e-7,
    ];
    const F: [f64; 8] = [
        1.0,
        5.998_322_065_558_879_376_9e-1,
        1.369_298_809_227_358_053_1e-1,
        1.487_536_129_085_061_485_25e-2,
        7.868_691_311_456_132_591e-4,
        1.846_318_317_510_054_681_8e-5,
        1.421_511_758_316_445_888_7e-7,
        2.044_263_103_389_939_785_64e-15,
    ];
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180_625 - q * q;
        return q * poly(&A, r) / poly(&B, r);
    }
    let r = (-(if q < 0.0 { p } else { 1.0 - p }).ln()).sqrt();
    let z = if r <= 5.0 {
        poly(&C, r - 1.6) / poly(&D, r - 1.6)
    } else {
        poly(&E, r - 5.0) / poly(&F, r - 5.0)
    };
    if q < 0.0 { -z } else { z }
}

/// The standard normal deviate at the uniform number `(bits + 1/2) /
/// 2^64`, strictly between 0 and 1: [`normal_quantile`], with the upper
/// half taken by symmetry so that both tails keep their precision (the
/// most extreme words give about ±9.3). Non-decreasing in `bits`.
#[inline]
pub fn normal_of_word(bits: u64) -> f64 {
    const TO_UNIT: f64 = 1.0 / 18_446_744_073_709_551_616.0;
    if bits >> 63 == 0 {
        normal_quantile((bits as f64 + 0.5) * TO_UNIT)
    } else {
        -normal_quantile((!bits as f64 + 0.5) * TO_UNIT)
    }
}

/// The standard normal distribution function, P(Z <= x).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The complementary error function, with a fractional error below
/// 1.2e-7 everywhere (a Chebyshev fit of `exp(z^2) erfc(z)`).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKey;

    #[test]
    fn erfc_is_accurate() {
        // Reference values of erfc.
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_266),
            (-1.0, 1.842_700_792_949_715),
            (4.0, 1.541_725_790_028_002e-8),
        ] {
            let got = erfc(x);
            assert!(
                ((got - want) / want).abs() < 2e-7,
                "erfc({x}) = {got}, not {want}"
            );
        }
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
    }

    /// Draws `n` samples of `f` and checks each category's share against
    /// `p` within 5 standard errors (plus a tiny absolute slack).
    fn check_shares(counts: &[u64], p: impl Fn(usize) -> f64) {
        let n: u64 = counts.iter().sum();
        for (i, &c) in counts.iter().enumerate() {
            let want = p(i);
            let se = (want * (1.0 - want) / n as f64).sqrt();
            let got = c as f64 / n as f64;
            assert!(
                (got - want).abs() <= 5.0 * se + 1e-4,
                "category {i}: {got} vs {want} (counts {counts:?})"
            );
        }
    }

    #[test]
    fn alias_matches_weights() {
        for weights in [
            vec![55.0, 35.0, 10.0],
            vec![1.0],
            vec![0.0, 1.0, 0.0, 3.0],
            vec![1e-3, 1.0, 2.5, 0.25, 7.0, 0.0, 1.0],
        ] {
            let a = Alias::new(&weights).unwrap();
            let sum: f64 = weights.iter().sum();
            let k = StreamKey::new(3, 4);
            let mut counts = vec![0u64; weights.len()];
            for r in 0..200_000 {
                counts[a.sample(k.first(r)) as usize] += 1;
            }
            for (i, w) in weights.iter().enumerate() {
                if *w == 0.0 {
                    assert_eq!(counts[i], 0, "{weights:?}");
                }
            }
            check_shares(&counts, |i| weights[i] / sum);
        }
    }

    #[test]
    fn alias_rejects_bad_weights() {
        for bad in [vec![], vec![0.0, 0.0], vec![1.0, -1.0], vec![f64::NAN]] {
            let e = Alias::new(&bad).unwrap_err().to_string();
            assert!(e.contains("weight"), "{e}");
        }
    }

    #[test]
    fn zipf_table_and_rejection_agree_with_exact_probabilities() {
        // Small n (table) and large n (rejection), s below, at and above 1.
        for (s, n) in [(1.0, 10u64), (0.5, 1000), (1.1, 1 << 20), (2.0, 1 << 17)] {
            let z = Zipf::new(s, n).unwrap();
            let k = StreamKey::new(11, n);
            // Shares of the first 8 ranks and of the rest.
            let mut counts = [0u64; 9];
            for r in 0..200_000 {
                let rank = z.sample(&mut k.row(r));
                assert!((1..=n).contains(&rank));
                counts[(rank.min(9) - 1) as usize] += 1;
            }
            let head: Vec<f64> = (1..=8).map(|r| z.probability(r)).collect();
            let tail = 1.0 - head.iter().sum::<f64>();
            check_shares(&counts, |i| if i < 8 { head[i] } else { tail });
        }
    }

    #[test]
    fn zipf_head_and_tail_meet_exactly() {
        // Past the table: ranks just below and just above the table's
        // last rank (where the head ends and rejection-inversion starts),
        // and the whole tail, against exact sums.
        for (s, n) in [(1.1, 1u64 << 20), (0.7, 1 << 18), (2.5, 1 << 17)] {
            let z = Zipf::new(s, n).unwrap();
            let w = |k: u64| (k as f64).powf(-s);
            let norm: f64 = (1..=n).map(w).sum();
            let t = ZIPF_TABLE_MAX;
            let bins = [
                (1, t - 2049),
                (t - 2048, t - 1),
                (t, t + 2047),
                (t + 2048, n),
            ];
            let key = StreamKey::new(2, n);
            let mut counts = [0u64; 4];
            for r in 0..1_000_000 {
                let rank = z.sample(&mut key.row(r));
                counts[bins.iter().position(|b| rank <= b.1).unwrap()] += 1;
            }
            check_shares(&counts, |i| {
                (bins[i].0..=bins[i].1).map(w).sum::<f64>() / norm
            });
        }
    }

    #[test]
    fn zipf_rejects_bad_parameters() {
        assert!(Zipf::new(0.0, 10).is_err());
        assert!(Zipf::new(-1.0, 10).is_err());
        assert!(Zipf::new(f64::NAN, 10).is_err());
        assert!(Zipf::new(1.0, 0).is_err());
        assert!(Zipf::new(1.0, u64::MAX).is_ok());
    }

    #[test]
    fn normal_quantile_matches_reference_values() {
        // Reference quantiles of the standard normal distribution.
        for (p, want) in [
            (0.5, 0.0),
            (0.975, 1.959_963_984_540_054),
            (0.25, -0.674_489_750_196_081_7),
            (0.1, -1.281_551_565_544_600_8),
            (0.001, -3.090_232_306_167_813),
            (1e-10, -6.361_340_902_404_056),
            (1e-300, -37.047_096_299_361_2),
        ] {
            let got = normal_quantile(p);
            assert!(
                (got - want).abs() <= 1e-14 * want.abs().max(1.0),
                "quantile {p}: {got}, not {want}"
            );
            // The distribution function undoes it (to erfc's precision).
            if p > 1e-12 {
                assert!((normal_cdf(got) - p).abs() < 2e-7 * p.max(1e-3), "{p}");
            }
        }
        // Words: both halves, their meeting point, the extremes.
        assert_eq!(normal_of_word(0), -normal_of_word(u64::MAX));
        assert!(normal_of_word(0) < -9.0 && normal_of_word(0).is_finite());
        assert!(normal_of_word((1 << 62) - 1) < 0.0 && normal_of_word(3 << 62) > 0.0);
        assert_eq!(normal_of_word((1 << 63) - 1), -normal_of_word(1 << 63));
        let mut last = f64::NEG_INFINITY;
        for i in 0..=4096u64 {
            let z = normal_of_word(i.wrapping_mul(u64::MAX / 4096));
            assert!(z >= last, "word {i}: {z} after {last}");
            last = z;
        }
    }

    #[test]
    fn cumulative_splits_the_words_in_proportion() {
        let c = Cumulative::of(&Alias::new(&[1.0, 1.0, 2.0]).unwrap());
        assert_eq!(c.sample(0), 0);
        assert_eq!(c.sample((1 << 62) - 1), 0);
        assert_eq!(c.sample(1 << 62), 1);
        assert_eq!(c.sample((1 << 63) - 1), 1);
        assert_eq!(c.sample(1 << 63), 2);
        assert_eq!(c.sample(u64::MAX), 2);
        // Categories of no weight take no word, at either end.
        let c = Cumulative::of(&Alias::new(&[0.0, 3.0, 0.0, 1.0, 0.0]).unwrap());
        assert_eq!(c.sample(0), 1);
        assert_eq!(c.sample((3 << 62) - 1), 1);
        assert_eq!(c.sample(3 << 62), 3);
        assert_eq!(c.sample(u64::MAX), 3);
        let c = Cumulative::of(&Alias::new(&[5.0]).unwrap());
        assert_eq!((c.sample(0), c.sample(u64::MAX)), (0, 0));
    }

    #[test]
    fn ziggurat_layers_are_well_formed() {
        let z = ziggurat();
        assert!(z.x.windows(2).all(|w| w[0] > w[1]), "{:?}", z.x);
        assert!(z.x[ZIG_LAYERS - 1] > 0.1 && z.x[ZIG_LAYERS] == 0.0);
        // Every layer has the same area as the base layer with its tail.
        let f = |x: f64| (-0.5 * x * x).exp();
        for i in 1..ZIG_LAYERS {
            let area = z.x[i] * (f(z.x[i + 1]) - f(z.x[i]));
            assert!((area - ZIG_V).abs() < 1e-9, "layer {i}: {area}");
        }
    }

    #[test]
    fn normal_matches_the_distribution_function() {
        // Shares of 16 bins from -4 to 4 plus both tails (which the
        // ziggurat's base layer draws separately), 2M draws.
        let k = StreamKey::new(8, 13);
        let edges: Vec<f64> = (0..=16).map(|i| -4.0 + 0.5 * f64::from(i)).collect();
        let mut counts = vec![0u64; edges.len() + 1];
        for r in 0..2_000_000 {
            let x = normal(&mut k.row(r));
            counts[edges.partition_point(|&e| e <= x)] += 1;
        }
        check_shares(&counts, |i| {
            let hi = edges.get(i).map_or(1.0, |&e| normal_cdf(e));
            let lo = if i == 0 {
                0.0
            } else {
                normal_cdf(edges[i - 1])
            };
            hi - lo
        });
        // Past the base layer's edge R = 3.654 (both sides): 2.58e-4.
        let far = (0..2_000_000u64)
            .filter(|&r| normal(&mut k.row(r)).abs() > ZIG_R)
            .count() as f64;
        let want = 2.0 * (1.0 - normal_cdf(ZIG_R)) * 2e6;
        assert!((far - want).abs() < 5.0 * want.sqrt(), "{far} vs {want}");
    }

    #[test]
    fn normal_has_unit_moments() {
        let k = StreamKey::new(5, 5);
        let (mut s1, mut s2) = (0.0, 0.0);
        let n = 200_000;
        for r in 0..n {
            let x = normal(&mut k.row(r));
            s1 += x;
            s2 += x * x;
        }
        let mean = s1 / n as f64;
        let var = s2 / n as f64 - mean * mean;
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((var - 1.0).abs() < 0.02, "{var}");
    }
}
