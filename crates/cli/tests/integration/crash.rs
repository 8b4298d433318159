//! Crash sweeps: a command killed (SIGKILL) or interrupted (SIGINT) at
//! moments drawn from a fixed seed, over the span of an uninterrupted run.
//! After each try the glob of the output (what a user's query would read)
//! holds either what it held before or the complete result (the rows of an
//! uninterrupted run), and a rerun succeeds and gives the complete result.
//!
//! [`sweep`] is the harness; a command's sweep names its arguments, the
//! glob of its output and how to return to the starting state.

#![cfg(unix)]

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use strata_gen::rng::RowRng;
use strata_testkit::readback::{multiset_hash, read_batches, rows_as_text};

use crate::common::stderr;

/// The files a glob names: `pattern` is a path relative to `dir` whose
/// last component may hold one `*` (`out/*.parquet`, `out.parquet`).
/// As in a shell, `*` matches no hidden name (one that starts with `.`).
/// Sorted.
pub(crate) fn glob(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    let (parent, name) = match pattern.rsplit_once('/') {
        Some((p, n)) => (dir.join(p), n),
        None => (dir.to_path_buf(), pattern),
    };
    let Some((prefix, suffix)) = name.split_once('*') else {
        let p = parent.join(name);
        return if p.is_file() { vec![p] } else { Vec::new() };
    };
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (!n.starts_with('.') || prefix.starts_with('.'))
                && n.len() >= prefix.len() + suffix.len()
                && n.starts_with(prefix)
                && n.ends_with(suffix)
                && e.path().is_file()
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// What a glob holds: its file names, and the count and order-free
/// fingerprint of the rows in all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub(crate) names: Vec<String>,
    pub(crate) rows: usize,
    pub(crate) fingerprint: u64,
}

impl Snapshot {
    /// Reads every file `pattern` names in `dir` (a file that cannot be
    /// read is a failure: a reader of the glob would fail on it too).
    pub(crate) fn take(dir: &Path, pattern: &str) -> Snapshot {
        let files = glob(dir, pattern);
        let mut rows = Vec::new();
        for f in &files {
            let batches = read_batches(f).unwrap_or_else(|e| {
                panic!("{} in the glob {pattern} is unreadable: {e}", f.display())
            });
            rows.extend(rows_as_text(&batches).unwrap());
        }
        Snapshot {
            names: files
                .iter()
                .map(|f| f.strip_prefix(dir).unwrap().display().to_string())
                .collect(),
            rows: rows.len(),
            fingerprint: multiset_hash(&mut rows),
        }
    }

    /// The same rows (whatever the files are called).
    pub(crate) fn same_rows(&self, other: &Snapshot) -> bool {
        self.rows == other.rows && self.fingerprint == other.fingerprint
    }
}

/// One command's crash sweep.
pub(crate) struct Sweep<'a> {
    /// The sweep's name, in messages.
    pub(crate) name: &'a str,
    /// The directory the command runs in.
    pub(crate) dir: &'a Path,
    /// The command's arguments (after `strata`).
    pub(crate) args: &'a [&'a str],
    /// The arguments of a rerun over a complete output (with
    /// `--overwrite` where the command needs it).
    pub(crate) rerun_args: &'a [&'a str],
    /// The glob of the output, relative to `dir`.
    pub(crate) glob: &'a str,
    /// Tries (kills and interrupts together).
    pub(crate) tries: usize,
    /// The seed of the moments and signals.
    pub(crate) seed: u64,
    /// Returns `dir` to the state before the command (after a complete
    /// run); temporaries a killed run left are kept, for the next run to
    /// deal with.
    pub(crate) reset: &'a dyn Fn(&Path),
    /// Checks `dir` after each rerun (say, that it removed what the
    /// killed run left); the second argument describes the try.
    pub(crate) after_rerun: &'a dyn Fn(&Path, &str),
}

/// How one try ended, as the glob shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The glob holds what it held before the try.
    Nothing,
    /// The glob holds the complete result.
    Complete,
}

/// Runs `strata args` in `dir` to the end (at most `limit`); returns its
/// output.
fn run_to_end(dir: &Path, args: &[&str], limit: Duration) -> std::process::Output {
    let child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run strata");
    wait(child, limit)
}

/// Waits for `child` at most `limit`, then kills it and fails.
fn wait(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let end = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            panic!("strata ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

/// Sends `signal` (`INT` or `KILL`) to the process `pid`.
fn signal(pid: u32, signal: &str) {
    // The process may have ended already: `kill` then fails, which is
    // fine.
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// The sweep: one uninterrupted run gives the complete result and the
/// span the moments are drawn from (0 to 1.25 times its wall time), then
/// each try starts the command, signals it (SIGKILL or SIGINT, drawn) at
/// a drawn moment and checks the glob and a rerun. Returns each try's
/// signal and outcome. `check` sees each try's stderr, its exit status
/// and outcome (for a command's own message checks).
pub(crate) fn sweep(
    s: &Sweep<'_>,
    check: &dyn Fn(&str, Option<i32>, Outcome),
) -> Vec<(&'static str, Outcome)> {
    let limit = Duration::from_secs(120);
    let before = Snapshot::take(s.dir, s.glob);
    let t = Instant::now();
    let o = run_to_end(s.dir, s.args, limit);
    let span = t.elapsed();
    assert!(o.status.success(), "{}: {}", s.name, stderr(&o));
    let complete = Snapshot::take(s.dir, s.glob);
    assert!(
        complete.rows > 0,
        "{}: the complete run wrote no rows",
        s.name
    );
    assert_ne!(complete, before, "{}: the run changed nothing", s.name);
    (s.reset)(s.dir);
    assert_eq!(
        Snapshot::take(s.dir, s.glob),
        before,
        "{}: reset did not restore the start",
        s.name
    );
    let mut rng = RowRng::seeded(s.seed);
    let span_us = (span.as_micros() as u64).max(1) * 5 / 4;
    let mut seen = Vec::with_capacity(s.tries);
    for i in 0..s.tries {
        let delay = Duration::from_micros(rng.next_below(span_us));
        let sig = if rng.next_below(2) == 0 {
            "KILL"
        } else {
            "INT"
        };
        let child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(s.args)
            .current_dir(s.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run strata");
        std::thread::sleep(delay);
        signal(child.id(), sig);
        let o = wait(child, limit);
        let err = stderr(&o);
        let what = format!("{} try {i} (SIG{sig} at {delay:?}): {err}", s.name);
        let now = Snapshot::take(s.dir, s.glob);
        let outcome = if now == before {
            Outcome::Nothing
        } else if now.same_rows(&complete) {
            Outcome::Complete
        } else {
            panic!(
                "{what}: the glob {} holds {} rows in {:?}, neither what it held before \
                 ({} rows) nor the complete result ({} rows)",
                s.glob, now.rows, now.names, before.rows, complete.rows
            );
        };
        // Ended by the signal (SIGINT before a handler is set kills the
        // process), through the handler (130), or finished; never an
        // error of its own.
        let code = o.status.code();
        {
            use std::os::unix::process::ExitStatusExt;
            let by_signal = o.status.signal();
            let ok = match sig {
                "INT" => matches!(code, Some(0 | 130)) || by_signal == Some(2),
                _ => o.status.success() || by_signal == Some(9),
            };
            assert!(ok, "{what}: exit status {:?}", o.status);
        }
        check(&err, code, outcome);
        // A rerun succeeds and gives the complete result.
        let args = match outcome {
            Outcome::Nothing => s.args,
            Outcome::Complete => s.rerun_args,
        };
        let o = run_to_end(s.dir, args, limit);
        assert!(
            o.status.success(),
            "{what}: the rerun failed: {}",
            stderr(&o)
        );
        let after = Snapshot::take(s.dir, s.glob);
        assert!(
            after.same_rows(&complete),
            "{what}: the rerun gave {} rows in {:?}",
            after.rows,
            after.names
        );
        (s.after_rerun)(s.dir, &what);
        (s.reset)(s.dir);
        seen.push((if sig == "KILL" { "SIGKILL" } else { "SIGINT" }, outcome));
    }
    eprintln!("{}: {seen:?}", s.name);
    seen
}

/// Removes `out` (a file or a directory) under `dir`.
fn remove(dir: &Path, out: &str) {
    let p = dir.join(out);
    if p.is_dir() {
        std::fs::remove_dir_all(&p).unwrap();
    } else if p.exists() {
        std::fs::remove_file(&p).unwrap();
    }
}

/// `strata generate` killed or interrupted while writing four files.
#[test]
fn generate_is_all_or_nothing_when_killed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = [
        "generate",
        "--preset",
        "contacts",
        "--target-records",
        "60000",
        "--num-writers",
        "4",
        "--seed",
        "5",
        "--output-dir",
        "out",
        "-q",
    ];
    let mut rerun = args.to_vec();
    rerun.push("--overwrite");
    sweep(
        &Sweep {
            name: "generate",
            dir: d,
            args: &args,
            rerun_args: &rerun,
            glob: "out/*.parquet",
            tries: 20,
            seed: 4201,
            reset: &|d| remove(d, "out"),
            after_rerun: &|_, _| {},
        },
        &|_, _, _| {},
    );
}

/// Writes a sort sweep's input: `rows` rows of `preset` in two files in
/// `in/`.
fn sort_input(d: &Path, preset: &str, rows: u32) {
    let rows = rows.to_string();
    let o = run_to_end(
        d,
        &[
            "generate",
            "--preset",
            preset,
            "--target-records",
            &rows,
            "--num-writers",
            "2",
            "--seed",
            "3",
            "--output-dir",
            "in",
            "-q",
        ],
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A sort's message on SIGINT is true: "removed" only when nothing of the
/// output is visible, "kept" only when it is complete.
fn sort_message(err: &str, code: Option<i32>, outcome: Outcome) {
    if code == Some(130) {
        if err.contains("unfinished outputs removed") {
            assert_eq!(outcome, Outcome::Nothing, "{err}");
        } else {
            assert!(err.contains("is kept"), "{err}");
            assert_eq!(outcome, Outcome::Complete, "{err}");
        }
    }
}

/// A rerun of a sort removed what a killed sort left: its staging and
/// spill directories (named for the process, which is gone).
fn no_sort_leftovers(d: &Path, what: &str) {
    let hidden: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert_eq!(hidden, Vec::<String>::new(), "{what}");
}

/// `strata sort` into one Parquet file, spilling runs and merging them,
/// killed or interrupted.
#[test]
fn sort_to_a_file_is_all_or_nothing_when_killed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sort_input(d, "lineitem", 12_000);
    let args = [
        "sort",
        "in",
        "--by",
        "l_shipmode,l_orderkey:desc",
        "--memory-limit",
        "256KiB",
        "-o",
        "out.parquet",
        "-q",
    ];
    let mut rerun = args.to_vec();
    rerun.push("--overwrite");
    sweep(
        &Sweep {
            name: "sort to a file",
            dir: d,
            args: &args,
            rerun_args: &rerun,
            glob: "out.parquet",
            tries: 20,
            seed: 4202,
            reset: &|d| remove(d, "out.parquet"),
            after_rerun: &no_sort_leftovers,
        },
        &sort_message,
    );
}

/// `strata sort --target-file-mb` into a new directory of several part
/// files, killed or interrupted.
#[test]
fn sort_to_a_directory_is_all_or_nothing_when_killed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // About 3.2 MB of incompressible values: three or four part files.
    sort_input(d, "wide-u64", 8000);
    let args = [
        "sort",
        "in",
        "--by",
        "c07:desc",
        "--memory-limit",
        "8MiB",
        "--target-file-mb",
        "1",
        "--threads",
        "2",
        "-o",
        "out",
        "-q",
    ];
    let mut rerun = args.to_vec();
    rerun.push("--overwrite");
    sweep(
        &Sweep {
            name: "sort to a directory",
            dir: d,
            args: &args,
            rerun_args: &rerun,
            glob: "out/*.parquet",
            tries: 20,
            seed: 4203,
            reset: &|d| remove(d, "out"),
            after_rerun: &no_sort_leftovers,
        },
        &sort_message,
    );
}
