//! A direct Arrow-to-Parquet column encoder for the shapes strata generates.
//!
//! parquet's `ArrowColumnWriter` handles every Arrow type, and pays for it:
//! levels are computed by a general tree walk, values pass through generic
//! encoders, every string is compared twice for statistics. For the leaf
//! shapes the presets produce this module writes the same Parquet directly:
//!
//! * a top-level `Utf8` column (optional or required);
//! * `List<Struct<...>>` whose struct fields are `Utf8` or
//!   `Dictionary<UInt8, Utf8>` (list, item and leaves optional or required).
//!
//! Pages are version 1 data pages, compressed with the run's codec
//! (Snappy, `LZ4_RAW` or zstd) when one is set: levels as bit-packed RLE-hybrid runs,
//! strings `PLAIN`, dictionary columns `RLE_DICTIONARY` with one `PLAIN`
//! dictionary page per column chunk. Pages end on row boundaries after
//! 20,000 rows or 1 MiB of values, and carry exact min/max/null counts in
//! the column index; the offset index records every page. Page headers
//! are written here (Thrift compact protocol, a few fixed fields), so a
//! page's values are copied once, from the batch into the chunk. The
//! chunks are handed to parquet's `SerializedRowGroupWriter::append_column`,
//! so the file footer, schema and Arrow schema metadata are parquet's own.
//!
//! [`Shredder::supports`] decides per schema; anything else goes through
//! `ArrowColumnWriter`. Tests read both paths back and require identical
//! rows and statistics.

use std::collections::HashMap;

use arrow_array::{
    Array, ArrayRef, DictionaryArray, GenericListArray, RecordBatch, StringArray, StructArray,
    cast::AsArray, types::UInt8Type,
};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
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

use crate::{Compression, Error};

/// Rows after which a data page is closed.
const PAGE_ROWS: usize = 20_000;
/// Value bytes after which a data page is closed.
const PAGE_BYTES: usize = 1 << 20;
/// Rows handled between two checks of the page limits.
const CHUNK_ROWS: usize = 1024;
/// Values per bit-packed run: 63 groups of 8, so the run header is one byte.
const RUN: usize = 504;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Values {
    Plain,
    Dictionary,
}

/// Where a leaf sits and which definition levels it uses.
#[derive(Debug, Clone)]
struct LeafShape {
    column: usize,
    /// `Some(child)` for a leaf inside `List<Struct>`.
    child: Option<usize>,
    values: Values,
    max_def: u8,
    max_rep: u8,
    /// Definition level of a null list (`None`: the list is required).
    def_null_list: Option<u8>,
    def_empty_list: u8,
    def_null_item: Option<u8>,
    def_null_leaf: Option<u8>,
}

/// Encodes the row groups of one schema.
#[derive(Debug, Clone)]
pub(crate) struct Shredder {
    leaves: Vec<LeafShape>,
    descrs: Vec<ColumnDescPtr>,
    codec: Compression,
}

fn leaf_values(t: &DataType) -> Option<Values> {
    match t {
        DataType::Utf8 => Some(Values::Plain),
        DataType::Dictionary(k, v) if **k == DataType::UInt8 && **v == DataType::Utf8 => {
            Some(Values::Dictionary)
        }
        _ => None,
    }
}

impl Shredder {
    /// The shredder for `schema`, or `None` when some column has a shape it
    /// does not handle.
    pub(crate) fn supports(
        schema: &Schema,
        parquet: &SchemaDescriptor,
        codec: Compression,
    ) -> Option<Shredder> {
        let mut leaves = Vec::new();
        for (column, field) in schema.fields().iter().enumerate() {
            leaves.extend(Self::shapes(column, field)?);
        }
        if leaves.len() != parquet.num_columns() {
            return None;
        }
        let descrs: Vec<ColumnDescPtr> = (0..leaves.len()).map(|i| parquet.column(i)).collect();
        for (leaf, d) in leaves.iter().zip(&descrs) {
            if d.max_def_level() != i16::from(leaf.max_def)
                || d.max_rep_level() != i16::from(leaf.max_rep)
                || d.physical_type() != PhysicalType::BYTE_ARRAY
            {
                return None;
            }
        }
        Some(Shredder {
            leaves,
            descrs,
            codec,
        })
    }

    fn shapes(column: usize, field: &Field) -> Option<Vec<LeafShape>> {
        if let Some(values) = leaf_values(field.data_type()) {
            let max_def = u8::from(field.is_nullable());
            return Some(vec![LeafShape {
                column,
                child: None,
                values,
                max_def,
                max_rep: 0,
                def_null_list: None,
                def_empty_list: 0,
                def_null_item: None,
                def_null_leaf: field.is_nullable().then_some(0),
            }]);
        }
        let DataType::List(item) = field.data_type() else {
            return None;
        };
        let DataType::Struct(children) = item.data_type() else {
            return None;
        };
        let d_list = u8::from(field.is_nullable());
        let d_rep = d_list + 1;
        let d_item = d_rep + u8::from(item.is_nullable());
        children
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let values = leaf_values(c.data_type())?;
                Some(LeafShape {
                    column,
                    child: Some(i),
                    values,
                    max_def: d_item + u8::from(c.is_nullable()),
                    max_rep: 1,
                    def_null_list: field.is_nullable().then_some(0),
                    def_empty_list: d_list,
                    def_null_item: item.is_nullable().then_some(d_rep),
                    def_null_leaf: c.is_nullable().then_some(d_item),
                })
            })
            .collect()
    }

    /// Fresh encoders for one row group.
    pub(crate) fn row_group(&self) -> Vec<LeafEncoder> {
        self.leaves
            .iter()
            .zip(&self.descrs)
            .map(|(shape, descr)| LeafEncoder::new(shape.clone(), descr.clone(), self.codec))
            .collect()
    }
}

/// Min, max and null count of one page or chunk.
#[derive(Debug, Default, Clone)]
struct Stats {
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
    nulls: u64,
}

impl Stats {
    fn update(&mut self, v: &[u8]) {
        match &mut self.min {
            Some(m) if v < m.as_slice() => {
                m.clear();
                m.extend_from_slice(v);
            }
            None => self.min = Some(v.to_vec()),
            _ => {}
        }
        match &mut self.max {
            Some(m) if v > m.as_slice() => {
                m.clear();
                m.extend_from_slice(v);
            }
            None => self.max = Some(v.to_vec()),
            _ => {}
        }
    }

    fn merge(&mut self, other: &Stats) {
        if let Some(v) = &other.min {
            self.update(v);
        }
        if let Some(v) = &other.max {
            self.update(v);
        }
        self.nulls += other.nulls;
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

/// Encodes one leaf column of one row group.
pub(crate) struct LeafEncoder {
    shape: LeafShape,
    descr: ColumnDescPtr,
    codec: Compression,
    def: Vec<u8>,
    rep: Vec<u8>,
    /// Plain: length-prefixed strings. Dictionary: one key per value.
    values: Vec<u8>,
    page_rows: usize,
    page_stats: Stats,
    /// Dictionary entries seen so far, in first-seen order.
    dict: Vec<Vec<u8>>,
    dict_index: HashMap<Vec<u8>, u8>,
    /// Keys of the current page that occur (for min/max).
    used: [u64; 4],
    pages: Vec<PageMeta>,
    /// The data pages of the chunk, headers included, back to back.
    chunk: Vec<u8>,
    /// Scratch: a page's encoded levels, and a page body to compress.
    levels: Vec<u8>,
    body: Vec<u8>,
    rows: u64,
}

impl LeafEncoder {
    fn new(shape: LeafShape, descr: ColumnDescPtr, codec: Compression) -> Self {
        LeafEncoder {
            shape,
            descr,
            codec,
            def: Vec::new(),
            rep: Vec::new(),
            values: Vec::new(),
            page_rows: 0,
            page_stats: Stats::default(),
            dict: Vec::new(),
            dict_index: HashMap::new(),
            used: [0; 4],
            pages: Vec::new(),
            chunk: Vec::new(),
            levels: Vec::new(),
            body: Vec::new(),
            rows: 0,
        }
    }

    /// Appends the rows of `batch`.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        let column = batch.column(self.shape.column);
        let n = batch.num_rows();
        let mut at = 0;
        // Per batch: map this batch's dictionary onto the chunk's.
        let remap = match self.shape.values {
            Values::Dictionary => Some(self.remap(self.leaf_array(column)?)?),
            Values::Plain => None,
        };
        while at < n {
            let len = CHUNK_ROWS.min(n - at);
            self.write_rows(column, at, len, remap.as_deref())?;
            self.page_rows += len;
            self.rows += len as u64;
            at += len;
            if self.page_rows >= PAGE_ROWS || self.values.len() >= PAGE_BYTES {
                self.flush_page()?;
            }
        }
        Ok(())
    }

    /// The leaf array (the struct child for list leaves).
    fn leaf_array<'a>(&self, column: &'a ArrayRef) -> Result<&'a ArrayRef, Error> {
        match self.shape.child {
            None => Ok(column),
            Some(c) => Ok(list_parts(column)?.1.column(c)),
        }
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
            let k = match self.dict_index.get(v) {
                Some(&k) => k,
                None => {
                    if self.dict.len() == 256 {
                        return Err(unsupported("more than 256 dictionary values per row group"));
                    }
                    let k = self.dict.len() as u8;
                    self.dict.push(v.to_vec());
                    self.dict_index.insert(v.to_vec(), k);
                    k
                }
            };
            map.push(k);
        }
        Ok(map)
    }

    // The two loops below write levels and values by index into buffers
    // sized up front, and turn every data-dependent choice (null or not,
    // which definition level) into arithmetic: a null value is written
    // anyway and the cursor simply does not move. Only the per-row loop
    // over list entries still branches on the data.

    fn write_flat<V: LeafValues>(
        &mut self,
        column: &ArrayRef,
        at: usize,
        len: usize,
        values: &mut V,
    ) -> Result<(), Error> {
        if self.shape.max_def == 0 && column.null_count() > 0 {
            return Err(unsupported("nulls in a required column"));
        }
        let nulls = column.nulls();
        let optional = self.shape.max_def > 0;
        let vbase = self.values.len();
        self.values.resize(vbase + values.bound(at..at + len), 0);
        let dbase = self.def.len();
        if optional {
            self.def.resize(dbase + len, 0);
        }
        let mut vp = vbase;
        let mut null_count = 0u64;
        for (k, i) in (at..at + len).enumerate() {
            let valid = nulls.is_none_or(|n| n.is_valid(i));
            if optional {
                self.def[dbase + k] = u8::from(valid);
            }
            vp += values.put(i, valid, &mut self.values[vp..]);
            null_count += u64::from(!valid);
        }
        self.values.truncate(vp);
        self.page_stats.nulls += null_count;
        Ok(())
    }

    fn write_list<V: LeafValues>(
        &mut self,
        list: &GenericListArray<i32>,
        item: &StructArray,
        leaf: &ArrayRef,
        at: usize,
        len: usize,
        values: &mut V,
    ) -> Result<(), Error> {
        let s = &self.shape;
        let max_def = s.max_def;
        let empty = s.def_empty_list;
        // A level that cannot occur in valid Arrow data maps to `max_def`;
        // the checks below reject data that would need it.
        let null_list = s.def_null_list.unwrap_or(max_def);
        let null_item = s.def_null_item.unwrap_or(max_def);
        let null_leaf = s.def_null_leaf.unwrap_or(max_def);
        if s.def_null_list.is_none() && list.null_count() > 0 {
            return Err(unsupported("no nulls in a required list"));
        }
        if s.def_null_item.is_none() && item.null_count() > 0 {
            return Err(unsupported("no nulls in a required list item"));
        }
        if s.def_null_leaf.is_none() && s.def_null_item.is_none() && leaf.null_count() > 0 {
            return Err(unsupported("no nulls in a required leaf"));
        }
        let (list_nulls, item_nulls, leaf_nulls) = (list.nulls(), item.nulls(), leaf.nulls());
        let offsets = list.value_offsets();
        let (first, last) = (offsets[at] as usize, offsets[at + len] as usize);
        let levels = last - first + len;
        let lbase = self.def.len();
        self.def.resize(lbase + levels, 0);
        self.rep.resize(lbase + levels, 0);
        let vbase = self.values.len();
        self.values.resize(vbase + values.bound(first..last), 0);
        let (mut p, mut vp) = (lbase, vbase);
        let mut null_count = 0u64;
        for r in at..at + len {
            let list_valid = list_nulls.is_none_or(|n| n.is_valid(r));
            let start = offsets[r] as usize;
            // A null list's entries (if any) are masked: it has none.
            let n = (offsets[r + 1] as usize - start) * usize::from(list_valid);
            // The level of a null or empty list; overwritten by the first
            // entry otherwise.
            self.def[p] = if list_valid { empty } else { null_list };
            self.rep[p] = 0;
            p += usize::from(n == 0);
            null_count += u64::from(n == 0);
            for (j, e) in (start..start + n).enumerate() {
                let item_valid = item_nulls.is_none_or(|b| b.is_valid(e));
                let leaf_valid = leaf_nulls.is_none_or(|b| b.is_valid(e));
                let valid = item_valid & leaf_valid;
                self.def[p] = if !item_valid {
                    null_item
                } else if !leaf_valid {
                    null_leaf
                } else {
                    max_def
                };
                self.rep[p] = u8::from(j != 0);
                vp += values.put(e, valid, &mut self.values[vp..]);
                null_count += u64::from(!valid);
                p += 1;
            }
        }
        self.def.truncate(p);
        self.rep.truncate(p);
        self.values.truncate(vp);
        self.page_stats.nulls += null_count;
        Ok(())
    }

    /// Writes rows `at..at + len` of `column`, dispatching once on the
    /// leaf's value kind and shape.
    fn write_rows(
        &mut self,
        column: &ArrayRef,
        at: usize,
        len: usize,
        remap: Option<&[u8]>,
    ) -> Result<(), Error> {
        let leaf = self.leaf_array(column)?;
        match remap {
            None => self.write_leaf(column, at, len, &mut PlainValues::new(leaf)?),
            Some(map) => {
                let mut v = DictValues::new(leaf, map)?;
                self.write_leaf(column, at, len, &mut v)?;
                self.or_used(v.used);
                Ok(())
            }
        }
    }

    fn write_leaf<V: LeafValues>(
        &mut self,
        column: &ArrayRef,
        at: usize,
        len: usize,
        values: &mut V,
    ) -> Result<(), Error> {
        match self.shape.child {
            None => self.write_flat(column, at, len, values),
            Some(child) => {
                let (list, item) = list_parts(column)?;
                self.write_list(list, item, item.column(child), at, len, values)
            }
        }
    }

    fn or_used(&mut self, used: [u64; 4]) {
        for (u, v) in self.used.iter_mut().zip(used) {
            *u |= v;
        }
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
        self.levels.clear();
        if self.shape.max_rep > 0 {
            encode_levels(&mut self.levels, &self.rep, bit_width(self.shape.max_rep));
        }
        if self.shape.max_def > 0 {
            encode_levels(&mut self.levels, &self.def, bit_width(self.shape.max_def));
        }
        let mut stats = std::mem::take(&mut self.page_stats);
        let encoding = match self.shape.values {
            Values::Plain => {
                if let Some((lo, hi)) = plain_min_max(&mut self.values) {
                    stats.update(lo);
                    stats.update(hi);
                }
                Encoding::PLAIN
            }
            Values::Dictionary => {
                // Keys become a bit width byte and the hybrid encoding.
                let width = bit_width(self.dict.len().saturating_sub(1) as u8).max(1);
                self.body.clear();
                self.body.push(width);
                encode_hybrid(&mut self.body, &self.values, width);
                std::mem::swap(&mut self.body, &mut self.values);
                for k in 0..self.dict.len() {
                    if self.used[k >> 6] & (1 << (k & 63)) != 0 {
                        stats.update(&self.dict[k]);
                    }
                }
                self.used = [0; 4];
                Encoding::RLE_DICTIONARY
            }
        };
        let offset = self.chunk.len();
        let (size, uncompressed) = write_page(
            &mut self.chunk,
            &mut self.body,
            self.codec,
            PageKind::Data { encoding },
            num_levels,
            &[&self.levels, &self.values],
        )?;
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
        self.page_rows = 0;
        Ok(())
    }

    /// The finished column chunk: its bytes (offsets start at 0) and the
    /// metadata parquet needs to splice it into a row group. The encoder is
    /// left empty, keeping its buffers, for the next row group; chunk
    /// buffers come from, and go back to, `pool` (see [`BufferPool`]).
    pub(crate) fn close(&mut self, pool: &BufferPool) -> Result<(Bytes, ColumnCloseResult), Error> {
        self.flush_page()?;
        let mut encodings = vec![Encoding::PLAIN, Encoding::RLE];
        let mut uncompressed = 0usize;
        let (chunk, dictionary_offset, shift) = match self.shape.values {
            Values::Plain => (std::mem::replace(&mut self.chunk, pool.take()), None, 0),
            Values::Dictionary => {
                // The dictionary page goes first; the (small) data pages
                // are copied in behind it.
                encodings.push(Encoding::RLE_DICTIONARY);
                let mut plain = Vec::new();
                for v in &self.dict {
                    plain.extend_from_slice(&(v.len() as u32).to_le_bytes());
                    plain.extend_from_slice(v);
                }
                let mut out = pool.take();
                let (size, raw) = write_page(
                    &mut out,
                    &mut self.body,
                    self.codec,
                    PageKind::Dictionary,
                    self.dict.len() as u32,
                    &[&plain],
                )?;
                uncompressed += raw;
                out.extend_from_slice(&self.chunk);
                self.chunk.clear();
                (out, Some(0), size)
            }
        };
        let mut column_index = ColumnIndexBuilder::new(PhysicalType::BYTE_ARRAY);
        let mut offset_index = OffsetIndexBuilder::new();
        let mut chunk_stats = Stats::default();
        let mut num_values = 0i64;
        for p in std::mem::take(&mut self.pages) {
            uncompressed += p.uncompressed;
            num_values += i64::from(p.levels);
            offset_index.append_row_count(p.rows as i64);
            offset_index.append_offset_and_size((p.offset + shift) as i64, p.size as i32);
            chunk_stats.merge(&p.stats);
            column_index.append(
                p.stats.min.is_none(),
                p.stats.min.unwrap_or_default(),
                p.stats.max.unwrap_or_default(),
                p.stats.nulls as i64,
                None,
            );
        }
        let stats = ValueStatistics::new(
            chunk_stats.min.map(ByteArray::from),
            chunk_stats.max.map(ByteArray::from),
            None,
            Some(chunk_stats.nulls),
            false,
        )
        .with_min_is_exact(true)
        .with_max_is_exact(true);
        let compressed = chunk.len();
        let metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(parquet_codec(self.codec)?)
            .set_encodings(encodings)
            .set_num_values(num_values)
            .set_total_compressed_size(compressed as i64)
            .set_total_uncompressed_size(uncompressed as i64)
            .set_data_page_offset(shift as i64)
            .set_dictionary_page_offset(dictionary_offset)
            .set_statistics(Statistics::ByteArray(stats))
            .build()?;
        self.dict.clear();
        self.dict_index.clear();
        let rows = std::mem::take(&mut self.rows);
        let close = ColumnCloseResult {
            bytes_written: compressed as u64,
            rows_written: rows,
            metadata,
            bloom_filter: None,
            column_index: Some(column_index.build()?),
            offset_index: Some(offset_index.build()),
        };
        Ok((Bytes::from(chunk), close))
    }
}

/// A page's kind and what its header records.
#[derive(Debug, Clone, Copy)]
enum PageKind {
    Data { encoding: Encoding },
    Dictionary,
}

/// Parquet's `Encoding` enum values (parquet.thrift).
fn encoding_id(e: Encoding) -> i32 {
    match e {
        Encoding::PLAIN => 0,
        Encoding::RLE => 3,
        Encoding::RLE_DICTIONARY => 8,
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
/// type (1), uncompressed and compressed size (2, 3), then either a
/// `DataPageHeader` (5: values, encoding, RLE definition and repetition
/// level encodings) or a `DictionaryPageHeader` (7: values, PLAIN,
/// is_sorted false).
fn page_header(out: &mut Vec<u8>, kind: PageKind, uncompressed: usize, stored: usize, values: u32) {
    let page_type = match kind {
        PageKind::Data { .. } => 0,
        PageKind::Dictionary => 2,
    };
    i32_field(out, 1, page_type);
    i32_field(out, 1, uncompressed as i32);
    i32_field(out, 1, stored as i32);
    match kind {
        PageKind::Data { encoding } => {
            out.push((2 << 4) | 12);
            i32_field(out, 1, values as i32);
            i32_field(out, 1, encoding_id(encoding));
            i32_field(out, 1, encoding_id(Encoding::RLE));
            i32_field(out, 1, encoding_id(Encoding::RLE));
        }
        PageKind::Dictionary => {
            out.push((4 << 4) | 12);
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
    codec: Compression,
    kind: PageKind,
    values: u32,
    parts: &[&[u8]],
) -> Result<(usize, usize), Error> {
    let raw: usize = parts.iter().map(|p| p.len()).sum();
    let start = out.len();
    if codec == Compression::None {
        out.reserve(raw + 32);
        page_header(out, kind, raw, raw, values);
        for p in parts {
            out.extend_from_slice(p);
        }
        let size = out.len() - start;
        return Ok((size, size));
    }
    scratch.clear();
    for p in parts {
        scratch.extend_from_slice(p);
    }
    let stored = compress(codec, scratch)?;
    page_header(out, kind, raw, stored.len(), values);
    let header = out.len() - start;
    out.extend_from_slice(&stored);
    Ok((header + stored.len(), header + raw))
}

/// Writes the values of one leaf array into a page buffer, by index.
trait LeafValues {
    /// An upper bound of the bytes that [`LeafValues::put`] needs for the
    /// values `range`, including the slack of its fixed-size writes.
    fn bound(&self, range: std::ops::Range<usize>) -> usize;

    /// Writes value `i` at the start of `out` and returns its encoded
    /// length, or writes scratch and returns 0 when `valid` is false.
    fn put(&mut self, i: usize, valid: bool, out: &mut [u8]) -> usize;
}

/// `PLAIN` strings: a 4-byte length, then the bytes.
struct PlainValues<'a> {
    offsets: &'a [i32],
    data: &'a [u8],
}

impl<'a> PlainValues<'a> {
    fn new(array: &'a ArrayRef) -> Result<Self, Error> {
        let s: &StringArray = array
            .as_string_opt()
            .ok_or_else(|| unsupported("a Utf8 column"))?;
        Ok(PlainValues {
            offsets: s.value_offsets(),
            data: s.value_data(),
        })
    }
}

/// Bytes copied at once for short strings: a fixed-size copy compiles to
/// two vector moves, a variable-length one to a `memcpy` call.
const WIDE: usize = 32;

impl LeafValues for PlainValues<'_> {
    fn bound(&self, range: std::ops::Range<usize>) -> usize {
        let span = (self.offsets[range.end] - self.offsets[range.start]) as usize;
        span + 4 * range.len() + WIDE
    }

    #[inline(always)]
    fn put(&mut self, i: usize, valid: bool, out: &mut [u8]) -> usize {
        let (s, e) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        let len = e.saturating_sub(s);
        out[..4].copy_from_slice(&(len as u32).to_le_bytes());
        match self.data.get(s..s + WIDE) {
            Some(wide) if len <= WIDE => out[4..4 + WIDE].copy_from_slice(wide),
            _ => out[4..4 + len].copy_from_slice(&self.data[s..e]),
        }
        (4 + len) * usize::from(valid)
    }
}

/// `RLE_DICTIONARY` keys, mapped onto the chunk's dictionary; `used`
/// collects the keys that occur (for min/max).
struct DictValues<'a> {
    keys: &'a [u8],
    map: &'a [u8],
    used: [u64; 4],
}

impl<'a> DictValues<'a> {
    fn new(array: &'a ArrayRef, map: &'a [u8]) -> Result<Self, Error> {
        let d: &DictionaryArray<UInt8Type> = array
            .as_dictionary_opt()
            .ok_or_else(|| unsupported("a UInt8 dictionary"))?;
        Ok(DictValues {
            keys: d.keys().values(),
            map,
            used: [0; 4],
        })
    }
}

impl LeafValues for DictValues<'_> {
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
        self.used[usize::from(k >> 6)] |= u64::from(valid) << (k & 63);
        usize::from(valid)
    }
}

/// Column-chunk buffers handed back after their bytes reached the file,
/// so that steady-state encoding allocates (and page-faults) nothing.
#[derive(Debug, Default)]
pub(crate) struct BufferPool {
    free: std::sync::Mutex<Vec<Vec<u8>>>,
}

impl BufferPool {
    /// Most buffers kept: enough for every leaf of a few row groups.
    const KEEP: usize = 64;

    fn take(&self) -> Vec<u8> {
        self.free
            .lock()
            .map(|mut f| f.pop())
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Returns a chunk's buffer to the pool (dropped if still shared).
    pub(crate) fn give_back(&self, bytes: Bytes) {
        let mut v = Vec::from(bytes);
        v.clear();
        if let Ok(mut f) = self.free.lock()
            && f.len() < Self::KEEP
        {
            f.push(v);
        }
    }
}

/// The Parquet codec of a [`Compression`].
pub(crate) fn parquet_codec(c: Compression) -> Result<PqCompression, Error> {
    Ok(match c {
        Compression::None => PqCompression::UNCOMPRESSED,
        Compression::Snappy => PqCompression::SNAPPY,
        Compression::Lz4 => PqCompression::LZ4_RAW,
        Compression::Zstd(l) => PqCompression::ZSTD(ZstdLevel::try_new(l)?),
    })
}

/// Compresses one page body as Parquet's codecs define them: raw Snappy,
/// an LZ4 block without a size prefix (`LZ4_RAW`), a zstd frame.
fn compress(codec: Compression, page: &[u8]) -> Result<Vec<u8>, Error> {
    let io =
        |e: std::io::Error| Error::Parquet(parquet::errors::ParquetError::External(Box::new(e)));
    Ok(match codec {
        Compression::None => page.to_vec(),
        Compression::Snappy => snap::raw::Encoder::new()
            .compress_vec(page)
            .map_err(|e| io(e.into()))?,
        Compression::Lz4 => lz4_flex::block::compress(page),
        Compression::Zstd(level) => zstd::bulk::compress(page, level).map_err(io)?,
    })
}

/// A `List<Struct>` column and its struct of entries.
fn list_parts(column: &ArrayRef) -> Result<(&GenericListArray<i32>, &StructArray), Error> {
    let list = column
        .as_list_opt::<i32>()
        .ok_or_else(|| unsupported("a list column"))?;
    let item = list
        .values()
        .as_struct_opt()
        .ok_or_else(|| unsupported("a struct item"))?;
    Ok((list, item))
}

fn unsupported(what: &str) -> Error {
    Error::InvalidConfig(format!("direct Parquet encoder: expected {what}"))
}

/// The smallest and largest value of a page of `PLAIN` strings (each a
/// 4-byte length and the bytes).
///
/// Values are compared by a 16-byte big-endian prefix key, zero-padded
/// and masked to the value's length: a smaller key means a smaller string,
/// and only equal keys (rare) need a full comparison. `values` is padded
/// by 16 bytes for the scan and restored.
fn plain_min_max(values: &mut Vec<u8>) -> Option<(&[u8], &[u8])> {
    let end = values.len();
    if end == 0 {
        return None;
    }
    values.extend_from_slice(&[0u8; 16]);
    let buf = values.as_slice();
    let value = |o: usize| -> (usize, usize, u128) {
        let mut len_bytes = [0u8; 4];
        len_bytes.copy_from_slice(&buf[o..o + 4]);
        let l = u32::from_le_bytes(len_bytes) as usize;
        let mut raw = [0u8; 16];
        raw.copy_from_slice(&buf[o + 4..o + 20]);
        let raw = u128::from_be_bytes(raw);
        let key = if l >= 16 {
            raw
        } else {
            raw & !(u128::MAX >> (l * 8))
        };
        (o + 4, l, key)
    };
    let (v, l, k) = value(0);
    let (mut lo, mut hi) = ((v, l, k), (v, l, k));
    let mut o = v + l;
    while o < end {
        let (v, l, k) = value(o);
        if k > hi.2 || (k == hi.2 && buf[v..v + l] > buf[hi.0..hi.0 + hi.1]) {
            hi = (v, l, k);
        }
        if k < lo.2 || (k == lo.2 && buf[v..v + l] < buf[lo.0..lo.0 + lo.1]) {
            lo = (v, l, k);
        }
        o = v + l;
    }
    values.truncate(end);
    let buf = values.as_slice();
    Some((&buf[lo.0..lo.0 + lo.1], &buf[hi.0..hi.0 + hi.1]))
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

/// The RLE/bit-packed hybrid: one RLE run when every value is equal,
/// otherwise bit-packed runs of up to [`RUN`] values (the last group padded
/// with zeros, which the page's value count makes unread).
fn encode_hybrid(out: &mut Vec<u8>, values: &[u8], width: u8) {
    if values.is_empty() || width == 0 {
        return;
    }
    if values.iter().all(|&v| v == values[0]) {
        varint(out, (values.len() as u64) << 1);
        out.extend_from_slice(&[values[0]][..usize::from(width).div_ceil(8)]);
        return;
    }
    for run in values.chunks(RUN) {
        let groups = run.len().div_ceil(8);
        out.push(((groups as u8) << 1) | 1);
        for group in run.chunks(8) {
            let mut bits = 0u64;
            for (i, &v) in group.iter().enumerate() {
                bits |= u64::from(v) << (i * usize::from(width));
            }
            out.extend_from_slice(&bits.to_le_bytes()[..usize::from(width)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    use arrow_array::{
        ListArray, RecordBatch, StringArray, StructArray, UInt8Array,
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
        let writer = ArrowWriter::try_new_with_options(
            Vec::new(),
            schema.clone(),
            ArrowWriterOptions::new(),
        )
        .unwrap();
        let (mut file, _) = writer.into_serialized_writer().unwrap();
        let shredder = Shredder::supports(&schema, file.schema_descr(), Compression::None)
            .expect("shape supported");
        let pool = BufferPool::default();
        for group in groups {
            let mut leaves = shredder.row_group();
            for l in &mut leaves {
                for b in *group {
                    l.write(b).unwrap();
                }
            }
            let mut rg = file.next_row_group().unwrap();
            for l in &mut leaves {
                let (bytes, close) = l.close(&pool).unwrap();
                rg.append_column(&bytes, close).unwrap();
            }
            rg.close().unwrap();
        }
        let bytes = Bytes::from(file.into_inner().unwrap());
        ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    }

    fn rows(batches: &[RecordBatch]) -> Vec<String> {
        crate::readback::rows_as_text(batches).unwrap()
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
            let leaf_type = |d: bool| {
                if d {
                    DataType::Dictionary(Box::new(DataType::UInt8), Box::new(DataType::Utf8))
                } else {
                    DataType::Utf8
                }
            };
            let rows = draw(300);
            let mut fields = Vec::new();
            let mut columns: Vec<ArrayRef> = Vec::new();
            // A flat column.
            let (flat_nullable, flat_dict) = (draw(2) == 1, draw(2) == 1);
            fields.push(Field::new("f", leaf_type(flat_dict), flat_nullable));
            columns.push(if flat_dict {
                dict(flat_nullable, rows, &mut draw)
            } else {
                string(flat_nullable, rows, &mut draw)
            });
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
                let (nullable, is_dict) = (draw(2) == 1, draw(2) == 1);
                children.push(Field::new(format!("c{c}"), leaf_type(is_dict), nullable));
                child_arrays.push(if is_dict {
                    dict(nullable, entries, &mut draw)
                } else {
                    string(nullable, entries, &mut draw)
                });
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
            assert_eq!(rows_of(&got), rows_of(&[batch]), "seed {seed}");
        }
    }

    fn rows_of(batches: &[RecordBatch]) -> Vec<String> {
        rows(batches)
    }

    #[test]
    fn unsupported_shapes_fall_back() {
        let schema = Schema::new(vec![Field::new("x", DataType::Int64, true)]);
        let parquet = parquet::arrow::ArrowSchemaConverter::new()
            .convert(&schema)
            .unwrap();
        assert!(Shredder::supports(&schema, &parquet, Compression::None).is_none());
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
