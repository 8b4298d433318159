//! Delta checkpoints: a table's whole state at one version in one Parquet
//! file, so that a reader starts there instead of at version 0.
//!
//! A checkpoint at version `v` is `_delta_log/{v:020}.checkpoint.parquet`
//! with one row per action (the protocol, the metaData, each
//! application's last `txn`, each live file's `add`, each tombstone's
//! `remove`, with its partition values and size but without statistics)
//! in the columns of the same names, the other columns of a row null.
//! Statistics stay JSON text (`add.stats`), as Delta's writers keep them
//! by default. Change data files (`cdc`) and `commitInfo` are no part of
//! a state, so no checkpoint holds them. `_delta_log/_last_checkpoint`
//! then names it.
//!
//! Rows go into Arrow through `arrow-json` from the same serde types the
//! log's lines use, and out of a checkpoint the same way back, so a
//! checkpoint row and a log line cannot disagree. The file is encoded by
//! strata's Parquet writer and created only if absent: a checkpoint is
//! complete or not there, and of two writers checkpointing one version
//! the first one's stands.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use parquet::{arrow::arrow_reader::ArrowReaderOptions, file::properties::WriterProperties};
use serde::Serialize;
use strata_parquet::writer::ParquetWriter;

use super::log::{Add, LOG_DIR, LogLine, MetaData, Protocol, Remove, Snapshot, Txn};
use crate::{Error, dir::TableDir};

/// How many commits apart checkpoints are, unless the table says
/// otherwise (`delta.checkpointInterval`).
pub const DEFAULT_INTERVAL: u64 = 10;

/// The name of the checkpoint of `version`.
pub fn file_name(version: u64) -> String {
    format!("{version:020}.checkpoint.parquet")
}

/// The file naming the newest checkpoint.
pub const LAST_CHECKPOINT: &str = "_last_checkpoint";

/// The checkpoint interval of a table (`delta.checkpointInterval`, or
/// [`DEFAULT_INTERVAL`]).
pub fn interval(meta: &MetaData) -> u64 {
    meta.configuration
        .get("delta.checkpointInterval")
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_INTERVAL)
}

/// A string map (`partitionValues`, `configuration`).
fn string_map(nullable_values: bool) -> DataType {
    DataType::Map(
        Arc::new(Field::new(
            "key_value",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", DataType::Utf8, nullable_values),
            ])),
            false,
        )),
        false,
    )
}

/// A deletion vector's descriptor.
fn deletion_vector() -> DataType {
    use DataType::{Int32, Int64, Utf8};
    DataType::Struct(Fields::from(vec![
        Field::new("storageType", Utf8, true),
        Field::new("pathOrInlineDv", Utf8, true),
        Field::new("offset", Int32, true),
        Field::new("sizeInBytes", Int32, true),
        Field::new("cardinality", Int64, true),
    ]))
}

/// A list of strings.
fn string_list() -> DataType {
    DataType::List(Arc::new(Field::new("element", DataType::Utf8, true)))
}

/// A struct column of nullable fields.
fn group(name: &str, fields: Vec<(&str, DataType)>) -> Field {
    Field::new(
        name,
        DataType::Struct(Fields::from(
            fields
                .into_iter()
                .map(|(n, t)| Field::new(n, t, true))
                .collect::<Vec<_>>(),
        )),
        true,
    )
}

/// The checkpoint's schema: one struct column per action.
pub fn schema() -> SchemaRef {
    use DataType::{Boolean, Int32, Int64, Utf8};
    Arc::new(Schema::new(vec![
        group(
            "txn",
            vec![("appId", Utf8), ("version", Int64), ("lastUpdated", Int64)],
        ),
        group(
            "add",
            vec![
                ("path", Utf8),
                ("partitionValues", string_map(true)),
                ("size", Int64),
                ("modificationTime", Int64),
                ("dataChange", Boolean),
                ("stats", Utf8),
                ("deletionVector", deletion_vector()),
            ],
        ),
        group(
            "remove",
            vec![
                ("path", Utf8),
                ("deletionTimestamp", Int64),
                ("dataChange", Boolean),
                ("extendedFileMetadata", Boolean),
                ("partitionValues", string_map(true)),
                ("size", Int64),
                ("deletionVector", deletion_vector()),
            ],
        ),
        group(
            "metaData",
            vec![
                ("id", Utf8),
                ("name", Utf8),
                ("description", Utf8),
                (
                    "format",
                    DataType::Struct(Fields::from(vec![
                        Field::new("provider", Utf8, true),
                        Field::new("options", string_map(true), true),
                    ])),
                ),
                ("schemaString", Utf8),
                ("partitionColumns", string_list()),
                ("configuration", string_map(true)),
                ("createdTime", Int64),
            ],
        ),
        group(
            "protocol",
            vec![
                ("minReaderVersion", Int32),
                ("minWriterVersion", Int32),
                ("readerFeatures", string_list()),
                ("writerFeatures", string_list()),
            ],
        ),
    ]))
}

/// One checkpoint row: one action, the others absent.
#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    txn: Option<&'a Txn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    add: Option<&'a Add>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remove: Option<&'a Remove>,
    #[serde(skip_serializing_if = "Option::is_none")]
    meta_data: Option<&'a MetaData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'a Protocol>,
}

/// A checkpoint written.
#[derive(Debug, Clone)]
pub struct Written {
    /// Its version.
    pub version: u64,
    /// The file.
    pub path: PathBuf,
    /// Its rows (actions).
    pub actions: u64,
    /// Its live files.
    pub files: u64,
}

/// The checkpoint of `state` as Parquet bytes.
///
/// # Errors
/// [`Error::BadTable`] when the actions do not encode.
pub fn encode(state: &Snapshot, table: &Path) -> Result<Vec<u8>, Error> {
    let bad = |reason: String| Error::BadTable {
        path: table.to_path_buf(),
        reason: format!("cannot write a checkpoint: {reason}"),
    };
    let mut rows = vec![
        Row {
            protocol: Some(&state.protocol),
            ..Row::default()
        },
        Row {
            meta_data: Some(&state.meta),
            ..Row::default()
        },
    ];
    rows.extend(state.txns.values().map(|t| Row {
        txn: Some(t),
        ..Row::default()
    }));
    rows.extend(state.files.values().map(|a| Row {
        add: Some(a),
        ..Row::default()
    }));
    // Tombstones without their statistics, as the protocol keeps them
    // in checkpoints.
    let tombstones: Vec<Remove> = state
        .removed
        .values()
        .map(|r| Remove {
            stats: None,
            ..r.clone()
        })
        .collect();
    rows.extend(tombstones.iter().map(|r| Row {
        remove: Some(r),
        ..Row::default()
    }));
    let schema = schema();
    let mut decoder = arrow_json::ReaderBuilder::new(schema.clone())
        .with_batch_size(rows.len())
        .build_decoder()
        .map_err(|e| bad(e.to_string()))?;
    decoder.serialize(&rows).map_err(|e| bad(e.to_string()))?;
    let batch = decoder
        .flush()
        .map_err(|e| bad(e.to_string()))?
        .ok_or_else(|| bad("no rows".into()))?;
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut w =
        ParquetWriter::try_new(Vec::new(), schema, props).map_err(|e| bad(e.to_string()))?;
    w.write(&batch).map_err(|e| bad(e.to_string()))?;
    w.finish().map_err(|e| bad(e.to_string()))
}

/// Writes the checkpoint of `state` (the table's state at its version)
/// at `location` unless one is there, then points `_last_checkpoint` at
/// it unless that names a newer one.
///
/// # Errors
/// [`Error::Unsupported`] when the state holds actions strata does not
/// model (a checkpoint would lose them); [`Error::BadTable`] or IO
/// errors.
pub fn write(location: &TableDir, state: &Snapshot) -> Result<Written, Error> {
    if !state.other_actions.is_empty() {
        return Err(Error::Unsupported(format!(
            "{}: no checkpoint written: the log holds actions strata does not keep in one ({})",
            location.root().display(),
            state.other_actions.join(", ")
        )));
    }
    let rel = format!("{LOG_DIR}/{}", file_name(state.version));
    let bytes = encode(state, &location.root())?;
    // Another writer's checkpoint of this version stands (it is the same
    // state); `_last_checkpoint` gives the size of ours.
    match location.put_new(&rel, &bytes) {
        Ok(()) | Err(Error::Store(strata_store::Error::OutputExists { .. })) => {}
        Err(e) => return Err(e),
    }
    let size_in_bytes = bytes.len();
    let actions = 2 + state.txns.len() + state.files.len() + state.removed.len();
    let last = format!("{LOG_DIR}/{LAST_CHECKPOINT}");
    let newer = location
        .read(&last)?
        .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
        .and_then(|v| v["version"].as_u64())
        .is_some_and(|v| v > state.version);
    if !newer {
        let text = serde_json::json!({
            "version": state.version,
            "size": actions,
            "sizeInBytes": size_in_bytes,
            "numOfAddFiles": state.files.len(),
        })
        .to_string();
        location.put(&last, text.as_bytes())?;
    }
    Ok(Written {
        version: state.version,
        path: location.at(&rel),
        actions: actions as u64,
        files: state.files.len() as u64,
    })
}

/// The actions of the checkpoint `bytes` (read from `path`).
///
/// # Errors
/// [`Error::BadTable`] when it does not read as a checkpoint.
pub(crate) fn read(bytes: Vec<u8>, path: &Path) -> Result<Vec<LogLine>, Error> {
    let bad = |reason: String| Error::BadTable {
        path: path.to_path_buf(),
        reason: format!("not a Delta checkpoint: {reason}"),
    };
    let builder =
        strata_parquet::read::open_bytes(bytes::Bytes::from(bytes), ArrowReaderOptions::new())
            .map_err(|e| bad(e.to_string()))?;
    let mut reader = strata_parquet::read::build(builder).map_err(|e| bad(e.to_string()))?;
    let mut text = Vec::new();
    {
        // Explicit nulls keep a null partition value in its map.
        let mut w = arrow_json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow_json::writer::LineDelimited>(&mut text);
        while let Some(batch) =
            strata_parquet::read::next_batch(&mut reader).map_err(|e| bad(e.to_string()))?
        {
            w.write(&batch).map_err(|e| bad(e.to_string()))?;
        }
        w.finish().map_err(|e| bad(e.to_string()))?;
    }
    let text = String::from_utf8(text).map_err(|e| bad(e.to_string()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| bad(e.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::delta::log::{DeletionVector, Format};

    fn state() -> Snapshot {
        let add = |path: &str, flag: Option<&str>| Add {
            path: path.into(),
            partition_values: BTreeMap::from([("flag".into(), flag.map(str::to_string))]),
            size: 10,
            modification_time: 1_700_000_000_000,
            data_change: true,
            stats: Some(r#"{"numRecords":3}"#.into()),
            deletion_vector: flag.is_none().then(|| DeletionVector {
                storage_type: "u".into(),
                path_or_inline_dv: "vBn[lx{q8@P<9BNH/isA".into(),
                offset: Some(1),
                size_in_bytes: 36,
                cardinality: 2,
            }),
        };
        Snapshot {
            version: 10,
            protocol: Protocol::for_features(&["timestampNtz"]),
            meta: MetaData {
                id: "id-1".into(),
                name: None,
                description: None,
                format: Format {
                    provider: "parquet".into(),
                    options: BTreeMap::new(),
                },
                schema_string: r#"{"type":"struct","fields":[]}"#.into(),
                partition_columns: vec!["flag".into()],
                configuration: BTreeMap::from([("delta.checkpointInterval".into(), "5".into())]),
                created_time: Some(1),
            },
            files: BTreeMap::from([
                (
                    "flag=a/x.parquet".into(),
                    add("flag=a/x.parquet", Some("a")),
                ),
                (
                    "flag=__HIVE_DEFAULT_PARTITION__/y.parquet".into(),
                    add("flag=__HIVE_DEFAULT_PARTITION__/y.parquet", None),
                ),
            ]),
            removed: BTreeMap::from([(
                "old.parquet".into(),
                Remove {
                    path: "old.parquet".into(),
                    deletion_timestamp: Some(5),
                    data_change: true,
                    extended_file_metadata: Some(true),
                    partition_values: Some(BTreeMap::from([("flag".into(), None)])),
                    size: Some(10),
                    stats: Some(r#"{"numRecords":3}"#.into()),
                    deletion_vector: None,
                },
            )]),
            txns: BTreeMap::from([(
                "app".into(),
                Txn {
                    app_id: "app".into(),
                    version: 3,
                    last_updated: None,
                },
            )]),
            checkpoint: None,
            other_actions: Vec::new(),
        }
    }

    #[test]
    fn a_checkpoint_reads_back_as_the_state_it_was_written_from() {
        let dir = tempfile::tempdir().unwrap();
        let table = TableDir::local(dir.path()).unwrap();
        let s = state();
        assert_eq!(interval(&s.meta), 5);
        let w = write(&table, &s).unwrap();
        assert_eq!((w.version, w.actions, w.files), (10, 6, 2));
        let lines = read(std::fs::read(&w.path).unwrap(), &w.path).unwrap();
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0].protocol.as_ref(), Some(&s.protocol));
        assert_eq!(lines[1].meta_data.as_ref(), Some(&s.meta));
        assert_eq!(lines[2].txn.as_ref(), s.txns.get("app"));
        let adds: Vec<&Add> = lines.iter().filter_map(|l| l.add.as_ref()).collect();
        assert_eq!(adds, s.files.values().collect::<Vec<_>>());
        // The tombstone keeps all but its statistics.
        let tombstone = Remove {
            stats: None,
            ..s.removed["old.parquet"].clone()
        };
        assert_eq!(lines[5].remove.as_ref(), Some(&tombstone));
        assert!(lines.iter().all(|l| l.other.is_empty()));
        let last: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(LOG_DIR).join(LAST_CHECKPOINT)).unwrap(),
        )
        .unwrap();
        assert_eq!(last["version"], 10);
        assert_eq!(last["size"], 6);
        assert_eq!(last["numOfAddFiles"], 2);

        // An older checkpoint leaves `_last_checkpoint` at the newer one.
        let older = Snapshot {
            version: 5,
            ..state()
        };
        write(&table, &older).unwrap();
        let last: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(LOG_DIR).join(LAST_CHECKPOINT)).unwrap(),
        )
        .unwrap();
        assert_eq!(last["version"], 10);

        // A state with actions strata does not model gets no checkpoint.
        let other = Snapshot {
            version: 20,
            other_actions: vec!["domainMetadata".into()],
            ..state()
        };
        let e = write(&table, &other).unwrap_err().to_string();
        assert!(e.contains("domainMetadata"), "{e}");
        assert!(!dir.path().join(LOG_DIR).join(file_name(20)).exists());
    }

    #[test]
    fn a_file_that_is_not_a_checkpoint_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(file_name(10));
        let e = read(b"PAR1 not really".to_vec(), &p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a Delta checkpoint"), "{e}");
    }
}
