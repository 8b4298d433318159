//! Keys and relationships across columns and tables: primary keys,
//! foreign keys by inclusion, parent-child tables, positions within a
//! parent, and offsets between dates.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::model::{Gen, weights};
use crate::profile::{Category, Class, Leaf, Node, TableProfile};

/// A relationship the inference found, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Relationship {
    /// `primary key`, `unique`, `foreign key`, `children`, `position` or
    /// `offset`.
    pub kind: String,
    /// The table.
    pub table: String,
    /// Its column or columns (comma-separated).
    pub column: String,
    /// What it refers to (`table.column`), where it refers to something.
    pub target: Option<String>,
    /// What was measured.
    pub evidence: String,
}

/// A foreign key to write as a `ref`.
#[derive(Debug, Clone)]
pub(crate) struct Ref {
    pub table: String,
    pub column: String,
    pub parent: String,
    pub parent_column: String,
    /// Zipf exponent of the references' skew, when skewed.
    pub zipf: Option<f64>,
    /// Every parent row referenced equally often, within one.
    pub balanced: bool,
}

/// A child table.
#[derive(Debug, Clone)]
pub(crate) struct Child {
    pub parent: String,
    pub parent_column: String,
    pub column: String,
    pub count: Gen,
    /// A column numbering the rows within their parent, from this start.
    pub position: Option<(String, i128)>,
}

/// A column written as another plus an offset.
#[derive(Debug, Clone)]
pub(crate) struct Offset {
    pub table: String,
    pub column: String,
    pub from: String,
    pub generator: Gen,
}

/// A dependency of one column on a few-valued sibling, written as `when`
/// cases on `column` keyed by `by`.
#[derive(Debug, Clone)]
pub(crate) struct Cases {
    pub table: String,
    pub column: String,
    pub by: String,
    /// The sibling's values of each case, and what the case sets.
    pub cases: Vec<(Vec<Category>, Case)>,
}

/// What a `when` case sets.
#[derive(Debug, Clone)]
pub(crate) enum Case {
    /// The value.
    Value(Category),
    /// The share of nulls.
    NullRate(f64),
}

/// Everything found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Keys {
    pub cases: Vec<Cases>,
    pub refs: Vec<Ref>,
    pub children: HashMap<String, Child>,
    pub offsets: Vec<Offset>,
    pub found: Vec<Relationship>,
}

/// The prefix every column of a table shares up to an underscore (`l_`).
fn prefix(t: &TableProfile) -> String {
    let names: Vec<&str> = t.columns.iter().map(|c| c.field.name().as_str()).collect();
    if names.len() < 2 {
        return String::new();
    }
    let first = names[0];
    let mut p = match first.find('_') {
        Some(i) => &first[..=i],
        None => return String::new(),
    };
    if !names.iter().all(|n| n.starts_with(p) && n.len() > p.len()) {
        p = "";
    }
    p.to_string()
}

fn singular(s: &str) -> &str {
    s.strip_suffix("ies")
        .map_or_else(|| s.strip_suffix('s').unwrap_or(s), |_| s)
}

/// How well a column's name says it refers to another: 3 the same name
/// after the tables' prefixes, 2 the parent table's name with `_id`,
/// `id` or `key`, 1 one name ends with the other, 0 nothing.
fn name_score(
    child: &str,
    child_prefix: &str,
    parent: &str,
    parent_prefix: &str,
    parent_table: &str,
) -> u8 {
    let c = child
        .strip_prefix(child_prefix)
        .unwrap_or(child)
        .to_ascii_lowercase();
    let p = parent
        .strip_prefix(parent_prefix)
        .unwrap_or(parent)
        .to_ascii_lowercase();
    if c == p && !matches!(p.as_str(), "id" | "key" | "name") {
        return 3;
    }
    let t = parent_table.to_ascii_lowercase();
    let ts = singular(&t);
    if c == t || c == ts {
        return 2;
    }
    for base in [t.as_str(), ts] {
        for suffix in ["_id", "id", "_key", "key"] {
            if c == format!("{base}{suffix}") {
                return 2;
            }
        }
    }
    if c.len() >= 3 && p.len() >= 3 && (c.ends_with(&p) || p.ends_with(&c)) {
        return 1;
    }
    0
}

/// A unique, non-null column of a fully scanned table.
fn is_key(t: &TableProfile, n: &Node) -> bool {
    n.nulls == 0
        && n.leaf().is_some_and(|l| {
            l.unique
                && l.count >= 2
                && l.count == t.scanned
                && matches!(l.class, Class::Int | Class::Str)
        })
}

fn key_rank(t: &TableProfile, n: &Node, i: usize) -> (u8, u8, usize) {
    let name = n.field.name().to_ascii_lowercase();
    let p = prefix(t);
    let bare = name
        .strip_prefix(&p.to_ascii_lowercase())
        .unwrap_or(&name)
        .to_string();
    let named = u8::from(
        bare == "id" || bare.ends_with("key") || bare.ends_with("_id") || bare.ends_with("id"),
    );
    let int = u8::from(n.leaf().is_some_and(|l| l.class == Class::Int));
    (named, int, usize::MAX - i)
}

/// Finds the keys and relationships of `tables`.
pub(crate) fn find(tables: &[TableProfile], min_count: u64) -> Keys {
    let mut keys = Keys::default();
    // Primary keys: the best-ranked unique column.
    let mut primary: HashMap<&str, &str> = HashMap::new();
    for t in tables {
        let mut uniques: Vec<(usize, &Node)> = t
            .columns
            .iter()
            .enumerate()
            .filter(|(_, n)| is_key(t, n))
            .collect();
        uniques.sort_by_key(|&(i, n)| std::cmp::Reverse(key_rank(t, n, i)));
        if let Some((_, n)) = uniques.first() {
            primary.insert(&t.name, n.field.name());
            let l = n.leaf().expect("a key is a leaf");
            keys.found.push(Relationship {
                kind: "primary key".into(),
                table: t.name.clone(),
                column: n.field.name().clone(),
                target: None,
                evidence: format!(
                    "{} distinct non-null values in {} rows{}",
                    l.count,
                    t.rows,
                    if l.increasing { ", increasing" } else { "" }
                ),
            });
        }
        for (_, n) in uniques.iter().skip(1) {
            keys.found.push(Relationship {
                kind: "unique".into(),
                table: t.name.clone(),
                column: n.field.name().clone(),
                target: None,
                evidence: format!("{} distinct non-null values in {} rows", t.rows, t.rows),
            });
        }
    }
    // The string hashes of every small string key column.
    let mut sets: HashMap<(&str, &str), Option<HashSet<u64>>> = HashMap::new();
    for t in tables {
        for n in &t.columns {
            if is_key(t, n)
                && let Some(l) = n.leaf()
            {
                sets.insert((&t.name, n.field.name()), l.string_hashes());
            }
        }
    }
    let prefixes: HashMap<&str, String> = tables
        .iter()
        .map(|t| (t.name.as_str(), prefix(t)))
        .collect();
    // Foreign keys: the best parent key of each column whose sampled values
    // all lie in it.
    for a in tables {
        let a_prefix = &prefixes[a.name.as_str()];
        for x in &a.columns {
            let Some(lx) = x.leaf() else { continue };
            if !matches!(lx.class, Class::Int | Class::Str) || lx.count == 0 || lx.distinct() < 2 {
                continue;
            }
            if primary.get(a.name.as_str()) == Some(&x.field.name().as_str()) {
                continue;
            }
            /// (name score, coverage), parent, its key, (found, checked).
            type Best<'a> = ((u8, u64), &'a TableProfile, &'a str, (usize, usize));
            let mut best: Option<Best<'_>> = None;
            for b in tables {
                if b.name == a.name {
                    continue;
                }
                for y in &b.columns {
                    let Some(strings) = sets.get(&(b.name.as_str(), y.field.name().as_str()))
                    else {
                        continue;
                    };
                    let ly = y.leaf().expect("keys are leaves");
                    if ly.class != lx.class {
                        continue;
                    }
                    // A parent read in part holds only part of its keys.
                    let read = b.scanned as f64 / b.rows.max(1) as f64;
                    if lx.class == Class::Int
                        && (read >= 1.0 || ly.total > ly.count)
                        && (lx.min_key < ly.min_key || lx.max_key > ly.max_key)
                    {
                        continue;
                    }
                    let sample = &lx.key_sample.items;
                    let found = sample
                        .iter()
                        .filter(|&&k| ly.has_key(k, strings.as_ref()) == Some(true))
                        .count();
                    let score = name_score(
                        x.field.name(),
                        a_prefix,
                        y.field.name(),
                        &prefixes[b.name.as_str()],
                        &b.name,
                    );
                    let included = if read >= 1.0 {
                        found == sample.len()
                    } else {
                        // Sampled: about `read` of the values are found when
                        // they all are keys; the name must agree too.
                        score >= 2 && found as f64 >= 0.7 * read * sample.len() as f64
                    };
                    if sample.is_empty() || !included {
                        continue;
                    }
                    let coverage = lx.distinct() as f64 / ly.count.max(1) as f64;
                    if score == 0 && coverage < 0.9 {
                        continue;
                    }
                    let rank = (score, (coverage.min(1.0) * 1e6) as u64);
                    if best.as_ref().is_none_or(|b| rank > b.0) {
                        best = Some((rank, b, y.field.name().as_str(), (found, sample.len())));
                    }
                }
            }
            let Some(((score, cov), b, y, (found, checked))) = best else {
                continue;
            };
            let among = if b.scanned < b.rows {
                format!(
                    "the {} keys read of {}'s {} rows",
                    b.scanned, b.name, b.rows
                )
            } else {
                format!("{}'s {} keys", b.name, b.rows)
            };
            let zipf = skew(lx, b.rows);
            // Every parent key referenced, as often as any other within one.
            let balanced = zipf.is_none()
                && a.scanned == a.rows
                && b.scanned == b.rows
                && lx.categories().is_some_and(|c| {
                    let (lo, hi) = (c.iter().map(|x| x.1).min(), c.iter().map(|x| x.1).max());
                    c.len() as u64 == b.rows && lo.zip(hi).is_some_and(|(lo, hi)| hi - lo <= 1)
                });
            keys.found.push(Relationship {
                kind: "foreign key".into(),
                table: a.name.clone(),
                column: x.field.name().clone(),
                target: Some(format!("{}.{y}", b.name)),
                evidence: format!(
                    "{found} of {checked} sampled values found among {among}; {}{} distinct values cover {:.1}% of them; name match {score}/3{}",
                    if lx.exact() || lx.unique { "" } else { "about " },
                    lx.distinct(),
                    cov as f64 / 1e4,
                    match (zipf, balanced) {
                        (Some(s), _) => format!("; references skewed, Zipf s = {s:.2}"),
                        (None, true) => "; every key referenced equally often, within one".to_string(),
                        _ => String::new(),
                    }
                ),
            });
            keys.refs.push(Ref {
                table: a.name.clone(),
                column: x.field.name().clone(),
                parent: b.name.clone(),
                parent_column: y.to_string(),
                zipf,
                balanced,
            });
        }
    }
    children(tables, &mut keys);
    composite(tables, &mut keys, &primary);
    offsets(tables, &mut keys, min_count);
    dependencies(tables, &mut keys, min_count);
    keys
}

/// Dependencies on few-valued columns, from the joint counts of a table's
/// first rows: a column whose value each value of another fixes (`when`
/// cases setting it), and a column whose share of nulls differs by more
/// than 0.2 across another's values (`when` cases setting the null rate).
/// Every value written occurs `min_count` times; a column set by cases
/// sets none itself.
fn dependencies(tables: &[TableProfile], keys: &mut Keys, min_count: u64) {
    use crate::profile::JOINT_MAX;
    for t in tables {
        let Some(j) = &t.joint else { continue };
        if j.rows < 1000 {
            continue;
        }
        let name = |i: usize| t.columns[i].field.name().clone();
        let mut targets: HashSet<usize> = HashSet::new();
        let mut sources: HashSet<usize> = HashSet::new();
        let mut pairs: Vec<&(usize, usize)> = j.pairs.keys().collect();
        pairs.sort_unstable();
        for &&(x, y) in &pairs {
            let (fx, fy) = (&j.few[x], &j.few[y]);
            if !fx.complete || !fy.complete {
                continue;
            }
            let (by, by_values, of, of_values) = (fx.column, &fx.values, fy.column, &fy.values);
            if targets.contains(&of) || targets.contains(&by) || sources.contains(&of) {
                continue;
            }
            // Rows where `of` is null are not counted: only columns without
            // nulls are set by value.
            if t.columns[of].nulls > 0 {
                continue;
            }
            let m = &j.pairs[&(x, y)];
            let cell = |a: usize, b: usize| m[a * JOINT_MAX + b];
            let by_rows: Vec<u64> = (0..by_values.len())
                .map(|a| (0..of_values.len()).map(|b| cell(a, b)).sum())
                .collect();
            let of_rows: Vec<u64> = (0..of_values.len())
                .map(|b| (0..by_values.len()).map(|a| cell(a, b)).sum())
                .collect();
            let fixed: Vec<Option<usize>> = (0..by_values.len())
                .map(|a| {
                    let hit: Vec<usize> =
                        (0..of_values.len()).filter(|&b| cell(a, b) > 0).collect();
                    (hit.len() == 1).then(|| hit[0])
                })
                .collect();
            let common =
                by_rows.iter().all(|&c| c >= min_count) && of_rows.iter().all(|&c| c >= min_count);
            if fixed.iter().any(Option::is_none)
                || !common
                || of_values.len() < 2
                || by_values.len() < 2
            {
                continue;
            }
            let mut cases: Vec<(Vec<Category>, Case)> = Vec::new();
            for (b, v) in of_values.iter().enumerate() {
                let mut is: Vec<Category> = (0..by_values.len())
                    .filter(|&a| fixed[a] == Some(b))
                    .map(|a| by_values[a].clone())
                    .collect();
                if is.is_empty() {
                    continue;
                }
                is.sort();
                cases.push((is, Case::Value(v.clone())));
            }
            cases.sort_by(|a, b| a.0.cmp(&b.0));
            keys.found.push(Relationship {
                kind: "determined by".into(),
                table: t.name.clone(),
                column: name(of),
                target: Some(format!("{}.{}", t.name, name(by))),
                evidence: format!(
                    "in the first {} rows each of {}'s {} values goes with one of {}'s {} values",
                    j.rows,
                    name(by),
                    by_values.len(),
                    name(of),
                    of_values.len()
                ),
            });
            keys.cases.push(Cases {
                table: t.name.clone(),
                column: name(of),
                by: name(by),
                cases,
            });
            targets.insert(of);
            sources.insert(by);
        }
        let mut nulls: Vec<&(usize, usize)> = j.nulls.keys().collect();
        nulls.sort_unstable();
        for &&(x, of) in &nulls {
            let f = &j.few[x];
            if !f.complete {
                continue;
            }
            let (by, by_values) = (f.column, &f.values);
            if targets.contains(&of) || targets.contains(&by) || sources.contains(&of) {
                continue;
            }
            let m = &j.nulls[&(x, of)];
            let per: Vec<(u64, u64)> = (0..by_values.len())
                .map(|a| (m[2 * a + 1], m[2 * a] + m[2 * a + 1]))
                .collect();
            if per.len() < 2 || per.iter().any(|&(_, n)| n < min_count) {
                continue;
            }
            let shares: Vec<f64> = per
                .iter()
                .map(|&(nulls, n)| ((nulls as f64 / n as f64) * 1e3).round() / 1e3)
                .collect();
            let lo = shares.iter().copied().fold(1.0, f64::min);
            let hi = shares.iter().copied().fold(0.0, f64::max);
            if hi - lo <= 0.2 {
                continue;
            }
            let mut by_share: Vec<(u64, Vec<Category>)> = Vec::new();
            for (a, share) in shares.iter().enumerate() {
                let key = share.to_bits();
                let v = by_values[a].clone();
                match by_share.iter_mut().find(|x| x.0 == key) {
                    Some(x) => x.1.push(v),
                    None => by_share.push((key, vec![v])),
                }
            }
            let mut cases: Vec<(Vec<Category>, Case)> = by_share
                .into_iter()
                .map(|(k, mut vals)| {
                    vals.sort();
                    (vals, Case::NullRate(f64::from_bits(k)))
                })
                .collect();
            cases.sort_by(|a, b| a.0.cmp(&b.0));
            keys.found.push(Relationship {
                kind: "nulls by".into(),
                table: t.name.clone(),
                column: name(of),
                target: Some(format!("{}.{}", t.name, name(by))),
                evidence: format!(
                    "in the first {} rows {}'s share of nulls is {lo} to {hi} across {}'s {} values",
                    j.rows,
                    name(of),
                    name(by),
                    per.len()
                ),
            });
            keys.cases.push(Cases {
                table: t.name.clone(),
                column: name(of),
                by: name(by),
                cases,
            });
            targets.insert(of);
            sources.insert(by);
        }
    }
}

/// The Zipf exponent of a reference column's counts per parent key, when
/// they are skewed (the most referenced key has more than ten times the
/// mean count): a least-squares line through log count against log rank.
fn skew(l: &Leaf, parent_rows: u64) -> Option<f64> {
    // Exact counts, else the counts in the sample of keys.
    let (cats, count): (Vec<(Category, u64)>, u64) = match l.categories() {
        Some(c) => (c, l.count),
        None => {
            let mut m: HashMap<i128, u64> = HashMap::new();
            for &k in &l.key_sample.items {
                *m.entry(k).or_insert(0) += 1;
            }
            let mut c: Vec<(Category, u64)> =
                m.into_iter().map(|(k, n)| (Category::Int(k), n)).collect();
            c.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            (c, l.key_sample.items.len() as u64)
        }
    };
    let mean = count as f64 / parent_rows.max(1) as f64;
    let top = cats.first()?.1 as f64;
    if top < 20.0 || top < 10.0 * mean {
        return None;
    }
    let pts: Vec<(f64, f64)> = cats
        .iter()
        .take(1000)
        .enumerate()
        .map(|(i, c)| (((i + 1) as f64).ln(), (c.1 as f64).ln()))
        .collect();
    let n = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let (mx, my) = (sx / n, sy / n);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (x, y) in &pts {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
    }
    let s = -sxy / sxx;
    (s.is_finite() && s > 0.05).then_some((s * 100.0).round() / 100.0)
}

/// Children: a foreign key whose values come in runs (each parent's rows
/// together) makes its table a child of the parent, the counts per parent
/// its run lengths (and zero for parents never referenced).
fn children(tables: &[TableProfile], keys: &mut Keys) {
    for r in keys.refs.clone() {
        // One parent per child table.
        if keys.children.contains_key(&r.table) {
            continue;
        }
        let (Some(a), Some(b)) = (
            tables.iter().find(|t| t.name == r.table),
            tables.iter().find(|t| t.name == r.parent),
        ) else {
            continue;
        };
        // Counts need every row of both.
        if a.scanned != a.rows || b.scanned != b.rows {
            continue;
        }
        let Some(node) = a.columns.iter().find(|c| c.field.name() == &r.column) else {
            continue;
        };
        let Some(l) = node.leaf() else {
            continue;
        };
        let grouped = l.nondecreasing || (l.exact() && l.runs == l.distinct());
        if !grouped || l.runs == l.count || node.nulls > 0 {
            continue;
        }
        // A parent whose own parent is this table would make a cycle.
        if keys
            .children
            .get(&r.parent)
            .is_some_and(|c| c.parent == r.table)
        {
            continue;
        }
        let mut counts = l.run_lengths.clone();
        let zero = b.rows.saturating_sub(l.runs);
        if zero > 0 {
            counts.add_n(0, zero);
        }
        let count = crate::model::counts_gen(&counts);
        // A column counting 0, 1, 2, ... (or from 1) within each parent.
        let position = a.columns.iter().find_map(|c| {
            let p = c.leaf()?;
            (p.class == Class::Int
                && p.pos_ok
                && p.pos_resets + 1 == l.runs
                && c.field.name() != &r.column
                && c.nulls == 0)
                .then(|| (c.field.name().clone(), p.pos_start.unwrap_or(0)))
        });
        keys.found.push(Relationship {
            kind: "children".into(),
            table: a.name.clone(),
            column: r.column.clone(),
            target: Some(format!("{}.{}", r.parent, r.parent_column)),
            evidence: format!(
                "{} rows in {} runs of equal {} ({}); {} of {} parents have none; count {}",
                a.rows,
                l.runs,
                r.column,
                if l.nondecreasing { "sorted" } else { "grouped" },
                zero,
                b.rows,
                count.inline()
            ),
        });
        if let Some((p, start)) = &position {
            keys.found.push(Relationship {
                kind: "position".into(),
                table: a.name.clone(),
                column: p.clone(),
                target: Some(format!("{}.{}", r.parent, r.parent_column)),
                evidence: format!(
                    "{start}, {}, ... within each of the {} runs of {}",
                    start + 1,
                    l.runs,
                    r.column
                ),
            });
        }
        keys.children.insert(
            r.table.clone(),
            Child {
                parent: r.parent.clone(),
                parent_column: r.parent_column.clone(),
                column: r.column.clone(),
                count,
                position,
            },
        );
    }
}

/// Composite keys of tables without a unique column: the first column,
/// grouped, with a column whose values never repeat within its groups.
fn composite(tables: &[TableProfile], keys: &mut Keys, primary: &HashMap<&str, &str>) {
    for t in tables {
        if primary.contains_key(t.name.as_str()) || t.columns.is_empty() || t.scanned != t.rows {
            continue;
        }
        let Some(first) = t.columns[0].leaf() else {
            continue;
        };
        let grouped = first.nondecreasing || (first.exact() && first.runs == first.distinct());
        if !grouped || first.runs == first.count || t.columns[0].nulls > 0 {
            continue;
        }
        let child = keys.children.get(&t.name);
        let fk: HashSet<&str> = keys
            .refs
            .iter()
            .filter(|r| r.table == t.name)
            .map(|r| r.column.as_str())
            .collect();
        let best = t
            .within
            .iter()
            .filter(|w| w.distinct && t.columns[w.column].nulls == 0)
            .max_by_key(|w| {
                let name = t.columns[w.column].field.name();
                let is_pos = child
                    .and_then(|c| c.position.as_ref())
                    .is_some_and(|p| &p.0 == name);
                (is_pos, fk.contains(name.as_str()), usize::MAX - w.column)
            });
        if let Some(w) = best {
            let name = t.columns[w.column].field.name();
            keys.found.push(Relationship {
                kind: "primary key".into(),
                table: t.name.clone(),
                column: format!("{}, {name}", t.columns[0].field.name()),
                target: None,
                evidence: format!(
                    "{} never repeats within the {} runs of {} ({} rows)",
                    name,
                    first.runs,
                    t.columns[0].field.name(),
                    t.rows
                ),
            });
        }
    }
}

/// Offsets: a date or timestamp column that is another plus a difference
/// spanning at most a quarter of its range.
fn offsets(tables: &[TableProfile], keys: &mut Keys, min_count: u64) {
    for t in tables {
        let mut derived: HashSet<usize> = HashSet::new();
        let mut pairs: Vec<&crate::profile::Pair> =
            t.pairs.iter().filter(|p| p.count > 0).collect();
        pairs.sort_by_key(|p| p.max - p.min);
        for p in pairs {
            let (Some(la), Some(lb)) = (t.columns[p.a].leaf(), t.columns[p.b].leaf()) else {
                continue;
            };
            // Only dates: a date plus days is an expression specs have.
            if la.class != Class::Date || derived.contains(&p.b) || derived.contains(&p.a) {
                continue;
            }
            let range = (lb.max_key - lb.min_key).max(1);
            if p.count != la.count.min(lb.count) || (p.max - p.min) * 4 > range {
                continue;
            }
            let mut counts: HashMap<i64, u64> = HashMap::new();
            for &d in &p.sample.items {
                *counts.entry(d as i64).or_insert(0) += 1;
            }
            let mut items: Vec<(i64, u64)> = counts.into_iter().collect();
            items.sort_unstable();
            let generator = if items.len() <= 256 {
                let kept: Vec<&(i64, u64)> = items
                    .iter()
                    .filter(|i| i.1 >= min_count.min(p.sample.items.len() as u64 / 1000 + 1))
                    .collect();
                if kept.is_empty() {
                    continue;
                }
                let counts: Vec<u64> = kept.iter().map(|k| k.1).collect();
                Gen {
                    key: "weighted",
                    value: format!(
                        "{{ values = [{}], weights = {} }}",
                        kept.iter()
                            .map(|k| k.0.to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        weights(&counts)
                    ),
                }
            } else {
                Gen {
                    key: "uniform",
                    value: format!("{{ min = {}, max = {} }}", p.min, p.max),
                }
            };
            derived.insert(p.b);
            let (a, b) = (t.columns[p.a].field.name(), t.columns[p.b].field.name());
            keys.found.push(Relationship {
                kind: "offset".into(),
                table: t.name.clone(),
                column: b.clone(),
                target: Some(format!("{}.{a}", t.name)),
                evidence: format!(
                    "{b} - {a} is {} to {} days in all {} rows (a span of {} against {b}'s {})",
                    p.min,
                    p.max,
                    p.count,
                    p.max - p.min,
                    range
                ),
            });
            keys.offsets.push(Offset {
                table: t.name.clone(),
                column: b.clone(),
                from: a.clone(),
                generator,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_rank_references() {
        assert_eq!(
            name_score("l_orderkey", "l_", "o_orderkey", "o_", "orders"),
            3
        );
        assert_eq!(name_score("customer_id", "", "id", "", "customers"), 2);
        assert_eq!(
            name_score("buyer_custkey", "", "custkey", "c_", "customer"),
            1
        );
        assert_eq!(
            name_score("l_linenumber", "l_", "n_nationkey", "n_", "nation"),
            0
        );
        assert_eq!(name_score("x_id", "x_", "y_id", "y_", "y"), 0);
    }
}
