//! Change data files: the rows a version changed, each with its
//! `_change_type` (`insert`, `update_preimage`, `update_postimage`,
//! `delete`), read by change data readers (`load_cdf`,
//! `table_changes`) instead of the version's `add`s and `remove`s.
//!
//! A change data file is Parquet under `_change_data/`, in the partition
//! directories of the rows it holds (`_change_data/flag=a/cdc-....parquet`)
//! as Delta's writers lay them out: like a data file it holds the table's
//! columns except the partition columns (their values are the `cdc`
//! action's `partitionValues`, read from those directories), plus the
//! string column `_change_type`. The table's version names it in a `cdc`
//! action (path, partition values, size, `dataChange` false).
//!
//! [`write()`] writes one from Arrow batches through strata's Parquet
//! writer (`strata_parquet::writer::ParquetWriter`, the one encoding
//! path), created only if absent, and gives the [`CdcFile`] a
//! [`Change`](super::change::Change) takes; a caller that writes its own
//! gives its path and size. [`with_change_type`] adds the column to a
//! batch of the table's rows. The batches' columns are the caller's to
//! match with the table's: the commit reads no change data file.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, StringArray, cast::AsArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::file::properties::WriterProperties;
use strata_parquet::writer::ParquetWriter;

use crate::{Error, dir::TableDir};

/// The directory of change data files, under the table's root.
pub const CHANGE_DATA_DIR: &str = "_change_data";

/// The column that gives each row's kind of change.
pub const CHANGE_TYPE: &str = "_change_type";

/// What happened to a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    /// A row inserted (`insert`).
    Insert,
    /// A row as it was before an update (`update_preimage`).
    UpdatePreimage,
    /// A row as an update left it (`update_postimage`).
    UpdatePostimage,
    /// A row deleted (`delete`).
    Delete,
}

impl ChangeType {
    /// Every kind, in the order above.
    pub const ALL: [ChangeType; 4] = [
        ChangeType::Insert,
        ChangeType::UpdatePreimage,
        ChangeType::UpdatePostimage,
        ChangeType::Delete,
    ];

    /// The kind as `_change_type` holds it.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Insert => "insert",
            ChangeType::UpdatePreimage => "update_preimage",
            ChangeType::UpdatePostimage => "update_postimage",
            ChangeType::Delete => "delete",
        }
    }

    /// The kind `text` names; `None` for any other text.
    pub fn parse(text: &str) -> Option<ChangeType> {
        ChangeType::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// A change data file written, as a [`Change`](super::change::Change)
/// takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdcFile {
    /// Its path relative to the table (`/` separated, under
    /// `_change_data/`, partition directories included).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// The path of change data file `name` for rows of the partition
/// `partition_dirs` (`flag=a/day=1998-01-02`, as the data files'
/// directories; empty for an unpartitioned table).
pub fn path(partition_dirs: &str, name: &str) -> String {
    let dirs = partition_dirs.trim_matches('/');
    if dirs.is_empty() {
        format!("{CHANGE_DATA_DIR}/{name}")
    } else {
        format!("{CHANGE_DATA_DIR}/{dirs}/{name}")
    }
}

/// `batch` with a last column `_change_type` of `change` on every row.
///
/// # Errors
/// [`Error::Unsupported`] when the batch has a `_change_type` column
/// already.
pub fn with_change_type(batch: &RecordBatch, change: ChangeType) -> Result<RecordBatch, Error> {
    if batch.schema().column_with_name(CHANGE_TYPE).is_some() {
        return Err(Error::Unsupported(format!(
            "the batch has a `{CHANGE_TYPE}` column already"
        )));
    }
    let mut fields: Vec<Arc<Field>> = batch.schema().fields().iter().cloned().collect();
    fields.push(Arc::new(Field::new(CHANGE_TYPE, DataType::Utf8, false)));
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns.push(Arc::new(StringArray::from(vec![
        change.as_str();
        batch.num_rows()
    ])));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| Error::Unsupported(format!("cannot add `{CHANGE_TYPE}`: {e}")))
}

/// Checks that `batches` can make a change data file: one schema, rows,
/// and a string column `_change_type` of known kinds and no nulls.
fn check(batches: &[RecordBatch]) -> Result<(), Error> {
    let bad = |what: String| Err(Error::Unsupported(format!("change data: {what}")));
    let Some(first) = batches.first() else {
        return bad("no batches".into());
    };
    if batches.iter().all(|b| b.num_rows() == 0) {
        return bad("no rows".into());
    }
    for b in batches {
        if b.schema() != first.schema() {
            return bad("the batches' schemas differ".into());
        }
        let Some(col) = b.column_by_name(CHANGE_TYPE) else {
            return bad(format!("no `{CHANGE_TYPE}` column"));
        };
        if col.null_count() > 0 {
            return bad(format!("`{CHANGE_TYPE}` has nulls"));
        }
        let values: Box<dyn Iterator<Item = Option<&str>>> = match col.data_type() {
            DataType::Utf8 => Box::new(col.as_string::<i32>().iter()),
            DataType::LargeUtf8 => Box::new(col.as_string::<i64>().iter()),
            DataType::Utf8View => Box::new(col.as_string_view().iter()),
            other => return bad(format!("`{CHANGE_TYPE}` is {other}, not a string")),
        };
        for v in values.flatten() {
            if ChangeType::parse(v).is_none() {
                return bad(format!(
                    "`{CHANGE_TYPE}` `{v}` is none of insert, update_preimage, \
                     update_postimage, delete"
                ));
            }
        }
    }
    Ok(())
}

/// Writes `batches` as the change data file `rel` of the table at
/// `location` (Parquet, Snappy-compressed, encoded in memory and created
/// only if absent), and gives its path and size.
///
/// # Errors
/// [`Error::Unsupported`] when `rel` is not under `_change_data/` or the
/// batches are not change data (no rows, schemas that differ, no string
/// `_change_type` of the four kinds without nulls); [`Error::BadTable`]
/// when they do not encode; [`Error::Store`] with `OutputExists` when the
/// file exists; IO or store errors.
pub fn write(location: &TableDir, rel: &str, batches: &[RecordBatch]) -> Result<CdcFile, Error> {
    let inside = rel
        .strip_prefix(CHANGE_DATA_DIR)
        .and_then(|r| r.strip_prefix('/'))
        .is_some_and(|r| !r.is_empty() && r.split('/').all(|s| !s.is_empty() && s != ".."));
    if !inside {
        return Err(Error::Unsupported(format!(
            "change data file `{rel}`: not a file under `{CHANGE_DATA_DIR}/`"
        )));
    }
    check(batches)?;
    let bad = |e: String| Error::BadTable {
        path: location.at(rel),
        reason: format!("cannot write the change data file: {e}"),
    };
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let schema = batches[0].schema();
    let mut w =
        ParquetWriter::try_new(Vec::new(), schema, props).map_err(|e| bad(e.to_string()))?;
    for b in batches {
        w.write(b).map_err(|e| bad(e.to_string()))?;
    }
    let bytes = w.finish().map_err(|e| bad(e.to_string()))?;
    location.put_new(rel, &bytes)?;
    Ok(CdcFile {
        path: rel.to_string(),
        size: bytes.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use arrow_array::Int64Array;

    use super::*;

    fn ids(v: &[i64]) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
            vec![Arc::new(Int64Array::from(v.to_vec()))],
        )
        .unwrap()
    }

    #[test]
    fn a_change_data_file_reads_back_with_its_change_types() {
        let dir = tempfile::tempdir().unwrap();
        let table = TableDir::local(dir.path()).unwrap();
        let rel = path("flag=a/", "cdc-1.parquet");
        assert_eq!(rel, "_change_data/flag=a/cdc-1.parquet");
        assert_eq!(path("", "c.parquet"), "_change_data/c.parquet");
        let batches = [
            with_change_type(&ids(&[1, 2]), ChangeType::Delete).unwrap(),
            with_change_type(&ids(&[3]), ChangeType::UpdatePostimage).unwrap(),
        ];
        let f = write(&table, &rel, &batches).unwrap();
        let on_disk = std::fs::read(dir.path().join(&rel)).unwrap();
        assert_eq!(f.size, on_disk.len() as u64);
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
            bytes::Bytes::from(on_disk),
            1024,
        )
        .unwrap();
        let mut got = Vec::new();
        for b in reader {
            let b = b.unwrap();
            let id = b.column(0).as_primitive::<arrow_array::types::Int64Type>();
            let ct = b.column(1).as_string::<i32>();
            for i in 0..b.num_rows() {
                got.push((id.value(i), ct.value(i).to_string()));
            }
        }
        assert_eq!(
            got,
            [
                (1, "delete".to_string()),
                (2, "delete".into()),
                (3, "update_postimage".into())
            ]
        );
        // Created only if absent.
        let e = write(&table, &rel, &batches).unwrap_err();
        assert!(
            matches!(e, Error::Store(strata_store::Error::OutputExists { .. })),
            "{e}"
        );
        assert!(with_change_type(&batches[0], ChangeType::Insert).is_err());
    }

    #[test]
    fn what_is_not_change_data_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let table = TableDir::local(dir.path()).unwrap();
        let good = [with_change_type(&ids(&[1]), ChangeType::Insert).unwrap()];
        for rel in ["cdc.parquet", "_change_data/", "_change_data/../x.parquet"] {
            let e = write(&table, rel, &good).unwrap_err().to_string();
            assert!(e.contains("not a file under `_change_data/`"), "{rel}: {e}");
        }
        let odd = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                CHANGE_TYPE,
                DataType::Utf8,
                true,
            )])),
            vec![Arc::new(StringArray::from(vec![Some("upsert")]))],
        )
        .unwrap();
        let nulls = RecordBatch::try_new(
            odd.schema(),
            vec![Arc::new(StringArray::from(vec![None::<&str>]))],
        )
        .unwrap();
        for (batches, want) in [
            (vec![], "no batches"),
            (vec![ids(&[1])], "no `_change_type` column"),
            (vec![odd], "`upsert` is none of"),
            (vec![nulls], "has nulls"),
            (vec![good[0].clone(), ids(&[2])], "schemas differ"),
        ] {
            let e = write(&table, "_change_data/c.parquet", &batches)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
        assert!(!dir.path().join(CHANGE_DATA_DIR).exists());
        assert_eq!(
            ChangeType::parse("update_preimage"),
            Some(ChangeType::UpdatePreimage)
        );
    }
}
