//! `strata compact` on datasets as users keep them: a damaged manifest,
//! plan sizes in bytes, the progress bar, descending keys, rebuilding a
//! manifest and registering new files.

use std::{fs::File, path::Path, sync::Arc};

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::{
    arrow::ArrowWriter,
    file::properties::WriterProperties,
    file::reader::{FileReader, SerializedFileReader},
};

use crate::common::{stderr, strata};

const MANIFEST: &str = "_strata_manifest.json";

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A manifest whose key list is emptied is refused by `plan` and `run`
/// alike with a one-line error (exit 2), and nothing changes.
#[test]
fn an_empty_key_list_is_an_error_for_plan_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for seed in ["1", "2"] {
        ok(&strata(
            &[
                "generate",
                "--preset",
                "lineitem",
                "--target-records",
                "2000",
                "--num-writers",
                "1",
                "--seed",
                seed,
                "--output-dir",
                "ds",
                "--output-filename",
                &format!("f{seed}"),
            ],
            p,
        ));
    }
    ok(&strata(
        &["compact", "init", "ds", "--key", "l_orderkey"],
        p,
    ));
    let path = p.join("ds").join(MANIFEST);
    let text = std::fs::read_to_string(&path).unwrap();
    let emptied = text.replace("\"l_orderkey\"", "");
    assert_ne!(emptied, text);
    std::fs::write(&path, &emptied).unwrap();
    let files_before = crate::common::files(&p.join("ds"));
    for args in [
        &["compact", "plan", "ds", "--budget-mb", "10"][..],
        &["compact", "run", "ds", "--budget-mb", "10"][..],
    ] {
        let o = strata(args, p);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("names no key columns"), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), emptied);
        assert_eq!(crate::common::files(&p.join("ds")), files_before);
    }
}

/// Writes `name`: rows `keys` and an incompressible value, uncompressed
/// and without dictionaries, so the size follows the row count.
fn write_plain(dir: &Path, name: &str, keys: impl Iterator<Item = i64>) {
    let keys: Vec<i64> = keys.collect();
    let values: Vec<i64> = keys
        .iter()
        .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64))
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(keys)) as ArrayRef,
            Arc::new(Int64Array::from(values)) as ArrayRef,
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .build();
    let out = File::create(dir.join(name)).unwrap();
    let mut w = ArrowWriter::try_new(out, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Six overlapping files of about 1.4 MB under a 5 MB budget: the plan
/// reads at most 5 MB, and says how much, to a tenth of a MB.
#[test]
fn plan_counts_bytes_and_prints_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for f in 0..6i64 {
        write_plain(p, &format!("f{f}.parquet"), (0..92_000).map(|i| i * 6 + f));
    }
    ok(&strata(&["compact", "init", ".", "--key", "k"], p));
    let out = ok(&strata(&["compact", "plan", ".", "--budget-mb", "5"], p));
    let picked: Vec<&str> = out
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| l.ends_with(".parquet"))
        .collect();
    assert!(!picked.is_empty(), "{out}");
    let bytes: u64 = picked
        .iter()
        .map(|n| std::fs::metadata(p.join(n)).unwrap().len())
        .sum();
    assert!(bytes > 1 << 20, "{bytes}");
    assert!(bytes <= 5 << 20, "{bytes} bytes picked: {out}");
    let shown = format!("({:.1} MB of a 5 MB budget)", bytes as f64 / 1048576.0);
    assert!(out.contains(&shown), "expected '{shown}' in: {out}");
    let json: serde_json::Value = serde_json::from_str(&ok(&strata(
        &["compact", "plan", ".", "--budget-mb", "5", "--json"],
        p,
    )))
    .unwrap();
    assert_eq!(json["picked_bytes"], bytes);
}

/// On a terminal `compact run` draws a progress bar on stderr (through
/// `script`, which gives it one; skipped where `script` is missing).
#[test]
fn run_draws_a_progress_bar_on_a_terminal() {
    let has_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("compact progress bar: skipped, no `script` to give it a terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for f in 0..3i64 {
        write_plain(p, &format!("f{f}.parquet"), (0..100_000).map(|i| i * 3 + f));
    }
    ok(&strata(&["compact", "init", ".", "--key", "k"], p));
    let cmd = format!(
        "'{}' compact run . --budget-mb 100",
        env!("CARGO_BIN_EXE_strata")
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(p)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("merged 3 files"), "{text}");
    assert!(text.contains("M rows/s"), "no progress bar in: {text}");
    // Not on a terminal: no bar, stderr stays empty.
    let q = tempfile::tempdir().unwrap();
    write_plain(q.path(), "a.parquet", 0..1000);
    write_plain(q.path(), "b.parquet", 0..1000);
    ok(&strata(&["compact", "init", ".", "--key", "k"], q.path()));
    let o = strata(&["compact", "run", ".", "--budget-mb", "100"], q.path());
    ok(&o);
    assert_eq!(stderr(&o), "");
}

/// Every value of column `k` in the listed files, file by file.
fn listed_keys(dir: &Path) -> Vec<Vec<i64>> {
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(MANIFEST)).unwrap()).unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = dir.join(f["name"].as_str().unwrap());
            let batches = strata_testkit::readback::read_batches(&path).unwrap();
            batches
                .iter()
                .flat_map(|b| {
                    let i = b.schema().index_of("k").unwrap();
                    b.column(i)
                        .as_any()
                        .downcast_ref::<Int64Array>()
                        .unwrap()
                        .values()
                        .to_vec()
                })
                .collect()
        })
        .collect()
}

/// Files `sort --by k:desc` wrote are a dataset sorted by `k:desc`: init
/// verifies them, run merges them in that order, `add` registers another
/// once, and `init --force` rebuilds the manifest.
#[test]
fn descending_keys_force_and_add() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir(p.join("ds")).unwrap();
    for f in 0..4i64 {
        write_plain(
            p,
            &format!("in{f}.parquet"),
            (0..3000).map(|i| (i * 7 + f * 13) % 5000),
        );
        let name = format!("in{f}.parquet");
        let out = format!("ds/d{f}.parquet");
        ok(&strata(&["sort", &name, "--by", "k:desc", "-o", &out], p));
    }
    let out = ok(&strata(
        &["compact", "init", "ds", "--key", "k:desc", "--verify"],
        p,
    ));
    assert!(out.contains("sorted by k:desc (verified)"), "{out}");
    let out = ok(&strata(
        &[
            "compact",
            "run",
            "ds",
            "--budget-mb",
            "100",
            "--target-file-mb",
            "1",
        ],
        p,
    ));
    assert!(out.contains("merged 4 files"), "{out}");
    let keys = listed_keys(&p.join("ds"));
    assert_eq!(keys.iter().map(Vec::len).sum::<usize>(), 12_000);
    let flat: Vec<i64> = keys.concat();
    assert!(flat.windows(2).all(|w| w[0] >= w[1]), "not descending");

    // Add a new file: registered once.
    write_plain(p, "more.parquet", (0..500).map(|i| i * 3));
    ok(&strata(
        &[
            "sort",
            "more.parquet",
            "--by",
            "k:desc",
            "-o",
            "ds/e.parquet",
        ],
        p,
    ));
    let out = ok(&strata(&["compact", "add", "ds", "ds/e.parquet"], p));
    assert!(out.contains("added 1 files (500 rows)"), "{out}");
    assert_eq!(listed_keys(&p.join("ds")).concat().len(), 12_500);
    let o = strata(&["compact", "add", "ds", "e.parquet"], p);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("already in the manifest"),
        "{}",
        stderr(&o)
    );
    // An ascending file is not sorted by k:desc.
    ok(&strata(
        &["sort", "more.parquet", "--by", "k", "-o", "ds/up.parquet"],
        p,
    ));
    let o = strata(&["compact", "add", "ds", "up.parquet"], p);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is not sorted by k:desc"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(p.join("ds/up.parquet")).unwrap();

    // init again: refused without --force, rebuilt with it.
    let o = strata(&["compact", "init", "ds", "--key", "k:desc"], p);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    let out = ok(&strata(
        &["compact", "init", "ds", "--key", "k:desc", "--force"],
        p,
    ));
    assert!(out.contains("12500 rows"), "{out}");
    let rows: i64 = std::fs::read_dir(p.join("ds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|n| n.extension().is_some_and(|x| x == "parquet"))
        .map(|n| {
            SerializedFileReader::new(File::open(n).unwrap())
                .unwrap()
                .metadata()
                .file_metadata()
                .num_rows()
        })
        .sum();
    assert_eq!(rows, 12_500);
}
