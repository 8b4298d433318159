//! Table formats over strata's Parquet files: the metadata that makes a
//! directory of data files a table that engines open, and the commit
//! that publishes it.
//!
//! This crate owns what a data file's entry in a table says of it
//! ([`stats`]: rows, bytes, row-group offsets, per leaf column its field
//! id, sizes, value and null counts and exact bounds, all read from the
//! Parquet footer, never from the data), Iceberg format version 2
//! ([`iceberg`]): the table schema with a field id for every nested
//! field, the partition spec and sort order from a layout, manifests and
//! the manifest list in Avro, the table metadata JSON, and the commit of
//! a path table (`metadata/vN.metadata.json` claimed only if absent, built
//! again on another writer's version when it took that one, then
//! `version-hint.text`), new or appended to; and Iceberg's SQL catalog in
//! a SQLite file ([`catalog`]); and Delta Lake ([`delta`]): the schema
//! JSON, the protocol a table's types need, each data file's partition
//! values and statistics, the commit of each version of its log
//! (`_delta_log/N.json`, claimed only if absent), the replay of a log
//! from its newest checkpoint, and a checkpoint every ten versions.
//!
//! # Data flow
//!
//! Arrow schema -> [`iceberg::TableSchema`] (field ids into the files'
//! Arrow schema, so the Parquet writer records them) -> data files written
//! by the caller -> [`stats::read_file`] per file -> [`iceberg::commit`]:
//! manifest, manifest list, metadata, commit (and a catalog's
//! compare-and-swap through its hook). A change of rows
//! ([`iceberg::Change`]: data files removed and added, rows deleted by
//! position) -> [`iceberg::commit_change`]: checked against the current
//! snapshot's live files ([`iceberg::live_files`]), position delete files
//! written by strata's Parquet writer, the manifests that held removed
//! files written again, then committed as an append is.
//! For Delta: Arrow schema -> [`delta::TableSchema`] -> data files
//! written by the caller (identity partition columns left out of them,
//! their values in the directory names) -> [`stats::read_file`] per file
//! -> [`delta::create`]: the actions of the next version, commit,
//! checkpoint when due ([`delta::checkpoint`]). A change to a Delta
//! table: the files it rewrites read at a version, new data files and
//! change data files ([`delta::cdc`]) written -> [`delta::commit_change`]:
//! `remove`s, `add`s and `cdc`s committed on top of that version, or of
//! versions others committed since unless they conflict.
//!
//! # Guarantees
//!
//! * **Data first, then metadata.** Nothing refers to a file before it is
//!   complete; the table's new version is one file created only if it
//!   does not exist, so a killed run leaves the table as it was (at most
//!   with unreferenced data files), and of two writers claiming the same
//!   version one builds its commit again on the other's (no commit is
//!   lost: of two writers creating a table, the second appends to the
//!   first's when the schema and partitioning agree), and a cleanup
//!   ([`clean`]) removes what a killed run left.
//! * **Exact metrics.** Bounds are the exact minimum and maximum of each
//!   file's statistics (a truncated statistic gives no bound), written in
//!   Iceberg's single-value binary form, or as Delta's JSON values.
//! * **No panics on input.** Types the format cannot hold and tables that
//!   are not tables are an [`Error`].
//!
//! # Example
//!
//! ```
//! use arrow_schema::{DataType, Field, Schema};
//! use strata_table::iceberg::TableSchema;
//!
//! let schema = Schema::new(vec![
//!     Field::new("id", DataType::Int64, false),
//!     Field::new("name", DataType::Utf8, true),
//! ]);
//! let table = TableSchema::new(&schema).unwrap();
//! assert_eq!(table.last_column_id, 2);
//! // The files' Arrow schema carries the ids for the Parquet writer.
//! let id = table.arrow.field(1).metadata().get("PARQUET:field_id");
//! assert_eq!(id.map(String::as_str), Some("2"));
//! ```

pub mod catalog;
pub mod clean;
pub mod delta;
pub mod dir;
mod error;
pub mod iceberg;
mod ids;
pub mod stats;

pub use error::Error;

/// A short random name for the data files of one run (`3f9c0a1e`), so
/// that an append never writes over a file another version holds.
pub fn run_id() -> String {
    ids::uuid()[..8].to_string()
}
