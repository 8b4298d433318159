//! Compaction for strata: Kudu's budgeted compaction policy over a dataset
//! of sorted files, and (to come) the merge that executes a plan.
//!
//! # Data flow
//!
//! rowsets (size, min key, max key) -> [`planner`]: data-weighted key-space
//! CDF -> candidate windows -> fractional-knapsack bounds -> exact knapsack
//! where the bound allows -> a [`planner::Plan`] (picked inputs, quality).
//!
//! # Guarantee
//!
//! The picked inputs never exceed the budget, and the quality is the
//! objective exactly as Kudu reports it.

pub mod dataset;
mod error;
pub mod merge;
pub mod planner;
pub mod rowsets;

pub use error::Error;
