//! What the evaluator passes around: the inputs of a batch and a
//! value (a column or a constant), with the small helpers over them.

use arrow_array::{Array, ArrayRef, BooleanArray, Datum, Scalar, StringArray, new_null_array};

use crate::Error;
use crate::model::expression::ETy;
use crate::rng::StreamKey;

/// What an expression reads while it is evaluated for a batch.
pub(crate) struct Inputs<'a> {
    /// The arrays of the siblings (those it reads are present).
    pub columns: &'a [Option<ArrayRef>],
    /// The rows' ids.
    pub ids: &'a [u64],
    /// The field's own stream, for `uniform`.
    pub key: StreamKey,
}

/// An evaluated node: a column, or one value for every row.
pub(super) enum Val {
    Array(ArrayRef),
    Scalar(ArrayRef),
}

impl Val {
    /// `a` as a constant (`scalar`: one row for all) or a column.
    pub(super) fn of(a: ArrayRef, scalar: bool) -> Val {
        if scalar {
            Val::Scalar(a)
        } else {
            Val::Array(a)
        }
    }

    pub(super) fn datum(&self) -> Box<dyn Datum + '_> {
        match self {
            Val::Array(a) => Box::new(a.clone()),
            Val::Scalar(s) => Box::new(Scalar::new(s.clone())),
        }
    }

    /// The value as a column of `n` rows.
    pub(super) fn array(self, n: usize) -> Result<ArrayRef, Error> {
        match self {
            Val::Array(a) => Ok(a),
            Val::Scalar(s) => {
                let idx = arrow_array::UInt32Array::from(vec![0u32; n]);
                Ok(arrow_select::take::take(&s, &idx, None)?)
            }
        }
    }

    pub(super) fn map(
        self,
        f: impl FnOnce(&ArrayRef) -> Result<ArrayRef, Error>,
    ) -> Result<Val, Error> {
        Ok(match self {
            Val::Array(a) => Val::Array(f(&a)?),
            Val::Scalar(s) => Val::Scalar(f(&s)?),
        })
    }

    pub(super) fn is_scalar(&self) -> bool {
        matches!(self, Val::Scalar(_))
    }
}

pub(super) fn expr_error(m: impl std::fmt::Display) -> Error {
    Error::InvalidDistribution(format!("expression: {m}"))
}

/// Whether `v` is the null constant (a strict operation of it is null).
pub(super) fn is_null_constant(v: &Val) -> bool {
    matches!(v, Val::Scalar(a) if a.is_null(0))
}

/// The null constant of type `ty`.
pub(super) fn null_constant(ty: ETy) -> Val {
    Val::Scalar(new_null_array(&ty.arrow(), 1))
}

/// `c` with its nulls as false.
pub(super) fn null_as_false(c: &BooleanArray) -> BooleanArray {
    match c.nulls() {
        Some(n) if n.null_count() > 0 => BooleanArray::new(c.values() & n.inner(), None),
        _ => BooleanArray::new(c.values().clone(), None),
    }
}

pub(super) fn strings(a: &ArrayRef) -> Result<&StringArray, Error> {
    a.as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| expr_error("a string operand is not a string"))
}
