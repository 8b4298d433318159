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

use std::{hint::black_box, sync::Arc};

use arrow_array::{
    ArrayRef, DictionaryArray, Float64Array, Int32Array, StringArray, UInt64Array, types::Int32Type,
};
use arrow_buffer::NullBuffer;
use criterion::{Criterion, criterion_group, criterion_main};
use strata_row::{RowEncoder, SortField};

const ROWS: usize = 8192;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn nulls(&mut self, rate: f64) -> Option<NullBuffer> {
        (rate > 0.0).then(|| {
            NullBuffer::from(
                (0..ROWS)
                    .map(|_| (self.next() % 1000) as f64 >= rate * 1000.0)
                    .collect::<Vec<_>>(),
            )
        })
    }
    fn string(&mut self, max: u64) -> String {
        let len = self.next() % (max + 1);
        (0..len)
            .map(|_| (b'a' + (self.next() % 26) as u8) as char)
            .collect()
    }
}

fn u64s(rng: &mut Rng, cols: usize, null_rate: f64) -> Vec<ArrayRef> {
    (0..cols)
        .map(|_| {
            let v: Vec<u64> = (0..ROWS).map(|_| rng.next()).collect();
            Arc::new(UInt64Array::new(v.into(), rng.nulls(null_rate))) as ArrayRef
        })
        .collect()
}

fn strings(rng: &mut Rng, max: u64, null_rate: f64) -> ArrayRef {
    let nulls = rng.nulls(null_rate);
    let v: Vec<Option<String>> = (0..ROWS)
        .map(|i| {
            let s = rng.string(max);
            nulls.as_ref().is_none_or(|n| n.is_valid(i)).then_some(s)
        })
        .collect();
    Arc::new(StringArray::from(v))
}

fn mixed(rng: &mut Rng) -> Vec<ArrayRef> {
    (0..10)
        .map(|i| match i % 4 {
            0 => {
                let v: Vec<i32> = (0..ROWS).map(|_| rng.next() as i32).collect();
                Arc::new(Int32Array::new(v.into(), rng.nulls(0.05))) as ArrayRef
            }
            1 => {
                let v: Vec<f64> = (0..ROWS).map(|_| rng.next() as f64 / 7.0).collect();
                Arc::new(Float64Array::new(v.into(), rng.nulls(0.05))) as ArrayRef
            }
            2 => strings(rng, 30, 0.05),
            _ => {
                let values: Vec<String> = (0..50).map(|_| rng.string(20)).collect();
                let keys: Vec<i32> = (0..ROWS).map(|_| (rng.next() % 50) as i32).collect();
                Arc::new(
                    DictionaryArray::<Int32Type>::try_new(
                        Int32Array::new(keys.into(), rng.nulls(0.05)),
                        Arc::new(StringArray::from(values)),
                    )
                    .unwrap(),
                ) as ArrayRef
            }
        })
        .collect()
}

fn cases() -> Vec<(&'static str, Vec<ArrayRef>)> {
    let mut rng = Rng(42);
    vec![
        ("50 u64(0)", u64s(&mut rng, 50, 0.0)),
        ("50 u64(0.1)", u64s(&mut rng, 50, 0.1)),
        ("10 mixed", mixed(&mut rng)),
        (
            "8 utf8 0-60",
            (0..8).map(|_| strings(&mut rng, 60, 0.02)).collect(),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, cols) in cases() {
        let types: Vec<_> = cols.iter().map(|c| c.data_type().clone()).collect();
        let theirs = arrow_row::RowConverter::new(
            types
                .iter()
                .map(|t| arrow_row::SortField::new(t.clone()))
                .collect(),
        )
        .unwrap();
        let ours =
            RowEncoder::new(types.iter().map(|t| SortField::new(t.clone())).collect()).unwrap();
        // Same bytes, or the comparison means nothing.
        let a = theirs.convert_columns(&cols).unwrap();
        let b = ours.encode(&cols).unwrap();
        assert!((0..ROWS).all(|i| a.row(i).as_ref() == b.row(i).as_bytes()));

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
