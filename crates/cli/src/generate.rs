//! `strata generate`: flags to a [`Flow`] (the spec's one table, or the
//! chosen tables of a dataset, with a [`GenerateConfig`]), then its plan
//! (`--dry-run`) or its run and summary.
//!
//! The summary JSON is written (not yet visible) before the data files
//! appear, and made visible right after them. Ctrl-C or SIGTERM stops the
//! run; its unfinished outputs are removed before the one-line message
//! and exit status 130.

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::{
        Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use anyhow::Result;
use clap::Args;
use strata_gen::{BatchGenerator, Dataset, Spec};
use strata_parquet::{Compression, Format};
use strata_pipeline::{
    flow::Flow,
    generate::{
        DEFAULT_BATCH_SIZE, DEFAULT_NUM_WRITERS, DEFAULT_ROW_GROUP_ROWS, DEFAULT_SEED,
        DEFAULT_TARGET_RECORDS, GenerateConfig, ParquetEncoder, RunOptions, Summary,
        default_output_dir, default_threads,
    },
    layout::LayoutFlags,
};
use strata_store::output::PendingFile;

use crate::common::{StoreArgs, parse, progress_bar};

#[derive(Args, Debug)]
pub(crate) struct GenerateArgs {
    /// Dataset preset: contacts, wide-u64, events or lineitem, or the
    /// datasets of several tables star, orders and tpch (`strata spec show
    /// NAME` prints one).
    #[arg(long, default_value = "contacts", value_parser = crate::spec::preset_names())]
    preset: String,
    /// A dataset spec file (TOML) instead of a preset; `strata spec check
    /// FILE` checks one, `strata spec schema` prints its JSON Schema.
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    spec: Option<PathBuf>,
    /// Rows to generate [default: 10000000] (a spec of several tables
    /// sets each table's rows itself: use --scale).
    #[arg(long)]
    target_records: Option<u64>,
    /// Scale factor of a spec of several `[[tables]]`: a table of
    /// `rows_per_scale = N` gets N x SCALE rows, rounded [default: 1].
    #[arg(long)]
    scale: Option<f64>,
    /// Generate only these tables of a spec of several tables
    /// (comma-separated); references to the others still resolve.
    #[arg(long, value_delimiter = ',')]
    tables: Option<Vec<String>>,
    /// Rows per generated Arrow batch (speed barely changes above ~4096).
    #[arg(long, default_value_t = DEFAULT_BATCH_SIZE)]
    record_batch_size: usize,
    /// Output files, each with its own writer; file i holds the i-th
    /// contiguous slice of rows. Encoding parallelism comes from --threads,
    /// so this sets the layout, not the speed.
    #[arg(long, default_value_t = DEFAULT_NUM_WRITERS)]
    num_writers: usize,
    /// Output directory (created if missing), file:///PATH, or
    /// s3://BUCKET/PREFIX (S3 settings from the AWS_* variables and the
    /// flags below; each file is a multipart upload, completed only when
    /// every file is whole) [default: output_parquet, or output_ipc with
    /// --format ipc].
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
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Split the rows into this many equal contiguous parts and write only
    /// the one --part names (files STEM_partIofN_j): parts can run on
    /// different machines, and together hold exactly the whole run's rows.
    /// Without it, the whole run.
    #[arg(long, requires = "part")]
    parts: Option<u64>,
    /// Which part to write, from 1 to --parts (given together).
    #[arg(long, requires = "parts")]
    part: Option<u64>,
    /// Start the rows at this global row (a plain spec or preset; not a
    /// dataset): row i of the run is row OFFSET + i of the spec, so
    /// sequences and keys continue where a run of OFFSET rows stopped.
    /// `append` (with --format iceberg or delta): the rows the table
    /// already holds, so that each append continues its keys.
    #[arg(long, value_name = "N|append", value_parser = parse_row_offset)]
    row_offset: Option<RowOffset>,
    /// How a table's history (a spec with `changes`) changes an Iceberg
    /// or Delta table's files: merge-on-read (Iceberg's default: rows
    /// deleted by position, updated rows in new files), copy-on-write
    /// (Delta's default: files with changed rows written again), or
    /// deletion-vectors (Delta: rows deleted in deletion vectors), or
    /// equality-deletes (Iceberg: rows deleted by primary key, one
    /// equality delete file per version).
    #[arg(long, value_name = "MODE", value_parser = ["merge-on-read", "copy-on-write", "deletion-vectors", "equality-deletes"])]
    write_mode: Option<String>,
    /// With --format delta: make new tables with the change data feed
    /// (`delta.enableChangeDataFeed`); a history's versions write their
    /// changes under `_change_data/`.
    #[arg(long)]
    change_data_feed: bool,
    /// The file format of a history's change stream
    /// (`OUTPUT/NAME_changes/version=K/`): parquet, ipc (Arrow IPC), jsonl
    /// (one JSON object per change) or debezium (JSON lines of Debezium's
    /// change event value: before, after, source, op, ts_ms).
    #[arg(long, value_name = "FORMAT", value_parser = ["parquet", "ipc", "jsonl", "debezium"])]
    stream_format: Option<String>,
    /// Output format: parquet, ipc (Arrow IPC file), iceberg (each
    /// table an Iceberg v2 table at OUTPUT/TABLE: Parquet data files under
    /// data/, laid out as its layout says, then metadata/v1.metadata.json
    /// and version-hint.text, committed once every data file is complete),
    /// or delta (each table a Delta Lake table at OUTPUT/TABLE: Parquet
    /// data files in its partition directories, identity partition
    /// columns left out of them, then _delta_log/00000000000000000000.json,
    /// committed once every data file is complete).
    #[arg(long, default_value = "parquet", value_parser = parse::<OutputFormat, _>)]
    format: OutputFormat,
    /// With --format iceberg: also register each table in Iceberg's SQL
    /// catalog in a SQLite file (`sqlite:PATH`, or SQLAlchemy's
    /// `sqlite:///PATH`; created if missing), which
    /// pyiceberg's SqlCatalog and Java's JdbcCatalog open.
    #[arg(long, value_name = "sqlite:PATH")]
    catalog: Option<String>,
    /// The catalog's name (its `catalog_name`: pyiceberg's
    /// `SqlCatalog(NAME, ...)`).
    #[arg(long, default_value = "default", requires = "catalog")]
    catalog_name: String,
    /// The catalog namespace the tables go in.
    #[arg(long, default_value = "default", requires = "catalog")]
    namespace: String,
    /// Create the namespace if the catalog does not have it (else that is
    /// an error).
    #[arg(long, requires = "catalog")]
    create_namespace: bool,
    /// With --format iceberg or delta: write the rows as this many
    /// appends, one snapshot (or Delta version) each (snapshot i holds the
    /// i-th of N equal slices of the rows, so the table holds the rows of
    /// one run), for benchmarks of snapshot-heavy metadata.
    #[arg(long, value_name = "N", conflicts_with_all = ["parts", "part"])]
    snapshots: Option<u64>,
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
    /// Parquet encoder: auto (strata's direct encoder, which takes every
    /// type of the spec format at any depth) or arrow (parquet's Arrow
    /// writer, the reference).
    #[arg(long, default_value = "auto", value_parser = parse::<ParquetEncoder, _>)]
    encoder: ParquetEncoder,
    /// Write Parquet pages without the CRC-32 checksum in their headers
    /// (the direct encoder writes one by default; the arrow encoder never).
    #[arg(long)]
    no_page_checksums: bool,
    /// Replace existing output files (and remove STEM_N files of an earlier
    /// run with more writers).
    #[arg(long)]
    overwrite: bool,
    /// No progress bar and no summary on the terminal.
    #[arg(long, short)]
    quiet: bool,
    /// Also write the summary as JSON to this local file (written before
    /// the data files appear: if it cannot be written, neither are they).
    #[arg(long, value_parser = crate::common::local_output)]
    summary_json: Option<PathBuf>,
    /// After writing, read the files back and report each field's realised
    /// null, category and length shares against the spec's; exits with
    /// status 1 when one is off by more than 5 standard errors.
    #[arg(long)]
    verify_distribution: bool,
    /// After writing, read the files back and write an HTML page about
    /// them here (as `strata report OUTPUT --spec SPEC` does): each
    /// column's distribution with the spec's drawn over it, references,
    /// files and key ranges. Never over an existing file without
    /// --overwrite.
    #[arg(long, value_name = "PATH", value_parser = crate::common::local_output)]
    report: Option<PathBuf>,
    #[command(flatten)]
    layout: LayoutArgs,
    #[command(flatten)]
    store: StoreArgs,
}

/// How the files are laid out; over each table's spec `layout`. In a
/// dataset, a value starting `TABLE:` is that table's alone.
#[derive(Args, Debug)]
struct LayoutArgs {
    /// Hive-style partition directories by these fields, outermost first
    /// (comma-separated): a column, or year(c), month(c), day(c), hour(c),
    /// bucket(N, c), truncate(W, c) as Iceberg computes them.
    #[arg(long, value_name = "FIELDS", help_heading = "Layout")]
    partition_by: Vec<String>,
    /// Rows in each partition in this order: COL[:desc][:nulls_first|
    /// :nulls_last], comma-separated, most significant first.
    #[arg(long, value_name = "KEYS", help_heading = "Layout")]
    sort_by: Vec<String>,
    /// Close a file at about this many compressed bytes (512MiB, 1GB);
    /// each partition's last file holds the rest.
    #[arg(long, value_name = "SIZE", help_heading = "Layout")]
    target_file_size: Vec<String>,
    /// Close a row group at this many rows (1000000) or bytes (128MiB);
    /// over --row-group-rows.
    #[arg(long, value_name = "ROWS|SIZE", help_heading = "Layout")]
    row_group_size: Vec<String>,
    /// Whether identity partition columns are also written in the files
    /// (keep) or only in the directory names (drop, as Hive, Spark and
    /// DuckDB write them) [default: drop].
    #[arg(long, value_name = "keep|drop", value_parser = ["keep", "drop"], help_heading = "Layout")]
    partition_columns: Option<String>,
    /// Memory the rows held for partitioning and sorting may use; past
    /// it they are spilled to disk as sorted runs and merged.
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = parse::<strata_sort::ByteSize, _>, help_heading = "Layout")]
    memory_limit: strata_sort::ByteSize,
    /// Where sorted runs are spilled (a temporary directory inside it,
    /// removed at the end) [default: the output directory].
    #[arg(long, value_name = "DIR", help_heading = "Layout")]
    spill_dir: Option<PathBuf>,
    /// Refuse a run expected to write more partitions than this.
    #[arg(long, value_name = "N", default_value_t = strata_pipeline::layout::DEFAULT_MAX_PARTITIONS, help_heading = "Layout")]
    max_partitions: u64,
}

impl LayoutArgs {
    fn flags(&self) -> LayoutFlags {
        LayoutFlags {
            partition_by: self.partition_by.clone(),
            sort_by: self.sort_by.clone(),
            target_file_size: self.target_file_size.clone(),
            row_group_size: self.row_group_size.clone(),
            keep_partition_columns: self.partition_columns.as_deref().map(|c| c == "keep"),
            memory_limit: self.memory_limit.0,
            spill_dir: self.spill_dir.clone(),
            max_partitions: self.max_partitions,
        }
    }
}

/// What `--format` writes: loose files of a format, or tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputFormat {
    /// Parquet or IPC files.
    Files(Format),
    /// Iceberg v2 tables of Parquet files.
    Iceberg,
    /// Delta Lake tables of Parquet files.
    Delta,
}

impl OutputFormat {
    /// The data files' format.
    fn files(self) -> Format {
        match self {
            OutputFormat::Files(f) => f,
            OutputFormat::Iceberg | OutputFormat::Delta => Format::Parquet,
        }
    }
}

impl std::str::FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("iceberg") {
            return Ok(OutputFormat::Iceberg);
        }
        if s.eq_ignore_ascii_case("delta") {
            return Ok(OutputFormat::Delta);
        }
        s.parse::<Format>()
            .map(OutputFormat::Files)
            .map_err(|e| format!("{e}, iceberg or delta"))
    }
}

/// Where a run's tables go, for the table formats.
enum Tables {
    /// Loose files: no table.
    None,
    /// Iceberg tables.
    Iceberg(strata_pipeline::table::IcebergTables),
    /// Delta tables.
    Delta(strata_pipeline::table::DeltaTables),
}

/// The dataset `--spec` names, or the `--preset`'s one table.
fn load_dataset(args: &GenerateArgs) -> Result<Dataset> {
    match &args.spec {
        Some(path) => crate::spec::read_dataset(path),
        None => {
            let text = Dataset::preset_text(&args.preset)
                .ok_or_else(|| anyhow::anyhow!("no preset named '{}'", args.preset))?;
            Ok(Dataset::parse(text, &format!("preset {}", args.preset))?)
        }
    }
}

fn config(
    args: &GenerateArgs,
    spec: &Spec,
    part: strata_pipeline::generate::Part,
) -> GenerateConfig {
    let threads = args.threads.unwrap_or_else(default_threads);
    let output_dir = args
        .output_dir
        .clone()
        .unwrap_or_else(|| match args.format {
            OutputFormat::Files(f) => default_output_dir(f),
            OutputFormat::Iceberg => PathBuf::from("output_iceberg"),
            OutputFormat::Delta => PathBuf::from("output_delta"),
        });
    GenerateConfig {
        target_records: args.target_records.unwrap_or(DEFAULT_TARGET_RECORDS),
        record_batch_size: args.record_batch_size,
        num_writers: args.num_writers,
        threads,
        row_group_rows: args.row_group_rows,
        format: args.format.files(),
        compression: args.compression,
        output_dir,
        output_filename: args
            .output_filename
            .clone()
            .unwrap_or_else(|| spec.name.clone()),
        overwrite: args.overwrite,
        seed: args.seed,
        encoder: args.encoder,
        page_checksums: !args.no_page_checksums,
        part,
        layout: None,
        field_ids: None,
        row_offset: 0,
    }
}

pub(crate) fn run(args: GenerateArgs) -> Result<()> {
    keep_batch_buffers();
    let _ = ctrlc::set_handler(on_interrupt);
    if let Some(dir) = &args.output_dir
        && let Some(d) = dir.to_str()
    {
        // A malformed URL is refused before anything is read or made.
        strata_store::location::parse_dir(d, &args.store.config())
            .map_err(|e| anyhow::anyhow!("--output-dir: {e}"))?;
    }
    if let Some(report) = &args.report {
        anyhow::ensure!(
            args.parts.is_none(),
            "--report describes a whole dataset: run `strata report` over the output once every part is written"
        );
        anyhow::ensure!(
            args.overwrite || !report.exists(),
            "--report: {} exists; pass --overwrite to replace it",
            report.display()
        );
    }
    let snapshots = args.snapshots.unwrap_or(1);
    if args.snapshots.is_some() {
        anyhow::ensure!(
            matches!(args.format, OutputFormat::Iceberg | OutputFormat::Delta),
            "--snapshots makes a table of several appends: add --format iceberg or --format delta"
        );
        anyhow::ensure!(snapshots >= 1, "--snapshots must be at least 1");
        anyhow::ensure!(
            args.summary_json.is_none() && !args.verify_distribution,
            "--snapshots: --summary-json and --verify-distribution describe one run; leave them out"
        );
    }
    if snapshots == 1 {
        let part = strata_pipeline::generate::Part {
            index: args.part.unwrap_or(1),
            count: args.parts.unwrap_or(1),
        };
        return run_one(&args, part, &mut None);
    }
    // Snapshot i holds the i-th of `snapshots` equal slices of the rows:
    // together the same rows as one run.
    // With `--row-offset append`, every slice starts from the rows the
    // table held before the first.
    let mut offset = None;
    for index in 1..=snapshots {
        run_one(
            &args,
            strata_pipeline::generate::Part {
                index,
                count: snapshots,
            },
            &mut offset,
        )?;
    }
    Ok(())
}

/// One run: generate the tables (rows of `part`) and, for tables,
/// commit them. `offset` is the row offset `--row-offset append` resolved
/// to, once known.
fn run_one(
    args: &GenerateArgs,
    part: strata_pipeline::generate::Part,
    offset: &mut Option<u64>,
) -> Result<()> {
    let mut flow = flow(args, load_dataset(args)?, part)?;
    let tables = if args.format == OutputFormat::Iceberg {
        let catalog = args
            .catalog
            .as_deref()
            .map(|c| {
                crate::table::catalog(
                    c,
                    &args.catalog_name,
                    &args.namespace,
                    args.create_namespace,
                )
            })
            .transpose()?;
        Tables::Iceberg(flow.as_iceberg(catalog, &args.store.config())?)
    } else {
        anyhow::ensure!(
            args.catalog.is_none(),
            "--catalog registers Iceberg tables: add --format iceberg"
        );
        if args.format == OutputFormat::Delta {
            Tables::Delta(flow.as_delta(&args.store.config())?)
        } else {
            Tables::None
        }
    };
    let write_mode = match args.write_mode.as_deref() {
        None => strata_pipeline::history::WriteMode::Default,
        Some("merge-on-read") => {
            anyhow::ensure!(
                args.format == OutputFormat::Iceberg,
                "--write-mode merge-on-read is Iceberg's (position deletes); Delta takes copy-on-write or deletion-vectors"
            );
            strata_pipeline::history::WriteMode::MergeOnRead
        }
        Some("copy-on-write") => strata_pipeline::history::WriteMode::CopyOnWrite,
        Some("equality-deletes") => {
            anyhow::ensure!(
                args.format == OutputFormat::Iceberg,
                "--write-mode equality-deletes is Iceberg's; Delta takes copy-on-write or deletion-vectors"
            );
            strata_pipeline::history::WriteMode::EqualityDeletes
        }
        Some(_) => {
            anyhow::ensure!(
                args.format == OutputFormat::Delta,
                "--write-mode deletion-vectors is Delta's; Iceberg takes merge-on-read, copy-on-write or equality-deletes"
            );
            strata_pipeline::history::WriteMode::DeletionVectors
        }
    };
    anyhow::ensure!(
        args.write_mode.is_none()
            || matches!(args.format, OutputFormat::Iceberg | OutputFormat::Delta),
        "--write-mode says how a history changes a table: add --format iceberg or delta"
    );
    anyhow::ensure!(
        !args.change_data_feed || args.format == OutputFormat::Delta,
        "--change-data-feed is a Delta table's: add --format delta"
    );
    let mut tables = tables;
    if let Tables::Delta(t) = &mut tables {
        if args.change_data_feed {
            t.configuration
                .insert("delta.enableChangeDataFeed".into(), "true".into());
        }
        if write_mode == strata_pipeline::history::WriteMode::DeletionVectors {
            t.configuration
                .insert("delta.enableDeletionVectors".into(), "true".into());
        }
    }
    let has_history = (0..flow.jobs().len()).any(|j| {
        flow.dataset().tables[flow.tables()[j]]
            .spec
            .changes
            .is_some()
    });
    if !matches!(tables, Tables::None) {
        flow.check_table_histories(write_mode)?;
    }
    anyhow::ensure!(
        args.stream_format.is_none() || matches!(tables, Tables::None),
        "--stream-format is the change stream's, which a run writes beside plain files: leave out \
         --format iceberg or delta (a table's versions are its history)"
    );
    if has_history && !matches!(tables, Tables::None) {
        anyhow::ensure!(
            part.count == 1,
            "a table with `changes` is written as an Iceberg or Delta table by one run: leave out \
             --parts and --snapshots"
        );
    }
    match args.row_offset {
        None => {}
        Some(RowOffset::At(n)) => flow.set_row_offset(n)?,
        Some(RowOffset::Append) => {
            let dir = match &tables {
                Tables::Iceberg(t) => t.dirs.first(),
                Tables::Delta(t) => t.dirs.first(),
                Tables::None => None,
            };
            let Some(dir) = dir else {
                anyhow::bail!(
                    "--row-offset append continues a table's rows: add --format iceberg or delta"
                );
            };
            let n = match *offset {
                Some(n) => n,
                None => strata_pipeline::table::table_rows(dir)?,
            };
            *offset = Some(n);
            flow.set_row_offset(n)?;
        }
    }
    if args.dry_run {
        return print_json(&flow.plan()?);
    }
    if let Some(p) = &args.summary_json {
        check_writable_parent(p)?;
    }
    let bar = progress_bar(flow.rows(), args.quiet);
    let mut json = None;
    let summaries = {
        let json = &mut json;
        let (flow, path) = (&flow, &args.summary_json);
        let opts = run_options(args, move |summaries: &[Summary]| {
            if let Some(p) = path {
                *json = Some(pending_json(p, &flow.report(summaries))?);
            }
            Ok(())
        });
        RUNNING.store(true, Ordering::SeqCst);
        flow.run(opts, &|n| bar.inc(n))
    };
    bar.finish_and_clear();
    let summaries = finish_run(summaries, json, |all: &Vec<Summary>| {
        all.iter()
            .flat_map(|s| s.files.iter().map(|f| f.path.clone()))
            .collect()
    })?;
    match &tables {
        Tables::None => {}
        Tables::Iceberg(tables) if part.count > 1 && args.snapshots.is_none() => {
            // A part stages its files; `strata table commit` commits them
            // all.
            let staged = flow.stage_iceberg(tables, &summaries, part)?;
            if !args.quiet {
                for (dir, f) in tables.dirs.iter().zip(&staged) {
                    writeln!(
                        std::io::stdout().lock(),
                        "staged part {} of {} of iceberg table {} ({}); once every part is written: strata table commit {}",
                        part.index,
                        part.count,
                        dir,
                        f.display(),
                        dir
                    )?;
                }
            }
        }
        Tables::Iceberg(tables) => {
            let committed = flow.commit_iceberg(tables, &summaries)?;
            if !args.quiet {
                for (dir, c) in tables.dirs.iter().zip(&committed) {
                    crate::table::print_committed(&dir.root(), c)?;
                }
            }
            for (name, versions) in flow.commit_history_iceberg(tables, &summaries, write_mode)? {
                if !args.quiet {
                    let last = versions.last();
                    writeln!(
                        std::io::stdout().lock(),
                        "history of {name}: {} snapshots, {}; {} rows in the table ({})",
                        versions.len(),
                        match write_mode {
                            strata_pipeline::history::WriteMode::CopyOnWrite => "copy-on-write",
                            strata_pipeline::history::WriteMode::EqualityDeletes =>
                                "merge-on-read, equality deletes",
                            _ => "merge-on-read",
                        },
                        last.map_or(0, |c| c.total_rows),
                        last.map_or_else(String::new, |c| c.metadata.display().to_string())
                    )?;
                }
            }
        }
        Tables::Delta(tables) if part.count > 1 && args.snapshots.is_none() => {
            let staged = flow.stage_delta(tables, &summaries, part)?;
            if !args.quiet {
                for (dir, f) in tables.dirs.iter().zip(&staged) {
                    writeln!(
                        std::io::stdout().lock(),
                        "staged part {} of {} of delta table {dir} ({}); once every part is written: strata table commit {dir}",
                        part.index,
                        part.count,
                        f.display(),
                    )?;
                }
            }
        }
        Tables::Delta(tables) => {
            let committed = flow.commit_delta(tables, &summaries)?;
            if !args.quiet {
                for (dir, c) in tables.dirs.iter().zip(&committed) {
                    crate::table::print_delta_committed(&dir.root(), c)?;
                }
            }
            for (name, versions) in
                flow.commit_history_delta(tables, &summaries, &committed, write_mode)?
            {
                if !args.quiet {
                    writeln!(
                        std::io::stdout().lock(),
                        "history of {name}: {} versions (MERGE), {}, the last {}",
                        versions.len(),
                        if write_mode == strata_pipeline::history::WriteMode::DeletionVectors {
                            "deletion vectors"
                        } else {
                            "copy-on-write"
                        },
                        versions.last().map_or(0, |c| c.version)
                    )?;
                }
                versions.iter().for_each(crate::table::warn_checkpoint);
            }
            committed.iter().for_each(crate::table::warn_checkpoint);
        }
    }
    // A table's history: the change stream of every version after the
    // one just written.
    if matches!(tables, Tables::None) {
        let format = match args.stream_format.as_deref() {
            Some(f) => f.parse()?,
            None => strata_pipeline::history::StreamFormat::Parquet,
        };
        for w in flow.write_streams(part, format)? {
            if args.quiet {
                continue;
            }
            let mut out = std::io::stdout().lock();
            for (v, (file, rows, c)) in w.versions.iter().enumerate() {
                if !w.own {
                    writeln!(
                        out,
                        "changes of {} version {} (its rows follow their parent rows'): {} rows in {}",
                        w.table,
                        v + 1,
                        rows,
                        file.display()
                    )?;
                    continue;
                }
                writeln!(
                    out,
                    "changes of {} version {}: {} inserts, {} updates, {} deletes of {} rows alive before ({} rows in {})",
                    w.table,
                    v + 1,
                    c.inserts,
                    c.updates,
                    c.deletes,
                    c.alive_before,
                    rows,
                    file.display()
                )?;
            }
            if w.own {
                writeln!(
                    out,
                    "changes of {}: {:.1}% of the updates and deletes fall on the hottest 1% of rows",
                    w.table,
                    100.0 * w.hot_share
                )?;
            }
            writeln!(
                out,
                "changes of {}: slowly changing dimension, {} rows ({})",
                w.table,
                w.scd2.1,
                w.scd2.0.display()
            )?;
        }
    }
    if !args.quiet {
        for ((g, _), s) in flow.jobs().iter().zip(&summaries) {
            if flow.is_dataset() {
                writeln!(std::io::stdout().lock(), "table {}:", g.name())?;
            }
            print_summary(s)?;
        }
    }
    if args.verify_distribution {
        let (mut off, mut checks) = (0, 0);
        let mut layout_failures = 0;
        for ((&i, s), (g, cfg)) in flow.tables().iter().zip(&summaries).zip(flow.jobs()) {
            let spec = &flow.dataset().tables[i].spec;
            let table = flow.is_dataset().then_some(spec.name.as_str());
            let layout = cfg.layout.as_ref().filter(|l| l.own_path());
            // Identity partition columns left out of the files are checked
            // by the layout check (their values are the directories').
            let mut shown = spec.clone();
            if let Some(l) = layout {
                let dropped = l.dropped_columns();
                shown.fields.retain(|f| !dropped.contains(&f.name.as_str()));
            }
            let (o, c) = verify(&shown, s, table)?;
            off += o;
            checks += c;
            if let Some(l) = layout {
                let check = strata_pipeline::layout::check_layout(
                    l,
                    &g.schema(),
                    &cfg.output_dir,
                    &s.files,
                )?;
                write!(std::io::stdout().lock(), "{check}")?;
                layout_failures += check.failures();
            }
        }
        fail_if_off(off, checks)?;
        anyhow::ensure!(
            layout_failures == 0,
            "{layout_failures} layout check(s) failed"
        );
    }
    if let Some(path) = &args.report
        && part.index == part.count
    {
        write_report(args, &flow, path)?;
    }
    Ok(())
}

/// `--report`: the page of what the run wrote, against its spec.
fn write_report(args: &GenerateArgs, flow: &Flow, path: &std::path::Path) -> Result<()> {
    let Some((_, cfg)) = flow.jobs().first() else {
        return Ok(());
    };
    // A dataset's tables are in directories of the run's output directory.
    let dir = match cfg.output_dir.parent() {
        Some(parent) if flow.is_dataset() => parent.display().to_string(),
        _ => cfg.output_dir.display().to_string(),
    };
    let report = strata_report::collect(
        std::slice::from_ref(&dir),
        &strata_report::Options {
            spec: Some(flow.dataset().clone()),
            store: args.store.config(),
            title: None,
        },
    )?;
    crate::report::write(&report, path, None, args.overwrite)?;
    let flagged = report.summary.iter().filter(|r| r.flagged).count();
    if !args.quiet {
        println!(
            "report written to {} ({flagged} of {} checks against the spec flagged)",
            path.display(),
            report.summary.len()
        );
    }
    Ok(())
}

/// The run the flags ask for: the spec's one table, or the `--tables`
/// of a dataset of several at `--scale`, with the flags' settings. The
/// flags that apply to only one of the two are refused for the other.
fn flow(
    args: &GenerateArgs,
    dataset: Dataset,
    part: strata_pipeline::generate::Part,
) -> Result<Flow> {
    if !dataset.multi_table {
        anyhow::ensure!(
            args.scale.is_none() && args.tables.is_none(),
            "--scale and --tables apply to a spec of several `[[tables]]`; this one has one table (set its rows with --target-records)"
        );
        let cfg = config(args, &dataset.tables[0].spec, part);
        let mut flow = Flow::new(dataset, &[0], &cfg, 1.0)?;
        flow.set_layouts(&args.layout.flags())?;
        return Ok(flow);
    }
    anyhow::ensure!(
        args.target_records.is_none(),
        "--target-records: the tables of dataset `{}` set their own rows; scale them with --scale",
        dataset.name
    );
    anyhow::ensure!(
        args.output_filename.is_none(),
        "--output-filename: each table's files are named after the table"
    );
    let chosen = chosen_tables(args, &dataset)?;
    let cfg = config(args, &dataset.tables[chosen[0]].spec, part);
    let mut flow = Flow::new(dataset, &chosen, &cfg, args.scale.unwrap_or(1.0))?;
    flow.set_layouts(&args.layout.flags())?;
    Ok(flow)
}

/// The indices of the `--tables` of `dataset` (each once, in the order
/// given), or of all its tables.
fn chosen_tables(args: &GenerateArgs, dataset: &Dataset) -> Result<Vec<usize>> {
    let Some(list) = &args.tables else {
        return Ok((0..dataset.tables.len()).collect());
    };
    let mut chosen = Vec::new();
    for name in list {
        let i = dataset.table(name).ok_or_else(|| {
            let names: Vec<&str> = dataset
                .tables
                .iter()
                .map(|t| t.spec.name.as_str())
                .collect();
            anyhow::anyhow!(
                "--tables: dataset `{}` has no table `{name}`; its tables are {}",
                dataset.name,
                names.join(", ")
            )
        })?;
        if !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    Ok(chosen)
}

/// `value` as pretty JSON on standard output.
fn print_json(value: &impl serde::Serialize) -> Result<()> {
    writeln!(
        std::io::stdout().lock(),
        "{}",
        serde_json::to_string_pretty(value)?
    )?;
    Ok(())
}

/// `value` as pretty JSON into a pending file for `p`, written and synced
/// but not yet visible.
fn pending_json(
    p: &Path,
    value: &impl serde::Serialize,
) -> Result<PendingFile, strata_pipeline::Error> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| strata_pipeline::Error::InvalidConfig(e.to_string()))?
        + "\n";
    Ok(strata_store::output::write_pending(
        p,
        text.as_bytes(),
        true,
        true,
    )?)
}

/// Set on Ctrl-C or SIGTERM.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Set while the pipeline runs (it then removes its own unfinished
/// outputs and returns) until its outputs are all in place.
static RUNNING: AtomicBool = AtomicBool::new(false);
/// Set once the outputs are in place.
static PUBLISHED: AtomicBool = AtomicBool::new(false);
/// Held by whoever reports the interrupt and exits.
static EXITING: Mutex<()> = Mutex::new(());

/// The signal handler: while the pipeline runs it only raises the flag
/// (the run stops, removes its unfinished outputs and reports); otherwise
/// it reports and exits at once.
fn on_interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    if !RUNNING.load(Ordering::SeqCst) {
        exit_interrupted();
    }
}

/// Reports the interrupt on one line and exits with status 130.
fn exit_interrupted() -> ! {
    let _once = EXITING.lock();
    if PUBLISHED.load(Ordering::SeqCst) {
        eprintln!("strata: interrupted; the outputs were already complete and are kept");
    } else {
        eprintln!("strata: interrupted; unfinished outputs removed");
    }
    std::process::exit(i32::from(crate::exit::INTERRUPTED));
}

/// The pipeline's options: the S3 flags, the interrupt flag, and `step`
/// before the files appear.
fn run_options<'a>(
    args: &GenerateArgs,
    step: impl FnMut(&[Summary]) -> Result<(), strata_pipeline::Error> + 'a,
) -> RunOptions<'a> {
    RunOptions {
        store: args.store.config(),
        interrupt: Some(&INTERRUPTED),
        before_publish: Some(Box::new(step)),
    }
}

/// After the pipeline: the summary JSON made visible (if it cannot be,
/// the data files `files` lists are removed again), then an interrupt
/// reported.
fn finish_run<T>(
    result: Result<T, strata_pipeline::Error>,
    json: Option<PendingFile>,
    files: impl Fn(&T) -> Vec<PathBuf>,
) -> Result<T> {
    let result = result.map_err(anyhow::Error::from).and_then(|r| {
        if let Some(j) = json
            && let Err(e) = j.commit()
        {
            for f in files(&r) {
                let _ = std::fs::remove_file(f);
            }
            return Err(anyhow::Error::from(e).context("the generated files were removed again"));
        }
        Ok(r)
    });
    if result.is_ok() {
        PUBLISHED.store(true, Ordering::SeqCst);
    }
    RUNNING.store(false, Ordering::SeqCst);
    if INTERRUPTED.load(Ordering::SeqCst) {
        exit_interrupted();
    }
    result
}

/// Checks the files of `summary` against `spec` and prints the report
/// (under `table NAME:` for a table of a dataset); returns the suspicious
/// checks and all checks.
fn verify(spec: &Spec, summary: &Summary, table: Option<&str>) -> Result<(usize, usize)> {
    let files: Vec<String> = summary
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    let report = strata_pipeline::verify::verify_distribution(spec, &files)?;
    let mut out = std::io::stdout().lock();
    match table {
        None => write!(out, "{report}")?,
        Some(t) => writeln!(out, "table {t}:\n{report}")?,
    }
    Ok((report.suspicious().len(), report.checks.len()))
}

/// An error when `off` of the `checks` distribution checks are suspicious.
pub(crate) fn fail_if_off(off: usize, checks: usize) -> Result<()> {
    if off > 0 {
        return Err(crate::exit::CheckFailed(format!(
            "{off} of {checks} distribution checks are more than {} standard errors from the spec",
            strata_pipeline::verify::SUSPICIOUS_Z
        ))
        .into());
    }
    Ok(())
}

fn print_summary(s: &Summary) -> std::io::Result<()> {
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
        s.cpu_s
    )?;
    if let Some(p) = s.partitions {
        return print_partitions(&mut out, s, p);
    }
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

/// A partitioned run's files by partition: counts, and the largest
/// partitions.
fn print_partitions(out: &mut impl Write, s: &Summary, partitions: usize) -> std::io::Result<()> {
    let mut by: std::collections::BTreeMap<&Path, (u64, u64, usize)> = Default::default();
    for f in &s.files {
        let e = by
            .entry(f.path.parent().unwrap_or(Path::new("")))
            .or_default();
        e.0 += f.rows;
        e.1 += f.bytes;
        e.2 += 1;
    }
    writeln!(
        out,
        "{partitions} partition(s), {} file(s), {:.1} files per partition",
        s.files.len(),
        s.files.len() as f64 / partitions.max(1) as f64
    )?;
    let mut largest: Vec<_> = by.into_iter().collect();
    largest.sort_by(|a, b| b.1.1.cmp(&a.1.1).then_with(|| a.0.cmp(b.0)));
    for (dir, (rows, bytes, files)) in largest.iter().take(5) {
        writeln!(
            out,
            "  {}  {rows} rows  {bytes} bytes  {files} file(s)",
            dir.display()
        )?;
    }
    if largest.len() > 5 {
        writeln!(out, "  ... and {} more", largest.len() - 5)?;
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

/// Keeps freed batch buffers in the heap for the next batch. A column of
/// 8,192 decimals (128 KiB) or strings is past glibc's initial mmap
/// threshold, so each was mapped afresh and unmapped on free, faulting in
/// its pages every batch: `exc_page_fault` and `clear_page_erms` were
/// 5.7% of the samples of a spec with five expression fields. With blocks
/// up to 32 MiB from the heap and 128 MiB kept before trimming, that spec
/// went from 5.3-6.2 to 6.8-8.3 M rows/s, and `contacts` from 7.5-8.2 to
/// 8.1-8.5 (2 cores, 2-4M rows, three runs each).
fn keep_batch_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets glibc's allocator parameters (valid
    // ones, with valid values); allocations made before and after stay
    // valid, and glibc takes its own locks.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
    }
}

/// Where a run's rows start (`--row-offset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowOffset {
    /// At this global row.
    At(u64),
    /// After the rows the table already holds.
    Append,
}

fn parse_row_offset(s: &str) -> Result<RowOffset, String> {
    if s.trim() == "append" {
        return Ok(RowOffset::Append);
    }
    s.trim()
        .parse()
        .map(RowOffset::At)
        .map_err(|_| format!("expected a row number or `append`, not '{s}'"))
}
