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

/// Knots of the inverse CDF of a YCSB rowset's width, as a multiple of
/// the median width: (quantile, width / median), read off Kudu's YCSB
/// rowsets (10% of them under 0.15x the median, 1% over 6.5x).
const YCSB_WIDTH_QUANTILES: [(f64, f64); 9] = [
    (0.0, 0.001),
    (0.1, 0.145),
    (0.25, 0.33),
    (0.5, 1.0),
    (0.75, 1.17),
    (0.9, 1.31),
    (0.98, 1.5),
    (0.99, 6.5),
    (1.0, 7.7),
];

/// A synthetic tablet shaped like Kudu's YCSB rowsets, at any size: `n`
/// rowsets of 32 MiB over keys `user%019d`, placed uniformly at random,
/// with widths drawn from the YCSB file's width distribution and scaled
/// so that the average height is about 40, as in the file. The same `n`
/// and `seed` give the same rowsets.
pub fn ycsb_like(n: usize, seed: u64) -> Vec<RowsetInput> {
    const SPACE: f64 = 1e19;
    const HEIGHT: f64 = 40.0;
    let mut state = seed;
    let mut unit = move || {
        // SplitMix64 from `seed`, top 53 bits as a fraction in [0, 1).
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        (strata_gen::rng::mix64(state) >> 11) as f64 / (1u64 << 53) as f64
    };
    let width_factor = |u: f64| {
        let k = YCSB_WIDTH_QUANTILES
            .windows(2)
            .position(|w| u < w[1].0)
            .unwrap_or(YCSB_WIDTH_QUANTILES.len() - 2);
        let ((q0, w0), (q1, w1)) = (YCSB_WIDTH_QUANTILES[k], YCSB_WIDTH_QUANTILES[k + 1]);
        w0 + (w1 - w0) * (u - q0) / (q1 - q0)
    };
    // Mean of the factor over the piecewise-linear quantile function.
    let mean_factor: f64 = YCSB_WIDTH_QUANTILES
        .windows(2)
        .map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0)
        .sum();
    let median = HEIGHT / (n.max(1) as f64 * mean_factor);
    (0..n)
        .map(|_| {
            let width = (median * width_factor(unit())).min(1.0);
            let lo = unit() * (1.0 - width);
            let key = |f: f64| format!("user{:019}", (f * SPACE) as u64).into_bytes();
            RowsetInput::new(32 * MIB, key(lo), key(lo + width))
        })
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
    fn ycsb_like_is_seeded_and_about_40_high() {
        let a = ycsb_like(2_000, 7);
        assert_eq!(a, ycsb_like(2_000, 7));
        assert_ne!(a, ycsb_like(2_000, 8));
        assert!(
            a.iter()
                .all(|r| r.min_key <= r.max_key && r.min_key.len() == 23)
        );
        let h = crate::planner::average_height(&a);
        assert!((30.0..50.0).contains(&h), "average height {h}");
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
