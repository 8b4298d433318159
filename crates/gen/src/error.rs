//! The crate's error type.

use arrow_schema::ArrowError;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Distribution parameters that cannot be sampled.
    #[error("invalid distribution: {0}")]
    InvalidDistribution(String),
    /// A batch whose variable-length column passes 2 GiB, or one of whose
    /// list or map levels passes 2^26 elements.
    #[error(
        "batch too large: a string column passes 2 GiB or a list level passes \
         67,108,864 elements; use smaller batches"
    )]
    BatchTooLarge,
    /// Arrow rejected an array that was built.
    #[error("arrow: {0}")]
    Arrow(#[from] ArrowError),
}
