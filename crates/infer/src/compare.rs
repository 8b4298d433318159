//! How close a generated dataset is to its original: per column the KS
//! distance (numbers, dates, timestamps, string and list lengths), the
//! total variation distance (categories, booleans), the null rate
//! difference at each nesting level, and the integrity of the original's
//! foreign keys in the generated data.
//!
//! Each distance is judged against its bound or, where the tables are so
//! small that two samples of one distribution differ by more, against
//! that sampling noise (the 95% critical value of the two-sample KS test;
//! twice the expected total variation of two multinomial samples; two
//! standard errors of a difference of proportions), which the report
//! shows beside it.

use std::collections::HashMap;

use serde::Serialize;

use crate::fit::{ks_critical, ks_two};
use crate::profile::{Category, Class, Counts, Leaf, Node, Shape, TableProfile};
use crate::{Error, Options};

/// The bounds a comparison passes within.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Bounds {
    /// KS distance of numbers, dates and lengths.
    pub ks: f64,
    /// Total variation distance of categories.
    pub tv: f64,
    /// Null rate difference.
    pub null_rate: f64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            ks: 0.05,
            tv: 0.05,
            null_rate: 0.01,
        }
    }
}

/// One column's (or nested field's) distance.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnDistance {
    /// The table.
    pub table: String,
    /// The column (nested fields as `a.b`, list items as `a[]`).
    pub column: String,
    /// `ks` (numbers, dates), `tv` (categories), `length ks` (strings,
    /// lists), or `none` (no values on one side).
    pub statistic: String,
    /// The distance.
    pub distance: f64,
    /// What two samples of one distribution of these sizes show (95%).
    pub noise: f64,
    /// Null rate in the original and generated data.
    pub null_rates: (f64, f64),
    /// Whether distance and null rate are within their bounds (or noise).
    pub pass: bool,
    /// Whether the distance counts toward [`Comparison::passed`]: string
    /// lengths are reported, not bounded (their values are patterns).
    pub bounded: bool,
}

/// A foreign key of the original checked in the generated data.
#[derive(Debug, Clone, Serialize)]
pub struct KeyCheck {
    /// `table.column`.
    pub column: String,
    /// `table.column` it refers to.
    pub target: String,
    /// Sampled generated values checked.
    pub checked: usize,
    /// Of those, values the generated target lacks (`None`: the generated
    /// target is not unique, so not a key).
    pub missing: Option<usize>,
}

/// The comparison of two datasets.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The bounds used.
    pub bounds: Bounds,
    /// Rows per table: original and generated.
    pub rows: Vec<(String, u64, u64)>,
    /// Per column.
    pub columns: Vec<ColumnDistance>,
    /// Foreign keys.
    pub keys: Vec<KeyCheck>,
    /// Tables and columns of one side only.
    pub unmatched: Vec<String>,
}

impl Comparison {
    /// Whether every column and key passed and nothing is unmatched.
    pub fn passed(&self) -> bool {
        self.failed_columns() == 0 && self.failed_keys() == 0 && self.unmatched.is_empty()
    }

    /// Bounded columns out of their bounds.
    pub fn failed_columns(&self) -> usize {
        self.columns.iter().filter(|c| c.bounded && !c.pass).count()
    }

    /// Foreign keys with missing (or uncounted) parents.
    pub fn failed_keys(&self) -> usize {
        self.keys.iter().filter(|k| k.missing != Some(0)).count()
    }

    /// The comparison as a text table.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let w = self
            .columns
            .iter()
            .map(|c| c.table.len() + c.column.len() + 1)
            .max()
            .unwrap_or(6)
            .max(6);
        out.push_str(&format!(
            "{:<w$}  {:<10}  {:>8}  {:>8}  {:>15}  result\n",
            "column", "statistic", "distance", "noise", "nulls orig/gen"
        ));
        for c in &self.columns {
            out.push_str(&format!(
                "{:<w$}  {:<10}  {:>8.4}  {:>8.4}  {:>7.4}/{:<7.4}  {}\n",
                format!("{}.{}", c.table, c.column),
                c.statistic,
                c.distance,
                c.noise,
                c.null_rates.0,
                c.null_rates.1,
                match (c.pass, c.bounded) {
                    (true, _) => "ok",
                    (false, true) => "FAIL",
                    (false, false) => "differs (not bounded)",
                }
            ));
        }
        for (t, a, b) in &self.rows {
            out.push_str(&format!("rows {t}: {a} original, {b} generated\n"));
        }
        for k in &self.keys {
            out.push_str(&format!(
                "foreign key {} -> {}: {}\n",
                k.column,
                k.target,
                match k.missing {
                    Some(0) => format!("all {} sampled values found", k.checked),
                    Some(m) => format!("FAIL: {m} of {} sampled values missing", k.checked),
                    None => "FAIL: the generated target is not unique".into(),
                }
            ));
        }
        for u in &self.unmatched {
            out.push_str(&format!("FAIL: {u}\n"));
        }
        out.push_str(if self.passed() {
            "every column within bounds\n"
        } else {
            "some columns out of bounds\n"
        });
        out
    }
}

/// Compares `generated` with `original` (each read as [`crate::infer`]
/// reads its inputs, with `opts`' sample).
///
/// # Errors
///
/// As [`crate::infer`]'s reads.
pub fn compare(
    original: &[String],
    generated: &[String],
    opts: &Options,
) -> Result<Comparison, Error> {
    compare_with(original, generated, opts, Bounds::default())
}

/// [`compare`] with other bounds.
///
/// # Errors
///
/// As [`compare`].
pub fn compare_with(
    original: &[String],
    generated: &[String],
    opts: &Options,
    bounds: Bounds,
) -> Result<Comparison, Error> {
    opts.check()?;
    let limits = opts.limits();
    let a = crate::profile_all(original, &opts.store, opts.sample, &limits)?;
    let b = crate::profile_all(generated, &opts.store, opts.sample, &limits)?;
    let mut out = Comparison {
        bounds,
        rows: Vec::new(),
        columns: Vec::new(),
        keys: Vec::new(),
        unmatched: Vec::new(),
    };
    let mut by_name: HashMap<&str, &TableProfile> =
        b.iter().map(|t| (t.name.as_str(), t)).collect();
    // One table on each side: compared whatever their names.
    if let ([ta], [tb]) = (a.as_slice(), b.as_slice()) {
        by_name = HashMap::from([(ta.name.as_str(), tb)]);
    }
    for ta in &a {
        let Some(tb) = by_name.get(ta.name.as_str()) else {
            out.unmatched
                .push(format!("table {} is not in the generated data", ta.name));
            continue;
        };
        out.rows.push((ta.name.clone(), ta.rows, tb.rows));
        for na in &ta.columns {
            match tb
                .columns
                .iter()
                .find(|n| n.field.name() == na.field.name())
            {
                Some(nb) => node(&ta.name, "", na, nb, &bounds, opts.min_count, &mut out),
                None => out.unmatched.push(format!(
                    "column {}.{} is not in the generated data",
                    ta.name,
                    na.field.name()
                )),
            }
        }
    }
    for t in &b {
        if a.len() > 1 && !a.iter().any(|x| x.name == t.name) {
            out.unmatched
                .push(format!("table {} is not in the original data", t.name));
        }
    }
    // The original's foreign keys, in the generated data.
    let keys = crate::keys::find(&a, opts.min_count);
    for r in &keys.refs {
        let (Some(tb), Some(pb)) = (
            by_name.get(r.table.as_str()),
            by_name.get(r.parent.as_str()),
        ) else {
            continue;
        };
        let (Some(x), Some(y)) = (
            tb.columns
                .iter()
                .find(|c| c.field.name() == &r.column)
                .and_then(Node::leaf),
            pb.columns
                .iter()
                .find(|c| c.field.name() == &r.parent_column)
                .and_then(Node::leaf),
        ) else {
            continue;
        };
        let strings = y.string_hashes();
        let checked = x.key_sample.items.len();
        let missing = if y.unique {
            x.key_sample
                .items
                .iter()
                .map(|&k| y.has_key(k, strings.as_ref()))
                .try_fold(0usize, |m, found| found.map(|f| m + usize::from(!f)))
        } else {
            None
        };
        out.keys.push(KeyCheck {
            column: format!("{}.{}", r.table, r.column),
            target: format!("{}.{}", r.parent, r.parent_column),
            checked,
            missing,
        });
    }
    Ok(out)
}

fn node(
    table: &str,
    prefix: &str,
    a: &Node,
    b: &Node,
    bounds: &Bounds,
    min_count: u64,
    out: &mut Comparison,
) {
    let name = format!("{prefix}{}", a.field.name());
    let (na, nb) = (a.null_rate(), b.null_rate());
    let null_noise = 2.0
        * (na.max(nb)
            * (1.0 - na.max(nb))
            * (1.0 / a.slots.max(1) as f64 + 1.0 / b.slots.max(1) as f64))
            .sqrt();
    let null_ok = (na - nb).abs() <= bounds.null_rate.max(null_noise);
    let text = a
        .leaf()
        .is_some_and(|l| matches!(l.class, Class::Str | Class::Bytes));
    let mut push = |statistic: &str, distance: f64, noise: f64, bound: f64| {
        out.columns.push(ColumnDistance {
            bounded: !(text && statistic == "length ks" && null_ok),
            table: table.to_string(),
            column: name.clone(),
            statistic: statistic.into(),
            distance,
            noise,
            null_rates: (na, nb),
            pass: null_ok && distance <= bound.max(noise),
        });
    };
    match (&a.shape, &b.shape) {
        (Shape::Leaf(x), Shape::Leaf(y)) => {
            if x.count == 0 || y.count == 0 {
                let d = if x.count == y.count { 0.0 } else { 1.0 };
                push("none", d, 0.0, 0.0);
            } else if let Some((d, noise)) = categorical(x, y, min_count) {
                push("tv", d, noise, bounds.tv);
            } else if x.class.is_numeric() {
                let (sa, sb) = (x.sorted_sample(), y.sorted_sample());
                push(
                    "ks",
                    ks_two(&sa, &sb),
                    ks_critical(sa.len(), sb.len()),
                    bounds.ks,
                );
            } else {
                let (d, noise) = counts_ks(&x.lengths, &y.lengths);
                push("length ks", d, noise, bounds.ks);
            }
        }
        (Shape::Struct(xs), Shape::Struct(ys)) => {
            push("none", 0.0, 0.0, 0.0);
            for x in xs {
                if let Some(y) = ys.iter().find(|y| y.field.name() == x.field.name()) {
                    node(table, &format!("{name}."), x, y, bounds, min_count, out);
                }
            }
        }
        (
            Shape::List {
                lengths: la,
                item: ia,
            },
            Shape::List {
                lengths: lb,
                item: ib,
            },
        ) => {
            let (d, noise) = counts_ks(la, lb);
            push("length ks", d, noise, bounds.ks);
            node(table, &format!("{name}[]."), ia, ib, bounds, min_count, out);
        }
        (
            Shape::Map {
                sizes: sa,
                key: ka,
                value: va,
            },
            Shape::Map {
                sizes: sb,
                key: kb,
                value: vb,
            },
        ) => {
            let (d, noise) = counts_ks(sa, sb);
            push("length ks", d, noise, bounds.ks);
            node(
                table,
                &format!("{name}{{}}."),
                ka,
                kb,
                bounds,
                min_count,
                out,
            );
            node(
                table,
                &format!("{name}{{}}."),
                va,
                vb,
                bounds,
                min_count,
                out,
            );
        }
        (Shape::Unsupported, Shape::Unsupported) => {}
        _ => {
            out.unmatched.push(format!(
                "{table}.{name} has another type in the generated data"
            ));
        }
    }
}

/// Total variation distance of two columns' categories and its noise,
/// when the original is categorical: booleans, and strings whose values
/// seen `min_count` times hold 99% of them.
fn categorical(x: &Leaf, y: &Leaf, min_count: u64) -> Option<(f64, f64)> {
    let cx = x.categories()?;
    let is_cat = match x.class {
        Class::Bool => true,
        Class::Str | Class::Bytes => {
            crate::model::kept(&cx, x.count, min_count).1 >= crate::model::CATEGORICAL
        }
        _ => false,
    };
    if !is_cat {
        return None;
    }
    let (n, m) = (x.count as f64, y.count as f64);
    let cy: HashMap<Category, u64> = match y.categories() {
        Some(c) => c.into_iter().collect(),
        // More distinct values than counted: everything past the original's
        // categories is unmatched mass.
        None => HashMap::new(),
    };
    let mut tv = 0.0;
    let mut noise = 0.0;
    let mut seen_y = 0.0;
    for (k, c) in &cx {
        let p = *c as f64 / n;
        let q = cy.get(k).copied().unwrap_or(0) as f64 / m;
        seen_y += q;
        tv += (p - q).abs();
        noise += (p * (1.0 - p) * (1.0 / n + 1.0 / m)).sqrt();
    }
    tv += (1.0 - seen_y).max(0.0);
    // E|N(0, s^2)| = s * sqrt(2 / pi); twice the expected distance.
    let noise = 2.0 * 0.5 * noise * (2.0 / std::f64::consts::PI).sqrt();
    Some((0.5 * tv, noise))
}

/// KS distance of two exact count distributions (lengths) and its noise.
fn counts_ks(a: &Counts, b: &Counts) -> (f64, f64) {
    let (na, nb) = (a.total(), b.total());
    if na == 0 || nb == 0 {
        return (if na == nb { 0.0 } else { 1.0 }, 0.0);
    }
    let mut keys: Vec<u64> = a.iter().map(|x| x.0).chain(b.iter().map(|x| x.0)).collect();
    keys.sort_unstable();
    keys.dedup();
    let (ma, mb): (HashMap<u64, u64>, HashMap<u64, u64>) = (a.iter().collect(), b.iter().collect());
    let (mut fa, mut fb, mut d) = (0.0, 0.0, 0f64);
    for k in keys {
        fa += ma.get(&k).copied().unwrap_or(0) as f64 / na as f64;
        fb += mb.get(&k).copied().unwrap_or(0) as f64 / nb as f64;
        d = d.max((fa - fb).abs());
    }
    (d, ks_critical(na as usize, nb as usize))
}
