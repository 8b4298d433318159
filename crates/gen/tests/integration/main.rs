//! Spec files, datasets of several tables and decimals, through the
//! public API.
//!
//! One test binary for the whole crate (each module was once a binary of
//! its own): linking one binary instead of several saves build time and disk.

mod aggregates;
mod balanced;
mod changes;
mod check_generate;
mod dataset;
mod decimal;
mod dimensions;
mod draws;
mod empirical;
mod expressions;
mod parquet_settings;
mod run_values;
mod schema;
mod sequences;
mod spec;
mod stratified;
