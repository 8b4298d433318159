//! The run of a table with a [`Layout`]: tasks of rows generated on all
//! threads, each row's partition and sort key found ([`Chunk`]), the
//! chunks held in task order up to a third of the memory limit and each
//! partition's rows spilled as a sorted run past it, then every
//! partition's files written on all threads ([`Files`]).

use std::{
    collections::BTreeMap,
    ops::Range,
    path::{Path, PathBuf},
    sync::{
        Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use strata_gen::{BatchGenerator, RowGroupSize};
use strata_store::FromStore as _;
use strata_store::output::PendingDir;

use super::{
    Layout, Target,
    files::Files,
    keys::{Chunk, Keys, Ordered},
};
use crate::{
    Error,
    counts::{ColumnCounts, FileSummary, count_batch, empty_counts},
    stop::{Stop, lock},
};

/// Rows generated and keyed as one piece of work: large enough that a
/// task's rows of one partition are seldom only a few, small enough that
/// every thread has several tasks.
const TASK_ROWS: u64 = 1 << 16;

/// A partition's rows among the held chunks: each chunk and its rows of
/// the partition, in task order.
type Parts<'c> = Vec<(&'c Chunk, std::ops::Range<usize>)>;

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
    /// The spill directory (never committed: dropping it removes it).
    spill: Option<PendingDir>,
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

/// The run's shared state.
struct Run<'a, G: BatchGenerator> {
    generator: &'a G,
    cfg: &'a Target,
    layout: &'a Layout,
    keys: Keys,
    props: WriterProperties,
    tasks: Vec<Range<u64>>,
    next_task: AtomicUsize,
    stop: Stop<'a>,
    collector: Mutex<Collector>,
    counts: Mutex<Vec<ColumnCounts>>,
    progress: &'a (dyn Fn(u64) + Sync),
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
    let keys = Keys::new(layout, &schema, cfg.field_ids.as_deref())?;
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
        stop: Stop::new(interrupt),
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
    if let Some(e) = run.stop.take() {
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

/// `props` with the layout's row groups and sorting columns.
pub(super) fn with_layout(
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
    /// The writer of partitions' files, their leaves encoded on all
    /// threads when `parallel_leaves`.
    fn files(&self, parallel_leaves: bool) -> Files<'_> {
        Files {
            keys: &self.keys,
            props: &self.props,
            layout: self.layout,
            cfg: self.cfg,
            parallel_leaves,
        }
    }

    fn worker(&self) {
        let mut scratch = G::Scratch::default();
        let mut counts = empty_counts(&self.generator.schema());
        // Files cut at a size are cut where the first sort key changes.
        let first_keys = self.layout.target_file_size.is_some();
        loop {
            if !self.stop.go_on() {
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
                    let chunk = self.keys.chunk(&b, first_keys);
                    // The rows are copied into the chunk (or shared with
                    // it, when nothing groups them): the generator's
                    // buffers go back to it, not to the allocator.
                    self.generator.recycle(b, &mut scratch);
                    chunk
                })
                .and_then(|c| {
                    (self.progress)(rows.end - rows.start);
                    self.deliver(task, c)
                });
            if let Err(e) = result {
                self.stop.fail(e);
                return;
            }
        }
        let mut total = lock(&self.counts);
        for (t, c) in total.iter_mut().zip(&counts) {
            t.add(c);
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
                let rows = p.rows.len() as u64;
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

    /// Each partition's held rows: (chunk, rows) in task order.
    fn held_pieces(held: &[Chunk]) -> BTreeMap<&[u8], Parts<'_>> {
        let mut by: BTreeMap<&[u8], Parts<'_>> = BTreeMap::new();
        for chunk in held {
            for p in &chunk.pieces {
                by.entry(p.key.as_slice())
                    .or_default()
                    .push((chunk, p.rows.clone()));
            }
        }
        by
    }

    /// Writes every held partition's rows as a sorted run in the spill
    /// directory, on all threads, and lets the chunks go.
    fn spill(&self, c: &mut Collector) -> Result<(), Error> {
        if c.spill.is_none() {
            // By default beside the output, on its disk (a temporary
            // directory may live in memory). Named `.STEM-spill.PID.strata-tmp`:
            // removed when the run ends, and by the next run for the same
            // stem when a killed one left it.
            let parent = self.layout.spill_dir.as_deref().unwrap_or(&self.cfg.dir);
            let dir = PendingDir::create(&parent.join(format!("{}-spill", self.cfg.stem)))
                .map_err(|e| match e {
                    strata_store::Error::Io { source, .. } => {
                        Error::io("create the spill directory in", parent, source)
                    }
                    e => Error::Store(e),
                })?;
            c.spill = Some(dir);
        }
        let Some(dir) = c.spill.as_ref().map(|d| d.path().to_path_buf()) else {
            return Ok(());
        };
        let held = std::mem::take(&mut c.held);
        let pieces: Vec<(&[u8], Parts<'_>)> = Self::held_pieces(&held).into_iter().collect();
        let first = c.spilled_files;
        let files = self.files(pieces.len() == 1);
        let written: Vec<(Vec<u8>, PathBuf, u64)> = pieces
            .into_par_iter()
            .enumerate()
            .map(|(k, (key, parts))| {
                let path = dir.join(format!("run-{}.parquet", first + k));
                let rows = Ordered::of(&self.keys, &parts)?;
                let bytes = files.write_run(&path, &rows)?;
                Ok((key.to_vec(), path, bytes))
            })
            .collect::<Result<_, Error>>()?;
        drop(held);
        c.spilled_files += written.len();
        for (key, path, bytes) in written {
            c.spill_bytes += bytes;
            if let Some(p) = c.partitions.get_mut(&key) {
                p.runs.push(path);
            }
        }
        c.held_bytes = 0;
        Ok(())
    }

    /// Writes every partition's files under `root`, on all threads; the
    /// files come back in partition order, paths relative to `root`.
    fn write_partitions(&self, root: &Path) -> Result<Vec<FileSummary>, Error> {
        let mut c = lock(&self.collector);
        // The held rows of partitions that spilled join their runs.
        if c.partitions.values().any(|p| !p.runs.is_empty()) && !c.held.is_empty() {
            self.spill(&mut c)?;
        }
        let held = std::mem::take(&mut c.held);
        let mut pieces = Self::held_pieces(&held);
        let jobs: Vec<(String, Parts<'_>, Vec<PathBuf>)> = c
            .partitions
            .iter()
            .map(|(key, p)| {
                (
                    p.dir.clone(),
                    pieces.remove(key.as_slice()).unwrap_or_default(),
                    p.runs.clone(),
                )
            })
            .collect();
        drop(c);
        // One partition alone has every thread for itself.
        let one = jobs.len() == 1;
        let files = self.files(one);
        let threads = if one { self.cfg.threads } else { 1 };
        let written: Vec<Vec<FileSummary>> = jobs
            .into_par_iter()
            .map(|(dir, parts, runs)| {
                if self.stop.failed() {
                    return Err(Error::Cancelled);
                }
                if self.stop.interrupted() {
                    self.stop.mark_failed();
                    return Err(Error::Interrupted);
                }
                let out = root.join(&dir);
                std::fs::create_dir_all(&out)
                    .map_err(|e| Error::io("create directory", &out, e))?;
                let written = if runs.is_empty() {
                    Ordered::of(&self.keys, &parts).and_then(|rows| files.write(&out, &rows))
                } else {
                    files.merge_runs(&out, &runs, threads)
                };
                let written = written.inspect_err(|_| self.stop.mark_failed())?;
                Ok(written
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
}
