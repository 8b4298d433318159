//! The seed case (50 non-null u64 columns x 8192 rows), encoded repeatedly
//! by one implementation, for instruction and cache counts:
//!
//! ```text
//! cargo build --release -p strata-row --example seed_case
//! valgrind --tool=cachegrind --cache-sim=yes target/release/examples/seed_case strata 20
//! valgrind --tool=cachegrind --cache-sim=yes target/release/examples/seed_case arrow-row 20
//! ```
//!
//! A third argument `decode` measures decoding instead; a fourth, `nulls`,
//! makes 10% of each column null.

use std::{hint::black_box, sync::Arc};

use arrow_array::{ArrayRef, UInt64Array};
use arrow_schema::DataType;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("strata", String::as_str);
    let iters: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let decode = args.get(3).is_some_and(|s| s == "decode");
    let nulls = args.get(4).is_some_and(|s| s == "nulls");
    let mut state = 42u64;
    let cols: Vec<ArrayRef> = (0..50)
        .map(|_| {
            let v: Vec<u64> = (0..8192)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    state
                })
                .collect();
            let valid: Vec<bool> = v.iter().map(|x| !nulls || x % 10 != 3).collect();
            Arc::new(UInt64Array::new(v.into(), Some(valid.into()))) as ArrayRef
        })
        .collect();
    match which {
        "arrow-row" => {
            let conv = arrow_row::RowConverter::new(
                (0..50)
                    .map(|_| arrow_row::SortField::new(DataType::UInt64))
                    .collect(),
            )
            .unwrap();
            let rows = conv.convert_columns(&cols).unwrap();
            for _ in 0..iters {
                if decode {
                    black_box(conv.convert_rows(&rows).unwrap());
                } else {
                    black_box(conv.convert_columns(black_box(&cols)).unwrap());
                }
            }
        }
        _ => {
            let enc = strata_row::RowEncoder::new(
                (0..50)
                    .map(|_| strata_row::SortField::new(DataType::UInt64))
                    .collect(),
            )
            .unwrap();
            let rows = enc.encode(&cols).unwrap();
            for _ in 0..iters {
                if decode {
                    black_box(enc.decode(&rows).unwrap());
                } else {
                    black_box(enc.encode(black_box(&cols)).unwrap());
                }
            }
        }
    }
}
