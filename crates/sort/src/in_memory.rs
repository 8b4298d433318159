//! The in-memory sort, when the whole input fits the memory limit: into
//! Parquet, the rows gathered chunk by chunk as the direct encoder writes
//! them (never a sorted copy of the input); into Arrow IPC, concatenated,
//! sorted and gathered whole. Either gives the batches back when the
//! estimate is over the limit, to be spilled instead.

use std::{path::Path, sync::Arc, time::Instant};

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef};
use strata_parquet::{DEFAULT_ROW_GROUP_ROWS, Format};
use strata_store::output::PendingFile;

use crate::{
    config::{SortConfig, SortSummary, file_len},
    dictionaries,
    error::Error,
    memory::memory,
    order::{ENTRY_BYTES, Sorter, encode_run, order_run, take_parallel},
    output::{
        SPILL_CHUNK_ROWS, commit_direct, output_properties, write_gathered, write_in_order,
        write_output,
    },
    rows,
};

/// `data_type` with every dictionary replaced by its value type.
fn plain_type(data_type: &DataType) -> DataType {
    let field =
        |f: &FieldRef| Arc::new(f.as_ref().clone().with_data_type(plain_type(f.data_type())));
    match data_type {
        DataType::Dictionary(_, values) => plain_type(values),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// The type a column is concatenated and sorted as: its own, except that
/// dictionaries below the top level become their value types.
///
/// Concatenating batches merges top-level dictionaries, but appends nested
/// ones value list after value list, which overflows small key types when
/// every batch brings its own dictionary (as Parquet reads do).
pub(crate) fn working_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Dictionary(..) => data_type.clone(),
        other => plain_type(other),
    }
}

/// Casts the columns of `batches` whose [`working_type`] differs; returns
/// the working schema and batches. With fewer than two batches nothing is
/// concatenated, so nothing is cast.
pub(crate) fn to_working(
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<(SchemaRef, Vec<RecordBatch>), Error> {
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(working_type(f.data_type())),
            )
        })
        .collect();
    if batches.len() < 2 || fields.iter().zip(schema.fields()).all(|(a, b)| a == b) {
        return Ok((schema.clone(), batches));
    }
    let working = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let batches = batches
        .into_iter()
        .map(|b| {
            let columns = b
                .columns()
                .iter()
                .zip(working.fields())
                .map(|(c, f)| cast_if_needed(c, f.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(RecordBatch::try_new(working.clone(), columns)?)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok((working, batches))
}

pub(crate) fn cast_if_needed(column: &ArrayRef, to: &DataType) -> Result<ArrayRef, Error> {
    if column.data_type() == to {
        Ok(column.clone())
    } else {
        Ok(arrow_cast::cast(column, to)?)
    }
}

/// What [`sort_in_memory`] did.
pub(crate) enum InMemory {
    Done(SortSummary),
    /// The sort does not fit the limit; the batches, to spill.
    TooLarge(Vec<RecordBatch>),
}

/// The in-memory sort of `batches` into the new file `target` (in the
/// format `cfg.output` names), or the batches back when the estimate is
/// over the limit.
pub(crate) fn sort_in_memory(
    cfg: &SortConfig,
    target: &Path,
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    batch_rows: usize,
    row_group_rows: Option<usize>,
) -> Result<InMemory, Error> {
    let output_format = Format::for_output(&cfg.output).map_err(Error::from_format)?;
    if output_format == Format::Parquet {
        return sort_to_parquet(cfg, target, schema, batches, row_group_rows);
    }
    if memory(&batches).saturating_mul(2) > cfg.memory_limit {
        return Ok(InMemory::TooLarge(batches));
    }
    let t = Instant::now();
    let (working, work) = to_working(schema, batches.clone())?;
    let input_memory = memory(&work);
    if input_memory.saturating_mul(2) > cfg.memory_limit {
        return Ok(InMemory::TooLarge(batches));
    }
    let sorter = Sorter::new(&working, &cfg.keys)?;
    let all = arrow_select::concat::concat_batches(&working, &work)?;
    drop(work);
    let rows = sorter.encode(&all)?;
    let encode_s = t.elapsed().as_secs_f64();
    let row_bytes = rows.size() as u64;
    let memory_estimate = input_memory
        .saturating_mul(2)
        .saturating_add(row_bytes)
        .saturating_add(4 * all.num_rows() as u64);
    if memory_estimate > cfg.memory_limit {
        return Ok(InMemory::TooLarge(batches));
    }
    drop(batches);

    let t = Instant::now();
    let indices = Sorter::sorted_indices(&rows)?;
    drop(rows);
    let sort_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let sorted = take_parallel(&all, &UInt32Array::from(indices))?;
    drop(all);
    let sorted = if working == *schema {
        sorted
    } else {
        // Back to the input's types: one dictionary per column.
        let columns = sorted
            .columns()
            .iter()
            .zip(schema.fields())
            .map(|(c, f)| cast_if_needed(c, f.data_type()))
            .collect::<Result<Vec<_>, _>>()?;
        RecordBatch::try_new(schema.clone(), columns)?
    };
    let gather_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let row_group_rows = row_group_rows.unwrap_or(DEFAULT_ROW_GROUP_ROWS).max(1);
    write_output(
        target,
        cfg.compression,
        output_format,
        &sorted,
        batch_rows.max(1),
        row_group_rows,
    )?;
    let write_s = t.elapsed().as_secs_f64();
    Ok(InMemory::Done(in_memory_summary(
        target,
        output_format,
        (sorted.num_rows() as u64, file_len(target)?),
        (input_memory, row_bytes, memory_estimate),
        [encode_s, sort_s, gather_s, write_s],
    )))
}

/// The in-memory sort into a Parquet file: the keys are encoded batch by
/// batch on all threads, (key prefix, batch, row) entries sorted on all
/// threads, the fixed-width columns laid out row by row
/// ([`rows::RowStore`]), and the rows gathered from the input in chunks on
/// all threads as the direct encoder writes them (its leaf columns on all
/// threads)
/// through a [`DirectWriter`](strata_store::direct::DirectWriter): there
/// is never a sorted copy of the input, and the file bypasses the page
/// cache. The memory estimate is the input, the output's open row group
/// and chunks, the encoded keys and the entries.
fn sort_to_parquet(
    cfg: &SortConfig,
    target: &Path,
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    row_group_rows: Option<usize>,
) -> Result<InMemory, Error> {
    let input_memory = memory(&batches);
    let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    let group_rows = row_group_rows.unwrap_or(DEFAULT_ROW_GROUP_ROWS).max(1);
    // The output's open row group (its encoded pages) and the chunks being
    // gathered, at the input's bytes per row.
    let per_row = input_memory as f64 / rows.max(1) as f64;
    let threads = rayon::current_num_threads().max(1);
    let output_memory = (per_row * (group_rows + threads * SPILL_CHUNK_ROWS) as f64)
        .min(input_memory as f64) as u64
        + rows::extra_bytes(schema, rows);
    if input_memory.saturating_add(output_memory) > cfg.memory_limit {
        return Ok(InMemory::TooLarge(batches));
    }
    let t = Instant::now();
    let sorter = Sorter::new(schema, &cfg.keys)?;
    let keys = encode_run(&sorter, &batches)?;
    let encode_s = t.elapsed().as_secs_f64();
    let row_bytes: u64 = keys.iter().map(|k| k.size() as u64).sum();
    // The input, the output being written, the keys and the entries.
    let memory_estimate = input_memory
        .saturating_add(output_memory)
        .saturating_add(row_bytes)
        .saturating_add(ENTRY_BYTES * rows);
    if memory_estimate > cfg.memory_limit {
        drop(keys);
        return Ok(InMemory::TooLarge(batches));
    }
    let t = Instant::now();
    let order = order_run(&keys);
    drop(keys);
    let sort_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let (pending, sink) = PendingFile::create_direct(target.to_path_buf(), false)
        .map_err(|e| Error::file(target, e))?;
    let props = output_properties(group_rows, cfg.compression)?;
    let mut writer = strata_parquet::writer::ParquetWriter::try_new(sink, schema.clone(), props)
        .map_err(|e| Error::file(target, e))?;
    let batches = dictionaries::share(batches)?;
    match rows::RowStore::build(schema, batches) {
        Ok(store) => {
            let gather = |pairs: &[(usize, usize)]| store.gather(pairs);
            write_gathered(&gather, &order, &mut writer, target)?;
        }
        Err(batches) => write_in_order(&batches, &order, &mut writer, target)?,
    }
    drop(order);
    let gather_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let out = writer.finish().map_err(|e| Error::file(target, e))?;
    let (_, output_bytes) = commit_direct(out, pending, target)?;
    let write_s = t.elapsed().as_secs_f64();
    Ok(InMemory::Done(in_memory_summary(
        target,
        Format::Parquet,
        (rows, output_bytes),
        (input_memory, row_bytes, memory_estimate),
        [encode_s, sort_s, gather_s, write_s],
    )))
}

/// The summary of an in-memory sort into `target`: (rows, output bytes),
/// (input memory, key bytes, memory estimate), and the seconds encoding,
/// sorting, gathering and writing. The caller fills in the input and the
/// whole run's times.
fn in_memory_summary(
    target: &Path,
    output_format: Format,
    (rows, output_bytes): (u64, u64),
    (input_memory, row_bytes, memory_estimate): (u64, u64, u64),
    [encode_s, sort_s, gather_s, write_s]: [f64; 4],
) -> SortSummary {
    SortSummary {
        rows,
        input_format: Format::Parquet,
        output_format,
        input_bytes: 0,
        output_bytes,
        input_memory,
        row_bytes,
        memory_estimate,
        read_s: 0.0,
        encode_s,
        sort_s,
        gather_s,
        write_s,
        elapsed_s: 0.0,
        runs: 0,
        merge_levels: 0,
        spill_bytes: 0,
        output_files: vec![target.to_path_buf()],
        peak_rss: None,
    }
}
