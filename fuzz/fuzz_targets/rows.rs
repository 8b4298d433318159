//! Arbitrary bytes as stored rows of a row encoder: decoded (or an
//! error), and decoded rows encode again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = strata_fuzzkit::rows(data);
});
