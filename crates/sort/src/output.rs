//! Writing sorted rows: gathering them, chunk by chunk on all threads, into
//! a Parquet writer, the output's writer properties, files committed from
//! their temporaries, merged parts joined into one file, and a sorted
//! batch written whole in either format.

use std::{
    fs,
    path::{Path, PathBuf},
};
use strata_store::FromStore as _;

use arrow_array::RecordBatch;
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use strata_parquet::{
    Compression, Format,
    sink::{FileSink, SinkOptions},
    writer::ParquetWriter,
};
use strata_store::output::PendingFile;

use crate::{error::Error, merge, order::Entry};

/// Rows per chunk gathered into a spill file.
pub(crate) const SPILL_CHUNK_ROWS: usize = 16 * 1024;

/// How a sort's Parquet output is written: by `compression`, in row
/// groups of at most `group_rows` rows.
pub(crate) fn output_properties(
    group_rows: usize,
    compression: strata_parquet::Compression,
) -> Result<WriterProperties, Error> {
    Ok(WriterProperties::builder()
        .set_compression(strata_parquet::encoder::parquet_codec(compression)?)
        .set_max_row_group_row_count(Some(group_rows.max(1)))
        .build())
}

/// Writes the rows of `batches` in `order` through `writer` (to `path`):
/// chunks are gathered on all threads (`interleave`), a few at a time, and
/// written in order.
pub(crate) fn write_in_order<W: std::io::Write + Send>(
    batches: &[RecordBatch],
    order: &[Entry],
    writer: &mut ParquetWriter<W>,
    path: &Path,
) -> Result<(), Error> {
    let refs: Vec<&RecordBatch> = batches.iter().collect();
    let gather = |pairs: &[(usize, usize)]| -> Result<RecordBatch, Error> {
        let schema = refs[0].schema();
        let columns = (0..schema.fields().len())
            .map(|c| {
                let parts: Vec<&dyn arrow_array::Array> =
                    refs.iter().map(|b| b.column(c).as_ref()).collect();
                crate::dictionaries::interleave(&parts, pairs)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(pairs.len()));
        Ok(RecordBatch::try_new_with_options(
            schema, columns, &options,
        )?)
    };
    write_gathered(&gather, order, writer, path)
}

/// Gathers the rows (batch, row) names into one batch.
pub(crate) type Gather<'a> = dyn Fn(&[(usize, usize)]) -> Result<RecordBatch, Error> + Sync + 'a;

/// Writes the rows `order` names through `writer` (to `path`): chunks of
/// [`SPILL_CHUNK_ROWS`] gathered by `gather` on all threads, a few at a
/// time, and written in order.
pub(crate) fn write_gathered<W: std::io::Write + Send>(
    gather: &Gather<'_>,
    order: &[Entry],
    writer: &mut ParquetWriter<W>,
    path: &Path,
) -> Result<(), Error> {
    let threads = rayon::current_num_threads().max(1);
    for group in order.chunks(SPILL_CHUNK_ROWS * threads) {
        let gathered = group
            .par_chunks(SPILL_CHUNK_ROWS)
            .map(|part| {
                let pairs: Vec<(usize, usize)> = part
                    .iter()
                    .map(|e| (e.batch as usize, e.row as usize))
                    .collect();
                gather(&pairs)
            })
            .collect::<Result<Vec<_>, _>>()?;
        for b in &gathered {
            writer.write(b).map_err(|e| Error::file(path, e))?;
        }
    }
    Ok(())
}

/// Finishes `out`, the direct writer of `pending`'s temporary, and renames
/// it to `target`; returns the path and its size.
pub(crate) fn commit_direct(
    out: strata_store::direct::DirectWriter,
    pending: PendingFile,
    target: &Path,
) -> Result<(PathBuf, u64), Error> {
    let bytes = out.position();
    drop(out.finish().map_err(|e| Error::io("write", target, e))?);
    let path = pending.commit().map_err(|e| Error::file(target, e))?;
    Ok((path, bytes))
}

/// Joins the merged `parts` (in key order) into the new file `target`,
/// through a temporary renamed when complete.
pub(crate) fn join_parts(
    parts: &[merge::MergedFile],
    target: &Path,
) -> Result<merge::MergedFile, Error> {
    let (pending, sink) = PendingFile::create_direct(target.to_path_buf(), false)
        .map_err(|e| Error::file(target, e))?;
    let paths: Vec<PathBuf> = parts.iter().map(|p| p.path.clone()).collect();
    let out =
        strata_parquet::concat::concat_files(&paths, sink).map_err(|e| Error::file(target, e))?;
    let (path, bytes) = commit_direct(out, pending, target)?;
    for p in &paths {
        let _ = fs::remove_file(p);
    }
    Ok(merge::MergedFile {
        path,
        rows: parts.iter().map(|p| p.rows).sum(),
        bytes,
        min_key: parts.first().map(|p| p.min_key.clone()).unwrap_or_default(),
        max_key: parts.last().map(|p| p.max_key.clone()).unwrap_or_default(),
    })
}

/// Writes `batch` to the new file `target` through a temporary, in slices
/// of `batch_rows` rows, compressed by `compression`; Parquet in row
/// groups of at most `row_group_rows` rows.
pub(crate) fn write_output(
    target: &Path,
    compression: Compression,
    format: Format,
    batch: &RecordBatch,
    batch_rows: usize,
    row_group_rows: usize,
) -> Result<(), Error> {
    let opts = SinkOptions {
        compression,
        compress_ipc: true,
        row_group_rows: Some(row_group_rows),
        ..SinkOptions::default()
    };
    let mut sink = FileSink::create(target, format, batch.schema_ref(), &opts)?;
    for offset in (0..batch.num_rows()).step_by(batch_rows) {
        sink.write(&batch.slice(offset, batch_rows.min(batch.num_rows() - offset)))?;
    }
    sink.finish()?;
    Ok(())
}
