//! Projected reads of IPC and Parquet files, locally and from S3, checked
//! against full reads.
//!
//! One test binary for the whole crate (each module was once a binary of
//! its own): linking one binary instead of several saves build time and disk.

mod multi;
mod s3;
mod scan_ipc;
mod scan_parquet;
mod scanner;
#[path = "../support/mod.rs"]
mod support;
