//! A Parquet file writer for record batches that encodes through strata's
//! direct column encoder when the schema allows it.
//!
//! [`ParquetWriter`] takes batches one at a time and cuts row groups of
//! `max_row_group_size` rows, like parquet's `ArrowWriter`. It is built on
//! the one encoding path of [`crate::rowgroup`]: a
//! [`FileEncoding`] chooses the encoder. When every leaf of the schema has
//! a type the direct encoder handles (every type of the spec format, at
//! any depth) and every column has the same codec, pages are encoded by
//! its [`RowGroupEncoder`], row groups are appended by its
//! [`FileAppender`], and the footer names strata as the writer; otherwise
//! the batches go to parquet's `ArrowWriter` unchanged. Either way the
//! file's schema, footer and Arrow schema metadata are parquet's own.
//!
//! On the direct path the encodings follow the Arrow types (dictionary
//! columns `RLE_DICTIONARY`, others `PLAIN`, integer columns set to
//! `DELTA_BINARY_PACKED`, float columns set to `BYTE_STREAM_SPLIT` and
//! byte-string columns set to `DELTA_LENGTH_BYTE_ARRAY` in the properties
//! so), pages are version 1 and
//! end at the properties' page row count and size, statistics are kept per
//! page and cut at the properties' lengths; the properties' other
//! encoding and dictionary settings apply to the `ArrowWriter` path only.

use std::io::Write;

use rayon::prelude::*;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::{arrow::ArrowWriter, file::properties::WriterProperties};

use crate::{
    Error,
    encoder::check_gather,
    rowgroup::{FileAppender, FileEncoding, ParquetEncoder, RowGroupEncoder},
};

/// Writes record batches to one Parquet file.
pub struct ParquetWriter<W: Write + Send> {
    inner: Inner<W>,
}

enum Inner<W: Write + Send> {
    Arrow(Box<ArrowWriter<W>>),
    Direct(Box<Direct<W>>),
}

/// Rows from which one write encodes its leaf columns on all threads (the
/// encoders are independent; fewer rows are not worth the hand-off).
const PARALLEL_ROWS: usize = 4096;

struct Direct<W: Write + Send> {
    file: FileAppender<W>,
    group: RowGroupEncoder,
    /// Rows in the row group being encoded.
    rows: usize,
    max_rows: usize,
    /// Whether writes of [`PARALLEL_ROWS`] or more encode the leaves on
    /// all threads.
    parallel: bool,
}

impl<W: Write + Send> std::fmt::Debug for ParquetWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetWriter")
            .field("direct", &self.is_direct())
            .finish_non_exhaustive()
    }
}

impl<W: Write + Send> ParquetWriter<W> {
    /// A writer of `schema` to `sink` with `props`, through the direct
    /// encoder when it takes them ([`ParquetEncoder::Auto`]).
    ///
    /// # Errors
    ///
    /// [`Error::Parquet`] when parquet cannot write the schema.
    pub fn try_new(sink: W, schema: SchemaRef, props: WriterProperties) -> Result<Self, Error> {
        Self::with_encoder(sink, schema, props, ParquetEncoder::Auto)
    }

    /// A writer of `schema` to `sink` with `props`, through the encoder
    /// [`FileEncoding::new`] chooses for `encoder`.
    ///
    /// # Errors
    ///
    /// [`Error::Parquet`] when parquet cannot write the schema.
    pub fn with_encoder(
        sink: W,
        schema: SchemaRef,
        props: WriterProperties,
        encoder: ParquetEncoder,
    ) -> Result<Self, Error> {
        let max_rows = props.max_row_group_row_count().unwrap_or(usize::MAX).max(1);
        let encoding = FileEncoding::new(schema, props, encoder)?;
        let inner = if encoding.is_direct() {
            Inner::Direct(Box::new(Direct {
                file: encoding.appender(sink)?,
                group: encoding.row_group_encoder(),
                rows: 0,
                max_rows,
                parallel: true,
            }))
        } else {
            // parquet's own writer cuts the row groups (by rows and by
            // bytes, as its properties say).
            Inner::Arrow(Box::new(encoding.arrow_writer(sink)?))
        };
        Ok(ParquetWriter { inner })
    }

    /// Makes the direct encoder encode a write's leaf columns on the
    /// calling thread (`false`) rather than on all threads (`true`, the
    /// default). A caller that already keeps every core busy with writers
    /// of its own (the merge, one per key range) saves the hand-off of
    /// every write to the thread pool and the move of its rows to another
    /// core's cache.
    pub fn set_parallel_leaves(&mut self, parallel: bool) {
        if let Inner::Direct(d) = &mut self.inner {
            d.parallel = parallel;
        }
    }

    /// Whether the pages the direct encoder writes from now on carry the
    /// CRC-32 of their body in their header (on by default; see
    /// [`crate::encoder::Shredder::with_page_checksums`]). parquet's `ArrowWriter` writes
    /// no checksums, so this does nothing on that path.
    pub fn set_page_checksums(&mut self, on: bool) {
        if let Inner::Direct(d) = &mut self.inner {
            for l in d.group.leaves() {
                l.set_page_checksums(on);
            }
        }
    }

    /// Whether pages go through the direct encoder.
    pub fn is_direct(&self) -> bool {
        matches!(self.inner, Inner::Direct(_))
    }

    /// Appends the rows of `batch` (its schema must be the writer's).
    ///
    /// # Errors
    ///
    /// [`Error::Parquet`] or [`Error::InvalidConfig`] for data the schema
    /// does not allow (nulls in a required column) and write failures.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        match &mut self.inner {
            Inner::Arrow(w) => Ok(w.write(batch)?),
            Inner::Direct(d) => {
                d.make_room(&[batch])?;
                let mut at = 0;
                while at < batch.num_rows() {
                    let n = (d.max_rows - d.rows).min(batch.num_rows() - at);
                    let part = batch.slice(at, n);
                    if n >= PARALLEL_ROWS && d.parallel {
                        d.group
                            .leaves()
                            .par_iter_mut()
                            .try_for_each(|l| l.write(&part))?;
                    } else {
                        d.group.write(&part)?;
                    }
                    d.rows += n;
                    at += n;
                    if d.rows == d.max_rows {
                        d.flush()?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Appends rows gathered from `batches` (each with the writer's
    /// schema): `rows[k] = (b, i)` makes row `i` of `batches[b]` the next
    /// row. The direct encoder copies the values straight from the batches
    /// into pages; the `ArrowWriter` path gathers a batch first.
    ///
    /// # Errors
    ///
    /// As [`ParquetWriter::write`], and [`Error::InvalidConfig`] for a pair
    /// naming a batch or row that does not exist.
    pub fn write_gather(
        &mut self,
        batches: &[RecordBatch],
        rows: &[(usize, usize)],
    ) -> Result<(), Error> {
        check_gather(batches, rows)?;
        match &mut self.inner {
            Inner::Arrow(w) => {
                let refs: Vec<&RecordBatch> = batches.iter().collect();
                let batch = arrow_select::interleave::interleave_record_batch(&refs, rows)?;
                Ok(w.write(&batch)?)
            }
            Inner::Direct(d) => {
                let mut at = 0;
                while at < rows.len() {
                    let n = (d.max_rows - d.rows).min(rows.len() - at);
                    let (refs, run) = d.fitting_run(batches, &rows[at..at + n])?;
                    let leaves = d.group.leaves();
                    if run.len() >= PARALLEL_ROWS && d.parallel {
                        leaves
                            .par_iter_mut()
                            .try_for_each(|l| l.write_gather_refs(&refs, &run))?;
                    } else {
                        for leaf in leaves {
                            leaf.write_gather_refs(&refs, &run)?;
                        }
                    }
                    d.rows += run.len();
                    at += run.len();
                    if d.rows == d.max_rows {
                        d.flush()?;
                    }
                }
                Ok(())
            }
        }
    }

    /// [`ParquetWriter::write_gather`], except that a schema with lists or
    /// maps is gathered into one batch first (Arrow's `interleave`) and
    /// written as a whole: the direct encoder walks nested levels per
    /// gathered row, which costs more than one gather and one contiguous
    /// walk.
    ///
    /// # Errors
    ///
    /// As [`ParquetWriter::write_gather`].
    pub fn write_gather_auto(
        &mut self,
        batches: &[RecordBatch],
        rows: &[(usize, usize)],
    ) -> Result<(), Error> {
        let nested = batches
            .first()
            .is_some_and(|b| has_list_field(b.schema_ref()));
        if !nested || !self.is_direct() {
            return self.write_gather(batches, rows);
        }
        check_gather(batches, rows)?;
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        let batch = arrow_select::interleave::interleave_record_batch(&refs, rows)?;
        self.write(&batch)
    }

    /// Closes the open row group now (if it has rows), whatever its size:
    /// for row groups cut at a byte size ([`ParquetWriter::in_progress_size`])
    /// rather than at the properties' row count.
    ///
    /// # Errors
    ///
    /// [`Error::Parquet`] for write failures.
    pub fn flush(&mut self) -> Result<(), Error> {
        match &mut self.inner {
            Inner::Arrow(w) => Ok(w.flush()?),
            Inner::Direct(d) => d.flush(),
        }
    }

    /// Bytes already written to the sink.
    pub fn bytes_written(&self) -> u64 {
        match &self.inner {
            Inner::Arrow(w) => w.bytes_written() as u64,
            Inner::Direct(d) => d.file.bytes_written(),
        }
    }

    /// Bytes encoded but not yet written (the open row group).
    pub fn in_progress_size(&self) -> u64 {
        match &self.inner {
            Inner::Arrow(w) => w.in_progress_size() as u64,
            Inner::Direct(d) => d.group.buffered_bytes(),
        }
    }

    /// Writes the last row group and the footer, and returns the sink.
    ///
    /// # Errors
    ///
    /// [`Error::Parquet`] for write failures.
    pub fn finish(self) -> Result<W, Error> {
        match self.inner {
            Inner::Arrow(w) => Ok(w.into_inner()?),
            Inner::Direct(mut d) => {
                d.flush()?;
                d.file.finish()
            }
        }
    }
}

/// Batches, and rows as (index into them, row) pairs.
type Run<'b> = (Vec<&'b RecordBatch>, Vec<(usize, usize)>);

impl<W: Write + Send> Direct<W> {
    /// Closes the open row group first when a dictionary column could not
    /// take `batches`' dictionary values in it (a one-byte key indexes 256
    /// values, and readers refuse a larger dictionary for such a column).
    fn make_room(&mut self, batches: &[&RecordBatch]) -> Result<(), Error> {
        if self
            .group
            .leaves()
            .iter()
            .all(|l| l.dictionary_room(batches))
        {
            return Ok(());
        }
        self.flush()?;
        match self
            .group
            .leaves()
            .iter()
            .find(|l| !l.dictionary_room(batches))
        {
            Some(l) => Err(Error::DictionaryOverflow { column: l.column() }),
            None => Ok(()),
        }
    }

    /// The longest leading run of `rows` (at least one row) whose batches'
    /// dictionaries fit the open row group, closing it first when not even
    /// one row's batch fits; the run's batches and its rows renumbered to
    /// them.
    fn fitting_run<'b>(
        &mut self,
        batches: &'b [RecordBatch],
        rows: &[(usize, usize)],
    ) -> Result<Run<'b>, Error> {
        let mut slot = vec![usize::MAX; batches.len()];
        let mut refs: Vec<&RecordBatch> = Vec::new();
        let mut run = Vec::with_capacity(rows.len());
        for &(b, i) in rows {
            if slot[b] == usize::MAX {
                refs.push(&batches[b]);
                if !self.group.leaves().iter().all(|l| l.dictionary_room(&refs)) {
                    refs.pop();
                    if !run.is_empty() {
                        break;
                    }
                    self.make_room(&[&batches[b]])?;
                    refs.push(&batches[b]);
                }
                slot[b] = refs.len() - 1;
            }
            run.push((slot[b], i));
        }
        Ok((refs, run))
    }

    /// Closes the open row group, if it has rows.
    fn flush(&mut self) -> Result<(), Error> {
        if self.rows == 0 {
            return Ok(());
        }
        let group = self.group.finish(true)?;
        self.file.append(group)?;
        self.rows = 0;
        Ok(())
    }
}

/// Whether a field of `schema` holds a list or map at any depth (such
/// rows cost the direct encoder's gather more than a gather into one
/// batch and a contiguous write: see [`ParquetWriter::write_gather_auto`]).
pub fn has_list_field(schema: &arrow_schema::Schema) -> bool {
    schema.fields().iter().any(|f| has_list(f.data_type()))
}

/// Whether `t` holds a list or map at any depth.
fn has_list(t: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType as T;
    match t {
        T::List(_)
        | T::LargeList(_)
        | T::FixedSizeList(..)
        | T::Map(..)
        | T::ListView(_)
        | T::LargeListView(_) => true,
        T::Struct(fs) => fs.iter().any(|f| has_list(f.data_type())),
        T::Dictionary(_, v) => has_list(v),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Decimal128Array, Float64Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use bytes::Bytes;
    use parquet::{
        arrow::arrow_reader::ParquetRecordBatchReaderBuilder, basic::ZstdLevel,
        file::reader::FileReader, file::serialized_reader::SerializedFileReader,
    };

    use super::*;
    use crate::rowgroup::EncodedRowGroup;
    use strata_testkit::readback::rows_as_text;

    fn batch(schema: &Arc<Schema>, from: i64, n: i64) -> RecordBatch {
        let ints = Arc::new(Int64Array::from_iter_values(from..from + n)) as ArrayRef;
        let second: ArrayRef = match schema.field(1).data_type() {
            DataType::Utf8 => Arc::new(StringArray::from_iter(
                (from..from + n).map(|i| (i % 3 != 0).then(|| format!("s{i}"))),
            )),
            DataType::Float64 => Arc::new(Float64Array::from_iter_values(
                (from..from + n).map(|i| i as f64 / 2.0),
            )),
            DataType::Decimal128(p, s) => Arc::new(
                Decimal128Array::from_iter_values((from..from + n).map(|i| i128::from(i) - 99))
                    .with_precision_and_scale(*p, *s)
                    .unwrap(),
            ),
            DataType::Decimal256(p, s) => Arc::new(
                arrow_array::Decimal256Array::from_iter_values(
                    (from..from + n).map(|i| arrow_buffer::i256::from_i128(i128::from(i) - 99)),
                )
                .with_precision_and_scale(*p, *s)
                .unwrap(),
            ),
            other => unreachable!("no test batch of {other}"),
        };
        RecordBatch::try_new(schema.clone(), vec![ints, second]).unwrap()
    }

    /// Writes three batches and rows gathered from them, with row groups
    /// of 100 rows; returns the file's rows and row-group sizes.
    fn write_file(second: DataType, direct: bool) -> (Vec<String>, Vec<String>, Vec<i64>) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int64, false),
            Field::new("s", second, true),
        ]));
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(100))
            .set_compression(parquet::basic::Compression::ZSTD(
                ZstdLevel::try_new(1).unwrap(),
            ))
            .build();
        let mut w = ParquetWriter::try_new(Vec::new(), schema.clone(), props).unwrap();
        assert_eq!(w.is_direct(), direct);
        let batches: Vec<RecordBatch> = (0..3).map(|b| batch(&schema, b * 1000, 70)).collect();
        let pairs: Vec<(usize, usize)> = (0..150).map(|k| (k % 3, (k * 7) % 70)).collect();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.write_gather(&batches, &pairs).unwrap();
        assert!(w.write_gather(&batches, &[(3, 0)]).is_err());
        let bytes = Bytes::from(w.finish().unwrap());
        let groups = SerializedFileReader::new(bytes.clone())
            .unwrap()
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .collect();
        let got: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        let mut want = batches.clone();
        want.push(arrow_select::interleave::interleave_record_batch(&refs, &pairs).unwrap());
        (
            rows_as_text(&got).unwrap(),
            rows_as_text(&want).unwrap(),
            groups,
        )
    }

    #[test]
    fn batches_and_gathered_rows_round_trip_on_both_paths() {
        for (second, direct) in [
            (DataType::Utf8, true),
            (DataType::Float64, true),
            (DataType::Decimal128(10, 2), true),
            (DataType::Decimal128(30, 2), true),
            (DataType::Decimal256(40, 2), true),
            // Decimal256 of 38 digits or fewer (specs make Decimal128 of
            // those): parquet's writer.
            (DataType::Decimal256(20, 2), false),
        ] {
            let (got, want, groups) = write_file(second, direct);
            assert_eq!(got, want, "direct {direct}");
            assert_eq!(groups, vec![100, 100, 100, 60], "direct {direct}");
        }
    }

    /// Encoding the leaves on the calling thread writes the same bytes as
    /// encoding them on all threads.
    #[test]
    fn leaves_on_one_thread_write_the_same_bytes() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
        ]));
        let file = |parallel: bool| {
            let mut w =
                ParquetWriter::try_new(Vec::new(), schema.clone(), WriterProperties::default())
                    .unwrap();
            w.set_parallel_leaves(parallel);
            let batches: Vec<RecordBatch> =
                (0..3).map(|b| batch(&schema, b * 10_000, 9000)).collect();
            let pairs: Vec<(usize, usize)> = (0..8000).map(|k| (k % 3, (k * 7) % 9000)).collect();
            w.write(&batches[0]).unwrap();
            w.write_gather(&batches, &pairs).unwrap();
            w.finish().unwrap()
        };
        assert_eq!(file(false), file(true));
    }

    /// Row groups encoded apart and appended in order make the file
    /// [`ParquetWriter`] makes of the same batches, on either encoder.
    #[test]
    fn appended_row_groups_make_the_writers_file() {
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
        ]));
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(300))
            .build();
        let batches: Vec<RecordBatch> = (0..4).map(|b| batch(&schema, b * 150, 150)).collect();
        for encoder in [ParquetEncoder::Auto, ParquetEncoder::Arrow] {
            let encoding = FileEncoding::new(schema.clone(), props.clone(), encoder).unwrap();
            assert_eq!(encoding.is_direct(), encoder == ParquetEncoder::Auto);
            // Two workers, each encoding one row group of two batches.
            let mut groups: Vec<EncodedRowGroup> = batches
                .chunks(2)
                .map(|pair| {
                    let mut e = encoding.row_group_encoder();
                    for b in pair {
                        e.write(b).unwrap();
                    }
                    assert!(e.buffered_bytes() > 0);
                    e.finish(false).unwrap()
                })
                .collect();
            let mut file = encoding.appender(Vec::new()).unwrap();
            for g in groups.drain(..) {
                file.append(g).unwrap();
            }
            assert_eq!(file.row_groups(), 2);
            let appended = file.finish().unwrap();

            let mut w =
                ParquetWriter::with_encoder(Vec::new(), schema.clone(), props.clone(), encoder)
                    .unwrap();
            for b in &batches {
                w.write(b).unwrap();
            }
            assert_eq!(appended, w.finish().unwrap(), "{encoder:?}");
        }
    }
}
