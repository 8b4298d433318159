//! Numbers computed once per run: a spec may write a bound, start, step,
//! constant or child count (`max = "1000 * scale()"`), or a table's row
//! count (`rows = "greatest(5, 25 * scale())"`), as SQL over literals,
//! `scale()` and `rows('t')`. Before a table is compiled, its dataset is
//! made concrete at the run's scale ([`Dataset::at_scale`]): row counts
//! first (tables in the order their `rows('t')` need), then every
//! [`Value::Run`], each checked as the parser checks a written value
//! (the type's range, `uniform`'s `min` below `max`), with the spec's
//! file, line and field in the error.

use std::borrow::Cow;

use arrow_array::{Array, cast::AsArray, types};
use arrow_schema::DataType;

use crate::Error;
use crate::expr::{Inputs, evaluate};
use crate::facts::MAX_LENGTH;
use crate::model::class::Class;
use crate::model::expression::{ETy, NodeK, TNode};
use crate::model::{Dataset, Field, Generator, Kind, Rows, RunValue, Spec, Value, round_count};
use crate::rng::StreamKey;

impl Dataset {
    /// This dataset at `scale`: every [`Rows::Expr`] made [`Rows::Fixed`]
    /// and every [`Value::Run`] replaced by its value (borrowed when there
    /// is none).
    ///
    /// # Errors
    /// [`Error::Field`] (or [`Error::InvalidDistribution`] for a row
    /// count) naming the spec's file and line: a value outside its type's
    /// range, a `uniform` whose `min` passes its `max`, a negative or
    /// non-finite row count, `rows('t')` of a table with no rows of its
    /// own, row counts that read each other.
    pub fn at_scale(&self, scale: f64) -> Result<Cow<'_, Dataset>, Error> {
        let exprs = self
            .tables
            .iter()
            .any(|t| matches!(t.rows, Some(Rows::Expr { .. })));
        if !exprs && !self.tables.iter().any(table_has_runs) {
            return Ok(Cow::Borrowed(self));
        }
        let mut d = self.clone();
        d.fix_rows(scale)?;
        let counts: Vec<(String, Option<u64>)> = d
            .tables
            .iter()
            .map(|t| (t.spec.name.clone(), t.rows.as_ref().map(|r| r.at(scale))))
            .collect();
        let rows = |name: &str| counts.iter().find(|(n, _)| n == name).and_then(|(_, r)| *r);
        let origin = d.origin.clone();
        for t in &mut d.tables {
            let table = t.spec.name.clone();
            let run = Run { scale, rows: &rows };
            run.fields(&mut t.spec.fields)
                .map_err(|e| e.in_table(&table, &origin))?;
            if let Some(c) = &mut t.children_of {
                let class = Class::Int {
                    min: 0,
                    max: MAX_LENGTH,
                };
                let at = ("count", t.line);
                run.generator(&mut c.count, &DataType::Int64, class, at)
                    .map_err(|e| e.in_table(&table, &origin))?;
                for case in &mut c.count_when {
                    run.generator(
                        &mut case.count,
                        &DataType::Int64,
                        class,
                        ("count", case.line),
                    )
                    .map_err(|e| e.in_table(&table, &origin))?;
                }
            }
        }
        Ok(Cow::Owned(d))
    }

    /// Makes every [`Rows::Expr`] a [`Rows::Fixed`]: a table's after those
    /// its `rows('t')` read.
    fn fix_rows(&mut self, scale: f64) -> Result<(), Error> {
        loop {
            let mut progress = false;
            let mut waiting = None;
            for i in 0..self.tables.len() {
                let Some(Rows::Expr { value, per_scale }) = &self.tables[i].rows else {
                    continue;
                };
                let (value, per_scale) = (value.clone(), *per_scale);
                let this: &Dataset = self;
                let pending = |name: &str| {
                    this.table(name)
                        .is_some_and(|t| matches!(this.tables[t].rows, Some(Rows::Expr { .. })))
                };
                if let Some(name) = rows_read(&value.tree).into_iter().find(|n| pending(n)) {
                    waiting.get_or_insert((i, name));
                    continue;
                }
                let known = |name: &str| {
                    let t = this.table(name)?;
                    this.tables[t].rows.as_ref().map(|r| r.at(scale))
                };
                let fail = |m: String| {
                    Error::InvalidDistribution(format!(
                        "{}:{}: table `{}`: `{}` = {:?}: {m}",
                        this.origin, value.line, this.tables[i].spec.name, value.key, value.source
                    ))
                };
                let x = value.number(scale, &known).map_err(fail)?;
                let n = if per_scale { x * scale } else { x };
                if !(n.is_finite() && n >= 0.0) {
                    return Err(fail(format!(
                        "gives {n} rows at scale {scale}; a row count is a number from 0 up"
                    )));
                }
                self.tables[i].rows = Some(Rows::Fixed(round_count(n)));
                progress = true;
            }
            match (progress, waiting) {
                (_, None) => return Ok(()),
                (true, Some(_)) => {}
                (false, Some((i, name))) => {
                    let t = &self.tables[i];
                    return Err(Error::InvalidDistribution(format!(
                        "{}:{}: table `{}`: its row count reads rows('{name}'), whose row count reads it back",
                        self.origin, t.line, t.spec.name
                    )));
                }
            }
        }
    }
}

impl Spec {
    /// This spec with every [`Value::Run`] replaced by its value at
    /// `scale` (a plain spec's: 1, with no tables to read).
    pub(crate) fn at_run(&self, scale: f64) -> Result<Cow<'_, Spec>, Error> {
        if !self.fields.iter().any(field_has_runs) {
            return Ok(Cow::Borrowed(self));
        }
        let mut s = self.clone();
        Run {
            scale,
            rows: &|_| None,
        }
        .fields(&mut s.fields)?;
        Ok(Cow::Owned(s))
    }
}

fn table_has_runs(t: &crate::model::Table) -> bool {
    t.spec.fields.iter().any(field_has_runs)
        || t.children_of.as_ref().is_some_and(|c| {
            generator_has_runs(&c.count)
                || c.count_when.iter().any(|w| generator_has_runs(&w.count))
        })
}

fn field_has_runs(f: &Field) -> bool {
    let own = match &f.kind {
        Kind::Scalar { generator, .. } => generator_has_runs(generator),
        Kind::Struct(fields) => fields.iter().any(field_has_runs),
        Kind::List { item, .. } => field_has_runs(item),
        Kind::Map { key, value, .. } => field_has_runs(key) || field_has_runs(value),
    };
    own || f
        .when
        .iter()
        .any(|w| w.generator.as_ref().is_some_and(generator_has_runs))
}

fn generator_has_runs(g: &Generator) -> bool {
    match g {
        Generator::Constant(v) => matches!(v, Value::Run(_)),
        Generator::Uniform { min, max } => {
            matches!(min, Value::Run(_)) || matches!(max, Value::Run(_))
        }
        Generator::Sequence { start, step } => {
            matches!(start, Value::Run(_)) || matches!(step, Value::Run(_))
        }
        _ => false,
    }
}

/// The tables a tree reads with `rows('t')`.
fn rows_read(tree: &TNode) -> Vec<String> {
    let mut names = Vec::new();
    tree.clone().visit_mut(&mut |t| {
        if let NodeK::Rows(n) = &t.kind
            && !names.contains(n)
        {
            names.push(n.clone());
        }
    });
    names
}

/// One run's scale and table row counts, for [`Value::Run`]s.
struct Run<'a> {
    scale: f64,
    rows: &'a dyn Fn(&str) -> Option<u64>,
}

impl Run<'_> {
    /// Resolves the values of `fields` and of their children and cases.
    fn fields(&self, fields: &mut [Field]) -> Result<(), Error> {
        for f in fields {
            let at = (f.path.as_str(), f.line);
            match &mut f.kind {
                Kind::Scalar {
                    data_type,
                    generator,
                } => {
                    let class = Class::of(data_type);
                    self.generator(generator, data_type, class, at)?;
                    for w in &mut f.when {
                        if let Some(g) = &mut w.generator {
                            self.generator(g, data_type, class, (at.0, w.line))?;
                        }
                    }
                }
                Kind::Struct(children) => self.fields(children)?,
                Kind::List { item, .. } => self.fields(std::slice::from_mut(item))?,
                Kind::Map { key, value, .. } => {
                    self.fields(std::slice::from_mut(key))?;
                    self.fields(std::slice::from_mut(value))?;
                }
            }
        }
        Ok(())
    }

    /// Resolves the values of one generator of a leaf of type `to` (class
    /// `class`) and checks them as the parser checks written ones; `at`
    /// is the field (or `count`) and line for errors.
    fn generator(
        &self,
        g: &mut Generator,
        to: &DataType,
        class: Class,
        at: (&str, usize),
    ) -> Result<(), Error> {
        let fail = |line: usize, m: String| Error::field(at.0, line, m);
        let one = |v: &mut Value, class: Class| -> Result<(), Error> {
            let Value::Run(r) = v else {
                return Ok(());
            };
            let value = r
                .value(to, class, self.scale, self.rows)
                .map_err(|m| fail(r.line, format!("`{}` = {:?}: {m}", r.key, r.source)))?;
            *v = value;
            Ok(())
        };
        match g {
            Generator::Constant(v) => one(v, class),
            Generator::Sequence { start, step } => {
                one(start, class)?;
                one(step, class.step())
            }
            Generator::Uniform { min, max } => {
                let was = (
                    min.display_as(to).to_string(),
                    max.display_as(to).to_string(),
                );
                one(min, class)?;
                one(max, class)?;
                if Value::uniform_bounds(min, max) {
                    return Ok(());
                }
                Err(fail(
                    at.1,
                    format!(
                        "uniform needs min below max; `min` = {} and `max` = {} give {} and {} at scale {}",
                        was.0,
                        was.1,
                        min.display_as(to),
                        max.display_as(to),
                        self.scale
                    ),
                ))
            }
            _ => Ok(()),
        }
    }
}

impl RunValue {
    /// The value at `scale` with table row counts `rows`, for a leaf of
    /// type `to` and class `class`: integers rounded to the nearest (halves
    /// away from zero), decimals in units of their scale, each within the
    /// class's range.
    fn value(
        &self,
        to: &DataType,
        class: Class,
        scale: f64,
        rows: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<Value, String> {
        match class {
            Class::Float => self.number(scale, rows).map(Value::Float),
            Class::Decimal { scale: s, max } => {
                let tree = self.tree.clone().with_run(scale, rows)?;
                let a = one_row(&tree, &DataType::Decimal128(38, s as i8))?;
                let a = a
                    .as_primitive_opt::<types::Decimal128Type>()
                    .ok_or("gives no decimal")?;
                let v = a.value(0);
                if v.unsigned_abs() > max.unsigned_abs() {
                    return Err(format!(
                        "gives {} at scale {scale}, outside the type {to}",
                        Value::Int(v).display_as(to)
                    ));
                }
                Ok(Value::Int(v))
            }
            _ => {
                let Some((lo, hi)) = class.int_range() else {
                    return Err(format!("cannot fill a field of type {to}"));
                };
                let v = if self.tree.ty == ETy::Int {
                    let tree = self.tree.clone().with_run(scale, rows)?;
                    let a = one_row(&tree, &DataType::Int64)?;
                    i128::from(a.as_primitive::<types::Int64Type>().value(0))
                } else {
                    let x = self.number(scale, rows)?.round();
                    if !x.is_finite() || x.abs() > 1e38 {
                        return Err(format!("gives {x} at scale {scale}"));
                    }
                    x as i128
                };
                if !(lo..=hi).contains(&v) {
                    return Err(format!(
                        "gives {v} at scale {scale}, outside the range {lo}..={hi} it must be in"
                    ));
                }
                Ok(Value::Int(v))
            }
        }
    }

    /// The value as a float at `scale` with table row counts `rows`.
    fn number(&self, scale: f64, rows: &dyn Fn(&str) -> Option<u64>) -> Result<f64, String> {
        let tree = self.tree.clone().with_run(scale, rows)?;
        let a = one_row(&tree, &DataType::Float64)?;
        Ok(a.as_primitive::<types::Float64Type>().value(0))
    }
}

/// `tree` (with no columns) evaluated once, as type `to`; an error when
/// it is null.
fn one_row(tree: &TNode, to: &DataType) -> Result<arrow_array::ArrayRef, String> {
    let inputs = Inputs {
        columns: &[],
        ids: &[0],
        key: StreamKey::new(0, 0),
    };
    let a = evaluate(tree, &inputs, to).map_err(|e| e.to_string())?;
    if a.len() != 1 || a.is_null(0) {
        return Err("gives no value (null)".into());
    }
    Ok(a)
}
