//! The crate's error type.

use arrow_schema::DataType;

/// Errors of this crate.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A partition field that does not parse: the text and why.
    #[error("partition field `{text}`: {reason}")]
    Syntax {
        /// The field as written.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A transform applied to a column of a type it does not take.
    #[error("partition field `{field}`: {transform} does not take a column of type {data_type}")]
    WrongType {
        /// The field as written.
        field: String,
        /// The transform's name.
        transform: String,
        /// The column's type.
        data_type: DataType,
    },
    /// A partition field names a column the table does not have.
    #[error("partition field `{field}`: no column `{column}` (columns: {})", available.join(", "))]
    UnknownColumn {
        /// The field as written.
        field: String,
        /// The column it names.
        column: String,
        /// The table's top-level columns.
        available: Vec<String>,
    },
    /// An array of another type than the one the field was checked for.
    #[error("partition field `{field}`: expected a column of type {expected}, got {got}")]
    Mismatch {
        /// The field as written.
        field: String,
        /// The type checked.
        expected: DataType,
        /// The array's type.
        got: DataType,
    },
    /// A truncated integer below its type's least value.
    #[error("partition field `{field}`: a value rounds down past its type's least value")]
    Overflow {
        /// The field as written.
        field: String,
    },
}
