//! `strata compact init|add|plan|run`: datasets of sorted Parquet files;
//! `strata compact table`: Iceberg and Delta tables.

use std::{
    cell::RefCell,
    io::Write,
    path::{Path, PathBuf},
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use strata_compact::{
    Step,
    dataset::{ExecuteOptions, InitOptions, Progress},
    storage::Dataset,
};

use crate::common::{StoreArgs, parse, progress_bar};

#[derive(Subcommand, Debug)]
pub(crate) enum CompactCommand {
    /// Build a dataset's manifest from the sorted Parquet files in DIR: each
    /// file's row count, size and key bounds (from the footer's statistics
    /// where they bound the key; else, and with --verify, its first and
    /// last keys).
    #[command(after_help = "Examples:
  strata compact init data --key id
  strata compact init data --key 'customer,ts:desc' --verify")]
    Init(CompactInitArgs),
    /// Register new sorted Parquet files of DIR in its manifest: each must
    /// have the dataset's schema, be sorted by its key (every key is
    /// read) and not be listed yet. The manifest is replaced in one step.
    #[command(after_help = "Examples:
  strata compact add data data/new_0.parquet data/new_1.parquet")]
    Add(CompactAddArgs),
    /// Plan a compaction with Kudu's budgeted policy: the files whose merge
    /// most lowers the average key-range overlap within the IO budget.
    #[command(after_help = "Examples:
  strata compact plan data --budget-mb 128
  strata compact plan --rowsets-tsv kudu-ycsb-rowsets.tsv --budget-mb 128 --json
  strata compact plan data --budget-mb 128 --report plan.html")]
    Plan(CompactPlanArgs),
    /// Plan, then merge the picked files into new sorted files (hidden
    /// until the switch), swap the manifest and remove the replaced files.
    /// Safe to stop at any point; the next run removes what a stopped one
    /// left.
    #[command(after_help = "Examples:
  strata compact run data --budget-mb 128 --target-file-mb 64")]
    Run(CompactRunArgs),
    /// Compact an Iceberg or Delta table: plan from its metadata (each
    /// file's bounds of --sort-by from the manifests or the log, never
    /// from the files), report the overlap depth per partition, small
    /// files and delete files, then merge the picked files of each
    /// partition by the column (applying their position deletes or
    /// deletion vectors) and commit a rewrite (Iceberg `replace`, Delta
    /// `OPTIMIZE`). A writer that committed meanwhile is built on when the
    /// picked files are untouched; otherwise nothing changes.
    #[command(after_help = "Examples:
  strata compact table warehouse/orders --sort-by id --budget-mb 64 --dry-run
  strata compact table s3://bucket/warehouse/orders --sort-by id --budget-mb 256")]
    Table(CompactTableArgs),
}

#[derive(Args, Debug)]
pub(crate) struct CompactTableArgs {
    /// The table: a directory, or an s3:// URL.
    table: String,
    /// The column the files are merged by and whose overlap is measured.
    #[arg(long)]
    sort_by: String,
    #[command(flatten)]
    planner: PlannerArgs,
    /// Bytes per output file (a number, or with a unit: 128MiB).
    #[arg(long, default_value = "128MiB", value_parser = parse::<strata_sort::ByteSize, _>)]
    target_file_size: strata_sort::ByteSize,
    /// Files under this size count as small in the report.
    #[arg(long, default_value = "32MiB", value_parser = parse::<strata_sort::ByteSize, _>)]
    small_file_size: strata_sort::ByteSize,
    /// Print the plan and the overlap depth it predicts; change nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    store: StoreArgs,
}

fn compact_table(args: CompactTableArgs) -> Result<()> {
    let opts = args.planner.options()?;
    let dir = strata_pipeline::table::TableDir::open(&args.table, &args.store.config())?;
    let p = strata_compact::table::plan(&dir, &args.sort_by, &opts, args.small_file_size.0)?;
    let mut out = std::io::stdout().lock();
    let inv = &p.inventory;
    let fmt = match inv.format {
        strata_compact::table::Format::Iceberg => "iceberg",
        strata_compact::table::Format::Delta => "delta",
    };
    let summary = |d: &[strata_compact::table::Depth]| {
        let max = d.iter().map(|x| x.max).max().unwrap_or(0);
        let files: usize = d.iter().map(|x| x.files).sum();
        let avg = if files == 0 {
            0.0
        } else {
            d.iter().map(|x| x.avg * x.files as f64).sum::<f64>() / files as f64
        };
        (files, max, avg)
    };
    let (files, max, avg) = summary(&p.before);
    writeln!(
        out,
        "{fmt} table {dir}: {files} data files in {} partitions, {} small (under {} bytes), {} delete files; overlap depth by `{}`: max {max}, average {avg:.2}",
        p.before.len(),
        p.small_files,
        args.small_file_size.0,
        inv.delete_files,
        args.sort_by
    )?;
    for d in &p.before {
        if d.max > 1 {
            writeln!(
                out,
                "  partition {}: {} files, overlap depth max {}, average {:.2}",
                if d.partition.is_empty() {
                    "(none)"
                } else {
                    &d.partition
                },
                d.files,
                d.max,
                d.avg
            )?;
        }
    }
    let (files_after, max_after, avg_after) = summary(&p.after);
    writeln!(
        out,
        "plan: {} files, {} bytes of a {} MiB budget, quality {:.4}; after it (each partition's picked files as one before the split at --target-file-size): {} files, overlap depth max {max_after}, average {avg_after:.2}",
        p.plan.picked.len(),
        p.picked_bytes,
        opts.budget_mb,
        p.plan.quality,
        files_after
    )?;
    if args.dry_run || p.plan.picked.is_empty() {
        return Ok(());
    }
    let c = strata_compact::table::execute(&dir, &args.sort_by, &p, args.target_file_size.0)?;
    writeln!(
        out,
        "compacted: {} files ({} deleted rows applied) into {}, {} rows; version {}",
        c.removed, c.deletes_applied, c.added, c.rows, c.version
    )?;
    Ok(())
}

#[derive(Args, Debug)]
struct PlannerArgs {
    /// The most input MB (2^20 bytes) one compaction may read.
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
    /// Also write an HTML page (inline SVG, nothing fetched) drawing each
    /// file's key range before the plan and after it, picked files marked.
    #[arg(long, value_name = "PATH", value_parser = crate::common::local_output)]
    report: Option<PathBuf>,
    /// Replace an existing --report file.
    #[arg(long, requires = "report")]
    overwrite: bool,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Args, Debug)]
pub(crate) struct CompactRunArgs {
    /// The dataset: a directory, file:///PATH or s3://BUCKET/PREFIX.
    dir: String,
    #[command(flatten)]
    planner: PlannerArgs,
    /// Roll merged output files at about this size, in MB (2^20 bytes).
    #[arg(long, default_value_t = 128)]
    target_file_mb: u64,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Args, Debug)]
pub(crate) struct CompactInitArgs {
    /// The dataset: a directory, file:///PATH or s3://BUCKET/PREFIX.
    dir: String,
    /// The key every file is sorted by, most significant first:
    /// `COL[:desc][:nulls_first|:nulls_last],...` (as `sort --by` takes it).
    #[arg(long, value_delimiter = ',', required = true)]
    key: Vec<String>,
    /// Read every file's key columns and check that it is sorted by the key.
    #[arg(long)]
    verify: bool,
    /// Replace an existing manifest: what a stopped compaction left is
    /// removed first, then every .parquet file is listed again.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Args, Debug)]
pub(crate) struct CompactAddArgs {
    /// The dataset: a directory, file:///PATH or s3://BUCKET/PREFIX.
    dir: String,
    /// The files to register: names in the dataset (or paths to them).
    #[arg(required = true, num_args = 1..)]
    files: Vec<String>,
    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `strata compact SUBCOMMAND`.
pub(crate) fn run(cmd: CompactCommand) -> Result<()> {
    match cmd {
        CompactCommand::Init(args) => init(args),
        CompactCommand::Add(args) => add(args),
        CompactCommand::Plan(args) => plan(args),
        CompactCommand::Run(args) => run_compaction(args),
        CompactCommand::Table(args) => compact_table(args),
    }
}

fn init(args: CompactInitArgs) -> Result<()> {
    let ds = Dataset::open(&args.dir, &args.store.config())?;
    let m = strata_compact::dataset::init_with(
        &ds,
        &args.key,
        InitOptions {
            verify: args.verify,
            force: args.force,
        },
    )?;
    let bytes: u64 = m.files.iter().map(|f| f.bytes).sum();
    println!(
        "{}: {} files, {} rows, {} bytes, sorted by {}{}",
        ds.display(),
        m.files.len(),
        m.rows(),
        bytes,
        m.key_text(),
        if args.verify { " (verified)" } else { "" }
    );
    Ok(())
}

fn add(args: CompactAddArgs) -> Result<()> {
    let ds = Dataset::open(&args.dir, &args.store.config())?;
    let names = args
        .files
        .iter()
        .map(|f| name_in_dataset(&args.dir, ds.dir(), f))
        .collect::<Result<Vec<_>>>()?;
    let m = strata_compact::dataset::add(&ds, &names)?;
    let added: u64 = m
        .files
        .iter()
        .filter(|f| names.contains(&f.name))
        .map(|f| f.rows)
        .sum();
    println!(
        "{}: added {} files ({} rows); {} files, {} rows, generation {}",
        ds.display(),
        names.len(),
        added,
        m.files.len(),
        m.rows(),
        m.generation
    );
    Ok(())
}

/// The name inside the dataset `location` (the directory `dir` when
/// local) of the file given as `file`: a name, or a path into the dataset.
fn name_in_dataset(location: &str, dir: Option<&Path>, file: &str) -> Result<String> {
    let prefix = format!("{}/", location.trim_end_matches('/'));
    if let Some(name) = file.strip_prefix(&prefix)
        && !name.contains('/')
    {
        return Ok(name.to_string());
    }
    let (Some(dir), true) = (dir, file.contains('/')) else {
        return Ok(file.to_string());
    };
    let path = Path::new(file);
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let same = match (
        parent.map(std::fs::canonicalize),
        std::fs::canonicalize(dir),
    ) {
        (Some(Ok(a)), Ok(b)) => a == b,
        _ => false,
    };
    match path.file_name() {
        Some(name) if same => Ok(name.to_string_lossy().into_owned()),
        _ => anyhow::bail!(
            "{file} is not in {location}: move it into the dataset, then add it by name"
        ),
    }
}

/// A size in MB (2^20 bytes), as precisely as it reads well: "8.4",
/// "0.031".
fn mb(bytes: u64) -> String {
    let mb = bytes as f64 / f64::from(1u32 << 20);
    if bytes == 0 || mb >= 100.0 {
        format!("{mb:.0}")
    } else if mb >= 1.0 {
        format!("{mb:.1}")
    } else {
        format!("{mb:.3}")
    }
}

fn plan(args: CompactPlanArgs) -> Result<()> {
    let opts = args.planner.options()?;
    if let Some(p) = &args.report {
        anyhow::ensure!(
            args.overwrite || !p.exists(),
            "{} exists; pass --overwrite to replace it",
            p.display()
        );
    }
    let started = std::time::Instant::now();
    let (inputs, names, key, decoder) = match (&args.rowsets_tsv, &args.dir) {
        (Some(tsv), _) => {
            let text = std::fs::read_to_string(tsv)
                .with_context(|| format!("cannot read {}", tsv.display()))?;
            let inputs = strata_compact::rowsets::parse_tsv(&text)
                .with_context(|| format!("{}", tsv.display()))?;
            (inputs, None, "key".to_string(), None)
        }
        (None, Some(dir)) => {
            let ds = Dataset::open(dir, &args.store.config())?;
            let m = strata_compact::storage::manifest::Manifest::read(&ds)?;
            let names: Vec<String> = m.files.iter().map(|f| f.name.clone()).collect();
            // The page shows keys as values; without a decoder (a footer
            // that cannot be read now), as their bytes.
            let decoder = match &args.report {
                Some(_) => strata_compact::dataset::KeyDecoder::open(&ds, &m).ok(),
                None => None,
            };
            (
                strata_compact::dataset::rowsets(&m)?,
                Some(names),
                m.key.join(","),
                decoder,
            )
        }
        (None, None) => anyhow::bail!("give a dataset directory or --rowsets-tsv"),
    };
    let plan = strata_compact::planner::plan(&inputs, &opts);
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(path) = &args.report {
        let page = PlanPage {
            inputs: &inputs,
            names: names.as_deref(),
            key: &key,
            decoder: decoder.as_ref(),
        };
        page.write(&args, &plan, &opts, path)?;
    }
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
            mb(plan.picked_bytes),
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

/// What `compact plan --report`'s page is drawn from.
struct PlanPage<'a> {
    inputs: &'a [strata_compact::rowsets::RowsetInput],
    /// The files' names (none for rowsets from a TSV file).
    names: Option<&'a [String]>,
    key: &'a str,
    /// Keys back to values (none for rowsets, whose keys are text bytes).
    decoder: Option<&'a strata_compact::dataset::KeyDecoder>,
}

impl PlanPage<'_> {
    /// A key as text: its values, comma-separated, or its bytes.
    fn label(&self, key: &[u8]) -> String {
        let Some(columns) = self.decoder.and_then(|d| d.decode(key)) else {
            return strata_report::plan::escape_key(key, 24);
        };
        let options = arrow_cast::display::FormatOptions::default().with_null("null");
        let values: Vec<String> = columns
            .iter()
            .map(|c| {
                arrow_cast::display::ArrayFormatter::try_new(c.as_ref(), &options)
                    .map_or_else(|_| "?".to_string(), |f| f.value(0).to_string())
            })
            .collect();
        let text = values.join(", ");
        if text.chars().count() > 40 {
            text.chars().take(40).chain(['…']).collect()
        } else {
            text
        }
    }

    /// Writes the page: each input's key range before the plan and after.
    fn write(
        &self,
        args: &CompactPlanArgs,
        plan: &strata_compact::planner::Plan,
        opts: &strata_compact::planner::PlannerOptions,
        path: &Path,
    ) -> Result<()> {
        use strata_report::plan::{PlannedFile, plan_report};
        let files: Vec<PlannedFile> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(i, r)| PlannedFile {
                name: self
                    .names
                    .map_or_else(|| format!("rowset {i}"), |n| n[i].clone()),
                bytes: r.size_bytes,
                min_key: r.min_key.clone(),
                max_key: r.max_key.clone(),
            })
            .collect();
        let picked: Vec<usize> = plan.picked.iter().map(|&i| i as usize).collect();
        let source = match (&args.dir, &args.rowsets_tsv) {
            (Some(dir), _) => dir.clone(),
            (None, Some(tsv)) => tsv.display().to_string(),
            (None, None) => String::new(),
        };
        let mut notes = vec![
            format!(
                "{} inputs; budget {} MB; picked {} ({} MB), quality {:.6}",
                self.inputs.len(),
                opts.budget_mb,
                plan.picked.len(),
                mb(plan.picked_bytes),
                plan.quality
            ),
            format!(
                "average height before: {:.4}; after: about {:.4} (before less the plan's quality)",
                plan.average_height,
                (plan.average_height - plan.quality).max(0.0)
            ),
            "keys are drawn by rank on one axis".to_string(),
        ];
        if self.decoder.is_none() {
            notes.push(
                "key labels show their bytes: printable ASCII as is, others as \\xNN".to_string(),
            );
        }
        let page = plan_report(&source, self.key, &files, &picked, notes, |k| self.label(k));
        let report = strata_report::Report {
            title: format!("compaction plan of {source}"),
            notes: vec![format!("strata {}", env!("STRATA_VERSION"))],
            plans: vec![page],
            ..Default::default()
        };
        crate::report::write(&report, path, None, args.overwrite)
    }
}

/// Held while a compaction switches the dataset to its outputs: a signal
/// waits for the switch to end.
static SWITCH: Mutex<()> = Mutex::new(());

/// Set once the new manifest is in place.
static COMMITTED: AtomicBool = AtomicBool::new(false);

fn run_compaction(args: CompactRunArgs) -> Result<()> {
    let opts = args.planner.options()?;
    if args.target_file_mb == 0 {
        anyhow::bail!("--target-file-mb must be at least 1");
    }
    let started = std::time::Instant::now();
    let ds = Dataset::open(&args.dir, &args.store.config())?;
    // Ctrl-C or SIGTERM: exit at once, unless the switch to the outputs
    // is under way; then once it is over. Either way the dataset (and a
    // glob over it) holds the old files or the new ones; hidden outputs
    // and the lock are left to the next run.
    let _ = ctrlc::set_handler(|| {
        let _switch = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        if COMMITTED.load(Ordering::SeqCst) {
            eprintln!("strata: interrupted after the compaction was committed");
        } else {
            eprintln!(
                "strata: interrupted; the dataset is unchanged (the next run removes \
                 the unfinished outputs)"
            );
        }
        std::process::exit(i32::from(crate::exit::INTERRUPTED));
    });
    let held: RefCell<Option<MutexGuard<'static, ()>>> = RefCell::new(None);
    let hook = |step: Step| -> Result<(), strata_compact::Error> {
        match step {
            Step::Merged => {
                *held.borrow_mut() = Some(SWITCH.lock().unwrap_or_else(|e| e.into_inner()));
            }
            Step::Committed => COMMITTED.store(true, Ordering::SeqCst),
            Step::Done => drop(held.borrow_mut().take()),
            Step::Start => {}
        }
        Ok(())
    };
    let progress = Progress::default();
    let exec = ExecuteOptions {
        target_file_bytes: args.target_file_mb << 20,
        hook: &hook,
        progress: Some(&progress),
    };
    let bar = progress_bar(0, false);
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let result = std::thread::scope(|s| {
        let (bar, progress) = (&bar, &progress);
        s.spawn(move || {
            // Drawn once the picked rows are known, every 100 ms and once
            // more at the end, so that a run shorter than that still shows
            // its count.
            let draw = || {
                let total = progress.total_rows.load(Ordering::Relaxed);
                if total > 0 {
                    bar.set_length(total);
                    bar.set_position(progress.rows_written.load(Ordering::Relaxed));
                }
            };
            loop {
                draw();
                if !matches!(
                    stopped.recv_timeout(Duration::from_millis(100)),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                ) {
                    draw();
                    break;
                }
            }
        });
        let r = strata_compact::dataset::run_with(&ds, &opts, &exec);
        let _ = stop.send(());
        r
    });
    bar.finish_and_clear();
    let (plan, done) = result?;
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
                "merged {} files into {} ({} rows, {} MB read, quality {:.6}) in {:.3} s; generation {}",
                d.replaced.len(),
                d.written.len(),
                rows,
                mb(plan.picked_bytes),
                plan.quality,
                started.elapsed().as_secs_f64(),
                d.manifest.generation
            )?;
        }
    }
    Ok(())
}
