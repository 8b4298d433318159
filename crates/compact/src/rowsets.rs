//! Rowset inputs: what the planner needs to know about each file (its size
//! and its key range), Kudu's TSV test format, and synthetic shapes for
//! tests and benchmarks.

use serde::{Deserialize, Serialize};

use crate::Error;

/// One input to the planner: a sorted file (Kudu: a rowset) covering the
/// key range `[min_key, max_key]`, compared byte-wise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowsetInput {
    /// On-disk size in bytes.
    pub size_bytes: u64,
    /// Smallest key in the file.
    pub min_key: Vec<u8>,
    /// Largest key in the file; must not sort before `min_key`.
    pub max_key: Vec<u8>,
}

impl RowsetInput {
    /// A rowset of `size_bytes` bytes covering `[min_key, max_key]`.
    pub fn new(size_bytes: u64, min_key: impl Into<Vec<u8>>, max_key: impl Into<Vec<u8>>) -> Self {
        Self {
            size_bytes,
            min_key: min_key.into(),
            max_key: max_key.into(),
        }
    }
}

/// Bytes in one MB, as Kudu's loader counts them.
const MIB: u64 = 1024 * 1024;

/// Size of every synthetic rowset, the size of Kudu's `MockDiskRowSet`
/// (under 1 MiB, so the planner's weight floor makes it 1 MB).
pub const SYNTHETIC_SIZE_BYTES: u64 = 1_000_000;

/// Parses Kudu's rowset TSV: one `size_mb<TAB>min_key<TAB>max_key` line per
/// rowset; empty lines and lines starting with `#` are skipped.
///
/// `size_mb` must be an integer of at least 1; the rowset's size is
/// `size_mb * 1024 * 1024` bytes. `min_key` must not sort after `max_key`
/// byte-wise. A trailing `\r` is ignored.
///
/// # Errors
///
/// The first malformed line, by its 1-based number: [`Error::FieldCount`],
/// [`Error::BadSize`], [`Error::ZeroSize`] or [`Error::KeyOrder`].
pub fn parse_tsv(text: &str) -> Result<Vec<RowsetInput>, Error> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.strip_suffix('\r').unwrap_or(raw);
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = l.split('\t').collect();
        let [size, min_key, max_key] = fields[..] else {
            return Err(Error::FieldCount {
                line,
                found: fields.len(),
            });
        };
        let bad = || Error::BadSize {
            line,
            text: size.to_owned(),
        };
        if size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let size_mb: u64 = size.parse().map_err(|_| bad())?;
        if size_mb == 0 {
            return Err(Error::ZeroSize { line });
        }
        let size_bytes = size_mb.checked_mul(MIB).ok_or_else(bad)?;
        if min_key.as_bytes() > max_key.as_bytes() {
            return Err(Error::KeyOrder { line });
        }
        out.push(RowsetInput::new(size_bytes, min_key, max_key));
    }
    Ok(out)
}

fn key(v: u64) -> Vec<u8> {
    format!("{v:010}").into_bytes()
}

/// Kudu's `TinyOverlap` shape: rowset `i` covers `[10000 i, 10000 i + 11000]`
/// (keys `%010d`), so each overlaps its neighbour by a tenth; 1,000,000
/// bytes each.
pub fn tiny_overlap(n: usize) -> Vec<RowsetInput> {
    (0..n as u64)
        .map(|i| {
            RowsetInput::new(
                SYNTHETIC_SIZE_BYTES,
                key(10_000 * i),
                key(10_000 * i + 11_000),
            )
        })
        .collect()
}

/// Kudu's `SignificantOverlap` shape: rowset `i` covers
/// `[10000 i, 10000 (i + 2)]` (keys `%010d`), so every key is in two
/// rowsets; 1,000,000 bytes each.
pub fn significant_overlap(n: usize) -> Vec<RowsetInput> {
    (0..n as u64)
        .map(|i| RowsetInput::new(SYNTHETIC_SIZE_BYTES, key(10_000 * i), key(10_000 * (i + 2))))
        .collect()
}

/// Kudu's `NonOverlapping` shape: rowset `i` covers `[2 i, 2 i + 1]` (keys
/// `%010d`), disjoint from every other; 1,000,000 bytes each.
pub fn non_overlapping(n: usize) -> Vec<RowsetInput> {
    (0..n as u64)
        .map(|i| RowsetInput::new(SYNTHETIC_SIZE_BYTES, key(2 * i), key(2 * i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_skips_comments() {
        let t = "# header\n\n32\tuser1\tuser2\n1\ta\ta\r\n";
        let r = parse_tsv(t).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].size_bytes, 32 * MIB);
        assert_eq!(r[0].min_key, b"user1");
        assert_eq!(r[1].max_key, b"a");
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("# c\n1\ta\n", Error::FieldCount { line: 2, found: 2 }),
            ("1\ta\tb\tc\n", Error::FieldCount { line: 1, found: 4 }),
            ("1\ta\tb\n0\ta\tb\n", Error::ZeroSize { line: 2 }),
            (
                "\n\n1.5\ta\tb\n",
                Error::BadSize {
                    line: 3,
                    text: "1.5".into(),
                },
            ),
            (
                "-1\ta\tb\n",
                Error::BadSize {
                    line: 1,
                    text: "-1".into(),
                },
            ),
            (
                "99999999999999999999\ta\tb\n",
                Error::BadSize {
                    line: 1,
                    text: "99999999999999999999".into(),
                },
            ),
            ("1\tb\ta\n", Error::KeyOrder { line: 1 }),
        ];
        for (text, want) in cases {
            let got = parse_tsv(text).unwrap_err();
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{text:?}");
            let line = match want {
                Error::FieldCount { line, .. }
                | Error::BadSize { line, .. }
                | Error::ZeroSize { line }
                | Error::KeyOrder { line } => line,
                _ => unreachable!(),
            };
            assert!(
                got.to_string().starts_with(&format!("line {line}:")),
                "{got}"
            );
        }
    }

    #[test]
    fn synthetic_shapes() {
        let t = tiny_overlap(3);
        assert_eq!(t[1].min_key, b"0000010000");
        assert_eq!(t[1].max_key, b"0000021000");
        let s = significant_overlap(2);
        assert_eq!(s[1].max_key, b"0000030000");
        let n = non_overlapping(2);
        assert_eq!(n[1].min_key, b"0000000002");
        assert_eq!(n[1].max_key, b"0000000003");
        assert!(
            t.iter()
                .chain(&s)
                .chain(&n)
                .all(|r| r.size_bytes == 1_000_000)
        );
    }
}
