//! What a commit is given and gives back: the new data files and their
//! table's settings, the version committed, and a table's current one.

use std::path::{Path, PathBuf};

use serde_json::Value;
use strata_layout::PartitionField;

use super::schema::TableSchema;
use crate::stats::FileFacts;

/// A sort key of the table's sort order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SortField {
    /// The column, nested fields by their dotted path.
    pub column: String,
    /// Descending.
    pub descending: bool,
    /// Nulls first.
    pub nulls_first: bool,
}

/// Data files to commit to a table: its schema, layout, properties and
/// the files.
pub struct NewTable<'a> {
    /// The table's root: a local directory or an object-store prefix.
    pub location: &'a crate::dir::TableDir,
    /// Its schema (the one the data files were written with).
    pub schema: &'a TableSchema,
    /// The Arrow schema the partition sources are columns of.
    pub arrow: &'a arrow_schema::Schema,
    /// Partition fields, outermost first.
    pub partition: &'a [PartitionField],
    /// The sort order.
    pub sort: &'a [SortField],
    /// Table properties (of a new table; an existing table keeps its own).
    pub properties: std::collections::BTreeMap<String, String>,
    /// The data files: each one's path relative to `location` and its
    /// facts.
    pub files: &'a [(String, FileFacts)],
}

/// What [`super::commit`] committed.
#[derive(Debug, Clone)]
pub struct Committed {
    /// The metadata file of the new version.
    pub metadata: PathBuf,
    /// The version's number (`vN.metadata.json`).
    pub version: u64,
    /// The snapshot's id.
    pub snapshot_id: i64,
    /// Rows the snapshot added.
    pub rows: u64,
    /// Rows in the table at this snapshot.
    pub total_rows: u64,
    /// Versions another writer committed first, built on top of.
    pub retries: usize,
}

/// A table's current version.
#[derive(Debug, Clone)]
pub struct Current {
    /// Its number.
    pub version: u64,
    /// Its metadata file.
    pub path: PathBuf,
    /// The metadata.
    pub metadata: Value,
}

/// The text of a path in metadata (absolute, `/` separated).
pub(crate) fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}
