//! References between tables: each `ref` and `parent` resolved to its
//! table and field, types compared, parents filled in, copied kinds
//! completed, and child aggregates checked.

use arrow_schema::DataType;

use super::reader::{P, is_plain_name};
use super::types::{placeholder_of, type_text};
use crate::expr;
use crate::model::expression::ETy;
use crate::model::query::{depends_on, expressions, field_references, is_aggregate, kind_type};
use crate::model::query::{each_field_mut, references};
use crate::model::{AggOp, Expression, Field, Generator, Kind, Pick, Rows, SpecError, Table};

/// Checks every reference of `tables`: the table and its top-level field
/// exist, the types agree, the table has rows, cases change only the
/// null rate, balanced references join tables with rows of their own
/// (one value per row), and no table reaches itself through references.
pub(super) fn resolve_references(p: &P<'_>, tables: &[Table]) -> Result<(), SpecError> {
    let names: Vec<&str> = tables.iter().map(|t| t.spec.name.as_str()).collect();
    // Parent tables of each table, with the field and line of one
    // reference to each.
    let mut edges: Vec<Vec<(usize, String, usize)>> = vec![Vec::new(); tables.len()];
    for (ti, t) in tables.iter().enumerate() {
        let tname = &t.spec.name;
        let elements = element_paths(&t.spec.fields);
        for (f, r) in references(&t.spec) {
            let path = format!("{tname}.{}", f.path);
            let err = |m: String| Err(p.err_at(f.line, Some(&path), m));
            let Kind::Scalar {
                data_type,
                generator,
            } = &f.kind
            else {
                unreachable!("references are leaves");
            };
            // A case may draw the row another way (another `ref` to the
            // same table and field); nothing else.
            let own = match generator {
                Generator::Reference(own) => Some(own),
                _ => None,
            };
            let case_ok = |g: &Generator| match (g, own) {
                (Generator::Reference(c), Some(own)) => {
                    c.table == own.table
                        && c.field == own.field
                        && c.via.is_none()
                        && own.via.is_none()
                        && c.pick != Pick::Parent
                }
                _ => false,
            };
            if own.is_none()
                || f.when
                    .iter()
                    .any(|w| w.generator.as_ref().is_some_and(|g| !case_ok(g)))
            {
                return err(
                    "a `when` case of a `ref` field may give another `ref` to the same table and field (drawing its row another way, without `via`), or change the null rate; a field of another generator cannot switch to a `ref`"
                        .into(),
                );
            }
            let Some(pi) = names.iter().position(|n| *n == r.table) else {
                return err(format!(
                    "`ref` names table `{}`, which the dataset does not have; its tables are {}",
                    r.table,
                    names.join(", ")
                ));
            };
            let parent = &tables[pi];
            let Some(pf) = parent.spec.fields.iter().find(|x| x.name == r.field) else {
                return err(format!(
                    "`ref` names field `{}`, which is not a top-level field of table `{}`; its fields are {}",
                    r.field,
                    r.table,
                    parent
                        .spec
                        .fields
                        .iter()
                        .map(|x| x.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            let pt = &kind_type(&pf.kind);
            if pt != data_type {
                return err(format!(
                    "this field is {} but `{}.{}` is {}: a reference copies the value, so give both the same type (for a dictionary, struct, list or map, its kind)",
                    type_text(data_type),
                    r.table,
                    r.field,
                    type_text(pt)
                ));
            }
            if let Pick::Weighted { field: w } = &r.pick {
                match parent
                    .spec
                    .fields
                    .iter()
                    .find(|x| &x.name == w)
                    .map(|x| &x.kind)
                {
                    Some(Kind::Scalar { data_type: wt, .. })
                        if wt.is_numeric() && !matches!(wt, DataType::Dictionary(..)) => {}
                    Some(_) => {
                        return err(format!(
                            "`weight` = \"{w}\": `{}.{w}` is not a number; weights are an integer, float or decimal field",
                            r.table
                        ));
                    }
                    None => {
                        return err(format!(
                            "`weight` = \"{w}\" is not a top-level field of table `{}`",
                            r.table
                        ));
                    }
                }
            }
            // A child table's row is reached from a row of its root table,
            // drawn by the pick, then a position below each count: no
            // weights over its rows.
            if let (Some(c), Pick::Weighted { field: w }) = (&parent.children_of, &r.pick) {
                return err(format!(
                    "`weight` = \"{w}\": `{}` is a child table (rows per `{}` row), whose rows are reached through a row of its parent; a weighted reference draws from a table with `rows` or `rows_per_scale`",
                    r.table, c.parent
                ));
            }
            // A balanced reference numbers the referencing rows one after
            // another and the referenced rows likewise: tables with rows
            // of their own at both ends, one value per row.
            if r.pick == Pick::Balanced {
                if let Some(c) = &parent.children_of {
                    return err(format!(
                        "`balanced`: `{}` is a child table (rows per `{}` row), whose rows are reached through a row of its parent; a balanced reference draws from a table with rows of its own (`rows`, `rows_per_scale`, `calendar`)",
                        r.table, c.parent
                    ));
                }
                if let Some(c) = &t.children_of {
                    return err(format!(
                        "`balanced`: `{tname}` is a child table (rows per `{}` row), numbered by parent row rather than one after another; a balanced reference is a field of a table with rows of its own",
                        c.parent
                    ));
                }
                if elements.contains(&f.path.as_str()) {
                    return err(
                        "`balanced` gives each row of the table one parent row in turn; a list item or map entry (any number per row) cannot be balanced"
                            .into(),
                    );
                }
            }
            if parent.rows == Some(Rows::Fixed(0)) {
                return err(format!(
                    "`ref` reads table `{}`, which has no rows (`rows = 0`); a reference needs a row to draw",
                    r.table
                ));
            }
            edges[ti].push((pi, path.clone(), f.line));
        }
        check_vias(p, tname, &t.spec.fields)?;
        if let Some(c) = &t.children_of
            && let Some(pi) = names.iter().position(|n| *n == c.parent)
        {
            edges[ti].push((pi, tname.clone(), t.line));
        }
    }
    // A depth-first search for a cycle: 0 unvisited, 1 on the stack, 2 done.
    fn visit(
        i: usize,
        edges: &[Vec<(usize, String, usize)>],
        state: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[i] = 1;
        stack.push(i);
        for (j, _, _) in &edges[i] {
            if state[*j] == 1 {
                let from = stack.iter().position(|x| x == j).unwrap_or(0);
                let mut cycle = stack[from..].to_vec();
                cycle.push(*j);
                return Some(cycle);
            }
            if state[*j] == 0
                && let Some(c) = visit(*j, edges, state, stack)
            {
                return Some(c);
            }
        }
        stack.pop();
        state[i] = 2;
        None
    }
    let mut state = vec![0u8; tables.len()];
    for i in 0..tables.len() {
        if state[i] == 0
            && let Some(cycle) = visit(i, &edges, &mut state, &mut Vec::new())
        {
            let (a, b) = (cycle[0], cycle[1]);
            let (_, path, line) = edges[a]
                .iter()
                .find(|(j, _, _)| *j == b)
                .cloned()
                .unwrap_or_default();
            // A `children_of` edge names the table, not a field.
            let path = (path != names[a]).then_some(path);
            let shown: Vec<&str> = cycle.iter().map(|&k| names[k]).collect();
            let message = if cycle.len() == 2 {
                format!(
                    "table `{}` references itself (or is a child of itself); a reference reads another table",
                    names[a]
                )
            } else {
                format!(
                    "tables reference each other in a cycle ({}); references must lead from children to parents",
                    shown.join(" -> ")
                )
            };
            return Err(p.err_at(line, path.as_deref(), message));
        }
    }
    Ok(())
}

/// The paths of the fields of `fields` that are list items or map keys
/// or values, or inside one: numbered per element rather than per row.
fn element_paths(fields: &[Field]) -> Vec<&str> {
    fn walk<'f>(f: &'f Field, inside: bool, out: &mut Vec<&'f str>) {
        if inside {
            out.push(&f.path);
        }
        match &f.kind {
            Kind::Struct(c) => c.iter().for_each(|x| walk(x, inside, out)),
            Kind::List { item, .. } => walk(item, true, out),
            Kind::Map { key, value, .. } => {
                walk(key, true, out);
                walk(value, true, out);
            }
            Kind::Scalar { .. } => {}
        }
    }
    let mut out = Vec::new();
    for f in fields {
        walk(f, false, &mut out);
    }
    out
}

/// Checks every `aggregate`: a top-level field whose table is a child
/// table of its own, over a top-level field of it whose type the
/// operation takes, into a field of the type it gives.
pub(super) fn check_aggregates(p: &P<'_>, tables: &[Table]) -> Result<(), SpecError> {
    for t in tables {
        let tname = &t.spec.name;
        let mut fields: Vec<(&Field, bool)> = Vec::new();
        fn walk<'f>(f: &'f Field, top: bool, out: &mut Vec<(&'f Field, bool)>) {
            out.push((f, top));
            match &f.kind {
                Kind::Struct(c) => c.iter().for_each(|x| walk(x, false, out)),
                Kind::List { item, .. } => walk(item, false, out),
                Kind::Map { key, value, .. } => {
                    walk(key, false, out);
                    walk(value, false, out);
                }
                Kind::Scalar { .. } => {}
            }
        }
        for f in &t.spec.fields {
            walk(f, true, &mut fields);
        }
        for (f, top) in fields {
            let Kind::Scalar {
                data_type,
                generator: Generator::Aggregate(a),
            } = &f.kind
            else {
                if f.when
                    .iter()
                    .any(|w| matches!(w.generator, Some(Generator::Aggregate(_))))
                {
                    return Err(p.err_at(
                        f.line,
                        Some(&format!("{tname}.{}", f.path)),
                        "a `when` case cannot give an `aggregate`",
                    ));
                }
                continue;
            };
            let path = format!("{tname}.{}", f.path);
            let err = |m: String| Err(p.err_at(f.line, Some(&path), m));
            if !top {
                return err("an `aggregate` is for top-level fields".into());
            }
            let Some(child) = tables.iter().find(|c| c.spec.name == a.table) else {
                return err(format!(
                    "`aggregate` names table `{}`, which the dataset does not have",
                    a.table
                ));
            };
            if child.children_of.as_ref().map(|c| &c.parent) != Some(tname) {
                return err(format!(
                    "`aggregate` reads the children of each row: table `{}` is not a child table of `{tname}` (give it `children_of = \"{tname}\"`)",
                    a.table
                ));
            }
            let source = match &a.field {
                None => None,
                Some(name) => {
                    let Some(cf) = child.spec.fields.iter().find(|c| &c.name == name) else {
                        return err(format!(
                            "table `{}` has no top-level field `{name}`",
                            a.table
                        ));
                    };
                    match &cf.kind {
                        Kind::Scalar { data_type, .. } => Some(data_type.clone()),
                        _ => return err(format!("`{}.{name}` is not a leaf field", a.table)),
                    }
                }
            };
            let decimal = |d: &DataType| matches!(d, DataType::Decimal128(..));
            let numeric = |d: &DataType| d.is_integer() || d.is_floating() || decimal(d);
            let ok = match (a.op, &source) {
                (AggOp::Count, _) => data_type.is_integer(),
                (_, None) => false,
                // Integer sums are exact, into an integer or a decimal
                // (`uint64` sums may pass `i64::MAX`).
                (AggOp::Sum, Some(s)) => {
                    (s.is_integer() && (data_type.is_integer() || decimal(data_type)))
                        || (s.is_floating() && data_type.is_floating())
                        || (decimal(s) && decimal(data_type))
                }
                (AggOp::Min | AggOp::Max, Some(s)) => {
                    (numeric(s) || matches!(s, DataType::Date32 | DataType::Utf8))
                        && (s == data_type
                            || (s.is_integer() && data_type.is_integer())
                            || (decimal(s) && decimal(data_type)))
                }
                (AggOp::All | AggOp::Any, Some(s)) => {
                    *s == DataType::Boolean && *data_type == DataType::Boolean
                }
            };
            if !ok {
                return err(format!(
                    "type mismatch: {} of {} cannot fill a field of type {data_type}",
                    a.op.as_str(),
                    source.map_or("rows".to_string(), |s| s.to_string())
                ));
            }
        }
    }
    Ok(())
}

/// Checks each child table's `children_of` and makes the `parent`
/// references of its fields name that table; `parent` and `position` are
/// for the top-level fields of child tables only.
pub(super) fn fill_parents(p: &P<'_>, tables: &mut [Table]) -> Result<(), SpecError> {
    let names: Vec<String> = tables.iter().map(|t| t.spec.name.clone()).collect();
    for t in tables.iter_mut() {
        let tname = t.spec.name.clone();
        if let Some(c) = &t.children_of
            && !names.contains(&c.parent)
        {
            return Err(p.err_at(
                t.line,
                None,
                format!(
                    "table `{tname}`: `children_of` names table `{}`, which the dataset does not have; its tables are {}",
                    c.parent,
                    names.join(", ")
                ),
            ));
        }
        let parent = t.children_of.as_ref().map(|c| c.parent.clone());
        each_field_mut(&mut t.spec.fields, true, &mut |f, top| {
            let path = format!("{tname}.{}", f.path);
            let Kind::Scalar { generator, .. } = &mut f.kind else {
                return Ok(());
            };
            let what = match generator {
                Generator::Reference(r) if r.pick == Pick::Parent => "`parent`",
                Generator::Position(_) => "a `per_parent` sequence (`position`)",
                _ => return Ok(()),
            };
            let Some(parent) = &parent else {
                return Err(p.err_at(
                    f.line,
                    Some(&path),
                    format!(
                        "{what} is for the fields of a child table; table `{tname}` has no `children_of`"
                    ),
                ));
            };
            if !top {
                return Err(p.err_at(
                    f.line,
                    Some(&path),
                    format!(
                        "{what} is for the top-level fields of a child table, not those inside structs, lists or maps"
                    ),
                ));
            }
            if let Generator::Reference(r) = generator {
                r.table = parent.clone();
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Gives each reference what it copies besides values: the Arrow type of
/// a dictionary, struct, list or map declared by its kind alone (see
/// [`placeholder_of`]), and nullability when the copied field is nullable
/// (the copy of a null is null). Repeated until nothing changes, for
/// copies of copies. A kind that differs from the copied field's is left
/// for the type check to report.
pub(super) fn copy_from_references(tables: &mut [Table]) {
    loop {
        let copied: std::collections::HashMap<(String, String), (DataType, bool)> = tables
            .iter()
            .flat_map(|t| {
                t.spec.fields.iter().map(|f| {
                    (
                        (t.spec.name.clone(), f.name.clone()),
                        (kind_type(&f.kind), f.nullable),
                    )
                })
            })
            .collect();
        let mut changed = false;
        for t in tables.iter_mut() {
            let _ = each_field_mut(&mut t.spec.fields, true, &mut |f, _| {
                let Field { kind, nullable, .. } = f;
                let Kind::Scalar {
                    data_type,
                    generator: Generator::Reference(r),
                } = kind
                else {
                    return Ok::<(), ()>(());
                };
                if let Some((ty, copied_nullable)) = copied.get(&(r.table.clone(), r.field.clone()))
                {
                    if placeholder_of(data_type, ty) {
                        *data_type = ty.clone();
                        changed = true;
                    }
                    if *copied_nullable && !*nullable {
                        *nullable = true;
                        changed = true;
                    }
                }
                Ok(())
            });
        }
        if !changed {
            break;
        }
    }
}

/// Checks each `via` of the references among `fields` and, below them,
/// in their structs: it names a sibling whose generator is a reference
/// (without a `via` of its own) to the same table.
pub(super) fn check_vias(p: &P<'_>, table: &str, fields: &[Field]) -> Result<(), SpecError> {
    for f in fields {
        match &f.kind {
            Kind::Scalar {
                generator: Generator::Reference(r),
                ..
            } => {
                let Some(via) = &r.via else { continue };
                let path = format!("{table}.{}", f.path);
                let err = |m: String| Err(p.err_at(f.line, Some(&path), m));
                let sibling = fields.iter().find(|s| &s.name == via);
                match sibling.map(|s| &s.kind) {
                    Some(Kind::Scalar {
                        generator: Generator::Reference(sr),
                        ..
                    }) if sr.via.is_none()
                        && sr.table == r.table
                        && sibling
                            .is_some_and(|s| s.when.iter().all(|w| w.generator.is_none())) => {}
                    Some(Kind::Scalar {
                        generator: Generator::Reference(sr),
                        ..
                    }) if sr.via.is_none() && sr.table == r.table => {
                        return err(format!(
                            "`via` = \"{via}\": that reference draws its row by cases; copy the fields of its row with cases of your own"
                        ));
                    }
                    Some(Kind::Scalar {
                        generator: Generator::Reference(sr),
                        ..
                    }) if sr.table == r.table => {
                        return err(format!(
                            "`via` = \"{via}\" has a `via` itself; name the sibling that draws the row"
                        ));
                    }
                    Some(_) => {
                        return err(format!(
                            "`via` = \"{via}\": that sibling is not a reference to table `{}`",
                            r.table
                        ));
                    }
                    None => {
                        return err(format!(
                            "`via` = \"{via}\" names no sibling of this field; it names a field beside it holding a reference to `{}`",
                            r.table
                        ));
                    }
                }
            }
            Kind::Struct(children) => check_vias(p, table, children)?,
            Kind::List { item, .. } => check_vias(p, table, std::slice::from_ref(item))?,
            Kind::Map { key, value, .. } => {
                check_vias(p, table, std::slice::from_ref(key))?;
                check_vias(p, table, std::slice::from_ref(value))?;
            }
            Kind::Scalar { .. } => {}
        }
    }
    Ok(())
}

/// The fields of other rows `f` reads: its references (its own and its
/// cases') and the qualified names of its expressions (`parent.x`,
/// `ps.x`), as `(how it reads, table, field)`.
fn reads_of_other_rows(f: &Field) -> Vec<(String, &str, &str)> {
    let references = field_references(f).map(|r| {
        let how = if r.pick == Pick::Parent {
            "`parent`"
        } else {
            "`ref`"
        };
        (how.to_string(), r.table.as_str(), r.field.as_str())
    });
    let qualified = expressions(f).flat_map(|e| {
        e.reads.iter().map(|q| {
            (
                format!("`{}`", q.name),
                q.reference.table.as_str(),
                q.reference.field.as_str(),
            )
        })
    });
    references.chain(qualified).collect()
}

/// The chain from top-level field `field` of `table` to an aggregate it
/// is, or is computed from (through its siblings and the rows it reads):
/// `["orders.o_big", "orders.o_n"]`; `None` when there is none.
fn aggregate_behind<'t>(
    tables: &'t [Table],
    table: &'t str,
    field: &'t str,
    seen: &mut Vec<(&'t str, &'t str)>,
) -> Option<Vec<String>> {
    if seen.contains(&(table, field)) {
        return None;
    }
    seen.push((table, field));
    let t = tables.iter().find(|t| t.spec.name == table)?;
    let f = t.spec.fields.iter().find(|f| f.name == field)?;
    let here = format!("{table}.{field}");
    if is_aggregate(f) {
        return Some(vec![here]);
    }
    let mut next: Vec<(&str, &str)> = depends_on(f).into_iter().map(|d| (table, d)).collect();
    if let Kind::Scalar {
        generator: Generator::Reference(r),
        ..
    } = &f.kind
        && let Some(via) = &r.via
    {
        next.push((table, via.as_str()));
    }
    next.extend(reads_of_other_rows(f).into_iter().map(|(_, t, f)| (t, f)));
    for (t, f) in next {
        if let Some(mut chain) = aggregate_behind(tables, t, f, seen) {
            chain.insert(0, here);
            return Some(chain);
        }
    }
    None
}

/// Refuses a field of another row that is an aggregate, or is computed
/// from one, being read (by a `ref`, a `parent` copy or a qualified name
/// in an expression): an aggregate is made for the rows of its own table
/// as they are generated, from their children, and another table's read
/// lands on rows drawn at random.
pub(super) fn check_reads_of_aggregates(p: &P<'_>, tables: &[Table]) -> Result<(), SpecError> {
    for t in tables {
        for (f, _) in t.spec.walk() {
            for (how, table, field) in reads_of_other_rows(f) {
                let Some(chain) = aggregate_behind(tables, table, field, &mut Vec::new()) else {
                    continue;
                };
                let what = match chain.as_slice() {
                    [one] => format!("`{one}`, an aggregate"),
                    [first, .., last] => {
                        format!("`{first}`, computed from the aggregate `{last}`")
                    }
                    [] => continue,
                };
                return Err(p.err_at(
                    f.line,
                    Some(&format!("{}.{}", t.spec.name, f.path)),
                    format!(
                        "{how} reads {what}: a field read from another row cannot be an aggregate or be computed from one"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Turns each `aggregate` of an SQL expression over the child's top-level
/// fields (`sum = "l_price * (1 - l_discount)"`) into one of a hidden
/// field of the child table computing it, named `PARENT.FIELD` (a name no
/// field of a spec can have: names hold no dot). A plain name stays a
/// field's name (`check_aggregates` says when there is no such field).
pub(super) fn expression_aggregates(p: &P<'_>, tables: &mut [Table]) -> Result<(), SpecError> {
    let mut wanted = Vec::new();
    for (ti, t) in tables.iter().enumerate() {
        for (fi, f) in t.spec.fields.iter().enumerate() {
            let Kind::Scalar {
                generator: Generator::Aggregate(a),
                ..
            } = &f.kind
            else {
                continue;
            };
            let Some(source) = &a.field else {
                continue;
            };
            let Some(ci) = tables.iter().position(|c| c.spec.name == a.table) else {
                continue;
            };
            let named = tables[ci].spec.fields.iter().any(|c| &c.name == source);
            if !named && !is_plain_name(source) && source != "*" {
                wanted.push((ti, fi, ci, source.clone(), a.op));
            }
        }
    }
    for (ti, fi, ci, source, op) in wanted {
        let (tname, f) = (&tables[ti].spec.name, &tables[ti].spec.fields[fi]);
        let path = format!("{tname}.{}", f.path);
        let line = f.line;
        let name = format!("{tname}.{}", f.name);
        let err = |m: String| p.err_at(line, Some(&path), m);
        let readable: Vec<(&str, &DataType)> = tables[ci]
            .spec
            .fields
            .iter()
            .filter_map(|c| match &c.kind {
                Kind::Scalar { data_type, .. } => Some((c.name.as_str(), data_type)),
                _ => None,
            })
            .collect();
        let own_row = |q: &str, x: &str| {
            Err(format!(
                "`{q}.{x}`: an aggregate's expression reads the fields of the child row"
            ))
        };
        let (tree, _, _) = expr::check(&source, &readable, None, &own_row).map_err(|x| {
            err(format!(
                "`aggregate`'s `{}` at column {}: {}",
                op.as_str(),
                x.column,
                x.message
            ))
        })?;
        if tree.ty == ETy::Null {
            return Err(err(format!(
                "`aggregate`'s `{}` is always null: give it a type (CAST(NULL AS BIGINT))",
                op.as_str()
            )));
        }
        tables[ci].spec.fields.push(Field {
            name: name.clone(),
            path: name.clone(),
            line,
            kind: Kind::Scalar {
                data_type: tree.ty.arrow(),
                generator: Generator::Expr(Box::new(Expression::pending(source))),
            },
            null_rate: 0.0,
            nullable: true,
            parquet: Default::default(),
            when: Vec::new(),
            hidden: true,
        });
        p.resolve_expressions(&mut tables[ci].spec.fields, None)?;
        if let Kind::Scalar {
            generator: Generator::Aggregate(a),
            ..
        } = &mut tables[ti].spec.fields[fi].kind
        {
            a.field = Some(name);
        }
    }
    Ok(())
}

/// The tables whose row counts the expressions of `f` read (`rows('t')`).
fn rows_reads(f: &Field) -> Vec<String> {
    rows_in(expressions(f).filter_map(|e| e.tree.clone()).collect())
}

/// The tables `rows('t')` names in `trees`.
fn rows_in(trees: Vec<crate::model::expression::TNode>) -> Vec<String> {
    let mut out = Vec::new();
    for mut t in trees {
        t.visit_mut(&mut |n| {
            if let crate::model::expression::NodeK::Rows(name) = &n.kind {
                out.push(name.clone());
            }
        });
    }
    out
}

/// Checks each `rows('t')` of an expression: `t` is a table of the
/// dataset with rows of its own (a child table's rows are its parents'
/// counts, known only by generating them).
pub(super) fn check_rows_reads(p: &P<'_>, tables: &[Table]) -> Result<(), SpecError> {
    let with_rows: Vec<&str> = tables
        .iter()
        .filter(|t| t.rows.is_some())
        .map(|t| t.spec.name.as_str())
        .collect();
    let refuse = |name: &str| {
        if tables.iter().any(|t| t.spec.name == name) {
            format!(
                "rows('{name}'): table `{name}` is a child table, whose rows follow its parents' counts; `rows` reads a table with `rows` or `rows_per_scale` ({})",
                with_rows.join(", ")
            )
        } else {
            format!(
                "rows('{name}'): the dataset has no table `{name}`; the tables with rows of their own are {}",
                with_rows.join(", ")
            )
        }
    };
    for t in tables {
        for (f, _) in t.spec.walk() {
            if let Some(name) = rows_reads(f)
                .into_iter()
                .find(|n| !with_rows.contains(&n.as_str()))
            {
                return Err(p.err_at(
                    f.line,
                    Some(&format!("{}.{}", t.spec.name, f.path)),
                    refuse(&name),
                ));
            }
        }
        if let Some(c) = &t.children_of {
            for w in &c.count_when {
                let names = rows_in(w.condition.tree.clone().into_iter().collect());
                if let Some(name) = names.into_iter().find(|n| !with_rows.contains(&n.as_str())) {
                    return Err(p.err_at(
                        w.line,
                        None,
                        format!(
                            "table `{}`: `count` condition: {}",
                            t.spec.name,
                            refuse(&name)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Refuses `rows('t')` in a spec of one table: it reads the tables of a
/// dataset.
pub(super) fn refuse_rows_reads(p: &P<'_>, spec: &crate::model::Spec) -> Result<(), SpecError> {
    for (f, _) in spec.walk() {
        if let Some(name) = rows_reads(f).first() {
            return Err(p.err_at(
                f.line,
                Some(&f.path),
                format!("rows('{name}') reads a table of a dataset; this spec has no `[[tables]]`"),
            ));
        }
    }
    Ok(())
}
