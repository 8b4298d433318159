//! Seeded corruption of valid Parquet files: every mutation must give a
//! result or an error, never a panic or a hang, and no single allocation
//! may exceed what reading the intact file needs.

#[path = "support/mutate.rs"]
mod mutate;
mod support;

use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;
use futures::TryStreamExt;
use mutate::run_mutations;
use parquet::{
    arrow::ArrowWriter,
    basic::{Compression, ZstdLevel},
    file::properties::WriterProperties,
};
use strata_gen::rng::RowRng;
use strata_scan::{ScanFile, ScanRequest};
use strata_store::source::Source;
use support::*;

/// Reads `bytes` every way a scan can: all columns, one column, a limit
/// and a take. Returns how many reads succeeded.
async fn read_all_ways(bytes: Bytes, ncols: usize) -> Result<usize, strata_scan::Error> {
    let mut ok = 0;
    let file = ScanFile::open(Source::from_bytes(bytes)).await?;
    for (cols, limit) in [
        (None, None),
        (Some(vec![format!("c{}", ncols - 1)]), None),
        (Some(vec!["c0".to_string()]), Some(10)),
    ] {
        let req = ScanRequest {
            columns: cols.clone(),
            limit,
            ..Default::default()
        };
        let r: Result<Vec<RecordBatch>, _> = file.stream(&req)?.try_collect().await;
        ok += usize::from(r.is_ok());
        ok += usize::from(file.take(&[0, 3, 17], cols.as_deref()).await.is_ok());
    }
    Ok(ok)
}

#[test]
fn corrupt_parquet_files_give_errors_not_panics() {
    let rt = rt();
    let codecs = [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::ZSTD(ZstdLevel::try_new(1).unwrap()),
    ];
    let mut files = Vec::new();
    for (i, codec) in codecs.into_iter().enumerate() {
        for dictionary in [true, false] {
            let mut rng = RowRng::seeded(200 + i as u64);
            let ncols = 6;
            let schema = random_schema(&mut rng, ncols);
            let batch = random_batch(&mut rng, &schema, 120, 0.3);
            let props = WriterProperties::builder()
                .set_compression(codec)
                .set_dictionary_enabled(dictionary)
                .set_max_row_group_row_count(Some(50))
                .set_data_page_row_count_limit(20)
                .build();
            let mut w = ArrowWriter::try_new(Vec::new(), Arc::clone(&schema), Some(props)).unwrap();
            w.write(&batch).unwrap();
            files.push((w.into_inner().unwrap(), ncols));
        }
    }
    let out = run_mutations(&rt, &files, 2027, 200, 2048, 6, read_all_ways);
    assert!(out.failed + out.opened >= 1000);
}
