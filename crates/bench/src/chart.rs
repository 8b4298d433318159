//! Trend charts across saved runs: one SVG per suite, one line per case
//! and subject, of throughput or of a counter, runs in date order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use strata_store::output::write_atomically;

use crate::counters::Reading;
use crate::{CaseResult, Error, RunResult};

/// What a chart plots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metric {
    /// Throughput at the median wall time, in the case's unit.
    Throughput,
    /// A hardware counter per iteration (`instructions`, `ipc`, ...).
    Counter(String),
    /// A cachegrind count of one warm iteration (`instructions`, `d1_misses`,
    /// `ll_misses`, `data_refs`, `i1_misses`).
    Cachegrind(String),
}

impl Metric {
    /// `throughput`, a counter name, or `cachegrind.NAME`.
    pub fn parse(s: &str) -> Metric {
        match s {
            "throughput" => Metric::Throughput,
            _ => match s.strip_prefix("cachegrind.") {
                Some(n) => Metric::Cachegrind(n.to_string()),
                None => Metric::Counter(s.to_string()),
            },
        }
    }

    fn label(&self) -> String {
        match self {
            Metric::Throughput => "throughput".into(),
            Metric::Counter(n) => n.clone(),
            Metric::Cachegrind(n) => format!("cachegrind {n}"),
        }
    }

    /// The metric's value for a case, in the unit the chart shows.
    pub fn value(&self, c: &CaseResult) -> Option<f64> {
        match self {
            Metric::Throughput => c.throughput.map(|t| t / c.unit.rate().1),
            Metric::Counter(n) => match c.counters.get(n) {
                Some(Reading::Value(v)) => Some(*v),
                _ => None,
            },
            Metric::Cachegrind(n) => {
                let g = c.cachegrind.as_ref()?.as_ref().ok()?;
                let v = match n.as_str() {
                    "instructions" => g.instructions,
                    "data_refs" => g.data_refs,
                    "d1_misses" => g.d1_misses,
                    "ll_misses" => g.ll_misses,
                    "i1_misses" => g.i1_misses,
                    _ => return None,
                };
                Some(v as f64)
            }
        }
    }
}

/// Every saved run (`*.json`) under `dir`, recursively, oldest first, and
/// the files that are not runs (each with why), which are skipped. A run
/// saved twice (as a run and as a baseline) counts once.
pub fn load_runs(dir: &Path) -> Result<(Vec<RunResult>, Vec<String>), Error> {
    let mut files = vec![];
    collect(dir, &mut files)?;
    files.sort();
    let mut runs: Vec<RunResult> = vec![];
    let mut skipped = vec![];
    for f in files {
        match crate::load(&f) {
            Ok(r) => {
                let same = |o: &RunResult| {
                    o.suite == r.suite && o.context.timestamp == r.context.timestamp
                };
                if !runs.iter().any(same) {
                    runs.push(r);
                }
            }
            Err(e) => skipped.push(e.to_string()),
        }
    }
    runs.sort_by_key(|r| r.context.timestamp);
    Ok((runs, skipped))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        what: "list".into(),
        path: dir.to_path_buf(),
        source,
    })?;
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// One line of a chart: `case (subject)` and its points (run index, value).
pub type Series = (String, Vec<(usize, f64)>);

/// The series of `metric` for each suite in `runs` (oldest first), cases
/// filtered by `filter` on `name@subject`.
pub fn series(
    runs: &[RunResult],
    metric: &Metric,
    filter: Option<&str>,
) -> BTreeMap<String, (Vec<String>, Vec<Series>)> {
    type Lines = BTreeMap<String, Vec<(usize, f64)>>;
    let mut out: BTreeMap<String, (Vec<String>, Lines)> = BTreeMap::new();
    for run in runs {
        let (dates, lines) = out.entry(run.suite.name().to_string()).or_default();
        let x = dates.len();
        dates.push(format!("{} {}", run.context.date, run.context.commit));
        for c in &run.cases {
            let id = format!("{}@{}", c.name, c.subject);
            if filter.is_some_and(|f| !id.contains(f)) {
                continue;
            }
            if let Some(v) = metric.value(c) {
                lines
                    .entry(format!("{} ({})", c.name, c.subject))
                    .or_default()
                    .push((x, v));
            }
        }
    }
    out.into_iter()
        .map(|(suite, (dates, lines))| (suite, (dates, lines.into_iter().collect())))
        .collect()
}

/// Draws one SVG per suite found in `runs` into `out_dir`
/// (`SUITE-METRIC.svg`) and returns their paths. Suites with fewer than
/// two runs or no values are skipped.
pub fn trend(
    runs: &[RunResult],
    metric: &Metric,
    filter: Option<&str>,
    out_dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(out_dir).map_err(|source| Error::Io {
        what: "create".into(),
        path: out_dir.to_path_buf(),
        source,
    })?;
    let mut written = vec![];
    for (suite, (dates, lines)) in series(runs, metric, filter) {
        if dates.len() < 2 || lines.is_empty() {
            continue;
        }
        let name = metric.label().replace([' ', '.'], "-");
        let path = out_dir.join(format!("{suite}-{name}.svg"));
        let svg = draw(&suite, metric, &dates, &lines).map_err(|e| Error::Chart(e.to_string()))?;
        // Appears complete or not at all, replacing an older chart.
        written.push(write_atomically(&path, svg.as_bytes(), true, false)?);
    }
    if written.is_empty() {
        return Err(Error::Chart(format!(
            "nothing to draw: need at least two saved runs of a suite with `{}` values",
            metric.label()
        )));
    }
    Ok(written)
}

/// The SVG text of one suite's chart.
fn draw(
    suite: &str,
    metric: &Metric,
    dates: &[String],
    lines: &[Series],
) -> Result<String, Box<dyn std::error::Error>> {
    let mut svg = String::new();
    draw_on(&mut svg, suite, metric, dates, lines)?;
    Ok(svg)
}

/// Draws one suite's chart into `svg`.
fn draw_on(
    svg: &mut String,
    suite: &str,
    metric: &Metric,
    dates: &[String],
    lines: &[Series],
) -> Result<(), Box<dyn std::error::Error>> {
    let height = 420 + 18 * lines.len() as u32;
    let root = SVGBackend::with_string(svg, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot, legend) = root.split_vertically(420);
    let ymax = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, v)| *v))
        .fold(0.0f64, f64::max)
        * 1.1;
    let xmax = (dates.len() - 1).max(1) as f64;
    let unit = match metric {
        Metric::Throughput => "throughput (per series unit: MiB/s or M/s)".to_string(),
        m => format!("{} per iteration", m.label()),
    };
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            format!("strata bench {suite}: {}", metric.label()),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.1f64..xmax + 0.1, 0f64..ymax.max(1e-9))?;
    chart
        .configure_mesh()
        .x_desc("saved run (oldest first)")
        .y_desc(unit)
        .x_labels(dates.len().min(12))
        .x_label_formatter(&|x| {
            // `MM-DD HH:MM:SS` of `YYYY-MM-DD HH:MM:SS commit`.
            if (x - x.round()).abs() > 1e-6 || *x < 0.0 {
                return String::new();
            }
            let i = x.round() as usize;
            dates
                .get(i)
                .and_then(|d| d.get(5..19))
                .unwrap_or("")
                .to_string()
        })
        .draw()?;
    for (i, (name, points)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = points.iter().map(|(x, v)| (*x as f64, *v)).collect();
        chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?;
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        let y = 10 + 18 * i as i32;
        legend.draw(&PathElement::new(
            vec![(90, y), (120, y)],
            color.stroke_width(3),
        ))?;
        legend.draw(&Text::new(name.clone(), (128, y - 7), ("sans-serif", 13)))?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, CounterMode, Sample, Size, Suite, Unit};

    fn run(ts: u64, rate: f64) -> RunResult {
        let case = |subject: &str, wall: f64| {
            let c = crate::Case {
                name: "encode/x".into(),
                subject: subject.into(),
                unit: Unit::Rows,
                work: rate,
                repeats: 1,
                body: crate::Body::Unavailable(String::new()),
            };
            CaseResult::from_samples(&c, vec![Sample { wall, cpu: wall }])
        };
        RunResult {
            suite: Suite::Row,
            context: Context {
                date: crate::utc(ts),
                timestamp: ts,
                machine: "test".into(),
                commit: "abc".into(),
                runs: 1,
                size: Size::Tiny,
                counters: CounterMode::Off,
                baseline: None,
            },
            cases: vec![case("strata", 1.0), case("arrow-row", 2.0)],
        }
    }

    #[test]
    fn series_follow_runs_in_order() {
        let runs = vec![run(100, 1e6), run(200, 2e6), run(300, 3e6)];
        let s = series(&runs, &Metric::Throughput, None);
        let (dates, lines) = &s["row"];
        assert_eq!(dates.len(), 3);
        let ours = &lines.iter().find(|l| l.0.contains("strata")).unwrap().1;
        assert_eq!(ours, &vec![(0, 1.0), (1, 2.0), (2, 3.0)]);
        let peer = &lines.iter().find(|l| l.0.contains("arrow-row")).unwrap().1;
        assert_eq!(peer, &vec![(0, 0.5), (1, 1.0), (2, 1.5)]);
        let only = series(&runs, &Metric::Throughput, Some("@strata"));
        assert_eq!(only["row"].1.len(), 1);
    }

    #[test]
    fn charts_are_svg_files_and_need_two_runs() {
        let dir = tempfile::tempdir().unwrap();
        let runs = vec![run(100, 1e6), run(200, 2e6), run(300, 3e6)];
        let files = trend(&runs, &Metric::Throughput, None, dir.path()).unwrap();
        assert_eq!(files.len(), 1);
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("encode/x (strata)"));
        // Drawn again, it replaces the chart; no temporary is left beside it.
        let again = trend(&runs[1..], &Metric::Throughput, None, dir.path()).unwrap();
        assert_eq!(again, files);
        assert_ne!(std::fs::read_to_string(&files[0]).unwrap(), svg);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [files[0].file_name().unwrap()]);
        let e = trend(&runs[..1], &Metric::Throughput, None, dir.path()).unwrap_err();
        assert!(e.to_string().contains("at least two saved runs"));
        assert_eq!(
            Metric::parse("cachegrind.d1_misses"),
            Metric::Cachegrind("d1_misses".into())
        );
        assert_eq!(Metric::parse("ipc"), Metric::Counter("ipc".into()));
    }
}
