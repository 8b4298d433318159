//! Projected IPC reads against full reads with arrow-rs, and what they
//! fetch.

use std::sync::Arc;

use crate::support::*;
use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_ipc::CompressionType;
use arrow_schema::{DataType, Field, Schema};
use futures::TryStreamExt;
use strata_gen::rng::RowRng;
use strata_scan::{
    ScanRequest,
    ipc::{IpcFile, IpcReadOptions, ReadMode},
};
use strata_store::source::{FetchOptions, Source};

const MODES: [ReadMode; 3] = [ReadMode::Auto, ReadMode::Projected, ReadMode::WholeBlocks];

fn open(rt: &tokio::runtime::Runtime, src: Source, mode: ReadMode) -> IpcFile {
    rt.block_on(IpcFile::open(src, None))
        .unwrap()
        .with_options(IpcReadOptions {
            mode,
            ..Default::default()
        })
}

fn names(schema: &Schema, idx: &[usize]) -> Vec<String> {
    idx.iter()
        .map(|&i| schema.field(i).name().clone())
        .collect()
}

#[test]
fn projected_reads_equal_full_reads_then_projection() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let compressions = [
        None,
        Some(CompressionType::LZ4_FRAME),
        Some(CompressionType::ZSTD),
    ];
    for seed in 0..40u64 {
        let mut rng = RowRng::seeded(seed);
        let ncols = 1 + rng.next_below(8) as usize;
        let schema = random_schema(&mut rng, ncols);
        let nbatches = rng.next_below(5) as usize;
        let batches: Vec<RecordBatch> = (0..nbatches)
            .map(|_| {
                let rows = match rng.next_below(4) {
                    0 => 0,
                    1 => 1 + rng.next_below(5) as usize,
                    _ => rng.next_below(400) as usize,
                };
                let nulls = [0.0, 0.0, 0.2, 0.9][rng.next_below(4) as usize];
                random_batch(&mut rng, &schema, rows, nulls)
            })
            .collect();
        let how = Writing {
            compression: compressions[(seed % 3) as usize],
            strata: seed % 2 == 0,
        };
        let path = dir.path().join(format!("f{seed}.arrow"));
        write_ipc(&path, &schema, &batches, how);
        let full = read_ipc_full(&path);
        assert_eq!(full.len(), batches.len());

        for trial in 0..4 {
            // A random subset in random order (every column on trial 0).
            let mut proj: Vec<usize> = (0..ncols).collect();
            for i in (1..proj.len()).rev() {
                proj.swap(i, rng.next_below(i as u64 + 1) as usize);
            }
            if trial > 0 {
                proj.truncate(1 + rng.next_below(ncols as u64) as usize);
            }
            let want: Vec<RecordBatch> = full.iter().map(|b| b.project(&proj).unwrap()).collect();
            for mode in MODES {
                let src = local_source(&rt, &path, FetchOptions::local());
                let file = open(&rt, src, mode);
                let req = ScanRequest {
                    columns: Some(names(&schema, &proj)),
                    ..Default::default()
                };
                let got: Vec<RecordBatch> = rt
                    .block_on(file.stream(&req).unwrap().try_collect())
                    .unwrap();
                assert_eq!(
                    got, want,
                    "seed {seed} trial {trial} {mode:?} {how:?} {proj:?}"
                );
            }
            // From memory: whole blocks, the same answer.
            let src = Source::from_bytes(std::fs::read(&path).unwrap().into());
            let file = open(&rt, src, ReadMode::Auto);
            let got = rt
                .block_on(file.read_batches(&(0..nbatches).collect::<Vec<_>>(), &proj))
                .unwrap();
            assert_eq!(got, want, "seed {seed} memory");
        }
    }
}

/// `n` non-null Int64 columns of `rows` rows in `batches` batches.
fn int_file(path: &std::path::Path, n: usize, rows: usize, batches: usize, strata: bool) {
    let schema = Arc::new(Schema::new(
        (0..n)
            .map(|i| Field::new(format!("c{i}"), DataType::Int64, true))
            .collect::<Vec<_>>(),
    ));
    let data: Vec<RecordBatch> = (0..batches)
        .map(|b| {
            let cols: Vec<ArrayRef> = (0..n)
                .map(|c| {
                    Arc::new(Int64Array::from_iter_values(
                        (0..rows as i64).map(|r| r * 1000 + (b * n + c) as i64),
                    )) as ArrayRef
                })
                .collect();
            RecordBatch::try_new(schema.clone(), cols).unwrap()
        })
        .collect();
    write_ipc(
        path,
        &schema,
        &data,
        Writing {
            compression: None,
            strata,
        },
    );
}

#[test]
fn a_projected_read_fetches_only_the_projected_buffers() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ints.arrow");
    let (ncols, rows, nbatches) = (8, 50_000, 6);
    int_file(&path, ncols, rows, nbatches, true);
    let size = std::fs::metadata(&path).unwrap().len();
    let column_bytes = (rows * 8 * nbatches) as u64;

    for proj in [vec![3], vec![0, 1], vec![7, 2, 5]] {
        // No holes read through: exactly the buffers, plus the footer tail
        // and the batch headers.
        let mut opts = FetchOptions::local();
        opts.coalesce.hole_size_limit = 0;
        let src = local_source(&rt, &path, opts);
        let stats = src.stats().clone();
        let file = open(&rt, src, ReadMode::Auto);
        let after_open = stats.snapshot();
        assert_eq!(after_open.requests, 1, "the footer takes one request");
        let got = rt
            .block_on(file.read_batches(&(0..nbatches).collect::<Vec<_>>(), &proj))
            .unwrap();
        assert_eq!(got.len(), nbatches);
        let s = stats.snapshot();
        let log = stats.ranges();
        let projected = rt.block_on(file.projected_bytes(&proj)).unwrap();
        assert_eq!(projected, column_bytes * proj.len() as u64);
        let headers: u64 = (0..nbatches)
            .map(|b| file.batch_ranges(b).unwrap().0)
            .filter(|m| log.contains(m))
            .map(|m| m.end - m.start)
            .sum();
        let body = s.bytes_fetched - after_open.bytes_fetched - headers;
        assert_eq!(body, projected, "{proj:?}: {log:?}");
        for r in &log[1..] {
            let inside = (0..nbatches).any(|b| {
                let (m, body) = file.batch_ranges(b).unwrap();
                *r == m || (r.start >= body.start && r.end <= body.end)
            });
            assert!(inside, "{r:?} is neither a header nor inside a body");
        }
        assert!(s.bytes_fetched < size * (proj.len() as u64 + 1) / ncols as u64);
    }

    // Default coalescing: the whole projection of a batch (adjacent
    // columns) is one request, and bytes stay within 1.1x.
    let src = local_source(&rt, &path, FetchOptions::local());
    let stats = src.stats().clone();
    let file = open(&rt, src, ReadMode::Auto);
    rt.block_on(file.read_batches(&(0..nbatches).collect::<Vec<_>>(), &[1, 2]))
        .unwrap();
    let s = stats.snapshot();
    assert_eq!(s.requests, 1 + nbatches as u64 + nbatches as u64);
    assert!(s.bytes_fetched as f64 <= 1.1 * (2 * column_bytes) as f64 + 64.0 * 1024.0);

    // Every column: whole blocks, no header pass, neighbours coalesced.
    let src = local_source(&rt, &path, FetchOptions::local());
    let stats = src.stats().clone();
    let file = open(&rt, src, ReadMode::Auto);
    rt.block_on(file.read_batches(
        &(0..nbatches).collect::<Vec<_>>(),
        &(0..ncols).collect::<Vec<_>>(),
    ))
    .unwrap();
    let s = stats.snapshot();
    assert_eq!(s.requests, 1 + 1, "{:?}", stats.ranges());
}

#[test]
fn take_reads_only_the_batches_holding_the_rows() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    for strata in [true, false] {
        let path = dir.path().join(format!("t{strata}.arrow"));
        let mut rng = RowRng::seeded(7);
        let schema = random_schema(&mut rng, 5);
        let sizes = [10_000usize, 0, 3_700, 25_000, 100, 0, 8_000];
        let batches: Vec<RecordBatch> = sizes
            .iter()
            .map(|&n| random_batch(&mut rng, &schema, n, 0.2))
            .collect();
        write_ipc(
            &path,
            &schema,
            &batches,
            Writing {
                compression: Some(CompressionType::ZSTD),
                strata,
            },
        );
        let all = arrow_select::concat::concat_batches(&schema, &read_ipc_full(&path)).unwrap();
        let total = all.num_rows() as u64;
        let rows: Vec<u64> = vec![5, 14_000, 13_900, 5, total - 1, 13_700, 40_000];
        let cols = vec!["c3".to_string(), "c0".to_string()];
        let mut opts = FetchOptions::local();
        opts.coalesce.hole_size_limit = 0;
        let src = local_source(&rt, &path, opts);
        let stats = src.stats().clone();
        let file = open(&rt, src, ReadMode::Projected);
        let got = rt.block_on(file.take(&rows, Some(&cols))).unwrap();
        let idx = arrow_array::UInt64Array::from(rows.clone());
        let want =
            arrow_select::take::take_record_batch(&all.project(&[3, 0]).unwrap(), &idx).unwrap();
        assert_eq!(got, want, "strata writer: {strata}");
        // Rows 5, 13,700..14,000, 40,000 and the last lie in batches 0, 3
        // and 6 (the footer's tail read covers only the end of batch 6).
        let touched = |header: bool| -> Vec<usize> {
            (0..sizes.len())
                .filter(|&b| {
                    let (m, body) = file.batch_ranges(b).unwrap();
                    let r = if header { m } else { body };
                    // The first request is the footer's tail read.
                    stats.ranges()[1..]
                        .iter()
                        .any(|x| x.start < r.end && r.start < x.end)
                })
                .collect()
        };
        assert_eq!(touched(false), vec![0, 3, 6]);
        if strata {
            assert_eq!(
                touched(true),
                vec![0, 3, 6],
                "only the touched batches' headers"
            );
        } else {
            assert_eq!(touched(true), (0..sizes.len()).collect::<Vec<_>>());
        }
        let e = rt.block_on(file.take(&[total], None)).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert_eq!(rt.block_on(file.take(&[], None)).unwrap().num_rows(), 0);
    }
}

#[test]
fn limit_stops_reading_early() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ints.arrow");
    int_file(&path, 4, 10_000, 10, true);
    let full = read_ipc_full(&path);
    for limit in [0usize, 1, 9_999, 10_000, 10_001, 25_000, 200_000] {
        let src = local_source(&rt, &path, FetchOptions::local());
        let stats = src.stats().clone();
        let file = open(&rt, src, ReadMode::Projected);
        let req = ScanRequest {
            columns: Some(vec!["c2".into()]),
            limit: Some(limit),
            ..Default::default()
        };
        let got: Vec<RecordBatch> = rt
            .block_on(file.stream(&req).unwrap().try_collect())
            .unwrap();
        let n: usize = got.iter().map(|b| b.num_rows()).sum();
        assert_eq!(n, limit.min(100_000));
        let got = arrow_select::concat::concat_batches(
            &got[0..].first().map_or_else(
                || Arc::new(full[0].schema().project(&[2]).unwrap()),
                |b| b.schema(),
            ),
            &got,
        )
        .unwrap();
        let want = arrow_select::concat::concat_batches(&full[0].schema(), &full)
            .unwrap()
            .project(&[2])
            .unwrap()
            .slice(0, n);
        assert_eq!(got, want);
        // Batches past the limit are never fetched.
        let batches_needed = limit.div_ceil(10_000).min(10) as u64;
        assert_eq!(
            stats.snapshot().requests,
            1 + 2 * batches_needed,
            "limit {limit}"
        );
    }
}

#[test]
fn bad_requests_are_clear_errors() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ints.arrow");
    int_file(&path, 3, 10, 2, true);
    let file = open(
        &rt,
        local_source(&rt, &path, FetchOptions::local()),
        ReadMode::Auto,
    );
    let req = |cols: &[&str]| ScanRequest {
        columns: Some(cols.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    };
    let e = file.stream(&req(&["c9"])).err().unwrap();
    assert!(e.to_string().contains("no column 'c9'"), "{e}");
    let e = file.stream(&req(&["c1", "c1"])).err().unwrap();
    assert!(e.to_string().contains("more than once"), "{e}");
    let e = rt.block_on(file.read_batches(&[2], &[0])).unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
}

#[test]
fn a_small_file_costs_one_request() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.arrow");
    int_file(&path, 5, 300, 4, false);
    assert!(std::fs::metadata(&path).unwrap().len() < strata_scan::TAIL_PREFETCH);
    for mode in MODES {
        let src = local_source(&rt, &path, FetchOptions::local());
        let stats = src.stats().clone();
        let file = open(&rt, src, mode);
        let got = rt
            .block_on(file.read_batches(&[0, 1, 2, 3], &[4, 1]))
            .unwrap();
        let want: Vec<RecordBatch> = read_ipc_full(&path)
            .iter()
            .map(|b| b.project(&[4, 1]).unwrap())
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            stats.snapshot().requests,
            1,
            "{mode:?}: the tail read holds it all"
        );
    }
}
