//! Checking generated data against its spec: the realised shares of nulls,
//! categories and list lengths next to the shares the spec gives them.
//!
//! [`verify_distribution`] streams the files of a generated dataset
//! (Parquet or Arrow IPC; local paths, `file://` or `s3://` URLs, read
//! through [`strata_scan`]) batch by batch, several files at a time, and
//! reports one [`Check`] per measured share of each field of a [`Spec`]:
//!
//! * `null`: the field's null share among the positions where all its
//!   ancestors are valid (a struct's children count only where the struct
//!   is valid, a list's elements only inside valid lists; after a Parquet
//!   round trip the children of a null struct read back as null). The
//!   specified share is the field's `null_rate`; for a field with `when`
//!   cases it is `Σ P(code) · rate(case of code)` over the codes of the
//!   sibling the cases read (null, or each category of a categorical
//!   sibling). A list with `empty_as_null` is also null when it draws no
//!   elements: `1 - (1 - null) · (1 - P(length 0))`.
//! * `value V`: for categorical leaves (`weighted`, `zipf` with values,
//!   `probability`, `constant`), each category's share among the non-null
//!   values (for `zipf`, the ten most frequent). A field whose cases change
//!   its generator gets the mixture of its branches. Map keys are distinct
//!   within a map (drawn again on a repeat, 64 draws at most), and their
//!   shares account for it. `other values`: values the generator never
//!   produces (listed only when seen).
//! * `length N`: for lists and maps, each length's share among the valid
//!   ones (for `empty_as_null` lists, given a non-zero length); `mean
//!   length` for normal lengths and for lengths with more than ten
//!   possible values; `other lengths`: lengths the generator never
//!   produces (listed only when seen).
//!
//! Each check carries `z`, the difference in binomial standard errors
//! (`sqrt(p (1 - p) / n)`; for a mean, `sqrt(variance / n)`); a check is
//! [`Check::suspicious`] when `|z|` exceeds [`SUSPICIOUS_Z`]. The rows are
//! independent draws, so a correct generator gives `|z| > 5` about once in
//! 1.7 million checks.
//!
//! Every field's null share is checked, a `null_rate` of 0 included
//! (realising any null then is suspicious), except where the spec of the
//! field alone does not give it: fields computed from others (an `expr`,
//! null where its inputs are; an `aggregate`, null for rows without
//! children), copied from another table (a reference), or whose cases
//! read such a field. Those are listed as [`Unchecked`], with their
//! realised share and the reason. Fields whose generators are
//! not categorical (sequences, uniform, normal, templates, words) get only
//! the null check.
//!
//! ```
//! use strata_gen::Spec;
//! use strata_gen::BatchGenerator;
//! use strata_pipeline::verify::Verifier;
//!
//! let spec = Spec::preset("contacts").unwrap();
//! let generator = spec.generator(7).unwrap();
//! let mut verifier = Verifier::new(&spec);
//! let mut scratch = Default::default();
//! for first in (0..100_000).step_by(10_000) {
//!     let batch = generator.generate(first, 10_000, &mut scratch).unwrap();
//!     verifier.add_batch(&batch).unwrap();
//! }
//! let report = verifier.report();
//! assert!(report.passed(), "{report}");
//! let names = report.find("name", "null").unwrap();
//! assert_eq!((names.specified, names.count), (0.2, 100_000));
//! ```

use std::{
    collections::HashMap,
    fmt,
    path::PathBuf,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
};

use arrow_array::{
    Array, RecordBatch,
    cast::AsArray,
    downcast_dictionary_array,
    types::{
        Date32Type, Date64Type, Decimal128Type, Int8Type, Int16Type, Int32Type, Int64Type,
        TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
        TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
    },
};
use arrow_buffer::{ArrowNativeType, BooleanBuffer, BooleanBufferBuilder};
use arrow_schema::{DataType, TimeUnit};
use strata_gen::{
    AggOp, Condition, Field, Generator, Kind, Spec, Value,
    expected::{LengthPmf, category_probabilities, length_pmf, map_key_shares},
};

use strata_scan::{ScanRequest, Scanner};
use strata_store::location::StoreConfig;

use crate::Error;

/// A check is suspicious when its realised share is more than this many
/// standard errors from the specified one.
pub const SUSPICIOUS_Z: f64 = 5.0;

/// Categories of a `zipf` generator that are checked (the most frequent).
const TOP_VALUES: usize = 10;
/// Lengths listed one by one when there are at most this many.
const MAX_LISTED_LENGTHS: usize = 10;
/// Deepest chain of `when` cases followed (the parser rejects cycles;
/// this guards specs built in code).
const MAX_CASE_DEPTH: usize = 64;

/// One measured share: what the spec says and what the data holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The dotted path of the field (`phones.item.number`).
    pub field: String,
    /// What is measured: `null`, `value "Mobile"`, `length 3`, `mean
    /// length`, `other values`, `other lengths`.
    pub measure: String,
    /// The share (or mean) the spec gives.
    pub specified: f64,
    /// The share (or mean) in the data; NaN when `count` is 0.
    pub realised: f64,
    /// The denominator: positions where the field is present for `null`,
    /// non-null values for values, valid lists for lengths.
    pub count: u64,
    /// `(realised - specified) / standard error`; 0 when `count` is 0,
    /// infinite when the spec rules out what the data holds.
    pub z: f64,
}

impl Check {
    /// Whether the realised share is more than [`SUSPICIOUS_Z`] standard
    /// errors from the specified one.
    pub fn suspicious(&self) -> bool {
        self.z.abs() > SUSPICIOUS_Z
    }

    /// A share: `hits` of `count` against probability `p`.
    fn share(field: &str, measure: String, p: f64, hits: u64, count: u64) -> Check {
        let realised = hits as f64 / count as f64;
        let se = (p * (1.0 - p) / count as f64).sqrt();
        Check {
            field: field.to_string(),
            measure,
            specified: p,
            realised: if count == 0 { f64::NAN } else { realised },
            count,
            z: z_score(realised, p, se, count),
        }
    }

    /// A mean of `count` values summing to `sum`, against a distribution
    /// of mean `mean` and variance `variance`.
    fn mean(field: &str, measure: String, mean: f64, variance: f64, sum: f64, count: u64) -> Check {
        let realised = sum / count as f64;
        let se = (variance / count as f64).sqrt();
        Check {
            field: field.to_string(),
            measure,
            specified: mean,
            realised: if count == 0 { f64::NAN } else { realised },
            count,
            z: z_score(realised, mean, se, count),
        }
    }
}

fn z_score(realised: f64, specified: f64, se: f64, count: u64) -> f64 {
    if count == 0 {
        return 0.0;
    }
    let diff = realised - specified;
    // Specified shares are sums of products and carry rounding error.
    if diff.abs() <= 1e-12 * specified.abs().max(1.0) {
        0.0
    } else if se > 0.0 {
        diff / se
    } else {
        diff.signum() * f64::INFINITY
    }
}

/// A null share that is not checked, and why: that of a field computed
/// from others (an expression, an aggregate of child rows) or copied from
/// another table, whose shares its own spec does not give.
#[derive(Debug, Clone, PartialEq)]
pub struct Unchecked {
    /// The dotted path of the field.
    pub field: String,
    /// What is not checked: `null`.
    pub measure: String,
    /// The share in the data; NaN when `count` is 0.
    pub realised: f64,
    /// The denominator, as for a [`Check`].
    pub count: u64,
    /// Why it is not checked.
    pub reason: String,
}

/// The checks of a dataset, in spec order (depth first), with a text table
/// as its [`Display`](fmt::Display) (each line ending in a newline).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Every check.
    pub checks: Vec<Check>,
    /// The shares not checked, in spec order.
    pub unchecked: Vec<Unchecked>,
    /// Rows read.
    pub rows: u64,
    /// Files read (0 for batches given to a [`Verifier`] directly).
    pub files: usize,
}

impl Report {
    /// The suspicious checks.
    pub fn suspicious(&self) -> Vec<&Check> {
        self.checks.iter().filter(|c| c.suspicious()).collect()
    }

    /// Whether no check is suspicious.
    pub fn passed(&self) -> bool {
        !self.checks.iter().any(Check::suspicious)
    }

    /// The check of `field` (dotted path) measuring `measure`.
    pub fn find(&self, field: &str, measure: &str) -> Option<&Check> {
        self.checks
            .iter()
            .find(|c| c.field == field && c.measure == measure)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = self.checks.iter().map(|c| &c.field);
        let fw = fields
            .chain(self.unchecked.iter().map(|u| &u.field))
            .map(|f| f.chars().count())
            .chain([5])
            .max()
            .unwrap_or(5);
        let measures = self.checks.iter().map(|c| &c.measure);
        let mw = measures
            .chain(self.unchecked.iter().map(|u| &u.measure))
            .map(|m| m.chars().count())
            .chain([7])
            .max()
            .unwrap_or(7);
        writeln!(
            f,
            "{:<fw$}  {:<mw$}  {:>10}  {:>10}  {:>10}  {:>8}  flag",
            "field", "measure", "specified", "realised", "n", "z"
        )?;
        for c in &self.checks {
            let realised = if c.count == 0 {
                "-".to_string()
            } else {
                format!("{:.6}", c.realised)
            };
            let flag = if c.count == 0 {
                "no data"
            } else if c.suspicious() {
                "SUSPICIOUS"
            } else {
                "ok"
            };
            writeln!(
                f,
                "{:<fw$}  {:<mw$}  {:>10.6}  {:>10}  {:>10}  {:>+8.2}  {flag}",
                c.field, c.measure, c.specified, realised, c.count, c.z
            )?;
        }
        for u in &self.unchecked {
            let realised = if u.count == 0 {
                "-".to_string()
            } else {
                format!("{:.6}", u.realised)
            };
            writeln!(
                f,
                "{:<fw$}  {:<mw$}  {:>10}  {:>10}  {:>10}  {:>8}  not checked: {}",
                u.field, u.measure, "-", realised, u.count, "-", u.reason
            )?;
        }
        let bad = self.checks.iter().filter(|c| c.suspicious()).count();
        write!(
            f,
            "{} checks, {bad} suspicious (|z| > {SUSPICIOUS_Z}), ",
            self.checks.len(),
        )?;
        if !self.unchecked.is_empty() {
            write!(f, "{} not checked, ", self.unchecked.len())?;
        }
        write!(f, "{} rows", self.rows)?;
        if self.files > 0 {
            write!(
                f,
                " in {} file{}",
                self.files,
                if self.files == 1 { "" } else { "s" }
            )?;
        }
        writeln!(f)
    }
}

/// Reads `files` (local paths, `file://` or `s3://` URLs, Parquet or Arrow
/// IPC, told apart by their contents) and checks them against `spec`; S3
/// settings come from the standard `AWS_*` environment variables.
///
/// # Errors
///
/// As [`verify_distribution_with`].
pub fn verify_distribution<S: AsRef<str> + Sync>(
    spec: &Spec,
    files: &[S],
) -> Result<Report, Error> {
    verify_distribution_with(spec, files, &StoreConfig::default())
}

/// [`verify_distribution`] with S3 settings. Files are read in parallel
/// (one thread per file, up to the available cores), each batch by batch,
/// fetching only the spec's top-level columns.
///
/// # Errors
///
/// [`Error::InvalidConfig`] for an empty `files`; the errors of
/// [`Scanner::open_location`] and [`Scanner::scan`] (missing files, files
/// of neither format, missing columns, read failures);
/// [`Error::Read`] wrapping [`Error::SpecMismatch`] when a file's columns
/// do not have the spec's shape, or [`Error::Corrupt`] for inconsistent
/// list offsets. With several failing files, the first one's error.
pub fn verify_distribution_with<S: AsRef<str> + Sync>(
    spec: &Spec,
    files: &[S],
    cfg: &StoreConfig,
) -> Result<Report, Error> {
    if files.is_empty() {
        return Err(Error::InvalidConfig("no files to verify".into()));
    }
    let base = Verifier::new(spec);
    let columns: Vec<String> = spec
        .fields
        .iter()
        .filter(|f| !f.hidden)
        .map(|f| f.name.clone())
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let outcomes: Vec<Result<Verifier, (usize, Error)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut v = base.clone();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= files.len() || failed.load(Ordering::Relaxed) {
                            return Ok(v);
                        }
                        if let Err(e) = verify_file(&mut v, files[i].as_ref(), &columns, cfg) {
                            failed.store(true, Ordering::Relaxed);
                            return Err((i, e));
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut total = base;
    let mut first_error: Option<(usize, Error)> = None;
    for o in outcomes {
        match o {
            Ok(v) => total.absorb(&v),
            Err((i, e)) => {
                if first_error.as_ref().is_none_or(|(j, _)| i < *j) {
                    first_error = Some((i, e));
                }
            }
        }
    }
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    let mut report = total.report();
    report.files = files.len();
    Ok(report)
}

fn verify_file(
    v: &mut Verifier,
    location: &str,
    columns: &[String],
    cfg: &StoreConfig,
) -> Result<(), Error> {
    let mut scanner = Scanner::open_location(location, cfg)?;
    let req = ScanRequest {
        columns: Some(columns.to_vec()),
        ..Default::default()
    };
    let mut mine = None;
    let scanned = scanner.scan(&req, |b| {
        v.add_batch(b).map_err(|e| {
            mine = Some(e);
            // Stops the scan; the error returned is `mine`.
            strata_scan::Error::InvalidConfig("stopped by the verifier".into())
        })
    });
    match (scanned, mine) {
        (_, Some(e)) => Err(Error::Read {
            path: PathBuf::from(location),
            source: Box::new(e),
        }),
        (r, None) => Ok(r?),
    }
}

/// Counts of one dataset's batches against a spec; [`Verifier::report`]
/// turns them into checks. For data that is not in files, or to check
/// batches as they are made.
#[derive(Debug, Clone)]
pub struct Verifier {
    roots: Vec<Node>,
    rows: u64,
}

impl Verifier {
    /// What to measure for `spec`, with nothing counted yet.
    pub fn new(spec: &Spec) -> Verifier {
        Verifier {
            // Hidden fields are not written: nothing of theirs to measure.
            roots: spec
                .fields
                .iter()
                .filter(|f| !f.hidden)
                .map(|f| Node::plan(f, &spec.fields))
                .collect(),
            rows: 0,
        }
    }

    /// Counts one batch. Its top-level columns are found by name (others
    /// are ignored), struct children by name, map keys and values by
    /// position.
    ///
    /// # Errors
    ///
    /// [`Error::SpecMismatch`] when a spec field is missing or has another
    /// shape (a list where the spec has a struct, values that cannot be
    /// compared with the spec's categories); nothing is counted then.
    /// [`Error::Corrupt`] for list offsets outside their values; the
    /// counts are then partial, and the verifier should be dropped.
    pub fn add_batch(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        let schema = batch.schema();
        let mut columns = Vec::with_capacity(self.roots.len());
        for node in &self.roots {
            let i = schema
                .index_of(&node.name)
                .map_err(|_| Error::SpecMismatch {
                    field: node.path.clone(),
                    message: format!(
                        "the data has no such column (its columns: {})",
                        schema
                            .fields()
                            .iter()
                            .map(|f| f.name().as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })?;
            node.conform(schema.field(i).data_type())?;
            columns.push(i);
        }
        for (node, i) in self.roots.iter_mut().zip(columns) {
            node.observe(batch.column(i).as_ref(), None)?;
        }
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// The checks so far.
    pub fn report(&self) -> Report {
        let mut checks = Vec::new();
        let mut unchecked = Vec::new();
        for n in &self.roots {
            n.checks(&mut checks, &mut unchecked);
        }
        Report {
            checks,
            unchecked,
            rows: self.rows,
            files: 0,
        }
    }

    /// Adds `other`'s counts (a verifier of the same spec).
    fn absorb(&mut self, other: &Verifier) {
        self.rows += other.rows;
        for (a, b) in self.roots.iter_mut().zip(&other.roots) {
            a.absorb(b);
        }
    }
}

// ---------------------------------------------------------------------
// What the spec says.

/// A value as a hash key (floats by their bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Bool(bool),
    Int(i128),
    Float(u64),
    Str(String),
}

fn key_of(v: &Value) -> Key {
    match v {
        Value::Bool(b) => Key::Bool(*b),
        Value::Int(i) => Key::Int(*i),
        Value::Float(f) => Key::Float(f.to_bits()),
        Value::Str(s) => Key::Str(s.clone()),
        // A spec at a run's scale has none (`Dataset::at_scale`).
        Value::Run(r) => Key::Str(r.source.clone()),
    }
}

/// Values with probabilities, each value once, in first-seen order.
#[derive(Debug, Default)]
struct Mixture {
    entries: Vec<(Value, f64)>,
    index: HashMap<Key, usize>,
}

impl Mixture {
    fn add(&mut self, v: &Value, p: f64) {
        match self.index.get(&key_of(v)) {
            Some(&i) => self.entries[i].1 += p,
            None => {
                self.index.insert(key_of(v), self.entries.len());
                self.entries.push((v.clone(), p));
            }
        }
    }
}

/// A field's distribution as its checks and its siblings' cases see it.
struct Dist {
    /// Null share in the data.
    null: f64,
    /// Shares of values among the non-null ones, for categorical leaves.
    values: Option<Vec<(Value, f64)>>,
}

/// What a sibling holds, as a case condition tests it.
enum Code<'a> {
    Null,
    Value(&'a Value),
    /// Non-null, of a field that is not categorical.
    Other,
}

fn matches(c: &Condition, code: &Code<'_>) -> bool {
    match (c, code) {
        (Condition::IsNull(b), Code::Null) => *b,
        (Condition::IsNull(b), _) => !*b,
        (Condition::Is(vals), Code::Value(v)) => vals.contains(v),
        (Condition::Is(_), _) => false,
        // Not computed from a code (`distribution` gives up first).
        (Condition::Expr(_), _) => false,
    }
}

/// The null share of field `f` drawn null with probability `rate`,
/// counting `empty_as_null` lists drawn empty.
fn data_null(f: &Field, rate: f64) -> Option<f64> {
    match &f.kind {
        Kind::List {
            length,
            empty_as_null: true,
            ..
        } => {
            let empty = length_pmf(length)?.probability(0);
            Some(1.0 - (1.0 - rate) * (1.0 - empty))
        }
        _ => Some(rate),
    }
}

/// Why the shares a generator gives its field cannot be computed from
/// the field's own spec: a value computed from other fields, or copied
/// from another table.
fn computed(g: &Generator) -> Option<&'static str> {
    match g {
        // A reference copies another table's values (and nulls): its
        // shares are that field's, which this table's spec does not say.
        Generator::Reference(_) => Some("copied from another table"),
        // Nulls in give a null, and so may a division by zero.
        Generator::Expr(_) => Some("an expression, null where its inputs are"),
        // Null for a row without children, as the child table's counts
        // draw them (a count is 0 there).
        Generator::Aggregate(a) if a.op != AggOp::Count => {
            Some("an aggregate, null for rows without children")
        }
        _ => None,
    }
}

/// The distribution of field `f` among `siblings`, or why it depends on
/// something that cannot be computed.
fn distribution(f: &Field, siblings: &[Field], depth: usize) -> Result<Dist, String> {
    if depth > MAX_CASE_DEPTH {
        return Err("its cases nest too deep".into());
    }
    let own = match &f.kind {
        Kind::Scalar { generator, .. } => Some(generator),
        _ => None,
    };
    let case_generators = f.when.iter().filter_map(|w| w.generator.as_ref());
    if let Some(why) = own.into_iter().chain(case_generators).find_map(computed) {
        return Err(why.into());
    }
    // (probability, null rate, generator) of each branch.
    let branches: Vec<(f64, f64, Option<&Generator>)> = if f.when.is_empty() {
        vec![(1.0, f.null_rate, own)]
    } else {
        let name = &f.when[0].field;
        if f.when.iter().any(|w| &w.field != name)
            || f.when
                .iter()
                .any(|w| matches!(w.condition, Condition::Expr(_)))
        {
            return Err("its `when` conditions test computed values".into());
        }
        let sibling = siblings
            .iter()
            .find(|s| &s.name == name && s.name != f.name)
            .ok_or_else(|| format!("its cases read `{name}`, which is not a sibling"))?;
        let sd = distribution(sibling, siblings, depth + 1)
            .map_err(|why| format!("its cases read `{name}`: {why}"))?;
        let branch = |code: Code<'_>| {
            f.when
                .iter()
                .position(|w| matches(&w.condition, &code))
                .unwrap_or(f.when.len())
        };
        let mut weights = vec![0.0; f.when.len() + 1];
        weights[branch(Code::Null)] += sd.null;
        match &sd.values {
            Some(vs) => {
                for (v, p) in vs {
                    weights[branch(Code::Value(v))] += (1.0 - sd.null) * p;
                }
            }
            None => weights[branch(Code::Other)] += 1.0 - sd.null,
        }
        weights
            .into_iter()
            .enumerate()
            .map(|(b, w)| match f.when.get(b) {
                Some(case) => (
                    w,
                    case.null_rate.unwrap_or(f.null_rate),
                    case.generator.as_ref().or(own),
                ),
                None => (w, f.null_rate, own),
            })
            .collect()
    };
    let (mut null, mut valid) = (0.0, 0.0);
    let mut values = own.map(|_| Mixture::default());
    for (w, rate, g) in branches {
        if w <= 0.0 {
            continue;
        }
        let n = data_null(f, rate)
            .ok_or_else(|| "its list lengths' shares cannot be computed".to_string())?;
        null += w * n;
        let share = w * (1.0 - n);
        valid += share;
        if share <= 0.0 {
            continue;
        }
        match (values.as_mut(), g.and_then(category_probabilities)) {
            (Some(mix), Some(cats)) => {
                for (v, p) in &cats {
                    mix.add(v, share * p);
                }
            }
            _ => values = None,
        }
    }
    let values = values
        .filter(|_| valid > 0.0)
        .map(|m| m.entries.into_iter().map(|(v, p)| (v, p / valid)).collect());
    Ok(Dist { null, values })
}

/// Values merged by equality, probabilities added.
fn merged(values: &[(Value, f64)]) -> Vec<(Value, f64)> {
    let mut m = Mixture::default();
    for (v, p) in values {
        m.add(v, *p);
    }
    m.entries
}

// ---------------------------------------------------------------------
// What the data holds.

/// A field's plan and counts.
#[derive(Debug, Clone)]
struct Node {
    name: String,
    path: String,
    /// The specified null share, when it can be computed.
    null: Option<f64>,
    /// Why it cannot be, otherwise.
    unchecked: Option<String>,
    /// Positions where the field is present (all ancestors valid).
    present: u64,
    /// Nulls among them.
    nulls: u64,
    values: Option<Categories>,
    shape: Shape,
}

#[derive(Debug, Clone)]
enum Shape {
    Leaf,
    Struct(Vec<Node>),
    List {
        item: Box<Node>,
        lengths: Option<Lengths>,
    },
    Map {
        key: Box<Node>,
        value: Box<Node>,
        lengths: Option<Lengths>,
    },
}

impl Shape {
    fn describe(&self) -> &'static str {
        match self {
            Shape::Leaf => "a scalar",
            Shape::Struct(_) => "a struct",
            Shape::List { .. } => "a list",
            Shape::Map { .. } => "a map",
        }
    }
}

fn is_zipf(g: &Generator) -> bool {
    matches!(g, Generator::Zipf { .. })
}

impl Node {
    fn plan(f: &Field, siblings: &[Field]) -> Node {
        let dist = distribution(f, siblings, 0);
        let (null, unchecked) = match &dist {
            Ok(d) => (Some(d.null), None),
            Err(why) => (None, Some(why.clone())),
        };
        let dist = dist.ok();
        let (values, shape) = match &f.kind {
            Kind::Scalar {
                generator,
                data_type,
            } => (
                dist.and_then(|d| d.values).map(|v| {
                    let mut c = Categories::new(v, is_zipf(generator));
                    c.data_type = Some(data_type.clone());
                    c
                }),
                Shape::Leaf,
            ),
            Kind::Struct(children) => (
                None,
                Shape::Struct(children.iter().map(|c| Node::plan(c, children)).collect()),
            ),
            Kind::List {
                item,
                length,
                empty_as_null,
            } => (
                None,
                Shape::List {
                    item: Box::new(Node::plan(item, &[])),
                    lengths: length_pmf(length).and_then(|p| Lengths::new(&p, *empty_as_null)),
                },
            ),
            Kind::Map { key, value, length } => {
                let pmf = length_pmf(length);
                let mut k = Node::plan(key, &[]);
                k.values = match (&key.kind, &pmf) {
                    (Kind::Scalar { generator, .. }, Some(pmf)) => {
                        category_probabilities(generator)
                            .and_then(|c| map_key_shares(&c, pmf))
                            .map(|v| Categories::new(merged(&v), is_zipf(generator)))
                    }
                    _ => None,
                };
                (
                    None,
                    Shape::Map {
                        key: Box::new(k),
                        value: Box::new(Node::plan(value, &[])),
                        lengths: pmf.and_then(|p| Lengths::new(&p, false)),
                    },
                )
            }
        };
        Node {
            name: f.name.clone(),
            path: f.path.clone(),
            null,
            unchecked,
            present: 0,
            nulls: 0,
            values,
            shape,
        }
    }

    fn mismatch(&self, message: String) -> Error {
        Error::SpecMismatch {
            field: self.path.clone(),
            message,
        }
    }

    /// Checks that data of type `dt` has this field's shape.
    fn conform(&self, dt: &DataType) -> Result<(), Error> {
        match (&self.shape, dt) {
            (Shape::Struct(children), DataType::Struct(fields)) => {
                for c in children {
                    let f = fields.iter().find(|f| f.name() == &c.name).ok_or_else(|| {
                        c.mismatch(format!(
                            "the data's struct has no such field (its fields: {})",
                            fields
                                .iter()
                                .map(|f| f.name().as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?;
                    c.conform(f.data_type())?;
                }
                Ok(())
            }
            (Shape::List { item, .. }, DataType::List(f) | DataType::LargeList(f)) => {
                item.conform(f.data_type())
            }
            (Shape::Map { key, value, .. }, DataType::Map(entries, _)) => match entries.data_type()
            {
                DataType::Struct(kv) if kv.len() == 2 => {
                    key.conform(kv[0].data_type())?;
                    value.conform(kv[1].data_type())
                }
                other => Err(self.mismatch(format!(
                    "map entries of type {other} are not key-value structs"
                ))),
            },
            (Shape::Leaf, dt) if !dt.is_nested() => match &self.values {
                Some(_) if !comparable(dt) => Err(self.mismatch(format!(
                    "values of type {dt} cannot be compared with the spec's categories"
                ))),
                _ => Ok(()),
            },
            (shape, dt) => Err(self.mismatch(format!(
                "the spec has {}, the data has type {dt}",
                shape.describe()
            ))),
        }
    }

    /// Counts `array`, whose positions in `present` (all when `None`) have
    /// every ancestor valid. `conform` has accepted its type.
    fn observe(&mut self, array: &dyn Array, present: Option<&BooleanBuffer>) -> Result<(), Error> {
        let len = array.len();
        let nulls = array.logical_nulls();
        let valid: Option<BooleanBuffer> = match (present, &nulls) {
            (None, None) => None,
            (Some(p), None) => Some(p.clone()),
            (None, Some(n)) => Some(n.inner().clone()),
            (Some(p), Some(n)) => Some(p & n.inner()),
        };
        let n_present = present.map_or(len, |p| p.count_set_bits()) as u64;
        let n_valid = valid.as_ref().map_or(len, |v| v.count_set_bits()) as u64;
        self.present += n_present;
        self.nulls += n_present.saturating_sub(n_valid);
        let valid = valid.as_ref();
        let Node {
            path,
            values,
            shape,
            ..
        } = self;
        let wrong = |what: &str| Error::SpecMismatch {
            field: path.clone(),
            message: format!("expected {what}, found type {}", array.data_type()),
        };
        match shape {
            Shape::Leaf => {
                if let Some(c) = values {
                    c.observe(array, valid);
                }
            }
            Shape::Struct(children) => {
                let s = array.as_struct_opt().ok_or_else(|| wrong("a struct"))?;
                for c in children {
                    let column = s
                        .column_by_name(&c.name)
                        .ok_or_else(|| wrong("a struct with this field"))?;
                    c.observe(column.as_ref(), valid)?;
                }
            }
            Shape::List { item, lengths } => {
                let (mask, values) = if let Some(l) = array.as_list_opt::<i32>() {
                    let v = l.values();
                    (walk(path, l.value_offsets(), v.len(), valid, lengths)?, v)
                } else if let Some(l) = array.as_list_opt::<i64>() {
                    let v = l.values();
                    (walk(path, l.value_offsets(), v.len(), valid, lengths)?, v)
                } else {
                    return Err(wrong("a list"));
                };
                item.observe(values.as_ref(), mask.as_ref())?;
            }
            Shape::Map {
                key,
                value,
                lengths,
            } => {
                let m = array.as_map_opt().ok_or_else(|| wrong("a map"))?;
                let entries = m.entries();
                if entries.num_columns() != 2 {
                    return Err(wrong("a map of key-value entries"));
                }
                let mask = walk(path, m.value_offsets(), entries.len(), valid, lengths)?;
                key.observe(entries.column(0).as_ref(), mask.as_ref())?;
                value.observe(entries.column(1).as_ref(), mask.as_ref())?;
            }
        }
        Ok(())
    }

    fn absorb(&mut self, other: &Node) {
        self.present += other.present;
        self.nulls += other.nulls;
        if let (Some(a), Some(b)) = (&mut self.values, &other.values) {
            for (x, y) in a.counts.iter_mut().zip(&b.counts) {
                *x += y;
            }
        }
        match (&mut self.shape, &other.shape) {
            (Shape::Struct(a), Shape::Struct(b)) => {
                for (x, y) in a.iter_mut().zip(b) {
                    x.absorb(y);
                }
            }
            (
                Shape::List { item, lengths },
                Shape::List {
                    item: i2,
                    lengths: l2,
                },
            ) => {
                item.absorb(i2);
                if let (Some(a), Some(b)) = (lengths, l2) {
                    a.absorb(b);
                }
            }
            (
                Shape::Map {
                    key,
                    value,
                    lengths,
                },
                Shape::Map {
                    key: k2,
                    value: v2,
                    lengths: l2,
                },
            ) => {
                key.absorb(k2);
                value.absorb(v2);
                if let (Some(a), Some(b)) = (lengths, l2) {
                    a.absorb(b);
                }
            }
            _ => {}
        }
    }

    fn checks(&self, out: &mut Vec<Check>, unchecked: &mut Vec<Unchecked>) {
        if let Some(p) = self.null {
            out.push(Check::share(
                &self.path,
                "null".into(),
                p,
                self.nulls,
                self.present,
            ));
        } else if let Some(why) = &self.unchecked {
            unchecked.push(Unchecked {
                field: self.path.clone(),
                measure: "null".into(),
                realised: if self.present == 0 {
                    f64::NAN
                } else {
                    self.nulls as f64 / self.present as f64
                },
                count: self.present,
                reason: why.clone(),
            });
        }
        if let Some(c) = &self.values {
            c.checks(&self.path, out);
        }
        match &self.shape {
            Shape::Leaf => {}
            Shape::Struct(children) => {
                for c in children {
                    c.checks(out, unchecked);
                }
            }
            Shape::List { item, lengths } => {
                if let Some(l) = lengths {
                    l.checks(&self.path, out);
                }
                item.checks(out, unchecked);
            }
            Shape::Map {
                key,
                value,
                lengths,
            } => {
                if let Some(l) = lengths {
                    l.checks(&self.path, out);
                }
                key.checks(out, unchecked);
                value.checks(out, unchecked);
            }
        }
    }
}

/// Walks the lists at `valid` positions (all when `None`) of `offsets`
/// into `values_len` elements: records their lengths and returns which
/// elements belong to them (`None`: all).
fn walk<O: ArrowNativeType>(
    path: &str,
    offsets: &[O],
    values_len: usize,
    valid: Option<&BooleanBuffer>,
    lengths: &mut Option<Lengths>,
) -> Result<Option<BooleanBuffer>, Error> {
    let rows = offsets.len().saturating_sub(1);
    let at = |i: usize| offsets.get(i).and_then(|o| o.to_usize());
    let whole = valid.is_none() && at(0) == Some(0) && at(rows) == Some(values_len);
    let mut mask = (!whole).then(|| BooleanBufferBuilder::new(values_len));
    let mut cursor = 0usize;
    let mut visit = |i: usize| -> Result<(), Error> {
        let (s, e) = match (at(i), at(i + 1)) {
            (Some(s), Some(e)) if s <= e && e <= values_len && s >= cursor => (s, e),
            _ => {
                return Err(Error::Corrupt(format!(
                    "list `{path}`: offsets of row {i} lie outside its {values_len} values"
                )));
            }
        };
        if let Some(l) = lengths.as_mut() {
            l.record(e - s);
        }
        if let Some(m) = mask.as_mut() {
            m.append_n(s - cursor, false);
            m.append_n(e - s, true);
        }
        cursor = e;
        Ok(())
    };
    match valid {
        None => (0..rows).try_for_each(&mut visit)?,
        Some(v) => v.set_indices().try_for_each(&mut visit)?,
    }
    Ok(mask.map(|mut m| {
        m.append_n(values_len - cursor, false);
        m.finish()
    }))
}

/// Category counts of a categorical leaf.
#[derive(Debug, Clone)]
struct Categories {
    /// The distinct values.
    values: Vec<Value>,
    /// Their shares among non-null values.
    expected: Vec<f64>,
    /// Which are reported.
    report: Vec<bool>,
    /// Counts per value, then of other values.
    counts: Vec<u64>,
    matcher: Matcher,
    /// The field's type: values are shown as a spec of it writes them
    /// (dates as dates, decimal units as decimals).
    data_type: Option<DataType>,
}

impl Categories {
    fn new(values: Vec<(Value, f64)>, top_only: bool) -> Categories {
        let mut report = vec![true; values.len()];
        if top_only && values.len() > TOP_VALUES {
            let mut order: Vec<usize> = (0..values.len()).collect();
            order.sort_by(|&a, &b| values[b].1.total_cmp(&values[a].1).then(a.cmp(&b)));
            report = vec![false; values.len()];
            for &i in &order[..TOP_VALUES] {
                report[i] = true;
            }
        }
        let (values, expected): (Vec<Value>, Vec<f64>) = values.into_iter().unzip();
        Categories {
            matcher: Matcher::new(&values),
            counts: vec![0; values.len() + 1],
            values,
            expected,
            report,
            data_type: None,
        }
    }

    fn observe(&mut self, array: &dyn Array, valid: Option<&BooleanBuffer>) {
        let codes = self.matcher.codes(array);
        let counts = &mut self.counts;
        let mut add = |i: usize| {
            if let Some(c) = codes.get(i).and_then(|&c| counts.get_mut(c as usize)) {
                *c += 1;
            }
        };
        match valid {
            None => (0..array.len()).for_each(&mut add),
            Some(v) => v.set_indices().for_each(&mut add),
        }
    }

    fn checks(&self, path: &str, out: &mut Vec<Check>) {
        let n: u64 = self.counts.iter().sum();
        for (i, v) in self.values.iter().enumerate() {
            if self.report[i] {
                let shown = match &self.data_type {
                    Some(dt) => v.display_as(dt).to_string(),
                    None => v.to_string(),
                };
                out.push(Check::share(
                    path,
                    format!("value {shown}"),
                    self.expected[i],
                    self.counts[i],
                    n,
                ));
            }
        }
        let other = self.counts.last().copied().unwrap_or(0);
        if other > 0 {
            out.push(Check::share(path, "other values".into(), 0.0, other, n));
        }
    }
}

/// Whether a [`Matcher`] compares values of type `dt`.
fn comparable(dt: &DataType) -> bool {
    match dt {
        DataType::Dictionary(_, v) => comparable(v),
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float32
        | DataType::Float64
        | DataType::Date32
        | DataType::Date64
        | DataType::Timestamp(..)
        | DataType::Decimal128(..)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => true,
        _ => false,
    }
}

/// Array values to category indices (`values.len()` for other values).
#[derive(Debug, Clone)]
struct Matcher {
    other: u32,
    bools: [u32; 2],
    ints: HashMap<i128, u32>,
    f64s: HashMap<u64, u32>,
    f32s: HashMap<u32, u32>,
    bytes: HashMap<Box<[u8]>, u32>,
}

impl Matcher {
    fn new(values: &[Value]) -> Matcher {
        let other = values.len() as u32;
        let mut m = Matcher {
            other,
            bools: [other; 2],
            ints: HashMap::new(),
            f64s: HashMap::new(),
            f32s: HashMap::new(),
            bytes: HashMap::new(),
        };
        // The generator's encodings of spec values in each column type;
        // the first of equal encodings wins.
        for (i, v) in values.iter().enumerate().rev() {
            let i = i as u32;
            let (int, float, bytes): (Option<i128>, f64, Box<[u8]>) = match v {
                Value::Bool(b) => (
                    Some(i128::from(*b)),
                    f64::from(u8::from(*b)),
                    b.to_string().into_bytes().into(),
                ),
                Value::Int(x) => (Some(*x), *x as f64, x.to_string().into_bytes().into()),
                Value::Float(f) => (
                    (f.fract() == 0.0 && f.abs() < 1e30).then_some(*f as i128),
                    *f,
                    f.to_string().into_bytes().into(),
                ),
                Value::Str(s) => (None, f64::NAN, s.as_bytes().into()),
                // A spec at a run's scale has none (`Dataset::at_scale`).
                Value::Run(r) => (None, f64::NAN, r.source.as_bytes().into()),
            };
            if let Some(x) = int {
                m.ints.insert(x, i);
                if x == 0 || x == 1 {
                    m.bools[x as usize] = i;
                }
            }
            if !float.is_nan() {
                m.f64s.insert(float.to_bits(), i);
                m.f32s.insert((float as f32).to_bits(), i);
            }
            m.bytes.insert(bytes, i);
        }
        m
    }

    fn int(&self, x: i128) -> u32 {
        self.ints.get(&x).copied().unwrap_or(self.other)
    }

    /// The category of every element of `array` (also at null positions,
    /// where it means nothing).
    fn codes(&self, array: &dyn Array) -> Vec<u32> {
        macro_rules! ints {
            ($t:ty) => {
                array
                    .as_primitive::<$t>()
                    .values()
                    .iter()
                    .map(|&v| self.int(i128::from(v)))
                    .collect()
            };
        }
        macro_rules! bytes {
            ($a:expr) => {{
                let a = $a;
                (0..a.len())
                    .map(|i| {
                        let v: &[u8] = a.value(i).as_ref();
                        self.bytes.get(v).copied().unwrap_or(self.other)
                    })
                    .collect()
            }};
        }
        match array.data_type() {
            DataType::Boolean => array
                .as_boolean()
                .values()
                .iter()
                .map(|b| self.bools[usize::from(b)])
                .collect(),
            DataType::Int8 => ints!(Int8Type),
            DataType::Int16 => ints!(Int16Type),
            DataType::Int32 => ints!(Int32Type),
            DataType::Int64 => ints!(Int64Type),
            DataType::UInt8 => ints!(UInt8Type),
            DataType::UInt16 => ints!(UInt16Type),
            DataType::UInt32 => ints!(UInt32Type),
            DataType::UInt64 => ints!(UInt64Type),
            DataType::Date32 => ints!(Date32Type),
            DataType::Date64 => ints!(Date64Type),
            // Spec values of decimal fields are their units.
            DataType::Decimal128(..) => array
                .as_primitive::<Decimal128Type>()
                .values()
                .iter()
                .map(|&v| self.int(v))
                .collect(),
            DataType::Timestamp(TimeUnit::Second, _) => ints!(TimestampSecondType),
            DataType::Timestamp(TimeUnit::Millisecond, _) => ints!(TimestampMillisecondType),
            DataType::Timestamp(TimeUnit::Microsecond, _) => ints!(TimestampMicrosecondType),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => ints!(TimestampNanosecondType),
            DataType::Float32 => array
                .as_primitive::<arrow_array::types::Float32Type>()
                .values()
                .iter()
                .map(|v| self.f32s.get(&v.to_bits()).copied().unwrap_or(self.other))
                .collect(),
            DataType::Float64 => array
                .as_primitive::<arrow_array::types::Float64Type>()
                .values()
                .iter()
                .map(|v| self.f64s.get(&v.to_bits()).copied().unwrap_or(self.other))
                .collect(),
            DataType::Utf8 => bytes!(array.as_string::<i32>()),
            DataType::LargeUtf8 => bytes!(array.as_string::<i64>()),
            DataType::Utf8View => bytes!(array.as_string_view()),
            DataType::Binary => bytes!(array.as_binary::<i32>()),
            DataType::LargeBinary => bytes!(array.as_binary::<i64>()),
            DataType::BinaryView => bytes!(array.as_binary_view()),
            DataType::Dictionary(..) => downcast_dictionary_array!(
                array => {
                    let values = self.codes(array.values().as_ref());
                    array
                        .keys()
                        .values()
                        .iter()
                        .map(|k| {
                            k.to_usize()
                                .and_then(|k| values.get(k))
                                .copied()
                                .unwrap_or(self.other)
                        })
                        .collect()
                },
                _ => vec![self.other; array.len()]
            ),
            // `conform` rejects other types.
            _ => vec![self.other; array.len()],
        }
    }
}

/// Length counts of a list or map field.
#[derive(Debug, Clone)]
struct Lengths {
    /// Lengths checked one by one, with their shares among valid lists.
    listed: Vec<(u64, f64)>,
    /// Mean and variance of the length, when the mean is checked.
    mean: Option<(f64, f64)>,
    /// Counter of each length below `slot.len()`; longer ones count as
    /// `beyond`.
    slot: Vec<u32>,
    beyond: u32,
    /// Counts of `listed`, then of other possible lengths, then of
    /// impossible ones.
    counts: Vec<u64>,
    /// Valid lists and their elements.
    lists: u64,
    elements: u64,
}

impl Lengths {
    fn new(pmf: &LengthPmf, empty_as_null: bool) -> Option<Lengths> {
        // Among valid lists: given a non-zero length with `empty_as_null`.
        let mut points: Vec<(u64, f64)> = pmf
            .points
            .iter()
            .copied()
            .filter(|&(l, p)| p > 0.0 && !(empty_as_null && l == 0))
            .collect();
        let total: f64 = points.iter().map(|p| p.1).sum();
        if total <= 0.0 {
            return None;
        }
        for p in &mut points {
            p.1 /= total;
        }
        let mean: f64 = points.iter().map(|&(l, p)| l as f64 * p).sum();
        let variance: f64 = points
            .iter()
            .map(|&(l, p)| (l as f64 - mean).powi(2) * p)
            .sum();
        let (listed, mean) = if pmf.normal {
            (Vec::new(), Some((mean, variance)))
        } else if points.len() <= MAX_LISTED_LENGTHS {
            (points.clone(), None)
        } else {
            let mut top = points.clone();
            top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            top.truncate(MAX_LISTED_LENGTHS);
            top.sort_by_key(|p| p.0);
            (top, Some((mean, variance)))
        };
        let rest = listed.len() as u32;
        let impossible = rest + 1;
        let longest = points.last().map_or(0, |p| p.0);
        let mut slot = vec![if pmf.normal { rest } else { impossible }; longest as usize + 1];
        for &(l, _) in &points {
            slot[l as usize] = rest;
        }
        for (i, &(l, _)) in listed.iter().enumerate() {
            slot[l as usize] = i as u32;
        }
        Some(Lengths {
            counts: vec![0; listed.len() + 2],
            listed,
            mean,
            slot,
            beyond: if pmf.normal { rest } else { impossible },
            lists: 0,
            elements: 0,
        })
    }

    fn record(&mut self, len: usize) {
        let s = self.slot.get(len).copied().unwrap_or(self.beyond);
        if let Some(c) = self.counts.get_mut(s as usize) {
            *c += 1;
        }
        self.lists += 1;
        self.elements += len as u64;
    }

    fn absorb(&mut self, other: &Lengths) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.lists += other.lists;
        self.elements += other.elements;
    }

    fn checks(&self, path: &str, out: &mut Vec<Check>) {
        for (i, &(l, p)) in self.listed.iter().enumerate() {
            out.push(Check::share(
                path,
                format!("length {l}"),
                p,
                self.counts[i],
                self.lists,
            ));
        }
        if let Some((mean, variance)) = self.mean {
            out.push(Check::mean(
                path,
                "mean length".into(),
                mean,
                variance,
                self.elements as f64,
                self.lists,
            ));
        }
        let impossible = self.counts.last().copied().unwrap_or(0);
        if impossible > 0 {
            out.push(Check::share(
                path,
                "other lengths".into(),
                0.0,
                impossible,
                self.lists,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_without_data_are_not_suspicious() {
        let c = Check::share("f", "null".into(), 0.5, 0, 0);
        assert!(c.realised.is_nan() && c.z == 0.0 && !c.suspicious());
        let c = Check::share("f", "null".into(), 0.0, 1, 10);
        assert!(c.z.is_infinite() && c.suspicious());
        let c = Check::share("f", "null".into(), 1.0, 10, 10);
        assert_eq!(c.z, 0.0);
    }
}
