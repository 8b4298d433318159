//! The crate's one error type, below every module that returns it.

use std::{
    fmt,
    path::{Path, PathBuf},
};

/// Everything that can go wrong in this crate: malformed rowset input, a
/// request the planner refuses, a dataset that cannot be read or changed,
/// and a merge that fails.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A TSV data line did not have exactly three tab-separated fields.
    FieldCount {
        /// 1-based line number in the input text.
        line: usize,
        /// How many fields the line had.
        found: usize,
    },
    /// The size field was not a non-negative decimal integer that fits in
    /// a `u64` number of bytes.
    BadSize {
        /// 1-based line number in the input text.
        line: usize,
        /// The offending field, as written.
        text: String,
    },
    /// The size field was 0; Kudu's test loader requires at least 1 MB.
    ZeroSize {
        /// 1-based line number in the input text.
        line: usize,
    },
    /// The min key sorts after the max key (byte-wise).
    KeyOrder {
        /// 1-based line number in the input text.
        line: usize,
    },
    /// [`crate::planner::plan_brute_force`] was given more rowsets than it
    /// enumerates.
    TooManyForBruteForce {
        /// How many rowsets were given.
        n: usize,
        /// The most it accepts.
        max: usize,
    },
    /// An operating-system error on a path.
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A Parquet file could not be read.
    Parquet {
        /// The file.
        path: PathBuf,
        /// The error.
        source: parquet::errors::ParquetError,
    },
    /// A file could not be read or written.
    File {
        /// The file.
        path: PathBuf,
        /// The error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An object-store request failed.
    ObjectStore {
        /// What was being done.
        action: &'static str,
        /// The object or prefix.
        location: String,
        /// The error.
        source: Box<object_store::Error>,
    },
    /// The merge failed (its error says how, naming the file).
    Merge(strata_sort::Error),
    /// Writing a local file failed (its error names the file).
    Store(strata_store::Error),
    /// The dataset or a request is not valid; the message says why.
    Invalid(String),
    /// A fault injected by a test hook at this step.
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

impl From<strata_store::Error> for Error {
    fn from(e: strata_store::Error) -> Self {
        Error::Store(e)
    }
}

impl From<strata_sort::Error> for Error {
    fn from(e: strata_sort::Error) -> Self {
        Error::Merge(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::FieldCount { line, found } => write!(
                f,
                "line {line}: expected 3 tab-separated fields (size_mb, min_key, max_key), found {found}"
            ),
            Error::BadSize { line, text } => {
                write!(
                    f,
                    "line {line}: size_mb {text:?} is not an integer number of MB"
                )
            }
            Error::ZeroSize { line } => write!(f, "line {line}: size_mb must be at least 1"),
            Error::KeyOrder { line } => write!(f, "line {line}: min_key sorts after max_key"),
            Error::TooManyForBruteForce { n, max } => write!(
                f,
                "brute-force planning enumerates every subset: {n} rowsets given, at most {max} accepted"
            ),
            Error::Io {
                action,
                path,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            Error::Parquet { path, source } => {
                write!(f, "{}: parquet: {source}", path.display())
            }
            Error::File { path, source } => write!(f, "{}: {source}", path.display()),
            Error::ObjectStore {
                action,
                location,
                source,
            } => write!(f, "cannot {action} {location}: {source}"),
            Error::Merge(e) => e.fmt(f),
            Error::Store(e) => e.fmt(f),
            Error::Invalid(m) => write!(f, "{m}"),
            Error::Injected(step) => write!(f, "injected failure at {step:?}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Parquet { source, .. } => Some(source),
            Error::File { source, .. } => Some(source.as_ref()),
            Error::ObjectStore { source, .. } => Some(source.as_ref()),
            Error::Merge(e) => e.source(),
            Error::Store(e) => e.source(),
            _ => None,
        }
    }
}

/// The steps of [`crate::dataset::execute`], at which a test hook may
/// inject a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Before anything is written.
    Start,
    /// After the merged files are written, before the manifest.
    Merged,
    /// After the new manifest is in place, before old files are removed.
    Committed,
    /// After the replaced files are removed.
    Done,
}
