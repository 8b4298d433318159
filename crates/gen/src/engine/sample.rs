//! Samplers: a generator compiled for a leaf's class, and the draw of
//! one value (or a length, or a referenced row) from a row's random bits.

use std::sync::Arc;

use super::calendar::calendar_int;
use super::draw::{below, below32, by_row, threshold};
use super::strata::Strata;
use super::text::{DIGITS, Draws, HEX, LOWER, Step, TPart, UPPER, Val, Writer};
use crate::Error;
use crate::dist::{Alias, Cumulative, Zipf, normal, normal_of_word, unit};
use crate::facts::{DAY_NAMES, MONTH_NAMES};
use crate::model::class::Class;
use crate::model::query::{distinct_values, max_length};
use crate::model::{CalendarPart, Generator, Value, WordList};
use crate::names::{NameTable, first_names, last_names, words};
use crate::rng::{RowRng, StreamKey};
use crate::template::{Part, Placeholder};

/// How a reference draws its parent rows.
#[derive(Debug)]
pub(super) enum RefPick {
    /// The element's own parent row: `id / max`.
    Parent {
        max: u64,
    },
    Uniform,
    /// Rank `k` is row `((k - 1) * step + offset) mod rows`.
    Zipf {
        zipf: Zipf,
        step: u64,
        offset: u64,
    },
    /// Rows by the weights of a parent field.
    Alias(Arc<Alias>),
    /// Element `id` takes row `((id mod rows) * step + offset) mod rows`:
    /// every `rows` consecutive elements take every row once.
    Balanced {
        step: u64,
        offset: u64,
    },
}

/// One way a reference draws its parent rows: how, from which stream,
/// and the offset added to the copy.
#[derive(Debug)]
pub(super) struct RefDraw {
    pub(super) pick: RefPick,
    pub(super) key: StreamKey,
    pub(super) offset: Option<(Sampler, StreamKey)>,
    /// For a child table, the stream of the position drawn at each
    /// generation below the root table's row (empty for other tables).
    pub(super) positions: Vec<StreamKey>,
}

impl RefDraw {
    /// The parent row of element `id` (of a table of `rows` rows).
    #[inline]
    pub(super) fn row(&self, id: u64, rows: u64) -> u64 {
        self.row_in(self.key, id, rows)
    }

    /// Element `id`'s draw number `attempt` (from 1) of a row of a table
    /// of `rows` rows, after the earlier draws reached rows without
    /// children: the same pick from a stream of its own per element and
    /// attempt.
    pub(super) fn redraw(&self, id: u64, rows: u64, attempt: u64) -> u64 {
        self.row_in(StreamKey::new(self.key.first(id), attempt), id, rows)
    }

    #[inline]
    fn row_in(&self, key: StreamKey, id: u64, rows: u64) -> u64 {
        match &self.pick {
            RefPick::Parent { max } => id / max,
            RefPick::Uniform => below(key.first(id), u128::from(rows)),
            // Below 2^31 rows the product fits 64 bits (a 128-bit
            // remainder is a call).
            RefPick::Zipf { zipf, step, offset } if rows <= 1 << 31 => {
                let rank = zipf.sample(&mut key.row(id)) - 1;
                (rank * step + offset) % rows
            }
            RefPick::Zipf { zipf, step, offset } => {
                let rank = zipf.sample(&mut key.row(id)) - 1;
                ((u128::from(rank) * u128::from(*step) + u128::from(*offset)) % u128::from(rows))
                    as u64
            }
            RefPick::Alias(alias) => u64::from(alias.sample(key.first(id))),
            RefPick::Balanced { step, offset } if rows <= 1 << 31 => {
                ((id % rows) * step + offset) % rows
            }
            RefPick::Balanced { step, offset } => {
                ((u128::from(id % rows) * u128::from(*step) + u128::from(*offset))
                    % u128::from(rows)) as u64
            }
        }
    }
}

/// One value drawer. Integer-like values (integers, dates, timestamps,
/// dictionary keys, booleans) are two's-complement bits in a `u64`.
#[derive(Debug)]
pub(super) enum Sampler {
    /// Random version 4 UUIDs, as text or as 16 bytes.
    SUuid {
        text: bool,
    },
    IntConst(u64),
    IntSeq {
        start: u64,
        step: u64,
    },
    IntUniform {
        min: u64,
        span: u128,
    },
    IntNormal {
        mean: f64,
        std: f64,
        lo: f64,
        hi: f64,
        signed: bool,
    },
    /// `exp(mu + sigma * Z)` rounded and clamped to `lo..=hi`
    /// (decimals in units: `mu` holds the logarithm of a unit).
    IntLognormal {
        mu: f64,
        sigma: f64,
        lo: f64,
        hi: f64,
        signed: bool,
    },
    /// Linear between `points[i]` at `i / n`, rounded; dates and
    /// timestamps moved to a weekday of their week when `week` is given.
    IntQuantiles {
        points: Vec<i128>,
        week: Option<Week>,
    },
    IntZipf {
        zipf: Zipf,
        start: u64,
    },
    IntTable {
        alias: Alias,
        values: Vec<u64>,
    },
    IntZipfTable {
        zipf: Zipf,
        values: Vec<u64>,
    },
    Bernoulli(u128),
    FConst(f64),
    FSeq {
        start: f64,
        step: f64,
    },
    FUniform {
        min: f64,
        width: f64,
    },
    FNormal {
        mean: f64,
        std: f64,
        lo: f64,
        hi: f64,
    },
    FLognormal {
        mu: f64,
        sigma: f64,
        lo: f64,
        hi: f64,
    },
    FQuantiles {
        points: Vec<f64>,
    },
    FZipf {
        zipf: Zipf,
        start: f64,
    },
    FTable {
        alias: Alias,
        values: Vec<f64>,
    },
    FZipfTable {
        zipf: Zipf,
        values: Vec<f64>,
    },
    SConst(Val),
    STable {
        alias: Alias,
        values: Vec<Val>,
    },
    SZipf {
        zipf: Zipf,
        values: Vec<Val>,
    },
    STemplate {
        parts: Vec<Step>,
        /// Whether any slot draws random bits (else no stream is read).
        random: bool,
    },
    SWords {
        table: &'static NameTable,
        min: u32,
        count: u32,
    },
    /// Windows of `min..min + count` bytes at random places of `text`.
    STextWindow {
        text: std::sync::Arc<[u8]>,
        min: u32,
        count: u32,
    },
    /// `min..min + count` characters of `alphabet` (`ascii`: its bytes,
    /// when every character is one).
    SChars {
        alphabet: Vec<char>,
        ascii: Option<Vec<u8>>,
        min: u32,
        count: u32,
    },
    /// `min..min + count` of the spec's own words, or of a list's without
    /// repeats (`distinct`).
    SOwnWords {
        words: Vec<Box<[u8]>>,
        distinct: bool,
        min: u32,
        count: u32,
    },
    /// Row `id` gets `values[id]` (`id % len` when cycled); rows past the
    /// list are refused before generation, and clamped here.
    IntByRow {
        values: Vec<u64>,
        cycle: bool,
    },
    FByRow {
        values: Vec<f64>,
        cycle: bool,
    },
    SByRow {
        values: Vec<Val>,
        cycle: bool,
    },
    /// A part of day `start + id` (as an integer, a boolean, a dictionary
    /// key or a name).
    Cal {
        start: i32,
        part: CalendarPart,
    },
    /// A top-level field's own sampler in a stratified table: its one
    /// uniform number per value drawn within the row's stratum.
    Stratified(Box<Stratified>),
}

/// A sampler whose value is a function of one uniform number (an inverse
/// distribution function), drawn within the strata of its table: the
/// samplers [`Sampler::stratified`] takes.
#[derive(Debug)]
pub(super) struct Stratified {
    strata: Strata,
    sampler: Sampler,
    /// For a weighted sampler, its categories by inverse distribution
    /// function (its alias table draws them another way).
    cumulative: Option<Cumulative>,
}

impl Stratified {
    /// The integer-like value of element `id` and its category.
    #[inline]
    fn int(&self, key: StreamKey, id: u64) -> (u64, u8) {
        let u = self.strata.word(id, key.first(id));
        match (&self.sampler, &self.cumulative) {
            (Sampler::IntUniform { min, span }, _) => (min.wrapping_add(below(u, *span)), 0),
            (
                Sampler::IntNormal {
                    mean,
                    std,
                    lo,
                    hi,
                    signed,
                },
                _,
            ) => {
                let x = (mean + std * normal_of_word(u)).round().max(*lo).min(*hi);
                (if *signed { x as i64 as u64 } else { x as u64 }, 0)
            }
            (
                Sampler::IntLognormal {
                    mu,
                    sigma,
                    lo,
                    hi,
                    signed,
                },
                _,
            ) => {
                let x = (mu + sigma * normal_of_word(u))
                    .exp()
                    .round()
                    .max(*lo)
                    .min(*hi);
                (if *signed { x as i64 as u64 } else { x as u64 }, 0)
            }
            (Sampler::IntQuantiles { points, week }, _) => {
                let v = quantile_int(points, unit(u));
                // The weekday is the row's own draw, as unstratified.
                let v = match week {
                    Some(w) => w
                        .moved(v, key.row(id).next_u64())
                        .clamp(points[0], points[points.len() - 1]),
                    None => v,
                };
                (v as u64, 0)
            }
            (Sampler::IntTable { values, .. }, Some(c)) => {
                let c = c.sample(u) as usize;
                (values[c], c.min(254) as u8)
            }
            (Sampler::Bernoulli(t), _) => {
                let b = u128::from(u) < *t;
                (u64::from(b), u8::from(b))
            }
            (other, _) => other.int(key, id),
        }
    }

    /// The float value of element `id` and its category.
    #[inline]
    fn float(&self, key: StreamKey, id: u64) -> (f64, u8) {
        let u = self.strata.word(id, key.first(id));
        match (&self.sampler, &self.cumulative) {
            (Sampler::FUniform { min, width }, _) => (min + unit(u) * width, 0),
            (Sampler::FNormal { mean, std, lo, hi }, _) => {
                ((mean + std * normal_of_word(u)).max(*lo).min(*hi), 0)
            }
            (Sampler::FLognormal { mu, sigma, lo, hi }, _) => {
                ((mu + sigma * normal_of_word(u)).exp().max(*lo).min(*hi), 0)
            }
            (Sampler::FQuantiles { points }, _) => (quantile_float(points, unit(u)), 0),
            (Sampler::FTable { values, .. }, Some(c)) => {
                let c = c.sample(u) as usize;
                (values[c], c.min(254) as u8)
            }
            (other, _) => other.float(key, id),
        }
    }

    /// Writes the string of element `id` and returns its category.
    #[inline]
    fn string(&self, key: StreamKey, id: u64, out: &mut Writer) -> u8 {
        match (&self.sampler, &self.cumulative) {
            (Sampler::STable { values, .. }, Some(c)) => {
                let c = c.sample(self.strata.word(id, key.first(id))) as usize;
                values[c].write(out);
                c.min(254) as u8
            }
            (other, _) => other.string(key, id, out),
        }
    }
}

/// The weekdays of [`Generator::Quantiles`]: a value of `per_day` units
/// a day moves within its ISO week to a weekday drawn by `alias`
/// (Monday first).
#[derive(Debug)]
pub(super) struct Week {
    alias: Alias,
    per_day: i128,
}

impl Week {
    /// `v` moved to the weekday drawn from `bits`, its time of day kept.
    #[inline]
    fn moved(&self, v: i128, bits: u64) -> i128 {
        let (day, time) = (v.div_euclid(self.per_day), v.rem_euclid(self.per_day));
        // Day 0, 1970-01-01, is a Thursday: weekday 3 counted from Monday.
        let weekday = (day + 3).rem_euclid(7);
        let to = i128::from(self.alias.sample(bits));
        (day - weekday + to) * self.per_day + time
    }
}

/// The value at `u` (in `[0, 1)`) of the piecewise linear inverse
/// distribution function through `(i / n, points[i])`, rounded to the
/// nearest integer: in `points[0]..=points[n]`.
#[inline]
fn quantile_int(points: &[i128], u: f64) -> i128 {
    let n = points.len() - 1;
    let at = u * n as f64;
    let i = (at as usize).min(n - 1);
    let (a, b) = (points[i], points[i + 1]);
    // The step from `a` is at most `b - a` (the fraction is below 1).
    a + ((b - a) as f64 * (at - i as f64)).round() as i128
}

/// [`quantile_int`] for floats.
#[inline]
fn quantile_float(points: &[f64], u: f64) -> f64 {
    let n = points.len() - 1;
    let at = u * n as f64;
    let i = (at as usize).min(n - 1);
    let (a, b) = (points[i], points[i + 1]);
    (a + (b - a) * (at - i as f64)).min(b)
}

pub(super) fn int_bits(v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        Value::Bool(b) => u64::from(*b),
        Value::Float(f) => *f as i64 as u64,
        Value::Str(_) | Value::Run(_) => 0,
    }
}

pub(super) fn float_of(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(_) | Value::Run(_) => 0.0,
    }
}

pub(super) fn bytes_of(v: &Value) -> Box<[u8]> {
    match v {
        Value::Str(s) => s.as_bytes().into(),
        other => other.to_string().into_bytes().into(),
    }
}

pub(super) fn word_table(list: WordList) -> &'static NameTable {
    list.table()
}

/// The (min, max) of an integer class as f64 clamps.
pub(super) fn int_range(class: Class) -> (f64, f64, bool) {
    match class {
        Class::Int { min, max } => (min as f64, max as f64, min < 0),
        Class::Decimal { max, .. } => (-max as f64, max as f64, true),
        _ => (i64::MIN as f64, i64::MAX as f64, true),
    }
}

pub(super) fn compile_sampler(g: &Generator, class: Class) -> Result<Sampler, Error> {
    let float = class == Class::Float;
    let string = matches!(class, Class::Str);
    let dict = class == Class::Dict;
    Ok(match g {
        Generator::Constant(v) => {
            if float {
                Sampler::FConst(float_of(v))
            } else if string {
                Sampler::SConst(Val::new(&bytes_of(v)))
            } else if dict {
                Sampler::IntConst(0)
            } else {
                Sampler::IntConst(int_bits(v))
            }
        }
        Generator::Sequence { start, step } => {
            if float {
                Sampler::FSeq {
                    start: float_of(start),
                    step: float_of(step),
                }
            } else {
                Sampler::IntSeq {
                    start: int_bits(start),
                    step: int_bits(step),
                }
            }
        }
        Generator::Uniform { min, max } => match (min, max) {
            (Value::Float(a), Value::Float(b)) => Sampler::FUniform {
                min: *a,
                width: b - a,
            },
            (Value::Int(a), Value::Int(b)) => Sampler::IntUniform {
                min: *a as u64,
                span: (b - a + 1) as u128,
            },
            _ => {
                return Err(Error::InvalidDistribution(
                    "uniform bounds of different kinds".into(),
                ));
            }
        },
        Generator::Normal {
            mean,
            std,
            min,
            max,
        } => {
            if float {
                Sampler::FNormal {
                    mean: *mean,
                    std: *std,
                    lo: min.unwrap_or(f64::NEG_INFINITY),
                    hi: max.unwrap_or(f64::INFINITY),
                }
            } else {
                // Decimals are drawn in units of their scale.
                let unit = class.unit();
                let (tlo, thi, signed) = int_range(class);
                Sampler::IntNormal {
                    mean: mean * unit,
                    std: std * unit,
                    lo: min.map_or(tlo, |m| (m * unit).max(tlo)),
                    hi: max.map_or(thi, |m| (m * unit).min(thi)),
                    signed,
                }
            }
        }
        Generator::Lognormal {
            mu,
            sigma,
            min,
            max,
        } => {
            if float {
                Sampler::FLognormal {
                    mu: *mu,
                    sigma: *sigma,
                    lo: min.unwrap_or(f64::NEG_INFINITY),
                    hi: max.unwrap_or(f64::INFINITY),
                }
            } else {
                // Decimals are drawn in units of their scale: exp(mu)
                // times a unit's worth.
                let unit = class.unit();
                let (tlo, thi, signed) = int_range(class);
                Sampler::IntLognormal {
                    mu: mu + unit.ln(),
                    sigma: *sigma,
                    lo: min.map_or(tlo, |m| (m * unit).max(tlo)),
                    hi: max.map_or(thi, |m| (m * unit).min(thi)),
                    signed,
                }
            }
        }
        Generator::Quantiles { points, weekdays } => {
            if points.len() < 2 {
                return Err(Error::InvalidDistribution(
                    "quantiles need at least two points".into(),
                ));
            }
            if float {
                Sampler::FQuantiles {
                    points: points.iter().map(float_of).collect(),
                }
            } else {
                let points: Vec<i128> = points
                    .iter()
                    .map(|v| match v {
                        Value::Int(i) => *i,
                        other => i128::from(int_bits(other) as i64),
                    })
                    .collect();
                let week = match (weekdays, class) {
                    (Some(w), Class::Date) => Some(Week {
                        alias: Alias::new(w)?,
                        per_day: 1,
                    }),
                    (Some(w), Class::Timestamp(u)) => Some(Week {
                        alias: Alias::new(w)?,
                        per_day: crate::model::units_per_second(u) * 86_400,
                    }),
                    _ => None,
                };
                Sampler::IntQuantiles { points, week }
            }
        }
        Generator::Zipf {
            s,
            n,
            values,
            start,
        } => {
            let zipf = Zipf::new(*s, *n)?;
            match values {
                Some(vals) if float => Sampler::FZipfTable {
                    zipf,
                    values: vals.iter().map(float_of).collect(),
                },
                Some(vals) if string => Sampler::SZipf {
                    zipf,
                    values: vals.iter().map(|v| Val::new(&bytes_of(v))).collect(),
                },
                Some(vals) if dict => Sampler::IntZipfTable {
                    zipf,
                    values: (0..vals.len() as u64).collect(),
                },
                Some(vals) => Sampler::IntZipfTable {
                    zipf,
                    values: vals.iter().map(int_bits).collect(),
                },
                None if float => Sampler::FZipf {
                    zipf,
                    start: *start as f64,
                },
                None => Sampler::IntZipf {
                    zipf,
                    start: *start as u64,
                },
            }
        }
        Generator::Weighted { values, weights } => {
            let alias = Alias::new(weights)?;
            if float {
                Sampler::FTable {
                    alias,
                    values: values.iter().map(float_of).collect(),
                }
            } else if string {
                Sampler::STable {
                    alias,
                    values: values.iter().map(|v| Val::new(&bytes_of(v))).collect(),
                }
            } else if dict {
                Sampler::IntTable {
                    alias,
                    values: (0..values.len() as u64).collect(),
                }
            } else {
                Sampler::IntTable {
                    alias,
                    values: values.iter().map(int_bits).collect(),
                }
            }
        }
        Generator::Probability(p) => Sampler::Bernoulli(threshold(*p)),
        Generator::Template(t) => {
            let mut parts = Vec::new();
            for p in t.parts() {
                parts.push(match p {
                    Part::Literal(s) => TPart::Lit(Val::new(s.as_bytes())),
                    Part::Slot {
                        placeholder,
                        width,
                        zero,
                    } => {
                        let (width, zero) = (*width, *zero);
                        match placeholder {
                            Placeholder::Seq => TPart::Seq { width, zero },
                            Placeholder::FirstName => TPart::Name(first_names()),
                            Placeholder::LastName => TPart::Name(last_names()),
                            Placeholder::Word => TPart::Name(words()),
                            Placeholder::Uniform { min, max } => TPart::Uniform {
                                min: *min,
                                span: (*max as i128 - *min as i128 + 1) as u128,
                                width,
                                zero,
                            },
                            Placeholder::Zipf { s, n } => TPart::Zipf {
                                zipf: Zipf::new(*s, *n)?,
                                width,
                                zero,
                            },
                            Placeholder::Hex(n) => TPart::Hex(*n),
                            Placeholder::Digits(n) => TPart::Pick(DIGITS, *n),
                            Placeholder::Upper(n) => TPart::Pick(UPPER, *n),
                            Placeholder::Lower(n) => TPart::Pick(LOWER, *n),
                        }
                    }
                });
            }
            let random = parts
                .iter()
                .any(|p| !matches!(p, TPart::Lit(_) | TPart::Seq { .. }));
            Sampler::STemplate {
                parts: Step::compile(parts),
                random,
            }
        }
        Generator::Text {
            list,
            own,
            size,
            min,
            max,
        } => Sampler::STextWindow {
            text: pseudo_text(*list, own.as_deref(), *size),
            min: *min,
            count: max - min + 1,
        },
        Generator::Chars { alphabet, min, max } => Sampler::SChars {
            ascii: alphabet
                .iter()
                .all(char::is_ascii)
                .then(|| alphabet.iter().map(|&c| c as u8).collect()),
            alphabet: alphabet.clone(),
            min: *min,
            count: max - min + 1,
        },
        Generator::Words {
            list,
            own: None,
            distinct: false,
            min,
            max,
        } => Sampler::SWords {
            table: word_table(*list),
            min: *min,
            count: max - min + 1,
        },
        Generator::Words {
            list,
            own,
            distinct,
            min,
            max,
        } => Sampler::SOwnWords {
            words: match own {
                Some(w) => w.iter().map(|w| w.as_bytes().into()).collect(),
                None => {
                    let t = word_table(*list);
                    (0..t.len()).map(|i| t.get(i).into()).collect()
                }
            },
            distinct: *distinct,
            min: *min,
            count: max - min + 1,
        },
        Generator::Uuid => Sampler::SUuid { text: true },
        Generator::Reference(r) => {
            return Err(Error::InvalidDistribution(format!(
                "a reference to {}.{} draws no values of its own (only a field's generator can be one)",
                r.table, r.field
            )));
        }
        Generator::Position(_) => {
            return Err(Error::InvalidDistribution(
                "a position draws no values of its own (only a field's generator can be one)"
                    .into(),
            ));
        }
        Generator::Expr(e) => {
            return Err(Error::InvalidDistribution(format!(
                "the expression {:?} draws no values of its own (only a field's generator can be one)",
                e.source
            )));
        }
        Generator::Aggregate(a) => {
            return Err(Error::InvalidDistribution(format!(
                "an aggregate of {} draws no values of its own (only a field's generator can be one)",
                a.table
            )));
        }
        Generator::ByRow { values, .. } if values.is_empty() => {
            return Err(Error::InvalidDistribution(
                "values_by_row needs at least one value".into(),
            ));
        }
        Generator::ByRow { values, cycle } => {
            let cycle = *cycle;
            if float {
                Sampler::FByRow {
                    values: values.iter().map(float_of).collect(),
                    cycle,
                }
            } else if string {
                Sampler::SByRow {
                    values: values.iter().map(|v| Val::new(&bytes_of(v))).collect(),
                    cycle,
                }
            } else if dict {
                Sampler::IntByRow {
                    values: distinct_values(values)
                        .1
                        .into_iter()
                        .map(u64::from)
                        .collect(),
                    cycle,
                }
            } else {
                Sampler::IntByRow {
                    values: values.iter().map(int_bits).collect(),
                    cycle,
                }
            }
        }
        Generator::Calendar(part) => {
            // The day of row `id` is `start + id`: a calendar table's
            // leaves are compiled with its start (see `compile`).
            Sampler::Cal {
                start: 0,
                part: *part,
            }
        }
    })
}

/// A list or map length sampler; table values are clamped here to
/// `0..=max_length`, so that the per-row loops need not clamp them.
pub(super) fn length_sampler(g: &Generator, class: Class) -> Result<Sampler, Error> {
    let mut sampler = compile_sampler(g, class)?;
    if let Sampler::IntTable { values, .. } = &mut sampler {
        let max = max_length(g).max(1);
        for v in values {
            *v = (*v as i64).clamp(0, max as i64) as u64;
        }
    }
    Ok(sampler)
}

impl Sampler {
    /// This sampler drawing its uniform numbers within `strata`, when its
    /// value is a function of one uniform number: `uniform`, `normal`,
    /// `lognormal`, `quantiles`, `weighted` and `probability` (the others
    /// come back as they are).
    pub(super) fn stratified(self, strata: Strata) -> Sampler {
        let cumulative = match &self {
            Sampler::IntTable { alias, .. }
            | Sampler::FTable { alias, .. }
            | Sampler::STable { alias, .. } => Some(Cumulative::of(alias)),
            Sampler::IntUniform { .. }
            | Sampler::IntNormal { .. }
            | Sampler::IntLognormal { .. }
            | Sampler::IntQuantiles { .. }
            | Sampler::Bernoulli(_)
            | Sampler::FUniform { .. }
            | Sampler::FNormal { .. }
            | Sampler::FLognormal { .. }
            | Sampler::FQuantiles { .. } => None,
            _ => return self,
        };
        Sampler::Stratified(Box::new(Stratified {
            strata,
            sampler: self,
            cumulative,
        }))
    }

    /// Categories of a table sampler (0 for others).
    pub(super) fn categories(&self) -> usize {
        match self {
            Sampler::Stratified(s) => s.sampler.categories(),
            Sampler::IntTable { values, .. } | Sampler::IntZipfTable { values, .. } => values.len(),
            Sampler::FTable { values, .. } | Sampler::FZipfTable { values, .. } => values.len(),
            Sampler::STable { values, .. } | Sampler::SZipf { values, .. } => values.len(),
            _ => 0,
        }
    }

    /// Whether category `c` has a positive probability.
    pub(super) fn possible(&self, c: u32) -> bool {
        match self {
            Sampler::Stratified(s) => s.sampler.possible(c),
            Sampler::IntTable { alias, .. }
            | Sampler::FTable { alias, .. }
            | Sampler::STable { alias, .. } => alias.probability(c as usize) > 0.0,
            _ => true,
        }
    }

    /// A category of a table sampler, drawn from `r`.
    pub(super) fn category(&self, r: &mut RowRng) -> u32 {
        match self {
            Sampler::Stratified(s) => s.sampler.category(r),
            Sampler::IntTable { alias, .. }
            | Sampler::FTable { alias, .. }
            | Sampler::STable { alias, .. } => alias.sample(r.next_u64()),
            Sampler::IntZipfTable { zipf, .. }
            | Sampler::FZipfTable { zipf, .. }
            | Sampler::SZipf { zipf, .. } => (zipf.sample(r) - 1) as u32,
            _ => 0,
        }
    }

    pub(super) fn int_of(&self, c: u32) -> u64 {
        match self {
            Sampler::Stratified(s) => s.sampler.int_of(c),
            Sampler::IntTable { values, .. } | Sampler::IntZipfTable { values, .. } => {
                values[c as usize]
            }
            _ => 0,
        }
    }

    pub(super) fn float_of(&self, c: u32) -> f64 {
        match self {
            Sampler::Stratified(s) => s.sampler.float_of(c),
            Sampler::FTable { values, .. } | Sampler::FZipfTable { values, .. } => {
                values[c as usize]
            }
            _ => 0.0,
        }
    }

    pub(super) fn string_of(&self, c: u32, out: &mut Writer) {
        match self {
            Sampler::STable { values, .. } | Sampler::SZipf { values, .. } => {
                values[c as usize].write(out);
            }
            Sampler::Stratified(s) => s.sampler.string_of(c, out),
            _ => {}
        }
    }

    /// The most bytes one string value can take.
    pub(super) fn max_bytes(&self) -> usize {
        match self {
            Sampler::SConst(v) => v.len(),
            Sampler::STable { values, .. } | Sampler::SZipf { values, .. } => {
                values.iter().map(Val::len).max().unwrap_or(0)
            }
            Sampler::STemplate { parts, .. } => parts
                .iter()
                .map(|step| {
                    step.prefix_len
                        + match &step.part {
                            TPart::Lit(v) => v.len(),
                            TPart::Seq { width, .. }
                            | TPart::Uniform { width, .. }
                            | TPart::Zipf { width, .. } => (*width).max(21),
                            TPart::Name(_) => crate::names::SLOT,
                            TPart::Hex(n) | TPart::Pick(_, n) => *n as usize,
                        }
                })
                .sum(),
            Sampler::SWords { min, count, .. } => {
                (*min + *count) as usize * (crate::names::SLOT + 1)
            }
            Sampler::STextWindow { min, count, .. } => (*min + *count - 1) as usize,
            Sampler::SChars {
                alphabet,
                min,
                count,
                ..
            } => {
                let widest = alphabet.iter().map(|c| c.len_utf8()).max().unwrap_or(1);
                (*min + *count - 1) as usize * widest
            }
            Sampler::SOwnWords {
                words, min, count, ..
            } => {
                let longest = words.iter().map(|w| w.len()).max().unwrap_or(0);
                (*min + *count) as usize * (longest + 1)
            }
            Sampler::SUuid { text } => {
                if *text {
                    36
                } else {
                    16
                }
            }
            Sampler::SByRow { values, .. } => values.iter().map(Val::len).max().unwrap_or(0),
            Sampler::Cal { .. } => 9,
            Sampler::Stratified(s) => s.sampler.max_bytes(),
            _ => 0,
        }
    }

    /// An integer-like value and its category.
    #[inline(always)]
    pub(super) fn int(&self, key: StreamKey, id: u64) -> (u64, u8) {
        match self {
            Sampler::IntConst(v) => (*v, 0),
            Sampler::IntSeq { start, step } => (start.wrapping_add(step.wrapping_mul(id)), 0),
            Sampler::IntUniform { min, span } => (min.wrapping_add(below(key.first(id), *span)), 0),
            Sampler::IntNormal {
                mean,
                std,
                lo,
                hi,
                signed,
            } => {
                let mut r = key.row(id);
                let x = (mean + std * normal(&mut r)).round().max(*lo).min(*hi);
                let v = if *signed { x as i64 as u64 } else { x as u64 };
                (v, 0)
            }
            Sampler::IntLognormal {
                mu,
                sigma,
                lo,
                hi,
                signed,
            } => {
                let mut r = key.row(id);
                let x = (mu + sigma * normal(&mut r))
                    .exp()
                    .round()
                    .max(*lo)
                    .min(*hi);
                let v = if *signed { x as i64 as u64 } else { x as u64 };
                (v, 0)
            }
            Sampler::IntQuantiles { points, week } => {
                let mut r = key.row(id);
                let v = quantile_int(points, unit(r.state()));
                let v = match week {
                    Some(w) => w
                        .moved(v, r.next_u64())
                        .clamp(points[0], points[points.len() - 1]),
                    None => v,
                };
                (v as u64, 0)
            }
            Sampler::IntZipf { zipf, start } => {
                (start.wrapping_add(zipf.sample(&mut key.row(id)) - 1), 0)
            }
            Sampler::IntTable { alias, values } => {
                let c = alias.sample(key.first(id)) as usize;
                (values[c], c.min(254) as u8)
            }
            Sampler::IntZipfTable { zipf, values } => {
                let c = (zipf.sample(&mut key.row(id)) - 1) as usize;
                (values[c], c.min(254) as u8)
            }
            Sampler::Bernoulli(t) => {
                let b = u128::from(key.first(id)) < *t;
                (u64::from(b), u8::from(b))
            }
            Sampler::IntByRow { values, cycle } => {
                let v = values[by_row(id, values.len(), *cycle)];
                (v, v.min(254) as u8)
            }
            Sampler::Cal { start, part } => {
                calendar_int(i64::from(*start) + id.min(i32::MAX as u64) as i64, *part)
            }
            Sampler::Stratified(s) => s.int(key, id),
            _ => (0, 0),
        }
    }

    #[inline(always)]
    pub(super) fn float(&self, key: StreamKey, id: u64) -> (f64, u8) {
        match self {
            Sampler::FConst(v) => (*v, 0),
            Sampler::FSeq { start, step } => (start + step * id as f64, 0),
            Sampler::FUniform { min, width } => (min + unit(key.first(id)) * width, 0),
            Sampler::FNormal { mean, std, lo, hi } => {
                let mut r = key.row(id);
                ((mean + std * normal(&mut r)).max(*lo).min(*hi), 0)
            }
            Sampler::FLognormal { mu, sigma, lo, hi } => {
                let mut r = key.row(id);
                ((mu + sigma * normal(&mut r)).exp().max(*lo).min(*hi), 0)
            }
            Sampler::FQuantiles { points } => (quantile_float(points, unit(key.first(id))), 0),
            Sampler::FZipf { zipf, start } => {
                (start + (zipf.sample(&mut key.row(id)) - 1) as f64, 0)
            }
            Sampler::FTable { alias, values } => {
                let c = alias.sample(key.first(id)) as usize;
                (values[c], c.min(254) as u8)
            }
            Sampler::FZipfTable { zipf, values } => {
                let c = (zipf.sample(&mut key.row(id)) - 1) as usize;
                (values[c], c.min(254) as u8)
            }
            Sampler::FByRow { values, cycle } => (values[by_row(id, values.len(), *cycle)], 0),
            Sampler::Stratified(s) => s.float(key, id),
            _ => (0.0, 0),
        }
    }

    /// Writes the string of element `id` and returns its category.
    #[inline(always)]
    pub(super) fn string(&self, key: StreamKey, id: u64, out: &mut Writer) -> u8 {
        match self {
            Sampler::SConst(v) => {
                v.write(out);
                0
            }
            Sampler::STable { alias, values } => {
                let c = alias.sample(key.first(id)) as usize;
                values[c].write(out);
                c.min(254) as u8
            }
            Sampler::SZipf { zipf, values } => {
                let c = (zipf.sample(&mut key.row(id)) - 1) as usize;
                values[c].write(out);
                c.min(254) as u8
            }
            Sampler::STemplate { parts, random } => {
                let mut d = Draws::new(key, id, *random);
                for step in parts {
                    step.write::<false>(id, &mut d, out);
                }
                0
            }
            Sampler::SWords { table, min, count } => {
                let mut d = Draws::new(key, id, true);
                let n = min + below32(d.u32(), *count);
                for w in 0..n {
                    if w > 0 {
                        out.block(b" ", 1);
                    }
                    let (slot, len) = table.slot(below32(d.u32(), table.len() as u32) as usize);
                    out.block(slot, len);
                }
                0
            }
            Sampler::STextWindow { text, min, count } => {
                let mut d = Draws::new(key, id, true);
                let len = min + below32(d.u32(), *count);
                let at = below32(d.u32(), text.len() as u32 - len + 1) as usize;
                out.bytes(&text[at..at + len as usize]);
                0
            }
            Sampler::SChars {
                alphabet,
                ascii,
                min,
                count,
            } => {
                let mut d = Draws::new(key, id, true);
                let n = min + below32(d.u32(), *count);
                let len = alphabet.len() as u32;
                match ascii {
                    Some(bytes) => {
                        let mut buf = [0u8; 64];
                        let mut left = n as usize;
                        while left > 0 {
                            let k = left.min(buf.len());
                            for b in &mut buf[..k] {
                                *b = bytes[below32(d.u32(), len) as usize];
                            }
                            out.bytes(&buf[..k]);
                            left -= k;
                        }
                    }
                    None => {
                        let mut utf8 = [0u8; 4];
                        for _ in 0..n {
                            let c = alphabet[below32(d.u32(), len) as usize];
                            out.bytes(c.encode_utf8(&mut utf8).as_bytes());
                        }
                    }
                }
                0
            }
            Sampler::SOwnWords {
                words,
                distinct,
                min,
                count,
            } => {
                let mut d = Draws::new(key, id, true);
                let n = min + below32(d.u32(), *count);
                // The words of this value, each drawn again while it
                // repeats an earlier one (a value holds at most as many
                // words as the list, checked when parsed).
                let mut taken = [0u32; 8];
                let mut more: Vec<u32> = Vec::new();
                for w in 0..n as usize {
                    let mut i = below32(d.u32(), words.len() as u32);
                    if *distinct {
                        let seen = |i: u32, taken: &[u32; 8], more: &[u32]| {
                            taken[..w.min(8)].contains(&i) || more.contains(&i)
                        };
                        while seen(i, &taken, &more) {
                            i = below32(d.u32(), words.len() as u32);
                        }
                        if w < 8 {
                            taken[w] = i;
                        } else {
                            more.push(i);
                        }
                    }
                    if w > 0 {
                        out.bytes(b" ");
                    }
                    out.bytes(&words[i as usize]);
                }
                0
            }
            Sampler::SUuid { text } => {
                let mut r = key.row(id);
                let (hi, lo) = (r.next_u64(), r.next_u64());
                // Version 4 (random) in the high nibble of byte 6, the
                // RFC 4122 variant (binary 10) in the top bits of byte 8.
                let hi = (hi & !0xf000) | 0x4000;
                let lo = (lo & !(0xc000_0000_0000_0000)) | 0x8000_0000_0000_0000;
                let mut b = [0u8; 16];
                b[..8].copy_from_slice(&hi.to_be_bytes());
                b[8..].copy_from_slice(&lo.to_be_bytes());
                if *text {
                    let mut t = [0u8; 36];
                    let mut at = 0;
                    for (i, byte) in b.iter().enumerate() {
                        if matches!(i, 4 | 6 | 8 | 10) {
                            t[at] = b'-';
                            at += 1;
                        }
                        t[at] = HEX[usize::from(byte >> 4)];
                        t[at + 1] = HEX[usize::from(byte & 15)];
                        at += 2;
                    }
                    out.bytes(&t);
                } else {
                    out.bytes(&b);
                }
                0
            }
            Sampler::SByRow { values, cycle } => {
                values[by_row(id, values.len(), *cycle)].write(out);
                0
            }
            Sampler::Cal { start, part } => {
                let day = i64::from(*start) + id.min(i32::MAX as u64) as i64;
                let (k, c) = calendar_int(day, *part);
                let name = match part {
                    CalendarPart::MonthName => MONTH_NAMES.get(k as usize),
                    _ => DAY_NAMES.get(k as usize),
                };
                out.bytes(name.copied().unwrap_or("").as_bytes());
                c
            }
            Sampler::Stratified(s) => s.string(key, id, out),
            _ => 0,
        }
    }
}

/// An estimate of a leaf's distinct values (`None`: unbounded).
pub(super) fn cardinality(g: &Generator, class: Class) -> Option<u64> {
    match g {
        Generator::Constant(_) => Some(1),
        Generator::Sequence { .. } => None,
        Generator::Uniform { min, max } => match (min, max) {
            (Value::Int(a), Value::Int(b)) => u64::try_from(b - a + 1).ok(),
            _ => None,
        },
        Generator::Normal { std, min, max, .. } => {
            if class == Class::Float {
                return None;
            }
            let unit = class.unit();
            let width = 12.0 * std * unit;
            let clamp = match (min, max) {
                (Some(a), Some(b)) => (b - a) * unit + 1.0,
                _ => f64::INFINITY,
            };
            Some((width.min(clamp) as u64).saturating_add(1))
        }
        Generator::Lognormal {
            mu,
            sigma,
            min,
            max,
        } => {
            if class == Class::Float {
                return None;
            }
            // Most values lie within 6 standard deviations of the
            // logarithm's mean.
            let unit = class.unit();
            let lo = min
                .unwrap_or(f64::NEG_INFINITY)
                .max((mu - 6.0 * sigma).exp());
            let hi = max.unwrap_or(f64::INFINITY).min((mu + 6.0 * sigma).exp());
            Some((((hi - lo).max(0.0) * unit) as u64).saturating_add(1))
        }
        Generator::Quantiles { points, .. } => match (points.first(), points.last()) {
            (Some(Value::Int(a)), Some(Value::Int(b))) => u64::try_from(b - a + 1).ok(),
            _ => None,
        },
        Generator::Zipf { n, .. } => Some(*n),
        Generator::Weighted { values, .. } => Some(values.len() as u64),
        Generator::Probability(_) => Some(2),
        Generator::Template(t) => t.cardinality(),
        Generator::Chars { alphabet, max, .. } => (alphabet.len() as u64).checked_pow(*max),
        Generator::Text { size, .. } => Some(u64::from(*size)),
        Generator::Words {
            own: Some(w), max, ..
        } => (w.len() as u64).checked_pow(*max),
        Generator::Words { list, max, .. } => (word_table(*list).len() as u64).checked_pow(*max),
        Generator::Reference(_) | Generator::Position(_) | Generator::Uuid => None,
        Generator::ByRow { values, .. } => Some(distinct_values(values).0.len() as u64),
        Generator::Expr(_) | Generator::Aggregate(_) => None,
        Generator::Calendar(p) => match p {
            CalendarPart::Date | CalendarPart::DateKey => None,
            _ => Some(366),
        },
    }
}

/// The pseudo-text of a `text` generator: words of `list` (or `own`)
/// drawn from a stream of their own and joined by spaces, cut to `size`
/// bytes. The same for every seed: only the windows depend on it.
fn pseudo_text(list: WordList, own: Option<&[String]>, size: u32) -> std::sync::Arc<[u8]> {
    let table = word_table(list);
    let words: Vec<&[u8]> = match own {
        Some(w) => w.iter().map(|w| w.as_bytes()).collect(),
        None => (0..table.len()).map(|i| table.get(i)).collect(),
    };
    let key = crate::rng::StreamKey::new(0x7e47_5eed, u64::from(size));
    let mut d = Draws::new(key, 0, true);
    let size = size as usize;
    let mut text = Vec::with_capacity(size + 32);
    while text.len() < size {
        if !text.is_empty() {
            text.push(b' ');
        }
        text.extend_from_slice(words[below32(d.u32(), words.len() as u32) as usize]);
    }
    text.truncate(size);
    text.into()
}

#[cfg(test)]
mod tests {
    use super::super::draw::coprime_from;
    use super::*;

    /// A balanced draw with multiplier `step` and offset `offset`.
    fn balanced(step: u64, offset: u64) -> RefDraw {
        RefDraw {
            pick: RefPick::Balanced { step, offset },
            key: StreamKey::new(1, 2),
            offset: None,
            positions: Vec::new(),
        }
    }

    #[test]
    fn balanced_rows_follow_the_formula_on_both_sides_of_two_to_the_31() {
        for rows in [(1u64 << 31) - 1, 1 << 31, (1 << 31) + 1, 1 << 40, u64::MAX] {
            let (step, offset) = (coprime_from(rows, rows / 3), rows / 7);
            let d = balanced(step, offset);
            let want = |id: u64| {
                ((u128::from(id % rows) * u128::from(step) + u128::from(offset)) % u128::from(rows))
                    as u64
            };
            for id in [0, 1, 2, rows - 1, rows / 2, u64::MAX - 1, u64::MAX] {
                assert_eq!(d.row(id, rows), want(id), "rows {rows}, id {id}");
                assert!(d.row(id, rows) < rows);
            }
            // A block of rows repeats the one before it.
            if let Some(next) = 5u64.checked_add(rows) {
                assert_eq!(d.row(5, rows), d.row(next, rows), "rows {rows}");
            }
        }
    }
}
