//! `strata sort`: flags to a [`SortConfig`], the sort, its summary.

use std::{io::Write, path::PathBuf};

use anyhow::Result;
use clap::Args;
use strata_sort::{ByteSize, SortConfig, SortKeys, SortSummary, sort_file};

use crate::common::parse;

#[derive(Args, Debug)]
pub(crate) struct SortArgs {
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

pub(crate) fn run(args: SortArgs) -> Result<()> {
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
