//! Compaction of Iceberg and Delta tables: planned from the tables'
//! metadata alone, executed by the shared k-way merge, committed as a
//! rewrite that changes no row.
//!
//! [`inventory`] reads each live data file's size, rows, partition and
//! the bounds of one sort column from the metadata (Iceberg's manifests,
//! Delta's log statistics), never from the data files; a file without
//! bounds for the column is an error. [`overlap_depth`] measures, per
//! partition, how many files cover a point of the sort column (the max)
//! and how many files each file overlaps on average (itself included).
//! [`plan`] feeds the files to the budgeted planner
//! ([`crate::planner::plan`]) as rowsets whose keys are the partition,
//! then the bound (so files of two partitions never overlap), and
//! predicts the depth after the plan (the picked files of a partition
//! become files that do not overlap each other). [`execute`] reads the
//! picked files, drops the rows their deletes delete (Iceberg position
//! delete files, Delta deletion vectors), sorts each by the column,
//! merges them ([`strata_sort::merge::merge_rows`]), writes files of
//! about the target size through strata's Parquet writer, and commits:
//! an Iceberg `replace` snapshot (the picked files removed with their
//! delete files) or a Delta `OPTIMIZE` (`dataChange` false). A writer
//! that committed meanwhile makes the commit build on its version when
//! the picked files are untouched, and a conflict (nothing changed)
//! otherwise.

use std::collections::BTreeMap;

use arrow_array::{Array, Int64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use strata_sort::SortKey;
use strata_table::{
    delta,
    dir::TableDir,
    iceberg::{self, Content},
    stats::{Bound, FileFacts},
};

use crate::{
    Error,
    planner::{Plan, PlannerOptions, plan as plan_rowsets},
    rowsets::RowsetInput,
};

/// A table's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Iceberg format version 2.
    Iceberg,
    /// Delta Lake.
    Delta,
}

/// A live data file of a table.
#[derive(Debug, Clone)]
pub struct TableFile {
    /// Its path relative to the table.
    pub rel: String,
    /// Its path as the metadata records it.
    pub path: String,
    /// Its size.
    pub bytes: u64,
    /// Its rows (before deletes).
    pub rows: u64,
    /// Rows its deletes delete (position deletes, a deletion vector).
    pub deleted: u64,
    /// Its partition, as text (empty when unpartitioned).
    pub partition: String,
    /// The least and greatest values of the sort column.
    pub min: Bound,
    /// See `min`.
    pub max: Bound,
}

/// What a table holds, from its metadata.
#[derive(Debug, Clone)]
pub struct Inventory {
    /// The format.
    pub format: Format,
    /// The version read (Delta's; Iceberg's metadata version).
    pub version: u64,
    /// The live data files.
    pub files: Vec<TableFile>,
    /// Live delete files (Iceberg) or deletion vectors (Delta).
    pub delete_files: usize,
}

fn bad(dir: &TableDir, reason: impl Into<String>) -> Error {
    Error::Invalid(format!("{}: {}", dir.root().display(), reason.into()))
}

fn arrow(e: arrow_schema::ArrowError) -> Error {
    Error::Invalid(format!("arrow: {e}"))
}

fn table_err(e: strata_table::Error) -> Error {
    Error::Invalid(format!("table: {e}"))
}

/// The live data files of the table at `dir` with the bounds of column
/// `column` from its metadata.
///
/// # Errors
/// [`Error::Invalid`] for a location without a table, metadata that does
/// not read, a column the table lacks, or a file whose metadata has no
/// bounds for it.
pub fn inventory(dir: &TableDir, column: &str) -> Result<Inventory, Error> {
    if dir.has_dir(delta::LOG_DIR).map_err(table_err)? {
        return delta_inventory(dir, column);
    }
    let cur = iceberg::current(dir)
        .map_err(table_err)?
        .ok_or_else(|| bad(dir, "holds no Iceberg or Delta table"))?;
    let schema_id = cur.metadata["current-schema-id"].as_i64().unwrap_or(0);
    let schema = cur.metadata["schemas"]
        .as_array()
        .and_then(|s| {
            s.iter()
                .find(|s| s["schema-id"].as_i64() == Some(schema_id))
        })
        .ok_or_else(|| bad(dir, "the metadata has no current schema"))?;
    let field_id = schema["fields"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["name"].as_str() == Some(column)))
        .and_then(|f| f["id"].as_i64())
        .ok_or_else(|| bad(dir, format!("the table has no top-level column `{column}`")))?
        as i32;
    let live = iceberg::live_files(dir).map_err(table_err)?;
    let mut deleted: BTreeMap<String, u64> = BTreeMap::new();
    let mut delete_files = 0;
    for f in live.iter().filter(|f| f.content != Content::Data) {
        delete_files += 1;
        if let Some(d) = f.referenced_data_file() {
            *deleted.entry(d.to_string()).or_default() += f.record_count;
        }
    }
    let mut files = Vec::new();
    for f in live.iter().filter(|f| f.content == Content::Data) {
        let (Some(min), Some(max)) = (f.lower.get(&field_id), f.upper.get(&field_id)) else {
            return Err(bad(
                dir,
                format!(
                    "data file {} has no bounds for `{column}` in the table's metadata, which a \
                     plan reads instead of the files",
                    f.path
                ),
            ));
        };
        let rel = dir
            .relative(&f.path)
            .ok_or_else(|| bad(dir, format!("data file {} is outside the table", f.path)))?;
        files.push(TableFile {
            rel,
            path: f.path.clone(),
            bytes: f.file_size,
            rows: f.record_count,
            deleted: deleted.get(&f.path).copied().unwrap_or(0),
            partition: f
                .partition
                .iter()
                .map(|(k, v)| format!("{k}={v:?}"))
                .collect::<Vec<_>>()
                .join("/"),
            min: min.clone(),
            max: max.clone(),
        });
    }
    Ok(Inventory {
        format: Format::Iceberg,
        version: cur.version,
        files,
        delete_files,
    })
}

/// [`inventory`] of a Delta table: bounds from each `add`'s statistics.
fn delta_inventory(dir: &TableDir, column: &str) -> Result<Inventory, Error> {
    let state = delta::replay(dir, None)
        .map_err(table_err)?
        .ok_or_else(|| bad(dir, "holds no Delta table"))?;
    let schema = delta::TableSchema::from_json(&state.meta.schema_string).map_err(table_err)?;
    let kind = match schema.field(column).map(|f| &f.data_type) {
        Some(delta::DeltaType::Primitive(p)) => *p,
        _ => {
            return Err(bad(
                dir,
                format!("the table has no top-level primitive column `{column}`"),
            ));
        }
    };
    let mut files = Vec::new();
    let mut delete_files = 0;
    for (path, add) in &state.files {
        let stats: serde_json::Value = add
            .stats
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or(serde_json::Value::Null);
        let bound = |v: &serde_json::Value| -> Option<Bound> {
            use delta::Primitive as P;
            match kind {
                P::Byte | P::Short | P::Integer | P::Long => v.as_i64().map(Bound::Int),
                P::Float | P::Double | P::Decimal(..) => v.as_f64().map(Bound::Double),
                P::Boolean => v.as_bool().map(Bound::Bool),
                _ => v.as_str().map(|s| Bound::Bytes(s.as_bytes().to_vec())),
            }
        };
        let (Some(min), Some(max)) = (
            bound(&stats["minValues"][column]),
            bound(&stats["maxValues"][column]),
        ) else {
            return Err(bad(
                dir,
                format!(
                    "data file {path} has no bounds for `{column}` in the table's log, which a \
                     plan reads instead of the files"
                ),
            ));
        };
        let deleted = add
            .deletion_vector
            .as_ref()
            .map_or(0, |d| d.cardinality.max(0) as u64);
        if add.deletion_vector.is_some() {
            delete_files += 1;
        }
        let rel = delta::values::path_from_uri(path)
            .ok_or_else(|| bad(dir, format!("a path that is not a URI: {path}")))?;
        files.push(TableFile {
            rel,
            path: path.clone(),
            bytes: u64::try_from(add.size).unwrap_or(0),
            rows: stats["numRecords"].as_u64().unwrap_or(0),
            deleted,
            partition: add
                .partition_values
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("null")))
                .collect::<Vec<_>>()
                .join("/"),
            min,
            max,
        });
    }
    Ok(Inventory {
        format: Format::Delta,
        version: state.version,
        files,
        delete_files,
    })
}

/// An order-preserving byte form of a bound (one column's values of one
/// kind compare as these bytes do).
fn key_bytes(b: &Bound) -> Vec<u8> {
    match b {
        Bound::Bool(v) => vec![u8::from(*v)],
        Bound::Int(v) => ((*v as u64) ^ (1 << 63)).to_be_bytes().to_vec(),
        Bound::Decimal(v) => ((*v as u128) ^ (1 << 127)).to_be_bytes().to_vec(),
        Bound::Float(v) => total_order(f64::from(*v)),
        Bound::Double(v) => total_order(*v),
        Bound::Bytes(v) => v.clone(),
    }
}

fn total_order(v: f64) -> Vec<u8> {
    let bits = v.to_bits();
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    ordered.to_be_bytes().to_vec()
}

/// A file's key range for the planner: its partition, a 0 byte, then
/// its bound (files of two partitions never overlap).
fn keys(f: &TableFile) -> (Vec<u8>, Vec<u8>) {
    let mut lo = f.partition.as_bytes().to_vec();
    lo.push(0);
    let mut hi = lo.clone();
    lo.extend(key_bytes(&f.min));
    hi.extend(key_bytes(&f.max));
    (lo, hi)
}

/// The overlap of one partition's files.
#[derive(Debug, Clone, PartialEq)]
pub struct Depth {
    /// The partition (empty when unpartitioned).
    pub partition: String,
    /// Its files.
    pub files: usize,
    /// The most files covering one value of the sort column.
    pub max: usize,
    /// How many files a file overlaps, on average (itself included).
    pub avg: f64,
}

/// A file's least and greatest key.
type KeyRange<'a> = (&'a [u8], &'a [u8]);

/// The overlap depth of each partition of `ranges` (partition, min key,
/// max key), in partition order.
pub fn overlap_depth(ranges: &[(String, Vec<u8>, Vec<u8>)]) -> Vec<Depth> {
    let mut by_part: BTreeMap<&str, Vec<KeyRange<'_>>> = BTreeMap::new();
    for (p, lo, hi) in ranges {
        by_part.entry(p).or_default().push((lo, hi));
    }
    by_part
        .into_iter()
        .map(|(p, files)| {
            // Sweep: starts before ends at one key (ranges are closed).
            let mut events: Vec<(&[u8], u8)> = Vec::with_capacity(files.len() * 2);
            for &(lo, hi) in &files {
                events.push((lo, 0));
                events.push((hi, 1));
            }
            events.sort();
            let (mut now, mut max) = (0usize, 0usize);
            for (_, kind) in &events {
                if *kind == 0 {
                    now += 1;
                    max = max.max(now);
                } else {
                    now -= 1;
                }
            }
            let overlaps: usize = files
                .iter()
                .map(|&(lo, hi)| files.iter().filter(|&&(l, h)| l <= hi && lo <= h).count())
                .sum();
            Depth {
                partition: p.to_string(),
                files: files.len(),
                max,
                avg: overlaps as f64 / files.len().max(1) as f64,
            }
        })
        .collect()
}

/// A compaction plan of a table.
#[derive(Debug, Clone)]
pub struct TablePlan {
    /// What the table holds.
    pub inventory: Inventory,
    /// The planner's answer over its files (indices into
    /// `inventory.files`).
    pub plan: Plan,
    /// The overlap depth per partition now.
    pub before: Vec<Depth>,
    /// The overlap depth per partition once the plan runs (the picked
    /// files of a partition merged into files that do not overlap).
    pub after: Vec<Depth>,
    /// Files below the small-file size.
    pub small_files: usize,
    /// Bytes of the picked files (never more than the budget).
    pub picked_bytes: u64,
}

/// Plans a compaction of the table at `dir` by column `column` within
/// `opts`' budget, from its metadata; files under `small_bytes` are
/// counted as small.
///
/// # Errors
/// As [`inventory`].
pub fn plan(
    dir: &TableDir,
    column: &str,
    opts: &PlannerOptions,
    small_bytes: u64,
) -> Result<TablePlan, Error> {
    let inventory = inventory(dir, column)?;
    let ranges: Vec<(String, Vec<u8>, Vec<u8>)> = inventory
        .files
        .iter()
        .map(|f| {
            let (lo, hi) = keys(f);
            (f.partition.clone(), lo, hi)
        })
        .collect();
    // The planner weighs files in whole MiB (Kudu's units), which would
    // make a table of small files look many times its size. Its unit is
    // scaled instead: the budget in 8192 to 65536 units of at least 1
    // KiB (finer for fewer files, as the exact knapsack's cost is the
    // files times the units), each file's weight its size in those units
    // (rounded up).
    let budget_bytes = opts.budget_mb.saturating_mul(1 << 20);
    let steps = ((1u64 << 22) / inventory.files.len().max(1) as u64).clamp(8192, 65536);
    let unit = (budget_bytes / steps).clamp(1024, 1 << 20);
    let rowsets: Vec<RowsetInput> = inventory
        .files
        .iter()
        .zip(&ranges)
        .map(|(f, (_, lo, hi))| {
            let units = f.bytes.div_ceil(unit).max(1);
            RowsetInput::new(units.saturating_mul(1 << 20), lo.clone(), hi.clone())
        })
        .collect();
    let scaled = PlannerOptions {
        budget_mb: budget_bytes / unit,
        ..*opts
    };
    let plan = plan_rowsets(&rowsets, &scaled);
    let picked_bytes = plan
        .picked
        .iter()
        .map(|&i| inventory.files[i as usize].bytes)
        .sum();
    let before = overlap_depth(&ranges);
    // After: the picked files of each partition as one range (their
    // outputs do not overlap each other), the rest as they are.
    let mut after_ranges = Vec::new();
    let mut merged: BTreeMap<&str, (Vec<u8>, Vec<u8>)> = BTreeMap::new();
    for (i, r) in ranges.iter().enumerate() {
        if plan.picked.contains(&(i as u32)) {
            let e = merged
                .entry(&r.0)
                .or_insert_with(|| (r.1.clone(), r.2.clone()));
            if r.1 < e.0 {
                e.0.clone_from(&r.1);
            }
            if r.2 > e.1 {
                e.1.clone_from(&r.2);
            }
        } else {
            after_ranges.push(r.clone());
        }
    }
    for (p, (lo, hi)) in merged {
        after_ranges.push((p.to_string(), lo, hi));
    }
    let after = overlap_depth(&after_ranges);
    let small_files = inventory
        .files
        .iter()
        .filter(|f| f.bytes < small_bytes)
        .count();
    Ok(TablePlan {
        inventory,
        plan,
        before,
        after,
        small_files,
        picked_bytes,
    })
}

/// What [`execute`] did.
#[derive(Debug, Clone)]
pub struct Compacted {
    /// Files read and removed.
    pub removed: usize,
    /// Delete files (or deletion vectors) applied and gone with them.
    pub deletes_applied: u64,
    /// Files written.
    pub added: usize,
    /// Rows written.
    pub rows: u64,
    /// The version committed.
    pub version: u64,
}

/// The rows of a picked file its deletes leave (Iceberg position delete
/// files naming it, or its Delta deletion vector), and its codec.
fn live_rows(
    dir: &TableDir,
    inv: &Inventory,
    f: &TableFile,
    iceberg_deletes: &BTreeMap<String, Vec<u64>>,
    delta_state: Option<&delta::Snapshot>,
) -> Result<(RecordBatch, parquet::basic::Compression), Error> {
    let (schema, batches, codec) = read_parquet(dir, &f.rel)?;
    let batch = arrow_select::concat::concat_batches(&schema, &batches).map_err(arrow)?;
    let deleted: Vec<u64> = match inv.format {
        Format::Iceberg => iceberg_deletes.get(&f.path).cloned().unwrap_or_default(),
        Format::Delta => match delta_state
            .and_then(|s| s.files.get(&f.path))
            .and_then(|a| a.deletion_vector.as_ref())
        {
            Some(dv) => delta::dv::read(dir, dv, batch.num_rows() as u64).map_err(table_err)?,
            None => Vec::new(),
        },
    };
    if deleted.is_empty() {
        return Ok((batch, codec));
    }
    let gone: std::collections::BTreeSet<u64> = deleted.into_iter().collect();
    let keep: Vec<u32> = (0..batch.num_rows() as u32)
        .filter(|i| !gone.contains(&u64::from(*i)))
        .collect();
    let kept =
        arrow_select::take::take_record_batch(&batch, &UInt32Array::from(keep)).map_err(arrow)?;
    Ok((kept, codec))
}

/// The Parquet file `rel` of table `dir`, whole: its schema, its
/// batches and its codec.
fn read_parquet(
    dir: &TableDir,
    rel: &str,
) -> Result<
    (
        arrow_schema::SchemaRef,
        Vec<RecordBatch>,
        parquet::basic::Compression,
    ),
    Error,
> {
    let bytes = dir
        .read(rel)
        .map_err(table_err)?
        .ok_or_else(|| bad(dir, format!("{rel} is gone")))?;
    let builder =
        strata_parquet::read::open_bytes(bytes::Bytes::from(bytes), ArrowReaderOptions::new())
            .map_err(|e| bad(dir, format!("{rel}: {e}")))?;
    let schema = builder.schema().clone();
    let codec = builder
        .metadata()
        .row_groups()
        .first()
        .and_then(|g| g.columns().first())
        .map_or(parquet::basic::Compression::UNCOMPRESSED, |c| {
            c.compression()
        });
    let mut reader =
        strata_parquet::read::build(builder).map_err(|e| bad(dir, format!("{rel}: {e}")))?;
    let mut batches = Vec::new();
    while let Some(b) = strata_parquet::read::next_batch(&mut reader)
        .map_err(|e| bad(dir, format!("{rel}: {e}")))?
    {
        batches.push(b);
    }
    Ok((schema, batches, codec))
}

/// The position deletes of an Iceberg table's live delete files, by data
/// file (as recorded).
fn iceberg_deletes(dir: &TableDir) -> Result<BTreeMap<String, Vec<u64>>, Error> {
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for f in iceberg::live_files(dir).map_err(table_err)? {
        match f.content {
            Content::Data => continue,
            Content::EqualityDeletes => {
                return Err(bad(
                    dir,
                    format!(
                        "delete file {} holds equality deletes, which compaction does not apply yet",
                        f.path
                    ),
                ));
            }
            Content::PositionDeletes => {}
        }
        let rel = dir
            .relative(&f.path)
            .ok_or_else(|| bad(dir, format!("delete file {} is outside the table", f.path)))?;
        let (_, batches, _) = read_parquet(dir, &rel)?;
        for b in batches {
            let paths = b
                .column_by_name("file_path")
                .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned());
            let pos = b.column_by_name("pos");
            let (Some(paths), Some(pos)) = (paths, pos) else {
                return Err(bad(dir, format!("{rel} is not a position delete file")));
            };
            let pos: Vec<u64> = if let Some(p) = pos.as_any().downcast_ref::<Int64Array>() {
                p.iter().map(|v| v.unwrap_or(0) as u64).collect()
            } else if let Some(p) = pos.as_any().downcast_ref::<UInt64Array>() {
                p.iter().map(|v| v.unwrap_or(0)).collect()
            } else {
                return Err(bad(dir, format!("{rel}: `pos` is not an integer")));
            };
            for (i, p) in pos.into_iter().enumerate() {
                out.entry(paths.value(i).to_string()).or_default().push(p);
            }
        }
    }
    Ok(out)
}

/// Runs `p` over the table at `dir`: merges each partition's picked
/// files by `column` into files of about `target_bytes`, and commits the
/// rewrite.
///
/// # Errors
/// [`Error::Invalid`] for files that do not read or a column they lack;
/// the commit's errors (a conflict with a writer that changed the
/// picked files, with nothing changed).
pub fn execute(
    dir: &TableDir,
    column: &str,
    p: &TablePlan,
    target_bytes: u64,
) -> Result<Compacted, Error> {
    let inv = &p.inventory;
    let picked: Vec<&TableFile> = p
        .plan
        .picked
        .iter()
        .map(|&i| &inv.files[i as usize])
        .collect();
    let deletes = if inv.format == Format::Iceberg {
        iceberg_deletes(dir)?
    } else {
        BTreeMap::new()
    };
    let delta_state = if inv.format == Format::Delta {
        delta::replay(dir, Some(inv.version)).map_err(table_err)?
    } else {
        None
    };
    let mut groups: BTreeMap<&str, Vec<&TableFile>> = BTreeMap::new();
    for f in &picked {
        groups.entry(&f.partition).or_default().push(f);
    }
    let run = strata_table::run_id();
    let mut added: Vec<(String, FileFacts)> = Vec::new();
    let (mut rows_out, mut applied) = (0u64, 0u64);
    let key = [column
        .parse::<SortKey>()
        .map_err(|e| Error::Invalid(e.to_string()))?];
    for files in groups.values() {
        use rayon::prelude::*;
        // Each file read, its deletes applied, and put in key order (when
        // it is not already), on all cores.
        let read: Vec<(RecordBatch, strata_row::Rows, parquet::basic::Compression)> = files
            .par_iter()
            .map(|f| {
                let (b, codec) = live_rows(dir, inv, f, &deletes, delta_state.as_ref())?;
                let keys = strata_sort::merge::key_columns(&b.schema(), &[column.to_string()])
                    .map_err(|e| Error::Invalid(e.to_string()))?;
                let encoded = strata_sort::merge::encode_keys(&keys, &b)
                    .map_err(|e| Error::Invalid(e.to_string()))?;
                let in_order = (1..encoded.num_rows())
                    .all(|i| encoded.row(i - 1).as_bytes() <= encoded.row(i).as_bytes());
                if in_order {
                    return Ok((b, encoded, codec));
                }
                let b =
                    strata_sort::sort_batch(&b, &key).map_err(|e| Error::Invalid(e.to_string()))?;
                let encoded = strata_sort::merge::encode_keys(&keys, &b)
                    .map_err(|e| Error::Invalid(e.to_string()))?;
                Ok((b, encoded, codec))
            })
            .collect::<Result<_, Error>>()?;
        applied += files.iter().map(|f| f.deleted).sum::<u64>();
        let bytes_in: u64 = files.iter().map(|f| f.bytes).sum();
        let Some((first, _, codec)) = read.first() else {
            continue;
        };
        // The outputs keep the codec the table's files have.
        let codec = *codec;
        let schema = first.schema();
        let runs: Vec<_> = read.iter().map(|(b, k, _)| (k, 0..b.num_rows())).collect();
        let order = strata_sort::merge::merge_rows(&runs);
        let total = order.len().max(1);
        let per_file = ((target_bytes as f64 / (bytes_in.max(1) as f64 / total as f64)).round()
            as usize)
            .max(1);
        let dirname = files[0].rel.rsplit_once('/').map_or("", |(d, _)| d);
        let arrays: Vec<&RecordBatch> = read.iter().map(|(b, _, _)| b).collect();
        let first_name = added.len();
        // The outputs gathered and encoded on all cores.
        let written: Vec<(String, FileFacts)> = order
            .par_chunks(per_file)
            .enumerate()
            .map(|(k, chunk)| {
                let columns = (0..schema.fields().len())
                    .map(|c| {
                        let cols: Vec<&dyn Array> =
                            arrays.iter().map(|b| b.column(c).as_ref()).collect();
                        arrow_select::interleave::interleave(&cols, chunk)
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(arrow)?;
                let batch = RecordBatch::try_new(schema.clone(), columns).map_err(arrow)?;
                let name = format!("compacted-{run}-{first_name}-{k}.parquet");
                let rel = if dirname.is_empty() {
                    name
                } else {
                    format!("{dirname}/{name}")
                };
                let mut body = Vec::new();
                {
                    let props = parquet::file::properties::WriterProperties::builder()
                        .set_compression(codec)
                        .build();
                    let mut w = strata_parquet::writer::ParquetWriter::try_new(
                        &mut body,
                        schema.clone(),
                        props,
                    )
                    .map_err(|e| Error::Invalid(e.to_string()))?;
                    w.write(&batch).map_err(|e| Error::Invalid(e.to_string()))?;
                    w.finish().map_err(|e| Error::Invalid(e.to_string()))?;
                }
                dir.put_new(&rel, &body).map_err(table_err)?;
                let facts = dir.facts(&rel).map_err(table_err)?;
                Ok((rel, facts))
            })
            .collect::<Result<_, Error>>()?;
        rows_out += written.iter().map(|(_, f)| f.rows).sum::<u64>();
        added.extend(written);
    }
    let removed: Vec<String> = picked.iter().map(|f| f.rel.clone()).collect();
    let version = match inv.format {
        Format::Delta => {
            let c = delta::commit_change(&delta::Change {
                location: dir,
                read_version: inv.version,
                operation: delta::Operation::Optimize,
                added: &added,
                removed: &removed,
                data_change: false,
                change_files: &[],
                also_read: &[],
                deleted_rows: &[],
            })
            .map_err(table_err)?;
            c.version
        }
        Format::Iceberg => {
            let cur = iceberg::current(dir)
                .map_err(table_err)?
                .ok_or_else(|| bad(dir, "the table is gone"))?;
            let schema_id = cur.metadata["current-schema-id"].as_i64().unwrap_or(0);
            let schema_json = cur.metadata["schemas"]
                .as_array()
                .and_then(|s| {
                    s.iter()
                        .find(|s| s["schema-id"].as_i64() == Some(schema_id))
                })
                .cloned()
                .ok_or_else(|| bad(dir, "the metadata has no current schema"))?;
            let schema = iceberg::TableSchema::from_json(&schema_json).map_err(table_err)?;
            let partition = partition_fields(&cur.metadata, &schema_json)?;
            let c = iceberg::commit_change(
                &iceberg::Change {
                    table: iceberg::NewTable {
                        location: dir,
                        schema: &schema,
                        arrow: &schema.arrow,
                        partition: &partition,
                        sort: &[],
                        properties: BTreeMap::new(),
                        files: &added,
                    },
                    removed: picked.iter().map(|f| f.path.clone()).collect(),
                    position_deletes: Vec::new(),
                    replace: true,
                },
                None,
            )
            .map_err(table_err)?;
            c.version
        }
    };
    Ok(Compacted {
        removed: picked.len(),
        deletes_applied: applied,
        added: added.len(),
        rows: rows_out,
        version,
    })
}

/// The partition fields of an Iceberg table's default spec, as the
/// layout writes them (`month(c)`, `bucket(16, c)`, `c`).
fn partition_fields(
    metadata: &serde_json::Value,
    schema: &serde_json::Value,
) -> Result<Vec<strata_layout::PartitionField>, Error> {
    let spec_id = metadata["default-spec-id"].as_i64().unwrap_or(0);
    let spec = metadata["partition-specs"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["spec-id"].as_i64() == Some(spec_id)));
    let Some(spec) = spec else {
        return Ok(Vec::new());
    };
    let name_of = |id: i64| -> Option<String> {
        schema["fields"]
            .as_array()?
            .iter()
            .find(|f| f["id"].as_i64() == Some(id))
            .and_then(|f| f["name"].as_str().map(str::to_string))
    };
    let mut out = Vec::new();
    for f in spec["fields"].as_array().into_iter().flatten() {
        let source = f["source-id"]
            .as_i64()
            .and_then(name_of)
            .ok_or_else(|| Error::Invalid("a partition field without a source column".into()))?;
        let t = f["transform"].as_str().unwrap_or("identity");
        let text = match t {
            "identity" => source,
            t if t.starts_with("bucket[") || t.starts_with("truncate[") => {
                let (name, n) = t.trim_end_matches(']').split_once('[').unwrap_or((t, "0"));
                format!("{name}({n}, {source})")
            }
            t => format!("{t}({source})"),
        };
        out.push(
            strata_layout::PartitionField::parse(&text)
                .map_err(|e| Error::Invalid(format!("partition field `{text}`: {e}")))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_bytes_order_as_the_values_do() {
        let ints = [-5i64, -1, 0, 3, i64::MAX];
        for w in ints.windows(2) {
            assert!(key_bytes(&Bound::Int(w[0])) < key_bytes(&Bound::Int(w[1])));
        }
        let floats = [-2.5f64, -0.0, 0.5, 1e9];
        for w in floats.windows(2) {
            assert!(key_bytes(&Bound::Double(w[0])) < key_bytes(&Bound::Double(w[1])));
        }
        assert!(key_bytes(&Bound::Decimal(-3)) < key_bytes(&Bound::Decimal(2)));
        assert!(key_bytes(&Bound::Bytes(b"ab".to_vec())) < key_bytes(&Bound::Bytes(b"b".to_vec())));
    }

    #[test]
    fn depth_counts_the_files_over_a_point_per_partition() {
        let r = |p: &str, lo: u8, hi: u8| (p.to_string(), vec![lo], vec![hi]);
        let d = overlap_depth(&[
            r("a", 0, 10),
            r("a", 5, 15),
            r("a", 10, 20),
            r("a", 30, 40),
            r("b", 0, 100),
        ]);
        assert_eq!(d.len(), 2);
        // 10 is in three files (closed ranges), and the first three
        // files each overlap all three; the last only itself.
        assert_eq!((d[0].files, d[0].max), (4, 3));
        assert!((d[0].avg - (3.0 + 3.0 + 3.0 + 1.0) / 4.0).abs() < 1e-12);
        assert_eq!((d[1].files, d[1].max, d[1].avg), (1, 1, 1.0));
    }
}
