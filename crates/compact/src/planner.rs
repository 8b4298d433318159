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
//!    density min-heap.
//! 4. Short-circuit when even twice the best lower bound, or every upper
//!    bound, is at most the minimum improvement (the first test is a
//!    heuristic: see [`PlannerOptions::lower_bound_short_circuit`]).
//! 5. Pass 2: an exact 0-1 knapsack for each `a` whose upper bound beats the
//!    best so far by the approximation ratio.
//! 6. Scores are penalised by the window width ([`Rules`]).
//! 7. A best score at most the minimum improvement means "do nothing".
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
pub mod fat;
mod knapsack;
mod options;

use bounds::BoundCalculator;
use cdf::{Order, Prepared};
use knapsack::Knapsack;
pub use options::{
    BRUTE_FORCE_MAX, DEFAULT_BUDGET_MB, DEFAULT_SMALL_ROWSET_TRADEOFF, DEFAULT_TARGET_SIZE_BYTES,
    Plan, PlannerOptions, Rules, SUPPORT_ADJUST_2017, SUPPORT_ADJUST_HEAD, size_mb,
};

/// Plans one compaction of `inputs` under `opts`, as Kudu's
/// `BudgetedCompactionPolicy::PickRowSets` would.
///
/// Fewer than two inputs give quality 0 and nothing picked. Time is
/// O(n²) for the window scans plus O(m·B) per window start that reaches
/// pass 2.
///
/// # Panics
///
/// When an input's `max_key` sorts before its `min_key`;
/// [`crate::rowsets::parse_tsv`] and [`crate::dataset::rowsets`] refuse
/// such inputs with an error.
pub fn plan(inputs: &[RowsetInput], opts: &PlannerOptions) -> Plan {
    let prepared = cdf::prepare(inputs, &opts.rules);
    let (quality, picked) = if inputs.len() < 2 {
        (0.0, Vec::new())
    } else {
        run(&prepared.by_min, &prepared.by_max, opts)
    };
    finish(inputs, &prepared, quality, picked)
}

fn finish(inputs: &[RowsetInput], prepared: &Prepared, quality: f64, mut picked: Vec<u32>) -> Plan {
    picked.sort_unstable();
    let picked_mb = picked
        .iter()
        .map(|&i| u64::from(size_mb(inputs[i as usize].size_bytes)))
        .sum();
    Plan {
        quality,
        picked,
        picked_mb,
        average_height: prepared.average_height(),
    }
}

fn budget(opts: &PlannerOptions) -> i64 {
    i64::try_from(opts.budget_mb).unwrap_or(i64::MAX)
}

/// Steps 2–7 over prepared orders; returns (quality, picked ids).
pub(crate) fn run<O: Order + ?Sized>(
    by_min: &O,
    by_max: &O,
    opts: &PlannerOptions,
) -> (f64, Vec<u32>) {
    let n = by_min.len();
    let rules = &opts.rules;
    let max_weight = budget(opts);
    let mut best_value = 0.0f64;
    let mut best_set: Vec<u32> = Vec::new();

    // Pass 1: bounds.
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
            if by_max.cdf_min(j) < union_min {
                continue;
            }
            union_max = union_max.max(by_max.cdf_max(j));
            let width = union_max - union_min;
            calc.add(by_max, j);
            let (lo, up) = calc.bounds(by_max);
            let lower = rules.penalize(lo, width);
            let upper = rules.penalize(up, width);
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
    start = 0;
    for (i, &upper_a) in best_upper.iter().enumerate() {
        let union_min = by_min.cdf_min(i);
        while start < n && by_max.cdf_max(start) < union_min {
            start += 1;
        }
        if upper_a <= best_value * opts.approximation_ratio {
            continue;
        }
        cands.clear();
        let mut total_mb = 0u64;
        for j in start..n {
            if by_max.cdf_min(j) >= union_min {
                cands.push(j as u32);
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
