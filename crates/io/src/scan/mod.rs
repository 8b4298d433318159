//! Projected reads of Arrow IPC and Parquet files from local disk or object
//! stores: only the requested columns' bytes are fetched.
//!
//! # Data flow
//!
//! [`Source`](crate::store::Source) tail read -> format from the magic
//! bytes -> the format's metadata (IPC footer and batch headers, or the
//! Parquet footer) -> byte ranges of the projected columns ->
//! [`Source::fetch`](crate::store::Source::fetch) (coalesced, parallel,
//! counted) -> decoded batches of the projected schema -> optional row
//! filter and limit.

pub mod filter;
pub mod ipc;
pub mod parquet;

pub use filter::Filter;

/// What a scan returns.
#[derive(Debug, Clone, Default)]
pub struct ScanRequest {
    /// Top-level columns to return, in this order; `None` for all.
    pub columns: Option<Vec<String>>,
    /// Rows to keep; the columns it reads need not be in `columns`.
    pub filter: Option<Filter>,
    /// The most rows to return.
    pub limit: Option<usize>,
}

/// How many bytes of the end of a file the first request reads: enough
/// for the footer of most files, so opening costs one request.
pub const TAIL_PREFETCH: u64 = 64 * 1024;
