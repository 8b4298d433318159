//! Cases, how one is measured, and the results a run keeps.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::cachegrind::Cachegrind;
use crate::counters::{self, Reading};
use crate::stats::{Comparison, Summary};

/// What a case's throughput counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Bytes (shown as MiB/s).
    Bytes,
    /// Rows (shown as M rows/s).
    Rows,
    /// Values (shown as M values/s).
    Values,
    /// Other items, named by the case (shown as k items/s).
    Items,
}

impl Unit {
    /// The rate's label and divisor.
    pub fn rate(self) -> (&'static str, f64) {
        match self {
            Unit::Bytes => ("MiB/s", 1024.0 * 1024.0),
            Unit::Rows => ("M rows/s", 1e6),
            Unit::Values => ("M values/s", 1e6),
            Unit::Items => ("k items/s", 1e3),
        }
    }
}

/// One timed repetition, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Wall-clock time.
    pub wall: f64,
    /// CPU time of the process (user + system), all threads.
    pub cpu: f64,
}

/// The code a case times.
pub enum Body {
    /// One iteration of the work, run here.
    InProcess(Box<dyn FnMut() -> Result<(), Error>>),
    /// The same, with `setup` run untimed before every iteration (e.g.
    /// emptying the output directory of a case that writes files, so the
    /// previous run's files are not torn down in this run's window).
    Staged {
        /// Untimed preparation.
        setup: Box<dyn FnMut() -> Result<(), Error>>,
        /// The timed iteration.
        run: Box<dyn FnMut() -> Result<(), Error>>,
    },
    /// Samples a peer measured in its own process (pyarrow, DuckDB).
    Measured(Vec<Sample>),
    /// A peer that is not installed, and why.
    Unavailable(String),
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Body::InProcess(_) => f.write_str("InProcess"),
            Body::Staged { .. } => f.write_str("Staged"),
            Body::Measured(s) => f.debug_tuple("Measured").field(&s.len()).finish(),
            Body::Unavailable(w) => f.debug_tuple("Unavailable").field(w).finish(),
        }
    }
}

/// A measured piece of work by one implementation ("subject"): cases with
/// the same name and different subjects are shown side by side.
#[derive(Debug)]
pub struct Case {
    /// The work, e.g. `encode/u64x50` (the same for every subject).
    pub name: String,
    /// Who does it: `strata`, `arrow-row`, `pyarrow`, ...
    pub subject: String,
    /// What `work` counts.
    pub unit: Unit,
    /// Units of work per repetition.
    pub work: f64,
    /// Repetitions of the work in one run of `body` (samples and counters
    /// are divided by it, so that they are per repetition).
    pub repeats: u64,
    /// The code.
    pub body: Body,
}

impl Case {
    /// A case run in this process.
    pub fn new(
        name: impl Into<String>,
        subject: impl Into<String>,
        unit: Unit,
        work: f64,
        body: impl FnMut() -> Result<(), Error> + 'static,
    ) -> Case {
        Case {
            name: name.into(),
            subject: subject.into(),
            unit,
            work,
            repeats: 1,
            body: Body::InProcess(Box::new(body)),
        }
    }

    /// `name/subject`, the case's id for `--only`.
    pub fn id(&self) -> String {
        format!("{}@{}", self.name, self.subject)
    }
}

/// How counters are collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterMode {
    /// Hardware counters where the kernel allows, reasons elsewhere.
    Auto,
    /// None.
    Off,
    /// Each in-process case re-run under valgrind's cachegrind.
    Cachegrind,
}

/// The result of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// See [`Case::name`].
    pub name: String,
    /// See [`Case::subject`].
    pub subject: String,
    /// See [`Case::unit`].
    pub unit: Unit,
    /// See [`Case::work`].
    pub work: f64,
    /// Wall-clock summary, seconds; `None` when unavailable.
    pub wall: Option<Summary>,
    /// CPU-time summary, seconds.
    pub cpu: Option<Summary>,
    /// Every repetition.
    pub samples: Vec<Sample>,
    /// Units per second at the median wall time.
    pub throughput: Option<f64>,
    /// Hardware counters per iteration (empty when off).
    pub counters: BTreeMap<String, Reading>,
    /// Cachegrind counts of one warm iteration (two runs minus one), when
    /// asked for.
    pub cachegrind: Option<Result<Cachegrind, String>>,
    /// Against the baseline, when one was given and has this case.
    pub baseline: Option<Comparison>,
    /// Why the case has no samples.
    pub unavailable: Option<String>,
}

impl CaseResult {
    /// A case with no samples, and why.
    pub fn unavailable(c: &Case, why: &str) -> CaseResult {
        CaseResult {
            name: c.name.clone(),
            subject: c.subject.clone(),
            unit: c.unit,
            work: c.work,
            wall: None,
            cpu: None,
            samples: vec![],
            throughput: None,
            counters: BTreeMap::new(),
            cachegrind: None,
            baseline: None,
            unavailable: Some(why.to_string()),
        }
    }

    /// A result from samples.
    pub fn from_samples(c: &Case, samples: Vec<Sample>) -> CaseResult {
        let wall = Summary::of(&samples.iter().map(|s| s.wall).collect::<Vec<_>>());
        let cpu = Summary::of(&samples.iter().map(|s| s.cpu).collect::<Vec<_>>());
        let throughput = wall.filter(|w| w.median > 0.0).map(|w| c.work / w.median);
        CaseResult {
            name: c.name.clone(),
            subject: c.subject.clone(),
            unit: c.unit,
            work: c.work,
            wall,
            cpu,
            samples,
            throughput,
            counters: BTreeMap::new(),
            cachegrind: None,
            baseline: None,
            unavailable: None,
        }
    }
}

/// One in-process body to time: the body, its untimed setup, and the
/// counters to read around it.
pub struct Timed<'a> {
    /// The timed iteration.
    pub body: &'a mut dyn FnMut() -> Result<(), Error>,
    /// Untimed preparation before every iteration, if any.
    pub setup: Option<&'a mut dyn FnMut() -> Result<(), Error>>,
    /// Counters read around every timed iteration.
    pub counters: Option<&'a mut counters::Set>,
}

/// Runs every body `runs` times after `warmup` untimed runs each,
/// interleaved: run 1 of every body, then run 2 of every body, and so on.
/// Subjects of one case (strata and its peer) are so timed under the same
/// conditions, which on a shared machine drift within seconds. Returns
/// the samples of each body, in order.
pub fn time_bodies(
    timed: &mut [Timed<'_>],
    runs: usize,
    warmup: usize,
) -> Result<Vec<Vec<Sample>>, Error> {
    for _ in 0..warmup {
        for t in timed.iter_mut() {
            if let Some(setup) = t.setup.as_deref_mut() {
                setup()?;
            }
            (t.body)()?;
        }
    }
    let mut samples: Vec<Vec<Sample>> = timed.iter().map(|_| Vec::with_capacity(runs)).collect();
    for _ in 0..runs {
        for (t, out) in timed.iter_mut().zip(samples.iter_mut()) {
            if let Some(setup) = t.setup.as_deref_mut() {
                setup()?;
            }
            // The counters' own system calls stay outside the timed window.
            if let Some(set) = t.counters.as_deref_mut() {
                set.start();
            }
            let c0 = strata_pipeline::clock::process_cpu_seconds();
            let t0 = Instant::now();
            let result = (t.body)();
            let wall = t0.elapsed().as_secs_f64();
            let cpu = strata_pipeline::clock::process_cpu_seconds() - c0;
            if let Some(set) = t.counters.as_deref_mut() {
                set.stop();
            }
            result?;
            out.push(Sample { wall, cpu });
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{cell::RefCell, rc::Rc};

    /// Runs of the subjects of one case alternate, warm-up runs first, each
    /// after its own setup; every body gets its own samples.
    #[test]
    fn bodies_run_interleaved() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let logger = |name: &'static str| {
            let log = log.clone();
            move || -> Result<(), Error> {
                log.borrow_mut().push(name);
                Ok(())
            }
        };
        let (mut a, mut b, mut setup_b) = (logger("a"), logger("b"), logger("setup b"));
        let mut timed = vec![
            Timed {
                body: &mut a,
                setup: None,
                counters: None,
            },
            Timed {
                body: &mut b,
                setup: Some(&mut setup_b),
                counters: None,
            },
        ];
        let samples = time_bodies(&mut timed, 2, 1).unwrap();
        assert_eq!(samples.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2]);
        let runs = ["a", "setup b", "b"];
        assert_eq!(*log.borrow(), runs.repeat(3));
    }
}
