//! The k-way merge that executes a compaction: sorted Parquet inputs in,
//! sorted Parquet outputs of about a target size out.
//!
//! Each input is read one batch at a time; its key columns are encoded
//! once per batch with `strata-row`, so comparing two rows is comparing
//! bytes. Each output row is the smallest current row over the inputs
//! (ties go to the earlier input, so the merge is stable), gathered in
//! chunks with `interleave`. Memory is one batch per input plus one output
//! chunk and the Parquet writer's buffered row group.

use std::{
    fs::File,
    ops::Range,
    path::{Path, PathBuf},
    sync::Arc,
};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::{
    arrow::{
        ArrowWriter, ProjectionMask,
        arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection, RowSelector},
    },
    basic::{Compression, ZstdLevel},
    file::properties::WriterProperties,
};
use strata_io::output::PendingFile;
use strata_row::{RowEncoder, Rows, SortField};

use crate::dataset::DatasetError;

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

/// The key encoder for `key` columns of `schema`.
///
/// # Errors
///
/// [`DatasetError::Invalid`] for a key column the schema lacks or cannot
/// order.
pub fn key_encoder(
    schema: &SchemaRef,
    key: &[String],
) -> Result<(RowEncoder, Vec<usize>), DatasetError> {
    let mut idx = Vec::with_capacity(key.len());
    let mut fields = Vec::with_capacity(key.len());
    for k in key {
        let i = schema
            .index_of(k)
            .map_err(|_| DatasetError::Invalid(format!("the files have no key column '{k}'")))?;
        idx.push(i);
        fields.push(SortField::new(schema.field(i).data_type().clone()));
    }
    let enc = RowEncoder::new(fields)
        .map_err(|e| DatasetError::Invalid(format!("cannot order by the key: {e}")))?;
    Ok((enc, idx))
}

/// Encodes the key columns of `batch`.
pub(crate) fn encode_keys(
    enc: &RowEncoder,
    idx: &[usize],
    batch: &RecordBatch,
) -> Result<Rows, DatasetError> {
    let cols: Vec<ArrayRef> = idx.iter().map(|&i| batch.column(i).clone()).collect();
    enc.encode(&cols)
        .map_err(|e| DatasetError::Invalid(format!("cannot encode the key: {e}")))
}

/// One input being merged.
struct Cursor {
    reader: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    batch: Option<RecordBatch>,
    keys: Option<Rows>,
    row: usize,
    /// The id of `batch` in the current output chunk, once used there.
    slot: Option<usize>,
    /// [`Cursor::prefix`] of the current row, cached.
    head: Option<u64>,
    path: PathBuf,
}

impl Cursor {
    /// Opens `path` to read its rows `rows` (all when `None`).
    fn open(
        path: &Path,
        batch_rows: usize,
        rows: Option<Range<u64>>,
    ) -> Result<(Cursor, SchemaRef), DatasetError> {
        let file = File::open(path).map_err(|e| DatasetError::io("open", path, e))?;
        let mut builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| DatasetError::parquet(path, e))?;
        let schema = builder.schema().clone();
        if let Some(r) = rows {
            let total = builder.metadata().file_metadata().num_rows().max(0) as u64;
            let (start, end) = (r.start.min(total), r.end.min(total));
            let selection = RowSelection::from(vec![
                RowSelector::skip(start as usize),
                RowSelector::select((end.saturating_sub(start)) as usize),
                RowSelector::skip((total - end) as usize),
            ]);
            builder = builder.with_row_selection(selection);
        }
        let reader = builder
            .with_batch_size(batch_rows)
            .build()
            .map_err(|e| DatasetError::parquet(path, e))?;
        Ok((
            Cursor {
                reader,
                batch: None,
                keys: None,
                row: 0,
                slot: None,
                head: None,
                path: path.to_path_buf(),
            },
            schema,
        ))
    }

    /// Moves to the next non-empty batch; false at the end.
    fn next_batch(
        &mut self,
        enc: &RowEncoder,
        idx: &[usize],
        key: &[String],
    ) -> Result<bool, DatasetError> {
        loop {
            match self.reader.next() {
                None => {
                    self.batch = None;
                    self.keys = None;
                    self.head = None;
                    return Ok(false);
                }
                Some(Err(e)) => return Err(DatasetError::parquet(&self.path, e.into())),
                Some(Ok(b)) if b.num_rows() == 0 => continue,
                Some(Ok(b)) => {
                    let keys = encode_keys(enc, idx, &b)?;
                    if (1..keys.num_rows())
                        .any(|i| keys.row(i).as_bytes() < keys.row(i - 1).as_bytes())
                    {
                        return Err(not_sorted(&self.path, key));
                    }
                    self.keys = Some(keys);
                    self.batch = Some(b);
                    self.row = 0;
                    self.slot = None;
                    self.refresh();
                    return Ok(true);
                }
            }
        }
    }

    fn key(&self) -> Option<&[u8]> {
        self.keys
            .as_ref()
            .and_then(|k| k.get(self.row))
            .map(|r| r.as_bytes())
    }

    /// The current key's first 8 bytes as a big-endian number (zero
    /// padded): comparing these orders most keys without a byte compare;
    /// `None` at the end.
    fn prefix(&self) -> Option<u64> {
        self.key().map(|k| {
            let mut b = [0u8; 8];
            let n = k.len().min(8);
            b[..n].copy_from_slice(&k[..n]);
            u64::from_be_bytes(b)
        })
    }

    /// Moves to the next row; refreshes the cached prefix.
    fn advance(&mut self) {
        self.row += 1;
        self.refresh();
    }

    fn refresh(&mut self) {
        self.head = self.prefix();
    }
}

/// Writer settings for the merged files: zstd, and dictionary encoding
/// only for the columns whose data pages are dictionary-encoded in the
/// first input (a column the input's writer gave up on, such as unique
/// strings, is written plain rather than tried again).
fn output_properties(first: &Path) -> Result<WriterProperties, DatasetError> {
    use parquet::{basic::Encoding, file::reader::FileReader};
    let file = File::open(first).map_err(|e| DatasetError::io("open", first, e))?;
    let reader = parquet::file::reader::SerializedFileReader::new(file)
        .map_err(|e| DatasetError::parquet(first, e))?;
    let md = reader.metadata();
    let mut props =
        WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::default()));
    if let Some(rg) = md.row_groups().first() {
        for col in rg.columns() {
            let Some(stats) = col.page_encoding_stats() else {
                continue;
            };
            let plain_data = stats.iter().any(|s| {
                matches!(
                    s.page_type,
                    parquet::basic::PageType::DATA_PAGE | parquet::basic::PageType::DATA_PAGE_V2
                ) && !matches!(
                    s.encoding,
                    Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY
                )
            });
            if plain_data {
                props = props.set_column_dictionary_enabled(col.column_path().clone(), false);
            }
        }
    }
    Ok(props.build())
}

/// A winner tree over the cursors: each inner node holds the index of the
/// cursor with the smaller current key of its two children (the left one
/// on ties, so the earlier input wins and the merge is stable). Taking a
/// row replays one leaf-to-root path: log2(k) comparisons, not k.
struct Tournament {
    /// Nodes 1.. hold winners; leaf `size + i` is cursor `i` (padding
    /// leaves hold `usize::MAX`, an exhausted input).
    tree: Vec<usize>,
    size: usize,
}

impl Tournament {
    fn new(cursors: &[Cursor]) -> Self {
        let size = cursors.len().next_power_of_two().max(1);
        let mut tree = vec![usize::MAX; 2 * size];
        for (i, slot) in tree[size..size + cursors.len()].iter_mut().enumerate() {
            *slot = i;
        }
        for node in (1..size).rev() {
            tree[node] = Self::better(cursors, tree[2 * node], tree[2 * node + 1]);
        }
        Tournament { tree, size }
    }

    fn better(cursors: &[Cursor], a: usize, b: usize) -> usize {
        let head = |i: usize| cursors.get(i).and_then(|c| c.head);
        match (head(a), head(b)) {
            (_, None) => a,
            (None, Some(_)) => b,
            (Some(x), Some(y)) if x != y => {
                if y < x {
                    b
                } else {
                    a
                }
            }
            // Equal prefixes: the rest of the bytes decide.
            _ => match (cursors[a].key(), cursors[b].key()) {
                (Some(x), Some(y)) if y < x => b,
                _ => a,
            },
        }
    }

    /// The cursor with the smallest key (`usize::MAX` or an exhausted
    /// cursor when all are).
    fn winner(&self) -> usize {
        self.tree[1]
    }

    /// Cursor `i` moved: recompute the winners on its path.
    fn replay(&mut self, cursors: &[Cursor], i: usize) {
        let mut node = (self.size + i) / 2;
        while node >= 1 {
            self.tree[node] = Self::better(cursors, self.tree[2 * node], self.tree[2 * node + 1]);
            node /= 2;
        }
    }
}

/// An output file being written.
struct Output {
    writer: ArrowWriter<File>,
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
/// [`DatasetError`] for unreadable inputs, inputs with different schemas,
/// an input that is not sorted, or a write failure; files written so far
/// are removed.
pub fn merge_files(
    inputs: &[PathBuf],
    dir: &Path,
    name: &(dyn Fn(usize) -> String + Sync),
    cfg: &MergeConfig,
) -> Result<Vec<MergedFile>, DatasetError> {
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
        return merge_range(inputs, None, dir, &|n| name(n), cfg);
    }
    // Key ranges of about equal rows, one per thread: each merges the rows
    // of every input that fall in its range.
    let splits = split_rows(inputs, &rows, &cfg.key, threads, batch_rows)?;
    let parts: Vec<usize> = (0..threads).collect();
    let results = on_threads(&parts, |&p| {
        let ranges: Vec<Range<u64>> = splits.iter().map(|o| o[p]..o[p + 1]).collect();
        merge_range(
            inputs,
            Some(&ranges),
            dir,
            &|n| name(p * PART_STRIDE + n),
            cfg,
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
    Ok(out)
}

/// The row count in a Parquet file's footer.
fn num_rows(path: &Path) -> Result<u64, DatasetError> {
    let file = File::open(path).map_err(|e| DatasetError::io("open", path, e))?;
    let b = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| DatasetError::parquet(path, e))?;
    Ok(b.metadata().file_metadata().num_rows().max(0) as u64)
}

/// Runs `f` on every item, each on a thread of its own; results in item
/// order.
fn on_threads<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R, DatasetError> + Sync,
) -> Vec<Result<R, DatasetError>> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = items.iter().map(|item| s.spawn(move || f(item))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(DatasetError::Invalid("a merge thread failed".into())))
            })
            .collect()
    })
}

/// Output numbers of key range `p` start at `p * PART_STRIDE`.
pub const PART_STRIDE: usize = 100_000;

/// For each input, the row offsets that cut it into `parts` key ranges of
/// about equal total rows (`parts + 1` offsets, from 0 to its row count).
/// Reads only the key columns, twice: once to sample keys (checking each
/// input is sorted), once to find where each cut falls.
fn split_rows(
    inputs: &[PathBuf],
    rows: &[u64],
    key: &[String],
    parts: usize,
    batch_rows: usize,
) -> Result<Vec<Vec<u64>>, DatasetError> {
    // Pass 1: every `step`-th key of each input, in parallel.
    let jobs: Vec<(&PathBuf, u64)> = inputs.iter().zip(rows.iter().copied()).collect();
    let per_input = on_threads(&jobs, |&(p, n)| sample_keys(p, n, key, batch_rows, parts));
    let mut samples = Vec::new();
    for s in per_input {
        samples.extend(s?);
    }
    samples.sort_unstable();
    let cuts: Vec<Vec<u8>> = (1..parts)
        .filter_map(|p| samples.get(samples.len() * p / parts).cloned())
        .collect();
    // Pass 2: where each cut falls in each input.
    on_threads(&jobs, |&(p, n)| {
        locate_cuts(p, key, batch_rows, &cuts, n, parts)
    })
    .into_iter()
    .collect()
}

/// Calls `each` with the encoded keys of every batch of `path` (key
/// columns only) and the row number of the batch's first row; stops when
/// `each` returns false. Returns the rows seen.
pub(crate) fn for_each_key_batch(
    path: &Path,
    key: &[String],
    batch_rows: usize,
    mut each: impl FnMut(&Rows, u64) -> Result<bool, DatasetError>,
) -> Result<u64, DatasetError> {
    let file = File::open(path).map_err(|e| DatasetError::io("open", path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| DatasetError::parquet(path, e))?;
    let (_, roots) = key_encoder(builder.schema(), key)?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let reader = builder
        .with_projection(mask)
        .with_batch_size(batch_rows)
        .build()
        .map_err(|e| DatasetError::parquet(path, e))?;
    let schema = arrow_array::RecordBatchReader::schema(&reader);
    let (enc, idx) = key_encoder(&schema, key)?;
    let mut seen = 0u64;
    for b in reader {
        let b = b.map_err(|e| DatasetError::parquet(path, e.into()))?;
        let keys = encode_keys(&enc, &idx, &b)?;
        let go = each(&keys, seen)?;
        seen += b.num_rows() as u64;
        if !go {
            break;
        }
    }
    Ok(seen)
}

pub(crate) fn not_sorted(path: &Path, key: &[String]) -> DatasetError {
    DatasetError::Invalid(format!(
        "{} is not sorted by {}",
        path.display(),
        key.join(",")
    ))
}

/// Sampled keys of one input of `n` rows (about 256 samples per part);
/// checks the input is sorted.
fn sample_keys(
    path: &Path,
    n: u64,
    key: &[String],
    batch_rows: usize,
    parts: usize,
) -> Result<Vec<Vec<u8>>, DatasetError> {
    let step = (n / (256 * parts as u64)).max(1);
    let mut samples = Vec::new();
    let mut last: Vec<u8> = Vec::new();
    let mut any = false;
    for_each_key_batch(path, key, batch_rows, |keys, base| {
        for (i, k) in keys.iter().enumerate() {
            let k = k.as_bytes();
            if any && k < last.as_slice() {
                return Err(not_sorted(path, key));
            }
            if (base + i as u64).is_multiple_of(step) {
                samples.push(k.to_vec());
            }
        }
        if let Some(k) = keys.iter().last() {
            last.clear();
            last.extend_from_slice(k.as_bytes());
            any = true;
        }
        Ok(true)
    })?;
    Ok(samples)
}

/// The offsets of the first row at or above each cut in one input, with
/// 0 first and the row count `n` last.
fn locate_cuts(
    path: &Path,
    key: &[String],
    batch_rows: usize,
    cuts: &[Vec<u8>],
    n: u64,
    parts: usize,
) -> Result<Vec<u64>, DatasetError> {
    let mut offsets = vec![0u64];
    if !cuts.is_empty() {
        for_each_key_batch(path, key, batch_rows, |keys, base| {
            let len = keys.num_rows();
            while offsets.len() <= cuts.len() {
                let cut = cuts[offsets.len() - 1].as_slice();
                // Keys are sorted: the first row at or above the cut.
                let (mut lo, mut hi) = (0usize, len);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if keys.row(mid).as_bytes() < cut {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                if lo == len {
                    return Ok(true);
                }
                offsets.push(base + lo as u64);
            }
            Ok(false)
        })?;
    }
    while offsets.len() < parts {
        offsets.push(n);
    }
    offsets.push(n);
    Ok(offsets)
}

/// Merges rows `ranges[i]` of each input `i` (all rows when `None`).
fn merge_range(
    inputs: &[PathBuf],
    ranges: Option<&[Range<u64>]>,
    dir: &Path,
    name: &dyn Fn(usize) -> String,
    cfg: &MergeConfig,
) -> Result<Vec<MergedFile>, DatasetError> {
    let batch_rows = cfg.batch_rows.max(1);
    let mut cursors = Vec::with_capacity(inputs.len());
    let mut schema: Option<SchemaRef> = None;
    for (i, p) in inputs.iter().enumerate() {
        let (c, s) = Cursor::open(p, batch_rows, ranges.map(|r| r[i].clone()))?;
        match &schema {
            None => schema = Some(s),
            Some(first) if first.fields() != s.fields() => {
                return Err(DatasetError::Invalid(format!(
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
    let (enc, idx) = key_encoder(&schema, &cfg.key)?;
    for c in &mut cursors {
        c.next_batch(&enc, &idx, &cfg.key)?;
    }
    let mut sink = Sink {
        out: None,
        chunk: Vec::with_capacity(batch_rows),
        chunk_batches: Vec::new(),
        chunk_first: Vec::new(),
        last_key: Vec::new(),
        schema: schema.clone(),
        props: output_properties(&inputs[0])?,
        dir,
        name,
        target_file_bytes: cfg.target_file_bytes,
        done: Vec::new(),
    };
    let result = (|| -> Result<(), DatasetError> {
        let mut tree = Tournament::new(&cursors);
        loop {
            // The smallest current key; ties go to the earlier input.
            let b = tree.winner();
            if b >= cursors.len() || cursors[b].key().is_none() {
                break;
            }
            let c = &mut cursors[b];
            let key = c.key().unwrap_or_default();
            if sink.chunk.is_empty() {
                sink.chunk_first = key.to_vec();
            }
            sink.last_key.clear();
            sink.last_key.extend_from_slice(key);
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
            if c.row == c.batch.as_ref().map_or(0, |b| b.num_rows()) {
                c.next_batch(&enc, &idx, &cfg.key)?;
                // Inputs must be sorted: the next batch may not start below
                // the last row taken from it (next_batch checks inside).
                if let Some(k) = c.key()
                    && k < sink.last_key.as_slice()
                {
                    return Err(not_sorted(&c.path, &cfg.key));
                }
            }
            tree.replay(&cursors, b);
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
    done: Vec<MergedFile>,
}

impl Sink<'_> {
    /// Writes the chunk to the current output (opening one if needed) and
    /// rolls the output at the target size.
    fn flush(&mut self, cursors: &mut [Cursor]) -> Result<(), DatasetError> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let refs: Vec<&RecordBatch> = self.chunk_batches.iter().collect();
        let batch = arrow_select::interleave::interleave_record_batch(&refs, &self.chunk)
            .map_err(|e| DatasetError::Invalid(format!("cannot gather rows: {e}")))?;
        if self.out.is_none() {
            let target = self.dir.join((self.name)(self.done.len()));
            let (pending, file) = PendingFile::create(target, false)
                .map_err(|e| DatasetError::Invalid(e.to_string()))?;
            let writer =
                ArrowWriter::try_new(file, Arc::clone(&self.schema), Some(self.props.clone()))
                    .map_err(|e| DatasetError::parquet(pending.target(), e))?;
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
                .write(&batch)
                .map_err(|e| DatasetError::parquet(o.pending.target(), e))?;
            o.rows += batch.num_rows() as u64;
            o.max_key.clone_from(&self.last_key);
            let size = o.writer.bytes_written() as u64 + o.writer.in_progress_size() as u64;
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

fn close(o: Output) -> Result<MergedFile, DatasetError> {
    let target = o.pending.target().to_path_buf();
    let file = o
        .writer
        .into_inner()
        .map_err(|e| DatasetError::parquet(&target, e))?;
    file.sync_all()
        .map_err(|e| DatasetError::io("write", &target, e))?;
    let bytes = file
        .metadata()
        .map_err(|e| DatasetError::io("stat", &target, e))?
        .len();
    let path = o
        .pending
        .commit()
        .map_err(|e| DatasetError::Invalid(e.to_string()))?;
    Ok(MergedFile {
        path,
        rows: o.rows,
        bytes,
        min_key: o.min_key,
        max_key: o.max_key,
    })
}
