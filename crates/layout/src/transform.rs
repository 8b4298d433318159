//! Iceberg's partition transforms over Arrow columns: what a partition
//! field is ([`PartitionField`]: a column and a [`Transform`]), the type
//! of its values, the values of a column's rows, and their text in a
//! partition directory's name.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Int8Type, Int16Type, Int32Type, Int64Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type,
};
use arrow_array::{
    Array, ArrayRef, Date32Array, Decimal128Array, Int32Array, PrimitiveArray, StringArray,
};
use arrow_schema::{DataType, Schema, TimeUnit};
use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Value};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;

use crate::Error;

/// How a partition field's value comes from its column's value (Iceberg's
/// transforms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transform {
    /// The value itself.
    Identity,
    /// Years since 1970 of a date or timestamp.
    Year,
    /// Months since 1970-01 of a date or timestamp.
    Month,
    /// The day of a date or timestamp (a date).
    Day,
    /// Hours since 1970-01-01 00:00 of a timestamp.
    Hour,
    /// One of `N` buckets by Iceberg's 32-bit Murmur3 hash of the value:
    /// `(hash & i32::MAX) % N`, the buckets Iceberg and Spark give the same
    /// value.
    Bucket(u32),
    /// Integers and decimals (in units of their scale) rounded down to a
    /// multiple of `W`; strings cut to their first `W` characters.
    Truncate(u32),
}

impl Transform {
    /// Iceberg's name of the transform (`month`, `bucket[16]`).
    pub fn iceberg_name(self) -> String {
        match self {
            Transform::Identity => "identity".into(),
            Transform::Year => "year".into(),
            Transform::Month => "month".into(),
            Transform::Day => "day".into(),
            Transform::Hour => "hour".into(),
            Transform::Bucket(n) => format!("bucket[{n}]"),
            Transform::Truncate(w) => format!("truncate[{w}]"),
        }
    }

    /// The default partition field name's suffix after the column's name
    /// (Iceberg's: `l_shipdate_month`, `id_bucket`, `name_trunc`).
    fn suffix(self) -> &'static str {
        match self {
            Transform::Identity => "",
            Transform::Year => "_year",
            Transform::Month => "_month",
            Transform::Day => "_day",
            Transform::Hour => "_hour",
            Transform::Bucket(_) => "_bucket",
            Transform::Truncate(_) => "_trunc",
        }
    }

    /// The type of the values this transform gives a column of type `t`,
    /// or `None` when it does not take such a column.
    pub fn result_type(self, t: &DataType) -> Option<DataType> {
        let int = matches!(
            t,
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::UInt8
                | DataType::UInt16
                | DataType::UInt32
        );
        let temporal = matches!(t, DataType::Date32 | DataType::Timestamp(..));
        let string = matches!(t, DataType::Utf8);
        match self {
            Transform::Identity => (int
                || temporal
                || string
                || matches!(t, DataType::Boolean | DataType::Decimal128(..)))
            .then(|| t.clone()),
            Transform::Year | Transform::Month | Transform::Hour if temporal => {
                (self != Transform::Hour || matches!(t, DataType::Timestamp(..)))
                    .then_some(DataType::Int32)
            }
            Transform::Day if temporal => Some(DataType::Date32),
            Transform::Bucket(_)
                if int
                    || temporal
                    || string
                    || matches!(
                        t,
                        DataType::Decimal128(..) | DataType::Binary | DataType::FixedSizeBinary(_)
                    ) =>
            {
                Some(DataType::Int32)
            }
            Transform::Truncate(_) if int || string || matches!(t, DataType::Decimal128(..)) => {
                Some(t.clone())
            }
            _ => None,
        }
    }
}

/// One partition field: a top-level column and its transform, and the
/// name its directories take (`l_shipdate_month=1998-01`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionField {
    /// As written (`month(l_shipdate)`).
    pub text: String,
    /// The column it reads.
    pub source: String,
    /// How.
    pub transform: Transform,
    /// The partition's name: the column's for identity, else Iceberg's
    /// default (`l_shipdate_month`, `l_orderkey_bucket`).
    pub name: String,
}

impl PartitionField {
    /// Reads `column`, `year(c)`, `month(c)`, `day(c)`, `hour(c)`,
    /// `bucket(N, c)` or `truncate(W, c)` (SQL function syntax, DuckDB's
    /// dialect; names are case-insensitive, a column may be quoted).
    ///
    /// # Errors
    /// [`Error::Syntax`] for anything else, and for `N` or `W` of 0.
    pub fn parse(text: &str) -> Result<PartitionField, Error> {
        let bad = |reason: &str| Error::Syntax {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let expr = Parser::new(&DuckDbDialect {})
            .try_with_sql(text)
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| bad(&e.to_string()))?;
        let column = |e: &Expr| match e {
            Expr::Identifier(i) => Some(i.value.clone()),
            _ => None,
        };
        if let Some(source) = column(&expr) {
            return Ok(PartitionField {
                text: text.to_string(),
                name: source.clone(),
                source,
                transform: Transform::Identity,
            });
        }
        let usage =
            "a column, or year(c), month(c), day(c), hour(c), bucket(N, c) or truncate(W, c)";
        let Expr::Function(f) = &expr else {
            return Err(bad(&format!("expected {usage}")));
        };
        let FunctionArguments::List(list) = &f.args else {
            return Err(bad(&format!("expected {usage}")));
        };
        let args: Vec<&Expr> = list
            .args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                _ => Err(bad("arguments are a column, or a number and a column")),
            })
            .collect::<Result<_, _>>()?;
        let name = f.name.to_string().to_ascii_lowercase();
        let width = |e: &Expr, what: &str| -> Result<u32, Error> {
            let Expr::Value(v) = e else {
                return Err(bad(&format!("{name}'s {what} is a whole number")));
            };
            let Value::Number(n, _) = &v.value else {
                return Err(bad(&format!("{name}'s {what} is a whole number")));
            };
            match n.parse::<u32>() {
                Ok(0) => Err(bad(&format!("{name} needs a {what} of at least 1"))),
                Ok(w) => Ok(w),
                Err(_) => Err(bad(&format!(
                    "{name}'s {what} is a whole number from 1 to {}, not {n}",
                    u32::MAX
                ))),
            }
        };
        let (transform, source) = match (name.as_str(), args.as_slice()) {
            ("year", [c]) => (Transform::Year, *c),
            ("month", [c]) => (Transform::Month, *c),
            ("day", [c]) => (Transform::Day, *c),
            ("hour", [c]) => (Transform::Hour, *c),
            ("bucket", [n, c]) => (Transform::Bucket(width(n, "bucket count")?), *c),
            ("truncate", [w, c]) => (Transform::Truncate(width(w, "width")?), *c),
            _ => return Err(bad(&format!("expected {usage}"))),
        };
        let source = column(source).ok_or_else(|| bad(&format!("{name} reads a column")))?;
        Ok(PartitionField {
            text: text.to_string(),
            name: format!("{source}{}", transform.suffix()),
            source,
            transform,
        })
    }

    /// The index of the field's column in `schema` and the type of the
    /// field's values.
    ///
    /// # Errors
    /// [`Error::UnknownColumn`], or [`Error::WrongType`] when the transform
    /// does not take the column's type (`month` of a string).
    pub fn check(&self, schema: &Schema) -> Result<(usize, DataType), Error> {
        let (i, field) =
            schema
                .column_with_name(&self.source)
                .ok_or_else(|| Error::UnknownColumn {
                    field: self.text.clone(),
                    column: self.source.clone(),
                    available: schema.fields().iter().map(|f| f.name().clone()).collect(),
                })?;
        let t = self
            .transform
            .result_type(field.data_type())
            .ok_or_else(|| Error::WrongType {
                field: self.text.clone(),
                transform: self.transform.iceberg_name(),
                data_type: field.data_type().clone(),
            })?;
        Ok((i, t))
    }

    /// The field's value for each row of `column` (null where the column is).
    ///
    /// # Errors
    /// [`Error::WrongType`] for a column the transform does not take.
    pub fn apply(&self, column: &dyn Array) -> Result<ArrayRef, Error> {
        let t = column.data_type();
        let wrong = || Error::WrongType {
            field: self.text.clone(),
            transform: self.transform.iceberg_name(),
            data_type: t.clone(),
        };
        self.transform.result_type(t).ok_or_else(wrong)?;
        Ok(match self.transform {
            Transform::Identity => arrow_array::make_array(column.to_data()),
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
                let micros = temporal_micros(column).ok_or_else(wrong)?;
                match self.transform {
                    Transform::Day => Arc::new(Date32Array::from_iter(
                        micros.map(|m| m.map(|m| m.div_euclid(MICROS_PER_DAY) as i32)),
                    )),
                    Transform::Hour => Arc::new(Int32Array::from_iter(
                        micros.map(|m| m.map(|m| m.div_euclid(3_600_000_000) as i32)),
                    )),
                    tr => Arc::new(Int32Array::from_iter(micros.map(|m| {
                        m.map(|m| {
                            let (y, month, _) = civil(m.div_euclid(MICROS_PER_DAY));
                            let years = (y - 1970) as i32;
                            if tr == Transform::Year {
                                years
                            } else {
                                years * 12 + month as i32 - 1
                            }
                        })
                    }))),
                }
            }
            Transform::Bucket(n) => {
                let hashes = hashes(column).ok_or_else(wrong)?;
                Arc::new(Int32Array::from_iter(
                    hashes
                        .into_iter()
                        .map(|h| h.map(|h| (h & i32::MAX) % n as i32)),
                ))
            }
            // The type was checked above: `None` is a value rounded past
            // its type's least.
            Transform::Truncate(w) => truncate(column, w).ok_or_else(|| Error::Overflow {
                field: self.text.clone(),
            })?,
        })
    }
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// The values of a date or timestamp column as microseconds since the
/// epoch (nanoseconds rounded down).
fn temporal_micros(column: &dyn Array) -> Option<Box<dyn Iterator<Item = Option<i64>> + '_>> {
    fn scaled<T: arrow_array::ArrowPrimitiveType>(
        column: &dyn Array,
        f: impl Fn(T::Native) -> i64 + 'static,
    ) -> Option<Box<dyn Iterator<Item = Option<i64>> + '_>> {
        let a = column.as_primitive_opt::<T>()?;
        Some(Box::new(a.iter().map(move |v| v.map(&f))))
    }
    match column.data_type() {
        DataType::Date32 => scaled::<Date32Type>(column, |d| i64::from(d) * MICROS_PER_DAY),
        DataType::Timestamp(TimeUnit::Second, _) => {
            scaled::<TimestampSecondType>(column, |s| s.saturating_mul(1_000_000))
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            scaled::<TimestampMillisecondType>(column, |s| s.saturating_mul(1_000))
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            scaled::<TimestampMicrosecondType>(column, |s| s)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            scaled::<TimestampNanosecondType>(column, |s| s.div_euclid(1_000))
        }
        _ => None,
    }
}

/// The (year, month, day) of `days` since 1970-01-01 in the proleptic
/// Gregorian calendar (Howard Hinnant's `civil_from_days`).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Iceberg's 32-bit hash of bytes: Murmur3, x86 variant, seed 0.
pub fn hash_bytes(b: &[u8]) -> i32 {
    // Reading from a slice cannot fail.
    murmur3::murmur3_32(&mut &b[..], 0).unwrap_or(0) as i32
}

/// Iceberg's hash of an integer, date, time or timestamp (in
/// microseconds): its 8 little-endian bytes as a long.
pub fn hash_long(v: i64) -> i32 {
    hash_bytes(&v.to_le_bytes())
}

/// Iceberg's hash of a decimal: the fewest big-endian two's-complement
/// bytes of its unscaled value.
pub fn hash_decimal(unscaled: i128) -> i32 {
    let b = unscaled.to_be_bytes();
    let mut at = 0;
    while at < 15 {
        let (lead, next) = (b[at], b[at + 1]);
        if (lead == 0 && next & 0x80 == 0) || (lead == 0xFF && next & 0x80 != 0) {
            at += 1;
        } else {
            break;
        }
    }
    hash_bytes(&b[at..])
}

/// Each row's hash (null where the value is), or `None` for a type the
/// bucket transform does not take.
fn hashes(column: &dyn Array) -> Option<Vec<Option<i32>>> {
    fn longs<T: arrow_array::ArrowPrimitiveType>(column: &dyn Array) -> Option<Vec<Option<i32>>>
    where
        T::Native: Into<i64>,
    {
        let a: &PrimitiveArray<T> = column.as_primitive_opt()?;
        Some(a.iter().map(|v| v.map(|v| hash_long(v.into()))).collect())
    }
    Some(match column.data_type() {
        DataType::Int8 => longs::<Int8Type>(column)?,
        DataType::Int16 => longs::<Int16Type>(column)?,
        DataType::Int32 => longs::<Int32Type>(column)?,
        DataType::Int64 => longs::<Int64Type>(column)?,
        DataType::UInt8 => longs::<UInt8Type>(column)?,
        DataType::UInt16 => longs::<UInt16Type>(column)?,
        DataType::UInt32 => longs::<UInt32Type>(column)?,
        DataType::Date32 => longs::<Date32Type>(column)?,
        DataType::Timestamp(..) => temporal_micros(column)?.map(|v| v.map(hash_long)).collect(),
        DataType::Decimal128(..) => {
            let a = column.as_primitive_opt::<Decimal128Type>()?;
            a.iter().map(|v| v.map(hash_decimal)).collect()
        }
        DataType::Utf8 => column
            .as_string_opt::<i32>()?
            .iter()
            .map(|v| v.map(|s| hash_bytes(s.as_bytes())))
            .collect(),
        DataType::Binary => column
            .as_binary_opt::<i32>()?
            .iter()
            .map(|v| v.map(hash_bytes))
            .collect(),
        DataType::FixedSizeBinary(_) => column
            .as_fixed_size_binary_opt()?
            .iter()
            .map(|v| v.map(hash_bytes))
            .collect(),
        _ => return None,
    })
}

/// `v` rounded down to a multiple of `w` (Iceberg's integer truncation).
fn truncate_int(v: i128, w: i128) -> i128 {
    v - v.rem_euclid(w)
}

/// Iceberg's truncation of each row, or `None` for a type it does not take
/// (or an integer rounded below its type's least).
fn truncate(column: &dyn Array, w: u32) -> Option<ArrayRef> {
    let wide = i128::from(w);
    Some(match column.data_type() {
        DataType::Utf8 => Arc::new(StringArray::from_iter(
            column.as_string_opt::<i32>()?.iter().map(|v| {
                v.map(|s| match s.char_indices().nth(w as usize) {
                    Some((at, _)) => &s[..at],
                    None => s,
                })
            }),
        )),
        DataType::Decimal128(p, s) => {
            let a = column.as_primitive_opt::<Decimal128Type>()?;
            let out: Decimal128Array = a.iter().map(|v| v.map(|v| truncate_int(v, wide))).collect();
            Arc::new(out.with_precision_and_scale(*p, *s).ok()?)
        }
        DataType::Int8 => truncate_ints::<Int8Type>(column, wide)?,
        DataType::Int16 => truncate_ints::<Int16Type>(column, wide)?,
        DataType::Int32 => truncate_ints::<Int32Type>(column, wide)?,
        DataType::Int64 => truncate_ints::<Int64Type>(column, wide)?,
        DataType::UInt8 => truncate_ints::<UInt8Type>(column, wide)?,
        DataType::UInt16 => truncate_ints::<UInt16Type>(column, wide)?,
        DataType::UInt32 => truncate_ints::<UInt32Type>(column, wide)?,
        _ => return None,
    })
}

/// Integers of type `T` rounded down to multiples of `w`, computed wide
/// (Iceberg truncates ints as longs); `None` when one passes the type's
/// least value.
fn truncate_ints<T: arrow_array::ArrowPrimitiveType>(
    column: &dyn Array,
    w: i128,
) -> Option<ArrayRef>
where
    T::Native: Into<i128> + TryFrom<i128>,
{
    let a = column.as_primitive_opt::<T>()?;
    let mut out = Vec::with_capacity(a.len());
    for v in a.iter() {
        out.push(match v {
            Some(v) => Some(T::Native::try_from(truncate_int(v.into(), w)).ok()?),
            None => None,
        });
    }
    Some(Arc::new(out.into_iter().collect::<PrimitiveArray<T>>()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BinaryArray, FixedSizeBinaryArray, Int64Array, TimestampMicrosecondArray};
    use arrow_schema::Field;

    /// The hashes listed in the Iceberg spec (Appendix B).
    #[test]
    fn hashes_match_the_iceberg_spec() {
        assert_eq!(hash_long(34), 2017239379); // int and long 34
        assert_eq!(hash_decimal(1420), -500754589); // decimal(9, 2) 14.20
        assert_eq!(hash_long(17486), -653330422); // date 2017-11-16
        assert_eq!(hash_long(81_068_000_000), -662762989); // time 22:31:08
        assert_eq!(hash_long(1_510_871_468_000_000), -2047944441); // 2017-11-16T22:31:08
        assert_eq!(hash_long(1_510_871_468_000_001), -1207196810); // ...08.000001
        assert_eq!(hash_bytes(b"iceberg"), 1210000089);
        let uuid = [
            0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7,
            0x85, 0xe7,
        ];
        assert_eq!(hash_bytes(&uuid), 1488055340);
        assert_eq!(hash_bytes(&[0, 1, 2, 3]), -188683207); // fixed and binary
    }

    #[test]
    fn decimals_hash_their_fewest_bytes() {
        // 0 is one zero byte; -1 one 0xFF; 128 needs a leading zero byte.
        assert_eq!(hash_decimal(0), hash_bytes(&[0]));
        assert_eq!(hash_decimal(-1), hash_bytes(&[0xFF]));
        assert_eq!(hash_decimal(127), hash_bytes(&[0x7F]));
        assert_eq!(hash_decimal(128), hash_bytes(&[0x00, 0x80]));
        assert_eq!(hash_decimal(-128), hash_bytes(&[0x80]));
        assert_eq!(hash_decimal(-129), hash_bytes(&[0xFF, 0x7F]));
    }

    #[test]
    fn buckets_of_columns_follow_the_hash() {
        let f = PartitionField::parse("bucket(100, k)").unwrap();
        assert_eq!(f.name, "k_bucket");
        assert_eq!(f.transform, Transform::Bucket(100));
        // Iceberg: bucket[100] of 34 is 79 (int and long alike).
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(34), None]));
        let b = f.apply(&ints).unwrap();
        let b = b.as_primitive::<Int32Type>();
        assert_eq!(b.value(0), 79);
        assert!(b.is_null(1));
        let longs: ArrayRef = Arc::new(Int64Array::from(vec![34]));
        assert_eq!(
            f.apply(&longs)
                .unwrap()
                .as_primitive::<Int32Type>()
                .value(0),
            79
        );
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["iceberg"]));
        let want = (1210000089 & i32::MAX) % 100;
        assert_eq!(
            f.apply(&strings)
                .unwrap()
                .as_primitive::<Int32Type>()
                .value(0),
            want
        );
        let bytes: ArrayRef = Arc::new(BinaryArray::from(vec![&[0u8, 1, 2, 3][..]]));
        let fixed: ArrayRef = Arc::new(
            FixedSizeBinaryArray::try_from_iter(vec![vec![0u8, 1, 2, 3]].into_iter()).unwrap(),
        );
        let want = (-188683207i32 & i32::MAX) % 100;
        for a in [bytes, fixed] {
            assert_eq!(
                f.apply(&a).unwrap().as_primitive::<Int32Type>().value(0),
                want
            );
        }
        let dates: ArrayRef = Arc::new(Date32Array::from(vec![17486]));
        assert_eq!(
            f.apply(&dates)
                .unwrap()
                .as_primitive::<Int32Type>()
                .value(0),
            (-653330422i32 & i32::MAX) % 100
        );
        let decimals: ArrayRef = Arc::new(
            Decimal128Array::from(vec![1420])
                .with_precision_and_scale(9, 2)
                .unwrap(),
        );
        assert_eq!(
            f.apply(&decimals)
                .unwrap()
                .as_primitive::<Int32Type>()
                .value(0),
            (-500754589i32 & i32::MAX) % 100
        );
        // Seconds, milliseconds and nanoseconds hash as microseconds.
        let micros = 1_510_871_468_000_000i64;
        let ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![micros]));
        let ns: ArrayRef = Arc::new(arrow_array::TimestampNanosecondArray::from(vec![
            micros * 1000 + 999,
        ]));
        let want = (-2047944441i32 & i32::MAX) % 100;
        for a in [ts, ns] {
            assert_eq!(
                f.apply(&a).unwrap().as_primitive::<Int32Type>().value(0),
                want
            );
        }
    }

    #[test]
    fn dates_and_timestamps_floor_to_years_months_days_and_hours() {
        // 1969-12-31, 1970-01-01, 2017-11-16, 1900-03-01.
        let days = [-1, 0, 17486, -25508];
        let dates: ArrayRef = Arc::new(Date32Array::from(days.to_vec()));
        let apply =
            |text: &str, a: &ArrayRef| PartitionField::parse(text).unwrap().apply(a).unwrap();
        let years = apply("year(d)", &dates);
        assert_eq!(
            years.as_primitive::<Int32Type>().values(),
            &[-1, 0, 47, -70]
        );
        let months = apply("MONTH(d)", &dates);
        assert_eq!(
            months.as_primitive::<Int32Type>().values(),
            &[-1, 0, 574, -838]
        );
        let same = apply("day(d)", &dates);
        assert_eq!(same.as_primitive::<Date32Type>().values(), &days);
        // An hour before the epoch is hour -1; 2017-11-16T22:31:08.
        let ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
            -3_600_000_000,
            -1,
            1_510_871_468_000_000,
        ]));
        let hours = apply("hour(t)", &ts);
        assert_eq!(
            hours.as_primitive::<Int32Type>().values(),
            &[-1, -1, 419686]
        );
        let days = apply("day(t)", &ts);
        assert_eq!(days.as_primitive::<Date32Type>().values(), &[-1, -1, 17486]);
    }

    #[test]
    fn truncation_rounds_down_and_cuts_characters() {
        let f = PartitionField::parse("truncate(10, v)").unwrap();
        assert_eq!(f.name, "v_trunc");
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(-1), None, Some(25)]));
        let t = f.apply(&ints).unwrap();
        let t = t.as_primitive::<Int32Type>();
        assert_eq!(
            (t.value(0), t.value(1), t.is_null(2), t.value(3)),
            (0, -10, true, 20)
        );
        // Iceberg: truncate[50] of decimal 10.65 is 10.50.
        let decimals: ArrayRef = Arc::new(
            Decimal128Array::from(vec![1065])
                .with_precision_and_scale(9, 2)
                .unwrap(),
        );
        let d = PartitionField::parse("truncate(50, v)")
            .unwrap()
            .apply(&decimals)
            .unwrap();
        assert_eq!(d.as_primitive::<Decimal128Type>().value(0), 1050);
        // Characters, not bytes.
        let s: ArrayRef = Arc::new(StringArray::from(vec!["iceberg", "éé", "ab"]));
        let c = PartitionField::parse("truncate(3, v)")
            .unwrap()
            .apply(&s)
            .unwrap();
        let c = c.as_string::<i32>();
        assert_eq!((c.value(0), c.value(1), c.value(2)), ("ice", "éé", "ab"));
        // A value rounded below its type's least is an error, not a wrap.
        let low: ArrayRef = Arc::new(arrow_array::Int8Array::from(vec![-128i8]));
        assert!(
            PartitionField::parse("truncate(3, v)")
                .unwrap()
                .apply(&low)
                .is_err()
        );
    }

    #[test]
    fn bad_fields_are_refused() {
        for (text, want) in [
            ("bucket(0, k)", "bucket needs a bucket count of at least 1"),
            ("bucket(k)", "expected a column, or year(c)"),
            ("truncate(-2, k)", "truncate's width is a whole number"),
            ("month(k, 2)", "expected a column"),
            ("k + 1", "expected a column"),
            ("month(1)", "month reads a column"),
            ("", "partition field ``"),
        ] {
            let e = PartitionField::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        let schema = Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Date32, true),
        ]);
        let e = PartitionField::parse("month(s)")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "partition field `month(s)`: month does not take a column of type Utf8"
        );
        let e = PartitionField::parse("hour(d)")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("hour does not take a column of type Date32")
        );
        let e = PartitionField::parse("year(x)")
            .unwrap()
            .check(&schema)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "partition field `year(x)`: no column `x` (columns: s, d)"
        );
        assert_eq!(
            PartitionField::parse("month(d)")
                .unwrap()
                .check(&schema)
                .unwrap(),
            (1, DataType::Int32)
        );
    }
}
