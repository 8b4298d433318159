//! Runs one file through every entry point that reads it and prints what
//! each did: the way to look at a fuzz artifact or a saved mutation.
//!
//! ```text
//! cargo run -p strata-fuzzkit --example replay -- FILE.parquet|FILE.arrow
//! STRATA_SHOW_DECODER_PANICS=1 RUST_BACKTRACE=1 cargo run ...   # where a decoder panicked
//! ```

use strata_fuzzkit::{Fixtures, Harness, SetupError};
use strata_parquet::Format;

fn main() -> Result<(), SetupError> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: replay FILE (.parquet or .arrow)")?;
    let bytes = std::fs::read(&path)?;
    let format = Format::from_extension(std::path::Path::new(&path)).unwrap_or(Format::Parquet);
    let fixtures = Fixtures::all(100, 42)?;
    let fixture = fixtures.pick(&bytes);
    println!("{path}: {format:?}, the {} fixture", fixture.preset);
    for o in Harness::new()?.file(fixture, format, &bytes)? {
        println!("{:?}: {:?}", o.entry, o.result);
    }
    Ok(())
}
