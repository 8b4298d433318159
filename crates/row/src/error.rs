//! The crate's error type.

use std::fmt;

use arrow_schema::DataType;

/// Errors of this crate.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The data type cannot be encoded (yet); the message names it.
    Unsupported(String),
    /// The columns do not match the encoder's fields (count, length or
    /// type), or a field marked non-nullable holds nulls.
    InvalidArgument(String),
    /// Bytes given to a decoder are not a row of this encoder.
    InvalidRow(String),
    /// Arrow rejected an array built from decoded values.
    Arrow(arrow_schema::ArrowError),
    /// A key names a column the schema does not have.
    UnknownColumn {
        /// The name given.
        name: String,
        /// The schema's top-level columns, in order.
        available: Vec<String>,
    },
    /// A key column has a type the encoder cannot order.
    UnsupportedKey {
        /// The column.
        column: String,
        /// Its type.
        data_type: DataType,
        /// The encoder's reason.
        source: Box<Error>,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unsupported(m) => write!(f, "unsupported: {m}"),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::InvalidRow(m) => write!(f, "invalid row: {m}"),
            Error::Arrow(e) => write!(f, "arrow: {e}"),
            Error::UnknownColumn { name, available } => {
                write!(f, "no column '{name}' (columns: {})", available.join(", "))
            }
            Error::UnsupportedKey {
                column,
                data_type,
                source,
            } => write!(
                f,
                "cannot order column '{column}' of type {data_type}: {source}"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Arrow(e) => Some(e),
            Error::UnsupportedKey { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Arrow(e)
    }
}
