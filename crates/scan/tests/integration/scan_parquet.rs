//! Projected Parquet reads checked against parquet's own synchronous
//! reader (full read, then projection, filter and limit in plain Rust),
//! and the bytes they fetch checked against the file's layout.

use std::{ops::Range, sync::Arc};

use arrow_array::{
    Array, ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray, StructArray,
    builder::{Int32Builder, Int64Builder, ListBuilder, MapBuilder, StringBuilder},
    types::Int32Type,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use bytes::Bytes;
use futures::TryStreamExt;
use object_store::{local::LocalFileSystem, path::Path};
use parquet::{
    arrow::{ArrowWriter, arrow_reader::ParquetRecordBatchReaderBuilder},
    basic::{Compression, ZstdLevel},
    file::properties::{EnabledStatistics, WriterProperties},
};
use strata_gen::rng::RowRng;
use strata_scan::Error;
use strata_scan::{Filter, ScanRequest, TAIL_PREFETCH, parquet::ParquetFile};
use strata_store::source::{FetchOptions, IoStats, Source};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// A random column of `n` rows: one of several types, flat or nested,
/// with nulls.
fn random_column(rng: &mut RowRng, kind: u64, n: usize) -> ArrayRef {
    let null = |rng: &mut RowRng| rng.next_below(6) == 0;
    let word = |rng: &mut RowRng| -> String {
        let len = rng.next_below(6) as usize;
        (0..len)
            .map(|_| (b'a' + rng.next_below(5) as u8) as char)
            .collect()
    };
    match kind {
        0 => Arc::new(Int64Array::from_iter(
            (0..n).map(|_| (!null(rng)).then(|| rng.next_u64() as i64)),
        )),
        1 => {
            Arc::new(Int32Array::from_iter((0..n).map(|_| {
                (!null(rng)).then(|| rng.next_below(1000) as i32 - 500)
            })))
        }
        2 => {
            Arc::new(Float64Array::from_iter((0..n).map(|_| {
                (!null(rng)).then(|| rng.next_below(10_000) as f64 / 7.0)
            })))
        }
        3 => Arc::new(StringArray::from_iter(
            (0..n).map(|_| (!null(rng)).then(|| word(rng))),
        )),
        4 => Arc::new(
            (0..n)
                .map(|_| (!null(rng)).then(|| word(rng)))
                .collect::<Vec<_>>()
                .iter()
                .map(|w| w.as_deref())
                .collect::<DictionaryArray<Int32Type>>(),
        ),
        5 => Arc::new(BooleanArray::from_iter(
            (0..n).map(|_| (!null(rng)).then(|| rng.next_below(2) == 1)),
        )),
        6 => {
            let a = Int32Array::from_iter(
                (0..n).map(|_| (!null(rng)).then(|| rng.next_below(50) as i32)),
            );
            let b = StringArray::from_iter((0..n).map(|_| (!null(rng)).then(|| word(rng))));
            let nulls: Vec<bool> = (0..n).map(|_| !null(rng)).collect();
            let fields = Fields::from(vec![
                Field::new("a", DataType::Int32, true),
                Field::new("b", DataType::Utf8, true),
            ]);
            Arc::new(
                StructArray::try_new(fields, vec![Arc::new(a), Arc::new(b)], Some(nulls.into()))
                    .unwrap(),
            )
        }
        7 => {
            let mut b = ListBuilder::new(Int32Builder::new());
            for _ in 0..n {
                if null(rng) {
                    b.append_null();
                } else {
                    for _ in 0..rng.next_below(4) {
                        if null(rng) {
                            b.values().append_null();
                        } else {
                            b.values().append_value(rng.next_below(100) as i32);
                        }
                    }
                    b.append(true);
                }
            }
            Arc::new(b.finish())
        }
        _ => {
            let mut b = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
            for _ in 0..n {
                if null(rng) {
                    b.append(false).unwrap();
                } else {
                    for k in 0..rng.next_below(3) {
                        b.keys().append_value(format!("k{k}"));
                        b.values().append_value(rng.next_below(9) as i64);
                    }
                    b.append(true).unwrap();
                }
            }
            Arc::new(b.finish())
        }
    }
}

pub(crate) fn random_batch(seed: u64, columns: usize, rows: usize) -> RecordBatch {
    let mut rng = RowRng::seeded(seed);
    let cols: Vec<(String, ArrayRef)> = (0..columns)
        .map(|i| {
            let kind = rng.next_below(9);
            (format!("c{i}"), random_column(&mut rng, kind, rows))
        })
        .collect();
    RecordBatch::try_from_iter(cols).unwrap()
}

pub(crate) fn props(compression: Compression, row_group_rows: usize) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(row_group_rows))
        .set_statistics_enabled(EnabledStatistics::Page)
        .build()
}

/// `batch` written as Parquet, in pieces so that row groups and batches
/// do not line up.
pub(crate) fn write(batch: &RecordBatch, props: WriterProperties) -> Bytes {
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
    let mut start = 0;
    let mut piece = 1;
    while start < batch.num_rows() {
        let len = piece.min(batch.num_rows() - start);
        w.write(&batch.slice(start, len)).unwrap();
        start += len;
        piece = piece * 3 + 1;
    }
    w.close().unwrap();
    Bytes::from(buf)
}

/// The whole file by parquet's synchronous reader, as one batch.
pub(crate) fn full_read(bytes: &Bytes) -> RecordBatch {
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes.clone())
        .unwrap()
        .build()
        .unwrap();
    let schema = arrow_array::RecordBatchReader::schema(&reader);
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}

/// Saves `bytes` in `dir` and opens it through the local file system.
fn local_source(dir: &tempfile::TempDir, name: &str, bytes: &Bytes) -> Source {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let store = Arc::new(LocalFileSystem::new());
    let location = Path::from_filesystem_path(&path).unwrap();
    rt().block_on(Source::open(store, location, name, FetchOptions::local()))
        .unwrap()
}

fn collect(file: &ParquetFile, req: &ScanRequest) -> Result<RecordBatch, Error> {
    let names = req.columns.clone();
    let schema = file.projected_schema(names.as_deref())?;
    let batches: Vec<RecordBatch> = rt().block_on(file.stream(req)?.try_collect())?;
    for b in &batches {
        assert_eq!(b.schema().fields(), schema.fields());
        assert!(b.num_rows() > 0, "empty batches are not sent");
    }
    Ok(arrow_select::concat::concat_batches(&schema, &batches).unwrap())
}

/// `batch` with the named columns, in that order.
pub(crate) fn project(batch: &RecordBatch, names: &[String]) -> RecordBatch {
    let idx: Vec<usize> = names
        .iter()
        .map(|n| batch.schema().index_of(n).unwrap())
        .collect();
    batch.project(&idx).unwrap()
}

pub(crate) fn assert_same(got: &RecordBatch, want: &RecordBatch, what: &str) {
    assert_eq!(got.num_rows(), want.num_rows(), "{what}: row count");
    assert_eq!(
        got.schema().fields(),
        want.schema().fields(),
        "{what}: fields"
    );
    for (i, (g, w)) in got.columns().iter().zip(want.columns()).enumerate() {
        assert_eq!(g.as_ref(), w.as_ref(), "{what}: column {i}");
    }
}

pub(crate) fn random_projection(rng: &mut RowRng, schema: &Schema) -> Vec<String> {
    let mut names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    // Fisher-Yates, then a random prefix.
    for i in (1..names.len()).rev() {
        let j = rng.next_below(i as u64 + 1) as usize;
        names.swap(i, j);
    }
    let keep = rng.next_below(names.len() as u64 + 1) as usize;
    names.truncate(keep);
    names
}

/// Opens with a footer-sized tail read (one request), as for a file
/// larger than [`strata_scan::SMALL_FILE`], so that the reads the
/// tests count are the projected ones.
fn open(source: Source) -> ParquetFile {
    rt().block_on(async {
        let tail = source.tail(TAIL_PREFETCH).await.unwrap();
        ParquetFile::open(source, Some(tail)).await.unwrap()
    })
}

#[test]
fn projected_reads_equal_full_reads_then_projection() {
    let dir = tempfile::tempdir().unwrap();
    let codecs = [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::ZSTD(ZstdLevel::default()),
    ];
    for seed in 0..24u64 {
        let mut rng = RowRng::seeded(seed);
        let rows = match seed % 6 {
            0 => 0,
            1 => 1,
            _ => rng.next_below(3000) as usize,
        };
        let columns = 1 + rng.next_below(7) as usize;
        let batch = random_batch(seed, columns, rows);
        let codec = codecs[seed as usize % 3];
        let rg_rows = 1 + rng.next_below(700) as usize;
        let bytes = write(&batch, props(codec, rg_rows));
        let full = full_read(&bytes);
        let source = if seed % 2 == 0 {
            Source::from_bytes(bytes.clone())
        } else {
            local_source(&dir, &format!("f{seed}.parquet"), &bytes)
        };
        let file = open(source);
        assert_eq!(file.num_rows(), rows as u64);
        assert_eq!(file.schema().fields(), full.schema().fields());

        let all = collect(&file, &ScanRequest::default()).unwrap();
        assert_same(&all, &full, &format!("seed {seed}: all columns"));
        for _ in 0..4 {
            let names = random_projection(&mut rng, &full.schema());
            let req = ScanRequest {
                columns: Some(names.clone()),
                ..Default::default()
            };
            let got = collect(&file, &req).unwrap();
            assert_same(
                &got,
                &project(&full, &names),
                &format!("seed {seed}: {names:?}"),
            );
        }
    }
}

/// Merges ranges into a sorted union of disjoint ranges.
fn union(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Byte ranges of the column chunks of `columns` in row groups `rgs`.
fn chunk_ranges(file: &ParquetFile, columns: &[&str], rgs: &[usize]) -> Vec<Range<u64>> {
    let md = file.metadata();
    let descr = md.file_metadata().schema_descr();
    let schema = file.schema();
    let roots: Vec<usize> = columns
        .iter()
        .map(|c| schema.index_of(c).unwrap())
        .collect();
    let mut out = Vec::new();
    for &rg in rgs {
        for (leaf, chunk) in md.row_group(rg).columns().iter().enumerate() {
            if roots.contains(&descr.get_column_root_idx(leaf)) {
                let (start, len) = chunk.byte_range();
                out.push(start..start + len);
            }
        }
    }
    out
}

/// The end of the file from the last column chunk on: page indexes and
/// footer, plus the tail read on open.
fn footer_range(file: &ParquetFile) -> Range<u64> {
    let size = file.source().size();
    let data_end = file
        .metadata()
        .row_groups()
        .iter()
        .flat_map(|rg| rg.columns())
        .map(|c| c.byte_range().0 + c.byte_range().1)
        .max()
        .unwrap_or(0);
    data_end.min(size.saturating_sub(TAIL_PREFETCH))..size
}

/// Asserts every fetched range lies inside one of `allowed` (after
/// merging touching ones).
fn assert_ranges_within(stats: &IoStats, allowed: Vec<Range<u64>>) {
    let allowed = union(allowed);
    for r in stats.ranges() {
        assert!(
            allowed.iter().any(|a| a.start <= r.start && r.end <= a.end),
            "fetched {r:?} outside {allowed:?}"
        );
    }
}

/// Eight numeric and string columns, 20k rows in row groups of 4096.
fn wide_file(dir: &tempfile::TempDir, name: &str) -> (Bytes, Source) {
    let n = 20_000usize;
    let mut rng = RowRng::seeded(99);
    let mut cols: Vec<(String, ArrayRef)> = vec![(
        "id".to_string(),
        Arc::new(Int64Array::from_iter_values(0..n as i64)) as ArrayRef,
    )];
    for i in 1..8 {
        let col: ArrayRef = if i % 2 == 0 {
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|_| format!("{:016x}", rng.next_u64())),
            ))
        } else {
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|_| rng.next_u64() as i64),
            ))
        };
        cols.push((format!("c{i}"), col));
    }
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let bytes = write(&batch, props(Compression::UNCOMPRESSED, 4096));
    let source = local_source(dir, name, &bytes);
    (bytes, source)
}

#[test]
fn projected_reads_fetch_only_projected_chunks_and_the_footer() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, source) = wide_file(&dir, "wide.parquet");
    let size = bytes.len() as u64;

    // Opening reads the tail once; with the tail given, nothing.
    let stats = IoStats::with_log();
    let file = open(source.clone().with_stats(stats.clone()));
    assert_eq!(stats.snapshot().requests, 1);
    assert_eq!(stats.ranges(), vec![size - TAIL_PREFETCH..size]);
    let tail = bytes.slice((size - TAIL_PREFETCH) as usize..);
    let quiet = IoStats::with_log();
    rt().block_on(ParquetFile::open(
        source.clone().with_stats(quiet.clone()),
        Some(tail),
    ))
    .unwrap();
    assert_eq!(quiet.snapshot().requests, 0);

    let rgs: Vec<usize> = (0..file.metadata().num_row_groups()).collect();
    for columns in [vec!["c3"], vec!["c2", "c7", "id"], vec!["c1", "c2"]] {
        let names: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        let stats = IoStats::with_log();
        let file = open(source.clone().with_stats(stats.clone()));
        let got = collect(
            &file,
            &ScanRequest {
                columns: Some(names.clone()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_same(&got, &project(&full_read(&bytes), &names), "wide");
        let fetched = stats.snapshot().bytes_fetched;
        let projected = file.projected_bytes(Some(&names));
        let footer = footer_range(&file);
        assert!(
            fetched <= projected + (footer.end - footer.start) + 1024,
            "{columns:?}: fetched {fetched}, projected {projected}, footer {footer:?}"
        );
        let mut allowed = chunk_ranges(&file, &columns, &rgs);
        allowed.push(footer);
        assert_ranges_within(&stats, allowed);
        if columns.len() == 1 {
            assert!(fetched * 5 < size, "fetched {fetched} of {size}");
        }
    }
    assert_eq!(file.projected_bytes(None), {
        let md = file.metadata();
        md.row_groups()
            .iter()
            .map(|rg| rg.compressed_size() as u64)
            .sum::<u64>()
    });
}

#[test]
fn filters_equal_brute_force_and_prune_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, source) = wide_file(&dir, "filter.parquet");
    let full = full_read(&bytes);
    let id = full
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    let c2 = full
        .column(2)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    let c1 = full
        .column(1)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    let file = open(source.clone());

    type Check<'a> = Box<dyn Fn(usize) -> bool + 'a>;
    let cases: Vec<(&str, Check<'_>)> = vec![
        ("id > 19000", Box::new(|i| id.value(i) > 19_000)),
        ("id <= 4095.5", Box::new(|i| id.value(i) <= 4095)),
        ("id = 12345", Box::new(|i| id.value(i) == 12_345)),
        ("id != 7", Box::new(|i| id.value(i) != 7)),
        ("id < -1", Box::new(|_| false)),
        ("c2 >= 'f'", Box::new(|i| c2.value(i) >= "f")),
        ("c1 < 0", Box::new(|i| c1.value(i) < 0)),
    ];
    for (text, check) in &cases {
        let filter: Filter = text.parse().unwrap();
        for columns in [None, Some(vec!["c3".to_string(), "c2".to_string()])] {
            let req = ScanRequest {
                columns: columns.clone(),
                filter: Some(filter.clone()),
                limit: None,
            };
            let got = collect(&file, &req).unwrap();
            let keep: Vec<u64> = (0..full.num_rows())
                .filter(|&i| check(i))
                .map(|i| i as u64)
                .collect();
            let want =
                arrow_select::take::take_record_batch(&full, &arrow_array::UInt64Array::from(keep))
                    .unwrap();
            let want = match &columns {
                Some(names) => project(&want, names),
                None => want,
            };
            assert_same(&got, &want, text);
        }
    }

    // A filter near the end of a sorted column skips the other row
    // groups' chunks.
    let bytes_for = |filter: Option<Filter>| {
        let stats = IoStats::with_log();
        let file = open(source.clone().with_stats(stats.clone()));
        let req = ScanRequest {
            columns: Some(vec!["c1".into(), "c2".into()]),
            filter,
            limit: None,
        };
        collect(&file, &req).unwrap();
        let last = file.metadata().num_row_groups() - 1;
        (stats, file, last)
    };
    let (plain, _, _) = bytes_for(None);
    let (pruned, file, last) = bytes_for(Some("id > 19000".parse().unwrap()));
    let (plain, pruned_bytes) = (
        plain.snapshot().bytes_fetched,
        pruned.snapshot().bytes_fetched,
    );
    assert!(
        pruned_bytes * 3 < plain,
        "with filter {pruned_bytes}, without {plain}"
    );
    let mut allowed = chunk_ranges(&file, &["c1", "c2", "id"], &[last]);
    allowed.push(footer_range(&file));
    assert_ranges_within(&pruned, allowed);
}

#[test]
fn take_returns_the_rows_asked_for_and_fetches_only_their_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, source) = wide_file(&dir, "take.parquet");
    let full = full_read(&bytes);
    let file = open(source.clone());
    let mut rng = RowRng::seeded(5);
    for round in 0..6 {
        let count = rng.next_below(200) as usize;
        let rows: Vec<u64> = (0..count)
            .map(|_| rng.next_below(full.num_rows() as u64))
            .chain([0, 0, 19_999])
            .collect();
        let names = random_projection(&mut rng, &full.schema());
        let got = rt().block_on(file.take(&rows, Some(&names))).unwrap();
        let want = arrow_select::take::take_record_batch(
            &full,
            &arrow_array::UInt64Array::from(rows.clone()),
        )
        .unwrap();
        assert_same(&got, &project(&want, &names), &format!("round {round}"));
    }
    let none = rt().block_on(file.take(&[], None)).unwrap();
    assert_eq!(none.num_rows(), 0);
    assert_eq!(none.schema().fields(), file.schema().fields());

    // Rows of row group 2 only (rows 8192..12288).
    let stats = IoStats::with_log();
    let file = open(source.with_stats(stats.clone()));
    let rows = [9000u64, 8192, 12_287, 9000];
    let got = rt()
        .block_on(file.take(&rows, Some(&["c4".to_string(), "id".to_string()])))
        .unwrap();
    let ids = got.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(ids.values().to_vec(), vec![9000, 8192, 12_287, 9000]);
    let mut allowed = chunk_ranges(&file, &["c4", "id"], &[2]);
    allowed.push(footer_range(&file));
    assert_ranges_within(&stats, allowed);
}

#[test]
fn take_with_an_offset_index_fetches_only_the_pages_holding_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let n = 40_000i64;
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
        ),
        (
            "v",
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| i * 7919 % 10_007),
            )) as ArrayRef,
        ),
    ])
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::UNCOMPRESSED)
        .set_max_row_group_row_count(Some(20_000))
        .set_data_page_row_count_limit(500)
        .set_write_batch_size(500)
        .set_dictionary_enabled(false)
        .build();
    let bytes = write(&batch, props);
    let stats = IoStats::with_log();
    let file = open(local_source(&dir, "pages.parquet", &bytes).with_stats(stats.clone()));
    assert!(
        file.metadata().page_index().is_none(),
        "the offset index is decoded only when a take needs it"
    );
    let opened = stats.snapshot().bytes_fetched;
    assert!(
        file.indexed_metadata().page_index().is_some(),
        "offset index in the tail"
    );
    assert_eq!(
        stats.snapshot().bytes_fetched,
        opened,
        "decoded from the tail"
    );
    let got = rt()
        .block_on(file.take(&[25_001, 21_000], Some(&["v".to_string()])))
        .unwrap();
    let v = got.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(
        v.values().to_vec(),
        vec![25_001 * 7919 % 10_007, 21_000 * 7919 % 10_007]
    );
    let fetched = stats.snapshot().bytes_fetched - opened;
    let chunk = chunk_ranges(&file, &["v"], &[1]);
    let chunk_len = chunk[0].end - chunk[0].start;
    assert!(
        fetched * 10 < chunk_len,
        "fetched {fetched} of a {chunk_len}-byte chunk"
    );
    assert_ranges_within(&stats, [chunk, vec![footer_range(&file)]].concat());
}

#[test]
fn limits_return_the_first_rows_and_stop_early() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, source) = wide_file(&dir, "limit.parquet");
    let full = full_read(&bytes);
    let file = open(source.clone());
    for limit in [0usize, 1, 100, 4096, 5000, 20_000, 50_000] {
        for filter in [None, Some("c1 > 0".parse::<Filter>().unwrap())] {
            let req = ScanRequest {
                columns: Some(vec!["c2".into(), "id".into(), "c1".into()]),
                filter: filter.clone(),
                limit: Some(limit),
            };
            let got = collect(&file, &req).unwrap();
            let mut want = project(&full, &["c2".into(), "id".into(), "c1".into()]);
            if let Some(f) = &filter {
                want = f.apply(&want).unwrap();
            }
            let want = want.slice(0, limit.min(want.num_rows()));
            assert_same(&got, &want, &format!("limit {limit}, filter {filter:?}"));
        }
    }
    // A small limit reads only the first row group's chunks.
    let stats = IoStats::with_log();
    let file = open(source.with_stats(stats.clone()));
    let req = ScanRequest {
        columns: Some(vec!["c1".into()]),
        filter: None,
        limit: Some(10),
    };
    assert_eq!(collect(&file, &req).unwrap().num_rows(), 10);
    let mut allowed = chunk_ranges(&file, &["c1"], &[0]);
    allowed.push(footer_range(&file));
    assert_ranges_within(&stats, allowed);
}

#[test]
fn bad_requests_and_bad_files_are_errors() {
    let batch = random_batch(3, 4, 500);
    let bytes = write(&batch, props(Compression::SNAPPY, 100));
    let file = open(Source::from_bytes(bytes.clone()));

    let req = |columns: Vec<&str>, filter: Option<&str>| ScanRequest {
        columns: Some(columns.into_iter().map(String::from).collect()),
        filter: filter.map(|f| f.parse().unwrap()),
        limit: None,
    };
    let e = file.stream(&req(vec!["c0", "nope"], None)).err().unwrap();
    assert!(
        matches!(&e, Error::UnknownColumn { name, .. } if name == "nope"),
        "{e}"
    );
    let e = file.stream(&req(vec!["c0", "c0"], None)).err().unwrap();
    assert!(matches!(e, Error::InvalidConfig(_)), "{e}");
    let e = file.stream(&req(vec!["c0"], Some("zz > 1"))).err().unwrap();
    assert!(matches!(e, Error::UnknownColumn { .. }), "{e}");
    // SQL without a meaning here: rejected before reading.
    let e = file
        .stream(&req(vec!["c0"], Some("c0 >> 1")))
        .err()
        .unwrap();
    assert!(
        matches!(&e, Error::InvalidConfig(m) if m.contains("invalid filter \"c0 >> 1\"")),
        "{e}"
    );
    let e = rt().block_on(file.take(&[1, 500], None)).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, Error::InvalidConfig(_)) && msg.contains("500") && msg.contains("500 rows"),
        "{msg}"
    );
    let e = rt()
        .block_on(file.take(&[1], Some(&["x".to_string()])))
        .unwrap_err();
    assert!(matches!(e, Error::UnknownColumn { .. }), "{e}");

    // Not Parquet at all, too short, cut short, and a tail longer than
    // the file.
    for bad in [
        Bytes::from_static(b"this is certainly not a parquet file, just text"),
        Bytes::from_static(b"PAR1"),
        Bytes::new(),
        bytes.slice(..bytes.len() / 2),
        bytes.slice(..bytes.len() - 1),
        bytes.slice(4..),
    ] {
        let got = rt().block_on(ParquetFile::open(Source::from_bytes(bad.clone()), None));
        if let Ok(file) = got {
            // The footer survived (only the header was cut): reading the
            // data must fail or succeed without panicking.
            let _ = collect(&file, &ScanRequest::default());
        }
    }
    let e = rt()
        .block_on(ParquetFile::open(
            Source::from_bytes(Bytes::from_static(b"0123456789abcdefPAR0")),
            None,
        ))
        .err()
        .unwrap();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
    let e = rt()
        .block_on(ParquetFile::open(
            Source::from_bytes(bytes.slice(..20)),
            Some(bytes.clone()),
        ))
        .err()
        .unwrap();
    assert!(matches!(e, Error::InvalidConfig(_)), "{e}");

    // Data pages overwritten with garbage: decoding fails with an error.
    let mut broken = bytes.to_vec();
    let data_end = broken.len() / 2;
    for (i, b) in broken[4..data_end].iter_mut().enumerate() {
        *b = (i * 31 % 251) as u8;
    }
    let file = open(Source::from_bytes(Bytes::from(broken)));
    assert!(collect(&file, &ScanRequest::default()).is_err());
}

#[test]
fn store_failures_come_back_as_store_errors() {
    use object_store::{ObjectStoreExt, memory::InMemory};
    use strata_testkit::stores::{FaultRule, FaultStore};
    let batch = random_batch(11, 3, 40_000);
    let bytes = write(&batch, props(Compression::UNCOMPRESSED, 8000));
    assert!(bytes.len() as u64 > 4 * TAIL_PREFETCH);
    let mem = Arc::new(InMemory::new());
    let path = Path::from("f.parquet");
    rt().block_on(mem.put(&path, bytes.into())).unwrap();
    // Reads after the size lookup and the tail all fail.
    let store = Arc::new(FaultStore::new(mem, FaultRule::AfterN(2)));
    let mut opts = FetchOptions::local();
    opts.retries = 1;
    opts.retry_backoff = std::time::Duration::from_millis(1);
    let source = rt()
        .block_on(Source::open(store, path, "f.parquet", opts))
        .unwrap();
    let file = open(source);
    let e = collect(&file, &ScanRequest::default()).unwrap_err();
    assert!(
        matches!(e, Error::Store(strata_store::Error::ObjectStore { .. })),
        "{e:?}"
    );
    assert!(e.to_string().contains("injected failure"), "{e}");
    let e = rt().block_on(file.take(&[5], None)).unwrap_err();
    assert!(
        matches!(e, Error::Store(strata_store::Error::ObjectStore { .. })),
        "{e:?}"
    );
}
