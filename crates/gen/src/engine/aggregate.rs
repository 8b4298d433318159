//! Child aggregates: a parent row's `count`, `sum`, `min`, `max` or
//! `avg` over its children's values, folded run by run.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use crate::Error;
use crate::model::AggOp;

/// `op` of each parent's run of `values` (`offsets[i]..offsets[i + 1]`),
/// as Arrow type `to`; SQL's empty-set results (`count` 0, others null).
/// Integer sums are exact (in `i128`, as `decimal(38, 0)`), integer
/// minima and maxima keep the child's type (`uint64` above `i64::MAX`
/// included); a result that does not fit `to` is an error.
pub(super) fn aggregate(
    op: AggOp,
    values: Option<&ArrayRef>,
    offsets: &[u32],
    to: &DataType,
) -> Result<ArrayRef, Error> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    let n = offsets.len() - 1;
    let runs = offsets.windows(2).map(|w| w[0] as usize..w[1] as usize);
    let bad = |m: &str| Error::InvalidDistribution(format!("aggregate: {m}"));
    let Some(v) = values else {
        // count(*)
        let counts: arrow_array::Int64Array = runs.map(|r| Some(r.len() as i64)).collect();
        return Ok(arrow_cast::cast(&counts, to)?);
    };
    let nulls = v.nulls();
    let valid = |i: usize| nulls.is_none_or(|b| b.is_valid(i));
    if op == AggOp::Count {
        let counts: arrow_array::Int64Array = runs
            .map(|r| Some(r.filter(|&i| valid(i)).count() as i64))
            .collect();
        return Ok(arrow_cast::cast(&counts, to)?);
    }
    let out: ArrayRef = match v.data_type() {
        DataType::Boolean => {
            let b = v.as_boolean();
            let r: arrow_array::BooleanArray = runs
                .map(|r| {
                    let mut seen = r
                        .clone()
                        .filter(|&i| valid(i))
                        .map(|i| b.value(i))
                        .peekable();
                    seen.peek()?;
                    Some(match op {
                        AggOp::All | AggOp::Min => seen.all(|x| x),
                        _ => seen.any(|x| x),
                    })
                })
                .collect();
            Arc::new(r)
        }
        DataType::Decimal128(p, sc) => {
            let d = v.as_primitive::<Decimal128Type>();
            let overflow = || bad("a decimal sum overflows decimal(38)");
            let r = fold_runs::<Decimal128Type>(offsets, op, nulls, |i| d.value(i));
            let r = r.ok_or_else(overflow)?;
            let p = if op == AggOp::Sum { 38 } else { *p };
            let r = r.with_precision_and_scale(p, *sc)?;
            if op == AggOp::Sum {
                // An `i128` sum may still have more than 38 digits.
                r.validate_decimal_precision(p).map_err(|_| overflow())?;
            }
            Arc::new(r)
        }
        DataType::Float32 | DataType::Float64 => {
            let f = arrow_cast::cast(v, &DataType::Float64)?;
            let f = f.as_primitive::<Float64Type>();
            let r = fold_runs::<Float64Type>(offsets, op, nulls, |i| f.value(i));
            Arc::new(r.ok_or_else(|| bad("a float sum overflows"))?)
        }
        DataType::Utf8 => {
            let st = v.as_string::<i32>();
            let r: arrow_array::StringArray = runs
                .map(|r| {
                    let it = r.filter(|&i| valid(i)).map(|i| st.value(i));
                    if op == AggOp::Min { it.min() } else { it.max() }
                })
                .collect();
            Arc::new(r)
        }
        DataType::Date32 if op != AggOp::Sum => {
            let d = v.as_primitive::<Date32Type>();
            let r = fold_runs::<Date32Type>(offsets, op, nulls, |i| d.value(i));
            // A least or greatest value cannot overflow.
            Arc::new(r.ok_or_else(|| bad("a date aggregate overflows"))?)
        }
        DataType::Int8 => integer_runs::<Int8Type>(v, op, offsets)?,
        DataType::Int16 => integer_runs::<Int16Type>(v, op, offsets)?,
        DataType::Int32 => integer_runs::<Int32Type>(v, op, offsets)?,
        DataType::Int64 => integer_runs::<Int64Type>(v, op, offsets)?,
        DataType::UInt8 => integer_runs::<UInt8Type>(v, op, offsets)?,
        DataType::UInt16 => integer_runs::<UInt16Type>(v, op, offsets)?,
        DataType::UInt32 => integer_runs::<UInt32Type>(v, op, offsets)?,
        DataType::UInt64 => integer_runs::<UInt64Type>(v, op, offsets)?,
        other => {
            return Err(bad(&format!("cannot take the {} of {other}", op.as_str())));
        }
    };
    debug_assert_eq!(out.len(), n);
    if out.data_type() == to {
        return Ok(out);
    }
    let options = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    arrow_cast::cast_with_options(&out, to, &options)
        .map_err(|e| bad(&format!("the result does not fit {to}: {e}")))
}

/// `op` (sum, min or max) of integer array `v` (of type `A`) per run of
/// [`aggregate`]: sums exact, in `i128`, as `decimal(38, 0)` (at most
/// `MAX_LENGTH` values below 2^64 each stay far below 10^38), minima and
/// maxima as `A`.
pub(super) fn integer_runs<A: arrow_array::ArrowPrimitiveType>(
    v: &ArrayRef,
    op: AggOp,
    offsets: &[u32],
) -> Result<ArrayRef, Error>
where
    A::Native: Fold + Into<i128>,
{
    use arrow_array::{Array, cast::AsArray};
    let a = v.as_primitive::<A>();
    let overflow = || Error::InvalidDistribution("aggregate: an integer sum overflows".into());
    Ok(if op == AggOp::Sum {
        let r = fold_runs::<arrow_array::types::Decimal128Type>(offsets, op, a.nulls(), |i| {
            a.value(i).into()
        })
        .ok_or_else(overflow)?;
        Arc::new(r.with_precision_and_scale(38, 0)?)
    } else {
        Arc::new(fold_runs::<A>(offsets, op, a.nulls(), |i| a.value(i)).ok_or_else(overflow)?)
    })
}

/// A value [`fold_runs`] folds: integers add checked, floats as IEEE 754
/// does (and their least and greatest ignore NaN, as `f64::min` does).
pub(super) trait Fold: Copy {
    /// `self + x`, `None` when it overflows.
    fn sum(self, x: Self) -> Option<Self>;
    fn least(self, x: Self) -> Self;
    fn greatest(self, x: Self) -> Self;
}

macro_rules! fold_integers {
    ($($t:ty)*) => {$(
        impl Fold for $t {
            #[inline(always)]
            fn sum(self, x: Self) -> Option<Self> {
                self.checked_add(x)
            }
            #[inline(always)]
            fn least(self, x: Self) -> Self {
                Ord::min(self, x)
            }
            #[inline(always)]
            fn greatest(self, x: Self) -> Self {
                Ord::max(self, x)
            }
        }
    )*};
}

fold_integers!(i8 i16 i32 i64 i128 u8 u16 u32 u64);

impl Fold for f64 {
    #[inline(always)]
    fn sum(self, x: Self) -> Option<Self> {
        Some(self + x)
    }
    #[inline(always)]
    fn least(self, x: Self) -> Self {
        self.min(x)
    }
    #[inline(always)]
    fn greatest(self, x: Self) -> Self {
        self.max(x)
    }
}

/// `op` (sum, min or max) of each parent's run of child rows
/// `offsets[i]..offsets[i + 1]`: of the rows `nulls` leaves valid, read by
/// `get`; null for a run without one. `None` when a sum overflows
/// `A::Native`. The operation is chosen once, outside the loop over rows.
#[inline]
pub(super) fn fold_runs<A: arrow_array::ArrowPrimitiveType>(
    offsets: &[u32],
    op: AggOp,
    nulls: Option<&NullBuffer>,
    get: impl Fn(usize) -> A::Native,
) -> Option<arrow_array::PrimitiveArray<A>>
where
    A::Native: Fold,
{
    #[inline(always)]
    fn each<A: arrow_array::ArrowPrimitiveType>(
        offsets: &[u32],
        nulls: Option<&NullBuffer>,
        get: impl Fn(usize) -> A::Native,
        step: impl Fn(A::Native, A::Native) -> Option<A::Native>,
    ) -> Option<arrow_array::PrimitiveArray<A>> {
        let mut out = arrow_array::builder::PrimitiveBuilder::<A>::with_capacity(offsets.len() - 1);
        for w in offsets.windows(2) {
            let mut acc = None;
            for i in w[0] as usize..w[1] as usize {
                if nulls.is_some_and(|b| b.is_null(i)) {
                    continue;
                }
                let x = get(i);
                acc = Some(match acc {
                    None => x,
                    Some(a) => step(a, x)?,
                });
            }
            out.append_option(acc);
        }
        Some(out.finish())
    }
    match op {
        AggOp::Sum => each::<A>(offsets, nulls, get, Fold::sum),
        AggOp::Min => each::<A>(offsets, nulls, get, |a, x| Some(a.least(x))),
        _ => each::<A>(offsets, nulls, get, |a, x| Some(a.greatest(x))),
    }
}
