//! What the inputs are: tables of Parquet, Arrow IPC or CSV files, found
//! in files, directories and `s3://` prefixes, and the one scan of each.
//!
//! A file is a table named by its stem: the name without its extension
//! and without a trailing part number (`orders_3.parquet`,
//! `orders.3.parquet` and `orders-3.parquet` are parts of `orders`). A
//! directory holds one table per subdirectory (every data file under it,
//! at any depth, as `strata generate` and Hive-partitioned writers leave
//! them) and one per stem of the data files directly in it, unless it is
//! itself one table's directory: every subdirectory a Hive partition
//! (`name=value`), or a Delta (`_delta_log`) or Iceberg (`metadata` and
//! `data`) table, whose data files (at any depth, `_`-prefixed ones
//! skipped) are that table's, named after the directory. An
//! `s3://bucket/prefix/` reads the same way, one level deep. Files of one
//! table must have the same columns.

use std::collections::BTreeMap;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use strata_scan::inputs::natural_order;
use strata_scan::{ScanRequest, Scanner};
use strata_store::location::{Kind, StoreConfig, parse_dir};

use crate::Error;

/// How much of each table is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sample {
    /// Every row.
    All,
    /// About this many rows (whole Parquet row groups spread over the
    /// table; the first rows of IPC and CSV files).
    Rows(u64),
    /// About this share of the rows.
    Fraction(f64),
}

impl std::str::FromStr for Sample {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("all") || t.eq_ignore_ascii_case("off") {
            return Ok(Sample::All);
        }
        let digits: String = t.chars().filter(|&c| c != '_').collect();
        if let Ok(n) = digits.parse::<u64>() {
            return if n == 0 {
                Err(
                    "--sample 0 reads nothing: give a row count, a fraction in (0, 1] or `all`"
                        .into(),
                )
            } else {
                Ok(Sample::Rows(n))
            };
        }
        match digits.parse::<f64>() {
            Ok(f) if f > 0.0 && f <= 1.0 => Ok(Sample::Fraction(f)),
            _ => Err(format!(
                "--sample {s}: give a row count (1000000), a fraction in (0, 1] (0.1) or `all`"
            )),
        }
    }
}

impl Sample {
    /// The rows to read of a table of `total` rows.
    fn target(self, total: u64) -> u64 {
        match self {
            Sample::All => total,
            Sample::Rows(n) => n.min(total),
            Sample::Fraction(f) => ((total as f64 * f).ceil() as u64).min(total),
        }
    }
}

/// A table of the input: its name and files.
#[derive(Debug, Clone, PartialEq)]
pub struct TableInput {
    /// The table's name (a directory's or a file stem).
    pub name: String,
    /// Its data files, in scan order.
    pub files: Vec<String>,
    /// Whether they are CSV files (else Parquet or Arrow IPC).
    pub csv: bool,
}

const COLUMNAR: [&str; 4] = ["parquet", "arrow", "ipc", "feather"];

fn extension(name: &str) -> Option<String> {
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())
}

fn is_data(name: &str) -> bool {
    !name.starts_with('.')
        && !name.starts_with('_')
        && extension(name).is_some_and(|e| e == "csv" || COLUMNAR.contains(&e.as_str()))
}

/// A file's table name: its stem without a trailing part number.
pub fn stem(file_name: &str) -> String {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    let mut s = base.rsplit_once('.').map_or(base, |(b, _)| b).to_string();
    // `_partIofN_j` of split runs, then one `_3`, `-3` or `.3`.
    if let Some(i) = s.rfind("_part")
        && s[i + 5..]
            .chars()
            .all(|c| c.is_ascii_digit() || c == 'o' || c == 'f' || c == '_')
    {
        s.truncate(i);
    }
    let trimmed = s.trim_end_matches(|c: char| c.is_ascii_digit());
    if trimmed.len() < s.len()
        && let Some(t) = trimmed.strip_suffix(['_', '-', '.'])
        && !t.is_empty()
    {
        return t.to_string();
    }
    s
}

fn add(tables: &mut BTreeMap<String, Vec<String>>, name: String, file: String) {
    tables.entry(name).or_default().push(file);
}

fn walk(dir: &Path, out: &mut Vec<String>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("list", dir.display(), e))?;
    let mut names: Vec<(String, bool)> = Vec::new();
    for e in entries {
        let e = e.map_err(|e| Error::io("list", dir.display(), e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        names.push((name, e.path().is_dir()));
    }
    names.sort_by(|a, b| natural_order(&a.0, &b.0));
    for (name, is_dir) in names {
        let p = dir.join(&name);
        if is_dir {
            walk(&p, out)?;
        } else if is_data(&name) {
            out.push(p.display().to_string());
        }
    }
    Ok(())
}

/// Whether `dir` is one table's directory rather than a directory of
/// tables: a Delta table (`_delta_log`), an Iceberg table (`metadata` and
/// `data`), or Hive partitions (every subdirectory a `name=value`).
fn is_table_dir(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let subdirs: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let has = |n: &str| subdirs.iter().any(|d| d == n);
    if has("_delta_log") || (has("metadata") && has("data")) {
        return true;
    }
    let visible: Vec<&String> = subdirs
        .iter()
        .filter(|d| !d.starts_with('.') && !d.starts_with('_'))
        .collect();
    !visible.is_empty() && visible.iter().all(|d| d.contains('='))
}

/// The tables `inputs` hold (see the module documentation), by name.
///
/// # Errors
///
/// [`Error::Input`] for a missing input, one with no data file, or a
/// table with both CSV and columnar files; [`Error::Store`] or
/// [`Error::Scan`] when a listing fails.
pub fn discover(inputs: &[String], cfg: &StoreConfig) -> Result<Vec<TableInput>, Error> {
    if inputs.is_empty() {
        return Err(Error::Input(
            "no input: give Parquet, Arrow IPC or CSV files, directories or s3:// prefixes".into(),
        ));
    }
    let mut tables: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for input in inputs {
        let loc = parse_dir(input, cfg)?;
        match (&loc.kind, &loc.file) {
            (Kind::Local, Some(path)) => {
                if path.is_file() {
                    add(&mut tables, stem(input), input.clone());
                } else if path.is_dir() && is_table_dir(path) {
                    let mut files = Vec::new();
                    walk(path, &mut files)?;
                    if files.is_empty() {
                        return Err(Error::Input(format!(
                            "{input} holds no data file (.parquet, .arrow, .ipc, .feather or .csv)"
                        )));
                    }
                    let name = path
                        .file_name()
                        .map_or_else(|| "table".to_string(), |n| n.to_string_lossy().into_owned());
                    for f in files {
                        add(&mut tables, name.clone(), f);
                    }
                } else if path.is_dir() {
                    let before = tables.values().map(Vec::len).sum::<usize>();
                    let mut entries: Vec<(String, bool)> = std::fs::read_dir(path)
                        .map_err(|e| Error::io("list", path.display(), e))?
                        .filter_map(Result::ok)
                        .map(|e| {
                            (
                                e.file_name().to_string_lossy().into_owned(),
                                e.path().is_dir(),
                            )
                        })
                        .filter(|(n, _)| !n.starts_with('.') && !n.starts_with('_'))
                        .collect();
                    entries.sort_by(|a, b| natural_order(&a.0, &b.0));
                    for (name, is_dir) in entries {
                        let p = path.join(&name);
                        if is_dir {
                            let mut files = Vec::new();
                            walk(&p, &mut files)?;
                            for f in files {
                                add(&mut tables, name.clone(), f);
                            }
                        } else if is_data(&name) {
                            add(&mut tables, stem(&name), p.display().to_string());
                        }
                    }
                    if tables.values().map(Vec::len).sum::<usize>() == before {
                        return Err(Error::Input(format!(
                            "{input} holds no data file (.parquet, .arrow, .ipc, .feather or .csv; hidden and _-prefixed names are skipped)"
                        )));
                    }
                } else {
                    return Err(Error::Input(format!("{input}: no such file or directory")));
                }
            }
            _ => discover_remote(input, cfg, &mut tables)?,
        }
    }
    let mut out = Vec::new();
    for (name, files) in tables {
        let csv: Vec<bool> = files
            .iter()
            .map(|f| extension(f).is_some_and(|e| e == "csv"))
            .collect();
        if csv.iter().any(|&c| c) && !csv.iter().all(|&c| c) {
            return Err(Error::Input(format!(
                "table {name} has both CSV and Parquet or Arrow IPC files ({}); give them as separate inputs",
                files.join(", ")
            )));
        }
        out.push(TableInput {
            name,
            csv: csv[0],
            files,
        });
    }
    Ok(out)
}

fn discover_remote(
    input: &str,
    cfg: &StoreConfig,
    tables: &mut BTreeMap<String, Vec<String>>,
) -> Result<(), Error> {
    if !input.ends_with('/') {
        if extension(input).is_some_and(|e| e == "csv") {
            return Err(Error::Input(format!(
                "{input}: CSV inputs are read from local files only"
            )));
        }
        add(tables, stem(input), input.to_string());
        return Ok(());
    }
    let loc = parse_dir(input.trim_end_matches('/'), cfg)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("start a runtime for", input, e))?;
    let list = |prefix: object_store::path::Path| {
        rt.block_on(loc.store.list_with_delimiter(Some(&prefix)))
            .map_err(|e| {
                Error::Store(strata_store::Error::ObjectStore {
                    location: input.to_string(),
                    source: e,
                })
            })
    };
    let top = list(loc.path.clone())?;
    let base = input.trim_end_matches('/');
    let before = tables.values().map(Vec::len).sum::<usize>();
    let mut names: Vec<String> = top
        .objects
        .iter()
        .filter_map(|o| o.location.filename().map(str::to_string))
        .filter(|n| is_data(n))
        .collect();
    names.sort_by(|a, b| natural_order(a, b));
    for n in names {
        if extension(&n).is_some_and(|e| e == "csv") {
            return Err(Error::Input(format!(
                "{base}/{n}: CSV inputs are read from local files only"
            )));
        }
        add(tables, stem(&n), format!("{base}/{n}"));
    }
    for dir in &top.common_prefixes {
        let Some(table) = dir.filename().map(str::to_string) else {
            continue;
        };
        if table.starts_with('.') || table.starts_with('_') {
            continue;
        }
        let mut names: Vec<String> = list(dir.clone())?
            .objects
            .iter()
            .filter_map(|o| o.location.filename().map(str::to_string))
            .filter(|n| is_data(n) && extension(n).is_some_and(|e| e != "csv"))
            .collect();
        names.sort_by(|a, b| natural_order(a, b));
        for n in names {
            add(tables, table.clone(), format!("{base}/{table}/{n}"));
        }
    }
    if tables.values().map(Vec::len).sum::<usize>() == before {
        return Err(Error::Input(format!(
            "{input} holds no Parquet or Arrow IPC file"
        )));
    }
    Ok(())
}

/// What a read of a table found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Read {
    /// The rows of the table (exact for Parquet and IPC; for sampled CSV
    /// estimated from the bytes read).
    pub rows: u64,
    /// For a sampled Parquet table: each top-level column's null count and
    /// integer range over every row group, from the files' statistics.
    pub stats: std::collections::HashMap<String, ColumnStats>,
}

/// A column's figures over a whole table, from Parquet statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ColumnStats {
    /// Nulls, when every row group counts them.
    pub nulls: Option<u64>,
    /// Least and greatest value of an `INT32`/`INT64` column, when every
    /// row group has them.
    pub range: Option<(i128, i128)>,
}

/// The statistics of every row group of `scanners`' Parquet files, per
/// top-level column.
fn statistics(scanners: &[Scanner]) -> std::collections::HashMap<String, ColumnStats> {
    use parquet::file::statistics::Statistics;
    /// Nulls so far, the range so far, whether every row group had one.
    type Acc = (Option<u64>, Option<(i128, i128)>, bool);
    let mut out: std::collections::HashMap<String, Acc> = std::collections::HashMap::new();
    for s in scanners {
        let strata_scan::ScanFile::Parquet(p) = s.file() else {
            return std::collections::HashMap::new();
        };
        let meta = p.metadata();
        let descr = meta.file_metadata().schema_descr();
        for rg in meta.row_groups() {
            for (i, col) in descr.columns().iter().enumerate() {
                let parts = col.path().parts();
                if parts.len() != 1 {
                    continue;
                }
                let e = out.entry(parts[0].clone()).or_insert((Some(0), None, true));
                let stats = rg.column(i).statistics();
                e.0 = match (e.0, stats.and_then(Statistics::null_count_opt)) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
                let range = match stats {
                    Some(Statistics::Int32(v)) => v
                        .min_opt()
                        .zip(v.max_opt())
                        .map(|(a, b)| (i128::from(*a), i128::from(*b))),
                    Some(Statistics::Int64(v)) => v
                        .min_opt()
                        .zip(v.max_opt())
                        .map(|(a, b)| (i128::from(*a), i128::from(*b))),
                    _ => None,
                };
                match range {
                    Some((lo, hi)) if e.2 => {
                        e.1 = Some(e.1.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
                    }
                    // A row group with values but no range: no range.
                    None if rg.num_rows() > 0
                        && stats.and_then(Statistics::null_count_opt)
                            != Some(rg.num_rows() as u64) =>
                    {
                        e.2 = false;
                        e.1 = None;
                    }
                    _ => {}
                }
            }
        }
    }
    out.into_iter()
        .map(|(k, (nulls, range, ok))| {
            (
                k,
                ColumnStats {
                    nulls,
                    range: range.filter(|_| ok),
                },
            )
        })
        .collect()
}

/// The schema of a table's files (all must have the first one's).
///
/// # Errors
///
/// A file that cannot be opened, or whose columns differ.
pub(crate) fn open(t: &TableInput, cfg: &StoreConfig) -> Result<(SchemaRef, Vec<Scanner>), Error> {
    if t.csv {
        let mut schema: Option<(SchemaRef, &String)> = None;
        for f in &t.files {
            let s = csv_schema(f)?;
            if let Some((first, name)) = &schema {
                if first.fields() != s.fields() {
                    return Err(mixed(&t.name, name, f));
                }
            } else {
                schema = Some((s, f));
            }
        }
        let (schema, _) =
            schema.ok_or_else(|| Error::Input(format!("table {} has no file", t.name)))?;
        return Ok((schema, Vec::new()));
    }
    let mut scanners: Vec<Scanner> = Vec::new();
    for f in &t.files {
        let s = Scanner::open_location(f, cfg)?;
        if let Some(first) = scanners.first() {
            let (a, b) = (first.file().schema(), s.file().schema());
            if a.fields() != b.fields() {
                return Err(mixed(&t.name, &t.files[0], f));
            }
        }
        scanners.push(s);
    }
    let schema = scanners
        .first()
        .map(|s| s.file().schema())
        .ok_or_else(|| Error::Input(format!("table {} has no file", t.name)))?;
    Ok((schema, scanners))
}

fn mixed(table: &str, a: &str, b: &str) -> Error {
    Error::Input(format!(
        "table {table}: {b} does not have the columns of {a}; files of one table need the same \
         schema (give tables of different schemas their own directory or stem)"
    ))
}

const CSV_SCHEMA_ROWS: usize = 10_000;

fn csv_format() -> arrow_csv::reader::Format {
    arrow_csv::reader::Format::default().with_header(true)
}

fn csv_schema(path: &str) -> Result<SchemaRef, Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let (schema, _) = csv_format()
        .infer_schema(std::io::BufReader::new(file), Some(CSV_SCHEMA_ROWS))
        .map_err(|e| Error::Csv {
            path: path.to_string(),
            message: e.to_string(),
        })?;
    if schema.fields().is_empty() {
        return Err(Error::Csv {
            path: path.to_string(),
            message: "no header line: a CSV input needs one".into(),
        });
    }
    Ok(std::sync::Arc::new(schema))
}

/// Scans `t` (opened by [`open`]) once, sampled, calling `each` with
/// every batch.
pub(crate) fn scan(
    t: &TableInput,
    schema: &SchemaRef,
    scanners: &mut [Scanner],
    sample: Sample,
    mut each: impl FnMut(&RecordBatch),
) -> Result<Read, Error> {
    if t.csv {
        return scan_csv(t, schema, sample, each);
    }
    let mut sizes = Vec::new();
    for s in scanners.iter() {
        sizes.push(s.num_rows()?);
    }
    let total: u64 = sizes.iter().sum();
    let target = sample.target(total);
    let req = ScanRequest::default();
    if target >= total {
        for s in scanners.iter_mut() {
            s.scan(&req, |b| {
                each(b);
                Ok(())
            })?;
        }
        return Ok(Read {
            rows: total,
            ..Read::default()
        });
    }
    let stats = statistics(scanners);
    // Whole row groups spread evenly over the table.
    let mut groups: Vec<(usize, usize, u64)> = Vec::new();
    for (i, s) in scanners.iter().enumerate() {
        if let strata_scan::ScanFile::Parquet(p) = s.file() {
            for (g, rg) in p.metadata().row_groups().iter().enumerate() {
                groups.push((i, g, rg.num_rows().max(0) as u64));
            }
        }
    }
    let parquet_rows: u64 = groups.iter().map(|g| g.2).sum();
    if groups.len() >= 2 && parquet_rows == total {
        let want = (groups.len() as f64 * target as f64 / total as f64).ceil() as usize;
        let want = want.clamp(1, groups.len());
        let mut picked: Vec<(usize, usize)> = (0..want)
            .map(|j| {
                let k = j * groups.len() / want;
                (groups[k].0, groups[k].1)
            })
            .collect();
        picked.dedup();
        for (i, s) in scanners.iter_mut().enumerate() {
            let gs: Vec<usize> = picked.iter().filter(|p| p.0 == i).map(|p| p.1).collect();
            if !gs.is_empty() {
                s.scan_groups(&req, &gs, |b| {
                    each(b);
                    Ok(())
                })?;
            }
        }
        return Ok(Read { rows: total, stats });
    }
    // The first rows.
    let mut left = target;
    for s in scanners.iter_mut() {
        if left == 0 {
            break;
        }
        let part = ScanRequest {
            limit: Some(left as usize),
            ..ScanRequest::default()
        };
        s.scan(&part, |b| {
            left -= (b.num_rows() as u64).min(left);
            each(b);
            Ok(())
        })?;
    }
    Ok(Read { rows: total, stats })
}

fn scan_csv(
    t: &TableInput,
    schema: &SchemaRef,
    sample: Sample,
    mut each: impl FnMut(&RecordBatch),
) -> Result<Read, Error> {
    let mut rows = 0u64;
    let mut read_bytes = 0u64;
    let mut all_bytes = 0u64;
    let limit = match sample {
        Sample::All => u64::MAX,
        Sample::Rows(n) => n,
        // The share of each file's bytes.
        Sample::Fraction(_) => u64::MAX,
    };
    let mut done = false;
    for f in &t.files {
        let size = std::fs::metadata(f)
            .map_err(|e| Error::io("read", f, e))?
            .len();
        all_bytes += size;
        if done {
            continue;
        }
        let byte_limit = match sample {
            Sample::Fraction(x) => (size as f64 * x).ceil() as u64,
            _ => u64::MAX,
        };
        let file = std::fs::File::open(f).map_err(|e| Error::io("open", f, e))?;
        let count = std::rc::Rc::new(std::cell::Cell::new(0u64));
        let counted = CountingReader {
            inner: file,
            count: count.clone(),
        };
        let mut reader = arrow_csv::ReaderBuilder::new(schema.clone())
            .with_format(csv_format())
            .with_batch_size(8192)
            .build(counted)
            .map_err(|e| Error::Csv {
                path: f.clone(),
                message: e.to_string(),
            })?;
        let mut file_bytes = size;
        for b in reader.by_ref() {
            let b = b.map_err(|e| Error::Csv {
                path: f.clone(),
                message: e.to_string(),
            })?;
            rows += b.num_rows() as u64;
            each(&b);
            if rows >= limit {
                done = true;
            }
            if done || count.get() > byte_limit {
                break;
            }
        }
        let consumed = count.get();
        if done || consumed > byte_limit {
            file_bytes = consumed.min(size);
        }
        read_bytes += file_bytes;
    }
    let estimate = if read_bytes >= all_bytes || read_bytes == 0 {
        rows
    } else {
        (rows as f64 * all_bytes as f64 / read_bytes as f64).round() as u64
    };
    Ok(Read {
        rows: estimate,
        ..Read::default()
    })
}

struct CountingReader<R> {
    inner: R,
    count: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: std::io::Read> std::io::Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_drop_part_numbers() {
        for (f, s) in [
            ("orders_3.parquet", "orders"),
            ("lineitem.parquet", "lineitem"),
            ("lineitem.12.parquet", "lineitem"),
            ("a-b-7.arrow", "a-b"),
            ("contacts_part2of4_0.parquet", "contacts"),
            ("/x/y/q4.csv", "q4"),
            ("2024.parquet", "2024"),
        ] {
            assert_eq!(stem(f), s, "{f}");
        }
    }

    #[test]
    fn samples_parse() {
        assert_eq!("all".parse::<Sample>(), Ok(Sample::All));
        assert_eq!("1_000".parse::<Sample>(), Ok(Sample::Rows(1000)));
        assert_eq!("0.25".parse::<Sample>(), Ok(Sample::Fraction(0.25)));
        assert!("0".parse::<Sample>().is_err());
        assert!("1.5".parse::<Sample>().is_err());
        assert!("x".parse::<Sample>().is_err());
    }
}
