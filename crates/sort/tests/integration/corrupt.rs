//! Corrupt inputs: seeded mutations of valid `events` files (lists of
//! structs and a map, the shapes whose third-party readers are least
//! checked) given to `sort_file` and to the merge give an error or a
//! result, never a panic, and an error leaves no output behind.

use std::path::Path;

use parquet::{arrow::ArrowWriter, file::properties::WriterProperties};
use strata_gen::{BatchGenerator, rng::RowRng};
use strata_sort::{
    SortConfig, SortKey,
    merge::{MergeConfig, merge_files},
    sort_file,
};
use strata_testkit::mutate::mutate;

fn events(rows: usize) -> arrow_array::RecordBatch {
    let g = strata_gen::preset("events", 11);
    g.generate(0, rows, &mut Default::default()).unwrap()
}

fn parquet_bytes(batch: &arrow_array::RecordBatch) -> Vec<u8> {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(1000))
        .build();
    let mut w = ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.into_inner().unwrap()
}

fn ipc_bytes(batch: &arrow_array::RecordBatch) -> Vec<u8> {
    let mut w = arrow_ipc::writer::FileWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    for offset in (0..batch.num_rows()).step_by(500) {
        w.write(&batch.slice(offset, 500.min(batch.num_rows() - offset)))
            .unwrap();
    }
    w.into_inner().unwrap()
}

/// Everything in `dir` but the input.
fn left(dir: &Path, input: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != input)
        .collect();
    names.sort();
    names
}

#[test]
fn corrupt_inputs_give_errors_not_panics() {
    let batch = events(4000);
    let caught = strata_parquet::guard::caught();
    let mut rng = RowRng::seeded(2031);
    let (mut failed, mut sorted) = (0, 0);
    for (ext, valid) in [
        ("parquet", parquet_bytes(&batch)),
        ("arrow", ipc_bytes(&batch)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let input = format!("in.{ext}");
        for _ in 0..150 {
            std::fs::write(dir.path().join(&input), mutate(&mut rng, &valid, 4096)).unwrap();
            let mut cfg = SortConfig::new(
                dir.path().join(&input),
                dir.path().join("out.parquet"),
                vec!["user_id".parse::<SortKey>().unwrap()],
            );
            cfg.overwrite = true;
            match sort_file(&cfg) {
                Ok(s) => {
                    sorted += 1;
                    assert!(s.rows <= 4000);
                    std::fs::remove_file(&cfg.output).unwrap();
                }
                Err(e) => {
                    failed += 1;
                    assert!(!e.to_string().is_empty());
                    assert!(left(dir.path(), &input).is_empty(), "{e}");
                }
            }
        }
    }
    eprintln!(
        "{failed} errors, {sorted} sorted, {} decoder panics caught",
        strata_parquet::guard::caught() - caught
    );
    assert!(failed > 100, "{failed} of 300 mutations failed");
}

#[test]
fn corrupt_merge_inputs_give_errors_not_panics() {
    let sorted = strata_sort::sort_batch(&events(3000), &["user_id".parse().unwrap()]).unwrap();
    let valid = parquet_bytes(&sorted);
    let mut rng = RowRng::seeded(2032);
    let caught = strata_parquet::guard::caught();
    let mut failed = 0;
    for _ in 0..150 {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("a.parquet");
        let bad = dir.path().join("b.parquet");
        std::fs::write(&good, &valid).unwrap();
        std::fs::write(&bad, mutate(&mut rng, &valid, 4096)).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let cfg = MergeConfig {
            key: vec!["user_id".into()],
            target_file_bytes: 1 << 30,
            batch_rows: 512,
            threads: 2,
            ..MergeConfig::default()
        };
        let inputs = vec![good.clone(), bad.clone()];
        let name = |i: usize| format!("m-{i}.parquet");
        match merge_files(&inputs, &out, &name, &cfg) {
            Ok(files) => assert!(files.iter().map(|f| f.rows).sum::<u64>() <= 6000),
            Err(e) => {
                failed += 1;
                assert!(!e.to_string().is_empty());
                assert!(left(&out, "").is_empty(), "{e}");
            }
        }
    }
    eprintln!(
        "merge: {failed} errors, {} decoder panics caught",
        strata_parquet::guard::caught() - caught
    );
    assert!(failed > 50, "{failed} of 150 mutations failed");
}
