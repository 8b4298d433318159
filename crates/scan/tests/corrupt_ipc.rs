//! Seeded corruption of valid files: every mutation must give a result or
//! an error, never a panic or a hang, and no single allocation may exceed
//! what reading the intact file needs.

#[path = "support/mutate.rs"]
mod mutate;
mod support;

use arrow_array::RecordBatch;
use arrow_ipc::CompressionType;
use bytes::Bytes;
use futures::TryStreamExt;
use mutate::run_mutations;
use strata_gen::rng::RowRng;
use strata_scan::{
    ScanRequest,
    ipc::{IpcFile, IpcReadOptions, ReadMode},
};
use strata_store::source::Source;
use support::*;

/// Reads `bytes` every way a scan can: all columns in each mode, a
/// projection, a take. Returns how many reads succeeded.
async fn read_all_ways(bytes: Bytes, ncols: usize) -> Result<usize, strata_scan::Error> {
    let mut ok = 0;
    for mode in [ReadMode::Auto, ReadMode::Projected, ReadMode::WholeBlocks] {
        for cols in [
            None,
            Some(vec![format!("c{}", ncols - 1)]),
            Some(vec!["c0".to_string()]),
        ] {
            let src = Source::from_bytes(bytes.clone());
            let file = IpcFile::open(src, None)
                .await?
                .with_options(IpcReadOptions {
                    mode,
                    ..Default::default()
                });
            let req = ScanRequest {
                columns: cols.clone(),
                ..Default::default()
            };
            let r: Result<Vec<RecordBatch>, _> = file.stream(&req)?.try_collect().await;
            if r.is_ok() {
                ok += 1;
            }
            if file.take(&[0, 3, 17], cols.as_deref()).await.is_ok() {
                ok += 1;
            }
        }
    }
    Ok(ok)
}

#[test]
fn corrupt_ipc_files_give_errors_not_panics() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, compression) in [
        None,
        Some(CompressionType::LZ4_FRAME),
        Some(CompressionType::ZSTD),
    ]
    .into_iter()
    .enumerate()
    {
        for strata in [true, false] {
            let mut rng = RowRng::seeded(100 + i as u64);
            let ncols = 6;
            let schema = random_schema(&mut rng, ncols);
            let batches: Vec<RecordBatch> = [40, 0, 25]
                .iter()
                .map(|&n| random_batch(&mut rng, &schema, n, 0.3))
                .collect();
            let path = dir.path().join(format!("f{i}{strata}.arrow"));
            write_ipc(
                &path,
                &schema,
                &batches,
                Writing {
                    compression,
                    strata,
                },
            );
            files.push((std::fs::read(&path).unwrap(), ncols));
        }
    }
    let out = run_mutations(&rt, &files, 2026, 200, 4096, 18, read_all_ways);
    assert!(out.failed + out.opened >= 1000);
    // Every offset and length is checked before arrow-rs sees it.
    assert_eq!(
        out.panics, 0,
        "arrow-rs panicked on input the reader let through"
    );
}
