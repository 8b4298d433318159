//! Runs only the compaction planner, ITERS times, on an input built once,
//! for cache simulation (`benches/compact_cachegrind.sh`): the difference
//! between ITERS and 0 iterations leaves the planner's own work.
//!
//! ```text
//! plan_case soa|fat|kudu ycsb|tiny|tiny100k|ycsb100k BUDGET_MB ITERS
//! ```
//!
//! `ycsb` reads `/work/shared/data/kudu-ycsb-rowsets.tsv` (relative to the
//! crate: `../../../shared/data/`) and exits with status 2 when it is
//! absent; `tiny` is Kudu's TinyOverlap shape with 10,000 rowsets,
//! `tiny100k` the same with 100,000, and `ycsb100k` 100,000 rowsets
//! shaped like the YCSB file's (`rowsets::ycsb_like`, seed 1). `kudu` runs
//! Kudu's full sequential scan (`planner::plan_reference`), `soa` and
//! `fat` the pruned planner over the two layouts.

use std::hint::black_box;
use std::process::ExitCode;

use strata_compact::planner::{self, Plan, PlannerOptions};
use strata_compact::rowsets::{RowsetInput, parse_tsv, tiny_overlap, ycsb_like};

const YCSB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/kudu-ycsb-rowsets.tsv"
);

#[inline(never)]
fn plan_soa(inputs: &[RowsetInput], opts: &PlannerOptions) -> Plan {
    planner::plan(black_box(inputs), black_box(opts))
}

#[inline(never)]
fn plan_kudu(inputs: &[RowsetInput], opts: &PlannerOptions) -> Plan {
    planner::plan_reference(black_box(inputs), black_box(opts))
}

#[inline(never)]
fn plan_fat(inputs: &[RowsetInput], opts: &PlannerOptions) -> Plan {
    planner::fat::plan(black_box(inputs), black_box(opts))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 4 {
        eprintln!("usage: plan_case soa|fat|kudu ycsb|tiny|tiny100k|ycsb100k BUDGET_MB ITERS");
        return ExitCode::from(1);
    }
    let plan_fn: fn(&[RowsetInput], &PlannerOptions) -> Plan = match args[0].as_str() {
        "soa" => plan_soa,
        "fat" => plan_fat,
        "kudu" => plan_kudu,
        other => {
            eprintln!("unknown layout {other}: soa, fat or kudu");
            return ExitCode::from(1);
        }
    };
    let inputs = match args[1].as_str() {
        "ycsb" => match std::fs::read_to_string(YCSB) {
            Ok(text) => parse_tsv(&text).expect("YCSB TSV parses"),
            Err(e) => {
                eprintln!("{YCSB}: {e}");
                return ExitCode::from(2);
            }
        },
        "tiny" => tiny_overlap(10_000),
        "tiny100k" => tiny_overlap(100_000),
        "ycsb100k" => ycsb_like(100_000, 1),
        other => {
            eprintln!("unknown case {other}: ycsb, tiny, tiny100k or ycsb100k");
            return ExitCode::from(1);
        }
    };
    let (Ok(budget), Ok(iters)) = (args[2].parse::<u64>(), args[3].parse::<u32>()) else {
        eprintln!("BUDGET_MB and ITERS must be integers");
        return ExitCode::from(1);
    };
    let opts = PlannerOptions::with_budget(budget);
    let mut last = None;
    for _ in 0..iters {
        last = Some(black_box(plan_fn(&inputs, &opts)));
    }
    if let Some(p) = last {
        println!(
            "{} rowsets, quality {:.6}, picked {} ({} MB)",
            inputs.len(),
            p.quality,
            p.picked.len(),
            p.picked_mb
        );
    }
    ExitCode::SUCCESS
}
