//! `strata`: the command-line front end of the strata toolkit.
//!
//! Flags are parsed here and turned into library calls; all the work lives
//! in the `strata-*` crates.

mod bench;

use std::{
    io::{IsTerminal, Write},
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, Result};
use arrow_array::RecordBatch;
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use strata_compact::dataset::Dataset;
use strata_gen::{BatchGenerator, spec::Spec};
use strata_parquet::{Compression, Format};
use strata_pipeline::generate::{
    DEFAULT_BATCH_SIZE, DEFAULT_ROW_GROUP_ROWS, GenerateConfig, ParquetEncoder, Summary, generate,
};
use strata_scan::{
    Filter, ScanRequest, Scanner,
    write::{BatchFile, OutputFormat, write_text},
};
use strata_sort::{ByteSize, SortConfig, SortKeys, SortSummary, sort_file};
use strata_store::location::StoreConfig;

#[derive(Parser, Debug)]
#[command(
    name = "strata",
    version,
    about = "Columnar-data building blocks: generate nested data at speed, sort files, read only the columns you need"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate a synthetic nested dataset as Parquet or Arrow IPC files.
    ///
    /// With no flags: 10,000,000 `contacts` rows, seed 42, into 4 uncompressed
    /// Parquet files in ./output_parquet, on every core. These are the
    /// fastest sensible settings: no codec (add --compression zstd for 3.4x
    /// smaller files), 8192-row batches, 1,048,576-row row groups, page
    /// statistics on, dictionaries only where values repeat.
    Generate(GenerateArgs),
    /// Sort a Parquet or Arrow IPC file in memory by one or more columns.
    ///
    /// The input's format is found from its magic bytes; the output's from
    /// its extension (.parquet, or .arrow/.ipc/.feather for an Arrow IPC
    /// file). The sort is stable and the schema is kept. The output appears
    /// only when complete.
    Sort(SortArgs),
    /// Read the chosen columns of a Parquet or Arrow IPC file, fetching only
    /// their bytes, from a local path, a file:// URL or s3://BUCKET/KEY.
    ///
    /// Without -o the rows are printed as tab-separated text with a header
    /// line. S3 settings come from the standard AWS environment variables
    /// (AWS_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_ALLOW_HTTP), which the flags below override.
    Scan(ScanArgs),
    /// Datasets of sorted Parquet files: build the manifest, plan and run
    /// compactions.
    #[command(subcommand)]
    Compact(CompactCommand),
    /// Dataset specs: print a preset, check a spec file, print the spec
    /// format's JSON Schema.
    #[command(subcommand)]
    Spec(SpecCommand),
    /// Benchmark suites with peers side by side, baselines, counters and
    /// trend charts: `strata bench SUITE`, `strata bench report DIR`.
    ///
    /// Suites: pipeline (generate), row (against arrow-row), scan
    /// (projected reads against the arrow-rs readers and pyarrow), compact
    /// (planner layouts, merge against DuckDB), parquet-column (seed 002's
    /// Int64 matrix against Arrow C++ through pyarrow). Reports medians,
    /// min/max, CPU time and throughput as Markdown, and saves every run.
    Bench(bench::BenchArgs),
}

#[derive(Subcommand, Debug)]
enum SpecCommand {
    /// Print a preset's spec (TOML), a starting point for your own.
    Show {
        /// contacts, wide-u64 or events.
        name: String,
    },
    /// Check a spec file and print the schema it describes, with each
    /// field's generator; errors name the line and field.
    Check {
        /// The spec file (TOML).
        file: PathBuf,
    },
    /// Print the JSON Schema of spec files (for editors and validators).
    Schema,
}

#[derive(Subcommand, Debug)]
enum CompactCommand {
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
    /// the best by this ratio; 1.0 gives the exact optimum.
    #[arg(long, default_value_t = f64::from(1.05f32))]
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
struct CompactPlanArgs {
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
struct CompactRunArgs {
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
struct CompactInitArgs {
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

#[derive(Args, Debug)]
struct ScanArgs {
    /// A local path, file:///ABSOLUTE/PATH or s3://BUCKET/KEY.
    location: String,
    /// Top-level columns to read, in output order: `a,b,c` [default: all].
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Keep rows where `COLUMN OP LITERAL` holds (OP: = != < <= > >=), e.g.
    /// "id > 5" or "name = 'Ann'". Parquet row groups whose statistics rule
    /// the filter out are not read.
    #[arg(long, value_parser = parse::<Filter, _>)]
    filter: Option<Filter>,
    /// Return at most this many rows.
    #[arg(long)]
    limit: Option<usize>,
    /// Return these rows (0-based, in this order), reading only the batches
    /// or row groups that hold them.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["filter", "limit"])]
    take: Option<Vec<u64>>,
    /// Print `requests N, bytes fetched N, bytes decoded N, elapsed S` to
    /// standard error at the end.
    #[arg(long)]
    stats: bool,
    /// Write the rows to this file instead: .parquet, .arrow/.ipc/.feather,
    /// .csv or .jsonl. It appears only when complete.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(long)]
    overwrite: bool,
    #[command(flatten)]
    store: StoreArgs,
}

/// S3 settings; each overrides its standard AWS environment variable.
#[derive(Args, Debug)]
struct StoreArgs {
    /// S3 endpoint URL (overrides AWS_ENDPOINT); http:// allows plain HTTP.
    #[arg(long)]
    endpoint: Option<String>,
    /// S3 region (overrides AWS_REGION).
    #[arg(long)]
    region: Option<String>,
    /// S3 access key id (overrides AWS_ACCESS_KEY_ID).
    #[arg(long)]
    access_key_id: Option<String>,
    /// S3 secret access key (overrides AWS_SECRET_ACCESS_KEY).
    #[arg(long)]
    secret_access_key: Option<String>,
}

impl StoreArgs {
    fn config(&self) -> StoreConfig {
        StoreConfig {
            endpoint: self.endpoint.clone(),
            region: self.region.clone(),
            access_key_id: self.access_key_id.clone(),
            secret_access_key: self.secret_access_key.clone(),
            ..Default::default()
        }
    }
}

#[derive(Args, Debug)]
struct SortArgs {
    /// Input file: Parquet or Arrow IPC file format.
    input: PathBuf,
    /// Sort keys, most significant first: `COL[:desc][:nulls_first|:nulls_last],...`.
    /// Each key is ascending with nulls first unless its suffixes say
    /// otherwise.
    #[arg(long, value_name = "KEYS", value_parser = parse::<SortKeys, _>)]
    by: SortKeys,
    /// Output file: .parquet (zstd) or .arrow, .ipc, .feather (Arrow IPC).
    #[arg(long, short)]
    output: PathBuf,
    /// Refuse to sort when the estimated memory (input batches, encoded
    /// keys, indices and the sorted copy) exceeds this: bytes, or with a
    /// unit KiB, MiB, GiB, KB, MB, GB.
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = parse::<ByteSize, _>)]
    memory_limit: ByteSize,
    /// Replace an existing output file.
    #[arg(long)]
    overwrite: bool,
    /// No summary on the terminal.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct GenerateArgs {
    /// Dataset preset: contacts, wide-u64 or events (`strata spec show
    /// NAME` prints one).
    #[arg(long, default_value = "contacts", value_parser = preset_names())]
    preset: String,
    /// A dataset spec file (TOML) instead of a preset; `strata spec check
    /// FILE` checks one, `strata spec schema` prints its JSON Schema.
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    spec: Option<PathBuf>,
    /// Rows to generate.
    #[arg(long, default_value_t = 10_000_000)]
    target_records: u64,
    /// Rows per generated Arrow batch (speed barely changes above ~4096).
    #[arg(long, default_value_t = DEFAULT_BATCH_SIZE)]
    record_batch_size: usize,
    /// Output files, each with its own writer; file i holds the i-th
    /// contiguous slice of rows. Encoding parallelism comes from --threads,
    /// so this sets the layout, not the speed.
    #[arg(long, default_value_t = 4)]
    num_writers: usize,
    /// Output directory (created if missing), or s3://BUCKET/PREFIX (S3
    /// settings from the AWS_* variables; each file is a multipart upload,
    /// completed only when every file is whole) [default: output_parquet,
    /// or output_ipc with --format ipc].
    #[arg(long)]
    output_dir: Option<PathBuf>,
    /// File name stem: files are STEM_0.parquet, STEM_1.parquet, ...
    /// [default: the preset or spec name].
    #[arg(long)]
    output_filename: Option<String>,
    /// Print the effective configuration as JSON and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Seed: the same seed gives the same rows, whatever the thread, writer
    /// or batch counts.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Split the rows into this many equal contiguous parts and write only
    /// the one --part names (files STEM_partIofN_j): parts can run on
    /// different machines, and together hold exactly the whole run's rows.
    #[arg(long, default_value_t = 1, requires = "part")]
    parts: u64,
    /// Which part to write, from 1 to --parts.
    #[arg(long, default_value_t = 1, requires = "parts")]
    part: u64,
    /// File format: parquet or ipc (Arrow IPC file).
    #[arg(long, default_value = "parquet", value_parser = parse::<Format, _>)]
    format: Format,
    /// Codec: none, snappy, lz4 or zstd, with zstd:LEVEL for a level from 1
    /// to 22 (default 1).
    #[arg(long, default_value = "none", value_parser = parse::<Compression, _>)]
    compression: Compression,
    /// Worker threads [default: the number of CPUs].
    #[arg(long)]
    threads: Option<usize>,
    /// Rows per Parquet row group.
    #[arg(long, default_value_t = DEFAULT_ROW_GROUP_ROWS)]
    row_group_rows: usize,
    /// Parquet encoder: auto (strata's direct encoder where the schema
    /// allows: string and dictionary columns, flat or in a list of structs;
    /// else parquet's Arrow writer) or arrow (always parquet's Arrow writer).
    #[arg(long, default_value = "auto", value_parser = parse::<ParquetEncoder, _>)]
    encoder: ParquetEncoder,
    /// Replace existing output files (and remove STEM_N files of an earlier
    /// run with more writers).
    #[arg(long)]
    overwrite: bool,
    /// No progress bar and no summary on the terminal.
    #[arg(long, short)]
    quiet: bool,
    /// Also write the summary as JSON to this file.
    #[arg(long)]
    summary_json: Option<PathBuf>,
    /// After writing, read the files back and report each field's realised
    /// null, category and length shares against the spec's; exits with
    /// status 2 when one is off by more than 5 standard errors.
    #[arg(long)]
    verify_distribution: bool,
}

/// Parses a flag value with the library's own parser and message.
fn parse<T: std::str::FromStr<Err = E>, E: std::fmt::Display>(s: &str) -> Result<T, String> {
    s.parse().map_err(|e: E| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Generate(args) => run_generate(args),
        Command::Sort(args) => run_sort(args),
        Command::Scan(args) => run_scan(args),
        Command::Compact(CompactCommand::Init(args)) => run_compact_init(args),
        Command::Compact(CompactCommand::Plan(args)) => run_compact_plan(args),
        Command::Compact(CompactCommand::Run(args)) => run_compact_run(args),
        Command::Spec(cmd) => run_spec(cmd),
        Command::Bench(args) => match bench::run(args) {
            Ok(0) => Ok(()),
            Ok(code) => return ExitCode::from(code as u8),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("strata: error: {}", chain(&e));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, skipping causes whose text the
/// message before already holds (library errors often embed their source).
fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

fn preset_names() -> Vec<&'static str> {
    strata_gen::spec::PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The spec `--spec` names, or the `--preset`.
fn load_spec(args: &GenerateArgs) -> Result<Spec> {
    match &args.spec {
        Some(path) => read_spec(path),
        None => Ok(Spec::preset(&args.preset)?),
    }
}

fn read_spec(path: &Path) -> Result<Spec> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read spec file {}", path.display()))?;
    Ok(Spec::parse(&text, &path.display().to_string())?)
}

fn run_spec(cmd: SpecCommand) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match cmd {
        SpecCommand::Show { name } => {
            let text = Spec::preset_text(&name).ok_or_else(|| {
                anyhow::anyhow!(
                    "no preset named '{name}'; the presets are {}",
                    preset_names().join(", ")
                )
            })?;
            out.write_all(text.as_bytes())?;
        }
        SpecCommand::Check { file } => {
            let spec = read_spec(&file)?;
            // Compiling checks what parsing cannot (nothing, for a parsed
            // spec; but a failure here is a bug worth reporting plainly).
            let generator = spec.generator(0)?;
            writeln!(
                out,
                "{}: ok, spec `{}` with {} top-level fields",
                file.display(),
                spec.name,
                spec.fields.len()
            )?;
            for (f, depth) in spec.walk() {
                writeln!(out, "{}{}", "  ".repeat(depth + 1), spec_line(f))?;
            }
            let unfriendly = generator.dictionary_unfriendly_leaves();
            if !unfriendly.is_empty() {
                let leaves: Vec<String> = unfriendly.iter().map(|l| l.join(".")).collect();
                writeln!(
                    out,
                    "Parquet dictionary off (many distinct values): {}",
                    leaves.join(", ")
                )?;
            }
        }
        SpecCommand::Schema => {
            out.write_all(strata_gen::spec::JSON_SCHEMA.as_bytes())?;
        }
    }
    Ok(())
}

/// One line of `strata spec check`: name, Arrow type, generator, nulls.
fn spec_line(f: &strata_gen::spec::Field) -> String {
    use strata_gen::spec::Kind;
    let mut line = match &f.kind {
        Kind::Scalar {
            data_type,
            generator,
        } => format!("{}: {data_type}, {generator}", f.name),
        Kind::Struct(c) => format!("{}: struct of {} fields", f.name, c.len()),
        Kind::List {
            length,
            empty_as_null,
            ..
        } => format!(
            "{}: list, length {length}{}",
            f.name,
            if *empty_as_null {
                ", empty lists null"
            } else {
                ""
            }
        ),
        Kind::Map { length, .. } => format!("{}: map, length {length}", f.name),
    };
    if f.null_rate > 0.0 {
        line.push_str(&format!(", null {}", f.null_rate));
    } else if !f.nullable {
        line.push_str(", not null");
    }
    for w in &f.when {
        line.push_str(&format!(", {w}"));
    }
    line
}

fn config(args: &GenerateArgs, spec: &Spec) -> GenerateConfig {
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let output_dir = args
        .output_dir
        .clone()
        .unwrap_or_else(|| match args.format {
            Format::Parquet => PathBuf::from("output_parquet"),
            Format::Ipc => PathBuf::from("output_ipc"),
        });
    GenerateConfig {
        target_records: args.target_records,
        record_batch_size: args.record_batch_size,
        num_writers: args.num_writers,
        threads,
        row_group_rows: args.row_group_rows,
        format: args.format,
        compression: args.compression,
        output_dir,
        output_filename: args
            .output_filename
            .clone()
            .unwrap_or_else(|| spec.name.clone()),
        overwrite: args.overwrite,
        seed: args.seed,
        encoder: args.encoder,
        part: strata_pipeline::generate::Part {
            index: args.part,
            count: args.parts,
        },
    }
}

fn run_generate(args: GenerateArgs) -> Result<()> {
    let spec = load_spec(&args)?;
    let cfg = config(&args, &spec);
    let generator = spec.generator(args.seed)?;
    if args.dry_run {
        cfg.validate()?;
        let files: Vec<_> = (0..cfg.num_writers)
            .map(|i| {
                let rows = cfg.file_rows(i);
                serde_json::json!({ "path": cfg.file_path(i), "first_row": rows.start, "rows": rows.end - rows.start })
            })
            .collect();
        let plan = serde_json::json!({
            "preset": generator.name(),
            "config": cfg,
            "files": files,
        });
        writeln!(
            std::io::stdout().lock(),
            "{}",
            serde_json::to_string_pretty(&plan)?
        )?;
        return Ok(());
    }
    if let Some(p) = &args.summary_json {
        check_writable_parent(p)?;
    }
    let rows = cfg.rows();
    let bar = progress_bar(rows.end - rows.start, args.quiet);
    let cpu0 = cpu_seconds();
    let summary = generate(&generator, &cfg, &|n| bar.inc(n));
    bar.finish_and_clear();
    let summary = summary?;
    let cpu_s = cpu_seconds() - cpu0;
    if !args.quiet {
        print_summary(&summary, cpu_s)?;
    }
    if let Some(p) = &args.summary_json {
        let mut v = serde_json::to_value(&summary)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("cpu_s".into(), serde_json::json!(cpu_s));
            o.insert("preset".into(), serde_json::json!(generator.name()));
            o.insert("config".into(), serde_json::to_value(&cfg)?);
        }
        write_atomically(p, serde_json::to_string_pretty(&v)? + "\n")?;
    }
    if args.verify_distribution {
        let files: Vec<String> = summary
            .files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect();
        let report = strata_pipeline::verify::verify_distribution(&spec, &files)?;
        write!(std::io::stdout().lock(), "{report}")?;
        let off = report.suspicious();
        if !off.is_empty() {
            anyhow::bail!(
                "{} of {} distribution checks are more than 5 standard errors from the spec",
                off.len(),
                report.checks.len()
            );
        }
    }
    Ok(())
}

fn run_sort(args: SortArgs) -> Result<()> {
    let cfg = SortConfig {
        input: args.input,
        output: args.output,
        keys: args.by.0,
        memory_limit: args.memory_limit.0,
        overwrite: args.overwrite,
    };
    let summary = sort_file(&cfg)?;
    if !args.quiet {
        print_sort_summary(&cfg, &summary)?;
    }
    Ok(())
}

fn run_scan(args: ScanArgs) -> Result<()> {
    let cfg = args.store.config();
    if let Some(out) = &args.output {
        // Refuse a bad output before reading anything.
        OutputFormat::from_path(out)?;
        if !args.overwrite && out.exists() {
            return Err(strata_store::Error::OutputExists {
                path: out.clone(),
                count: 1,
            }
            .into());
        }
    }
    let mut scanner = Scanner::open_location(&args.location, &cfg)?;
    let columns = args.columns.as_deref();
    let schema = scanner.file().projected_schema(columns)?;
    let file = match &args.output {
        Some(p) => Some(BatchFile::create(p, &schema, args.overwrite)?),
        None => None,
    };
    let stdout = std::io::stdout();
    let mut sink = RowSink {
        file,
        out: std::io::BufWriter::new(stdout.lock()),
        header_done: false,
    };
    if let Some(rows) = &args.take {
        let b = scanner.take(rows, columns)?;
        sink.emit(&b)?;
    } else {
        let req = ScanRequest {
            columns: args.columns.clone(),
            filter: args.filter.clone(),
            limit: args.limit,
        };
        scanner.scan(&req, |b| sink.emit(b))?;
    }
    sink.finish(schema)?;
    if args.stats {
        let s = scanner.stats();
        eprintln!(
            "requests {}, bytes fetched {}, bytes decoded {}, elapsed {:.3}",
            s.io.requests, s.io.bytes_fetched, s.bytes_decoded, s.elapsed_s
        );
    }
    Ok(())
}

fn run_compact_init(args: CompactInitArgs) -> Result<()> {
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

fn run_compact_plan(args: CompactPlanArgs) -> Result<()> {
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
            let m = strata_compact::dataset::Manifest::read(&ds)?;
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

fn run_compact_run(args: CompactRunArgs) -> Result<()> {
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

/// Where scanned rows go: an output file, or text on standard output.
struct RowSink<W: Write> {
    file: Option<BatchFile>,
    out: W,
    header_done: bool,
}

impl<W: Write> RowSink<W> {
    fn emit(&mut self, b: &RecordBatch) -> Result<(), strata_scan::Error> {
        match &mut self.file {
            Some(f) => f.write(b),
            None => {
                write_text(&mut self.out, b, !self.header_done)?;
                self.header_done = true;
                Ok(())
            }
        }
    }

    fn finish(mut self, schema: arrow_schema::SchemaRef) -> Result<()> {
        match self.file.take() {
            Some(f) => {
                f.finish()?;
            }
            None => {
                if !self.header_done {
                    // No rows: the header alone.
                    self.emit(&RecordBatch::new_empty(schema))?;
                }
                self.out.flush()?;
            }
        }
        Ok(())
    }
}

fn print_sort_summary(cfg: &SortConfig, s: &SortSummary) -> std::io::Result<()> {
    let keys: Vec<String> = cfg.keys.iter().map(|k| k.to_string()).collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "sorted {} rows by {} in {:.3} s",
        s.rows,
        keys.join(","),
        s.elapsed_s
    )?;
    writeln!(
        out,
        "  {} ({}, {} bytes) -> {} ({}, {} bytes)",
        cfg.input.display(),
        s.input_format,
        s.input_bytes,
        cfg.output.display(),
        s.output_format,
        s.output_bytes
    )?;
    writeln!(
        out,
        "  read {:.3} s, encode {:.3} s, sort {:.3} s, gather {:.3} s, write {:.3} s",
        s.read_s, s.encode_s, s.sort_s, s.gather_s, s.write_s
    )?;
    writeln!(
        out,
        "  memory estimate {} (limit {})",
        ByteSize(s.memory_estimate),
        ByteSize(cfg.memory_limit)
    )
}

fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} rows ({rate}, eta {eta})",
    ) {
        bar.set_style(style.with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1} M rows/s", state.per_sec() / 1e6);
            },
        ));
    }
    bar
}

fn print_summary(s: &Summary, cpu_s: f64) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "wrote {} records to {} file(s), {:.1} MB, in {:.3} s",
        s.records,
        s.files.len(),
        s.bytes as f64 / 1e6,
        s.elapsed_s
    )?;
    writeln!(
        out,
        "{:.2} M records/s, {:.2} M records/s per core ({} threads), {:.0} MB/s, cpu {:.2} s",
        s.records_per_s / 1e6,
        s.records_per_s_per_core / 1e6,
        s.threads,
        s.mb_per_s,
        cpu_s
    )?;
    for f in &s.files {
        writeln!(
            out,
            "  {}  {} rows  {} bytes",
            f.path.display(),
            f.rows,
            f.bytes
        )?;
    }
    Ok(())
}

fn check_writable_parent(p: &Path) -> Result<()> {
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    anyhow::ensure!(
        parent.is_dir(),
        "--summary-json: directory {} does not exist",
        parent.display()
    );
    Ok(())
}

fn write_atomically(p: &Path, text: String) -> Result<()> {
    let name = p
        .file_name()
        .with_context(|| format!("--summary-json: {} is not a file path", p.display()))?;
    let tmp = p.with_file_name(format!(
        ".{}.{}.strata-tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, p).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot rename {} to {}", tmp.display(), p.display())
    })
}

/// User plus system CPU time of this process.
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `u` points to writable memory of the size getrusage
        // fills; RUSAGE_SELF is always a valid `who`.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) };
        if rc != 0 {
            return f64::NAN;
        }
        // SAFETY: getrusage returned 0, so it initialised the struct (and
        // zeroed memory is a valid rusage anyway).
        let u = unsafe { u.assume_init() };
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        t(u.ru_utime) + t(u.ru_stime)
    }
    #[cfg(not(unix))]
    {
        f64::NAN
    }
}
