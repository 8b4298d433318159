//! `strata report`: a self-contained HTML page that shows a dataset: per
//! table its columns (null shares at each nesting level, statistics,
//! histograms, top values, lengths, key skew), its foreign keys (orphans,
//! fan-out) and its files (sizes, row groups, partitions, key ranges),
//! checked against the spec it was generated from when one is given.
//!
//! # What it owns
//!
//! - [`model`]: what a report holds, plain serde data (every number a
//!   chart shows), so a report is also JSON.
//! - [`collect()`]: reading a dataset into a [`Report`];
//!   [`collect_comparison`] the same for `strata infer --compare`.
//! - [`html`]: drawing a [`Report`] as one page (inline CSS and SVG);
//!   [`write_html`] writes it whole or not at all.
//! - `plan`: a compaction plan's key ranges, for `strata compact plan
//!   --report`.
//!
//! # Data flow
//!
//! inputs -> `strata_infer::input::discover` (a directory per table, a
//! table's directory, files, `s3://` prefixes) -> one scan per table,
//! tables in parallel, through `strata_infer::profile_tables` (per column
//! and nested field: counts, nulls, exact values up to 1,000 distinct,
//! else a HyperLogLog and a heavy-hitters sketch, a reservoir sample,
//! lengths); the same batches feed the spec's
//! `strata_pipeline::verify::Verifier` (the checks of `generate
//! --verify-distribution`, over the spec's fields the files hold) and
//! collect the key columns of the spec's references -> per column a
//! [`model::ColumnReport`] with what the spec's generator gives beside
//! it (`strata_gen::expected`, and the distribution functions of numeric
//! generators) -> references counted exactly (sorted keys merged) ->
//! each file's footer for the layout -> [`Report`] -> [`write_html`].
//!
//! # Guarantees
//!
//! - Exact where it says so: counts, nulls, ranges, orphans and fan-out
//!   are over every row; a histogram from a sample says `sampled`, top
//!   values from the sketch say `top_exact = false` (each count low by at
//!   most the sketch's error), an estimated distinct count says
//!   `distinct_exact = false`.
//! - Deterministic: the same inputs and spec give the same report,
//!   whatever the threads.
//! - Bad input is an error, never a panic: a missing input, an unreadable
//!   or corrupt file. Empty tables, all-null columns and NaN or infinite
//!   floats give empty sections; a spec table without files, or spec
//!   fields the files lack, are notes.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int64Array, RecordBatch, StringArray};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let ids = Int64Array::from_iter_values(1..=1000);
//! let kinds = StringArray::from_iter_values((0..1000).map(|i| ["a", "b", "c"][i % 3]));
//! let batch = RecordBatch::try_from_iter([
//!     ("id", Arc::new(ids) as _),
//!     ("kind", Arc::new(kinds) as _),
//! ])?;
//! let file = std::fs::File::create(dir.path().join("events.parquet"))?;
//! let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None)?;
//! w.write(&batch)?;
//! w.close()?;
//!
//! let input = dir.path().display().to_string();
//! let report = strata_report::collect(&[input], &strata_report::Options::default())?;
//! let kind = &report.tables[0].columns[1];
//! assert_eq!((kind.name.as_str(), kind.top.len(), kind.top[0].count), ("kind", 3, 334));
//! assert_eq!(report.tables[0].layout.as_ref().unwrap().files[0].rows, 1000);
//!
//! let page = dir.path().join("report.html");
//! strata_report::write_html(&report, &page, false)?;
//! assert!(std::fs::read_to_string(&page)?.starts_with("<!DOCTYPE html>"));
//! # Ok(())
//! # }
//! ```

mod error;

pub mod collect;
pub mod html;
pub mod model;
pub mod plan;

pub use collect::{Options, collect, collect_comparison};
pub use error::Error;
pub use model::Report;

/// Writes `report` to `path` as HTML, whole or not at all (through a
/// temporary renamed when complete); an existing file is an error unless
/// `overwrite`.
pub fn write_html(report: &Report, path: &std::path::Path, overwrite: bool) -> Result<(), Error> {
    strata_store::output::write_atomically(
        path,
        html::render(report).as_bytes(),
        overwrite,
        false,
    )?;
    Ok(())
}
