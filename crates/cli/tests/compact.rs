//! `strata compact`: manifests of sorted Parquet datasets.

mod common;

use std::{fs::File, sync::Arc};

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use common::{failed_cleanly, files, stderr, strata};
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
