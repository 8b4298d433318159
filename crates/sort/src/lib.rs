//! Sorting Parquet and Arrow IPC files by key columns, of any size, and
//! the stable k-way [`merge`] of sorted Parquet runs that compaction and
//! the external sort share. Both order rows by the same
//! [`strata_row::KeyColumns`] encoding.
//!
//! [`sort_file`] reads the batches of its inputs (each format found from
//! the magic bytes) in order. When the whole sort fits the memory limit it
//! encodes the key columns with [`strata_row::RowEncoder`] into
//! byte-comparable rows, sorts the rows by those bytes (stably) and writes
//! them in the format the output's extension names: into Parquet, gathered
//! chunk by chunk as the direct encoder writes them, past the page cache
//! ([`strata_store::direct::DirectWriter`]); into IPC, gathered whole
//! first. A larger input is cut into runs that are sorted on
//! all cores and spilled to disk as Parquet, then merged (the `external`
//! module).
//!
//! # Modules
//!
//! This file only orchestrates [`sort_file`]. What a sort is asked to do
//! is in `config`; `input` is the one reader of input files; `runs`
//! collects their batches into runs and spills full ones; `order` encodes
//! keys and sorts rows; `in_memory` is the sort that fits the limit and
//! `external` the one that spills and merges; `output` writes sorted rows;
//! `publish` keeps the output out of sight until it is complete;
//! `progress` is what a progress display and a signal handler see;
//! `memory` is what a sort needs in memory.
//!
//! # Guarantees
//!
//! * The output has the first input's schema (field and schema metadata,
//!   nullability and dictionary types included) and the same rows.
//! * The sort is stable: rows with equal keys keep their input order, so
//!   the output depends only on the inputs and the keys, never on the
//!   memory limit, the thread count or the number of runs.
//! * Reading holds at most one run (two fifths of the limit) and the
//!   merges size their batches to the limit's other part, on top of what
//!   a sort needs whatever its limit ([`memory_floor`]: the process, the
//!   largest input row group decoded, the output's writer).
//! * The output appears only complete: it is written into a hidden staging
//!   directory and renamed into place when the whole sort is done (the
//!   `publish` module), so no glob of the output sees part of it; an
//!   existing output is replaced only when asked, and never when it is an
//!   input. The spill directory and the staged output are removed however
//!   the sort ends, an interrupt ([`SortProgress::interrupt`]) included.
//! * The output is compressed by [`SortConfig::compression`], Parquet and
//!   IPC alike.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int32Array, RecordBatch};
//! use strata_sort::{SortKey, sort_batch};
//!
//! let batch = RecordBatch::try_from_iter([(
//!     "x",
//!     Arc::new(Int32Array::from(vec![Some(3), None, Some(1)])) as ArrayRef,
//! )])
//! .unwrap();
//! let keys: Vec<SortKey> = vec!["x:desc:nulls_last".parse().unwrap()];
//! let sorted = sort_batch(&batch, &keys).unwrap();
//! let x = sorted.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
//! assert_eq!(x.iter().collect::<Vec<_>>(), vec![Some(3), Some(1), None]);
//! ```

use std::time::Instant;

use strata_parquet::Format;

mod config;
mod dictionaries;
mod error;
mod external;
mod in_memory;
mod input;
mod memory;
pub mod merge;
mod order;
mod output;
mod progress;
mod publish;
mod rows;
mod runs;

pub use config::{ByteSize, DEFAULT_MEMORY_LIMIT, SortConfig, SortKey, SortKeys, SortSummary};
pub use error::Error;
pub use input::{Input, read_input};
pub use memory::{MemoryFloor, memory_floor};
pub use order::{Sorter, prefix as key_prefix, sort_batch};
pub use progress::SortProgress;

use config::{Target, file_len, preflight};
use in_memory::{InMemory, sort_in_memory};
use memory::{memory, peak_rss};
use publish::{Layout, Staging};
use runs::Runs;

/// Sorts the files `cfg.inputs` by `cfg.keys` into `cfg.output`.
///
/// When the whole sort fits in `cfg.memory_limit` it runs in memory: the
/// memory estimate is the input batches' in-memory size, plus the encoded
/// keys, plus the sort's entries, plus the output being built (a Parquet
/// output's open row group; an IPC output's sorted copy, taken to be the
/// input's size again). Otherwise the input is cut into sorted runs
/// of about two fifths of the limit, spilled to a temporary directory (see
/// [`SortConfig::spill_dir`]) and merged; the merges size their batches
/// so that the runs they read and the output row group they build stay
/// within the limit. Both give the same rows in the same order: the stable
/// sort of the inputs in the order given.
///
/// # Errors
/// Bad settings ([`Error::InvalidConfig`], [`Error::Store`]), an
/// unreadable input ([`Error::Read`], [`Error::Store`] (IO)), bad keys (as
/// [`Sorter::new`]), inputs of different schemas, and write errors (of the
/// output or the spill directory). On any error no output file is left,
/// and the spill directory is removed.
pub fn sort_file(cfg: &SortConfig) -> Result<SortSummary, Error> {
    let start = Instant::now();
    let (inputs, target) = preflight(cfg)?;
    let layout = match target {
        Target::File(_) => Layout::File,
        Target::Dir { existed: false } => Layout::NewDir,
        Target::Dir { existed: true } => Layout::IntoDir,
    };
    let staging = Staging::create(&cfg.output, layout, cfg.overwrite, cfg.progress.clone())?;
    let mut input_bytes = 0;
    for i in &inputs {
        input_bytes += file_len(i)?;
    }
    let output_format = match target {
        Target::File(f) => Some(f),
        Target::Dir { .. } => None,
    };
    let mut runs = Runs::new(cfg, inputs[0].clone(), output_format);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads)
        .build()
        .map_err(|e| Error::InvalidConfig(format!("cannot start the sort's threads: {e}")))?;
    let mut input_format = None;
    for path in &inputs {
        let format = Format::detect(path).map_err(Error::from_format)?;
        input_format.get_or_insert(format);
        match format {
            Format::Parquet if pool.current_num_threads() > 1 => {
                let window = runs.budget / 2;
                pool.install(|| input::read_parquet_parallel(path, &mut runs, window))?
            }
            _ => pool.install(|| input::read_into(path, &mut runs))?,
        }
    }
    let read_s = start.elapsed().as_secs_f64();
    let input_format = input_format.unwrap_or(Format::Parquet);
    let Some(schema) = runs.schema.clone() else {
        return Err(Error::InvalidConfig(format!(
            "{} holds no batch to sort",
            inputs[0].display()
        )));
    };
    if let (None, Some(output_format)) = (&runs.spill, output_format) {
        let batches = std::mem::take(&mut runs.pending);
        let staged = staging.file();
        let sorted = sort_in_memory(
            cfg,
            &staged,
            &schema,
            batches,
            runs.batch_rows,
            runs.row_group_rows,
        )?;
        match sorted {
            InMemory::Done(mut s) => {
                s.output_files = staging.publish(&[staged])?;
                s.input_format = input_format;
                s.output_format = output_format;
                s.input_bytes = input_bytes;
                s.read_s = read_s;
                s.elapsed_s = start.elapsed().as_secs_f64();
                s.peak_rss = peak_rss();
                return Ok(s);
            }
            // Over the limit after all: the batches become the only run.
            InMemory::TooLarge(batches) => {
                runs.pending_memory = memory(&batches);
                runs.pending = batches;
            }
        }
    }
    if !runs.pending.is_empty() {
        pool.install(|| runs.spill_pending())?;
    }
    let Some(mut spill) = runs.spill.take() else {
        return Err(Error::InvalidConfig("nothing was read to sort".into()));
    };
    let t = Instant::now();
    let files = spill.merge_into(
        cfg,
        runs.rows,
        runs.row_group_rows,
        &staging,
        output_format.is_some(),
        &pool,
    )?;
    let staged: Vec<_> = files.iter().map(|f| f.path.clone()).collect();
    let output_files = staging.publish(&staged)?;
    let write_s = t.elapsed().as_secs_f64();
    let output_bytes = files.iter().map(|f| f.bytes).sum();
    Ok(SortSummary {
        rows: runs.rows,
        input_format,
        output_format: Format::Parquet,
        input_bytes,
        output_bytes,
        input_memory: (spill.row_bytes() * runs.rows as f64) as u64,
        row_bytes: 0,
        memory_estimate: cfg.memory_limit,
        read_s,
        encode_s: 0.0,
        sort_s: 0.0,
        gather_s: 0.0,
        write_s,
        elapsed_s: start.elapsed().as_secs_f64(),
        runs: spill.spilled as u64,
        merge_levels: spill.levels as u64,
        spill_bytes: spill.bytes,
        output_files,
        peak_rss: peak_rss(),
    })
}

#[cfg(test)]
mod tests;
