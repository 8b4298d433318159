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
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::{
    basic::Compression,
    file::properties::{EnabledStatistics, WriterProperties},
};
use rayon::prelude::*;
use strata_parquet::writer::ParquetWriter;
use strata_row::Rows;

use crate::{
    Error, SortKey, Sorter,
    merge::{MergeConfig, MergedFile, merge_files},
};

/// Rows a spilled run's row groups hold at most: small groups keep what
/// the merge holds per run small.
const SPILL_GROUP_ROWS: usize = 64 * 1024;

/// Rows per chunk gathered into a spill file.
pub(crate) const SPILL_CHUNK_ROWS: usize = 16 * 1024;

/// The most runs one merge reads at once.
pub(crate) const MAX_FAN_IN: usize = 256;

/// A zstd compression context at strata's level after compressing a
/// 1 MiB page (`ZSTD_sizeof_CCtx`: 582,680 bytes at level 1).
pub(crate) const ZSTD_CONTEXT_BYTES: f64 = 582_680.0;

/// The most rows and bytes of a page of a spilled run.
pub(crate) const SPILL_PAGE_ROWS: usize = 1024;
/// See [`SPILL_PAGE_ROWS`].
pub(crate) const SPILL_PAGE_BYTES: usize = 32 * 1024;

/// How far a sort has come, for a progress display that polls it from
/// another thread.
#[derive(Debug, Default)]
pub struct SortProgress {
    /// Rows of the inputs, when known (the sum of their footers' counts).
    pub input_rows: AtomicU64,
    /// Rows read so far.
    pub rows_read: AtomicU64,
    /// Runs spilled so far.
    pub runs: AtomicU64,
    /// Rows written by the merges so far (every merge level counts).
    pub rows_merged: Arc<AtomicU64>,
    /// Rows the merges write in all (the input's rows once per level).
    pub rows_to_merge: AtomicU64,
    /// The spill directory while the sort has one, for a signal handler
    /// that removes it before the process exits.
    pub spill_dir: std::sync::Mutex<Option<PathBuf>>,
    /// Where the output stands, for [`SortProgress::interrupt`].
    pub(crate) output: std::sync::Mutex<Publication>,
}

/// Where a sort's output stands.
#[derive(Debug, Default)]
pub(crate) enum Publication {
    /// Not started: no staging directory yet.
    #[default]
    Writing,
    /// Being written into this hidden staging directory.
    Staged(PathBuf),
    /// Moved to its name: complete.
    Published,
    /// Interrupted before it was published: it never will be.
    Interrupted,
}

impl SortProgress {
    /// For a signal handler, before it ends the process: stops the sort
    /// from publishing its output and removes what it has written so far
    /// (the staged output and the spill directory), unless the output is
    /// published already. A publication under way is waited for. Returns
    /// whether the output is complete under its name (and so was kept).
    ///
    /// The sort's threads may still be writing while this runs; once the
    /// staging directory is gone they cannot make new files in it, and
    /// their errors end the sort (see [`SortProgress::interrupted`]).
    pub fn interrupt(&self) -> bool {
        let complete = {
            let mut state = self.publication();
            match std::mem::replace(&mut *state, Publication::Interrupted) {
                Publication::Published => {
                    *state = Publication::Published;
                    true
                }
                Publication::Staged(dir) => {
                    remove_until_gone(&dir);
                    false
                }
                Publication::Writing | Publication::Interrupted => false,
            }
        };
        let spill = self.spill_dir.lock().ok().and_then(|d| d.clone());
        if let Some(d) = spill {
            remove_until_gone(&d);
        }
        complete
    }

    /// Whether [`SortProgress::interrupt`] stopped the sort before its
    /// output was published: an error the sort returns after that comes
    /// from the removal of its files, not from the inputs or the disk.
    pub fn interrupted(&self) -> bool {
        matches!(*self.publication(), Publication::Interrupted)
    }

    /// The output's state, locked.
    pub(crate) fn publication(&self) -> std::sync::MutexGuard<'_, Publication> {
        self.output
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Removes the directory `dir` and everything in it, again until it is
/// gone: threads still writing may create a file in it between the
/// listing and the last `rmdir` (once it is gone, no file can be created
/// in it).
fn remove_until_gone(dir: &Path) {
    for _ in 0..100 {
        let _ = std::fs::remove_dir_all(dir);
        if !dir.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

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

/// How a sort's Parquet output is written: by `compression`, in row
/// groups of at most `group_rows` rows.
pub(crate) fn output_properties(
    group_rows: usize,
    compression: strata_parquet::Compression,
) -> Result<WriterProperties, Error> {
    Ok(WriterProperties::builder()
        .set_compression(strata_parquet::encoder::parquet_codec(compression)?)
        .set_max_row_group_row_count(Some(group_rows.max(1)))
        .build())
}

/// One row of a run being sorted: its key's first sixteen bytes as two
/// big-endian numbers (zero padded), and where it is; 24 bytes.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    prefix: [u64; 2],
    pub(crate) batch: u32,
    pub(crate) row: u32,
}

/// A key's first sixteen bytes as two big-endian numbers, zero padded: a
/// smaller pair means a smaller key; equal pairs need the keys. Sixteen
/// bytes hold two encoded 64-bit keys but for the last byte, so most
/// comparisons never leave the array being sorted.
pub(crate) fn prefix(k: &[u8]) -> [u64; 2] {
    let mut b = [0u8; 16];
    let n = k.len().min(16);
    b[..n].copy_from_slice(&k[..n]);
    let (hi, lo) = b.split_at(8);
    [
        u64::from_be_bytes(hi.try_into().unwrap_or_default()),
        u64::from_be_bytes(lo.try_into().unwrap_or_default()),
    ]
}

/// Writes the rows of `batches` in `order` through `writer` (to `path`):
/// chunks are gathered on all threads (`interleave`), a few at a time, and
/// written in order.
pub(crate) fn write_in_order<W: std::io::Write + Send>(
    batches: &[RecordBatch],
    order: &[Entry],
    writer: &mut ParquetWriter<W>,
    path: &Path,
) -> Result<(), Error> {
    let refs: Vec<&RecordBatch> = batches.iter().collect();
    let gather = |pairs: &[(usize, usize)]| -> Result<RecordBatch, Error> {
        let schema = refs[0].schema();
        let columns = (0..schema.fields().len())
            .map(|c| {
                let parts: Vec<&dyn arrow_array::Array> =
                    refs.iter().map(|b| b.column(c).as_ref()).collect();
                crate::dictionaries::interleave(&parts, pairs)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(pairs.len()));
        Ok(RecordBatch::try_new_with_options(
            schema, columns, &options,
        )?)
    };
    write_gathered(&gather, order, writer, path)
}

/// Gathers the rows (batch, row) names into one batch.
pub(crate) type Gather<'a> = dyn Fn(&[(usize, usize)]) -> Result<RecordBatch, Error> + Sync + 'a;

/// Writes the rows `order` names through `writer` (to `path`): chunks of
/// [`SPILL_CHUNK_ROWS`] gathered by `gather` on all threads, a few at a
/// time, and written in order.
pub(crate) fn write_gathered<W: std::io::Write + Send>(
    gather: &Gather<'_>,
    order: &[Entry],
    writer: &mut ParquetWriter<W>,
    path: &Path,
) -> Result<(), Error> {
    let threads = rayon::current_num_threads().max(1);
    for group in order.chunks(SPILL_CHUNK_ROWS * threads) {
        let gathered = group
            .par_chunks(SPILL_CHUNK_ROWS)
            .map(|part| {
                let pairs: Vec<(usize, usize)> = part
                    .iter()
                    .map(|e| (e.batch as usize, e.row as usize))
                    .collect();
                gather(&pairs)
            })
            .collect::<Result<Vec<_>, _>>()?;
        for b in &gathered {
            writer.write(b).map_err(|e| Error::file(path, e))?;
        }
    }
    Ok(())
}

/// The encoded keys of every batch, encoded on all threads.
pub(crate) fn encode_run(sorter: &Sorter, batches: &[RecordBatch]) -> Result<Vec<Rows>, Error> {
    if batches.len() > u32::MAX as usize || batches.iter().any(|b| b.num_rows() > u32::MAX as usize)
    {
        return Err(Error::InvalidConfig(
            "a run has too many batches or rows".into(),
        ));
    }
    batches.par_iter().map(|b| sorter.encode(b)).collect()
}

/// Bytes an entry of [`order_run`] takes.
pub(crate) const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

/// The rows of a run (given by their encoded `keys`, batch by batch) in
/// sorted order; equal keys keep input order.
pub(crate) fn order_run(keys: &[Rows]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::with_capacity(keys.iter().map(Rows::num_rows).sum());
    for (b, k) in keys.iter().enumerate() {
        entries.extend(k.iter().enumerate().map(|(r, row)| Entry {
            prefix: prefix(row.as_bytes()),
            batch: b as u32,
            row: r as u32,
        }));
    }
    // Ties on the whole key go to the earlier row, which makes the
    // unstable sort stable.
    entries.par_sort_unstable_by(|x, y| {
        x.prefix
            .cmp(&y.prefix)
            .then_with(|| {
                keys[x.batch as usize]
                    .row(x.row as usize)
                    .as_bytes()
                    .cmp(keys[y.batch as usize].row(y.row as usize).as_bytes())
            })
            .then_with(|| (x.batch, x.row).cmp(&(y.batch, y.row)))
    });
    entries
}
