//! The profiles of a scan, as public data: what [`profile_tables`] found
//! in each column and nested field of each table, for readers other than
//! the spec writer (`strata report` draws them).
//!
//! Each table is scanned once (tables in parallel, each table's columns
//! in parallel within a batch); the caller sees every batch of that scan
//! too, to count what it needs beside the profile. Figures are exact over
//! the rows scanned unless said otherwise: samples are uniform reservoirs
//! over the column's values, distinct counts are estimated once a column
//! has more than `max_categories` values and one of them repeats, and the
//! most frequent values of such a column come from a heavy-hitters sketch
//! whose counts are low by at most its stated error.

use arrow_array::RecordBatch;
use arrow_schema::{Field, TimeUnit};
use rayon::prelude::*;

use crate::input::{Sample, TableInput};
use crate::keys::Relationship;
use crate::profile::{Category, Class, Leaf, Limits, Node, Shape, TableProfile};
use crate::{Error, input};

/// How [`profile_tables`] reads and what it keeps.
#[derive(Debug, Clone)]
pub struct ProfileOptions {
    /// How much of each table is read (default: every row).
    pub sample: Sample,
    /// The most distinct values a column may have to be counted exactly
    /// (default 1,000).
    pub max_categories: usize,
    /// Values sampled per column (default 20,000).
    pub sample_values: usize,
    /// Counters of the heavy-hitters sketch of a column with more than
    /// `max_categories` values (default 1,000; 0: none).
    pub heavy_hitters: usize,
    /// The fewest occurrences of a value for the key search to rely on it
    /// (default 10).
    pub min_count: u64,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions {
            sample: Sample::All,
            max_categories: 1000,
            sample_values: 20_000,
            heavy_hitters: 1000,
            min_count: 10,
        }
    }
}

/// What a leaf's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueClass {
    /// Booleans.
    Bool,
    /// Integers (also times of day and durations, as their integer).
    Int,
    /// Floating point.
    Float,
    /// Decimals, as integer units of `10^-scale`.
    Decimal {
        /// Digits after the point.
        scale: i8,
    },
    /// Days since 1970-01-01.
    Date,
    /// Instants in `unit` since the epoch.
    Timestamp {
        /// The unit.
        unit: TimeUnit,
    },
    /// UTF-8 text.
    Str,
    /// Bytes.
    Bytes,
}

impl ValueClass {
    fn of(c: &Class) -> ValueClass {
        match c {
            Class::Bool => ValueClass::Bool,
            Class::Int => ValueClass::Int,
            Class::Float => ValueClass::Float,
            Class::Decimal { scale } => ValueClass::Decimal { scale: *scale },
            Class::Date => ValueClass::Date,
            Class::Timestamp { unit } => ValueClass::Timestamp { unit: *unit },
            Class::Str => ValueClass::Str,
            Class::Bytes => ValueClass::Bytes,
        }
    }

    /// Whether values are ordered numbers (integers, floats, decimals,
    /// dates, timestamps).
    pub fn is_numeric(&self) -> bool {
        !matches!(self, ValueClass::Bool | ValueClass::Str | ValueClass::Bytes)
    }
}

/// One value of a column, as profiled.
#[derive(Debug, Clone, PartialEq)]
pub enum Observed {
    /// A boolean.
    Bool(bool),
    /// An integral value: an integer, a decimal's units, a date's days, a
    /// timestamp's ticks.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string's or binary's bytes.
    Bytes(Vec<u8>),
}

impl Observed {
    fn of(c: &Category, class: &Class) -> Observed {
        match (c, class) {
            (Category::Int(i), Class::Bool) => Observed::Bool(*i != 0),
            (Category::Int(i), Class::Float) => Observed::Float(f64::from_bits(*i as u64)),
            (Category::Int(i), _) => Observed::Int(*i),
            (Category::Bytes(b), _) => Observed::Bytes(b.clone()),
        }
    }
}

/// The most frequent values of a column too varied to count exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct HeavyHitters {
    /// `(value, count)`, most frequent first; each count is low by at
    /// most `error`. Every value more frequent than `error` is here
    /// (strings seen only once since their counter started are not).
    pub items: Vec<(Observed, u64)>,
    /// The most a count is below the true one.
    pub error: u64,
}

/// A leaf column's profile.
#[derive(Debug, Clone)]
pub struct LeafSummary {
    /// What its values are.
    pub class: ValueClass,
    /// Non-null values profiled (NaNs not included).
    pub count: u64,
    /// NaN floats (in no other figure).
    pub nan: u64,
    /// Least value (as a number: days, ticks, decimal units), `+inf`
    /// without values.
    pub min: f64,
    /// Greatest value, `-inf` without values.
    pub max: f64,
    /// Exact least and greatest of integral classes.
    pub range: Option<(i128, i128)>,
    /// Mean of the values (as numbers).
    pub mean: f64,
    /// Standard deviation.
    pub std: f64,
    /// Distinct non-null values.
    pub distinct: u64,
    /// Whether `distinct` is exact (else a HyperLogLog estimate).
    pub distinct_exact: bool,
    /// Every value with its count, most frequent first (ties by value),
    /// when the column has at most `max_categories` values.
    pub counts: Option<Vec<(Observed, u64)>>,
    /// The heavy hitters, when `counts` is `None` and values repeat.
    pub heavy: Option<HeavyHitters>,
    /// A uniform sample of the values as numbers, sorted (numeric
    /// classes).
    pub sample: Vec<f64>,
    /// Byte lengths of strings and binaries: `(length, count)` by length.
    pub lengths: Vec<(u64, u64)>,
    /// Trues of a boolean column.
    pub trues: u64,
    /// No value seen twice.
    pub unique: bool,
}

/// A profiled field's kind.
#[derive(Debug, Clone)]
pub enum ShapeSummary {
    /// A leaf.
    Leaf(Box<LeafSummary>),
    /// A struct's fields.
    Struct(Vec<ColumnSummary>),
    /// A list: lengths of the non-null lists `(length, count)`, and its
    /// items.
    List {
        /// Lengths.
        lengths: Vec<(u64, u64)>,
        /// Items.
        item: Box<ColumnSummary>,
    },
    /// A map: sizes of the non-null maps, its keys and values.
    Map {
        /// Sizes.
        sizes: Vec<(u64, u64)>,
        /// Keys.
        key: Box<ColumnSummary>,
        /// Values.
        value: Box<ColumnSummary>,
    },
    /// A type the profiler does not read: only nulls are counted.
    Unsupported,
}

/// A column or nested field.
#[derive(Debug, Clone)]
pub struct ColumnSummary {
    /// The Arrow field.
    pub field: Field,
    /// Positions where it could hold a value (rows for a top-level
    /// column; items of valid lists; fields of valid structs).
    pub slots: u64,
    /// Nulls among them.
    pub nulls: u64,
    /// Its values.
    pub shape: ShapeSummary,
}

/// A table's profile.
#[derive(Debug, Clone)]
pub struct TableSummary {
    /// The table.
    pub name: String,
    /// Its files, in scan order.
    pub files: Vec<String>,
    /// Rows in the table.
    pub rows: u64,
    /// Rows scanned.
    pub scanned: u64,
    /// Its columns, in schema order.
    pub columns: Vec<ColumnSummary>,
}

/// What [`profile_tables`] returns.
#[derive(Debug, Clone)]
pub struct Profiles {
    /// Per table, in the order given.
    pub tables: Vec<TableSummary>,
    /// Keys and relationships found across them (as `strata infer`
    /// reports them: `kind` `foreign key` with `target` `table.column`).
    pub relationships: Vec<Relationship>,
}

/// Profiles `tables` (from [`input::discover`]): each table scanned once,
/// tables in parallel, calling `each(i, batch)` with every batch of table
/// `i` in scan order (from the thread scanning that table).
///
/// # Errors
///
/// The first failing table's error (in the order given): files that
/// cannot be opened or decoded, files of one table with other columns,
/// options out of range.
pub fn profile_tables(
    tables: &[TableInput],
    opts: &ProfileOptions,
    store: &strata_store::location::StoreConfig,
    each: &(dyn Fn(usize, &RecordBatch) + Sync),
) -> Result<Profiles, Error> {
    if opts.max_categories == 0 || opts.sample_values < 100 {
        return Err(Error::Options(
            "profiling needs max_categories >= 1 and sample_values >= 100".into(),
        ));
    }
    let limits = Limits {
        max_categories: opts.max_categories,
        sample: opts.sample_values,
        texts: 64,
        keys: 10_000,
        heavy: opts.heavy_hitters,
    };
    let profiles: Vec<Result<TableProfile, Error>> = tables
        .par_iter()
        .enumerate()
        .map(|(i, t)| {
            let (schema, mut scanners) = input::open(t, store)?;
            let mut p = TableProfile::new(&t.name, schema.fields(), &limits);
            // Decoding the next batches (on a thread of its own, outside
            // the pool the profile runs on) overlaps profiling this one.
            let (tx, rx) = std::sync::mpsc::sync_channel::<RecordBatch>(4);
            let read = std::thread::scope(|sc| {
                let scanner = sc.spawn(move || {
                    input::scan(t, &schema, &mut scanners, opts.sample, |b| {
                        // A closed channel: the profile panicked, and says so.
                        let _ = tx.send(b.clone());
                    })
                });
                for b in rx {
                    rayon::join(|| p.add(&b), || each(i, &b));
                }
                scanner
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            });
            let read = read?;
            p.rows = read.rows.max(p.scanned);
            p.finish();
            p.apply(&read.stats);
            Ok(p)
        })
        .collect();
    let profiles: Vec<TableProfile> = profiles.into_iter().collect::<Result<_, _>>()?;
    let keys = crate::keys::find(&profiles, opts.min_count);
    Ok(Profiles {
        tables: profiles
            .iter()
            .zip(tables)
            .map(|(p, t)| TableSummary {
                name: p.name.clone(),
                files: t.files.clone(),
                rows: p.rows,
                scanned: p.scanned,
                columns: p.columns.iter().map(column).collect(),
            })
            .collect(),
        relationships: keys.found,
    })
}

fn counts(c: &crate::profile::Counts) -> Vec<(u64, u64)> {
    c.iter().collect()
}

fn column(n: &Node) -> ColumnSummary {
    ColumnSummary {
        field: n.field.clone(),
        slots: n.slots,
        nulls: n.nulls,
        shape: match &n.shape {
            Shape::Leaf(l) => ShapeSummary::Leaf(Box::new(leaf(l))),
            Shape::Struct(c) => ShapeSummary::Struct(c.iter().map(column).collect()),
            Shape::List { lengths, item } => ShapeSummary::List {
                lengths: counts(lengths),
                item: Box::new(column(item)),
            },
            Shape::Map { sizes, key, value } => ShapeSummary::Map {
                sizes: counts(sizes),
                key: Box::new(column(key)),
                value: Box::new(column(value)),
            },
            Shape::Unsupported => ShapeSummary::Unsupported,
        },
    }
}

fn leaf(l: &Leaf) -> LeafSummary {
    let (mean, std) = l.moments();
    let class = ValueClass::of(&l.class);
    let heavy = l
        .heavy
        .as_ref()
        .filter(|_| !l.unique)
        .map(|h| HeavyHitters {
            items: h
                .top()
                .into_iter()
                .filter_map(|(k, c, bytes)| {
                    Some((
                        match l.class {
                            Class::Str | Class::Bytes => Observed::Bytes(bytes?.to_vec()),
                            _ => Observed::of(&Category::Int(k), &l.class),
                        },
                        c,
                    ))
                })
                .collect(),
            error: h.error(),
        });
    LeafSummary {
        class,
        count: l.count,
        nan: l.nan,
        min: l.min,
        max: l.max,
        range: (l.class.is_integral() && l.count > 0).then_some((l.min_key, l.max_key)),
        mean,
        std,
        distinct: l.distinct(),
        distinct_exact: l.exact() || l.unique,
        counts: l.categories().map(|c| {
            c.iter()
                .map(|(k, n)| (Observed::of(k, &l.class), *n))
                .collect()
        }),
        heavy,
        sample: if class.is_numeric() {
            l.sorted_sample()
        } else {
            Vec::new()
        },
        lengths: counts(&l.lengths),
        trues: l.trues,
        unique: l.unique,
    }
}
