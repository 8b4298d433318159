//! Writing scan results: Parquet, Arrow IPC, CSV or JSON lines, picked by
//! the output's extension, through a temporary that is renamed only when
//! the output is complete.

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
};
use strata_store::FromStore as _;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};

use strata_parquet::{
    Format,
    sink::{FileSink, SinkOptions},
};
use strata_store::output::PendingFile;

use crate::Error;

/// The format of a scan's output file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// Parquet, zstd-compressed (`.parquet`).
    Parquet,
    /// The Arrow IPC file format (`.arrow`, `.ipc`, `.feather`).
    Ipc,
    /// Comma-separated values with a header line (`.csv`); flat schemas
    /// only.
    Csv,
    /// One JSON object per line (`.jsonl`, `.ndjson`).
    Jsonl,
}

impl OutputFormat {
    /// The format an output path's extension names (case-insensitive).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for any other extension, or none.
    pub fn from_path(path: &Path) -> Result<Self, Error> {
        match Format::from_extension(path) {
            Some(Format::Parquet) => return Ok(OutputFormat::Parquet),
            Some(Format::Ipc) => return Ok(OutputFormat::Ipc),
            None => {}
        }
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("csv") => Ok(OutputFormat::Csv),
            Some("jsonl" | "ndjson") => Ok(OutputFormat::Jsonl),
            _ => Err(Error::InvalidConfig(format!(
                "cannot tell the output format of {} from its extension{} (expected .parquet, \
                 .arrow, .ipc, .feather, .csv, .jsonl or .ndjson)",
                path.display(),
                strata_parquet::extension_note(path)
            ))),
        }
    }
}

enum Sink {
    /// Parquet or IPC, through strata-parquet's one file path.
    File(FileSink),
    Text {
        writer: TextWriter,
        pending: PendingFile,
    },
}

enum TextWriter {
    Csv(Box<arrow_csv::Writer<BufWriter<File>>>),
    Jsonl(arrow_json::LineDelimitedWriter<BufWriter<File>>),
}

/// An output file being written; it appears under its name only after
/// [`BatchFile::finish`].
pub struct BatchFile {
    sink: Sink,
    target: PathBuf,
}

impl BatchFile {
    /// Starts `path` for batches of `schema`. Every output is durable:
    /// synced before it is renamed into place.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for an unknown extension or a CSV output of
    /// a nested schema; [`Error::Store`] ([`strata_store::Error::OutputExists`]) when `path` exists and
    /// `overwrite` is off, or when the file cannot be created.
    pub fn create(path: &Path, schema: &SchemaRef, overwrite: bool) -> Result<Self, Error> {
        let format = OutputFormat::from_path(path)?;
        if format == OutputFormat::Csv
            && let Some(f) = schema.fields().iter().find(|f| nested(f.data_type()))
        {
            return Err(Error::InvalidConfig(format!(
                "column '{}' of type {} cannot be written as CSV; choose fewer columns or \
                 write .jsonl, .parquet or .arrow",
                f.name(),
                f.data_type()
            )));
        }
        let opts = SinkOptions {
            overwrite,
            durable: true,
            ..SinkOptions::default()
        };
        let file = |f| -> Result<Sink, Error> {
            Ok(Sink::File(FileSink::create(path, f, schema, &opts)?))
        };
        let sink = match format {
            OutputFormat::Parquet => file(Format::Parquet)?,
            OutputFormat::Ipc => file(Format::Ipc)?,
            OutputFormat::Csv | OutputFormat::Jsonl => {
                let (pending, file) = PendingFile::start(path, overwrite)?;
                let out = BufWriter::with_capacity(1 << 20, file);
                let writer = if format == OutputFormat::Csv {
                    TextWriter::Csv(Box::new(arrow_csv::Writer::new(out)))
                } else {
                    TextWriter::Jsonl(arrow_json::LineDelimitedWriter::new(out))
                };
                Sink::Text {
                    writer,
                    pending: pending.durable(true),
                }
            }
        };
        Ok(BatchFile {
            sink,
            target: path.to_path_buf(),
        })
    }

    /// Appends a batch.
    ///
    /// # Errors
    ///
    /// The encoder's or the file system's error.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        match &mut self.sink {
            Sink::File(f) => f.write(batch)?,
            Sink::Text {
                writer: TextWriter::Csv(w),
                ..
            } => w.write(batch)?,
            Sink::Text {
                writer: TextWriter::Jsonl(w),
                ..
            } => w.write(batch)?,
        }
        Ok(())
    }

    /// Completes the file and moves it to its name.
    ///
    /// # Errors
    ///
    /// The encoder's or the file system's error; the temporary is removed.
    pub fn finish(self) -> Result<PathBuf, Error> {
        let target = &self.target;
        let (writer, pending) = match self.sink {
            Sink::File(f) => return Ok(f.finish()?),
            Sink::Text { writer, pending } => (writer, pending),
        };
        let out = match writer {
            TextWriter::Csv(w) => (*w).into_inner(),
            TextWriter::Jsonl(mut w) => {
                w.finish()?;
                w.into_inner()
            }
        };
        out.into_inner()
            .map_err(|e| Error::io("write", target, e.into_error()))?;
        Ok(pending.commit()?)
    }
}

fn nested(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, v) => nested(v),
        t => t.is_nested(),
    }
}

/// Writes `batch` as text lines: values formatted by Arrow's display
/// rules, separated by tabs; with `header`, a line of column names first.
///
/// # Errors
///
/// The formatter's or the writer's error.
pub fn write_text(out: &mut impl Write, batch: &RecordBatch, header: bool) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::io("write", "<stdout>", e);
    if header {
        let names: Vec<&str> = batch
            .schema_ref()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        writeln!(out, "{}", names.join("\t")).map_err(io)?;
    }
    let opts = arrow_cast::display::FormatOptions::default().with_null("null");
    let formatters = batch
        .columns()
        .iter()
        .map(|c| arrow_cast::display::ArrayFormatter::try_new(c.as_ref(), &opts))
        .collect::<Result<Vec<_>, _>>()?;
    for row in 0..batch.num_rows() {
        for (i, f) in formatters.iter().enumerate() {
            if i > 0 {
                out.write_all(b"\t").map_err(io)?;
            }
            write!(out, "{}", f.value(row)).map_err(io)?;
        }
        out.write_all(b"\n").map_err(io)?;
    }
    Ok(())
}
