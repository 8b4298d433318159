//! Wall time of the compaction planner, struct-of-arrays
//! (`strata_compact::planner::plan`) against the 112-byte array-of-structs
//! layout (`strata_compact::planner::fat::plan`), rounds interleaved, median
//! and minimum per case. Cases: the Kudu YCSB rowsets at budgets 128, 256,
//! 512 and 1024 MB, and TinyOverlap with 10,000 rowsets at 128 MB. Each
//! call includes building the sorted orders from the inputs (for the fat
//! layout, also filling the 112-byte records). Both layouts must give the
//! same quality and picked MB (asserted). Prints a Markdown table.
//!
//! ```text
//! cargo bench -p strata-compact --bench planner -- [--rounds N]
//! ```
//!
//! The YCSB cases need `/work/shared/data/kudu-ycsb-rowsets.tsv` (from the
//! crate: `../../../shared/data/kudu-ycsb-rowsets.tsv`) and are skipped,
//! with a note, when it is absent. Without `--bench` (as
//! `cargo test --all-targets` runs it) it plans small inputs once per
//! layout and checks that they agree, as a smoke test.

use std::hint::black_box;
use std::time::Instant;

use strata_compact::planner::{self, Plan, PlannerOptions};
use strata_compact::rowsets::{RowsetInput, parse_tsv, tiny_overlap};

const YCSB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/kudu-ycsb-rowsets.tsv"
);

struct Case {
    name: String,
    inputs: Vec<RowsetInput>,
    opts: PlannerOptions,
}

fn ycsb() -> Option<Vec<RowsetInput>> {
    match std::fs::read_to_string(YCSB) {
        Ok(text) => Some(parse_tsv(&text).expect("YCSB TSV parses")),
        Err(e) => {
            eprintln!("skipping the YCSB cases: {YCSB}: {e}");
            None
        }
    }
}

fn cases(bench: bool) -> Vec<Case> {
    let mut out = Vec::new();
    if let Some(mut rows) = ycsb() {
        if !bench {
            rows.truncate(300);
        }
        let label = if bench {
            "YCSB".to_string()
        } else {
            format!("YCSB first {}", rows.len())
        };
        for budget in [128, 256, 512, 1024] {
            out.push(Case {
                name: format!("{label}, {budget} MB"),
                inputs: rows.clone(),
                opts: PlannerOptions::with_budget(budget),
            });
        }
    }
    let n = if bench { 10_000 } else { 300 };
    out.push(Case {
        name: format!("TinyOverlap {n}, 128 MB"),
        inputs: tiny_overlap(n),
        opts: PlannerOptions::with_budget(128),
    });
    out
}

fn timed(f: impl FnOnce() -> Plan) -> (f64, Plan) {
    let t = Instant::now();
    let p = black_box(f());
    (t.elapsed().as_secs_f64(), p)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn check_same(case: &Case, soa: &Plan, fat: &Plan) {
    assert_eq!(
        soa.quality.to_bits(),
        fat.quality.to_bits(),
        "{}: quality differs between layouts",
        case.name
    );
    assert_eq!(
        soa.picked_mb, fat.picked_mb,
        "{}: picked MB differs between layouts",
        case.name
    );
    assert_eq!(
        soa.picked, fat.picked,
        "{}: picked rowsets differ",
        case.name
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bench = args.iter().any(|a| a == "--bench");
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse().expect("--rounds N"))
        .unwrap_or(if bench { 15 } else { 1 });

    let cases = cases(bench);
    println!("rounds: {rounds} per layout, interleaved (soa, fat alternate first)\n");
    println!(
        "| case | rowsets | quality | picked (MB) | SoA median (ms) | SoA min (ms) | fat median (ms) | fat min (ms) | fat / SoA (median) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for case in &cases {
        let (inputs, opts) = (&case.inputs, &case.opts);
        let soa_call = || planner::plan(black_box(inputs), black_box(opts));
        let fat_call = || planner::fat::plan(black_box(inputs), black_box(opts));
        // Warm-up, and the plans to compare.
        let (_, soa_plan) = timed(soa_call);
        let (_, fat_plan) = timed(fat_call);
        check_same(case, &soa_plan, &fat_plan);
        let mut soa_t = Vec::with_capacity(rounds);
        let mut fat_t = Vec::with_capacity(rounds);
        for r in 0..rounds {
            let order: [bool; 2] = if r % 2 == 0 {
                [true, false]
            } else {
                [false, true]
            };
            for is_soa in order {
                if is_soa {
                    let (t, p) = timed(soa_call);
                    check_same(case, &p, &fat_plan);
                    soa_t.push(t);
                } else {
                    let (t, p) = timed(fat_call);
                    check_same(case, &soa_plan, &p);
                    fat_t.push(t);
                }
            }
        }
        let (soa_min, fat_min) = (min(&soa_t), min(&fat_t));
        let (soa_med, fat_med) = (median(&mut soa_t), median(&mut fat_t));
        println!(
            "| {} | {} | {:.6} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2}x |",
            case.name,
            inputs.len(),
            soa_plan.quality,
            soa_plan.picked_mb,
            soa_med * 1e3,
            soa_min * 1e3,
            fat_med * 1e3,
            fat_min * 1e3,
            fat_med / soa_med
        );
    }
}
