//! Commits read back through `live_files`.

use std::{collections::BTreeMap, fs::File, sync::Arc};

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::file::properties::WriterProperties;
use strata_parquet::writer::ParquetWriter;

use super::*;
use crate::stats::FileFacts;

struct Table {
    _tmp: tempfile::TempDir,
    location: TableDir,
    schema: TableSchema,
}

impl Table {
    /// An unpartitioned table of an `id` column holding `a` (ids 0..10)
    /// and `b` (10..20).
    fn new() -> Table {
        let tmp = tempfile::tempdir().unwrap();
        let location = TableDir::local(tmp.path()).unwrap();
        let schema =
            TableSchema::new(&Schema::new(vec![Field::new("id", DataType::Int64, false)])).unwrap();
        let t = Table {
            _tmp: tmp,
            location,
            schema,
        };
        let files = [t.file("a", 0..10), t.file("b", 10..20)];
        commit(&t.table(&files), None).unwrap();
        t
    }

    /// Writes `data/NAME.parquet` of rows `ids`.
    fn file(&self, name: &str, ids: std::ops::Range<i64>) -> (String, FileFacts) {
        let rel = format!("data/{name}.parquet");
        let path = self.location.at(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let batch = RecordBatch::try_new(
            self.schema.arrow.clone(),
            vec![Arc::new(Int64Array::from_iter_values(ids))],
        )
        .unwrap();
        let mut w = ParquetWriter::try_new(
            File::create(&path).unwrap(),
            self.schema.arrow.clone(),
            WriterProperties::default(),
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        let facts = crate::stats::read_file(&path).unwrap();
        (rel, facts)
    }

    fn table<'a>(&'a self, files: &'a [(String, FileFacts)]) -> NewTable<'a> {
        NewTable {
            location: &self.location,
            schema: &self.schema,
            arrow: &self.schema.arrow,
            partition: &[],
            sort: &[],
            properties: BTreeMap::new(),
            files,
        }
    }
}

#[test]
fn live_files_read_appends_back_with_inherited_numbers() {
    let t = Table::new();
    let c = t.file("c", 20..25);
    let second = commit(&t.table(std::slice::from_ref(&c)), None).unwrap();
    let live = live_files(&t.location).unwrap();
    assert_eq!(live.len(), 3);
    for f in &live {
        assert_eq!(f.content, Content::Data);
        assert!(f.partition.is_empty());
        assert_eq!(f.spec_id, 0);
        assert!(f.manifest.ends_with(".avro"), "{}", f.manifest);
    }
    // Added entries take their sequence numbers and snapshot from the
    // manifest list.
    let last = live
        .iter()
        .find(|f| f.path.ends_with("/c.parquet"))
        .unwrap();
    assert_eq!((last.sequence_number, last.file_sequence_number), (2, 2));
    assert_eq!(last.snapshot_id, second.snapshot_id);
    assert_eq!((last.record_count, last.file_size), (5, c.1.bytes));
    assert_eq!(last.lower.get(&1), Some(&crate::stats::Bound::Int(20)));
    assert_eq!(last.upper.get(&1), Some(&crate::stats::Bound::Int(24)));
    assert_eq!(last.null_counts.get(&1), Some(&0));
    let first = live
        .iter()
        .find(|f| f.path.ends_with("/a.parquet"))
        .unwrap();
    assert_eq!(first.sequence_number, 1);
    // The first snapshot still lists its two files; a snapshot the table
    // does not have is an error.
    let cur = current(&t.location).unwrap().unwrap();
    let id = cur.metadata["snapshots"][0]["snapshot-id"]
        .as_i64()
        .unwrap();
    assert_eq!(live_files_at(&t.location, Some(id)).unwrap().len(), 2);
    assert!(matches!(
        live_files_at(&t.location, Some(7)),
        Err(Error::BadTable { .. })
    ));
    let empty = tempfile::tempdir().unwrap();
    let e = live_files(&TableDir::local(empty.path()).unwrap()).unwrap_err();
    assert!(e.to_string().contains("holds no Iceberg table"), "{e}");
}
