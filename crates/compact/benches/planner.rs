//! Wall time of the compaction planner (`strata_compact::planner::plan`:
//! struct-of-arrays, windows pruned by their bounds, window starts on all
//! cores) against Kudu's full sequential scan
//! (`strata_compact::planner::plan_reference`, the same plan) and against
//! the same planner over the 112-byte array-of-structs layout
//! (`strata_compact::planner::fat::plan`); rounds interleaved, median, min
//! and max per case. Cases: the Kudu YCSB rowsets at budgets 128, 256, 512
//! and 1024 MB, TinyOverlap with 10,000 rowsets, and 100,000 rowsets of
//! TinyOverlap and of a YCSB-like shape (`rowsets::ycsb_like`), all at
//! 128 MB unless named. Kudu's scan is left out at 100,000 rowsets (it is
//! quadratic: minutes per plan). Each call includes building the sorted
//! orders from the inputs (for the fat layout, also filling the 112-byte
//! records). All plans must be identical (asserted every round). Prints a
//! Markdown table.
//!
//! ```text
//! cargo bench -p strata-compact --bench planner -- [--rounds N]
//! ```
//!
//! The YCSB cases need `/work/shared/data/kudu-ycsb-rowsets.tsv` (from the
//! crate: `../../../shared/data/kudu-ycsb-rowsets.tsv`) and are skipped,
//! with a note, when it is absent. Without `--bench` (as
//! `cargo test --all-targets` runs it) it plans small inputs once per
//! planner and checks that they agree, as a smoke test.

use std::hint::black_box;
use std::time::Instant;

use strata_compact::planner::{self, Plan, PlannerOptions};
use strata_compact::rowsets::{RowsetInput, parse_tsv, tiny_overlap, ycsb_like};

const YCSB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/kudu-ycsb-rowsets.tsv"
);

struct Case {
    name: String,
    inputs: Vec<RowsetInput>,
    opts: PlannerOptions,
    /// Whether Kudu's full scan runs too.
    kudu: bool,
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
                kudu: true,
            });
        }
    }
    let n = if bench { 10_000 } else { 300 };
    out.push(Case {
        name: format!("TinyOverlap {n}, 128 MB"),
        inputs: tiny_overlap(n),
        opts: PlannerOptions::with_budget(128),
        kudu: true,
    });
    let big = if bench { 100_000 } else { 1_000 };
    out.push(Case {
        name: format!("TinyOverlap {big}, 128 MB"),
        inputs: tiny_overlap(big),
        opts: PlannerOptions::with_budget(128),
        kudu: !bench,
    });
    out.push(Case {
        name: format!("YCSB-like {big}, 128 MB"),
        inputs: ycsb_like(big, 1),
        opts: PlannerOptions::with_budget(128),
        kudu: !bench,
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

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

fn check_same(case: &Case, what: &str, got: &Plan, want: &Plan) {
    assert_eq!(
        got.quality.to_bits(),
        want.quality.to_bits(),
        "{}: {what}: quality differs",
        case.name
    );
    assert_eq!(got, want, "{}: {what}: plan differs", case.name);
}

/// "median (min-max)" in ms, or a dash for no runs.
fn cell(t: &mut [f64]) -> String {
    if t.is_empty() {
        return "-".into();
    }
    let (lo, hi) = (min(t), max(t));
    format!("{:.2} ({:.2}-{:.2})", median(t) * 1e3, lo * 1e3, hi * 1e3)
}

fn ratio(a: &mut [f64], b: &mut [f64]) -> String {
    if a.is_empty() || b.is_empty() {
        return "-".into();
    }
    format!("{:.2}x", median(a) / median(b))
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
    println!("rounds: {rounds} per planner, interleaved (the first planner rotates)\n");
    println!(
        "| case | rowsets | quality | picked (MB) | strata SoA, ms: median (min-max) | Kudu's scan, ms | fat layout, ms | Kudu / strata | fat / SoA |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    type PlanFn = fn(&[RowsetInput], &PlannerOptions) -> Plan;
    let planners: [(&str, PlanFn); 3] = [
        ("SoA", planner::plan),
        ("Kudu's scan", planner::plan_reference),
        ("fat", planner::fat::plan),
    ];
    for case in &cases {
        let (inputs, opts) = (&case.inputs, &case.opts);
        let run = |k: usize| timed(|| planners[k].1(black_box(inputs), black_box(opts)));
        let active: Vec<usize> = (0..3).filter(|&k| k != 1 || case.kudu).collect();
        // Warm-up, and the plan to compare.
        let (_, want) = run(0);
        let mut times: [Vec<f64>; 3] = Default::default();
        for r in 0..rounds {
            for i in 0..active.len() {
                let k = active[(r + i) % active.len()];
                let (t, p) = run(k);
                check_same(case, planners[k].0, &p, &want);
                times[k].push(t);
            }
        }
        let [soa, kudu, fat] = &mut times;
        println!(
            "| {} | {} | {:.6} | {} | {} | {} | {} | {} | {} |",
            case.name,
            inputs.len(),
            want.quality,
            want.picked_mb,
            cell(soa),
            cell(kudu),
            cell(fat),
            ratio(kudu, soa),
            ratio(fat, soa),
        );
    }
}
