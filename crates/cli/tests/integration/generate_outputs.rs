//! `strata generate`'s outputs: where they go, when they appear, and what
//! an interrupt or a failing last step leaves.

use std::{
    io::Read,
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use crate::common::{failed_cleanly, files, stderr, strata};

/// Every entry directly in `dir`, hidden ones included, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn malformed_output_urls_are_refused_and_nothing_is_written() {
    for (dir, why) in [
        ("s3://", "no bucket"),
        ("s3:///x", "no bucket"),
        ("s3:/bucket/x", "'s3:' must be followed by '//'"),
        ("s3:", "'s3:' must be followed by '//'"),
        ("gs://bucket/x", "scheme 'gs://' is not supported"),
    ] {
        let cwd = tempfile::tempdir().unwrap();
        let o = strata(
            &[
                "generate",
                "--target-records",
                "100",
                "--num-writers",
                "1",
                "--output-dir",
                dir,
            ],
            cwd.path(),
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{dir}: {e}");
        assert!(e.contains("--output-dir") && e.contains(why), "{dir}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert_eq!(entries(cwd.path()), Vec::<String>::new(), "{dir}");
    }
    // The same for a dataset of several tables, whose table directories
    // are joined to the output directory.
    let cwd = tempfile::tempdir().unwrap();
    let o = strata(
        &[
            "generate",
            "--preset",
            "orders",
            "--scale",
            "0.001",
            "--output-dir",
            "s3://",
        ],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(entries(cwd.path()), Vec::<String>::new());
    // A summary goes to a local file only.
    let o = strata(
        &[
            "generate",
            "--target-records",
            "100",
            "--summary-json",
            "s3://b/s.json",
        ],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("object-store URL"), "{}", stderr(&o));
    assert_eq!(entries(cwd.path()), Vec::<String>::new());
    // A local directory named like a URL, on purpose.
    let o = strata(
        &[
            "generate",
            "--target-records",
            "100",
            "--num-writers",
            "1",
            "-q",
            "--output-dir",
            "./s3:/x",
        ],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(files(cwd.path()), ["s3:/x/contacts_0.parquet"]);
}

/// A summary path that cannot be written: its temporary's name is too
/// long for the file system (so this holds for root too), or, for other
/// users, a read-only directory.
#[test]
fn an_unwritable_summary_leaves_no_data_files() {
    let cwd = tempfile::tempdir().unwrap();
    let long = format!("{}.json", "s".repeat(245));
    let mut bad = vec![long];
    // SAFETY: geteuid only reads the process's user id.
    if unsafe { libc::geteuid() } != 0 {
        let ro = cwd.path().join("ro");
        std::fs::create_dir(&ro).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        bad.push("ro/s.json".into());
    }
    for summary in &bad {
        for dir in ["new", "existing"] {
            if dir == "existing" {
                std::fs::create_dir_all(cwd.path().join(dir).join("other")).unwrap();
            }
            let before = files(cwd.path());
            let o = strata(
                &[
                    "generate",
                    "--target-records",
                    "2000",
                    "--num-writers",
                    "2",
                    "-q",
                    "--output-dir",
                    dir,
                    "--summary-json",
                    summary,
                ],
                cwd.path(),
            );
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{e}");
            assert!(e.contains(&summary[..20]), "{e}");
            assert_eq!(files(cwd.path()), before, "{summary} into {dir}: {e}");
            // Nothing to overwrite: a rerun with a good summary path works.
            let o = strata(
                &[
                    "generate",
                    "--target-records",
                    "2000",
                    "--num-writers",
                    "2",
                    "-q",
                    "--output-dir",
                    dir,
                    "--summary-json",
                    "s.json",
                ],
                cwd.path(),
            );
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let json = std::fs::read_to_string(cwd.path().join("s.json")).unwrap();
            assert!(
                json.contains(&format!("{dir}/contacts_1.parquet")),
                "{json}"
            );
            std::fs::remove_dir_all(cwd.path().join(dir)).unwrap();
            std::fs::remove_file(cwd.path().join("s.json")).unwrap();
        }
    }
}

/// Starts `strata generate` of many rows into `out` under `cwd` (with
/// `extra` flags), waits until it has begun writing (a hidden temporary
/// beside or in `out`), interrupts it and returns its exit code and
/// stderr.
fn interrupt_generate(cwd: &Path, out: &str, extra: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "generate",
            "--target-records",
            "50000000",
            "--num-writers",
            "3",
            "-q",
            "--threads",
            "2",
            "--output-dir",
            out,
        ])
        .args(extra)
        .current_dir(cwd)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let writing = |d: &Path| {
        std::fs::read_dir(d).is_ok_and(|mut e| {
            e.any(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".strata-tmp")
            })
        })
    };
    while !writing(cwd) && !writing(&cwd.join(out)) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "generate ended before the interrupt"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "generate never began"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut e = String::new();
    child.stderr.take().unwrap().read_to_string(&mut e).unwrap();
    (status.code(), e)
}

#[test]
fn an_interrupted_generate_says_so_and_removes_its_outputs() {
    // A new directory: nothing at all is left.
    let cwd = tempfile::tempdir().unwrap();
    let (code, e) = interrupt_generate(cwd.path(), "out", &[]);
    assert_eq!(code, Some(130), "{e}");
    assert_eq!(e, "strata: interrupted; unfinished outputs removed\n");
    assert_eq!(entries(cwd.path()), Vec::<String>::new());
    // A directory with other files: they stay, and nothing else.
    std::fs::create_dir(cwd.path().join("out")).unwrap();
    std::fs::write(cwd.path().join("out/keep.txt"), b"x").unwrap();
    let (code, e) = interrupt_generate(cwd.path(), "out", &[]);
    assert_eq!(code, Some(130), "{e}");
    assert_eq!(e, "strata: interrupted; unfinished outputs removed\n");
    assert_eq!(files(cwd.path()), ["out/keep.txt"]);
    // A laid-out run: no partition directory, spill or hidden tree stays.
    let (code, e) = interrupt_generate(
        cwd.path(),
        "out",
        &[
            "--partition-by",
            "bucket(8, name)",
            "--sort-by",
            "name",
            "--memory-limit",
            "64MiB",
        ],
    );
    assert_eq!(code, Some(130), "{e}");
    assert_eq!(e, "strata: interrupted; unfinished outputs removed\n");
    assert_eq!(files(cwd.path()), ["out/keep.txt"]);
    assert_eq!(entries(&cwd.path().join("out")), ["keep.txt"]);
}

#[test]
fn files_are_written_hidden_and_never_match_a_glob() {
    // The run's temporaries, seen through a failing last step: the output
    // directory is new, so the files were written in a hidden directory
    // beside it, which is gone with them.
    let cwd = tempfile::tempdir().unwrap();
    let long = format!("{}.json", "s".repeat(245));
    let o = strata(
        &[
            "generate",
            "--target-records",
            "1000",
            "-q",
            "--output-dir",
            "d",
            "--summary-json",
            &long,
        ],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(entries(cwd.path()), Vec::<String>::new());
    // Into an empty directory the files arrive together, in it.
    std::fs::create_dir(cwd.path().join("d")).unwrap();
    let o = strata(
        &[
            "generate",
            "--target-records",
            "1000",
            "-q",
            "--output-dir",
            "d",
        ],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        files(cwd.path()),
        [
            "d/contacts_0.parquet",
            "d/contacts_1.parquet",
            "d/contacts_2.parquet",
            "d/contacts_3.parquet"
        ]
    );
}

/// An S3 endpoint that accepts connections and never answers: the run
/// says what it waits for, and fails after `--s3-timeout`, naming the
/// endpoint; nothing is left locally.
#[test]
fn a_silent_s3_server_is_reported_and_times_out() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let cwd = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "generate",
            "--target-records",
            "1000",
            "-q",
            "--output-dir",
            "s3://bucket/x",
            "--endpoint",
            &endpoint,
            "--s3-timeout",
            "6",
        ])
        .env("AWS_ACCESS_KEY_ID", "k")
        .env("AWS_SECRET_ACCESS_KEY", "s")
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_TIMEOUT")
        .env_remove("AWS_CONNECT_TIMEOUT")
        .current_dir(cwd.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A generous bound that only proves it does not hang.
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!("generate still waits on a silent S3 server");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut e = String::new();
    child.stderr.take().unwrap().read_to_string(&mut e).unwrap();
    assert_eq!(status.code(), Some(2), "{e}");
    assert!(
        e.contains("strata: waiting for the listing of s3://bucket/x/: no answer for 5 s"),
        "{e}"
    );
    let last = e.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("strata: error: ") && last.contains(&endpoint),
        "{e}"
    );
    assert_eq!(entries(cwd.path()), Vec::<String>::new());
}

/// `sort -o` and `scan -o` write local files only: an S3 URL, or one
/// missing its `//`, is refused even where a local directory `s3:`
/// exists (which the URL would otherwise have named).
#[test]
fn sort_and_scan_outputs_refuse_urls() {
    let cwd = tempfile::tempdir().unwrap();
    let o = strata(
        &[
            "generate",
            "--target-records",
            "500",
            "--num-writers",
            "1",
            "-q",
            "--output-dir",
            "in",
        ],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::create_dir_all(cwd.path().join("s3:/b")).unwrap();
    let input = "in/contacts_0.parquet";
    for out in ["s3://b/x.parquet", "s3:/b/x.parquet"] {
        for args in [
            &["sort", input, "--by", "name", "-q", "-o", out][..],
            &["scan", input, "--columns", "name", "-o", out],
        ] {
            let o = strata(args, cwd.path());
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(e.contains(out), "{e}");
        }
    }
    assert_eq!(files(cwd.path()), ["in/contacts_0.parquet"]);
}

#[test]
fn bad_layouts_fail_on_one_line_and_write_nothing() {
    let cwd = tempfile::tempdir().unwrap();
    let base = [
        "generate",
        "--preset",
        "lineitem",
        "--target-records",
        "5000",
        "-q",
    ];
    for (flags, needle) in [
        (
            vec!["--partition-by", "month(l_comment)"],
            "layout.partition_by: partition field `month(l_comment)`: month does not take a column of type Utf8",
        ),
        (
            vec!["--partition-by", "bucket(0, l_orderkey)"],
            "bucket needs a bucket count of at least 1",
        ),
        (vec!["--sort-by", "l_nope"], "l_nope"),
        (
            vec!["--target-file-size", "1MiB", "--row-group-size", "64MiB"],
            "below the row group size",
        ),
        (
            vec!["--partition-by", "l_orderkey", "--max-partitions", "100"],
            "more than --max-partitions (100)",
        ),
        (
            vec!["--partition-by", "l_returnflag", "--format", "ipc"],
            "written as Parquet",
        ),
        (vec!["--target-file-size", "lots"], "bad size 'lots'"),
        (
            vec!["--partition-by", "month(l_shipdate)", "--format", "delta"],
            "partition field `month(l_shipdate)`: Delta Lake partitions by column values",
        ),
        (
            vec!["--format", "delta", "--snapshots", "0"],
            "--snapshots must be at least 1",
        ),
    ] {
        let mut args: Vec<&str> = base.to_vec();
        args.extend(["--output-dir", "out"]);
        args.extend(flags.iter().copied());
        let o = strata(&args, cwd.path());
        let e = failed_cleanly(&o, cwd.path(), needle, &[]);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
    // The same run, well formed, writes its partitions; the dry run only
    // prints its plan.
    let o = strata(
        &[
            &base[..],
            &[
                "--output-dir",
                "out",
                "--partition-by",
                "l_returnflag",
                "--dry-run",
            ],
        ]
        .concat(),
        cwd.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["layout"]["partitions"], 3);
    assert!(files(cwd.path()).is_empty());
    let o = strata(
        &[
            &base[..],
            &["--output-dir", "out", "--partition-by", "l_returnflag"],
        ]
        .concat(),
        cwd.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        files(cwd.path()),
        [
            "out/l_returnflag=A/lineitem_0.parquet",
            "out/l_returnflag=N/lineitem_0.parquet",
            "out/l_returnflag=R/lineitem_0.parquet"
        ]
    );
}
