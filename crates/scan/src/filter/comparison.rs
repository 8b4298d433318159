//! One comparison of a column with a literal, `column OP literal`, and
//! its exact semantics: evaluated on record batches and used to skip
//! Parquet row groups whose statistics prove that no row matches.
//!
//! A [`Comparison`] is a leaf of a row filter: the filter's SQL
//! gives the column, the operator and the literal as written, and this
//! module compares them for the column's type.
//!
//! # Semantics
//!
//! * A null value never matches (whatever the operator).
//! * Integers compare with integer and float literals by numeric value,
//!   exactly: `x < 2.5` on an integer column keeps `x <= 2`, and a literal
//!   outside the column type's range matches all rows or none.
//! * Floats compare as 64-bit floats in IEEE 754 total order, like
//!   arrow's comparison kernels: NaN is greater than every number (and
//!   equal to itself), and `-0.0 < 0.0`.
//! * Strings compare byte-wise (code point order); booleans with
//!   `false < true`.
//! * Decimals (`Decimal32`, `Decimal64`, `Decimal128`) compare with
//!   numbers exactly, at the column's scale: `price < 2.505` on a column
//!   of scale 2 keeps `price <= 2.50`, and `price = 2.505` matches no row.
//!   Numbers with a fraction or exponent keep the digits as written.
//! * Dates (`Date32`, `Date64`) compare with `'YYYY-MM-DD'` strings, or
//!   with integers in the column's unit (days, milliseconds).
//! * Timestamps of any unit and zone compare with strings such as
//!   `'2024-05-01'`, `'2024-05-01 12:30:00.25'` or
//!   `'2024-05-01T12:30:00+02:00'` (a string without an offset is a time
//!   in the column's zone, or UTC for a column without one), exactly,
//!   whatever the column's unit (`ts < '... 00:00:00.5'` on a column of
//!   seconds keeps `ts <= '... 00:00:00'`), or with integers in the
//!   column's unit.
//! * Dictionary-encoded columns compare by their values.
//!
//! Parquet row groups are skipped by their statistics, read as Arrow
//! arrays by parquet's statistics converter for all the row groups asked
//! about at once, for integer, float, string, boolean, decimal, date and
//! timestamp columns; each comparison judges them all in one pass.

use std::{cmp::Ordering, fmt, sync::Arc};

use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Date64Array, Decimal128Array, Float64Array,
    Int64Array, LargeStringArray, RecordBatch, Scalar, StringArray, StringViewArray, UInt64Array,
    cast::AsArray,
};
use arrow_schema::{DataType, Schema};
use parquet::file::metadata::RowGroupMetaData;

use super::stats::ColumnStats;
use crate::Error;

pub use strata_gen::CmpOp;

/// The constant a column is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// An integer, such as `42` or `-7`.
    Int(i64),
    /// A float, infinite or NaN too (a filter parsed from text gives its
    /// numbers as [`Literal::Int`] or [`Literal::Decimal`]).
    Float(f64),
    /// A number with a fraction or exponent, or an integer too large for
    /// `i64`, as written: `2.50`, `-1e9`, `99999999999999999999`. It
    /// compares exactly with integer and decimal columns, and as the
    /// nearest `f64` with float columns.
    Decimal(String),
    /// A string, `'Ann'`.
    Str(String),
    /// `true` or `false`.
    Bool(bool),
}

impl Literal {
    /// A number as written: an integer that fits `i64`, or any other
    /// number kept as written ([`Literal::Decimal`]); `None` when `text`
    /// is not a number.
    pub fn number(text: &str) -> Option<Literal> {
        if let Ok(v) = text.parse::<i64>() {
            return Some(Literal::Int(v));
        }
        Exact::parse(text).map(|_| Literal::Decimal(text.to_string()))
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Float(v) => write!(f, "{v:?}"),
            Literal::Decimal(v) => f.write_str(v),
            Literal::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// A row filter `column OP literal` on a top-level column.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The column compared.
    pub column: String,
    /// The comparison.
    pub op: CmpOp,
    /// The constant compared with.
    pub value: Literal,
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if reads_bare(&self.column) {
            write!(f, "{} {} {}", self.column, self.op, self.value)
        } else {
            write!(
                f,
                "\"{}\" {} {}",
                self.column.replace('"', "\"\""),
                self.op,
                self.value
            )
        }
    }
}

/// Whether SQL reads `name`, written without quotes, as that column: a
/// plain identifier that is not a keyword there.
fn reads_bare(name: &str) -> bool {
    let plain = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain
        && matches!(
            strata_gen::Predicate::parse(&format!("{name} = 0")).map(|p| p.clause),
            Ok(strata_gen::Clause::Compare(c)) if c.column == name
        )
}

impl Comparison {
    /// Checks that `schema` has the column and that the literal can be
    /// compared with its type.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownColumn`] when the column is missing,
    /// [`Error::InvalidConfig`] naming the column and its type when the
    /// literal cannot be compared with it.
    pub fn check(&self, schema: &Schema) -> Result<(), Error> {
        let field = schema
            .field_with_name(&self.column)
            .map_err(|_| self.unknown_column(schema))?;
        self.plan(field.data_type()).map(|_| ())
    }

    fn unknown_column(&self, schema: &Schema) -> Error {
        Error::UnknownColumn {
            name: self.column.clone(),
            available: schema.fields().iter().map(|f| f.name().clone()).collect(),
        }
    }

    /// Which rows of `batch` match: true where the row matches, false where
    /// it does not or the value is null (the result has no nulls).
    ///
    /// # Errors
    ///
    /// As [`Comparison::check`] on the batch's schema; [`Error::Arrow`] when a
    /// kernel fails.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray, Error> {
        Ok(nulls_to_false(self.evaluate_nullable(batch)?))
    }

    /// As [`Comparison::evaluate`], but null where the value is null (as
    /// SQL's comparison, for `NOT` and `OR` around it).
    pub(super) fn evaluate_nullable(&self, batch: &RecordBatch) -> Result<BooleanArray, Error> {
        let column = batch
            .column_by_name(&self.column)
            .ok_or_else(|| self.unknown_column(&batch.schema()))?;
        self.evaluate_array(column.as_ref())
    }

    /// The rows of `batch` that match.
    ///
    /// # Errors
    ///
    /// As [`Comparison::evaluate`].
    pub fn apply(&self, batch: &RecordBatch) -> Result<RecordBatch, Error> {
        let mask = self.evaluate(batch)?;
        Ok(arrow_select::filter::filter_record_batch(batch, &mask)?)
    }

    /// Which values of `array` match (null where the value is null).
    fn evaluate_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        if let Some(dict) = array.as_any_dictionary_opt() {
            // Compare each distinct value once, then look the keys up.
            let values = self.evaluate_array(dict.values().as_ref())?;
            let taken = arrow_select::take::take(&values, dict.keys(), None)?;
            return Ok(taken.as_boolean().clone());
        }
        let result = match self.plan(array.data_type())? {
            Plan::Const(v) => {
                let values = if v {
                    arrow_buffer::BooleanBuffer::new_set(array.len())
                } else {
                    arrow_buffer::BooleanBuffer::new_unset(array.len())
                };
                BooleanArray::new(values, array.logical_nulls())
            }
            Plan::Compare { cast_to, scalar } => {
                let cast;
                let lhs: &dyn Array = match cast_to {
                    Some(t) if &t != array.data_type() => {
                        cast = arrow_cast::cast(array, &t)?;
                        cast.as_ref()
                    }
                    _ => array,
                };
                let rhs = Scalar::new(scalar);
                use arrow_ord::cmp;
                match self.op {
                    CmpOp::Eq => cmp::eq(&lhs, &rhs)?,
                    CmpOp::NotEq => cmp::neq(&lhs, &rhs)?,
                    CmpOp::Lt => cmp::lt(&lhs, &rhs)?,
                    CmpOp::LtEq => cmp::lt_eq(&lhs, &rhs)?,
                    CmpOp::Gt => cmp::gt(&lhs, &rhs)?,
                    CmpOp::GtEq => cmp::gt_eq(&lhs, &rhs)?,
                }
            }
        };
        Ok(result)
    }

    /// How to compare a column of type `data_type` with the literal.
    fn plan(&self, data_type: &DataType) -> Result<Plan, Error> {
        use DataType as D;
        let mismatch = || {
            let wanted = match &self.value {
                Literal::Int(_) => "an integer",
                Literal::Float(_) | Literal::Decimal(_) => "a number",
                Literal::Str(_) => "a string",
                Literal::Bool(_) => "a boolean",
            };
            Error::InvalidConfig(format!(
                "filter \"{self}\": column '{}' of type {data_type} cannot be compared with {wanted}",
                self.column
            ))
        };
        let plan = match data_type {
            D::Dictionary(_, values) => self.plan(values)?,
            D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32 => {
                match self.int_bound().ok_or_else(mismatch)? {
                    IntBound::Const(v) => Plan::Const(v),
                    IntBound::Value(v) => match i64::try_from(v) {
                        Ok(v) => Plan::Compare {
                            cast_to: Some(D::Int64),
                            scalar: Arc::new(Int64Array::from(vec![v])),
                        },
                        Err(_) => Plan::Const(self.op.holds(if v < 0 {
                            Ordering::Greater
                        } else {
                            Ordering::Less
                        })),
                    },
                }
            }
            D::UInt64 => match self.int_bound().ok_or_else(mismatch)? {
                IntBound::Const(v) => Plan::Const(v),
                IntBound::Value(v) => match u64::try_from(v) {
                    Ok(v) => Plan::Compare {
                        cast_to: None,
                        scalar: Arc::new(UInt64Array::from(vec![v])),
                    },
                    Err(_) => Plan::Const(self.op.holds(if v < 0 {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    })),
                },
            },
            D::Float16 | D::Float32 | D::Float64 => {
                let v = self.float_value().ok_or_else(mismatch)?;
                Plan::Compare {
                    cast_to: Some(D::Float64),
                    scalar: Arc::new(Float64Array::from(vec![v])),
                }
            }
            D::Utf8 | D::LargeUtf8 | D::Utf8View => {
                let Literal::Str(s) = &self.value else {
                    return Err(mismatch());
                };
                let scalar: ArrayRef = match data_type {
                    D::Utf8 => Arc::new(StringArray::from(vec![s.as_str()])),
                    D::LargeUtf8 => Arc::new(LargeStringArray::from(vec![s.as_str()])),
                    _ => Arc::new(StringViewArray::from(vec![s.as_str()])),
                };
                Plan::Compare {
                    cast_to: None,
                    scalar,
                }
            }
            D::Boolean => {
                let Literal::Bool(b) = self.value else {
                    return Err(mismatch());
                };
                Plan::Compare {
                    cast_to: None,
                    scalar: Arc::new(BooleanArray::from(vec![b])),
                }
            }
            D::Date32 | D::Date64 => {
                let scalar: ArrayRef = match (&self.value, data_type) {
                    (Literal::Int(v), D::Date32) => match i32::try_from(*v) {
                        Ok(v) => Arc::new(Date32Array::from(vec![v])),
                        Err(_) => {
                            return Ok(Plan::Const(self.op.holds(if *v < 0 {
                                Ordering::Greater
                            } else {
                                Ordering::Less
                            })));
                        }
                    },
                    (Literal::Int(v), _) => Arc::new(Date64Array::from(vec![*v])),
                    (Literal::Str(s), _) => {
                        let text = StringArray::from(vec![s.as_str()]);
                        let opts = arrow_cast::CastOptions {
                            safe: false,
                            ..Default::default()
                        };
                        arrow_cast::cast_with_options(&text, data_type, &opts).map_err(|e| {
                            Error::InvalidConfig(format!(
                                "filter \"{self}\": '{s}' is not a date for column '{}' of type \
                                 {data_type} (use 'YYYY-MM-DD'): {e}",
                                self.column
                            ))
                        })?
                    }
                    _ => return Err(mismatch()),
                };
                Plan::Compare {
                    cast_to: None,
                    scalar,
                }
            }
            D::Decimal32(_, scale) | D::Decimal64(_, scale) | D::Decimal128(_, scale) => {
                match self
                    .scaled(i32::from(*scale))
                    .ok_or_else(mismatch)?
                    .bound(self.op)
                {
                    IntBound::Const(v) => Plan::Const(v),
                    IntBound::Value(v) => {
                        // Narrower decimals widen to Decimal128 exactly.
                        let t = match data_type {
                            D::Decimal128(..) => data_type.clone(),
                            _ => D::Decimal128(arrow_schema::DECIMAL128_MAX_PRECISION, *scale),
                        };
                        Plan::Compare {
                            scalar: Arc::new(
                                Decimal128Array::from(vec![v]).with_data_type(t.clone()),
                            ),
                            cast_to: Some(t),
                        }
                    }
                }
            }
            D::Timestamp(unit, tz) => {
                let ns = self.instant_ns(data_type)?;
                match Scaled::of_ns(ns, unit_ns(*unit)).bound(self.op) {
                    IntBound::Const(v) => Plan::Const(v),
                    IntBound::Value(v) => match i64::try_from(v) {
                        Ok(v) => Plan::Compare {
                            cast_to: None,
                            scalar: timestamp_scalar(*unit, tz.clone(), v),
                        },
                        Err(_) => Plan::Const(self.op.holds(if v < 0 {
                            Ordering::Greater
                        } else {
                            Ordering::Less
                        })),
                    },
                }
            }
            D::Time32(_) | D::Time64(_) | D::Duration(_) | D::Interval(_) => {
                return Err(Error::InvalidConfig(format!(
                    "filter \"{self}\": column '{}' has type {data_type}; filters on times of \
                     day, durations and intervals are not supported",
                    self.column
                )));
            }
            _ => {
                return Err(Error::InvalidConfig(format!(
                    "filter \"{self}\": column '{}' has type {data_type}, which filters do not \
                     support (integers, floats, decimals, strings, booleans, dates and \
                     timestamps are)",
                    self.column
                )));
            }
        };
        Ok(plan)
    }

    /// The literal as an exact integer bound for an integer column, with
    /// the operator adjusted: `x < 2.5` becomes `x <= 2`. `None` when the
    /// literal is not a number.
    fn int_bound(&self) -> Option<IntBound> {
        match &self.value {
            Literal::Int(v) => Some(IntBound::Value(i128::from(*v))),
            Literal::Float(f) => Some(int_bound_of_float(self.op, *f)),
            Literal::Decimal(_) => Some(self.scaled(0)?.bound(self.op)),
            _ => None,
        }
    }

    /// The literal times `10^scale` (a decimal column's unscaled value),
    /// exactly. `None` when the literal is not a number.
    fn scaled(&self, scale: i32) -> Option<Scaled> {
        match &self.value {
            Literal::Int(v) => Exact::parse(&v.to_string())?.scaled(scale),
            Literal::Decimal(text) => Exact::parse(text)?.scaled(scale),
            Literal::Float(f) if f.is_nan() => Some(if f.is_sign_negative() {
                Scaled::Below
            } else {
                Scaled::Above
            }),
            Literal::Float(f) if f.is_infinite() => Some(if *f < 0.0 {
                Scaled::Below
            } else {
                Scaled::Above
            }),
            // The shortest digits that give the float back.
            Literal::Float(f) => Exact::parse(&format!("{f:e}"))?.scaled(scale),
            _ => None,
        }
    }

    /// The literal as an instant for a timestamp column of `data_type`:
    /// nanoseconds since the epoch (integers are in the column's unit,
    /// strings without an offset in the column's zone).
    fn instant_ns(&self, data_type: &DataType) -> Result<i128, Error> {
        let DataType::Timestamp(unit, tz) = data_type else {
            return Err(Error::InvalidConfig(format!(
                "filter \"{self}\": column '{}' of type {data_type} is not a timestamp",
                self.column
            )));
        };
        match &self.value {
            Literal::Int(v) => Ok(i128::from(*v) * unit_ns(*unit)),
            Literal::Str(s) => {
                let bad = |why: String| {
                    Error::InvalidConfig(format!(
                        "filter \"{self}\": '{s}' is not a timestamp for column '{}' of type \
                         {data_type} (use 'YYYY-MM-DD HH:MM:SS[.fff][+HH:MM]'){why}",
                        self.column
                    ))
                };
                let utc = tz.as_deref().is_none_or(is_utc);
                match parse_instant(s, if utc { None } else { tz.clone() }) {
                    Ok(ns) => Ok(ns),
                    // A named zone other than UTC: a string with an offset
                    // does not need it (it reads the same in any zone).
                    Err(_) if !utc => match (
                        parse_instant(s, None),
                        parse_instant(s, Some("+01:00".into())),
                    ) {
                        (Ok(a), Ok(b)) if a == b => Ok(a),
                        (Ok(_), Ok(_)) => Err(Error::InvalidConfig(format!(
                            "filter \"{self}\": '{s}' has no UTC offset, and filters cannot \
                             read it in the zone of column '{}' ({data_type}): add one, as in \
                             '{s}+02:00' or '{s}Z'",
                            self.column
                        ))),
                        (Err(e), _) | (_, Err(e)) => Err(bad(format!(": {e}"))),
                    },
                    Err(e) => Err(bad(format!(": {e}"))),
                }
            }
            _ => Err(Error::InvalidConfig(format!(
                "filter \"{self}\": column '{}' of type {data_type} compares with a 'quoted \
                 timestamp' or an integer in the column's unit",
                self.column
            ))),
        }
    }

    /// The literal as a float, for float columns.
    fn float_value(&self) -> Option<f64> {
        match &self.value {
            Literal::Int(v) => Some(*v as f64),
            Literal::Float(f) => Some(*f),
            Literal::Decimal(text) => text.parse().ok(),
            _ => None,
        }
    }

    /// Whether any row of row group `rg` may match, judged from the
    /// statistics of column chunk `leaf` (the Parquet leaf column of this
    /// comparison's column, whose Arrow type is `data_type`): one row
    /// group of [`Comparison::may_match_row_groups`].
    pub fn may_match_row_group(
        &self,
        rg: &RowGroupMetaData,
        leaf: usize,
        data_type: &DataType,
    ) -> bool {
        self.may_match_row_groups(&[rg], leaf, data_type)[0]
    }

    /// Whether any row of each of `row_groups` may match, judged from the
    /// statistics of column chunk `leaf` (the Parquet leaf column of this
    /// comparison's column, whose Arrow type is `data_type`). False only
    /// when the statistics prove that no row matches: the row group is
    /// empty, every value is null, or the min/max range excludes the
    /// literal.
    ///
    /// parquet's [`StatisticsConverter`] reads the statistics of all the
    /// row groups at once as Arrow arrays of the column's type, which are
    /// compared with the literal as rows are. Conservative: missing or
    /// unreadable statistics, a leaf index out of range, old-style
    /// statistics (other than of signed integers), `INT96` timestamps, and
    /// float columns that may hold NaN all give true.
    ///
    /// [`StatisticsConverter`]: parquet::arrow::arrow_reader::statistics::StatisticsConverter
    pub fn may_match_row_groups(
        &self,
        row_groups: &[&RowGroupMetaData],
        leaf: usize,
        data_type: &DataType,
    ) -> Vec<bool> {
        self.may_match_stats(&ColumnStats::read(
            row_groups,
            &self.column,
            leaf,
            data_type,
        ))
    }

    /// Whether any row of each row group of `stats` (the statistics of
    /// this comparison's column) may match.
    pub(super) fn may_match_stats(&self, stats: &ColumnStats) -> Vec<bool> {
        let mut out = stats.verdict.clone();
        let Some(b) = &stats.bounds else {
            return out;
        };
        let Ok(plan) = self.plan(b.min.data_type()) else {
            return out;
        };
        match plan {
            Plan::Const(v) => {
                for &i in &b.groups {
                    out[i] = v;
                }
            }
            Plan::Compare { cast_to, scalar } => {
                let v = Scalar::new(scalar);
                // Where each bound is equal to and less than the literal.
                let order = |a: &ArrayRef| -> Option<Option<(BooleanArray, BooleanArray)>> {
                    let a = match &cast_to {
                        Some(t) if t != a.data_type() => arrow_cast::cast(a, t).ok()?,
                        _ => a.clone(),
                    };
                    let eq = arrow_ord::cmp::eq(&a, &v).ok()?;
                    let lt = arrow_ord::cmp::lt(&a, &v).ok()?;
                    Some(Some((eq, lt)))
                };
                // `<` and `<=` look at the minimums only, `>` and `>=` at
                // the maximums only (both are of one type: one fails when
                // the other does).
                let (lo, hi) = match self.op {
                    CmpOp::Lt | CmpOp::LtEq => (order(&b.min), Some(None)),
                    CmpOp::Gt | CmpOp::GtEq => (Some(None), order(&b.max)),
                    CmpOp::Eq | CmpOp::NotEq => (order(&b.min), order(&b.max)),
                };
                let (Some(lo), Some(hi)) = (lo, hi) else {
                    return out;
                };
                let at = |o: &Option<(BooleanArray, BooleanArray)>, k: usize| {
                    let Some((eq, lt)) = o else {
                        // Not read by `range_may_match` for this operator.
                        return Ordering::Equal;
                    };
                    if eq.value(k) {
                        Ordering::Equal
                    } else if lt.value(k) {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    }
                };
                for (k, &i) in b.groups.iter().enumerate() {
                    out[i] = range_may_match(self.op, at(&lo, k), at(&hi, k), b.exact[k]);
                }
            }
        }
        out
    }
}

/// How a column is compared with the literal.
enum Plan {
    /// Every non-null value gives this result.
    Const(bool),
    /// Cast the column (when `cast_to` is given) and compare it with the
    /// one-element `scalar`.
    Compare {
        cast_to: Option<DataType>,
        scalar: ArrayRef,
    },
}

/// An integer literal, or a result that holds for every integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IntBound {
    Const(bool),
    Value(i128),
}

/// Rewrites `x OP f` over integers `x` as a comparison with an integer (or
/// a constant), exactly.
fn int_bound_of_float(op: CmpOp, f: f64) -> IntBound {
    if f.is_nan() {
        // Total order: a positive NaN is above every number, a negative
        // one below.
        let ord = if f.is_sign_negative() {
            Ordering::Greater
        } else {
            Ordering::Less
        };
        return IntBound::Const(op.holds(ord));
    }
    // Beyond i128 every integer type lies on one side.
    const LIMIT: f64 = 1.0e38;
    if f >= LIMIT {
        return IntBound::Const(op.holds(Ordering::Less));
    }
    if f <= -LIMIT {
        return IntBound::Const(op.holds(Ordering::Greater));
    }
    if f.fract() == 0.0 {
        return IntBound::Value(f as i128);
    }
    match op {
        CmpOp::Eq => IntBound::Const(false),
        CmpOp::NotEq => IntBound::Const(true),
        // The callers keep `op`; adjusting the bound is enough because
        // `x < 2.5` is `x <= 2` is `x < 3`, and `x > 2.5` is `x > 2`.
        CmpOp::Lt | CmpOp::LtEq => {
            IntBound::Value(f.ceil() as i128 - i128::from(op == CmpOp::LtEq))
        }
        CmpOp::Gt | CmpOp::GtEq => {
            IntBound::Value(f.floor() as i128 + i128::from(op == CmpOp::GtEq))
        }
    }
}

/// `text` as nanoseconds since the epoch, read in zone `tz` (an offset
/// such as `+02:00`, or `None` for UTC) unless it names an offset itself.
/// Nanoseconds keep every digit; instants outside their range (years 1677
/// to 2262) are read in coarser units.
fn parse_instant(text: &str, tz: Option<Arc<str>>) -> Result<i128, arrow_schema::ArrowError> {
    use arrow_schema::TimeUnit as U;
    let array = StringArray::from(vec![text]);
    let opts = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    let mut last = None;
    for u in [U::Nanosecond, U::Microsecond, U::Millisecond, U::Second] {
        let t = DataType::Timestamp(u, tz.clone());
        match arrow_cast::cast_with_options(&array, &t, &opts) {
            Ok(a) => {
                let v = arrow_cast::cast(&a, &DataType::Int64)?;
                let v = v.as_primitive::<arrow_array::types::Int64Type>().value(0);
                return Ok(i128::from(v) * unit_ns(u));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| arrow_schema::ArrowError::CastError(text.to_string())))
}

/// Whether a zone name is UTC under another name.
fn is_utc(tz: &str) -> bool {
    [
        "utc",
        "etc/utc",
        "z",
        "zulu",
        "gmt",
        "etc/gmt",
        "universal",
        "etc/universal",
        "+00:00",
    ]
    .iter()
    .any(|n| tz.eq_ignore_ascii_case(n))
}

/// Nanoseconds in one `unit`.
fn unit_ns(unit: arrow_schema::TimeUnit) -> i128 {
    use arrow_schema::TimeUnit as U;
    match unit {
        U::Second => 1_000_000_000,
        U::Millisecond => 1_000_000,
        U::Microsecond => 1_000,
        U::Nanosecond => 1,
    }
}

/// A one-value timestamp array of `unit` and zone `tz`.
fn timestamp_scalar(unit: arrow_schema::TimeUnit, tz: Option<Arc<str>>, v: i64) -> ArrayRef {
    use arrow_array::{
        TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
        TimestampSecondArray,
    };
    use arrow_schema::TimeUnit as U;
    match unit {
        U::Second => Arc::new(TimestampSecondArray::from(vec![v]).with_timezone_opt(tz)),
        U::Millisecond => Arc::new(TimestampMillisecondArray::from(vec![v]).with_timezone_opt(tz)),
        U::Microsecond => Arc::new(TimestampMicrosecondArray::from(vec![v]).with_timezone_opt(tz)),
        U::Nanosecond => Arc::new(TimestampNanosecondArray::from(vec![v]).with_timezone_opt(tz)),
    }
}

/// A number as written, exactly: `digits * 10^exp`, negative when `neg`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Exact {
    neg: bool,
    /// Without leading or trailing zeros; empty for zero.
    digits: String,
    exp: i64,
}

/// Digits of the largest unscaled value handled: every integer and
/// decimal type up to `Decimal128` lies within 38 digits.
const MAX_DIGITS: i64 = 38;

impl Exact {
    /// `[+-]digits[.digits][(e|E)[+-]digits]` (digits on at least one side
    /// of the point), or `None`.
    fn parse(text: &str) -> Option<Exact> {
        let (neg, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].parse::<i32>().ok()?),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty()
            || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let all = format!("{int}{frac}");
        let lead = all.trim_start_matches('0');
        let digits = lead.trim_end_matches('0');
        let exp = i64::from(exp) - frac.len() as i64 + (lead.len() - digits.len()) as i64;
        Some(Exact {
            neg,
            digits: digits.to_string(),
            exp,
        })
    }

    /// The number times `10^scale`, against the integers.
    fn scaled(&self, scale: i32) -> Option<Scaled> {
        if self.digits.is_empty() {
            return Some(Scaled::Exact(0));
        }
        let shift = self.exp + i64::from(scale);
        let len = self.digits.len() as i64;
        // Digits before the point once shifted.
        let whole = len + shift;
        if whole > MAX_DIGITS {
            return Some(if self.neg {
                Scaled::Below
            } else {
                Scaled::Above
            });
        }
        let (int, frac) = if shift >= 0 {
            (
                format!("{}{}", self.digits, "0".repeat(shift as usize)),
                false,
            )
        } else if whole <= 0 {
            (String::new(), true)
        } else {
            (self.digits[..whole as usize].to_string(), true)
        };
        let m: i128 = if int.is_empty() { 0 } else { int.parse().ok()? };
        Some(match (self.neg, frac) {
            (false, false) => Scaled::Exact(m),
            (true, false) => Scaled::Exact(-m),
            (false, true) => Scaled::Between(m),
            (true, true) => Scaled::Between(-m - 1),
        })
    }
}

/// Where a literal lies among the integers (a column's stored values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scaled {
    /// On this integer.
    Exact(i128),
    /// Strictly between this integer and the next.
    Between(i128),
    /// Above every value of every type handled.
    Above,
    /// Below every value of every type handled.
    Below,
}

impl Scaled {
    /// An instant of `ns` nanoseconds in a unit of `unit` nanoseconds.
    fn of_ns(ns: i128, unit: i128) -> Scaled {
        let (q, r) = (ns.div_euclid(unit), ns.rem_euclid(unit));
        if r == 0 {
            Scaled::Exact(q)
        } else {
            Scaled::Between(q)
        }
    }

    /// `x OP literal` over integers `x` as a comparison with an integer,
    /// or a constant (`op` is kept, as for [`int_bound_of_float`]).
    fn bound(self, op: CmpOp) -> IntBound {
        match self {
            Scaled::Exact(v) => IntBound::Value(v),
            Scaled::Above => IntBound::Const(op.holds(Ordering::Less)),
            Scaled::Below => IntBound::Const(op.holds(Ordering::Greater)),
            Scaled::Between(floor) => match op {
                CmpOp::Eq => IntBound::Const(false),
                CmpOp::NotEq => IntBound::Const(true),
                // `x < 2.5` is `x < 3`, `x <= 2.5` is `x <= 2`.
                CmpOp::Lt => IntBound::Value(floor + 1),
                CmpOp::LtEq => IntBound::Value(floor),
                // `x > 2.5` is `x > 2`, `x >= 2.5` is `x >= 3`.
                CmpOp::Gt => IntBound::Value(floor),
                CmpOp::GtEq => IntBound::Value(floor + 1),
            },
        }
    }
}

/// Whether some value in `[min, max]` may satisfy `value OP literal`, given
/// how the bounds compare to the literal. `exact` says the bounds are
/// values that occur (not widened by truncation), which `!=` needs.
fn range_may_match(op: CmpOp, min: Ordering, max: Ordering, exact: bool) -> bool {
    use Ordering::*;
    match op {
        CmpOp::Eq => min != Greater && max != Less,
        CmpOp::NotEq => !(exact && min == Equal && max == Equal),
        CmpOp::Lt => min == Less,
        CmpOp::LtEq => min != Greater,
        CmpOp::Gt => max == Greater,
        CmpOp::GtEq => max != Less,
    }
}

pub(super) fn nulls_to_false(mask: BooleanArray) -> BooleanArray {
    if mask.null_count() == 0 {
        mask
    } else {
        arrow_select::filter::prep_null_mask_filter(&mask)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::filter::comparison::*;
    use arrow_array::{
        BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, StringArray,
        TimestampMillisecondArray, UInt8Array, UInt64Array, types::Int32Type,
    };

    use arrow_schema::Field;
    use parquet::{
        arrow::{ArrowWriter, arrow_reader::statistics::StatisticsConverter},
        file::properties::WriterProperties,
    };
    use strata_gen::rng::RowRng;

    /// Whether any row of row group `rg` may match (one row group at a
    /// time, the reference for [`Comparison::may_match_row_groups`]), judged from the
    /// statistics of column chunk `leaf` (the Parquet leaf column of this
    /// comparison's column, whose Arrow type is `data_type`). False only
    /// when the statistics prove that no row matches: the row group is
    /// empty, every value is null, or the min/max range excludes the
    /// literal.
    ///
    /// parquet's [`StatisticsConverter`] reads the statistics as Arrow
    /// values of the column's type, which are compared with the literal
    /// as rows are. Conservative: missing or unreadable statistics, a leaf
    /// index out of range, old-style statistics (other than of signed
    /// integers), `INT96` timestamps, and float columns that may hold NaN
    /// all give true.
    pub(crate) fn reference_may_match_row_group(
        c: &Comparison,
        rg: &RowGroupMetaData,
        leaf: usize,
        data_type: &DataType,
    ) -> bool {
        if rg.num_rows() <= 0 {
            return false;
        }
        let Some(stats) = rg.columns().get(leaf).and_then(|c| c.statistics()) else {
            return true;
        };
        let field = Field::new(c.column.as_str(), data_type.clone(), true);
        let descr = rg.schema_descr();
        let Ok(conv) = StatisticsConverter::from_column_index(leaf, &field, descr) else {
            return true;
        };
        let conv = conv.with_missing_null_counts_as_zero(false);
        let one = || std::iter::once(rg);
        let values = match data_type {
            DataType::Dictionary(_, v) => v.as_ref(),
            t => t,
        };
        let signed_int = matches!(
            values,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
        );
        if stats.is_min_max_deprecated() && !signed_int {
            return true;
        }
        if descr.column(leaf).max_rep_level() == 0
            && let Ok(nulls) = conv.row_group_null_counts(one())
            && nulls.is_valid(0)
            && nulls.value(0) >= rg.num_rows() as u64
        {
            return false;
        }
        let (Ok(mut min), Ok(mut max)) = (conv.row_group_mins(one()), conv.row_group_maxes(one()))
        else {
            return true;
        };
        if min.is_null(0) || max.is_null(0) {
            return true;
        }
        if matches!(
            values,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) {
            // Writers leave NaN out of min/max; only a count of zero NaNs
            // makes the range cover every value.
            let no_nan = conv
                .row_group_nan_counts(one())
                .is_ok_and(|n| n.is_valid(0) && n.value(0) == 0);
            let as_f64 = |a: &ArrayRef| {
                arrow_cast::cast(a, &DataType::Float64)
                    .ok()
                    .map(|a| a.as_primitive::<arrow_array::types::Float64Type>().value(0))
            };
            let (true, Some(lo), Some(hi)) = (no_nan, as_f64(&min), as_f64(&max)) else {
                return true;
            };
            if lo.is_nan() || hi.is_nan() {
                return true;
            }
            // Writers may record either zero for a range touching zero.
            let lo = if lo == 0.0 { -0.0 } else { lo };
            let hi = if hi == 0.0 { 0.0 } else { hi };
            min = Arc::new(Float64Array::from(vec![lo]));
            max = Arc::new(Float64Array::from(vec![hi]));
        }
        let exact = |r: Result<BooleanArray, _>| r.is_ok_and(|e| e.is_valid(0) && e.value(0));
        let exact = exact(conv.row_group_is_min_value_exact(one()))
            && exact(conv.row_group_is_max_value_exact(one()));
        let Ok(plan) = c.plan(min.data_type()) else {
            return true;
        };
        match plan {
            Plan::Const(v) => v,
            Plan::Compare { cast_to, scalar } => {
                let order = |a: &ArrayRef| -> Option<Ordering> {
                    let a = match &cast_to {
                        Some(t) if t != a.data_type() => arrow_cast::cast(a, t).ok()?,
                        _ => a.clone(),
                    };
                    let v = Scalar::new(scalar.clone());
                    let eq = arrow_ord::cmp::eq(&a, &v).ok()?;
                    let lt = arrow_ord::cmp::lt(&a, &v).ok()?;
                    Some(if eq.value(0) {
                        Ordering::Equal
                    } else if lt.value(0) {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    })
                };
                match (order(&min), order(&max)) {
                    (Some(lo), Some(hi)) => range_may_match(c.op, lo, hi, exact),
                    _ => true,
                }
            }
        }
    }

    #[test]
    fn exact_numbers_at_a_scale() {
        let at = |text: &str, scale: i32| Exact::parse(text).unwrap().scaled(scale).unwrap();
        assert_eq!(at("2.505", 2), Scaled::Between(250));
        assert_eq!(at("-2.505", 2), Scaled::Between(-251));
        assert_eq!(at("2.50", 2), Scaled::Exact(250));
        assert_eq!(at("-0.001", 2), Scaled::Between(-1));
        assert_eq!(at("0.001", 2), Scaled::Between(0));
        assert_eq!(at("1.5e3", 0), Scaled::Exact(1500));
        assert_eq!(at("15e-1", 1), Scaled::Exact(15));
        assert_eq!(at("000.000", 5), Scaled::Exact(0));
        assert_eq!(at("1e38", 0), Scaled::Above);
        assert_eq!(at("-1e37", 1), Scaled::Below);
        assert_eq!(at("9.99e37", 0), Scaled::Exact(999 * 10i128.pow(35)));
        assert_eq!(at("1e-400", 2), Scaled::Between(0));
        assert_eq!(at("12", -1), Scaled::Between(1));
        for bad in ["", "-", ".", "1e", "e5", "1.2.3", "1x", "--1"] {
            assert_eq!(Exact::parse(bad), None, "{bad}");
        }
    }

    /// How an integer value compares with a literal, by numeric value.
    fn cmp_int(x: i128, lit: &Literal) -> Ordering {
        match lit {
            Literal::Int(v) => x.cmp(&i128::from(*v)),
            Literal::Float(v) if v.is_nan() => (x as f64).total_cmp(v),
            Literal::Float(v) => (x as f64).partial_cmp(v).unwrap(),
            Literal::Decimal(text) => cmp_decimal(x, 0, text),
            _ => unreachable!(),
        }
    }

    fn random_literal(rng: &mut RowRng, kind: u64) -> Literal {
        match kind {
            0 => Literal::Int(rng.next_below(41) as i64 - 20),
            1 => Literal::Float((rng.next_below(81) as f64 - 40.0) / 2.0),
            2 => {
                let special = [f64::NAN, -f64::NAN, -0.0, 0.0, 1e30, -1e30, f64::INFINITY];
                Literal::Float(special[rng.next_below(7) as usize])
            }
            3 => {
                Literal::Int([i64::MAX, i64::MIN, 300, -300, 255, 256][rng.next_below(6) as usize])
            }
            _ => unreachable!(),
        }
    }

    const OPS: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::NotEq,
        CmpOp::Lt,
        CmpOp::LtEq,
        CmpOp::Gt,
        CmpOp::GtEq,
    ];

    /// A batch of random columns with nulls, and the per-row values as
    /// plain Rust for the brute force.
    pub(crate) struct Data {
        pub(crate) batch: RecordBatch,
        pub(crate) ints: Vec<Option<i128>>,
        pub(crate) floats: Vec<Option<f64>>,
        pub(crate) strs: Vec<Option<String>>,
        pub(crate) bools: Vec<Option<bool>>,
    }

    /// Unscaled values of the decimal columns, and their scales.
    const DECIMALS: [(&str, i128, u32); 2] = [("dec", 37, 2), ("decw", 1_234_567, 3)];
    /// Nanoseconds per int of the timestamp columns, and their units.
    const TIMES: [(&str, i128); 3] = [
        ("ts", 500_000_000),
        ("tss", 1_000_000_000),
        ("tsz", 250_000_000),
    ];
    /// The zone of `tsz` (naive literals are read in it).
    const TSZ_OFFSET_NS: i128 = 19_800_000_000_000;

    /// How `x / 10^scale` compares with the number `text`, exactly.
    fn cmp_decimal(x: i128, scale: u32, text: &str) -> Ordering {
        let f: f64 = text.parse().unwrap();
        if f.abs() > 1e30 {
            return if f > 0.0 {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mantissa, e) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.parse::<i32>().unwrap()),
            None => (text, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let m: i128 = format!("{int}{frac}").parse().unwrap();
        // lit = m * 10^p, x' = x * 10^-scale; both times 10^-k.
        let p = e - frac.len() as i32;
        let k = p.min(-(scale as i32));
        let lhs = x * 10i128.pow((-(scale as i32) - k) as u32);
        let rhs = m * 10i128.pow((p - k) as u32);
        lhs.cmp(&rhs)
    }

    /// A decimal literal: thousandths, a few exponents and extremes.
    fn random_decimal(rng: &mut RowRng) -> String {
        match rng.next_below(8) {
            0 => [
                "1e40",
                "-1e40",
                "1.5e1",
                "-25e-2",
                "0.0",
                "99999999999999999999",
            ][rng.next_below(6) as usize]
                .to_string(),
            1 => (rng.next_below(41) as i64 - 20).to_string(),
            _ => {
                let k = rng.next_below(8001) as i64 - 4000;
                let sign = if k < 0 { "-" } else { "" };
                format!("{sign}{}.{:03}", k.abs() / 1000, k.abs() % 1000)
            }
        }
    }

    /// An instant near the timestamp columns' values (ns), some on
    /// quarter seconds, some a microsecond off.
    fn random_instant(rng: &mut RowRng) -> i128 {
        let quarter = (rng.next_below(145) as i128 - 72) * 250_000_000;
        quarter + i128::from(rng.next_below(4) == 0) * 1_000
    }

    /// `ns` as text, with an offset (`Some`) or naive in the zone `naive_ns`
    /// ahead of UTC.
    fn instant_text(ns: i128, offset: Option<&str>, naive_ns: i128) -> String {
        let shown = ns + if offset.is_some() { 0 } else { naive_ns };
        let a = arrow_array::TimestampNanosecondArray::from(vec![shown as i64])
            .with_timezone_opt(offset.map(Arc::from));
        let s = arrow_cast::cast(&a, &DataType::Utf8).unwrap();
        s.as_string::<i32>().value(0).to_string()
    }

    /// `d`'s batch without the dictionary-encoded ints (they have no
    /// Parquet counterpart of their own), written by parquet's writer in
    /// row groups of `group_rows`, and the file's footer.
    pub(crate) fn in_parquet(
        d: &Data,
        group_rows: usize,
    ) -> (RecordBatch, parquet::file::metadata::ParquetMetaData) {
        let schema = d.batch.schema();
        let keep: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| schema.field(i).name() != "di")
            .collect();
        let batch = d.batch.project(&keep).unwrap();
        let md = parquet_footer(&batch, group_rows);
        (batch, md)
    }

    /// The footer of `batch` written by parquet's writer in row groups of
    /// `group_rows`.
    pub(crate) fn parquet_footer(
        batch: &RecordBatch,
        group_rows: usize,
    ) -> parquet::file::metadata::ParquetMetaData {
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(group_rows))
            .build();
        let mut buf = Vec::new();
        let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
        parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(buf))
            .unwrap()
    }

    pub(crate) fn random_data(seed: u64, n: usize) -> Data {
        let mut rng = RowRng::seeded(seed);
        let null = |rng: &mut RowRng| rng.next_below(8) == 0;
        let ints: Vec<Option<i128>> = (0..n)
            .map(|_| (!null(&mut rng)).then(|| i128::from(rng.next_below(31) as i64 - 15)))
            .collect();
        // Sorted runs make min/max pruning possible in row groups.
        let mut ints = ints;
        ints.sort();
        let floats: Vec<Option<f64>> = (0..n)
            .map(|_| {
                (!null(&mut rng)).then(|| match rng.next_below(20) {
                    0 => f64::NAN,
                    1 => -0.0,
                    _ => (rng.next_below(61) as f64 - 30.0) / 4.0,
                })
            })
            .collect();
        let strs: Vec<Option<String>> = (0..n)
            .map(|_| {
                (!null(&mut rng)).then(|| {
                    let len = rng.next_below(4) as usize;
                    (0..len)
                        .map(|_| (b'a' + rng.next_below(4) as u8) as char)
                        .collect()
                })
            })
            .collect();
        let bools: Vec<Option<bool>> = (0..n)
            .map(|_| (!null(&mut rng)).then(|| rng.next_below(2) == 1))
            .collect();
        let i64s: Int64Array = ints.iter().map(|v| v.map(|v| v as i64)).collect();
        let i32s: Int32Array = ints.iter().map(|v| v.map(|v| v as i32)).collect();
        let u8s: UInt8Array = ints.iter().map(|v| v.map(|v| (v + 15) as u8)).collect();
        let u64s: UInt64Array = ints.iter().map(|v| v.map(|v| (v + 15) as u64)).collect();
        let f64s: Float64Array = floats.iter().copied().collect();
        let utf8: StringArray = strs.iter().map(|s| s.as_deref()).collect();
        let dict: DictionaryArray<Int32Type> = strs.iter().map(|s| s.as_deref()).collect();
        let dict_int = DictionaryArray::<Int32Type>::try_new(
            Int32Array::from_iter(ints.iter().map(|v| v.map(|v| (v + 15) as i32))),
            Arc::new(Int64Array::from_iter_values(-15..16)),
        )
        .unwrap();
        let bool_arr: BooleanArray = bools.iter().copied().collect();
        let dec = |per: i128, p: u8, s: i8| -> ArrayRef {
            Arc::new(
                arrow_array::Decimal128Array::from_iter(ints.iter().map(|v| v.map(|v| v * per)))
                    .with_precision_and_scale(p, s)
                    .unwrap(),
            )
        };
        let i64_of = |per: i128| ints.iter().map(move |v| v.map(|v| (v * per) as i64));
        let ts = TimestampMillisecondArray::from_iter(i64_of(500)).with_timezone("UTC");
        let tss = arrow_array::TimestampSecondArray::from_iter(i64_of(1));
        let tsz = arrow_array::TimestampMicrosecondArray::from_iter(i64_of(250_000))
            .with_timezone("+05:30");
        let day = arrow_array::Date32Array::from_iter(ints.iter().map(|v| v.map(|v| v as i32)));
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("dec", dec(37, 15, 2)),
            ("decw", dec(1_234_567, 20, 3)),
            ("ts", Arc::new(ts)),
            ("tss", Arc::new(tss)),
            ("tsz", Arc::new(tsz)),
            ("day", Arc::new(day)),
            ("i64", Arc::new(i64s)),
            ("i32", Arc::new(i32s)),
            ("u8", Arc::new(u8s)),
            ("u64", Arc::new(u64s)),
            ("f64", Arc::new(f64s)),
            ("s", Arc::new(utf8)),
            ("ds", Arc::new(dict)),
            ("di", Arc::new(dict_int)),
            ("b", Arc::new(bool_arr)),
        ];
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        Data {
            batch,
            ints,
            floats,
            strs,
            bools,
        }
    }

    /// A random filter on a random column of [`random_data`], and the
    /// brute-force answer for row `i`.
    pub(crate) fn random_filter<'a>(
        rng: &mut RowRng,
        d: &'a Data,
    ) -> (Comparison, Box<dyn Fn(usize) -> bool + 'a>) {
        let op = OPS[rng.next_below(6) as usize];
        let column = [
            "i64", "i32", "u8", "u64", "f64", "s", "ds", "di", "b", "dec", "decw", "ts", "tss",
            "tsz", "day",
        ][rng.next_below(15) as usize];
        let filter = |value: Literal| Comparison {
            column: column.into(),
            op,
            value,
        };
        if let Some(&(_, per, scale)) = DECIMALS.iter().find(|d| d.0 == column) {
            let text = random_decimal(rng);
            let value = match text.parse::<i64>() {
                Ok(v) => Literal::Int(v),
                Err(_) => Literal::Decimal(text.clone()),
            };
            let check = move |i: usize| {
                d.ints[i].is_some_and(|x| op.holds(cmp_decimal(x * per, scale, &text)))
            };
            return (filter(value), Box::new(check));
        }
        if let Some(&(_, per)) = TIMES.iter().find(|t| t.0 == column) {
            let naive = if column == "tsz" { TSZ_OFFSET_NS } else { 0 };
            let (value, lit_ns) = match rng.next_below(4) {
                0 => {
                    // An integer in the column's unit.
                    let unit = match column {
                        "ts" => 1_000_000,
                        "tss" => 1_000_000_000,
                        _ => 1_000,
                    };
                    let v = (rng.next_below(41) as i64 - 20) * 250;
                    let v = if column == "tss" { v / 250 } else { v };
                    (Literal::Int(v), i128::from(v) * unit)
                }
                1 => {
                    let ns = random_instant(rng);
                    (Literal::Str(instant_text(ns, None, naive)), ns)
                }
                _ => {
                    let ns = random_instant(rng);
                    let offset = ["+00:00", "+02:00", "-07:30"][rng.next_below(3) as usize];
                    (Literal::Str(instant_text(ns, Some(offset), naive)), ns)
                }
            };
            let check = move |i: usize| d.ints[i].is_some_and(|x| op.holds((x * per).cmp(&lit_ns)));
            return (filter(value), Box::new(check));
        }
        if column == "day" {
            let v = rng.next_below(41) as i64 - 20;
            let value = if rng.next_below(2) == 0 {
                Literal::Int(v)
            } else {
                let a = arrow_array::Date32Array::from(vec![v as i32]);
                let s = arrow_cast::cast(&a, &DataType::Utf8).unwrap();
                Literal::Str(s.as_string::<i32>().value(0).to_string())
            };
            let check = move |i: usize| d.ints[i].is_some_and(|x| op.holds(x.cmp(&i128::from(v))));
            return (filter(value), Box::new(check));
        }
        let value = match column {
            "s" | "ds" => {
                let len = rng.next_below(3) as usize;
                Literal::Str(
                    (0..len)
                        .map(|_| (b'a' + rng.next_below(5) as u8) as char)
                        .collect(),
                )
            }
            "b" => Literal::Bool(rng.next_below(2) == 1),
            _ if rng.next_below(4) == 0 && column != "f64" => Literal::Decimal(random_decimal(rng)),
            _ => {
                let kind = rng.next_below(4);
                random_literal(rng, kind)
            }
        };
        let filter = Comparison {
            column: column.into(),
            op,
            value: value.clone(),
        };
        let check: Box<dyn Fn(usize) -> bool + 'a> = match column {
            "i64" | "i32" | "di" => {
                Box::new(move |i| d.ints[i].is_some_and(|x| op.holds(cmp_int(x, &value))))
            }
            "u8" | "u64" => {
                Box::new(move |i| d.ints[i].is_some_and(|x| op.holds(cmp_int(x + 15, &value))))
            }
            "f64" => Box::new(move |i| {
                let lit = match value {
                    Literal::Int(v) => v as f64,
                    Literal::Float(v) => v,
                    _ => unreachable!(),
                };
                d.floats[i].is_some_and(|x| op.holds(x.total_cmp(&lit)))
            }),
            "s" | "ds" => Box::new(move |i| {
                let Literal::Str(lit) = &value else {
                    unreachable!()
                };
                d.strs[i]
                    .as_ref()
                    .is_some_and(|x| op.holds(x.as_bytes().cmp(lit.as_bytes())))
            }),
            _ => Box::new(move |i| {
                let Literal::Bool(lit) = value else {
                    unreachable!()
                };
                d.bools[i].is_some_and(|x| op.holds(x.cmp(&lit)))
            }),
        };
        (filter, check)
    }

    #[test]
    fn evaluate_matches_brute_force() {
        for seed in 0..20u64 {
            let d = random_data(seed, 300);
            let mut rng = RowRng::seeded(1000 + seed);
            for _ in 0..60 {
                let (filter, check) = random_filter(&mut rng, &d);
                filter.check(&d.batch.schema()).unwrap();
                let mask = filter.evaluate(&d.batch).unwrap();
                assert_eq!(mask.null_count(), 0);
                let want: Vec<bool> = (0..d.batch.num_rows()).map(&check).collect();
                let got: Vec<bool> = mask.iter().map(|v| v.unwrap_or(true)).collect();
                assert_eq!(got, want, "seed {seed}: {filter}");
                let kept = filter.apply(&d.batch).unwrap();
                assert_eq!(kept.num_rows(), want.iter().filter(|&&w| w).count());
            }
        }
    }

    #[test]
    fn out_of_range_literals_match_all_or_nothing() {
        let batch = RecordBatch::try_from_iter([(
            "u8",
            Arc::new(UInt8Array::from(vec![Some(0), Some(255), None])) as ArrayRef,
        )])
        .unwrap();
        let count = |text: &str| {
            let m = crate::Filter::parse(text)
                .unwrap()
                .evaluate(&batch)
                .unwrap();
            m.true_count()
        };
        assert_eq!(count("u8 < 300"), 2);
        assert_eq!(count("u8 > -1"), 2);
        assert_eq!(count("u8 = -1"), 0);
        assert_eq!(count("u8 != 1000"), 2);
        assert_eq!(count("u8 >= 254.5"), 1);
        assert_eq!(count("u8 < 0.5"), 1);
        assert_eq!(count("u8 = 0.5"), 0);
    }

    #[test]
    fn pruning_is_never_wrong() {
        let mut pruned = 0;
        let mut pruned_columns = std::collections::BTreeSet::new();
        for seed in 0..12u64 {
            let d = random_data(seed, 400);
            let (batch, md) = in_parquet(&d, 1 + (seed as usize % 5) * 17);
            let mut rng = RowRng::seeded(77 + seed);
            for _ in 0..80 {
                let (filter, check) = random_filter(&mut rng, &d);
                if filter.column == "di" {
                    continue;
                }
                let leaf = batch.schema().index_of(&filter.column).unwrap();
                let mut start = 0usize;
                for rg in md.row_groups() {
                    let n = rg.num_rows() as usize;
                    let t = batch.schema().field(leaf).data_type().clone();
                    if !filter.may_match_row_group(rg, leaf, &t) {
                        pruned += 1;
                        pruned_columns.insert(filter.column.clone());
                        let hit = (start..start + n).find(|&i| check(i));
                        assert!(hit.is_none(), "seed {seed}: {filter} pruned row {hit:?}");
                    }
                    start += n;
                }
            }
        }
        assert!(pruned > 100, "pruned only {pruned} row groups");
        for c in ["dec", "decw", "ts", "tss", "tsz", "day", "i64", "s"] {
            assert!(pruned_columns.contains(c), "no row group of {c} pruned");
        }
    }
}
