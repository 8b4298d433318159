//! strata's Parquet encoder and the writers of every file strata makes.
//!
//! The principal type is [`encoder::Shredder`]: for a schema of any type
//! the spec format has (every scalar, structs, lists and maps at any depth)
//! it encodes Arrow columns straight into Parquet pages, levels,
//! statistics and page indexes, one [`encoder::LeafEncoder`] per leaf and
//! row group. [`rowgroup`] is the one path every Parquet file is encoded
//! by: a [`rowgroup::FileEncoding`] chooses, once, between that encoder
//! and parquet's Arrow writers ([`ParquetEncoder`]); workers encode row
//! groups with its [`rowgroup::RowGroupEncoder`] and files take them in
//! order through its [`rowgroup::FileAppender`]. [`writer::ParquetWriter`]
//! writes whole files through it (or through parquet's `ArrowWriter` for
//! other schemas), [`sink::FileSink`] through the writer, and
//! [`ipc::IpcFileWriter`] writes Arrow IPC files whose footer records each
//! batch's row count. [`Format`] and [`Compression`] are the choices a user
//! names on the command line.
//!
//! It also holds the one reading layer every strata reader of a user's
//! file goes through: [`validate`] checks what third-party readers trust
//! (footers against the file, offset indexes, nesting depth, decoded
//! batches), [`guard`] turns a panic that still escapes a decoder into an
//! error, and [`read`] is the synchronous Parquet path through both.
//!
//! # Data flow
//!
//! record batches -> [`rowgroup::RowGroupEncoder`] (one
//! [`encoder::LeafEncoder`] per leaf: levels, values, page statistics,
//! codec) -> [`rowgroup::EncodedRowGroup`] -> [`rowgroup::FileAppender`]
//! (parquet's `SerializedFileWriter`: footer, schema, Arrow schema
//! metadata) -> a file or an upload of `strata-store`.
//!
//! # Guarantees
//!
//! * A file from the direct encoder reads back (parquet-rs, pyarrow,
//!   DuckDB) with the same rows, and the same page and chunk statistics,
//!   as parquet's own writer gives for the same batches: the differential
//!   tests (`tests/differential.rs`: 500 random specs per run, read back
//!   by parquet-rs, pyarrow and DuckDB) hold it to that.
//! * Data that breaks the schema (a null in a required column, a
//!   dictionary past what its key type indexes) is an [`Error`], never a
//!   panic or a bad file.
//! * A malformed input file read through [`read`] (or `strata-scan`) is an
//!   error, never a panic: the seeded mutation tests and fuzz targets of
//!   `strata-fuzzkit` hold it to that.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int64Array, RecordBatch};
//! use parquet::file::properties::WriterProperties;
//! use strata_parquet::writer::ParquetWriter;
//!
//! let batch = RecordBatch::try_from_iter([(
//!     "id",
//!     Arc::new(Int64Array::from_iter_values(0..1000)) as ArrayRef,
//! )])
//! .unwrap();
//! let props = WriterProperties::builder().build();
//! let mut w = ParquetWriter::try_new(Vec::new(), batch.schema(), props).unwrap();
//! assert!(w.is_direct()); // Int64 leaves take strata's encoder
//! w.write(&batch).unwrap();
//! let bytes = w.finish().unwrap();
//! assert_eq!(&bytes[..4], b"PAR1");
//! ```

pub mod concat;
pub mod encoder;
mod error;
pub mod guard;
pub mod ipc;
mod options;
pub mod read;
pub mod rowgroup;
pub mod sink;
pub mod validate;
pub mod writer;

pub use error::Error;
pub use options::{Compression, DEFAULT_ZSTD_LEVEL, Format, extension_note};
pub use rowgroup::ParquetEncoder;

/// Rows per generated or read Arrow batch unless told otherwise.
pub const DEFAULT_BATCH_SIZE: usize = 8192;
/// Rows per Parquet row group unless told otherwise.
pub const DEFAULT_ROW_GROUP_ROWS: usize = 1 << 20;
