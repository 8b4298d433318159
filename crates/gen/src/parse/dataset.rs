//! A dataset: `[[tables]]` read, each table's rows, children and
//! calendar, then every reference between them resolved.

use super::qualified::{resolve_count_cases, resolve_qualified_tables};
use super::reader::load;
use super::references::{
    check_aggregates, check_reads_of_aggregates, check_rows_reads, copy_from_references,
    expression_aggregates, fill_parents, resolve_references,
};
use super::rows::{calendar_fields, check_row_generators};
use super::spec::one_table;
use crate::model::class::Class;
use crate::model::document::Raw;
use crate::model::{Calendar, ChildrenOf, Dataset, Rows, Spec, SpecError, Table, Value};

pub(crate) fn parse_dataset(
    text: &str,
    origin: &str,
    files: Option<super::reader::Files<'_>>,
) -> Result<Dataset, SpecError> {
    let (p, t) = load(text, origin, files)?;
    let Some(tables_v) = &t.tables else {
        let spec = one_table(&p, &t)?;
        return Ok(Dataset {
            name: spec.name.clone(),
            description: spec.description.clone(),
            tables: vec![Table {
                spec,
                line: 0,
                rows: None,
                children_of: None,
                calendar: None,
                stratified: false,
            }],
            multi_table: false,
            origin: origin.to_string(),
        });
    };
    if let Some(f) = &t.fields {
        return Err(p.err(
            f.span(),
            None,
            "give `fields` (a dataset of one table) or `[[tables]]`, not both",
        ));
    }
    p.check_keys(
        &p.root(),
        &["name", "description", "lists", "tables", "parquet"],
        None,
        "the dataset",
    )?;
    let name = p.file_name(t.name.as_ref(), "the dataset", 0..0)?;
    let description = t
        .description
        .as_ref()
        .map(|d| p.string(d, None, "description"))
        .transpose()?;
    let items = p.items(tables_v, false, None, |_| {
        "`tables` must be an array of tables ([[tables]])".into()
    })?;
    if items.is_empty() {
        return Err(p.err(tables_v.span(), None, "`tables` is empty"));
    }
    // The dataset's Parquet settings, under each table's.
    let dataset_parquet = p.parquet_column(t.parquet.as_ref(), None)?;
    let mut tables: Vec<Table> = Vec::new();
    for item in &items {
        let tt = p.item_table(item, None, "a table")?;
        let at = item.0.clone();
        p.check_keys(
            &at,
            &[
                "name",
                "description",
                "rows",
                "rows_per_scale",
                "stratified",
                "children_of",
                "count",
                "calendar",
                "fields",
                "parquet",
                "layout",
                "primary_key",
                "changes",
            ],
            None,
            "a table",
        )?;
        let tname = p.file_name(tt.name.as_ref(), "a table", at.clone())?;
        if let Some(prev) = tables.iter().find(|x| x.spec.name == tname) {
            return Err(p.err(
                at.clone(),
                None,
                format!("a table named `{tname}` is already on line {}", prev.line),
            ));
        }
        let children_of = match (&tt.children_of, &tt.count) {
            (Some(c), count) => {
                let parent = p.string(c, None, "children_of")?;
                if let Some(r) = tt
                    .rows
                    .as_ref()
                    .map(|r| &r.at)
                    .or(tt.rows_per_scale.as_ref().map(|r| &r.at))
                {
                    return Err(p.err(
                        r.span(),
                        None,
                        format!(
                            "table `{tname}`: a child table's rows follow its parent's (`count` per parent row); drop `rows`/`rows_per_scale`"
                        ),
                    ));
                }
                if count.is_none() {
                    return Err(p.err(
                        c.span(),
                        None,
                        format!(
                            "table `{tname}` needs a `count` (rows per `{parent}` row): an integer or a generator table"
                        ),
                    ));
                }
                let (count, count_when) =
                    p.count(tt.count.as_ref(), Some(&tname)).map_err(|mut e| {
                        e.field = None;
                        e.message = format!("table `{tname}`: {}", e.message);
                        e
                    })?;
                Some(ChildrenOf {
                    parent,
                    count,
                    count_when,
                })
            }
            (None, Some(c)) => {
                return Err(p.err(
                    c.span(),
                    None,
                    format!(
                        "table `{tname}`: `count` is for child tables (with `children_of`); give `rows` or `rows_per_scale`"
                    ),
                ));
            }
            (None, None) => None,
        };
        let calendar = match &tt.calendar {
            None => None,
            Some(c) => {
                if let Some(k) = [
                    ("rows", tt.rows.is_some()),
                    ("rows_per_scale", tt.rows_per_scale.is_some()),
                    ("children_of", tt.children_of.is_some()),
                ]
                .into_iter()
                .find_map(|(k, given)| given.then_some(k))
                {
                    return Err(p.err(
                        c.span(),
                        None,
                        format!(
                            "table `{tname}`: a calendar table has one row per day of its `calendar`; drop `{k}`"
                        ),
                    ));
                }
                let ct = p.params(&c.at, None, "`calendar`", &["start", "end"])?;
                let day = |k: &str| -> Result<i32, SpecError> {
                    let v = if k == "start" { &ct.start } else { &ct.end };
                    let v = v.as_ref().ok_or_else(|| {
                        p.err(
                            c.span(),
                            None,
                            format!("table `{tname}`: `calendar` needs `{k}` (a date)"),
                        )
                    })?;
                    match p.value(v, Class::Date, None, k)? {
                        Value::Int(d) => Ok(d as i32),
                        _ => unreachable!("dates are integers"),
                    }
                };
                let (start, end) = (day("start")?, day("end")?);
                if start > end {
                    return Err(p.err(
                        c.span(),
                        None,
                        format!("table `{tname}`: the calendar ends before it starts"),
                    ));
                }
                Some(Calendar { start, end })
            }
        };
        let rows = match (&tt.rows, &tt.rows_per_scale) {
            _ if children_of.is_some() => Rows::Fixed(0),
            _ if let Some(c) = calendar => Rows::Fixed(c.days()),
            (Some(r), None) if let Raw::Str(source) = r.raw() => Rows::Expr {
                value: Box::new(p.run_expr(r, source, None, "rows")?),
                per_scale: false,
            },
            (None, Some(r)) if let Raw::Str(source) = r.raw() => Rows::Expr {
                value: Box::new(p.run_expr(r, source, None, "rows_per_scale")?),
                per_scale: true,
            },
            (Some(r), None) => {
                let n = p.integer(r, None, "rows")?;
                if !(0..=i128::from(u64::MAX)).contains(&n) {
                    return Err(p.err(
                        r.span(),
                        None,
                        format!("table `{tname}`: `rows` is a count, not {n}"),
                    ));
                }
                Rows::Fixed(n as u64)
            }
            (None, Some(r)) => {
                let x = p.number(r, None, "rows_per_scale")?;
                if !(x.is_finite() && x > 0.0) {
                    return Err(p.err(
                        r.span(),
                        None,
                        format!(
                            "table `{tname}`: `rows_per_scale` must be a positive number, not {x}"
                        ),
                    ));
                }
                Rows::PerScale(x)
            }
            (Some(r), Some(_)) => {
                return Err(p.err(
                    r.span(),
                    None,
                    format!("table `{tname}`: give `rows` or `rows_per_scale`, not both"),
                ));
            }
            (None, None) => {
                return Err(p.err(
                    at.clone(),
                    None,
                    format!(
                        "table `{tname}` needs `rows` (a fixed count) or `rows_per_scale` (rows per unit of --scale)"
                    ),
                ));
            }
        };
        // Strata number a table's rows one after another: a child table's
        // are numbered per parent row.
        let stratified = match &tt.stratified {
            None => false,
            Some(v) => {
                let on = p.boolean(v, None, "stratified").map_err(|mut e| {
                    e.message = format!("table `{tname}`: {}", e.message);
                    e
                })?;
                if on && let Some(c) = &children_of {
                    return Err(p.err(
                        v.span(),
                        None,
                        format!(
                            "table `{tname}`: `stratified` is for tables with rows of their own (`rows`, `rows_per_scale`, `calendar`); a child table's rows follow its parent's (`count` per `{}` row)",
                            c.parent
                        ),
                    ));
                }
                on
            }
        };
        let tdesc = tt
            .description
            .as_ref()
            .map(|d| p.string(d, None, "description"))
            .transpose()?;
        let table_line = p.line(at.start);
        let mut fields = match &tt.fields {
            None if calendar.is_some() => calendar_fields(table_line),
            None => {
                return Err(p.err(
                    at.clone(),
                    None,
                    format!("table `{tname}` needs `fields` ([[tables.fields]] tables)"),
                ));
            }
            Some(fields) => p.fields(fields, "").map_err(|mut e| {
                e.field = Some(match e.field.take() {
                    Some(f) => format!("{tname}.{f}"),
                    None => tname.clone(),
                });
                e
            })?,
        };
        let table_parquet = p
            .parquet_column(tt.parquet.as_ref(), None)?
            .over(&dataset_parquet);
        p.hand_down_parquet(&table_parquet, &mut fields)
            .map_err(|mut e| {
                e.field = e.field.take().map(|f| format!("{tname}.{f}"));
                e
            })?;
        let layout = p.layout(tt.layout.as_ref()).map_err(|mut e| {
            e.field = Some(tname.clone());
            e
        })?;
        let (primary_key, changes) = p
            .changes(
                tt.primary_key.as_ref(),
                tt.changes.as_ref(),
                &fields,
                &format!("table `{tname}`"),
                children_of.is_none() && calendar.is_none(),
            )
            .map_err(|mut e| {
                e.field = Some(tname.clone());
                e
            })?;
        tables.push(Table {
            spec: Spec {
                name: tname,
                description: tdesc,
                fields,
                layout,
                primary_key,
                changes,
            },
            line: table_line,
            rows: children_of.is_none().then_some(rows),
            children_of,
            calendar,
            stratified,
        });
    }
    fill_parents(&p, &mut tables)?;
    check_row_generators(&p, &tables)?;
    expression_aggregates(&p, &mut tables)?;
    check_aggregates(&p, &tables)?;
    copy_from_references(&mut tables);
    resolve_qualified_tables(&p, &mut tables)?;
    resolve_count_cases(&p, &mut tables)?;
    resolve_references(&p, &tables)?;
    check_reads_of_aggregates(&p, &tables)?;
    check_rows_reads(&p, &tables)?;
    super::changes::check_histories(&p, &tables)?;
    Ok(Dataset {
        name,
        description,
        tables,
        multi_table: true,
        origin: origin.to_string(),
    })
}
