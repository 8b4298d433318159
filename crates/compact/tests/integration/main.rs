//! The compaction planner, manifest and executor, on local files and on
//! object stores.
//!
//! One test binary for the whole crate (each module was once a binary of
//! its own): linking one binary instead of several saves build time and disk.

mod dataset;
mod maintenance;
mod object_store;
mod planner;
