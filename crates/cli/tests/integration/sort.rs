//! `strata sort` as a user runs it: sorted output checked with a plain
//! comparator, rows and schema kept, stability, format conversion, and
//! failures that leave no output behind.

use std::{cmp::Ordering, collections::HashMap, fs::File, path::Path, process::Output, sync::Arc};

use arrow_array::{
    Array, ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray,
    builder::{Int32Builder, MapBuilder, StringBuilder},
    types::Int32Type,
};
use arrow_ord::ord::make_comparator;
use arrow_schema::{Field, Schema, SchemaRef, SortOptions};
use parquet::{arrow::ArrowWriter, file::properties::WriterProperties};
use strata_testkit::readback::{multiset_hash, rows_as_text};

use crate::common::{failed_cleanly, files, stderr, strata};

fn succeeded(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

/// The test table's schema: key candidates of several types, the input
/// row number `id` (not nullable) and a payload; field and schema metadata.
fn schema() -> SchemaRef {
    let doc = |f: Field| {
        let name = f.name().clone();
        f.with_metadata(HashMap::from([("doc".to_string(), format!("the {name}"))]))
    };
    let dict = arrow_schema::DataType::Dictionary(
        Box::new(arrow_schema::DataType::Int32),
        Box::new(arrow_schema::DataType::Utf8),
    );
    use arrow_schema::DataType as T;
    Arc::new(
        Schema::new(vec![
            doc(Field::new("i", T::Int32, true)),
            doc(Field::new("f", T::Float64, true)),
            doc(Field::new("s", T::Utf8, true)),
            doc(Field::new("d", dict, true)),
            doc(Field::new("b", T::Boolean, true)),
            doc(Field::new("id", T::Int64, false)),
            Field::new("payload", T::Utf8, true),
        ])
        .with_metadata(HashMap::from([("origin".into(), "sort test".into())])),
    )
}

/// `n` seeded random rows in batches of at most `batch` rows; few distinct
/// values per key, so ties (and so stability) matter.
fn table(seed: u64, n: usize, batch: usize) -> Vec<RecordBatch> {
    let mut r = strata_gen::rng::RowRng::seeded(seed);
    let schema = schema();
    let words = ["", "a", "ab", "abc", "b", "zz"];
    let colours: ArrayRef = Arc::new(StringArray::from(vec![
        "red", "green", "blue", "", "violet",
    ]));
    let mut out = Vec::new();
    for start in (0..n).step_by(batch.max(1)) {
        let len = batch.min(n - start);
        let i: Int32Array = (0..len)
            .map(|_| (r.next_below(6) != 0).then(|| r.next_below(9) as i32 - 4))
            .collect();
        let f: Float64Array = (0..len)
            .map(|_| match r.next_below(10) {
                0 => None,
                1 => Some(f64::NAN),
                2 => Some(-0.0),
                3 => Some(0.0),
                4 => Some(f64::INFINITY),
                _ => Some(r.next_below(7) as f64 - 3.5),
            })
            .collect();
        let s: StringArray = (0..len)
            .map(|_| (r.next_below(5) != 0).then(|| words[r.next_below(6) as usize]))
            .collect();
        // One dictionary for every batch, as an IPC file requires.
        let keys: Int32Array = (0..len)
            .map(|_| (r.next_below(8) != 0).then(|| r.next_below(5) as i32))
            .collect();
        let d = DictionaryArray::<Int32Type>::try_new(keys, colours.clone()).unwrap();
        let b: BooleanArray = (0..len)
            .map(|_| (r.next_below(6) != 0).then(|| r.next_below(2) == 0))
            .collect();
        let id = Int64Array::from_iter_values(start as i64..(start + len) as i64);
        let payload: StringArray = (0..len)
            .map(|_| (r.next_below(10) != 0).then(|| format!("p{}", r.next_u64() % 100_000)))
            .collect();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(i),
            Arc::new(f),
            Arc::new(s),
            Arc::new(d),
            Arc::new(b),
            Arc::new(id),
            Arc::new(payload),
        ];
        out.push(RecordBatch::try_new(schema.clone(), columns).unwrap());
    }
    out
}

fn write_parquet(path: &Path, schema: &SchemaRef, batches: &[RecordBatch]) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(1500))
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), schema.clone(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

fn write_ipc(path: &Path, schema: &SchemaRef, batches: &[RecordBatch]) {
    let mut w =
        arrow_ipc::writer::FileWriter::try_new(File::create(path).unwrap(), schema).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
}

/// Schema and batches of a file, by its first bytes.
fn read(path: &Path) -> (SchemaRef, Vec<RecordBatch>) {
    let bytes = std::fs::read(path).unwrap();
    let file = File::open(path).unwrap();
    if bytes.starts_with(b"PAR1") {
        let b =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let schema = b.schema().clone();
        let batches = b.build().unwrap().collect::<Result<_, _>>().unwrap();
        (schema, batches)
    } else {
        assert!(
            bytes.starts_with(b"ARROW1"),
            "{} has no magic",
            path.display()
        );
        let r = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
        let schema = r.schema();
        (schema, r.collect::<Result<_, _>>().unwrap())
    }
}

/// `(column, options)` of a `--by` spec, parsed here independently.
fn parse_keys(spec: &str) -> Vec<(String, SortOptions)> {
    spec.split(',')
        .map(|k| {
            let mut parts = k.split(':');
            let col = parts.next().unwrap().to_string();
            let mut o = SortOptions::default();
            for p in parts {
                match p {
                    "desc" => o.descending = true,
                    "nulls_first" => o.nulls_first = true,
                    "nulls_last" => o.nulls_first = false,
                    _ => panic!("{p}"),
                }
            }
            (col, o)
        })
        .collect()
}

/// Asserts `batch` is ordered by `spec` under Arrow's per-column
/// comparators, lexicographically, and that ties keep ascending `id`.
fn assert_sorted(batch: &RecordBatch, spec: &str) {
    let cmps: Vec<_> = parse_keys(spec)
        .into_iter()
        .map(|(col, o)| {
            let c = batch.column_by_name(&col).unwrap();
            make_comparator(c.as_ref(), c.as_ref(), o).unwrap()
        })
        .collect();
    let id = batch
        .column_by_name("id")
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    for r in 1..batch.num_rows() {
        let ord = cmps
            .iter()
            .map(|c| c(r - 1, r))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal);
        match ord {
            Ordering::Less => {}
            Ordering::Equal => assert!(
                id.value(r - 1) < id.value(r),
                "{spec}: equal keys out of input order at row {r}"
            ),
            Ordering::Greater => panic!("{spec}: rows {} and {r} out of order", r - 1),
        }
    }
}

/// Every row in one batch.
fn concat(schema: &SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(schema, batches).unwrap()
}

fn fingerprint(batches: &[RecordBatch]) -> u64 {
    multiset_hash(&mut rows_as_text(batches).unwrap())
}

#[test]
fn sorts_parquet_and_ipc_inputs_into_either_format() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema();
    let input = table(7, 6000, 1000);
    let all = concat(&schema, &input);
    write_parquet(&dir.path().join("in.parquet"), &schema, &input);
    write_ipc(&dir.path().join("in.arrow"), &schema, &input);
    let want = fingerprint(&input);
    let specs = [
        "s:desc,i:nulls_last",
        "d,f:desc:nulls_first,b:nulls_last",
        "b:desc,f,s:nulls_last",
    ];
    for (n, spec) in specs.iter().enumerate() {
        for src in ["in.parquet", "in.arrow"] {
            for dst in ["out.parquet", "out.arrow", "out.ipc", "out.feather"] {
                let out = format!("{n}-{src}-{dst}");
                let o = strata(&["sort", src, "--by", spec, "-o", &out], dir.path());
                succeeded(&o);
                let text = String::from_utf8_lossy(&o.stdout);
                assert!(text.contains("sorted 6000 rows"), "{text}");
                let (got_schema, batches) = read(&dir.path().join(&out));
                assert_eq!(got_schema, schema, "{out}: schema changed");
                let want_magic: &[u8] = if dst.ends_with(".parquet") {
                    b"PAR1"
                } else {
                    b"ARROW1"
                };
                assert!(
                    std::fs::read(dir.path().join(&out))
                        .unwrap()
                        .starts_with(want_magic),
                    "{out}: wrong format"
                );
                let sorted = concat(&schema, &batches);
                assert_eq!(sorted.num_rows(), all.num_rows());
                assert_sorted(&sorted, spec);
                assert_eq!(fingerprint(&batches), want, "{out}: rows changed");
            }
        }
    }
}

#[test]
fn equal_keys_keep_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema();
    write_ipc(&dir.path().join("in.arrow"), &schema, &table(8, 3000, 700));
    for spec in ["b", "b:desc:nulls_last", "d:nulls_last,b"] {
        let o = strata(
            &[
                "sort",
                "in.arrow",
                "--by",
                spec,
                "-o",
                "out.arrow",
                "--overwrite",
            ],
            dir.path(),
        );
        succeeded(&o);
        let (_, batches) = read(&dir.path().join("out.arrow"));
        let sorted = concat(&schema, &batches);
        // Few distinct keys: long runs of ties, each in ascending `id`.
        assert_sorted(&sorted, spec);
    }
}

#[test]
fn empty_input_gives_an_empty_output_with_the_same_schema() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema();
    write_parquet(&dir.path().join("empty.parquet"), &schema, &[]);
    write_ipc(&dir.path().join("empty.arrow"), &schema, &[]);
    for (src, dst) in [("empty.parquet", "a.arrow"), ("empty.arrow", "b.parquet")] {
        let o = strata(&["sort", src, "--by", "i,s:desc", "-o", dst], dir.path());
        succeeded(&o);
        assert!(String::from_utf8_lossy(&o.stdout).contains("sorted 0 rows"));
        let (got, batches) = read(&dir.path().join(dst));
        assert_eq!(got, schema);
        assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 0);
    }
}

#[test]
fn bad_runs_fail_with_a_message_and_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schema();
    let input = table(9, 4000, 1000);
    write_parquet(&d.join("in.parquet"), &schema, &input);
    let good = std::fs::read(d.join("in.parquet")).unwrap();
    std::fs::write(d.join("truncated.parquet"), &good[..good.len() / 2]).unwrap();
    std::fs::write(
        d.join("garbage.arrow"),
        b"this is not a columnar file at all",
    )
    .unwrap();
    std::fs::write(d.join("exists.arrow"), b"old").unwrap();
    let inputs = [
        "exists.arrow",
        "garbage.arrow",
        "in.parquet",
        "truncated.parquet",
    ];
    for (args, needle) in [
        (vec!["in.parquet", "--by", "nope"], "no column 'nope'"),
        (
            vec!["in.parquet", "--by", "i,nope:desc"],
            "(columns: i, f, s, d, b, id, payload)",
        ),
        (vec!["in.parquet", "--by", "i:sideways"], "':sideways'"),
        (vec!["in.parquet", "--by", "i:desc:asc"], "':asc'"),
        (vec!["in.parquet", "--by", ""], "at least one column"),
        (vec!["truncated.parquet", "--by", "i"], "truncated.parquet"),
        (
            vec!["garbage.arrow", "--by", "i"],
            "not a Parquet or Arrow IPC file",
        ),
        (vec!["missing.parquet", "--by", "i"], "missing.parquet"),
        (
            vec!["in.parquet", "--by", "i", "--spill-dir", "nowhere"],
            "spill directory nowhere",
        ),
        (
            vec!["in.parquet", "--by", "i", "--target-file-mb", "0"],
            "--target-file-mb",
        ),
        (
            vec!["in.parquet", "--by", "i", "--threads", "0"],
            "--threads",
        ),
        (vec!["--by", "i"], "<INPUTS>"),
        (
            vec!["in.parquet", "--by", "i", "--memory-limit", "lots"],
            "'lots'",
        ),
    ] {
        let mut full = vec!["sort"];
        full.extend(args.iter().copied());
        full.extend(["-o", "out.parquet"]);
        let o = strata(&full, d);
        let e = failed_cleanly(&o, d, needle, &inputs);
        assert_eq!(e.lines().filter(|l| l.contains("error")).count(), 1, "{e}");
    }
    for (out, extra, needle) in [
        ("out.csv", None, "'.csv'"),
        ("out", None, "extension"),
        ("exists.arrow", None, "exists.arrow already exists"),
        ("in.parquet", Some("--overwrite"), "is the input"),
        ("in.parquet", None, "is the input"),
        ("no/such/dir/out.arrow", None, "no/such/dir"),
    ] {
        let mut full = vec!["sort", "in.parquet", "--by", "i", "-o", out];
        full.extend(extra);
        let o = strata(&full, d);
        failed_cleanly(&o, d, needle, &inputs);
    }
    assert_eq!(std::fs::read(d.join("exists.arrow")).unwrap(), b"old");
    assert_eq!(std::fs::read(d.join("in.parquet")).unwrap(), good);

    // With --overwrite the existing output is replaced.
    let o = strata(
        &[
            "sort",
            "in.parquet",
            "--by",
            "i",
            "-o",
            "exists.arrow",
            "--overwrite",
        ],
        d,
    );
    succeeded(&o);
    let (_, batches) = read(&d.join("exists.arrow"));
    assert_eq!(fingerprint(&batches), fingerprint(&input));
}

#[test]
fn a_key_type_the_row_encoder_lacks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut m = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    for i in 0..50 {
        m.keys().append_value(format!("k{}", i % 7));
        m.values().append_value(i);
        m.append(i % 5 != 0).unwrap();
    }
    let batch = RecordBatch::try_from_iter([
        ("m", Arc::new(m.finish()) as ArrayRef),
        (
            "id",
            Arc::new(Int64Array::from_iter_values(0..50)) as ArrayRef,
        ),
    ])
    .unwrap();
    write_ipc(
        &d.join("map.arrow"),
        &batch.schema(),
        std::slice::from_ref(&batch),
    );
    let map_type = batch.schema().field(0).data_type().clone();
    let supported =
        strata_row::RowEncoder::new(vec![strata_row::SortField::new(map_type.clone())]).is_ok();
    let o = strata(
        &[
            "sort",
            "map.arrow",
            "--by",
            "id,m:desc",
            "-o",
            "out.parquet",
        ],
        d,
    );
    if supported {
        // The encoder orders maps: the run succeeds and keeps the rows.
        succeeded(&o);
        let (_, batches) = read(&d.join("out.parquet"));
        assert_eq!(fingerprint(&batches), fingerprint(&[batch]));
    } else {
        let e = failed_cleanly(&o, d, "cannot sort by column 'm'", &["map.arrow"]);
        assert!(e.contains("Map"), "{e}");
    }
}

/// Sorts with `args` in `dir` and returns the rows of the output files
/// (a file, or the files of a directory by name) as text, in order.
fn sorted_text(dir: &Path, args: &[&str], out: &str) -> Vec<String> {
    let mut full = vec!["sort"];
    full.extend_from_slice(args);
    full.extend(["-o", out, "--overwrite"]);
    let o = strata(&full, dir);
    succeeded(&o);
    let path = dir.join(out);
    let mut paths = vec![path.clone()];
    if path.is_dir() {
        paths = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
    }
    let batches: Vec<RecordBatch> = paths.iter().flat_map(|p| read(p).1).collect();
    rows_as_text(&batches).unwrap()
}

/// Inputs far over `--memory-limit` are sorted in spilled runs: the same
/// rows in the same order as the in-memory sort, as one file or as a
/// directory merged on several threads, from several inputs at once
/// (files and a directory), and nothing left in the spill directory.
#[test]
fn external_sorts_equal_the_in_memory_sort() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schema();
    let input = table(21, 12_000, 1000);
    std::fs::create_dir(d.join("parts")).unwrap();
    write_parquet(&d.join("parts/a.parquet"), &schema, &input[..4]);
    write_ipc(&d.join("parts/b.arrow"), &schema, &input[4..8]);
    write_parquet(&d.join("c.parquet"), &schema, &input[8..]);
    std::fs::create_dir(d.join("spill")).unwrap();
    for spec in ["s:desc,i:nulls_last", "d:nulls_last,f:desc", "b,id:desc"] {
        let want = sorted_text(d, &["parts", "c.parquet", "--by", spec], "mem.parquet");
        assert_eq!(want.len(), 12_000);
        for extra in [
            &["--memory-limit", "64KiB"][..],
            &["--memory-limit", "300KiB", "--spill-dir", "spill"],
            &[
                "--memory-limit",
                "64KiB",
                "--target-file-mb",
                "1",
                "--threads",
                "3",
            ],
        ] {
            let mut args = vec!["parts", "c.parquet", "--by", spec];
            args.extend_from_slice(extra);
            let out = if extra.contains(&"--target-file-mb") {
                "outdir"
            } else {
                "out.parquet"
            };
            assert_eq!(sorted_text(d, &args, out), want, "{spec} {extra:?}");
        }
    }
    assert!(files(&d.join("spill")).is_empty());
    // The summary says the sort spilled.
    let o = strata(
        &[
            "sort",
            "c.parquet",
            "--by",
            "i",
            "--memory-limit",
            "64KiB",
            "-o",
            "x.parquet",
        ],
        d,
    );
    succeeded(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("external: read and sort"), "{text}");
    assert!(text.contains("peak resident memory"), "{text}");
}

/// A sort whose spill files cannot be written (here a file-size limit,
/// as a full disk would) fails with the system's message, removes its
/// spill directory and leaves no output.
#[cfg(target_os = "linux")]
#[test]
fn a_spill_that_cannot_be_written_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schema();
    write_parquet(&d.join("in.parquet"), &schema, &table(22, 20_000, 1000));
    // Files over 64 KiB cannot be written (EFBIG); the input is larger
    // but is only read. SIGXFSZ is ignored so that the write fails
    // instead of killing the process.
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 64; exec "$0" sort in.parquet --by s,i --memory-limit 1MiB -o out.parquet"#)
        .arg(env!("CARGO_BIN_EXE_strata"))
        .current_dir(d)
        .output()
        .unwrap();
    failed_cleanly(&o, d, "File too large", &["in.parquet"]);
}

/// SIGINT (Ctrl-C) and SIGTERM while a sort spills: exit status 130, the
/// spill directory removed, no output and no temporary left.
#[cfg(unix)]
#[test]
fn an_interrupted_sort_removes_its_spill_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schema();
    write_parquet(&d.join("in.parquet"), &schema, &table(23, 200_000, 4000));
    std::fs::create_dir(d.join("spill")).unwrap();
    for signal in ["-INT", "-TERM"] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
            .args([
                "sort",
                "in.parquet",
                "--by",
                "s,i",
                "--memory-limit",
                "256KiB",
                "--spill-dir",
                "spill",
                "-o",
                "out.parquet",
            ])
            .current_dir(d)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for the first spilled run, then signal.
        let runs = |d: &Path| {
            files(&d.join("spill"))
                .iter()
                .filter(|f| f.contains("run-"))
                .count()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while runs(d) == 0 && std::time::Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(runs(d) > 0, "no run was spilled before the sort ended");
        let status = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{signal}: {err}");
        assert!(err.contains("interrupted"), "{err}");
        assert_eq!(files(d), ["in.parquet"], "{signal}");
    }
}

/// SIGINT while a sort writes a directory of part files: its parts stay
/// hidden until the whole sort is done, so an interrupt leaves no
/// `part-*.parquet` that a glob of the output would read, and no
/// temporary; a rerun then writes the complete directory.
#[cfg(unix)]
#[test]
fn an_interrupted_directory_sort_leaves_no_part_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schema();
    let input = table(24, 200_000, 4000);
    write_parquet(&d.join("in.parquet"), &schema, &input);
    let args = [
        "sort",
        "in.parquet",
        "--by",
        "s,i:desc",
        "--memory-limit",
        "4MiB",
        "--target-file-mb",
        "1",
        "--threads",
        "2",
        "-o",
        "out",
    ];
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .current_dir(d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the final merge has finished its first part (wherever it
    // keeps it), then interrupt.
    let parts = |d: &Path| {
        files(d).iter().any(|f| {
            let name = f.rsplit('/').next().unwrap_or_default();
            name.starts_with("part-") && name.ends_with(".parquet")
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !parts(d) && std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let visible: Vec<String> = files(d)
        .into_iter()
        .filter(|f| f.starts_with("out/part-") && f.ends_with(".parquet"))
        .collect();
    match out.status.code() {
        // Interrupted: nothing of the output is left, hidden or not.
        Some(130) => {
            assert!(err.contains("unfinished outputs removed"), "{err}");
            assert_eq!(visible, Vec::<String>::new(), "{err}");
            assert_eq!(files(d), ["in.parquet"]);
        }
        // The signal came after the sort published its output (or the
        // sort had finished): the output is complete.
        _ => {
            let batches: Vec<RecordBatch> =
                visible.iter().flat_map(|f| read(&d.join(f)).1).collect();
            assert_eq!(fingerprint(&batches), fingerprint(&input), "{err}");
        }
    }
    // A rerun writes the whole sorted directory.
    let rows = sorted_text(d, &args[1..args.len() - 2], "out");
    assert_eq!(rows.len(), 200_000);
}

/// `--compression` sets the output's codec for Parquet and Arrow IPC
/// alike (zstd by default, so an IPC output is no longer written
/// uncompressed); snappy, which IPC lacks, is refused for an IPC output
/// before anything is written. Every codec reads back the same rows.
#[test]
fn compression_applies_to_parquet_and_ipc_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schema();
    let input = table(25, 20_000, 2000);
    write_parquet(&d.join("in.parquet"), &schema, &input);
    let want = fingerprint(&input);
    let size = |name: &str| std::fs::metadata(d.join(name)).unwrap().len();
    let codecs = |name: &str| {
        let f = File::open(d.join(name)).unwrap();
        let r = parquet::file::reader::SerializedFileReader::new(f).unwrap();
        let md = parquet::file::reader::FileReader::metadata(&r).clone();
        let mut c: Vec<String> = md
            .row_groups()
            .iter()
            .flat_map(|g| g.columns().iter().map(|c| format!("{:?}", c.compression())))
            .collect();
        c.sort();
        c.dedup();
        c
    };
    for (flags, out) in [
        (&[][..], "default.arrow"),
        (&["--compression", "none"], "none.arrow"),
        (&["--compression", "lz4"], "lz4.arrow"),
        (&["--compression", "zstd:9"], "zstd9.arrow"),
        (&[][..], "default.parquet"),
        (&["--compression", "snappy"], "snappy.parquet"),
        (&["--compression", "none"], "none.parquet"),
        // Spilled and merged: the merge writes the codec too.
        (
            &["--compression", "snappy", "--memory-limit", "64KiB"],
            "ext.parquet",
        ),
    ] {
        let mut args = vec!["sort", "in.parquet", "--by", "s,i", "-o", out];
        args.extend_from_slice(flags);
        succeeded(&strata(&args, d));
        let (got_schema, batches) = read(&d.join(out));
        assert_eq!(got_schema, schema, "{out}");
        assert_eq!(fingerprint(&batches), want, "{out}");
    }
    // IPC: compressed unless asked not to.
    for compressed in ["default.arrow", "lz4.arrow", "zstd9.arrow"] {
        assert!(
            size(compressed) * 4 < size("none.arrow") * 3,
            "{compressed}: {} bytes against {} uncompressed",
            size(compressed),
            size("none.arrow")
        );
    }
    assert_eq!(codecs("default.parquet"), ["ZSTD(ZstdLevel(1))"]);
    assert_eq!(codecs("snappy.parquet"), ["SNAPPY"]);
    assert_eq!(codecs("ext.parquet"), ["SNAPPY"]);
    assert_eq!(codecs("none.parquet"), ["UNCOMPRESSED"]);
    let before = files(d);
    let o = strata(
        &[
            "sort",
            "in.parquet",
            "--by",
            "s",
            "-o",
            "x.arrow",
            "--compression",
            "snappy",
        ],
        d,
    );
    let before: Vec<&str> = before.iter().map(String::as_str).collect();
    let e = failed_cleanly(&o, d, "snappy is not available", &before);
    assert!(e.contains("x.arrow"), "{e}");
}

/// A `--memory-limit` below what the sort needs whatever its limit (the
/// process, the largest input row group decoded, the output's writer)
/// is warned about, naming that floor; the sort still runs, and uses more
/// than the limit, as the warning said. The default limit is not warned
/// about.
#[test]
fn a_memory_limit_below_the_floor_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schema();
    let input = table(26, 30_000, 3000);
    write_parquet(&d.join("in.parquet"), &schema, &input);
    let o = strata(
        &[
            "sort",
            "in.parquet",
            "--by",
            "s,i",
            "--memory-limit",
            "1MiB",
            "-o",
            "small.parquet",
        ],
        d,
    );
    succeeded(&o);
    let err = stderr(&o);
    assert!(
        err.contains("warning: --memory-limit 1.0 MiB is below the ")
            && err.contains("this sort needs whatever its limit"),
        "{err}"
    );
    // The floor it names is above the limit, in MiB.
    let floor: f64 = err
        .split("is below the ")
        .nth(1)
        .and_then(|r| r.split(" MiB").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no floor in MiB in: {err}"));
    assert!(floor > 1.0, "{err}");
    // The summary's peak is over the limit too: the warning was due.
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("peak resident memory"), "{text}");
    assert!(!text.contains("peak resident memory 1.0 MiB"), "{text}");
    let (_, batches) = read(&d.join("small.parquet"));
    assert_eq!(fingerprint(&batches), fingerprint(&input));
    // The default limit: no warning.
    let o = strata(
        &["sort", "in.parquet", "--by", "s,i", "-o", "big.parquet"],
        d,
    );
    succeeded(&o);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

/// An output directory that holds an input is refused, also when the input
/// is named by its bare file name in the current directory; and
/// `--overwrite` into a directory removes only part files the sort itself
/// names (`part-NNNNNNNN.parquet`), never other writers' `part-*` files.
#[test]
fn an_output_directory_keeps_inputs_and_other_writers_part_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = schema();
    let input = table(5, 3000, 1000);
    std::fs::create_dir(d.join("ds")).unwrap();
    write_parquet(&d.join("ds/part-00000003.parquet"), &schema, &input);
    let o = strata(
        &[
            "sort",
            "part-00000003.parquet",
            "--by",
            "i",
            "-o",
            ".",
            "--target-file-mb",
            "1",
            "--overwrite",
        ],
        &d.join("ds"),
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("holds an input"), "{}", stderr(&o));
    assert_eq!(files(&d.join("ds")), ["part-00000003.parquet"]);

    write_parquet(&d.join("in.parquet"), &schema, &input);
    std::fs::create_dir(d.join("out")).unwrap();
    let others = [
        "part-000002-00000000.parquet",
        "part-00000-6f1c2a.snappy.parquet",
    ];
    for name in others {
        std::fs::write(d.join("out").join(name), b"not ours").unwrap();
    }
    let o = strata(
        &[
            "sort",
            "in.parquet",
            "--by",
            "i",
            "-o",
            "out",
            "--target-file-mb",
            "1",
            "--overwrite",
        ],
        d,
    );
    succeeded(&o);
    let left = files(&d.join("out"));
    for name in others {
        assert!(
            left.iter().any(|n| n == name),
            "{name} was removed: {left:?}"
        );
    }
    assert!(
        left.iter().any(|n| n == "part-00000000.parquet"),
        "{left:?}"
    );
}
