//! Projected reads of Arrow IPC files: only the projected columns' buffers
//! are fetched.
//!
//! # Data flow
//!
//! 1. **Open**: one tail request (the whole file up to
//!    [`SMALL_FILE`](crate::SMALL_FILE), else
//!    [`TAIL_PREFETCH`](crate::TAIL_PREFETCH) bytes; a second only for a
//!    larger footer); reads inside it cost nothing later; the footer is verified, every block is checked
//!    against the file's size, and strata's per-batch row counts
//!    ([`BATCH_ROWS_KEY`]) are read when present.
//! 2. **Metadata pass**, per window of batches: the batch headers (and,
//!    once, the dictionary blocks the projection needs) in one coalesced
//!    fetch.
//! 3. **Layout**: a walk over each header gives every buffer's byte range,
//!    its column and its role; validity buffers of columns without nulls
//!    and empty buffers are dropped; every range is checked against the
//!    body.
//! 4. **Body pass**: the projected ranges of the whole window in one
//!    [`Source::fetch_merged`] (coalesced, parallel, counted). A batch
//!    whose projected bytes exceed [`IpcReadOptions::whole_body_fraction`]
//!    of its body reads the body whole instead.
//! 5. **Decode**: each merged fetch is decoded zero-copy with a rebuilt
//!    batch header whose buffer offsets point into that fetch (buffers not
//!    fetched become empty), and the columns are assembled in the
//!    requested order.
//!
//! Reading every column, or reading from memory, skips the metadata pass
//! and fetches whole blocks (neighbouring blocks coalesce into one
//! request).
//!
//! # Guarantee
//!
//! A projected read returns exactly what a full read followed by the
//! projection returns. Malformed input gives [`Error::Corrupt`] (or an
//! Arrow error), never a panic: every offset and length is checked before
//! it is used, and a compressed buffer may not declare a decompressed size
//! beyond what its column's lengths allow.

use std::{
    collections::{BTreeMap, HashMap},
    ops::Range,
    sync::Arc,
};

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_buffer::Buffer;
use arrow_ipc::{
    FieldNode, MessageHeader, MetadataVersion,
    reader::{RecordBatchDecoder, read_dictionary},
};
use arrow_schema::{DataType, Field, SchemaRef};
use bytes::Bytes;
use futures::{StreamExt, stream::BoxStream};
use tokio::sync::OnceCell;

use super::{
    ScanRequest,
    layout::{BufRef, Layout, check_compressed, walk},
};
use strata_parquet::ipc::{BATCH_ROWS_KEY, parse_batch_rows};
use strata_store::source::Source;

use crate::Error;

const MAGIC: &[u8; 6] = b"ARROW1";

/// How an [`IpcFile`] plans its reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IpcReadOptions {
    /// Which strategy to use.
    pub mode: ReadMode,
    /// A batch whose projected bytes exceed this fraction of its body is
    /// read whole (default 0.8).
    pub whole_body_fraction: f64,
    /// The most body bytes (counted from the footer) planned and fetched
    /// together; a window holds at least one batch. `None`: the source's
    /// [`FetchOptions::read_ahead`](strata_store::source::FetchOptions::read_ahead).
    pub window_bytes: Option<u64>,
}

impl Default for IpcReadOptions {
    fn default() -> Self {
        IpcReadOptions {
            mode: ReadMode::Auto,
            whole_body_fraction: 0.8,
            window_bytes: None,
        }
    }
}

/// The read strategy of an [`IpcFile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// Whole blocks for full projections and in-memory sources, projected
    /// ranges otherwise.
    Auto,
    /// Always the projected ranges (never whole bodies).
    Projected,
    /// Always whole blocks.
    WholeBlocks,
}

/// One block of the footer, checked against the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    offset: u64,
    meta_len: u64,
    body_len: u64,
}

impl Span {
    fn meta(&self) -> Range<u64> {
        self.offset..self.offset + self.meta_len
    }
    fn body(&self) -> Range<u64> {
        self.offset + self.meta_len..self.end()
    }
    fn whole(&self) -> Range<u64> {
        self.offset..self.end()
    }
    fn end(&self) -> u64 {
        self.offset + self.meta_len + self.body_len
    }
}

/// An Arrow IPC file opened for projected reads. Cheap to clone.
#[derive(Debug, Clone)]
pub struct IpcFile {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone)]
struct Inner {
    source: Source,
    schema: SchemaRef,
    version: MetadataVersion,
    batches: Vec<Span>,
    dictionaries: Vec<Span>,
    batch_rows: Option<Vec<u64>>,
    metadata: HashMap<String, String>,
    options: IpcReadOptions,
    dictionary_values: OnceCell<Arc<HashMap<i64, ArrayRef>>>,
}

fn corrupt(source: &Source, msg: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("{}: {msg}", source.name()))
}

impl IpcFile {
    /// Opens an IPC file: reads and checks its footer. `tail` may hold the
    /// file's last bytes if the caller already fetched them.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] for a file that is not a valid IPC file,
    /// [`Error::Store`] when reading fails.
    pub async fn open(source: Source, tail: Option<Bytes>) -> Result<Self, Error> {
        let size = source.size();
        if size < 18 {
            return Err(corrupt(
                &source,
                format!("{size} bytes is too short for an Arrow IPC file"),
            ));
        }
        let tail = match tail {
            Some(t) if t.len() >= 10 && t.len() as u64 <= size => t,
            _ => source.tail(crate::request::first_read_len(size)).await?,
        };
        // Later reads inside the tail cost nothing.
        let source = source.with_tail(tail.clone());
        let n = tail.len();
        if &tail[n - 6..] != MAGIC {
            return Err(corrupt(&source, "no ARROW1 magic at the end"));
        }
        let footer_len = i32::from_le_bytes([tail[n - 10], tail[n - 9], tail[n - 8], tail[n - 7]]);
        let footer_len = u64::try_from(footer_len)
            .ok()
            .filter(|&l| l > 0 && l <= size - 18)
            .ok_or_else(|| corrupt(&source, format!("footer length {footer_len} is invalid")))?;
        let footer_start = size - 10 - footer_len;
        let footer_bytes = if footer_len + 10 <= n as u64 {
            tail.slice(n - 10 - footer_len as usize..n - 10)
        } else {
            source.get(footer_start..size - 10).await?
        };
        let footer = arrow_ipc::root_as_footer(&footer_bytes)
            .map_err(|e| corrupt(&source, format!("footer: {e}")))?;
        let fb_schema = footer
            .schema()
            .ok_or_else(|| corrupt(&source, "footer has no schema"))?;
        if !fb_schema.endianness().equals_to_target_endianness() {
            return Err(corrupt(
                &source,
                "the file's byte order differs from this machine's",
            ));
        }
        let schema = Arc::new(arrow_ipc::convert::try_fb_to_schema(fb_schema)?);
        strata_parquet::validate::schema_depth(&schema).map_err(|e| corrupt(&source, e))?;
        let version = footer.version();
        let check = |b: &arrow_ipc::Block, what: &str, i: usize| -> Result<Span, Error> {
            let bad = |why: &str| corrupt(&source, format!("{what} block {i}: {why}"));
            let offset = u64::try_from(b.offset()).map_err(|_| bad("negative offset"))?;
            let meta_len =
                u64::try_from(b.metaDataLength()).map_err(|_| bad("negative metadata length"))?;
            let body_len =
                u64::try_from(b.bodyLength()).map_err(|_| bad("negative body length"))?;
            if offset < 8 || meta_len < 8 || offset % 8 != 0 || body_len % 8 != 0 {
                return Err(bad("offset or lengths are not 8-byte aligned"));
            }
            let end = offset
                .checked_add(meta_len)
                .and_then(|e| e.checked_add(body_len))
                .ok_or_else(|| bad("lengths overflow"))?;
            if end > footer_start {
                return Err(bad(&format!(
                    "ends at byte {end}, past the footer at {footer_start}"
                )));
            }
            Ok(Span {
                offset,
                meta_len,
                body_len,
            })
        };
        let spans = |blocks: Option<flatbuffers::Vector<'_, arrow_ipc::Block>>, what: &str| {
            blocks
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, b)| check(b, what, i))
                .collect::<Result<Vec<_>, _>>()
        };
        let batches = spans(footer.recordBatches(), "record batch")?;
        let dictionaries = spans(footer.dictionaries(), "dictionary")?;
        let mut metadata = HashMap::new();
        for kv in footer.custom_metadata().iter().flatten() {
            if let (Some(k), Some(v)) = (kv.key(), kv.value()) {
                metadata.insert(k.to_string(), v.to_string());
            }
        }
        let batch_rows = metadata
            .get(BATCH_ROWS_KEY)
            .and_then(|v| parse_batch_rows(v, batches.len()));
        Ok(IpcFile {
            inner: Arc::new(Inner {
                source,
                schema,
                version,
                batches,
                dictionaries,
                batch_rows,
                metadata,
                options: IpcReadOptions::default(),
                dictionary_values: OnceCell::new(),
            }),
        })
    }

    /// Replaces the read options (before any read).
    pub fn with_options(self, options: IpcReadOptions) -> Self {
        let mut inner = Arc::unwrap_or_clone(self.inner);
        inner.options = options;
        IpcFile {
            inner: Arc::new(inner),
        }
    }

    /// The file's schema.
    pub fn schema(&self) -> SchemaRef {
        self.inner.schema.clone()
    }

    /// The number of record batches.
    pub fn num_batches(&self) -> usize {
        self.inner.batches.len()
    }

    /// The footer's custom metadata.
    pub fn metadata(&self) -> &HashMap<String, String> {
        &self.inner.metadata
    }

    /// The source read from.
    pub fn source(&self) -> &Source {
        &self.inner.source
    }

    /// Where batch `i` lies in the file: its header (metadata) bytes and
    /// its body bytes.
    pub fn batch_ranges(&self, i: usize) -> Option<(Range<u64>, Range<u64>)> {
        self.inner.batches.get(i).map(|s| (s.meta(), s.body()))
    }

    /// Per-batch row counts from the footer, when the writer stored them.
    pub fn batch_rows(&self) -> Option<&[u64]> {
        self.inner.batch_rows.as_deref()
    }

    /// Per-batch row counts: from the footer when present, else from every
    /// batch header (one coalesced fetch).
    ///
    /// # Errors
    ///
    /// As the reads.
    pub async fn row_counts(&self) -> Result<Vec<u64>, Error> {
        if let Some(r) = &self.inner.batch_rows {
            return Ok(r.clone());
        }
        let all: Vec<usize> = (0..self.num_batches()).collect();
        let ranges: Vec<_> = all.iter().map(|&b| self.inner.batches[b].meta()).collect();
        let metas = self.inner.source.fetch(&ranges).await?;
        metas
            .iter()
            .enumerate()
            .map(|(b, m)| {
                let msg = self.inner.batch_message(b, m)?;
                let rb = record_batch_header(&self.inner.source, b, &msg)?;
                u64::try_from(rb.length())
                    .map_err(|_| corrupt(&self.inner.source, format!("batch {b}: negative length")))
            })
            .collect()
    }

    /// Resolves column names to file indices, in the given order.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownColumn`] for a name the file lacks,
    /// [`Error::InvalidConfig`] for a name given twice.
    pub fn resolve(&self, columns: Option<&[String]>) -> Result<Vec<usize>, Error> {
        crate::request::resolve_columns(&self.inner.schema, columns)
    }

    /// Bytes of the buffers a projected read of `columns` needs (validity
    /// buffers of columns without nulls excluded), summed over batches;
    /// reads every batch header.
    ///
    /// # Errors
    ///
    /// As the reads.
    pub async fn projected_bytes(&self, columns: &[usize]) -> Result<u64, Error> {
        let inner = &self.inner;
        let ranges: Vec<_> = inner.batches.iter().map(Span::meta).collect();
        let metas = inner.source.fetch(&ranges).await?;
        let mut total = 0;
        for (b, m) in metas.iter().enumerate() {
            let msg = inner.batch_message(b, m)?;
            let rb = record_batch_header(&inner.source, b, &msg)?;
            let layout = inner.layout(&rb, inner.batches[b].body_len, b)?;
            total += columns
                .iter()
                .flat_map(|&c| layout.columns[c].iter())
                .filter(|r| r.needed)
                .map(|r| r.range.end - r.range.start)
                .sum::<u64>();
        }
        Ok(total)
    }

    /// Reads batches `batches` (file order indices), columns `columns`
    /// (file indices, output order), in one metadata pass and one body
    /// pass.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for an index out of range; as the reads.
    pub async fn read_batches(
        &self,
        batches: &[usize],
        columns: &[usize],
    ) -> Result<Vec<RecordBatch>, Error> {
        let inner = &self.inner;
        if let Some(&b) = batches.iter().find(|&&b| b >= inner.batches.len()) {
            return Err(Error::InvalidConfig(format!(
                "batch {b} is out of range: the file has {}",
                inner.batches.len()
            )));
        }
        if let Some(&c) = columns.iter().find(|&&c| c >= inner.schema.fields().len()) {
            return Err(Error::InvalidConfig(format!(
                "column {c} is out of range: the file has {}",
                inner.schema.fields().len()
            )));
        }
        let whole = match inner.options.mode {
            ReadMode::WholeBlocks => true,
            ReadMode::Projected => false,
            ReadMode::Auto => {
                inner.source.is_zero_copy()
                    || columns_cover_all(columns, inner.schema.fields().len())
            }
        };
        let read = async {
            let dicts = inner.dictionaries_for(columns).await?;
            if whole {
                inner.read_whole(batches, columns, &dicts).await
            } else {
                inner.read_projected(batches, columns, &dicts).await
            }
        };
        crate::request::guarded(inner.source.name(), read).await
    }

    /// Streams the batches of a scan: projection, filter and limit.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownColumn`] or [`Error::InvalidConfig`] for a bad
    /// request; errors while reading arrive in the stream.
    pub fn stream(
        &self,
        req: &ScanRequest,
    ) -> Result<BoxStream<'static, Result<RecordBatch, Error>>, Error> {
        let out = self.resolve(req.columns.as_deref())?;
        let mut read = out.clone();
        if let Some(f) = &req.filter {
            for name in f.columns(&self.inner.schema)? {
                let fc = self
                    .inner
                    .schema
                    .index_of(&name)
                    .map_err(|_| crate::request::unknown_column(&self.inner.schema, &name))?;
                if !read.contains(&fc) {
                    read.push(fc);
                }
            }
        }
        let keep = out.len();
        let filter = req.filter.clone();
        let limit = req.limit.unwrap_or(usize::MAX);

        // Windows of consecutive batches; with known row counts and no
        // filter, only the batches the limit needs.
        let mut last = self.inner.batches.len();
        if let (None, Some(rows)) = (&filter, &self.inner.batch_rows) {
            let mut total = 0u64;
            last = 0;
            while last < rows.len() && total < limit as u64 {
                total += rows[last];
                last += 1;
            }
        }
        if limit == 0 {
            last = 0;
        }
        let state = StreamState {
            file: self.clone(),
            windows: self.inner.windows(0..last).into(),
            ready: Default::default(),
            read: Arc::new(read),
            keep,
            filter,
            left: limit,
        };
        let name = self.inner.source.name().to_string();
        Ok(crate::request::guarded_stream(
            name,
            futures::stream::try_unfold(state, StreamState::next).boxed(),
        ))
    }

    /// Returns rows `rows` (in that order; repeats allowed) of `columns`,
    /// reading only the batches that hold them.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for a row past the end; as the reads.
    pub async fn take(
        &self,
        rows: &[u64],
        columns: Option<&[String]>,
    ) -> Result<RecordBatch, Error> {
        let cols = self.resolve(columns)?;
        let counts = self.row_counts().await?;
        let mut starts = Vec::with_capacity(counts.len() + 1);
        let mut total = 0u64;
        for c in &counts {
            starts.push(total);
            total = total.saturating_add(*c);
        }
        let mut needed = BTreeMap::new();
        let mut picks = Vec::with_capacity(rows.len());
        for &r in rows {
            if r >= total {
                return Err(Error::InvalidConfig(format!(
                    "row {r} is out of range: the file has {total} rows"
                )));
            }
            // The last batch starting at or before r that is non-empty.
            let b = starts.partition_point(|&s| s <= r) - 1;
            let next = needed.len();
            let slot = *needed.entry(b).or_insert(next);
            picks.push((slot, (r - starts[b]) as usize));
        }
        let order: Vec<usize> = needed.keys().copied().collect();
        // Slots were handed out in first-use order; map them to `order`.
        let mut slot_to_pos = vec![0; order.len()];
        for (pos, b) in order.iter().enumerate() {
            slot_to_pos[needed[b]] = pos;
        }
        let read = self.read_batches(&order, &cols).await?;
        for (pos, b) in order.iter().enumerate() {
            if read[pos].num_rows() as u64 != counts[*b] {
                return Err(corrupt(
                    &self.inner.source,
                    format!(
                        "batch {b} has {} rows but the footer says {}",
                        read[pos].num_rows(),
                        counts[*b]
                    ),
                ));
            }
        }
        let schema = Arc::new(self.inner.schema.project(&cols)?);
        if rows.is_empty() {
            return Ok(RecordBatch::new_empty(schema));
        }
        let refs: Vec<&RecordBatch> = read.iter().collect();
        let idx: Vec<(usize, usize)> = picks
            .iter()
            .map(|&(slot, row)| (slot_to_pos[slot], row))
            .collect();
        Ok(arrow_select::interleave::interleave_record_batch(
            &refs, &idx,
        )?)
    }
}

/// The state of [`IpcFile::stream`].
struct StreamState {
    file: IpcFile,
    windows: std::collections::VecDeque<Vec<usize>>,
    ready: std::collections::VecDeque<RecordBatch>,
    read: Arc<Vec<usize>>,
    keep: usize,
    filter: Option<super::Filter>,
    left: usize,
}

impl StreamState {
    async fn next(mut self) -> Result<Option<(RecordBatch, Self)>, Error> {
        while self.left > 0 {
            let Some(mut b) = self.ready.pop_front() else {
                let Some(w) = self.windows.pop_front() else {
                    return Ok(None);
                };
                self.ready = self.file.read_batches(&w, &self.read).await?.into();
                continue;
            };
            if let Some(f) = &self.filter {
                b = f.apply(&b)?;
            }
            if b.num_columns() > self.keep {
                b = b.project(&(0..self.keep).collect::<Vec<_>>())?;
            }
            if b.num_rows() == 0 && self.filter.is_some() {
                continue;
            }
            let n = b.num_rows().min(self.left);
            self.left -= n;
            let b = if n < b.num_rows() { b.slice(0, n) } else { b };
            return Ok(Some((b, self)));
        }
        Ok(None)
    }
}

fn columns_cover_all(columns: &[usize], n: usize) -> bool {
    let mut seen = vec![false; n];
    for &c in columns {
        seen[c] = true;
    }
    seen.iter().all(|&s| s)
}

fn record_batch_header<'a>(
    source: &Source,
    b: usize,
    msg: &arrow_ipc::Message<'a>,
) -> Result<arrow_ipc::RecordBatch<'a>, Error> {
    match msg.header_type() {
        MessageHeader::RecordBatch => msg
            .header_as_record_batch()
            .ok_or_else(|| corrupt(source, format!("batch {b}: unreadable header"))),
        t => Err(corrupt(
            source,
            format!("batch {b}: expected a record batch, found {t:?}"),
        )),
    }
}

/// The flatbuffer message inside a block's metadata bytes.
fn parse_message<'a>(
    source: &Source,
    what: &str,
    meta: &'a [u8],
) -> Result<arrow_ipc::Message<'a>, Error> {
    let word = |i: usize| -> Option<[u8; 4]> { meta.get(i..i + 4)?.try_into().ok() };
    let (start, len): (usize, Option<i32>) = match word(0) {
        Some([0xff, 0xff, 0xff, 0xff]) => (8, word(4).map(i32::from_le_bytes)),
        Some(w) => (4, Some(i32::from_le_bytes(w))),
        None => (0, None),
    };
    let body = len
        .and_then(|l| usize::try_from(l).ok())
        .and_then(|l| meta.get(start..start.checked_add(l)?))
        .ok_or_else(|| corrupt(source, format!("{what}: bad metadata length prefix")))?;
    arrow_ipc::root_as_message(body).map_err(|e| corrupt(source, format!("{what}: {e}")))
}

impl Inner {
    fn batch_message<'a>(&self, b: usize, meta: &'a [u8]) -> Result<arrow_ipc::Message<'a>, Error> {
        let msg = parse_message(&self.source, &format!("batch {b}"), meta)?;
        if self.version != MetadataVersion::V1 && msg.version() != self.version {
            return Err(corrupt(
                &self.source,
                format!("batch {b}: metadata version differs from the footer's"),
            ));
        }
        Ok(msg)
    }

    fn layout(
        &self,
        rb: &arrow_ipc::RecordBatch<'_>,
        body_len: u64,
        b: usize,
    ) -> Result<Layout, Error> {
        walk(self.schema.fields(), self.version, rb, body_len)
            .map_err(|e| corrupt(&self.source, format!("batch {b}: {e}")))
    }

    /// Consecutive runs of batches of at most `window_bytes` of body.
    fn windows(&self, range: Range<usize>) -> Vec<Vec<usize>> {
        let window = self
            .options
            .window_bytes
            .unwrap_or(self.source.options().read_ahead);
        let mut out: Vec<Vec<usize>> = Vec::new();
        let mut bytes = 0u64;
        for b in range {
            let len = self.batches[b].body_len;
            match out.last_mut() {
                Some(w) if bytes + len <= window => {
                    w.push(b);
                    bytes += len;
                }
                _ => {
                    out.push(vec![b]);
                    bytes = len;
                }
            }
        }
        out
    }

    /// The decoded dictionaries, loaded on first need.
    async fn dictionaries_for(
        &self,
        columns: &[usize],
    ) -> Result<Arc<HashMap<i64, ArrayRef>>, Error> {
        let fields = self.schema.fields();
        if !columns
            .iter()
            .any(|&c| has_dictionary(fields[c].data_type()))
        {
            return Ok(Arc::new(HashMap::new()));
        }
        self.dictionary_values
            .get_or_try_init(|| self.load_dictionaries())
            .await
            .cloned()
    }

    async fn load_dictionaries(&self) -> Result<Arc<HashMap<i64, ArrayRef>>, Error> {
        let ranges: Vec<_> = self.dictionaries.iter().map(Span::whole).collect();
        let blocks = self.source.fetch(&ranges).await?;
        let mut types = HashMap::new();
        for f in self.schema.fields() {
            collect_dictionary_types(f, &mut types);
        }
        let mut out = HashMap::new();
        for (i, (span, bytes)) in self.dictionaries.iter().zip(&blocks).enumerate() {
            let what = format!("dictionary {i}");
            let meta = &bytes[..span.meta_len as usize];
            let msg = parse_message(&self.source, &what, meta)?;
            let dict = match msg.header_type() {
                MessageHeader::DictionaryBatch => msg.header_as_dictionary_batch(),
                _ => None,
            }
            .ok_or_else(|| corrupt(&self.source, format!("{what}: not a dictionary batch")))?;
            let rb = dict
                .data()
                .ok_or_else(|| corrupt(&self.source, format!("{what}: no data")))?;
            let value_type = types.get(&dict.id()).cloned().ok_or_else(|| {
                corrupt(
                    &self.source,
                    format!("{what}: id {} is not in the schema", dict.id()),
                )
            })?;
            let fields = arrow_schema::Fields::from(vec![Field::new("values", value_type, true)]);
            let layout = walk(&fields, msg.version(), &rb, span.body_len)
                .map_err(|e| corrupt(&self.source, format!("{what}: {e}")))?;
            let body = bytes.slice(span.meta_len as usize..);
            check_compressed(&rb, &layout, &[0], true, &|r| body_slice(&body, &r.range))
                .map_err(|e| corrupt(&self.source, format!("{what}: {e}")))?;
            read_dictionary(
                &Buffer::from(body),
                dict,
                &self.schema,
                &mut out,
                &msg.version(),
            )?;
        }
        Ok(Arc::new(out))
    }

    async fn read_whole(
        &self,
        batches: &[usize],
        columns: &[usize],
        dicts: &HashMap<i64, ArrayRef>,
    ) -> Result<Vec<RecordBatch>, Error> {
        let ranges: Vec<_> = batches.iter().map(|&b| self.batches[b].whole()).collect();
        let blocks = self.source.fetch(&ranges).await?;
        batches
            .iter()
            .zip(blocks)
            .map(|(&b, block)| {
                let span = self.batches[b];
                let meta = block.slice(..span.meta_len as usize);
                let body = block.slice(span.meta_len as usize..);
                let msg = self.batch_message(b, &meta)?;
                let rb = record_batch_header(&self.source, b, &msg)?;
                let layout = self.layout(&rb, body.len() as u64, b)?;
                self.decode_body(b, &msg, &layout, body, columns, dicts)
            })
            .collect()
    }

    /// Decodes `columns` of batch `b` from its whole body.
    fn decode_body(
        &self,
        b: usize,
        msg: &arrow_ipc::Message<'_>,
        layout: &Layout,
        body: Bytes,
        columns: &[usize],
        dicts: &HashMap<i64, ArrayRef>,
    ) -> Result<RecordBatch, Error> {
        let rb = record_batch_header(&self.source, b, msg)?;
        check_compressed(&rb, layout, columns, true, &|r| body_slice(&body, &r.range))
            .map_err(|e| corrupt(&self.source, format!("batch {b}: {e}")))?;
        let data = Buffer::from(body);
        Ok(
            RecordBatchDecoder::try_new(&data, rb, self.schema.clone(), dicts, &msg.version())?
                .with_projection(Some(columns))
                .read_record_batch()?,
        )
    }

    async fn read_projected(
        &self,
        batches: &[usize],
        columns: &[usize],
        dicts: &HashMap<i64, ArrayRef>,
    ) -> Result<Vec<RecordBatch>, Error> {
        let meta_ranges: Vec<_> = batches.iter().map(|&b| self.batches[b].meta()).collect();
        if self.options.mode == ReadMode::Auto {
            // Headers so close together that fetching them reads through
            // at least half the bodies: read the blocks whole instead.
            let tail_start = self.source.tail_start();
            let outside: Vec<_> = meta_ranges
                .iter()
                .filter(|r| r.start < tail_start)
                .cloned()
                .collect();
            let through = strata_store::ranges::coalesce(&outside, self.source.options().coalesce)?
                .fetched_bytes();
            let blocks: u64 = batches
                .iter()
                .map(|&b| self.batches[b].end() - self.batches[b].offset)
                .sum();
            if through.saturating_mul(2) >= blocks && through > 0 {
                return self.read_whole(batches, columns, dicts).await;
            }
        }
        let metas = self.source.fetch(&meta_ranges).await?;
        // Plan every batch's requests.
        struct Plan {
            whole: bool,
            first: usize,
        }
        let mut requests: Vec<Range<u64>> = Vec::new();
        let mut plans = Vec::with_capacity(batches.len());
        let mut msgs = Vec::with_capacity(batches.len());
        let mut layouts = Vec::with_capacity(batches.len());
        for (i, &b) in batches.iter().enumerate() {
            let span = self.batches[b];
            let msg = self.batch_message(b, &metas[i])?;
            let rb = record_batch_header(&self.source, b, &msg)?;
            let layout = self.layout(&rb, span.body_len, b)?;
            let base = span.body().start;
            let first = requests.len();
            let wanted: u64 = columns
                .iter()
                .flat_map(|&c| &layout.columns[c])
                .filter(|r| r.needed)
                .map(|r| r.range.end - r.range.start)
                .sum();
            let whole = self.options.mode == ReadMode::Auto
                && wanted as f64 > self.options.whole_body_fraction * span.body_len as f64;
            if whole {
                requests.push(span.body());
            } else {
                for &c in columns {
                    for r in layout.columns[c].iter().filter(|r| r.needed) {
                        requests.push(base + r.range.start..base + r.range.end);
                    }
                }
            }
            plans.push(Plan { whole, first });
            msgs.push(msg);
            layouts.push(layout);
        }
        let (plan, fetched) = self.source.fetch_merged(&requests).await?;

        let mut out = Vec::with_capacity(batches.len());
        for (i, &b) in batches.iter().enumerate() {
            let p = &plans[i];
            if p.whole {
                let body = match plan.slices[p.first] {
                    Some((f, off)) => {
                        let off = off as usize;
                        fetched[f].slice(off..off + self.batches[b].body_len as usize)
                    }
                    None => Bytes::new(),
                };
                out.push(self.decode_body(b, &msgs[i], &layouts[i], body, columns, dicts)?);
                continue;
            }
            out.push(self.decode_projected(
                b,
                &msgs[i],
                &layouts[i],
                columns,
                dicts,
                &plan,
                &fetched,
                p.first,
            )?);
        }
        Ok(out)
    }

    /// Decodes batch `b` from the merged fetches holding its projected
    /// buffers: each fetch is decoded zero-copy with a header rebuilt so
    /// buffer offsets point into it.
    #[allow(clippy::too_many_arguments)]
    fn decode_projected(
        &self,
        b: usize,
        msg: &arrow_ipc::Message<'_>,
        layout: &Layout,
        columns: &[usize],
        dicts: &HashMap<i64, ArrayRef>,
        plan: &strata_store::ranges::ReadPlan,
        fetched: &[Bytes],
        first: usize,
    ) -> Result<RecordBatch, Error> {
        let rb = record_batch_header(&self.source, b, msg)?;
        let nbuf = rb.buffers().map(|v| v.len()).unwrap_or(0);
        // Which fetch holds each column (None: nothing to fetch), and each
        // fetched buffer's (offset, length) in it, by buffer index.
        let mut next = first;
        let mut groups: BTreeMap<Option<usize>, Vec<usize>> = BTreeMap::new();
        let mut rebased: Vec<Option<(i64, i64)>> = vec![None; nbuf];
        let mut copies: Vec<Bytes> = Vec::new();
        for &c in columns {
            let bufs: Vec<&BufRef> = layout.columns[c].iter().filter(|r| r.needed).collect();
            let slices: Vec<(usize, u64)> = bufs
                .iter()
                .map(|_| {
                    let s = plan.slices[next];
                    next += 1;
                    s
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| corrupt(&self.source, "internal: unplanned buffer"))?;
            let fetch = slices.first().map(|s| s.0);
            if slices.iter().all(|s| Some(s.0) == fetch) {
                for (r, (_, off)) in bufs.iter().zip(&slices) {
                    rebased[r.index] = Some((*off as i64, (r.range.end - r.range.start) as i64));
                }
                groups.entry(fetch).or_default().push(c);
            } else {
                // The column spans fetches (larger than one request): copy
                // its buffers into one allocation, 8-byte aligned.
                let mut v = Vec::new();
                for (r, (f, off)) in bufs.iter().zip(&slices) {
                    let len = (r.range.end - r.range.start) as usize;
                    let at = v.len();
                    v.extend_from_slice(&fetched[*f][*off as usize..*off as usize + len]);
                    v.resize(v.len().next_multiple_of(8), 0);
                    rebased[r.index] = Some((at as i64, len as i64));
                }
                let id = fetched.len() + copies.len();
                copies.push(Bytes::from(v));
                groups.entry(Some(id)).or_default().push(c);
            }
        }
        let data_of = |g: Option<usize>| -> Bytes {
            match g {
                None => Bytes::new(),
                Some(f) if f < fetched.len() => fetched[f].clone(),
                Some(f) => copies[f - fetched.len()].clone(),
            }
        };
        let mut decoded: HashMap<usize, ArrayRef> = HashMap::new();
        let nodes: Vec<FieldNode> = rb
            .nodes()
            .map(|n| {
                n.iter()
                    .map(|x| FieldNode::new(x.length(), x.null_count()))
                    .collect()
            })
            .unwrap_or_default();
        let variadic: Option<Vec<i64>> = rb.variadicBufferCounts().map(|v| v.iter().collect());
        let compression = rb.compression().map(|c| c.codec());
        for (g, cols) in &groups {
            let data = data_of(*g);
            let mut bufs = vec![arrow_ipc::Buffer::new(0, 0); nbuf];
            for &c in cols {
                for r in layout.columns[c].iter().filter(|r| r.needed) {
                    if let Some((off, len)) = rebased[r.index] {
                        bufs[r.index] = arrow_ipc::Buffer::new(off, len);
                    }
                }
            }
            let rebased_slice = |r: &BufRef| -> Option<Bytes> {
                let b = bufs.get(r.index)?;
                let s = usize::try_from(b.offset()).ok()?;
                let e = s.checked_add(usize::try_from(b.length()).ok()?)?;
                (e <= data.len()).then(|| data.slice(s..e))
            };
            check_compressed(&rb, layout, cols, false, &rebased_slice)
                .map_err(|e| corrupt(&self.source, format!("batch {b}: {e}")))?;
            let mut fbb = flatbuffers::FlatBufferBuilder::new();
            let nodes_v = fbb.create_vector(&nodes);
            let bufs_v = fbb.create_vector(&bufs);
            let variadic_v = variadic.as_ref().map(|v| fbb.create_vector(v));
            let comp = compression.map(|codec| {
                let mut cb = arrow_ipc::BodyCompressionBuilder::new(&mut fbb);
                cb.add_codec(codec);
                cb.add_method(arrow_ipc::BodyCompressionMethod::BUFFER);
                cb.finish()
            });
            let mut rbb = arrow_ipc::RecordBatchBuilder::new(&mut fbb);
            rbb.add_length(rb.length());
            rbb.add_nodes(nodes_v);
            rbb.add_buffers(bufs_v);
            if let Some(v) = variadic_v {
                rbb.add_variadicBufferCounts(v);
            }
            if let Some(c) = comp {
                rbb.add_compression(c);
            }
            let root = rbb.finish();
            fbb.finish(root, None);
            let header = flatbuffers::root::<arrow_ipc::RecordBatch<'_>>(fbb.finished_data())
                .map_err(|e| corrupt(&self.source, format!("batch {b}: {e}")))?;
            let data = Buffer::from(data);
            let part = RecordBatchDecoder::try_new(
                &data,
                header,
                self.schema.clone(),
                dicts,
                &msg.version(),
            )?
            .with_projection(Some(cols))
            .read_record_batch()?;
            for (c, a) in cols.iter().zip(part.columns()) {
                decoded.insert(*c, a.clone());
            }
        }
        let schema = Arc::new(self.schema.project(columns)?);
        let arrays = columns
            .iter()
            .map(|c| decoded.remove(c))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| corrupt(&self.source, "internal: column not decoded"))?;
        let rows = usize::try_from(rb.length())
            .map_err(|_| corrupt(&self.source, format!("batch {b}: negative length")))?;
        Ok(RecordBatch::try_new_with_options(
            schema,
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )?)
    }
}

/// The bytes of a buffer at `range` of `body`, if it lies inside.
fn body_slice(body: &Bytes, range: &Range<u64>) -> Option<Bytes> {
    let s = usize::try_from(range.start).ok()?;
    let e = usize::try_from(range.end).ok()?;
    (e <= body.len()).then(|| body.slice(s..e))
}

fn has_dictionary(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, _) => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => has_dictionary(f.data_type()),
        DataType::Struct(fs) => fs.iter().any(|f| has_dictionary(f.data_type())),
        DataType::Union(fs, _) => fs.iter().any(|(_, f)| has_dictionary(f.data_type())),
        DataType::RunEndEncoded(a, b) => {
            has_dictionary(a.data_type()) || has_dictionary(b.data_type())
        }
        _ => false,
    }
}

fn collect_dictionary_types(f: &Field, out: &mut HashMap<i64, DataType>) {
    match f.data_type() {
        DataType::Dictionary(_, v) => {
            #[allow(deprecated)]
            if let Some(id) = f.dict_id() {
                out.insert(id, v.as_ref().clone());
            }
            // Nested dictionaries inside the values.
            collect_dictionary_types(&Field::new("v", v.as_ref().clone(), true), out);
        }
        DataType::List(c)
        | DataType::LargeList(c)
        | DataType::ListView(c)
        | DataType::LargeListView(c)
        | DataType::FixedSizeList(c, _)
        | DataType::Map(c, _) => collect_dictionary_types(c, out),
        DataType::Struct(fs) => fs.iter().for_each(|c| collect_dictionary_types(c, out)),
        DataType::Union(fs, _) => fs
            .iter()
            .for_each(|(_, c)| collect_dictionary_types(c, out)),
        DataType::RunEndEncoded(a, b) => {
            collect_dictionary_types(a, out);
            collect_dictionary_types(b, out);
        }
        _ => {}
    }
}
