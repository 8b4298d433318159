//! strata's direct Arrow-to-Parquet column encoder.
//!
//! parquet's `ArrowColumnWriter` handles every Arrow type, and pays for it:
//! levels are computed by a general tree walk, values pass through generic
//! encoders, every string is compared twice for statistics. This module
//! writes the same Parquet directly, for every type the spec format has:
//! boolean, 8- to 64-bit signed and unsigned integers (unsigned ones
//! ordered as such in statistics), float32/64, `Decimal128` of every
//! precision (stored as parquet's writer stores it: `INT32` up to 9 digits,
//! `INT64` up to 18, else big-endian `FIXED_LEN_BYTE_ARRAY` of the fewest
//! bytes that hold the precision, ordered as signed numbers and never cut
//! in statistics), date32, time and duration,
//! timestamps of every unit with or without a time zone, utf8, large_utf8,
//! binary and large binary, dictionaries of strings with any key width,
//! and structs, lists, large lists and maps nested to any depth, with
//! nulls at every level.
//!
//! Two paths share the page, statistics and chunk code:
//!
//! * the fast shape (a top-level `Dictionary<UInt8, Utf8>`, `Int32` or
//!   `Int64` column) has a hand-written loop, value by value;
//! * every other leaf walks its path (the `general` module): definition and
//!   repetition levels per the Dremel rules, and present values as runs,
//!   so flat columns and contiguous list entries are copied in one piece,
//!   and byte strings are interned as they are written.
//!
//! Pages are version 1 data pages, compressed with the run's codec
//! (Snappy, `LZ4_RAW` or zstd) when one is set: levels as bit-packed
//! RLE-hybrid runs; strings `PLAIN`, or `DELTA_LENGTH_BYTE_ARRAY` where
//! the properties ask for it (lengths delta-encoded, then the bytes: a run
//! of present values is one copy); floats `PLAIN` or `BYTE_STREAM_SPLIT`
//! likewise; wide decimals `PLAIN`; booleans `PLAIN`
//! (bit-packed); integers `PLAIN`, or `DELTA_BINARY_PACKED` where the
//! properties ask for it; dictionary columns `RLE_DICTIONARY` with one
//! `PLAIN` dictionary page per column chunk. Pages end on row boundaries
//! after the properties' row count (20,000 by default) or page size (1 MiB)
//! of values, and carry exact min, max, null and NaN counts in the column
//! index; the offset index records every page. Statistics follow parquet's
//! writer: byte strings cut to 64 bytes (at a character boundary for
//! strings, the max raised to stay an upper bound), floats by IEEE 754
//! total order without NaN. Page headers are written here (Thrift compact
//! protocol, a few fixed fields), so a page's values are copied once, from
//! the batch into the chunk; an uncompressed `PLAIN` page of a required,
//! unnested fixed-width leaf is not copied at all: its body is a slice of
//! the batch's values buffer ([`ColumnChunk`]), copied only by the write
//! that puts it in the file. The chunks are handed to parquet's
//! `SerializedRowGroupWriter::append_column`, so the file footer, schema
//! and Arrow schema metadata are parquet's own; the footer's `created_by`
//! names strata ([`CREATED_BY`]).
//!
//! Unless turned off ([`Shredder::with_page_checksums`]), every page header
//! (dictionary pages too) carries the CRC-32 of the page's stored body, the
//! `crc` field of Parquet's `PageHeader`: a reader that checks it (strata's
//! readers do, through parquet's `crc` feature) tells a damaged page from
//! data. Parquet has no checksum for the footer or the page indexes.
//!
//! [`Shredder::for_properties`] decides per schema and writer properties
//! (the one rule every strata writer uses); types outside the list above
//! (`Decimal256`, float16, views, fixed-size binary) and mixed codecs go
//! through `ArrowColumnWriter`. The differential tests (`tests/
//! differential.rs`, and their pyarrow and DuckDB half) write random specs
//! both ways and require identical rows and statistics.

use arrow_array::{
    Array, ArrayRef, DictionaryArray, RecordBatch, StringArray, cast::AsArray, types::UInt8Type,
};
use arrow_schema::{DataType, Field, Schema};
use parquet::{
    basic::{Compression as PqCompression, Encoding, Type as PhysicalType, ZstdLevel},
    column::writer::ColumnCloseResult,
    data_type::ByteArray,
    file::{
        metadata::{ColumnChunkMetaData, ColumnIndexBuilder, OffsetIndexBuilder},
        statistics::{Statistics, ValueStatistics},
    },
    schema::types::{ColumnDescPtr, SchemaDescriptor},
};

use std::sync::{Arc, Mutex};

use crate::{Compression, Error};

mod chunk;
mod dict;
mod general;

pub use chunk::{ChunkRead, ColumnChunk};

/// Rows after which a data page is closed.
const PAGE_ROWS: usize = 20_000;
/// Value bytes after which a data page is closed.
const PAGE_BYTES: usize = 1 << 20;
/// Rows handled between two checks of the page limits.
const CHUNK_ROWS: usize = 1024;
/// Values per bit-packed run: 63 groups of 8, so the run header is one byte.
const RUN: usize = 504;
/// Longest byte-string min or max parquet's writer keeps by default.
const DEFAULT_TRUNCATE: Option<usize> = Some(64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Values {
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
    fn physical_type(self) -> PhysicalType {
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
    fn less(self, a: &[u8], b: &[u8]) -> bool {
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

    fn is_nan(self, v: &[u8]) -> bool {
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
fn uint_le(v: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..v.len().min(8)].copy_from_slice(&v[..v.len().min(8)]);
    u64::from_le_bytes(b)
}

/// A 4- or 8-byte little-endian float, as an `f64` (exact for `f32`, and
/// ordered the same by `total_cmp`, NaN signs included).
fn float_le(v: &[u8]) -> f64 {
    match v.len() {
        4 => f64::from(f32::from_le_bytes([v[0], v[1], v[2], v[3]])),
        _ => f64::from_le_bytes(v[..8].try_into().unwrap_or([0; 8])),
    }
}

/// A 4- or 8-byte little-endian signed integer.
fn int_le(v: &[u8]) -> i64 {
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
struct LeafShape {
    column: usize,
    values: Values,
    max_def: u8,
    max_rep: u8,
    /// Integers as `DELTA_BINARY_PACKED` instead of `PLAIN`.
    delta: bool,
    /// Floats as `BYTE_STREAM_SPLIT` instead of `PLAIN`.
    split: bool,
    /// Byte strings as `DELTA_LENGTH_BYTE_ARRAY` instead of `PLAIN`.
    lengths: bool,
    /// The path to a leaf that is not a top-level integer or `UInt8`
    /// dictionary column (the fast shape).
    general: Option<general::Path>,
    /// Longest byte-string min or max kept in chunk statistics and in the
    /// column index (parquet's writer properties).
    truncate: Option<usize>,
    index_truncate: Option<usize>,
    /// Rows and value bytes after which a data page is closed.
    page_rows: usize,
    page_bytes: usize,
    /// Byte strings `RLE_DICTIONARY` while the chunk's dictionary stays
    /// under `dict_limit` bytes (then `PLAIN` for the rest of the chunk).
    dictionary: bool,
    dict_limit: usize,
}

impl LeafShape {
    /// A leaf of column `column` with `(max_def, max_rep)` levels, written
    /// `PLAIN` with the default page limits until
    /// [`Shredder::use_encodings`] applies the writer's properties.
    fn new(
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
            general,
            truncate: DEFAULT_TRUNCATE,
            index_truncate: DEFAULT_TRUNCATE,
            page_rows: PAGE_ROWS,
            page_bytes: PAGE_BYTES,
            dictionary: false,
            dict_limit: 0,
        }
    }

    /// Whether the pages' byte strings are kept as
    /// `DELTA_LENGTH_BYTE_ARRAY` stores them: the bytes alone in `values`,
    /// the lengths in `lengths` (a leaf with its dictionary on starts
    /// `PLAIN` and converts the pages it writes after falling back).
    fn split_lengths(&self) -> bool {
        self.lengths && !self.dictionary
    }
}

/// The `created_by` of files whose pages strata's encoder wrote, so that
/// readers (and bug reports) name the right writer.
pub const CREATED_BY: &str = concat!("strata version ", env!("CARGO_PKG_VERSION"));

/// `props` for a file the direct encoder writes: the same settings, with
/// [`CREATED_BY`] as the writer's name.
pub fn direct_properties(
    props: parquet::file::properties::WriterProperties,
) -> parquet::file::properties::WriterProperties {
    props
        .into_builder()
        .set_created_by(CREATED_BY.into())
        .build()
}

/// Encodes the row groups of one schema.
#[derive(Debug, Clone)]
pub struct Shredder {
    leaves: Vec<LeafShape>,
    descrs: Vec<ColumnDescPtr>,
    codec: Compression,
    checksums: bool,
}

fn leaf_values(t: &DataType) -> Option<Values> {
    match t {
        DataType::Dictionary(k, v) if **k == DataType::UInt8 && **v == DataType::Utf8 => {
            Some(Values::Dictionary)
        }
        DataType::Int32 => Some(Values::Int(4)),
        DataType::Int64 => Some(Values::Int(8)),
        _ => None,
    }
}

/// The codec every column of `props` uses, when they all use the same one
/// and the direct encoder has it.
fn common_codec(
    props: &parquet::file::properties::WriterProperties,
    parquet: &SchemaDescriptor,
) -> Option<Compression> {
    let mut codec = None;
    for c in parquet.columns() {
        let this = match props.compression(c.path()) {
            PqCompression::UNCOMPRESSED => Compression::None,
            PqCompression::SNAPPY => Compression::Snappy,
            PqCompression::LZ4_RAW => Compression::Lz4,
            PqCompression::ZSTD(l) => Compression::Zstd(l.compression_level()),
            _ => return None,
        };
        match codec {
            None => codec = Some(this),
            Some(c) if c != this => return None,
            Some(_) => {}
        }
    }
    codec
}

impl Shredder {
    /// The direct encoder for files of `schema` written with `props`: the
    /// one rule every Parquet writer of strata uses to choose it. `None`
    /// when the columns do not all use one codec the direct encoder has, or
    /// some column has a shape it does not handle; integer columns that
    /// `props` gives `DELTA_BINARY_PACKED` use it.
    pub fn for_properties(
        schema: &Schema,
        parquet: &SchemaDescriptor,
        props: &parquet::file::properties::WriterProperties,
    ) -> Option<Shredder> {
        let mut shredder = Shredder::supports(schema, parquet, common_codec(props, parquet)?)?;
        shredder.use_encodings(props);
        Some(shredder)
    }

    /// The shredder for `schema`, or `None` when some column has a shape it
    /// does not handle.
    pub fn supports(
        schema: &Schema,
        parquet: &SchemaDescriptor,
        codec: Compression,
    ) -> Option<Shredder> {
        let mut leaves = Vec::new();
        for (column, field) in schema.fields().iter().enumerate() {
            match Self::fast_shape(column, field) {
                Some(fast) => leaves.push(fast),
                None => {
                    for path in general::paths(field)? {
                        let d = parquet.columns().get(leaves.len())?;
                        leaves.push(Self::general_shape(column, path, d)?);
                    }
                }
            }
        }
        if leaves.len() != parquet.num_columns() {
            return None;
        }
        let descrs: Vec<ColumnDescPtr> = (0..leaves.len()).map(|i| parquet.column(i)).collect();
        for (leaf, d) in leaves.iter().zip(&descrs) {
            if d.max_def_level() != i16::from(leaf.max_def)
                || d.max_rep_level() != i16::from(leaf.max_rep)
                || d.physical_type() != leaf.values.physical_type()
                || (leaf.general.is_none()
                    && matches!(leaf.values, Values::Int(_))
                    && d.logical_type_ref().is_some())
            {
                return None;
            }
        }
        Some(Shredder {
            leaves,
            descrs,
            codec,
            checksums: true,
        })
    }

    /// The shape of a leaf reached by `path`, whose Parquet column is `d`:
    /// its values ordered as `d`'s sort order says.
    fn general_shape(column: usize, path: general::Path, d: &ColumnDescPtr) -> Option<LeafShape> {
        use general::Source;
        let unsigned = d.sort_order() == parquet::basic::SortOrder::UNSIGNED;
        let values = match (d.physical_type(), path.source) {
            (PhysicalType::BOOLEAN, Source::Bool) => Values::Bool,
            (PhysicalType::INT32, Source::I8 | Source::I16 | Source::U8 | Source::U16)
            | (PhysicalType::INT32, Source::Copy(4))
                if unsigned =>
            {
                Values::UInt(4)
            }
            (PhysicalType::INT32, Source::I8 | Source::I16 | Source::U8 | Source::U16)
            | (PhysicalType::INT32, Source::Copy(4)) => Values::Int(4),
            (PhysicalType::INT64, Source::Copy(8)) if unsigned => Values::UInt(8),
            (PhysicalType::INT64, Source::Copy(8)) => Values::Int(8),
            (PhysicalType::FLOAT, Source::Copy(4)) => Values::Float(4),
            (PhysicalType::DOUBLE, Source::Copy(8)) => Values::Float(8),
            (PhysicalType::BYTE_ARRAY, Source::Bytes | Source::LargeBytes) => Values::Plain,
            (PhysicalType::BYTE_ARRAY, Source::Dict) => Values::Dict,
            (PhysicalType::INT32, Source::Decimal32) => Values::Int(4),
            (PhysicalType::INT64, Source::Decimal64) => Values::Int(8),
            (
                PhysicalType::FIXED_LEN_BYTE_ARRAY,
                Source::DecimalFixed(n) | Source::Decimal256(n),
            ) if usize::try_from(d.type_length()) == Ok(n) => Values::Fixed(n),
            (PhysicalType::FIXED_LEN_BYTE_ARRAY, Source::FixedBytes(n))
                if usize::try_from(d.type_length()) == Ok(n) && d.logical_type_ref().is_none() =>
            {
                Values::FixedBytes(n)
            }
            _ => return None,
        };
        Some(LeafShape::new(
            column,
            values,
            (path.max_def, path.max_rep),
            Some(path),
        ))
    }

    /// The fast shape of `field`: a top-level integer or `UInt8`
    /// dictionary column, written value by value without a walk. Every
    /// other leaf takes the general path: byte strings there are interned
    /// as written and lists' entries copied in runs, which measured faster
    /// than the fast shapes these once had (`contacts` 259.6M -> 245.4M
    /// instructions, `lineitem` 519.3M -> 450.3M; cachegrind, 300k rows).
    fn fast_shape(column: usize, field: &Field) -> Option<LeafShape> {
        let values = leaf_values(field.data_type())?;
        Some(LeafShape::new(
            column,
            values,
            (u8::from(field.is_nullable()), 0),
            None,
        ))
    }

    /// Takes the encoding of integer and float leaves from `props`:
    /// integers whose column is set to `DELTA_BINARY_PACKED` are written
    /// so (suits sorted columns: small deltas pack into a few bits), floats
    /// set to `BYTE_STREAM_SPLIT` so (their bytes of each significance
    /// together, which a codec compresses better and faster); the rest
    /// `PLAIN`.
    fn use_encodings(&mut self, props: &parquet::file::properties::WriterProperties) {
        for (leaf, descr) in self.leaves.iter_mut().zip(&self.descrs) {
            leaf.delta = matches!(leaf.values, Values::Int(_) | Values::UInt(_))
                && props.encoding(descr.path()) == Some(Encoding::DELTA_BINARY_PACKED);
            leaf.split = matches!(leaf.values, Values::Float(_))
                && props.encoding(descr.path()) == Some(Encoding::BYTE_STREAM_SPLIT);
            leaf.lengths = leaf.values == Values::Plain
                && props.encoding(descr.path()) == Some(Encoding::DELTA_LENGTH_BYTE_ARRAY);
            leaf.truncate = props.statistics_truncate_length();
            leaf.index_truncate = props.column_index_truncate_length();
            leaf.dictionary =
                leaf.values == Values::Plain && props.dictionary_enabled(descr.path());
            leaf.dict_limit = props.column_dictionary_page_size_limit(descr.path());
            leaf.page_rows = props.data_page_row_count_limit().max(1);
            leaf.page_bytes = props.column_data_page_size_limit(descr.path()).max(1);
        }
    }

    /// Every integer leaf `DELTA_BINARY_PACKED` and every float leaf
    /// `BYTE_STREAM_SPLIT` (for tests).
    #[cfg(test)]
    fn delta_and_split_for_all(mut self) -> Self {
        for leaf in &mut self.leaves {
            leaf.delta = matches!(leaf.values, Values::Int(_) | Values::UInt(_));
            leaf.split = matches!(leaf.values, Values::Float(_));
        }
        self
    }

    /// Whether pages carry a CRC-32 of their stored body in their header
    /// (the `crc` field of Parquet's `PageHeader`), which readers check to
    /// tell a damaged page from data: on by default.
    pub fn with_page_checksums(mut self, on: bool) -> Self {
        self.checksums = on;
        self
    }

    /// Fresh encoders for one row group.
    pub fn row_group(&self) -> Vec<LeafEncoder> {
        let pages = Arc::new(Mutex::new(LevelPages::default()));
        self.leaves
            .iter()
            .zip(&self.descrs)
            .map(|(shape, descr)| {
                let mut leaf = LeafEncoder::new(shape.clone(), descr.clone(), self.codec);
                leaf.checksums = self.checksums;
                if shape.max_def > 0 || shape.max_rep > 0 {
                    leaf.level_pages = Some(pages.clone());
                }
                leaf
            })
            .collect()
    }
}

/// Min, max, null and NaN count of one page or chunk.
#[derive(Debug, Default, Clone)]
struct Stats {
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
    nulls: u64,
    nans: u64,
}

impl Stats {
    fn update(&mut self, v: &[u8], kind: Values) {
        // As parquet's writer: a NaN never replaces a number, a number
        // always replaces a NaN.
        let nan = kind.is_nan(v);
        match &mut self.min {
            Some(m) if (kind.is_nan(m) && !nan) || (nan == kind.is_nan(m) && kind.less(v, m)) => {
                m.clear();
                m.extend_from_slice(v);
            }
            None => self.min = Some(v.to_vec()),
            _ => {}
        }
        match &mut self.max {
            Some(m) if (kind.is_nan(m) && !nan) || (nan == kind.is_nan(m) && kind.less(m, v)) => {
                m.clear();
                m.extend_from_slice(v);
            }
            None => self.max = Some(v.to_vec()),
            _ => {}
        }
    }

    fn merge(&mut self, other: &Stats, kind: Values) {
        if let Some(v) = &other.min {
            self.update(v, kind);
        }
        if let Some(v) = &other.max {
            self.update(v, kind);
        }
        self.nulls += other.nulls;
        self.nans += other.nans;
    }
}

/// Where one data page landed in the chunk, and what it holds.
struct PageMeta {
    /// Offset of the page header in the chunk (before a dictionary page
    /// is put in front).
    offset: usize,
    /// Header and stored body.
    size: usize,
    /// Header and uncompressed body.
    uncompressed: usize,
    levels: u32,
    rows: usize,
    stats: Stats,
}

/// The repetition and definition levels of the last page a leaf of the
/// row group encoded, and their encoding. The fields of a struct below the
/// same lists and nulls (`items`' `sku`, `qty` and `price` in `events`)
/// have equal levels page after page: the first leaf encodes them, its
/// siblings compare and copy. The leaves of a row group are written one
/// after another by one thread, so the lock is never contended.
#[derive(Default)]
struct LevelPages {
    rep: Vec<u8>,
    def: Vec<u8>,
    /// Bit widths of the repetition and definition levels (0: none).
    widths: (u8, u8),
    levels: Vec<u8>,
    /// The pieces of rows the last general leaf walked in one batch.
    walk: WalkMemo,
    /// Which lists of the last column met hold null lists over entries.
    spans: general::SpansMemo,
}

/// The levels and value runs of the pieces of rows the last general leaf
/// of the row group walked in one batch: a sibling with the same
/// [`general::Chain::identity`] copies those of the same rows instead of
/// walking.
#[derive(Default)]
struct WalkMemo {
    identity: Vec<usize>,
    /// The column the identity's addresses are in, kept alive so that no
    /// other buffer can take those addresses while they are compared.
    column: Option<ArrayRef>,
    /// Per piece, in the order walked: its rows, the ends of its levels
    /// in `def` and `rep` and of its runs in `runs`, and whether it met a
    /// null where the schema allows none.
    pieces: Vec<MemoPiece>,
    def: Vec<u8>,
    rep: Vec<u8>,
    runs: Vec<(u32, u32, u32)>,
}

#[derive(Clone, Copy)]
struct MemoPiece {
    rows: (usize, usize),
    ends: (usize, usize, usize),
    bad: bool,
}

/// Encodes one leaf column of one row group.
pub struct LeafEncoder {
    shape: LeafShape,
    descr: ColumnDescPtr,
    codec: PageCompressor,
    def: Vec<u8>,
    rep: Vec<u8>,
    /// Plain: length-prefixed strings, or the bytes alone when the
    /// lengths go to `lengths`. Dictionary: one key per value.
    values: Vec<u8>,
    /// The page's byte-string lengths (4 bytes each, little-endian) of a
    /// leaf written `DELTA_LENGTH_BYTE_ARRAY` with no dictionary (see
    /// [`LeafShape::split_lengths`]); then their encoding.
    lengths: Vec<u8>,
    lengths_out: Vec<u8>,
    page_rows: usize,
    page_stats: Stats,
    /// Dictionary entries seen so far, in first-seen order.
    dict: dict::Dictionary,
    /// Keys of the current page that occur (for min/max).
    used: [u64; 4],
    /// The same for dictionaries of more than 256 entries: one byte per
    /// entry, set by a plain store (or-ing bits into words made each value
    /// wait for the one before).
    seen: Vec<u8>,
    /// Scratch: runs of present leaf values (general leaves).
    runs: Vec<(u32, u32, u32)>,
    /// Scratch of the level walk (general leaves).
    walk_scratch: (Vec<u8>, Vec<u8>, Vec<u32>),
    /// The last page's levels among the row group's leaves and their
    /// encoding (see [`LevelPages`]); `None` for a leaf made on its own.
    level_pages: Option<Arc<Mutex<LevelPages>>>,
    /// Where chunk buffers come from (the pool of the last close).
    pool: Option<BufferPool>,
    /// Bytes of the last chunk this encoder closed: the next one takes a
    /// pooled buffer at least as large, so that it does not grow (copy
    /// and page-fault) its way there again.
    last_bytes: usize,
    /// Whether the chunk fell back to `PLAIN` (byte-string leaves).
    fell_back: bool,
    /// Whether some page of the chunk is dictionary-encoded.
    dict_pages: bool,
    /// A page's dictionary keys: a byte-string leaf with its dictionary on
    /// interns its values as they are written (the page keeps no `PLAIN`
    /// copy of them, `plain_pending` counts their `PLAIN` size).
    keys: Vec<u32>,
    /// `PLAIN` bytes of the values interned into `keys` so far.
    plain_pending: usize,
    /// Dictionary entries before the open page (kept if the page falls
    /// back to `PLAIN`).
    page_dict_start: usize,
    pages: Vec<PageMeta>,
    /// The data pages of the chunk, headers included, back to back, but
    /// for the `splices`.
    chunk: Vec<u8>,
    /// Page bodies shared with the batches (see [`ColumnChunk`]):
    /// `(at, buffer)` puts `buffer` after `chunk[..at]`.
    splices: Vec<(usize, arrow_buffer::Buffer)>,
    /// Bytes in `splices`.
    spliced: usize,
    /// The open page's values as slices of the batches' buffers, when the
    /// leaf shares them (`values` is empty then).
    shared: Vec<arrow_buffer::Buffer>,
    /// Bytes in `shared`.
    shared_bytes: usize,
    /// Scratch: a page's encoded levels, and a page body to compress.
    levels: Vec<u8>,
    body: Vec<u8>,
    rows: u64,
    /// Whether page headers carry the CRC-32 of the stored body.
    checksums: bool,
}

/// Checks that every `(batch, row)` pair names a row of `batches`.
pub fn check_gather(batches: &[RecordBatch], rows: &[(usize, usize)]) -> Result<(), Error> {
    match rows
        .iter()
        .find(|&&(b, i)| batches.get(b).is_none_or(|batch| i >= batch.num_rows()))
    {
        Some(&(b, i)) => Err(Error::InvalidConfig(format!(
            "cannot gather row {i} of batch {b}: there is no such row"
        ))),
        None => Ok(()),
    }
}

/// Which rows [`LeafEncoder::write_from`] writes.
#[derive(Clone, Copy)]
enum Gather<'a> {
    /// Every row of the one batch.
    All,
    /// `(batch, row)` pairs, in output order.
    Rows(&'a [(usize, usize)]),
}

/// One batch's array for a leaf of the fast shape and its validity.
#[derive(Clone, Copy)]
struct Part<'a> {
    leaf: &'a ArrayRef,
    leaf_nulls: Option<&'a arrow_buffer::NullBuffer>,
}

/// A validity buffer worth checking: `None` when it has no null (readers
/// often attach an all-valid buffer), so the loops skip the bit tests.
fn nulls(n: Option<&arrow_buffer::NullBuffer>) -> Option<&arrow_buffer::NullBuffer> {
    n.filter(|n| n.null_count() > 0)
}

impl<'a> Part<'a> {
    /// The array of `column` for a leaf of `shape`, after checking that
    /// the data has no null where the schema allows none.
    fn new(shape: &LeafShape, column: &'a ArrayRef) -> Result<Self, Error> {
        if shape.max_def == 0 && column.null_count() > 0 {
            return Err(unsupported("nulls in a required column"));
        }
        Ok(Part {
            leaf: column,
            leaf_nulls: nulls(column.nulls()),
        })
    }
}

impl LeafEncoder {
    fn new(shape: LeafShape, descr: ColumnDescPtr, codec: Compression) -> Self {
        LeafEncoder {
            shape,
            descr,
            codec: PageCompressor::new(codec),
            def: Vec::new(),
            rep: Vec::new(),
            values: Vec::new(),
            lengths: Vec::new(),
            lengths_out: Vec::new(),
            page_rows: 0,
            page_stats: Stats::default(),
            dict: dict::Dictionary::default(),
            used: [0; 4],
            seen: Vec::new(),
            runs: Vec::new(),
            walk_scratch: (Vec::new(), Vec::new(), Vec::new()),
            level_pages: None,
            pool: None,
            last_bytes: 0,
            fell_back: false,
            dict_pages: false,
            keys: Vec::new(),
            plain_pending: 0,
            page_dict_start: 0,
            pages: Vec::new(),
            chunk: Vec::new(),
            splices: Vec::new(),
            spliced: 0,
            shared: Vec::new(),
            shared_bytes: 0,
            levels: Vec::new(),
            body: Vec::new(),
            rows: 0,
            checksums: true,
        }
    }

    /// Whether the pages written from now on carry a CRC-32 of their
    /// stored body (see [`Shredder::with_page_checksums`]).
    pub fn set_page_checksums(&mut self, on: bool) {
        self.checksums = on;
    }

    /// Bytes held for the open column chunk: finished pages and the page
    /// being filled.
    pub fn buffered_bytes(&self) -> usize {
        self.chunk.len()
            + self.spliced
            + self.values.len()
            + self.lengths.len()
            + self.plain_pending
            + self.shared_bytes
            + self.def.len()
            + self.rep.len()
    }

    /// Whether this leaf's row-group dictionary can take the values of
    /// `batches`' dictionaries (a one-byte key indexes at most 256).
    pub fn dictionary_room(&self, batches: &[&RecordBatch]) -> bool {
        if let Some(path) = &self.shape.general {
            if self.shape.values != Values::Dict {
                return true;
            }
            let mut new: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
            for b in batches {
                let Ok(chain) = path.chain(b.column(self.shape.column), None) else {
                    return true;
                };
                let Ok((_, values)) = general::dictionary_parts(chain.leaf) else {
                    return true;
                };
                new.extend(values.into_iter().filter(|v| self.dict.find(v).is_none()));
            }
            return self.dict.len() + new.len() <= path.dict_capacity;
        }
        if self.shape.values != Values::Dictionary {
            return true;
        }
        let mut new: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
        for b in batches {
            let Some(values) = b
                .column(self.shape.column)
                .as_dictionary_opt::<UInt8Type>()
                .and_then(|d| d.values().as_string_opt::<i32>())
            else {
                return true;
            };
            for v in values.iter().flatten() {
                if self.dict.find(v.as_bytes()).is_none() {
                    new.insert(v.as_bytes());
                }
            }
        }
        self.dict.len() + new.len() <= 256
    }

    /// Appends the rows of `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        self.write_from(&[batch], Gather::All)
    }

    #[cfg(test)]
    /// Appends rows gathered from `batches`: `rows[k] = (b, i)` makes row
    /// `i` of `batches[b]` the next row. Values are copied once, from the
    /// batches into the page (no gathered batch is built first). The pairs
    /// must have passed [`check_gather`] (the caller checks once for all
    /// leaves).
    pub fn write_gather(
        &mut self,
        batches: &[RecordBatch],
        rows: &[(usize, usize)],
    ) -> Result<(), Error> {
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        self.write_gather_refs(&refs, rows)
    }

    /// Appends rows gathered from `batches`: `rows[k] = (b, i)` makes row
    /// `i` of `batches[b]` the next row. Values are copied once, from the
    /// batches into the page. The pairs must have passed [`check_gather`]
    /// (the caller checks once for all leaves).
    pub fn write_gather_refs(
        &mut self,
        batches: &[&RecordBatch],
        rows: &[(usize, usize)],
    ) -> Result<(), Error> {
        self.write_from(batches, Gather::Rows(rows))
    }

    /// The column's path, for messages.
    pub fn column(&self) -> String {
        self.descr.path().string()
    }

    fn remap(&mut self, leaf: &ArrayRef) -> Result<Vec<u8>, Error> {
        let dict: &DictionaryArray<UInt8Type> = leaf
            .as_dictionary_opt()
            .ok_or_else(|| unsupported("a UInt8 dictionary"))?;
        let values: &StringArray = dict
            .values()
            .as_string_opt()
            .ok_or_else(|| unsupported("Utf8 dictionary values"))?;
        if values.null_count() > 0 {
            return Err(unsupported("dictionary values without nulls"));
        }
        let mut map = Vec::with_capacity(values.len());
        for v in values.iter() {
            let v = v.unwrap_or_default().as_bytes();
            if self.dict.len() == 256 && self.dict.find(v).is_none() {
                return Err(Error::DictionaryOverflow {
                    column: self.descr.path().string(),
                });
            }
            map.push(self.dict.intern(v) as u8);
        }
        Ok(map)
    }

    /// Maps a general dictionary leaf's entries onto the chunk's
    /// dictionary, adding those it lacks.
    fn remap_wide(&mut self, leaf: &dyn Array, capacity: usize) -> Result<Vec<u32>, Error> {
        let (_, values) = general::dictionary_parts(leaf)?;
        let mut map = Vec::with_capacity(values.len());
        for v in values {
            if self.dict.len() >= capacity.min(u32::MAX as usize) && self.dict.find(v).is_none() {
                return Err(Error::DictionaryOverflow {
                    column: self.descr.path().string(),
                });
            }
            map.push(self.dict.intern(v));
        }
        Ok(map)
    }

    /// Rows to write in one piece, of `left`: at most [`CHUNK_ROWS`], and
    /// no more than the open page still takes.
    fn piece_len(&self, left: usize) -> usize {
        CHUNK_ROWS
            .min(left)
            .min(self.shape.page_rows.saturating_sub(self.page_rows).max(1))
    }

    /// Counts a written piece of `len` rows and closes the page at its
    /// limits.
    fn end_piece(&mut self, len: usize) -> Result<(), Error> {
        self.page_rows += len;
        self.rows += len as u64;
        if self.page_rows >= self.shape.page_rows
            || self.values.len() + self.lengths.len() + self.plain_pending + self.shared_bytes
                >= self.shape.page_bytes
        {
            self.flush_page()?;
        }
        Ok(())
    }

    /// Writes rows of a leaf at any depth: levels by walking its path,
    /// then the present values, run by run.
    fn write_general(&mut self, batches: &[&RecordBatch], rows: Gather<'_>) -> Result<(), Error> {
        let Some(path) = self.shape.general.take() else {
            return Ok(());
        };
        let result = self.write_path(&path, batches, rows);
        self.shape.general = Some(path);
        result
    }

    fn write_path(
        &mut self,
        path: &general::Path,
        batches: &[&RecordBatch],
        rows: Gather<'_>,
    ) -> Result<(), Error> {
        let mut chains = Vec::with_capacity(batches.len());
        {
            // Sibling leaves check a list's nulls once.
            let mut pages = self
                .level_pages
                .as_ref()
                .map(|p| p.lock().unwrap_or_else(|e| e.into_inner()));
            for b in batches {
                let memo = pages.as_deref_mut().map(|p| &mut p.spans);
                chains.push(path.chain(b.column(self.shape.column), memo)?);
            }
        }
        // Values stored as Arrow holds them (no widening, no decimal
        // conversion) can be shared.
        let share = self.shares()
            && matches!(path.source, general::Source::Copy(_))
            && matches!(rows, Gather::All);
        let buffers = if share {
            let mut b = Vec::with_capacity(chains.len());
            for chain in &chains {
                b.push(
                    general::values_buffer(chain.leaf)
                        .ok_or_else(|| unsupported("a primitive array"))?,
                );
            }
            b
        } else {
            Vec::new()
        };
        let mut values = Vec::with_capacity(chains.len());
        for chain in &chains {
            let map = if path.source == general::Source::Dict {
                self.remap_wide(chain.leaf, path.dict_capacity)?
            } else {
                Vec::new()
            };
            values.push(general::Values::new(chain.leaf, path.source, map)?);
        }
        if self.shape.values == Values::Dict {
            self.seen.resize(self.dict.len(), 0);
        }
        let n = match rows {
            Gather::All => batches.first().map_or(0, |b| b.num_rows()),
            Gather::Rows(r) => r.len(),
        };
        // Siblings share walks of whole batches written one at a time.
        let memo = match (rows, &chains[..], &self.level_pages) {
            (Gather::All, [chain], Some(_)) => Some((
                chain.identity(path),
                batches[0].column(self.shape.column).clone(),
            )),
            _ => None,
        };
        let mut at = 0;
        let mut open = None;
        while at < n {
            let len = self.piece_len(n - at);
            let levels_before = if self.shape.max_def > 0 {
                self.def.len()
            } else {
                self.page_rows
            };
            let mut runs = std::mem::take(&mut self.runs);
            runs.clear();
            let bad = self.walk_piece(path, &chains, rows, at, len, &memo, &mut runs);
            if bad {
                self.runs = runs;
                return Err(unsupported(
                    "no nulls where the schema has a required field",
                ));
            }
            let mut present = 0u64;
            // A chunk falls back to `PLAIN` only when a page closes, after
            // the piece.
            let interning =
                self.shape.values == Values::Plain && self.shape.dictionary && !self.fell_back;
            let split = self.shape.split_lengths();
            for &(b, s, e) in &runs {
                if let (Some(buffer), general::Source::Copy(w)) =
                    (buffers.get(b as usize), path.source)
                {
                    // Only when sharing: `buffers` is empty otherwise.
                    self.share(buffer, b, w, s as usize..e as usize, &mut open);
                } else if interning {
                    let (dict, keys) = (&mut self.dict, &mut self.keys);
                    let plain = values[b as usize].intern(s as usize, e as usize, dict, keys);
                    self.plain_pending += plain.unwrap_or(0);
                } else if split {
                    values[b as usize].put_split(
                        s as usize,
                        e as usize,
                        &mut self.values,
                        &mut self.lengths,
                    );
                } else {
                    values[b as usize].put(
                        s as usize,
                        e as usize,
                        &mut self.values,
                        &mut self.seen,
                    );
                }
                present += u64::from(e - s);
            }
            self.runs = runs;
            let levels = if self.shape.max_def > 0 {
                self.def.len() - levels_before
            } else {
                len
            };
            self.page_stats.nulls += levels as u64 - present;
            at += len;
            self.end_piece(len)?;
        }
        Ok(())
    }

    /// Levels of rows `at..at + len` appended to the leaf's and their value
    /// runs to `runs`: copied from the row group's last walk when `memo`
    /// (this batch's chain identity and column) matches it, else walked
    /// (and left there for the siblings). Returns whether a null was met
    /// where the schema allows none.
    #[allow(clippy::too_many_arguments)]
    fn walk_piece(
        &mut self,
        path: &general::Path,
        chains: &[general::Chain<'_>],
        rows: Gather<'_>,
        at: usize,
        len: usize,
        memo: &Option<(Vec<usize>, ArrayRef)>,
        runs: &mut Vec<(u32, u32, u32)>,
    ) -> bool {
        let shared = match (memo, &self.level_pages) {
            (Some((identity, column)), Some(pages)) => Some((identity, column, pages.clone())),
            _ => None,
        };
        if let Some((identity, _, pages)) = &shared {
            let last = pages.lock().unwrap_or_else(|e| e.into_inner());
            let w = &last.walk;
            if w.column.is_some() && w.identity == **identity {
                let k = w.pieces.partition_point(|p| p.rows.0 < at);
                if let Some(p) = w.pieces.get(k).filter(|p| p.rows == (at, len)) {
                    let (d, r, u) = k.checked_sub(1).map_or((0, 0, 0), |k| w.pieces[k].ends);
                    self.def.extend_from_slice(&w.def[d..p.ends.0]);
                    self.rep.extend_from_slice(&w.rep[r..p.ends.1]);
                    runs.extend_from_slice(&w.runs[u..p.ends.2]);
                    return p.bad;
                }
            }
        }
        let (def_at, rep_at) = (self.def.len(), self.rep.len());
        let mut walk = general::Walk::new(
            path,
            &mut self.def,
            &mut self.rep,
            runs,
            &mut self.walk_scratch,
        );
        match rows {
            Gather::All => walk.rows(&chains[0], 0, at..at + len),
            Gather::Rows(r) => {
                for &(b, i) in &r[at..at + len] {
                    walk.rows(&chains[b], b as u32, i..i + 1);
                }
            }
        }
        let bad = walk.bad;
        if let Some((identity, column, pages)) = shared {
            let mut last = pages.lock().unwrap_or_else(|e| e.into_inner());
            let w = &mut last.walk;
            // A new batch or leaf shape starts over; pieces are kept in
            // row order.
            if w.column.is_none()
                || w.identity != *identity
                || w.pieces.last().is_some_and(|p| p.rows.0 >= at)
            {
                w.identity.clone_from(identity);
                w.column = Some(column.clone());
                w.pieces.clear();
                w.def.clear();
                w.rep.clear();
                w.runs.clear();
            }
            w.def.extend_from_slice(&self.def[def_at..]);
            w.rep.extend_from_slice(&self.rep[rep_at..]);
            w.runs.extend_from_slice(runs);
            let ends = (w.def.len(), w.rep.len(), w.runs.len());
            w.pieces.push(MemoPiece {
                rows: (at, len),
                ends,
                bad,
            });
        }
        bad
    }

    /// Whether this leaf's pages can be the batches' value buffers: a
    /// required, unnested fixed-width leaf written `PLAIN` and
    /// uncompressed (the caller checks that the values are stored as
    /// Arrow holds them).
    fn shares(&self) -> bool {
        self.shape.max_def == 0
            && self.shape.max_rep == 0
            && matches!(
                self.shape.values,
                Values::Int(_) | Values::UInt(_) | Values::Float(_)
            )
            && !self.shape.delta
            && !self.shape.split
            && self.codec.codec == Compression::None
    }

    /// Dispatches once on the leaf's value kind, then writes the rows.
    fn write_from(&mut self, batches: &[&RecordBatch], rows: Gather<'_>) -> Result<(), Error> {
        if self.shape.general.is_some() {
            return self.write_general(batches, rows);
        }
        let columns: Vec<&ArrayRef> = batches
            .iter()
            .map(|b| b.column(self.shape.column))
            .collect();
        // A top-level `Int32` or `Int64` column, stored as Arrow holds it.
        if let (Values::Int(w), Gather::All, [column]) = (self.shape.values, rows, &columns[..])
            && self.shares()
        {
            return self.write_shared(column, w);
        }
        match self.shape.values {
            Values::Int(4) => self.write_kind(&columns, rows, |_, leaf| IntValues::<4>::new(leaf)),
            Values::Int(_) => self.write_kind(&columns, rows, |_, leaf| IntValues::<8>::new(leaf)),
            Values::Dictionary => {
                // Per batch: map its dictionary onto the chunk's.
                let maps = columns
                    .iter()
                    .map(|c| self.remap(c))
                    .collect::<Result<Vec<_>, Error>>()?;
                self.write_kind(&columns, rows, |b, leaf| DictValues::new(leaf, &maps[b]))
            }
            // Only general leaves hold the other kinds.
            Values::Plain
            | Values::UInt(_)
            | Values::Float(_)
            | Values::Bool
            | Values::Dict
            | Values::Fixed(_)
            | Values::FixedBytes(_) => Err(unsupported("a leaf of a fast shape")),
        }
    }

    /// Writes a required top-level column of `width`-byte integers as
    /// slices of its values buffer (see [`Self::shares`]).
    fn write_shared(&mut self, column: &ArrayRef, width: usize) -> Result<(), Error> {
        if column.null_count() > 0 {
            return Err(unsupported("nulls in a required column"));
        }
        let buffer = general::values_buffer(column.as_ref())
            .filter(|b| b.len() == column.len() * width)
            .ok_or_else(|| unsupported("a primitive array"))?;
        let n = column.len();
        let mut at = 0;
        let mut open = None;
        while at < n {
            let len = self.piece_len(n - at);
            self.share(&buffer, 0, width, at..at + len, &mut open);
            at += len;
            self.end_piece(len)?;
        }
        Ok(())
    }

    /// Adds values `rows` of `buffer` (batch `b`'s, of `width`-byte
    /// values) to the open page's shared slices: one slice per batch and
    /// page, grown while the rows follow on (`open`: the batch and first
    /// row of the last slice, when this call made it).
    fn share(
        &mut self,
        buffer: &arrow_buffer::Buffer,
        b: u32,
        width: usize,
        rows: std::ops::Range<usize>,
        open: &mut Option<(u32, usize, usize)>,
    ) {
        self.shared_bytes += rows.len() * width;
        // Statistics now, while the batch is in cache (at the page's end
        // its first rows are megabytes behind).
        let kind = self.shape.values;
        let bytes = &buffer.as_slice()[rows.start * width..rows.end * width];
        let (min_max, nans) = match kind {
            Values::Int(w) => (int_min_max(bytes, w), 0),
            Values::UInt(w) => (uint_min_max(bytes, w), 0),
            Values::Float(w) => float_min_max(bytes, w),
            _ => (None, 0),
        };
        if let Some((lo, hi)) = min_max {
            self.page_stats.update(&lo, kind);
            self.page_stats.update(&hi, kind);
        }
        self.page_stats.nans += nans;
        if let (Some((ob, from, end)), Some(last)) = (open.as_mut(), self.shared.last_mut())
            && *ob == b
            && *end == rows.start
        {
            *last = buffer.slice_with_length(*from * width, (rows.end - *from) * width);
            *end = rows.end;
            return;
        }
        self.shared
            .push(buffer.slice_with_length(rows.start * width, rows.len() * width));
        *open = Some((b, rows.start, rows.end));
    }

    /// Builds each batch's value writer with `make` (given the batch's
    /// number and leaf array) and writes the rows in
    /// pieces of [`CHUNK_ROWS`], closing pages at the limits.
    fn write_kind<'a, V: LeafValues>(
        &mut self,
        columns: &[&'a ArrayRef],
        rows: Gather<'_>,
        make: impl Fn(usize, &'a ArrayRef) -> Result<V, Error>,
    ) -> Result<(), Error> {
        let mut parts = Vec::with_capacity(columns.len());
        let mut values = Vec::with_capacity(columns.len());
        for (b, column) in columns.iter().enumerate() {
            let part = Part::new(&self.shape, column)?;
            values.push(make(b, part.leaf)?);
            parts.push(part);
        }
        let n = match rows {
            Gather::All => columns.first().map_or(0, |c| c.len()),
            Gather::Rows(r) => r.len(),
        };
        let mut at = 0;
        while at < n {
            let len = self.piece_len(n - at);
            match rows {
                // A required top-level leaf: its rows' values in one run,
                // with no levels.
                Gather::All if self.shape.max_def == 0 && parts[0].leaf_nulls.is_none() => {
                    values[0].extend_run(at..at + len, &mut self.values);
                }
                Gather::All => {
                    let bound = values[0].bound(at..at + len);
                    let rows = (at..at + len).map(|i| (0, i));
                    self.write_rows(&parts[..1], &mut values[..1], rows, len, bound);
                }
                Gather::Rows(r) => {
                    let r = &r[at..at + len];
                    let mut bound = V::SLACK;
                    for &(b, i) in r {
                        bound += values[b].bound(i..i + 1) - V::SLACK;
                    }
                    self.write_rows(&parts, &mut values, r.iter().copied(), len, bound);
                }
            }
            // The keys these rows used count for the page they are in,
            // which may close just below.
            for v in &mut values {
                self.or_used(v.take_used());
            }
            at += len;
            self.end_piece(len)?;
        }
        Ok(())
    }

    // The loop below writes levels and values by index into buffers sized
    // up front (`levels` and `bound` are upper bounds for the rows), and
    // turns the data-dependent choice (null or not) into arithmetic: a
    // null value is written anyway and the cursor simply does not move.

    fn write_rows<V: LeafValues>(
        &mut self,
        parts: &[Part<'_>],
        values: &mut [V],
        rows: impl Iterator<Item = (usize, usize)>,
        levels: usize,
        bound: usize,
    ) {
        let vbase = self.values.len();
        self.values.resize(vbase + bound, 0);
        let mut vp = vbase;
        let mut null_count = 0u64;
        let optional = self.shape.max_def > 0;
        let dbase = self.def.len();
        if optional {
            self.def.resize(dbase + levels, 0);
        }
        let mut dp = dbase;
        for (b, i) in rows {
            let valid = parts[b].leaf_nulls.is_none_or(|n| n.is_valid(i));
            if optional {
                self.def[dp] = u8::from(valid);
                dp += 1;
            }
            vp += values[b].put(i, valid, &mut self.values[vp..]);
            null_count += u64::from(!valid);
        }
        self.def.truncate(dp);
        self.values.truncate(vp);
        self.page_stats.nulls += null_count;
    }

    fn or_used(&mut self, used: [u64; 4]) {
        for (u, v) in self.used.iter_mut().zip(used) {
            *u |= v;
        }
    }

    /// Makes the page's values its keys in the chunk's dictionary (the
    /// byte strings were interned as written): a bit width byte and the
    /// RLE-hybrid keys. `false`, with the page's values `PLAIN` and the
    /// chunk `PLAIN` from here on, when the dictionary would pass its
    /// limit.
    fn dictionary_encode(&mut self) -> bool {
        let before = self.page_dict_start;
        if self.dict.plain().len() > self.shape.dict_limit {
            // The page's `PLAIN` values from their entries, before the
            // page's new entries go.
            self.values.clear();
            self.values.reserve(self.plain_pending);
            for &k in &self.keys {
                let v = self.dict.get(k as usize).unwrap_or_default();
                self.values
                    .extend_from_slice(&(v.len() as u32).to_le_bytes());
                self.values.extend_from_slice(v);
            }
            self.dict.truncate(before);
            self.fell_back = true;
            return false;
        }
        let width = (32 - (self.dict.len().saturating_sub(1) as u32).leading_zeros()).max(1) as u8;
        self.body.clear();
        self.body.push(width);
        encode_hybrid_wide(&mut self.body, &self.keys, width);
        std::mem::swap(&mut self.body, &mut self.values);
        true
    }

    /// Replaces the page's values with what `encode` makes of them.
    fn reencode(&mut self, encode: impl FnOnce(&mut Vec<u8>, &[u8])) {
        self.body.clear();
        encode(&mut self.body, &self.values);
        std::mem::swap(&mut self.body, &mut self.values);
    }

    /// Encodes the page's repetition and definition levels into
    /// `self.levels`, or copies their encoding from the row group's last
    /// page when a sibling leaf's levels were the same.
    fn encode_page_levels(&mut self) {
        self.levels.clear();
        let widths = (
            if self.shape.max_rep > 0 {
                bit_width(self.shape.max_rep)
            } else {
                0
            },
            if self.shape.max_def > 0 {
                bit_width(self.shape.max_def)
            } else {
                0
            },
        );
        if widths == (0, 0) {
            return;
        }
        let encode = |out: &mut Vec<u8>, rep: &[u8], def: &[u8]| {
            if widths.0 > 0 {
                encode_levels(out, rep, widths.0);
            }
            if widths.1 > 0 {
                encode_levels(out, def, widths.1);
            }
        };
        let Some(share) = &self.level_pages else {
            encode(&mut self.levels, &self.rep, &self.def);
            return;
        };
        let mut last = share.lock().unwrap_or_else(|e| e.into_inner());
        if last.widths == widths && last.rep == self.rep && last.def == self.def {
            self.levels.extend_from_slice(&last.levels);
            return;
        }
        encode(&mut self.levels, &self.rep, &self.def);
        // The page's levels are dropped after it: the share keeps them
        // instead (a swap, no copy), and gives back buffers to reuse.
        let last = &mut *last;
        std::mem::swap(&mut last.rep, &mut self.rep);
        std::mem::swap(&mut last.def, &mut self.def);
        last.levels.clear();
        last.levels.extend_from_slice(&self.levels);
        last.widths = widths;
    }

    /// Encodes the buffered levels and values as one data page and appends
    /// it, header first, to the chunk: the values are copied once.
    fn flush_page(&mut self) -> Result<(), Error> {
        if self.page_rows == 0 {
            return Ok(());
        }
        let num_levels = if self.shape.max_def > 0 {
            self.def.len()
        } else {
            self.page_rows
        } as u32;
        self.encode_page_levels();
        let mut stats = std::mem::take(&mut self.page_stats);
        let encoding = match self.shape.values {
            Values::Plain => {
                if self.shape.dictionary
                    && !self.fell_back
                    && self.plain_pending > 0
                    && self.dictionary_encode()
                {
                    // Min and max over the page's distinct entries: a mark
                    // per value, then one comparison per entry used.
                    self.seen.clear();
                    self.seen.resize(self.dict.len(), 0);
                    for &k in &self.keys {
                        if let Some(x) = self.seen.get_mut(k as usize) {
                            *x = 1;
                        }
                    }
                    let dict = &self.dict;
                    take_seen(&mut self.seen, |k| {
                        if let Some(v) = dict.get(k) {
                            stats.update(v, Values::Plain);
                        }
                    });
                    self.dict_pages = true;
                    Encoding::RLE_DICTIONARY
                } else if self.shape.split_lengths() {
                    if let Some((lo, hi)) = split_min_max(&self.lengths, &mut self.values) {
                        stats.update(lo, Values::Plain);
                        stats.update(hi, Values::Plain);
                    }
                    // The lengths, then the bytes as they are.
                    self.lengths_out.clear();
                    delta_binary_packed(&mut self.lengths_out, &self.lengths, 4);
                    Encoding::DELTA_LENGTH_BYTE_ARRAY
                } else {
                    if let Some((lo, hi)) = plain_min_max(&mut self.values) {
                        stats.update(lo, Values::Plain);
                        stats.update(hi, Values::Plain);
                    }
                    if self.shape.lengths {
                        // A chunk past its dictionary's limit.
                        self.reencode(plain_to_split);
                        Encoding::DELTA_LENGTH_BYTE_ARRAY
                    } else {
                        Encoding::PLAIN
                    }
                }
            }
            // Shared slices: min, max and NaNs were taken as they came.
            Values::Int(_) | Values::UInt(_) | Values::Float(_) if !self.shared.is_empty() => {
                Encoding::PLAIN
            }
            Values::Int(width) | Values::UInt(width) => {
                let min_max = if self.shape.values == Values::Int(width) {
                    int_min_max(&self.values, width)
                } else {
                    uint_min_max(&self.values, width)
                };
                if let Some((lo, hi)) = min_max {
                    stats.min = Some(lo);
                    stats.max = Some(hi);
                }
                if self.shape.delta {
                    self.reencode(|out, v| delta_binary_packed(out, v, width));
                    Encoding::DELTA_BINARY_PACKED
                } else {
                    Encoding::PLAIN
                }
            }
            Values::Dictionary => {
                // Keys become a bit width byte and the hybrid encoding.
                let width = bit_width(self.dict.len().saturating_sub(1) as u8).max(1);
                self.reencode(|out, v| {
                    out.push(width);
                    encode_hybrid(out, v, width);
                });
                for k in 0..self.dict.len() {
                    if self.used[k >> 6] & (1 << (k & 63)) != 0
                        && let Some(v) = self.dict.get(k)
                    {
                        stats.update(v, Values::Dictionary);
                    }
                }
                self.used = [0; 4];
                Encoding::RLE_DICTIONARY
            }
            Values::Fixed(width) | Values::FixedBytes(width) => {
                for v in self.values.chunks_exact(width) {
                    stats.update(v, self.shape.values);
                }
                Encoding::PLAIN
            }
            Values::Float(width) => {
                let (min_max, nans) = float_min_max(&self.values, width);
                if let Some((lo, hi)) = min_max {
                    stats.min = Some(lo);
                    stats.max = Some(hi);
                }
                stats.nans = nans;
                if self.shape.split {
                    self.reencode(|out, v| byte_stream_split(out, v, width));
                    Encoding::BYTE_STREAM_SPLIT
                } else {
                    Encoding::PLAIN
                }
            }
            Values::Bool => {
                // One byte per value becomes one bit, least significant first.
                self.body.clear();
                for group in self.values.chunks(8) {
                    let mut byte = 0u8;
                    for (i, &v) in group.iter().enumerate() {
                        byte |= (v & 1) << i;
                    }
                    self.body.push(byte);
                }
                let (f, t) = (self.values.contains(&0), self.values.contains(&1));
                if f || t {
                    stats.min = Some(vec![u8::from(!f)]);
                    stats.max = Some(vec![u8::from(t)]);
                }
                std::mem::swap(&mut self.body, &mut self.values);
                Encoding::PLAIN
            }
            Values::Dict => {
                let keys: Vec<u32> = self
                    .values
                    .chunks_exact(4)
                    .map(|k| u32::from_le_bytes([k[0], k[1], k[2], k[3]]))
                    .collect();
                let width =
                    (32 - (self.dict.len().saturating_sub(1) as u32).leading_zeros()).max(1) as u8;
                self.body.clear();
                self.body.push(width);
                encode_hybrid_wide(&mut self.body, &keys, width);
                std::mem::swap(&mut self.body, &mut self.values);
                let dict = &self.dict;
                take_seen(&mut self.seen, |k| {
                    if let Some(v) = dict.get(k) {
                        stats.update(v, Values::Dict);
                    }
                });
                Encoding::RLE_DICTIONARY
            }
        };
        if self.chunk.capacity() == 0
            && let Some(pool) = &self.pool
        {
            self.chunk = pool.take(self.last_bytes);
        }
        let offset = self.chunk.len() + self.spliced;
        let (size, uncompressed) = if self.shared.is_empty() {
            write_page(
                &mut self.chunk,
                &mut self.body,
                &mut self.codec,
                Page {
                    kind: PageKind::Data { encoding },
                    values: num_levels,
                    checksum: self.checksums,
                },
                &[&self.levels, &self.lengths_out, &self.values],
            )?
        } else {
            // The header here, the body spliced in from the batches.
            let raw = self.shared_bytes;
            let crc = self.checksums.then(|| {
                let mut h = crc32fast::Hasher::new();
                for b in &self.shared {
                    h.update(b.as_slice());
                }
                h.finalize()
            });
            page_header(
                &mut self.chunk,
                PageKind::Data { encoding },
                raw,
                raw,
                num_levels,
                crc,
            );
            for b in self.shared.drain(..) {
                self.splices.push((self.chunk.len(), b));
            }
            self.spliced += raw;
            self.shared_bytes = 0;
            let size = self.chunk.len() + self.spliced - offset;
            (size, size)
        };
        self.pages.push(PageMeta {
            offset,
            size,
            uncompressed,
            levels: num_levels,
            rows: self.page_rows,
            stats,
        });
        self.def.clear();
        self.rep.clear();
        self.values.clear();
        self.lengths.clear();
        self.lengths_out.clear();
        self.keys.clear();
        self.plain_pending = 0;
        self.page_dict_start = self.dict.len();
        self.page_rows = 0;
        Ok(())
    }

    /// The finished column chunk: its bytes (offsets start at 0) and the
    /// metadata parquet needs to splice it into a row group. The encoder is
    /// left empty, keeping its buffers, for the next row group; chunk
    /// buffers come from, and go back to, `pool` (see [`BufferPool`]).
    pub fn close(&mut self, pool: &BufferPool) -> Result<(ColumnChunk, ColumnCloseResult), Error> {
        self.flush_page()?;
        // The next chunk's buffer comes from the pool at its first page, by
        // when this one's may have been given back.
        self.pool = Some(pool.clone());
        let mut encodings = vec![Encoding::RLE];
        if self.shape.delta {
            encodings.push(Encoding::DELTA_BINARY_PACKED);
        }
        if self.shape.split {
            encodings.push(Encoding::BYTE_STREAM_SPLIT);
        }
        // With a dictionary on, only the pages after a fall-back.
        if self.shape.lengths && (!self.shape.dictionary || self.fell_back) {
            encodings.push(Encoding::DELTA_LENGTH_BYTE_ARRAY);
        }
        let mut uncompressed = 0usize;
        let dictionary = match self.shape.values {
            Values::Dictionary | Values::Dict => true,
            Values::Plain => self.dict_pages,
            _ => false,
        };
        // `PLAIN` where values or a dictionary page take it, as parquet's
        // writer lists them.
        if dictionary || encodings.len() == 1 {
            encodings.insert(0, Encoding::PLAIN);
        }
        let (chunk, dictionary_offset, shift) = match dictionary {
            false => (std::mem::take(&mut self.chunk), None, 0),
            true => {
                // The dictionary page goes first; the (small) data pages
                // are copied in behind it.
                encodings.push(Encoding::RLE_DICTIONARY);
                // Never an empty dictionary: readers give the hidden slots
                // of a required leaf under a null parent key 0, which must
                // exist in the dictionary they build.
                if self.dict.is_empty() {
                    self.dict.intern(b"");
                }
                let mut out = pool.take(self.last_bytes);
                let (size, raw) = write_page(
                    &mut out,
                    &mut self.body,
                    &mut self.codec,
                    Page {
                        kind: PageKind::Dictionary,
                        values: self.dict.len() as u32,
                        checksum: self.checksums,
                    },
                    &[self.dict.plain()],
                )?;
                uncompressed += raw;
                out.extend_from_slice(&self.chunk);
                self.chunk.clear();
                for (at, _) in &mut self.splices {
                    *at += size;
                }
                (out, Some(0), size)
            }
        };
        self.last_bytes = chunk.len();
        let kind = self.shape.values;
        let mut column_index = ColumnIndexBuilder::new(kind.physical_type());
        let mut offset_index = OffsetIndexBuilder::new();
        let mut chunk_stats = Stats::default();
        let mut num_values = 0i64;
        for p in std::mem::take(&mut self.pages) {
            uncompressed += p.uncompressed;
            num_values += i64::from(p.levels);
            offset_index.append_row_count(p.rows as i64);
            offset_index.append_offset_and_size((p.offset + shift) as i64, p.size as i32);
            chunk_stats.merge(&p.stats, kind);
            let nans = matches!(kind, Values::Float(_)).then_some(p.stats.nans as i64);
            let (min, max) = match (p.stats.min, p.stats.max) {
                (Some(lo), Some(hi)) => (
                    self.truncate_min(lo, self.shape.index_truncate).0,
                    self.truncate_max(hi, self.shape.index_truncate).0,
                ),
                _ => (Vec::new(), Vec::new()),
            };
            column_index.append(
                min.is_empty() && max.is_empty(),
                min,
                max,
                p.stats.nulls as i64,
                nans,
            );
        }
        let stats = self.chunk_statistics(chunk_stats);
        let chunk = ColumnChunk::new(chunk, std::mem::take(&mut self.splices));
        self.spliced = 0;
        let compressed = chunk.len();
        let metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(parquet_codec(self.codec.codec)?)
            .set_encodings(encodings)
            .set_num_values(num_values)
            .set_total_compressed_size(compressed as i64)
            .set_total_uncompressed_size(uncompressed as i64)
            .set_data_page_offset(shift as i64)
            .set_dictionary_page_offset(dictionary_offset)
            .set_statistics(stats)
            .build()?;
        self.dict.clear();
        self.page_dict_start = 0;
        self.used = [0; 4];
        self.seen.clear();
        self.fell_back = false;
        self.dict_pages = false;
        let rows = std::mem::take(&mut self.rows);
        let close = ColumnCloseResult {
            bytes_written: compressed as u64,
            rows_written: rows,
            metadata,
            bloom_filter: None,
            column_index: Some(column_index.build()?),
            offset_index: Some(offset_index.build()),
        };
        Ok((chunk, close))
    }
}

impl LeafEncoder {
    /// Whether min and max are cut as UTF-8 (the column holds strings).
    fn is_utf8(&self) -> bool {
        matches!(
            self.descr.logical_type_ref(),
            Some(parquet::basic::LogicalType::String)
        ) || self.descr.converted_type() == parquet::basic::ConvertedType::UTF8
    }

    /// Whether statistics are cut to a length limit: byte strings only.
    /// Fixed-length values stay whole: their statistics are `PLAIN`, the
    /// type's length, and Arrow C++ (pyarrow 26) aborts the process reading
    /// the shorter ones parquet's writer cuts for `FixedSizeBinary` wider
    /// than the limit.
    fn cuts_statistics(&self) -> bool {
        self.shape.values.physical_type() == PhysicalType::BYTE_ARRAY
    }

    /// A byte-string minimum cut to at most `limit` bytes (at a character
    /// boundary for strings), as parquet's writer cuts it; `true` when cut.
    fn truncate_min(&self, v: Vec<u8>, limit: Option<usize>) -> (Vec<u8>, bool) {
        let Some(l) = limit.filter(|&l| v.len() > l && self.cuts_statistics()) else {
            return (v, false);
        };
        match std::str::from_utf8(&v) {
            Ok(s) if self.is_utf8() => match (1..=l).rfind(|&x| s.is_char_boundary(x)) {
                Some(cut) => (v[..cut].to_vec(), true),
                None => (v, false),
            },
            _ => (v[..l].to_vec(), true),
        }
    }

    /// A byte-string maximum cut to at most `limit` bytes and then raised
    /// so that it stays an upper bound, as parquet's writer does; `true`
    /// when cut. Left whole when no shorter upper bound exists.
    fn truncate_max(&self, v: Vec<u8>, limit: Option<usize>) -> (Vec<u8>, bool) {
        let Some(l) = limit.filter(|&l| v.len() > l && self.cuts_statistics()) else {
            return (v, false);
        };
        let raised = match std::str::from_utf8(&v) {
            Ok(s) if self.is_utf8() => {
                let lower = l.saturating_sub(3);
                (lower..=l)
                    .rfind(|&x| s.is_char_boundary(x))
                    .and_then(|cut| raise_utf8(&s[..cut]))
            }
            _ => raise_bytes(v[..l].to_vec()),
        };
        match raised {
            Some(r) => (r, true),
            None => (v, false),
        }
    }

    /// The column chunk's statistics from its pages' (byte strings cut as
    /// parquet's writer cuts them).
    fn chunk_statistics(&self, s: Stats) -> Statistics {
        let nulls = Some(s.nulls);
        let nans = s.min.is_some().then_some(s.nans);
        let signed = self.descr.sort_order().is_signed();
        macro_rules! typed {
            ($variant:ident, $conv:expr, $nans:expr) => {
                Statistics::$variant(
                    ValueStatistics::new(s.min.map($conv), s.max.map($conv), None, nulls, false)
                        .with_min_is_exact(true)
                        .with_max_is_exact(true)
                        .with_nan_count($nans)
                        .with_backwards_compatible_min_max(signed),
                )
            };
        }
        match self.shape.values {
            Values::Plain | Values::Dictionary | Values::Dict => {
                let (min, min_cut) = match s.min {
                    Some(v) => {
                        let (v, cut) = self.truncate_min(v, self.shape.truncate);
                        (Some(ByteArray::from(v)), cut)
                    }
                    None => (None, false),
                };
                let (max, max_cut) = match s.max {
                    Some(v) => {
                        let (v, cut) = self.truncate_max(v, self.shape.truncate);
                        (Some(ByteArray::from(v)), cut)
                    }
                    None => (None, false),
                };
                Statistics::ByteArray(
                    ValueStatistics::new(min, max, None, nulls, false)
                        .with_min_is_exact(!min_cut)
                        .with_max_is_exact(!max_cut)
                        .with_backwards_compatible_min_max(signed),
                )
            }
            Values::Int(4) | Values::UInt(4) => typed!(Int32, |v: Vec<u8>| int_le(&v) as i32, None),
            Values::Int(_) | Values::UInt(_) => {
                typed!(Int64, |v: Vec<u8>| uint_le(&v) as i64, None)
            }
            // parquet's writer counts NaNs of chunks that hold a value.
            Values::Float(4) => typed!(Float, |v: Vec<u8>| float_le(&v) as f32, nans),
            Values::Float(_) => typed!(Double, |v: Vec<u8>| float_le(&v), nans),
            Values::Bool => typed!(Boolean, |v: Vec<u8>| v.first() == Some(&1), None),
            // Decimals and other fixed-length bytes: never cut (see
            // `cuts_statistics`).
            Values::Fixed(_) | Values::FixedBytes(_) => typed!(
                FixedLenByteArray,
                |v: Vec<u8>| parquet::data_type::FixedLenByteArray::from(v),
                None
            ),
        }
    }
}

/// The shortest raise of a UTF-8 string's last character that keeps it
/// valid and the same byte length (dropping characters that cannot be
/// raised); `None` when none can.
fn raise_utf8(s: &str) -> Option<Vec<u8>> {
    for (at, c) in s.char_indices().rev() {
        if let Some(next) = char::from_u32(c as u32 + 1)
            && next.len_utf8() == c.len_utf8()
        {
            let mut out = s.as_bytes()[..at + c.len_utf8()].to_vec();
            next.encode_utf8(&mut out[at..]);
            return Some(out);
        }
    }
    None
}

/// Bytes raised by one as a big-endian number; `None` when all are 0xFF.
fn raise_bytes(mut v: Vec<u8>) -> Option<Vec<u8>> {
    for b in v.iter_mut().rev() {
        let (raised, overflow) = b.overflowing_add(1);
        *b = raised;
        if !overflow {
            return Some(v);
        }
    }
    None
}

/// A page's kind and what its header records.
#[derive(Debug, Clone, Copy)]
enum PageKind {
    Data { encoding: Encoding },
    Dictionary,
}

/// What a page's header says apart from its sizes.
#[derive(Clone, Copy)]
struct Page {
    kind: PageKind,
    /// Values (levels) in a data page, entries in a dictionary page.
    values: u32,
    /// Whether the header carries the CRC-32 of the stored body.
    checksum: bool,
}

/// Parquet's `Encoding` enum values (parquet.thrift).
fn encoding_id(e: Encoding) -> i32 {
    match e {
        Encoding::PLAIN => 0,
        Encoding::RLE => 3,
        Encoding::DELTA_BINARY_PACKED => 5,
        Encoding::DELTA_LENGTH_BYTE_ARRAY => 6,
        Encoding::DELTA_BYTE_ARRAY => 7,
        Encoding::RLE_DICTIONARY => 8,
        Encoding::BYTE_STREAM_SPLIT => 9,
        _ => 0,
    }
}

/// Appends a ULEB128 varint (Thrift compact protocol, RLE run headers).
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a compact-protocol `i32` field: header byte (field-id delta in
/// the high nibble, type 5) and the zigzag varint.
fn i32_field(out: &mut Vec<u8>, delta: u8, v: i32) {
    out.push((delta << 4) | 5);
    varint(out, u64::from(((v << 1) ^ (v >> 31)) as u32));
}

/// Appends a `PageHeader` (parquet.thrift) in the compact protocol:
/// type (1), uncompressed and compressed size (2, 3), the CRC-32 of the
/// stored body when given (4: the standard CRC-32 of zlib and gzip, as a
/// signed 32-bit integer), then either a `DataPageHeader` (5: values,
/// encoding, RLE definition and repetition level encodings) or a
/// `DictionaryPageHeader` (7: values, PLAIN, is_sorted false).
fn page_header(
    out: &mut Vec<u8>,
    kind: PageKind,
    uncompressed: usize,
    stored: usize,
    values: u32,
    crc: Option<u32>,
) {
    let page_type = match kind {
        PageKind::Data { .. } => 0,
        PageKind::Dictionary => 2,
    };
    i32_field(out, 1, page_type);
    i32_field(out, 1, uncompressed as i32);
    i32_field(out, 1, stored as i32);
    // Field-id deltas from the last field written: 3, or 4 (the CRC).
    let last = match crc {
        Some(crc) => {
            i32_field(out, 1, crc as i32);
            4
        }
        None => 3,
    };
    match kind {
        PageKind::Data { encoding } => {
            out.push(((5 - last) << 4) | 12);
            i32_field(out, 1, values as i32);
            i32_field(out, 1, encoding_id(encoding));
            i32_field(out, 1, encoding_id(Encoding::RLE));
            i32_field(out, 1, encoding_id(Encoding::RLE));
        }
        PageKind::Dictionary => {
            out.push(((7 - last) << 4) | 12);
            i32_field(out, 1, values as i32);
            i32_field(out, 1, encoding_id(Encoding::PLAIN));
            out.push((1 << 4) | 2);
        }
    }
    out.push(0);
    out.push(0);
}

/// Appends one page, header then body (the concatenation of `parts`),
/// compressing the body with `codec` (`scratch` holds it meanwhile).
/// Returns the page's stored and uncompressed sizes, headers included.
fn write_page(
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    codec: &mut PageCompressor,
    page: Page,
    parts: &[&[u8]],
) -> Result<(usize, usize), Error> {
    let Page {
        kind,
        values,
        checksum,
    } = page;
    let raw: usize = parts.iter().map(|p| p.len()).sum();
    let start = out.len();
    if codec.codec == Compression::None {
        let crc = checksum.then(|| {
            let mut h = crc32fast::Hasher::new();
            for p in parts {
                h.update(p);
            }
            h.finalize()
        });
        out.reserve(raw + 32);
        page_header(out, kind, raw, raw, values, crc);
        for p in parts {
            out.extend_from_slice(p);
        }
        let size = out.len() - start;
        return Ok((size, size));
    }
    // A body of one part (no levels) is compressed where it lies; others
    // are put together first.
    let mut nonempty = parts.iter().filter(|p| !p.is_empty());
    let body: &[u8] = match (nonempty.next(), nonempty.next()) {
        (None, _) => &[],
        (Some(only), None) => only,
        _ => {
            scratch.clear();
            for p in parts {
                scratch.extend_from_slice(p);
            }
            scratch
        }
    };
    if let Compression::Zstd(_) = codec.codec {
        // Compressed straight into `out`, behind a header written for a
        // body as long as the raw one, then rewritten for the stored
        // length; the body moves only when that header's length differs
        // (a body that shrank enough to save a varint byte, so a small
        // one). `wide-u64` with zstd, 2M rows: 0.680 s to 0.638 s median
        // against copying every page out of the compressor's buffer. The
        // guessed CRC takes the most bytes a CRC can (5), as 15 in 16 do.
        page_header(out, kind, raw, raw, values, checksum.then_some(1 << 31));
        let guess = out.len() - start;
        let stored = codec.compress_zstd_into(body, out)?;
        let crc = checksum.then(|| crc32fast::hash(&out[start + guess..]));
        let mut header = Vec::with_capacity(guess + 8);
        page_header(&mut header, kind, raw, stored, values, crc);
        if header.len() != guess {
            let body_at = start + guess;
            let end = out.len();
            if header.len() > guess {
                out.resize(end + header.len() - guess, 0);
            }
            out.copy_within(body_at..end, start + header.len());
            out.truncate(start + header.len() + stored);
        }
        out[start..start + header.len()].copy_from_slice(&header);
        return Ok((header.len() + stored, header.len() + raw));
    }
    let stored = codec.compress(body)?;
    let crc = checksum.then(|| crc32fast::hash(stored));
    page_header(out, kind, raw, stored.len(), values, crc);
    let header = out.len() - start;
    out.extend_from_slice(stored);
    Ok((header + stored.len(), header + raw))
}

/// Writes the values of one leaf array into a page buffer, by index.
trait LeafValues {
    /// Bytes [`LeafValues::bound`] adds once for the fixed-size writes of
    /// [`LeafValues::put`] past a value's end.
    const SLACK: usize;

    /// An upper bound of the bytes that [`LeafValues::put`] needs for the
    /// values `range`, including [`LeafValues::SLACK`].
    fn bound(&self, range: std::ops::Range<usize>) -> usize;

    /// Writes value `i` at the start of `out` and returns its encoded
    /// length, or writes scratch and returns 0 when `valid` is false.
    fn put(&mut self, i: usize, valid: bool, out: &mut [u8]) -> usize;

    /// Writes the valid values `range` one after the other at the start
    /// of `out` and returns their encoded length.
    #[inline(always)]
    fn put_run(&mut self, range: std::ops::Range<usize>, out: &mut [u8]) -> usize {
        let mut at = 0;
        for i in range {
            at += self.put(i, true, &mut out[at..]);
        }
        at
    }

    /// Dictionary keys that occurred since the last call (for
    /// statistics); none by default.
    fn take_used(&mut self) -> [u64; 4] {
        [0; 4]
    }

    /// Appends the valid values `range` to `out` (by default through
    /// [`LeafValues::put_run`] into room made for them).
    #[inline(always)]
    fn extend_run(&mut self, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + self.bound(range.clone()), 0);
        let n = self.put_run(range, &mut out[at..]);
        out.truncate(at + n);
    }
}

/// `PLAIN` integers of `W` bytes, little-endian.
struct IntValues<'a, const W: usize> {
    data: &'a [u8],
}

impl<'a, const W: usize> IntValues<'a, W> {
    fn new(array: &'a ArrayRef) -> Result<Self, Error> {
        use arrow_array::types::{Int32Type, Int64Type};
        // The values buffer of a primitive array is already sliced to the
        // array's rows.
        let data = match W {
            4 => array
                .as_primitive_opt::<Int32Type>()
                .map(|a| a.values().inner().as_slice()),
            8 => array
                .as_primitive_opt::<Int64Type>()
                .map(|a| a.values().inner().as_slice()),
            _ => None,
        };
        Ok(IntValues {
            data: data.ok_or_else(|| unsupported("an Int32 or Int64 column"))?,
        })
    }
}

impl<const W: usize> LeafValues for IntValues<'_, W> {
    const SLACK: usize = 0;

    fn bound(&self, range: std::ops::Range<usize>) -> usize {
        range.len() * W
    }

    #[inline(always)]
    fn put(&mut self, i: usize, valid: bool, out: &mut [u8]) -> usize {
        out[..W].copy_from_slice(&self.data[i * W..i * W + W]);
        W * usize::from(valid)
    }

    #[inline(always)]
    fn put_run(&mut self, range: std::ops::Range<usize>, out: &mut [u8]) -> usize {
        let bytes = &self.data[range.start * W..range.end * W];
        out[..bytes.len()].copy_from_slice(bytes);
        bytes.len()
    }
    #[inline(always)]
    fn extend_run(&mut self, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.data[range.start * W..range.end * W]);
    }
}

/// `RLE_DICTIONARY` keys, mapped onto the chunk's dictionary; `used`
/// collects the keys that occur (for min/max).
struct DictValues<'a> {
    keys: &'a [u8],
    map: &'a [u8],
    /// `seen[k]` is 1 when key `k` was written for a present value since
    /// the last [`LeafValues::take_used`] (slot 256 takes the nulls'
    /// keys): a plain store per value, where or-ing a bit into a word
    /// made each value wait for the last one's.
    seen: Box<[u8; 257]>,
}

impl<'a> DictValues<'a> {
    fn new(array: &'a ArrayRef, map: &'a [u8]) -> Result<Self, Error> {
        let d: &DictionaryArray<UInt8Type> = array
            .as_dictionary_opt()
            .ok_or_else(|| unsupported("a UInt8 dictionary"))?;
        Ok(DictValues {
            keys: d.keys().values(),
            map,
            seen: Box::new([0; 257]),
        })
    }
}

impl LeafValues for DictValues<'_> {
    const SLACK: usize = 1;

    fn take_used(&mut self) -> [u64; 4] {
        let mut used = [0u64; 4];
        for (k, chunk) in self.seen[..256].chunks_exact(8).enumerate() {
            // Eight 0/1 bytes to eight bits, the first byte lowest.
            let bits = pack8(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])), 1);
            used[k / 8] |= bits << (8 * (k % 8));
        }
        self.seen.fill(0);
        used
    }

    fn bound(&self, range: std::ops::Range<usize>) -> usize {
        range.len() + 1
    }

    #[inline(always)]
    fn put(&mut self, i: usize, valid: bool, out: &mut [u8]) -> usize {
        let k = self
            .map
            .get(self.keys[i] as usize)
            .copied()
            .unwrap_or_default();
        out[0] = k;
        self.seen[if valid { usize::from(k) } else { 256 }] = 1;
        usize::from(valid)
    }
    #[inline(always)]
    fn extend_run(&mut self, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
        let (map, seen) = (self.map, &mut self.seen);
        out.extend(self.keys[range].iter().map(|&k| {
            let k = map.get(k as usize).copied().unwrap_or_default();
            seen[usize::from(k)] = 1;
            k
        }));
    }
}

/// Column-chunk buffers handed back after their bytes reached the file,
/// so that steady-state encoding allocates (and page-faults) nothing.
/// Clones share one pool.
#[derive(Debug, Default, Clone)]
pub struct BufferPool {
    free: std::sync::Arc<std::sync::Mutex<Pooled>>,
}

#[derive(Debug, Default)]
struct Pooled {
    buffers: Vec<Vec<u8>>,
    bytes: usize,
}

impl BufferPool {
    /// Most bytes kept: the chunks of a few row groups of a wide schema.
    const KEEP_BYTES: usize = 1 << 30;

    /// The smallest pooled buffer that holds `want` bytes, or a new one
    /// of that capacity (`want == 0`: the last one given back, or a new
    /// empty one).
    fn take(&self, want: usize) -> Vec<u8> {
        let Ok(mut f) = self.free.lock() else {
            return Vec::with_capacity(want);
        };
        let fit = if want == 0 {
            f.buffers.len().checked_sub(1)
        } else {
            f.buffers
                .iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= want)
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i)
        };
        match fit {
            Some(i) => {
                let v = f.buffers.swap_remove(i);
                f.bytes -= v.capacity();
                v
            }
            None => Vec::with_capacity(want),
        }
    }

    /// Returns a chunk's own buffer to the pool (dropped if still
    /// shared).
    pub fn give_back(&self, chunk: ColumnChunk) {
        let own = chunk.into_own();
        if !own.is_unique() {
            return;
        }
        let mut v = Vec::from(own);
        v.clear();
        if let Ok(mut f) = self.free.lock()
            && f.bytes + v.capacity() <= Self::KEEP_BYTES
        {
            f.bytes += v.capacity();
            f.buffers.push(v);
        }
    }
}

/// The Parquet codec of a [`Compression`].
pub fn parquet_codec(c: Compression) -> Result<PqCompression, Error> {
    Ok(match c {
        Compression::None => PqCompression::UNCOMPRESSED,
        Compression::Snappy => PqCompression::SNAPPY,
        Compression::Lz4 => PqCompression::LZ4_RAW,
        Compression::Zstd(l) => PqCompression::ZSTD(ZstdLevel::try_new(l)?),
    })
}

/// Compresses page bodies as Parquet's codecs define them: raw Snappy,
/// an LZ4 block without a size prefix (`LZ4_RAW`), a zstd frame. A zstd
/// context is made once per column and reused for every page (making one
/// per page costs as much as compressing a small page).
struct PageCompressor {
    codec: Compression,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// The last compressed page (kept to reuse its memory).
    out: Vec<u8>,
}

impl PageCompressor {
    fn new(codec: Compression) -> Self {
        PageCompressor {
            codec,
            zstd: None,
            out: Vec::new(),
        }
    }

    /// Appends the zstd frame of `page` to `out` (no copy through a
    /// buffer of its own) and returns its length.
    fn compress_zstd_into(&mut self, page: &[u8], out: &mut Vec<u8>) -> Result<usize, Error> {
        let io = |e: std::io::Error| {
            Error::Parquet(parquet::errors::ParquetError::External(Box::new(e)))
        };
        let Compression::Zstd(level) = self.codec else {
            return Err(unsupported("a zstd column"));
        };
        let z = match &mut self.zstd {
            Some(z) => z,
            None => self
                .zstd
                .insert(zstd::bulk::Compressor::new(level).map_err(io)?),
        };
        let at = out.len();
        out.reserve(zstd::zstd_safe::compress_bound(page.len()));
        // zstd writes into the capacity after the cursor.
        let mut cursor = std::io::Cursor::new(&mut *out);
        cursor.set_position(at as u64);
        let n = z.compress_to_buffer(page, &mut cursor).map_err(io)?;
        debug_assert_eq!(out.len(), at + n);
        Ok(n)
    }

    fn compress(&mut self, page: &[u8]) -> Result<&[u8], Error> {
        let io = |e: std::io::Error| {
            Error::Parquet(parquet::errors::ParquetError::External(Box::new(e)))
        };
        // Taken out for the call to `compress_zstd_into`, put back after.
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let done = match self.codec {
            Compression::None => {
                out.extend_from_slice(page);
                Ok(())
            }
            Compression::Snappy => {
                out.resize(snap::raw::max_compress_len(page.len()), 0);
                snap::raw::Encoder::new()
                    .compress(page, &mut out)
                    .map(|n| out.truncate(n))
                    .map_err(|e| io(e.into()))
            }
            Compression::Lz4 => {
                out.resize(lz4_flex::block::get_maximum_output_size(page.len()), 0);
                lz4_flex::block::compress_into(page, &mut out)
                    .map(|n| out.truncate(n))
                    .map_err(|e| io(std::io::Error::other(e)))
            }
            Compression::Zstd(_) => self.compress_zstd_into(page, &mut out).map(|_| ()),
        };
        self.out = out;
        done?;
        Ok(&self.out)
    }
}

fn unsupported(what: &str) -> Error {
    Error::InvalidConfig(format!("direct Parquet encoder: expected {what}"))
}

/// `PREFIX_MASKS[l]` keeps the first `l` bytes of a big-endian 16-byte
/// word (a table lookup instead of a variable 128-bit shift per value).
const PREFIX_MASKS: [u128; 17] = {
    let mut m = [u128::MAX; 17];
    let mut l = 0;
    while l < 16 {
        m[l] = !(u128::MAX >> (l * 8));
        l += 1;
    }
    m
};

/// The smallest and largest value of a page of `PLAIN` strings (each a
/// 4-byte length and the bytes). `values` is padded by 16 bytes for the
/// scan (see [`MinMax16`]) and restored.
fn plain_min_max(values: &mut Vec<u8>) -> Option<(&[u8], &[u8])> {
    let end = values.len();
    if end == 0 {
        return None;
    }
    values.extend_from_slice(&[0u8; 16]);
    let buf = values.as_slice();
    let len = |o: usize| u32::from_le_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]) as usize;
    let mut m = MinMax16::new(buf, 4, len(0));
    let mut o = 4 + len(0);
    while o < end {
        let l = len(o);
        m.add(buf, o + 4, l);
        o += 4 + l;
    }
    values.truncate(end);
    Some(m.get(values))
}

/// The smallest and largest of a page's byte strings kept apart from
/// their `lengths` (4 bytes each, little-endian) in `values`, padded and
/// restored as by [`plain_min_max`].
fn split_min_max<'a>(lengths: &[u8], values: &'a mut Vec<u8>) -> Option<(&'a [u8], &'a [u8])> {
    let len = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize;
    let mut lens = lengths.chunks_exact(4);
    let first = len(lens.next()?);
    let end = values.len();
    values.extend_from_slice(&[0u8; 16]);
    let buf = values.as_slice();
    let mut m = MinMax16::new(buf, 0, first);
    let mut o = first;
    for c in lens {
        let l = len(c);
        m.add(buf, o, l);
        o += l;
    }
    values.truncate(end);
    Some(m.get(values))
}

/// The smallest and largest byte strings of a buffer seen so far: each
/// its start, length and 16-byte big-endian prefix key, zero-padded and
/// masked to its length. A smaller key means a smaller string, and only
/// equal keys (rare) need a full comparison, so most values cost one
/// prefix comparison per side. The buffer holds 16 bytes past the last
/// value.
struct MinMax16 {
    lo: (usize, usize, u128),
    hi: (usize, usize, u128),
}

impl MinMax16 {
    #[inline(always)]
    fn key(buf: &[u8], v: usize, l: usize) -> u128 {
        let mut raw = [0u8; 16];
        raw.copy_from_slice(&buf[v..v + 16]);
        u128::from_be_bytes(raw) & PREFIX_MASKS[l.min(16)]
    }

    #[inline(always)]
    fn new(buf: &[u8], v: usize, l: usize) -> Self {
        let first = (v, l, Self::key(buf, v, l));
        MinMax16 {
            lo: first,
            hi: first,
        }
    }

    /// Counts the `l` bytes at `v`.
    #[inline(always)]
    fn add(&mut self, buf: &[u8], v: usize, l: usize) {
        let k = Self::key(buf, v, l);
        let (lo, hi) = (&mut self.lo, &mut self.hi);
        if k >= hi.2 && (k > hi.2 || buf[v..v + l] > buf[hi.0..hi.0 + hi.1]) {
            *hi = (v, l, k);
        }
        if k <= lo.2 && (k < lo.2 || buf[v..v + l] < buf[lo.0..lo.0 + lo.1]) {
            *lo = (v, l, k);
        }
    }

    /// The smallest and the largest, in `buf`.
    fn get<'a>(&self, buf: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        let (lo, hi) = (self.lo, self.hi);
        (&buf[lo.0..lo.0 + lo.1], &buf[hi.0..hi.0 + hi.1])
    }
}

/// `PLAIN` byte strings (a 4-byte length before each) rewritten as
/// `DELTA_LENGTH_BYTE_ARRAY`: the lengths `DELTA_BINARY_PACKED`, then the
/// bytes back to back.
fn plain_to_split(out: &mut Vec<u8>, plain: &[u8]) {
    let mut lengths = Vec::new();
    let mut bytes = Vec::with_capacity(plain.len());
    for v in plain_values(plain) {
        lengths.extend_from_slice(&(v.len() as u32).to_le_bytes());
        bytes.extend_from_slice(v);
    }
    delta_binary_packed(out, &lengths, 4);
    out.extend_from_slice(&bytes);
}

/// The byte strings of a `PLAIN` buffer (a 4-byte length before each).
fn plain_values(plain: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut o = 0;
    std::iter::from_fn(move || {
        let len = plain.get(o..o + 4)?;
        let l = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let v = plain.get(o + 4..o + 4 + l)?;
        o += 4 + l;
        Some(v)
    })
}

/// A page's smallest and largest value, as their `PLAIN` bytes.
type MinMax = (Vec<u8>, Vec<u8>);

/// The smallest and largest of a page of `PLAIN` integers of `width`
/// bytes, as their little-endian bytes.
fn int_min_max(values: &[u8], width: usize) -> Option<MinMax> {
    match width {
        4 => fixed_min_max(values, i32::from_le_bytes),
        _ => fixed_min_max(values, i64::from_le_bytes),
    }
}

/// As [`int_min_max`], ordering the values as unsigned numbers.
fn uint_min_max(values: &[u8], width: usize) -> Option<MinMax> {
    match width {
        4 => fixed_min_max(values, u32::from_le_bytes),
        _ => fixed_min_max(values, u64::from_le_bytes),
    }
}

/// Little-endian numbers that give back their bytes.
trait LeBytes: Ord + Copy {
    fn bytes(self) -> Vec<u8>;
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            fn bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
        }
    )*};
}
le_bytes!(i32, i64, u32, u64);

/// Min and max of `values` read `W` bytes at a time with `read` (a loop
/// the compiler vectorises). The build's baseline (x86-64, SSE2) has no
/// 64-bit vector comparison, so on CPUs with AVX2 the same loop runs
/// compiled for it: on `wide-u64` (50 `UInt64` columns) the baseline loop
/// was 12.7% of a run's samples (`perf record`, 2M rows).
fn fixed_min_max<const W: usize, T: LeBytes>(
    values: &[u8],
    read: impl Fn([u8; W]) -> T,
) -> Option<MinMax> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F, checked just above.
        return unsafe { fixed_min_max_avx512(values, read) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { fixed_min_max_avx2(values, read) };
    }
    fixed_min_max_loop(values, read)
}

/// [`fixed_min_max_loop`] compiled for AVX-512, which compares unsigned
/// 64-bit lanes in one instruction (AVX2 compares signed ones only, so an
/// unsigned min takes a flip of the sign bits, a compare and a blend).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fixed_min_max_avx512<const W: usize, T: LeBytes>(
    values: &[u8],
    read: impl Fn([u8; W]) -> T,
) -> Option<MinMax> {
    fixed_min_max_loop(values, read)
}

/// [`fixed_min_max_loop`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fixed_min_max_avx2<const W: usize, T: LeBytes>(
    values: &[u8],
    read: impl Fn([u8; W]) -> T,
) -> Option<MinMax> {
    fixed_min_max_loop(values, read)
}

#[inline(always)]
fn fixed_min_max_loop<const W: usize, T: LeBytes>(
    values: &[u8],
    read: impl Fn([u8; W]) -> T,
) -> Option<MinMax> {
    let mut it = values
        .chunks_exact(W)
        .map(|c| read(c.try_into().unwrap_or([0; W])));
    let first = it.next()?;
    let (lo, hi) = it.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v)));
    Some((lo.bytes(), hi.bytes()))
}

/// Min and max of a page of `PLAIN` floats of `width` bytes by IEEE 754
/// total order, NaN left out unless every value is NaN (as parquet's
/// writer orders them), and the number of NaNs.
fn float_min_max(values: &[u8], width: usize) -> (Option<MinMax>, u64) {
    // Total order as a signed integer: flip the magnitude bits of
    // negative numbers.
    fn key(bits: u64) -> i64 {
        (bits ^ ((((bits as i64) >> 63) as u64) >> 1)) as i64
    }
    let wide = |c: &[u8]| -> (u64, bool) {
        if width == 4 {
            let f = f32::from_le_bytes(c.try_into().unwrap_or([0; 4]));
            (f64::from(f).to_bits(), f.is_nan())
        } else {
            let f = f64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
            (f.to_bits(), f.is_nan())
        }
    };
    let mut nans = 0u64;
    let mut lo: Option<(i64, usize)> = None;
    let mut hi: Option<(i64, usize)> = None;
    let mut nan_lo: Option<(i64, usize)> = None;
    let mut nan_hi: Option<(i64, usize)> = None;
    for (i, c) in values.chunks_exact(width).enumerate() {
        let (bits, nan) = wide(c);
        let k = key(bits);
        let (l, h) = if nan {
            nans += 1;
            (&mut nan_lo, &mut nan_hi)
        } else {
            (&mut lo, &mut hi)
        };
        if l.is_none_or(|(m, _)| k < m) {
            *l = Some((k, i));
        }
        if h.is_none_or(|(m, _)| k > m) {
            *h = Some((k, i));
        }
    }
    let at = |i: usize| values[i * width..(i + 1) * width].to_vec();
    let pair = match (lo.or(nan_lo), hi.or(nan_hi)) {
        (Some((_, l)), Some((_, h))) => Some((at(l), at(h))),
        _ => None,
    };
    (pair, nans)
}

/// The RLE/bit-packed hybrid for keys of up to 32 bits: keys of 8 bits or
/// fewer as [`encode_hybrid`] writes them; wider ones as one RLE run when
/// every key is equal, otherwise bit-packed runs of up to [`RUN`] keys.
fn encode_hybrid_wide(out: &mut Vec<u8>, keys: &[u32], width: u8) {
    if keys.is_empty() || width == 0 {
        return;
    }
    if width <= 8 {
        // Keys of a dictionary up to 256 entries: the byte-wide encoder,
        // with its RLE runs and word-wise packing.
        let narrow: Vec<u8> = keys.iter().map(|&k| k as u8).collect();
        encode_hybrid(out, &narrow, width);
        return;
    }
    if keys.iter().all(|&k| k == keys[0]) {
        varint(out, (keys.len() as u64) << 1);
        out.extend_from_slice(&keys[0].to_le_bytes()[..usize::from(width).div_ceil(8)]);
        return;
    }
    let mut wide = Vec::with_capacity(RUN);
    for run in keys.chunks(RUN) {
        let groups = run.len().div_ceil(8);
        out.push(((groups as u8) << 1) | 1);
        wide.clear();
        wide.extend(run.iter().map(|&k| u64::from(k)));
        pack_bits(out, &wide, groups * 8, usize::from(width));
    }
}

/// `BYTE_STREAM_SPLIT`: byte `j` of every value, for `j` from 0 to
/// `width - 1`, one stream after the other. Values of 4 and 8 bytes go
/// eight at a time through a transpose of an 8x8 byte matrix in eight
/// words: 8.6 GB/s against 1.6 GB/s for a store per byte (1 MiB pages of
/// `f64`), which had cost 9% of a run of twelve float columns with zstd.
fn byte_stream_split(out: &mut Vec<u8>, values: &[u8], width: usize) {
    fn bytes(to: &mut [u8], values: &[u8], width: usize, from: usize) {
        let n = values.len() / width;
        for i in from..n {
            for j in 0..width {
                to[j * n + i] = values[i * width + j];
            }
        }
    }
    fn words<const W: usize>(to: &mut [u8], values: &[u8]) {
        let n = values.len() / W;
        let full = n / 8 * 8;
        for (b, group) in values[..full * W].chunks_exact(8 * W).enumerate() {
            let mut x = [0u64; 8];
            for (w, v) in x.iter_mut().zip(group.chunks_exact(W)) {
                let mut le = [0u8; 8];
                le[..W].copy_from_slice(v);
                *w = u64::from_le_bytes(le);
            }
            transpose8(&mut x);
            for (j, w) in x[..W].iter().enumerate() {
                to[j * n + b * 8..j * n + b * 8 + 8].copy_from_slice(&w.to_le_bytes());
            }
        }
        bytes(to, values, W, full);
    }
    let at = out.len();
    out.resize(at + values.len(), 0);
    let to = &mut out[at..];
    match width {
        4 => words::<4>(to, values),
        8 => words::<8>(to, values),
        w => bytes(to, values, w.max(1), 0),
    }
}

/// Transposes the 8x8 byte matrix whose row `k` is word `k` (byte `j` the
/// `j`-th least significant): word `j` then holds byte `j` of every row.
/// Three rounds swap 4-, 2- and 1-byte blocks across the diagonal.
#[inline(always)]
fn transpose8(x: &mut [u64; 8]) {
    for i in 0..4 {
        let t = ((x[i] >> 32) ^ x[i + 4]) & 0x0000_0000_ffff_ffff;
        x[i] ^= t << 32;
        x[i + 4] ^= t;
    }
    for i in [0, 1, 4, 5] {
        let t = ((x[i] >> 16) ^ x[i + 2]) & 0x0000_ffff_0000_ffff;
        x[i] ^= t << 16;
        x[i + 2] ^= t;
    }
    for i in [0, 2, 4, 6] {
        let t = ((x[i] >> 8) ^ x[i + 1]) & 0x00ff_00ff_00ff_00ff;
        x[i] ^= t << 8;
        x[i + 1] ^= t;
    }
}

/// Values per `DELTA_BINARY_PACKED` block, and miniblocks per block.
const DELTA_BLOCK: usize = 128;
const DELTA_MINIBLOCKS: usize = 4;

/// Encodes `values` (little-endian integers of `width` bytes, 4 or 8) as
/// `DELTA_BINARY_PACKED`: a header (block size, miniblocks per block,
/// value count, first value), then per block of 128 deltas the smallest
/// delta and four miniblocks of 32 bit-packed `delta - smallest`, each
/// with its own bit width. Deltas wrap at the value's width (32 or 64
/// bits), as the format specifies, so any values round-trip.
fn delta_binary_packed(out: &mut Vec<u8>, values: &[u8], width: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { delta_packed_avx2(out, values, width) };
        return;
    }
    delta_packed(out, values, width);
}

#[inline(always)]
fn delta_packed(out: &mut Vec<u8>, values: &[u8], width: usize) {
    if width == 4 {
        delta_packed_of::<i32>(out, values);
    } else {
        delta_packed_of::<i64>(out, values);
    }
}

/// [`delta_packed`] compiled for AVX2: a block's smallest delta is a
/// signed minimum of 32- or 64-bit lanes, which the baseline (SSE2) has
/// no instruction for. On `events` (300k rows, cachegrind)
/// `DELTA_BINARY_PACKED` went from 12.4M to 7.3M instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn delta_packed_avx2(out: &mut Vec<u8>, values: &[u8], width: usize) {
    delta_packed(out, values, width);
}

/// A signed integer of the width `DELTA_BINARY_PACKED` works in: its
/// deltas wrap around at that width.
trait DeltaInt: Copy + Ord {
    const BYTES: usize;
    const MAX: Self;
    fn load(b: &[u8]) -> Self;
    fn wrapping_sub(self, o: Self) -> Self;
    /// Its bits, unsigned (zero-extended to 64).
    fn bits(self) -> u64;
    fn zigzag(self) -> u64;
}

impl DeltaInt for i32 {
    const BYTES: usize = 4;
    const MAX: Self = i32::MAX;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    #[inline(always)]
    fn wrapping_sub(self, o: Self) -> Self {
        i32::wrapping_sub(self, o)
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
    #[inline(always)]
    fn zigzag(self) -> u64 {
        u64::from(((self << 1) ^ (self >> 31)) as u32)
    }
}

impl DeltaInt for i64 {
    const BYTES: usize = 8;
    const MAX: Self = i64::MAX;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
    #[inline(always)]
    fn wrapping_sub(self, o: Self) -> Self {
        i64::wrapping_sub(self, o)
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn zigzag(self) -> u64 {
        ((self << 1) ^ (self >> 63)) as u64
    }
}

/// [`delta_binary_packed`] for values of type `T`: a block's deltas and
/// their smallest in `T` itself (at 32 bits, four to a vector register,
/// where a 64-bit signed minimum takes a dozen instructions per pair
/// without SSE4.2), each in its own plain loop.
#[inline(always)]
fn delta_packed_of<T: DeltaInt>(out: &mut Vec<u8>, values: &[u8]) {
    let w = T::BYTES;
    let n = values.len() / w;
    let first = if n > 0 { T::load(values) } else { T::MAX };
    varint(out, DELTA_BLOCK as u64);
    varint(out, DELTA_MINIBLOCKS as u64);
    varint(out, n as u64);
    varint(out, if n > 0 { first.zigzag() } else { 0 });
    let per_mini = DELTA_BLOCK / DELTA_MINIBLOCKS;
    let mut deltas = [T::MAX; DELTA_BLOCK];
    let mut packed = [0u64; DELTA_BLOCK];
    // Value `at` is the first of the next block's deltas' minuends.
    let mut at = 1;
    while at < n {
        let len = DELTA_BLOCK.min(n - at);
        // Each value less the one before, from two views of the block
        // (no value carried from one step to the next).
        let block = &values[(at - 1) * w..(at + len) * w];
        let pairs = block.chunks_exact(w).zip(block[w..].chunks_exact(w));
        for (d, (p, v)) in deltas[..len].iter_mut().zip(pairs) {
            *d = T::load(v).wrapping_sub(T::load(p));
        }
        at += len;
        let min = deltas[..len].iter().fold(T::MAX, |m, &d| m.min(d));
        varint(out, min.zigzag());
        let minis = len.div_ceil(per_mini);
        let widths_at = out.len();
        out.extend_from_slice(&[0u8; DELTA_MINIBLOCKS]);
        for m in 0..minis {
            let range = m * per_mini..((m + 1) * per_mini).min(len);
            let mut max = 0u64;
            for (x, &d) in packed[range.clone()].iter_mut().zip(&deltas[range.clone()]) {
                *x = d.wrapping_sub(min).bits();
                max |= *x;
            }
            let bits = (64 - max.leading_zeros()) as usize;
            out[widths_at + m] = bits as u8;
            pack_bits(out, &packed[range], per_mini, bits);
        }
    }
}

/// Appends `values` bit-packed, `w` bits each, least significant bit
/// first, padded with zero values to `count` values: eight bytes are
/// stored at a time, into room made once.
fn pack_bits(out: &mut Vec<u8>, values: &[u64], count: usize, w: usize) {
    if w == 0 {
        return;
    }
    let at = out.len();
    let bytes = (count * w).div_ceil(8);
    out.resize(at + bytes, 0);
    let dst = &mut out[at..];
    let mut acc: u128 = 0;
    let mut bits = 0usize;
    let mut p = 0;
    for k in 0..count {
        let v = values.get(k).copied().unwrap_or(0);
        acc |= u128::from(v) << bits;
        bits += w;
        if bits >= 64 {
            dst[p..p + 8].copy_from_slice(&(acc as u64).to_le_bytes());
            p += 8;
            acc >>= 64;
            bits -= 64;
        }
    }
    let rest = bytes - p;
    dst[p..].copy_from_slice(&(acc as u64).to_le_bytes()[..rest]);
}

/// Bits needed for values up to `max`.
fn bit_width(max: u8) -> u8 {
    (8 - max.leading_zeros()) as u8
}

/// Levels as a 4-byte length followed by the RLE/bit-packed hybrid.
fn encode_levels(out: &mut Vec<u8>, levels: &[u8], width: u8) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    encode_hybrid(out, levels, width);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// The RLE/bit-packed hybrid: runs of at least [`MIN_RLE`] equal values
/// (found eight at a time, by comparing words) as RLE runs, the values
/// between them bit-packed in runs of up to [`RUN`] values (the last group
/// of the page padded with zeros, which its value count makes unread).
/// Levels are mostly long runs (a column without nulls is one run).
fn encode_hybrid(out: &mut Vec<u8>, values: &[u8], width: u8) {
    if values.is_empty() || width == 0 {
        return;
    }
    let n = values.len();
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&values[i..i + 8]);
        u64::from_le_bytes(w)
    };
    // `packed..i` waits to be bit-packed, a whole number of groups.
    let mut packed = 0;
    let mut i = 0;
    while i + 8 <= n {
        let v = values[i];
        if word(i) != u64::from(v) * 0x0101_0101_0101_0101 {
            i += 8;
            continue;
        }
        let mut end = i + 8;
        while end + 8 <= n && word(end) == word(i) {
            end += 8;
        }
        while end < n && values[end] == v {
            end += 1;
        }
        if end - i < MIN_RLE {
            i += 8;
            continue;
        }
        bit_pack(out, &values[packed..i], width);
        varint(out, ((end - i) as u64) << 1);
        out.push(v);
        i = end;
        packed = end;
    }
    bit_pack(out, &values[packed..], width);
}

/// Shortest run written as an RLE run: two groups of eight (a header byte
/// and the value, instead of two to sixteen bytes of bit-packed values).
const MIN_RLE: usize = 16;

/// Bit-packed runs of `values` (any length; a last partial group is
/// padded with zeros).
fn bit_pack(out: &mut Vec<u8>, values: &[u8], width: u8) {
    // The widths of levels and of one-byte dictionary keys as constants:
    // the shifts of `pack8` fold.
    match width {
        1 => bit_pack_of::<1>(out, values),
        2 => bit_pack_of::<2>(out, values),
        3 => bit_pack_of::<3>(out, values),
        4 => bit_pack_of::<4>(out, values),
        5 => bit_pack_of::<5>(out, values),
        6 => bit_pack_of::<6>(out, values),
        7 => bit_pack_of::<7>(out, values),
        // One-byte values take at most 8 bits; the caller writes no
        // bit-packed run at width 0.
        _ => {
            debug_assert!(width == 8, "bit width {width}");
            bit_pack_of::<8>(out, values)
        }
    }
}

/// [`bit_pack`] at width `W`: each group's `W` bytes are stored as a
/// whole word by index into room made for the run, then cut back.
#[inline(always)]
fn bit_pack_of<const W: usize>(out: &mut Vec<u8>, values: &[u8]) {
    for run in values.chunks(RUN) {
        let groups = run.len().div_ceil(8);
        let at = out.len();
        out.resize(at + 1 + groups * W + 8, 0);
        let buf = &mut out[at..];
        buf[0] = ((groups as u8) << 1) | 1;
        let mut p = 1;
        let mut full = run.chunks_exact(8);
        for group in &mut full {
            let x = u64::from_le_bytes(group.try_into().unwrap_or([0; 8]));
            buf[p..p + 8].copy_from_slice(&pack8(x, W).to_le_bytes());
            p += W;
        }
        let rest = full.remainder();
        if !rest.is_empty() {
            let mut x = [0u8; 8];
            x[..rest.len()].copy_from_slice(rest);
            buf[p..p + 8].copy_from_slice(&pack8(u64::from_le_bytes(x), W).to_le_bytes());
            p += W;
        }
        out.truncate(at + p);
    }
}

/// Calls `f` with each `k` whose `seen[k]` is 1 (the others are 0), in
/// increasing order, and clears them: eight marks at a time.
fn take_seen(seen: &mut [u8], mut f: impl FnMut(usize)) {
    for (w, chunk) in seen.chunks_mut(8).enumerate() {
        let mut x = [0u8; 8];
        x[..chunk.len()].copy_from_slice(chunk);
        let word = u64::from_le_bytes(x);
        if word == 0 {
            continue;
        }
        chunk.fill(0);
        let mut b = pack8(word, 1);
        while b != 0 {
            f(w * 8 + b.trailing_zeros() as usize);
            b &= b - 1;
        }
    }
}

/// Eight values below `2^w` (`w <= 8`), one per byte of `x`, packed into
/// the low `8w` bits, the first value lowest: neighbouring lanes are
/// merged in three steps (bytes into 16-bit lanes, those into 32-bit
/// lanes, those into one), instead of a shift and an or per value.
#[inline(always)]
fn pack8(x: u64, w: usize) -> u64 {
    if w == 1 {
        // Bytes of 0 or 1: the multiply moves byte i's bit to bit 56 + i
        // (every partial product lands on its own bit, so nothing carries).
        return x.wrapping_mul(0x0102_0408_1020_4080) >> 56;
    }
    const B: u64 = 0x00ff_00ff_00ff_00ff;
    const H: u64 = 0x0000_ffff_0000_ffff;
    let x = (x & B) | ((x >> 8) & B) << w;
    let x = (x & H) | ((x >> 16) & H) << (2 * w);
    (x & 0xffff_ffff) | (x >> 32) << (4 * w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_stream_split_puts_each_byte_significance_together() {
        for width in [1usize, 2, 4, 8, 16] {
            for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000] {
                let values: Vec<u8> = (0..n * width).map(|i| (i * 31 + i / 7) as u8).collect();
                let mut out = vec![0xAB];
                byte_stream_split(&mut out, &values, width);
                assert_eq!(out.len(), 1 + values.len());
                for i in 0..n {
                    for j in 0..width {
                        assert_eq!(
                            out[1 + j * n + i],
                            values[i * width + j],
                            "w{width} n{n} {i} {j}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn hybrid_bit_packing_is_lsb_first() {
        let mut out = Vec::new();
        encode_hybrid(&mut out, &[1, 0, 1, 1, 0, 0, 0, 1, 1], 1);
        // Two groups: header (2 << 1) | 1, then 0b1000_1101, 0b0000_0001.
        assert_eq!(out, vec![5, 0b1000_1101, 1]);
        let mut out = Vec::new();
        encode_hybrid(&mut out, &[4, 3, 2, 1, 0, 1, 2, 3], 3);
        let bits: u32 = [4u32, 3, 2, 1, 0, 1, 2, 3]
            .iter()
            .enumerate()
            .map(|(i, v)| v << (3 * i))
            .sum();
        assert_eq!(out, [&[3u8][..], &bits.to_le_bytes()[..3]].concat());
    }

    /// Decodes the hybrid encoding (the reading side of the format).
    fn decode_hybrid(mut b: &[u8], width: usize, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        while out.len() < n {
            let (mut header, mut shift) = (0usize, 0);
            loop {
                let byte = b[0];
                b = &b[1..];
                header |= usize::from(byte & 0x7f) << shift;
                shift += 7;
                if byte < 0x80 {
                    break;
                }
            }
            if header & 1 == 0 {
                out.extend(std::iter::repeat_n(b[0], header >> 1));
                b = &b[1..];
            } else {
                for _ in 0..header >> 1 {
                    let mut bits = 0u64;
                    for (i, &x) in b[..width].iter().enumerate() {
                        bits |= u64::from(x) << (8 * i);
                    }
                    b = &b[width..];
                    out.extend((0..8).map(|i| ((bits >> (i * width)) & ((1 << width) - 1)) as u8));
                }
            }
        }
        assert!(b.is_empty(), "{} bytes left", b.len());
        out.truncate(n);
        out
    }

    #[test]
    fn pack8_matches_a_shift_per_value() {
        let mut state = 3u64;
        for w in 1..=8usize {
            for _ in 0..500 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let x = state & (0x0101_0101_0101_0101 * ((1u64 << w) - 1));
                let want = (0..8).fold(0u64, |acc, i| acc | ((x >> (8 * i)) & 0xff) << (i * w));
                assert_eq!(pack8(x, w), want, "w {w} x {x:#x}");
            }
        }
    }

    #[test]
    fn hybrid_runs_round_trip() {
        // Runs of every length around the group size and the RLE
        // threshold, at odd offsets, between random values.
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize
        };
        for width in [1u8, 2, 3, 5, 8] {
            let top = (1usize << width) - 1;
            for _ in 0..200 {
                let mut values = Vec::new();
                while values.len() < 700 {
                    let v = (next() % (top + 1)) as u8;
                    let len = [1, 7, 8, 9, 15, 16, 17, 40, 600][next() % 9];
                    values.extend(std::iter::repeat_n(v, len));
                }
                values.truncate(next() % 700 + 1);
                let mut out = Vec::new();
                encode_hybrid(&mut out, &values, width);
                assert_eq!(
                    decode_hybrid(&out, usize::from(width), values.len()),
                    values
                );
            }
        }
        // Long runs cost a few bytes, whatever surrounds them.
        let mut levels = vec![0u8; 3];
        levels.extend([1u8; 10_000]);
        levels.push(0);
        let mut out = Vec::new();
        encode_hybrid(&mut out, &levels, 1);
        assert!(out.len() < 10, "{out:?}");
    }

    #[test]
    fn constant_runs_use_one_rle_run() {
        let mut out = Vec::new();
        encode_hybrid(&mut out, &[1; 300], 1);
        // 300 << 1 = 600 as a varint, then the value.
        assert_eq!(out, vec![0xd8, 0x04, 1]);
    }

    #[test]
    fn min_max_by_prefix_matches_a_plain_comparison() {
        let words: Vec<&[u8]> = vec![
            b"ab",
            b"ab\0",
            b"a",
            b"",
            b"abcdefghijklmnopq",
            b"abcdefghijklmnopr",
            b"abcdefghijklmnop",
            b"zz",
            b"z",
            b"\xff",
            b"\xff\x00",
        ];
        for start in 0..words.len() {
            let mut page = Vec::new();
            for w in words.iter().cycle().skip(start).take(words.len()) {
                page.extend_from_slice(&(w.len() as u32).to_le_bytes());
                page.extend_from_slice(w);
            }
            let before = page.clone();
            let (lo, hi) = plain_min_max(&mut page).unwrap();
            assert_eq!(lo, *words.iter().min().unwrap());
            assert_eq!(hi, *words.iter().max().unwrap());
            assert_eq!(page, before);
        }
    }

    use std::sync::Arc;

    use bytes::Bytes;

    use arrow_array::{
        Int32Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray, UInt8Array,
        builder::{ListBuilder, StringBuilder, StringDictionaryBuilder, StructBuilder},
    };
    use arrow_schema::{Field, Fields, Schema};
    use parquet::arrow::{
        ArrowWriter, arrow_reader::ParquetRecordBatchReaderBuilder,
        arrow_writer::ArrowWriterOptions,
    };

    /// Writes each group of batches as one row group through the direct
    /// encoder and reads the file back with parquet's reader.
    fn round_trip(schema: Arc<Schema>, groups: &[&[RecordBatch]]) -> Vec<RecordBatch> {
        read_all(write_direct(schema, groups))
    }

    /// Every batch of a Parquet file in memory.
    fn read_all(file: Bytes) -> Vec<RecordBatch> {
        ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn rows(batches: &[RecordBatch]) -> Vec<String> {
        strata_testkit::readback::rows_as_text(batches).unwrap()
    }

    #[test]
    fn edge_shapes_round_trip() {
        // Nullable list of nullable structs of a required string and a
        // nullable dictionary; null lists, empty lists, null entries.
        let entry = Fields::from(vec![
            Field::new("s", DataType::Utf8, false),
            Field::new(
                "d",
                DataType::Dictionary(Box::new(DataType::UInt8), Box::new(DataType::Utf8)),
                true,
            ),
        ]);
        let item = Arc::new(Field::new("item", DataType::Struct(entry.clone()), true));
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("l", DataType::List(item.clone()), true),
        ]));
        let batch = |dict: &[&str], seed: usize| {
            let mut lb = ListBuilder::new(StructBuilder::new(
                entry.clone(),
                vec![
                    Box::new(StringBuilder::new()),
                    Box::new(StringDictionaryBuilder::<UInt8Type>::new()),
                ],
            ))
            .with_field(item.clone());
            let mut ids = StringBuilder::new();
            for r in 0..3000usize {
                let k = (r * 7 + seed) % 11;
                ids.append_value(format!("row-{r:05}-{}", "x".repeat(k * 5)));
                match k {
                    0 => lb.append(false),
                    1 => lb.append(true),
                    _ => {
                        for e in 0..(k % 4 + 1) {
                            let st = lb.values();
                            let valid = (r + e) % 5 != 0;
                            st.field_builder::<StringBuilder>(0)
                                .unwrap()
                                .append_value(if valid {
                                    format!("{r}.{e}")
                                } else {
                                    String::new()
                                });
                            let d = st
                                .field_builder::<StringDictionaryBuilder<UInt8Type>>(1)
                                .unwrap();
                            if (r + e) % 3 == 0 {
                                d.append_null();
                            } else {
                                d.append_value(dict[(r + e) % dict.len()]);
                            }
                            st.append(valid);
                        }
                        lb.append(true);
                    }
                }
            }
            RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(ids.finish()), Arc::new(lb.finish())],
            )
            .unwrap()
        };
        let a = batch(&["b", "a", "c"], 0);
        // Another dictionary order and a new value; and sliced batches
        // (offsets and bitmaps not starting at zero).
        let b = batch(&["c", "zz", "a"], 5);
        // One row group per batch, then one row group whose dictionary
        // grows from batch to batch.
        let inputs = vec![
            a.clone(),
            b.slice(13, 2000),
            a.slice(1, 1),
            b.slice(2999, 1),
        ];
        let groups: Vec<&[RecordBatch]> = inputs.iter().map(std::slice::from_ref).collect();
        let got = round_trip(schema.clone(), &groups);
        assert_eq!(rows(&got), rows(&inputs));
        let got = round_trip(schema.clone(), &[&inputs]);
        assert_eq!(rows(&got), rows(&inputs));
    }

    #[test]
    fn required_list_with_required_items() {
        let entry = Fields::from(vec![Field::new("s", DataType::Utf8, true)]);
        let item = Arc::new(Field::new("item", DataType::Struct(entry.clone()), false));
        let schema = Arc::new(Schema::new(vec![Field::new(
            "l",
            DataType::List(item.clone()),
            false,
        )]));
        let values = StringArray::from(vec![Some("a"), None, Some("c"), Some("")]);
        let entries = StructArray::new(entry, vec![Arc::new(values)], None);
        let list = ListArray::new(
            item,
            arrow_buffer::OffsetBuffer::new(vec![0, 2, 2, 4].into()),
            Arc::new(entries),
            None,
        );
        let input = RecordBatch::try_new(schema.clone(), vec![Arc::new(list)]).unwrap();
        let got = round_trip(schema, &[std::slice::from_ref(&input)]);
        assert_eq!(rows(&got), rows(&[input]));
    }

    /// Sibling leaves copy each other's walks and level pages: `a` and `b`
    /// (no nulls of their own) share, `c` (with nulls) must not, and the
    /// second batch (same rows, other list nulls and lengths) must not
    /// reuse the first's. Written batch by batch, as the pipeline does.
    #[test]
    fn siblings_share_levels_only_when_equal() {
        let entry = Fields::from(vec![
            Field::new("a", DataType::Int32, false),
            Field::new("b", DataType::Float64, false),
            Field::new("c", DataType::Int64, true),
        ]);
        let item = Arc::new(Field::new("item", DataType::Struct(entry.clone()), false));
        let schema = Arc::new(Schema::new(vec![Field::new(
            "l",
            DataType::List(item.clone()),
            true,
        )]));
        let batch = |seed: usize| {
            let rows = 5000;
            let lens: Vec<usize> = (0..rows).map(|i| (i * 7 + seed) % 4).collect();
            let valid: Vec<bool> = (0..rows).map(|i| !(i + seed).is_multiple_of(3)).collect();
            let lens: Vec<usize> = lens
                .iter()
                .zip(&valid)
                .map(|(&n, &v)| n * usize::from(v))
                .collect();
            let n: usize = lens.iter().sum();
            let a = Int32Array::from_iter_values((0..n).map(|i| i as i32));
            let b = arrow_array::Float64Array::from_iter_values((0..n).map(|i| i as f64 * 0.5));
            let c = arrow_array::Int64Array::from_iter(
                (0..n).map(|i| (i % 5 != seed % 5).then_some(i as i64)),
            );
            let entries = StructArray::new(
                entry.clone(),
                vec![Arc::new(a), Arc::new(b), Arc::new(c)],
                None,
            );
            let list = ListArray::new(
                item.clone(),
                arrow_buffer::OffsetBuffer::from_lengths(lens),
                Arc::new(entries),
                Some(arrow_buffer::NullBuffer::from(valid)),
            );
            RecordBatch::try_new(schema.clone(), vec![Arc::new(list)]).unwrap()
        };
        let input = [batch(0), batch(1)];
        let (mut file, shredder) = direct_file(&schema);
        let mut leaves = shredder.row_group();
        for b in &input {
            for l in &mut leaves {
                l.write(b).unwrap();
            }
        }
        let pool = BufferPool::default();
        append_group(&mut file, &mut leaves, &pool);
        let got = read_all(Bytes::from(file.into_inner().unwrap()));
        assert_eq!(rows(&got), rows(&input));
    }

    #[test]
    fn pooled_buffers_fit_the_size_asked_for() {
        let pool = BufferPool::default();
        for cap in [1000usize, 10, 100] {
            let mut f = pool.free.lock().unwrap();
            f.bytes += cap;
            f.buffers.push(Vec::with_capacity(cap));
        }
        // The smallest that holds 50 bytes.
        let v = pool.take(50);
        assert!((100..1000).contains(&v.capacity()), "{}", v.capacity());
        // None holds 5000: a new buffer, the pool untouched.
        assert!(pool.take(5000).capacity() >= 5000);
        assert_eq!(pool.free.lock().unwrap().buffers.len(), 2);
        // No size known: the last one given back.
        assert!(pool.take(0).capacity() >= 10);
        assert_eq!(pool.free.lock().unwrap().buffers.len(), 1);
        assert!(pool.take(1).capacity() >= 1);
        assert!(pool.free.lock().unwrap().buffers.is_empty());
        assert_eq!(pool.free.lock().unwrap().bytes, 0);
    }

    /// Null lists whose offsets still span entries (Arrow allows it; the
    /// entries are not part of the value), at two depths, next to empty
    /// lists and runs of present ones; whole and sliced.
    #[test]
    fn null_lists_spanning_entries_round_trip() {
        use arrow_buffer::{NullBuffer, OffsetBuffer};
        let inner_item = Arc::new(Field::new("item", DataType::Utf8, false));
        let entry = Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("m", DataType::List(inner_item.clone()), true),
        ]);
        let item = Arc::new(Field::new("item", DataType::Struct(entry.clone()), false));
        let schema = Arc::new(Schema::new(vec![Field::new(
            "l",
            DataType::List(item.clone()),
            true,
        )]));
        // 12 entries; inner lists: entry e has e % 3 strings, entries 4
        // and 9 null lists spanning two strings each.
        let lens: Vec<usize> = (0..12)
            .map(|e| if e == 4 || e == 9 { 2 } else { e % 3 })
            .collect();
        let mut offs = vec![0i32];
        for l in &lens {
            offs.push(offs.last().unwrap() + *l as i32);
        }
        let strings =
            StringArray::from_iter_values((0..*offs.last().unwrap()).map(|i| format!("s{i}")));
        let inner = ListArray::new(
            inner_item,
            OffsetBuffer::new(offs.into()),
            Arc::new(strings),
            Some(NullBuffer::from(
                (0..12).map(|e| e != 4 && e != 9).collect::<Vec<_>>(),
            )),
        );
        let a = Int64Array::from(
            (0..12)
                .map(|i| (i % 4 != 1).then_some(i * 10))
                .collect::<Vec<_>>(),
        );
        let entries = StructArray::new(entry, vec![Arc::new(a), Arc::new(inner)], None);
        // Rows: [0,2) present, [2,5) null spanning 3, [5,5) empty,
        // [5,6) present, [6,8) null spanning 2, [8,12) present, null empty.
        let outer = ListArray::new(
            item,
            OffsetBuffer::new(vec![0, 2, 5, 5, 6, 8, 12, 12].into()),
            Arc::new(entries),
            Some(NullBuffer::from(vec![
                true, false, true, true, false, true, false,
            ])),
        );
        let input = RecordBatch::try_new(schema.clone(), vec![Arc::new(outer)]).unwrap();
        for batch in [
            input.clone(),
            input.slice(1, 5),
            input.slice(2, 1),
            input.slice(4, 3),
        ] {
            let got = round_trip(schema.clone(), &[std::slice::from_ref(&batch)]);
            assert_eq!(rows(&got), rows(std::slice::from_ref(&batch)));
        }
    }

    /// Random shapes, nullability, values, batch splits and row groups,
    /// from fixed seeds: what the direct encoder writes, parquet reads back
    /// unchanged.
    #[test]
    fn random_shapes_round_trip() {
        use arrow_array::{ArrayRef, DictionaryArray};
        use arrow_buffer::{NullBuffer, OffsetBuffer};
        use strata_gen::rng::{StreamKey, below, hi};

        for seed in 0..60u64 {
            let key = StreamKey::new(seed, 99);
            let mut draw_n = 0u64;
            let mut draw = |n: u32| {
                draw_n += 1;
                below(hi(key.first(draw_n)), n) as usize
            };
            let words = [
                "",
                "a",
                "ab",
                "abc",
                "b",
                "zz",
                "x\u{e9}",
                "a long value past 32 bytes ........",
            ];
            let string = |nullable: bool, len: usize, draw: &mut dyn FnMut(u32) -> usize| {
                let v: Vec<Option<String>> = (0..len)
                    .map(|i| {
                        if nullable && draw(4) == 0 {
                            None
                        } else {
                            Some(format!(
                                "{}{}",
                                words[draw(words.len() as u32)],
                                i % (draw(3) + 1)
                            ))
                        }
                    })
                    .collect();
                Arc::new(StringArray::from(v)) as ArrayRef
            };
            let dict_values = Arc::new(StringArray::from(vec!["m", "w", "h", "", "q"]));
            let dict = |nullable: bool, len: usize, draw: &mut dyn FnMut(u32) -> usize| {
                let keys: Vec<Option<u8>> = (0..len)
                    .map(|_| (!nullable || draw(5) != 0).then(|| draw(5) as u8))
                    .collect();
                Arc::new(DictionaryArray::new(
                    UInt8Array::from(keys),
                    dict_values.clone(),
                )) as ArrayRef
            };
            let ints =
                |nullable: bool, len: usize, wide: bool, draw: &mut dyn FnMut(u32) -> usize| {
                    let v: Vec<Option<i64>> = (0..len)
                        .map(|_| {
                            (!nullable || draw(4) != 0).then(|| {
                                let magnitude = [3, 1000, 1 << 20][draw(3)];
                                draw(2 * magnitude) as i64 - magnitude as i64
                            })
                        })
                        .collect();
                    if wide {
                        Arc::new(Int64Array::from(v)) as ArrayRef
                    } else {
                        let v: Vec<Option<i32>> =
                            v.into_iter().map(|x| x.map(|x| x as i32)).collect();
                        Arc::new(Int32Array::from(v)) as ArrayRef
                    }
                };
            // 0: Utf8, 1: dictionary, 2: Int32, 3: Int64.
            let leaf_type = |kind: usize| match kind {
                0 => DataType::Utf8,
                1 => DataType::Dictionary(Box::new(DataType::UInt8), Box::new(DataType::Utf8)),
                2 => DataType::Int32,
                _ => DataType::Int64,
            };
            let leaf = |kind: usize,
                        nullable: bool,
                        len: usize,
                        draw: &mut dyn FnMut(u32) -> usize| match kind {
                0 => string(nullable, len, draw),
                1 => dict(nullable, len, draw),
                k => ints(nullable, len, k == 3, draw),
            };
            let rows = draw(300);
            let mut fields = Vec::new();
            let mut columns: Vec<ArrayRef> = Vec::new();
            // A flat column.
            let (flat_nullable, flat_kind) = (draw(2) == 1, draw(4));
            fields.push(Field::new("f", leaf_type(flat_kind), flat_nullable));
            columns.push(leaf(flat_kind, flat_nullable, rows, &mut draw));
            // A list of structs of one to three leaves.
            let (list_nullable, item_nullable) = (draw(2) == 1, draw(2) == 1);
            let mut offsets = vec![0i32];
            let mut list_valid = Vec::new();
            for _ in 0..rows {
                let valid = !list_nullable || draw(4) != 0;
                let n = if valid { draw(4) } else { 0 };
                offsets.push(offsets.last().copied().unwrap_or(0) + n as i32);
                list_valid.push(valid);
            }
            let entries = *offsets.last().unwrap_or(&0) as usize;
            let mut children = Vec::new();
            let mut child_arrays = Vec::new();
            for c in 0..draw(3) + 1 {
                let (nullable, kind) = (draw(2) == 1, draw(4));
                children.push(Field::new(format!("c{c}"), leaf_type(kind), nullable));
                child_arrays.push(leaf(kind, nullable, entries, &mut draw));
            }
            let children = Fields::from(children);
            let item_nulls = item_nullable
                .then(|| NullBuffer::from((0..entries).map(|_| draw(5) != 0).collect::<Vec<_>>()));
            let item = Arc::new(Field::new(
                "item",
                DataType::Struct(children.clone()),
                item_nullable,
            ));
            let entries_array = StructArray::new(children, child_arrays, item_nulls);
            let list = ListArray::new(
                item.clone(),
                OffsetBuffer::new(offsets.into()),
                Arc::new(entries_array),
                list_nullable.then(|| NullBuffer::from(list_valid)),
            );
            fields.push(Field::new("l", DataType::List(item), list_nullable));
            columns.push(Arc::new(list));
            let schema = Arc::new(Schema::new(fields));
            let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
            // Random batch splits and row groups.
            let mut batches = Vec::new();
            let mut at = 0;
            while at < rows {
                let n = (draw(80) + 1).min(rows - at);
                batches.push(batch.slice(at, n));
                at += n;
            }
            let mut groups: Vec<&[RecordBatch]> = Vec::new();
            let mut rest = batches.as_slice();
            while !rest.is_empty() {
                let (g, r) = rest.split_at((draw(3) + 1).min(rest.len()));
                groups.push(g);
                rest = r;
            }
            let got = round_trip(schema.clone(), &groups);
            assert_eq!(
                rows_of(&got),
                rows_of(std::slice::from_ref(&batch)),
                "seed {seed}"
            );
            // Rows gathered from the pieces in a random order (repeats
            // allowed) read back as `interleave` gathers them.
            let pairs: Vec<(usize, usize)> = (0..draw(400))
                .filter_map(|_| {
                    let b = draw(batches.len().max(1) as u32);
                    let n = batches.get(b)?.num_rows();
                    (n > 0).then(|| (b, draw(n as u32)))
                })
                .collect();
            let refs: Vec<&RecordBatch> = batches.iter().collect();
            if !refs.is_empty() {
                let want =
                    arrow_select::interleave::interleave_record_batch(&refs, &pairs).unwrap();
                let got = gather_round_trip(schema.clone(), &batches, &pairs);
                assert_eq!(rows_of(&got), rows_of(&[want]), "seed {seed} (gather)");
            }
            assert_eq!(
                chunk_statistics(&write_direct(schema.clone(), &groups)),
                chunk_statistics(&write_arrow(schema.clone(), &groups)),
                "seed {seed}"
            );
            // With integers delta-encoded: the same rows and statistics.
            let delta = write_direct_with(schema.clone(), &groups, true);
            assert_eq!(
                chunk_statistics(&delta),
                chunk_statistics(&write_arrow(schema.clone(), &groups)),
                "seed {seed} (delta)"
            );
            let got: Vec<RecordBatch> = read_all(delta);
            assert_eq!(
                rows_of(&got),
                rows_of(std::slice::from_ref(&batch)),
                "seed {seed} (delta)"
            );
        }
    }

    fn rows_of(batches: &[RecordBatch]) -> Vec<String> {
        rows(batches)
    }

    /// Min, max and null count of every column chunk, as text.
    fn chunk_statistics(file: &Bytes) -> Vec<String> {
        use parquet::file::{
            reader::FileReader,
            serialized_reader::{ReadOptionsBuilder, SerializedFileReader},
        };
        let options = ReadOptionsBuilder::new().with_page_index().build();
        let reader = SerializedFileReader::new_with_options(file.clone(), options).unwrap();
        let md = reader.metadata();
        let mut out = Vec::new();
        for (g, rg) in md.row_groups().iter().enumerate() {
            for (c, col) in rg.columns().iter().enumerate() {
                let st = col.statistics().unwrap();
                out.push(format!(
                    "{g}/{c}: min {:?} max {:?} nulls {:?} nans {:?}",
                    st.min_bytes_opt(),
                    st.max_bytes_opt(),
                    st.null_count_opt(),
                    st.nan_count_opt()
                ));
            }
        }
        out
    }

    /// A file writer for `schema` in memory, and the direct encoder's
    /// shredder for it (uncompressed).
    fn direct_file(
        schema: &Arc<Schema>,
    ) -> (
        parquet::file::writer::SerializedFileWriter<Vec<u8>>,
        Shredder,
    ) {
        let writer = ArrowWriter::try_new_with_options(
            Vec::new(),
            schema.clone(),
            ArrowWriterOptions::new(),
        )
        .unwrap();
        let (file, _) = writer.into_serialized_writer().unwrap();
        let shredder = Shredder::supports(schema, file.schema_descr(), Compression::None)
            .expect("shape supported");
        (file, shredder)
    }

    /// Closes `leaves` and appends their chunks to `file` as a row group.
    fn append_group(
        file: &mut parquet::file::writer::SerializedFileWriter<Vec<u8>>,
        leaves: &mut [LeafEncoder],
        pool: &BufferPool,
    ) {
        let mut rg = file.next_row_group().unwrap();
        for l in leaves {
            let (bytes, close) = l.close(pool).unwrap();
            rg.append_column(&bytes, close).unwrap();
        }
        rg.close().unwrap();
    }

    /// Writes the rows `pairs` gathers from `batches` as one row group
    /// through the direct encoder and reads the file back.
    fn gather_round_trip(
        schema: Arc<Schema>,
        batches: &[RecordBatch],
        pairs: &[(usize, usize)],
    ) -> Vec<RecordBatch> {
        let (mut file, shredder) = direct_file(&schema);
        let pool = BufferPool::default();
        let mut leaves = shredder.row_group();
        // In two calls, to cross a call boundary.
        let (a, b) = pairs.split_at(pairs.len() / 2);
        for l in &mut leaves {
            l.write_gather(batches, a).unwrap();
            l.write_gather(batches, b).unwrap();
        }
        append_group(&mut file, &mut leaves, &pool);
        let bytes = Bytes::from(file.into_inner().unwrap());
        read_all(bytes)
    }

    #[test]
    fn gather_rejects_rows_that_do_not_exist() {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![1, 2]))])
                .unwrap();
        let parquet = parquet::arrow::ArrowSchemaConverter::new()
            .convert(&schema)
            .unwrap();
        let shredder = Shredder::supports(&schema, &parquet, Compression::None).unwrap();
        let batches = [batch];
        assert!(check_gather(&batches, &[(0, 2)]).is_err());
        assert!(check_gather(&batches, &[(1, 0)]).is_err());
        check_gather(&batches, &[(0, 1), (0, 0)]).unwrap();
        let mut leaves = shredder.row_group();
        leaves[0].write_gather(&batches, &[(0, 1), (0, 0)]).unwrap();
    }

    /// The file the direct encoder writes for `groups`, one row group each.
    fn write_direct(schema: Arc<Schema>, groups: &[&[RecordBatch]]) -> Bytes {
        write_direct_with(schema, groups, false)
    }

    /// [`write_direct`], with integers `DELTA_BINARY_PACKED` when `delta`.
    fn write_direct_with(schema: Arc<Schema>, groups: &[&[RecordBatch]], delta: bool) -> Bytes {
        let (mut file, mut shredder) = direct_file(&schema);
        if delta {
            shredder = shredder.delta_and_split_for_all();
        }
        let pool = BufferPool::default();
        for group in groups {
            let mut leaves = shredder.row_group();
            for l in &mut leaves {
                for b in *group {
                    l.write(b).unwrap();
                }
            }
            append_group(&mut file, &mut leaves, &pool);
        }
        Bytes::from(file.into_inner().unwrap())
    }

    /// Both encoders give `batch` the same chunk statistics, and the
    /// direct encoder's file reads back its rows.
    fn assert_encoders_agree(schema: Arc<Schema>, batch: &RecordBatch, what: &str) {
        let groups = [std::slice::from_ref(batch)];
        assert_eq!(
            chunk_statistics(&write_direct(schema.clone(), &groups)),
            chunk_statistics(&write_arrow(schema.clone(), &groups)),
            "{what}"
        );
        assert_eq!(
            rows(&round_trip(schema, &groups)),
            rows(groups[0]),
            "{what}"
        );
    }

    /// The file parquet's `ArrowWriter` writes for `groups`, one row group
    /// each, with page-level statistics.
    fn write_arrow(schema: Arc<Schema>, groups: &[&[RecordBatch]]) -> Bytes {
        let props = parquet::file::properties::WriterProperties::builder()
            .set_statistics_enabled(parquet::file::properties::EnabledStatistics::Page)
            .build();
        let mut w = ArrowWriter::try_new(Vec::new(), schema, Some(props)).unwrap();
        for group in groups {
            for b in *group {
                w.write(b).unwrap();
            }
            w.flush().unwrap();
        }
        Bytes::from(w.into_inner().unwrap())
    }

    /// The baseline build of `DELTA_BINARY_PACKED` and the one the CPU
    /// picks (AVX2 where it has it) write the same bytes, for both widths
    /// and lengths around the block and miniblock sizes: fixed seed.
    #[test]
    fn delta_packed_builds_agree() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for width in [4, 8] {
            for len in [0usize, 1, 2, 31, 32, 33, 128, 129, 130, 1000] {
                for spread in [3u64, 1 << 20, u64::MAX] {
                    let values: Vec<u8> = (0..len * width)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            (x % spread.clamp(1, 256)) as u8
                        })
                        .collect();
                    let (mut base, mut picked) = (Vec::new(), Vec::new());
                    delta_packed(&mut base, &values, width);
                    delta_binary_packed(&mut picked, &values, width);
                    assert_eq!(base, picked, "width {width}, {len} values, spread {spread}");
                }
            }
        }
    }

    /// `DELTA_BINARY_PACKED` integers read back unchanged at every length
    /// around the block and miniblock sizes, with overflowing deltas, nulls
    /// and whole-null pages.
    #[test]
    fn delta_packed_integers_round_trip() {
        use parquet::file::reader::FileReader;
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Int32, false),
        ]));
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in [
            1usize, 2, 3, 31, 32, 33, 127, 128, 129, 130, 161, 300, 25_000,
        ] {
            for pattern in 0..4 {
                let a: Vec<Option<i64>> = (0..len)
                    .map(|i| match pattern {
                        // Sorted with small steps.
                        0 => Some(i as i64 * 3 + (next() % 3) as i64),
                        // Anything, so deltas overflow.
                        1 => Some(next() as i64),
                        // The extremes, alternating, and nulls.
                        2 => (i % 5 != 0).then_some(if i % 2 == 0 { i64::MIN } else { i64::MAX }),
                        // All null.
                        _ => None,
                    })
                    .collect();
                let b: Vec<i32> = (0..len)
                    .map(|i| match pattern {
                        0 => i as i32,
                        1 | 3 => next() as i32,
                        _ => {
                            if i % 2 == 0 {
                                i32::MIN
                            } else {
                                i32::MAX
                            }
                        }
                    })
                    .collect();
                let batch = RecordBatch::try_new(
                    schema.clone(),
                    vec![Arc::new(Int64Array::from(a)), Arc::new(Int32Array::from(b))],
                )
                .unwrap();
                let file = write_direct_with(schema.clone(), &[std::slice::from_ref(&batch)], true);
                let reader =
                    parquet::file::serialized_reader::SerializedFileReader::new(file.clone())
                        .unwrap();
                let encodings = reader
                    .metadata()
                    .row_group(0)
                    .column(1)
                    .encodings()
                    .collect::<Vec<_>>();
                assert!(
                    encodings.contains(&Encoding::DELTA_BINARY_PACKED),
                    "{encodings:?}"
                );
                let got: Vec<RecordBatch> = read_all(file);
                assert_eq!(
                    rows(&got),
                    rows(std::slice::from_ref(&batch)),
                    "{len} rows, pattern {pattern}"
                );
            }
        }
    }

    /// Dictionary keys count for the page they land in, also when a page
    /// closes inside a write or exactly at its end, and do not carry into
    /// the next row group.
    #[test]
    fn dictionary_statistics_follow_the_pages() {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "d",
            DataType::Dictionary(Box::new(DataType::UInt8), Box::new(DataType::Utf8)),
            false,
        )]));
        let batch = |values: Vec<&str>| {
            let d: arrow_array::DictionaryArray<UInt8Type> = values.into_iter().collect();
            RecordBatch::try_new(schema.clone(), vec![Arc::new(d)]).unwrap()
        };
        // One write of exactly one page, its last row the largest key.
        let mut v = vec!["b"; PAGE_ROWS - 1];
        v.push("z");
        let exact = batch(v);
        // Pages closing inside writes of 8192 rows.
        let split: Vec<RecordBatch> = (0..4)
            .map(|k| {
                batch(
                    (0..8192)
                        .map(|i| match k * 8192 + i {
                            r if r < 16_384 => "m",
                            r if r < 20_480 => "q",
                            _ => "c",
                        })
                        .collect(),
                )
            })
            .collect();
        for groups in [
            vec![std::slice::from_ref(&exact)],
            vec![
                std::slice::from_ref(&exact),
                std::slice::from_ref(&split[0]),
            ],
            vec![&split[..]],
        ] {
            assert_eq!(
                chunk_statistics(&write_direct(schema.clone(), &groups)),
                chunk_statistics(&write_arrow(schema.clone(), &groups)),
            );
        }
    }

    /// Float statistics leave NaN out unless a chunk holds nothing else,
    /// and order -0.0 before +0.0, as parquet's writer does; large lists
    /// and booleans at depth round-trip.
    #[test]
    fn float_statistics_and_other_types_match_parquets_writer() {
        use arrow_array::{BooleanArray, Float32Array, Float64Array, LargeListArray};
        let nan = f64::NAN;
        let cases: Vec<Vec<Option<f64>>> = vec![
            vec![Some(1.0), Some(nan), Some(-2.0), None],
            vec![Some(nan), Some(-nan), None],
            vec![Some(-0.0), Some(0.0)],
            vec![Some(0.0), Some(-0.0), Some(nan)],
            vec![Some(-0.0)],
            vec![None, None],
            vec![Some(f64::INFINITY), Some(f64::NEG_INFINITY), Some(nan)],
        ];
        for (i, case) in cases.iter().enumerate() {
            let f64s = Float64Array::from(case.clone());
            let f32s =
                Float32Array::from(case.iter().map(|v| v.map(|v| v as f32)).collect::<Vec<_>>());
            let bools =
                BooleanArray::from(case.iter().map(|v| v.map(|v| v > 0.0)).collect::<Vec<_>>());
            let item = Arc::new(Field::new("item", DataType::Float64, true));
            let large = LargeListArray::new(
                item.clone(),
                arrow_buffer::OffsetBuffer::from_lengths([case.len(), 0]),
                Arc::new(f64s.clone()),
                Some(arrow_buffer::NullBuffer::from(vec![true, false])),
            );
            let schema = Arc::new(Schema::new(vec![
                Field::new("d", DataType::Float64, true),
                Field::new("f", DataType::Float32, true),
                Field::new("b", DataType::Boolean, true),
            ]));
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(f64s), Arc::new(f32s), Arc::new(bools)],
            )
            .unwrap();
            assert_encoders_agree(schema, &batch, &format!("case {i}"));
            let schema = Arc::new(Schema::new(vec![Field::new(
                "l",
                DataType::LargeList(item),
                true,
            )]));
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(large)]).unwrap();
            assert_encoders_agree(schema, &batch, &format!("large list case {i}"));
        }
    }

    /// Required unnested fixed-width leaves written uncompressed share the
    /// batches' value buffers as page bodies: the file is byte for byte the
    /// one the copying path writes (gathered rows never share), with
    /// parquet's writer's values and statistics, from sliced arrays and
    /// across batch and page boundaries.
    #[test]
    fn shared_page_bodies_match_the_copying_path() {
        use arrow_array::{
            ArrayRef, Float32Array, Float64Array, TimestampMicrosecondArray, UInt64Array,
        };
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let n = 27_013;
        let u: Vec<u64> = (0..n).map(|_| next()).collect();
        let i: Vec<i64> = (0..n).map(|_| next() as i64 >> 20).collect();
        let f: Vec<f64> = (0..n)
            .map(|k| match k % 997 {
                0 => f64::NAN,
                1 => -0.0,
                _ => (next() % 1_000_000) as f64 / 7.0 - 50_000.0,
            })
            .collect();
        let g: Vec<f32> = f.iter().map(|&v| v as f32).collect();
        let w: Vec<i32> = (0..n).map(|_| next() as i32).collect();
        let o: Vec<Option<i64>> = (0..n)
            .map(|k| (k % 3 != 0).then(|| next() as i64))
            .collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("u", DataType::UInt64, false),
            Field::new("i", DataType::Int64, false),
            Field::new("f", DataType::Float64, false),
            Field::new("g", DataType::Float32, false),
            Field::new("w", DataType::Int32, false),
            Field::new(
                "t",
                DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("+00:00".into())),
                false,
            ),
            Field::new("o", DataType::Int64, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from(u)),
            Arc::new(Int64Array::from(i.clone())),
            Arc::new(Float64Array::from(f)),
            Arc::new(Float32Array::from(g)),
            Arc::new(Int32Array::from(w)),
            Arc::new(TimestampMicrosecondArray::from(i).with_timezone("+00:00")),
            Arc::new(Int64Array::from(o)),
        ];
        let whole = RecordBatch::try_new(schema.clone(), columns).unwrap();
        // Sliced batches (arrays with offsets), of uneven sizes.
        let cuts = [(5, 9000), (9005, 1), (9006, 12_007), (21_013, 6000)];
        let batches: Vec<RecordBatch> = cuts.iter().map(|&(s, l)| whole.slice(s, l)).collect();
        let groups = [&batches[..]];
        let direct = write_direct(schema.clone(), &groups);
        let arrow = write_arrow(schema.clone(), &groups);
        assert_eq!(chunk_statistics(&direct), chunk_statistics(&arrow));
        assert_eq!(rows(&read_all(direct.clone())), rows(&batches));

        // The same rows gathered: the copying path, the same bytes.
        let writer = ArrowWriter::try_new_with_options(
            Vec::new(),
            schema.clone(),
            ArrowWriterOptions::new(),
        )
        .unwrap();
        let (mut file, _) = writer.into_serialized_writer().unwrap();
        let shredder = Shredder::supports(&schema, file.schema_descr(), Compression::None).unwrap();
        let pairs: Vec<(usize, usize)> = batches
            .iter()
            .enumerate()
            .flat_map(|(b, batch)| (0..batch.num_rows()).map(move |r| (b, r)))
            .collect();
        let mut leaves = shredder.row_group();
        let mut rg = file.next_row_group().unwrap();
        for l in &mut leaves {
            l.write_gather(&batches, &pairs).unwrap();
            let (chunk, close) = l.close(&BufferPool::default()).unwrap();
            assert_eq!(chunk.shared_pieces(), 0);
            rg.append_column(&chunk, close).unwrap();
        }
        rg.close().unwrap();
        let copied = Bytes::from(file.into_inner().unwrap());
        assert_eq!(direct, copied);

        // And the shared path was taken for every required column: one
        // slice per batch and page (4 batches, 2 pages).
        let mut leaves = shredder.row_group();
        for (c, l) in leaves.iter_mut().enumerate() {
            for b in &batches {
                l.write(b).unwrap();
            }
            let (chunk, _) = l.close(&BufferPool::default()).unwrap();
            let want = if c < 6 { 5 } else { 0 };
            assert_eq!(chunk.shared_pieces(), want, "column {c}");
        }
    }

    /// Byte strings are dictionary-encoded while the chunk's dictionary
    /// stays under the properties' limit, then `PLAIN`: one chunk holds
    /// both kinds of pages, and reads back as parquet's writer's does.
    #[test]
    fn string_dictionaries_fall_back_to_plain_at_their_limit() {
        use crate::writer::ParquetWriter;
        use parquet::file::{
            properties::WriterProperties, reader::FileReader,
            serialized_reader::SerializedFileReader,
        };
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        // Few distinct values first, then many.
        let values: Vec<Option<String>> = (0..3000)
            .map(|i| match i {
                i if i % 7 == 0 => None,
                i if i < 1000 => Some(format!("v{}", i % 5)),
                i => Some(format!("value number {i}")),
            })
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(values))])
            .unwrap();
        let props = WriterProperties::builder()
            .set_dictionary_page_size_limit(200)
            .set_data_page_row_count_limit(500)
            .set_statistics_enabled(parquet::file::properties::EnabledStatistics::Page)
            .build();
        let mut w = ParquetWriter::try_new(Vec::new(), schema.clone(), props.clone()).unwrap();
        assert!(w.is_direct());
        w.write(&batch).unwrap();
        let direct = Bytes::from(w.finish().unwrap());
        let mut a = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props)).unwrap();
        a.write(&batch).unwrap();
        let arrow = Bytes::from(a.into_inner().unwrap());
        assert_eq!(
            rows(&read_all(direct.clone())),
            rows(std::slice::from_ref(&batch))
        );
        assert_eq!(chunk_statistics(&direct), chunk_statistics(&arrow));
        let reader = SerializedFileReader::new(direct).unwrap();
        let mut pages = reader
            .get_row_group(0)
            .unwrap()
            .get_column_page_reader(0)
            .unwrap();
        let mut seen = Vec::new();
        while let Some(page) = pages.get_next_page().unwrap() {
            seen.push(page.encoding());
        }
        assert_eq!(seen.first(), Some(&Encoding::PLAIN), "the dictionary page");
        assert!(seen.contains(&Encoding::RLE_DICTIONARY), "{seen:?}");
        assert_eq!(seen.last(), Some(&Encoding::PLAIN), "{seen:?}");
    }

    /// Decimals of every storage (`INT32`, `INT64`, fixed-length bytes of
    /// 9 to 16) keep their values and signed statistics, as parquet's
    /// writer stores them; values near each precision's limits, negative
    /// and positive, under nulls and in lists.
    #[test]
    fn decimals_match_parquets_writer_at_every_precision() {
        use arrow_array::{Decimal128Array, ListArray};
        for precision in [1u8, 5, 9, 10, 17, 18, 19, 20, 27, 28, 38] {
            let top = 10i128.pow(u32::from(precision)) - 1;
            let cases: Vec<Vec<Option<i128>>> = vec![
                vec![Some(top), Some(-top), None, Some(0), Some(-1), Some(1)],
                vec![Some(-1), Some(-top / 3), Some(-7)],
                vec![Some(top / 7), Some(5), Some(top)],
                vec![None, None],
                (0..300)
                    .map(|i| (i % 7 != 0).then_some((i * 7919) % top.min(1 << 40) - top.min(99)))
                    .collect(),
            ];
            for (i, case) in cases.iter().enumerate() {
                let scale = (precision / 3) as i8;
                let t = DataType::Decimal128(precision, scale);
                let values = Decimal128Array::from(case.clone())
                    .with_precision_and_scale(precision, scale)
                    .unwrap();
                let item = Arc::new(Field::new("item", t.clone(), true));
                let list = ListArray::new(
                    item.clone(),
                    arrow_buffer::OffsetBuffer::from_lengths([case.len(), 0]),
                    Arc::new(values.clone()),
                    Some(arrow_buffer::NullBuffer::from(vec![true, false])),
                );
                let schema = Arc::new(Schema::new(vec![Field::new("d", t.clone(), true)]));
                let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap();
                let groups = [std::slice::from_ref(&batch)];
                let parquet = parquet::arrow::ArrowSchemaConverter::new()
                    .convert(&schema)
                    .unwrap();
                assert!(
                    Shredder::supports(&schema, &parquet, Compression::None).is_some(),
                    "{t}"
                );
                assert_eq!(
                    chunk_statistics(&write_direct(schema.clone(), &groups)),
                    chunk_statistics(&write_arrow(schema.clone(), &groups)),
                    "{t} case {i}"
                );
                assert_eq!(rows(&round_trip(schema, &groups)), rows(groups[0]));
                let schema = Arc::new(Schema::new(vec![Field::new(
                    "l",
                    DataType::List(item),
                    true,
                )]));
                let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(list)]).unwrap();
                assert_encoders_agree(schema, &batch, &format!("list of {t} case {i}"));
            }
        }
    }

    /// The fixed length of wide decimals is parquet's own.
    #[test]
    fn decimal_lengths_are_parquets() {
        for precision in 19..=38u8 {
            let schema = Schema::new(vec![Field::new(
                "d",
                DataType::Decimal128(precision, 0),
                false,
            )]);
            let parquet = parquet::arrow::ArrowSchemaConverter::new()
                .convert(&schema)
                .unwrap();
            assert_eq!(
                general::decimal_bytes(precision) as i32,
                parquet.column(0).type_length(),
                "precision {precision}"
            );
        }
    }

    #[test]
    fn unsupported_shapes_fall_back() {
        for t in [
            DataType::Float16,
            DataType::Decimal256(20, 2),
            DataType::Utf8View,
        ] {
            let schema = Schema::new(vec![
                Field::new("a", DataType::Float64, true),
                Field::new("x", t.clone(), true),
            ]);
            let parquet = parquet::arrow::ArrowSchemaConverter::new()
                .convert(&schema)
                .unwrap();
            assert!(
                Shredder::supports(&schema, &parquet, Compression::None).is_none(),
                "{t}"
            );
        }
        let _ = UInt8Array::from(vec![1u8]);
    }

    #[test]
    fn bit_widths() {
        assert_eq!(bit_width(0), 0);
        assert_eq!(bit_width(1), 1);
        assert_eq!(bit_width(2), 2);
        assert_eq!(bit_width(4), 3);
        assert_eq!(bit_width(255), 8);
    }
}
