//! A commit's snapshot: its manifest entries from the data files' facts,
//! the partitions' summaries, the current snapshot's manifests it keeps,
//! and the table metadata of a new table or of an append.

use std::{collections::BTreeSet, path::Path};

use serde_json::{Value, json};

use super::{
    avro::{self, Entry, FieldSummary},
    model::{Current, NewTable, text},
    spec::TableLayout,
    values::{PartValue, bound_bytes, partition_value},
};
use crate::{Error, ids::uuid};

/// The data files a commit adds.
pub(crate) struct Added {
    pub(crate) entries: Vec<Entry>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
    /// Distinct partitions among them.
    pub(crate) partitions: usize,
    /// Per partition field: a null seen, the lowest and highest values.
    summaries: Vec<(bool, Option<PartValue>, Option<PartValue>)>,
}

impl Added {
    /// The entries of `t`'s files.
    pub(crate) fn of(t: &NewTable<'_>, layout: &TableLayout) -> Result<Added, Error> {
        let mut entries = Vec::with_capacity(t.files.len());
        let mut summaries =
            vec![(false, None::<PartValue>, None::<PartValue>); layout.fields.len()];
        let (mut rows, mut bytes) = (0u64, 0u64);
        let mut seen = BTreeSet::new();
        let id_of = |l: &crate::stats::LeafFacts| l.field_id.or_else(|| t.schema.leaf_id(&l.path));
        for (rel, facts) in t.files {
            let mut partition = Vec::with_capacity(layout.fields.len());
            for (k, (source_id, arrow_type)) in layout.sources.iter().enumerate() {
                let leaf = facts.leaves.iter().find(|l| id_of(l) == Some(*source_id));
                let all_null = leaf.is_some_and(|l| l.nulls == Some(facts.rows));
                let value = if all_null || facts.rows == 0 {
                    PartValue::Null
                } else {
                    let min = leaf.and_then(|l| l.min.as_ref()).ok_or_else(|| {
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
            seen.insert(format!("{partition:?}"));
            let mut e = Entry {
                path: t.location.uri(rel),
                partition,
                rows: facts.rows,
                bytes: facts.bytes,
                column_sizes: Vec::new(),
                value_counts: Vec::new(),
                null_counts: Vec::new(),
                lower: Vec::new(),
                upper: Vec::new(),
                split_offsets: facts.split_offsets.clone(),
                sort_order_id: None,
            };
            for l in &facts.leaves {
                let Some(id) = id_of(l) else { continue };
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
        Ok(Added {
            entries,
            rows,
            bytes,
            partitions: seen.len(),
            summaries,
        })
    }

    /// Each partition field's summary in binary form.
    pub(crate) fn partition_summaries(&self) -> Vec<FieldSummary> {
        self.summaries
            .iter()
            .map(|(null, lo, hi)| {
                (
                    *null,
                    lo.as_ref().and_then(PartValue::binary),
                    hi.as_ref().and_then(PartValue::binary),
                )
            })
            .collect()
    }

    /// Marks every entry as written in sort order `id` (none for 0).
    pub(crate) fn set_sort_order(&mut self, id: Option<i64>) {
        let id = id.filter(|&i| i != 0).and_then(|i| i32::try_from(i).ok());
        for e in &mut self.entries {
            e.sort_order_id = id;
        }
    }
}

/// The manifest list lines of the current snapshot of `metadata` (none
/// for a table without one).
pub(crate) fn current_manifests(
    location: &crate::dir::TableDir,
    metadata: &Value,
    at: &Path,
) -> Result<Vec<apache_avro::types::Value>, Error> {
    let Some(id) = metadata["current-snapshot-id"].as_i64().filter(|&i| i >= 0) else {
        return Ok(Vec::new());
    };
    let snapshot = metadata["snapshots"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["snapshot-id"].as_i64() == Some(id)))
        .ok_or_else(|| Error::BadTable {
            path: at.to_path_buf(),
            reason: format!("the current snapshot {id} is not among the snapshots"),
        })?;
    let list = snapshot["manifest-list"].as_str().ok_or_else(|| Error::BadTable {
        path: at.to_path_buf(),
        reason: format!("snapshot {id} has no manifest list (a format version 1 table's inline manifests are not read)"),
    })?;
    let bytes = location.read_location(list)?;
    avro::read_manifest_list(&bytes, Path::new(list))
}

/// A summary's count `key` as a number (0 when missing).
fn count(summary: &Value, key: &str) -> u64 {
    summary[key]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The snapshot of a commit.
fn snapshot_json(
    added: &Added,
    snapshot_id: i64,
    parent: Option<i64>,
    sequence_number: i64,
    list: &Path,
    now: i64,
    previous: &Value,
) -> (Value, u64) {
    let total_rows = count(previous, "total-records") + added.rows;
    let mut s = json!({
        "snapshot-id": snapshot_id,
        "sequence-number": sequence_number,
        "timestamp-ms": now,
        "manifest-list": text(list),
        "summary": {
            "operation": "append",
            "added-data-files": added.entries.len().to_string(),
            "added-records": added.rows.to_string(),
            "added-files-size": added.bytes.to_string(),
            "changed-partition-count": added.partitions.to_string(),
            "total-records": total_rows.to_string(),
            "total-files-size": (count(previous, "total-files-size") + added.bytes).to_string(),
            "total-data-files": (count(previous, "total-data-files") + added.entries.len() as u64).to_string(),
            "total-delete-files": count(previous, "total-delete-files").to_string(),
            "total-position-deletes": count(previous, "total-position-deletes").to_string(),
            "total-equality-deletes": count(previous, "total-equality-deletes").to_string(),
        },
        "schema-id": 0,
    });
    if let Some(p) = parent {
        s["parent-snapshot-id"] = json!(p);
    }
    (s, total_rows)
}

/// Version 1 of a new table holding `added`.
pub(crate) fn new_metadata(
    t: &NewTable<'_>,
    layout: &TableLayout,
    added: &Added,
    snapshot_id: i64,
    list: &Path,
    now: i64,
) -> (Value, u64) {
    let mut properties = t.properties.clone();
    properties
        .entry("write.format.default".into())
        .or_insert_with(|| "parquet".into());
    // Bounds are whole values, not truncated.
    properties
        .entry("write.metadata.metrics.default".into())
        .or_insert_with(|| "full".into());
    let (snapshot, total_rows) =
        snapshot_json(added, snapshot_id, None, 1, list, now, &Value::Null);
    let sorted = !layout.sort_json.is_empty();
    let metadata = json!({
        "format-version": 2,
        "table-uuid": uuid(),
        "location": text(&t.location.root()),
        "last-sequence-number": 1,
        "last-updated-ms": now,
        "last-column-id": t.schema.last_column_id,
        "current-schema-id": 0,
        "schemas": [t.schema.json],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": layout.spec_json}],
        "last-partition-id": 999 + layout.fields.len() as i64,
        "default-sort-order-id": i64::from(sorted),
        "sort-orders": if sorted {
            json!([{"order-id": 0, "fields": []}, {"order-id": 1, "fields": layout.sort_json}])
        } else {
            json!([{"order-id": 0, "fields": []}])
        },
        "properties": properties,
        "current-snapshot-id": snapshot_id,
        "refs": {"main": {"snapshot-id": snapshot_id, "type": "branch"}},
        "snapshots": [snapshot],
        "snapshot-log": [{"snapshot-id": snapshot_id, "timestamp-ms": now}],
        "metadata-log": [],
    });
    (metadata, total_rows)
}

/// The version after `cur` with a snapshot appending `added`.
pub(crate) fn appended_metadata(
    cur: &Current,
    added: &Added,
    snapshot_id: i64,
    sequence_number: i64,
    list: &Path,
    now: i64,
) -> (Value, u64) {
    let mut m = cur.metadata.clone();
    let parent = m["current-snapshot-id"].as_i64().filter(|&i| i >= 0);
    let previous = parent
        .and_then(|p| {
            m["snapshots"]
                .as_array()
                .and_then(|s| s.iter().find(|s| s["snapshot-id"].as_i64() == Some(p)))
                .map(|s| s["summary"].clone())
        })
        .unwrap_or(Value::Null);
    let (snapshot, total_rows) = snapshot_json(
        added,
        snapshot_id,
        parent,
        sequence_number,
        list,
        now,
        &previous,
    );
    let push = |v: &mut Value, item: Value| match v.as_array_mut() {
        Some(a) => a.push(item),
        None => *v = json!([item]),
    };
    push(&mut m["snapshots"], snapshot);
    push(
        &mut m["snapshot-log"],
        json!({"snapshot-id": snapshot_id, "timestamp-ms": now}),
    );
    let replaced = json!({
        "metadata-file": text(&cur.path),
        "timestamp-ms": cur.metadata["last-updated-ms"].clone(),
    });
    push(&mut m["metadata-log"], replaced);
    m["last-sequence-number"] = json!(sequence_number);
    m["last-updated-ms"] = json!(now);
    m["current-snapshot-id"] = json!(snapshot_id);
    m["refs"]["main"] = json!({"snapshot-id": snapshot_id, "type": "branch"});
    (m, total_rows)
}
