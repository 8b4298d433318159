//! strata-row against arrow-row 60.1, interleaved: every sample times a
//! batch of arrow-row calls and then a batch of strata calls on the same
//! input, so noise from other tenants of the machine hits both alike.
//! Prints a Markdown table of medians (and the median of the per-sample
//! ratios) for encode and decode of every bench case.
//!
//! `cargo bench -p strata-row --bench row_ab [-- SAMPLES]`

// A bench binary: undocumented helpers are fine.
#![allow(missing_docs)]

use std::{hint::black_box, time::Instant};

#[path = "support/cases.rs"]
mod cases;

/// Calls per timed batch.
const BATCH: usize = 20;

thread_local! {
    /// Calls per batch in this run: one under `cargo test`, which runs
    /// bench targets as a smoke test without `--bench`.
    static CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(BATCH) };
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time(mut f: impl FnMut()) -> f64 {
    let calls = CALLS.get();
    let t = Instant::now();
    for _ in 0..calls {
        f();
    }
    t.elapsed().as_secs_f64() * 1e6 / calls as f64
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let samples: usize = if bench {
        std::env::args()
            .skip(1)
            .find_map(|a| a.parse().ok())
            .unwrap_or(101)
    } else {
        CALLS.set(1);
        1
    };
    println!(
        "| case | op | arrow-row 60.1 median (µs) | strata median (µs) | speed-up (median of per-sample ratios) |"
    );
    println!("|---|---|---:|---:|---:|");
    for (name, cols) in cases::cases() {
        let (theirs, ours) = cases::encoders(&cols);
        let a = theirs.convert_columns(&cols).unwrap();
        let b = ours.encode(&cols).unwrap();
        for op in ["encode", "decode"] {
            let (mut ta, mut tb, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..samples {
                let (x, y) = if op == "encode" {
                    (
                        time(|| {
                            black_box(theirs.convert_columns(black_box(&cols)).unwrap());
                        }),
                        time(|| {
                            black_box(ours.encode(black_box(&cols)).unwrap());
                        }),
                    )
                } else {
                    (
                        time(|| {
                            black_box(theirs.convert_rows(&a).unwrap());
                        }),
                        time(|| {
                            black_box(ours.decode(&b).unwrap());
                        }),
                    )
                };
                ta.push(x);
                tb.push(y);
                ratio.push(x / y);
            }
            println!(
                "| {name} | {op} | {:.1} | {:.1} | {:.2}x |",
                median(&mut ta),
                median(&mut tb),
                median(&mut ratio)
            );
        }
    }
}
