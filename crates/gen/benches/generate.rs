//! Generation alone, no encoding: ns per `contacts` row at several batch
//! sizes, with buffers recycled as the pipeline does.

// criterion's macros define undocumented items.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use strata_gen::BatchGenerator;

fn bench(c: &mut Criterion) {
    let generator = strata_gen::contacts(42);
    let mut group = c.benchmark_group("contacts");
    for batch in [1024usize, 8192, 65536] {
        group.throughput(Throughput::Elements(batch as u64));
        let mut scratch = Default::default();
        // Rows near the middle of a 10M-row run (8-digit phone ids).
        let row = 5_000_000u64;
        group.bench_function(format!("generate {batch}"), |b| {
            b.iter(|| {
                let out = generator.generate(row, batch, &mut scratch).unwrap();
                generator.recycle(out, &mut scratch);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
