//! The stable k-way merge of sorted runs: sorted Parquet inputs in, sorted
//! Parquet outputs of about a target size out. Compaction executes its
//! plans with it.
//!
//! Each input is read one batch at a time; its key columns are encoded
//! once per batch with `strata-row`, so comparing two rows is comparing
//! bytes. A winner tree picks the smallest current row over the inputs
//! (ties go to the earlier input, so the merge is stable); a chunk of
//! picks, as (batch, row) pairs, goes to
//! [`strata_parquet::writer::ParquetWriter::write_gather`], which copies
//! the values straight from the input batches into Parquet pages. Memory is
//! one batch per input plus one chunk and the writer's open row group.
//!
//! With several threads the key space is cut into ranges of about equal
//! rows at the quantiles of sampled keys (only the sampled rows of the key
//! columns are read). Each thread merges one range: for every input it
//! reads a row range that holds the key range plus a few rows on either
//! side (found from the samples, skipping earlier pages by the offset
//! index), and filters by key. Neighbouring row ranges overlap, and every
//! row read is checked for order, so an unsorted input is an error
//! whichever range holds the fault.

use std::{
    fs::File,
    ops::Range,
    path::{Path, PathBuf},
    sync::Arc,
};
use strata_store::FromStore as _;

use arrow_array::RecordBatch;
use arrow_schema::{SchemaRef, SortOptions};
use parquet::{
    arrow::{
        ProjectionMask,
        arrow_reader::{ArrowReaderOptions, RowSelection, RowSelector},
    },
    basic::{Compression, ZstdLevel},
    file::metadata::PageIndexPolicy,
    file::properties::WriterProperties,
};
use strata_parquet::{read, writer::ParquetWriter};
use strata_row::{KeyColumns, Rows};
use strata_store::{direct::DirectWriter, output::PendingFile};

use crate::error::Error;

/// Settings of a merge.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    /// The key columns, most significant first.
    pub key: Vec<String>,
    /// An output file is closed once it reaches about this many bytes.
    pub target_file_bytes: u64,
    /// Rows per input batch and per output chunk.
    pub batch_rows: usize,
    /// Threads; each merges one key range of the inputs into its own
    /// output files (0: one per CPU).
    pub threads: usize,
    /// The order of each key column; empty (or shorter than `key`): the
    /// rest ascending with nulls first, the order compaction keeps.
    pub order: Vec<SortOptions>,
    /// Writer settings of the outputs; `None`: zstd, with dictionaries
    /// where the first input used them.
    pub properties: Option<WriterProperties>,
    /// Replace an output file that exists (else that is an error).
    pub replace: bool,
    /// A counter the merge adds the rows it writes to, as it writes them.
    pub rows_written: Option<Arc<std::sync::atomic::AtomicU64>>,
    /// Bytes of each of the three buffers an output file is written
    /// through ([`strata_store::direct::DirectWriter`]).
    pub write_buffer_bytes: usize,
}

impl Default for MergeConfig {
    /// No key, files of any size, batches of 8,192 rows, one thread per
    /// CPU, ascending order.
    fn default() -> Self {
        MergeConfig {
            key: Vec::new(),
            target_file_bytes: u64::MAX,
            batch_rows: 8192,
            threads: 0,
            order: Vec::new(),
            properties: None,
            replace: false,
            rows_written: None,
            write_buffer_bytes: strata_store::direct::CHUNK_BYTES,
        }
    }
}

/// The key columns `key` of `schema` in `order` (see
/// [`MergeConfig::order`]).
fn ordered_key_columns(
    schema: &SchemaRef,
    key: &[String],
    order: &[SortOptions],
) -> Result<KeyColumns, Error> {
    if order.is_empty() {
        return key_columns(schema, key);
    }
    let named: Vec<(&str, SortOptions)> = key
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), order.get(i).copied().unwrap_or_default()))
        .collect();
    KeyColumns::new(schema, &named).map_err(|e| match e {
        strata_row::Error::UnknownColumn { name, .. } => {
            Error::Invalid(format!("the files have no key column '{name}'"))
        }
        e => Error::Invalid(format!("cannot order by the key: {e}")),
    })
}

/// One file a merge wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedFile {
    /// Its path.
    pub path: PathBuf,
    /// Rows in it.
    pub rows: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// The encoded key of its first row.
    pub min_key: Vec<u8>,
    /// The encoded key of its last row.
    pub max_key: Vec<u8>,
}

/// The key columns `key` of `schema` (ascending, nulls first).
///
/// # Errors
///
/// [`Error::Invalid`] for a key column the schema lacks or cannot order.
pub fn key_columns(schema: &SchemaRef, key: &[String]) -> Result<KeyColumns, Error> {
    KeyColumns::ascending(schema, key).map_err(|e| match e {
        strata_row::Error::UnknownColumn { name, .. } => {
            Error::Invalid(format!("the files have no key column '{name}'"))
        }
        strata_row::Error::UnsupportedKey { source, .. } => {
            Error::Invalid(format!("cannot order by the key: {source}"))
        }
        e => Error::Invalid(format!("cannot order by the key: {e}")),
    })
}

/// Encodes the key columns of `batch`.
///
/// # Errors
///
/// [`Error::Invalid`] when a key column does not match the encoder.
pub fn encode_keys(keys: &KeyColumns, batch: &RecordBatch) -> Result<Rows, Error> {
    keys.encode(batch)
        .map_err(|e| Error::Invalid(format!("cannot encode the key: {e}")))
}

/// One input being merged.
struct Cursor {
    reader: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    batch: Option<RecordBatch>,
    keys: Option<Rows>,
    row: usize,
    /// Rows of `batch` from `end` on are at or above `hi`.
    end: usize,
    /// The id of `batch` in the current output chunk, once used there.
    slot: Option<usize>,
    /// Rows below this key are skipped (until the first row at or above).
    lo: Option<Vec<u8>>,
    /// Rows from the first at or above this key on are not merged here.
    hi: Option<Vec<u8>>,
    /// `hi` was reached: no batch after this one.
    done: bool,
    /// The last key of the batch before, for the order check.
    prev_last: Option<Vec<u8>>,
    path: PathBuf,
}

/// The first of the sorted `keys` at or above `bound`.
fn first_at_or_above(keys: &Rows, bound: &[u8]) -> usize {
    let (mut lo, mut hi) = (0usize, keys.num_rows());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if keys.row(mid).as_bytes() < bound {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Cursor {
    /// Opens `path` to read the rows of `part` (all when `None`).
    fn open(
        path: &Path,
        batch_rows: usize,
        part: Option<(&PartRange, usize)>,
    ) -> Result<(Cursor, SchemaRef), Error> {
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        // With a row range, the offset index (when the file has one) lets
        // the reader skip the pages before it instead of decoding them.
        let options = match part {
            Some(_) => {
                ArrowReaderOptions::new().with_offset_index_policy(PageIndexPolicy::Optional)
            }
            None => ArrowReaderOptions::new(),
        };
        let mut builder = read::open(file, options).map_err(|e| read_error(path, e))?;
        let schema = builder.schema().clone();
        let (mut lo, mut hi) = (None, None);
        if let Some((part, i)) = part {
            let r = &part.rows[i];
            let total = builder.metadata().file_metadata().num_rows().max(0) as u64;
            let (start, end) = (r.start.min(total), r.end.min(total));
            let selection = RowSelection::from(vec![
                RowSelector::skip(start as usize),
                RowSelector::select((end.saturating_sub(start)) as usize),
                RowSelector::skip((total - end) as usize),
            ]);
            builder = builder.with_row_selection(selection);
            lo.clone_from(&part.lo);
            hi.clone_from(&part.hi);
        }
        let reader =
            read::build(builder.with_batch_size(batch_rows)).map_err(|e| read_error(path, e))?;
        Ok((
            Cursor {
                reader,
                batch: None,
                keys: None,
                row: 0,
                end: 0,
                slot: None,
                lo,
                hi,
                done: false,
                prev_last: None,
                path: path.to_path_buf(),
            },
            schema,
        ))
    }

    /// Moves to the next batch with rows in range; false at the end.
    /// Checks that the batch is sorted and starts at or above the last key
    /// of the batch before.
    fn next_batch(&mut self, enc: &KeyColumns, key: &[String]) -> Result<bool, Error> {
        loop {
            let b =
                match read::next_batch(&mut self.reader).map_err(|e| read_error(&self.path, e))? {
                    Some(b) => b,
                    None => {
                        self.batch = None;
                        self.keys = None;
                        self.row = 0;
                        self.end = 0;
                        return Ok(false);
                    }
                };
            let len = b.num_rows();
            if len == 0 {
                continue;
            }
            let keys = encode_keys(enc, &b)?;
            // Past `hi` the rest of the row range is still read, only to
            // check its order: the ranges of neighbouring parts overlap,
            // so together they check every row of the input.
            if (1..len).any(|i| keys.row(i).as_bytes() < keys.row(i - 1).as_bytes())
                || self
                    .prev_last
                    .as_ref()
                    .is_some_and(|p| keys.row(0).as_bytes() < p.as_slice())
            {
                return Err(not_sorted(&self.path, key));
            }
            let last = self.prev_last.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(keys.row(len - 1).as_bytes());
            if self.done {
                continue;
            }
            let start = match &self.lo {
                Some(lo) => first_at_or_above(&keys, lo),
                None => 0,
            };
            if start == len {
                continue;
            }
            self.lo = None;
            let end = match &self.hi {
                Some(hi) => first_at_or_above(&keys, hi),
                None => len,
            };
            self.done = end < len;
            if start >= end {
                continue;
            }
            self.keys = Some(keys);
            self.batch = Some(b);
            self.row = start;
            self.end = end;
            self.slot = None;
            return Ok(true);
        }
    }

    fn key(&self) -> Option<&[u8]> {
        if self.row >= self.end {
            return None;
        }
        self.keys
            .as_ref()
            .and_then(|k| k.get(self.row))
            .map(|r| r.as_bytes())
    }

    /// Moves to the next row.
    fn advance(&mut self) {
        self.row += 1;
    }
}

/// Writer settings for the merged files: [`properties_like`] the first
/// input, zstd.
fn output_properties(
    first: &Path,
    schema: &SchemaRef,
    key: &[String],
) -> Result<WriterProperties, Error> {
    let file = File::open(first).map_err(|e| Error::io("open", first, e))?;
    let reader = read::open(file, ArrowReaderOptions::new()).map_err(|e| read_error(first, e))?;
    Ok(properties_like(
        reader.metadata(),
        schema,
        key,
        Compression::ZSTD(ZstdLevel::default()),
    ))
}

/// Writer settings for the sorted rewrite of files like the one `md`
/// describes: `codec`, dictionaries only for the columns whose data pages
/// use them in its first row group (a column stored plain stays plain,
/// and its values are not hashed for nothing), and `DELTA_BINARY_PACKED`
/// for integer key columns (sorted, their deltas take a few bits each).
pub fn properties_like(
    md: &parquet::file::metadata::ParquetMetaData,
    schema: &SchemaRef,
    key: &[String],
    codec: Compression,
) -> WriterProperties {
    use parquet::basic::Encoding;
    let mut props = WriterProperties::builder().set_compression(codec);
    if let Some(rg) = md.row_groups().first() {
        for col in rg.columns() {
            // The reader keeps the data pages' encodings as a mask unless
            // asked for the full statistics; either form tells.
            let dictionary =
                |e: &Encoding| matches!(e, Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY);
            let plain_data = if let Some(mask) = col.page_encoding_stats_mask() {
                mask.encodings().any(|e| !dictionary(&e))
            } else if let Some(stats) = col.page_encoding_stats() {
                stats.iter().any(|s| {
                    matches!(
                        s.page_type,
                        parquet::basic::PageType::DATA_PAGE
                            | parquet::basic::PageType::DATA_PAGE_V2
                    ) && !dictionary(&s.encoding)
                })
            } else {
                continue;
            };
            if plain_data {
                props = props.set_column_dictionary_enabled(col.column_path().clone(), false);
            }
        }
    }
    for k in key {
        if let Ok(f) = schema.field_with_name(k)
            && matches!(
                f.data_type(),
                arrow_schema::DataType::Int32 | arrow_schema::DataType::Int64
            )
        {
            let path = parquet::schema::types::ColumnPath::from(k.as_str());
            props = props
                .set_column_dictionary_enabled(path.clone(), false)
                .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
        }
    }
    props.build()
}

/// A winner tree over the cursors: each inner node holds the index of the
/// cursor with the smaller current key of its two children (the left one
/// on ties, so the earlier input wins and the merge is stable). Taking a
/// row replays one leaf-to-root path: log2(k) comparisons, not k.
///
/// The comparisons read each cursor's key prefix from one small array
/// (`heads`); only equal prefixes look at the keys themselves.
struct Tournament {
    /// Nodes 1.. hold winners; leaf `size + i` is cursor `i` (padding
    /// leaves hold `usize::MAX`, an exhausted input).
    tree: Vec<usize>,
    size: usize,
    /// [`prefix`] of each cursor's current key; `u128::MAX` once it is
    /// exhausted (and for padding), which only a key of sixteen `0xff`
    /// bytes shares, and that tie goes to the full comparison.
    heads: Vec<u128>,
}

/// A key's first 16 bytes as a big-endian number, zero padded: a smaller
/// number means a smaller key, and equal numbers need a full comparison.
/// An encoded `Int64` key is 9 bytes, so it is whole in here. Loads are
/// made straight from the key (no copy through a buffer, which would stall
/// the load behind the copy's stores).
fn prefix(k: &[u8]) -> u128 {
    let n = k.len();
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        u64::from_be_bytes(w)
    };
    if n >= 16 {
        return (u128::from(word(k)) << 64) | u128::from(word(&k[8..]));
    }
    if n > 8 {
        // The last 8 bytes, shifted so that `k[8..]` lands at the top.
        let lo = word(&k[n - 8..]) << (8 * (16 - n));
        return (u128::from(word(k)) << 64) | u128::from(lo);
    }
    if n == 8 {
        return u128::from(word(k)) << 64;
    }
    let mut b = [0u8; 16];
    b[..n].copy_from_slice(k);
    u128::from_be_bytes(b)
}

/// The inputs of a merge, each at its current key (none once exhausted).
trait Heads {
    fn count(&self) -> usize;
    fn key(&self, i: usize) -> Option<&[u8]>;
}

impl Heads for [Cursor] {
    fn count(&self) -> usize {
        self.len()
    }

    fn key(&self, i: usize) -> Option<&[u8]> {
        self.get(i).and_then(Cursor::key)
    }
}

impl Tournament {
    fn new<H: Heads + ?Sized>(cursors: &H) -> Self {
        let size = cursors.count().next_power_of_two().max(1);
        let mut heads = vec![u128::MAX; size];
        for (i, h) in heads.iter_mut().enumerate().take(cursors.count()) {
            *h = cursors.key(i).map_or(u128::MAX, prefix);
        }
        let mut t = Tournament {
            tree: vec![usize::MAX; 2 * size],
            size,
            heads,
        };
        for (i, slot) in t.tree[size..size + cursors.count()].iter_mut().enumerate() {
            *slot = i;
        }
        for node in (1..size).rev() {
            t.tree[node] = t.better(cursors, t.tree[2 * node], t.tree[2 * node + 1]);
        }
        t
    }

    fn better<H: Heads + ?Sized>(&self, cursors: &H, a: usize, b: usize) -> usize {
        let (x, y) = (self.head(a), self.head(b));
        if x != y {
            return if y < x { b } else { a };
        }
        // Equal prefixes: the rest of the bytes decide (an exhausted
        // cursor is greater than any key).
        match (cursors.key(a), cursors.key(b)) {
            (_, None) => a,
            (None, Some(_)) => b,
            (Some(x), Some(y)) if y < x => b,
            _ => a,
        }
    }

    /// The cursor with the smallest key (`usize::MAX` or an exhausted
    /// cursor when all are).
    fn winner(&self) -> usize {
        self.tree[1]
    }

    /// Cursor `i`'s key prefix (`u128::MAX` when exhausted).
    fn head(&self, i: usize) -> u128 {
        self.heads.get(i).copied().unwrap_or(u128::MAX)
    }

    /// Cursor `i` moved: refresh its prefix and recompute the winners on
    /// its path.
    fn replay<H: Heads + ?Sized>(&mut self, cursors: &H, i: usize) {
        if let Some(h) = self.heads.get_mut(i) {
            *h = cursors.key(i).map_or(u128::MAX, prefix);
        }
        let mut node = (self.size + i) / 2;
        while node >= 1 {
            self.tree[node] = self.better(cursors, self.tree[2 * node], self.tree[2 * node + 1]);
            node /= 2;
        }
    }
}

/// Sorted runs of rows in memory being merged: each run's encoded keys,
/// its rows and the next of them.
struct InMemory<'a> {
    runs: &'a [(&'a Rows, Range<usize>)],
    at: Vec<usize>,
}

impl Heads for InMemory<'_> {
    fn count(&self) -> usize {
        self.runs.len()
    }

    fn key(&self, i: usize) -> Option<&[u8]> {
        let (keys, rows) = self.runs.get(i)?;
        let r = *self.at.get(i)?;
        (r < rows.end).then(|| keys.row(r).as_bytes())
    }
}

/// The stable merge of sorted runs in memory: each run is a range of rows
/// whose encoded keys (`keys.row(r)`) ascend. Returns every row as (run,
/// row) in key order; equal keys come in run order, then row order. With
/// `k` runs a row costs `log2(k)` comparisons of key prefixes.
///
/// A run out of order gives an order that is not sorted, not an error: the
/// caller sorted the runs.
pub fn merge_rows(runs: &[(&Rows, Range<usize>)]) -> Vec<(usize, usize)> {
    let total = runs.iter().map(|(_, r)| r.len()).sum();
    let mut out = Vec::with_capacity(total);
    let mut heads = InMemory {
        runs,
        at: runs.iter().map(|(_, r)| r.start).collect(),
    };
    let mut tree = Tournament::new(&heads);
    while out.len() < total {
        let b = tree.winner();
        let Some(at) = heads.at.get_mut(b) else {
            break;
        };
        out.push((b, *at));
        *at += 1;
        tree.replay(&heads, b);
    }
    out
}

/// [`merge_rows`] cut into about `parts` key ranges merged on all
/// threads: the cut keys are quantiles of keys sampled from every run,
/// each range takes the rows below its cut from every run (found by
/// binary search), and the ranges' orders are joined. Rows with equal keys
/// fall in one range, so the result is the same stable order
/// [`merge_rows`] gives.
pub fn merge_rows_parallel(runs: &[(&Rows, Range<usize>)], parts: usize) -> Vec<(usize, usize)> {
    let total: usize = runs.iter().map(|(_, r)| r.len()).sum();
    if parts <= 1 || total < 65_536 {
        return merge_rows(runs);
    }
    merge_in_ranges(runs, parts)
}

/// [`merge_rows_parallel`] for any number of rows.
fn merge_in_ranges(runs: &[(&Rows, Range<usize>)], parts: usize) -> Vec<(usize, usize)> {
    use rayon::prelude::*;
    let total: usize = runs.iter().map(|(_, r)| r.len()).sum();
    let mut samples: Vec<&[u8]> = Vec::new();
    for (keys, rows) in runs {
        let step = (rows.len() / (64 * parts)).max(1);
        samples.extend(rows.clone().step_by(step).map(|r| keys.row(r).as_bytes()));
    }
    samples.sort_unstable();
    let mut cuts: Vec<&[u8]> = (1..parts)
        .filter_map(|p| samples.get(samples.len() * p / parts).copied())
        .collect();
    cuts.dedup();
    // Bounds of each run: the first row at or above each cut.
    let bounds: Vec<Vec<usize>> = runs
        .iter()
        .map(|(keys, rows)| {
            let mut b = vec![rows.start];
            for c in &cuts {
                let (mut lo, mut hi) = (*b.last().unwrap_or(&rows.start), rows.end);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if keys.row(mid).as_bytes() < *c {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                b.push(lo);
            }
            b.push(rows.end);
            b
        })
        .collect();
    let pieces: Vec<Vec<(usize, usize)>> = (0..=cuts.len())
        .into_par_iter()
        .map(|p| {
            let part: Vec<(&Rows, Range<usize>)> = runs
                .iter()
                .zip(&bounds)
                .map(|((keys, _), b)| (*keys, b[p]..b[p + 1]))
                .collect();
            merge_rows(&part)
        })
        .collect();
    let mut out = Vec::with_capacity(total);
    for p in pieces {
        out.extend(p);
    }
    out
}

/// An output file being written, past the page cache.
struct Output {
    writer: ParquetWriter<DirectWriter>,
    pending: PendingFile,
    rows: u64,
    min_key: Vec<u8>,
    max_key: Vec<u8>,
}

/// Merges `inputs` (each sorted by `cfg.key`) into new files named by
/// `name(i)` in `dir`, each written through a temporary and renamed when
/// complete. Returns the files in key order.
///
/// # Errors
///
/// [`Error`] for unreadable inputs, inputs with different schemas,
/// an input that is not sorted, or a write failure; files written so far
/// are removed.
pub fn merge_files(
    inputs: &[PathBuf],
    dir: &Path,
    name: &(dyn Fn(usize) -> String + Sync),
    cfg: &MergeConfig,
) -> Result<Vec<MergedFile>, Error> {
    let threads = match cfg.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let batch_rows = cfg.batch_rows.max(1);
    let rows = inputs
        .iter()
        .map(|p| num_rows(p))
        .collect::<Result<Vec<u64>, _>>()?;
    let total: u64 = rows.iter().sum();
    if threads <= 1 || total < (4 * batch_rows * threads) as u64 {
        let out = merge_range(inputs, None, dir, &|n| name(n), cfg, true)?;
        return check_rows(out, total);
    }
    // Key ranges of about equal rows, one per thread: each merges the rows
    // of every input that fall in its range. Equal cuts (many equal keys)
    // are one cut, so there may be fewer ranges than threads.
    let split = split_rows(inputs, &rows, &cfg.key, &cfg.order, threads)?;
    let parts: Vec<usize> = (0..=split.cuts.len()).collect();
    // Ranges that already occupy every core encode their chunks' columns
    // on their own threads.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parallel_leaves = parts.len() < cores;
    let results = on_threads(&parts, |&p| {
        merge_range(
            inputs,
            Some(&split.part(p)),
            dir,
            &|n| name(p * PART_STRIDE + n),
            cfg,
            parallel_leaves,
        )
    });
    let mut out = Vec::new();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(files) => out.extend(files),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        for f in &out {
            let _ = std::fs::remove_file(&f.path);
        }
        return Err(e);
    }
    check_rows(out, total)
}

/// The merge's last check: the files written hold as many rows as the
/// inputs (else they are removed and the merge fails).
fn check_rows(out: Vec<MergedFile>, total: u64) -> Result<Vec<MergedFile>, Error> {
    let written: u64 = out.iter().map(|f| f.rows).sum();
    if written != total {
        for f in &out {
            let _ = std::fs::remove_file(&f.path);
        }
        return Err(Error::Invalid(format!(
            "the merge wrote {written} rows of {total}; nothing was kept"
        )));
    }
    Ok(out)
}

/// The row count in a Parquet file's footer.
fn num_rows(path: &Path) -> Result<u64, Error> {
    let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let b = read::open(file, ArrowReaderOptions::new()).map_err(|e| read_error(path, e))?;
    Ok(b.metadata().file_metadata().num_rows().max(0) as u64)
}

/// Runs `f` on every item, each on a thread of its own; results in item
/// order.
fn on_threads<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R, Error> + Sync,
) -> Vec<Result<R, Error>> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = items.iter().map(|item| s.spawn(move || f(item))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Invalid("a merge thread failed".into())))
            })
            .collect()
    })
}

/// Output numbers of key range `p` start at `p * PART_STRIDE`.
pub const PART_STRIDE: usize = 100_000;

/// How a merge is cut into key ranges, one per thread.
struct Split {
    /// `parts - 1` increasing cut keys: part `p` merges the rows with keys
    /// in `[cuts[p - 1], cuts[p])` (open at the ends).
    cuts: Vec<Vec<u8>>,
    /// For each input, the sampled row offsets (every `step[i]`-th row)
    /// and their keys.
    samples: Vec<Vec<Vec<u8>>>,
    step: Vec<u64>,
    rows: Vec<u64>,
}

/// What one key range reads: for each input a row range that holds every
/// row of the range (and a few rows on either side, which the cursor
/// filters out by key), and the key bounds.
struct PartRange {
    rows: Vec<Range<u64>>,
    lo: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
}

impl Split {
    fn part(&self, p: usize) -> PartRange {
        let lo = p.checked_sub(1).and_then(|q| self.cuts.get(q)).cloned();
        let hi = self.cuts.get(p).cloned();
        let rows = (0..self.rows.len())
            .map(|i| {
                let (samples, step, n) = (&self.samples[i], self.step[i], self.rows[i]);
                // Sample `j` is row `j * step`. With `j` the first sample at
                // or above a cut, the first row at or above it lies after
                // sample `j - 1` and at or before sample `j`.
                let first_at = |cut: &Vec<u8>| samples.partition_point(|k| k < cut) as u64;
                let start = lo.as_ref().map_or(0, |c| match first_at(c) {
                    0 => 0,
                    j => (j - 1) * step + 1,
                });
                // One row past the bound, so neighbouring ranges share a
                // row and the sortedness checks of the two ranges connect.
                let end = hi.as_ref().map_or(n, |c| match first_at(c) {
                    j if j as usize == samples.len() => n,
                    j => (j * step + 1).min(n),
                });
                start.min(end)..end
            })
            .collect();
        PartRange { rows, lo, hi }
    }
}

/// Samples every input's keys (about 256 per part per input, reading only
/// the sampled rows of the key columns) and picks `parts - 1` cut keys at
/// the quantiles of all samples, so the parts hold about equal rows.
fn split_rows(
    inputs: &[PathBuf],
    rows: &[u64],
    key: &[String],
    order: &[SortOptions],
    parts: usize,
) -> Result<Split, Error> {
    let step: Vec<u64> = rows
        .iter()
        .map(|&n| (n / (256 * parts as u64)).max(1))
        .collect();
    let jobs: Vec<(&PathBuf, u64, u64)> = inputs
        .iter()
        .zip(rows.iter().copied())
        .zip(step.iter().copied())
        .map(|((p, n), s)| (p, n, s))
        .collect();
    let samples = on_threads(&jobs, |&(p, n, s)| sample_keys(p, n, s, key, order))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let mut all: Vec<&Vec<u8>> = samples.iter().flatten().collect();
    all.sort_unstable();
    let mut cuts: Vec<Vec<u8>> = (1..parts)
        .filter_map(|p| all.get(all.len() * p / parts).map(|k| k.to_vec()))
        .collect();
    cuts.dedup();
    Ok(Split {
        cuts,
        samples,
        step,
        rows: rows.to_vec(),
    })
}

/// The keys of rows `0, step, 2 * step, ...` of one input of `n` rows,
/// reading only those rows of the key columns; checks that they are in
/// order (the merge checks every row it reads).
fn sample_keys(
    path: &Path,
    n: u64,
    step: u64,
    key: &[String],
    order: &[SortOptions],
) -> Result<Vec<Vec<u8>>, Error> {
    let mut selectors = Vec::new();
    let mut at = 0u64;
    while at < n {
        selectors.push(RowSelector::select(1));
        let skip = (step - 1).min(n - at - 1);
        if skip > 0 {
            selectors.push(RowSelector::skip(skip as usize));
        }
        at += step;
    }
    let (mut reader, enc) =
        key_reader(path, key, order, 8192, Some(RowSelection::from(selectors)))?;
    let mut samples: Vec<Vec<u8>> = Vec::new();
    while let Some(b) = read::next_batch(&mut reader).map_err(|e| read_error(path, e))? {
        let keys = encode_keys(&enc, &b)?;
        for k in keys.iter() {
            let k = k.as_bytes();
            if samples.last().is_some_and(|last| k < last.as_slice()) {
                return Err(not_sorted(path, key));
            }
            samples.push(k.to_vec());
        }
    }
    Ok(samples)
}

/// A reader of the key columns of `path` (the rows `selection` picks, or
/// all), and the key encoder for its batches.
fn key_reader(
    path: &Path,
    key: &[String],
    order: &[SortOptions],
    batch_rows: usize,
    selection: Option<RowSelection>,
) -> Result<
    (
        parquet::arrow::arrow_reader::ParquetRecordBatchReader,
        KeyColumns,
    ),
    Error,
> {
    let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let builder = read::open(file, ArrowReaderOptions::new()).map_err(|e| read_error(path, e))?;
    let roots = key_columns(builder.schema(), key)?.columns().to_vec();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let mut builder = builder.with_projection(mask).with_batch_size(batch_rows);
    if let Some(selection) = selection {
        builder = builder.with_row_selection(selection);
    }
    let reader = read::build(builder).map_err(|e| read_error(path, e))?;
    let schema = arrow_array::RecordBatchReader::schema(&reader);
    let enc = ordered_key_columns(&schema, key, order)?;
    Ok((reader, enc))
}

/// Calls `each` with the encoded keys of every batch of `path` (key
/// columns only) and the row number of the batch's first row; stops when
/// `each` returns false. Returns the rows seen.
///
/// # Errors
///
/// As `each`, or this crate's error (converted) when the file cannot be
/// read or its keys encoded.
pub fn for_each_key_batch<E: From<Error>>(
    path: &Path,
    key: &[String],
    batch_rows: usize,
    mut each: impl FnMut(&Rows, u64) -> Result<bool, E>,
) -> Result<u64, E> {
    let (mut reader, enc) = key_reader(path, key, &[], batch_rows, None)?;
    let mut seen = 0u64;
    while let Some(b) = read::next_batch(&mut reader).map_err(|e| read_error(path, e))? {
        let keys = encode_keys(&enc, &b)?;
        let go = each(&keys, seen)?;
        seen += b.num_rows() as u64;
        if !go {
            break;
        }
    }
    Ok(seen)
}

/// A [`read::ReadError`] on the file `path` as this crate's error.
fn read_error(path: &Path, e: read::ReadError) -> Error {
    match e {
        read::ReadError::Parquet(e) => Error::parquet_at(path, e),
        read::ReadError::Io(e) => Error::io("stat", path, e),
        e => Error::Invalid(format!("{}: {e}", path.display())),
    }
}

/// The error for a file not sorted by `key`.
pub fn not_sorted(path: &Path, key: &[String]) -> Error {
    Error::Invalid(format!(
        "{} is not sorted by {}",
        path.display(),
        key.join(",")
    ))
}

/// Merges rows `ranges[i]` of each input `i` (all rows when `None`).
fn merge_range(
    inputs: &[PathBuf],
    part: Option<&PartRange>,
    dir: &Path,
    name: &dyn Fn(usize) -> String,
    cfg: &MergeConfig,
    parallel_leaves: bool,
) -> Result<Vec<MergedFile>, Error> {
    let batch_rows = cfg.batch_rows.max(1);
    let mut cursors = Vec::with_capacity(inputs.len());
    let mut schema: Option<SchemaRef> = None;
    for (i, p) in inputs.iter().enumerate() {
        let (c, s) = Cursor::open(p, batch_rows, part.map(|r| (r, i)))?;
        match &schema {
            None => schema = Some(s),
            Some(first) if first.fields() != s.fields() => {
                return Err(Error::Invalid(format!(
                    "{} has a different schema from {}",
                    p.display(),
                    inputs[0].display()
                )));
            }
            Some(_) => {}
        }
        cursors.push(c);
    }
    let Some(schema) = schema else {
        return Ok(Vec::new());
    };
    let enc = ordered_key_columns(&schema, &cfg.key, &cfg.order)?;
    for c in &mut cursors {
        c.next_batch(&enc, &cfg.key)?;
    }
    let mut sink = Sink {
        out: None,
        chunk: Vec::with_capacity(batch_rows),
        chunk_batches: Vec::new(),
        chunk_first: Vec::new(),
        last_key: Vec::new(),
        schema: schema.clone(),
        props: match &cfg.properties {
            Some(p) => p.clone(),
            None => output_properties(&inputs[0], &schema, &cfg.key)?,
        },
        replace: cfg.replace,
        rows_written: cfg.rows_written.clone(),
        write_buffer: cfg.write_buffer_bytes,
        parallel_leaves,
        dir,
        name,
        target_file_bytes: cfg.target_file_bytes,
        done: Vec::new(),
    };
    let result = (|| -> Result<(), Error> {
        let mut tree = Tournament::new(cursors.as_slice());
        loop {
            // The smallest current key; ties go to the earlier input.
            let b = tree.winner();
            // A live cursor's prefix is below `u128::MAX` but for keys of
            // sixteen 0xff bytes, which the second test tells apart.
            if b >= cursors.len() || (tree.head(b) == u128::MAX && cursors[b].key().is_none()) {
                break;
            }
            let c = &mut cursors[b];
            if sink.chunk.is_empty() {
                sink.chunk_first = c.key().unwrap_or_default().to_vec();
            }
            // The key of the last row written is needed when a chunk is
            // written; it is copied only when it may be that row: the last
            // of a chunk, or the last of a batch (the merge may end there).
            if sink.chunk.len() + 1 == batch_rows || c.row + 1 == c.end {
                sink.last_key.clear();
                sink.last_key.extend_from_slice(c.key().unwrap_or_default());
            }
            let slot = match c.slot {
                Some(s) => s,
                None => {
                    sink.chunk_batches.push(
                        c.batch
                            .clone()
                            .unwrap_or_else(|| RecordBatch::new_empty(schema.clone())),
                    );
                    c.slot = Some(sink.chunk_batches.len() - 1);
                    sink.chunk_batches.len() - 1
                }
            };
            sink.chunk.push((slot, c.row));
            c.advance();
            if c.row == c.end {
                c.next_batch(&enc, &cfg.key)?;
            }
            tree.replay(cursors.as_slice(), b);
            if sink.chunk.len() == batch_rows {
                sink.flush(&mut cursors)?;
            }
        }
        sink.flush(&mut cursors)?;
        if let Some(o) = sink.out.take() {
            sink.done.push(close(o)?);
        }
        Ok(())
    })();
    if let Err(e) = result {
        // Remove what was written, finished or not (an unfinished output
        // is a temporary that its drop removes).
        for f in &sink.done {
            let _ = std::fs::remove_file(&f.path);
        }
        return Err(e);
    }
    Ok(sink.done)
}

/// The output side of one merge: the chunk of rows being gathered, the
/// file being written, and the files finished.
struct Sink<'a> {
    out: Option<Output>,
    /// (batch slot, row) of each row gathered, in output order.
    chunk: Vec<(usize, usize)>,
    chunk_batches: Vec<RecordBatch>,
    /// Keys of the chunk's first and latest rows.
    chunk_first: Vec<u8>,
    last_key: Vec<u8>,
    schema: SchemaRef,
    props: WriterProperties,
    dir: &'a Path,
    name: &'a dyn Fn(usize) -> String,
    target_file_bytes: u64,
    replace: bool,
    rows_written: Option<Arc<std::sync::atomic::AtomicU64>>,
    /// See [`MergeConfig::write_buffer_bytes`].
    write_buffer: usize,
    /// Whether a chunk's leaf columns are encoded on all threads: not when
    /// the merge's key ranges already run one per core.
    parallel_leaves: bool,
    done: Vec<MergedFile>,
}

impl Sink<'_> {
    /// Writes the chunk to the current output (opening one if needed) and
    /// rolls the output at the target size.
    fn flush(&mut self, cursors: &mut [Cursor]) -> Result<(), Error> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        if self.out.is_none() {
            let target = self.dir.join((self.name)(self.done.len()));
            let (pending, sink) =
                PendingFile::create_direct_chunked(target.clone(), self.replace, self.write_buffer)
                    .map_err(|e| Error::file(&target, e))?;
            let mut writer =
                ParquetWriter::try_new(sink, Arc::clone(&self.schema), self.props.clone())
                    .map_err(|e| Error::file(&target, e))?;
            writer.set_parallel_leaves(self.parallel_leaves);
            self.out = Some(Output {
                writer,
                pending,
                rows: 0,
                min_key: self.chunk_first.clone(),
                max_key: Vec::new(),
            });
        }
        if let Some(o) = self.out.as_mut() {
            o.writer
                .write_gather_auto(&self.chunk_batches, &self.chunk)
                .map_err(|e| Error::file(o.pending.target(), e))?;
            o.rows += self.chunk.len() as u64;
            if let Some(c) = &self.rows_written {
                c.fetch_add(
                    self.chunk.len() as u64,
                    std::sync::atomic::Ordering::Relaxed,
                );
            }
            o.max_key.clone_from(&self.last_key);
            let size = o.writer.bytes_written() + o.writer.in_progress_size();
            if size >= self.target_file_bytes
                && let Some(o) = self.out.take()
            {
                self.done.push(close(o)?);
            }
        }
        self.chunk.clear();
        self.chunk_batches.clear();
        for c in cursors.iter_mut() {
            c.slot = None;
        }
        Ok(())
    }
}

fn close(o: Output) -> Result<MergedFile, Error> {
    let target = o.pending.target().to_path_buf();
    let file = o
        .writer
        .finish()
        .map_err(|e| Error::file(&target, e))?
        .finish()
        .map_err(|e| Error::io("write", &target, e))?;
    file.sync_all()
        .map_err(|e| Error::io("write", &target, e))?;
    let bytes = file
        .metadata()
        .map_err(|e| Error::io("stat", &target, e))?
        .len();
    let path = o.pending.commit().map_err(|e| Error::file(&target, e))?;
    Ok(MergedFile {
        path,
        rows: o.rows,
        bytes,
        min_key: o.min_key,
        max_key: o.max_key,
    })
}

#[cfg(test)]
mod tests {
    use super::{merge_in_ranges, merge_rows, prefix};
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use arrow_schema::DataType;
    use strata_row::{RowEncoder, SortField};

    /// The merge of sorted runs equals a stable sort of all their rows by
    /// key (ties in run order, then row order), for runs of keys with
    /// many ties, long shared prefixes, empty runs and ranges that start
    /// inside their keys: a brute-force oracle over fixed seeds.
    #[test]
    fn merge_rows_is_the_stable_sort_of_its_runs() {
        let enc = RowEncoder::new(vec![
            SortField::new(DataType::Utf8),
            SortField::new(DataType::Int64),
        ])
        .expect("encoder");
        for seed in 0..40u64 {
            let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut next = |m: u64| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % m
            };
            let k = 1 + next(12) as usize;
            let mut encoded = Vec::new();
            let mut ranges = Vec::new();
            for _ in 0..k {
                let n = next(30) as usize;
                let mut rows: Vec<(String, i64)> = (0..n)
                    .map(|_| {
                        // Shared 20-byte prefixes: the prefix ties and the
                        // full keys decide.
                        let s = format!("{}{}", "p".repeat(20), next(3));
                        (s, next(4) as i64)
                    })
                    .collect();
                rows.sort();
                let strings: ArrayRef =
                    std::sync::Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.0)));
                let ints: ArrayRef =
                    std::sync::Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1)));
                let start = if n > 0 {
                    next(n as u64 / 2 + 1) as usize
                } else {
                    0
                };
                encoded.push(enc.encode(&[strings, ints]).expect("encode"));
                ranges.push(start..n);
            }
            let runs: Vec<_> = encoded
                .iter()
                .zip(&ranges)
                .map(|(k, r)| (k, r.clone()))
                .collect();
            let merged = merge_rows(&runs);
            let mut expected: Vec<(usize, usize)> = ranges
                .iter()
                .enumerate()
                .flat_map(|(b, r)| r.clone().map(move |i| (b, i)))
                .collect();
            expected.sort_by(|x, y| {
                encoded[x.0]
                    .row(x.1)
                    .as_bytes()
                    .cmp(encoded[y.0].row(y.1).as_bytes())
                    .then(x.cmp(y))
            });
            assert_eq!(merged, expected, "seed {seed}");
            for parts in 2..6 {
                assert_eq!(
                    merge_in_ranges(&runs, parts),
                    expected,
                    "seed {seed}, {parts} ranges"
                );
            }
        }
    }

    /// Prefixes order keys as the bytes do (equal prefixes only where the
    /// first 16 bytes, zero padded, are equal).
    #[test]
    fn prefixes_order_like_the_bytes() {
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=20usize {
            for fill in [0u8, 1, 0x7f, 0xff] {
                let mut k: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37)).collect();
                k[len - 1] = fill;
                keys.push(k.clone());
                k[len / 2] = fill;
                keys.push(k);
            }
        }
        for a in &keys {
            for b in &keys {
                let (pa, pb) = (prefix(a), prefix(b));
                if pa != pb {
                    assert_eq!(pa < pb, a < b, "{a:?} {b:?}");
                } else {
                    let pad = |k: &[u8]| {
                        let mut p = k[..k.len().min(16)].to_vec();
                        p.resize(16, 0);
                        p
                    };
                    assert_eq!(pad(a), pad(b), "{a:?} {b:?}");
                }
            }
        }
    }
}
