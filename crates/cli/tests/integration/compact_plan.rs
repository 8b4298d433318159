//! `strata compact plan` and `run` from the command line.

use crate::common::{failed_cleanly, stderr, strata};

/// Kudu's SignificantOverlap shape as TSV: 100 rowsets of 1 MB, each
/// overlapping the next half.
fn significant_overlap_tsv() -> String {
    let mut s = String::from("# size_mb\tmin\tmax\n");
    for i in 0..100u64 {
        s.push_str(&format!(
            "1\t{:010}\t{:010}\n",
            10_000 * i,
            10_000 * (i + 2)
        ));
    }
    s
}

#[test]
fn plan_reads_kudu_tsv_and_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.tsv"), significant_overlap_tsv()).unwrap();
    let o = strata(
        &[
            "compact",
            "plan",
            "--rowsets-tsv",
            "r.tsv",
            "--budget-mb",
            "64",
            "--json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["picked"].as_array().unwrap().len(), 64);
    assert_eq!(v["picked_mb"], 64);
    assert!(v["quality"].as_f64().unwrap() > 0.5, "{v}");
    assert_eq!(v["inputs"], 100);

    // Bad inputs: clear errors naming the problem.
    std::fs::write(dir.path().join("bad.tsv"), "1\ta\n").unwrap();
    let keep = ["bad.tsv", "r.tsv"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "compact",
                "plan",
                "--rowsets-tsv",
                "bad.tsv",
                "--budget-mb",
                "8",
            ],
            "line 1",
        ),
        (
            vec![
                "compact",
                "plan",
                "--rowsets-tsv",
                "r.tsv",
                "--budget-mb",
                "0",
            ],
            "at least 1",
        ),
        (
            vec![
                "compact",
                "plan",
                "--rowsets-tsv",
                "r.tsv",
                "--budget-mb",
                "8",
                "--approximation-ratio",
                "0.5",
            ],
            "approximation-ratio",
        ),
        (
            vec![
                "compact",
                "plan",
                "--rowsets-tsv",
                "r.tsv",
                "--budget-mb",
                "8",
                "--rules",
                "x",
            ],
            "unknown --rules",
        ),
        (
            vec![
                "compact",
                "plan",
                "--rowsets-tsv",
                "none.tsv",
                "--budget-mb",
                "8",
            ],
            "none.tsv",
        ),
        (
            vec!["compact", "plan", ".", "--budget-mb", "8"],
            "_strata_manifest.json",
        ),
    ];
    for (args, needle) in cases {
        let o = strata(&args, dir.path());
        failed_cleanly(&o, dir.path(), needle, &keep);
    }
}

#[test]
fn ycsb_rowsets_plan_within_budget_when_the_shared_data_is_present() {
    let tsv = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/kudu-ycsb-rowsets.tsv");
    if !tsv.exists() {
        eprintln!(
            "skipped: {} is absent (it ships with the shared material)",
            tsv.display()
        );
        return;
    }
    let mut last = 0.0;
    for budget in ["128", "1024"] {
        let o = strata(
            &[
                "compact",
                "plan",
                "--rowsets-tsv",
                tsv.to_str().unwrap(),
                "--budget-mb",
                budget,
                "--json",
            ],
            std::path::Path::new("."),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["picked_mb"].as_u64().unwrap() <= budget.parse().unwrap());
        let q = v["quality"].as_f64().unwrap();
        assert!(q >= last, "{q} < {last}");
        last = q;
    }
}

#[test]
fn run_merges_the_planned_files_and_keeps_every_row() {
    use std::{fs::File, sync::Arc};

    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;

    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
    for f in 0..6i64 {
        // Each file overlaps the next by half.
        let keys = Int64Array::from_iter_values((0..1000).map(|i| f * 500 + i));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(keys) as ArrayRef]).unwrap();
        let mut w = ArrowWriter::try_new(
            File::create(p.join(format!("f{f}.parquet"))).unwrap(),
            schema.clone(),
            None,
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
    assert!(
        strata(&["compact", "init", ".", "--key", "k"], p)
            .status
            .success()
    );
    let o = strata(&["compact", "run", ".", "--budget-mb", "3"], p);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("merged "), "{out}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("_strata_manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["generation"], 2);
    let rows: u64 = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rows"].as_u64().unwrap())
        .sum();
    assert_eq!(rows, 6000);
    let o = strata(
        &[
            "compact",
            "run",
            ".",
            "--budget-mb",
            "3",
            "--target-file-mb",
            "0",
        ],
        p,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--target-file-mb"), "{}", stderr(&o));
}
