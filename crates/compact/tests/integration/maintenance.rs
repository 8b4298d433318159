//! Keeping a dataset: outputs hidden from globs until the switch,
//! manifests checked when read, descending keys, rebuilding a manifest
//! and registering new files.

use std::{fs::File, path::Path, sync::Arc};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SortOptions};
use parquet::{arrow::ArrowWriter, file::properties::WriterProperties};
use strata_compact::{
    Error, Step,
    dataset::{InitOptions, add, execute, init, init_with, plan_dataset, remove_leftovers},
    planner::PlannerOptions,
    storage::{
        Dataset, MANIFEST,
        manifest::{KeyOrder, Manifest, from_hex},
    },
};
use strata_row::KeyColumns;
use strata_testkit::readback::{multiset_hash, read_batches, rows_as_text};

use crate::dataset::{check, dataset, schema};

/// The visible `*.parquet` files of `dir`: what a glob over it reads.
fn globbed(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".parquet") && !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

fn listed(m: &Manifest) -> Vec<String> {
    let mut names: Vec<String> = m.files.iter().map(|f| f.name.clone()).collect();
    names.sort();
    names
}

/// Until the switch, the merged files are hidden: a glob sees exactly
/// the manifest's files before the compaction, and after it; a run that
/// stops before the switch leaves nothing a glob sees.
#[test]
fn outputs_stay_hidden_until_the_switch() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_path_buf();
    dataset(&p, 5, 3000, 11);
    init(&Dataset::local(&p), &["k".into()], false).unwrap();
    let before = Manifest::load(&p).unwrap();
    let hook = |step: Step| -> Result<(), Error> {
        if matches!(step, Step::Start | Step::Merged) {
            assert_eq!(globbed(&p), listed(&before), "{step:?}");
        }
        if step == Step::Merged {
            let hidden: Vec<String> = std::fs::read_dir(&p)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".part-") && n.ends_with(".strata-new"))
                .collect();
            assert!(!hidden.is_empty(), "the outputs are written hidden");
        }
        if step == Step::Done {
            assert_eq!(globbed(&p), listed(&Manifest::load(&p).unwrap()));
        }
        Ok(())
    };
    let done = execute(&Dataset::local(&p), &[0, 1, 2, 3], 4_000, &hook).unwrap();
    assert!(done.written.len() > 1);
    for w in &done.written {
        assert!(w.path.exists(), "{}", w.path.display());
        assert!(
            !w.path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with('.')
        );
    }
    assert_eq!(globbed(&p), listed(&done.manifest));

    // Stopped after the merge: the glob still sees the old files only,
    // and the next run removes the hidden outputs.
    let m = Manifest::load(&p).unwrap();
    let e = execute(&Dataset::local(&p), &[0, 1], 30_000, &|s| {
        if s == Step::Merged {
            Err(Error::Injected(s))
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert!(matches!(e, Error::Injected(Step::Merged)), "{e}");
    assert_eq!(globbed(&p), listed(&m));
    // A killed run leaves its hidden outputs behind: the next run removes
    // them.
    std::fs::write(p.join(".part-000009-00000000.parquet.strata-new"), b"x").unwrap();
    let removed = remove_leftovers(&Dataset::local(&p), &m);
    assert_eq!(removed, [".part-000009-00000000.parquet.strata-new"]);
    check(&p);
    // A revealed output of a generation that never committed is removed
    // too; a user's `part-*` files and a committed generation's names are
    // not, listed or not.
    let next = format!("part-{:06}-00000000.parquet", m.generation + 1);
    let kept = [
        "part-00000-6f1c2a.snappy.parquet".to_string(),
        format!("part-{:06}-00000007.parquet", m.generation),
        "part-00000000.parquet".to_string(),
    ];
    for name in kept.iter().chain([&next]) {
        std::fs::write(p.join(name), b"x").unwrap();
    }
    // A running process's temporary stays; a gone one's goes.
    let gone = ".extra_1.parquet.4294967294.strata-tmp".to_string();
    let live_child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let live = format!(".extra_2.parquet.{}.strata-tmp", live_child.id());
    for name in [&gone, &live] {
        std::fs::write(p.join(name), b"x").unwrap();
    }
    let removed = remove_leftovers(&Dataset::local(&p), &m);
    let mut want = vec![gone.clone(), next.clone()];
    want.sort();
    let mut got = removed.clone();
    got.sort();
    assert_eq!(got, want);
    assert!(p.join(&live).exists());
    std::fs::remove_file(p.join(&live)).unwrap();
    let mut live_child = live_child;
    let _ = live_child.kill();
    let _ = live_child.wait();
    for name in &kept {
        assert!(p.join(name).exists(), "{name} was removed");
        std::fs::remove_file(p.join(name)).unwrap();
    }
    check(&p);
}

/// Every file of `from` (the manifest included) copied into `to`.
fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A machine crash in the switch may keep some of its renames and not
/// others (they are made durable together by one directory sync). Either
/// way the next run puts back every listed file found under its hidden
/// name and removes the rest: the rows are the rows before (or after).
#[test]
fn a_crash_that_keeps_some_renames_of_the_switch_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    dataset(p, 5, 3000, 11);
    init(&Dataset::local(p), &["k".into()], false).unwrap();
    let before_dir = tempfile::tempdir().unwrap();
    copy_dir(p, before_dir.path());
    let (before, rows) = check(p);
    let done = execute(&Dataset::local(p), &[0, 1, 2, 3], 4_000, &|_| Ok(())).unwrap();
    assert!(done.written.len() > 1);
    let after = done.manifest;
    let hidden = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect()
    };

    // The manifest's rename lost; an output's rename and a replaced
    // file's kept.
    let lost = tempfile::tempdir().unwrap();
    let q = lost.path();
    copy_dir(before_dir.path(), q);
    let out = &after.files[0].name;
    std::fs::copy(p.join(out), q.join(out)).unwrap();
    let old = &before.files[1].name;
    std::fs::rename(q.join(old), q.join(format!(".{old}.strata-old"))).unwrap();
    remove_leftovers(&Dataset::local(q), &Manifest::load(q).unwrap());
    assert_eq!(globbed(q), listed(&before));
    assert_eq!(check(q).1, rows);
    assert_eq!(hidden(q), Vec::<String>::new());

    // The manifest's rename kept; an output's rename lost, one replaced
    // file hidden and the others still visible.
    let kept = tempfile::tempdir().unwrap();
    let q = kept.path();
    copy_dir(before_dir.path(), q);
    std::fs::copy(p.join(MANIFEST), q.join(MANIFEST)).unwrap();
    for (i, f) in after.files.iter().enumerate() {
        let to = if i == 1 {
            format!(".{}.strata-new", f.name)
        } else {
            f.name.clone()
        };
        std::fs::copy(p.join(&f.name), q.join(to)).unwrap();
    }
    std::fs::rename(q.join(old), q.join(format!(".{old}.strata-old"))).unwrap();
    remove_leftovers(&Dataset::local(q), &Manifest::load(q).unwrap());
    assert_eq!(globbed(q), listed(&after));
    assert_eq!(check(q).1, rows);
    assert_eq!(hidden(q), Vec::<String>::new());
}

/// A manifest is checked when it is read: one without key columns (or
/// breaking another rule) is a clear error for planning and running
/// alike, never a panic.
#[test]
fn manifests_that_break_the_rules_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    dataset(p, 3, 500, 12);
    init(&Dataset::local(p), &["k".into()], false).unwrap();
    let good = std::fs::read_to_string(p.join(MANIFEST)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let first = v["files"][0]["name"].as_str().unwrap().to_string();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut m = v.clone();
        f(&mut m);
        std::fs::write(p.join(MANIFEST), serde_json::to_string(&m).unwrap()).unwrap();
    };
    type Edit<'a> = Box<dyn Fn(&mut serde_json::Value) + 'a>;
    let cases: Vec<(&str, Edit<'_>)> = vec![
        (
            "names no key columns",
            Box::new(|m| m["key"] = serde_json::json!([])),
        ),
        (
            "key column 'k' appears twice",
            Box::new(|m| m["key"] = serde_json::json!(["k", "k"])),
        ),
        (
            "2 key orders for 1 key columns",
            Box::new(|m| {
                let o = serde_json::json!({"descending": true, "nulls_first": true});
                m["order"] = serde_json::json!([o.clone(), o]);
            }),
        ),
        (
            "data files are visible .parquet files",
            Box::new(|m| m["files"][0]["name"] = ".hidden.parquet".into()),
        ),
        (
            "a path outside the dataset",
            Box::new(|m| m["obsolete"] = serde_json::json!(["../x.parquet"])),
        ),
        (
            "both lists",
            Box::new(|m| m["obsolete"] = serde_json::json!([first.clone()])),
        ),
        (
            "min_key sorts after its max_key",
            Box::new(|m| {
                let f = &mut m["files"][0];
                let (lo, hi) = (f["min_key"].clone(), f["max_key"].clone());
                f["min_key"] = hi;
                f["max_key"] = lo;
            }),
        ),
        (
            "is not a hex key",
            Box::new(|m| m["files"][0]["min_key"] = "zz".into()),
        ),
        ("generation is 0", Box::new(|m| m["generation"] = 0.into())),
    ];
    for (needle, f) in &cases {
        edit(f.as_ref());
        let text = std::fs::read_to_string(p.join(MANIFEST)).unwrap();
        let e = plan_dataset(&Dataset::local(p), &PlannerOptions::with_budget(100)).unwrap_err();
        assert!(e.to_string().contains(needle), "plan: {e}");
        assert!(e.to_string().contains("is not a valid manifest"), "{e}");
        let e = execute(&Dataset::local(p), &[0, 1, 2], 1 << 20, &|_| Ok(())).unwrap_err();
        assert!(e.to_string().contains(needle), "run: {e}");
        // Nothing changed.
        assert_eq!(std::fs::read_to_string(p.join(MANIFEST)).unwrap(), text);
        assert_eq!(
            globbed(p),
            ["in-00.parquet", "in-01.parquet", "in-02.parquet"]
        );
    }
    std::fs::write(p.join(MANIFEST), good).unwrap();
    check(p);
}

/// Writes `name` with rows `(k, s)` (already in the order wanted).
fn write(dir: &Path, name: &str, k: Vec<Option<i64>>, s: Vec<Option<&str>>, group_rows: usize) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(k)) as ArrayRef,
            Arc::new(StringArray::from(s)) as ArrayRef,
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(dir.join(name)).unwrap(), schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Rows `(k, s)` sorted by `k` descending (nulls first), then `s`
/// ascending, as `sort --by k:desc,s` writes them.
fn descending_rows(seed: i64, n: usize) -> (Vec<Option<i64>>, Vec<Option<String>>) {
    let mut rows: Vec<(Option<i64>, Option<String>)> = (0..n as i64)
        .map(|i| {
            let k = (i % 17 != 3).then_some((i * 7919 + seed * 31) % 500 + seed * 100);
            let s = (i % 5 != 1).then(|| format!("s{}", (i * 13) % 97));
            (k, s)
        })
        .collect();
    let opts = [
        SortOptions {
            descending: true,
            nulls_first: true,
        },
        SortOptions::default(),
    ];
    let (k, s): (Vec<_>, Vec<_>) = rows.iter().cloned().unzip();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(k)),
        Arc::new(StringArray::from(s)),
    ];
    let schema = Schema::new(vec![
        Field::new("k", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema.clone()), cols).unwrap();
    let keys = KeyColumns::new(&schema, &[("k", opts[0]), ("s", opts[1])])
        .unwrap()
        .encode(&batch)
        .unwrap();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| keys.row(a).as_bytes().cmp(keys.row(b).as_bytes()));
    let sorted: Vec<_> = idx.iter().map(|&i| rows[i].clone()).collect();
    rows = sorted;
    rows.into_iter().unzip()
}

/// Every row of the dataset as text, checking each listed file is sorted
/// in the manifest's order and starts and ends within its bounds.
fn check_ordered(dir: &Path) -> (Manifest, u64) {
    let m = Manifest::load(dir).unwrap();
    let named: Vec<(&str, SortOptions)> = m
        .key
        .iter()
        .map(String::as_str)
        .zip(m.sort_options())
        .collect();
    let mut all = Vec::new();
    for f in &m.files {
        let batches = read_batches(&dir.join(&f.name)).unwrap();
        let enc = KeyColumns::new(&batches[0].schema(), &named).unwrap();
        let mut keys = Vec::new();
        for b in &batches {
            keys.extend(enc.encode(b).unwrap().iter().map(|k| k.as_bytes().to_vec()));
        }
        assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{}", f.name);
        let (lo, hi) = (from_hex(&f.min_key).unwrap(), from_hex(&f.max_key).unwrap());
        assert!(lo <= keys[0] && keys[keys.len() - 1] <= hi, "{}", f.name);
        assert_eq!(keys.len() as u64, f.rows);
        all.extend(rows_as_text(&batches).unwrap());
    }
    (m, multiset_hash(&mut all))
}

/// A dataset sorted by a descending key (and an ascending second one)
/// is initialised from statistics or by reading the keys, and compacts
/// into files sorted the same way.
#[test]
fn a_descending_key_is_initialised_and_compacted() {
    for verify in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for f in 0..4 {
            let (k, s) = descending_rows(f, 3000);
            let s: Vec<Option<&str>> = s.iter().map(|v| v.as_deref()).collect();
            write(p, &format!("d{f}.parquet"), k, s, 400);
        }
        // Ascending is the wrong order for these files.
        let e = init(&Dataset::local(p), &["k".into()], true).unwrap_err();
        assert!(e.to_string().contains("is not sorted by k"), "{e}");
        let key = ["k:desc".to_string(), "s".to_string()];
        let m = init(&Dataset::local(p), &key, verify).unwrap();
        assert_eq!(m.key_text(), "k:desc,s");
        assert_eq!(
            m.order,
            [KeyOrder {
                descending: true,
                nulls_first: true
            }]
        );
        assert_eq!(m.format, 2, "a reader of format 1 must not take it");
        let (_, before) = check_ordered(p);
        let done = execute(&Dataset::local(p), &[0, 1, 2, 3], 4_000, &|_| Ok(())).unwrap();
        assert!(done.written.len() > 1);
        for w in done.written.windows(2) {
            assert!(w[0].max_key <= w[1].min_key);
        }
        let (m, after) = check_ordered(p);
        assert_eq!(after, before, "verify {verify}: rows kept");
        assert_eq!(m.rows(), 12_000);
        assert_eq!(m.key_text(), "k:desc,s");
    }
}

/// `init --force` rebuilds a manifest: after a run stopped between the
/// commit and the removals, it lists the compacted files and not the
/// replaced ones; over a manifest that cannot be read, every data file.
#[test]
fn init_force_rebuilds_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    dataset(p, 4, 1000, 13);
    init(&Dataset::local(p), &["k".into()], false).unwrap();
    let (_, before) = check(p);
    let e = init(&Dataset::local(p), &["k".into()], false).unwrap_err();
    assert!(e.to_string().contains("--force"), "{e}");
    let e = execute(&Dataset::local(p), &[0, 1, 2], 1 << 20, &|s| {
        if s == Step::Committed {
            Err(Error::Injected(s))
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert!(matches!(e, Error::Injected(Step::Committed)), "{e}");
    let force = InitOptions {
        verify: false,
        force: true,
    };
    let m = init_with(&Dataset::local(p), &["k".into()], force).unwrap();
    assert_eq!(m.generation, 3);
    assert_eq!(m.rows(), 4000, "the replaced files are not listed again");
    assert_eq!(globbed(p), listed(&m));
    assert_eq!(check(p).1, before);

    // A manifest that cannot be read: rebuilt over every data file.
    std::fs::write(p.join(MANIFEST), "{").unwrap();
    assert!(Manifest::load(p).is_err());
    let m = init_with(&Dataset::local(p), &["k".into()], force).unwrap();
    assert_eq!(m.generation, 1);
    assert_eq!(check(p).1, before);
}

/// `add` registers sorted files of the dataset's schema, once each; a
/// file that breaks a rule changes nothing.
#[test]
fn add_registers_sorted_files_of_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    dataset(p, 3, 800, 14);
    init(&Dataset::local(p), &["k".into()], false).unwrap();
    let (m0, _) = check(p);
    let names: Vec<String> = ["x.parquet".to_string()].into();
    // Not there yet.
    let e = add(&Dataset::local(p), &names).unwrap_err();
    assert!(e.to_string().contains("x.parquet: no such file"), "{e}");
    // A new sorted file: listed under the next generation.
    let more = tempfile::tempdir().unwrap();
    dataset(more.path(), 1, 700, 15);
    std::fs::rename(more.path().join("in-00.parquet"), p.join("x.parquet")).unwrap();
    let m = add(&Dataset::local(p), &names).unwrap();
    assert_eq!(m.generation, m0.generation + 1);
    assert_eq!(m.rows(), m0.rows() + 700);
    assert_eq!(globbed(p), listed(&m));
    check(p);
    let text = std::fs::read_to_string(p.join(MANIFEST)).unwrap();
    let refused = |name: &str, needle: &str| {
        let e = add(&Dataset::local(p), &[name.to_string()]).unwrap_err();
        assert!(e.to_string().contains(needle), "{name}: {e}");
        assert_eq!(std::fs::read_to_string(p.join(MANIFEST)).unwrap(), text);
    };
    refused("x.parquet", "already in the manifest");
    refused("../x.parquet", "give the name of a visible .parquet file");
    refused(".h.parquet", "give the name of a visible .parquet file");
    // A revealed output of a compaction that never committed.
    let uncommitted = format!("part-{:06}-00000000.parquet", m.generation + 1);
    std::fs::copy(p.join("x.parquet"), p.join(&uncommitted)).unwrap();
    refused(&uncommitted, "never committed");
    std::fs::remove_file(p.join(&uncommitted)).unwrap();
    // An unsorted file.
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values((0..50).rev())) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                (0..50).map(|i| i.to_string()),
            )) as ArrayRef,
        ],
    )
    .unwrap();
    let mut w =
        ArrowWriter::try_new(File::create(p.join("u.parquet")).unwrap(), schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    refused("u.parquet", "u.parquet is not sorted by k");
    // Another schema.
    write(p, "o.parquet", vec![Some(1), Some(2)], vec![None, None], 10);
    refused("o.parquet", "has a different schema");
    // And the dataset still compacts whole.
    let (m, before) = check(p);
    let all: Vec<usize> = (0..m.files.len()).collect();
    execute(&Dataset::local(p), &all, 1 << 20, &|_| Ok(())).unwrap();
    assert_eq!(check(p).1, before);
}

#[test]
fn malformed_dataset_urls_are_refused_not_taken_as_local_paths() {
    use strata_store::location::StoreConfig;
    let cfg = StoreConfig::default();
    for bad in ["s3:/bucket/x", "s3://", "s3:", "gs://bucket/x"] {
        let err = Dataset::open(bad, &cfg)
            .err()
            .unwrap_or_else(|| panic!("{bad} was accepted"));
        assert!(err.to_string().contains(bad), "{bad}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ds");
    let ds = Dataset::open(path.to_str().unwrap(), &cfg).unwrap();
    assert_eq!(ds.dir(), Some(path.as_path()));
}
