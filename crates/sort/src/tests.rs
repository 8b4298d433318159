//! End-to-end tests of the sort: keys, in-memory and external sorts,
//! failures, schemas and dictionaries.

use std::{cmp::Ordering, collections::HashMap, sync::Arc};

use std::{
    fs,
    path::{Path, PathBuf},
};

use arrow_array::{
    Array, ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, MapArray,
    RecordBatch, StringArray,
    builder::{Int32Builder, MapBuilder, StringBuilder},
    types::Int32Type,
};
use arrow_ord::ord::make_comparator;
use arrow_schema::{DataType, Field, Schema, SchemaRef, SortOptions};

use super::*;
use strata_testkit::readback::{multiset_hash, rows_as_text};

fn random_batch(seed: u64, n: usize) -> RecordBatch {
    let mut r = strata_gen::rng::RowRng::seeded(seed);
    let ints: Int32Array = (0..n)
        .map(|_| (r.next_below(5) != 0).then(|| r.next_below(7) as i32 - 3))
        .collect();
    let floats: Float64Array = (0..n)
        .map(|_| match r.next_below(8) {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            _ => (r.next_below(5) as f64) - 2.0,
        })
        .map(Some)
        .collect();
    let words = ["", "a", "ab", "b", "ba", "zz"];
    let strings: StringArray = (0..n)
        .map(|_| (r.next_below(6) != 0).then(|| words[r.next_below(6) as usize]))
        .collect();
    let dict: DictionaryArray<Int32Type> = (0..n)
        .map(|_| (r.next_below(9) != 0).then(|| ["red", "green", "blue"][r.next_below(3) as usize]))
        .collect();
    let bools: BooleanArray = (0..n)
        .map(|_| (r.next_below(7) != 0).then(|| r.next_below(2) == 0))
        .collect();
    let ids = Int64Array::from_iter_values(0..n as i64);
    // A fourth fixed-width column: the in-memory sort lays them out row
    // by row.
    let small: arrow_array::UInt16Array = (0..n)
        .map(|_| (r.next_below(4) != 0).then(|| r.next_below(300) as u16))
        .collect();
    RecordBatch::try_from_iter([
        ("i", Arc::new(ints) as ArrayRef),
        ("f", Arc::new(floats) as ArrayRef),
        ("s", Arc::new(strings) as ArrayRef),
        ("d", Arc::new(dict) as ArrayRef),
        ("b", Arc::new(bools) as ArrayRef),
        ("id", Arc::new(ids) as ArrayRef),
        ("u", Arc::new(small) as ArrayRef),
    ])
    .unwrap()
}

fn keys(spec: &str) -> Vec<SortKey> {
    spec.parse::<SortKeys>().unwrap().0
}

/// Lexicographic order of rows `a` and `b` under `keys`, from Arrow's
/// own per-column comparators.
fn compare(batch: &RecordBatch, keys: &[SortKey]) -> impl Fn(usize, usize) -> Ordering + use<> {
    let cmps: Vec<_> = keys
        .iter()
        .map(|k| {
            let c = batch.column_by_name(&k.column).unwrap();
            make_comparator(c.as_ref(), c.as_ref(), k.options).unwrap()
        })
        .collect();
    move |a, b| {
        cmps.iter()
            .map(|c| c(a, b))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

fn ids(batch: &RecordBatch) -> Vec<i64> {
    let c = batch.column_by_name("id").unwrap();
    c.as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .values()
        .to_vec()
}

#[test]
fn parses_sort_keys() {
    let k = keys("a, b:desc ,c:nulls_last:DESC,d:nulls_first,e:asc");
    let o = |descending, nulls_first| SortOptions {
        descending,
        nulls_first,
    };
    let got: Vec<_> = k.iter().map(|k| (k.column.as_str(), k.options)).collect();
    assert_eq!(
        got,
        vec![
            ("a", o(false, true)),
            ("b", o(true, true)),
            ("c", o(true, false)),
            ("d", o(false, true)),
            ("e", o(false, true)),
        ]
    );
    assert_eq!(k[2].to_string(), "c:desc:nulls_last");
    for (bad, needle) in [
        ("a:down", ":down"),
        ("a:desc:asc", ":asc"),
        ("a:nulls_first:nulls_first", ":nulls_first"),
        ("a,,b", "empty column"),
        (":desc", "empty column"),
        ("", "at least one"),
        ("  ", "at least one"),
    ] {
        let e = bad.parse::<SortKeys>().unwrap_err().to_string();
        assert!(e.contains(needle), "{bad}: {e}");
    }
}

#[test]
fn parses_sizes() {
    for (s, n) in [
        ("1", 1),
        ("100B", 100),
        ("1KiB", 1024),
        ("1 kib", 1024),
        ("2MiB", 2 << 20),
        ("4GiB", 4 << 30),
        ("1.5GiB", 3 << 29),
        ("1KB", 1000),
        ("3MB", 3_000_000),
        ("2GB", 2_000_000_000),
        ("1TiB", 1 << 40),
    ] {
        assert_eq!(s.parse::<ByteSize>().unwrap(), ByteSize(n), "{s}");
    }
    for bad in [
        "",
        "GiB",
        "1XB",
        "-1",
        "0",
        "1.2.3MB",
        "99999999999999999999",
        "20000000TiB",
    ] {
        let e = bad.parse::<ByteSize>().unwrap_err().to_string();
        assert!(e.contains(&format!("'{bad}'")), "{e}");
    }
    assert_eq!(ByteSize(1536).to_string(), "1.5 KiB");
    assert_eq!(ByteSize(100).to_string(), "100 bytes");
}

#[test]
fn sorts_random_batches_like_arrows_comparators() {
    for (seed, spec) in [
        (1, "i"),
        (2, "s:desc,i:nulls_last"),
        (3, "f,d:desc:nulls_last"),
        (4, "b:nulls_last,s,f:desc"),
        (5, "d,i:desc:nulls_first,b:desc"),
    ] {
        let batch = random_batch(seed, 3000);
        let k = keys(spec);
        let sorted = sort_batch(&batch, &k).unwrap();
        assert_eq!(sorted.schema(), batch.schema());
        let cmp = compare(&sorted, &k);
        let id = ids(&sorted);
        for r in 1..sorted.num_rows() {
            match cmp(r - 1, r) {
                Ordering::Less => {}
                Ordering::Equal => assert!(id[r - 1] < id[r], "{spec}: unstable at {r}"),
                Ordering::Greater => panic!("{spec}: rows {} and {r} out of order", r - 1),
            }
        }
        let mut before = rows_as_text(&[batch]).unwrap();
        let mut after = rows_as_text(&[sorted]).unwrap();
        assert_eq!(multiset_hash(&mut before), multiset_hash(&mut after));
    }
}

#[test]
fn float_order_is_total() {
    let f = Float64Array::from(vec![
        Some(1.0),
        Some(f64::NAN),
        None,
        Some(-0.0),
        Some(0.0),
        Some(f64::NEG_INFINITY),
    ]);
    let batch = RecordBatch::try_from_iter([("f", Arc::new(f) as ArrayRef)]).unwrap();
    let sorted = sort_batch(&batch, &keys("f")).unwrap();
    let got: Vec<String> = sorted
        .column(0)
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap()
        .iter()
        .map(|v| format!("{v:?}"))
        .collect();
    assert_eq!(
        got,
        [
            "None",
            "Some(-inf)",
            "Some(-0.0)",
            "Some(0.0)",
            "Some(1.0)",
            "Some(NaN)"
        ]
    );
}

fn map_batch() -> RecordBatch {
    let mut b = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    for i in 0..4 {
        b.keys().append_value(format!("k{i}"));
        b.values().append_value(i);
        b.append(true).unwrap();
    }
    let m: MapArray = b.finish();
    let id = Int64Array::from_iter_values(0..4);
    RecordBatch::try_from_iter([
        ("m", Arc::new(m) as ArrayRef),
        ("id", Arc::new(id) as ArrayRef),
    ])
    .unwrap()
}

#[test]
fn bad_keys_are_named() {
    let batch = random_batch(9, 10);
    let e = Sorter::new(batch.schema_ref(), &keys("i,nope")).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::UnknownColumn { .. }), "{e:?}");
    assert!(
        m.contains("'nope'") && m.contains("i, f, s, d, b, id"),
        "{m}"
    );
    assert!(Sorter::new(batch.schema_ref(), &[]).is_err());

    let batch = map_batch();
    let map_type = batch.schema().field(0).data_type().clone();
    let supported = strata_row::RowEncoder::new(vec![strata_row::SortField::new(map_type)]).is_ok();
    match Sorter::new(batch.schema_ref(), &keys("id,m")) {
        Err(Error::UnsupportedSortKey { column, .. }) => {
            assert!(!supported);
            assert_eq!(column, "m");
        }
        Ok(_) => assert!(supported, "a map key was accepted"),
        Err(e) => panic!("{e:?}"),
    }
}

fn write_ipc(path: &Path, schema: &SchemaRef, batches: &[RecordBatch]) {
    let mut w = strata_parquet::ipc::IpcFileWriter::try_new(
        std::fs::File::create(path).unwrap(),
        schema,
        Default::default(),
    )
    .unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
}

fn config(input: &Path, output: &Path, spec: &str) -> SortConfig {
    SortConfig::new(input, output, keys(spec))
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn sorts_a_file_keeping_schema_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let batch = random_batch(11, 5000);
    let fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| {
            f.as_ref().clone().with_metadata(HashMap::from([(
                "doc".to_string(),
                format!("column {}", f.name()),
            )]))
        })
        .collect();
    let schema =
        Arc::new(Schema::new(fields).with_metadata(HashMap::from([("k".into(), "v".into())])));
    let batch = batch.with_schema(schema.clone()).unwrap();
    let input = dir.path().join("in.arrow");
    write_ipc(
        &input,
        &schema,
        &[batch.slice(0, 3000), batch.slice(3000, 2000)],
    );
    for out in ["out.parquet", "out.arrow"] {
        let output = dir.path().join(out);
        let s = sort_file(&config(&input, &output, "s:desc,i")).unwrap();
        assert_eq!(s.rows, 5000);
        assert_eq!(s.input_format, Format::Ipc);
        assert_eq!(s.output_bytes, fs::metadata(&output).unwrap().len());
        let back = read_input(&output).unwrap();
        assert_eq!(back.schema, schema, "{out}");
        let sorted = arrow_select::concat::concat_batches(&schema, &back.batches).unwrap();
        assert_eq!(sorted, sort_batch(&batch, &keys("s:desc,i")).unwrap());
    }
    assert_eq!(names(dir.path()), ["in.arrow", "out.arrow", "out.parquet"]);
}

#[test]
fn failures_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let batch = random_batch(12, 2000);
    let input = dir.path().join("in.arrow");
    write_ipc(&input, &batch.schema(), &[batch]);
    let output = dir.path().join("out.parquet");

    // Over the limit with an IPC output: a sort that spills writes
    // Parquet only.
    let mut cfg = config(&input, &dir.path().join("out.arrow"), "i");
    cfg.memory_limit = 1024;
    let e = sort_file(&cfg).unwrap_err();
    assert!(e.to_string().contains("writes Parquet"), "{e}");

    let e = sort_file(&config(&input, &output, "zz")).unwrap_err();
    assert!(matches!(e, Error::UnknownColumn { .. }), "{e:?}");

    let e = sort_file(&config(&input, &input, "i")).unwrap_err();
    assert!(e.to_string().contains("is the input"), "{e}");
    let mut cfg = config(&input, &input, "i");
    cfg.overwrite = true;
    assert!(
        sort_file(&cfg)
            .unwrap_err()
            .to_string()
            .contains("is the input")
    );

    let garbage = dir.path().join("garbage.parquet");
    fs::write(&garbage, b"definitely not columnar data").unwrap();
    let e = sort_file(&config(&garbage, &output, "i")).unwrap_err();
    assert!(e.to_string().contains("not a Parquet or Arrow IPC"), "{e}");

    let truncated = dir.path().join("truncated.arrow");
    let bytes = fs::read(&input).unwrap();
    fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let e = sort_file(&config(&truncated, &output, "i")).unwrap_err();
    assert!(matches!(e, Error::Read { .. }), "{e:?}");

    assert_eq!(
        names(dir.path()),
        ["garbage.parquet", "in.arrow", "truncated.arrow"]
    );
}

#[test]
fn the_encoded_keys_count_against_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let batch = random_batch(14, 4000);
    let input = dir.path().join("in.arrow");
    write_ipc(&input, &batch.schema(), std::slice::from_ref(&batch));
    let output = dir.path().join("out.parquet");
    let mut cfg = config(&input, &output, "s,d:desc");
    let s = sort_file(&cfg).unwrap();
    assert_eq!(s.runs, 0);
    assert!(s.row_bytes > 0);
    assert_eq!(
        s.memory_estimate,
        2 * s.input_memory
            + s.row_bytes
            + order::ENTRY_BYTES * s.rows
            + rows::extra_bytes(batch.schema_ref(), s.rows)
    );
    // A validity byte for each nullable fixed-width value (`i`, `u`).
    assert_eq!(rows::extra_bytes(batch.schema_ref(), s.rows), 2 * 4000);
    let want = read_input(&output).unwrap().batches;
    fs::remove_file(&output).unwrap();
    // Enough for the input, its sorted copy and the encoded keys, not
    // for the entries as well: the batches become one spilled run, and
    // the output is the same.
    cfg.memory_limit = 2 * s.input_memory + s.row_bytes;
    let e = sort_file(&cfg).unwrap();
    assert_eq!(e.runs, 1);
    assert_eq!(e.rows, 4000);
    let got = read_input(&output).unwrap().batches;
    assert_eq!(rows_as_text(&got).unwrap(), rows_as_text(&want).unwrap());
    assert_eq!(names(dir.path()), ["in.arrow", "out.parquet"]);
}

/// The concatenation of every output file, in order.
fn read_all(paths: &[PathBuf]) -> Vec<RecordBatch> {
    paths
        .iter()
        .flat_map(|p| read_input(p).unwrap().batches)
        .collect()
}

fn write_parquet(path: &Path, batches: &[RecordBatch], group_rows: usize) {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let file = fs::File::create(path).unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

/// Inputs of every key type, sorted with limits small enough for many
/// runs and several merge levels, give the rows and order of the
/// in-memory sort of their concatenation (stable: `id` tells equal
/// keys apart), as one file and as a directory merged on threads.
#[test]
fn external_sort_equals_the_in_memory_sort() {
    let dir = tempfile::tempdir().unwrap();
    let parts: Vec<RecordBatch> = (0..3).map(|i| random_batch(40 + i, 3000)).collect();
    // `id` runs on across the parts, so every row is distinct.
    let parts: Vec<RecordBatch> = parts
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let ids = Int64Array::from_iter_values((0..3000).map(|r| (i * 3000 + r) as i64));
            let mut cols = b.columns().to_vec();
            cols[5] = Arc::new(ids);
            RecordBatch::try_new(b.schema(), cols).unwrap()
        })
        .collect();
    let schema = parts[0].schema();
    let a = dir.path().join("a.parquet");
    write_parquet(
        &a,
        &[parts[0].slice(0, 1000), parts[0].slice(1000, 2000)],
        700,
    );
    let b = dir.path().join("b.arrow");
    write_ipc(
        &b,
        &schema,
        &[parts[1].slice(0, 2500), parts[1].slice(2500, 500)],
    );
    let c = dir.path().join("c.parquet");
    write_parquet(&c, &parts[2..], 1000);
    let all = arrow_select::concat::concat_batches(&schema, &parts).unwrap();
    for spec in [
        "i,s:desc",
        "d:desc:nulls_last,f",
        "b:nulls_last,s,f:desc",
        "s:desc",
    ] {
        let want = rows_as_text(&[sort_batch(&all, &keys(spec)).unwrap()]).unwrap();
        for limit in [24 << 10, 96 << 10, 1 << 30] {
            let out = dir.path().join("out.parquet");
            let mut cfg = config(&a, &out, spec);
            cfg.inputs = vec![a.clone(), b.clone(), c.clone()];
            cfg.memory_limit = limit;
            cfg.threads = 2;
            cfg.overwrite = true;
            let s = sort_file(&cfg).unwrap();
            assert_eq!(s.rows, 9000);
            let got = read_all(&s.output_files);
            assert_eq!(rows_as_text(&got).unwrap(), want, "{spec} {limit}");
            assert_eq!(read_input(&out).unwrap().schema, schema);
            if limit == 24 << 10 {
                assert!(s.runs >= 8, "{s:?}");
                assert!(s.merge_levels >= 1, "{s:?}");
            }
            if limit == 1 << 30 {
                assert_eq!(s.runs, 0);
            }

            let out_dir = dir.path().join("sorted");
            cfg.output = out_dir.clone();
            cfg.target_file_bytes = Some(20_000);
            let s = sort_file(&cfg).unwrap();
            assert!(s.output_files.len() > 1, "{s:?}");
            let mut listed: Vec<PathBuf> = fs::read_dir(&out_dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            listed.sort();
            assert_eq!(listed, s.output_files);
            let got = read_all(&s.output_files);
            assert_eq!(rows_as_text(&got).unwrap(), want, "{spec} {limit} dir");
            fs::remove_dir_all(&out_dir).unwrap();
        }
    }
    assert_eq!(
        names(dir.path()),
        ["a.parquet", "b.arrow", "c.parquet", "out.parquet"]
    );
}

/// A failure after runs were spilled (a later input with another
/// schema, a truncated later input) removes the spill directory and
/// leaves no output.
#[test]
fn a_failed_external_sort_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.parquet");
    let batch = random_batch(50, 4000);
    write_parquet(&good, std::slice::from_ref(&batch), 500);
    let other = dir.path().join("other.parquet");
    let narrow = batch.project(&[0, 1]).unwrap();
    write_parquet(&other, &[narrow], 500);
    let truncated = dir.path().join("truncated.parquet");
    let bytes = fs::read(&good).unwrap();
    fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
    let before = names(dir.path());
    for (bad, what) in [(&other, "different schema"), (&truncated, "truncated")] {
        for target in [None, Some(10_000)] {
            let out = dir.path().join(if target.is_some() {
                "dir"
            } else {
                "out.parquet"
            });
            let mut cfg = config(&good, &out, "s,i:desc");
            cfg.inputs = vec![good.clone(), bad.clone()];
            cfg.memory_limit = 32 << 10;
            cfg.target_file_bytes = target;
            cfg.spill_dir = Some(spill.path().to_path_buf());
            let e = sort_file(&cfg).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains(bad.file_name().unwrap().to_str().unwrap()),
                "{what}: {text}"
            );
            assert_eq!(names(dir.path()), before, "{what}");
            assert!(names(spill.path()).is_empty(), "{what}");
        }
    }
    // A spill directory that is not there is refused up front.
    let mut cfg = config(&good, &dir.path().join("out.parquet"), "s");
    cfg.spill_dir = Some(dir.path().join("nowhere"));
    let e = sort_file(&cfg).unwrap_err();
    assert!(e.to_string().contains("spill directory"), "{e}");
    assert_eq!(names(dir.path()), before);
}

#[test]
fn nested_dictionaries_from_many_batches() {
    use arrow_array::{StructArray, types::UInt8Type};
    // 300 batches, each with its own 3-value dictionary in a list of
    // structs, as Parquet reads give: the nested dictionaries become
    // plain values for sorting and one dictionary again afterwards.
    let batches: Vec<RecordBatch> = (0..300_i64)
        .map(|g| {
            let tag: DictionaryArray<UInt8Type> = (0..4)
                .map(|r| (r != 3).then(|| ["x", "y", "z"][((g + r) % 3) as usize]))
                .collect();
            let tag: ArrayRef = Arc::new(tag);
            let field = Arc::new(Field::new("tag", tag.data_type().clone(), true));
            let num: ArrayRef = Arc::new(StringArray::from(vec!["1", "2", "3", "4"]));
            let num_field = Arc::new(Field::new("number", DataType::Utf8, true));
            let s = StructArray::from(vec![(num_field, num), (field, tag)]);
            let item = Arc::new(Field::new("item", s.data_type().clone(), true));
            let offsets = arrow_buffer::OffsetBuffer::from_lengths([1, 1, 2, 0]);
            let l = arrow_array::ListArray::new(item, offsets, Arc::new(s), None);
            RecordBatch::try_from_iter([
                ("s", Arc::new(l) as ArrayRef),
                (
                    "id",
                    Arc::new(Int64Array::from_iter_values(g * 4..g * 4 + 4)) as ArrayRef,
                ),
            ])
            .unwrap()
        })
        .collect();
    let schema = batches[0].schema();
    let mut want = rows_as_text(&batches).unwrap();
    want.reverse();

    let (working, converted) = in_memory::to_working(&schema, batches).unwrap();
    assert_ne!(working, schema);
    let all = arrow_select::concat::concat_batches(&working, &converted).unwrap();
    let sorted = sort_batch(&all, &keys("id:desc")).unwrap();
    let back: Vec<ArrayRef> = sorted
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| in_memory::cast_if_needed(c, f.data_type()).unwrap())
        .collect();
    let back = RecordBatch::try_new(schema.clone(), back).unwrap();
    assert_eq!(rows_as_text(std::slice::from_ref(&back)).unwrap(), want);

    // One dictionary for the whole column: an IPC file takes it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.arrow");
    write_ipc(&path, &schema, &[back.slice(0, 600), back.slice(600, 600)]);
    let read = read_input(&path).unwrap();
    assert_eq!(rows_as_text(&read.batches).unwrap(), want);
}

#[test]
fn empty_input_gives_empty_output() {
    let dir = tempfile::tempdir().unwrap();
    let batch = random_batch(13, 0);
    let input = dir.path().join("in.arrow");
    write_ipc(&input, batch.schema_ref(), &[]);
    let output = dir.path().join("out.parquet");
    let s = sort_file(&config(&input, &output, "i,s:desc")).unwrap();
    assert_eq!(s.rows, 0);
    let back = read_input(&output).unwrap();
    assert_eq!(back.schema, batch.schema());
    assert_eq!(back.batches.iter().map(|b| b.num_rows()).sum::<usize>(), 0);
    assert!(back.batches.iter().all(|b| b.num_columns() == 6));
    let d = back.schema.field_with_name("d").unwrap();
    assert!(matches!(d.data_type(), DataType::Dictionary(..)));
}

#[test]
fn sorts_by_a_field_inside_a_struct() {
    use arrow_array::{ArrayRef, Int64Array, StructArray};
    let zip: ArrayRef = Arc::new(Int64Array::from(vec![
        Some(3),
        Some(1),
        None,
        Some(2),
        Some(0),
    ]));
    let home = StructArray::new(
        vec![Field::new("zip", DataType::Int64, true)].into(),
        vec![zip],
        // The last row's struct is null: its zip sorts as null.
        Some(arrow_buffer::NullBuffer::from(vec![
            true, true, true, true, false,
        ])),
    );
    let id: ArrayRef = Arc::new(Int64Array::from(vec![10, 11, 12, 13, 14]));
    let batch =
        RecordBatch::try_from_iter([("id", id), ("home", Arc::new(home) as ArrayRef)]).unwrap();
    let sorted = sort_batch(&batch, &keys("home.zip:desc:nulls_last")).unwrap();
    assert_eq!(ids(&sorted), vec![10, 13, 11, 12, 14]);
    match Sorter::new(batch.schema_ref(), &keys("home.nope")) {
        Err(Error::UnknownColumn { name, .. }) => assert_eq!(name, "home.nope"),
        other => panic!("{other:?}"),
    }
}
