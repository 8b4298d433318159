//! `strata compact`: manifests of sorted Parquet datasets.

use std::{fs::File, sync::Arc};

use crate::common::{failed_cleanly, files, stderr, strata};
use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;

fn write(dir: &std::path::Path, name: &str, keys: impl Iterator<Item = i64>) {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from_iter_values(keys)) as ArrayRef],
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(File::create(dir.join(name)).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn init_writes_a_manifest_and_refuses_bad_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write(p, "a.parquet", 0..100);
    write(p, "b.parquet", 50..150);
    let o = strata(&["compact", "init", ".", "--key", "k", "--verify"], p);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("2 files, 200 rows"), "{out}");
    assert!(out.contains("sorted by k (verified)"), "{out}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("_strata_manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["generation"], 1);
    assert_eq!(m["files"].as_array().unwrap().len(), 2);
    // Again: refused, nothing changed.
    let before = files(p);
    let keep: Vec<&str> = before.iter().map(String::as_str).collect();
    let o = strata(&["compact", "init", ".", "--key", "k"], p);
    failed_cleanly(&o, p, "already has a manifest", &keep);

    // An unsorted file and an unknown key: clear errors, no manifest.
    let bad = tempfile::tempdir().unwrap();
    let q = bad.path();
    write(q, "c.parquet", (0..100).rev());
    let o = strata(&["compact", "init", ".", "--key", "k", "--verify"], q);
    failed_cleanly(&o, q, "c.parquet is not sorted by k", &["c.parquet"]);
    let o = strata(&["compact", "init", ".", "--key", "x"], q);
    failed_cleanly(&o, q, "no key column 'x'", &["c.parquet"]);
    let empty = tempfile::tempdir().unwrap();
    let o = strata(&["compact", "init", ".", "--key", "k"], empty.path());
    failed_cleanly(&o, empty.path(), "no .parquet files", &[]);
}

/// `compact init`, `plan` and `run` on an `s3://` prefix (against the
/// server `scripts/test` starts; says so on stderr and checks nothing
/// without `STRATA_S3_ENDPOINT`).
#[test]
fn a_dataset_on_s3_is_initialised_planned_and_compacted() {
    use object_store::ObjectStoreExt;
    if std::env::var_os("STRATA_S3_ENDPOINT").is_none() {
        eprintln!("s3 compaction: skipped, STRATA_S3_ENDPOINT is not set (scripts/test sets it)");
        return;
    }
    let bucket = std::env::var("STRATA_S3_BUCKET").unwrap_or_else(|_| "strata-test".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let url = format!("s3://{bucket}/cli-compact-{}-{nanos}", std::process::id());
    let local = tempfile::tempdir().unwrap();
    let p = local.path();
    write(p, "a.parquet", 0..3000);
    write(p, "b.parquet", 1000..4000);
    write(p, "c.parquet", 2000..5000);
    let loc = strata_store::location::parse_location(&url, &Default::default()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for name in ["a.parquet", "b.parquet", "c.parquet"] {
            let bytes = std::fs::read(p.join(name)).unwrap();
            loc.store
                .put(&loc.path.clone().join(name), bytes.into())
                .await
                .unwrap();
        }
    });
    let o = strata(&["compact", "init", &url, "--key", "k", "--verify"], p);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("3 files, 9000 rows"));
    let o = strata(&["compact", "plan", &url, "--budget-mb", "64", "--json"], p);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["picked"].as_array().unwrap().len(), 3, "{plan}");
    let o = strata(&["compact", "run", &url, "--budget-mb", "64"], p);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("merged 3 files into 1 (9000 rows"), "{out}");
    assert!(out.contains("generation 2"), "{out}");
    // A missing prefix: a clear error.
    let o = strata(
        &[
            "compact",
            "plan",
            &format!("{url}-none"),
            "--budget-mb",
            "64",
        ],
        p,
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("has no manifest"), "{}", stderr(&o));
}
