//! What a spec is: its fields, kinds, generators, values and cases, as parsed and checked.

use std::fmt;

use arrow_schema::{DataType, TimeUnit};

use crate::template::Template;

pub(crate) mod class;
pub mod document;
pub(crate) mod expression;
mod leaf;
pub(crate) mod query;

pub use expression::{Expression, QualifiedField, RunValue};

/// A parsed and checked dataset spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The dataset name (file stem and `strata.preset` metadata).
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Top-level fields, in schema order.
    pub fields: Vec<Field>,
    /// How the table's files are laid out (`layout = { ... }`): all unset
    /// when the spec says nothing.
    pub layout: Layout,
    /// The top-level field that identifies a row (`primary_key`): its
    /// values are unique.
    pub primary_key: Option<String>,
    /// The table's history over versions (`changes = { ... }`).
    pub changes: Option<Changes>,
}

/// A table's history (`changes = { ... }`): version 0 is the table as
/// generated; each later version inserts, updates and deletes shares of
/// the rows alive before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Changes {
    /// The spec line of `changes`.
    pub line: usize,
    /// Versions after version 0.
    pub versions: u64,
    /// Rows inserted per version, as a share of the rows alive before it.
    pub insert: f64,
    /// Share of the rows alive before a version that it updates.
    pub update: f64,
    /// Share of the rows alive before a version that it deletes.
    pub delete: f64,
    /// Zipf exponent of the rows' heat (`keys = { zipf = S }`); `None`:
    /// every row alike.
    pub zipf: Option<f64>,
    /// The top-level fields an update draws again.
    pub update_fields: Vec<String>,
    /// What a deleted row's children do.
    pub on_delete: OnDelete,
}

/// What a deleted row's children do (`on_delete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnDelete {
    /// Deleted with it.
    #[default]
    Cascade,
    /// Kept, their parent gone.
    Orphan,
    /// A row with children is never deleted.
    KeepParent,
}

impl OnDelete {
    /// The policy's name in a spec.
    pub fn name(self) -> &'static str {
        match self {
            OnDelete::Cascade => "cascade",
            OnDelete::Orphan => "orphan",
            OnDelete::KeepParent => "keep_parent",
        }
    }
}

/// How a table's files are laid out, as its spec's `layout = { ... }`
/// writes it: the text of partition fields and sort keys is checked
/// against the table where the files are written (`strata-pipeline`),
/// which also takes the command line's settings over these.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    /// The line `layout` is written on (0: none).
    pub line: usize,
    /// Partition fields, outermost first: a column, or one of Iceberg's
    /// transforms of it (`month(l_shipdate)`, `bucket(16, l_orderkey)`).
    pub partition_by: Vec<String>,
    /// Sort keys, most significant first: `COLUMN[:desc][:nulls_first]`.
    pub sort_by: Vec<String>,
    /// Compressed bytes at which a file is closed and the next begun.
    pub target_file_size: Option<u64>,
    /// When a row group is closed.
    pub row_group_size: Option<RowGroupSize>,
    /// Bytes at which a data page is closed.
    pub page_size: Option<u64>,
    /// Whether the columns of identity partitions are also written in the
    /// files (`partition_columns = "keep"`) or only in the directory names
    /// (`"drop"`).
    pub keep_partition_columns: Option<bool>,
}

/// When a row group is closed: at a row count, or once its encoded
/// columns reach a byte size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowGroupSize {
    /// This many rows.
    Rows(u64),
    /// About this many encoded bytes.
    Bytes(u64),
}

impl std::str::FromStr for RowGroupSize {
    type Err = String;

    /// A plain integer counts rows (`1000000`); one with a unit counts
    /// bytes (`128MiB`, see [`parse_byte_size`]).
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            return match t.parse::<u64>() {
                Ok(0) | Err(_) => Err(format!(
                    "bad row group size '{s}': a row count from 1, or bytes with a unit (128MiB)"
                )),
                Ok(n) => Ok(RowGroupSize::Rows(n)),
            };
        }
        parse_byte_size(t).map(RowGroupSize::Bytes)
    }
}

/// A byte count parsed from `123`, `64KiB`, `1.5 GiB`, `10MB` and the
/// like (units B, KB, MB, GB, TB in powers of 1000 and KiB, MiB, GiB, TiB
/// in powers of 1024, case-insensitive); zero is refused.
///
/// # Errors
/// A message naming the text and what is wrong with it.
pub fn parse_byte_size(s: &str) -> Result<u64, String> {
    let bad = |why: &str| format!("bad size '{s}': {why}");
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => {
            return Err(bad(
                "expected a number with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB",
            ));
        }
    };
    let bytes = if number.contains('.') {
        let v: f64 = number.parse().map_err(|_| bad("not a number"))?;
        let b = (v * multiplier as f64).round();
        if !b.is_finite() || b >= u64::MAX as f64 {
            return Err(bad("too large"));
        }
        b as u64
    } else {
        let v: u64 = number.parse().map_err(|_| bad("not a number"))?;
        v.checked_mul(multiplier).ok_or_else(|| bad("too large"))?
    };
    if bytes == 0 {
        return Err(bad("must be greater than zero"));
    }
    Ok(bytes)
}

/// A dataset of one table or several: a spec file with `[[tables]]`,
/// or a single-table [`Spec`] (then its one table has no row count of its
/// own).
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The dataset name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The tables, in file order.
    pub tables: Vec<Table>,
    /// Whether the file listed `[[tables]]` (else it is a plain spec, and
    /// its output keeps the single-table layout).
    pub multi_table: bool,
    /// Where it was read from (the file or preset name its errors start
    /// with, generation errors included).
    pub origin: String,
}

/// One table of a [`Dataset`].
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The table's fields, as a spec named after the table.
    pub spec: Spec,
    /// The line the table starts on.
    pub line: usize,
    /// Its row count (`None` for a plain spec, where the caller says, and
    /// for a child table, whose rows follow its parent's).
    pub rows: Option<Rows>,
    /// The parent whose rows this table's rows are children of.
    pub children_of: Option<ChildrenOf>,
    /// For a calendar table, its days: row `i` is day `start + i`.
    pub calendar: Option<Calendar>,
    /// Whether its top-level fields draw stratified (`stratified = true`,
    /// a table with rows of its own): row `i` of the `N` rows at the
    /// run's scale takes the uniform number `(s(i) + v) / N`, where `s(i)
    /// = (i * m + o) mod N` for a multiplier `m` coprime with `N` and an
    /// offset `o` drawn per field and seed, and `v` is the row's own
    /// uniform number; so each field's values of `uniform`, `normal`,
    /// `lognormal`, `quantiles`, `weighted` and `probability` take one
    /// draw from each of `N` equal-probability strata.
    pub stratified: bool,
}

/// The days of a calendar table (a date dimension): one row per day from
/// `start` to `end`, both included, as days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calendar {
    /// The first day.
    pub start: i32,
    /// The last day.
    pub end: i32,
}

impl Calendar {
    /// Its rows: one per day.
    pub fn days(&self) -> u64 {
        (i64::from(self.end) - i64::from(self.start) + 1).max(0) as u64
    }
}

/// What a field of a calendar table reads from its row's day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CalendarPart {
    /// The day itself (a `date32` field).
    Date,
    /// The day as the number `yyyymmdd` (`19980102`), the usual date key.
    DateKey,
    /// The year.
    Year,
    /// The quarter, 1 to 4.
    Quarter,
    /// The month, 1 to 12.
    Month,
    /// The day of the month, 1 to 31.
    DayOfMonth,
    /// The day of the year, 1 to 366.
    DayOfYear,
    /// The ISO day of the week: 1 (Monday) to 7 (Sunday).
    DayOfWeek,
    /// The ISO week of the year, 1 to 53 (weeks start on Monday; week 1
    /// holds the year's first Thursday).
    WeekOfYear,
    /// The English name of the day of the week (`Monday`).
    DayName,
    /// The English name of the month (`January`).
    MonthName,
    /// Whether the day is a Saturday or a Sunday (a boolean field).
    Weekend,
}

impl CalendarPart {
    /// Every part, as specs spell them.
    pub const ALL: [(&'static str, CalendarPart); 12] = [
        ("date", CalendarPart::Date),
        ("date_key", CalendarPart::DateKey),
        ("year", CalendarPart::Year),
        ("quarter", CalendarPart::Quarter),
        ("month", CalendarPart::Month),
        ("day_of_month", CalendarPart::DayOfMonth),
        ("day_of_year", CalendarPart::DayOfYear),
        ("day_of_week", CalendarPart::DayOfWeek),
        ("week_of_year", CalendarPart::WeekOfYear),
        ("day_name", CalendarPart::DayName),
        ("month_name", CalendarPart::MonthName),
        ("weekend", CalendarPart::Weekend),
    ];

    /// The spec spelling.
    pub fn as_str(self) -> &'static str {
        CalendarPart::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("date", |(n, _)| n)
    }
}

/// A one-to-many table: `count` rows for each row of `parent` (line items
/// of an order). Child `k` of the parent row with index `p` has index
/// `p * max_count + k` (as the elements of a list have), so a child table
/// is generated by walking its parent's rows, and part `I` of it is the
/// children of part `I` of its parent.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildrenOf {
    /// The parent table.
    pub parent: String,
    /// Rows per parent row: an integer generator.
    pub count: Generator,
    /// Cases that draw the count another way where an SQL test of the
    /// parent row's top-level fields holds (urgent orders have more
    /// lines); the first true one wins, else `count`.
    pub count_when: Vec<CountCase>,
}

/// A case of a child table's `count`: where `condition` (over the parent
/// row's top-level fields) is true, the count is drawn by `count`.
#[derive(Debug, Clone, PartialEq)]
pub struct CountCase {
    /// The spec line of the case.
    pub line: usize,
    /// A boolean SQL test of the parent row.
    pub condition: Expression,
    /// The count where it holds.
    pub count: Generator,
}

/// A table's row count.
#[derive(Debug, Clone, PartialEq)]
pub enum Rows {
    /// This many rows at every scale (a dimension such as regions).
    Fixed(u64),
    /// This many rows per unit of the scale factor.
    PerScale(f64),
    /// Computed from `scale` and other tables' `rows('t')`: the count
    /// itself (`rows = "..."`), or rows per unit of the scale
    /// (`rows_per_scale = "..."`, `per_scale`); [`Dataset::at_scale`]
    /// makes it [`Rows::Fixed`].
    Expr {
        /// The SQL as written, where.
        value: Box<RunValue>,
        /// Multiplied by the scale.
        per_scale: bool,
    },
}

impl Rows {
    /// The row count at `scale`: `per_scale * scale` rounded to the
    /// nearest integer (halves away from zero) for [`Rows::PerScale`].
    /// [`Rows::Expr`] counts once [`Dataset::at_scale`] has made it
    /// fixed; before, it reads as 0.
    pub fn at(&self, scale: f64) -> u64 {
        match self {
            Rows::Fixed(n) => *n,
            Rows::PerScale(r) => round_count(r * scale),
            Rows::Expr { .. } => 0,
        }
    }
}

/// `x` rounded to the nearest integer (halves away from zero), as a count
/// (negative and NaN: 0; past `u64::MAX`: `u64::MAX`).
pub(crate) fn round_count(x: f64) -> u64 {
    let n = x.round();
    if n >= u64::MAX as f64 {
        u64::MAX
    } else {
        n.max(0.0) as u64
    }
}

/// One field of a spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The Arrow field name.
    pub name: String,
    /// Dotted path from the top (`phones.item.number`), used in messages
    /// and to key the field's random stream.
    pub path: String,
    /// The spec line the field starts on (0 for fields made in code).
    pub line: usize,
    /// What the field holds.
    pub kind: Kind,
    /// Share of null values in `0..=1`.
    pub null_rate: f64,
    /// Whether the Arrow field is nullable: true when any case can make it
    /// null, or when the spec says so.
    pub nullable: bool,
    /// Parquet settings of the field's leaves, the table's and its parents'
    /// already applied (a setting left `None` is the writer's choice).
    pub parquet: ParquetColumn,
    /// Cases that replace the null rate or generator when a sibling field
    /// has a given value; the first that matches wins.
    pub when: Vec<When>,
    /// Computed for its table's expressions, conditions, references and
    /// aggregates to read, but not written (top-level fields only).
    pub hidden: bool,
}

/// Parquet settings of a column; `None` leaves each to the writer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParquetColumn {
    /// The codec.
    pub compression: Option<ParquetCodec>,
    /// The encoding of pages without a dictionary.
    pub encoding: Option<ParquetEncoding>,
    /// Dictionary encoding on or off.
    pub dictionary: Option<bool>,
    /// The statistics kept.
    pub statistics: Option<ParquetStatistics>,
    /// A Bloom filter per chunk: distinct values and false-positive rate.
    pub bloom_filter: Option<(u64, f64)>,
    /// Whether data pages are `DATA_PAGE_V2` (a whole file's: set on a
    /// spec, dataset or table, handed down to every leaf).
    pub data_page_v2: Option<bool>,
}

impl ParquetColumn {
    /// These settings, each one left out taken from `outer`.
    pub fn over(&self, outer: &ParquetColumn) -> ParquetColumn {
        ParquetColumn {
            compression: self.compression.or(outer.compression),
            encoding: self.encoding.or(outer.encoding),
            dictionary: self.dictionary.or(outer.dictionary),
            statistics: self.statistics.or(outer.statistics),
            bloom_filter: self.bloom_filter.or(outer.bloom_filter),
            data_page_v2: self.data_page_v2.or(outer.data_page_v2),
        }
    }

    /// Whether every setting is left to the writer.
    pub fn is_empty(&self) -> bool {
        *self == ParquetColumn::default()
    }
}

/// A Parquet codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParquetCodec {
    /// Uncompressed.
    None,
    /// Snappy.
    Snappy,
    /// `LZ4_RAW`.
    Lz4,
    /// Zstandard at a level (1 to 22).
    Zstd(i32),
}

/// A Parquet encoding of pages without a dictionary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParquetEncoding {
    /// `PLAIN`.
    Plain,
    /// `DELTA_BINARY_PACKED` (integer-like leaves).
    DeltaBinaryPacked,
    /// `BYTE_STREAM_SPLIT` (floats and integer-like leaves).
    ByteStreamSplit,
    /// `DELTA_LENGTH_BYTE_ARRAY` (strings and binary).
    DeltaLengthByteArray,
    /// `DELTA_BYTE_ARRAY`: each value's prefix shared with the one before,
    /// then the rest (strings and binary).
    DeltaByteArray,
}

/// The Parquet statistics a column keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParquetStatistics {
    /// None.
    None,
    /// The chunk's.
    Chunk,
    /// The chunk's and each page's (the column index).
    Page,
}

/// The shape of a field.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A leaf of Arrow type `data_type`, drawn by `generator`.
    Scalar {
        /// Boolean, integer, float, string, binary, dictionary, date or
        /// timestamp.
        data_type: DataType,
        /// How values are drawn.
        generator: Generator,
    },
    /// A struct of child fields.
    Struct(Vec<Field>),
    /// A list of `item`s, `length` of them per value.
    List {
        /// The element field (named `item`).
        item: Box<Field>,
        /// Elements per list: an integer generator.
        length: Generator,
        /// Lists drawn with no elements are null instead of empty.
        empty_as_null: bool,
    },
    /// A map with `length` entries per value.
    Map {
        /// The key field (never null).
        key: Box<Field>,
        /// The value field.
        value: Box<Field>,
        /// Entries per map: an integer generator.
        length: Generator,
    },
}

/// A value in a spec, already checked against its field's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A boolean.
    Bool(bool),
    /// An integer, a date (days since 1970-01-01) or a timestamp (units
    /// since the epoch).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A number computed once per run from `scale` and `rows('t')` (a
    /// bound, start, step, constant or count written as an SQL string):
    /// replaced by its value before a generator is compiled
    /// ([`Dataset::at_scale`]).
    Run(Box<RunValue>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Run(r) => write!(f, "{:?}", r.source),
        }
    }
}

impl Value {
    /// Whether `min` and `max` bound a `uniform`: integers (dates, units)
    /// `min <= max`, floats `min < max` a finite distance apart; a bound
    /// computed per run is checked once it is ([`Dataset::at_scale`]).
    pub(crate) fn uniform_bounds(min: &Value, max: &Value) -> bool {
        match (min, max) {
            (Value::Int(a), Value::Int(b)) => a <= b,
            (Value::Float(a), Value::Float(b)) => a < b && (b - a).is_finite(),
            (Value::Run(_), _) | (_, Value::Run(_)) => true,
            _ => false,
        }
    }

    /// This value as a spec writes it for a field of type `data_type`:
    /// decimals with their scale (`12.50`, not `1250`), dates as
    /// `YYYY-MM-DD`, timestamps as `YYYY-MM-DDTHH:MM:SS[.f]` (UTC), times
    /// of day as `HH:MM:SS[.f]`; other values as [`Value`]'s `Display`.
    pub fn display_as<'a>(&'a self, data_type: &'a DataType) -> impl fmt::Display + 'a {
        Typed(self, data_type)
    }
}

/// A [`Value`] shown as its field's type reads.
struct Typed<'a>(&'a Value, &'a DataType);

/// Units of `unit` in a second.
pub(crate) fn units_per_second(unit: TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

impl fmt::Display for Typed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Value::Int(i) = self.0 else {
            return write!(f, "{}", self.0);
        };
        let i = *i;
        // Seconds and nanoseconds of `i` units of `u`.
        let split = |u: &TimeUnit| {
            let per: i128 = units_per_second(*u);
            (
                i.div_euclid(per),
                (i.rem_euclid(per) * (1_000_000_000 / per)) as u32,
            )
        };
        let shown = match self.1 {
            DataType::Dictionary(_, v) => return write!(f, "{}", self.0.display_as(v)),
            DataType::Date32 => i32::try_from(i)
                .ok()
                .and_then(|d| d.checked_add(719_163))
                .and_then(chrono::NaiveDate::from_num_days_from_ce_opt)
                .map(|d| d.format("%Y-%m-%d").to_string()),
            DataType::Timestamp(u, _) => {
                let (secs, nanos) = split(u);
                i64::try_from(secs)
                    .ok()
                    .and_then(|s| chrono::DateTime::from_timestamp(s, nanos))
                    .map(|t| t.naive_utc().format("%Y-%m-%dT%H:%M:%S%.f").to_string())
            }
            DataType::Time32(u) | DataType::Time64(u) => {
                let (secs, nanos) = split(u);
                u32::try_from(secs)
                    .ok()
                    .and_then(|s| chrono::NaiveTime::from_num_seconds_from_midnight_opt(s, nanos))
                    .map(|t| t.format("%H:%M:%S%.f").to_string())
            }
            DataType::Decimal128(_, scale) | DataType::Decimal256(_, scale) => {
                Some(decimal_text(i, *scale))
            }
            _ => None,
        };
        match shown {
            Some(s) => f.write_str(&s),
            None => write!(f, "{i}"),
        }
    }
}

/// Decimal `units` of `10^-scale` as text (`1250` at scale 2 is `12.50`).
fn decimal_text(units: i128, scale: i8) -> String {
    let Ok(scale) = usize::try_from(scale) else {
        return units.to_string();
    };
    let digits = units.unsigned_abs().to_string();
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (whole, frac) = digits.split_at(digits.len() - scale);
    let sign = if units < 0 { "-" } else { "" };
    if frac.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{frac}")
    }
}

/// A share (a null rate, a probability) in at most four significant
/// digits (`0.04255`, not `0.0425531914893617`), or in full where four
/// would round it to 0 or 1.
pub fn share_text(p: f64) -> String {
    if p == 0.0 || p == 1.0 || !p.is_finite() || p.abs() < 1e-4 {
        return Num(p).to_string();
    }
    let digits = (3 - p.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{p:.digits$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    match text.parse::<f64>() {
        Ok(r) if r == 0.0 || r == 1.0 => Num(p).to_string(),
        _ => text,
    }
}

/// How a leaf's values (or a list's lengths) are drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// Always this value.
    Constant(Value),
    /// `start + step * index`, where the index is the row number for
    /// top-level fields and `parent_index * max_length + position` inside
    /// lists and maps: unique, with gaps. Never wrapped: rows whose values
    /// would pass the type's range, or whose index would pass 2^64 (the
    /// row times the product of the enclosing lists' most lengths), are an
    /// error ([`crate::SpecGenerator::check_rows`]).
    Sequence {
        /// The first value.
        start: Value,
        /// The increment.
        step: Value,
    },
    /// Uniform between `min` and `max` (inclusive for integers, dates and
    /// timestamps; `[min, max)` for floats).
    Uniform {
        /// The least value.
        min: Value,
        /// The greatest value.
        max: Value,
    },
    /// Normal with this mean and standard deviation, clamped to
    /// `[min, max]` when given and rounded for integer types.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation (> 0).
        std: f64,
        /// Lower clamp.
        min: Option<f64>,
        /// Upper clamp.
        max: Option<f64>,
    },
    /// `exp(mu + sigma * Z)` for a standard normal `Z` (median
    /// `exp(mu)`), clamped to `[min, max]` when given and rounded for
    /// integer types (to the scale for decimals).
    Lognormal {
        /// Mean of the logarithm.
        mu: f64,
        /// Standard deviation of the logarithm (> 0).
        sigma: f64,
        /// Lower clamp.
        min: Option<f64>,
        /// Upper clamp.
        max: Option<f64>,
    },
    /// An empirical distribution: the inverse distribution function is
    /// linear between the points `(i / n, points[i])`, so a uniform `u`
    /// in `[0, 1)` gives the value at `u * n` between its two
    /// neighbouring points. Integer-like values (integers, decimal units,
    /// days, timestamp units) are rounded to the nearest.
    Quantiles {
        /// `q0..=qn`, non-decreasing, at least two (integers of the
        /// type's units, or floats).
        points: Vec<Value>,
        /// Dates and timestamps: weights of Monday to Sunday. A drawn
        /// value moves within its ISO week (of its UTC day, keeping the
        /// time of day) to a weekday drawn with these weights, then is
        /// clamped to `[q0, qn]`.
        weekdays: Option<[f64; 7]>,
    },
    /// Zipf over ranks `1..=n` (`P(k) ∝ k^-s`): the value is
    /// `values[k - 1]`, or `start + k - 1` for numbers without values.
    Zipf {
        /// Exponent (> 0).
        s: f64,
        /// Ranks.
        n: u64,
        /// Value of each rank, most frequent first.
        values: Option<Vec<Value>>,
        /// Value of rank 1 when there are no `values` (default 1).
        start: i128,
    },
    /// One of `values`, with probability proportional to its weight.
    Weighted {
        /// The categories.
        values: Vec<Value>,
        /// Non-negative weights, one per value.
        weights: Vec<f64>,
    },
    /// `true` with this probability.
    Probability(f64),
    /// A string template such as `+91-99-{seq:08}`.
    Template(Template),
    /// Windows of `min..=max` characters at random places of one
    /// pseudo-text of `size` characters: words of `list` (or `own`)
    /// joined by spaces, the same for every seed.
    Text {
        /// The vocabulary.
        list: WordList,
        /// The spec's own words instead of `list`'s (ASCII).
        own: Option<Vec<String>>,
        /// The pseudo-text's length.
        size: u32,
        /// Shortest window.
        min: u32,
        /// Longest window.
        max: u32,
    },
    /// `min..=max` characters, each drawn from `alphabet`.
    Chars {
        /// The characters, each once.
        alphabet: Vec<char>,
        /// Fewest characters.
        min: u32,
        /// Most characters.
        max: u32,
    },
    /// `min..=max` words from a list, joined by spaces.
    Words {
        /// The vocabulary.
        list: WordList,
        /// The spec's own words instead of `list`'s.
        own: Option<Vec<String>>,
        /// No word twice in one value.
        distinct: bool,
        /// Fewest words.
        min: u32,
        /// Most words.
        max: u32,
    },
    /// The value of a top-level field of a row of another table of the
    /// same [`Dataset`], the row drawn by `pick`: a foreign key when the
    /// field is that table's key, a copied attribute otherwise.
    Reference(Reference),
    /// In a child table: the row's position among its parent's children,
    /// plus this start (`1, 2, 3` for an order's line numbers).
    Position(i128),
    /// A random (version 4) UUID: 16 bytes for binary fields, the 36
    /// characters of its canonical text for strings.
    Uuid,
    /// Row `i` gets `values[i]` (a dimension's members, each once); past
    /// the list, `values[i % len]` when `cycle`, else the table is too
    /// long (an error). Top-level fields of tables with rows of their own.
    ByRow {
        /// One value per row.
        values: Vec<Value>,
        /// Start the list again after its last value.
        cycle: bool,
    },
    /// In a calendar table: this part of the row's day.
    Calendar(CalendarPart),
    /// A value computed from the row's siblings by an SQL expression.
    Expr(Box<Expression>),
    /// An aggregate of the row's children in a child table.
    Aggregate(Aggregate),
}

/// A [`Generator::Aggregate`]: `op` of a top-level field of the rows of
/// `table` (a child table of this one) that are this row's children.
/// Empty sets follow SQL: `count` is 0, the others are null.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// The child table.
    pub table: String,
    /// What is computed.
    pub op: AggOp,
    /// The child field (`None`: `count` of the rows).
    pub field: Option<String>,
}

/// The operation of an [`Aggregate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggOp {
    /// The sum of the values (nulls skipped).
    Sum,
    /// The least value.
    Min,
    /// The greatest value.
    Max,
    /// The rows (`count = "*"`) or the non-null values.
    Count,
    /// Whether every non-null boolean is true.
    All,
    /// Whether any is true.
    Any,
}

impl AggOp {
    /// Every operation, as specs spell them.
    pub const ALL: [(&'static str, AggOp); 6] = [
        ("sum", AggOp::Sum),
        ("min", AggOp::Min),
        ("max", AggOp::Max),
        ("count", AggOp::Count),
        ("all", AggOp::All),
        ("any", AggOp::Any),
    ];

    /// The spec spelling.
    pub fn as_str(self) -> &'static str {
        AggOp::ALL
            .iter()
            .find(|(_, o)| *o == self)
            .map_or("sum", |(n, _)| n)
    }
}

/// A [`Generator::Reference`]: which table and field, and how rows are
/// drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The parent table's name.
    pub table: String,
    /// A top-level field of the parent table.
    pub field: String,
    /// How the parent row is drawn.
    pub pick: Pick,
    /// A sibling field holding a reference to the same table whose row
    /// this one reads too (to copy several fields of one parent row);
    /// `pick` is then that sibling's.
    pub via: Option<String>,
    /// A name for the row this reference draws: sibling references with
    /// the same `draw` (to the same table) read that one row, as `via` the
    /// first of them, and expressions read its fields as `draw.field`.
    pub draw: Option<String>,
    /// Added to the copied value (integers, dates, timestamps, decimal
    /// units), drawn per row: an order's date plus 1 to 121 days.
    pub offset: Option<Box<Generator>>,
}

/// How a [`Reference`] draws a row of its parent table.
#[derive(Debug, Clone, PartialEq)]
pub enum Pick {
    /// Every row equally likely.
    Uniform,
    /// The row's own parent row, in a child table (`parent = ...`).
    Parent,
    /// Each row with probability proportional to the value of this
    /// numeric top-level field of the parent table (a customer's order
    /// rate, a product's popularity); nulls weigh nothing.
    Weighted {
        /// The weight field.
        field: String,
    },
    /// Zipf over the rows with exponent `s`: the rank-`k` row is row
    /// `((k - 1) * m + o) mod rows` for a multiplier `m` coprime with the
    /// row count and an offset `o` drawn once per field and seed, so the
    /// most referenced rows are spread over the table (and over its parts)
    /// rather than all at its start.
    Zipf {
        /// Exponent (> 0).
        s: f64,
    },
    /// Every row referenced equally often, within one: row `i` of the
    /// referencing table takes row `((i mod rows) * m + o) mod rows` for
    /// a multiplier `m` coprime with the row count and an offset `o`
    /// drawn once per field and seed, so each run of `rows` consecutive
    /// rows references every row once, in an order of its own per seed.
    Balanced,
}

/// A parameter as a person reads it: plain decimals, but exponent
/// notation for the very large and the very small (`1e300`, not 301
/// digits).
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0.abs();
        if a != 0.0 && a.is_finite() && !(1e-4..1e16).contains(&a) {
            write!(f, "{:e}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl Generator {
    /// This generator as `strata spec check` describes it for a field of
    /// type `data_type`: its values as the spec writes them (see
    /// [`Value::display_as`]).
    pub fn display_as<'a>(&'a self, data_type: &'a DataType) -> impl fmt::Display + 'a {
        Described(self, Some(data_type))
    }
}

impl fmt::Display for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Described(self, None).fmt(f)
    }
}

/// A [`Generator`], its values shown for a type when one is given.
struct Described<'a>(&'a Generator, Option<&'a DataType>);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |v: &Value| match self.1 {
            Some(dt) => v.display_as(dt).to_string(),
            None => v.to_string(),
        };
        let list = |vs: &[Value]| {
            let shown: Vec<String> = vs.iter().take(4).map(shown).collect();
            let more = if vs.len() > 4 {
                format!(", ... {} in all", vs.len())
            } else {
                String::new()
            };
            format!("[{}{more}]", shown.join(", "))
        };
        // Steps of dates, timestamps and times are counts of their units.
        let step_shown = |v: &Value| match self.1 {
            Some(DataType::Decimal128(..) | DataType::Decimal256(..)) => shown(v),
            _ => v.to_string(),
        };
        match self.0 {
            Generator::Constant(v) => write!(f, "constant {}", shown(v)),
            Generator::Sequence { start, step } => {
                write!(f, "sequence from {} by {}", shown(start), step_shown(step))
            }
            Generator::Uniform { min, max } => write!(f, "uniform {}..{}", shown(min), shown(max)),
            Generator::Normal {
                mean,
                std,
                min,
                max,
            } => {
                write!(f, "normal mean {} std {}", Num(*mean), Num(*std))?;
                if let Some(m) = min {
                    write!(f, " min {}", Num(*m))?;
                }
                if let Some(m) = max {
                    write!(f, " max {}", Num(*m))?;
                }
                Ok(())
            }
            Generator::Lognormal {
                mu,
                sigma,
                min,
                max,
            } => {
                write!(f, "lognormal mu {} sigma {}", Num(*mu), Num(*sigma))?;
                if let Some(m) = min {
                    write!(f, " min {}", Num(*m))?;
                }
                if let Some(m) = max {
                    write!(f, " max {}", Num(*m))?;
                }
                Ok(())
            }
            Generator::Quantiles { points, weekdays } => {
                let (first, last) = (&points[0], &points[points.len() - 1]);
                write!(
                    f,
                    "quantiles {}..{} ({} points)",
                    shown(first),
                    shown(last),
                    points.len()
                )?;
                if let Some(w) = weekdays {
                    let sum: f64 = w.iter().sum();
                    let shares: Vec<String> = crate::facts::DAY_NAMES
                        .iter()
                        .zip(w)
                        .map(|(d, w)| format!("{} {:.1}%", &d[..3], 100.0 * w / sum))
                        .collect();
                    write!(f, ", weekdays [{}]", shares.join(", "))?;
                }
                Ok(())
            }
            Generator::Zipf {
                s,
                n,
                values,
                start,
            } => match values {
                Some(v) => write!(f, "zipf s {} over {}", Num(*s), list(v)),
                None => write!(
                    f,
                    "zipf s {} over {}..{}",
                    Num(*s),
                    shown(&Value::Int(*start)),
                    shown(&Value::Int(*start + i128::from(*n) - 1))
                ),
            },
            Generator::Weighted { values, weights } => {
                let sum: f64 = weights.iter().sum();
                let shares: Vec<String> = values
                    .iter()
                    .zip(weights)
                    .take(4)
                    .map(|(v, w)| format!("{} {:.1}%", shown(v), 100.0 * w / sum))
                    .collect();
                let more = if values.len() > 4 {
                    format!(", ... {} in all", values.len())
                } else {
                    String::new()
                };
                write!(f, "weighted [{}{more}]", shares.join(", "))
            }
            Generator::Probability(p) => write!(f, "true with probability {}", share_text(*p)),
            Generator::Template(t) => write!(f, "template {:?}", t.source()),
            Generator::Text {
                list,
                own,
                size,
                min,
                max,
            } => {
                let words = match own {
                    Some(w) => format!("{} words", w.len()),
                    None => list.as_str().to_string(),
                };
                write!(
                    f,
                    "{min} to {max} characters of a {size}-character text of {words}"
                )
            }
            Generator::Chars { alphabet, min, max } => write!(
                f,
                "{min} to {max} characters of {:?}",
                alphabet.iter().collect::<String>()
            ),
            Generator::Words {
                list,
                own,
                distinct,
                min,
                max,
            } => {
                let distinct = if *distinct { "distinct " } else { "" };
                match own {
                    Some(words) => write!(f, "{min} to {max} {distinct}of {} words", words.len()),
                    None => write!(f, "{min} to {max} {distinct}{}", list.as_str()),
                }
            }
            Generator::Reference(r) => {
                write!(f, "reference to {}.{}", r.table, r.field)?;
                match (&r.via, &r.pick) {
                    (Some(v), _) => write!(f, ", the row of {v}")?,
                    (None, Pick::Parent) => write!(f, ", the parent row")?,
                    (None, Pick::Uniform) => write!(f, ", rows uniform")?,
                    (None, Pick::Zipf { s }) => write!(f, ", rows zipf s {}", Num(*s))?,
                    (None, Pick::Balanced) => write!(f, ", rows balanced")?,
                    (None, Pick::Weighted { field }) => write!(f, ", rows weighted by {field}")?,
                }
                match &r.offset {
                    Some(o) => write!(f, ", plus {o}"),
                    None => Ok(()),
                }
            }
            Generator::Position(start) => {
                write!(f, "numbered within each parent row from {start}")
            }
            Generator::Uuid => write!(f, "random UUIDs (version 4)"),
            Generator::ByRow { values, cycle } => {
                write!(f, "values by row {}", list(values))?;
                if *cycle {
                    write!(f, ", cycled")?;
                }
                Ok(())
            }
            Generator::Calendar(p) => write!(f, "the {} of the row's day", p.as_str()),
            Generator::Expr(e) => write!(f, "expression {:?}", e.source),
            Generator::Aggregate(a) => write!(
                f,
                "{} of {}.{} over the row's children",
                a.op.as_str(),
                a.table,
                a.field.as_deref().unwrap_or("*")
            ),
        }
    }
}

impl When {
    /// This case as `strata spec check` describes it for a field of type
    /// `data_type` (its generator's values as the spec writes them).
    pub fn display_as<'a>(&'a self, data_type: &'a DataType) -> impl fmt::Display + 'a {
        Case(self, Some(data_type))
    }
}

impl fmt::Display for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Case(self, None).fmt(f)
    }
}

/// A [`When`], its generator shown for a type when one is given.
struct Case<'a>(&'a When, Option<&'a DataType>);

impl fmt::Display for Case<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.0;
        match &w.condition {
            Condition::Is(vs) => {
                let vs: Vec<String> = vs.iter().map(Value::to_string).collect();
                write!(f, "when {} is {}", w.field, vs.join(" or "))?;
            }
            Condition::IsNull(true) => write!(f, "when {} is null", w.field)?,
            Condition::IsNull(false) => write!(f, "when {} is not null", w.field)?,
            Condition::Expr(e) => write!(f, "when {}", e.source)?,
        }
        if let Some(r) = w.null_rate {
            write!(f, ": null {}", share_text(r))?;
        }
        if let Some(g) = &w.generator {
            write!(f, ": {}", Described(g, self.1))?;
        }
        Ok(())
    }
}

/// The built-in vocabularies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WordList {
    /// Common English words.
    Words,
    /// Given names.
    FirstNames,
    /// Family names.
    LastNames,
}

impl WordList {
    /// Every built-in list.
    pub const ALL: [WordList; 3] = [WordList::Words, WordList::FirstNames, WordList::LastNames];

    /// The built-in list spelled `name` in a spec.
    pub fn named(name: &str) -> Option<WordList> {
        WordList::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The list's words.
    pub fn table(self) -> &'static crate::names::NameTable {
        match self {
            WordList::Words => crate::names::words(),
            WordList::FirstNames => crate::names::first_names(),
            WordList::LastNames => crate::names::last_names(),
        }
    }

    /// The spec spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            WordList::Words => "words",
            WordList::FirstNames => "first_names",
            WordList::LastNames => "last_names",
        }
    }
}

/// A case of a field that depends on a sibling.
#[derive(Debug, Clone, PartialEq)]
pub struct When {
    /// The sibling field's name.
    pub field: String,
    /// The line of the case.
    pub line: usize,
    /// When the case applies.
    pub condition: Condition,
    /// The null rate in this case (else the field's own).
    pub null_rate: Option<f64>,
    /// The generator in this case (else the field's own).
    pub generator: Option<Generator>,
}

/// The test a [`When`] case applies to its sibling.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// The sibling holds one of these values.
    Is(Vec<Value>),
    /// The sibling is null (`true`) or not (`false`).
    IsNull(bool),
    /// An SQL test of the siblings (`condition = "ship < DATE
    /// '1995-03-15'"`): ranges of numbers, dates and timestamps, or any
    /// boolean expression; a null test is false. The case's `field` is
    /// empty.
    Expr(Expression),
}

/// A spec error: the place and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// The spec's file name or preset name.
    pub origin: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column, for TOML syntax errors.
    pub column: Option<usize>,
    /// The dotted path of the field, when the error is in one.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": ")?;
        if let Some(p) = &self.field {
            write!(f, "field `{p}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SpecError {}

/// The embedded datasets of several tables: `(name, spec text)`, read
/// with [`Dataset::parse`].
pub const DATASET_PRESETS: &[(&str, &str)] = &[
    ("star", include_str!("../../specs/star.toml")),
    ("orders", include_str!("../../specs/orders.toml")),
    ("tpch", include_str!("../../specs/tpch.toml")),
];

/// The embedded presets: `(name, spec text)`.
pub const PRESETS: &[(&str, &str)] = &[
    ("contacts", include_str!("../../specs/contacts.toml")),
    ("wide-u64", include_str!("../../specs/wide-u64.toml")),
    ("events", include_str!("../../specs/events.toml")),
    ("lineitem", include_str!("../../specs/lineitem.toml")),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_the_spec_writes_them() {
        let uniform = |min: i128, max: i128| Generator::Uniform {
            min: Value::Int(min),
            max: Value::Int(max),
        };
        let dec = DataType::Decimal128(15, 2);
        assert_eq!(
            uniform(100, 99999).display_as(&dec).to_string(),
            "uniform 1.00..999.99"
        );
        assert_eq!(
            uniform(-5, 7).display_as(&dec).to_string(),
            "uniform -0.05..0.07"
        );
        assert_eq!(
            uniform(8035, 10440)
                .display_as(&DataType::Date32)
                .to_string(),
            "uniform 1992-01-01..1998-08-02"
        );
        let ts = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
        let seq = Generator::Sequence {
            start: Value::Int(1_704_067_200_250),
            step: Value::Int(1000),
        };
        assert_eq!(
            seq.display_as(&ts).to_string(),
            "sequence from 2024-01-01T00:00:00.250 by 1000"
        );
        assert_eq!(
            uniform(0, 30_600)
                .display_as(&DataType::Time32(TimeUnit::Second))
                .to_string(),
            "uniform 00:00:00..08:30:00"
        );
        let weighted = Generator::Weighted {
            values: vec![Value::Int(150), Value::Int(5)],
            weights: vec![3.0, 1.0],
        };
        assert_eq!(
            weighted.display_as(&dec).to_string(),
            "weighted [1.50 75.0%, 0.05 25.0%]"
        );
        // Integers, and days past chrono's calendar, as they are.
        assert_eq!(
            uniform(8035, 10440)
                .display_as(&DataType::Int32)
                .to_string(),
            "uniform 8035..10440"
        );
        assert_eq!(
            Value::Int(i128::from(i32::MAX))
                .display_as(&DataType::Date32)
                .to_string(),
            "2147483647"
        );
        assert_eq!(uniform(100, 99999).to_string(), "uniform 100..99999");
    }

    #[test]
    fn shares_take_four_significant_digits() {
        for (p, text) in [
            (0.0425531914893617, "0.04255"),
            (0.16666666666666666, "0.1667"),
            (0.2, "0.2"),
            (0.03, "0.03"),
            (0.5, "0.5"),
            (1.0, "1"),
            (0.0, "0"),
            (0.99999, "0.99999"),
            (0.00001234, "1.234e-5"),
        ] {
            assert_eq!(share_text(p), text, "{p}");
        }
        assert_eq!(
            Generator::Probability(0.123456).to_string(),
            "true with probability 0.1235"
        );
    }

    #[test]
    fn parameters_read_as_decimals_or_in_exponent_notation() {
        let zipf = |s| Generator::Zipf {
            s,
            n: 10,
            values: None,
            start: 1,
        };
        assert_eq!(zipf(1.1).to_string(), "zipf s 1.1 over 1..10");
        assert_eq!(zipf(1e300).to_string(), "zipf s 1e300 over 1..10");
        assert_eq!(zipf(2.5e-7).to_string(), "zipf s 2.5e-7 over 1..10");
        let normal = Generator::Normal {
            mean: -30.0,
            std: 0.0001,
            min: Some(1e20),
            max: None,
        };
        assert_eq!(normal.to_string(), "normal mean -30 std 0.0001 min 1e20");
        let lognormal = Generator::Lognormal {
            mu: 4.5,
            sigma: 1e-5,
            min: None,
            max: Some(1000.0),
        };
        assert_eq!(
            lognormal.to_string(),
            "lognormal mu 4.5 sigma 1e-5 max 1000"
        );
        let quantiles = Generator::Quantiles {
            points: vec![Value::Int(8035), Value::Int(9000), Value::Int(10440)],
            weekdays: None,
        };
        assert_eq!(quantiles.to_string(), "quantiles 8035..10440 (3 points)");
        assert_eq!(
            quantiles.display_as(&DataType::Date32).to_string(),
            "quantiles 1992-01-01..1998-08-02 (3 points)"
        );
        assert_eq!(
            Generator::Probability(0.0).to_string(),
            "true with probability 0"
        );
    }
}
