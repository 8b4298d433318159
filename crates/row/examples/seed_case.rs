//! One benchmark case encoded (or decoded) repeatedly by one
//! implementation, for instruction and cache counts:
//!
//! ```text
//! cargo build --release -p strata-row --example seed_case
//! valgrind --tool=cachegrind --cache-sim=yes target/release/examples/seed_case strata 20
//! valgrind --tool=cachegrind --cache-sim=yes target/release/examples/seed_case arrow-row 20
//! ```
//!
//! Arguments: `strata|arrow-row`, iterations, `encode|decode`, and the case
//! number in the bench's list (0 = 50 non-null u64 columns, the seed case).

use std::hint::black_box;

#[path = "../benches/support/cases.rs"]
#[allow(dead_code)]
mod cases;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("strata", String::as_str);
    let iters: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let decode = args.get(3).is_some_and(|s| s == "decode");
    let case: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0);
    let (_, cols) = cases::cases().swap_remove(case);
    let (conv, enc) = cases::encoders(&cols);
    match which {
        "arrow-row" => {
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
