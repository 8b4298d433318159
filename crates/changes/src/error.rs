//! The crate's error type.

/// Errors of a history.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A spec without a history, or a setting it cannot take.
    #[error("{0}")]
    InvalidConfig(String),
    /// The generator refused the rows.
    #[error(transparent)]
    Gen(#[from] strata_gen::Error),
    /// Arrow refused the arrays.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
}
