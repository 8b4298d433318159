//! The benchmark cases, shared by the Criterion bench and the
//! `seed_case` example (for cachegrind and callgrind).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, DictionaryArray, Float64Array, Int32Array, StringArray, UInt64Array, types::Int32Type,
};
use arrow_buffer::NullBuffer;
use strata_row::{RowEncoder, SortField};

/// Rows per case.
pub const ROWS: usize = 8192;

/// Fixed-seed test data from strata-gen's SplitMix64 streams.
struct Rng(strata_gen::rng::RowRng);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(strata_gen::rng::RowRng::seeded(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
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

/// Every case, by name.
pub fn cases() -> Vec<(&'static str, Vec<ArrayRef>)> {
    let mut rng = Rng::new(42);
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

/// arrow-row's converter and strata's encoder for these columns (default
/// options). Panics unless both encode them to the same bytes: otherwise
/// the comparison would mean nothing.
pub fn encoders(cols: &[ArrayRef]) -> (arrow_row::RowConverter, RowEncoder) {
    let types: Vec<_> = cols.iter().map(|c| c.data_type().clone()).collect();
    let theirs = arrow_row::RowConverter::new(
        types
            .iter()
            .map(|t| arrow_row::SortField::new(t.clone()))
            .collect(),
    )
    .unwrap();
    let ours = RowEncoder::new(types.into_iter().map(SortField::new).collect()).unwrap();
    let a = theirs.convert_columns(cols).unwrap();
    let b = ours.encode(cols).unwrap();
    assert!((0..a.num_rows()).all(|i| a.row(i).as_ref() == b.row(i).as_bytes()));
    (theirs, ours)
}
