//! A compaction manifest's text: parsed, key bounds decoded and a
//! compaction planned, or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = strata_fuzzkit::manifest(data);
});
