//! Tables of fixed rows: dimension rows (`values_by_row`) and calendar
//! tables.

use arrow_schema::DataType;

use super::reader::P;
use crate::model::class::Class;
use crate::model::{CalendarPart, Field, Generator, Kind, Rows, SpecError, Table};

/// The fields of a calendar table that lists none: every part of the
/// day, named after it.
pub(super) fn calendar_fields(line: usize) -> Vec<Field> {
    CalendarPart::ALL
        .iter()
        .map(|(name, part)| {
            let data_type = match part {
                CalendarPart::Date => DataType::Date32,
                CalendarPart::DayName | CalendarPart::MonthName => DataType::Utf8,
                CalendarPart::Weekend => DataType::Boolean,
                _ => DataType::Int32,
            };
            Field {
                name: name.to_string(),
                path: name.to_string(),
                line,
                kind: Kind::Scalar {
                    data_type,
                    generator: Generator::Calendar(*part),
                },
                null_rate: 0.0,
                nullable: false,
                parquet: Default::default(),
                when: Vec::new(),
                hidden: false,
            }
        })
        .collect()
}

/// Checks where the generators that read the row number stand: a
/// `calendar` part only in a calendar table, and both it and
/// `values_by_row` only in top-level fields of a table with rows of its
/// own (not a child table's, whose row numbers have gaps, nor inside
/// lists); a list of values shorter than a table of a fixed row count
/// needs `cycle`.
pub(super) fn check_row_generators(p: &P<'_>, tables: &[Table]) -> Result<(), SpecError> {
    for t in tables {
        let tname = &t.spec.name;
        check_row_fields(p, &t.spec.fields, Some(t)).map_err(|mut e| {
            e.field = e.field.take().map(|f| format!("{tname}.{f}"));
            e
        })?;
    }
    Ok(())
}

/// [`check_row_generators`] for the fields of one table (`None`: a plain
/// spec).
pub(super) fn check_row_fields(
    p: &P<'_>,
    fields: &[Field],
    table: Option<&Table>,
) -> Result<(), SpecError> {
    fn go(p: &P<'_>, f: &Field, top: bool, table: Option<&Table>) -> Result<(), SpecError> {
        let err = |m: String| Err(p.err_at(f.line, Some(&f.path), m));
        match &f.kind {
            Kind::Scalar {
                generator,
                data_type,
            } => {
                let gens = std::iter::once(generator)
                    .chain(f.when.iter().filter_map(|w| w.generator.as_ref()));
                for g in gens {
                    // A child's position, `start + k` for its `k`-th
                    // child, reaches `start + max_count - 1`.
                    if let Generator::Position(start) = g
                        && let Some(c) = table.and_then(|t| t.children_of.as_ref())
                        && let Some((_, hi)) = Class::of(data_type).int_range()
                        && start + i128::from(c.max_count()) - 1 > hi
                    {
                        return err(format!(
                            "the `per_parent` sequence from {start} would reach {} for up to {} children per `{}` row, past {hi}, the greatest {data_type}; use a wider type or a smaller start",
                            start + i128::from(c.max_count()) - 1,
                            c.max_count(),
                            c.parent
                        ));
                    }
                    let what = match g {
                        Generator::ByRow { .. } => "`values_by_row`",
                        Generator::Calendar(_) => "`calendar`",
                        _ => continue,
                    };
                    if !top {
                        return err(format!(
                            "{what} gives each row a value: it is for top-level fields, not those inside lists or maps"
                        ));
                    }
                    if table.is_some_and(|t| t.children_of.is_some()) {
                        return err(format!(
                            "{what} is for tables with rows of their own; a child table's rows follow its parent's (use `sequence = {{ per_parent = true }}` to number them)"
                        ));
                    }
                    if let Generator::Calendar(_) = g
                        && table.is_none_or(|t| t.calendar.is_none())
                    {
                        return err(
                            "`calendar` reads the day of a calendar table's row; give the table `calendar = { start = ..., end = ... }`"
                                .into(),
                        );
                    }
                    if let Generator::ByRow {
                        values,
                        cycle: false,
                    } = g
                        && let Some(Rows::Fixed(n)) = table.and_then(|t| t.rows.clone())
                        && (values.len() as u64) < n
                    {
                        return err(format!(
                            "`values_by_row` has {} values but the table has {n} rows; give one value per row, or `cycle = true` to start the list again",
                            values.len()
                        ));
                    }
                }
                Ok(())
            }
            // A struct's fields share its row.
            Kind::Struct(children) => children.iter().try_for_each(|c| go(p, c, top, table)),
            Kind::List { item, .. } => go(p, item, false, table),
            Kind::Map { key, value, .. } => {
                go(p, key, false, table)?;
                go(p, value, false, table)
            }
        }
    }
    fields.iter().try_for_each(|f| go(p, f, true, table))
}
