//! The error type of `strata-scan`.

/// Errors of opening, scanning and taking rows, and of scan outputs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A request or setting that cannot be used; the message names it.
    #[error("{0}")]
    InvalidConfig(String),
    /// A column the file does not have.
    #[error("no column '{name}' in the input (columns: {})", available.join(", "))]
    UnknownColumn {
        /// The name given.
        name: String,
        /// The file's top-level columns, in schema order.
        available: Vec<String>,
    },
    /// The input is not a valid file of its format; the message says where.
    #[error("invalid file: {0}")]
    Corrupt(String),
    /// parquet's reader failed.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// arrow failed (decoding, projecting or filtering).
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Opening or reading the source failed, or writing an output file.
    #[error(transparent)]
    Store(#[from] strata_store::Error),
    /// Encoding an output file failed.
    #[error(transparent)]
    Write(strata_parquet::Error),
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
