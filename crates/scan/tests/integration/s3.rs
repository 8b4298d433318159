//! Reads through `s3://` locations against an S3-compatible server.
//!
//! `scripts/test` starts one (moto) and sets `STRATA_S3_ENDPOINT`,
//! `STRATA_S3_BUCKET` and the standard `AWS_*` variables. Without
//! `STRATA_S3_ENDPOINT` the tests that need the server say so on stderr
//! and pass without checking anything.

use std::{
    ops::Range,
    sync::Arc,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use bytes::Bytes;
use object_store::{BackoffConfig, ObjectStoreExt, RetryConfig};
use strata_store::Error;
use strata_store::location::{
    Kind, StoreConfig, open_source, parse_location, remote_fetch_options,
};
use strata_store::ranges::{CoalesceOptions, coalesce};
use strata_store::source::{IoStats, Source};
use strata_testkit::stores::{FaultRule, FaultStore};

/// The test bucket, or `None` (after saying so) when no server is set up.
fn bucket(test: &str) -> Option<String> {
    if std::env::var_os("STRATA_S3_ENDPOINT").is_none() {
        eprintln!("{test}: skipped, STRATA_S3_ENDPOINT is not set (scripts/test sets it)");
        return None;
    }
    Some(std::env::var("STRATA_S3_BUCKET").unwrap_or_else(|_| "strata-test".into()))
}

/// A key prefix no other test or run uses.
fn prefix(test: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{test}-{}-{nanos}", std::process::id())
}

fn data(n: usize) -> Bytes {
    (0..n)
        .map(|i| (i.wrapping_mul(7919) % 251) as u8)
        .collect::<Vec<_>>()
        .into()
}

/// Writes `bytes` to `url` through the store `parse_location` builds.
async fn put(url: &str, bytes: Bytes) {
    let loc = parse_location(url, &StoreConfig::default()).unwrap();
    assert_eq!(loc.kind, Kind::S3);
    loc.store.put(&loc.path, bytes.into()).await.unwrap();
}

/// Retries that give up within a second or two.
fn short_retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(100),
            base: 2.0,
        },
        max_retries: 2,
        retry_timeout: Duration::from_secs(2),
    }
}

/// Ranges of many sizes and gaps: overlapping, adjacent, empty, at both
/// ends.
fn ranges(size: u64) -> Vec<Range<u64>> {
    let mut r = vec![0..1, 0..100, 50..150, 150..150, 150..4096, size - 1..size];
    let mut at = 5_000;
    let mut step = 17;
    while at + step < size {
        r.push(at..at + step);
        at += step * 3 + 1000;
        step = step * 5 % 70_001 + 1;
    }
    r
}

#[tokio::test]
async fn reads_ranges_of_an_s3_object() {
    let Some(bucket) = bucket("reads_ranges_of_an_s3_object") else {
        return;
    };
    let url = format!("s3://{bucket}/{}/obj", prefix("ranges"));
    let bytes = data(1_000_000);
    put(&url, bytes.clone()).await;

    let src = open_source(&url, &StoreConfig::default()).await.unwrap();
    assert_eq!(src.size(), 1_000_000);
    assert_eq!(src.name(), url);
    assert_eq!(*src.options(), remote_fetch_options());

    assert_eq!(src.get(10..20).await.unwrap(), bytes.slice(10..20));
    assert_eq!(src.get(5..5).await.unwrap().len(), 0);
    assert_eq!(src.tail(100).await.unwrap(), bytes.slice(999_900..));
    assert_eq!(src.tail(2_000_000).await.unwrap(), bytes);
    let e = src.get(999_999..1_000_001).await.unwrap_err();
    assert!(e.to_string().contains("outside the file"), "{e}");

    // Remote settings read small holes through: as many requests as the
    // plan has fetches, far fewer than ranges.
    let reqs = ranges(src.size());
    assert!(reqs.len() >= 20, "{}", reqs.len());
    let src = src.with_stats(IoStats::with_log());
    let got = src.fetch(&reqs).await.unwrap();
    for (r, g) in reqs.iter().zip(&got) {
        assert_eq!(g, &bytes.slice(r.start as usize..r.end as usize), "{r:?}");
    }
    let plan = coalesce(&reqs, remote_fetch_options().coalesce).unwrap();
    assert_eq!(src.stats().snapshot().requests, plan.fetches.len() as u64);
    assert!(
        plan.fetches.len() * 4 < reqs.len(),
        "{}",
        plan.fetches.len()
    );

    // Small holes and requests: many requests, each counted once.
    let mut opts = remote_fetch_options();
    opts.coalesce = CoalesceOptions {
        hole_size_limit: 2048,
        range_size_limit: 64 * 1024,
    };
    let src = src.with_options(opts).with_stats(IoStats::with_log());
    let got = src.fetch(&reqs).await.unwrap();
    for (r, g) in reqs.iter().zip(&got) {
        assert_eq!(g, &bytes.slice(r.start as usize..r.end as usize), "{r:?}");
    }
    let plan = coalesce(&reqs, opts.coalesce).unwrap();
    let s = src.stats().snapshot();
    assert_eq!(s.requests, plan.fetches.len() as u64);
    assert!(s.requests > 1 && s.requests < reqs.len() as u64, "{s:?}");
    let planned: u64 = plan.fetches.iter().map(|r| r.end - r.start).sum();
    assert_eq!(s.bytes_fetched, planned);
    let mut log = src.stats().ranges();
    log.sort_by_key(|r| r.start);
    assert_eq!(log, plan.fetches);
    assert_eq!(s.retries, 0);
}

#[tokio::test]
async fn a_missing_key_is_not_found() {
    let Some(bucket) = bucket("a_missing_key_is_not_found") else {
        return;
    };
    let url = format!("s3://{bucket}/{}/missing", prefix("missing"));
    let e = open_source(&url, &StoreConfig::default())
        .await
        .unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
    let m = e.to_string();
    assert!(m.contains(&url) && m.contains("not found"), "{m}");
}

#[tokio::test]
async fn wrong_credentials_fail_without_hanging() {
    let Some(bucket) = bucket("wrong_credentials_fail_without_hanging") else {
        return;
    };
    let url = format!("s3://{bucket}/{}/obj", prefix("creds"));
    put(&url, data(1000)).await;
    let key = std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_default();
    for (id, secret) in [("AKIANOSUCHKEY0000000", "wrong"), (key.as_str(), "wrong")] {
        let cfg = StoreConfig {
            access_key_id: Some(id.into()),
            secret_access_key: Some(secret.into()),
            retry: Some(short_retry()),
            ..StoreConfig::default()
        };
        let started = Instant::now();
        let e = open_source(&url, &cfg).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(matches!(e, Error::ObjectStore { .. }), "{e:?}");
        let m = e.to_string();
        assert!(m.contains(&url), "{m}");
    }
}

#[tokio::test]
async fn an_unreachable_endpoint_fails_without_hanging() {
    // Needs no server: nothing listens on port 1.
    let cfg = StoreConfig {
        endpoint: Some("http://127.0.0.1:1".into()),
        region: Some("us-east-1".into()),
        access_key_id: Some("testing".into()),
        secret_access_key: Some("testing".into()),
        allow_http: None,
        retry: Some(short_retry()),
    };
    let started = Instant::now();
    let e = open_source("s3://strata-test/nothing/here", &cfg)
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(e, Error::ObjectStore { .. }), "{e:?}");
    assert!(
        e.to_string().contains("s3://strata-test/nothing/here"),
        "{e}"
    );
}

#[tokio::test]
async fn transient_failures_are_retried() {
    let Some(bucket) = bucket("transient_failures_are_retried") else {
        return;
    };
    let url = format!("s3://{bucket}/{}/obj", prefix("faults"));
    let bytes = data(200_000);
    put(&url, bytes.clone()).await;

    let loc = parse_location(&url, &StoreConfig::default()).unwrap();
    let faulty = Arc::new(FaultStore::new(loc.store.clone(), FaultRule::EveryNth(3)));
    let mut opts = loc.fetch_options();
    opts.retry_backoff = Duration::from_millis(1);
    // One request at a time, so no request can meet a failure on every
    // try (each fails at most once).
    opts.concurrency = 1;
    opts.coalesce = CoalesceOptions {
        hole_size_limit: 0,
        range_size_limit: 4096,
    };
    let src = Source::open(faulty.clone(), loc.path, loc.display, opts)
        .await
        .unwrap();
    assert_eq!(src.size(), 200_000);

    let reqs: Vec<_> = (0..40u64).map(|i| i * 5000..i * 5000 + 100).collect();
    let got = src.fetch(&reqs).await.unwrap();
    for (r, g) in reqs.iter().zip(&got) {
        assert_eq!(g, &bytes.slice(r.start as usize..r.end as usize), "{r:?}");
    }
    for _ in 0..5 {
        assert_eq!(src.tail(10).await.unwrap(), bytes.slice(199_990..));
    }
    let s = src.stats().snapshot();
    assert!(s.retries > 0, "{s:?}");
    assert_eq!(s.retries, faulty.failures());
    assert_eq!(s.requests, 45);
}

#[tokio::test]
async fn projected_scans_of_s3_files_survive_transient_failures() {
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use futures::TryStreamExt;
    use strata_parquet::ipc::IpcFileWriter;
    use strata_scan::{ScanFile, ScanRequest};

    let Some(bucket) = bucket("projected_scans_of_s3_files_survive_transient_failures") else {
        return;
    };
    // Four columns of 4 batches, 2 MiB in all: more than is read whole.
    let n = 65_536;
    let batch = RecordBatch::try_from_iter([
        (
            "a",
            Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
        ),
        (
            "b",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 3))) as ArrayRef,
        ),
        (
            "c",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("{i:06}")),
            )) as ArrayRef,
        ),
        (
            "d",
            Arc::new(Int64Array::from_iter_values((0..n).rev())) as ArrayRef,
        ),
    ])
    .unwrap();
    let mut w = IpcFileWriter::try_new(Vec::new(), &batch.schema(), Default::default()).unwrap();
    for i in 0..4 {
        w.write(&batch.slice(i * 16_384, 16_384)).unwrap();
    }
    let bytes = Bytes::from(w.finish().unwrap());
    assert!(bytes.len() > 1 << 20);
    let url = format!("s3://{bucket}/{}/t.arrow", prefix("scan"));
    put(&url, bytes.clone()).await;

    let loc = parse_location(&url, &StoreConfig::default()).unwrap();
    let faulty = Arc::new(FaultStore::new(loc.store.clone(), FaultRule::EveryNth(4)));
    let mut opts = loc.fetch_options();
    opts.retry_backoff = Duration::from_millis(1);
    opts.concurrency = 1;
    let src = Source::open(faulty.clone(), loc.path, loc.display, opts)
        .await
        .unwrap()
        .with_stats(IoStats::with_log());
    let file = ScanFile::open(src).await.unwrap();
    let req = ScanRequest {
        columns: Some(vec!["d".into(), "b".into()]),
        ..Default::default()
    };
    let got: Vec<RecordBatch> = file.stream(&req).unwrap().try_collect().await.unwrap();
    let got = arrow_select::concat::concat_batches(&got[0].schema(), &got).unwrap();
    assert_eq!(got, batch.project(&[3, 1]).unwrap());
    let s = file.source().stats().snapshot();
    assert!(s.retries > 0 && s.retries == faulty.failures(), "{s:?}");
    // Only the two columns' bytes (plus footer and headers) came over.
    let column_bytes = 2 * 8 * n as u64;
    assert!(s.bytes_fetched < column_bytes + 2 * 65_536, "{s:?}");
    assert!(s.bytes_fetched >= column_bytes, "{s:?}");
}

#[test]
fn a_prefix_is_scanned_as_one_input() {
    use arrow_array::{Array, Int64Array, RecordBatch};
    let Some(bucket) = bucket("a_prefix_is_scanned_as_one_input") else {
        return;
    };
    let base = format!("s3://{bucket}/{}", prefix("multi"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let file = |from: i64| {
        let b = RecordBatch::try_from_iter([(
            "id",
            Arc::new(Int64Array::from_iter_values(from..from + 10)) as _,
        )])
        .unwrap();
        let props = parquet::file::properties::WriterProperties::default();
        let mut w =
            strata_parquet::writer::ParquetWriter::try_new(Vec::new(), b.schema(), props).unwrap();
        w.write(&b).unwrap();
        Bytes::from(w.finish().unwrap())
    };
    rt.block_on(async {
        for i in [0, 1, 2, 10] {
            put(&format!("{base}/f_{i}.parquet"), file(i * 10)).await;
        }
        put(&format!("{base}/sub/f_5.parquet"), file(50)).await;
        put(&format!("{base}/_strata_manifest.json"), Bytes::from("{}")).await;
    });
    let ids = |location: String| {
        let mut s = strata_scan::MultiScanner::open_locations(&[location], &StoreConfig::default())
            .unwrap();
        let mut out = Vec::new();
        s.scan(&strata_scan::ScanRequest::default(), |b| {
            let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            out.extend(a.values().iter().copied());
            assert_eq!(a.null_count(), 0);
            Ok(())
        })
        .unwrap();
        out
    };
    let all: Vec<i64> = (0..30).chain(100..110).collect();
    assert_eq!(ids(format!("{base}/")), all);
    let ones: Vec<i64> = (10..20).chain(100..110).collect();
    assert_eq!(ids(format!("{base}/f_1*.parquet")), ones);
}
