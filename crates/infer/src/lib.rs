//! Specs from real data: `strata infer` reads Parquet, Arrow IPC and CSV
//! files once and writes a dataset spec that generates data like them,
//! and compares a generated dataset with its original.
//!
//! # Data flow
//!
//! inputs -> [`input::discover`]: tables (a directory per table, or files
//! by stem; local or `s3://`) -> one scan per table (sampled by whole
//! row groups when asked) -> per column a profile (`profile`: counts,
//! nulls at each nesting level, exact categories up to a cap, a
//! uniqueness set, runs, lengths, weekdays, reservoir samples) ->
//! `keys`: primary keys, foreign keys by inclusion, parent-child tables,
//! positions, date offsets -> `model`: each field's generator (fits
//! chosen by KS distance, categories, quantiles, string patterns) -> spec
//! text (TOML), parsed back by [`strata_gen::Dataset::parse`] before it is
//! returned, and a [`Report`] of every choice and relationship with its
//! evidence. [`compare()`] profiles two datasets the same way and measures
//! their distance per column. [`profile_tables`] gives the profiles
//! themselves, as public data ([`TableSummary`]), for other readers.
//!
//! # Guarantees
//!
//! - The spec returned parses: a spec that would not is an error, never
//!   written.
//! - Privacy: no value of a column with more than `max_categories`
//!   distinct values is written (only its pattern, range statistics and
//!   quantiles that are each the mean of `min_count` values); a category
//!   is written only when it occurs at least `min_count` times; words and
//!   characters of patterns likewise. Keys keep their range (a sequence's
//!   start and step).
//! - Deterministic: the same inputs and options give the same spec.
//! - Bad input is an error naming the file, never a panic: unreadable and
//!   corrupt files, files of one table with different columns, no input.
//!   Types no spec can hold are left out with a comment in the spec;
//!   empty tables get a spec with `rows = 0`.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int64Array, RecordBatch, StringArray};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let ids = Int64Array::from_iter_values(1..=1000);
//! let kinds = StringArray::from_iter_values((0..1000).map(|i| ["a", "b", "c"][i % 3]));
//! let batch = RecordBatch::try_from_iter([
//!     ("id", Arc::new(ids) as _),
//!     ("kind", Arc::new(kinds) as _),
//! ])?;
//! let file = std::fs::File::create(dir.path().join("events.arrow"))?;
//! let mut w = arrow_ipc::writer::FileWriter::try_new(file, &batch.schema())?;
//! w.write(&batch)?;
//! w.finish()?;
//!
//! let input = dir.path().display().to_string();
//! let out = strata_infer::infer(&[input], &strata_infer::Options::default())?;
//! assert!(out.spec.contains("sequence = { start = 1, step = 1 }"));
//! assert!(out.spec.contains(r#"values = ["a", "b", "c"]"#));
//! # Ok(())
//! # }
//! ```

mod compare;
mod error;
mod fit;
pub mod input;
mod keys;
mod model;
mod profile;
mod sketch;
mod summary;
mod text;

pub use compare::{Bounds, ColumnDistance, Comparison, KeyCheck, compare, compare_with};
pub use error::Error;
pub use input::{Sample, TableInput};
pub use keys::Relationship;
pub use summary::{
    ColumnSummary, HeavyHitters, LeafSummary, Observed, ProfileOptions, Profiles, ShapeSummary,
    TableSummary, ValueClass, profile_tables,
};

use std::collections::HashMap;

use serde::Serialize;
use strata_store::location::StoreConfig;

use model::{FieldPlan, Gen, Nested, Rules, q};
use profile::{Limits, TableProfile};

/// How inference reads and what it keeps.
#[derive(Debug, Clone)]
pub struct Options {
    /// How much of each table is read (default: 10,000,000 rows).
    pub sample: Sample,
    /// The fewest occurrences of a value (a category, a word, a
    /// character) for it to be written (default 10).
    pub min_count: u64,
    /// The most distinct values a column may have to be written as
    /// categories (default 1,000).
    pub max_categories: usize,
    /// Values sampled per column for fits and quantiles (default 20,000:
    /// KS distances within about 0.01 of the whole column's).
    pub sample_values: usize,
    /// How `s3://` inputs are reached.
    pub store: StoreConfig,
    /// The dataset's name in the spec (default `inferred`).
    pub name: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sample: Sample::Rows(10_000_000),
            min_count: 10,
            max_categories: 1000,
            sample_values: 20_000,
            store: StoreConfig::default(),
            name: "inferred".into(),
        }
    }
}

impl Options {
    fn limits(&self) -> Limits {
        Limits {
            max_categories: self.max_categories,
            sample: self.sample_values,
            texts: 4096,
            keys: 10_000,
            heavy: 0,
        }
    }

    fn check(&self) -> Result<(), Error> {
        if self.min_count == 0 {
            return Err(Error::Options("--min-count must be at least 1".into()));
        }
        if self.max_categories == 0 {
            return Err(Error::Options("--max-categories must be at least 1".into()));
        }
        if self.sample_values < 100 {
            return Err(Error::Options(
                "at least 100 values per column must be sampled".into(),
            ));
        }
        Ok(())
    }
}

/// A column as the report describes it.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnReport {
    /// The column (nested fields as `a.b`, list items as `a[]`).
    pub name: String,
    /// Its type in the input.
    pub data_type: String,
    /// Its share of nulls.
    pub null_rate: f64,
    /// Distinct non-null values (exact up to `max_categories`, else
    /// estimated).
    pub distinct: Option<u64>,
    /// The generator chosen and what it was chosen from.
    pub model: String,
}

/// A table as the report describes it.
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    /// The table.
    pub name: String,
    /// Its rows.
    pub rows: u64,
    /// Rows scanned.
    pub scanned: u64,
    /// Its files.
    pub files: Vec<String>,
    /// Its columns.
    pub columns: Vec<ColumnReport>,
}

/// Everything the inference decided, with its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Per table.
    pub tables: Vec<TableReport>,
    /// Keys and relationships.
    pub relationships: Vec<Relationship>,
}

/// An inferred spec and its report.
#[derive(Debug, Clone)]
pub struct Inferred {
    /// The spec (TOML), parsed once already.
    pub spec: String,
    /// The report.
    pub report: Report,
}

/// Profiles every table of `inputs`.
pub(crate) fn profile_all(
    inputs: &[String],
    store: &StoreConfig,
    sample: Sample,
    limits: &Limits,
) -> Result<Vec<TableProfile>, Error> {
    let tables = input::discover(inputs, store)?;
    let mut out = Vec::new();
    for t in &tables {
        let (schema, mut scanners) = input::open(t, store)?;
        let mut p = TableProfile::new(&t.name, schema.fields(), limits);
        let read = input::scan(t, &schema, &mut scanners, sample, |b| p.add(b))?;
        p.rows = read.rows.max(p.scanned);
        p.finish();
        p.apply(&read.stats);
        out.push(p);
    }
    Ok(out)
}

/// Infers a dataset spec from `inputs` (see the crate documentation).
///
/// # Errors
///
/// As [`input::discover`] and the scans; [`Error::Spec`] when the spec
/// written does not parse (a bug).
pub fn infer(inputs: &[String], opts: &Options) -> Result<Inferred, Error> {
    opts.check()?;
    let limits = opts.limits();
    let tables = profile_all(inputs, &opts.store, opts.sample, &limits)?;
    let rules = Rules {
        min_count: opts.min_count,
        max_categories: opts.max_categories,
    };
    let keys = keys::find(&tables, opts.min_count);
    let (spec, reports) = write_spec(&tables, &keys, &rules, inputs, opts)?;
    strata_gen::Dataset::parse(&spec, "the inferred spec")
        .map_err(|e| Error::Spec(format!("{e}\n--- spec ---\n{spec}")))?;
    Ok(Inferred {
        spec,
        report: Report {
            tables: reports,
            relationships: keys.found,
        },
    })
}

/// A name specs accept for a table.
fn table_name(s: &str) -> String {
    let mut n: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit()) {
        n.insert(0, 't');
    }
    n
}

/// Tables ordered so that a table comes after those it refers to.
fn order(tables: &[TableProfile], keys: &keys::Keys) -> Vec<usize> {
    let index: HashMap<&str, usize> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); tables.len()];
    for r in &keys.refs {
        if let (Some(&a), Some(&b)) = (index.get(r.table.as_str()), index.get(r.parent.as_str())) {
            deps[a].push(b);
        }
    }
    let mut done = vec![false; tables.len()];
    let mut out = Vec::new();
    fn visit(
        i: usize,
        deps: &[Vec<usize>],
        done: &mut [bool],
        on: &mut Vec<usize>,
        out: &mut Vec<usize>,
    ) {
        if done[i] || on.contains(&i) {
            return;
        }
        on.push(i);
        for &d in &deps[i] {
            visit(d, deps, done, on, out);
        }
        on.pop();
        done[i] = true;
        out.push(i);
    }
    for i in 0..tables.len() {
        visit(i, &deps, &mut done, &mut Vec::new(), &mut out);
    }
    out
}

fn column_reports(
    prefix: &str,
    node: &profile::Node,
    plan: Option<&FieldPlan>,
    out: &mut Vec<ColumnReport>,
) {
    let name = format!("{prefix}{}", node.field.name());
    out.push(ColumnReport {
        name: name.clone(),
        data_type: node.field.data_type().to_string(),
        null_rate: node.null_rate(),
        distinct: node.leaf().map(profile::Leaf::distinct),
        model: plan.map_or_else(
            || "left out: specs cannot hold its type".into(),
            |p| p.model.clone(),
        ),
    });
    match (&node.shape, plan.map(|p| &p.nested)) {
        (profile::Shape::Struct(children), Some(Nested::Struct(plans))) => {
            for c in children {
                let p = plans.iter().find(|p| &p.name == c.field.name());
                column_reports(&format!("{name}."), c, p, out);
            }
        }
        (profile::Shape::List { item, .. }, Some(Nested::List { item: p, .. })) => {
            column_reports(&format!("{name}[]."), item, Some(p), out);
        }
        (
            profile::Shape::Map { key, value, .. },
            Some(Nested::Map {
                key: k, value: v, ..
            }),
        ) => {
            column_reports(&format!("{name}{{}}."), key, Some(k), out);
            column_reports(&format!("{name}{{}}."), value, Some(v), out);
        }
        _ => {}
    }
}

fn write_spec(
    tables: &[TableProfile],
    keys: &keys::Keys,
    rules: &Rules,
    inputs: &[String],
    opts: &Options,
) -> Result<(String, Vec<TableReport>), Error> {
    let mut out = String::new();
    out.push_str("# A dataset spec inferred by `strata infer` from:\n");
    for i in inputs {
        out.push_str(&format!("#   {i}\n"));
    }
    out.push_str(&format!(
        "# Values seen fewer than {} times are not written; columns of more than {} distinct\n\
         # values keep only their pattern or distribution. Relationships and their evidence\n\
         # are in the comments above the fields.\n",
        opts.min_count, opts.max_categories
    ));
    out.push_str(&format!("name = {}\n", q(&table_name(&opts.name))));
    out.push_str(&format!(
        "description = {}\n",
        q(&format!(
            "Inferred from {} table(s): {}",
            tables.len(),
            tables
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    ));
    let mut reports = Vec::new();
    let names: HashMap<&str, String> = tables
        .iter()
        .map(|t| (t.name.as_str(), table_name(&t.name)))
        .collect();
    for i in order(tables, keys) {
        let t = &tables[i];
        out.push_str("\n[[tables]]\n");
        out.push_str(&format!("name = {}\n", q(&names[t.name.as_str()])));
        let child = keys.children.get(&t.name);
        if t.scanned < t.rows {
            out.push_str(&format!(
                "# {} of {} rows were read (sampled)\n",
                t.scanned, t.rows
            ));
        }
        match child {
            Some(c) => {
                for r in keys
                    .found
                    .iter()
                    .filter(|r| r.kind == "children" && r.table == t.name)
                {
                    out.push_str(&format!("# children of {}: {}\n", c.parent, r.evidence));
                }
                out.push_str(&format!("children_of = {}\n", q(&names[c.parent.as_str()])));
                out.push_str(&format!("count = {}\n", c.count.inline()));
            }
            None => {
                // Each field's draws one per stratum: the generated
                // distributions follow the model within 1/rows, not within
                // sampling noise (what keeps small tables close).
                out.push_str(&format!("rows = {}\nstratified = true\n", t.rows));
            }
        }
        let mut columns = Vec::new();
        let mut hidden: Vec<FieldPlan> = Vec::new();
        for node in &t.columns {
            let name = node.field.name();
            let Some(mut plan) = model::field_plan(node, rules, true) else {
                out.push_str(&format!(
                    "# column {name} ({}) left out: specs cannot hold its type\n",
                    node.field.data_type()
                ));
                column_reports("", node, None, &mut columns);
                continue;
            };
            for r in keys
                .found
                .iter()
                .filter(|r| r.table == t.name && r.column.split(", ").any(|c| c == name))
            {
                plan.notes.push(format!(
                    "{}{}: {}",
                    r.kind,
                    r.target
                        .as_ref()
                        .map_or(String::new(), |t| format!(" -> {t}")),
                    r.evidence
                ));
            }
            let overridden = child.is_some_and(|c| {
                &c.column == name || c.position.as_ref().is_some_and(|p| &p.0 == name)
            }) || keys
                .refs
                .iter()
                .any(|r| r.table == t.name && &r.column == name)
                || keys
                    .offsets
                    .iter()
                    .any(|o| o.table == t.name && &o.column == name);
            if overridden {
                plan.siblings.clear();
            }
            hidden.append(&mut plan.siblings);
            if let Some(c) = child.filter(|c| &c.column == name) {
                plan.generator = None;
                plan.null_rate = 0.0;
                plan.extra.push(("parent".into(), q(&c.parent_column)));
                plan.model = format!("the parent's {}", c.parent_column);
            } else if let Some((_, start)) = child
                .and_then(|c| c.position.as_ref())
                .filter(|p| &p.0 == name)
            {
                plan.generator = None;
                plan.extra.push(("position".into(), start.to_string()));
                plan.model = format!("position within the parent, from {start}");
            } else if let Some(r) = keys
                .refs
                .iter()
                .find(|r| r.table == t.name && &r.column == name)
            {
                // Balanced picks are for tables of their own rows, of parents
                // of their own rows.
                let balanced =
                    r.balanced && child.is_none() && !keys.children.contains_key(&r.parent);
                let pick = match r.zipf {
                    Some(s) => format!(", zipf = {{ s = {} }}", model::float(s)),
                    None if balanced => ", balanced = true".to_string(),
                    None => String::new(),
                };
                plan.generator = Some(Gen {
                    key: "ref",
                    value: format!(
                        "{{ table = {}, field = {}{pick} }}",
                        q(&names[r.parent.as_str()]),
                        q(&r.parent_column)
                    ),
                });
                plan.model = format!("a reference to {}.{}", r.parent, r.parent_column);
            } else if let Some(o) = keys
                .offsets
                .iter()
                .find(|o| o.table == t.name && &o.column == name)
            {
                let hidden_name = format!("{name}__offset");
                plan.generator = Some(Gen {
                    key: "expr",
                    value: q(&format!(
                        "{} + {}",
                        model::ident(&o.from),
                        model::ident(&hidden_name)
                    )),
                });
                plan.model = format!("{} plus {}", o.from, o.generator.inline());
                hidden.push(FieldPlan {
                    name: hidden_name,
                    type_text: "int64".into(),
                    notes: vec![format!("days from {} to {name}", o.from)],
                    null_rate: 0.0,
                    nullable: false,
                    hidden: true,
                    generator: Some(o.generator.clone()),
                    extra: Vec::new(),
                    nested: Nested::None,
                    model: String::new(),
                    siblings: Vec::new(),
                    whens: Vec::new(),
                });
            }
            if !overridden
                && let Some(c) = keys
                    .cases
                    .iter()
                    .find(|c| c.table == t.name && &c.column == name)
                && let Some(by) = t.columns.iter().find(|n| n.field.name() == &c.by)
                && let Some(by_leaf) = by.leaf()
                && let Some(own) = node.leaf()
            {
                for (values, case) in &c.cases {
                    let is: Vec<String> = values
                        .iter()
                        .map(|v| model::category_literal(&by_leaf.class, by.field.data_type(), v))
                        .collect();
                    let set = match case {
                        keys::Case::Value(v) => format!(
                            "constant = {}",
                            model::category_literal(&own.class, node.field.data_type(), v)
                        ),
                        keys::Case::NullRate(r) => format!("null_rate = {}", model::float(*r)),
                    };
                    plan.whens.push(format!(
                        "field = {}\nis = [{}]\n{set}\n",
                        q(&c.by),
                        is.join(", ")
                    ));
                }
                plan.model = format!("{}; cases by {}", plan.model, c.by);
            }
            column_reports("", node, Some(&plan), &mut columns);
            model::write_field(&mut out, "tables.fields", &plan, false);
        }
        for h in &hidden {
            model::write_field(&mut out, "tables.fields", h, false);
        }
        reports.push(TableReport {
            name: t.name.clone(),
            rows: t.rows,
            scanned: t.scanned,
            files: Vec::new(),
            columns,
        });
    }
    Ok((out, reports))
}
