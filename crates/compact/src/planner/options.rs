//! The planner's settings (Kudu's rules and defaults) and its answer.

use serde::{Deserialize, Serialize};

/// Wide-window penalty factor of the 2017 rules (`kSupportAdjust`).
pub const SUPPORT_ADJUST_2017: f64 = 1.01;
/// Wide-window penalty factor of the KUDU-1400 rules (`kSupportAdjust`).
pub const SUPPORT_ADJUST_HEAD: f64 = 1.003;
/// Kudu's default `compaction_small_rowset_tradeoff` (γ).
pub const DEFAULT_SMALL_ROWSET_TRADEOFF: f64 = 0.009;
/// Kudu's default `budgeted_compaction_target_rowset_size`: 32 MiB.
pub const DEFAULT_TARGET_SIZE_BYTES: u64 = 32 * 1024 * 1024;
/// Kudu's default budget before KUDU-3734 (the era of the 2017 rules), MB.
pub const DEFAULT_BUDGET_MB: u64 = 128;
/// The most rowsets [`super::plan_brute_force`] accepts.
pub const BRUTE_FORCE_MAX: usize = 16;

/// How a rowset's value and a window's penalty are defined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub enum Rules {
    /// Kudu as of 2017 (`9dd64e1b`): value = width, density = width /
    /// size_mb, score = Σ value − 1.01 × union width. The default.
    #[default]
    Kudu2017,
    /// Kudu after KUDU-1400 (`f65211ba4`) and KUDU-2704: value = width +
    /// γ · max(0, 1 − size_bytes / target), density = value / size_mb;
    /// score = Σ value − union width when Σ value ≤ union width, else
    /// Σ value − 1.003 × union width.
    Head {
        /// γ, Kudu's `compaction_small_rowset_tradeoff` (0.009); keep it
        /// below the minimum improvement.
        small_rowset_tradeoff: f64,
        /// Kudu's `budgeted_compaction_target_rowset_size` (32 MiB).
        target_size_bytes: u64,
    },
}

impl Rules {
    /// The KUDU-1400 rules with Kudu's default γ and target size.
    pub fn head() -> Self {
        Rules::Head {
            small_rowset_tradeoff: DEFAULT_SMALL_ROWSET_TRADEOFF,
            target_size_bytes: DEFAULT_TARGET_SIZE_BYTES,
        }
    }

    /// A rowset's knapsack value given its normalised width.
    pub(crate) fn value(&self, width: f64, size_bytes: u64) -> f64 {
        match *self {
            Rules::Kudu2017 => width,
            Rules::Head {
                small_rowset_tradeoff,
                target_size_bytes,
            } => {
                let size_score = (1.0 - size_bytes as f64 / target_size_bytes as f64).max(0.0);
                width + small_rowset_tradeoff * size_score
            }
        }
    }

    /// `c` such that [`penalize`](Self::penalize)`(v, w) <= v - c·w` for
    /// every value `v` and width `w >= 0`: the bound the planner prunes
    /// with (see `envelope`).
    pub(super) fn penalty_slope(&self) -> f64 {
        match self {
            Rules::Kudu2017 => SUPPORT_ADJUST_2017,
            // v - w when v <= w, else v - 1.003·w < v - w.
            Rules::Head { .. } => 1.0,
        }
    }

    /// A window's score: the picked value less the penalty for its width.
    pub(super) fn penalize(&self, sum_value: f64, union_width: f64) -> f64 {
        match self {
            Rules::Kudu2017 => sum_value - SUPPORT_ADJUST_2017 * union_width,
            Rules::Head { .. } => {
                if sum_value <= union_width {
                    sum_value - union_width
                } else {
                    sum_value - SUPPORT_ADJUST_HEAD * union_width
                }
            }
        }
    }
}

/// Planner settings; [`Default`] gives Kudu's defaults with the 2017 rules.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlannerOptions {
    /// Most input MB one compaction may read (knapsack capacity).
    pub budget_mb: u64,
    /// Pass 2 runs for a window start only if its upper bound exceeds the
    /// best score so far times this; 1.0 makes the result exact. Default
    /// `1.05f32` as f64 (1.0499999523).
    pub approximation_ratio: f64,
    /// Scores at or below this mean "do nothing". Default `0.01f32` as f64
    /// (0.0099999998).
    pub min_improvement: f64,
    /// Value and penalty definitions.
    pub rules: Rules,
    /// Kudu's step-4 test "twice the best pass-1 score is at most the
    /// minimum improvement: stop". Default true, as in Kudu. It is a
    /// heuristic: the 2-approximation bounds the knapsack value, not the
    /// penalised score, so it can give up on windows worth compacting
    /// (seen on small random inputs). False keeps only the sound test on
    /// the upper bounds; with `approximation_ratio` 1.0 the plan is then
    /// the exact optimum over Kudu's windows ([`super::plan_brute_force`]).
    pub lower_bound_short_circuit: bool,
}

impl Default for PlannerOptions {
    fn default() -> Self {
        Self {
            budget_mb: DEFAULT_BUDGET_MB,
            approximation_ratio: f64::from(1.05f32),
            min_improvement: f64::from(0.01f32),
            rules: Rules::Kudu2017,
            lower_bound_short_circuit: true,
        }
    }
}

impl PlannerOptions {
    /// The defaults with another budget.
    pub fn with_budget(budget_mb: u64) -> Self {
        Self {
            budget_mb,
            ..Self::default()
        }
    }
}

/// The planner's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The picked set's score (drop in average height less the window
    /// penalty); 0 when nothing is worth compacting.
    pub quality: f64,
    /// Input indices (0-based, ascending) to compact together; empty when
    /// `quality` is 0.
    pub picked: Vec<u32>,
    /// Σ size_mb of the picked inputs (each its bytes in MiB rounded up,
    /// at least 1: the knapsack's weights); never more than the budget.
    pub picked_mb: u64,
    /// Σ bytes of the picked inputs; never more than the budget in bytes
    /// (`budget_mb` MiB), as the weights round up.
    #[serde(default)]
    pub picked_bytes: u64,
    /// Data-weighted average height of all inputs before compaction
    /// (KUDU-2056: weighted height sum / total width); 0 when no input has
    /// width.
    pub average_height: f64,
}

/// A rowset's knapsack weight: its bytes in whole MiB, rounded up, at
/// least 1. Rounding up keeps the picked bytes within the budget; on
/// Kudu's inputs (whole MiB, or under 1 MiB) it equals Kudu's weight,
/// which rounds down to at least 1.
pub fn size_mb(size_bytes: u64) -> u32 {
    u32::try_from(size_bytes.div_ceil(1 << 20))
        .unwrap_or(u32::MAX)
        .max(1)
}
