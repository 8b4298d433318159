//! The error type of `strata-scan`.

use std::fmt;

/// Errors of opening, scanning and taking rows, and of scan outputs.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A request or setting that cannot be used; the message names it.
    InvalidConfig(String),
    /// A column the file does not have.
    UnknownColumn {
        /// The name given.
        name: String,
        /// The file's top-level columns, in schema order.
        available: Vec<String>,
    },
    /// The input is not a valid file of its format; the message says where.
    Corrupt(String),
    /// parquet's reader failed.
    Parquet(parquet::errors::ParquetError),
    /// arrow failed (decoding, projecting or filtering).
    Arrow(arrow_schema::ArrowError),
    /// Opening or reading the source failed, or writing an output file.
    Store(strata_store::Error),
    /// Encoding an output file failed.
    Write(strata_parquet::Error),
}

impl Error {
    /// An IO error on `path`, as [`strata_store::Error::Io`].
    pub(crate) fn io(
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
            Error::UnknownColumn { name, available } => write!(
                f,
                "no column '{name}' in the input (columns: {})",
                available.join(", ")
            ),
            Error::Corrupt(m) => write!(f, "invalid file: {m}"),
            Error::Parquet(e) => write!(f, "parquet: {e}"),
            Error::Arrow(e) => write!(f, "arrow: {e}"),
            Error::Store(e) => e.fmt(f),
            Error::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Parquet(e) => Some(e),
            Error::Arrow(e) => Some(e),
            Error::Store(e) => e.source(),
            Error::Write(e) => e.source(),
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

impl From<strata_parquet::Error> for Error {
    fn from(e: strata_parquet::Error) -> Self {
        match e {
            strata_parquet::Error::Store(e) => Error::Store(e),
            e => Error::Write(e),
        }
    }
}
