//! Values in a table's metadata: a file's partition values (from the
//! bounds of their source column: every row of a file is in one
//! partition) and bounds in Iceberg's single-value binary form.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Int8Array,
    Int16Array, Int32Array, Int64Array, StringArray, TimestampMicrosecondArray, UInt8Array,
    UInt16Array, UInt32Array, cast::AsArray, types::Int32Type,
};
use arrow_schema::{DataType, TimeUnit};
use strata_layout::{PartitionField, Transform};

use super::schema::Primitive;
use crate::{
    Error,
    stats::{Bound, signed_be},
};

/// One partition value of a file.
#[derive(Debug, Clone, PartialEq)]
pub enum PartValue {
    /// The null partition.
    Null,
    /// A boolean.
    Bool(bool),
    /// An `int`, `date`, or the result of a year, month, day, hour or
    /// bucket transform.
    Int(i32),
    /// A `long`, `time` or timestamp.
    Long(i64),
    /// A decimal's unscaled value.
    Decimal(i128),
    /// A string.
    String(String),
    /// Binary.
    Bytes(Vec<u8>),
}

impl PartValue {
    /// The value in Iceberg's single-value binary form (for `type`).
    pub fn binary(&self) -> Option<Vec<u8>> {
        Some(match self {
            PartValue::Null => return None,
            PartValue::Bool(b) => vec![u8::from(*b)],
            PartValue::Int(v) => v.to_le_bytes().to_vec(),
            PartValue::Long(v) => v.to_le_bytes().to_vec(),
            PartValue::Decimal(v) => decimal_bytes(*v),
            PartValue::String(s) => s.as_bytes().to_vec(),
            PartValue::Bytes(b) => b.clone(),
        })
    }

    /// Orders two values of one partition field (nulls aside).
    pub fn order(&self, other: &PartValue) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (PartValue::Bool(a), PartValue::Bool(b)) => Some(a.cmp(b)),
            (PartValue::Int(a), PartValue::Int(b)) => Some(a.cmp(b)),
            (PartValue::Long(a), PartValue::Long(b)) => Some(a.cmp(b)),
            (PartValue::Decimal(a), PartValue::Decimal(b)) => Some(a.cmp(b)),
            (PartValue::String(a), PartValue::String(b)) => Some(a.cmp(b)),
            (PartValue::Bytes(a), PartValue::Bytes(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

/// A decimal's unscaled value as the fewest big-endian two's-complement
/// bytes that hold it.
fn decimal_bytes(v: i128) -> Vec<u8> {
    let full = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (full[start], full[start + 1]);
        let redundant = (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    full[start..].to_vec()
}

/// A column bound in Iceberg's single-value binary form for a field of
/// type `p`; `None` when the bound's kind does not fit the type.
pub fn bound_bytes(p: Primitive, b: &Bound) -> Option<Vec<u8>> {
    Some(match (p, b) {
        (Primitive::Boolean, Bound::Bool(v)) => vec![u8::from(*v)],
        (Primitive::Int | Primitive::Date, Bound::Int(v)) => {
            i32::try_from(*v).ok()?.to_le_bytes().to_vec()
        }
        (
            Primitive::Long | Primitive::Time | Primitive::Timestamp | Primitive::Timestamptz,
            Bound::Int(v),
        ) => v.to_le_bytes().to_vec(),
        (Primitive::Float, Bound::Float(v)) if !v.is_nan() => v.to_le_bytes().to_vec(),
        (Primitive::Double, Bound::Double(v)) if !v.is_nan() => v.to_le_bytes().to_vec(),
        (Primitive::Decimal(..), Bound::Int(v)) => decimal_bytes(i128::from(*v)),
        (Primitive::Decimal(..), Bound::Decimal(v)) => decimal_bytes(*v),
        (Primitive::String | Primitive::Binary | Primitive::Fixed(_), Bound::Bytes(v)) => v.clone(),
        _ => return None,
    })
}

/// A bound in Iceberg's single-value binary form of a field of type `p`
/// read back: integers, dates, times and timestamps as
/// [`Bound::Int`], decimals as [`Bound::Decimal`], strings, binary and
/// fixed as [`Bound::Bytes`]; `None` when the bytes do not fit the type.
pub fn bound_of_bytes(p: Primitive, b: &[u8]) -> Option<Bound> {
    Some(match p {
        Primitive::Boolean => match b {
            [0] => Bound::Bool(false),
            [1] => Bound::Bool(true),
            _ => return None,
        },
        Primitive::Int | Primitive::Date => {
            Bound::Int(i64::from(i32::from_le_bytes(b.try_into().ok()?)))
        }
        Primitive::Long | Primitive::Time | Primitive::Timestamp | Primitive::Timestamptz => {
            Bound::Int(i64::from_le_bytes(b.try_into().ok()?))
        }
        Primitive::Float => Bound::Float(f32::from_le_bytes(b.try_into().ok()?)),
        Primitive::Double => Bound::Double(f64::from_le_bytes(b.try_into().ok()?)),
        Primitive::Decimal(..) => Bound::Decimal(signed_be(b)?),
        Primitive::String | Primitive::Binary | Primitive::Fixed(_) => Bound::Bytes(b.to_vec()),
    })
}

/// The partition value of `field` for a file whose source column (of
/// Arrow type `source`) has smallest value `min` (`None` when all its
/// rows are null).
///
/// # Errors
/// [`Error::Unsupported`] for a source type without a partition value
/// here; the transform's own errors.
pub fn partition_value(
    field: &PartitionField,
    source: &DataType,
    min: Option<&Bound>,
) -> Result<PartValue, Error> {
    let Some(min) = min else {
        return Ok(PartValue::Null);
    };
    let unsupported = || {
        Error::Unsupported(format!(
            "partition field `{}`: no partition value from a {source} column's statistics",
            field.text
        ))
    };
    let one: ArrayRef = match (source, min) {
        (DataType::Boolean, Bound::Bool(v)) => Arc::new(BooleanArray::from(vec![*v])),
        (DataType::Int8, Bound::Int(v)) => Arc::new(Int8Array::from(vec![*v as i8])),
        (DataType::Int16, Bound::Int(v)) => Arc::new(Int16Array::from(vec![*v as i16])),
        (DataType::Int32, Bound::Int(v)) => Arc::new(Int32Array::from(vec![*v as i32])),
        (DataType::Int64, Bound::Int(v)) => Arc::new(Int64Array::from(vec![*v])),
        (DataType::UInt8, Bound::Int(v)) => Arc::new(UInt8Array::from(vec![*v as u8])),
        (DataType::UInt16, Bound::Int(v)) => Arc::new(UInt16Array::from(vec![*v as u16])),
        (DataType::UInt32, Bound::Int(v)) => Arc::new(UInt32Array::from(vec![*v as u32])),
        (DataType::Date32, Bound::Int(v)) => Arc::new(Date32Array::from(vec![*v as i32])),
        (DataType::Timestamp(TimeUnit::Microsecond, tz), Bound::Int(v)) => {
            Arc::new(TimestampMicrosecondArray::from(vec![*v]).with_timezone_opt(tz.clone()))
        }
        (DataType::Decimal128(p, s), Bound::Int(v)) => Arc::new(
            Decimal128Array::from(vec![i128::from(*v)])
                .with_precision_and_scale(*p, *s)
                .map_err(|_| unsupported())?,
        ),
        (DataType::Decimal128(p, s), Bound::Decimal(v)) => Arc::new(
            Decimal128Array::from(vec![*v])
                .with_precision_and_scale(*p, *s)
                .map_err(|_| unsupported())?,
        ),
        (DataType::Utf8, Bound::Bytes(b)) => {
            let s = std::str::from_utf8(b).map_err(|_| unsupported())?;
            Arc::new(StringArray::from(vec![s]))
        }
        (DataType::Binary, Bound::Bytes(b)) => Arc::new(BinaryArray::from(vec![b.as_slice()])),
        _ => return Err(unsupported()),
    };
    let out = field.apply(one.as_ref())?;
    if out.is_null(0) {
        return Ok(PartValue::Null);
    }
    let value = match field.transform {
        Transform::Year | Transform::Month | Transform::Hour | Transform::Bucket(_) => {
            PartValue::Int(
                out.as_primitive_opt::<Int32Type>()
                    .ok_or_else(unsupported)?
                    .value(0),
            )
        }
        Transform::Day => PartValue::Int(
            out.as_any()
                .downcast_ref::<Date32Array>()
                .ok_or_else(unsupported)?
                .value(0),
        ),
        Transform::Identity | Transform::Truncate(_) => {
            scalar(out.as_ref()).ok_or_else(unsupported)?
        }
    };
    Ok(value)
}

/// The one value of a one-row array of a partition source type.
fn scalar(a: &dyn Array) -> Option<PartValue> {
    let any = a.as_any();
    Some(match a.data_type() {
        DataType::Boolean => PartValue::Bool(any.downcast_ref::<BooleanArray>()?.value(0)),
        DataType::Int8 => PartValue::Int(i32::from(any.downcast_ref::<Int8Array>()?.value(0))),
        DataType::Int16 => PartValue::Int(i32::from(any.downcast_ref::<Int16Array>()?.value(0))),
        DataType::Int32 => PartValue::Int(any.downcast_ref::<Int32Array>()?.value(0)),
        DataType::UInt8 => PartValue::Int(i32::from(any.downcast_ref::<UInt8Array>()?.value(0))),
        DataType::UInt16 => PartValue::Int(i32::from(any.downcast_ref::<UInt16Array>()?.value(0))),
        DataType::Date32 => PartValue::Int(any.downcast_ref::<Date32Array>()?.value(0)),
        DataType::Int64 => PartValue::Long(any.downcast_ref::<Int64Array>()?.value(0)),
        DataType::UInt32 => PartValue::Long(i64::from(any.downcast_ref::<UInt32Array>()?.value(0))),
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            PartValue::Long(any.downcast_ref::<TimestampMicrosecondArray>()?.value(0))
        }
        DataType::Decimal128(..) => {
            PartValue::Decimal(any.downcast_ref::<Decimal128Array>()?.value(0))
        }
        DataType::Utf8 => {
            PartValue::String(any.downcast_ref::<StringArray>()?.value(0).to_string())
        }
        DataType::Binary => PartValue::Bytes(any.downcast_ref::<BinaryArray>()?.value(0).to_vec()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::{Bound, Primitive, bound_bytes, bound_of_bytes, decimal_bytes};

    /// Every bound written in the binary form reads back as it was.
    #[test]
    fn bounds_read_back_from_their_binary_form() {
        let cases = [
            (Primitive::Boolean, Bound::Bool(true)),
            (Primitive::Int, Bound::Int(-7)),
            (Primitive::Date, Bound::Int(17_486)),
            (Primitive::Long, Bound::Int(i64::MIN)),
            (Primitive::Timestamptz, Bound::Int(1_510_871_468_000_000)),
            (Primitive::Float, Bound::Float(-1.5)),
            (Primitive::Double, Bound::Double(2.25)),
            (Primitive::Decimal(9, 2), Bound::Decimal(-129)),
            (Primitive::String, Bound::Bytes(b"iceberg".to_vec())),
        ];
        for (p, b) in cases {
            let bytes = bound_bytes(p, &b).unwrap();
            assert_eq!(bound_of_bytes(p, &bytes), Some(b), "{p:?}");
        }
        assert_eq!(bound_of_bytes(Primitive::Int, &[1, 2]), None);
        assert_eq!(bound_of_bytes(Primitive::Boolean, &[2]), None);
    }

    /// The Iceberg spec's examples: the fewest two's-complement bytes.
    #[test]
    fn decimals_take_their_fewest_bytes() {
        assert_eq!(decimal_bytes(0), vec![0]);
        assert_eq!(decimal_bytes(127), vec![0x7f]);
        assert_eq!(decimal_bytes(128), vec![0x00, 0x80]);
        assert_eq!(decimal_bytes(-1), vec![0xff]);
        assert_eq!(decimal_bytes(-129), vec![0xff, 0x7f]);
        assert_eq!(decimal_bytes(1234), vec![0x04, 0xd2]);
    }
}
