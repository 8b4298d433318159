//! What a report holds: plain data, gathered by [`crate::collect()`] (or by
//! a caller, as `strata compact plan --report` does for its key ranges)
//! and drawn by [`crate::html`]. Every number a chart shows is here, so a
//! report can also be written as JSON ([`Report`] is `Serialize`).

use serde::Serialize;

/// A whole report: one HTML page.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The page's title (e.g. the dataset's name).
    pub title: String,
    /// Lines shown under the title: what was read, with which spec, by
    /// which version of strata.
    pub notes: Vec<String>,
    /// The checks of the realised data against the spec, flagged ones
    /// first; empty without a spec.
    pub summary: Vec<SummaryRow>,
    /// Each table read.
    pub tables: Vec<TableReport>,
    /// `strata infer --compare`: each column of the original beside the
    /// generated one.
    pub comparisons: Vec<TableComparison>,
    /// `strata compact plan --report`: the files' key ranges before and
    /// after a plan.
    pub plans: Vec<PlanReport>,
}

/// One check of the summary table: a share (or mean) the spec gives a
/// column against the share realised, as `generate --verify-distribution`
/// measures it.
#[derive(Debug, Clone, Serialize)]
pub struct SummaryRow {
    /// The table.
    pub table: String,
    /// The column (nested fields as `a.b`, list items as `a[]`).
    pub column: String,
    /// What is checked: `null`, `value V`, `length N`, `mean length`, or
    /// a comparison's statistic (`ks`, `tv`, `null rate`).
    pub check: String,
    /// What the spec (or the original) gives.
    pub expected: f64,
    /// What the data shows.
    pub realised: f64,
    /// Standard errors between the two (or the distance, for a
    /// comparison).
    pub score: f64,
    /// Off by more than the check allows.
    pub flagged: bool,
}

/// One table: its columns, its references to other tables, its files.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TableReport {
    /// The table's name.
    pub name: String,
    /// Rows read.
    pub rows: u64,
    /// Each column and nested field, parents before their children.
    pub columns: Vec<ColumnReport>,
    /// This table's foreign keys (it is the child).
    pub references: Vec<ReferenceReport>,
    /// Its files, when it was read from files.
    pub layout: Option<LayoutReport>,
}

/// What kind of values a column holds, which decides its charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnKind {
    /// Integers, floats, decimals: a histogram.
    Number,
    /// Dates and timestamps: a histogram on a time axis.
    Time,
    /// Strings and binary: top values and lengths.
    Text,
    /// Booleans: two bars.
    Boolean,
    /// Lists and maps: lengths.
    List,
    /// Structs: null rates only (their fields have their own entries).
    Struct,
}

/// One column or nested field.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnReport {
    /// Its path: `a`, `a.b` for a struct's field, `a[]` for a list's
    /// items.
    pub name: String,
    /// The Arrow type as text.
    pub data_type: String,
    /// What kind of values it holds.
    pub kind: ColumnKind,
    /// Positions where it could hold a value (its ancestors valid).
    pub slots: u64,
    /// Its null share at each nesting level, outermost first (the column
    /// itself last).
    pub nulls: Vec<NullLevel>,
    /// Summary statistics of its values (numbers and times as numbers:
    /// days since 1970 for dates, the unit's ticks for timestamps).
    pub stats: Option<Stats>,
    /// A histogram of its values, with the spec's expected counts per bin
    /// where a spec is given.
    pub histogram: Option<Histogram>,
    /// Its most frequent values, most frequent first.
    pub top: Vec<TopValue>,
    /// Values not among `top`, and how many rows hold them.
    pub other: u64,
    /// Whether `top` counts are exact (else they come from a
    /// heavy-hitters sketch, each within its stated error).
    pub top_exact: bool,
    /// Lengths of strings or lists: a histogram of lengths.
    pub lengths: Option<Histogram>,
    /// Key skew: the count of the value of each rank, on log axes where a
    /// Zipf law is a line; `None` for columns with too few values.
    pub rank_frequency: Option<RankFrequency>,
}

/// The null share at one nesting level.
#[derive(Debug, Clone, Serialize)]
pub struct NullLevel {
    /// The level's path (`a`, then `a.b`, ...).
    pub path: String,
    /// Positions at this level (its ancestors valid).
    pub slots: u64,
    /// Nulls among them.
    pub nulls: u64,
    /// The share the spec gives, when a spec is given.
    pub expected: Option<f64>,
}

/// Summary statistics.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// Values counted (non-null).
    pub count: u64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub std: f64,
    /// Distinct values (exact or estimated, see `distinct_exact`).
    pub distinct: u64,
    /// Whether `distinct` is exact.
    pub distinct_exact: bool,
    /// Labels of `min` and `max` as the column writes them (a date as
    /// `2024-01-31`, a decimal with its scale).
    pub min_label: String,
    /// See `min_label`.
    pub max_label: String,
}

/// A histogram: bins over a range, realised counts and, where a spec
/// gives the distribution, the counts it expects.
#[derive(Debug, Clone, Serialize)]
pub struct Histogram {
    /// The bins, in order.
    pub bins: Vec<Bin>,
    /// Expected count per bin (same length as `bins`), from the spec.
    pub expected: Option<Vec<f64>>,
    /// Whether the counts are of the whole column or scaled from a
    /// sample of it.
    pub sampled: bool,
}

/// One bin of a histogram: `[lo, hi)` (the last one closed), and its
/// label as the column writes values (a date, a length).
#[derive(Debug, Clone, Serialize)]
pub struct Bin {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Its label.
    pub label: String,
    /// Values in it.
    pub count: u64,
}

/// One of a column's most frequent values.
#[derive(Debug, Clone, Serialize)]
pub struct TopValue {
    /// The value as text (truncated to 60 characters).
    pub value: String,
    /// Rows holding it.
    pub count: u64,
    /// The share the spec gives it among non-null values, when a spec is
    /// given.
    pub expected_share: Option<f64>,
}

/// Counts by rank (1 = the most frequent value).
#[derive(Debug, Clone, Serialize)]
pub struct RankFrequency {
    /// `(rank, count)`, ranks from 1, log-spaced where there are many.
    pub points: Vec<(u64, u64)>,
    /// Distinct values in all.
    pub distinct: u64,
    /// The Zipf exponent fitted to the points (least squares on log-log).
    pub fitted_s: Option<f64>,
    /// The Zipf law the spec gives, when it gives one: `(s, n)`.
    pub expected: Option<(f64, u64)>,
}

/// One foreign key: this table's column referring to a parent's.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceReport {
    /// The child column.
    pub column: String,
    /// The parent table.
    pub parent: String,
    /// The parent's column.
    pub parent_column: String,
    /// Non-null child values checked.
    pub checked: u64,
    /// Child values with no parent row.
    pub orphans: u64,
    /// Parent rows.
    pub parent_rows: u64,
    /// Parent rows referenced at least once.
    pub referenced: u64,
    /// Fan-out: `(children per parent, parents with that many)`, zero
    /// included; the tail beyond 50 children is one last bin.
    pub fanout: Vec<(u64, u64)>,
    /// Where it came from: `spec` or `inferred` (found by inclusion).
    pub source: String,
}

/// A table's files.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LayoutReport {
    /// The column whose ranges are drawn (a sort key, the spec's layout
    /// key, or the first column).
    pub key: Option<String>,
    /// Each file, in path order.
    pub files: Vec<FileReport>,
    /// Each partition (Hive directory; `""` for an unpartitioned table):
    /// its files, bytes and rows.
    pub partitions: Vec<PartitionReport>,
}

/// One data file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// Its path, relative to the table.
    pub path: String,
    /// Its partition (`""` if none).
    pub partition: String,
    /// Its size.
    pub bytes: u64,
    /// Its rows.
    pub rows: u64,
    /// Rows of each row group.
    pub row_groups: Vec<u64>,
    /// The key's range in this file, from the footer's statistics.
    pub key_range: Option<KeyRange>,
}

/// A file's key range, placed on one axis shared by every file drawn
/// beside it.
#[derive(Debug, Clone, Serialize)]
pub struct KeyRange {
    /// Position of the smallest key on the shared axis.
    pub lo: f64,
    /// Position of the largest key.
    pub hi: f64,
    /// The smallest key as text.
    pub lo_label: String,
    /// The largest key as text.
    pub hi_label: String,
}

impl KeyRange {
    /// Places byte-comparable ranges `(lo, hi)` on one axis by the rank of
    /// each bound among all bounds, so that overlapping ranges overlap
    /// when drawn, whatever the key's type. Labels are left to the caller.
    pub fn ranked(ranges: &[(&[u8], &[u8])]) -> Vec<(f64, f64)> {
        let mut bounds: Vec<&[u8]> = ranges.iter().flat_map(|(l, h)| [*l, *h]).collect();
        bounds.sort_unstable();
        bounds.dedup();
        let rank = |b: &[u8]| bounds.binary_search(&b).unwrap_or(0) as f64;
        ranges.iter().map(|(l, h)| (rank(l), rank(h))).collect()
    }
}

/// One partition's totals.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionReport {
    /// The Hive path (`month=2024-01/flag=A`), `""` if unpartitioned.
    pub path: String,
    /// Files.
    pub files: u64,
    /// Bytes.
    pub bytes: u64,
    /// Rows.
    pub rows: u64,
}

/// One table of `strata infer --compare`: the original's columns beside
/// the generated ones', and each column's distance.
#[derive(Debug, Clone, Serialize)]
pub struct TableComparison {
    /// The table.
    pub name: String,
    /// The original table.
    pub original: TableReport,
    /// The generated table.
    pub generated: TableReport,
}

/// A compaction plan's key ranges: the files before and after.
#[derive(Debug, Clone, Serialize)]
pub struct PlanReport {
    /// What was planned (the dataset or table).
    pub name: String,
    /// The key.
    pub key: String,
    /// The files before, with their ranges; `picked` marks those the plan
    /// merges.
    pub before: Vec<PlanFile>,
    /// The files after (the untouched ones and the merge's outputs, whose
    /// ranges are the union of the picked files' in each run).
    pub after: Vec<PlanFile>,
    /// Lines describing the plan (budget, quality, overlap depth before
    /// and after).
    pub notes: Vec<String>,
}

/// One file of a plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanFile {
    /// Its name.
    pub name: String,
    /// Its size.
    pub bytes: u64,
    /// Its key range.
    pub range: KeyRange,
    /// Whether the plan merges it (before), or the merge writes it
    /// (after).
    pub picked: bool,
}
