//! Hardware counters around a measured closure, through `perf_event_open`
//! (the `perf-event2` crate), each opened on its own so that one the
//! kernel refuses does not take the others with it.
//!
//! Counters: cycles, instructions (and IPC from the two), cache
//! references and misses, branch misses, all inherited by the threads the
//! measured work starts; on Intel, split stores. Top-down level 1 is
//! reported unavailable with its reason (it needs a `slots`-led group). A
//! counter that cannot be opened or read is reported as `unavailable:
//! REASON` (the errno, or why it was not tried), never as a failure: these
//! VMs expose no PMU, and `perf_event_paranoid` may forbid them anyway.

use std::collections::BTreeMap;
use std::io;
use std::time::Duration;

use perf_event::events::{Event, Hardware, Raw};
use perf_event::{Builder, Counter};
use serde::{Deserialize, Serialize};

/// What a counter read gives: a count per iteration, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// Events per measured iteration.
    Value(f64),
    /// Why the counter gave nothing.
    Unavailable(String),
}

impl Reading {
    /// The value, if there is one.
    pub fn value(&self) -> Option<f64> {
        match self {
            Reading::Value(v) => Some(*v),
            Reading::Unavailable(_) => None,
        }
    }
}

/// One counter to open: its report name and how to open it.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The report's name (`instructions`, `split_stores`, ...).
    pub name: &'static str,
    /// How to open it, or why it is not tried on this machine.
    pub source: Result<Source, String>,
}

/// A hardware event, or a raw one (`config` as the kernel's sysfs lists it).
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A generic hardware event.
    Hardware(Hardware),
    /// A model-specific event, `attr.config` for `PERF_TYPE_RAW`.
    Raw(u64),
}

/// Something that opens counters: the kernel, or a stand-in in tests.
pub trait Opener {
    /// An open, disabled counter for `source`.
    fn open(&self, source: Source) -> io::Result<Box<dyn Handle>>;
}

/// An open counter.
pub trait Handle {
    /// Resets and starts counting.
    fn start(&mut self) -> io::Result<()>;
    /// Stops counting and returns the count, scaled up when the kernel
    /// multiplexed the counter (ran it only part of the time).
    fn stop(&mut self) -> io::Result<u64>;
}

/// The kernel's `perf_event_open`, for this process, user space only.
#[derive(Debug, Default, Clone, Copy)]
pub struct Kernel;

struct KernelCounter {
    counter: Counter,
    /// `time_enabled` and `time_running` when counting started: the
    /// kernel's reset zeroes the count but not these.
    times: (Duration, Duration),
}

impl Opener for Kernel {
    fn open(&self, source: Source) -> io::Result<Box<dyn Handle>> {
        fn build(e: impl Event + 'static) -> io::Result<Counter> {
            let mut b = Builder::new(e);
            // Threads the measured work spawns are counted too (the
            // pipeline, the merge and the scanner use several).
            b.exclude_kernel(true).exclude_hv(true).inherit(true);
            b.build()
        }
        let counter = match source {
            Source::Hardware(h) => build(h)?,
            Source::Raw(config) => build(Raw::new(config))?,
        };
        Ok(Box::new(KernelCounter {
            counter,
            times: (Duration::ZERO, Duration::ZERO),
        }))
    }
}

fn times(c: &mut Counter) -> io::Result<(Duration, Duration)> {
    let r = c.read_full()?;
    Ok((
        r.time_enabled().unwrap_or_default(),
        r.time_running().unwrap_or_default(),
    ))
}

impl Handle for KernelCounter {
    fn start(&mut self) -> io::Result<()> {
        self.counter.reset()?;
        self.times = times(&mut self.counter)?;
        self.counter.enable()
    }

    fn stop(&mut self) -> io::Result<u64> {
        self.counter.disable()?;
        let count = self.counter.read_full()?.count();
        let (e1, r1) = times(&mut self.counter)?;
        let enabled = e1.saturating_sub(self.times.0);
        let running = r1.saturating_sub(self.times.1);
        scale(count, enabled, running)
    }
}

/// A count scaled up for the share of the time the kernel ran the counter
/// (it multiplexes counters when there are more than the PMU has).
fn scale(count: u64, enabled: Duration, running: Duration) -> io::Result<u64> {
    if running.is_zero() {
        return if count == 0 && !enabled.is_zero() {
            Err(io::Error::other(
                "never scheduled on the PMU (multiplexed out)",
            ))
        } else {
            Ok(count)
        };
    }
    if running < enabled {
        Ok((count as f64 * enabled.as_secs_f64() / running.as_secs_f64()) as u64)
    } else {
        Ok(count)
    }
}

/// The counters this machine might have: the generic ones everywhere, and
/// on Intel split stores and top-down level 1 from sysfs.
pub fn default_specs() -> Vec<Spec> {
    let mut specs = vec![
        hw("cycles", Hardware::CPU_CYCLES),
        hw("instructions", Hardware::INSTRUCTIONS),
        hw("cache_references", Hardware::CACHE_REFERENCES),
        hw("cache_misses", Hardware::CACHE_MISSES),
        hw("branch_misses", Hardware::BRANCH_MISSES),
    ];
    let intel = std::fs::read_to_string("/proc/cpuinfo")
        .map(|c| c.contains("GenuineIntel"))
        .unwrap_or(false);
    specs.push(Spec {
        name: "split_stores",
        // MEM_INST_RETIRED.SPLIT_STORES: event 0xd0, umask 0x42 on Skylake
        // and later cores.
        source: if intel {
            Ok(Source::Raw(0x42d0))
        } else {
            Err("not an Intel CPU".to_string())
        },
    });
    // Top-down level 1: the kernel accepts these only as a group led by
    // `slots` (Ice Lake and later), which this harness does not open; it
    // says so, where the CPU lists them, instead of a misleading errno.
    for (name, event) in [
        ("topdown_retiring", "topdown-retiring"),
        ("topdown_bad_spec", "topdown-bad-spec"),
        ("topdown_fe_bound", "topdown-fe-bound"),
        ("topdown_be_bound", "topdown-be-bound"),
    ] {
        let why = if !intel {
            "not an Intel CPU".to_string()
        } else {
            match sysfs_event(event) {
                Ok(_) => "listed by the kernel, but collected only as a group led by `slots`, \
                          which this harness does not open"
                    .to_string(),
                Err(e) => e,
            }
        };
        specs.push(Spec {
            name,
            source: Err(why),
        });
    }
    specs
}

fn hw(name: &'static str, h: Hardware) -> Spec {
    Spec {
        name,
        source: Ok(Source::Hardware(h)),
    }
}

/// The raw config of a named core event the kernel lists in sysfs
/// (`event=0x00,umask=0x81`).
fn sysfs_event(name: &str) -> Result<u64, String> {
    // Hybrid CPUs list their big cores' events under `cpu_core`.
    for pmu in ["cpu", "cpu_core"] {
        let path = format!("/sys/bus/event_source/devices/{pmu}/events/{name}");
        if let Ok(text) = std::fs::read_to_string(&path) {
            return parse_event_config(&text)
                .ok_or_else(|| format!("cannot parse {path}: {}", text.trim()));
        }
    }
    Err(format!("the kernel lists no `{name}` event"))
}

/// `event=0x..,umask=0x..` as `attr.config` (umask in bits 8-15).
pub fn parse_event_config(text: &str) -> Option<u64> {
    let mut config = 0u64;
    for term in text.trim().split(',') {
        let (key, value) = term.split_once('=')?;
        let v = u64::from_str_radix(value.trim().trim_start_matches("0x"), 16).ok()?;
        match key.trim() {
            "event" => config |= v & 0xff,
            "umask" => config |= (v & 0xff) << 8,
            _ => return None,
        }
    }
    Some(config)
}

/// An open counter, or why it is not.
type Opened = Result<Box<dyn Handle>, String>;

/// Counters opened for one measured case.
pub struct Set {
    counters: Vec<(&'static str, Opened)>,
    totals: BTreeMap<&'static str, Result<u64, String>>,
    iterations: u64,
}

impl std::fmt::Debug for Set {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Set")
            .field("counters", &self.counters.len())
            .field("iterations", &self.iterations)
            .finish()
    }
}

impl Set {
    /// Opens every counter of `specs` with `opener`; failures are kept as
    /// reasons.
    pub fn open(opener: &dyn Opener, specs: &[Spec]) -> Set {
        let counters = specs
            .iter()
            .map(|s| {
                let handle = match &s.source {
                    Err(why) => Err(why.clone()),
                    Ok(src) => opener.open(*src).map_err(|e| reason(&e)),
                };
                (s.name, handle)
            })
            .collect();
        Set {
            counters,
            totals: BTreeMap::new(),
            iterations: 0,
        }
    }

    /// Starts every open counter.
    pub fn start(&mut self) {
        for (_, h) in &mut self.counters {
            if let Ok(handle) = h
                && let Err(e) = handle.start()
            {
                *h = Err(reason(&e));
            }
        }
    }

    /// Stops every counter and adds its count to the totals.
    pub fn stop(&mut self) {
        for (name, h) in &mut self.counters {
            let got = match h {
                Ok(handle) => handle.stop().map_err(|e| reason(&e)),
                Err(why) => Err(why.clone()),
            };
            let total = self.totals.entry(name).or_insert(Ok(0));
            *total = match (std::mem::replace(total, Ok(0)), got) {
                (Ok(t), Ok(c)) => Ok(t + c),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
        }
        self.iterations += 1;
    }

    /// Counts per iteration, IPC when both cycles and instructions counted.
    pub fn readings(&self) -> BTreeMap<String, Reading> {
        let mut out = BTreeMap::new();
        let n = self.iterations.max(1) as f64;
        for (name, _) in &self.counters {
            let r = match self.totals.get(name) {
                Some(Ok(t)) => Reading::Value(*t as f64 / n),
                Some(Err(e)) => Reading::Unavailable(e.clone()),
                None => Reading::Unavailable("not measured".into()),
            };
            out.insert(name.to_string(), r);
        }
        let ipc = match (
            out.get("instructions").and_then(Reading::value),
            out.get("cycles").and_then(Reading::value),
        ) {
            (Some(i), Some(c)) if c > 0.0 => Reading::Value(i / c),
            _ => Reading::Unavailable("needs cycles and instructions".into()),
        };
        out.insert("ipc".into(), ipc);
        out
    }
}

fn reason(e: &io::Error) -> String {
    let what = match e.raw_os_error() {
        Some(libc::ENOENT) => "no such event on this machine (ENOENT)",
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "not permitted (perf_event_paranoid; try CAP_PERFMON)"
        }
        Some(libc::EOPNOTSUPP) => "not supported (EOPNOTSUPP)",
        Some(libc::ENODEV) => "no PMU (ENODEV)",
        Some(libc::ENOSYS) => "perf_event_open is not available (ENOSYS)",
        Some(libc::EINVAL) => "the kernel rejected the event (EINVAL)",
        _ => return e.to_string(),
    };
    what.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel without counters: every open fails like a VM without a PMU.
    struct NoPmu;
    impl Opener for NoPmu {
        fn open(&self, _: Source) -> io::Result<Box<dyn Handle>> {
            Err(io::Error::from_raw_os_error(libc::ENOENT))
        }
    }

    /// A kernel that counts one event per call, and refuses raw events.
    struct Fake;
    struct Ticks(u64);
    impl Opener for Fake {
        fn open(&self, s: Source) -> io::Result<Box<dyn Handle>> {
            match s {
                Source::Raw(_) => Err(io::Error::from_raw_os_error(libc::EACCES)),
                Source::Hardware(h) if h == Hardware::CPU_CYCLES => Ok(Box::new(Ticks(2000))),
                Source::Hardware(_) => Ok(Box::new(Ticks(1000))),
            }
        }
    }
    impl Handle for Ticks {
        fn start(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn stop(&mut self) -> io::Result<u64> {
            Ok(self.0)
        }
    }

    fn specs() -> Vec<Spec> {
        vec![
            hw("cycles", Hardware::CPU_CYCLES),
            hw("instructions", Hardware::INSTRUCTIONS),
            Spec {
                name: "split_stores",
                source: Ok(Source::Raw(0x42d0)),
            },
            Spec {
                name: "topdown_slots",
                source: Err("not an Intel CPU".into()),
            },
        ]
    }

    #[test]
    fn a_kernel_without_counters_gives_reasons_not_failures() {
        let mut set = Set::open(&NoPmu, &specs());
        set.start();
        set.stop();
        let r = set.readings();
        for name in ["cycles", "instructions", "split_stores"] {
            assert_eq!(
                r[name],
                Reading::Unavailable("no such event on this machine (ENOENT)".into()),
                "{name}"
            );
        }
        assert_eq!(
            r["topdown_slots"],
            Reading::Unavailable("not an Intel CPU".into())
        );
        assert!(matches!(r["ipc"], Reading::Unavailable(_)));
    }

    #[test]
    fn counts_are_per_iteration_and_ipc_is_derived() {
        let mut set = Set::open(&Fake, &specs());
        for _ in 0..4 {
            set.start();
            set.stop();
        }
        let r = set.readings();
        assert_eq!(r["cycles"], Reading::Value(2000.0));
        assert_eq!(r["instructions"], Reading::Value(1000.0));
        assert_eq!(r["ipc"], Reading::Value(0.5));
        assert!(matches!(&r["split_stores"], Reading::Unavailable(w) if w.contains("paranoid")));
    }

    #[test]
    fn the_real_kernel_never_fails_the_run() {
        // Whatever this machine allows, opening and reading return.
        let mut set = Set::open(&Kernel, &default_specs());
        set.start();
        std::hint::black_box((0..1000u64).sum::<u64>());
        set.stop();
        let r = set.readings();
        assert!(r.contains_key("instructions") && r.contains_key("ipc"));
    }

    #[test]
    fn multiplexed_counts_are_scaled_by_the_iteration_times() {
        let ms = Duration::from_millis;
        assert_eq!(scale(1000, ms(10), ms(10)).unwrap(), 1000);
        assert_eq!(scale(1000, ms(10), ms(5)).unwrap(), 2000);
        assert!(scale(0, ms(10), ms(0)).is_err());
        assert_eq!(scale(0, ms(0), ms(0)).unwrap(), 0);
    }

    #[test]
    fn sysfs_event_strings_parse() {
        assert_eq!(parse_event_config("event=0x00,umask=0x81\n"), Some(0x8100));
        assert_eq!(parse_event_config("event=0xd0,umask=0x42"), Some(0x42d0));
        assert_eq!(parse_event_config("event=0xd0,period=3"), None);
        assert_eq!(parse_event_config("garbage"), None);
    }
}
