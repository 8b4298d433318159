//! One benchmark harness for strata's workloads.
//!
//! **What it does.** A suite (`pipeline`, `row`, `scan`, `compact`,
//! `parquet-column`) is a list of [`Case`]s: a piece of work, the
//! implementation doing it (`strata`, or a peer: arrow-row, the arrow-rs
//! IPC and Parquet readers, pyarrow, DuckDB), its throughput unit and the
//! code. Each case runs `runs` times after a warm-up; the run reports
//! median, minimum and maximum wall and CPU time, the throughput at the
//! median, the peers side by side, hardware counters (or why there are
//! none), cachegrind counts on request, and the change against a saved
//! baseline with a verdict that needs both a 5% change and a significant
//! Mann-Whitney test over the repeats.
//!
//! **Data flow.** [`Suite::cases`] builds the cases (generating their
//! input in memory or in a temporary directory) → [`run`] measures them
//! into a [`RunResult`] → [`report::markdown`] and JSON files, a saved
//! baseline under `OUT/baselines/NAME/`, and every run under `OUT/runs/`
//! → [`chart::trend`] draws SVG trend charts across saved runs.
//!
//! **The guarantee it keeps.** Nothing about the machine fails a run: a
//! counter the kernel refuses, a missing valgrind or a peer that is not
//! installed is reported as `unavailable: REASON` in its place. Results
//! carry the date, machine, commit and settings they were measured with.
//!
//! ```
//! use strata_bench::{Config, Suite, run};
//!
//! // The row suite at its smallest size, two repetitions, no counters.
//! let cfg = Config { runs: 2, size: strata_bench::Size::Tiny, ..Config::default() };
//! let result = run(Suite::Row, &cfg).unwrap();
//! assert!(result.cases.iter().any(|c| c.subject == "arrow-row"));
//! println!("{}", strata_bench::report::markdown(&result));
//! ```

pub mod cachegrind;
pub mod chart;
pub mod counters;
pub mod harness;
pub mod report;
pub mod stats;
pub mod suites;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use harness::{Body, Case, CaseResult, CounterMode, Sample, Unit};
pub use stats::{Comparison, Summary, Thresholds, Verdict};

/// What went wrong.
#[derive(Debug)]
pub enum Error {
    /// A file could not be read or written.
    Io {
        /// What was being done.
        what: String,
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A saved run or baseline is not valid JSON of a run.
    BadResults {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `--baseline NAME` names no saved baseline for the suite.
    NoBaseline {
        /// The baseline.
        name: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// An unknown suite, size, metric or other setting.
    Usage(String),
    /// A case's own work failed (generating, encoding, reading).
    Case(String),
    /// A chart could not be drawn.
    Chart(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { what, path, source } => {
                write!(f, "cannot {what} {}: {source}", path.display())
            }
            Error::BadResults { path, reason } => {
                write!(
                    f,
                    "{} is not a saved benchmark run: {reason}",
                    path.display()
                )
            }
            Error::NoBaseline { name, path } => write!(
                f,
                "no baseline `{name}`: {} does not exist (save one with --save-baseline {name})",
                path.display()
            ),
            Error::Usage(m) | Error::Case(m) | Error::Chart(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Wraps any displayable error of a case's work.
pub fn case_err(e: impl fmt::Display) -> Error {
    Error::Case(e.to_string())
}

fn io_err(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let (what, path) = (what.to_string(), path.to_path_buf());
    move |source| Error::Io { what, path, source }
}

/// The suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Suite {
    /// `strata generate` end to end: contacts to Parquet files.
    Pipeline,
    /// Row encoding against arrow-row.
    Row,
    /// Projected reads of IPC and Parquet files against arrow-rs readers.
    Scan,
    /// The compaction planner and the k-way merge.
    Compact,
    /// Seed 002's Int64 column matrix, parquet-rs against Arrow C++.
    ParquetColumn,
}

impl Suite {
    /// Every suite, in report order.
    pub const ALL: [Suite; 5] = [
        Suite::Pipeline,
        Suite::Row,
        Suite::Scan,
        Suite::Compact,
        Suite::ParquetColumn,
    ];

    /// The suite's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Pipeline => "pipeline",
            Suite::Row => "row",
            Suite::Scan => "scan",
            Suite::Compact => "compact",
            Suite::ParquetColumn => "parquet-column",
        }
    }

    /// The suite named `name`.
    pub fn parse(name: &str) -> Result<Suite, Error> {
        Suite::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "unknown suite `{name}`; the suites are {}",
                    Suite::ALL.map(Suite::name).join(", ")
                ))
            })
    }

    /// The suite's cases at `cfg`'s size.
    pub fn cases(self, cfg: &Config) -> Result<Vec<Case>, Error> {
        match self {
            Suite::Pipeline => suites::pipeline::cases(cfg),
            Suite::Row => suites::row::cases(cfg),
            Suite::Scan => suites::scan::cases(cfg),
            Suite::Compact => suites::compact::cases(cfg),
            Suite::ParquetColumn => suites::parquet_column::cases(cfg),
        }
    }
}

/// How big a suite's inputs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// Seconds for every suite: for tests.
    Tiny,
    /// The sizes the suites are designed for (seed 002's exact matrix).
    Full,
}

impl Size {
    /// `tiny` or `full`.
    pub fn parse(s: &str) -> Result<Size, Error> {
        match s {
            "tiny" => Ok(Size::Tiny),
            "full" => Ok(Size::Full),
            _ => Err(Error::Usage(format!(
                "unknown size `{s}`; use tiny or full"
            ))),
        }
    }
}

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Timed repetitions per case (5 is the least that can show a
    /// significant change).
    pub runs: usize,
    /// Untimed runs before them.
    pub warmup: usize,
    /// Input sizes.
    pub size: Size,
    /// Counters to collect.
    pub counters: CounterMode,
    /// Only cases whose `name@subject` contains this.
    pub filter: Option<String>,
    /// The Python with pyarrow and DuckDB for the peers (`python3` when
    /// `None`); peers it cannot import are reported unavailable.
    pub python: Option<PathBuf>,
    /// Whether to run the peers in other processes (pyarrow, DuckDB).
    pub peers: bool,
    /// Whether small cases may repeat their work within one timed
    /// iteration (off for cachegrind re-runs, which count one repetition).
    pub calibrate: bool,
    /// For `CounterMode::Cachegrind`: the command that re-runs this suite
    /// (program and arguments before the case selection), normally the
    /// running `strata bench SUITE ...`.
    pub relaunch: Option<(PathBuf, Vec<String>)>,
    /// Thresholds of the baseline verdicts.
    pub thresholds: Thresholds,
    /// Print each case's line as it finishes (to stderr).
    pub progress: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            runs: 5,
            warmup: 1,
            size: Size::Full,
            counters: CounterMode::Off,
            filter: None,
            python: None,
            peers: true,
            calibrate: true,
            relaunch: None,
            thresholds: Thresholds::default(),
            progress: false,
        }
    }
}

impl Config {
    /// Whether the case `name@subject` passes the filter (suites skip the
    /// costly set-up of cases that do not).
    pub fn wants(&self, name: &str, subject: &str) -> bool {
        self.filter
            .as_deref()
            .is_none_or(|f| format!("{name}@{subject}").contains(f))
    }
}

/// Where and on what a run was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// UTC, `YYYY-MM-DD HH:MM:SS`.
    pub date: String,
    /// Seconds since the Unix epoch.
    pub timestamp: u64,
    /// CPU model, logical CPUs and kernel.
    pub machine: String,
    /// `git rev-parse --short=12 HEAD` where run (with `+dirty`), else
    /// `unknown`.
    pub commit: String,
    /// Repetitions, size and counter mode.
    pub runs: usize,
    /// See [`Config::size`].
    pub size: Size,
    /// See [`Config::counters`].
    pub counters: CounterMode,
    /// The baseline compared with, if any.
    pub baseline: Option<String>,
}

/// One suite's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The suite.
    pub suite: Suite,
    /// Where and how.
    pub context: Context,
    /// Every case, in suite order.
    pub cases: Vec<CaseResult>,
}

/// Runs `suite` with `cfg`.
pub fn run(suite: Suite, cfg: &Config) -> Result<RunResult, Error> {
    let cases = suite.cases(cfg)?;
    // Counter specs and the cachegrind scratch directory only in the modes
    // that use them.
    let specs = match cfg.counters {
        CounterMode::Auto => counters::default_specs(),
        _ => Vec::new(),
    };
    let cg_dir = match cfg.counters {
        CounterMode::Cachegrind => {
            Some(tempfile::tempdir().map_err(io_err("create a directory in", Path::new("/tmp")))?)
        }
        _ => None,
    };
    let mut results = Vec::new();
    for mut case in cases {
        if !cfg.wants(&case.name, &case.subject) {
            continue;
        }
        let id = case.id();
        let body = std::mem::replace(&mut case.body, Body::Unavailable(String::new()));
        let mut result = match body {
            Body::Unavailable(why) => CaseResult::unavailable(&case, &why),
            Body::Measured(samples) => CaseResult::from_samples(&case, samples),
            Body::InProcess(mut body) => {
                let mut set = (cfg.counters == CounterMode::Auto)
                    .then(|| counters::Set::open(&counters::Kernel, &specs));
                let k = case.repeats.max(1) as f64;
                let samples = harness::time_body(&mut body, cfg.runs, cfg.warmup, set.as_mut())?
                    .into_iter()
                    .map(|s| Sample {
                        wall: s.wall / k,
                        cpu: s.cpu / k,
                    })
                    .collect();
                let mut r = CaseResult::from_samples(&case, samples);
                if let Some(set) = set {
                    r.counters = set
                        .readings()
                        .into_iter()
                        .map(|(n, v)| match v {
                            counters::Reading::Value(x) if n != "ipc" => {
                                (n, counters::Reading::Value(x / k))
                            }
                            other => (n, other),
                        })
                        .collect();
                }
                if let Some(dir) = &cg_dir {
                    r.cachegrind = Some(cachegrind_case(cfg, &id, dir.path()));
                }
                r
            }
        };
        if result.unavailable.is_none() && result.samples.is_empty() {
            result.unavailable = Some("no samples".into());
        }
        if cfg.progress {
            eprintln!("{}", report::line(&result));
        }
        results.push(result);
    }
    Ok(RunResult {
        suite,
        context: context(cfg),
        cases: results,
    })
}

/// Runs the case `id` of `suite` `iterations` times with no timing and no
/// output: what a cachegrind re-run executes (0 iterations: the setup
/// alone). Peers are not run and small cases do not repeat their work, so
/// one iteration is one repetition.
pub fn run_inner(suite: Suite, cfg: &Config, id: &str, iterations: usize) -> Result<(), Error> {
    let cfg = Config {
        peers: false,
        calibrate: false,
        filter: Some(id.to_string()),
        ..cfg.clone()
    };
    let mut cases = suite.cases(&cfg)?;
    let case = cases
        .iter_mut()
        .find(|c| c.id() == id)
        .ok_or_else(|| Error::Usage(format!("suite {} has no case `{id}`", suite.name())))?;
    if let Body::InProcess(body) = &mut case.body {
        for _ in 0..iterations {
            body()?;
        }
    }
    Ok(())
}

fn cachegrind_case(cfg: &Config, id: &str, dir: &Path) -> Result<cachegrind::Cachegrind, String> {
    let Some((exe, args)) = &cfg.relaunch else {
        return Err("no command to re-run the case under valgrind".into());
    };
    let with = |n: usize| {
        let mut a = args.clone();
        a.extend([
            "--inner".into(),
            id.to_string(),
            "--inner-iterations".into(),
            n.to_string(),
        ]);
        a
    };
    // Two iterations minus one: a warm iteration, without the set-up and
    // without the first one's cold caches and lazy initialisation.
    let once = cachegrind::run(exe, &with(1), dir)?;
    let twice = cachegrind::run(exe, &with(2), dir)?;
    Ok(twice.minus(once))
}

fn context(cfg: &Config) -> Context {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Context {
        date: utc(now),
        timestamp: now,
        machine: machine(),
        commit: commit(),
        runs: cfg.runs,
        size: cfg.size,
        counters: cfg.counters,
        baseline: None,
    }
}

/// `YYYY-MM-DD HH:MM:SS` of Unix seconds (days to civil date by the
/// proleptic Gregorian calendar, in 400-year eras).
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .unwrap_or_else(|_| "unknown kernel".into());
    format!("{model}, {cpus} logical CPUs, Linux {kernel}")
}

fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{c}+dirty") } else { c }
        }
        None => "unknown".into(),
    }
}

/// The file of baseline `name` for `suite` under `out`.
pub fn baseline_path(out: &Path, name: &str, suite: Suite) -> PathBuf {
    out.join("baselines")
        .join(name)
        .join(format!("{}.json", suite.name()))
}

/// Reads a saved run.
pub fn load(path: &Path) -> Result<RunResult, Error> {
    let text = std::fs::read_to_string(path).map_err(io_err("read", path))?;
    serde_json::from_str(&text).map_err(|e| Error::BadResults {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Writes `text` to `path` through a temporary name in its directory.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), Error> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io_err("write in", dir))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io_err("write", path))?;
    tmp.persist(path).map_err(|e| Error::Io {
        what: "write".into(),
        path: path.to_path_buf(),
        source: e.error,
    })?;
    Ok(())
}

/// Saves `run` as JSON at `path`.
pub fn save(run: &RunResult, path: &Path) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(run).map_err(|e| Error::BadResults {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    write_atomic(path, &text)
}

/// Fills in each case's comparison with `baseline` (matched by name and
/// subject; cases it lacks get none).
pub fn compare_with(run: &mut RunResult, baseline: &RunResult, name: &str, t: Thresholds) {
    run.context.baseline = Some(format!(
        "{name} ({}, {})",
        baseline.context.commit, baseline.context.date
    ));
    for c in &mut run.cases {
        let Some(b) = baseline
            .cases
            .iter()
            .find(|b| b.name == c.name && b.subject == c.subject)
        else {
            continue;
        };
        let base: Vec<f64> = b.samples.iter().map(|s| s.wall).collect();
        let cur: Vec<f64> = c.samples.iter().map(|s| s.wall).collect();
        c.baseline = stats::compare(&base, &cur, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(utc(1_795_400_000), "2026-11-23 02:13:20");
        assert_eq!(utc(4_107_542_399), "2100-02-28 23:59:59");
    }

    #[test]
    fn suites_and_sizes_parse_or_say_what_exists() {
        for s in Suite::ALL {
            assert_eq!(Suite::parse(s.name()).unwrap(), s);
        }
        let e = Suite::parse("nope").unwrap_err().to_string();
        assert!(
            e.contains("pipeline, row, scan, compact, parquet-column"),
            "{e}"
        );
        assert!(Size::parse("huge").is_err());
    }
}
