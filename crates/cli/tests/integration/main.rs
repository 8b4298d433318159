//! The `strata` binary end to end: every subcommand, its outputs and its
//! errors, run as a user would run it.
//!
//! One test binary for the whole crate (each module was once a binary of
//! its own): linking one binary instead of several saves build time and disk.

#[cfg(feature = "bench")]
mod bench;
mod cli;
mod codecs;
mod common;
mod compact;
mod compact_datasets;
mod compact_plan;
mod corrupt;
mod crash;
mod crash_compact;
mod dataset;
mod docs;
mod generate_outputs;
mod help;
mod hostile;
mod scan;
mod sort;
mod spec;
