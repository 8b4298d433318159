//! Delta Lake: a table's transaction log over data files already
//! written, committed as version 0 of a new table at a local directory or
//! as the next version of an existing one.
//!
//! [`create`] writes `LOCATION/_delta_log/00000000000000000000.json`,
//! newline-delimited JSON actions: `commitInfo` (a `WRITE` in mode
//! `ErrorIfExists`), `protocol` (the lowest versions the table's types
//! need: reader 1 and writer 2, or reader 3 and writer 7 with the
//! `timestampNtz` feature), `metaData` (a random id, Parquet, the schema,
//! the partition columns) and one `add` per data file (its path, its
//! partition values, size, modification time and statistics). The file
//! is created only if absent, so a table is either complete or not
//! there.
//!
//! At a table that exists (same schema and partition columns, else an
//! error naming the difference), [`create`] appends: the next version's
//! entry holds a `commitInfo` in mode `Append` and the `add`s; when
//! another writer took that version first, the entry goes to the one
//! after it (a blind append), so no commit is lost.
//!
//! Delta partitions by column values only (no transforms), and keeps a
//! partition column's values in the log and the directory names, not in
//! the data files.

pub mod checkpoint;
pub mod log;
pub mod replay;
pub mod schema;
pub mod stats;
pub mod values;

use std::{collections::BTreeMap, path::PathBuf};

use serde::Serialize;
use strata_layout::{PartitionField, Transform};

pub use log::{LOG_DIR, Snapshot, log_file_name};
pub use replay::replay;
pub use schema::{DeltaType, Primitive, StructField, TableSchema};

use crate::{
    Error,
    dir::TableDir,
    ids::{now_ms, uuid},
    stats::FileFacts,
};
use log::{Add, Format, MetaData, Protocol};

/// A new table: its schema, partition columns and data files.
#[derive(Debug, Clone, Copy)]
pub struct NewTable<'a> {
    /// The table's root: a local directory or an object-store prefix.
    pub location: &'a TableDir,
    /// Its schema, partition columns included (the data files hold the
    /// others).
    pub schema: &'a TableSchema,
    /// Partition fields, outermost first: identity fields only.
    pub partition: &'a [PartitionField],
    /// The data files: each one's path relative to `location` (`/`
    /// separated, partition directories included) and its facts.
    pub files: &'a [(String, FileFacts)],
}

/// What [`create`] committed.
#[derive(Debug, Clone)]
pub struct Committed {
    /// The log entry of the new version.
    pub log_file: PathBuf,
    /// The version (0 for a new table).
    pub version: u64,
    /// The table's id (`metaData.id`).
    pub table_id: String,
    /// Data files added.
    pub files: usize,
    /// Rows in them.
    pub rows: u64,
    /// The checkpoint written after the commit, when the version was due
    /// one (every `delta.checkpointInterval` versions, 10 by default).
    pub checkpoint: Option<checkpoint::Written>,
    /// Why a due checkpoint was not written (the commit stands: readers
    /// replay the log from the checkpoint before).
    pub checkpoint_error: Option<String>,
}

/// The columns a Delta table is partitioned by, from a layout's partition
/// fields: each field's column, when every field is an identity field.
///
/// # Errors
/// [`Error::Unsupported`] for a field with a transform (`month(c)`,
/// `bucket(N, c)`): Delta partitions by column values only.
pub fn partition_columns(fields: &[PartitionField]) -> Result<Vec<String>, Error> {
    fields
        .iter()
        .map(|f| match f.transform {
            Transform::Identity => Ok(f.source.clone()),
            _ => Err(Error::Unsupported(format!(
                "partition field `{}`: Delta Lake partitions by column values and has no \
                 partition transforms; partition by a column instead (`--partition-by {}`, or a \
                 column computed from it in the spec)",
                f.text, f.source
            ))),
        })
        .collect()
}

/// The Delta table at `location`, if there is one: its state at its
/// newest version ([`replay()`]).
///
/// # Errors
/// [`Error::BadTable`] when `location` holds an Iceberg table, or the log
/// does not read ([`replay()`]).
pub fn current(location: &TableDir) -> Result<Option<Snapshot>, Error> {
    if !location.has_dir(LOG_DIR)? && location.has_dir("metadata")? {
        return Err(Error::BadTable {
            path: location.root(),
            reason: "holds an Iceberg table (metadata/), not a Delta table (choose another output \
                     directory or remove it)"
                .into(),
        });
    }
    replay(location, None)
}

/// Checks that data files of `schema`, partitioned by `partition`, can be
/// committed at `location`: a new table, or a Delta table of the same
/// schema and partition columns, whose protocol and properties strata
/// can write (to which they are appended).
///
/// # Errors
/// [`Error::BadTable`] for an Iceberg table or an unreadable log;
/// [`Error::Unsupported`] naming the difference of schema or
/// partitioning, or the table features strata does not write.
pub fn check_target(
    location: &TableDir,
    schema: &TableSchema,
    partition: &[PartitionField],
) -> Result<Option<Snapshot>, Error> {
    let Some(cur) = current(location)? else {
        return Ok(None);
    };
    cur.protocol.check_writable(&location.root(), &cur.meta)?;
    let columns = partition_columns(partition)?;
    if cur.meta.partition_columns != columns {
        return Err(Error::Unsupported(format!(
            "{}: the table is partitioned by [{}]; this run is partitioned by [{}]",
            location.root().display(),
            cur.meta.partition_columns.join(", "),
            columns.join(", ")
        )));
    }
    if cur.meta.schema_string != schema.json() {
        return Err(Error::Unsupported(format!(
            "{}: the schema differs from the table's: the table has {} where this run has {}",
            location.root().display(),
            cur.meta.schema_string,
            schema.json()
        )));
    }
    Ok(Some(cur))
}

/// The files the log of the Delta table at `location` names, relative
/// to it: every `add` and `remove` of its newest checkpoint and every
/// `add`, `remove` and `cdc` of every log entry there (so that a reader
/// of an older version, or of the change data feed, finds its files);
/// `None` when there is no table.
///
/// # Errors
/// As [`replay()`]; a log entry that does not read.
pub fn referenced(
    location: &TableDir,
) -> Result<Option<std::collections::BTreeSet<String>>, Error> {
    let Some(state) = replay(location, None)? else {
        return Ok(None);
    };
    let mut uris: Vec<String> = state
        .files
        .keys()
        .chain(state.removed.keys())
        .cloned()
        .collect();
    for name in location.list(LOG_DIR)?.unwrap_or_default() {
        if !name.ends_with(".json") || name.starts_with('_') {
            continue;
        }
        let rel = format!("{LOG_DIR}/{name}");
        let Some(bytes) = location.read(&rel)? else {
            continue;
        };
        for line in String::from_utf8_lossy(&bytes).lines() {
            let Ok(line) = serde_json::from_str::<log::LogLine>(line) else {
                continue;
            };
            uris.extend(line.add.map(|a| a.path));
            uris.extend(line.remove.map(|r| r.path));
            uris.extend(line.cdc.map(|c| c.path));
        }
    }
    Ok(Some(
        uris.iter()
            .filter_map(|u| values::path_from_uri(u))
            .collect(),
    ))
}

/// How many times an append is tried again on top of a version another
/// writer committed first.
pub const COMMIT_RETRIES: u64 = 100;

/// One line of a log entry: an action, under its name
/// (`{"add": {...}}`), its fields in the protocol's order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
enum Action<'a> {
    /// What the commit did.
    CommitInfo(CommitInfo),
    /// The versions (and features) readers and writers need.
    Protocol(Protocol),
    /// The table's id, format, schema and partition columns.
    MetaData(MetaData),
    /// A data file.
    Add(&'a Add),
}

/// A `commitInfo` action.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CommitInfo {
    timestamp: i64,
    operation: &'static str,
    /// The operation's settings, each one's value as text (`partitionBy`
    /// is a JSON array in a string).
    operation_parameters: BTreeMap<&'static str, String>,
    is_blind_append: bool,
    engine_info: &'static str,
}

/// Writes the log of a new table over its data files and commits it as
/// version 0, or appends them as the table's next version; then writes
/// the checkpoint when the version is due one.
///
/// # Errors
/// [`Error::BadTable`] when `location` holds another format or a log
/// that does not read, or a data file's path lacks a partition
/// directory; [`Error::Unsupported`] for a partition field with a
/// transform or on a column that is not a top-level primitive of the
/// schema, or a table of another schema or partitioning (also one that
/// another writer made first); [`Error::Conflict`] after
/// [`COMMIT_RETRIES`] versions taken by other writers; IO errors.
pub fn create(t: &NewTable<'_>) -> Result<Committed, Error> {
    let existing = check_target(t.location, t.schema, t.partition)?;
    let partition = partition_columns(t.partition)?;
    let mut typed = Vec::with_capacity(partition.len());
    for column in &partition {
        match t.schema.field(column).map(|f| &f.data_type) {
            Some(DeltaType::Primitive(p)) => typed.push((column.clone(), *p)),
            Some(_) => {
                return Err(Error::Unsupported(format!(
                    "partition column `{column}` is not of a primitive type"
                )));
            }
            None => {
                return Err(Error::Unsupported(format!(
                    "partition column `{column}`: the schema has no such column"
                )));
            }
        }
    }
    // The data files' `add`s: the same whatever version they land in.
    let mut rows = 0u64;
    let mut adds = Vec::with_capacity(t.files.len());
    for (rel, facts) in t.files {
        adds.push(Add {
            path: values::path_uri(rel),
            partition_values: values::partition_values(rel, &typed)?,
            size: i64::try_from(facts.bytes).unwrap_or(i64::MAX),
            modification_time: t.location.modified_ms(rel)?,
            data_change: true,
            stats: Some(stats::file_stats(t.schema, facts)),
        });
        rows += facts.rows;
    }
    let made_dir = !t.location.has_dir(LOG_DIR)?;
    let mut existing = existing;
    let mut attempts = 0;
    let (target, version, table_id) = loop {
        let table_id = existing.as_ref().map_or_else(uuid, |c| c.meta.id.clone());
        let version = existing.as_ref().map_or(0, |c| c.version + 1);
        let body = entry(t, &partition, existing.is_some(), &table_id, &adds)?;
        let rel = format!("{LOG_DIR}/{}", log_file_name(version));
        match t.location.put_new(&rel, &body) {
            Ok(()) => break (t.location.at(&rel), version, table_id),
            Err(Error::Store(strata_store::Error::OutputExists { .. }))
                if attempts < COMMIT_RETRIES =>
            {
                // Another writer took this version (or made the table
                // first): a blind append goes on top of it, once the
                // table is still of this schema and partitioning.
                attempts += 1;
                existing = check_target(t.location, t.schema, t.partition)?;
            }
            Err(e) => {
                let e = match e {
                    Error::Store(strata_store::Error::OutputExists { .. }) => Error::Conflict {
                        path: t.location.root(),
                        version,
                    },
                    e => e,
                };
                if made_dir && !matches!(e, Error::Conflict { .. }) {
                    // Only an empty directory goes: another writer's log
                    // stays.
                    t.location.remove_empty_dir(LOG_DIR);
                }
                return Err(e);
            }
        }
    };
    let every = existing.as_ref().map_or(checkpoint::DEFAULT_INTERVAL, |c| {
        checkpoint::interval(&c.meta)
    });
    let (checkpoint, checkpoint_error) = if version > 0 && version % every == 0 {
        match write_checkpoint(t.location, version) {
            Ok(c) => (Some(c), None),
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    Ok(Committed {
        log_file: target,
        version,
        table_id,
        files: t.files.len(),
        rows,
        checkpoint,
        checkpoint_error,
    })
}

/// The log entry of a commit of `adds` to table `t`: a `commitInfo`,
/// then for a new table (`append` false) its `protocol` and `metaData`
/// (id `table_id`), then the `add`s, one JSON action a line.
fn entry(
    t: &NewTable<'_>,
    partition: &[String],
    append: bool,
    table_id: &str,
    adds: &[Add],
) -> Result<Vec<u8>, Error> {
    let now = now_ms();
    let mut lines = vec![Action::CommitInfo(CommitInfo {
        timestamp: now,
        operation: "WRITE",
        operation_parameters: BTreeMap::from([
            (
                "mode",
                if append { "Append" } else { "ErrorIfExists" }.to_string(),
            ),
            (
                "partitionBy",
                serde_json::Value::from(partition.to_vec()).to_string(),
            ),
        ]),
        is_blind_append: true,
        engine_info: concat!("strata/", env!("CARGO_PKG_VERSION")),
    })];
    if !append {
        lines.push(Action::Protocol(Protocol::for_features(
            &t.schema.features(),
        )));
        lines.push(Action::MetaData(MetaData {
            id: table_id.to_string(),
            name: None,
            description: None,
            format: Format {
                provider: "parquet".into(),
                options: BTreeMap::new(),
            },
            schema_string: t.schema.json(),
            partition_columns: partition.to_vec(),
            configuration: BTreeMap::new(),
            created_time: Some(now),
        }));
    }
    let mut body = Vec::new();
    lines.extend(adds.iter().map(Action::Add));
    for line in &lines {
        serde_json::to_writer(&mut body, line).map_err(|e| Error::BadTable {
            path: t.location.root(),
            reason: format!("cannot write the log entry: {e}"),
        })?;
        body.push(b'\n');
    }
    Ok(body)
}

/// Writes the checkpoint of the table at `location` as of `version`
/// (unless one is there) and points `_last_checkpoint` at it.
///
/// # Errors
/// As [`replay()`] (and [`Error::BadTable`] when there is no table) and
/// [`checkpoint::write`].
pub fn write_checkpoint(location: &TableDir, version: u64) -> Result<checkpoint::Written, Error> {
    let state = replay(location, Some(version))?.ok_or_else(|| Error::BadTable {
        path: location.root(),
        reason: "no Delta log to checkpoint".into(),
    })?;
    checkpoint::write(location, &state)
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, Field, Schema};
    use serde_json::Value;

    use super::*;
    use crate::stats::{Bound, LeafFacts};

    #[test]
    fn a_new_table_commits_its_actions_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let schema = TableSchema::new(&Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("flag", DataType::Utf8, true),
        ]))
        .unwrap();
        let rel = "flag=a%3Ab/part_0.parquet";
        std::fs::create_dir_all(root.join("flag=a%3Ab")).unwrap();
        std::fs::write(root.join(rel), b"not read").unwrap();
        let facts = FileFacts {
            rows: 2,
            bytes: 8,
            split_offsets: vec![4],
            leaves: vec![LeafFacts {
                path: vec!["id".into()],
                field_id: None,
                repeated: false,
                compressed_bytes: 4,
                values: 2,
                nulls: Some(0),
                min: Some(Bound::Int(1)),
                max: Some(Bound::Int(2)),
            }],
        };
        let files = [(rel.to_string(), facts)];
        let partition = [PartitionField::parse("flag").unwrap()];
        let table = NewTable {
            location: &TableDir::local(root).unwrap(),
            schema: &schema,
            partition: &partition,
            files: &files,
        };
        let c = create(&table).unwrap();
        assert_eq!((c.version, c.files, c.rows), (0, 1, 2));
        let text = std::fs::read_to_string(&c.log_file).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        let info = &lines[0]["commitInfo"];
        assert_eq!(info["operation"], "WRITE");
        assert_eq!(info["operationParameters"]["mode"], "ErrorIfExists");
        assert_eq!(info["operationParameters"]["partitionBy"], r#"["flag"]"#);
        assert_eq!(
            text.lines().nth(1),
            Some(r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#)
        );
        let meta = &lines[2]["metaData"];
        assert_eq!(meta["id"], c.table_id.as_str());
        assert_eq!(
            meta["format"],
            serde_json::json!({"provider": "parquet", "options": {}})
        );
        assert_eq!(meta["schemaString"], schema.json().as_str());
        assert_eq!(meta["partitionColumns"], serde_json::json!(["flag"]));
        let add = &lines[3]["add"];
        assert_eq!(add["path"], "flag=a%253Ab/part_0.parquet");
        assert_eq!(add["partitionValues"], serde_json::json!({"flag": "a:b"}));
        assert_eq!(add["size"], 8);
        assert_eq!(add["dataChange"], true);
        assert_eq!(
            add["stats"],
            r#"{"numRecords":2,"minValues":{"id":1},"maxValues":{"id":2},"nullCount":{"id":0}}"#
        );
        assert!(add["modificationTime"].as_i64().unwrap() > 0);

        // The same files again are an append: version 1, a commitInfo in
        // mode Append and the adds, no protocol or metaData; version 0
        // stays as it was.
        let again = create(&table).unwrap();
        assert_eq!(again.version, 1);
        assert_eq!(std::fs::read_to_string(&c.log_file).unwrap(), text);
        let appended: Vec<Value> = std::fs::read_to_string(&again.log_file)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(appended.len(), 2);
        assert_eq!(
            appended[0]["commitInfo"]["operationParameters"]["mode"],
            "Append"
        );
        assert!(appended[1].get("add").is_some());
        // Another schema is refused, and the log stays.
        let other =
            TableSchema::new(&Schema::new(vec![Field::new("id", DataType::Int32, false)])).unwrap();
        let e = create(&NewTable {
            schema: &other,
            ..table
        })
        .unwrap_err();
        assert!(e.to_string().contains("the schema differs"), "{e}");
        let mut names: Vec<_> = std::fs::read_dir(root.join(LOG_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                std::ffi::OsString::from(log_file_name(0)),
                std::ffi::OsString::from(log_file_name(1))
            ]
        );
    }

    #[test]
    fn iceberg_tables_and_transforms_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("metadata")).unwrap();
        let e = current(&TableDir::local(dir.path()).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds an Iceberg table"), "{e}");
        let fields = [
            PartitionField::parse("l_returnflag").unwrap(),
            PartitionField::parse("month(l_shipdate)").unwrap(),
        ];
        let e = partition_columns(&fields).unwrap_err().to_string();
        assert!(
            e.contains("`month(l_shipdate)`") && e.contains("partitions by column values"),
            "{e}"
        );
        assert_eq!(
            partition_columns(&fields[..1]).unwrap(),
            ["l_returnflag".to_string()]
        );
    }
}
