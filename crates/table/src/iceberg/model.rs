//! What a commit is given and gives back: the new data files and their
//! table's settings, a change's removed files and deleted rows, the
//! version committed, a table's current one, and the files its current
//! snapshot holds.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use serde_json::Value;
use strata_layout::PartitionField;

use super::{schema::TableSchema, values::PartValue};
use crate::stats::{Bound, FileFacts};

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

/// The rows of one data file a change deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PositionDeletes {
    /// The data file, as the table's metadata records it
    /// ([`LiveFile::path`]), or relative to the table's root.
    pub file: String,
    /// The positions of the rows (0 is the file's first row), in any
    /// order; a position given twice is deleted once.
    pub positions: Vec<u64>,
}

/// A change of a table's rows, committed as one snapshot by
/// [`super::commit_change`]: data files added, data files removed, rows
/// of data files deleted by position.
///
/// A copy-on-write update removes a file and adds its rewritten version;
/// a merge-on-read delete names rows in `position_deletes`; compaction
/// removes files and adds their rows rewritten, with `replace` set.
pub struct Change<'a> {
    /// The table's settings, and in `files` the data files added (each
    /// one's path relative to the table's root and its facts).
    pub table: NewTable<'a>,
    /// Data files removed: as the table's metadata records them
    /// ([`LiveFile::path`]), or relative to the table's root.
    pub removed: Vec<String>,
    /// Rows deleted, per data file.
    pub position_deletes: Vec<PositionDeletes>,
    /// Rows deleted by key: each batch becomes one equality delete file,
    /// its columns key columns of the table (by name, at the top level).
    /// A row whose values equal a row of a batch is deleted from every
    /// data file committed before this change (an equality delete applies
    /// to data of lower sequence numbers), whichever file holds it; rows
    /// this change adds are not. For unpartitioned tables.
    pub equality_deletes: Vec<arrow_array::RecordBatch>,
    /// The change rewrites files without changing the table's rows
    /// (compaction): the snapshot's operation is `replace`. Such a change
    /// deletes no rows, and its added files hold as many rows as the
    /// removed ones still do.
    pub replace: bool,
}

/// What a file of a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Content {
    /// Rows of the table.
    Data,
    /// Position deletes: (`file_path`, `pos`) of rows deleted.
    PositionDeletes,
    /// Equality deletes: the values of key columns whose rows are
    /// deleted.
    EqualityDeletes,
}

impl Content {
    /// The content's code in a manifest (`data_file.content`).
    pub fn code(self) -> i32 {
        match self {
            Content::Data => 0,
            Content::PositionDeletes => 1,
            Content::EqualityDeletes => 2,
        }
    }

    /// The content of code `code`.
    pub fn of_code(code: i32) -> Option<Content> {
        match code {
            0 => Some(Content::Data),
            1 => Some(Content::PositionDeletes),
            2 => Some(Content::EqualityDeletes),
            _ => None,
        }
    }
}

/// A live file of a snapshot: an entry of one of its manifests whose
/// status is added or existing (a deleted entry is not live).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveFile {
    /// Its location, exactly as the manifest records it.
    pub path: String,
    /// Data, position deletes or equality deletes.
    pub content: Content,
    /// Its partition: each partition field's name and value, in the
    /// manifest's order (empty for an unpartitioned table).
    pub partition: Vec<(String, PartValue)>,
    /// The partition spec it was written with.
    pub spec_id: i32,
    /// Rows (of a delete file: deletes) it holds.
    pub record_count: u64,
    /// Its size in bytes.
    pub file_size: u64,
    /// Its data sequence number: a delete file applies to data files of
    /// a lower one (position deletes: lower or equal).
    pub sequence_number: i64,
    /// The sequence number of the snapshot that added the file.
    pub file_sequence_number: i64,
    /// The snapshot that added it.
    pub snapshot_id: i64,
    /// Per column id, the smallest value (primitive columns whose bound
    /// decodes; a position delete file's `file_path` and `pos` too).
    pub lower: BTreeMap<i32, Bound>,
    /// Per column id, the largest value.
    pub upper: BTreeMap<i32, Bound>,
    /// Per column id, its nulls.
    pub null_counts: BTreeMap<i32, u64>,
    /// Of an equality delete file, the ids of its key columns.
    pub equality_ids: Vec<i32>,
    /// The sort order its rows are in, when recorded.
    pub sort_order_id: Option<i32>,
    /// The manifest it was read from.
    pub manifest: String,
}

impl LiveFile {
    /// The one data file a position delete file names, when its
    /// `file_path` bounds are equal (every delete file strata writes).
    pub fn referenced_data_file(&self) -> Option<&str> {
        if self.content != Content::PositionDeletes {
            return None;
        }
        match (
            self.lower.get(&DELETE_FILE_PATH_ID),
            self.upper.get(&DELETE_FILE_PATH_ID),
        ) {
            (Some(Bound::Bytes(lo)), Some(Bound::Bytes(hi))) if lo == hi => {
                std::str::from_utf8(lo).ok()
            }
            _ => None,
        }
    }
}

/// The field id of a position delete file's `file_path` column.
pub const DELETE_FILE_PATH_ID: i32 = 2_147_483_546;
/// The field id of a position delete file's `pos` column.
pub const DELETE_POS_ID: i32 = 2_147_483_545;

/// What [`super::commit`] and [`super::commit_change`] committed.
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
    /// Rows the table's data files hold at this snapshot (its
    /// `total-records`: rows that delete files delete are counted).
    pub total_rows: u64,
    /// Versions another writer committed first, built on top of.
    pub retries: usize,
    /// The snapshot's operation: `append`, `delete`, `overwrite` or
    /// `replace`.
    pub operation: &'static str,
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
