//! Iceberg format version 2: a new table's metadata over data files
//! already written, and its commit as a path table.
//!
//! [`create`] writes, under `LOCATION/metadata/`, one manifest of every
//! data file (its partition values, record count, size, column sizes,
//! value and null counts, bounds and split offsets), the manifest list of
//! the one snapshot, and `v1.metadata.json`, claimed only if absent; then
//! `version-hint.text`, as Hadoop tables write it.

mod avro;
pub mod schema;
pub mod values;

use std::{
    collections::BTreeMap,
    hash::{BuildHasher, Hasher},
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use arrow_schema::DataType;
use serde_json::json;
use strata_layout::PartitionField;
use strata_store::output::{PendingFile, write_atomically};

pub use schema::{FIELD_ID_KEY, Primitive, TableSchema};

use crate::{Error, stats::FileFacts};
use avro::{Entry, ManifestFile, SpecField};
use values::{PartValue, bound_bytes, partition_value};

/// A sort key of the table's sort order.
#[derive(Debug, Clone)]
pub struct SortField {
    /// The column, nested fields by their dotted path.
    pub column: String,
    /// Descending.
    pub descending: bool,
    /// Nulls first.
    pub nulls_first: bool,
}

/// A new table: its schema, layout, properties and data files.
pub struct NewTable<'a> {
    /// The table's directory (absolute, local).
    pub location: &'a Path,
    /// Its schema (the one the data files were written with).
    pub schema: &'a TableSchema,
    /// The Arrow schema the partition sources are columns of.
    pub arrow: &'a arrow_schema::Schema,
    /// Partition fields, outermost first.
    pub partition: &'a [PartitionField],
    /// The sort order.
    pub sort: &'a [SortField],
    /// Table properties.
    pub properties: BTreeMap<String, String>,
    /// The data files: each one's path relative to `location` and its
    /// facts.
    pub files: &'a [(String, FileFacts)],
}

/// What [`create`] committed.
#[derive(Debug, Clone)]
pub struct Committed {
    /// The metadata file of the new version.
    pub metadata: PathBuf,
    /// The snapshot's id.
    pub snapshot_id: i64,
    /// Rows in the snapshot.
    pub rows: u64,
}

/// Random 64-bit values (a process-random hasher's output).
fn random_u64(salt: u64) -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(salt);
    if let Ok(t) = SystemTime::now().duration_since(UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// A random (version 4) UUID.
fn uuid() -> String {
    let (a, b) = (random_u64(1), random_u64(2));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The text of a path in metadata (absolute, `/` separated).
fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Whether `location` already holds a table (of this format or Delta's).
///
/// # Errors
/// [`Error::BadTable`] naming what is there.
pub fn check_new(location: &Path) -> Result<(), Error> {
    if location.join("_delta_log").exists() {
        return Err(Error::BadTable {
            path: location.to_path_buf(),
            reason: "holds a Delta table (_delta_log/), not an Iceberg table".into(),
        });
    }
    if location.join("metadata").join("version-hint.text").exists()
        || location.join("metadata").join("v1.metadata.json").exists()
    {
        return Err(Error::BadTable {
            path: location.to_path_buf(),
            reason: "is already an Iceberg table; appending to one is not supported yet \
                     (choose another output directory or remove it)"
                .into(),
        });
    }
    Ok(())
}

/// Takes back a version [`create`] committed that a catalog then refused:
/// its metadata file and version hint are removed (the data files and
/// manifests stay, unreferenced).
pub fn withdraw(c: &Committed) {
    if let Some(dir) = c.metadata.parent() {
        let _ = std::fs::remove_file(dir.join("version-hint.text"));
    }
    let _ = std::fs::remove_file(&c.metadata);
}

/// Writes the metadata of a new table over its data files and commits it
/// as version 1 of a path table.
///
/// # Errors
/// [`Error::BadTable`] when `location` already holds a table;
/// [`Error::Conflict`] when another writer created version 1 first;
/// [`Error::Unsupported`] for a partition or sort column the schema
/// lacks; IO and Avro errors.
pub fn create(t: &NewTable<'_>) -> Result<Committed, Error> {
    check_new(t.location)?;
    let metadata_dir = t.location.join("metadata");
    std::fs::create_dir_all(&metadata_dir)
        .map_err(|e| Error::io("create the metadata directory", &metadata_dir, e))?;
    let table_uuid = uuid();
    let snapshot_id = i64::try_from(random_u64(3) >> 1).unwrap_or(1).max(1);
    let sequence_number = 1i64;
    let now = now_ms();

    // The partition spec.
    let mut spec = Vec::with_capacity(t.partition.len());
    let mut spec_json = Vec::with_capacity(t.partition.len());
    for (i, f) in t.partition.iter().enumerate() {
        let source_id = t.schema.id_of(&f.source).ok_or_else(|| {
            Error::Unsupported(format!(
                "partition field `{}`: no column `{}`",
                f.text, f.source
            ))
        })?;
        let source = *t.schema.primitives.get(&source_id).ok_or_else(|| {
            Error::Unsupported(format!(
                "partition field `{}`: `{}` is not a primitive column",
                f.text, f.source
            ))
        })?;
        let field_id = 1000 + i as i32;
        spec_json.push(json!({
            "name": f.name,
            "transform": f.transform.iceberg_name(),
            "source-id": source_id,
            "field-id": field_id,
        }));
        spec.push((
            SpecField {
                name: f.name.clone(),
                field_id,
                transform: f.transform,
                source,
            },
            source_id,
            t.arrow
                .field_with_name(&f.source)
                .map(|a| a.data_type().clone())
                .unwrap_or(DataType::Null),
        ));
    }
    // The sort order (id 1; 0 is unsorted).
    let mut sort_json = Vec::with_capacity(t.sort.len());
    for k in t.sort {
        let source_id = t.schema.id_of(&k.column).ok_or_else(|| {
            Error::Unsupported(format!("sort key `{}`: no such column", k.column))
        })?;
        sort_json.push(json!({
            "transform": "identity",
            "source-id": source_id,
            "direction": if k.descending { "desc" } else { "asc" },
            "null-order": if k.nulls_first { "nulls-first" } else { "nulls-last" },
        }));
    }
    let sort_order_id = if t.sort.is_empty() { 0 } else { 1 };

    // One manifest entry per file.
    let mut entries = Vec::with_capacity(t.files.len());
    let mut summaries: Vec<(bool, Option<PartValue>, Option<PartValue>)> =
        vec![(false, None, None); spec.len()];
    let mut rows = 0u64;
    let mut bytes = 0u64;
    let mut partitions_seen = std::collections::BTreeSet::new();
    for (rel, facts) in t.files {
        let mut partition = Vec::with_capacity(spec.len());
        for (k, (_, source_id, arrow_type)) in spec.iter().enumerate() {
            let leaf = facts
                .leaves
                .iter()
                .find(|l| l.field_id.or_else(|| t.schema.leaf_id(&l.path)) == Some(*source_id));
            let min = leaf.and_then(|l| l.min.as_ref());
            let all_null = leaf.is_some_and(|l| l.nulls == Some(facts.rows));
            let value = if all_null || facts.rows == 0 {
                PartValue::Null
            } else {
                let min = min.ok_or_else(|| {
                    Error::Unsupported(format!(
                        "data file {rel}: no statistics of partition source column {}",
                        t.partition[k].source
                    ))
                })?;
                partition_value(&t.partition[k], arrow_type, Some(min))?
            };
            let s = &mut summaries[k];
            if value == PartValue::Null {
                s.0 = true;
            } else {
                if s.1
                    .as_ref()
                    .is_none_or(|lo| value.order(lo) == Some(std::cmp::Ordering::Less))
                {
                    s.1 = Some(value.clone());
                }
                if s.2
                    .as_ref()
                    .is_none_or(|hi| value.order(hi) == Some(std::cmp::Ordering::Greater))
                {
                    s.2 = Some(value.clone());
                }
            }
            partition.push(value);
        }
        partitions_seen.insert(format!("{partition:?}"));
        let mut e = Entry {
            path: text(&t.location.join(rel)),
            partition,
            rows: facts.rows,
            bytes: facts.bytes,
            column_sizes: Vec::new(),
            value_counts: Vec::new(),
            null_counts: Vec::new(),
            lower: Vec::new(),
            upper: Vec::new(),
            split_offsets: facts.split_offsets.clone(),
            sort_order_id: (sort_order_id != 0).then_some(sort_order_id),
        };
        for l in &facts.leaves {
            let Some(id) = l.field_id.or_else(|| t.schema.leaf_id(&l.path)) else {
                continue;
            };
            e.column_sizes.push((id, l.compressed_bytes));
            e.value_counts.push((id, l.values));
            if let Some(n) = l.nulls {
                e.null_counts.push((id, n));
            }
            // Bounds of fields inside lists and maps would bound no row.
            if l.repeated {
                continue;
            }
            if let Some(p) = t.schema.primitives.get(&id) {
                if let Some(b) = l.min.as_ref().and_then(|b| bound_bytes(*p, b)) {
                    e.lower.push((id, b));
                }
                if let Some(b) = l.max.as_ref().and_then(|b| bound_bytes(*p, b)) {
                    e.upper.push((id, b));
                }
            }
        }
        rows += facts.rows;
        bytes += facts.bytes;
        entries.push(e);
    }

    let schema_text = t.schema.json.to_string();
    let spec_text = json!(spec_json).to_string();
    let fields: Vec<SpecField> = spec.into_iter().map(|(f, _, _)| f).collect();

    // The manifest.
    let manifest_path = metadata_dir.join(format!("{table_uuid}-m0.avro"));
    let manifest = avro::manifest(
        &manifest_path,
        &fields,
        &entries,
        snapshot_id,
        &[
            ("schema", schema_text.clone()),
            ("schema-id", "0".into()),
            ("partition-spec", spec_text.clone()),
            ("partition-spec-id", "0".into()),
            ("format-version", "2".into()),
            ("content", "data".into()),
        ],
    )?;
    write_atomically(&manifest_path, &manifest, false, true)?;

    // The manifest list.
    let list_path = metadata_dir.join(format!("snap-{snapshot_id}-1-{table_uuid}.avro"));
    let list = avro::manifest_list(
        &list_path,
        &[ManifestFile {
            path: text(&manifest_path),
            length: manifest.len() as u64,
            sequence_number,
            snapshot_id,
            files: entries.len(),
            rows,
            partitions: summaries
                .iter()
                .map(|(null, lo, hi)| {
                    (
                        *null,
                        lo.as_ref().and_then(PartValue::binary),
                        hi.as_ref().and_then(PartValue::binary),
                    )
                })
                .collect(),
        }],
        &[
            ("snapshot-id", snapshot_id.to_string()),
            ("parent-snapshot-id", "null".into()),
            ("sequence-number", sequence_number.to_string()),
            ("format-version", "2".into()),
        ],
    )?;
    write_atomically(&list_path, &list, false, true)?;

    // The table metadata, version 1.
    let mut properties = t.properties.clone();
    properties
        .entry("write.format.default".into())
        .or_insert_with(|| "parquet".into());
    // Bounds are whole values, not truncated.
    properties
        .entry("write.metadata.metrics.default".into())
        .or_insert_with(|| "full".into());
    let last_partition_id = 999 + fields.len() as i32;
    let files = entries.len();
    let metadata = json!({
        "format-version": 2,
        "table-uuid": table_uuid,
        "location": text(t.location),
        "last-sequence-number": sequence_number,
        "last-updated-ms": now,
        "last-column-id": t.schema.last_column_id,
        "current-schema-id": 0,
        "schemas": [t.schema.json],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": spec_json}],
        "last-partition-id": last_partition_id,
        "default-sort-order-id": sort_order_id,
        "sort-orders": if sort_json.is_empty() {
            json!([{"order-id": 0, "fields": []}])
        } else {
            json!([{"order-id": 0, "fields": []}, {"order-id": 1, "fields": sort_json}])
        },
        "properties": properties,
        "current-snapshot-id": snapshot_id,
        "refs": {"main": {"snapshot-id": snapshot_id, "type": "branch"}},
        "snapshots": [{
            "snapshot-id": snapshot_id,
            "sequence-number": sequence_number,
            "timestamp-ms": now,
            "manifest-list": text(&list_path),
            "summary": {
                "operation": "append",
                "added-data-files": files.to_string(),
                "added-records": rows.to_string(),
                "added-files-size": bytes.to_string(),
                "changed-partition-count": partitions_seen.len().to_string(),
                "total-records": rows.to_string(),
                "total-files-size": bytes.to_string(),
                "total-data-files": files.to_string(),
                "total-delete-files": "0",
                "total-position-deletes": "0",
                "total-equality-deletes": "0",
            },
            "schema-id": 0,
        }],
        "snapshot-log": [{"snapshot-id": snapshot_id, "timestamp-ms": now}],
        "metadata-log": [],
    });
    let target = metadata_dir.join("v1.metadata.json");
    let body = serde_json::to_vec_pretty(&metadata).map_err(|e| Error::BadTable {
        path: target.clone(),
        reason: e.to_string(),
    })?;
    let (pending, mut file) = PendingFile::start(&target, false).map_err(Error::Store)?;
    std::io::Write::write_all(&mut file, &body).map_err(|e| Error::io("write", &target, e))?;
    drop(file);
    match pending.durable(true).commit_new() {
        Ok(_) => {}
        Err(strata_store::Error::OutputExists { .. }) => {
            return Err(Error::Conflict {
                path: t.location.to_path_buf(),
                version: 1,
            });
        }
        Err(e) => return Err(e.into()),
    }
    write_atomically(&metadata_dir.join("version-hint.text"), b"1", true, true)?;
    Ok(Committed {
        metadata: target,
        snapshot_id,
        rows,
    })
}
