//! Stratified tables (`stratified = true`): each top-level field's
//! uniform number of row i drawn within stratum `(i * m + o) mod N` of the
//! table's N, so that its values take one draw from each of N
//! equal-probability strata (every value of a uniform over N integers
//! once, a category's share exact to one row), whatever the batching and
//! parts; other generators, `when` cases of their own, nulls and tables
//! without the option draw as before; bad uses get one clear error.

use arrow_array::{
    Array, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int64Array, RecordBatch,
    StringArray, TimestampSecondArray,
};
use arrow_select::concat::concat_batches;
use strata_gen::dist::normal_cdf;
use strata_gen::{BatchGenerator, Dataset};

use crate::dataset::all_rows;

/// A dataset of one table `t` of `rows` (`rows = 1000`, ...) with
/// `option` (`stratified = true`, or nothing) and `fields`.
fn spec(rows: &str, option: &str, fields: &str) -> String {
    format!("name = \"d\"\n[[tables]]\nname = \"t\"\n{rows}\n{option}\n{fields}")
}

/// [`spec`] stratified.
fn stratified(rows: &str, fields: &str) -> String {
    spec(rows, "stratified = true", fields)
}

/// One field `x` of `type` drawn by `generator`.
fn field(ty: &str, generator: &str) -> String {
    format!("[[tables.fields]]\nname = \"x\"\ntype = \"{ty}\"\n{generator}\n")
}

/// Table `t` of `text` at `seed` and scale `scale`, in batches of `batch`
/// rows, as one batch.
fn rows_of(text: &str, seed: u64, scale: f64, batch: u64) -> RecordBatch {
    let d = Dataset::parse(text, "d.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let all = all_rows(&d, "t", seed, scale, batch);
    concat_batches(&all[0].schema(), &all).unwrap()
}

fn rows(text: &str, seed: u64) -> RecordBatch {
    rows_of(text, seed, 1.0, 1000)
}

fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("column {name} has another type"))
}

fn ints(b: &RecordBatch, name: &str) -> Vec<i64> {
    col::<Int64Array>(b, name).values().to_vec()
}

fn floats(b: &RecordBatch, name: &str) -> Vec<f64> {
    col::<Float64Array>(b, name).values().to_vec()
}

fn strs(b: &RecordBatch, name: &str) -> Vec<String> {
    let a = col::<StringArray>(b, name);
    a.iter().map(|v| v.unwrap().to_string()).collect()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort_unstable();
    v
}

/// The Kolmogorov-Smirnov distance of `values` from the distribution
/// function `cdf`.
fn ks(values: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
        })
        .fold(0.0, f64::max)
}

fn error_of(text: &str) -> String {
    Dataset::parse(text, "d.toml").unwrap_err().to_string()
}

#[test]
fn a_uniform_over_as_many_integers_as_rows_takes_each_once() {
    let text = stratified(
        "rows = 1000",
        &field("int64", "uniform = { min = 0, max = 999 }"),
    );
    for seed in [1, 2, 3] {
        let x = ints(&rows(&text, seed), "x");
        assert_eq!(sorted(x), (0..1000).collect::<Vec<_>>(), "seed {seed}");
    }
    // A table of rows per scale: the strata are the run's rows.
    let text = spec(
        "rows_per_scale = 100",
        "stratified = true",
        &field("int64", "uniform = { min = 1, max = 300 }"),
    );
    let x = ints(&rows_of(&text, 5, 3.0, 64), "x");
    assert_eq!(sorted(x), (1..=300).collect::<Vec<_>>());
    // Without the option, values repeat and others are missing.
    let plain = spec(
        "rows = 1000",
        "",
        &field("int64", "uniform = { min = 0, max = 999 }"),
    );
    let mut x = ints(&rows(&plain, 1), "x");
    x.dedup();
    assert!(sorted(x).windows(2).any(|w| w[0] == w[1]));
}

#[test]
fn dates_timestamps_and_decimals_take_each_unit_once() {
    let fields = "[[tables.fields]]\nname = \"d\"\ntype = \"date32\"\nuniform = { min = 2020-01-01, max = 2022-09-26 }\n\
        [[tables.fields]]\nname = \"ts\"\ntype = \"timestamp(s, UTC)\"\nuniform = { min = 2024-01-01T00:00:00Z, max = 2024-01-01T00:16:39Z }\n\
        [[tables.fields]]\nname = \"m\"\ntype = \"decimal(6, 2)\"\nuniform = { min = \"0.00\", max = \"9.99\" }\n";
    let b = rows(&stratified("rows = 1000", fields), 7);
    let days: Vec<i64> = col::<Date32Array>(&b, "d")
        .values()
        .iter()
        .map(|&d| i64::from(d))
        .collect();
    assert_eq!(sorted(days), (18_262..19_262).collect::<Vec<_>>());
    let start = 1_704_067_200;
    let stamps = col::<TimestampSecondArray>(&b, "ts").values().to_vec();
    assert_eq!(sorted(stamps), (start..start + 1000).collect::<Vec<_>>());
    let cents = col::<Decimal128Array>(&b, "m").values().to_vec();
    assert_eq!(sorted(cents), (0..1000).collect::<Vec<i128>>());
}

#[test]
fn floats_take_one_value_in_each_stratum() {
    let text = stratified(
        "rows = 500",
        &field("float64", "uniform = { min = -2.5, max = 7.5 }"),
    );
    for seed in [1, 9] {
        let x = floats(&rows(&text, seed), "x");
        let mut seen = [0u32; 500];
        for v in &x {
            assert!((-2.5..7.5).contains(v), "{v}");
            seen[((v + 2.5) / 10.0 * 500.0).floor() as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c == 1), "seed {seed}: {seen:?}");
    }
}

#[test]
fn weighted_categories_get_their_exact_shares() {
    let fields = "[[tables.fields]]\nname = \"s\"\ntype = \"utf8\"\nweighted = { values = [\"a\", \"b\", \"c\"], weights = [1, 1, 2] }\n\
        [[tables.fields]]\nname = \"k\"\ntype = \"int64\"\nweighted = { values = [10, 20, 30], weights = [1, 1, 2] }\n\
        [[tables.fields]]\nname = \"f\"\ntype = \"float64\"\nweighted = { values = [0.5, 1.5, 2.5], weights = [1, 1, 2] }\n\
        [[tables.fields]]\nname = \"e\"\ntype = \"dictionary\"\nweighted = { values = [\"p\", \"q\", \"r\"], weights = [1, 1, 2] }\n\
        [[tables.fields]]\nname = \"b\"\ntype = \"boolean\"\nprobability = 0.3\n";
    let text = stratified("rows = 400", fields);
    for seed in [1, 2, 3] {
        let b = rows(&text, seed);
        let count = |v: &[String], of: &str| v.iter().filter(|x| *x == of).count();
        let s = strs(&b, "s");
        assert_eq!(
            [count(&s, "a"), count(&s, "b"), count(&s, "c")],
            [100, 100, 200],
            "seed {seed}"
        );
        let k = ints(&b, "k");
        let n = |want: i64| k.iter().filter(|&&x| x == want).count();
        assert_eq!([n(10), n(20), n(30)], [100, 100, 200]);
        let f = floats(&b, "f");
        let n = |want: f64| f.iter().filter(|&&x| x == want).count();
        assert_eq!([n(0.5), n(1.5), n(2.5)], [100, 100, 200]);
        let e = arrow_cast::cast(
            b.column_by_name("e").unwrap(),
            &arrow_schema::DataType::Utf8,
        )
        .unwrap();
        let e: Vec<String> = e
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .iter()
            .map(|v| v.unwrap().to_string())
            .collect();
        assert_eq!(
            [count(&e, "p"), count(&e, "q"), count(&e, "r")],
            [100, 100, 200]
        );
        // 0.3 of 400 rows, within one.
        let trues = col::<BooleanArray>(&b, "b").true_count();
        assert!(trues.abs_diff(120) <= 1, "seed {seed}: {trues}");
    }
    // Not exact when the option is off.
    let plain = spec("rows = 400", "", fields);
    let off: Vec<usize> = (1..=3)
        .map(|seed| {
            let s = strs(&rows(&plain, seed), "s");
            s.iter().filter(|x| *x == "a").count()
        })
        .collect();
    assert!(off.iter().any(|&c| c != 100), "{off:?}");
}

#[test]
fn quantiles_meet_their_knots_within_one_row() {
    let knots = [0.0, 1.0, 10.0, 100.0, 1000.0];
    for n in [999u64, 1000, 1234] {
        let text = stratified(
            &format!("rows = {n}"),
            &field("float64", "quantiles = [0.0, 1.0, 10.0, 100.0, 1000.0]"),
        );
        let x = floats(&rows(&text, 3), "x");
        for (i, k) in knots.iter().enumerate() {
            let share = x.iter().filter(|v| *v <= k).count() as f64 / n as f64;
            let want = i as f64 / 4.0;
            assert!(
                (share - want).abs() <= 1.0 / n as f64,
                "{n} rows: {share} of the values at most knot {k}, not {want}"
            );
        }
    }
}

/// The ISO weekday (0 = Monday) of day `d` since 1970-01-01.
fn weekday(d: i64) -> i64 {
    (d + 3).rem_euclid(7)
}

#[test]
fn quantile_weekdays_stay_the_rows_own_draw() {
    let dates = |weekdays: bool| {
        let values = "[2020-01-01, 2022-01-01, 2024-12-31]";
        let g = if weekdays {
            format!("quantiles = {{ values = {values}, weekdays = [1, 1, 1, 1, 2, 4, 0] }}")
        } else {
            format!("quantiles = {values}")
        };
        field("date32", &g)
    };
    let days = |b: &RecordBatch| -> Vec<i64> {
        col::<Date32Array>(b, "x")
            .values()
            .iter()
            .map(|&d| i64::from(d))
            .collect()
    };
    let moved = days(&rows(&stratified("rows = 2000", &dates(true)), 4));
    let strat = days(&rows(&stratified("rows = 2000", &dates(false)), 4));
    let plain = days(&rows(&spec("rows = 2000", "", &dates(true)), 4));
    let (lo, hi) = (18_262, 20_088);
    for r in 0..2000 {
        // The stratified value, moved within its ISO week ...
        let (a, b) = (moved[r], strat[r]);
        assert_eq!(a - weekday(a), b - weekday(b), "row {r}");
        // ... to the weekday the row draws without the option.
        if ![lo, hi].contains(&a) && ![lo, hi].contains(&plain[r]) {
            assert_eq!(weekday(a), weekday(plain[r]), "row {r}");
        }
        assert_ne!(weekday(a), 6, "row {r}: Sunday weighs nothing");
    }
    // The stratified dates without weekdays meet the knots within a row
    // (two rows: a value is rounded to its day).
    let below = strat.iter().filter(|&&d| d < 18_993).count();
    assert!(below.abs_diff(1000) <= 2, "{below}");
}

#[test]
fn normal_and_lognormal_follow_their_distribution_function() {
    let fields = "[[tables.fields]]\nname = \"z\"\ntype = \"float64\"\nnormal = { mean = 0, std = 1 }\n\
        [[tables.fields]]\nname = \"y\"\ntype = \"float64\"\nnormal = { mean = 50, std = 10 }\n\
        [[tables.fields]]\nname = \"l\"\ntype = \"float64\"\nlognormal = { mu = 1, sigma = 0.5 }\n";
    let b = rows(&stratified("rows = 1000", fields), 11);
    let z = ks(&floats(&b, "z"), normal_cdf);
    assert!(z < 0.005, "KS {z}");
    // One value per stratum: within 1/N (and the error of the
    // distribution function).
    assert!(z <= 1e-3 + 1e-6, "KS {z}");
    let y = ks(&floats(&b, "y"), |x| normal_cdf((x - 50.0) / 10.0));
    assert!(y <= 1e-3 + 1e-6, "KS {y}");
    let logs: Vec<f64> = floats(&b, "l").iter().map(|x| x.ln()).collect();
    let l = ks(&logs, |x| normal_cdf((x - 1.0) / 0.5));
    assert!(l <= 1e-3 + 1e-6, "KS {l}");
    // Drawn plainly, 1,000 values stray by sampling noise (~1/sqrt(N)).
    let plain = rows(&spec("rows = 1000", "", fields), 11);
    let z = ks(&floats(&plain, "z"), normal_cdf);
    assert!(z > 0.005, "KS {z}");
    // Integers round the stratified draw; clamps hold.
    let ints_text = stratified(
        "rows = 1000",
        &field(
            "int64",
            "normal = { mean = 100, std = 15, min = 90, max = 130 }",
        ),
    );
    let x = ints(&rows(&ints_text, 2), "x");
    assert!(x.iter().all(|v| (90..=130).contains(v)));
    // P(Z <= -0.6333) + the rounding: 1000 * P(X < 90.5) = 263.
    let low = x.iter().filter(|&&v| v == 90).count();
    let want = 1000.0 * normal_cdf((90.5 - 100.0) / 15.0);
    assert!((low as f64 - want).abs() <= 1.0, "{low} vs {want}");
}

/// A table of many kinds of fields, stratified or not.
fn mixed(option: &str) -> String {
    spec(
        "rows = 1000",
        option,
        r#"[[tables.fields]]
name = "k"
type = "int64"
sequence = { start = 0 }
[[tables.fields]]
name = "u"
type = "int64"
uniform = { min = 0, max = 999 }
[[tables.fields]]
name = "n"
type = "float64"
normal = { mean = 0, std = 1 }
[[tables.fields]]
name = "w"
type = "utf8"
weighted = { values = ["a", "b", "c"], weights = [1, 1, 2] }
[[tables.fields]]
name = "q"
type = "date32"
quantiles = { values = [2020-01-01, 2024-12-31], weekdays = [1, 1, 1, 1, 1, 2, 2] }
[[tables.fields]]
name = "zipf"
type = "int64"
zipf = { s = 1.1, n = 50 }
[[tables.fields]]
name = "name"
type = "utf8"
template = "user-{uniform(1,99)}-{first_name}"
[[tables.fields]]
name = "words"
type = "utf8"
words = { list = "words", min = 1, max = 3 }
[[tables.fields]]
name = "nullable"
type = "int64"
uniform = { min = 0, max = 999 }
null_rate = 0.25
[[tables.fields]]
name = "cased"
type = "int64"
uniform = { min = 0, max = 999 }
[[tables.fields.when]]
condition = "k < 300"
uniform = { min = 5000, max = 5999 }
[[tables.fields]]
name = "inner"
type = "struct"
[[tables.fields.fields]]
name = "v"
type = "int64"
uniform = { min = 0, max = 999 }
[[tables.fields]]
name = "e"
type = "int64"
expr = "u + k"
"#,
    )
}

#[test]
fn rows_do_not_depend_on_batching_or_parts() {
    let text = mixed("stratified = true");
    let whole = rows(&text, 9);
    for batch in [1, 7, 64, 999] {
        assert_eq!(rows_of(&text, 9, 1.0, batch), whole, "batch {batch}");
    }
    let d = Dataset::parse(&text, "d.toml").unwrap();
    let g = d.generator(0, 9, 1.0).unwrap();
    let mut s = Default::default();
    for (at, n) in [(0, 1), (250, 250), (500, 77), (987, 13), (999, 1)] {
        let part = g.generate(at, n, &mut s).unwrap();
        assert_eq!(
            part,
            whole.slice(at as usize, n),
            "rows {at}..{}",
            at as usize + n
        );
    }
    // Rows by id, in any order.
    let ids = [999, 3, 500, 0, 42];
    let picked = g.generate_ids(&ids, &mut s).unwrap();
    for (i, &id) in ids.iter().enumerate() {
        assert_eq!(picked.slice(i, 1), whole.slice(id as usize, 1), "row {id}");
    }
    // The same seed, the same rows; another seed, another order.
    assert_eq!(rows(&text, 9), whole);
    let orders: Vec<Vec<i64>> = (1..=4).map(|seed| ints(&rows(&text, seed), "u")).collect();
    for (i, a) in orders.iter().enumerate() {
        assert_eq!(sorted(a.clone()), (0..1000).collect::<Vec<_>>());
        for b in &orders[i + 1..] {
            assert_ne!(a, b);
        }
    }
    // Two fields of one table take orders of their own.
    assert_ne!(ints(&whole, "u"), ints(&whole, "nullable"));
}

#[test]
fn other_generators_cases_and_nulls_draw_as_before() {
    let on = rows(&mixed("stratified = true"), 5);
    let off = rows(&mixed(""), 5);
    // `stratified = false` is the default.
    assert_eq!(rows(&mixed("stratified = false"), 5), off);
    for name in ["k", "zipf", "name", "words", "inner"] {
        assert_eq!(on.column_by_name(name), off.column_by_name(name), "{name}");
    }
    for name in ["u", "n", "w", "q"] {
        assert_ne!(on.column_by_name(name), off.column_by_name(name), "{name}");
    }
    // Nulls fall where they did; the values between them are distinct
    // (the gaps are the null rows' strata).
    let (a, b) = (
        col::<Int64Array>(&on, "nullable"),
        col::<Int64Array>(&off, "nullable"),
    );
    assert_eq!(a.nulls(), b.nulls());
    assert!(a.null_count() > 200);
    let valid: Vec<i64> = a.iter().flatten().collect();
    let mut distinct = sorted(valid.clone());
    distinct.dedup();
    assert_eq!(distinct.len(), valid.len());
    // A case with a generator of its own draws as before; the field's own
    // generator keeps its strata on the other rows.
    let (a, b) = (ints(&on, "cased"), ints(&off, "cased"));
    assert_eq!(a[..300], b[..300]);
    assert!(a[..300].iter().all(|v| (5000..6000).contains(v)));
    let mut own = sorted(a[300..].to_vec());
    own.dedup();
    assert_eq!(own.len(), 700);
    assert!(own.iter().all(|v| (0..1000).contains(v)));
    // An expression reads the stratified sibling.
    let (u, k, e) = (ints(&on, "u"), ints(&on, "k"), ints(&on, "e"));
    for r in 0..1000 {
        assert_eq!(e[r], u[r] + k[r], "row {r}");
    }
}

#[test]
fn references_copy_the_stratified_values() {
    let text = format!(
        "{}\n{}",
        stratified(
            "rows = 100",
            "[[tables.fields]]\nname = \"k\"\ntype = \"int64\"\nsequence = { start = 1 }\n[[tables.fields]]\nname = \"x\"\ntype = \"int64\"\nuniform = { min = 0, max = 99 }\n",
        ),
        r#"[[tables]]
name = "b"
rows = 500
[[tables.fields]]
name = "bk"
type = "int64"
ref = { table = "t", field = "k" }
[[tables.fields]]
name = "bx"
type = "int64"
ref = { table = "t", field = "x", via = "bk" }
"#
    );
    let d = Dataset::parse(&text, "d.toml").unwrap();
    let t = all_rows(&d, "t", 3, 1.0, 1000);
    let x = ints(&t[0], "x");
    assert_eq!(sorted(x.clone()), (0..100).collect::<Vec<_>>());
    for b in all_rows(&d, "b", 3, 1.0, 77) {
        for (k, v) in ints(&b, "bk").into_iter().zip(ints(&b, "bx")) {
            assert_eq!(v, x[(k - 1) as usize], "key {k}");
        }
    }
    assert!(d.tables[d.table("t").unwrap()].stratified);
    assert!(!d.tables[d.table("b").unwrap()].stratified);
}

#[test]
fn bad_uses_name_the_table() {
    let parent = "[[tables.fields]]\nname = \"k\"\ntype = \"int64\"\nsequence = { start = 1 }\n";
    let child = |option: &str| {
        format!(
            "{}[[tables]]\nname = \"c\"\nchildren_of = \"t\"\ncount = 2\n{option}\n[[tables.fields]]\nname = \"v\"\ntype = \"int64\"\nuniform = {{ min = 0, max = 9 }}\n",
            stratified("rows = 10", parent)
        )
    };
    assert_eq!(
        error_of(&child("stratified = true")),
        "d.toml:14: table `c`: `stratified` is for tables with rows of their own (`rows`, `rows_per_scale`, `calendar`); a child table's rows follow its parent's (`count` per `t` row)"
    );
    // `false` is the default, anywhere.
    Dataset::parse(&child("stratified = false"), "d.toml").unwrap();
    for (value, kind) in [("\"yes\"", "a string"), ("1", "an integer")] {
        assert_eq!(
            error_of(&spec("rows = 10", &format!("stratified = {value}"), parent)),
            format!("d.toml:5: table `t`: `stratified` must be true or false, not {kind}")
        );
    }
    // A single-table spec has no row count of its own.
    let single = format!(
        "name = \"d\"\nstratified = true\n{}",
        parent.replace("tables.", "")
    );
    let e = strata_gen::Spec::parse(&single, "d.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("stratified"), "{e}");
}

#[test]
fn the_schema_takes_the_option_on_tables_with_rows() {
    let schema: serde_json::Value = serde_json::from_str(&strata_gen::json_schema()).unwrap();
    let table = &schema["$defs"]["table"];
    assert_eq!(table["properties"]["stratified"]["type"], "boolean");
    let refused: Vec<&serde_json::Value> = table["not"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["required"] == serde_json::json!(["children_of", "stratified"]))
        .collect();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0]["properties"]["stratified"]["const"], true);
    // Not at the top of a single-table spec.
    assert!(schema["properties"]["stratified"].is_null());
}
