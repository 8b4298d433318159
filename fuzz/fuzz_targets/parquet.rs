//! A Parquet file through every entry point that reads one (see
//! strata_fuzzkit::Entry): an error or a kept promise, never a panic, a
//! hang or a leftover output.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use strata_fuzzkit::{Fixtures, Harness};
use strata_parquet::Format;

static FIXTURES: LazyLock<Fixtures> = LazyLock::new(|| Fixtures::all(100, 42).unwrap());
static HARNESS: LazyLock<Harness> = LazyLock::new(|| Harness::new().unwrap());

fuzz_target!(|data: &[u8]| {
    let fixture = FIXTURES.pick(data);
    if let Err(v) = HARNESS.file(fixture, Format::Parquet, data) {
        panic!("{v}");
    }
});
