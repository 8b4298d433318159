//! What a table's metadata says of each data file, read from its Parquet
//! footer: rows, bytes, row-group offsets, and per leaf column its field
//! id, compressed bytes, value and null counts, and exact minimum and
//! maximum over all row groups.

use std::{fs::File, path::Path};

use parquet::{
    basic::{LogicalType, Type as PhysicalType},
    file::{
        metadata::{ParquetMetaData, ParquetMetaDataReader},
        statistics::Statistics,
    },
};

use crate::Error;

/// One data file's facts.
#[derive(Debug, Clone)]
pub struct FileFacts {
    /// Rows in the file.
    pub rows: u64,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The byte offset where each row group starts.
    pub split_offsets: Vec<i64>,
    /// Each leaf column, in the file's column order.
    pub leaves: Vec<LeafFacts>,
}

/// One leaf column of a data file.
#[derive(Debug, Clone)]
pub struct LeafFacts {
    /// Its path in the Parquet schema (`["l_shipdate"]`, `["tags", "list",
    /// "element"]`).
    pub path: Vec<String>,
    /// Its field id, when the file's schema carries one.
    pub field_id: Option<i32>,
    /// Whether it repeats (inside a list or a map).
    pub repeated: bool,
    /// Compressed bytes of its column chunks.
    pub compressed_bytes: u64,
    /// Values, nulls included (Parquet's value count).
    pub values: u64,
    /// Nulls, when every row group's statistics count them.
    pub nulls: Option<u64>,
    /// The smallest value of all row groups, when each one knows its own
    /// exactly (a truncated statistic is left out).
    pub min: Option<Bound>,
    /// The largest, likewise.
    pub max: Option<Bound>,
}

/// A column's minimum or maximum, as the file's statistics hold it.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// A boolean.
    Bool(bool),
    /// An integer of up to 64 bits (dates, times, timestamps, decimals
    /// stored as integers: their raw value).
    Int(i64),
    /// A 32-bit float.
    Float(f32),
    /// A 64-bit float.
    Double(f64),
    /// A decimal stored as bytes: its unscaled value.
    Decimal(i128),
    /// Strings and binary values: their bytes.
    Bytes(Vec<u8>),
}

impl Bound {
    /// Orders two bounds of one column; `None` for a NaN or mixed kinds.
    fn cmp(&self, other: &Bound) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Bound::Bool(a), Bound::Bool(b)) => Some(a.cmp(b)),
            (Bound::Int(a), Bound::Int(b)) => Some(a.cmp(b)),
            (Bound::Float(a), Bound::Float(b)) => a.partial_cmp(b),
            (Bound::Double(a), Bound::Double(b)) => a.partial_cmp(b),
            (Bound::Decimal(a), Bound::Decimal(b)) => Some(a.cmp(b)),
            (Bound::Bytes(a), Bound::Bytes(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

/// Reads the facts of the Parquet file at `path`.
///
/// # Errors
/// [`Error::Io`] when it does not open; [`Error::Parquet`] when its
/// footer does not read.
pub fn read_file(path: &Path) -> Result<FileFacts, Error> {
    let f = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let bytes = f
        .metadata()
        .map_err(|e| Error::io("read the size of", path, e))?
        .len();
    let md = ParquetMetaDataReader::new()
        .parse_and_finish(&f)
        .map_err(|source| Error::Parquet {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(facts(&md, bytes))
}

/// The facts of a file of `bytes` bytes whose footer is `md`.
pub fn facts(md: &ParquetMetaData, bytes: u64) -> FileFacts {
    let schema = md.file_metadata().schema_descr();
    let groups = md.row_groups();
    let split_offsets = groups
        .iter()
        .map(|g| {
            g.columns()
                .iter()
                .map(|c| c.dictionary_page_offset().unwrap_or(c.data_page_offset()))
                .min()
                .unwrap_or(0)
        })
        .collect();
    let leaves = (0..schema.num_columns())
        .map(|i| {
            let col = schema.column(i);
            let info = col.self_type().get_basic_info();
            let unsigned = matches!(
                info.logical_type_ref(),
                Some(LogicalType::Integer(int)) if !int.is_signed
            );
            let decimal = matches!(info.logical_type_ref(), Some(LogicalType::Decimal { .. }));
            let mut leaf = LeafFacts {
                path: col.path().parts().to_vec(),
                field_id: info.has_id().then(|| info.id()),
                repeated: col.max_rep_level() > 0,
                compressed_bytes: 0,
                values: 0,
                nulls: Some(0),
                min: None,
                max: None,
            };
            let mut bounds_known = !groups.is_empty();
            for g in groups {
                let c = g.column(i);
                leaf.compressed_bytes += c.compressed_size().max(0) as u64;
                leaf.values += c.num_values().max(0) as u64;
                let stats = c.statistics();
                leaf.nulls = match (leaf.nulls, stats.and_then(Statistics::null_count_opt)) {
                    (Some(n), Some(m)) => Some(n + m),
                    _ => None,
                };
                let Some(stats) = stats else {
                    bounds_known = false;
                    continue;
                };
                if stats.min_bytes_opt().is_none() {
                    // A row group of nulls only: no values to bound.
                    continue;
                }
                let (lo, hi) = (
                    bound(stats, true, col.physical_type(), unsigned, decimal),
                    bound(stats, false, col.physical_type(), unsigned, decimal),
                );
                match (lo, hi) {
                    (Some(lo), Some(hi)) => {
                        merge(
                            &mut leaf.min,
                            lo,
                            std::cmp::Ordering::Less,
                            &mut bounds_known,
                        );
                        merge(
                            &mut leaf.max,
                            hi,
                            std::cmp::Ordering::Greater,
                            &mut bounds_known,
                        );
                    }
                    _ => bounds_known = false,
                }
            }
            if !bounds_known {
                leaf.min = None;
                leaf.max = None;
            }
            leaf
        })
        .collect();
    FileFacts {
        rows: md.file_metadata().num_rows().max(0) as u64,
        bytes,
        split_offsets,
        leaves,
    }
}

/// Folds `next` into `acc`, keeping the one that is `keep` of the two.
fn merge(acc: &mut Option<Bound>, next: Bound, keep: std::cmp::Ordering, known: &mut bool) {
    match acc {
        None => *acc = Some(next),
        Some(a) => match next.cmp(a) {
            Some(o) if o == keep => *acc = Some(next),
            Some(_) => {}
            None => *known = false,
        },
    }
}

/// A row group's exact minimum (`min`) or maximum of a column; `None`
/// when the statistic is missing or inexact (truncated).
fn bound(
    stats: &Statistics,
    min: bool,
    physical: PhysicalType,
    unsigned: bool,
    decimal: bool,
) -> Option<Bound> {
    let exact = if min {
        stats.min_is_exact()
    } else {
        stats.max_is_exact()
    };
    if !exact {
        return None;
    }
    fn pick<T>(min: bool, lo: T, hi: T) -> T {
        if min { lo } else { hi }
    }
    Some(match stats {
        Statistics::Boolean(s) => Bound::Bool(*pick(min, s.min_opt()?, s.max_opt()?)),
        Statistics::Int32(s) => {
            let v = *pick(min, s.min_opt()?, s.max_opt()?);
            Bound::Int(if unsigned {
                i64::from(v as u32)
            } else {
                i64::from(v)
            })
        }
        Statistics::Int64(s) => {
            let v = *pick(min, s.min_opt()?, s.max_opt()?);
            if unsigned && v < 0 {
                // A u64 past i64::MAX has no bound here.
                return None;
            }
            Bound::Int(v)
        }
        Statistics::Float(s) => Bound::Float(*pick(min, s.min_opt()?, s.max_opt()?)),
        Statistics::Double(s) => Bound::Double(*pick(min, s.min_opt()?, s.max_opt()?)),
        Statistics::ByteArray(s) => {
            let b = pick(min, s.min_opt()?, s.max_opt()?).data();
            if decimal {
                Bound::Decimal(signed_be(b)?)
            } else {
                Bound::Bytes(b.to_vec())
            }
        }
        Statistics::FixedLenByteArray(s) => {
            let b = pick(min, s.min_opt()?, s.max_opt()?).data();
            if decimal {
                Bound::Decimal(signed_be(b)?)
            } else {
                Bound::Bytes(b.to_vec())
            }
        }
        Statistics::Int96(_) => return None,
    })
    .filter(|_| physical != PhysicalType::INT96)
}

/// A big-endian two's-complement integer of up to 16 bytes.
pub(crate) fn signed_be(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut full = [fill; 16];
    full[16 - b.len()..].copy_from_slice(b);
    Some(i128::from_be_bytes(full))
}

#[cfg(test)]
mod tests {
    use super::signed_be;

    #[test]
    fn big_endian_decimals_read_with_their_sign() {
        assert_eq!(signed_be(&[0x01, 0x00]), Some(256));
        assert_eq!(signed_be(&[0xff]), Some(-1));
        assert_eq!(signed_be(&[0xff, 0x00]), Some(-256));
        assert_eq!(signed_be(&[]), None);
    }
}
