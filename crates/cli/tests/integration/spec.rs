//! `strata spec` and `strata generate --spec`: presets round-trip through
//! files, bad specs fail with their line and field and write nothing.

use crate::common::{failed_cleanly, files, stderr, strata};

#[test]
fn a_shown_preset_generates_the_same_rows_as_the_preset() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["contacts", "events", "wide-u64"] {
        let o = strata(&["spec", "show", name], dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(&file, &o.stdout).unwrap();

        let check = strata(&["spec", "check", file.to_str().unwrap()], dir.path());
        assert!(check.status.success(), "{}", stderr(&check));
        let out = String::from_utf8_lossy(&check.stdout);
        assert!(out.contains(&format!("ok, spec `{name}`")), "{out}");

        let common = ["--target-records", "3000", "--num-writers", "1", "-q"];
        let mut a = vec!["generate", "--preset", name, "--output-dir", "a"];
        a.extend(common);
        let mut b = vec![
            "generate",
            "--spec",
            file.to_str().unwrap(),
            "--output-dir",
            "b",
        ];
        b.extend(common);
        for args in [a, b] {
            let o = strata(&args, dir.path());
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        }
        let fa = std::fs::read(dir.path().join(format!("a/{name}_0.parquet"))).unwrap();
        let fb = std::fs::read(dir.path().join(format!("b/{name}_0.parquet"))).unwrap();
        assert!(fa == fb, "{name}: preset and spec file outputs differ");
    }
}

#[test]
fn check_lists_fields_generators_and_cases() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(&["spec", "show", "contacts"], dir.path());
    std::fs::write(dir.path().join("c.toml"), &o.stdout).unwrap();
    let o = strata(&["spec", "check", "c.toml"], dir.path());
    let out = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "name: Utf8, template \"{first_name} {last_name}\", null 0.2",
        "phones: list, length weighted",
        "number: Utf8, template \"+91-99-{seq:08}\"",
        "number: Utf8, template \"+91-99-{seq:08}\", null 0.04255, when phone_type is null: null 0.1667",
        "Parquet dictionary off (many distinct values): name, phones.list.item.number",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
    // A string template's sequence is no integer sequence.
    assert!(!out.contains("DELTA_BINARY_PACKED"), "{out}");
    let o = strata(&["spec", "show", "events"], dir.path());
    std::fs::write(dir.path().join("e.toml"), &o.stdout).unwrap();
    let o = strata(&["spec", "check", "e.toml"], dir.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("Parquet DELTA_BINARY_PACKED (sequences): event_id\n"),
        "{out}"
    );
}

#[test]
fn bad_specs_fail_with_line_and_field_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("bad.toml");
    for (body, needle) in [
        (
            "[[fields]]\nname = \"k\"\ntype = \"dictionary\"\nweighted = { values = [\"a\", \"b\"], weights = [3, -1] }\n",
            "bad.toml:5: field `k`: weights must be non-negative numbers, not -1",
        ),
        (
            "[[fields]]\nname = \"u\"\ntype = \"int64\"\nzipf = { s = -1.5, n = 1000 }\n",
            "bad.toml:5: field `u`: zipf exponent s must be a positive number, not -1.5",
        ),
        (
            "[[fields]]\nname = \"l\"\ntype = \"list\"\nlength = 2\n[fields.item]\ntype = \"utf8\"\nweighted = { values = [] }\n",
            "bad.toml:8: field `l.item`: `values` is empty",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int64\"\nconstant = 1\n[[fields]\n",
            "bad.toml:6:",
        ),
    ] {
        std::fs::write(&spec, format!("name = \"bad\"\n{body}")).unwrap();
        for args in [
            vec!["spec", "check", "bad.toml"],
            vec![
                "generate",
                "--spec",
                "bad.toml",
                "--target-records",
                "10",
                "--output-dir",
                "out",
            ],
        ] {
            let o = strata(&args, dir.path());
            failed_cleanly(&o, dir.path(), needle, &["bad.toml"]);
        }
    }
    let o = strata(&["spec", "check", "missing.toml"], dir.path());
    failed_cleanly(
        &o,
        dir.path(),
        "cannot read spec file missing.toml",
        &["bad.toml"],
    );
    let o = strata(&["spec", "show", "nope"], dir.path());
    failed_cleanly(&o, dir.path(), "no preset named 'nope'", &["bad.toml"]);
    let o = strata(
        &["generate", "--preset", "events", "--spec", "bad.toml"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    assert_eq!(files(dir.path()), ["bad.toml"]);
}

#[test]
fn schema_is_json_that_names_every_generator() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(&["spec", "schema"], dir.path());
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let props = &v["$defs"]["field"]["properties"];
    for g in [
        "constant",
        "sequence",
        "uniform",
        "normal",
        "zipf",
        "weighted",
        "probability",
        "template",
        "words",
        "when",
        "null_rate",
        "length",
    ] {
        assert!(props.get(g).is_some(), "schema lacks {g}");
    }
}

#[test]
fn verify_distribution_reports_every_check() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(
        &[
            "generate",
            "--target-records",
            "50000",
            "--num-writers",
            "2",
            "-q",
            "--verify-distribution",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "name ",
        "phones.item.number",
        "value \"Mobile\"",
        "0.550000",
        "0 suspicious",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
}

/// Writes `text` to `dir/name`.
fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// A spec of one field `x` of type `ty` drawn by `generator`.
fn one_field(ty: &str, generator: &str) -> String {
    format!("name = \"t\"\n\n[[fields]]\nname = \"x\"\ntype = \"{ty}\"\n{generator}\n")
}

#[test]
fn sequences_that_would_wrap_are_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "s8.toml",
        &one_field("int8", "sequence = { start = 100 }"),
    );
    let gen_args = |spec: &'static str, rows: &'static str| {
        vec![
            "generate",
            "--spec",
            spec,
            "--target-records",
            rows,
            "--num-writers",
            "1",
            "--output-dir",
            "out",
            "-q",
        ]
    };
    let o = strata(&gen_args("s8.toml", "1000"), d);
    failed_cleanly(
        &o,
        d,
        "--target-records 1000: s8.toml:3: table `t`: field `x`: the sequence from 100 by 1 would pass 127, the greatest Int8, at row 28 of the 1000 asked for; use a wider type, or another start or step",
        &["s8.toml"],
    );
    // The rows that fit are made, the last of them 127.
    let o = strata(&gen_args("s8.toml", "28"), d);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(d.join("out")).unwrap();
    write(
        d,
        "s64.toml",
        &one_field(
            "int64",
            "sequence = { start = 9223372036854775000, step = 1000 }",
        ),
    );
    let o = strata(&gen_args("s64.toml", "2"), d);
    failed_cleanly(
        &o,
        d,
        "s64.toml:3: table `t`: field `x`: the sequence from 9223372036854775000 by 1000 would pass 9223372036854775807, the greatest Int64, at row 1 of the 2 asked for",
        &["s64.toml", "s8.toml"],
    );
    // Tables of fixed rows are refused when the spec is checked; tables
    // that scale at the scale that would wrap them.
    let dataset = r#"name = "d"

[[tables]]
name = "dim"
rows = 200

[[tables.fields]]
name = "id"
type = "int8"
sequence = { start = 1 }
"#;
    write(d, "fixed.toml", dataset);
    for args in [
        vec!["spec", "check", "fixed.toml"],
        vec!["generate", "--spec", "fixed.toml", "--output-dir", "out"],
    ] {
        let o = strata(&args, d);
        failed_cleanly(
            &o,
            d,
            "fixed.toml:7: table `dim`: field `id`: the sequence from 1 by 1 would pass 127, the greatest Int8, at row 127 of the 200 asked for",
            &["fixed.toml", "s64.toml", "s8.toml"],
        );
    }
    write(
        d,
        "fixed.toml",
        &dataset.replace("rows = 200", "rows_per_scale = 100"),
    );
    let o = strata(&["spec", "check", "fixed.toml"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = strata(
        &[
            "generate",
            "--spec",
            "fixed.toml",
            "--scale",
            "1.5",
            "--output-dir",
            "out",
        ],
        d,
    );
    failed_cleanly(
        &o,
        d,
        "at scale 1.5: fixed.toml:7: table `dim`: field `id`: the sequence from 1 by 1 would pass 127, the greatest Int8, at row 127 of the 150 asked for",
        &["fixed.toml", "s64.toml", "s8.toml"],
    );
}

#[test]
fn unknown_time_zones_are_refused_and_iana_names_and_offsets_taken() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ts = "uniform = { min = 2024-01-01T00:00:00Z, max = 2024-12-31T00:00:00Z }";
    write(d, "tz.toml", &one_field("timestamp(ms, Mars/Olympus)", ts));
    for args in [
        vec!["spec", "check", "tz.toml"],
        vec![
            "generate",
            "--spec",
            "tz.toml",
            "--target-records",
            "10",
            "--output-dir",
            "out",
        ],
    ] {
        let o = strata(&args, d);
        failed_cleanly(
            &o,
            d,
            "tz.toml:5: field `x`: type `timestamp(ms, Mars/Olympus)`: unknown time zone `Mars/Olympus`; give an IANA name such as Europe/Paris or UTC, or an offset such as +05:30",
            &["tz.toml"],
        );
    }
    for zone in [
        "Europe/Paris",
        "UTC",
        "+05:30",
        "-08:00",
        "America/Argentina/Buenos_Aires",
    ] {
        write(
            d,
            "tz.toml",
            &one_field(&format!("timestamp(ms, {zone})"), ts),
        );
        let o = strata(&["spec", "check", "tz.toml"], d);
        assert!(o.status.success(), "{zone}: {}", stderr(&o));
    }
}

#[test]
fn spec_files_larger_than_16_mib_are_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A sparse file one byte past the cap.
    let big = std::fs::File::create(d.join("big.toml")).unwrap();
    big.set_len((16 << 20) + 1).unwrap();
    let mut inputs = vec![d.join("big.toml").display().to_string()];
    if std::path::Path::new("/dev/zero").exists() {
        inputs.push("/dev/zero".into());
    }
    for input in &inputs {
        for args in [
            vec!["spec", "check", input.as_str()],
            vec!["spec", "sample", input.as_str()],
            vec!["generate", "--spec", input.as_str(), "--output-dir", "out"],
        ] {
            let o = strata(&args, d);
            failed_cleanly(
                &o,
                d,
                &format!(
                    "cannot read spec file {input}: larger than 16 MiB, the most a spec file may hold"
                ),
                &["big.toml"],
            );
        }
    }
}

#[test]
fn check_shows_values_as_the_spec_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = r#"name = "v"

[[fields]]
name = "price"
type = "decimal(7, 2)"
uniform = { min = 1.00, max = 999.99 }
null_rate = 0.0425531914893617

[[fields]]
name = "day"
type = "date32"
uniform = { min = 1992-01-01, max = 1998-08-02 }

[[fields]]
name = "at"
type = "timestamp(ms)"
sequence = { start = 2024-01-01T08:30:00.250Z, step = 1000 }

[[fields]]
name = "fee"
type = "decimal(5, 2)"
weighted = { values = [0.5, 1.25], weights = [3, 1] }

[[fields]]
name = "flag"
type = "bool"
probability = 0.123456
"#;
    write(d, "v.toml", spec);
    let o = strata(&["spec", "check", "v.toml"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for line in [
        "  price: Decimal128(7, 2), uniform 1.00..999.99, null 0.04255\n",
        "  day: Date32, uniform 1992-01-01..1998-08-02, not null\n",
        "  at: Timestamp(ms), sequence from 2024-01-01T08:30:00.250 by 1000, not null\n",
        "  fee: Decimal128(5, 2), weighted [0.50 75.0%, 1.25 25.0%], not null\n",
        "  flag: Boolean, true with probability 0.1235, not null\n",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
}

#[test]
fn sample_prints_the_first_rows_of_each_table_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = strata(&["spec", "sample", "contacts", "--rows", "3"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    // Border, header, border, 3 rows, border.
    assert_eq!(lines.len(), 7, "{out}");
    assert!(
        lines[1].starts_with("| name ") && lines[1].contains("| phones"),
        "{out}"
    );
    // The same rows as generate writes: the first name of row 0.
    let o = strata(
        &[
            "generate",
            "--target-records",
            "3",
            "--num-writers",
            "1",
            "--output-dir",
            "out",
            "-q",
        ],
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = strata(&["scan", "out/contacts_0.parquet", "--columns", "name"], d);
    let scanned = String::from_utf8_lossy(&o.stdout).to_string();
    let first = lines[3].split('|').nth(1).unwrap().trim().to_string();
    assert!(
        !first.is_empty() && scanned.contains(&first),
        "{first:?} not in {scanned}"
    );
    std::fs::remove_dir_all(d.join("out")).unwrap();

    // A dataset: every table under its name, or one with --table (a child
    // table's rows are its parents' children).
    let o = strata(&["spec", "sample", "orders", "-n", "2"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for t in [
        "table `customers`:\n",
        "table `orders`:\n",
        "table `lineitem`:\n",
    ] {
        assert!(out.contains(t), "missing {t:?} in:\n{out}");
    }
    let o = strata(
        &[
            "spec", "sample", "orders", "--table", "lineitem", "--rows", "9",
        ],
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("table `lineitem`:\n+"), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("| ")).count(),
        10,
        "{out}"
    );
    // A spec file, as check takes.
    write(d, "s.toml", &one_field("int16", "sequence = { start = 5 }"));
    let o = strata(&["spec", "sample", "s.toml", "-n", "2"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "+---+\n| x |\n+---+\n| 5 |\n| 6 |\n+---+\n"
    );
    for (args, needle) in [
        (
            vec!["spec", "sample", "orders", "--table", "nope"],
            "--table: `orders` has no table `nope`; its tables are customers, orders, lineitem",
        ),
        (
            vec!["spec", "sample", "s.toml", "--rows", "0"],
            "--rows must be between 1 and 10000, not 0",
        ),
        (
            vec!["spec", "sample", "missing.toml"],
            "cannot read spec file missing.toml",
        ),
    ] {
        let o = strata(&args, d);
        failed_cleanly(&o, d, needle, &["s.toml"]);
    }
}

#[test]
fn errors_while_generating_name_the_spec_line_table_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = r#"name = "e"

[[fields]]
name = "x"
type = "int64"
uniform = { min = 2, max = 3 }

[[fields]]
name = "y"
type = "int64"
expr = "x * 9223372036854775807"
"#;
    write(d, "e.toml", spec);
    let o = strata(
        &[
            "generate",
            "--spec",
            "e.toml",
            "--target-records",
            "10",
            "--output-dir",
            "out",
            "-q",
        ],
        d,
    );
    let e = failed_cleanly(
        &o,
        d,
        "e.toml:8: table `e`: field `y`: expression: ",
        &["e.toml"],
    );
    assert!(!e.contains("invalid distribution"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn verify_distribution_lists_computed_fields_as_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = r#"name = "ex"

[[fields]]
name = "a"
type = "int64"
uniform = { min = 1, max = 100 }
null_rate = 0.5

[[fields]]
name = "b"
type = "int64"
expr = "a + 1"
"#;
    write(d, "ex.toml", spec);
    let o = strata(
        &[
            "generate",
            "--spec",
            "ex.toml",
            "--target-records",
            "10000",
            "--output-dir",
            "out",
            "-q",
            "--verify-distribution",
        ],
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let b = out.lines().find(|l| l.starts_with("b ")).unwrap();
    assert!(
        b.ends_with("not checked: an expression, null where its inputs are"),
        "{out}"
    );
    assert!(!out.contains("SUSPICIOUS"), "{out}");
    assert!(
        out.ends_with("1 checks, 0 suspicious (|z| > 5), 1 not checked, 10000 rows in 4 files\n"),
        "{out:?}"
    );
}

/// A word list read from a file next to the spec (a line each, `#`
/// comments and blank lines skipped), from any working directory; a
/// missing file, a word twice and an unknown key are errors at the
/// list's line.
#[test]
fn word_lists_are_read_from_files_next_to_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    std::fs::create_dir_all(specs.join("words")).unwrap();
    write(
        &specs.join("words"),
        "c.txt",
        "# colours\nred\n\n green \nblue\n",
    );
    let spec = |list: &str| {
        format!(
            "name = \"w\"\nlists = {{ colours = {list} }}\n[[fields]]\nname = \"x\"\ntype = \"utf8\"\nwords = {{ list = \"colours\", distinct = true, min = 3, max = 3 }}\n"
        )
    };
    write(&specs, "w.toml", &spec("{ file = \"words/c.txt\" }"));
    write(
        &specs,
        "inline.toml",
        &spec("[\"red\", \"green\", \"blue\"]"),
    );
    let o = strata(&["spec", "sample", "specs/w.toml"], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let inline = strata(&["spec", "sample", "specs/inline.toml"], dir.path());
    assert_eq!(o.stdout, inline.stdout);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("red") && out.contains("green") && out.contains("blue"),
        "{out}"
    );
    for (list, want) in [
        (
            "{ file = \"words/none.txt\" }",
            "w.toml:2: `lists.colours`: file `words/none.txt`: ",
        ),
        (
            "{ file = \"words/d.txt\" }",
            "w.toml:2: `lists.colours` lists \"a\" twice; each word once",
        ),
        (
            "{ file = \"words/c.txt\", sep = \",\" }",
            "w.toml:2: unknown key `sep` in `lists.colours`; expected one of: file",
        ),
        (
            "{ path = \"words/c.txt\" }",
            "w.toml:2: unknown key `path` in `lists.colours`; expected one of: file",
        ),
    ] {
        write(&specs.join("words"), "d.txt", "a\nb\na\n");
        write(&specs, "w.toml", &spec(list));
        let o = strata(&["spec", "check", "specs/w.toml"], dir.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{list}: {err}");
    }
}
