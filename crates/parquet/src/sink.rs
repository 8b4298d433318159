//! Whole Parquet or Arrow IPC files from record batches, through one
//! path: a [`ParquetWriter`] (or [`IpcFileWriter`]) into a [`PendingFile`]
//! that appears under its name only when complete, synced first when
//! durable. Sorted IPC outputs and scan outputs are written here; the
//! generate pipeline and the merge, which encode row groups themselves,
//! write through the same [`PendingFile`].

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
};
use strata_store::FromStore as _;

use arrow_array::RecordBatch;
use arrow_ipc::writer::IpcWriteOptions;
use arrow_schema::SchemaRef;
use parquet::file::properties::WriterProperties;
use strata_store::output::PendingFile;

use crate::{
    Compression, DEFAULT_ZSTD_LEVEL, Error, Format, encoder::parquet_codec, ipc::IpcFileWriter,
    rowgroup::ParquetEncoder, writer::ParquetWriter,
};

/// Settings of a [`FileSink`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkOptions {
    /// The Parquet codec; IPC files take it too with
    /// [`SinkOptions::compress_ipc`].
    pub compression: Compression,
    /// Compress IPC files by `compression` (none, lz4 or zstd; IPC has no
    /// snappy); off: IPC files are written uncompressed.
    pub compress_ipc: bool,
    /// Most rows in one Parquet row group (parquet's default when `None`).
    pub row_group_rows: Option<usize>,
    /// Replace an existing file; without, an existing file is an error
    /// and is kept.
    pub overwrite: bool,
    /// Sync the file before it is renamed, and its directory after.
    pub durable: bool,
    /// The Parquet encoder ([`crate::rowgroup::FileEncoding::new`] makes
    /// the choice).
    pub encoder: ParquetEncoder,
}

impl Default for SinkOptions {
    /// zstd at the default level (uncompressed IPC), parquet's row groups,
    /// no overwrite, not durable, parquet's own encoder
    /// ([`ParquetEncoder::Arrow`]).
    fn default() -> Self {
        SinkOptions {
            compression: Compression::Zstd(DEFAULT_ZSTD_LEVEL),
            compress_ipc: false,
            row_group_rows: None,
            overwrite: false,
            durable: false,
            encoder: ParquetEncoder::Arrow,
        }
    }
}

/// IPC write options for `compression`: none, LZ4 frames or zstd at its
/// level.
///
/// # Errors
/// [`Error::InvalidConfig`] for snappy, which IPC lacks.
pub fn ipc_options(compression: Compression) -> Result<IpcWriteOptions, Error> {
    use arrow_ipc::CompressionType;
    let o = IpcWriteOptions::default();
    Ok(match compression {
        Compression::None => o,
        Compression::Lz4 => o.try_with_compression(Some(CompressionType::LZ4_FRAME))?,
        Compression::Zstd(level) => o
            .try_with_compression(Some(CompressionType::ZSTD))?
            .try_with_compression_level(Some(level))?,
        Compression::Snappy => {
            return Err(Error::InvalidConfig(
                "compression snappy is not available for Arrow IPC (use lz4 or zstd)".into(),
            ));
        }
    })
}

enum Writer {
    Parquet(Box<ParquetWriter<BufWriter<File>>>),
    Ipc(Box<IpcFileWriter<BufWriter<File>>>),
}

/// A Parquet or IPC file being written; it appears under its name only
/// after [`FileSink::finish`], and dropping it unfinished removes the
/// temporary.
pub struct FileSink {
    writer: Writer,
    pending: PendingFile,
    target: PathBuf,
}

impl FileSink {
    /// Starts `target` in `format` for batches of `schema`.
    ///
    /// # Errors
    /// [`Error::Store`] ([`strata_store::Error::OutputExists`]) when
    /// `target` exists and overwriting is off, or when the temporary cannot
    /// be created; [`Error::InvalidConfig`] for a codec parquet lacks; the
    /// encoder's error for a schema it cannot write.
    pub fn create(
        target: &Path,
        format: Format,
        schema: &SchemaRef,
        opts: &SinkOptions,
    ) -> Result<Self, Error> {
        let (pending, file) = PendingFile::start(target, opts.overwrite)?;
        let pending = pending.durable(opts.durable);
        let out = BufWriter::with_capacity(1 << 20, file);
        let writer = match format {
            Format::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(parquet_codec(opts.compression)?)
                    .set_max_row_group_row_count(opts.row_group_rows)
                    .build();
                Writer::Parquet(Box::new(ParquetWriter::with_encoder(
                    out,
                    schema.clone(),
                    props,
                    opts.encoder,
                )?))
            }
            Format::Ipc => {
                let options = if opts.compress_ipc {
                    ipc_options(opts.compression)?
                } else {
                    IpcWriteOptions::default()
                };
                Writer::Ipc(Box::new(IpcFileWriter::try_new(out, schema, options)?))
            }
        };
        Ok(FileSink {
            writer,
            pending,
            target: target.to_path_buf(),
        })
    }

    /// Appends a batch.
    ///
    /// # Errors
    /// The encoder's or the file system's error.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        match &mut self.writer {
            Writer::Parquet(w) => w.write(batch)?,
            Writer::Ipc(w) => w.write(batch)?,
        }
        Ok(())
    }

    /// Completes the file (footer, flush, sync when durable) and moves it
    /// to its name; returns the name.
    ///
    /// # Errors
    /// The encoder's or the file system's error; the temporary is removed.
    pub fn finish(self) -> Result<PathBuf, Error> {
        let mut out = match self.writer {
            Writer::Parquet(w) => w.finish()?,
            Writer::Ipc(w) => w.finish()?,
        };
        out.flush()
            .map_err(|e| Error::io("write", &self.target, e))?;
        drop(out);
        Ok(self.pending.commit()?)
    }
}
