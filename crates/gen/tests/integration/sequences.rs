//! Sequences never wrap: a sequence that would pass its type's range (or
//! whose element index would pass 2^64) is an error naming the table,
//! field and row, refused before any row is made where the rows are known.

use arrow_array::{Array, RecordBatch, cast::AsArray};
use arrow_schema::DataType;
use strata_gen::BatchGenerator;
use strata_gen::{Dataset, Spec};

/// A one-field spec: field `x` of type `ty` with `sequence = { seq }`.
fn spec(ty: &str, seq: &str) -> Spec {
    Spec::parse(
        &format!(
            "name = \"t\"\n\n[[fields]]\nname = \"x\"\ntype = \"{ty}\"\nsequence = {{ {seq} }}\n"
        ),
        "t.toml",
    )
    .unwrap()
}

fn generate(spec: &Spec, first: u64, len: usize) -> Result<RecordBatch, String> {
    let d = Dataset {
        name: spec.name.clone(),
        description: None,
        tables: vec![strata_gen::Table {
            spec: spec.clone(),
            line: 0,
            rows: None,
            children_of: None,
            calendar: None,
            stratified: false,
        }],
        multi_table: false,
        origin: "t.toml".into(),
    };
    let g = d.generator(0, 1, 1.0).map_err(|e| e.to_string())?;
    g.generate(first, len, &mut Default::default())
        .map_err(|e| e.to_string())
}

/// Column `x` of `b` as i128 (integers, dates, timestamps, times and
/// decimal units).
fn values(b: &RecordBatch) -> Vec<i128> {
    use arrow_array::types::{Decimal128Type, Int64Type, UInt64Type};
    let a = b.column(0);
    assert_eq!(a.null_count(), 0);
    match a.data_type() {
        DataType::Decimal128(..) => a.as_primitive::<Decimal128Type>().values().to_vec(),
        DataType::UInt64 => a
            .as_primitive::<UInt64Type>()
            .values()
            .iter()
            .map(|&v| i128::from(v))
            .collect(),
        _ => arrow_cast::cast(a, &DataType::Int64)
            .unwrap()
            .as_primitive::<Int64Type>()
            .values()
            .iter()
            .map(|&v| i128::from(v))
            .collect(),
    }
}

#[test]
fn every_integer_type_stops_at_its_greatest_and_least_value() {
    // (type, start, step, greatest units, rows that fit)
    let cases: &[(&str, &str, i128, i128, u64)] = &[
        ("int8", "100", 1, 127, 28),
        ("int8", "-100", -10, -128, 3),
        ("int16", "32760", 2, 32767, 4),
        ("int32", "2147483640", 1, 2147483647, 8),
        ("int64", "9223372036854775000", 1000, 9223372036854775807, 1),
        ("int64", "-9223372036854775800", -4, -9223372036854775808, 3),
        ("uint8", "250", 1, 255, 6),
        ("uint8", "5", -1, 0, 6),
        ("uint16", "65530", 5, 65535, 2),
        ("uint32", "4294967290", 3, 4294967295, 2),
        ("uint64", "18446744073709551610", 2, 18446744073709551615, 3),
        ("date32", "2147483640", 1, 2147483647, 8),
        (
            "timestamp(s)",
            "9223372036854775800",
            1,
            9223372036854775807,
            8,
        ),
        ("time32(s)", "86390", 1, 86399, 10),
        ("decimal(4, 2)", "99.90", 0, 9999, 10),
    ];
    for &(ty, start, step, bound, fits) in cases {
        let step_text = if ty.starts_with("decimal") {
            "0.01".to_string()
        } else {
            step.to_string()
        };
        let s = spec(ty, &format!("start = {start}, step = {step_text}"));
        // Every row that fits is made, its values in order, the last one
        // the type's bound or short of it by less than a step.
        let b = generate(&s, 0, fits as usize).unwrap_or_else(|e| panic!("{ty}: {e}"));
        let v = values(&b);
        assert!(v.windows(2).all(|w| w[0] != w[1]), "{ty}: {v:?}");
        let last = *v.last().unwrap();
        let step = if ty.starts_with("decimal") { 1 } else { step };
        assert!(
            (bound - last) * step.signum() >= 0 && (bound - last).abs() < step.abs(),
            "{ty}: last {last}, bound {bound}"
        );
        // One more row is an error naming the spec, table, field and row,
        // never a wrapped value, in any batch that holds it.
        for (first, len) in [(0, fits as usize + 1), (fits, 1), (fits / 2, 1000)] {
            let e = generate(&s, first, len).unwrap_err();
            assert!(
                e.starts_with("t.toml:3: table `t`: field `x`: the sequence from ")
                    && e.contains(&format!(" at row {fits} of the ")),
                "{ty}: {e}"
            );
        }
    }
}

#[test]
fn the_message_shows_values_as_the_spec_writes_them() {
    let e = generate(&spec("int8", "start = 100"), 0, 1000).unwrap_err();
    assert_eq!(
        e,
        "t.toml:3: table `t`: field `x`: the sequence from 100 by 1 would pass 127, the greatest Int8, at row 28 of the 1000 asked for; use a wider type, or another start or step"
    );
    let e = generate(&spec("decimal(4, 2)", "start = 99.5, step = 0.25"), 0, 3).unwrap_err();
    assert!(
        e.contains("the sequence from 99.50 by 25 would pass 99.99, the greatest Decimal128(4, 2), at row 2 of the 3"),
        "{e}"
    );
    let e = generate(
        &spec("date32", "start = 2024-01-01, step = 100000000"),
        0,
        30,
    )
    .unwrap_err();
    assert!(
        e.contains(
            "the sequence from 2024-01-01 by 100000000 would pass 2147483647, the greatest Date32"
        ),
        "{e}"
    );
}

#[test]
fn check_rows_refuses_before_any_batch() {
    let s = spec("int16", "start = 0, step = 100");
    let g = s.generator(1).unwrap();
    assert!(g.check_rows(328).is_ok());
    let e = g.check_rows(329).unwrap_err().to_string();
    assert!(e.contains("at row 328 of the 329 asked for"), "{e}");
    // A step of 0 never leaves the range.
    let g = spec("int8", "start = 127, step = 0").generator(1).unwrap();
    assert!(g.check_rows(1 << 60).is_ok());
}

#[test]
fn sequences_in_lists_count_each_rows_most_elements() {
    // Row r's elements are r * 4 + k: ids 0..128 fit int8 from 0, rows
    // 0..32.
    let text = "name = \"t\"\n[[fields]]\nname = \"l\"\ntype = \"list\"\nlength = { uniform = { min = 0, max = 4 } }\n[fields.item]\ntype = \"int8\"\nsequence = { start = 0 }\n";
    let s = Spec::parse(text, "t.toml").unwrap();
    let g = s.generator(1).unwrap();
    assert!(g.check_rows(32).is_ok());
    let b = g.generate(0, 32, &mut Default::default()).unwrap();
    let items = b.column(0).as_list::<i32>().values().clone();
    let items = items.as_primitive::<arrow_array::types::Int8Type>();
    assert!(items.values().iter().all(|&v| v >= 0), "{items:?}");
    let e = g
        .generate(30, 3, &mut Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("field `l.item`: the sequence from 0 by 1 would pass 127, the greatest Int8, at row 32 of the 33 asked for"),
        "{e}"
    );
    // A `{seq}` template's element index would pass 2^64 past 2^64 / 2^40
    // rows (two levels of lists of up to 2^20).
    let text = "name = \"t\"\n[[fields]]\nname = \"l\"\ntype = \"list\"\nlength = { uniform = { min = 0, max = 1048576 } }\n[fields.item]\ntype = \"list\"\nlength = { uniform = { min = 0, max = 1048576 } }\n[fields.item.item]\ntype = \"utf8\"\ntemplate = \"#{seq}\"\n";
    let g = Spec::parse(text, "t.toml").unwrap().generator(1).unwrap();
    assert!(g.check_rows(1 << 24).is_ok());
    let e = g.check_rows((1 << 24) + 1).unwrap_err().to_string();
    assert!(
        e.contains("field `l.item.item`: its element index (the row times the most lengths of the lists around it) would pass 2^64 at row 16777216 of the 16777217 asked for; ask for fewer rows, or give the lists around it fewer elements"),
        "{e}"
    );
}

const DIMENSION: &str = r#"
name = "d"

[[tables]]
name = "regions"
rows = 300

[[tables.fields]]
name = "id"
type = "int8"
sequence = { start = 1 }

[[tables]]
name = "facts"
rows_per_scale = 1000

[[tables.fields]]
name = "id"
type = "int16"
sequence = { start = 1, step = 100 }
"#;

#[test]
fn tables_of_fixed_rows_are_refused_when_compiled_others_at_their_scale() {
    let d = Dataset::parse(DIMENSION, "d.toml").unwrap();
    let e = d.generator(0, 1, 1.0).unwrap_err().to_string();
    assert_eq!(
        e,
        "d.toml:8: table `regions`: field `id`: the sequence from 1 by 1 would pass 127, the greatest Int8, at row 127 of the 300 asked for; use a wider type, or another start or step"
    );
    // Rows per scale: fine where they fit, an error at the row where they
    // would not.
    let g = d.generator(1, 1, 1.0).unwrap();
    assert!(g.check_rows(328).is_ok());
    let e = g.check_rows(1000).unwrap_err().to_string();
    assert!(
        e.starts_with("d.toml:17: table `facts`: field `id`: the sequence from 1 by 100 would pass 32767, the greatest Int16, at row 328 of the 1000 asked for"),
        "{e}"
    );
}

#[test]
fn child_tables_count_their_parents_rows() {
    let text = r#"
name = "o"

[[tables]]
name = "orders"
rows_per_scale = 100

[[tables.fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[tables]]
name = "lines"
children_of = "orders"
count = { uniform = { min = 1, max = 8 } }

[[tables.fields]]
name = "n"
type = "int16"
sequence = { start = 0 }

[[tables.fields]]
name = "pos"
type = "int8"
sequence = { per_parent = true, start = 1 }
"#;
    let d = Dataset::parse(text, "o.toml").unwrap();
    // Child k of order p is row p * 8 + k: 32768 ids are 4096 orders.
    let g = d.generator(1, 1, 1.0).unwrap();
    assert!(g.check_rows(4096).is_ok());
    let e = g.check_rows(4097).unwrap_err().to_string();
    assert!(
        e.contains("table `lines`: field `n`: the sequence from 0 by 1 would pass 32767, the greatest Int16, at the children of root row 4096 of the 4097 asked for"),
        "{e}"
    );
    // A per-parent sequence reaches start + most children - 1, known
    // when the spec is parsed.
    let bad = text.replace(
        "sequence = { per_parent = true, start = 1 }",
        "sequence = { per_parent = true, start = 121 }",
    );
    let e = Dataset::parse(&bad, "o.toml").unwrap_err().to_string();
    assert_eq!(
        e,
        "o.toml:23: field `lines.pos`: the `per_parent` sequence from 121 would reach 128 for up to 8 children per `orders` row, past 127, the greatest Int8; use a wider type or a smaller start"
    );
    let ok = text.replace(
        "sequence = { per_parent = true, start = 1 }",
        "sequence = { per_parent = true, start = 120 }",
    );
    assert!(Dataset::parse(&ok, "o.toml").is_ok());
}

#[test]
fn references_do_not_read_a_wrapped_sequence_of_another_table() {
    let text = r#"
name = "r"

[[tables]]
name = "regions"
rows_per_scale = 300

[[tables.fields]]
name = "id"
type = "int8"
sequence = { start = 1 }

[[tables]]
name = "facts"
rows_per_scale = 1000

[[tables.fields]]
name = "region"
type = "int8"
ref = { table = "regions", field = "id" }
"#;
    let d = Dataset::parse(text, "r.toml").unwrap();
    // At scale 0.4 the 120 regions fit: the facts read them as they are.
    let g = d.generator(1, 1, 0.4).unwrap();
    let b = g.generate(0, 1000, &mut Default::default()).unwrap();
    assert!(values(&b).iter().all(|v| (1..=120).contains(v)));
    // At scale 1 the facts' draws reach regions past row 126: an error
    // naming the regions' field, not a wrapped key.
    let g = d.generator(1, 1, 1.0).unwrap();
    let e = g
        .generate(0, 1000, &mut Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("r.toml:8: table `regions`: field `id`: the sequence from 1 by 1 would pass 127, the greatest Int8, at row 127 of the "),
        "{e}"
    );
}
