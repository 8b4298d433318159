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
//! Pages are version 1 data pages, compressed with the column's codec
//! (Snappy, `LZ4_RAW` or zstd, each column its own) when one is set:
//! levels as bit-packed RLE-hybrid runs. Where the properties turn the
//! dictionary on (parquet's default), byte strings, integers and floats
//! are `RLE_DICTIONARY`, with one `PLAIN` dictionary page per column
//! chunk, until the dictionary passes its size limit (or, for numbers,
//! when the chunk's first page would not shrink: nearly distinct values);
//! the chunk's later pages take the other encoding. That is: strings
//! `PLAIN`, or `DELTA_LENGTH_BYTE_ARRAY` where the properties ask for it
//! (lengths delta-encoded, then the bytes: a run of present values is one
//! copy), or `DELTA_BYTE_ARRAY` (each value's prefix shared with the one
//! before, then the rest); floats `PLAIN` or `BYTE_STREAM_SPLIT`
//! likewise; integers `PLAIN`, `DELTA_BINARY_PACKED` or
//! `BYTE_STREAM_SPLIT` likewise. Wide decimals and booleans are `PLAIN` (booleans bit-packed);
//! dictionary columns always `RLE_DICTIONARY`. Pages end on row boundaries
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
//! Where the properties ask for Bloom filters, each chunk gets Parquet's
//! split-block filter with every present value inserted as its `PLAIN`
//! bytes (dictionary keys as their entries), sized for the properties'
//! distinct values and rate and folded to the smallest size within the
//! rate, as parquet's writer does: the differential tests find the same
//! filter bytes.
//!
//! [`Shredder::for_properties`] decides per schema and writer properties
//! (the one rule every strata writer uses); types outside the list above
//! (`Decimal256`, float16, views, fixed-size binary) and other codecs go
//! through `ArrowColumnWriter`. The differential tests (`tests/
//! differential.rs`, and their pyarrow and DuckDB half) write random specs
//! both ways and require identical rows and statistics.
//!
//! The modules, each using only those listed before it: `kernels` (the
//! byte-level encodings: RLE/bit-packed hybrid, `BYTE_STREAM_SPLIT`,
//! `DELTA_BINARY_PACKED`), `dict` (the chunk dictionary of byte strings),
//! `general` (levels of a leaf at any depth), `chunk` (a finished
//! column chunk), `shape` (a leaf's value kind, levels and encodings),
//! `stats` (min, max, null and NaN counts), `page` (page headers, page
//! writes, codecs), `pool` (chunk buffers kept for reuse), `fast` (the
//! fast shape's values) and `leaf` ([`LeafEncoder`]). This file holds
//! [`Shredder`], which decides whether the direct encoder writes a schema
//! and makes the leaf encoders of each row group.

use arrow_schema::{DataType, Field, Schema};
use parquet::{
    basic::{Compression as PqCompression, Encoding, Type as PhysicalType},
    schema::types::{ColumnDescPtr, SchemaDescriptor},
};

use std::sync::{Arc, Mutex};

use crate::Compression;

mod chunk;
mod dict;
mod fast;
mod general;
mod kernels;
mod leaf;
mod page;
mod pool;
mod shape;
mod stats;

pub use chunk::{ChunkRead, ColumnChunk};
pub use leaf::{LeafEncoder, check_gather};
pub use page::parquet_codec;
pub use pool::BufferPool;

use leaf::LevelPages;
use shape::{LeafShape, Values};

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

/// The codec of column `path` under `props`, when the direct encoder has
/// it (Snappy, `LZ4_RAW`, zstd or none).
fn codec_of(
    props: &parquet::file::properties::WriterProperties,
    path: &parquet::schema::types::ColumnPath,
) -> Option<Compression> {
    Some(match props.compression(path) {
        PqCompression::UNCOMPRESSED => Compression::None,
        PqCompression::SNAPPY => Compression::Snappy,
        PqCompression::LZ4_RAW => Compression::Lz4,
        PqCompression::ZSTD(l) => Compression::Zstd(l.compression_level()),
        _ => return None,
    })
}

impl Shredder {
    /// The direct encoder for files of `schema` written with `props`: the
    /// one rule every Parquet writer of strata uses to choose it. `None`
    /// when a column's codec is one the direct encoder lacks (each column
    /// takes its own: Snappy, `LZ4_RAW`, zstd at any level, or none), or
    /// some column has a shape it does not handle; integer columns that
    /// `props` gives `DELTA_BINARY_PACKED` use it.
    pub fn for_properties(
        schema: &Schema,
        parquet: &SchemaDescriptor,
        props: &parquet::file::properties::WriterProperties,
    ) -> Option<Shredder> {
        let mut shredder = Shredder::supports(schema, parquet, Compression::None)?;
        // Each column's own codec (the same for all, or not).
        for (leaf, descr) in shredder.leaves.iter_mut().zip(&shredder.descrs) {
            leaf.codec = codec_of(props, descr.path())?;
        }
        shredder.use_encodings(props);
        Some(shredder)
    }

    /// The shredder for `schema`, every column compressed with `codec`, or
    /// `None` when some column has a shape it does not handle.
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
        for leaf in &mut leaves {
            leaf.codec = codec;
        }
        Some(Shredder {
            leaves,
            descrs,
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

    /// Takes the leaves' encodings from `props`: the dictionary where it
    /// is on (byte strings, integers and floats); integers whose column is
    /// set to `DELTA_BINARY_PACKED` are written so (suits sorted columns:
    /// small deltas pack into a few bits), floats set to
    /// `BYTE_STREAM_SPLIT` so (their bytes of each significance together,
    /// which a codec compresses better and faster), byte strings set to
    /// `DELTA_LENGTH_BYTE_ARRAY` so, from the start or after the
    /// dictionary; the rest `PLAIN`.
    fn use_encodings(&mut self, props: &parquet::file::properties::WriterProperties) {
        for (leaf, descr) in self.leaves.iter_mut().zip(&self.descrs) {
            leaf.delta = matches!(leaf.values, Values::Int(_) | Values::UInt(_))
                && props.encoding(descr.path()) == Some(Encoding::DELTA_BINARY_PACKED);
            // Not fixed-length byte arrays, which parquet allows but DuckDB
            // refuses to read ("BYTE_STREAM_SPLIT encoding is only
            // supported for FLOAT, DOUBLE, INT32 or INT64 data"): those
            // stay `PLAIN`.
            leaf.split = matches!(
                leaf.values,
                Values::Float(_) | Values::Int(_) | Values::UInt(_)
            ) && props.encoding(descr.path()) == Some(Encoding::BYTE_STREAM_SPLIT);
            leaf.lengths = leaf.values == Values::Plain
                && props.encoding(descr.path()) == Some(Encoding::DELTA_LENGTH_BYTE_ARRAY);
            leaf.prefixes = leaf.values == Values::Plain
                && props.encoding(descr.path()) == Some(Encoding::DELTA_BYTE_ARRAY);
            leaf.truncate = props.statistics_truncate_length();
            leaf.index_truncate = props.column_index_truncate_length();
            leaf.dictionary = matches!(
                leaf.values,
                Values::Plain | Values::Int(_) | Values::UInt(_) | Values::Float(_)
            ) && props.dictionary_enabled(descr.path());
            leaf.dict_limit = props.column_dictionary_page_size_limit(descr.path());
            leaf.bloom = props
                .bloom_filter_properties(descr.path())
                .map(|b| (b.ndv(), b.fpp()));
            leaf.bloom_dictionary = props.bloom_filter_for_dictionary_encoded_chunks();
            leaf.statistics = props.statistics_enabled(descr.path());
            leaf.page_rows = props.data_page_row_count_limit().max(1);
            leaf.page_bytes = props.column_data_page_size_limit(descr.path()).max(1);
            leaf.page_v2 =
                props.writer_version() == parquet::file::properties::WriterVersion::PARQUET_2_0;
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
                let mut leaf = LeafEncoder::new(shape.clone(), descr.clone(), shape.codec);
                leaf.checksums = self.checksums;
                if shape.max_def > 0 || shape.max_rep > 0 {
                    leaf.level_pages = Some(pages.clone());
                }
                leaf
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::UInt8Type;
    use shape::PAGE_ROWS;

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

    /// Integers and floats of every width are dictionary-encoded while the
    /// chunk's dictionary stays under its limit, then written `PLAIN` (or
    /// with the encoding the properties set); a column whose first page
    /// would not shrink never takes a dictionary. Values, nulls, NaN and
    /// both zeros read back, and statistics match parquet's writer, with
    /// and without a codec (uncompressed, a required leaf's later pages are
    /// the batches' own buffers).
    #[test]
    fn number_dictionaries_fall_back_at_their_limit() {
        use crate::writer::ParquetWriter;
        use arrow_array::{
            ArrayRef, Date32Array, Decimal128Array, Float32Array, Float64Array, UInt16Array,
        };
        use parquet::file::{
            properties::{EnabledStatistics, WriterProperties},
            reader::FileReader,
            serialized_reader::SerializedFileReader,
        };
        let item = Arc::new(Field::new("item", DataType::Int64, true));
        let schema = Arc::new(Schema::new(vec![
            Field::new("i32", DataType::Int32, true),
            Field::new("i64", DataType::Int64, false),
            Field::new("u16", DataType::UInt16, true),
            Field::new("f32", DataType::Float32, true),
            Field::new("f64", DataType::Float64, false),
            Field::new("date", DataType::Date32, true),
            Field::new("dec", DataType::Decimal128(12, 2), true),
            Field::new("list", DataType::List(item.clone()), true),
            // Distinct from the first row: never a dictionary.
            Field::new("key", DataType::Int64, false),
        ]));
        // Rows below 1,500 take 5 values per column, the rest many.
        let few = |i: i64| if i < 1500 { i % 5 } else { i * 7919 % 100_003 };
        let batch = |from: i64, n: i64| {
            let rows = from..from + n;
            let nth = |i: i64| i % 11 != 3;
            let floats = [0.0f32, -0.0, f32::NAN, 1.5, -2.25];
            let mut lists = ListBuilder::new(arrow_array::builder::Int64Builder::new())
                .with_field(item.clone());
            for i in rows.clone() {
                match i % 6 {
                    0 => lists.append(false),
                    1 => lists.append(true),
                    k => {
                        for e in 0..k {
                            lists.values().append_option((e != 2).then_some(few(i + e)));
                        }
                        lists.append(true);
                    }
                }
            }
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Int32Array::from_iter(
                    rows.clone().map(|i| nth(i).then_some(few(i) as i32 - 2)),
                )),
                Arc::new(Int64Array::from_iter_values(
                    rows.clone().map(|i| few(i) << 40),
                )),
                Arc::new(UInt16Array::from_iter(
                    rows.clone()
                        .map(|i| nth(i).then_some((few(i) % 5000) as u16 + 60_000)),
                )),
                Arc::new(Float32Array::from_iter(rows.clone().map(|i| {
                    nth(i).then_some(if i < 1500 {
                        floats[(i % 5) as usize]
                    } else {
                        few(i) as f32 / 3.0
                    })
                }))),
                Arc::new(Float64Array::from_iter_values(
                    rows.clone().map(|i| few(i) as f64 * -0.5),
                )),
                Arc::new(Date32Array::from_iter(
                    rows.clone()
                        .map(|i| nth(i).then_some(few(i) as i32 + 19_000)),
                )),
                Arc::new(
                    Decimal128Array::from_iter(
                        rows.clone()
                            .map(|i| nth(i).then_some(i128::from(few(i)) * 125)),
                    )
                    .with_precision_and_scale(12, 2)
                    .unwrap(),
                ),
                Arc::new(lists.finish()),
                Arc::new(Int64Array::from_iter_values(rows.map(|i| i * 31))),
            ];
            RecordBatch::try_new(schema.clone(), columns).unwrap()
        };
        let batches: Vec<RecordBatch> = [(0, 700), (700, 1100), (1800, 1200)]
            .iter()
            .map(|&(f, n)| batch(f, n))
            .collect();
        for codec in [
            parquet::basic::Compression::UNCOMPRESSED,
            parquet::basic::Compression::SNAPPY,
        ] {
            let props = WriterProperties::builder()
                .set_compression(codec)
                .set_dictionary_page_size_limit(4096)
                .set_data_page_row_count_limit(250)
                .set_statistics_enabled(EnabledStatistics::Page)
                // The encodings for the pages after a fall-back.
                .set_column_encoding("i64".into(), Encoding::DELTA_BINARY_PACKED)
                .set_column_encoding("f64".into(), Encoding::BYTE_STREAM_SPLIT)
                .build();
            let mut w = ParquetWriter::try_new(Vec::new(), schema.clone(), props.clone()).unwrap();
            assert!(w.is_direct());
            let mut a = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props)).unwrap();
            for b in &batches {
                w.write(b).unwrap();
                a.write(b).unwrap();
            }
            let direct = Bytes::from(w.finish().unwrap());
            let arrow = Bytes::from(a.into_inner().unwrap());
            assert_eq!(rows(&read_all(direct.clone())), rows(&batches), "{codec:?}");
            assert_eq!(
                chunk_statistics(&direct),
                chunk_statistics(&arrow),
                "{codec:?}"
            );
            let reader = SerializedFileReader::new(direct).unwrap();
            let group = reader.get_row_group(0).unwrap();
            for c in 0..schema.fields().len() {
                let mut pages = group.get_column_page_reader(c).unwrap();
                let mut seen = Vec::new();
                while let Some(page) = pages.get_next_page().unwrap() {
                    seen.push(page.encoding());
                }
                let what = format!("{codec:?} column {c}: {seen:?}");
                if c == 8 {
                    assert!(seen.iter().all(|e| *e == Encoding::PLAIN), "{what}");
                    continue;
                }
                let after = match c {
                    1 => Encoding::DELTA_BINARY_PACKED,
                    4 => Encoding::BYTE_STREAM_SPLIT,
                    _ => Encoding::PLAIN,
                };
                assert_eq!(seen.first(), Some(&Encoding::PLAIN), "{what}");
                assert_eq!(seen.get(1), Some(&Encoding::RLE_DICTIONARY), "{what}");
                assert_eq!(seen.last(), Some(&after), "{what}");
            }
        }
    }

    /// A column's Bloom filter answers yes for every value written, and for
    /// about the configured share of values never written (integers and
    /// strings, dictionary-encoded and not, one row group of two).
    #[test]
    fn bloom_filters_find_every_value_and_few_others() {
        use crate::writer::ParquetWriter;
        use parquet::file::{
            properties::{ReaderProperties, WriterProperties},
            reader::FileReader,
            serialized_reader::{ReadOptionsBuilder, SerializedFileReader},
        };
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("s", DataType::Utf8, false),
        ]));
        let n = 40_000i64;
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter(
                    (0..n).map(|i| (i % 9 != 0).then_some(i * 7919 % 1_000_003)),
                )),
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("s{}", i % 30_000)),
                )),
            ],
        )
        .unwrap();
        let fpp = 0.05;
        for dictionary in [false, true] {
            let props = WriterProperties::builder()
                .set_dictionary_enabled(dictionary)
                .set_bloom_filter_enabled(true)
                .set_bloom_filter_max_ndv(n as u64)
                .set_bloom_filter_fpp(fpp)
                .set_max_row_group_row_count(Some(n as usize / 2))
                .build();
            let mut w = ParquetWriter::try_new(Vec::new(), schema.clone(), props).unwrap();
            assert!(w.is_direct());
            w.write(&batch).unwrap();
            let file = Bytes::from(w.finish().unwrap());
            let options = ReadOptionsBuilder::new()
                .with_reader_properties(
                    ReaderProperties::builder()
                        .set_read_bloom_filter(true)
                        .build(),
                )
                .build();
            let reader = SerializedFileReader::new_with_options(file, options).unwrap();
            assert_eq!(reader.num_row_groups(), 2);
            let (mut false_yes, mut absent) = (0usize, 0usize);
            for g in 0..2i64 {
                let rg = reader.get_row_group(g as usize).unwrap();
                let ints = rg.get_column_bloom_filter(0).expect("a filter for k");
                let strings = rg.get_column_bloom_filter(1).expect("a filter for s");
                let rows = g * n / 2..(g + 1) * n / 2;
                for i in rows.clone() {
                    if i % 9 != 0 {
                        assert!(ints.check(&(i * 7919 % 1_000_003)), "{dictionary} {i}");
                    }
                    assert!(strings.check(format!("s{}", i % 30_000).as_str()));
                }
                // Values of no row: past the keys' range, and other strings.
                for x in 0..50_000i64 {
                    false_yes += usize::from(ints.check(&(2_000_000 + x)));
                    false_yes += usize::from(strings.check(format!("absent{x}").as_str()));
                    absent += 2;
                }
            }
            let rate = false_yes as f64 / absent as f64;
            assert!(
                rate < 2.0 * fpp && rate > fpp / 10.0,
                "{dictionary}: {rate}"
            );
        }
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
}
