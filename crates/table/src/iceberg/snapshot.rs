//! A commit's snapshot: its manifest entries from the data files' facts,
//! the partitions' summaries, the current snapshot's manifests it keeps,
//! an append's summary, and the table metadata of a new table or of the
//! next version.

use std::{collections::BTreeSet, path::Path};

use serde_json::{Value, json};

use super::{
    avro::{DataFile, Entry, FieldSummary},
    model::{Content, Current, NewTable, text},
    read,
    spec::TableLayout,
    values::{PartValue, bound_bytes, partition_value},
};
use crate::{
    Error,
    ids::uuid,
    stats::{Bound, FileFacts, LeafFacts},
};

/// The data files a commit adds.
pub(crate) struct Added {
    pub(crate) entries: Vec<Entry>,
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
    /// Their distinct partitions (each one's `Debug` form).
    pub(crate) partitions: BTreeSet<String>,
    /// Their partition fields' summaries.
    summaries: Summaries,
}

/// Per partition field of a manifest's files: a null seen, the lowest
/// and highest values.
pub(crate) struct Summaries(Vec<(bool, Option<PartValue>, Option<PartValue>)>);

impl Summaries {
    /// Summaries of `fields` partition fields, over no file yet.
    pub(crate) fn new(fields: usize) -> Summaries {
        Summaries(vec![(false, None, None); fields])
    }

    /// Takes in a file's partition values (in the spec's order).
    pub(crate) fn add(&mut self, partition: &[PartValue]) {
        for (s, value) in self.0.iter_mut().zip(partition) {
            if *value == PartValue::Null {
                s.0 = true;
                continue;
            }
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
    }

    /// Each field's summary in binary form.
    pub(crate) fn binary(&self) -> Vec<FieldSummary> {
        self.0
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
}

impl Added {
    /// The entries of `t`'s files.
    pub(crate) fn of(t: &NewTable<'_>, layout: &TableLayout) -> Result<Added, Error> {
        let mut entries = Vec::with_capacity(t.files.len());
        let mut summaries = Summaries::new(layout.fields.len());
        let (mut rows, mut bytes) = (0u64, 0u64);
        let mut seen = BTreeSet::new();
        for (rel, facts) in t.files {
            let partition = partition_of(t, layout, rel, facts)?;
            summaries.add(&partition);
            seen.insert(format!("{partition:?}"));
            let id_of = |l: &LeafFacts| l.field_id.or_else(|| t.schema.leaf_id(&l.path));
            let mut f = file_of(t.location.uri(rel), partition, facts, id_of);
            let encode = |id: i32, b: &Bound| {
                t.schema
                    .primitives
                    .get(&id)
                    .and_then(|p| bound_bytes(*p, b))
            };
            bounds_of(&mut f, facts, encode, id_of);
            rows += facts.rows;
            bytes += facts.bytes;
            entries.push(Entry::added(f));
        }
        Ok(Added {
            entries,
            rows,
            bytes,
            partitions: seen,
            summaries,
        })
    }

    /// Each partition field's summary in binary form.
    pub(crate) fn partition_summaries(&self) -> Vec<FieldSummary> {
        self.summaries.binary()
    }

    /// Marks every entry as written in sort order `id` (none for 0).
    pub(crate) fn set_sort_order(&mut self, id: Option<i64>) {
        let id = id.filter(|&i| i != 0).and_then(|i| i32::try_from(i).ok());
        for e in &mut self.entries {
            e.file.sort_order_id = id;
        }
    }
}

/// The partition values of data file `rel` of `t`, from the bounds of
/// each partition field's source column (every row of a file is in one
/// partition).
fn partition_of(
    t: &NewTable<'_>,
    layout: &TableLayout,
    rel: &str,
    facts: &FileFacts,
) -> Result<Vec<PartValue>, Error> {
    let id_of = |l: &LeafFacts| l.field_id.or_else(|| t.schema.leaf_id(&l.path));
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
        partition.push(value);
    }
    Ok(partition)
}

/// The `data_file` record of a data file at `path` (as metadata records
/// it) in `partition`: its counts and sizes per leaf column that `id_of`
/// gives an id; no bounds yet.
pub(crate) fn file_of(
    path: String,
    partition: Vec<PartValue>,
    facts: &FileFacts,
    id_of: impl Fn(&LeafFacts) -> Option<i32>,
) -> DataFile {
    let mut f = DataFile {
        content: Content::Data,
        path,
        partition,
        rows: facts.rows,
        bytes: facts.bytes,
        column_sizes: Vec::new(),
        value_counts: Vec::new(),
        null_counts: Vec::new(),
        nan_counts: Vec::new(),
        lower: Vec::new(),
        upper: Vec::new(),
        split_offsets: facts.split_offsets.clone(),
        equality_ids: Vec::new(),
        sort_order_id: None,
        key_metadata: None,
    };
    for l in &facts.leaves {
        let Some(id) = id_of(l) else { continue };
        f.column_sizes.push((id, l.compressed_bytes));
        f.value_counts.push((id, l.values));
        if let Some(n) = l.nulls {
            f.null_counts.push((id, n));
        }
    }
    f
}

/// Sets `f`'s bounds: of each leaf column outside lists and maps that
/// `id_of` gives an id, its exact minimum and maximum, as `encode` writes
/// them for that id (`None`: no bound).
pub(crate) fn bounds_of(
    f: &mut DataFile,
    facts: &FileFacts,
    encode: impl Fn(i32, &Bound) -> Option<Vec<u8>>,
    id_of: impl Fn(&LeafFacts) -> Option<i32>,
) {
    for l in &facts.leaves {
        let Some(id) = id_of(l) else { continue };
        if l.repeated {
            continue;
        }
        if let Some(b) = l.min.as_ref().and_then(|b| encode(id, b)) {
            f.lower.push((id, b));
        }
        if let Some(b) = l.max.as_ref().and_then(|b| encode(id, b)) {
            f.upper.push((id, b));
        }
    }
}

/// The manifest list lines of the current snapshot of `metadata` that
/// hold live files (none for a table without a snapshot).
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
    // A manifest whose entries are all deleted recorded the deletes of
    // the snapshot that wrote it; later snapshots leave it out.
    Ok(read::list_lines(&bytes, Path::new(list))?
        .into_iter()
        .filter(|l| l.live_files != Some(0))
        .map(|l| l.raw)
        .collect())
}

/// A summary's count `key` as a number (0 when missing).
pub(crate) fn count(summary: &Value, key: &str) -> u64 {
    summary[key]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The summary of the current snapshot of `metadata` (null when none).
pub(crate) fn current_summary(metadata: &Value) -> Value {
    metadata["current-snapshot-id"]
        .as_i64()
        .filter(|&p| p >= 0)
        .and_then(|p| {
            metadata["snapshots"]
                .as_array()
                .and_then(|s| s.iter().find(|s| s["snapshot-id"].as_i64() == Some(p)))
                .map(|s| s["summary"].clone())
        })
        .unwrap_or(Value::Null)
}

/// The summary of a snapshot appending `added` to one whose summary is
/// `previous`: its counts, and the totals carried forward.
pub(crate) fn append_summary(added: &Added, previous: &Value) -> Value {
    let total = |key: &str, plus: u64| (count(previous, key) + plus).to_string();
    json!({
        "operation": "append",
        "added-data-files": added.entries.len().to_string(),
        "added-records": added.rows.to_string(),
        "added-files-size": added.bytes.to_string(),
        "changed-partition-count": added.partitions.len().to_string(),
        "total-records": total("total-records", added.rows),
        "total-files-size": total("total-files-size", added.bytes),
        "total-data-files": total("total-data-files", added.entries.len() as u64),
        "total-delete-files": total("total-delete-files", 0),
        "total-position-deletes": total("total-position-deletes", 0),
        "total-equality-deletes": total("total-equality-deletes", 0),
    })
}

/// The snapshot of a commit, with `summary`.
fn snapshot_json(
    summary: Value,
    snapshot_id: i64,
    parent: Option<i64>,
    sequence_number: i64,
    list: &Path,
    now: i64,
) -> Value {
    let mut s = json!({
        "snapshot-id": snapshot_id,
        "sequence-number": sequence_number,
        "timestamp-ms": now,
        "manifest-list": text(list),
        "summary": summary,
        "schema-id": 0,
    });
    if let Some(p) = parent {
        s["parent-snapshot-id"] = json!(p);
    }
    s
}

/// Version 1 of a new table holding `added`.
pub(crate) fn new_metadata(
    t: &NewTable<'_>,
    layout: &TableLayout,
    added: &Added,
    snapshot_id: i64,
    list: &Path,
    now: i64,
) -> Value {
    let mut properties = t.properties.clone();
    properties
        .entry("write.format.default".into())
        .or_insert_with(|| "parquet".into());
    // Bounds are whole values, not truncated.
    properties
        .entry("write.metadata.metrics.default".into())
        .or_insert_with(|| "full".into());
    let summary = append_summary(added, &Value::Null);
    let snapshot = snapshot_json(summary, snapshot_id, None, 1, list, now);
    let sorted = !layout.sort_json.is_empty();
    json!({
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
    })
}

/// The version after `cur` whose current snapshot, child of `cur`'s, has
/// `summary`.
pub(crate) fn next_metadata(
    cur: &Current,
    summary: Value,
    snapshot_id: i64,
    sequence_number: i64,
    list: &Path,
    now: i64,
) -> Value {
    let mut m = cur.metadata.clone();
    let parent = m["current-snapshot-id"].as_i64().filter(|&i| i >= 0);
    let snapshot = snapshot_json(summary, snapshot_id, parent, sequence_number, list, now);
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
    m
}
