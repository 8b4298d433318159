//! Page checksums: a byte flipped inside a page of a file strata wrote is
//! an error for every strata reader (the scan and the synchronous read of
//! the merge and compaction), never different values; without checksums
//! the same flips can pass as values.

mod support;

use std::{io::Write, sync::Arc};

use arrow_array::{
    ArrayRef, Decimal128Array, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch,
    StringArray, types::Int64Type,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use futures::TryStreamExt;
use parquet::{
    arrow::arrow_reader::ArrowReaderOptions,
    basic::{Compression, ZstdLevel},
    file::{
        metadata::{PageIndexPolicy, ParquetMetaDataReader},
        properties::WriterProperties,
    },
};
use strata_gen::rng::RowRng;
use strata_parquet::writer::ParquetWriter;
use strata_scan::{ScanFile, ScanRequest};
use strata_store::source::Source;
use support::rt;

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("n", DataType::Int32, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("f", DataType::Float64, true),
        Field::new("d", DataType::Decimal128(15, 2), true),
        Field::new_list(
            "l",
            Arc::new(Field::new("item", DataType::Int64, true)),
            true,
        ),
    ]))
}

fn batch(rng: &mut RowRng, rows: usize) -> RecordBatch {
    let mut maybe = |p: u64| rng.next_below(100) >= p;
    let n: Int32Array = (0..rows)
        .map(|i| maybe(20).then_some(i as i32 * 7))
        .collect();
    let s: StringArray = (0..rows)
        .map(|i| (i % 5 != 0).then(|| format!("word-{}", i % 13)))
        .collect();
    let f: Float64Array = (0..rows).map(|i| Some(i as f64 / 3.0)).collect();
    let d = Decimal128Array::from_iter((0..rows).map(|i| Some(i as i128 * 101 - 5000)))
        .with_precision_and_scale(15, 2)
        .unwrap();
    let l = ListArray::from_iter_primitive::<Int64Type, _, _>(
        (0..rows).map(|i| (i % 4 != 1).then(|| (0..i % 3).map(|j| Some(j as i64)))),
    );
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..rows as i64)),
        Arc::new(n),
        Arc::new(s),
        Arc::new(f),
        Arc::new(d),
        Arc::new(l),
    ];
    RecordBatch::try_new(schema(), cols).unwrap()
}

/// A file of `rows` rows in row groups of 150 and pages of 50 rows, with
/// or without page checksums.
fn file(codec: Compression, checksums: bool) -> (Bytes, RecordBatch) {
    let mut rng = RowRng::seeded(7);
    let data = batch(&mut rng, 300);
    let props = WriterProperties::builder()
        .set_compression(codec)
        .set_max_row_group_row_count(Some(150))
        .set_data_page_row_count_limit(50)
        .build();
    let mut w = ParquetWriter::try_new(Vec::new(), schema(), props).unwrap();
    assert!(w.is_direct());
    w.set_page_checksums(checksums);
    w.write(&data).unwrap();
    (Bytes::from(w.finish().unwrap()), data)
}

/// Every page of the file: `(offset, size)`, headers included (dictionary
/// pages too).
fn pages(bytes: &Bytes) -> Vec<(usize, usize)> {
    let md = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(bytes)
        .unwrap();
    let mut out = Vec::new();
    for (g, rg) in md.row_groups().iter().enumerate() {
        let index = md.page_index_for_row_group(g);
        for (c, chunk) in rg.columns().iter().enumerate() {
            let data = index.page_locations(c).unwrap();
            if let Some(dict) = chunk.dictionary_page_offset() {
                out.push((dict as usize, (data[0].offset - dict) as usize));
            }
            out.extend(
                data.iter()
                    .map(|p| (p.offset as usize, p.compressed_page_size as usize)),
            );
        }
    }
    out
}

/// The rows of `bytes` as strata's scan reads them.
fn scan(rt: &tokio::runtime::Runtime, bytes: Bytes) -> Result<Vec<RecordBatch>, String> {
    rt.block_on(async {
        let file = ScanFile::open(Source::from_bytes(bytes))
            .await
            .map_err(|e| e.to_string())?;
        file.stream(&ScanRequest::default())
            .map_err(|e| e.to_string())?
            .try_collect()
            .await
            .map_err(|e| e.to_string())
    })
}

/// The rows of `bytes` as the synchronous reader reads them.
fn read(bytes: &[u8]) -> Result<Vec<RecordBatch>, String> {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(bytes).unwrap();
    let b = strata_parquet::read::open(f, ArrowReaderOptions::new()).map_err(|e| e.to_string())?;
    let mut r = strata_parquet::read::build(b).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(b) = strata_parquet::read::next_batch(&mut r).map_err(|e| e.to_string())? {
        out.push(b);
    }
    Ok(out)
}

fn same(got: &[RecordBatch], want: &RecordBatch) -> bool {
    arrow_select::concat::concat_batches(&want.schema(), got).is_ok_and(|b| &b == want)
}

/// Flips one bit at a few seeded places in every page; returns how many
/// reads failed and how many gave other values (of each reader).
fn flip_pages(codec: Compression, checksums: bool) -> (usize, usize, usize) {
    let rt = rt();
    let (bytes, want) = file(codec, checksums);
    assert!(same(&scan(&rt, bytes.clone()).unwrap(), &want));
    assert!(same(&read(&bytes).unwrap(), &want));
    let mut rng = RowRng::seeded(99);
    let (mut errors, mut changed, mut reads) = (0, 0, 0);
    for (offset, size) in pages(&bytes) {
        // The last byte of the body, and seeded places in the page.
        let mut at = vec![offset + size - 1];
        at.extend((0..6).map(|_| offset + rng.next_below(size as u64) as usize));
        for at in at {
            let mut bad = bytes.to_vec();
            bad[at] ^= 1 << rng.next_below(8);
            let bad = Bytes::from(bad);
            for got in [scan(&rt, bad.clone()), read(&bad)] {
                reads += 1;
                match got {
                    Err(_) => errors += 1,
                    Ok(b) if !same(&b, &want) => changed += 1,
                    Ok(_) => {}
                }
            }
        }
    }
    (errors, changed, reads)
}

#[test]
fn a_flipped_page_byte_is_an_error_with_checksums() {
    for codec in [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::ZSTD(ZstdLevel::try_new(1).unwrap()),
    ] {
        let (errors, changed, reads) = flip_pages(codec, true);
        assert_eq!(changed, 0, "{codec:?}: a flip gave other values");
        // A flip of a header field that does not change what is read (the
        // dictionary page's is_sorted) may pass; every other is an error.
        assert!(errors * 10 >= reads * 9, "{codec:?}: {errors} of {reads}");
    }
}

#[test]
fn without_checksums_a_flipped_byte_can_read_as_values() {
    let (_, changed, _) = flip_pages(Compression::UNCOMPRESSED, false);
    assert!(changed > 0);
}

#[test]
fn the_checksum_is_crc32_of_the_stored_page_body() {
    // An uncompressed page of a required Int64 column holds the values as
    // they are: its CRC is that of the little-endian values.
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let values: Vec<i64> = (0..10).collect();
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(values.clone())) as ArrayRef],
    )
    .unwrap();
    let mut w = ParquetWriter::try_new(Vec::new(), schema, WriterProperties::default()).unwrap();
    w.write(&b).unwrap();
    let bytes = w.finish().unwrap();
    let body: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let crc = crc32_of(&body);
    // The header's crc field (id 4, i32): zigzag varint after the sizes.
    let at = bytes.windows(body.len()).position(|w| w == body).unwrap();
    assert!(at > 4);
    let mut zigzag = Vec::new();
    let mut v = u64::from(((crc as i32) << 1 ^ ((crc as i32) >> 31)) as u32);
    while v >= 0x80 {
        zigzag.push((v as u8) | 0x80);
        v >>= 7;
    }
    zigzag.push(v as u8);
    let mut field = vec![0x15];
    field.extend(&zigzag);
    assert!(
        bytes[4..at].windows(field.len()).any(|w| w == field),
        "no crc field {field:x?} in header {:x?}",
        &bytes[4..at]
    );
}

/// The CRC-32 of zlib, bit by bit (an independent check of the encoder's).
fn crc32_of(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
