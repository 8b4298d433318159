//! The external sort: inputs larger than the memory limit are cut into
//! sorted runs that are spilled to disk, then merged by the shared k-way
//! [`merge`](crate::merge).
//!
//! Batches are read in input order into a run until the run's in-memory
//! size reaches its budget (two fifths of the limit). A full run is sorted
//! on all cores (keys encoded per batch in parallel, then a parallel sort
//! of 24-byte entries: a 16-byte key prefix and the batch and row, the
//! full keys compared only on equal prefixes) and written as one LZ4
//! Parquet file in the spill directory (past the page cache, through a
//! [`DirectWriter`](strata_store::direct::DirectWriter)), gathered from
//! the batches in chunks on all threads as it is written; the run's
//! dictionaries are shared first, so a chunk copies only their keys
//! ([`crate::dictionaries`]). When more
//! runs exist than one merge may open at once within the limit, groups of
//! neighbouring runs are merged into longer runs first; the last merge
//! writes the output. Runs keep input order and the merge gives ties to
//! the earlier run, so the result is the stable sort of the whole input,
//! the same rows in the same order as the in-memory sort.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, atomic::Ordering},
};
use strata_store::FromStore as _;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::{
    basic::Compression,
    file::properties::{EnabledStatistics, WriterProperties},
};
use strata_parquet::writer::ParquetWriter;

use strata_parquet::DEFAULT_ROW_GROUP_ROWS;

use crate::{
    config::{SortConfig, SortKey},
    error::Error,
    merge::{MergeConfig, MergedFile, merge_files},
    order::{Sorter, encode_run, order_run},
    output::{join_parts, output_properties, write_in_order},
    progress::SortProgress,
    publish::Staging,
};

/// Rows a spilled run's row groups hold at most: small groups keep what
/// the merge holds per run small.
const SPILL_GROUP_ROWS: usize = 64 * 1024;

/// The most runs one merge reads at once.
pub(crate) const MAX_FAN_IN: usize = 256;

/// A zstd compression context at strata's level after compressing a
/// 1 MiB page (`ZSTD_sizeof_CCtx`: 582,680 bytes at level 1).
pub(crate) const ZSTD_CONTEXT_BYTES: f64 = 582_680.0;

/// The most rows and bytes of a page of a spilled run.
pub(crate) const SPILL_PAGE_ROWS: usize = 1024;

/// See [`SPILL_PAGE_ROWS`].
pub(crate) const SPILL_PAGE_BYTES: usize = 32 * 1024;

/// The start of a spill directory's name; the process id and a random
/// part follow.
const SPILL_PREFIX: &str = ".strata-sort-spill-";

/// The spill directory of one sort and the runs in it; removed with
/// everything in it when dropped, whether the sort succeeded or failed,
/// and by the next sort spilling to the same place when the process was
/// killed.
pub(crate) struct Spill {
    dir: tempfile::TempDir,
    /// Sorted runs, in input order.
    pub(crate) runs: Vec<PathBuf>,
    /// Bytes written to the spill directory, all levels.
    pub(crate) bytes: u64,
    /// Merge levels run before the final merge.
    pub(crate) levels: usize,
    /// Runs spilled from the input.
    pub(crate) spilled: usize,
    keys: Vec<SortKey>,
    sorter: Sorter,
    schema: SchemaRef,
    /// In-memory bytes per row, from the first run.
    pub(crate) row_bytes: Option<f64>,
    progress: Option<Arc<SortProgress>>,
}

impl std::fmt::Debug for Spill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spill")
            .field("dir", &self.dir.path())
            .field("runs", &self.runs.len())
            .finish_non_exhaustive()
    }
}

impl Spill {
    /// A new spill directory under `parent`.
    pub(crate) fn create(
        parent: &Path,
        schema: SchemaRef,
        keys: &[SortKey],
        progress: Option<Arc<SortProgress>>,
    ) -> Result<Spill, Error> {
        // Named for the process, so that the spill directories of killed
        // sorts can be told from those of running ones, and removed.
        strata_store::output::remove_orphans(parent, SPILL_PREFIX);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{SPILL_PREFIX}{}-", std::process::id()))
            .tempdir_in(parent)
            .map_err(|e| Error::io("create a spill directory in", parent, e))?;
        if let Some(p) = &progress
            && let Ok(mut d) = p.spill_dir.lock()
        {
            *d = Some(dir.path().to_path_buf());
        }
        Ok(Spill {
            dir,
            runs: Vec::new(),
            bytes: 0,
            levels: 0,
            spilled: 0,
            sorter: Sorter::new(&schema, keys)?,
            keys: keys.to_vec(),
            schema,
            row_bytes: None,
            progress,
        })
    }

    /// Memory a merge holds for each run it reads, whatever its batch
    /// size, for rows of `row_bytes` in memory: per leaf column, the page
    /// reader's 8 KiB buffer and a page compressed and decompressed (a
    /// page of [`SPILL_PAGE_ROWS`] rows of the leaf's share of the row, at
    /// most [`SPILL_PAGE_BYTES`]).
    pub(crate) fn run_reader_bytes(&self, row_bytes: f64) -> f64 {
        let leaves = self.leaves();
        let page = (SPILL_PAGE_ROWS as f64 * row_bytes / leaves).min(SPILL_PAGE_BYTES as f64);
        leaves * (8.0 * 1024.0 + 2.0 * page)
    }

    /// The runs' leaf columns, as their Parquet schema has them.
    fn leaves(&self) -> f64 {
        let leaves = parquet::arrow::ArrowSchemaConverter::new()
            .convert(&self.schema)
            .map_or(self.schema.fields().len(), |d| d.num_columns());
        leaves.max(1) as f64
    }

    /// Memory an output file of the final merge holds whatever its row
    /// groups hold: the three buffers of `write_buffer` bytes it is
    /// written through, and a zstd context per leaf column.
    pub(crate) fn output_writer_bytes(&self, write_buffer: usize) -> f64 {
        strata_store::direct::memory_bytes(write_buffer) as f64 + self.leaves() * ZSTD_CONTEXT_BYTES
    }

    /// The spill directory.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn run_path(&self, level: usize, n: usize) -> PathBuf {
        self.dir.path().join(format!("run-{level}-{n:08}.parquet"))
    }

    /// Sorts `batches` (one run, in input order) and writes them as the
    /// next run file.
    pub(crate) fn spill(&mut self, batches: Vec<RecordBatch>, memory: u64) -> Result<(), Error> {
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        if rows == 0 {
            return Ok(());
        }
        if self.row_bytes.is_none() {
            self.row_bytes = Some(memory as f64 / rows as f64);
        }
        let keys = encode_run(&self.sorter, &batches)?;
        let order = order_run(&keys);
        drop(keys);
        let batches = crate::dictionaries::share(batches)?;
        let path = self.run_path(0, self.runs.len());
        let file = std::fs::File::create(&path).map_err(|e| Error::io("create", &path, e))?;
        let sink = strata_store::direct::DirectWriter::new(file, &path)
            .map_err(|e| Error::io("open", &path, e))?;
        let mut writer = ParquetWriter::try_new(sink, self.schema.clone(), spill_properties())
            .map_err(|e| Error::file(&path, e))?;
        write_in_order(&batches, &order, &mut writer, &path)?;
        let sink = writer.finish().map_err(|e| Error::file(&path, e))?;
        sink.finish().map_err(|e| Error::io("write", &path, e))?;
        self.bytes += std::fs::metadata(&path)
            .map_err(|e| Error::io("stat", &path, e))?
            .len();
        self.runs.push(path);
        self.spilled += 1;
        if let Some(p) = &self.progress {
            p.runs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// The merge settings for runs of this sort.
    fn merge_config(&self, batch_rows: usize, threads: usize) -> MergeConfig {
        MergeConfig {
            key: self.keys.iter().map(|k| k.column.clone()).collect(),
            order: self.keys.iter().map(|k| k.options).collect(),
            batch_rows,
            threads,
            target_file_bytes: u64::MAX,
            properties: Some(spill_properties()),
            replace: false,
            rows_written: self.progress.as_ref().map(|p| Arc::clone(&p.rows_merged)),
            write_buffer_bytes: strata_store::direct::CHUNK_BYTES,
        }
    }

    /// Merges groups of neighbouring runs until at most `fan_in` remain.
    pub(crate) fn reduce(&mut self, fan_in: usize, batch_rows: usize) -> Result<(), Error> {
        let fan_in = fan_in.max(2);
        while self.runs.len() > fan_in {
            self.levels += 1;
            let level = self.levels;
            let mut next = Vec::new();
            let runs = std::mem::take(&mut self.runs);
            for (g, group) in runs.chunks(fan_in).enumerate() {
                if let [one] = group {
                    next.push(one.clone());
                    continue;
                }
                let name = format!("run-{level}-{g:08}.parquet");
                let cfg = self.merge_config(batch_rows, 1);
                let files = merge_files(group, self.dir.path(), &|_| name.clone(), &cfg)?;
                for f in files {
                    self.bytes += f.bytes;
                    next.push(f.path);
                }
                for r in group {
                    let _ = std::fs::remove_file(r);
                }
            }
            self.runs = next;
        }
        Ok(())
    }

    /// In-memory bytes per row of the runs (from the first run).
    pub(crate) fn row_bytes(&self) -> f64 {
        self.row_bytes.unwrap_or(64.0).max(1.0)
    }

    /// Merges the runs, of `rows` rows in all, into the output of the sort
    /// `cfg`, in `staging`: one file when `one_file`, else part files.
    /// Sizes the merges' batches, fan-in, threads and the output's row
    /// groups (at least `row_group_rows`, the inputs' largest, when it
    /// fits) to the memory limit; merges first down to what one merge may
    /// open, on `pool`.
    pub(crate) fn merge_into(
        &mut self,
        cfg: &SortConfig,
        rows: u64,
        row_group_rows: Option<usize>,
        staging: &Staging,
        one_file: bool,
        pool: &rayon::ThreadPool,
    ) -> Result<Vec<MergedFile>, Error> {
        let row_bytes = self.row_bytes();
        let threads = match cfg.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        // Half the limit for the runs being read: each run's page readers
        // (a fixed cost) and its batch (with its keys and the rows gathered
        // from it, about three times the batch). The rest is for the output's
        // open row groups and the chunk being gathered.
        let merge_budget = (cfg.memory_limit / 2) as f64;
        let reader_bytes = self.run_reader_bytes(row_bytes);
        // Fewer rows per batch than this cost more in per-batch work than a
        // further merge level costs.
        const MIN_MERGE_ROWS: usize = 512;
        let per_run = |batch_rows: usize| batch_rows as f64 * row_bytes * 3.0;
        let rows_for = |fan_in: usize, threads: usize| -> usize {
            let readers = (fan_in * threads) as f64;
            let for_batches = (merge_budget - readers * reader_bytes).max(0.0);
            (for_batches / readers / per_run(1)).clamp(0.0, 8192.0) as usize
        };
        let mut fan_in = self.runs.len().clamp(2, MAX_FAN_IN);
        while fan_in > 2 && rows_for(fan_in, 1) < MIN_MERGE_ROWS {
            fan_in = (fan_in / 2).max(2);
        }
        let level_rows = rows_for(fan_in, 1).max(16);
        if let Some(p) = &cfg.progress {
            let levels = (self.runs.len().max(1) as f64)
                .log(fan_in as f64)
                .ceil()
                .max(1.0);
            p.rows_to_merge.store(
                rows.saturating_mul(levels as u64),
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        pool.install(|| self.reduce(fan_in, level_rows))?;
        // Each thread of the final merge writes a file of its own, through
        // three buffers and a zstd context per leaf column, whatever its row
        // groups hold (at 8 threads and a 256 MiB limit that passed the limit
        // twice over). They come out of the quarter of the limit left beside
        // the readers and the row groups: buffers of 1/128 of the limit (1 to
        // 8 MiB).
        let write_buffer = usize::try_from(cfg.memory_limit / 128)
            .map_or(strata_store::direct::CHUNK_BYTES, |b| {
                b.clamp(1 << 20, strata_store::direct::CHUNK_BYTES)
            });
        let writer_bytes = self.output_writer_bytes(write_buffer);
        // As many threads as the budget gives every reader of the final
        // merge at least `MIN_MERGE_ROWS` rows (each thread reads every run)
        // and their writers fit.
        let mut final_threads = threads.clamp(1, 64);
        while final_threads > 1
            && (rows_for(self.runs.len().max(1), final_threads) < MIN_MERGE_ROWS
                || final_threads as f64 * writer_bytes > (cfg.memory_limit / 4) as f64)
        {
            final_threads -= 1;
        }
        let final_rows = rows_for(self.runs.len().max(1), final_threads).max(16);
        // A quarter of the limit for the open output row groups, shared by
        // the threads.
        let group_rows =
            ((cfg.memory_limit / 4) as f64 / row_bytes / final_threads as f64) as usize;
        let group_rows = group_rows.clamp(
            1024,
            row_group_rows.unwrap_or(DEFAULT_ROW_GROUP_ROWS).max(1024),
        );
        let merge_cfg = MergeConfig {
            threads: final_threads,
            target_file_bytes: cfg.target_file_bytes.unwrap_or(u64::MAX),
            properties: Some(output_properties(group_rows, cfg.compression)?),
            write_buffer_bytes: write_buffer,
            ..MergeConfig::default()
        };
        // Everything is written into the staging directory and published
        // when complete.
        if !one_file {
            return self.finish(
                staging.dir(),
                &|n| format!("part-{n:08}.parquet"),
                merge_cfg,
                final_rows,
            );
        }
        if final_threads == 1 {
            let name = staging
                .file()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            return self.finish(staging.dir(), &|_| name.clone(), merge_cfg, final_rows);
        }
        // Key ranges merged on every thread into parts in the spill
        // directory, then joined into the output without decoding.
        let parts = self.finish(
            self.dir(),
            &|n| format!("final-{n:08}.parquet"),
            merge_cfg,
            final_rows,
        )?;
        Ok(vec![join_parts(&parts, &staging.file())?])
    }

    /// The final merge of the runs into `name(n)` files in `dir`.
    pub(crate) fn finish(
        &self,
        dir: &Path,
        name: &(dyn Fn(usize) -> String + Sync),
        mut cfg: MergeConfig,
        batch_rows: usize,
    ) -> Result<Vec<MergedFile>, Error> {
        let base = self.merge_config(batch_rows, cfg.threads);
        cfg.key = base.key;
        cfg.order = base.order;
        cfg.batch_rows = batch_rows;
        cfg.rows_written = base.rows_written;
        merge_files(&self.runs, dir, name, &cfg)
    }
}

/// How runs are written: LZ4 (cheap to write and read back), no
/// dictionaries and no statistics (a run is read once, whole), pages of
/// at most 4,096 rows and 128 KiB.
fn spill_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::LZ4_RAW)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_max_row_group_row_count(Some(SPILL_GROUP_ROWS))
        // Small pages: a merge holds a page per column of every run it
        // reads, compressed and decoded (1,024-row pages cut the merge's
        // peak RSS at a 54 MiB limit from 181 to 163 MiB against 4,096,
        // and the sort ran no slower).
        .set_data_page_row_count_limit(SPILL_PAGE_ROWS)
        .set_data_page_size_limit(SPILL_PAGE_BYTES)
        .build()
}
