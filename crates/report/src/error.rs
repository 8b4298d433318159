//! The crate's one error type.

/// What can go wrong while gathering or writing a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input could not be listed, opened or decoded.
    #[error("{0}")]
    Scan(#[from] strata_scan::Error),
    /// A location could not be parsed or listed, or the report could not
    /// be written (an existing file without overwrite, an unwritable
    /// directory).
    #[error("{0}")]
    Store(#[from] strata_store::Error),
    /// Profiling failed (see `strata_infer::Error`).
    #[error("{0}")]
    Infer(#[from] strata_infer::Error),
    /// Checking the data against its spec failed.
    #[error("{0}")]
    Verify(#[from] strata_pipeline::Error),
    /// A Parquet footer could not be read.
    #[error("{path}: {message}")]
    Footer {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The inputs and the spec do not fit together (a table of the spec
    /// with no files, no input at all).
    #[error("{0}")]
    Input(String),
}
