//! What a table's fields read of each other: `draw` names of sibling
//! references, and expressions and `when` conditions checked against the
//! siblings they read.

use arrow_schema::DataType;

use super::reader::P;
use crate::expr;
use crate::model::{
    AggOp, Condition, Field, Generator, Kind, Pick, QualifiedField, Reference, SpecError,
};

/// A sibling reference's `draw` name: the table it draws a row of, and
/// the field that draws it.
pub(super) struct Draw {
    name: String,
    table: String,
    field: String,
}

impl<'s> P<'s> {
    /// Sibling references that name the same `draw` read one row: each
    /// after the first reads the first's, as its `via`.
    pub(super) fn resolve_draws(&self, fields: &mut [Field]) -> Result<(), SpecError> {
        let draw_of = |f: &Field| match &f.kind {
            Kind::Scalar {
                generator: Generator::Reference(r),
                ..
            } => r.draw.clone().map(|d| (d, r.table.clone())),
            _ => None,
        };
        for i in 0..fields.len() {
            let Some((d, table)) = draw_of(&fields[i]) else {
                continue;
            };
            let Some(first) = (0..i).find(|&j| draw_of(&fields[j]).is_some_and(|(e, _)| e == d))
            else {
                continue;
            };
            let (_, first_table) = draw_of(&fields[first]).expect("a draw");
            let first_name = fields[first].name.clone();
            let f = &mut fields[i];
            let err = |m: String| Err(self.err_at(f.line, Some(&f.path), m));
            if first_table != table {
                return err(format!(
                    "draw name `{d}` is used with two tables: `{first_table}` (field `{first_name}`) and `{table}`; a draw names one row of one table"
                ));
            }
            let Kind::Scalar {
                generator: Generator::Reference(r),
                ..
            } = &mut f.kind
            else {
                unreachable!("a draw is a reference's");
            };
            if r.pick != Pick::Uniform {
                return err(format!(
                    "draw `{d}`: field `{first_name}` draws its row; give `zipf`, `weight` or `balanced` to that field, not to the fields that read the same row"
                ));
            }
            r.via = Some(first_name);
        }
        Ok(())
    }

    /// Checks the `expr` fields of one level against their siblings:
    /// names, types and the field's own type. An `expr` where no
    /// siblings are (a list item, a map key or value) or in a `when` case
    /// is refused.
    ///
    /// An expression that reads qualified names (`parent.x`, `ps.x`) is
    /// checked once the dataset's tables are known: with `others` `None`
    /// it is left for then ([`resolve_qualified`]).
    pub(super) fn resolve_expressions(
        &self,
        fields: &mut [Field],
        others: Option<&Others<'_>>,
    ) -> Result<(), SpecError> {
        fn refuse_nested(p: &P<'_>, f: &Field) -> Result<(), SpecError> {
            match &f.kind {
                Kind::Scalar {
                    generator: Generator::Expr(_),
                    ..
                } => Err(p.err_at(
                    f.line,
                    Some(&f.path),
                    "`expr` computes a value from sibling fields; a list item or map entry has none (give the expression to a field of a struct inside the list)",
                )),
                Kind::List { item, .. } => refuse_nested(p, item),
                Kind::Map { key, value, .. } => {
                    refuse_nested(p, key)?;
                    refuse_nested(p, value)
                }
                _ => Ok(()),
            }
        }
        let siblings: Vec<(String, Option<DataType>)> = fields
            .iter()
            .map(|f| {
                let dt = match &f.kind {
                    Kind::Scalar { data_type, .. } => Some(data_type.clone()),
                    _ => None,
                };
                (f.name.clone(), dt)
            })
            .collect();
        let readable: Vec<(&str, &DataType)> = siblings
            .iter()
            .filter_map(|(n, d)| d.as_ref().map(|d| (n.as_str(), d)))
            .collect();
        // Column numbers index `fields`, not just the readable ones.
        let index_of = |name: &str| siblings.iter().position(|(n, _)| n == name);
        let siblings_of: Vec<Draw> = fields
            .iter()
            .filter_map(|f| match &f.kind {
                Kind::Scalar {
                    generator: Generator::Reference(r),
                    ..
                } if r.via.is_none() => r.draw.as_ref().map(|d| Draw {
                    name: d.clone(),
                    table: r.table.clone(),
                    field: f.name.clone(),
                }),
                _ => None,
            })
            .collect();
        for f in fields.iter_mut() {
            // An aggregate over no children is null (but a count, 0).
            if let Kind::Scalar {
                generator: Generator::Aggregate(a),
                ..
            } = &f.kind
                && a.op != AggOp::Count
            {
                f.nullable = true;
            }
            if let Kind::List { item, .. } = &f.kind {
                refuse_nested(self, item)?;
            }
            if let Kind::Map { key, value, .. } = &f.kind {
                refuse_nested(self, key)?;
                refuse_nested(self, value)?;
            }
            if f.when
                .iter()
                .any(|w| matches!(w.generator, Some(Generator::Expr(_))))
            {
                return Err(self.err_at(
                    f.line,
                    Some(&f.path),
                    "a `when` case cannot give an `expr`; write the cases inside the expression (CASE WHEN ... END)",
                ));
            }
            for w in f.when.iter_mut() {
                let Condition::Expr(e) = &mut w.condition else {
                    continue;
                };
                if e.tree.is_some() {
                    continue;
                }
                let at = |c: u64, m: String| {
                    self.err_at(
                        w.line,
                        Some(&f.path),
                        format!("`condition` at column {c}: {m}"),
                    )
                };
                let sibling_only = |q: &str, x: &str| {
                    Err(format!(
                        "`{q}.{x}`: a `when` condition reads sibling fields; give the value to an `expr` sibling and test that"
                    ))
                };
                let (tree, inputs, _) =
                    expr::check(&e.source, &readable, Some(&f.name), &sibling_only)
                        .map_err(|x| at(x.column, x.message))?;
                if inputs.contains(&f.name) {
                    return Err(at(
                        1,
                        format!("the condition reads its own field `{}`", f.name),
                    ));
                }
                if !expr::is_test(&tree) {
                    return Err(at(1, expr::not_a_test(&tree)));
                }
                e.tree = Some(tree.with_columns(&|i| index_of(readable[i].0).unwrap_or(i)));
                e.inputs = inputs;
            }
            let Kind::Scalar {
                data_type,
                generator: Generator::Expr(e),
            } = &mut f.kind
            else {
                continue;
            };
            if e.tree.is_some() {
                continue;
            }
            let at = |c: u64, m: String| {
                self.err_at(f.line, Some(&f.path), format!("`expr` at column {c}: {m}"))
            };
            let checked = match others {
                Some(o) => Some(expr::check(&e.source, &readable, Some(&f.name), &|q, x| {
                    o.read(q, x, &siblings_of)
                })),
                // Checked with the dataset's tables when it reads theirs.
                None => {
                    expr::check_unless_qualified(&e.source, &readable, Some(&f.name)).transpose()
                }
            };
            let Some(checked) = checked else {
                continue;
            };
            let (tree, inputs, reads) = checked.map_err(|x| at(x.column, x.message))?;
            if inputs.contains(&f.name) {
                return Err(at(
                    1,
                    format!("the expression reads its own field `{}`", f.name),
                ));
            }
            let n = readable.len();
            let tree = tree.with_columns(&|i| {
                if i < n {
                    index_of(readable[i].0).unwrap_or(i)
                } else {
                    siblings.len() + (i - n)
                }
            });
            expr::check_target(&tree, data_type).map_err(|m| at(1, m))?;
            if let Some(o) = others {
                e.reads = reads
                    .into_iter()
                    .map(|(q, x)| o.qualified_field(&q, &x, &siblings_of))
                    .collect::<Result<_, _>>()
                    .map_err(|m| at(1, m))?;
            }
            e.inputs = inputs;
            e.tree = Some(tree);
            // Nulls in, or a division by zero, give a null.
            f.nullable = true;
        }
        Ok(())
    }
}

/// A top-level field as another row's expression sees it: name, type,
/// and whether it is an aggregate of its table's children.
pub(super) type Shape = (String, DataType, bool);

/// What the qualified names of one level's expressions can read: the
/// dataset's tables (their top-level fields and types) and the level's
/// parent table (a child table's top level only).
pub(super) struct Others<'a> {
    /// Each table's top-level fields: name, type, and whether it is an
    /// aggregate of the table's children (which cannot be read from
    /// another row: it would be computed through a reference).
    pub(super) tables: &'a [(String, Vec<Shape>)],
    pub(super) parent: Option<&'a str>,
}

impl Others<'_> {
    pub(super) fn field_type(&self, table: &str, x: &str, q: &str) -> Result<DataType, String> {
        let Some((_, fields)) = self.tables.iter().find(|(n, _)| n == table) else {
            return Err(format!("`{q}.{x}`: table `{table}` is not in the dataset"));
        };
        match fields.iter().find(|(n, _, _)| n == x) {
            Some((_, _, true)) => Err(format!(
                "`{q}.{x}` is an aggregate of table `{table}`'s children; another row cannot read it (copy what it aggregates instead)"
            )),
            Some((_, dt, _)) => Ok(dt.clone()),
            None => Err(format!(
                "unknown name `{q}.{x}`; the fields of `{q}` (table `{table}`) are {}",
                fields
                    .iter()
                    .map(|(n, _, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// The type of `q.x`.
    pub(super) fn read(&self, q: &str, x: &str, draws: &[Draw]) -> Result<DataType, String> {
        if q == "parent" {
            return match self.parent {
                Some(p) => self.field_type(p, x, q),
                None => Err(format!(
                    "`parent.{x}` reads the row's parent row: only in the top-level fields of a child table (`children_of`)"
                )),
            };
        }
        match draws.iter().find(|d| d.name == q) {
            Some(d) => self.field_type(&d.table, x, q),
            None => {
                let names: Vec<&str> = draws.iter().map(|d| d.name.as_str()).collect();
                Err(format!(
                    "`{q}.{x}`: `{q}` is neither `parent` nor the `draw` name of a sibling reference ({})",
                    if names.is_empty() {
                        "no sibling reference names its row with `draw = \"...\"`".to_string()
                    } else {
                        format!("the draw names here are {}", names.join(", "))
                    }
                ))
            }
        }
    }

    /// `q.x` as a reference to the same row.
    pub(super) fn qualified_field(
        &self,
        q: &str,
        x: &str,
        draws: &[Draw],
    ) -> Result<QualifiedField, String> {
        let data_type = self.read(q, x, draws)?;
        let reference = match draws.iter().find(|d| d.name == q) {
            Some(d) if q != "parent" => Reference {
                table: d.table.clone(),
                field: x.to_string(),
                pick: Pick::Uniform,
                via: Some(d.field.clone()),
                draw: None,
                offset: None,
            },
            _ => Reference {
                table: self.parent.unwrap_or_default().to_string(),
                field: x.to_string(),
                pick: Pick::Parent,
                via: None,
                draw: None,
                offset: None,
            },
        };
        Ok(QualifiedField {
            name: format!("{q}.{x}"),
            data_type,
            reference,
        })
    }
}
