//! Integration tests of strata-infer, one module per concern.

mod roundtrip;
