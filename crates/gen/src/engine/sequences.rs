//! Sequence limits: the rows past which a sequence (or a `when` branch
//! of one) would leave its type's range, checked before a batch is made.

use arrow_schema::DataType;

use crate::Error;
use crate::model::class::Class;
use crate::model::query::{max_length, sequence_ids};
use crate::model::{Field, Generator, Kind, Value};
use crate::template::{Part, Placeholder};

/// A leaf whose values stop being right past some element: a sequence
/// that would pass its type's greatest (or least) value, or a sequence or
/// `{seq}` template whose element index would pass 2^64.
#[derive(Debug)]
pub(super) struct SeqLimit {
    /// Elements `0..ids` are right.
    pub(super) ids: u128,
    /// Elements per row of the table: the product of the most lengths of
    /// the lists and maps above the leaf.
    pub(super) per_row: u128,
    pub(super) path: String,
    pub(super) line: usize,
    /// What would happen: `the sequence from 100 by 1 would pass 127,
    /// the greatest Int8,`.
    pub(super) what: String,
    /// What to do about it.
    pub(super) advice: &'static str,
}

impl SeqLimit {
    /// Checks rows `0..rows` of its table, each `per_root` rows of the
    /// table the rows count (more than 1 for a child table's rows, which
    /// are the children of its root's).
    pub(super) fn check(&self, rows: u64, per_root: u128) -> Result<(), Error> {
        let per_row = self.per_row.saturating_mul(per_root);
        // Row `r`'s elements are `r * per_row ..`: rows past `ids /
        // per_row` may reach element `ids`.
        let fits = self.ids / per_row;
        if u128::from(rows) <= fits {
            return Ok(());
        }
        let at = if per_root > 1 {
            format!("at the children of root row {fits}")
        } else {
            format!("at row {fits}")
        };
        Err(Error::field(
            &self.path,
            self.line,
            format!(
                "{} {at} of the {rows} asked for; {}",
                self.what, self.advice
            ),
        ))
    }
}

/// The element index space: ids are `u64`.
pub(super) const ID_SPACE: u128 = 1 << 64;

/// The [`SeqLimit`]s of `fields`, each of whose elements is `per_row` of
/// a row.
pub(super) fn sequence_limits(fields: &[Field], per_row: u128, out: &mut Vec<SeqLimit>) {
    for f in fields {
        match &f.kind {
            Kind::Struct(children) => sequence_limits(children, per_row, out),
            Kind::List { item, length, .. } => {
                let per = per_row.saturating_mul(u128::from(max_length(length).max(1)));
                sequence_limits(std::slice::from_ref(&**item), per, out);
            }
            Kind::Map { key, value, length } => {
                let per = per_row.saturating_mul(u128::from(max_length(length).max(1)));
                sequence_limits(std::slice::from_ref(&**key), per, out);
                sequence_limits(std::slice::from_ref(&**value), per, out);
            }
            Kind::Scalar {
                data_type,
                generator,
            } => {
                let gens = std::iter::once(generator)
                    .chain(f.when.iter().filter_map(|w| w.generator.as_ref()));
                for g in gens {
                    if let Some((ids, what)) = leaf_limit(g, data_type) {
                        out.push(SeqLimit {
                            ids,
                            per_row,
                            path: f.path.clone(),
                            line: f.line,
                            advice: if ids < ID_SPACE {
                                "use a wider type, or another start or step"
                            } else {
                                "ask for fewer rows, or give the lists around it fewer elements"
                            },
                            what,
                        });
                    }
                }
            }
        }
    }
}

/// The elements whose values generator `g` of a leaf of type `dt` gets
/// right, and what goes wrong past them; `None` when nothing does.
pub(super) fn leaf_limit(g: &Generator, dt: &DataType) -> Option<(u128, String)> {
    let index = || {
        Some((
            ID_SPACE,
            "its element index (the row times the most lengths of the lists around it) would pass 2^64"
                .to_string(),
        ))
    };
    match g {
        Generator::Sequence {
            start: start_value @ Value::Int(start),
            step: Value::Int(step),
        } => {
            let Some((lo, hi)) = Class::of(dt).int_range() else {
                return index();
            };
            match sequence_ids(*start, *step, (lo, hi)) {
                Some(n) if n < ID_SPACE => {
                    let (which, bound) = if *step > 0 {
                        ("greatest", hi)
                    } else {
                        ("least", lo)
                    };
                    Some((
                        n,
                        format!(
                            "the sequence from {} by {step} would pass {}, the {which} {dt},",
                            start_value.display_as(dt),
                            Value::Int(bound).display_as(dt)
                        ),
                    ))
                }
                _ => index(),
            }
        }
        Generator::Sequence { .. } => index(),
        Generator::Template(t)
            if t.parts().iter().any(|p| {
                matches!(
                    p,
                    Part::Slot {
                        placeholder: Placeholder::Seq,
                        ..
                    }
                )
            }) =>
        {
            index()
        }
        _ => None,
    }
}

/// The error for a table of `want` rows whose field `field` gives
/// values for only `n`.
pub(super) fn too_few_values(table: &str, field: &str, n: u64, want: u64) -> Error {
    Error::InvalidDistribution(format!(
        "table `{table}`: field `{field}` has `values_by_row` for {n} rows, but {want} rows were asked for; generate at most {n} rows, or give the field `cycle = true`"
    ))
}
