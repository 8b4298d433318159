//! Seeded corruption for the corruption tests: mutations of valid files,
//! and an allocator that records the largest single allocation.
//!
//! Include with `#[path = "support/mutate.rs"] mod mutate;` in a test
//! binary of its own: it installs the global allocator.

#![allow(dead_code)]

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
};

use std::{future::Future, panic::AssertUnwindSafe, time::Duration};

use bytes::Bytes;
use strata_gen::rng::RowRng;

/// Records the largest single allocation while armed.
pub struct Tracking;

pub static ARMED: AtomicBool = AtomicBool::new(false);
pub static LARGEST: AtomicUsize = AtomicUsize::new(0);

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

pub use strata_testkit::mutate::mutate;

/// Runs `f` with allocation tracking on; returns its result and the
/// largest single allocation it made.
pub fn tracked<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.store(0, Ordering::Relaxed);
    ARMED.store(true, Ordering::Relaxed);
    let out = f();
    ARMED.store(false, Ordering::Relaxed);
    (out, LARGEST.load(Ordering::Relaxed))
}

/// Panics the hook saw since [`quiet_panics`] (a failing test restores the
/// hook first); the decoder panics that readers turn into errors are
/// counted by `strata_parquet::guard::caught`.
pub static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Replaces the panic hook with one that only counts, so a caught panic
/// neither prints nor allocates a backtrace.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {
        PANICS.fetch_add(1, Ordering::Relaxed);
    }));
}

/// Fails the test with the default panic hook back in place.
pub fn fail(msg: String) -> ! {
    drop(std::panic::take_hook());
    panic!("{msg}");
}

/// What [`run_mutations`] saw.
#[derive(Debug, Default)]
pub struct Outcomes {
    /// Mutations whose first read failed (most fail to open).
    pub failed: usize,
    /// Mutations that opened (their reads may still have failed).
    pub opened: usize,
    /// Decoder panics the reader turned into errors.
    pub panics: usize,
}

/// Reads each file intact (`read` must report `intact` successful reads,
/// and sets the allocation bound), then `per_file` seeded mutations of it.
/// Fails on a panic that escapes, a read that hangs for 10 s, or one
/// allocation larger than the intact file needed (or than the file).
pub fn run_mutations<F, Fut>(
    rt: &tokio::runtime::Runtime,
    files: &[(Vec<u8>, usize)],
    seed: u64,
    per_file: usize,
    tail_focus: usize,
    intact: usize,
    read: F,
) -> Outcomes
where
    F: Fn(Bytes, usize) -> Fut,
    Fut: Future<Output = Result<usize, strata_scan::Error>>,
{
    let mut rng = RowRng::seeded(seed);
    let mut out = Outcomes::default();
    // The reader turns a decoder's panic into an error; keep the default
    // hook from printing (and allocating for) a backtrace meanwhile.
    quiet_panics();
    let before = strata_parquet::guard::caught();
    for (f, (valid, ncols)) in files.iter().enumerate() {
        let (ok, largest) = tracked(|| rt.block_on(read(Bytes::from(valid.clone()), *ncols)));
        match ok {
            Ok(n) if n == intact => {}
            other => fail(format!(
                "intact file {f}: {other:?} successful reads, expected {intact}"
            )),
        }
        let bound = largest.max(valid.len());
        for m in 0..per_file {
            let bad = mutate(&mut rng, valid, tail_focus);
            let (run, largest) = tracked(|| {
                std::panic::catch_unwind(AssertUnwindSafe(|| {
                    rt.block_on(async {
                        tokio::time::timeout(
                            Duration::from_secs(10),
                            read(Bytes::from(bad.clone()), *ncols),
                        )
                        .await
                    })
                }))
            });
            match run {
                Err(_) => fail(format!("file {f} mutation {m} panicked")),
                Ok(Err(_)) => fail(format!("file {f} mutation {m} hung")),
                Ok(Ok(Ok(_))) => out.opened += 1,
                Ok(Ok(Err(_))) => out.failed += 1,
            }
            if largest > bound {
                fail(format!(
                    "file {f} mutation {m}: allocated {largest} bytes at once, the intact file needs {bound}"
                ));
            }
        }
    }
    drop(std::panic::take_hook());
    out.panics = (strata_parquet::guard::caught() - before) as usize;
    eprintln!(
        "{} mutations: {} failed to open, {} opened, {} decoder panics caught",
        out.failed + out.opened,
        out.failed,
        out.opened,
        out.panics
    );
    out
}
