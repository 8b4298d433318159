//! The error type of `strata-pipeline`.

use std::path::PathBuf;

/// Errors of generating files and of verifying them against a spec.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting that cannot be used; the message names it.
    #[error("{0}")]
    InvalidConfig(String),
    /// The data generator failed.
    #[error("generate: {0}")]
    Generate(#[from] strata_gen::Error),
    /// A table format's metadata or commit failed.
    #[error("table: {0}")]
    Table(#[from] strata_table::Error),
    /// A table history failed.
    #[error("changes: {0}")]
    Changes(#[from] strata_changes::Error),
    /// The run was stopped because another worker failed.
    #[error("cancelled after an earlier error")]
    Cancelled,
    /// The run was stopped by its interrupt flag
    /// ([`crate::generate::RunOptions::interrupt`]); nothing was made
    /// visible.
    #[error("interrupted")]
    Interrupted,
    /// A file being verified could not be read or does not fit its spec.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: Box<Error>,
    },
    /// Data checked against a spec lacks one of its fields or holds it
    /// in another shape or type.
    #[error("field `{field}` does not match the spec: {message}")]
    SpecMismatch {
        /// The dotted path of the spec field.
        field: String,
        /// What differs.
        message: String,
    },
    /// Data read back is inconsistent (list offsets outside their values).
    #[error("invalid file: {0}")]
    Corrupt(String),
    /// Creating, writing, uploading or committing an output failed.
    #[error(transparent)]
    Store(#[from] strata_store::Error),
    /// Encoding a file failed.
    #[error(transparent)]
    Write(strata_parquet::Error),
    /// Reading a file back failed.
    #[error(transparent)]
    Scan(strata_scan::Error),
}

/// A writer's error; its store errors are this crate's store errors.
impl From<strata_parquet::Error> for Error {
    fn from(e: strata_parquet::Error) -> Self {
        match e {
            strata_parquet::Error::Store(e) => Error::Store(e),
            e => Error::Write(e),
        }
    }
}

/// A reader's error; its store errors are this crate's store errors.
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
