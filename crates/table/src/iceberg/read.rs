//! Manifest lists and manifests read back into typed lines and entries,
//! whoever wrote them: a list's lines through this crate's schema (so a
//! line kept is written again as it was), a manifest's entries by field
//! name from the schema the file holds. An added entry's snapshot id and
//! sequence numbers left null are inherited from its manifest's line, as
//! the spec says.

use std::path::Path;

use apache_avro::types::Value;

use super::{
    avro::{DataFile, Entry, ManifestContent, Status, avro_error, read_manifest_list},
    model::Content,
    values::PartValue,
};
use crate::{Error, stats::signed_be};

/// One line of a manifest list.
#[derive(Debug, Clone)]
pub(crate) struct ListLine {
    /// The manifest's location, as recorded.
    pub(crate) path: String,
    pub(crate) spec_id: i32,
    pub(crate) content: ManifestContent,
    /// The sequence number of the snapshot that wrote the manifest.
    pub(crate) sequence_number: i64,
    /// The snapshot that wrote it.
    pub(crate) snapshot_id: i64,
    /// Added and existing entries (live ones), when the line counts them.
    pub(crate) live_files: Option<i64>,
    /// The line as read, to be written again unchanged.
    pub(crate) raw: Value,
}

/// A manifest's entries and the names of its partition fields.
#[derive(Debug, Clone)]
pub(crate) struct Manifest {
    /// Partition field names, in the manifest's order.
    pub(crate) names: Vec<String>,
    pub(crate) entries: Vec<Entry>,
}

/// The lines of the manifest list `bytes`, read from `path`.
///
/// # Errors
/// [`Error::Avro`] when it is not a manifest list of format version 2.
pub(crate) fn list_lines(bytes: &[u8], path: &Path) -> Result<Vec<ListLine>, Error> {
    let bad = |why: &str| avro_error(path, format!("a manifest list line {why}"));
    read_manifest_list(bytes, path)?
        .into_iter()
        .map(|raw| {
            let Value::Record(fields) = &raw else {
                return Err(bad("is not a record"));
            };
            let long = |name: &str| get(fields, name).and_then(as_long);
            let content = match long("content") {
                Some(0) => ManifestContent::Data,
                Some(1) => ManifestContent::Deletes,
                _ => return Err(bad("has an unknown content")),
            };
            let live = long("added_files_count")
                .zip(long("existing_files_count"))
                .map(|(a, e)| a + e);
            Ok(ListLine {
                path: match get(fields, "manifest_path") {
                    Some(Value::String(s)) => s.clone(),
                    _ => return Err(bad("has no manifest_path")),
                },
                spec_id: long("partition_spec_id")
                    .and_then(|i| i32::try_from(i).ok())
                    .unwrap_or(0),
                content,
                sequence_number: long("sequence_number").unwrap_or(0),
                snapshot_id: long("added_snapshot_id").ok_or_else(|| bad("has no snapshot id"))?,
                live_files: live,
                raw: raw.clone(),
            })
        })
        .collect()
}

/// The entries of the manifest `bytes`, read from `path`, whose line in
/// the manifest list is `line`.
///
/// # Errors
/// [`Error::Avro`] when it does not read as a manifest.
pub(crate) fn manifest(bytes: &[u8], path: &Path, line: &ListLine) -> Result<Manifest, Error> {
    let reader = apache_avro::Reader::new(bytes).map_err(|e| avro_error(path, e))?;
    let mut out = Manifest {
        names: Vec::new(),
        entries: Vec::new(),
    };
    for (k, v) in reader.enumerate() {
        let bad = |why: String| avro_error(path, format!("entry {k}: {why}"));
        let Value::Record(fields) = v.map_err(|e| avro_error(path, e))? else {
            return Err(bad("not a record".into()));
        };
        let status = get(&fields, "status")
            .and_then(as_long)
            .and_then(|s| i32::try_from(s).ok())
            .and_then(Status::of_code)
            .ok_or_else(|| bad("no status of 0, 1 or 2".into()))?;
        let Some(Value::Record(file)) = get(&fields, "data_file") else {
            return Err(bad("no data_file".into()));
        };
        let (names, file) = data_file(file).map_err(bad)?;
        if out.entries.is_empty() {
            out.names = names;
        }
        // Null numbers are inherited from the manifest; only added
        // entries may leave them so (a format version 1 manifest's files
        // read as sequence number 0).
        let inherited = |n: Option<i64>| match (n, status) {
            (Some(n), _) => n,
            (None, Status::Added) => line.sequence_number,
            (None, _) => 0,
        };
        let sequence_number = get(&fields, "sequence_number").and_then(as_long);
        let file_sequence_number = get(&fields, "file_sequence_number").and_then(as_long);
        out.entries.push(Entry {
            status,
            snapshot_id: Some(
                get(&fields, "snapshot_id")
                    .and_then(as_long)
                    .unwrap_or(line.snapshot_id),
            ),
            sequence_number: Some(inherited(sequence_number)),
            file_sequence_number: Some(inherited(file_sequence_number)),
            file,
        });
    }
    Ok(out)
}

/// A `data_file` record: its partition field names and the file.
fn data_file(fields: &[(String, Value)]) -> Result<(Vec<String>, DataFile), String> {
    let content = match get(fields, "content").and_then(as_long) {
        None => Content::Data,
        Some(c) => i32::try_from(c)
            .ok()
            .and_then(Content::of_code)
            .ok_or_else(|| format!("unknown content {c}"))?,
    };
    let path = match get(fields, "file_path") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err("no file_path".into()),
    };
    let count = |name: &str| {
        get(fields, name)
            .and_then(as_long)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| format!("{path}: no {name}"))
    };
    let (mut names, mut partition) = (Vec::new(), Vec::new());
    match get(fields, "partition") {
        Some(Value::Record(p)) => {
            for (name, v) in p {
                names.push(name.clone());
                partition.push(
                    part_value(v).ok_or_else(|| {
                        format!("{path}: partition value {name} of no known type")
                    })?,
                );
            }
        }
        Some(Value::Null) | None => {}
        Some(_) => return Err(format!("{path}: a partition that is not a record")),
    }
    let file = DataFile {
        content,
        partition,
        rows: count("record_count")?,
        bytes: count("file_size_in_bytes")?,
        column_sizes: int_map(get(fields, "column_sizes"), as_count),
        value_counts: int_map(get(fields, "value_counts"), as_count),
        null_counts: int_map(get(fields, "null_value_counts"), as_count),
        nan_counts: int_map(get(fields, "nan_value_counts"), as_count),
        lower: int_map(get(fields, "lower_bounds"), as_bytes),
        upper: int_map(get(fields, "upper_bounds"), as_bytes),
        split_offsets: match get(fields, "split_offsets") {
            Some(Value::Array(a)) => a.iter().filter_map(as_long).collect(),
            _ => Vec::new(),
        },
        equality_ids: match get(fields, "equality_ids") {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| as_long(v).and_then(|i| i32::try_from(i).ok()))
                .collect(),
            _ => Vec::new(),
        },
        sort_order_id: get(fields, "sort_order_id")
            .and_then(as_long)
            .and_then(|i| i32::try_from(i).ok()),
        key_metadata: get(fields, "key_metadata").and_then(as_bytes),
        path,
    };
    Ok((names, file))
}

/// Field `name` of a record, a union's branch unwrapped (`None` for a
/// missing field or a null).
fn get<'v>(fields: &'v [(String, Value)], name: &str) -> Option<&'v Value> {
    let mut v = &fields.iter().find(|(n, _)| n == name)?.1;
    while let Value::Union(_, inner) = v {
        v = inner;
    }
    (!matches!(v, Value::Null)).then_some(v)
}

/// An integer of any Avro integer kind.
fn as_long(v: &Value) -> Option<i64> {
    match v {
        Value::Union(_, inner) => as_long(inner),
        Value::Int(i) | Value::Date(i) | Value::TimeMillis(i) => Some(i64::from(*i)),
        Value::Long(l)
        | Value::TimeMicros(l)
        | Value::TimestampMillis(l)
        | Value::TimestampMicros(l)
        | Value::TimestampNanos(l)
        | Value::LocalTimestampMillis(l)
        | Value::LocalTimestampMicros(l)
        | Value::LocalTimestampNanos(l) => Some(*l),
        _ => None,
    }
}

fn as_count(v: &Value) -> Option<u64> {
    as_long(v).and_then(|n| u64::try_from(n).ok())
}

fn as_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Union(_, inner) => as_bytes(inner),
        Value::Bytes(b) | Value::Fixed(_, b) => Some(b.clone()),
        _ => None,
    }
}

/// An int-keyed map (Iceberg writes them as arrays of key-value records)
/// with the values `value` reads; entries that do not read are left out.
fn int_map<T>(v: Option<&Value>, value: impl Fn(&Value) -> Option<T>) -> Vec<(i32, T)> {
    let Some(Value::Array(items)) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let Value::Record(kv) = item else {
                return None;
            };
            let key = get(kv, "key")
                .and_then(as_long)
                .and_then(|k| i32::try_from(k).ok())?;
            Some((key, value(get(kv, "value")?)?))
        })
        .collect()
}

/// A partition value as Avro holds it; `None` for a type partition values
/// here do not take (floats).
fn part_value(v: &Value) -> Option<PartValue> {
    Some(match v {
        Value::Union(_, inner) => return part_value(inner),
        Value::Null => PartValue::Null,
        Value::Boolean(b) => PartValue::Bool(*b),
        Value::Int(i) | Value::Date(i) => PartValue::Int(*i),
        Value::Long(l)
        | Value::TimeMicros(l)
        | Value::TimestampMicros(l)
        | Value::LocalTimestampMicros(l) => PartValue::Long(*l),
        Value::Decimal(d) => PartValue::Decimal(signed_be(&Vec::<u8>::try_from(d).ok()?)?),
        Value::String(s) => PartValue::String(s.clone()),
        Value::Bytes(b) | Value::Fixed(_, b) => PartValue::Bytes(b.clone()),
        Value::Uuid(u) => PartValue::Bytes(u.as_bytes().to_vec()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_branches_and_nulls_read_through() {
        let fields = vec![
            ("a".to_string(), Value::Union(1, Box::new(Value::Long(7)))),
            ("b".to_string(), Value::Union(0, Box::new(Value::Null))),
        ];
        assert_eq!(get(&fields, "a").and_then(as_long), Some(7));
        assert!(get(&fields, "b").is_none());
        assert!(get(&fields, "c").is_none());
    }

    #[test]
    fn partition_values_read_from_avro_kinds() {
        assert_eq!(
            part_value(&Value::Date(17_486)),
            Some(PartValue::Int(17_486))
        );
        assert_eq!(
            part_value(&Value::Decimal(apache_avro::Decimal::from(vec![
                0xff, 0x7f
            ]))),
            Some(PartValue::Decimal(-129))
        );
        assert_eq!(
            part_value(&Value::Union(0, Box::new(Value::Null))),
            Some(PartValue::Null)
        );
        assert_eq!(part_value(&Value::Double(1.0)), None);
    }
}
