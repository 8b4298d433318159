//! Kudu's budgeted compaction policy (`BudgetedCompactionPolicy`), over
//! rowsets given as (size, min key, max key).
//!
//! # What it maximises
//!
//! Width is the fraction of the data-weighted key space a rowset covers;
//! the sum of all widths is the average height, the number of rowsets a
//! uniformly random read must consult. Compacting a set rewrites it as
//! non-overlapping output over the union of its ranges, so the gain is
//! Σ width(picked) − width(union). Within a budget of input MB, [`plan`]
//! finds the set with the best penalised gain over the candidate windows
//! Kudu considers, and reports it as the plan's quality.
//!
//! # Steps
//!
//! 1. Sweep the rowset endpoints to build the CDF and two sorted orders
//!    (by `cdf_min`, by `cdf_max`), struct-of-arrays.
//! 2. Each rowset `a` (by `cdf_min`) opens windows extended by every `b`
//!    (by `cdf_max`) with `b.cdf_min >= a.cdf_min`; the scan starts at the
//!    first `b` with `cdf_max >= a.cdf_min` (the skipped prefix can never
//!    qualify).
//! 3. Pass 1: fractional-knapsack lower and upper bounds per window, from a
//!    density min-heap. Window starts are independent, so they are scanned
//!    on all cores; the best lower bound and its set are then taken in
//!    start order, as one sequential scan keeps them.
//! 4. Short-circuit when even twice the best lower bound, or every upper
//!    bound, is at most the minimum improvement (the first test is a
//!    heuristic: see [`PlannerOptions::lower_bound_short_circuit`]).
//! 5. Pass 2: an exact 0-1 knapsack for each `a` whose upper bound beats the
//!    best so far by the approximation ratio.
//! 6. Scores are penalised by the window width ([`Rules`]).
//! 7. A best score at most the minimum improvement means "do nothing".
//!
//! # Pruning: Kudu's plan, without Kudu's quadratic scan
//!
//! Kudu scans every window: Θ(n²) steps (46 M for its YCSB rowsets). Most
//! windows cannot matter. Before the scans, a table bounds every window's
//! score from above by bucket range: the fractional-knapsack optimum of
//! all rowsets inside the window's buckets, less the penalty for the
//! narrowest window ending there (`envelope`). Window starts then run in
//! descending order of their bound; a start whose bound is below the best
//! lower bound found so far is not scanned, and each scan stops at the
//! last bucket whose bound can still reach it. Pass 2 cuts its candidates
//! the same way. Everything skipped scores below a value already found,
//! so it could neither be picked nor change which starts reach pass 2:
//! [`plan`] returns exactly [`plan_reference`]'s plan (Kudu's loops, one
//! thread, every window), which the tests assert on Kudu's cases, the
//! YCSB rowsets and random inputs.
//!
//! # Differences from Kudu
//!
//! A rowset larger than the whole budget is left out of the pass-1 heap:
//! no feasible pick can hold it, and Kudu's "top item alone" lower bound
//! could otherwise pick it over budget. Inputs where no rowset exceeds the
//! budget are unaffected.
//!
//! Pass 2 allocates `m × (B + 1)` bits for `m` candidates and a capacity
//! `B` of at most the budget (capped at the candidates' total MB), as
//! Kudu's solver does.

use crate::Error;
use crate::rowsets::RowsetInput;

mod bounds;
mod cdf;
mod envelope;
pub mod fat;
mod knapsack;
mod options;

use bounds::BoundCalculator;
use cdf::{Order, Prepared};
use envelope::Envelope;
use knapsack::Knapsack;
pub use options::{
    BRUTE_FORCE_MAX, DEFAULT_BUDGET_MB, DEFAULT_SMALL_ROWSET_TRADEOFF, DEFAULT_TARGET_SIZE_BYTES,
    Plan, PlannerOptions, Rules, SUPPORT_ADJUST_2017, SUPPORT_ADJUST_HEAD, size_mb,
};

/// Plans one compaction of `inputs` under `opts`, as Kudu's
/// `BudgetedCompactionPolicy::PickRowSets` would: the same plan as
/// [`plan_reference`], with the windows that cannot change it skipped and
/// the window starts on all cores (rayon's pool).
///
/// Fewer than two inputs give quality 0 and nothing picked. Time is
/// O(n log n) for the CDF plus O(n · h) for its sweep (h the average
/// height), O(n · band) for the bound table, and the window scans: O(n²)
/// at worst, far less when the budget is small next to the key space (on
/// Kudu's YCSB rowsets, about 1/20 of Kudu's instructions). A window start
/// that reaches pass 2 adds O(m·B).
///
/// # Panics
///
/// When an input's `max_key` sorts before its `min_key`;
/// [`crate::rowsets::parse_tsv`] and [`crate::dataset::rowsets`] refuse
/// such inputs with an error.
pub fn plan(inputs: &[RowsetInput], opts: &PlannerOptions) -> Plan {
    plan_with(inputs, opts, Scan::Pruned)
}

/// [`plan`] computed as Kudu computes it: every window, window starts in
/// order on one thread. The plan is identical; this is the reference that
/// tests and benchmarks hold [`plan`] against.
pub fn plan_reference(inputs: &[RowsetInput], opts: &PlannerOptions) -> Plan {
    plan_with(inputs, opts, Scan::Kudu)
}

fn plan_with(inputs: &[RowsetInput], opts: &PlannerOptions, scan: Scan) -> Plan {
    let prepared = cdf::prepare(inputs, &opts.rules);
    let (quality, picked) = if inputs.len() < 2 {
        (0.0, Vec::new())
    } else {
        run(&prepared.by_min, &prepared.by_max, opts, scan)
    };
    finish(inputs, &prepared, quality, picked)
}

fn finish(inputs: &[RowsetInput], prepared: &Prepared, quality: f64, mut picked: Vec<u32>) -> Plan {
    picked.sort_unstable();
    let picked_mb = picked
        .iter()
        .map(|&i| u64::from(size_mb(inputs[i as usize].size_bytes)))
        .sum();
    let picked_bytes = picked
        .iter()
        .map(|&i| inputs[i as usize].size_bytes)
        .fold(0u64, u64::saturating_add);
    Plan {
        quality,
        picked,
        picked_mb,
        picked_bytes,
        average_height: prepared.average_height(),
    }
}

fn budget(opts: &PlannerOptions) -> i64 {
    i64::try_from(opts.budget_mb).unwrap_or(i64::MAX)
}

/// How [`run`] scans the windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// Every window, window starts in order on one thread: Kudu's loops.
    Kudu,
    /// Windows that cannot change the plan skipped by their bound
    /// (`envelope`), window starts on all cores; the same plan.
    Pruned,
}

/// Steps 2–7 over prepared orders; returns (quality, picked ids).
pub(crate) fn run<O: Order + ?Sized + Sync>(
    by_min: &O,
    by_max: &O,
    opts: &PlannerOptions,
    scan: Scan,
) -> (f64, Vec<u32>) {
    let n = by_min.len();
    let rules = &opts.rules;
    let max_weight = budget(opts);
    let envelope =
        (scan == Scan::Pruned && max_weight > 0).then(|| Envelope::new(by_max, rules, max_weight));

    // Pass 1: bounds.
    let Pass1 {
        best_upper,
        mut best_value,
        mut best_set,
    } = match &envelope {
        Some(env) => pass1_pruned(
            by_min,
            by_max,
            rules,
            max_weight,
            env,
            opts.approximation_ratio,
        ),
        None => pass1_sequential(by_min, by_max, rules, max_weight),
    };

    // Short-circuit.
    let max_upper = best_upper.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lower_says_stop =
        opts.lower_bound_short_circuit && best_value * 2.0 <= opts.min_improvement;
    if lower_says_stop || max_upper <= opts.min_improvement {
        return (0.0, Vec::new());
    }

    // Pass 2: exact knapsack where the bound allows.
    let mut solver = Knapsack::default();
    let mut cands: Vec<u32> = Vec::new();
    let mut chosen: Vec<usize> = Vec::new();
    let mut start = 0usize;
    for (i, &upper_a) in best_upper.iter().enumerate() {
        let union_min = by_min.cdf_min(i);
        while start < n && by_max.cdf_max(start) < union_min {
            start += 1;
        }
        if upper_a <= best_value * opts.approximation_ratio {
            continue;
        }
        // Windows ending past `end` score below the best so far, so they
        // cannot replace it; the capacity stays that of all candidates
        // (it decides which of equal-valued subsets the solver keeps).
        let end = match &envelope {
            Some(env) => match env.scan_end(union_min, by_min.cdf_max(i), best_value) {
                Some(end) => end,
                None => continue,
            },
            None => n,
        };
        cands.clear();
        let mut total_mb = 0u64;
        for j in start..n {
            if by_max.cdf_min(j) >= union_min {
                if j < end {
                    cands.push(j as u32);
                }
                total_mb += u64::from(by_max.size_mb(j));
            }
        }
        if cands.is_empty() {
            continue;
        }
        let cap = usize::try_from(total_mb.min(max_weight.max(0) as u64)).unwrap_or(usize::MAX);
        solver.reset(cap, cands.len());
        chosen.clear();
        let mut union_max = by_min.cdf_max(i);
        for &j in &cands {
            let j = j as usize;
            solver.process(by_max.size_mb(j), by_max.value(j));
            let (w, v) = solver.solution();
            union_max = union_max.max(by_max.cdf_max(j));
            let score = rules.penalize(v, union_max - union_min);
            if score > best_value {
                solver.trace(w, &mut chosen);
                best_value = score;
            }
        }
        if !chosen.is_empty() {
            best_set.clear();
            best_set.extend(chosen.iter().map(|&k| by_max.id(cands[k] as usize)));
        }
    }

    if best_value <= opts.min_improvement {
        return (0.0, Vec::new());
    }
    (best_value, best_set)
}

/// What pass 1 leaves: each window start's best (penalised) upper bound,
/// and the best penalised lower bound with the set behind it.
#[derive(Debug, PartialEq)]
struct Pass1 {
    best_upper: Vec<f64>,
    best_value: f64,
    best_set: Vec<u32>,
}

/// The first position of `by_max` (ascending `cdf_max`) whose `cdf_max`
/// is at least `union_min`: the rowsets before it end before the window
/// starts.
fn first_ending_at_or_after<O: Order + ?Sized>(by_max: &O, union_min: f64) -> usize {
    let (mut lo, mut hi) = (0, by_max.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if by_max.cdf_max(mid) < union_min {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Extends the window that starts at `union_min` (and reaches
/// `union_max` so far) by item `j` of `by_max`: its penalised (lower,
/// upper) bounds, or `None` for an item that starts before the window.
#[inline(always)]
fn extend_window<O: Order + ?Sized>(
    by_max: &O,
    rules: &Rules,
    calc: &mut BoundCalculator,
    j: usize,
    union_min: f64,
    union_max: &mut f64,
) -> Option<(f64, f64)> {
    if by_max.cdf_min(j) < union_min {
        return None;
    }
    *union_max = union_max.max(by_max.cdf_max(j));
    let width = *union_max - union_min;
    calc.add(by_max, j);
    let (lo, up) = calc.bounds(by_max);
    Some((rules.penalize(lo, width), rules.penalize(up, width)))
}

/// Pass 1 for window start `i` of `by_min`, scanning `by_max` from
/// `start` up to (not including) `end`: the best penalised upper bound,
/// and the first window end whose penalised lower bound is the start's
/// highest, when that is above 0.
fn scan_start<O: Order + ?Sized>(
    by_min: &O,
    by_max: &O,
    rules: &Rules,
    calc: &mut BoundCalculator,
    i: usize,
    start: usize,
    end: usize,
) -> (f64, Option<(f64, usize)>) {
    let union_min = by_min.cdf_min(i);
    let mut union_max = by_min.cdf_max(i);
    calc.clear();
    let mut upper_a = 0.0f64;
    let (mut best_value, mut best_end) = (0.0f64, usize::MAX);
    for j in start..end {
        let Some((lower, upper)) = extend_window(by_max, rules, calc, j, union_min, &mut union_max)
        else {
            continue;
        };
        if upper >= upper_a {
            upper_a = upper;
        }
        if lower > best_value {
            (best_value, best_end) = (lower, j);
        }
    }
    (
        upper_a,
        (best_end != usize::MAX).then_some((best_value, best_end)),
    )
}

/// One window start's pass 1: its best upper bound, its best lower bound
/// above 0 and the window end that first reached it, and where its scan
/// of the by-max order began.
struct StartScan {
    upper: f64,
    best: Option<(f64, usize)>,
    start: usize,
}

/// Pass 1 with every window start scanned on its own thread's bound
/// calculator, skipping what cannot matter. For a budget above 0 it leaves
/// the best lower bound and its set exactly as [`pass1_sequential`] does,
/// and upper bounds that send the same starts to pass 2 and give the same
/// short-circuit:
///
/// * A start's scan depends only on the start (the calculator's remembered
///   top density is used only once the budget is filled, by then by this
///   start's own items). The best lower bound is the first start's
///   highest that passes every earlier one, as the sequential scan keeps
///   it; the set behind it is rebuilt by replaying that one start up to
///   its window end.
/// * Starts are scanned in descending order of their envelope bound, and
///   the best lower bound found so far, `p`, grows as they run. A start
///   whose bound is below `t = p · min(ratio, 1)` is not scanned, and a
///   scan stops where every later window's bound is below `t`. What is
///   skipped scores below `t`: it holds no lower bound that could win (the
///   winner's is at least `p`), and an upper bound below `t` can neither
///   send a start to pass 2 (the best score there is at least `p`) nor
///   lift the maximum past one that was kept (the start that found `p`
///   has an upper bound of at least `p`). A skipped start reports the
///   upper bound 0, where every scan begins.
fn pass1_pruned<O: Order + ?Sized + Sync>(
    by_min: &O,
    by_max: &O,
    rules: &Rules,
    max_weight: i64,
    env: &Envelope,
    ratio: f64,
) -> Pass1 {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let n = by_min.len();
    let bounds: Vec<f64> = (0..n)
        .into_par_iter()
        .with_min_len(256)
        .map(|i| env.start_bound(by_min.cdf_min(i), by_min.cdf_max(i)))
        .collect();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_unstable_by(|&a, &b| {
        bounds[b as usize]
            .total_cmp(&bounds[a as usize])
            .then(a.cmp(&b))
    });
    // `ratio` below 1 (or NaN) shrinks the threshold with it, so what is
    // skipped also stays below the pass-2 test.
    let scale = if ratio >= 1.0 { 1.0 } else { ratio.max(0.0) };
    // The best lower bound found so far (never negative, so its bits order
    // as the values do).
    let found = AtomicU64::new(0.0f64.to_bits());
    let scanned: Vec<(u32, StartScan)> = order
        .par_iter()
        .with_min_len(16)
        .map_init(
            || BoundCalculator::new(max_weight),
            |calc, &i| {
                let iu = i as usize;
                let (union_min, start_max) = (by_min.cdf_min(iu), by_min.cdf_max(iu));
                let start = first_ending_at_or_after(by_max, union_min);
                let threshold = f64::from_bits(found.load(Relaxed)) * scale;
                let end = if bounds[iu] < threshold - envelope::MARGIN {
                    None
                } else {
                    env.scan_end(union_min, start_max, threshold)
                };
                let Some(end) = end else {
                    let skipped = StartScan {
                        upper: 0.0,
                        best: None,
                        start,
                    };
                    return (i, skipped);
                };
                let (upper, best) = scan_start(by_min, by_max, rules, calc, iu, start, end);
                if let Some((value, _)) = best {
                    found.fetch_max(value.to_bits(), Relaxed);
                }
                (i, StartScan { upper, best, start })
            },
        )
        .collect();
    // Back in start order: every start once, so sorting by it suffices.
    let mut scanned = scanned;
    scanned.sort_unstable_by_key(|&(i, _)| i);
    let scans: Vec<StartScan> = scanned.into_iter().map(|(_, scan)| scan).collect();
    let mut best_value = 0.0f64;
    let mut winner: Option<(usize, usize, usize)> = None;
    for (i, scan) in scans.iter().enumerate() {
        if let Some((value, j)) = scan.best
            && value > best_value
        {
            best_value = value;
            winner = Some((i, scan.start, j));
        }
    }
    let mut best_set = Vec::new();
    if let Some((i, start, j)) = winner {
        let mut calc = BoundCalculator::new(max_weight);
        scan_start(by_min, by_max, rules, &mut calc, i, start, j + 1);
        calc.lower_solution(by_max, &mut best_set);
    }
    Pass1 {
        best_upper: scans.iter().map(|s| s.upper).collect(),
        best_value,
        best_set,
    }
}

/// Pass 1 as Kudu runs it: the window starts in order on one calculator.
fn pass1_sequential<O: Order + ?Sized>(
    by_min: &O,
    by_max: &O,
    rules: &Rules,
    max_weight: i64,
) -> Pass1 {
    let n = by_min.len();
    let mut best_value = 0.0f64;
    let mut best_set: Vec<u32> = Vec::new();
    let mut best_upper: Vec<f64> = Vec::with_capacity(n);
    let mut calc = BoundCalculator::new(max_weight);
    let mut start = 0usize;
    for i in 0..n {
        let union_min = by_min.cdf_min(i);
        let mut union_max = by_min.cdf_max(i);
        while start < n && by_max.cdf_max(start) < union_min {
            start += 1;
        }
        calc.clear();
        let mut upper_a = 0.0f64;
        for j in start..n {
            let Some((lower, upper)) =
                extend_window(by_max, rules, &mut calc, j, union_min, &mut union_max)
            else {
                continue;
            };
            if upper >= upper_a {
                upper_a = upper;
            }
            if lower > best_value {
                calc.lower_solution(by_max, &mut best_set);
                best_value = lower;
            }
        }
        best_upper.push(upper_a);
    }
    Pass1 {
        best_upper,
        best_value,
        best_set,
    }
}

/// Exhaustive reference for [`plan`]: for every window Kudu's exact pass
/// can score (a start `a`, and a prefix of the rowsets `b` with
/// `b.cdf_min >= a.cdf_min` in `cdf_max` order), tries every subset of the
/// prefix within the budget, scored with that window's union width; the
/// best score above the minimum improvement wins. With
/// `approximation_ratio` 1.0, `lower_bound_short_circuit` false and the
/// 2017 rules, [`plan`] reaches the same quality. (Under the KUDU-1400
/// rules the penalty is not monotone in the picked value, so pass-1 upper
/// bounds are not strict bounds on the score.)
///
/// # Errors
///
/// [`Error::TooManyForBruteForce`] for more than [`BRUTE_FORCE_MAX`]
/// inputs: the work is exponential.
pub fn plan_brute_force(inputs: &[RowsetInput], opts: &PlannerOptions) -> Result<Plan, Error> {
    let n = inputs.len();
    if n > BRUTE_FORCE_MAX {
        return Err(Error::TooManyForBruteForce {
            n,
            max: BRUTE_FORCE_MAX,
        });
    }
    let p = cdf::prepare(inputs, &opts.rules);
    let (by_min, by_max) = (&p.by_min, &p.by_max);
    let budget = opts.budget_mb;
    let mut best_value = 0.0f64;
    let mut best_set: Vec<u32> = Vec::new();
    if n >= 2 {
        for i in 0..n {
            let union_min = by_min.cdf_min[i];
            let cands: Vec<usize> = (0..n).filter(|&j| by_max.cdf_min[j] >= union_min).collect();
            let mut prefix_max = Vec::with_capacity(cands.len());
            let mut um = by_min.cdf_max[i];
            for &j in &cands {
                um = um.max(by_max.cdf_max[j]);
                prefix_max.push(um);
            }
            for mask in 1u32..(1u32 << cands.len()) {
                let mut weight = 0u64;
                let mut value = 0.0f64;
                for (k, &j) in cands.iter().enumerate() {
                    if mask & (1 << k) != 0 {
                        weight += u64::from(by_max.size_mb[j]);
                        value += by_max.value[j];
                    }
                }
                if weight > budget {
                    continue;
                }
                let last = (31 - mask.leading_zeros()) as usize;
                let score = opts.rules.penalize(value, prefix_max[last] - union_min);
                if score > best_value {
                    best_value = score;
                    best_set = cands
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| mask & (1 << k) != 0)
                        .map(|(_, &j)| by_max.id[j])
                        .collect();
                }
            }
        }
    }
    if best_value <= opts.min_improvement {
        best_value = 0.0;
        best_set.clear();
    }
    Ok(finish(inputs, &p, best_value, best_set))
}

/// Data-weighted average height of `inputs` (KUDU-2056), without planning.
pub fn average_height(inputs: &[RowsetInput]) -> f64 {
    cdf::prepare(inputs, &Rules::Kudu2017).average_height()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rowsets::RowsetInput;

    /// Random rowsets: keys `%010d` of draws below `span`, 1 to `max_mb` MB.
    fn random_inputs(seed: u64, n: usize, span: u64, max_mb: u64) -> Vec<RowsetInput> {
        let mut r = strata_gen::rng::RowRng::seeded(seed);
        (0..n)
            .map(|_| {
                let (a, b) = (r.next_below(span), r.next_below(span));
                let mb = 1 + r.next_below(max_mb);
                RowsetInput::new(
                    mb << 20,
                    format!("{:010}", a.min(b)),
                    format!("{:010}", a.max(b)),
                )
            })
            .collect()
    }

    /// The pruned parallel pass 1 leaves what Kudu's sequential one does:
    /// the best lower bound and its set exactly, and every start's upper
    /// bound either exactly or, for a start or windows skipped, at most
    /// the true one and only where the true one is below the threshold
    /// (so pass 2 and the short-circuit decide alike). Random inputs, both
    /// rules, budgets from 1 MB, ratios below and above 1, and the YCSB
    /// rowsets when the shared data is there.
    #[test]
    fn pruned_pass1_equals_the_sequential_one() {
        let mut cases: Vec<(Vec<RowsetInput>, &[i64])> = (0..40u64)
            .map(|seed| {
                let n = 2 + (seed as usize * 37) % 400;
                let span = [50, 5_000, 1_000_000][seed as usize % 3];
                // Every fourth case doubles each rowset and gives them all
                // one size: equal bounds from different starts and window
                // ends, whose ties must go as the sequential scan sends
                // them.
                let mut inputs = random_inputs(seed, n, span, if seed % 4 == 0 { 1 } else { 40 });
                if seed % 4 == 0 {
                    inputs.extend(inputs.clone());
                }
                (inputs, &[1i64, 7, 128][..])
            })
            .collect();
        let ycsb = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/kudu-ycsb-rowsets.tsv"
        );
        match std::fs::read_to_string(ycsb) {
            Ok(text) => cases.push((
                crate::rowsets::parse_tsv(&text).expect("YCSB parses"),
                &[128, 1024][..],
            )),
            Err(_) => eprintln!("YCSB rowsets not found at {ycsb}: random inputs only"),
        }
        let (mut picked, mut skipped) = (0, 0);
        for (c, (inputs, budgets)) in cases.iter().enumerate() {
            for rules in [Rules::Kudu2017, Rules::head()] {
                let p = cdf::prepare(inputs, &rules);
                for &budget in *budgets {
                    let env = Envelope::new(&p.by_max, &rules, budget);
                    let seq = pass1_sequential(&p.by_min, &p.by_max, &rules, budget);
                    for ratio in [1.05, 0.9] {
                        let par = pass1_pruned(&p.by_min, &p.by_max, &rules, budget, &env, ratio);
                        let at = format!("case {c}, budget {budget}, ratio {ratio}");
                        assert_eq!(par.best_value.to_bits(), seq.best_value.to_bits(), "{at}");
                        assert_eq!(par.best_set, seq.best_set, "{at}");
                        let threshold = seq.best_value * f64::min(ratio, 1.0);
                        for (i, (&got, &want)) in
                            par.best_upper.iter().zip(&seq.best_upper).enumerate()
                        {
                            if got != want {
                                assert!(
                                    got <= want && want < threshold,
                                    "{at}, start {i}: {got} vs {want}"
                                );
                                skipped += 1;
                            }
                        }
                    }
                    picked += usize::from(!seq.best_set.is_empty());
                }
            }
        }
        assert!(picked > 60, "too few cases find a set: {picked}");
        assert!(
            skipped > 1000,
            "too few starts skipped to test the pruning: {skipped}"
        );
    }
}
