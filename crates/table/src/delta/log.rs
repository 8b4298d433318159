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
/// other is not appended to (its writer would have to honour it).
pub const KNOWN_FEATURES: &[&str] = &["timestampNtz"];

impl Protocol {
    /// The protocol a table of `features` needs: reader 1 and writer 2
    /// (what plain tables get from Delta's own writers), or the
    /// table-features versions 3 and 7 naming them.
    pub fn for_features(features: &[&str]) -> Protocol {
        if features.is_empty() {
            Protocol {
                min_reader_version: 1,
                min_writer_version: 2,
                reader_features: None,
                writer_features: None,
            }
        } else {
            let names: Vec<String> = features.iter().map(|f| (*f).to_string()).collect();
            Protocol {
                min_reader_version: 3,
                min_writer_version: 7,
                reader_features: Some(names.clone()),
                writer_features: Some(names),
            }
        }
    }

    /// Checks that strata may append to a table of this protocol: writer
    /// version 2 or below (version 3 to 6 bring invariants, constraints,
    /// generated and identity columns, column mapping), or 7 with known
    /// features only.
    ///
    /// # Errors
    /// [`Error::Unsupported`] naming what strata would have to honour.
    pub fn check_writable(&self, table: &Path) -> Result<(), Error> {
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
            ..=2 => true,
            7 => unknown.is_empty(),
            _ => false,
        };
        if ok && self.min_reader_version <= 3 {
            return Ok(());
        }
        Err(Error::Unsupported(format!(
            "{}: the table needs reader version {} and writer version {}{}; strata appends only \
             to tables of writer version 2, or 7 with the features [{}]",
            table.display(),
            self.min_reader_version,
            self.min_writer_version,
            if unknown.is_empty() {
                String::new()
            } else {
                format!(" with the features [{}]", unknown.join(", "))
            },
            KNOWN_FEATURES.join(", ")
        )))
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
}

/// A `remove` action: a data file that left the table (kept in
/// checkpoints as a tombstone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remove {
    /// The file's path relative to the table, as a URI.
    pub path: String,
    /// When it was removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<i64>,
    /// True when the commit changed the table's data.
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
/// its name. Any other action (`cdc`, `domainMetadata`, ...) lands in
/// `other`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LogLine {
    pub(crate) protocol: Option<Protocol>,
    pub(crate) meta_data: Option<MetaData>,
    pub(crate) add: Option<Add>,
    pub(crate) remove: Option<Remove>,
    pub(crate) txn: Option<Txn>,
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
    /// Applies one action.
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
            self.files.remove(&r.path);
            self.removed.insert(r.path.clone(), r);
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

    /// Rows in the live files, from their statistics (files without
    /// statistics count none).
    pub fn rows(&self) -> u64 {
        self.files
            .values()
            .filter_map(|a| {
                let stats: serde_json::Value = serde_json::from_str(a.stats.as_deref()?).ok()?;
                stats["numRecords"].as_u64()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_writer_features_and_versions_are_refused() {
        let p = Path::new("t");
        assert!(Protocol::for_features(&[]).check_writable(p).is_ok());
        assert!(
            Protocol::for_features(&["timestampNtz"])
                .check_writable(p)
                .is_ok()
        );
        let dv = Protocol::for_features(&["deletionVectors", "timestampNtz"]);
        let e = dv.check_writable(p).unwrap_err().to_string();
        assert!(e.contains("[deletionVectors]"), "{e}");
        let v4 = Protocol {
            min_reader_version: 1,
            min_writer_version: 4,
            reader_features: None,
            writer_features: None,
        };
        let e = v4.check_writable(p).unwrap_err().to_string();
        assert!(e.contains("writer version 4"), "{e}");
    }
}
