//! Partition layouts: Iceberg's partition transforms over Arrow columns,
//! and the Hive-style directories partitioned outputs are written into.
//!
//! This crate owns what a partition field is ([`PartitionField`]: a
//! top-level column and a [`Transform`], written as SQL, `month(l_shipdate)`
//! or `bucket(16, l_orderkey)`), which column types each transform takes
//! and the type it gives ([`PartitionField::check`]), the partition value
//! of every row of a column ([`PartitionField::apply`]), and the text of a
//! partition directory ([`hive::human`], [`hive::escape`],
//! [`hive::directory`]) and, back, a value read from a file's path
//! ([`hive::unescape`], [`hive::value_in_path`]).
//!
//! # Data flow
//!
//! spec or flag text -> [`PartitionField::parse`] -> checked against the
//! table's schema -> applied to each batch's column (an Arrow array of
//! partition values) -> per distinct value, the directory
//! `name=value/...`.
//!
//! # Guarantees
//!
//! * **Iceberg's values.** Years, months, days and hours count from the
//!   epoch and round down before it; buckets are Iceberg's Murmur3 hash
//!   (x86, 32 bits, seed 0) of its byte form of each type, so a row lands
//!   in the bucket Iceberg and Spark give it (checked against the
//!   spec's Appendix B values); truncation rounds integers and decimals
//!   down to a multiple of the width and cuts strings to that many
//!   characters.
//! * **Hive's paths.** Directory names escape what Hive escapes, and a
//!   null value is `__HIVE_DEFAULT_PARTITION__`, which Hive, Spark,
//!   DuckDB and pyarrow read as null.
//! * **No panics on input.** Bad text, unknown columns and types a
//!   transform does not take are an [`Error`].
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Date32Array};
//! use arrow_schema::{DataType, Field, Schema};
//! use strata_layout::{PartitionField, hive};
//!
//! let field = PartitionField::parse("month(l_shipdate)").unwrap();
//! assert_eq!(field.name, "l_shipdate_month");
//! let schema = Schema::new(vec![Field::new("l_shipdate", DataType::Date32, true)]);
//! assert_eq!(field.check(&schema).unwrap(), (0, DataType::Int32));
//!
//! // 1998-01-15 and a null date.
//! let days: ArrayRef = Arc::new(Date32Array::from(vec![Some(10_241), None]));
//! let months = field.apply(&days).unwrap();
//! let dirs: Vec<String> = (0..2)
//!     .map(|i| hive::directory(&[(&field.name, hive::human(&field, &months, i))]))
//!     .collect();
//! assert_eq!(dirs, ["l_shipdate_month=1998-01", "l_shipdate_month=__HIVE_DEFAULT_PARTITION__"]);
//! ```

mod error;
pub mod hive;
mod transform;

pub use error::Error;
pub use transform::{PartitionField, Transform, civil, hash_bytes, hash_decimal, hash_long};
