//! Commits of changes that meet another writer's commit: a second writer
//! commits right before this one claims its version (through `run`'s
//! `before_claim`), and the change is built again on that version or
//! aborts, leaving no file behind.

use std::{collections::BTreeMap, fs::File, sync::Arc};

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::file::properties::WriterProperties;
use strata_parquet::writer::ParquetWriter;

use super::*;
use crate::{clean, stats::FileFacts};

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

    /// Commits a change of this table, `other` run right before its
    /// first attempt claims its version.
    fn race(
        &self,
        added: &[(String, FileFacts)],
        removed: &[&str],
        deletes: &[(&str, &[u64])],
        other: impl FnOnce(),
    ) -> Result<Committed, Error> {
        let edit = Edit {
            removed: &removed.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            deletes: &deletes
                .iter()
                .map(|(f, p)| PositionDeletes {
                    file: f.to_string(),
                    positions: p.to_vec(),
                })
                .collect::<Vec<_>>(),
            equality: &[],
            replace: false,
        };
        let mut other = Some(other);
        run(&self.table(added), &edit, None, &mut |attempt| {
            if attempt == 0
                && let Some(other) = other.take()
            {
                other();
            }
            Ok(())
        })
    }

    /// Commits a change with no other writer.
    fn change(
        &self,
        added: &[(String, FileFacts)],
        removed: &[&str],
        deletes: &[(&str, &[u64])],
    ) -> Committed {
        self.race(added, removed, deletes, || {}).unwrap()
    }

    /// The files under the table that no version reaches.
    fn orphans(&self) -> Vec<String> {
        let found = clean::find(&self.location, &Default::default(), 0).unwrap();
        found.orphans.into_iter().map(|o| o.path).collect()
    }

    /// The live files: data files' names, and the data files' names of
    /// the delete files.
    fn live(&self) -> (Vec<String>, Vec<String>) {
        let name = |p: &str| {
            p.rsplit('/')
                .next()
                .unwrap()
                .trim_end_matches(".parquet")
                .to_string()
        };
        let live = live_files(&self.location).unwrap();
        let mut data: Vec<String> = live
            .iter()
            .filter(|f| f.content == Content::Data)
            .map(|f| name(&f.path))
            .collect();
        let mut deletes: Vec<String> = live
            .iter()
            .filter_map(|f| f.referenced_data_file().map(name))
            .collect();
        data.sort();
        deletes.sort();
        (data, deletes)
    }
}

fn names(n: &[&str]) -> Vec<String> {
    n.iter().map(|s| s.to_string()).collect()
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

#[test]
fn a_change_is_built_again_on_another_writers_deletes() {
    let t = Table::new();
    let c = t
        .race(&[], &[], &[("data/a.parquet", &[0])], || {
            t.change(&[], &[], &[("data/b.parquet", &[1, 2])]);
        })
        .unwrap();
    assert_eq!((c.version, c.retries, c.operation), (3, 1, "delete"));
    assert_eq!(t.live(), (names(&["a", "b"]), names(&["a", "b"])));
    let cur = current(&t.location).unwrap().unwrap();
    let summary = snapshot::current_summary(&cur.metadata);
    assert_eq!(summary["total-position-deletes"], "3");
    assert_eq!(summary["total-delete-files"], "2");
    assert_eq!(cur.metadata["last-sequence-number"], 3);
    assert!(t.orphans().is_empty(), "{:?}", t.orphans());
}

#[test]
fn deletes_abort_when_another_writer_removed_their_file() {
    let t = Table::new();
    let a2 = t.file("a2", 0..9);
    let e = t
        .race(&[], &[], &[("data/a.parquet", &[0])], || {
            t.change(std::slice::from_ref(&a2), &["data/a.parquet"], &[]);
        })
        .unwrap_err();
    assert!(matches!(e, Error::Conflict { version: 2, .. }), "{e:?}");
    // The other writer's version stands; this change left nothing.
    assert_eq!(current(&t.location).unwrap().unwrap().version, 2);
    assert_eq!(t.live(), (names(&["a2", "b"]), names(&[])));
    assert!(t.orphans().is_empty(), "{:?}", t.orphans());
}

#[test]
fn a_rewrite_aborts_when_another_writer_deleted_rows_of_its_file() {
    let t = Table::new();
    let a2 = t.file("a2", 0..10);
    let e = t
        .race(std::slice::from_ref(&a2), &["data/a.parquet"], &[], || {
            t.change(&[], &[], &[("data/a.parquet", &[4])]);
        })
        .unwrap_err();
    assert!(matches!(e, Error::Conflict { .. }), "{e:?}");
    assert_eq!(t.live(), (names(&["a", "b"]), names(&["a"])));
    // Only the rewritten file its writer made is left to clean.
    assert_eq!(t.orphans(), names(&["data/a2.parquet"]));
}

#[test]
fn a_removal_takes_another_writers_deletes_of_its_file_with_it() {
    let t = Table::new();
    let c = t
        .race(&[], &["data/a.parquet"], &[], || {
            t.change(&[], &[], &[("data/a.parquet", &[4])]);
        })
        .unwrap();
    assert_eq!((c.retries, c.operation), (1, "delete"));
    assert_eq!(t.live(), (names(&["b"]), names(&[])));
    let cur = current(&t.location).unwrap().unwrap();
    let summary = snapshot::current_summary(&cur.metadata);
    assert_eq!(summary["deleted-data-files"], "1");
    assert_eq!(summary["removed-delete-files"], "1");
    assert_eq!(summary["total-delete-files"], "0");
    assert_eq!(summary["total-records"], "10");
    assert!(t.orphans().is_empty(), "{:?}", t.orphans());
}

#[test]
fn appends_and_removals_keep_manifests_of_live_files_only() {
    let t = Table::new();
    // Remove both files of the first manifest, then append: the
    // manifest of deleted entries alone is not carried forward.
    let c = t.file("c", 20..30);
    t.change(
        std::slice::from_ref(&c),
        &["data/a.parquet", "data/b.parquet"],
        &[],
    );
    let d = t.file("d", 30..40);
    commit(&t.table(&[d]), None).unwrap();
    let cur = current(&t.location).unwrap().unwrap();
    let manifests = current_snapshot(&t.location, &cur).unwrap();
    assert_eq!(manifests.len(), 2, "{manifests:#?}");
    assert_eq!(t.live(), (names(&["c", "d"]), names(&[])));
    let summary = snapshot::current_summary(&cur.metadata);
    assert_eq!(summary["total-records"], "20");
    assert_eq!(summary["total-data-files"], "2");
}
