//! Deterministic counts: a case re-run under `valgrind --tool=cachegrind
//! --cache-sim=yes`, once with one iteration and once with two, the
//! difference being a warm iteration's instructions and simulated D1/LL
//! misses (the set-up, and the first iteration's cold caches, cancel out).
//!
//! valgrind cannot run AVX-512 code: the binary must be built for at most
//! x86-64-v3 (the workspace's default target is plain x86-64). glibc's
//! `rep movsb`/`rep stosb` copies count one instruction per byte; the runs
//! set `GLIBC_TUNABLES` so that glibc uses vector loops instead.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// Counts of one (warm) iteration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cachegrind {
    /// Instructions executed.
    pub instructions: u64,
    /// Data reads and writes.
    pub data_refs: u64,
    /// First-level data cache misses (reads and writes).
    pub d1_misses: u64,
    /// Last-level misses, instruction and data.
    pub ll_misses: u64,
    /// First-level instruction cache misses.
    pub i1_misses: u64,
}

impl Cachegrind {
    /// `self - setup`, saturating (cachegrind's counts of the same setup
    /// can differ by a few events between runs).
    pub fn minus(self, setup: Cachegrind) -> Cachegrind {
        Cachegrind {
            instructions: self.instructions.saturating_sub(setup.instructions),
            data_refs: self.data_refs.saturating_sub(setup.data_refs),
            d1_misses: self.d1_misses.saturating_sub(setup.d1_misses),
            ll_misses: self.ll_misses.saturating_sub(setup.ll_misses),
            i1_misses: self.i1_misses.saturating_sub(setup.i1_misses),
        }
    }
}

/// The totals of a cachegrind output file (its `events:` and `summary:`
/// lines).
pub fn parse(text: &str) -> Result<Cachegrind, String> {
    let line = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|rest| rest.split_whitespace().collect::<Vec<_>>())
            .ok_or_else(|| format!("no `{key}` line in the cachegrind output"))
    };
    let events = line("events:")?;
    let summary = line("summary:")?;
    if events.len() != summary.len() {
        return Err("cachegrind `events:` and `summary:` differ in length".into());
    }
    let get = |name: &str| -> Result<u64, String> {
        let i = events.iter().position(|e| *e == name).ok_or_else(|| {
            format!("cachegrind output has no `{name}` event (need --cache-sim=yes)")
        })?;
        summary[i]
            .parse()
            .map_err(|_| format!("bad cachegrind count `{}`", summary[i]))
    };
    Ok(Cachegrind {
        instructions: get("Ir")?,
        data_refs: get("Dr")? + get("Dw")?,
        d1_misses: get("D1mr")? + get("D1mw")?,
        ll_misses: get("ILmr")? + get("DLmr")? + get("DLmw")?,
        i1_misses: get("I1mr")?,
    })
}

/// Runs `exe args` under cachegrind and returns its totals.
pub fn run(exe: &Path, args: &[String], dir: &Path) -> Result<Cachegrind, String> {
    let out = dir.join(format!("cachegrind.{}.out", args.len()));
    let status = Command::new("valgrind")
        .arg("--tool=cachegrind")
        .arg("--cache-sim=yes")
        .arg(format!("--cachegrind-out-file={}", out.display()))
        .arg(exe)
        .args(args)
        .env(
            "GLIBC_TUNABLES",
            "glibc.cpu.x86_rep_movsb_threshold=0x7fffffffffff:\
             glibc.cpu.x86_rep_stosb_threshold=0x7fffffffffff",
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output();
    let status = match status {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("valgrind is not installed".into());
        }
        Err(e) => return Err(format!("cannot run valgrind: {e}")),
    };
    if !status.status.success() {
        let err = String::from_utf8_lossy(&status.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!("valgrind failed ({}): {last}", status.status));
    }
    let text =
        std::fs::read_to_string(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    parse(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_summary_of_a_cachegrind_file() {
        let text = "desc: I1 cache: 32768 B, 64 B, 8-way associative\n\
                    cmd: ./x\n\
                    events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n\
                    fl=a.c\n\
                    1 5 0 0 1 0 0 0 0 0\n\
                    summary: 1000 10 2 300 30 3 200 20 4\n";
        let c = parse(text).unwrap();
        assert_eq!(
            c,
            Cachegrind {
                instructions: 1000,
                data_refs: 500,
                d1_misses: 50,
                ll_misses: 9,
                i1_misses: 10,
            }
        );
        let setup = Cachegrind {
            instructions: 400,
            data_refs: 100,
            d1_misses: 60,
            ll_misses: 1,
            i1_misses: 1,
        };
        let d = c.minus(setup);
        assert_eq!((d.instructions, d.d1_misses, d.ll_misses), (600, 0, 8));
    }

    #[test]
    fn files_without_cache_simulation_are_refused() {
        let text = "events: Ir\nsummary: 1000\n";
        assert!(parse(text).unwrap_err().contains("--cache-sim=yes"));
        assert!(parse("nothing").unwrap_err().contains("events:"));
    }
}
