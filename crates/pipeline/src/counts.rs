//! What a run wrote: each file ([`FileSummary`]) and the counts of each
//! top-level column ([`ColumnCounts`]), kept as batches are generated.

use std::path::PathBuf;

use arrow_array::{Array, RecordBatch, cast::AsArray};
use arrow_schema::SchemaRef;
use serde::Serialize;

/// One written file.
#[derive(Debug, Clone, Serialize)]
pub struct FileSummary {
    /// Final path.
    pub path: PathBuf,
    /// The index of its first row in the whole dataset.
    pub first_row: u64,
    /// Rows in the file.
    pub rows: u64,
    /// File size in bytes.
    pub bytes: u64,
    /// Row groups (Parquet) or record batches (IPC).
    pub groups: usize,
}

/// Counts of one top-level column over the whole run, for checking the
/// output against any reader.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ColumnCounts {
    /// Column name.
    pub name: String,
    /// Null values.
    pub nulls: u64,
    /// For list columns: entries in all lists together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_values: Option<u64>,
}

impl ColumnCounts {
    pub(crate) fn add(&mut self, other: &ColumnCounts) {
        self.nulls += other.nulls;
        if let Some(v) = other.list_values {
            *self.list_values.get_or_insert(0) += v;
        }
    }
}

pub(crate) fn count_batch(batch: &RecordBatch, counts: &mut [ColumnCounts]) {
    for (c, col) in counts.iter_mut().zip(batch.columns()) {
        c.nulls += col.null_count() as u64;
        if let Some(list) = col.as_list_opt::<i32>() {
            let o = list.value_offsets();
            let n = (o[o.len() - 1] - o[0]) as u64;
            *c.list_values.get_or_insert(0) += n;
        }
    }
}

/// Zero counts of each top-level column of `schema`.
pub(crate) fn empty_counts(schema: &SchemaRef) -> Vec<ColumnCounts> {
    schema
        .fields()
        .iter()
        .map(|f| ColumnCounts {
            name: f.name().clone(),
            nulls: 0,
            list_values: matches!(f.data_type(), arrow_schema::DataType::List(_)).then_some(0),
        })
        .collect()
}
