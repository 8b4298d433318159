//! The blocking [`Scanner`] on local files: memory-mapped reads, and
//! Parquet row groups decoded in parallel, checked against parquet's own
//! reader and against the sequential stream of the same file.

use arrow_array::RecordBatch;
use futures::TryStreamExt;
use parquet::basic::Compression;
use strata_gen::rng::RowRng;
use strata_scan::{Error, Filter, ScanFile, ScanRequest, Scanner};
use strata_store::location::StoreConfig;
use strata_store::source::{FetchOptions, Source};

use crate::scan_parquet::{
    assert_same, full_read, project, props, random_batch, random_projection, write,
};

fn scanner_read(path: &std::path::Path, req: &ScanRequest) -> Result<(RecordBatch, u64), Error> {
    // Every scan of these small files takes the parallel path.
    let mut s = Scanner::open_location(&path.display().to_string(), &StoreConfig::default())?
        .with_parallel_min_bytes(0);
    let schema = s.file().projected_schema(req.columns.as_deref())?;
    let mut got = vec![];
    s.scan(req, |b| {
        assert_eq!(b.schema().fields(), schema.fields());
        got.push(b.clone());
        Ok(())
    })?;
    let rows: u64 = got.iter().map(|b| b.num_rows() as u64).sum();
    assert_eq!(s.stats().rows, rows);
    let batch = arrow_select::concat::concat_batches(&schema, &got).unwrap();
    Ok((batch, s.stats().io.bytes_fetched))
}

/// The same request through the sequential stream of a mapped local
/// source, with the bytes it fetched.
fn stream_read(path: &std::path::Path, req: &ScanRequest) -> (RecordBatch, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let src = Source::open_file(path, "f", FetchOptions::local()).unwrap();
    let stats = src.stats().clone();
    let file = rt.block_on(ScanFile::open(src)).unwrap();
    let schema = file.projected_schema(req.columns.as_deref()).unwrap();
    let got: Vec<RecordBatch> = rt
        .block_on(file.stream(req).unwrap().try_collect())
        .unwrap();
    let batch = arrow_select::concat::concat_batches(&schema, &got).unwrap();
    (batch, stats.snapshot().bytes_fetched)
}

#[test]
fn parallel_row_group_scans_equal_full_reads_and_fetch_what_the_stream_fetches() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..10u64 {
        let mut rng = RowRng::seeded(seed + 100);
        let rows = 1 + rng.next_below(5000) as usize;
        let batch = random_batch(seed, 2 + rng.next_below(6) as usize, rows);
        let codec = [Compression::UNCOMPRESSED, Compression::SNAPPY][seed as usize % 2];
        let rg_rows = 1 + rng.next_below(900) as usize;
        let bytes = write(&batch, props(codec, rg_rows));
        let path = dir.path().join(format!("p{seed}.parquet"));
        std::fs::write(&path, &bytes).unwrap();
        let full = full_read(&bytes);

        let names = random_projection(&mut rng, &full.schema());
        let requests = [
            ScanRequest::default(),
            ScanRequest {
                columns: Some(names.clone()),
                ..Default::default()
            },
        ];
        for req in &requests {
            let (got, fetched) = scanner_read(&path, req).unwrap();
            let want = match &req.columns {
                Some(n) => project(&full, n),
                None => full.clone(),
            };
            assert_same(&got, &want, &format!("seed {seed}: {:?}", req.columns));
            let (seq, seq_fetched) = stream_read(&path, req);
            assert_same(&got, &seq, &format!("seed {seed}: stream"));
            assert_eq!(fetched, seq_fetched, "seed {seed}: bytes fetched");
        }
    }
}

#[test]
fn parallel_scans_apply_filters_and_limits_like_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let random = random_batch(3, 5, 6000);
    let id: arrow_array::ArrayRef = std::sync::Arc::new(arrow_array::Int64Array::from_iter_values(
        (0..6000).map(|i| (i * 7919) % 6000 - 3000),
    ));
    let batch = RecordBatch::try_from_iter(
        std::iter::once(("id".to_string(), id)).chain(
            random
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .zip(random.columns().iter().cloned()),
        ),
    )
    .unwrap();
    let bytes = write(&batch, props(Compression::SNAPPY, 500));
    let path = dir.path().join("f.parquet");
    std::fs::write(&path, &bytes).unwrap();
    let filter: Filter = "id > 0".parse().unwrap();
    let requests = [
        ScanRequest {
            columns: None,
            filter: None,
            limit: Some(1234),
        },
        ScanRequest {
            columns: Some(vec!["c1".into()]),
            filter: Some(filter.clone()),
            limit: None,
        },
        ScanRequest {
            columns: None,
            filter: Some(filter),
            limit: Some(77),
        },
    ];
    for req in &requests {
        let (got, _) = scanner_read(&path, req).unwrap();
        let (want, _) = stream_read(&path, req);
        assert_same(&got, &want, &format!("{req:?}"));
        if let Some(l) = req.limit {
            assert_eq!(got.num_rows(), l);
        }
    }
}

#[test]
fn a_damaged_row_group_fails_the_parallel_scan_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let batch = random_batch(5, 4, 8000);
    let bytes = write(&batch, props(Compression::SNAPPY, 1000));
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&bytes)
        .unwrap();
    // Garbage over the middle of the fifth row group's first chunk.
    let (start, len) = meta.row_group(4).column(0).byte_range();
    let mut bad = bytes.to_vec();
    for b in &mut bad[(start + len / 4) as usize..(start + len / 2) as usize] {
        *b = 0xEE;
    }
    let path = dir.path().join("bad.parquet");
    std::fs::write(&path, &bad).unwrap();
    let e = scanner_read(&path, &ScanRequest::default()).unwrap_err();
    assert!(
        matches!(e, Error::Corrupt(_) | Error::Parquet(_)),
        "a decode error, not {e:?}"
    );

    // A row group the scan does not read is refused.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let src = Source::open_file(&path, "bad", FetchOptions::local()).unwrap();
    let ScanFile::Parquet(file) = rt.block_on(ScanFile::open(src)).unwrap() else {
        panic!("a Parquet file")
    };
    let e = file
        .stream_row_groups(&ScanRequest::default(), Some(vec![99]))
        .err()
        .unwrap();
    assert!(e.to_string().contains("row group 99"), "{e}");
}
