//! `strata`: the command-line front end of the strata toolkit, as a
//! library so that the `strata` binary and the Python package's `strata`
//! command (crates/py) run the same code.
//!
//! # What it owns
//!
//! The command line: parsing (clap), one module per subcommand (its flags,
//! the library call, what it prints), errors as one line on stderr, and
//! the exit statuses ([`exit`]). All the work lives in the `strata-*`
//! crates; this is the only crate that uses `anyhow`.
//!
//! # Data flow
//!
//! arguments -> [`run`] -> clap parses them into `Cli` (a bad flag is
//! one line on stderr and [`exit::USAGE`]) -> the subcommand's module ->
//! a `strata-*` library call -> its report on stdout -> an exit status.
//!
//! # Guarantees
//!
//! - The same arguments give the same output and status whichever front
//!   end runs them: the binary's `main` is `run(std::env::args_os())`.
//! - Every failure is one line, `strata: error: ...`, and a status from
//!   the table in [`exit`] (and README); nothing panics on user input.
//! - `--version` names the commit the binary was built from.
//!
//! # Example
//!
//! ```
//! // `strata spec show orders` prints the preset's TOML; status 0.
//! assert_eq!(strata_cli::run(["strata", "spec", "show", "orders"]), 0);
//! // An unknown flag: one line on stderr, status 2.
//! assert_eq!(strata_cli::run(["strata", "generate", "--no-such-flag"]), 2);
//! ```

#[cfg(feature = "bench")]
mod bench;
// Without the `bench` feature, `strata bench` says how to get it.
#[cfg(not(feature = "bench"))]
#[path = "bench_off.rs"]
mod bench;
mod common;
mod compact;
mod completions;
pub mod exit;
mod generate;
mod infer;
mod man;
mod report;
mod scan;
mod sort;
mod spec;
mod table;

use std::ffi::OsString;

use clap::{Parser, Subcommand};

/// `strata --version`: the package version and the commit it was built
/// from (`build.rs`).
const VERSION: &str = env!("STRATA_VERSION");

/// `strata --help`'s examples.
const EXAMPLES: &str = "Examples:
  strata generate
  strata spec show orders > orders.toml
  strata generate --spec orders.toml --scale 0.1 --output-dir orders
  strata sort orders/lineitem/lineitem_0.parquet --by l_orderkey -o sorted.parquet
  strata scan sorted.parquet --columns l_orderkey,l_quantity --limit 5";

#[derive(Parser, Debug)]
#[command(
    name = "strata",
    version = VERSION,
    about = "Columnar-data building blocks: generate nested data at speed, sort files, read only the columns you need",
    after_help = EXAMPLES,
    after_long_help = format!("{EXAMPLES}\n\n{}", exit::table())
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
    #[command(after_help = "Examples:
  # 10,000,000 `contacts` rows into ./output_parquet
  strata generate
  # TPC-H-like orders, customers and line items at scale 0.1, zstd
  strata generate --preset orders --scale 0.1 --compression zstd --output-dir orders
  # your own spec, as an Iceberg table
  strata generate --spec events.toml --format iceberg --output-dir warehouse
  # the star schema, and a page of charts of what was written
  strata generate --preset star --scale 0.01 --output-dir star --report star.html")]
    Generate(Box<generate::GenerateArgs>),
    /// Sort Parquet or Arrow IPC files by one or more columns, in memory or,
    /// past --memory-limit, in sorted runs spilled to disk and merged.
    ///
    /// The input's format is found from its magic bytes; the output's from
    /// its extension (.parquet, or .arrow/.ipc/.feather for an Arrow IPC
    /// file). The sort is stable and the schema is kept. The output appears
    /// only when complete.
    #[command(after_help = "Examples:
  strata sort output_parquet/contacts_0.parquet --by id -o sorted.parquet
  # several inputs, two keys, spilled past 1 GiB of memory
  strata sort in/*.parquet --by 'name,id:desc' --memory-limit 1GiB -o sorted.parquet")]
    Sort(sort::SortArgs),
    /// Read the chosen columns of a Parquet or Arrow IPC file, fetching only
    /// their bytes, from a local path, a file:// URL or s3://BUCKET/KEY.
    ///
    /// Without -o the rows are printed as tab-separated text with a header
    /// line. S3 settings come from the standard AWS environment variables
    /// (AWS_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_ALLOW_HTTP), which the flags below override.
    #[command(after_help = "Examples:
  strata scan output_parquet/contacts_0.parquet --columns id,name --limit 5
  strata scan s3://bucket/data.parquet --columns id --filter 'id < 100' -o ids.parquet")]
    Scan(scan::ScanArgs),
    /// Datasets of sorted Parquet files: build or rebuild the manifest,
    /// add files, plan and run compactions.
    #[command(subcommand)]
    #[command(after_help = "Examples:
  strata compact init data --key id
  strata compact plan data --budget-mb 128
  strata compact run data --budget-mb 128
  strata compact table warehouse/orders --sort-by id --budget-mb 64 --dry-run")]
    Compact(compact::CompactCommand),
    /// Dataset specs: print a preset, check a spec file, print the spec
    /// format's JSON Schema.
    #[command(subcommand)]
    #[command(after_help = "Examples:
  strata spec show orders > orders.toml
  strata spec check orders.toml
  strata spec sample orders.toml --rows 5
  strata spec schema > spec.schema.json")]
    Spec(spec::SpecCommand),
    /// Benchmark suites with peers side by side, baselines, counters and
    /// trend charts: `strata bench SUITE`, `strata bench report DIR`.
    ///
    /// Suites: pipeline (generate), row (against arrow-row), scan
    /// (projected reads against the arrow-rs readers and pyarrow), compact
    /// (planner layouts, merge against DuckDB, table compaction against
    /// deltalake), parquet-column (the Int64 column-IO matrix against
    /// Arrow C++ through pyarrow), sort (against DuckDB and pyarrow), infer
    /// and dataset-report (`strata infer` and `strata report`, each against
    /// DuckDB's SUMMARIZE). Reports medians,
    /// min/max, CPU time and throughput as Markdown, and saves every run.
    #[command(after_help = "Examples:
  strata bench pipeline --size tiny
  strata bench sort --save-baseline main
  strata bench sort --baseline main --fail-on-regression
  strata bench report target/strata-bench/runs")]
    Bench(bench::BenchArgs),
    /// Model existing data as a spec: `strata infer INPUT... -o spec.toml`
    /// reads Parquet, Arrow IPC or CSV tables once and writes a spec with
    /// their types, null rates, distributions, patterns and keys across
    /// tables; `strata infer --compare ORIGINAL GENERATED` measures how
    /// close generated data is.
    #[command(after_help = "Examples:
  strata infer warehouse/ -o warehouse.toml --report warehouse.json
  strata generate --spec warehouse.toml --output-dir synthetic
  strata infer --compare warehouse/ synthetic/ --html compare.html")]
    Infer(Box<infer::InferArgs>),
    /// See a dataset: one self-contained HTML page (inline SVG, nothing
    /// fetched) with each column's histogram or top values, null rates,
    /// lengths and key skew, each reference's orphans and fan-out, and the
    /// files' partitions, sizes, row groups and key ranges; with --spec,
    /// the spec's distributions drawn over the data and a summary of the
    /// checks against it.
    #[command(after_help = "Examples:
  strata generate --preset orders --scale 0.1 --output-dir orders
  strata report orders --spec orders -o orders.html
  strata report output_parquet -o contacts.html --json contacts.json")]
    Report(Box<report::ReportArgs>),
    /// Table formats: commit the parts of an Iceberg table written by
    /// several `generate --parts` runs as one snapshot.
    #[command(subcommand)]
    #[command(after_help = "Examples:
  strata table commit warehouse/lineitem
  strata table clean warehouse/lineitem --dry-run")]
    Table(table::TableCommand),
    /// Print a shell's completion script: bash, zsh, fish, elvish or
    /// powershell.
    #[command(after_help = "Examples:
  strata completions bash > ~/.local/share/bash-completion/completions/strata
  strata completions zsh > ~/.zfunc/_strata
  strata completions fish > ~/.config/fish/completions/strata.fish")]
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff), or write one per command into a
    /// directory.
    #[command(after_help = "Examples:
  strata man | man -l -
  strata man --dir ~/.local/share/man/man1")]
    Man(man::ManArgs),
}

/// The command-line definition (for completions, manual pages, the CLI
/// reference in `docs/` and tests).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Runs the command line `args` (the program name first, as
/// `std::env::args_os` gives it) and returns its exit status (see
/// [`exit`]). Output goes to this process's stdout and stderr; an
/// interrupt (Ctrl-C, SIGTERM) during a run that writes files ends the
/// process with [`exit::INTERRUPTED`] after removing them.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let code = dispatch(args);
    // The Python entry point returns to the interpreter rather than
    // exiting: what is buffered must be out before it does.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code
}

/// Parses, runs the subcommand and maps its outcome to an exit status.
fn dispatch<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
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
        Command::Infer(args) => infer::run(*args),
        Command::Report(args) => report::run(*args),
        Command::Bench(args) => match bench::run(args) {
            Ok(exit::SUCCESS) => Ok(()),
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Completions(args) => completions::run(args, command()),
        Command::Man(args) => man::run(args, command()),
    };
    match result {
        Ok(()) => exit::SUCCESS,
        Err(e) => status_of(&e),
    }
}

/// Reports `e` on one line (unless it is a closed pipe, which ends output
/// quietly) and returns its exit status.
fn status_of(e: &anyhow::Error) -> u8 {
    let broken_pipe = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return exit::SUCCESS;
    }
    eprintln!("strata: error: {}", chain(e));
    if e.downcast_ref::<exit::CheckFailed>().is_some() {
        exit::CHECK_FAILED
    } else {
        exit::ERROR
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
fn parse_error(e: &clap::Error) -> u8 {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.use_stderr() {
            exit::USAGE
        } else {
            exit::SUCCESS
        };
    }
    let text = e.render().to_string();
    let mut message = String::new();
    // The subcommand, for errors whose text has no usage line.
    let mut command = std::env::args()
        .nth(1)
        .filter(|a| command().get_subcommands().any(|c| c.get_name() == a))
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
    exit::USAGE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of a shell example as words: single or double quotes group,
    /// and a redirection or pipe ends the command.
    fn words(line: &str) -> Vec<String> {
        let mut out = vec![];
        let mut word = String::new();
        let mut quote = None;
        let mut started = false;
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    started = true;
                }
                (None, '>' | '|') => break,
                (None, c) if c.is_whitespace() => {
                    if started || !word.is_empty() {
                        out.push(std::mem::take(&mut word));
                    }
                    started = false;
                }
                (None, c) => word.push(c),
            }
        }
        if started || !word.is_empty() {
            out.push(word);
        }
        out
    }

    /// Every command and subcommand, with its full name (`strata compact
    /// plan`).
    fn commands(cmd: &clap::Command, name: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            commands(sub, format!("{name} {}", sub.get_name()), out);
        }
        out.push((name, cmd.clone()));
    }

    #[test]
    fn every_command_has_examples_that_parse() {
        let mut all = vec![];
        commands(&command(), "strata".into(), &mut all);
        assert!(all.len() > 20, "{}", all.len());
        for (name, cmd) in &all {
            let help = cmd
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(help.starts_with("Examples:\n"), "{name} has no examples");
            let examples: Vec<Vec<String>> = help
                .lines()
                .skip(1)
                .map(str::trim)
                .filter(|l| !l.starts_with('#'))
                .map(words)
                .collect();
            assert!(
                examples
                    .iter()
                    .any(|w| w.join(" ").starts_with(name.as_str())),
                "{name}: no example runs it:\n{help}"
            );
            for w in &examples {
                assert_eq!(w[0], "strata", "{name}: {w:?}");
                if let Err(e) = Cli::try_parse_from(w) {
                    panic!("{name}: the example {w:?} does not parse: {e}");
                }
            }
        }
    }

    #[test]
    fn example_words() {
        assert_eq!(
            words("strata sort a.parquet --by 'name,id:desc' -o \"x y\" > out"),
            [
                "strata",
                "sort",
                "a.parquet",
                "--by",
                "name,id:desc",
                "-o",
                "x y"
            ]
        );
        assert_eq!(words("strata man | man -l -"), ["strata", "man"]);
    }

    #[test]
    fn exit_table_is_the_readme_and_guide_table() {
        let readme = include_str!("../../../README.md");
        let guide = include_str!("../../../docs/src/troubleshooting.md");
        let docs = include_str!("exit.rs");
        let rows = |text: &str, prefix: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix(prefix))
                .filter(|l| {
                    l.strip_prefix("| ")
                        .and_then(|r| r.split(' ').next())
                        .is_some_and(|s| s.parse::<u8>().is_ok())
                })
                .map(String::from)
                .collect()
        };
        let ours = rows(docs, "//! ");
        assert_eq!(ours.len(), 5, "{ours:?}");
        assert_eq!(
            rows(readme, ""),
            ours,
            "README's exit-status table differs from exit.rs"
        );
        assert_eq!(
            rows(guide, ""),
            ours,
            "the exit-status table of docs/src/troubleshooting.md differs from exit.rs"
        );
        // The statuses the code uses are the table's.
        let statuses: Vec<u8> = ours
            .iter()
            .map(|r| r[2..].split(' ').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(
            statuses,
            [
                exit::SUCCESS,
                exit::CHECK_FAILED,
                exit::ERROR,
                exit::REGRESSION,
                exit::INTERRUPTED
            ]
        );
        let help = exit::table();
        for s in statuses {
            assert!(help.contains(&format!("{s:>3}  ")), "{help}");
        }
    }

    #[test]
    fn a_failed_check_is_status_1_and_an_error_2() {
        let off = generate::fail_if_off(1, 12).unwrap_err();
        assert_eq!(status_of(&off), exit::CHECK_FAILED);
        assert_eq!(status_of(&off.context("table t")), exit::CHECK_FAILED);
        assert!(generate::fail_if_off(0, 12).is_ok());
        assert_eq!(status_of(&anyhow::anyhow!("no such file")), exit::ERROR);
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(status_of(&anyhow::Error::from(pipe)), exit::SUCCESS);
        assert_eq!(run(["strata", "spec", "show", "nope"]), exit::ERROR);
        assert_eq!(run(["strata", "--bogus"]), exit::USAGE);
        assert_eq!(run(["strata", "--version"]), exit::SUCCESS);
        assert!(VERSION.contains("(commit "), "{VERSION}");
    }
}
