//! Hostile specs and flags: requests for huge allocations, deep nesting,
//! very long names, non-UTF-8 and flags at their limits get a clear error
//! naming the problem (exit status 2, no `panicked at`, no output), or,
//! where the request is reasonable after all, a correct run.

use crate::common::{failed_cleanly, files, stderr, strata};

/// Runs `strata args` in a fresh directory holding `spec` as `s.toml`;
/// returns the run and the directory.
fn run(spec: &[u8], args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), spec).unwrap();
    let o = strata(args, dir.path());
    let err = stderr(&o);
    assert!(!err.contains("panicked at"), "{args:?}: {err}");
    (o, dir)
}

const GENERATE: &[&str] = &[
    "generate",
    "--spec",
    "s.toml",
    "--target-records",
    "50",
    "--num-writers",
    "1",
    "--output-dir",
    "out",
];

/// A spec whose single field is `field` (TOML lines).
fn spec(field: &str) -> String {
    format!("name = \"h\"\n[[fields]]\n{field}\n")
}

/// Fails unless the run exits 2 with a short error containing `expect`,
/// after writing nothing.
fn refused(spec: &[u8], args: &[&str], expect: &str) {
    let (o, dir) = run(spec, args);
    let err = failed_cleanly(&o, dir.path(), expect, &["s.toml"]);
    assert!(err.len() < 2000, "an error of {} bytes", err.len());
}

#[test]
fn specs_asking_for_huge_allocations_are_refused_before_allocating() {
    // A list length of a trillion.
    refused(
        spec("name = \"l\"\ntype = \"list\"\nlength = { uniform = { min = 0, max = 1000000000000 } }\n[fields.item]\ntype = \"int64\"\nconstant = 1").as_bytes(),
        GENERATE,
        "outside the type's range 0..=1048576",
    );
    // A template of a billion digits.
    refused(
        spec("name = \"t\"\ntype = \"utf8\"\ntemplate = \"{seq:1000000000}\"").as_bytes(),
        GENERATE,
        "field `t`",
    );
    // A decimal wider than any Arrow decimal.
    refused(
        spec("name = \"d\"\ntype = \"decimal128(76, 2)\"\nconstant = 1").as_bytes(),
        GENERATE,
        "precision 76 is more than 38 digits (Decimal128)",
    );
    refused(
        spec("name = \"d\"\ntype = \"decimal(77, 2)\"\nconstant = 1").as_bytes(),
        GENERATE,
        "precision 77 is more than 76 digits (Decimal256, the widest)",
    );
}

#[test]
fn deep_nesting_long_names_and_bad_text_are_refused_clearly() {
    // 200 nested lists: the TOML reader's recursion limit.
    let mut s = String::from("name = \"x\"\n[[fields]]\nname = \"f\"\ntype = \"list\"\n");
    let mut prefix = String::from("fields");
    for _ in 0..200 {
        s.push_str(&format!(
            "[{prefix}.item]\ntype = \"list\"\nlength = {{ constant = 1 }}\n"
        ));
        prefix.push_str(".item");
    }
    s.push_str(&format!(
        "[{prefix}.item]\ntype = \"int64\"\nconstant = 1\n"
    ));
    refused(s.as_bytes(), GENERATE, "recursion");
    // A 5 MB field name: refused, and the error quotes only its start.
    let long = "a".repeat(5_000_000);
    refused(
        spec(&format!(
            "name = \"{long}\"\ntype = \"int64\"\nconstant = 1"
        ))
        .as_bytes(),
        GENERATE,
        "the name is 5000000 bytes long; names are at most 255",
    );
    // Not UTF-8.
    refused(
        b"name = \"x\xff\"\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n",
        GENERATE,
        "valid UTF-8",
    );
    // Deeply nested arrays in a value.
    let arrays = format!(
        "name = \"x\"\nv = {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    refused(arrays.as_bytes(), GENERATE, "recurs");
}

#[test]
fn reasonable_extremes_run() {
    // Zipf over 10^18 values and the widest uniform range: no table of
    // that size is built.
    let s = spec(
        "name = \"z\"\ntype = \"int64\"\nzipf = { n = 1000000000000000000, s = 1.1 }\n[[fields]]\nname = \"u\"\ntype = \"int64\"\nuniform = { min = -9223372036854775808, max = 9223372036854775807 }",
    );
    let (o, dir) = run(s.as_bytes(), GENERATE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(files(dir.path()), ["out/h_0.parquet", "s.toml"]);
    // Two thousand fields: parsed (in linear time) and generated.
    let mut s = String::from("name = \"h\"\n");
    for i in 0..2000 {
        s.push_str(&format!(
            "[[fields]]\nname = \"f{i}\"\ntype = \"int32\"\nuniform = {{ min = 0, max = 9 }}\n"
        ));
    }
    let (o, _dir) = run(s.as_bytes(), GENERATE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn flags_at_their_limits_are_refused_before_any_work() {
    let base = ["generate", "--output-dir", "out"];
    let cases: &[(&[&str], &str)] = &[
        (
            &["--record-batch-size", "1000000000000"],
            "--record-batch-size must be between 1 and",
        ),
        (
            &["--record-batch-size", "0"],
            "--record-batch-size must be between 1 and",
        ),
        (&["--num-writers", "0"], "--num-writers must be at least 1"),
        (&["--num-writers", "1000000000"], "a file would be empty"),
        (
            &["--target-records", "18446744073709551615"],
            "--target-records must be at most",
        ),
        (
            &["--parts", "1000000000000", "--part", "5"],
            "a part would be empty",
        ),
        (&["--seed", "18446744073709551616"], "number too large"),
        (&["--compression", "zstd:99"], "zstd"),
    ];
    for (flags, expect) in cases {
        let args: Vec<&str> = base.iter().chain(flags.iter()).copied().collect();
        refused(b"", &args, expect);
    }
}
