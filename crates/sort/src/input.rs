//! The one reader of a sort's input files. Every input is opened the same
//! way, unmapped, through `strata-scan` (footers, blocks and buffers
//! checked against the file before decoding) and its batches handed in
//! order to a [`Batches`] consumer; a Parquet input may instead have its
//! row groups decoded on every thread ([`read_parquet_parallel`]).
//! [`read_input`] collects a whole file.

use std::{fs, path::Path, sync::Arc};
use strata_store::FromStore as _;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use parquet::file::metadata::ParquetMetaData;
use rayon::prelude::*;
use strata_parquet::{Format, guard};

use crate::{error::Error, memory::memory};

/// What the batches of the inputs are handed to, in order.
pub(crate) trait Batches {
    /// Takes the schema of input `path`, before its batches.
    fn schema(&mut self, path: &Path, schema: SchemaRef) -> Result<(), Error>;
    /// Takes note of a Parquet input's footer.
    fn footer(&mut self, md: &ParquetMetaData);
    /// Takes one batch of input `path`.
    fn push(&mut self, path: &Path, batch: &RecordBatch) -> Result<(), Error>;
}

/// A file read whole into memory.
#[derive(Debug, Clone)]
pub struct Input {
    /// Its format.
    pub format: Format,
    /// Its schema, metadata included.
    pub schema: SchemaRef,
    /// Its batches.
    pub batches: Vec<RecordBatch>,
    /// Rows in its largest row group (Parquet only).
    pub row_group_rows: Option<usize>,
}

/// Reads every batch of a Parquet or Arrow IPC file, its format found
/// from the magic bytes.
///
/// # Errors
/// [`Error::Store`] (IO) when it cannot be opened or read, [`Error::InvalidConfig`]
/// when it is neither format, [`Error::Read`] naming the file around a
/// decoding error.
pub fn read_input(path: &Path) -> Result<Input, Error> {
    let format = Format::detect(path).map_err(|e| Error::reading(path, Error::from_format(e)))?;
    let mut whole = Whole::default();
    read_into(path, &mut whole)?;
    Ok(Input {
        format,
        schema: whole.schema.unwrap_or_else(|| Arc::new(Schema::empty())),
        batches: whole.batches,
        row_group_rows: whole.row_group_rows,
    })
}

/// A whole file's batches, for [`read_input`].
#[derive(Default)]
struct Whole {
    schema: Option<SchemaRef>,
    batches: Vec<RecordBatch>,
    row_group_rows: Option<usize>,
}

impl Batches for Whole {
    fn schema(&mut self, _: &Path, schema: SchemaRef) -> Result<(), Error> {
        self.schema = Some(schema);
        Ok(())
    }

    fn footer(&mut self, md: &ParquetMetaData) {
        self.row_group_rows = largest_row_group(md);
    }

    fn push(&mut self, _: &Path, batch: &RecordBatch) -> Result<(), Error> {
        self.batches.push(batch.clone());
        Ok(())
    }
}

/// The most rows in a row group of the file `md` describes.
pub(crate) fn largest_row_group(md: &ParquetMetaData) -> Option<usize> {
    md.row_groups()
        .iter()
        .map(|g| usize::try_from(g.num_rows()).unwrap_or(0))
        .max()
}

/// Reads every batch of `path` into `runs`, through `strata-scan`'s
/// readers, the path every strata command reads a user's file by: footers,
/// blocks and buffers are checked against the file before decoding. A
/// decoding error (or a decoder's panic) is an [`Error::Read`] naming the
/// file; an error of `runs` (spilling) is returned as it is.
pub(crate) fn read_into(path: &Path, runs: &mut dyn Batches) -> Result<(), Error> {
    let mut own: Option<Error> = None;
    let read = guard::catch(|| -> Result<(), Error> {
        // Unmapped: the sort keeps what it holds within its memory budget,
        // and a map's pages would stay resident until the file is done.
        let source = strata_store::source::Source::open_file(
            path,
            path.display().to_string(),
            Default::default(),
        )?
        .without_map();
        let mut scanner = strata_scan::Scanner::open(source)?;
        runs.schema(path, scanner.file().schema()).map_err(|e| {
            own = Some(e);
            strata_scan::Error::InvalidConfig("stopped".into())
        })?;
        if let strata_scan::ScanFile::Parquet(f) = scanner.file() {
            runs.footer(f.metadata());
        }
        scanner.scan(&strata_scan::ScanRequest::default(), |b| {
            runs.push(path, b).map_err(|e| {
                own = Some(e);
                strata_scan::Error::InvalidConfig("stopped".into())
            })
        })?;
        Ok(())
    })
    .unwrap_or_else(|p| Err(Error::Invalid(p.to_string())));
    if let Some(e) = own {
        return Err(e);
    }
    read.map_err(|e| Error::reading(path, e))
}

/// Rows per batch of a parallel Parquet read.
const READ_BATCH_ROWS: usize = 16 * 1024;

/// Reads the Parquet file `path` into `runs`, decoding its row groups on
/// every thread of the current pool, a window of them at a time (as many
/// as there are threads, fewer when their decoded size would pass half the
/// `window_bytes`), and pushing their batches in file order.
pub(crate) fn read_parquet_parallel(
    path: &Path,
    runs: &mut dyn Batches,
    window_bytes: u64,
) -> Result<(), Error> {
    use parquet::arrow::arrow_reader::{
        ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    };
    use strata_parquet::read;
    let wrap = |e: Error| Error::reading(path, e);
    let read_err = |e: read::ReadError| match e {
        read::ReadError::Io(e) => Error::io("read", path, e),
        e => wrap(Error::Invalid(e.to_string())),
    };
    let file = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let builder = read::open(file, ArrowReaderOptions::new()).map_err(read_err)?;
    let md = builder.metadata().clone();
    let schema = builder.schema().clone();
    drop(builder);
    runs.schema(path, schema)?;
    let arrow_md = ArrowReaderMetadata::try_new(md.clone(), ArrowReaderOptions::new())
        .map_err(|e| wrap(Error::Parquet(e)))?;
    runs.footer(&md);
    let threads = rayon::current_num_threads().max(1);
    let groups = md.num_row_groups();
    let footer_bytes = |i: usize| md.row_group(i).total_byte_size().max(0) as f64;
    // Arrow bytes per footer byte, from the groups decoded so far: the
    // footer counts the uncompressed Parquet pages, which for `events`
    // decode to three times as many bytes of Arrow arrays (seven decoded
    // groups at once passed a 256 MiB limit by 60 MB at 8 threads). Until
    // one group is decoded, the window is that one group.
    let mut arrow_per_footer: Option<f64> = None;
    let mut g = 0;
    while g < groups {
        let mut window = 0;
        let mut bytes = 0.0f64;
        let most = if arrow_per_footer.is_some() {
            threads
        } else {
            1
        };
        while g + window < groups && window < most {
            let size = footer_bytes(g + window) * arrow_per_footer.unwrap_or(1.0);
            if window > 0 && bytes + size > window_bytes as f64 {
                break;
            }
            bytes += size;
            window += 1;
        }
        let decoded: Vec<Result<Vec<RecordBatch>, Error>> = (g..g + window)
            .into_par_iter()
            .map(|i| {
                let file = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
                let builder =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(file, arrow_md.clone())
                        .with_row_groups(vec![i])
                        .with_batch_size(READ_BATCH_ROWS);
                let mut reader = read::build(builder).map_err(read_err)?;
                let mut out = Vec::new();
                while let Some(b) = read::next_batch(&mut reader).map_err(read_err)? {
                    out.push(b);
                }
                Ok(out)
            })
            .collect();
        let footer: f64 = (g..g + window).map(footer_bytes).sum();
        let mut arrow = 0u64;
        for batches in decoded {
            let batches = batches?;
            arrow += memory(&batches);
            for b in batches {
                runs.push(path, &b)?;
            }
        }
        if footer > 0.0 && arrow > 0 {
            let ratio = arrow as f64 / footer;
            arrow_per_footer = Some(arrow_per_footer.map_or(ratio, |r| r.max(ratio)));
        }
        g += window;
    }
    Ok(())
}
