//! Seeded corruption of valid files: every mutation must give a result or
//! an error, never a panic or a hang, and no single allocation may exceed
//! what reading the intact file needs.

mod support;

use std::{
    alloc::{GlobalAlloc, Layout, System},
    panic::AssertUnwindSafe,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
    time::Duration,
};

use arrow_array::RecordBatch;
use arrow_ipc::CompressionType;
use bytes::Bytes;
use futures::TryStreamExt;
use strata_gen::rng::RowRng;
use strata_io::{
    scan::{
        ScanRequest,
        ipc::{IpcFile, IpcReadOptions, ReadMode},
    },
    store::Source,
};
use support::*;

/// Records the largest single allocation while armed.
struct Tracking;

static ARMED: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// tracking only reads the requested size.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ARMED.load(Ordering::Relaxed) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if ARMED.load(Ordering::Relaxed) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ARMED.load(Ordering::Relaxed) {
            LARGEST.fetch_max(new_size, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// Reads `bytes` every way a scan can: all columns in each mode, a
/// projection, a take. Returns how many reads succeeded.
async fn read_all_ways(bytes: Bytes, ncols: usize) -> Result<usize, strata_io::Error> {
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

fn mutate(rng: &mut RowRng, valid: &[u8], tail_focus: usize) -> Vec<u8> {
    let mut b = valid.to_vec();
    let n = b.len() as u64;
    // Where: the footer and headers (near the end, or anywhere).
    let pos = |rng: &mut RowRng| -> usize {
        if rng.next_below(2) == 0 {
            let w = (tail_focus as u64).min(n);
            (n - 1 - rng.next_below(w)) as usize
        } else {
            rng.next_below(n) as usize
        }
    };
    match rng.next_below(4) {
        0 => {
            // Flip one to four bytes.
            for _ in 0..1 + rng.next_below(4) {
                let p = pos(rng);
                b[p] ^= 1 << rng.next_below(8);
            }
        }
        1 => {
            // Truncate.
            b.truncate(rng.next_below(n) as usize);
        }
        2 => {
            // An offset or length replaced by an extreme value.
            let extremes: [u64; 8] = [
                0,
                1,
                7,
                0x7fff_ffff,
                0xffff_ffff,
                u64::MAX,
                1 << 40,
                0x8000_0000_0000_0000,
            ];
            let v = extremes[rng.next_below(8) as usize];
            let p = pos(rng) & !3;
            let width = if rng.next_below(2) == 0 { 4 } else { 8 };
            for i in 0..width {
                if p + i < b.len() {
                    b[p + i] = (v >> (8 * i)) as u8;
                }
            }
        }
        _ => {
            // A random byte.
            let p = pos(rng);
            b[p] = rng.next_below(256) as u8;
        }
    }
    b
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
    let mut rng = RowRng::seeded(2026);
    let mut outcomes = [0usize; 2];
    let per_file = 200;
    for (f, (valid, ncols)) in files.iter().enumerate() {
        // The intact file reads every way, and sets the allocation bound.
        LARGEST.store(0, Ordering::Relaxed);
        ARMED.store(true, Ordering::Relaxed);
        let ok = rt
            .block_on(read_all_ways(Bytes::from(valid.clone()), *ncols))
            .unwrap();
        ARMED.store(false, Ordering::Relaxed);
        assert_eq!(ok, 18, "file {f}");
        let bound = LARGEST.load(Ordering::Relaxed).max(valid.len());

        for m in 0..per_file {
            let bad = mutate(&mut rng, valid, 4096);
            LARGEST.store(0, Ordering::Relaxed);
            ARMED.store(true, Ordering::Relaxed);
            let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
                rt.block_on(async {
                    tokio::time::timeout(
                        Duration::from_secs(10),
                        read_all_ways(Bytes::from(bad.clone()), *ncols),
                    )
                    .await
                })
            }));
            ARMED.store(false, Ordering::Relaxed);
            let largest = LARGEST.load(Ordering::Relaxed);
            match run {
                Err(_) => {
                    let path = dir.path().join("panicked.arrow");
                    std::fs::write(&path, &bad).unwrap();
                    panic!("file {f} mutation {m} panicked");
                }
                Ok(Err(_)) => panic!("file {f} mutation {m} hung"),
                Ok(Ok(r)) => outcomes[usize::from(r.is_ok())] += 1,
            }
            assert!(
                largest <= bound,
                "file {f} mutation {m}: allocated {largest} bytes at once, the intact file needs {bound}"
            );
        }
    }
    let total = outcomes[0] + outcomes[1];
    assert!(total >= 1000, "{total}");
    // Most mutations must be caught at open; the rest read something or
    // fail later.
    eprintln!(
        "{total} mutations: {} failed to open, {} opened",
        outcomes[0], outcomes[1]
    );
}
