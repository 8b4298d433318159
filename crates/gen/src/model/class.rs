//! [`Class`]: what the values of a leaf of an Arrow type look like, for
//! checking spec values and drawing them.

use arrow_schema::{DataType, TimeUnit};

use super::units_per_second;
use crate::facts::MAX_DECIMAL_PRECISION;

/// What values of a leaf look like, for checking spec values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Class {
    Bool,
    Int {
        min: i128,
        max: i128,
    },
    Float,
    Str,
    Dict,
    Date,
    Timestamp(TimeUnit),
    /// A time of day: units since midnight, below a day's.
    Time(TimeUnit),
    /// A decimal of `precision` digits, `scale` of them after the point;
    /// its values are integer units of `10^-scale` (`12.50` is 1250 at
    /// scale 2), at most `max` in magnitude.
    Decimal {
        scale: u8,
        max: i128,
    },
}

impl Class {
    pub(crate) fn of(dt: &DataType) -> Class {
        let int = |min: i128, max: i128| Class::Int { min, max };
        match dt {
            DataType::Boolean => Class::Bool,
            DataType::Int8 => int(i8::MIN.into(), i8::MAX.into()),
            DataType::Int16 => int(i16::MIN.into(), i16::MAX.into()),
            DataType::Int32 => int(i32::MIN.into(), i32::MAX.into()),
            DataType::Int64 => int(i64::MIN.into(), i64::MAX.into()),
            DataType::UInt8 => int(0, u8::MAX.into()),
            DataType::UInt16 => int(0, u16::MAX.into()),
            DataType::UInt32 => int(0, u32::MAX.into()),
            DataType::UInt64 => int(0, u64::MAX.into()),
            DataType::Float32 | DataType::Float64 => Class::Float,
            DataType::Dictionary(..) => Class::Dict,
            DataType::Date32 => Class::Date,
            DataType::Timestamp(u, _) => Class::Timestamp(*u),
            DataType::Time32(u) | DataType::Time64(u) => Class::Time(*u),
            DataType::Duration(_) => int(i64::MIN.into(), i64::MAX.into()),
            DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => Class::Decimal {
                scale: (*s).max(0) as u8,
                max: decimal_max(*p),
            },
            _ => Class::Str,
        }
    }

    /// The least and greatest value a leaf of this class holds, for
    /// integer-like classes (integers, dates, timestamps, times of day,
    /// decimal units: the engine draws them in 64 bits).
    pub(crate) fn int_range(self) -> Option<(i128, i128)> {
        match self {
            Class::Int { min, max } => Some((min, max)),
            Class::Date => Some((i32::MIN.into(), i32::MAX.into())),
            Class::Timestamp(_) => Some((i64::MIN.into(), i64::MAX.into())),
            Class::Time(u) => Some((0, units_per_second(u) * 86_400 - 1)),
            Class::Decimal { max, .. } => {
                Some(((-max).max(i64::MIN.into()), max.min(i64::MAX.into())))
            }
            _ => None,
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Class::Bool => "a boolean",
            Class::Int { .. } => "an integer",
            Class::Float => "a number",
            Class::Str | Class::Dict => "a string",
            Class::Date => "a date (1970-01-01, or days since it)",
            Class::Timestamp(_) => "a date-time (2024-01-01T00:00:00Z, or units since the epoch)",
            Class::Time(_) => "a time of day (08:30:00, or units since midnight)",
            Class::Decimal { .. } => "a decimal number (12.5, or a string such as \"12.50\")",
        }
    }

    /// What one unit of a value is worth: `10^scale` units make 1 for a
    /// decimal (its values are drawn and stored in units), 1 otherwise.
    pub(crate) fn unit(self) -> f64 {
        match self {
            Class::Decimal { scale, .. } => 10f64.powi(i32::from(scale)),
            _ => 1.0,
        }
    }

    /// The class of a `sequence`'s step for a leaf of this class: dates,
    /// times and timestamps step by any 64-bit count of their units,
    /// integers by any integer a `u64` holds (either sign), decimals by
    /// up to `i64::MAX` units of their scale.
    pub(crate) fn step(self) -> Class {
        match self {
            Class::Date | Class::Timestamp(_) | Class::Time(_) => Class::Int {
                min: i64::MIN.into(),
                max: i64::MAX.into(),
            },
            Class::Int { .. } => Class::Int {
                min: -i128::from(u64::MAX),
                max: u64::MAX.into(),
            },
            Class::Decimal { scale, .. } => Class::Decimal {
                scale,
                max: i64::MAX.into(),
            },
            c => c,
        }
    }

    pub(crate) fn numeric(self) -> bool {
        matches!(
            self,
            Class::Int { .. }
                | Class::Float
                | Class::Date
                | Class::Timestamp(_)
                | Class::Time(_)
                | Class::Decimal { .. }
        )
    }
}

/// The most units a decimal of `precision` digits holds: `10^precision -
/// 1`, and at most `i64::MAX` (the engine draws units as 64-bit integers).
pub(crate) fn decimal_max(precision: u8) -> i128 {
    10i128
        .checked_pow(u32::from(precision.min(MAX_DECIMAL_PRECISION)))
        .map_or(i128::MAX, |p| p - 1)
        .min(i128::from(i64::MAX))
}
