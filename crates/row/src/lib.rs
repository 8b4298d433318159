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
mod error;
mod field;
mod fixed;
mod group;
mod key;
mod rows;
mod simd;
mod variable;

pub use arrow_schema::SortOptions;

pub use encode::RowEncoder;
pub use error::Error;
pub use field::SortField;
pub use group::{GroupKey, GroupKeyEncoder, GroupKeys};
pub use key::KeyColumns;
pub use rows::{Row, RowParser, Rows};

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
