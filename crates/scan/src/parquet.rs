//! Projected Parquet reads: only the column chunks (and, where an offset
//! index allows, the pages) of the requested columns are fetched.
//!
//! # Data flow
//!
//! [`ParquetFile::open`]: the file's tail (one request of
//! [`TAIL_PREFETCH`] bytes, or the tail the caller already fetched) ->
//! footer metadata, plus the offset index when it lies inside that tail ->
//! arrow schema. [`ParquetFile::stream`]: requested columns and the filter
//! column -> [`ProjectionMask`] of their leaves -> row groups the filter's
//! statistics cannot rule out -> parquet's async reader, which asks our
//! [`AsyncFileReader`] for each row group's column chunks ->
//! [`Source::fetch`] (coalesced, parallel, counted) -> decoded batches ->
//! filter, columns in the requested order, limit.
//!
//! # Guarantee
//!
//! The batches hold exactly the rows a full read followed by projection,
//! filter and limit would give, in file order. Bytes are only fetched for
//! the footer, the projected column chunks of row groups that may hold
//! matching rows, and the offset index when it is needed for
//! [`ParquetFile::take`] and not already in the tail. Bytes already in the
//! tail are never fetched again. Every fetch goes through the file's
//! [`Source`], so its [`IoStats`](strata_store::source::IoStats) see all of them.

use std::{
    ops::Range,
    sync::{Arc, OnceLock},
};

use arrow_array::{RecordBatch, RecordBatchOptions, UInt64Array};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use futures::{FutureExt, StreamExt, future::BoxFuture, stream::BoxStream};
use parquet::{
    arrow::{
        ProjectionMask,
        arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, RowSelection},
        async_reader::{
            AsyncFileReader, ParquetRecordBatchStream, ParquetRecordBatchStreamBuilder,
        },
    },
    errors::ParquetError,
    file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader},
};

use crate::{
    filter::Filter,
    request::{ScanRequest, TAIL_PREFETCH},
};
use strata_store::source::Source;

use crate::Error;

/// Rows per decoded batch.
pub const BATCH_SIZE: usize = 8192;

/// The magic bytes at both ends of a Parquet file.
const MAGIC: &[u8; 4] = b"PAR1";

/// One Parquet file opened for projected reads: its metadata and arrow
/// schema, and the [`Source`] its bytes come from. Cheap to share across
/// streams; each stream clones what it needs.
#[derive(Debug, Clone)]
pub struct ParquetFile {
    reader: SourceReader,
    metadata: Arc<ParquetMetaData>,
    arrow: ArrowReaderMetadata,
    /// The bytes of the first read (the footer and whatever precedes it).
    tail: Bytes,
    /// The metadata with the offset index, decoded from `tail` on first
    /// use by [`ParquetFile::take`]; the plain metadata when the index is
    /// not all in the tail or does not decode.
    indexed: Arc<OnceLock<(Arc<ParquetMetaData>, ArrowReaderMetadata)>>,
}

impl ParquetFile {
    /// Reads the footer of `source`. `tail` is the last bytes of the file
    /// when the caller already has them (normally the last
    /// `min(size, TAIL_PREFETCH)`); they are reused, so opening costs no
    /// request, or one when `tail` is `None`, as long as the footer fits in
    /// the tail. The offset index, when it also lies in the tail, is
    /// decoded when [`ParquetFile::take`] first needs it.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the bytes are not a Parquet file,
    /// [`Error::Parquet`] when the footer cannot be decoded,
    /// [`Error::InvalidConfig`] for a `tail` longer than the file, and
    /// [`Error::Store`] when a fetch fails.
    pub async fn open(source: Source, tail: Option<Bytes>) -> Result<Self, Error> {
        let name = source.name().to_string();
        crate::request::guarded(&name, Self::open_unguarded(source, tail)).await
    }

    async fn open_unguarded(source: Source, tail: Option<Bytes>) -> Result<Self, Error> {
        let size = source.size();
        let tail = match tail {
            Some(t) if t.len() as u64 > size => {
                return Err(Error::InvalidConfig(format!(
                    "{}: a tail of {} bytes was given for a file of {size} bytes",
                    source.name(),
                    t.len()
                )));
            }
            Some(t) => t,
            None => source.tail(crate::request::first_read_len(size)).await?,
        };
        // Header and footer magic plus the footer length.
        if size < 12 {
            return Err(Error::Corrupt(format!(
                "{}: {size} bytes is too small for a Parquet file",
                source.name()
            )));
        }
        if tail.len() >= MAGIC.len() && !tail.ends_with(MAGIC) {
            return Err(Error::Corrupt(format!(
                "{}: not a Parquet file (it does not end with PAR1)",
                source.name()
            )));
        }
        // The footer's encoding is checked before parquet decodes it; a
        // footer longer than the tail read is fetched whole (and kept as
        // the tail, so the metadata reader does not fetch it again).
        let footer_len = tail
            .len()
            .checked_sub(8)
            .and_then(|at| tail.get(at..at + 4))
            .map_or(0, |b| {
                u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            });
        let tail = match footer_len.checked_add(8) {
            Some(n) if n <= size && n > tail.len() as u64 => source.tail(n).await?,
            _ => tail,
        };
        if let Some(start) = tail.len().checked_sub(footer_len as usize + 8)
            && footer_len > 0
        {
            strata_parquet::validate::parquet_footer_bytes(&tail[start..tail.len() - 8])
                .map_err(|e| Error::Corrupt(format!("{}: {e}", source.name())))?;
        }
        let mut reader = SourceReader {
            source: source.with_tail(tail.clone()),
            metadata: None,
        };
        let metadata = reader
            .get_metadata(None)
            .await
            .map_err(|e| from_parquet(e).in_file(reader.source.name()))?;
        strata_parquet::validate::parquet_footer(&metadata, size)
            .map_err(|e| Error::Corrupt(format!("{}: {e}", reader.source.name())))?;
        reader.metadata = Some(metadata.clone());
        let arrow = ArrowReaderMetadata::try_new(metadata.clone(), ArrowReaderOptions::new())
            .map_err(|e| from_parquet(e).in_file(reader.source.name()))?;
        strata_parquet::validate::schema_depth(arrow.schema())
            .map_err(|e| Error::Corrupt(format!("{}: {e}", reader.source.name())))?;
        Ok(ParquetFile {
            reader,
            metadata,
            arrow,
            tail,
            indexed: Arc::new(OnceLock::new()),
        })
    }

    /// The file's arrow schema.
    pub fn schema(&self) -> SchemaRef {
        self.arrow.schema().clone()
    }

    /// Rows in the file.
    pub fn num_rows(&self) -> u64 {
        u64::try_from(self.metadata.file_metadata().num_rows()).unwrap_or(0)
    }

    /// The decoded footer (without the page index).
    pub fn metadata(&self) -> &Arc<ParquetMetaData> {
        &self.metadata
    }

    /// The decoded footer with the offset index when the index lies in the
    /// bytes the open read (so it costs no request), decodes and follows
    /// the rules; else the footer alone. Decoded once, on first use.
    pub fn indexed_metadata(&self) -> &Arc<ParquetMetaData> {
        &self.indexed().0
    }

    fn indexed(&self) -> &(Arc<ParquetMetaData>, ArrowReaderMetadata) {
        self.indexed.get_or_init(|| {
            let size = self.reader.source.size();
            let md = offset_index_from_tail(self.metadata.clone(), &self.tail, size);
            if Arc::ptr_eq(&md, &self.metadata) {
                return (md, self.arrow.clone());
            }
            match ArrowReaderMetadata::try_new(md.clone(), ArrowReaderOptions::new()) {
                Ok(arrow) => (md, arrow),
                Err(_) => (self.metadata.clone(), self.arrow.clone()),
            }
        })
    }

    /// Where the bytes come from (and its counters).
    pub fn source(&self) -> &Source {
        &self.reader.source
    }

    /// The schema of what [`ParquetFile::stream`] and [`ParquetFile::take`]
    /// return for `columns` (`None` for all).
    ///
    /// # Errors
    ///
    /// As the column checks of [`ParquetFile::stream`].
    pub fn projected_schema(&self, columns: Option<&[String]>) -> Result<SchemaRef, Error> {
        let indices = self.resolve_columns(columns)?;
        Ok(Arc::new(self.arrow.schema().project(&indices)?))
    }

    /// Compressed bytes (data and dictionary pages) of the column chunks
    /// of `columns` (`None` for all) over all row groups: what a full
    /// projected scan fetches, apart from the footer. Names the file does
    /// not have count nothing.
    pub fn projected_bytes(&self, columns: Option<&[String]>) -> u64 {
        let schema = self.arrow.schema();
        let roots: Vec<usize> = match columns {
            None => (0..schema.fields().len()).collect(),
            Some(names) => names
                .iter()
                .filter_map(|n| schema.index_of(n).ok())
                .collect(),
        };
        let leaves = self.leaves_of(&roots);
        self.metadata
            .row_groups()
            .iter()
            .flat_map(|rg| {
                leaves
                    .iter()
                    .filter_map(|&l| rg.columns().get(l))
                    .map(|c| c.byte_range().1)
            })
            .sum()
    }

    /// Streams the rows `req` asks for, in file order, as batches of the
    /// requested columns in the requested order.
    ///
    /// Only the projected columns (and the filter's column) are fetched,
    /// only for row groups whose statistics do not rule the filter out;
    /// once `limit` rows have come, nothing more is fetched.
    ///
    /// # Errors
    ///
    /// Up front: [`Error::UnknownColumn`] for a column the file lacks,
    /// [`Error::InvalidConfig`] for a column asked for twice or a filter
    /// that cannot apply to its column's type. In the stream: fetch and
    /// decode errors.
    pub fn stream(
        &self,
        req: &ScanRequest,
    ) -> Result<BoxStream<'static, Result<RecordBatch, Error>>, Error> {
        self.stream_row_groups(req, None)
    }

    /// The row groups a scan for `req` reads, in file order: those holding
    /// rows whose statistics do not rule the filter out.
    ///
    /// # Errors
    ///
    /// The up-front errors of [`ParquetFile::stream`].
    pub fn row_groups_for(&self, req: &ScanRequest) -> Result<Vec<usize>, Error> {
        Ok(self.plan(req, None)?.row_groups)
    }

    /// Each row group a scan for `req` reads ([`ParquetFile::row_groups_for`])
    /// with the uncompressed size, in bytes, of its projected column
    /// chunks (about what it holds decoded), in file order.
    ///
    /// # Errors
    ///
    /// The up-front errors of [`ParquetFile::stream`].
    pub fn projected_row_group_bytes(&self, req: &ScanRequest) -> Result<Vec<(usize, u64)>, Error> {
        let plan = self.plan(req, None)?;
        let leaves = self.leaves_of(&plan.roots);
        Ok(plan
            .row_groups
            .iter()
            .map(|&g| {
                let rg = self.metadata.row_group(g);
                let bytes = leaves
                    .iter()
                    .filter_map(|&l| rg.columns().get(l))
                    .map(|c| u64::try_from(c.uncompressed_size()).unwrap_or(0))
                    .sum::<u64>();
                (g, bytes)
            })
            .collect())
    }

    /// [`ParquetFile::stream`] over `row_groups` only (a subset of
    /// [`ParquetFile::row_groups_for`], in file order; `None` for all of
    /// them): callers decode row groups in parallel this way.
    ///
    /// # Errors
    ///
    /// As [`ParquetFile::stream`].
    pub fn stream_row_groups(
        &self,
        req: &ScanRequest,
        row_groups: Option<Vec<usize>>,
    ) -> Result<BoxStream<'static, Result<RecordBatch, Error>>, Error> {
        let name = self.reader.source.name().to_string();
        Ok(crate::request::guarded_stream(
            name,
            self.stream_unguarded(req, row_groups)?,
        ))
    }

    /// What a scan for `req` decodes: the root columns in file order, the
    /// filter's leaf, the row groups, and the reorder into the requested
    /// order.
    ///
    /// `subset` limits the row groups to those (each must be one the scan
    /// reads); only they are checked, so a caller streaming a file's row
    /// groups one at a time does not go over all of them each time.
    fn plan(&self, req: &ScanRequest, subset: Option<&[usize]>) -> Result<Plan, Error> {
        let schema = self.arrow.schema().clone();
        let out = self.resolve_columns(req.columns.as_deref())?;
        let mut roots = out.clone();
        // The filter's columns with a single leaf: name, leaf, type.
        let mut filter_leaves = Vec::new();
        if let Some(f) = &req.filter {
            for name in f.columns(&schema)? {
                let idx = schema.index_of(&name)?;
                roots.push(idx);
                if let [leaf] = self.leaves_of(&[idx])[..] {
                    filter_leaves.push((name, leaf, schema.field(idx).data_type().clone()));
                }
            }
        }
        roots.sort_unstable();
        roots.dedup();
        // The reader returns columns in file order; this puts them in the
        // requested order (and drops the filter's column when not asked
        // for).
        let reorder: Vec<usize> = out
            .iter()
            .map(|c| roots.partition_point(|r| r < c))
            .collect();
        let groups = self.metadata.num_row_groups();
        let leaf = |name: &str| {
            filter_leaves
                .iter()
                .find(|(n, ..)| n == name)
                .map(|(_, l, t)| (*l, t.clone()))
        };
        // The row groups asked about, judged all at once.
        let asked: Vec<usize> = match subset {
            None => (0..groups).collect(),
            Some(subset) => subset.iter().copied().filter(|&g| g < groups).collect(),
        };
        let metas: Vec<_> = asked.iter().map(|&g| self.metadata.row_group(g)).collect();
        let reads = match &req.filter {
            Some(f) => f.may_match_row_groups(&metas, &leaf),
            None => metas.iter().map(|rg| rg.num_rows() > 0).collect(),
        };
        let row_groups: Vec<usize> = match subset {
            None => asked
                .iter()
                .zip(&reads)
                .filter_map(|(&g, &r)| r.then_some(g))
                .collect(),
            Some(subset) => {
                // `reads` has one answer per group in range, in order.
                let mut read = reads.iter();
                if let Some(bad) = subset
                    .iter()
                    .find(|&&g| g >= groups || read.next() != Some(&true))
                {
                    return Err(Error::InvalidConfig(format!(
                        "{}: row group {bad} is not one this scan reads",
                        self.reader.source.name()
                    )));
                }
                subset.to_vec()
            }
        };
        Ok(Plan {
            roots,
            reorder,
            row_groups,
        })
    }

    fn stream_unguarded(
        &self,
        req: &ScanRequest,
        subset: Option<Vec<usize>>,
    ) -> Result<BoxStream<'static, Result<RecordBatch, Error>>, Error> {
        let Plan {
            roots,
            reorder,
            row_groups,
        } = self.plan(req, subset.as_deref())?;
        let filter = req.filter.clone();
        if row_groups.is_empty() || req.limit == Some(0) {
            return Ok(futures::stream::empty().boxed());
        }
        let mask = ProjectionMask::roots(self.arrow.parquet_schema(), roots.iter().copied());
        let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(
            self.reader.clone(),
            self.arrow.clone(),
        )
        .with_projection(mask)
        .with_row_groups(row_groups)
        .with_batch_size(BATCH_SIZE);
        if let (None, Some(limit)) = (&filter, req.limit) {
            builder = builder.with_limit(limit);
        }
        let inner = builder.build().map_err(from_parquet)?;
        let state = StreamState {
            inner: Some(inner),
            filter,
            reorder,
            remaining: req.limit,
            name: self.reader.source.name().to_string(),
        };
        Ok(futures::stream::unfold(state, StreamState::next).boxed())
    }

    /// The rows at `rows` (file row numbers, in any order, repeats
    /// allowed), in that order, with `columns` (`None` for all) in that
    /// order.
    ///
    /// Only the row groups holding the rows are fetched; when the offset
    /// index is known (see [`ParquetFile::open`]), only the pages holding
    /// them (and dictionary pages).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] naming the first row number that is out of
    /// range and the file's row count; the column errors of
    /// [`ParquetFile::stream`]; fetch and decode errors.
    pub async fn take(
        &self,
        rows: &[u64],
        columns: Option<&[String]>,
    ) -> Result<RecordBatch, Error> {
        let name = self.reader.source.name().to_string();
        crate::request::guarded(&name, self.take_unguarded(rows, columns)).await
    }

    async fn take_unguarded(
        &self,
        rows: &[u64],
        columns: Option<&[String]>,
    ) -> Result<RecordBatch, Error> {
        let out = self.resolve_columns(columns)?;
        let total = self.num_rows();
        if let Some(bad) = rows.iter().find(|&&r| r >= total) {
            return Err(Error::InvalidConfig(format!(
                "{}: row {bad} is out of range; the file has {total} rows",
                self.reader.source.name()
            )));
        }
        let out_schema = Arc::new(self.arrow.schema().project(&out)?);
        if rows.is_empty() {
            return Ok(RecordBatch::new_empty(out_schema));
        }
        let mut wanted = rows.to_vec();
        wanted.sort_unstable();
        wanted.dedup();

        // The row groups holding the rows, and the rows' positions in the
        // concatenation of those row groups.
        let mut row_groups = Vec::new();
        let mut ranges: Vec<Range<usize>> = Vec::new();
        let mut selected_rows = 0usize;
        let mut rg_start = 0u64;
        let mut next = 0usize;
        for (i, rg) in self.metadata.row_groups().iter().enumerate() {
            let n = u64::try_from(rg.num_rows()).unwrap_or(0);
            let end = rg_start.saturating_add(n);
            let first = next;
            while next < wanted.len() && wanted[next] < end {
                next += 1;
            }
            if next > first {
                row_groups.push(i);
                for &r in &wanted[first..next] {
                    let pos = selected_rows
                        .saturating_add(usize::try_from(r - rg_start).unwrap_or(usize::MAX));
                    match ranges.last_mut() {
                        Some(last) if last.end == pos => last.end = pos.saturating_add(1),
                        _ => ranges.push(pos..pos.saturating_add(1)),
                    }
                }
                selected_rows =
                    selected_rows.saturating_add(usize::try_from(n).unwrap_or(usize::MAX));
            }
            rg_start = end;
        }
        if next < wanted.len() {
            return Err(Error::Corrupt(format!(
                "{}: the row groups hold fewer rows than the footer's count of {total}",
                self.reader.source.name()
            )));
        }
        let selection = RowSelection::from_consecutive_ranges(ranges.into_iter(), selected_rows);

        let mut roots = out.clone();
        roots.sort_unstable();
        roots.dedup();
        let mask = ProjectionMask::roots(self.arrow.parquet_schema(), roots.iter().copied());
        // With the offset index the reader fetches only the selected pages.
        let stream = ParquetRecordBatchStreamBuilder::new_with_metadata(
            self.reader.clone(),
            self.indexed().1.clone(),
        )
        .with_projection(mask)
        .with_row_groups(row_groups)
        .with_row_selection(selection)
        .with_batch_size(BATCH_SIZE)
        .build()
        .map_err(from_parquet)?;
        let batches: Vec<RecordBatch> = stream
            .map(|b| {
                b.map_err(from_parquet)
                    .and_then(|b| checked(self.reader.source.name(), b))
            })
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_, _>>()?;
        let file_order = Arc::new(self.arrow.schema().project(&roots)?);
        let picked = arrow_select::concat::concat_batches(&file_order, &batches)?;
        if picked.num_rows() != wanted.len() {
            return Err(Error::Corrupt(format!(
                "{}: asked for {} distinct rows, the reader returned {}",
                self.reader.source.name(),
                wanted.len(),
                picked.num_rows()
            )));
        }
        let positions: UInt64Array = rows
            .iter()
            .map(|r| wanted.partition_point(|w| w < r) as u64)
            .collect::<Vec<u64>>()
            .into();
        let reorder: Vec<usize> = out
            .iter()
            .map(|c| roots.partition_point(|r| r < c))
            .collect();
        let picked = picked.project(&reorder)?;
        let columns = picked
            .columns()
            .iter()
            .map(|c| arrow_select::take::take(c.as_ref(), &positions, None))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RecordBatch::try_new_with_options(
            out_schema,
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows.len())),
        )?)
    }

    /// Indices of `columns` in the arrow schema (all when `None`).
    fn resolve_columns(&self, columns: Option<&[String]>) -> Result<Vec<usize>, Error> {
        crate::request::resolve_columns(self.arrow.schema(), columns)
    }

    /// The Parquet leaf columns under the top-level columns `roots`.
    fn leaves_of(&self, roots: &[usize]) -> Vec<usize> {
        let descr = self.arrow.parquet_schema();
        (0..descr.num_columns())
            .filter(|&l| roots.contains(&descr.get_column_root_idx(l)))
            .collect()
    }
}

/// What a scan decodes (see `ParquetFile::plan`).
struct Plan {
    roots: Vec<usize>,
    reorder: Vec<usize>,
    row_groups: Vec<usize>,
}

/// What the stream of [`ParquetFile::stream`] carries between batches.
struct StreamState {
    /// `None` once finished (an error, or the limit reached), which also
    /// drops the reader so nothing more is fetched.
    inner: Option<ParquetRecordBatchStream<SourceReader>>,
    filter: Option<Filter>,
    reorder: Vec<usize>,
    remaining: Option<usize>,
    name: String,
}

impl StreamState {
    async fn next(mut self) -> Option<(Result<RecordBatch, Error>, Self)> {
        loop {
            let inner = self.inner.as_mut()?;
            let batch = match inner.next().await? {
                Ok(batch) => batch,
                Err(e) => {
                    self.inner = None;
                    let e = from_parquet(e).in_file(&self.name);
                    return Some((Err(e), self));
                }
            };
            let batch = match checked(&self.name, batch).and_then(|b| self.finish_batch(b)) {
                Ok(b) => b,
                Err(e) => {
                    self.inner = None;
                    return Some((Err(e), self));
                }
            };
            if let Some(remaining) = &mut self.remaining {
                let batch = if batch.num_rows() >= *remaining {
                    self.inner = None;
                    batch.slice(0, *remaining)
                } else {
                    batch
                };
                *remaining -= batch.num_rows();
                if batch.num_rows() > 0 {
                    return Some((Ok(batch), self));
                }
            } else if batch.num_rows() > 0 {
                return Some((Ok(batch), self));
            }
        }
    }

    /// Filters a decoded batch and puts its columns in the requested order.
    fn finish_batch(&self, batch: RecordBatch) -> Result<RecordBatch, Error> {
        match &self.filter {
            Some(f) => {
                let mask = f.evaluate(&batch)?;
                let batch = batch.project(&self.reorder)?;
                Ok(arrow_select::filter::filter_record_batch(&batch, &mask)?)
            }
            None => Ok(batch.project(&self.reorder)?),
        }
    }
}

/// Parquet's async reader over a [`Source`]: single ranges go to
/// [`Source::get`], sets of ranges to [`Source::fetch`] (the source keeps
/// the file's tail, so bytes already read are served from memory).
#[derive(Debug, Clone)]
struct SourceReader {
    source: Source,
    /// Served by `get_metadata` once known.
    metadata: Option<Arc<ParquetMetaData>>,
}

impl AsyncFileReader for SourceReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        async move { self.source.get(range).await.map_err(to_parquet) }.boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        async move { self.source.fetch(&ranges).await.map_err(to_parquet) }.boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            if let Some(metadata) = &self.metadata {
                return Ok(metadata.clone());
            }
            let size = self.source.size();
            let prefetch = usize::try_from(TAIL_PREFETCH).unwrap_or(usize::MAX);
            let metadata = ParquetMetaDataReader::new()
                .with_arrow_reader_options(options)
                .with_prefetch_hint(Some(prefetch))
                .load_and_finish(&mut *self, size)
                .await?;
            Ok(Arc::new(metadata))
        }
        .boxed()
    }
}

/// `metadata` with the offset index added when every column chunk's
/// offset index lies inside `tail` (so it costs no request); otherwise
/// `metadata` unchanged.
fn offset_index_from_tail(
    metadata: Arc<ParquetMetaData>,
    tail: &Bytes,
    size: u64,
) -> Arc<ParquetMetaData> {
    let tail_start = size.saturating_sub(tail.len() as u64);
    let mut any = false;
    for chunk in metadata.row_groups().iter().flat_map(|rg| rg.columns()) {
        match chunk.offset_index_range() {
            Some(r) if r.start >= tail_start && r.end <= size => any = true,
            _ => return metadata,
        }
    }
    if !any || metadata.page_index().is_some() {
        return metadata;
    }
    let mut reader = ParquetMetaDataReader::new_with_metadata(metadata.as_ref().clone())
        .with_column_index_policy(PageIndexPolicy::Skip)
        .with_offset_index_policy(PageIndexPolicy::Optional);
    // The index only saves bytes later; a file whose index does not decode
    // (or breaks the rules) is read without it.
    match reader
        .read_page_indexes_sized(tail, size)
        .and_then(|()| reader.finish())
    {
        // An index that breaks the rules is not used either: readers skip
        // pages by it, trusting it.
        Ok(with_index) if strata_parquet::validate::parquet_footer(&with_index, size).is_ok() => {
            Arc::new(with_index)
        }
        _ => metadata,
    }
}

/// `batch` when [`strata_parquet::validate::batch`] passes it.
fn checked(name: &str, batch: RecordBatch) -> Result<RecordBatch, Error> {
    strata_parquet::validate::batch(&batch)
        .map(|()| batch)
        .map_err(|e| Error::Corrupt(format!("{name}: {e}")))
}

/// Wraps a source error for parquet's reader traits.
fn to_parquet(e: strata_store::Error) -> ParquetError {
    ParquetError::External(Box::new(e))
}

/// Unwraps errors that [`to_parquet`] wrapped; others become
/// [`Error::Parquet`].
fn from_parquet(e: ParquetError) -> Error {
    match e {
        ParquetError::External(inner) => match inner.downcast::<strata_store::Error>() {
            Ok(e) => Error::Store(*e),
            Err(inner) => Error::Parquet(ParquetError::External(inner)),
        },
        e => Error::Parquet(e),
    }
}

impl Error {
    /// Names the file in a decode error (other errors already do).
    fn in_file(self, name: &str) -> Error {
        match self {
            Error::Parquet(e) => Error::Corrupt(format!("{name}: {e}")),
            e => e,
        }
    }
}
