//! The generate pipeline: strata-gen's batches, on many threads, into
//! Parquet or Arrow IPC files; and the check of generated files against
//! their spec.
//!
//! The principal entry point is [`generate::generate`]: it drives any
//! [`strata_gen::BatchGenerator`] on many threads and writes the files of
//! a [`generate::GenerateConfig`] locally or to an object store, through
//! strata's direct Parquet encoder (`strata-parquet`) where the schema
//! allows. [`generate::generate_tables`] runs the tables of a dataset of
//! several tables and makes their files visible together.
//! [`flow::Flow`] is the one flow from a spec to its files that the CLI,
//! the Python module and the benchmarks share: a spec of one table or the
//! chosen tables of a dataset (each table's rows, files and batches) ->
//! the dry run's [`flow::Plan`] or the run -> its [`flow::Report`].
//! A table with a [`layout::Layout`] (its spec's `layout`, the command
//! line's `--partition-by`, `--sort-by`, `--target-file-size` and
//! `--row-group-size` over it) is written into Hive-style partition
//! directories instead, each partition's rows in sort-key order, in
//! files of a target size, through any memory limit (the [`layout`]
//! module); [`layout::check_layout`] checks such files against their
//! layout.
//! [`verify::verify_distribution`] reads generated files back
//! (through `strata-scan`) and reports the realised shares of nulls,
//! categories and list lengths next to the ones their
//! [`strata_gen::Spec`] specifies.
//!
//! # Data flow
//!
//! row-group task -> generator batches -> column encoders (per worker:
//! strata's direct Parquet encoder for string, dictionary and integer
//! leaves, else parquet's `ArrowColumnWriter`) -> encoded column chunks ->
//! the file's in-order queue -> hidden temporary file or multipart upload
//! -> rename or completion when every file is complete.
//!
//! # Guarantees
//!
//! * File `i` holds global rows `[i*N/W, (i+1)*N/W)` in order, so output
//!   bytes depend on the settings and seed, never on the thread count.
//! * Nothing appears under a final name unless the whole run succeeded
//!   ([`strata_store::output`], [`strata_store::upload`]); for a dataset,
//!   unless every table's files are complete.
//! * Memory is bounded by the number of threads times one row group (a
//!   laid-out table: by its memory limit).
//! * A laid-out table holds the plain run's rows, whatever the threads,
//!   parts or memory limit; a partition's rows and their order do not
//!   depend on the threads or the memory limit, nor its files' bytes on
//!   the threads.
//!
//! # Example
//!
//! ```
//! use strata_parquet::{Compression, Format};
//! use strata_pipeline::generate::{GenerateConfig, generate};
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
//!     page_checksums: true,
//!     part: Default::default(),
//!     layout: None,
//!     field_ids: None,
//!     row_offset: 0,
//! };
//! let summary = generate(&strata_gen::contacts(42), &cfg, &|_| {}).unwrap();
//! assert_eq!(summary.records, 10_000);
//! assert_eq!(summary.files.len(), 2);
//! assert!(dir.path().join("contacts_1.parquet").exists());
//! ```

pub mod clock;
mod counts;
mod error;
pub mod flow;
pub mod generate;
pub mod history;
pub mod layout;
mod stop;
pub mod table;
pub mod verify;

pub use error::Error;
