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
//! picked files whole on all cores, leaves out the rows their deletes
//! delete (Iceberg position delete files, and equality delete files of a
//! higher sequence number; Delta deletion vectors), sorts a file not in
//! key order, merges the live rows' keys
//! ([`strata_sort::merge::merge_rows_parallel`]), gathers the rows into
//! row groups encoded on all cores and written in order as files of
//! about the target size, and commits: an Iceberg `replace` snapshot (the
//! picked files removed with their position delete files) or a Delta
//! `OPTIMIZE` (`dataChange` false). A writer that committed meanwhile
//! makes the commit build on its version when the picked files are
//! untouched, and a conflict (nothing changed) otherwise. [`depth`]
//! measures a table's overlap now.

use std::collections::BTreeMap;

use arrow_array::{Array, Int64Array, RecordBatch, StringArray, UInt64Array};
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

/// Each file's partition and key range (see [`overlap_depth`]).
fn key_ranges(inv: &Inventory) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    inv.files
        .iter()
        .map(|f| {
            let (lo, hi) = keys(f);
            (f.partition.clone(), lo, hi)
        })
        .collect()
}

/// The overlap depth by `column` of the table at `dir` now, per
/// partition, from its metadata alone.
///
/// # Errors
/// As [`inventory`].
pub fn depth(dir: &TableDir, column: &str) -> Result<Vec<Depth>, Error> {
    Ok(overlap_depth(&key_ranges(&inventory(dir, column)?)))
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
    let ranges = key_ranges(&inventory);
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

/// Rows per batch a picked file is read in; each batch is one run of the
/// merge.
const BATCH_ROWS: usize = 65_536;

/// The rows of a picked file that its deletes leave (Iceberg position
/// delete files naming it, or its Delta deletion vector), in key order.
/// The file is decoded whole, and each batch's live rows are named by
/// `keep` (`None`: all), so that deleted rows are never copied: the merge
/// orders the live rows' keys and the writer gathers them from the
/// batches. A file not in key order is sorted (its live rows copied).
/// With the file's footer, for writer settings like its own.
struct Live {
    batches: Vec<RecordBatch>,
    /// Per batch, its live rows in order; `None`: every row.
    keep: Vec<Option<Vec<u32>>>,
    /// Per batch, the encoded keys of its live rows.
    keys: Vec<strata_row::Rows>,
    /// Rows its deletes deleted.
    deleted: u64,
    metadata: std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
}

fn live_rows(
    dir: &TableDir,
    inv: &Inventory,
    f: &TableFile,
    column: &str,
    iceberg: &IcebergDeletes,
    delta_state: Option<&delta::Snapshot>,
) -> Result<Live, Error> {
    let builder = open(dir, &f.rel)?;
    let metadata = builder.metadata().clone();
    let n = metadata.file_metadata().num_rows().max(0) as u64;
    let mut deleted: Vec<u64> = match inv.format {
        Format::Iceberg => iceberg.positions.get(&f.path).cloned().unwrap_or_default(),
        Format::Delta => match delta_state
            .and_then(|s| s.files.get(&f.path))
            .and_then(|a| a.deletion_vector.as_ref())
        {
            Some(dv) => delta::dv::read(dir, dv, n).map_err(table_err)?,
            None => Vec::new(),
        },
    };
    deleted.sort_unstable();
    deleted.dedup();
    if let Some(&p) = deleted.last()
        && p >= n
    {
        return Err(bad(
            dir,
            format!("a delete names row {p} of {}, which has {n} rows", f.rel),
        ));
    }
    let mut reader = strata_parquet::read::build(builder.with_batch_size(BATCH_ROWS))
        .map_err(|e| bad(dir, format!("{}: {e}", f.rel)))?;
    // Equality deletes apply to a data file of a lower sequence number.
    let equality = match (inv.format, &iceberg.equality) {
        (Format::Iceberg, Some(eq)) => {
            let seq = iceberg.sequence.get(&f.path).copied().ok_or_else(|| {
                bad(
                    dir,
                    format!("{} is not a live data file of the table", f.path),
                )
            })?;
            Some((eq, seq))
        }
        _ => None,
    };
    let (mut batches, mut keep, mut removed) = (Vec::new(), Vec::new(), 0u64);
    let (mut first, mut gone) = (0u64, deleted.iter().peekable());
    while let Some(b) = strata_parquet::read::next_batch(&mut reader)
        .map_err(|e| bad(dir, format!("{}: {e}", f.rel)))?
    {
        let end = first + b.num_rows() as u64;
        let mut dead = vec![false; b.num_rows()];
        while let Some(&&d) = gone.peek()
            && d < end
        {
            dead[(d - first) as usize] = true;
            gone.next();
        }
        first = end;
        if let Some((eq, seq)) = &equality {
            let keys = strata_sort::merge::key_columns(&b.schema(), &eq.columns)
                .and_then(|k| strata_sort::merge::encode_keys(&k, &b))
                .map_err(|e| bad(dir, format!("{}: {e}", f.rel)))?;
            for (i, k) in keys.iter().enumerate() {
                if eq.newest.get(k.as_bytes()).is_some_and(|s| s > seq) {
                    dead[i] = true;
                }
            }
        }
        let gone_here = dead.iter().filter(|&&d| d).count();
        removed += gone_here as u64;
        if gone_here == b.num_rows() {
            continue;
        }
        keep.push((gone_here > 0).then(|| {
            (0..b.num_rows() as u32)
                .filter(|&i| !dead[i as usize])
                .collect::<Vec<u32>>()
        }));
        batches.push(b);
    }
    let Some(schema) = batches.first().map(RecordBatch::schema) else {
        return Ok(Live {
            batches,
            keep,
            keys: Vec::new(),
            deleted: removed,
            metadata,
        });
    };
    let key_columns = strata_sort::merge::key_columns(&schema, &[column.to_string()])
        .map_err(|e| Error::Invalid(e.to_string()))?;
    let encode = |b: &RecordBatch, rows: Option<&Vec<u32>>| -> Result<strata_row::Rows, Error> {
        match rows {
            None => strata_sort::merge::encode_keys(&key_columns, b),
            Some(rows) => {
                // Only the key columns of the live rows are copied.
                let cols: Vec<usize> = key_columns.columns().to_vec();
                let narrow = b.project(&cols).map_err(arrow)?;
                let narrow = arrow_select::take::take_record_batch(
                    &narrow,
                    &arrow_array::UInt32Array::from(rows.clone()),
                )
                .map_err(arrow)?;
                let projected =
                    strata_sort::merge::key_columns(&narrow.schema(), &[column.to_string()])
                        .map_err(|e| Error::Invalid(e.to_string()))?;
                strata_sort::merge::encode_keys(&projected, &narrow)
            }
        }
        .map_err(|e| Error::Invalid(e.to_string()))
    };
    let keys = batches
        .iter()
        .zip(&keep)
        .map(|(b, k)| encode(b, k.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    // In order within each batch and across the batches' seams.
    let in_order = keys
        .iter()
        .all(|k| (1..k.num_rows()).all(|i| k.row(i - 1).as_bytes() <= k.row(i).as_bytes()))
        && keys
            .windows(2)
            .all(|w| w[0].row(w[0].num_rows() - 1).as_bytes() <= w[1].row(0).as_bytes());
    if in_order {
        return Ok(Live {
            batches,
            keep,
            keys,
            deleted: removed,
            metadata,
        });
    }
    let live = batches
        .iter()
        .zip(&keep)
        .map(|(b, k)| match k {
            None => Ok(b.clone()),
            Some(rows) => arrow_select::take::take_record_batch(
                b,
                &arrow_array::UInt32Array::from(rows.clone()),
            )
            .map_err(arrow),
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let all = arrow_select::concat::concat_batches(&schema, &live).map_err(arrow)?;
    let key = [column
        .parse::<SortKey>()
        .map_err(|e| Error::Invalid(e.to_string()))?];
    let sorted = strata_sort::sort_batch(&all, &key).map_err(|e| Error::Invalid(e.to_string()))?;
    let keys = vec![encode(&sorted, None)?];
    Ok(Live {
        batches: vec![sorted],
        keep: vec![None],
        keys,
        deleted: removed,
        metadata,
    })
}

/// Encodes the row `groups` (file, rows gathered from `batches`) on
/// `cores` workers, each taking the next group, so that they finish about
/// in order; a thread of its own appends each file's groups in order as
/// they come and finishes each file (named by `name`) when its last group
/// is in, so that files are written while later groups encode. Returns
/// the files with their facts.
fn write_groups(
    dir: &TableDir,
    encoding: &strata_parquet::rowgroup::FileEncoding,
    batches: &[&RecordBatch],
    groups: &[(usize, &[(usize, usize)])],
    cores: usize,
    name: &(dyn Fn(usize) -> String + Sync),
) -> Result<Vec<(String, FileFacts)>, Error> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    type Encoded = Result<strata_parquet::rowgroup::EncodedRowGroup, Error>;
    let parquet = |e: strata_parquet::Error| Error::Invalid(e.to_string());
    let (next, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Encoded)>();
    std::thread::scope(|s| {
        let writer = s.spawn(move || -> Result<Vec<(String, FileFacts)>, Error> {
            type Open = (
                usize,
                String,
                strata_parquet::rowgroup::FileAppender<strata_table::dir::NewFile>,
            );
            let close = |(_, rel, file): Open| -> Result<(String, FileFacts), Error> {
                file.finish()
                    .map_err(parquet)?
                    .finish()
                    .map_err(table_err)?;
                let facts = dir.facts(&rel).map_err(table_err)?;
                Ok((rel, facts))
            };
            let mut waiting = BTreeMap::new();
            let (mut want, mut open, mut done): (usize, Option<Open>, Vec<_>) =
                (0, None, Vec::new());
            while want < groups.len() {
                let (i, g) = rx
                    .recv()
                    .map_err(|_| Error::Invalid("a row group was not encoded".into()))?;
                waiting.insert(i, g?);
                while let Some(g) = waiting.remove(&want) {
                    let k = groups[want].0;
                    let file = match open.take() {
                        Some(o) if o.0 == k => open.insert(o),
                        other => {
                            if let Some(o) = other {
                                done.push(close(o)?);
                            }
                            let rel = name(k);
                            let out = dir.create_new(&rel).map_err(table_err)?;
                            open.insert((k, rel, encoding.appender(out).map_err(parquet)?))
                        }
                    };
                    file.2.append(g).map_err(parquet)?;
                    want += 1;
                }
            }
            if let Some(o) = open.take() {
                done.push(close(o)?);
            }
            Ok(done)
        });
        rayon::scope(|sc| {
            for _ in 0..cores.max(1) {
                let tx = tx.clone();
                let (next, failed) = (&next, &failed);
                sc.spawn(move |_| {
                    while !failed.load(Relaxed) {
                        let i = next.fetch_add(1, Relaxed);
                        let Some(&(_, rows)) = groups.get(i) else {
                            break;
                        };
                        let mut e = encoding.row_group_encoder();
                        let g = e
                            .write_gather(batches, rows, false)
                            .and_then(|()| e.finish(false))
                            .map_err(parquet);
                        failed.fetch_or(g.is_err(), Relaxed);
                        // A writer that stopped has its error already.
                        if tx.send((i, g)).is_err() {
                            failed.store(true, Relaxed);
                        }
                    }
                });
            }
        });
        drop(tx);
        writer
            .join()
            .unwrap_or_else(|_| Err(Error::Invalid("the file writer failed".into())))
    })
}

/// Row groups of at least this many rows are cut so that every core
/// encodes one.
const MIN_GROUP_ROWS: usize = 131_072;

/// The merged `order` cut into files of `per_file` rows, and each file
/// into row groups of at most `max_group` rows: as (file, rows) in order.
/// When the files are fewer than `cores`, their groups are cut smaller
/// (down to [`MIN_GROUP_ROWS`]) so that every core has one to encode.
fn row_groups(
    order: &[(usize, usize)],
    per_file: usize,
    max_group: usize,
    cores: usize,
) -> Vec<(usize, &[(usize, usize)])> {
    let files: Vec<&[(usize, usize)]> = order.chunks(per_file.max(1)).collect();
    // Four groups per core, so that a file's first groups are written
    // while its last encode.
    let per_core = (4 * cores).div_ceil(files.len().max(1));
    let mut out = Vec::new();
    for (k, rows) in files.into_iter().enumerate() {
        let n = rows.len();
        let count = n
            .div_ceil(max_group.max(1))
            .max(per_core.min(n / MIN_GROUP_ROWS))
            .max(1);
        for g in rows.chunks(n.div_ceil(count)) {
            out.push((k, g));
        }
    }
    out
}

/// A reader of the Parquet file `rel` of table `dir` (mapped when local,
/// see [`TableDir::read_shared`]).
fn open(
    dir: &TableDir,
    rel: &str,
) -> Result<parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder<bytes::Bytes>, Error> {
    let bytes = dir
        .read_shared(rel)
        .map_err(table_err)?
        .ok_or_else(|| bad(dir, format!("{rel} is gone")))?;
    strata_parquet::read::open_bytes(bytes, ArrowReaderOptions::new())
        .map_err(|e| bad(dir, format!("{rel}: {e}")))
}

/// The Parquet file `rel` of table `dir`, whole: its schema and batches.
fn read_parquet(
    dir: &TableDir,
    rel: &str,
) -> Result<(arrow_schema::SchemaRef, Vec<RecordBatch>), Error> {
    let builder = open(dir, rel)?;
    let schema = builder.schema().clone();
    let mut reader =
        strata_parquet::read::build(builder).map_err(|e| bad(dir, format!("{rel}: {e}")))?;
    let mut batches = Vec::new();
    while let Some(b) = strata_parquet::read::next_batch(&mut reader)
        .map_err(|e| bad(dir, format!("{rel}: {e}")))?
    {
        batches.push(b);
    }
    Ok((schema, batches))
}

/// The deletes of an Iceberg table's live delete files: position deletes
/// by data file (as recorded), each data file's sequence number, and the
/// equality deletes.
#[derive(Default)]
struct IcebergDeletes {
    positions: BTreeMap<String, Vec<u64>>,
    sequence: BTreeMap<String, i64>,
    equality: Option<Equality>,
}

/// A table's equality deletes: their key columns (by name) and, per key
/// (encoded by [`strata_sort::merge::encode_keys`]), the newest sequence
/// number that deletes it. A row of a data file of sequence number `s`
/// is deleted when its key's is above `s`.
struct Equality {
    columns: Vec<String>,
    newest: std::collections::HashMap<Vec<u8>, i64>,
}

fn iceberg_deletes(dir: &TableDir) -> Result<IcebergDeletes, Error> {
    let mut out = IcebergDeletes::default();
    let mut equality_files = Vec::new();
    for f in iceberg::live_files(dir).map_err(table_err)? {
        match f.content {
            Content::Data => {
                out.sequence.insert(f.path.clone(), f.sequence_number);
                continue;
            }
            Content::EqualityDeletes => {
                equality_files.push(f);
                continue;
            }
            Content::PositionDeletes => {}
        }
        let rel = dir
            .relative(&f.path)
            .ok_or_else(|| bad(dir, format!("delete file {} is outside the table", f.path)))?;
        let (_, batches) = read_parquet(dir, &rel)?;
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
                out.positions
                    .entry(paths.value(i).to_string())
                    .or_default()
                    .push(p);
            }
        }
    }
    if equality_files.is_empty() {
        return Ok(out);
    }
    // The key columns' names, from the table's current schema.
    let cur = iceberg::current(dir)
        .map_err(table_err)?
        .ok_or_else(|| bad(dir, "the table is gone"))?;
    let schema_id = cur.metadata["current-schema-id"].as_i64().unwrap_or(0);
    let fields = cur.metadata["schemas"]
        .as_array()
        .and_then(|s| {
            s.iter()
                .find(|s| s["schema-id"].as_i64() == Some(schema_id))
        })
        .and_then(|s| s["fields"].as_array())
        .cloned()
        .unwrap_or_default();
    let ids = equality_files[0].equality_ids.clone();
    let columns = ids
        .iter()
        .map(|id| {
            fields
                .iter()
                .find(|f| f["id"].as_i64() == Some(i64::from(*id)))
                .and_then(|f| f["name"].as_str())
                .map(str::to_string)
                .ok_or_else(|| {
                    bad(
                        dir,
                        format!("equality deletes on field {id}, which is not a top-level column"),
                    )
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut newest = std::collections::HashMap::new();
    for f in &equality_files {
        if f.equality_ids != ids {
            return Err(bad(
                dir,
                format!(
                    "delete file {} deletes by fields {:?}, others by {ids:?}: compaction applies \
                     equality deletes on one set of key columns",
                    f.path, f.equality_ids
                ),
            ));
        }
        let rel = dir
            .relative(&f.path)
            .ok_or_else(|| bad(dir, format!("delete file {} is outside the table", f.path)))?;
        let (schema, batches) = read_parquet(dir, &rel)?;
        let keys = strata_sort::merge::key_columns(&schema, &columns)
            .map_err(|e| bad(dir, format!("{rel}: {e}")))?;
        for b in &batches {
            let rows = strata_sort::merge::encode_keys(&keys, b)
                .map_err(|e| bad(dir, format!("{rel}: {e}")))?;
            for r in rows.iter() {
                let seq = newest.entry(r.as_bytes().to_vec()).or_insert(i64::MIN);
                *seq = (*seq).max(f.sequence_number);
            }
        }
    }
    out.equality = Some(Equality { columns, newest });
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
        IcebergDeletes::default()
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
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for files in groups.values() {
        use rayon::prelude::*;
        // Each file read, its deletes applied, and put in key order (when
        // it is not already), on all cores.
        let read: Vec<Live> = files
            .par_iter()
            .map(|f| live_rows(dir, inv, f, column, &deletes, delta_state.as_ref()))
            .collect::<Result<_, Error>>()?;
        applied += read.iter().map(|l| l.deleted).sum::<u64>();
        let Some(like) = read.iter().find(|l| !l.batches.is_empty()) else {
            continue;
        };
        let schema = like.batches[0].schema();
        // The outputs keep the codec and the dictionary choices of the
        // table's files.
        let codec = like
            .metadata
            .row_groups()
            .first()
            .and_then(|g| g.columns().first())
            .map_or(parquet::basic::Compression::UNCOMPRESSED, |c| {
                c.compression()
            });
        let props = strata_sort::merge::properties_like(
            &like.metadata,
            &schema,
            &[column.to_string()],
            codec,
        );
        // Every batch of every file is one run of the merge.
        let batches: Vec<RecordBatch> = read
            .iter()
            .flat_map(|l| l.batches.iter().cloned())
            .collect();
        let runs: Vec<_> = read
            .iter()
            .flat_map(|l| l.keys.iter())
            .map(|k| (k, 0..k.num_rows()))
            .collect();
        let mut order = strata_sort::merge::merge_rows_parallel(&runs, cores);
        drop(runs);
        // The merge numbered each batch's live rows; the writer gathers by
        // the batches' own rows.
        let keep: Vec<Option<&Vec<u32>>> = read
            .iter()
            .flat_map(|l| l.keep.iter().map(Option::as_ref))
            .collect();
        order.par_iter_mut().for_each(|(b, r)| {
            if let Some(rows) = keep[*b] {
                *r = rows[*r] as usize;
            }
        });
        let total = order.len().max(1);
        let bytes_in: u64 = files.iter().map(|f| f.bytes).sum();
        let rows_in: u64 = files.iter().map(|f| f.rows).sum();
        let row_bytes = bytes_in.max(1) as f64 / rows_in.max(1) as f64;
        let per_file = ((target_bytes as f64 / row_bytes).round() as usize).clamp(1, total);
        let encoding = strata_parquet::rowgroup::FileEncoding::new(
            schema.clone(),
            props,
            strata_parquet::rowgroup::ParquetEncoder::Auto,
        )
        .map_err(|e| Error::Invalid(e.to_string()))?;
        let groups = row_groups(
            &order,
            per_file,
            encoding
                .properties()
                .max_row_group_row_count()
                .unwrap_or(usize::MAX),
            cores,
        );
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        let dirname = files[0].rel.rsplit_once('/').map_or("", |(d, _)| d);
        let first_name = added.len();
        let name = |k: usize| {
            let name = format!("compacted-{run}-{first_name}-{k}.parquet");
            if dirname.is_empty() {
                name
            } else {
                format!("{dirname}/{name}")
            }
        };
        let written = write_groups(dir, &encoding, &refs, &groups, cores, &name)?;
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
                    equality_deletes: Vec::new(),
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

    /// Row groups cover the merged rows in order, each inside one file of
    /// `per_file` rows and at most `max_group` rows, and a file smaller
    /// than the cores' share is cut for every core (but not below
    /// `MIN_GROUP_ROWS`).
    #[test]
    fn row_groups_cover_the_files_in_order() {
        let order: Vec<(usize, usize)> = (0..1_000_000).map(|i| (i % 3, i)).collect();
        // (rows per file, most rows per group, cores, groups expected)
        for (per_file, max_group, cores, count) in [
            // one file, four groups per core, each at least MIN_GROUP_ROWS
            (1_000_000, usize::MAX, 2, 7),
            (1_000_000, usize::MAX, 1, 4),
            // groups no larger than the most a group takes
            (300_000, 100_000, 2, 3 * 3 + 1),
            // three files (the last of 200,000 rows) for 16 cores
            (400_000, 1 << 20, 16, 3 + 3 + 1),
            (7, 3, 4, 142_857 * 3 + 1),
        ] {
            let groups = row_groups(&order, per_file, max_group, cores);
            let joined: Vec<(usize, usize)> =
                groups.iter().flat_map(|(_, g)| g.iter().copied()).collect();
            assert_eq!(joined, order);
            let mut at = 0;
            for &(k, g) in &groups {
                assert!(!g.is_empty() && g.len() <= max_group);
                assert_eq!(k, at / per_file, "group at row {at}");
                assert_eq!(k, (at + g.len() - 1) / per_file, "group at row {at}");
                at += g.len();
            }
            assert_eq!(groups.len(), count, "{per_file} {max_group} {cores}");
        }
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
