//! `collect` over files strata writes, checked against brute-force counts
//! of the same files.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray as _;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use strata_gen::{BatchGenerator as _, Dataset};
use strata_report::model::Report;
use strata_report::{Options, collect};

/// A one-table spec whose `k` is Zipf over 1..=200 with exponent `s`.
fn zipf_spec(s: f64) -> Dataset {
    Dataset::parse(
        &format!(
            r#"
name = "skewed"

[[fields]]
name = "id"
type = "int64"
sequence = {{ start = 1 }}

[[fields]]
name = "k"
type = "int64"
zipf = {{ s = {s}, n = 200 }}

[[fields]]
name = "kind"
type = "utf8"
null_rate = 0.1
weighted = {{ values = ["a", "b", "c"], weights = [6, 3, 1] }}

[[fields]]
name = "amount"
type = "float64"
uniform = {{ min = 0.0, max = 100.0 }}
"#
        ),
        "skewed.toml",
    )
    .unwrap()
}

/// Writes `rows` rows of `spec`'s one table with strata's pipeline into
/// `dir` (two files).
fn generate(spec: &Dataset, dir: &Path, rows: u64) {
    let g = spec.generator(0, 42, 1.0).unwrap();
    let mut cfg = strata_pipeline::generate::GenerateConfig::new(spec.tables[0].spec.name.clone());
    cfg.target_records = rows;
    cfg.num_writers = 2;
    cfg.threads = 2;
    cfg.record_batch_size = 8192;
    cfg.row_group_rows = 16_384;
    cfg.output_dir = dir.to_path_buf();
    strata_pipeline::generate::generate(&g, &cfg, &|_| {}).unwrap();
}

fn parquet_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    v.sort();
    v
}

fn batches(dir: &Path) -> Vec<RecordBatch> {
    parquet_files(dir)
        .iter()
        .flat_map(|f| strata_testkit::readback::read_batches(f).unwrap())
        .collect()
}

fn opts(spec: Option<Dataset>) -> Options {
    Options {
        spec,
        ..Options::default()
    }
}

fn column<'a>(r: &'a Report, table: &str, name: &str) -> &'a strata_report::model::ColumnReport {
    r.tables
        .iter()
        .find(|t| t.name == table)
        .unwrap_or_else(|| panic!("no table {table}"))
        .columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn a_wrong_zipf_exponent_is_flagged_and_the_fit_finds_the_real_one() {
    let dir = tempfile::tempdir().unwrap();
    generate(&zipf_spec(1.3), dir.path(), 200_000);
    let input = vec![dir.path().display().to_string()];

    let wrong = collect(&input, &opts(Some(zipf_spec(1.0)))).unwrap();
    let flagged: Vec<_> = wrong.summary.iter().filter(|r| r.flagged).collect();
    assert!(
        flagged.iter().any(|r| r.column == "k"),
        "{:#?}",
        wrong.summary
    );
    // Flagged rows come first.
    let first_ok = wrong.summary.iter().position(|r| !r.flagged).unwrap();
    assert!(wrong.summary[first_ok..].iter().all(|r| !r.flagged));
    let k = column(&wrong, "skewed", "k");
    let rf = k.rank_frequency.as_ref().unwrap();
    let s = rf.fitted_s.unwrap();
    assert!((s - 1.3).abs() < 0.1, "fitted {s}");
    assert_eq!(rf.expected, Some((1.0, 200)));
    assert!(k.top_exact);

    let right = collect(&input, &opts(Some(zipf_spec(1.3)))).unwrap();
    assert!(
        right.summary.iter().all(|r| !r.flagged),
        "{:#?}",
        right
            .summary
            .iter()
            .filter(|r| r.flagged)
            .collect::<Vec<_>>()
    );
    assert!(!right.summary.is_empty());
    assert_eq!(right.title, "skewed");

    // Oracle: every count of `k` and `kind` from the files themselves.
    let all = batches(dir.path());
    let mut ks: HashMap<i64, u64> = HashMap::new();
    let mut kinds: HashMap<String, u64> = HashMap::new();
    let mut kind_nulls = 0u64;
    for b in &all {
        for v in b
            .column_by_name("k")
            .unwrap()
            .as_primitive::<Int64Type>()
            .iter()
        {
            *ks.entry(v.unwrap()).or_default() += 1;
        }
        let kind = b.column_by_name("kind").unwrap();
        let kind = arrow_cast::cast(kind, &arrow_schema::DataType::Utf8).unwrap();
        for v in kind.as_string::<i32>().iter() {
            match v {
                Some(v) => *kinds.entry(v.to_string()).or_default() += 1,
                None => kind_nulls += 1,
            }
        }
    }
    let k = column(&right, "skewed", "k");
    for t in &k.top {
        assert_eq!(t.count, ks[&t.value.parse::<i64>().unwrap()], "{}", t.value);
    }
    assert_eq!(
        k.top.iter().map(|t| t.count).sum::<u64>() + k.other,
        200_000
    );
    let hist = k.histogram.as_ref().unwrap();
    assert!(!hist.sampled);
    for b in &hist.bins {
        let want: u64 = ks
            .iter()
            .filter(|(v, _)| (**v as f64) >= b.lo && (**v as f64) < b.hi)
            .map(|(_, c)| c)
            .sum();
        assert_eq!(b.count, want, "bin {}", b.label);
    }
    let expected = hist.expected.as_ref().unwrap();
    assert!((expected.iter().sum::<f64>() - 200_000.0).abs() < 1.0);
    let rf = k.rank_frequency.as_ref().unwrap();
    assert_eq!(rf.expected, Some((1.3, 200)));
    let mut sorted: Vec<u64> = ks.values().copied().collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    for &(rank, count) in &rf.points {
        assert_eq!(count, sorted[rank as usize - 1]);
    }

    let kind = column(&right, "skewed", "kind");
    assert_eq!(kind.nulls.last().unwrap().nulls, kind_nulls);
    assert_eq!(kind.nulls.last().unwrap().expected, Some(0.1));
    for t in &kind.top {
        assert_eq!(t.count, kinds[&t.value]);
    }
    let a = kind.top.iter().find(|t| t.value == "a").unwrap();
    assert!((a.expected_share.unwrap() - 0.6).abs() < 1e-12);

    // The float column: a sampled histogram scaled to the count, with a
    // flat expectation.
    let amount = column(&right, "skewed", "amount");
    let h = amount.histogram.as_ref().unwrap();
    assert!(h.sampled);
    let e = h.expected.as_ref().unwrap();
    assert!(e.iter().all(|x| (x - 5000.0).abs() < 1.0), "{e:?}");

    // The layout: two files of 200,000 rows in row groups of 16,384.
    let layout = right.tables[0].layout.as_ref().unwrap();
    assert_eq!(layout.files.len(), 2);
    assert_eq!(layout.files.iter().map(|f| f.rows).sum::<u64>(), 200_000);
    assert!(
        layout
            .files
            .iter()
            .all(|f| f.row_groups.iter().all(|&g| g <= 16_384))
    );
    assert_eq!(layout.key.as_deref(), Some("id"));
    let r0 = layout.files[0].key_range.as_ref().unwrap();
    assert_eq!((r0.lo, r0.lo_label.as_str()), (1.0, "1"));

    // Deterministic: the same report again.
    let again = collect(&input, &opts(Some(zipf_spec(1.3)))).unwrap();
    assert_eq!(
        serde_json::to_string(&right).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

const ORDERS: &str = r#"
name = "shop"

[[tables]]
name = "customers"
rows = 2000

[[tables.fields]]
name = "c_custkey"
type = "int64"
sequence = { start = 1 }

[[tables]]
name = "orders"
rows = 20000

[[tables.fields]]
name = "o_orderkey"
type = "int64"
sequence = { start = 1 }

[[tables.fields]]
name = "o_custkey"
type = "int64"
ref = { table = "customers", field = "c_custkey", zipf = { s = 0.8 } }
"#;

fn write_parquet(path: &Path, batches: &[RecordBatch]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), None).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

fn table_batch(spec: &Dataset, table: usize, rows: usize) -> RecordBatch {
    let g = spec.generator(table, 7, 1.0).unwrap();
    let mut scratch = Default::default();
    g.generate(0, rows, &mut scratch).unwrap()
}

/// Orphans (child keys with no parent), parents referenced, children per
/// parent key, by brute force.
fn oracle(child: &[i64], parent: &[i64]) -> (u64, u64, HashMap<u64, u64>) {
    let keys: HashSet<i64> = parent.iter().copied().collect();
    let mut per: HashMap<i64, u64> = HashMap::new();
    let mut orphans = 0;
    for c in child {
        if keys.contains(c) {
            *per.entry(*c).or_default() += 1;
        } else {
            orphans += 1;
        }
    }
    let mut fan: HashMap<u64, u64> = HashMap::new();
    for p in &keys {
        *fan.entry(per.get(p).copied().unwrap_or(0).min(51))
            .or_default() += 1;
    }
    (orphans, per.len() as u64, fan)
}

fn ints(b: &RecordBatch, name: &str) -> Vec<i64> {
    b.column_by_name(name)
        .unwrap()
        .as_primitive::<Int64Type>()
        .iter()
        .flatten()
        .collect()
}

#[test]
fn broken_references_count_their_orphans_exactly() {
    let spec = Dataset::parse(ORDERS, "shop.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let customers = table_batch(&spec, 0, 2000);
    let orders = table_batch(&spec, 1, 20000);
    // Every 7th order refers to a customer that does not exist.
    let broken: Vec<i64> = ints(&orders, "o_custkey")
        .iter()
        .enumerate()
        .map(|(i, &k)| if i % 7 == 3 { k + 1_000_000 } else { k })
        .collect();
    let broken_orders = RecordBatch::try_new(
        orders.schema(),
        vec![
            orders.column(0).clone(),
            Arc::new(Int64Array::from(broken.clone())) as ArrayRef,
        ],
    )
    .unwrap();
    write_parquet(
        &dir.path().join("customers/customers.parquet"),
        std::slice::from_ref(&customers),
    );
    write_parquet(&dir.path().join("orders/orders.parquet"), &[broken_orders]);
    let input = vec![dir.path().display().to_string()];
    let r = collect(&input, &opts(Some(spec.clone()))).unwrap();
    let t = r.tables.iter().find(|t| t.name == "orders").unwrap();
    assert_eq!(t.references.len(), 1, "{:?}", t.references);
    let rf = &t.references[0];
    let (orphans, referenced, fan) = oracle(&broken, &ints(&customers, "c_custkey"));
    assert_eq!(rf.source, "spec");
    assert_eq!(
        (rf.parent.as_str(), rf.parent_column.as_str()),
        ("customers", "c_custkey")
    );
    assert_eq!(rf.checked, 20000);
    assert_eq!(rf.orphans, orphans);
    assert_eq!(orphans, 20000 / 7 + u64::from(20000 % 7 > 3));
    assert_eq!(rf.referenced, referenced);
    assert_eq!(rf.parent_rows, 2000);
    for &(k, n) in &rf.fanout {
        assert_eq!(n, fan.get(&k).copied().unwrap_or(0), "fan-out {k}");
    }
    assert_eq!(rf.fanout.iter().map(|f| f.1).sum::<u64>(), 2000);
    assert_eq!(rf.fanout[0].0, 0);
    // The skewed reference: its rank-frequency law is the spec's.
    let c = column(&r, "orders", "o_custkey");
    assert_eq!(
        c.rank_frequency.as_ref().unwrap().expected,
        Some((0.8, 2000))
    );

    // Without a spec, the intact dataset's foreign key is found and
    // counted the same way.
    let intact = tempfile::tempdir().unwrap();
    write_parquet(
        &intact.path().join("customers/c.parquet"),
        std::slice::from_ref(&customers),
    );
    write_parquet(
        &intact.path().join("orders/o.parquet"),
        std::slice::from_ref(&orders),
    );
    let r = collect(&[intact.path().display().to_string()], &opts(None)).unwrap();
    let t = r.tables.iter().find(|t| t.name == "orders").unwrap();
    let rf = t
        .references
        .iter()
        .find(|x| x.column == "o_custkey")
        .unwrap_or_else(|| panic!("{:?}", t.references));
    assert_eq!(rf.source, "inferred");
    assert_eq!(rf.orphans, 0);
    let (_, referenced, _) = oracle(&ints(&orders, "o_custkey"), &ints(&customers, "c_custkey"));
    assert_eq!(rf.referenced, referenced);
    assert!(r.summary.is_empty());
}

#[test]
fn bad_inputs_are_errors_or_empty_sections() {
    let dir = tempfile::tempdir().unwrap();
    // Missing input.
    let missing = dir.path().join("nothing").display().to_string();
    assert!(collect(&[missing], &Options::default()).is_err());
    // No input at all.
    assert!(collect(&[], &Options::default()).is_err());
    // A corrupt Parquet file.
    let bad = dir.path().join("bad/bad.parquet");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, b"PAR1 this is not parquet PAR1").unwrap();
    assert!(collect(&[bad.display().to_string()], &Options::default()).is_err());

    // Empty tables, all-null columns, NaN and infinite floats.
    let odd = dir.path().join("odd");
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("x", arrow_schema::DataType::Float64, true),
        arrow_schema::Field::new("s", arrow_schema::DataType::Utf8, true),
    ]));
    let x = Float64Array::from(vec![
        Some(f64::NAN),
        Some(f64::INFINITY),
        Some(1.0),
        None,
        Some(f64::NEG_INFINITY),
        Some(2.5),
    ]);
    let s = StringArray::from(vec![None::<&str>; 6]);
    let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(x), Arc::new(s)]).unwrap();
    write_parquet(&odd.join("weird/w.parquet"), &[b]);
    let empty = RecordBatch::new_empty(schema);
    write_parquet(&odd.join("empty/e.parquet"), &[empty]);
    let spec = zipf_spec(1.0);
    let r = collect(&[odd.display().to_string()], &opts(Some(spec))).unwrap();
    assert_eq!(r.tables.len(), 2);
    let e = r.tables.iter().find(|t| t.name == "empty").unwrap();
    assert_eq!(e.rows, 0);
    assert!(e.columns.iter().all(|c| c.stats.is_none()));
    let w = column(&r, "weird", "x");
    assert_eq!(w.nulls[0].nulls, 1);
    assert_eq!(w.stats.as_ref().unwrap().count, 4);
    let h = w.histogram.as_ref().unwrap();
    assert_eq!(h.bins.first().unwrap().lo, 1.0);
    let s = column(&r, "weird", "s");
    assert_eq!((s.nulls[0].nulls, s.slots), (6, 6));
    assert!(s.stats.is_none() && s.top.is_empty());
    // The spec's one table has no files here: noted, not checked.
    assert!(r.summary.is_empty());
    assert!(
        r.notes.iter().any(|n| n.contains("no files")),
        "{:?}",
        r.notes
    );
    // The JSON of a report with infinities still writes.
    serde_json::to_string(&r).unwrap();
}

#[test]
fn partitions_key_ranges_and_ipc_files() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("name", arrow_schema::DataType::Utf8, false),
    ]));
    let part = |lo: i64, n: i64| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(lo..lo + n)) as ArrayRef,
                Arc::new(StringArray::from_iter_values(
                    (lo..lo + n).map(|i| format!("n{:05}", i % 97)),
                )),
            ],
        )
        .unwrap()
    };
    let t = dir.path().join("t");
    write_parquet(&t.join("k=1/a.parquet"), &[part(0, 100)]);
    write_parquet(&t.join("k=2/b.parquet"), &[part(50, 100)]);
    write_parquet(&t.join("k=2/c.parquet"), &[part(500, 10)]);
    let r = collect(&[t.display().to_string()], &Options::default()).unwrap();
    let l = r.tables[0].layout.as_ref().unwrap();
    assert_eq!(l.key.as_deref(), Some("id"));
    let paths: Vec<&str> = l.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["k=1/a.parquet", "k=2/b.parquet", "k=2/c.parquet"]);
    assert_eq!(l.partitions.len(), 2);
    assert_eq!(
        (
            l.partitions[1].path.as_str(),
            l.partitions[1].files,
            l.partitions[1].rows
        ),
        ("k=2", 2, 110)
    );
    let b = l.files[1].key_range.as_ref().unwrap();
    assert_eq!((b.lo, b.hi, b.hi_label.as_str()), (50.0, 149.0, "149"));
    for f in &l.files {
        assert_eq!(f.bytes, std::fs::metadata(t.join(&f.path)).unwrap().len());
    }
    // Strings: 97 values, counted exactly.
    let name = column(&r, "t", "name");
    assert!(name.top_exact);
    assert_eq!(name.stats.as_ref().unwrap().distinct, 97);

    // An Arrow IPC file: rows, no row groups.
    let ipc = dir.path().join("ev.arrow");
    let file = std::fs::File::create(&ipc).unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(file, &schema).unwrap();
    w.write(&part(0, 30)).unwrap();
    w.finish().unwrap();
    let r = collect(&[ipc.display().to_string()], &Options::default()).unwrap();
    let f = &r.tables[0].layout.as_ref().unwrap().files[0];
    assert_eq!((f.rows, f.row_groups.len()), (30, 0));
}

#[test]
fn many_distinct_strings_get_heavy_hitters() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "w",
        arrow_schema::DataType::Utf8,
        false,
    )]));
    // "hot" 30% of rows, "warm" 10%, the rest 60,000 distinct values.
    let values: Vec<String> = (0..100_000)
        .map(|i| match i % 10 {
            0 | 3 | 6 => "hot".to_string(),
            1 => "warm".to_string(),
            _ => format!("v{i}"),
        })
        .collect();
    let b = RecordBatch::try_new(
        schema,
        vec![Arc::new(StringArray::from_iter_values(values.iter())) as ArrayRef],
    )
    .unwrap();
    write_parquet(&dir.path().join("words.parquet"), &[b]);
    let r = collect(&[dir.path().display().to_string()], &Options::default()).unwrap();
    let w = column(&r, "words", "w");
    assert!(!w.top_exact);
    assert_eq!(w.top[0].value, "hot");
    assert_eq!(w.top[1].value, "warm");
    // Values the sketch cannot tell from the rest are not listed.
    assert_eq!(w.top.len(), 2);
    // Low by at most the sketch's error (100,000 / 1,001).
    assert!(
        w.top[0].count <= 30_000 && w.top[0].count + 100 >= 30_000,
        "{}",
        w.top[0].count
    );
    assert!(w.top[1].count <= 10_000 && w.top[1].count + 100 >= 10_000);
    let st = w.stats.as_ref().unwrap();
    assert!(!st.distinct_exact);
    assert!(
        (st.distinct as f64 - 60_002.0).abs() < 0.03 * 60_002.0,
        "{}",
        st.distinct
    );
    assert_eq!(
        w.other + w.top.iter().map(|t| t.count).sum::<u64>(),
        100_000
    );
}

#[test]
fn comparisons_pair_tables_and_list_distances() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    generate(&zipf_spec(1.3), a.path(), 20_000);
    generate(&zipf_spec(0.6), b.path(), 20_000);
    let (oa, ob) = (
        vec![a.path().display().to_string()],
        vec![b.path().display().to_string()],
    );
    let cmp = strata_infer::compare(&oa, &ob, &strata_infer::Options::default()).unwrap();
    let r = strata_report::collect_comparison(&oa, &ob, &cmp, &Options::default()).unwrap();
    assert_eq!(r.comparisons.len(), 1);
    assert_eq!(r.comparisons[0].original.rows, 20_000);
    let k = r
        .summary
        .iter()
        .find(|s| s.column == "k" && s.check == "ks")
        .unwrap();
    assert!(k.flagged);
    assert!(r.summary[0].flagged);
    let d = cmp.columns.iter().find(|c| c.column == "k").unwrap();
    assert_eq!(k.realised, d.distance);
}

#[test]
fn the_orders_preset_against_its_own_spec_flags_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Dataset::preset("orders").unwrap();
    let mut base = strata_pipeline::generate::GenerateConfig::new("orders");
    base.output_dir = dir.path().to_path_buf();
    base.num_writers = 2;
    base.threads = 2;
    let flow = strata_pipeline::flow::Flow::new(spec.clone(), &[0, 1, 2], &base, 0.01).unwrap();
    flow.run(Default::default(), &|_| {}).unwrap();
    let r = collect(&[dir.path().display().to_string()], &opts(Some(spec))).unwrap();
    assert_eq!(r.tables.len(), 3);
    let flagged: Vec<_> = r.summary.iter().filter(|s| s.flagged).collect();
    assert!(flagged.is_empty(), "{flagged:#?}");
    // Histogram checks of numeric generators are among the rows.
    assert!(
        r.summary
            .iter()
            .any(|s| s.column == "c_acctbal" && s.check.starts_with("bin ")),
        "{:#?}",
        r.summary
    );
    let refs = |t: &str| {
        r.tables
            .iter()
            .find(|x| x.name == t)
            .unwrap()
            .references
            .clone()
    };
    let o = refs("orders");
    assert_eq!(o.len(), 1, "{o:?}");
    assert_eq!(
        (o[0].column.as_str(), o[0].orphans, o[0].checked),
        ("o_custkey", 0, 15_000)
    );
    let l = refs("lineitem");
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!((l[0].parent.as_str(), l[0].orphans), ("orders", 0));
    // One to seven lines per order, none without.
    assert!(
        l[0].fanout
            .iter()
            .all(|&(k, n)| (1..=7).contains(&k) || n == 0)
    );
    assert_eq!(l[0].referenced, 15_000);
    // Whole quantities of a decimal: a bin per value, counted exactly.
    let q = column(&r, "lineitem", "l_quantity");
    let h = q.histogram.as_ref().unwrap();
    assert_eq!((h.bins.len(), h.sampled), (50, false));
    assert_eq!((h.bins[0].label.as_str(), h.bins[0].lo), ("1.00", 1.0));
    let e = h.expected.as_ref().unwrap();
    assert!(e.iter().all(|x| (x / e[0] - 1.0).abs() < 1e-9));
    // A decimal's labels keep its scale; a date's are dates.
    let bal = column(&r, "customers", "c_acctbal");
    assert!(bal.stats.as_ref().unwrap().min_label.contains('.'));
    let date = column(&r, "orders", "o_orderdate");
    assert_eq!(date.kind, strata_report::model::ColumnKind::Time);
    assert!(
        date.stats
            .as_ref()
            .unwrap()
            .min_label
            .starts_with("1992-01-0")
    );
    assert!(date.histogram.as_ref().unwrap().expected.is_some());
}

#[test]
fn nested_columns_have_a_null_share_per_level() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Dataset::preset("contacts").unwrap();
    generate(&spec, dir.path(), 50_000);
    let r = collect(&[dir.path().display().to_string()], &opts(Some(spec))).unwrap();
    let names: Vec<&str> = r.tables[0]
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "name",
            "phones",
            "phones[]",
            "phones[].number",
            "phones[].phone_type"
        ]
    );
    let flagged: Vec<_> = r.summary.iter().filter(|s| s.flagged).collect();
    assert!(flagged.is_empty(), "{flagged:#?}");
    assert!(r.summary.iter().any(|s| s.column == "phones[].phone_type"));
    let number = column(&r, "contacts", "phones[].number");
    let paths: Vec<&str> = number.nulls.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["phones", "phones[]", "phones[].number"]);
    assert!(
        number.nulls.iter().all(|l| l.expected.is_some()),
        "{:?}",
        number.nulls
    );
    // Oracle: the phones lists' nulls and lengths from the files.
    let mut nulls = 0u64;
    let mut lengths: HashMap<u64, u64> = HashMap::new();
    for b in batches(dir.path()) {
        let l = b.column_by_name("phones").unwrap().as_list::<i32>();
        for i in 0..l.len() {
            if l.is_null(i) {
                nulls += 1;
            } else {
                *lengths.entry(l.value_length(i) as u64).or_default() += 1;
            }
        }
    }
    let phones = column(&r, "contacts", "phones");
    assert_eq!(phones.nulls[0].nulls, nulls);
    let h = phones.lengths.as_ref().unwrap();
    for b in &h.bins {
        assert_eq!(b.count, lengths.get(&(b.lo as u64)).copied().unwrap_or(0));
    }
    let e = h.expected.as_ref().unwrap();
    assert!((e.iter().sum::<f64>() - (50_000 - nulls) as f64).abs() < 1e-6);
    let kind = column(&r, "contacts", "phones[].phone_type");
    assert_eq!(kind.top[0].value, "Mobile");
    assert!((kind.top[0].expected_share.unwrap() - 0.55).abs() < 1e-12);
}

#[test]
fn delta_and_iceberg_directories_report_their_data_files() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "id",
        arrow_schema::DataType::Int64,
        false,
    )]));
    let batch = |lo: i64| {
        RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(lo..lo + 10)) as ArrayRef],
        )
        .unwrap()
    };
    let delta = dir.path().join("events");
    write_parquet(&delta.join("part-00000.parquet"), &[batch(0)]);
    write_parquet(&delta.join("day=1/part-00001.parquet"), &[batch(10)]);
    std::fs::create_dir_all(delta.join("_delta_log")).unwrap();
    std::fs::write(delta.join("_delta_log/00000000000000000000.json"), "{}\n").unwrap();
    let r = collect(&[delta.display().to_string()], &Options::default()).unwrap();
    assert_eq!(r.tables.len(), 1);
    assert_eq!(
        (r.tables[0].name.as_str(), r.tables[0].rows),
        ("events", 20)
    );
    let files = &r.tables[0].layout.as_ref().unwrap().files;
    assert_eq!(files.len(), 2);

    let ice = dir.path().join("ice");
    write_parquet(&ice.join("data/00000-0.parquet"), &[batch(0)]);
    std::fs::create_dir_all(ice.join("metadata")).unwrap();
    std::fs::write(ice.join("metadata/v1.metadata.json"), "{}").unwrap();
    let r = collect(&[ice.display().to_string()], &Options::default()).unwrap();
    assert_eq!((r.tables.len(), r.tables[0].rows), (1, 10));
    assert_eq!(
        r.tables[0].layout.as_ref().unwrap().files[0].path,
        "data/00000-0.parquet"
    );
}

#[test]
fn a_spec_of_another_shape_is_a_note_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("k", arrow_schema::DataType::Utf8, false),
    ]));
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..100)) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                (0..100).map(|i| format!("x{}", i % 5)),
            )),
        ],
    )
    .unwrap();
    write_parquet(&dir.path().join("skewed.parquet"), &[b]);
    let r = collect(
        &[dir.path().display().to_string()],
        &opts(Some(zipf_spec(1.0))),
    )
    .unwrap();
    assert_eq!(r.tables[0].rows, 100);
    assert!(
        r.notes.iter().any(|n| n.contains("kind, amount")),
        "{:?}",
        r.notes
    );
    let k = column(&r, "skewed", "k");
    assert_eq!(k.top.len(), 5);
    assert!(k.top.iter().all(|t| t.count == 20));

    // Strings where the spec has lists: the checks stop, the profile
    // stays.
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("name", arrow_schema::DataType::Utf8, true),
        arrow_schema::Field::new("phones", arrow_schema::DataType::Utf8, true),
    ]));
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from_iter_values(["a", "b"])) as ArrayRef,
            Arc::new(StringArray::from_iter_values(["1", "2"])),
        ],
    )
    .unwrap();
    let other = tempfile::tempdir().unwrap();
    write_parquet(&other.path().join("contacts.parquet"), &[b]);
    let spec = Dataset::preset("contacts").unwrap();
    let r = collect(&[other.path().display().to_string()], &opts(Some(spec))).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("not checked against the spec")),
        "{:?}",
        r.notes
    );
    assert!(r.summary.is_empty());
    assert_eq!(column(&r, "contacts", "phones").top.len(), 2);
}
