//! A table's profiled columns as [`ColumnReport`]s: statistics,
//! histograms, top values, lengths and rank-frequency points, with what
//! the spec's field gives beside each where a spec is given.

use std::collections::HashMap;

use arrow_schema::DataType;
use strata_gen::{Field, Generator, Kind, Pick, Value};
use strata_infer::{ColumnSummary, LeafSummary, Observed, ShapeSummary, ValueClass};

use super::expect::{self, Dist};
use crate::model::{
    Bin, ColumnKind, ColumnReport, Histogram, NullLevel, RankFrequency, Stats, TopValue,
};

/// Values listed in a column's `top`.
pub(crate) const TOP: usize = 20;
/// Bins of a histogram of a wide range.
const BINS: usize = 40;
/// Integer ranges this wide or narrower get a bin per value.
const NARROW: f64 = 60.0;
/// Longest value label, in characters.
const LABEL_CHARS: usize = 60;
/// Rank-frequency points kept one per rank up to this many ranks; beyond,
/// log-spaced.
const ALL_RANKS: usize = 100;

/// What the spec and the scan give the columns of one table.
pub(crate) struct Context<'a> {
    /// The expected null share by spec path (from the verifier's checks).
    pub nulls: &'a HashMap<String, f64>,
    /// The table's rows.
    pub rows: u64,
    /// Whether the table has rows of its own (a child table's rows are
    /// numbered with gaps, so its sequences are not contiguous).
    pub own_rows: bool,
    /// Rows of each table read, for the Zipf laws of references.
    pub table_rows: &'a HashMap<String, u64>,
}

/// Every column and nested field of `columns`, parents first, each with
/// its spec field where `fields` has one of its name.
pub(crate) fn columns(
    columns: &[ColumnSummary],
    fields: Option<&[Field]>,
    cx: &Context<'_>,
) -> Vec<ColumnReport> {
    let mut out = Vec::new();
    for c in columns {
        let f = fields.and_then(|fs| fs.iter().find(|f| f.name == *c.field.name()));
        walk(c.field.name(), c, f, &mut Vec::new(), cx, true, &mut out);
    }
    out
}

fn walk(
    path: &str,
    c: &ColumnSummary,
    field: Option<&Field>,
    levels: &mut Vec<NullLevel>,
    cx: &Context<'_>,
    top: bool,
    out: &mut Vec<ColumnReport>,
) {
    levels.push(NullLevel {
        path: path.to_string(),
        slots: c.slots,
        nulls: c.nulls,
        expected: field.and_then(|f| cx.nulls.get(&f.path).copied()),
    });
    let dt = c.field.data_type();
    let mut r = ColumnReport {
        name: path.to_string(),
        data_type: dt.to_string(),
        kind: kind_of(dt),
        slots: c.slots,
        nulls: levels.clone(),
        stats: None,
        histogram: None,
        top: Vec::new(),
        other: 0,
        top_exact: true,
        lengths: None,
        rank_frequency: None,
    };
    let generator = field.and_then(|f| match &f.kind {
        // A generator that `when` cases replace somewhere is no one
        // distribution.
        Kind::Scalar { generator, .. } if f.when.iter().all(|w| w.generator.is_none()) => {
            Some(generator)
        }
        _ => None,
    });
    match &c.shape {
        ShapeSummary::Leaf(l) => {
            leaf(&mut r, l, dt, generator, cx, top);
            out.push(r);
        }
        ShapeSummary::Struct(children) => {
            out.push(r);
            let specs = match field.map(|f| &f.kind) {
                Some(Kind::Struct(fs)) => Some(fs),
                _ => None,
            };
            for ch in children {
                let f = specs.and_then(|fs| fs.iter().find(|f| f.name == *ch.field.name()));
                walk(
                    &format!("{path}.{}", ch.field.name()),
                    ch,
                    f,
                    levels,
                    cx,
                    false,
                    out,
                );
            }
        }
        ShapeSummary::List { lengths, item } => {
            let (item_spec, length, empty_as_null) = match field.map(|f| &f.kind) {
                Some(Kind::List {
                    item,
                    length,
                    empty_as_null,
                }) => (Some(&**item), Some(length), *empty_as_null),
                _ => (None, None, false),
            };
            r.lengths = Some(length_histogram(lengths, length, empty_as_null));
            out.push(r);
            walk(
                &format!("{path}[]"),
                item,
                item_spec,
                levels,
                cx,
                false,
                out,
            );
        }
        ShapeSummary::Map { sizes, key, value } => {
            let (k, v, length) = match field.map(|f| &f.kind) {
                Some(Kind::Map { key, value, length }) => {
                    (Some(&**key), Some(&**value), Some(length))
                }
                _ => (None, None, None),
            };
            r.lengths = Some(length_histogram(sizes, length, false));
            out.push(r);
            walk(
                &format!("{path}.{}", key.field.name()),
                key,
                k,
                levels,
                cx,
                false,
                out,
            );
            walk(
                &format!("{path}.{}", value.field.name()),
                value,
                v,
                levels,
                cx,
                false,
                out,
            );
        }
        ShapeSummary::Unsupported => out.push(r),
    }
    levels.pop();
}

fn kind_of(dt: &DataType) -> ColumnKind {
    use DataType as D;
    match dt {
        D::Boolean => ColumnKind::Boolean,
        D::Date32 | D::Date64 | D::Timestamp(..) => ColumnKind::Time,
        D::Utf8
        | D::LargeUtf8
        | D::Utf8View
        | D::Binary
        | D::LargeBinary
        | D::BinaryView
        | D::FixedSizeBinary(_) => ColumnKind::Text,
        D::List(_)
        | D::LargeList(_)
        | D::FixedSizeList(..)
        | D::ListView(_)
        | D::LargeListView(_)
        | D::Map(..) => ColumnKind::List,
        D::Struct(_) => ColumnKind::Struct,
        D::Dictionary(_, v) => kind_of(v),
        _ => ColumnKind::Number,
    }
}

/// The type labels are written for (decimals of any width as 128-bit).
fn label_type(dt: &DataType) -> DataType {
    match dt {
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => DataType::Decimal128(*p, *s),
        DataType::Dictionary(_, v) => label_type(v),
        d => d.clone(),
    }
}

/// Units of one value of `class` (10^scale for decimals, else 1).
fn unit(class: ValueClass) -> f64 {
    match class {
        ValueClass::Decimal { scale } => 10f64.powi(i32::from(scale)),
        _ => 1.0,
    }
}

fn integral(class: ValueClass) -> bool {
    matches!(
        class,
        ValueClass::Int
            | ValueClass::Decimal { .. }
            | ValueClass::Date
            | ValueClass::Timestamp { .. }
    )
}

/// A number of the profile (units) as the column writes it.
pub(crate) fn number_label(x: f64, class: ValueClass, dt: &DataType) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if integral(class) && x.abs() < 1.7e38 {
        return Value::Int(x.round() as i128)
            .display_as(&label_type(dt))
            .to_string();
    }
    format!("{}", (x * 1e6).round() / 1e6)
}

/// A value as text, at most [`LABEL_CHARS`] characters.
pub(crate) fn value_label(v: &Observed, dt: &DataType) -> String {
    let s = match v {
        Observed::Bool(b) => b.to_string(),
        Observed::Int(i) => Value::Int(*i).display_as(&label_type(dt)).to_string(),
        Observed::Float(f) => f.to_string(),
        Observed::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
    };
    if s.chars().count() > LABEL_CHARS {
        let mut t: String = s.chars().take(LABEL_CHARS - 1).collect();
        t.push('…');
        t
    } else {
        s
    }
}

fn as_number(v: &Observed) -> Option<f64> {
    match v {
        Observed::Int(i) => Some(*i as f64),
        Observed::Float(f) => Some(*f),
        Observed::Bool(b) => Some(f64::from(u8::from(*b))),
        Observed::Bytes(_) => None,
    }
}

fn leaf(
    r: &mut ColumnReport,
    l: &LeafSummary,
    dt: &DataType,
    generator: Option<&Generator>,
    cx: &Context<'_>,
    top: bool,
) {
    let u = unit(l.class);
    let numeric = l.class.is_numeric();
    if numeric && l.count > 0 {
        let (min, max) = match l.range {
            Some((a, b)) => (a as f64, b as f64),
            None => (l.min, l.max),
        };
        r.stats = Some(Stats {
            count: l.count,
            min: min / u,
            max: max / u,
            mean: l.mean / u,
            std: l.std / u,
            distinct: l.distinct,
            distinct_exact: l.distinct_exact,
            min_label: number_label(min, l.class, dt),
            max_label: number_label(max, l.class, dt),
        });
        // Sequences of contiguous rows only: a top-level field of a table
        // with rows of its own.
        let rows = if top && cx.own_rows { cx.rows } else { 0 };
        let dist = generator.and_then(|g| expect::distribution(g, dt, rows));
        r.histogram = histogram(l, min, max, dist.as_ref(), dt);
    } else if l.class == ValueClass::Bool && l.count > 0 {
        let mean = l.trues as f64 / l.count as f64;
        r.stats = Some(Stats {
            count: l.count,
            min: if l.trues < l.count { 0.0 } else { 1.0 },
            max: if l.trues > 0 { 1.0 } else { 0.0 },
            mean,
            std: (mean * (1.0 - mean)).sqrt(),
            distinct: l.distinct,
            distinct_exact: true,
            min_label: (l.trues == l.count).to_string(),
            max_label: (l.trues > 0).to_string(),
        });
    } else if l.count > 0 {
        // Text: the statistics of its byte lengths.
        let n: u64 = l.lengths.iter().map(|x| x.1).sum();
        let sum: f64 = l.lengths.iter().map(|&(k, c)| k as f64 * c as f64).sum();
        let sq: f64 = l
            .lengths
            .iter()
            .map(|&(k, c)| (k as f64).powi(2) * c as f64)
            .sum();
        let mean = sum / n.max(1) as f64;
        let (lo, hi) = (
            l.lengths.first().map_or(0, |x| x.0),
            l.lengths.last().map_or(0, |x| x.0),
        );
        r.stats = Some(Stats {
            count: l.count,
            min: lo as f64,
            max: hi as f64,
            mean,
            std: (sq / n.max(1) as f64 - mean * mean).max(0.0).sqrt(),
            distinct: l.distinct,
            distinct_exact: l.distinct_exact,
            min_label: format!("{lo} bytes"),
            max_label: format!("{hi} bytes"),
        });
        r.lengths = Some(counts_histogram(&l.lengths, None));
    }
    // Top values.
    let shares = generator.and_then(|g| expect::category_shares(g, dt));
    let share_of = |label: &str| {
        shares
            .as_ref()
            .map(|s| s.iter().find(|(l, _)| l == label).map_or(0.0, |x| x.1))
    };
    let (items, exact): (Vec<(Observed, u64)>, bool) = match (&l.counts, &l.heavy) {
        (Some(c), _) => (c.clone(), true),
        // Only values the sketch knows to be more frequent than its error.
        (None, Some(h)) => (
            h.items.iter().filter(|x| x.1 > h.error).cloned().collect(),
            false,
        ),
        (None, None) => (Vec::new(), l.unique),
    };
    r.top_exact = exact;
    let mut listed = 0u64;
    for (v, c) in items.iter().take(TOP) {
        let value = value_label(v, dt);
        listed += c;
        r.top.push(TopValue {
            expected_share: share_of(&value),
            value,
            count: *c,
        });
    }
    r.other = l.count.saturating_sub(listed);
    // Rank frequency.
    if l.class != ValueClass::Bool && !l.unique && l.distinct >= 3 {
        let mut counts: Vec<u64> = match &l.heavy {
            Some(h) if l.counts.is_none() => h
                .items
                .iter()
                .map(|x| x.1)
                .filter(|&c| c > h.error)
                .collect(),
            _ => items.iter().map(|x| x.1).collect(),
        };
        counts.sort_unstable_by(|a, b| b.cmp(a));
        if counts.len() >= 3 {
            let expected = generator.and_then(|g| match g {
                Generator::Zipf { s, n, .. } => Some((*s, *n)),
                Generator::Reference(rf) => match rf.pick {
                    Pick::Zipf { s } if top && rf.via.is_none() => {
                        cx.table_rows.get(&rf.table).map(|&n| (s, n))
                    }
                    _ => None,
                },
                _ => None,
            });
            r.rank_frequency = Some(rank_frequency(&counts, l.distinct, expected));
        }
    }
}

/// The ranks kept of `n`: every one up to [`ALL_RANKS`], else 1 to 10
/// and log-spaced beyond, the last rank included.
fn ranks(n: usize) -> Vec<usize> {
    if n <= ALL_RANKS {
        return (1..=n).collect();
    }
    let mut out: Vec<usize> = (1..=10).collect();
    let steps = 80.0;
    let ratio = (n as f64 / 10.0).powf(1.0 / steps);
    let mut x = 10.0;
    while (x as usize) < n {
        x *= ratio;
        let r = (x.round() as usize).min(n);
        if r > *out.last().unwrap_or(&0) {
            out.push(r);
        }
    }
    out
}

/// Counts by rank (`counts` sorted, most frequent first) and the Zipf
/// exponent least squares fits to their logarithms (over the points with
/// at least 5 values, where the order of ranks is not noise).
pub(crate) fn rank_frequency(
    counts: &[u64],
    distinct: u64,
    expected: Option<(f64, u64)>,
) -> RankFrequency {
    let points: Vec<(u64, u64)> = ranks(counts.len())
        .into_iter()
        .map(|r| (r as u64, counts[r - 1]))
        .collect();
    let fit: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.1 >= 5)
        .map(|&(r, c)| ((r as f64).ln(), (c as f64).ln()))
        .collect();
    let fitted_s = (fit.len() >= 3)
        .then(|| {
            let n = fit.len() as f64;
            let mx = fit.iter().map(|p| p.0).sum::<f64>() / n;
            let my = fit.iter().map(|p| p.1).sum::<f64>() / n;
            let sxy: f64 = fit.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
            let sxx: f64 = fit.iter().map(|p| (p.0 - mx).powi(2)).sum();
            -sxy / sxx
        })
        .filter(|s| s.is_finite());
    RankFrequency {
        points,
        distinct,
        fitted_s,
        expected,
    }
}

/// Bins over `[min, max]` (units): a bin per integer of a narrow integral
/// range, else [`BINS`] equal ones.
fn bins(min: f64, max: f64, integral: bool) -> Vec<(f64, f64)> {
    if integral {
        let span = max - min + 1.0;
        let width = if span <= NARROW {
            1.0
        } else {
            (span / BINS as f64).ceil()
        };
        let n = (span / width).ceil().max(1.0) as usize;
        (0..n)
            .map(|i| {
                let lo = min + width * i as f64;
                (lo, (lo + width).min(max + 1.0))
            })
            .collect()
    } else if max > min {
        let width = (max - min) / BINS as f64;
        (0..BINS)
            .map(|i| {
                let lo = min + width * i as f64;
                (lo, if i + 1 == BINS { max } else { lo + width })
            })
            .collect()
    } else {
        vec![(min, max)]
    }
}

fn histogram(
    l: &LeafSummary,
    min: f64,
    max: f64,
    dist: Option<&Dist>,
    dt: &DataType,
) -> Option<Histogram> {
    let integral = integral(l.class);
    // Infinities are counted but not drawn.
    let (lo, hi) = if min.is_finite() && max.is_finite() {
        (min, max)
    } else {
        let finite = |x: &f64| x.is_finite();
        let from_counts = l
            .counts
            .iter()
            .flatten()
            .filter_map(|(v, _)| as_number(v))
            .chain(l.sample.iter().copied())
            .filter(finite);
        let (a, b) = from_counts.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        if a.is_nan() || b.is_nan() || a > b {
            return None;
        }
        (a, b)
    };
    // A few values counted exactly: a bin per value, whatever the gaps
    // between them (quantities in whole units of a decimal, say).
    let mut values: Vec<f64> = l
        .counts
        .iter()
        .flatten()
        .filter_map(|(v, _)| as_number(v))
        .filter(|x| x.is_finite())
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let wide = !integral || hi - lo + 1.0 > NARROW;
    // Only where values repeat (on average twice or more): a few rows of
    // a continuous distribution are few distinct values too, and are
    // binned evenly.
    let counted: u64 = l.counts.iter().flatten().map(|(_, n)| *n).sum();
    let repeat = values.len() as u64 * 2 <= counted;
    let edges = if l.counts.is_some()
        && wide
        && repeat
        && !values.is_empty()
        && values.len() <= NARROW as usize
    {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| match values.get(i + 1) {
                Some(&next) => (v, next),
                None if integral => (v, v + 1.0),
                None => (v, v),
            })
            .collect()
    } else {
        bins(lo, hi, integral)
    };
    let index = |x: f64| -> Option<usize> {
        if !x.is_finite() || x < lo || x > hi {
            return None;
        }
        let i = edges.partition_point(|e| e.0 <= x);
        Some(i.saturating_sub(1).min(edges.len() - 1))
    };
    let mut counts = vec![0u64; edges.len()];
    // A reservoir that holds every value is the whole column.
    let sampled = l.counts.is_none() && (l.sample.len() as u64) < l.count;
    if let Some(c) = &l.counts {
        for (v, n) in c {
            if let Some(i) = as_number(v).and_then(index) {
                counts[i] += n;
            }
        }
    } else {
        if l.sample.is_empty() {
            return None;
        }
        let mut raw = vec![0u64; edges.len()];
        for &x in &l.sample {
            if let Some(i) = index(x) {
                raw[i] += 1;
            }
        }
        let scale = l.count as f64 / l.sample.len() as f64;
        for (c, r) in counts.iter_mut().zip(raw) {
            *c = (r as f64 * scale).round() as u64;
        }
    }
    let u = unit(l.class);
    let last = edges.len() - 1;
    let expected = dist.map(|d| {
        edges
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| {
                let closed = i == last;
                let (a, b) = if integral && closed {
                    (a, b - 1.0)
                } else {
                    (a, b)
                };
                l.count as f64 * d.share(a, b, closed)
            })
            .collect()
    });
    Some(Histogram {
        bins: edges
            .iter()
            .zip(counts)
            .map(|(&(a, b), count)| Bin {
                lo: a / u,
                hi: b / u,
                label: number_label(a, l.class, dt),
                count,
            })
            .collect(),
        expected,
        sampled,
    })
}

/// A histogram of exact counts of small integers (lengths), with the
/// spec's shares when given.
fn counts_histogram(counts: &[(u64, u64)], pmf: Option<&dyn Fn(u64, u64) -> f64>) -> Histogram {
    let total: u64 = counts.iter().map(|c| c.1).sum();
    let (lo, hi) = match (counts.first(), counts.last()) {
        (Some(a), Some(b)) => (a.0 as f64, b.0 as f64),
        _ => (0.0, 0.0),
    };
    let edges = bins(lo, hi, true);
    let mut out = vec![0u64; edges.len()];
    for &(v, c) in counts {
        let i = edges.partition_point(|e| e.0 <= v as f64).saturating_sub(1);
        if let Some(x) = out.get_mut(i) {
            *x += c;
        }
    }
    Histogram {
        expected: pmf.map(|p| {
            edges
                .iter()
                .map(|&(a, b)| total as f64 * p(a as u64, b as u64))
                .collect()
        }),
        bins: edges
            .iter()
            .zip(out)
            .map(|(&(a, b), count)| Bin {
                lo: a,
                hi: b,
                label: if b - a > 1.0 {
                    format!("{a}-{}", b - 1.0)
                } else {
                    format!("{a}")
                },
                count,
            })
            .collect(),
        sampled: false,
    }
}

/// Lengths of lists or maps, with the spec's length distribution (given a
/// non-zero length where empty lists are null).
fn length_histogram(
    lengths: &[(u64, u64)],
    generator: Option<&Generator>,
    empty_as_null: bool,
) -> Histogram {
    let pmf = generator.and_then(strata_gen::expected::length_pmf);
    let share = pmf.map(|p| {
        let zero = if empty_as_null { p.probability(0) } else { 0.0 };
        move |a: u64, b: u64| {
            if zero >= 1.0 {
                return 0.0;
            }
            (a..b)
                .filter(|&l| !(empty_as_null && l == 0))
                .map(|l| p.probability(l))
                .sum::<f64>()
                / (1.0 - zero)
        }
    });
    match &share {
        Some(f) => counts_histogram(lengths, Some(f)),
        None => counts_histogram(lengths, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_log_spaced_past_a_hundred() {
        assert_eq!(ranks(5), vec![1, 2, 3, 4, 5]);
        let r = ranks(100_000);
        assert!(r.len() < 100, "{}", r.len());
        assert_eq!(r[..10], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(*r.last().unwrap(), 100_000);
        assert!(r.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_zipf_law_fits_its_exponent() {
        let counts: Vec<u64> = (1..=1000u64)
            .map(|k| (1e7 * (k as f64).powf(-1.3)).round() as u64)
            .collect();
        let rf = rank_frequency(&counts, 1000, Some((1.3, 1000)));
        assert!(
            (rf.fitted_s.unwrap() - 1.3).abs() < 0.01,
            "{:?}",
            rf.fitted_s
        );
    }

    #[test]
    fn narrow_integer_ranges_get_a_bin_per_value() {
        assert_eq!(
            bins(1.0, 3.0, true),
            vec![(1.0, 2.0), (2.0, 3.0), (3.0, 4.0)]
        );
        let wide = bins(0.0, 999.0, true);
        assert_eq!(wide.len(), 40);
        assert_eq!(wide.last().unwrap().1, 1000.0);
    }
}
