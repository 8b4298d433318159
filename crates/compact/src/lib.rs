//! Compaction for strata: Kudu's budgeted compaction policy over a dataset
//! of sorted Parquet files, and the crash-safe merge that executes a plan.
//!
//! # Data flow
//!
//! [`storage::manifest::Manifest`] (each file's bytes and strata-row key bounds) ->
//! [`dataset::rowsets`] -> [`planner`]: data-weighted key-space CDF ->
//! candidate windows -> fractional-knapsack bounds -> exact knapsack where
//! the bound allows -> a [`planner::Plan`] (picked files, quality) ->
//! [`dataset::execute`]: [`strata_sort::merge`] of the picked files by key
//! (in the manifest's key order), on every core (one key range per thread)
//! -> new files under hidden names -> the switch: outputs renamed to their
//! final names, manifest swap, replaced files renamed to hidden names ->
//! directory synced -> removal of the replaced files. A dataset is
//! a directory or an object-store prefix ([`storage::Dataset`]); on an
//! object store the picked files are merged in a local scratch directory
//! and the outputs uploaded before the manifest names them.
//! [`dataset::init`] and [`dataset::add`] list files in a manifest;
//! [`storage::manifest::Manifest::read`] checks a manifest's rules.
//!
//! # Guarantees
//!
//! * The picked inputs never exceed the budget, and the quality is the
//!   objective exactly as Kudu reports it.
//! * A compaction keeps the rows (as a multiset) and their key order, and
//!   a failure or machine crash at any step leaves a manifest whose files
//!   all exist (once the next run has put back any it finds under a
//!   hidden name).
//! * A `*.parquet` glob over a directory sees the old files or the new
//!   ones, except inside the switch (a few renames).
//!
//! # Example
//!
//! ```
//! use strata_compact::{planner::{PlannerOptions, plan}, rowsets::significant_overlap};
//!
//! // Kudu's SignificantOverlap case: 100 rowsets, each overlapping the next.
//! let p = plan(&significant_overlap(100), &PlannerOptions::with_budget(64));
//! assert_eq!(p.picked.len(), 64);
//! assert!(p.quality > 0.5 && p.picked_mb <= 64);
//! ```

pub mod dataset;
mod error;
pub mod planner;
pub mod rowsets;
pub mod storage;
pub mod table;

pub use error::{Error, Step};
