//! Qualified names (`parent.x`, `ps.x`): expressions and `count` cases
//! that read other rows, checked once the dataset's tables are known.

use arrow_schema::DataType;

use super::fields::check_cycles;
use super::reader::P;
use super::siblings::{Others, Shape};
use crate::expr;
use crate::model::expression::ETy;
use crate::model::query::is_aggregate;
use crate::model::query::kind_type;
use crate::model::{Field, Kind, SpecError, Table};

/// Checks the expressions left for when the tables are known (those
/// that read qualified names), at every level of `fields`.
pub(super) fn resolve_qualified(
    p: &P<'_>,
    fields: &mut [Field],
    top: &Others<'_>,
    nested: &Others<'_>,
) -> Result<(), SpecError> {
    fn descend(p: &P<'_>, f: &mut Field, nested: &Others<'_>) -> Result<(), SpecError> {
        match &mut f.kind {
            Kind::Struct(children) => resolve_qualified(p, children, nested, nested),
            Kind::List { item, .. } => descend(p, item, nested),
            Kind::Map { key, value, .. } => {
                descend(p, key, nested)?;
                descend(p, value, nested)
            }
            Kind::Scalar { .. } => Ok(()),
        }
    }
    p.resolve_expressions(fields, Some(top))?;
    check_cycles(p, fields)?;
    for f in fields.iter_mut() {
        descend(p, f, nested)?;
    }
    Ok(())
}

/// Checks the conditions of child tables' `count` cases against their
/// parent table's top-level fields.
pub(super) fn resolve_count_cases(p: &P<'_>, tables: &mut [Table]) -> Result<(), SpecError> {
    for ti in 0..tables.len() {
        let Some(c) = &tables[ti].children_of else {
            continue;
        };
        if c.count_when.is_empty() {
            continue;
        }
        let Some(pi) = tables.iter().position(|t| t.spec.name == c.parent) else {
            continue;
        };
        let fields: Vec<(String, DataType)> = tables[pi]
            .spec
            .fields
            .iter()
            .map(|f| (f.name.clone(), kind_type(&f.kind)))
            .collect();
        let readable: Vec<(&str, &DataType)> = fields
            .iter()
            .filter(|(_, d)| ETy::of(d).is_some())
            .map(|(n, d)| (n.as_str(), d))
            .collect();
        let index_of = |name: &str| fields.iter().position(|(n, _)| n == name);
        let aggregates: Vec<String> = tables[pi]
            .spec
            .fields
            .iter()
            .filter(|f| is_aggregate(f))
            .map(|f| f.name.clone())
            .collect();
        let tname = tables[ti].spec.name.clone();
        let Some(c) = &mut tables[ti].children_of else {
            continue;
        };
        for case in &mut c.count_when {
            let at = |col: u64, m: String| {
                p.err_at(
                    case.line,
                    None,
                    format!("table `{tname}`: `count` condition at column {col}: {m}"),
                )
            };
            let plain = |q: &str, x: &str| {
                Err(format!(
                    "`{q}.{x}`: a `count` condition reads the parent row's fields by their names"
                ))
            };
            let e = &mut case.condition;
            let (tree, inputs, _) = expr::check(&e.source, &readable, None, &plain)
                .map_err(|x| at(x.column, x.message))?;
            if !expr::is_test(&tree) {
                return Err(at(1, expr::not_a_test(&tree)));
            }
            if let Some(a) = inputs.iter().find(|n| aggregates.contains(n)) {
                return Err(at(
                    1,
                    format!(
                        "`{a}` is an aggregate of the parent's children; a `count` condition cannot read it (the counts would depend on it)"
                    ),
                ));
            }
            e.tree = Some(tree.with_columns(&|i| index_of(readable[i].0).unwrap_or(i)));
            e.inputs = inputs;
        }
    }
    Ok(())
}

/// [`resolve_qualified`] for every table of a dataset (or a plain spec's
/// one, where no qualified name can be read).
pub(super) fn resolve_qualified_tables(p: &P<'_>, tables: &mut [Table]) -> Result<(), SpecError> {
    let shapes: Vec<(String, Vec<Shape>)> = tables
        .iter()
        .map(|t| {
            let fields = t.spec.fields.iter();
            let fields = fields.map(|f| (f.name.clone(), kind_type(&f.kind), is_aggregate(f)));
            (t.spec.name.clone(), fields.collect())
        })
        .collect();
    for t in tables.iter_mut() {
        let parent = t.children_of.as_ref().map(|c| c.parent.clone());
        let top = Others {
            tables: &shapes,
            parent: parent.as_deref(),
        };
        let nested = Others {
            tables: &shapes,
            parent: None,
        };
        let name = t.spec.name.clone();
        resolve_qualified(p, &mut t.spec.fields, &top, &nested).map_err(|mut e| {
            e.field = e.field.map(|f| format!("{name}.{f}"));
            e
        })?;
    }
    Ok(())
}
