//! Laid-out output: a table's files in Hive-style partition directories,
//! their rows in a sort order, and files, row groups and pages cut at
//! sizes, as benchmarks of data systems read them.
//!
//! A table's [`strata_gen::Layout`] (its spec's `layout = { ... }`) with
//! the command line's [`LayoutFlags`] over it is checked against the
//! table's schema into a [`Layout`] ([`Layout::resolve`]), before anything
//! is written. [`crate::generate`] hands a table with a layout to the
//! `write` module, which generates the rows in tasks on all threads,
//! groups each task's rows by partition, keeps them in memory up to a
//! third of the memory limit (past it, spills each partition's rows as a
//! sorted run) and at the end writes each partition's files, on all
//! threads: its rows put in sort-key order and gathered from memory, or
//! the stable k-way merge of its runs ([`strata_sort::merge::merge_files`]).
//!
//! # Guarantees
//!
//! * The rows are the plain run's, whatever the layout, threads, parts
//!   or memory limit; within a partition they are in sort-key order, rows
//!   of equal keys in generation order, so a partition's rows and their
//!   order do not depend on the threads or the memory limit, nor its
//!   files' bytes on the threads.
//! * The files of one partition hold ascending key ranges; each row
//!   group's metadata lists its `sorting_columns`. A partition written
//!   from memory is cut where its first sort key changes (near the size
//!   wanted), so its files do not share a value of it; one merged from
//!   spilled runs is cut by the merge at the size.
//! * Files close at `target_file_size` compressed bytes (each
//!   partition's last file holds what is left): a file's rows are sized
//!   from a fixed part and bytes per row, fitted by trial encodings of the
//!   partition's first rows, then measured on its files written so far,
//!   and cut where the first sort key changes when it changes nearby.
//! * Nothing is visible before the whole run is complete: the files are
//!   written in a hidden directory and moved into their partition
//!   directories at the end ([`strata_store::output::PendingDir`]); spill
//!   files are removed however the run ends.

mod check;
mod files;
mod keys;
mod plan;
mod write;

use std::{ops::Range, path::PathBuf};

use arrow_schema::{DataType, Schema};
use serde::Serialize;
use strata_gen::RowGroupSize;
use strata_layout::PartitionField;
use strata_parquet::rowgroup::ParquetEncoder;
use strata_sort::SortKey;

use crate::Error;

pub use check::{LayoutCheck, SIZE_TOLERANCE, check_layout};
pub(crate) use plan::conflicting_files;
pub use plan::{LayoutPlan, plan_layout};
pub(crate) use write::stage_layout;

/// Where and how a laid-out run writes: what it takes of the run's
/// settings.
#[derive(Debug, Clone)]
pub struct Target {
    /// The rows of the run (its part's).
    pub rows: Range<u64>,
    /// Rows asked of the generator at least per task.
    pub batch_rows: usize,
    /// Worker threads.
    pub threads: usize,
    /// The output directory: partition directories go in it.
    pub dir: PathBuf,
    /// File name stem: a partition's files are `STEM_K.parquet`.
    pub stem: String,
    /// Whether existing files of the same names are replaced.
    pub overwrite: bool,
    /// The Parquet encoder.
    pub encoder: ParquetEncoder,
    /// Whether pages carry checksums.
    pub page_checksums: bool,
    /// The generator's schema with Parquet field ids, which the files'
    /// schema takes.
    pub field_ids: Option<arrow_schema::SchemaRef>,
}

/// Partitions a run may write when none is said (`--max-partitions`).
pub const DEFAULT_MAX_PARTITIONS: u64 = 10_000;

/// A table's layout, checked against its schema.
#[derive(Debug, Clone, Serialize)]
pub struct Layout {
    /// Partition fields, outermost first, as written.
    pub partition_by: Vec<String>,
    /// Sort keys, most significant first, as written.
    pub sort_by: Vec<String>,
    /// Compressed bytes at which a file closes.
    pub target_file_size: Option<u64>,
    /// Rows (`rows`) or encoded bytes (`bytes`) at which a row group
    /// closes; `None`: the run's row group rows.
    #[serde(serialize_with = "row_group_size")]
    pub row_group_size: Option<RowGroupSize>,
    /// Bytes at which a data page closes.
    pub page_size: Option<u64>,
    /// Whether identity partition columns are also written in the files.
    pub keep_partition_columns: bool,
    /// Bytes of rows held in memory before they are spilled.
    pub memory_limit: u64,
    /// Where spilled runs go (a temporary directory inside it, removed at
    /// the end; default: the output directory).
    pub spill_dir: Option<PathBuf>,
    /// The most partitions the run may write.
    pub max_partitions: u64,
    #[serde(skip)]
    fields: Vec<PartitionField>,
    #[serde(skip)]
    keys: Vec<SortKey>,
}

fn row_group_size<S: serde::Serializer>(v: &Option<RowGroupSize>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        None => s.serialize_none(),
        Some(RowGroupSize::Rows(n)) => s.serialize_str(&format!("{n} rows")),
        Some(RowGroupSize::Bytes(n)) => s.serialize_str(&format!("{n} bytes")),
    }
}

/// The command line's layout settings, over each table's spec. A value
/// may start with `TABLE:` to apply to that table of a dataset alone; one
/// without applies to every table (and a table's own wins over it).
#[derive(Debug, Clone)]
pub struct LayoutFlags {
    /// `--partition-by`: partition fields, comma-separated.
    pub partition_by: Vec<String>,
    /// `--sort-by`: sort keys, comma-separated.
    pub sort_by: Vec<String>,
    /// `--target-file-size`.
    pub target_file_size: Vec<String>,
    /// `--row-group-size`: rows, or bytes with a unit.
    pub row_group_size: Vec<String>,
    /// `--partition-columns keep|drop`.
    pub keep_partition_columns: Option<bool>,
    /// `--memory-limit`.
    pub memory_limit: u64,
    /// `--spill-dir`.
    pub spill_dir: Option<PathBuf>,
    /// `--max-partitions`.
    pub max_partitions: u64,
}

impl Default for LayoutFlags {
    /// No layout flag; a 4 GiB memory limit, spills beside the output, at
    /// most [`DEFAULT_MAX_PARTITIONS`] partitions.
    fn default() -> Self {
        LayoutFlags {
            partition_by: Vec::new(),
            sort_by: Vec::new(),
            target_file_size: Vec::new(),
            row_group_size: Vec::new(),
            keep_partition_columns: None,
            memory_limit: strata_sort::DEFAULT_MEMORY_LIMIT,
            spill_dir: None,
            max_partitions: DEFAULT_MAX_PARTITIONS,
        }
    }
}

impl LayoutFlags {
    /// Refuses a `TABLE:` prefix naming none of `tables`, where the text
    /// before the colon cannot be anything else (a sort key's suffix).
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] naming the flag and the tables.
    pub fn check_tables(&self, tables: &[&str]) -> Result<(), Error> {
        let lists = [
            ("--partition-by", &self.partition_by),
            ("--sort-by", &self.sort_by),
            ("--target-file-size", &self.target_file_size),
            ("--row-group-size", &self.row_group_size),
        ];
        for (flag, values) in lists {
            for v in values {
                if let Some((t, _)) = v.split_once(':')
                    && !tables.contains(&t)
                    && flag != "--sort-by"
                    && !t.contains('(')
                {
                    return Err(Error::InvalidConfig(format!(
                        "{flag} {v}: no table `{t}` (tables: {})",
                        tables.join(", ")
                    )));
                }
            }
        }
        Ok(())
    }

    /// The value of a flag for `table`: its own (`TABLE:...`), else the
    /// one for every table.
    fn value<'a>(values: &'a [String], table: &str, tables: &[&str]) -> Option<&'a str> {
        let own = values.iter().rev().find_map(|v| {
            let (t, rest) = v.split_once(':')?;
            (t == table).then_some(rest)
        });
        own.or_else(|| {
            values.iter().rev().find_map(|v| match v.split_once(':') {
                Some((t, _)) if tables.contains(&t) => None,
                _ => Some(v.as_str()),
            })
        })
    }
}

/// Splits `text` at the commas outside parentheses (`bucket(16, k), c`).
pub fn split_list(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

impl Layout {
    /// The layout of table `table` (schema `schema`, one of `tables`):
    /// its spec's `layout` with `flags` over it; `None` when neither asks
    /// for partitions, an order or sizes beyond the plain run's.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`], naming the table and the setting: a
    /// partition or sort column the table lacks, a transform of a type it
    /// does not take (`month` of a string), `bucket` or `truncate` of 0,
    /// a sort key the row format cannot order, a bad size, a target file
    /// size below the row group's bytes.
    pub fn resolve(
        spec: &strata_gen::Layout,
        flags: &LayoutFlags,
        table: &str,
        tables: &[&str],
        schema: &Schema,
    ) -> Result<Option<Layout>, Error> {
        let at = if spec.line > 0 {
            format!("table `{table}` (layout on line {})", spec.line)
        } else {
            format!("table `{table}`")
        };
        let bad = |what: &str, m: String| Error::InvalidConfig(format!("{at}: {what}: {m}"));
        let partition_by = match LayoutFlags::value(&flags.partition_by, table, tables) {
            Some(v) => split_list(v),
            None => spec.partition_by.clone(),
        };
        let sort_by = match LayoutFlags::value(&flags.sort_by, table, tables) {
            Some(v) => split_list(v),
            None => spec.sort_by.clone(),
        };
        let target_file_size = match LayoutFlags::value(&flags.target_file_size, table, tables) {
            Some(v) => {
                Some(strata_gen::parse_byte_size(v).map_err(|m| bad("--target-file-size", m))?)
            }
            None => spec.target_file_size,
        };
        let row_group_size = match LayoutFlags::value(&flags.row_group_size, table, tables) {
            Some(v) => Some(
                v.parse::<RowGroupSize>()
                    .map_err(|m| bad("--row-group-size", m))?,
            ),
            None => spec.row_group_size,
        };
        let keep_partition_columns = flags
            .keep_partition_columns
            .or(spec.keep_partition_columns)
            .unwrap_or(false);
        if partition_by.is_empty()
            && sort_by.is_empty()
            && target_file_size.is_none()
            && row_group_size.is_none()
            && spec.page_size.is_none()
        {
            return Ok(None);
        }
        let mut fields = Vec::with_capacity(partition_by.len());
        for text in &partition_by {
            let f = PartitionField::parse(text)
                .map_err(|e| bad("layout.partition_by", e.to_string()))?;
            f.check(schema)
                .map_err(|e| bad("layout.partition_by", e.to_string()))?;
            if fields.iter().any(|g: &PartitionField| g.name == f.name) {
                return Err(bad(
                    "layout.partition_by",
                    format!("`{text}` names partition `{}` twice", f.name),
                ));
            }
            fields.push(f);
        }
        let mut keys = Vec::with_capacity(sort_by.len());
        for text in &sort_by {
            let k: SortKey = text
                .parse()
                .map_err(|e: strata_sort::Error| bad("layout.sort_by", e.to_string()))?;
            keys.push(k);
        }
        if !keys.is_empty() {
            strata_sort::Sorter::new(schema, &keys)
                .map_err(|e| bad("layout.sort_by", e.to_string()))?;
        }
        if let (Some(t), Some(RowGroupSize::Bytes(g))) = (target_file_size, row_group_size)
            && t < g
        {
            return Err(bad(
                "layout.target_file_size",
                format!("{t} bytes is below the row group size ({g} bytes)"),
            ));
        }
        if flags.max_partitions == 0 {
            return Err(bad("--max-partitions", "must be at least 1".into()));
        }
        Ok(Some(Layout {
            partition_by,
            sort_by,
            target_file_size,
            row_group_size,
            page_size: spec.page_size,
            keep_partition_columns,
            memory_limit: flags.memory_limit,
            spill_dir: flags.spill_dir.clone(),
            max_partitions: flags.max_partitions,
            fields,
            keys,
        }))
    }

    /// The partition fields.
    pub fn fields(&self) -> &[PartitionField] {
        &self.fields
    }

    /// The sort keys.
    pub fn keys(&self) -> &[SortKey] {
        &self.keys
    }

    /// The columns of `schema` written in the files: all but identity
    /// partitions' columns, unless they are kept.
    pub fn file_columns(&self, schema: &Schema) -> Vec<usize> {
        let dropped = self.dropped_columns();
        (0..schema.fields().len())
            .filter(|&i| !dropped.contains(&schema.field(i).name().as_str()))
            .collect()
    }

    /// The identity partition columns left out of the files (none when
    /// they are kept).
    pub fn dropped_columns(&self) -> Vec<&str> {
        if self.keep_partition_columns {
            return Vec::new();
        }
        self.fields
            .iter()
            .filter(|f| f.transform == strata_layout::Transform::Identity)
            .map(|f| f.source.as_str())
            .collect()
    }

    /// Whether rows are grouped or ordered (else only sizes change).
    pub fn reorders(&self) -> bool {
        !self.fields.is_empty() || !self.keys.is_empty()
    }

    /// Whether the run needs the laid-out path: partitions, an order, a
    /// target file size or row groups in bytes (row groups in rows and
    /// page sizes the plain run honours itself).
    pub fn own_path(&self) -> bool {
        self.reorders()
            || self.target_file_size.is_some()
            || matches!(self.row_group_size, Some(RowGroupSize::Bytes(_)))
    }
}

/// The sort keys of `keys` that `schema` holds (a key on an identity
/// partition column left out of the files is constant in a partition).
pub(crate) fn keys_in(keys: &[SortKey], schema: &Schema) -> Vec<SortKey> {
    keys.iter()
        .filter(|k| strata_row::KeyColumns::new(schema, &[(k.column.as_str(), k.options)]).is_ok())
        .cloned()
        .collect()
}

/// The type a partition field of `schema` gives (checked already).
pub(crate) fn partition_type(f: &PartitionField, schema: &Schema) -> DataType {
    f.check(schema).map_or(DataType::Null, |(_, t)| t)
}
