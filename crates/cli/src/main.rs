//! `strata`: the command-line front end of the strata toolkit.
//!
//! This file parses the command line and dispatches; each subcommand lives
//! in its own module (flags, the library call, printing), and all the work
//! lives in the `strata-*` crates.

mod bench;
mod common;
mod compact;
mod generate;
mod infer;
mod scan;
mod sort;
mod spec;
mod table;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    Generate(Box<generate::GenerateArgs>),
    /// Sort Parquet or Arrow IPC files by one or more columns, in memory or,
    /// past --memory-limit, in sorted runs spilled to disk and merged.
    ///
    /// The input's format is found from its magic bytes; the output's from
    /// its extension (.parquet, or .arrow/.ipc/.feather for an Arrow IPC
    /// file). The sort is stable and the schema is kept. The output appears
    /// only when complete.
    Sort(sort::SortArgs),
    /// Read the chosen columns of a Parquet or Arrow IPC file, fetching only
    /// their bytes, from a local path, a file:// URL or s3://BUCKET/KEY.
    ///
    /// Without -o the rows are printed as tab-separated text with a header
    /// line. S3 settings come from the standard AWS environment variables
    /// (AWS_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_ALLOW_HTTP), which the flags below override.
    Scan(scan::ScanArgs),
    /// Datasets of sorted Parquet files: build or rebuild the manifest,
    /// add files, plan and run compactions.
    #[command(subcommand)]
    Compact(compact::CompactCommand),
    /// Dataset specs: print a preset, check a spec file, print the spec
    /// format's JSON Schema.
    #[command(subcommand)]
    Spec(spec::SpecCommand),
    /// Benchmark suites with peers side by side, baselines, counters and
    /// trend charts: `strata bench SUITE`, `strata bench report DIR`.
    ///
    /// Suites: pipeline (generate), row (against arrow-row), scan
    /// (projected reads against the arrow-rs readers and pyarrow), compact
    /// (planner layouts, merge against DuckDB, table compaction against
    /// deltalake), parquet-column (the Int64 column-IO matrix against
    /// Arrow C++ through pyarrow), sort (against DuckDB and pyarrow), infer
    /// (against DuckDB's SUMMARIZE). Reports medians,
    /// min/max, CPU time and throughput as Markdown, and saves every run.
    Bench(bench::BenchArgs),
    /// Model existing data as a spec: `strata infer INPUT... -o spec.toml`
    /// reads Parquet, Arrow IPC or CSV tables once and writes a spec with
    /// their types, null rates, distributions, patterns and keys across
    /// tables; `strata infer --compare ORIGINAL GENERATED` measures how
    /// close generated data is.
    Infer(Box<infer::InferArgs>),
    /// Table formats: commit the parts of an Iceberg table written by
    /// several `generate --parts` runs as one snapshot.
    #[command(subcommand)]
    Table(table::TableCommand),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return parse_error(&e),
    };
    let result = match cli.command {
        Command::Generate(args) => generate::run(*args),
        Command::Sort(args) => sort::run(args),
        Command::Scan(args) => scan::run(args),
        Command::Compact(cmd) => compact::run(cmd),
        Command::Spec(cmd) => spec::run(cmd),
        Command::Table(cmd) => table::run(cmd),
        Command::Infer(args) => match infer::run(*args) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
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

/// A command-line error as one line, `strata: error: MESSAGE (tip: ...);
/// try 'strata SUBCOMMAND --help'`, with exit status 2; help and version
/// requests print as clap prints them.
fn parse_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
    }
    let text = e.render().to_string();
    let mut message = String::new();
    // The subcommand, for errors whose text has no usage line.
    let mut command = std::env::args()
        .nth(1)
        .filter(|a| {
            <Cli as clap::CommandFactory>::command()
                .get_subcommands()
                .any(|c| c.get_name() == a)
        })
        .map_or_else(|| "strata".to_string(), |c| format!("strata {c}"));
    for line in text.lines() {
        let line = line.trim();
        if let Some(usage) = line.strip_prefix("Usage: ") {
            command = usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect::<Vec<_>>()
                .join(" ");
            break;
        }
        if line.is_empty() || line.starts_with("For more information") {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        if let Some(tip) = line.strip_prefix("tip: ") {
            message.push_str(&format!(" (tip: {tip})"));
        } else {
            if !message.is_empty() {
                message.push(' ');
            }
            message.push_str(line);
        }
    }
    eprintln!("strata: error: {message}; try '{command} --help'");
    ExitCode::from(2)
}
