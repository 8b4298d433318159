//! The binary on corrupt copies of its own output: `sort`, `scan` and
//! `compact init` fail with a message (exit status 2) or succeed, never
//! crash (101) or print `panicked at`, and a failed sort leaves no output.

// Each test binary uses some of the shared helpers.
#[allow(dead_code)]
use crate::common::{files, stderr, strata};
use strata_gen::rng::RowRng;
use strata_testkit::mutate::mutate;

#[test]
fn corrupt_files_are_errors_never_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (format, compression) in [("parquet", "zstd"), ("ipc", "lz4")] {
        let o = strata(
            &[
                "generate",
                "--preset",
                "events",
                "--target-records",
                "3000",
                "--num-writers",
                "1",
                "--format",
                format,
                "--compression",
                compression,
                "--output-dir",
                "in",
                "--overwrite",
                "-q",
            ],
            d,
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let mut rng = RowRng::seeded(2033);
    let mut errors = 0;
    for (name, ext) in [("events_0.parquet", "parquet"), ("events_0.arrow", "arrow")] {
        let valid = std::fs::read(d.join("in").join(name)).unwrap();
        for m in 0..30 {
            let case = d.join(format!("c{m}"));
            std::fs::create_dir(&case).unwrap();
            let input = format!("bad.{ext}");
            std::fs::write(case.join(&input), mutate(&mut rng, &valid, 4096)).unwrap();
            let mut runs = vec![
                strata(
                    &["sort", &input, "--by", "user_id", "-o", "out.parquet"],
                    &case,
                ),
                strata(&["scan", &input, "--columns", "event_id,tags,items"], &case),
            ];
            if ext == "parquet" {
                runs.push(strata(&["compact", "init", ".", "--key", "user_id"], &case));
            }
            for o in &runs {
                let e = stderr(o);
                assert!(!e.contains("panicked at"), "mutation {m} of {name}: {e}");
                assert!(
                    matches!(o.status.code(), Some(0 | 2)),
                    "{:?}: {e}",
                    o.status
                );
                errors += usize::from(o.status.code() == Some(2));
            }
            if runs[0].status.code() == Some(2) {
                assert!(!files(&case).contains(&"out.parquet".to_string()));
            }
            std::fs::remove_dir_all(&case).unwrap();
        }
    }
    assert!(errors > 60, "only {errors} runs failed");
}
