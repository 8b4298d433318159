//! A Delta log's actions, and the state they add up to.
//!
//! The same action types read a log entry's lines and a checkpoint's rows
//! (a checkpoint row is the action's JSON object under its name), so the
//! two cannot disagree on a field.

use std::{collections::BTreeMap, path::Path};

use serde::{Deserialize, Serialize};

use crate::Error;

/// The log directory under a table's root.
pub const LOG_DIR: &str = "_delta_log";

/// The name of the log entry of `version` (20 digits, `.json`).
pub fn log_file_name(version: u64) -> String {
    format!("{version:020}.json")
}

/// A `protocol` action: the versions (and features) readers and writers
/// need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Protocol {
    /// The lowest reader version.
    pub min_reader_version: i32,
    /// The lowest writer version.
    pub min_writer_version: i32,
    /// The reader features, with reader version 3 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_features: Option<Vec<String>>,
    /// The writer features, with writer version 7 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_features: Option<Vec<String>>,
}

/// The table features strata writes and keeps: a table that needs any
/// other is not written to (its writer would have to honour it).
/// `appendOnly` is honoured (no change removes data from a table whose
/// `delta.appendOnly` is `true`), `changeDataFeed` too (a change that
/// rewrites rows of a table whose `delta.enableChangeDataFeed` is `true`
/// carries its change data files), and `deletionVectors` (a logical file
/// is its path and its deletion vector, whose rows are not the table's;
/// new ones only where `delta.enableDeletionVectors` is `true`).
pub const KNOWN_FEATURES: &[&str] = &[
    "appendOnly",
    "changeDataFeed",
    "deletionVectors",
    "timestampNtz",
];

/// The writer-only table features among those Delta defines, each with
/// the legacy writer version that brings it without table features
/// (`None`: only through writer version 7). Every other feature binds
/// readers too.
const WRITER_ONLY_FEATURES: &[(&str, Option<i32>)] = &[
    ("appendOnly", Some(2)),
    ("invariants", Some(2)),
    ("checkConstraints", Some(3)),
    ("changeDataFeed", Some(4)),
    ("generatedColumns", Some(4)),
    ("identityColumns", Some(6)),
    ("allowColumnDefaults", None),
    ("rowTracking", None),
    ("domainMetadata", None),
    ("icebergCompatV1", None),
    ("icebergCompatV2", None),
    ("clustering", None),
    ("inCommitTimestamp", None),
];

impl Protocol {
    /// The lowest protocol a table of `features` needs. With only
    /// writer-only features that a legacy writer version brings
    /// (`appendOnly`, `changeDataFeed`, ...), reader 1 and the highest of
    /// their writer versions, at least 2 (what plain tables get from
    /// Delta's own writers); with a feature that binds readers
    /// (`timestampNtz`), reader 3 and writer 7 with the reader features
    /// in `readerFeatures` and every feature in `writerFeatures`; with
    /// writer-only features of writer 7 only, reader 1 and writer 7
    /// naming them. The lists are sorted.
    pub fn for_features(features: &[&str]) -> Protocol {
        let writer_only = |f: &str| WRITER_ONLY_FEATURES.iter().find(|(n, _)| *n == f);
        let mut all: Vec<String> = features.iter().map(|f| (*f).to_string()).collect();
        all.sort_unstable();
        all.dedup();
        let readers: Vec<String> = all
            .iter()
            .filter(|f| writer_only(f).is_none())
            .cloned()
            .collect();
        let legacy: Option<Vec<i32>> = all
            .iter()
            .map(|f| writer_only(f).and_then(|(_, v)| *v))
            .collect();
        match legacy {
            Some(versions) => Protocol {
                min_reader_version: 1,
                min_writer_version: versions.into_iter().fold(2, i32::max),
                reader_features: None,
                writer_features: None,
            },
            None => Protocol {
                min_reader_version: if readers.is_empty() { 1 } else { 3 },
                min_writer_version: 7,
                reader_features: (!readers.is_empty()).then_some(readers),
                writer_features: Some(all),
            },
        }
    }

    /// Whether the table supports writer feature `feature`: at writer
    /// version 7 when `writerFeatures` names it, below when the legacy
    /// version that brings it is reached.
    pub fn supports(&self, feature: &str) -> bool {
        if self.min_writer_version >= 7 {
            return self.writer_features.iter().flatten().any(|f| f == feature);
        }
        WRITER_ONLY_FEATURES
            .iter()
            .find(|(n, _)| *n == feature)
            .and_then(|(_, v)| *v)
            .is_some_and(|v| self.min_writer_version >= v)
    }

    /// Checks that strata may write to a table of this protocol and
    /// metadata `meta`: writer version 4 or below (5 and 6 bring column
    /// mapping and identity columns), or 7 with [`KNOWN_FEATURES`] only;
    /// and none of the legacy versions' features in use that strata
    /// does not honour: column invariants (writer 2 and up), `CHECK`
    /// constraints and checkpoint statistics as structs (3 and up),
    /// generated columns (4).
    ///
    /// # Errors
    /// [`Error::Unsupported`] naming what strata would have to honour.
    pub fn check_writable(&self, table: &Path, meta: &MetaData) -> Result<(), Error> {
        let mut unknown: Vec<&str> = self
            .writer_features
            .iter()
            .chain(&self.reader_features)
            .flatten()
            .map(String::as_str)
            .filter(|f| !KNOWN_FEATURES.contains(f))
            .collect();
        unknown.sort_unstable();
        unknown.dedup();
        let ok = match self.min_writer_version {
            ..=4 => true,
            7 => unknown.is_empty(),
            _ => false,
        };
        if !(ok && self.min_reader_version <= 3) {
            return Err(Error::Unsupported(format!(
                "{}: the table needs reader version {} and writer version {}{}; strata writes \
                 only to tables of writer version 4 or below, or 7 with the features [{}]",
                table.display(),
                self.min_reader_version,
                self.min_writer_version,
                if unknown.is_empty() {
                    String::new()
                } else {
                    format!(" with the features [{}]", unknown.join(", "))
                },
                KNOWN_FEATURES.join(", ")
            )));
        }
        let legacy = self.min_writer_version < 7;
        let config = |key: &str| meta.configuration.get(key).map(|v| v.to_ascii_lowercase());
        let in_use = [
            (
                legacy && meta.schema_string.contains("\"delta.invariants\""),
                "column invariants (`delta.invariants`)",
            ),
            (
                legacy
                    && self.min_writer_version >= 3
                    && meta
                        .configuration
                        .keys()
                        .any(|k| k.starts_with("delta.constraints.")),
                "CHECK constraints (`delta.constraints.*`)",
            ),
            (
                legacy
                    && self.min_writer_version >= 3
                    && (config("delta.checkpoint.writeStatsAsStruct").as_deref() == Some("true")
                        || config("delta.checkpoint.writeStatsAsJson").as_deref() == Some("false")),
                "checkpoint statistics as structs (`delta.checkpoint.writeStatsAs*`)",
            ),
            (
                legacy
                    && self.min_writer_version >= 4
                    && meta
                        .schema_string
                        .contains("\"delta.generationExpression\""),
                "generated columns (`delta.generationExpression`)",
            ),
        ];
        match in_use.iter().find(|(used, _)| *used) {
            Some((_, what)) => Err(Error::Unsupported(format!(
                "{}: the table uses {what}, which strata does not honour",
                table.display()
            ))),
            None => Ok(()),
        }
    }
}

/// A `metaData` action: the table's id, format, schema and partition
/// columns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetaData {
    /// The table's id.
    pub id: String,
    /// A user-facing name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A user-facing description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The data files' format.
    pub format: Format,
    /// The schema, as Delta's schema JSON.
    pub schema_string: String,
    /// The partition columns, outermost first.
    pub partition_columns: Vec<String>,
    /// Table properties (`delta.checkpointInterval`, ...).
    #[serde(default)]
    pub configuration: BTreeMap<String, String>,
    /// When the table was made, in milliseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_time: Option<i64>,
}

/// The data files' format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Format {
    /// `parquet`.
    pub provider: String,
    /// The format's options.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

/// An `add` action: a data file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Add {
    /// The file's path relative to the table, as a URI.
    pub path: String,
    /// Its partition values, as text (`None` for null).
    pub partition_values: BTreeMap<String, Option<String>>,
    /// Its size in bytes.
    pub size: i64,
    /// When it was written, in milliseconds since the epoch.
    pub modification_time: i64,
    /// True when the commit changed the table's data.
    pub data_change: bool,
    /// Its statistics, as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<String>,
    /// The rows of the file that are not the table's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_vector: Option<DeletionVector>,
}

impl Add {
    /// The rows of the logical file: its statistics' `numRecords` less
    /// its deletion vector's; `None` without statistics.
    pub fn rows(&self) -> Option<u64> {
        let stats: serde_json::Value = serde_json::from_str(self.stats.as_deref()?).ok()?;
        let deleted = self
            .deletion_vector
            .as_ref()
            .map_or(0, |dv| u64::try_from(dv.cardinality).unwrap_or(0));
        Some(stats["numRecords"].as_u64()?.saturating_sub(deleted))
    }
}

/// A deletion vector's descriptor: where the set of a data file's
/// deleted rows (their indexes in the file) is, and how many there are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletionVector {
    /// `u`: in a file whose path derives from a UUID, `i`: inline, `p`:
    /// in a file at an absolute path.
    pub storage_type: String,
    /// `u`: an optional prefix and the UUID in Z85 (20 characters);
    /// `i`: the serialised rows in Z85; `p`: the file's path.
    pub path_or_inline_dv: String,
    /// Where the vector starts in its file (its size field); absent
    /// inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i32>,
    /// The serialised rows' size in bytes.
    pub size_in_bytes: i32,
    /// How many rows it deletes.
    pub cardinality: i64,
}

impl DeletionVector {
    /// The id that tells this vector from a file's others:
    /// `<storageType><pathOrInlineDv>`, then `@<offset>` when there is
    /// one.
    pub fn unique_id(&self) -> String {
        match self.offset {
            Some(o) => format!("{}{}@{o}", self.storage_type, self.path_or_inline_dv),
            None => format!("{}{}", self.storage_type, self.path_or_inline_dv),
        }
    }
}

/// A `remove` action: a data file that left the table (kept in
/// checkpoints as a tombstone). strata writes the extended form
/// (`extendedFileMetadata`: the file's partition values and size, and
/// its statistics when its `add` had them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remove {
    /// The file's path relative to the table, as a URI.
    pub path: String,
    /// When it was removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<i64>,
    /// True when the commit changed the table's data (false for a
    /// rewrite that keeps the rows, as compaction's).
    pub data_change: bool,
    /// True when `partition_values` and `size` are there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_file_metadata: Option<bool>,
    /// The file's partition values, as its `add` had them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_values: Option<BTreeMap<String, Option<String>>>,
    /// The file's size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    /// The file's statistics, as its `add` had them (log entries only:
    /// checkpoints leave them out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<String>,
    /// The deletion vector of the logical file removed, as its `add` had
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_vector: Option<DeletionVector>,
}

/// A `cdc` action: a change data file of the version it is in (rows
/// with their `_change_type`), read by change data readers instead of
/// the version's `add`s and `remove`s. It changes no state: a
/// checkpoint does not hold it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cdc {
    /// The file's path relative to the table (under `_change_data/`), as
    /// a URI.
    pub path: String,
    /// Its partition values, as text (`None` for null).
    pub partition_values: BTreeMap<String, Option<String>>,
    /// Its size in bytes.
    pub size: i64,
    /// Always false: change data files do not change the table's data.
    pub data_change: bool,
}

/// A `txn` action: an application's last committed transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Txn {
    /// The application.
    pub app_id: String,
    /// Its transaction version.
    pub version: i64,
    /// When, in milliseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<i64>,
}

/// One line of a log entry, or one row of a checkpoint: the action under
/// its name. Any other action (`domainMetadata`, ...) lands in `other`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LogLine {
    pub(crate) protocol: Option<Protocol>,
    pub(crate) meta_data: Option<MetaData>,
    pub(crate) add: Option<Add>,
    pub(crate) remove: Option<Remove>,
    pub(crate) txn: Option<Txn>,
    /// A change data file: part of its version only, not of the state.
    pub(crate) cdc: Option<Cdc>,
    /// Read past: what a commit did changes no state.
    #[serde(rename = "commitInfo")]
    _commit_info: Option<serde::de::IgnoredAny>,
    #[serde(flatten)]
    pub(crate) other: BTreeMap<String, serde_json::Value>,
}

/// A table's state at one version.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The version.
    pub version: u64,
    /// The last `protocol`.
    pub protocol: Protocol,
    /// The last `metaData`.
    pub meta: MetaData,
    /// The live data files, by path.
    pub files: BTreeMap<String, Add>,
    /// Files removed, by path.
    pub removed: BTreeMap<String, Remove>,
    /// Each application's last transaction.
    pub txns: BTreeMap<String, Txn>,
    /// The checkpoint the replay started from.
    pub checkpoint: Option<u64>,
    /// Actions of other kinds met in the replay (a checkpoint of this
    /// state would lose them, so none is written).
    pub other_actions: Vec<String>,
}

impl Snapshot {
    /// Applies one action (a `cdc` or `commitInfo` changes nothing). A
    /// logical file is a path and its deletion vector: a `remove` of a
    /// path whose live file has another vector leaves it (the entry that
    /// swaps a file's vector removes the old one and adds the new one, in
    /// either order).
    pub(crate) fn apply(&mut self, line: LogLine) {
        if let Some(p) = line.protocol {
            self.protocol = p;
        }
        if let Some(m) = line.meta_data {
            self.meta = m;
        }
        if let Some(a) = line.add {
            self.removed.remove(&a.path);
            self.files.insert(a.path.clone(), a);
        }
        if let Some(r) = line.remove {
            let id = |dv: &Option<DeletionVector>| dv.as_ref().map(DeletionVector::unique_id);
            let same = self
                .files
                .get(&r.path)
                .is_none_or(|a| id(&a.deletion_vector) == id(&r.deletion_vector));
            if same {
                self.files.remove(&r.path);
                self.removed.insert(r.path.clone(), r);
            }
        }
        if let Some(t) = line.txn {
            self.txns.insert(t.app_id.clone(), t);
        }
        for name in line.other.into_keys() {
            if !self.other_actions.contains(&name) {
                self.other_actions.push(name);
            }
        }
    }

    /// Rows in the live files, from their statistics less the rows of
    /// their deletion vectors (files without statistics count none).
    pub fn rows(&self) -> u64 {
        self.files.values().filter_map(Add::rows).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(configuration: &[(&str, &str)], schema: &str) -> MetaData {
        MetaData {
            id: "t".into(),
            name: None,
            description: None,
            format: Format {
                provider: "parquet".into(),
                options: BTreeMap::new(),
            },
            schema_string: schema.into(),
            partition_columns: Vec::new(),
            configuration: configuration
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            created_time: None,
        }
    }

    #[test]
    fn protocols_are_the_lowest_the_features_need() {
        let p = Protocol::for_features(&[]);
        assert_eq!((p.min_reader_version, p.min_writer_version), (1, 2));
        let p = Protocol::for_features(&["changeDataFeed"]);
        assert_eq!((p.min_reader_version, p.min_writer_version), (1, 4));
        assert!(p.reader_features.is_none() && p.writer_features.is_none());
        assert!(p.supports("changeDataFeed") && p.supports("appendOnly"));
        assert!(!Protocol::for_features(&[]).supports("changeDataFeed"));
        let p = Protocol::for_features(&["timestampNtz", "changeDataFeed", "timestampNtz"]);
        assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
        assert_eq!(p.reader_features, Some(vec!["timestampNtz".to_string()]));
        assert_eq!(
            p.writer_features,
            Some(vec![
                "changeDataFeed".to_string(),
                "timestampNtz".to_string()
            ])
        );
        assert!(p.supports("changeDataFeed") && !p.supports("appendOnly"));
        // A writer-only feature of writer 7 alone: reader 1.
        let p = Protocol::for_features(&["domainMetadata"]);
        assert_eq!((p.min_reader_version, p.min_writer_version), (1, 7));
        assert!(p.reader_features.is_none());
    }

    #[test]
    fn unknown_writer_features_and_versions_are_refused() {
        let p = Path::new("t");
        let plain = meta(&[], "{}");
        assert!(
            Protocol::for_features(&[])
                .check_writable(p, &plain)
                .is_ok()
        );
        assert!(
            Protocol::for_features(&["timestampNtz", "changeDataFeed"])
                .check_writable(p, &plain)
                .is_ok()
        );
        let cm = Protocol::for_features(&["columnMapping", "deletionVectors", "timestampNtz"]);
        let e = cm.check_writable(p, &plain).unwrap_err().to_string();
        assert!(e.contains("with the features [columnMapping]"), "{e}");
        let legacy = |w: i32| Protocol {
            min_reader_version: 1,
            min_writer_version: w,
            reader_features: None,
            writer_features: None,
        };
        assert!(legacy(4).check_writable(p, &plain).is_ok());
        let e = legacy(5).check_writable(p, &plain).unwrap_err().to_string();
        assert!(e.contains("writer version 5"), "{e}");
        // Features of the legacy versions that strata does not honour.
        for (w, m, what) in [
            (
                4,
                meta(&[("delta.constraints.positive", "id > 0")], "{}"),
                "CHECK constraints",
            ),
            (
                3,
                meta(&[("delta.checkpoint.writeStatsAsStruct", "TRUE")], "{}"),
                "as structs",
            ),
            (
                4,
                meta(&[], r#"{"metadata":{"delta.generationExpression":"1"}}"#),
                "generated columns",
            ),
            (
                2,
                meta(&[], r#"{"metadata":{"delta.invariants":"x"}}"#),
                "invariants",
            ),
        ] {
            let e = legacy(w).check_writable(p, &m).unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        }
        // Constraints at writer 2 are not the writer's to honour.
        let m = meta(&[("delta.constraints.positive", "id > 0")], "{}");
        assert!(legacy(2).check_writable(p, &m).is_ok());
    }

    #[test]
    fn a_file_whose_deletion_vector_changes_stays_live_in_either_order() {
        let dv = |n: i32| DeletionVector {
            storage_type: "u".into(),
            path_or_inline_dv: "vBn[lx{q8@P<9BNH/isA".into(),
            offset: Some(n),
            size_in_bytes: 36,
            cardinality: 2,
        };
        let add = |v: Option<DeletionVector>| Add {
            path: "f.parquet".into(),
            partition_values: BTreeMap::new(),
            size: 10,
            modification_time: 1,
            data_change: true,
            stats: Some(r#"{"numRecords":10}"#.into()),
            deletion_vector: v,
        };
        let remove = |v: Option<DeletionVector>| Remove {
            path: "f.parquet".into(),
            deletion_timestamp: None,
            data_change: true,
            extended_file_metadata: None,
            partition_values: None,
            size: None,
            stats: None,
            deletion_vector: v,
        };
        let line = |a: Option<Add>, r: Option<Remove>| LogLine {
            add: a,
            remove: r,
            ..LogLine::default()
        };
        for add_first in [true, false] {
            let mut s = Snapshot {
                version: 0,
                protocol: Protocol::for_features(&["deletionVectors"]),
                meta: meta(&[], "{}"),
                files: BTreeMap::new(),
                removed: BTreeMap::new(),
                txns: BTreeMap::new(),
                checkpoint: None,
                other_actions: Vec::new(),
            };
            s.apply(line(Some(add(Some(dv(1)))), None));
            assert_eq!(s.rows(), 8);
            let swap = [
                line(Some(add(Some(dv(2)))), None),
                line(None, Some(remove(Some(dv(1))))),
            ];
            let [a, r] = swap;
            if add_first {
                s.apply(a);
                s.apply(r);
            } else {
                s.apply(r);
                s.apply(a);
            }
            assert_eq!(s.files["f.parquet"].deletion_vector, Some(dv(2)));
            // A remove of the file as it is now removes it.
            s.apply(line(None, Some(remove(Some(dv(2))))));
            assert!(s.files.is_empty());
        }
    }
}
