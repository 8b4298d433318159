//! Delta tables with an update and delete history, built from data files
//! written by strata's Parquet writer: each version's rows read back
//! through strata's replay and, when `STRATA_BENCH_PYTHON` names a
//! Python with `deltalake`, through delta-rs (each version's ids, the
//! history's operations, the change data feed, the protocol, a table
//! loaded from its checkpoint once the entries before it are gone).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
};

use arrow_array::{Int64Array, RecordBatch, StringArray, cast::AsArray, types::Int64Type};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::{
    arrow::arrow_reader::ParquetRecordBatchReaderBuilder, file::properties::WriterProperties,
};
use serde_json::Value;
use strata_layout::PartitionField;
use strata_parquet::writer::ParquetWriter;
use strata_table::{
    Error,
    delta::{
        self, Change, Committed, LOG_DIR, NewTable, Operation, TableSchema,
        cdc::{self, CdcFile, ChangeType},
        log_file_name, properties,
    },
    dir::TableDir,
    stats::FileFacts,
};

/// A row: its id and name (its partition is its file's).
type Row = (i64, String);

/// The table's schema: `grp`, the partition column, is in the log and
/// the directory names only.
fn table_schema() -> Schema {
    Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("grp", DataType::Utf8, true),
    ])
}

/// The data files' schema.
fn file_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]))
}

fn batch(rows: &[Row]) -> RecordBatch {
    RecordBatch::try_new(
        file_schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.1.as_str()),
            )),
        ],
    )
    .unwrap()
}

fn rows(ids: impl IntoIterator<Item = i64>) -> Vec<Row> {
    ids.into_iter().map(|i| (i, format!("n{i}"))).collect()
}

/// The partition of a data file's path (`grp=a/...`).
fn group(rel: &str) -> String {
    let dir = rel.trim_start_matches("_change_data/");
    dir.split('/')
        .next()
        .unwrap()
        .trim_start_matches("grp=")
        .to_string()
}

/// A table and what strata wrote to it: its live files' rows, each
/// version's ids, and the change data each version recorded.
struct Model {
    root: PathBuf,
    location: TableDir,
    /// Each live file's rows, less those its deletion vector deletes.
    live: BTreeMap<String, Vec<Row>>,
    /// Each live file's rows as written.
    physical: BTreeMap<String, Vec<Row>>,
    version: u64,
    /// Each version's ids, sorted.
    ids: Vec<Vec<i64>>,
    /// Each change row: id, name, partition, change type, version.
    changes: Vec<(i64, String, String, String, u64)>,
    next: usize,
}

impl Model {
    /// Version 0 of a table recording its change data feed: a file of
    /// `rows` per (partition, rows).
    fn new(root: &Path, files: &[(&str, Vec<Row>)]) -> Model {
        Model::with(root, files, &[])
    }

    /// [`Model::new`] with more table properties.
    fn with(root: &Path, files: &[(&str, Vec<Row>)], more: &[(&str, &str)]) -> Model {
        let location = TableDir::local(root).unwrap();
        let mut m = Model {
            root: root.to_path_buf(),
            location,
            live: BTreeMap::new(),
            physical: BTreeMap::new(),
            version: 0,
            ids: Vec::new(),
            changes: Vec::new(),
            next: 0,
        };
        let written: Vec<(String, FileFacts)> =
            files.iter().map(|(g, r)| m.write(g, r.clone())).collect();
        let schema = TableSchema::new(&table_schema()).unwrap();
        let c = delta::create_with(
            &NewTable {
                location: &m.location,
                schema: &schema,
                partition: &[PartitionField::parse("grp").unwrap()],
                files: &written,
            },
            &[(properties::CHANGE_DATA_FEED, "true")]
                .iter()
                .chain(more)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
        .unwrap();
        assert_eq!(c.version, 0);
        for (rel, r) in &m.live {
            for (id, name) in r {
                m.changes
                    .push((*id, name.clone(), group(rel), "insert".into(), 0));
            }
        }
        m.ids.push(m.current_ids());
        m
    }

    /// Writes `rows` as a new data file of partition `grp`.
    fn write(&mut self, grp: &str, rows: Vec<Row>) -> (String, FileFacts) {
        let rel = format!("grp={grp}/part-{:05}.parquet", self.next);
        self.next += 1;
        let path = self.root.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut w = ParquetWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            file_schema(),
            WriterProperties::builder().build(),
        )
        .unwrap();
        w.write(&batch(&rows)).unwrap();
        w.finish().unwrap();
        self.physical.insert(rel.clone(), rows.clone());
        self.live.insert(rel.clone(), rows);
        let facts = strata_table::stats::read_file(&path).unwrap();
        (rel, facts)
    }

    /// Writes a change data file of partition `grp`: each row with its
    /// kind.
    fn write_changes(&mut self, grp: &str, rows: &[(Row, ChangeType)]) -> CdcFile {
        let rel = cdc::path(
            &format!("grp={grp}"),
            &format!("cdc-{:05}.parquet", self.next),
        );
        self.next += 1;
        let batches: Vec<RecordBatch> = rows
            .iter()
            .map(|(r, kind)| cdc::with_change_type(&batch(std::slice::from_ref(r)), *kind).unwrap())
            .collect();
        for (r, kind) in rows {
            self.changes.push((
                r.0,
                r.1.clone(),
                grp.to_string(),
                kind.as_str().to_string(),
                self.version + 1,
            ));
        }
        cdc::write(&self.location, &rel, &batches).unwrap()
    }

    fn current_ids(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self.live.values().flatten().map(|r| r.0).collect();
        ids.sort_unstable();
        ids
    }

    /// The live file holding `id`.
    fn file_of(&self, id: i64) -> String {
        self.live
            .iter()
            .find(|(_, r)| r.iter().any(|row| row.0 == id))
            .map(|(rel, _)| rel.clone())
            .unwrap()
    }

    fn commit(&mut self, change: &Change<'_>) -> Committed {
        let c = delta::commit_change(change).unwrap();
        assert_eq!(c.version, self.version + 1);
        self.version = c.version;
        self.ids.push(self.current_ids());
        // strata's replay has the live files the model has.
        let state = delta::replay(&self.location, None).unwrap().unwrap();
        let files: Vec<String> = state
            .files
            .keys()
            .map(|u| delta::values::path_from_uri(u).unwrap())
            .collect();
        assert_eq!(files, self.live.keys().cloned().collect::<Vec<_>>());
        assert_eq!(state.rows(), self.current_ids().len() as u64);
        c
    }

    /// A copy-on-write delete of `ids`, all in one file: the file
    /// rewritten without them, their rows as change data.
    fn delete(&mut self, ids: &[i64]) -> Committed {
        let old = self.file_of(ids[0]);
        let grp = group(&old);
        let before = self.live.remove(&old).unwrap();
        let (gone, kept): (Vec<Row>, Vec<Row>) =
            before.into_iter().partition(|r| ids.contains(&r.0));
        assert_eq!(gone.len(), ids.len());
        let added = [self.write(&grp, kept)];
        let changes: Vec<(Row, ChangeType)> =
            gone.into_iter().map(|r| (r, ChangeType::Delete)).collect();
        let cdc = [self.write_changes(&grp, &changes)];
        let predicate = format!(
            "id IN ({})",
            ids.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let location = self.location.clone();
        self.commit(&Change {
            location: &location,
            read_version: self.version,
            operation: Operation::Delete {
                predicate: Some(predicate),
            },
            added: &added,
            removed: &[old],
            data_change: true,
            change_files: &cdc,
            also_read: &[],
            deleted_rows: &[],
        })
    }

    /// A copy-on-write update of row `id`'s name.
    fn update(&mut self, id: i64, name: &str) -> Committed {
        let old = self.file_of(id);
        let grp = group(&old);
        let before = self.live.remove(&old).unwrap();
        let pre = before.iter().find(|r| r.0 == id).unwrap().clone();
        let after: Vec<Row> = before
            .into_iter()
            .map(|r| if r.0 == id { (id, name.to_string()) } else { r })
            .collect();
        let added = [self.write(&grp, after)];
        let cdc = [self.write_changes(
            &grp,
            &[
                (pre, ChangeType::UpdatePreimage),
                ((id, name.to_string()), ChangeType::UpdatePostimage),
            ],
        )];
        let location = self.location.clone();
        self.commit(&Change {
            location: &location,
            read_version: self.version,
            operation: Operation::Update {
                predicate: Some(format!("id = {id}")),
            },
            added: &added,
            removed: &[old],
            data_change: true,
            change_files: &cdc,
            also_read: &[],
            deleted_rows: &[],
        })
    }

    /// A delete of `ids`, all in one file, by its deletion vector: the
    /// file stays, their rows recorded as change data.
    fn delete_by_vector(&mut self, ids: &[i64]) -> Committed {
        let rel = self.file_of(ids[0]);
        let grp = group(&rel);
        let rows: Vec<u64> = self.physical[&rel]
            .iter()
            .enumerate()
            .filter(|(_, r)| ids.contains(&r.0))
            .map(|(i, _)| i as u64)
            .collect();
        assert_eq!(rows.len(), ids.len());
        let live = self.live.get_mut(&rel).unwrap();
        let gone: Vec<Row> = live
            .iter()
            .filter(|r| ids.contains(&r.0))
            .cloned()
            .collect();
        live.retain(|r| !ids.contains(&r.0));
        let changes: Vec<(Row, ChangeType)> =
            gone.into_iter().map(|r| (r, ChangeType::Delete)).collect();
        let cdc = [self.write_changes(&grp, &changes)];
        let marked = [delta::DeletedRows { path: rel, rows }];
        let location = self.location.clone();
        self.commit(&Change {
            location: &location,
            read_version: self.version,
            operation: Operation::Delete { predicate: None },
            added: &[],
            removed: &[],
            data_change: true,
            change_files: &cdc,
            also_read: &[],
            deleted_rows: &marked,
        })
    }

    /// Compaction of partition `grp`'s files into one (no data change).
    fn optimize(&mut self, grp: &str) -> Committed {
        let old: Vec<String> = self
            .live
            .keys()
            .filter(|rel| group(rel) == grp)
            .cloned()
            .collect();
        assert!(old.len() >= 2);
        let mut all: Vec<Row> = old
            .iter()
            .flat_map(|rel| self.live.remove(rel).unwrap())
            .collect();
        all.sort();
        let added = [self.write(grp, all)];
        let location = self.location.clone();
        self.commit(&Change {
            location: &location,
            read_version: self.version,
            operation: Operation::Optimize,
            added: &added,
            removed: &old,
            data_change: false,
            change_files: &[],
            also_read: &[],
            deleted_rows: &[],
        })
    }

    /// Checks each version's ids as strata's replay gives its files
    /// (from `first` on).
    fn check_versions(&self, first: u64) {
        for v in first..=self.version {
            let state = delta::replay(&self.location, Some(v)).unwrap().unwrap();
            let mut ids = Vec::new();
            for (uri, add) in &state.files {
                let rel = delta::values::path_from_uri(uri).unwrap();
                let deleted = add.deletion_vector.as_ref().map_or(Vec::new(), |v| {
                    delta::dv::read(&self.location, v, u64::MAX).unwrap()
                });
                ids.extend(
                    read_ids(&self.root.join(rel))
                        .into_iter()
                        .enumerate()
                        .filter(|(i, _)| !deleted.contains(&(*i as u64)))
                        .map(|(_, id)| id),
                );
            }
            ids.sort_unstable();
            assert_eq!(ids, self.ids[v as usize], "version {v}");
        }
    }
}

/// The ids of a Parquet file.
fn read_ids(path: &Path) -> Vec<i64> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    reader
        .flat_map(|b| {
            let b = b.unwrap();
            let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
            ids.values().to_vec()
        })
        .collect()
}

/// What deltalake reads of a table: each version's ids from `first`,
/// the history, the protocol, the live files, and the change data feed
/// from `cdf_from`.
const ORACLE: &str = r#"
import json, os, sys
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder


def table(dt):
    """The table's rows: through DataFusion when it has deletion vectors
    (deltalake's pyarrow dataset refuses them)."""
    if "deletionVectors" in (dt.protocol().reader_features or []):
        rows = QueryBuilder().register("t", dt).execute("SELECT id FROM t")
        return pa.RecordBatchReader.from_stream(rows).read_all()
    return dt.to_pyarrow_table()


path, first, cdf_from = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dt = DeltaTable(path)
out = {"version": dt.version(), "versions": {}}
for v in range(first, dt.version() + 1):
    t = table(DeltaTable(path, version=v))
    out["versions"][str(v)] = sorted(t.column("id").to_pylist())
out["history"] = [[h.get("version"), h["operation"]] for h in dt.history()]
p = dt.protocol()
out["protocol"] = [p.min_reader_version, p.min_writer_version, p.reader_features, p.writer_features]
out["files"] = sorted(os.path.relpath(u.removeprefix("file://"), path) for u in dt.file_uris())
cdf = pa.RecordBatchReader.from_stream(dt.load_cdf(starting_version=cdf_from)).read_all()
out["cdf"] = sorted(
    [r["id"], r["name"], r["grp"], r["_change_type"], r["_commit_version"]]
    for r in cdf.to_pylist()
)
print(json.dumps(out))
"#;

/// The Python that `STRATA_BENCH_PYTHON` names, when it has deltalake;
/// `None` (and a note) otherwise.
fn python() -> Option<PathBuf> {
    let Some(python) = std::env::var_os("STRATA_BENCH_PYTHON") else {
        eprintln!("note: STRATA_BENCH_PYTHON is not set: the deltalake checks are skipped");
        return None;
    };
    let ok = Command::new(&python)
        .args(["-c", "import deltalake, pyarrow"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "note: {} has no deltalake and pyarrow: the deltalake checks are skipped",
            python.to_string_lossy()
        );
        return None;
    }
    Some(python.into())
}

/// What deltalake reads of the table at `root` (see [`ORACLE`]).
fn deltalake(python: &Path, root: &Path, first: u64, cdf_from: u64) -> Value {
    let script = root.with_extension("oracle.py");
    std::fs::write(&script, ORACLE).unwrap();
    let out = Command::new(python)
        .arg(&script)
        .arg(root)
        .arg(first.to_string())
        .arg(cdf_from.to_string())
        .output()
        .unwrap();
    std::fs::remove_file(&script).unwrap();
    assert!(
        out.status.success(),
        "deltalake failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The change rows of `m` from version `from`, as the oracle lists them.
fn expected_changes(m: &Model, from: u64) -> Value {
    let mut rows: Vec<_> = m.changes.iter().filter(|c| c.4 >= from).cloned().collect();
    rows.sort();
    serde_json::to_value(
        rows.into_iter()
            .map(|(id, name, grp, kind, v)| serde_json::json!([id, name, grp, kind, v]))
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

fn log_entries(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join(LOG_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn deletes_updates_and_compaction_read_back_with_their_change_data() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    // Version 0: ids 1-10 in two files of `a`, 11-15 in one of `b`.
    let mut m = Model::new(
        &root,
        &[
            ("a", rows(1..=5)),
            ("a", rows(6..=10)),
            ("b", rows(11..=15)),
        ],
    );
    // Version 1: ids 2 and 3 deleted, their file rewritten.
    let c = m.delete(&[2, 3]);
    assert_eq!((c.files, c.removed, c.change_files, c.rows), (1, 1, 1, 3));
    // Version 2: id 12 renamed.
    m.update(12, "updated");
    // Version 3: `a`'s two files compacted into one.
    let c = m.optimize("a");
    assert_eq!((c.files, c.removed, c.change_files), (1, 2, 0));
    let log = std::fs::read_to_string(&c.log_file).unwrap();
    assert!(
        log.lines()
            .skip(1)
            .all(|l| l.contains(r#""dataChange":false"#)),
        "{log}"
    );
    m.check_versions(0);
    assert_eq!(m.ids[3], [1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    // Change data files are in their partitions' directories.
    assert!(root.join("_change_data/grp=a").is_dir() && root.join("_change_data/grp=b").is_dir());

    let Some(python) = python() else {
        return;
    };
    let got = deltalake(&python, &root, 0, 0);
    assert_eq!(got["version"], 3);
    for (v, ids) in m.ids.iter().enumerate() {
        assert_eq!(
            got["versions"][v.to_string()],
            serde_json::json!(ids),
            "version {v}"
        );
    }
    assert_eq!(
        got["history"],
        serde_json::json!([[3, "OPTIMIZE"], [2, "UPDATE"], [1, "DELETE"], [0, "WRITE"]])
    );
    assert_eq!(got["protocol"], serde_json::json!([1, 4, null, null]));
    assert_eq!(
        got["files"],
        serde_json::json!(m.live.keys().collect::<Vec<_>>())
    );
    // The feed: version 0's rows inserted, 2 and 3 deleted in version 1,
    // 12 updated in version 2 (both images); compaction changes nothing.
    assert_eq!(got["cdf"], expected_changes(&m, 0));
    let kinds: Vec<&str> = got["cdf"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r[4] != 0)
        .map(|r| r[3].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["delete", "delete", "update_preimage", "update_postimage"]
    );
}

#[test]
fn a_checkpoint_over_removes_loads_without_the_entries_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    let mut m = Model::new(
        &root,
        &[
            ("a", rows(1..=10)),
            ("a", rows(11..=20)),
            ("b", rows(21..=30)),
            ("b", rows(31..=40)),
        ],
    );
    let mut checkpoints = Vec::new();
    let mut removed_by_10 = 0;
    for v in 1..=12u64 {
        let c = match v {
            3 => m.update(11, "eleven"),
            5 => m.optimize("a"),
            7 => m.update(22, "twenty-two"),
            9 => m.optimize("b"),
            12 => m.update(1, "one"),
            _ => m.delete(&[v as i64 * 3]),
        };
        assert!(c.checkpoint_error.is_none(), "{:?}", c.checkpoint_error);
        if v <= 10 {
            removed_by_10 += c.removed;
        }
        checkpoints.extend(c.checkpoint.map(|w| w.version));
    }
    assert_eq!(checkpoints, [10]);
    m.check_versions(0);
    // The log before the checkpoint goes, as a log clean-up leaves it.
    for v in 0..10 {
        std::fs::remove_file(root.join(LOG_DIR).join(log_file_name(v))).unwrap();
    }
    let state = delta::replay(&m.location, None).unwrap().unwrap();
    assert_eq!((state.version, state.checkpoint), (12, Some(10)));
    m.check_versions(10);
    let expected: Vec<i64> = (1..=40)
        .filter(|i| ![3, 6, 12, 18, 24, 30, 33].contains(i))
        .collect();
    assert_eq!(m.ids[12], expected);
    // The tombstones are in the checkpoint, with their partitions.
    let cp = delta::replay(&m.location, Some(10)).unwrap().unwrap();
    assert!(cp.removed.values().all(|r| {
        r.extended_file_metadata == Some(true)
            && r.partition_values
                .as_ref()
                .is_some_and(|p| p.contains_key("grp"))
    }));
    assert_eq!(cp.removed.len(), removed_by_10);

    let Some(python) = python() else {
        return;
    };
    let got = deltalake(&python, &root, 10, 11);
    assert_eq!(got["version"], 12);
    for v in 10..=12 {
        assert_eq!(
            got["versions"][v.to_string()],
            serde_json::json!(m.ids[v]),
            "version {v}"
        );
    }
    assert_eq!(got["protocol"], serde_json::json!([1, 4, null, null]));
    assert_eq!(got["cdf"], expected_changes(&m, 11));
}

#[test]
fn conflicts_and_bad_input_leave_the_table_readable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    let mut m = Model::new(&root, &[("a", rows(1..=5)), ("b", rows(6..=10))]);
    // Two deletes of rows of the same file, both read at version 0: the
    // second aborts and the table stays at the first's version.
    let old = m.file_of(2);
    let first = [m.write("a", rows([1, 3, 4, 5]))];
    let second = [m.write("a", rows([1, 2, 4, 5]))];
    m.live.remove(&second[0].0);
    let first_cdc = [m.write_changes("a", &[(rows([2])[0].clone(), ChangeType::Delete)])];
    let second_cdc = cdc::write(
        &m.location,
        "_change_data/grp=a/cdc-lost.parquet",
        &[cdc::with_change_type(&batch(&rows([3])), ChangeType::Delete).unwrap()],
    )
    .unwrap();
    m.live.remove(&old);
    let change = |added, cdc| Change {
        location: &m.location,
        read_version: 0,
        operation: Operation::Delete { predicate: None },
        added,
        removed: std::slice::from_ref(&old),
        data_change: true,
        change_files: cdc,
        also_read: &[],
        deleted_rows: &[],
    };
    let c = delta::commit_change(&change(&first, &first_cdc)).unwrap();
    assert_eq!(c.version, 1);
    let e = delta::commit_change(&change(&second, std::slice::from_ref(&second_cdc))).unwrap_err();
    assert!(matches!(e, Error::Conflict { version: 1, .. }), "{e}");
    assert_eq!(log_entries(&root), [log_file_name(0), log_file_name(1)]);
    m.version = 1;
    m.ids.push(m.current_ids());

    // A change read at version 1 races a blind append that lands first
    // as version 2: it goes on top, as version 3, and both hold.
    let old = m.file_of(6);
    let rewritten = [m.write("b", rows(7..=10))];
    let cdc = [m.write_changes("b", &[(rows([6])[0].clone(), ChangeType::Delete)])];
    m.live.remove(&old);
    let appended = [m.write("b", rows(11..=12))];
    let schema = TableSchema::new(&table_schema()).unwrap();
    let append = delta::create(&NewTable {
        location: &m.location,
        schema: &schema,
        partition: &[PartitionField::parse("grp").unwrap()],
        files: &appended,
    })
    .unwrap();
    assert_eq!(append.version, 2);
    for r in rows(11..=12) {
        m.changes.push((r.0, r.1, "b".into(), "insert".into(), 2));
    }
    // The change's delete of 6 lands in version 3, not 2.
    for c in m.changes.iter_mut().filter(|c| c.0 == 6 && c.3 == "delete") {
        c.4 = 3;
    }
    let c = delta::commit_change(&Change {
        location: &m.location,
        read_version: 1,
        operation: Operation::Delete {
            predicate: Some("id = 6".into()),
        },
        added: &rewritten,
        removed: std::slice::from_ref(&old),
        data_change: true,
        change_files: &cdc,
        also_read: &[],
        deleted_rows: &[],
    })
    .unwrap();
    assert_eq!(c.version, 3);
    m.version = 3;
    m.ids
        .push(m.ids[1].iter().copied().chain([11, 12]).collect::<Vec<_>>());
    let mut now = m.current_ids();
    now.sort_unstable();
    m.ids.push(now);
    m.check_versions(0);

    // Removing a file that is not live: a clear error, nothing written.
    let again = [m.write("b", rows(7..=9))];
    let e = delta::commit_change(&Change {
        location: &m.location,
        read_version: 3,
        operation: Operation::Delete { predicate: None },
        added: &again,
        removed: std::slice::from_ref(&old),
        data_change: true,
        change_files: &cdc,
        also_read: &[],
        deleted_rows: &[],
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(&old) && e.contains("not a live data file of the Delta table at version 3"),
        "{e}"
    );
    assert_eq!(log_entries(&root).len(), 4);

    let Some(python) = python() else {
        return;
    };
    let got = deltalake(&python, &root, 0, 0);
    assert_eq!(got["version"], 3);
    for (v, ids) in m.ids.iter().enumerate() {
        assert_eq!(
            got["versions"][v.to_string()],
            serde_json::json!(ids),
            "version {v}"
        );
    }
    assert_eq!(
        got["history"],
        serde_json::json!([[3, "DELETE"], [2, "WRITE"], [1, "DELETE"], [0, "WRITE"]])
    );
    assert_eq!(got["cdf"], expected_changes(&m, 0));
}

#[test]
fn a_table_of_reader_features_names_the_change_data_feed_among_its_writer_features() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    let location = TableDir::local(&root).unwrap();
    let schema = TableSchema::new(&Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new(
            "at",
            DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, None),
            true,
        ),
    ]))
    .unwrap();
    delta::create_with(
        &NewTable {
            location: &location,
            schema: &schema,
            partition: &[],
            files: &[],
        },
        &BTreeMap::from([(properties::CHANGE_DATA_FEED.to_string(), "true".to_string())]),
    )
    .unwrap();
    let state = delta::replay(&location, None).unwrap().unwrap();
    let p = &state.protocol;
    assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
    assert_eq!(
        p.reader_features.as_deref(),
        Some(&["timestampNtz".to_string()][..])
    );
    assert_eq!(
        p.writer_features.as_deref(),
        Some(&["changeDataFeed".to_string(), "timestampNtz".to_string()][..])
    );
    assert!(properties::change_data_feed(p, &state.meta));

    let Some(python) = python() else {
        return;
    };
    let got = deltalake(&python, &root, 0, 0);
    assert_eq!(
        got["protocol"],
        serde_json::json!([3, 7, ["timestampNtz"], ["changeDataFeed", "timestampNtz"]])
    );
    assert_eq!(got["versions"]["0"], serde_json::json!([]));
    assert_eq!(got["cdf"], serde_json::json!([]));
}

#[test]
fn rows_deleted_by_deletion_vectors_read_back_from_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    let mut m = Model::with(
        &root,
        &[
            ("a", rows(1..=10)),
            ("a", rows(11..=20)),
            ("b", rows(21..=30)),
        ],
        &[(properties::DELETION_VECTORS, "true")],
    );
    // Rows deleted by vectors, twice in one file; an update rewriting a
    // file; compaction of a file with a vector; then more vectors, past
    // the checkpoint at version 10.
    let c = m.delete_by_vector(&[2, 3]);
    assert_eq!((c.files, c.removed, c.change_files), (1, 1, 1));
    m.delete_by_vector(&[5]);
    m.update(22, "twenty-two");
    m.optimize("a");
    for id in [7, 12, 24, 26, 13, 17] {
        m.delete_by_vector(&[id]);
    }
    m.delete_by_vector(&[29, 30]);
    assert_eq!(m.version, 11);
    let expected: Vec<i64> = (1..=30)
        .filter(|i| ![2, 3, 5, 7, 12, 13, 17, 24, 26, 29, 30].contains(i))
        .collect();
    assert_eq!(m.ids[11], expected);
    m.check_versions(0);
    let state = delta::replay(&m.location, None).unwrap().unwrap();
    assert_eq!(state.checkpoint, Some(10));
    assert!(state.files.values().any(|a| a.deletion_vector.is_some()));

    let python = python();
    if let Some(python) = &python {
        let got = deltalake(python, &root, 0, 0);
        assert_eq!(got["version"], 11);
        for (v, ids) in m.ids.iter().enumerate() {
            assert_eq!(
                got["versions"][v.to_string()],
                serde_json::json!(ids),
                "version {v}"
            );
        }
        assert_eq!(
            got["protocol"],
            serde_json::json!([
                3,
                7,
                ["deletionVectors"],
                ["changeDataFeed", "deletionVectors"]
            ])
        );
        assert_eq!(got["cdf"], expected_changes(&m, 0));
    }
    // Without the entries before the checkpoint.
    for v in 0..10 {
        std::fs::remove_file(root.join(LOG_DIR).join(log_file_name(v))).unwrap();
    }
    m.check_versions(10);
    if let Some(python) = &python {
        let got = deltalake(python, &root, 10, 11);
        assert_eq!(got["versions"]["10"], serde_json::json!(m.ids[10]));
        assert_eq!(got["versions"]["11"], serde_json::json!(m.ids[11]));
        assert_eq!(got["cdf"], expected_changes(&m, 11));
    }
}
