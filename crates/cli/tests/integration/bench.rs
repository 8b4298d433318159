//! `strata bench`: a run saves a baseline, a second run compares with it,
//! saved runs become trend charts, and bad flags fail with a message.

// Only some of the shared helpers are used here.
#[allow(dead_code)]
use crate::common::{stderr, strata};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const QUICK: [&str; 10] = [
    "--size",
    "tiny",
    "--runs",
    "2",
    "--warmup",
    "0",
    "--counters",
    "off",
    "--filter",
    "10 mixed",
];

#[test]
fn baselines_verdicts_and_trend_charts() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "bench",
        "row",
        "--out-dir",
        "out",
        "--save-baseline",
        "before",
    ];
    args.extend(QUICK);
    let o = strata(&args, dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("| `encode/10 mixed` | strata |"), "{out}");
    assert!(out.contains("| `encode/10 mixed` | arrow-row |"), "{out}");
    assert!(dir.path().join("out/baselines/before/row.json").exists());

    let mut args = vec![
        "bench",
        "row",
        "--out-dir",
        "out",
        "--baseline",
        "before",
        "--json",
        "run.json",
        "--markdown",
        "run.md",
    ];
    args.extend(QUICK);
    let o = strata(&args, dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("vs baseline") && out.contains("(p="), "{out}");
    assert!(out.contains("Baseline: before ("), "{out}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(json["suite"], "row");
    assert!(json["cases"][0]["baseline"]["verdict"].is_string());
    assert!(
        std::fs::read_to_string(dir.path().join("run.md"))
            .unwrap()
            .contains("vs baseline")
    );

    // A baseline of another size is refused before anything is measured.
    let o = strata(
        &[
            "bench",
            "row",
            "--out-dir",
            "out",
            "--baseline",
            "before",
            "--size",
            "full",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("at size Tiny, not row at size Full"),
        "{}",
        stderr(&o)
    );

    // A corrupt (truncated) baseline is an error naming the file, before
    // anything is measured.
    let saved = dir.path().join("out/baselines/before/row.json");
    let text = std::fs::read_to_string(&saved).unwrap();
    std::fs::create_dir_all(dir.path().join("out/baselines/cut")).unwrap();
    std::fs::write(
        dir.path().join("out/baselines/cut/row.json"),
        &text[..text.len() / 2],
    )
    .unwrap();
    let mut args = vec!["bench", "row", "--out-dir", "out", "--baseline", "cut"];
    args.extend(QUICK);
    let o = strata(&args, dir.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("cut/row.json is not a saved benchmark run"),
        "{err}"
    );
    assert!(!err.contains("measuring"), "{err}");

    // A third run, then charts of the three saved runs.
    let mut args = vec!["bench", "row", "--out-dir", "out"];
    args.extend(QUICK);
    assert!(strata(&args, dir.path()).status.success());
    let runs = std::fs::read_dir(dir.path().join("out/runs"))
        .unwrap()
        .count();
    assert!(runs >= 2, "{runs} saved runs");
    // A stray JSON file among the runs is skipped with a note.
    std::fs::write(dir.path().join("out/runs/notes.json"), "[1, 2]").unwrap();
    let o = strata(&["bench", "report", "out/runs", "-o", "charts"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("skipping") && stderr(&o).contains("notes.json"));
    let svg = dir.path().join("charts/row-throughput.svg");
    assert!(stdout(&o).contains("row-throughput.svg"));
    let text = std::fs::read_to_string(svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("encode/10 mixed (strata)"));
}

/// `--reference` runs the given program with the suite's row count and
/// reports it beside strata; a program that fails stops the run with its
/// message. A shell script stands in for the reference program here.
#[cfg(unix)]
#[test]
fn the_reference_program_runs_beside_strata() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    };
    // Writes its arguments where --output-dir says.
    let good = script(
        "good.sh",
        "while [ $# -gt 0 ]; do [ \"$1\" = --output-dir ] && out=$2; shift; done\n\
         mkdir -p \"$out\" && echo ok > \"$out/contacts_0.parquet\"",
    );
    let bad = script(
        "bad.sh",
        "echo 'no such option: --target-records' >&2; exit 3",
    );
    let args = |program: &str| -> Vec<String> {
        let mut args = vec!["bench", "pipeline"];
        // QUICK's settings, with this suite's filter.
        args.extend(&QUICK[..8]);
        args.extend(["--filter", "contacts 20000 rows/parquet none@p"]);
        args.extend(["--out-dir", "out", "--reference", program]);
        args.into_iter().map(String::from).collect()
    };
    let good_args = args(&good);
    let o = strata(
        &good_args.iter().map(String::as_str).collect::<Vec<_>>(),
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("| `generate contacts 20000 rows/parquet none` | parquet-nested-parallel |"),
        "{out}"
    );
    let bad_args = args(&bad);
    let o = strata(
        &bad_args.iter().map(String::as_str).collect::<Vec<_>>(),
        dir.path(),
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("failed") && err.contains("no such option"),
        "{err}"
    );
}

#[test]
fn bad_flags_and_missing_baselines_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["bench", "nope"],
            "unknown suite `nope`; the suites are pipeline, row",
        ),
        (&["bench"], "name a suite"),
        (
            &["bench", "row", "--counters", "perf"],
            "unknown --counters `perf`",
        ),
        (&["bench", "row", "--size", "huge"], "unknown size `huge`"),
        (
            &["bench", "row", "--baseline", "never"],
            "no baseline `never`",
        ),
        (&["bench", "report", "empty"], "cannot list"),
    ];
    for (args, want) in cases {
        let o = strata(args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // The case runner used by cachegrind re-runs: silent, and checked.
    let o = strata(
        &[
            "bench",
            "row",
            "--size",
            "tiny",
            "--inner",
            "encode/10 mixed@strata",
            "--inner-iterations",
            "2",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let o = strata(
        &["bench", "row", "--size", "tiny", "--inner", "nope@strata"],
        dir.path(),
    );
    assert!(stderr(&o).contains("suite row has no case `nope@strata`"));
}

/// `--counters cachegrind` end to end (when valgrind is installed): the
/// case is re-run by the binary itself, and the counts are of one
/// repetition of the work, not of the repeats a timed iteration makes.
#[test]
fn cachegrind_counts_one_repetition() {
    let have_valgrind = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_valgrind {
        eprintln!("skipped: valgrind is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let case = "read 1024/1024/REQUIRED/none@parquet-rs column";
    let o = strata(
        &[
            "bench",
            "parquet-column",
            "--size",
            "tiny",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--counters",
            "cachegrind",
            "--filter",
            case,
            "--json",
            "run.json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("run.json")).unwrap()).unwrap();
    let c = &json["cases"][0];
    assert!(c["repeats"].is_null(), "repeats are not part of the result");
    let n = c["cachegrind"]["Ok"]["instructions"].as_u64().unwrap();
    // One read of 1024 values is tens of thousands of instructions; the
    // timed iterations repeat it thousands of times.
    assert!((1_000..5_000_000).contains(&n), "{n} instructions");
}
