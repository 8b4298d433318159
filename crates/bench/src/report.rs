//! A run as Markdown: a header with where and how it was measured, one
//! table row per case with its peers beside it, and the counters.

use std::fmt::Write as _;

use crate::counters::Reading;
use crate::{CaseResult, RunResult};

/// One line per case, for progress output.
pub fn line(c: &CaseResult) -> String {
    match (&c.unavailable, &c.wall) {
        (Some(why), _) => format!("{}  {}: unavailable: {why}", c.name, c.subject),
        (None, Some(w)) => format!(
            "{}  {}: {} median, {}",
            c.name,
            c.subject,
            seconds(w.median),
            rate(c)
        ),
        (None, None) => format!("{}  {}: no samples", c.name, c.subject),
    }
}

/// Seconds with a unit that keeps three significant digits.
pub fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.3} us", s * 1e6)
    }
}

fn rate(c: &CaseResult) -> String {
    let (label, div) = c.unit.rate();
    c.throughput.map_or_else(
        || "-".into(),
        |t| format!("{} {label}", significant(t / div)),
    )
}

/// At least three significant digits, no exponent.
pub fn significant(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let decimals = (2.0 - a.log10().floor()) as usize;
        format!("{v:.decimals$}")
    }
}

/// The subject other subjects of a case are compared with: `strata` when
/// the case has it, else its first subject.
fn reference<'a>(run: &'a RunResult, name: &str) -> Option<&'a CaseResult> {
    let mut same = run.cases.iter().filter(|o| o.name == name);
    run.cases
        .iter()
        .find(|o| o.name == name && o.subject == "strata")
        .or_else(|| same.next())
}

/// Whether `c` is its case's reference subject (what the suite measures
/// for its own sake; the others are peers).
pub fn is_reference(run: &RunResult, c: &CaseResult) -> bool {
    reference(run, &c.name).is_some_and(|r| r.subject == c.subject)
}

/// The median wall time of `c` over that of its case's reference (how many
/// times longer it takes).
fn versus_reference(run: &RunResult, c: &CaseResult) -> String {
    let Some(r) = reference(run, &c.name) else {
        return String::new();
    };
    if r.subject == c.subject {
        return String::new();
    }
    let ours = r.wall;
    match (ours, c.wall) {
        (Some(o), Some(p)) if o.median > 0.0 => format!("{:.2}x", p.median / o.median),
        _ => String::new(),
    }
}

/// The run as a Markdown section.
pub fn markdown(run: &RunResult) -> String {
    let ctx = &run.context;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### `strata bench {}`, {} UTC, commit {}",
        run.suite.name(),
        ctx.date,
        ctx.commit
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Machine: {}. {} timed runs per case after a warm-up, size {:?}, counters {:?}.",
        ctx.machine, ctx.runs, ctx.size, ctx.counters
    );
    if let Some(b) = &ctx.baseline {
        let _ = writeln!(out, "Baseline: {b}.");
    }
    let _ = writeln!(
        out,
        "Times are per repetition of the case's work; \"time vs ref\" is the median wall time over that of the case's `strata` subject (else its first)."
    );
    let _ = writeln!(out);
    let with_base = run.cases.iter().any(|c| c.baseline.is_some());
    let _ = write!(
        out,
        "| case | subject | wall median (min-max) | CPU median | throughput | time vs ref |"
    );
    if with_base {
        let _ = write!(out, " vs baseline |");
    }
    let _ = writeln!(out);
    let _ = write!(out, "|---|---|---|---|---|---|");
    if with_base {
        let _ = write!(out, "---|");
    }
    let _ = writeln!(out);
    for c in &run.cases {
        let (wall, cpu) = match (&c.unavailable, c.wall, c.cpu) {
            (Some(why), _, _) => (format!("unavailable: {why}"), String::new()),
            (None, Some(w), Some(p)) => (
                format!(
                    "{} ({}-{})",
                    seconds(w.median),
                    seconds(w.min),
                    seconds(w.max)
                ),
                seconds(p.median),
            ),
            _ => ("no samples".into(), String::new()),
        };
        let _ = write!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            c.name,
            c.subject,
            wall,
            cpu,
            rate(c),
            versus_reference(run, c)
        );
        if with_base {
            let cell = c.baseline.map_or_else(String::new, |b| {
                format!(
                    "{:+.1}% (p={:.3}) {}",
                    b.change * 100.0,
                    b.p_value,
                    b.verdict.label()
                )
            });
            let _ = write!(out, " {cell} |");
        }
        let _ = writeln!(out);
    }
    counters_section(run, &mut out);
    out
}

fn counters_section(run: &RunResult, out: &mut String) {
    let hw: Vec<&CaseResult> = run
        .cases
        .iter()
        .filter(|c| !c.counters.is_empty())
        .collect();
    if let Some(first) = hw.first() {
        let _ = writeln!(out);
        // A counter unavailable everywhere gets one line, not a column.
        let names: Vec<&String> = first.counters.keys().collect();
        let mut shown = vec![];
        for n in names {
            let reasons: Vec<&str> = hw
                .iter()
                .filter_map(|c| match c.counters.get(n) {
                    Some(Reading::Unavailable(w)) => Some(w.as_str()),
                    _ => None,
                })
                .collect();
            if reasons.len() == hw.len() {
                let _ = writeln!(out, "- `{n}`: unavailable: {}", reasons[0]);
            } else {
                shown.push(n);
            }
        }
        if !shown.is_empty() {
            let _ = writeln!(out);
            let _ = write!(out, "| case | subject |");
            for n in &shown {
                let _ = write!(out, " {n} |");
            }
            let _ = writeln!(out);
            let _ = writeln!(out, "|---|---|{}", "---|".repeat(shown.len()));
            for c in &hw {
                let _ = write!(out, "| `{}` | {} |", c.name, c.subject);
                for n in &shown {
                    let cell = match c.counters.get(*n) {
                        Some(Reading::Value(v)) if **n == "ipc" => format!("{v:.2}"),
                        Some(Reading::Value(v)) => format!("{v:.0}"),
                        Some(Reading::Unavailable(w)) => format!("unavailable: {w}"),
                        None => String::new(),
                    };
                    let _ = write!(out, " {cell} |");
                }
                let _ = writeln!(out);
            }
        }
    }
    let cg: Vec<&CaseResult> = run
        .cases
        .iter()
        .filter(|c| c.cachegrind.is_some())
        .collect();
    if !cg.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Cachegrind, one warm iteration (two runs minus one):\n\n| case | subject | instructions | data refs | D1 misses | LL misses |\n|---|---|---|---|---|---|"
        );
        for c in cg {
            match c.cachegrind.as_ref().expect("filtered") {
                Ok(g) => {
                    let _ = writeln!(
                        out,
                        "| `{}` | {} | {} | {} | {} | {} |",
                        c.name, c.subject, g.instructions, g.data_refs, g.d1_misses, g.ll_misses
                    );
                }
                Err(why) => {
                    let _ = writeln!(
                        out,
                        "| `{}` | {} | unavailable: {why} | | | |",
                        c.name, c.subject
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::significant;

    #[test]
    fn rates_keep_three_significant_digits() {
        assert_eq!(significant(4379.04), "4379");
        assert_eq!(significant(18.44), "18.4");
        assert_eq!(significant(2.345), "2.35");
        assert_eq!(significant(0.0358), "0.0358");
        assert_eq!(significant(0.000_123_4), "0.000123");
        assert_eq!(significant(0.0), "0");
    }
}
