//! `strata bench` in a build without the `bench` feature: the suites,
//! their peers, charts and counters are left out of the default build
//! (53 s of compile-unit time, and strata-bench sits just before the
//! binary on the build's critical path; docs/src/building.md); the command
//! says how to build them in.

use anyhow::{Result, bail};
use clap::Args;

/// Whatever follows `strata bench`.
#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    args: Vec<String>,
}

/// Refuses, saying how to build the suites in.
pub(crate) fn run(_: BenchArgs) -> Result<u8> {
    bail!(
        "this strata was built without the benchmark suites; build them in with \
         `cargo build --release --features bench` (or `cargo run --release --features bench -- bench ...`)"
    )
}
