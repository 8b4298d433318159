//! `strata generate --spec` with a dataset of several tables: the output
//! layout, flags that apply to one table only, bad datasets, and a run
//! that fails in its last table leaving no file of any table.

use crate::common::{failed_cleanly, files, stderr, strata};

const DATASET: &str = r#"
name = "tiny"

[[tables]]
name = "regions"
rows = 3

[[tables.fields]]
name = "r_id"
type = "int32"
sequence = { start = 1 }

[[tables]]
name = "people"
rows_per_scale = 40

[[tables.fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[tables.fields]]
name = "region"
type = "int32"
ref = { table = "regions", field = "r_id" }
"#;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn each_table_goes_to_its_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "tiny.toml", DATASET);
    let json = dir.path().join("summary.json");
    let o = strata(
        &[
            "generate",
            "--spec",
            &spec,
            "--output-dir",
            "out",
            "--scale",
            "0.5",
            "-q",
            "--summary-json",
            json.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // A table smaller than --num-writers (4) writes a file per row.
    assert_eq!(
        files(&dir.path().join("out")),
        [
            "people/people_0.parquet",
            "people/people_1.parquet",
            "people/people_2.parquet",
            "people/people_3.parquet",
            "regions/regions_0.parquet",
            "regions/regions_1.parquet",
            "regions/regions_2.parquet",
        ]
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(summary["dataset"], "tiny");
    assert_eq!(summary["scale"], 0.5);
    let tables = summary["tables"].as_array().unwrap();
    assert_eq!(tables[0]["spec"], "regions");
    assert_eq!(tables[0]["records"], 3);
    assert_eq!(tables[1]["spec"], "people");
    assert_eq!(tables[1]["records"], 20);

    // --tables picks some; the dry run plans them without writing.
    let o = strata(
        &[
            "generate",
            "--spec",
            &spec,
            "--tables",
            "people",
            "--dry-run",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["tables"].as_array().unwrap().len(), 1);
    assert_eq!(plan["tables"][0]["spec"], "people");
    assert_eq!(plan["tables"][0]["config"]["target_records"], 40);
}

#[test]
fn flags_for_one_table_and_bad_datasets_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "tiny.toml", DATASET);
    let cases: [(&[&str], &str); 7] = [
        (
            &["--target-records", "10"],
            "--target-records: the tables of dataset `tiny` set their own rows; scale them with --scale",
        ),
        (
            &["--scale", "0"],
            "--scale must be a positive number, got 0",
        ),
        (
            &["--tables", "people,nope"],
            "--tables: dataset `tiny` has no table `nope`; its tables are regions, people",
        ),
        (
            &["--output-filename", "x"],
            "--output-filename: each table's files are named after the table",
        ),
        (
            &["--parts", "4", "--part", "1"],
            "table `regions` has 3 rows at scale 1, fewer than --parts (4); use fewer parts",
        ),
        (
            &["--scale", "1e20"],
            "table `people` has more rows at scale 100000000000000000000 than a run writes (1152921504606846976); use a smaller --scale",
        ),
        (
            &["--scale", "0.01"],
            "table `people` has no rows at scale 0.01 (rows_per_scale x scale rounds to 0); use a larger --scale",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["generate", "--spec", &spec, "--output-dir", "out"];
        args.extend(extra);
        let o = strata(&args, dir.path());
        failed_cleanly(&o, dir.path(), needle, &["tiny.toml"]);
    }
    // A preset has one table: --scale and --tables are for datasets.
    let o = strata(
        &["generate", "--preset", "contacts", "--scale", "2"],
        dir.path(),
    );
    failed_cleanly(
        &o,
        dir.path(),
        "--scale and --tables apply to a spec of several `[[tables]]`",
        &["tiny.toml"],
    );
    // A reference to a missing field names the file, line and field.
    let bad = write(
        dir.path(),
        "bad.toml",
        &DATASET.replace("field = \"r_id\"", "field = \"r_key\""),
    );
    let o = strata(&["generate", "--spec", &bad], dir.path());
    failed_cleanly(
        &o,
        dir.path(),
        "bad.toml:22: field `people.region`: `ref` names field `r_key`, which is not a top-level field of table `regions`; its fields are r_id",
        &["bad.toml", "tiny.toml"],
    );
    let o = strata(&["spec", "check", &bad], dir.path());
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("`ref` names field `r_key`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_failure_in_the_last_table_leaves_no_file_of_any_table() {
    let dir = tempfile::tempdir().unwrap();
    // The last table's lists hold 100,000 elements a row: a batch (2,500
    // rows, a file's) passes the engine's 2^26 elements and fails, after
    // the first tables' files are complete.
    let text = format!(
        "{DATASET}\n[[tables]]\nname = \"huge\"\nrows = 10000\n[[tables.fields]]\nname = \"xs\"\ntype = \"list\"\nlength = 100000\n[tables.fields.item]\ntype = \"int8\"\nconstant = 1\n"
    );
    let spec = write(dir.path(), "d.toml", &text);
    let o = strata(
        &["generate", "--spec", &spec, "--output-dir", "out/deeper"],
        dir.path(),
    );
    failed_cleanly(&o, dir.path(), "batch too large", &["d.toml"]);
    assert!(
        !dir.path().join("out").exists(),
        "the directories the run made are removed"
    );
    // Existing output of any table is refused before anything is written.
    let o = strata(
        &[
            "generate",
            "--spec",
            &spec,
            "--tables",
            "regions",
            "--output-dir",
            "o",
            "-q",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = strata(
        &["generate", "--spec", &spec, "--output-dir", "o"],
        dir.path(),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("regions_0.parquet"), "{e}");
    assert!(!dir.path().join("o/people").exists(), "{e}");
}

#[test]
fn dataset_presets_show_and_generate_with_child_row_counts() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(&["spec", "show", "orders"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let spec = write(
        dir.path(),
        "orders.toml",
        &String::from_utf8_lossy(&o.stdout),
    );
    let json = dir.path().join("s.json");
    for (args, out) in [
        (vec!["--preset", "orders"], "a"),
        (vec!["--spec", spec.as_str()], "b"),
    ] {
        let mut all = vec!["generate", "-q", "--scale", "0.001", "--output-dir", out];
        all.extend(args);
        all.extend(["--summary-json", json.to_str().unwrap()]);
        let o = strata(&all, dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for t in [
        "customers/customers_0",
        "orders/orders_3",
        "lineitem/lineitem_2",
    ] {
        let a = std::fs::read(dir.path().join(format!("a/{t}.parquet"))).unwrap();
        let b = std::fs::read(dir.path().join(format!("b/{t}.parquet"))).unwrap();
        assert!(a == b, "{t}: preset and shown spec differ");
    }
    // The summary counts the line items written, not the orders walked.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let tables = summary["tables"].as_array().unwrap();
    assert_eq!(tables[1]["spec"], "orders");
    assert_eq!(tables[1]["records"], 1500);
    assert_eq!(tables[2]["spec"], "lineitem");
    let items = tables[2]["records"].as_u64().unwrap();
    let files: u64 = tables[2]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rows"].as_u64().unwrap())
        .sum();
    assert_eq!(items, files);
    assert!(
        (1500..=1500 * 7).contains(&items) && items != 1500,
        "{items}"
    );
}

#[test]
fn every_table_of_a_dataset_is_verified_against_its_spec() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(
        &[
            "generate",
            "-q",
            "--preset",
            "orders",
            "--scale",
            "0.002",
            "--output-dir",
            "out",
            "--verify-distribution",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for t in ["customers", "orders", "lineitem"] {
        assert!(out.contains(&format!("table {t}:")), "{out}");
    }
    // A reference's shares are its parent field's, an expression's
    // follow its inputs: listed as not checked against this table's spec,
    // with why; the line items' own fields are checked.
    let line = |field: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(field))
            .unwrap_or_else(|| panic!("no line of {field} in {out}"))
    };
    for f in ["o_custkey", "o_mktsegment"] {
        assert!(
            line(f).ends_with("not checked: copied from another table"),
            "{out}"
        );
    }
    assert!(
        line("l_returnflag").ends_with("not checked: an expression, null where its inputs are"),
        "{out}"
    );
    assert!(line("o_orderstatus").ends_with("ok"), "{out}");
    assert!(out.contains("0 suspicious"), "{out}");
}

#[test]
fn dry_run_estimates_child_tables_rows_from_their_parents() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "generate",
            "--preset",
            "orders",
            "--scale",
            "0.002",
            "--output-dir",
            "out",
        ];
        a.extend(extra);
        a
    };
    let o = strata(&args(&["--dry-run"]), d);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tables = plan["tables"].as_array().unwrap();
    let orders = &tables[1];
    assert_eq!(orders["spec"], "orders");
    assert_eq!(
        (orders["rows"].as_u64(), orders["estimate"].as_bool()),
        (Some(3000), Some(false))
    );
    let lineitem = &tables[2];
    assert_eq!(lineitem["spec"], "lineitem");
    assert_eq!(lineitem["estimate"], true);
    // Uniform 1..7 lines per order: 4 on average, for each of the 3,000.
    assert_eq!(lineitem["children_of"]["table"], "orders");
    assert_eq!(lineitem["children_of"]["rows"], 3000);
    assert_eq!(lineitem["rows"], 12_000);
    let planned = lineitem["files"].as_array().unwrap();
    assert_eq!(planned[0]["parent_rows"], 750);
    assert_eq!(planned[0]["rows"], 3000);
    let sum: u64 = planned.iter().map(|f| f["rows"].as_u64().unwrap()).sum();
    assert_eq!(sum, 12_000);
    assert!(files(d).is_empty());
    // The run writes about as many.
    let o = strata(&args(&["-q", "--summary-json", "s.json"]), d);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("s.json")).unwrap()).unwrap();
    let written = s["tables"][2]["records"].as_u64().unwrap();
    assert!(written.abs_diff(12_000) < 300, "{written}");
}

#[test]
fn a_reference_to_a_table_without_rows_names_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let o = strata(
        &[
            "generate",
            "--preset",
            "orders",
            "--tables",
            "orders",
            "--scale",
            "0.000001",
            "--output-dir",
            "out",
        ],
        dir.path(),
    );
    let e = failed_cleanly(
        &o,
        dir.path(),
        "preset orders:52: table `orders`: field `o_custkey`: references table `customers`, which has no rows at scale 0.000001; use a larger --scale",
        &[],
    );
    assert!(!e.contains("invalid distribution"), "{e}");
}
