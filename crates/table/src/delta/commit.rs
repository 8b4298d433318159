//! One version of a Delta log committed: its actions as the lines of a
//! JSON entry, the entry claimed only if absent, and the checkpoint
//! written when the version is due one. Both writers, a new table or an
//! append (`delta::create`) and a change (`delta::change`), commit
//! through here.

use std::{collections::BTreeMap, path::PathBuf};

use serde::Serialize;

use super::{
    checkpoint,
    log::{Add, Cdc, LOG_DIR, MetaData, Protocol, Remove, log_file_name},
    replay::replay,
    schema::{Primitive, TableSchema},
    stats, values,
};
use crate::{Error, dir::TableDir, stats::FileFacts};

/// How many times a commit is tried again on top of a version another
/// writer committed first.
pub const COMMIT_RETRIES: u64 = 100;

/// What a commit committed.
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
    /// Data files removed.
    pub removed: usize,
    /// Change data files added (`cdc` actions).
    pub change_files: usize,
    /// The checkpoint written after the commit, when the version was due
    /// one (every `delta.checkpointInterval` versions, 10 by default).
    pub checkpoint: Option<checkpoint::Written>,
    /// Why a due checkpoint was not written (the commit stands: readers
    /// replay the log from the checkpoint before).
    pub checkpoint_error: Option<String>,
}

/// One line of a log entry: an action, under its name
/// (`{"add": {...}}`), its fields in the protocol's order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Action<'a> {
    /// What the commit did.
    CommitInfo(CommitInfo),
    /// The versions (and features) readers and writers need.
    Protocol(Protocol),
    /// The table's id, format, schema and partition columns.
    MetaData(MetaData),
    /// A data file.
    Add(&'a Add),
    /// A data file that leaves the table.
    Remove(&'a Remove),
    /// A change data file.
    Cdc(&'a Cdc),
}

/// A `commitInfo` action.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CommitInfo {
    pub(crate) timestamp: i64,
    pub(crate) operation: &'static str,
    /// The operation's settings, each one's value as text (`partitionBy`
    /// is a JSON array in a string).
    pub(crate) operation_parameters: BTreeMap<&'static str, String>,
    /// The version the commit read (a change's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) read_version: Option<u64>,
    /// The isolation its conflict checks give (a change's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) isolation_level: Option<&'static str>,
    pub(crate) is_blind_append: bool,
    /// Counts of what it did, each as text as Delta's writers keep them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) operation_metrics: BTreeMap<&'static str, String>,
    pub(crate) engine_info: &'static str,
}

/// The engine a `commitInfo` names.
pub(crate) const ENGINE: &str = concat!("strata/", env!("CARGO_PKG_VERSION"));

/// The lines of a log entry: one JSON action a line.
///
/// # Errors
/// [`Error::BadTable`] (naming `location`) when an action does not
/// serialise.
pub(crate) fn encode(location: &TableDir, lines: &[Action<'_>]) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    for line in lines {
        serde_json::to_writer(&mut body, line).map_err(|e| Error::BadTable {
            path: location.root(),
            reason: format!("cannot write the log entry: {e}"),
        })?;
        body.push(b'\n');
    }
    Ok(body)
}

/// The `add` of data file `rel` (relative to `location`) of a table of
/// `schema` partitioned by `typed`, whose footer gave `facts`.
///
/// # Errors
/// [`Error::BadTable`] when the path lacks a partition directory or a
/// value does not read as its column's type; IO or store errors when
/// the file is not there.
pub(crate) fn add_action(
    location: &TableDir,
    rel: &str,
    facts: &FileFacts,
    schema: &TableSchema,
    typed: &[(String, Primitive)],
    data_change: bool,
) -> Result<Add, Error> {
    Ok(Add {
        path: values::path_uri(rel),
        partition_values: values::partition_values(rel, typed)?,
        size: i64::try_from(facts.bytes).unwrap_or(i64::MAX),
        modification_time: location.modified_ms(rel)?,
        data_change,
        stats: Some(stats::file_stats(schema, facts)),
        deletion_vector: None,
    })
}

/// Held while this process writes a local table's log: a local file is
/// written to a temporary named for the target and the process
/// (`strata_store::output`), which two threads writing one target would
/// share. Writers in other processes, and object stores' conditional
/// puts, need no lock.
static LOCAL_LOG_WRITES: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The lock on this process's writes to `location`'s log, when it is
/// local.
pub(crate) fn log_lock(location: &TableDir) -> Option<std::sync::MutexGuard<'static, ()>> {
    (!location.is_remote()).then(|| {
        LOCAL_LOG_WRITES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    })
}

/// Writes `body` as the log entry of `version` only if no entry of that
/// version exists: its path, or `None` when another writer took the
/// version first.
///
/// # Errors
/// IO or store errors.
pub(crate) fn claim(
    location: &TableDir,
    version: u64,
    body: &[u8],
) -> Result<Option<PathBuf>, Error> {
    let rel = format!("{LOG_DIR}/{}", log_file_name(version));
    let _lock = log_lock(location);
    match location.put_new(&rel, body) {
        Ok(()) => Ok(Some(location.at(&rel))),
        Err(Error::Store(strata_store::Error::OutputExists { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The checkpoint of `version` when it is due one (a multiple of the
/// table's interval, `meta`'s), written; or why it was not.
pub(crate) fn checkpoint_when_due(
    location: &TableDir,
    version: u64,
    meta: &MetaData,
) -> (Option<checkpoint::Written>, Option<String>) {
    if version == 0 || !version.is_multiple_of(checkpoint::interval(meta)) {
        return (None, None);
    }
    match write_checkpoint(location, version) {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e.to_string())),
    }
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
    let _lock = log_lock(location);
    checkpoint::write(location, &state)
}
