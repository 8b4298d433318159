//! `strata compact init|plan|run`: datasets of sorted Parquet files.

use std::{io::Write, path::PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use strata_compact::storage::Dataset;

use crate::common::StoreArgs;

#[derive(Subcommand, Debug)]
pub(crate) enum CompactCommand {
    /// Build a dataset's manifest from the sorted Parquet files in DIR: each
    /// file's row count, size and key bounds (from the footer's statistics
    /// where they bound the key; else, and with --verify, its first and
    /// last keys).
    Init(CompactInitArgs),
    /// Plan a compaction with Kudu's budgeted policy: the files whose merge
    /// most lowers the average key-range overlap within the IO budget.
    Plan(CompactPlanArgs),
    /// Plan, then merge the picked files into new sorted files, swap the
    /// manifest and remove the replaced files. Safe to stop at any point.
    Run(CompactRunArgs),
}

#[derive(Args, Debug)]
struct PlannerArgs {
    /// The most input MB one compaction may read.
    #[arg(long)]
    budget_mb: u64,
    /// Pass 2 (exact knapsack) runs for a window only when its bound beats
    /// the best by this ratio; 1.0 gives the exact optimum [default: 1.05].
    #[arg(long, default_value_t = f64::from(1.05f32), hide_default_value = true)]
    approximation_ratio: f64,
    /// Value rules: kudu2017 (width only) or head (Kudu's later rules: a
    /// bonus for small files, penalty 1.003).
    #[arg(long, default_value = "kudu2017")]
    rules: String,
}

impl PlannerArgs {
    fn options(&self) -> Result<strata_compact::planner::PlannerOptions> {
        use strata_compact::planner::{PlannerOptions, Rules};
        if self.budget_mb == 0 {
            anyhow::bail!("--budget-mb must be at least 1");
        }
        if !(self.approximation_ratio >= 1.0 && self.approximation_ratio.is_finite()) {
            anyhow::bail!(
                "--approximation-ratio must be a number of at least 1.0, not {}",
                self.approximation_ratio
            );
        }
        let rules = match self.rules.as_str() {
            "kudu2017" => Rules::Kudu2017,
            "head" => Rules::head(),
            other => anyhow::bail!("unknown --rules '{other}': expected kudu2017 or head"),
        };
        Ok(PlannerOptions {
            approximation_ratio: self.approximation_ratio,
            rules,
            ..PlannerOptions::with_budget(self.budget_mb)
        })
    }
}

#[derive(Args, Debug)]
pub(crate) struct CompactPlanArgs {
    /// The dataset: a directory, file:///PATH or s3://BUCKET/PREFIX (omit
    /// with --rowsets-tsv).
    #[arg(
        required_unless_present = "rowsets_tsv",
        conflicts_with = "rowsets_tsv"
    )]
    dir: Option<String>,
    /// Plan over rowsets from a Kudu-style TSV file instead
    /// (`size_mb<TAB>min_key<TAB>max_key`, `#` comments, keys compared as
    /// raw bytes).
    #[arg(long)]
    rowsets_tsv: Option<PathBuf>,
    #[command(flatten)]
    planner: PlannerArgs,
    /// Print the plan as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Args, Debug)]
pub(crate) struct CompactRunArgs {
    /// The dataset: a directory, file:///PATH or s3://BUCKET/PREFIX.
    dir: String,
    #[command(flatten)]
    planner: PlannerArgs,
    /// Roll merged output files at about this size.
    #[arg(long, default_value_t = 128)]
    target_file_mb: u64,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Args, Debug)]
pub(crate) struct CompactInitArgs {
    /// The dataset: a directory, file:///PATH or s3://BUCKET/PREFIX.
    dir: String,
    /// The key columns every file is sorted by, most significant first.
    #[arg(long, value_delimiter = ',', required = true)]
    key: Vec<String>,
    /// Read every file's key columns and check that it is sorted by the key.
    #[arg(long)]
    verify: bool,
    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `strata compact SUBCOMMAND`.
pub(crate) fn run(cmd: CompactCommand) -> Result<()> {
    match cmd {
        CompactCommand::Init(args) => init(args),
        CompactCommand::Plan(args) => plan(args),
        CompactCommand::Run(args) => run_compaction(args),
    }
}

fn init(args: CompactInitArgs) -> Result<()> {
    let ds = Dataset::open(&args.dir, &args.store.config())?;
    let m = strata_compact::dataset::init(&ds, &args.key, args.verify)?;
    let bytes: u64 = m.files.iter().map(|f| f.bytes).sum();
    println!(
        "{}: {} files, {} rows, {} bytes, sorted by {}{}",
        ds.display(),
        m.files.len(),
        m.rows(),
        bytes,
        m.key.join(","),
        if args.verify { " (verified)" } else { "" }
    );
    Ok(())
}

fn plan(args: CompactPlanArgs) -> Result<()> {
    let opts = args.planner.options()?;
    let started = std::time::Instant::now();
    let (inputs, names) = match (&args.rowsets_tsv, &args.dir) {
        (Some(tsv), _) => {
            let text = std::fs::read_to_string(tsv)
                .with_context(|| format!("cannot read {}", tsv.display()))?;
            let inputs = strata_compact::rowsets::parse_tsv(&text)
                .with_context(|| format!("{}", tsv.display()))?;
            (inputs, None)
        }
        (None, Some(dir)) => {
            let ds = Dataset::open(dir, &args.store.config())?;
            let m = strata_compact::storage::manifest::Manifest::read(&ds)?;
            let names: Vec<String> = m.files.iter().map(|f| f.name.clone()).collect();
            (strata_compact::dataset::rowsets(&m)?, Some(names))
        }
        (None, None) => anyhow::bail!("give a dataset directory or --rowsets-tsv"),
    };
    let plan = strata_compact::planner::plan(&inputs, &opts);
    let elapsed = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::to_value(&plan)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("inputs".into(), serde_json::json!(inputs.len()));
            o.insert("budget_mb".into(), serde_json::json!(opts.budget_mb));
            if let Some(names) = &names {
                let picked: Vec<&str> = plan
                    .picked
                    .iter()
                    .map(|&i| names[i as usize].as_str())
                    .collect();
                o.insert("picked_files".into(), serde_json::json!(picked));
            }
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        writeln!(
            out,
            "picked {} of {} inputs ({} MB of a {} MB budget), quality {:.6}, average height {:.4}, in {:.3} s",
            plan.picked.len(),
            inputs.len(),
            plan.picked_mb,
            opts.budget_mb,
            plan.quality,
            plan.average_height,
            elapsed
        )?;
        if let Some(names) = &names {
            for &i in &plan.picked {
                writeln!(out, "  {}", names[i as usize])?;
            }
        }
    }
    Ok(())
}

fn run_compaction(args: CompactRunArgs) -> Result<()> {
    let opts = args.planner.options()?;
    if args.target_file_mb == 0 {
        anyhow::bail!("--target-file-mb must be at least 1");
    }
    let started = std::time::Instant::now();
    let ds = Dataset::open(&args.dir, &args.store.config())?;
    let (plan, done) =
        strata_compact::dataset::run(&ds, &opts, args.target_file_mb << 20, &|_| Ok(()))?;
    let mut out = std::io::stdout().lock();
    match done {
        None => writeln!(
            out,
            "nothing to compact (quality {:.6} is at most the minimum improvement)",
            plan.quality
        )?,
        Some(d) => {
            let rows: u64 = d.written.iter().map(|w| w.rows).sum();
            writeln!(
                out,
                "merged {} files into {} ({} rows, quality {:.6}) in {:.3} s; generation {}",
                d.replaced.len(),
                d.written.len(),
                rows,
                plan.quality,
                started.elapsed().as_secs_f64(),
                d.manifest.generation
            )?;
        }
    }
    Ok(())
}
