//! A data file's `stats` in its `add` action: the JSON text
//! `{"numRecords": N, "minValues": {...}, "maxValues": {...},
//! "nullCount": {...}}`, read from the file's footer ([`FileFacts`]),
//! nested structs as nested objects and values typed as Delta writes
//! them.
//!
//! Bounds are exact (the footer's exact statistics, never truncated):
//! numbers as JSON numbers (decimals with every digit of their scale),
//! booleans, strings, dates as `YYYY-MM-DD`, timestamps in ISO 8601 with
//! microseconds (`Z` for a `timestamp`). A leaf inside an array or a map
//! gets neither bounds nor a null count (its Parquet counts are of
//! elements, not of the column's values), and binary columns no bounds,
//! as Delta's writers leave them out.

use serde_json::{Number, Value};
use strata_layout::hive::decimal_text;

use super::{
    schema::{Primitive, TableSchema},
    values::{date_text, timestamp_text},
};
use crate::stats::{Bound, FileFacts};

/// One value of the statistics: JSON, a decimal's exact text, or the
/// object of a struct's fields.
#[derive(Debug, Clone, PartialEq)]
enum Stat {
    /// A number or a string.
    Json(Value),
    /// A decimal number, as written (`14.20`).
    Decimal(String),
    /// A struct's fields, in the schema's order.
    Object(Vec<(String, Stat)>),
}

/// The `stats` JSON text of a data file of table `schema` whose footer
/// gave `facts`.
pub fn file_stats(schema: &TableSchema, facts: &FileFacts) -> String {
    let mut min = Vec::new();
    let mut max = Vec::new();
    let mut nulls = Vec::new();
    for leaf in &facts.leaves {
        if leaf.repeated {
            continue;
        }
        let Some(p) = schema.leaf(&leaf.path) else {
            continue;
        };
        if let Some(n) = leaf.nulls {
            insert(&mut nulls, &leaf.path, Stat::Json(Value::from(n)));
        }
        if let Some(v) = leaf.min.as_ref().and_then(|b| bound(p, b)) {
            insert(&mut min, &leaf.path, v);
        }
        if let Some(v) = leaf.max.as_ref().and_then(|b| bound(p, b)) {
            insert(&mut max, &leaf.path, v);
        }
    }
    let mut out = format!("{{\"numRecords\":{}", facts.rows);
    for (key, object) in [("minValues", min), ("maxValues", max), ("nullCount", nulls)] {
        out.push_str(&format!(",\"{key}\":"));
        write(&mut out, &Stat::Object(object));
    }
    out.push('}');
    out
}

/// Puts `value` at `path` in `object`, making the structs' objects on
/// the way.
fn insert(object: &mut Vec<(String, Stat)>, path: &[String], value: Stat) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        object.push((first.clone(), value));
        return;
    }
    let at = match object.iter().position(|(k, _)| k == first) {
        Some(i) => i,
        None => {
            object.push((first.clone(), Stat::Object(Vec::new())));
            object.len() - 1
        }
    };
    if let Stat::Object(inner) = &mut object[at].1 {
        insert(inner, rest, value);
    }
}

/// Appends `stat` as JSON text.
fn write(out: &mut String, stat: &Stat) {
    match stat {
        Stat::Json(v) => out.push_str(&v.to_string()),
        Stat::Decimal(text) => out.push_str(text),
        Stat::Object(fields) => {
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                write(out, v);
            }
            out.push('}');
        }
    }
}

/// A column bound as Delta writes it for a column of type `p`; `None`
/// for a type whose bounds Delta leaves out (binary), a float
/// that JSON cannot hold (infinite, NaN), text that is not UTF-8, or a
/// bound of the wrong kind.
fn bound(p: Primitive, b: &Bound) -> Option<Stat> {
    Some(match (p, b) {
        (Primitive::Boolean, Bound::Bool(v)) => Stat::Json(Value::from(*v)),
        (
            Primitive::Byte | Primitive::Short | Primitive::Integer | Primitive::Long,
            Bound::Int(v),
        ) => Stat::Json(Value::from(*v)),
        (Primitive::Float, Bound::Float(v)) => {
            Stat::Json(Value::Number(Number::from_f64(f64::from(*v))?))
        }
        (Primitive::Double, Bound::Double(v)) => Stat::Json(Value::Number(Number::from_f64(*v)?)),
        (Primitive::Decimal(_, s), Bound::Int(v)) => {
            Stat::Decimal(decimal_text(i128::from(*v), i8::try_from(s).ok()?))
        }
        (Primitive::Decimal(_, s), Bound::Decimal(v)) => {
            Stat::Decimal(decimal_text(*v, i8::try_from(s).ok()?))
        }
        (Primitive::Date, Bound::Int(v)) => Stat::Json(Value::from(date_text(*v))),
        (Primitive::Timestamp, Bound::Int(v)) => Stat::Json(Value::from(timestamp_text(*v, true))),
        (Primitive::TimestampNtz, Bound::Int(v)) => {
            Stat::Json(Value::from(timestamp_text(*v, false)))
        }
        (Primitive::String, Bound::Bytes(v)) => {
            Stat::Json(Value::from(std::str::from_utf8(v).ok()?))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};

    use super::*;
    use crate::stats::LeafFacts;

    fn leaf(
        path: &[&str],
        nulls: Option<u64>,
        min: Option<Bound>,
        max: Option<Bound>,
    ) -> LeafFacts {
        LeafFacts {
            path: path.iter().map(|s| s.to_string()).collect(),
            field_id: None,
            repeated: path.contains(&"list"),
            compressed_bytes: 10,
            values: 3,
            nulls,
            min,
            max,
        }
    }

    #[test]
    fn stats_are_typed_and_nested_as_delta_writes_them() {
        let schema = TableSchema::new(&Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("qty", DataType::Int32, true),
            Field::new("price", DataType::Decimal128(15, 2), true),
            Field::new("big", DataType::Decimal128(38, 4), true),
            Field::new("day", DataType::Date32, true),
            Field::new(
                "at",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new(
                "local",
                DataType::Timestamp(TimeUnit::Microsecond, None),
                true,
            ),
            Field::new("ratio", DataType::Float32, true),
            Field::new("score", DataType::Float64, true),
            Field::new("flag", DataType::Boolean, true),
            Field::new("raw", DataType::Binary, true),
            Field::new(
                "address",
                DataType::Struct(Fields::from(vec![
                    Field::new("city", DataType::Utf8, true),
                    Field::new("zip", DataType::Int32, true),
                    Field::new(
                        "tags",
                        DataType::List(Arc::new(Field::new("element", DataType::Utf8, true))),
                        true,
                    ),
                ])),
                true,
            ),
            Field::new("note", DataType::Utf8, true),
        ]))
        .unwrap();
        let facts = FileFacts {
            rows: 3,
            bytes: 1000,
            split_offsets: vec![4],
            leaves: vec![
                leaf(&["id"], Some(0), Some(Bound::Int(1)), Some(Bound::Int(3))),
                leaf(
                    &["qty"],
                    Some(1),
                    Some(Bound::Int(-5)),
                    Some(Bound::Int(50)),
                ),
                leaf(
                    &["price"],
                    Some(0),
                    Some(Bound::Int(90_000)),
                    Some(Bound::Int(-5)),
                ),
                leaf(
                    &["big"],
                    Some(0),
                    Some(Bound::Decimal(-123_456_789_012_345_678_901_234_567_890_123)),
                    Some(Bound::Decimal(5)),
                ),
                leaf(
                    &["day"],
                    Some(0),
                    Some(Bound::Int(8035)),
                    Some(Bound::Int(10_591)),
                ),
                leaf(
                    &["at"],
                    Some(0),
                    Some(Bound::Int(1_510_871_468_000_001)),
                    Some(Bound::Int(1_510_871_468_500_000)),
                ),
                leaf(
                    &["local"],
                    Some(0),
                    Some(Bound::Int(0)),
                    Some(Bound::Int(-1)),
                ),
                leaf(
                    &["ratio"],
                    Some(0),
                    Some(Bound::Float(0.5)),
                    Some(Bound::Float(f32::INFINITY)),
                ),
                leaf(
                    &["score"],
                    Some(0),
                    Some(Bound::Double(-0.25)),
                    Some(Bound::Double(1e300)),
                ),
                leaf(
                    &["flag"],
                    Some(0),
                    Some(Bound::Bool(false)),
                    Some(Bound::Bool(true)),
                ),
                leaf(
                    &["raw"],
                    Some(2),
                    Some(Bound::Bytes(vec![0])),
                    Some(Bound::Bytes(vec![9])),
                ),
                leaf(
                    &["address", "city"],
                    Some(1),
                    Some(Bound::Bytes(b"Lyon \"2\"".to_vec())),
                    Some(Bound::Bytes(b"Z\xc3\xbcrich".to_vec())),
                ),
                leaf(
                    &["address", "zip"],
                    None,
                    Some(Bound::Int(1000)),
                    Some(Bound::Int(99_999)),
                ),
                leaf(
                    &["address", "tags", "list", "element"],
                    Some(4),
                    Some(Bound::Bytes(b"a".to_vec())),
                    Some(Bound::Bytes(b"z".to_vec())),
                ),
                leaf(&["note"], Some(3), None, None),
            ],
        };
        assert_eq!(
            file_stats(&schema, &facts),
            concat!(
                r#"{"numRecords":3,"#,
                r#""minValues":{"id":1,"qty":-5,"price":900.00,"#,
                r#""big":-12345678901234567890123456789.0123,"day":"1992-01-01","#,
                r#""at":"2017-11-16T22:31:08.000001Z","local":"1970-01-01T00:00:00.000000","#,
                r#""ratio":0.5,"score":-0.25,"flag":false,"address":{"city":"Lyon \"2\"","zip":1000}},"#,
                r#""maxValues":{"id":3,"qty":50,"price":-0.05,"big":0.0005,"day":"1998-12-31","#,
                r#""at":"2017-11-16T22:31:08.500000Z","local":"1969-12-31T23:59:59.999999","#,
                r#""score":1e+300,"flag":true,"address":{"city":"Zürich","zip":99999}},"#,
                r#""nullCount":{"id":0,"qty":1,"price":0,"big":0,"day":0,"at":0,"local":0,"#,
                r#""ratio":0,"score":0,"flag":0,"raw":2,"address":{"city":1},"note":3}}"#,
            )
        );
    }
}
