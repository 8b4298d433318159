//! Every suite at its tiny size: each strata case and each in-process
//! peer measures and validates its work, the Python peers run when
//! `STRATA_BENCH_PYTHON` names a Python with pyarrow, DuckDB and
//! tpchgen-cli (as `scripts/test` sets it), and a run survives JSON and
//! compares with itself.

use strata_bench::{Config, CounterMode, Size, Suite, Verdict, report};

fn config() -> Config {
    Config {
        runs: 2,
        warmup: 0,
        size: Size::Tiny,
        counters: CounterMode::Auto,
        python: std::env::var_os("STRATA_BENCH_PYTHON").map(Into::into),
        ..Config::default()
    }
}

#[test]
fn every_suite_runs_at_tiny_size() {
    let cfg = config();
    let with_python = cfg.python.is_some();
    for suite in Suite::ALL {
        let run =
            strata_bench::run(suite, &cfg).unwrap_or_else(|e| panic!("{}: {e}", suite.name()));
        assert!(!run.cases.is_empty(), "{}", suite.name());
        for c in &run.cases {
            let python_peer = matches!(
                c.subject.as_str(),
                "pyarrow"
                    | "pyarrow (Arrow C++)"
                    | "duckdb"
                    | "tpchgen-cli"
                    | "tpchgen-cli + duckdb"
                    | "tpchgen-cli + pyiceberg"
            ) || c.subject.starts_with("deltalake ");
            if python_peer && !with_python {
                continue;
            }
            assert!(
                c.unavailable.is_none(),
                "{} {}@{}: {:?}",
                suite.name(),
                c.name,
                c.subject,
                c.unavailable
            );
            assert_eq!(c.samples.len(), 2, "{}@{}", c.name, c.subject);
            let w = c.wall.unwrap();
            assert!(w.min > 0.0 && w.min <= w.median && w.median <= w.max);
            assert!(c.throughput.unwrap() > 0.0);
            // Counters are reported, as values or as reasons.
            if !python_peer {
                assert!(c.counters.contains_key("instructions") && c.counters.contains_key("ipc"));
            }
        }
        // Every case with a peer has its strata (or parquet-rs) subject.
        let md = report::markdown(&run);
        assert!(md.contains(&format!("`strata bench {}`", suite.name())));

        // JSON round trip, then a comparison with itself: nothing moved.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        strata_bench::save(&run, &path).unwrap();
        let back = strata_bench::load(&path).unwrap();
        assert_eq!(back, run);
        let mut again = back.clone();
        strata_bench::compare_with(&mut again, &run, "self", Default::default());
        for c in again.cases.iter().filter(|c| !c.samples.is_empty()) {
            let v = c.baseline.unwrap().verdict;
            assert!(matches!(v, Verdict::WithinNoise), "{}: {v:?}", c.name);
        }
    }
}

#[test]
fn parquet_column_matrix_is_complete() {
    let cfg = Config {
        runs: 1,
        counters: CounterMode::Off,
        filter: Some("parquet-rs".into()),
        ..config()
    };
    let run = strata_bench::run(Suite::ParquetColumn, &cfg).unwrap();
    // 12 writes and 3 shapes x 12 reads, at two levels.
    let writes = run
        .cases
        .iter()
        .filter(|c| c.name.starts_with("write"))
        .count();
    let reads = run
        .cases
        .iter()
        .filter(|c| c.name.starts_with("read"))
        .count();
    assert_eq!((writes, reads), (24, 72));
    for rep in ["REQUIRED", "OPTIONAL", "REPEATED"] {
        for codec in ["none", "snappy", "lz4_raw", "zstd(1)"] {
            let name = format!("write 16384/{rep}/{codec}");
            let c = run.cases.iter().find(|c| c.name == name).unwrap();
            let per_value = match rep {
                "REQUIRED" => 8.0,
                "OPTIONAL" => 10.0,
                _ => 12.0,
            };
            assert_eq!(c.work, 16384.0 * per_value, "{name}");
        }
    }
}

#[test]
fn unknown_filters_select_nothing_and_bad_pythons_are_reasons() {
    let cfg = Config {
        filter: Some("no such case".into()),
        ..config()
    };
    assert!(
        strata_bench::run(Suite::Row, &cfg)
            .unwrap()
            .cases
            .is_empty()
    );
    let cfg = Config {
        python: Some("/nonexistent/python".into()),
        filter: Some("pyarrow".into()),
        runs: 1,
        ..config()
    };
    let run = strata_bench::run(Suite::Scan, &cfg).unwrap();
    assert!(!run.cases.is_empty());
    for c in &run.cases {
        let why = c.unavailable.as_deref().unwrap();
        assert!(why.contains("/nonexistent/python"), "{why}");
    }
}

/// The cachegrind plumbing: valgrind runs the relaunch command twice (one
/// iteration, two) and the difference is reported. With `/bin/true`
/// both runs are the same program, so the difference is near zero; without
/// valgrind the case says why.
#[test]
fn cachegrind_mode_runs_valgrind_or_says_why() {
    let cfg = Config {
        runs: 1,
        counters: CounterMode::Cachegrind,
        filter: Some("encode/10 mixed@strata".into()),
        relaunch: Some(("/bin/true".into(), vec![])),
        ..config()
    };
    let run = strata_bench::run(Suite::Row, &cfg).unwrap();
    assert_eq!(run.cases.len(), 1);
    let have_valgrind = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    match run.cases[0].cachegrind.as_ref().unwrap() {
        Ok(c) => {
            assert!(have_valgrind);
            assert!(c.instructions < 10_000, "{c:?}");
        }
        Err(why) => {
            assert!(!have_valgrind, "{why}");
            assert!(why.contains("valgrind"), "{why}");
        }
    }
    let md = report::markdown(&run);
    assert!(md.contains("Cachegrind, one warm iteration"), "{md}");
}
