//! One pass over a table's batches: per column (and per nested level) the
//! counts, ranges, distinct values, samples and shapes the models are
//! fitted to.
//!
//! Exact over every scanned row: counts, nulls, ranges, sums, categories
//! while there are at most `max_categories` of them, uniqueness (the
//! values in order while they increase, else their hashes, while no value
//! repeats), order and runs, string lengths, weekdays. Sampled (a
//! reservoir per column): the values the numeric fits and quantiles use,
//! the strings patterns are read from, the keys foreign keys are checked
//! with. Joint counts of few-valued columns over a table's first rows.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow_array::cast::AsArray as _;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{DataType, Field, TimeUnit};
use rayon::prelude::*;

use crate::sketch::{Heavy, Hll, Reservoir, hash_bytes, hash_int};

type State = foldhash::fast::FixedState;

/// How much a profile keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Distinct values counted exactly per column.
    pub max_categories: usize,
    /// Values sampled per column for fits and quantiles.
    pub sample: usize,
    /// Strings sampled per column for patterns.
    pub texts: usize,
    /// Keys sampled per column for inclusion checks.
    pub keys: usize,
    /// Counters of the heavy-hitters sketch a column keeps once its exact
    /// counts are dropped (0: none).
    pub heavy: usize,
}

/// Counts of small non-negative integers (lengths), exact.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    small: Vec<u64>,
    large: BTreeMap<u64, u64>,
}

impl Counts {
    #[inline]
    pub(crate) fn add(&mut self, v: u64) {
        self.add_n(v, 1);
    }

    #[inline]
    pub(crate) fn add_n(&mut self, v: u64, n: u64) {
        if let Some(c) = self.small.get_mut(v as usize) {
            *c += n;
        } else if v < 4096 {
            self.small.resize(v as usize + 1, 0);
            self.small[v as usize] += n;
        } else {
            *self.large.entry(v).or_insert(0) += n;
        }
    }

    /// `(value, count)` in increasing value order, counts above zero.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.small
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(v, &c)| (v as u64, c))
            .chain(self.large.iter().map(|(&v, &c)| (v, c)))
    }

    pub(crate) fn total(&self) -> u64 {
        self.iter().map(|(_, c)| c).sum()
    }
}

/// What a leaf's values are, for fitting and for the spec.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Class {
    /// `true`/`false`.
    Bool,
    /// Integers (also times and durations, read as their integer).
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

impl Class {
    /// The class of `dt`'s values, `None` when a leaf of that type cannot
    /// be profiled.
    pub(crate) fn of(dt: &DataType) -> Option<Class> {
        use DataType as D;
        Some(match dt {
            D::Boolean => Class::Bool,
            D::Int8
            | D::Int16
            | D::Int32
            | D::Int64
            | D::UInt8
            | D::UInt16
            | D::UInt32
            | D::UInt64 => Class::Int,
            D::Time32(_) | D::Time64(_) | D::Duration(_) => Class::Int,
            D::Float16 | D::Float32 | D::Float64 => Class::Float,
            D::Decimal32(_, s) | D::Decimal64(_, s) | D::Decimal128(_, s) | D::Decimal256(_, s) => {
                Class::Decimal { scale: *s }
            }
            D::Date32 => Class::Date,
            D::Date64 => Class::Timestamp {
                unit: TimeUnit::Millisecond,
            },
            D::Timestamp(u, _) => Class::Timestamp { unit: *u },
            D::Utf8 | D::LargeUtf8 | D::Utf8View => Class::Str,
            D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_) => Class::Bytes,
            D::Dictionary(_, v) => Class::of(v)?,
            _ => return None,
        })
    }

    /// Whether values are ordered numbers (fits, quantiles, KS).
    pub(crate) fn is_numeric(&self) -> bool {
        !matches!(self, Class::Bool | Class::Str | Class::Bytes)
    }

    /// Whether values are integers (keys, sequences, positions).
    pub(crate) fn is_integral(&self) -> bool {
        matches!(
            self,
            Class::Int | Class::Decimal { .. } | Class::Date | Class::Timestamp { .. }
        )
    }

    /// Units per day of a date or timestamp.
    pub(crate) fn per_day(&self) -> Option<i128> {
        match self {
            Class::Date => Some(1),
            Class::Timestamp { unit } => Some(
                86_400
                    * match unit {
                        TimeUnit::Second => 1,
                        TimeUnit::Millisecond => 1_000,
                        TimeUnit::Microsecond => 1_000_000,
                        TimeUnit::Nanosecond => 1_000_000_000,
                    },
            ),
            _ => None,
        }
    }
}

/// A value past `i64` as a float (out of line: the common path converts
/// an `i64`).
#[cold]
#[inline(never)]
fn wide(v: i128) -> f64 {
    v as f64
}

/// Exact counts of integral values: a dense window of counts while the
/// values stay near the first one (no hashing), else a map.
#[derive(Debug, Clone)]
pub(crate) enum Exact {
    Dense {
        base: i128,
        counts: Vec<u64>,
        distinct: usize,
    },
    Map(HashMap<i128, u64, State>),
}

/// The width of a dense window of counts.
const DENSE: i128 = 1 << 16;

impl Exact {
    fn new() -> Self {
        Exact::Dense {
            base: i128::MIN,
            counts: Vec::new(),
            distinct: 0,
        }
    }

    /// Counts `v`; returns its count and the distinct values so far.
    #[inline]
    fn add(&mut self, v: i128) -> (u64, usize) {
        if let Exact::Dense {
            base,
            counts,
            distinct,
        } = self
        {
            if counts.is_empty() {
                *base = v.saturating_sub(DENSE / 2);
                counts.resize(DENSE as usize, 0);
            }
            let at = v.wrapping_sub(*base);
            if (0..DENSE).contains(&at) {
                let c = &mut counts[at as usize];
                *c += 1;
                if *c == 1 {
                    *distinct += 1;
                }
                return (*c, *distinct);
            }
            let map: HashMap<i128, u64, State> = self.iter().collect();
            *self = Exact::Map(map);
        }
        match self {
            Exact::Map(m) => {
                let c = m.entry(v).or_insert(0);
                *c += 1;
                let c = *c;
                (c, m.len())
            }
            Exact::Dense { .. } => unreachable!("converted above"),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Exact::Dense { distinct, .. } => *distinct,
            Exact::Map(m) => m.len(),
        }
    }

    pub(crate) fn iter(&self) -> Box<dyn Iterator<Item = (i128, u64)> + '_> {
        match self {
            Exact::Dense { base, counts, .. } => Box::new(
                counts
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| c > 0)
                    .map(move |(i, &c)| (*base + i as i128, c)),
            ),
            Exact::Map(m) => Box::new(m.iter().map(|(&k, &c)| (k, c))),
        }
    }

    pub(crate) fn contains(&self, v: i128) -> bool {
        match self {
            Exact::Dense { base, counts, .. } => {
                let at = v.wrapping_sub(*base);
                (0..counts.len() as i128).contains(&at) && counts[at as usize] > 0
            }
            Exact::Map(m) => m.contains_key(&v),
        }
    }
}

/// The values of a column none of whose values repeated: in order while
/// they increase (a key's usual shape: no hashing), else their hashes.
#[derive(Debug, Clone)]
pub(crate) enum KeySet {
    Sorted(Vec<i128>),
    Hashed(HashSet<u64, State>),
}

/// A leaf column's profile.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    pub class: Class,
    /// Non-null values profiled.
    pub count: u64,
    /// Non-null values in the whole table (more than `count` when the
    /// scan was sampled and the files' statistics count nulls).
    pub total: u64,
    pub min: f64,
    pub max: f64,
    pub sum: f64,
    pub sumsq: f64,
    /// Exact least and greatest of integral classes.
    pub min_key: i128,
    pub max_key: i128,
    /// NaNs (not in any other figure).
    pub nan: u64,
    /// Exact counts while there are at most `max_categories` values.
    pub ints: Option<Exact>,
    pub strs: Option<HashMap<Box<[u8]>, u64, State>>,
    /// Distinct estimate once the exact counts are dropped and a value
    /// has repeated.
    pub hll: Option<Hll>,
    /// The values while none has repeated (after the exact counts are
    /// dropped).
    pub keys: Option<KeySet>,
    /// The most frequent values, once the exact counts are dropped (when
    /// the limits ask for them).
    pub heavy: Option<Heavy>,
    /// No value seen twice.
    pub unique: bool,
    pub increasing: bool,
    pub nondecreasing: bool,
    last: Option<i128>,
    last_hash: u64,
    /// Runs of equal consecutive values, and their lengths.
    pub runs: u64,
    run_len: u64,
    pub run_lengths: Counts,
    /// Whether every value is the first value or the previous plus one
    /// (a position within groups), and how often it went back.
    pub pos_start: Option<i128>,
    pub pos_ok: bool,
    pub pos_resets: u64,
    /// Sampled values (numbers as f64: days, units, ticks).
    pub sample: Reservoir<f64>,
    /// Sampled keys (integers as they are, strings as their hash), for
    /// inclusion checks.
    pub key_sample: Reservoir<i128>,
    /// Byte lengths of strings and binaries, exact.
    pub lengths: Counts,
    /// Sampled strings.
    pub texts: Reservoir<Box<str>>,
    /// Monday..Sunday counts of dates and timestamps.
    pub dow: [u64; 7],
    pub trues: u64,
    max_categories: usize,
    heavy_cap: usize,
    per_day: Option<i64>,
}

impl Leaf {
    fn new(class: Class, limits: &Limits, seed: u64) -> Self {
        let exact_ints = !matches!(class, Class::Str | Class::Bytes);
        let per_day = class.per_day().and_then(|d| i64::try_from(d).ok());
        Leaf {
            class,
            count: 0,
            total: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sum: 0.0,
            sumsq: 0.0,
            min_key: i128::MAX,
            max_key: i128::MIN,
            nan: 0,
            ints: exact_ints.then(Exact::new),
            strs: (!exact_ints).then(HashMap::default),
            hll: None,
            keys: None,
            heavy: None,
            unique: true,
            increasing: true,
            nondecreasing: true,
            last: None,
            last_hash: 0,
            runs: 0,
            run_len: 0,
            run_lengths: Counts::default(),
            pos_start: None,
            pos_ok: true,
            pos_resets: 0,
            sample: Reservoir::new(limits.sample, seed),
            key_sample: Reservoir::new(limits.keys, seed ^ 0x55),
            lengths: Counts::default(),
            texts: Reservoir::new(limits.texts, seed ^ 0xAA),
            dow: [0; 7],
            trues: 0,
            max_categories: limits.max_categories,
            heavy_cap: limits.heavy,
            per_day,
        }
    }

    /// Distinct non-null values: exact while counted, else estimated.
    pub(crate) fn distinct(&self) -> u64 {
        if let Some(m) = &self.ints {
            m.len() as u64
        } else if let Some(m) = &self.strs {
            m.len() as u64
        } else if self.unique {
            self.count
        } else {
            self.hll
                .as_ref()
                .map_or(0, |h| h.estimate().round() as u64)
                .min(self.count)
        }
    }

    /// Whether the exact counts were kept.
    pub(crate) fn exact(&self) -> bool {
        self.ints.is_some() || self.strs.is_some()
    }

    /// Whether `key` (an integer value, or a string's hash, as
    /// [`Leaf::key_sample`] holds them) is one of this column's values:
    /// `None` when only an estimate was kept.
    pub(crate) fn has_key(&self, key: i128, string_hashes: Option<&HashSet<u64>>) -> Option<bool> {
        if let Some(e) = &self.ints {
            return Some(e.contains(key));
        }
        if self.strs.is_some() {
            return string_hashes.map(|s| s.contains(&(key as u64)));
        }
        match &self.keys {
            Some(KeySet::Sorted(v)) => Some(v.binary_search(&key).is_ok()),
            Some(KeySet::Hashed(h)) => {
                Some(if self.class == Class::Str || self.class == Class::Bytes {
                    h.contains(&(key as u64))
                } else {
                    h.contains(&hash_int(key))
                })
            }
            None => None,
        }
    }

    /// The hashes of a string column's exact categories.
    pub(crate) fn string_hashes(&self) -> Option<HashSet<u64>> {
        self.strs
            .as_ref()
            .map(|m| m.keys().map(|k| hash_bytes(k)).collect())
    }

    /// The exact counts are dropped: their values go to the key set while
    /// no value has repeated, to the distinct estimate otherwise.
    fn overflow(&mut self) {
        let ints = self.ints.take();
        let strs = self.strs.take();
        // While no value repeats every count is one: the sketch starts at
        // the first repeat ([`Leaf::first_repeat`]).
        if self.heavy_cap > 0 && !self.unique {
            let mut h = Heavy::new(self.heavy_cap);
            if let Some(e) = &ints {
                let mut all: Vec<(i128, u64)> = e.iter().collect();
                all.sort_unstable();
                all.into_iter().for_each(|(k, c)| h.add(k, c, None));
            }
            if let Some(m) = &strs {
                let mut all: Vec<(&Box<[u8]>, &u64)> = m.iter().collect();
                all.sort_unstable();
                for (k, &c) in all {
                    h.add(i128::from(hash_bytes(k)), c, Some(k));
                }
            }
            self.heavy = Some(h);
        }
        if self.unique {
            self.keys = Some(match (&ints, &strs) {
                (Some(e), _) if self.increasing => {
                    let mut v: Vec<i128> = e.iter().map(|(k, _)| k).collect();
                    v.sort_unstable();
                    KeySet::Sorted(v)
                }
                (Some(e), _) => KeySet::Hashed(e.iter().map(|(k, _)| hash_int(k)).collect()),
                (_, Some(m)) => KeySet::Hashed(m.keys().map(|k| hash_bytes(k)).collect()),
                _ => KeySet::Hashed(HashSet::default()),
            });
        } else {
            let mut hll = Hll::new();
            if let Some(e) = &ints {
                e.iter().for_each(|(k, _)| hll.add(hash_int(k)));
            }
            if let Some(m) = &strs {
                m.keys().for_each(|k| hll.add(hash_bytes(k)));
            }
            self.hll = Some(hll);
        }
    }

    /// A repeat after the exact counts were dropped: the key set becomes
    /// the distinct estimate.
    /// The sketch of a column whose values were distinct until `key`
    /// repeated: every earlier count was one, so counts start low by at
    /// most one, and `key`'s own is two.
    #[cold]
    fn first_repeat(&mut self, key: i128, bytes: Option<&[u8]>) {
        if self.heavy_cap > 0 {
            let mut h = Heavy::after_distinct(self.heavy_cap);
            h.add(key, 2, bytes);
            self.heavy = Some(h);
        }
    }

    fn repeated(&mut self) {
        self.unique = false;
        let mut hll = Hll::new();
        match self.keys.take() {
            Some(KeySet::Sorted(v)) => v.iter().for_each(|&k| hll.add(hash_int(k))),
            Some(KeySet::Hashed(h)) => h.iter().for_each(|&k| hll.add(k)),
            None => {}
        }
        self.hll = Some(hll);
    }

    #[inline]
    fn seen_hash(&mut self, h: u64) {
        if let Some(hll) = &mut self.hll {
            hll.add(h);
            return;
        }
        let fresh = match &mut self.keys {
            Some(KeySet::Hashed(set)) => set.insert(h),
            Some(KeySet::Sorted(_)) => {
                // An integer column that stopped increasing.
                unreachable!("integers go through `seen_int`")
            }
            None => true,
        };
        if !fresh {
            self.repeated();
            if let Some(hll) = &mut self.hll {
                hll.add(h);
            }
        }
    }

    #[inline]
    fn seen_int(&mut self, v: i128, increasing: bool) {
        if let Some(hll) = &mut self.hll {
            hll.add(hash_int(v));
            return;
        }
        if let Some(KeySet::Sorted(keys)) = &mut self.keys {
            if increasing {
                keys.push(v);
                return;
            }
            let set: HashSet<u64, State> = keys.iter().map(|&k| hash_int(k)).collect();
            self.keys = Some(KeySet::Hashed(set));
        }
        self.seen_hash(hash_int(v));
    }

    #[inline]
    fn number(&mut self, f: f64) {
        self.count += 1;
        self.min = self.min.min(f);
        self.max = self.max.max(f);
        self.sum += f;
        self.sumsq += f * f;
        self.sample.offer(|| f);
    }

    #[inline]
    fn run(&mut self, same: bool) {
        if self.runs == 0 {
            self.runs = 1;
            self.run_len = 1;
        } else if same {
            self.run_len += 1;
        } else {
            self.run_lengths.add(self.run_len);
            self.runs += 1;
            self.run_len = 1;
        }
    }

    /// One integral value (an integer, a decimal's units, a date's days, a
    /// timestamp's ticks).
    #[inline]
    pub(crate) fn int(&mut self, v: i128) {
        let small = i64::try_from(v).ok();
        self.number(match small {
            Some(s) => s as f64,
            None => wide(v),
        });
        self.min_key = self.min_key.min(v);
        self.max_key = self.max_key.max(v);
        let prev = self.last;
        if let Some(p) = prev {
            if v <= p {
                self.increasing = false;
            }
            if v < p {
                self.nondecreasing = false;
            }
        }
        if let Some(m) = &mut self.ints {
            let (c, distinct) = m.add(v);
            if c > 1 {
                self.unique = false;
            }
            if distinct > self.max_categories {
                self.overflow();
            }
        } else {
            let was_unique = self.unique;
            self.seen_int(v, self.increasing);
            match &mut self.heavy {
                Some(h) => h.add(v, 1, None),
                None if was_unique && !self.unique => self.first_repeat(v, None),
                None => {}
            }
        }
        self.key_sample.offer(|| v);
        self.run(prev == Some(v));
        if self.pos_ok {
            match self.pos_start {
                None => self.pos_start = Some(v),
                Some(c) if v == c => self.pos_resets += 1,
                Some(_) if prev.is_some_and(|p| p.checked_add(1) == Some(v)) => {}
                Some(_) => self.pos_ok = false,
            }
        }
        self.last = Some(v);
        if let (Some(per_day), Some(s)) = (self.per_day, small) {
            let day = s.div_euclid(per_day);
            // 1970-01-01 was a Thursday (index 3 from Monday).
            self.dow[(day + 3).rem_euclid(7) as usize] += 1;
        }
    }

    /// One float.
    #[inline]
    pub(crate) fn float(&mut self, v: f64) {
        if v.is_nan() {
            self.nan += 1;
            return;
        }
        let v = if v == 0.0 { 0.0 } else { v };
        self.number(v);
        let key = i128::from(v.to_bits());
        if let Some(m) = &mut self.ints {
            let (c, distinct) = m.add(key);
            if c > 1 {
                self.unique = false;
            }
            if distinct > self.max_categories {
                // Floats are never keys: no key set.
                self.unique = false;
                self.overflow();
            }
        } else {
            if let Some(hll) = &mut self.hll {
                hll.add(hash_int(key));
            }
            if let Some(h) = &mut self.heavy {
                h.add(key, 1, None);
            }
        }
        if let Some(p) = self.last {
            let p = f64::from_bits(p as u64);
            if v <= p {
                self.increasing = false;
            }
            if v < p {
                self.nondecreasing = false;
            }
        }
        self.last = Some(key);
    }

    /// One boolean.
    #[inline]
    pub(crate) fn bool(&mut self, v: bool) {
        self.count += 1;
        self.trues += u64::from(v);
        if let Some(m) = &mut self.ints {
            m.add(i128::from(v));
        }
    }

    /// One string or byte string.
    #[inline]
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.count += 1;
        self.lengths.add(b.len() as u64);
        let h = hash_bytes(b);
        if let Some(m) = &mut self.strs {
            if let Some(c) = m.get_mut(b) {
                *c += 1;
                self.unique = false;
            } else {
                m.insert(b.into(), 1);
                if m.len() > self.max_categories {
                    self.overflow();
                }
            }
        } else {
            let was_unique = self.unique;
            self.seen_hash(h);
            match &mut self.heavy {
                Some(hh) => hh.add(i128::from(h), 1, Some(b)),
                None if was_unique && !self.unique => self.first_repeat(i128::from(h), Some(b)),
                None => {}
            }
        }
        self.key_sample.offer(|| i128::from(h));
        let same = self.count > 1 && h == self.last_hash;
        self.run(same);
        self.last_hash = h;
        self.texts.offer(|| String::from_utf8_lossy(b).into());
    }

    fn finish(&mut self) {
        self.total = self.total.max(self.count);
        if self.run_len > 0 {
            self.run_lengths.add(self.run_len);
            self.run_len = 0;
        }
    }

    /// Mean and standard deviation of the values.
    pub(crate) fn moments(&self) -> (f64, f64) {
        let n = self.count.max(1) as f64;
        let mean = self.sum / n;
        let var = (self.sumsq / n - mean * mean).max(0.0);
        (mean, var.sqrt())
    }

    /// Sorted sample.
    pub(crate) fn sorted_sample(&self) -> Vec<f64> {
        let mut s = self.sample.items.clone();
        s.sort_by(f64::total_cmp);
        s
    }

    /// Exact category counts, most frequent first (ties by value), as
    /// `(value, count)` with integral values as keys or strings.
    pub(crate) fn categories(&self) -> Option<Vec<(Category, u64)>> {
        let mut out: Vec<(Category, u64)> = if let Some(m) = &self.ints {
            m.iter().map(|(k, c)| (Category::Int(k), c)).collect()
        } else if let Some(m) = &self.strs {
            m.iter()
                .map(|(k, &c)| (Category::Bytes(k.to_vec()), c))
                .collect()
        } else {
            return None;
        };
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Some(out)
    }
}

/// A category's value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Category {
    /// An integral value, a float's bits or a boolean (0/1).
    Int(i128),
    /// A string's bytes.
    Bytes(Vec<u8>),
}

/// A field's profile: counts at its level and its nested fields'.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub field: Field,
    /// Values at this level (rows for a top-level field; items for a
    /// list's item), nulls included.
    pub slots: u64,
    pub nulls: u64,
    pub shape: Shape,
}

/// A profiled field's kind.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    Leaf(Box<Leaf>),
    Struct(Vec<Node>),
    /// Lists (`lengths` of the non-null ones) and their items.
    List {
        lengths: Counts,
        item: Box<Node>,
    },
    /// Maps (`sizes` of the non-null ones), keys and values.
    Map {
        sizes: Counts,
        key: Box<Node>,
        value: Box<Node>,
    },
    /// A type no spec can hold: only its nulls are counted.
    Unsupported,
}

impl Node {
    pub(crate) fn new(field: &Field, limits: &Limits, seed: u64) -> Node {
        let shape = match field.data_type() {
            DataType::Struct(fs) => Shape::Struct(
                fs.iter()
                    .enumerate()
                    .map(|(i, f)| {
                        Node::new(f, limits, seed.wrapping_mul(31).wrapping_add(i as u64 + 1))
                    })
                    .collect(),
            ),
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                Shape::List {
                    lengths: Counts::default(),
                    item: Box::new(Node::new(f, limits, seed.wrapping_mul(37))),
                }
            }
            DataType::Map(entries, _) => match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 => Shape::Map {
                    sizes: Counts::default(),
                    key: Box::new(Node::new(&kv[0], limits, seed.wrapping_mul(41))),
                    value: Box::new(Node::new(&kv[1], limits, seed.wrapping_mul(43))),
                },
                _ => Shape::Unsupported,
            },
            dt => match Class::of(dt) {
                Some(c) => Shape::Leaf(Box::new(Leaf::new(c, limits, seed))),
                None => Shape::Unsupported,
            },
        };
        Node {
            field: field.clone(),
            slots: 0,
            nulls: 0,
            shape,
        }
    }

    /// The share of nulls at this level.
    pub(crate) fn null_rate(&self) -> f64 {
        if self.slots == 0 {
            0.0
        } else {
            self.nulls as f64 / self.slots as f64
        }
    }

    pub(crate) fn leaf(&self) -> Option<&Leaf> {
        match &self.shape {
            Shape::Leaf(l) => Some(l),
            _ => None,
        }
    }

    fn finish(&mut self) {
        match &mut self.shape {
            Shape::Leaf(l) => l.finish(),
            Shape::Struct(c) => c.iter_mut().for_each(Node::finish),
            Shape::List { item, .. } => item.finish(),
            Shape::Map { key, value, .. } => {
                key.finish();
                value.finish();
            }
            Shape::Unsupported => {}
        }
    }

    /// Adds one array of this field's values.
    pub(crate) fn add(&mut self, a: &dyn Array) {
        self.slots += a.len() as u64;
        self.nulls += a.logical_null_count() as u64;
        match &mut self.shape {
            Shape::Unsupported => {}
            Shape::Leaf(l) => add_leaf(l, a),
            Shape::Struct(children) => {
                let s = a.as_struct();
                let valid = s
                    .nulls()
                    .filter(|n| n.null_count() > 0)
                    .map(|n| BooleanArray::new(n.inner().clone(), None));
                for (c, col) in children.iter_mut().zip(s.columns()) {
                    match &valid {
                        Some(v) => {
                            if let Ok(kept) = arrow_select::filter::filter(col.as_ref(), v) {
                                c.add(kept.as_ref());
                            }
                        }
                        None => c.add(col.as_ref()),
                    }
                }
            }
            Shape::List { lengths, item } => match a.data_type() {
                DataType::List(_) => {
                    let l = a.as_list::<i32>();
                    list_lengths(lengths, l.offsets().iter().map(|&o| o as i64), a);
                    let (lo, hi) = (l.offsets()[0] as usize, l.offsets()[l.len()] as usize);
                    item.add(l.values().slice(lo, hi - lo).as_ref());
                }
                DataType::LargeList(_) => {
                    let l = a.as_list::<i64>();
                    list_lengths(lengths, l.offsets().iter().copied(), a);
                    let (lo, hi) = (l.offsets()[0] as usize, l.offsets()[l.len()] as usize);
                    item.add(l.values().slice(lo, hi - lo).as_ref());
                }
                DataType::FixedSizeList(_, n) => {
                    let l = a.as_fixed_size_list();
                    let valid = a.len() - a.null_count();
                    lengths.add_n(*n as u64, valid as u64);
                    item.add(l.values().as_ref());
                }
                _ => {}
            },
            Shape::Map { sizes, key, value } => {
                let m = a.as_map();
                list_lengths(sizes, m.offsets().iter().map(|&o| o as i64), a);
                let (lo, hi) = (m.offsets()[0] as usize, m.offsets()[m.len()] as usize);
                key.add(m.keys().slice(lo, hi - lo).as_ref());
                value.add(m.values().slice(lo, hi - lo).as_ref());
            }
        }
    }
}

fn list_lengths(counts: &mut Counts, offsets: impl Iterator<Item = i64>, a: &dyn Array) {
    let mut prev: Option<i64> = None;
    for (i, o) in offsets.enumerate() {
        if let Some(p) = prev
            && a.is_valid(i - 1)
        {
            counts.add((o - p).max(0i64) as u64);
        }
        prev = Some(o);
    }
}

macro_rules! ints {
    ($l:expr, $a:expr, $t:ty) => {{
        let p = $a.as_primitive::<$t>();
        if p.null_count() == 0 {
            for &v in p.values().iter() {
                $l.int(v as i128);
            }
        } else {
            for v in p.iter().flatten() {
                $l.int(v as i128);
            }
        }
    }};
}

fn add_leaf(l: &mut Leaf, a: &dyn Array) {
    use DataType as D;
    match a.data_type() {
        D::Boolean => a.as_boolean().iter().flatten().for_each(|v| l.bool(v)),
        D::Int8 => ints!(l, a, Int8Type),
        D::Int16 => ints!(l, a, Int16Type),
        D::Int32 => ints!(l, a, Int32Type),
        D::Int64 => ints!(l, a, Int64Type),
        D::UInt8 => ints!(l, a, UInt8Type),
        D::UInt16 => ints!(l, a, UInt16Type),
        D::UInt32 => ints!(l, a, UInt32Type),
        D::UInt64 => ints!(l, a, UInt64Type),
        D::Date32 => ints!(l, a, Date32Type),
        D::Date64 => ints!(l, a, Date64Type),
        D::Timestamp(TimeUnit::Second, _) => ints!(l, a, TimestampSecondType),
        D::Timestamp(TimeUnit::Millisecond, _) => ints!(l, a, TimestampMillisecondType),
        D::Timestamp(TimeUnit::Microsecond, _) => ints!(l, a, TimestampMicrosecondType),
        D::Timestamp(TimeUnit::Nanosecond, _) => ints!(l, a, TimestampNanosecondType),
        D::Time32(TimeUnit::Second) => ints!(l, a, Time32SecondType),
        D::Time32(_) => ints!(l, a, Time32MillisecondType),
        D::Time64(TimeUnit::Microsecond) => ints!(l, a, Time64MicrosecondType),
        D::Time64(_) => ints!(l, a, Time64NanosecondType),
        D::Duration(TimeUnit::Second) => ints!(l, a, DurationSecondType),
        D::Duration(TimeUnit::Millisecond) => ints!(l, a, DurationMillisecondType),
        D::Duration(TimeUnit::Microsecond) => ints!(l, a, DurationMicrosecondType),
        D::Duration(TimeUnit::Nanosecond) => ints!(l, a, DurationNanosecondType),
        D::Decimal32(..) => ints!(l, a, Decimal32Type),
        D::Decimal64(..) => ints!(l, a, Decimal64Type),
        D::Decimal128(..) => ints!(l, a, Decimal128Type),
        D::Decimal256(..) => {
            for v in a.as_primitive::<Decimal256Type>().iter().flatten() {
                // Units past i128 are clamped (their distribution is kept).
                l.int(v.to_i128().unwrap_or(if v.is_negative() {
                    i128::MIN + 1
                } else {
                    i128::MAX
                }));
            }
        }
        D::Float16 => a
            .as_primitive::<Float16Type>()
            .iter()
            .flatten()
            .for_each(|v| l.float(f64::from(v.to_f32()))),
        D::Float32 => a
            .as_primitive::<Float32Type>()
            .iter()
            .flatten()
            .for_each(|v| l.float(f64::from(v))),
        D::Float64 => {
            let p = a.as_primitive::<Float64Type>();
            if p.null_count() == 0 {
                p.values().iter().for_each(|&v| l.float(v));
            } else {
                p.iter().flatten().for_each(|v| l.float(v));
            }
        }
        D::Utf8 => a
            .as_string::<i32>()
            .iter()
            .flatten()
            .for_each(|s| l.bytes(s.as_bytes())),
        D::LargeUtf8 => a
            .as_string::<i64>()
            .iter()
            .flatten()
            .for_each(|s| l.bytes(s.as_bytes())),
        D::Utf8View => a
            .as_string_view()
            .iter()
            .flatten()
            .for_each(|s| l.bytes(s.as_bytes())),
        D::Binary => a
            .as_binary::<i32>()
            .iter()
            .flatten()
            .for_each(|b| l.bytes(b)),
        D::LargeBinary => a
            .as_binary::<i64>()
            .iter()
            .flatten()
            .for_each(|b| l.bytes(b)),
        D::BinaryView => a.as_binary_view().iter().flatten().for_each(|b| l.bytes(b)),
        D::FixedSizeBinary(_) => a
            .as_fixed_size_binary()
            .iter()
            .flatten()
            .for_each(|b| l.bytes(b)),
        D::Dictionary(_, v) => {
            if let Ok(plain) = arrow_cast::cast(a, v) {
                add_leaf(l, plain.as_ref());
            }
        }
        _ => {}
    }
}

/// The differences `b - a` of two integral top-level columns of a table
/// (dates, timestamps): their range and a sample, for offsets.
#[derive(Debug, Clone)]
pub(crate) struct Pair {
    pub a: usize,
    pub b: usize,
    pub count: u64,
    pub min: i128,
    pub max: i128,
    pub sample: Reservoir<f64>,
}

/// A table's profile.
#[derive(Debug, Clone)]
pub(crate) struct TableProfile {
    pub name: String,
    /// Rows in the input (from metadata where the scan was sampled).
    pub rows: u64,
    /// Rows scanned.
    pub scanned: u64,
    pub columns: Vec<Node>,
    pub pairs: Vec<Pair>,
    /// Columns whose values never repeat within a run of equal values of
    /// the first column (with the first column, a composite key when the
    /// first column is grouped).
    pub within: Vec<Within>,
    last_first: Option<u64>,
    /// Joint counts of few-valued columns over the first rows, for
    /// dependencies between columns.
    pub joint: Option<Joint>,
}

/// Rows whose joint counts are kept.
pub(crate) const JOINT_ROWS: u64 = 200_000;

/// Columns with at most this many values in the first batch are candidates
/// for dependencies.
const JOINT_VALUES: usize = 32;

/// Joint counts over the first [`JOINT_ROWS`] rows: pairs of few-valued
/// columns (does `by` fix `of`?) and few-valued columns against the nulls
/// of others. Each few-valued column's values are numbered (at most
/// [`JOINT_MAX`]; a column with more drops out) and the counts of a pair
/// are a flat table of those numbers.
#[derive(Debug, Clone, Default)]
pub(crate) struct Joint {
    pub rows: u64,
    pub few: Vec<Few>,
    /// Columns with nulls.
    pub nullable: Vec<usize>,
    /// `(by, of)` (positions in `few`) -> counts at `by * JOINT_MAX + of`.
    pub pairs: HashMap<(usize, usize), Vec<u64>>,
    /// `(by` position in `few`, `of` column) -> counts at `2 * by + null`.
    pub nulls: HashMap<(usize, usize), Vec<u64>>,
}

/// The most values a few-valued column may have over the joint rows.
pub(crate) const JOINT_MAX: usize = 64;

/// A few-valued column of [`Joint`].
#[derive(Debug, Clone)]
pub(crate) struct Few {
    /// The column.
    pub column: usize,
    /// Its values, in number order.
    pub values: Vec<Category>,
    /// The number of each value's hash.
    index: HashMap<u64, u8>,
    /// Whether every value got a number (else the column dropped out).
    pub complete: bool,
}

/// The hash of a value at row `i` as [`Category`] hashes it (integers,
/// booleans, strings), without building it.
fn hash_at(a: &dyn Array, i: usize) -> Option<u64> {
    use DataType as D;
    if a.is_null(i) {
        return None;
    }
    macro_rules! int {
        ($t:ty) => {
            hash_int(a.as_primitive::<$t>().value(i) as i128)
        };
    }
    Some(match a.data_type() {
        D::Boolean => hash_int(i128::from(a.as_boolean().value(i))),
        D::Int8 => int!(Int8Type),
        D::Int16 => int!(Int16Type),
        D::Int32 => int!(Int32Type),
        D::Int64 => int!(Int64Type),
        D::UInt8 => int!(UInt8Type),
        D::UInt16 => int!(UInt16Type),
        D::UInt32 => int!(UInt32Type),
        D::UInt64 => int!(UInt64Type),
        D::Utf8 => hash_bytes(a.as_string::<i32>().value(i).as_bytes()),
        D::LargeUtf8 => hash_bytes(a.as_string::<i64>().value(i).as_bytes()),
        D::Utf8View => hash_bytes(a.as_string_view().value(i).as_bytes()),
        _ => return None,
    })
}

/// The value at row `i` (see [`hash_at`]).
fn category_at(a: &dyn Array, i: usize) -> Option<Category> {
    use DataType as D;
    if a.is_null(i) {
        return None;
    }
    macro_rules! int {
        ($t:ty) => {
            Category::Int(a.as_primitive::<$t>().value(i) as i128)
        };
    }
    Some(match a.data_type() {
        D::Boolean => Category::Int(i128::from(a.as_boolean().value(i))),
        D::Int8 => int!(Int8Type),
        D::Int16 => int!(Int16Type),
        D::Int32 => int!(Int32Type),
        D::Int64 => int!(Int64Type),
        D::UInt8 => int!(UInt8Type),
        D::UInt16 => int!(UInt16Type),
        D::UInt32 => int!(UInt32Type),
        D::UInt64 => int!(UInt64Type),
        D::Utf8 => Category::Bytes(a.as_string::<i32>().value(i).as_bytes().to_vec()),
        D::LargeUtf8 => Category::Bytes(a.as_string::<i64>().value(i).as_bytes().to_vec()),
        D::Utf8View => Category::Bytes(a.as_string_view().value(i).as_bytes().to_vec()),
        _ => return None,
    })
}

/// A column with dictionaries decoded.
fn plain(a: &ArrayRef) -> ArrayRef {
    match a.data_type() {
        DataType::Dictionary(_, v) => arrow_cast::cast(a, v).unwrap_or_else(|_| a.clone()),
        _ => a.clone(),
    }
}

/// No value (null, or a column that dropped out).
const NONE: u8 = u8::MAX;

impl Joint {
    fn start(batch: &RecordBatch) -> Joint {
        let mut j = Joint::default();
        for (i, a) in batch.columns().iter().enumerate() {
            let a = &plain(a);
            if a.null_count() > 0 && j.nullable.len() < 8 {
                j.nullable.push(i);
            }
            if j.few.len() >= 8 || batch.num_rows() < 100 {
                continue;
            }
            let mut seen = HashSet::new();
            let mut ok = true;
            for r in 0..a.len() {
                match hash_at(a.as_ref(), r) {
                    Some(h) => {
                        seen.insert(h);
                        if seen.len() > JOINT_VALUES {
                            ok = false;
                            break;
                        }
                    }
                    None if a.is_valid(r) => {
                        ok = false;
                        break;
                    }
                    None => {}
                }
            }
            if ok && seen.len() >= 2 {
                j.few.push(Few {
                    column: i,
                    values: Vec::new(),
                    index: HashMap::new(),
                    complete: true,
                });
            }
        }
        j
    }

    fn add(&mut self, batch: &RecordBatch) {
        let n = (batch.num_rows() as u64).min(JOINT_ROWS.saturating_sub(self.rows)) as usize;
        if n == 0 {
            return;
        }
        self.rows += n as u64;
        // Each few-valued column's value numbers.
        let mut numbers: Vec<Vec<u8>> = Vec::with_capacity(self.few.len());
        for f in &mut self.few {
            let a = plain(batch.column(f.column));
            let mut out = vec![NONE; n];
            if f.complete {
                for (r, slot) in out.iter_mut().enumerate() {
                    let Some(h) = hash_at(a.as_ref(), r) else {
                        continue;
                    };
                    let next = f.values.len();
                    let at = *f.index.entry(h).or_insert_with(|| {
                        if next < JOINT_MAX
                            && let Some(v) = category_at(a.as_ref(), r)
                        {
                            f.values.push(v);
                            next as u8
                        } else {
                            NONE
                        }
                    });
                    if at == NONE {
                        // Too many values: the column drops out.
                        f.complete = false;
                        out.fill(NONE);
                        break;
                    }
                    *slot = at;
                }
            }
            numbers.push(out);
        }
        for (x, by) in numbers.iter().enumerate() {
            for (y, of) in numbers.iter().enumerate() {
                if x == y {
                    continue;
                }
                let m = self
                    .pairs
                    .entry((x, y))
                    .or_insert_with(|| vec![0; JOINT_MAX * JOINT_MAX]);
                for (&a, &b) in by.iter().zip(of) {
                    if a != NONE && b != NONE {
                        m[a as usize * JOINT_MAX + b as usize] += 1;
                    }
                }
            }
            for &of in &self.nullable {
                if of == self.few[x].column {
                    continue;
                }
                let a = batch.column(of);
                let m = self
                    .nulls
                    .entry((x, of))
                    .or_insert_with(|| vec![0; 2 * JOINT_MAX]);
                for (r, &v) in by.iter().enumerate() {
                    if v != NONE {
                        m[2 * v as usize + usize::from(a.is_null(r))] += 1;
                    }
                }
            }
        }
    }
}

/// Whether a column's values are distinct within each run of equal
/// values of a table's first column.
#[derive(Debug, Clone)]
pub(crate) struct Within {
    pub column: usize,
    pub distinct: bool,
    run: HashSet<u64, State>,
}

/// Columns checked for distinct values within runs of the first column.
const MAX_WITHIN: usize = 8;

/// Hashes of a column's values, as the leaves hash them (`None` for
/// nulls), for integer and string columns.
fn row_hashes(a: &dyn Array) -> Option<Vec<Option<u64>>> {
    use DataType as D;
    let keyish = matches!(
        a.data_type(),
        D::Int8
            | D::Int16
            | D::Int32
            | D::Int64
            | D::UInt8
            | D::UInt16
            | D::UInt32
            | D::UInt64
            | D::Utf8
            | D::LargeUtf8
            | D::Utf8View
    );
    keyish.then(|| (0..a.len()).map(|i| hash_at(a, i)).collect())
}

/// Columns offsets are looked for between (dates and timestamps).
const MAX_PAIR_COLUMNS: usize = 8;

impl TableProfile {
    pub(crate) fn new(name: &str, fields: &[Arc<Field>], limits: &Limits) -> Self {
        let columns: Vec<Node> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| Node::new(f, limits, 0x1000 + i as u64))
            .collect();
        let temporal: Vec<usize> = columns
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                n.leaf()
                    .is_some_and(|l| matches!(l.class, Class::Date | Class::Timestamp { .. }))
            })
            .map(|(i, _)| i)
            .take(MAX_PAIR_COLUMNS)
            .collect();
        let mut pairs = Vec::new();
        for (x, &a) in temporal.iter().enumerate() {
            for &b in &temporal[x + 1..] {
                if columns[a].field.data_type() == columns[b].field.data_type() {
                    pairs.push(Pair {
                        a,
                        b,
                        count: 0,
                        min: i128::MAX,
                        max: i128::MIN,
                        sample: Reservoir::new(limits.sample, (a * 64 + b) as u64),
                    });
                }
            }
        }
        let keyish = |n: &Node| {
            n.leaf()
                .is_some_and(|l| matches!(l.class, Class::Int | Class::Str))
        };
        let within = if columns.first().is_some_and(keyish) {
            columns
                .iter()
                .enumerate()
                .skip(1)
                .filter(|(_, n)| keyish(n))
                .take(MAX_WITHIN)
                .map(|(i, _)| Within {
                    column: i,
                    distinct: true,
                    run: HashSet::with_hasher(State::default()),
                })
                .collect()
        } else {
            Vec::new()
        };
        TableProfile {
            name: name.to_string(),
            rows: 0,
            scanned: 0,
            columns,
            pairs,
            within,
            last_first: None,
            joint: None,
        }
    }

    /// Adds a batch (its columns profiled in parallel).
    pub(crate) fn add(&mut self, batch: &RecordBatch) {
        self.scanned += batch.num_rows() as u64;
        let cols: Vec<&ArrayRef> = batch.columns().iter().collect();
        self.columns
            .par_iter_mut()
            .zip(cols.par_iter())
            .for_each(|(n, a)| n.add(a.as_ref()));
        if !self.pairs.is_empty() {
            // Each column of a pair read once, whatever its pairs.
            let mut columns: Vec<usize> = self.pairs.iter().flat_map(|p| [p.a, p.b]).collect();
            columns.sort_unstable();
            columns.dedup();
            let values: HashMap<usize, Vec<Option<i128>>> = columns
                .into_par_iter()
                .filter_map(|c| Some((c, integral(batch.column(c).as_ref())?)))
                .collect();
            self.pairs.par_iter_mut().for_each(|p| {
                if let (Some(x), Some(y)) = (values.get(&p.a), values.get(&p.b)) {
                    add_pair(p, x, y);
                }
            });
        }
        self.add_within(batch);
        if self.scanned - (batch.num_rows() as u64) < JOINT_ROWS {
            let joint = self.joint.get_or_insert_with(|| Joint::start(batch));
            joint.add(batch);
        }
    }

    fn add_within(&mut self, batch: &RecordBatch) {
        if self.within.iter().all(|w| !w.distinct) {
            return;
        }
        let Some(first) = row_hashes(batch.column(0).as_ref()) else {
            return;
        };
        // Where each run of the first column starts (a run may go on from
        // the previous batch).
        let mut starts = Vec::with_capacity(first.len());
        let mut last = self.last_first;
        for h in &first {
            let h = h.unwrap_or(u64::MAX);
            starts.push(last != Some(h));
            last = Some(h);
        }
        self.last_first = last;
        // Runs of one row: nothing can repeat within them.
        if starts.iter().all(|&s| s) {
            for w in &mut self.within {
                w.run.clear();
            }
            return;
        }
        self.within
            .par_iter_mut()
            .filter(|w| w.distinct)
            .for_each(|w| {
                let Some(values) = row_hashes(batch.column(w.column).as_ref()) else {
                    w.distinct = false;
                    return;
                };
                for (v, &start) in values.iter().zip(&starts) {
                    if start {
                        w.run.clear();
                    }
                    match v {
                        Some(h) if w.run.insert(*h) => {}
                        _ => {
                            w.distinct = false;
                            w.run = HashSet::with_hasher(State::default());
                            return;
                        }
                    }
                }
            });
    }

    pub(crate) fn finish(&mut self) {
        self.columns.iter_mut().for_each(Node::finish);
    }

    /// A sampled Parquet table's figures over every row group, from the
    /// files' statistics: each top-level column's nulls (and so its
    /// non-null total), and the range of integer columns whose statistics
    /// are in the units profiled.
    pub(crate) fn apply(&mut self, stats: &HashMap<String, crate::input::ColumnStats>) {
        use DataType as D;
        for node in &mut self.columns {
            let Some(e) = stats.get(node.field.name()) else {
                continue;
            };
            if let Some(n) = e.nulls {
                node.nulls = n;
                node.slots = self.rows;
            }
            let direct = matches!(
                node.field.data_type(),
                D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::Date32 | D::Decimal128(..)
            );
            if let Shape::Leaf(l) = &mut node.shape {
                if let Some(n) = e.nulls {
                    l.total = self.rows.saturating_sub(n).max(l.count);
                }
                if let (Some((lo, hi)), true) = (e.range, direct)
                    && l.count > 0
                {
                    l.min_key = lo;
                    l.max_key = hi;
                    l.min = lo as f64;
                    l.max = hi as f64;
                }
            }
        }
    }
}

fn integral(a: &dyn Array) -> Option<Vec<Option<i128>>> {
    use DataType as D;
    macro_rules! wide {
        ($t:ty) => {
            a.as_primitive::<$t>()
                .iter()
                .map(|v| v.map(i128::from))
                .collect()
        };
    }
    Some(match a.data_type() {
        D::Date32 => wide!(Date32Type),
        D::Date64 => wide!(Date64Type),
        D::Timestamp(TimeUnit::Second, _) => wide!(TimestampSecondType),
        D::Timestamp(TimeUnit::Millisecond, _) => wide!(TimestampMillisecondType),
        D::Timestamp(TimeUnit::Microsecond, _) => wide!(TimestampMicrosecondType),
        D::Timestamp(TimeUnit::Nanosecond, _) => wide!(TimestampNanosecondType),
        _ => return None,
    })
}

fn add_pair(p: &mut Pair, x: &[Option<i128>], y: &[Option<i128>]) {
    for (x, y) in x.iter().zip(y) {
        if let (Some(x), Some(y)) = (x, y) {
            let d = y - x;
            p.count += 1;
            p.min = p.min.min(d);
            p.max = p.max.max(d);
            p.sample.offer(|| d as f64);
        }
    }
}
