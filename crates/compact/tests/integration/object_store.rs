//! Datasets under an object-store prefix: init, plan and compaction
//! through the same code as directories, on an in-memory store whose
//! writes fail on demand (every write, in turn), and on an S3-compatible
//! server when `scripts/test` has started one (`STRATA_S3_ENDPOINT`; the
//! S3 test says so on stderr and checks nothing without it).

use std::{
    fmt,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, memory::InMemory,
    path::Path as ObjectPath,
};
use parquet::arrow::{ArrowWriter, arrow_reader::ParquetRecordBatchReaderBuilder};
use strata_compact::{
    Error, Step,
    dataset::{execute, init, remove_leftovers, run},
    planner::PlannerOptions,
    storage::{Dataset, LOCK, MANIFEST, manifest::Manifest},
};
use strata_gen::rng::RowRng;
use strata_store::location::{StoreConfig, parse_location};
use strata_testkit::readback::{multiset_hash, rows_as_text};

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Utf8, true),
    ]))
}

/// `files` sorted Parquet files whose key ranges overlap their
/// neighbours', as bytes.
fn files(files: usize, rows: usize, seed: u64) -> Vec<(String, Bytes)> {
    let mut rng = RowRng::seeded(seed);
    (0..files)
        .map(|f| {
            let mut keys: Vec<i64> = (0..rows)
                .map(|_| f as i64 * 1000 + rng.next_below(2500) as i64)
                .collect();
            keys.sort_unstable();
            let values: Vec<Option<String>> = (0..rows)
                .map(|i| (i % 4 != 0).then(|| format!("f{f}-{i}")))
                .collect();
            let batch = RecordBatch::try_new(
                schema(),
                vec![
                    Arc::new(Int64Array::from(keys)) as ArrayRef,
                    Arc::new(StringArray::from(values)),
                ],
            )
            .unwrap();
            let mut w = ArrowWriter::try_new(Vec::new(), schema(), None).unwrap();
            w.write(&batch).unwrap();
            (
                format!("in-{f:02}.parquet"),
                Bytes::from(w.into_inner().unwrap()),
            )
        })
        .collect()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Puts `files` under `prefix`.
fn upload(store: &Arc<dyn ObjectStore>, prefix: &ObjectPath, files: &[(String, Bytes)]) {
    rt().block_on(async {
        for (name, bytes) in files {
            store
                .put(&prefix.clone().join(name.as_str()), bytes.clone().into())
                .await
                .unwrap();
        }
    });
}

/// Every row of the dataset (as a multiset hash), after checking that
/// each listed object exists with the listed row count and that the
/// manifest's generation is `generation` when given.
fn check(store: &Arc<dyn ObjectStore>, prefix: &ObjectPath) -> (Manifest, u64) {
    let ds = Dataset::object(Arc::clone(store), prefix.clone(), "mem://ds").unwrap();
    let m = Manifest::read(&ds).unwrap();
    let mut all = Vec::new();
    rt().block_on(async {
        for f in &m.files {
            let path = prefix.clone().join(f.name.as_str());
            let bytes = store
                .get(&path)
                .await
                .unwrap_or_else(|e| panic!("{} is listed but unreadable: {e}", f.name))
                .bytes()
                .await
                .unwrap();
            assert_eq!(bytes.len() as u64, f.bytes, "{}", f.name);
            let batches: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(bytes)
                .unwrap()
                .build()
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let rows = rows_as_text(&batches).unwrap();
            assert_eq!(rows.len() as u64, f.rows, "{}", f.name);
            all.extend(rows);
        }
    });
    (m, multiset_hash(&mut all))
}

/// Object names under `prefix`.
fn names(store: &Arc<dyn ObjectStore>, prefix: &ObjectPath) -> Vec<String> {
    let mut n: Vec<String> = rt()
        .block_on(store.list_with_delimiter(Some(prefix)))
        .unwrap()
        .objects
        .into_iter()
        .filter_map(|m| m.location.filename().map(str::to_string))
        .collect();
    n.sort();
    n
}

#[test]
fn init_plan_and_compact_under_a_prefix() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let prefix = ObjectPath::from("data/ds");
    upload(&store, &prefix, &files(5, 4000, 1));
    // A file in a sub-prefix is not part of the dataset.
    upload(&store, &prefix.clone().join("old"), &files(1, 10, 9));
    let ds = Dataset::object(Arc::clone(&store), prefix.clone(), "mem://data/ds/").unwrap();
    assert_eq!(ds.display(), "mem://data/ds");
    let m = init(&ds, &["k".into()], true).unwrap();
    assert_eq!(m.files.len(), 5);
    assert_eq!(m.rows(), 20_000);
    let (_, before) = check(&store, &prefix);
    // A second init refuses to replace the manifest.
    let e = init(&ds, &["k".into()], false).unwrap_err();
    assert!(e.to_string().contains("already has a manifest"), "{e}");
    let (plan, done) = run(&ds, &PlannerOptions::with_budget(1024), 5_000, &|_| Ok(())).unwrap();
    assert!(!plan.picked.is_empty());
    let done = done.expect("the overlapping files are compacted");
    let (m, after) = check(&store, &prefix);
    assert_eq!(after, before, "rows kept");
    assert_eq!(m.generation, 2);
    assert!(done.written.len() > 1, "outputs roll at the target size");
    assert!(
        done.written
            .iter()
            .all(|w| w.path.to_string_lossy().starts_with("mem://data/ds/part-")),
        "{:?}",
        done.written
    );
    // The replaced objects are gone; only the manifest's files remain
    // (and the manifest; the sub-prefix is untouched).
    let mut listed: Vec<String> = m.files.iter().map(|f| f.name.clone()).collect();
    listed.push(MANIFEST.into());
    listed.sort();
    assert_eq!(names(&store, &prefix), listed);
    assert_eq!(names(&store, &prefix.clone().join("old")).len(), 1);
}

#[test]
fn an_unsorted_object_fails_verify_with_its_location() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let prefix = ObjectPath::from("ds");
    let mut data = files(2, 100, 2);
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values((0..100).rev())) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                (0..100).map(|i| i.to_string()),
            )),
        ],
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(Vec::new(), schema(), None).unwrap();
    w.write(&batch).unwrap();
    data[1].1 = Bytes::from(w.into_inner().unwrap());
    upload(&store, &prefix, &data);
    let ds = Dataset::object(Arc::clone(&store), prefix.clone(), "mem://ds").unwrap();
    let e = init(&ds, &["k".into()], true).unwrap_err();
    assert!(
        e.to_string()
            .contains("mem://ds/in-01.parquet is not sorted by k"),
        "{e}"
    );
    assert!(!names(&store, &prefix).contains(&MANIFEST.to_string()));
    let e = Manifest::read(&ds).unwrap_err();
    assert!(e.to_string().contains("has no manifest"), "{e}");
}

/// A store whose `n`-th write (put, multipart upload or delete, counting
/// from 1) fails; reads and listings pass through.
#[derive(Debug)]
struct FailingWrites {
    inner: Arc<dyn ObjectStore>,
    fail_at: u64,
    writes: AtomicU64,
}

impl FailingWrites {
    fn check(&self) -> object_store::Result<()> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_at {
            return Err(object_store::Error::Generic {
                store: "failing",
                source: format!("injected failure of write {n}").into(),
            });
        }
        Ok(())
    }
}

impl fmt::Display for FailingWrites {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FailingWrites({})", self.fail_at)
    }
}

#[async_trait]
impl ObjectStore for FailingWrites {
    async fn put_opts(
        &self,
        location: &ObjectPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.check()?;
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &ObjectPath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.check()?;
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &ObjectPath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<ObjectPath>>,
    ) -> BoxStream<'static, object_store::Result<ObjectPath>> {
        use futures::StreamExt;
        let fail = self.check();
        match fail {
            Ok(()) => self.inner.delete_stream(locations),
            Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
        }
    }

    fn list(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.check()?;
        self.inner.copy_opts(from, to, options).await
    }
}

#[test]
fn a_failed_write_at_any_point_leaves_a_valid_dataset() {
    let mut completed = None;
    for fail_at in 1..60u64 {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let prefix = ObjectPath::from("ds");
        upload(&store, &prefix, &files(4, 6000, 3));
        let clean = Dataset::object(Arc::clone(&store), prefix.clone(), "mem://ds").unwrap();
        init(&clean, &["k".into()], false).unwrap();
        let (_, before) = check(&store, &prefix);
        let failing = Arc::new(FailingWrites {
            inner: Arc::clone(&store),
            fail_at,
            writes: AtomicU64::new(0),
        });
        let ds = Dataset::object(failing.clone(), prefix.clone(), "mem://ds").unwrap();
        // Small output files, so that a run makes many writes.
        let result = execute(&ds, &[0, 1, 2, 3], 20_000, &|_| Ok(()));
        let injected = failing.writes.load(Ordering::SeqCst) >= fail_at;
        drop(ds);
        // Whatever failed, the manifest's files exist and hold the rows.
        let (m, after) = check(&store, &prefix);
        assert_eq!(after, before, "write {fail_at}: rows kept");
        match result {
            Ok(done) => {
                assert_eq!(m, done.manifest);
                if !injected {
                    completed = Some(fail_at - 1);
                    break;
                }
            }
            // (A failed removal after the commit is left to the next run.)
            Err(e) => assert!(
                e.to_string().contains("injected failure"),
                "write {fail_at}: {e}"
            ),
        }
        // A lock left behind (its removal failed) stops the next run with
        // a message saying how to clear it.
        if names(&store, &prefix).contains(&LOCK.to_string()) {
            let e = execute(&clean, &[0], 20_000, &|_| Ok(())).unwrap_err();
            assert!(
                e.to_string()
                    .contains("remove mem://ds/_strata_compact.lock"),
                "{e}"
            );
            rt().block_on(store.delete(&prefix.clone().join(LOCK)))
                .unwrap();
        }
        // The next run removes the leftovers and compacts to the end.
        remove_leftovers(&clean, &m);
        let mut left = names(&store, &prefix);
        left.retain(|n| n != MANIFEST);
        let mut listed: Vec<String> = m.files.iter().map(|f| f.name.clone()).collect();
        listed.sort();
        assert_eq!(left, listed, "write {fail_at}: only listed files remain");
        let all: Vec<usize> = (0..m.files.len()).collect();
        execute(&clean, &all, 20_000, &|_| Ok(())).unwrap();
        let (_, end) = check(&store, &prefix);
        assert_eq!(end, before, "write {fail_at}: rows kept by the next run");
    }
    // The lock, each output, the manifest and the removals are writes.
    let writes = completed.expect("no run got past all its writes");
    assert!(writes > 8, "only {writes} writes were tried");
}

#[test]
fn a_second_compaction_of_a_prefix_is_refused_while_one_runs() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let prefix = ObjectPath::from("ds");
    upload(&store, &prefix, &files(3, 500, 4));
    let ds = Dataset::object(Arc::clone(&store), prefix.clone(), "mem://ds").unwrap();
    init(&ds, &["k".into()], false).unwrap();
    let other = Dataset::object(Arc::clone(&store), prefix.clone(), "mem://ds").unwrap();
    let hook = |step: Step| -> Result<(), Error> {
        if step == Step::Merged {
            let e = execute(&other, &[0, 1], 1 << 20, &|_| Ok(())).unwrap_err();
            assert!(e.to_string().contains("another compaction"), "{e}");
        }
        Ok(())
    };
    execute(&ds, &[0, 1, 2], 1 << 20, &hook).unwrap();
    assert!(!names(&store, &prefix).contains(&LOCK.to_string()));
}

/// The test bucket's URL for a fresh prefix, or `None` (after saying so)
/// without a server.
fn s3_prefix(test: &str) -> Option<String> {
    if std::env::var_os("STRATA_S3_ENDPOINT").is_none() {
        eprintln!("{test}: skipped, STRATA_S3_ENDPOINT is not set (scripts/test sets it)");
        return None;
    }
    let bucket = std::env::var("STRATA_S3_BUCKET").unwrap_or_else(|_| "strata-test".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    Some(format!(
        "s3://{bucket}/{test}-{}-{nanos}",
        std::process::id()
    ))
}

#[test]
fn a_dataset_on_s3_compacts_and_locks() {
    let Some(url) = s3_prefix("compact") else {
        return;
    };
    let cfg = StoreConfig::default();
    let loc = parse_location(&url, &cfg).unwrap();
    upload(&loc.store, &loc.path, &files(4, 5000, 5));
    let ds = Dataset::open(&url, &cfg).unwrap();
    init(&ds, &["k".into()], true).unwrap();
    let (_, before) = check(&loc.store, &loc.path);
    // The lock is an object created only if absent: a second taker fails.
    let other = Dataset::open(&format!("{url}/"), &cfg).unwrap();
    let hook = |step: Step| -> Result<(), Error> {
        if step == Step::Merged {
            let e = execute(&other, &[0], 1 << 20, &|_| Ok(())).unwrap_err();
            assert!(e.to_string().contains("another compaction"), "{e}");
        }
        Ok(())
    };
    let done = execute(&ds, &[0, 1, 2, 3], 30_000, &hook).unwrap();
    assert!(done.written.len() > 1);
    let (m, after) = check(&loc.store, &loc.path);
    assert_eq!(after, before);
    assert_eq!(m.generation, 2);
    let mut listed: Vec<String> = m.files.iter().map(|f| f.name.clone()).collect();
    listed.push(MANIFEST.into());
    listed.sort();
    assert_eq!(names(&loc.store, &loc.path), listed);
}

#[test]
fn a_truncated_object_is_a_clear_error() {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let prefix = ObjectPath::from("ds");
    let mut data = files(2, 300, 6);
    let cut = data[1].1.len() / 2;
    data[1].1 = data[1].1.slice(..cut);
    upload(&store, &prefix, &data);
    let ds = Dataset::object(Arc::clone(&store), prefix.clone(), "mem://ds").unwrap();
    for verify in [false, true] {
        let e = init(&ds, &["k".into()], verify).unwrap_err();
        assert!(e.to_string().contains("mem://ds/in-01.parquet"), "{e}");
    }
    assert!(!names(&store, &prefix).contains(&MANIFEST.to_string()));
}
