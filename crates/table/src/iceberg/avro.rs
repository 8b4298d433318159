//! Manifests and manifest lists in Avro, with the schemas and field ids
//! Iceberg's spec gives them (format version 2): the entries of data and
//! delete files (added, existing or deleted) and the manifests' lines.

use std::path::Path;

use apache_avro::{Codec, Schema, Writer, types::Value};
use serde_json::{Value as Json, json};
use strata_layout::Transform;

use super::{model::Content, schema::Primitive, values::PartValue};
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
    pub(crate) fn result(&self) -> Primitive {
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

/// A manifest entry's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Live, added by an earlier snapshot.
    Existing,
    /// Live, added by the manifest's snapshot.
    Added,
    /// Removed by the manifest's snapshot.
    Deleted,
}

impl Status {
    pub(crate) fn code(self) -> i32 {
        match self {
            Status::Existing => 0,
            Status::Added => 1,
            Status::Deleted => 2,
        }
    }

    pub(crate) fn of_code(code: i32) -> Option<Status> {
        match code {
            0 => Some(Status::Existing),
            1 => Some(Status::Added),
            2 => Some(Status::Deleted),
            _ => None,
        }
    }
}

/// One file's `data_file` record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DataFile {
    pub(crate) content: Content,
    pub(crate) path: String,
    /// In the spec's field order.
    pub(crate) partition: Vec<PartValue>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
    pub(crate) column_sizes: Vec<(i32, u64)>,
    pub(crate) value_counts: Vec<(i32, u64)>,
    pub(crate) null_counts: Vec<(i32, u64)>,
    pub(crate) nan_counts: Vec<(i32, u64)>,
    pub(crate) lower: Vec<(i32, Vec<u8>)>,
    pub(crate) upper: Vec<(i32, Vec<u8>)>,
    pub(crate) split_offsets: Vec<i64>,
    pub(crate) equality_ids: Vec<i32>,
    pub(crate) sort_order_id: Option<i32>,
    pub(crate) key_metadata: Option<Vec<u8>>,
}

/// One manifest entry: a file and its status in the manifest's snapshot.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) status: Status,
    /// The snapshot that added (or, for a deleted entry, removed) the
    /// file; `None` inherits the manifest's.
    pub(crate) snapshot_id: Option<i64>,
    /// The data sequence number; `None` inherits the manifest's (added
    /// entries only).
    pub(crate) sequence_number: Option<i64>,
    /// The file sequence number; `None` as `sequence_number`.
    pub(crate) file_sequence_number: Option<i64>,
    pub(crate) file: DataFile,
}

impl Entry {
    /// An entry of `file` added by the manifest's snapshot.
    pub(crate) fn added(file: DataFile) -> Entry {
        Entry {
            status: Status::Added,
            snapshot_id: None,
            sequence_number: None,
            file_sequence_number: None,
            file,
        }
    }
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

fn null() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

fn some(v: Value) -> Value {
    Value::Union(1, Box::new(v))
}

fn opt_long(v: Option<i64>) -> Value {
    v.map_or_else(null, |v| some(Value::Long(v)))
}

fn parse(schema: &Json, path: &Path) -> Result<Schema, Error> {
    Schema::parse(schema).map_err(|e| avro_error(path, e))
}

pub(crate) fn avro_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Avro {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// A `data_file` record of the spec with `fields`.
fn data_file(fields: &[SpecField], f: &DataFile) -> Value {
    let partition = Value::Record(
        fields
            .iter()
            .zip(&f.partition)
            .map(|(field, v)| (field.name.clone(), part_value(v, field.result())))
            .collect(),
    );
    let counts = |c: &[(i32, u64)]| map_value(c, |v| long(*v));
    let bounds = |b: &[(i32, Vec<u8>)]| map_value(b, |v| Value::Bytes(v.clone()));
    Value::Record(vec![
        ("content".into(), Value::Int(f.content.code())),
        ("file_path".into(), Value::String(f.path.clone())),
        ("file_format".into(), Value::String("PARQUET".into())),
        ("partition".into(), partition),
        ("record_count".into(), long(f.rows)),
        ("file_size_in_bytes".into(), long(f.bytes)),
        ("column_sizes".into(), counts(&f.column_sizes)),
        ("value_counts".into(), counts(&f.value_counts)),
        ("null_value_counts".into(), counts(&f.null_counts)),
        (
            "nan_value_counts".into(),
            if f.nan_counts.is_empty() {
                null()
            } else {
                counts(&f.nan_counts)
            },
        ),
        ("lower_bounds".into(), bounds(&f.lower)),
        ("upper_bounds".into(), bounds(&f.upper)),
        (
            "key_metadata".into(),
            f.key_metadata
                .as_ref()
                .map_or_else(null, |k| some(Value::Bytes(k.clone()))),
        ),
        (
            "split_offsets".into(),
            some(Value::Array(
                f.split_offsets.iter().map(|o| Value::Long(*o)).collect(),
            )),
        ),
        (
            "equality_ids".into(),
            if f.content == Content::EqualityDeletes {
                some(Value::Array(
                    f.equality_ids.iter().map(|i| Value::Int(*i)).collect(),
                ))
            } else {
                null()
            },
        ),
        (
            "sort_order_id".into(),
            f.sort_order_id.map_or_else(null, |id| some(Value::Int(id))),
        ),
    ])
}

/// The bytes of a manifest of `entries`, written by snapshot
/// `snapshot_id` (entries without a snapshot id of their own inherit it
/// when read). Added entries leave their sequence numbers to the
/// manifest list; existing and deleted ones carry them.
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
        let entry = Value::Record(vec![
            ("status".into(), Value::Int(e.status.code())),
            (
                "snapshot_id".into(),
                some(Value::Long(e.snapshot_id.unwrap_or(snapshot_id))),
            ),
            ("sequence_number".into(), opt_long(e.sequence_number)),
            (
                "file_sequence_number".into(),
                opt_long(e.file_sequence_number),
            ),
            ("data_file".into(), data_file(fields, &e.file)),
        ]);
        w.append(entry).map_err(|e| avro_error(path, e))?;
    }
    w.into_inner().map_err(|e| avro_error(path, e))
}

/// A partition field's summary over a manifest's files: whether any
/// value is null, and the lowest and highest values (binary form).
pub(crate) type FieldSummary = (bool, Option<Vec<u8>>, Option<Vec<u8>>);

/// One manifest's line in a manifest list.
#[derive(Debug, Clone)]
pub(crate) struct ManifestFile {
    pub(crate) path: String,
    pub(crate) length: u64,
    pub(crate) content: ManifestContent,
    /// The sequence number of the snapshot that wrote the manifest.
    pub(crate) sequence_number: i64,
    /// The lowest data sequence number of its live entries.
    pub(crate) min_sequence_number: i64,
    pub(crate) snapshot_id: i64,
    pub(crate) added_files: usize,
    pub(crate) existing_files: usize,
    pub(crate) deleted_files: usize,
    pub(crate) added_rows: u64,
    pub(crate) existing_rows: u64,
    pub(crate) deleted_rows: u64,
    /// Per partition field: contains null, lower and upper bound.
    pub(crate) partitions: Vec<FieldSummary>,
}

/// What a manifest's entries are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ManifestContent {
    Data,
    Deletes,
}

impl ManifestContent {
    pub(crate) fn code(self) -> i32 {
        match self {
            ManifestContent::Data => 0,
            ManifestContent::Deletes => 1,
        }
    }

    /// The manifest's `content` key-value metadata.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ManifestContent::Data => "data",
            ManifestContent::Deletes => "deletes",
        }
    }
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
    ours: &[ManifestFile],
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
        Some(b) => some(Value::Bytes(b.clone())),
        None => null(),
    };
    let int = |n: usize| Value::Int(i32::try_from(n).unwrap_or(i32::MAX));
    for m in ours {
        let partitions = m
            .partitions
            .iter()
            .map(|(null_seen, lo, hi)| {
                Value::Record(vec![
                    ("contains_null".into(), Value::Boolean(*null_seen)),
                    ("contains_nan".into(), null()),
                    ("lower_bound".into(), bytes_opt(lo)),
                    ("upper_bound".into(), bytes_opt(hi)),
                ])
            })
            .collect();
        w.append(Value::Record(vec![
            ("manifest_path".into(), Value::String(m.path.clone())),
            ("manifest_length".into(), long(m.length)),
            ("partition_spec_id".into(), Value::Int(0)),
            ("content".into(), Value::Int(m.content.code())),
            ("sequence_number".into(), Value::Long(m.sequence_number)),
            (
                "min_sequence_number".into(),
                Value::Long(m.min_sequence_number),
            ),
            ("added_snapshot_id".into(), Value::Long(m.snapshot_id)),
            ("added_files_count".into(), int(m.added_files)),
            ("existing_files_count".into(), int(m.existing_files)),
            ("deleted_files_count".into(), int(m.deleted_files)),
            ("added_rows_count".into(), long(m.added_rows)),
            ("existing_rows_count".into(), long(m.existing_rows)),
            ("deleted_rows_count".into(), long(m.deleted_rows)),
            ("partitions".into(), some(Value::Array(partitions))),
            ("key_metadata".into(), null()),
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
