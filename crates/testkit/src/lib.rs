//! Fixtures for strata's tests and benchmarks; not part of strata's API.
//!
//! Library crates take this crate as a dev-dependency only; `strata-bench`
//! uses it for its synthetic inputs.
//!
//! * [`mutate`]: seeded corruption of valid files, for reader tests.
//! * [`readback`]: read a written Parquet or IPC file back, render its rows
//!   canonically, and fingerprint the row multiset, to compare two runs.
//! * [`stores`]: object stores that add latency or fail chosen reads.
//! * [`synth`]: sorted Parquet files whose key ranges overlap by a chosen
//!   fraction, the inputs of merge and compaction tests and benchmarks.
//!
//! # Example
//!
//! ```
//! use strata_testkit::readback::{multiset_hash, sequence_hash};
//!
//! let mut a = vec!["x=1".to_string(), "x=2".to_string()];
//! let mut b = vec!["x=2".to_string(), "x=1".to_string()];
//! assert_eq!(multiset_hash(&mut a), multiset_hash(&mut b));
//! assert_ne!(sequence_hash(&["x=1".into()]), sequence_hash(&["x=2".into()]));
//! ```

pub mod mutate;
pub mod readback;
pub mod stores;
pub mod synth;

/// Results of the fixtures: any error, boxed (callers are tests).
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;
