//! A partitioned Iceberg table through four commits: an append, a change
//! that deletes rows by position, a copy-on-write change (a file removed,
//! its rewritten version added) and a `replace` that rewrites two files
//! into one. After each, `live_files` is checked, and pyiceberg reads the
//! table as an oracle when `STRATA_BENCH_PYTHON` names a Python that has
//! it: the rows of the current and of every older snapshot, each
//! snapshot's operation and summary, and the files it lists. Then changes
//! the table cannot take are refused, the table unchanged.

use std::{collections::BTreeMap, fs::File, path::Path, sync::Arc};

use arrow_array::{Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::file::properties::WriterProperties;
use serde_json::Value;
use strata_layout::PartitionField;
use strata_parquet::writer::ParquetWriter;
use strata_table::{
    Error,
    dir::TableDir,
    iceberg::{
        self, Change, Committed, Content, DELETE_POS_ID, LiveFile, NewTable, PositionDeletes,
        TableSchema, values::PartValue,
    },
    stats::{self, Bound, FileFacts},
};

/// A table in a temporary directory, partitioned by `part`.
struct Table {
    _tmp: tempfile::TempDir,
    location: TableDir,
    schema: TableSchema,
    partition: Vec<PartitionField>,
}

impl Table {
    fn new() -> Table {
        let tmp = tempfile::tempdir().unwrap();
        let location = TableDir::local(&tmp.path().join("t")).unwrap();
        let arrow = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("part", DataType::Int32, false),
            Field::new("name", DataType::Utf8, true),
        ]);
        Table {
            _tmp: tmp,
            location,
            schema: TableSchema::new(&arrow).unwrap(),
            partition: vec![PartitionField::parse("part").unwrap()],
        }
    }

    /// Writes data file `rel` of rows `ids`, all in partition `part`, with
    /// strata's Parquet writer; returns it with its facts.
    fn data_file(&self, rel: &str, part: i32, ids: &[i64]) -> (String, FileFacts) {
        let path = self.location.at(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let batch = RecordBatch::try_new(
            self.schema.arrow.clone(),
            vec![
                Arc::new(Int64Array::from(ids.to_vec())),
                Arc::new(Int32Array::from(vec![part; ids.len()])),
                Arc::new(StringArray::from(
                    ids.iter().map(|i| format!("n{i}")).collect::<Vec<_>>(),
                )),
            ],
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
        (rel.to_string(), stats::read_file(&path).unwrap())
    }

    fn new_table<'a>(&'a self, files: &'a [(String, FileFacts)]) -> NewTable<'a> {
        NewTable {
            location: &self.location,
            schema: &self.schema,
            arrow: &self.schema.arrow,
            partition: &self.partition,
            sort: &[],
            properties: BTreeMap::new(),
            files,
        }
    }

    fn change(
        &self,
        added: &[(String, FileFacts)],
        removed: &[&str],
        position_deletes: Vec<PositionDeletes>,
        replace: bool,
    ) -> Result<Committed, Error> {
        iceberg::commit_change(
            &Change {
                table: self.new_table(added),
                removed: removed.iter().map(|r| r.to_string()).collect(),
                position_deletes,
                equality_deletes: Vec::new(),
                replace,
            },
            None,
        )
    }

    /// Every file under the table, with its size.
    fn listing(&self) -> Vec<(String, u64)> {
        self.location
            .list_all("")
            .unwrap()
            .into_iter()
            .map(|(p, b, _)| (p, b))
            .collect()
    }
}

fn deletes(file: &str, positions: &[u64]) -> PositionDeletes {
    PositionDeletes {
        file: file.to_string(),
        positions: positions.to_vec(),
    }
}

/// The live file recorded at `path`.
fn find<'l>(live: &'l [LiveFile], path: &str) -> &'l LiveFile {
    live.iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} is not live: {live:#?}"))
}

/// The live data files' relative paths and the delete files' targets.
fn shape(t: &Table, live: &[LiveFile]) -> (Vec<String>, Vec<String>) {
    let rel = |p: &str| t.location.relative(p).unwrap();
    let mut data: Vec<String> = live
        .iter()
        .filter(|f| f.content == Content::Data)
        .map(|f| rel(&f.path))
        .collect();
    let mut targets: Vec<String> = live
        .iter()
        .filter(|f| f.content == Content::PositionDeletes)
        .map(|f| {
            rel(f
                .referenced_data_file()
                .expect("one data file per delete file"))
        })
        .collect();
    data.sort();
    targets.sort();
    (data, targets)
}

const ORACLE: &str = r#"
import json, sys
from pyiceberg.table import StaticTable

t = StaticTable.from_metadata(sys.argv[1])
ids = lambda scan: sorted(scan.to_arrow().column("id").to_pylist())
files = t.inspect.files()
out = {
    "current": ids(t.scan()),
    "files": sorted(zip(files.column("content").to_pylist(), files.column("file_path").to_pylist(),
                        files.column("record_count").to_pylist())),
    "snapshots": [],
}
for s in t.snapshots():
    out["snapshots"].append({
        "id": s.snapshot_id,
        "parent": s.parent_snapshot_id,
        "sequence": s.sequence_number,
        "summary": {k: str(v) for k, v in s.summary.model_dump().items()},
        "ids": ids(t.scan(snapshot_id=s.snapshot_id)),
    })
print(json.dumps(out))
"#;

/// What pyiceberg reads of the table's newest version, when
/// `STRATA_BENCH_PYTHON` names a Python with it.
fn pyiceberg(metadata: &Path) -> Option<Value> {
    let python = std::env::var_os("STRATA_BENCH_PYTHON")?;
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(ORACLE)
        .arg(metadata)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pyiceberg failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// One commit's expectations: its snapshot, operation, the table's rows
/// after it and summary fields.
struct Version {
    snapshot_id: i64,
    operation: &'static str,
    ids: Vec<i64>,
    summary: Vec<(&'static str, u64)>,
}

/// Checks the table's newest version `metadata` with pyiceberg against
/// `versions` (one per commit, oldest first) and `live`.
fn check_with_pyiceberg(metadata: &Path, versions: &[Version], live: &[LiveFile]) {
    let Some(read) = pyiceberg(metadata) else {
        println!("STRATA_BENCH_PYTHON is not set: the pyiceberg half of this test is skipped");
        return;
    };
    let ids = |v: &Value| -> Vec<i64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_i64().unwrap())
            .collect()
    };
    let newest = versions.last().unwrap();
    assert_eq!(
        ids(&read["current"]),
        newest.ids,
        "pyiceberg's current rows"
    );
    let snapshots = read["snapshots"].as_array().unwrap();
    assert_eq!(snapshots.len(), versions.len(), "{read:#}");
    for (k, (s, v)) in snapshots.iter().zip(versions).enumerate() {
        assert_eq!(s["id"].as_i64(), Some(v.snapshot_id));
        assert_eq!(s["sequence"].as_i64(), Some(k as i64 + 1));
        let parent = (k > 0).then(|| versions[k - 1].snapshot_id);
        assert_eq!(s["parent"].as_i64(), parent);
        assert_eq!(s["summary"]["operation"], v.operation, "snapshot {k}");
        assert_eq!(ids(&s["ids"]), v.ids, "pyiceberg's rows of snapshot {k}");
        for (key, n) in &v.summary {
            assert_eq!(
                s["summary"][*key].as_str(),
                Some(n.to_string().as_str()),
                "snapshot {k}'s {key}: {:#}",
                s["summary"]
            );
        }
    }
    let mut ours: Vec<(i64, String, u64)> = live
        .iter()
        .map(|f| (i64::from(f.content.code()), f.path.clone(), f.record_count))
        .collect();
    ours.sort();
    let theirs: Vec<(i64, String, u64)> = read["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f[0].as_i64().unwrap(),
                f[1].as_str().unwrap().to_string(),
                f[2].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ours, theirs, "pyiceberg's files against live_files");
}

fn range(ids: std::ops::Range<i64>, without: &[i64]) -> Vec<i64> {
    ids.filter(|i| !without.contains(i)).collect()
}

#[test]
fn deletes_rewrites_and_a_replace_read_back() {
    let t = Table::new();
    let a = t.data_file("data/part=0/a.parquet", 0, &range(0..10, &[]));
    let b = t.data_file("data/part=0/b.parquet", 0, &range(10..20, &[]));
    let c = t.data_file("data/part=1/c.parquet", 1, &range(20..30, &[]));
    let mut versions: Vec<Version> = Vec::new();

    // 1. An append.
    let v1 = iceberg::commit(&t.new_table(&[a.clone(), b.clone(), c.clone()]), None).unwrap();
    assert_eq!((v1.version, v1.operation), (1, "append"));
    let live = iceberg::live_files(&t.location).unwrap();
    assert_eq!(live.len(), 3);
    let a_path = t.location.uri(&a.0);
    let fa = find(&live, &a_path);
    assert_eq!(fa.content, Content::Data);
    assert_eq!(fa.partition, vec![("part".to_string(), PartValue::Int(0))]);
    assert_eq!((fa.record_count, fa.file_size), (10, a.1.bytes));
    assert_eq!((fa.sequence_number, fa.file_sequence_number), (1, 1));
    assert_eq!(fa.snapshot_id, v1.snapshot_id);
    assert_eq!(fa.lower.get(&1), Some(&Bound::Int(0)));
    assert_eq!(fa.upper.get(&1), Some(&Bound::Int(9)));
    assert_eq!(fa.upper.get(&3), Some(&Bound::Bytes(b"n9".to_vec())));
    versions.push(Version {
        snapshot_id: v1.snapshot_id,
        operation: "append",
        ids: range(0..30, &[]),
        summary: vec![
            ("added-data-files", 3),
            ("added-records", 30),
            ("total-records", 30),
            ("total-data-files", 3),
            ("total-delete-files", 0),
        ],
    });
    check_with_pyiceberg(&v1.metadata, &versions, &live);

    // 2. Rows deleted by position: two of `a` (named as recorded and
    // relative to the table, in any order, one twice) and one of `c`.
    let v2 = t
        .change(
            &[],
            &[],
            vec![
                deletes(&a_path, &[3, 1]),
                deletes(&c.0, &[0]),
                deletes(&a.0, &[3]),
            ],
            false,
        )
        .unwrap();
    assert_eq!((v2.version, v2.operation), (2, "delete"));
    let live = iceberg::live_files(&t.location).unwrap();
    assert_eq!(
        shape(&t, &live),
        (
            vec![a.0.clone(), b.0.clone(), c.0.clone()],
            vec![a.0.clone(), c.0.clone()]
        )
    );
    let da = live
        .iter()
        .find(|f| f.referenced_data_file() == Some(a_path.as_str()))
        .unwrap();
    assert_eq!(da.content, Content::PositionDeletes);
    assert_eq!(da.record_count, 2);
    assert_eq!((da.sequence_number, da.snapshot_id), (2, v2.snapshot_id));
    assert_eq!(da.partition, vec![("part".to_string(), PartValue::Int(0))]);
    assert_eq!(da.lower.get(&DELETE_POS_ID), Some(&Bound::Int(1)));
    assert_eq!(da.upper.get(&DELETE_POS_ID), Some(&Bound::Int(3)));
    assert!(
        t.location
            .relative(&da.path)
            .unwrap()
            .starts_with("data/part=0/"),
        "{}",
        da.path
    );
    // The data files keep their sequence number, below the deletes'.
    assert_eq!(find(&live, &a_path).sequence_number, 1);
    versions.push(Version {
        snapshot_id: v2.snapshot_id,
        operation: "delete",
        ids: range(0..30, &[1, 3, 20]),
        summary: vec![
            ("added-delete-files", 2),
            ("added-position-delete-files", 2),
            ("added-position-deletes", 3),
            ("changed-partition-count", 2),
            ("total-records", 30),
            ("total-data-files", 3),
            ("total-delete-files", 2),
            ("total-position-deletes", 3),
        ],
    });
    check_with_pyiceberg(&v2.metadata, &versions, &live);

    // 3. Copy-on-write: `b` rewritten without two rows.
    let b2 = t.data_file("data/part=0/b2.parquet", 0, &range(10..20, &[12, 15]));
    let v3 = t
        .change(std::slice::from_ref(&b2), &[&b.0], Vec::new(), false)
        .unwrap();
    assert_eq!((v3.version, v3.operation), (3, "overwrite"));
    assert_eq!((v3.rows, v3.total_rows), (8, 28));
    let live = iceberg::live_files(&t.location).unwrap();
    assert_eq!(
        shape(&t, &live),
        (
            vec![a.0.clone(), b2.0.clone(), c.0.clone()],
            vec![a.0.clone(), c.0.clone()]
        )
    );
    let b2_path = t.location.uri(&b2.0);
    assert_eq!(find(&live, &b2_path).sequence_number, 3);
    // `a` was carried into a rewritten manifest as an existing entry,
    // its numbers kept.
    let fa = find(&live, &a_path);
    assert_eq!((fa.sequence_number, fa.snapshot_id), (1, v1.snapshot_id));
    versions.push(Version {
        snapshot_id: v3.snapshot_id,
        operation: "overwrite",
        ids: range(0..30, &[1, 3, 12, 15, 20]),
        summary: vec![
            ("added-data-files", 1),
            ("deleted-data-files", 1),
            ("added-records", 8),
            ("deleted-records", 10),
            ("changed-partition-count", 1),
            ("total-records", 28),
            ("total-data-files", 3),
            ("total-delete-files", 2),
            ("total-position-deletes", 3),
        ],
    });
    check_with_pyiceberg(&v3.metadata, &versions, &live);

    // 4. Compaction: `a` (less its deleted rows) and `b2` into one file;
    // `a`'s delete file goes with it.
    let mut ab_ids = range(0..10, &[1, 3]);
    ab_ids.extend(range(10..20, &[12, 15]));
    let ab = t.data_file("data/part=0/ab.parquet", 0, &ab_ids);
    let v4 = t
        .change(std::slice::from_ref(&ab), &[&a.0, &b2.0], Vec::new(), true)
        .unwrap();
    assert_eq!((v4.version, v4.operation), (4, "replace"));
    let live = iceberg::live_files(&t.location).unwrap();
    assert_eq!(
        shape(&t, &live),
        (vec![ab.0.clone(), c.0.clone()], vec![c.0.clone()])
    );
    versions.push(Version {
        snapshot_id: v4.snapshot_id,
        operation: "replace",
        ids: range(0..30, &[1, 3, 12, 15, 20]),
        summary: vec![
            ("added-data-files", 1),
            ("deleted-data-files", 2),
            ("added-records", 16),
            ("deleted-records", 18),
            ("removed-delete-files", 1),
            ("removed-position-delete-files", 1),
            ("removed-position-deletes", 2),
            ("total-records", 26),
            ("total-data-files", 2),
            ("total-delete-files", 1),
            ("total-position-deletes", 1),
        ],
    });
    check_with_pyiceberg(&v4.metadata, &versions, &live);

    // Older snapshots still list their files.
    let at_v2 = iceberg::live_files_at(&t.location, Some(v2.snapshot_id)).unwrap();
    assert_eq!(
        shape(&t, &at_v2),
        (
            vec![a.0.clone(), b.0.clone(), c.0.clone()],
            vec![a.0.clone(), c.0.clone()]
        )
    );

    refused_changes_leave_the_table(&t, &[&a, &b, &c, &ab]);
}

/// Changes the table of `deletes_rewrites_and_a_replace_read_back` cannot
/// take: each refused with a clear error, nothing written.
fn refused_changes_leave_the_table(t: &Table, files: &[&(String, FileFacts)]) {
    let [a, b, c, ab] = files else { unreachable!() };
    let before = t.listing();
    let version = iceberg::current(&t.location).unwrap().unwrap().version;
    let refused = |e: Error, says: &str| {
        assert!(matches!(e, Error::BadChange { .. }), "{e:?}");
        assert!(e.to_string().contains(says), "{e}");
        assert_eq!(t.listing(), before, "after: {e}");
        assert_eq!(
            iceberg::current(&t.location).unwrap().unwrap().version,
            version
        );
    };
    // A row past the file's end (`c` holds 10 rows).
    let e = t
        .change(&[], &[], vec![deletes(&c.0, &[2, 10])], false)
        .unwrap_err();
    refused(e, "row 10 is past the file's end (it holds 10 rows)");
    // Files the table no longer holds, or never held.
    let e = t.change(&[], &[&a.0], Vec::new(), false).unwrap_err();
    refused(e, "not a live data file");
    let e = t.change(&[], &[&b.0], Vec::new(), false).unwrap_err();
    refused(e, "not a live data file");
    let e = t
        .change(
            &[],
            &[],
            vec![deletes("data/part=9/x.parquet", &[0])],
            false,
        )
        .unwrap_err();
    refused(e, "not a live data file");
    // A delete file is not a data file.
    let live = iceberg::live_files(&t.location).unwrap();
    let d = live
        .iter()
        .find(|f| f.content == Content::PositionDeletes)
        .unwrap();
    let e = t.change(&[], &[&d.path], Vec::new(), false).unwrap_err();
    refused(e, "a delete file");
    // Rows of a file the change also removes.
    let e = t
        .change(&[], &[&c.0], vec![deletes(&c.0, &[1])], false)
        .unwrap_err();
    refused(e, "both removes");
    // An added file the table holds.
    let e = t
        .change(&[(*ab).clone()], &[&c.0], Vec::new(), false)
        .unwrap_err();
    refused(e, "already a live file");
    // A replace that does not keep the rows: `c` holds 9 live rows.
    let c2 = t.data_file("data/part=1/c2.parquet", 1, &range(20..31, &[]));
    let before = t.listing();
    let e = t
        .change(std::slice::from_ref(&c2), &[&c.0], Vec::new(), true)
        .unwrap_err();
    assert!(matches!(e, Error::BadChange { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("its files hold 11 rows where the files it removes hold 9 to 10"),
        "{e}"
    );
    assert_eq!(t.listing(), before);
    let e = t
        .change(&[], &[], vec![deletes(&c.0, &[1])], true)
        .unwrap_err();
    assert!(e.to_string().contains("deletes none"), "{e}");
}

/// Equality deletes on `id`: one delete file per change, its entry naming
/// the key's field id, of the change's sequence number (so it applies to
/// the older file, not to the row the change adds again), counted in the
/// snapshot summary. A key column the table lacks or holds as another
/// type, and equality deletes of a partitioned table, are refused with
/// the table unchanged.
#[test]
fn equality_deletes_name_their_key_and_apply_to_older_files() {
    use arrow_array::ArrayRef;
    let keys = |name: &str, ids: ArrayRef| RecordBatch::try_from_iter([(name, ids)]).unwrap();
    let ids = |v: Vec<i64>| Arc::new(Int64Array::from(v)) as ArrayRef;
    let mut t = Table::new();
    t.partition.clear();
    let a = t.data_file("data/a.parquet", 1, &[1, 2, 3, 4]);
    iceberg::commit(&t.new_table(std::slice::from_ref(&a)), None).unwrap();
    let b = t.data_file("data/b.parquet", 1, &[2, 5]);
    let change = |files: &[(String, FileFacts)], eq: Vec<RecordBatch>, t: &Table| {
        iceberg::commit_change(
            &Change {
                table: t.new_table(files),
                removed: Vec::new(),
                position_deletes: Vec::new(),
                equality_deletes: eq,
                replace: false,
            },
            None,
        )
    };
    let c = change(
        std::slice::from_ref(&b),
        vec![keys("id", ids(vec![2, 3]))],
        &t,
    )
    .unwrap();
    let live = iceberg::live_files(&t.location).unwrap();
    let eq: Vec<&LiveFile> = live
        .iter()
        .filter(|f| f.content == Content::EqualityDeletes)
        .collect();
    assert_eq!(eq.len(), 1);
    assert_eq!(
        eq[0].equality_ids,
        vec![t.schema.ids[&vec!["id".to_string()]]]
    );
    assert_eq!(eq[0].record_count, 2);
    let seq = |rel: &str| find(&live, &t.location.uri(rel)).sequence_number;
    assert!(seq("data/a.parquet") < eq[0].sequence_number);
    assert_eq!(seq("data/b.parquet"), eq[0].sequence_number);
    let meta: Value = serde_json::from_slice(&std::fs::read(&c.metadata).unwrap()).unwrap();
    let summary = &meta["snapshots"][1]["summary"];
    assert_eq!(summary["operation"], "overwrite", "{summary}");
    assert_eq!(summary["added-equality-deletes"], "2", "{summary}");
    assert_eq!(summary["added-equality-delete-files"], "1", "{summary}");
    assert_eq!(summary["total-equality-deletes"], "2", "{summary}");
    assert!(summary.get("added-position-deletes").is_none(), "{summary}");

    let before = t.listing();
    for (bad, why) in [
        (keys("nope", ids(vec![1])), "lacks"),
        (
            keys("id", Arc::new(StringArray::from(vec!["1"])) as ArrayRef),
            "the table holds Int64",
        ),
    ] {
        let e = change(&[], vec![bad], &t).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
        assert_eq!(t.listing(), before);
    }
    let p = Table::new();
    let a = p.data_file("data/part=1/a.parquet", 1, &[1, 2]);
    iceberg::commit(&p.new_table(std::slice::from_ref(&a)), None).unwrap();
    let before = p.listing();
    let e = change(&[], vec![keys("id", ids(vec![1]))], &p)
        .unwrap_err()
        .to_string();
    assert!(e.contains("equality deletes of a partitioned table"), "{e}");
    assert_eq!(p.listing(), before);
}
