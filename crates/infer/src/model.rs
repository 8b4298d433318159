//! From profiles to spec text: each field's type and generator, chosen
//! from what the profile measured, written as TOML.
//!
//! Per leaf, in this order: a unique integer column is a `sequence`; few
//! distinct values (at most [`SMALL`]) are `weighted` categories; else the
//! parametric fit with the least KS distance when it passes the KS test
//! at 95%; else categories when they all occur `min_count` times; else
//! `quantiles`. Strings: categories, else a pattern ([`crate::text`]).

use arrow_schema::{DataType, Field, TimeUnit};

use crate::fit::{self, Dist};
use crate::profile::{Category, Class, Counts, Leaf, Node, Shape};
use crate::text::{self, Pattern};

/// Distinct values a numeric column may have to be written as categories
/// before fits are tried.
pub(crate) const SMALL: usize = 64;

/// Knots of a `quantiles` generator (intervals + 1).
const KNOTS: usize = 129;

/// What the choices depend on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    pub min_count: u64,
    pub max_categories: usize,
}

/// A generator as a spec writes it: its key and value (`uniform`,
/// `{ min = 1, max = 9 }`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Gen {
    pub key: &'static str,
    pub value: String,
}

impl Gen {
    fn new(key: &'static str, value: impl Into<String>) -> Self {
        Gen {
            key,
            value: value.into(),
        }
    }

    /// As an inline table (`{ uniform = { ... } }`), for `length`,
    /// `count` and `offset`.
    pub(crate) fn inline(&self) -> String {
        format!("{{ {} = {} }}", self.key, self.value)
    }
}

/// A field of the spec to write.
#[derive(Debug, Clone)]
pub(crate) struct FieldPlan {
    pub name: String,
    pub type_text: String,
    /// Comment lines written above the field.
    pub notes: Vec<String>,
    pub null_rate: f64,
    pub nullable: bool,
    pub hidden: bool,
    pub generator: Option<Gen>,
    /// Extra keys written as they are (`parent = "o_orderkey"`).
    pub extra: Vec<(String, String)>,
    pub nested: Nested,
    /// What the choice was made from (for the report).
    pub model: String,
    /// Hidden top-level fields this one's expression reads.
    pub siblings: Vec<FieldPlan>,
    /// `when` cases, each the keys of one case.
    pub whens: Vec<String>,
}

/// A hidden helper field.
fn helper(
    name: String,
    type_text: &str,
    generator: Gen,
    null_rate: f64,
    note: String,
) -> FieldPlan {
    FieldPlan {
        name,
        type_text: type_text.into(),
        notes: vec![note],
        null_rate,
        nullable: false,
        hidden: true,
        generator: Some(generator),
        extra: Vec::new(),
        nested: Nested::None,
        model: String::new(),
        siblings: Vec::new(),
        whens: Vec::new(),
    }
}

/// The KS distance of exact lengths from the uniform lengths of their
/// range (what `chars` draws).
fn lengths_vs_uniform(c: &Counts) -> f64 {
    let items: Vec<(u64, u64)> = c.iter().collect();
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        return 0.0;
    };
    let (lo, hi) = (first.0, last.0);
    let total = c.total() as f64;
    let width = (hi - lo + 1) as f64;
    let (mut acc, mut d) = (0.0, 0f64);
    for &(v, n) in &items {
        let before = acc / total;
        acc += n as f64;
        let model_before = (v - lo) as f64 / width;
        let model_at = (v - lo + 1) as f64 / width;
        d = d
            .max((before - model_before).abs())
            .max((acc / total - model_at).abs());
    }
    d
}

/// A plan's nested fields.
#[derive(Debug, Clone)]
pub(crate) enum Nested {
    None,
    Struct(Vec<FieldPlan>),
    List {
        length: Gen,
        item: Box<FieldPlan>,
    },
    Map {
        length: Gen,
        key: Box<FieldPlan>,
        value: Box<FieldPlan>,
    },
}

/// A TOML string.
pub(crate) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// An identifier quoted for SQL.
pub(crate) fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// A float as TOML writes it (always with a point or exponent).
pub(crate) fn float(v: f64) -> String {
    if !v.is_finite() {
        return "0.0".into();
    }
    let r = (v * 1e9).round() / 1e9;
    let s = if r != 0.0 && r.abs() < 1e-4 || r.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        format!("{r}")
    };
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// A timestamp type's zone as a spec may write it: an offset (`+05:30`),
/// `UTC`, or an IANA name; `None` for none or one that is neither.
pub(crate) fn zone(dt: &DataType) -> Option<&str> {
    let DataType::Timestamp(_, Some(z)) = dt else {
        return None;
    };
    let b = z.as_bytes();
    let offset = b.len() == 6
        && matches!(b[0], b'+' | b'-')
        && b[1..3].iter().all(u8::is_ascii_digit)
        && b[3] == b':'
        && b[4..6].iter().all(u8::is_ascii_digit);
    let named = !z.is_empty()
        && z.split('/').all(|p| {
            !p.is_empty()
                && p.starts_with(|c: char| c.is_ascii_alphabetic())
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_+-".contains(c))
        });
    (offset || named).then_some(z.as_ref())
}

/// Days of TOML's dates: 0000-01-01 to 9999-12-31.
const DAYS: (i64, i64) = (-719_528, 2_932_896);

/// Days since 1970-01-01 as `YYYY-MM-DD` (proleptic Gregorian).
pub(crate) fn date_text(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

/// A leaf value as the spec writes it for a field of type `dt`: `v` is
/// the profile's number (units, days, ticks).
pub(crate) fn literal(class: &Class, dt: &DataType, v: f64) -> String {
    match class {
        Class::Int => format!("{}", v.round() as i128),
        Class::Float => float(v),
        Class::Decimal { scale } => decimal_text(v.round() as i128, *scale),
        // Values past TOML's years (corrupt or synthetic files) are written
        // at its ends.
        Class::Date => date_text((v.round() as i64).clamp(DAYS.0, DAYS.1)),
        Class::Timestamp { unit } => {
            let per_s: i128 = match unit {
                TimeUnit::Second => 1,
                TimeUnit::Millisecond => 1_000,
                TimeUnit::Microsecond => 1_000_000,
                TimeUnit::Nanosecond => 1_000_000_000,
            };
            let t = (v.round() as i128).clamp(
                i128::from(DAYS.0) * 86_400 * per_s,
                (i128::from(DAYS.1) + 1) * 86_400 * per_s - 1,
            );
            let secs = t.div_euclid(per_s);
            let frac = t.rem_euclid(per_s);
            let days = secs.div_euclid(86_400);
            let sod = secs.rem_euclid(86_400);
            let mut s = format!(
                "{}T{:02}:{:02}:{:02}",
                date_text(days as i64),
                sod / 3600,
                sod / 60 % 60,
                sod % 60
            );
            if frac > 0 {
                let width = per_s.to_string().len() - 1;
                s.push_str(&format!(".{frac:0width$}"));
            }
            let tz = zone(dt).is_some();
            if tz {
                s.push('Z');
            }
            s
        }
        Class::Bool => (v != 0.0).to_string(),
        Class::Str | Class::Bytes => q(&v.to_string()),
    }
}

fn decimal_text(units: i128, scale: i8) -> String {
    if scale <= 0 {
        return format!("{}.0", units * 10i128.pow(u32::from(scale.unsigned_abs())));
    }
    let p = 10i128.pow(scale as u32);
    let sign = if units < 0 { "-" } else { "" };
    let a = units.unsigned_abs();
    let p = p as u128;
    format!("{sign}{}.{:0w$}", a / p, a % p, w = scale as usize)
}

pub(crate) fn category_literal(class: &Class, dt: &DataType, c: &Category) -> String {
    match (class, c) {
        (Class::Float, Category::Int(bits)) => float(f64::from_bits(*bits as u64)),
        (Class::Bool, Category::Int(v)) => (*v != 0).to_string(),
        (Class::Decimal { scale }, Category::Int(v)) => decimal_text(*v, *scale),
        (_, Category::Int(v)) => literal(class, dt, *v as f64),
        (_, Category::Bytes(b)) => q(&String::from_utf8_lossy(b)),
    }
}

/// The type a spec writes for `dt`, and a note when it differs.
pub(crate) fn type_text(dt: &DataType) -> Option<(String, Option<String>)> {
    use DataType as D;
    let plain = |s: &str| Some((s.to_string(), None));
    let noted = |s: &str, why: String| Some((s.to_string(), Some(why)));
    match dt {
        D::Boolean => plain("boolean"),
        D::Int8 => plain("int8"),
        D::Int16 => plain("int16"),
        D::Int32 => plain("int32"),
        D::Int64 => plain("int64"),
        D::UInt8 => plain("uint8"),
        D::UInt16 => plain("uint16"),
        D::UInt32 => plain("uint32"),
        D::UInt64 => plain("uint64"),
        D::Float16 => noted(
            "float32",
            "float16 written as float32 (specs have no float16)".into(),
        ),
        D::Float32 => plain("float32"),
        D::Float64 => plain("float64"),
        D::Decimal32(p, s) | D::Decimal64(p, s) | D::Decimal128(p, s) => {
            Some((format!("decimal({p}, {s})"), None))
        }
        D::Decimal256(p, s) => Some((format!("decimal256({p}, {s})"), None)),
        D::Date32 => plain("date32"),
        D::Date64 => noted(
            "timestamp(ms)",
            "date64 written as timestamp(ms) (specs have no date64)".into(),
        ),
        D::Timestamp(u, tz) => {
            let u = match u {
                TimeUnit::Second => "s",
                TimeUnit::Millisecond => "ms",
                TimeUnit::Microsecond => "us",
                TimeUnit::Nanosecond => "ns",
            };
            match (tz, zone(dt)) {
                (Some(_), Some(z)) => Some((format!("timestamp({u}, {z})"), None)),
                (Some(z), None) => Some((
                    format!("timestamp({u})"),
                    Some(format!(
                        "time zone {z:?} is not an offset or zone name: left out"
                    )),
                )),
                (None, _) => Some((format!("timestamp({u})"), None)),
            }
        }
        D::Time32(_) | D::Time64(_) | D::Duration(_) => noted(
            "int64",
            format!("{dt} written as int64 of its unit (its generators are those of integers)"),
        ),
        D::Utf8 => plain("utf8"),
        D::LargeUtf8 => plain("large_utf8"),
        D::Utf8View => noted(
            "utf8",
            "utf8_view written as utf8 (specs have no string views)".into(),
        ),
        D::Binary => plain("binary"),
        D::LargeBinary | D::BinaryView => noted("binary", format!("{dt} written as binary")),
        D::FixedSizeBinary(n) => Some((format!("fixed_size_binary({n})"), None)),
        D::Dictionary(_, v) if matches!(**v, D::Utf8 | D::LargeUtf8 | D::Utf8View) => {
            plain("dictionary")
        }
        D::Dictionary(_, v) => {
            let (t, _) = type_text(v)?;
            noted(&t, format!("dictionary of {v} written as plain {t}"))
        }
        D::Struct(_) => plain("struct"),
        D::List(_) => plain("list"),
        D::LargeList(_) => noted("list", "large_list written as list".into()),
        D::FixedSizeList(_, n) => noted(
            "list",
            format!("fixed_size_list of {n} written as a list of {n} items"),
        ),
        D::Map(..) => plain("map"),
        _ => None,
    }
}

/// Weights as the spec writes them: counts divided by their greatest
/// common divisor is exact but long; shares rounded to 6 digits.
pub(crate) fn weights(counts: &[u64]) -> String {
    let total: u64 = counts.iter().sum::<u64>().max(1);
    let w: Vec<String> = counts
        .iter()
        .map(|&c| {
            let x = c as f64 / total as f64;
            let r = (x * 1e6).round() / 1e6;
            float(if r == 0.0 && c > 0 { 1e-6 } else { r })
        })
        .collect();
    format!("[{}]", w.join(", "))
}

/// Weighted categories of a length or count (all kept: lengths are not
/// values of the data).
pub(crate) fn counts_gen(c: &Counts) -> Gen {
    let items: Vec<(u64, u64)> = c.iter().collect();
    if items.is_empty() {
        return Gen::new("constant", "0");
    }
    if items.len() == 1 {
        return Gen::new("constant", items[0].0.to_string());
    }
    if items.len() <= 256 {
        let values: Vec<String> = items.iter().map(|i| i.0.to_string()).collect();
        let counts: Vec<u64> = items.iter().map(|i| i.1).collect();
        return Gen::new(
            "weighted",
            format!(
                "{{ values = [{}], weights = {} }}",
                values.join(", "),
                weights(&counts)
            ),
        );
    }
    // Many lengths: the best of uniform and normal.
    let total = c.total() as f64;
    let mean = items.iter().map(|&(v, n)| v as f64 * n as f64).sum::<f64>() / total;
    let var = items
        .iter()
        .map(|&(v, n)| (v as f64 - mean).powi(2) * n as f64)
        .sum::<f64>()
        / total;
    let (min, max) = (items[0].0, items[items.len() - 1].0);
    let mut sorted = Vec::new();
    let step = (total / 20_000.0).max(1.0);
    let mut acc = 0.0;
    for &(v, n) in &items {
        acc += n as f64;
        while sorted.len() as f64 * step < acc {
            sorted.push(v as f64);
        }
    }
    let fits = fit::candidates(
        &sorted,
        (min as f64, max as f64),
        (mean, var.sqrt()),
        None,
        true,
    );
    match fits.first().map(|f| &f.0) {
        Some(Dist::Normal { mean, std, .. }) => Gen::new(
            "normal",
            format!(
                "{{ mean = {}, std = {}, min = {min}, max = {max} }}",
                float(*mean),
                float(*std)
            ),
        ),
        _ => Gen::new("uniform", format!("{{ min = {min}, max = {max} }}")),
    }
}

/// Knots of an empirical distribution: each the mean of `min_count`
/// neighbouring sampled values (no single value is written), non-decreasing.
fn knots(sorted: &[f64], min_count: u64) -> Vec<f64> {
    let n = sorted.len();
    let half = (min_count as usize).max(1) / 2;
    let mut out: Vec<f64> = (0..KNOTS)
        .map(|i| {
            let at = ((i as f64 / (KNOTS - 1) as f64) * (n - 1) as f64).round() as usize;
            let lo = at.saturating_sub(half);
            let hi = (lo + (min_count as usize).max(1)).min(n);
            let lo = hi.saturating_sub((min_count as usize).max(1));
            sorted[lo..hi].iter().sum::<f64>() / (hi - lo) as f64
        })
        .collect();
    for i in 1..out.len() {
        if out[i] < out[i - 1] {
            out[i] = out[i - 1];
        }
    }
    out
}

/// The threshold a fit's KS distance must pass: the 95% critical value
/// of the one-sample test at the sample's size, at least 0.005.
fn accept(n: usize) -> f64 {
    (1.358 / (n.max(1) as f64).sqrt()).max(0.005)
}

fn dist_gen(d: &Dist, class: &Class, dt: &DataType) -> Gen {
    let lit = |v: f64| literal(class, dt, v);
    let integral = class.is_integral();
    match d {
        Dist::Uniform { min, max } => Gen::new(
            "uniform",
            format!("{{ min = {}, max = {} }}", lit(*min), lit(*max)),
        ),
        Dist::Normal {
            mean,
            std,
            min,
            max,
        } => {
            let (mean, std) = scaled(class, *mean, *std);
            let (min, max) = scaled(class, *min, *max);
            Gen::new(
                "normal",
                format!(
                    "{{ mean = {}, std = {}, min = {}, max = {} }}",
                    float(mean),
                    float(std),
                    clamp_text(integral, min),
                    clamp_text(integral, max)
                ),
            )
        }
        Dist::LogNormal {
            mu,
            sigma,
            min,
            max,
        } => {
            let (min, max) = scaled(class, *min, *max);
            Gen::new(
                "lognormal",
                format!(
                    "{{ mu = {}, sigma = {}, min = {}, max = {} }}",
                    float(*mu - scale_ln(class)),
                    float(*sigma),
                    clamp_text(integral, min),
                    clamp_text(integral, max)
                ),
            )
        }
        Dist::Zipf { s, n, start } => Gen::new(
            "zipf",
            format!("{{ s = {}, n = {n}, start = {start} }}", float(*s)),
        ),
    }
}

fn clamp_text(_integral: bool, v: f64) -> String {
    float(v)
}

/// Decimal units to the values a spec's `normal` takes (the number, not
/// its units).
fn scaled(class: &Class, a: f64, b: f64) -> (f64, f64) {
    match class {
        Class::Decimal { scale } => {
            let p = 10f64.powi(i32::from(*scale));
            (a / p, b / p)
        }
        _ => (a, b),
    }
}

fn scale_ln(class: &Class) -> f64 {
    match class {
        Class::Decimal { scale } => f64::from(*scale) * std::f64::consts::LN_10,
        _ => 0.0,
    }
}

/// The categories a spec may copy: those occurring `min_count` times,
/// most frequent first, and the share of the values they hold.
/// The share of a column's values its written categories must hold for it
/// to be written (and compared) as categories.
pub(crate) const CATEGORICAL: f64 = 0.99;

pub(crate) fn kept(
    cats: &[(Category, u64)],
    count: u64,
    min_count: u64,
) -> (Vec<(Category, u64)>, f64) {
    let k: Vec<(Category, u64)> = cats.iter().filter(|c| c.1 >= min_count).cloned().collect();
    let share = k.iter().map(|c| c.1).sum::<u64>() as f64 / count.max(1) as f64;
    (k, share)
}

/// `weighted` over the categories a spec may write, when they hold at
/// least 99% of the values, with a note of the rare ones left out.
fn common_categories(
    leaf: &Leaf,
    cats: &[(Category, u64)],
    dt: &DataType,
    rules: &Rules,
    notes: &mut Vec<String>,
) -> Option<(Gen, String)> {
    let (k, share) = kept(cats, leaf.count, rules.min_count);
    if k.is_empty() || share < CATEGORICAL {
        return None;
    }
    if k.len() < cats.len() {
        notes.push(format!(
            "{} values seen fewer than {} times are not written ({:.2}% of values)",
            cats.len() - k.len(),
            rules.min_count,
            (1.0 - share) * 100.0
        ));
    }
    Some((
        weighted_gen(&leaf.class, dt, &k),
        format!("{} categories", k.len()),
    ))
}

fn weighted_gen(class: &Class, dt: &DataType, cats: &[(Category, u64)]) -> Gen {
    let values: Vec<String> = cats
        .iter()
        .map(|(c, _)| category_literal(class, dt, c))
        .collect();
    let counts: Vec<u64> = cats.iter().map(|c| c.1).collect();
    if values.len() == 1 {
        return Gen::new("constant", values[0].clone());
    }
    Gen::new(
        "weighted",
        format!(
            "{{ values = [{}], weights = {} }}",
            values.join(", "),
            weights(&counts)
        ),
    )
}

/// The generator of a leaf, what it was chosen from, and notes.
pub(crate) fn leaf_gen(
    leaf: &Leaf,
    dt: &DataType,
    rules: &Rules,
    top: Option<&str>,
) -> (Gen, String, Vec<String>, Vec<FieldPlan>) {
    let class = &leaf.class;
    let mut notes = Vec::new();
    if leaf.count == 0 {
        let g = match class {
            Class::Bool => Gen::new("probability", "0.5"),
            Class::Str | Class::Bytes => Gen::new("template", q("x")),
            _ => Gen::new("constant", literal(class, dt, 0.0)),
        };
        notes.push("no values: only nulls (or no rows) were read".into());
        return (g, "no values".into(), notes, Vec::new());
    }
    if leaf.nan > 0 {
        notes.push(format!("{} NaN values are not generated", leaf.nan));
    }
    match class {
        Class::Bool => {
            let p = leaf.trues as f64 / leaf.count as f64;
            return (
                Gen::new("probability", float((p * 1e6).round() / 1e6)),
                format!("probability {p:.4}"),
                notes,
                Vec::new(),
            );
        }
        Class::Str | Class::Bytes => return string_gen(leaf, dt, rules, notes, top),
        _ => {}
    }
    // A unique integer column: a key.
    if leaf.unique && *class == Class::Int && leaf.count >= 2 {
        let span = leaf.max_key - leaf.min_key;
        let step = (span / (leaf.total.max(leaf.count) as i128 - 1)).max(1);
        let g = Gen::new(
            "sequence",
            format!("{{ start = {}, step = {step} }}", leaf.min_key),
        );
        let how = if leaf.increasing {
            "increasing"
        } else {
            "in no order"
        };
        return (g, format!("unique, {how}: a sequence"), notes, Vec::new());
    }
    let cats = leaf.categories();
    if let Some(cats) = &cats
        && cats.len() <= SMALL
        && let Some((g, model)) = common_categories(leaf, cats, dt, rules, &mut notes)
    {
        return (g, model, notes, Vec::new());
    }
    let sorted = leaf.sorted_sample();
    let discrete = class.is_integral();
    // Lognormal moments from the sample (every value positive).
    let ln = (leaf.min > 0.0 && !sorted.is_empty()).then(|| {
        let n = sorted.len() as f64;
        let m = sorted.iter().map(|v| v.ln()).sum::<f64>() / n;
        let v = sorted.iter().map(|v| (v.ln() - m).powi(2)).sum::<f64>() / n;
        (m, v.sqrt())
    });
    // Bounds: the mean of the `min_count` least (greatest) sampled values
    // for high-cardinality columns (no single value is written).
    let (lo, hi) = bounds(&sorted, rules.min_count, discrete);
    let (lo, hi) = match type_range(dt) {
        Some((a, b)) => (lo.clamp(a, b), hi.clamp(a, b)),
        None => (lo, hi),
    };
    let fits: Vec<(Dist, f64)> = if matches!(class, Class::Date | Class::Timestamp { .. }) {
        // Dates and timestamps: uniform or empirical.
        fit::candidates(&sorted, (lo, hi), (0.0, 0.0), None, discrete)
            .into_iter()
            .filter(|f| matches!(f.0, Dist::Uniform { .. }))
            .collect()
    } else {
        fit::candidates(&sorted, (lo, hi), leaf.moments(), ln, discrete)
    };
    let summary: Vec<String> = fits
        .iter()
        .map(|(d, ks)| format!("{} KS {ks:.4}", d.name()))
        .collect();
    let weekdays = weekday_weights(leaf);
    if let Some(w) = &weekdays {
        notes.push(format!("weekday shape (Mon..Sun): {w}"));
    }
    if weekdays.is_none()
        && let Some((d, ks)) = fits.first()
        && *ks <= accept(sorted.len())
    {
        let model = format!("{} (KS {ks:.4}; {})", d.name(), summary.join(", "));
        return (dist_gen(d, class, dt), model, notes, Vec::new());
    }
    if let Some(cats) = &cats {
        let (k, share) = kept(cats, leaf.count, rules.min_count);
        if !k.is_empty() && share >= CATEGORICAL && weekdays.is_none() {
            let model = format!("{} categories ({})", k.len(), summary.join(", "));
            return (weighted_gen(class, dt, &k), model, notes, Vec::new());
        }
    }
    let ks = knots(&sorted, rules.min_count);
    let values: Vec<String> = ks.iter().map(|&v| literal(class, dt, v)).collect();
    let g = match &weekdays {
        Some(w) => Gen::new(
            "quantiles",
            format!("{{ values = [{}], weekdays = {w} }}", values.join(", ")),
        ),
        None => Gen::new("quantiles", format!("[{}]", values.join(", "))),
    };
    let model = if summary.is_empty() {
        "empirical quantiles".to_string()
    } else {
        format!(
            "empirical quantiles (no fit passed: {})",
            summary.join(", ")
        )
    };
    (g, model, notes, Vec::new())
}

/// The least and greatest value of an integer or decimal type (decimals
/// in units).
fn type_range(dt: &DataType) -> Option<(f64, f64)> {
    use DataType as D;
    Some(match dt {
        D::Int8 => (f64::from(i8::MIN), f64::from(i8::MAX)),
        D::Int16 => (f64::from(i16::MIN), f64::from(i16::MAX)),
        D::Int32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
        D::Int64 => (i64::MIN as f64, i64::MAX as f64),
        D::UInt8 => (0.0, f64::from(u8::MAX)),
        D::UInt16 => (0.0, f64::from(u16::MAX)),
        D::UInt32 => (0.0, f64::from(u32::MAX)),
        // f64 rounds u64::MAX up: the greatest f64 below it.
        D::UInt64 => (0.0, 18_446_744_073_709_549_568.0),
        D::Decimal32(p, _) | D::Decimal64(p, _) | D::Decimal128(p, _) | D::Decimal256(p, _) => {
            let m = 10f64.powi(i32::from(*p)) - 1.0;
            (-m, m)
        }
        D::Date32 => (DAYS.0 as f64, DAYS.1 as f64),
        _ => return None,
    })
}

fn bounds(sorted: &[f64], min_count: u64, discrete: bool) -> (f64, f64) {
    if sorted.is_empty() {
        return (0.0, 0.0);
    }
    let k = (min_count as usize).clamp(1, sorted.len());
    let n = sorted.len() as f64;
    let mut lo = sorted[..k].iter().sum::<f64>() / k as f64;
    let mut hi = sorted[sorted.len() - k..].iter().sum::<f64>() / k as f64;
    // The mean of the k least of n uniform draws lies (k + 1) / 2 gaps of
    // (hi - lo) / (n + 1) above the least value: widened by as much, the
    // range estimates the column's without writing either end.
    if k > 1 && sorted.len() > 2 * k {
        let gap = (hi - lo) * (k as f64 + 1.0) / (2.0 * (n + 1.0 - (k as f64 + 1.0)));
        // Never across zero: a column of non-negative values stays so.
        lo = if lo >= 0.0 {
            (lo - gap).max(0.0)
        } else {
            lo - gap
        };
        hi = if hi <= 0.0 {
            (hi + gap).min(0.0)
        } else {
            hi + gap
        };
    }
    if discrete {
        (lo.floor(), hi.ceil())
    } else {
        (lo, hi)
    }
}

/// Monday..Sunday weights of a date or timestamp column whose weekdays
/// are not even (a chi-square test at 0.1% and a weekday off by more than
/// 5% of its even share).
fn weekday_weights(leaf: &Leaf) -> Option<String> {
    leaf.class.per_day()?;
    let total: u64 = leaf.dow.iter().sum();
    if total < 700 {
        return None;
    }
    let e = total as f64 / 7.0;
    let chi: f64 = leaf.dow.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
    let off = leaf
        .dow
        .iter()
        .map(|&o| ((o as f64 - e) / e).abs())
        .fold(0.0, f64::max);
    if chi < 22.46 || off < 0.05 {
        return None;
    }
    Some(weights(&leaf.dow))
}

fn string_gen(
    leaf: &Leaf,
    dt: &DataType,
    rules: &Rules,
    mut notes: Vec<String>,
    top: Option<&str>,
) -> (Gen, String, Vec<String>, Vec<FieldPlan>) {
    let class = &leaf.class;
    let min_len = leaf.lengths.iter().next().map_or(0, |l| l.0);
    let max_len = leaf.lengths.iter().last().map_or(0, |l| l.0);
    let cats = leaf.categories();
    let mut top_values = None;
    if let Some(cats) = &cats
        && !leaf.unique
    {
        if let Some((g, model)) = common_categories(leaf, cats, dt, rules, &mut notes) {
            return (g, model, notes, Vec::new());
        }
        let (k, share) = kept(cats, leaf.count, rules.min_count);
        if !k.is_empty() && share >= 0.2 {
            top_values = Some((k, share));
        }
    }
    if matches!(dt, DataType::FixedSizeBinary(16)) || *class == Class::Bytes {
        return (
            Gen::new("uuid", "true"),
            "bytes: random".into(),
            notes,
            Vec::new(),
        );
    }
    let texts: Vec<Box<str>> = leaf.texts.items.clone();
    let p = text::pattern(&texts, min_len, max_len, leaf.unique, rules.min_count);
    let (g, model) = match p {
        Pattern::Uuid => (Gen::new("uuid", "true"), "UUIDs".to_string()),
        Pattern::Template { template, share } => (
            Gen::new("template", q(&template)),
            format!(
                "template of character classes ({:.1}% of sampled values have its shape)",
                share * 100.0
            ),
        ),
        Pattern::Words {
            words,
            min,
            max,
            distinct,
            coverage,
        } => {
            let list: Vec<String> = words.iter().map(|w| q(w)).collect();
            (
                Gen::new(
                    "words",
                    format!(
                        "{{ values = [{}], min = {min}, max = {max}{} }}",
                        list.join(", "),
                        if distinct { ", distinct = true" } else { "" }
                    ),
                ),
                format!(
                    "{} words, {min} to {max} per value ({:.1}% of words kept)",
                    words.len(),
                    coverage * 100.0
                ),
            )
        }
        Pattern::Chars { alphabet, min, max } => (
            Gen::new(
                "chars",
                format!(
                    "{{ alphabet = {}, min = {min}, max = {max} }}",
                    q(&alphabet)
                ),
            ),
            format!(
                "{} characters, {min} to {max} per value",
                alphabet.chars().count()
            ),
        ),
    };
    if leaf.distinct() > rules.max_categories as u64 || cats.is_none() {
        notes.push(format!(
            "about {} distinct values: only the pattern is kept",
            leaf.distinct()
        ));
    }
    let mut siblings = Vec::new();
    let (mut g, mut model) = (g, model);
    // Characters whose lengths are not even over their range: a text of the
    // longest length cut to a drawn length.
    if let Some(name) = top
        && g.key == "chars"
        && lengths_vs_uniform(&leaf.lengths) > 0.02
        && leaf.lengths.iter().nth(1).is_some()
    {
        let (text, len) = (format!("{name}__text"), format!("{name}__len"));
        let alphabet = g.value.clone();
        let full = alphabet.replacen(&format!("min = {min_len}"), &format!("min = {max_len}"), 1);
        siblings.push(helper(
            text.clone(),
            "utf8",
            Gen::new("chars", full),
            0.0,
            format!("{name}'s characters"),
        ));
        siblings.push(helper(
            len.clone(),
            "int64",
            counts_gen(&leaf.lengths),
            0.0,
            format!("{name}'s lengths"),
        ));
        g = Gen::new(
            "expr",
            q(&format!("substr({}, 1, {})", ident(&text), ident(&len))),
        );
        model = format!("{model}, cut to the observed length distribution");
    }
    // Frequent values, then a generated tail.
    if let (Some(name), Some((k, share))) = (top, top_values) {
        let (head, tail) = (format!("{name}__top"), format!("{name}__tail"));
        siblings.push(helper(
            head.clone(),
            "utf8",
            weighted_gen(class, dt, &k),
            1.0 - share,
            format!("{name}'s values seen at least {} times", rules.min_count),
        ));
        siblings.push(helper(
            tail.clone(),
            "utf8",
            g,
            0.0,
            format!("{name}'s other values: their pattern"),
        ));
        notes.push(format!(
            "{} values seen at least {} times hold {:.1}% of values; the rest are generated from their pattern",
            k.len(),
            rules.min_count,
            share * 100.0
        ));
        g = Gen::new(
            "expr",
            q(&format!("coalesce({}, {})", ident(&head), ident(&tail))),
        );
        model = format!("top {} values, then {model}", k.len());
    }
    (g, model, notes, siblings)
}

/// The plan of a profiled field (its nested fields too).
pub(crate) fn field_plan(node: &Node, rules: &Rules, top: bool) -> Option<FieldPlan> {
    let field: &Field = &node.field;
    let (type_text, type_note) = type_text(field.data_type())?;
    // Specs name fields without dots, and with some name.
    let name = match field.name().replace('.', "_") {
        n if n.is_empty() => "unnamed".to_string(),
        n => n,
    };
    let mut plan = FieldPlan {
        name,
        type_text,
        notes: type_note
            .into_iter()
            .chain(
                (field.name().is_empty() || field.name().contains('.'))
                    .then(|| format!("named {:?} in the input", field.name())),
            )
            .collect(),
        null_rate: node.null_rate(),
        nullable: field.is_nullable(),
        hidden: false,
        generator: None,
        extra: Vec::new(),
        nested: Nested::None,
        model: String::new(),
        siblings: Vec::new(),
        whens: Vec::new(),
    };
    match &node.shape {
        Shape::Unsupported => return None,
        Shape::Leaf(l) => {
            let (g, model, notes, siblings) = leaf_gen(
                l,
                field.data_type(),
                rules,
                top.then_some(plan.name.as_str()),
            );
            if plan.type_text == "dictionary" && !matches!(g.key, "weighted" | "zipf" | "constant")
            {
                plan.type_text = "utf8".into();
                plan.notes
                    .push("a dictionary column without few categories written as utf8".into());
            }
            plan.siblings = siblings;
            plan.generator = Some(g);
            plan.model = model;
            plan.notes.extend(notes);
        }
        Shape::Struct(children) => {
            let mut fields = Vec::new();
            for c in children {
                match field_plan(c, rules, false) {
                    Some(p) => fields.push(p),
                    None => plan.notes.push(format!(
                        "field {} ({}) left out: specs cannot hold its type",
                        c.field.name(),
                        c.field.data_type()
                    )),
                }
            }
            if fields.is_empty() {
                return None;
            }
            plan.model = format!("struct of {}", fields.len());
            plan.nested = Nested::Struct(fields);
        }
        Shape::List { lengths, item } => {
            let item = field_plan(item, rules, false)?;
            let length = counts_gen(lengths);
            plan.model = format!("list, lengths {}", length.inline());
            plan.nested = Nested::List {
                length,
                item: Box::new(item),
            };
        }
        Shape::Map {
            sizes,
            key: key_node,
            value,
        } => {
            let mut key = field_plan(key_node, rules, false)?;
            // Keys are distinct within a map: categories enough for the
            // largest map, or numbered keys.
            let most = sizes.iter().last().map_or(0, |s| s.0);
            let enough = key
                .generator
                .as_ref()
                .is_some_and(|g| matches!(g.key, "weighted" | "constant"))
                && key_node.leaf().and_then(Leaf::categories).is_some_and(|c| {
                    c.iter().filter(|x| x.1 >= rules.min_count).count() as u64 >= most.max(1)
                });
            if !enough {
                let numbered = key_node.leaf().is_some_and(|l| l.class == Class::Int);
                key.generator = Some(if numbered {
                    Gen::new("sequence", "{ start = 0 }")
                } else {
                    let names: Vec<String> =
                        (1..=most.max(1)).map(|i| q(&format!("key{i}"))).collect();
                    Gen::new("weighted", format!("{{ values = [{}] }}", names.join(", ")))
                });
                key.type_text = if numbered {
                    "int64".into()
                } else {
                    "utf8".into()
                };
                key.notes.push(format!(
                    "keys numbered: their values are not {} distinct categories (the largest map)",
                    most
                ));
                key.model = "numbered keys".into();
            }
            let value = field_plan(value, rules, false)?;
            let length = counts_gen(sizes);
            plan.model = format!("map, sizes {}", length.inline());
            plan.nested = Nested::Map {
                length,
                key: Box::new(key),
                value: Box::new(value),
            };
        }
    }
    Some(plan)
}

/// Writes a field and its nested fields under the array-of-tables
/// header `path` (`tables.fields`, `tables.fields.fields`, ...), or as
/// the table `path` for a list's item and a map's key and value
/// (`single`).
pub(crate) fn write_field(out: &mut String, path: &str, f: &FieldPlan, single: bool) {
    out.push('\n');
    for n in &f.notes {
        for line in n.lines() {
            out.push_str(&format!("# {line}\n"));
        }
    }
    if single {
        out.push_str(&format!("[{path}]\n"));
    } else {
        out.push_str(&format!("[[{path}]]\nname = {}\n", q(&f.name)));
    }
    out.push_str(&format!("type = {}\n", q(&f.type_text)));
    if f.null_rate > 0.0 {
        let r = (f.null_rate * 1e6).round() / 1e6;
        out.push_str(&format!(
            "null_rate = {}\n",
            float(if r == 0.0 { 1e-6 } else { r })
        ));
    } else if f.nullable && !single {
        out.push_str("nullable = true\n");
    }
    if f.hidden {
        out.push_str("hidden = true\n");
    }
    for (k, v) in &f.extra {
        out.push_str(&format!("{k} = {v}\n"));
    }
    if let Some(g) = &f.generator {
        out.push_str(&format!("{} = {}\n", g.key, g.value));
    }
    for w in &f.whens {
        out.push_str(&format!("\n[[{path}.when]]\n{w}"));
    }
    match &f.nested {
        Nested::None => {}
        Nested::Struct(fields) => {
            for c in fields {
                write_field(out, &format!("{path}.fields"), c, false);
            }
        }
        Nested::List { length, item } => {
            out.push_str(&format!("length = {}\n", length.inline()));
            write_field(out, &format!("{path}.item"), item, true);
        }
        Nested::Map { length, key, value } => {
            out.push_str(&format!("length = {}\n", length.inline()));
            write_field(out, &format!("{path}.key"), key, true);
            write_field(out, &format!("{path}.value"), value, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_decimals_read_as_specs_write_them() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(8035), "1992-01-01");
        assert_eq!(date_text(-1), "1969-12-31");
        assert_eq!(decimal_text(-99999, 2), "-999.99");
        assert_eq!(decimal_text(5, 2), "0.05");
        let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into()));
        assert_eq!(
            literal(
                &Class::Timestamp {
                    unit: TimeUnit::Microsecond
                },
                &ts,
                1_500_000.0
            ),
            "1970-01-01T00:00:01.500000Z"
        );
        assert_eq!(float(3.0), "3.0");
        assert_eq!(float(0.1 + 0.2), "0.3");
    }

    #[test]
    fn knots_are_means_of_neighbours_and_never_decrease() {
        let s: Vec<f64> = (0..1000).map(f64::from).collect();
        let k = knots(&s, 10);
        assert_eq!(k.len(), KNOTS);
        assert_eq!(k[0], 4.5);
        assert_eq!(k[KNOTS - 1], 994.5);
        assert!(k.windows(2).all(|w| w[0] <= w[1]));
    }
}
