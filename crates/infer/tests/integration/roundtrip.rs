//! `strata_infer` end to end: data generated from a spec is inferred,
//! generated again from the inferred spec, and compared with the
//! original; bad inputs; the privacy rules.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use strata_gen::{BatchGenerator as _, Dataset, Spec};
use strata_infer::{Options, compare, infer};

fn write_ipc(path: &Path, batches: &[RecordBatch]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let f = std::fs::File::create(path).unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(f, &batches[0].schema()).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
}

fn write_csv(path: &Path, batches: &[RecordBatch]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = arrow_csv::Writer::new(f);
    for b in batches {
        w.write(b).unwrap();
    }
}

/// `rows` rows of a single-table spec.
fn spec_rows(spec: &Spec, rows: u64, seed: u64) -> Vec<RecordBatch> {
    let g = spec.generator(seed).unwrap();
    let mut s = Default::default();
    let mut out = Vec::new();
    let mut at = 0;
    while at < rows {
        let len = (rows - at).min(8192);
        out.push(g.generate(at, len as usize, &mut s).unwrap());
        at += len;
    }
    out
}

/// Every table of a dataset spec, one directory per table.
fn write_dataset(dir: &Path, d: &Dataset, seed: u64) {
    for (t, table) in d.tables.iter().enumerate() {
        let g = d.generator(t, seed, 1.0).unwrap();
        let resolved = d.at_scale(1.0).unwrap();
        let root = resolved.root_of(t);
        let n = resolved.tables[root].rows.as_ref().unwrap().at(1.0);
        let mut s = Default::default();
        let mut out = Vec::new();
        let mut at = 0;
        while at < n {
            let len = (n - at).min(4096);
            let b = g.generate(at, len as usize, &mut s).unwrap();
            if b.num_rows() > 0 {
                out.push(b);
            }
            at += len;
        }
        let name = &table.spec.name;
        write_ipc(&dir.join(name).join(format!("{name}_0.arrow")), &out);
    }
}

fn opts() -> Options {
    Options {
        sample: strata_infer::Sample::All,
        ..Options::default()
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn the_events_preset_round_trips_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let (orig, regen) = (dir.path().join("orig"), dir.path().join("regen"));
    let spec = Spec::preset("events").unwrap();
    write_ipc(&orig.join("events.arrow"), &spec_rows(&spec, 60_000, 5));
    let out = infer(&[s(&orig)], &opts()).unwrap();
    // The nesting: a struct of a struct, a list of strings, a list of
    // structs with a map.
    for want in [
        "type = \"map\"",
        "[tables.fields.item]",
        "[[tables.fields.fields.fields]]",
        "[tables.fields.item.fields.key]",
    ] {
        assert!(out.spec.contains(want), "{want} missing:\n{}", out.spec);
    }
    let d = Dataset::parse(&out.spec, "inferred").unwrap();
    write_dataset(&regen, &d, 11);
    let c = compare(&[s(&orig)], &[s(&regen)], &opts()).unwrap();
    assert!(c.passed(), "{}", c.table());
    // Null rates at each level were measured, not assumed.
    let amount = c.columns.iter().find(|c| c.column == "amount").unwrap();
    assert!((amount.null_rates.0 - 0.93).abs() < 0.01, "{amount:?}");
    let value = c
        .columns
        .iter()
        .find(|c| c.column == "items[].item.attributes{}.value")
        .unwrap();
    assert!((value.null_rates.0 - 0.1).abs() < 0.01, "{value:?}");
}

const SHOP: &str = r#"
name = "shop"

[[tables]]
name = "customers"
rows = 3000

[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = 100, step = 3 }

[[tables.fields]]
name = "c_segment"
type = "utf8"
weighted = { values = ["retail", "business", "public"], weights = [70, 25, 5] }

[[tables.fields]]
name = "c_balance"
type = "float64"
null_rate = 0.05
normal = { mean = 500.0, std = 120.0 }

[[tables.fields]]
name = "c_phone"
type = "utf8"
template = "+44-{uniform(1000,9999)}-{uniform(100000,999999)}"

[[tables.fields]]
name = "c_tier"
type = "utf8"
weighted = { values = ["R", "B", "P"] }

[[tables.fields.when]]
field = "c_segment"
is = "retail"
constant = "R"

[[tables.fields.when]]
field = "c_segment"
is = "business"
constant = "B"

[[tables.fields.when]]
field = "c_segment"
is = "public"
constant = "P"

[[tables.fields]]
name = "c_agency"
type = "utf8"
null_rate = 1.0
template = "agency-{uniform(1,9)}"

[[tables.fields.when]]
field = "c_segment"
is = "public"
null_rate = 0.0

[[tables.fields]]
name = "c_city"
type = "utf8"
template = "city-{zipf(1.3,2000):04}"

[[tables]]
name = "products"
rows = 500

[[tables.fields]]
name = "p_id"
type = "int32"
sequence = { start = 1 }

[[tables.fields]]
name = "p_price"
type = "decimal(12, 2)"
lognormal = { mu = 3.0, sigma = 0.6 }

[[tables]]
name = "orders"
children_of = "customers"
count = { weighted = { values = [0, 1, 2, 3, 6], weights = [10, 30, 30, 20, 10] } }

[[tables.fields]]
name = "o_customer"
type = "int64"
parent = "c_id"

[[tables.fields]]
name = "o_line"
type = "int32"
position = 1

[[tables.fields]]
name = "o_product"
type = "int32"
ref = { table = "products", field = "p_id" }

[[tables.fields]]
name = "o_date"
type = "date32"
uniform = { min = 2024-01-01, max = 2025-12-31 }

[[tables.fields]]
name = "o_shipped"
type = "date32"
expr = "o_date + uniform(1, 9)"
"#;

#[test]
fn keys_children_positions_and_offsets_are_found_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (orig, regen) = (dir.path().join("orig"), dir.path().join("regen"));
    write_dataset(&orig, &Dataset::parse(SHOP, "shop.toml").unwrap(), 3);
    let out = infer(&[s(&orig)], &opts()).unwrap();
    let found: Vec<(String, String, String, Option<String>)> = out
        .report
        .relationships
        .iter()
        .map(|r| {
            (
                r.kind.clone(),
                r.table.clone(),
                r.column.clone(),
                r.target.clone(),
            )
        })
        .collect();
    let has = |k: &str, t: &str, c: &str, to: Option<&str>| {
        assert!(
            found
                .iter()
                .any(|f| f.0 == k && f.1 == t && f.2 == c && f.3.as_deref() == to),
            "{k} {t}.{c} -> {to:?} not in {found:#?}"
        );
    };
    has("primary key", "customers", "c_id", None);
    has("primary key", "products", "p_id", None);
    has(
        "foreign key",
        "orders",
        "o_customer",
        Some("customers.c_id"),
    );
    has("foreign key", "orders", "o_product", Some("products.p_id"));
    has("children", "orders", "o_customer", Some("customers.c_id"));
    has("position", "orders", "o_line", Some("customers.c_id"));
    has("primary key", "orders", "o_customer, o_line", None);
    has("offset", "orders", "o_shipped", Some("orders.o_date"));
    has(
        "determined by",
        "customers",
        "c_tier",
        Some("customers.c_segment"),
    );
    has(
        "nulls by",
        "customers",
        "c_agency",
        Some("customers.c_segment"),
    );
    // Frequent cities kept, the rest generated from their pattern.
    assert!(out.spec.contains("name = \"c_city__top\""), "{}", out.spec);
    assert!(
        out.spec.contains("template = \"city-{digits(4)}\""),
        "{}",
        out.spec
    );
    assert_eq!(
        found.iter().filter(|f| f.0 == "foreign key").count(),
        2,
        "{found:#?}"
    );
    assert!(
        out.spec.contains("sequence = { start = 100, step = 3 }"),
        "{}",
        out.spec
    );
    assert!(
        out.spec
            .contains("template = \"+44-{digits(4)}-{digits(6)}\""),
        "{}",
        out.spec
    );
    let d = Dataset::parse(&out.spec, "inferred").unwrap();
    write_dataset(&regen, &d, 4);
    let c = compare(&[s(&orig)], &[s(&regen)], &opts()).unwrap();
    assert!(c.passed(), "{}", c.table());
    assert_eq!(c.keys.len(), 2);
    assert!(c.keys.iter().all(|k| k.missing == Some(0)), "{:?}", c.keys);
}

#[test]
fn a_csv_file_round_trips_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::parse(
        r#"
name = "scores"

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "day"
type = "date32"
uniform = { min = 2020-01-01, max = 2020-12-31 }

[[fields]]
name = "score"
type = "float64"
null_rate = 0.2
normal = { mean = 10.0, std = 2.0 }

[[fields]]
name = "grade"
type = "utf8"
weighted = { values = ["a", "b", "c", "d"], weights = [4, 3, 2, 1] }
"#,
        "csv.toml",
    )
    .unwrap();
    let orig = dir.path().join("scores.csv");
    write_csv(&orig, &spec_rows(&spec, 20_000, 1));
    let out = infer(&[s(&orig)], &opts()).unwrap();
    assert!(out.spec.contains("name = \"scores\""), "{}", out.spec);
    let d = Dataset::parse(&out.spec, "inferred").unwrap();
    let regen = dir.path().join("regen");
    write_dataset(&regen, &d, 2);
    let batches =
        strata_testkit::readback::read_batches(&regen.join("scores").join("scores_0.arrow"))
            .unwrap();
    let regen_csv = dir.path().join("scores_regen.csv");
    write_csv(&regen_csv, &batches);
    let c = compare(&[s(&orig)], &[s(&regen_csv)], &opts()).unwrap();
    assert!(c.passed(), "{}", c.table());
    let score = c.columns.iter().find(|c| c.column == "score").unwrap();
    assert!((score.null_rates.0 - 0.2).abs() < 0.01);
}

#[test]
fn rare_values_and_high_cardinality_values_are_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let secret: Vec<String> = (0..n)
        .map(|i| format!("user-{:08x}@example.org", i * 7919 + 13))
        .collect();
    let mut kind: Vec<&str> = (0..n).map(|i| ["red", "green", "blue"][i % 3]).collect();
    kind[17] = "RARE-VALUE";
    let batch = RecordBatch::try_from_iter([
        (
            "email",
            Arc::new(StringArray::from_iter_values(&secret)) as ArrayRef,
        ),
        ("kind", Arc::new(StringArray::from(kind)) as ArrayRef),
        (
            "n",
            Arc::new(Int64Array::from_iter_values(
                (0..n as i64).map(|i| i * i % 1_000_003),
            )) as ArrayRef,
        ),
    ])
    .unwrap();
    write_ipc(&dir.path().join("people.arrow"), &[batch]);
    let out = infer(&[s(dir.path())], &opts()).unwrap();
    assert!(!out.spec.contains("RARE-VALUE"), "{}", out.spec);
    assert!(out.spec.contains("\"red\""));
    for v in &secret {
        assert!(!out.spec.contains(v.as_str()), "{v} copied");
    }
    // Not even a run of a value: the local part's digits are a slot.
    assert!(!out.spec.contains("user-0000"), "{}", out.spec);
}

#[test]
fn bad_inputs_get_clear_errors_or_documented_fallbacks() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    // A file that is not Parquet.
    std::fs::write(p.join("broken.parquet"), b"PAR1 not really").unwrap();
    let e = infer(&[s(&p.join("broken.parquet"))], &opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("broken.parquet"), "{e}");
    // A missing input.
    let e = infer(&[s(&p.join("nope"))], &opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope") && e.contains("no such file"), "{e}");
    // Mixed schemas in one table's directory.
    let a = RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef)])
        .unwrap();
    let b = RecordBatch::try_from_iter([("y", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef)])
        .unwrap();
    write_ipc(
        &p.join("mixed").join("t").join("t_0.arrow"),
        std::slice::from_ref(&a),
    );
    write_ipc(&p.join("mixed").join("t").join("t_1.arrow"), &[b]);
    let e = infer(&[s(&p.join("mixed"))], &opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("same schema") && e.contains("t_1.arrow"), "{e}");
    // An empty table: a spec of no rows, which parses.
    write_ipc(&p.join("empty").join("e.arrow"), &[a.slice(0, 0)]);
    let out = infer(&[s(&p.join("empty"))], &opts()).unwrap();
    assert!(out.spec.contains("rows = 0"), "{}", out.spec);
    // A type no spec holds: left out, with a comment.
    let iv =
        arrow_array::IntervalDayTimeArray::from(vec![arrow_buffer::IntervalDayTime::new(1, 2); 3]);
    let batch = RecordBatch::try_from_iter([
        ("x", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
        ("span", Arc::new(iv) as ArrayRef),
    ])
    .unwrap();
    write_ipc(&p.join("odd").join("odd.arrow"), &[batch]);
    let out = infer(&[s(&p.join("odd"))], &opts()).unwrap();
    assert!(
        out.spec
            .contains("# column span (Interval(DayTime)) left out"),
        "{}",
        out.spec
    );
    // A huge categorical column: kept as a pattern, its values dropped.
    let many = StringArray::from_iter_values((0..50_000).map(|i| format!("cat{}", i % 20_000)));
    let batch = RecordBatch::try_from_iter([("c", Arc::new(many) as ArrayRef)]).unwrap();
    write_ipc(&p.join("wide").join("wide.arrow"), &[batch]);
    let out = infer(&[s(&p.join("wide"))], &opts()).unwrap();
    assert!(
        out.spec.contains("only the pattern is kept"),
        "{}",
        out.spec
    );
    assert!(!out.spec.contains("cat1234"), "{}", out.spec);
    // Columns of nulls only: a type, a null rate of 1 and a plain value.
    let nulls = RecordBatch::try_from_iter([
        (
            "f",
            arrow_array::new_null_array(&arrow_schema::DataType::Float64, 5),
        ),
        (
            "d",
            arrow_array::new_null_array(&arrow_schema::DataType::Date32, 5),
        ),
    ])
    .unwrap();
    write_ipc(&p.join("nulls").join("nulls.arrow"), &[nulls]);
    let out = infer(&[s(&p.join("nulls"))], &opts()).unwrap();
    assert!(
        out.spec.contains("null_rate = 1.0\nconstant = 0.0"),
        "{}",
        out.spec
    );
    // Bad options.
    let bad = Options {
        min_count: 0,
        ..opts()
    };
    assert!(
        infer(&[s(&p.join("wide"))], &bad)
            .unwrap_err()
            .to_string()
            .contains("--min-count")
    );
}

#[test]
fn inference_is_deterministic_and_sampling_reads_fewer_rows() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::preset("events").unwrap();
    for part in 0..4 {
        let b = spec_rows(&spec, 40_000, part);
        write_ipc(&dir.path().join(format!("events_{part}.arrow")), &b);
    }
    let a = infer(&[s(dir.path())], &opts()).unwrap();
    let b = infer(&[s(dir.path())], &opts()).unwrap();
    assert_eq!(a.spec, b.spec);
    assert_eq!(a.report.tables[0].rows, 160_000);
    let sampled = Options {
        sample: strata_infer::Sample::Rows(50_000),
        ..opts()
    };
    let c = infer(&[s(dir.path())], &sampled).unwrap();
    assert!(
        c.report.tables[0].scanned < 160_000,
        "{}",
        c.report.tables[0].scanned
    );
    assert_eq!(c.report.tables[0].rows, 160_000);
    Dataset::parse(&c.spec, "sampled").unwrap();
}

/// `d`'s tables as Parquet files of `group`-row row groups.
fn write_parquet_dataset(dir: &Path, d: &Dataset, seed: u64, group: usize) {
    let ipc = tempfile::tempdir().unwrap();
    write_dataset(ipc.path(), d, seed);
    for table in &d.tables {
        let name = &table.spec.name;
        let batches = strata_testkit::readback::read_batches(
            &ipc.path().join(name).join(format!("{name}_0.arrow")),
        )
        .unwrap();
        std::fs::create_dir_all(dir.join(name)).unwrap();
        let f = std::fs::File::create(dir.join(name).join(format!("{name}_0.parquet"))).unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(group))
            .build();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(f, batches[0].schema(), Some(props)).unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.close().unwrap();
    }
}

#[test]
fn a_sampled_scan_keeps_keys_and_takes_null_counts_from_statistics() {
    let dir = tempfile::tempdir().unwrap();
    write_parquet_dataset(
        dir.path(),
        &Dataset::parse(SHOP, "shop.toml").unwrap(),
        3,
        256,
    );
    let full = infer(&[s(dir.path())], &opts()).unwrap();
    let sampled = Options {
        sample: strata_infer::Sample::Rows(1000),
        ..opts()
    };
    let part = infer(&[s(dir.path())], &sampled).unwrap();
    let customers = |r: &strata_infer::Report| {
        r.tables
            .iter()
            .find(|t| t.name == "customers")
            .unwrap()
            .clone()
    };
    let (a, b) = (customers(&full.report), customers(&part.report));
    assert!(
        b.scanned < a.scanned && b.rows == a.rows,
        "{} {}",
        b.scanned,
        a.scanned
    );
    // Nulls over every row group, from the statistics: the full scan's.
    let balance = |t: &strata_infer::TableReport| {
        t.columns
            .iter()
            .find(|c| c.name == "c_balance")
            .unwrap()
            .null_rate
    };
    assert_eq!(balance(&a), balance(&b));
    let rel = |r: &strata_infer::Report| -> Vec<(String, String, String, Option<String>)> {
        r.relationships
            .iter()
            .filter(|r| {
                r.kind == "primary key" && !r.column.contains(',') || r.kind == "foreign key"
            })
            .map(|r| {
                (
                    r.kind.clone(),
                    r.table.clone(),
                    r.column.clone(),
                    r.target.clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        rel(&part.report),
        rel(&full.report),
        "{:#?}",
        part.report.relationships
    );
    // The key's sequence spans the whole table, not the rows read.
    assert!(
        part.spec.contains("sequence = { start = 100, step = 3 }"),
        "{}",
        part.spec
    );
}

#[test]
fn skewed_references_are_written_as_zipf() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SHOP.replace(
        r#"ref = { table = "products", field = "p_id" }"#,
        r#"ref = { table = "products", field = "p_id", zipf = { s = 1.2 } }"#,
    );
    write_dataset(dir.path(), &Dataset::parse(&spec, "shop.toml").unwrap(), 3);
    let out = infer(&[s(dir.path())], &opts()).unwrap();
    let fk = out
        .report
        .relationships
        .iter()
        .find(|r| r.kind == "foreign key" && r.column == "o_product")
        .unwrap();
    assert!(fk.evidence.contains("Zipf s = 1."), "{}", fk.evidence);
    assert!(
        out.spec
            .contains(r#"ref = { table = "products", field = "p_id", zipf = { s = 1."#),
        "{}",
        out.spec
    );
    // Uniform references are not called skewed.
    let uniform = infer(&[s(dir.path())], &opts()).unwrap();
    let fk = uniform
        .report
        .relationships
        .iter()
        .find(|r| r.column == "o_customer" && r.kind == "foreign key")
        .unwrap();
    assert!(!fk.evidence.contains("Zipf"), "{}", fk.evidence);
}

#[test]
fn an_uneven_weekday_shape_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::parse(
        r#"
name = "days"

[[fields]]
name = "day"
type = "date32"
quantiles = { values = [2024-01-01, 2024-12-31], weekdays = [1, 1, 1, 1, 1, 0, 0] }
"#,
        "days.toml",
    )
    .unwrap();
    write_ipc(&dir.path().join("days.arrow"), &spec_rows(&spec, 20_000, 1));
    let out = infer(&[s(dir.path())], &opts()).unwrap();
    assert!(out.spec.contains("weekdays = [0.19"), "{}", out.spec);
    assert!(out.spec.contains(", 0.0, 0.0] }"), "{}", out.spec);
    let d = Dataset::parse(&out.spec, "inferred").unwrap();
    let regen = tempfile::tempdir().unwrap();
    write_dataset(regen.path(), &d, 2);
    let c = compare(&[s(dir.path())], &[s(regen.path())], &opts()).unwrap();
    assert!(c.passed(), "{}", c.table());
}

#[test]
fn evenly_spread_references_are_written_balanced() {
    let dir = tempfile::tempdir().unwrap();
    let spec = r#"
name = "geo"

[[tables]]
name = "region"
rows = 5

[[tables.fields]]
name = "r_id"
type = "int64"
sequence = { start = 0 }

[[tables]]
name = "nation"
rows = 25

[[tables.fields]]
name = "n_id"
type = "int64"
sequence = { start = 0 }

[[tables.fields]]
name = "n_region"
type = "int64"
ref = { table = "region", field = "r_id", balanced = true }
"#;
    write_dataset(dir.path(), &Dataset::parse(spec, "geo.toml").unwrap(), 1);
    let out = infer(&[s(dir.path())], &opts()).unwrap();
    assert!(
        out.spec
            .contains(r#"ref = { table = "region", field = "r_id", balanced = true }"#),
        "{}",
        out.spec
    );
    let regen = tempfile::tempdir().unwrap();
    write_dataset(
        regen.path(),
        &Dataset::parse(&out.spec, "inferred").unwrap(),
        9,
    );
    let c = compare(&[s(dir.path())], &[s(regen.path())], &opts()).unwrap();
    // Five of each region on both sides: no sampling noise at all.
    let col = c.columns.iter().find(|c| c.column == "n_region").unwrap();
    assert_eq!(col.distance, 0.0, "{}", c.table());
}
