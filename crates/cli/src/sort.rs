//! `strata sort`: flags to a [`SortConfig`], the sort (in memory, or with
//! sorted runs spilled to disk and merged), a progress bar for its reading
//! and merging phases, its summary.

use std::{
    io::Write,
    path::PathBuf,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use anyhow::Result;
use clap::Args;
use strata_parquet::Compression;
use strata_sort::{ByteSize, SortConfig, SortKeys, SortProgress, SortSummary, sort_file};

use crate::common::{parse, progress_bar};

#[derive(Args, Debug)]
pub(crate) struct SortArgs {
    /// Inputs: Parquet or Arrow IPC files, or directories (their .parquet,
    /// .arrow, .ipc and .feather files, by name). All have one schema.
    #[arg(required = true, num_args = 1..)]
    inputs: Vec<PathBuf>,
    /// Sort keys, most significant first: `COL[:desc][:nulls_first|:nulls_last],...`.
    /// Each key is ascending with nulls first unless its suffixes say
    /// otherwise.
    #[arg(long, value_name = "KEYS", value_parser = parse::<SortKeys, _>)]
    by: SortKeys,
    /// Output file: .parquet, or .arrow, .ipc, .feather (Arrow IPC). With
    /// --target-file-mb, a directory of Parquet files. It appears only
    /// once the sort is complete.
    #[arg(long, short, value_parser = crate::common::local_output)]
    output: PathBuf,
    /// The output's codec, Parquet or IPC: none, snappy (Parquet only),
    /// lz4 or zstd, with zstd:LEVEL for a level from 1 to 22.
    #[arg(long, default_value = "zstd:1", value_parser = parse::<Compression, _>)]
    compression: Compression,
    /// Memory the sort may use: bytes, or with a unit KiB, MiB, GiB, KB,
    /// MB, GB. A larger input is sorted in runs spilled to disk and merged
    /// (Parquet output only).
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = parse::<ByteSize, _>)]
    memory_limit: ByteSize,
    /// Where sorted runs are spilled (a temporary directory inside it,
    /// removed at the end) [default: the output's directory].
    #[arg(long, value_name = "DIR")]
    spill_dir: Option<PathBuf>,
    /// Write a directory of Parquet files of about this many MB each,
    /// merged on all threads, instead of one file.
    #[arg(long, value_name = "MB", value_parser = clap::value_parser!(u64).range(1..))]
    target_file_mb: Option<u64>,
    /// Worker threads [default: the number of CPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Replace an existing output.
    #[arg(long)]
    overwrite: bool,
    /// No summary and no progress bar on the terminal.
    #[arg(long, short)]
    quiet: bool,
}

pub(crate) fn run(args: SortArgs) -> Result<()> {
    tune_malloc();
    let progress = Arc::new(SortProgress::default());
    // Ctrl-C or SIGTERM: the output is either published already (and
    // complete), or its staged files and the spill directory are removed
    // and it never will be; the message says which.
    let on_signal = progress.clone();
    let output = args.output.clone();
    let _ = ctrlc::set_handler(move || {
        if on_signal.interrupt() {
            eprintln!(
                "strata: interrupted after the sort was complete; {} is kept",
                output.display()
            );
        } else {
            eprintln!("strata: interrupted; spill files and unfinished outputs removed");
        }
        std::process::exit(i32::from(crate::exit::INTERRUPTED));
    });
    let cfg = SortConfig {
        inputs: args.inputs,
        output: args.output,
        keys: args.by.0,
        memory_limit: args.memory_limit.0,
        overwrite: args.overwrite,
        spill_dir: args.spill_dir,
        target_file_bytes: args.target_file_mb.map(|mb| mb.saturating_mul(1_000_000)),
        threads: args.threads.map_or(0, |t| t as usize),
        progress: Some(progress.clone()),
        compression: args.compression,
    };
    warn_below_floor(&cfg);
    let summary = match with_progress(&progress, args.quiet, || sort_file(&cfg)) {
        Ok(s) => s,
        // The signal handler removed the files the sort was writing, and
        // ends the process itself.
        Err(_) if progress.interrupted() => loop {
            std::thread::park();
        },
        Err(e) => return Err(e.into()),
    };
    if !args.quiet {
        print_sort_summary(&cfg, &summary)?;
    }
    Ok(())
}

/// Warns when `--memory-limit` is below what the sort can keep to
/// ([`strata_sort::memory_floor`]): it runs, but uses about the floor. An
/// input whose footer cannot be read is left to the sort to report.
fn warn_below_floor(cfg: &SortConfig) {
    let Ok(floor) = strata_sort::memory_floor(cfg) else {
        return;
    };
    if floor.total() > cfg.memory_limit {
        eprintln!(
            "strata: warning: --memory-limit {} is below the {} this sort needs whatever \
             its limit (the process {}, decoding the largest input row group {}, the output \
             writer {}); it will use about that much or more",
            ByteSize(cfg.memory_limit),
            ByteSize(floor.total()),
            ByteSize(floor.process),
            ByteSize(floor.read),
            ByteSize(floor.write),
        );
    }
}

/// Runs `f` while a bar shows the rows read, then the rows merged.
fn with_progress<T>(p: &SortProgress, quiet: bool, f: impl FnOnce() -> T + Send) -> T
where
    T: Send,
{
    let bar = progress_bar(0, quiet);
    let done = std::sync::atomic::AtomicBool::new(false);
    /// Stops the bar's thread however `f` ends (a panic included, which
    /// the scope would otherwise wait on forever).
    struct Stop<'a>(&'a std::sync::atomic::AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let merged = p.rows_merged.load(Ordering::Relaxed);
                if merged > 0 {
                    bar.set_message("merging");
                    bar.set_length(p.rows_to_merge.load(Ordering::Relaxed).max(merged));
                    bar.set_position(merged);
                } else {
                    bar.set_length(p.input_rows.load(Ordering::Relaxed));
                    bar.set_position(p.rows_read.load(Ordering::Relaxed));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let stop = Stop(&done);
        let out = f();
        drop(stop);
        bar.finish_and_clear();
        out
    })
}

fn print_sort_summary(cfg: &SortConfig, s: &SortSummary) -> std::io::Result<()> {
    let keys: Vec<String> = cfg.keys.iter().map(|k| k.to_string()).collect();
    let inputs: Vec<String> = cfg.inputs.iter().map(|p| p.display().to_string()).collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "sorted {} rows by {} in {:.3} s",
        s.rows,
        keys.join(","),
        s.elapsed_s
    )?;
    let files = match s.output_files.len() {
        1 => String::new(),
        n => format!(", {n} files"),
    };
    writeln!(
        out,
        "  {} ({}, {} bytes) -> {} ({}, {} bytes{files})",
        inputs.join(" "),
        s.input_format,
        s.input_bytes,
        cfg.output.display(),
        s.output_format,
        s.output_bytes
    )?;
    if s.runs == 0 {
        writeln!(
            out,
            "  in memory: read {:.3} s, encode {:.3} s, sort {:.3} s, gather {:.3} s, write {:.3} s",
            s.read_s, s.encode_s, s.sort_s, s.gather_s, s.write_s
        )?;
        writeln!(
            out,
            "  memory estimate {} (limit {})",
            ByteSize(s.memory_estimate),
            ByteSize(cfg.memory_limit)
        )?;
    } else {
        writeln!(
            out,
            "  external: read and sort {} runs {:.3} s ({} spilled), merge {:.3} s ({} levels before the last)",
            s.runs,
            s.read_s,
            ByteSize(s.spill_bytes),
            s.write_s,
            s.merge_levels
        )?;
    }
    if let Some(rss) = s.peak_rss {
        writeln!(
            out,
            "  peak resident memory {} (limit {})",
            ByteSize(rss),
            ByteSize(cfg.memory_limit)
        )?;
    }
    Ok(())
}

/// Tunes glibc's allocator for the sort, for the threads started from
/// here on; each setting was measured on 8M `events` rows sorted at
/// `--memory-limit 100MiB` on 2 threads (`benches/results/sort.md`):
/// - Two arenas. With an arena per thread, memory one thread freed stayed
///   in its arena while the others took fresh memory (peak RSS 254 MB
///   with 8 arenas); with one, the threads queue for its lock (50,288
///   context switches, against 6,663 with two, and 14.3 s against 12.1 s
///   at the same peak RSS of 156-159 MB).
/// - Blocks up to 256 MiB come from the heap and freed memory stays there
///   (mmap and trim thresholds). Above glibc's adaptive mmap threshold
///   every block was mapped afresh and unmapped on free, so per-run and
///   per-batch buffers were faulted in page by page again and again:
///   183k page faults against 36k, at about 19 us each on this VM.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets glibc's allocator parameters (valid
    // ones, with valid values); allocations made before and after stay
    // valid, and glibc takes its own locks.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}
