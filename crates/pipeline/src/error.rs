//! The error type of `strata-pipeline`.

use std::{fmt, path::PathBuf};

/// Errors of generating files and of verifying them against a spec.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting that cannot be used; the message names it.
    InvalidConfig(String),
    /// The data generator failed.
    Generate(strata_gen::Error),
    /// The run was stopped because another worker failed.
    Cancelled,
    /// A file being verified could not be read or does not fit its spec.
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: Box<Error>,
    },
    /// Data checked against a spec lacks one of its fields or holds it
    /// in another shape or type.
    SpecMismatch {
        /// The dotted path of the spec field.
        field: String,
        /// What differs.
        message: String,
    },
    /// Data read back is inconsistent (list offsets outside their values).
    Corrupt(String),
    /// Creating, writing, uploading or committing an output failed.
    Store(strata_store::Error),
    /// Encoding a file failed.
    Write(strata_parquet::Error),
    /// Reading a file back failed.
    Scan(strata_scan::Error),
}

impl Error {
    /// An IO error on `path`, as [`strata_store::Error::Io`].
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Store(strata_store::Error::io(action, path, source))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig(m) => write!(f, "{m}"),
            Error::Generate(e) => write!(f, "generate: {e}"),
            Error::Cancelled => write!(f, "cancelled after an earlier error"),
            Error::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Error::SpecMismatch { field, message } => {
                write!(f, "field `{field}` does not match the spec: {message}")
            }
            Error::Corrupt(m) => write!(f, "invalid file: {m}"),
            Error::Store(e) => e.fmt(f),
            Error::Write(e) => e.fmt(f),
            Error::Scan(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Generate(e) => Some(e),
            Error::Read { source, .. } => Some(source.as_ref()),
            Error::Store(e) => e.source(),
            Error::Write(e) => e.source(),
            Error::Scan(e) => e.source(),
            _ => None,
        }
    }
}

impl From<strata_gen::Error> for Error {
    fn from(e: strata_gen::Error) -> Self {
        Error::Generate(e)
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

impl From<strata_scan::Error> for Error {
    fn from(e: strata_scan::Error) -> Self {
        match e {
            strata_scan::Error::Store(e) => Error::Store(e),
            e => Error::Scan(e),
        }
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Error::Write(e.into())
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Write(e.into())
    }
}
