//! The error type of `strata-parquet`.

use std::fmt;

/// Errors of the encoders and file writers.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting or input that cannot be used; the message names it.
    InvalidConfig(String),
    /// The Parquet encoder failed (a write error surfaces here too).
    Parquet(parquet::errors::ParquetError),
    /// The Arrow IPC encoder failed.
    Arrow(arrow_schema::ArrowError),
    /// A `Dictionary<UInt8, _>` column met more than 256 distinct values in
    /// one row group of the direct Parquet encoder (parquet's own writer
    /// takes any number).
    DictionaryOverflow {
        /// The column's path.
        column: String,
    },
    /// Creating, writing or committing the output failed.
    Store(strata_store::Error),
}

impl Error {
    /// An IO error on `path`, as [`strata_store::Error::Io`].
    pub fn io(
        action: &'static str,
        path: impl Into<std::path::PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Store(strata_store::Error::io(action, path, source))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig(m) => write!(f, "{m}"),
            Error::Parquet(e) => write!(f, "parquet: {e}"),
            Error::Arrow(e) => write!(f, "arrow: {e}"),
            Error::DictionaryOverflow { column } => write!(
                f,
                "column {column} has more than 256 dictionary values in one row group"
            ),
            Error::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Parquet(e) => Some(e),
            Error::Arrow(e) => Some(e),
            Error::Store(e) => e.source(),
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

impl From<strata_store::Error> for Error {
    fn from(e: strata_store::Error) -> Self {
        Error::Store(e)
    }
}
