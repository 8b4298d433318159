//! Position delete files: the rows of one data file a change deletes, as
//! a Parquet file of (`file_path`, `pos`) rows with the field ids the
//! spec reserves for them (2147483546 and 2147483545), sorted by
//! position, written by strata's Parquet writer into the data file's
//! partition directory; and their manifest entries, with the data file's
//! partition and exact bounds (equal `file_path` bounds name the one data
//! file the deletes apply to).
//!
//! One delete file names one data file, so that a data file removed
//! later takes its delete files with it.
//!
//! Equality delete files hold values of key columns (each with the
//! table's field id, listed as the entry's `equality_ids`): a row of
//! an older data file with equal values is deleted.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use strata_parquet::writer::ParquetWriter;

use super::{
    avro::{DataFile, Entry},
    model::{Content, DELETE_FILE_PATH_ID, DELETE_POS_ID},
    schema::{FIELD_ID_KEY, Primitive},
    snapshot::{bounds_of, file_of},
    values::{PartValue, bound_bytes},
};
use crate::{Error, dir::TableDir, stats::FileFacts};

/// Rows per record batch written.
const BATCH_ROWS: usize = 1 << 16;

/// The Arrow schema of a position delete file, its field ids on the
/// fields.
fn schema() -> SchemaRef {
    let with_id = |name: &str, t: DataType, id: i32| {
        Field::new(name, t, false).with_metadata(std::collections::HashMap::from([(
            FIELD_ID_KEY.to_string(),
            id.to_string(),
        )]))
    };
    Arc::new(Schema::new(vec![
        with_id("file_path", DataType::Utf8, DELETE_FILE_PATH_ID),
        with_id("pos", DataType::Int64, DELETE_POS_ID),
    ]))
}

/// The directory, relative to the table, for the delete files of the data
/// file at `data_file` (as recorded): the data file's own directory when
/// it lies under `data/`, else `data`.
pub(crate) fn dir_for(location: &TableDir, data_file: &str) -> String {
    location
        .relative(data_file)
        .and_then(|rel| rel.rsplit_once('/').map(|(dir, _)| dir.to_string()))
        .filter(|dir| dir == "data" || dir.starts_with("data/"))
        .unwrap_or_else(|| "data".to_string())
}

/// Writes the position delete file `rel` of the rows `positions` (sorted,
/// distinct) of `data_file` (its location as recorded), only if no file
/// of that name exists, and returns its facts, read back from its footer.
///
/// # Errors
/// [`Error::Write`] when it does not encode; IO or store errors.
pub(crate) fn write(
    location: &TableDir,
    rel: &str,
    data_file: &str,
    positions: &[u64],
) -> Result<FileFacts, Error> {
    let props = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Chunk)
        // Whole bounds: equal `file_path` bounds name the data file.
        .set_statistics_truncate_length(None)
        .set_column_index_truncate_length(None)
        .build();
    let schema = schema();
    let batches = positions.chunks(BATCH_ROWS).map(|chunk| {
        let pos: Vec<i64> = chunk
            .iter()
            .map(|&p| i64::try_from(p).unwrap_or(i64::MAX))
            .collect();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![data_file; chunk.len()])),
            Arc::new(Int64Array::from(pos)),
        ];
        RecordBatch::try_new(schema.clone(), columns)
    });
    put(location, rel, schema.clone(), props, batches)
}

/// Writes `batches` (of `schema`) with `props` as the new file `rel`
/// through strata's Parquet writer, only if no file of that name exists,
/// and returns its facts, read back from its footer.
fn put(
    location: &TableDir,
    rel: &str,
    schema: SchemaRef,
    props: WriterProperties,
    batches: impl IntoIterator<Item = Result<RecordBatch, arrow_schema::ArrowError>>,
) -> Result<FileFacts, Error> {
    let write_error = |source| Error::Write {
        path: location.at(rel),
        source: Box::new(source),
    };
    let mut w = ParquetWriter::try_new(Vec::new(), schema, props).map_err(write_error)?;
    for batch in batches {
        let batch = batch.map_err(|e| write_error(strata_parquet::Error::Arrow(e)))?;
        w.write(&batch).map_err(write_error)?;
    }
    let bytes = w.finish().map_err(write_error)?;
    location.put_new(rel, &bytes)?;
    location.facts(rel)
}

/// The manifest entry of the position delete file at `path` (as metadata
/// records it), whose facts are `facts`, of deletes in `partition`.
pub(crate) fn entry(path: String, partition: Vec<PartValue>, facts: &FileFacts) -> Entry {
    let id_of = |l: &crate::stats::LeafFacts| l.field_id;
    let mut f: DataFile = file_of(path, partition, facts, id_of);
    f.content = Content::PositionDeletes;
    let encode = |id: i32, b: &crate::stats::Bound| match id {
        DELETE_FILE_PATH_ID => bound_bytes(Primitive::String, b),
        DELETE_POS_ID => bound_bytes(Primitive::Long, b),
        _ => None,
    };
    bounds_of(&mut f, facts, encode, id_of);
    Entry::added(f)
}

/// The equality delete file `rel` of the key rows `keys` (columns named
/// as top-level primitive columns of `schema`, each given its field id and
/// its type in the table), only if no file of that name exists; returns
/// its facts.
///
/// # Errors
/// [`Error::BadChange`] for a column the table lacks or of another type;
/// [`Error::Write`] when it does not encode; IO or store errors.
pub(crate) fn write_equality(
    location: &TableDir,
    rel: &str,
    schema: &super::TableSchema,
    keys: &RecordBatch,
) -> Result<FileFacts, Error> {
    let bad = |reason: String| Error::BadChange {
        path: location.root(),
        reason,
    };
    let mut fields = Vec::new();
    for f in keys.schema().fields() {
        let table = schema.arrow.field_with_name(f.name()).map_err(|_| {
            bad(format!(
                "equality deletes name `{}`, which the table lacks",
                f.name()
            ))
        })?;
        if table.data_type() != f.data_type() || table.data_type().is_nested() {
            return Err(bad(format!(
                "equality deletes give `{}` as {}; the table holds {}",
                f.name(),
                f.data_type(),
                table.data_type()
            )));
        }
        fields.push(table.as_ref().clone().with_nullable(true));
    }
    let file_schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(file_schema.clone(), keys.columns().to_vec());
    let props = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .build();
    put(location, rel, file_schema, props, [batch])
}

/// The manifest entry of the equality delete file at `path` (as metadata
/// records it), whose facts are `facts`: its key columns' field ids as
/// `equality_ids`, unpartitioned.
pub(crate) fn equality_entry(
    path: String,
    schema: &super::TableSchema,
    facts: &FileFacts,
) -> Entry {
    let id_of = |l: &crate::stats::LeafFacts| l.field_id.or_else(|| schema.leaf_id(&l.path));
    let mut f: DataFile = file_of(path, Vec::new(), facts, id_of);
    f.content = Content::EqualityDeletes;
    f.equality_ids = facts.leaves.iter().filter_map(id_of).collect();
    let encode = |id: i32, b: &crate::stats::Bound| {
        schema.primitives.get(&id).and_then(|p| bound_bytes(*p, b))
    };
    bounds_of(&mut f, facts, encode, id_of);
    Entry::added(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delete_file_bounds_name_its_one_data_file() {
        let tmp = tempfile::tempdir().unwrap();
        let location = TableDir::local(tmp.path()).unwrap();
        let data = location.uri("data/p=1/a.parquet");
        assert_eq!(dir_for(&location, &data), "data/p=1");
        assert_eq!(dir_for(&location, "/elsewhere/a.parquet"), "data");
        let rel = "data/p=1/d.parquet";
        let facts = write(&location, rel, &data, &[2, 5, 70_000]).unwrap();
        assert_eq!(facts.rows, 3);
        let e = entry(location.uri(rel), vec![PartValue::Int(1)], &facts);
        assert_eq!(e.file.content, Content::PositionDeletes);
        let path_bound = |b: &[(i32, Vec<u8>)]| {
            b.iter()
                .find(|(id, _)| *id == DELETE_FILE_PATH_ID)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(path_bound(&e.file.lower), Some(data.as_bytes().to_vec()));
        assert_eq!(path_bound(&e.file.upper), Some(data.as_bytes().to_vec()));
        let pos = |b: &[(i32, Vec<u8>)]| {
            b.iter()
                .find(|(id, _)| *id == DELETE_POS_ID)
                .map(|(_, v)| i64::from_le_bytes(v.as_slice().try_into().unwrap()))
        };
        assert_eq!(pos(&e.file.lower), Some(2));
        assert_eq!(pos(&e.file.upper), Some(70_000));
        // A second write of the same name is refused.
        assert!(write(&location, rel, &data, &[1]).is_err());
    }
}
