//! Upper bounds on every window's score, coarse enough to compute for all
//! windows at once, used to skip the windows that cannot change the plan.
//!
//! The key space `[0, 1]` (CDF) is cut into `B` equal buckets. For a
//! window of the scan (start `a`, union `[union_min, union_max]`) every
//! item it holds starts at or after `union_min` and ends at or before
//! `union_max`, so it lies in the bucket range from `bucket(union_min)` to
//! `bucket(union_max)`. `lp[s][e]`, the fractional-knapsack optimum of all
//! items inside buckets `s..=e`, therefore bounds the window's knapsack
//! value (upper bound, lower bound and exact optimum alike), and the
//! window is at least as wide as `max(a's width, e / B - union_min)`.
//! Both rules' penalties satisfy `penalize(v, w) <= v - c·w` (`c` = 1.01
//! for 2017, 1 for KUDU-1400), increasing in `v`, so
//! `lp[s][e] - c·width` bounds the penalised score of every window whose
//! union ends in bucket `e`.
//!
//! A window start whose bound is below the best score already found (less
//! a margin for rounding) cannot give a better lower bound, nor an upper
//! bound that would send it to pass 2; the windows that end in buckets
//! past the last useful one are cut from its scan. That is exact: the
//! plan is the one the full scan gives.

use rayon::prelude::*;

use super::bounds::BoundCalculator;
use super::cdf::Order;
use super::options::Rules;

/// Slack for rounding: the bounds and the scans sum the same values in
/// different orders, so a bound may sit this much below a score it
/// covers. Values are sums of at most a few thousand widths in `[0, 1]`.
pub(super) const MARGIN: f64 = 1e-7;

/// Per-bucket-range fractional-knapsack optima over one by-max order.
#[derive(Debug)]
pub(super) struct Envelope {
    buckets: usize,
    /// How many end buckets each start bucket keeps: a window reaching
    /// `band` or more buckets past its start bucket scores below 0
    /// whatever it holds, so only the band is stored.
    band: usize,
    /// `lp[s * band + d]`: the optimum over items inside buckets
    /// `s..=s + d`.
    lp: Vec<f64>,
    /// `end_pos[e]`: the first by-max position whose `cdf_max` lies past
    /// bucket `e`.
    end_pos: Vec<usize>,
    /// The slope `c` of the penalty bound.
    slope: f64,
}

/// The most table cells (8 bytes each) an envelope keeps.
const MAX_CELLS: usize = 1 << 19;
/// The most end buckets per start bucket: building the table costs about
/// `n · band` steps, and past this, finer buckets cost more to build than
/// they save in the scans (YCSB at 512 and 1024 MB, cachegrind).
const MAX_BAND: usize = 256;

impl Envelope {
    /// Builds the table for `by_max` under `rules` and a budget of
    /// `max_weight` MB. Costs about `n · band` bound-calculator steps.
    pub(super) fn new<O: Order + ?Sized + Sync>(
        by_max: &O,
        rules: &Rules,
        max_weight: i64,
    ) -> Self {
        let n = by_max.len();
        let slope = rules.penalty_slope();
        let mut calc = BoundCalculator::new(max_weight);
        for j in 0..n {
            calc.add(by_max, j);
        }
        // No window wider than `reach` scores at least 0: its value is at
        // most the optimum over all items.
        let reach = (calc.bounds(by_max).1 + 2.0 * MARGIN) / slope;
        // About 16 endpoints per bucket, fewer buckets when the band
        // would not fit the cell budget.
        let band_for = |b: usize| {
            ((reach * b as f64).ceil() as usize)
                .saturating_add(2)
                .min(b)
        };
        let mut buckets = (n / 16).clamp(16, 1 << 16);
        while buckets > 16
            && (buckets.saturating_mul(band_for(buckets)) > MAX_CELLS
                || band_for(buckets) > MAX_BAND)
        {
            buckets = buckets * 3 / 4;
        }
        let band = band_for(buckets);
        let bucket = |x: f64| bucket_of(x, buckets);
        let mut end_pos = vec![0usize; buckets];
        let mut j = 0;
        for (e, end) in end_pos.iter_mut().enumerate() {
            while j < n && bucket(by_max.cdf_max(j)) <= e {
                j += 1;
            }
            *end = j;
        }
        let mut lp = vec![0.0f64; buckets * band];
        lp.par_chunks_mut(band).enumerate().for_each_init(
            || BoundCalculator::new(max_weight),
            |calc, (s, row)| {
                calc.clear();
                let mut j = if s == 0 { 0 } else { end_pos[s - 1] };
                for e in s..(s + band).min(buckets) {
                    while j < end_pos[e] {
                        if bucket(by_max.cdf_min(j)) >= s {
                            calc.add(by_max, j);
                        }
                        j += 1;
                    }
                    row[e - s] = calc.bounds(by_max).1;
                }
            },
        );
        Self {
            buckets,
            band,
            lp,
            end_pos,
            slope,
        }
    }

    /// The window ends a start spanning `[union_min, start_max]` can
    /// have: (end bucket, bound on the window's score) for each bucket from
    /// the start's own to the last in its band, in order.
    fn ends(&self, union_min: f64, start_max: f64) -> impl Iterator<Item = (usize, f64)> + '_ {
        let (b, band) = (self.buckets, self.band);
        let s = bucket_of(union_min, b);
        let first = bucket_of(start_max, b);
        let last = (s + band).min(b);
        let row = &self.lp[s * band..(s + 1) * band];
        let start_width = start_max - union_min;
        (first..last).map(move |e| {
            let width = start_width.max(e as f64 / b as f64 - union_min);
            (e, row[e - s] - self.slope * width)
        })
    }

    /// The by-max position to scan to (exclusive) for the windows of the
    /// start spanning `[union_min, start_max]` that may score at least
    /// `threshold` (never negative): every window ending past it scores
    /// below `threshold`. `None` when no window of the start can.
    pub(super) fn scan_end(&self, union_min: f64, start_max: f64, threshold: f64) -> Option<usize> {
        let floor = threshold.max(0.0) - MARGIN;
        self.ends(union_min, start_max)
            .filter(|&(_, bound)| bound >= floor)
            .last()
            .map(|(e, _)| self.end_pos[e])
    }

    /// An upper bound on the penalised score of every window of the start
    /// spanning `[union_min, start_max]` that can score 0 or more; below 0
    /// when none can.
    pub(super) fn start_bound(&self, union_min: f64, start_max: f64) -> f64 {
        self.ends(union_min, start_max)
            .map(|(_, bound)| bound)
            .fold(-1.0, f64::max)
    }
}

/// The bucket of CDF value `x` (clamped to `0..buckets`).
fn bucket_of(x: f64, buckets: usize) -> usize {
    ((x * buckets as f64) as usize).min(buckets - 1)
}
