//! Writing, reading and sorting columnar files for strata.
//!
//! The principal entry point is [`generate::generate`]: it drives any
//! [`strata_gen::BatchGenerator`] on many threads and writes Parquet or
//! Arrow IPC files. [`parquet_writer::ParquetWriter`] writes batches, or
//! rows gathered from many batches, through the same direct Parquet
//! encoder. [`sort::sort_file`] sorts one such file in memory by key
//! columns, using the byte-comparable rows of `strata-row`.
//! [`scan`] reads only the projected columns' byte ranges of IPC and
//! Parquet files from local disk or object stores, through
//! [`store::Source`] (coalesced parallel fetches, accounting, retries).
//! [`verify::verify_distribution`] reads generated files back and reports
//! the realised shares of nulls, categories and list lengths next to the
//! ones their [`strata_gen::spec::Spec`] specifies.
//!
//! Reading (see [`scan`] for the detail): source tail -> footer ->
//! batch headers or Parquet metadata -> projected byte ranges ->
//! [`ranges::coalesce`] -> parallel fetches -> zero-copy decode -> filter
//! and limit -> batches.
//!
//! # Data flow (generate)
//!
//! row-group task -> generator batches -> column encoders (per worker:
//! strata's direct Parquet encoder for string, dictionary and integer
//! leaves, else parquet's `ArrowColumnWriter`) -> encoded column chunks -> the file's
//! in-order queue -> hidden temporary file -> rename when every file is
//! complete.
//!
//! # Guarantees
//!
//! * File `i` holds global rows `[i*N/W, (i+1)*N/W)` in order, so output
//!   bytes depend on the settings and seed, never on the thread count.
//! * Nothing appears under a final name unless the whole run succeeded
//!   ([`output`]).
//! * Memory is bounded by the number of threads times one row group.
//! * A projected read returns exactly the full read's projection, and
//!   malformed input gives an error, never a panic.
//!
//! # Example
//!
//! ```
//! use strata_io::{Compression, Format, generate::{GenerateConfig, generate}};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let cfg = GenerateConfig {
//!     target_records: 10_000,
//!     record_batch_size: 1024,
//!     num_writers: 2,
//!     threads: 2,
//!     row_group_rows: 4096,
//!     format: Format::Parquet,
//!     compression: Compression::None,
//!     output_dir: dir.path().to_path_buf(),
//!     output_filename: "contacts".into(),
//!     overwrite: false,
//!     seed: 42,
//!     encoder: Default::default(),
//!     part: Default::default(),
//! };
//! let summary = generate(&strata_gen::contacts(42), &cfg, &|_| {}).unwrap();
//! assert_eq!(summary.records, 10_000);
//! assert_eq!(summary.files.len(), 2);
//! assert!(dir.path().join("contacts_1.parquet").exists());
//!
//! // Read one column back, fetching only its bytes.
//! use strata_io::{scan::{ScanRequest, Scanner}, store::{FetchOptions, Source}};
//! let path = dir.path().join("contacts_0.parquet");
//! let source = Source::open_file(&path, "contacts_0", FetchOptions::local()).unwrap();
//! let mut scanner = Scanner::open(source).unwrap();
//! let req = ScanRequest { columns: Some(vec!["name".into()]), ..Default::default() };
//! let mut rows = 0;
//! scanner.scan(&req, |b| { rows += b.num_rows(); Ok(()) }).unwrap();
//! assert_eq!(rows, 5_000);
//! // A file this small (under 1 MiB) is read whole by its first request.
//! assert_eq!(scanner.stats().io.requests, 1);
//! ```

mod error;
pub mod generate;
pub mod ipc;
pub mod location;
mod options;
pub mod output;
pub mod parquet_writer;
pub mod ranges;
pub mod readback;
pub mod scan;
mod shred;
pub mod sort;
pub mod store;
pub mod upload;
pub mod verify;

pub use error::Error;
pub use options::{Compression, DEFAULT_ZSTD_LEVEL, Format};
