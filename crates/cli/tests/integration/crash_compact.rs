//! `strata compact run` killed (SIGKILL) or interrupted (SIGINT) at
//! random moments: the manifest's files then hold every row once, a
//! `*.parquet` glob of the dataset holds the old files or the new ones
//! (or, after a SIGKILL inside the switch, a few renames long, some of
//! both), and a rerun finishes the compaction with the data an
//! uninterrupted run makes.

use std::{
    fs::File,
    path::Path,
    process::{Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::{
    arrow::ArrowWriter,
    file::{
        properties::WriterProperties,
        reader::{FileReader, SerializedFileReader},
    },
};
use strata_gen::rng::RowRng;
use strata_testkit::readback::{read_batches, rows_as_text, sequence_hash};

const FILES: usize = 4;
const ROWS: usize = 20_000;
const MANIFEST: &str = "_strata_manifest.json";

/// `FILES` sorted files of `ROWS` rows each, every one overlapping the
/// others' key ranges, and their manifest.
fn dataset(dir: &Path) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Utf8, false),
    ]));
    let mut rng = RowRng::seeded(42);
    for f in 0..FILES {
        let mut keys: Vec<i64> = (0..ROWS)
            .map(|_| rng.next_below(1_000_000) as i64)
            .collect();
        keys.sort_unstable();
        // Values that do not compress, so the outputs roll at 1 MiB.
        let values: Vec<String> = (0..ROWS)
            .map(|i| format!("{f}-{i}-{:016x}", rng.next_u64()))
            .collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(keys)) as ArrayRef,
                Arc::new(StringArray::from(values)) as ArrayRef,
            ],
        )
        .unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(5_000))
            .build();
        let out = File::create(dir.join(format!("in-{f}.parquet"))).unwrap();
        let mut w = ArrowWriter::try_new(out, schema.clone(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
    let o = strata(&["compact", "init", ".", "--key", "k"], dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn strata(args: &[&str], cwd: &Path) -> std::process::Output {
    crate::common::strata(args, cwd)
}

/// The compaction every run does: all files (the budget holds them), into
/// outputs of 1 MiB.
const RUN: [&str; 7] = [
    "compact",
    "run",
    ".",
    "--budget-mb",
    "1000",
    "--target-file-mb",
    "1",
];

/// The visible `*.parquet` files of `dir`, sorted.
fn globbed(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".parquet") && !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Rows in the footers of the globbed files.
fn glob_rows(dir: &Path) -> u64 {
    rows_of(dir, &globbed(dir))
}

/// Rows in the footers of files `names` of `dir`.
fn rows_of(dir: &Path, names: &[String]) -> u64 {
    names
        .iter()
        .map(|n| {
            let r = SerializedFileReader::new(File::open(dir.join(n)).unwrap())
                .unwrap_or_else(|e| panic!("{n} is not a whole Parquet file: {e}"));
            r.metadata().file_metadata().num_rows() as u64
        })
        .sum()
}

/// The manifest's files, in its order.
fn listed(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(MANIFEST)).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The rows of the listed files, in the manifest's order.
fn data(dir: &Path) -> u64 {
    let mut rows = Vec::new();
    for name in listed(dir) {
        rows.extend(rows_as_text(&read_batches(&dir.join(name)).unwrap()).unwrap());
    }
    sequence_hash(&rows)
}

fn copy(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn killed_or_interrupted_compactions_leave_a_whole_glob_and_rerun() {
    let template = tempfile::tempdir().unwrap();
    dataset(template.path());
    let old = globbed(template.path());
    assert_eq!(sorted(listed(template.path())), old);
    let total = (FILES * ROWS) as u64;

    // The uninterrupted run, for its data and its duration.
    let reference = tempfile::tempdir().unwrap();
    copy(template.path(), reference.path());
    let started = Instant::now();
    let o = strata(&RUN, reference.path());
    let took = started.elapsed();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let new = globbed(reference.path());
    assert_eq!(sorted(listed(reference.path())), new);
    assert!(new.len() > 1, "{new:?}");
    let want = data(reference.path());
    assert_eq!(glob_rows(reference.path()), total);

    let mut rng = RowRng::seeded(7);
    let (mut before, mut after, mut switching) = (0, 0, 0);
    for round in 0..24 {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        copy(template.path(), p);
        // Delays over the run's length and a little past it.
        let span = (took.as_micros() as u64 * 5 / 4).max(1);
        let delay = Duration::from_micros(rng.next_below(span));
        let interrupt = round % 2 == 1;
        let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(RUN)
            .current_dir(p)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        if interrupt {
            let _ = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
        } else {
            let _ = child.kill();
        }
        let out = child.wait_with_output().unwrap();
        let what = format!(
            "round {round} ({}, {delay:?}): {:?} {}",
            if interrupt { "SIGINT" } else { "SIGKILL" },
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // The manifest's files: every row once. The glob: the old files or
        // the new ones, whole, and the manifest's; only a kill inside the
        // switch shows some of both.
        let seen = globbed(p);
        let manifest = sorted(listed(p));
        assert_eq!(rows_of(p, &manifest), total, "{what}: {manifest:?}");
        if seen != manifest {
            assert!(
                !interrupt,
                "{what}: {seen:?} but the manifest lists {manifest:?}"
            );
            assert!(
                seen.iter()
                    .all(|n| old.contains(n) || n.starts_with("part-")),
                "{what}: {seen:?}"
            );
            assert!(seen.iter().any(|n| old.contains(n)), "{what}: {seen:?}");
            assert!(
                seen.iter().any(|n| n.starts_with("part-")),
                "{what}: {seen:?}"
            );
            switching += 1;
        } else if seen == old {
            before += 1;
        } else {
            after += 1;
        }
        // A rerun ends with the data of the uninterrupted run, and
        // nothing else in the directory.
        let o = strata(&RUN, p);
        assert!(
            o.status.success(),
            "{what}: rerun: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(globbed(p), sorted(listed(p)), "{what}");
        assert_eq!(data(p), want, "{what}");
        let mut all: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        all.retain(|n| n != MANIFEST);
        assert_eq!(sorted(all), globbed(p), "{what}: leftovers");
    }
    eprintln!(
        "crash sweep: {before} rounds left the old files, {after} the new ones, \
         {switching} were killed inside the switch (a run takes {took:?})"
    );
}
