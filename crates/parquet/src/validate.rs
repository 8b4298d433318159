//! Checks of a user's file that its readers do not make, run before and
//! after decoding.
//!
//! With [`crate::guard`] this is the one reading layer of strata: every
//! reader of a user's Parquet file (scan, sort, the merge, compaction,
//! `--verify-distribution`) checks the footer with [`parquet_footer`]
//! before decoding anything, and every decoded batch with [`batch`] before
//! strata's own kernels (row encoding, gathers, writers) see it. Arrow IPC
//! files are read by `strata-scan`'s IPC reader, which checks every block
//! and buffer against the file itself.

use arrow_array::{Array, RecordBatch};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType, Field};
use parquet::file::metadata::ParquetMetaData;

/// The deepest nesting of a schema strata reads: struct, list and map
/// levels from the root to a leaf. A deeper schema is refused before its
/// readers recurse into it.
pub const MAX_DEPTH: usize = 64;

/// A file that breaks its format's rules: the message says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed file: {0}")]
pub struct Malformed(pub String);

fn malformed(msg: impl Into<String>) -> Malformed {
    Malformed(msg.into())
}

/// Checks the Thrift encoding of a Parquet footer (the `FileMetaData`
/// struct, `footer` holding exactly its bytes) before parquet decodes it:
/// every list, set and map declares at most as many elements as bytes
/// remain (each element takes at least one byte), and structs nest at
/// most [`MAX_DEPTH`] deep. parquet's decoder skips a list of booleans
/// without reading a byte per element, so a footer of a few kilobytes
/// that declares billions of them costs it minutes or hours.
///
/// # Errors
/// [`Malformed`] when the footer breaks a rule or ends early.
pub fn parquet_footer_bytes(footer: &[u8]) -> Result<(), Malformed> {
    let mut r = Thrift {
        buf: footer,
        pos: 0,
    };
    r.skip(MAX_DEPTH)
        .map_err(|what| malformed(format!("the footer's encoding: {what} at byte {}", r.pos)))
}

/// A reader of Thrift's compact protocol that only skips.
struct Thrift<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Thrift<'_> {
    fn byte(&mut self) -> Result<u8, &'static str> {
        let b = *self.buf.get(self.pos).ok_or("it ends early")?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, &'static str> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint runs past 10 bytes")
    }

    fn bytes(&mut self, n: u64) -> Result<(), &'static str> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&e| e <= self.buf.len())
            .ok_or("a value runs past its end")?;
        self.pos = end;
        Ok(())
    }

    /// `n` elements, each at least a byte, must fit in what remains.
    fn count(&self, n: u64) -> Result<u64, &'static str> {
        if n > (self.buf.len() - self.pos) as u64 {
            Err("a list declares more elements than bytes remain")
        } else {
            Ok(n)
        }
    }

    /// Skips a value of compact type `t`; `in_list` for list elements,
    /// where booleans take a byte.
    fn value(&mut self, t: u8, depth: usize, in_list: bool) -> Result<(), &'static str> {
        match t {
            1 | 2 if !in_list => Ok(()),
            1..=3 => self.bytes(1),
            4..=6 => self.varint().map(drop),
            7 => self.bytes(8),
            8 => {
                let n = self.varint()?;
                self.bytes(n)
            }
            9 | 10 => {
                let head = self.byte()?;
                let n = match head >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                let n = self.count(n)?;
                for _ in 0..n {
                    self.nested(head & 0x0f, depth, true)?;
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                let n = self.count(n)?;
                if n > 0 {
                    let kv = self.byte()?;
                    for _ in 0..n {
                        self.nested(kv >> 4, depth, true)?;
                        self.nested(kv & 0x0f, depth, true)?;
                    }
                }
                Ok(())
            }
            12 => self.skip(depth),
            13 => self.bytes(16),
            _ => Err("an unknown type"),
        }
    }

    fn nested(&mut self, t: u8, depth: usize, in_list: bool) -> Result<(), &'static str> {
        if depth == 0 {
            return Err("values nest too deeply");
        }
        self.value(t, depth - 1, in_list)
    }

    /// Skips a struct's fields up to its stop byte.
    fn skip(&mut self, depth: usize) -> Result<(), &'static str> {
        if depth == 0 {
            return Err("structs nest too deeply");
        }
        loop {
            let head = self.byte()?;
            if head == 0 {
                return Ok(());
            }
            if head >> 4 == 0 {
                // A long-form field id follows.
                self.varint()?;
            }
            self.value(head & 0x0f, depth - 1, false)?;
        }
    }
}

/// How deeply `field` nests: 1 for a primitive.
fn depth(field: &Field) -> usize {
    let children: Vec<&Field> = match field.data_type() {
        DataType::Struct(fs) => fs.iter().map(AsRef::as_ref).collect(),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => vec![f.as_ref()],
        DataType::Union(fs, _) => fs.iter().map(|(_, f)| f.as_ref()).collect(),
        DataType::Dictionary(_, v) => {
            return 1 + usize::from(matches!(v.as_ref(), DataType::Struct(_)));
        }
        _ => Vec::new(),
    };
    1 + children.into_iter().map(depth).max().unwrap_or(0)
}

/// Checks a Parquet footer against the file it came from (`file_len`
/// bytes): the schema nests at most [`MAX_DEPTH`] levels; row counts are
/// not negative and add up to the file's; every column chunk (dictionary
/// page first), column index and offset index lies inside the file, before
/// the footer.
///
/// # Errors
/// [`Malformed`] naming the first rule broken.
pub fn parquet_footer(md: &ParquetMetaData, file_len: u64) -> Result<(), Malformed> {
    let schema = md.file_metadata().schema_descr();
    let deepest = schema
        .columns()
        .iter()
        .map(|c| c.path().parts().len())
        .max()
        .unwrap_or(0);
    if deepest > MAX_DEPTH {
        return Err(malformed(format!(
            "the schema nests {deepest} levels deep; strata reads at most {MAX_DEPTH}"
        )));
    }
    // The footer and its length and magic (8 bytes) end the file.
    let data_end = file_len.saturating_sub(8);
    // `what` names the part only when it is out of place: building the
    // name for every chunk was most of the cost of opening a wide file.
    let in_file = |what: &dyn Fn() -> String, start: i64, len: i64| -> Result<(), Malformed> {
        let ok = start >= 4
            && len >= 0
            && (start as u64)
                .checked_add(len as u64)
                .is_some_and(|end| end <= data_end);
        if ok {
            Ok(())
        } else {
            Err(malformed(format!(
                "{} at byte {start}, {len} bytes long, lies outside the file ({file_len} bytes)",
                what()
            )))
        }
    };
    let mut total: i64 = 0;
    for (g, rg) in md.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            return Err(malformed(format!(
                "row group {g} has {} rows",
                rg.num_rows()
            )));
        }
        total = total
            .checked_add(rg.num_rows())
            .ok_or_else(|| malformed("the row groups' row counts overflow"))?;
        if rg.columns().len() != schema.num_columns() {
            return Err(malformed(format!(
                "row group {g} has {} column chunks, the schema {} leaves",
                rg.columns().len(),
                schema.num_columns()
            )));
        }
        for (c, col) in rg.columns().iter().enumerate() {
            let what = || format!("row group {g} column {c}");
            let data = col.data_page_offset();
            let start = match col.dictionary_page_offset() {
                Some(d) if d > data => {
                    return Err(malformed(format!(
                        "{}: its dictionary page (byte {d}) follows its data (byte {data})",
                        what()
                    )));
                }
                Some(d) => d,
                None => data,
            };
            in_file(
                &|| format!("{}'s data", what()),
                start,
                col.compressed_size(),
            )?;
            if data - start > col.compressed_size() {
                return Err(malformed(format!(
                    "{}: its first data page lies past its {} bytes",
                    what(),
                    col.compressed_size()
                )));
            }
            if col.num_values() < 0 {
                return Err(malformed(format!(
                    "{} has {} values",
                    what(),
                    col.num_values()
                )));
            }
            if let (Some(at), Some(len)) = (col.column_index_offset(), col.column_index_length()) {
                in_file(&|| format!("{}'s column index", what()), at, i64::from(len))?;
            }
            if let (Some(at), Some(len)) = (col.offset_index_offset(), col.offset_index_length()) {
                in_file(&|| format!("{}'s offset index", what()), at, i64::from(len))?;
            }
        }
    }
    if let Some(index) = md.page_index() {
        offset_index(md, index.as_ref())?;
    }
    let declared = md.file_metadata().num_rows();
    if declared != total {
        return Err(malformed(format!(
            "the footer counts {declared} rows, its row groups {total}"
        )));
    }
    Ok(())
}

/// Checks an offset index against its
/// footer: every column chunk's pages start at row 0, in increasing row
/// order, below the row group's row count, and lie inside the chunk.
/// Readers skip pages by it, trusting it.
fn offset_index(
    md: &ParquetMetaData,
    index: &dyn parquet::file::metadata::page_index::PageIndexProvider,
) -> Result<(), Malformed> {
    for (g, rg) in md.row_groups().iter().enumerate() {
        for (c, chunk) in rg.columns().iter().enumerate() {
            let Some(pages) = index.offset_index(g, c) else {
                continue;
            };
            let (start, len) = chunk.byte_range();
            let end = start.saturating_add(len);
            let mut next_row = 0i64;
            for (p, page) in pages.page_locations().iter().enumerate() {
                let row_ok = if p == 0 {
                    page.first_row_index == 0
                } else {
                    page.first_row_index >= next_row
                };
                let at = page.offset;
                let size = i64::from(page.compressed_page_size);
                let inside = at >= 0
                    && size > 0
                    && (at as u64) >= start
                    && (at as u64)
                        .checked_add(size as u64)
                        .is_some_and(|e| e <= end);
                if !row_ok || page.first_row_index >= rg.num_rows().max(1) || !inside {
                    return Err(malformed(format!(
                        "the offset index of row group {g} column {c}: page {p} (row {}, byte {at}, {size} bytes) is out of order or outside its chunk",
                        page.first_row_index
                    )));
                }
                next_row = page.first_row_index + 1;
            }
        }
    }
    Ok(())
}

/// Checks the schema of a decoded file: at most [`MAX_DEPTH`] levels.
///
/// # Errors
/// [`Malformed`] naming the deepest field.
pub fn schema_depth(schema: &arrow_schema::Schema) -> Result<(), Malformed> {
    for f in schema.fields() {
        let d = depth(f);
        if d > MAX_DEPTH {
            return Err(malformed(format!(
                "column {} nests {d} levels deep; strata reads at most {MAX_DEPTH}",
                f.name()
            )));
        }
    }
    Ok(())
}

/// Checks a decoded batch as Arrow's full validation does, but for UTF-8:
/// buffer sizes, null counts, offsets (strings, binaries, lists, maps: in
/// order and within their values), dictionary keys within their
/// dictionary, run ends and children's lengths, at every nesting level.
/// The readers check UTF-8 as they decode strings (parquet with
/// `simdutf8`, arrow-ipc in its validation), and checking it again cost
/// 10% to 14% of a scan of the string-heavy presets.
///
/// # Errors
/// [`Malformed`] naming the column.
pub fn batch(batch: &RecordBatch) -> Result<(), Malformed> {
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let bad = |e: ArrowError| {
            malformed(format!(
                "column {} decodes to invalid data: {e}",
                field.name()
            ))
        };
        array_data(&column.to_data()).map_err(bad)?;
        if column.len() != batch.num_rows() {
            return Err(malformed(format!(
                "column {} has {} rows, the batch {}",
                field.name(),
                column.len(),
                batch.num_rows()
            )));
        }
    }
    Ok(())
}

/// [`batch`] for one array and its children.
fn array_data(d: &ArrayData) -> Result<(), ArrowError> {
    d.validate()?;
    d.validate_nulls()?;
    match d.data_type() {
        DataType::Utf8 => in_order(d.buffer::<i32>(0).get(..=d.len()))?,
        DataType::LargeUtf8 => in_order(d.buffer::<i64>(0).get(..=d.len()))?,
        _ => d.validate_values()?,
    }
    d.child_data().iter().try_for_each(array_data)
}

/// Checks that offsets never decrease (`validate` has checked the first
/// and last against the values).
fn in_order<T: PartialOrd>(offsets: Option<&[T]>) -> Result<(), ArrowError> {
    match offsets {
        Some(o) if o.windows(2).all(|w| w[0] <= w[1]) => Ok(()),
        _ => Err(ArrowError::InvalidArgumentError(
            "string offsets decrease or are missing".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, DictionaryArray, Int32Array, StringArray, types::Int32Type};
    use arrow_buffer::Buffer;
    use bytes::Bytes;
    use parquet::arrow::ArrowWriter;

    use super::*;

    fn footer(file: &[u8]) -> ParquetMetaData {
        parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&Bytes::copy_from_slice(file))
            .unwrap()
    }

    #[test]
    fn a_valid_footer_passes_and_a_shorter_file_does_not() {
        let b = RecordBatch::try_from_iter([(
            "x",
            Arc::new(Int32Array::from_iter_values(0..1000)) as ArrayRef,
        )])
        .unwrap();
        let mut w = ArrowWriter::try_new(Vec::new(), b.schema(), None).unwrap();
        w.write(&b).unwrap();
        let file = w.into_inner().unwrap();
        let md = footer(&file);
        assert_eq!(parquet_footer(&md, file.len() as u64), Ok(()));
        // The same footer claimed by a file of half the size: its column
        // chunk lies outside.
        let e = parquet_footer(&md, file.len() as u64 / 4).unwrap_err();
        assert!(e.to_string().contains("lies outside the file"), "{e}");
    }

    #[test]
    fn footers_declaring_more_elements_than_bytes_are_refused() {
        let b = RecordBatch::try_from_iter([(
            "x",
            Arc::new(Int32Array::from_iter_values(0..100)) as ArrayRef,
        )])
        .unwrap();
        let mut w = ArrowWriter::try_new(Vec::new(), b.schema(), None).unwrap();
        w.write(&b).unwrap();
        let file = w.into_inner().unwrap();
        let n = file.len();
        let len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
        assert_eq!(parquet_footer_bytes(&file[n - 8 - len..n - 8]), Ok(()));
        // Field 1 (i32) = 1, then field 2: a list of 2^31 - 1 booleans in
        // eight bytes, which parquet's decoder would skip one by one.
        let bools = [0x15, 0x02, 0x19, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00];
        let e = parquet_footer_bytes(&bools).unwrap_err();
        assert!(
            e.to_string().contains("more elements than bytes remain"),
            "{e}"
        );
        // Cut short.
        assert!(parquet_footer_bytes(&file[n - 8 - len..n - 9]).is_err());
    }

    #[test]
    fn deep_schemas_are_refused() {
        let mut f = Field::new("leaf", DataType::Int32, true);
        for i in 0..MAX_DEPTH {
            f = Field::new(format!("s{i}"), DataType::Struct(vec![f].into()), true);
        }
        let schema = arrow_schema::Schema::new(vec![f]);
        let e = schema_depth(&schema).unwrap_err();
        assert!(e.to_string().contains("65 levels"), "{e}");
    }

    #[test]
    fn batches_with_bad_offsets_or_keys_are_refused() {
        // Dictionary keys past the dictionary, built unchecked as a reader
        // might.
        let values = StringArray::from(vec!["a", "b"]);
        let keys = Int32Array::from(vec![0, 1, 5]);
        // SAFETY: deliberately invalid keys; only validated, never read.
        let dict = unsafe { DictionaryArray::<Int32Type>::new_unchecked(keys, Arc::new(values)) };
        let b = RecordBatch::try_from_iter([("d", Arc::new(dict) as ArrayRef)]).unwrap();
        let e = batch(&b).unwrap_err();
        assert!(e.to_string().contains("column d"), "{e}");

        // String offsets past the values.
        // SAFETY: as above.
        let offsets = unsafe { arrow_buffer::OffsetBuffer::new_unchecked(vec![0i32, 1, 9].into()) };
        // SAFETY: as above.
        let strings = unsafe { StringArray::new_unchecked(offsets, Buffer::from(b"ab"), None) };
        let b = RecordBatch::try_from_iter([("s", Arc::new(strings) as ArrayRef)]).unwrap();
        let e = batch(&b).unwrap_err();
        assert!(e.to_string().contains("column s"), "{e}");

        // Offsets inside the values but decreasing: only the order check
        // sees them.
        // SAFETY: as above.
        let offsets =
            unsafe { arrow_buffer::OffsetBuffer::new_unchecked(vec![0i32, 2, 1, 2].into()) };
        // SAFETY: as above.
        let strings = unsafe { StringArray::new_unchecked(offsets, Buffer::from(b"ab"), None) };
        let b = RecordBatch::try_from_iter([("t", Arc::new(strings) as ArrayRef)]).unwrap();
        let e = batch(&b).unwrap_err();
        assert!(e.to_string().contains("decrease"), "{e}");
    }
}
