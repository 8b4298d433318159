//! The one path every strata Parquet file is encoded by: the choice of
//! encoder, row groups encoded apart from any file, and files those row
//! groups are appended to in order.
//!
//! A [`FileEncoding`] is made once per schema and set of properties; it
//! chooses between strata's direct encoder ([`Shredder`]) and parquet's
//! Arrow column writers, by [`ParquetEncoder`] and by what the direct
//! encoder takes (every type of the spec format at any depth, every
//! column with the same codec). No other place makes that choice.
//!
//! From it, each worker takes a [`RowGroupEncoder`], writes the batches of
//! one row group and finishes it into an [`EncodedRowGroup`], which any
//! [`FileAppender`] of the same encoding appends to its file: the
//! generate pipeline encodes row groups on many threads and appends each
//! file's in order; [`ParquetWriter`](crate::writer::ParquetWriter) cuts
//! one stream of batches into row groups and appends them as it goes.
//! Either way the file's schema, footer and Arrow schema metadata are
//! parquet's own, and the footer names strata as the writer when the
//! direct encoder wrote the pages.

use std::{io::Write, sync::Arc};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::{
    arrow::{
        ArrowWriter,
        arrow_writer::{
            ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, ArrowWriterOptions,
            compute_leaves,
        },
    },
    column::writer::ColumnCloseResult,
    file::{properties::WriterProperties, writer::SerializedFileWriter},
};
use rayon::prelude::*;
use serde::Serialize;

use crate::{
    Error,
    encoder::{BufferPool, ColumnChunk, LeafEncoder, Shredder, direct_properties},
};

/// Which encoder writes a file's Parquet pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParquetEncoder {
    /// strata's direct encoder, for every type of the spec format at any
    /// depth (`Arrow` for a schema it does not take, such as
    /// `Decimal256`).
    #[default]
    Auto,
    /// parquet's `ArrowColumnWriter`, for every schema and codec.
    Arrow,
}

impl std::str::FromStr for ParquetEncoder {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "auto" => Ok(ParquetEncoder::Auto),
            "arrow" => Ok(ParquetEncoder::Arrow),
            _ => Err(Error::InvalidConfig(format!(
                "unknown encoder '{s}' (expected auto or arrow)"
            ))),
        }
    }
}

/// How the files of one schema and set of properties are encoded: the
/// encoder chosen once, and the buffers its row groups share.
pub struct FileEncoding {
    schema: SchemaRef,
    /// The properties the files are written with ([`direct_properties`]
    /// on the direct path).
    props: WriterProperties,
    how: How,
    pool: BufferPool,
}

enum How {
    Direct(Shredder),
    Arrow(Arc<ArrowRowGroupWriterFactory>),
}

impl std::fmt::Debug for FileEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileEncoding")
            .field("direct", &self.is_direct())
            .finish_non_exhaustive()
    }
}

impl FileEncoding {
    /// The encoding of batches of `schema` by `props`: the direct encoder
    /// when `encoder` is [`ParquetEncoder::Auto`] and it takes the schema
    /// and the properties, parquet's Arrow column writers otherwise.
    ///
    /// # Errors
    /// [`Error::Parquet`] when parquet cannot write the schema.
    pub fn new(
        schema: SchemaRef,
        props: WriterProperties,
        encoder: ParquetEncoder,
    ) -> Result<Self, Error> {
        let options = ArrowWriterOptions::new().with_properties(props.clone());
        let probe = ArrowWriter::try_new_with_options(Vec::new(), schema.clone(), options)?;
        let (probe, factory) = probe.into_serialized_writer()?;
        let shredder = match encoder {
            ParquetEncoder::Auto => Shredder::for_properties(&schema, probe.schema_descr(), &props),
            ParquetEncoder::Arrow => None,
        };
        let (props, how) = match shredder {
            // Files whose pages strata encodes say so.
            Some(s) => (direct_properties(props), How::Direct(s)),
            None => (props, How::Arrow(Arc::new(factory))),
        };
        Ok(FileEncoding {
            schema,
            props,
            how,
            pool: BufferPool::default(),
        })
    }

    /// Whether the direct encoder's pages carry the CRC-32 of their body
    /// in their header (on by default; see [`Shredder::with_page_checksums`]).
    /// parquet's writers write no checksums, so this does nothing on that
    /// path.
    pub fn with_page_checksums(mut self, on: bool) -> Self {
        if let How::Direct(s) = self.how {
            self.how = How::Direct(s.with_page_checksums(on));
        }
        self
    }

    /// Whether pages go through the direct encoder.
    pub fn is_direct(&self) -> bool {
        matches!(self.how, How::Direct(_))
    }

    /// The schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The properties the files are written with.
    pub fn properties(&self) -> &WriterProperties {
        &self.props
    }

    /// An encoder of row groups, for one worker; it encodes one row group
    /// after another.
    pub fn row_group_encoder(&self) -> RowGroupEncoder {
        let state = match &self.how {
            How::Direct(s) => State::Direct(s.row_group()),
            How::Arrow(f) => State::Arrow {
                factory: Arc::clone(f),
                writers: None,
            },
        };
        RowGroupEncoder {
            schema: self.schema.clone(),
            state,
            pool: self.pool.clone(),
        }
    }

    /// A file written to `sink`, its row groups appended in order.
    ///
    /// # Errors
    /// [`Error::Parquet`] when the file's header cannot be written.
    pub fn appender<W: Write + Send>(&self, sink: W) -> Result<FileAppender<W>, Error> {
        let (file, _) = self.arrow_writer(sink)?.into_serialized_writer()?;
        Ok(FileAppender {
            file,
            pool: self.pool.clone(),
        })
    }

    /// parquet's whole-file writer of this encoding's schema and
    /// properties.
    pub(crate) fn arrow_writer<W: Write + Send>(&self, sink: W) -> Result<ArrowWriter<W>, Error> {
        let options = ArrowWriterOptions::new().with_properties(self.props.clone());
        Ok(ArrowWriter::try_new_with_options(
            sink,
            self.schema.clone(),
            options,
        )?)
    }
}

/// Encodes the batches of one row group after another, apart from any
/// file (one per worker).
pub struct RowGroupEncoder {
    schema: SchemaRef,
    state: State,
    pool: BufferPool,
}

enum State {
    Direct(Vec<LeafEncoder>),
    Arrow {
        factory: Arc<ArrowRowGroupWriterFactory>,
        /// The open row group's column writers, made at its first write.
        writers: Option<Vec<ArrowColumnWriter>>,
    },
}

impl std::fmt::Debug for RowGroupEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowGroupEncoder")
            .field("direct", &matches!(self.state, State::Direct(_)))
            .finish_non_exhaustive()
    }
}

impl RowGroupEncoder {
    /// Appends the rows of `batch` (of the encoding's schema) to the open
    /// row group.
    ///
    /// # Errors
    /// [`Error::Parquet`] or [`Error::InvalidConfig`] for data the schema
    /// does not allow (nulls in a required column).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        match &mut self.state {
            State::Direct(leaves) => {
                for leaf in leaves.iter_mut() {
                    leaf.write(batch)?;
                }
                Ok(())
            }
            State::Arrow { factory, writers } => {
                let writers = match writers {
                    Some(w) => w,
                    None => writers.insert(factory.create_column_writers(0)?),
                };
                let mut w = writers.iter_mut();
                for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
                    for leaf in compute_leaves(field, column)? {
                        let writer = w.next().ok_or_else(|| {
                            Error::InvalidConfig(
                                "schema has more leaves than column writers".into(),
                            )
                        })?;
                        writer.write(&leaf)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Appends rows gathered from `batches` (each of the encoding's
    /// schema) to the open row group: `rows[k] = (b, i)` makes row `i` of
    /// `batches[b]` the next row. The direct encoder copies each value
    /// once, from the batches into pages (its leaf columns on all threads
    /// when `parallel`); parquet's path gathers a batch first. A worker
    /// that encodes row groups of a merge on its own thread passes
    /// `false`.
    ///
    /// # Errors
    /// As [`RowGroupEncoder::write`], and [`Error::InvalidConfig`] for a
    /// pair naming a batch or row that does not exist, or for dictionary
    /// batches whose values one row group cannot take.
    pub fn write_gather(
        &mut self,
        batches: &[&RecordBatch],
        rows: &[(usize, usize)],
        parallel: bool,
    ) -> Result<(), Error> {
        if let Some(&(b, i)) = rows
            .iter()
            .find(|&&(b, i)| batches.get(b).is_none_or(|batch| i >= batch.num_rows()))
        {
            return Err(Error::InvalidConfig(format!(
                "cannot gather row {i} of batch {b}: there is no such row"
            )));
        }
        match &mut self.state {
            State::Direct(leaves) => {
                if let Some(l) = leaves.iter().find(|l| !l.dictionary_room(batches)) {
                    return Err(Error::DictionaryOverflow { column: l.column() });
                }
                if parallel {
                    leaves
                        .par_iter_mut()
                        .try_for_each(|l| l.write_gather_refs(batches, rows))
                } else {
                    leaves
                        .iter_mut()
                        .try_for_each(|l| l.write_gather_refs(batches, rows))
                }
            }
            State::Arrow { .. } => {
                let batch = arrow_select::interleave::interleave_record_batch(batches, rows)?;
                self.write(&batch)
            }
        }
    }

    /// The direct encoder's leaf encoders, for a writer that feeds them
    /// itself (none on parquet's path).
    pub(crate) fn leaves(&mut self) -> &mut [LeafEncoder] {
        match &mut self.state {
            State::Direct(leaves) => leaves,
            State::Arrow { .. } => &mut [],
        }
    }

    /// Bytes encoded in the open row group.
    pub fn buffered_bytes(&self) -> u64 {
        match &self.state {
            State::Direct(leaves) => leaves.iter().map(|l| l.buffered_bytes() as u64).sum(),
            State::Arrow { writers, .. } => writers
                .iter()
                .flatten()
                .map(|w| w.get_estimated_total_bytes() as u64)
                .sum(),
        }
    }

    /// Closes the open row group, its leaf columns on all threads when
    /// `parallel`; the encoder is ready for the next one.
    ///
    /// # Errors
    /// [`Error::Parquet`] when a column cannot be closed.
    pub fn finish(&mut self, parallel: bool) -> Result<EncodedRowGroup, Error> {
        match &mut self.state {
            State::Direct(leaves) => {
                let pool = &self.pool;
                let chunks = if parallel {
                    leaves
                        .par_iter_mut()
                        .map(|l| l.close(pool))
                        .collect::<Result<Vec<_>, _>>()?
                } else {
                    leaves
                        .iter_mut()
                        .map(|l| l.close(pool))
                        .collect::<Result<Vec<_>, _>>()?
                };
                Ok(EncodedRowGroup(Chunks::Direct(chunks)))
            }
            State::Arrow { factory, writers } => {
                let writers = match writers.take() {
                    Some(w) => w,
                    None => factory.create_column_writers(0)?,
                };
                let chunks = writers
                    .into_iter()
                    .map(|w| w.close())
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(EncodedRowGroup(Chunks::Arrow(chunks)))
            }
        }
    }
}

/// One row group encoded, ready to be appended to a file of its encoding.
pub struct EncodedRowGroup(Chunks);

enum Chunks {
    Direct(Vec<(ColumnChunk, ColumnCloseResult)>),
    Arrow(Vec<ArrowColumnChunk>),
}

impl std::fmt::Debug for EncodedRowGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let columns = match &self.0 {
            Chunks::Direct(c) => c.len(),
            Chunks::Arrow(c) => c.len(),
        };
        f.debug_struct("EncodedRowGroup")
            .field("columns", &columns)
            .finish_non_exhaustive()
    }
}

/// A Parquet file being written: row groups are appended in the order
/// given, and [`FileAppender::finish`] writes the footer.
pub struct FileAppender<W: Write + Send> {
    file: SerializedFileWriter<W>,
    pool: BufferPool,
}

impl<W: Write + Send> std::fmt::Debug for FileAppender<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileAppender")
            .field("row_groups", &self.row_groups())
            .finish_non_exhaustive()
    }
}

impl<W: Write + Send> FileAppender<W> {
    /// Appends `group` (of this file's encoding) as the next row group.
    ///
    /// # Errors
    /// [`Error::Parquet`] for write failures.
    pub fn append(&mut self, group: EncodedRowGroup) -> Result<(), Error> {
        let mut rg = self.file.next_row_group()?;
        match group.0 {
            Chunks::Direct(chunks) => {
                for (bytes, close) in chunks {
                    rg.append_column(&bytes, close)?;
                    self.pool.give_back(bytes);
                }
            }
            Chunks::Arrow(chunks) => {
                for chunk in chunks {
                    chunk.append_to_row_group(&mut rg)?;
                }
            }
        }
        rg.close()?;
        Ok(())
    }

    /// Row groups appended so far.
    pub fn row_groups(&self) -> usize {
        self.file.flushed_row_groups().len()
    }

    /// Bytes already written to the sink.
    pub fn bytes_written(&self) -> u64 {
        self.file.bytes_written() as u64
    }

    /// Writes the footer and returns the sink.
    ///
    /// # Errors
    /// [`Error::Parquet`] for write failures.
    pub fn finish(self) -> Result<W, Error> {
        Ok(self.file.into_inner()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoder_names_parse() {
        assert_eq!(
            "auto".parse::<ParquetEncoder>().unwrap(),
            ParquetEncoder::Auto
        );
        assert_eq!(
            "arrow".parse::<ParquetEncoder>().unwrap(),
            ParquetEncoder::Arrow
        );
        let e = "fast".parse::<ParquetEncoder>().unwrap_err().to_string();
        assert!(e.contains("unknown encoder 'fast'"), "{e}");
    }

    /// Row groups gathered from several batches, on either encoder, read
    /// back as Arrow's `interleave` of the same rows; a pair naming no
    /// row is an error.
    #[test]
    fn gathered_row_groups_read_back_as_the_interleave() {
        use arrow_array::{ArrayRef, Int64Array, StringArray};
        let batch = |ids: Vec<i64>, names: Vec<Option<&str>>| {
            RecordBatch::try_from_iter([
                ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
                ("name", Arc::new(StringArray::from(names)) as ArrayRef),
            ])
            .expect("batch")
        };
        let a = batch(vec![1, 4, 6], vec![Some("a"), None, Some("f")]);
        let b = batch(
            vec![2, 3, 5, 7],
            vec![Some("b"), Some("c"), Some("e"), None],
        );
        let rows = [(0, 0), (1, 0), (1, 1), (0, 1), (1, 2), (0, 2), (1, 3)];
        let refs = [&a, &b];
        let expected =
            arrow_select::interleave::interleave_record_batch(&refs, &rows).expect("interleave");
        for encoder in [ParquetEncoder::Auto, ParquetEncoder::Arrow] {
            let encoding =
                FileEncoding::new(a.schema(), WriterProperties::builder().build(), encoder)
                    .expect("encoding");
            let mut file = encoding.appender(Vec::new()).expect("appender");
            for part in [&rows[..3], &rows[3..]] {
                let mut e = encoding.row_group_encoder();
                e.write_gather(&refs, part, encoder == ParquetEncoder::Auto)
                    .expect("gather");
                file.append(e.finish(false).expect("finish"))
                    .expect("append");
            }
            let bytes = bytes::Bytes::from(file.finish().expect("file"));
            let reader = crate::read::open_bytes(bytes, Default::default()).expect("open");
            assert_eq!(reader.metadata().num_row_groups(), 2);
            let got: Vec<RecordBatch> = crate::read::build(reader)
                .expect("reader")
                .collect::<Result<_, _>>()
                .expect("read");
            let got = arrow_select::concat::concat_batches(&a.schema(), &got).expect("concat");
            assert_eq!(got, expected, "{encoder:?}");
            let mut e = encoding.row_group_encoder();
            let err = e
                .write_gather(&refs, &[(1, 4)], false)
                .unwrap_err()
                .to_string();
            assert!(err.contains("row 4 of batch 1"), "{err}");
        }
    }
}
