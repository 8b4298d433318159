//! `strata scan`: projected reads printed or written, the stats line, and
//! clear errors that leave nothing behind.

use std::{fs::File, path::Path, sync::Arc};

use crate::common::{failed_cleanly, files, stderr, strata};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::{ArrowWriter, arrow_reader::ParquetRecordBatchReaderBuilder};

fn table(rows: i64) -> RecordBatch {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
    let names: ArrayRef = Arc::new(StringArray::from_iter(
        (0..rows).map(|i| (i % 7 != 0).then(|| format!("name-{i}"))),
    ));
    let scores: ArrayRef = Arc::new(Int64Array::from_iter_values((0..rows).map(|i| i * 3 % 101)));
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("score", DataType::Int64, false),
        ])),
        vec![ids, names, scores],
    )
    .unwrap()
}

/// `t.arrow` (batches of 1000 rows) and `t.parquet` (row groups of 1000)
/// holding the same 5000 rows.
fn write_inputs(dir: &Path) -> RecordBatch {
    write_inputs_of(dir, 5000)
}

fn write_inputs_of(dir: &Path, rows: i64) -> RecordBatch {
    let t = table(rows);
    let mut w = arrow_ipc::writer::FileWriter::try_new(
        File::create(dir.join("t.arrow")).unwrap(),
        &t.schema(),
    )
    .unwrap();
    for off in (0..rows as usize).step_by(1000) {
        w.write(&t.slice(off, 1000)).unwrap();
    }
    w.finish().unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(1000))
        .build();
    let mut w = ArrowWriter::try_new(
        File::create(dir.join("t.parquet")).unwrap(),
        t.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&t).unwrap();
    w.close().unwrap();
    t
}

fn stdout(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn prints_projected_filtered_and_taken_rows() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    for input in ["t.arrow", "t.parquet"] {
        let out = stdout(&strata(
            &[
                "scan",
                input,
                "--columns",
                "score,id",
                "--filter",
                "id >= 4998",
            ],
            dir.path(),
        ));
        assert_eq!(out, "score\tid\n46\t4998\n49\t4999\n", "{input}");
        let out = stdout(&strata(
            &["scan", input, "--columns", "name", "--limit", "2"],
            dir.path(),
        ));
        assert_eq!(out, "name\nnull\nname-1\n", "{input}");
        let out = stdout(&strata(
            &[
                "scan",
                input,
                "--take",
                "4999,7,8,7",
                "--columns",
                "id,name",
            ],
            dir.path(),
        ));
        assert_eq!(
            out, "id\tname\n4999\tname-4999\n7\tnull\n8\tname-8\n7\tnull\n",
            "{input}"
        );
        let out = stdout(&strata(&["scan", input, "--filter", "id < 0"], dir.path()));
        assert_eq!(
            out, "id\tname\tscore\n",
            "{input}: a header even without rows"
        );
    }
}

/// The numbers of a `--stats` line: requests, bytes fetched, bytes
/// decoded.
fn stats_numbers(o: &std::process::Output) -> (u64, u64, u64) {
    stdout(o);
    let e = stderr(o);
    let line = e.lines().last().unwrap();
    assert!(line.starts_with("requests "), "{line}");
    assert!(
        line.contains(", bytes fetched ") && line.contains(", bytes decoded "),
        "{line}"
    );
    assert!(line.contains(", elapsed "), "{line}");
    let nums: Vec<&str> = line
        .split(", ")
        .map(|p| p.rsplit(' ').next().unwrap())
        .collect();
    let _elapsed: f64 = nums[3].parse().unwrap();
    (
        nums[0].parse().unwrap(),
        nums[1].parse().unwrap(),
        nums[2].parse().unwrap(),
    )
}

#[test]
fn stats_line_counts_what_was_fetched() {
    let small = tempfile::tempdir().unwrap();
    write_inputs(small.path());
    let big = tempfile::tempdir().unwrap();
    let rows = 200_000;
    write_inputs_of(big.path(), rows);
    for input in ["t.arrow", "t.parquet"] {
        // A file under 1 MiB is read whole by its first request.
        let size = std::fs::metadata(small.path().join(input)).unwrap().len();
        assert!(size < 1 << 20);
        let o = strata(&["scan", input, "--columns", "id", "--stats"], small.path());
        assert_eq!(stats_numbers(&o), (1, size, 5000 * 8), "{input}");
        // A larger one: only the column's bytes, in a few requests.
        let size = std::fs::metadata(big.path().join(input)).unwrap().len();
        assert!(size > 1 << 20);
        let o = strata(&["scan", input, "--columns", "id", "--stats"], big.path());
        let (requests, fetched, decoded) = stats_numbers(&o);
        assert!(requests >= 2, "{input}: {requests}");
        assert!(fetched < size / 2, "{input}: {fetched} of {size}");
        assert_eq!(decoded, rows as u64 * 8, "{input}");
    }
}

#[test]
fn writes_every_output_format() {
    let dir = tempfile::tempdir().unwrap();
    let t = write_inputs(dir.path());
    let want = t.project(&[2, 0]).unwrap();
    for (input, out) in [
        ("t.arrow", "o.parquet"),
        ("t.parquet", "o.arrow"),
        ("t.arrow", "o.csv"),
        ("t.parquet", "o.jsonl"),
    ] {
        let o = strata(
            &["scan", input, "--columns", "score,id", "-o", out],
            dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
        let path = dir.path().join(out);
        let got: Vec<RecordBatch> = match out {
            "o.parquet" => ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap())
                .collect(),
            "o.arrow" => arrow_ipc::reader::FileReader::try_new(File::open(&path).unwrap(), None)
                .unwrap()
                .map(|b| b.unwrap())
                .collect(),
            "o.csv" => {
                let text = std::fs::read_to_string(&path).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines[0], "score,id");
                assert_eq!(lines.len(), 5001);
                assert_eq!(lines[4999], "46,4998");
                continue;
            }
            _ => {
                let text = std::fs::read_to_string(&path).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len(), 5000);
                assert_eq!(lines[4998], r#"{"score":46,"id":4998}"#);
                continue;
            }
        };
        let got = arrow_select::concat::concat_batches(&got[0].schema(), &got).unwrap();
        assert_eq!(got.columns(), want.columns(), "{input} -> {out}");
    }
}

#[test]
fn bad_input_gives_clear_errors_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    std::fs::write(dir.path().join("exists.arrow"), b"keep").unwrap();
    let full = files(dir.path());
    let keep: Vec<&str> = full.iter().map(String::as_str).collect();
    let p = dir.path();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["scan", "t.arrow", "--columns", "nope"],
            "no column 'nope'",
        ),
        (
            vec!["scan", "t.parquet", "--columns", "id,id"],
            "more than once",
        ),
        (vec!["scan", "t.arrow", "--filter", "id >"], "filter"),
        (vec!["scan", "t.arrow", "--filter", "name > 5"], "name"),
        (vec!["scan", "missing.arrow"], "not found"),
        (vec!["scan", "gs://b/k"], "gs://b/k"),
        (vec!["scan", "t.arrow", "--take", "5000"], "out of range"),
        (
            vec!["scan", "t.arrow", "-o", "exists.arrow"],
            "already exists",
        ),
        (vec!["scan", "t.arrow", "-o", "out.txt"], "extension"),
        (
            vec!["scan", "t.arrow", "-o", "no/such/dir/out.arrow"],
            "cannot create",
        ),
    ];
    for (args, needle) in cases {
        let o = strata(&args, p);
        failed_cleanly(&o, p, needle, &keep);
    }
    // Truncated and garbled inputs.
    let bytes = std::fs::read(p.join("t.arrow")).unwrap();
    std::fs::write(p.join("cut.arrow"), &bytes[..bytes.len() / 2]).unwrap();
    let o = strata(&["scan", "cut.arrow", "-o", "x.parquet"], p);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not an Arrow IPC file or a Parquet file"),
        "{}",
        stderr(&o)
    );
    assert!(!p.join("x.parquet").exists());
    let pq = std::fs::read(p.join("t.parquet")).unwrap();
    let mut bad = pq.clone();
    let n = bad.len();
    bad[n - 20..n - 8].fill(0xAB);
    std::fs::write(p.join("bad.parquet"), &bad).unwrap();
    let o = strata(&["scan", "bad.parquet", "-o", "y.arrow"], p);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.parquet"), "{}", stderr(&o));
    assert!(!p.join("y.arrow").exists());
    assert!(
        files(p).iter().all(|f| !f.contains("strata-tmp")),
        "{:?}",
        files(p)
    );
}

#[test]
fn scans_a_directory_a_glob_and_several_files_as_one_input() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = strata(args, dir.path());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    };
    run(&[
        "generate",
        "--preset",
        "contacts",
        "--target-records",
        "3000",
        "--num-writers",
        "3",
        "--output-dir",
        "ds",
        "-q",
    ]);
    std::fs::write(dir.path().join("ds/_strata_manifest.json"), "{}").unwrap();
    let one_by_one: String = (0..3)
        .map(|i| {
            let out = stdout(&strata(
                &[
                    "scan",
                    &format!("ds/contacts_{i}.parquet"),
                    "--columns",
                    "name",
                ],
                dir.path(),
            ));
            out.strip_prefix("name\n").unwrap().to_string()
        })
        .collect();
    let want = format!("name\n{one_by_one}");
    for args in [
        vec!["ds"],
        vec!["ds/"],
        vec!["ds/*.parquet"],
        vec![
            "ds/contacts_0.parquet",
            "ds/contacts_1.parquet",
            "ds/contacts_2.parquet",
        ],
    ] {
        let mut a = vec!["scan"];
        a.extend(&args);
        a.extend(["--columns", "name"]);
        assert_eq!(stdout(&strata(&a, dir.path())), want, "{args:?}");
    }
    // Rows numbered across the files.
    let out = stdout(&strata(
        &["scan", "ds", "--take", "2999,0", "--columns", "name"],
        dir.path(),
    ));
    let lines: Vec<&str> = want.lines().collect();
    assert_eq!(out, format!("name\n{}\n{}\n", lines[3000], lines[1]));
    // Other columns are refused, by name.
    write_inputs(dir.path());
    let o = strata(&["scan", "ds", "t.parquet"], dir.path());
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("t.parquet") && e.contains("columns"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}
