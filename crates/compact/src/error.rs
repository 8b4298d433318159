//! The crate's one error type, below every module that returns it.

use std::path::{Path, PathBuf};

/// Everything that can go wrong in this crate: malformed rowset input, a
/// request the planner refuses, a dataset that cannot be read or changed,
/// and a merge that fails.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A TSV data line did not have exactly three tab-separated fields.
    #[error(
        "line {line}: expected 3 tab-separated fields (size_mb, min_key, max_key), found {found}"
    )]
    FieldCount {
        /// 1-based line number in the input text.
        line: usize,
        /// How many fields the line had.
        found: usize,
    },
    /// The size field was not a non-negative decimal integer that fits in
    /// a `u64` number of bytes.
    #[error("line {line}: size_mb {text:?} is not an integer number of MB")]
    BadSize {
        /// 1-based line number in the input text.
        line: usize,
        /// The offending field, as written.
        text: String,
    },
    /// The size field was 0; Kudu's test loader requires at least 1 MB.
    #[error("line {line}: size_mb must be at least 1")]
    ZeroSize {
        /// 1-based line number in the input text.
        line: usize,
    },
    /// The min key sorts after the max key (byte-wise).
    #[error("line {line}: min_key sorts after max_key")]
    KeyOrder {
        /// 1-based line number in the input text.
        line: usize,
    },
    /// [`crate::planner::plan_brute_force`] was given more rowsets than it
    /// enumerates.
    #[error(
        "brute-force planning enumerates every subset: {n} rowsets given, at most {max} accepted"
    )]
    TooManyForBruteForce {
        /// How many rowsets were given.
        n: usize,
        /// The most it accepts.
        max: usize,
    },
    /// An operating-system error on a path.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A Parquet file could not be read.
    #[error("{}: parquet: {source}", path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The error.
        source: parquet::errors::ParquetError,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An object-store request failed.
    #[error("cannot {action} {location}: {source}")]
    ObjectStore {
        /// What was being done.
        action: &'static str,
        /// The object or prefix.
        location: String,
        /// The error.
        source: Box<object_store::Error>,
    },
    /// The merge failed (its error says how, naming the file).
    #[error(transparent)]
    Merge(#[from] strata_sort::Error),
    /// Writing a local file failed (its error names the file).
    #[error(transparent)]
    Store(#[from] strata_store::Error),
    /// The dataset or a request is not valid; the message says why.
    #[error("{0}")]
    Invalid(String),
    /// A fault injected by a test hook at this step.
    #[error("injected failure at {0:?}")]
    Injected(Step),
}

impl Error {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn parquet(path: &Path, source: parquet::errors::ParquetError) -> Self {
        Error::Parquet {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The steps of [`crate::dataset::execute`], at which a test hook may
/// inject a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Before anything is written.
    Start,
    /// After the merged files are written (under hidden names), before
    /// the switch to them.
    Merged,
    /// After the new manifest is in place, before old files are removed.
    Committed,
    /// After the replaced files are removed.
    Done,
}
