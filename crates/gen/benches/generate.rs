//! Generation alone, no encoding: ns per row of each preset (the spec
//! engine) at several batch sizes, with buffers recycled as the pipeline
//! does.

// criterion's macros define undocumented items.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use strata_gen::BatchGenerator;

fn bench(c: &mut Criterion) {
    for (name, batches) in [
        ("contacts", &[1024usize, 8192, 65536][..]),
        ("events", &[8192][..]),
        ("wide-u64", &[8192][..]),
        ("lineitem", &[8192][..]),
    ] {
        let generator = strata_gen::preset(name, 42);
        let mut group = c.benchmark_group(name);
        for &batch in batches {
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
}

criterion_group!(benches, bench);
criterion_main!(benches);
