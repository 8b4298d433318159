//! The crate's error type.

use arrow_schema::DataType;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The data type cannot be encoded (yet); the message names it.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The columns do not match the encoder's fields (count, length or
    /// type), or a field marked non-nullable holds nulls.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Bytes given to a decoder are not a row of this encoder.
    #[error("invalid row: {0}")]
    InvalidRow(String),
    /// Arrow rejected an array built from decoded values.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A key names a column the schema does not have.
    #[error("no column '{name}' (columns: {})", available.join(", "))]
    UnknownColumn {
        /// The name given.
        name: String,
        /// The schema's top-level columns, in order.
        available: Vec<String>,
    },
    /// A key column has a type the encoder cannot order.
    #[error("cannot order column '{column}' of type {data_type}: {source}")]
    UnsupportedKey {
        /// The column.
        column: String,
        /// Its type.
        data_type: DataType,
        /// The encoder's reason.
        source: Box<Error>,
    },
}
