//! Laid-out output: partitions, sort order and sizes, through the flow
//! the CLI uses; the rows against the plain run's, the bytes against
//! other thread counts and memory limits, and bad layouts refused before
//! anything is written.

use std::{
    collections::BTreeMap,
    fs,
    path::{Path, PathBuf},
};

use arrow_array::{Array, RecordBatch, cast::AsArray, types::Int64Type};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use strata_gen::Dataset;
use strata_pipeline::{
    Error,
    flow::Flow,
    generate::{GenerateConfig, RunOptions, Summary},
    layout::LayoutFlags,
};

const SPEC: &str = r#"
name = "events"

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "day"
type = "date32"
uniform = { min = 2024-01-01, max = 2024-03-31 }

[[fields]]
name = "kind"
type = "utf8"
null_rate = 0.05
weighted = { values = ["click", "view", "buy"], weights = [0.5, 0.4, 0.1] }

[[fields]]
name = "score"
type = "int64"
uniform = { min = 0, max = 1000 }

[[fields]]
name = "note"
type = "utf8"
words = { min = 2, max = 8 }

[[fields]]
name = "tags"
type = "list"
length = { uniform = { min = 0, max = 3 } }
[fields.item]
type = "utf8"
words = { min = 1, max = 1 }
"#;

fn config(dir: &Path, records: u64, threads: usize) -> GenerateConfig {
    GenerateConfig {
        target_records: records,
        num_writers: 2,
        threads,
        output_dir: dir.to_path_buf(),
        compression: strata_parquet::Compression::Zstd(1),
        ..GenerateConfig::new("events")
    }
}

fn flags(partition: &str, sort: &str) -> LayoutFlags {
    LayoutFlags {
        partition_by: (!partition.is_empty())
            .then(|| partition.to_string())
            .into_iter()
            .collect(),
        sort_by: (!sort.is_empty())
            .then(|| sort.to_string())
            .into_iter()
            .collect(),
        ..LayoutFlags::default()
    }
}

fn run(cfg: &GenerateConfig, flags: &LayoutFlags) -> Result<Summary, Error> {
    let dataset = Dataset::parse(SPEC, "events.toml").unwrap();
    let mut flow = Flow::new(dataset, &[0], cfg, 1.0)?;
    flow.set_layouts(flags)?;
    let mut s = flow.run(RunOptions::default(), &|_| {})?;
    Ok(s.remove(0))
}

/// Every Parquet file under `dir`, by path relative to it.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

fn read(path: &Path) -> RecordBatch {
    let f = fs::File::open(path).unwrap();
    let r = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = r.map(|b| b.unwrap()).collect();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

/// The ids of the rows of every file under `dir`.
fn ids(dir: &Path) -> Vec<i64> {
    ids_of(dir, "id")
}

#[test]
fn a_partitioned_sorted_run_holds_the_plain_runs_rows_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, laid) = (tmp.path().join("plain"), tmp.path().join("laid"));
    run(&config(&plain, 20_000, 2), &LayoutFlags::default()).unwrap();
    let s = run(
        &config(&laid, 20_000, 2),
        &flags("month(day), kind", "score:desc, id"),
    )
    .unwrap();
    assert_eq!(s.records, 20_000);
    // 3 months x (3 kinds and null).
    assert_eq!(s.partitions, Some(12));
    assert_eq!(ids(&plain), ids(&laid));
    assert_eq!(ids(&laid), (1..=20_000).collect::<Vec<i64>>());
    for (rel, _) in files(&laid) {
        let dirs: Vec<String> = rel
            .parent()
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        assert_eq!(dirs.len(), 2, "{rel:?}");
        assert!(dirs[0].starts_with("day_month=2024-0"), "{rel:?}");
        assert!(dirs[1].starts_with("kind="), "{rel:?}");
        let b = read(&laid.join(&rel));
        // The identity partition's column is in the path only.
        assert!(b.column_by_name("kind").is_none());
        let days = b
            .column_by_name("day")
            .unwrap()
            .as_primitive::<arrow_array::types::Date32Type>();
        let month = &dirs[0]["day_month=".len()..];
        for d in days.values() {
            let date = arrow_array::temporal_conversions::date32_to_datetime(*d).unwrap();
            assert_eq!(date.format("%Y-%m").to_string(), month, "{rel:?}");
        }
        let score = b
            .column_by_name("score")
            .unwrap()
            .as_primitive::<Int64Type>();
        let id = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        for i in 1..b.num_rows() {
            let (a, c) = (
                (score.value(i - 1), id.value(i - 1)),
                (score.value(i), id.value(i)),
            );
            assert!(
                a.0 > c.0 || (a.0 == c.0 && a.1 < c.1),
                "{rel:?} row {i}: {a:?} then {c:?}"
            );
        }
        let md = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(laid.join(&rel)).unwrap())
            .unwrap()
            .metadata()
            .clone();
        let sorting = md.row_group(0).sorting_columns().unwrap();
        assert_eq!(sorting.len(), 2);
        assert!(sorting[0].descending && !sorting[1].descending);
    }
    // Nulls go to Hive's default partition.
    assert!(files(&laid).keys().any(|p| {
        p.to_string_lossy()
            .contains("kind=__HIVE_DEFAULT_PARTITION__")
    }));
}

#[test]
fn the_bytes_do_not_depend_on_threads_or_the_memory_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let mut outs = Vec::new();
    for (threads, memory) in [(1, 4u64 << 30), (2, 4 << 30), (2, 256 << 10)] {
        let dir = tmp.path().join(format!("t{threads}m{memory}"));
        let mut f = flags("kind", "score");
        f.memory_limit = memory;
        let s = run(&config(&dir, 30_000, threads), &f).unwrap();
        if memory < 1 << 20 {
            assert!(s.spill_bytes.unwrap() > 0, "the small limit spills");
        } else {
            assert_eq!(s.spill_bytes, Some(0));
        }
        // No spill is left behind, nor any hidden directory.
        for e in fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(name.starts_with("kind="), "{name}");
        }
        outs.push(files(&dir));
    }
    let rows = |m: &BTreeMap<PathBuf, Vec<u8>>, tmp: &Path| -> Vec<(PathBuf, usize)> {
        m.keys()
            .map(|p| (p.clone(), read(&tmp.join(p)).num_rows()))
            .collect()
    };
    assert_eq!(outs[0], outs[1], "one thread and two write the same bytes");
    let a = rows(&outs[0], &tmp.path().join(format!("t1m{}", 4u64 << 30)));
    let b = rows(&outs[2], &tmp.path().join(format!("t2m{}", 256u64 << 10)));
    assert_eq!(a, b, "spilled runs merge into the same files");
    for p in outs[0].keys() {
        let x = read(&tmp.path().join(format!("t1m{}", 4u64 << 30)).join(p));
        let y = read(&tmp.path().join(format!("t2m{}", 256u64 << 10)).join(p));
        assert_eq!(x, y, "{p:?}: the same rows in the same order");
    }
}

#[test]
fn files_close_at_the_target_size() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sized");
    let target = 128u64 << 10;
    let mut f = flags("kind", "day, id");
    f.target_file_size = vec!["128KiB".into()];
    let s = run(&config(&dir, 100_000, 2), &f).unwrap();
    let mut by: BTreeMap<PathBuf, Vec<(PathBuf, u64)>> = BTreeMap::new();
    for file in &s.files {
        by.entry(file.path.parent().unwrap().to_path_buf())
            .or_default()
            .push((file.path.clone(), file.bytes));
        assert_eq!(fs::metadata(&file.path).unwrap().len(), file.bytes);
    }
    let mut checked = 0;
    for (_, files) in by {
        let n = files.len();
        for (k, (path, bytes)) in files.iter().enumerate() {
            let name = path.file_name().unwrap().to_string_lossy();
            assert_eq!(name, format!("events_{k}.parquet"));
            if k + 1 < n {
                let off = (*bytes as f64 - target as f64).abs() / target as f64;
                assert!(
                    off <= 0.10,
                    "{path:?}: {bytes} bytes, {:.1}% off",
                    off * 100.0
                );
                checked += 1;
            }
        }
        // Files of a partition hold ascending, disjoint ranges of the
        // first key: files are cut where the day changes.
        let mut last: Option<i32> = None;
        for (path, _) in &files {
            let b = read(path);
            let day = b
                .column_by_name("day")
                .unwrap()
                .as_primitive::<arrow_array::types::Date32Type>();
            if let Some(l) = last {
                assert!(
                    l < day.value(0),
                    "{path:?} starts on day {}, not after {l}",
                    day.value(0)
                );
            }
            last = Some(day.value(b.num_rows() - 1));
        }
    }
    assert!(checked >= 6, "only {checked} files checked");
}

#[test]
fn parts_write_their_own_files_whose_union_is_the_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("parts");
    for index in 1..=2 {
        let mut cfg = config(&dir, 10_000, 2);
        cfg.part = strata_pipeline::generate::Part { index, count: 2 };
        // The second part writes into the directories of the first.
        cfg.overwrite = false;
        run(&cfg, &flags("kind", "id")).unwrap();
    }
    let names: Vec<String> = files(&dir)
        .keys()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n == "events_part1of2_0.parquet"));
    assert!(names.iter().any(|n| n == "events_part2of2_0.parquet"));
    assert_eq!(ids(&dir), (1..=10_000).collect::<Vec<i64>>());
}

#[test]
fn an_existing_layout_is_kept_unless_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("again");
    run(&config(&dir, 5_000, 2), &flags("kind", "")).unwrap();
    let before = files(&dir);
    let e = run(&config(&dir, 5_000, 2), &flags("kind", "")).unwrap_err();
    assert!(e.to_string().contains("exist"), "{e}");
    assert_eq!(files(&dir), before, "a refused run changes nothing");
    let mut cfg = config(&dir, 5_000, 2);
    cfg.overwrite = true;
    // Repartitioned by another column: the old partitions' files go.
    run(&cfg, &flags("month(day)", "")).unwrap();
    let after = files(&dir);
    assert!(
        after.keys().all(|p| p.starts_with("day_month=2024-01")
            || p.starts_with("day_month=2024-02")
            || p.starts_with("day_month=2024-03")),
        "{:?}",
        after.keys().collect::<Vec<_>>()
    );
    assert!(!dir.join("kind=click").exists());
    assert_eq!(ids(&dir), (1..=5_000).collect::<Vec<i64>>());
}

#[test]
fn bad_layouts_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bad");
    let cases: Vec<(LayoutFlags, &str)> = vec![
        (flags("nope", ""), "no column `nope`"),
        (
            flags("month(kind)", ""),
            "month does not take a column of type Utf8",
        ),
        (
            flags("bucket(0, id)", ""),
            "bucket needs a bucket count of at least 1",
        ),
        (flags("", "missing"), "missing"),
        (flags("", "tags"), "tags"),
        (
            LayoutFlags {
                target_file_size: vec!["1MiB".into()],
                row_group_size: vec!["8MiB".into()],
                ..LayoutFlags::default()
            },
            "below the row group size",
        ),
        (
            LayoutFlags {
                max_partitions: 50,
                ..flags("bucket(1000, id)", "")
            },
            "more than --max-partitions (50)",
        ),
        (
            LayoutFlags {
                target_file_size: vec!["orders:1MiB".into()],
                ..LayoutFlags::default()
            },
            "no table `orders`",
        ),
    ];
    for (f, want) in cases {
        let e = run(&config(&dir, 20_000, 2), &f).unwrap_err().to_string();
        assert!(e.contains(want), "{want:?} not in {e:?}");
        assert!(!dir.exists(), "{want}: the output directory was made");
    }
}

#[test]
fn the_dry_run_plan_estimates_the_partitions() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = Dataset::parse(SPEC, "events.toml").unwrap();
    let mut flow = Flow::new(dataset, &[0], &config(tmp.path(), 100_000, 2), 1.0).unwrap();
    flow.set_layouts(&flags("day", "id")).unwrap();
    let plans = flow.layout_plans().unwrap();
    let plan = plans[0].as_ref().unwrap();
    // 91 days, every one seen in a sample of 16 x 4,096 rows.
    assert_eq!(plan.partitions, 91);
    assert!(plan.bytes_per_row > 1.0);
    let mut f = flags("bucket(100000, id)", "");
    f.max_partitions = 1_000_000;
    flow.set_layouts(&f).unwrap();
    let plans = flow.layout_plans().unwrap();
    let plan = plans[0].as_ref().unwrap();
    // Every sampled id is its own bucket: the estimate goes past the sample.
    assert!(plan.partitions > plan.sampled_partitions, "{plan:?}");
    assert!(!tmp.path().read_dir().unwrap().any(|_| true));
}

#[test]
fn row_groups_close_at_a_byte_size() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("groups");
    let f = LayoutFlags {
        row_group_size: vec!["64KiB".into()],
        ..flags("", "id")
    };
    let s = run(&config(&dir, 40_000, 2), &f).unwrap();
    assert_eq!(s.files.len(), 1);
    let md = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(&s.files[0].path).unwrap())
        .unwrap()
        .metadata()
        .clone();
    assert!(
        md.num_row_groups() > 4,
        "{} row groups",
        md.num_row_groups()
    );
    for g in md.row_groups().iter().take(md.num_row_groups() - 1) {
        let bytes = g.compressed_size() as f64;
        let off = (bytes - (64 << 10) as f64).abs() / (64 << 10) as f64;
        assert!(off <= 0.10, "a row group of {bytes} bytes");
    }
    assert_eq!(read(&s.files[0].path).column(0).len(), 40_000);
}

#[test]
fn the_layout_check_finds_misplaced_unsorted_and_overlapping_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("checked");
    let dataset = Dataset::parse(SPEC, "events.toml").unwrap();
    let layout_of = |f: &LayoutFlags| {
        let mut flow = Flow::new(dataset.clone(), &[0], &config(&dir, 20_000, 2), 1.0).unwrap();
        flow.set_layouts(f).unwrap();
        let (g, cfg) = &flow.jobs()[0];
        (
            cfg.layout.clone().unwrap(),
            strata_gen::BatchGenerator::schema(g),
        )
    };
    let mut f = flags("month(day)", "score, id");
    f.target_file_size = vec!["16KiB".into()];
    let s = run(&config(&dir, 20_000, 2), &f).unwrap();
    let (layout, schema) = layout_of(&f);
    let check = strata_pipeline::layout::check_layout(&layout, &schema, &dir, &s.files).unwrap();
    assert!(check.passed(), "{check}");
    assert_eq!(check.partitions, 3);
    assert!(check.sized > 0);
    // Sorted the other way, every file is out of order.
    let (desc, _) = layout_of(&flags("month(day)", "score:desc, id"));
    let check = strata_pipeline::layout::check_layout(&desc, &schema, &dir, &s.files).unwrap();
    assert_eq!(check.unsorted_files.len(), s.files.len(), "{check}");
    // A January file in March's directory: all its rows are misplaced, and
    // its key range overlaps March's files.
    let jan = s
        .files
        .iter()
        .find(|f| f.path.to_string_lossy().contains("2024-01"))
        .unwrap();
    let moved = dir.join("day_month=2024-03/events_99.parquet");
    fs::copy(&jan.path, &moved).unwrap();
    let mut files = s.files.clone();
    let mut m = jan.clone();
    m.path = moved;
    files.insert(
        files
            .iter()
            .position(|f| f.path.to_string_lossy().contains("2024-03"))
            .unwrap(),
        m,
    );
    let check = strata_pipeline::layout::check_layout(&layout, &schema, &dir, &files).unwrap();
    assert_eq!(check.misplaced_rows, jan.rows, "{check}");
    assert!(!check.overlapping.is_empty(), "{check}");
    assert!(!check.passed());
}

#[test]
fn a_field_inside_a_struct_sorts_by_its_path_in_memory_and_spilled() {
    const NESTED: &str = r#"
name = "people"

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "home"
type = "struct"
null_rate = 0.1

[[fields.fields]]
name = "zip"
type = "int32"
null_rate = 0.1
uniform = { min = 1000, max = 1100 }

[[fields.fields]]
name = "city"
type = "utf8"
words = { min = 1, max = 2 }
"#;
    let tmp = tempfile::tempdir().unwrap();
    let mut outs = Vec::new();
    for memory in [4u64 << 30, 128 << 10] {
        let dir = tmp.path().join(format!("m{memory}"));
        let dataset = Dataset::parse(NESTED, "people.toml").unwrap();
        let mut cfg = config(&dir, 20_000, 2);
        cfg.output_filename = "people".into();
        let mut flow = Flow::new(dataset, &[0], &cfg, 1.0).unwrap();
        let f = LayoutFlags {
            memory_limit: memory,
            ..flags("", "home.zip:desc:nulls_last, id")
        };
        flow.set_layouts(&f).unwrap();
        let s = flow.run(RunOptions::default(), &|_| {}).unwrap().remove(0);
        assert_eq!(s.files.len(), 1);
        let b = read(&s.files[0].path);
        let home = b.column_by_name("home").unwrap().as_struct();
        let zip = home
            .column_by_name("zip")
            .unwrap()
            .as_primitive::<arrow_array::types::Int32Type>();
        let id = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        // A null struct's zip is null whatever the child holds.
        let key = |i: usize| (!home.is_null(i) && zip.is_valid(i)).then(|| zip.value(i));
        for i in 1..b.num_rows() {
            let (a, c) = (key(i - 1), key(i));
            let ok = match (a, c) {
                (Some(x), Some(y)) => x > y || (x == y && id.value(i - 1) < id.value(i)),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => id.value(i - 1) < id.value(i),
            };
            assert!(ok, "row {i}: {a:?} then {c:?}");
        }
        let md =
            ParquetRecordBatchReaderBuilder::try_new(fs::File::open(&s.files[0].path).unwrap())
                .unwrap()
                .metadata()
                .clone();
        // `home.zip` is the second leaf column.
        let sorting = md.row_group(0).sorting_columns().unwrap();
        assert_eq!(sorting[0].column_idx, 1);
        assert!(sorting[0].descending && !sorting[0].nulls_first);
        outs.push(b);
    }
    assert_eq!(outs[0], outs[1], "spilled and in memory agree");
}

#[test]
fn a_tables_spec_layout_applies_and_the_command_line_wins_per_table() {
    const SHOP: &str = r#"
name = "shop"

[[tables]]
name = "customers"
rows = 500
layout = { partition_by = "bucket(4, c_id)", sort_by = "c_id:desc" }

[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = 1 }

[[tables]]
name = "orders"
rows = 2000
layout = { partition_by = ["o_kind"], partition_columns = "keep" }

[[tables.fields]]
name = "o_id"
type = "int64"
sequence = { start = 1 }

[[tables.fields]]
name = "o_kind"
type = "utf8"
weighted = { values = ["a", "b"] }
"#;
    let tmp = tempfile::tempdir().unwrap();
    let dataset = Dataset::parse(SHOP, "shop.toml").unwrap();
    let base = config(tmp.path(), 1, 2);
    let mut flow = Flow::new(dataset, &[0, 1], &base, 1.0).unwrap();
    // The spec's layouts as they are.
    let layouts: Vec<_> = flow
        .jobs()
        .iter()
        .map(|(_, c)| c.layout.clone().unwrap())
        .collect();
    assert_eq!(layouts[0].partition_by, ["bucket(4, c_id)"]);
    assert_eq!(layouts[0].sort_by, ["c_id:desc"]);
    assert!(layouts[1].keep_partition_columns);
    // A flag for one table replaces that table's setting alone.
    let f = LayoutFlags {
        partition_by: vec!["orders:o_kind, bucket(2, o_id)".into()],
        ..LayoutFlags::default()
    };
    flow.set_layouts(&f).unwrap();
    let layouts: Vec<_> = flow
        .jobs()
        .iter()
        .map(|(_, c)| c.layout.clone().unwrap())
        .collect();
    assert_eq!(layouts[0].partition_by, ["bucket(4, c_id)"]);
    assert_eq!(layouts[1].partition_by, ["o_kind", "bucket(2, o_id)"]);
    let s = flow.run(RunOptions::default(), &|_| {}).unwrap();
    assert_eq!(s[0].partitions, Some(4));
    assert_eq!(s[1].partitions, Some(4));
    let customers = tmp.path().join("customers");
    let dirs: Vec<String> = fs::read_dir(&customers)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        dirs.iter().all(|d| d.starts_with("c_id_bucket=")),
        "{dirs:?}"
    );
    assert_eq!(ids_of(&customers, "c_id"), (1..=500).collect::<Vec<i64>>());
    let orders = tmp.path().join("orders");
    assert!(
        orders
            .join("o_kind=a/o_id_bucket=0/orders_0.parquet")
            .exists()
    );
    // Kept: the files hold the partition column too.
    let b = read(&orders.join("o_kind=b/o_id_bucket=1/orders_0.parquet"));
    let kind = b.column_by_name("o_kind").unwrap().as_string::<i32>();
    assert!(kind.iter().all(|k| k == Some("b")));
    assert_eq!(ids_of(&orders, "o_id"), (1..=2000).collect::<Vec<i64>>());
}

/// The values of Int64 column `column` of every file under `dir`, sorted.
fn ids_of(dir: &Path, column: &str) -> Vec<i64> {
    let mut all = Vec::new();
    for p in files(dir).keys() {
        let b = read(&dir.join(p));
        all.extend(
            b.column_by_name(column)
                .unwrap()
                .as_primitive::<Int64Type>()
                .values()
                .iter()
                .copied(),
        );
    }
    all.sort_unstable();
    all
}

#[test]
fn a_killed_runs_spill_is_removed_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    fs::create_dir_all(&dir).unwrap();
    // What a killed run leaves: its spill directory, named for a process
    // that is gone (pid 0x7fff_fff0 is above any real one here).
    let stale = dir.join(".events-spill.2147483632.strata-tmp");
    fs::create_dir_all(&stale).unwrap();
    fs::write(stale.join("run-0.parquet"), b"partial").unwrap();
    let mut f = flags("kind", "score");
    f.memory_limit = 256 << 10;
    let s = run(&config(&dir, 20_000, 2), &f).unwrap();
    assert!(s.spill_bytes.unwrap() > 0);
    assert!(!stale.exists(), "the stale spill is left");
    for e in fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(name.starts_with("kind="), "{name} is left");
    }
}
