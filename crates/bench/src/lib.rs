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
mod config;
pub mod counters;
mod error;
pub mod harness;
pub mod report;
mod results;
pub mod stats;
pub mod suites;

use std::path::{Path, PathBuf};

pub use config::{Config, Context, Size, Suite};
use error::io_err;
pub use error::{Error, case_err};
pub use harness::{Body, Case, CaseResult, CounterMode, Sample, Unit};
pub use results::{RunResult, load, save, utc, write_atomic};
pub use stats::{Comparison, Summary, Thresholds, Verdict};

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
    // The wanted cases, staged bodies unpacked into their setup and an
    // in-process body.
    let mut pending: Vec<Pending> = cases
        .into_iter()
        .filter(|c| cfg.wants(&c.name, &c.subject))
        .map(|mut case| {
            let body = std::mem::replace(&mut case.body, Body::Unavailable(String::new()));
            let (setup, body) = match body {
                Body::Staged { setup, run } => (Some(setup), Body::InProcess(run)),
                other => (None, other),
            };
            Pending { case, setup, body }
        })
        .collect();
    let mut results = Vec::new();
    let mut at = 0;
    while at < pending.len() {
        // In-process subjects of one case (adjacent, same name) are timed
        // together, their runs interleaved.
        let in_process = |p: &Pending| matches!(p.body, Body::InProcess(_));
        let mut end = at + 1;
        if in_process(&pending[at]) {
            while end < pending.len()
                && in_process(&pending[end])
                && pending[end].case.name == pending[at].case.name
            {
                end += 1;
            }
        }
        let group = &mut pending[at..end];
        let measured = if in_process(&group[0]) {
            measure_group(group, cfg, &specs, cg_dir.as_ref().map(|d| d.path()))?
        } else {
            let p = &mut group[0];
            let body = std::mem::replace(&mut p.body, Body::Unavailable(String::new()));
            vec![match body {
                Body::Unavailable(why) => CaseResult::unavailable(&p.case, &why),
                Body::Measured(samples) => CaseResult::from_samples(&p.case, samples),
                Body::Staged { .. } | Body::InProcess(_) => {
                    CaseResult::unavailable(&p.case, "an in-process body left unmeasured")
                }
            }]
        };
        for mut result in measured {
            if result.unavailable.is_none() && result.samples.is_empty() {
                result.unavailable = Some("no samples".into());
            }
            if cfg.progress {
                eprintln!("{}", report::line(&result));
            }
            results.push(result);
        }
        at = end;
    }
    Ok(RunResult {
        suite,
        context: context(cfg),
        cases: results,
    })
}

/// A case to run, its staged body unpacked.
struct Pending {
    case: Case,
    setup: Option<Box<dyn FnMut() -> Result<(), Error>>>,
    body: Body,
}

/// Times the in-process bodies of `group` (subjects of one case), their
/// runs interleaved, and returns their results in order: samples and
/// counters per repetition of the work, and cachegrind's counts in that
/// mode.
fn measure_group(
    group: &mut [Pending],
    cfg: &Config,
    specs: &[counters::Spec],
    cg_dir: Option<&Path>,
) -> Result<Vec<CaseResult>, Error> {
    let mut sets: Vec<Option<counters::Set>> = group
        .iter()
        .map(|_| {
            (cfg.counters == CounterMode::Auto)
                .then(|| counters::Set::open(&counters::Kernel, specs))
        })
        .collect();
    let samples = {
        let mut timed: Vec<harness::Timed<'_>> = Vec::with_capacity(group.len());
        for (p, set) in group.iter_mut().zip(sets.iter_mut()) {
            let Body::InProcess(body) = &mut p.body else {
                return Err(Error::Usage(
                    "a group holds a body that is not in-process".into(),
                ));
            };
            timed.push(harness::Timed {
                body: body.as_mut(),
                setup: p
                    .setup
                    .as_mut()
                    .map(|f| f.as_mut() as &mut dyn FnMut() -> Result<(), Error>),
                counters: set.as_mut(),
            });
        }
        harness::time_bodies(&mut timed, cfg.runs, cfg.warmup)?
    };
    let mut out = Vec::with_capacity(group.len());
    for ((p, set), samples) in group.iter().zip(sets).zip(samples) {
        let k = p.case.repeats.max(1) as f64;
        let samples = samples
            .into_iter()
            .map(|s| Sample {
                wall: s.wall / k,
                cpu: s.cpu / k,
            })
            .collect();
        let mut r = CaseResult::from_samples(&p.case, samples);
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
        if let Some(dir) = cg_dir {
            r.cachegrind = Some(cachegrind_case(cfg, &p.case.id(), dir));
        }
        out.push(r);
    }
    Ok(out)
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
    match &mut case.body {
        Body::InProcess(body) => {
            for _ in 0..iterations {
                body()?;
            }
        }
        Body::Staged { setup, run } => {
            for _ in 0..iterations {
                setup()?;
                run()?;
            }
        }
        Body::Measured(_) | Body::Unavailable(_) => {}
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
            e.contains("pipeline, row, scan, compact, parquet-column, sort"),
            "{e}"
        );
        assert!(Size::parse("huge").is_err());
    }
}
