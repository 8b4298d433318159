//! The crate's error type.

use std::fmt;

use arrow_schema::ArrowError;

/// Errors of this crate.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Distribution parameters that cannot be sampled.
    InvalidDistribution(String),
    /// A batch whose variable-length column passes 2 GiB, or one of whose
    /// list or map levels passes 2^26 elements.
    BatchTooLarge,
    /// Arrow rejected an array that was built.
    Arrow(ArrowError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidDistribution(why) => write!(f, "invalid distribution: {why}"),
            Error::BatchTooLarge => {
                write!(
                    f,
                    "batch too large: a string column passes 2 GiB or a list level passes \
                     67,108,864 elements; use smaller batches"
                )
            }
            Error::Arrow(e) => write!(f, "arrow: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Arrow(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ArrowError> for Error {
    fn from(e: ArrowError) -> Self {
        Error::Arrow(e)
    }
}
