//! The planner against Kudu's `compaction_policy-test` cases, its
//! `KeySpaceCdfTest` layouts, the YCSB rowset file, and an exhaustive
//! reference on small random inputs.

use std::time::Instant;

use strata_compact::planner::{
    self, Plan, PlannerOptions, Rules, average_height, fat, plan, plan_brute_force, plan_reference,
    size_mb,
};
use strata_compact::rowsets::{
    RowsetInput, non_overlapping, parse_tsv, significant_overlap, tiny_overlap,
};
use strata_gen::rng::RowRng;

const MOCK_SIZE: u64 = 1_000_000;

fn check_budget(inputs: &[RowsetInput], p: &Plan, budget_mb: u64) {
    let mb: u64 = p
        .picked
        .iter()
        .map(|&i| u64::from(size_mb(inputs[i as usize].size_bytes)))
        .sum();
    assert_eq!(mb, p.picked_mb);
    let bytes: u64 = p
        .picked
        .iter()
        .map(|&i| inputs[i as usize].size_bytes)
        .sum();
    assert_eq!(bytes, p.picked_bytes);
    assert!(
        p.picked_mb <= budget_mb,
        "{} MB picked, budget {budget_mb}",
        p.picked_mb
    );
    assert!(
        p.picked.windows(2).all(|w| w[0] < w[1]),
        "picked not ascending: {:?}",
        p.picked
    );
    assert!(p.picked.iter().all(|&i| (i as usize) < inputs.len()));
    assert_eq!(p.quality > 0.0, !p.picked.is_empty());
}

fn run(inputs: &[RowsetInput], budget_mb: u64) -> Plan {
    let opts = PlannerOptions::with_budget(budget_mb);
    let p = plan(inputs, &opts);
    check_budget(inputs, &p, budget_mb);
    p
}

/// Files of 1.4 MiB under a 5 MiB budget: each weighs 2 MiB (rounded
/// up), so the picked bytes stay within the budget, and the plan reports
/// them exactly.
#[test]
fn picked_bytes_stay_within_the_budget() {
    let size: u64 = (14 << 20) / 10;
    let inputs: Vec<RowsetInput> = (0..6u8)
        .map(|i| RowsetInput::new(size, vec![b'a' + i], vec![b'a' + i + 5]))
        .collect();
    let p = run(&inputs, 5);
    assert!(!p.picked.is_empty(), "{p:?}");
    assert_eq!(p.picked_bytes, p.picked.len() as u64 * size);
    assert!(p.picked_bytes <= 5 << 20, "{} bytes picked", p.picked_bytes);
    assert_eq!(size_mb(size), 2);
    // Kudu's weights where Kudu's inputs lie: whole MiB, or under 1 MiB.
    assert_eq!(size_mb(32 << 20), 32);
    assert_eq!(size_mb(MOCK_SIZE), 1);
    assert_eq!(size_mb(0), 1);
}

#[test]
fn budgeted_selection() {
    let inputs = vec![
        RowsetInput::new(MOCK_SIZE, "C", "c"),
        RowsetInput::new(MOCK_SIZE, "B", "a"),
        RowsetInput::new(MOCK_SIZE, "A", "b"),
    ];
    let p = run(&inputs, 1000);
    eprintln!("TestBudgetedSelection: {p:?}");
    assert_eq!(p.picked, vec![0, 1, 2]);
    // Under the 2017 rules both of Kudu's bounds hold.
    assert!(p.quality >= 1.0 && p.quality <= 2.0, "{}", p.quality);
}

#[test]
fn non_overlapping_picks_nothing() {
    let inputs = non_overlapping(10_000);
    let p = run(&inputs, 128);
    assert_eq!(p.quality, 0.0);
    assert!(p.picked.is_empty());
    assert!(
        (p.average_height - 1.0).abs() < 1e-9,
        "{}",
        p.average_height
    );
}

#[test]
fn tiny_overlap_picks_nothing() {
    let inputs = tiny_overlap(10_000);
    let t = Instant::now();
    let p = run(&inputs, 128);
    eprintln!("TinyOverlap 10k, 128 MB: {p:?} in {:?}", t.elapsed());
    assert_eq!(p.quality, 0.0);
    assert!(p.picked.is_empty());
}

#[test]
fn significant_overlap_picks_the_budget() {
    let inputs = significant_overlap(100);
    let p = run(&inputs, 64);
    eprintln!(
        "SignificantOverlap 100, 64 MB: quality {} picked {} ({} MB)",
        p.quality,
        p.picked.len(),
        p.picked_mb
    );
    assert!(p.quality > 0.5, "{}", p.quality);
    assert_eq!(p.picked.len(), 64);
}

#[test]
fn head_rules_on_kudus_cases() {
    // With γ = 0 (as Kudu's HEAD tests set it) the synthetic cases behave
    // as under the 2017 rules.
    let opts = |budget_mb| PlannerOptions {
        budget_mb,
        rules: Rules::Head {
            small_rowset_tradeoff: 0.0,
            target_size_bytes: planner::DEFAULT_TARGET_SIZE_BYTES,
        },
        ..PlannerOptions::default()
    };
    let p = plan(&significant_overlap(100), &opts(64));
    assert!(p.quality > 0.5);
    assert_eq!(p.picked.len(), 64);
    let tiny = tiny_overlap(100);
    let p = plan(&tiny, &opts(128));
    assert_eq!(p.quality, 0.0);
    // With the default γ the 1 MB rowsets count as small and fill the budget.
    let p = plan(
        &tiny,
        &PlannerOptions {
            rules: Rules::head(),
            ..opts(128)
        },
    );
    check_budget(&tiny, &p, 128);
    assert!(p.quality > 0.0);
}

/// Options for Kudu's post-2018 tests: the KUDU-1400 rules with Kudu's
/// default γ and target size, other settings at their defaults.
fn head_opts(budget_mb: u64) -> PlannerOptions {
    PlannerOptions {
        budget_mb,
        rules: Rules::head(),
        ..PlannerOptions::default()
    }
}

fn run_opts(inputs: &[RowsetInput], opts: &PlannerOptions) -> Plan {
    let p = plan(inputs, opts);
    check_budget(inputs, &p, opts.budget_mb);
    p
}

/// A size given as a fraction of the default target, truncated to whole
/// bytes as Kudu's mock rowsets store it.
fn target_times(factor: f64) -> u64 {
    (planner::DEFAULT_TARGET_SIZE_BYTES as f64 * factor) as u64
}

/// Kudu's `TestSupportAdjust`: two identical rowsets plus an adjacent one;
/// near the target size only the overlapping pair is worth the I/O, well
/// below it all three are picked.
#[test]
fn support_adjust() {
    let layout = |size| {
        vec![
            RowsetInput::new(size, "A", "B"),
            RowsetInput::new(size, "A", "B"),
            RowsetInput::new(size, "B", "C"),
        ]
    };
    let big = layout(target_times(0.9));
    let p = run_opts(&big, &head_opts(1000));
    assert_eq!(p.picked, vec![0, 1], "{p:?}");
    assert!(p.quality >= 0.6, "{}", p.quality);

    let small = layout(target_times(0.3));
    let p = run_opts(&small, &head_opts(1000));
    assert_eq!(p.picked, vec![0, 1, 2], "{p:?}");
    assert!(p.quality >= 0.6, "{}", p.quality);
}

/// Kudu's `KUDU2251`: rowsets of 2, 4 and 8 GiB (target 16 GiB, budget
/// 2^30 MB) are all picked with a quality strictly between 1 and 2.
#[test]
fn kudu_2251_multi_gib_rowsets_do_not_overflow() {
    let inputs = vec![
        RowsetInput::new(1 << 31, "C", "c"),
        RowsetInput::new(1 << 32, "B", "a"),
        RowsetInput::new(1 << 33, "A", "b"),
    ];
    let opts = PlannerOptions {
        rules: Rules::Head {
            small_rowset_tradeoff: planner::DEFAULT_SMALL_ROWSET_TRADEOFF,
            target_size_bytes: 1 << 34,
        },
        ..head_opts(1 << 30)
    };
    let p = run_opts(&inputs, &opts);
    assert_eq!(p.picked, vec![0, 1, 2], "{p:?}");
    assert_eq!(p.picked_mb, 2048 + 4096 + 8192);
    assert!(p.quality > 1.0 && p.quality < 2.0, "{}", p.quality);
    // Beyond Kudu's checks: only size ratios matter, so the same layout
    // scaled down by 2^10 (sizes and target) must score identically.
    let scaled: Vec<RowsetInput> = inputs
        .iter()
        .map(|r| RowsetInput::new(r.size_bytes >> 10, r.min_key.clone(), r.max_key.clone()))
        .collect();
    let scaled_opts = PlannerOptions {
        rules: Rules::Head {
            small_rowset_tradeoff: planner::DEFAULT_SMALL_ROWSET_TRADEOFF,
            target_size_bytes: 1 << 24,
        },
        ..opts
    };
    let q = run_opts(&scaled, &scaled_opts);
    assert_eq!(q.picked, p.picked);
    assert_eq!(q.quality, p.quality);
    assert_eq!(q.average_height, p.average_height);
}

/// Kudu's `TestSmallRowsetCompactionReducesRowsetCount`: up to 100 abutting
/// rowsets each just under the target size (so merging them would not
/// reduce the count) are never worth compacting, at any count.
#[test]
fn small_rowset_compaction_reduces_rowset_count() {
    let n = 100u64;
    let size = target_times(1.0 - 1.0 / (n - 1) as f64);
    let opts = head_opts(1_000_000);
    let mut inputs = Vec::new();
    for i in 0..n {
        inputs.push(RowsetInput::new(
            size,
            format!("{i:010}"),
            format!("{:010}", i + 1),
        ));
        let p = run_opts(&inputs, &opts);
        assert!(p.picked.is_empty(), "{} rowsets: {p:?}", inputs.len());
        assert_eq!(p.quality, 0.0, "{} rowsets", inputs.len());
    }
}

/// Kudu's `TestSmallRowsetTradeoffFactor`: for two abutting rowsets of
/// target/32 … target/1 the quality never rises and the pair is dropped
/// from target/2 on; three abutting rowsets of target/3 are picked.
#[test]
fn small_rowset_tradeoff_factor() {
    let opts = head_opts(1000);
    let mut prev_quality = f64::MAX;
    for divisor in [32u32, 16, 8, 4, 2, 1] {
        let size = target_times(1.0 / f64::from(divisor));
        let inputs = vec![
            RowsetInput::new(size, "A", "B"),
            RowsetInput::new(size, "B", "C"),
        ];
        let p = run_opts(&inputs, &opts);
        assert!(
            p.quality <= prev_quality,
            "divisor {divisor}: {} after {prev_quality}",
            p.quality
        );
        prev_quality = p.quality;
        if divisor > 2 {
            assert_eq!(p.picked, vec![0, 1], "divisor {divisor}: {p:?}");
        } else {
            assert!(p.quality < opts.min_improvement, "divisor {divisor}: {p:?}");
            assert!(p.picked.is_empty(), "divisor {divisor}: {p:?}");
        }
    }

    let size = target_times(1.0 / 3.0);
    let inputs = vec![
        RowsetInput::new(size, "A", "B"),
        RowsetInput::new(size, "B", "C"),
        RowsetInput::new(size, "C", "D"),
    ];
    let p = run_opts(&inputs, &opts);
    assert_eq!(p.picked, vec![0, 1, 2], "{p:?}");
    assert!(p.quality > opts.min_improvement, "{}", p.quality);
}

/// Kudu's `TestHeightBasedDominatesSizeBased`: under a 64 MB budget two
/// overlapping 32 MiB rowsets win over four abutting 8 MiB ones.
#[test]
fn height_based_dominates_size_based() {
    const BIG: u64 = 32 << 20;
    const SMALL: u64 = 8 << 20;
    let inputs = vec![
        RowsetInput::new(BIG, "A", "B"),
        RowsetInput::new(BIG, "A", "B"),
        RowsetInput::new(SMALL, "C", "D"),
        RowsetInput::new(SMALL, "D", "E"),
        RowsetInput::new(SMALL, "E", "F"),
        RowsetInput::new(SMALL, "F", "G"),
    ];
    let p = run_opts(&inputs, &head_opts(64));
    assert_eq!(p.picked, vec![0, 1], "{p:?}");
    assert!(
        p.picked
            .iter()
            .all(|&i| inputs[i as usize].size_bytes == BIG)
    );
}

/// Kudu's `TestKUDU2704`: rowsets twice the target size still get a
/// height-reducing compaction (the overlapping pair) within the budget.
#[test]
fn kudu_2704_oversized_rowsets_still_compact_for_height() {
    let big = 2 * planner::DEFAULT_TARGET_SIZE_BYTES;
    let budget_mb = 2 * big / 1024 / 1024;
    let mut inputs: Vec<RowsetInput> = (0..100u64)
        .map(|i| RowsetInput::new(big, format!("{:010}", 2 * i), format!("{:010}", 2 * i + 1)))
        .collect();
    inputs.push(RowsetInput::new(big, "0000000000", "0000000001"));
    let p = run_opts(&inputs, &head_opts(budget_mb));
    assert_eq!(p.picked, vec![0, 100], "{p:?}");
    assert!(p.quality > 0.0, "{}", p.quality);
}

fn layout(ranges: &[(&str, &str)]) -> f64 {
    let inputs: Vec<RowsetInput> = ranges
        .iter()
        .map(|&(a, b)| RowsetInput::new(MOCK_SIZE, a, b))
        .collect();
    average_height(&inputs)
}

/// Kudu's `KeySpaceCdfTest.TestComputingAverageRowSetHeight`: the average
/// height of each of its 17 layouts, exact or within 0.001 as Kudu checks.
#[test]
fn key_space_cdf_average_heights() {
    assert_eq!(layout(&[]), 0.0);
    assert_eq!(layout(&[("A", "A")]), 0.0);
    assert_eq!(layout(&[("A", "B")]), 1.0);
    assert_eq!(layout(&[("A", "B"), ("B", "C")]), 1.0);
    assert_eq!(layout(&[("A", "B"), ("B", "C"), ("C", "D")]), 1.0);
    assert_eq!(layout(&[("A", "B"), ("C", "D")]), 1.0);
    assert_eq!(layout(&[("A", "B"), ("C", "D"), ("E", "F")]), 1.0);
    assert_eq!(layout(&[("A", "B"), ("C", "C"), ("D", "D")]), 1.0);
    assert_eq!(layout(&[("A", "B"), ("A", "B")]), 2.0);
    assert_eq!(layout(&[("A", "B"), ("A", "A"), ("B", "B")]), 1.0);
    assert_eq!(layout(&[("A", "B"), ("A", "B"), ("A", "B")]), 3.0);
    assert_eq!(layout(&[("A", "C"), ("A", "C"), ("B", "B")]), 2.0);
    assert_eq!(layout(&[("A", "C"), ("B", "D")]), 1.5);
    let near = |got: f64, want: f64| assert!((got - want).abs() <= 0.001, "{got} vs {want}");
    near(layout(&[("A", "C"), ("B", "D"), ("C", "E")]), 1.66667);
    near(layout(&[("A", "C"), ("B", "D"), ("A", "C")]), 2.33333);
    near(
        layout(&[("A", "C"), ("C", "E"), ("B", "D"), ("A", "C"), ("C", "E")]),
        2.6,
    );
    near(
        layout(&[
            ("A", "C"),
            ("C", "E"),
            ("F", "G"),
            ("H", "J"),
            ("B", "D"),
            ("F", "I"),
            ("A", "C"),
            ("D", "D"),
            ("F", "G"),
            ("I", "I"),
        ]),
        2.3125,
    );
    // The plan reports the same figure.
    let two = [
        RowsetInput::new(MOCK_SIZE, "A", "C"),
        RowsetInput::new(MOCK_SIZE, "B", "D"),
    ];
    assert_eq!(run(&two, 128).average_height, 1.5);
}

#[test]
fn fewer_than_two_rowsets() {
    assert_eq!(run(&[], 128).quality, 0.0);
    let one = run(&[RowsetInput::new(MOCK_SIZE, "a", "b")], 128);
    assert_eq!((one.quality, one.picked.len()), (0.0, 0));
    assert_eq!(one.average_height, 1.0);
}

const YCSB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/kudu-ycsb-rowsets.tsv"
);

#[test]
fn ycsb() {
    let Ok(text) = std::fs::read_to_string(YCSB) else {
        eprintln!("skipping ycsb: {YCSB} not found");
        return;
    };
    let inputs = parse_tsv(&text).expect("YCSB file parses");
    assert_eq!(inputs.len(), 6815);
    let total_mb: u64 = inputs.iter().map(|r| r.size_bytes >> 20).sum();
    assert_eq!(total_mb, 217_876);
    let mut last = 0.0;
    for budget in [128, 256, 512, 1024] {
        let t = Instant::now();
        let p = run(&inputs, budget);
        let took = t.elapsed();
        eprintln!(
            "YCSB budget {budget} MB: quality {:.6} picked {} rowsets, {} MB, average height {:.4}, {took:?}",
            p.quality,
            p.picked.len(),
            p.picked_mb,
            p.average_height
        );
        assert!(p.quality >= last, "quality fell at budget {budget}");
        last = p.quality;
        let f = fat::plan(&inputs, &PlannerOptions::with_budget(budget));
        assert_eq!(f, p, "fat layout differs at budget {budget}");
        let k = plan_reference(&inputs, &PlannerOptions::with_budget(budget));
        assert_eq!(k.quality.to_bits(), p.quality.to_bits(), "budget {budget}");
        assert_eq!(k, p, "Kudu's full scan differs at budget {budget}");
    }
    assert!(last > 0.0);
}

/// Random small inputs: keys `%010d` of draws below `span`.
fn random_inputs(rng: &mut RowRng, n: usize, span: u64, max_mb: u64) -> Vec<RowsetInput> {
    (0..n)
        .map(|_| {
            let a = rng.next_below(span);
            let b = rng.next_below(span);
            let mb = 1 + rng.next_below(max_mb);
            RowsetInput::new(
                mb * 1024 * 1024,
                format!("{:010}", a.min(b)),
                format!("{:010}", a.max(b)),
            )
        })
        .collect()
}

#[test]
fn exact_mode_matches_brute_force() {
    let mut positive = 0;
    let mut gave_up = 0;
    for seed in 0..300u64 {
        let mut rng = RowRng::seeded(0xC0FFEE + seed);
        let n = 2 + rng.next_below(11) as usize;
        let budget = 1 + rng.next_below(6);
        let span = [20, 1000, 1_000_000][seed as usize % 3];
        let inputs = random_inputs(&mut rng, n, span, 4);
        let opts = PlannerOptions {
            budget_mb: budget,
            approximation_ratio: 1.0,
            lower_bound_short_circuit: false,
            ..PlannerOptions::default()
        };
        let p = plan(&inputs, &opts);
        let b = plan_brute_force(&inputs, &opts).expect("small input");
        // Kudu's own flow (with the lower-bound short-circuit) either finds
        // the optimum or gives up with quality 0.
        let kudu = plan(
            &inputs,
            &PlannerOptions {
                lower_bound_short_circuit: true,
                ..opts
            },
        );
        check_budget(&inputs, &kudu, budget);
        if kudu.quality == 0.0 && b.quality > 0.0 {
            gave_up += 1;
        } else {
            assert!((kudu.quality - b.quality).abs() <= 1e-12, "seed {seed}");
        }
        check_budget(&inputs, &p, budget);
        check_budget(&inputs, &b, budget);
        assert!(
            (p.quality - b.quality).abs() <= 1e-12,
            "seed {seed}: plan {p:?} brute force {b:?} inputs {inputs:?}"
        );
        assert_eq!(p.average_height, b.average_height);
        assert_eq!(fat::plan(&inputs, &opts), p, "seed {seed}");
        if p.quality > 0.0 {
            positive += 1;
        }
    }
    eprintln!(
        "exact vs brute force: {positive} of 300 cases pick something; \
         the lower-bound short-circuit gives up on {gave_up} of them"
    );
    assert!(positive > 50, "too few cases exercise a pick: {positive}");
}

#[test]
fn fat_layout_matches_soa() {
    for seed in 0..40u64 {
        let mut rng = RowRng::seeded(7_000 + seed);
        let n = 2 + rng.next_below(300) as usize;
        let inputs = random_inputs(&mut rng, n, 100_000, 40);
        for rules in [Rules::Kudu2017, Rules::head()] {
            for budget in [1, 16, 128] {
                let opts = PlannerOptions {
                    budget_mb: budget,
                    rules,
                    ..PlannerOptions::default()
                };
                let p = plan(&inputs, &opts);
                check_budget(&inputs, &p, budget);
                assert_eq!(fat::plan(&inputs, &opts), p, "seed {seed} budget {budget}");
            }
        }
    }
}

/// The pruned, parallel planner gives exactly the plan of Kudu's full
/// sequential scan: random inputs from 2 to 1,000 rowsets (narrow and wide
/// key spans, equal and mixed sizes, duplicated rowsets for ties), both
/// rules, budgets from 1 to 128 MB, approximation ratios 1, Kudu's 1.05,
/// 2 and 0.9, with and without the lower-bound short-circuit, and Kudu's
/// test shapes.
#[test]
fn pruned_plan_equals_kudus_full_scan() {
    let mut cases: Vec<Vec<RowsetInput>> = vec![
        tiny_overlap(600),
        significant_overlap(100),
        non_overlapping(300),
    ];
    for seed in 0..36u64 {
        let mut rng = RowRng::seeded(90_000 + seed);
        let n = 2 + rng.next_below(500) as usize;
        let span = [30, 10_000, 10_000_000][seed as usize % 3];
        let max_mb = [1, 40, 200][(seed / 3) as usize % 3];
        let mut inputs = random_inputs(&mut rng, n, span, max_mb);
        if seed % 4 == 0 {
            inputs.extend(inputs.clone());
        }
        cases.push(inputs);
    }
    let mut picked = 0;
    for (c, inputs) in cases.iter().enumerate() {
        for rules in [Rules::Kudu2017, Rules::head()] {
            for (budget, ratio, short_circuit) in [
                (1, 1.05, true),
                (16, 1.0, false),
                (128, f64::from(1.05f32), true),
                (128, 2.0, true),
                (64, 0.9, false),
            ] {
                let opts = PlannerOptions {
                    budget_mb: budget,
                    approximation_ratio: ratio,
                    lower_bound_short_circuit: short_circuit,
                    rules,
                    ..PlannerOptions::default()
                };
                let p = plan(inputs, &opts);
                let k = plan_reference(inputs, &opts);
                let at = format!("case {c} ({} rowsets), {opts:?}", inputs.len());
                assert_eq!(p.quality.to_bits(), k.quality.to_bits(), "{at}");
                assert_eq!(p, k, "{at}");
                picked += usize::from(p.quality > 0.0);
            }
        }
    }
    assert!(picked > 150, "too few plans pick anything: {picked}");
}

#[test]
fn brute_force_refuses_large_inputs() {
    let inputs = significant_overlap(17);
    let err = plan_brute_force(&inputs, &PlannerOptions::default()).unwrap_err();
    assert!(err.to_string().contains("17 rowsets"), "{err}");
}

#[test]
fn plan_round_trips_through_json() {
    let p = run(&significant_overlap(10), 4);
    let back: Plan = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
}
