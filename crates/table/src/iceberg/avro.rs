//! Manifests and manifest lists in Avro, with the schemas and field ids
//! Iceberg's spec gives them (format version 2).

use std::path::Path;

use apache_avro::{Codec, Schema, Writer, types::Value};
use serde_json::{Value as Json, json};
use strata_layout::Transform;

use super::{schema::Primitive, values::PartValue};
use crate::Error;

/// A partition field of the spec, as the manifests need it.
pub(crate) struct SpecField {
    pub(crate) name: String,
    pub(crate) field_id: i32,
    pub(crate) transform: Transform,
    /// The source column's type.
    pub(crate) source: Primitive,
}

impl SpecField {
    /// The partition value's Iceberg type.
    fn result(&self) -> Primitive {
        match self.transform {
            Transform::Year | Transform::Month | Transform::Hour | Transform::Bucket(_) => {
                Primitive::Int
            }
            Transform::Day => Primitive::Date,
            Transform::Identity | Transform::Truncate(_) => self.source,
        }
    }
}

/// The Avro schema of an Iceberg primitive.
fn avro_type(p: Primitive) -> Json {
    match p {
        Primitive::Boolean => json!("boolean"),
        Primitive::Int => json!("int"),
        Primitive::Long => json!("long"),
        Primitive::Float => json!("float"),
        Primitive::Double => json!("double"),
        Primitive::Date => json!({"type": "int", "logicalType": "date"}),
        Primitive::Time => json!({"type": "long", "logicalType": "time-micros"}),
        Primitive::Timestamp => {
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false})
        }
        Primitive::Timestamptz => {
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true})
        }
        Primitive::String => json!("string"),
        Primitive::Binary => json!("bytes"),
        Primitive::Fixed(n) => json!({"type": "fixed", "name": format!("fixed_{n}"), "size": n}),
        Primitive::Decimal(p, s) => json!({
            "type": "fixed",
            "name": format!("decimal_{p}_{s}"),
            "size": decimal_size(p),
            "logicalType": "decimal",
            "precision": p,
            "scale": s,
        }),
    }
}

/// Bytes of the smallest fixed that holds a decimal of precision `p`.
fn decimal_size(p: u8) -> usize {
    (1..=16)
        .find(|&n: &usize| {
            let bits = 8 * n as u32 - 1;
            // 10^p - 1 fits in `bits` bits.
            f64::from(p) <= f64::from(bits) * std::f64::consts::LOG10_2
        })
        .unwrap_or(16)
}

/// A partition value as Avro (a union with null).
fn part_value(v: &PartValue, p: Primitive) -> Value {
    let inner = match (v, p) {
        (PartValue::Null, _) => return Value::Union(0, Box::new(Value::Null)),
        (PartValue::Bool(b), _) => Value::Boolean(*b),
        (PartValue::Int(i), Primitive::Date) => Value::Date(*i),
        (PartValue::Int(i), _) => Value::Int(*i),
        (PartValue::Long(l), Primitive::Time) => Value::TimeMicros(*l),
        (PartValue::Long(l), Primitive::Timestamp | Primitive::Timestamptz) => {
            Value::TimestampMicros(*l)
        }
        (PartValue::Long(l), _) => Value::Long(*l),
        (PartValue::Decimal(d), Primitive::Decimal(prec, _)) => {
            let size = decimal_size(prec);
            let full = d.to_be_bytes();
            Value::Decimal(apache_avro::Decimal::from(full[16 - size..].to_vec()))
        }
        (PartValue::Decimal(d), _) => Value::Bytes(d.to_be_bytes().to_vec()),
        (PartValue::String(s), _) => Value::String(s.clone()),
        (PartValue::Bytes(b), Primitive::Fixed(n)) => Value::Fixed(n.max(0) as usize, b.clone()),
        (PartValue::Bytes(b), _) => Value::Bytes(b.clone()),
    };
    Value::Union(1, Box::new(inner))
}

fn opt(t: Json) -> Json {
    json!(["null", t])
}

/// An Avro map of int keys to `value` (Iceberg writes these as arrays of
/// key-value records).
fn int_map(key_id: i32, value_id: i32, value: &str) -> Json {
    json!({
        "type": "array",
        "logicalType": "map",
        "items": {
            "type": "record",
            "name": format!("k{key_id}_v{value_id}"),
            "fields": [
                {"name": "key", "type": "int", "field-id": key_id},
                {"name": "value", "type": value, "field-id": value_id},
            ],
        },
    })
}

/// The manifest entry schema of a spec with `fields`.
fn manifest_schema(fields: &[SpecField]) -> Json {
    let partition: Vec<Json> = fields
        .iter()
        .map(|f| json!({"name": f.name, "type": opt(avro_type(f.result())), "field-id": f.field_id, "default": null}))
        .collect();
    json!({
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": "int", "field-id": 0},
            {"name": "snapshot_id", "type": opt(json!("long")), "default": null, "field-id": 1},
            {"name": "sequence_number", "type": opt(json!("long")), "default": null, "field-id": 3},
            {"name": "file_sequence_number", "type": opt(json!("long")), "default": null, "field-id": 4},
            {"name": "data_file", "field-id": 2, "type": {
                "type": "record",
                "name": "r2",
                "fields": [
                    {"name": "content", "type": "int", "field-id": 134},
                    {"name": "file_path", "type": "string", "field-id": 100},
                    {"name": "file_format", "type": "string", "field-id": 101},
                    {"name": "partition", "field-id": 102, "type": {"type": "record", "name": "r102", "fields": partition}},
                    {"name": "record_count", "type": "long", "field-id": 103},
                    {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
                    {"name": "column_sizes", "type": opt(int_map(117, 118, "long")), "default": null, "field-id": 108},
                    {"name": "value_counts", "type": opt(int_map(119, 120, "long")), "default": null, "field-id": 109},
                    {"name": "null_value_counts", "type": opt(int_map(121, 122, "long")), "default": null, "field-id": 110},
                    {"name": "nan_value_counts", "type": opt(int_map(138, 139, "long")), "default": null, "field-id": 137},
                    {"name": "lower_bounds", "type": opt(int_map(126, 127, "bytes")), "default": null, "field-id": 125},
                    {"name": "upper_bounds", "type": opt(int_map(129, 130, "bytes")), "default": null, "field-id": 128},
                    {"name": "key_metadata", "type": opt(json!("bytes")), "default": null, "field-id": 131},
                    {"name": "split_offsets", "type": opt(json!({"type": "array", "items": "long", "element-id": 133})), "default": null, "field-id": 132},
                    {"name": "equality_ids", "type": opt(json!({"type": "array", "items": "int", "element-id": 136})), "default": null, "field-id": 135},
                    {"name": "sort_order_id", "type": opt(json!("int")), "default": null, "field-id": 140},
                ],
            }},
        ],
    })
}

/// The manifest list's schema.
fn manifest_list_schema() -> Json {
    json!({
        "type": "record",
        "name": "manifest_file",
        "fields": [
            {"name": "manifest_path", "type": "string", "field-id": 500},
            {"name": "manifest_length", "type": "long", "field-id": 501},
            {"name": "partition_spec_id", "type": "int", "field-id": 502},
            {"name": "content", "type": "int", "field-id": 517},
            {"name": "sequence_number", "type": "long", "field-id": 515},
            {"name": "min_sequence_number", "type": "long", "field-id": 516},
            {"name": "added_snapshot_id", "type": "long", "field-id": 503},
            {"name": "added_files_count", "type": "int", "field-id": 504},
            {"name": "existing_files_count", "type": "int", "field-id": 505},
            {"name": "deleted_files_count", "type": "int", "field-id": 506},
            {"name": "added_rows_count", "type": "long", "field-id": 512},
            {"name": "existing_rows_count", "type": "long", "field-id": 513},
            {"name": "deleted_rows_count", "type": "long", "field-id": 514},
            {"name": "partitions", "default": null, "field-id": 507, "type": opt(json!({
                "type": "array",
                "element-id": 508,
                "items": {
                    "type": "record",
                    "name": "r508",
                    "fields": [
                        {"name": "contains_null", "type": "boolean", "field-id": 509},
                        {"name": "contains_nan", "type": opt(json!("boolean")), "default": null, "field-id": 518},
                        {"name": "lower_bound", "type": opt(json!("bytes")), "default": null, "field-id": 510},
                        {"name": "upper_bound", "type": opt(json!("bytes")), "default": null, "field-id": 511},
                    ],
                },
            }))},
            {"name": "key_metadata", "type": opt(json!("bytes")), "default": null, "field-id": 519},
        ],
    })
}

/// One data file's entry.
pub(crate) struct Entry {
    pub(crate) path: String,
    pub(crate) partition: Vec<PartValue>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
    pub(crate) column_sizes: Vec<(i32, u64)>,
    pub(crate) value_counts: Vec<(i32, u64)>,
    pub(crate) null_counts: Vec<(i32, u64)>,
    pub(crate) lower: Vec<(i32, Vec<u8>)>,
    pub(crate) upper: Vec<(i32, Vec<u8>)>,
    pub(crate) split_offsets: Vec<i64>,
    pub(crate) sort_order_id: Option<i32>,
}

fn map_value<T>(pairs: &[(i32, T)], f: impl Fn(&T) -> Value) -> Value {
    Value::Union(
        1,
        Box::new(Value::Array(
            pairs
                .iter()
                .map(|(k, v)| {
                    Value::Record(vec![("key".into(), Value::Int(*k)), ("value".into(), f(v))])
                })
                .collect(),
        )),
    )
}

fn long(v: u64) -> Value {
    Value::Long(i64::try_from(v).unwrap_or(i64::MAX))
}

fn parse(schema: &Json, path: &Path) -> Result<Schema, Error> {
    Schema::parse(schema).map_err(|e| avro_error(path, e))
}

fn avro_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Avro {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// The bytes of a manifest of `entries` (all added by `snapshot_id`).
pub(crate) fn manifest(
    path: &Path,
    fields: &[SpecField],
    entries: &[Entry],
    snapshot_id: i64,
    metadata: &[(&str, String)],
) -> Result<Vec<u8>, Error> {
    let schema = parse(&manifest_schema(fields), path)?;
    let mut w = Writer::with_codec(&schema, Vec::new(), Codec::Null);
    for (k, v) in metadata {
        w.add_user_metadata((*k).to_string(), v.as_bytes())
            .map_err(|e| avro_error(path, e))?;
    }
    for e in entries {
        let partition = Value::Record(
            fields
                .iter()
                .zip(&e.partition)
                .map(|(f, v)| (f.name.clone(), part_value(v, f.result())))
                .collect(),
        );
        let data_file = Value::Record(vec![
            ("content".into(), Value::Int(0)),
            ("file_path".into(), Value::String(e.path.clone())),
            ("file_format".into(), Value::String("PARQUET".into())),
            ("partition".into(), partition),
            ("record_count".into(), long(e.rows)),
            ("file_size_in_bytes".into(), long(e.bytes)),
            (
                "column_sizes".into(),
                map_value(&e.column_sizes, |v| long(*v)),
            ),
            (
                "value_counts".into(),
                map_value(&e.value_counts, |v| long(*v)),
            ),
            (
                "null_value_counts".into(),
                map_value(&e.null_counts, |v| long(*v)),
            ),
            (
                "nan_value_counts".into(),
                Value::Union(0, Box::new(Value::Null)),
            ),
            (
                "lower_bounds".into(),
                map_value(&e.lower, |v| Value::Bytes(v.clone())),
            ),
            (
                "upper_bounds".into(),
                map_value(&e.upper, |v| Value::Bytes(v.clone())),
            ),
            (
                "key_metadata".into(),
                Value::Union(0, Box::new(Value::Null)),
            ),
            (
                "split_offsets".into(),
                Value::Union(
                    1,
                    Box::new(Value::Array(
                        e.split_offsets.iter().map(|o| Value::Long(*o)).collect(),
                    )),
                ),
            ),
            (
                "equality_ids".into(),
                Value::Union(0, Box::new(Value::Null)),
            ),
            (
                "sort_order_id".into(),
                match e.sort_order_id {
                    Some(id) => Value::Union(1, Box::new(Value::Int(id))),
                    None => Value::Union(0, Box::new(Value::Null)),
                },
            ),
        ]);
        let entry = Value::Record(vec![
            ("status".into(), Value::Int(1)),
            (
                "snapshot_id".into(),
                Value::Union(1, Box::new(Value::Long(snapshot_id))),
            ),
            // Added entries inherit their sequence numbers from the
            // manifest list (null here).
            (
                "sequence_number".into(),
                Value::Union(0, Box::new(Value::Null)),
            ),
            (
                "file_sequence_number".into(),
                Value::Union(0, Box::new(Value::Null)),
            ),
            ("data_file".into(), data_file),
        ]);
        w.append(entry).map_err(|e| avro_error(path, e))?;
    }
    w.into_inner().map_err(|e| avro_error(path, e))
}

/// A partition field's summary over a manifest's files: whether any
/// value is null, and the lowest and highest values (binary form).
pub(crate) type FieldSummary = (bool, Option<Vec<u8>>, Option<Vec<u8>>);

/// One manifest's line in a manifest list.
pub(crate) struct ManifestFile {
    pub(crate) path: String,
    pub(crate) length: u64,
    pub(crate) sequence_number: i64,
    pub(crate) snapshot_id: i64,
    pub(crate) files: usize,
    pub(crate) rows: u64,
    /// Per partition field: contains null, lower and upper bound.
    pub(crate) partitions: Vec<FieldSummary>,
}

/// The lines of the manifest list `bytes` (read from `path`), read into this writer's
/// schema (so that they are written again as they were).
///
/// # Errors
/// [`Error::Io`] when it does not read; [`Error::Avro`] when it is not a
/// manifest list.
pub(crate) fn read_manifest_list(bytes: &[u8], path: &Path) -> Result<Vec<Value>, Error> {
    let schema = parse(&manifest_list_schema(), path)?;
    let reader =
        apache_avro::Reader::with_schema(&schema, bytes).map_err(|e| avro_error(path, e))?;
    reader.map(|v| v.map_err(|e| avro_error(path, e))).collect()
}

/// The bytes of a manifest list of the lines `kept` (read from the
/// previous list) and then `ours`.
pub(crate) fn manifest_list(
    path: &Path,
    kept: &[Value],
    ours: &ManifestFile,
    metadata: &[(&str, String)],
) -> Result<Vec<u8>, Error> {
    let schema = parse(&manifest_list_schema(), path)?;
    let mut w = Writer::with_codec(&schema, Vec::new(), Codec::Null);
    for (k, v) in metadata {
        w.add_user_metadata((*k).to_string(), v.as_bytes())
            .map_err(|e| avro_error(path, e))?;
    }
    for line in kept {
        w.append(line.clone()).map_err(|e| avro_error(path, e))?;
    }
    let bytes_opt = |b: &Option<Vec<u8>>| match b {
        Some(b) => Value::Union(1, Box::new(Value::Bytes(b.clone()))),
        None => Value::Union(0, Box::new(Value::Null)),
    };
    {
        let m = ours;
        let partitions = m
            .partitions
            .iter()
            .map(|(null, lo, hi)| {
                Value::Record(vec![
                    ("contains_null".into(), Value::Boolean(*null)),
                    (
                        "contains_nan".into(),
                        Value::Union(0, Box::new(Value::Null)),
                    ),
                    ("lower_bound".into(), bytes_opt(lo)),
                    ("upper_bound".into(), bytes_opt(hi)),
                ])
            })
            .collect();
        let files = i32::try_from(m.files).unwrap_or(i32::MAX);
        w.append(Value::Record(vec![
            ("manifest_path".into(), Value::String(m.path.clone())),
            ("manifest_length".into(), long(m.length)),
            ("partition_spec_id".into(), Value::Int(0)),
            ("content".into(), Value::Int(0)),
            ("sequence_number".into(), Value::Long(m.sequence_number)),
            ("min_sequence_number".into(), Value::Long(m.sequence_number)),
            ("added_snapshot_id".into(), Value::Long(m.snapshot_id)),
            ("added_files_count".into(), Value::Int(files)),
            ("existing_files_count".into(), Value::Int(0)),
            ("deleted_files_count".into(), Value::Int(0)),
            ("added_rows_count".into(), long(m.rows)),
            ("existing_rows_count".into(), Value::Long(0)),
            ("deleted_rows_count".into(), Value::Long(0)),
            (
                "partitions".into(),
                Value::Union(1, Box::new(Value::Array(partitions))),
            ),
            (
                "key_metadata".into(),
                Value::Union(0, Box::new(Value::Null)),
            ),
        ]))
        .map_err(|e| avro_error(path, e))?;
    }
    w.into_inner().map_err(|e| avro_error(path, e))
}

/// The string field `field` of each record of the Avro file `bytes` (read
/// from `path`), or of the record under `within` when given: a manifest
/// list's `manifest_path`s, a manifest's `data_file.file_path`s. Read with
/// the schema the file holds, whoever wrote it.
///
/// # Errors
/// [`Error::Avro`] when it does not read as Avro.
pub(crate) fn record_strings(
    bytes: &[u8],
    path: &Path,
    within: Option<&str>,
    field: &str,
) -> Result<Vec<String>, Error> {
    let reader = apache_avro::Reader::new(bytes).map_err(|e| avro_error(path, e))?;
    let get = |fields: &[(String, Value)], name: &str| -> Option<Value> {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut out = Vec::new();
    for v in reader {
        let Value::Record(fields) = v.map_err(|e| avro_error(path, e))? else {
            continue;
        };
        let fields = match within {
            Some(w) => match get(&fields, w) {
                Some(Value::Record(inner)) => inner,
                _ => continue,
            },
            None => fields,
        };
        if let Some(Value::String(s)) = get(&fields, field) {
            out.push(s);
        }
    }
    Ok(out)
}
