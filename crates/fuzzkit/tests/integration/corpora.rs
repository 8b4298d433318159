//! Replays the fuzz targets' committed inputs (`fuzz/corpus/TARGET/` and
//! the fixed findings in `fuzz/regressions/TARGET/`) through the same
//! functions the targets call, on stable Rust: none may break a promise,
//! and no input may reach a decoder panic (the checks in
//! `strata_parquet::validate` must stop it first).

use std::path::{Path, PathBuf};

use strata_fuzzkit::{Fixture, Fixtures, Harness};
use strata_parquet::Format;

/// Every input of `target`: its corpus and its regressions.
fn inputs(target: &str) -> Vec<PathBuf> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut out = Vec::new();
    for dir in ["corpus", "regressions"] {
        if let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target)) {
            out.extend(entries.map(|e| e.unwrap().path()));
        }
    }
    out.sort();
    out
}

#[test]
fn committed_fuzz_inputs_keep_every_promise() {
    let _counter = crate::guard_counter();
    let caught = strata_parquet::guard::caught();
    let fixtures = Fixtures::all(100, 42).unwrap();
    let harness = Harness::new().unwrap();
    let mut seen = 0;
    for (target, format) in [("parquet", Format::Parquet), ("ipc", Format::Ipc)] {
        let files = inputs(target);
        assert!(!files.is_empty(), "no {target} inputs");
        for path in files {
            let data = std::fs::read(&path).unwrap();
            if let Err(v) = harness.file(fixtures.pick(&data), format, &data) {
                panic!("{}: {v}", path.display());
            }
            seen += 1;
        }
    }
    // The text and byte targets: errors are fine, panics are not.
    let events = Fixture::new("events", 400, 42).unwrap();
    for path in inputs("spec") {
        let _ = strata_fuzzkit::spec_text(&std::fs::read(&path).unwrap());
        seen += 1;
    }
    for path in inputs("rows") {
        let _ = strata_fuzzkit::rows(&std::fs::read(&path).unwrap());
        seen += 1;
    }
    for path in inputs("manifest") {
        let m = std::fs::read(&path).unwrap();
        let _ = strata_fuzzkit::manifest(&m);
        seen += 1;
    }
    for path in inputs("filter") {
        let _ = strata_fuzzkit::filter(&harness, &events, &std::fs::read(&path).unwrap());
        seen += 1;
    }
    eprintln!("{seen} committed inputs replayed");
    assert_eq!(
        strata_parquet::guard::caught(),
        caught,
        "an input reached a decoder panic"
    );
}
