//! Drawing a [`Report`] as one self-contained HTML page.
//!
//! The page holds all it shows: inline CSS and inline SVG, no script,
//! nothing fetched; its only links are `#fragment`s, so it opens from
//! disk in any browser. The same report gives the same bytes. Text from
//! the report is escaped (`& < > " '`) and long values are cut (marked
//! `…`). Charts stay lean: coordinates rounded to a tenth of a pixel, at
//! most a few hundred bars, points or rows each (the rest counted in a
//! `<p class="left-out">` beside the chart), histograms of many bins
//! merged into fewer.
//!
//! # Structure
//!
//! Browser tests read this structure, in this order:
//!
//! - `<h1>`: the title; each note as `<p class="note">`; then
//!   `<nav class="toc" id="contents">`, links to the sections below.
//! - `<section id="summary" class="summary">`: `<p class="count">` ("N of
//!   M checks flagged") and `<table class="summary">`, one `<tr>` per
//!   summary row, flagged ones `<tr class="flagged">`; without rows,
//!   `<p class="no-spec">` (no spec was given) and no table. A page of
//!   compaction plans alone has no summary.
//! - Per table, `<section class="table" id="table-NAME">`:
//!   `<div class="overview">` (rows, columns, ...), then per column
//!   `<section class="column" id="col-TABLE-COLUMN" data-kind="K">` (K:
//!   `number`, `time`, `text`, `boolean`, `list` or `struct`) with
//!   `<table class="stats">` and the charts its data give, each a
//!   `<figure>` holding `<svg class="chart KIND" role="img">` whose first
//!   child is its `<title>`; KIND: `nulls` (null share per nesting
//!   level), `histogram`, `top-values`, `lengths`, `rank-frequency` (log
//!   axes; `<p class="zipf">` gives the fitted and the expected exponent).
//!   - `<section class="references">` when the table has references: per
//!     reference `<div class="reference">` with `<span class="orphans">`
//!     (`orphans bad` when there are orphans), the parents referenced,
//!     and `<svg class="chart fanout">`.
//!   - `<section class="layout">` when its files were read:
//!     `<svg class="chart partitions">`, `<svg class="chart key-ranges">`
//!     (when files have key statistics), `<svg class="chart row-groups">`
//!     (when files have row groups) and `<table class="files">`.
//! - `<section class="comparisons" id="comparisons">` when there are
//!   comparisons: per table `<div class="comparison-table">`, per column
//!   `<div class="comparison" id="cmp-TABLE-COLUMN">` holding
//!   `<figure class="original">` and `<figure class="generated">`, each
//!   with its chart (or `<p class="absent">`).
//! - `<section class="plans" id="plans">` when there are plans: per plan
//!   `<div class="plan" id="plan-NAME">` with its notes
//!   (`<ul class="notes">`), `<svg class="chart key-ranges before">` and
//!   `<svg class="chart key-ranges after">`, picked files drawn as
//!   `<rect class="bar picked">`.
//!
//! In every chart the data are drawn in one color (`bar`, `dot`) and the
//! spec's expectation, only where the report gives one, as elements of
//! class `expected` (a step line over a histogram, an outlined bar, a
//! tick on a null share, the Zipf line), with a legend.
//!
//! IDs are unique and use only ASCII letters, digits, `-` and `_`: in
//! `table-NAME`, `col-TABLE-COLUMN`, `cmp-TABLE-COLUMN` and `plan-NAME`
//! every other character of a name becomes `_` (`a.b` → `a_b`, `a[]` →
//! `a__`), `http` in any case becomes `htt_p` (the page's markup never
//! holds that word), and an ID already taken gets `-2`, `-3`, ...

mod fmt;
mod svg;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use self::fmt::{bytes, esc, esc_trunc, int, num, share};
use self::svg::{MAX_BARS, RangeBar, XAxis};
use crate::model::{
    ColumnKind, ColumnReport, LayoutReport, PlanFile, PlanReport, ReferenceReport, Report,
    TableComparison, TableReport,
};

/// Appends formatted text to a `String` (which cannot fail).
macro_rules! w {
    ($out:expr, $($arg:tt)*) => {{
        let _ = write!($out, $($arg)*);
    }};
}

/// A share as a percentage, escaped (small ones read `<0.01%`).
fn pct(share: f64) -> String {
    esc(&fmt::pct(share))
}

/// The most rows the files table lists.
const MAX_FILE_ROWS: usize = 200;

/// The page.
pub fn render(report: &Report) -> String {
    let ids = Ids::of(report);
    let mut out = String::with_capacity(64 * 1024);
    let title = if report.title.trim().is_empty() {
        "strata report"
    } else {
        report.title.as_str()
    };
    w!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head>\n<body><main>\n<h1>{}</h1>\n",
        esc_trunc(title, 200),
        esc_trunc(title, 200)
    );
    for note in &report.notes {
        w!(out, "<p class=\"note\">{}</p>\n", esc_trunc(note, 400));
    }
    toc(&mut out, report, &ids);
    if has_summary(report) {
        summary(&mut out, report, &ids);
    }
    if report.tables.is_empty() && report.comparisons.is_empty() && report.plans.is_empty() {
        out.push_str("<p class=\"empty\">No tables were read.</p>\n");
    }
    for (t, table) in report.tables.iter().enumerate() {
        table_section(&mut out, table, &ids.tables[t], &ids.columns[t], &ids);
    }
    if !report.comparisons.is_empty() {
        comparisons(&mut out, report, &ids);
    }
    if !report.plans.is_empty() {
        plans(&mut out, &report.plans, &ids);
    }
    out.push_str("</main></body></html>\n");
    out
}

/// The page's stylesheet: a light palette, data in blue, the spec's
/// expectation in orange, picked files in amber.
const CSS: &str = "\
:root{--data:#4878b0;--exp:#e0561b;--pick:#e9a23b;--ink:#1f2328;--muted:#5f6b7a;--line:#e3e6ea;--soft:#f5f7f9}\
*{box-sizing:border-box}\
body{margin:0;background:#fafbfc;color:var(--ink);font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}\
main{max-width:1200px;margin:0 auto;padding:28px 28px 72px}\
h1{font-size:28px;margin:0 0 8px}\
h2{font-size:21px;margin:40px 0 12px;padding-bottom:6px;border-bottom:2px solid var(--line)}\
h3{font-size:16px;margin:0 0 10px}\
h4{font-size:14px;margin:0 0 6px}\
a{color:#2f5f98;text-decoration:none}a:hover{text-decoration:underline}\
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\
.note{margin:2px 0;color:var(--muted)}\
nav.toc{margin:20px 0;padding:12px 18px;background:#fff;border:1px solid var(--line);border-radius:8px}\
nav.toc h2{font-size:15px;margin:0 0 6px;border:0;padding:0}\
nav.toc ol{margin:0;padding-left:20px}nav.toc li{margin:3px 0}\
nav.toc .cols{display:block;color:var(--muted);font-size:12px}\
h1,h2,h3,h4,.note,nav.toc,.cap,.zipf,.left-out{overflow-wrap:anywhere}nav.toc .cols a{margin-right:8px}\
table{border-collapse:collapse;font-variant-numeric:tabular-nums;background:#fff}\
th,td{padding:4px 10px;text-align:left;border-bottom:1px solid var(--line);vertical-align:top}\
th{font-weight:600;color:var(--muted);font-size:12.5px}\
.n{text-align:right}\
table.summary tr.flagged td{background:#fff3ed}\
table.summary tr.flagged td:first-child{box-shadow:inset 3px 0 var(--exp)}\
td.status{font-weight:600}tr.flagged td.status{color:#b93a0c}\
.count{font-weight:600}.no-spec,.empty,.absent,.left-out,.cap{color:var(--muted)}\
.overview{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0 14px}\
.kv{background:#fff;border:1px solid var(--line);border-radius:6px;padding:6px 12px}\
.kv .k{display:block;font-size:11.5px;color:var(--muted)}.kv .v{font-size:16px;font-weight:600}\
section.column,div.reference,div.comparison,div.plan,section.layout{content-visibility:auto;contain-intrinsic-size:auto 360px}\
section.column,div.reference,div.comparison,div.plan{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin:12px 0}\
section.column h3 .type,.sub{font-weight:400;color:var(--muted);font-size:13px;margin-left:8px}\
.col-body{display:flex;gap:22px;align-items:flex-start}.col-body>table.stats{flex:0 0 auto;max-width:260px}.col-body>.charts{flex:1 1 0;min-width:0}\
.charts,.pair{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}\
table.stats td{padding:2px 10px;font-size:13px}table.stats td:first-child{color:var(--muted)}\
figure{margin:0}figcaption{font-size:12.5px;font-weight:600;color:var(--muted);margin-bottom:2px}\
.cap,.left-out,.zipf{font-size:12px;margin:2px 0 0;max-width:400px}\
svg.chart{display:block;max-width:100%;height:auto;overflow:visible}\
.chart text{font-size:11px;fill:#5f6b7a}.chart .label{fill:#2d333b}.chart .axis-title{fill:#8a94a3;font-size:10.5px}\
.chart .bar,.chart .sw-data,.chart .dot{fill:var(--data)}.chart .bar.muted{fill:#a9c0dc}.chart .bar.picked{fill:var(--pick)}\
.chart .bar-bg{fill:var(--soft)}\
.chart .grid{stroke:#eceff2}.chart .axis{stroke:#9aa4b1}\
.chart .expected,.chart .sw-expected{fill:none;stroke:var(--exp);stroke-width:2}\
.chart rect.expected{stroke-width:1.4;stroke-dasharray:3 2}\
.chart .dot{fill-opacity:.8}\
.orphans.bad{color:#b42318;font-weight:600;background:#fef1f0;padding:0 5px;border-radius:4px}\
.source{font-size:11.5px;color:var(--muted);border:1px solid var(--line);border-radius:10px;padding:0 7px;margin-left:6px}\
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 10px;background:var(--data)}.swatch.picked{background:var(--pick)}\
figure.before,figure.after{margin:10px 0 18px}\
.scroll{overflow-x:auto;max-height:480px;overflow-y:auto;border:1px solid var(--line);border-radius:6px;margin-top:10px}\
.scroll table{width:100%}\
table.files td,table.files th{font-size:12.5px;white-space:nowrap}\
ul.notes{margin:4px 0 10px;padding-left:18px;color:var(--muted)}\
";

/// The IDs of the page's sections, unique and made of `[A-Za-z0-9_-]`.
struct Ids {
    used: BTreeSet<String>,
    tables: Vec<String>,
    columns: Vec<Vec<String>>,
    /// The section of each `(table, column)` by name (first one wins).
    by_name: BTreeMap<(String, String), String>,
    /// The section of each table by name.
    table_by_name: BTreeMap<String, String>,
}

/// A name's characters as an ID's: other than ASCII letters, digits, `-`
/// and `_` as `_`; at most 80 of them; `http` (in any case) as `htt_p`,
/// so that the page's markup never holds that word.
fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(80));
    for c in name.chars().take(80) {
        let c = if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            c
        } else {
            '_'
        };
        if c.eq_ignore_ascii_case(&'p')
            && out.len() >= 3
            && out[out.len() - 3..].eq_ignore_ascii_case("htt")
        {
            out.push('_');
        }
        out.push(c);
    }
    out
}

impl Ids {
    fn of(report: &Report) -> Ids {
        let mut ids = Ids {
            used: ["contents", "summary", "comparisons", "plans"]
                .into_iter()
                .map(String::from)
                .collect(),
            tables: Vec::new(),
            columns: Vec::new(),
            by_name: BTreeMap::new(),
            table_by_name: BTreeMap::new(),
        };
        for table in &report.tables {
            let id = ids.take("table", &[&table.name]);
            ids.table_by_name
                .entry(table.name.clone())
                .or_insert_with(|| id.clone());
            ids.tables.push(id);
            let cols: Vec<String> = table
                .columns
                .iter()
                .map(|col| {
                    let id = ids.take("col", &[&table.name, &col.name]);
                    ids.by_name
                        .entry((table.name.clone(), col.name.clone()))
                        .or_insert_with(|| id.clone());
                    id
                })
                .collect();
            ids.columns.push(cols);
        }
        ids
    }

    /// A fresh ID: `prefix-part-part`, with `-2`, `-3`, ... if taken.
    fn take(&mut self, prefix: &str, parts: &[&str]) -> String {
        let mut base = prefix.to_string();
        for part in parts {
            base.push('-');
            base.push_str(&sanitize(part));
        }
        let mut id = base.clone();
        let mut k = 2u64;
        while !self.used.insert(id.clone()) {
            id = format!("{base}-{k}");
            k += 1;
        }
        id
    }
}

/// The table of contents.
/// Whether the page has a summary: always, but on a page of compaction
/// plans alone (nothing there is checked against a spec).
fn has_summary(report: &Report) -> bool {
    !(!report.plans.is_empty()
        && report.tables.is_empty()
        && report.comparisons.is_empty()
        && report.summary.is_empty())
}

fn toc(out: &mut String, report: &Report, ids: &Ids) {
    out.push_str("<nav class=\"toc\" id=\"contents\"><h2>Contents</h2><ol>\n");
    let flagged = report.summary.iter().filter(|r| r.flagged).count();
    if report.summary.is_empty() {
        if has_summary(report) {
            out.push_str("<li><a href=\"#summary\">Summary</a></li>\n");
        }
    } else {
        w!(
            out,
            "<li><a href=\"#summary\">Summary</a> <span class=\"sub\">{} of {} flagged</span></li>\n",
            int(flagged as u64),
            int(report.summary.len() as u64)
        );
    }
    for (t, table) in report.tables.iter().enumerate() {
        w!(
            out,
            "<li><a href=\"#{}\">{}</a> <span class=\"cols\">",
            ids.tables[t],
            esc_trunc(&table.name, 60)
        );
        for (c, col) in table.columns.iter().enumerate() {
            w!(
                out,
                "<a href=\"#{}\">{}</a> ",
                ids.columns[t][c],
                esc_trunc(&col.name, 40)
            );
        }
        out.push_str("</span></li>\n");
    }
    if !report.comparisons.is_empty() {
        out.push_str("<li><a href=\"#comparisons\">Original and generated</a></li>\n");
    }
    if !report.plans.is_empty() {
        out.push_str("<li><a href=\"#plans\">Compaction plans</a></li>\n");
    }
    out.push_str("</ol></nav>\n");
}

/// A score with two decimals.
fn score(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        num(v)
    }
}

/// The summary of checks against the spec.
fn summary(out: &mut String, report: &Report, ids: &Ids) {
    out.push_str("<section id=\"summary\" class=\"summary\"><h2>Summary</h2>\n");
    if report.summary.is_empty() {
        out.push_str(
            "<p class=\"no-spec\">No spec was given: there is nothing to check the data against.</p>\n",
        );
        out.push_str("</section>\n");
        return;
    }
    let flagged = report.summary.iter().filter(|r| r.flagged).count();
    w!(
        out,
        "<p class=\"count\">{} of {} checks flagged</p>\n",
        int(flagged as u64),
        int(report.summary.len() as u64)
    );
    out.push_str(
        "<div class=\"scroll\"><table class=\"summary\"><thead><tr><th>table</th><th>column</th>\
         <th>check</th><th class=\"n\">expected</th><th class=\"n\">realised</th>\
         <th class=\"n\">score</th><th>status</th></tr></thead><tbody>\n",
    );
    for row in &report.summary {
        let key = (row.table.clone(), row.column.clone());
        let column = match ids.by_name.get(&key) {
            Some(id) => format!("<a href=\"#{id}\">{}</a>", esc_trunc(&row.column, 60)),
            None => esc_trunc(&row.column, 60),
        };
        w!(
            out,
            "<tr{}><td>{}</td><td>{column}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"status\">{}</td></tr>\n",
            if row.flagged {
                " class=\"flagged\""
            } else {
                ""
            },
            esc_trunc(&row.table, 60),
            esc_trunc(&row.check, 80),
            num(row.expected),
            num(row.realised),
            score(row.score),
            if row.flagged { "flagged" } else { "ok" }
        );
    }
    out.push_str("</tbody></table></div></section>\n");
}

/// One figure of the overview: a label and its value.
fn kv(out: &mut String, k: &str, v: &str) {
    w!(
        out,
        "<div class=\"kv\"><span class=\"k\">{k}</span><span class=\"v\">{v}</span></div>"
    );
}

/// A table's section: overview, columns, references, layout.
fn table_section(out: &mut String, table: &TableReport, id: &str, col_ids: &[String], ids: &Ids) {
    w!(
        out,
        "<section class=\"table\" id=\"{id}\"><h2>Table <code>{}</code></h2>\n<div class=\"overview\">",
        esc_trunc(&table.name, 100)
    );
    kv(out, "rows", &int(table.rows));
    kv(out, "columns", &int(table.columns.len() as u64));
    if !table.references.is_empty() {
        kv(out, "references", &int(table.references.len() as u64));
    }
    if let Some(layout) = &table.layout {
        kv(out, "files", &int(layout.files.len() as u64));
        let total = layout
            .files
            .iter()
            .fold(0u64, |a, f| a.saturating_add(f.bytes));
        kv(out, "bytes", &bytes(total));
        if layout.partitions.iter().any(|p| !p.path.is_empty()) {
            kv(out, "partitions", &int(layout.partitions.len() as u64));
        }
    }
    out.push_str("</div>\n");
    if table.columns.is_empty() {
        out.push_str("<p class=\"empty\">No columns.</p>\n");
    }
    for (col, cid) in table.columns.iter().zip(col_ids) {
        column_section(out, &table.name, col, cid);
    }
    if !table.references.is_empty() {
        references(out, table, ids);
    }
    if let Some(layout) = &table.layout {
        layout_section(out, &table.name, layout);
    }
    out.push_str("</section>\n");
}

/// The `data-kind` of a column.
fn kind_name(kind: ColumnKind) -> &'static str {
    match kind {
        ColumnKind::Number => "number",
        ColumnKind::Time => "time",
        ColumnKind::Text => "text",
        ColumnKind::Boolean => "boolean",
        ColumnKind::List => "list",
        ColumnKind::Struct => "struct",
    }
}

/// A figure: a caption above the chart, and lines of notes below (`(class,
/// text)`, escaped here).
fn figure(class: &str, caption: &str, chart: &str, notes: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(chart.len() + 200);
    if class.is_empty() {
        out.push_str("<figure>");
    } else {
        w!(out, "<figure class=\"{class}\">");
    }
    w!(out, "<figcaption>{}</figcaption>{chart}", esc(caption));
    for (class, text) in notes {
        w!(out, "<p class=\"{class}\">{}</p>", esc(text));
    }
    out.push_str("</figure>");
    out
}

/// The non-null values of a column the shares of its top values are of.
fn non_null(col: &ColumnReport) -> u64 {
    match &col.stats {
        Some(s) if s.count > 0 => s.count,
        _ => col
            .top
            .iter()
            .fold(col.other, |a, t| a.saturating_add(t.count)),
    }
}

/// The charts a column can have.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Chart {
    Nulls,
    Histogram,
    TopValues,
    Lengths,
    RankFrequency,
}

/// The chart `which` of a column, as a figure, if its data are there.
fn chart(table: &str, col: &ColumnReport, which: Chart, class: &str) -> Option<String> {
    let name = format!("{table}.{}", col.name);
    let caption = |what: &str| match class {
        "original" => format!("Original: {}", what.to_lowercase()),
        "generated" => format!("Generated: {}", what.to_lowercase()),
        _ => what.to_string(),
    };
    let figure = |class: &str, what: &str, svg: &str, notes: &[(&str, String)]| {
        figure(class, &caption(what), svg, notes)
    };
    match which {
        Chart::Nulls => {
            if col.nulls.is_empty() {
                return None;
            }
            let svg = svg::nulls(&format!("{name}: null share"), &col.nulls);
            let mut notes = Vec::new();
            if col.nulls.len() > svg::MAX_LEVELS {
                notes.push((
                    "left-out",
                    format!(
                        "{} more levels not drawn",
                        col.nulls.len() - svg::MAX_LEVELS
                    ),
                ));
            }
            Some(figure(class, "Nulls", &svg, &notes))
        }
        Chart::Histogram => {
            let h = col.histogram.as_ref().filter(|h| !h.bins.is_empty())?;
            let axis = if col.kind == ColumnKind::Time {
                XAxis::BinLabels
            } else {
                XAxis::Numbers
            };
            let svg = svg::histogram("histogram", &format!("{name}: histogram"), h, axis);
            let mut notes = Vec::new();
            if h.sampled {
                notes.push(("cap", "Counts scaled from a sample.".to_string()));
            }
            Some(figure(class, "Histogram", &svg, &notes))
        }
        Chart::TopValues => {
            if col.top.is_empty() {
                return None;
            }
            let total = non_null(col);
            let svg = svg::top_values(&format!("{name}: top values"), &col.top, total);
            let mut notes = Vec::new();
            if col.top.len() > svg::MAX_TOP {
                notes.push((
                    "left-out",
                    format!(
                        "{} more values not drawn",
                        int((col.top.len() - svg::MAX_TOP) as u64)
                    ),
                ));
            }
            if col.other > 0 {
                notes.push((
                    "cap",
                    format!(
                        "Other values: {} rows ({}).",
                        int(col.other),
                        fmt::pct(share(col.other, total))
                    ),
                ));
            }
            if !col.top_exact {
                notes.push((
                    "cap",
                    "Approximate counts (heavy-hitters sketch).".to_string(),
                ));
            }
            Some(figure(class, "Top values", &svg, &notes))
        }
        Chart::Lengths => {
            let h = col.lengths.as_ref().filter(|h| !h.bins.is_empty())?;
            let svg = svg::histogram("lengths", &format!("{name}: lengths"), h, XAxis::Integers);
            let mut notes = Vec::new();
            if h.sampled {
                notes.push(("cap", "Counts scaled from a sample.".to_string()));
            }
            Some(figure(class, "Lengths", &svg, &notes))
        }
        Chart::RankFrequency => {
            let rf = col
                .rank_frequency
                .as_ref()
                .filter(|rf| !rf.points.is_empty())?;
            let svg =
                svg::rank_frequency(&format!("{name}: rank and frequency"), rf, non_null(col));
            let fitted = rf
                .fitted_s
                .map_or("none".to_string(), |s| format!("{s:.2}"));
            let mut text = format!("Fitted s = {fitted}");
            if let Some((s, n)) = rf.expected {
                w!(text, " · expected s = {s:.2} over {} values", int(n));
            }
            w!(text, " · {} distinct", int(rf.distinct));
            let mut notes = vec![("zipf", text)];
            if rf.points.len() > MAX_BARS {
                notes.push((
                    "cap",
                    format!(
                        "{} of {} points drawn",
                        MAX_BARS,
                        int(rf.points.len() as u64)
                    ),
                ));
            }
            Some(figure(class, "Rank and frequency", &svg, &notes))
        }
    }
}

/// A column's statistics as a small table.
fn stats_table(out: &mut String, col: &ColumnReport) {
    out.push_str("<table class=\"stats\"><tbody>");
    let mut row = |k: &str, v: String| w!(out, "<tr><td>{k}</td><td class=\"n\">{v}</td></tr>");
    row(
        "type",
        format!("<code>{}</code>", esc_trunc(&col.data_type, 40)),
    );
    row("slots", int(col.slots));
    if let Some(level) = col.nulls.last() {
        row(
            "nulls",
            format!(
                "{} ({})",
                int(level.nulls),
                pct(share(level.nulls, level.slots))
            ),
        );
    }
    if let Some(s) = &col.stats {
        row("values", int(s.count));
        let approx = if s.distinct_exact { "" } else { "≈" };
        row("distinct", format!("{approx}{}", int(s.distinct)));
        let bound = |label: &str, v: f64| {
            if label.is_empty() {
                esc(&num(v))
            } else {
                esc_trunc(label, 32)
            }
        };
        row("min", bound(&s.min_label, s.min));
        row("max", bound(&s.max_label, s.max));
        if col.kind != ColumnKind::Time {
            row("mean", esc(&num(s.mean)));
            row("std", esc(&num(s.std)));
        }
    }
    out.push_str("</tbody></table>");
}

/// A column's section: statistics and charts.
fn column_section(out: &mut String, table: &str, col: &ColumnReport, id: &str) {
    w!(
        out,
        "<section class=\"column\" id=\"{id}\" data-kind=\"{}\"><h3><code>{}</code><span class=\"type\">{}</span></h3><div class=\"col-body\">",
        kind_name(col.kind),
        esc_trunc(&col.name, 100),
        kind_name(col.kind)
    );
    stats_table(out, col);
    out.push_str("<div class=\"charts\">");
    for which in [
        Chart::Histogram,
        Chart::TopValues,
        Chart::Lengths,
        Chart::RankFrequency,
        Chart::Nulls,
    ] {
        if let Some(fig) = chart(table, col, which, "") {
            out.push_str(&fig);
        }
    }
    out.push_str("</div></div></section>\n");
}

/// A table's references to its parents.
fn references(out: &mut String, table: &TableReport, ids: &Ids) {
    out.push_str("<section class=\"references\"><h3>References</h3>\n");
    for r in &table.references {
        reference(out, &table.name, r, ids);
    }
    out.push_str("</section>\n");
}

fn reference(out: &mut String, table: &str, r: &ReferenceReport, ids: &Ids) {
    let parent = match ids.table_by_name.get(&r.parent) {
        Some(id) => format!("<a href=\"#{id}\">{}</a>", esc_trunc(&r.parent, 60)),
        None => esc_trunc(&r.parent, 60),
    };
    w!(
        out,
        "<div class=\"reference\"><h4><code>{}</code> → <code>{parent}.{}</code>",
        esc_trunc(&r.column, 60),
        esc_trunc(&r.parent_column, 60)
    );
    if !r.source.is_empty() {
        w!(
            out,
            "<span class=\"source\">{}</span>",
            esc_trunc(&r.source, 20)
        );
    }
    w!(
        out,
        "</h4><p>{} values checked · <span class=\"orphans{}\">{} orphans ({})</span> · \
         {} of {} parent rows referenced ({})</p>",
        int(r.checked),
        if r.orphans > 0 { " bad" } else { "" },
        int(r.orphans),
        pct(share(r.orphans, r.checked)),
        int(r.referenced),
        int(r.parent_rows),
        pct(share(r.referenced, r.parent_rows))
    );
    if !r.fanout.is_empty() {
        let last = r.fanout.len() - 1;
        let bars: Vec<(String, u64, bool)> = r
            .fanout
            .iter()
            .enumerate()
            .map(|(i, &(children, parents))| {
                let label = if i == last && children >= 50 {
                    format!("{children}+")
                } else {
                    int(children)
                };
                (label, parents, children == 0)
            })
            .collect();
        let svg = svg::category_bars(
            "fanout",
            &format!(
                "{table}.{} → {}.{}: children per parent",
                r.column, r.parent, r.parent_column
            ),
            &bars,
            "children per parent",
            "parents",
        );
        let mut notes = Vec::new();
        if bars.len() > MAX_BARS {
            notes.push((
                "left-out",
                format!(
                    "{} more bars not drawn",
                    int((bars.len() - MAX_BARS) as u64)
                ),
            ));
        }
        out.push_str(&figure(
            "",
            "Fan-out (parents without children in light blue)",
            &svg,
            &notes,
        ));
    }
    out.push_str("</div>\n");
}

/// A table's files: partitions, key ranges, row groups, and the list.
fn layout_section(out: &mut String, table: &str, layout: &LayoutReport) {
    out.push_str("<section class=\"layout\"><h3>Files</h3>\n");
    if layout.files.is_empty() && layout.partitions.is_empty() {
        out.push_str("<p class=\"empty\">No files.</p>");
    }
    out.push_str("<div class=\"charts\">");
    if !layout.partitions.is_empty() {
        let parts: Vec<(String, u64, u64)> = layout
            .partitions
            .iter()
            .map(|p| (p.path.clone(), p.files, p.bytes))
            .collect();
        let svg = svg::partitions(&format!("{table}: files and bytes per partition"), &parts);
        let mut notes = Vec::new();
        if parts.len() > svg::MAX_PARTITIONS {
            notes.push((
                "left-out",
                format!(
                    "{} more partitions not drawn",
                    int((parts.len() - svg::MAX_PARTITIONS) as u64)
                ),
            ));
        }
        out.push_str(&figure("", "Partitions", &svg, &notes));
    }
    let ranged: Vec<RangeBar<'_>> = layout
        .files
        .iter()
        .filter_map(|f| {
            f.key_range.as_ref().map(|range| RangeBar {
                name: &f.path,
                range,
                picked: false,
            })
        })
        .collect();
    if !ranged.is_empty() {
        let key = layout.key.as_deref().unwrap_or("the key");
        let svg = svg::key_ranges(
            "key-ranges",
            &format!("{table}: range of {key} per file"),
            &ranged,
            Some(svg::range_span(ranged.iter().map(|b| b.range))),
        );
        let all: Vec<_> = ranged.iter().map(|b| b.range).collect();
        let mut notes = vec![(
            "cap",
            format!(
                "Deepest overlap: {} files.",
                int(svg::overlap_depth(&all) as u64)
            ),
        )];
        if ranged.len() > MAX_BARS {
            notes.push((
                "left-out",
                format!(
                    "{} more files not drawn",
                    int((ranged.len() - MAX_BARS) as u64)
                ),
            ));
        }
        let missing = layout.files.len() - ranged.len();
        if missing > 0 {
            notes.push((
                "cap",
                format!(
                    "{} files without statistics of the key.",
                    int(missing as u64)
                ),
            ));
        }
        out.push_str(&figure("", &format!("Key ranges of {key}"), &svg, &notes));
    }
    if layout.files.iter().any(|f| !f.row_groups.is_empty()) {
        let svg = svg::row_groups(&format!("{table}: row groups"), &layout.files);
        out.push_str(&figure("", "Row groups", &svg, &[]));
    }
    out.push_str("</div>\n");
    if !layout.files.is_empty() {
        out.push_str(
            "<div class=\"scroll\"><table class=\"files\"><thead><tr><th>file</th><th>partition</th>\
             <th class=\"n\">rows</th><th class=\"n\">bytes</th><th class=\"n\">row groups</th>\
             <th>key range</th></tr></thead><tbody>\n",
        );
        for f in layout.files.iter().take(MAX_FILE_ROWS) {
            let range = f.key_range.as_ref().map_or(String::new(), |r| {
                format!(
                    "{} – {}",
                    esc_trunc(&r.lo_label, 30),
                    esc_trunc(&r.hi_label, 30)
                )
            });
            w!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td>{range}</td></tr>\n",
                esc_trunc(&f.path, 80),
                esc_trunc(&f.partition, 60),
                int(f.rows),
                bytes(f.bytes),
                int(f.row_groups.len() as u64)
            );
        }
        out.push_str("</tbody></table></div>\n");
        if layout.files.len() > MAX_FILE_ROWS {
            w!(
                out,
                "<p class=\"left-out\">{} more files not listed</p>\n",
                int((layout.files.len() - MAX_FILE_ROWS) as u64)
            );
        }
    }
    out.push_str("</section>\n");
}

/// The chart a comparison shows for a column: its first of histogram,
/// top values, lengths and nulls.
fn main_chart(col: &ColumnReport) -> Option<Chart> {
    if col.histogram.as_ref().is_some_and(|h| !h.bins.is_empty()) {
        Some(Chart::Histogram)
    } else if !col.top.is_empty() {
        Some(Chart::TopValues)
    } else if col.lengths.as_ref().is_some_and(|h| !h.bins.is_empty()) {
        Some(Chart::Lengths)
    } else if !col.nulls.is_empty() {
        Some(Chart::Nulls)
    } else {
        None
    }
}

/// One side of a comparison: the chart `which` of `col`, else its own
/// main chart, else a line saying it is absent.
fn comparison_side(
    side: &str,
    table: &str,
    col: Option<&ColumnReport>,
    which: Option<Chart>,
) -> String {
    let fig = col.and_then(|col| {
        which
            .and_then(|w| chart(table, col, w, side))
            .or_else(|| main_chart(col).and_then(|w| chart(table, col, w, side)))
    });
    fig.unwrap_or_else(|| {
        let what = if col.is_some() { "no chart" } else { "absent" };
        format!("<figure class=\"{side}\"><figcaption>{side}</figcaption><p class=\"absent\">{what}</p></figure>")
    })
}

/// The original's columns beside the generated ones'.
fn comparisons(out: &mut String, report: &Report, ids: &Ids) {
    let mut ids = Ids {
        used: ids.used.clone(),
        tables: Vec::new(),
        columns: Vec::new(),
        by_name: BTreeMap::new(),
        table_by_name: BTreeMap::new(),
    };
    out.push_str(
        "<section class=\"comparisons\" id=\"comparisons\"><h2>Original and generated</h2>\n",
    );
    for tc in &report.comparisons {
        comparison_table(out, report, tc, &mut ids);
    }
    out.push_str("</section>\n");
}

fn comparison_table(out: &mut String, report: &Report, tc: &TableComparison, ids: &mut Ids) {
    w!(
        out,
        "<div class=\"comparison-table\"><h3>Table <code>{}</code><span class=\"sub\">original {} rows · generated {} rows</span></h3>\n",
        esc_trunc(&tc.name, 100),
        int(tc.original.rows),
        int(tc.generated.rows)
    );
    let mut names: Vec<&str> = tc
        .original
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    for c in &tc.generated.columns {
        if !names.contains(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    for name in names {
        let original = tc.original.columns.iter().find(|c| c.name == name);
        let generated = tc.generated.columns.iter().find(|c| c.name == name);
        let id = ids.take("cmp", &[&tc.name, name]);
        w!(
            out,
            "<div class=\"comparison\" id=\"{id}\"><h4><code>{}</code>",
            esc_trunc(name, 100)
        );
        let checks: Vec<String> = report
            .summary
            .iter()
            .filter(|r| r.table == tc.name && r.column == name)
            .map(|r| {
                format!(
                    "{} {}{}",
                    esc_trunc(&r.check, 30),
                    score(r.score),
                    if r.flagged { " (flagged)" } else { "" }
                )
            })
            .collect();
        if !checks.is_empty() {
            w!(out, "<span class=\"sub\">{}</span>", checks.join(" · "));
        }
        out.push_str("</h4><div class=\"pair\">");
        let which = original
            .and_then(main_chart)
            .or_else(|| generated.and_then(main_chart));
        out.push_str(&comparison_side("original", &tc.name, original, which));
        out.push_str(&comparison_side("generated", &tc.name, generated, which));
        out.push_str("</div></div>\n");
    }
    out.push_str("</div>\n");
}

/// The compaction plans.
fn plans(out: &mut String, plans: &[PlanReport], ids: &Ids) {
    let mut ids = Ids {
        used: ids.used.clone(),
        tables: Vec::new(),
        columns: Vec::new(),
        by_name: BTreeMap::new(),
        table_by_name: BTreeMap::new(),
    };
    out.push_str("<section class=\"plans\" id=\"plans\"><h2>Compaction plans</h2>\n");
    for plan in plans {
        let id = ids.take("plan", &[&plan.name]);
        w!(
            out,
            "<div class=\"plan\" id=\"{id}\"><h3><code>{}</code><span class=\"sub\">key {}</span></h3>",
            esc_trunc(&plan.name, 100),
            esc_trunc(&plan.key, 60)
        );
        if !plan.notes.is_empty() {
            out.push_str("<ul class=\"notes\">");
            for note in &plan.notes {
                w!(out, "<li>{}</li>", esc_trunc(note, 300));
            }
            out.push_str("</ul>");
        }
        let span = svg::range_span(plan.before.iter().chain(&plan.after).map(|f| &f.range));
        plan_side(out, plan, "before", &plan.before, span);
        plan_side(out, plan, "after", &plan.after, span);
        out.push_str("</div>\n");
    }
    out.push_str("</section>\n");
}

fn plan_side(
    out: &mut String,
    plan: &PlanReport,
    side: &str,
    files: &[PlanFile],
    span: (f64, f64),
) {
    let picked = files.iter().filter(|f| f.picked).count();
    let (what, legend) = if side == "before" {
        ("merged", "picked: merged by the plan")
    } else {
        ("written", "written by the merge")
    };
    let caption = format!(
        "{} — {} files, {} {what}",
        if side == "before" { "Before" } else { "After" },
        int(files.len() as u64),
        int(picked as u64)
    );
    if files.is_empty() {
        w!(
            out,
            "<figure class=\"{side}\"><figcaption>{}</figcaption><p class=\"empty\">No files.</p></figure>",
            esc(&caption)
        );
        return;
    }
    let bars: Vec<RangeBar<'_>> = files
        .iter()
        .map(|f| RangeBar {
            name: &f.name,
            range: &f.range,
            picked: f.picked,
        })
        .collect();
    let svg = svg::key_ranges(
        &format!("key-ranges {side}"),
        &format!("{}: range of {} per file, {side}", plan.name, plan.key),
        &bars,
        Some(span),
    );
    let all: Vec<_> = files.iter().map(|f| &f.range).collect();
    let mut notes = vec![(
        "cap",
        format!(
            "Deepest overlap: {} files.",
            int(svg::overlap_depth(&all) as u64)
        ),
    )];
    if files.len() > MAX_BARS {
        notes.push((
            "left-out",
            format!(
                "{} more files not drawn",
                int((files.len() - MAX_BARS) as u64)
            ),
        ));
    }
    let mut fig = figure(side, &caption, &svg, &notes);
    let legend = format!(
        "<p class=\"cap\"><span class=\"swatch\"></span>file<span class=\"swatch picked\"></span>{legend}</p></figure>"
    );
    fig.truncate(fig.len() - "</figure>".len());
    fig.push_str(&legend);
    out.push_str(&fig);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        Bin, FileReport, Histogram, KeyRange, NullLevel, PartitionReport, RankFrequency, Stats,
        SummaryRow, TopValue,
    };

    // ---- building reports ----

    fn bins(lo: f64, width: f64, counts: &[u64], label: impl Fn(f64) -> String) -> Vec<Bin> {
        counts
            .iter()
            .enumerate()
            .map(|(i, &count)| {
                let a = lo + width * i as f64;
                Bin {
                    lo: a,
                    hi: a + width,
                    label: label(a),
                    count,
                }
            })
            .collect()
    }

    fn date(days: f64) -> String {
        // Days since 1970 as a month label, good enough for bins.
        let months = (days / 30.44).floor() as i64;
        format!(
            "{}-{:02}",
            1970 + months.div_euclid(12),
            months.rem_euclid(12) + 1
        )
    }

    fn stats(count: u64, min: f64, max: f64, mean: f64, std: f64, distinct: u64) -> Stats {
        Stats {
            count,
            min,
            max,
            mean,
            std,
            distinct,
            distinct_exact: distinct < 1000,
            min_label: String::new(),
            max_label: String::new(),
        }
    }

    fn level(path: &str, slots: u64, nulls: u64, expected: Option<f64>) -> NullLevel {
        NullLevel {
            path: path.into(),
            slots,
            nulls,
            expected,
        }
    }

    fn column(name: &str, kind: ColumnKind, data_type: &str, slots: u64) -> ColumnReport {
        ColumnReport {
            name: name.into(),
            data_type: data_type.into(),
            kind,
            slots,
            nulls: vec![level(name, slots, 0, None)],
            stats: None,
            histogram: None,
            top: Vec::new(),
            other: 0,
            top_exact: true,
            lengths: None,
            rank_frequency: None,
        }
    }

    fn top(values: &[(&str, u64, Option<f64>)]) -> Vec<TopValue> {
        values
            .iter()
            .map(|&(v, count, expected_share)| TopValue {
                value: v.into(),
                count,
                expected_share,
            })
            .collect()
    }

    fn zipf_points(s: f64, n: u64, total: f64) -> Vec<(u64, u64)> {
        let h: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
        let mut ranks: Vec<u64> = (0..40)
            .map(|i| (n as f64).powf(i as f64 / 39.0).round() as u64)
            .collect();
        ranks.dedup();
        ranks
            .into_iter()
            .map(|r| {
                (
                    r,
                    ((total / h) * (r as f64).powf(-s) * 1.07).max(1.0) as u64,
                )
            })
            .collect()
    }

    fn customers(rows: u64) -> TableReport {
        let mut id = column("id", ColumnKind::Number, "Int64", rows);
        id.stats = Some(stats(
            rows,
            1.0,
            rows as f64,
            rows as f64 / 2.0,
            rows as f64 / 3.5,
            rows,
        ));
        id.histogram = Some(Histogram {
            bins: bins(1.0, rows as f64 / 20.0, &[rows / 20; 20], |v| {
                format!("{v}")
            }),
            expected: Some(vec![rows as f64 / 20.0; 20]),
            sampled: false,
        });
        let mut name = column("name", ColumnKind::Text, "Utf8", rows);
        name.nulls = vec![level("name", rows, rows / 50, Some(0.01))];
        name.stats = Some(stats(rows - rows / 50, 0.0, 0.0, 0.0, 0.0, 4200));
        name.top = top(&[
            ("Alice", 420, Some(0.04)),
            ("Bob", 390, Some(0.04)),
            ("<script>alert(1)</script>", 250, Some(0.02)),
            (
                "a very long name that goes on and on and on well past any sensible width",
                120,
                None,
            ),
            ("", 30, None),
        ]);
        name.other = (rows - rows / 50).saturating_sub(1210);
        name.lengths = Some(Histogram {
            bins: bins(
                0.0,
                1.0,
                &[0, 5, 40, 300, 1800, 2600, 2100, 1300, 700, 300, 100],
                |v| format!("{v}"),
            ),
            expected: None,
            sampled: true,
        });
        let mut signup = column("signup", ColumnKind::Time, "Date32", rows);
        signup.stats = Some(Stats {
            min_label: "2020-01-01".into(),
            max_label: "2024-12-31".into(),
            ..stats(rows, 18262.0, 20088.0, 19000.0, 500.0, 1800)
        });
        signup.histogram = Some(Histogram {
            bins: bins(
                18262.0,
                91.3,
                &[
                    200, 250, 300, 320, 380, 400, 450, 500, 520, 560, 600, 640, 700, 720, 760, 800,
                    820, 880, 900, 0,
                ],
                date,
            ),
            expected: Some((0..20).map(|i| 300.0 + 30.0 * i as f64).collect()),
            sampled: false,
        });
        let mut active = column("active", ColumnKind::Boolean, "Boolean", rows);
        active.top = top(&[
            ("true", rows * 7 / 10, Some(0.75)),
            ("false", rows * 3 / 10, Some(0.25)),
        ]);
        let mut address = column(
            "address",
            ColumnKind::Struct,
            "Struct(city Utf8, zip Utf8)",
            rows,
        );
        address.nulls = vec![level("address", rows, rows / 10, Some(0.1))];
        let mut city = column("address.city", ColumnKind::Text, "Utf8", rows - rows / 10);
        city.nulls = vec![
            level("address", rows, rows / 10, Some(0.1)),
            level("address.city", rows - rows / 10, rows / 20, Some(0.05)),
        ];
        let city_values = rows - rows / 10 - rows / 20;
        city.stats = Some(stats(city_values, 0.0, 0.0, 0.0, 0.0, 800));
        city.top = top(&[
            ("Lyon", 900, None),
            ("Paris", 700, None),
            ("Oslo", 500, None),
        ]);
        city.other = city_values.saturating_sub(2100);
        city.top_exact = false;
        city.rank_frequency = Some(RankFrequency {
            points: zipf_points(1.1, 800, city_values as f64),
            distinct: 800,
            fitted_s: Some(1.08),
            expected: Some((1.1, 800)),
        });
        let mut tags = column("tags", ColumnKind::List, "List(Utf8)", rows);
        tags.lengths = Some(Histogram {
            bins: bins(0.0, 1.0, &[1000, 3000, 3500, 1500, 700, 300], |v| {
                format!("{v}")
            }),
            expected: Some(vec![1200.0, 2800.0, 3300.0, 1700.0, 700.0, 300.0]),
            sampled: false,
        });
        let mut tag_items = column("tags[]", ColumnKind::Text, "Utf8", 22000);
        tag_items.top = top(&[
            ("red", 5000, None),
            ("green", 4000, None),
            ("blue", 3000, None),
        ]);
        tag_items.other = 10000;
        let files: Vec<FileReport> = (0..12)
            .map(|i| {
                let lo = (i * 700) as f64;
                let hi = lo + 1200.0 + (i % 3) as f64 * 400.0;
                FileReport {
                    path: format!("region=eu/part-{i:04}.parquet"),
                    partition: if i < 8 {
                        "region=eu".into()
                    } else {
                        "region=us".into()
                    },
                    bytes: 1_000_000 + i * 123_456,
                    rows: rows / 12,
                    row_groups: vec![rows / 24, (rows / 24).saturating_sub(i)],
                    key_range: Some(KeyRange {
                        lo,
                        hi,
                        lo_label: format!("{}", lo as u64),
                        hi_label: format!("{}", hi as u64),
                    }),
                }
            })
            .collect();
        TableReport {
            name: "customers".into(),
            rows,
            columns: vec![id, name, signup, active, address, city, tags, tag_items],
            references: Vec::new(),
            layout: Some(LayoutReport {
                key: Some("id".into()),
                partitions: vec![
                    PartitionReport {
                        path: "region=eu".into(),
                        files: 8,
                        bytes: 9_000_000,
                        rows: rows * 2 / 3,
                    },
                    PartitionReport {
                        path: "region=us".into(),
                        files: 4,
                        bytes: 5_000_000,
                        rows: rows / 3,
                    },
                ],
                files,
            }),
        }
    }

    fn orders(rows: u64) -> TableReport {
        let mut order_id = column("order_id", ColumnKind::Number, "Int64", rows);
        order_id.stats = Some(stats(rows, 1.0, rows as f64, rows as f64 / 2.0, 1.0, rows));
        let mut customer_id = column("customer_id", ColumnKind::Number, "Int64", rows);
        customer_id.stats = Some(stats(rows, 1.0, 10_000.0, 2000.0, 1500.0, 6000));
        customer_id.rank_frequency = Some(RankFrequency {
            points: zipf_points(0.9, 6000, rows as f64),
            distinct: 6000,
            fitted_s: Some(0.93),
            expected: None,
        });
        let mut amount = column("amount", ColumnKind::Number, "Decimal128(12, 2)", rows);
        let counts: Vec<u64> = (0..40)
            .map(|i| {
                let z = (i as f64 - 18.0) / 6.0;
                (rows as f64 * 0.066 * (-z * z / 2.0).exp()) as u64
            })
            .collect();
        let expected: Vec<f64> = (0..40)
            .map(|i| {
                let z = (i as f64 - 20.0) / 6.0;
                rows as f64 * 0.066 * (-z * z / 2.0).exp()
            })
            .collect();
        amount.stats = Some(stats(rows, 0.5, 999.99, 452.25, 150.0, 90_000));
        amount.histogram = Some(Histogram {
            bins: bins(0.0, 25.0, &counts, |v| format!("{v:.2}")),
            expected: Some(expected),
            sampled: true,
        });
        TableReport {
            name: "orders".into(),
            rows,
            columns: vec![order_id, customer_id, amount],
            references: vec![ReferenceReport {
                column: "customer_id".into(),
                parent: "customers".into(),
                parent_column: "id".into(),
                checked: rows,
                orphans: 12,
                parent_rows: 10_000,
                referenced: 6000,
                fanout: (0..=51u64)
                    .map(|k| {
                        let v = if k == 0 {
                            4000
                        } else {
                            (3000.0 * (-(k as f64) / 6.0).exp()) as u64 + u64::from(k == 51) * 40
                        };
                        (k, v)
                    })
                    .collect(),
                source: "spec".into(),
            }],
            layout: None,
        }
    }

    fn plan() -> PlanReport {
        let range = |lo: f64, hi: f64| KeyRange {
            lo,
            hi,
            lo_label: format!("k{:05}", lo as u64),
            hi_label: format!("k{:05}", hi as u64),
        };
        let before: Vec<PlanFile> = (0..10)
            .map(|i| PlanFile {
                name: format!("part-{i}.parquet"),
                bytes: 10_000_000,
                range: range(
                    i as f64 * 100.0,
                    i as f64 * 100.0 + if i % 3 == 0 { 500.0 } else { 150.0 },
                ),
                picked: i % 3 == 0,
            })
            .collect();
        let mut after: Vec<PlanFile> = before.iter().filter(|f| !f.picked).cloned().collect();
        after.push(PlanFile {
            name: "merged-0.parquet".into(),
            bytes: 40_000_000,
            range: range(0.0, 1400.0),
            picked: true,
        });
        PlanReport {
            name: "shop/orders".into(),
            key: "order_id".into(),
            before,
            after,
            notes: vec!["budget 1 GiB".into(), "overlap depth 4 → 2".into()],
        }
    }

    fn summary_rows() -> Vec<SummaryRow> {
        let row = |table: &str,
                   column: &str,
                   check: &str,
                   expected: f64,
                   realised: f64,
                   score: f64,
                   flagged: bool| SummaryRow {
            table: table.into(),
            column: column.into(),
            check: check.into(),
            expected,
            realised,
            score,
            flagged,
        };
        vec![
            row("customers", "name", "null", 0.01, 0.02, 10.05, true),
            row("orders", "amount", "mean", 450.0, 452.25, 4.2, true),
            row("customers", "active", "value true", 0.75, 0.7, 1.5, false),
            row(
                "customers",
                "address.city",
                "null",
                0.05,
                0.0556,
                0.8,
                false,
            ),
            row("customers", "tags", "mean length", 1.9, 1.95, 0.3, false),
        ]
    }

    /// A report with every section: summary, two tables (columns of each
    /// kind, a reference, files), a comparison and a plan.
    fn realistic() -> Report {
        let customers = customers(10_000);
        let mut generated = customers.clone();
        generated.rows = 9_800;
        for col in &mut generated.columns {
            if let Some(h) = &mut col.histogram {
                for (i, b) in h.bins.iter_mut().enumerate() {
                    b.count = b.count * (90 + (i as u64 * 7) % 20) / 100;
                }
            }
        }
        Report {
            title: "Shop <demo> & co".into(),
            notes: vec![
                "Read 2 tables from ./shop".into(),
                "Spec: shop.sql · strata 0.9.0".into(),
            ],
            summary: summary_rows(),
            tables: vec![customers.clone(), orders(50_000)],
            comparisons: vec![TableComparison {
                name: "customers".into(),
                original: customers,
                generated,
            }],
            plans: vec![plan()],
        }
    }

    /// The report without any expectation.
    fn without_expectations(mut report: Report) -> Report {
        fn strip(t: &mut TableReport) {
            for col in &mut t.columns {
                for l in &mut col.nulls {
                    l.expected = None;
                }
                for h in [&mut col.histogram, &mut col.lengths].into_iter().flatten() {
                    h.expected = None;
                }
                for v in &mut col.top {
                    v.expected_share = None;
                }
                if let Some(rf) = &mut col.rank_frequency {
                    rf.expected = None;
                }
            }
        }
        report.tables.iter_mut().for_each(strip);
        for c in &mut report.comparisons {
            strip(&mut c.original);
            strip(&mut c.generated);
        }
        report
    }

    // ---- reading pages ----

    /// Checks that tags balance (void elements and `/>` aside), that
    /// attributes are quoted, that `&` starts an entity, and that IDs are
    /// unique and made of `[A-Za-z0-9_-]`.
    fn check_well_formed(html: &str) {
        const VOID: [&str; 6] = ["meta", "br", "hr", "img", "input", "wbr"];
        let mut stack: Vec<String> = Vec::new();
        let mut rest = html;
        let mut ids = BTreeSet::new();
        while let Some(start) = rest.find(['<', '&']) {
            let text = &rest[..start];
            assert!(!text.contains('>'), "stray > in text: {text:?}");
            rest = &rest[start..];
            if rest.starts_with('&') {
                let end = rest
                    .find(';')
                    .unwrap_or_else(|| panic!("bare & at {:?}", &rest[..rest.len().min(40)]));
                let entity = &rest[1..end];
                assert!(
                    ["amp", "lt", "gt", "quot", "#39"].contains(&entity),
                    "unknown entity &{entity};"
                );
                rest = &rest[end + 1..];
                continue;
            }
            if rest.starts_with("<!DOCTYPE") {
                rest = &rest[rest.find('>').expect("doctype ends") + 1..];
                continue;
            }
            let end = rest.find('>').expect("tag ends");
            let tag = &rest[1..end];
            assert!(!tag.contains('<'), "< inside tag {tag:?}");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "unbalanced quotes in {tag:?}"
            );
            rest = &rest[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                let open = stack
                    .pop()
                    .unwrap_or_else(|| panic!("</{name}> closes nothing"));
                assert_eq!(open, name, "</{name}> closes <{open}>");
                continue;
            }
            let name: String = tag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            assert!(!name.is_empty(), "empty tag {tag:?}");
            if let Some(at) = tag.find(" id=\"") {
                let id = &tag[at + 5..];
                let id = &id[..id.find('"').expect("id ends")];
                assert!(
                    !id.is_empty()
                        && id
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                    "invalid id {id:?}"
                );
                assert!(ids.insert(id.to_string()), "duplicate id {id:?}");
            }
            if tag.ends_with('/') || VOID.contains(&name.as_str()) {
                continue;
            }
            if name == "style" {
                let close = rest.find("</style>").expect("style ends");
                assert!(!rest[..close].contains('<'));
                rest = &rest[close + "</style>".len()..];
                continue;
            }
            stack.push(name);
        }
        assert!(!rest.contains('>'), "stray > at the end");
        assert!(stack.is_empty(), "unclosed: {stack:?}");
    }

    /// Each `<svg>` whose class list holds all of `classes`.
    fn charts<'a>(html: &'a str, classes: &str) -> Vec<&'a str> {
        let want: Vec<&str> = classes.split(' ').collect();
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(i) = html[at..].find("<svg class=\"") {
            let start = at + i;
            let end = start + html[start..].find("</svg>").expect("svg ends") + "</svg>".len();
            let class_start = start + "<svg class=\"".len();
            let class_end = class_start + html[class_start..].find('"').expect("class ends");
            let have: Vec<&str> = html[class_start..class_end].split(' ').collect();
            if want.iter().all(|w| have.contains(w)) {
                out.push(&html[start..end]);
            }
            at = end;
        }
        out
    }

    /// The sections (or divs) whose opening tag contains `needle`, each
    /// up to the next opening of the same kind.
    fn count(html: &str, needle: &str) -> usize {
        html.matches(needle).count()
    }

    /// The page's own markup: its tags and its stylesheet, without the
    /// text between tags (where the report's values are).
    fn markup(html: &str) -> String {
        let mut out = String::new();
        let mut rest = html;
        while let Some(start) = rest.find('<') {
            let end = start + rest[start..].find('>').expect("tag ends") + 1;
            out.push_str(&rest[start..end]);
            rest = &rest[end..];
            if out.ends_with("<style>") {
                let close = rest.find("</style>").expect("style ends");
                out.push_str(&rest[..close]);
                rest = &rest[close..];
            }
        }
        out
    }

    fn assert_self_contained(html: &str) {
        let lower = markup(html).to_ascii_lowercase();
        for bad in [
            "src=", "url(", "@import", "http", "<link", "<script", "<img", "<iframe",
        ] {
            assert!(!lower.contains(bad), "page contains {bad}");
        }
        for (i, _) in lower.match_indices("href=") {
            assert!(
                lower[i..].starts_with("href=\"#"),
                "external link at {}",
                &lower[i..i + 40]
            );
        }
    }

    // ---- tests ----

    #[test]
    fn every_section_is_there_when_its_data_are() {
        let report = realistic();
        let html = render(&report);
        check_well_formed(&html);
        assert!(html.contains("<h1>Shop &lt;demo&gt; &amp; co</h1>"));
        assert_eq!(count(&html, "<p class=\"note\">"), 2);
        assert!(html.contains("<nav class=\"toc\" id=\"contents\">"));
        assert!(html.contains("<section id=\"summary\" class=\"summary\">"));
        assert!(html.contains("<table class=\"summary\">"));
        assert!(html.contains("<section class=\"table\" id=\"table-customers\">"));
        assert!(html.contains("<section class=\"table\" id=\"table-orders\">"));
        for (id, kind) in [
            ("col-customers-id", "number"),
            ("col-customers-name", "text"),
            ("col-customers-signup", "time"),
            ("col-customers-active", "boolean"),
            ("col-customers-address", "struct"),
            ("col-customers-address_city", "text"),
            ("col-customers-tags", "list"),
            ("col-customers-tags__", "text"),
            ("col-orders-amount", "number"),
        ] {
            let tag = format!("<section class=\"column\" id=\"{id}\" data-kind=\"{kind}\">");
            assert!(html.contains(&tag), "{tag}");
        }
        assert_eq!(count(&html, "<section class=\"column\""), 11);
        assert_eq!(count(&html, "<table class=\"stats\">"), 11);
        for kind in [
            "histogram",
            "nulls",
            "lengths",
            "top-values",
            "rank-frequency",
            "fanout",
            "partitions",
            "key-ranges",
            "row-groups",
        ] {
            let found = charts(&html, kind);
            assert!(!found.is_empty(), "no {kind} chart");
            for svg in found {
                let open = &svg[..svg.find('>').unwrap() + 1];
                assert!(
                    open.ends_with("role=\"img\" ") || open.contains("role=\"img\""),
                    "{open}"
                );
                assert!(
                    svg[open.len()..].starts_with("<title>"),
                    "{kind} chart without a title"
                );
            }
        }
        assert_eq!(charts(&html, "rank-frequency").len(), 2);
        assert!(
            html.contains("<p class=\"zipf\">Fitted s = 1.08 · expected s = 1.10 over 800 values")
        );
        assert!(html.contains("<p class=\"zipf\">Fitted s = 0.93 · 6,000 distinct"));
        assert_eq!(count(&html, "<section class=\"references\">"), 1);
        assert_eq!(count(&html, "<div class=\"reference\">"), 1);
        assert!(html.contains("<span class=\"orphans bad\">12 orphans"));
        assert_eq!(count(&html, "<section class=\"layout\">"), 1);
        assert!(html.contains("<table class=\"files\">"));
        assert!(html.contains("<section class=\"comparisons\" id=\"comparisons\">"));
        assert_eq!(
            count(&html, "<div class=\"comparison\" id=\"cmp-customers-"),
            8
        );
        assert_eq!(count(&html, "<figure class=\"original\">"), 8);
        assert_eq!(count(&html, "<figure class=\"generated\">"), 8);
        assert!(html.contains("<section class=\"plans\" id=\"plans\">"));
        assert!(html.contains("<div class=\"plan\" id=\"plan-shop_orders\">"));
        let before = charts(&html, "key-ranges before");
        let after = charts(&html, "key-ranges after");
        assert_eq!((before.len(), after.len()), (1, 1));
        assert_eq!(count(before[0], "class=\"bar picked\""), 4);
        assert_eq!(count(after[0], "class=\"bar picked\""), 1);
        assert!(html.contains("<li>overlap depth 4 → 2</li>"));
        // Every link points at an ID of the page.
        for (i, _) in html.match_indices("href=\"#") {
            let target = &html[i + 7..];
            let target = &target[..target.find('"').unwrap()];
            assert!(
                html.contains(&format!("id=\"{target}\"")),
                "dangling link #{target}"
            );
        }
    }

    #[test]
    fn sections_without_data_are_absent() {
        let mut report = realistic();
        report.comparisons.clear();
        report.plans.clear();
        report.tables[0].layout = None;
        report.tables[1].references.clear();
        let html = render(&report);
        check_well_formed(&html);
        for absent in [
            "class=\"comparisons\"",
            "class=\"plans\"",
            "class=\"layout\"",
            "class=\"references\"",
            "class=\"reference\"",
            "href=\"#comparisons\"",
            "href=\"#plans\"",
        ] {
            assert!(!html.contains(absent), "{absent}");
        }
        for kind in ["fanout", "partitions", "key-ranges", "row-groups"] {
            assert!(charts(&html, kind).is_empty(), "{kind}");
        }
        // A number column with statistics only has its null chart.
        let id = html.find("id=\"col-orders-order_id\"").unwrap();
        let section = &html[id..id + html[id..].find("</section>").unwrap()];
        assert_eq!(charts(section, "chart").len(), 1);
        assert_eq!(charts(section, "nulls").len(), 1);

        let empty = render(&Report::default());
        check_well_formed(&empty);
        assert!(empty.contains("<p class=\"no-spec\">No spec was given"));
        assert!(!empty.contains("<table class=\"summary\">"));
        assert!(!empty.contains("class=\"table\""));
        assert!(!empty.contains("<svg"));
    }

    #[test]
    fn flagged_rows_are_marked_and_counted() {
        let html = render(&realistic());
        assert!(html.contains("<p class=\"count\">2 of 5 checks flagged</p>"));
        assert_eq!(count(&html, "<tr class=\"flagged\">"), 2);
        let table = &html[html.find("<table class=\"summary\">").unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        assert_eq!(count(table, "<tr>"), 1 + 3);
        let first = &table[table.find("<tr class=\"flagged\">").unwrap()..];
        assert!(first.starts_with("<tr class=\"flagged\"><td>customers</td><td><a href=\"#col-customers-name\">name</a></td><td>null</td>"));
    }

    #[test]
    fn expected_overlays_iff_expectations_are_given() {
        let report = realistic();
        let html = render(&report);
        let overlay = |svg: &str| svg.contains("class=\"expected\"");
        // Where the report gives expectations, and only there.
        for (id, kind, has) in [
            ("col-customers-id", "histogram", true),
            ("col-customers-signup", "histogram", true),
            ("col-orders-amount", "histogram", true),
            ("col-customers-name", "lengths", false),
            ("col-customers-tags", "lengths", true),
            ("col-customers-name", "top-values", true),
            ("col-customers-active", "top-values", true),
            ("col-customers-tags__", "top-values", false),
            ("col-customers-name", "nulls", true),
            ("col-customers-address_city", "nulls", true),
            ("col-customers-id", "nulls", false),
            ("col-customers-address_city", "rank-frequency", true),
            ("col-orders-customer_id", "rank-frequency", false),
        ] {
            let at = html.find(&format!("id=\"{id}\"")).unwrap();
            let section = &html[at..at + html[at..].find("</section>").unwrap()];
            let svgs = charts(section, kind);
            assert_eq!(svgs.len(), 1, "{id} {kind}");
            assert_eq!(overlay(svgs[0]), has, "{id} {kind}");
            // A legend names the expectation when there is one.
            assert_eq!(svgs[0].contains(">expected"), has, "{id} {kind} legend");
        }
        let bare = render(&without_expectations(report));
        assert!(!bare.contains("class=\"expected\""));
        for svg in charts(&bare, "chart") {
            assert!(!svg.contains(">expected"), "{svg}");
        }
    }

    #[test]
    fn text_is_escaped() {
        let mut report = realistic();
        report.title = "<script>alert('t')</script>".into();
        report.notes.push("a \"quoted\" & <b>bold</b> note".into());
        report.tables[0].name = "<script>x</script>".into();
        report.tables[0].columns[0].name = "\"onmouseover=alert(1)".into();
        report.summary[0].check = "<img src=x>".into();
        let html = render(&report);
        check_well_formed(&html);
        assert_self_contained(&html);
        assert!(!html.contains("<script"));
        assert!(!html.contains("<b>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt;"));
        assert!(html.contains("a &quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt; note"));
        assert!(html.contains("id=\"col-_script_x__script_-_onmouseover_alert_1_\""));
    }

    #[test]
    fn page_is_self_contained() {
        let mut report = realistic();
        report.notes.push("see https://example.com/x?a=b".into());
        report.tables[0].columns[1].top[0].value = "url(http://x) @import".into();
        let html = render(&report);
        assert_self_contained(&html);
        assert!(html.contains("see https://example.com/x?a=b"));
        // Without such values, the whole page.
        let html = render(&realistic()).to_ascii_lowercase();
        for bad in ["src=", "url(", "@import", "http", "<link"] {
            assert!(!html.contains(bad), "{bad}");
        }
    }

    #[test]
    fn same_report_same_bytes() {
        let a = render(&realistic());
        let b = render(&realistic());
        assert_eq!(a, b);
        assert_eq!(render(&Report::default()), render(&Report::default()));
    }

    #[test]
    fn ids_are_unique_and_valid() {
        let mut report = realistic();
        let mut t = customers(10);
        t.name = "customers".into();
        report.tables.push(t);
        let mut t = customers(10);
        t.name = "a.b c/ä".into();
        for (i, name) in ["x.y", "x_y", "x[]", "x__", "HTTP_code", "ünïcødé", "x.y"]
            .iter()
            .enumerate()
        {
            t.columns[i].name = (*name).into();
        }
        report.tables.push(t);
        report.plans.push(plan());
        let html = render(&report);
        check_well_formed(&html);
        assert!(html.contains("id=\"table-customers-2\""));
        assert!(html.contains("id=\"table-a_b_c__\""));
        assert!(html.contains("id=\"col-a_b_c__-x_y\""));
        assert!(html.contains("id=\"col-a_b_c__-x_y-2\""));
        assert!(html.contains("id=\"col-a_b_c__-x__-2\""));
        assert!(html.contains("id=\"col-a_b_c__-x_y-3\""));
        assert!(html.contains("id=\"plan-shop_orders-2\""));
        assert!(html.contains("id=\"col-a_b_c__-HTT_P_code\""));
        assert!(!markup(&html).to_ascii_lowercase().contains("http"));
    }

    /// A column whose every number is out of the ordinary.
    fn odd_column(name: &str, kind: ColumnKind) -> ColumnReport {
        let mut col = column(name, kind, "Float64", 0);
        col.nulls = vec![
            level(name, 0, 0, Some(f64::NAN)),
            level("x", 5, 9, Some(-1.0)),
        ];
        col.stats = Some(stats(
            0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0,
        ));
        col.histogram = Some(Histogram {
            bins: vec![
                Bin {
                    lo: f64::NAN,
                    hi: f64::INFINITY,
                    label: String::new(),
                    count: u64::MAX,
                },
                Bin {
                    lo: 5.0,
                    hi: 5.0,
                    label: "5".repeat(500),
                    count: 0,
                },
                Bin {
                    lo: 1.0,
                    hi: 0.0,
                    label: "x".into(),
                    count: u64::MAX,
                },
            ],
            expected: Some(vec![f64::NAN, f64::INFINITY]),
            sampled: true,
        });
        col.lengths = Some(Histogram {
            bins: Vec::new(),
            expected: Some(Vec::new()),
            sampled: false,
        });
        col.top = top(&[
            (&"w".repeat(10_000), u64::MAX, Some(f64::INFINITY)),
            ("zero", 0, Some(f64::NAN)),
        ]);
        col.other = u64::MAX;
        col.rank_frequency = Some(RankFrequency {
            points: vec![(0, 0), (1, 0), (u64::MAX, u64::MAX)],
            distinct: 0,
            fitted_s: Some(f64::NAN),
            expected: Some((f64::INFINITY, 0)),
        });
        col
    }

    #[test]
    fn degenerate_reports_render_well_formed() {
        let mut cases: Vec<Report> = vec![Report::default()];
        // Zero rows, no columns, no files.
        cases.push(Report {
            tables: vec![TableReport {
                name: String::new(),
                layout: Some(LayoutReport::default()),
                ..TableReport::default()
            }],
            ..Report::default()
        });
        // All-null columns, one distinct value, empty bins, NaN and inf.
        let mut all_null = column("n", ColumnKind::Number, "Int32", 100);
        all_null.nulls = vec![level("n", 100, 100, Some(1.0))];
        let mut one = column("one", ColumnKind::Number, "Int32", 100);
        one.stats = Some(stats(100, 7.0, 7.0, 7.0, 0.0, 1));
        one.histogram = Some(Histogram {
            bins: vec![Bin {
                lo: 7.0,
                hi: 7.0,
                label: "7".into(),
                count: 100,
            }],
            expected: Some(vec![100.0]),
            sampled: false,
        });
        one.top = top(&[("7", 100, Some(1.0))]);
        one.rank_frequency = Some(RankFrequency {
            points: vec![(1, 100)],
            distinct: 1,
            fitted_s: None,
            expected: Some((1.0, 1)),
        });
        let mut empty_bins = column("e", ColumnKind::Time, "Date32", 10);
        empty_bins.histogram = Some(Histogram {
            bins: bins(0.0, 1.0, &[0; 30], date),
            expected: None,
            sampled: false,
        });
        let huge: Vec<u64> = (0..5000).map(|i| u64::MAX / 5000 * i).collect();
        let mut many_bins = column("many", ColumnKind::Number, "Int64", u64::MAX);
        many_bins.histogram = Some(Histogram {
            bins: bins(-1e300, 1e296, &huge, |v| format!("{v:e}")),
            expected: Some(vec![1e300; 4999]),
            sampled: false,
        });
        many_bins.top = (0..1000)
            .map(|i| TopValue {
                value: format!("v{i}"),
                count: 1000 - i,
                expected_share: None,
            })
            .collect();
        many_bins.other = 1;
        let files: Vec<FileReport> = (0..5000u64)
            .map(|i| FileReport {
                path: format!("p/{i}.parquet"),
                partition: format!("p={}", i % 100),
                bytes: u64::MAX / 5000,
                rows: i,
                row_groups: if i == 0 {
                    vec![u64::MAX, 0]
                } else {
                    vec![i; (i % 7) as usize]
                },
                key_range: (i % 10 != 0).then(|| KeyRange {
                    lo: i as f64,
                    hi: if i == 3 { f64::NAN } else { i as f64 + 50.0 },
                    lo_label: "<".repeat(100),
                    hi_label: String::new(),
                }),
            })
            .collect();
        let partitions = (0..100)
            .map(|i| PartitionReport {
                path: format!("p={i}"),
                files: 50,
                bytes: u64::MAX / 100,
                rows: 0,
            })
            .collect();
        cases.push(Report {
            title: "   ".into(),
            summary: vec![SummaryRow {
                table: "t".into(),
                column: "missing".into(),
                check: "null".into(),
                expected: f64::NAN,
                realised: f64::INFINITY,
                score: f64::NEG_INFINITY,
                flagged: true,
            }],
            tables: vec![TableReport {
                name: "t".into(),
                rows: u64::MAX,
                columns: vec![
                    all_null,
                    one,
                    empty_bins,
                    many_bins,
                    odd_column("odd", ColumnKind::Number),
                    odd_column("odd", ColumnKind::Time),
                    odd_column("odd[]", ColumnKind::List),
                ],
                references: vec![ReferenceReport {
                    column: "c".into(),
                    parent: "nowhere".into(),
                    parent_column: "id".into(),
                    checked: 0,
                    orphans: u64::MAX,
                    parent_rows: 0,
                    referenced: 0,
                    fanout: (0..1000).map(|k| (k, u64::MAX - k)).collect(),
                    source: String::new(),
                }],
                layout: Some(LayoutReport {
                    key: None,
                    files,
                    partitions,
                }),
            }],
            comparisons: vec![TableComparison {
                name: "t".into(),
                original: TableReport::default(),
                generated: TableReport {
                    columns: vec![column("only", ColumnKind::Struct, "Struct()", 0)],
                    ..TableReport::default()
                },
            }],
            plans: vec![PlanReport {
                name: String::new(),
                key: String::new(),
                before: Vec::new(),
                after: vec![PlanFile {
                    name: "x".into(),
                    bytes: 0,
                    range: KeyRange {
                        lo: f64::NEG_INFINITY,
                        hi: f64::NAN,
                        lo_label: String::new(),
                        hi_label: String::new(),
                    },
                    picked: true,
                }],
                notes: Vec::new(),
            }],
            ..Report::default()
        });
        for report in &cases {
            let html = render(report);
            check_well_formed(&html);
            assert!(!html.contains("&amp;lt;"), "escaped twice");
            assert_self_contained(&html);
            assert!(!html.contains("NaN\""), "NaN coordinate");
            assert!(!html.contains("inf\""), "inf coordinate");
        }
        let html = render(&cases[2]);
        if let Some(path) = std::env::var("STRATA_REPORT_SAMPLE")
            .ok()
            .filter(|p| !p.is_empty())
        {
            std::fs::write(format!("{path}.odd.html"), &html).unwrap();
        }
        assert!(html.contains("Other values: 1 rows (&lt;0.01%)."));
        assert!(html.contains("<title>strata report</title>"));
        assert!(html.contains("1 of 1 checks flagged"));
        // Thousands of files: a few hundred bars, the rest counted.
        let ranges = charts(&html, "key-ranges");
        assert_eq!(ranges.len(), 2);
        assert_eq!(count(ranges[0], "<rect"), MAX_BARS);
        assert!(html.contains("4,200 more files not drawn"));
        assert!(html.contains("500 files without statistics of the key."));
        assert!(html.contains("4,800 more files not listed"));
        assert!(html.contains("40 more partitions not drawn"));
        assert!(html.contains("975 more values not drawn"));
        assert!(html.contains("700 more bars not drawn"));
        for svg in charts(&html, "chart") {
            assert!(count(svg, "<rect") <= 2 * MAX_BARS, "{}", &svg[..80]);
        }
        assert!(html.contains("<p class=\"absent\">absent</p>"));
        // Long values are cut.
        assert!(!html.contains(&"w".repeat(121)));
        assert!(!html.contains(&"5".repeat(100)));
    }

    #[test]
    fn a_large_dataset_stays_lean() {
        let html = render(&large());
        check_well_formed(&html);
        let elements = count(&html, "<rect")
            + count(&html, "<line")
            + count(&html, "<text")
            + count(&html, "<circle")
            + count(&html, "<path");
        assert!(elements < 60_000, "{elements} SVG elements");
        assert!(html.len() < 6_000_000, "{} bytes", html.len());
    }

    /// Ten tables of forty columns each, with files, a comparison and a
    /// plan.
    fn large() -> Report {
        let mut report = realistic();
        report.tables = (0..10)
            .map(|t| {
                let mut table = if t % 2 == 0 {
                    customers(1_000_000)
                } else {
                    orders(5_000_000)
                };
                let base = table.columns.clone();
                table.columns = (0..40)
                    .map(|i| {
                        let mut col = base[i % base.len()].clone();
                        col.name = format!("{}_{i}", col.name);
                        col
                    })
                    .collect();
                table.name = format!("table_{t}");
                table
            })
            .collect();
        report
    }

    /// Writes the realistic page to `$STRATA_REPORT_SAMPLE`, and a large
    /// one beside it (`.large.html`), to look at.
    #[test]
    fn sample_page() {
        if let Some(path) = std::env::var("STRATA_REPORT_SAMPLE")
            .ok()
            .filter(|p| !p.is_empty())
        {
            std::fs::write(&path, render(&realistic())).unwrap();
            std::fs::write(format!("{path}.large.html"), render(&large())).unwrap();
        }
    }
}
