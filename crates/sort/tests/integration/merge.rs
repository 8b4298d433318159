//! The k-way merge on random inputs from fixed seeds: with any thread
//! count and batch size it writes the stable merge of the inputs (the
//! single-threaded merge's rows, in order, nothing lost or added), and an
//! input out of order anywhere is an error, whichever key range holds the
//! fault.

use std::{fs::File, path::Path, sync::Arc};

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::{arrow::ArrowWriter, file::properties::WriterProperties};
use strata_gen::rng::RowRng;
use strata_sort::merge::{MergeConfig, merge_files};
use strata_testkit::readback::{read_batches, rows_as_text};

/// A row's key: `(k, k2)`.
type Key = (i64, Option<i32>);

/// The order of the row encoding: by `k`, then `k2` with nulls first.
fn order(&(k, k2): &Key) -> (i64, bool, Option<i32>) {
    (k, k2.is_some(), k2)
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("k2", DataType::Int32, true),
        Field::new("v", DataType::Utf8, true),
    ]))
}

/// One input: `(k, k2)` rows, written in the given order with small row
/// groups and pages.
fn write(path: &Path, rows: &[Key], tag: usize) {
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))) as ArrayRef,
            Arc::new(Int32Array::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                (0..rows.len())
                    .map(|i| (i % 7 != 0).then(|| format!("in{tag}-row{i}")))
                    .collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(300))
        .set_data_page_row_count_limit(64)
        .set_write_batch_size(64)
        .build();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Writes input `i` of `data` as `dir/in-ii.parquet`; returns the paths.
fn write_inputs(dir: &Path, data: &[Vec<Key>]) -> Vec<std::path::PathBuf> {
    data.iter()
        .enumerate()
        .map(|(i, rows)| {
            let p = dir.join(format!("in-{i:02}.parquet"));
            write(&p, rows, i);
            p
        })
        .collect()
}

/// Sorted random inputs of `files` files: narrow key spans (many equal
/// keys, so cuts fall among them) and nullable second key columns.
fn inputs(rng: &mut RowRng, files: usize, max_rows: u64) -> Vec<Vec<Key>> {
    (0..files)
        .map(|_| {
            let n = rng.next_below(max_rows) as usize + 1;
            let span = [3, 50, 10_000][rng.next_below(3) as usize];
            let mut rows: Vec<Key> = (0..n)
                .map(|_| {
                    let k = rng.next_below(span) as i64 - 20;
                    let k2 = (rng.next_below(5) != 0).then(|| rng.next_below(4) as i32);
                    (k, k2)
                })
                .collect();
            // Nulls first, as the row encoding orders them.
            rows.sort_unstable_by_key(order);
            rows
        })
        .collect()
}

fn merged_rows(
    paths: &[std::path::PathBuf],
    threads: usize,
    batch_rows: usize,
) -> Result<Vec<String>, String> {
    let out = tempfile::tempdir().unwrap();
    let cfg = MergeConfig {
        key: vec!["k".into(), "k2".into()],
        target_file_bytes: 20_000,
        batch_rows,
        threads,
        ..MergeConfig::default()
    };
    let files = merge_files(paths, out.path(), &|n| format!("o-{n:08}.parquet"), &cfg)
        .map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for f in &files {
        rows.extend(rows_as_text(&read_batches(&f.path).unwrap()).unwrap());
    }
    Ok(rows)
}

#[test]
fn any_thread_count_and_batch_size_give_the_stable_merge() {
    for seed in 0..12u64 {
        let mut rng = RowRng::seeded(seed);
        let dir = tempfile::tempdir().unwrap();
        let data = inputs(&mut rng, 2 + seed as usize % 5, 900);
        let paths = write_inputs(dir.path(), &data);
        // The oracle: every input's rows, stably sorted by key.
        let mut want: Vec<(Key, String)> = Vec::new();
        for (i, rows) in data.iter().enumerate() {
            let text = rows_as_text(&read_batches(&paths[i]).unwrap()).unwrap();
            want.extend(rows.iter().copied().zip(text));
        }
        // Stable: equal keys keep the input order.
        want.sort_by_key(|(k, _)| order(k));
        let want: Vec<String> = want.into_iter().map(|(_, t)| t).collect();
        for (threads, batch_rows) in [(1, 64), (2, 7), (3, 16), (4, 5)] {
            assert_eq!(
                merged_rows(&paths, threads, batch_rows).unwrap(),
                want,
                "seed {seed}, {threads} threads, batches of {batch_rows}"
            );
        }
    }
}

/// Few distinct keys (or one): equal cut keys make fewer key ranges than
/// threads, and every row is still written once.
#[test]
fn few_distinct_keys_are_merged_once_with_many_threads() {
    for distinct in [1i64, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<Vec<Key>> = (0..3)
            .map(|f| {
                let mut rows: Vec<Key> = (0..3000).map(|i| ((i + f) % distinct, Some(1))).collect();
                rows.sort_unstable_by_key(order);
                rows
            })
            .collect();
        let paths = write_inputs(dir.path(), &data);
        let one = merged_rows(&paths, 1, 64).unwrap();
        assert_eq!(one.len(), 9000);
        for threads in [2, 4, 8] {
            assert_eq!(
                merged_rows(&paths, threads, 16).unwrap(),
                one,
                "{distinct} keys, {threads} threads"
            );
        }
    }
}

#[test]
fn an_input_out_of_order_anywhere_is_an_error_with_any_thread_count() {
    let mut faults = 0;
    for seed in 0..24u64 {
        let mut rng = RowRng::seeded(100 + seed);
        let dir = tempfile::tempdir().unwrap();
        // Inputs long enough that the key ranges are found from sampled
        // rows (not every row).
        let mut data = inputs(&mut rng, 3, 4000);
        // Move one row of the longest input to a random place, so that it
        // is out of order there (when its key differs from its new
        // neighbours'). Half the time a row from the top tenth moves down,
        // so that a large key sits inside a lower key range.
        let (bad, rows) = data
            .iter_mut()
            .enumerate()
            .max_by_key(|(_, r)| r.len())
            .unwrap();
        let n = rows.len() as u64;
        let (from, to) = if seed % 2 == 0 {
            (
                n - 1 - rng.next_below(n / 10 + 1),
                rng.next_below(n * 8 / 10 + 1),
            )
        } else {
            (rng.next_below(n), rng.next_below(n))
        };
        let (from, to) = (from as usize, to as usize);
        let row = rows.remove(from);
        rows.insert(to, row);
        let sorted = rows.windows(2).all(|w| order(&w[0]) <= order(&w[1]));
        let paths = write_inputs(dir.path(), &data);
        for (threads, batch_rows) in [(1, 64), (2, 3), (3, 16), (4, 2)] {
            let got = merged_rows(&paths, threads, batch_rows);
            if sorted {
                assert!(got.is_ok(), "seed {seed}: {got:?}");
            } else {
                let e = got.map(|rows| rows.len()).expect_err(&format!(
                    "seed {seed}, {threads} threads: an unsorted input must fail the merge"
                ));
                assert!(
                    e.contains(&format!("in-{bad:02}.parquet is not sorted by k,k2")),
                    "seed {seed}, {threads} threads: {e}"
                );
            }
        }
        faults += usize::from(!sorted);
    }
    assert!(faults >= 16, "only {faults} inputs were out of order");
}

#[test]
fn synthetic_datasets_have_the_overlap_asked_for() {
    use strata_testkit::synth::{Payload, SyntheticDataset, write_dataset};
    for (overlap, payload) in [
        (0.0, Payload::Text),
        (0.5, Payload::Contacts),
        (1.0, Payload::Text),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let spec = SyntheticDataset {
            files: 3,
            rows_per_file: 10_000,
            overlap,
            seed: 7,
            payload,
        };
        let paths = write_dataset(dir.path(), &spec).unwrap();
        let mut ranges = Vec::new();
        for (f, p) in paths.iter().enumerate() {
            let batches = read_batches(p).unwrap();
            let keys: Vec<i64> = batches
                .iter()
                .flat_map(|b| {
                    b.column(0)
                        .as_any()
                        .downcast_ref::<Int64Array>()
                        .unwrap()
                        .values()
                        .to_vec()
                })
                .collect();
            assert_eq!(keys.len(), 10_000);
            assert!(keys.windows(2).all(|w| w[0] <= w[1]), "file {f} sorted");
            let range = spec.key_range(f);
            assert!(
                keys.iter().all(|k| range.contains(k)),
                "file {f} in {range:?}"
            );
            assert_eq!(batches[0].schema(), spec.schema());
            ranges.push(range);
        }
        // Neighbours overlap by the fraction asked for.
        let width = (ranges[0].end - ranges[0].start) as f64;
        let shared = (ranges[0].end - ranges[1].start).max(0) as f64;
        assert!(
            (shared / width - overlap).abs() < 1e-6,
            "{overlap}: {ranges:?}"
        );
        // The same spec writes the same bytes; an existing file is kept.
        let again = tempfile::tempdir().unwrap();
        let paths2 = write_dataset(again.path(), &spec).unwrap();
        for (a, b) in paths.iter().zip(&paths2) {
            assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
        }
        assert!(write_dataset(dir.path(), &spec).is_err());
    }
}

/// One-byte dictionaries that together pass 256 values (each input's is
/// within 256) still merge: an output row group is closed early when its
/// dictionary would pass 256 values.
#[test]
fn dictionaries_past_256_values_together_still_merge() {
    use arrow_array::{DictionaryArray, types::UInt8Type};
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new(
            "d",
            DataType::Dictionary(Box::new(DataType::UInt8), Box::new(DataType::Utf8)),
            false,
        ),
    ]));
    let dir = tempfile::tempdir().unwrap();
    let mut want = Vec::new();
    let paths: Vec<_> = (0..2)
        .map(|f| {
            // Input 1's keys start 20 below input 0's end: the merge
            // interleaves only there.
            let keys: Vec<i64> = (0..2000).map(|i| i + f * 1980).collect();
            let values: Vec<String> = (0..2000).map(|i| format!("in{f}-v{}", i % 200)).collect();
            let d: DictionaryArray<UInt8Type> = values.iter().map(String::as_str).collect();
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from(keys)) as ArrayRef, Arc::new(d)],
            )
            .unwrap();
            want.extend(rows_as_text(std::slice::from_ref(&batch)).unwrap());
            let p = dir.path().join(format!("in-{f}.parquet"));
            let mut w =
                ArrowWriter::try_new(File::create(&p).unwrap(), schema.clone(), None).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            p
        })
        .collect();
    let out = tempfile::tempdir().unwrap();
    for threads in [1, 2] {
        let cfg = MergeConfig {
            key: vec!["k".into()],
            target_file_bytes: u64::MAX,
            batch_rows: 512,
            threads,
            ..MergeConfig::default()
        };
        let files = merge_files(
            &paths,
            out.path(),
            &|n| format!("o{threads}-{n:06}.parquet"),
            &cfg,
        )
        .unwrap();
        // Read a row group at a time: a batch spanning two row groups
        // would need one dictionary for both, past what one byte indexes.
        let mut got = Vec::new();
        let mut groups = 0;
        for f in &files {
            let n = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                File::open(&f.path).unwrap(),
            )
            .unwrap()
            .metadata()
            .num_row_groups();
            groups += n;
            for g in 0..n {
                let reader =
                    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                        File::open(&f.path).unwrap(),
                    )
                    .unwrap()
                    .with_row_groups(vec![g])
                    .build()
                    .unwrap();
                let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
                got.extend(rows_as_text(&batches).unwrap());
            }
        }
        assert!(groups >= 2, "{groups} row groups");
        let mut w = want.clone();
        let mut g = got.clone();
        w.sort();
        g.sort();
        assert_eq!(g, w, "{threads} threads");
    }
}

/// A column whose input pages fell back from dictionary to `PLAIN` (too
/// many distinct values for the dictionary page) is written `PLAIN` from
/// the start, not tried as a dictionary again; a column of few values
/// keeps its dictionary.
#[test]
fn columns_the_input_gave_up_on_are_written_plain() {
    use parquet::basic::Encoding;
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("unique", DataType::Utf8, false),
        Field::new("few", DataType::Utf8, false),
    ]));
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<_> = (0..2)
        .map(|f| {
            let keys: Vec<i64> = (0..4000).map(|i| 2 * i + f).collect();
            let unique: Vec<String> = keys.iter().map(|k| format!("value-{k:08}")).collect();
            let few: Vec<String> = keys.iter().map(|k| format!("kind-{}", k % 5)).collect();
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(keys)) as ArrayRef,
                    Arc::new(StringArray::from(unique)),
                    Arc::new(StringArray::from(few)),
                ],
            )
            .unwrap();
            let props = WriterProperties::builder()
                .set_dictionary_page_size_limit(4096)
                .set_data_page_row_count_limit(500)
                .set_write_batch_size(500)
                .build();
            let p = dir.path().join(format!("in-{f}.parquet"));
            let mut w =
                ArrowWriter::try_new(File::create(&p).unwrap(), schema.clone(), Some(props))
                    .unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            p
        })
        .collect();
    let encodings = |path: &Path, column: usize| -> Vec<Encoding> {
        let r = parquet::file::reader::SerializedFileReader::new(File::open(path).unwrap());
        let md = parquet::file::reader::FileReader::metadata(&r.unwrap()).clone();
        md.row_group(0).column(column).encodings().collect()
    };
    // The inputs' `unique` pages start as dictionary pages and fall back.
    let input = encodings(&paths[0], 1);
    assert!(input.contains(&Encoding::RLE_DICTIONARY) && input.contains(&Encoding::PLAIN));
    let out = tempfile::tempdir().unwrap();
    let cfg = MergeConfig {
        key: vec!["k".into()],
        target_file_bytes: u64::MAX,
        threads: 1,
        ..MergeConfig::default()
    };
    let files = merge_files(&paths, out.path(), &|n| format!("o-{n}.parquet"), &cfg).unwrap();
    assert_eq!(files.len(), 1);
    let (unique, few) = (encodings(&files[0].path, 1), encodings(&files[0].path, 2));
    assert!(!unique.contains(&Encoding::RLE_DICTIONARY), "{unique:?}");
    assert!(few.contains(&Encoding::RLE_DICTIONARY), "{few:?}");
    let got = read_batches(&files[0].path).unwrap();
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 8000);
}
