//! Exact arithmetic over integer units: decimal `+`, `-` and `*` with
//! DuckDB's result scales, rounding and rescaling, and the day and
//! microsecond offsets of date and timestamp arithmetic.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, Date32Array, Decimal128Array, Int64Array, TimestampMicrosecondArray,
};

use super::MAX_PRECISION;
use super::value::{Val, expr_error, is_null_constant, null_constant};
use crate::Error;
use crate::model::expression::{Arith, ETy};

/// `x + sign * k` of each row, as `O` (days or microseconds): a value past
/// `O`'s range is an error (`what`) unless its row is null (a null row's
/// value can be anything).
pub(super) fn offsets<O: TryFrom<i128> + Default + Copy>(
    x: &Units<'_>,
    k: &Units<'_>,
    len: usize,
    sign: i128,
    what: &str,
) -> Result<Vec<O>, Error> {
    let past = std::cell::Cell::new(false);
    let out: Vec<O> = units_kernel(x, k, len, |d, k| {
        O::try_from(d + sign * k).unwrap_or_else(|_| {
            past.set(true);
            O::default()
        })
    });
    if past.get()
        && (0..len)
            .any(|i| x.valid(i) && k.valid(i) && O::try_from(x.get(i) + sign * k.get(i)).is_err())
    {
        return Err(expr_error(what));
    }
    Ok(out)
}

/// Decimal `+`, `-`, `*` on units: integers as units of scale 0, the
/// result at the checked type's scale; overflow of a valid row's value
/// past `i128` is an error (its precision is checked when stored).
#[allow(clippy::too_many_arguments)]
pub(super) fn decimal_arith(
    op: Arith,
    x: &Val,
    xty: ETy,
    xdigits: i16,
    y: &Val,
    yty: ETy,
    ydigits: i16,
    out: ETy,
    n: usize,
    round: u32,
) -> Result<Val, Error> {
    let ETy::Decimal(p, s) = out else {
        return Err(expr_error("a decimal operation without a decimal type"));
    };
    // The stored type when rounding: `round` fewer digits of scale, one
    // more integer digit for the carry.
    let (p_out, s_out) = if round == 0 {
        (p, s)
    } else {
        let s_out = s - round as i8;
        ((p as i16 - round as i16 + 1).clamp(1, 38) as u8, s_out)
    };
    let scale_of = |t: ETy| match t {
        ETy::Decimal(_, s) => s,
        _ => 0,
    };
    if is_null_constant(x) || is_null_constant(y) {
        return Ok(null_constant(out));
    }
    let both_scalar = x.is_scalar() && y.is_scalar();
    let len = if both_scalar { 1 } else { n };
    let (a, b) = (Units::of(x, len)?, Units::of(y, len)?);
    // Operands of `+` and `-` go to the result's scale first.
    let (ma, mb) = if op == Arith::Mul {
        (1, 1)
    } else {
        (
            10i128.pow((s - scale_of(xty)).max(0) as u32),
            10i128.pow((s - scale_of(yty)).max(0) as u32),
        )
    };
    let nulls = arrow_buffer::NullBuffer::union(a.nulls, b.nulls);
    // Operands within their digits cannot overflow a result of at most
    // 38 digits (below 2^127): no check per row then.
    let (sx, sy) = (i16::from(scale_of(xty)), i16::from(scale_of(yty)));
    let need = if op == Arith::Mul {
        xdigits + ydigits
    } else {
        (xdigits - sx).max(ydigits - sy) + i16::from(s) + 1
    };
    if need <= i16::from(MAX_PRECISION) {
        let add = |u: i128, v: i128| u.wrapping_mul(ma).wrapping_add(v.wrapping_mul(mb));
        let sub = |u: i128, v: i128| u.wrapping_mul(ma).wrapping_sub(v.wrapping_mul(mb));
        let values = match (op, round) {
            (Arith::Mul, 0) => units_kernel(&a, &b, len, |u, v| u.wrapping_mul(v)),
            (Arith::Mul, k) => units_kernel(&a, &b, len, |u, v| round_down(u.wrapping_mul(v), k)),
            (Arith::Add, 0) => units_kernel(&a, &b, len, add),
            (Arith::Add, k) => units_kernel(&a, &b, len, |u, v| round_down(add(u, v), k)),
            (_, 0) => units_kernel(&a, &b, len, sub),
            (_, k) => units_kernel(&a, &b, len, |u, v| round_down(sub(u, v), k)),
        };
        let r: ArrayRef = Arc::new(
            Decimal128Array::new(values.into(), nulls).with_precision_and_scale(p_out, s_out)?,
        );
        return Ok(Val::of(r, both_scalar));
    }
    let mut values = Vec::with_capacity(len);
    for i in 0..len {
        let (u, v) = (a.get(i), b.get(i));
        let r = match op {
            Arith::Mul => u.checked_mul(v),
            Arith::Add => u
                .checked_mul(ma)
                .zip(v.checked_mul(mb))
                .and_then(|(u, v)| u.checked_add(v)),
            _ => u
                .checked_mul(ma)
                .zip(v.checked_mul(mb))
                .and_then(|(u, v)| u.checked_sub(v)),
        };
        match r {
            Some(r) if round == 0 => values.push(r),
            Some(r) => values.push(round_down(r, round)),
            None if !(a.valid(i) && b.valid(i)) => values.push(0),
            None => return Err(expr_error("decimal overflow")),
        }
    }
    let r: ArrayRef = Arc::new(
        Decimal128Array::new(values.into(), nulls).with_precision_and_scale(p_out, s_out)?,
    );
    Ok(Val::of(r, both_scalar))
}

/// `f` of the units of `a` and `b`, row by row: one tight loop for each
/// pair of operand kinds.
#[inline(always)]
pub(super) fn units_kernel<O>(
    a: &Units<'_>,
    b: &Units<'_>,
    len: usize,
    f: impl Fn(i128, i128) -> O,
) -> Vec<O> {
    use UnitValues::{Dec, Int, Int32};
    match (&a.values, &b.values, a.scalar, b.scalar) {
        (Dec(x), Dec(y), false, false) => x.iter().zip(*y).map(|(&u, &v)| f(u, v)).collect(),
        (Dec(x), Int(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(u, i128::from(v)))
            .collect(),
        (Int(x), Dec(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), v))
            .collect(),
        (Int32(x), Dec(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), v))
            .collect(),
        (Dec(x), Int32(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(u, i128::from(v)))
            .collect(),
        (Int32(x), Int(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), i128::from(v)))
            .collect(),
        (Int32(x), Int32(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), i128::from(v)))
            .collect(),
        (Int(x), Int(y), false, false) => x
            .iter()
            .zip(*y)
            .map(|(&u, &v)| f(i128::from(u), i128::from(v)))
            .collect(),
        (Int32(x), _, false, true) => {
            let c = b.get(0);
            x.iter().map(|&u| f(i128::from(u), c)).collect()
        }
        (Dec(x), _, false, true) => {
            let c = b.get(0);
            x.iter().map(|&u| f(u, c)).collect()
        }
        (Int(x), _, false, true) => {
            let c = b.get(0);
            x.iter().map(|&u| f(i128::from(u), c)).collect()
        }
        (_, Dec(y), true, false) => {
            let c = a.get(0);
            y.iter().map(|&v| f(c, v)).collect()
        }
        (_, Int(y), true, false) => {
            let c = a.get(0);
            y.iter().map(|&v| f(c, i128::from(v))).collect()
        }
        _ => (0..len).map(|i| f(a.get(i), b.get(i))).collect(),
    }
}

/// Whole units of a decimal, integer or date column (dates as days), or
/// of a constant (`scalar`: one value for every row, never null), by row.
pub(super) struct Units<'a> {
    pub(super) values: UnitValues<'a>,
    pub(super) nulls: Option<&'a arrow_buffer::NullBuffer>,
    pub(super) scalar: bool,
}

pub(super) enum UnitValues<'a> {
    Dec(&'a [i128]),
    Int(&'a [i64]),
    /// `int32` and `date32` values.
    Int32(&'a [i32]),
}

impl<'a> Units<'a> {
    /// `v` read for `len` rows (a null constant is the caller's case).
    pub(super) fn of(v: &'a Val, len: usize) -> Result<Units<'a>, Error> {
        let (a, scalar) = match v {
            Val::Array(a) => (a, false),
            Val::Scalar(a) => (a, true),
        };
        if scalar && a.is_null(0) {
            return Err(expr_error("a null constant read as a number"));
        }
        if !scalar && a.len() != len {
            return Err(expr_error("operands of different lengths"));
        }
        let any = a.as_any();
        let values = if let Some(d) = any.downcast_ref::<Decimal128Array>() {
            UnitValues::Dec(d.values())
        } else if let Some(x) = any.downcast_ref::<Int64Array>() {
            UnitValues::Int(x.values())
        } else if let Some(x) = any.downcast_ref::<arrow_array::Int32Array>() {
            UnitValues::Int32(x.values())
        } else if let Some(x) = any.downcast_ref::<Date32Array>() {
            UnitValues::Int32(x.values())
        } else if let Some(x) = any.downcast_ref::<TimestampMicrosecondArray>() {
            UnitValues::Int(x.values())
        } else {
            return Err(expr_error("a numeric operand is not a number"));
        };
        Ok(Units {
            values,
            nulls: if scalar { None } else { a.nulls() },
            scalar,
        })
    }

    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> i128 {
        let i = if self.scalar { 0 } else { i };
        match self.values {
            UnitValues::Dec(v) => v[i],
            UnitValues::Int(v) => i128::from(v[i]),
            UnitValues::Int32(v) => i128::from(v[i]),
        }
    }

    pub(super) fn valid(&self, i: usize) -> bool {
        self.nulls.is_none_or(|n| n.is_valid(i))
    }
}

/// `units` divided by `10^k`, rounded half away from zero.
#[inline(always)]
pub(super) fn round_down(units: i128, k: u32) -> i128 {
    #[inline(always)]
    pub(super) fn small<const D: i64>(x: i64) -> i64 {
        let (q, r) = (x / D, x % D);
        q + (2 * r.abs() >= D) as i64 * x.signum()
    }
    if let Ok(x) = i64::try_from(units)
        && x.unsigned_abs() < (1 << 62)
    {
        // Constant divisors: the compiler multiplies instead of dividing.
        return i128::from(match k {
            1 => small::<10>(x),
            2 => small::<100>(x),
            3 => small::<1_000>(x),
            4 => small::<10_000>(x),
            5 => small::<100_000>(x),
            6 => small::<1_000_000>(x),
            _ => return round_wide(units, k),
        });
    }
    round_wide(units, k)
}

pub(super) fn round_wide(units: i128, k: u32) -> i128 {
    let d = 10u128.pow(k);
    let (q, r) = (units / d as i128, units.unsigned_abs() % d);
    // `2r >= d` without doubling r, which would overflow at k = 38.
    q + (r >= d - r) as i128 * units.signum()
}

/// A decimal column at scale `s` as `Decimal128(p, to)`: rounded half
/// away from zero, a valid value beyond `p` digits an error.
pub(super) fn rescale_decimal(
    d: &Decimal128Array,
    s: i8,
    p: u8,
    to: i8,
) -> Result<ArrayRef, Error> {
    let max = 10i128.pow(u32::from(p)) - 1;
    let nulls = d.nulls();
    let src = d.values();
    if to == s {
        // Same scale: the values stay where they are, once checked.
        if let Some(i) = src.iter().enumerate().position(|(i, v)| {
            v.unsigned_abs() > max as u128 && !nulls.is_some_and(|nb| nb.is_null(i))
        }) {
            return Err(expr_error(format!(
                "a value does not fit decimal({p}, {to}): {}",
                <arrow_array::types::Decimal128Type as arrow_array::types::DecimalType>::format_decimal(src[i], 38, s)
            )));
        }
        return Ok(Arc::new(d.clone().with_precision_and_scale(p, to)?));
    }
    // One loop per direction, the factor or divisor fixed outside it.
    let values: Vec<i128> = if to > s {
        let m = 10i128.pow((to - s) as u32);
        src.iter().map(|&u| u.saturating_mul(m)).collect()
    } else {
        let k = (s - to) as u32;
        match k {
            1 => src.iter().map(|&u| round_down(u, 1)).collect(),
            2 => src.iter().map(|&u| round_down(u, 2)).collect(),
            _ => src.iter().map(|&u| round_down(u, k)).collect(),
        }
    };
    if let Some(i) = values
        .iter()
        .enumerate()
        .position(|(i, v)| v.unsigned_abs() > max as u128 && !nulls.is_some_and(|nb| nb.is_null(i)))
    {
        return Err(expr_error(format!(
            "a value does not fit decimal({p}, {to}): {}",
            <arrow_array::types::Decimal128Type as arrow_array::types::DecimalType>::format_decimal(
                src[i], 38, s
            )
        )));
    }
    Ok(Arc::new(
        Decimal128Array::new(values.into(), nulls.cloned()).with_precision_and_scale(p, to)?,
    ))
}
