//! The run of a table with a [`Layout`]: tasks of rows generated and
//! sorted by (partition, sort key) on all threads, held in task order up
//! to a third of the memory limit and spilled past it, then each
//! partition's files written on all threads.

use std::{
    collections::BTreeMap,
    fs,
    io::BufWriter,
    ops::Range,
    path::{Path, PathBuf},
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{Schema, SchemaRef, SortOptions};
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use serde::Serialize;
use strata_gen::{BatchGenerator, RowGroupSize};
use strata_layout::{PartitionField, hive};
use strata_parquet::writer::ParquetWriter;
use strata_row::{KeyColumns, RowEncoder, Rows, SortField};
use strata_sort::{SortKey, Sorter};
use strata_store::FromStore as _;
use strata_store::output::{PendingDir, PendingFile};

use super::{Layout, Target, partition_type};
use crate::{
    Error,
    counts::{ColumnCounts, FileSummary, count_batch, empty_counts},
};

/// Rows generated, sorted and held as one piece of work: large enough
/// that a task's rows of one partition are seldom only a few, small
/// enough that every thread has several tasks.
const TASK_ROWS: u64 = 1 << 17;

/// Rows of a partition encoded on trial, for its bytes per row.
const TRIAL_ROWS: usize = 1 << 16;

/// Rows per batch of the merges of spilled runs.
const MERGE_BATCH_ROWS: usize = 8192;

/// The keys of a layout over a table's batches: each row's partition
/// values and its position in (partition, sort key) order.
struct Keys {
    /// Each partition field and its column in the table.
    fields: Vec<(PartitionField, usize)>,
    /// The encoder of the partition values (none without partitions).
    partition: Option<RowEncoder>,
    /// The encoder of (partition values, sort columns) (none when rows keep
    /// their generation order).
    order: Option<RowEncoder>,
    /// The sort keys in the table (columns, or fields inside structs).
    sort: Option<KeyColumns>,
    /// The table's columns written in the files.
    file_columns: Vec<usize>,
    /// The files' schema.
    file_schema: SchemaRef,
    /// The sort keys within a partition, on the files' columns (a key
    /// on a dropped identity partition column is constant there).
    file_keys: Vec<SortKey>,
}

impl Keys {
    fn new(layout: &Layout, schema: &Schema) -> Result<Keys, Error> {
        let fields: Vec<(PartitionField, usize)> = layout
            .fields()
            .iter()
            .map(|f| {
                let i = schema.index_of(&f.source).map_err(|e| {
                    Error::InvalidConfig(format!("layout.partition_by `{}`: {e}", f.text))
                })?;
                Ok((f.clone(), i))
            })
            .collect::<Result<_, Error>>()?;
        let part_fields: Vec<SortField> = fields
            .iter()
            .map(|(f, _)| SortField::new(partition_type(f, schema)))
            .collect();
        let row = |e: strata_row::Error| Error::InvalidConfig(format!("layout: {e}"));
        let partition = if part_fields.is_empty() {
            None
        } else {
            Some(RowEncoder::new(part_fields.clone()).map_err(row)?)
        };
        let mut order_fields = part_fields;
        let sort = if layout.keys().is_empty() {
            None
        } else {
            let named: Vec<(&str, SortOptions)> = layout
                .keys()
                .iter()
                .map(|k| (k.column.as_str(), k.options))
                .collect();
            let keys = KeyColumns::new(schema, &named)
                .map_err(|e| Error::InvalidConfig(format!("layout.sort_by: {e}")))?;
            order_fields.extend(keys.encoder().fields().iter().cloned());
            Some(keys)
        };
        let order = if order_fields.is_empty() {
            None
        } else {
            Some(RowEncoder::new(order_fields).map_err(row)?)
        };
        let file_columns = layout.file_columns(schema);
        let file_schema = SchemaRef::new(schema.project(&file_columns)?);
        let file_keys = super::keys_in(layout.keys(), &file_schema);
        Ok(Keys {
            fields,
            partition,
            order,
            sort,
            file_columns,
            file_schema,
            file_keys,
        })
    }

    /// Each partition field's values for the rows of `batch`.
    fn partition_values(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>, Error> {
        self.fields
            .iter()
            .map(|(f, i)| {
                f.apply(batch.column(*i))
                    .map_err(|e| Error::InvalidConfig(e.to_string()))
            })
            .collect()
    }

    /// The directory of the partition of row `i` (values `values`).
    fn directory(&self, values: &[ArrayRef], i: usize) -> String {
        let segments: Vec<(&str, Option<String>)> = self
            .fields
            .iter()
            .zip(values)
            .map(|((f, _), v)| (f.name.as_str(), hive::human(f, v.as_ref(), i)))
            .collect();
        hive::directory(&segments)
    }

    /// `batch` (the table's schema) as a [`Chunk`]: its file columns, rows
    /// in (partition, sort key) order, cut into one piece per partition.
    fn chunk(&self, batch: &RecordBatch) -> Result<Chunk, Error> {
        let values = self.partition_values(batch)?;
        let n = batch.num_rows();
        let order: Option<Vec<u32>> = match &self.order {
            Some(enc) => {
                let mut columns = values.clone();
                if let Some(sort) = &self.sort {
                    columns.extend(sort.arrays(batch).map_err(row_error)?);
                }
                let rows = enc.encode(&columns).map_err(row_error)?;
                Some(Sorter::sorted_indices(&rows).map_err(sort_error)?)
            }
            None => None,
        };
        let projected = batch.project(&self.file_columns)?;
        let sorted = match &order {
            Some(idx) => take(&projected, idx)?,
            None => projected,
        };
        let at = |k: usize| order.as_ref().map_or(k, |o| o[k] as usize);
        let mut pieces = Vec::new();
        match &self.partition {
            None => pieces.push(Piece {
                key: Vec::new(),
                dir: String::new(),
                rows: 0..n,
            }),
            Some(enc) => {
                let keys: Rows = enc.encode(&values).map_err(row_error)?;
                let mut start = 0;
                for k in 1..=n {
                    if k == n || keys.row(at(k)).as_bytes() != keys.row(at(start)).as_bytes() {
                        pieces.push(Piece {
                            key: keys.row(at(start)).as_bytes().to_vec(),
                            dir: self.directory(&values, at(start)),
                            rows: start..k,
                        });
                        start = k;
                    }
                }
            }
        }
        let bytes = sorted.get_array_memory_size() as u64;
        Ok(Chunk {
            batch: sorted,
            pieces,
            bytes,
        })
    }
}

fn row_error(e: strata_row::Error) -> Error {
    Error::InvalidConfig(format!("layout: {e}"))
}

fn sort_error(e: strata_sort::Error) -> Error {
    Error::InvalidConfig(format!("layout: {e}"))
}

/// `batch`'s rows at `idx`, the columns gathered on all threads.
fn take(batch: &RecordBatch, idx: &[u32]) -> Result<RecordBatch, Error> {
    let indices = UInt32Array::from(idx.to_vec());
    let columns = batch
        .columns()
        .par_iter()
        .map(|c| arrow_select::take::take(c.as_ref(), &indices, None))
        .collect::<Result<Vec<_>, _>>()?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(idx.len()));
    Ok(RecordBatch::try_new_with_options(
        batch.schema(),
        columns,
        &options,
    )?)
}

/// One task's rows, sorted, and where each partition's rows are.
struct Chunk {
    batch: RecordBatch,
    pieces: Vec<Piece>,
    bytes: u64,
}

/// The rows of one partition in a [`Chunk`].
struct Piece {
    key: Vec<u8>,
    dir: String,
    rows: Range<usize>,
}

/// One partition of the run.
struct Partition {
    dir: String,
    rows: u64,
    /// Its spilled runs, each sorted, in task order.
    runs: Vec<PathBuf>,
}

/// The chunks in task order, the partitions seen, and the spill.
struct Collector {
    next: usize,
    waiting: BTreeMap<usize, Chunk>,
    held: Vec<Chunk>,
    held_bytes: u64,
    partitions: BTreeMap<Vec<u8>, Partition>,
    spill: Option<tempfile::TempDir>,
    spilled_files: usize,
    spill_bytes: u64,
}

/// What a run of a table with a layout left: its files complete in a
/// hidden directory, not yet visible.
pub(crate) struct LayoutStaged {
    /// The hidden directory; its commit moves the files into place.
    pub(crate) tree: PendingDir,
    /// The files, paths relative to the output directory.
    pub(crate) files: Vec<FileSummary>,
    /// Per-column counts.
    pub(crate) columns: Vec<ColumnCounts>,
    /// Partitions written.
    pub(crate) partitions: usize,
    /// Bytes spilled.
    pub(crate) spill_bytes: u64,
    /// Threads used.
    pub(crate) threads: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The run's shared state.
struct Run<'a, G: BatchGenerator> {
    generator: &'a G,
    cfg: &'a Target,
    layout: &'a Layout,
    keys: Keys,
    props: WriterProperties,
    tasks: Vec<Range<u64>>,
    next_task: AtomicUsize,
    failed: AtomicBool,
    error: Mutex<Option<Error>>,
    collector: Mutex<Collector>,
    counts: Mutex<Vec<ColumnCounts>>,
    progress: &'a (dyn Fn(u64) + Sync),
    interrupt: Option<&'a AtomicBool>,
    /// Bytes of chunks held before they are spilled.
    budget: u64,
}

/// Writes the table of `generator` as `layout` says into a hidden
/// directory in `cfg.dir`, with Parquet writer properties `props`.
///
/// # Errors
/// Generation, encoding and IO errors; more partitions than the layout
/// allows; [`Error::Interrupted`]. The hidden directory and the spill
/// are removed on any error.
pub(crate) fn stage_layout<G: BatchGenerator>(
    generator: &G,
    cfg: &Target,
    layout: &Layout,
    props: WriterProperties,
    interrupt: Option<&AtomicBool>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<LayoutStaged, Error> {
    let schema = generator.schema();
    let keys = Keys::new(layout, &schema)?;
    let props = with_layout(props, layout, &keys)?;
    let rows = cfg.rows.clone();
    let step = TASK_ROWS.max(cfg.batch_rows as u64);
    let tasks: Vec<Range<u64>> = (rows.start..rows.end)
        .step_by(step as usize)
        .map(|s| s..(s + step).min(rows.end))
        .collect();
    let tree = PendingDir::within(&cfg.dir, &cfg.stem, cfg.overwrite)?;
    let run = Run {
        generator,
        cfg,
        layout,
        keys,
        props,
        tasks,
        next_task: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        error: Mutex::new(None),
        collector: Mutex::new(Collector {
            next: 0,
            waiting: BTreeMap::new(),
            held: Vec::new(),
            held_bytes: 0,
            partitions: BTreeMap::new(),
            spill: None,
            spilled_files: 0,
            spill_bytes: 0,
        }),
        counts: Mutex::new(empty_counts(&schema)),
        progress,
        interrupt,
        budget: (layout.memory_limit / 3).max(1),
    };
    let threads = cfg.threads.clamp(1, run.tasks.len().max(1));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads.max(1))
        .build()
        .map_err(|e| Error::InvalidConfig(format!("cannot start the layout's threads: {e}")))?;
    pool.install(|| {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| run.worker());
            }
        })
    });
    if let Some(e) = lock(&run.error).take() {
        return Err(e);
    }
    let files = pool.install(|| run.write_partitions(tree.path()))?;
    let collector = run
        .collector
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    Ok(LayoutStaged {
        tree,
        files,
        columns: run.counts.into_inner().unwrap_or_else(|p| p.into_inner()),
        partitions: collector.partitions.len(),
        spill_bytes: collector.spill_bytes,
        threads,
    })
}

/// `props` with the layout's row groups, pages and sorting columns.
fn with_layout(
    props: WriterProperties,
    layout: &Layout,
    keys: &Keys,
) -> Result<WriterProperties, Error> {
    let mut b = props.into_builder();
    if let Some(RowGroupSize::Rows(n)) = layout.row_group_size {
        b = b.set_max_row_group_row_count(Some(usize::try_from(n).unwrap_or(usize::MAX)));
    }
    if !keys.file_keys.is_empty() {
        let parquet_schema =
            parquet::arrow::ArrowSchemaConverter::new().convert(&keys.file_schema)?;
        let mut sorting = Vec::with_capacity(keys.file_keys.len());
        for k in &keys.file_keys {
            let path: Vec<&str> = k.column.split('.').collect();
            let column_idx = (0..parquet_schema.num_columns())
                .find(|&c| parquet_schema.column(c).path().parts() == path.as_slice())
                .ok_or_else(|| {
                    Error::InvalidConfig(format!(
                        "layout.sort_by `{}`: not a leaf column the files can record as sorted",
                        k.column
                    ))
                })?;
            sorting.push(parquet::file::metadata::SortingColumn {
                column_idx: i32::try_from(column_idx).unwrap_or(i32::MAX),
                descending: k.options.descending,
                nulls_first: k.options.nulls_first,
            });
        }
        b = b.set_sorting_columns(Some(sorting));
    }
    Ok(b.build())
}

impl<G: BatchGenerator> Run<'_, G> {
    fn fail(&self, e: Error) {
        let mut slot = lock(&self.error);
        if slot.is_none() {
            *slot = Some(e);
        }
        self.failed.store(true, Ordering::Relaxed);
    }

    fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|i| i.load(Ordering::Relaxed))
    }

    fn worker(&self) {
        let mut scratch = G::Scratch::default();
        let mut counts = empty_counts(&self.generator.schema());
        loop {
            if self.failed.load(Ordering::Relaxed) {
                return;
            }
            if self.interrupted() {
                self.fail(Error::Interrupted);
                return;
            }
            let task = self.next_task.fetch_add(1, Ordering::Relaxed);
            let Some(rows) = self.tasks.get(task) else {
                break;
            };
            let result = self
                .generator
                .generate(rows.start, (rows.end - rows.start) as usize, &mut scratch)
                .map_err(Error::from)
                .and_then(|b| {
                    count_batch(&b, &mut counts);
                    self.keys.chunk(&b)
                })
                .and_then(|c| {
                    (self.progress)(rows.end - rows.start);
                    self.deliver(task, c)
                });
            if let Err(e) = result {
                self.fail(e);
                return;
            }
        }
        let mut total = lock(&self.counts);
        for (t, c) in total.iter_mut().zip(&counts) {
            t.nulls += c.nulls;
            if let Some(v) = c.list_values {
                *t.list_values.get_or_insert(0) += v;
            }
        }
    }

    /// Takes chunk `task`; every chunk next in task order is held, its
    /// partitions counted, and the held chunks spilled past the budget.
    fn deliver(&self, task: usize, chunk: Chunk) -> Result<(), Error> {
        let mut c = lock(&self.collector);
        c.waiting.insert(task, chunk);
        while let Some(chunk) = {
            let next = c.next;
            c.waiting.remove(&next)
        } {
            c.next += 1;
            for p in &chunk.pieces {
                let rows = (p.rows.end - p.rows.start) as u64;
                match c.partitions.get_mut(&p.key) {
                    Some(part) => part.rows += rows,
                    None => {
                        if c.partitions.len() as u64 >= self.layout.max_partitions {
                            return Err(Error::InvalidConfig(format!(
                                "table `{}` has more than --max-partitions ({}) partitions by {} \
                                 (a new one: {}); raise --max-partitions or partition more coarsely",
                                self.generator.name(),
                                self.layout.max_partitions,
                                self.layout.partition_by.join(", "),
                                p.dir
                            )));
                        }
                        c.partitions.insert(
                            p.key.clone(),
                            Partition {
                                dir: p.dir.clone(),
                                rows,
                                runs: Vec::new(),
                            },
                        );
                    }
                }
            }
            c.held_bytes += chunk.bytes;
            c.held.push(chunk);
            if c.held_bytes > self.budget {
                self.spill(&mut c)?;
            }
        }
        Ok(())
    }

    /// Each partition's held rows, in task order, as batches.
    fn held_pieces(c: &Collector) -> BTreeMap<Vec<u8>, Vec<RecordBatch>> {
        let mut by: BTreeMap<Vec<u8>, Vec<RecordBatch>> = BTreeMap::new();
        for chunk in &c.held {
            for p in &chunk.pieces {
                by.entry(p.key.clone())
                    .or_default()
                    .push(chunk.batch.slice(p.rows.start, p.rows.end - p.rows.start));
            }
        }
        by
    }

    /// Writes every held partition's rows as a sorted run in the spill
    /// directory, on all threads, and lets the chunks go.
    fn spill(&self, c: &mut Collector) -> Result<(), Error> {
        if c.spill.is_none() {
            let mut b = tempfile::Builder::new();
            b.prefix(".strata-layout-spill-");
            // By default beside the output, on its disk (a temporary
            // directory may live in memory).
            let parent = self.layout.spill_dir.as_deref().unwrap_or(&self.cfg.dir);
            let dir = b
                .tempdir_in(parent)
                .map_err(|e| Error::io("create the spill directory in", parent, e))?;
            c.spill = Some(dir);
        }
        let Some(dir) = c.spill.as_ref().map(|d| d.path().to_path_buf()) else {
            return Ok(());
        };
        let pieces: Vec<(Vec<u8>, Vec<RecordBatch>)> = Self::held_pieces(c).into_iter().collect();
        let first = c.spilled_files;
        let written: Vec<(Vec<u8>, PathBuf, u64)> = pieces
            .into_par_iter()
            .enumerate()
            .map(|(k, (key, batches))| {
                let path = dir.join(format!("run-{}.parquet", first + k));
                let sorted = self.sorted(&batches)?;
                let bytes = write_run(&path, &sorted, &self.keys.file_schema)?;
                Ok((key, path, bytes))
            })
            .collect::<Result<_, Error>>()?;
        c.spilled_files += written.len();
        for (key, path, bytes) in written {
            c.spill_bytes += bytes;
            if let Some(p) = c.partitions.get_mut(&key) {
                p.runs.push(path);
            }
        }
        c.held.clear();
        c.held_bytes = 0;
        Ok(())
    }

    /// `batches` (one partition's rows in task order) as one batch in
    /// sort-key order; equal keys keep their order.
    fn sorted(&self, batches: &[RecordBatch]) -> Result<RecordBatch, Error> {
        let one = arrow_select::concat::concat_batches(&self.keys.file_schema, batches)?;
        if self.keys.file_keys.is_empty() || batches.len() <= 1 {
            return Ok(one);
        }
        let sorter =
            Sorter::new(&self.keys.file_schema, &self.keys.file_keys).map_err(sort_error)?;
        let rows = sorter.encode(&one).map_err(sort_error)?;
        let idx = Sorter::sorted_indices(&rows).map_err(sort_error)?;
        take(&one, &idx)
    }

    /// Writes every partition's files under `root`, on all threads; the
    /// files come back in partition order, paths relative to `root`.
    fn write_partitions(&self, root: &Path) -> Result<Vec<FileSummary>, Error> {
        let mut c = lock(&self.collector);
        // Held rows of partitions that spilled join their runs; all held
        // rows are spilled when writing them from memory could pass the
        // limit (a partition's rows copied twice on top of the held ones).
        let spilled_any = c.partitions.values().any(|p| !p.runs.is_empty());
        if (spilled_any || c.held_bytes.saturating_mul(3) > self.layout.memory_limit)
            && !c.held.is_empty()
        {
            self.spill(&mut c)?;
        }
        let mut pieces = Self::held_pieces(&c);
        c.held.clear();
        let jobs: Vec<(String, Vec<RecordBatch>, Vec<PathBuf>)> = c
            .partitions
            .iter()
            .map(|(key, p)| {
                (
                    p.dir.clone(),
                    pieces.remove(key).unwrap_or_default(),
                    p.runs.clone(),
                )
            })
            .collect();
        drop(c);
        let one_partition = jobs.len() == 1;
        let written: Vec<Vec<FileSummary>> = jobs
            .into_par_iter()
            .map(|(dir, batches, runs)| {
                if self.failed.load(Ordering::Relaxed) {
                    return Err(Error::Cancelled);
                }
                if self.interrupted() {
                    self.failed.store(true, Ordering::Relaxed);
                    return Err(Error::Interrupted);
                }
                let out = root.join(&dir);
                fs::create_dir_all(&out).map_err(|e| Error::io("create directory", &out, e))?;
                let files = if runs.is_empty() {
                    let sorted = self.sorted(&batches)?;
                    drop(batches);
                    self.write_files(&out, &sorted)
                } else {
                    self.merge_runs(&out, &runs, one_partition)
                };
                let files = files.inspect_err(|_| self.failed.store(true, Ordering::Relaxed))?;
                Ok(files
                    .into_iter()
                    .map(|mut f| {
                        f.path = Path::new(&dir).join(f.path.file_name().unwrap_or_default());
                        f
                    })
                    .collect())
            })
            .collect::<Result<_, Error>>()?;
        Ok(written.into_iter().flatten().collect())
    }

    /// The path of file `k` of a partition directory `dir`.
    fn file_path(&self, dir: &Path, k: usize) -> PathBuf {
        dir.join(format!("{}_{k}.parquet", self.cfg.stem))
    }

    /// Writes one partition's sorted rows into files in `dir`, cut at the
    /// target size.
    fn write_files(&self, dir: &Path, batch: &RecordBatch) -> Result<Vec<FileSummary>, Error> {
        let n = batch.num_rows();
        let mut files = Vec::new();
        let Some(target) = self.layout.target_file_size else {
            files.push(self.write_file(&self.file_path(dir, 0), batch, None)?);
            return Ok(files);
        };
        // A file's bytes as a fixed part (footer, indexes) and bytes per
        // row: from trial encodings of the first rows (not needed when the
        // rows in memory fit one file), then from the files written.
        let (fixed, mut per_row) = if batch.get_array_memory_size() as u64 <= target {
            (0.0, 0.0)
        } else {
            self.trial_sizes(batch, target)?
        };
        // The first sort key of each row, to cut files where it changes
        // (within a twentieth of the rows wanted): then no two files of a
        // partition share a value of it.
        let first_key = match (per_row > 0.0, self.keys.file_keys.first()) {
            (true, Some(k)) => {
                let sorter = Sorter::new(&self.keys.file_schema, std::slice::from_ref(k))
                    .map_err(sort_error)?;
                Some(sorter.encode(batch).map_err(sort_error)?)
            }
            _ => None,
        };
        let (mut done_rows, mut done_bytes) = (0u64, 0u64);
        let mut at = 0;
        while at < n {
            let rest = n - at;
            let rows = if per_row <= 0.0 {
                rest
            } else {
                let want = (((target as f64 - fixed) / per_row).round() as usize).max(1);
                // A last file of less than a tenth of the target joins
                // this one.
                if rest <= want + want / 10 {
                    rest
                } else {
                    first_key
                        .as_ref()
                        .and_then(|k| nearest_change(k, at + want, want / 20, n))
                        .map_or(want, |cut| cut - at)
                }
            };
            let f = self.write_file(
                &self.file_path(dir, files.len()),
                &batch.slice(at, rows),
                (per_row > 0.0).then_some(per_row),
            )?;
            done_rows += f.rows;
            done_bytes += f.bytes;
            files.push(f);
            let measured = (done_bytes as f64 - files.len() as f64 * fixed) / done_rows as f64;
            if measured > 0.0 {
                per_row = measured;
            }
            at += rows;
        }
        Ok(files)
    }

    /// A file's bytes as (fixed, per row) near `target` bytes: a trial
    /// encoding of up to [`TRIAL_ROWS`] first rows of `batch` guesses the
    /// rows of a file of `target` bytes, then two trials of that many rows
    /// (at most [`TRIAL_ROWS`]) and half as many fit a line (dictionaries
    /// and footers make bytes per row depend on the rows).
    fn trial_sizes(&self, batch: &RecordBatch, target: u64) -> Result<(f64, f64), Error> {
        let r1 = batch.num_rows().min(TRIAL_ROWS);
        let b1 = self.trial_bytes(&batch.slice(0, r1))? as f64;
        let guess = (target as f64 / (b1 / r1.max(1) as f64)).round() as usize;
        let hi = guess.clamp(1, r1);
        let lo = hi / 2;
        if lo == 0 {
            return Ok((0.0, b1 / r1.max(1) as f64));
        }
        let b_hi = if hi == r1 {
            b1
        } else {
            self.trial_bytes(&batch.slice(0, hi))? as f64
        };
        let b_lo = self.trial_bytes(&batch.slice(0, lo))? as f64;
        let per_row = (b_hi - b_lo) / (hi - lo) as f64;
        if per_row <= 0.0 {
            return Ok((0.0, b_hi / hi as f64));
        }
        Ok(((b_hi - hi as f64 * per_row).max(0.0), per_row))
    }

    /// The bytes of `rows` encoded as a file.
    fn trial_bytes(&self, rows: &RecordBatch) -> Result<usize, Error> {
        let mut w = ParquetWriter::with_encoder(
            Vec::new(),
            self.keys.file_schema.clone(),
            self.props.clone(),
            self.cfg.encoder,
        )?;
        w.set_page_checksums(self.cfg.page_checksums);
        w.write(rows)?;
        Ok(w.finish()?.len())
    }

    /// Writes `batch` as the file `path`. Where the layout gives row
    /// groups in bytes, each row group's rows are that many bytes over the
    /// bytes per row: `bpr` (or a trial's) for the first, then the file's
    /// own so far.
    fn write_file(
        &self,
        path: &Path,
        batch: &RecordBatch,
        bpr: Option<f64>,
    ) -> Result<FileSummary, Error> {
        let (pending, sink) = PendingFile::create_direct(path.to_path_buf(), false)?;
        let mut w = ParquetWriter::with_encoder(
            BufWriter::with_capacity(1 << 20, sink),
            self.keys.file_schema.clone(),
            self.props.clone(),
            self.cfg.encoder,
        )?;
        w.set_page_checksums(self.cfg.page_checksums);
        match self.layout.row_group_size {
            Some(RowGroupSize::Bytes(g)) => {
                let mut bpr = match bpr {
                    Some(b) => b,
                    None => self.trial_sizes(batch, g)?.1,
                };
                let mut at = 0;
                while at < batch.num_rows() {
                    let rows =
                        ((g as f64 / bpr.max(1e-9)) as usize).clamp(1, batch.num_rows() - at);
                    w.write(&batch.slice(at, rows))?;
                    w.flush()?;
                    at += rows;
                    bpr = w.bytes_written() as f64 / at as f64;
                }
            }
            _ => w.write(batch)?,
        }
        let buffered = w.finish()?;
        let f = buffered
            .into_inner()
            .map_err(|e| Error::io("write", path, e.into_error()))?;
        let bytes = f.position();
        f.finish().map_err(|e| Error::io("write", path, e))?;
        pending.commit()?;
        let groups = row_groups(path)?;
        Ok(FileSummary {
            path: path.to_path_buf(),
            first_row: self.cfg.rows.clone().start,
            rows: batch.num_rows() as u64,
            bytes,
            groups,
        })
    }

    /// Merges one partition's sorted runs into its files in `dir`.
    fn merge_runs(
        &self,
        dir: &Path,
        runs: &[PathBuf],
        all_threads: bool,
    ) -> Result<Vec<FileSummary>, Error> {
        let stem = &self.cfg.stem;
        let name = |k: usize| format!("{stem}_{k}.parquet");
        let key: Vec<String> = self
            .keys
            .file_keys
            .iter()
            .map(|k| k.column.clone())
            .collect();
        let order: Vec<SortOptions> = self.keys.file_keys.iter().map(|k| k.options).collect();
        let mut props = self.props.clone();
        if let (Some(RowGroupSize::Bytes(g)), Some(bpr)) =
            (self.layout.row_group_size, spilled_bytes_per_row(runs))
        {
            props = props
                .into_builder()
                .set_max_row_group_row_count(Some(((g as f64 / bpr) as usize).max(1)))
                .build();
        }
        if key.is_empty() {
            // No order within the partition: the runs, one after another.
            return self.copy_runs(dir, runs);
        }
        let cfg = strata_sort::merge::MergeConfig {
            key,
            order,
            target_file_bytes: self.layout.target_file_size.unwrap_or(u64::MAX),
            batch_rows: MERGE_BATCH_ROWS,
            threads: if all_threads { self.cfg.threads } else { 1 },
            properties: Some(props),
            replace: false,
            ..Default::default()
        };
        let merged = strata_sort::merge::merge_files(runs, dir, &name, &cfg)
            .map_err(|e| Error::InvalidConfig(format!("merging the spilled runs: {e}")))?;
        merged
            .into_iter()
            .map(|m| {
                Ok(FileSummary {
                    groups: row_groups(&m.path)?,
                    path: m.path,
                    first_row: self.cfg.rows.clone().start,
                    rows: m.rows,
                    bytes: m.bytes,
                })
            })
            .collect()
    }

    /// The runs of a partition without sort keys, read in order into its
    /// files (cut at the target size by the bytes per row of the runs).
    fn copy_runs(&self, dir: &Path, runs: &[PathBuf]) -> Result<Vec<FileSummary>, Error> {
        let mut batches = Vec::new();
        for r in runs {
            batches.extend(read_run(r)?);
        }
        let one = arrow_select::concat::concat_batches(&self.keys.file_schema, &batches)?;
        drop(batches);
        self.write_files(dir, &one)
    }
}

/// The row nearest `at` (within `slack` rows either side, inside
/// `1..n`) whose key differs from the row before it.
fn nearest_change(keys: &Rows, at: usize, slack: usize, n: usize) -> Option<usize> {
    let changes =
        |i: usize| i >= 1 && i < n && keys.row(i).as_bytes() != keys.row(i - 1).as_bytes();
    (0..=slack).find_map(|d| {
        if changes(at.saturating_sub(d)) {
            Some(at.saturating_sub(d))
        } else if changes(at + d) {
            Some(at + d)
        } else {
            None
        }
    })
}

/// Writes `batch` to the spill file `path` (lz4, no statistics); returns
/// its bytes.
fn write_run(path: &Path, batch: &RecordBatch, schema: &SchemaRef) -> Result<u64, Error> {
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::LZ4_RAW)
        .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
        .set_max_row_group_row_count(Some(1 << 16))
        .build();
    let f = fs::File::create(path).map_err(|e| Error::io("create", path, e))?;
    let mut w =
        ParquetWriter::try_new(BufWriter::with_capacity(1 << 20, f), schema.clone(), props)?;
    w.write(batch)?;
    let b = w.finish()?;
    let f = b
        .into_inner()
        .map_err(|e| Error::io("write", path, e.into_error()))?;
    let bytes = f.metadata().map_err(|e| Error::io("write", path, e))?.len();
    Ok(bytes)
}

/// The batches of spill file `path`.
fn read_run(path: &Path) -> Result<Vec<RecordBatch>, Error> {
    let f = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)?
        .with_batch_size(MERGE_BATCH_ROWS)
        .build()?;
    reader.collect::<Result<Vec<_>, _>>().map_err(Error::from)
}

/// Bytes per row of the spill files `runs` (their rows' sizes in the
/// files, a guide to the output's).
fn spilled_bytes_per_row(runs: &[PathBuf]) -> Option<f64> {
    let (mut rows, mut bytes) = (0u64, 0u64);
    for r in runs {
        let f = fs::File::open(r).ok()?;
        let md = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&f)
            .ok()?;
        rows += md.file_metadata().num_rows() as u64;
        bytes += f.metadata().ok()?.len();
    }
    (rows > 0).then(|| bytes as f64 / rows as f64)
}

/// Row groups of the Parquet file `path`.
fn row_groups(path: &Path) -> Result<usize, Error> {
    let f = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let md = parquet::file::metadata::ParquetMetaDataReader::new().parse_and_finish(&f)?;
    Ok(md.num_row_groups())
}

/// Existing files a laid-out run of `cfg` would replace: `STEM_*.parquet`
/// in the output directory and in its partition directories (`name=value`,
/// at any depth).
pub(crate) fn conflicting_files(cfg: &Target) -> Vec<PathBuf> {
    let prefix = format!("{}_", cfg.stem);
    let ext = ".parquet";
    let mut out = Vec::new();
    let mut dirs = vec![cfg.dir.clone()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if name.starts_with('.') {
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if name.contains('=') {
                    dirs.push(path);
                }
            } else if name.starts_with(&prefix) && name.ends_with(ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A dry run's view of a layout: the partitions expected and the files
/// of each, estimated from a sample of the rows.
#[derive(Debug, Clone, Serialize)]
pub struct LayoutPlan {
    /// The layout.
    pub layout: Layout,
    /// Rows sampled.
    pub sample_rows: u64,
    /// Partitions found in the sample.
    pub sampled_partitions: u64,
    /// Partitions expected in the whole run (Chao1's estimate from the
    /// sample's partitions seen once and twice).
    pub partitions: u64,
    /// Bytes per row of the sample, encoded.
    pub bytes_per_row: f64,
    /// Bytes expected in all.
    pub bytes: u64,
    /// Files expected per partition (on average).
    pub files_per_partition: f64,
    /// The largest partitions of the sample: directory and share of rows.
    pub largest: Vec<(String, f64)>,
}

/// Samples the rows of a run of `generator` with `cfg` and `layout`: the
/// partitions found and expected, and the files of each; refuses a run
/// expected to pass `--max-partitions`.
///
/// # Errors
/// [`Error::InvalidConfig`] when the estimate passes the limit; the
/// generator's and encoder's errors.
pub fn plan_layout<G: BatchGenerator>(
    generator: &G,
    cfg: &Target,
    layout: &Layout,
    props: WriterProperties,
    encode: bool,
) -> Result<LayoutPlan, Error> {
    let schema = generator.schema();
    let keys = Keys::new(layout, &schema)?;
    let props = with_layout(props, layout, &keys)?;
    let rows = cfg.rows.clone();
    let total = rows.end - rows.start;
    // Sixteen stretches spread over the rows.
    let stretches = 16u64;
    let each = (total / stretches).clamp(1, 4096);
    let mut scratch = G::Scratch::default();
    let mut counts: BTreeMap<Vec<u8>, (String, u64)> = BTreeMap::new();
    let mut sample_rows = 0u64;
    let mut bytes = 0u64;
    let mut encoded_rows = 0u64;
    for s in 0..stretches.min(total) {
        let start = rows.start + total * s / stretches.min(total);
        let n = each.min(rows.end - start);
        let b = generator.generate(start, n as usize, &mut scratch)?;
        sample_rows += b.num_rows() as u64;
        let chunk = keys.chunk(&b)?;
        for p in &chunk.pieces {
            let e = counts.entry(p.key.clone()).or_insert((p.dir.clone(), 0));
            e.1 += (p.rows.end - p.rows.start) as u64;
        }
        if encode {
            let mut w =
                ParquetWriter::try_new(Vec::new(), keys.file_schema.clone(), props.clone())?;
            w.write(&chunk.batch)?;
            bytes += w.finish()?.len() as u64;
            encoded_rows += chunk.batch.num_rows() as u64;
        }
    }
    let seen = counts.len() as u64;
    let f1 = counts.values().filter(|c| c.1 == 1).count() as f64;
    let f2 = counts.values().filter(|c| c.1 == 2).count() as f64;
    let chao1 = seen as f64
        + if f2 > 0.0 {
            f1 * f1 / (2.0 * f2)
        } else {
            f1 * (f1 - 1.0) / 2.0
        };
    let partitions = (chao1.round() as u64).min(total).max(seen.min(1).max(seen));
    if partitions > layout.max_partitions {
        return Err(Error::InvalidConfig(format!(
            "table `{}`: partitioning by {} gives about {partitions} partitions ({seen} in a \
             sample of {sample_rows} rows), more than --max-partitions ({}); raise \
             --max-partitions or partition more coarsely",
            generator.name(),
            layout.partition_by.join(", "),
            layout.max_partitions
        )));
    }
    let bytes_per_row = bytes as f64 / encoded_rows.max(1) as f64;
    let all_bytes = (bytes_per_row
        * total as f64
        * generator_rows_per_row(sample_rows, n_of(&rows, stretches, each)))
        as u64;
    let per_partition = all_bytes as f64 / partitions.max(1) as f64;
    let files_per_partition = match layout.target_file_size {
        Some(t) => (per_partition / t as f64).ceil().max(1.0),
        None => 1.0,
    };
    let mut largest: Vec<(String, f64)> = counts
        .into_values()
        .map(|(d, c)| (d, c as f64 / sample_rows.max(1) as f64))
        .collect();
    largest.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    largest.truncate(5);
    Ok(LayoutPlan {
        layout: layout.clone(),
        sample_rows,
        sampled_partitions: seen,
        partitions,
        bytes_per_row,
        bytes: all_bytes,
        files_per_partition,
        largest,
    })
}

/// Rows asked of the generator in the sample (a child table's batches
/// hold more rows than the rows asked).
fn n_of(rows: &Range<u64>, stretches: u64, each: u64) -> u64 {
    let total = rows.end - rows.start;
    (0..stretches.min(total))
        .map(|s| {
            let start = rows.start + total * s / stretches.min(total);
            each.min(rows.end - start)
        })
        .sum()
}

/// Table rows per row asked of the generator.
fn generator_rows_per_row(sample_rows: u64, asked: u64) -> f64 {
    sample_rows as f64 / asked.max(1) as f64
}
