//! What a run measures and how: the suites, input sizes, settings, and the context a result records.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{CounterMode, Error, Thresholds};

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
    /// `strata sort` in memory and external, against DuckDB and pyarrow.
    Sort,
    /// `strata infer` over lineitem-shaped Parquet, against DuckDB's
    /// `SUMMARIZE`.
    Infer,
    /// `strata report` over the `contacts` output, against DuckDB's
    /// `SUMMARIZE`.
    Report,
}

impl Suite {
    /// Every suite, in report order.
    pub const ALL: [Suite; 8] = [
        Suite::Pipeline,
        Suite::Row,
        Suite::Scan,
        Suite::Compact,
        Suite::ParquetColumn,
        Suite::Sort,
        Suite::Infer,
        Suite::Report,
    ];

    /// The suite's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Pipeline => "pipeline",
            Suite::Row => "row",
            Suite::Scan => "scan",
            Suite::Compact => "compact",
            Suite::ParquetColumn => "parquet-column",
            Suite::Sort => "sort",
            Suite::Infer => "infer",
            Suite::Report => "dataset-report",
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
    /// The reference program `parquet-nested-parallel` (built outside
    /// this repository), run beside `strata generate` in the pipeline
    /// suite when given.
    pub reference: Option<PathBuf>,
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
            reference: None,
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
