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

/// One seeded mutation of `valid`: bit flips, a truncation, an extreme
/// offset or length (4 or 8 bytes), or a random byte; half of the
/// positions fall in the last `tail_focus` bytes (footers and headers).
pub fn mutate(rng: &mut RowRng, valid: &[u8], tail_focus: usize) -> Vec<u8> {
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

/// Runs `f` with allocation tracking on; returns its result and the
/// largest single allocation it made.
pub fn tracked<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.store(0, Ordering::Relaxed);
    ARMED.store(true, Ordering::Relaxed);
    let out = f();
    ARMED.store(false, Ordering::Relaxed);
    (out, LARGEST.load(Ordering::Relaxed))
}

/// Panics seen since [`quiet_panics`]: each is a decoder panic that the
/// reader turned into an error (a failing test restores the hook first).
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
