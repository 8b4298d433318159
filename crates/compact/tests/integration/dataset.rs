//! Datasets: manifests from existing files, and compactions that keep the
//! rows, the order and a valid manifest whatever step fails.

use std::{fs::File, path::Path, sync::Arc};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::{arrow::ArrowWriter, file::properties::WriterProperties};
use strata_compact::{
    Error, Step,
    dataset::{execute, init, remove_leftovers},
    storage::{
        Dataset, MANIFEST,
        manifest::{Manifest, from_hex},
    },
};
use strata_gen::rng::RowRng;
use strata_sort::merge::key_columns;
use strata_testkit::readback::{multiset_hash, read_batches, rows_as_text};

pub(crate) fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]))
}

/// Writes `files` sorted files of `rows` rows each whose key ranges
/// overlap their neighbours'; returns the directory.
pub(crate) fn dataset(dir: &Path, files: usize, rows: usize, seed: u64) {
    let mut rng = RowRng::seeded(seed);
    for f in 0..files {
        let base = f as i64 * 1000;
        let mut keys: Vec<i64> = (0..rows)
            .map(|_| base + rng.next_below(2500) as i64)
            .collect();
        keys.sort_unstable();
        let names: Vec<Option<String>> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (i % 5 != 0).then(|| format!("f{f}-r{i}-k{k}")))
            .collect();
        let batch = RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from(keys)) as ArrayRef,
                Arc::new(StringArray::from(names)) as ArrayRef,
            ],
        )
        .unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(700))
            .build();
        let mut w = ArrowWriter::try_new(
            File::create(dir.join(format!("in-{f:02}.parquet"))).unwrap(),
            schema(),
            Some(props),
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
}

/// Every row of the dataset (as text), and checks each listed file exists,
/// is sorted and matches its manifest entry.
pub(crate) fn check(dir: &Path) -> (Manifest, u64) {
    let m = Manifest::load(dir).unwrap();
    let mut all = Vec::new();
    for f in &m.files {
        let path = dir.join(&f.name);
        assert!(path.exists(), "{} is listed but missing", f.name);
        let batches = read_batches(&path).unwrap();
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows as u64, f.rows, "{}", f.name);
        let enc = key_columns(&batches[0].schema(), &m.key).unwrap();
        let mut keys = Vec::new();
        for b in &batches {
            let r = enc.encode(b).unwrap();
            keys.extend(r.iter().map(|k| k.as_bytes().to_vec()));
        }
        assert!(
            keys.windows(2).all(|w| w[0] <= w[1]),
            "{} is not sorted",
            f.name
        );
        assert_eq!(keys[0], from_hex(&f.min_key).unwrap(), "{}", f.name);
        assert_eq!(
            keys[keys.len() - 1],
            from_hex(&f.max_key).unwrap(),
            "{}",
            f.name
        );
        all.extend(rows_as_text(&batches).unwrap());
    }
    (m, multiset_hash(&mut all))
}

#[test]
fn init_lists_files_with_key_bounds_and_verify_rejects_unsorted_files() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path(), 4, 2000, 1);
    let m = init(&Dataset::local(dir.path()), &["k".into()], true).unwrap();
    assert_eq!(m.files.len(), 4);
    assert_eq!(m.generation, 1);
    assert_eq!(m.rows(), 8000);
    check(dir.path());
    // A second init is refused.
    let e = init(&Dataset::local(dir.path()), &["k".into()], false).unwrap_err();
    assert!(e.to_string().contains("already has a manifest"), "{e}");

    let bad = tempfile::tempdir().unwrap();
    dataset(bad.path(), 1, 100, 2);
    // An unsorted file: the rows reversed.
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values((0..50).rev())) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                (0..50).map(|i| i.to_string()),
            )) as ArrayRef,
        ],
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(
        File::create(bad.path().join("z.parquet")).unwrap(),
        schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let e = init(&Dataset::local(bad.path()), &["k".into()], true).unwrap_err();
    assert!(
        e.to_string().contains("z.parquet is not sorted by k"),
        "{e}"
    );
    assert!(!bad.path().join(MANIFEST).exists());
    let e = init(&Dataset::local(bad.path()), &["nope".into()], false).unwrap_err();
    assert!(e.to_string().contains("no key column 'nope'"), "{e}");
}

#[test]
fn a_compaction_keeps_the_rows_sorted_and_the_manifest_consistent() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path(), 6, 3000, 3);
    init(&Dataset::local(dir.path()), &["k".into()], false).unwrap();
    let (_, before) = check(dir.path());
    let done = execute(&Dataset::local(dir.path()), &[1, 2, 3, 4], 40_000, &|_| {
        Ok(())
    })
    .unwrap();
    assert_eq!(done.manifest.generation, 2);
    assert_eq!(done.replaced.len(), 4);
    assert!(done.written.len() >= 2, "the target size rolls outputs");
    let (m, after) = check(dir.path());
    assert_eq!(after, before, "the rows are the same multiset");
    assert_eq!(m.rows(), 18_000);
    // The merged files partition the merged range in key order.
    for w in done.written.windows(2) {
        assert!(w[0].max_key <= w[1].min_key);
    }
    for name in &done.replaced {
        assert!(!dir.path().join(name).exists(), "{name} was replaced");
    }
    let e = execute(&Dataset::local(dir.path()), &[99], 40_000, &|_| Ok(())).unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
}

#[test]
fn a_failure_at_any_step_leaves_a_valid_dataset() {
    for fail_at in [Step::Start, Step::Merged, Step::Committed, Step::Done] {
        let dir = tempfile::tempdir().unwrap();
        dataset(dir.path(), 5, 2000, 4);
        init(&Dataset::local(dir.path()), &["k".into()], false).unwrap();
        let (_, before) = check(dir.path());
        let p = dir.path().to_path_buf();
        let hook = |step: Step| -> Result<(), Error> {
            // A reader opening the dataset meanwhile sees one whole
            // generation: old before the commit, new after.
            let m = Manifest::load(&p).unwrap();
            let want = if matches!(step, Step::Start | Step::Merged) {
                1
            } else {
                2
            };
            assert_eq!(m.generation, want, "{step:?}");
            for f in &m.files {
                assert!(p.join(&f.name).exists(), "{step:?}: {} missing", f.name);
            }
            if step == fail_at {
                Err(Error::Injected(step))
            } else {
                Ok(())
            }
        };
        let e = execute(
            &Dataset::local(dir.path()),
            &[0, 1, 2, 3, 4],
            1 << 20,
            &hook,
        )
        .unwrap_err();
        assert!(matches!(e, Error::Injected(s) if s == fail_at), "{e}");
        let (m, after) = check(dir.path());
        assert_eq!(after, before, "{fail_at:?}: rows kept");
        let committed = matches!(fail_at, Step::Committed | Step::Done);
        assert_eq!(m.generation, if committed { 2 } else { 1 }, "{fail_at:?}");
        // The next run cleans what the stopped one left.
        remove_leftovers(&Dataset::local(dir.path()), &m);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != MANIFEST)
            .collect();
        left.sort();
        let mut listed: Vec<String> = m.files.iter().map(|f| f.name.clone()).collect();
        listed.sort();
        assert_eq!(left, listed, "{fail_at:?}: only listed files remain");
        // And a compaction then runs to the end.
        let all: Vec<usize> = (0..m.files.len()).collect();
        let again = execute(&Dataset::local(dir.path()), &all, 1 << 20, &|_| Ok(())).unwrap();
        assert!(again.manifest.generation > m.generation);
        let (_, end) = check(dir.path());
        assert_eq!(end, before);
    }
}

#[test]
fn an_unsorted_input_stops_the_merge_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path(), 3, 500, 5);
    init(&Dataset::local(dir.path()), &["k".into()], false).unwrap();
    // Replace a file with an unsorted one behind the manifest's back.
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values((0..500).rev())) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                (0..500).map(|i| i.to_string()),
            )) as ArrayRef,
        ],
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(
        File::create(dir.path().join("in-01.parquet")).unwrap(),
        schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let before = Manifest::load(dir.path()).unwrap();
    let e = execute(
        &Dataset::local(dir.path()),
        &[0, 1, 2],
        1 << 20,
        &|_| Ok(()),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("in-01.parquet is not sorted by k"),
        "{e}"
    );
    assert_eq!(Manifest::load(dir.path()).unwrap(), before);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.starts_with("part-") && !n.ends_with("strata-tmp")),
        "{names:?}"
    );
}

#[test]
fn run_plans_then_merges_the_most_overlapping_files() {
    use strata_compact::{dataset::run, planner::PlannerOptions};
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path(), 8, 3000, 6);
    let m = init(&Dataset::local(dir.path()), &["k".into()], false).unwrap();
    let (_, before) = check(dir.path());
    // Each file is well under 1 MB, so it weighs 1 MB: a 4 MB budget
    // picks at most four.
    let opts = PlannerOptions::with_budget(4);
    let (plan, done) = run(&Dataset::local(dir.path()), &opts, 1 << 30, &|_| Ok(())).unwrap();
    assert!(plan.quality > 0.0, "{plan:?}");
    assert!(plan.picked.len() >= 2 && plan.picked.len() <= 4, "{plan:?}");
    assert!(plan.picked_mb <= 4);
    let done = done.unwrap();
    let want: Vec<String> = plan
        .picked
        .iter()
        .map(|&i| m.files[i as usize].name.clone())
        .collect();
    assert_eq!(done.replaced, want);
    let (after_m, after) = check(dir.path());
    assert_eq!(after, before);
    assert_eq!(
        after_m.files.len(),
        8 - plan.picked.len() + done.written.len()
    );
    // Compacting again and again ends with nothing worth doing.
    let mut rounds = 0;
    loop {
        let (p, d) = run(&Dataset::local(dir.path()), &opts, 1 << 30, &|_| Ok(())).unwrap();
        if d.is_none() {
            assert!(p.picked.is_empty());
            break;
        }
        rounds += 1;
        assert!(rounds < 20, "no fixed point");
    }
    let (_, end) = check(dir.path());
    assert_eq!(end, before);
}

#[test]
fn a_parallel_merge_equals_the_single_threaded_one() {
    use strata_sort::merge::{MergeConfig, merge_files};
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path(), 5, 4000, 7);
    // Plus a file of one repeated key, so cuts fall among equal keys.
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(vec![1500i64; 3000])) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                (0..3000).map(|i| format!("dup-{i}")),
            )) as ArrayRef,
        ],
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(
        File::create(dir.path().join("in-99.parquet")).unwrap(),
        schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let mut inputs: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    inputs.sort();
    let rows_of = |threads: usize, target: u64| -> Vec<String> {
        let out = tempfile::tempdir().unwrap();
        let cfg = MergeConfig {
            key: vec!["k".into()],
            target_file_bytes: target,
            batch_rows: 100,
            threads,
            ..MergeConfig::default()
        };
        let files =
            merge_files(&inputs, out.path(), &|n| format!("o-{n:08}.parquet"), &cfg).unwrap();
        let mut rows = Vec::new();
        for f in &files {
            rows.extend(rows_as_text(&read_batches(&f.path).unwrap()).unwrap());
        }
        // Files come back in key order and partition the keys.
        for w in files.windows(2) {
            assert!(w[0].max_key <= w[1].min_key);
        }
        rows
    };
    let one = rows_of(1, u64::MAX);
    assert_eq!(one.len(), 23_000);
    for threads in [2, 3, 4] {
        for target in [u64::MAX, 30_000] {
            assert_eq!(
                rows_of(threads, target),
                one,
                "{threads} threads, target {target}"
            );
        }
    }
}

#[test]
fn a_running_compaction_holds_the_dataset_lock() {
    use strata_compact::storage::LOCK;
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path(), 3, 500, 8);
    init(&Dataset::local(dir.path()), &["k".into()], false).unwrap();
    let before = Manifest::load(dir.path()).unwrap();
    // A live holder (this test, through its own handle): refused, its
    // process named, nothing changed.
    let held = std::fs::File::create(dir.path().join(LOCK)).unwrap();
    held.try_lock().unwrap();
    std::fs::write(dir.path().join(LOCK), "4321").unwrap();
    let e = execute(&Dataset::local(dir.path()), &[0, 1], 1 << 20, &|_| Ok(())).unwrap_err();
    assert!(e.to_string().contains("another compaction"), "{e}");
    assert!(e.to_string().contains("4321"), "{e}");
    assert_eq!(Manifest::load(dir.path()).unwrap(), before);
    drop(held);
    // A killed run's lock file (its lock gone with its process) is taken
    // and removed.
    std::fs::write(dir.path().join(LOCK), "4294967294").unwrap();
    execute(&Dataset::local(dir.path()), &[0, 1], 1 << 20, &|_| Ok(())).unwrap();
    assert!(!dir.path().join(LOCK).exists());
    // A failed run releases it too.
    let e = execute(&Dataset::local(dir.path()), &[0, 1], 1 << 20, &|_| {
        Err(Error::Injected(Step::Merged))
    });
    assert!(e.is_err());
    assert!(!dir.path().join(LOCK).exists());
    check(dir.path());
}

/// Without `--verify`, bounds come from the footer's statistics: tuples
/// of column minimums and maximums, which bracket every row's key (and
/// equal the first and last keys for one non-null column). Files whose
/// statistics cannot bound the key (none written, or a float key) are
/// read instead, giving the exact first and last keys.
#[test]
fn init_bounds_from_statistics_bracket_every_key() {
    use arrow_array::Float64Array;
    use parquet::file::properties::EnabledStatistics;
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("f", DataType::Float64, false),
        Field::new(
            "d",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        ),
    ]));
    // Sorted by (k, s) with nulls first, by f, and by d.
    let n = 5000usize;
    let k: Vec<i64> = (0..n).map(|i| (i / 7) as i64 - 100).collect();
    let s: Vec<Option<String>> = (0..n)
        .map(|i| (i % 7 != 0).then(|| format!("s{}", i % 7)))
        .collect();
    let f: Vec<f64> = (0..n).map(|i| i as f64 / 3.0).collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(k)) as ArrayRef,
            Arc::new(StringArray::from(s)),
            Arc::new(Float64Array::from(f)),
            Arc::new(
                (0..n)
                    .map(|i| format!("d{:05}", i / 10))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str)
                    .collect::<arrow_array::DictionaryArray<arrow_array::types::Int32Type>>(),
            ),
        ],
    )
    .unwrap();
    for (stats, keys) in [
        (EnabledStatistics::Chunk, vec!["k"]),
        (EnabledStatistics::Chunk, vec!["k", "s"]),
        (EnabledStatistics::Chunk, vec!["f"]),
        (EnabledStatistics::Chunk, vec!["d"]),
        (EnabledStatistics::None, vec!["k", "s"]),
    ] {
        let key: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        let bounds = |verify: bool| {
            let dir = tempfile::tempdir().unwrap();
            let props = WriterProperties::builder()
                .set_statistics_enabled(stats)
                .set_max_row_group_row_count(Some(1500))
                .build();
            let file = File::create(dir.path().join("a.parquet")).unwrap();
            let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            let m = init(&Dataset::local(dir.path()), &key, verify).unwrap();
            assert_eq!(m.files[0].rows, n as u64);
            (
                from_hex(&m.files[0].min_key).unwrap(),
                from_hex(&m.files[0].max_key).unwrap(),
            )
        };
        let (lo, hi) = bounds(false);
        let (first, last) = bounds(true);
        assert!(lo <= first && hi >= last, "{keys:?} {stats:?}");
        let exact = keys.len() == 1 || stats == EnabledStatistics::None;
        assert_eq!((lo == first && hi == last), exact, "{keys:?} {stats:?}");
        // A key is its columns' encodings one after another.
        let whole = key_columns(&schema, &key).unwrap().encode(&batch).unwrap();
        let mut parts = vec![Vec::new(); n];
        for c in &key {
            let e = key_columns(&schema, std::slice::from_ref(c)).unwrap();
            let r = e.encode(&batch).unwrap();
            for (row, p) in parts.iter_mut().enumerate() {
                p.extend_from_slice(r.row(row).as_bytes());
            }
        }
        for (row, p) in parts.iter().enumerate() {
            assert_eq!(whole.row(row).as_bytes(), p.as_slice());
        }
    }
}

/// A dataset initialised again over compacted files (whose `part-` names
/// carry a later generation than the new manifest's) compacts without
/// taking a live file's name, and keeps its rows.
#[test]
fn a_dataset_initialised_again_compacts_under_new_names() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path(), 3, 1000, 11);
    let ds = Dataset::local(dir.path());
    init(&ds, &["k".into()], false).unwrap();
    execute(&ds, &[0, 1], 10_000, &|_| Ok(())).unwrap();
    let (_, before) = check(dir.path());
    std::fs::remove_file(dir.path().join(MANIFEST)).unwrap();
    let m = init(&ds, &["k".into()], false).unwrap();
    assert_eq!(m.generation, 1);
    assert!(m.files.iter().any(|f| f.name.starts_with("part-000002-")));
    let all: Vec<usize> = (0..m.files.len()).collect();
    let done = execute(&ds, &all, 10_000, &|_| Ok(())).unwrap();
    assert!(done.manifest.generation > 2, "{}", done.manifest.generation);
    let (_, after) = check(dir.path());
    assert_eq!(after, before);
}

/// A truncated Parquet file: `init` names it and writes no manifest; a
/// compaction whose input was truncated after `init` fails and changes
/// nothing.
#[test]
fn truncated_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path(), 3, 500, 12);
    let ds = Dataset::local(dir.path());
    let victim = dir.path().join("in-01.parquet");
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();
    for verify in [false, true] {
        let e = init(&ds, &["k".into()], verify).unwrap_err();
        assert!(e.to_string().contains("in-01.parquet"), "{e}");
        assert!(!dir.path().join(MANIFEST).exists());
    }
    std::fs::write(&victim, &bytes).unwrap();
    init(&ds, &["k".into()], false).unwrap();
    let before = Manifest::load(dir.path()).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() - 10]).unwrap();
    let e = execute(&ds, &[0, 1, 2], 1 << 20, &|_| Ok(())).unwrap_err();
    assert!(e.to_string().contains("in-01.parquet"), "{e}");
    assert_eq!(Manifest::load(dir.path()).unwrap(), before);
    assert!(std::fs::read_dir(dir.path()).unwrap().all(|e| {
        !e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("part-")
    }));
}
