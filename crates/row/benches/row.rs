//! strata-row against arrow-row 60.1, side by side in one run.
//!
//! Cases (8192 rows each): the seed case of 50 non-null u64 columns, the
//! same with 10% nulls, 10 mixed columns (i32, f64, utf8 of 0-30 bytes,
//! dictionary<i32, utf8>), and 8 string columns of 0-60 bytes. Each case
//! is encoded (`encode/...`) and decoded (`decode/...`) by both.
//!
//! `cargo bench -p strata-row --bench row`

// criterion's macros define undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/cases.rs"]
mod cases;
use cases::{cases, encoders};

fn bench(c: &mut Criterion) {
    for (name, cols) in cases() {
        let (theirs, ours) = encoders(&cols);
        let a = theirs.convert_columns(&cols).unwrap();
        let b = ours.encode(&cols).unwrap();

        let mut g = c.benchmark_group(format!("encode/{name}"));
        g.bench_function("arrow-row", |bch| {
            bch.iter(|| black_box(theirs.convert_columns(black_box(&cols)).unwrap()))
        });
        g.bench_function("strata", |bch| {
            bch.iter(|| black_box(ours.encode(black_box(&cols)).unwrap()))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("decode/{name}"));
        g.bench_function("arrow-row", |bch| {
            bch.iter(|| black_box(theirs.convert_rows(&a).unwrap()))
        });
        g.bench_function("strata", |bch| {
            bch.iter(|| black_box(ours.decode(&b).unwrap()))
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(60)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
