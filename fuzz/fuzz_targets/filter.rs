//! A `--filter` expression: parsed, checked, and pushed down into scans
//! of the events files, which must keep the rows the in-memory filter
//! keeps.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use strata_fuzzkit::{Fixture, Harness};

static EVENTS: LazyLock<Fixture> = LazyLock::new(|| Fixture::new("events", 400, 42).unwrap());
static HARNESS: LazyLock<Harness> = LazyLock::new(|| Harness::new().unwrap());

fuzz_target!(|data: &[u8]| {
    let _ = strata_fuzzkit::filter(&HARNESS, &EVENTS, data);
});
