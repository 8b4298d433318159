//! Writing, reading and sorting columnar files for strata.
//!
//! The principal entry point is [`generate::generate`]: it drives any
//! [`strata_gen::BatchGenerator`] on many threads and writes Parquet or
//! Arrow IPC files. [`sort::sort_file`] sorts one such file in memory by
//! key columns, using the byte-comparable rows of `strata-row`.
//!
//! # Data flow
//!
//! row-group task -> generator batches -> column encoders (per worker:
//! strata's direct Parquet encoder for string and dictionary leaves, else
//! parquet's `ArrowColumnWriter`) -> encoded column chunks -> the file's
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
//!
//! # Example
//!
//! ```
//! use strata_gen::contacts::Contacts;
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
//! };
//! let summary = generate(&Contacts::new(42), &cfg, &|_| {}).unwrap();
//! assert_eq!(summary.records, 10_000);
//! assert_eq!(summary.files.len(), 2);
//! assert!(dir.path().join("contacts_1.parquet").exists());
//! ```

mod error;
pub mod generate;
pub mod ipc;
pub mod location;
mod options;
pub mod output;
pub mod ranges;
pub mod readback;
pub mod scan;
mod shred;
pub mod sort;
pub mod store;

pub use error::Error;
pub use options::{Compression, DEFAULT_ZSTD_LEVEL, Format};
