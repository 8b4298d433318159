//! Compilation: a spec (or a dataset's table) turned into the tree of
//! nodes the generator runs, with the tables its references read compiled
//! once each, on first use.

use std::sync::Arc;

use arrow_array::{ArrayRef, StringArray};
use arrow_schema::{DataType, Field as ArrowField, Fields, Schema};

use super::arrays::numbers;
use super::draw::{below, coprime_from, coprime_step, stream_id, table_seed, threshold};
use super::generator::{Hints, SpecGenerator};
use super::node::{
    Cases, ChildRows, CountTests, Counts, Expand, Leaf, Node, NodeKind, Out, TableEval,
};
use super::sample::{RefDraw, RefPick, Sampler, cardinality, compile_sampler, length_sampler};
use super::scratch::SpecScratch;
use super::sequences::{sequence_limits, too_few_values};
use super::strata::Strata;
use super::{DICTIONARY_LIMIT, NULL_CODE};
use crate::Error;
use crate::dist::{Alias, Zipf};
use crate::facts::MAX_LENGTH;
use crate::model::class::Class;
use crate::model::expression::TNode;
use crate::model::query::{categories, category_values, depends_on, max_length};
use crate::model::{
    Calendar, CalendarPart, Condition, Dataset, Field, Generator, Kind, Pick, Reference, Rows,
    Spec, Table, Value,
};
use crate::rng::StreamKey;

/// The tables references may read: none for a single spec; for a dataset,
/// each compiled once, on first use.
pub(super) struct Parents<'a> {
    pub(super) dataset: Option<(&'a Dataset, u64, f64)>,
    /// The table being compiled (for `parent` and `position`).
    pub(super) current: Option<usize>,
    pub(super) built: Shared<String, Arc<TableEval>>,
    /// Alias tables of weighted references, by table and weight field.
    pub(super) weights: Shared<(String, String), Arc<Alias>>,
    /// Child tables compiled for the aggregates of their parent, by name
    /// (the aggregates of one table share them, and their evaluations).
    pub(super) aggregated: Shared<String, Arc<TableEval>>,
    /// Compiling a table that a reference reads (its own aggregates are
    /// then not compiled: they could read back). A table an aggregate
    /// reads compiles its aggregates: they read further down the tree of
    /// child tables, never back.
    pub(super) in_reference: bool,
}

/// A map shared by the [`Parents`] of one compilation.
pub(super) type Shared<K, V> = std::rc::Rc<std::cell::RefCell<std::collections::HashMap<K, V>>>;

/// The value of `key` in `map`, made by `make` and kept there the first
/// time. The map is not borrowed while `make` runs: compiling a table
/// may look up (and fill) the same map.
fn cached<K: std::hash::Hash + Eq, V: Clone>(
    map: &Shared<K, V>,
    key: K,
    make: impl FnOnce() -> Result<V, Error>,
) -> Result<V, Error> {
    if let Some(v) = map.borrow().get(&key) {
        return Ok(v.clone());
    }
    let v = make()?;
    map.borrow_mut().insert(key, v.clone());
    Ok(v)
}

impl<'a> Parents<'a> {
    pub(super) fn none() -> Self {
        Parents {
            dataset: None,
            current: None,
            built: Default::default(),
            weights: Default::default(),
            aggregated: Default::default(),
            in_reference: false,
        }
    }

    /// The same dataset and compiled tables, compiling table `t`.
    pub(super) fn for_table(&self, t: usize) -> Self {
        Parents {
            dataset: self.dataset,
            current: Some(t),
            built: self.built.clone(),
            weights: self.weights.clone(),
            aggregated: self.aggregated.clone(),
            in_reference: true,
        }
    }

    /// The same dataset and compiled tables, compiling child table `t` of
    /// the current one for an aggregate: its own aggregates (of its
    /// children, further down) are compiled too.
    pub(super) fn for_child(&self, t: usize) -> Self {
        Parents {
            dataset: self.dataset,
            current: Some(t),
            built: self.built.clone(),
            weights: self.weights.clone(),
            aggregated: self.aggregated.clone(),
            in_reference: self.in_reference,
        }
    }

    /// `tree` (of field or table `path`) with `scale()` and `rows('t')`
    /// set for this run: 1 and no tables outside a dataset.
    pub(super) fn for_run(&self, tree: TNode, path: &str) -> Result<TNode, Error> {
        let (scale, dataset) = match self.dataset {
            Some((d, _, s)) => (s, Some(d)),
            None => (1.0, None),
        };
        let rows = |name: &str| {
            let d = dataset?;
            d.tables[d.table(name)?].rows.as_ref().map(|r| r.at(scale))
        };
        tree.with_run(scale, &rows)
            .map_err(|m| Error::InvalidDistribution(format!("field {path}: {m}")))
    }

    /// The node of aggregate `a` of field `path`.
    pub(super) fn aggregate(
        &self,
        a: &crate::model::Aggregate,
        path: &str,
    ) -> Result<NodeKind, Error> {
        if self.in_reference {
            return Ok(NodeKind::Unreadable(format!(
                "field {path} aggregates table {}; a reference cannot read it",
                a.table
            )));
        }
        let bad = || {
            Error::InvalidDistribution(format!(
                "field {path}: `aggregate` over {}, which is not a child table of this one in the dataset",
                a.table
            ))
        };
        let (dataset, seed, scale) = self.dataset.ok_or_else(bad)?;
        let ci = dataset.table(&a.table).ok_or_else(bad)?;
        let c = dataset.tables[ci].children_of.as_ref().ok_or_else(bad)?;
        // Nested aggregates descend the tree of child tables, so they end
        // (a dataset built in code may skip the parser's cycle check).
        let current = self.current.map(|t| &dataset.tables[t].spec.name);
        let mut at = ci;
        for _ in 0..=dataset.tables.len() {
            match dataset.tables[at].children_of.as_ref() {
                Some(up) => at = dataset.table(&up.parent).ok_or_else(bad)?,
                None => break,
            }
        }
        if current != Some(&c.parent) || dataset.tables[at].children_of.is_some() {
            return Err(bad());
        }
        let child = cached(&self.aggregated, a.table.clone(), || {
            Ok(Arc::new(table_eval(
                dataset,
                ci,
                seed,
                scale,
                &self.for_child(ci),
            )?))
        })?;
        let field = match &a.field {
            None => None,
            Some(name) => Some(
                dataset.tables[ci]
                    .spec
                    .fields
                    .iter()
                    .position(|f| &f.name == name)
                    .ok_or_else(bad)?,
            ),
        };
        Ok(NodeKind::Aggregate {
            child,
            field,
            op: a.op,
            counts: Counts::new(dataset, ci, seed, self)?,
        })
    }

    /// The alias table of `table`'s rows weighted by its field `weight`
    /// (named `name`.`weight`), made once per run: the field is evaluated
    /// at every row (nulls weigh nothing).
    pub(super) fn weights(
        &self,
        table: &TableEval,
        name: &str,
        weight: &str,
    ) -> Result<Arc<Alias>, Error> {
        let key = (name.to_string(), weight.to_string());
        cached(&self.weights, key, || self.alias(table, name, weight))
    }

    /// What [`Self::weights`] keeps, made on its first call.
    fn alias(&self, table: &TableEval, name: &str, weight: &str) -> Result<Arc<Alias>, Error> {
        let bad = |m: String| Error::InvalidDistribution(format!("weights {name}.{weight}: {m}"));
        if table.rows > MAX_WEIGHTED_ROWS {
            return Err(bad(format!(
                "the table has {} rows; a weighted reference draws from at most {MAX_WEIGHTED_ROWS}",
                table.rows
            )));
        }
        let field = table
            .roots
            .iter()
            .position(|n| n.field.name() == weight)
            .ok_or_else(|| bad("no such field".into()))?;
        let mut values = Vec::with_capacity(table.rows as usize);
        let mut s = SpecScratch::default();
        let mut at = 0;
        while at < table.rows {
            let n = (table.rows - at).min(1 << 16);
            let ids: Vec<u64> = (at..at + n).collect();
            let a = table.evaluate(field, &ids, &mut s)?;
            numbers(&a, &mut values).map_err(bad)?;
            at += n;
        }
        if let Some(i) = values.iter().position(|w| !(*w >= 0.0 && w.is_finite())) {
            return Err(bad(format!(
                "row {i} weighs {}; weights are non-negative numbers",
                values[i]
            )));
        }
        Ok(Arc::new(
            Alias::new(&values).map_err(|e| bad(e.to_string()))?,
        ))
    }

    /// The most rows per parent row of the table being compiled, a child
    /// table (its rows' indexes are `parent * max + k`).
    pub(super) fn max_children(&self, path: &str) -> Result<u64, Error> {
        self.dataset
            .zip(self.current)
            .and_then(|((d, _, _), t)| d.tables[t].children_of.as_ref())
            .map(|c| c.max_count())
            .ok_or_else(|| {
                Error::InvalidDistribution(format!(
                    "field {path}: `parent` and `position` need a child table"
                ))
            })
    }

    /// The compiled parent of `r` (read by field `path`) and the index of
    /// its field.
    pub(super) fn resolve(
        &self,
        r: &Reference,
        path: &str,
    ) -> Result<(Arc<TableEval>, usize), Error> {
        let missing = || {
            Error::InvalidDistribution(format!(
                "field {path}: `ref` to {}.{} outside a dataset that has that table and field",
                r.table, r.field
            ))
        };
        let Some((dataset, _, scale)) = self.dataset else {
            return Err(missing());
        };
        let Some(ti) = dataset.tables.iter().position(|t| t.spec.name == r.table) else {
            return Err(missing());
        };
        let table = dataset.tables[ti]
            .spec
            .fields
            .iter()
            .position(|f| f.name == r.field);
        let Some(field) = table else {
            return Err(missing());
        };
        let t = self.table(ti, path)?;
        if t.rows == 0 && dataset.tables[ti].children_of.is_none() {
            let message = format!(
                "references table `{}`, which has no rows at scale {scale}; use a larger --scale",
                r.table
            );
            // The field's place, when it is one of the table being
            // compiled.
            let place = self.current.and_then(|c| {
                let table = &dataset.tables[c].spec;
                let f = table.walk().into_iter().find(|(f, _)| f.path == path)?.0;
                Some((table.name.as_str(), f.line))
            });
            return Err(match place {
                Some((table, line)) => {
                    Error::field(path, line, message).in_table(table, &dataset.origin)
                }
                None => Error::InvalidDistribution(format!("field {path} {message}")),
            });
        }
        Ok((t, field))
    }

    /// For a reference (of field `path`) to child table `name`, how a
    /// drawn row of its root table reaches one of its rows; `None` for a
    /// table with rows of its own.
    pub(super) fn child_rows(&self, name: &str, path: &str) -> Result<Option<ChildRows>, Error> {
        let Some((dataset, _, scale)) = self.dataset else {
            return Ok(None);
        };
        let Some(child) = dataset.table(name) else {
            return Ok(None);
        };
        if dataset.tables[child].children_of.is_none() {
            return Ok(None);
        }
        let (levels, at) = self.generations(child)?;
        let root = &dataset.tables[at].spec.name;
        let rows = dataset.tables[at].rows.as_ref().map_or(0, |r| r.at(scale));
        if rows == 0 {
            return Err(Error::InvalidDistribution(format!(
                "field {path} references child table `{name}`, whose root table `{root}` has no rows at scale {scale}; use a larger --scale"
            )));
        }
        Ok(Some(ChildRows {
            rows,
            levels,
            table: name.to_string(),
        }))
    }

    /// The counts of each generation from table `table`'s root ancestor
    /// down to it (none for a table with rows of its own), and that root
    /// table's index (the parser rejects cycles; the bound guards tables
    /// built in code).
    pub(super) fn generations(&self, table: usize) -> Result<(Vec<Counts>, usize), Error> {
        let Some((dataset, seed, _)) = self.dataset else {
            return Ok((Vec::new(), table));
        };
        let mut levels = Vec::new();
        let mut at = table;
        while let Some(c) = &dataset.tables[at].children_of {
            levels.push(Counts::new(dataset, at, seed, self)?);
            at = dataset
                .table(&c.parent)
                .ok_or_else(|| Error::InvalidDistribution(format!("no table {}", c.parent)))?;
            if levels.len() > dataset.tables.len() {
                return Err(Error::InvalidDistribution(format!(
                    "table {} is its own ancestor",
                    dataset.tables[table].spec.name
                )));
            }
        }
        levels.reverse();
        Ok((levels, at))
    }

    /// Table `ti` compiled to be read at any row (once per run), for
    /// `path` (a field or table, in messages).
    pub(super) fn table(&self, ti: usize, path: &str) -> Result<Arc<TableEval>, Error> {
        let Some((dataset, seed, scale)) = self.dataset else {
            return Err(Error::InvalidDistribution(format!(
                "{path} reads another table outside a dataset"
            )));
        };
        let name = dataset.tables[ti].spec.name.clone();
        cached(&self.built, name, || {
            Ok(Arc::new(table_eval(
                dataset,
                ti,
                seed,
                scale,
                &self.for_table(ti),
            )?))
        })
    }
}

/// Most rows of a table that a `weight`ed reference draws from: its
/// weights are read once, into an alias table of 16 bytes a row (256 MiB
/// at most).
pub(super) const MAX_WEIGHTED_ROWS: u64 = 1 << 24;

/// How reference `r` of field `f` (among `siblings`) draws rows of
/// `table`: its own pick, or its `via` sibling's with that sibling's
/// stream.
pub(super) fn ref_draw(
    r: &Reference,
    f: &Field,
    siblings: &[Field],
    table: &Arc<TableEval>,
    children: Option<&ChildRows>,
    seed: u64,
    parents: &Parents<'_>,
) -> Result<RefDraw, Error> {
    // A child table's rows are reached from a row of its root table.
    let rows = children.map_or(table.rows, |c| c.rows);
    let (pick, drawer) = match &r.via {
        None => (&r.pick, f.path.as_str()),
        Some(v) => match siblings.iter().find(|s| &s.name == v) {
            Some(Field {
                kind:
                    Kind::Scalar {
                        generator: Generator::Reference(sr),
                        ..
                    },
                path,
                ..
            }) => (&sr.pick, path.as_str()),
            _ => {
                return Err(Error::InvalidDistribution(format!(
                    "field {}: `via` {v} is not a sibling reference",
                    f.path
                )));
            }
        },
    };
    let pick = match pick {
        Pick::Parent => RefPick::Parent {
            max: parents.max_children(&f.path)?,
        },
        Pick::Uniform => RefPick::Uniform,
        Pick::Zipf { s } => RefPick::Zipf {
            zipf: Zipf::new(*s, rows)?,
            step: coprime_step(rows),
            // Where rank 1 lands: a row of its own per field and seed,
            // not always the table's first.
            offset: below(
                StreamKey::new(seed, stream_id(drawer, "ref offset")).first(0),
                u128::from(rows),
            ),
        },
        Pick::Balanced if children.is_some() => {
            return Err(Error::InvalidDistribution(format!(
                "field {}: a `balanced` reference cannot draw from child table {}",
                f.path, r.table
            )));
        }
        // The multiplier and offset come from the stream of Zipf's
        // offset: an order of the field's and the seed's own.
        Pick::Balanced => {
            let key = StreamKey::new(seed, stream_id(drawer, "ref offset"));
            RefPick::Balanced {
                step: coprime_from(rows, below(key.first(1), u128::from(rows))),
                offset: below(key.first(0), u128::from(rows)),
            }
        }
        Pick::Weighted { .. } if children.is_some() => {
            return Err(Error::InvalidDistribution(format!(
                "field {}: a `weight`ed reference cannot draw from child table {}",
                f.path, r.table
            )));
        }
        Pick::Weighted { field: w } => RefPick::Alias(parents.weights(table, &r.table, w)?),
    };
    let positions = (0..children.map_or(0, |c| c.levels.len()))
        .map(|l| StreamKey::new(seed, stream_id(drawer, &format!("ref position {l}"))))
        .collect();
    let offset = match &r.offset {
        Some(g) => Some((
            compile_sampler(
                g,
                Class::Int {
                    min: i64::MIN.into(),
                    max: i64::MAX.into(),
                },
            )?,
            StreamKey::new(seed, stream_id(&f.path, "offset")),
        )),
        None => None,
    };
    Ok(RefDraw {
        pick,
        key: StreamKey::new(seed, stream_id(drawer, "ref")),
        offset,
        positions,
    })
}

/// The rows whose strata a table's fields draw within: its rows at
/// `scale` when it is stratified (a table with rows of its own).
fn strata_rows(table: &Table, scale: f64) -> Option<u64> {
    let own = table.stratified && table.children_of.is_none();
    own.then(|| table.rows.as_ref().map(|r| r.at(scale)))
        .flatten()
}

/// Compiles table `ti` of `dataset` for evaluation at any rows.
pub(super) fn table_eval(
    dataset: &Dataset,
    ti: usize,
    seed: u64,
    scale: f64,
    parents: &Parents<'_>,
) -> Result<TableEval, Error> {
    let table = &dataset.tables[ti];
    let fields = &table.spec.fields;
    let g = SpecGenerator::build(
        &table.spec,
        table_seed(seed, &table.spec.name),
        parents,
        table.calendar,
        strata_rows(table, scale),
        None,
    )?;
    let closure = (0..fields.len())
        .map(|i| {
            let mut need = vec![false; fields.len()];
            let mut todo = vec![i];
            while let Some(j) = todo.pop() {
                if std::mem::replace(&mut need[j], true) {
                    continue;
                }
                for dep in depends_on(&fields[j]) {
                    if let Some(k) = fields.iter().position(|x| x.name == dep) {
                        todo.push(k);
                    }
                }
            }
            need
        })
        .collect();
    let seq_limits = g
        .seq_limits
        .into_iter()
        .filter_map(|l| {
            let top = l.path.split('.').next().unwrap_or_default();
            fields.iter().position(|f| f.name == top).map(|i| (i, l))
        })
        .collect();
    Ok(TableEval {
        id: super::node::table_eval_id(),
        name: table.spec.name.clone(),
        rows: table.rows.as_ref().map_or(0, |r| r.at(scale)),
        roots: g.roots,
        order: g.order,
        needs_codes: g.needs_codes,
        closure,
        seq_limits,
    })
}

/// Generation order of siblings (a field after those its cases read) and
/// which siblings' codes are read.
pub(super) fn order_of(fields: &[Field]) -> (Vec<usize>, Vec<bool>) {
    let n = fields.len();
    let index = |name: &str| fields.iter().position(|f| f.name == name);
    let mut needs = vec![false; n];
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for f in fields {
        for w in &f.when {
            if let Some(j) = index(&w.field) {
                needs[j] = true;
            }
        }
    }
    let deps: Vec<Vec<&str>> = fields.iter().map(depends_on).collect();
    // The parser rejects cycles, so each round places at least one field.
    while order.len() < n {
        let before = order.len();
        for i in 0..n {
            if !done[i] && deps[i].iter().all(|d| index(d).is_none_or(|j| done[j])) {
                done[i] = true;
                order.push(i);
            }
        }
        if order.len() == before {
            // A cycle (only in fields built in code): schema order.
            order.extend((0..n).filter(|i| !done[*i]));
            break;
        }
    }
    (order, needs)
}

pub(super) fn compile(
    f: &Field,
    siblings: &[Field],
    seed: u64,
    parquet_parent: &[String],
    hints: &mut Hints,
    parents: &Parents<'_>,
) -> Result<Node, Error> {
    let null_key = StreamKey::new(seed, stream_id(&f.path, "null"));
    let mut thresholds = vec![threshold(f.null_rate)];
    let mut cases = None;
    if !f.when.is_empty() {
        // Branch i is case i; the last branch is the field's own settings.
        thresholds = f
            .when
            .iter()
            .map(|w| threshold(w.null_rate.unwrap_or(f.null_rate)))
            .collect();
        thresholds.push(threshold(f.null_rate));
        let tests: Vec<_> = f
            .when
            .iter()
            .filter_map(|w| match &w.condition {
                Condition::Expr(e) => Some(
                    e.tree
                        .clone()
                        .ok_or_else(|| {
                            Error::InvalidDistribution(format!(
                                "field {}: the condition {:?} was not checked against its siblings (parse the spec)",
                                f.path, e.source
                            ))
                        })
                        .and_then(|t| parents.for_run(t, &f.path)),
                ),
                _ => None,
            })
            .collect::<Result<_, _>>()?;
        if !tests.is_empty() && tests.len() != f.when.len() {
            return Err(Error::InvalidDistribution(format!(
                "field {}: `when` cases are all conditions or all read one sibling",
                f.path
            )));
        }
        if !tests.is_empty() {
            cases = Some(Cases::Tests {
                tests,
                key: StreamKey::new(seed, stream_id(&f.path, "when")),
            });
        }
    }
    if !f.when.is_empty() && cases.is_none() {
        let default = f.when.len() as u8;
        let mut table = Box::new([default; 256]);
        let sibling = siblings
            .iter()
            .position(|s| s.name == f.when[0].field)
            .unwrap_or(0);
        for (b, w) in f.when.iter().enumerate().rev() {
            let sib = siblings
                .iter()
                .find(|s| s.name == w.field)
                .ok_or_else(|| Error::InvalidDistribution(format!("no sibling {}", w.field)))?;
            if siblings.iter().position(|s| s.name == w.field) != Some(sibling) {
                return Err(Error::InvalidDistribution(format!(
                    "field {}: all `when` cases must read the same sibling",
                    f.path
                )));
            }
            let cats = match &sib.kind {
                Kind::Scalar { generator, .. } => categories(generator).unwrap_or_default(),
                _ => Vec::new(),
            };
            for code in 0..=255u8 {
                let hit = match &w.condition {
                    Condition::IsNull(true) => code == NULL_CODE,
                    Condition::IsNull(false) => code != NULL_CODE,
                    Condition::Is(vals) => {
                        code != NULL_CODE
                            && cats.get(code as usize).is_some_and(|c| vals.contains(c))
                    }
                    Condition::Expr(_) => false,
                };
                if hit {
                    table[code as usize] = b as u8;
                }
            }
        }
        cases = Some(Cases::Codes {
            sibling,
            branch_of_code: table,
        });
    }
    let mut parquet_path = parquet_parent.to_vec();
    parquet_path.push(f.name.clone());
    let (data_type, kind) = match &f.kind {
        Kind::Scalar {
            data_type,
            generator: Generator::Reference(r),
        } => {
            let (table, field) = parents.resolve(r, &f.path)?;
            // A row's own parent row is no draw.
            let children = match r.pick {
                Pick::Parent => None,
                _ => parents.child_rows(&r.table, &f.path)?,
            };
            // One way of drawing the row per branch when cases give their
            // own `ref` (case i is branch i, the field's own the last).
            let mut draws = Vec::new();
            if f.when.iter().any(|w| w.generator.is_some()) {
                for w in &f.when {
                    let case = match &w.generator {
                        Some(Generator::Reference(c)) => c,
                        _ => r,
                    };
                    let c = children.as_ref();
                    draws.push(ref_draw(case, f, siblings, &table, c, seed, parents)?);
                }
            }
            let c = children.as_ref();
            draws.push(ref_draw(r, f, siblings, &table, c, seed, parents)?);
            (
                data_type.clone(),
                NodeKind::Ref {
                    table,
                    field,
                    draws,
                    children,
                },
            )
        }
        Kind::Scalar {
            data_type,
            generator: Generator::Aggregate(a),
        } => (data_type.clone(), parents.aggregate(a, &f.path)?),
        Kind::Scalar {
            data_type,
            generator: Generator::Expr(e),
        } => {
            let tree = e.tree.clone().ok_or_else(|| {
                Error::InvalidDistribution(format!(
                    "field {}: the expression {:?} was not checked against its siblings (parse the spec)",
                    f.path, e.source
                ))
            })?;
            let tree = parents.for_run(tree, &f.path)?;
            let reads = e
                .reads
                .iter()
                .map(|q| {
                    let read = Field {
                        name: q.name.clone(),
                        path: format!("{}.{}", f.path, q.name),
                        line: f.line,
                        kind: Kind::Scalar {
                            data_type: q.data_type.clone(),
                            generator: Generator::Reference(q.reference.clone()),
                        },
                        null_rate: 0.0,
                        nullable: true,
                        parquet: Default::default(),
                        when: Vec::new(),
                        hidden: true,
                    };
                    // Not a column: its encoding hints are dropped.
                    let mut none = Hints::default();
                    compile(&read, siblings, seed, parquet_parent, &mut none, parents)
                })
                .collect::<Result<Vec<_>, _>>()?;
            (
                data_type.clone(),
                NodeKind::Expr {
                    tree,
                    key: StreamKey::new(seed, stream_id(&f.path, "expr")),
                    reads,
                },
            )
        }
        Kind::Scalar {
            data_type,
            generator: Generator::Position(start),
        } => (
            data_type.clone(),
            NodeKind::Position {
                modulus: parents.max_children(&f.path)?,
                start: *start as i64,
            },
        ),
        Kind::Scalar {
            data_type,
            generator,
        } => {
            let class = Class::of(data_type);
            // One sampler per branch when a case replaces the generator;
            // else the one sampler serves every branch (cases then change
            // only the null rate, and the fast loops apply).
            let mut samplers = vec![];
            if f.when.iter().any(|w| w.generator.is_some()) {
                for w in &f.when {
                    samplers.push(compile_sampler(
                        w.generator.as_ref().unwrap_or(generator),
                        class,
                    )?);
                }
            }
            samplers.push(compile_sampler(generator, class)?);
            // UUIDs are bytes in binary fields.
            if matches!(data_type, DataType::Binary | DataType::FixedSizeBinary(_)) {
                for s in &mut samplers {
                    if let Sampler::SUuid { text } = s {
                        *text = false;
                    }
                }
            }
            let out = match data_type {
                DataType::Boolean => Out::Bool,
                DataType::Int8 | DataType::UInt8 => Out::W8,
                DataType::Int16 | DataType::UInt16 => Out::W16,
                DataType::Int32 | DataType::UInt32 | DataType::Date32 | DataType::Time32(_) => {
                    Out::W32
                }
                DataType::FixedSizeBinary(w) => Out::Fixed(*w as usize),
                DataType::Float32 => Out::F32,
                DataType::Float64 => Out::F64,
                DataType::Utf8 | DataType::Binary => Out::Bytes,
                DataType::LargeUtf8 => Out::LargeBytes,
                DataType::Decimal128(..) => Out::W128,
                DataType::Decimal256(..) => Out::W256,
                DataType::Dictionary(k, _) => match k.primitive_width() {
                    Some(1) => Out::W8,
                    Some(2) => Out::W16,
                    Some(4) => Out::W32,
                    _ => Out::W64,
                },
                _ => Out::W64,
            };
            let dictionary = match (data_type, generator) {
                (DataType::Dictionary(..), g) => {
                    let vals: Vec<String> = category_values(g)
                        .unwrap_or_default()
                        .iter()
                        .map(|v| match v {
                            Value::Str(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect();
                    Some(Arc::new(StringArray::from(vals)) as ArrayRef)
                }
                _ => None,
            };
            let keys_in_range = match (data_type, &dictionary) {
                (DataType::Dictionary(k, _), Some(d)) => {
                    let len = d.len() as u64;
                    let key_max = match (k.primitive_width(), k.is_signed_integer()) {
                        (Some(w), true) => (1u64 << (8 * w - 1)) - 1,
                        (Some(w), false) if w < 8 => (1u64 << (8 * w)) - 1,
                        _ => u64::MAX,
                    };
                    len > 0
                        && len - 1 <= key_max
                        && samplers.iter().all(|s| match s {
                            Sampler::IntTable { values, .. }
                            | Sampler::IntZipfTable { values, .. } => {
                                values.iter().all(|&v| v < len)
                            }
                            Sampler::IntConst(v) => *v < len,
                            Sampler::IntByRow { values, .. } => values.iter().all(|&v| v < len),
                            Sampler::Cal {
                                part: CalendarPart::DayName,
                                ..
                            } => len >= 7,
                            Sampler::Cal {
                                part: CalendarPart::MonthName,
                                ..
                            } => len >= 12,
                            _ => false,
                        })
                }
                _ => false,
            };
            let friendly = match f.parquet.dictionary {
                Some(b) => b,
                None => cardinality(generator, class).is_some_and(|c| c <= DICTIONARY_LIMIT),
            };
            if !friendly && dictionary.is_none() {
                hints.unfriendly.push(parquet_path.clone());
            }
            if !f.parquet.is_empty() {
                hints
                    .columns
                    .push((parquet_path.clone(), f.parquet.clone()));
            }
            // Sequences step by a constant (lists' elements with gaps):
            // DELTA_BINARY_PACKED stores a few bits per value where PLAIN
            // stores 4 or 8 bytes (`benches/column_encodings.py`: `event_id`,
            // 1M rows, 8 MB to 0.02 MB, and with zstd 1.02 to 0.01 MB).
            let sequence = matches!(generator, Generator::Sequence { .. })
                && f.when.is_empty()
                && matches!(
                    class,
                    Class::Int { .. } | Class::Date | Class::Timestamp(_) | Class::Time(_)
                )
                && dictionary.is_none()
                && f.parquet.dictionary != Some(true);
            if sequence {
                hints.delta.push(parquet_path.clone());
            }
            (
                data_type.clone(),
                NodeKind::Leaf(Leaf {
                    value_key: StreamKey::new(seed, stream_id(&f.path, "value")),
                    samplers,
                    out,
                    dictionary,
                    keys_in_range,
                }),
            )
        }
        Kind::Struct(children) => {
            let nodes: Vec<Node> = children
                .iter()
                .map(|c| compile(c, children, seed, &parquet_path, hints, parents))
                .collect::<Result<_, _>>()?;
            let fields = Fields::from(nodes.iter().map(|n| n.field.clone()).collect::<Vec<_>>());
            let (order, needs_codes) = order_of(children);
            (
                DataType::Struct(fields.clone()),
                NodeKind::Struct {
                    children: nodes,
                    order,
                    needs_codes,
                    fields,
                },
            )
        }
        Kind::List {
            item,
            length,
            empty_as_null,
        } => {
            let mut p = parquet_path.clone();
            p.push("list".into());
            let item = compile(item, &[], seed, &p, hints, parents)?;
            let class = Class::Int {
                min: 0,
                max: MAX_LENGTH,
            };
            (
                DataType::List(item.field.clone()),
                NodeKind::List {
                    item: Box::new(item),
                    length: length_sampler(length, class)?,
                    length_key: StreamKey::new(seed, stream_id(&f.path, "length")),
                    max_len: max_length(length).max(1),
                    empty_as_null: *empty_as_null,
                },
            )
        }
        Kind::Map { key, value, length } => {
            let mut p = parquet_path.clone();
            p.push("entries".into());
            let k = compile(key, &[], seed, &p, hints, parents)?;
            let v = compile(value, &[], seed, &p, hints, parents)?;
            let fields = Fields::from(vec![k.field.clone(), v.field.clone()]);
            let entries = Arc::new(ArrowField::new(
                "entries",
                DataType::Struct(fields.clone()),
                false,
            ));
            let class = Class::Int {
                min: 0,
                max: MAX_LENGTH,
            };
            (
                DataType::Map(entries.clone(), false),
                NodeKind::Map {
                    key: Box::new(k),
                    value: Box::new(v),
                    entries,
                    fields,
                    length: length_sampler(length, class)?,
                    length_key: StreamKey::new(seed, stream_id(&f.path, "length")),
                    max_len: max_length(length).max(1),
                },
            )
        }
    };
    Ok(Node {
        field: Arc::new(ArrowField::new(&f.name, data_type, f.nullable)),
        path: f.path.clone(),
        line: f.line,
        null_key,
        null_thresholds: thresholds,
        cases,
        kind,
    })
}

impl Counts {
    /// The counts of child table `child` of `dataset` (its parent
    /// compiled by `parents` when its cases test the parent's fields).
    pub(super) fn new(
        dataset: &Dataset,
        child: usize,
        seed: u64,
        parents: &Parents<'_>,
    ) -> Result<Counts, Error> {
        let t = &dataset.tables[child];
        let name = &t.spec.name;
        let c = t.children_of.as_ref().ok_or_else(|| {
            Error::InvalidDistribution(format!("table {name} is not a child table"))
        })?;
        let class = Class::Int {
            min: 0,
            max: MAX_LENGTH,
        };
        let mut samplers = c
            .count_when
            .iter()
            .map(|w| length_sampler(&w.count, class))
            .collect::<Result<Vec<_>, _>>()?;
        samplers.push(length_sampler(&c.count, class)?);
        let key = StreamKey::new(table_seed(seed, name), stream_id(name, "count"));
        let mut cases = None;
        if !c.count_when.is_empty() {
            let pi = dataset
                .table(&c.parent)
                .ok_or_else(|| Error::InvalidDistribution(format!("no table {}", c.parent)))?;
            let parent_fields = &dataset.tables[pi].spec.fields;
            let mut fields = Vec::new();
            let mut tests = Vec::new();
            for w in &c.count_when {
                let tree = w.condition.tree.clone().ok_or_else(|| {
                    Error::InvalidDistribution(format!(
                        "table {name}: the `count` condition {:?} was not checked against its parent's fields (parse the dataset)",
                        w.condition.source
                    ))
                })?;
                tests.push(parents.for_run(tree, name)?);
                for input in &w.condition.inputs {
                    let fi = parent_fields
                        .iter()
                        .position(|f| &f.name == input)
                        .ok_or_else(|| {
                            Error::InvalidDistribution(format!("no field {}.{input}", c.parent))
                        })?;
                    if !fields.contains(&fi) {
                        fields.push(fi);
                    }
                }
            }
            cases = Some(CountTests {
                parent: parents.table(pi, name)?,
                fields,
                tests,
                key: StreamKey::new(table_seed(seed, name), stream_id(name, "count when")),
            });
        }
        Ok(Counts {
            samplers,
            key,
            max: c.max_count(),
            cases,
        })
    }
}

impl SpecGenerator {
    /// Compiles `spec` for `seed`.
    ///
    /// # Errors
    /// [`Error::InvalidDistribution`] for parameters a checked spec never
    /// holds.
    pub fn new(spec: &Spec, seed: u64) -> Result<Self, Error> {
        Self::build(
            &*spec.at_run(1.0)?,
            seed,
            &Parents::none(),
            None,
            None,
            None,
        )
    }

    /// [`SpecGenerator::new`], with the top-level fields named in
    /// `salted` drawing from streams keyed by `salt` as well: the same
    /// rows, those fields drawn again (and the fields computed from them
    /// computed again). A history's version `v` of its updated fields.
    ///
    /// # Errors
    /// As [`SpecGenerator::new`].
    pub fn salted(spec: &Spec, seed: u64, salted: &[String], salt: u64) -> Result<Self, Error> {
        Self::build(
            &*spec.at_run(1.0)?,
            seed,
            &Parents::none(),
            None,
            None,
            Some((salted, salt)),
        )
    }

    /// Compiles table `table` of `dataset` for `seed` at `scale` (which
    /// sets the row counts its references draw from). A table of a
    /// multi-table dataset draws from streams of its own; the one table
    /// of a plain spec is [`SpecGenerator::new`] of that spec.
    ///
    /// # Errors
    /// As [`SpecGenerator::new`], and [`Error::InvalidDistribution`] when
    /// a referenced table has no rows at `scale`.
    pub fn for_table(
        dataset: &Dataset,
        table: usize,
        seed: u64,
        scale: f64,
    ) -> Result<Self, Error> {
        Self::for_table_salted(dataset, table, seed, scale, None)
    }

    /// [`SpecGenerator::for_table`], with the top-level fields named in
    /// `salted.0` drawing from streams keyed by `salted.1` as well (see
    /// [`SpecGenerator::salted`]); the tables it reads keep their own
    /// streams.
    ///
    /// # Errors
    /// As [`SpecGenerator::for_table`].
    pub fn for_table_salted(
        dataset: &Dataset,
        table: usize,
        seed: u64,
        scale: f64,
        salted: Option<(&[String], u64)>,
    ) -> Result<Self, Error> {
        let dataset = &*dataset.at_scale(scale)?;
        let t = dataset.tables.get(table).ok_or_else(|| {
            Error::InvalidDistribution(format!("the dataset has no table {table}"))
        })?;
        if !dataset.multi_table {
            let mut g = match salted {
                None => Self::new(&t.spec, seed)?,
                Some((fields, salt)) => Self::salted(&t.spec, seed, fields, salt)?,
            };
            g.origin.clone_from(&dataset.origin);
            return Ok(g);
        }
        let parents = Parents {
            dataset: Some((dataset, seed, scale)),
            current: Some(table),
            built: Default::default(),
            weights: Default::default(),
            aggregated: Default::default(),
            in_reference: false,
        };
        let mut g = Self::build(
            &t.spec,
            table_seed(seed, &t.spec.name),
            &parents,
            t.calendar,
            strata_rows(t, scale),
            salted,
        )?;
        g.origin.clone_from(&dataset.origin);
        if let (Some((n, field)), Some(rows)) = (&g.row_limit, &t.rows) {
            let want = rows.at(scale);
            if want > *n {
                return Err(too_few_values(&t.spec.name, field, *n, want));
            }
        }
        let (counts, at) = parents.generations(table)?;
        g.expand = counts.into_iter().map(|counts| Expand { counts }).collect();
        // Rows that do not depend on the scale are checked now (a
        // dimension's, a calendar's, and their child tables').
        if let Some(Rows::Fixed(n)) = dataset.tables[at].rows {
            g.check_rows(n)?;
        }
        Ok(g)
    }

    /// Compiles `spec` for `seed`: a table's with its `calendar`, and
    /// with `strata` rows when it is stratified (its top-level fields'
    /// uniform numbers drawn within strata of so many rows).
    pub(super) fn build(
        spec: &Spec,
        seed: u64,
        parents: &Parents<'_>,
        calendar: Option<Calendar>,
        strata: Option<u64>,
        salted: Option<(&[String], u64)>,
    ) -> Result<Self, Error> {
        let mut hints = Hints::default();
        let mut roots: Vec<Node> = spec
            .fields
            .iter()
            .map(|f| {
                // A hidden field is no column: its encoding hints are dropped.
                let mut none = Hints::default();
                let hints = if f.hidden { &mut none } else { &mut hints };
                // A salted field draws from streams of its own seed.
                let seed = match salted {
                    Some((names, salt)) if names.contains(&f.name) => {
                        crate::rng::mix64(seed ^ crate::rng::mix64(salt ^ 0x5a17_ed00_c4a9_e5e1))
                    }
                    _ => seed,
                };
                let mut node = compile(f, &spec.fields, seed, &[], hints, parents)?;
                // Each field's strata are ordered by a multiplier and an
                // offset of its own and the seed's.
                let own =
                    |rows| Strata::new(rows, StreamKey::new(seed, stream_id(&f.path, "strata")));
                if let Some(strata) = strata.and_then(own) {
                    node.stratify(strata);
                }
                Ok(node)
            })
            .collect::<Result<_, Error>>()?;
        if let Some(c) = calendar {
            for n in &mut roots {
                n.set_calendar_start(c.start);
            }
        }
        // The fewest `values_by_row` of a field without `cycle`: no row
        // past them can be generated.
        fn limit(fields: &[Field], out: &mut Option<(u64, String)>) {
            for f in fields {
                match &f.kind {
                    Kind::Struct(children) => limit(children, out),
                    Kind::Scalar { generator, .. } => {
                        let gens = std::iter::once(generator)
                            .chain(f.when.iter().filter_map(|w| w.generator.as_ref()));
                        for g in gens {
                            if let Generator::ByRow {
                                values,
                                cycle: false,
                            } = g
                            {
                                let n = values.len() as u64;
                                if out.as_ref().is_none_or(|(m, _)| n < *m) {
                                    *out = Some((n, f.path.clone()));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut row_limit = None;
        limit(&spec.fields, &mut row_limit);
        let mut seq_limits = Vec::new();
        sequence_limits(&spec.fields, 1, &mut seq_limits);
        let written: Vec<usize> = (0..roots.len())
            .filter(|&i| !spec.fields[i].hidden)
            .collect();
        let schema = Arc::new(Schema::new(
            written
                .iter()
                .map(|&i| roots[i].field.clone())
                .collect::<Vec<_>>(),
        ));
        let (order, needs_codes) = order_of(&spec.fields);
        Ok(SpecGenerator {
            name: spec.name.clone(),
            schema,
            roots,
            order,
            needs_codes,
            written,
            hints,
            expand: Vec::new(),
            row_limit,
            seq_limits,
            origin: String::new(),
        })
    }
}
