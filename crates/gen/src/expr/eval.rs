//! The evaluator: a checked tree run over a batch with Arrow's compute
//! kernels, a column at a time.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int64Array, Scalar,
    StringArray, TimestampMicrosecondArray, cast::AsArray, new_null_array,
};
use arrow_schema::DataType;

use super::MAX_PRECISION;
use super::decimal::{Units, decimal_arith, offsets, rescale_decimal, round_down};
use super::text::{StrBuild, Strs, decimal_text, int_strings, timestamp_strings};
use super::value::{
    Inputs, Val, expr_error, is_null_constant, null_as_false, null_constant, strings,
};
use crate::Error;
use crate::dates::parse_timestamp;
use crate::model::expression::{Arith, Cmp, ETy, Lit, NodeK, TNode};
use crate::rng::StreamKey;

/// The rows where test `tree` is true (null is false), one bit per row.
pub(crate) fn test(tree: &TNode, inp: &Inputs<'_>) -> Result<arrow_buffer::BooleanBuffer, Error> {
    let v = evaluate(tree, inp, &DataType::Boolean)?;
    let b = v
        .as_boolean_opt()
        .ok_or_else(|| expr_error("a condition is not a boolean"))?;
    Ok(null_as_false(b).values().clone())
}

/// Evaluates `tree` for the rows of `inp`, as a column of Arrow type
/// `to` (the field's).
pub(crate) fn evaluate(tree: &TNode, inp: &Inputs<'_>, to: &DataType) -> Result<ArrayRef, Error> {
    let n = inp.ids.len();
    // Decimal arithmetic stored at a smaller scale rounds as it computes.
    if let (
        NodeK::Arith(Arith::Add | Arith::Sub | Arith::Mul, ..),
        ETy::Decimal(_, s),
        DataType::Decimal128(_, to_s),
    ) = (&tree.kind, tree.ty, to)
        && *to_s >= 0
        && *to_s < s
    {
        let v = decimal_node(tree, inp, (s - to_s) as u32)?.array(n)?;
        let ty = match v.data_type() {
            DataType::Decimal128(p, s) => ETy::Decimal(*p, *s),
            _ => return Err(expr_error("a decimal operation gave no decimal")),
        };
        return convert(&v, ty, to);
    }
    let v = eval(tree, inp)?.array(n)?;
    convert(&v, tree.ty, to)
}

/// Decimal `+`, `-` or `*` node `t`, its result rounded to `round` fewer
/// digits of scale in the same pass.
fn decimal_node(t: &TNode, inp: &Inputs<'_>, round: u32) -> Result<Val, Error> {
    let NodeK::Arith(op, a, b) = &t.kind else {
        return Err(expr_error("a decimal operation that is not arithmetic"));
    };
    // An integer made a decimal of scale 0 is read as the integer (its
    // units): no decimal column is made for it.
    fn unit(n: &TNode) -> &TNode {
        match &n.kind {
            NodeK::Cast(x) if x.ty == ETy::Int && matches!(n.ty, ETy::Decimal(_, 0)) => x,
            _ => n,
        }
    }
    let (a, b) = (unit(a), unit(b));
    let (x, y) = (eval_int32(a, inp)?, eval_int32(b, inp)?);
    // The most digits each operand's values have.
    let digits = |node: &TNode| match (&node.kind, node.ty) {
        (NodeK::Lit(Lit::Int(v)), _) => {
            v.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1) as i16
        }
        (NodeK::Col(i), ETy::Int) => match inp
            .columns
            .get(*i)
            .and_then(|c| c.as_ref())
            .map(|c| c.data_type())
        {
            Some(DataType::Int8 | DataType::UInt8) => 3,
            Some(DataType::Int16 | DataType::UInt16) => 5,
            Some(DataType::Int32 | DataType::UInt32) => 10,
            _ => 19,
        },
        (_, ETy::Decimal(p, _)) => i16::from(p),
        _ => 19,
    };
    let n = inp.ids.len();
    decimal_arith(
        *op,
        &x,
        a.ty,
        digits(a),
        &y,
        b.ty,
        digits(b),
        t.ty,
        n,
        round,
    )
}

/// `a` (of expression type `ty`) as Arrow type `to`: decimals rounded
/// half away from zero, overflow an error.
fn convert(a: &ArrayRef, ty: ETy, to: &DataType) -> Result<ArrayRef, Error> {
    if a.data_type() == to {
        return Ok(a.clone());
    }
    // Timestamps change unit by a cast and time zone by a new label (a
    // cast between zones would move the instants to local times).
    if let DataType::Timestamp(from_unit, Some(_)) = a.data_type() {
        let plain = DataType::Timestamp(*from_unit, None);
        let a = arrow_array::make_array(a.to_data().into_builder().data_type(plain).build()?);
        return convert(&a, ty, to);
    }
    if let (DataType::Timestamp(..), DataType::Timestamp(unit, Some(_))) = (a.data_type(), to) {
        let plain = convert(a, ty, &DataType::Timestamp(*unit, None))?;
        return Ok(arrow_array::make_array(
            plain
                .to_data()
                .into_builder()
                .data_type(to.clone())
                .build()?,
        ));
    }
    let options = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    if let (ETy::Decimal(_, s), DataType::Decimal128(p, to_s)) = (ty, to)
        && let Some(d) = a.as_any().downcast_ref::<Decimal128Array>()
    {
        return rescale_decimal(d, s, *p, *to_s);
    }
    let out = arrow_cast::cast_with_options(a, to, &options);
    out.map_err(|e| expr_error(format!("cannot store a value as {to}: {e}")))
}

fn eval(t: &TNode, inp: &Inputs<'_>) -> Result<Val, Error> {
    let n = inp.ids.len();
    Ok(match &t.kind {
        NodeK::Col(i) => {
            let a = inp
                .columns
                .get(*i)
                .and_then(|c| c.clone())
                .ok_or_else(|| expr_error("a sibling was not generated first"))?;
            let want = t.ty.arrow();
            if *a.data_type() == want {
                Val::Array(a)
            } else {
                Val::Array(convert(&a, t.ty, &want)?)
            }
        }
        NodeK::Lit(l) => Val::Scalar(literal_array(l, t.ty)?),
        NodeK::Neg(x) => eval(x, inp)?.map(|a| Ok(arrow_arith::numeric::neg(a)?))?,
        NodeK::Arith(Arith::Add | Arith::Sub | Arith::Mul, ..)
            if matches!(t.ty, ETy::Decimal(..)) =>
        {
            decimal_node(t, inp, 0)?
        }
        NodeK::Arith(op, a, b) => {
            let (x, y) = (eval(a, inp)?, eval(b, inp)?);
            let both_scalar = x.is_scalar() && y.is_scalar();
            let y = if matches!(op, Arith::Div | Arith::IntDiv | Arith::Rem) {
                // Division by zero (or -0.0) is null.
                let scalar = y.is_scalar();
                let ya = match y {
                    Val::Array(a) | Val::Scalar(a) => a,
                };
                let is_zero = match ya.as_any().downcast_ref::<Float64Array>() {
                    Some(f) => BooleanArray::from_unary(f, |v| v == 0.0),
                    None => {
                        let zero = arrow_cast::cast(
                            &literal_array(&Lit::Int(0), ETy::Int)?,
                            ya.data_type(),
                        )?;
                        arrow_ord::cmp::eq(&ya, &Scalar::new(zero))?
                    }
                };
                Val::of(arrow_select::nullif::nullif(&ya, &is_zero)?, scalar)
            } else {
                y
            };
            let (xd, yd) = (x.datum(), y.datum());
            let r = match op {
                Arith::Add => arrow_arith::numeric::add(&*xd, &*yd),
                Arith::Sub => arrow_arith::numeric::sub(&*xd, &*yd),
                Arith::Mul => arrow_arith::numeric::mul(&*xd, &*yd),
                Arith::Div | Arith::IntDiv => arrow_arith::numeric::div(&*xd, &*yd),
                Arith::Rem => arrow_arith::numeric::rem(&*xd, &*yd),
            }
            .map_err(expr_error)?;
            let r = match t.ty {
                // Decimal results carry the scale computed when checked.
                ETy::Decimal(..) if *r.data_type() != t.ty.arrow() => {
                    convert(&r, t.ty, &t.ty.arrow())?
                }
                _ => r,
            };
            Val::of(r, both_scalar)
        }
        NodeK::DateAdd(d, days, sub) => {
            let (x, y) = (eval(d, inp)?, eval_int32(days, inp)?);
            if is_null_constant(&x) || is_null_constant(&y) {
                return Ok(null_constant(t.ty));
            }
            let both_scalar = x.is_scalar() && y.is_scalar();
            let len = if both_scalar { 1 } else { n };
            let (dates, add) = (Units::of(&x, len)?, Units::of(&y, len)?);
            let sign: i128 = if *sub { -1 } else { 1 };
            let nulls = arrow_buffer::NullBuffer::union(dates.nulls, add.nulls);
            let r: ArrayRef = if t.ty == ETy::Timestamp {
                let v = offsets::<i64>(&dates, &add, len, sign, "a timestamp out of range")?;
                Arc::new(TimestampMicrosecondArray::new(v.into(), nulls))
            } else {
                let v = offsets::<i32>(&dates, &add, len, sign, "a date out of range")?;
                Arc::new(Date32Array::new(v.into(), nulls))
            };
            Val::of(r, both_scalar)
        }
        NodeK::DateDiff(a, b) => {
            let (x, y) = (eval(a, inp)?, eval(b, inp)?);
            let both_scalar = x.is_scalar() && y.is_scalar();
            let to_days = |a: &ArrayRef| -> Result<ArrayRef, Error> {
                Ok(arrow_cast::cast(
                    &arrow_cast::cast(a, &DataType::Int32)?,
                    &DataType::Int64,
                )?)
            };
            let (x, y) = (x.map(to_days)?, y.map(to_days)?);
            let r = arrow_arith::numeric::sub(&*x.datum(), &*y.datum()).map_err(expr_error)?;
            Val::of(r, both_scalar)
        }
        NodeK::Cmp(op, a, b) => {
            let (x, y) = (eval(a, inp)?, eval(b, inp)?);
            let both_scalar = x.is_scalar() && y.is_scalar();
            let r: ArrayRef = Arc::new(compare(*op, &x, &y)?);
            Val::of(r, both_scalar)
        }
        NodeK::In(x, items) => {
            let x = eval(x, inp)?;
            let mut any: Option<(BooleanArray, bool)> = None;
            for item in items {
                let v = eval(item, inp)?;
                let scalar = x.is_scalar() && v.is_scalar();
                let eq = compare(Cmp::Eq, &x, &v)?;
                any = Some(match any {
                    None => (eq, scalar),
                    Some((acc, acc_scalar)) if acc_scalar == scalar => {
                        (arrow_arith::boolean::or_kleene(&acc, &eq)?, scalar)
                    }
                    Some((acc, acc_scalar)) => {
                        let widen = |b: BooleanArray, s: bool| -> Result<ArrayRef, Error> {
                            Val::of(Arc::new(b), s).array(n)
                        };
                        let (acc, eq) = (widen(acc, acc_scalar)?, widen(eq, scalar)?);
                        let (acc, eq) = (acc.as_boolean(), eq.as_boolean());
                        (arrow_arith::boolean::or_kleene(acc, eq)?, false)
                    }
                });
            }
            let (r, scalar) = any.ok_or_else(|| expr_error("an empty IN list"))?;
            Val::of(Arc::new(r), scalar)
        }
        NodeK::And(a, b) | NodeK::Or(a, b) => {
            let and = matches!(t.kind, NodeK::And(..));
            let x = eval(a, inp)?.array(n)?;
            let x = x
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(|| expr_error("AND/OR of non-booleans"))?;
            // The right side only for the rows the left leaves open (not
            // false for AND, not true for OR): the others' answer is known.
            let settled = if and {
                arrow_arith::boolean::not(&null_as_false(&arrow_arith::boolean::not(x)?))?
            } else {
                arrow_arith::boolean::not(&null_as_false(x))?
            };
            let y = eval_where(b, inp, &settled)?.array(n)?;
            let Some(y) = y.as_any().downcast_ref::<BooleanArray>() else {
                return Err(expr_error("AND/OR of non-booleans"));
            };
            let r = if and {
                arrow_arith::boolean::and_kleene(x, y)?
            } else {
                arrow_arith::boolean::or_kleene(x, y)?
            };
            Val::Array(Arc::new(r))
        }
        NodeK::Not(a) => eval(a, inp)?.map(|x| {
            let b = x
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(|| expr_error("NOT of a non-boolean"))?;
            Ok(Arc::new(arrow_arith::boolean::not(b)?) as ArrayRef)
        })?,
        NodeK::IsNull(a, negated) => {
            let negated = *negated;
            eval(a, inp)?.map(|x| {
                let r = if negated {
                    arrow_arith::boolean::is_not_null(x)?
                } else {
                    arrow_arith::boolean::is_null(x)?
                };
                Ok(Arc::new(r) as ArrayRef)
            })?
        }
        NodeK::Case(whens, other) => {
            let literals = literal_results(whens, other.as_deref(), t.ty);
            // One operand against literals: each row's branch by a lookup,
            // the operand evaluated once.
            let looked_up = lookup_branches(whens, inp)?;
            if let (Some(results), Some(branch)) = (&literals, &looked_up) {
                return Ok(Val::Array(strings_by_branch(results, branch)?));
            }
            let (takes, rest) = match looked_up {
                Some(branch) => masks_of(&branch, whens.len()),
                None => case_branches(whens, inp)?,
            };
            if let Some(results) = &literals {
                return Ok(Val::Array(strings_by_branch(
                    results,
                    &branch_of(&takes, n),
                )?));
            }
            let mut acc = match other {
                Some(o) => eval_where(o, inp, &rest)?,
                None => null_constant(t.ty),
            };
            for ((_, r), take) in whens.iter().zip(&takes).rev() {
                let r = eval_where(r, inp, take)?;
                let zipped = arrow_select::zip::zip(take, &*r.datum(), &*acc.datum())?;
                acc = Val::Array(zipped);
            }
            Val::Array(acc.array(n)?)
        }
        NodeK::Coalesce(items) => {
            // Each argument only for the rows still null (as DuckDB, so an
            // error in an argument a row does not reach is not its error).
            let mut acc: Option<ArrayRef> = None;
            let mut missing = BooleanArray::new(arrow_buffer::BooleanBuffer::new_set(n), None);
            for x in items {
                let v = eval_where(x, inp, &missing)?.array(n)?;
                let now = match acc {
                    None => v,
                    Some(a) => arrow_select::zip::zip(&missing, &v, &a)?,
                };
                missing = arrow_arith::boolean::is_null(&now)?;
                acc = Some(now);
                if missing.true_count() == 0 {
                    break;
                }
            }
            Val::Array(acc.ok_or_else(|| expr_error("coalesce without arguments"))?)
        }
        NodeK::Extreme(items, greatest) => {
            let mut acc: Option<ArrayRef> = None;
            for x in items {
                let v = eval(x, inp)?.array(n)?;
                acc = Some(match acc {
                    None => v,
                    Some(best) => {
                        // Take v where best is null, or where v is valid and beats best.
                        let beats = if *greatest {
                            arrow_ord::cmp::gt(&v, &best)?
                        } else {
                            arrow_ord::cmp::lt(&v, &best)?
                        };
                        let beats = null_as_false(&beats);
                        let best_null = arrow_arith::boolean::is_null(&best)?;
                        let take = arrow_arith::boolean::or(&beats, &best_null)?;
                        arrow_select::zip::zip(&take, &v, &best)?
                    }
                });
            }
            Val::Array(acc.expect("least/greatest have arguments"))
        }
        NodeK::Concat(parts) | NodeK::ConcatNullsEmpty(parts) => {
            let nulls_empty = matches!(t.kind, NodeK::ConcatNullsEmpty(_));
            concat(parts, nulls_empty, inp)?
        }
        // An integer's text padded by one ASCII byte: written in one pass.
        NodeK::Lpad(x, _, fill) if int_text(x).is_some() && fill.len() == 1 && fill.is_ascii() => {
            concat(std::slice::from_ref(t), false, inp)?
        }
        NodeK::Substr(s, start, len) => {
            let v = eval(s, inp)?;
            let from = eval(start, inp)?;
            let count = len.as_deref().map(|l| eval(l, inp)).transpose()?;
            let scalar =
                v.is_scalar() && from.is_scalar() && count.as_ref().is_none_or(Val::is_scalar);
            let rows = if scalar { 1 } else { n };
            let (v, from) = (v.array(rows)?, from.array(rows)?);
            let count = count.map(|c| c.array(rows)).transpose()?;
            let strs = v
                .as_string_opt::<i32>()
                .ok_or_else(|| expr_error("substring of a non-string"))?;
            let from = int64s(&from, "a substring bound")?;
            let count = count
                .as_ref()
                .map(|c| int64s(c, "a substring bound"))
                .transpose()?;
            let mut b = StrBuild::new(rows, strs.value_data().len());
            for i in 0..rows {
                let length = match &count {
                    None => Some(i64::MAX),
                    Some(c) => c.is_valid(i).then(|| c.value(i)),
                };
                // DuckDB's bounds, past which it refuses the query.
                const BOUND: std::ops::RangeInclusive<i64> = -(1 << 32)..=(1 << 32) - 1;
                let within = (!from.is_valid(i) || BOUND.contains(&from.value(i)))
                    && (count.is_none() || length.is_none_or(|l| BOUND.contains(&l)));
                if !within {
                    return Err(expr_error(
                        "a substring start or length outside -4294967296..=4294967295",
                    ));
                }
                match (strs.is_valid(i), from.is_valid(i), length) {
                    (true, true, Some(length)) => {
                        b.push_part(substring(strs.value(i), from.value(i), length));
                        b.end_value();
                    }
                    _ => b.null(),
                }
            }
            Val::of(b.finish()?, scalar)
        }
        NodeK::Lpad(s, len, fill) => {
            let v = eval(s, inp)?;
            let scalar = v.is_scalar();
            let strs = Strs::of(&v)?;
            let rows = if scalar { 1 } else { n };
            let fill: Vec<char> = fill.chars().collect();
            let ascii_fill = fill.len() == 1 && fill[0].is_ascii();
            let mut b = StrBuild::new(rows, rows * *len);
            for i in 0..rows {
                let Some(x) = strs.get(i) else {
                    b.null();
                    continue;
                };
                // ASCII values (numbers, codes) are padded by bytes.
                let chars = if x.is_ascii() {
                    x.len()
                } else {
                    x.chars().count()
                };
                if chars >= *len {
                    let cut = x.char_indices().nth(*len).map_or(x.len(), |(at, _)| at);
                    b.push_part(&x[..cut]);
                } else if ascii_fill {
                    b.push_repeated(fill[0] as u8, *len - chars);
                    b.push_part(x);
                } else {
                    let pad: String = fill.iter().cycle().take(*len - chars).collect();
                    b.push_part(&pad);
                    b.push_part(x);
                }
                b.end_value();
            }
            let r = b.finish()?;
            Val::of(r, scalar)
        }
        NodeK::Cast(x) => {
            let v = eval(x, inp)?;
            let from = x.ty;
            v.map(|a| cast_value(a, from, t.ty))?
        }
        NodeK::RoundTens(x, k) => {
            let v = eval(x, inp)?;
            if is_null_constant(&v) {
                return Ok(null_constant(t.ty));
            }
            let scale = match x.ty {
                ETy::Decimal(_, s) => s as u32,
                _ => 0,
            };
            let len = if v.is_scalar() { 1 } else { n };
            let u = Units::of(&v, len)?;
            let (shift, m) = (scale + k, 10i128.pow(*k));
            let fits = match t.ty {
                ETy::Decimal(p, _) => {
                    let max = 10i128.pow(u32::from(p)) - 1;
                    -max..=max
                }
                _ => i128::from(i64::MIN)..=i128::from(i64::MAX),
            };
            let mut out = Vec::with_capacity(len);
            for i in 0..len {
                // Past 38 digits every value of at most 38 digits rounds to 0.
                let q = if shift > u32::from(MAX_PRECISION) {
                    0
                } else {
                    round_down(u.get(i), shift)
                };
                match q.checked_mul(m) {
                    Some(r) if fits.contains(&r) => out.push(r),
                    _ if !u.valid(i) => out.push(0),
                    _ => return Err(expr_error(format!("round overflows {}", t.ty.name()))),
                }
            }
            let nulls = u.nulls.cloned();
            let r: ArrayRef = match t.ty {
                ETy::Decimal(p, s) => Arc::new(
                    Decimal128Array::new(out.into(), nulls).with_precision_and_scale(p, s)?,
                ),
                _ => Arc::new(Int64Array::new(
                    out.into_iter().map(|r| r as i64).collect(),
                    nulls,
                )),
            };
            Val::of(r, v.is_scalar())
        }
        NodeK::Scale | NodeK::Rows(_) => {
            return Err(expr_error(
                "scale() and rows() are set when the spec is compiled for a run",
            ));
        }
        NodeK::UniformOf(lo, hi, salt) => {
            let (lo, hi) = (eval(lo, inp)?.array(n)?, eval(hi, inp)?.array(n)?);
            let (lo, hi) = (
                int64s(&lo, "a uniform bound")?,
                int64s(&hi, "a uniform bound")?,
            );
            let key = StreamKey::new(inp.key.first(*salt), 0x7e47_a11d);
            let v: Int64Array = (0..n)
                .map(|i| {
                    if lo.is_null(i) || hi.is_null(i) || lo.value(i) > hi.value(i) {
                        return None;
                    }
                    let (min, max) = (lo.value(i), hi.value(i));
                    let span = (max as i128 - min as i128 + 1) as u128;
                    let r = ((u128::from(key.first(inp.ids[i])) * span) >> 64) as i128;
                    Some((min as i128 + r) as i64)
                })
                .collect();
            Val::Array(Arc::new(v))
        }
        NodeK::Uniform { min, max, salt } => {
            let span = (*max as i128 - *min as i128 + 1) as u128;
            let key = StreamKey::new(inp.key.first(*salt), 0x7e47_a11d);
            let v: Vec<i64> = inp
                .ids
                .iter()
                .map(|&id| {
                    let r = ((u128::from(key.first(id)) * span) >> 64) as i128;
                    (*min as i128 + r) as i64
                })
                .collect();
            let v = Int64Array::from(v);
            Val::Array(Arc::new(v))
        }
    })
}

/// `x op y`, as SQL compares: for doubles, `-0.0` equals `0.0` (Arrow's
/// kernels order floats totally, where they differ).
fn compare(op: Cmp, x: &Val, y: &Val) -> Result<BooleanArray, Error> {
    use arrow_ord::cmp;
    let signless = |v: &Val| -> Result<Option<Val>, Error> {
        let a = match v {
            Val::Array(a) | Val::Scalar(a) => a,
        };
        let Some(f) = a.as_any().downcast_ref::<Float64Array>() else {
            return Ok(None);
        };
        let f: Float64Array = f.unary(|x| x + 0.0);
        Ok(Some(Val::of(Arc::new(f), v.is_scalar())))
    };
    let (sx, sy) = (signless(x)?, signless(y)?);
    let (x, y) = (sx.as_ref().unwrap_or(x), sy.as_ref().unwrap_or(y));
    let (xd, yd) = (x.datum(), y.datum());
    Ok(match op {
        Cmp::Eq => cmp::eq(&*xd, &*yd),
        Cmp::Ne => cmp::neq(&*xd, &*yd),
        Cmp::Lt => cmp::lt(&*xd, &*yd),
        Cmp::Le => cmp::lt_eq(&*xd, &*yd),
        Cmp::Gt => cmp::gt(&*xd, &*yd),
        Cmp::Ge => cmp::gt_eq(&*xd, &*yd),
    }?)
}

/// [`eval`], but an `int32` sibling as it is (the loops that take it
/// read 32-bit integers without a cast to 64 bits first).
fn eval_int32(t: &TNode, inp: &Inputs<'_>) -> Result<Val, Error> {
    if let (NodeK::Col(i), ETy::Int) = (&t.kind, t.ty)
        && let Some(Some(c)) = inp.columns.get(*i)
        && *c.data_type() == DataType::Int32
    {
        return Ok(Val::Array(c.clone()));
    }
    eval(t, inp)
}

/// `CAST` semantics: numbers to integers round half away from zero (as
/// DuckDB does); strings to dates parse `YYYY-MM-DD`.
fn cast_value(a: &ArrayRef, from: ETy, to: ETy) -> Result<ArrayRef, Error> {
    let strict = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    let dt = to.arrow();
    let r = match (from, to) {
        (ETy::Float, ETy::Int) => {
            let f = arrow_cast::cast(a, &DataType::Float64)?;
            let f = f
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or_else(|| expr_error("a double is not a double"))?;
            let rounded: Float64Array = f.unary(f64::round);
            arrow_cast::cast_with_options(&rounded, &dt, &strict)
        }
        (ETy::Decimal(..), ETy::Int) => {
            // Rounded by the cast to scale 0 first.
            let whole =
                arrow_cast::cast_with_options(a, &DataType::Decimal128(MAX_PRECISION, 0), &strict)?;
            arrow_cast::cast_with_options(&whole, &dt, &strict)
        }
        (ETy::Null, _) => Ok(new_null_array(&dt, a.len())),
        (ETy::Int, ETy::Str) => return int_strings(a),
        (ETy::Timestamp, ETy::Str) => return timestamp_strings(a),
        (ETy::Str, ETy::Timestamp) => {
            let s = strings(a)?;
            let mut bad = None;
            let v: TimestampMicrosecondArray = s
                .iter()
                .map(|x| {
                    x.and_then(|x| {
                        let t = parse_timestamp(x);
                        if t.is_none() {
                            bad.get_or_insert_with(|| x.to_string());
                        }
                        t
                    })
                })
                .collect();
            if let Some(x) = bad {
                return Err(expr_error(format!("cannot cast `{x}` to a timestamp")));
            }
            return Ok(Arc::new(v));
        }
        _ => arrow_cast::cast_with_options(a, &dt, &strict),
    };
    r.map_err(|e| {
        expr_error(format!(
            "cannot cast a {} to {}: {e}",
            from.name(),
            to.name()
        ))
    })
}

/// A one-row array of `l` as type `ty`.
fn literal_array(l: &Lit, ty: ETy) -> Result<ArrayRef, Error> {
    Ok(match l {
        Lit::Null => new_null_array(&ty.arrow(), 1),
        Lit::Bool(b) => Arc::new(BooleanArray::from(vec![*b])),
        Lit::Int(v) => Arc::new(Int64Array::from(vec![*v])),
        Lit::Float(v) => Arc::new(Float64Array::from(vec![*v])),
        Lit::Dec(v) => {
            let ETy::Decimal(p, s) = ty else {
                return Err(expr_error("a decimal literal without a decimal type"));
            };
            Arc::new(Decimal128Array::from(vec![*v]).with_precision_and_scale(p, s)?)
        }
        Lit::Date(d) => Arc::new(Date32Array::from(vec![*d])),
        Lit::Ts(t) => Arc::new(TimestampMicrosecondArray::from(vec![*t])),
        Lit::Str(s) => Arc::new(StringArray::from(vec![s.as_str()])),
    })
}

/// The integer node whose text `t` is (`CAST(x AS VARCHAR)` of an
/// integer), if it is one.
fn int_text(t: &TNode) -> Option<&TNode> {
    match &t.kind {
        NodeK::Cast(x) if x.ty == ETy::Int && t.ty == ETy::Str => Some(x),
        _ => None,
    }
}

/// One part of a string built in one pass.
enum Part<'a> {
    Str(Strs<'a>),
    /// An integer's digits, left-padded with a byte to a length (and cut
    /// to it, as `lpad`) when `pad` says so.
    Int {
        v: Units<'a>,
        pad: Option<(usize, u8)>,
    },
}

/// `parts` joined, a row at a time into one buffer (`||`: null when a part
/// is; `concat`, `nulls_empty`: nulls as empty strings). An integer's text,
/// padded or not, is written straight from the integers: no column of
/// text is made for it.
fn concat(parts: &[TNode], nulls_empty: bool, inp: &Inputs<'_>) -> Result<Val, Error> {
    let n = inp.ids.len();
    // Each part's value, and its padding when it is the text of an integer.
    let mut vals = Vec::with_capacity(parts.len());
    for p in parts {
        let padded = match &p.kind {
            NodeK::Lpad(x, len, fill) if fill.len() == 1 && fill.is_ascii() => {
                int_text(x).map(|i| (i, Some((*len, fill.as_bytes()[0]))))
            }
            _ => None,
        };
        match padded.or_else(|| int_text(p).map(|i| (i, None))) {
            Some((i, pad)) => vals.push((eval_int32(i, inp)?, Some(pad))),
            None => vals.push((eval(p, inp)?, None)),
        }
    }
    let all_scalar = vals.iter().all(|(v, _)| v.is_scalar());
    let len = if all_scalar { 1 } else { n };
    let mut hint = 0;
    let mut readers = Vec::with_capacity(vals.len());
    for (v, pad) in &vals {
        if let Some(pad) = pad {
            if is_null_constant(v) {
                readers.push(None);
                continue;
            }
            hint += len * pad.map_or(4, |(l, _)| l);
            readers.push(Some(Part::Int {
                v: Units::of(v, len)?,
                pad: *pad,
            }));
        } else {
            let s = Strs::of(v)?;
            hint += s.bytes_hint(len);
            readers.push(Some(Part::Str(s)));
        }
    }
    let mut b = StrBuild::new(len, hint);
    'rows: for i in 0..len {
        let start = b.bytes.len();
        for r in &readers {
            match r {
                Some(Part::Str(s)) => match s.get(i) {
                    Some(v) => b.push_part(v),
                    None if nulls_empty => {}
                    None => {
                        b.bytes.truncate(start);
                        b.null();
                        continue 'rows;
                    }
                },
                Some(Part::Int { v, pad }) => {
                    if !v.valid(i) {
                        if nulls_empty {
                            continue;
                        }
                        b.bytes.truncate(start);
                        b.null();
                        continue 'rows;
                    }
                    let mut digits = [0u8; 20];
                    let text = decimal_text(v.get(i) as i64, &mut digits);
                    match pad {
                        None => b.bytes.extend_from_slice(text),
                        Some((len, _)) if text.len() >= *len => {
                            b.bytes.extend_from_slice(&text[..*len])
                        }
                        Some((len, fill)) => {
                            b.push_repeated(*fill, len - text.len());
                            b.bytes.extend_from_slice(text);
                        }
                    }
                }
                // A null constant.
                None if nulls_empty => {}
                None => {
                    b.bytes.truncate(start);
                    b.null();
                    continue 'rows;
                }
            }
        }
        b.end_value();
    }
    Ok(Val::of(b.finish()?, all_scalar))
}

/// The rows each `WHEN` of a `CASE` takes (those whose condition is the
/// first true one), and the rows none takes. A condition is evaluated for
/// the rows no earlier one took.
fn case_branches(
    whens: &[(TNode, TNode)],
    inp: &Inputs<'_>,
) -> Result<(Vec<BooleanArray>, BooleanArray), Error> {
    let n = inp.ids.len();
    let mut rest = BooleanArray::new(arrow_buffer::BooleanBuffer::new_set(n), None);
    let mut takes = Vec::with_capacity(whens.len());
    for (c, _) in whens {
        let c = eval_where(c, inp, &rest)?.array(n)?;
        let c = c
            .as_boolean_opt()
            .ok_or_else(|| expr_error("a WHEN condition is not a boolean"))?;
        let c = null_as_false(c);
        takes.push(arrow_arith::boolean::and(&c, &rest)?);
        rest = arrow_arith::boolean::and_not(&rest, &c)?;
    }
    Ok((takes, rest))
}

/// `t` for the rows of `mask` (a mask without nulls); other rows get any
/// value. An error in a row the mask leaves out (a `CASE` branch the row
/// does not take) is not the expression's. When the mask holds few rows,
/// `t` is evaluated for them alone; else for all rows, and only when that
/// fails, again for the masked rows alone. Values depend on the row's id,
/// not its place in the batch, so either way gives the same values.
fn eval_where(t: &TNode, inp: &Inputs<'_>, mask: &BooleanArray) -> Result<Val, Error> {
    let rows = mask.true_count();
    if rows == 0 {
        return Ok(null_constant(t.ty));
    }
    // Below this share of the rows, filtering the inputs costs less than
    // evaluating every row.
    const FEW: usize = 4;
    if rows * FEW < mask.len() && !matches!(t.kind, NodeK::Lit(_)) {
        return eval_masked(t, inp, mask);
    }
    let err = match eval(t, inp) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    if rows == mask.len() {
        return Err(err);
    }
    eval_masked(t, inp, mask)
}

/// `t` evaluated for the rows of `mask` alone, its values put back at
/// those rows (the other rows null).
fn eval_masked(t: &TNode, inp: &Inputs<'_>, mask: &BooleanArray) -> Result<Val, Error> {
    let filter = |c: &ArrayRef| arrow_select::filter::filter(c, mask);
    let columns = inp
        .columns
        .iter()
        .map(|c| c.as_ref().map(filter).transpose())
        .collect::<Result<Vec<_>, _>>()?;
    let ids: Vec<u64> = mask.values().set_indices().map(|i| inp.ids[i]).collect();
    let some = Inputs {
        columns: &columns,
        ids: &ids,
        key: inp.key,
    };
    Ok(match eval(t, &some)? {
        Val::Scalar(s) => Val::Scalar(s),
        Val::Array(a) => {
            // Back to the batch's rows: a masked row takes the next value.
            let mut next = 0u32;
            let at: arrow_array::UInt32Array = (0..mask.len())
                .map(|i| {
                    mask.value(i).then(|| {
                        next += 1;
                        next - 1
                    })
                })
                .collect();
            Val::Array(arrow_select::take::take(&a, &at, None)?)
        }
    })
}

/// The results of a `CASE` whose results are all string literals (or
/// null), the `ELSE`'s last; `None` for other cases.
fn literal_results(
    whens: &[(TNode, TNode)],
    other: Option<&TNode>,
    ty: ETy,
) -> Option<Vec<Option<String>>> {
    let lit = |t: &TNode| match &t.kind {
        NodeK::Lit(Lit::Str(s)) => Some(Some(s.clone())),
        NodeK::Lit(Lit::Null) => Some(None),
        NodeK::Cast(x) if matches!(x.kind, NodeK::Lit(Lit::Null)) => Some(None),
        _ => None,
    };
    if ty != ETy::Str {
        return None;
    }
    let mut results = whens
        .iter()
        .map(|(_, r)| lit(r))
        .collect::<Option<Vec<_>>>()?;
    results.push(match other {
        Some(o) => lit(o)?,
        None => None,
    });
    Some(results)
}

/// Each row's string from its branch (`results[branch]`), in one pass.
fn strings_by_branch(results: &[Option<String>], branch: &[u32]) -> Result<ArrayRef, Error> {
    let n = branch.len();
    let longest = results.iter().flatten().map(String::len).max().unwrap_or(0);
    let mut b = StrBuild::new(n, n * longest);
    for &k in branch {
        match &results[k as usize] {
            Some(s) => {
                b.push_part(s);
                b.end_value();
            }
            None => b.null(),
        }
    }
    b.finish()
}

/// Each row's branch from the rows each `WHEN` takes (the last, one past
/// the `WHEN`s, where none does).
fn branch_of(takes: &[BooleanArray], n: usize) -> Vec<u32> {
    let mut branch = vec![takes.len() as u32; n];
    for (k, take) in takes.iter().enumerate() {
        for i in take.values().set_indices() {
            branch[i] = k as u32;
        }
    }
    branch
}

/// The rows each of `whens` branches takes, and the rows none takes,
/// from each row's branch.
fn masks_of(branch: &[u32], whens: usize) -> (Vec<BooleanArray>, BooleanArray) {
    let mask = |k: u32| BooleanArray::from(branch.iter().map(|&b| b == k).collect::<Vec<_>>());
    let takes = (0..whens as u32).map(mask).collect();
    (takes, mask(whens as u32))
}

/// Each row's branch of a `CASE` whose every `WHEN` is `x = literal` for
/// one `x` (a simple `CASE x WHEN ...`, or its searched spelling), `x`
/// an integer or a string: `x` is evaluated once and each row finds the
/// first `WHEN` of its value in a table. The same branches as evaluating
/// the conditions in order (null and unlisted values take none). `None`
/// for other cases.
fn lookup_branches(whens: &[(TNode, TNode)], inp: &Inputs<'_>) -> Result<Option<Vec<u32>>, Error> {
    use std::collections::HashMap;
    // Fewer WHENs are as fast evaluated in order.
    const MIN_WHENS: usize = 4;
    fn operand_and_literal(c: &TNode) -> Option<(&TNode, &Lit)> {
        match &c.kind {
            NodeK::Cmp(Cmp::Eq, x, l) => match &l.kind {
                NodeK::Lit(lit) if l.ty == x.ty => Some((&**x, lit)),
                _ => None,
            },
            _ => None,
        }
    }
    if whens.len() < MIN_WHENS {
        return Ok(None);
    }
    let Some((x, _)) = whens.first().and_then(|(c, _)| operand_and_literal(c)) else {
        return Ok(None);
    };
    let mut literals = Vec::with_capacity(whens.len());
    for (c, _) in whens {
        match operand_and_literal(c) {
            Some((y, lit)) if y == x => literals.push(lit),
            _ => return Ok(None),
        }
    }
    let none = whens.len() as u32;
    let n = inp.ids.len();
    // Each row's branch: the first WHEN of its value, `none` for null
    // and unlisted values.
    fn first_branch<'a, K: std::hash::Hash + Eq>(
        literals: &[&'a Lit],
        key_of: impl Fn(&'a Lit) -> Option<K>,
        none: u32,
        n: usize,
        row: impl Fn(usize) -> Option<K>,
    ) -> Vec<u32> {
        // Reversed, so that the first of equal literals is kept.
        let first: HashMap<K, u32> = literals
            .iter()
            .enumerate()
            .rev()
            .filter_map(|(k, lit)| key_of(lit).map(|v| (v, k as u32)))
            .collect();
        (0..n)
            .map(|i| row(i).and_then(|v| first.get(&v).copied()).unwrap_or(none))
            .collect()
    }
    match x.ty {
        ETy::Int => {
            let v = int64s(&eval(x, inp)?.array(n)?, "an integer operand")?;
            fn key(lit: &Lit) -> Option<i64> {
                match lit {
                    Lit::Int(v) => Some(*v),
                    _ => None,
                }
            }
            let row = |i| v.is_valid(i).then(|| v.value(i));
            Ok(Some(first_branch(&literals, key, none, n, row)))
        }
        ETy::Str => {
            let v = eval(x, inp)?.array(n)?;
            let v = v
                .as_string_opt::<i32>()
                .ok_or_else(|| expr_error("a string operand is not a string"))?;
            fn key(lit: &Lit) -> Option<&str> {
                match lit {
                    Lit::Str(v) => Some(v),
                    _ => None,
                }
            }
            let row = |i| v.is_valid(i).then(|| v.value(i));
            Ok(Some(first_branch(&literals, key, none, n, row)))
        }
        _ => Ok(None),
    }
}

/// `a` as the integers of an expression, or an error naming `what`.
fn int64s(a: &ArrayRef, what: &str) -> Result<Int64Array, Error> {
    a.as_primitive_opt::<arrow_array::types::Int64Type>()
        .cloned()
        .ok_or_else(|| expr_error(format!("{what} is not an integer")))
}

/// DuckDB's `substring(s, start, length)`: `length` characters from
/// 1-based `start`, counted from the end when `start` is negative (0 is
/// just before the first); a negative `length` takes the characters
/// before `start`.
fn substring(s: &str, start: i64, length: i64) -> &str {
    let chars = if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    } as i64;
    if length == 0 {
        return "";
    }
    let (mut from, mut length) = (start, length);
    from = match from {
        f if f > 0 => f - 1,
        f if f < 0 => chars.saturating_add(f),
        _ => {
            length -= 1;
            if length <= 0 {
                return "";
            }
            0
        }
    };
    let (from, to) = if length > 0 {
        (from, from.saturating_add(length))
    } else {
        (from.saturating_add(length), from)
    };
    let (from, to) = (from.clamp(0, chars) as usize, to.clamp(0, chars) as usize);
    if from >= to {
        return "";
    }
    if s.is_ascii() {
        return &s[from..to];
    }
    let at = |k: usize| s.char_indices().nth(k).map_or(s.len(), |(i, _)| i);
    &s[at(from)..at(to)]
}

#[cfg(test)]
mod tests {
    use super::substring;

    /// Cases DuckDB 1.x answers so (`SELECT substring(s, start, length)`),
    /// negative starts and lengths and non-ASCII text included; the
    /// interop tests compare whole columns with DuckDB.
    #[test]
    fn substring_is_duckdbs() {
        for (s, start, length, want) in [
            ("hello", 2, 3, "ell"),
            ("hello", -2, 2, "lo"),
            ("hello", 0, 2, "h"),
            ("hello", 7, -3, "lo"),
            ("hello", -8, 4, "h"),
            ("héllo wörld", 2, 4, "éllo"),
            ("héllo wörld", -5, -2, "o "),
            ("hello", 3, 1000, "llo"),
            ("hello", 3, i64::MAX, "llo"),
            ("", 1, 1, ""),
            ("hello", 0, 1, ""),
        ] {
            assert_eq!(substring(s, start, length), want, "{s:?} {start} {length}");
        }
    }
}
