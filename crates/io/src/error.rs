//! The error type of `strata-io`.

use std::{fmt, io, path::PathBuf};

/// Errors of this crate.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting that cannot be used; the message names it.
    InvalidConfig(String),
    /// Output files exist and overwriting was not asked for.
    OutputExists {
        /// The first conflicting path.
        path: PathBuf,
        /// How many conflicting files there are.
        count: usize,
    },
    /// An operating-system error on a path.
    Io {
        /// What was being done.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The Parquet encoder failed (a write error surfaces here too).
    Parquet(parquet::errors::ParquetError),
    /// The Arrow IPC encoder failed.
    Arrow(arrow_schema::ArrowError),
    /// The data generator failed.
    Generate(strata_gen::Error),
    /// The run was stopped because another worker failed.
    Cancelled,
}

impl Error {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig(m) => write!(f, "{m}"),
            Error::OutputExists { path, count } => {
                write!(f, "output file {} already exists", path.display())?;
                if *count > 1 {
                    write!(f, " (and {} more)", count - 1)?;
                }
                write!(f, "; pass --overwrite to replace")
            }
            Error::Io {
                action,
                path,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            Error::Parquet(e) => write!(f, "parquet: {e}"),
            Error::Arrow(e) => write!(f, "arrow ipc: {e}"),
            Error::Generate(e) => write!(f, "generate: {e}"),
            Error::Cancelled => write!(f, "cancelled after an earlier error"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Parquet(e) => Some(e),
            Error::Arrow(e) => Some(e),
            Error::Generate(e) => Some(e),
            _ => None,
        }
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Error::Parquet(e)
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Arrow(e)
    }
}

impl From<strata_gen::Error> for Error {
    fn from(e: strata_gen::Error) -> Self {
        Error::Generate(e)
    }
}
