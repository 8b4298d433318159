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
    /// Output file: .parquet (zstd) or .arrow, .ipc, .feather (Arrow IPC).
    /// With --target-file-mb, a directory of Parquet files.
    #[arg(long, short, value_parser = crate::common::local_output)]
    output: PathBuf,
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
    // Ctrl-C or SIGTERM: remove the spill directory and this process's
    // unfinished outputs (hidden temporaries until complete), then exit.
    let on_signal = progress.clone();
    let output = args.output.clone();
    let _ = ctrlc::set_handler(move || {
        let dir = on_signal.spill_dir.lock().ok().and_then(|d| d.clone());
        if let Some(d) = dir {
            // The sort's threads run on while this removes their files: a
            // run created between the listing and the last `rmdir` leaves
            // the directory in place, so remove again until it is gone
            // (once it is, no file can be created in it).
            for _ in 0..100 {
                let _ = std::fs::remove_dir_all(&d);
                if !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        remove_own_temporaries(&output);
        eprintln!("strata: interrupted; spill files and unfinished outputs removed");
        std::process::exit(130);
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
    };
    let summary = with_progress(&progress, args.quiet, || sort_file(&cfg))?;
    if !args.quiet {
        print_sort_summary(&cfg, &summary)?;
    }
    Ok(())
}

/// Removes the temporaries this process made for `output` (a file) or in
/// it (a directory of parts).
fn remove_own_temporaries(output: &std::path::Path) {
    let suffix = format!(
        ".{}{}",
        std::process::id(),
        strata_store::output::TEMP_SUFFIX
    );
    let (dir, prefix) = if output.is_dir() {
        (output.to_path_buf(), ".".to_string())
    } else {
        let name = output.file_name().map(|n| n.to_string_lossy().into_owned());
        let parent = output
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        (
            parent.to_path_buf(),
            format!(".{}.", name.unwrap_or_default()),
        )
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with(&prefix) && n.ends_with(&suffix) {
            let _ = std::fs::remove_file(e.path());
        }
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
