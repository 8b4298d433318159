//! The generate flow: a spec of one table and a dataset of several
//! planned, run and reported through one [`Flow`], with the same keys.

use std::path::Path;

use strata_gen::Dataset;
use strata_pipeline::{Error, flow::Flow, generate::GenerateConfig};

fn config(dir: &Path, stem: &str, records: u64) -> GenerateConfig {
    GenerateConfig {
        target_records: records,
        num_writers: 2,
        threads: 2,
        output_dir: dir.to_path_buf(),
        ..GenerateConfig::new(stem)
    }
}

/// The keys of a JSON object, in the order written.
fn keys(text: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    let first: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    // serde_json's map sorts its keys: find each in the text instead.
    let mut found: Vec<(usize, String)> = first
        .into_iter()
        .map(|k| (text.find(&format!("\"{k}\":")).unwrap(), k))
        .collect();
    found.sort();
    found.into_iter().map(|(_, k)| k).collect()
}

const DATASET: &str = r#"
name = "shop"

[[tables]]
name = "customers"
rows_per_scale = 1000

[[tables.fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[tables]]
name = "orders"
children_of = "customers"
count = { uniform = { min = 1, max = 3 } }

[[tables.fields]]
name = "customer"
type = "int64"
parent = "id"
"#;

#[test]
fn a_spec_of_one_table_is_planned_and_reported_as_that_table_alone() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = Dataset::preset("contacts").unwrap();
    let cfg = config(dir.path(), "contacts", 1_001);
    let flow = Flow::new(dataset, &[0], &cfg, 1.0).unwrap();
    assert!(!flow.is_dataset());
    assert_eq!(flow.tables(), [0]);
    assert_eq!(flow.rows(), 1_001);

    let plan = serde_json::to_string(&flow.plan().unwrap()).unwrap();
    assert_eq!(plan, serde_json::to_string(&cfg.plan("contacts")).unwrap());
    assert_eq!(keys(&plan), ["spec", "config", "rows", "estimate", "files"]);

    let summaries = flow.run(Default::default(), &|_| {}).unwrap();
    assert_eq!(summaries.len(), 1);
    assert!(dir.path().join("contacts_1.parquet").exists());
    let report = serde_json::to_string(&flow.report(&summaries)).unwrap();
    let reports = flow.reports(&summaries);
    assert_eq!(report, serde_json::to_string(&reports[0]).unwrap());
    let report_keys = keys(&report);
    assert_eq!(
        report_keys[..7],
        [
            "spec",
            "seed",
            "part",
            "parts",
            "format",
            "first_row",
            "config"
        ]
    );
    assert_eq!(report_keys.last().unwrap(), "files");
    assert_eq!(reports[0].summary.records, 1_001);
}

#[test]
fn a_dataset_is_planned_and_reported_per_table_with_the_keys_of_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = Dataset::parse(DATASET, "shop.toml").unwrap();
    let base = config(dir.path(), "unused", 1);
    let flow = Flow::new(dataset.clone(), &[1, 0], &base, 0.5).unwrap();
    assert!(flow.is_dataset());
    assert_eq!(flow.tables(), [1, 0]);
    // The child table walks its parent's 500 rows.
    assert_eq!(flow.rows(), 1_000);

    let plan = serde_json::to_string(&flow.plan().unwrap()).unwrap();
    assert_eq!(keys(&plan), ["dataset", "scale", "tables"]);
    let value: serde_json::Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(value["dataset"], "shop");
    assert_eq!(value["scale"], 0.5);
    let tables = value["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 2);
    for (entry, ((_, cfg), &t)) in tables.iter().zip(flow.jobs().iter().zip(flow.tables())) {
        let one = cfg.plan_table(&dataset, t);
        assert_eq!(entry, &serde_json::to_value(&one).unwrap());
        // In the same key order as a plan of one table.
        let one = serde_json::to_string(&one).unwrap();
        assert!(plan.contains(&one[1..one.len() - 1]), "{one} in {plan}");
    }
    assert_eq!(tables[0]["spec"], "orders");
    assert_eq!(tables[0]["estimate"], true);
    assert_eq!(tables[0]["children_of"]["table"], "customers");
    assert_eq!(tables[1]["spec"], "customers");
    assert_eq!(tables[1]["rows"], 500);

    let summaries = flow.run(Default::default(), &|_| {}).unwrap();
    assert!(dir.path().join("customers/customers_0.parquet").exists());
    assert!(dir.path().join("orders/orders_1.parquet").exists());
    let report = serde_json::to_string(&flow.report(&summaries)).unwrap();
    assert_eq!(keys(&report), ["dataset", "scale", "tables"]);
    for r in flow.reports(&summaries) {
        let one = serde_json::to_string(&r).unwrap();
        assert!(report.contains(&one[1..one.len() - 1]), "{one} in {report}");
    }
    let value: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(value["tables"][1]["records"], 500);
}

#[test]
fn bad_scales_and_rows_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = Dataset::parse(DATASET, "shop.toml").unwrap();
    let base = config(dir.path(), "unused", 1);
    for scale in [0.0, -1.0, f64::NAN] {
        let Err(Error::InvalidConfig(m)) = Flow::new(dataset.clone(), &[0], &base, scale) else {
            panic!("scale {scale} accepted");
        };
        assert_eq!(m, format!("--scale must be a positive number, got {scale}"));
    }
    assert!(matches!(
        Flow::new(dataset, &[], &base, 1.0),
        Err(Error::InvalidConfig(_))
    ));

    let one = Dataset::parse(
        "name = \"p\"\n[[fields]]\nname = \"a\"\ntype = \"int32\"\nvalues_by_row = [1, 2]\n",
        "p.toml",
    )
    .unwrap();
    let Err(Error::InvalidConfig(m)) = Flow::new(one, &[0], &config(dir.path(), "p", 3), 1.0)
    else {
        panic!("3 rows of 2 accepted");
    };
    assert!(m.starts_with("--target-records 3: "), "{m}");
    assert!(m.contains("`values_by_row` for 2 rows"), "{m}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
