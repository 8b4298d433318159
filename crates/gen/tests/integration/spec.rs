//! Specs: presets, realised distributions, determinism, and the errors of
//! bad specs (each naming its field and line).

use arrow_array::{
    Array, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, ListArray,
    MapArray, RecordBatch, StringArray, StructArray, UInt64Array, types::UInt8Type,
};
use arrow_schema::DataType;
use strata_gen::BatchGenerator;
use strata_gen::{PRESETS, Spec};

fn batch(spec: &Spec, seed: u64, first: u64, len: usize) -> RecordBatch {
    let g = spec.generator(seed).unwrap();
    g.generate(first, len, &mut Default::default()).unwrap()
}

fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("column {name} has another type"))
}

fn child<'a, T: 'static>(s: &'a StructArray, name: &str) -> &'a T {
    s.column_by_name(name)
        .unwrap()
        .as_any()
        .downcast_ref::<T>()
        .unwrap()
}

/// Asserts `got/n` is within 5 standard errors of `p`.
fn share(what: &str, got: usize, n: usize, p: f64) {
    let se = (p * (1.0 - p) / n as f64).sqrt();
    let x = got as f64 / n as f64;
    assert!(
        (x - p).abs() <= 5.0 * se + 1e-9,
        "{what}: {x:.5} realised vs {p:.5} specified ({got} of {n})"
    );
}

#[test]
fn every_preset_parses_generates_and_validates() {
    for (name, _) in PRESETS {
        let spec = Spec::preset(name).unwrap();
        let b = batch(&spec, 7, 123, 3000);
        assert_eq!(b.num_rows(), 3000, "{name}");
        // Arrow's full validation of every array (offsets, UTF-8, keys).
        for c in b.columns() {
            c.to_data().validate_full().unwrap();
        }
    }
}

#[test]
fn rows_do_not_depend_on_batching() {
    for (name, _) in PRESETS {
        let spec = Spec::preset(name).unwrap();
        let g = spec.generator(99).unwrap();
        let mut scratch = Default::default();
        let whole = g.generate(5_000, 2_000, &mut scratch).unwrap();
        let mut start = 5_000u64;
        for len in [1usize, 7, 333, 659, 1000] {
            let part = g.generate(start, len, &mut scratch).unwrap();
            assert_eq!(
                part,
                whole.slice((start - 5_000) as usize, len),
                "{name} rows {start}+{len}"
            );
            g.recycle(part, &mut scratch);
            start += len as u64;
        }
        // Another seed gives other data.
        let other = spec.generator(100).unwrap();
        assert_ne!(
            other.generate(5_000, 100, &mut Default::default()).unwrap(),
            whole.slice(0, 100)
        );
    }
}

#[test]
fn contacts_realise_the_specified_shares() {
    let spec = Spec::preset("contacts").unwrap();
    let n = 200_000;
    let b = batch(&spec, 42, 0, n);
    let names = col::<StringArray>(&b, "name");
    share("null names", names.null_count(), n, 0.2);
    let with_space = names.iter().flatten().filter(|s| s.contains(' ')).count();
    assert_eq!(with_space, n - names.null_count());

    let phones = col::<ListArray>(&b, "phones");
    let mut by_len = [0usize; 6];
    for i in 0..n {
        let len = if phones.is_null(i) {
            0
        } else {
            phones.value_length(i) as usize
        };
        assert!(phones.is_null(i) || len > 0, "empty lists are null");
        by_len[len] += 1;
    }
    for (len, p) in [0.40, 0.45, 0.10, 5.0 / 300.0, 5.0 / 300.0, 5.0 / 300.0]
        .into_iter()
        .enumerate()
    {
        share(&format!("lists of {len}"), by_len[len], n, p);
    }

    let entries = phones
        .values()
        .as_any()
        .downcast_ref::<StructArray>()
        .unwrap();
    let number = child::<StringArray>(entries, "number");
    let kind = child::<DictionaryArray<UInt8Type>>(entries, "phone_type");
    let m = entries.len();
    let mut joint = [0usize; 4];
    let mut kinds = [0usize; 3];
    for i in 0..m {
        let (has_n, has_t) = (number.is_valid(i), kind.is_valid(i));
        joint[match (has_n, has_t) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (false, false) => 3,
        }] += 1;
        if has_t {
            kinds[kind.keys().value(i) as usize] += 1;
        }
        if has_n {
            let s = number.value(i);
            assert!(s.starts_with("+91-99-") && s.len() >= 15, "{s}");
        }
    }
    for (j, p) in [0.90, 0.05, 0.04, 0.01].into_iter().enumerate() {
        share(&format!("entry template {j}"), joint[j], m, p);
    }
    let typed: usize = kinds.iter().sum();
    for (k, p) in [0.55, 0.35, 0.10].into_iter().enumerate() {
        share(&format!("phone type {k}"), kinds[k], typed, p);
    }
    // Numbers are unique (ids are `5 * row + position`).
    let mut seen = std::collections::HashSet::new();
    assert!(number.iter().flatten().all(|s| seen.insert(s.to_string())));
}

#[test]
fn events_amounts_follow_the_kind() {
    let spec = Spec::preset("events").unwrap();
    let n = 50_000;
    let b = batch(&spec, 3, 0, n);
    let kind = col::<DictionaryArray<UInt8Type>>(&b, "kind");
    let names = kind
        .values()
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    let amount = col::<Float64Array>(&b, "amount");
    let items = col::<ListArray>(&b, "items");
    let ids = col::<Int64Array>(&b, "event_id");
    let mut counts = std::collections::HashMap::new();
    for i in 0..n {
        assert_eq!(ids.value(i), i as i64 + 1);
        let k = names.value(kind.keys().value(i) as usize);
        *counts.entry(k).or_insert(0usize) += 1;
        match k {
            "purchase" => assert!(amount.is_valid(i) && amount.value(i) >= 0.5),
            "refund" => assert!(amount.is_valid(i) && amount.value(i) <= -0.5),
            _ => assert!(amount.is_null(i), "{k} has an amount"),
        }
        let carries = matches!(k, "add_to_cart" | "purchase" | "refund");
        assert_eq!(items.is_valid(i), carries, "{k}");
    }
    share("views", counts["view"], n, 0.60);
    share("refunds", counts["refund"], n, 0.01);

    // Map keys are distinct within each map.
    let entries = items
        .values()
        .as_any()
        .downcast_ref::<StructArray>()
        .unwrap();
    let attrs = child::<MapArray>(entries, "attributes");
    let keys = attrs.keys().as_any().downcast_ref::<StringArray>().unwrap();
    let offsets = attrs.value_offsets();
    let mut maps_with_two = 0;
    for w in offsets.windows(2) {
        let ks: Vec<&str> = (w[0]..w[1]).map(|j| keys.value(j as usize)).collect();
        let mut d = ks.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), ks.len(), "repeated map keys {ks:?}");
        maps_with_two += usize::from(ks.len() >= 2);
    }
    assert!(maps_with_two > 100);

    let device = col::<StructArray>(&b, "device");
    share("null devices", device.null_count(), n, 0.02);
    let screen = child::<StructArray>(device, "screen");
    let height = child::<Int32Array>(screen, "height");
    assert!(height.values().iter().all(|h| (480..=2160).contains(h)));
}

#[test]
fn wide_u64_is_fifty_full_range_columns() {
    let spec = Spec::preset("wide-u64").unwrap();
    let b = batch(&spec, 1, 0, 20_000);
    assert_eq!(b.num_columns(), 50);
    for (f, c) in b.schema().fields().iter().zip(b.columns()) {
        assert_eq!(f.data_type(), &DataType::UInt64);
        assert!(!f.is_nullable());
        let c = c.as_any().downcast_ref::<UInt64Array>().unwrap();
        let high = c.values().iter().filter(|v| **v >= 1 << 63).count();
        share("top bit", high, c.len(), 0.5);
    }
    assert_ne!(b.column(0), b.column(1));
}

#[test]
fn every_generator_and_type() {
    let text = r#"
name = "all"
[[fields]]
name = "b"
type = "boolean"
probability = 0.25
[[fields]]
name = "i8"
type = "int8"
uniform = { min = -128, max = 127 }
[[fields]]
name = "u16"
type = "uint16"
sequence = { start = 10, step = 3 }
[[fields]]
name = "i32n"
type = "int32"
normal = { mean = 0, std = 10, min = -5, max = 5 }
[[fields]]
name = "f32"
type = "float32"
uniform = { min = 1.0, max = 2.0 }
[[fields]]
name = "f64z"
type = "float64"
zipf = { s = 1.0, values = [1.5, 2.5] }
[[fields]]
name = "big"
type = "uint64"
zipf = { s = 1.2, n = 10_000_000, start = 0 }
[[fields]]
name = "d"
type = "date32"
uniform = { min = 2024-01-01, max = "2024-01-31" }
[[fields]]
name = "t"
type = "timestamp(ms)"
sequence = { start = 1970-01-01T00:00:01Z, step = 1000 }
[[fields]]
name = "s"
type = "large_utf8"
words = { list = "last_names", min = 0, max = 3 }
[[fields]]
name = "bin"
type = "binary"
template = "{hex(4)}-{uniform(-3,3):03}"
[[fields]]
name = "c"
type = "utf8"
constant = "x"
[[fields]]
name = "m"
type = "map"
length = 2
[fields.key]
type = "int64"
zipf = { s = 1, values = [1, 2, 3] }
[fields.value]
type = "list"
length = { normal = { mean = 1, std = 1, min = 0, max = 3 } }
[fields.value.item]
type = "boolean"
weighted = { values = [true, false], weights = [1, 0] }
"#;
    let spec = Spec::parse(text, "all.toml").unwrap();
    let b = batch(&spec, 5, 0, 10_000);
    for c in b.columns() {
        c.to_data().validate_full().unwrap();
    }
    let bools = col::<BooleanArray>(&b, "b");
    share("true", bools.true_count(), 10_000, 0.25);
    let seq = col::<arrow_array::UInt16Array>(&b, "u16");
    assert_eq!(seq.value(5), 25);
    let n = col::<Int32Array>(&b, "i32n");
    assert!(n.values().iter().all(|v| (-5..=5).contains(v)));
    let d = col::<arrow_array::Date32Array>(&b, "d");
    assert!(d.values().iter().all(|v| (19_723..=19_753).contains(v)));
    let t = col::<arrow_array::TimestampMillisecondArray>(&b, "t");
    assert_eq!(t.value(2), 3000);
    let bin = col::<arrow_array::BinaryArray>(&b, "bin");
    let v = std::str::from_utf8(bin.value(0)).unwrap();
    assert_eq!(v.len(), 4 + 1 + 3, "{v}");
    let big = col::<UInt64Array>(&b, "big");
    share(
        "zipf rank 1",
        big.values().iter().filter(|v| **v == 0).count(),
        10_000,
        {
            let norm: f64 = (1..=10_000_000u64).map(|k| (k as f64).powf(-1.2)).sum();
            1.0 / norm
        },
    );
    let m = col::<MapArray>(&b, "m");
    assert!(m.value_offsets().windows(2).all(|w| w[1] - w[0] == 2));
}

/// Bad specs: (spec body after the name line, expected message).
#[test]
fn bad_specs_name_the_field_and_line() {
    let cases: &[(&str, &str)] = &[
        (
            "[[fields]]\nname = \"w\"\ntype = \"utf8\"\nweighted = { values = [\"a\", \"b\"], weights = [1, -2] }",
            "bad.toml:5: field `w`: weights must be non-negative numbers, not -2",
        ),
        (
            "[[fields]]\nname = \"z\"\ntype = \"int64\"\nzipf = { s = 0, n = 10 }",
            "bad.toml:5: field `z`: zipf exponent s must be a positive number, not 0",
        ),
        (
            "[[fields]]\nname = \"e\"\ntype = \"utf8\"\nweighted = { values = [] }",
            "bad.toml:5: field `e`: `values` is empty",
        ),
        (
            "[[fields]]\nname = \"e\"\ntype = \"utf8\"\nweighted = { values = [\"a\"], weights = [0] }",
            "bad.toml:5: field `e`: weighted weights sum to zero",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int65\"\nconstant = 1",
            "bad.toml:4: field `x`: unknown type `int65`",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int64\"\nnul_rate = 0.5\nconstant = 1",
            "bad.toml:5: field `x`: unknown key `nul_rate` in a field",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int8\"\nconstant = 300",
            "bad.toml:5: field `x`: `constant` = 300 is outside the type's range -128..=127",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"utf8\"\ntemplate = \"{nope}\"",
            "bad.toml:5: field `x`: template \"{nope}\": unknown placeholder `nope`",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"utf8\"\nuniform = { min = 1, max = 2 }",
            "bad.toml:5: field `x`: `uniform` does not generate string values",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int64\"",
            "bad.toml:2: field `x`: needs a generator",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int64\"\nconstant = 1\nnull_rate = 1.5",
            "bad.toml:6: field `x`: `null_rate` must be between 0 and 1, not 1.5",
        ),
        (
            "[[fields]]\nname = \"s\"\ntype = \"struct\"\n[[fields.fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n[[fields.fields.when]]\nfield = \"b\"\nis_null = true\nnull_rate = 1",
            "bad.toml:10: field `s.a`: `when` refers to `b`, which is not a sibling",
        ),
        (
            "[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n[[fields.when]]\nfield = \"b\"\nis = 3\nnull_rate = 1\n[[fields]]\nname = \"b\"\ntype = \"int64\"\nuniform = { min = 1, max = 5 }",
            "bad.toml:8: field `a`: `is` needs `b` to be categorical",
        ),
        (
            "[[fields]]\nname = \"a\"\ntype = \"int64\"\nweighted = { values = [1, 2] }\n[[fields.when]]\nfield = \"b\"\nis = 1\nnull_rate = 1\n[[fields]]\nname = \"b\"\ntype = \"int64\"\nweighted = { values = [1, 2] }\n[[fields.when]]\nfield = \"a\"\nis = 2\nnull_rate = 1",
            "field `a`: `when` cases or expressions form a cycle",
        ),
        (
            "[[fields]]\nname = \"l\"\ntype = \"list\"\n[fields.item]\ntype = \"int64\"\nconstant = 1",
            "bad.toml:2: field `l`: needs a `length`",
        ),
        (
            "[[fields]]\nname = \"m\"\ntype = \"map\"\nlength = 1\n[fields.key]\ntype = \"utf8\"\nconstant = \"k\"\nnull_rate = 0.1\n[fields.value]\ntype = \"int64\"\nconstant = 1",
            "field `m.key`: map keys cannot be null",
        ),
        (
            "[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 2",
            "bad.toml:6: field `a`: a field of this name is already on line 2",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int64\"\nconstant = 1\nuniform = { min = 1, max = 2 }",
            "bad.toml:6: field `x`: has both `constant` and `uniform`; give one generator",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int64\"\nconstant = ",
            "bad.toml:5:12: TOML syntax",
        ),
        (
            "[[fields]]\nname = \"w\"\ntype = \"utf8\"\nwords = { list = \"klingon\" }",
            "bad.toml:5: field `w`: unknown word list `klingon`",
        ),
    ];
    for (body, want) in cases {
        let text = format!("name = \"bad\"\n{body}\n");
        let err = Spec::parse(&text, "bad.toml").expect_err(body).to_string();
        assert!(
            err.contains(want),
            "\n{body}\n  got:  {err}\n  want: {want}"
        );
    }
    // Top-level problems.
    for (text, want) in [
        ("fields = []", "bad.toml:1: the spec needs a `name`"),
        (
            "name = \"a b\"\n",
            "bad.toml:1: `name` = \"a b\": use letters",
        ),
        ("name = \"x\"\n", "the spec needs `fields`"),
        (
            "name = \"x\"\nextra = 1\n",
            "bad.toml:2: unknown key `extra` in the spec",
        ),
    ] {
        let err = Spec::parse(text, "bad.toml").unwrap_err().to_string();
        assert!(err.contains(want), "{text}: {err}");
    }
}

#[test]
fn conditional_generators_switch_per_row() {
    let text = r#"
name = "cond"
[[fields]]
name = "value"
type = "int64"
constant = 0
[[fields.when]]
field = "tier"
is = ["gold", "platinum"]
uniform = { min = 100, max = 200 }
[[fields.when]]
field = "tier"
is_null = true
null_rate = 1
[[fields]]
name = "tier"
type = "utf8"
null_rate = 0.1
weighted = { values = ["basic", "gold", "platinum"], weights = [8, 1, 1] }
"#;
    let spec = Spec::parse(text, "cond.toml").unwrap();
    let b = batch(&spec, 8, 0, 20_000);
    let tier = col::<StringArray>(&b, "tier");
    let value = col::<Int64Array>(&b, "value");
    for i in 0..b.num_rows() {
        match tier.is_valid(i).then(|| tier.value(i)) {
            None => assert!(value.is_null(i)),
            Some("basic") => assert_eq!(value.value(i), 0),
            Some(_) => assert!((100..=200).contains(&value.value(i))),
        }
    }
}

/// The first example of the guide's spec language page.
#[test]
fn the_guide_example_spec_parses_and_generates() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/src/spec/README.md"
    ))
    .unwrap();
    let fence = "```toml spec\nname = \"orders\"";
    let start = page.find(fence).expect("the guide's orders example") + "```toml spec\n".len();
    let end = start + page[start..].find("```").unwrap();
    let spec = Spec::parse(&page[start..end], "docs/src/spec/README.md").unwrap();
    let b = batch(&spec, 1, 0, 5_000);
    for c in b.columns() {
        c.to_data().validate_full().unwrap();
    }
    assert_eq!(b.num_columns(), 5);
}

#[test]
fn huge_lists_are_refused_per_batch_not_allocated() {
    let text = "name = \"big\"\n[[fields]]\nname = \"l\"\ntype = \"list\"\nlength = 1_000_000\n[fields.item]\ntype = \"int64\"\nconstant = 1\n";
    let spec = Spec::parse(text, "big.toml").unwrap();
    let g = spec.generator(1).unwrap();
    let e = g.generate(0, 100, &mut Default::default()).unwrap_err();
    assert!(e.to_string().contains("use smaller batches"), "{e}");
    // A small enough batch of the same spec works.
    let b = g.generate(0, 3, &mut Default::default()).unwrap();
    assert_eq!(b.num_rows(), 3);
}

#[test]
fn review_cases_are_refused_with_their_line() {
    for (body, want) in [
        // A clamp range outside the type: refused, not a panic later.
        (
            "[[fields]]\nname = \"n\"\ntype = \"int8\"\nnormal = { mean = 0, std = 1, min = 200 }",
            "bad.toml:5: field `n`: normal's min and max leave no value",
        ),
        (
            "[[fields]]\nname = \"n\"\ntype = \"float64\"\nnormal = { mean = 0, std = 1, min = nan }",
            "normal needs a finite `min`",
        ),
        (
            "[[fields]]\nname = \"z\"\ntype = \"int64\"\nzipf = { s = 1, n = 2, start = 170141183460469231731687303715884105727 }",
            "do not fit the type's range",
        ),
        (
            "[[fields]]\nname = \"d\"\ntype = \"date32\"\nconstant = 4294967297",
            "outside the date32 range",
        ),
        (
            "[[fields]]\nname = \"d\"\ntype = \"date32\"\nconstant = \"2023-02-31\"",
            "is not a date",
        ),
        (
            "[[fields]]\nname = \"a.b\"\ntype = \"int64\"\nconstant = 1",
            "cannot contain `.`",
        ),
        (
            "[[fields]]\nname = \"m\"\ntype = \"map\"\nlength = 2\n[fields.key]\ntype = \"utf8\"\nweighted = { values = [\"a\", \"a\"] }\n[fields.value]\ntype = \"int64\"\nconstant = 1",
            "map key values must be distinct",
        ),
        (
            "[[fields]]\nname = \"m\"\ntype = \"map\"\nlength = 300\n[fields.key]\ntype = \"int8\"\nsequence = { start = 0, step = 1 }\n[fields.value]\ntype = \"int64\"\nconstant = 1",
            "only 256 possible values",
        ),
        (
            "[[fields]]\nname = \"m\"\ntype = \"map\"\nlength = 2\n[fields.key]\ntype = \"int64\"\nsequence = { step = 0 }\n[fields.value]\ntype = \"int64\"\nconstant = 1",
            "non-zero step",
        ),
        (
            "[[fields]]\nname = \"w\"\ntype = \"utf8\"\nweighted = { values = [\"a\", \"b\"], weights = [1e308, 1e308] }",
            "scale them down",
        ),
    ] {
        let text = format!("name = \"bad\"\n{body}\n");
        let err = Spec::parse(&text, "bad.toml").expect_err(body).to_string();
        assert!(
            err.contains(want),
            "\n{body}\n  got:  {err}\n  want: {want}"
        );
    }
    // `is` on a sibling whose cases replace its generator is refused
    // whatever the field order.
    let fields = [
        "[[fields]]\nname = \"b\"\ntype = \"int32\"\nconstant = 0\n[[fields.when]]\nfield = \"a\"\nis = true\nnull_rate = 1\n",
        "[[fields]]\nname = \"a\"\ntype = \"boolean\"\nprobability = 0.5\n[[fields.when]]\nfield = \"c\"\nis = true\nconstant = true\n",
        "[[fields]]\nname = \"c\"\ntype = \"boolean\"\nprobability = 0.5\n",
    ];
    for order in [[0, 1, 2], [2, 1, 0], [1, 0, 2]] {
        let text = format!("name = \"x\"\n{}", order.map(|i| fields[i]).concat());
        let err = Spec::parse(&text, "x.toml").unwrap_err().to_string();
        assert!(err.contains("replaces its generator"), "{order:?}: {err}");
    }
    // Cases of one field reading two siblings are refused at parse time.
    let text = "name = \"x\"\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\n[[fields.when]]\nfield = \"b\"\nis_null = true\nnull_rate = 1\n[[fields.when]]\nfield = \"c\"\nis_null = true\nnull_rate = 1\n[[fields]]\nname = \"b\"\ntype = \"int64\"\nconstant = 1\n[[fields]]\nname = \"c\"\ntype = \"int64\"\nconstant = 1\n";
    let err = Spec::parse(text, "x.toml").unwrap_err().to_string();
    assert!(
        err.contains(
            "x.toml:10: field `a`: all `when` cases of a field must read the same sibling"
        ),
        "{err}"
    );
}

/// Templates of every shape the engine distinguishes (one step, two steps,
/// longer; literals before, between and after slots, short and longer
/// than one 16-byte block) against `format!` of the same row ids.
#[test]
fn templates_match_an_independent_formatting() {
    let text = r#"
name = "templates"
[[fields]]
name = "one"
type = "utf8"
template = "+91-99-{seq:08}"
[[fields]]
name = "bare"
type = "utf8"
template = "{seq}"
[[fields]]
name = "two"
type = "utf8"
template = "id {seq:5} / {seq:03}"
[[fields]]
name = "long"
type = "utf8"
template = "a literal longer than sixteen bytes {seq} and {{braces}} then {seq:012} and a tail that is long too"
[[fields]]
name = "trailing"
type = "large_utf8"
template = "{seq}-{seq}-{seq}-{seq}."
[[fields]]
name = "literal"
type = "utf8"
template = "only text, no slots"
"#;
    let spec = Spec::parse(text, "templates.toml").unwrap();
    for first in [0u64, 99_999_990, 123_456_789_012] {
        let b = batch(&spec, 1, first, 40);
        for c in b.columns() {
            c.to_data().validate_full().unwrap();
        }
        for i in 0..40 {
            let id = first + i as u64;
            let one = col::<StringArray>(&b, "one").value(i);
            assert_eq!(one, format!("+91-99-{id:08}"));
            assert_eq!(col::<StringArray>(&b, "bare").value(i), id.to_string());
            assert_eq!(
                col::<StringArray>(&b, "two").value(i),
                format!("id {id:5} / {id:03}")
            );
            assert_eq!(
                col::<StringArray>(&b, "long").value(i),
                format!(
                    "a literal longer than sixteen bytes {id} and {{braces}} then {id:012} and a tail that is long too"
                )
            );
            assert_eq!(
                col::<arrow_array::LargeStringArray>(&b, "trailing").value(i),
                format!("{id}-{id}-{id}-{id}.")
            );
            assert_eq!(
                col::<StringArray>(&b, "literal").value(i),
                "only text, no slots"
            );
        }
    }
}

/// A string field is generated by a specialised loop unless a sibling's
/// case reads it; both ways must give the same values.
#[test]
fn string_fields_are_the_same_whether_or_not_a_sibling_reads_them() {
    let fields = r#"
[[fields]]
name = "full"
type = "utf8"
null_rate = 0.2
template = "{first_name} {last_name}"
[[fields]]
name = "dotted"
type = "utf8"
null_rate = 0.1
template = "{word}.{word}"
[[fields]]
name = "mixed"
type = "utf8"
template = "{first_name}-{hex(6)}/{uniform(-50,50):04}#{zipf(1.1,1000)}:{seq:09} {word}"
[[fields]]
name = "pick"
type = "utf8"
null_rate = 0.3
weighted = { values = ["a", "bb", "a string longer than sixteen bytes"], weights = [1, 2, 3] }
[[fields]]
name = "words"
type = "utf8"
words = { list = "words", min = 1, max = 4 }
"#;
    let readers = ["full", "dotted", "mixed", "pick", "words"]
        .iter()
        .map(|f| {
            format!(
                "[[fields]]\nname = \"r_{f}\"\ntype = \"int32\"\nconstant = 1\n\
                 [[fields.when]]\nfield = \"{f}\"\nis_null = true\nnull_rate = 1\n"
            )
        })
        .collect::<String>();
    let alone = Spec::parse(&format!("name = \"s\"\n{fields}"), "a.toml").unwrap();
    let read = Spec::parse(&format!("name = \"s\"\n{fields}{readers}"), "b.toml").unwrap();
    for first in [0u64, 1_000_003] {
        let a = batch(&alone, 11, first, 3000);
        let b = batch(&read, 11, first, 3000);
        for f in ["full", "dotted", "mixed", "pick", "words"] {
            let x = col::<StringArray>(&a, f);
            let y = col::<StringArray>(&b, f);
            assert_eq!(x, y, "field {f}");
            assert!(x.null_count() > 0 || !["full", "dotted", "pick"].contains(&f));
            // The readers saw the same nulls.
            let r = col::<Int32Array>(&b, &format!("r_{f}"));
            for i in 0..x.len() {
                assert_eq!(r.is_null(i), x.is_null(i), "field {f} row {i}");
            }
        }
    }
}

/// A value of the wrong kind where a table, array or number belongs is
/// named, with its kind, at its line (a TOML date-time included, which
/// TOML hands over as a table of its own).
#[test]
fn values_of_the_wrong_kind_are_named_at_their_line() {
    let field = "name = \"e\"\n[[fields]]\nname = \"x\"\n";
    let cases = [
        (
            format!("{field}type = \"int64\"\nuniform = 1979-05-27\n"),
            "k.toml:5: field `x`: `uniform` must be a table, not a date-time",
        ),
        (
            format!("{field}type = \"int64\"\nvalues_by_row = 1979-05-27\n"),
            "k.toml:5: field `x`: `values_by_row` must be an array, not a date-time",
        ),
        (
            format!("{field}type = \"int64\"\nconstant = 1\nwhen = 3\n"),
            "k.toml:6: field `x`: `when` must be an array of tables, not an integer",
        ),
        (
            format!(
                "{field}type = \"list\"\nlength = \"x\"\n[fields.item]\ntype = \"int64\"\nconstant = 1\n"
            ),
            "k.toml:5: field `x`: `length` must be a table, not a string",
        ),
        (
            format!("{field}type = \"int64\"\nparent = 3\n"),
            "k.toml:5: field `x`: `parent` must be a table, not an integer",
        ),
        (
            format!("{field}type = \"int64\"\nconstant = 1\nnull_rate = \"a\"\n"),
            "k.toml:6: field `x`: `null_rate` must be a number, not a string",
        ),
        (
            format!("{field}type = \"int64\"\nweighted = {{ values = [[1], [2]] }}\n"),
            "k.toml:5: field `x`: `values` must be an integer, not an array",
        ),
        (
            format!(
                "{field}type = \"int64\"\nconstant = 1\n[fields.uniform]\nmin = 1\nmax = 2\nfoo = 3\n"
            ),
            "k.toml:6: field `x`: has both `constant` and `uniform`; give one generator",
        ),
        (
            format!("{field}type = \"int64\"\n[fields.uniform]\nmin = 1\nmax = 2\nfoo = 3\n"),
            "k.toml:8: field `x`: unknown key `foo` in `uniform`; expected one of: min, max",
        ),
        (
            "name = \"e\"\nfields = 3\n".to_string(),
            "k.toml:2: `fields` must be an array of tables ([[fields]])",
        ),
        (
            "name = 3\n[[fields]]\nname = \"x\"\ntype = \"int64\"\nconstant = 1\n".to_string(),
            "k.toml:1: `name` must be a string, not an integer",
        ),
        (
            format!(
                "{field}type = \"int64\"\nconstant = 1\n[[fields.when]]\nfield = \"y\"\nis_null = true\nsequence = {{ per_parent = true }}\n[[fields]]\nname = \"y\"\ntype = \"int64\"\nconstant = 2\nnull_rate = 0.5\n"
            ),
            "k.toml:6: field `x`: a `when` case cannot give `position` (or a `per_parent` sequence): it is a field's own generator",
        ),
        (
            format!(
                "{field}type = \"int64\"\nconstant = 1\n[[fields.when]]\nfield = \"y\"\nis_null = true\naggregate = {{ table = \"t\", sum = \"a\" }}\n[[fields]]\nname = \"y\"\ntype = \"int64\"\nconstant = 2\nnull_rate = 0.5\n"
            ),
            "k.toml:6: field `x`: a `when` case cannot give `aggregate`: it is a field's own generator",
        ),
    ];
    for (text, want) in cases {
        let err = Spec::parse(&text, "k.toml").unwrap_err().to_string();
        assert_eq!(err, want, "{text}");
    }
}

/// A spec written as JSON (the document `strata spec schema` describes)
/// gives the rows of the same spec in TOML, and its errors keep their
/// line and column.
#[test]
fn json_specs_read_as_their_toml() {
    for (name, text) in PRESETS {
        let doc: serde_json::Value = toml::from_str(text).unwrap();
        let json = serde_json::to_string_pretty(&doc).unwrap();
        let from_toml = Spec::parse(text, name).unwrap();
        let from_json = Spec::parse(&json, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            batch(&from_json, 7, 100, 500),
            batch(&from_toml, 7, 100, 500),
            "{name}"
        );
    }
    let json = "{\n  \"name\": \"j\",\n  \"fields\": [\n    {\"name\": \"a\", \"type\": \"int64\",\n     \"uniform\": {\"min\": 1, \"max\": 5, \"mx\": 3}}\n  ]\n}\n";
    let err = Spec::parse(json, "j.json").unwrap_err().to_string();
    assert_eq!(
        err,
        "j.json:5: field `a`: unknown key `mx` in `uniform`; expected one of: min, max"
    );
    let err = Spec::parse("{\"name\": \"j\", \"fields\": 3}", "j.json")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "j.json:1: `fields` must be an array of tables ([[fields]])"
    );
    let err = Spec::parse("{\n \"name\": \"j\",\n \"description\": null\n}", "j.json")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "j.json:3:17: `null` is no spec value: leave the key out"
    );
    let err = Spec::parse("{\n \"name\": \"j\",\n}", "j.json")
        .unwrap_err()
        .to_string();
    assert_eq!(err, "j.json:3:1: JSON syntax: key must be a string");
    let err = Spec::parse("{\"name\": \"a/b\\/c\", \"fields\": []}", "j.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"a/b/c\": use letters"), "{err}");
}

/// Integers in every TOML radix, with `_` separators, read as the
/// numbers they write, for integers and decimals alike.
#[test]
fn integers_read_in_every_radix() {
    let text = "name = \"r\"\n\
        [[fields]]\nname = \"h\"\ntype = \"int64\"\nconstant = 0xff\n\
        [[fields]]\nname = \"u\"\ntype = \"int64\"\nuniform = { min = 0o17, max = 0b10000 }\n\
        [[fields]]\nname = \"s\"\ntype = \"int64\"\nconstant = -1_000\n\
        [[fields]]\nname = \"d\"\ntype = \"decimal(10, 2)\"\nconstant = 0x10\n\
        [[fields]]\nname = \"e\"\ntype = \"decimal(10, 2)\"\nconstant = 1_000\n";
    let spec = Spec::parse(text, "r.toml").unwrap();
    let b = batch(&spec, 1, 0, 64);
    assert!(
        col::<Int64Array>(&b, "h")
            .values()
            .iter()
            .all(|v| *v == 255)
    );
    assert!(
        col::<Int64Array>(&b, "u")
            .values()
            .iter()
            .all(|v| (15..=16).contains(v))
    );
    assert!(
        col::<Int64Array>(&b, "s")
            .values()
            .iter()
            .all(|v| *v == -1000)
    );
    let d = b
        .column_by_name("d")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::Decimal128Array>()
        .unwrap();
    assert!(d.values().iter().all(|v| *v == 1600));
    let e = b
        .column_by_name("e")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::Decimal128Array>()
        .unwrap();
    assert!(e.values().iter().all(|v| *v == 100_000));
}

/// `words` over the spec's own words, and without repeats in a value
/// (`distinct`), from its own words or a built-in list.
#[test]
fn words_from_own_lists_and_distinct_words() {
    let colours = [
        "almond",
        "antique",
        "aquamarine",
        "azure",
        "beige",
        "bisque",
        "black",
        "blanched",
        "blue",
        "blush",
    ];
    let list = colours
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!(
        "name = \"w\"\n\
        [[fields]]\nname = \"p_name\"\ntype = \"utf8\"\nwords = {{ values = [{list}], distinct = true, min = 5, max = 5 }}\n\
        [[fields]]\nname = \"any\"\ntype = \"utf8\"\nwords = {{ values = [{list}], min = 1, max = 3 }}\n\
        [[fields]]\nname = \"names\"\ntype = \"utf8\"\nwords = {{ list = \"first_names\", distinct = true, min = 2, max = 4 }}\n"
    );
    let spec = Spec::parse(&text, "w.toml").unwrap();
    let b = batch(&spec, 9, 0, 4000);
    let p = col::<StringArray>(&b, "p_name");
    let mut seen = std::collections::HashMap::new();
    for v in p.iter().flatten() {
        let words: Vec<&str> = v.split(' ').collect();
        assert_eq!(words.len(), 5, "{v}");
        let unique: std::collections::HashSet<&&str> = words.iter().collect();
        assert_eq!(unique.len(), 5, "{v}");
        for w in words {
            assert!(colours.contains(&w), "{w}");
            *seen.entry(w).or_insert(0usize) += 1;
        }
    }
    // Each of the ten is in half the values.
    for c in colours {
        share(c, seen[c], 4000, 0.5);
    }
    let any = col::<StringArray>(&b, "any");
    let mut repeats = 0;
    for v in any.iter().flatten() {
        let words: Vec<&str> = v.split(' ').collect();
        assert!((1..=3).contains(&words.len()), "{v}");
        assert!(words.iter().all(|w| colours.contains(w)), "{v}");
        let unique: std::collections::HashSet<&&str> = words.iter().collect();
        repeats += usize::from(unique.len() < words.len());
    }
    assert!(repeats > 100, "{repeats}");
    for v in col::<StringArray>(&b, "names").iter().flatten() {
        let words: Vec<&str> = v.split(' ').collect();
        assert!((2..=4).contains(&words.len()), "{v}");
        let unique: std::collections::HashSet<&&str> = words.iter().collect();
        assert_eq!(unique.len(), words.len(), "{v}");
    }
    for (w, want) in [
        (
            "words = { values = [\"a\", \"b\"], distinct = true, min = 3, max = 3 }",
            "w.toml:5: field `x`: words draws up to 3 distinct words, but the list has 2",
        ),
        (
            "words = { values = [\"a\", \"b\", \"a\"] }",
            "w.toml:5: field `x`: `values` lists \"a\" twice; each word once (weights are not taken)",
        ),
        (
            "words = { list = \"words\", values = [\"a\"] }",
            "w.toml:5: field `x`: `words` takes `list` (a built-in list or one of the spec's `lists`) or `values` (your own words), not both",
        ),
        (
            "words = { values = [] }",
            "w.toml:5: field `x`: `values` is empty",
        ),
        (
            "words = { values = [\"a\"], distinct = \"yes\" }",
            "w.toml:5: field `x`: `distinct` must be true or false, not a string",
        ),
    ] {
        let text = format!("name = \"w\"\n[[fields]]\nname = \"x\"\ntype = \"utf8\"\n{w}\n");
        let err = Spec::parse(&text, "w.toml").unwrap_err().to_string();
        assert_eq!(err, want, "{w}");
    }
}

/// `lists = { NAME = [...] }`: word lists of the spec's own, named once
/// and read by any `words` or `text` generator as `list = "NAME"`, the
/// same as its words given as `values`.
#[test]
fn named_lists_are_the_words_given_once() {
    let own = "name = \"w\"\n\
        [[fields]]\nname = \"p_name\"\ntype = \"utf8\"\nwords = { values = [\"red\", \"green\", \"blue\", \"grey\"], distinct = true, min = 2, max = 3 }\n\
        [[fields]]\nname = \"note\"\ntype = \"utf8\"\ntext = { values = [\"red\", \"green\", \"blue\", \"grey\"], size = 4096, min = 5, max = 20 }\n";
    let named = "name = \"w\"\nlists = { colours = [\"red\", \"green\", \"blue\", \"grey\"] }\n\
        [[fields]]\nname = \"p_name\"\ntype = \"utf8\"\nwords = { list = \"colours\", distinct = true, min = 2, max = 3 }\n\
        [[fields]]\nname = \"note\"\ntype = \"utf8\"\ntext = { list = \"colours\", size = 4096, min = 5, max = 20 }\n";
    let a = batch(&Spec::parse(own, "w.toml").unwrap(), 3, 0, 2000);
    let b = batch(&Spec::parse(named, "w.toml").unwrap(), 3, 0, 2000);
    assert_eq!(a, b);
    assert!(
        col::<StringArray>(&b, "note")
            .iter()
            .flatten()
            .all(|v| v.len() >= 5)
    );
    for (head, generator, want) in [
        (
            "lists = { colours = [\"red\"] }",
            "words = { list = \"colors\" }",
            "w.toml:6: field `x`: unknown word list `colors`; the built-in lists are words, first_names, last_names; the spec's own lists are colours",
        ),
        (
            "",
            "text = { list = \"colors\" }",
            "w.toml:6: field `x`: unknown word list `colors`; the built-in lists are words, first_names, last_names",
        ),
        (
            "lists = { words = [\"a\"] }",
            "words = { list = \"words\" }",
            "w.toml:2: `lists.words`: `words` is a built-in list; give yours another name",
        ),
        (
            "lists = { c = [\"a\", \"a\"] }",
            "words = { list = \"c\" }",
            "w.toml:2: `lists.c` lists \"a\" twice; each word once (weights are not taken)",
        ),
        (
            "lists = { c = [] }",
            "words = { list = \"c\" }",
            "w.toml:2: `lists.c` is empty",
        ),
        (
            "lists = [\"a\"]",
            "words = { list = \"c\" }",
            "w.toml:2: `lists` must be a table of word lists (`lists = { colors = [\"red\", \"blue\"] }`)",
        ),
        (
            "lists = { c = [\"a\", \"b\"] }",
            "words = { list = \"c\", distinct = true, min = 3 }",
            "w.toml:6: field `x`: words draws up to 3 distinct words, but the list has 2",
        ),
    ] {
        let text = format!(
            "name = \"w\"\n{head}\n[[fields]]\nname = \"x\"\ntype = \"utf8\"\n{generator}\n"
        );
        let err = Spec::parse(&text, "w.toml").unwrap_err().to_string();
        assert_eq!(err, want, "{generator}");
    }
    // A dataset's lists serve every table.
    let text = "name = \"d\"\nlists = { c = [\"x\", \"y\"] }\n\
        [[tables]]\nname = \"t\"\nrows = 5\n[[tables.fields]]\nname = \"a\"\ntype = \"utf8\"\nwords = { list = \"c\" }\n\
        [[tables]]\nname = \"u\"\nrows = 5\n[[tables.fields]]\nname = \"b\"\ntype = \"utf8\"\ntext = { list = \"c\", size = 100, min = 1, max = 3 }\n";
    let d = strata_gen::Dataset::parse(text, "d.toml").unwrap();
    assert_eq!(d.tables.len(), 2);
    // A list's file is read by the caller's reader, relative to the spec.
    let files = "name = \"w\"\nlists = { colours = { file = \"c.txt\" } }\n\
        [[fields]]\nname = \"p_name\"\ntype = \"utf8\"\nwords = { list = \"colours\", distinct = true, min = 2, max = 3 }\n\
        [[fields]]\nname = \"note\"\ntype = \"utf8\"\ntext = { list = \"colours\", size = 4096, min = 5, max = 20 }\n";
    let read = |name: &str| match name {
        "c.txt" => Ok("# four colours\nred\ngreen\n\nblue\n  grey  \n".to_string()),
        other => Err(format!("no {other}")),
    };
    let d = strata_gen::Dataset::parse_with_files(files, "w.toml", &read).unwrap();
    let g = d.generator(0, 3, 1.0).unwrap();
    let c = strata_gen::BatchGenerator::generate(&g, 0, 2000, &mut Default::default()).unwrap();
    assert_eq!(c, a);
    assert_eq!(
        strata_gen::Dataset::parse(files, "text")
            .unwrap_err()
            .to_string(),
        "text:2: `lists.colours`: file `c.txt`: a list's file is read next to its spec file, and text was not read from one"
    );
}

/// `chars`: strings of `min..=max` characters, each from the alphabet
/// with equal odds (ASCII or not).
#[test]
fn chars_draw_lengths_and_characters_evenly() {
    let text = "name = \"c\"\n\
        [[fields]]\nname = \"addr\"\ntype = \"utf8\"\nchars = { alphabet = \"abcdefghij0123456789\", min = 10, max = 40 }\n\
        [[fields]]\nname = \"greek\"\ntype = \"utf8\"\nchars = { alphabet = \"αβγ\", min = 3 }\n";
    let spec = Spec::parse(text, "c.toml").unwrap();
    let b = batch(&spec, 4, 0, 5000);
    let addr = col::<StringArray>(&b, "addr");
    let mut lengths = [0usize; 41];
    let mut counts = std::collections::HashMap::new();
    let mut total = 0;
    for v in addr.iter().flatten() {
        lengths[v.len()] += 1;
        for c in v.chars() {
            *counts.entry(c).or_insert(0usize) += 1;
            total += 1;
        }
    }
    assert_eq!(lengths[..10].iter().sum::<usize>(), 0);
    for (len, n) in lengths.iter().enumerate().skip(10) {
        share(&format!("length {len}"), *n, 5000, 1.0 / 31.0);
    }
    assert_eq!(counts.len(), 20);
    for (c, n) in counts {
        share(&format!("{c}"), n, total, 0.05);
    }
    for v in col::<StringArray>(&b, "greek").iter().flatten() {
        assert_eq!(v.chars().count(), 3, "{v}");
        assert!(v.chars().all(|c| "αβγ".contains(c)), "{v}");
    }
    for (g, want) in [
        (
            "chars = { alphabet = \"aba\" }",
            "c.toml:5: field `x`: the alphabet holds 'a' twice; each character once (every one is equally likely)",
        ),
        (
            "chars = { alphabet = \"\" }",
            "c.toml:5: field `x`: the alphabet is empty",
        ),
        (
            "chars = { min = 3 }",
            "c.toml:5: field `x`: `chars` needs `alphabet`",
        ),
        (
            "chars = { alphabet = \"ab\", min = 5, max = 2 }",
            "c.toml:5: field `x`: chars needs 0 <= min <= max <= 65536, not min 5 and max 2",
        ),
    ] {
        let text = format!("name = \"c\"\n[[fields]]\nname = \"x\"\ntype = \"utf8\"\n{g}\n");
        assert_eq!(
            Spec::parse(&text, "c.toml").unwrap_err().to_string(),
            want,
            "{g}"
        );
    }
    let int =
        "name = \"c\"\n[[fields]]\nname = \"x\"\ntype = \"int64\"\nchars = { alphabet = \"ab\" }\n";
    assert_eq!(
        Spec::parse(int, "c.toml").unwrap_err().to_string(),
        "c.toml:5: field `x`: `chars` does not generate integer values"
    );
}

/// `text`: windows of a pseudo-text made of words, of the lengths asked,
/// each a piece of the same text (so two windows overlapping at a place
/// agree), the same text for every seed.
#[test]
fn text_windows_are_pieces_of_one_pseudo_text() {
    let text = "name = \"t\"\n\
        [[fields]]\nname = \"c\"\ntype = \"utf8\"\ntext = { values = [\"carefully\", \"final\", \"deposits\", \"sleep\", \"quickly\"], size = 5000, min = 20, max = 60 }\n\
        [[fields]]\nname = \"w\"\ntype = \"utf8\"\ntext = { size = 100000, min = 5, max = 5 }\n";
    let spec = Spec::parse(text, "t.toml").unwrap();
    let words = ["carefully", "final", "deposits", "sleep", "quickly"];
    let mut seen = std::collections::HashSet::new();
    for seed in [1, 2] {
        let b = batch(&spec, seed, 0, 3000);
        for v in col::<StringArray>(&b, "c").iter().flatten() {
            assert!((20..=60).contains(&v.len()), "{v:?}");
            // Whole words inside a window are the text's words.
            let parts: Vec<&str> = v.split(' ').collect();
            for w in &parts[1..parts.len() - 1] {
                assert!(words.contains(w), "{w:?} in {v:?}");
            }
            seen.insert(v.to_string());
        }
        assert!(
            col::<StringArray>(&b, "w")
                .iter()
                .flatten()
                .all(|v| v.len() == 5)
        );
    }
    assert!(seen.len() > 4000, "{}", seen.len());
    // One text, the same for every seed: a window as long as the text is
    // the whole text, in every row.
    let whole = "name = \"t\"\n[[fields]]\nname = \"all\"\ntype = \"utf8\"\ntext = { size = 50, min = 50, max = 50 }\n";
    let spec = Spec::parse(whole, "t.toml").unwrap();
    let mut texts = std::collections::HashSet::new();
    for seed in [1, 2, 3] {
        let b = batch(&spec, seed, 0, 100);
        texts.extend(
            col::<StringArray>(&b, "all")
                .iter()
                .flatten()
                .map(str::to_string),
        );
    }
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts.iter().next().unwrap().len(), 50);
    for (g, want) in [
        (
            "text = { size = 10, min = 5, max = 20 }",
            "t.toml:5: field `x`: text needs 0 <= min <= max <= size (10), not min 5 and max 20",
        ),
        (
            "text = { values = [\"é\"] }",
            "t.toml:5: field `x`: text's words are ASCII (its windows are cut at any byte), not \"é\"",
        ),
        (
            "text = { size = 0 }",
            "t.toml:5: field `x`: text's `size` is 1 to 268435456 characters, not 0",
        ),
    ] {
        let text = format!("name = \"t\"\n[[fields]]\nname = \"x\"\ntype = \"utf8\"\n{g}\n");
        assert_eq!(
            Spec::parse(&text, "t.toml").unwrap_err().to_string(),
            want,
            "{g}"
        );
    }
}
