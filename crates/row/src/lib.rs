//! Byte-comparable row encoding for multi-column sort keys.
//!
//! [`RowEncoder`] turns columns of Arrow arrays into [`Rows`]: one byte
//! string per row such that comparing two rows as bytes (`memcmp`) gives the
//! lexicographic order of their values under each column's
//! [`SortOptions`]. Sorting, merging and searching then need nothing but
//! byte comparisons. [`RowEncoder::decode`] turns rows back into arrays.
//!
//! # Data flow
//!
//! columns -> per-column writers (nested types first encode their children
//! to rows) -> row lengths and offsets -> tiles of rows that fit in L1: every
//! column writes its bytes of the tile -> the tile is appended to the
//! [`Rows`] buffer. Decoding walks the same tiles, each column taking its
//! bytes from the front of every row.
//!
//! # Guarantees
//!
//! * **Same bytes as arrow-row 60.** For the same fields and options the
//!   bytes equal those of `arrow_row::RowConverter` 60.1, so rows can be
//!   exchanged between the two. The one exception is opt-in:
//!   [`SortField::non_nullable`] drops the constant validity byte of
//!   fixed-width and struct fields.
//! * **Order.** `a.row(i) < b.row(j)` exactly when row `i` sorts before row
//!   `j` for rows from the same encoder, across batches too.
//! * **No panics on input.** Mismatched columns, unsupported types and
//!   malformed rows from [`RowParser`] give an [`Error`].
//!
//! [`GroupKeyEncoder`] is a separate encoder for grouping and hashing: its
//! keys are equal exactly when rows are equal, but they have no order, and
//! their type ([`GroupKeys`]) cannot be mixed with [`Rows`].
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int32Array, StringArray};
//! use arrow_schema::{DataType, SortOptions};
//! use strata_row::{RowEncoder, SortField};
//!
//! let encoder = RowEncoder::new(vec![
//!     SortField::new(DataType::Int32),
//!     SortField::new(DataType::Utf8).with_options(SortOptions { descending: true, nulls_first: false }),
//! ]).unwrap();
//! let ids: ArrayRef = Arc::new(Int32Array::from(vec![3, 1, 3]));
//! let names: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some("b")]));
//! let rows = encoder.encode(&[ids, names]).unwrap();
//!
//! let mut order: Vec<usize> = (0..rows.num_rows()).collect();
//! order.sort_by_key(|&i| rows.row(i));
//! assert_eq!(order, [1, 2, 0]); // (1, null), (3, "b"), (3, "a")
//!
//! let back = encoder.decode(&rows).unwrap();
//! assert_eq!(back[1].as_ref(), &StringArray::from(vec![Some("a"), None, Some("b")]));
//! ```

mod decode;
mod encode;
mod fixed;
mod group;
mod key;
mod rows;
mod simd;
mod variable;

use std::fmt;

use arrow_schema::DataType;
pub use arrow_schema::SortOptions;

pub use encode::RowEncoder;
pub use group::{GroupKey, GroupKeyEncoder, GroupKeys};
pub use key::KeyColumns;
pub use rows::{Row, RowParser, Rows};

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

/// One column of a row encoding: its data type, its [`SortOptions`] and
/// whether it may hold nulls.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortField {
    data_type: DataType,
    options: SortOptions,
    non_nullable: bool,
}

impl SortField {
    /// A field sorted ascending with nulls first (the [`SortOptions`]
    /// default).
    pub fn new(data_type: DataType) -> Self {
        SortField {
            data_type,
            options: SortOptions::default(),
            non_nullable: false,
        }
    }

    /// Sets the sort options.
    pub fn with_options(mut self, options: SortOptions) -> Self {
        self.options = options;
        self
    }

    /// Declares that the column never holds nulls. Fixed-width fields
    /// (primitives, booleans, fixed-size binary) then drop their validity
    /// byte, and structs and fixed-size lists theirs: the byte would be the
    /// same in every row, so order is kept. Encoding an array with nulls in
    /// such a field is an error. Other types encode as before; the promise
    /// is still checked. The bytes then differ from arrow-row's.
    pub fn non_nullable(mut self) -> Self {
        self.non_nullable = true;
        self
    }

    /// The data type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// The sort options.
    pub fn options(&self) -> SortOptions {
        self.options
    }

    /// Whether the field was declared non-nullable.
    pub fn is_non_nullable(&self) -> bool {
        self.non_nullable
    }
}

/// Caps the SIMD kernels the encoder may use: 0 scalar only, 1 up to AVX2,
/// 2 up to AVX-512 (the default; the CPU's support is still checked). All
/// produce the same bytes; this exists so tests can check every kernel on
/// one machine. It does nothing off x86-64.
#[doc(hidden)]
pub fn set_simd_level(level: u8) {
    #[cfg(target_arch = "x86_64")]
    simd::set_level(level);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
}

/// Checks that `columns` match `types` in number, length and type, and
/// returns the number of rows.
pub(crate) fn check_columns<'a>(
    columns: &[arrow_array::ArrayRef],
    types: impl ExactSizeIterator<Item = &'a DataType>,
) -> Result<usize, Error> {
    if columns.len() != types.len() {
        return Err(Error::InvalidArgument(format!(
            "expected {} columns, got {}",
            types.len(),
            columns.len()
        )));
    }
    let n = columns.first().map_or(0, |c| c.len());
    for (i, (col, t)) in columns.iter().zip(types).enumerate() {
        if col.len() != n {
            return Err(Error::InvalidArgument(format!(
                "column {i} has {} rows, column 0 has {n}",
                col.len()
            )));
        }
        if !col.data_type().equals_datatype(t) {
            return Err(Error::InvalidArgument(format!(
                "column {i} is {}, the field is {t}",
                col.data_type()
            )));
        }
    }
    Ok(n)
}

/// The byte a null starts with: 0x00 when nulls sort first, else 0xFF.
#[inline]
pub(crate) fn null_sentinel(options: SortOptions) -> u8 {
    if options.nulls_first { 0x00 } else { 0xFF }
}

/// 0xFF when descending (value bytes are inverted), else 0x00.
#[inline]
pub(crate) fn invert_mask(options: SortOptions) -> u8 {
    if options.descending { 0xFF } else { 0x00 }
}
