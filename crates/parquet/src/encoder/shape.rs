//! What the direct encoder knows of one leaf before it writes: the kind
//! of its values ([`Values`]: physical type, and the order statistics
//! use), its levels, its encodings and page limits ([`LeafShape`]), and
//! the error for data of another shape.

use parquet::basic::Type as PhysicalType;

use super::general;
use crate::Error;

/// Rows after which a data page is closed.
pub(super) const PAGE_ROWS: usize = 20_000;
/// Value bytes after which a data page is closed.
const PAGE_BYTES: usize = 1 << 20;
/// Longest byte-string min or max parquet's writer keeps by default.
const DEFAULT_TRUNCATE: Option<usize> = Some(64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Values {
    /// `PLAIN` byte strings.
    Plain,
    /// `RLE_DICTIONARY` with one-byte keys (the fast shape).
    Dictionary,
    /// `PLAIN` little-endian integers of this many bytes (4 or 8), ordered
    /// as signed numbers.
    Int(usize),
    /// As `Int`, ordered as unsigned numbers (the unsigned logical types).
    UInt(usize),
    /// `PLAIN` floats of 4 or 8 bytes, ordered by IEEE 754 total order with
    /// NaN left out of min and max unless every value is NaN.
    Float(usize),
    /// `PLAIN` bit-packed booleans (one byte per value until the page is
    /// encoded).
    Bool,
    /// `RLE_DICTIONARY` byte strings with keys of up to 32 bits (4 bytes
    /// per value until the page is encoded).
    Dict,
    /// `PLAIN` fixed-length byte strings of this many bytes: decimals as
    /// big-endian two's complement, ordered as signed numbers.
    Fixed(usize),
    /// `PLAIN` fixed-length byte strings of this many bytes without a
    /// logical type (`FixedSizeBinary`), ordered as unsigned bytes; their
    /// statistics are never cut.
    FixedBytes(usize),
}

impl Values {
    pub(super) fn physical_type(self) -> PhysicalType {
        match self {
            Values::Plain | Values::Dictionary | Values::Dict => PhysicalType::BYTE_ARRAY,
            Values::Int(4) | Values::UInt(4) => PhysicalType::INT32,
            Values::Int(_) | Values::UInt(_) => PhysicalType::INT64,
            Values::Float(4) => PhysicalType::FLOAT,
            Values::Float(_) => PhysicalType::DOUBLE,
            Values::Bool => PhysicalType::BOOLEAN,
            Values::Fixed(_) | Values::FixedBytes(_) => PhysicalType::FIXED_LEN_BYTE_ARRAY,
        }
    }

    /// Orders two values as their statistics must: strings by bytes,
    /// integers (little-endian) by number, floats by total order.
    pub(super) fn less(self, a: &[u8], b: &[u8]) -> bool {
        match self {
            Values::Plain
            | Values::Dictionary
            | Values::Dict
            | Values::Bool
            | Values::FixedBytes(_) => a < b,
            Values::Int(_) => int_le(a) < int_le(b),
            Values::UInt(_) => uint_le(a) < uint_le(b),
            Values::Float(_) => float_le(a).total_cmp(&float_le(b)).is_lt(),
            Values::Fixed(_) => signed_be_less(a, b),
        }
    }

    pub(super) fn is_nan(self, v: &[u8]) -> bool {
        matches!(self, Values::Float(_)) && float_le(v).is_nan()
    }
}

/// Whether big-endian two's complement `a` is below `b` (both of one
/// length): the sign bit decides, then the bytes as unsigned.
fn signed_be_less(a: &[u8], b: &[u8]) -> bool {
    match (a.first(), b.first()) {
        (Some(&x), Some(&y)) if (x ^ y) & 0x80 != 0 => x & 0x80 != 0,
        _ => a < b,
    }
}

/// A 4- or 8-byte little-endian unsigned integer.
pub(super) fn uint_le(v: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..v.len().min(8)].copy_from_slice(&v[..v.len().min(8)]);
    u64::from_le_bytes(b)
}

/// A 4- or 8-byte little-endian float, as an `f64` (exact for `f32`, and
/// ordered the same by `total_cmp`, NaN signs included).
pub(super) fn float_le(v: &[u8]) -> f64 {
    match v.len() {
        4 => f64::from(f32::from_le_bytes([v[0], v[1], v[2], v[3]])),
        _ => f64::from_le_bytes(v[..8].try_into().unwrap_or([0; 8])),
    }
}

/// A 4- or 8-byte little-endian signed integer.
pub(super) fn int_le(v: &[u8]) -> i64 {
    match v.len() {
        4 => i64::from(i32::from_le_bytes([v[0], v[1], v[2], v[3]])),
        _ => {
            let mut b = [0u8; 8];
            b.copy_from_slice(&v[..8]);
            i64::from_le_bytes(b)
        }
    }
}

/// Where a leaf sits and which definition levels it uses.
#[derive(Debug, Clone)]
pub(super) struct LeafShape {
    pub(super) column: usize,
    pub(super) values: Values,
    pub(super) max_def: u8,
    pub(super) max_rep: u8,
    /// Integers as `DELTA_BINARY_PACKED` instead of `PLAIN`.
    pub(super) delta: bool,
    /// Floats as `BYTE_STREAM_SPLIT` instead of `PLAIN`.
    pub(super) split: bool,
    /// Byte strings as `DELTA_LENGTH_BYTE_ARRAY` instead of `PLAIN`.
    pub(super) lengths: bool,
    /// Byte strings as `DELTA_BYTE_ARRAY` (prefixes shared with the value
    /// before, then suffixes) instead of `PLAIN`.
    pub(super) prefixes: bool,
    /// The path to a leaf that is not a top-level integer or `UInt8`
    /// dictionary column (the fast shape).
    pub(super) general: Option<general::Path>,
    /// Longest byte-string min or max kept in chunk statistics and in the
    /// column index (parquet's writer properties).
    pub(super) truncate: Option<usize>,
    pub(super) index_truncate: Option<usize>,
    /// Rows and value bytes after which a data page is closed.
    pub(super) page_rows: usize,
    pub(super) page_bytes: usize,
    /// Byte strings, integers and floats `RLE_DICTIONARY` while the
    /// chunk's dictionary stays under `dict_limit` bytes (then `PLAIN`, or
    /// the encoding set above, for the rest of the chunk); integers and
    /// floats also leave it when their first page would not shrink.
    pub(super) dictionary: bool,
    pub(super) dict_limit: usize,
    /// A Bloom filter per chunk for this many distinct values at this
    /// false-positive rate (folded smaller when fewer come).
    pub(super) bloom: Option<(u64, f64)>,
    /// Whether a chunk of dictionary pages alone keeps its filter.
    pub(super) bloom_dictionary: bool,
    /// The column's codec.
    pub(super) codec: crate::Compression,
    /// Which statistics the chunk keeps: none, the chunk's, or also each
    /// page's (the column index).
    pub(super) statistics: parquet::file::properties::EnabledStatistics,
    /// Whether data pages are written as `DATA_PAGE_V2` (the writer
    /// version 2.0): levels stored apart from the values, uncompressed and
    /// without length prefixes, and the page's null and row counts in its
    /// header.
    pub(super) page_v2: bool,
}

impl LeafShape {
    /// A leaf of column `column` with `(max_def, max_rep)` levels, written
    /// `PLAIN` with the default page limits until
    /// [`Shredder::use_encodings`](super::Shredder::use_encodings) applies
    /// the writer's properties.
    pub(super) fn new(
        column: usize,
        values: Values,
        (max_def, max_rep): (u8, u8),
        general: Option<general::Path>,
    ) -> Self {
        LeafShape {
            column,
            values,
            max_def,
            max_rep,
            delta: false,
            split: false,
            lengths: false,
            prefixes: false,
            general,
            truncate: DEFAULT_TRUNCATE,
            index_truncate: DEFAULT_TRUNCATE,
            page_rows: PAGE_ROWS,
            page_bytes: PAGE_BYTES,
            dictionary: false,
            dict_limit: 0,
            bloom: None,
            bloom_dictionary: true,
            codec: crate::Compression::None,
            statistics: parquet::file::properties::EnabledStatistics::Page,
            page_v2: false,
        }
    }

    /// Whether the pages' byte strings are kept as
    /// `DELTA_LENGTH_BYTE_ARRAY` stores them: the bytes alone in `values`,
    /// the lengths in `lengths` (a leaf with its dictionary on starts
    /// `PLAIN` and converts the pages it writes after falling back).
    pub(super) fn split_lengths(&self) -> bool {
        self.lengths && !self.dictionary
    }
}

pub(super) fn unsupported(what: &str) -> Error {
    Error::InvalidConfig(format!("direct Parquet encoder: expected {what}"))
}
