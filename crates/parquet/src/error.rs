//! The error type of `strata-parquet`.

/// Errors of the encoders and file writers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting or input that cannot be used; the message names it.
    #[error("{0}")]
    InvalidConfig(String),
    /// The Parquet encoder failed (a write error surfaces here too).
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// The Arrow IPC encoder failed.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A `Dictionary<UInt8, _>` column met more than 256 distinct values in
    /// one row group of the direct Parquet encoder (parquet's own writer
    /// takes any number).
    #[error("column {column} has more than 256 dictionary values in one row group")]
    DictionaryOverflow {
        /// The column's path.
        column: String,
    },
    /// Creating, writing or committing the output failed.
    #[error(transparent)]
    Store(#[from] strata_store::Error),
}
