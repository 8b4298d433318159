//! Delta Lake: a table's transaction log over data files already
//! written, committed as version 0 of a new table at a local directory or
//! as the next version of an existing one; and changes to it (deletes,
//! updates, merges rewriting files copy-on-write, compaction), with their
//! change data feed.
//!
//! [`create`] writes `LOCATION/_delta_log/00000000000000000000.json`,
//! newline-delimited JSON actions: `commitInfo` (a `WRITE` in mode
//! `ErrorIfExists`), `protocol` (the lowest versions the table's types
//! and properties need: reader 1 and writer 2; writer 4 for the change
//! data feed; or reader 3 and writer 7 with the `timestampNtz` or
//! `deletionVectors` feature, and `changeDataFeed` among the writer
//! features), `metaData` (a random
//! id, Parquet, the schema, the partition columns, the properties
//! [`create_with`] was given) and one `add` per data file (its path, its
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
//! [`commit_change`] commits a [`Change`] read at a version: `add`s of
//! new files, `remove`s of live ones, `cdc` actions of change data
//! files, under an operation (`WRITE`, `DELETE`, `UPDATE`, `MERGE`,
//! `OPTIMIZE`); another writer's commit in between aborts it only when
//! it touched the same files or the table's metadata ([`change`] states
//! the rules). [`cdc::write()`] writes a change data file. On a table
//! created with `delta.enableDeletionVectors` (reader 3 and writer 7
//! with `deletionVectors`), a change may mark rows of a file deleted in
//! its deletion vector ([`dv`]) instead of rewriting it.
//!
//! Delta partitions by column values only (no transforms), and keeps a
//! partition column's values in the log and the directory names, not in
//! the data files.

pub mod cdc;
pub mod change;
pub mod checkpoint;
pub mod commit;
pub mod dv;
pub mod log;
pub mod properties;
pub mod replay;
pub mod schema;
pub mod stats;
pub mod values;

use std::collections::BTreeMap;

use strata_layout::{PartitionField, Transform};

pub use change::{Change, DeletedRows, Operation, commit_change};
pub use commit::{COMMIT_RETRIES, Committed, write_checkpoint};
pub use log::{LOG_DIR, Snapshot, log_file_name};
pub use replay::replay;
pub use schema::{DeltaType, Primitive, StructField, TableSchema};

use crate::{
    Error,
    dir::TableDir,
    ids::{now_ms, uuid},
    stats::FileFacts,
};
use commit::{Action, CommitInfo};
use log::{Format, MetaData, Protocol};

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
/// of an older version, or of the change data feed, finds its files),
/// and the files of their deletion vectors; `None` when there is no
/// table.
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
    let mut vectors: Vec<&log::DeletionVector> = state
        .files
        .values()
        .filter_map(|a| a.deletion_vector.as_ref())
        .chain(
            state
                .removed
                .values()
                .filter_map(|r| r.deletion_vector.as_ref()),
        )
        .collect();
    let mut logged = Vec::new();
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
            if let Some(a) = line.add {
                uris.push(a.path);
                logged.extend(a.deletion_vector);
            }
            if let Some(r) = line.remove {
                uris.push(r.path);
                logged.extend(r.deletion_vector);
            }
            uris.extend(line.cdc.map(|c| c.path));
        }
    }
    vectors.extend(&logged);
    let mut out: std::collections::BTreeSet<String> = uris
        .iter()
        .filter_map(|u| values::path_from_uri(u))
        .collect();
    out.extend(vectors.into_iter().filter_map(dv::file_rel));
    Ok(Some(out))
}

/// Writes the log of a new table over its data files and commits it as
/// version 0, or appends them as the table's next version; then writes
/// the checkpoint when the version is due one. The table's properties
/// are none: [`create_with`] takes them.
///
/// # Errors
/// As [`create_with`].
pub fn create(t: &NewTable<'_>) -> Result<Committed, Error> {
    create_with(t, &BTreeMap::new())
}

/// [`create`] with table properties (`metaData.configuration`): a new
/// table gets them, and the protocol they need
/// (`delta.enableChangeDataFeed` = `true`: writer version 4, or the
/// `changeDataFeed` feature at 7); an append checks that the table has
/// them.
///
/// # Errors
/// [`Error::BadTable`] when `location` holds another format or a log
/// that does not read, or a data file's path lacks a partition
/// directory; [`Error::Unsupported`] for a partition field with a
/// transform or on a column that is not a top-level primitive of the
/// schema, a property strata does not honour ([`properties::check`]),
/// or a table of another schema, partitioning or properties (also one
/// that another writer made first); [`Error::Conflict`] after
/// [`COMMIT_RETRIES`] versions taken by other writers; IO errors.
pub fn create_with(
    t: &NewTable<'_>,
    configuration: &BTreeMap<String, String>,
) -> Result<Committed, Error> {
    properties::check(configuration)?;
    let target = |location: &TableDir| -> Result<Option<Snapshot>, Error> {
        let existing = check_target(location, t.schema, t.partition)?;
        if let Some(cur) = &existing {
            properties::check_same(&location.root(), &cur.meta, configuration)?;
        }
        Ok(existing)
    };
    let existing = target(t.location)?;
    let partition = partition_columns(t.partition)?;
    let typed = t.schema.partition_types(&partition)?;
    // The data files' `add`s: the same whatever version they land in.
    let mut rows = 0u64;
    let mut adds = Vec::with_capacity(t.files.len());
    for (rel, facts) in t.files {
        adds.push(commit::add_action(
            t.location, rel, facts, t.schema, &typed, true,
        )?);
        rows += facts.rows;
    }
    let made_dir = !t.location.has_dir(LOG_DIR)?;
    let mut existing = existing;
    let mut attempts = 0;
    let (log_file, version, table_id, meta) = loop {
        let table_id = existing.as_ref().map_or_else(uuid, |c| c.meta.id.clone());
        let version = existing.as_ref().map_or(0, |c| c.version + 1);
        let (lines, meta) = entry(t, &partition, configuration, existing.as_ref(), &table_id);
        let mut lines: Vec<Action<'_>> = lines;
        lines.extend(adds.iter().map(Action::Add));
        let claimed = commit::encode(t.location, &lines)
            .and_then(|body| commit::claim(t.location, version, &body));
        match claimed {
            Ok(Some(path)) => break (path, version, table_id, meta),
            Ok(None) if attempts < COMMIT_RETRIES => {
                // Another writer took this version (or made the table
                // first): a blind append goes on top of it, once the
                // table is still of this schema, partitioning and
                // properties.
                attempts += 1;
                existing = target(t.location)?;
            }
            Ok(None) => {
                return Err(Error::Conflict {
                    path: t.location.root(),
                    version,
                });
            }
            Err(e) => {
                if made_dir {
                    // Only an empty directory goes: another writer's log
                    // stays.
                    t.location.remove_empty_dir(LOG_DIR);
                }
                return Err(e);
            }
        }
    };
    let (checkpoint, checkpoint_error) = commit::checkpoint_when_due(t.location, version, &meta);
    Ok(Committed {
        log_file,
        version,
        table_id,
        files: t.files.len(),
        rows,
        removed: 0,
        change_files: 0,
        checkpoint,
        checkpoint_error,
    })
}

/// The actions of a commit of table `t` before its `add`s, and the
/// table's metadata: a `commitInfo`, then for a new table (`existing`
/// none) its `protocol` and `metaData` (id `table_id`, properties
/// `configuration`).
fn entry(
    t: &NewTable<'_>,
    partition: &[String],
    configuration: &BTreeMap<String, String>,
    existing: Option<&Snapshot>,
    table_id: &str,
) -> (Vec<Action<'static>>, MetaData) {
    let now = now_ms();
    let mut lines = vec![Action::CommitInfo(CommitInfo {
        timestamp: now,
        operation: "WRITE",
        operation_parameters: BTreeMap::from([
            (
                "mode",
                if existing.is_some() {
                    "Append"
                } else {
                    "ErrorIfExists"
                }
                .to_string(),
            ),
            (
                "partitionBy",
                serde_json::Value::from(partition.to_vec()).to_string(),
            ),
        ]),
        read_version: None,
        isolation_level: None,
        is_blind_append: true,
        operation_metrics: BTreeMap::new(),
        engine_info: commit::ENGINE,
    })];
    if let Some(cur) = existing {
        return (lines, cur.meta.clone());
    }
    let mut features = t.schema.features();
    features.extend(properties::features(configuration));
    let meta = MetaData {
        id: table_id.to_string(),
        name: None,
        description: None,
        format: Format {
            provider: "parquet".into(),
            options: BTreeMap::new(),
        },
        schema_string: t.schema.json(),
        partition_columns: partition.to_vec(),
        configuration: configuration.clone(),
        created_time: Some(now),
    };
    lines.push(Action::Protocol(Protocol::for_features(&features)));
    lines.push(Action::MetaData(meta.clone()));
    (lines, meta)
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

    #[test]
    fn properties_make_the_protocol_and_appends_keep_them() {
        let dir = tempfile::tempdir().unwrap();
        let schema =
            TableSchema::new(&Schema::new(vec![Field::new("id", DataType::Int64, false)])).unwrap();
        let table = NewTable {
            location: &TableDir::local(dir.path()).unwrap(),
            schema: &schema,
            partition: &[],
            files: &[],
        };
        let cdf = BTreeMap::from([(properties::CHANGE_DATA_FEED.to_string(), "true".to_string())]);
        let c = create_with(&table, &cdf).unwrap();
        let text = std::fs::read_to_string(&c.log_file).unwrap();
        assert_eq!(
            text.lines().nth(1),
            Some(r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":4}}"#)
        );
        let meta: Value = serde_json::from_str(text.lines().nth(2).unwrap()).unwrap();
        assert_eq!(
            meta["metaData"]["configuration"],
            serde_json::json!({"delta.enableChangeDataFeed": "true"})
        );
        // Appends: without properties, or with the table's; not others.
        assert_eq!(create(&table).unwrap().version, 1);
        assert_eq!(create_with(&table, &cdf).unwrap().version, 2);
        let off = BTreeMap::from([(
            properties::CHANGE_DATA_FEED.to_string(),
            "false".to_string(),
        )]);
        let e = create_with(&table, &off).unwrap_err().to_string();
        assert!(
            e.contains("`delta.enableChangeDataFeed` is `true` in the table"),
            "{e}"
        );
        let unknown = BTreeMap::from([("delta.columnMapping.mode".to_string(), "name".into())]);
        let e = create_with(&table, &unknown).unwrap_err().to_string();
        assert!(e.contains("strata writes only the Delta properties"), "{e}");
        assert_eq!(
            std::fs::read_dir(dir.path().join(LOG_DIR)).unwrap().count(),
            3
        );
    }
}
