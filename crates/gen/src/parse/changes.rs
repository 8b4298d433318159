//! `primary_key = "FIELD"` and `changes = { ... }`: the field that
//! identifies a row, and the table's history over versions, checked
//! against the table's own fields (the key's values are unique; an
//! update draws fields again that are drawn at random).

use super::reader::P;
use crate::model::document::{self as doc, Loose, Raw, Tab};
use crate::model::{Changes, Field, Generator, Kind, OnDelete, SpecError};

/// The keys of `changes = { ... }`.
const KEYS: [&str; 7] = [
    "versions",
    "insert",
    "update",
    "delete",
    "keys",
    "update_fields",
    "on_delete",
];

/// Why a top-level field cannot be drawn again by an update (its values
/// follow from the row's number or another row), if so.
fn fixed_by_row(f: &Field) -> Option<&'static str> {
    let Kind::Scalar { generator, .. } = &f.kind else {
        return None;
    };
    match generator {
        Generator::Sequence { .. } => Some("a sequence (its values follow the row number)"),
        Generator::ByRow { .. } => Some("`values_by_row` (its values follow the row number)"),
        Generator::Calendar(_) => Some("a calendar part (its values follow the row's day)"),
        Generator::Position(_) => Some("a position among its parent's children"),
        Generator::Constant(_) => Some("a constant"),
        Generator::Aggregate(_) => Some("an aggregate of the row's children"),
        _ => None,
    }
}

/// Whether a top-level field's generator gives every row its own value.
fn unique(f: &Field) -> bool {
    let Kind::Scalar { generator, .. } = &f.kind else {
        return false;
    };
    if f.null_rate > 0.0 || !f.when.is_empty() || f.hidden {
        return false;
    }
    match generator {
        Generator::Sequence { step, .. } => !matches!(step, crate::Value::Int(0)),
        Generator::Uuid => true,
        _ => false,
    }
}

impl P<'_> {
    /// The primary key written at `key` and the history written at `t`,
    /// checked against the table's top-level `fields`; `what` names the
    /// table in messages (`the spec`, `table \`orders\``). `own_rows` is
    /// false for a child table (its rows follow its parent's).
    pub(super) fn changes(
        &self,
        key: Option<&Loose<String>>,
        t: Option<&Tab<doc::Changes>>,
        fields: &[Field],
        what: &str,
        own_rows: bool,
    ) -> Result<(Option<String>, Option<Changes>), SpecError> {
        let primary_key = match key {
            None => None,
            Some(k) => {
                let name = self.string(k, None, "primary_key")?;
                let Some(f) = fields.iter().find(|f| f.name == name) else {
                    return Err(self.err(
                        k.span(),
                        None,
                        format!(
                            "`primary_key` = {name:?}: {what} has no top-level field of that name"
                        ),
                    ));
                };
                if !unique(f) {
                    return Err(self.err(
                        k.span(),
                        None,
                        format!(
                            "`primary_key` = {name:?}: a key needs a value of its own on every \
                             row: a sequence with a step other than 0, or `uuid = true`, never \
                             null and not hidden"
                        ),
                    ));
                }
                Some(name)
            }
        };
        let Some(t) = t else {
            return Ok((primary_key, None));
        };
        let ct = self.params(&t.at, None, "`changes`", &KEYS)?;
        let line = self.line(t.span().start);
        let Some(pk) = &primary_key else {
            return Err(self.err(
                t.span(),
                None,
                format!(
                    "`changes` on {what} needs a `primary_key`: the field that identifies a row \
                     across versions"
                ),
            ));
        };
        if !own_rows {
            return Err(self.err(
                t.span(),
                None,
                format!(
                    "`changes` on {what}: a child table's rows follow its parent's; give the \
                     parent table `changes` (its `on_delete` says what its children do)"
                ),
            ));
        }
        let Some(v) = &ct.versions else {
            return Err(self.err(
                t.span(),
                None,
                "`changes` needs `versions`: how many versions follow version 0",
            ));
        };
        let versions = self.integer(v, None, "changes.versions")?;
        if !(1..=1_000_000).contains(&versions) {
            return Err(self.err(
                v.span(),
                None,
                format!("`changes.versions` must be from 1 to 1000000, not {versions}"),
            ));
        }
        let rate = |v: &Option<Loose<f64>>, key: &str| -> Result<f64, SpecError> {
            v.as_ref()
                .map_or(Ok(0.0), |v| self.rate(v, None, &format!("changes.{key}")))
        };
        let insert = rate(&ct.insert, "insert")?;
        let update = rate(&ct.update, "update")?;
        let delete = rate(&ct.delete, "delete")?;
        if update + delete > 1.0 {
            return Err(self.err(
                t.span(),
                None,
                format!(
                    "`changes.update` ({update}) and `changes.delete` ({delete}) add up to more \
                     than 1: a version changes a row at most once"
                ),
            ));
        }
        let zipf = match &ct.keys {
            None => None,
            Some(k) => {
                let kt = self.params(&k.at, None, "`changes.keys`", &["zipf"])?;
                match &kt.zipf {
                    None => None,
                    Some(z) => {
                        let s = self.number(z, None, "changes.keys.zipf")?;
                        if !(s.is_finite() && s > 0.0) {
                            return Err(self.err(
                                z.span(),
                                None,
                                format!("`changes.keys.zipf` must be above 0, not {s}"),
                            ));
                        }
                        Some(s)
                    }
                }
            }
        };
        let update_fields = match &ct.update_fields {
            None => fields
                .iter()
                .filter(|f| &f.name != pk && fixed_by_row(f).is_none())
                .map(|f| f.name.clone())
                .collect(),
            Some(v) => {
                let bad = |kind: &str| {
                    self.err(
                        v.span(),
                        None,
                        format!(
                            "`changes.update_fields` must be a string or an array of strings, \
                             not {kind}"
                        ),
                    )
                };
                let names: Vec<String> = match v.raw() {
                    Raw::Str(s) => vec![s.clone()],
                    Raw::Array(items) => items
                        .iter()
                        .map(|i| match &i.value {
                            Raw::Str(s) => Ok(s.clone()),
                            other => Err(bad(&format!("an array holding {}", other.kind()))),
                        })
                        .collect::<Result<_, _>>()?,
                    other => return Err(bad(other.kind())),
                };
                for n in &names {
                    let Some(f) = fields.iter().find(|f| &f.name == n) else {
                        return Err(self.err(
                            v.span(),
                            None,
                            format!("`changes.update_fields`: {what} has no top-level field {n:?}"),
                        ));
                    };
                    if n == pk {
                        return Err(self.err(
                            v.span(),
                            None,
                            format!(
                                "`changes.update_fields`: {n:?} is the primary key, which an \
                                 update keeps"
                            ),
                        ));
                    }
                    if let Some(why) = fixed_by_row(f) {
                        return Err(self.err(
                            v.span(),
                            None,
                            format!(
                                "`changes.update_fields`: {n:?} is {why}, so an update cannot \
                                 draw it again"
                            ),
                        ));
                    }
                }
                names
            }
        };
        if update > 0.0 && update_fields.is_empty() {
            return Err(self.err(
                t.span(),
                None,
                format!(
                    "`changes.update` = {update}, but {what} has no field an update can draw again"
                ),
            ));
        }
        let on_delete = match &ct.on_delete {
            None => OnDelete::Cascade,
            Some(v) => match self.string(v, None, "changes.on_delete")?.as_str() {
                "cascade" => OnDelete::Cascade,
                "orphan" => OnDelete::Orphan,
                "keep_parent" => OnDelete::KeepParent,
                other => {
                    return Err(self.err(
                        v.span(),
                        None,
                        format!(
                            "`changes.on_delete` = {other:?}: expected cascade, orphan or \
                             keep_parent"
                        ),
                    ));
                }
            },
        };
        Ok((
            primary_key,
            Some(Changes {
                line,
                versions: versions as u64,
                insert,
                update,
                delete,
                zipf,
                update_fields,
                on_delete,
            }),
        ))
    }
}

/// The fewest children a `count` can give a parent row, when it says.
fn least_count(c: &crate::model::ChildrenOf) -> Option<i128> {
    if !c.count_when.is_empty() {
        return None;
    }
    match &c.count {
        Generator::Constant(crate::Value::Int(n)) => Some(*n),
        Generator::Uniform {
            min: crate::Value::Int(n),
            ..
        } => Some(*n),
        _ => None,
    }
}

/// Checks each table's history against the dataset's references: a
/// table whose deletes must keep foreign keys valid (`cascade`,
/// `keep_parent`) is not the target of another table's `ref` (whose rows
/// would point at deleted rows), and `keep_parent` has children that
/// some rows lack (else it deletes nothing).
pub(super) fn check_histories(p: &P<'_>, tables: &[crate::model::Table]) -> Result<(), SpecError> {
    for t in tables {
        let Some(c) = &t.spec.changes else {
            continue;
        };
        let name = &t.spec.name;
        if c.delete > 0.0 && c.on_delete != OnDelete::Orphan {
            for other in tables {
                for (f, r) in crate::model::query::references(&other.spec) {
                    if &r.table == name && !matches!(r.pick, crate::model::Pick::Parent) {
                        return Err(p.err_at(
                            c.line,
                            Some(name),
                            format!(
                                "`changes.on_delete` = {:?} keeps references to `{name}` valid, \
                                 but `{}.{}` draws rows of it with `ref`, which a deleted row \
                                 would leave pointing nowhere; make it a child table \
                                 (`children_of`), or say `on_delete = \"orphan\"`",
                                c.on_delete.name(),
                                other.spec.name,
                                f.path
                            ),
                        ));
                    }
                }
            }
        }
        if c.on_delete == OnDelete::KeepParent {
            let children: Vec<&crate::model::Table> = tables
                .iter()
                .filter(|x| x.children_of.as_ref().is_some_and(|co| &co.parent == name))
                .collect();
            if children.is_empty() {
                return Err(p.err_at(
                    c.line,
                    Some(name),
                    format!(
                        "`changes.on_delete` = \"keep_parent\", but no table is `children_of` \
                         `{name}`: there is no parent to keep"
                    ),
                ));
            }
            if c.delete > 0.0
                && children.iter().any(|x| {
                    x.children_of
                        .as_ref()
                        .and_then(least_count)
                        .is_some_and(|n| n >= 1)
                })
            {
                return Err(p.err_at(
                    c.line,
                    Some(name),
                    format!(
                        "`changes.on_delete` = \"keep_parent\" never deletes a row with \
                         children, and every row of `{name}` has at least one: `changes.delete` \
                         = {} would delete nothing",
                        c.delete
                    ),
                ));
            }
        }
    }
    Ok(())
}
