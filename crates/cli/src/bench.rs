//! `strata bench`: flags to `strata_bench` calls.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use strata_bench::{Config, CounterMode, RunResult, Size, Suite, chart, report};

/// Arguments of `strata bench`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    command: Option<BenchCommand>,
    /// pipeline, row, scan, compact, parquet-column, sort, infer,
    /// dataset-report, or all.
    suite: Option<String>,
    /// Timed runs per case (5 is the least that can show a significant
    /// change against a baseline).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Untimed runs before them.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Input sizes: full (the designed sizes; for parquet-column, the whole Int64 matrix) or
    /// tiny (seconds, for smoke tests).
    #[arg(long, default_value = "full")]
    size: String,
    /// Save this run as baseline NAME (under --out-dir/baselines/NAME/).
    #[arg(long, value_name = "NAME")]
    save_baseline: Option<String>,
    /// Compare with baseline NAME: % change of the median and a verdict,
    /// flagged only beyond 5% and significant (Mann-Whitney, p <= 0.05).
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// With --baseline: exit with status 3 when one of strata's cases (a
    /// case's reference subject, not a peer) regressed.
    #[arg(long)]
    fail_on_regression: bool,
    /// Also write the run as JSON here (an array of runs for `all`).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Also write the Markdown report here.
    #[arg(long, value_name = "PATH")]
    markdown: Option<PathBuf>,
    /// Counters: auto (hardware counters where the kernel allows, else
    /// `unavailable: REASON` per counter), off, or cachegrind (each case
    /// re-run under valgrind: instructions, D1 and LL misses).
    #[arg(long, default_value = "auto")]
    counters: String,
    /// Only cases whose `NAME@SUBJECT` contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Where runs and baselines are kept; every run is saved under
    /// OUT/runs/ for `strata bench report`.
    #[arg(long, default_value = "target/strata-bench")]
    out_dir: PathBuf,
    /// The Python that has pyarrow and DuckDB for the peers [default:
    /// .venv/bin/python when present, else python3].
    #[arg(long)]
    python: Option<PathBuf>,
    /// The reference program `parquet-nested-parallel` (built outside this
    /// repository): the pipeline suite runs it beside `strata generate`
    /// on the same number of `contacts` rows, uncompressed.
    #[arg(long, value_name = "PATH")]
    reference: Option<PathBuf>,
    /// Internal: run one case's body N times, untimed (cachegrind re-runs).
    #[arg(long, hide = true)]
    inner: Option<String>,
    #[arg(long, hide = true, default_value_t = 1)]
    inner_iterations: usize,
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Draw trend charts (SVG, one per suite) of saved runs in DIR.
    #[command(after_help = "Examples:
  strata bench report target/strata-bench/runs
  strata bench report bench-runs --metric cachegrind.instructions --out charts")]
    Report {
        /// A directory of saved runs (searched recursively for .json).
        dir: PathBuf,
        /// throughput, a hardware counter (instructions, ipc, ...) or
        /// cachegrind.NAME (instructions, d1_misses, ll_misses).
        #[arg(long, default_value = "throughput")]
        metric: String,
        /// Only cases whose `NAME@SUBJECT` contains this.
        #[arg(long)]
        filter: Option<String>,
        /// Output directory of the charts [default: DIR].
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
}

/// Runs `strata bench`.
pub(crate) fn run(args: BenchArgs) -> Result<u8> {
    if let Some(BenchCommand::Report {
        dir,
        metric,
        filter,
        out,
    }) = &args.command
    {
        let (runs, skipped) = chart::load_runs(dir)?;
        for why in skipped {
            eprintln!("strata: skipping {why}");
        }
        let files = chart::trend(
            &runs,
            &chart::Metric::parse(metric),
            filter.as_deref(),
            out.as_ref().unwrap_or(dir),
        )?;
        for f in files {
            println!("{}", f.display());
        }
        return Ok(crate::exit::SUCCESS);
    }
    let Some(name) = args.suite.as_deref() else {
        bail!(
            "name a suite: pipeline, row, scan, compact, parquet-column, sort, infer, dataset-report or all (or `report DIR`)"
        );
    };
    let suites: Vec<Suite> = if name == "all" {
        Suite::ALL.to_vec()
    } else {
        vec![Suite::parse(name)?]
    };
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let counters = match args.counters.as_str() {
        "auto" => CounterMode::Auto,
        "off" => CounterMode::Off,
        "cachegrind" => CounterMode::Cachegrind,
        other => bail!("unknown --counters `{other}`; use auto, off or cachegrind"),
    };
    let size = Size::parse(&args.size)?;
    let python = args.python.clone().or_else(|| {
        let venv = PathBuf::from(".venv/bin/python");
        venv.exists().then_some(venv)
    });
    let mut cfg = Config {
        runs: args.runs,
        warmup: args.warmup,
        size,
        counters,
        filter: args.filter.clone(),
        python,
        peers: true,
        reference: args.reference.clone(),
        calibrate: true,
        relaunch: None,
        thresholds: Default::default(),
        progress: true,
    };
    if let Some(id) = &args.inner {
        strata_bench::run_inner(suites[0], &cfg, id, args.inner_iterations)?;
        return Ok(crate::exit::SUCCESS);
    }
    // Read every baseline before measuring anything: a missing, malformed
    // or mismatched one fails at once instead of after a long run.
    let mut baselines = vec![];
    if let Some(b) = &args.baseline {
        for &s in &suites {
            let p = strata_bench::baseline_path(&args.out_dir, b, s);
            if !p.exists() {
                return Err(strata_bench::Error::NoBaseline {
                    name: b.clone(),
                    path: p,
                }
                .into());
            }
            let base = strata_bench::load(&p)?;
            if base.suite != s || base.context.size != size {
                bail!(
                    "baseline `{b}` ({}) is {} at size {:?}, not {} at size {:?}: compare like with like",
                    p.display(),
                    base.suite.name(),
                    base.context.size,
                    s.name(),
                    size
                );
            }
            baselines.push(base);
        }
    }
    let mut results: Vec<RunResult> = vec![];
    let mut regressed = false;
    for s in suites {
        if counters == CounterMode::Cachegrind {
            let exe = std::env::current_exe().context("cannot find the strata binary")?;
            cfg.relaunch = Some((
                exe,
                vec![
                    "bench".into(),
                    s.name().into(),
                    "--size".into(),
                    args.size.clone(),
                    "--counters".into(),
                    "off".into(),
                    "--out-dir".into(),
                    args.out_dir.display().to_string(),
                ],
            ));
        }
        eprintln!("strata bench {}: measuring", s.name());
        let mut r = strata_bench::run(s, &cfg)?;
        if let Some(b) = &args.baseline {
            let base = &baselines[results.len()];
            strata_bench::compare_with(&mut r, base, b, cfg.thresholds);
            // Only the subjects measured for their own sake count: a peer
            // that got slower is not a regression of ours.
            regressed |= r.cases.iter().any(|c| {
                report::is_reference(&r, c)
                    && c.baseline
                        .is_some_and(|v| v.verdict == strata_bench::Verdict::Regressed)
            });
        }
        let stamp = r.context.date.replace([' ', ':'], "-");
        let runs = args.out_dir.join("runs");
        let mut path = runs.join(format!("{stamp}-{}.json", s.name()));
        for n in 2.. {
            if !path.exists() {
                break;
            }
            path = runs.join(format!("{stamp}-{}-{n}.json", s.name()));
        }
        strata_bench::save(&r, &path)?;
        if let Some(b) = &args.save_baseline {
            strata_bench::save(&r, &strata_bench::baseline_path(&args.out_dir, b, s))?;
        }
        println!("{}", report::markdown(&r));
        results.push(r);
    }
    if let Some(p) = &args.json {
        let text = if results.len() == 1 {
            serde_json::to_string_pretty(&results[0])?
        } else {
            serde_json::to_string_pretty(&results)?
        };
        strata_bench::write_atomic(p, &text)?;
    }
    if let Some(p) = &args.markdown {
        let text: Vec<String> = results.iter().map(report::markdown).collect();
        strata_bench::write_atomic(p, &text.join("\n"))?;
    }
    Ok(if regressed && args.fail_on_regression {
        crate::exit::REGRESSION
    } else {
        crate::exit::SUCCESS
    })
}
