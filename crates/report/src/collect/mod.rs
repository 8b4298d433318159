//! Gathering a [`Report`] from files: see the crate docs.

mod columns;
mod expect;
mod layout;
mod refs;

use std::collections::HashMap;
use std::sync::Mutex;

use arrow_array::RecordBatch;
use strata_gen::{CalendarPart, Dataset, Field, Generator, Kind, Spec};
use strata_infer::input::TableInput;
use strata_infer::{ProfileOptions, Profiles, TableSummary};
use strata_pipeline::verify::Verifier;
use strata_scan::{ScanRequest, Scanner};
use strata_store::location::StoreConfig;

use crate::Error;
use crate::model::{Report, SummaryRow, TableComparison, TableReport};

/// What to read and check.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The dataset's spec, for expected distributions, references and the
    /// summary's checks.
    pub spec: Option<strata_gen::Dataset>,
    /// How `s3://` inputs are reached.
    pub store: StoreConfig,
    /// The page's title (default: the spec's name, else the inputs).
    pub title: Option<String>,
}

/// Reads `inputs` (directories of tables, table directories, or files;
/// local or `s3://`) and gathers their report.
///
/// # Errors
///
/// [`Error::Infer`] when an input is missing, holds no data file, or a
/// file cannot be decoded; [`Error::Footer`] when a file's footer cannot
/// be read for its layout.
pub fn collect(inputs: &[String], opts: &Options) -> Result<Report, Error> {
    let tables = strata_infer::input::discover(inputs, &opts.store)?;
    let spec = opts.spec.as_ref();
    let gathered = gather(&tables, spec, &opts.store)?;
    let mut report = Report {
        title: title(opts, inputs),
        ..Report::default()
    };
    report.tables = table_reports(&tables, &gathered, spec, &opts.store, &mut report.notes)?;
    report.summary = summary(&tables, &gathered, spec);
    if spec.is_some() {
        for (t, m) in report.tables.iter().zip(&gathered.matched) {
            if m.is_some() {
                report.summary.extend(histogram_checks(t));
            }
        }
        report.summary.sort_by_key(|r| !r.flagged);
    }
    let mut notes = read_notes(&report.tables, &tables, inputs);
    if let Some(s) = spec {
        notes.push(format!("spec: {} ({})", s.name, s.origin));
        for (i, t) in s.tables.iter().enumerate() {
            if !gathered.matched.contains(&Some(i)) {
                notes.push(format!(
                    "spec table {} has no files among the inputs: not checked",
                    t.spec.name
                ));
            }
        }
    }
    notes.push(format!("strata {}", env!("CARGO_PKG_VERSION")));
    notes.append(&mut report.notes);
    report.notes = notes;
    Ok(report)
}

/// `strata infer --compare`: the original dataset's columns beside the
/// generated dataset's, with each column's distance (from `comparison`,
/// which `strata_infer::compare` measured) in the summary.
///
/// # Errors
///
/// As [`collect`], for either side.
pub fn collect_comparison(
    original: &[String],
    generated: &[String],
    comparison: &strata_infer::Comparison,
    opts: &Options,
) -> Result<Report, Error> {
    let a_tables = strata_infer::input::discover(original, &opts.store)?;
    let b_tables = strata_infer::input::discover(generated, &opts.store)?;
    let a = gather(&a_tables, None, &opts.store)?;
    let b = gather(&b_tables, None, &opts.store)?;
    let mut notes = Vec::new();
    let a_reports = table_reports(&a_tables, &a, None, &opts.store, &mut notes)?;
    let b_reports = table_reports(&b_tables, &b, None, &opts.store, &mut notes)?;
    let mut report = Report {
        title: opts
            .title
            .clone()
            .unwrap_or_else(|| format!("{} against {}", generated.join(", "), original.join(", "))),
        ..Report::default()
    };
    let single = a_reports.len() == 1 && b_reports.len() == 1;
    for ta in &a_reports {
        let tb = if single {
            b_reports.first()
        } else {
            b_reports.iter().find(|t| t.name == ta.name)
        };
        if let Some(tb) = tb {
            report.comparisons.push(TableComparison {
                name: ta.name.clone(),
                original: ta.clone(),
                generated: tb.clone(),
            });
        }
    }
    let bounds = comparison.bounds;
    for c in &comparison.columns {
        let bound = match c.statistic.as_str() {
            "tv" => bounds.tv,
            "ks" | "length ks" => bounds.ks,
            _ => 0.0,
        };
        report.summary.push(SummaryRow {
            table: c.table.clone(),
            column: c.column.clone(),
            check: c.statistic.clone(),
            expected: bound.max(c.noise),
            realised: c.distance,
            score: c.distance,
            flagged: !c.pass,
        });
        let nulls = (c.null_rates.1 - c.null_rates.0).abs();
        if nulls > 0.0 {
            report.summary.push(SummaryRow {
                table: c.table.clone(),
                column: c.column.clone(),
                check: "null rate".into(),
                expected: c.null_rates.0,
                realised: c.null_rates.1,
                score: nulls,
                flagged: nulls > bounds.null_rate && !c.pass,
            });
        }
    }
    for k in &comparison.keys {
        let (table, column) = k.column.split_once('.').unwrap_or(("", &k.column));
        report.summary.push(SummaryRow {
            table: table.to_string(),
            column: column.to_string(),
            check: format!("foreign key -> {}", k.target),
            expected: 0.0,
            realised: k.missing.map_or(f64::NAN, |m| m as f64),
            score: k
                .missing
                .map_or(f64::NAN, |m| m as f64 / k.checked.max(1) as f64),
            flagged: k.missing != Some(0),
        });
    }
    report.summary.sort_by_key(|r| !r.flagged);
    report.notes.push(format!(
        "original: {} ({} table(s)); generated: {} ({} table(s))",
        original.join(", "),
        a_tables.len(),
        generated.join(", "),
        b_tables.len()
    ));
    for u in &comparison.unmatched {
        report.notes.push(u.clone());
    }
    report
        .notes
        .push(format!("strata {}", env!("CARGO_PKG_VERSION")));
    report.notes.append(&mut notes);
    Ok(report)
}

fn title(opts: &Options, inputs: &[String]) -> String {
    opts.title
        .clone()
        .or_else(|| opts.spec.as_ref().map(|s| s.name.clone()))
        .unwrap_or_else(|| inputs.join(", "))
}

fn read_notes(reports: &[TableReport], tables: &[TableInput], inputs: &[String]) -> Vec<String> {
    let files: usize = tables.iter().map(|t| t.files.len()).sum();
    let rows: u64 = reports.iter().map(|t| t.rows).sum();
    let bytes: u64 = reports
        .iter()
        .filter_map(|t| t.layout.as_ref())
        .flat_map(|l| &l.files)
        .map(|f| f.bytes)
        .sum();
    vec![format!(
        "read {} table(s), {files} file(s), {rows} rows, {bytes} bytes from {}",
        tables.len(),
        inputs.join(", ")
    )]
}

/// A foreign key the spec gives: a top-level field of `child` copying a
/// key of `parent`.
#[derive(Debug, Clone)]
struct RefPlan {
    child: usize,
    column: String,
    parent: usize,
    parent_column: String,
}

/// What the scan of one table counts beside its profile.
#[derive(Default)]
struct TableState {
    verifier: Option<Verifier>,
    started: bool,
    verify_error: Option<String>,
    /// Spec fields the files lack.
    missing: Vec<String>,
    /// Key columns' values, for references.
    keys: Vec<(String, refs::Keys)>,
}

struct Gathered {
    profiles: Profiles,
    /// The spec table of each table read.
    matched: Vec<Option<usize>>,
    states: Vec<TableState>,
    plans: Vec<RefPlan>,
}

/// The spec table of each table: by name, or the one table of a spec and
/// of the inputs whatever their names.
fn match_tables(tables: &[TableInput], spec: Option<&Dataset>) -> Vec<Option<usize>> {
    let Some(spec) = spec else {
        return vec![None; tables.len()];
    };
    let by_name: Vec<Option<usize>> = tables.iter().map(|t| spec.table(&t.name)).collect();
    if by_name.iter().all(Option::is_none) && tables.len() == 1 && spec.tables.len() == 1 {
        return vec![Some(0)];
    }
    by_name
}

/// Whether `field` of spec table `table` holds keys (unique values).
fn is_key(spec: &Dataset, table: &str, field: &str) -> bool {
    let Some(t) = spec.table(table).map(|i| &spec.tables[i].spec) else {
        return false;
    };
    if t.primary_key.as_deref() == Some(field) {
        return true;
    }
    t.fields.iter().any(|f| {
        f.name == field
            && matches!(
                f.kind,
                Kind::Scalar {
                    generator: Generator::Sequence { .. }
                        | Generator::Uuid
                        // One row per day: a calendar's dates and date keys.
                        | Generator::Calendar(CalendarPart::Date | CalendarPart::DateKey),
                    ..
                }
            )
    })
}

fn ref_plans(tables: &[TableInput], matched: &[Option<usize>], spec: &Dataset) -> Vec<RefPlan> {
    let mut out = Vec::new();
    for (child, m) in matched.iter().enumerate() {
        let Some(s) = m else { continue };
        for f in &spec.tables[*s].spec.fields {
            let Kind::Scalar {
                generator: Generator::Reference(r),
                ..
            } = &f.kind
            else {
                continue;
            };
            if r.via.is_some() || r.offset.is_some() || !is_key(spec, &r.table, &r.field) {
                continue;
            }
            let Some(parent) = matched
                .iter()
                .position(|x| x.is_some_and(|x| spec.tables[x].spec.name == r.table))
            else {
                continue;
            };
            if tables[parent].csv != tables[child].csv && tables[child].csv {
                continue;
            }
            out.push(RefPlan {
                child,
                column: f.name.clone(),
                parent,
                parent_column: r.field.clone(),
            });
        }
    }
    out
}

fn gather(
    tables: &[TableInput],
    spec: Option<&Dataset>,
    store: &StoreConfig,
) -> Result<Gathered, Error> {
    let matched = match_tables(tables, spec);
    let plans = spec.map_or_else(Vec::new, |s| ref_plans(tables, &matched, s));
    let mut states: Vec<TableState> = (0..tables.len()).map(|_| TableState::default()).collect();
    for p in &plans {
        for (t, c) in [(p.child, &p.column), (p.parent, &p.parent_column)] {
            if !states[t].keys.iter().any(|k| &k.0 == c) {
                states[t].keys.push((c.clone(), refs::Keys::default()));
            }
        }
    }
    let states: Vec<Mutex<TableState>> = states.into_iter().map(Mutex::new).collect();
    let specs: Vec<Option<&Spec>> = matched
        .iter()
        .map(|m| m.and_then(|i| spec.map(|s| &s.tables[i].spec)))
        .collect();
    let each = |i: usize, b: &RecordBatch| {
        let Ok(mut st) = states[i].lock() else {
            return;
        };
        if let Some(s) = specs[i] {
            observe(&mut st, s, b);
        }
        for (name, keys) in &mut st.keys {
            keys.add_column(b, name);
        }
    };
    let profiles = strata_infer::profile_tables(tables, &ProfileOptions::default(), store, &each)?;
    let states = states
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
        .collect();
    Ok(Gathered {
        profiles,
        matched,
        states,
        plans,
    })
}

/// Feeds a batch to the table's verifier, made at the first batch for
/// the spec's fields the files hold (a layout may leave identity
/// partition columns out: their values are the directories').
fn observe(st: &mut TableState, spec: &Spec, b: &RecordBatch) {
    if !st.started {
        st.started = true;
        let schema = b.schema();
        let mut shown = spec.clone();
        st.missing = shown
            .fields
            .iter()
            .filter(|f| !f.hidden && schema.index_of(&f.name).is_err())
            .map(|f| f.name.clone())
            .collect();
        shown
            .fields
            .retain(|f| f.hidden || schema.index_of(&f.name).is_ok());
        st.verifier = Some(Verifier::new(&shown));
    }
    if let Some(v) = &mut st.verifier
        && let Err(e) = v.add_batch(b)
    {
        st.verify_error = Some(e.to_string());
        st.verifier = None;
    }
}

/// The report's name of each field of `fields` by its spec path: `a.b`
/// for a struct's field, `a[]` for a list's items.
fn names(fields: &[Field], prefix: Option<&str>, out: &mut HashMap<String, String>) {
    for f in fields {
        let name = match prefix {
            Some(p) => format!("{p}.{}", f.name),
            None => f.name.clone(),
        };
        child_names(f, &name, out);
    }
}

fn child_names(f: &Field, name: &str, out: &mut HashMap<String, String>) {
    out.insert(f.path.clone(), name.to_string());
    match &f.kind {
        Kind::Scalar { .. } => {}
        Kind::Struct(children) => names(children, Some(name), out),
        Kind::List { item, .. } => child_names(item, &format!("{name}[]"), out),
        Kind::Map { key, value, .. } => {
            child_names(key, &format!("{name}.{}", key.name), out);
            child_names(value, &format!("{name}.{}", value.name), out);
        }
    }
}

fn summary(tables: &[TableInput], g: &Gathered, spec: Option<&Dataset>) -> Vec<SummaryRow> {
    let Some(spec) = spec else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for (i, st) in g.states.iter().enumerate() {
        let (Some(v), Some(s)) = (&st.verifier, g.matched[i]) else {
            continue;
        };
        let mut by_path = HashMap::new();
        names(&spec.tables[s].spec.fields, None, &mut by_path);
        for c in v.report().checks {
            rows.push(SummaryRow {
                table: tables[i].name.clone(),
                column: by_path.get(&c.field).cloned().unwrap_or(c.field.clone()),
                flagged: c.suspicious(),
                check: c.measure,
                expected: c.specified,
                realised: c.realised,
                score: c.z,
            });
        }
    }
    rows.sort_by_key(|r| !r.flagged);
    rows
}

/// The values a sampled histogram's counts are scaled from.
const SAMPLE_VALUES: u64 = 20_000;

/// Per column with an expected histogram, its bin furthest from the
/// spec in binomial standard errors (`bin LABEL`), flagged past
/// [`strata_pipeline::verify::SUSPICIOUS_Z`]: the check of numeric
/// distributions (`zipf` over numbers, `uniform`, `normal`, ...) that
/// the share checks leave out. A sampled histogram's errors are those of
/// its sample.
fn histogram_checks(t: &TableReport) -> Vec<SummaryRow> {
    let mut out = Vec::new();
    for c in &t.columns {
        let Some(h) = &c.histogram else { continue };
        let Some(expected) = &h.expected else {
            continue;
        };
        let total: u64 = h.bins.iter().map(|b| b.count).sum();
        let want: f64 = expected.iter().sum();
        if total == 0 || want <= 0.0 {
            continue;
        }
        let n = if h.sampled {
            total.min(SAMPLE_VALUES)
        } else {
            total
        } as f64;
        let mut worst: Option<SummaryRow> = None;
        for (b, e) in h.bins.iter().zip(expected) {
            let p = (e / want).clamp(0.0, 1.0);
            // The normal approximation holds where the bin expects at
            // least 5 values in and out; a rarer bin says too little.
            if n * p < 5.0 || n * (1.0 - p) < 5.0 {
                continue;
            }
            let q = b.count as f64 / total as f64;
            let se = (p * (1.0 - p) / n).sqrt();
            let diff = q - p;
            let z = if diff.abs() <= 1e-9 {
                0.0
            } else if se > 0.0 {
                diff / se
            } else {
                diff.signum() * f64::INFINITY
            };
            if worst.as_ref().is_none_or(|w| z.abs() > w.score.abs()) {
                worst = Some(SummaryRow {
                    table: t.name.clone(),
                    column: c.name.clone(),
                    check: format!("bin {}", b.label),
                    expected: p,
                    realised: q,
                    score: z,
                    flagged: z.abs() > strata_pipeline::verify::SUSPICIOUS_Z,
                });
            }
        }
        out.extend(worst);
    }
    out
}

fn table_reports(
    tables: &[TableInput],
    g: &Gathered,
    spec: Option<&Dataset>,
    store: &StoreConfig,
    notes: &mut Vec<String>,
) -> Result<Vec<TableReport>, Error> {
    let table_rows: HashMap<String, u64> = g
        .profiles
        .tables
        .iter()
        .map(|t| (t.name.clone(), t.rows))
        .chain(
            g.matched
                .iter()
                .zip(&g.profiles.tables)
                .filter_map(|(m, t)| {
                    let s = spec?;
                    Some((s.tables[(*m)?].spec.name.clone(), t.rows))
                }),
        )
        .collect();
    let mut out = Vec::new();
    for (i, t) in g.profiles.tables.iter().enumerate() {
        let st = &g.states[i];
        let st_table = g.matched[i].and_then(|m| spec.map(|d| &d.tables[m]));
        let s = st_table.map(|t| &t.spec);
        let mut nulls = HashMap::new();
        if let Some(v) = &st.verifier {
            for c in v.report().checks.iter().filter(|c| c.measure == "null") {
                nulls.insert(c.field.clone(), c.specified);
            }
        }
        if let Some(e) = &st.verify_error {
            notes.push(format!(
                "table {}: not checked against the spec: {e}",
                t.name
            ));
        }
        if !st.missing.is_empty() {
            notes.push(format!(
                "table {}: the files have no column {} of the spec (left out by its layout, or missing)",
                t.name,
                st.missing.join(", ")
            ));
        }
        let cx = columns::Context {
            nulls: &nulls,
            rows: t.rows,
            own_rows: st_table.is_none_or(|t| t.children_of.is_none()),
            table_rows: &table_rows,
        };
        let mut report = TableReport {
            name: t.name.clone(),
            rows: t.rows,
            columns: columns::columns(&t.columns, s.map(|s| s.fields.as_slice()), &cx),
            references: Vec::new(),
            layout: None,
        };
        if !tables[i].csv {
            let key = s
                .and_then(|s| s.layout.sort_by.first())
                .and_then(|k| k.split_whitespace().next());
            report.layout = Some(layout::layout(&tables[i].files, key, store)?);
        }
        out.push(report);
    }
    references(tables, g, store, &mut out)?;
    Ok(out)
}

/// The rows of each table, by index.
fn rows_of(t: &[TableSummary], i: usize) -> u64 {
    t.get(i).map_or(0, |t| t.rows)
}

fn take_keys(states: &[TableState], t: usize, column: &str) -> Option<refs::Keys> {
    // A parent's keys may serve several children: each gets a copy.
    let k = states[t].keys.iter().find(|k| k.0 == column)?;
    Some(k.1.clone())
}

fn references(
    tables: &[TableInput],
    g: &Gathered,
    store: &StoreConfig,
    out: &mut [TableReport],
) -> Result<(), Error> {
    let t = &g.profiles.tables;
    for p in &g.plans {
        let (Some(child), Some(parent)) = (
            take_keys(&g.states, p.child, &p.column),
            take_keys(&g.states, p.parent, &p.parent_column),
        ) else {
            continue;
        };
        let rows = rows_of(t, p.parent);
        if let Some(c) = refs::count(child, parent, rows) {
            out[p.child].references.push(refs::report(
                &p.column,
                &t[p.parent].name,
                &p.parent_column,
                "spec",
                c,
                rows,
            ));
        }
    }
    // Tables without a spec: the foreign keys the profiles show.
    for r in g
        .profiles
        .relationships
        .iter()
        .filter(|r| r.kind == "foreign key")
    {
        let Some(child) = t.iter().position(|x| x.name == r.table) else {
            continue;
        };
        if g.matched[child].is_some() {
            continue;
        }
        let Some((pt, pc)) = r.target.as_deref().and_then(|x| x.split_once('.')) else {
            continue;
        };
        let Some(parent) = t.iter().position(|x| x.name == pt) else {
            continue;
        };
        if tables[child].csv || tables[parent].csv {
            continue;
        }
        let a = read_keys(&tables[child].files, &r.column, store)?;
        let b = read_keys(&tables[parent].files, pc, store)?;
        let rows = rows_of(t, parent);
        if let Some(c) = refs::count(a, b, rows) {
            out[child]
                .references
                .push(refs::report(&r.column, pt, pc, "inferred", c, rows));
        }
    }
    Ok(())
}

/// Every value of `column` in `files` (a scan of that column alone).
fn read_keys(files: &[String], column: &str, store: &StoreConfig) -> Result<refs::Keys, Error> {
    let mut keys = refs::Keys::default();
    let req = ScanRequest {
        columns: Some(vec![column.to_string()]),
        ..ScanRequest::default()
    };
    for f in files {
        let mut s = Scanner::open_location(f, store)?;
        s.scan(&req, |b| {
            keys.add_column(b, column);
            Ok(())
        })?;
    }
    Ok(keys)
}
