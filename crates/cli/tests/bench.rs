//! `strata bench`: a run saves a baseline, a second run compares with it,
//! saved runs become trend charts, and bad flags fail with a message.

// Only some of the shared helpers are used here.
#[allow(dead_code)]
mod common;

use common::{stderr, strata};

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

    // A third run, then charts of the three saved runs.
    let mut args = vec!["bench", "row", "--out-dir", "out"];
    args.extend(QUICK);
    assert!(strata(&args, dir.path()).status.success());
    let runs = std::fs::read_dir(dir.path().join("out/runs"))
        .unwrap()
        .count();
    assert!(runs >= 2, "{runs} saved runs");
    let o = strata(&["bench", "report", "out/runs", "-o", "charts"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = dir.path().join("charts/row-throughput.svg");
    assert!(stdout(&o).contains("row-throughput.svg"));
    let text = std::fs::read_to_string(svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("encode/10 mixed (strata)"));
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
