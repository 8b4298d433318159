//! Checking laid-out files against their layout (`generate
//! --verify-distribution`): every row in the partition its directory
//! names, every file in sort-key order, the files of a partition over
//! ascending ranges of the first key, and every file but a partition's
//! last within 10% of the target size.

use std::{
    collections::BTreeMap,
    fmt, fs,
    path::{Path, PathBuf},
};

use arrow_array::RecordBatch;
use arrow_schema::Schema;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::Serialize;
use strata_layout::hive;
use strata_row::Rows;
use strata_sort::Sorter;
use strata_store::FromStore as _;

use super::Layout;
use crate::{Error, counts::FileSummary};

/// How far a file (not a partition's last) may be from the target size.
pub const SIZE_TOLERANCE: f64 = 0.10;

/// What [`check_layout`] found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LayoutCheck {
    /// Files read.
    pub files: usize,
    /// Partition directories.
    pub partitions: usize,
    /// Rows whose partition values are not their directory's.
    pub misplaced_rows: u64,
    /// Files whose rows are not in sort-key order.
    pub unsorted_files: Vec<PathBuf>,
    /// Neighbouring files of a partition whose first-key ranges overlap.
    pub overlapping: Vec<(PathBuf, PathBuf)>,
    /// Neighbouring files that share one first-key value at their
    /// boundary (no cut where the key changes was near the target size).
    pub touching: usize,
    /// The target size checked, if any.
    pub target_file_size: Option<u64>,
    /// Files checked for size (all but each partition's last).
    pub sized: usize,
    /// Files off the target by more than [`SIZE_TOLERANCE`], and their
    /// bytes.
    pub off_size: Vec<(PathBuf, u64)>,
}

impl LayoutCheck {
    /// Whether every check held.
    pub fn passed(&self) -> bool {
        self.misplaced_rows == 0
            && self.unsorted_files.is_empty()
            && self.overlapping.is_empty()
            && self.off_size.is_empty()
    }

    /// The number of failed checks (0 to 4).
    pub fn failures(&self) -> usize {
        usize::from(self.misplaced_rows > 0)
            + usize::from(!self.unsorted_files.is_empty())
            + usize::from(!self.overlapping.is_empty())
            + usize::from(!self.off_size.is_empty())
    }
}

impl fmt::Display for LayoutCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ok = |b: bool| if b { "ok" } else { "FAILED" };
        writeln!(
            f,
            "layout: {} file(s) in {} partition(s)",
            self.files, self.partitions
        )?;
        writeln!(
            f,
            "  rows in their partitions: {} ({} misplaced)",
            ok(self.misplaced_rows == 0),
            self.misplaced_rows
        )?;
        writeln!(
            f,
            "  rows in sort order: {} ({} file(s) out of order{})",
            ok(self.unsorted_files.is_empty()),
            self.unsorted_files.len(),
            self.unsorted_files
                .first()
                .map_or(String::new(), |p| format!(", first {}", p.display()))
        )?;
        writeln!(
            f,
            "  first-key ranges of a partition's files: {} ({} overlapping pair(s), {} sharing one boundary value)",
            ok(self.overlapping.is_empty()),
            self.overlapping.len(),
            self.touching
        )?;
        if let Some(t) = self.target_file_size {
            writeln!(
                f,
                "  sizes: {} ({} of {} file(s) within {:.0}% of {t} bytes)",
                ok(self.off_size.is_empty()),
                self.sized - self.off_size.len(),
                self.sized,
                SIZE_TOLERANCE * 100.0
            )?;
        }
        Ok(())
    }
}

/// Reads the laid-out `files` of a table (schema `schema`, `layout`)
/// under `root` and checks them against the layout.
///
/// # Errors
/// A file that cannot be read, or whose columns are not the layout's.
pub fn check_layout(
    layout: &Layout,
    schema: &Schema,
    root: &Path,
    files: &[FileSummary],
) -> Result<LayoutCheck, Error> {
    let file_columns = layout.file_columns(schema);
    let file_schema = schema.project(&file_columns)?;
    // The sort keys within a partition (a dropped identity partition
    // column is constant there).
    let keys = super::keys_in(layout.keys(), &file_schema);
    let bad = |e: strata_sort::Error| Error::InvalidConfig(e.to_string());
    let sorter = match keys.first() {
        Some(first) => Some((
            Sorter::new(&file_schema, &keys).map_err(bad)?,
            Sorter::new(&file_schema, std::slice::from_ref(first)).map_err(bad)?,
        )),
        None => None,
    };
    let mut check = LayoutCheck {
        files: files.len(),
        target_file_size: layout.target_file_size,
        ..Default::default()
    };
    // Each partition's files, in the order written.
    let mut by_dir: BTreeMap<PathBuf, Vec<&FileSummary>> = BTreeMap::new();
    for f in files {
        by_dir
            .entry(f.path.parent().unwrap_or(Path::new("")).to_path_buf())
            .or_default()
            .push(f);
    }
    check.partitions = by_dir.len();
    for (dir, files) in &by_dir {
        let segments: Vec<String> = dir
            .strip_prefix(root)
            .unwrap_or(dir)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let mut last_first_key: Option<Vec<u8>> = None;
        let mut previous: Option<&Path> = None;
        for (k, f) in files.iter().enumerate() {
            let batch = read(&f.path)?;
            check.misplaced_rows += misplaced(layout, &batch, &segments);
            if let Some((all, first)) = &sorter {
                let rows = all.encode(&batch).map_err(bad)?;
                if !is_sorted(&rows) {
                    check.unsorted_files.push(f.path.clone());
                }
                if batch.num_rows() > 0 {
                    let keys = first.encode(&batch).map_err(bad)?;
                    let lo = keys.row(0).as_bytes().to_vec();
                    let hi = keys.row(keys.num_rows() - 1).as_bytes().to_vec();
                    if let (Some(prev_hi), Some(p)) = (&last_first_key, previous) {
                        match prev_hi.cmp(&lo) {
                            std::cmp::Ordering::Greater => {
                                check.overlapping.push((p.to_path_buf(), f.path.clone()))
                            }
                            std::cmp::Ordering::Equal => check.touching += 1,
                            std::cmp::Ordering::Less => {}
                        }
                    }
                    last_first_key = Some(hi);
                }
            }
            previous = Some(&f.path);
            if let Some(t) = layout.target_file_size
                && k + 1 < files.len()
            {
                check.sized += 1;
                let bytes = fs::metadata(&f.path)
                    .map_err(|e| Error::io("read", &f.path, e))?
                    .len();
                if (bytes as f64 - t as f64).abs() > SIZE_TOLERANCE * t as f64 {
                    check.off_size.push((f.path.clone(), bytes));
                }
            }
        }
    }
    Ok(check)
}

/// Rows of `batch` whose partition values (of the fields whose columns
/// the file holds) are not those of the directory `segments`.
fn misplaced(layout: &Layout, batch: &RecordBatch, segments: &[String]) -> u64 {
    let n = batch.num_rows();
    let mut wrong = vec![false; n];
    let at = segments.len().saturating_sub(layout.fields().len());
    for (i, field) in layout.fields().iter().enumerate() {
        let Some(column) = batch.column_by_name(&field.source) else {
            // A dropped identity column is in the directory name alone.
            continue;
        };
        let want = segments.get(at + i).cloned().unwrap_or_default();
        let Ok(values) = field.apply(column) else {
            wrong.iter_mut().for_each(|w| *w = true);
            continue;
        };
        for (r, w) in wrong.iter_mut().enumerate() {
            let text = hive::directory(&[(&field.name, hive::human(field, values.as_ref(), r))]);
            if text != want {
                *w = true;
            }
        }
    }
    wrong.iter().filter(|w| **w).count() as u64
}

fn is_sorted(rows: &Rows) -> bool {
    (1..rows.num_rows()).all(|i| rows.row(i - 1).as_bytes() <= rows.row(i).as_bytes())
}

/// All the rows of the Parquet file `path`.
fn read(path: &Path) -> Result<RecordBatch, Error> {
    let f = fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(f)?;
    let schema = builder.schema().clone();
    let batches = builder
        .build()?
        .collect::<Result<Vec<_>, _>>()
        .map_err(Error::from)?;
    Ok(arrow_select::concat::concat_batches(&schema, &batches)?)
}
