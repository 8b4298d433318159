//! A spec of one table: its root table read and checked.

use super::qualified::resolve_qualified;
use super::reader::{P, load};
use super::references::refuse_rows_reads;
use super::rows::check_row_fields;
use super::siblings::Others;
use crate::model::document::Document;
use crate::model::query::references;
use crate::model::{Generator, Kind, Spec, SpecError};

pub(crate) fn parse(text: &str, origin: &str) -> Result<Spec, SpecError> {
    let (p, doc) = load(text, origin, None)?;
    one_table(&p, &doc)
}

/// The spec of a document of one table (`fields`, no `[[tables]]`).
pub(super) fn one_table(p: &P<'_>, t: &Document) -> Result<Spec, SpecError> {
    if let Some(tables) = &t.tables {
        return Err(p.err(
            tables.span(),
            None,
            "this file lists `[[tables]]`: a dataset of several tables (read it as a dataset: `strata generate --spec`, `strata spec check`)",
        ));
    }
    let mut spec = single(p, t)?;
    let none = Others {
        tables: &[],
        parent: None,
    };
    resolve_qualified(p, &mut spec.fields, &none, &none)?;
    check_row_fields(p, &spec.fields, None)?;
    refuse_rows_reads(p, &spec)?;
    if let Some(f) = spec.fields.iter().find(|f| {
        matches!(
            f.kind,
            Kind::Scalar {
                generator: Generator::Aggregate(_),
                ..
            }
        )
    }) {
        return Err(p.err_at(
            f.line,
            Some(&f.path),
            "`aggregate` reads the rows of a child table; put the tables of a dataset in one file, each a `[[tables]]` entry",
        ));
    }
    if let Some((f, r)) = references(&spec).into_iter().next() {
        return Err(p.err_at(
            f.line,
            Some(&f.path),
            format!(
                "`ref` reads table `{}`, but this spec has no `[[tables]]`: put the tables of a dataset in one file, each a `[[tables]]` entry",
                r.table
            ),
        ));
    }
    Ok(spec)
}

/// A spec of one table from its root table.
fn single(p: &P<'_>, t: &Document) -> Result<Spec, SpecError> {
    p.check_keys(
        &p.root(),
        &[
            "name",
            "description",
            "lists",
            "fields",
            "parquet",
            "layout",
            "primary_key",
            "changes",
        ],
        None,
        "the spec",
    )?;
    let name = p.file_name(t.name.as_ref(), "the spec", 0..0)?;
    let description = t
        .description
        .as_ref()
        .map(|d| p.string(d, None, "description"))
        .transpose()?;
    let Some(fields) = &t.fields else {
        return Err(p.err(0..0, None, "the spec needs `fields` ([[fields]] tables)"));
    };
    let mut fields = p.fields(fields, "")?;
    p.hand_down_parquet(&p.parquet_column(t.parquet.as_ref(), None)?, &mut fields)?;
    let layout = p.layout(t.layout.as_ref())?;
    let (primary_key, changes) = p.changes(
        t.primary_key.as_ref(),
        t.changes.as_ref(),
        &fields,
        "the spec",
        true,
    )?;
    Ok(Spec {
        name,
        description,
        fields,
        layout,
        primary_key,
        changes,
    })
}
