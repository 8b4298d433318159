//! Arrow arrays a node's values become: nulls and list offsets applied,
//! integer casts, and the fast paths for strings and integers without
//! cases.

use std::sync::Arc;

use arrow_array::{ArrayRef, make_array};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use super::NULL_CODE;
use super::draw::{below, below32};
use super::sample::Sampler;
use super::scratch::{SpecScratch, pack};
use super::text::{Draws, Writer};
use crate::Error;
use crate::rng::StreamKey;

/// `a` with its elements also null where `valid` is 0 (the field's own
/// null rate over a copied or computed array).
pub(super) fn with_nulls(
    a: ArrayRef,
    valid: &[u8],
    s: &mut SpecScratch,
) -> Result<ArrayRef, Error> {
    Ok(match pack(valid, s) {
        None => a,
        Some(own) => {
            let nulls = NullBuffer::union(a.nulls(), Some(&own));
            make_array(a.to_data().into_builder().nulls(nulls).build()?)
        }
    })
}

/// `a` plus `offsets` (one per element), in the type's units, wrapping at
/// its bounds; nulls stay null.
pub(super) fn add_offsets(a: &ArrayRef, offsets: &[i64]) -> Result<ArrayRef, Error> {
    use arrow_array::{Array, ArrowNativeTypeOp, ArrowPrimitiveType, PrimitiveArray, types::*};
    fn add<T: ArrowPrimitiveType>(
        a: &ArrayRef,
        offsets: &[i64],
        of: impl Fn(i64) -> T::Native,
    ) -> ArrayRef {
        let p = a
            .as_any()
            .downcast_ref::<PrimitiveArray<T>>()
            .expect("the array of its data type");
        let values: Vec<T::Native> = p
            .values()
            .iter()
            .zip(offsets)
            .map(|(v, &o)| v.add_wrapping(of(o)))
            .collect();
        Arc::new(
            PrimitiveArray::<T>::new(values.into(), p.nulls().cloned())
                .with_data_type(a.data_type().clone()),
        )
    }
    use arrow_schema::TimeUnit as U;
    Ok(match a.data_type() {
        DataType::Int8 => add::<Int8Type>(a, offsets, |o| o as i8),
        DataType::Int16 => add::<Int16Type>(a, offsets, |o| o as i16),
        DataType::Int32 => add::<Int32Type>(a, offsets, |o| o as i32),
        DataType::Int64 => add::<Int64Type>(a, offsets, |o| o),
        DataType::UInt8 => add::<UInt8Type>(a, offsets, |o| o as u8),
        DataType::UInt16 => add::<UInt16Type>(a, offsets, |o| o as u16),
        DataType::UInt32 => add::<UInt32Type>(a, offsets, |o| o as u32),
        DataType::UInt64 => add::<UInt64Type>(a, offsets, |o| o as u64),
        DataType::Date32 => add::<Date32Type>(a, offsets, |o| o as i32),
        DataType::Timestamp(U::Second, _) => add::<TimestampSecondType>(a, offsets, |o| o),
        DataType::Timestamp(U::Millisecond, _) => {
            add::<TimestampMillisecondType>(a, offsets, |o| o)
        }
        DataType::Timestamp(U::Microsecond, _) => {
            add::<TimestampMicrosecondType>(a, offsets, |o| o)
        }
        DataType::Timestamp(U::Nanosecond, _) => add::<TimestampNanosecondType>(a, offsets, |o| o),
        DataType::Decimal128(..) => add::<Decimal128Type>(a, offsets, i128::from),
        DataType::Decimal256(..) => {
            add::<Decimal256Type>(a, offsets, |o| arrow_buffer::i256::from_i128(i128::from(o)))
        }
        other => {
            return Err(Error::InvalidDistribution(format!(
                "an offset cannot be added to {other}"
            )));
        }
    })
}

/// `a` (Int64) as the integer type `to`, wrapping.
pub(super) fn cast_int(a: &ArrayRef, to: &DataType) -> Result<ArrayRef, Error> {
    use arrow_array::{Int64Array, PrimitiveArray, types::*};
    let v = a
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("positions are Int64");
    macro_rules! to {
        ($t:ty, $n:ty) => {
            Arc::new(PrimitiveArray::<$t>::from_iter_values(
                v.values().iter().map(|&x| x as $n),
            )) as ArrayRef
        };
    }
    Ok(match to {
        DataType::Int8 => to!(Int8Type, i8),
        DataType::Int16 => to!(Int16Type, i16),
        DataType::Int32 => to!(Int32Type, i32),
        DataType::Int64 => a.clone(),
        DataType::UInt8 => to!(UInt8Type, u8),
        DataType::UInt16 => to!(UInt16Type, u16),
        DataType::UInt32 => to!(UInt32Type, u32),
        DataType::UInt64 => to!(UInt64Type, u64),
        other => {
            return Err(Error::InvalidDistribution(format!(
                "a position is an integer, not {other}"
            )));
        }
    })
}

/// The values of numeric array `a` as `f64` (decimals in units), nulls as
/// 0, appended to `out`.
pub(super) fn numbers(a: &ArrayRef, out: &mut Vec<f64>) -> Result<(), String> {
    use arrow_array::{Array, ArrowPrimitiveType, PrimitiveArray, types::*};
    fn push<T: ArrowPrimitiveType>(a: &ArrayRef, out: &mut Vec<f64>, f: impl Fn(T::Native) -> f64) {
        let p = a
            .as_any()
            .downcast_ref::<PrimitiveArray<T>>()
            .expect("the array of its data type");
        out.extend(p.iter().map(|v| v.map_or(0.0, &f)));
    }
    match a.data_type() {
        DataType::Int8 => push::<Int8Type>(a, out, f64::from),
        DataType::Int16 => push::<Int16Type>(a, out, f64::from),
        DataType::Int32 => push::<Int32Type>(a, out, f64::from),
        DataType::Int64 => push::<Int64Type>(a, out, |v| v as f64),
        DataType::UInt8 => push::<UInt8Type>(a, out, f64::from),
        DataType::UInt16 => push::<UInt16Type>(a, out, f64::from),
        DataType::UInt32 => push::<UInt32Type>(a, out, f64::from),
        DataType::UInt64 => push::<UInt64Type>(a, out, |v| v as f64),
        DataType::Float32 => push::<Float32Type>(a, out, f64::from),
        DataType::Float64 => push::<Float64Type>(a, out, |v| v),
        DataType::Decimal128(..) => push::<Decimal128Type>(a, out, |v| v as f64),
        DataType::Decimal256(..) => {
            push::<Decimal256Type>(a, out, |v| v.to_i128().map_or(f64::NAN, |x| x as f64))
        }
        other => return Err(format!("{other} is not a number")),
    }
    Ok(())
}

/// The strings of one sampler, no cases, no codes: the loop the common
/// string field takes, with the writer's cursor in a register and one
/// loop per kind of sampler.
#[inline(never)]
pub(super) fn strings_fast(
    sampler: &Sampler,
    key: StreamKey,
    ids: &[u64],
    valid: &[u8],
    w: Writer,
    most: usize,
    offsets: &mut [u32],
) -> Writer {
    #[inline(always)]
    fn run(
        ids: &[u64],
        valid: &[u8],
        mut w: Writer,
        most: usize,
        offsets: &mut [u32],
        mut f: impl FnMut(u64, &mut Writer),
    ) -> Writer {
        // A branch on validity, although nulls can be frequent enough to
        // mispredict it (20% of `contacts` names): writing every value and
        // then moving the cursor back over nulls, without a branch, was
        // ~12% slower (`examples/gen_loop contacts`, 28.8 vs 25.6 ns/row).
        let outs = offsets[1..].iter_mut();
        for ((&id, &ok), offset) in ids.iter().zip(valid).zip(outs) {
            if ok == 1 {
                w.room(most);
                f(id, &mut w);
            }
            *offset = w.pos as u32;
        }
        w
    }
    match sampler {
        Sampler::STemplate { parts, random } => {
            // Templates of one or two steps (most: `user-{seq}`,
            // `{first_name} {last_name}`) are unrolled; longer ones loop,
            // with numbers formatted by a call so that the optimiser does
            // not hoist every formatting path out of the step loop.
            match parts.as_slice() {
                // Two list entries (`{first_name} {last_name}`): both drawn
                // from the stream state itself, high half first, as
                // `Draws` hands them out, without its bookkeeping.
                [a, b] if a.name().is_some() && b.name().is_some() && *random => {
                    let (ta, tb) = (a.name().expect("name"), b.name().expect("name"));
                    let (na, nb) = (ta.len() as u32, tb.len() as u32);
                    run(ids, valid, w, most, offsets, |id, w| {
                        let state = key.first(id);
                        let (sa, la) = ta.slot(below32((state >> 32) as u32, na) as usize);
                        let (sb, lb) = tb.slot(below32(state as u32, nb) as usize);
                        w.block(&a.prefix, a.prefix_len);
                        w.block(sa, la);
                        w.block(&b.prefix, b.prefix_len);
                        w.block(sb, lb);
                    })
                }
                [a] => run(ids, valid, w, most, offsets, |id, w| {
                    let mut d = Draws::new(key, id, *random);
                    a.write::<true>(id, &mut d, w);
                }),
                [a, b] => run(ids, valid, w, most, offsets, |id, w| {
                    let mut d = Draws::new(key, id, *random);
                    a.write::<true>(id, &mut d, w);
                    b.write::<true>(id, &mut d, w);
                }),
                _ => run(ids, valid, w, most, offsets, |id, w| {
                    let mut d = Draws::new(key, id, *random);
                    for step in parts {
                        step.write::<false>(id, &mut d, w);
                    }
                }),
            }
        }
        Sampler::STable { alias, values } => run(ids, valid, w, most, offsets, |id, w| {
            values[alias.sample(key.first(id)) as usize].write(w)
        }),
        other => run(ids, valid, w, most, offsets, |id, w| {
            other.string(key, id, w);
        }),
    }
}

/// Integer-like values of one sampler (no cases): one loop per common
/// kind of sampler, codes only when a sibling reads them.
#[inline(never)]
pub(super) fn ints_fast<T>(
    sampler: &Sampler,
    key: StreamKey,
    ids: &[u64],
    valid: &[u8],
    out: &mut Vec<T>,
    codes: Option<&mut Vec<u8>>,
    conv: impl Fn(u64) -> T + Copy,
) {
    out.reserve(ids.len());
    match (sampler, codes) {
        (Sampler::IntTable { alias, values }, Some(codes)) => {
            codes.resize(ids.len(), 0);
            let slots = ids.iter().zip(valid).zip(codes.iter_mut());
            out.extend(slots.map(|((&id, &ok), code)| {
                let c = alias.sample(key.first(id)) as usize;
                *code = if ok == 1 { c.min(254) as u8 } else { NULL_CODE };
                conv(values[c])
            }));
        }
        (Sampler::IntTable { alias, values }, None) => out.extend(
            ids.iter()
                .map(|&id| conv(values[alias.sample(key.first(id)) as usize])),
        ),
        (Sampler::IntUniform { min, span }, None) => out.extend(
            ids.iter()
                .map(|&id| conv(min.wrapping_add(below(key.first(id), *span)))),
        ),
        (Sampler::IntSeq { start, step }, None) => out.extend(
            ids.iter()
                .map(|&id| conv(start.wrapping_add(step.wrapping_mul(id)))),
        ),
        // The costly samplers (normal, Zipf, ...) draw nothing under a
        // null: its slot holds zero.
        (other, Some(codes)) => {
            codes.resize(ids.len(), 0);
            let slots = ids.iter().zip(valid).zip(codes.iter_mut());
            out.extend(slots.map(|((&id, &ok), code)| {
                if ok == 0 {
                    *code = NULL_CODE;
                    return conv(0);
                }
                let (x, c) = other.int(key, id);
                *code = c;
                conv(x)
            }));
        }
        (other, None) => out.extend(
            ids.iter()
                .zip(valid)
                .map(|(&id, &ok)| conv(if ok == 0 { 0 } else { other.int(key, id).0 })),
        ),
    }
}
