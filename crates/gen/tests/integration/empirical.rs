//! Empirical distributions (`quantiles`, with `weekdays` for dates and
//! timestamps), `lognormal` and the character slots of templates
//! (`{digits(N)}`, `{upper(N)}`, `{lower(N)}`): the shapes they realise
//! at a fixed seed, rows that do not depend on batching, and the errors
//! of bad parameters.

use arrow_array::{
    Array, Date32Array, Decimal128Array, Float32Array, Float64Array, Int64Array, RecordBatch,
    StringArray, Time32SecondArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    UInt8Array,
};
use strata_gen::{BatchGenerator, Generator, Kind, Spec};

const ROWS: usize = 100_000;

fn spec(fields: &str) -> Spec {
    Spec::parse(&format!("name = \"e\"\n{fields}"), "e.toml")
        .unwrap_or_else(|e| panic!("{e}\n{fields}"))
}

fn error(fields: &str) -> String {
    Spec::parse(&format!("name = \"e\"\n{fields}"), "e.toml")
        .expect_err(fields)
        .to_string()
}

fn batch(spec: &Spec, seed: u64, first: u64, len: usize) -> RecordBatch {
    let g = spec.generator(seed).unwrap();
    let b = g.generate(first, len, &mut Default::default()).unwrap();
    for c in b.columns() {
        c.to_data().validate_full().unwrap();
    }
    b
}

fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("column {name} has another type"))
}

/// Asserts that the share of `values` at most each knot is within 0.01
/// of the knot's quantile `i / n`.
fn cdf_at_knots<T: PartialOrd + Copy + std::fmt::Debug>(what: &str, values: &[T], knots: &[T]) {
    let n = knots.len() - 1;
    for (i, k) in knots.iter().enumerate() {
        let share = values.iter().filter(|v| **v <= *k).count() as f64 / values.len() as f64;
        let want = i as f64 / n as f64;
        assert!(
            (share - want).abs() <= 0.01,
            "{what}: {share:.4} of the values at most knot {i} ({k:?}), not {want:.4}"
        );
    }
}

/// The median of `values`.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// ISO weekday, Monday 0, of day `d` since 1970-01-01 (a Thursday).
fn weekday(d: i64) -> usize {
    (d + 3).rem_euclid(7) as usize
}

#[test]
fn quantiles_follow_their_knots() {
    let s = spec(
        r#"
[[fields]]
name = "f"
type = "float64"
quantiles = [-5.0, 0.0, 2.5, 1000.0, 1e6]
[[fields]]
name = "i"
type = "int64"
quantiles = [0, 100, 1000, 1_000_000, 2_000_000]
[[fields]]
name = "d"
type = "date32"
quantiles = [2020-01-01, 2020-03-01, 2021-01-01, 2024-12-31]
[[fields]]
name = "dec"
type = "decimal(10, 2)"
quantiles = [0.50, 10.25, 99.99]
[[fields]]
name = "ts"
type = "timestamp(ms)"
quantiles = [2024-01-01T00:00:00Z, 2024-06-01T12:00:00Z, 2025-01-01T00:00:00Z]
[[fields]]
name = "f32"
type = "float32"
quantiles = [1.5, 2.5]
[[fields]]
name = "tied"
type = "uint8"
quantiles = [5, 5, 5, 15]
[[fields]]
name = "time"
type = "time32(s)"
quantiles = [08:00:00, 12:00:00, 18:30:00]
"#,
    );
    let b = batch(&s, 11, 0, ROWS);
    let f = col::<Float64Array>(&b, "f").values();
    assert!(f.iter().all(|v| (-5.0..=1e6).contains(v)));
    cdf_at_knots("float64", f, &[-5.0, 0.0, 2.5, 1000.0, 1e6]);
    let i = col::<Int64Array>(&b, "i").values();
    assert!(i.iter().all(|v| (0..=2_000_000).contains(v)));
    cdf_at_knots("int64", i, &[0, 100, 1000, 1_000_000, 2_000_000]);
    let d = col::<Date32Array>(&b, "d").values();
    // 2020-01-01, 2020-03-01, 2021-01-01 and 2024-12-31 in days.
    let days = [18_262, 18_322, 18_628, 20_088];
    assert!(d.iter().all(|v| (days[0]..=days[3]).contains(v)));
    cdf_at_knots("date32", d, &days);
    let dec = col::<Decimal128Array>(&b, "dec").values();
    assert!(dec.iter().all(|v| (50..=9999).contains(v)));
    cdf_at_knots("decimal", dec, &[50, 1025, 9999]);
    let ts = col::<TimestampMillisecondArray>(&b, "ts").values();
    let knots = [1_704_067_200_000, 1_717_243_200_000, 1_735_689_600_000];
    assert!(ts.iter().all(|v| (knots[0]..=knots[2]).contains(v)));
    cdf_at_knots("timestamp", ts, &knots);
    let f32s = col::<Float32Array>(&b, "f32").values();
    assert!(f32s.iter().all(|v| (1.5..=2.5).contains(v)));
    cdf_at_knots("float32", f32s, &[1.5, 2.5]);
    let time = col::<Time32SecondArray>(&b, "time").values();
    let knots = [8 * 3600, 12 * 3600, 18 * 3600 + 1800];
    assert!(time.iter().all(|v| (knots[0]..=knots[2]).contains(v)));
    cdf_at_knots("time32", time, &knots);
    // Tied knots hold their share: two thirds at 5, and a tenth of the
    // last third rounds down to it.
    let tied = col::<UInt8Array>(&b, "tied").values();
    assert!(tied.iter().all(|v| (5..=15).contains(v)));
    let at_five = tied.iter().filter(|v| **v == 5).count() as f64 / ROWS as f64;
    let want = 2.0 / 3.0 + 0.05 / 3.0;
    assert!((at_five - want).abs() < 0.01, "{at_five} at 5, not {want}");
    // Every integer between two knots is drawn.
    let mut seen = [false; 16];
    for v in tied {
        seen[usize::from(*v)] = true;
    }
    assert!(seen[5..].iter().all(|s| *s), "{seen:?}");
}

#[test]
fn weekdays_follow_their_weights_within_the_week() {
    let weights = [1.0, 1.0, 1.0, 1.0, 2.0, 4.0, 0.0];
    let fields = |weekdays: bool| {
        let (open, close) = if weekdays {
            ("{ values = ", ", weekdays = [1, 1, 1, 1, 2, 4, 0] }")
        } else {
            ("", "")
        };
        format!(
            r#"
[[fields]]
name = "d"
type = "date32"
quantiles = {open}[2020-01-01, 2022-01-01, 2024-12-31]{close}
[[fields]]
name = "ts"
type = "timestamp(us, UTC)"
quantiles = {open}[2024-01-01T00:00:00Z, 2024-02-01T06:30:00Z, 2024-12-31T23:59:59Z]{close}
"#
        )
    };
    let moved = batch(&spec(&fields(true)), 4, 0, ROWS);
    let plain = batch(&spec(&fields(false)), 4, 0, ROWS);
    let sum: f64 = weights.iter().sum();
    let per_day = 86_400_000_000i64;
    let (d, d0) = (
        col::<Date32Array>(&moved, "d").values(),
        col::<Date32Array>(&plain, "d").values(),
    );
    let (ts, ts0) = (
        col::<TimestampMicrosecondArray>(&moved, "ts").values(),
        col::<TimestampMicrosecondArray>(&plain, "ts").values(),
    );
    let (lo, hi) = (1_704_067_200_000_000, 1_735_689_599_000_000);
    assert!(ts.iter().all(|v| (lo..=hi).contains(v)));
    assert!(d.iter().all(|v| (18_262..=20_088).contains(v)));
    let mut days = [0usize; 7];
    let mut stamps = [0usize; 7];
    for r in 0..ROWS {
        // The same draw, moved within its ISO week (Monday to Sunday):
        // days apart by less than a week, the time of day kept.
        let (a, b) = (i64::from(d[r]), i64::from(d0[r]));
        assert_eq!(a - weekday(a) as i64, b - weekday(b) as i64, "row {r}");
        let (x, y) = (ts[r], ts0[r]);
        let (dx, dy) = (x.div_euclid(per_day), y.div_euclid(per_day));
        if x != lo && x != hi {
            assert_eq!(x.rem_euclid(per_day), y.rem_euclid(per_day), "row {r}");
            assert_eq!(dx - weekday(dx) as i64, dy - weekday(dy) as i64, "row {r}");
        }
        days[weekday(a)] += 1;
        stamps[weekday(dx)] += 1;
    }
    // 2020-01-01 is a Wednesday and 2024-12-31 a Tuesday: no value is
    // clamped onto a Sunday.
    assert_eq!(days[6], 0);
    assert_eq!(stamps[6], 0);
    for (what, counts) in [("date32", days), ("timestamp", stamps)] {
        for (day, (count, w)) in counts.iter().zip(weights).enumerate() {
            let share = *count as f64 / ROWS as f64;
            assert!(
                (share - w / sum).abs() <= 0.01,
                "{what}: weekday {day} has {share:.4}, not {:.4}",
                w / sum
            );
        }
    }
}

#[test]
fn lognormal_medians_are_exp_mu() {
    let s = spec(
        r#"
[[fields]]
name = "f"
type = "float64"
lognormal = { mu = 3.0, sigma = 0.5 }
[[fields]]
name = "i"
type = "int64"
lognormal = { mu = 5, sigma = 1, min = 1, max = 10000 }
[[fields]]
name = "dec"
type = "decimal(12, 2)"
lognormal = { mu = 2.0, sigma = 0.3 }
"#,
    );
    let b = batch(&s, 21, 0, ROWS);
    let close = |what: &str, got: f64, want: f64| {
        assert!(
            (got / want - 1.0).abs() <= 0.02,
            "{what}: {got} against {want}"
        );
    };
    let f = col::<Float64Array>(&b, "f").values();
    assert!(f.iter().all(|v| *v > 0.0));
    close("float median", median(f.to_vec()), 3f64.exp());
    // The logarithm's standard deviation is sigma.
    let logs: Vec<f64> = f.iter().map(|v| v.ln()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / logs.len() as f64).sqrt();
    close("float sigma", sd, 0.5);
    let i = col::<Int64Array>(&b, "i").values();
    assert!(i.iter().all(|v| (1..=10_000).contains(v)));
    assert!(i.contains(&10_000), "the upper clamp is reached");
    close(
        "int median",
        median(i.iter().map(|v| *v as f64).collect()),
        5f64.exp(),
    );
    // Decimals in units of the scale: exp(2) is 7.39, 739 cents.
    let dec = col::<Decimal128Array>(&b, "dec").values();
    close(
        "decimal median",
        median(dec.iter().map(|v| *v as f64).collect()),
        2f64.exp() * 100.0,
    );
}

#[test]
fn character_slots_draw_their_class_evenly() {
    let s = spec(
        r#"
[[fields]]
name = "code"
type = "utf8"
template = "{digits(6)}-{upper(3)}.{lower(2)}"
[[fields]]
name = "long"
type = "large_utf8"
template = "{digits(64)}{upper(64)}{lower(64)}"
[[fields]]
name = "one"
type = "utf8"
template = "{lower(1)}"
"#,
    );
    let b = batch(&s, 8, 0, ROWS);
    let code = col::<StringArray>(&b, "code");
    let mut first = [0usize; 10];
    let mut letters = [0usize; 26];
    for v in code.iter().flatten() {
        let v = v.as_bytes();
        assert_eq!(v.len(), 6 + 1 + 3 + 1 + 2, "{v:?}");
        assert!(v[..6].iter().all(u8::is_ascii_digit), "{v:?}");
        assert_eq!(v[6], b'-');
        assert!(v[7..10].iter().all(u8::is_ascii_uppercase), "{v:?}");
        assert_eq!(v[10], b'.');
        assert!(v[11..].iter().all(u8::is_ascii_lowercase), "{v:?}");
        first[usize::from(v[0] - b'0')] += 1;
        letters[usize::from(v[7] - b'A')] += 1;
    }
    for (what, counts) in [("first digit", &first[..]), ("first letter", &letters[..])] {
        let want = 1.0 / counts.len() as f64;
        for (k, c) in counts.iter().enumerate() {
            let share = *c as f64 / ROWS as f64;
            assert!((share - want).abs() < 0.005, "{what} {k}: {share:.4}");
        }
    }
    let long = col::<arrow_array::LargeStringArray>(&b, "long");
    // Every place of a long slot is even too: the last digit of 64.
    let mut last = [0usize; 10];
    for v in long.iter().flatten() {
        let v = v.as_bytes();
        assert_eq!(v.len(), 192);
        assert!(v[..64].iter().all(u8::is_ascii_digit));
        assert!(v[64..128].iter().all(u8::is_ascii_uppercase));
        assert!(v[128..].iter().all(u8::is_ascii_lowercase));
        last[usize::from(v[63] - b'0')] += 1;
    }
    for (k, c) in last.iter().enumerate() {
        let share = *c as f64 / ROWS as f64;
        assert!((share - 0.1).abs() < 0.005, "last digit {k}: {share:.4}");
    }
    let one = col::<StringArray>(&b, "one");
    let distinct: std::collections::BTreeSet<&str> = one.iter().flatten().collect();
    assert_eq!(distinct.len(), 26);
}

#[test]
fn rows_do_not_depend_on_batching() {
    let s = spec(
        r#"
[[fields]]
name = "kind"
type = "utf8"
weighted = { values = ["a", "b"] }
[[fields]]
name = "q"
type = "float64"
quantiles = [0.0, 1.0, 50.0]
when = { field = "kind", is = "b", quantiles = [100.0, 200.0] }
[[fields]]
name = "d"
type = "date32"
quantiles = { values = [2020-01-01, 2024-12-31], weekdays = [0, 1, 2, 3, 4, 5, 6] }
[[fields]]
name = "t"
type = "timestamp(ns)"
null_rate = 0.2
quantiles = { values = [2024-01-01T00:00:00Z, 2024-12-31T23:59:59Z], weekdays = [1, 0, 0, 0, 0, 0, 1] }
[[fields]]
name = "l"
type = "int32"
lognormal = { mu = 4, sigma = 2, max = 100000 }
[[fields]]
name = "c"
type = "utf8"
template = "{upper(2)}-{digits(5)}-{lower(3)}"
"#,
    );
    let g = s.generator(99).unwrap();
    let mut scratch = Default::default();
    let whole = g.generate(5_000, 2_000, &mut scratch).unwrap();
    let mut start = 5_000u64;
    for len in [1usize, 7, 333, 659, 1000] {
        let part = g.generate(start, len, &mut scratch).unwrap();
        assert_eq!(
            part,
            whole.slice((start - 5_000) as usize, len),
            "rows {start}+{len}"
        );
        g.recycle(part, &mut scratch);
        start += len as u64;
    }
    // Cases draw their own quantiles.
    let kind = col::<StringArray>(&whole, "kind");
    let q = col::<Float64Array>(&whole, "q");
    for r in 0..whole.num_rows() {
        let range = if kind.value(r) == "b" {
            100.0..=200.0
        } else {
            0.0..=50.0
        };
        assert!(range.contains(&q.value(r)), "row {r}: {}", q.value(r));
    }
    // Another seed gives other data.
    let other = s.generator(100).unwrap();
    assert_ne!(
        other.generate(5_000, 100, &mut Default::default()).unwrap(),
        whole.slice(0, 100)
    );
}

#[test]
fn generators_read_as_the_spec_writes_them() {
    let s = spec(
        r#"
[[fields]]
name = "d"
type = "date32"
quantiles = { values = [2024-01-01, 2024-02-01, 2024-12-31], weekdays = [1, 1, 1, 1, 1, 0, 0] }
[[fields]]
name = "x"
type = "decimal(8, 2)"
lognormal = { mu = 1.5, sigma = 0.25, min = 0.5 }
"#,
    );
    let shown: Vec<String> = s
        .fields
        .iter()
        .map(|f| match &f.kind {
            Kind::Scalar {
                generator,
                data_type,
            } => generator.display_as(data_type).to_string(),
            other => panic!("not a scalar: {other:?}"),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "quantiles 2024-01-01..2024-12-31 (3 points), weekdays [Mon 20.0%, Tue 20.0%, Wed 20.0%, Thu 20.0%, Fri 20.0%, Sat 0.0%, Sun 0.0%]",
            "lognormal mu 1.5 sigma 0.25 min 0.5",
        ]
    );
    let Kind::Scalar { generator, .. } = &s.fields[0].kind else {
        unreachable!()
    };
    assert!(matches!(
        generator,
        Generator::Quantiles {
            weekdays: Some(_),
            ..
        }
    ));
}

#[test]
fn bad_parameters_name_the_field_and_the_problem() {
    let field = |ty: &str, generator: &str| {
        format!("[[fields]]\nname = \"x\"\ntype = \"{ty}\"\n{generator}\n")
    };
    for (ty, generator, want) in [
        (
            "int64",
            "quantiles = [1, 5, 3]",
            "e.toml:5: field `x`: `quantiles` decreases: 3 (value 2) is below 5 (value 1)",
        ),
        (
            "date32",
            "quantiles = { values = [2024-02-01, 2024-01-01] }",
            "`values` decreases: 2024-01-01 (value 1) is below 2024-02-01 (value 0)",
        ),
        (
            "int64",
            "quantiles = { values = [1, 2], weekdays = [1, 1, 1, 1, 1, 1, 1] }",
            "field `x`: `weekdays` moves dates and timestamps within their week, not integer values",
        ),
        (
            "float64",
            "quantiles = { values = [1.0, 2.0], weekdays = [1, 1, 1, 1, 1, 1, 1] }",
            "not float values",
        ),
        (
            "int64",
            "quantiles = [7]",
            "`quantiles` needs at least 2 values (the least and the greatest), not 1",
        ),
        ("int64", "quantiles = []", "`quantiles` is empty"),
        (
            "float64",
            "quantiles = [0.0, nan, 1.0]",
            "`quantiles` holds NaN (value 1); quantiles are finite numbers",
        ),
        (
            "float64",
            "quantiles = [0.0, inf]",
            "`quantiles` holds inf (value 1)",
        ),
        (
            "float64",
            "quantiles = [-1e308, 1e308]",
            "spans more than the largest float",
        ),
        (
            "uint8",
            "quantiles = [0, 300]",
            "`quantiles` = 300 is outside the type's range 0..=255",
        ),
        (
            "utf8",
            "quantiles = [\"a\", \"b\"]",
            "`quantiles` does not generate string values",
        ),
        ("boolean", "quantiles = [0, 1]", "does not generate boolean"),
        (
            "date32",
            "quantiles = { values = [2024-01-01, 2024-02-01], weekdays = [1, 1, 1] }",
            "`weekdays` takes 7 weights (Monday to Sunday), not 3",
        ),
        (
            "date32",
            "quantiles = { values = [2024-01-01, 2024-02-01], weekdays = [0, 0, 0, 0, 0, 0, 0] }",
            "`weekdays`: weights sum to zero",
        ),
        (
            "date32",
            "quantiles = { values = [2024-01-01, 2024-02-01], weekdays = [1, 1, 1, 1, 1, 1, -1] }",
            "`weekdays`: weight 6 is -1; weights must be finite and non-negative",
        ),
        (
            "date32",
            "quantiles = { values = [2024-01-01, 2024-02-01], weekday = [1, 1, 1, 1, 1, 1, 1] }",
            "unknown key `weekday`",
        ),
        (
            "date32",
            "quantiles = { weekdays = [1, 1, 1, 1, 1, 1, 1] }",
            "`quantiles` needs `values`",
        ),
        (
            "int64",
            "lognormal = { mu = 1, sigma = 0 }",
            "e.toml:5: field `x`: lognormal needs a positive `sigma` (the logarithm's standard deviation), not 0",
        ),
        (
            "float64",
            "lognormal = { mu = 1, sigma = -0.5 }",
            "lognormal needs a positive `sigma`",
        ),
        (
            "float64",
            "lognormal = { mu = 1 }",
            "`lognormal` needs `sigma`",
        ),
        (
            "float64",
            "lognormal = { mu = nan, sigma = 1 }",
            "lognormal needs a finite `mu`, not NaN",
        ),
        (
            "int64",
            "lognormal = { mu = 1, sigma = 1, min = 10, max = 5 }",
            "lognormal needs min <= max, not 10 and 5",
        ),
        (
            "uint8",
            "lognormal = { mu = 1, sigma = 1, min = 300 }",
            "lognormal's min and max leave no value in the type's range 0..=255",
        ),
        (
            "date32",
            "lognormal = { mu = 1, sigma = 1 }",
            "`lognormal` does not generate date values",
        ),
        (
            "utf8",
            "template = \"{digits(0)}\"",
            "e.toml:5: field `x`: template \"{digits(0)}\": `{digits(0)}`: digits takes 1 to 64 digits, not 0",
        ),
        (
            "utf8",
            "template = \"{digits(65)}\"",
            "digits takes 1 to 64 digits, not 65",
        ),
        (
            "utf8",
            "template = \"{upper(0)}\"",
            "upper takes 1 to 64 letters, not 0",
        ),
        (
            "utf8",
            "template = \"{lower(65)}\"",
            "lower takes 1 to 64 letters, not 65",
        ),
    ] {
        let err = error(&field(ty, generator));
        assert!(
            err.contains(want),
            "\n{ty}: {generator}\n  got:  {err}\n  want: {want}"
        );
    }
}

#[test]
fn json_specs_write_quantiles_as_strings() {
    let json = r#"{
  "name": "e",
  "fields": [
    { "name": "d", "type": "date32", "quantiles": { "values": ["2024-01-01", "2024-03-01"], "weekdays": [0, 0, 0, 0, 1, 0, 0] } },
    { "name": "x", "type": "decimal(6, 2)", "quantiles": ["1.50", "2.25", 9] }
  ]
}"#;
    let s = Spec::parse(json, "e.json").unwrap();
    let b = batch(&s, 1, 0, 1000);
    let d = col::<Date32Array>(&b, "d").values();
    assert!(
        d.iter()
            .all(|v| weekday(i64::from(*v)) == 4 || *v == 19_723 || *v == 19_783)
    );
    let x = col::<Decimal128Array>(&b, "x").values();
    assert!(x.iter().all(|v| (150..=900).contains(v)));
}
