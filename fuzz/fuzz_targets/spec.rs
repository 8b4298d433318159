//! A spec file's text: parsed and, when valid, a few rows generated; an
//! error or rows, never a panic or an allocation that exhausts memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = strata_fuzzkit::spec_text(data);
});
