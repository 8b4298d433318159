//! [`MultiScanner`]: a directory or a glob of files scanned as one input,
//! checked against reading each file on its own.

use std::{path::Path, sync::Arc};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::file::properties::WriterProperties;
use strata_scan::{Filter, MultiScanner, ScanRequest};
use strata_store::location::StoreConfig;

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
    ]))
}

/// Rows `from..to`.
fn rows(from: i64, to: i64) -> RecordBatch {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(from..to));
    let s: ArrayRef = Arc::new(StringArray::from_iter(
        (from..to).map(|i| (i % 3 != 0).then(|| format!("v{i}"))),
    ));
    RecordBatch::try_new(schema(), vec![ids, s]).unwrap()
}

fn write_parquet(path: &Path, batch: &RecordBatch) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(40))
        .build();
    let f = std::fs::File::create(path).unwrap();
    let mut w = strata_parquet::writer::ParquetWriter::try_new(f, batch.schema(), props).unwrap();
    w.write(batch).unwrap();
    w.finish().unwrap();
}

fn write_ipc(path: &Path, batch: &RecordBatch) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(f, &batch.schema()).unwrap();
    w.write(batch).unwrap();
    w.finish().unwrap();
}

/// A directory as `generate` leaves it, with 12 files of 100 rows each
/// (`f_0` .. `f_10` Parquet, `f_11` IPC), and files a scan must skip.
fn dataset(dir: &Path) {
    for i in 0..12i64 {
        let b = rows(i * 100, i * 100 + 100);
        match i {
            11 => write_ipc(&dir.join(format!("f_{i}.arrow")), &b),
            _ => write_parquet(&dir.join(format!("f_{i}.parquet")), &b),
        }
    }
    std::fs::write(dir.join("_strata_manifest.json"), "{}").unwrap();
    std::fs::write(dir.join("notes.txt"), "not data").unwrap();
    // Other columns: scanned, they would be refused.
    let other =
        RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![1])) as ArrayRef)])
            .unwrap();
    write_parquet(&dir.join(".f_hidden.parquet"), &other);
    write_parquet(&dir.join("_f_unfinished.parquet"), &other);
    std::fs::create_dir(dir.join("sub.parquet")).unwrap();
}

fn scan_all(locations: &[String], req: &ScanRequest) -> Result<RecordBatch, strata_scan::Error> {
    let mut s = MultiScanner::open_locations(locations, &StoreConfig::default())?;
    let schema = s.projected_schema(req.columns.as_deref())?;
    let mut got = Vec::new();
    s.scan(req, |b| {
        got.push(b.clone());
        Ok(())
    })?;
    assert_eq!(
        s.stats().rows,
        got.iter().map(|b| b.num_rows() as u64).sum::<u64>()
    );
    Ok(arrow_select::concat::concat_batches(&schema, &got).unwrap())
}

fn ids(b: &RecordBatch) -> Vec<i64> {
    b.column_by_name("id")
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .values()
        .to_vec()
}

#[test]
fn a_directory_is_its_data_files_in_numeric_name_order() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path());
    let d = dir.path().display().to_string();
    let all = scan_all(std::slice::from_ref(&d), &ScanRequest::default()).unwrap();
    assert_eq!(all, rows(0, 1200));

    // A glob of the file names; the IPC file is left out.
    let glob = format!("{d}/f_1*.parquet");
    let got = scan_all(std::slice::from_ref(&glob), &ScanRequest::default()).unwrap();
    assert_eq!(ids(&got), (100..200).chain(1000..1100).collect::<Vec<_>>());
    let files = MultiScanner::open_locations(&[glob], &StoreConfig::default()).unwrap();
    assert_eq!(files.files().len(), 2);

    // A limit over files, a filter and a projection in every file.
    let req = ScanRequest {
        columns: Some(vec!["s".into(), "id".into()]),
        filter: Some(Filter::parse("id >= 250").unwrap()),
        limit: Some(420),
    };
    let got = scan_all(std::slice::from_ref(&d), &req).unwrap();
    assert_eq!(got.schema().field(0).name(), "s");
    assert_eq!(ids(&got), (250..670).collect::<Vec<_>>());

    // Row numbers count across the files.
    let mut s =
        MultiScanner::open_locations(std::slice::from_ref(&d), &StoreConfig::default()).unwrap();
    let taken = s.take(&[1150, 3, 1003, 3, 640], None).unwrap();
    assert_eq!(ids(&taken), [1150, 3, 1003, 3, 640]);
    let e = s.take(&[1200], None).unwrap_err().to_string();
    assert!(e.contains("1200") && e.contains("out of range"), "{e}");

    // Several locations, in the order given.
    let two = [format!("{d}/f_3.parquet"), format!("{d}/f_1.parquet")];
    assert_eq!(
        ids(&scan_all(&two, &ScanRequest::default()).unwrap()),
        (300..400).chain(100..200).collect::<Vec<_>>()
    );
}

#[test]
fn inputs_that_cannot_be_one_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path());
    let d = dir.path().display().to_string();
    let open = |l: &[String]| {
        MultiScanner::open_locations(l, &StoreConfig::default())
            .unwrap_err()
            .to_string()
    };
    // Other columns.
    let e = open(&[d.clone(), format!("{d}/.f_hidden.parquet")]);
    assert!(
        e.contains(".f_hidden.parquet") && e.contains("columns"),
        "{e}"
    );
    // No data file.
    let empty = tempfile::tempdir().unwrap();
    let e = open(&[empty.path().display().to_string()]);
    assert!(e.contains("no data file"), "{e}");
    let e = open(&[format!("{d}/g*.parquet")]);
    assert!(e.contains("no data file"), "{e}");
    let e = open(&[format!("{d}/*/f_1.parquet")]);
    assert!(e.contains("file name only"), "{e}");
}
