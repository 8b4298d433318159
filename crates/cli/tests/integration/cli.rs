//! The `strata` binary as a user runs it: exit codes, messages, files left.

use std::process::Command;

use crate::common::{failed_cleanly, files, stderr, strata};

#[test]
fn generate_writes_files_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(
        &[
            "generate",
            "--target-records",
            "20000",
            "--num-writers",
            "2",
            "--summary-json",
            "summary.json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("wrote 20000 records to 2 file(s)"), "{out}");
    assert!(out.contains("records/s per core"), "{out}");
    assert_eq!(
        files(dir.path()),
        vec![
            "output_parquet/contacts_0.parquet",
            "output_parquet/contacts_1.parquet",
            "summary.json"
        ]
    );
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["records"], 20000);
    assert_eq!(s["files"].as_array().unwrap().len(), 2);
    for key in [
        "bytes",
        "elapsed_s",
        "records_per_s",
        "records_per_s_per_core",
        "mb_per_s",
        "cpu_s",
    ] {
        assert!(s[key].as_f64().is_some(), "{key} missing: {s}");
    }
    let bytes: u64 = ["contacts_0", "contacts_1"]
        .iter()
        .map(|f| {
            std::fs::metadata(dir.path().join(format!("output_parquet/{f}.parquet")))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(s["bytes"], bytes);
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(
        &[
            "generate",
            "--dry-run",
            "--num-writers",
            "3",
            "--format",
            "ipc",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["target_records"], 10_000_000);
    assert_eq!(v["config"]["num_writers"], 3);
    assert_eq!(v["config"]["format"], "ipc");
    assert_eq!(v["files"][2]["path"], "output_ipc/contacts_2.arrow");
    assert_eq!(v["files"][2]["first_row"], 6_666_666);
    assert!(files(dir.path()).is_empty());
}

#[test]
fn bad_flags_fail_with_a_message_and_no_files() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["--target-records", "0"], "--target-records"),
        (vec!["--num-writers", "0"], "--num-writers"),
        (vec!["--record-batch-size", "0"], "--record-batch-size"),
        (vec!["--compression", "brotli"], "brotli"),
        (vec!["--compression", "zstd:99"], "zstd level"),
        (vec!["--format", "csv"], "csv"),
        (vec!["--target-records", "many"], "many"),
        (vec!["--threads", "0"], "--threads"),
        (vec!["--preset", "nope"], "nope"),
        (vec!["--format", "ipc", "--compression", "snappy"], "snappy"),
        (vec!["--summary-json", "no/such/dir/s.json"], "no/such/dir"),
        (vec!["--parts", "3", "--part", "4"], "--part"),
        (vec!["--parts", "3", "--part", "0"], "--part"),
        (vec!["--part", "2"], "--parts"),
    ] {
        let mut full = vec!["generate"];
        if !args.contains(&"--target-records") {
            full.extend(["--target-records", "1000"]);
        }
        full.extend(args.iter().copied());
        let o = strata(&full, dir.path());
        let e = failed_cleanly(&o, dir.path(), needle, &[]);
        // One message line (clap adds a usage hint below its own).
        assert_eq!(
            e.lines().filter(|l| l.contains("error")).count(),
            1,
            "{args:?}: {e}"
        );
    }
}

#[test]
fn existing_output_is_refused_without_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "generate",
        "--target-records",
        "5000",
        "--num-writers",
        "1",
        "-q",
    ];
    assert!(strata(&args, dir.path()).status.success());
    let path = dir.path().join("output_parquet/contacts_0.parquet");
    let before = std::fs::read(&path).unwrap();
    let o = strata(&[&args[..], &["--seed", "9"]].concat(), dir.path());
    failed_cleanly(
        &o,
        dir.path(),
        "already exists",
        &["output_parquet/contacts_0.parquet"],
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let o = strata(
        &[&args[..], &["--seed", "9", "--overwrite"]].concat(),
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(std::fs::read(&path).unwrap(), before);
    assert_eq!(files(dir.path()), vec!["output_parquet/contacts_0.parquet"]);
}

#[test]
fn unwritable_output_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), b"x").unwrap();
    let o = strata(
        &[
            "generate",
            "--target-records",
            "1000",
            "--output-dir",
            "file/out",
        ],
        dir.path(),
    );
    let e = failed_cleanly(&o, dir.path(), "file/out", &["file"]);
    assert!(e.contains("cannot"), "{e}");
}

/// A write error part-way through (the file-size limit stands in for a
/// full disk): a clear error, and neither finished-looking files nor
/// temporaries are left.
#[test]
#[cfg(unix)]
fn write_failure_mid_run_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "ulimit -f 2048; trap '' XFSZ; exec '{}' generate --target-records 2000000 --num-writers 2",
        env!("CARGO_BIN_EXE_strata")
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir.path())
        .output()
        .unwrap();
    failed_cleanly(&o, dir.path(), "File too large", &[]);
}

#[test]
fn help_states_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(&["generate", "--help"], dir.path());
    let h = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "fastest",
        "10000000",
        "--num-writers",
        "--compression",
        "--summary-json",
        "--dry-run",
    ] {
        assert!(h.contains(needle), "help lacks {needle}");
    }
}

/// The acceptance pairs, through the binary: the row multiset is the same
/// for 1 vs 3 writers and 1000- vs 4096-row batches, and differs for
/// another seed; files are byte-identical for 1 vs 2 threads.
#[test]
fn row_multiset_is_independent_of_writers_and_batches() {
    use strata_testkit::readback::{multiset_hash, read_batches, rows_as_text};
    let dir = tempfile::tempdir().unwrap();
    let hash = |name: &str, extra: &[&str]| {
        let mut args = vec![
            "generate",
            "-q",
            "--target-records",
            "50000",
            "--output-dir",
            name,
        ];
        args.extend_from_slice(extra);
        let o = strata(&args, dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let mut batches = Vec::new();
        let mut paths: Vec<_> = std::fs::read_dir(dir.path().join(name))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for p in &paths {
            batches.extend(read_batches(p).unwrap());
        }
        multiset_hash(&mut rows_as_text(&batches).unwrap())
    };
    let a = hash("a", &["--num-writers", "1", "--record-batch-size", "1000"]);
    let b = hash("b", &["--num-writers", "3", "--record-batch-size", "4096"]);
    let c = hash(
        "c",
        &[
            "--num-writers",
            "3",
            "--record-batch-size",
            "4096",
            "--seed",
            "7",
        ],
    );
    assert_eq!(a, b);
    assert_ne!(a, c);
    hash(
        "t1",
        &[
            "--num-writers",
            "2",
            "--threads",
            "1",
            "--row-group-rows",
            "5000",
        ],
    );
    hash(
        "t2",
        &[
            "--num-writers",
            "2",
            "--threads",
            "2",
            "--row-group-rows",
            "5000",
        ],
    );
    for f in ["contacts_0.parquet", "contacts_1.parquet"] {
        let one = std::fs::read(dir.path().join("t1").join(f)).unwrap();
        let two = std::fs::read(dir.path().join("t2").join(f)).unwrap();
        assert!(one == two, "{f} differs between 1 and 2 threads");
    }
}

/// A real full disk: a 2 MiB tmpfs. Needs permission to mount (root on
/// Linux, as in CI); says so and skips otherwise.
#[test]
#[cfg(target_os = "linux")]
fn full_disk_fails_cleanly() {
    struct Mount(std::path::PathBuf);
    impl Drop for Mount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(dir.path())
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !mounted {
        eprintln!("skipping full_disk_fails_cleanly: cannot mount a small tmpfs here");
        return;
    }
    let _mount = Mount(dir.path().to_path_buf());
    let o = strata(
        &[
            "generate",
            "--target-records",
            "1000000",
            "--output-dir",
            "out",
        ],
        dir.path(),
    );
    failed_cleanly(&o, dir.path(), "No space left on device", &[]);
}

#[test]
fn a_part_writes_its_slice_under_its_own_names() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(
        &[
            "generate",
            "-q",
            "--target-records",
            "3000",
            "--num-writers",
            "2",
            "--parts",
            "3",
            "--part",
            "2",
            "--output-dir",
            "out",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        files(&dir.path().join("out")),
        vec!["contacts_part2of3_0.parquet", "contacts_part2of3_1.parquet"]
    );
}
