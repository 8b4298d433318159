//! A table's files from their footers: sizes, rows, row groups, Hive
//! partitions, and each file's key range from its statistics.

use std::collections::BTreeMap;

use arrow_schema::DataType;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;
use strata_scan::{ScanFile, Scanner};
use strata_store::location::StoreConfig;

use crate::Error;
use crate::model::{FileReport, KeyRange, LayoutReport, PartitionReport};

/// A bound of a key range, as read from a footer.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
enum Bound {
    Int(i128),
    Float(f64),
    Bytes(Vec<u8>),
}

/// The table's directory: the files' longest common directory, less the
/// Hive directories it ends in.
fn root(files: &[String]) -> String {
    let dirs: Vec<Vec<&str>> = files
        .iter()
        .map(|f| {
            let mut parts: Vec<&str> = f.split('/').collect();
            parts.pop();
            parts
        })
        .collect();
    let Some(first) = dirs.first() else {
        return String::new();
    };
    let mut n = first.len();
    for d in &dirs[1..] {
        n = n.min(d.iter().zip(first).take_while(|(a, b)| a == b).count());
    }
    while n > 0 && first[n - 1].contains('=') {
        n -= 1;
    }
    // An Iceberg table's files are under its `data` directory.
    if n > 1
        && first[n - 1] == "data"
        && std::path::Path::new(&first[..n - 1].join("/"))
            .join("metadata")
            .is_dir()
    {
        n -= 1;
    }
    first[..n].join("/")
}

/// The file's path below `root` and its partition (its `k=v`
/// directories).
fn place(file: &str, root: &str) -> (String, String) {
    let rel = file
        .strip_prefix(root)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(file)
        .to_string();
    let dirs: Vec<&str> = rel.split('/').collect();
    let partition = dirs[..dirs.len().saturating_sub(1)]
        .iter()
        .filter(|d| d.contains('='))
        .copied()
        .collect::<Vec<_>>()
        .join("/");
    (rel, partition)
}

/// The key column: `key` when the files have it as a top-level leaf with
/// statistics, else the first such column.
fn key_column(meta: &ParquetMetaData, key: Option<&str>) -> Option<(usize, String)> {
    let descr = meta.file_metadata().schema_descr();
    let leaves: Vec<(usize, String)> = descr
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.path().parts().len() == 1)
        .map(|(i, c)| (i, c.path().parts()[0].clone()))
        .collect();
    let has_stats = |i: usize| {
        meta.row_groups().iter().any(|rg| {
            rg.column(i)
                .statistics()
                .is_some_and(|s| s.min_bytes_opt().is_some())
        })
    };
    if let Some(k) = key
        && let Some(found) = leaves.iter().find(|(_, n)| n == k)
    {
        return Some(found.clone());
    }
    leaves.into_iter().find(|(i, _)| has_stats(*i))
}

fn decimal_bytes(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let mut v: i128 = if b[0] & 0x80 != 0 { -1 } else { 0 };
    for &x in b {
        v = (v << 8) | i128::from(x);
    }
    Some(v)
}

fn bounds(s: &Statistics, decimal: bool) -> Option<(Bound, Bound)> {
    Some(match s {
        Statistics::Boolean(v) => (
            Bound::Int(i128::from(*v.min_opt()?)),
            Bound::Int(i128::from(*v.max_opt()?)),
        ),
        Statistics::Int32(v) => (
            Bound::Int(i128::from(*v.min_opt()?)),
            Bound::Int(i128::from(*v.max_opt()?)),
        ),
        Statistics::Int64(v) => (
            Bound::Int(i128::from(*v.min_opt()?)),
            Bound::Int(i128::from(*v.max_opt()?)),
        ),
        Statistics::Float(v) => (
            Bound::Float(f64::from(*v.min_opt()?)),
            Bound::Float(f64::from(*v.max_opt()?)),
        ),
        Statistics::Double(v) => (Bound::Float(*v.min_opt()?), Bound::Float(*v.max_opt()?)),
        Statistics::ByteArray(v) if decimal => (
            Bound::Int(decimal_bytes(v.min_opt()?.data())?),
            Bound::Int(decimal_bytes(v.max_opt()?.data())?),
        ),
        Statistics::FixedLenByteArray(v) if decimal => (
            Bound::Int(decimal_bytes(v.min_opt()?.data())?),
            Bound::Int(decimal_bytes(v.max_opt()?.data())?),
        ),
        Statistics::ByteArray(v) => (
            Bound::Bytes(v.min_opt()?.data().to_vec()),
            Bound::Bytes(v.max_opt()?.data().to_vec()),
        ),
        Statistics::FixedLenByteArray(v) => (
            Bound::Bytes(v.min_opt()?.data().to_vec()),
            Bound::Bytes(v.max_opt()?.data().to_vec()),
        ),
        Statistics::Int96(_) => return None,
    })
}

/// The range of column `i` over a file's row groups (`None` when a row
/// group with values has no statistics).
fn file_range(meta: &ParquetMetaData, i: usize, decimal: bool) -> Option<(Bound, Bound)> {
    let mut out: Option<(Bound, Bound)> = None;
    for rg in meta.row_groups() {
        let s = rg.column(i).statistics();
        let all_null = s
            .and_then(Statistics::null_count_opt)
            .is_some_and(|n| n == rg.num_rows() as u64);
        if rg.num_rows() == 0 || all_null {
            continue;
        }
        let (lo, hi) = bounds(s?, decimal)?;
        out = Some(match out {
            None => (lo, hi),
            Some((a, b)) => (if lo < a { lo } else { a }, if hi > b { hi } else { b }),
        });
    }
    out
}

fn label(b: &Bound, dt: &DataType) -> String {
    match b {
        Bound::Int(i) => super::columns::value_label(&strata_infer::Observed::Int(*i), dt),
        Bound::Float(f) => f.to_string(),
        Bound::Bytes(v) => {
            super::columns::value_label(&strata_infer::Observed::Bytes(v.clone()), dt)
        }
    }
}

/// The layout of a table's `files`, its key ranges those of `key` (the
/// spec's sort key) or of the first column with statistics.
///
/// # Errors
///
/// [`Error::Footer`] for a file whose footer cannot be read.
pub(crate) fn layout(
    files: &[String],
    key: Option<&str>,
    store: &StoreConfig,
) -> Result<LayoutReport, Error> {
    let root = root(files);
    let mut reports = Vec::new();
    let mut ranges: Vec<Option<(Bound, Bound)>> = Vec::new();
    let mut key_name: Option<(String, DataType)> = None;
    for f in files {
        let scanner = Scanner::open_location(f, store).map_err(|e| Error::Footer {
            path: f.clone(),
            message: e.to_string(),
        })?;
        let (path, partition) = place(f, &root);
        let mut report = FileReport {
            path,
            partition,
            bytes: 0,
            rows: 0,
            row_groups: Vec::new(),
            key_range: None,
        };
        let mut range = None;
        match scanner.file() {
            ScanFile::Parquet(p) => {
                report.bytes = p.source().size();
                let meta = p.metadata();
                report.rows = meta.file_metadata().num_rows().max(0) as u64;
                report.row_groups = meta
                    .row_groups()
                    .iter()
                    .map(|rg| rg.num_rows().max(0) as u64)
                    .collect();
                let wanted = key_name.as_ref().map(|k| k.0.as_str()).or(key);
                if let Some((i, name)) = key_column(meta, wanted) {
                    let schema = p.schema();
                    let dt = schema
                        .field_with_name(&name)
                        .map(|f| f.data_type().clone())
                        .unwrap_or(DataType::Null);
                    let decimal = matches!(
                        dt,
                        DataType::Decimal32(..)
                            | DataType::Decimal64(..)
                            | DataType::Decimal128(..)
                    );
                    if key_name.is_none() {
                        key_name = Some((name.clone(), dt));
                    }
                    if key_name.as_ref().is_some_and(|k| k.0 == name) {
                        range = file_range(meta, i, decimal);
                    }
                }
            }
            ScanFile::Ipc(i) => {
                report.bytes = i.source().size();
                report.rows = scanner.num_rows().unwrap_or(0);
            }
        }
        ranges.push(range);
        reports.push(report);
    }
    // One axis: numbers where every bound is a number, else ranks.
    if let Some((_, dt)) = &key_name {
        let all: Vec<&(Bound, Bound)> = ranges.iter().flatten().collect();
        let numeric = all
            .iter()
            .all(|(a, b)| !matches!(a, Bound::Bytes(_)) && !matches!(b, Bound::Bytes(_)));
        let pos = |b: &Bound| match b {
            Bound::Int(i) => *i as f64,
            Bound::Float(f) => *f,
            Bound::Bytes(_) => 0.0,
        };
        let bytes_of = |b: &Bound| match b {
            Bound::Int(i) => (i ^ i128::MIN).to_be_bytes().to_vec(),
            Bound::Float(f) => f.to_bits().to_be_bytes().to_vec(),
            Bound::Bytes(v) => v.clone(),
        };
        let owned: Vec<(Vec<u8>, Vec<u8>)> = all
            .iter()
            .map(|(a, b)| (bytes_of(a), bytes_of(b)))
            .collect();
        let borrowed: Vec<(&[u8], &[u8])> = owned
            .iter()
            .map(|(a, b)| (a.as_slice(), b.as_slice()))
            .collect();
        let ranked = KeyRange::ranked(&borrowed);
        let mut k = 0;
        for (r, range) in reports.iter_mut().zip(&ranges) {
            if let Some((a, b)) = range {
                let (lo, hi) = if numeric { (pos(a), pos(b)) } else { ranked[k] };
                k += 1;
                r.key_range = Some(KeyRange {
                    lo,
                    hi,
                    lo_label: label(a, dt),
                    hi_label: label(b, dt),
                });
            }
        }
    }
    let mut partitions: BTreeMap<String, PartitionReport> = BTreeMap::new();
    for r in &reports {
        let p = partitions
            .entry(r.partition.clone())
            .or_insert_with(|| PartitionReport {
                path: r.partition.clone(),
                files: 0,
                bytes: 0,
                rows: 0,
            });
        p.files += 1;
        p.bytes += r.bytes;
        p.rows += r.rows;
    }
    let mut files = reports;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(LayoutReport {
        key: key_name.map(|k| k.0),
        files,
        partitions: partitions.into_values().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hive_directories_are_partitions() {
        let files = vec![
            "/d/orders/month=2024-01/flag=A/part-0.parquet".to_string(),
            "/d/orders/month=2024-02/flag=B/part-0.parquet".to_string(),
        ];
        let r = root(&files);
        assert_eq!(r, "/d/orders");
        assert_eq!(
            place(&files[0], &r),
            (
                "month=2024-01/flag=A/part-0.parquet".to_string(),
                "month=2024-01/flag=A".to_string()
            )
        );
        // One partition only: its directories are still the partition.
        let one = vec![
            "/d/t/k=1/a.parquet".to_string(),
            "/d/t/k=1/b.parquet".to_string(),
        ];
        assert_eq!(root(&one), "/d/t");
        assert_eq!(place(&one[1], "/d/t").1, "k=1");
    }

    #[test]
    fn big_endian_decimals_decode() {
        assert_eq!(decimal_bytes(&[0x01, 0x00]), Some(256));
        assert_eq!(decimal_bytes(&[0xff, 0xfe]), Some(-2));
    }
}
