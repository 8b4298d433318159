//! Decimal fields: the `decimal(P, S)` type, its values in exact units of
//! the scale, its generators, and the errors of bad decimal specs.

use arrow_array::{Array, Decimal128Array, RecordBatch};
use arrow_schema::DataType;
use strata_gen::BatchGenerator;
use strata_gen::{Generator, Kind, Spec, Value};

fn spec(fields: &str) -> Spec {
    Spec::parse(&format!("name = \"d\"\n{fields}"), "d.toml")
        .unwrap_or_else(|e| panic!("{e}\n{fields}"))
}

fn error(fields: &str) -> String {
    Spec::parse(&format!("name = \"d\"\n{fields}"), "d.toml")
        .expect_err(fields)
        .to_string()
}

fn batch(spec: &Spec, seed: u64, first: u64, len: usize) -> RecordBatch {
    let g = spec.generator(seed).unwrap();
    g.generate(first, len, &mut Default::default()).unwrap()
}

fn decimals<'a>(b: &'a RecordBatch, name: &str) -> &'a Decimal128Array {
    b.column_by_name(name)
        .unwrap()
        .as_any()
        .downcast_ref::<Decimal128Array>()
        .unwrap()
}

fn generator(spec: &Spec, i: usize) -> &Generator {
    match &spec.fields[i].kind {
        Kind::Scalar { generator, .. } => generator,
        other => panic!("not a scalar: {other:?}"),
    }
}

#[test]
fn types_and_values_are_exact_units_of_the_scale() {
    let s = spec(
        r#"
[[fields]]
name = "price"
type = "decimal(15, 2)"
uniform = { min = 1.00, max = 104949.50 }

[[fields]]
name = "rate"
type = "Decimal128( 5,3 )"
uniform = { min = "-0.125", max = 2 }

[[fields]]
name = "wide"
type = "decimal(38, 10)"
weighted = { values = ["-123456789.0123456789", 0, 1e2, 2.50e-1, "1000e-3"] }
"#,
    );
    let types: Vec<DataType> = spec_types(&s);
    assert_eq!(
        types,
        [
            DataType::Decimal128(15, 2),
            DataType::Decimal128(5, 3),
            DataType::Decimal128(38, 10)
        ]
    );
    assert_eq!(
        *generator(&s, 0),
        Generator::Uniform {
            min: Value::Int(100),
            max: Value::Int(10_494_950)
        }
    );
    assert_eq!(
        *generator(&s, 1),
        Generator::Uniform {
            min: Value::Int(-125),
            max: Value::Int(2000)
        }
    );
    let Generator::Weighted { values, .. } = generator(&s, 2) else {
        panic!("weighted")
    };
    assert_eq!(
        values,
        &[
            Value::Int(-1_234_567_890_123_456_789),
            Value::Int(0),
            Value::Int(1_000_000_000_000),
            Value::Int(2_500_000_000),
            Value::Int(10_000_000_000)
        ]
    );
}

fn spec_types(s: &Spec) -> Vec<DataType> {
    (0..s.fields.len())
        .map(|i| match &s.fields[i].kind {
            Kind::Scalar { data_type, .. } => data_type.clone(),
            _ => DataType::Null,
        })
        .collect()
}

#[test]
fn uniform_decimals_cover_their_units_and_nothing_else() {
    let s = spec(
        r#"
[[fields]]
name = "discount"
type = "decimal(15, 2)"
uniform = { min = 0.00, max = 0.10 }

[[fields]]
name = "price"
type = "decimal(15, 2)"
uniform = { min = 901.00, max = 104949.50 }
"#,
    );
    let b = batch(&s, 3, 0, 20_000);
    let d = decimals(&b, "discount");
    assert_eq!(d.data_type(), &DataType::Decimal128(15, 2));
    let mut seen = [0usize; 11];
    for v in d.values().iter() {
        assert!((0..=10).contains(v), "{v}");
        seen[*v as usize] += 1;
    }
    // Eleven units, each about 1/11 of the rows.
    for (u, n) in seen.iter().enumerate() {
        assert!((1500..2150).contains(n), "unit {u}: {n}");
    }
    let p = decimals(&b, "price");
    assert!(p.values().iter().all(|v| (90_100..=10_494_950).contains(v)));
    assert!(p.values().iter().any(|v| v % 100 != 0), "cents are drawn");
    // Arrow's checks, precision included.
    p.to_data().validate_full().unwrap();
    p.validate_decimal_precision(15).unwrap();
    assert_eq!(
        p.value_as_string(0).split('.').nth(1).map(str::len),
        Some(2)
    );
}

#[test]
fn decimals_are_a_function_of_seed_and_row() {
    let s = spec(
        r#"
[[fields]]
name = "a"
type = "decimal(9, 2)"
null_rate = 0.2
normal = { mean = 25.5, std = 3.25, min = 0, max = 50 }

[[fields]]
name = "b"
type = "decimal(18, 4)"
weighted = { values = [1.0, 2.5, "3.1415"], weights = [1, 2, 3] }

[[fields]]
name = "c"
type = "decimal(30, 3)"
sequence = { start = -10.5, step = 0.25 }
"#,
    );
    let whole = batch(&s, 11, 1_000, 3_000);
    let g = s.generator(11).unwrap();
    let mut scratch = Default::default();
    let mut at = 1_000u64;
    for len in [1usize, 999, 2_000] {
        let part = g.generate(at, len, &mut scratch).unwrap();
        assert_eq!(
            part,
            whole.slice((at - 1_000) as usize, len),
            "rows {at}+{len}"
        );
        at += len as u64;
    }
    assert_ne!(batch(&s, 12, 1_000, 3_000), whole, "another seed");
    // Normal: rounded to units of 0.01 and clamped to 0..=50.
    let a = decimals(&whole, "a");
    let present: Vec<i128> = a.iter().flatten().collect();
    assert!(present.iter().all(|v| (0..=5_000).contains(v)));
    let mean = present.iter().sum::<i128>() as f64 / present.len() as f64;
    assert!((mean - 2_550.0).abs() < 20.0, "{mean}");
    assert!(a.null_count() > 400 && a.null_count() < 800);
    // Weighted: only the listed values.
    let b = decimals(&whole, "b");
    assert!(
        b.values()
            .iter()
            .all(|v| [10_000, 25_000, 31_415].contains(v))
    );
    // Sequence: start + step * row, in units.
    let c = decimals(&whole, "c");
    assert_eq!(c.value(0), -10_500 + 250 * 1_000);
    assert_eq!(c.value(2_999), -10_500 + 250 * 3_999);
    assert_eq!(c.value_as_string(0), "239.500");
}

#[test]
fn bad_decimal_specs_name_the_field_and_line() {
    let f = |ty: &str, generator: &str| {
        format!("[[fields]]\nname = \"x\"\ntype = \"{ty}\"\n{generator}")
    };
    let cases = [
        (
            f("decimal(77, 2)", "constant = 1"),
            "d.toml:4: field `x`: type `decimal(77, 2)`: precision 77 is more than 76 digits (Decimal256, the widest)",
        ),
        (
            f("decimal(0, 0)", "constant = 1"),
            "d.toml:4: field `x`: type `decimal(0, 0)`: the precision is 1 to 76 digits, not 0",
        ),
        (
            f("decimal(5, 6)", "constant = 1"),
            "d.toml:4: field `x`: type `decimal(5, 6)`: the scale is 0 to the precision (5), not 6",
        ),
        (
            f("decimal(5, -1)", "constant = 1"),
            "d.toml:4: field `x`: type `decimal(5, -1)`: the scale is 0 to the precision (5), not -1",
        ),
        (
            f("decimal(5)", "constant = 1"),
            "d.toml:4: field `x`: type `decimal(5)`: a decimal type is `decimal(P, S)`, P digits (1 to 76) of which S (0 to P) follow the point",
        ),
        (
            f("decimal", "constant = 1"),
            "d.toml:4: field `x`: type `decimal`: a decimal type is `decimal(P, S)`, P digits (1 to 76) of which S (0 to P) follow the point",
        ),
        (
            f("decimal(x, 2)", "constant = 1"),
            "d.toml:4: field `x`: type `decimal(x, 2)`: a decimal type is `decimal(P, S)`, P digits (1 to 76) of which S (0 to P) follow the point",
        ),
        (
            f("decimal(5, 2)", "constant = 1.005"),
            "d.toml:5: field `x`: `constant` = 1.005 is not a decimal of at most 2 digits after the point",
        ),
        (
            f("decimal(5, 2)", "constant = 1000"),
            "d.toml:5: field `x`: `constant` = 100000 is outside the decimal (in units of its scale) range -99999..=99999",
        ),
        (
            f("decimal(5, 2)", "uniform = { min = \"1.5.0\", max = 2 }"),
            "d.toml:5: field `x`: `min` = \"1.5.0\" is not a decimal of at most 2 digits after the point",
        ),
        (
            f("decimal(5, 2)", "constant = 1.5e-3"),
            "d.toml:5: field `x`: `constant` = 1.5e-3 is not a decimal of at most 2 digits after the point",
        ),
        (
            f("decimal(5, 2)", "uniform = { min = 2, max = 1 }"),
            "d.toml:5: field `x`: uniform needs min below max, not 200 and 100",
        ),
        (
            f("decimal(38, 0)", "constant = \"9223372036854775808\""),
            "d.toml:5: field `x`: `constant` = 9223372036854775808 is outside the decimal (in units of its scale) range -9223372036854775807..=9223372036854775807",
        ),
        (
            f("decimal(5, 2)", "constant = true"),
            "d.toml:5: field `x`: `constant` must be a decimal number (12.5, or a string such as \"12.50\"), not a boolean",
        ),
        (
            f("decimal(5, 2)", "template = \"{seq}\""),
            "d.toml:5: field `x`: `template` does not generate decimal values",
        ),
        (
            f(
                "decimal(5, 2)",
                "normal = { mean = 0, std = 1, min = 2000, max = 3000 }",
            ),
            "d.toml:5: field `x`: normal's min and max leave no value in the decimal's range (at most 99999 units of 10^-2)",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(error(&text), want, "{text}");
    }
}

#[test]
fn decimals_past_38_digits_are_decimal256_in_exact_units() {
    let s = spec(
        "[[fields]]\nname = \"big\"\ntype = \"decimal(50, 5)\"\nuniform = { min = \"-92233720368547.75807\", max = \"92233720368547.75807\" }\n[[fields]]\nname = \"one\"\ntype = \"decimal(76, 0)\"\nconstant = -7",
    );
    assert_eq!(
        spec_types(&s),
        [DataType::Decimal256(50, 5), DataType::Decimal256(76, 0)]
    );
    let b = batch(&s, 3, 0, 2000);
    for c in b.columns() {
        c.to_data().validate_full().unwrap();
    }
    let big = b
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::Decimal256Array>()
        .unwrap();
    let lo = arrow_buffer::i256::from_i128(-i128::from(i64::MAX));
    let hi = arrow_buffer::i256::from_i128(i128::from(i64::MAX));
    assert!(big.values().iter().all(|v| *v >= lo && *v <= hi));
    assert!(big.values().iter().any(|v| *v < arrow_buffer::i256::ZERO));
    let one = b
        .column(1)
        .as_any()
        .downcast_ref::<arrow_array::Decimal256Array>()
        .unwrap();
    assert!(
        one.values()
            .iter()
            .all(|v| *v == arrow_buffer::i256::from_i128(-7))
    );
}
