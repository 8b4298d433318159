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
        "when phone_type is null: null 0.1666",
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
